/* SPDX-License-Identifier: Apache-2.0 */
/* exec.h - kerfd's task executor: start, stop, reap and re-adopt task process groups */
#ifndef KERF_DAEMON_EXEC_H
#define KERF_DAEMON_EXEC_H

/*
 * The executor runs each task as a child process started with execve() (never through a
 * shell) in its own session and process group, optionally inside a device fence (fence.h).
 * Each task has a supervisor, kerf-supervise (supervise.c), in a session of its own: it is the
 * task's parent, outlives kerfd, and writes the task's exit status durably to
 * <run_dir>/task-<id>.status before telling kerfd over a pipe (docs/DAEMON.md, "The executor
 * and task supervisors").
 * It never sleeps and never blocks for more than the fork/exec hand-shake of one start:
 * stops are a state machine driven by kerf_exec_tick(), ends are collected by
 * kerf_exec_reap(). Times are milliseconds on a monotonic clock chosen by the caller.
 *
 * Call graph in kerfd (node controller):
 *
 *   kerf_exec_new()                       at start-up
 *   kerf_exec_find()                      recovery: the leader of a start not committed
 *   kerf_exec_recoverable(), _adopt() x N recovery: tasks alive, or whose end a supervisor
 *                                         recorded, from the last run
 *   kerf_exec_sweep()                     recovery: records of tasks ended in the store
 *   loop:
 *     kerf_exec_start()                   scheduler said START (after stopping victims);
 *                                         kerfd: kerf_exec_launch_begin/_run/_end instead
 *     kerf_exec_stop()                    cancel / max runtime / idle / preempt / lease
 *     kerf_exec_reap(now)                 every tick and at least every
 *                                         kerf_exec_next_deadline(); calls tick itself;
 *                                         removes the records of its previous ends
 *     -> for each ended task: kerf_fence_destroy(), release the unit in the scheduler
 *   kerf_exec_free()                      at shutdown (tasks keep running unless stopped)
 *
 * Thread-safety: none; one kerf_exec is used by one thread at a time (kerfd: under its mutex),
 * except kerf_exec_launch_run(), which uses no executor state (the fork without the lock).
 * The library never prints and never exits; only the forked children call _exit().
 */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <kerf/core.h>

#include "fence.h"

typedef struct kerf_exec kerf_exec;

/* Why a task was stopped (the daemon maps these to the task's end_reason). */
typedef enum kerf_exec_reason {
        KERF_EXEC_EXITED = 0, /* not stopped: the task ended by itself */
        KERF_EXEC_CANCEL,     /* user or admin cancel */
        KERF_EXEC_TIMEOUT,    /* max runtime reached */
        KERF_EXEC_IDLE,       /* no GPU activity for the idle timeout */
        KERF_EXEC_PREEMPT,    /* preempted by the scheduler */
        KERF_EXEC_LEASE,      /* attached task's lease expired */
        KERF_EXEC_FAULT,      /* device fault (XID, reset) */
        KERF_EXEC_SHUTDOWN,   /* kerfd shutting down with stop-tasks policy */
        KERF_EXEC_REASON_COUNT
} kerf_exec_reason;

/* Returns a static lower-case name ("exited", "cancel", ...); "unknown" if out of range. */
const char *kerf_exec_reason_name(kerf_exec_reason r);

typedef struct kerf_exec_config {
        /* Directory for per-task logs, <log_dir>/<task_id>.out and .err. Must exist and be
         * writable by kerfd; logs are opened O_APPEND|O_NOFOLLOW, mode 0640, owned by kerfd
         * (the task writes through inherited descriptors). Required. */
        const char *log_dir;
        /* After the leader of a task exits by itself, leftover members of its process group
         * (or fence cgroup) get SIGTERM, then SIGKILL after this many ms. 0 = 2000. */
        uint32_t leftover_grace_ms;
        /* Make kerfd a child subreaper (prctl PR_SET_CHILD_SUBREAPER, process-wide). Orphans of
         * a task go to its supervisor (itself a subreaper); this catches what is left when a
         * supervisor is gone, and the executor reaps those zombies (only processes of its
         * tasks' groups, never with waitpid(-1)). Use it where pid 1 does not reap (some
         * containers). */
        bool subreaper;
        /* Directory for the supervisors' status files, <run_dir>/task-<id>.status (mode 0600).
         * Must exist, owned by kerfd and private (0700). Required. */
        const char *run_dir;
        /* The kerf-supervise program (absolute path), installed beside kerfd. Required;
         * kerf_exec_new() fails with -ENOENT/-EACCES when it cannot be executed. */
        const char *supervisor;
        /* Optional: true while the caller has not yet made the end of task_id durable (its
         * record waits to be written); the status file stays until this says false, so a
         * crash in between still finds the true end. NULL: removed at the next reap. */
        bool (*keep)(void *ud, uint64_t task_id);
        void *keep_ud;
} kerf_exec_config;

