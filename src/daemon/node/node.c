/* SPDX-License-Identifier: Apache-2.0 */
/* node.c - the node controller: scheduler + store + executor + backend, the tick, reclamation */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "node.h"
#include "uidcache.h"
#include "kerf/errno.h"

#define MAX_DEC 64

uint64_t kerfd_now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t kerfd_mono_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

dtask *kerfd__live(kerfd_node *n, uint64_t id)
{
        return id ? kerf_u64map_get(&n->live, id) : NULL;
}

ktenant *kerfd__tenant_find(kerfd_node *n, const char *name)
{
        for (unsigned i = 0; name && i < n->n_tenants; i++)
                if (!strcmp(n->tenants[i].cfg.name, name))
                        return &n->tenants[i];
        return NULL;
}

/* Creates or updates a tenant in the scheduler and the node's table (not the store). */
int kerfd__tenant_apply(kerfd_node *n, const kerfd_tenant_cfg *c)
{
        kerf_tenant_spec spec;
        ktenant *t = kerfd__tenant_find(n, c->name);
        int r;

        kerf_tenant_spec_init(&spec, c->name);
        spec.cohort = c->cohort[0] ? c->cohort : NULL;
        spec.weight = c->weight;
        memcpy(spec.nominal, c->nominal, sizeof(spec.nominal));
        memcpy(spec.borrow_limit, c->borrow_limit, sizeof(spec.borrow_limit));
        memcpy(spec.lend_limit, c->lend_limit, sizeof(spec.lend_limit));
        if ((r = kerf_sched_tenant_set(n->sched, &spec)) < 0)
                return r;
        if (!t) {
                if (n->n_tenants >= KERFD_MAX_TENANTS)
                        return -ENOSPC;
                t = &n->tenants[n->n_tenants++];
                t->tokens = n->cfg.submit_burst;
                t->refill_ms = kerfd_now_ms();
        }
        t->cfg = *c;
        return 0;
}

/* An audit record: inside the caller's open transaction it is appended there (and the result
 * is the caller's to act on); otherwise it is a change of its own, kept until written. */
int kerfd__audit(kerfd_node *n, const char *actor, const char *tenant, const char *action,
                 const char *object, const char *result, const char *reason, const char *gpu_uuid)
{
        kerfd_tx *x;

        if (kerf_store_in_transaction(n->store)) {
                kerf_store_audit a;
                memset(&a, 0, sizeof(a));
                snprintf(a.actor, sizeof(a.actor), "%s", actor && *actor ? actor : "kerfd");
                snprintf(a.tenant, sizeof(a.tenant), "%s", tenant ? tenant : "");
                snprintf(a.action, sizeof(a.action), "%s", action);
                snprintf(a.object, sizeof(a.object), "%s", object);
                snprintf(a.result, sizeof(a.result), "%s", result ? result : "ok");
                snprintf(a.reason, sizeof(a.reason), "%s", reason ? reason : "");
                snprintf(a.gpu_uuid, sizeof(a.gpu_uuid), "%s", gpu_uuid ? gpu_uuid : "");
                return kerf_store_audit_append(n->store, &a);
        }
        /* "task:12": the change belongs to task 12 (its answers say durable: false) */
        x = kerfd__tx_new(action,
                          !strncmp(object, "task:", 5) ? strtoull(object + 5, NULL, 10) : 0);
        kerfd__tx_audit(x, actor, tenant, action, object, result, reason, gpu_uuid);
        return kerfd__tx_commit(n, x, true) < 0 ? -EIO : 0;
}

