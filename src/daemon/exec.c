/* SPDX-License-Identifier: Apache-2.0 */
/* exec.c - task executor: fork/execve into a session, stop state machine, non-blocking reap */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kerf/errno.h>

#include "exec.h"

#define MAX_ARGS       4096
#define MAX_ENV        1024
#define MAX_GROUPS     256
#define POLL_MS        100  /* re-check leftovers this often */
#define ADOPT_POLL_MS  1000 /* adopted tasks are not our children: poll for their end */
#define DEFAULT_LINGER 2000

struct task {
        kerf_exec_proc proc;
        kerf_fence *fence;
        bool adopted;
        bool leader_done;
        bool have_status;
        int status;
        bool stopping;
        bool killed;
        kerf_exec_reason reason;
        uint64_t kill_at_ms; /* SIGKILL when now >= this; UINT64_MAX: not scheduled */
        uint64_t poll_at_ms; /* next time a reap should look again; 0: no need */
};

struct kerf_exec {
        char *log_dir;
        uint32_t linger_ms;
        struct task *tasks;
        size_t n, cap;
};

/* What the child reports through the error pipe before _exit(127). */
struct child_err {
        int stage;
        int err;
};

static const char *const reason_names[KERF_EXEC_REASON_COUNT] = {
    "exited", "cancel", "timeout", "idle", "preempt", "lease", "fault", "shutdown",
};

static const char *const stage_names[KERF_EXEC_STAGE_COUNT] = {
    "setup", "fence", "session", "ids", "cwd", "stdio", "exec",
};

const char *kerf_exec_reason_name(kerf_exec_reason r)
{
        return (unsigned)r < KERF_EXEC_REASON_COUNT ? reason_names[r] : "unknown";
}

const char *kerf_exec_stage_name(kerf_exec_stage s)
{
        return (unsigned)s < KERF_EXEC_STAGE_COUNT ? stage_names[s] : "unknown";
}

/* ---- /proc helpers ------------------------------------------------------------------------ */

/* Reads /proc/PID/stat and returns the fields after the command name (which may contain
 * spaces and parentheses, hence the last ')'), starting with field 3 (state). */
static int read_stat(pid_t pid, char *buf, size_t n, const char **ret_rest)
{
        char path[64];
        ssize_t len;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        len = read(fd, buf, n - 1);
        close(fd);
        if (len <= 0)
                return len < 0 ? -errno : -ESRCH;
        buf[len] = '\0';
        char *p = strrchr(buf, ')');
        if (!p || p[1] != ' ')
                return -EIO;
        *ret_rest = p + 2;
        return 0;
}

/* Field `field` (3 = state) as an unsigned number; state is returned as its character. */
static int stat_field(const char *rest, int field, uint64_t *ret)
{
        const char *p = rest;

        for (int f = 3; f < field; f++) {
                p = strchr(p, ' ');
                if (!p)
                        return -EIO;
                p++;
        }
        if (field == 3) {
                *ret = (unsigned char)*p;
                return 0;
        }
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno || end == p)
                return -EIO;
        *ret = v;
        return 0;
}

int kerf_exec_starttime(pid_t pid, uint64_t *ret)
{
        char buf[1024];
        const char *rest;
        uint64_t v;
        int r;

        if (pid <= 0 || !ret)
                return -EINVAL;
        r = read_stat(pid, buf, sizeof(buf), &rest);
        if (r < 0)
                return r;
        r = stat_field(rest, 22, &v);
        if (r < 0)
                return r;
        *ret = v;
        return 0;
}

bool kerf_exec_alive(pid_t pid, uint64_t starttime)
{
        char buf[1024];
        const char *rest;
        uint64_t state, st;

        if (pid <= 0 || read_stat(pid, buf, sizeof(buf), &rest) < 0)
                return false;
        if (stat_field(rest, 3, &state) < 0 || state == 'Z' || state == 'X')
                return false;
        return stat_field(rest, 22, &st) == 0 && st == starttime;
}

/* True when some process that is not a zombie has process group `pgid`. kill(-pgid, 0)
 * answers quickly for the common empty case; zombies (e.g. orphans init has not reaped yet)
 * keep a group "alive" for kill() but hold nothing, so /proc decides. Zombies of the group
 * that are our children (we are their subreaper), other than the leader, are reaped here. */
