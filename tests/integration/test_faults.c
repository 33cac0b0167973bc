/* SPDX-License-Identifier: Apache-2.0 */
/* test_faults.c - device faults injected into the simulated fleet (kerf-sim inject, seen by
 * kerfd through the fake libnvidia-ml.so.1): app error, GPU reset, GPU lost; blast radius,
 * out of service until POST /v1/gpus/{index}/recover, metrics and audit */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static kd K;

static int setup(void **st)
{
        (void)st;
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

static int task_gpu(unsigned long long id)
{
        char path[64];
        long s;
        json_t *t, *u;
        int g;
        snprintf(path, sizeof(path), "/v1/tasks/%llu", id);
        t = kd_call(&K, "GET", path, NULL, NULL, &s, NULL);
        u = json_array_get(json_object_get(t, "units"), 0);
        g = u ? (int)json_integer_value(json_object_get(u, "gpu")) : -1;
        json_decref(t);
        return g;
}

static bool gpu_faulted(int g)
{
        long s;
        json_t *j = kd_call(&K, "GET", "/v1/gpus", NULL, NULL, &s, NULL), *it;
        size_t i;
        bool f = false;
        json_array_foreach(json_object_get(j, "items"), i, it)
        {
                if (json_integer_value(json_object_get(it, "index")) == g)
                        f = json_is_true(json_object_get(it, "faulted"));
        }
        json_decref(j);
        return f;
}

static json_t *wait_event(const char *kind, const char *needle)
{
        for (int i = 0; i < 200; i++) {
                json_t *e = kd_event(&K, kind, needle);
                if (e)
                        return e;
                kd_sleep_ms(50);
        }
        return NULL;
}

static void inject(int gpu, int code)
{
        char args[96];
        snprintf(args, sizeof(args), "inject xid --gpu %d --code %d", gpu, code);
        assert_int_equal(kd_sim(&K, args, NULL, 0), 0);
}

/* kerfd in sim mode uses the fake NVML (the health answer names the backend). */
static void test_sim_uses_fake_nvml(void **st)
{
        char *log;
        (void)st;
        log = kd_read(K.log);
        assert_non_null(log);
        assert_non_null(strstr(log, "watching device events"));
        assert_null(strstr(log, "simulated NVML"));
        free(log);
}

/* XID 31 (application error): only the task on that GPU fails; the GPU stays in service. */
static void test_app_xid(void **st)
{
        (void)st;
        unsigned long long a = kd_submit(&K,
                                         "{\"tenant\":\"alice\",\"workload\":\"training\","
                                         "\"command\":[\"/bin/sleep\",\"60\"]}",
                                         NULL),
                           b = kd_submit(&K,
                                         "{\"tenant\":\"bob\",\"workload\":\"training\","
                                         "\"command\":[\"/bin/sleep\",\"60\"]}",
                                         NULL);
        json_t *t, *e;
        long s;
        char *raw = NULL, needle[128];
        int g;

        json_decref(kd_wait_task(&K, a, "running", 10000));
        json_decref(kd_wait_task(&K, b, "running", 10000));
        g = task_gpu(a);
        assert_true(g >= 0 && g != task_gpu(b));
        inject(g, 31);
        t = kd_wait_task(&K, a, "failed", 15000);
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "end_reason")), "fault");
        json_decref(t);
        t = kd_wait_task(&K, b, "running", 1000);
        assert_non_null(t); /* the neighbour is untouched */
        json_decref(t);
        assert_false(gpu_faulted(g));
        e = wait_event("xid", "XID 31");
        assert_non_null(e);
        assert_string_equal(json_string_value(json_object_get(e, "class")), "app_error");
        assert_non_null(strstr(json_string_value(json_object_get(e, "text")), "tenants [alice]"));
        json_decref(e);
        json_decref(kd_call(&K, "GET", "/metrics", NULL, NULL, &s, &raw));
        snprintf(needle, sizeof(needle), "kerf_gpu_last_xid{gpu=\"%d\",", g);
        assert_non_null(strstr(raw, needle));
        assert_non_null(strstr(strstr(raw, needle), "} 31\n"));
        assert_non_null(strstr(raw, "kerf_xid_errors_total{class=\"app_error\"} 1\n"));
        free(raw);
        raw = NULL;
        json_decref(kd_call(&K, "GET", "/v1/audit?limit=1000", NULL, NULL, &s, &raw));
        assert_non_null(strstr(raw, "device.xid"));
        free(raw);
}

