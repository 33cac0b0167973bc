/* SPDX-License-Identifier: Apache-2.0 */
/* launch.c - a task's process start in three steps, so that the fork/exec runs without the
 * daemon mutex (docs/DAEMON.md "The daemon mutex"):
 *   prepare (n->mu held, kerfd__do_start): identity check, slice region, work dir, device
 *           fence, kerf_exec_launch_begin, and the durable "starting" record (the
 *           double-start guard, docs/STATE.md); the launch is queued and the task marked
 *           (t->launch): no second start of it, and nothing frees it, until the end below;
 *   launch  (the ticker, n->mu released, kerfd__launch_drain): kerf_exec_launch_run, the
 *           fork/exec of its supervisor and the task, reading only the launch's own copies;
 *   finish  (n->mu held again): kerf_exec_launch_end and the "running" record, or the failed
 *           start; then a stop (cancel, ...) asked while the fork was in flight is applied.
 * Only the ticker forks, one launch at a time; a scheduler step outside it (an attach) waits
 * for the launch in flight (kerfd__launch_wait), so units never move under a fork. A stop or
 * requeue of a task whose launch is only queued takes the launch back (nothing forked); one
 * that comes while its fork is in flight is kept in the launch (and stops the fork if it has
 * not happened yet) and applied by finish. */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "node.h"
#include "kerf/errno.h"

typedef struct kerfd_launch {
        struct kerfd_launch *next;
        dtask *t; /* not freed while the launch exists (task_end / requeue take it back first) */
        kerf_exec_launch xl;
        kerf_exec_spec sp; /* its strings: the copies below, the task's argv/env, n's paths */
        kerf_exec_unit u;
        char vis[KERF_MAX_TASK_GPUS * KERF_UUID_LEN];
        char cwd[4500];
        char *region_path;
        gid_t sim_gid;
        char reason[KERF_TEXT_LEN]; /* the scheduler's reason, for the start's record */
        bool inflight;              /* the ticker forks it now, n->mu released */
        _Atomic bool abort;         /* no fork any more if it has not happened (a stop came) */
        bool skipped;               /* not forked: a stop came first */
        int r;                      /* kerf_exec_launch_run's result */
        kerf_exec_failure f;
        /* a stop asked while in flight (kerfd__launch_stop); KERF_END_NONE: none */
        kerf_end_reason stop_end;
        char stop_actor[96];
        char *stop_text;
        unsigned stop_grace_s;
        /* a requeue while in flight (kerfd__launch_requeue) */
        bool requeue;
        kerf_reason why;
        char action[32];
} kerfd_launch;

/* An unenforced slice says so in its own log (kerf logs), not only in kerfd's. */
static void note_unenforced(kerfd_node *n, dtask *t)
{
        FILE *f;
        if (!t->rec.log_stderr || !(f = fopen(t->rec.log_stderr, "ae")))
                return;
        fprintf(f,
                "kerf: task %llu runs UNENFORCED: the shim %s is missing "
                "(policy.unenforced_slices: allow); nothing caps its GPU memory or compute "
                "share\n",
                (unsigned long long)t->rec.id, n->shim_want);
        fclose(f);
}

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
}

/* The last word before a fork on who the task runs as: never root, nor an admin on the
 * socket, unless the config file let its tenant (allow_root). Catches records stored before
 * the rule and identities that changed since the submit. */
static int identity_check(kerfd_node *n, dtask *t, char *err, size_t errlen)
{
        ktenant *kt = kerfd__tenant_find(n, t->rec.tenant);
        long long uid = t->rec.uid >= 0 ? t->rec.uid : (long long)geteuid();
        long long gid = t->rec.gid >= 0 ? t->rec.gid : (long long)getegid();
        char why[160];

        if (kt && kt->cfg.allow_root)
                return 0;
        if (kt && t->rec.uid < 0 && geteuid() == 0) {
                /* a record from before the identity rule (it would run as root): it gets its
                 * tenant's identity now, or is refused */
                char why2[300];
                long long u, g;
                if (kerfd__task_identity(n, kt, &u, &g, why2, sizeof(why2)) < 0) {
                        seterr(err, errlen, "not started: %s", why2);
                        return -EPERM;
                }
                t->rec.uid = u;
                t->rec.gid = g;
                uid = u >= 0 ? u : uid;
                gid = g >= 0 ? g : gid;
        }
        if (!kerfd_uid_privileged(uid, why, sizeof(why))[0] && gid == 0 && geteuid() == 0)
                snprintf(why, sizeof(why), "gid 0 is root's group");
        if (why[0] && (geteuid() == 0 || uid != (long long)geteuid())) {
                seterr(err, errlen,
                       "not started: the task would run as %s (%s); tenant %s may not run "
                       "tasks as root or an admin (allow_root in kerfd's config file)",
                       uid == 0 ? "root" : "an admin", why, t->rec.tenant);
                return -EPERM;
        }
        return 0;
}