void kerfd__event(kerfd_node *n, const char *kind, int gpu, uint64_t unit, uint64_t task, int xid,
                  const char *cls, const char *fmt, ...)
{
        kerfd_tx *x;
        va_list ap;

        if (kerf_store_in_transaction(n->store)) {
                /* inside a caller's transaction: part of it */
                kerf_store_event e;
                int r;
                memset(&e, 0, sizeof(e));
                snprintf(e.kind, sizeof(e.kind), "%s", kind);
                e.gpu = gpu;
                e.unit = unit;
                e.task = task;
                e.xid = xid;
                snprintf(e.class, sizeof(e.class), "%s", cls ? cls : "");
                va_start(ap, fmt);
                vsnprintf(e.text, sizeof(e.text), fmt, ap);
                va_end(ap);
                if ((r = kerf_store_event_append(n->store, &e)) < 0)
                        log_error("event %s not recorded: %s (%s)", kind, kerf_strerror(r),
                                  kerf_store_errmsg(n->store));
                return;
        }
        x = kerfd__tx_new(kind, task);
        va_start(ap, fmt);
        kerfd__tx_eventv(x, kind, gpu, unit, task, xid, cls, fmt, ap);
        va_end(ap);
        (void)kerfd__tx_commit(n, x, true);
}

int kerfd__bidx(kerfd_node *n, unsigned gpu)
{
        return gpu < KERF_MAX_NODE_GPUS ? n->backend_index[gpu] : -1;
}

void kerfd__unit_to_store(const dunit *u, uint64_t task, kerf_unit_state state, kerf_store_unit *s)
{
        kerf_store_unit_init(s);
        s->id = u->id;
        s->task = task;
        snprintf(s->kind, sizeof(s->kind), "%s", kerf_unit_kind_name(u->kind));
        snprintf(s->state, sizeof(s->state), "%s", kerf_unit_state_name(state));
        s->gpu = (int)u->gpu;
        snprintf(s->gpu_uuid, sizeof(s->gpu_uuid), "%s", u->gpu_uuid);
        s->mem_bytes = u->mem;
        s->compute_pct = u->compute;
        s->compute_limit_pct = u->compute_limit;
        if (u->kind == KERF_UNIT_MIG) {
                snprintf(s->mig_profile, sizeof(s->mig_profile), "%s",
                         u->mig_profile ? u->mig_profile : "");
                s->mig_gi = u->mig_gi;
                s->mig_ci = u->mig_ci;
                s->mig_start = u->mig_start;
                snprintf(s->mig_uuid, sizeof(s->mig_uuid), "%s", u->mig_uuid);
        }
}

/* The record of a task change: the task row, its units (assigned) and the audit record. */
static kerfd_tx *task_tx(kerfd_node *n, dtask *t, bool insert, const char *actor,
                         const char *action, const char *result, const char *reason)
{
        kerfd_tx *x = kerfd__tx_new(action, t->rec.id);
        char obj[64];

        snprintf(obj, sizeof(obj), "task:%llu", (unsigned long long)t->rec.id);
        kerfd__tx_task(x, &t->rec, insert);
        for (unsigned i = 0; i < t->n_units; i++) {
                kerf_store_unit su;
                kerfd__unit_to_store(&t->units[i], t->rec.id, KERF_UNIT_ASSIGNED, &su);
                kerfd__tx_unit(x, &su);
        }
        if (!insert)
                kerfd__tx_run(n, x, t, kerfd__run_used_ns(t));
        kerfd__tx_audit(x, actor, t->rec.tenant, action, obj, result, reason,
                        t->n_units ? t->units[0].gpu_uuid : "");
        return x;
}

int kerfd__commit_task_ex(kerfd_node *n, dtask *t, bool insert, bool defer, const char *actor,
                          const char *action, const char *result, const char *reason)
{
        return kerfd__tx_commit(n, task_tx(n, t, insert, actor, action, result, reason), defer);
}

/* A new task (insert) is stored now or refused; a change of a known one is kept until it is
 * written (docs/STATE.md "Store failures"). */
int kerfd__commit_task(kerfd_node *n, dtask *t, bool insert, const char *actor, const char *action,
                       const char *result, const char *reason)
{
        return kerfd__commit_task_ex(n, t, insert, !insert, actor, action, result, reason);
}

