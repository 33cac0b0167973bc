/* SPDX-License-Identifier: Apache-2.0 */
/* test_join.c - several processes share one attached task (POST /v1/tasks/{id}/join): a second
 * child joins the first's task and gets the same attach_env; the task lives while any of them
 * does; refusals (unknown, pending, submitted task; a pid attached or joined already, init, a
 * process of another uid; a bad body; a store that cannot write; past KERF_ATTACH_MAX_PIDS);
 * members survive a restart */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clirun.h"

static char fail_file[128];

/* A child that sleeps (60 s at most); as uid `uid` when >= 0 (root only). */
static pid_t child_as(long uid)
{
        pid_t p = fork();
        assert_true(p >= 0);
        if (p == 0) {
                if (uid >= 0 && setuid((uid_t)uid) != 0)
                        _exit(1);
                for (int i = 0; i < 600; i++)
                        usleep(100000);
                _exit(0);
        }
        return p;
}

static pid_t child(void)
{
        return child_as(-1);
}

static void reap(pid_t p)
{
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
}

static int setup(void **st)
{
        char hook[200];
        (void)st;
        /* a member's row cannot be written while this file exists (a failing disk) */
        snprintf(fail_file, sizeof(fail_file), "/tmp/kerf-it-join-fail-%d", (int)getpid());
        snprintf(hook, sizeof(hook), "member_add@%s", fail_file);
        setenv("KERFD_TEST_STORE_FAIL", hook, 1);
        return 0;
}

static int teardown(void **st)
{
        (void)st;
        unsetenv("KERFD_TEST_STORE_FAIL");
        unlink(fail_file);
        return 0;
}

static unsigned long long attach(kd *k, pid_t pid, const char *extra, const char *state,
                                 json_t **ret)
{
        char body[256];
        long s;
        json_t *t;
        unsigned long long id;

        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"route\":\"whole\",\"pid\":%d,\"lease_s\":600%s}",
                 (int)pid, extra ? extra : "");
        t = kd_call(k, "POST", "/v1/attach", body, NULL, &s, NULL);
        assert_int_equal(s, 201);
        assert_string_equal(json_string_value(json_object_get(t, "state")), state);
        id = (unsigned long long)json_integer_value(json_object_get(t, "id"));
        if (ret)
                *ret = t;
        else
                json_decref(t);
        return id;
}

/* POST /v1/tasks/ID/join with `body`: the answer (caller decrefs), its status in *s. */
static json_t *join_raw(kd *k, unsigned long long id, const char *body, const char *token, long *s)
{
        char path[96];
        snprintf(path, sizeof(path), "/v1/tasks/%llu/join", id);
        return kd_call(k, "POST", path, body, token, s, NULL);
}

static json_t *join(kd *k, unsigned long long id, pid_t pid, long *s)
{
        char body[64];
        snprintf(body, sizeof(body), "{\"pid\":%d}", (int)pid);
        return join_raw(k, id, body, NULL, s);
}

/* join expecting `status`, and an error message holding `needle` */
static void join_refused(kd *k, unsigned long long id, pid_t pid, long status, const char *needle)
{
        long s;
        json_t *t = join(k, id, pid, &s);
        assert_int_equal(s, status);
        assert_non_null(strstr(json_string_value(json_object_get(t, "message")), needle));
        json_decref(t);
}

/* The task's "pids" are exactly want[0..n). */
static void pids_are(json_t *t, const pid_t *want, size_t n)
{
        json_t *p = json_object_get(t, "pids");
        assert_true(json_is_array(p));
        assert_int_equal(json_array_size(p), n);
        for (size_t i = 0; i < n; i++)
                assert_int_equal(json_integer_value(json_array_get(p, i)), want[i]);
}

static void state_is(kd *k, unsigned long long id, const char *state)
{
        json_t *t = kd_task(k, id);
        assert_string_equal(json_string_value(json_object_get(t, "state")), state);
        json_decref(t);
}

