/* SPDX-License-Identifier: Apache-2.0 */
/* test_supervise.c - kerf-supervise: the status file, true exit status after the death of
 * the executor's process (a kerfd kill -9), re-adoption through it, failures to supervise */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <sys/wait.h>

#include "helpers.h"

#define PROBE KERF_EXEC_PROBE

struct fx {
        char *dir;
        kerf_exec *ex;
};

static int setup(void **state)
{
        struct fx *f = calloc(1, sizeof(*f));
        assert_non_null(f);
        f->dir = make_tmpdir();
        assert_non_null(f->dir);
        kerf_exec_config cfg = {.log_dir = f->dir,
                                .run_dir = f->dir,
                                .supervisor = KERF_SUPERVISE_BIN,
                                .leftover_grace_ms = 200,
                                .subreaper = true};
        assert_int_equal(kerf_exec_new(&cfg, &f->ex), 0);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fx *f = *state;
        drain(f->ex);
        assert_int_equal(kerf_exec_count(f->ex), 0);
        kerf_exec_free(f->ex);
        rm_rf(f->dir);
        free(f->dir);
        free(f);
        return 0;
}

static int64_t wall_now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int start_sh(kerf_exec *ex, uint64_t id, const char *script, kerf_exec_proc *p)
{
        const char *argv[] = {"/bin/sh", "-c", script, NULL};
        kerf_exec_spec sp = {.task_id = id, .argv = argv};
        return kerf_exec_start(ex, &sp, p, NULL);
}

static void status_path(struct fx *f, uint64_t id, char *buf, size_t n)
{
        assert_int_equal(kerf__exec_status_path(f->dir, id, buf, n), 0);
}

/* Waits until the status file of `id` records the end; returns 0 and *ret. */
static int wait_ended(struct fx *f, uint64_t id, unsigned timeout_ms, kerf__exec_status *ret)
{
        char path[600];
        uint64_t end = now_ms() + timeout_ms;

        status_path(f, id, path, sizeof(path));
        while (now_ms() < end) {
                if (kerf__exec_status_read(path, ret) == 0 && ret->ended)
                        return 0;
                sleep_ms(10);
        }
        return -ETIMEDOUT;
}

/* Waits until kerf-supervise has written its first record of `id` (it does so right after it
 * starts, off kerfd's start path); returns 0 and *ret. */
static int wait_record(struct fx *f, uint64_t id, unsigned timeout_ms, kerf__exec_status *ret)
{
        char path[600];
        uint64_t end = now_ms() + timeout_ms;

        status_path(f, id, path, sizeof(path));
        while (now_ms() < end) {
                if (kerf__exec_status_read(path, ret) == 0)
                        return 0;
                sleep_ms(2);
        }
        return -ETIMEDOUT;
}

static void test_status_file(void **state)
{
        struct fx *f = *state;
        kerf_exec_proc p;
        kerf_exec_exit e = {0};
        kerf__exec_status st;
        struct stat sb;
        char path[600];
        int64_t t0 = wall_now();

        assert_int_equal(start_sh(f->ex, 1, "sleep 0.3; exit 3", &p), 0);
        assert_true(p.supervisor > 1);
        assert_int_not_equal(p.supervisor, p.pid);
        assert_true(kerf_exec_alive(p.supervisor, p.sup_starttime));
        assert_int_equal(p.pgid, p.pid);
        /* the supervisor leads its own session: nothing aimed at kerfd's group reaches it */
        assert_int_equal(getsid(p.supervisor), p.supervisor);
        assert_int_not_equal(getpgid(p.supervisor), getpgid(0));
        status_path(f, 1, path, sizeof(path));
        assert_int_equal(wait_record(f, 1, 2000, &st), 0);
        assert_false(st.ended);
        assert_int_equal(st.task_id, 1);
        assert_int_equal(st.pid, p.pid);
        assert_int_equal(st.starttime, p.starttime);
        assert_int_equal(st.sup_pid, p.supervisor);
        assert_int_equal(stat(path, &sb), 0);
        assert_int_equal(sb.st_mode & 07777, 0600);

        assert_int_equal(run_to_end(f->ex, 1, 5000, &e), 0);
        assert_int_equal(e.exit_code, 3);
        assert_int_equal(e.signal, 0);
        assert_false(e.unknown);
        assert_true(e.end_wall_ms >= t0 + 250 && e.end_wall_ms <= wall_now());
        /* the record stays until the caller has had a chance to store the end */
        assert_int_equal(kerf__exec_status_read(path, &st), 0);
        assert_true(st.ended);
        assert_true(WIFEXITED(st.status) && WEXITSTATUS(st.status) == 3);
        assert_int_equal(st.end_wall_ms, e.end_wall_ms);
        kerf_exec_exit more[4];
        assert_int_equal(kerf_exec_reap(f->ex, now_ms(), more, 4), 0);
        assert_int_equal(access(path, F_OK), -1);
        /* and the supervisor does not outlive its task */
        for (int i = 0; i < 200 && kerf_exec_alive(p.supervisor, p.sup_starttime); i++) {
                kerf_exec_reap(f->ex, now_ms(), more, 4);
                sleep_ms(10);
        }
        assert_false(kerf_exec_alive(p.supervisor, p.sup_starttime));
}