/* Fills t->units from the scheduler (after START) and the MIG instance table. */
void kerfd__units_refresh(kerfd_node *n, dtask *t)
{
        kerf_task_info ti;

        if (kerf_sched_task_get(n->sched, t->rec.id, &ti) < 0)
                return;
        t->n_units = 0;
        if (kerfd__units_reserve(t, ti.n_units) < 0) {
                log_error("task %llu: out of memory for its %u units",
                          (unsigned long long)t->rec.id, ti.n_units);
                ti.n_units = 0;
        }
        for (unsigned i = 0; i < ti.n_units && i < t->cap_units; i++) {
                kerf_unit_info ui;
                dunit *u = &t->units[t->n_units];
                if (kerf_sched_unit_get(n->sched, ti.units[i], &ui) < 0)
                        continue;
                memset(u, 0, sizeof(*u));
                u->id = ui.id;
                u->kind = ui.kind;
                u->gpu = ui.gpu;
                snprintf(u->gpu_uuid, sizeof(u->gpu_uuid), "%s", ui.gpu_uuid);
                u->mem = ui.mem_bytes;
                u->compute = ui.compute_pct;
                u->compute_limit = ui.compute_limit_pct;
                u->mig_gi = u->mig_ci = u->mig_start = -1;
                if (ui.kind == KERF_UNIT_MIG) {
                        dunit *m = kerf_u64map_get(&n->migs, ui.id);
                        u->mig_profile = ui.mig_profile_name;
                        u->mig_start = (int)ui.mig_start;
                        if (m) {
                                u->mig_gi = m->mig_gi;
                                u->mig_ci = m->mig_ci;
                                snprintf(u->mig_uuid, sizeof(u->mig_uuid), "%s", m->mig_uuid);
                        }
                }
                t->n_units++;
        }
        snprintf(t->rec.route, sizeof(t->rec.route), "%s",
                 ti.n_units ? kerf_unit_kind_name(ti.route) : "");
}

void kerfd__task_end(kerfd_node *n, dtask *t, kerf_end_reason end, const char *actor,
                     const char *text)
{
        const char *end_reason = kerf_end_reason_name(end);
        const char *state = kerf_task_state_name(kerf_end_reason_state(end));
        kerf_task_info ti;
        char why[KERF_TEXT_LEN];
        char units[160] = "";
        size_t ul = 0;

        /* its fork in flight: ended when the start is recorded (launch.c; a task whose start
         * is in flight only ends through a stop, this is not reached otherwise) */
        if (t->launch && kerfd__launch_stop(n, t, end, actor, text, 0))
                return;
        if (kerf_sched_task_get(n->sched, t->rec.id, &ti) == 0) {
                if (end == KERF_END_EXIT || end == KERF_END_FAILURE)
                        kerf_sched_finish(n->sched, t->rec.id);
                else
                        kerf_sched_cancel(n->sched, t->rec.id);
        }
        for (unsigned i = 0; i < t->n_units && ul + 24 < sizeof(units); i++)
                ul += (size_t)snprintf(units + ul, sizeof(units) - ul, "%s%llu", i ? "," : "",
                                       (unsigned long long)t->units[i].id);
        kerfd__task_set_state(t, kerf_end_reason_state(end));
        snprintf(t->rec.end_reason, sizeof(t->rec.end_reason), "%s", end_reason);
        /* an end seen by the task's supervisor keeps its time (it may predate a restart) */
        t->rec.ended_ms = t->exit_wall_ms > 0 ? t->exit_wall_ms : (int64_t)kerfd_now_ms();
        {
                char ext[200];
                kerfd__external_text(t, ext, sizeof(ext)); /* the launcher's job, if attached */
                snprintf(why, sizeof(why), "%s%s%s%s%s%s", end_reason, text && *text ? ": " : "",
                         text ? text : "", ext[0] ? " [" : "", ext, ext[0] ? "]" : "");
        }
        if (text && *text)
                snprintf(t->rec.reason_text, sizeof(t->rec.reason_text), "%s", text);
        {
                /* the end, its units back, its audit record and the reclaim event: one change,
                 * kept and retried until written if the store cannot write now */
                kerfd_tx *x = kerfd__tx_new("task.end", t->rec.id);
                char obj[64];
                kerfd__tx_task(x, &t->rec, false);
                kerfd__tx_run(n, x, t, kerfd__run_used_ns(t));
                if (!t->argv) /* the processes that joined it are released with it */
                        kerfd__tx_member_delete(x, t->rec.id, 0);
                for (unsigned i = 0; i < t->n_units; i++) {
                        /* a MIG instance stays (READY, free); a share or whole GPU vanishes */
                        if (t->units[i].kind == KERF_UNIT_MIG) {
                                kerf_store_unit su;
                                kerfd__unit_to_store(&t->units[i], 0, KERF_UNIT_READY, &su);
                                kerfd__tx_unit(x, &su);
                        } else {
                                kerfd__tx_unit_delete(x, t->units[i].id);
                        }
                }
                snprintf(obj, sizeof(obj), "task:%llu", (unsigned long long)t->rec.id);
                kerfd__tx_audit(x, actor, t->rec.tenant, "task.end", obj, state, why,
                                t->n_units ? t->units[0].gpu_uuid : "");
                if (t->n_units)
                        kerfd__tx_event(x, "reclaim", (int)t->units[0].gpu, t->units[0].id,
                                        t->rec.id, 0, NULL,
                                        "task %llu %s (%s): units %s, process group, metrics "
                                        "and quota released",
                                        (unsigned long long)t->rec.id, state, end_reason, units);
                if (kerfd__tx_commit(n, x, true) < 0)
                        log_error("store: end of task %llu (%s) not recorded",
                                  (unsigned long long)t->rec.id, state);
        }
        if (t->start_unrecorded) {
                t->start_unrecorded = false;
                n->n_start_unrecorded--;
        }
        kerfd__fence_release(n, t);
        kerfd__slice_remove(n, t);
        kerfd__cdi_task_remove(n, t);
        log_info("task %llu %s (%s)%s%s; units [%s] reclaimed", (unsigned long long)t->rec.id,
                 state, end_reason, text && *text ? ": " : "", text ? text : "", units);
        kerf_u64map_del(&n->live, t->rec.id);
        n->n_live--;
        kerfd__tenant_count(n, t->rec.tenant, -1);
        n->reclaims_total++;
        kerfd_task_free(t);
        n->want_tick = true;
}