static void test_join(void **st)
{
        pid_t c1 = child(), c2 = child(), c3 = child(), c4 = child();
        pid_t want[3];
        json_t *a, *t;
        long s;
        unsigned long long id, pend, sub;
        kd k;
        (void)st;

        kd_setup(&k, NULL);
        id = attach(&k, c1, NULL, "running", &a);

        /* c2 joins: the same task, the same unit contract */
        t = join(&k, id, c2, &s);
        assert_int_equal(s, 200);
        assert_int_equal(json_integer_value(json_object_get(t, "id")), (json_int_t)id);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "running");
        assert_true(json_equal(json_object_get(t, "attach_env"), json_object_get(a, "attach_env")));
        want[0] = c1;
        want[1] = c2;
        pids_are(t, want, 2);
        json_decref(t);
        json_decref(a);
        t = kd_task(&k, id);
        pids_are(t, want, 2);
        json_decref(t);

        /* refusals */
        join_refused(&k, id, c2, 409, "already joined");
        join_refused(&k, id, c1, 409, "already attached");
        join_refused(&k, id, 1, 403, "init");
        join_refused(&k, 999999, c3, 404, "no task 999999");
        t = join_raw(&k, id, "{\"pid\":1,\"x\":2}", NULL, &s); /* strict body */
        assert_int_equal(s, 422);
        assert_string_equal(json_string_value(json_object_get(t, "error")), "unknown_field");
        assert_non_null(strstr(json_string_value(json_object_get(t, "message")), "x:"));
        json_decref(t);
        static const char *bad[] = {"{}", "{\"pid\":0}", "{\"pid\":\"12\"}",
                                    "{\"pid\":2147483648}"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                t = join_raw(&k, id, bad[i], NULL, &s);
                assert_int_equal(s, 422);
                assert_non_null(strstr(json_string_value(json_object_get(t, "message")), "pid: "));
                assert_non_null(
                    strstr(json_string_value(json_object_get(t, "message")), "2147483647"));
                json_decref(t);
        }
        t = join(&k, id, c3, &s);
        assert_int_equal(s, 200);
        json_decref(t);
        /* another tenant's token does not see alice's task */
        t = join_raw(&k, id, "{\"pid\":2}", kd_token(&k, "bob"), &s);
        assert_int_equal(s, 404);
        json_decref(t);
        if (geteuid() == 0) { /* a process of another uid */
                pid_t o = child_as(65534);
                kd_sleep_ms(100);
                join_refused(&k, id, o, 403, "not the caller's");
                reap(o);
        }

        /* c3 joined above (3 processes); a store that cannot write refuses c4: 507, nothing
         * changed */
        int fd = open(fail_file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        close(fd);
        t = join(&k, id, c4, &s);
        assert_int_equal(s, 507);
        json_decref(t);
        unlink(fail_file);
        want[2] = c3;
        t = kd_task(&k, id);
        pids_are(t, want, 3);
        json_decref(t);
        /* writable again: c4 may join (after kerfd's probe of the store) */
        for (int i = 0; i < 50; i++) {
                t = join(&k, id, c4, &s);
                json_decref(t);
                if (s != 507)
                        break;
                kd_sleep_ms(100);
        }
        assert_int_equal(s, 200);

        /* a pending attached task, and a task kerfd started, take no join */
        sub = kd_submit(&k, "{\"tenant\":\"alice\",\"command\":[\"/bin/sleep\",\"30\"]}", NULL);
        t = kd_wait_task(&k, sub, "running", 10000);
        assert_non_null(t);
        json_decref(t);
        join_refused(&k, sub, getpid(), 409, "not a running attached task");
        pid_t c5 = child(); /* 8 GPUs while two are held: it waits */
        pend = attach(&k, c5, ",\"gpus\":8", "pending", NULL);
        join_refused(&k, pend, getpid(), 409, "not a running attached task");

        /* the task lives while any of its processes does */
        reap(c1);
        reap(c3);
        reap(c4);
        kd_sleep_ms(1500);
        state_is(&k, id, "running");
        t = kd_task(&k, id);
        want[0] = c1;
        want[1] = c2;
        pids_are(t, want, 2); /* ended members leave the list; the first pid stays */
        json_decref(t);
        reap(c2);
        t = kd_wait_task(&k, id, NULL, 10000);
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "succeeded");
        assert_string_equal(json_string_value(json_object_get(t, "end_reason")), "exit");
        json_decref(t);
        join_refused(&k, id, getpid(), 409, "not a running attached task");
        kd_stop(&k);
        kd_cleanup(&k);
        reap(c5);
}

/* Two members live across a kerfd restart (kerf show lists them); the detach ends the whole
 * task. */
static void test_join_restart(void **st)
{
        pid_t c1 = child(), c2 = child(), want[2] = {c1, c2};
        char path[96];
        json_t *t;
        long s;
        unsigned long long id;
        kd k;
        (void)st;

        kd_setup(&k, NULL);
        id = attach(&k, c1, NULL, "running", NULL);
        t = join(&k, id, c2, &s);
        assert_int_equal(s, 200);
        json_decref(t);
        kd_stop(&k);
        kd_start(&k);
        t = kd_task(&k, id);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "running");
        pids_are(t, want, 2);
        json_decref(t);
        /* kerf show prints them */
        char ids[32], line[96];
        snprintf(ids, sizeof(ids), "%llu", id);
        kd_out o = kd_cli_runv(&k, NULL, NULL, "show", ids, NULL);
        kd_cli_assert_code(&o, 0);
        snprintf(line, sizeof(line), "pids           %d %d (2 processes)\n", (int)c1, (int)c2);
        assert_non_null(strstr(o.out, line));
        kd_out_fini(&o);
        /* the member alone keeps it after the restart too */
        reap(c1);
        kd_sleep_ms(1500);
        state_is(&k, id, "running");
        snprintf(path, sizeof(path), "/v1/tasks/%llu/detach", id);
        t = kd_call(&k, "POST", path, NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "succeeded");
        json_decref(t);
        assert_true(kd_pid_alive(c2)); /* never signalled */
        kd_stop(&k);
        kd_cleanup(&k);
        reap(c2);
}

/* At most KERF_ATTACH_MAX_PIDS (256) processes join one task: the next one is a 409 naming the
 * limit. */
static void test_join_limit(void **st)
{
        enum { MAX = 256 };
        pid_t first = child(), extra[MAX + 1];
        json_t *t;
        long s;
        unsigned long long id;
        kd k;
        (void)st;

        kd_setup(&k, NULL);
        id = attach(&k, first, NULL, "running", NULL);
        for (int i = 0; i <= MAX; i++)
                extra[i] = child();
        for (int i = 0; i < MAX; i++) {
                t = join(&k, id, extra[i], &s);
                assert_int_equal(s, 200);
                json_decref(t);
        }
        join_refused(&k, id, extra[MAX], 409, "256 joined processes");
        t = kd_task(&k, id);
        assert_int_equal(json_array_size(json_object_get(t, "pids")), MAX + 1);
        json_decref(t);
        kd_stop(&k);
        kd_cleanup(&k);
        for (int i = 0; i <= MAX; i++)
                reap(extra[i]);
        reap(first);
}

int main(void)
{
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_join),
                                           cmocka_unit_test(test_join_restart),
                                           cmocka_unit_test(test_join_limit)};
        return cmocka_run_group_tests(tests, setup, teardown);
}
