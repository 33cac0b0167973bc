/* SPDX-License-Identifier: Apache-2.0 */
/* test_validate.c - input validation sweep: every bad path id, query parameter and body field
 * answers a 4xx whose message names what was wrong, and nothing changes (tasks, audit) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static kd K;
static char *tok;

static size_t count(const char *path)
{
        long s;
        json_t *j = kd_call(&K, "GET", path, NULL, NULL, &s, NULL);
        size_t n;
        assert_int_equal(s, 200);
        n = json_array_size(json_object_get(j, "items"));
        json_decref(j);
        return n;
}

/* One bad request: its status, error code and a piece of its message. */
static void bad(const char *method, const char *path, const char *body, const char *token,
                long want, const char *code, const char *needle)
{
        long s;
        char *raw = NULL;
        json_t *j = kd_call(&K, method, path, body, token, &s, &raw);
        const char *msg = json_string_value(json_object_get(j, "message"));
        if (s != want || !msg || strcmp(json_string_value(json_object_get(j, "error")), code) ||
            !strstr(msg, needle))
                fail_msg("%s %s %s: got %ld %s, want %ld %s with \"%s\"", method, path,
                         body ? body : "", s, raw ? raw : "(no body)", want, code, needle);
        free(raw);
        json_decref(j);
}