/* How the task's unit is wired into its environment (docs/SHIM-CONTRACT.md). All strings
 * are borrowed for the duration of kerf_exec_start(). */
typedef struct kerf_exec_unit {
        kerf_unit_kind kind;
        /* CUDA_VISIBLE_DEVICES value: one GPU-... or MIG-... UUID, or several separated by
         * commas for multi-GPU tasks. Required. */
        const char *visible_devices;
        uint64_t unit_id;
        /* Software slices (SLICE, TSLICE; also MPS for its memory cap): */
        const char *shim_path;      /* LD_PRELOAD, e.g. <libdir>/libkerf-cuda.so; required */
        const char *region_path;    /* per-slice shared region (slice_abi.h); required */
        uint64_t memory_limit;      /* bytes */
        uint32_t compute_pct;       /* guaranteed compute share, 0..100 */
        uint32_t compute_limit_pct; /* burst limit, >= compute_pct, <= 100 */
        /* MPS only: pipe directory and per-client limits (CUDA_MPS_* variables). */
        const char *mps_pipe_dir;
        uint32_t mps_thread_pct; /* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; 0 = not set */
} kerf_exec_unit;

/* What to start. Strings and arrays are borrowed for the duration of kerf_exec_start(). */
typedef struct kerf_exec_spec {
        uint64_t task_id; /* > 0; names the log files; unique among live tasks */
        /* argv, NULL-terminated, argv[0] non-empty. argv[0] containing '/' is executed as is
         * (relative to cwd); otherwise it is searched in the task's PATH (its env's PATH, or
         * the default below) after the uid switch, like execvp(). */
        const char *const *argv;
        /* Extra environment, NULL-terminated "NAME=value" strings, added to an empty one.
         * Names that the unit contract sets (CUDA_VISIBLE_DEVICES, LD_PRELOAD, KERF_*, CUDA_MPS_*)
         * are overridden by the contract. PATH defaults to
         * /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin when not given. */
        const char *const *env;
        const char *cwd; /* NULL = "/" */
        /* Run as uid/gid (and exactly these supplementary groups) when run_as is true.
         * Needs kerfd to run as root; otherwise only the daemon's own uid/gid is accepted. */
        bool run_as;
        uid_t uid;
        gid_t gid;
        const gid_t *groups; /* may be NULL when n_groups == 0 */
        size_t n_groups;
        const kerf_exec_unit *unit; /* NULL: no GPU (CUDA_VISIBLE_DEVICES is set empty) */
        const char *socket_path;    /* KERF_SOCKET for the client library; may be NULL */
        /* Device fence the child joins before execve; NULL = none. Borrowed until the task
         * has been reaped: the executor also uses it to kill and to detect the end. */
        kerf_fence *fence;
        /* Simulated fleet (docs/SHIM-CONTRACT.md): KERF_SIM_DIR=sim_dir, and lib_dir (where the
         * simulated libcuda.so.1 and libnvidia-ml.so.1 live) first in LD_LIBRARY_PATH, before
         * the spec's own entries. NULL: not set. */
        const char *sim_dir;
        const char *lib_dir;
} kerf_exec_spec;

/* A started (or adopted) task's identity. Persist pid, pgid and starttime in the task record
 * so that a restarted kerfd can tell its live task from a reused pid. */
