/* SPDX-License-Identifier: Apache-2.0 */
/* test_slices.c - software slices: the shared region made at start and removed on
 * reclamation, usage counters in /metrics, idle timeout from the region's activity stamp;
 * attached tasks under a lease that expires */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static kd K;

static int setup(void **st)
{
        (void)st;
        kd_limits = "  min_lease_s: 1\n"; /* a second `limits:` block is a duplicate key */
        kd_setup(&K, NULL);
        return 0;
}

static int teardown(void **st)
{
        (void)st;
        kd_stop(&K);
        kd_cleanup(&K);
        return 0;
}

static void test_slice_region(void **st)
{
        char body[512], region[512], needle[96], *raw = NULL;
        unsigned long long id;
        struct stat sb;
        json_t *t;
        long s;
        bool seen = false;
        (void)st;

        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"workload\":\"dev\",\"route\":\"slice\","
                 "\"memory\":\"4GiB\",\"idle_timeout_s\":2,\"command\":[\"%s\",\"3\",\"60\"]}",
                 SLICE_TASK_BIN);
        id = kd_submit(&K, body, NULL);
        json_decref(kd_wait_task(&K, id, "running", 15000));
        snprintf(region, sizeof(region), "%s/state/slices/task-%llu.slice", K.dir, id);
        assert_int_equal(stat(region, &sb), 0);
        assert_int_equal(sb.st_mode & 0777, 0660);
        snprintf(needle, sizeof(needle), "kerf_task_memory_used_bytes{task=\"%llu\"", id);
        for (int i = 0; i < 100 && !seen; i++) {
                json_decref(kd_call(&K, "GET", "/metrics", NULL, NULL, &s, &raw));
                char *p = strstr(raw, needle);
                seen = p && strstr(p, "} 123456789.000\n") == strchr(p, '}');
                if (seen) {
                        snprintf(needle, sizeof(needle),
                                 "kerf_task_throttled_seconds_total{task=\"%llu\"", id);
                        p = strstr(raw, needle);
                        assert_non_null(p);
                        assert_true(strstr(p, "} 1.500\n") == strchr(p, '}'));
                        snprintf(needle, sizeof(needle),
                                 "kerf_task_compute_used_seconds_total{task=\"%llu\"", id);
                        assert_non_null(strstr(raw, needle));
                }
                free(raw);
                raw = NULL;
                if (!seen)
                        kd_sleep_ms(50);
        }
        assert_true(seen);
        /* active for 3 s, then idle: the 2 s idle timeout counts from the last activity */
        t = kd_wait_task(&K, id, NULL, 20000);
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "end_reason")), "idle");
        /* never killed while active, and only after 2 s without activity: the task printed
         * when its activity stopped (a slow start on a loaded machine shifts both ends) */
        {
                char p[128];
                long ls;
                long long idle_from = 0;
                json_t *lg;
                snprintf(p, sizeof(p), "/v1/tasks/%llu/logs?stream=stdout&limit=65536", id);
                lg = kd_call(&K, "GET", p, NULL, NULL, &ls, NULL);
                const char *data = json_string_value(json_object_get(lg, "data"));
                const char *at = data ? strstr(data, "idle-from ") : NULL;
                if (!at)
                        fail_msg("task %llu was stopped before its activity ended (log: %s)", id,
                                 data ? data : "");
                idle_from = atoll(at + 10);
                assert_true(json_integer_value(json_object_get(t, "ended_ms")) >= idle_from + 1500);
                json_decref(lg);
        }
        json_decref(t);
        assert_int_not_equal(stat(region, &sb), 0); /* removed on reclamation */
}

static void test_lease_expiry(void **st)
{
        char body[256];
        unsigned long long id;
        json_t *t;
        long s;
        pid_t p = fork();
        (void)st;

        assert_true(p >= 0);
        if (p == 0) {
                execl("/bin/sleep", "sleep", "30", (char *)NULL);
                _exit(127);
        }
        snprintf(body, sizeof(body), "{\"tenant\":\"alice\",\"pid\":%d,\"lease_s\":2}", (int)p);
        t = kd_call(&K, "POST", "/v1/attach", body, NULL, &s, NULL);
        assert_int_equal(s, 201);
        id = (unsigned long long)json_integer_value(json_object_get(t, "id"));
        json_decref(t);
        json_decref(kd_wait_task(&K, id, "running", 10000));
        snprintf(body, sizeof(body), "/v1/tasks/%llu/lease", id);
        kd_sleep_ms(1000);
        json_decref(kd_call(&K, "POST", body, NULL, NULL, &s, NULL));
        assert_int_equal(s, 200);
        kd_sleep_ms(1000); /* renewed: still running 2 s after the attach */
        t = kd_wait_task(&K, id, "running", 100);
        assert_non_null(t);
        json_decref(t);
        t = kd_wait_task(&K, id, NULL, 10000);
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "end_reason")), "lease_expired");
        json_decref(t);
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_slice_region, setup, teardown),
            cmocka_unit_test_setup_teardown(test_lease_expiry, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
