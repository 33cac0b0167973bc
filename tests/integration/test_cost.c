/* SPDX-License-Identifier: Apache-2.0 */
/* test_cost.c - GET /v1/cost against a throwaway kerfd on the simulated fleet: GPU-hours
 * granted per tenant, route and unit kind for tasks on a whole GPU, a MIG instance and a
 * software slice; device time used from the slice's region; period clipping; a preempted task
 * counts both runs; a kill -9 of kerfd mid-task keeps the run true; tenant scoping; bad
 * parameters answer 400 naming the parameter.
 *
 * Tolerances: every run starts at the task's recorded start (started_ms) and ends at its
 * recorded end (ended_ms), so granted = fraction x (ended_ms - started_ms) exactly, up to the
 * rounding of doubles (1e-9 relative). Against the wall clock the run lasts at least as long as
 * the task's own sleep and at most the window in which the test watched it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static kd K;

static long long now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char fail_file[128];

static int setup(void **st)
{
        char hook[200];
        (void)st;
        /* every run close fails while this file exists: a full disk for that write */
        snprintf(fail_file, sizeof(fail_file), "/tmp/kerf-it-cost-fail-%d", (int)getpid());
        snprintf(hook, sizeof(hook), "run_close@%s", fail_file);
        setenv("KERFD_TEST_STORE_FAIL", hook, 1);
        /* a preloadable stand-in for the shim: the slice counts as enforced and its region's
         * device time (written by it_slice_task) is what kerfd measures */
        setenv("KERFD_TEST_SHIM_PATH", NOOP_SHIM, 1);
        kd_setup(&K, NULL);
        return 0;
}

static int teardown(void **st)
{
        (void)st;
        kd_stop(&K);
        kd_cleanup(&K);
        unsetenv("KERFD_TEST_SHIM_PATH");
        unsetenv("KERFD_TEST_STORE_FAIL");
        unlink(fail_file);
        return 0;
}

static json_t *cost(const char *query, const char *token, long *s)
{
        char path[512];
        snprintf(path, sizeof(path), "/v1/cost%s", query);
        return kd_call(&K, "GET", path, NULL, token, s, NULL);
}

/* The item of (tenant, route, unit_kind) (NULL = must be null there), or NULL. Borrowed. */
static json_t *item(json_t *c, const char *tenant, const char *route, const char *kind)
{
        size_t i;
        json_t *it;
        json_array_foreach(json_object_get(c, "items"), i, it)
        {
                const char *v[3] = {tenant, route, kind}, *k[3] = {"tenant", "route", "unit_kind"};
                bool ok = true;
                for (int j = 0; j < 3; j++) {
                        json_t *f = json_object_get(it, k[j]);
                        ok &= v[j] ? json_is_string(f) && !strcmp(json_string_value(f), v[j])
                                   : json_is_null(f);
                }
                if (ok)
                        return it;
        }
        return NULL;
}

static double num(json_t *o, const char *k)
{
        return json_number_value(json_object_get(o, k));
}

static void near(double got, double want)
{
        if (fabs(got - want) > 1e-9 * (fabs(want) + 1e-12) + 1e-12) {
                fprintf(stderr, "got %.12g want %.12g\n", got, want);
                fail();
        }
}

static void span(unsigned long long id, long long *start, long long *end)
{
        char path[64];
        long s;
        json_t *t;
        snprintf(path, sizeof(path), "/v1/tasks/%llu", id);
        t = kd_call(&K, "GET", path, NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        *start = json_integer_value(json_object_get(t, "started_ms"));
        *end = json_integer_value(json_object_get(t, "ended_ms"));
        json_decref(t);
}

static int runs_of(unsigned long long id, long long *first_end)
{
        char db[512];
        sqlite3 *h;
        sqlite3_stmt *st;
        int n = 0;
        snprintf(db, sizeof(db), "%s/state/kerf.db", K.dir);
        assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(h,
                                            "SELECT started_ms, ended_ms FROM runs WHERE task = ?1"
                                            " ORDER BY id",
                                            -1, &st, NULL),
                         SQLITE_OK);
        sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
        while (sqlite3_step(st) == SQLITE_ROW) {
                if (n == 0 && first_end)
                        *first_end = sqlite3_column_int64(st, 1);
                n++;
        }
        sqlite3_finalize(st);
        sqlite3_close(h);
        return n;
}

