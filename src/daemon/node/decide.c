/* SPDX-License-Identifier: Apache-2.0 */
/* decide.c - kerfd carries out the scheduler's decisions: preemption and fault requeues, task
 * starts (attached tasks here; a process's start: launch.c); MIG create/destroy: migop.c */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"
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

/* Preempted, or its unit faulted: the process (if any) is stopped, the task waits again. The
 * scheduler has already released its units; their store rows go now. */
void kerfd__task_requeue(kerfd_node *n, dtask *t, const kerf_reason *why, const char *action)
{
        char obj[64];
        bool preempt = !strcmp(action, "task.preempt");

        if (t->launch && kerfd__launch_requeue(n, t, why, action))
                return; /* its fork is in flight: requeued when it is recorded (launch.c) */
        int64_t used = kerfd__run_used_ns(t); /* before an attached task's region goes */

        set_reason(t, why);
        kerfd__task_set_state(t, KERF_TASK_PENDING);
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
                        kerfd__unit_to_store(&t->units[i], 0, KERF_UNIT_READY, &su);
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
bool kerfd__exec_unit(kerfd_node *n, const dtask *t, kerf_exec_unit *u, char *vis, size_t vislen)
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

bool kerfd__is_soft(const dtask *t)
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

        if (t->argv || !kerfd__exec_unit(n, t, &u, vis, sizeof(vis)) ||
            (kerfd__is_soft(t) && !t->region_path))
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

/* An attached task got its unit: its slice region, and its device fence (the launcher's
 * process is moved into the task's cgroup). The launcher reads both from the answer. */
static int attach_process(kerfd_node *n, dtask *t, char *err, size_t errlen)
{
        int r;

        if (!t->n_units)
                return 0;
        if ((r = kerfd__slice_start_check(n, t, err, errlen)) < 0)
                return r;
        if (kerfd__is_soft(t) && (r = kerfd__slice_create(n, t, &t->units[0], err, errlen)) < 0)
                return r;
        if ((r = kerfd__fence_attach(n, t, err, errlen)) < 0) {
                kerfd__slice_remove(n, t);
                return r;
        }
        kerfd__members_fence(n, t); /* placed again after a requeue: its members too */
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
                kerfd__task_set_state(t, KERF_TASK_RUNNING);
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
        if (t->launch) {
                /* its start is prepared or forking (launch.c): never a second one */
                log_warn("task %llu: started again while its start is in flight: ignored",
                         (unsigned long long)t->rec.id);
                return;
        }
        int sr = t->argv ? kerfd__launch_prepare(n, t, d->reason.text, err, sizeof(err))
                         : attach_process(n, t, err, sizeof(err));
        if (sr == -EAGAIN) {
                /* not recorded, not forked: pending (it keeps its units), tried again by the
                 * records tick once the store writes (records.c) */
                kerfd__task_set_state(t, KERF_TASK_PENDING);
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
                kerfd__start_failed(n, t, err);
                return;
        }
        if (t->argv)
                return; /* "starting": the ticker forks it and records the start (launch.c) */
        kerfd__start_done(n, t, d->reason.text);
}

void kerfd__start_failed(kerfd_node *n, dtask *t, const char *err)
{
        kerfd__commit_task(n, t, false, "kerfd", "task.start", "error", err);
        kerfd__task_end(n, t, KERF_END_FAILURE, "kerfd", err);
}

void kerfd__start_done(kerfd_node *n, dtask *t, const char *reason)
{
        kerfd__task_set_state(t, KERF_TASK_RUNNING);
        kerfd__metrics_started(t); /* its queue wait, on a first start */
        if (t->unenforced) {
                char text[KERF_TEXT_LEN + 32];
                snprintf(text, sizeof(text), "UNENFORCED (no shim): %s", reason);
                kerfd__commit_task(n, t, false, "kerfd", "task.start", "ok", text);
        } else {
                kerfd__commit_task(n, t, false, "kerfd", "task.start", "ok", reason);
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
