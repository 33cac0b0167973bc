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
#include <time.h>
#include <unistd.h>

#include <kerf/errno.h>

#include "exec.h"

#define POLL_MS        100  /* re-check leftovers this often */
#define ADOPT_POLL_MS  1000 /* a leader without a supervisor: poll for its end */
#define DEFAULT_LINGER 2000

struct task {
        kerf_exec_proc proc;
        kerf_fence *fence;
        int report_fd;  /* the supervisor's pipe (started here); -1 when adopted or closed */
        bool sup_child; /* proc.supervisor is our child, not yet reaped */
        int64_t end_wall_ms;
        bool adopted;
        bool leader_done;
        bool have_status;
        int status;
        bool stopping;
        bool killed;
        kerf_exec_reason reason;
        int stop_sig;        /* the first signal of a stop; 0: SIGTERM (kerf_exec_stop_signal) */
        uint64_t kill_at_ms; /* SIGKILL when now >= this; UINT64_MAX: not scheduled */
        uint64_t poll_at_ms; /* next time a reap should look again; 0: no need */
};

struct kerf_exec {
        char *log_dir;
        char *run_dir;
        char *supervisor;
        uint32_t linger_ms;
        bool (*keep)(void *ud, uint64_t task_id);
        void *keep_ud;
        struct task *tasks;
        size_t n, cap;
        size_t n_launching; /* launches begun, not ended: a slot reserved for each */
        /* status files to remove at the next reap (their ends were returned by the last) */
        uint64_t *collected;
        size_t n_collected, cap_collected;
        /* our supervisor children that outlived their task's report (reaping leftovers) */
        pid_t *zombies;
        size_t n_zombies, cap_zombies;
};

static const char *const reason_names[KERF_EXEC_REASON_COUNT] = {
    "exited", "cancel", "timeout", "idle", "preempt", "lease", "fault", "shutdown",
};

static const char *const stage_names[KERF_EXEC_STAGE_COUNT] = {
    "setup", "fence", "session", "ids", "cwd", "stdio", "exec", "supervise",
};

const char *kerf_exec_reason_name(kerf_exec_reason r)
{
        return (unsigned)r < KERF_EXEC_REASON_COUNT ? reason_names[r] : "unknown";
}

const char *kerf_exec_stage_name(kerf_exec_stage s)
{
        return (unsigned)s < KERF_EXEC_STAGE_COUNT ? stage_names[s] : "unknown";
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
        ex->run_dir = cfg->run_dir ? strdup(cfg->run_dir) : NULL;
        ex->supervisor = cfg->supervisor ? strdup(cfg->supervisor) : NULL;
        if (!ex->log_dir || !ex->run_dir || !ex->supervisor) {
                int r = cfg->run_dir && cfg->supervisor ? -ENOMEM : -EINVAL;
                kerf_exec_free(ex);
                return r;
        }
        if (ex->run_dir[0] != '/' || ex->supervisor[0] != '/') {
                kerf_exec_free(ex);
                return -EINVAL;
        }
        if (access(ex->supervisor, X_OK) < 0) {
                int r = -errno;
                kerf_exec_free(ex);
                return r;
        }
        ex->linger_ms = cfg->leftover_grace_ms ? cfg->leftover_grace_ms : DEFAULT_LINGER;
        ex->keep = cfg->keep;
        ex->keep_ud = cfg->keep_ud;
        if (cfg->subreaper && prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
                int r = -errno;
                kerf_exec_free(ex);
                return r;
        }
        *ret = ex;
        return 0;
}

static void reap_supervisors(kerf_exec *ex);

