/* SPDX-License-Identifier: Apache-2.0 */
/* test_tasks.c - kerfd task lifecycle: exit, failure, cancel, timeout, idle, preemption, each
 * with its reclamation checked against the units, the GPUs and /metrics */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static kd K;

static int setup(void **st)
{
        kd_setup(&K, NULL);
        return 0;
}

static int teardown(void **st)
{
        kd_stop(&K);
        kd_cleanup(&K);
        return 0;
}

/* True when no unit is held by task `id` and /metrics has no series of it. */
static void assert_reclaimed(unsigned long long id)
{
        long s;
        char *raw = NULL, needle[64];
        json_t *u = kd_call(&K, "GET", "/v1/units", NULL, NULL, &s, NULL), *it;
        size_t i;
        assert_int_equal(s, 200);
        json_array_foreach(json_object_get(u, "items"), i, it)
        {
                assert_true((unsigned long long)json_integer_value(json_object_get(it, "task")) !=
                            id);
        }
        json_decref(u);
        json_decref(kd_call(&K, "GET", "/metrics", NULL, NULL, &s, &raw));
        assert_int_equal(s, 200);
        snprintf(needle, sizeof(needle), "task=\"%llu\"", id);
        assert_null(strstr(raw, needle));
        free(raw);
}

static void test_exit_reclaimed(void **st)
{
        unsigned long long id =
            kd_submit(&K,
                      "{\"tenant\":\"alice\",\"command\":[\"/bin/sh\",\"-c\",\"echo out; "
                      "sleep 0.3\"]}",
                      NULL);
        json_t *t = kd_wait_task(&K, id, "succeeded", 10000), *l;
        long s;
        char path[64];
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "end_reason")), "exit");
        assert_int_equal(json_integer_value(json_object_get(t, "exit_code")), 0);
        assert_true(json_is_true(json_object_get(t, "simulated")));
        assert_true(json_integer_value(json_object_get(t, "ended_ms")) >=
                    json_integer_value(json_object_get(t, "started_ms")));
        json_decref(t);
        assert_reclaimed(id);
        snprintf(path, sizeof(path), "/v1/tasks/%llu/logs?stream=stdout", id);
        l = kd_call(&K, "GET", path, NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_string_equal(json_string_value(json_object_get(l, "data")), "out\n");
        assert_true(json_is_true(json_object_get(l, "eof")));
        json_decref(l);
}

static void test_failure(void **st)
{
        unsigned long long id = kd_submit(
            &K, "{\"tenant\":\"alice\",\"command\":[\"/bin/sh\",\"-c\",\"exit 3\"]}", NULL);
        json_t *t = kd_wait_task(&K, id, "failed", 10000);
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "end_reason")), "failure");
        assert_int_equal(json_integer_value(json_object_get(t, "exit_code")), 3);
        json_decref(t);
        assert_reclaimed(id);
        /* a command that cannot be executed fails at once with the reason */
        id = kd_submit(&K, "{\"tenant\":\"alice\",\"command\":[\"/nonexistent/x\"]}", NULL);
        t = kd_wait_task(&K, id, "failed", 10000);
        assert_non_null(t);
        assert_non_null(strstr(
            json_string_value(json_object_get(json_object_get(t, "reason"), "text")), "exec"));
        json_decref(t);
}

static void test_cancel(void **st)
{
        unsigned long long id =
            kd_submit(&K, "{\"tenant\":\"bob\",\"command\":[\"/bin/sleep\",\"30\"]}", NULL);
        json_t *t = kd_wait_task(&K, id, "running", 10000);
        char path[64];
        long s;
        long long pid;
        assert_non_null(t);
        pid = json_integer_value(json_object_get(t, "pid"));
        json_decref(t);
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", id);
        json_decref(kd_call(&K, "POST", path, "{\"grace_s\":1}", NULL, &s, NULL));
        assert_int_equal(s, 200);
        t = kd_wait_task(&K, id, "cancelled", 10000);
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "end_reason")), "cancel");
        json_decref(t);
        assert_true(kill((pid_t)pid, 0) < 0);
        assert_reclaimed(id);
        /* cancel of an ended task: 409, nothing changes */
        json_decref(kd_call(&K, "POST", path, NULL, NULL, &s, NULL));
        assert_int_equal(s, 409);
}