static bool group_alive(pid_t pgid, pid_t leader)
{
        if (pgid <= 1 || (kill(-pgid, 0) < 0 && errno == ESRCH))
                return false;
        DIR *d = opendir("/proc");
        if (!d)
                return true;
        bool alive = false;
        struct dirent *de;
        while (!alive && (de = readdir(d))) {
                if (!isdigit((unsigned char)de->d_name[0]))
                        continue;
                char buf[1024];
                const char *rest;
                uint64_t state, pg;
                pid_t p = (pid_t)strtol(de->d_name, NULL, 10);
                if (read_stat(p, buf, sizeof(buf), &rest) < 0 || stat_field(rest, 3, &state) < 0 ||
                    stat_field(rest, 5, &pg) < 0)
                        continue;
                if (pg != (uint64_t)pgid)
                        continue;
                alive = state != 'Z' && state != 'X';
                uint64_t ppid;
                if (!alive && p != leader && stat_field(rest, 4, &ppid) == 0 &&
                    ppid == (uint64_t)getpid())
                        waitpid(p, NULL, WNOHANG);
        }
        closedir(d);
        return alive;
}

/* ---- executor object ---------------------------------------------------------------------- */

int kerf_exec_new(const kerf_exec_config *cfg, kerf_exec **ret)
{
        kerf_exec *ex;

        if (!cfg || !ret || !cfg->log_dir || cfg->log_dir[0] != '/')
                return -EINVAL;
        ex = calloc(1, sizeof(*ex));
        if (!ex)
                return -ENOMEM;
        ex->log_dir = strdup(cfg->log_dir);
        if (!ex->log_dir) {
                free(ex);
                return -ENOMEM;
        }
        ex->linger_ms = cfg->leftover_grace_ms ? cfg->leftover_grace_ms : DEFAULT_LINGER;
        if (cfg->subreaper && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
                int r = -errno;
                kerf_exec_free(ex);
                return r;
        }
        *ret = ex;
        return 0;
}

kerf_exec *kerf_exec_free(kerf_exec *ex)
{
        if (ex) {
                free(ex->tasks);
                free(ex->log_dir);
                free(ex);
        }
        return NULL;
}

static struct task *find(const kerf_exec *ex, uint64_t id)
{
        for (size_t i = 0; i < ex->n; i++)
                if (ex->tasks[i].proc.task_id == id)
                        return &ex->tasks[i];
        return NULL;
}

static int reserve(kerf_exec *ex)
{
        if (ex->n < ex->cap)
                return 0;
        size_t cap = ex->cap ? ex->cap * 2 : 16;
        struct task *t = realloc(ex->tasks, cap * sizeof(*t));
        if (!t)
                return -ENOMEM;
        ex->tasks = t;
        ex->cap = cap;
        return 0;
}

size_t kerf_exec_count(const kerf_exec *ex)
{
        return ex ? ex->n : 0;
}

int kerf_exec_get(const kerf_exec *ex, uint64_t task_id, kerf_exec_proc *ret)
{
        const struct task *t = ex ? find(ex, task_id) : NULL;

        if (!t || !ret)
                return -ENOENT;
        *ret = t->proc;
        return 0;
}

/* ---- start -------------------------------------------------------------------------------- */

static int validate(const kerf_exec_spec *sp)
{
        size_t n = 0;

        if (!sp || sp->task_id == 0 || !sp->argv || !sp->argv[0] || !sp->argv[0][0])
                return -EINVAL;
        while (sp->argv[n])
                if (++n > MAX_ARGS)
                        return -E2BIG;
        n = 0;
        for (const char *const *e = sp->env; e && *e; e++) {
                if (++n > MAX_ENV || kerf__exec_name_len(*e) == 0)
                        return n > MAX_ENV ? -E2BIG : -EINVAL;
        }
        if (sp->cwd && !sp->cwd[0])
                return -EINVAL;
        if (sp->n_groups > MAX_GROUPS || (sp->n_groups && !sp->groups))
                return -EINVAL;
        if (sp->unit && kerf__exec_unit_check(sp->unit) < 0)
                return -EINVAL;
        return 0;
}

/* Opens `path` for the child, moved to an fd >= 3 so that the child's dup2() onto 0..2
 * never collides with a source descriptor (kerfd may run with 0..2 closed). */
static int open_high(const char *path, int flags, mode_t mode)
{
        int fd = open(path, flags | O_CLOEXEC, mode);
        if (fd < 0 || fd > 2)
                return fd < 0 ? -errno : fd;
        int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        int e = errno;
        close(fd);
        return hi < 0 ? -e : hi;
}