static kerf_exec_reason exec_reason(kerf_end_reason end)
{
        switch (end) {
        case KERF_END_TIMEOUT:
                return KERF_EXEC_TIMEOUT;
        case KERF_END_IDLE:
                return KERF_EXEC_IDLE;
        case KERF_END_PREEMPTED:
                return KERF_EXEC_PREEMPT;
        case KERF_END_LEASE_EXPIRED:
                return KERF_EXEC_LEASE;
        case KERF_END_FAULT:
                return KERF_EXEC_FAULT;
        default:
                return KERF_EXEC_CANCEL;
        }
}

void kerfd__task_set_state(dtask *t, kerf_task_state st)
{
        t->state = st;
        snprintf(t->rec.state, sizeof(t->rec.state), "%s", kerf_task_state_name(st));
}

int kerfd__task_stop(kerfd_node *n, dtask *t, kerf_end_reason end, const char *actor,
                     const char *text, unsigned grace_s)
{
        char obj[64];

        if (t->launch && kerfd__launch_stop(n, t, end, actor, text, grace_s))
                return 0; /* its fork is in flight: stopped when it is recorded (launch.c) */
        if (t->in_exec) {
                int r = kerf_exec_stop(n->exec, t->rec.id, exec_reason(end), grace_s * 1000,
                                       kerfd_mono_ms());
                if (r == 0) {
                        if (t->stopping && t->stop_requeue) {
                                /* preempted and still stopping: it ends instead of waiting */
                                kerf_sched_cancel(n->sched, t->rec.id);
                                t->stopping = false;
                        }
                        if (!t->stopping) {
                                t->stopping = true;
                                t->stop_requeue = false;
                                t->stop_end = end;
                                free(t->stop_text);
                                t->stop_text = strndup(text ? text : "", KERF_TEXT_LEN - 1);
                                snprintf(obj, sizeof(obj), "task:%llu",
                                         (unsigned long long)t->rec.id);
                                (void)kerfd__audit(n, actor, t->rec.tenant, "task.stop", obj, "ok",
                                                   kerf_end_reason_name(end), "");
                        }
                        n->want_tick = true;
                        return 0;
                }
                t->in_exec = false; /* already gone: end it now */
        }
        kerfd__task_end(n, t, end, actor, text);
        return 0;
}

