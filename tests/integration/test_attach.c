/* SPDX-License-Identifier: Apache-2.0 */
/* test_attach.c - attached tasks (POST /v1/attach): a live child of the test gets a unit, the
 * contract variables its launcher exports (CUDA_VISIBLE_DEVICES, the slice region), a lease
 * that renews, and is reclaimed on expiry and on cancel without being signalled */
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

static pid_t child(void)
{
        pid_t p = fork();
        assert_true(p >= 0);
        if (p == 0) {
                for (int i = 0; i < 600; i++) /* bounded: 60 s at most */
                        usleep(100000);
                _exit(0);
        }
        return p;
}

static void reap(pid_t p)
{
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
}

static const char *env_of(json_t *t, const char *name)
{
        return json_string_value(json_object_get(json_object_get(t, "attach_env"), name));
}

static bool unit_held(kd *k, unsigned long long id)
{
        long s;
        bool held = false;
        json_t *j = kd_call(k, "GET", "/v1/units", NULL, NULL, &s, NULL);
        json_t *items = json_object_get(j, "items");
        assert_int_equal(s, 200);
        for (size_t i = 0; i < json_array_size(items); i++)
                held |= json_integer_value(json_object_get(json_array_get(items, i), "task")) ==
                        (json_int_t)id;
        json_decref(j);
        return held;
}

static void test_attach_slice_lease(void **st)
{
        char body[256], path[96], idbuf[32], region[4096];
        json_t *t, *u;
        long s;
        struct stat sb;
        unsigned long long id;
        json_int_t exp0, exp1;
        pid_t c = child();
        kd k;
        (void)st;

        kd_limits = "  min_lease_s: 1\n";
        kd_setup(&k, NULL);
        kd_limits = NULL;
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"route\":\"slice\",\"memory\":\"4GiB\",\"compute\":20,"
                 "\"pid\":%d,\"lease_s\":2}",
                 (int)c);
        t = kd_call(&k, "POST", "/v1/attach", body, NULL, &s, NULL);
        assert_int_equal(s, 201);
        id = (unsigned long long)json_integer_value(json_object_get(t, "id"));
        assert_string_equal(json_string_value(json_object_get(t, "state")), "running");
        u = json_array_get(json_object_get(t, "units"), 0);
        assert_non_null(u);
        assert_string_equal(json_string_value(json_object_get(u, "kind")), "slice");
        assert_string_equal(env_of(t, "CUDA_VISIBLE_DEVICES"),
                            json_string_value(json_object_get(u, "gpu_uuid")));
        snprintf(idbuf, sizeof(idbuf), "%llu", id);
        assert_string_equal(env_of(t, "KERF_TASK_ID"), idbuf);
        assert_string_equal(env_of(t, "KERF_UNIT_KIND"), "slice");
        assert_string_equal(env_of(t, "KERF_SOCKET"), k.sock);
        assert_non_null(env_of(t, "KERF_SLICE_REGION"));
        assert_string_equal(env_of(t, "KERF_SLICE_REGION"),
                            json_string_value(json_object_get(t, "slice_region")));
        assert_string_equal(env_of(t, "KERF_SLICE_MEMORY_LIMIT"), "4294967296");
        snprintf(region, sizeof(region), "%s", env_of(t, "KERF_SLICE_REGION"));
        assert_int_equal(stat(region, &sb), 0);
        assert_int_equal(sb.st_mode & 07, 0); /* never world-accessible */
        exp0 = json_integer_value(json_object_get(t, "lease_expiry_ms"));
        json_decref(t);

        /* renewed every 400 ms for 3 s: it outlives its 2 s lease */
        snprintf(path, sizeof(path), "/v1/tasks/%llu/lease", id);
        for (int i = 0; i < 8; i++) {
                kd_sleep_ms(400);
                t = kd_call(&k, "POST", path, NULL, NULL, &s, NULL);
                assert_int_equal(s, 200);
                assert_string_equal(json_string_value(json_object_get(t, "state")), "running");
                json_decref(t);
        }
        snprintf(path, sizeof(path), "/v1/tasks/%llu", id);
        t = kd_call(&k, "GET", path, NULL, NULL, &s, NULL);
        exp1 = json_integer_value(json_object_get(t, "lease_expiry_ms"));
        assert_true(exp1 >= exp0 + 2500);
        json_decref(t);

        /* not renewed any more: expired and reclaimed; the process is left alone */
        t = kd_wait_task(&k, id, NULL, 15000);
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "end_reason")), "lease_expired");
        assert_string_equal(json_string_value(json_object_get(t, "state")), "failed");
        json_decref(t);
        assert_false(unit_held(&k, id));
        assert_int_not_equal(stat(region, &sb), 0);
        assert_true(kd_pid_alive(c));
        assert_int_equal(waitpid(c, NULL, WNOHANG), 0);

        snprintf(body, sizeof(body), "{\"tenant\":\"alice\",\"pid\":%d,\"lease_s\":2}", (int)c);
        /* a renewal of an ended task is a conflict */
        snprintf(path, sizeof(path), "/v1/tasks/%llu/lease", id);
        t = kd_call(&k, "POST", path, NULL, NULL, &s, NULL);
        assert_int_equal(s, 409);
        json_decref(t);
        kd_stop(&k);
        kd_cleanup(&k);
        reap(c);
}