/* Everything the child needs, prepared before fork: after fork in a possibly
 * multi-threaded daemon the child may only call async-signal-safe functions. */
struct child_plan {
        const kerf_exec_spec *sp;
        char **envp;
        const char *path; /* PATH to search when argv[0] has no '/', else NULL */
        char *buf;        /* PATH_MAX scratch for the search */
        int null_fd, out_fd, err_fd, procs_fd, pipe_fd;
        bool set_ids;
};

static void child_fail(const struct child_plan *p, int stage, int err) __attribute__((noreturn));
static void child_fail(const struct child_plan *p, int stage, int err)
{
        struct child_err ce = {stage, err};
        ssize_t w = write(p->pipe_fd, &ce, sizeof(ce));
        (void)w;
        _exit(127);
}

/* Writes a decimal pid without stdio (async-signal-safe). */
static int write_pid(int fd, pid_t pid)
{
        char b[16];
        int i = sizeof(b);
        b[--i] = '\n';
        do {
                b[--i] = (char)('0' + pid % 10);
                pid /= 10;
        } while (pid > 0);
        return write(fd, b + i, sizeof(b) - (size_t)i) < 0 ? -1 : 0;
}

static void child_exec(const struct child_plan *p) __attribute__((noreturn));
static void child_exec(const struct child_plan *p)
{
        const kerf_exec_spec *sp = p->sp;
        struct sigaction sa;
        sigset_t none;

        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = SIG_DFL;
        for (int sig = 1; sig < NSIG; sig++)
                sigaction(sig, &sa, NULL); /* SIGKILL/SIGSTOP/reserved fail: fine */
        if (p->procs_fd >= 0 && write_pid(p->procs_fd, getpid()) < 0)
                child_fail(p, KERF_EXEC_STAGE_FENCE, errno);
        if (setsid() < 0)
                child_fail(p, KERF_EXEC_STAGE_SESSION, errno);
        if (p->set_ids &&
            (setgroups(sp->n_groups, sp->groups) < 0 || setgid(sp->gid) < 0 || setuid(sp->uid) < 0))
                child_fail(p, KERF_EXEC_STAGE_IDS, errno);
        if (chdir(sp->cwd ? sp->cwd : "/") < 0)
                child_fail(p, KERF_EXEC_STAGE_CWD, errno);
        if (dup2(p->null_fd, 0) < 0 || dup2(p->out_fd, 1) < 0 || dup2(p->err_fd, 2) < 0)
                child_fail(p, KERF_EXEC_STAGE_STDIO, errno);
        /* Descriptors someone else opened without O_CLOEXEC must not leak into the task. */
        syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);

        char *const *argv = (char *const *)sp->argv;
        if (!p->path) {
                execve(sp->argv[0], argv, p->envp);
                child_fail(p, KERF_EXEC_STAGE_EXEC, errno);
        }
        /* execvp()-like search, as the task's uid, in the task's PATH. */
        int err = ENOENT;
        size_t alen = strlen(sp->argv[0]);
        for (const char *d = p->path; d;) {
                const char *end = strchr(d, ':');
                size_t dlen = end ? (size_t)(end - d) : strlen(d);
                if (dlen == 0) { /* empty entry means the cwd, as execvp */
                        d = ".";
                        dlen = 1;
                }
                if (dlen + alen + 2 <= PATH_MAX) {
                        memcpy(p->buf, d, dlen);
                        p->buf[dlen] = '/';
                        memcpy(p->buf + dlen + 1, sp->argv[0], alen + 1);
                        execve(p->buf, argv, p->envp);
                        if (errno == EACCES)
                                err = EACCES;
                        else if (errno != ENOENT && errno != ENOTDIR)
                                child_fail(p, KERF_EXEC_STAGE_EXEC, errno);
                }
                d = end ? end + 1 : NULL;
        }
        child_fail(p, KERF_EXEC_STAGE_EXEC, err);
}

static void fail(kerf_exec_failure *f, kerf_exec_stage stage, int err)
{
        if (f) {
                f->stage = stage;
                f->err = err < 0 ? -err : err;
        }
}
#ifdef KERF_SAN_RUNTIME
/* Sanitizer builds only (make asan / make tsan; docs/DAEMON.md "Sanitizers"): the shim is
 * built with the sanitizer, whose runtime must come first in an uninstrumented task; the
 * runtime's own options (KERF_SAN_OPTIONS) keep leak reports out of the task's exit status.
 * ThreadSanitizer's runtime cannot be preloaded into an uninstrumented program (the task
 * crashes): under make tsan tasks run without the shim (KERF_SAN_NO_PRELOAD). Only kerfd
 * turns it on (main.c): the executor's unit tests see the environment as built. */
