/* SPDX-License-Identifier: Apache-2.0 */
/* test_restart_exit.c - issue 8 R1: a task's exit status survives a kill -9 of kerfd. Tasks
 * that exit 3, are SIGKILLed or exit 0, while kerfd is down or after it restarted, are
 * recorded with their true status; one whose supervisor was killed too is "failed, exit
 * status unknown", never "succeeded"; `kerf run` waits out the restart and exits with the
 * task's code */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static kd K;

static int64_t wall_ms(void)
{
        struct timeval tv;
        gettimeofday(&tv, NULL);
        return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static unsigned long long submit_sh(const char *tenant, const char *script)
{
        json_t *b =
            json_pack("{s:s, s:[s,s,s]}", "tenant", tenant, "command", "/bin/sh", "-c", script);
        char *text = json_dumps(b, JSON_COMPACT);
        unsigned long long id = kd_submit(&K, text, NULL);
        free(text);
        json_decref(b);
        return id;
}

static pid_t task_pid(unsigned long long id)
{
        json_t *t = kd_wait_task(&K, id, "running", 15000);
        if (!t)
                fail_msg("task %llu never ran", id);
        pid_t p = (pid_t)json_integer_value(json_object_get(t, "pid"));
        json_decref(t);
        assert_true(p > 1);
        return p;
}

static pid_t parent_of(pid_t pid)
{
        char path[64], buf[512];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return -1;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        char *p = strrchr(buf, ')');
        int ppid = -1;
        if (!p || sscanf(p + 2, "%*c %d", &ppid) != 1)
                return -1;
        return ppid;
}

/* Checks the recorded end of task `id`: state, exit code (-1: null) and signal (0: null). */
static json_t *check_end(unsigned long long id, const char *state, int code, int sig)
{
        json_t *t = kd_wait_task(&K, id, NULL, 20000);
        if (!t)
                fail_msg("task %llu did not end", id);
        const char *st = json_string_value(json_object_get(t, "state"));
        json_t *ec = json_object_get(t, "exit_code"), *sg = json_object_get(t, "signal");
        if (!st || strcmp(st, state) != 0 ||
            (code < 0 ? !json_is_null(ec) : json_integer_value(ec) != code) ||
            (sig == 0 ? !json_is_null(sg) : json_integer_value(sg) != sig))
                fail_msg("task %llu: %s exit_code %lld signal %lld (%s); want %s %d %d", id,
                         st ? st : "?", json_integer_value(ec), json_integer_value(sg),
                         json_string_value(json_object_get(json_object_get(t, "reason"), "text")),
                         state, code, sig);
        return t;
}

/* `kerf run` in a child process; returns its pid, its exit status comes from waitpid. */
static pid_t kerf_run(const char *script, const char *errfile)
{
        pid_t p = fork();
        assert_true(p >= 0);
        if (p == 0) {
                int fe = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                int fi = open("/dev/null", O_RDWR);
                if (fe < 0 || fi < 0)
                        _exit(126);
                dup2(fi, 0);
                dup2(fi, 1);
                dup2(fe, 2);
                unsetenv("KERF_TOKEN");
                unsetenv("KERF_SOCKET");
                execl(KERF_CLI, "kerf", "--socket", K.sock, "run", "--tenant", "alice", "--",
                      "/bin/sh", "-c", script, (char *)NULL);
                _exit(127);
        }
        return p;
}

static void test_restart_exit(void **st)
{
        char runfile[400], errfile[400], path[64];
        json_t *t;
        long s;
        (void)st;

        kd_setup(&K, NULL);
        snprintf(errfile, sizeof(errfile), "%s/run.err", K.dir);
        /* end while kerfd is down */
        unsigned long long down3 = submit_sh("alice", "sleep 2; exit 3");
        unsigned long long down9 = submit_sh("bob", "sleep 2; kill -9 $$");
        unsigned long long down0 = submit_sh("alice", "echo before; sleep 2; echo after");
        /* end after the restart */
        unsigned long long after4 = submit_sh("bob", "sleep 6; exit 4");
        unsigned long long after9 = submit_sh("alice", "sleep 6; kill -9 $$");
        unsigned long long after0 = submit_sh("bob", "sleep 6");
        /* loses its supervisor and its process while kerfd is down */
        unsigned long long lost = submit_sh("alice", "sleep 60");
        pid_t run = kerf_run("sleep 5; exit 5", errfile);

        pid_t lost_pid = task_pid(lost);
        task_pid(down3);
        task_pid(down9);
        task_pid(down0);
        task_pid(after4);
        task_pid(after9);
        task_pid(after0);
        pid_t lost_sup = parent_of(lost_pid);
        assert_true(lost_sup > 1);
        assert_int_not_equal(lost_sup, K.pid); /* the task's parent is its supervisor */
        /* `kerf run`'s task is running too (its id is the highest), and kerf run has its
         * answer (killing kerfd before it would test the submit, not the restart) */
        task_pid(lost + 1);
        for (int i = 0; i < 200; i++) {
                char *err = kd_read(errfile);
                bool got = err && strstr(err, "submitted");
                free(err);
                if (got)
                        break;
                kd_sleep_ms(20);
        }

        kd_kill9(&K);
        int64_t killed_ms = wall_ms();
        kill(lost_sup, SIGKILL);
        kill(-lost_pid, SIGKILL);
        kd_sleep_ms(3000); /* the 2 s tasks end while no kerfd runs */
        for (unsigned long long id = down3; id <= down0; id++) {
                char *rec;
                snprintf(runfile, sizeof(runfile), "%s/state/run/task-%llu.status", K.dir, id);
                rec = kd_read(runfile);
                struct stat sb;
                /* the records are kerfd's alone: they name pids that kerfd signals */
                assert_int_equal(stat(runfile, &sb), 0);
                assert_int_equal(sb.st_mode & 07777, 0600);
                if (!rec || !strstr(rec, "state ended"))
                        fail_msg("task %llu: no end recorded by its supervisor: %s", id,
                                 rec ? rec : "(no file)");
                free(rec);
        }
        struct stat rd;
        snprintf(runfile, sizeof(runfile), "%s/state/run", K.dir);
        assert_int_equal(stat(runfile, &rd), 0);
        assert_int_equal(rd.st_mode & 07777, 0700);
        int64_t restart_ms = wall_ms();
        kd_start(&K);

        t = check_end(down3, "failed", 3, 0);
        /* its end time is when it ended, not when kerfd came back */
        assert_true(json_integer_value(json_object_get(t, "ended_ms")) >= killed_ms);
        assert_true(json_integer_value(json_object_get(t, "ended_ms")) <= restart_ms);
        json_decref(t);
        json_decref(check_end(down9, "failed", -1, 9));
        t = check_end(down0, "succeeded", 0, 0);
        assert_true(json_integer_value(json_object_get(t, "ended_ms")) <= restart_ms);
        json_decref(t);
        /* its log kept both lines, across the restart */
        snprintf(path, sizeof(path), "/v1/tasks/%llu/logs?stream=stdout", down0);
        t = kd_call(&K, "GET", path, NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_string_equal(json_string_value(json_object_get(t, "data")), "before\nafter\n");
        json_decref(t);

        t = check_end(lost, "failed", -1, 0);
        assert_string_equal(json_string_value(json_object_get(t, "end_reason")), "failure");
        assert_non_null(
            strstr(json_string_value(json_object_get(json_object_get(t, "reason"), "text")),
                   "exit status unknown"));
        json_decref(t);

        t = check_end(after4, "failed", 4, 0);
        assert_true(json_integer_value(json_object_get(t, "ended_ms")) > restart_ms);
        json_decref(t);
        json_decref(check_end(after9, "failed", -1, 9));
        json_decref(check_end(after0, "succeeded", 0, 0));

        /* kerf run waited out the restart and exits with its task's code */
        int ws = -1;
        for (int i = 0; i < 300 && waitpid(run, &ws, WNOHANG) != run; i++)
                kd_sleep_ms(100);
        if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 5) {
                char *err = kd_read(errfile);
                kill(run, SIGKILL);
                fail_msg("kerf run across a restart: status %#x; stderr: %s", ws, err ? err : "");
        }

        /* collected records go once the ends are stored */
        kd_sleep_ms(300);
        for (unsigned long long id = down3; id <= lost + 1; id++) {
                snprintf(runfile, sizeof(runfile), "%s/state/run/task-%llu.status", K.dir, id);
                if (access(runfile, F_OK) == 0)
                        fail_msg("%s still there after the end was stored", runfile);
        }
        t = kd_call(&K, "POST", "/v1/audit/verify", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_true(json_is_true(json_object_get(t, "ok")));
        json_decref(t);
        kd_stop(&K);
        kd_cleanup(&K);
}

int main(void)
{
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_restart_exit)};
        return cmocka_run_group_tests(tests, NULL, NULL);
}
