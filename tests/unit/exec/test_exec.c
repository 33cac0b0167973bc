/* SPDX-License-Identifier: Apache-2.0 */
/* test_exec.c - executor: exit status, exec failures, logs, env, cwd, stop, alive, adopt, the
 * start in three steps (launch) */
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
        uint64_t next_id;
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
        f->next_id = 1;
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

/* Starts argv as a new task; returns kerf_exec_start's result. */
static int start(struct fx *f, const char *const *argv, const char *const *env, const char *cwd,
                 kerf_exec_proc *p, kerf_exec_failure *fail)
{
        kerf_exec_spec sp = {.task_id = f->next_id++, .argv = argv, .env = env, .cwd = cwd};
        return kerf_exec_start(f->ex, &sp, p, fail);
}

static void test_exit_code(void **state)
{
        struct fx *f = *state;
        const char *argv[] = {PROBE, "exit", "7", NULL};
        kerf_exec_proc p;
        kerf_exec_exit e = {0};

        assert_int_equal(start(f, argv, NULL, NULL, &p, NULL), 0);
        assert_true(p.pid > 0);
        assert_int_equal(p.pgid, p.pid);
        assert_true(p.starttime > 0);
        assert_int_equal(run_to_end(f->ex, p.task_id, 5000, &e), 0);
        assert_int_equal(e.exit_code, 7);
        assert_int_equal(e.signal, 0);
        assert_false(e.unknown);
        assert_false(e.killed);
        assert_int_equal(e.reason, KERF_EXEC_EXITED);
        assert_false(kerf_exec_alive(p.pid, p.starttime));
}

static void test_signal(void **state)
{
        struct fx *f = *state;
        const char *argv[] = {PROBE, "raise", "10", NULL}; /* SIGUSR1 */
        kerf_exec_proc p;
        kerf_exec_exit e = {0};

        assert_int_equal(start(f, argv, NULL, NULL, &p, NULL), 0);
        assert_int_equal(run_to_end(f->ex, p.task_id, 5000, &e), 0);
        assert_int_equal(e.exit_code, -1);
        assert_int_equal(e.signal, SIGUSR1);
}

static void test_exec_failures(void **state)
{
        struct fx *f = *state;
        kerf_exec_proc p;
        kerf_exec_failure fail = {0};
        char path[600];

        const char *a1[] = {"/nonexistent/kerf-no-such-binary", NULL};
        assert_int_equal(start(f, a1, NULL, NULL, &p, &fail), -ENOENT);
        assert_int_equal(fail.stage, KERF_EXEC_STAGE_EXEC);
        assert_int_equal(fail.err, ENOENT);

        const char *a2[] = {"kerf-no-such-command-anywhere", NULL};
        assert_int_equal(start(f, a2, NULL, NULL, &p, &fail), -ENOENT);
        assert_int_equal(fail.stage, KERF_EXEC_STAGE_EXEC);

        snprintf(path, sizeof(path), "%s/not-executable", f->dir);
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        close(fd);
        const char *a3[] = {path, NULL};
        assert_int_equal(start(f, a3, NULL, NULL, &p, &fail), -EACCES);
        assert_int_equal(fail.stage, KERF_EXEC_STAGE_EXEC);
        assert_int_equal(fail.err, EACCES);

        const char *a4[] = {PROBE, "exit", "0", NULL};
        assert_int_equal(start(f, a4, NULL, "/nonexistent-cwd", &p, &fail), -ENOENT);
        assert_int_equal(fail.stage, KERF_EXEC_STAGE_CWD);
        assert_string_equal(kerf_exec_stage_name(fail.stage), "cwd");

        /* Nothing was left running or tracked, and no zombie remains. */
        assert_int_equal(kerf_exec_count(f->ex), 0);
        assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
}

