/* SPDX-License-Identifier: Apache-2.0 */
/* fault.c - device faults (XID, GPU lost): the watcher hand-off, the blast radius, taking GPUs
 * and MIG instances out of service and back (POST /v1/gpus/{index}/recover) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node.h"
#include "kerf/errno.h"

/*
 * Locking. The backend's watcher thread calls on_event(). It must never take n->mu: a thread
 * holding n->mu may be inside a backend call waiting for the backend's handle lock, and
 * kerfd_node_stop() joins the watcher. So on_event() only copies the event into a small ring
 * under its own leaf mutex (evq_mu, held for a memcpy, never while calling anything) and
 * signals the ticker. No task lookup runs on the watcher thread (kerf_backend_watch.lookup is
 * not used): the tick drains the ring under n->mu and computes the blast radius itself.
 *
 *   watcher: on_event -> evq (evq_mu) -> cond signal
 *   ticker:  kerfd__tick -> kerfd__fault_drain -> handle -> classify by scope:
 *              unit (app error)   the task(s) on the unit fail (end_reason fault); device kept
 *              gpu  (reset)       kerf_sched_fault(gpu | MIG unit, requeue) -> preemptible
 *                                 tasks requeued, others failed; out of service until
 *                                 POST /v1/gpus/{index}/recover
 *              node (lost/reboot) every GPU as above
 *              none (watch)       counted only
 *            -> event + audit with the blast radius; <state>/out-of-service rewritten
 */

#define MAX_HIT 64

static void on_event(const kerf_backend_event *ev, void *ud)
{
        kerfd_node *n = ud;

        pthread_mutex_lock(&n->evq_mu);
        if (n->evq && n->evq_len < KERFD_EVQ_LEN)
                n->evq[(n->evq_head + n->evq_len++) % KERFD_EVQ_LEN] = *ev;
        else
                n->evq_dropped++;
        pthread_mutex_unlock(&n->evq_mu);
        pthread_cond_signal(&n->kick);
}

int kerfd__fault_start(kerfd_node *n)
{
        kerf_backend_watch w = {.cb = on_event, .lookup = NULL, .ud = n};
        int r;

        if (!n->backend)
                return -KERF_EBACKEND;
        n->evq = calloc(KERFD_EVQ_LEN, sizeof(*n->evq));
        if (!n->evq)
                return -ENOMEM;
        if ((r = kerf_backend_watch_start(n->backend, &w)) < 0)
                return r;
        n->watching = true;
        log_info("watching device events (XID, GPU lost) through %s", n->backend_name);
        return 0;
}

void kerfd__fault_stop(kerfd_node *n)
{
        if (n->backend && n->watching)
                kerf_backend_watch_stop(n->backend);
        n->watching = false;
        pthread_mutex_lock(&n->evq_mu);
        free(n->evq);
        n->evq = NULL;
        n->evq_len = 0;
        pthread_mutex_unlock(&n->evq_mu);
}

static int fleet_gpu(kerfd_node *n, unsigned bgpu)
{
        for (size_t g = 0; g < n->fleet->n_gpus && g < KERF_MAX_NODE_GPUS; g++)
                if (n->backend_index[g] == (int)bgpu)
                        return (int)g;
        return -1;
}

/* <state>/out-of-service: "gpu G" and "unit G ID" lines, rewritten from the scheduler. */
static void persist(kerfd_node *n)
{
        char path[4400], tmp[4410];
        FILE *f;

        snprintf(path, sizeof(path), "%s/out-of-service", n->cfg.state_dir);
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0 || !(f = fdopen(fd, "w"))) { /* private whatever the umask (issue 8 S4) */
                if (fd >= 0)
                        close(fd);
                return;
        }
        for (size_t g = 0; g < n->fleet->n_gpus; g++) {
                kerf_gpu_state st;
                kerf_unit_info us[KERF_BACKEND_MAX_MIG * 2];
                size_t nu;
                if (kerf_sched_gpu_get(n->sched, (unsigned)g, &st) == 0 && st.faulted)
                        fprintf(f, "gpu %zu\n", g);
                nu = kerf_sched_unit_list(n->sched, (int)g, us, KERF_BACKEND_MAX_MIG * 2);
                for (size_t i = 0; i < nu && i < KERF_BACKEND_MAX_MIG * 2; i++)
                        if (us[i].kind == KERF_UNIT_MIG && us[i].state == KERF_UNIT_FAULT)
                                fprintf(f, "unit %zu %llu\n", g, (unsigned long long)us[i].id);
        }
        if (fclose(f) == 0 && rename(tmp, path) == 0)
                return;
        log_warn("cannot record the out-of-service GPUs in %s", path);
}

