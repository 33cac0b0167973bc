/* SPDX-License-Identifier: Apache-2.0 */
/* test_pages.c - /v1/gpus, /v1/units, /v1/tenants, /v1/queues paginate: paging with limit=1
 * yields every item of the whole list exactly once, in the same stable order, and `next` ends */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static kd K;

/* The identity of one item of each list. */
static void key_of(const char *list, json_t *it, char *out, size_t cap)
{
        if (!strcmp(list, "/v1/gpus"))
                snprintf(out, cap, "%lld",
                         (long long)json_integer_value(json_object_get(it, "index")));
        else if (!strcmp(list, "/v1/units"))
                snprintf(out, cap, "%lld",
                         (long long)json_integer_value(json_object_get(it, "id")));
        else if (!strcmp(list, "/v1/tenants"))
                snprintf(out, cap, "%s", json_string_value(json_object_get(it, "name")));
        else
                snprintf(out, cap, "%s/%s", json_string_value(json_object_get(it, "tenant")),
                         json_string_value(json_object_get(it, "queue")));
}

/* Pages through `list` with limit=1 and checks it against the whole list; returns its size. */
static size_t page_all(const char *list, const char *token)
{
        char path[256], keys[256][80], k[80];
        long s;
        json_t *whole, *it;
        size_t nw, got = 0, i;
        char *cursor = NULL;

        snprintf(path, sizeof(path), "%s?limit=1000", list);
        whole = kd_call(&K, "GET", path, NULL, token, &s, NULL);
        assert_int_equal(s, 200);
        assert_true(json_is_null(json_object_get(whole, "next")));
        nw = json_array_size(json_object_get(whole, "items"));
        assert_true(nw > 1 && nw <= 256);
        json_array_foreach(json_object_get(whole, "items"), i, it)
        {
                key_of(list, it, keys[i], sizeof(keys[i]));
                for (size_t j = 0; j < i; j++)
                        if (!strcmp(keys[j], keys[i]))
                                fail_msg("%s: %s listed twice", list, keys[i]);
        }
        json_decref(whole);
        for (;;) {
                json_t *p, *items, *nx;
                if (cursor)
                        snprintf(path, sizeof(path), "%s?limit=1&after=%s", list, cursor);
                else
                        snprintf(path, sizeof(path), "%s?limit=1", list);
                free(cursor);
                cursor = NULL;
                p = kd_call(&K, "GET", path, NULL, token, &s, NULL);
                assert_int_equal(s, 200);
                items = json_object_get(p, "items");
                nx = json_object_get(p, "next");
                if (json_array_size(items) != 1)
                        fail_msg("%s: page %zu has %zu items", path, got, json_array_size(items));
                key_of(list, json_array_get(items, 0), k, sizeof(k));
                if (got >= nw || strcmp(k, keys[got]))
                        fail_msg("%s: page %zu is %s, want %s", list, got, k,
                                 got < nw ? keys[got] : "(no more)");
                got++;
                if (json_is_null(nx)) {
                        json_decref(p);
                        break;
                }
                assert_true(json_is_string(nx));
                cursor = strdup(json_string_value(nx));
                json_decref(p);
        }
        assert_int_equal(got, nw);
        return nw;
}