static void test_validation(void **state)
{
        struct fx *f = *state;
        kerf_exec_proc p;
        kerf_exec_failure fail;
        const char *argv[] = {PROBE, "sleep", NULL};
        const char *empty[] = {"", NULL};
        const char *badenv[] = {"NOEQUALS", NULL};

        kerf_exec_spec sp = {.task_id = 0, .argv = argv};
        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, &fail), -EINVAL);
        assert_int_equal(fail.stage, KERF_EXEC_STAGE_SETUP);
        sp.task_id = 100;
        sp.argv = empty;
        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), -EINVAL);
        sp.argv = argv;
        sp.env = badenv;
        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), -EINVAL);
        sp.env = NULL;
        kerf_exec_unit u = {.kind = KERF_UNIT_SLICE, .visible_devices = "GPU-1"};
        sp.unit = &u; /* slice without shim/region */
        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), -EINVAL);
        sp.unit = NULL;
        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), 0);
        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), -EEXIST);
        assert_int_equal(kerf_exec_stop(f->ex, 999, KERF_EXEC_CANCEL, 0, now_ms()), -ENOENT);
        assert_int_equal(kerf_exec_stop(f->ex, 100, KERF_EXEC_EXITED, 0, now_ms()), -EINVAL);
        kerf_exec_config bad = {.log_dir = "relative"};
        kerf_exec *ex2 = NULL;
        assert_int_equal(kerf_exec_new(&bad, &ex2), -EINVAL);
        assert_null(ex2);
}

static void test_logs(void **state)
{
        struct fx *f = *state;
        const char *argv[] = {PROBE, "echo", "to-stdout", "to-stderr", NULL};
        kerf_exec_proc p;
        kerf_exec_exit e = {0};
        char buf[256];

        kerf_exec_spec sp = {.task_id = 42, .argv = argv};
        for (int i = 0; i < 2; i++) { /* a restarted task appends to its logs */
                assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), 0);
                assert_int_equal(run_to_end(f->ex, 42, 5000, &e), 0);
                assert_int_equal(e.exit_code, 0);
        }
        char want[600];
        snprintf(want, sizeof(want), "%s/42.out", f->dir);
        assert_string_equal(p.stdout_path, want);
        assert_true(slurp(p.stdout_path, buf, sizeof(buf)) > 0);
        assert_string_equal(buf, "to-stdout\nto-stdout\n");
        assert_true(slurp(p.stderr_path, buf, sizeof(buf)) > 0);
        assert_string_equal(buf, "to-stderr\nto-stderr\n");
        struct stat st;
        assert_int_equal(stat(p.stdout_path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0640);

        const char *in[] = {PROBE, "stdin", NULL};
        sp.task_id = 43;
        sp.argv = in;
        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), 0);
        assert_int_equal(run_to_end(f->ex, 43, 5000, &e), 0);
        assert_int_equal(e.exit_code, 0);
}

static void test_env_clean(void **state)
{
        struct fx *f = *state;
        const char *argv[] = {PROBE, "env", NULL};
        const char *env[] = {"FOO=bar", "KERF_EVIL=1", "CUDA_VISIBLE_DEVICES=all", NULL};
        kerf_exec_unit u = {.kind = KERF_UNIT_WHOLE, .visible_devices = "GPU-1234", .unit_id = 9};
        kerf_exec_proc p;
        kerf_exec_exit e = {0};
        static char buf[16384];

        setenv("KERF_TEST_LEAK", "1", 1);
        kerf_exec_spec sp = {.task_id = 5,
                             .argv = argv,
                             .env = env,
                             .unit = &u,
                             .socket_path = "/run/kerf/kerfd.sock"};
        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), 0);
        assert_int_equal(run_to_end(f->ex, 5, 5000, &e), 0);
        assert_true(slurp(p.stdout_path, buf, sizeof(buf)) > 0);
        assert_non_null(strstr(buf, "FOO=bar\n"));
        assert_non_null(strstr(buf, "CUDA_VISIBLE_DEVICES=GPU-1234\n"));
        assert_non_null(strstr(buf, "KERF_TASK_ID=5\n"));
        assert_non_null(strstr(buf, "KERF_UNIT_ID=9\n"));
        assert_non_null(strstr(buf, "KERF_UNIT_KIND=whole\n"));
        assert_non_null(strstr(buf, "KERF_SOCKET=/run/kerf/kerfd.sock\n"));
        assert_non_null(strstr(buf, "PATH=/usr/local/sbin:"));
        assert_null(strstr(buf, "KERF_TEST_LEAK"));
        assert_null(strstr(buf, "KERF_EVIL"));
        assert_null(strstr(buf, "CUDA_VISIBLE_DEVICES=all"));
        assert_null(strstr(buf, "LD_PRELOAD"));
        assert_null(strstr(buf, "HOME="));
        unsetenv("KERF_TEST_LEAK");
}