void kerfd__fault_restore(kerfd_node *n)
{
        char path[4400], line[128];
        FILE *f;

        snprintf(path, sizeof(path), "%s/out-of-service", n->cfg.state_dir);
        if (!(f = fopen(path, "re")))
                return;
        while (fgets(line, sizeof(line), f)) {
                unsigned g;
                unsigned long long u = 0;
                if (sscanf(line, "gpu %u", &g) == 1 ||
                    (sscanf(line, "unit %u %llu", &g, &u) == 2 && u)) {
                        if (kerf_sched_fault(n->sched, g, u, true, NULL, 0) >= 0)
                                log_warn("recovery: GPU %u%s%s stays out of service until an "
                                         "operator recovers it",
                                         g, u ? " MIG unit " : "", u ? line + 5 : "");
                }
        }
        fclose(f);
}

typedef struct hit {
        uint64_t tasks[MAX_HIT];
        unsigned n_tasks;
        char task_s[96], unit_s[64], tenant_s[96], queue_s[64];
} hit;

static void add_word(char *buf, size_t cap, const char *w)
{
        size_t l = strlen(buf);
        char pat[80];
        snprintf(pat, sizeof(pat), ",%s,", w);
        /* de-duplicate on ",w," inside ",buf," */
        char tmp[160];
        snprintf(tmp, sizeof(tmp), ",%s,", buf);
        if (strstr(tmp, pat))
                return;
        if (l + strlen(w) + 2 < cap)
                snprintf(buf + l, cap - l, "%s%s", l ? "," : "", w);
}

static void hit_task(hit *h, kerfd_node *n, uint64_t id)
{
        dtask *t = kerfd__live(n, id);
        char num[24];

        for (unsigned i = 0; i < h->n_tasks; i++)
                if (h->tasks[i] == id)
                        return;
        if (h->n_tasks < MAX_HIT)
                h->tasks[h->n_tasks++] = id;
        snprintf(num, sizeof(num), "%llu", (unsigned long long)id);
        add_word(h->task_s, sizeof(h->task_s), num);
        if (!t)
                return;
        add_word(h->tenant_s, sizeof(h->tenant_s), t->rec.tenant);
        add_word(h->queue_s, sizeof(h->queue_s),
                 t->req.queue && *t->req.queue ? t->req.queue : "default");
        for (unsigned i = 0; i < t->n_units; i++) {
                snprintf(num, sizeof(num), "%llu", (unsigned long long)t->units[i].id);
                add_word(h->unit_s, sizeof(h->unit_s), num);
        }
}

/* Live running tasks with a unit on fleet GPU g (MIG gi `gi` only when gi >= 0). */
static void tasks_on(kerfd_node *n, int g, int gi, hit *h)
{
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;
        while (kerf_u64map_next(&n->live, &it, NULL, &val)) {
                dtask *t = val;
                for (unsigned k = 0; k < t->n_units; k++)
                        if ((int)t->units[k].gpu == g &&
                            (gi < 0 ||
                             (t->units[k].kind == KERF_UNIT_MIG && t->units[k].mig_gi == gi)))
                                hit_task(h, n, t->rec.id);
        }
}

/* Unattributed application XID: the tasks with a compute context on the GPU, when the device
 * names them; else every task on the GPU (the driver has killed the faulting context anyway). */
static void app_tasks(kerfd_node *n, int g, unsigned bgpu, hit *h)
{
        kerf_backend_proc p[64];
        int np = kerf_backend_proc_list(n->backend, bgpu, KERF_BACKEND_NO_ID, p, 64);
        hit all;

        memset(&all, 0, sizeof(all));
        tasks_on(n, g, -1, &all);
        for (int i = 0; i < np && i < 64; i++) {
                pid_t pg = getpgid((pid_t)p[i].pid);
                for (unsigned k = 0; k < all.n_tasks; k++) {
                        dtask *t = kerfd__live(n, all.tasks[k]);
                        if (t && kerfd__task_has_pid(t, (pid_t)p[i].pid, pg))
                                hit_task(h, n, t->rec.id);
                }
        }
        if (!h->n_tasks)
                for (unsigned k = 0; k < all.n_tasks; k++)
                        hit_task(h, n, all.tasks[k]);
}

/* Takes GPU g (unit 0) or one MIG unit out of service; requeues preemptible tasks, fails the
 * others. Returns the number of tasks hit. */