static void test_pages(void **st)
{
        static const char *const lists[] = {"/v1/gpus", "/v1/units", "/v1/tenants", "/v1/queues"};
        char body[256];
        char *tok;
        long s;
        json_t *j;
        (void)st;

        for (int i = 0; i < 3; i++) {
                snprintf(body, sizeof(body), "{\"name\":\"t%d\"}", i);
                j = kd_call(&K, "POST", "/v1/tenants", body, NULL, &s, NULL);
                assert_int_equal(s, 201);
                json_decref(j);
        }
        /* running tasks hold units; queues of two tenants */
        for (int i = 0; i < 6; i++) {
                snprintf(body, sizeof(body),
                         "{\"tenant\":\"%s\",\"queue\":\"q%d\",\"gpus\":1,"
                         "\"command\":[\"/bin/sleep\",\"60\"]}",
                         i % 2 ? "bob" : "alice", i % 3);
                unsigned long long id = kd_submit(&K, body, NULL);
                json_decref(kd_wait_task(&K, id, "running", 20000));
        }
        for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
                page_all(lists[i], NULL);
        assert_true(page_all("/v1/units", NULL) >= 6);
        assert_int_equal(page_all("/v1/tenants", NULL), 5);
        assert_int_equal(page_all("/v1/queues", NULL), 6);

        /* a tenant pages through its own queues and units only */
        tok = kd_token(&K, "alice");
        assert_int_equal(page_all("/v1/queues", tok), 3);
        assert_int_equal(page_all("/v1/units", tok), 3);

        /* the past-the-end cursor is an empty last page; bad cursors are refused */
        j = kd_call(&K, "GET", "/v1/gpus?after=1000", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_int_equal(json_array_size(json_object_get(j, "items")), 0);
        assert_true(json_is_null(json_object_get(j, "next")));
        json_decref(j);
        j = kd_call(&K, "GET", "/v1/queues?after=zzz/zzz", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_int_equal(json_array_size(json_object_get(j, "items")), 0);
        json_decref(j);
        static const char *const bad[] = {"/v1/queues?after=alice",  "/v1/queues?after=/q0",
                                          "/v1/queues?after=alice/", "/v1/queues?after=a%20b/q",
                                          "/v1/tenants?after=x",     "/v1/units?after=-1",
                                          "/v1/gpus?limit=0"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                j = kd_call(&K, "GET", bad[i], NULL, NULL, &s, NULL);
                if (s != 400)
                        fail_msg("%s: got %ld, want 400", bad[i], s);
                json_decref(j);
        }
}

/* The queue listing shows each queue's mode (config queues:, docs/SCHEDULER.md). */
static void test_queue_modes(void **st)
{
        long s;
        size_t i;
        json_t *j, *it;
        unsigned seen = 0;
        (void)st;

        j = kd_call(&K, "GET", "/v1/queues?limit=1000", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        json_array_foreach(json_object_get(j, "items"), i, it)
        {
                const char *q = json_string_value(json_object_get(it, "queue"));
                const char *mode = json_string_value(json_object_get(it, "mode"));
                json_t *bf = json_object_get(it, "backfill");
                json_t *sv = json_object_get(it, "starvation_s");
                assert_non_null(mode);
                if (!strcmp(q, "q1")) {
                        assert_string_equal(mode, "best-effort");
                        assert_true(json_is_false(bf));
                        assert_int_equal(json_integer_value(sv), 600);
                } else {
                        assert_string_equal(mode, "strict");
                        assert_true(json_is_true(bf));
                        assert_true(json_is_null(sv));
                }
                seen++;
        }
        assert_true(seen >= 3);
        json_decref(j);
}

static const char *reason_text(json_t *task)
{
        return json_string_value(json_object_get(json_object_get(task, "reason"), "text"));
}

/* GPUs with no unit (whole GPUs free for training tasks). */
static unsigned free_gpus(void)
{
        long s;
        size_t i;
        json_t *it, *j = kd_call(&K, "GET", "/v1/gpus?limit=1000", NULL, NULL, &s, NULL);
        unsigned n = 0;
        assert_int_equal(s, 200);
        json_array_foreach(json_object_get(j, "items"), i, it)
        {
                n += !strcmp(json_string_value(json_object_get(it, "mode")), "free");
        }
        json_decref(j);
        return n;
}

/* Through kerfd (its clock, the config's modes, the recorded START reason): a best-effort queue
 * lets a small task pass a blocked head; in a strict queue a task that ends before the blocked
 * head's expected start is backfilled. */
static void test_queue_passing(void **st)
{
        char body[256];
        json_t *t;
        unsigned long long small, x, head, bf;
        unsigned f;
        (void)st;

        kd_submit(&K,
                  "{\"tenant\":\"alice\",\"queue\":\"q1\",\"workload\":\"training\","
                  "\"gpus\":8,\"command\":[\"/bin/sleep\",\"60\"]}",
                  NULL);
        small = kd_submit(&K,
                          "{\"tenant\":\"alice\",\"queue\":\"q1\",\"gpus\":1,"
                          "\"command\":[\"/bin/sleep\",\"0.2\"]}",
                          NULL);
        t = kd_wait_task(&K, small, "running", 20000);
        if (!strstr(reason_text(t), "best-effort queue: task"))
                fail_msg("best-effort start: %s", reason_text(t));
        json_decref(t);
        json_decref(kd_wait_task(&K, small, "succeeded", 20000));
        /* strict (the default queue spec): x leaves one GPU free for up to 600 s; the head needs
         * one more, so it is expected to start when x reaches its max_runtime_s */
        f = free_gpus();
        assert_true(f >= 2);
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"bob\",\"queue\":\"bfq\",\"workload\":\"training\","
                 "\"gpus\":%u,\"max_runtime_s\":600,\"command\":[\"/bin/sleep\",\"60\"]}",
                 f - 1);
        x = kd_submit(&K, body, NULL);
        json_decref(kd_wait_task(&K, x, "running", 20000));
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"bob\",\"queue\":\"bfq\",\"workload\":\"training\","
                 "\"gpus\":%u,\"command\":[\"/bin/sleep\",\"60\"]}",
                 f);
        head = kd_submit(&K, body, NULL);
        bf = kd_submit(&K,
                       "{\"tenant\":\"bob\",\"queue\":\"bfq\",\"workload\":\"training\","
                       "\"max_runtime_s\":30,\"command\":[\"/bin/sleep\",\"60\"]}",
                       NULL);
        t = kd_wait_task(&K, bf, "running", 20000);
        if (!strstr(reason_text(t), "backfilled: ends within 30 s, before task"))
                fail_msg("backfilled start: %s", reason_text(t));
        json_decref(t);
        json_decref(kd_wait_task(&K, head, "pending", 2000));
        /* a task behind the blocked head: explain names the head and its expected start (x
         * reaches its max_runtime_s of 600 s) */
        unsigned long long late = kd_submit(&K,
                                            "{\"tenant\":\"bob\",\"queue\":\"bfq\",\"workload\":"
                                            "\"training\",\"max_runtime_s\":3600,"
                                            "\"command\":[\"/bin/sleep\",\"60\"]}",
                                            NULL);
        char path[64];
        long status = 0;
        snprintf(path, sizeof(path), "/v1/tasks/%llu/explain", late);
        json_t *e = kd_call(&K, "GET", path, NULL, NULL, &status, NULL);
        assert_int_equal(status, 200);
        assert_int_equal(json_integer_value(json_object_get(e, "head_task")), (json_int_t)head);
        json_int_t in_s = json_integer_value(json_object_get(e, "head_start_in_s"));
        if (in_s < 500 || in_s > 600)
                fail_msg("head_start_in_s %lld, want ~600", (long long)in_s);
        json_decref(e);
}

static int setup(void **st)
{
        (void)st;
        kd_setup(&K, "queues:\n  - name: q1\n    mode: best-effort\n    backfill: false\n"
                     "    starvation_s: 600\n");
        return 0;
}

static int teardown(void **st)
{
        (void)st;
        kd_stop(&K);
        kd_cleanup(&K);
        return 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_pages),
                                           cmocka_unit_test(test_queue_modes),
                                           cmocka_unit_test(test_queue_passing)};
        return cmocka_run_group_tests(tests, setup, teardown);
}