bool kerf__exec_san_env;
static int san_env(char ***envp)
{
        size_t n = 0, k = 0;
        bool preload = false;
        char **v;

        while ((*envp)[n])
                n++;
        v = realloc(*envp, (n + 2) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        *envp = v;
        v[n] = NULL;
        for (size_t i = 0; i < n; i++) {
                char *e;
                if (strncmp(v[i], "LD_PRELOAD=", 11) != 0) {
                        v[k++] = v[i];
                        continue;
                }
#ifdef KERF_SAN_NO_PRELOAD
                free(v[i]);
                continue;
#endif
                if (asprintf(&e, "LD_PRELOAD=%s %s", KERF_SAN_RUNTIME, v[i] + 11) < 0)
                        return -ENOMEM;
                free(v[i]);
                v[k++] = e;
                preload = true;
        }
        v[k] = NULL;
        if (preload && !(v[k] = strdup(KERF_SAN_OPTIONS)))
                return -ENOMEM;
        v[k + 1] = NULL;
        return 0;
}
#endif

int kerf_exec_start(kerf_exec *ex, const kerf_exec_spec *sp, kerf_exec_proc *ret,
                    kerf_exec_failure *ret_fail)
{
        struct child_plan p = {
            .sp = sp, .null_fd = -1, .out_fd = -1, .err_fd = -1, .procs_fd = -1, .pipe_fd = -1};
        kerf_exec_proc proc = {0};
        int pipefd[2] = {-1, -1};
        sigset_t all, old;
        int r;

        if (!ex || !ret) {
                fail(ret_fail, KERF_EXEC_STAGE_SETUP, EINVAL);
                return -EINVAL;
        }
        r = validate(sp);
        if (r < 0)
                goto fail_setup;
        if (find(ex, sp->task_id)) {
                r = -EEXIST;
                goto fail_setup;
        }
        if (sp->run_as && geteuid() != 0) {
                /* Not root: only "run as myself" is possible, and then nothing to switch. */
                if (sp->uid != geteuid() || sp->gid != getegid()) {
                        r = -EPERM;
                        goto fail_setup;
                }
        }
        p.set_ids = sp->run_as && geteuid() == 0;
        r = reserve(ex);
        if (r < 0)
                goto fail_setup;
        proc.task_id = sp->task_id;
        if (snprintf(proc.stdout_path, sizeof(proc.stdout_path), "%s/%" PRIu64 ".out", ex->log_dir,
                     sp->task_id) >= (int)sizeof(proc.stdout_path) ||
            snprintf(proc.stderr_path, sizeof(proc.stderr_path), "%s/%" PRIu64 ".err", ex->log_dir,
                     sp->task_id) >= (int)sizeof(proc.stderr_path)) {
                r = -ENAMETOOLONG;
                goto fail_setup;
        }
        r = kerf__exec_build_env(sp, &p.envp);
#ifdef KERF_SAN_RUNTIME
        if (r >= 0 && kerf__exec_san_env)
                r = san_env(&p.envp);
#endif
        if (r < 0)
                goto fail_setup;
        if (!strchr(sp->argv[0], '/')) {
                char **pe = kerf__exec_env_find(p.envp, "PATH=");
                p.path = pe ? *pe + 5 : KERF__EXEC_DEFAULT_PATH;
                p.buf = malloc(PATH_MAX);
                if (!p.buf) {
                        r = -ENOMEM;
                        goto out;
                }
        }
        const int logf = O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW;
        if ((r = p.null_fd = open_high("/dev/null", O_RDONLY, 0)) < 0 ||
            (r = p.out_fd = open_high(proc.stdout_path, logf, 0640)) < 0 ||
            (r = p.err_fd = open_high(proc.stderr_path, logf, 0640)) < 0)
                goto out;
        if (sp->fence && (r = p.procs_fd = kerf_fence_procs_fd(sp->fence)) < 0)
                goto out;
        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                r = -errno;
                goto out;
        }
        p.pipe_fd = pipefd[1];

        /* Signals stay blocked from fork until the child has reset their dispositions: a
         * daemon handler must never run in the child. */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pid_t pid = fork();
        if (pid == 0)
                child_exec(&p);
        int fork_err = errno;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (pid < 0) {
                r = -fork_err;
                goto out;
        }
        close(pipefd[1]);
        pipefd[1] = -1;

        struct child_err ce;
        ssize_t n;
        do
                n = read(pipefd[0], &ce, sizeof(ce));
        while (n < 0 && errno == EINTR);
        if (n != 0) {
                /* The child failed before or at execve and has _exit()ed (or is about to). */
                while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                        ;
                if (n == (ssize_t)sizeof(ce) && ce.err > 0) {
                        fail(ret_fail, (kerf_exec_stage)ce.stage, ce.err);
                        r = -ce.err;
                } else {
                        fail(ret_fail, KERF_EXEC_STAGE_SETUP, EIO);
                        r = -EIO;
                }
                goto out_nofail;
        }
        proc.pid = pid;
        proc.pgid = pid;
        if (kerf_exec_starttime(pid, &proc.starttime) < 0)
                proc.starttime = 0; /* cannot happen before we reap it; keep going */

        struct task *t = &ex->tasks[ex->n++];
        memset(t, 0, sizeof(*t));
        t->proc = proc;
        t->fence = sp->fence;
        t->kill_at_ms = UINT64_MAX;
        *ret = proc;
        r = 0;
        goto out_nofail;
out:
        if (r < 0)
                fail(ret_fail, KERF_EXEC_STAGE_SETUP, r);
out_nofail:
        for (int i = 0; i < 2; i++)
                if (pipefd[i] >= 0)
                        close(pipefd[i]);
        if (p.null_fd >= 0)
                close(p.null_fd);
        if (p.out_fd >= 0)
                close(p.out_fd);
        if (p.err_fd >= 0)
                close(p.err_fd);
        if (p.procs_fd >= 0)
                close(p.procs_fd);
        free(p.buf);
        kerf_exec_env_free(p.envp);
        return r;
fail_setup:
        fail(ret_fail, KERF_EXEC_STAGE_SETUP, r);
        return r;
}