static bool has(char **env, const char *entry)
{
        for (; env && *env; env++)
                if (strcmp(*env, entry) == 0)
                        return true;
        return false;
}

static void test_env_slice_contract(void **state)
{
        struct fx *f = *state;
        kerf_exec_unit u = {.kind = KERF_UNIT_SLICE,
                            .visible_devices = "GPU-abc",
                            .unit_id = 3,
                            .shim_path = "/usr/lib/kerf/libkerf-cuda.so",
                            .region_path = "/var/lib/kerf/slices/task-8.slice",
                            .memory_limit = 8ULL << 30,
                            .compute_pct = 25,
                            .compute_limit_pct = 60};
        char **env = NULL;

        assert_int_equal(kerf_exec_unit_env(&u, 8, NULL, &env), 0);
        assert_true(has(env, "CUDA_VISIBLE_DEVICES=GPU-abc"));
        assert_true(has(env, "LD_PRELOAD=/usr/lib/kerf/libkerf-cuda.so"));
        assert_true(has(env, "KERF_SLICE_ABI=2"));
        assert_true(has(env, "KERF_SLICE_REGION=/var/lib/kerf/slices/task-8.slice"));
        assert_true(has(env, "KERF_SLICE_MEMORY_LIMIT=8589934592"));
        assert_true(has(env, "KERF_SLICE_COMPUTE_PCT=25"));
        assert_true(has(env, "KERF_SLICE_COMPUTE_LIMIT_PCT=60"));
        assert_true(has(env, "KERF_SLICE_UNIT_ID=3"));
        assert_true(has(env, "KERF_SLICE_TASK_ID=8"));
        kerf_exec_env_free(env);

        /* no shim installed (empty path): the contract variables stay, LD_PRELOAD goes */
        u.shim_path = "";
        env = NULL;
        assert_int_equal(kerf_exec_unit_env(&u, 8, NULL, &env), 0);
        assert_true(has(env, "KERF_SLICE_REGION=/var/lib/kerf/slices/task-8.slice"));
        for (char **e = env; *e; e++)
                assert_null(strstr(*e, "LD_PRELOAD"));
        kerf_exec_env_free(env);
        u.shim_path = NULL;
        assert_int_equal(kerf_exec_unit_env(&u, 8, NULL, &env), -EINVAL);

        /* The user's LD_PRELOAD comes after the shim. */
        const char *argv[] = {PROBE, "env", NULL};
        const char *uenv[] = {"LD_PRELOAD=/opt/x.so", NULL};
        u.shim_path = "/nonexistent/libkerf-cuda.so"; /* ld.so warns, the probe still runs */
        kerf_exec_spec sp = {.task_id = 8, .argv = argv, .env = uenv, .unit = &u};
        kerf_exec_proc p;
        kerf_exec_exit e = {0};
        static char buf[16384];
        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), 0);
        assert_int_equal(run_to_end(f->ex, 8, 5000, &e), 0);
        assert_true(slurp(p.stdout_path, buf, sizeof(buf)) > 0);
        assert_non_null(strstr(buf, "LD_PRELOAD=/nonexistent/libkerf-cuda.so /opt/x.so\n"));

        u.compute_limit_pct = 10; /* below the guarantee */
        assert_int_equal(kerf_exec_unit_env(&u, 8, NULL, &env), -EINVAL);
        kerf_exec_unit m = {.kind = KERF_UNIT_MPS,
                            .visible_devices = "GPU-m",
                            .memory_limit = 1ULL << 30,
                            .mps_thread_pct = 30,
                            .mps_pipe_dir = "/run/kerf/mps0"};
        assert_int_equal(kerf_exec_unit_env(&m, 9, NULL, &env), 0);
        assert_true(has(env, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=30"));
        assert_true(has(env, "CUDA_MPS_PIPE_DIRECTORY=/run/kerf/mps0"));
        assert_true(has(env, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=1024M"));
        kerf_exec_env_free(env);
        assert_int_equal(kerf_exec_unit_env(NULL, 9, NULL, &env), 0);
        assert_true(has(env, "CUDA_VISIBLE_DEVICES="));
        kerf_exec_env_free(env);
}

/* Simulated fleet: KERF_SIM_DIR from kerfd (a submitted one is dropped), kerfd's library
 * dir first in LD_LIBRARY_PATH, the task's own entries after it. */
static void test_env_sim(void **state)
{
        struct fx *f = *state;
        const char *argv[] = {PROBE, "env", NULL};
        const char *env[] = {"LD_LIBRARY_PATH=/opt/l", "KERF_SIM_DIR=/forged", NULL};
        kerf_exec_spec sp = {.task_id = 12,
                             .argv = argv,
                             .env = env,
                             .sim_dir = "/var/lib/kerf/sim",
                             .lib_dir = "/usr/lib/kerf"};
        kerf_exec_proc p;
        kerf_exec_exit e = {0};
        static char buf[16384];

        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), 0);
        assert_int_equal(run_to_end(f->ex, 12, 5000, &e), 0);
        assert_true(slurp(p.stdout_path, buf, sizeof(buf)) > 0);
        assert_non_null(strstr(buf, "KERF_SIM_DIR=/var/lib/kerf/sim\n"));
        assert_non_null(strstr(buf, "LD_LIBRARY_PATH=/usr/lib/kerf:/opt/l\n"));
        assert_null(strstr(buf, "/forged"));
        /* without a task value: the library dir alone */
        sp.env = NULL;
        sp.task_id = 13;
        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), 0);
        assert_int_equal(run_to_end(f->ex, 13, 5000, &e), 0);
        assert_true(slurp(p.stdout_path, buf, sizeof(buf)) > 0);
        assert_non_null(strstr(buf, "LD_LIBRARY_PATH=/usr/lib/kerf\n"));
        /* a library dir that would split the search path is refused */
        sp.task_id = 14;
        sp.lib_dir = "/a:/b";
        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), -EINVAL);
}