static void test_timeout_and_idle(void **st)
{
        unsigned long long a = kd_submit(&K,
                                         "{\"tenant\":\"alice\",\"max_runtime_s\":1,"
                                         "\"command\":[\"/bin/sleep\",\"30\"]}",
                                         NULL);
        unsigned long long b = kd_submit(&K,
                                         "{\"tenant\":\"alice\",\"idle_timeout_s\":1,"
                                         "\"command\":[\"/bin/sleep\",\"30\"]}",
                                         NULL);
        json_t *t = kd_wait_task(&K, a, "failed", 10000);
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "end_reason")), "timeout");
        json_decref(t);
        t = kd_wait_task(&K, b, "failed", 10000);
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "end_reason")), "idle");
        json_decref(t);
        assert_reclaimed(a);
        assert_reclaimed(b);
}

/* Every task past its max runtime is stopped in the same limit pass (one every 100 ms would
 * end the last of N tasks due together about (N-1) x 100 ms late). */
static void test_timeouts_one_pass(void **st)
{
        enum { N = 20, PASS_MS = 100 };
        unsigned long long ids[N];
        long long late_max = 0, start_min = 0, start_max = 0;
        for (int i = 0; i < N; i++)
                ids[i] = kd_submit(&K,
                                   "{\"tenant\":\"alice\",\"route\":\"slice\",\"memory\":\"1GiB\","
                                   "\"max_runtime_s\":1,\"command\":[\"/bin/sleep\",\"30\"]}",
                                   NULL);
        for (int i = 0; i < N; i++) {
                json_t *t = kd_wait_task(&K, ids[i], "failed", 20000);
                assert_non_null(t);
                assert_string_equal(json_string_value(json_object_get(t, "end_reason")), "timeout");
                long long s = json_integer_value(json_object_get(t, "started_ms"));
                long long e = json_integer_value(json_object_get(t, "ended_ms"));
                assert_true(s > 0 && e >= s + 1000);
                /* how long after its due time (start + 1 s) it ended */
                if (e - s - 1000 > late_max)
                        late_max = e - s - 1000;
                start_min = i == 0 || s < start_min ? s : start_min;
                start_max = s > start_max ? s : start_max;
                json_decref(t);
                assert_reclaimed(ids[i]);
        }
        fprintf(stderr,
                "timeouts: %d tasks started within %lld ms, the latest ended %lld ms "
                "after its due time\n",
                N, start_max - start_min, late_max);
        /* one task per pass would end the last about (N-1) x PASS_MS minus the start spread
         * late; all in one pass: a pass, a stop and a reap late, whatever N */
        assert_true(late_max < N * PASS_MS / 2);
}

static void test_preemption(void **st)
{
        unsigned long long ids[6], hi;
        json_t *t;
        long s;
        char path[64];
        int preempted = -1;
        /* six whole GPUs (two of the eight are in MIG mode) taken by batch work */
        for (int i = 0; i < 6; i++) {
                ids[i] = kd_submit(&K,
                                   "{\"tenant\":\"bob\",\"route\":\"whole\",\"command\":"
                                   "[\"/bin/sleep\",\"60\"]}",
                                   NULL);
                t = kd_wait_task(&K, ids[i], "running", 10000);
                assert_non_null(t);
                json_decref(t);
        }
        hi = kd_submit(&K,
                       "{\"tenant\":\"alice\",\"workload\":\"training\",\"tier\":\"high\","
                       "\"priority\":500,\"command\":[\"/bin/sleep\",\"60\"]}",
                       NULL);
        t = kd_wait_task(&K, hi, "running", 10000);
        assert_non_null(t);
        json_decref(t);
        for (int i = 0; i < 6; i++) {
                snprintf(path, sizeof(path), "/v1/tasks/%llu", ids[i]);
                t = kd_call(&K, "GET", path, NULL, NULL, &s, NULL);
                if (json_integer_value(json_object_get(t, "preemptions")) == 1) {
                        preempted = i;
                        assert_string_equal(json_string_value(json_object_get(t, "state")),
                                            "pending");
                        assert_string_equal(json_string_value(json_object_get(
                                                json_object_get(t, "reason"), "code")),
                                            "preempted");
                }
                json_decref(t);
        }
        assert_true(preempted >= 0);
        /* everything cancelled: all units come back */
        for (int i = 0; i < 6; i++) {
                snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", ids[i]);
                json_decref(kd_call(&K, "POST", path, "{\"grace_s\":0}", NULL, &s, NULL));
        }
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", hi);
        json_decref(kd_call(&K, "POST", path, "{\"grace_s\":0}", NULL, &s, NULL));
        for (int i = 0; i < 6; i++) {
                t = kd_wait_task(&K, ids[i], "cancelled", 10000);
                assert_non_null(t);
                json_decref(t);
                assert_reclaimed(ids[i]);
        }
        t = kd_wait_task(&K, hi, "cancelled", 10000);
        assert_non_null(t);
        json_decref(t);
}