static void take_out(kerfd_node *n, unsigned g, uint64_t unit, const char *text, hit *h,
                     unsigned *requeued, unsigned *failed)
{
        uint64_t ids[MAX_HIT];
        int k = kerf_sched_fault(n->sched, g, unit, true, ids, MAX_HIT);
        kerf_reason why;

        memset(&why, 0, sizeof(why));
        why.code = KERF_WHY_FAULT;
        snprintf(why.text, sizeof(why.text), "%s", text);
        for (int i = 0; i < k && i < MAX_HIT; i++) {
                dtask *t = kerfd__live(n, ids[i]);
                hit_task(h, n, ids[i]);
                if (!t)
                        continue;
                t->xid_errors++;
                kerfd__metrics_fault(t);
                if (t->req.preemptible) {
                        kerfd__task_requeue(n, t, &why, "task.requeue");
                        (*requeued)++;
                } else {
                        kerf_sched_cancel(n->sched, t->rec.id);
                        kerfd__task_stop(n, t, KERF_END_FAULT, "kerfd", text, 0);
                        (*failed)++;
                }
        }
}

static void handle(kerfd_node *n, const kerf_backend_event *ev)
{
        int g = fleet_gpu(n, ev->gpu);
        kerf_blast_scope scope = ev->scope;
        const char *cls = kerf_xid_class_name(ev->xid_class), *kind;
        char text[KERF_TEXT_LEN], what[96], obj[48], out[64] = "none", blast[640];
        unsigned requeued = 0, failed = 0;
        uint64_t unit = 0;
        hit h;

        if (ev->kind == KERF_BEV_WATCH_FAIL) {
                log_warn("device event watcher: %s", ev->text);
                kerfd__event(n, "watch_fail", -1, 0, 0, 0, NULL, "%s", ev->text);
                return;
        }
        if (g < 0) {
                log_warn("device event on unscheduled backend GPU %u ignored: %s", ev->gpu,
                         ev->text);
                return;
        }
        memset(&h, 0, sizeof(h));
        if (ev->kind == KERF_BEV_XID) {
                n->xid_count[g]++;
                n->last_xid[g] = ev->xid;
                if (ev->xid_class < KERF_XID_CLASS_COUNT)
                        n->xid_class_count[ev->xid_class]++;
                snprintf(what, sizeof(what), "XID %u (%s, %s)", ev->xid, kerf_xid_describe(ev->xid),
                         cls);
                kind = "xid";
        } else {
                scope = KERF_SCOPE_NODE;
                cls = "gpu_lost";
                snprintf(what, sizeof(what), "GPU %d lost", g);
                kind = "gpu_lost";
        }
        n->faults_total++;
        if (ev->attributed) {
                kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
                void *val;
                while (kerf_u64map_next(&n->migs, &it, NULL, &val)) {
                        dunit *m = val;
                        if ((int)m->gpu == g && m->mig_gi == (int)ev->gi_id)
                                unit = m->id;
                }
        }
        snprintf(text, sizeof(text), "%s on GPU %d%s", what, g, ev->attributed ? " (MIG)" : "");
        switch (scope) {
        case KERF_SCOPE_UNIT:
                if (ev->attributed)
                        tasks_on(n, g, (int)ev->gi_id, &h);
                else
                        app_tasks(n, g, ev->gpu, &h);
                for (unsigned i = 0; i < h.n_tasks; i++) {
                        dtask *t = kerfd__live(n, h.tasks[i]);
                        if (!t || t->stopping)
                                continue;
                        t->xid_errors++;
                        kerfd__metrics_fault(t);
                        kerfd__task_stop(n, t, KERF_END_FAULT, "kerfd", text, 0);
                        failed++;
                }
                break;
        case KERF_SCOPE_GPU:
                if (ev->attributed && unit)
                        snprintf(out, sizeof(out), "MIG unit %llu of GPU %d",
                                 (unsigned long long)unit, g);
                else
                        snprintf(out, sizeof(out), "GPU %d", g), unit = 0;
                take_out(n, (unsigned)g, unit, text, &h, &requeued, &failed);
                break;
        case KERF_SCOPE_NODE:
                snprintf(out, sizeof(out), "all %zu GPUs", n->fleet->n_gpus);
                for (size_t i = 0; i < n->fleet->n_gpus; i++)
                        take_out(n, (unsigned)i, 0, text, &h, &requeued, &failed);
                break;
        default:
                tasks_on(n, g, -1, &h);
                for (unsigned i = 0; i < h.n_tasks; i++) {
                        dtask *t = kerfd__live(n, h.tasks[i]);
                        if (t) {
                                t->xid_errors++;
                                kerfd__metrics_fault(t);
                        }
                }
                break;
        }
        if (scope == KERF_SCOPE_GPU || scope == KERF_SCOPE_NODE)
                persist(n);
        snprintf(blast, sizeof(blast),
                 "%s scope %s; out of service: %s; tasks [%s] (failed %u, requeued %u); units "
                 "[%s]; tenants [%s]; queues [%s]",
                 what, kerf_blast_scope_name(scope), out, h.task_s, failed, requeued, h.unit_s,
                 h.tenant_s, h.queue_s);
        log_warn("device fault: %s", blast);
        kerfd__event(n, kind, g, unit, h.n_tasks ? h.tasks[0] : 0,
                     ev->kind == KERF_BEV_XID ? (int)ev->xid : 0, cls, "%s", blast);
        if (unit)
                snprintf(obj, sizeof(obj), "unit:%llu", (unsigned long long)unit);
        else
                snprintf(obj, sizeof(obj), "gpu:%d", g);
        kerfd__audit(n, "kerfd", "",
                     scope == KERF_SCOPE_UNIT || scope == KERF_SCOPE_NONE ? "device.xid"
                                                                          : "device.fault",
                     obj, cls, blast, ev->gpu_uuid);
        n->want_tick = true;
}