static void test_cost_routes(void **st)
{
        (void)st;
        char body[512], q[256];
        unsigned long long w, m, sl;
        long long t0, t1, ws, we, ms, me, ss, se;
        json_t *c, *it;
        char *alice = kd_token(&K, "alice"), *bob = kd_token(&K, "bob");
        long s;

        t0 = now_ms();
        w = kd_submit(&K,
                      "{\"tenant\":\"alice\",\"route\":\"whole\",\"command\":[\"/bin/sleep\","
                      "\"1.5\"]}",
                      NULL);
        m = kd_submit(&K,
                      "{\"tenant\":\"alice\",\"workload\":\"inference\",\"tier\":\"high\","
                      "\"mig_profile\":\"1g.18gb\",\"command\":[\"/bin/sleep\",\"1.5\"]}",
                      NULL);
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"bob\",\"route\":\"slice\",\"memory\":\"4GiB\",\"compute\":25,"
                 "\"command\":[\"%s\",\"1.5\",\"0\"]}",
                 SLICE_TASK_BIN);
        sl = kd_submit(&K, body, NULL);
        json_t *tw = kd_wait_task(&K, w, "succeeded", 20000);
        json_t *tm = kd_wait_task(&K, m, "succeeded", 20000);
        json_t *ts = kd_wait_task(&K, sl, "succeeded", 20000);
        assert_non_null(tw);
        assert_non_null(tm);
        assert_non_null(ts);
        json_decref(tw);
        json_decref(tm);
        json_decref(ts);
        t1 = now_ms() + 1;
        span(w, &ws, &we);
        span(m, &ms, &me);
        span(sl, &ss, &se);

        snprintf(q, sizeof(q), "?from_ms=%lld&to_ms=%lld", t0, t1);
        c = cost(q, NULL, &s);
        assert_int_equal(s, 200);
        assert_int_equal(json_integer_value(json_object_get(c, "from_ms")), t0);
        assert_int_equal(json_integer_value(json_object_get(c, "to_ms")), t1);
        assert_non_null(json_string_value(json_object_get(c, "notes")));
        assert_int_equal(json_array_size(json_object_get(c, "items")), 3);
        /* whole GPU: 1 GPU x its run */
        it = item(c, "alice", "whole", "whole");
        assert_non_null(it);
        assert_int_equal(json_integer_value(json_object_get(it, "tasks")), 1);
        near(num(it, "granted_gpu_hours"), (we - ws) / 3.6e6);
        assert_true(we - ws >= 1500 && we - ws <= t1 - t0);
        assert_true(json_is_null(json_object_get(it, "used_gpu_hours")));
        /* MIG 1g on an H200: 1 of 7 compute slices */
        it = item(c, "alice", "hardware", "mig");
        assert_non_null(it);
        near(num(it, "granted_gpu_hours"), (me - ms) / 3.6e6 / 7.0);
        assert_true(me - ms >= 1500 && me - ms <= t1 - t0);
        assert_true(json_is_null(json_object_get(it, "used_gpu_hours")));
        /* slice with 25 % compute; it_slice_task charged 2.5 s of device time */
        it = item(c, "bob", "software", "slice");
        assert_non_null(it);
        near(num(it, "granted_gpu_hours"), 0.25 * (se - ss) / 3.6e6);
        assert_true(se - ss >= 1500 && se - ss <= t1 - t0);
        assert_true(json_is_number(json_object_get(it, "used_gpu_hours")));
        near(num(it, "used_gpu_hours"), 2.5 / 3600.0);
        /* totals: granted summed; used null because the whole GPU and MIG were not measured */
        near(num(json_object_get(c, "totals"), "granted_gpu_hours"),
             (we - ws) / 3.6e6 + (me - ms) / 3.6e6 / 7.0 + 0.25 * (se - ss) / 3.6e6);
        assert_true(json_is_null(json_object_get(json_object_get(c, "totals"), "used_gpu_hours")));
        json_decref(c);

        /* by=tenant: one item per tenant, the other keys null */
        snprintf(q, sizeof(q), "?from_ms=%lld&to_ms=%lld&by=tenant", t0, t1);
        c = cost(q, NULL, &s);
        assert_int_equal(s, 200);
        assert_int_equal(json_array_size(json_object_get(c, "items")), 2);
        it = item(c, "alice", NULL, NULL);
        assert_non_null(it);
        assert_int_equal(json_integer_value(json_object_get(it, "tasks")), 2);
        near(num(it, "granted_gpu_hours"), (we - ws) / 3.6e6 + (me - ms) / 3.6e6 / 7.0);
        json_decref(c);

        /* period clipping: from the middle of the whole-GPU run to its end */
        long long mid = ws + (we - ws) / 2;
        snprintf(q, sizeof(q), "?from_ms=%lld&to_ms=%lld&by=unit_kind", mid, we);
        c = cost(q, NULL, &s);
        assert_int_equal(s, 200);
        it = item(c, NULL, NULL, "whole");
        assert_non_null(it);
        near(num(it, "granted_gpu_hours"), (we - mid) / 3.6e6);
        json_decref(c);
        /* and a period before any of them: nothing */
        snprintf(q, sizeof(q), "?from_ms=%lld&to_ms=%lld", t0 - 100000, t0 - 50000);
        c = cost(q, NULL, &s);
        assert_int_equal(json_array_size(json_object_get(c, "items")), 0);
        near(num(json_object_get(c, "totals"), "granted_gpu_hours"), 0);
        json_decref(c);

        /* tenant scoping: each tenant sees its own only */
        snprintf(q, sizeof(q), "?from_ms=%lld&to_ms=%lld", t0, t1);
        c = cost(q, alice, &s);
        assert_int_equal(s, 200);
        assert_int_equal(json_array_size(json_object_get(c, "items")), 2);
        assert_null(item(c, "bob", "software", "slice"));
        json_decref(c);
        c = cost(q, bob, &s);
        assert_int_equal(s, 200);
        assert_int_equal(json_array_size(json_object_get(c, "items")), 1);
        assert_non_null(item(c, "bob", "software", "slice"));
        json_decref(c);
}