static void test_signal_status(void **state)
{
        struct fx *f = *state;
        kerf_exec_proc p;
        kerf_exec_exit e = {0};

        assert_int_equal(start_sh(f->ex, 2, "sleep 0.2; kill -9 $$", &p), 0);
        assert_int_equal(run_to_end(f->ex, 2, 5000, &e), 0);
        assert_int_equal(e.exit_code, -1);
        assert_int_equal(e.signal, SIGKILL);
        assert_false(e.unknown);
        assert_false(e.killed); /* not by kerfd */
}

/* "kerfd" (a child with its own executor) starts a task and is killed with SIGKILL: the
 * supervisor and the task live on, the status file gets the true end, and a new executor
 * adopts the task and reports that end. */
static void parent_killed(struct fx *f, uint64_t id, const char *script, int want_code,
                          int want_sig)
{
        int fds[2];
        kerf_exec_proc p;
        kerf__exec_status st;
        kerf_exec_exit e = {0};
        char buf[256];

        assert_int_equal(pipe(fds), 0);
        pid_t kd = fork();
        assert_true(kd >= 0);
        if (kd == 0) {
                kerf_exec_config cfg = {
                    .log_dir = f->dir, .run_dir = f->dir, .supervisor = KERF_SUPERVISE_BIN};
                kerf_exec *ex;
                close(fds[0]);
                if (kerf_exec_new(&cfg, &ex) < 0 || start_sh(ex, id, script, &p) < 0)
                        _exit(1);
                if (write(fds[1], &p, sizeof(p)) != (ssize_t)sizeof(p))
                        _exit(2);
                for (;;)
                        pause();
        }
        close(fds[1]);
        assert_int_equal(read(fds[0], &p, sizeof(p)), (ssize_t)sizeof(p));
        close(fds[0]);
        kill(kd, SIGKILL);
        assert_int_equal(waitpid(kd, NULL, 0), kd);
        assert_true(kerf_exec_alive(p.supervisor, p.sup_starttime));
        assert_true(kerf_exec_alive(p.pid, p.starttime));
        assert_true(kerf_exec_recoverable(f->ex, id, p.pid, p.starttime));

        assert_int_equal(wait_ended(f, id, 5000, &st), 0);
        if (want_sig) {
                assert_true(WIFSIGNALED(st.status));
                assert_int_equal(WTERMSIG(st.status), want_sig);
        } else {
                assert_true(WIFEXITED(st.status));
                assert_int_equal(WEXITSTATUS(st.status), want_code);
        }
        /* ended while no executor watched: still recoverable, with its true status */
        assert_true(kerf_exec_recoverable(f->ex, id, p.pid, p.starttime));
        pid_t found;
        uint64_t found_st;
        assert_int_equal(kerf_exec_find(f->ex, id, &found, &found_st), 0);
        assert_int_equal(found, p.pid);
        assert_int_equal(found_st, p.starttime);
        assert_int_equal(kerf_exec_adopt(f->ex, id, p.pid, p.pgid, p.starttime, NULL), 0);
        assert_int_equal(run_to_end(f->ex, id, 5000, &e), 0);
        assert_false(e.unknown);
        assert_int_equal(e.exit_code, want_sig ? -1 : want_code);
        assert_int_equal(e.signal, want_sig);
        assert_int_equal(e.end_wall_ms, st.end_wall_ms);
        /* the task kept writing to its log after its starter died */
        assert_true(slurp(p.stdout_path, buf, sizeof(buf)) > 0);
        assert_string_equal(buf, "before\nafter\n");
}