void kerfd__fault_drain(kerfd_node *n)
{
        kerf_backend_event *ev = malloc(sizeof(*ev));
        uint64_t dropped;

        if (!ev)
                return;
        for (;;) {
                bool got = false;
                pthread_mutex_lock(&n->evq_mu);
                if (n->evq && n->evq_len) {
                        *ev = n->evq[n->evq_head];
                        n->evq_head = (n->evq_head + 1) % KERFD_EVQ_LEN;
                        n->evq_len--;
                        got = true;
                }
                dropped = n->evq_dropped;
                n->evq_dropped = 0;
                pthread_mutex_unlock(&n->evq_mu);
                if (dropped) {
                        log_error("%llu device events dropped (queue full)",
                                  (unsigned long long)dropped);
                        kerfd__event(n, "watch_fail", -1, 0, 0, 0, NULL,
                                     "%llu device events dropped: queue of %d full",
                                     (unsigned long long)dropped, KERFD_EVQ_LEN);
                }
                if (!got)
                        break;
                handle(n, ev);
        }
        free(ev);
}

int kerfd__gpu_recover(kerfd_node *n, unsigned gpu, const char *actor, char *msg, size_t msglen)
{
        kerf_gpu_state st;
        kerf_unit_info us[KERF_BACKEND_MAX_MIG * 2];
        kerf_backend_gpu bg;
        bool any = false;
        char obj[32];
        size_t nu;
        int b = kerfd__bidx(n, gpu), r;

        if (gpu >= n->fleet->n_gpus || kerf_sched_gpu_get(n->sched, gpu, &st) < 0) {
                snprintf(msg, msglen, "no GPU %u", gpu);
                return -ENOENT;
        }
        any = st.faulted;
        nu = kerf_sched_unit_list(n->sched, (int)gpu, us, KERF_BACKEND_MAX_MIG * 2);
        for (size_t i = 0; i < nu && i < KERF_BACKEND_MAX_MIG * 2; i++)
                any |= us[i].state == KERF_UNIT_FAULT;
        if (!any) {
                snprintf(msg, msglen, "GPU %u is in service", gpu);
                return -KERF_ESTATE;
        }
        if (n->backend && b >= 0 && kerf_backend_gpu_get(n->backend, (unsigned)b, &bg) == 0 &&
            bg.lost) {
                snprintf(msg, msglen,
                         "GPU %u (%s) still reports itself lost: reset or reboot first", gpu,
                         bg.uuid);
                return -KERF_EDEVICE;
        }
        if ((r = kerf_sched_recover(n->sched, gpu, 0)) < 0) {
                snprintf(msg, msglen, "recover GPU %u: %s", gpu, kerf_strerror(r));
                return r;
        }
        persist(n);
        snprintf(obj, sizeof(obj), "gpu:%u", gpu);
        kerfd__audit(n, actor, "", "gpu.recover", obj, "ok", "back in service",
                     n->fleet->gpus[gpu].uuid);
        kerfd__event(n, "gpu_recover", (int)gpu, 0, 0, 0, NULL,
                     "GPU %u back in service (recovered by %s)", gpu, actor);
        log_info("GPU %u back in service (recovered by %s)", gpu, actor);
        kerfd__kick(n);
        snprintf(msg, msglen, "GPU %u back in service", gpu);
        return 0;
}
