/* SPDX-License-Identifier: Apache-2.0 */
/* test_launch.c - a task's fork/exec runs without the daemon mutex (docs/DAEMON.md "The daemon
 * mutex", launch.c): with the test hook KERFD_TEST_SLOW_LAUNCH_MS each fork first waits 2 s,
 * and meanwhile kerfd answers health checks and submits at once; a cancel during that launch
 * ends the task cancelled with nothing run; a stop of kerfd during it still forks it, and the
 * next kerfd finds it ran once; a kill -9 before the fork leaves no unit behind; a MIG create
 * is made without the mutex too */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define SLOW_MS 2000

static double now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static const char *state_of(json_t *t)
{
        return json_string_value(json_object_get(t, "state"));
}

/* Submits `cmd` (a /bin/sh -c script) for alice and waits until it is "starting": its start
 * is recorded and its (slow) fork in flight. */
static unsigned long long submit_starting(kd *k, const char *cmd)
{
        char body[1024], path[64];
        unsigned long long id;

        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"command\":[\"/bin/sh\",\"-c\",\"%s\"]}", cmd);
        id = kd_submit(k, body, NULL);
        snprintf(path, sizeof(path), "/v1/tasks/%llu", id);
        for (int i = 0; i < 500; i++) {
                long s;
                json_t *t = kd_call(k, "GET", path, NULL, NULL, &s, NULL);
                bool starting = s == 200 && state_of(t) && !strcmp(state_of(t), "starting");
                json_decref(t);
                if (starting)
                        return id;
                kd_sleep_ms(10);
        }
        fail_msg("task %llu never was \"starting\"", id);
        return 0;
}

static bool exists(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0;
}

static void test_unlocked_fork(void **st)
{
        kd k;
        long s;
        json_t *j;
        double t0, dt;
        char marker[300], cmd[400];
        (void)st;

        setenv("KERFD_TEST_SLOW_LAUNCH_MS", "2000", 1);
        kd_setup(&k, NULL);
        unsetenv("KERFD_TEST_SLOW_LAUNCH_MS");
        snprintf(marker, sizeof(marker), "%s/ran", k.dir);
        snprintf(cmd, sizeof(cmd), "echo run >> %s", marker);
        t0 = now_ms();
        unsigned long long id = submit_starting(&k, cmd);
        kd_sleep_ms(100); /* the ticker is in the fork's 2 s wait now */
        /* health and a submit answer while the fork waits: the mutex is free */
        t0 = now_ms();
        j = kd_call(&k, "GET", "/v1/health", NULL, NULL, &s, NULL);
        dt = now_ms() - t0;
        json_decref(j);
        assert_int_equal(s, 200);
        print_message("GET /v1/health during a launch: %.1f ms\n", dt);
        assert_true(dt < 500);
        t0 = now_ms();
        j = kd_call(&k, "POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"]}",
                    NULL, &s, NULL);
        dt = now_ms() - t0;
        assert_int_equal(s, 201);
        unsigned long long id2 = (unsigned long long)json_integer_value(json_object_get(j, "id"));
        json_decref(j);
        print_message("POST /v1/tasks during a launch: %.1f ms\n", dt);
        assert_true(dt < 500);
        /* the first is still starting: its fork has not happened */
        j = kd_wait_task(&k, id, "starting", 100);
        assert_non_null(j);
        json_decref(j);
        assert_false(exists(marker));
        /* then both start (one fork at a time) and succeed, each once */
        j = kd_wait_task(&k, id, NULL, 15000);
        assert_non_null(j);
        assert_string_equal(state_of(j), "succeeded");
        json_decref(j);
        j = kd_wait_task(&k, id2, NULL, 15000);
        assert_non_null(j);
        assert_string_equal(state_of(j), "succeeded");
        json_decref(j);
        char *m = kd_read(marker);
        assert_non_null(m);
        assert_string_equal(m, "run\n");
        free(m);
        kd_stop(&k);
        kd_cleanup(&k);
}