static void handle_exit(kerfd_node *n, const kerf_exec_exit *e)
{
        dtask *t = kerfd__live(n, e->task_id);
        char text[KERF_TEXT_LEN];

        if (!t)
                return;
        t->in_exec = false;
        t->rec.exit_code = e->exit_code;
        t->rec.signal = e->signal;
        t->exit_wall_ms = e->end_wall_ms;
        if (t->stopping && t->stop_requeue) {
                t->exit_wall_ms = 0;
                /* preempted: its process is gone; it waits (or was placed again) */
                t->stopping = false;
                t->stop_requeue = false;
                t->rec.exit_code = -1;
                t->rec.signal = 0;
                kerfd__fence_release(n, t);
                kerfd__slice_remove(n, t);
                kerfd__retry_deferred(n, t);
                return;
        }
        if (t->stopping) {
                kerfd__task_end(n, t, t->stop_end, "kerfd", t->stop_text ? t->stop_text : "");
                return;
        }
        if (e->unknown) {
                /* no supervisor record (its supervisor was lost, or an older kerfd started
                 * it): never claim success without proof */
                kerfd__task_end(n, t, KERF_END_FAILURE, "kerfd",
                                "ended while kerfd was down; exit status unknown");
        } else if (e->exit_code == 0) {
                kerfd__task_end(n, t, KERF_END_EXIT, "kerfd", "exit code 0");
        } else {
                if (e->signal)
                        snprintf(text, sizeof(text), "killed by signal %d%s", e->signal,
                                 e->core_dumped ? " (core dumped)" : "");
                else
                        snprintf(text, sizeof(text), "exit code %d", e->exit_code);
                kerfd__task_end(n, t, KERF_END_FAILURE, "kerfd", text);
        }
}

/* What the limit check found a running task due for (KERF_END_NONE: nothing). */
static kerf_end_reason limit_due(kerfd_node *n, dtask *t, uint64_t mono, uint64_t now)
{
        if (t->region) {
                /* the shim's last-activity stamp (same CLOCK_MONOTONIC) */
                uint64_t a = kerfd__slice_activity_ms(t);
                if (a > t->last_active_mono && a <= mono)
                        t->last_active_mono = a;
        }
        if (t->max_runtime_s && mono - t->started_mono >= t->max_runtime_s * 1000)
                return KERF_END_TIMEOUT;
        if (t->suspended)
                t->last_active_mono = mono; /* held by kerf suspend: not idle */
        if (t->idle_timeout_s && mono - t->last_active_mono >= t->idle_timeout_s * 1000)
                return KERF_END_IDLE;
        if (t->rec.lease_expiry_ms && (int64_t)now > t->rec.lease_expiry_ms)
                return KERF_END_LEASE_EXPIRED;
        /* attached: ends when its first process and every member are gone (members.c) */
        if (!t->argv && t->rec.pid > 0 && !kerfd__attached_alive(n, t))
                return KERF_END_EXIT;
        return KERF_END_NONE;
}

static void limit_act(kerfd_node *n, dtask *t, kerf_end_reason end)
{
        char text[128];
        switch (end) {
        case KERF_END_TIMEOUT:
                snprintf(text, sizeof(text), "max runtime of %llu s reached",
                         (unsigned long long)t->max_runtime_s);
                kerfd__task_stop(n, t, end, "kerfd", text, n->cfg.grace_s);
                break;
        case KERF_END_IDLE:
                snprintf(text, sizeof(text), "no GPU activity for %llu s",
                         (unsigned long long)t->idle_timeout_s);
                kerfd__task_stop(n, t, end, "kerfd", text, n->cfg.grace_s);
                break;
        case KERF_END_LEASE_EXPIRED:
                kerfd__task_end(n, t, end, "kerfd", "lease not renewed");
                break;
        default: /* KERF_END_EXIT */
                kerfd__task_end(n, t, end, "kerfd", "attached process ended");
                break;
        }
}

/* Max runtime, idle timeout and lease expiry of running tasks. Every task due is acted on in
 * the same pass: one walk collects them (ids, what is due), then each is looked up again and
 * acted on, since an end removes it from n->live (and the walk may not outlive a change). */