/* gpu_uuid: a launcher (Slurm) names the one GPU; kerfd places the task there or keeps it
 * waiting for it, never elsewhere; bad names and multi-GPU tasks are refused */
static void test_gpu_pin(void **st)
{
        (void)st;
        char body[512], path[64];
        long s;
        json_t *g = kd_call(&K, "GET", "/v1/gpus", NULL, NULL, &s, NULL);
        json_t *items = json_object_get(g, "items"), *gi;
        const char *uuid = NULL;
        long long want = -1;
        size_t i;
        json_array_foreach(items, i, gi)
        {
                /* a GPU not in MIG mode, not the first one (the default placement's choice) */
                if (json_integer_value(json_object_get(gi, "index")) > 0 &&
                    strcmp(json_string_value(json_object_get(gi, "mode")), "mig") != 0) {
                        uuid = json_string_value(json_object_get(gi, "uuid"));
                        want = json_integer_value(json_object_get(gi, "index"));
                }
        }
        assert_non_null(uuid);
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"bob\",\"route\":\"slice\",\"memory\":\"4GiB\","
                 "\"gpu_uuid\":\"%s\",\"command\":[\"/bin/sleep\",\"30\"]}",
                 uuid);
        unsigned long long a = kd_submit(&K, body, NULL);
        json_t *t = kd_wait_task(&K, a, "running", 10000);
        assert_non_null(t);
        json_t *u0 = json_array_get(json_object_get(t, "units"), 0);
        assert_int_equal(json_integer_value(json_object_get(u0, "gpu")), want);
        assert_string_equal(json_string_value(json_object_get(u0, "gpu_uuid")), uuid);
        json_decref(t);
        /* a whole GPU on that (shared) GPU waits for it, though other GPUs are free */
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"bob\",\"route\":\"whole\",\"gpu_uuid\":\"%s\","
                 "\"command\":[\"/bin/sleep\",\"30\"]}",
                 uuid);
        unsigned long long b = kd_submit(&K, body, NULL);
        kd_sleep_ms(300);
        snprintf(path, sizeof(path), "/v1/tasks/%llu", b);
        t = kd_call(&K, "GET", path, NULL, NULL, &s, NULL);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "pending");
        json_decref(t);
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", a);
        json_decref(kd_call(&K, "POST", path, "{\"grace_s\":1}", NULL, &s, NULL));
        t = kd_wait_task(&K, b, "running", 10000); /* then it runs there */
        assert_non_null(t);
        u0 = json_array_get(json_object_get(t, "units"), 0);
        assert_int_equal(json_integer_value(json_object_get(u0, "gpu")), want);
        json_decref(t);
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", b);
        json_decref(kd_call(&K, "POST", path, "{\"grace_s\":1}", NULL, &s, NULL));
        json_decref(kd_wait_task(&K, b, "cancelled", 10000));
        /* refused: an unknown UUID; a named GPU with gpus 2 */
        json_decref(
            kd_call(&K, "POST", "/v1/tasks",
                    "{\"tenant\":\"bob\",\"gpu_uuid\":\"GPU-nope\",\"command\":[\"/bin/true\"]}",
                    NULL, &s, NULL));
        assert_int_equal(s, 400);
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"bob\",\"route\":\"whole\",\"gpus\":2,\"gpu_uuid\":\"%s\","
                 "\"command\":[\"/bin/true\"]}",
                 uuid);
        json_decref(kd_call(&K, "POST", "/v1/tasks", body, NULL, &s, NULL));
        assert_int_equal(s, 400);

        /* gpu_uuids: a step on two whole GPUs Slurm chose runs on exactly those two */
        const char *two[2] = {NULL, NULL};
        long long idx[2] = {-1, -1};
        json_array_foreach(items, i, gi)
        {
                if (json_integer_value(json_object_get(gi, "index")) > 0 &&
                    strcmp(json_string_value(json_object_get(gi, "mode")), "mig") != 0) {
                        two[0] = two[1];
                        idx[0] = idx[1];
                        two[1] = json_string_value(json_object_get(gi, "uuid"));
                        idx[1] = json_integer_value(json_object_get(gi, "index"));
                }
        }
        assert_non_null(two[0]);
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"bob\",\"route\":\"whole\",\"gpus\":2,\"gpu_uuids\":[\"%s\","
                 "\"%s\"],\"command\":[\"/bin/sleep\",\"30\"]}",
                 two[1], two[0]);
        unsigned long long c = kd_submit(&K, body, NULL);
        t = kd_wait_task(&K, c, "running", 10000);
        assert_non_null(t);
        json_t *units = json_object_get(t, "units");
        assert_int_equal(json_array_size(units), 2);
        long long got0 = json_integer_value(json_object_get(json_array_get(units, 0), "gpu"));
        long long got1 = json_integer_value(json_object_get(json_array_get(units, 1), "gpu"));
        assert_true((got0 == idx[0] && got1 == idx[1]) || (got0 == idx[1] && got1 == idx[0]));
        json_decref(t);
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", c);
        json_decref(kd_call(&K, "POST", path, "{\"grace_s\":1}", NULL, &s, NULL));
        json_decref(kd_wait_task(&K, c, "cancelled", 10000));
        /* refused: a UUID twice; both fields; fewer UUIDs than GPUs; not a list */
        static const char *const bad[] = {
            "\"gpus\":2,\"gpu_uuids\":[\"%s\",\"%s\"]",
            "\"gpu_uuid\":\"%s\",\"gpu_uuids\":[\"%s\"]",
            "\"gpus\":3,\"gpu_uuids\":[\"%s\",\"%s\"]",
            "\"gpu_uuids\":\"%s%s\"",
        };
        for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
                char fields[300];
                snprintf(fields, sizeof(fields), bad[k], two[0], k == 2 ? two[1] : two[0]);
                snprintf(body, sizeof(body),
                         "{\"tenant\":\"bob\",\"route\":\"whole\",%s,\"command\":[\"/bin/true\"]}",
                         fields);
                json_t *e = kd_call(&K, "POST", "/v1/tasks", body, NULL, &s, NULL);
                if (s != 400)
                        fail_msg("%s: %ld, want 400", body, s);
                json_decref(e);
        }
        json_decref(g);
}