typedef struct kerf_exec_proc {
        uint64_t task_id;
        pid_t pid;          /* leader */
        pid_t pgid;         /* == pid: leader of its own session and process group */
        uint64_t starttime; /* /proc/PID/stat field 22, clock ticks since boot */
        char stdout_path[512];
        char stderr_path[512];
        pid_t supervisor;       /* its kerf-supervise; 0 when unknown (adopted without one) */
        uint64_t sup_starttime; /* the supervisor's starttime */
} kerf_exec_proc;

/* Where a failed start failed (written only when kerf_exec_start() fails). */
typedef enum kerf_exec_stage {
        KERF_EXEC_STAGE_SETUP = 0, /* in kerfd before fork: validation, logs, fork */
        KERF_EXEC_STAGE_FENCE,     /* child could not join its cgroup */
        KERF_EXEC_STAGE_SESSION,   /* setsid */
        KERF_EXEC_STAGE_IDS,       /* setgroups/setgid/setuid */
        KERF_EXEC_STAGE_CWD,       /* chdir */
        KERF_EXEC_STAGE_STDIO,     /* dup2 of /dev/null and the logs */
        KERF_EXEC_STAGE_EXEC,      /* execve: ENOENT, EACCES, ENOEXEC, ... */
        KERF_EXEC_STAGE_SUPERVISE, /* the supervisor could not be started or did not answer */
        KERF_EXEC_STAGE_COUNT
} kerf_exec_stage;

typedef struct kerf_exec_failure {
        kerf_exec_stage stage;
        int err; /* positive errno */
} kerf_exec_failure;

/* Returns a static name for a stage ("exec", "cwd", ...). */
const char *kerf_exec_stage_name(kerf_exec_stage s);

/* One ended task, as returned by kerf_exec_reap(). */
typedef struct kerf_exec_exit {
        uint64_t task_id;
        pid_t pid;
        int exit_code;    /* 0..255 when the leader exited; -1 when killed or unknown */
        int signal;       /* signal that ended the leader, 0 if none or unknown */
        bool core_dumped; /* WCOREDUMP */
        bool unknown;     /* status lost: no supervisor record (task of an older kerfd, or its
                           * supervisor was killed before writing it) */
        bool killed;      /* SIGKILL was needed (grace expired) for the leader or leftovers */
        kerf_exec_reason reason; /* KERF_EXEC_EXITED unless kerf_exec_stop() was called */
        uint64_t end_ms;         /* `now` of the reap that saw the last process of the task gone */
        int64_t end_wall_ms;     /* CLOCK_REALTIME ms when the leader ended, as its supervisor saw
                                  * it (true across a kerfd restart); 0 when unknown */
} kerf_exec_exit;

/* Creates an executor. Copies what it needs from cfg. Returns 0 and *ret, or -EINVAL,
 * -ENOMEM. Free with kerf_exec_free(). */
int kerf_exec_new(const kerf_exec_config *cfg, kerf_exec **ret);

/* Frees the executor and forgets its tasks without signalling them (they keep running and
 * can be re-adopted by a new kerfd). Accepts NULL; returns NULL. */
kerf_exec *kerf_exec_free(kerf_exec *ex);

/* Starts a task under its supervisor. Blocks only until the task and kerf-supervise have
 * exec'd or failed (an O_CLOEXEC error pipe), so exec failures (ENOENT, EACCES, bad cwd, uid
 * switch; stage "supervise" when kerf-supervise cannot be exec'd) are returned here, not seen
 * later as a mysterious exit 127. On success writes *ret and returns 0. On failure returns
 * -errno (the child's errno for child-side stages), writes *ret_fail when non-NULL, and
 * leaves nothing running (a failed child has been reaped). Errors: -EINVAL (bad spec),
 * -EEXIST (task_id already live), -EPERM (run_as a different uid while not root),
 * -ENOMEM, -EMFILE, -EAGAIN (fork), and child errnos. */
int kerf_exec_start(kerf_exec *ex, const kerf_exec_spec *spec, kerf_exec_proc *ret,
                    kerf_exec_failure *ret_fail);