static void test_cwd_and_path(void **state)
{
        struct fx *f = *state;
        const char *argv[] = {PROBE, "cwd", NULL};
        kerf_exec_proc p;
        kerf_exec_exit e = {0};
        char buf[1024], want[1024];

        assert_int_equal(start(f, argv, NULL, f->dir, &p, NULL), 0);
        assert_int_equal(run_to_end(f->ex, p.task_id, 5000, &e), 0);
        assert_true(slurp(p.stdout_path, buf, sizeof(buf)) > 0);
        assert_non_null(realpath(f->dir, want));
        strcat(want, "\n");
        assert_string_equal(buf, want);

        const char *t[] = {"true", NULL}; /* found in the default PATH */
        assert_int_equal(start(f, t, NULL, NULL, &p, NULL), 0);
        assert_int_equal(run_to_end(f->ex, p.task_id, 5000, &e), 0);
        assert_int_equal(e.exit_code, 0);
}

static void test_cancel_group(void **state)
{
        struct fx *f = *state;
        char pidfile[600];
        kerf_exec_proc p;
        kerf_exec_exit e = {0};

        snprintf(pidfile, sizeof(pidfile), "%s/grandchild.pid", f->dir);
        const char *argv[] = {PROBE, "tree", pidfile, NULL};
        assert_int_equal(start(f, argv, NULL, NULL, &p, NULL), 0);
        pid_t gc = wait_pidfile(pidfile, 5000);
        assert_true(gc > 0);
        uint64_t gc_start;
        assert_int_equal(kerf_exec_starttime(gc, &gc_start), 0);
        assert_true(kerf_exec_alive(gc, gc_start));

        uint64_t t0 = now_ms();
        assert_int_equal(kerf_exec_stop(f->ex, p.task_id, KERF_EXEC_CANCEL, 300, t0), 0);
        assert_true(kerf_exec_next_deadline(f->ex) <= t0 + 300);
        /* Both ignore SIGTERM: still there before the grace period ends. */
        kerf_exec_exit tmp[4];
        assert_int_equal(kerf_exec_reap(f->ex, t0 + 100, tmp, 4), 0);
        sleep_ms(50);
        assert_true(kerf_exec_alive(gc, gc_start));
        assert_int_equal(run_to_end(f->ex, p.task_id, 5000, &e), 0);
        assert_true(now_ms() >= t0 + 300);
        assert_int_equal(e.reason, KERF_EXEC_CANCEL);
        assert_true(e.killed);
        assert_int_equal(e.signal, SIGKILL);
        assert_false(kerf_exec_alive(gc, gc_start));
        assert_false(kerf_exec_alive(p.pid, p.starttime));
}