static void check_limits(kerfd_node *n, uint64_t mono)
{
        typedef struct {
                uint64_t id;
                kerf_end_reason end;
        } due;
        due *d = NULL;
        size_t nd = 0, cap = 0;

        /* Limits are in seconds: a pass every 100 ms is enough, and it keeps the ticks that
         * every submit triggers from walking all unfinished tasks each time. */
        if (mono - n->limits_mono < 100)
                return;
        n->limits_mono = mono;
        uint64_t now = kerfd_now_ms();
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        uint64_t id;
        void *val;
        while (kerf_u64map_next(&n->live, &it, &id, &val)) {
                dtask *t = val;
                kerf_end_reason end;
                if (t->stopping || t->state != KERF_TASK_RUNNING)
                        continue;
                if ((end = limit_due(n, t, mono, now)) == KERF_END_NONE)
                        continue;
                if (nd == cap) {
                        size_t nc = cap ? cap * 2 : 16;
                        due *grown = realloc(d, nc * sizeof(*grown));
                        if (!grown)
                                break; /* those found are acted on; the rest next pass */
                        d = grown;
                        cap = nc;
                }
                d[nd++] = (due){id, end};
        }
        for (size_t i = 0; i < nd; i++) {
                dtask *t = kerfd__live(n, d[i].id);
                /* an earlier action may have ended or stopped it (e.g. a launch's stop) */
                if (t && !t->stopping && t->state == KERF_TASK_RUNNING)
                        limit_act(n, t, d[i].end);
        }
        free(d);
}

/* GPU activity: per-process samples mark tasks active and give each task the device's own
 * view of its use (dev_sm_pct, independent of what the shim measures and reports); GPU
 * figures for /metrics. */
static void poll_gpus(kerfd_node *n, uint64_t mono)
{
        static kerf_backend_proc_util s[256];
        kerf_u64map_iter it;
        void *val;
        bool sampled = false;
        if (!n->backend || mono - n->last_poll_mono < 1000)
                return;
        uint64_t since = (n->last_poll_mono ? kerfd_now_ms() - (mono - n->last_poll_mono)
                                            : kerfd_now_ms() - 1000) *
                         1000;
        n->last_poll_mono = mono;
        it = (kerf_u64map_iter)KERF_U64MAP_ITER_INIT;
        while (kerf_u64map_next(&n->live, &it, NULL, &val))
                ((dtask *)val)->dev_sm_acc = 0;
        for (size_t g = 0; g < n->fleet->n_gpus && g < KERF_MAX_NODE_GPUS; g++) {
                kerf_backend_gpu bg;
                kerf_backend_util u;
                int b = kerfd__bidx(n, (unsigned)g), cnt;
                if (b < 0)
                        continue;
                if (kerf_backend_gpu_get(n->backend, (unsigned)b, &bg) == 0)
                        n->gpu_mem_used[g] = bg.mem_used;
                if (kerf_backend_util_get(n->backend, (unsigned)b, &u) == 0)
                        n->gpu_util[g] = u.gpu_pct;
                cnt = kerf_backend_proc_util_list(n->backend, (unsigned)b, since, s, 256);
                sampled |= cnt >= 0;
                for (int i = 0; i < cnt && i < 256; i++) { /* one sample per process */
                        if (s[i].sm_pct == 0)
                                continue;
                        pid_t pg = getpgid((pid_t)s[i].pid);
                        it = (kerf_u64map_iter)KERF_U64MAP_ITER_INIT;
                        while (kerf_u64map_next(&n->live, &it, NULL, &val)) {
                                dtask *t = val;
                                if (!kerfd__task_has_pid(t, (pid_t)s[i].pid, pg))
                                        continue;
                                t->last_active_mono = mono;
                                t->dev_sm_acc += s[i].sm_pct;
                                break;
                        }
                }
        }
        if (!sampled) /* no per-process utilisation from this backend: no device view */
                return;
        int64_t now = (int64_t)kerfd_now_ms();
        it = (kerf_u64map_iter)KERF_U64MAP_ITER_INIT;
        while (kerf_u64map_next(&n->live, &it, NULL, &val)) {
                dtask *t = val;
                t->dev_sm_pct = t->dev_sm_acc;
                t->dev_sm_ms = now;
        }
}

