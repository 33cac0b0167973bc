/* SPDX-License-Identifier: Apache-2.0 */
/* test_auth.c - two tenants with tokens: every endpoint refuses cross-tenant access; malformed
 * JSON, oversized bodies, unknown fields and bad tokens give 4xx and change nothing; audit */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static kd K;
static char *alice, *bob;

static int setup(void **st)
{
        kd_setup(&K, NULL);
        alice = kd_token(&K, "alice");
        bob = kd_token(&K, "bob");
        return 0;
}

static int teardown(void **st)
{
        kd_stop(&K);
        kd_cleanup(&K);
        free(alice);
        free(bob);
        return 0;
}

static long code(const char *m, const char *path, const char *body, const char *tok,
                 const char *want_error)
{
        long s;
        json_t *j = kd_call(&K, m, path, body, tok, &s, NULL);
        if (want_error) {
                const char *e = json_string_value(json_object_get(j, "error"));
                if (!e || strcmp(e, want_error) != 0)
                        fail_msg("%s %s: error %s, want %s", m, path, e ? e : "(none)", want_error);
                assert_non_null(json_string_value(json_object_get(j, "message")));
        }
        json_decref(j);
        return s;
}

static void test_cross_tenant(void **st)
{
        unsigned long long id =
            kd_submit(&K, "{\"command\":[\"/bin/sleep\",\"30\"],\"name\":\"secret\"}", alice);
        char p[128], *raw = NULL;
        long s;
        json_t *j, *it;
        size_t i;

        json_decref(kd_wait_task(&K, id, "running", 10000));
        snprintf(p, sizeof(p), "/v1/tasks/%llu", id);
        assert_int_equal(code("GET", p, NULL, alice, NULL), 200);
        assert_int_equal(code("GET", p, NULL, bob, "not_found"), 404);
        snprintf(p, sizeof(p), "/v1/tasks/%llu/logs", id);
        assert_int_equal(code("GET", p, NULL, bob, "not_found"), 404);
        snprintf(p, sizeof(p), "/v1/tasks/%llu/explain", id);
        assert_int_equal(code("GET", p, NULL, bob, "not_found"), 404);
        assert_int_equal(code("GET", p, NULL, alice, NULL), 200);
        snprintf(p, sizeof(p), "/v1/tasks/%llu/lease", id);
        assert_int_equal(code("POST", p, NULL, bob, "not_found"), 404);
        snprintf(p, sizeof(p), "/v1/tasks/%llu/cancel", id);
        assert_int_equal(code("POST", p, NULL, bob, "not_found"), 404);
        /* bob cannot submit for alice */
        assert_int_equal(code("POST", "/v1/tasks",
                              "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"]}", bob,
                              "forbidden"),
                         403);
        /* lists: bob sees none of alice's */
        j = kd_call(&K, "GET", "/v1/tasks", NULL, bob, &s, NULL);
        assert_int_equal(s, 200);
        assert_int_equal(json_array_size(json_object_get(j, "items")), 0);
        json_decref(j);
        assert_int_equal(code("GET", "/v1/tasks?tenant=alice", NULL, bob, "forbidden"), 403);
        j = kd_call(&K, "GET", "/v1/units", NULL, bob, &s, NULL);
        assert_int_equal(json_array_size(json_object_get(j, "items")), 0);
        json_decref(j);
        j = kd_call(&K, "GET", "/v1/units", NULL, alice, &s, NULL);
        assert_int_equal(json_array_size(json_object_get(j, "items")), 1);
        it = json_array_get(json_object_get(j, "items"), 0);
        snprintf(p, sizeof(p), "/v1/units/%lld", json_integer_value(json_object_get(it, "id")));
        json_decref(j);
        assert_int_equal(code("GET", p, NULL, bob, "not_found"), 404);
        assert_int_equal(code("GET", p, NULL, alice, NULL), 200);
        j = kd_call(&K, "GET", "/v1/queues", NULL, bob, &s, NULL);
        assert_int_equal(json_array_size(json_object_get(j, "items")), 0);
        json_decref(j);
        j = kd_call(&K, "GET", "/v1/events", NULL, bob, &s, NULL);
        json_array_foreach(json_object_get(j, "items"), i, it)
        {
                assert_true((unsigned long long)json_integer_value(json_object_get(it, "task")) !=
                            id);
        }
        json_decref(j);
        j = kd_call(&K, "GET", "/v1/audit", NULL, bob, &s, NULL);
        assert_int_equal(s, 200);
        json_array_foreach(json_object_get(j, "items"), i, it)
        {
                assert_string_equal(json_string_value(json_object_get(it, "tenant")), "bob");
        }
        json_decref(j);
        json_decref(kd_call(&K, "GET", "/v1/audit/export", NULL, bob, &s, &raw));
        assert_int_equal(s, 200);
        assert_null(strstr(raw, "\"alice\""));
        free(raw);
        json_decref(kd_call(&K, "GET", "/metrics", NULL, bob, &s, &raw));
        assert_int_equal(s, 200);
        assert_null(strstr(raw, "alice"));
        free(raw);
        json_decref(kd_call(&K, "GET", "/metrics", NULL, alice, &s, &raw));
        assert_non_null(strstr(raw, "tenant=\"alice\""));
        assert_null(strstr(raw, "kerf_gpu_memory_used_bytes"));
        free(raw);
        /* tenants: bob sees only itself; admin operations refused */
        j = kd_call(&K, "GET", "/v1/tenants", NULL, bob, &s, NULL);
        assert_int_equal(json_array_size(json_object_get(j, "items")), 1);
        json_decref(j);
        assert_int_equal(code("GET", "/v1/tenants/alice", NULL, bob, "not_found"), 404);
        assert_int_equal(code("POST", "/v1/tenants", "{\"name\":\"eve\"}", bob, "forbidden"), 403);
        assert_int_equal(
            code("PUT", "/v1/tenants/bob/quota", "{\"gpus\":{\"nominal\":8}}", bob, "forbidden"),
            403);
        assert_int_equal(code("POST", "/v1/tenants/bob/tokens", NULL, bob, "forbidden"), 403);
        assert_int_equal(code("POST", "/v1/audit/verify", NULL, bob, "forbidden"), 403);
        /* alice cancels her own */
        snprintf(p, sizeof(p), "/v1/tasks/%llu/cancel", id);
        assert_int_equal(code("POST", p, "{\"grace_s\":0}", alice, NULL), 200);
        json_decref(kd_wait_task(&K, id, "cancelled", 10000));
}