/* kerf_exec_start() in three steps, for a caller that does not hold its lock across the fork
 * (kerfd: docs/DAEMON.md "The daemon mutex"). _begin and _end use the executor and need the
 * caller's exclusion like every other call; _run forks, waits for the exec hand-shake and uses
 * only *l and the spec, so it may run in another thread, concurrently with any executor call
 * but another _run of the same *l. Every _begin that succeeded needs its _end, whether _run
 * ran, failed or was skipped. */
typedef struct kerf_exec_launch {
        uint64_t task_id;
        char supervisor[PATH_MAX];
        char status_path[PATH_MAX];
        kerf_exec_proc proc; /* the log paths (from _begin); the identity (from _run) */
        kerf_fence *fence;
        int report_fd; /* the supervisor's pipe once _run succeeded, else -1 */
        bool begun, ran;
} kerf_exec_launch;

/* Reserves the start of spec-less task_id: -EEXIST when it is tracked, -ENAMETOOLONG,
 * -ENOMEM, -EINVAL. Forgets a record of an earlier run of this id still to be collected. */
int kerf_exec_launch_begin(kerf_exec *ex, uint64_t task_id, kerf_exec_launch *l);
/* Forks and execs as kerf_exec_start() (same errors, same *ret_fail), without the executor. */
int kerf_exec_launch_run(kerf_exec_launch *l, const kerf_exec_spec *spec,
                         kerf_exec_failure *ret_fail);
/* Ends a launch: when _run succeeded the task is tracked from now on (0 and *ret when ret is
 * not NULL); otherwise nothing is tracked and it returns -ECANCELED. */
int kerf_exec_launch_end(kerf_exec *ex, kerf_exec_launch *l, kerf_exec_proc *ret);

/* Test hook (KERFD_TEST_BREAK_LIMITER=1 in kerfd's environment, docs/DAEMON.md): every slice's
 * contract also sets KERF_SHIM_TEST_BREAK_LIMITER=1, the shim's switch that turns its limiter
 * into a grid-size-like one (docs/SHIM.md). A tenant cannot set it: KERF_* of a request is
 * dropped. Used by the POC harness's own test (docs/POC.md "Testing the harness"). */
void kerf_exec_test_break_limiter(bool on);

/* Builds the unit contract's environment entries (docs/SHIM-CONTRACT.md) for `unit`,
 * `task_id` and `socket_path` into a NULL-terminated array of heap strings "NAME=value".
 * Used by kerf_exec_start(); public so that attached launchers (SPANK, CDI) can export the
 * same variables. On success *ret owns the array; free with kerf_exec_env_free(). Returns 0,
 * -EINVAL or -ENOMEM. */
int kerf_exec_unit_env(const kerf_exec_unit *unit, uint64_t task_id, const char *socket_path,
                       char ***ret);
void kerf_exec_env_free(char **env);

/* Re-adopts a task started by an earlier kerfd (recovery). Succeeds when
 * kerf_exec_recoverable(); returns -ESRCH otherwise (the task is gone and its exit status with
 * it: mark it failed, status unknown, and reclaim), -EEXIST if task_id is already known,
 * -EINVAL, -ENOMEM. The task's supervisor is found through its status file: the task's end and
 * true exit status (even if it ended while no kerfd ran) come from that file, polled by
 * kerf_exec_reap(). A task without a supervisor record (started by an older kerfd) is polled
 * by pid and ends with `unknown` set. `fence` as in kerf_exec_spec, may be NULL. */
int kerf_exec_adopt(kerf_exec *ex, uint64_t task_id, pid_t pid, pid_t pgid, uint64_t starttime,
                    kerf_fence *fence);

/* True when kerf_exec_adopt() of this task would succeed: its leader (pid, starttime) is
 * alive, or its supervisor's status file names this leader and either recorded its end or
 * the supervisor is still alive (it is writing the record). */
bool kerf_exec_recoverable(const kerf_exec *ex, uint64_t task_id, pid_t pid, uint64_t starttime);

/* Reads the leader's identity from task_id's supervisor status file (a start kerfd did not
 * commit before dying). Returns 0 and *ret_pid, *ret_starttime, or -ENOENT (no record),
 * -EIO (malformed record). */
int kerf_exec_find(const kerf_exec *ex, uint64_t task_id, pid_t *ret_pid, uint64_t *ret_starttime);