static void test_metrics_promtool(void **st)
{
        unsigned long long id =
            kd_submit(&K, "{\"tenant\":\"alice\",\"command\":[\"/bin/sleep\",\"5\"]}", NULL);
        char *raw = NULL, path[320], cmd[700];
        long s;
        FILE *f;
        json_t *t = kd_wait_task(&K, id, "running", 10000);
        assert_non_null(t);
        json_decref(t);
        json_decref(kd_call(&K, "GET", "/metrics", NULL, NULL, &s, &raw));
        assert_int_equal(s, 200);
        assert_non_null(strstr(raw, "kerf_gpu_memory_total_bytes{gpu=\"0\""));
        assert_null(strstr(raw, "DCGM_FI_")); /* never dcgm-exporter's names (docs/METRICS.md) */
        assert_non_null(strstr(raw, "kerf_task_memory_granted_bytes{task="));
        snprintf(path, sizeof(path), "%s/metrics.txt", K.dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(raw, f);
        fclose(f);
        free(raw);
        if (system("command -v promtool >/dev/null 2>&1") != 0) {
                fprintf(stderr, "promtool not installed: format check skipped\n");
        } else {
                /* Format errors fail; the only lint note allowed is on DCGM's join labels
                 * (UUID, Hostname, GPU_I_*), spelt as dcgm-exporter writes them. */
                snprintf(cmd, sizeof(cmd),
                         "out=$(promtool check metrics < '%s' 2>&1); echo \"$out\" | grep -v "
                         "\"^kerf_[a-z_]* label names should be written in 'snake_case'\" "
                         "| grep -q . && { echo \"$out\"; exit 1; }; exit 0",
                         path);
                assert_int_equal(system(cmd), 0);
        }
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", id);
        json_decref(kd_call(&K, "POST", path, "{\"grace_s\":0}", NULL, &s, NULL));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_exit_reclaimed),
            cmocka_unit_test(test_failure),
            cmocka_unit_test(test_cancel),
            cmocka_unit_test(test_timeout_and_idle),
            cmocka_unit_test(test_timeouts_one_pass),
            cmocka_unit_test(test_preemption),
            cmocka_unit_test(test_metrics_promtool),
            cmocka_unit_test(test_gpu_pin),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
