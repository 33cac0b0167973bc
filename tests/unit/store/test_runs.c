/* SPDX-License-Identifier: Apache-2.0 */
/* test_runs.c - runs of tasks (cost): open, re-open of the same start, a resume that never
 * starts before the previous run's end, close, the recovery sweep, the period walk, bad
 * fields, and a failed write that leaves nothing */
#include <errno.h>

#include "helpers.h"

static void run_of(kerf_store_run *r, uint64_t task, const char *tenant, double fraction,
                   int64_t start)
{
        memset(r, 0, sizeof(*r));
        r->task = task;
        snprintf(r->tenant, sizeof(r->tenant), "%s", tenant);
        snprintf(r->route, sizeof(r->route), "software");
        snprintf(r->unit_kind, sizeof(r->unit_kind), "slice");
        r->units = 1;
        r->fraction = fraction;
        r->started_ms = start;
}

typedef struct seen {
        kerf_store_run r[16];
        int n;
} seen;

static int collect(const kerf_store_run *r, void *ud)
{
        seen *s = ud;
        if (s->n < 16)
                s->r[s->n++] = *r;
        return 0;
}

static void add_task(kerf_store *s, uint64_t id, const char *tenant)
{
        kerf_store_task t;
        make_task(&t, id, tenant, "running");
        assert_int_equal(kerf_store_task_insert(s, &t), 0);
}

static void test_open_close(void **state)
{
        fixture *f = *state;
        kerf_store_run r;
        seen sn = {0};

        add_tenant(f->s, "a");
        add_task(f->s, 1, "a");
        run_of(&r, 1, "a", 0.25, 1000);
        assert_int_equal(kerf_store_run_open(f->s, &r), 0);
        assert_true(r.id > 0);
        /* the same start written again (e.g. "starting" then "running"): one run, updated */
        run_of(&r, 1, "a", 0.5, 1000);
        assert_int_equal(kerf_store_run_open(f->s, &r), 0);
        assert_int_equal(kerf_store_run_foreach(f->s, NULL, 0, INT64_MAX, collect, &sn), 0);
        assert_int_equal(sn.n, 1);
        assert_true(sn.r[0].fraction == 0.5);
        assert_int_equal(sn.r[0].ended_ms, 0);
        assert_int_equal(sn.r[0].used_ns, -1);
        /* closed with measured device time; a close before its start is clamped */
        assert_int_equal(kerf_store_run_close(f->s, 1, 5000, 123), 0);
        assert_int_equal(kerf_store_run_close(f->s, 1, 9000, 7), 0); /* none open: no-op */
        /* resumed in place with the first start time: the new run starts at the last end */
        run_of(&r, 1, "a", 0.5, 1000);
        assert_int_equal(kerf_store_run_open(f->s, &r), 0);
        assert_int_equal(r.started_ms, 5000);
        assert_int_equal(kerf_store_run_close(f->s, 1, 4000, -1), 0);
        sn.n = 0;
        assert_int_equal(kerf_store_run_foreach(f->s, NULL, 0, INT64_MAX, collect, &sn), 0);
        assert_int_equal(sn.n, 2);
        assert_int_equal(sn.r[0].started_ms, 1000);
        assert_int_equal(sn.r[0].ended_ms, 5000);
        assert_int_equal(sn.r[0].used_ns, 123);
        assert_int_equal(sn.r[1].started_ms, 5000);
        assert_int_equal(sn.r[1].ended_ms, 5000); /* never before its start */
        assert_int_equal(sn.r[1].used_ns, -1);
}