static void test_attach_whole_cancel(void **st)
{
        char body[256], path[96];
        json_t *t, *u;
        long s;
        unsigned long long id;
        pid_t c = child();
        kd k;
        (void)st;

        kd_setup(&k, NULL);
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"bob\",\"workload\":\"training\",\"route\":\"whole\",\"pid\":%d,"
                 "\"lease_s\":60}",
                 (int)c);
        t = kd_call(&k, "POST", "/v1/attach", body, kd_token(&k, "bob"), &s, NULL);
        assert_int_equal(s, 201);
        id = (unsigned long long)json_integer_value(json_object_get(t, "id"));
        assert_string_equal(json_string_value(json_object_get(t, "state")), "running");
        u = json_array_get(json_object_get(t, "units"), 0);
        assert_string_equal(json_string_value(json_object_get(u, "kind")), "whole");
        assert_string_equal(env_of(t, "CUDA_VISIBLE_DEVICES"),
                            json_string_value(json_object_get(u, "gpu_uuid")));
        assert_string_equal(env_of(t, "KERF_UNIT_KIND"), "whole");
        assert_null(env_of(t, "KERF_SLICE_REGION"));
        assert_null(json_object_get(t, "slice_region"));
        json_decref(t);
        assert_true(unit_held(&k, id));

        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", id);
        t = kd_call(&k, "POST", path, NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        json_decref(t);
        t = kd_wait_task(&k, id, NULL, 10000);
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "cancelled");
        assert_string_equal(json_string_value(json_object_get(t, "end_reason")), "cancel");
        json_decref(t);
        assert_false(unit_held(&k, id));
        assert_true(kd_pid_alive(c)); /* its launcher owns it */
        kd_stop(&k);
        kd_cleanup(&k);
        reap(c);
}

/* The audit record of `action` on task:ID, its reason ("" when none); the caller frees. */
static char *audit_reason(kd *k, const char *action, unsigned long long id)
{
        char obj[64];
        char *out = NULL;
        long s;
        json_t *j = kd_call(k, "GET", "/v1/audit?limit=1000", NULL, NULL, &s, NULL);
        json_t *items = json_object_get(j, "items");
        assert_int_equal(s, 200);
        snprintf(obj, sizeof(obj), "task:%llu", id);
        for (size_t i = 0; i < json_array_size(items); i++) {
                json_t *a = json_array_get(items, i);
                if (!strcmp(json_string_value(json_object_get(a, "action")), action) &&
                    !strcmp(json_string_value(json_object_get(a, "object")), obj))
                        out = strdup(json_string_value(json_object_get(a, "reason")));
        }
        json_decref(j);
        return out;
}

/* A launcher names its job ("external": Slurm job, step, user, account): validated, kept in
 * the task's request, written into the task.attach and task.end audit reasons; the launcher
 * ends the task at once with POST /v1/tasks/ID/detach (succeeded, exit), unit reclaimed. */