static void test_cancel_graceful(void **state)
{
        struct fx *f = *state;
        const char *argv[] = {PROBE, "sleep", NULL};
        kerf_exec_proc p;
        kerf_exec_exit e = {0};

        assert_int_equal(start(f, argv, NULL, NULL, &p, NULL), 0);
        assert_int_equal(kerf_exec_stop(f->ex, p.task_id, KERF_EXEC_TIMEOUT, 5000, now_ms()), 0);
        /* A second stop never extends the deadline, and keeps the first reason. */
        assert_int_equal(kerf_exec_stop(f->ex, p.task_id, KERF_EXEC_IDLE, 60000, now_ms()), 0);
        assert_int_equal(run_to_end(f->ex, p.task_id, 4000, &e), 0);
        assert_int_equal(e.signal, SIGTERM);
        assert_false(e.killed);
        assert_int_equal(e.reason, KERF_EXEC_TIMEOUT);
        assert_string_equal(kerf_exec_reason_name(e.reason), "timeout");
}

static void test_leftovers_after_exit(void **state)
{
        struct fx *f = *state;
        char pidfile[600];
        kerf_exec_proc p;
        kerf_exec_exit e = {0};

        snprintf(pidfile, sizeof(pidfile), "%s/orphan.pid", f->dir);
        const char *argv[] = {PROBE, "orphan", pidfile, NULL};
        assert_int_equal(start(f, argv, NULL, NULL, &p, NULL), 0);
        pid_t gc = wait_pidfile(pidfile, 5000);
        assert_true(gc > 0);
        uint64_t gc_start;
        assert_int_equal(kerf_exec_starttime(gc, &gc_start), 0);
        /* Reported only once the leftover (SIGTERM-proof) is gone, after the 200 ms linger. */
        assert_int_equal(run_to_end(f->ex, p.task_id, 5000, &e), 0);
        assert_int_equal(e.exit_code, 0);
        assert_int_equal(e.reason, KERF_EXEC_EXITED);
        assert_true(e.killed);
        assert_false(kerf_exec_alive(gc, gc_start));
}