static void bad(const char *query, const char *name)
{
        char *raw = NULL;
        char path[256];
        long s;
        snprintf(path, sizeof(path), "/v1/cost%s", query);
        json_decref(kd_call(&K, "GET", path, NULL, NULL, &s, &raw));
        assert_int_equal(s, 400);
        if (!strstr(raw, name)) {
                fprintf(stderr, "%s: %s does not name %s\n", query, raw, name);
                fail();
        }
        free(raw);
}

static void test_cost_bad_params(void **st)
{
        (void)st;
        long s;
        bad("?from_ms=abc", "from_ms");
        bad("?from_ms=-5", "from_ms");
        bad("?to_ms=99999999999999999999999", "to_ms");
        bad("?from_ms=2000&to_ms=1000", "to_ms");
        bad("?from_ms=1000&to_ms=1000", "to_ms");
        bad("?by=gpu", "by");
        bad("?by=tenant,tenant", "by");
        bad("?by=", "by");
        bad("?by=tenant,", "by");
        json_decref(kd_call(&K, "POST", "/v1/cost", "{}", NULL, &s, NULL));
        assert_int_equal(s, 405);
}

static void test_cost_preempted(void **st)
{
        (void)st;
        unsigned long long ids[6], hi;
        long long t0, first_end = 0, s1, e1, sh, eh;
        char path[64], q[128];
        json_t *t, *c;
        long s;
        int pre = -1;

        t0 = now_ms();
        for (int i = 0; i < 6; i++) {
                ids[i] = kd_submit(&K,
                                   "{\"tenant\":\"bob\",\"route\":\"whole\",\"command\":"
                                   "[\"/bin/sleep\",\"60\"]}",
                                   NULL);
                json_decref(kd_wait_task(&K, ids[i], "running", 10000));
        }
        hi = kd_submit(&K,
                       "{\"tenant\":\"alice\",\"workload\":\"training\",\"tier\":\"high\","
                       "\"priority\":500,\"route\":\"whole\",\"command\":[\"/bin/sleep\",\"1\"]}",
                       NULL);
        t = kd_wait_task(&K, hi, "succeeded", 20000);
        assert_non_null(t);
        json_decref(t);
        for (int i = 0; i < 6; i++) {
                snprintf(path, sizeof(path), "/v1/tasks/%llu", ids[i]);
                t = kd_call(&K, "GET", path, NULL, NULL, &s, NULL);
                if (json_integer_value(json_object_get(t, "preemptions")) == 1)
                        pre = i;
                json_decref(t);
        }
        assert_true(pre >= 0);
        /* the preempted task starts again once the high-priority one is done */
        json_decref(kd_wait_task(&K, ids[pre], "running", 20000));
        kd_sleep_ms(300);
        for (int i = 0; i < 6; i++) {
                snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", ids[i]);
                json_decref(kd_call(&K, "POST", path, "{\"grace_s\":0}", NULL, &s, NULL));
        }
        for (int i = 0; i < 6; i++)
                json_decref(kd_wait_task(&K, ids[i], "cancelled", 10000));
        /* two runs: the first ended at the preemption, the second at the cancel */
        assert_int_equal(runs_of(ids[pre], &first_end), 2);
        span(ids[pre], &s1, &e1);
        span(hi, &sh, &eh);
        assert_true(first_end > 0 && first_end <= s1);
        snprintf(q, sizeof(q), "?from_ms=%lld&to_ms=%lld&by=tenant", t0, now_ms() + 1);
        c = cost(q, NULL, &s);
        assert_int_equal(s, 200);
        json_t *it = item(c, "bob", NULL, NULL);
        assert_non_null(it);
        assert_int_equal(json_integer_value(json_object_get(it, "tasks")), 6);
        /* bob's six tasks: each from its (last) start to its end, plus the first run of the
         * preempted one, which the task object no longer shows */
        double want = 0;
        for (int i = 0; i < 6; i++) {
                long long a, b;
                span(ids[i], &a, &b);
                want += (b - a) / 3.6e6;
        }
        long long f0 = 0;
        {
                char db[512];
                sqlite3 *h;
                sqlite3_stmt *q2;
                snprintf(db, sizeof(db), "%s/state/kerf.db", K.dir);
                assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
                assert_int_equal(sqlite3_prepare_v2(h,
                                                    "SELECT started_ms FROM runs WHERE task = ?1"
                                                    " ORDER BY id LIMIT 1",
                                                    -1, &q2, NULL),
                                 SQLITE_OK);
                sqlite3_bind_int64(q2, 1, (sqlite3_int64)ids[pre]);
                assert_int_equal(sqlite3_step(q2), SQLITE_ROW);
                f0 = sqlite3_column_int64(q2, 0);
                sqlite3_finalize(q2);
                sqlite3_close(h);
        }
        want += (first_end - f0) / 3.6e6;
        near(num(it, "granted_gpu_hours"), want);
        /* the first run lasted until the preemptor started (its unit went to it) */
        assert_true(first_end <= sh + 50);
        json_decref(c);
}