/* <state>/work/<id>, mode 0700, owned by the task's uid:gid; every directory above it must be
 * searchable by that uid (docs/SECURITY.md "Task identity"). */
static int work_dir(kerfd_node *n, dtask *t, char *cwd, size_t len, char *err, size_t errlen)
{
        char parent[4400], why[512];

        snprintf(parent, sizeof(parent), "%s/work", n->cfg.state_dir);
        snprintf(cwd, len, "%s/%llu", parent, (unsigned long long)t->rec.id);
        if (kerfd__searchable_by(parent, t->rec.uid, t->rec.gid, why, sizeof(why)) < 0) {
                seterr(err, errlen, "not started: the task cannot reach its work dir %s: %s", cwd,
                       why);
                return -EACCES;
        }
        if (mkdir(cwd, 0700) < 0 && errno != EEXIST) {
                seterr(err, errlen, "not started: work dir %s: %s", cwd, strerror(errno));
                return -errno;
        }
        if (t->rec.uid >= 0 && geteuid() == 0 &&
            chown(cwd, (uid_t)t->rec.uid, (gid_t)(t->rec.gid >= 0 ? t->rec.gid : t->rec.uid)) < 0) {
                seterr(err, errlen, "not started: work dir %s: chown: %s", cwd, strerror(errno));
                return -errno;
        }
        return 0;
}

static void launch_free(kerfd_launch *L)
{
        if (L) {
                free(L->region_path);
                free(L->stop_text);
                free(L);
        }
}

static void dequeue(kerfd_node *n, kerfd_launch *L)
{
        kerfd_launch **pp = &n->launch_q, *prev = NULL;

        while (*pp && *pp != L) {
                prev = *pp;
                pp = &(*pp)->next;
        }
        if (!*pp)
                return;
        *pp = L->next;
        if (n->launch_tail == L)
                n->launch_tail = prev;
        L->next = NULL;
}