int kerf_exec_adopt(kerf_exec *ex, uint64_t task_id, pid_t pid, pid_t pgid, uint64_t starttime,
                    kerf_fence *fence)
{
        if (!ex || task_id == 0 || pid <= 1 || pgid <= 1)
                return -EINVAL;
        if (find(ex, task_id))
                return -EEXIST;
        if (!kerf_exec_alive(pid, starttime))
                return -ESRCH;
        int r = reserve(ex);
        if (r < 0)
                return r;
        struct task *t = &ex->tasks[ex->n++];
        memset(t, 0, sizeof(*t));
        t->proc.task_id = task_id;
        t->proc.pid = pid;
        t->proc.pgid = pgid;
        t->proc.starttime = starttime;
        snprintf(t->proc.stdout_path, sizeof(t->proc.stdout_path), "%s/%" PRIu64 ".out",
                 ex->log_dir, task_id);
        snprintf(t->proc.stderr_path, sizeof(t->proc.stderr_path), "%s/%" PRIu64 ".err",
                 ex->log_dir, task_id);
        t->fence = fence;
        t->adopted = true;
        t->kill_at_ms = UINT64_MAX;
        t->poll_at_ms = 1; /* look at the next reap */
        return 0;
}

/* ---- stop / tick / reap ------------------------------------------------------------------- */

/* Signals the task's process group, and its cgroup (which also holds members that left the
 * group with setsid/setpgid). Returns true when something was signalled. */
static bool signal_task(struct task *t, int sig)
{
        bool any = false;

        if (!t->leader_done || group_alive(t->proc.pgid, t->proc.pid))
                any = kill(-t->proc.pgid, sig) == 0;
        if (t->adopted && !t->leader_done && t->proc.pgid != t->proc.pid &&
            kerf_exec_alive(t->proc.pid, t->proc.starttime))
                any = kill(t->proc.pid, sig) == 0 || any;
        if (t->fence && kerf_fence_kill(t->fence, sig) > 0)
                any = true;
        return any;
}

static void begin_stop(struct task *t, kerf_exec_reason reason, uint32_t grace_ms, uint64_t now)
{
        uint64_t at = grace_ms ? now + grace_ms : now;

        if (!t->stopping) {
                t->stopping = true;
                t->reason = reason;
                if (grace_ms)
                        signal_task(t, SIGTERM);
        }
        if (at < t->kill_at_ms)
                t->kill_at_ms = at;
        if (t->kill_at_ms <= now && signal_task(t, SIGKILL))
                t->killed = true;
}

