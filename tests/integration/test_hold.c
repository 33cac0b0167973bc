/* SPDX-License-Identifier: Apache-2.0 */
/* test_hold.c - holds, releases and updates of pending tasks, GPU drain and resume, against a
 * throwaway kerfd through the real kerf binary and the API: reasons in kerf ls, an admin's
 * hold a tenant cannot release, bounds named on a bad update, a priority update reordering
 * the queue, a drained GPU left out of placement, both surviving a kerfd restart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clirun.h"
#include "harness.h"

static kd K;

#define kerf(...)          kd_cli_runv(&K, NULL, NULL, __VA_ARGS__, (char *)NULL)
#define kerf_tok(tok, ...) kd_cli_runv(&K, NULL, tok, __VA_ARGS__, (char *)NULL)

/* the six whole GPUs of the fleet (examples/fleet-8xh200.yaml: 0 and 1 are in MIG mode) */
#define ALL_GPUS(tenant, prio)                                                                     \
        "{\"tenant\":\"" tenant "\",\"workload\":\"training\",\"route\":\"whole\",\"gpus\":6,"     \
        "\"priority\":" #prio ",\"command\":[\"/bin/sleep\",\"300\"]}"

static int setup(void **st)
{
        (void)st;
        setenv("KERFD_TEST_SHIM_PATH", NOOP_SHIM, 1);
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

static void ok(kd_out *o)
{
        kd_cli_assert_code(o, 0);
        kd_out_fini(o);
}

static const char *ids(unsigned long long id)
{
        static char b[4][32];
        static int n;
        char *s = b[n++ % 4];
        snprintf(s, 32, "%llu", id);
        return s;
}

static json_t *task(unsigned long long id)
{
        char path[64];
        long status = 0;
        snprintf(path, sizeof(path), "/v1/tasks/%llu", id);
        json_t *t = kd_call(&K, "GET", path, NULL, NULL, &status, NULL);
        assert_int_equal(status, 200);
        return t;
}

static const char *reason_text(json_t *t)
{
        return json_string_value(json_object_get(json_object_get(t, "reason"), "text"));
}

/* PATCH /v1/tasks/ID body as `tok`: the status; the message into msg. */
static long patch(unsigned long long id, const char *body, const char *tok, char *msg, size_t len)
{
        char path[64];
        long status = 0;
        snprintf(path, sizeof(path), "/v1/tasks/%llu", id);
        json_t *j = kd_call(&K, "PATCH", path, body, tok, &status, NULL);
        const char *m = json_string_value(json_object_get(j, "message"));
        snprintf(msg, len, "%s", m ? m : "");
        json_decref(j);
        return status;
}

/* Waits for `id` to run; on failure prints the task as it is. */
static void running(unsigned long long id)
{
        json_t *t = kd_wait_task(&K, id, "running", 20000);
        if (!t) {
                json_t *now = task(id);
                char *txt = json_dumps(now, JSON_COMPACT);
                fail_msg("task %llu did not start: %s", id, txt);
        }
        json_decref(t);
}

static void cancel(unsigned long long id)
{
        kd_out o = kerf("cancel", ids(id));
        ok(&o);
        json_t *t = kd_wait_task(&K, id, NULL, 20000);
        assert_non_null(t);
        json_decref(t);
}

static void test_hold_release_update(void **st)
{
        (void)st;
        char *tok = kd_token(&K, "alice");
        char msg[512];
        unsigned long long b = kd_submit(&K, ALL_GPUS("bob", 0), NULL);
        running(b);
        json_t *t;

        /* an admin holds X: pending, "held by admin" in kerf ls; alice cannot release it */
        unsigned long long x = kd_submit(&K, ALL_GPUS("alice", 0), NULL);
        kd_out o = kerf("hold", ids(x));
        kd_cli_assert_code(&o, 0);
        assert_non_null(strstr(o.out, "held"));
        kd_out_fini(&o);
        t = task(x);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "pending");
        assert_string_equal(json_string_value(json_object_get(t, "held")), "admin");
        assert_string_equal(reason_text(t), "held by admin");
        json_decref(t);
        o = kerf("ls", "--state", "pending");
        kd_cli_assert_code(&o, 0);
        assert_non_null(strstr(o.out, "held by admin"));
        kd_out_fini(&o);
        o = kerf_tok(tok, "release", ids(x));
        kd_cli_assert_one_error(&o, 5);
        assert_non_null(strstr(o.err, "only an admin can release it"));
        kd_out_fini(&o);
        o = kerf_tok(tok, "hold", ids(x)); /* nor weaken it */
        kd_cli_assert_one_error(&o, 1);
        kd_out_fini(&o);

        /* alice holds and releases her own Z */
        unsigned long long z = kd_submit(&K, ALL_GPUS("alice", 0), tok);
        o = kerf_tok(tok, "hold", ids(z));
        ok(&o);
        t = task(z);
        assert_string_equal(reason_text(t), "held by tenant");
        json_decref(t);
        o = kerf_tok(tok, "--json", "release", ids(z));
        kd_cli_assert_code(&o, 0);
        assert_true(json_is_array(o.js));
        assert_true(json_is_null(json_object_get(json_array_get(o.js, 0), "held")));
        kd_out_fini(&o);
        o = kerf_tok(tok, "release", ids(z)); /* not held */
        kd_cli_assert_one_error(&o, 1);
        kd_out_fini(&o);

        /* bad updates are refused naming the bound; nothing changes */
        o = kerf_tok(tok, "update", ids(z), "--priority", "5000");
        kd_cli_assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, "-1000..1000"));
        kd_out_fini(&o);
        o = kerf_tok(tok, "update", ids(z), "--max-runtime", "400d");
        kd_cli_assert_one_error(&o, 2);
        kd_out_fini(&o);
        assert_int_equal(patch(z, "{\"priority\":5000}", tok, msg, sizeof(msg)), 400);
        assert_non_null(strstr(msg, "-1000..1000"));
        assert_int_equal(patch(z, "{\"max_runtime_s\":99999999999}", tok, msg, sizeof(msg)), 400);
        assert_non_null(strstr(msg, "max_runtime_s"));
        assert_non_null(strstr(msg, "365d"));
        assert_int_equal(patch(z, "{\"gpus\":2}", tok, msg, sizeof(msg)), 400);
        assert_non_null(strstr(msg, "not updatable"));
        assert_int_equal(patch(z, "{}", tok, msg, sizeof(msg)), 400);
        assert_int_equal(patch(b, "{\"priority\":1}", NULL, msg, sizeof(msg)), 409);
        assert_non_null(strstr(msg, "only a pending task"));
        /* the tenant's ceiling binds its token, as at submit */
        long status = 0;
        json_decref(
            kd_call(&K, "PATCH", "/v1/tenants/alice", "{\"max_priority\":5}", NULL, &status, NULL));
        assert_int_equal(status, 200);
        assert_int_equal(patch(z, "{\"priority\":10}", tok, msg, sizeof(msg)), 403);
        assert_non_null(strstr(msg, "max_priority 5"));
        json_decref(kd_call(&K, "PATCH", "/v1/tenants/alice", "{\"max_priority\":1000}", NULL,
                            &status, NULL));
        assert_int_equal(status, 200);
        t = task(z);
        assert_int_equal(json_integer_value(json_object_get(t, "priority")), 0);
        json_decref(t);

        /* priority 10 puts Z before X; X released; when bob's task ends Z starts, not X */
        o = kerf_tok(tok, "update", ids(z), "--priority", "10", "--max-runtime", "2h");
        kd_cli_assert_code(&o, 0);
        assert_non_null(strstr(o.out, "priority 10"));
        kd_out_fini(&o);
        t = task(z);
        assert_int_equal(json_integer_value(json_object_get(t, "priority")), 10);
        assert_int_equal(
            json_integer_value(json_object_get(json_object_get(t, "request"), "max_runtime_s")),
            7200);
        json_decref(t);
        o = kerf("release", ids(x));
        ok(&o);
        cancel(b);
        t = kd_wait_task(&K, z, "running", 20000);
        assert_non_null(t);
        json_decref(t);
        t = task(x);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "pending");
        json_decref(t);
        /* released X starts once Z is gone */
        cancel(z);
        t = kd_wait_task(&K, x, "running", 20000);
        assert_non_null(t);
        json_decref(t);
        cancel(x);

        /* each change has its audit record */
        t = kd_call(&K, "GET", "/v1/audit?limit=1000", NULL, NULL, &status, NULL);
        char *txt = json_dumps(t, JSON_COMPACT);
        assert_non_null(strstr(txt, "\"task.hold\""));
        assert_non_null(strstr(txt, "\"task.release\""));
        assert_non_null(strstr(txt, "\"task.update\""));
        free(txt);
        json_decref(t);
}

