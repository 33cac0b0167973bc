/* SPDX-License-Identifier: Apache-2.0 */
/* test_crash.c - the double-start guard: kerfd dies right after forking a task (test hook
 * KERFD_TEST_CRASH_AFTER_FORK), the restarted kerfd adopts that process instead of starting
 * the task again: one process, its pid recorded, cancel works, the audit chain verifies; a
 * task that ended during the outage is found through its supervisor's record */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static void test_crash_after_fork(void **st)
{
        char path[96];
        pid_t procs[8];
        json_t *t, *j;
        long s;
        int ws, np;
        pid_t pid;
        kd k;
        unsigned long long id;
        (void)st;

        setenv("KERFD_TEST_CRASH_AFTER_FORK", "1", 1);
        kd_setup(&k, NULL);
        unsetenv("KERFD_TEST_CRASH_AFTER_FORK");
        /* the submit is committed and answered pending (or not answered: the ticker it woke
         * may get there first), then the ticker's start forks and kerfd exits */
        j = kd_call(&k, "POST", "/v1/tasks",
                    "{\"tenant\":\"alice\",\"name\":\"once\",\"command\":[\"/bin/sleep\",\"60\"]}",
                    NULL, &s, NULL);
        if (s == 201)
                assert_string_equal(json_string_value(json_object_get(j, "state")), "pending");
        json_decref(j);
        ws = kd_wait_exit(&k, 10000);
        assert_true(ws != -1 && WIFEXITED(ws) && WEXITSTATUS(ws) == 86);
        id = 1;
        np = kd_task_procs(&k, id, procs, 8);
        assert_int_equal(np, 1); /* the fork did happen */
        pid = procs[0];

        kd_start(&k); /* no hook this time */
        snprintf(path, sizeof(path), "/v1/tasks/%llu", id);
        t = kd_wait_task(&k, id, "running", 10000);
        assert_non_null(t);
        assert_int_equal(json_integer_value(json_object_get(t, "pid")), pid);
        assert_true(json_array_size(json_object_get(t, "units")) == 1);
        assert_non_null(json_string_value(json_object_get(json_object_get(t, "log"), "stdout")));
        json_decref(t);
        j = kd_event(&k, "recover", "adopted");
        assert_non_null(j);
        json_decref(j);
        /* a few ticks later there is still exactly that one process */
        kd_sleep_ms(300);
        np = kd_task_procs(&k, id, procs, 8);
        assert_int_equal(np, 1);
        assert_int_equal(procs[0], pid);
        /* the adoption was committed: a second restart still knows the pid */
        kd_stop(&k);
        kd_start(&k);
        t = kd_call(&k, "GET", path, NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "running");
        assert_int_equal(json_integer_value(json_object_get(t, "pid")), pid);
        json_decref(t);
        assert_int_equal(kd_task_procs(&k, id, procs, 8), 1);

        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", id);
        json_decref(kd_call(&k, "POST", path, "{\"grace_s\":1}", NULL, &s, NULL));
        assert_int_equal(s, 200);
        t = kd_wait_task(&k, id, NULL, 15000);
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "cancelled");
        json_decref(t);
        for (int i = 0; i < 100 && kd_pid_alive(pid); i++)
                kd_sleep_ms(50);
        assert_false(kd_pid_alive(pid));
        /* the unit is free again and nothing else of the task runs */
        j = kd_call(&k, "GET", "/v1/units", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        for (size_t i = 0; i < json_array_size(json_object_get(j, "items")); i++)
                assert_int_not_equal(json_integer_value(json_object_get(
                                         json_array_get(json_object_get(j, "items"), i), "task")),
                                     (json_int_t)id);
        json_decref(j);
        assert_int_equal(kd_task_procs(&k, id, procs, 8), 0);
        j = kd_call(&k, "POST", "/v1/audit/verify", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_true(json_is_true(json_object_get(j, "ok")));
        json_decref(j);
        kd_stop(&k);
        kd_cleanup(&k);
}

/* The same window, but the task ends while kerfd is down: its supervisor's record names it
 * (issue 8 R1), so it is neither started a second time nor recorded without its status. */
static void test_crash_then_task_ends(void **st)
{
        char body[512], count[300];
        json_t *t, *j;
        long s;
        kd k;
        (void)st;

        setenv("KERFD_TEST_CRASH_AFTER_FORK", "1", 1);
        kd_setup(&k, NULL);
        unsetenv("KERFD_TEST_CRASH_AFTER_FORK");
        snprintf(count, sizeof(count), "%s/runs", k.dir);
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"command\":[\"/bin/sh\",\"-c\",\"echo run >> %s; "
                 "sleep 0.3; exit 7\"]}",
                 count);
        j = kd_call(&k, "POST", "/v1/tasks", body, NULL, &s, NULL);
        json_decref(j);
        int ws = kd_wait_exit(&k, 10000);
        assert_true(ws != -1 && WIFEXITED(ws) && WEXITSTATUS(ws) == 86);
        kd_sleep_ms(1000); /* the task ends while no kerfd runs */
        kd_start(&k);
        t = kd_wait_task(&k, 1, NULL, 10000);
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "failed");
        assert_int_equal(json_integer_value(json_object_get(t, "exit_code")), 7);
        json_decref(t);
        char *runs = kd_read(count);
        assert_non_null(runs);
        assert_string_equal(runs, "run\n"); /* once */
        free(runs);
        kd_stop(&k);
        kd_cleanup(&k);
}

int main(void)
{
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_crash_after_fork),
                                           cmocka_unit_test(test_crash_then_task_ends)};
        return cmocka_run_group_tests(tests, NULL, NULL);
}
