/* SPDX-License-Identifier: Apache-2.0 */
/* test_policy.c - issue 8 S6 and D2: per-tenant ceilings on priority, tier and workload, and a
 * per-tenant pending limit, so one tenant cannot fill the node; the admin is never locked out */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static kd K;
static char *capped, *plain, *flood, *bob;

static int setup(void **st)
{
        (void)st;
        /* node-wide: 4 unfinished tasks; flood has no quota (its tasks stay pending) */
        kd_limits = "  max_tasks: 4\n";
        kd_setup(&K, "  - name: capped\n    max_priority: 10\n    max_tier: queueable\n"
                     "    workloads: [batch, dev]\n"
                     "  - name: plain\n"
                     "  - name: flood\n    max_pending: 2\n    quota:\n"
                     "      gpus: {nominal: 0, borrow_limit: 0}\n"
                     "      memory: {nominal: 0, borrow_limit: 0}\n"
                     "      compute: {nominal: 0, borrow_limit: 0}\n"
                     "      mig_slices: {nominal: 0, borrow_limit: 0}\n");
        kd_limits = NULL;
        sec_open_dir(&K);
        capped = kd_token(&K, "capped");
        plain = kd_token(&K, "plain");
        flood = kd_token(&K, "flood");
        bob = kd_token(&K, "bob");
        return 0;
}

static int teardown(void **st)
{
        (void)st;
        kd_stop(&K);
        kd_cleanup(&K);
        free(capped);
        free(plain);
        free(flood);
        free(bob);
        return 0;
}

static void refused(const char *body, const char *tok, long want, const char *needle)
{
        char *msg = NULL;
        long s = sec_call(&K, "POST", "/v1/tasks", body, tok, &msg);
        if (s != want || !msg || !strstr(msg, needle))
                fail_msg("%s: %ld \"%s\", want %ld with \"%s\"", body, s, msg ? msg : "", want,
                         needle);
        free(msg);
}

static void test_ceilings(void **st)
{
        long s;
        json_t *j;
        unsigned long long ok[2];
        (void)st;
        refused("{\"priority\":11,\"command\":[\"/bin/true\"]}", capped, 403, "max_priority 10");
        refused("{\"tier\":\"high\",\"command\":[\"/bin/true\"]}", capped, 403,
                "max_tier queueable");
        refused("{\"workload\":\"training\",\"command\":[\"/bin/true\"]}", capped, 403,
                "allowed workloads");
        /* a tenant that says nothing gets tenant_defaults: priority 0, tier queueable */
        refused("{\"priority\":1,\"command\":[\"/bin/true\"]}", plain, 403,
                "max_priority 0 (tenant_defaults.max_priority)");
        refused("{\"priority\":1000,\"tier\":\"high\",\"command\":[\"/bin/true\"]}", plain, 403,
                "max_priority");
        /* within the ceilings */
        ok[0] = kd_submit(&K, "{\"priority\":10,\"workload\":\"dev\",\"command\":[\"/bin/true\"]}",
                          capped);
        /* the admin raises the ceiling through the API; the answer shows it */
        j = kd_call(&K, "PATCH", "/v1/tenants/capped",
                    "{\"max_priority\":50,\"max_tier\":\"high\"}", NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_int_equal(json_integer_value(json_object_get(j, "max_priority")), 50);
        assert_string_equal(json_string_value(json_object_get(j, "max_tier")), "high");
        json_decref(j);
        ok[1] = kd_submit(&K, "{\"priority\":50,\"tier\":\"high\",\"command\":[\"/bin/true\"]}",
                          capped);
        /* a tenant may not change its own ceilings */
        json_decref(kd_call(&K, "PATCH", "/v1/tenants/capped", "{\"max_priority\":1000}", capped,
                            &s, NULL));
        assert_int_equal(s, 403);
        /* null puts a ceiling back to tenant_defaults and the workloads to all; a value
         * outside a descriptor's bounds is refused naming them, and changes nothing */
        j = kd_call(&K, "PATCH", "/v1/tenants/capped", "{\"max_priority\":2000}", NULL, &s, NULL);
        assert_int_equal(s, 400);
        json_decref(j);
        j = kd_call(&K, "PATCH", "/v1/tenants/capped", "{\"max_priority\":null,\"workloads\":null}",
                    NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_int_equal(json_integer_value(json_object_get(j, "max_priority")), 0);
        assert_true(json_is_null(json_object_get(j, "workloads")));
        assert_string_equal(json_string_value(json_object_get(j, "max_tier")), "high");
        json_decref(j);
        /* created through the API with ceilings */
        j = kd_call(&K, "POST", "/v1/tenants",
                    "{\"name\":\"newbie\",\"max_priority\":-5,\"max_tier\":\"exploratory\","
                    "\"max_pending\":7,\"workloads\":[\"inference\"]}",
                    NULL, &s, NULL);
        assert_int_equal(s, 201);
        assert_int_equal(json_integer_value(json_object_get(j, "max_priority")), -5);
        assert_int_equal(json_integer_value(json_object_get(j, "max_pending")), 7);
        assert_string_equal(json_string_value(json_object_get(j, "max_tier")), "exploratory");
        json_decref(j);
        /* the ceilings survive a restart (stored with the tenant) */
        kd_stop(&K);
        kd_start(&K);
        sec_open_dir(&K);
        j = kd_call(&K, "GET", "/v1/tenants/newbie", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_int_equal(json_integer_value(json_object_get(j, "max_priority")), -5);
        assert_string_equal(json_string_value(json_array_get(json_object_get(j, "workloads"), 0)),
                            "inference");
        json_decref(j);
        /* the two tasks submitted above end (a submit is answered pending, and the restart
         * may come before their start): test_pending_limit counts from an empty node */
        for (int i = 0; i < 2; i++) {
                j = kd_wait_task(&K, ok[i], NULL, 15000);
                assert_non_null(j);
                json_decref(j);
        }
}

static void test_pending_limit(void **st)
{
        const char *hold = "{\"command\":[\"/bin/sleep\",\"60\"]}";
        char *msg = NULL;
        json_t *j;
        long s;
        (void)st;
        kd_submit(&K, hold, flood);
        kd_submit(&K, hold, flood);
        j = kd_call(&K, "GET", "/v1/tenants/flood", NULL, NULL, &s, NULL);
        assert_int_equal(json_integer_value(json_object_get(j, "pending")), 2);
        json_decref(j);
        refused(hold, flood, 429, "max_pending 2");
        /* another tenant still submits, up to the node-wide limit */
        kd_submit(&K, hold, bob);
        kd_submit(&K, hold, bob);
        refused(hold, bob, 429, "limits.max_tasks");
        /* the admin is never locked out by the node-wide limit */
        s = sec_call(&K, "POST", "/v1/tasks",
                     "{\"tenant\":\"alice\",\"command\":[\"/bin/sleep\",\"60\"]}", NULL, &msg);
        if (s != 201)
                fail_msg("admin submit at the node-wide limit: %ld %s", s, msg ? msg : "");
        free(msg);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_ceilings),
            cmocka_unit_test(test_pending_limit),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