static void test_alive(void **state)
{
        (void)state;
        uint64_t st;

        assert_int_equal(kerf_exec_starttime(getpid(), &st), 0);
        assert_true(kerf_exec_alive(getpid(), st));
        assert_false(kerf_exec_alive(getpid(), st + 1)); /* a reused pid */
        assert_false(kerf_exec_alive(0, st));
        assert_false(kerf_exec_alive(-1, st));
        assert_int_equal(kerf_exec_starttime(0x3ffffff0, &st), -ESRCH);
        assert_false(kerf_exec_alive(0x3ffffff0, 0));
        assert_int_equal(kerf_exec_starttime(-5, &st), -EINVAL);
}

static void test_adopt(void **state)
{
        struct fx *f = *state;
        const char *argv[] = {PROBE, "sleep", NULL};
        kerf_exec_proc p;
        kerf_exec_exit e = {0};

        assert_int_equal(start(f, argv, NULL, NULL, &p, NULL), 0);
        /* A "restarted daemon": a second executor adopts the running task. */
        kerf_exec_config cfg = {
            .log_dir = f->dir, .run_dir = f->dir, .supervisor = KERF_SUPERVISE_BIN};
        kerf_exec *ex2;
        assert_int_equal(kerf_exec_new(&cfg, &ex2), 0);
        assert_int_equal(kerf_exec_adopt(ex2, 77, p.pid, p.pgid, p.starttime + 1, NULL), -ESRCH);
        assert_int_equal(kerf_exec_adopt(ex2, 77, p.pid, p.pgid, p.starttime, NULL), 0);
        assert_int_equal(kerf_exec_adopt(ex2, 77, p.pid, p.pgid, p.starttime, NULL), -EEXIST);
        kerf_exec_proc q;
        assert_int_equal(kerf_exec_get(ex2, 77, &q), 0);
        assert_int_equal(q.pid, p.pid);
        assert_int_equal(kerf_exec_stop(ex2, 77, KERF_EXEC_CANCEL, 0, now_ms()), 0);
        assert_int_equal(run_to_end(ex2, 77, 5000, &e), 0);
        assert_true(e.unknown); /* not its child */
        assert_int_equal(e.reason, KERF_EXEC_CANCEL);
        kerf_exec_free(ex2);
        /* The first executor still owns the child and reaps its status. */
        assert_int_equal(run_to_end(f->ex, p.task_id, 5000, &e), 0);
        assert_int_equal(e.signal, SIGKILL);
}

static void test_run_as(void **state)
{
        struct fx *f = *state;
        const char *argv[] = {PROBE, "ids", NULL};
        char *staged = NULL;
        kerf_exec_proc p;
        kerf_exec_exit e = {0};
        kerf_exec_failure fail;
        char buf[128];

        kerf_exec_spec sp = {
            .task_id = 300, .argv = argv, .run_as = true, .uid = 65534, .gid = 65534};
        if (geteuid() != 0) {
                assert_int_equal(kerf_exec_start(f->ex, &sp, &p, &fail), -EPERM);
                skip(); /* the switch itself needs root */
        }
        chmod(f->dir, 0755);
        /* the uid-65534 task must reach its program wherever the checkout is */
        staged = stage_program(PROBE, f->dir, "probe");
        assert_non_null(staged);
        argv[0] = staged;
        assert_int_equal(kerf_exec_start(f->ex, &sp, &p, NULL), 0);
        assert_int_equal(run_to_end(f->ex, 300, 5000, &e), 0);
        assert_int_equal(e.exit_code, 0);
        assert_true(slurp(p.stdout_path, buf, sizeof(buf)) > 0);
        assert_string_equal(buf, "65534 65534 0\n");

        /* The refusal when not root, checked in a child that drops root for good (with a
         * supervisor it can reach, as for the probe). */
        char *sup = stage_program(KERF_SUPERVISE_BIN, f->dir, "kerf-supervise");
        assert_non_null(sup);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
                kerf_exec_config cfg = {.log_dir = "/tmp", .run_dir = "/tmp", .supervisor = sup};
                kerf_exec *ex;
                if (setgid(65534) < 0 || setuid(65534) < 0 || kerf_exec_new(&cfg, &ex) < 0)
                        _exit(10);
                sp.task_id = 301;
                sp.uid = 0; /* back to root: refused */
                sp.gid = 0;
                int r = kerf_exec_start(ex, &sp, &p, NULL);
                sp.uid = 1000; /* another user: refused */
                sp.gid = 1000;
                int r2 = kerf_exec_start(ex, &sp, &p, NULL);
                kerf_exec_free(ex);
                _exit(r == -EPERM && r2 == -EPERM ? 0 : 11);
        }
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
        free(sup);
        free(staged);
}