static void test_sweep(void **st)
{
        size_t nt, na;
        char big[128], path[256];
        unsigned long long id;
        (void)st;

        id = kd_submit(&K, "{\"tenant\":\"alice\",\"command\":[\"/bin/sleep\",\"30\"]}", NULL);
        /* counted once it runs: its start's records are written after the submit's answer */
        json_decref(kd_wait_task(&K, id, "running", 15000));
        nt = count("/v1/tasks?limit=1000");
        na = count("/v1/audit?limit=1000");

        /* path ids */
        bad("GET", "/v1/tasks/99999999999999999999999", NULL, NULL, 404, "not_found", "task id");
        bad("GET", "/v1/tasks/18446744073709551615", NULL, NULL, 404, "not_found", "task id");
        bad("GET", "/v1/tasks/-1", NULL, NULL, 404, "not_found", "task id");
        bad("POST", "/v1/tasks/0/cancel", NULL, NULL, 404, "not_found", "task id");
        bad("GET", "/v1/units/99999999999999999999", NULL, NULL, 404, "not_found", "unit id");
        bad("POST", "/v1/gpus/99999999999999999999/recover", NULL, NULL, 404, "not_found",
            "no GPU");
        /* the route's method comes first: another method is 405 whatever the id (route.c) */
        bad("GET", "/v1/gpus/99999999999999999999/recover", NULL, NULL, 405, "method_not_allowed",
            "POST");
        memset(big, 'a', 100);
        big[100] = 0;
        snprintf(path, sizeof(path), "/v1/tenants/%s", big);
        bad("GET", path, NULL, NULL, 404, "not_found", "tenant name");
        bad("DELETE", "/v1/tenants/alice/tokens/99999999999999999999999", NULL, NULL, 404,
            "not_found", "token id");

        /* query parameters */
        bad("GET", "/v1/tasks?limit=0", NULL, NULL, 400, "invalid_argument", "limit");
        bad("GET", "/v1/tasks?limit=1001", NULL, NULL, 400, "invalid_argument", "limit");
        bad("GET", "/v1/tasks?limit=-5", NULL, NULL, 400, "invalid_argument", "limit");
        bad("GET", "/v1/tasks?after=99999999999999999999999", NULL, NULL, 400, "invalid_argument",
            "after");
        bad("GET", "/v1/tasks?after=abc", NULL, NULL, 400, "invalid_argument", "after");
        bad("GET", "/v1/tasks?state=done", NULL, NULL, 400, "invalid_argument", "state");
        bad("GET", "/v1/tasks?queue=a%20b", NULL, NULL, 400, "invalid_argument", "queue");
        bad("GET", "/v1/tasks?tenant=..%2F", NULL, NULL, 400, "invalid_argument", "tenant");
        bad("GET", "/v1/gpus?limit=x", NULL, NULL, 400, "invalid_argument", "limit");
        bad("GET", "/v1/queues?after=-1", NULL, NULL, 400, "invalid_argument", "after");
        bad("GET", "/v1/tenants?limit=0", NULL, NULL, 400, "invalid_argument", "limit");
        bad("GET", "/v1/events?limit=2000", NULL, NULL, 400, "invalid_argument", "limit");
        bad("GET", "/v1/audit?tenant=a%20b", NULL, NULL, 400, "invalid_argument", "tenant");
        snprintf(path, sizeof(path), "/v1/tasks/%llu/logs?stream=stdin", id);
        bad("GET", path, NULL, NULL, 400, "invalid_argument", "stream");
        snprintf(path, sizeof(path), "/v1/tasks/%llu/logs?offset=-1", id);
        bad("GET", path, NULL, NULL, 400, "invalid_argument", "offset");
        snprintf(path, sizeof(path), "/v1/tasks/%llu/logs?offset=18446744073709551615", id);
        bad("GET", path, NULL, NULL, 400, "invalid_argument", "offset");
        snprintf(path, sizeof(path), "/v1/tasks/%llu/logs?limit=0", id);
        bad("GET", path, NULL, NULL, 400, "invalid_argument", "limit");

        /* bodies: JSON itself */
        bad("POST", "/v1/tasks", "{\"command\":[\"a\"],\"command\":[\"b\"],\"tenant\":\"alice\"}",
            NULL, 400, "invalid_json", "duplicate");
        bad("POST", "/v1/tasks",
            "{\"tenant\":\"alice\",\"name\":\"a\\u0000b\",\"command\":[\"x\"]}", NULL, 400,
            "invalid_json", "");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"name\":\"\xff\xfe\",\"command\":[\"x\"]}",
            NULL, 400, "invalid_json", "");
        bad("POST", "/v1/tasks", "[1,2]", NULL, 400, "invalid_json", "object");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\"],\"colour\":1}", NULL,
            400, "unknown_field", "colour");
        /* the descriptors suggest the nearest field; one message format per field type */
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\"],\"gpu\":2}", NULL, 400,
            "unknown_field", "gpu: unknown field (did you mean gpus?)");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\"],\"gpus\":17}", NULL,
            400, "invalid_argument", "gpus: an integer 1..16");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\"],\"tier\":\"top\"}",
            NULL, 400, "invalid_argument", "tier: one of high, queueable, exploratory");

        /* bodies: fields */
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\"}", NULL, 400, "invalid_argument",
            "command");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"\"]}", NULL, 400,
            "invalid_argument", "command[0]");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\",7]}", NULL, 400,
            "invalid_argument", "command[1]");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\"],\"cwd\":\"tmp\"}", NULL,
            400, "invalid_argument", "cwd");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\"],\"gpus\":0}", NULL, 400,
            "invalid_argument", "gpus");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\"],\"gpus\":-1}", NULL,
            400, "invalid_argument", "gpus");
        bad("POST", "/v1/tasks",
            "{\"tenant\":\"alice\",\"command\":[\"x\"],\"priority\":99999999999999}", NULL, 400,
            "invalid_argument", "priority");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\"],\"memory\":-1}", NULL,
            400, "invalid_argument", "memory");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\"],\"memory\":\"lots\"}",
            NULL, 400, "invalid_argument", "memory: 'lots' is not a size");
        /* the one size rule (docs/UNITS.md): an integer is bytes, a string needs a unit */
        bad("POST", "/v1/tasks",
            "{\"tenant\":\"alice\",\"command\":[\"x\"],\"memory\":\"17179869184\"}", NULL, 400,
            "invalid_argument", "memory: '17179869184' has no unit: write 17179869184GiB");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\"],\"memory\":\"16GB\"}",
            NULL, 400, "invalid_argument", "memory: '16GB' is ambiguous");
        bad("POST", "/v1/tasks",
            "{\"tenant\":\"alice\",\"command\":[\"x\"],\"memory\":2251799813685248}", NULL, 400,
            "invalid_argument", "memory: at most 1PiB");
        bad("POST", "/v1/tasks",
            "{\"tenant\":\"alice\",\"command\":[\"x\"],\"host_memory\":\"2048PiB\"}", NULL, 400,
            "invalid_argument", "host_memory: at most 1024PiB");
        bad("POST", "/v1/tasks",
            "{\"tenant\":\"alice\",\"command\":[\"x\"],\"cpu_milli\":100000001}", NULL, 400,
            "invalid_argument", "cpu_milli: an integer 0..100000000");
        bad("POST", "/v1/tasks",
            "{\"tenant\":\"alice\",\"command\":[\"x\"],\"max_runtime_s\":31536001}", NULL, 400,
            "invalid_argument", "max_runtime_s: an integer 0..31536000 (seconds, at most 365d)");
        bad("POST", "/v1/tasks",
            "{\"tenant\":\"alice\",\"command\":[\"x\"],\"idle_timeout_s\":31622400}", NULL, 400,
            "invalid_argument", "idle_timeout_s: an integer 0..31536000");
        bad("PUT", "/v1/tenants/alice/quota", "{\"memory\":{\"nominal\":\"48\"}}", NULL, 400,
            "invalid_argument", "quota.memory.nominal");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\"],\"compute\":101}", NULL,
            400, "invalid_argument", "compute");
        bad("POST", "/v1/tasks",
            "{\"tenant\":\"alice\",\"command\":[\"x\"],\"compute\":50,\"compute_limit\":10}", NULL,
            400, "invalid_argument", "compute_limit");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\"],\"max_runtime_s\":-3}",
            NULL, 400, "invalid_argument", "max_runtime_s");
        bad("POST", "/v1/tasks",
            "{\"tenant\":\"alice\",\"command\":[\"x\"],\"env\":{\"A=B\":\"1\"}}", NULL, 400,
            "invalid_argument", "env");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\"],\"env\":{\"A\":1}}",
            NULL, 400, "invalid_argument", "env.A");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\"],\"workload\":\"x\"}",
            NULL, 400, "invalid_argument", "workload");
        bad("POST", "/v1/tasks", "{\"tenant\":\"no/such\",\"command\":[\"x\"]}", NULL, 400,
            "invalid_argument", "tenant");
        bad("POST", "/v1/tasks", "{\"tenant\":\"carol\",\"command\":[\"x\"]}", NULL, 404,
            "not_found", "tenant");
        bad("POST", "/v1/tasks", "{\"tenant\":\"bob\",\"command\":[\"x\"]}", tok, 403, "forbidden",
            "tenant");
        bad("POST", "/v1/tasks", "{\"command\":[\"x\"],\"run_as\":{\"uid\":0}}", tok, 403,
            "forbidden", "run_as");
        bad("POST", "/v1/tasks",
            "{\"tenant\":\"alice\",\"command\":[\"x\"],\"run_as\":{\"uid\":-1}}", NULL, 400,
            "invalid_argument", "run_as");
        bad("POST", "/v1/tasks",
            "{\"tenant\":\"alice\",\"command\":[\"x\"],\"run_as\":{\"uid\":1,\"shell\":1}}", NULL,
            400, "unknown_field", "run_as.shell");
        bad("POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"x\"],\"pid\":1}", NULL, 400,
            "unknown_field", "pid: only accepted by /v1/attach");
        bad("POST", "/v1/attach", "{\"tenant\":\"alice\",\"pid\":2147483000,\"lease_s\":60}", NULL,
            400, "invalid_argument", "pid");
        bad("POST", "/v1/attach", "{\"tenant\":\"alice\",\"pid\":1,\"lease_s\":1}", NULL, 400,
            "invalid_argument", "lease_s");
        bad("POST", "/v1/attach",
            "{\"tenant\":\"alice\",\"pid\":1,\"lease_s\":60,\"command\":[\"x\"]}", NULL, 400,
            "unknown_field", "command");
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", id);
        bad("POST", path, "{\"grace_s\":-1}", NULL, 400, "invalid_argument", "grace_s");
        bad("POST", path, "{\"grace_s\":1,\"now\":true}", NULL, 400, "unknown_field", "now");
        snprintf(path, sizeof(path), "/v1/tasks/%llu/lease", id);
        bad("POST", path, "{\"lease_s\":5}", NULL, 400, "unknown_field", "lease_s");

        /* tenants and quotas */
        bad("POST", "/v1/tenants", "{\"name\":\"a b\"}", NULL, 400, "invalid_argument", "name");
        bad("POST", "/v1/tenants", "{\"name\":\"dave\",\"cohort\":\"x/y\"}", NULL, 400,
            "invalid_argument", "cohort");
        bad("POST", "/v1/tenants", "{\"name\":\"dave\",\"weight\":0}", NULL, 400,
            "invalid_argument", "weight");
        bad("POST", "/v1/tenants", "{\"name\":\"dave\",\"uid\":-4}", NULL, 400, "invalid_argument",
            "uid");
        bad("POST", "/v1/tenants", "{\"name\":\"dave\",\"quota\":{\"gpus\":{\"nominal\":-1}}}",
            NULL, 400, "invalid_argument", "quota.gpus.nominal");
        bad("POST", "/v1/tenants", "{\"name\":\"alice\"}", NULL, 409, "conflict", "alice");
        /* every tenant field through its descriptor (kerf_tenant_fields): one message format,
         * the table's bounds, the nearest known field, the objects that take a field */
        bad("POST", "/v1/tenants", "{\"name\":\"dave\",\"max_priority\":1001}", NULL, 400,
            "invalid_argument", "max_priority: an integer -1000..1000 or null");
        bad("POST", "/v1/tenants", "{\"name\":\"dave\",\"weight\":1001}", NULL, 400,
            "invalid_argument", "weight: an integer 1..1000");
        bad("POST", "/v1/tenants", "{\"name\":\"dave\",\"max_prio\":1}", NULL, 400, "unknown_field",
            "max_prio: unknown field (did you mean max_priority?)");
        bad("POST", "/v1/tenants", "{\"name\":\"dave\",\"uid_base\":70000}", NULL, 400,
            "unknown_field", "uid_base: only accepted by kerfd's config file (tenant_defaults)");
        bad("POST", "/v1/tenants", "{\"name\":\"dave\",\"workloads\":[\"gaming\"]}", NULL, 400,
            "invalid_argument",
            "workloads: a list of at least 1 of training, inference, dev, batch or null");
        bad("PATCH", "/v1/tenants/alice", "{\"name\":\"x\"}", NULL, 400, "unknown_field",
            "name: only accepted by POST /v1/tenants");
        bad("PATCH", "/v1/tenants/alice", "{\"quota\":{}}", NULL, 400, "unknown_field",
            "PUT /v1/tenants/{name}/quota");
        bad("PATCH", "/v1/tenants/alice", "{\"max_tier\":\"urgent\"}", NULL, 400,
            "invalid_argument", "max_tier: one of high, queueable, exploratory or null");
        bad("PATCH", "/v1/tenants/alice", "{\"max_pending\":-1}", NULL, 400, "invalid_argument",
            "max_pending: an integer 0..10000000 or null");
        bad("PATCH", "/v1/tenants/alice", "{\"workloads\":[]}", NULL, 400, "invalid_argument",
            "workloads");
        bad("PUT", "/v1/tenants/alice/quota", "{\"gpus\":{\"nominal\":99999999999}}", NULL, 400,
            "invalid_argument", "quota.gpus.nominal");
        bad("PUT", "/v1/tenants/alice/quota", "{\"compute\":{\"nominal\":\"50%\"}}", NULL, 400,
            "invalid_argument", "quota.compute.nominal");
        bad("PUT", "/v1/tenants/alice/quota", "{\"memory\":{\"nominal\":\"9999EiB\"}}", NULL, 400,
            "invalid_argument", "quota.memory.nominal");
        bad("PUT", "/v1/tenants/alice/quota", "{\"disk\":{\"nominal\":1}}", NULL, 400,
            "unknown_field", "quota.disk");
        bad("PUT", "/v1/tenants/alice/quota", "{\"gpus\":{\"nominal\":1}}", tok, 403, "forbidden",
            "");
        bad("POST", "/v1/tenants/alice/tokens", "{\"ttl\":5}", NULL, 400, "unknown_field", "ttl");

        /* nothing changed */
        assert_int_equal(count("/v1/tasks?limit=1000"), nt);
        assert_int_equal(count("/v1/audit?limit=1000"), na);
        assert_int_equal(count("/v1/tenants"), 2);
}

static void test_sizes(void **st)
{
        size_t nt = count("/v1/tasks?limit=1000"), na = count("/v1/audit?limit=1000");
        size_t len = 70 * 1024, o = 0;
        char *b = malloc(len + 256);
        (void)st;

        /* a body over limits.max_body (64 KiB) */
        o = (size_t)sprintf(b, "{\"tenant\":\"alice\",\"command\":[\"x\"],\"name\":\"");
        memset(b + o, 'n', len);
        o += len;
        strcpy(b + o, "\"}");
        bad("POST", "/v1/tasks", b, NULL, 413, "too_large", "max_body");
        free(b);
        assert_int_equal(count("/v1/tasks?limit=1000"), nt);
        assert_int_equal(count("/v1/audit?limit=1000"), na);
}

static int setup(void **st)
{
        (void)st;
        kd_setup(&K, NULL);
        tok = kd_token(&K, "alice");
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
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_sweep),
                                           cmocka_unit_test(test_sizes)};
        return cmocka_run_group_tests(tests, setup, teardown);
}