int kerfd__launch_prepare(kerfd_node *n, dtask *t, const char *reason, char *err, size_t errlen)
{
        kerfd_launch *L;
        kerf_exec_spec *sp;
        int r;

        if ((r = identity_check(n, t, err, errlen)) < 0)
                return r;
        if (!(L = calloc(1, sizeof(*L)))) {
                seterr(err, errlen, "not started: out of memory");
                return -ENOMEM;
        }
        sp = &L->sp;
        if ((r = kerfd__slice_start_check(n, t, err, errlen)) < 0 ||
            (kerfd__is_soft(t) && (r = kerfd__slice_create(n, t, &t->units[0], err, errlen)) < 0))
                goto fail;
        if (kerfd__exec_unit(n, t, &L->u, L->vis, sizeof(L->vis))) {
                if (L->u.region_path && !(L->region_path = strdup(L->u.region_path))) {
                        seterr(err, errlen, "not started: out of memory");
                        r = -ENOMEM;
                        goto fail_slice;
                }
                L->u.region_path = L->region_path;
                sp->unit = &L->u;
        }
        if (t->rec.cwd)
                snprintf(L->cwd, sizeof(L->cwd), "%s", t->rec.cwd);
        else if ((r = work_dir(n, t, L->cwd, sizeof(L->cwd), err, errlen)) < 0)
                goto fail_slice;
        sp->task_id = t->rec.id;
        sp->argv = (const char *const *)t->argv;
        sp->env = (const char *const *)t->env;
        sp->cwd = L->cwd;
        if (t->rec.uid >= 0 && (geteuid() == 0 || (uid_t)t->rec.uid != geteuid())) {
                sp->run_as = true;
                sp->uid = (uid_t)t->rec.uid;
                sp->gid = (gid_t)(t->rec.gid >= 0 ? t->rec.gid : t->rec.uid);
        }
        sp->socket_path = n->cfg.socket;
        if (n->simulated) {
                /* the task sees the simulated driver (docs/SHIM-CONTRACT.md) */
                sp->sim_dir = n->sim_dir;
                sp->lib_dir = n->lib_dir;
                /* as /dev/nvidia* on a host: the simulated node's group (simgroup.c) */
                if (n->sim_shared) {
                        L->sim_gid = (gid_t)n->cfg.sim_gid;
                        sp->groups = &L->sim_gid;
                        sp->n_groups = 1;
                }
        }
        if (t->n_units && (r = kerfd__fence_task(n, t, err, errlen)) < 0)
                goto fail_slice;
        sp->fence = t->fence;
        if ((r = kerf_exec_launch_begin(n->exec, t->rec.id, &L->xl)) < 0) {
                seterr(err, errlen, "could not start: setup failed: %s", strerror(-r));
                goto fail_fence;
        }
        /* Double-start guard: the intended start is durable before the fork, so a kerfd that
         * dies before the start is recorded finds the process again on restart (recover.c). */
        kerfd__task_set_state(t, KERF_TASK_STARTING);
        t->rec.pid = t->rec.pgid = 0;
        t->rec.proc_start = 0;
        /* no fork if the start was not recorded (docs/STATE.md): it stays pending, retried */
        if ((r = kerfd__commit_task_ex(n, t, false, false, "kerfd", "task.starting", "ok", "")) <
            0) {
                snprintf(err, errlen, "start not recorded (%s): not started, retried",
                         kerf_strerror(r));
                (void)kerf_exec_launch_end(n->exec, &L->xl, NULL);
                r = -EAGAIN;
                goto fail_fence;
        }
        snprintf(L->reason, sizeof(L->reason), "%s", reason ? reason : "");
        L->t = t;
        t->launch = L;
        if (n->launch_tail)
                n->launch_tail->next = L;
        else
                n->launch_q = L;
        n->launch_tail = L;
        pthread_cond_signal(&n->kick); /* queued by an attach's step: the ticker forks it */
        return 0;
fail_fence:
        kerfd__fence_release(n, t);
fail_slice:
        kerfd__slice_remove(n, t);
fail:
        launch_free(L);
        return r;
}

/* Takes back a launch that is queued, not forking: nothing ran. */
static void drop(kerfd_node *n, dtask *t)
{
        kerfd_launch *L = t->launch;

        dequeue(n, L);
        (void)kerf_exec_launch_end(n->exec, &L->xl, NULL);
        t->launch = NULL;
        kerfd__fence_release(n, t);
        kerfd__slice_remove(n, t);
        launch_free(L);
}

bool kerfd__launch_stop(kerfd_node *n, dtask *t, kerf_end_reason end, const char *actor,
                        const char *text, unsigned grace_s)
{
        kerfd_launch *L = t->launch;

        if (!L->inflight) {
                drop(n, t);
                return false;
        }
        if (L->stop_end == KERF_END_NONE) { /* the first stop asked is the one applied */
                L->stop_end = end;
                snprintf(L->stop_actor, sizeof(L->stop_actor), "%s", actor ? actor : "kerfd");
                L->stop_text = strndup(text ? text : "", KERF_TEXT_LEN - 1);
                L->stop_grace_s = grace_s;
                atomic_store(&L->abort, true);
        } else if (grace_s < L->stop_grace_s) {
                L->stop_grace_s = grace_s;
        }
        t->stopping = true;
        t->stop_requeue = false;
        log_info("task %llu: stop (%s) asked while its start is in flight: applied when the "
                 "start is recorded",
                 (unsigned long long)t->rec.id, kerf_end_reason_name(end));
        return true;
}

bool kerfd__launch_requeue(kerfd_node *n, dtask *t, const kerf_reason *why, const char *action)
{
        kerfd_launch *L = t->launch;

        if (!L->inflight) {
                drop(n, t);
                return false;
        }
        /* no scheduler step runs while a fork is in flight (kerfd__launch_wait): not reached
         * unless that rule breaks; kept safe all the same */
        log_warn("task %llu: requeued (%s) while its start is in flight: applied when the start "
                 "is recorded",
                 (unsigned long long)t->rec.id, action);
        L->requeue = true;
        L->why = *why;
        snprintf(L->action, sizeof(L->action), "%s", action);
        atomic_store(&L->abort, true);
        return true;
}