static void test_cost_restart(void **st)
{
        (void)st;
        unsigned long long id;
        long long t0, a, b;
        char q[128];
        json_t *t, *c, *it;
        long s;

        t0 = now_ms();
        id = kd_submit(&K,
                       "{\"tenant\":\"alice\",\"route\":\"whole\",\"queue\":\"restart\","
                       "\"command\":[\"/bin/sleep\",\"3\"]}",
                       NULL);
        json_decref(kd_wait_task(&K, id, "running", 10000));
        kd_kill9(&K); /* the run is open in the store when kerfd dies */
        kd_sleep_ms(500);
        kd_start(&K);
        t = kd_wait_task(&K, id, "succeeded", 20000);
        assert_non_null(t);
        json_decref(t);
        assert_int_equal(runs_of(id, NULL), 1);
        span(id, &a, &b);
        assert_true(b - a >= 3000);
        snprintf(q, sizeof(q), "?from_ms=%lld&to_ms=%lld&by=tenant,unit_kind", t0, now_ms() + 1);
        c = cost(q, NULL, &s);
        assert_int_equal(s, 200);
        it = item(c, "alice", NULL, "whole");
        assert_non_null(it);
        /* the re-adopted task's run ends at its true end (the supervisor's record) */
        near(num(it, "granted_gpu_hours"), (b - a) / 3.6e6);
        json_decref(c);
}