static void test_attach_external_detach(void **st)
{
        char body[512], path[96];
        char *why;
        json_t *t;
        long s;
        unsigned long long id, sub;
        pid_t c = child();
        kd k;
        (void)st;

        kd_setup(&k, NULL);
        static const struct {
                const char *ext, *code, *needle;
        } bad[] = {
            {"{\"job\":1}", "invalid_argument", "external.system"},
            {"{\"system\":\"slurm\",\"job\":-1}", "invalid_argument", "external.job"},
            {"{\"system\":\"slurm\",\"step\":\"0\"}", "invalid_argument", "external.step"},
            {"{\"system\":\"slurm\",\"user\":\"a b\"}", "invalid_argument", "external.user"},
            {"{\"system\":\"slurm\",\"account\":\"\"}", "invalid_argument", "external.account"},
            {"{\"system\":\"slurm\",\"node\":\"n1\"}", "unknown_field", "external.node"},
            {"[1]", "invalid_argument", "external:"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                snprintf(body, sizeof(body),
                         "{\"tenant\":\"alice\",\"route\":\"whole\",\"pid\":%d,\"lease_s\":60,"
                         "\"external\":%s}",
                         (int)c, bad[i].ext);
                t = kd_call(&k, "POST", "/v1/attach", body, NULL, &s, NULL);
                assert_int_equal(s, 400);
                assert_string_equal(json_string_value(json_object_get(t, "error")), bad[i].code);
                assert_non_null(
                    strstr(json_string_value(json_object_get(t, "message")), bad[i].needle));
                json_decref(t);
        }
        /* a submit does not take it */
        t = kd_call(&k, "POST", "/v1/tasks",
                    "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"],"
                    "\"external\":{\"system\":\"slurm\"}}",
                    NULL, &s, NULL);
        assert_int_equal(s, 400);
        assert_string_equal(json_string_value(json_object_get(t, "error")), "unknown_field");
        json_decref(t);

        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"route\":\"whole\",\"pid\":%d,\"lease_s\":60,"
                 "\"external\":{\"system\":\"slurm\",\"job\":42,\"step\":3,\"user\":\"ann\","
                 "\"account\":\"physics\"}}",
                 (int)c);
        t = kd_call(&k, "POST", "/v1/attach", body, NULL, &s, NULL);
        assert_int_equal(s, 201);
        id = (unsigned long long)json_integer_value(json_object_get(t, "id"));
        assert_string_equal(json_string_value(json_object_get(t, "state")), "running");
        assert_int_equal(json_integer_value(json_object_get(
                             json_object_get(json_object_get(t, "request"), "external"), "job")),
                         42);
        json_decref(t);
        why = audit_reason(&k, "task.attach", id);
        assert_non_null(why);
        assert_string_equal(why, "slurm job=42 step=3 user=ann account=physics");
        free(why);
        assert_true(unit_held(&k, id));

        snprintf(path, sizeof(path), "/v1/tasks/%llu/detach", id);
        t = kd_call(&k, "POST", path, "{\"x\":1}", NULL, &s, NULL);
        assert_int_equal(s, 400);
        json_decref(t);
        t = kd_call(&k, "POST", path, NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "succeeded");
        assert_string_equal(json_string_value(json_object_get(t, "end_reason")), "exit");
        json_decref(t);
        assert_false(unit_held(&k, id)); /* reclaimed at once, not at the next pid check */
        assert_true(kd_pid_alive(c));    /* never signalled */
        why = audit_reason(&k, "task.end", id);
        assert_non_null(why);
        assert_non_null(strstr(why, "detached by its launcher"));
        assert_non_null(strstr(why, "[slurm job=42 step=3 user=ann account=physics]"));
        free(why);
        t = kd_call(&k, "POST", path, NULL, NULL, &s, NULL); /* ended already */
        assert_int_equal(s, 409);
        json_decref(t);
        t = kd_call(&k, "GET", path, NULL, NULL, &s, NULL);
        assert_int_equal(s, 405);
        json_decref(t);

        /* a task kerfd started is cancelled, not detached */
        sub = kd_submit(&k, "{\"tenant\":\"alice\",\"command\":[\"/bin/sleep\",\"5\"]}", NULL);
        snprintf(path, sizeof(path), "/v1/tasks/%llu/detach", sub);
        t = kd_call(&k, "POST", path, NULL, NULL, &s, NULL);
        assert_int_equal(s, 409);
        assert_non_null(
            strstr(json_string_value(json_object_get(t, "message")), "not an attached"));
        json_decref(t);
        kd_stop(&k);
        kd_cleanup(&k);
        reap(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_attach_slice_lease),
                                           cmocka_unit_test(test_attach_whole_cancel),
                                           cmocka_unit_test(test_attach_external_detach)};
        return cmocka_run_group_tests(tests, NULL, NULL);
}