/* n->mu released: the fork/exec (or nothing, if a stop of the task came first). */
static void launch(kerfd_launch *L, unsigned slow_ms)
{
        if (slow_ms) {
                /* test hook (KERFD_TEST_SLOW_LAUNCH_MS, docs/DAEMON.md): a slow fork, without
                 * the mutex; nothing the task owns is read here */
                struct timespec ts = {(time_t)(slow_ms / 1000), (long)(slow_ms % 1000) * 1000000L};
                while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                        ;
        }
        if (atomic_load(&L->abort)) {
                L->skipped = true;
                L->r = -ECANCELED;
                return;
        }
        memset(&L->f, 0, sizeof(L->f));
        L->r = kerf_exec_launch_run(&L->xl, &L->sp, &L->f);
}

/* n->mu held again: the launch's outcome recorded, then what was asked meanwhile. */
static void finish(kerfd_node *n, kerfd_launch *L)
{
        dtask *t = L->t;
        kerf_exec_proc p;
        char err[256];
        int r = kerf_exec_launch_end(n->exec, &L->xl, &p);

        t->launch = NULL;
        t->stopping = false; /* a stop asked meanwhile is in L, applied below */
        if (r == 0 && n->crash_after_fork) {
                /* test hook (KERFD_TEST_CRASH_AFTER_FORK, docs/DAEMON.md): die in the window
                 * between the fork and the commit of the start, as a crash would */
                log_warn("KERFD_TEST_CRASH_AFTER_FORK: exiting after starting task %llu (pid %d)",
                         (unsigned long long)t->rec.id, (int)p.pid);
                _exit(86);
        }
        if (r < 0) {
                kerfd__fence_release(n, t);
                kerfd__slice_remove(n, t);
                if (L->stop_end != KERF_END_NONE) {
                        /* stopped before its fork (or the fork failed meanwhile): nothing runs */
                        if (!L->skipped)
                                log_info("task %llu: could not start: %s failed: %s",
                                         (unsigned long long)t->rec.id,
                                         kerf_exec_stage_name(L->f.stage),
                                         strerror(L->f.err ? L->f.err : -L->r));
                        kerfd__task_stop(n, t, L->stop_end, L->stop_actor, L->stop_text,
                                         L->stop_grace_s);
                } else if (L->requeue) {
                        kerfd__task_requeue(n, t, &L->why, L->action);
                } else {
                        snprintf(err, sizeof(err), "could not start: %s failed: %s",
                                 kerf_exec_stage_name(L->f.stage),
                                 strerror(L->f.err ? L->f.err : -L->r));
                        kerfd__start_failed(n, t, err);
                }
                launch_free(L);
                return;
        }
        t->in_exec = true;
        t->rec.pid = p.pid;
        t->rec.pgid = p.pgid;
        t->rec.proc_start = p.starttime;
        free(t->rec.log_stdout);
        free(t->rec.log_stderr);
        t->rec.log_stdout = strdup(p.stdout_path);
        t->rec.log_stderr = strdup(p.stderr_path);
        if (t->unenforced)
                note_unenforced(n, t);
        kerfd__start_done(n, t, L->reason);
        if (L->stop_end !=
            KERF_END_NONE) /* asked after its fork: its process is stopped as any other */
                kerfd__task_stop(n, t, L->stop_end, L->stop_actor, L->stop_text, L->stop_grace_s);
        else if (L->requeue)
                kerfd__task_requeue(n, t, &L->why, L->action);
        launch_free(L);
}

void kerfd__launch_drain(kerfd_node *n)
{
        kerfd_launch *L;

        for (;;) {
                /* an attach's scheduler step waits for no fork: it goes first */
                while (n->launch_waiters && n->launch_q && !n->stopping)
                        pthread_cond_wait(&n->launched, &n->mu);
                if (!(L = n->launch_q))
                        break;
                /* kerfd stopping: a start decided before is still carried out, as when the
                 * stop waited for the tick that forked it */
                dequeue(n, L);
                L->inflight = true;
                n->launch_inflight = true;
                unsigned slow_ms = n->slow_launch_ms;
                pthread_mutex_unlock(&n->mu);
                launch(L, slow_ms);
                pthread_mutex_lock(&n->mu);
                n->launch_inflight = false;
                L->inflight = false;
                finish(n, L);
                pthread_cond_broadcast(&n->launched);
        }
}

void kerfd__launch_wait(kerfd_node *n)
{
        n->launch_waiters++;
        while (n->launch_inflight)
                pthread_cond_wait(&n->launched, &n->mu);
        if (--n->launch_waiters == 0)
                pthread_cond_broadcast(&n->launched);
}