static void test_parent_killed_exit(void **state)
{
        parent_killed(*state, 10, "echo before; sleep 0.5; echo after; exit 3", 3, 0);
}

static void test_parent_killed_signal(void **state)
{
        parent_killed(*state, 11, "echo before; sleep 0.5; echo after; kill -9 $$", 0, SIGKILL);
}

static void test_parent_killed_zero(void **state)
{
        parent_killed(*state, 12, "echo before; sleep 0.5; echo after", 0, 0);
}

/* A second executor adopts a live task and sees its true end, not "unknown". */
static void test_adopt_live(void **state)
{
        struct fx *f = *state;
        const char *argv[] = {PROBE, "sleep", NULL};
        kerf_exec_spec sp = {.task_id = 20, .argv = argv};
        kerf_exec_proc p;
        kerf_exec_exit e = {0};

        kerf__exec_status st;
        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), 0);
        assert_int_equal(wait_record(f, 20, 2000, &st), 0);
        kerf_exec_config cfg = {
            .log_dir = f->dir, .run_dir = f->dir, .supervisor = KERF_SUPERVISE_BIN};
        kerf_exec *ex2;
        assert_int_equal(kerf_exec_new(&cfg, &ex2), 0);
        assert_int_equal(kerf_exec_adopt(ex2, 20, p.pid, p.pgid, p.starttime, NULL), 0);
        kerf_exec_proc q;
        assert_int_equal(kerf_exec_get(ex2, 20, &q), 0);
        assert_int_equal(q.supervisor, p.supervisor);
        kill(p.pid, SIGKILL); /* from outside: not a stop of either executor */
        assert_int_equal(run_to_end(ex2, 20, 5000, &e), 0);
        assert_false(e.unknown);
        assert_int_equal(e.signal, SIGKILL);
        assert_int_equal(e.reason, KERF_EXEC_EXITED);
        kerf_exec_free(ex2);
        assert_int_equal(run_to_end(f->ex, 20, 5000, &e), 0);
        assert_int_equal(e.signal, SIGKILL);
}

/* Adopted before its supervisor wrote a first record (a kerfd that died right after the
 * start): the end, once the leader is gone, still comes from the record. */
static void test_adopt_early(void **state)
{
        struct fx *f = *state;
        kerf_exec_proc p;
        kerf_exec_exit e = {0};
        kerf_exec *ex2;

        assert_int_equal(start_sh(f->ex, 21, "sleep 0.3; exit 6", &p), 0);
        kerf_exec_config cfg = {
            .log_dir = f->dir, .run_dir = f->dir, .supervisor = KERF_SUPERVISE_BIN};
        assert_int_equal(kerf_exec_new(&cfg, &ex2), 0);
        assert_int_equal(kerf_exec_adopt(ex2, 21, p.pid, p.pgid, p.starttime, NULL), 0);
        assert_int_equal(run_to_end(ex2, 21, 5000, &e), 0);
        assert_false(e.unknown);
        assert_int_equal(e.exit_code, 6);
        kerf_exec_free(ex2);
        assert_int_equal(run_to_end(f->ex, 21, 5000, &e), 0);
        assert_int_equal(e.exit_code, 6);
}

static void wait_gone(pid_t pid, uint64_t st, kerf_exec *ex)
{
        kerf_exec_exit tmp[4];
        for (int i = 0; i < 300 && kerf_exec_alive(pid, st); i++) {
                kerf_exec_reap(ex, now_ms(), tmp, 4); /* reaps the supervisor zombie */
                sleep_ms(10);
        }
        assert_false(kerf_exec_alive(pid, st));
}

/* A cancel never leaves the supervisor behind: not with a SIGTERM-proof tree, and not with a
 * child that left the task's process group (it is not the supervisor's to wait for). */