static bool gpu_draining(unsigned g)
{
        long status = 0;
        json_t *j = kd_call(&K, "GET", "/v1/gpus", NULL, NULL, &status, NULL);
        assert_int_equal(status, 200);
        bool on = json_is_true(
            json_object_get(json_array_get(json_object_get(j, "items"), g), "draining"));
        json_decref(j);
        return on;
}

static void test_drain_restart_resume(void **st)
{
        (void)st;
        char *tok = kd_token(&K, "alice");
        long status = 0;
        kd_out o = kerf_tok(tok, "gpu", "drain", "2");
        kd_cli_assert_one_error(&o, 5); /* admin only */
        kd_out_fini(&o);
        o = kerf("gpu", "drain", "2", "--reason", "fan check");
        kd_cli_assert_code(&o, 0);
        assert_non_null(strstr(o.out, "GPU 2 is draining"));
        kd_out_fini(&o);
        o = kerf("gpu", "drain", "2");
        kd_cli_assert_one_error(&o, 1); /* already */
        kd_out_fini(&o);
        o = kerf("gpu", "drian", "2");
        kd_cli_assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, "did you mean drain"));
        kd_out_fini(&o);
        o = kerf("gpus");
        kd_cli_assert_code(&o, 0);
        assert_non_null(strstr(o.out, "DRAIN"));
        kd_out_fini(&o);
        assert_true(gpu_draining(2));
        assert_false(gpu_draining(3));

        /* a one-GPU task goes elsewhere; a six-GPU one waits, saying why */
        unsigned long long one =
            kd_submit(&K,
                      "{\"tenant\":\"alice\",\"workload\":\"training\",\"route\":\"whole\","
                      "\"command\":[\"/bin/sleep\",\"300\"]}",
                      NULL);
        json_t *t = kd_wait_task(&K, one, "running", 20000);
        assert_non_null(t);
        assert_int_not_equal(json_integer_value(json_object_get(
                                 json_array_get(json_object_get(t, "units"), 0), "gpu")),
                             2);
        json_decref(t);
        unsigned long long all = kd_submit(&K, ALL_GPUS("alice", 0), NULL);
        kd_sleep_ms(500);
        t = task(all);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "pending");
        assert_non_null(strstr(reason_text(t), "GPU 2 is draining"));
        json_decref(t);
        unsigned long long held = kd_submit(&K, ALL_GPUS("bob", 0), NULL);
        o = kerf("hold", ids(held));
        ok(&o);
        char *raw = NULL;
        json_decref(kd_call(&K, "GET", "/metrics", NULL, NULL, &status, &raw));
        assert_non_null(raw);
        assert_non_null(strstr(raw, "kerf_gpu_draining{gpu=\"2\""));
        free(raw);

        /* both survive a restart */
        kd_stop(&K);
        kd_start(&K);
        assert_true(gpu_draining(2));
        t = task(held);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "pending");
        assert_string_equal(json_string_value(json_object_get(t, "held")), "admin");
        assert_string_equal(reason_text(t), "held by admin");
        json_decref(t);
        t = kd_wait_task(&K, one, "running", 20000);
        assert_non_null(t);
        json_decref(t);
        kd_sleep_ms(500);
        t = task(all);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "pending");
        json_decref(t);

        /* resume: placed on all six, GPU 2 included */
        cancel(one);
        o = kerf("gpu", "resume", "2");
        kd_cli_assert_code(&o, 0);
        kd_out_fini(&o);
        assert_false(gpu_draining(2));
        t = kd_wait_task(&K, all, "running", 20000);
        assert_non_null(t);
        json_decref(t);

        /* drain --wait returns once the GPU is empty */
        char *const args[] = {"gpu", "drain", "2", "--wait", NULL};
        pid_t p = kd_cli_spawn(&K, "wait", NULL, NULL, args);
        kd_sleep_ms(1000);
        assert_true(kd_pid_alive(p));
        cancel(all);
        int code = kd_cli_reap(p, 20000);
        kd_out w = kd_cli_collect(&K, "wait", code);
        kd_cli_assert_code(&w, 0);
        assert_non_null(strstr(w.out, "GPU 2 is drained"));
        kd_out_fini(&w);
        o = kerf("gpu", "resume", "2");
        ok(&o);
        o = kerf("release", ids(held));
        ok(&o);
        t = kd_wait_task(&K, held, "running", 20000);
        assert_non_null(t);
        json_decref(t);
        cancel(held);
        t = kd_call(&K, "GET", "/v1/audit?limit=1000", NULL, NULL, &status, NULL);
        char *txt = json_dumps(t, JSON_COMPACT);
        assert_non_null(strstr(txt, "\"gpu.drain\""));
        assert_non_null(strstr(txt, "\"gpu.resume\""));
        free(txt);
        json_decref(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_hold_release_update, setup, teardown),
            cmocka_unit_test_setup_teardown(test_drain_restart_resume, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
