/* SPDX-License-Identifier: Apache-2.0 */
/* decide.c - kerfd carries out the scheduler's decisions: MIG create/destroy on the device,
 * preemption and fault requeues, task starts (slice region, device fence, executor) */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "kerf/errno.h"

static void set_reason(dtask *t, const kerf_reason *why)
{
        snprintf(t->rec.reason_code, sizeof(t->rec.reason_code), "%s", kerf_why_name(why->code));
        t->rec.reason_task = why->other_task;
        snprintf(t->rec.reason_text, sizeof(t->rec.reason_text), "%s", why->text);
}

/* Releases a live task for good: scheduler, units, store record, audit, event, memory. */
/* ---- decisions --------------------------------------------------------------------------------
 */

void kerfd__do_mig(kerfd_node *n, const kerf_decision *d)
{
        const kerf_gpu_desc *g = &n->fleet->gpus[d->gpu];
        uint64_t unit = d->units[0];
        int b = kerfd__bidx(n, d->gpu), r;

        if (d->kind == KERF_DEC_MIG_CREATE) {
                kerf_backend_mig m;
                dunit *du = calloc(1, sizeof(*du));
                memset(&m, 0, sizeof(m));
                if (!du)
                        r = -ENOMEM;
                else if (n->backend && b >= 0)
                        r = kerf_backend_mig_create(n->backend, (unsigned)b, d->mig_profile_id,
                                                    d->mig_start, &m);
                else
                        r = -KERF_EBACKEND;
                if (r == 0) {
                        du->id = unit;
                        du->kind = KERF_UNIT_MIG;
                        du->gpu = d->gpu;
                        du->mig_gi = (int)m.gi_id;
                        du->mig_ci = (int)m.ci_id;
                        du->mig_start = (int)m.start;
                        du->mig_profile = m.profile_name;
                        du->mem = m.mem_total;
                        snprintf(du->gpu_uuid, sizeof(du->gpu_uuid), "%s", g->uuid);
                        snprintf(du->mig_uuid, sizeof(du->mig_uuid), "%s", m.uuid);
                        free(kerf_u64map_del(&n->migs, unit));
                        kerf_u64map_put(&n->migs, unit, du);
                } else {
                        free(du);
                }
                kerf_sched_mig_done(n->sched, unit, r);
                if (r == 0) {
                        /* the unit row, its event and audit record: one change (records.c) */
                        kerfd_tx *x = kerfd__tx_new("mig.create", d->task);
                        kerf_store_unit su;
                        kerfd__unit_to_store(du, 0, "ready", &su);
                        kerfd__tx_unit(x, &su);
                        kerfd__tx_event(x, "mig_create", (int)d->gpu, unit, d->task, 0, NULL,
                                        "created MIG %s at slice %u on GPU %u (gi %d, %s) for "
                                        "task %llu",
                                        du->mig_profile, d->mig_start, d->gpu, du->mig_gi,
                                        du->mig_uuid, (unsigned long long)d->task);
                        kerfd__tx_audit(x, "kerfd", "", "mig.create", du->mig_uuid, "ok", "",
                                        g->uuid);
                        (void)kerfd__tx_commit(n, x, true);
                } else {
                        kerfd__event(n, "mig_create", (int)d->gpu, unit, d->task, 0, NULL,
                                     "MIG create (profile %u at %u) on GPU %u refused: %s %s",
                                     d->mig_profile_id, d->mig_start, d->gpu, kerf_strerror(r),
                                     n->backend ? kerf_backend_errmsg(n->backend) : "");
                        log_warn("MIG create on GPU %u refused: %s", d->gpu,
                                 n->backend ? kerf_backend_errmsg(n->backend) : "no backend");
                }
        } else {
                dunit *du = kerf_u64map_get(&n->migs, unit);
                if (!du)
                        r = 0; /* nothing on the device: nothing to destroy */
                else if (n->backend && b >= 0)
                        r = kerf_backend_mig_destroy(n->backend, (unsigned)b, (unsigned)du->mig_gi);
                else
                        r = -KERF_EBACKEND;
                if (r == -ENOENT)
                        r = 0;
                kerf_sched_mig_done(n->sched, unit, r);
                kerfd_tx *x = kerfd__tx_new("mig.destroy", 0);
                kerfd__tx_event(x, "mig_destroy", (int)d->gpu, unit, 0, 0, NULL,
                                "MIG instance unit %llu on GPU %u %s%s", (unsigned long long)unit,
                                d->gpu, r ? "not destroyed: " : "destroyed",
                                r ? kerf_strerror(r) : "");
                if (r == 0) {
                        kerfd__tx_unit_delete(x, unit);
                        kerfd__tx_audit(x, "kerfd", "", "mig.destroy",
                                        du && du->mig_uuid[0] ? du->mig_uuid : "unit", "ok", "",
                                        g->uuid);
                        free(kerf_u64map_del(&n->migs, unit));
                }
                (void)kerfd__tx_commit(n, x, true);
        }
}