kerf_exec *kerf_exec_free(kerf_exec *ex)
{
        if (ex) {
                for (size_t i = 0; i < ex->n; i++)
                        if (ex->tasks[i].report_fd >= 0)
                                close(ex->tasks[i].report_fd);
                free(ex->tasks);
                free(ex->collected);
                /* Supervisors whose task ended exit as soon as its process group is gone
                 * (leftovers get SIGKILL after the grace period): reap them, bounded, rather
                 * than leave zombies to whoever owns this process next. */
                for (int wait = 0; ex->n_zombies && wait < 3000; wait += 10) {
                        reap_supervisors(ex);
                        if (ex->n_zombies)
                                usleep(10000);
                }
                free(ex->zombies);
                free(ex->log_dir);
                free(ex->run_dir);
                free(ex->supervisor);
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

/* Room for one more task beside the slots reserved by launches in flight. */
static int reserve(kerf_exec *ex)
{
        if (ex->n + ex->n_launching < ex->cap)
                return 0;
        size_t cap = (ex->n + ex->n_launching + 1) * 2;
        cap = cap < 16 ? 16 : cap;
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

static void fail(kerf_exec_failure *f, kerf_exec_stage stage, int err)
{
        if (f) {
                f->stage = stage;
                f->err = err < 0 ? -err : err;
        }
}

static void uncollect(kerf_exec *ex, uint64_t task_id)
{
        for (size_t i = 0; i < ex->n_collected; i++)
                if (ex->collected[i] == task_id)
                        ex->collected[i--] = ex->collected[--ex->n_collected];
}

static void unlink_status(const kerf_exec *ex, uint64_t task_id)
{
        char path[PATH_MAX + 8];
        if (kerf__exec_status_path(ex->run_dir, task_id, path, PATH_MAX) == 0) {
                unlink(path);
                strcat(path, ".tmp");
                unlink(path);
        }
}

/* The start is kerf_exec_launch_begin() / _run() (exec_launch.c) / _end(): kerfd forks
 * without its lock (docs/DAEMON.md "The daemon mutex"). */
int kerf_exec_launch_begin(kerf_exec *ex, uint64_t task_id, kerf_exec_launch *l)
{
        int r;

        if (!ex || !l || !task_id)
                return -EINVAL;
        memset(l, 0, sizeof(*l));
        l->report_fd = -1;
        if (find(ex, task_id))
                return -EEXIST;
        /* a slot for each launch in flight: _end cannot fail for want of memory */
        if ((r = reserve(ex)) < 0)
                return r;
        l->task_id = task_id;
        r = snprintf(l->supervisor, sizeof(l->supervisor), "%s", ex->supervisor);
        if (r >= (int)sizeof(l->supervisor) ||
            snprintf(l->proc.stdout_path, sizeof(l->proc.stdout_path), "%s/%" PRIu64 ".out",
                     ex->log_dir, task_id) >= (int)sizeof(l->proc.stdout_path) ||
            snprintf(l->proc.stderr_path, sizeof(l->proc.stderr_path), "%s/%" PRIu64 ".err",
                     ex->log_dir, task_id) >= (int)sizeof(l->proc.stderr_path) ||
            kerf__exec_status_path(ex->run_dir, task_id, l->status_path, PATH_MAX - 8) < 0)
                return -ENAMETOOLONG;
        l->proc.task_id = task_id;
        /* A record of an earlier run of this id (requeued after a preemption) goes now: the
         * next reap must not remove the new run's status file (_run replaces the file). */
        uncollect(ex, task_id);
        ex->n_launching++;
        l->begun = true;
        return 0;
}

int kerf_exec_launch_end(kerf_exec *ex, kerf_exec_launch *l, kerf_exec_proc *ret)
{
        if (!ex || !l || !l->begun)
                return -EINVAL;
        l->begun = false;
        ex->n_launching--;
        if (!l->ran)
                return -ECANCELED;
        l->ran = false;
        struct task *t = &ex->tasks[ex->n++]; /* reserved by _begin */
        memset(t, 0, sizeof(*t));
        t->proc = l->proc;
        t->fence = l->fence;
        t->report_fd = l->report_fd;
        l->report_fd = -1;
        t->sup_child = true;
        t->kill_at_ms = UINT64_MAX;
        if (ret)
                *ret = l->proc;
        return 0;
}

int kerf_exec_start(kerf_exec *ex, const kerf_exec_spec *sp, kerf_exec_proc *ret,
                    kerf_exec_failure *ret_fail)
{
        kerf_exec_launch *l;
        int r;

        if (!ex || !ret || !sp) {
                fail(ret_fail, KERF_EXEC_STAGE_SETUP, EINVAL);
                return -EINVAL;
        }
        if (!(l = malloc(sizeof(*l)))) {
                fail(ret_fail, KERF_EXEC_STAGE_SETUP, ENOMEM);
                return -ENOMEM;
        }
        r = kerf_exec_launch_begin(ex, sp->task_id, l);
        if (r < 0) {
                /* as before the split: a bad spec is -EINVAL whatever its id */
                int v = kerf__exec_validate(sp);
                r = v < 0 ? v : r;
                fail(ret_fail, KERF_EXEC_STAGE_SETUP, r);
                free(l);
                return r;
        }
        r = kerf_exec_launch_run(l, sp, ret_fail);
        int e = kerf_exec_launch_end(ex, l, ret);
        free(l);
        return r < 0 ? r : e;
}

/* ---- re-adoption -------------------------------------------------------------------------- */

/* Reads task_id's status file if it names this leader; true and *ret then. */
static bool status_of(const kerf_exec *ex, uint64_t task_id, pid_t pid, uint64_t starttime,
                      kerf__exec_status *ret)
{
        char path[PATH_MAX];
        kerf__exec_status st;

        if (kerf__exec_status_path(ex->run_dir, task_id, path, sizeof(path)) < 0 ||
            kerf__exec_status_read(path, &st) < 0)
                return false;
        if (st.task_id != task_id || st.pid != pid || st.starttime != starttime)
                return false; /* another run of the id, or someone else's file */
        *ret = st;
        return true;
}

/* 0 when the task can be adopted: *ret_have says whether it has a supervisor record. */
static int probe(const kerf_exec *ex, uint64_t task_id, pid_t pid, uint64_t starttime,
                 kerf__exec_status *st, bool *ret_have)
{
        bool have = status_of(ex, task_id, pid, starttime, st);

        *ret_have = have;
        if (kerf_exec_alive(pid, starttime) || (have && st->ended))
                return 0;
        /* the leader is gone: only its supervisor, still writing the record, knows how */
        return have && kerf_exec_alive(st->sup_pid, st->sup_starttime) ? 0 : -ESRCH;
}

bool kerf_exec_recoverable(const kerf_exec *ex, uint64_t task_id, pid_t pid, uint64_t starttime)
{
        kerf__exec_status st;
        bool have;

        return ex && pid > 1 && probe(ex, task_id, pid, starttime, &st, &have) == 0;
}

int kerf_exec_find(const kerf_exec *ex, uint64_t task_id, pid_t *ret_pid, uint64_t *ret_starttime)
{
        char path[PATH_MAX];
        kerf__exec_status st;
        int r;

        if (!ex || !ret_pid || !ret_starttime)
                return -EINVAL;
        if ((r = kerf__exec_status_path(ex->run_dir, task_id, path, sizeof(path))) < 0)
                return r;
        r = kerf__exec_status_read(path, &st);
        if (r < 0)
                return r == -EIO ? r : -ENOENT;
        if (st.task_id != task_id || st.pid <= 1)
                return -EIO;
        *ret_pid = st.pid;
        *ret_starttime = st.starttime;
        return 0;
}

int kerf_exec_adopt(kerf_exec *ex, uint64_t task_id, pid_t pid, pid_t pgid, uint64_t starttime,
                    kerf_fence *fence)
{
        kerf__exec_status st;
        bool have;

        if (!ex || task_id == 0 || pid <= 1 || pgid <= 1)
                return -EINVAL;
        if (find(ex, task_id))
                return -EEXIST;
        int r = probe(ex, task_id, pid, starttime, &st, &have);
        if (r < 0)
                return r;
        r = reserve(ex);
        if (r < 0)
                return r;
        uncollect(ex, task_id);
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
        /* A supervisor that died before the leader is not waited for: poll the leader. */
        if (have && (st.ended || kerf_exec_alive(st.sup_pid, st.sup_starttime))) {
                t->proc.supervisor = st.sup_pid;
                t->proc.sup_starttime = st.sup_starttime;
        }
        t->report_fd = -1;
        t->fence = fence;
        t->adopted = true;
        t->kill_at_ms = UINT64_MAX;
        t->poll_at_ms = 1; /* look at the next reap */
        return 0;
}

int kerf_exec_sweep(kerf_exec *ex)
{
        DIR *d;
        struct dirent *de;
        int n = 0;

        if (!ex || !(d = opendir(ex->run_dir)))
                return 0;
        while ((de = readdir(d))) {
                unsigned long long id;
                int end = 0;
                char path[PATH_MAX];
                kerf__exec_status st;
                if (sscanf(de->d_name, "task-%llu.status%n", &id, &end) != 1 || end == 0 ||
                    (de->d_name[end] && strcmp(de->d_name + end, ".tmp") != 0) || find(ex, id))
                        continue;
                if (snprintf(path, sizeof(path), "%s/%s", ex->run_dir, de->d_name) >=
                    (int)sizeof(path))
                        continue;
                if (kerf__exec_status_read(path, &st) == 0 && !st.ended &&
                    kerf_exec_alive(st.sup_pid, st.sup_starttime))
                        continue; /* its supervisor still works: not ours to judge */
                if (unlink(path) == 0)
                        n++;
        }
        closedir(d);
        return n;
}

/* ---- stop / tick / reap ------------------------------------------------------------------- */

/* Signals the task's process group, and its cgroup (which also holds members that left the
 * group with setsid/setpgid). Returns true when something was signalled. */
static bool signal_task(struct task *t, int sig)
{
        bool any = false;

        if (!t->leader_done || kerf__exec_group_alive(t->proc.pgid, t->proc.pid))
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
                        signal_task(t, t->stop_sig ? t->stop_sig : SIGTERM);
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

int kerf_exec_stop_signal(kerf_exec *ex, uint64_t task_id, int sig)
{
        struct task *t;
        if (!ex || sig < 1 || sig > 64)
                return -EINVAL;
        if (!(t = find(ex, task_id)))
                return -ENOENT;
        if (!t->stopping)
                t->stop_sig = sig;
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
        return kerf__exec_group_alive(t->proc.pgid, t->proc.pid) ||
               (t->fence && !kerf_fence_empty(t->fence));
}

static int push_id(uint64_t **arr, size_t *n, size_t *cap, uint64_t v)
{
        if (*n == *cap) {
                size_t nc = *cap ? *cap * 2 : 16;
                uint64_t *na = realloc(*arr, nc * sizeof(*na));
                if (!na)
                        return -ENOMEM;
                *arr = na;
                *cap = nc;
        }
        (*arr)[(*n)++] = v;
        return 0;
}

/* Remembers a supervisor child to reap later; without memory it stays a zombie until kerfd
 * exits (it does no harm). */
static void push_pid(kerf_exec *ex, pid_t pid)
{
        if (ex->n_zombies == ex->cap_zombies) {
                size_t nc = ex->cap_zombies ? ex->cap_zombies * 2 : 16;
                pid_t *na = realloc(ex->zombies, nc * sizeof(*na));
                if (!na)
                        return;
                ex->zombies = na;
                ex->cap_zombies = nc;
        }
        ex->zombies[ex->n_zombies++] = pid;
}

static void leader_ended(struct task *t, int status, int64_t end_wall_ms)
{
        t->leader_done = true;
        t->have_status = true;
        t->status = status;
        t->end_wall_ms = end_wall_ms;
}

/* The supervisor is gone or silent: its status file is the record, if it wrote one. */
static bool ended_by_file(const kerf_exec *ex, struct task *t)
{
        kerf__exec_status st;

        if (!status_of(ex, t->proc.task_id, t->proc.pid, t->proc.starttime, &st) || !st.ended)
                return false;
        leader_ended(t, st.status, st.end_wall_ms);
        return true;
}

/* Looks for the end of the task's leader without blocking. */
static void watch_leader(kerf_exec *ex, struct task *t, uint64_t now)
{
        if (t->report_fd >= 0) {
                /* started here: the supervisor's pipe says it (one read per reap) */
                kerf__exec_msg m;
                ssize_t n;
                do /* READY (kerf-supervise runs) carries nothing new */
                        n = read(t->report_fd, &m, sizeof(m));
                while (n == (ssize_t)sizeof(m) && m.kind == KERF__EXEC_MSG_READY);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return;
                close(t->report_fd);
                t->report_fd = -1;
                if (n == (ssize_t)sizeof(m) && m.kind == KERF__EXEC_MSG_EXIT) {
                        leader_ended(t, m.status, m.end_wall_ms);
                        return;
                }
                /* the supervisor died without a word: its file, else poll the leader */
                if (!ended_by_file(ex, t))
                        t->proc.supervisor = 0;
                t->poll_at_ms = now;
        }
        if (t->leader_done || now < t->poll_at_ms)
                return;
        if (t->proc.supervisor) {
                /* adopted with its supervisor: the status file says it */
                if (ended_by_file(ex, t))
                        return;
                if (kerf_exec_alive(t->proc.supervisor, t->proc.sup_starttime)) {
                        t->poll_at_ms = now + POLL_MS;
                        return;
                }
                if (ended_by_file(ex, t)) /* written just before it exited */
                        return;
                t->proc.supervisor = 0; /* lost: the status is lost with it */
        }
        if (kerf_exec_alive(t->proc.pid, t->proc.starttime)) {
                t->poll_at_ms = now + ADOPT_POLL_MS;
                return;
        }
        /* a supervisor that had not written its first record when we adopted the task */
        kerf__exec_status st;
        if (status_of(ex, t->proc.task_id, t->proc.pid, t->proc.starttime, &st)) {
                if (st.ended) {
                        leader_ended(t, st.status, st.end_wall_ms);
                        return;
                }
                if (kerf_exec_alive(st.sup_pid, st.sup_starttime)) {
                        t->proc.supervisor = st.sup_pid;
                        t->proc.sup_starttime = st.sup_starttime;
                        t->poll_at_ms = now + POLL_MS;
                        return;
                }
        }
        /* its supervisor is gone: with kerfd as subreaper the leader may be our child now */
        int ws;
        if (waitpid(t->proc.pid, &ws, WNOHANG) == t->proc.pid) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                leader_ended(t, ws, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
                return;
        }
        t->leader_done = true; /* status unknown */
}

/* Reaps our supervisor children that have exited (never waitpid(-1)). */
static void reap_supervisors(kerf_exec *ex)
{
        for (size_t i = 0; i < ex->n_zombies; i++) {
                pid_t r = waitpid(ex->zombies[i], NULL, WNOHANG);
                if (r == ex->zombies[i] || (r < 0 && errno == ECHILD))
                        ex->zombies[i--] = ex->zombies[--ex->n_zombies];
        }
}

int kerf_exec_reap(kerf_exec *ex, uint64_t now_ms, kerf_exec_exit *ret, size_t cap)
{
        size_t out = 0;

        if (!ex || (cap && !ret))
                return -EINVAL;
        /* the caller has recorded what earlier calls returned: the records may go, except
         * those whose end the caller has not made durable yet */
        for (size_t i = 0; i < ex->n_collected; i++) {
                if (ex->keep && ex->keep(ex->keep_ud, ex->collected[i]))
                        continue;
                unlink_status(ex, ex->collected[i]);
                ex->collected[i--] = ex->collected[--ex->n_collected];
        }
        reap_supervisors(ex);
        kerf_exec_tick(ex, now_ms);
        for (size_t i = 0; i < ex->n && out < cap;) {
                struct task *t = &ex->tasks[i];
                if (!t->leader_done)
                        watch_leader(ex, t, now_ms);
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
                e->end_wall_ms = t->have_status ? t->end_wall_ms : 0;
                if (t->report_fd >= 0)
                        close(t->report_fd);
                /* the record stays until the caller has it; the supervisor may still be
                 * reaping leftovers for a moment */
                if (push_id(&ex->collected, &ex->n_collected, &ex->cap_collected, t->proc.task_id) <
                    0)
                        unlink_status(ex, t->proc.task_id); /* cannot defer: never leak it */
                if (t->sup_child && waitpid(t->proc.supervisor, NULL, WNOHANG) == 0)
                        push_pid(ex, t->proc.supervisor);
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
