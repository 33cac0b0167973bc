/* SPDX-License-Identifier: Apache-2.0 */
/* test_events.c - NVML backend event watcher against the simulated NVML: every XID class,
 * attribution to MIG instances, blast radius with tasks, GPU lost, prompt stop */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "backend_test_util.h"
#include "kerf/errno.h"

#define MAX_EV 16

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static kerf_backend_event evs[MAX_EV];
static unsigned n_ev;

static void on_event(const kerf_backend_event *ev, void *ud)
{
        (void)ud;
        pthread_mutex_lock(&mu);
        if (n_ev < MAX_EV)
                evs[n_ev++] = *ev;
        pthread_mutex_unlock(&mu);
}

/* Task ids by unit: 100 + GI id for a MIG device, 1000 + GPU for a whole GPU. */
static size_t lookup(const kerf_backend_unit_ref *u, uint64_t *ret, size_t max, void *ud)
{
        (void)ud;
        if (max < 1)
                return 1;
        ret[0] = u->is_mig ? 100u + u->gi_id : 1000u + u->gpu;
        return 1;
}

static uint64_t mono_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Waits up to 5 s for the next event and copies it out. */
static bool next_event(kerf_backend_event *ret)
{
        static unsigned taken;
        uint64_t until = mono_ms() + 5000;
        while (mono_ms() < until) {
                pthread_mutex_lock(&mu);
                if (taken < n_ev) {
                        *ret = evs[taken++];
                        pthread_mutex_unlock(&mu);
                        return true;
                }
                pthread_mutex_unlock(&mu);
                struct timespec ts = {0, 10000000L};
                nanosleep(&ts, NULL);
        }
        return false;
}

static bool has_task(const kerf_backend_event *ev, uint64_t id)
{
        for (unsigned i = 0; i < ev->n_tasks; i++)
                if (ev->tasks[i] == id)
                        return true;
        return false;
}