/* Preempted, or its unit faulted: the process (if any) is stopped, the task waits again. The
 * scheduler has already released its units; their store rows go now. */
void kerfd__task_requeue(kerfd_node *n, dtask *t, const kerf_reason *why, const char *action)
{
        char obj[64];
        bool preempt = !strcmp(action, "task.preempt");
        int64_t used = kerfd__run_used_ns(t); /* before an attached task's region goes */

        set_reason(t, why);
        snprintf(t->rec.state, sizeof(t->rec.state), "pending");
        if (t->in_exec) {
                kerf_exec_stop(n->exec, t->rec.id, preempt ? KERF_EXEC_PREEMPT : KERF_EXEC_FAULT,
                               preempt ? n->cfg.grace_s * 1000 : 0, kerfd_mono_ms());
                t->stopping = true;
                t->stop_requeue = true;
        }
        if (!t->argv) {
                /* attached: no process of ours to wait for; its launcher keeps the pid */
                kerfd__fence_release(n, t);
                kerfd__slice_remove(n, t);
                kerfd__cdi_task_remove(n, t);
        } else {
                t->rec.pid = t->rec.pgid = 0;
        }
        t->rec.proc_start = 0;
        /* units back, task row, audit and event: one change, kept until written */
        kerfd_tx *x = kerfd__tx_new(action, t->rec.id);
        for (unsigned i = 0; i < t->n_units; i++) {
                if (t->units[i].kind == KERF_UNIT_MIG) {
                        kerf_store_unit su;
                        kerfd__unit_to_store(&t->units[i], 0, "ready", &su);
                        kerfd__tx_unit(x, &su);
                } else {
                        kerfd__tx_unit_delete(x, t->units[i].id);
                }
        }
        kerfd__tx_task(x, &t->rec, false);
        kerfd__tx_run(n, x, t, used);
        snprintf(obj, sizeof(obj), "task:%llu", (unsigned long long)t->rec.id);
        kerfd__tx_audit(x, "kerfd", t->rec.tenant, action, obj, "ok", why->text,
                        t->n_units ? t->units[0].gpu_uuid : "");
        kerfd__tx_event(x, preempt ? "preempt" : "requeue", t->n_units ? (int)t->units[0].gpu : -1,
                        t->n_units ? t->units[0].id : 0, t->rec.id, 0, NULL, "task %llu %s: %s",
                        (unsigned long long)t->rec.id,
                        preempt ? "preempted" : "requeued after a device fault", why->text);
        (void)kerfd__tx_commit(n, x, true);
        log_info("task %llu %s: %s", (unsigned long long)t->rec.id,
                 preempt ? "preempted" : "requeued", why->text);
        t->n_units = 0;
        t->rec.route[0] = 0;
}

void kerfd__do_preempt(kerfd_node *n, const kerf_decision *d)
{
        dtask *t = kerfd__live(n, d->task);

        if (!t)
                return;
        n->preemptions_total++;
        t->rec.preemptions++;
        kerfd__metrics_preempted(t);
        if (kerfd__preempt_by_suspend(n, t, d))
                return;
        kerfd__task_requeue(n, t, &d->reason, "task.preempt");
}