static unsigned long long n_tasks(void)
{
        long s;
        json_t *j = kd_call(&K, "GET", "/v1/tasks?limit=1000", NULL, NULL, &s, NULL);
        unsigned long long n = json_array_size(json_object_get(j, "items"));
        json_decref(j);
        return n;
}

static void test_bad_requests(void **st)
{
        unsigned long long before = n_tasks();
        char *big = malloc(70 * 1024 + 64);
        long s;

        assert_int_equal(code("GET", "/v1/tasks", NULL, "kerf_nottherealtoken", "unauthorized"),
                         401);
        assert_int_equal(code("POST", "/v1/tasks", "{\"command\":[\"/bin/true\"]}",
                              "kerf_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "unauthorized"),
                         401);
        assert_int_equal(code("POST", "/v1/tasks", "{\"command\": [", alice, "invalid_json"), 400);
        assert_int_equal(code("POST", "/v1/tasks", "[1,2]", alice, "invalid_json"), 400);
        assert_int_equal(code("POST", "/v1/tasks", "{\"command\":[\"/bin/true\"],\"colour\":1}",
                              alice, "unknown_field"),
                         400);
        assert_int_equal(
            code("POST", "/v1/tasks", "{\"command\":\"/bin/true\"}", alice, "invalid_argument"),
            400);
        assert_int_equal(code("POST", "/v1/tasks",
                              "{\"command\":[\"/bin/true\"],\"priority\":5000}", alice,
                              "invalid_argument"),
                         400);
        assert_int_equal(code("POST", "/v1/tasks",
                              "{\"command\":[\"/bin/true\"],\"memory\":\"500GiB\"}", alice,
                              "never_fits"),
                         422);
        strcpy(big, "{\"command\":[\"/bin/true\"],\"name\":\"");
        memset(big + strlen(big), 'x', 70 * 1024);
        strcpy(big + strlen(big), "\"}");
        json_decref(kd_call(&K, "POST", "/v1/tasks", big, alice, &s, NULL));
        assert_int_equal(s, 413);
        free(big);
        assert_int_equal(code("DELETE", "/v1/tasks", NULL, alice, "method_not_allowed"), 405);
        assert_int_equal(code("GET", "/v1/nothing", NULL, alice, "not_found"), 404);
        assert_int_equal(n_tasks(), before);
}

static void test_audit_verify(void **st)
{
        long s;
        json_t *j = kd_call(&K, "POST", "/v1/audit/verify", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_true(json_is_true(json_object_get(j, "ok")));
        assert_true(json_integer_value(json_object_get(j, "records")) > 3);
        json_decref(j);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cross_tenant),
            cmocka_unit_test(test_bad_requests),
            cmocka_unit_test(test_audit_verify),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