static void test_supervisor_never_outlives(void **state)
{
        struct fx *f = *state;
        char pidfile[600];
        kerf_exec_proc p;
        kerf_exec_exit e = {0};

        snprintf(pidfile, sizeof(pidfile), "%s/tree.pid", f->dir);
        const char *tree[] = {PROBE, "tree", pidfile, NULL};
        kerf_exec_spec sp = {.task_id = 60, .argv = tree};
        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), 0);
        assert_true(wait_pidfile(pidfile, 5000) > 0);
        assert_int_equal(kerf_exec_stop(f->ex, 60, KERF_EXEC_CANCEL, 100, now_ms()), 0);
        assert_int_equal(run_to_end(f->ex, 60, 5000, &e), 0);
        assert_int_equal(e.signal, SIGKILL);
        assert_false(e.unknown);
        wait_gone(p.supervisor, p.sup_starttime, f->ex);

        snprintf(pidfile, sizeof(pidfile), "%s/escape.pid", f->dir);
        const char *esc[] = {PROBE, "escape", pidfile, NULL};
        sp.task_id = 61;
        sp.argv = esc;
        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), 0);
        pid_t gone = wait_pidfile(pidfile, 5000);
        assert_true(gone > 0);
        assert_int_equal(kerf_exec_stop(f->ex, 61, KERF_EXEC_CANCEL, 0, now_ms()), 0);
        assert_int_equal(run_to_end(f->ex, 61, 5000, &e), 0);
        assert_int_equal(e.signal, SIGKILL);
        wait_gone(p.supervisor, p.sup_starttime, f->ex);
        kill(gone, SIGKILL); /* the escaped child is not the executor's (no fence here) */
}

/* "kerfd" is killed and its state (the run dir) removed while the task runs: when the task
 * ends, its supervisor cannot write the record anywhere and must not wait for ever. */
static void test_state_removed(void **state)
{
        struct fx *f = *state;
        char run[600], cmd[700];
        int fds[2];
        kerf_exec_proc p;

        snprintf(run, sizeof(run), "%s/gone", f->dir);
        assert_int_equal(mkdir(run, 0700), 0);
        assert_int_equal(pipe(fds), 0);
        pid_t kd = fork();
        assert_true(kd >= 0);
        if (kd == 0) {
                kerf_exec_config cfg = {
                    .log_dir = run, .run_dir = run, .supervisor = KERF_SUPERVISE_BIN};
                kerf_exec *ex;
                close(fds[0]);
                if (kerf_exec_new(&cfg, &ex) < 0 || start_sh(ex, 70, "sleep 0.5", &p) < 0)
                        _exit(1);
                if (write(fds[1], &p, sizeof(p)) != (ssize_t)sizeof(p))
                        _exit(2);
                for (;;)
                        pause();
        }
        close(fds[1]);
        assert_int_equal(read(fds[0], &p, sizeof(p)), (ssize_t)sizeof(p));
        close(fds[0]);
        kill(kd, SIGKILL);
        assert_int_equal(waitpid(kd, NULL, 0), kd);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", run);
        assert_int_equal(system(cmd), 0);
        /* the task ends after 0.5 s; the supervisor then gives up at once (wait_gone: 3 s) */
        wait_gone(p.supervisor, p.sup_starttime, f->ex);
}

/* No record and no process: nothing to adopt (the daemon records "status unknown"). */
static void test_gone_without_record(void **state)
{
        struct fx *f = *state;
        uint64_t st;
        pid_t pid = fork();

        assert_true(pid >= 0);
        if (pid == 0)
                _exit(0);
        assert_int_equal(kerf_exec_starttime(pid, &st), 0);
        assert_int_equal(waitpid(pid, NULL, 0), pid);
        assert_false(kerf_exec_recoverable(f->ex, 30, pid, st));
        assert_int_equal(kerf_exec_adopt(f->ex, 30, pid, pid, st, NULL), -ESRCH);
        pid_t fp;
        assert_int_equal(kerf_exec_find(f->ex, 30, &fp, &st), -ENOENT);
}

