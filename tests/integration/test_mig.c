/* SPDX-License-Identifier: Apache-2.0 */
/* test_mig.c - the MIG path end to end on the simulated fleet: an inference/high task gets a
 * MIG instance created through the fake NVML, sees it in CUDA_VISIBLE_DEVICES; a larger
 * profile makes kerfd destroy the idle instance and create the bigger one */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static kd K;

static json_t *unit_of(unsigned long long id)
{
        char path[64];
        long s;
        json_t *t, *u;
        snprintf(path, sizeof(path), "/v1/tasks/%llu", id);
        t = kd_call(&K, "GET", path, NULL, NULL, &s, NULL);
        u = json_incref(json_array_get(json_object_get(t, "units"), 0));
        json_decref(t);
        return u;
}

static void test_mig_lifecycle(void **st)
{
        (void)st;
        char out[65536], *log, logp[512], mig[96], gi_s[32];
        unsigned long long a, big, big2;
        json_t *u, *units, *it, *e;
        long s;
        size_t i;
        bool listed = false;
        int gpu_a;

        kd_setup(&K, NULL);
        a = kd_submit(&K,
                      "{\"tenant\":\"alice\",\"workload\":\"inference\",\"tier\":\"high\","
                      "\"mig_profile\":\"1g.18gb\",\"command\":[\"/bin/sh\",\"-c\","
                      "\"echo VIS=$CUDA_VISIBLE_DEVICES; sleep 2\"]}",
                      NULL);
        json_decref(kd_wait_task(&K, a, "running", 15000));
        u = unit_of(a);
        assert_non_null(u);
        assert_string_equal(json_string_value(json_object_get(u, "kind")), "mig");
        snprintf(mig, sizeof(mig), "%s", json_string_value(json_object_get(u, "mig_uuid")));
        assert_memory_equal(mig, "MIG-", 4);
        gpu_a = (int)json_integer_value(json_object_get(u, "gpu"));
        snprintf(gi_s, sizeof(gi_s), "\"gi\":%d",
                 (int)json_integer_value(json_object_get(u, "mig_gi")));
        json_decref(u);
        /* /v1/units carries the MIG identity */
        units = kd_call(&K, "GET", "/v1/units", NULL, NULL, &s, NULL);
        json_array_foreach(json_object_get(units, "items"), i, it)
        {
                const char *mu = json_string_value(json_object_get(it, "mig_uuid"));
                if (mu && !strcmp(mu, mig)) {
                        listed = true;
                        assert_true(json_integer_value(json_object_get(it, "mig_gi")) >= 0);
                        assert_true(json_integer_value(json_object_get(it, "mig_ci")) >= 0);
                }
        }
        json_decref(units);
        assert_true(listed);
        /* the device has it */
        assert_int_equal(kd_sim(&K, "describe --json", out, sizeof(out)), 0);
        assert_non_null(strstr(out, mig));
        json_decref(kd_wait_task(&K, a, "succeeded", 15000));
        snprintf(logp, sizeof(logp), "%s/state/logs/%llu.out", K.dir, a);
        log = kd_read(logp);
        assert_non_null(log);
        assert_non_null(strstr(log, "VIS=MIG-"));
        assert_non_null(strstr(log, mig));
        free(log);
        /* fill the other MIG GPU, then a 7g request must reuse GPU gpu_a: destroy + create */
        big = kd_submit(&K,
                        "{\"tenant\":\"bob\",\"workload\":\"inference\",\"tier\":\"high\","
                        "\"mig_profile\":\"7g.141gb\",\"command\":[\"/bin/sleep\",\"30\"]}",
                        NULL);
        json_decref(kd_wait_task(&K, big, "running", 15000));
        u = unit_of(big);
        assert_int_not_equal(json_integer_value(json_object_get(u, "gpu")), gpu_a);
        json_decref(u);
        big2 = kd_submit(&K,
                         "{\"tenant\":\"alice\",\"workload\":\"inference\",\"tier\":\"high\","
                         "\"mig_profile\":\"7g.141gb\",\"command\":[\"/bin/sleep\",\"30\"]}",
                         NULL);
        json_decref(kd_wait_task(&K, big2, "running", 15000));
        u = unit_of(big2);
        assert_non_null(u);
        assert_int_equal(json_integer_value(json_object_get(u, "gpu")), gpu_a);
        assert_string_equal(json_string_value(json_object_get(u, "mig_profile")), "7g.141gb");
        json_decref(u);
        e = kd_event(&K, "mig_destroy", "destroyed");
        assert_non_null(e);
        json_decref(e);
        assert_int_equal(kd_sim(&K, "describe --json", out, sizeof(out)), 0);
        assert_null(strstr(out, mig)); /* the small instance is gone from the device */
        assert_non_null(strstr(out, "7g.141gb"));
        (void)gi_s;
        kd_stop(&K);
        kd_cleanup(&K);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_mig_lifecycle),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