/* The unit contract of a task's units (docs/SHIM-CONTRACT.md); `vis` receives the
 * CUDA_VISIBLE_DEVICES value. False when the task has no unit. The slice region must already
 * exist (t->region_path) for a software slice. */
static bool exec_unit(kerfd_node *n, const dtask *t, kerf_exec_unit *u, char *vis, size_t vislen)
{
        size_t vl = 0;

        memset(u, 0, sizeof(*u));
        if (!t->n_units)
                return false;
        vis[0] = '\0';
        for (unsigned i = 0; i < t->n_units && vl < vislen; i++) {
                const dunit *du = &t->units[i];
                vl += (size_t)snprintf(vis + vl, vislen - vl, "%s%s", i ? "," : "",
                                       du->kind == KERF_UNIT_MIG && du->mig_uuid[0] ? du->mig_uuid
                                                                                    : du->gpu_uuid);
        }
        u->kind = t->units[0].kind;
        u->visible_devices = vis;
        u->unit_id = t->units[0].id;
        if (u->kind == KERF_UNIT_SLICE || u->kind == KERF_UNIT_TSLICE || u->kind == KERF_UNIT_MPS) {
                u->shim_path = t->unenforced && u->kind != KERF_UNIT_MPS ? "" : n->shim_path;
                u->region_path = t->region_path;
                u->memory_limit = t->units[0].mem;
                kerfd__slice_compute(&t->units[0], &u->compute_pct, &u->compute_limit_pct);
                if (u->kind == KERF_UNIT_MPS)
                        u->mps_thread_pct = u->compute_pct;
        }
        return true;
}

static bool is_soft(const dtask *t)
{
        kerf_unit_kind k = t->n_units ? t->units[0].kind : KERF_UNIT_WHOLE;
        return t->n_units && (k == KERF_UNIT_SLICE || k == KERF_UNIT_TSLICE || k == KERF_UNIT_MPS);
}

json_t *kerfd__attach_env(kerfd_node *n, const dtask *t)
{
        char vis[KERF_MAX_TASK_GPUS * KERF_UUID_LEN];
        kerf_exec_unit u;
        char **env = NULL;
        json_t *j;

        if (t->argv || !exec_unit(n, t, &u, vis, sizeof(vis)) || (is_soft(t) && !t->region_path))
                return NULL;
        if (kerf_exec_unit_env(&u, t->rec.id, n->cfg.socket[0] ? n->cfg.socket : NULL, &env) < 0)
                return NULL;
        j = json_object();
        for (char **e = env; *e; e++) {
                const char *eq = strchr(*e, '=');
                char name[128];
                if (!eq || (size_t)(eq - *e) >= sizeof(name))
                        continue;
                memcpy(name, *e, (size_t)(eq - *e));
                name[eq - *e] = '\0';
                json_object_set_new(j, name, json_string(eq + 1));
        }
        kerf_exec_env_free(env);
        return j;
}

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