/* kerf_exec_start() in three steps (kerfd forks without its lock): _run uses no executor state,
 * so the executor is used (reaped) while a launch is begun; a second start of the id is refused
 * until the launch ends; an ended launch that did not run tracks nothing. */
static void test_launch_steps(void **state)
{
        struct fx *f = *state;
        const char *argv[] = {PROBE, "exit", "3", NULL};
        kerf_exec_launch *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
        kerf_exec_proc p;
        kerf_exec_exit e = {0}, ex[4];
        kerf_exec_failure fail;

        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal(kerf_exec_launch_begin(f->ex, 41, a), 0);
        assert_int_equal(kerf_exec_launch_begin(f->ex, 42, b), 0);
        /* b is given up before its fork: nothing tracked, nothing run */
        assert_int_equal(kerf_exec_launch_end(f->ex, b, NULL), -ECANCELED);
        kerf_exec_spec sp = {.task_id = 41, .argv = argv};
        assert_int_equal(kerf_exec_launch_run(a, &sp, &fail), 0);
        assert_true(a->proc.pid > 0);
        assert_int_equal(kerf_exec_count(f->ex), 0); /* not tracked until _end */
        assert_int_equal(kerf_exec_reap(f->ex, now_ms(), ex, 4), 0);
        assert_int_equal(kerf_exec_launch_end(f->ex, a, &p), 0);
        assert_int_equal(p.pid, a->proc.pid);
        assert_int_equal(kerf_exec_count(f->ex), 1);
        /* tracked: the same id cannot begin again */
        assert_int_equal(kerf_exec_launch_begin(f->ex, 41, b), -EEXIST);
        assert_int_equal(run_to_end(f->ex, 41, 5000, &e), 0);
        assert_int_equal(e.exit_code, 3);
        /* a spec for another id than the one begun is refused, the launch still ends */
        assert_int_equal(kerf_exec_launch_begin(f->ex, 43, b), 0);
        sp.task_id = 44;
        assert_int_equal(kerf_exec_launch_run(b, &sp, NULL), -EINVAL);
        assert_int_equal(kerf_exec_launch_end(f->ex, b, NULL), -ECANCELED);
        assert_int_equal(kerf_exec_count(f->ex), 0);
        free(a);
        free(b);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_exit_code, setup, teardown),
            cmocka_unit_test_setup_teardown(test_signal, setup, teardown),
            cmocka_unit_test_setup_teardown(test_exec_failures, setup, teardown),
            cmocka_unit_test_setup_teardown(test_validation, setup, teardown),
            cmocka_unit_test_setup_teardown(test_logs, setup, teardown),
            cmocka_unit_test_setup_teardown(test_env_clean, setup, teardown),
            cmocka_unit_test_setup_teardown(test_env_slice_contract, setup, teardown),
            cmocka_unit_test_setup_teardown(test_env_sim, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cwd_and_path, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cancel_group, setup, teardown),
            cmocka_unit_test_setup_teardown(test_cancel_graceful, setup, teardown),
            cmocka_unit_test_setup_teardown(test_leftovers_after_exit, setup, teardown),
            cmocka_unit_test_setup_teardown(test_alive, setup, teardown),
            cmocka_unit_test_setup_teardown(test_adopt, setup, teardown),
            cmocka_unit_test_setup_teardown(test_run_as, setup, teardown),
            cmocka_unit_test_setup_teardown(test_launch_steps, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