bool kerfd__task_dev_sm(const dtask *t, unsigned *pct, int64_t *at_ms)
{
        if (t->state != KERF_TASK_RUNNING || !t->dev_sm_ms || t->dev_sm_ms < t->rec.started_ms)
                return false;
        *pct = t->dev_sm_pct;
        *at_ms = t->dev_sm_ms;
        return true;
}

/* One pass. Call graph:
 *   tick -> kerf_exec_reap -> handle_exit -> kerfd__task_end (sched finish/cancel + store)
 *        -> check_limits -> kerfd__task_stop (exec stop; end recorded at reap)
 *        -> kerf_sched_step -> do_preempt / do_mig (backend + kerf_sched_mig_done) / do_start
 *           (prepared, "starting" committed), until no decision is left
 * then the ticker: kerfd__mig_drain, kerfd__launch_drain (each MIG change made, each start
 * forked, without n->mu; recorded with it) */
void kerfd__tick(kerfd_node *n)
{
        kerf_exec_exit ex[32];
        uint64_t mono = kerfd_mono_ms(), t0 = kerfd__metrics_clock_us();
        int k;

        kerfd__records_tick(n, mono);
        do {
                k = kerf_exec_reap(n->exec, mono, ex, 32);
                for (int i = 0; i < k; i++)
                        handle_exit(n, &ex[i]);
        } while (k == 32);
        kerfd__fault_drain(n);
        check_limits(n, mono);
        poll_gpus(n, mono);
        kerfd__slice_poll(n, mono);
        kerfd__sched_pass(n);
        kerfd__metrics_tick(t0);
}

void kerfd__sched_pass(kerfd_node *n)
{
        kerf_decision dec[MAX_DEC];
        int k;

        for (int rounds = 0; rounds < 64; rounds++) {
                k = kerf_sched_step(n->sched, dec, MAX_DEC);
                if (k <= 0)
                        break;
                for (int i = 0; i < k; i++) {
                        switch (dec[i].kind) {
                        case KERF_DEC_PREEMPT:
                                kerfd__do_preempt(n, &dec[i]);
                                break;
                        case KERF_DEC_MIG_CREATE:
                        case KERF_DEC_MIG_DESTROY:
                                kerfd__do_mig(n, &dec[i]);
                                break;
                        case KERF_DEC_START:
                                kerfd__do_start(n, &dec[i]);
                                break;
                        default:
                                break;
                        }
                }
                if (k < MAX_DEC)
                        break;
        }
}

void kerfd__kick(kerfd_node *n)
{
        n->want_tick = true;
        pthread_cond_signal(&n->kick);
}

static void *ticker(void *arg)
{
        kerfd_node *n = arg;

        pthread_mutex_lock(&n->mu);
        while (!n->stopping) {
                struct timespec ts;
                n->want_tick = false;
                if (kerfd__uidcache_due()) {
                        /* who is an admin, looked up again outside n->mu (uidcache.c) */
                        pthread_mutex_unlock(&n->mu);
                        kerfd__uidcache_refresh();
                        pthread_mutex_lock(&n->mu);
                        if (n->stopping)
                                break;
                }
                kerfd__retention_tick(n); /* may release n->mu for its file work */
                kerfd__logcap_tick(n);    /* the same */
                if (n->stopping)
                        break;
                kerfd__tick(n);
                kerfd__mig_drain(n);    /* its MIG changes: made without n->mu */
                kerfd__launch_drain(n); /* the starts it decided: forked without n->mu */
                if (n->want_tick)
                        continue;
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_nsec += (long)n->cfg.tick_ms * 1000000L;
                ts.tv_sec += ts.tv_nsec / 1000000000L;
                ts.tv_nsec %= 1000000000L;
                pthread_cond_timedwait(&n->kick, &n->mu, &ts);
        }
        pthread_mutex_unlock(&n->mu);
        return NULL;
}