static int start_process(kerfd_node *n, dtask *t, char *err, size_t errlen)
{
        kerf_exec_unit u;
        kerf_exec_spec sp;
        kerf_exec_proc p;
        kerf_exec_failure f;
        char vis[KERF_MAX_TASK_GPUS * KERF_UUID_LEN] = "", cwd[4500];
        gid_t sim_gid = (gid_t)n->cfg.sim_gid;
        int r;

        memset(&sp, 0, sizeof(sp));
        if ((r = identity_check(n, t, err, errlen)) < 0)
                return r;
        if ((r = kerfd__slice_start_check(n, t, err, errlen)) < 0)
                return r;
        if (is_soft(t) && (r = kerfd__slice_create(n, t, &t->units[0], err, errlen)) < 0)
                return r;
        if (exec_unit(n, t, &u, vis, sizeof(vis)))
                sp.unit = &u;
        if (t->rec.cwd) {
                snprintf(cwd, sizeof(cwd), "%s", t->rec.cwd);
        } else if ((r = work_dir(n, t, cwd, sizeof(cwd), err, errlen)) < 0) {
                kerfd__slice_remove(n, t);
                return r;
        }
        sp.task_id = t->rec.id;
        sp.argv = (const char *const *)t->argv;
        sp.env = (const char *const *)t->env;
        sp.cwd = cwd;
        if (t->rec.uid >= 0 && (geteuid() == 0 || (uid_t)t->rec.uid != geteuid())) {
                sp.run_as = true;
                sp.uid = (uid_t)t->rec.uid;
                sp.gid = (gid_t)(t->rec.gid >= 0 ? t->rec.gid : t->rec.uid);
        }
        sp.socket_path = n->cfg.socket;
        if (n->simulated) {
                /* the task sees the simulated driver (docs/SHIM-CONTRACT.md) */
                sp.sim_dir = n->sim_dir;
                sp.lib_dir = n->lib_dir;
                /* as /dev/nvidia* on a host: the simulated node's group (simgroup.c) */
                if (n->sim_shared) {
                        sp.groups = &sim_gid;
                        sp.n_groups = 1;
                }
        }
        if (t->n_units && (r = kerfd__fence_task(n, t, err, errlen)) < 0) {
                kerfd__slice_remove(n, t);
                return r;
        }
        sp.fence = t->fence;
        /* Double-start guard: the intended start is durable before the fork, so a kerfd that
         * dies before the commit below finds the process again on restart (recover.c). */
        snprintf(t->rec.state, sizeof(t->rec.state), "starting");
        t->rec.pid = t->rec.pgid = 0;
        t->rec.proc_start = 0;
        /* no fork if the start was not recorded (docs/STATE.md): it stays pending, retried */
        if ((r = kerfd__commit_task_ex(n, t, false, false, "kerfd", "task.starting", "ok", "")) <
            0) {
                snprintf(err, errlen, "start not recorded (%s): not started, retried",
                         kerf_strerror(r));
                kerfd__fence_release(n, t);
                kerfd__slice_remove(n, t);
                return -EAGAIN;
        }
        memset(&f, 0, sizeof(f));
        r = kerf_exec_start(n->exec, &sp, &p, &f);
        if (r < 0) {
                snprintf(err, errlen, "could not start: %s failed: %s",
                         kerf_exec_stage_name(f.stage), strerror(f.err ? f.err : -r));
                kerfd__fence_release(n, t);
                kerfd__slice_remove(n, t);
                return r;
        }
        if (n->crash_after_fork) {
                /* test hook (KERFD_TEST_CRASH_AFTER_FORK, docs/DAEMON.md): die in the window
                 * between the fork and the commit of the start, as a crash would */
                log_warn("KERFD_TEST_CRASH_AFTER_FORK: exiting after starting task %llu (pid %d)",
                         (unsigned long long)t->rec.id, (int)p.pid);
                _exit(86);
        }
        t->in_exec = true;
        t->stopping = false;
        t->rec.pid = p.pid;
        t->rec.pgid = p.pgid;
        t->rec.proc_start = p.starttime;
        free(t->rec.log_stdout);
        free(t->rec.log_stderr);
        t->rec.log_stdout = strdup(p.stdout_path);
        t->rec.log_stderr = strdup(p.stderr_path);
        if (t->unenforced)
                note_unenforced(n, t);
        return 0;
}

/* An attached task got its unit: its slice region, and its device fence (the launcher's
 * process is moved into the task's cgroup). The launcher reads both from the answer. */
static int attach_process(kerfd_node *n, dtask *t, char *err, size_t errlen)
{
        int r;

        if (!t->n_units)
                return 0;
        if ((r = kerfd__slice_start_check(n, t, err, errlen)) < 0)
                return r;
        if (is_soft(t) && (r = kerfd__slice_create(n, t, &t->units[0], err, errlen)) < 0)
                return r;
        if ((r = kerfd__fence_attach(n, t, err, errlen)) < 0) {
                kerfd__slice_remove(n, t);
                return r;
        }
        /* a failure is logged and the task runs: its launcher sees no "cdi_device" */
        (void)kerfd__cdi_task_write(n, t);
        return 0;
}