static void test_period_and_tenant(void **state)
{
        fixture *f = *state;
        kerf_store_run r;
        seen sn = {0};

        add_tenant(f->s, "a");
        add_tenant(f->s, "b");
        add_task(f->s, 1, "a");
        add_task(f->s, 2, "b");
        add_task(f->s, 3, "a");
        run_of(&r, 1, "a", 1, 1000);
        assert_int_equal(kerf_store_run_open(f->s, &r), 0);
        assert_int_equal(kerf_store_run_close(f->s, 1, 2000, -1), 0);
        run_of(&r, 2, "b", 1, 3000);
        assert_int_equal(kerf_store_run_open(f->s, &r), 0);
        assert_int_equal(kerf_store_run_close(f->s, 2, 4000, -1), 0);
        run_of(&r, 3, "a", 1, 5000); /* still open */
        assert_int_equal(kerf_store_run_open(f->s, &r), 0);
        /* [2000, 3000): touches none (ends are exclusive, starts too) */
        assert_int_equal(kerf_store_run_foreach(f->s, NULL, 2000, 3000, collect, &sn), 0);
        assert_int_equal(sn.n, 0);
        assert_int_equal(kerf_store_run_foreach(f->s, NULL, 1500, 3500, collect, &sn), 0);
        assert_int_equal(sn.n, 2);
        sn.n = 0;
        assert_int_equal(kerf_store_run_foreach(f->s, NULL, 100000, 200000, collect, &sn), 0);
        assert_int_equal(sn.n, 1); /* the open one runs on */
        assert_int_equal(sn.r[0].task, 3);
        sn.n = 0;
        assert_int_equal(kerf_store_run_foreach(f->s, "a", 0, INT64_MAX, collect, &sn), 0);
        assert_int_equal(sn.n, 2);
        assert_string_equal(sn.r[0].tenant, "a");
        assert_string_equal(sn.r[1].tenant, "a");
        assert_int_equal(kerf_store_run_foreach(f->s, NULL, 10, 5, collect, &sn), -EINVAL);
}

static void test_close_ended(void **state)
{
        fixture *f = *state;
        kerf_store_run r;
        kerf_store_task t;
        seen sn = {0};
        unsigned n = 99;

        add_tenant(f->s, "a");
        add_task(f->s, 1, "a");
        add_task(f->s, 2, "a");
        run_of(&r, 1, "a", 1, 1000);
        assert_int_equal(kerf_store_run_open(f->s, &r), 0);
        run_of(&r, 2, "a", 1, 1000);
        assert_int_equal(kerf_store_run_open(f->s, &r), 0);
        /* task 1's end is written without its run's close */
        assert_int_equal(kerf_store_task_get(f->s, 1, &t), 0);
        snprintf(t.state, sizeof(t.state), "succeeded");
        t.ended_ms = 7000;
        assert_int_equal(kerf_store_task_update(f->s, &t), 0);
        kerf_store_task_fini(&t);
        assert_int_equal(kerf_store_run_close_ended(f->s, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(kerf_store_run_foreach(f->s, NULL, 0, INT64_MAX, collect, &sn), 0);
        assert_int_equal(sn.r[0].ended_ms, 7000);
        assert_int_equal(sn.r[1].ended_ms, 0); /* task 2 still runs */
}

static void test_bad_fields(void **state)
{
        fixture *f = *state;
        kerf_store_run r;
        seen sn = {0};

        add_tenant(f->s, "a");
        add_task(f->s, 1, "a");
        run_of(&r, 0, "a", 1, 1000);
        assert_int_equal(kerf_store_run_open(f->s, &r), -EINVAL);
        run_of(&r, 1, "a", 0, 1000);
        assert_int_equal(kerf_store_run_open(f->s, &r), -EINVAL);
        run_of(&r, 1, "a", 1, 0);
        assert_int_equal(kerf_store_run_open(f->s, &r), -EINVAL);
        run_of(&r, 1, "", 1, 1000);
        assert_int_equal(kerf_store_run_open(f->s, &r), -EINVAL);
        run_of(&r, 42, "a", 1, 1000); /* no such task */
        assert_int_equal(kerf_store_run_open(f->s, &r), -ENOENT);
        assert_int_equal(kerf_store_run_close(f->s, 1, 0, -1), -EINVAL);
        assert_int_equal(kerf_store_run_close(f->s, 1, 10, -2), -EINVAL);
        /* an injected failure: nothing written */
        assert_int_equal(kerf_store_fail_set(f->s, "run_open"), 0);
        run_of(&r, 1, "a", 1, 1000);
        assert_int_equal(kerf_store_run_open(f->s, &r), -EIO);
        assert_int_equal(kerf_store_fail_set(f->s, NULL), 0);
        assert_int_equal(kerf_store_run_foreach(f->s, NULL, 0, INT64_MAX, collect, &sn), 0);
        assert_int_equal(sn.n, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_open_close, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_period_and_tenant, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_close_ended, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_bad_fields, fx_setup, fx_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