static void test_cancel_during_launch(void **st)
{
        kd k;
        long s;
        json_t *j;
        double t0, dt;
        char marker[300], cmd[400], path[96];
        pid_t procs[4];
        (void)st;

        setenv("KERFD_TEST_SLOW_LAUNCH_MS", "2000", 1);
        kd_setup(&k, NULL);
        unsetenv("KERFD_TEST_SLOW_LAUNCH_MS");
        snprintf(marker, sizeof(marker), "%s/ran", k.dir);
        snprintf(cmd, sizeof(cmd), "echo run >> %s; sleep 30", marker);
        unsigned long long id = submit_starting(&k, cmd);
        kd_sleep_ms(100);
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", id);
        t0 = now_ms();
        j = kd_call(&k, "POST", path, NULL, NULL, &s, NULL);
        dt = now_ms() - t0;
        assert_int_equal(s, 200);
        assert_true(dt < 500); /* answered during the fork's wait */
        json_decref(j);
        /* asked once: a second cancel is refused as for any stopping task */
        j = kd_call(&k, "POST", path, NULL, NULL, &s, NULL);
        assert_int_equal(s, 409);
        json_decref(j);
        j = kd_wait_task(&k, id, NULL, 10000);
        assert_non_null(j);
        assert_string_equal(state_of(j), "cancelled");
        assert_string_equal(json_string_value(json_object_get(j, "end_reason")), "cancel");
        json_decref(j);
        /* its fork never happened: nothing ran, nothing runs */
        kd_sleep_ms(300);
        assert_false(exists(marker));
        assert_int_equal(kd_task_procs(&k, id, procs, 4), 0);
        /* and the next task starts as usual */
        j = kd_call(&k, "POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"]}",
                    NULL, &s, NULL);
        assert_int_equal(s, 201);
        unsigned long long id2 = (unsigned long long)json_integer_value(json_object_get(j, "id"));
        json_decref(j);
        j = kd_wait_task(&k, id2, NULL, 15000);
        assert_non_null(j);
        assert_string_equal(state_of(j), "succeeded");
        json_decref(j);
        kd_stop(&k);
        kd_cleanup(&k);
}

static void test_stop_during_launch(void **st)
{
        kd k;
        json_t *j;
        char marker[300], cmd[400];
        pid_t procs[4];
        (void)st;

        setenv("KERFD_TEST_SLOW_LAUNCH_MS", "2000", 1);
        kd_setup(&k, NULL);
        unsetenv("KERFD_TEST_SLOW_LAUNCH_MS");
        snprintf(marker, sizeof(marker), "%s/ran", k.dir);
        snprintf(cmd, sizeof(cmd), "echo run >> %s", marker);
        unsigned long long id = submit_starting(&k, cmd);
        kd_sleep_ms(100);
        /* SIGTERM while the fork waits: the start decided before the stop is carried out (as
         * when the stop waited for the tick that forked it), then kerfd exits */
        kd_stop(&k);
        for (int i = 0; i < 100 && !exists(marker); i++)
                kd_sleep_ms(20);
        assert_true(exists(marker));
        /* the next kerfd finds its end through the supervisor's record: it ran exactly once */
        kd_start(&k);
        j = kd_wait_task(&k, id, NULL, 15000);
        assert_non_null(j);
        assert_string_equal(state_of(j), "succeeded");
        json_decref(j);
        kd_sleep_ms(300);
        assert_int_equal(kd_task_procs(&k, id, procs, 4), 0);
        char *m = kd_read(marker);
        assert_non_null(m);
        assert_string_equal(m, "run\n");
        free(m);
        kd_stop(&k);
        kd_cleanup(&k);
}