/* Removes status files of tasks the executor does not track and whose supervisor is gone
 * (their end is already in kerfd's store). Call once after recovery. Returns how many. */
int kerf_exec_sweep(kerf_exec *ex);

/* Asks a task to stop: SIGTERM to its whole process group (and fence cgroup) now, SIGKILL
 * when grace_ms have passed (grace_ms == 0: SIGKILL now). `now_ms` is the caller's monotonic
 * clock. A second call may shorten the deadline, never extend it; the first reason is kept.
 * Returns 0, -ENOENT (unknown or already reaped task), -EINVAL. */
int kerf_exec_stop(kerf_exec *ex, uint64_t task_id, kerf_exec_reason reason, uint32_t grace_ms,
                   uint64_t now_ms);

/* The signal the next kerf_exec_stop() of this task sends first, instead of SIGTERM (a cancel
 * with "signal": docs/API.md); no effect once it is stopping. Returns 0, -ENOENT, -EINVAL (sig
 * outside 1..64). */
int kerf_exec_stop_signal(kerf_exec *ex, uint64_t task_id, int sig);

/* Stops every task (shutdown), as kerf_exec_stop() for each. Returns the number signalled. */
int kerf_exec_stop_all(kerf_exec *ex, kerf_exec_reason reason, uint32_t grace_ms, uint64_t now_ms);

/* Advances stop state machines: SIGKILL to groups whose grace expired, SIGTERM then SIGKILL
 * to leftovers of tasks whose leader has exited. Never blocks. Returns the number of tasks
 * still tracked. */
int kerf_exec_tick(kerf_exec *ex, uint64_t now_ms);

/* Collects ended tasks without blocking: calls kerf_exec_tick(), then reads each task's
 * supervisor pipe (adopted tasks: its status file) for the leader's end, and reaps exited
 * supervisors with waitpid(WNOHANG) on their pids (never waitpid(-1): other children of kerfd
 * are left alone). A task is ended, and forgotten by the executor, once its leader's end is
 * known AND no non-zombie process is left in its process group and fence cgroup. Writes up to
 * `cap` entries to ret[] and returns how many (call again while it returns `cap`).
 * The status files of the tasks returned are removed at the next call: the caller must have
 * made their ends durable before calling again (a crash before that keeps the record). */
int kerf_exec_reap(kerf_exec *ex, uint64_t now_ms, kerf_exec_exit *ret, size_t cap);

/* Milliseconds (on the caller's clock) of the next stop deadline, or UINT64_MAX if none; a
 * task whose leader exited with leftovers also needs periodic reaps (every ~100 ms). */
uint64_t kerf_exec_next_deadline(const kerf_exec *ex);

/* Number of tasks tracked (running, stopping, or leader gone with leftovers). */
size_t kerf_exec_count(const kerf_exec *ex);

/* Looks up a tracked task's identity; returns 0 and *ret, or -ENOENT. */
int kerf_exec_get(const kerf_exec *ex, uint64_t task_id, kerf_exec_proc *ret);

/* Reads field 22 (starttime, clock ticks since boot) of /proc/PID/stat. Returns 0 and *ret,
 * -ESRCH if no such process, -EINVAL, -EIO on a malformed file. */
int kerf_exec_starttime(pid_t pid, uint64_t *ret);

/* True when process `pid` exists, is not a zombie, and started at `starttime` (so a reused
 * pid is not mistaken for the task). False for pid <= 0. */
bool kerf_exec_alive(pid_t pid, uint64_t starttime);

/* ---- private to exec*.c and supervise.c --------------------------------------------------- */
/* /proc/PID/stat: the fields after the command name, from field 3 (state). */
int kerf__exec_read_stat(pid_t pid, char *buf, size_t n, const char **ret_rest);
int kerf__exec_stat_field(const char *rest, int field, uint64_t *ret);
/* True when a process that is not a zombie has process group `pgid`; reaps zombies of the
 * group that are our children, other than `leader`. */
bool kerf__exec_group_alive(pid_t pgid, pid_t leader);

/* A message on the start pipe (child -> kerfd) or the supervisor pipe (supervisor -> kerfd);
 * fixed size, below PIPE_BUF, so each write is atomic. */