/* XID 48 (GPU reset): the GPU goes out of service; a preemptible task is requeued elsewhere,
 * a non-preemptible one fails; an operator brings the GPU back. */
static void test_reset_xid(void **st)
{
        (void)st;
        unsigned long long a = kd_submit(&K,
                                         "{\"tenant\":\"alice\",\"workload\":\"training\","
                                         "\"command\":[\"/bin/sleep\",\"60\"]}",
                                         NULL),
                           b = kd_submit(&K,
                                         "{\"tenant\":\"bob\",\"workload\":\"training\","
                                         "\"preemptible\":true,"
                                         "\"command\":[\"/bin/sleep\",\"60\"]}",
                                         NULL);
        json_t *t, *e;
        long s;
        char path[64], *tok, *raw = NULL;
        int ga, gb;

        json_decref(kd_wait_task(&K, a, "running", 10000));
        json_decref(kd_wait_task(&K, b, "running", 10000));
        ga = task_gpu(a);
        gb = task_gpu(b);
        inject(ga, 48);
        t = kd_wait_task(&K, a, "failed", 15000);
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "end_reason")), "fault");
        json_decref(t);
        assert_true(gpu_faulted(ga));
        e = wait_event("xid", "XID 48");
        assert_non_null(e);
        assert_string_equal(json_string_value(json_object_get(e, "class")), "reset_gpu");
        assert_non_null(strstr(json_string_value(json_object_get(e, "text")), "scope gpu"));
        json_decref(e);
        inject(gb, 48);
        for (int i = 0; i < 300; i++) {
                t = kd_wait_task(&K, b, "running", 100);
                if (t && json_integer_value(json_object_get(t, "restarts")) >= 1)
                        break;
                json_decref(t);
                t = NULL;
                kd_sleep_ms(50);
        }
        assert_non_null(t); /* requeued and started again on another GPU */
        json_decref(t);
        assert_true(task_gpu(b) != gb && task_gpu(b) != ga);
        assert_true(gpu_faulted(gb));
        /* recovery is admin only */
        tok = kd_token(&K, "alice");
        snprintf(path, sizeof(path), "/v1/gpus/%d/recover", ga);
        json_decref(kd_call(&K, "POST", path, NULL, tok, &s, NULL));
        assert_int_equal(s, 403);
        json_decref(kd_call(&K, "POST", path, NULL, NULL, &s, NULL));
        assert_int_equal(s, 200);
        assert_false(gpu_faulted(ga));
        json_decref(kd_call(&K, "POST", path, NULL, NULL, &s, NULL));
        assert_int_equal(s, 409); /* already in service */
        json_decref(kd_call(&K, "GET", "/v1/audit?limit=1000", NULL, NULL, &s, &raw));
        assert_non_null(strstr(raw, "device.fault"));
        assert_non_null(strstr(raw, "gpu.recover"));
        free(raw);
        free(tok);
        /* gb stays out across a restart */
        kd_stop(&K);
        kd_start(&K);
        assert_true(gpu_faulted(gb));
        assert_false(gpu_faulted(ga));
}

/* A lost GPU (node-level): every GPU out; recover refused while the device is still lost. */
static void test_gpu_lost(void **st)
{
        char args[64], path[64];
        long s;
        json_t *e;
        (void)st;
        assert_int_equal(kd_sim(&K, "inject lost --gpu 3", NULL, 0), 0);
        e = wait_event("gpu_lost", NULL);
        assert_non_null(e);
        assert_non_null(strstr(json_string_value(json_object_get(e, "text")), "scope node"));
        json_decref(e);
        for (int g = 0; g < 8; g++)
                assert_true(gpu_faulted(g));
        snprintf(path, sizeof(path), "/v1/gpus/3/recover");
        json_decref(kd_call(&K, "POST", path, NULL, NULL, &s, NULL));
        assert_int_equal(s, 409);
        snprintf(args, sizeof(args), "inject reset --gpu 3 --force");
        assert_int_equal(kd_sim(&K, args, NULL, 0), 0);
        json_decref(kd_call(&K, "POST", path, NULL, NULL, &s, NULL));
        assert_int_equal(s, 200);
        assert_false(gpu_faulted(3));
        assert_true(gpu_faulted(4));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_sim_uses_fake_nvml, setup, teardown),
            cmocka_unit_test_setup_teardown(test_app_xid, setup, teardown),
            cmocka_unit_test_setup_teardown(test_reset_xid, setup, teardown),
            cmocka_unit_test_setup_teardown(test_gpu_lost, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