/* A MIG create is made without the mutex as well (migop.c): the hook slows it the same way. */
static void test_unlocked_mig(void **st)
{
        kd k;
        long s;
        json_t *j;
        double t0, dt;
        (void)st;

        setenv("KERFD_TEST_SLOW_LAUNCH_MS", "2000", 1);
        kd_setup(&k, NULL);
        unsetenv("KERFD_TEST_SLOW_LAUNCH_MS");
        unsigned long long id =
            kd_submit(&k,
                      "{\"tenant\":\"alice\",\"workload\":\"inference\",\"tier\":\"high\","
                      "\"mig_profile\":\"1g.18gb\",\"command\":[\"/bin/true\"]}",
                      NULL);
        kd_sleep_ms(300); /* the ticker is in the create's 2 s wait now */
        t0 = now_ms();
        j = kd_call(&k, "GET", "/v1/health", NULL, NULL, &s, NULL);
        dt = now_ms() - t0;
        json_decref(j);
        assert_int_equal(s, 200);
        print_message("GET /v1/health during a MIG create: %.1f ms\n", dt);
        assert_true(dt < 500);
        /* not made yet, then made, and the task runs on it */
        j = kd_event(&k, "mig_create", "created");
        assert_null(j);
        j = kd_wait_task(&k, id, NULL, 20000);
        assert_non_null(j);
        assert_string_equal(state_of(j), "succeeded");
        json_decref(j);
        j = kd_event(&k, "mig_create", "created");
        assert_non_null(j);
        json_decref(j);
        kd_stop(&k);
        kd_cleanup(&k);
}

/* kerfd killed after a start was recorded "starting" and before its fork: the next kerfd finds
 * no process and places the task anew; the units of the unforked start are freed. Its new unit
 * gets another id when a unit with a higher id survives the restart (here: an attached task's,
 * placed while the start waited its turn), and a third kerfd then re-adopts the task on its one
 * unit (with the old unit's row left behind it held two: "unit lost across a kerfd restart"). */
static void test_kill_before_fork(void **st)
{
        kd k;
        json_t *j;
        long s;
        char path[96], body[256];
        pid_t c;
        (void)st;

        setenv("KERFD_TEST_SLOW_LAUNCH_MS", "2000", 1);
        kd_setup(&k, NULL);
        unsetenv("KERFD_TEST_SLOW_LAUNCH_MS");
        /* a and b prepared in one tick (units 1, 2); a forks first, b waits behind it */
        unsigned long long a =
            kd_submit(&k, "{\"tenant\":\"alice\",\"command\":[\"/bin/sleep\",\"30\"]}", NULL);
        unsigned long long b =
            kd_submit(&k, "{\"tenant\":\"alice\",\"command\":[\"/bin/sleep\",\"30\"]}", NULL);
        kd_sleep_ms(300);
        /* an attach's step goes between the two forks: its unit's id is above b's */
        c = fork();
        assert_true(c >= 0);
        if (c == 0) {
                for (int i = 0; i < 600; i++)
                        usleep(100000);
                _exit(0);
        }
        snprintf(body, sizeof(body), "{\"tenant\":\"alice\",\"pid\":%d,\"lease_s\":600}", (int)c);
        json_decref(kd_call(&k, "POST", "/v1/attach", body, NULL, &s, NULL));
        assert_int_equal(s, 201);
        j = kd_wait_task(&k, a, "running", 10000);
        assert_non_null(j);
        json_decref(j);
        j = kd_wait_task(&k, b, "starting", 1000); /* in its fork's 2 s wait */
        assert_non_null(j);
        json_decref(j);
        kd_kill9(&k);
        kd_start(&k);
        j = kd_wait_task(&k, b, "running", 15000);
        assert_non_null(j);
        assert_int_equal(json_array_size(json_object_get(j, "units")), 1);
        json_decref(j);
        kd_kill9(&k);
        kd_start(&k);
        snprintf(path, sizeof(path), "/v1/tasks/%llu", b);
        kd_sleep_ms(1000); /* a task whose units were "lost" is stopped and ends by now */
        j = kd_call(&k, "GET", path, NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_string_equal(state_of(j), "running"); /* re-adopted, not "unit lost" */
        json_decref(j);
        for (int i = 0; i < 2; i++) {
                snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", i ? b : a);
                json_decref(kd_call(&k, "POST", path, "{\"grace_s\":0}", NULL, &s, NULL));
        }
        kill(c, SIGKILL);
        waitpid(c, NULL, 0);
        kd_sleep_ms(300);
        kd_stop(&k);
        kd_cleanup(&k);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_unlocked_fork),      cmocka_unit_test(test_cancel_during_launch),
            cmocka_unit_test(test_stop_during_launch), cmocka_unit_test(test_unlocked_mig),
            cmocka_unit_test(test_kill_before_fork),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