static void test_events(void **state)
{
        bt t;
        kerf_backend_mig m;
        kerf_backend_event ev;
        kerf_backend_watch w = {on_event, lookup, NULL};
        (void)state;
        assert_int_equal(bt_setup(&t, KERF_TEST_NVML, false), 0);
        assert_int_equal(kerf_backend_mig_create(t.b, 0, P_3G, 0, &m), 0);
        assert_int_equal(kerf_backend_watch_start(t.b, &w), 0);
        assert_int_equal(kerf_backend_watch_start(t.b, &w), -EBUSY);

        /* application error, attributed to the MIG instance: only that unit and its task */
        assert_true(kerf_sim_xid_inject(t.st, 0, 31, (int)m.gi_id, (int)m.ci_id) > 0);
        assert_true(next_event(&ev));
        assert_int_equal(ev.kind, KERF_BEV_XID);
        assert_int_equal(ev.xid, 31);
        assert_int_equal(ev.xid_class, KERF_XID_APP);
        assert_int_equal(ev.scope, KERF_SCOPE_UNIT);
        assert_true(ev.attributed);
        assert_int_equal(ev.gpu, 0);
        assert_string_equal(ev.gpu_uuid, t.fleet->gpus[0].uuid);
        assert_int_equal(ev.gi_id, m.gi_id);
        assert_int_equal(ev.ci_id, m.ci_id);
        assert_int_equal(ev.n_units, 1);
        assert_true(ev.units[0].is_mig);
        assert_string_equal(ev.units[0].uuid, m.uuid);
        assert_int_equal(ev.n_tasks, 1);
        assert_true(has_task(&ev, 100u + m.gi_id));
        assert_non_null(strstr(ev.text, "app_error"));

        /* GPU needs reset (through the kerf-sim CLI): the GPU and all its units */
        assert_int_equal(bt_cli(&t, "inject xid --gpu 0 --code 48"), 0);
        assert_true(next_event(&ev));
        assert_int_equal(ev.xid, 48);
        assert_int_equal(ev.xid_class, KERF_XID_RESET_GPU);
        assert_int_equal(ev.scope, KERF_SCOPE_GPU);
        assert_false(ev.attributed);
        assert_int_equal(ev.n_units, 2); /* GPU 0 itself + its 3g instance */
        assert_false(ev.units[0].is_mig);
        assert_true(ev.units[1].is_mig);
        assert_true(has_task(&ev, 1000) && has_task(&ev, 100u + m.gi_id));

        /* node reboot */
        assert_int_equal(bt_cli(&t, "inject xid --gpu 1 --code 79"), 0);
        assert_true(next_event(&ev));
        assert_int_equal(ev.xid_class, KERF_XID_REBOOT_NODE);
        assert_int_equal(ev.scope, KERF_SCOPE_NODE);
        assert_int_equal(ev.gpu, 1);
        assert_int_equal(ev.n_units, 3);
        assert_true(has_task(&ev, 1000) && has_task(&ev, 1001) && has_task(&ev, 1002));

        /* watch */
        assert_true(kerf_sim_xid_inject(t.st, 2, 63, -1, -1) > 0);
        assert_true(next_event(&ev));
        assert_int_equal(ev.xid_class, KERF_XID_WATCH);
        assert_int_equal(ev.scope, KERF_SCOPE_NONE);
        assert_int_equal(ev.gpu, 2);

        /* unknown: treated as GPU reset, and said to be unknown */
        assert_true(kerf_sim_xid_inject(t.st, 1, 321, -1, -1) > 0);
        assert_true(next_event(&ev));
        assert_int_equal(ev.xid, 321);
        assert_false(ev.xid_known);
        assert_int_equal(ev.xid_class, KERF_XID_RESET_GPU);
        assert_int_equal(ev.scope, KERF_SCOPE_GPU);

        /* application error on a non-MIG GPU: the whole GPU unit */
        assert_true(kerf_sim_xid_inject(t.st, 1, 13, -1, -1) > 0);
        assert_true(next_event(&ev));
        assert_int_equal(ev.xid_class, KERF_XID_APP);
        assert_int_equal(ev.n_units, 1);
        assert_false(ev.units[0].is_mig);
        assert_true(has_task(&ev, 1001));

        /* GPU lost: node-level, reported once */
        assert_int_equal(bt_cli(&t, "inject lost --gpu 2"), 0);
        assert_true(next_event(&ev));
        assert_int_equal(ev.kind, KERF_BEV_GPU_LOST);
        assert_int_equal(ev.gpu, 2);
        assert_int_equal(ev.scope, KERF_SCOPE_NODE);
        assert_int_equal(ev.n_units, 3);
        kerf_backend_gpu g;
        assert_int_equal(kerf_backend_gpu_get(t.b, 2, &g), 0);
        assert_true(g.lost);

        /* stops within about a poll period */
        uint64_t t0 = mono_ms();
        kerf_backend_watch_stop(t.b);
        assert_true(mono_ms() - t0 < 2000);
        kerf_backend_watch_stop(t.b);
        pthread_mutex_lock(&mu);
        unsigned extra = n_ev;
        pthread_mutex_unlock(&mu);
        assert_int_equal(extra, 7); /* no duplicate GPU-lost events */
        bt_teardown(&t);
}

/* Closing the handle with the watcher running stops it. */
static void test_close_running(void **state)
{
        bt t;
        kerf_backend_watch w = {on_event, NULL, NULL};
        (void)state;
        assert_int_equal(bt_setup(&t, KERF_TEST_NVML, false), 0);
        assert_int_equal(kerf_backend_watch_start(t.b, &w), 0);
        kerf_backend_watch bad = {NULL, NULL, NULL};
        assert_int_equal(kerf_backend_watch_start(t.b, &bad), -EINVAL);
        bt_teardown(&t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_events),
            cmocka_unit_test(test_close_running),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