static void test_supervisor_missing(void **state)
{
        struct fx *f = *state;
        const char *argv[] = {PROBE, "sleep", NULL};
        kerf_exec_spec sp = {.task_id = 40, .argv = argv};
        kerf_exec_proc p;
        kerf_exec_failure fail = {0};
        kerf_exec *ex2;

        char *sup = stage_program(KERF_SUPERVISE_BIN, f->dir, "kerf-supervise");
        assert_non_null(sup);
        kerf_exec_config cfg = {.log_dir = f->dir, .run_dir = f->dir, .supervisor = sup};
        assert_int_equal(kerf_exec_new(&cfg, &ex2), 0);
        unlink(sup);
        assert_int_equal(kerf_exec_start(ex2, &sp, &p, &fail), -ENOENT);
        assert_int_equal(fail.stage, KERF_EXEC_STAGE_SUPERVISE);
        assert_string_equal(kerf_exec_stage_name(fail.stage), "supervise");
        assert_int_equal(kerf_exec_count(ex2), 0);
        assert_int_equal(waitpid(-1, NULL, WNOHANG), -1); /* nothing left, not even a zombie */
        kerf_exec_free(ex2);
        assert_int_equal(kerf_exec_new(&cfg, &ex2), -ENOENT); /* refused up front */
        free(sup);

        /* a supervisor that dies at once (here: not kerf-supervise at all) writes no record:
         * the task is still watched by pid; this process is a subreaper (setup), so the
         * orphaned leader is its child and its true status is still collected */
        cfg.supervisor = "/bin/true";
        assert_int_equal(kerf_exec_new(&cfg, &ex2), 0);
        sp.task_id = 41;
        assert_int_equal(kerf_exec_start(ex2, &sp, &p, &fail), 0);
        kerf_exec_exit e = {0}, tmp[4];
        for (int i = 0; i < 20; i++) {
                assert_int_equal(kerf_exec_reap(ex2, now_ms(), tmp, 4), 0);
                sleep_ms(10);
        }
        assert_true(kerf_exec_alive(p.pid, p.starttime));
        assert_int_equal(kerf_exec_stop(ex2, 41, KERF_EXEC_CANCEL, 0, now_ms()), 0);
        assert_int_equal(run_to_end(ex2, 41, 5000, &e), 0);
        assert_false(e.unknown);
        assert_int_equal(e.signal, SIGKILL);
        assert_int_equal(e.reason, KERF_EXEC_CANCEL);
        kerf_exec_free(ex2);
}

static void test_sweep(void **state)
{
        struct fx *f = *state;
        kerf_exec_proc p;
        char stale[600], live[600];
        kerf__exec_status st = {.task_id = 99, .sup_pid = 0x3ffffff0, .pid = 0x3ffffff1};

        status_path(f, 99, stale, sizeof(stale));
        assert_int_equal(kerf__exec_status_write(stale, &st, true), 0);
        assert_int_equal(start_sh(f->ex, 50, "sleep 5", &p), 0);
        assert_int_equal(wait_record(f, 50, 2000, &st), 0);
        status_path(f, 50, live, sizeof(live));
        assert_int_equal(kerf_exec_sweep(f->ex), 1);
        assert_int_equal(access(stale, F_OK), -1);
        assert_int_equal(access(live, F_OK), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_status_file, setup, teardown),
            cmocka_unit_test_setup_teardown(test_signal_status, setup, teardown),
            cmocka_unit_test_setup_teardown(test_parent_killed_exit, setup, teardown),
            cmocka_unit_test_setup_teardown(test_parent_killed_signal, setup, teardown),
            cmocka_unit_test_setup_teardown(test_parent_killed_zero, setup, teardown),
            cmocka_unit_test_setup_teardown(test_adopt_live, setup, teardown),
            cmocka_unit_test_setup_teardown(test_adopt_early, setup, teardown),
            cmocka_unit_test_setup_teardown(test_supervisor_never_outlives, setup, teardown),
            cmocka_unit_test_setup_teardown(test_state_removed, setup, teardown),
            cmocka_unit_test_setup_teardown(test_gone_without_record, setup, teardown),
            cmocka_unit_test_setup_teardown(test_supervisor_missing, setup, teardown),
            cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