int kerf_exec_stop(kerf_exec *ex, uint64_t task_id, kerf_exec_reason reason, uint32_t grace_ms,
                   uint64_t now_ms)
{
        if (!ex || (unsigned)reason >= KERF_EXEC_REASON_COUNT || reason == KERF_EXEC_EXITED)
                return -EINVAL;
        struct task *t = find(ex, task_id);
        if (!t)
                return -ENOENT;
        /* A task whose leader already ended by itself keeps reason "exited". */
        begin_stop(t, t->leader_done && !t->stopping ? KERF_EXEC_EXITED : reason, grace_ms, now_ms);
        return 0;
}

int kerf_exec_stop_all(kerf_exec *ex, kerf_exec_reason reason, uint32_t grace_ms, uint64_t now_ms)
{
        int n = 0;

        if (!ex)
                return -EINVAL;
        for (size_t i = 0; i < ex->n; i++)
                if (kerf_exec_stop(ex, ex->tasks[i].proc.task_id, reason, grace_ms, now_ms) == 0)
                        n++;
        return n;
}

int kerf_exec_tick(kerf_exec *ex, uint64_t now_ms)
{
        if (!ex)
                return -EINVAL;
        for (size_t i = 0; i < ex->n; i++) {
                struct task *t = &ex->tasks[i];
                /* Re-sent on every tick past the deadline: a member may have forked meanwhile. */
                if (t->stopping && now_ms >= t->kill_at_ms && signal_task(t, SIGKILL))
                        t->killed = true;
        }
        return (int)ex->n;
}

static bool leftovers(const struct task *t)
{
        return group_alive(t->proc.pgid, t->proc.pid) || (t->fence && !kerf_fence_empty(t->fence));
}

int kerf_exec_reap(kerf_exec *ex, uint64_t now_ms, kerf_exec_exit *ret, size_t cap)
{
        size_t out = 0;

        if (!ex || (cap && !ret))
                return -EINVAL;
        kerf_exec_tick(ex, now_ms);
        for (size_t i = 0; i < ex->n && out < cap;) {
                struct task *t = &ex->tasks[i];
                if (!t->leader_done && !t->adopted) {
                        int st;
                        pid_t r = waitpid(t->proc.pid, &st, WNOHANG);
                        if (r == t->proc.pid) {
                                t->leader_done = true;
                                t->have_status = true;
                                t->status = st;
                        } else if (r < 0 && errno == ECHILD) {
                                t->leader_done = true; /* reaped elsewhere: status unknown */
                        }
                } else if (!t->leader_done && now_ms >= t->poll_at_ms) {
                        if (!kerf_exec_alive(t->proc.pid, t->proc.starttime))
                                t->leader_done = true;
                        else
                                t->poll_at_ms = now_ms + ADOPT_POLL_MS;
                }
                if (!t->leader_done) {
                        i++;
                        continue;
                }
                if (leftovers(t)) {
                        if (!t->stopping)
                                begin_stop(t, KERF_EXEC_EXITED, ex->linger_ms, now_ms);
                        t->poll_at_ms = now_ms + POLL_MS;
                        i++;
                        continue;
                }
                kerf_exec_exit *e = &ret[out++];
                memset(e, 0, sizeof(*e));
                e->task_id = t->proc.task_id;
                e->pid = t->proc.pid;
                e->exit_code = -1;
                e->unknown = !t->have_status;
                if (t->have_status && WIFEXITED(t->status)) {
                        e->exit_code = WEXITSTATUS(t->status);
                } else if (t->have_status && WIFSIGNALED(t->status)) {
                        e->signal = WTERMSIG(t->status);
                        e->core_dumped = WCOREDUMP(t->status);
                }
                e->killed = t->killed;
                e->reason = t->reason;
                e->end_ms = now_ms;
                ex->tasks[i] = ex->tasks[--ex->n];
        }
        return (int)out;
}

uint64_t kerf_exec_next_deadline(const kerf_exec *ex)
{
        uint64_t next = UINT64_MAX;

        for (size_t i = 0; ex && i < ex->n; i++) {
                const struct task *t = &ex->tasks[i];
                if (t->stopping && !t->killed && t->kill_at_ms < next)
                        next = t->kill_at_ms;
                if (t->poll_at_ms && t->poll_at_ms < next)
                        next = t->poll_at_ms;
        }
        return next;
}