enum { KERF__EXEC_MSG_FAIL = 1, KERF__EXEC_MSG_LEADER, KERF__EXEC_MSG_READY, KERF__EXEC_MSG_EXIT };
typedef struct kerf__exec_msg {
        int32_t kind;
        int32_t stage;  /* FAIL: kerf_exec_stage */
        int32_t err;    /* FAIL: positive errno */
        int32_t status; /* EXIT: the leader's wait status */
        int64_t pid;    /* LEADER, READY: the leader */
        uint64_t starttime, sup_starttime;
        int64_t end_wall_ms; /* EXIT */
} kerf__exec_msg;

/* A supervisor's status file, <run_dir>/task-<id>.status (text, "key value" lines). */
typedef struct kerf__exec_status {
        uint64_t task_id;
        pid_t sup_pid, pid;
        uint64_t sup_starttime, starttime;
        bool ended;
        int status;          /* wait status, when ended */
        int64_t end_wall_ms; /* when ended */
} kerf__exec_status;
/* Writes `st` to `path` through path.tmp + rename; with `durable`, fsyncs the file before
 * and the directory after the rename. Returns 0 or -errno. Uses no heap (kerf-supervise). */
int kerf__exec_status_write(const char *path, const kerf__exec_status *st, bool durable);
/* Reads a status file: 0, -ENOENT, -EIO (malformed), -errno. */
int kerf__exec_status_read(const char *path, kerf__exec_status *ret);
/* Creates path as a placeholder of a record's size before the supervisor starts, so that its
 * records can be written in place on a disk that fills meanwhile. Best effort. */
int kerf__exec_status_reserve(const char *path);
int kerf__exec_status_path(const char *run_dir, uint64_t task_id, char *buf, size_t n);

/* exec_child.c: what kerf_exec_start() prepares before its fork. */
/* Everything the children need, prepared before fork: after fork in a possibly
 * multi-threaded daemon they may only call async-signal-safe functions (the supervisor until
 * it execs kerf-supervise, the task until it execs its program). */
typedef struct kerf__exec_plan {
        const kerf_exec_spec *sp;
        char **envp;
        const char *path; /* PATH to search when argv[0] has no '/', else NULL */
        char *buf;        /* PATH_MAX scratch for the search */
        int null_fd, out_fd, err_fd, procs_fd, pipe_fd, report_fd;
        bool set_ids;
        /* kerf-supervise's argv; sup_argv[2] points at leader_arg, filled in after the fork */
        const char *sup_argv[6];
        char id_arg[24], leader_arg[24], fd_arg[16];
        char status_path[4096];
} kerf__exec_plan;

/* The forked supervisor: forks the task, then becomes kerf-supervise (never returns). */
void kerf__exec_supervisor_exec(kerf__exec_plan *p) __attribute__((noreturn));
int kerf__exec_open_high(const char *path, int flags, mode_t mode); /* fd >= 3 or -errno */
int kerf__exec_pipe_high(int fds[2]);                               /* 0 or -errno */
void kerf__exec_fmt_u64(char *buf, uint64_t v); /* decimal, buf >= 24; async-signal-safe */

#define KERF__EXEC_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
int kerf__exec_unit_check(const kerf_exec_unit *u); /* 0 or -EINVAL */
int kerf__exec_validate(const kerf_exec_spec *sp);  /* 0, -EINVAL or -E2BIG */
/* The task's environment: spec env minus KERF_* and contract names, then the contract, then
 * PATH. *ret as kerf_exec_unit_env(). */
int kerf__exec_build_env(const kerf_exec_spec *sp, char ***ret);
char **kerf__exec_env_find(char **env, const char *entry); /* by the name before '=' */
size_t kerf__exec_name_len(const char *entry);             /* 0 when there is no '=' */

#ifdef KERF_SAN_RUNTIME
/* Sanitizer builds only (exec_env.c): the sanitizer runtime first in LD_PRELOAD of the task,
 * when kerfd turned kerf__exec_san_env on. */
extern bool kerf__exec_san_env;
int kerf__exec_san_env_apply(char ***envp);
#endif

#endif /* KERF_DAEMON_EXEC_H */