/* A time-slice share has no compute reservation: it holds its memory's part of the GPU. */
static void test_cost_tslice(void **st)
{
        (void)st;
        unsigned long long id;
        long long t0, a, b;
        char q[128];
        json_t *t, *c, *g, *it;
        long s;
        int gpu;

        t0 = now_ms();
        id = kd_submit(&K,
                       "{\"tenant\":\"alice\",\"workload\":\"dev\",\"route\":\"tslice\","
                       "\"memory\":\"16GiB\",\"command\":[\"/bin/sleep\",\"1\"]}",
                       NULL);
        t = kd_wait_task(&K, id, "running", 20000);
        assert_non_null(t);
        gpu = (int)json_integer_value(
            json_object_get(json_array_get(json_object_get(t, "units"), 0), "gpu"));
        json_decref(t);
        json_decref(kd_wait_task(&K, id, "succeeded", 20000));
        span(id, &a, &b);
        g = kd_call(&K, "GET", "/v1/gpus", NULL, NULL, &s, NULL);
        double total = 0;
        size_t i;
        json_array_foreach(json_object_get(g, "items"), i,
                           it) if (json_integer_value(json_object_get(it, "index")) == gpu) total =
            (double)json_integer_value(json_object_get(it, "memory_total"));
        json_decref(g);
        assert_true(total > 0);
        snprintf(q, sizeof(q), "?from_ms=%lld&to_ms=%lld&by=route,unit_kind", t0, now_ms() + 1);
        c = cost(q, NULL, &s);
        it = item(c, NULL, "software", "tslice");
        assert_non_null(it);
        near(num(it, "granted_gpu_hours"), 16.0 * 1024 * 1024 * 1024 / total * (b - a) / 3.6e6);
        json_decref(c);
}

/* The end of a run cannot be written (its close fails, as on a full disk): the end waits in
 * kerfd's outbox, and once the store writes again the run ends at the task's true end. */
static void test_cost_store_full(void **st)
{
        (void)st;
        unsigned long long id;
        long long t0, a, b;
        char q[128];
        json_t *t, *c, *h;
        long s;
        FILE *f;

        f = fopen(fail_file, "w");
        assert_non_null(f);
        fclose(f);
        t0 = now_ms();
        id = kd_submit(&K,
                       "{\"tenant\":\"bob\",\"route\":\"whole\",\"queue\":\"full\","
                       "\"command\":[\"/bin/sleep\",\"0.5\"]}",
                       NULL);
        t = kd_wait_task(&K, id, "succeeded", 20000);
        assert_non_null(t);
        assert_true(json_is_false(json_object_get(t, "durable")));
        json_decref(t);
        h = kd_call(&K, "GET", "/v1/health", NULL, NULL, &s, NULL);
        assert_string_equal(json_string_value(json_object_get(h, "status")), "degraded");
        json_decref(h);
        snprintf(q, sizeof(q), "?from_ms=%lld&by=tenant", t0);
        c = cost(q, NULL, &s);
        assert_int_equal(s, 200);
        assert_non_null(strstr(json_string_value(json_object_get(c, "notes")), "cannot write"));
        json_decref(c);
        kd_sleep_ms(700); /* the run, still open in the store, is counted up to now meanwhile */
        unlink(fail_file);
        for (int i = 0; i < 100; i++) {
                h = kd_call(&K, "GET", "/v1/health", NULL, NULL, &s, NULL);
                bool ok = !strcmp(json_string_value(json_object_get(h, "status")), "ok");
                json_decref(h);
                if (ok)
                        break;
                kd_sleep_ms(50);
        }
        span(id, &a, &b);
        assert_int_equal(runs_of(id, NULL), 1);
        snprintf(q, sizeof(q), "?from_ms=%lld&to_ms=%lld&by=tenant", t0, now_ms() + 1);
        c = cost(q, NULL, &s);
        near(num(item(c, "bob", NULL, NULL), "granted_gpu_hours"), (b - a) / 3.6e6);
        json_decref(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cost_routes),     cmocka_unit_test(test_cost_bad_params),
            cmocka_unit_test(test_cost_preempted),  cmocka_unit_test(test_cost_restart),
            cmocka_unit_test(test_cost_store_full), cmocka_unit_test(test_cost_tslice),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