void kerfd__do_start(kerfd_node *n, const kerf_decision *d)
{
        dtask *t = kerfd__live(n, d->task);
        char err[256] = "";

        if (!t)
                return;
        if (t->start_unrecorded) { /* this start is its retry */
                t->start_unrecorded = false;
                n->n_start_unrecorded--;
        }
        kerfd__units_refresh(n, t);
        set_reason(t, &d->reason);
        if (t->preempt_frozen && kerfd__resume_preempted(n, t)) {
                snprintf(t->rec.state, sizeof(t->rec.state), "running");
                kerfd__commit_task(n, t, false, "kerfd", "task.start", "ok",
                                   "resumed in place after a preemption by suspend");
                log_info("task %llu resumed in place on unit %llu", (unsigned long long)t->rec.id,
                         (unsigned long long)t->units[0].id);
                return;
        }
        if (t->in_exec) {
                /* the preempted process of this very task is still stopping: start later */
                t->stop_requeue = true;
                return;
        }
        int64_t was_started = t->rec.started_ms;
        unsigned was_restarts = t->rec.restarts;
        if (t->rec.started_ms)
                t->rec.restarts++;
        t->rec.started_ms = (int64_t)kerfd_now_ms();
        t->started_mono = t->last_active_mono = kerfd_mono_ms();
        int sr = t->argv ? start_process(n, t, err, sizeof(err))
                         : attach_process(n, t, err, sizeof(err));
        if (sr == -EAGAIN) {
                /* not recorded, not forked: pending (it keeps its units), tried again by the
                 * records tick once the store writes (records.c) */
                snprintf(t->rec.state, sizeof(t->rec.state), "pending");
                snprintf(t->rec.reason_text, sizeof(t->rec.reason_text), "%s", err);
                t->rec.started_ms = was_started;
                t->rec.restarts = was_restarts;
                if (!t->start_unrecorded) {
                        t->start_unrecorded = true;
                        n->n_start_unrecorded++;
                }
                if (kerfd_mono_ms() - n->start_unrecorded_log_mono >= 5000) { /* retried often */
                        n->start_unrecorded_log_mono = kerfd_mono_ms();
                        log_warn("task %llu: %s (%u such)", (unsigned long long)t->rec.id, err,
                                 n->n_start_unrecorded);
                }
                return;
        }
        if (sr < 0) {
                kerfd__commit_task(n, t, false, "kerfd", "task.start", "error", err);
                kerfd__task_end(n, t, "failed", "failure", "kerfd", err);
                return;
        }
        snprintf(t->rec.state, sizeof(t->rec.state), "running");
        kerfd__metrics_started(t); /* its queue wait, on a first start */
        if (t->unenforced) {
                char text[KERF_TEXT_LEN + 32];
                snprintf(text, sizeof(text), "UNENFORCED (no shim): %s", d->reason.text);
                kerfd__commit_task(n, t, false, "kerfd", "task.start", "ok", text);
        } else {
                kerfd__commit_task(n, t, false, "kerfd", "task.start", "ok", d->reason.text);
        }
        log_info("task %llu started (pid %lld) on %s unit %llu, GPU %u%s",
                 (unsigned long long)t->rec.id, (long long)t->rec.pid, t->rec.route,
                 t->n_units ? (unsigned long long)t->units[0].id : 0ULL,
                 t->n_units ? t->units[0].gpu : 0,
                 t->unenforced ? " UNENFORCED: no shim, nothing caps its memory or compute" : "");
}

/* A deferred start (its previous process had not gone yet) once the old one is reaped. */
void kerfd__retry_deferred(kerfd_node *n, dtask *t)
{
        kerf_task_info ti;
        kerf_decision d;

        if (kerf_sched_task_get(n->sched, t->rec.id, &ti) < 0 || ti.state != KERF_TASK_RUNNING)
                return;
        memset(&d, 0, sizeof(d));
        d.kind = KERF_DEC_START;
        d.task = t->rec.id;
        d.reason = ti.reason;
        kerfd__do_start(n, &d);
}