int kerfd_node_start(kerfd_node *n, const kerfd_config *cfg, const char *exe_dir)
{
        int r;

        pthread_mutex_init(&n->mu, NULL);
        pthread_mutex_init(&n->evq_mu, NULL);
        pthread_mutex_init(&n->ctl_mu, NULL);
        pthread_cond_init(&n->kick, NULL);
        pthread_cond_init(&n->launched, NULL);
        n->cfg = *cfg;
        snprintf(n->exe_dir, sizeof(n->exe_dir), "%s", exe_dir);
        n->started_ms = kerfd_now_ms();
        if (getenv("KERFD_TEST_BREAK_LIMITER") &&
            !strcmp(getenv("KERFD_TEST_BREAK_LIMITER"), "1")) {
                kerf_exec_test_break_limiter(true);
                log_warn("KERFD_TEST_BREAK_LIMITER=1: test hook, every slice's shim runs with its "
                         "limiter broken (KERF_SHIM_TEST_BREAK_LIMITER=1)");
        }
        n->crash_after_fork = getenv("KERFD_TEST_CRASH_AFTER_FORK") &&
                              !strcmp(getenv("KERFD_TEST_CRASH_AFTER_FORK"), "1");
        if (n->crash_after_fork)
                log_warn("KERFD_TEST_CRASH_AFTER_FORK=1: test hook, kerfd exits right after the "
                         "next task start");
        if (getenv("KERFD_TEST_SLOW_LAUNCH_MS")) {
                n->slow_launch_ms =
                    (unsigned)strtoul(getenv("KERFD_TEST_SLOW_LAUNCH_MS"), NULL, 10);
                if (n->slow_launch_ms)
                        log_warn("KERFD_TEST_SLOW_LAUNCH_MS=%u: test hook, every task's fork "
                                 "and MIG change waits that long first (without the daemon "
                                 "mutex)",
                                 n->slow_launch_ms);
        }
        kerf_u64map_init(&n->live);
        kerf_u64map_init(&n->migs);
        if ((r = kerfd__recover(n)) < 0)
                return r;
        kerfd__cdi_recover(n);
        /* the uids of the tenants (config file and store), kept fresh by the ticker: the
         * decisions under n->mu read them from the cache (uidcache.c) */
        for (unsigned i = 0; i < n->n_tenants; i++)
                kerfd__uidcache_warm(n->tenants[i].cfg.uid, true);
        if ((r = kerfd__fault_start(n)) < 0)
                log_warn("device events are not watched: %s (XIDs will not be seen)",
                         kerf_strerror(r));
        if ((r = pthread_create(&n->ticker, NULL, ticker, n)) != 0)
                return -r;
        n->ticker_started = true;
        if ((r = kerfd__ctl_start(n)) < 0)
                log_error("slice controller thread: %s (burst, yield and suspend do not work)",
                          strerror(-r));
        return 0;
}

void kerfd_node_stop(kerfd_node *n)
{
        pthread_mutex_lock(&n->mu);
        n->stopping = true;
        pthread_cond_signal(&n->kick);
        pthread_mutex_unlock(&n->mu);
        if (n->ticker_started)
                pthread_join(n->ticker, NULL);
        n->ticker_started = false;
        kerfd__ctl_stop(n);
        kerfd__fault_stop(n);
        pthread_mutex_lock(&n->mu);
        kerfd__mig_drain(n); /* MIG changes and starts an attach's step left: made now */
        kerfd__launch_drain(n);
        kerfd__records_stop(n); /* a last try for what waits; what still fails is logged */
        pthread_mutex_unlock(&n->mu);
        /* Tasks keep running: the executor forgets them, a restarted kerfd re-adopts them. */
        n->exec = kerf_exec_free(n->exec);
        n->store = kerf_store_close(n->store);
        n->backend = kerf_backend_close(n->backend);
        n->sched = kerf_sched_free(n->sched);
        n->fleet = kerf_fleet_free(n->fleet);
        n->fence_ctx = kerf_fence_ctx_free(n->fence_ctx);
        /* the node's records of live tasks and MIG instances go with it (not their processes) */
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT, im = KERF_U64MAP_ITER_INIT;
        void *val;
        while (kerf_u64map_next(&n->live, &it, NULL, &val))
                kerfd_task_free(val);
        kerf_u64map_fini(&n->live);
        while (kerf_u64map_next(&n->migs, &im, NULL, &val))
                free(val);
        kerf_u64map_fini(&n->migs);
}
