/* SPDX-License-Identifier: Apache-2.0 */
/* migop.c - MIG create/destroy on the device without the daemon mutex (docs/DAEMON.md "The
 * daemon mutex"), as a task's fork (launch.c): the scheduler's decision is queued under n->mu
 * (kerfd__do_mig), the ticker makes the NVML call after its tick with n->mu released
 * (kerfd__mig_drain), then records the outcome under n->mu (kerf_sched_mig_done, the unit row,
 * event and audit) and ticks again so that the task the instance is for starts. Until then the
 * scheduler holds the unit as pending (kerf_sched_mig_done). No scheduler step runs while the
 * call is in flight (an attach waits: kerfd__launch_wait). */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "node.h"
#include "kerf/errno.h"

typedef struct kerfd_migop {
        struct kerfd_migop *next;
        kerf_decision d;
        int b;              /* the backend's GPU index */
        unsigned gi;        /* destroy: the instance's GPU instance id */
        dunit *du;          /* create: the new instance's entry (heap) until it is recorded */
        int r;              /* the backend's answer */
        kerf_backend_mig m; /* create: what was made */
        char errmsg[256];   /* the backend's message of a failed call */
} kerfd_migop;

/* n->mu held: the outcome recorded (what kerfd__do_mig did in one go before). */
static void finish(kerfd_node *n, kerfd_migop *op)
{
        const kerf_decision *d = &op->d;
        const kerf_gpu_desc *g = &n->fleet->gpus[d->gpu];
        uint64_t unit = d->units[0];
        int r = op->r;

        if (d->kind == KERF_DEC_MIG_CREATE) {
                dunit *du = op->du;
                const kerf_backend_mig *m = &op->m;
                op->du = NULL;
                if (r == 0) {
                        du->id = unit;
                        du->kind = KERF_UNIT_MIG;
                        du->gpu = d->gpu;
                        du->mig_gi = (int)m->gi_id;
                        du->mig_ci = (int)m->ci_id;
                        du->mig_start = (int)m->start;
                        du->mig_profile = m->profile_name;
                        du->mem = m->mem_total;
                        snprintf(du->gpu_uuid, sizeof(du->gpu_uuid), "%s", g->uuid);
                        snprintf(du->mig_uuid, sizeof(du->mig_uuid), "%s", m->uuid);
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
                        kerfd__unit_to_store(du, 0, KERF_UNIT_READY, &su);
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
                                     op->errmsg);
                        log_warn("MIG create on GPU %u refused: %s", d->gpu,
                                 op->errmsg[0] ? op->errmsg : kerf_strerror(r));
                }
        } else {
                dunit *du = kerf_u64map_get(&n->migs, unit);
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

void kerfd__do_mig(kerfd_node *n, const kerf_decision *d)
{
        kerfd_migop *op = calloc(1, sizeof(*op)), oom;

        if (!op) { /* answered at once: refused */
                memset(&oom, 0, sizeof(oom));
                oom.d = *d;
                oom.r = -ENOMEM;
                finish(n, &oom);
                return;
        }
        op->d = *d;
        op->b = kerfd__bidx(n, d->gpu);
        if (d->kind == KERF_DEC_MIG_CREATE) {
                if (!(op->du = calloc(1, sizeof(*op->du))))
                        op->r = -ENOMEM;
                else if (!n->backend || op->b < 0)
                        op->r = -KERF_EBACKEND;
        } else {
                dunit *du = kerf_u64map_get(&n->migs, d->units[0]);
                if (!du)
                        op->r = 0; /* nothing on the device: nothing to destroy */
                else if (!n->backend || op->b < 0)
                        op->r = -KERF_EBACKEND;
                else
                        op->gi = (unsigned)du->mig_gi;
                if (!du)
                        op->b = -1;
        }
        if (op->r == -KERF_EBACKEND)
                snprintf(op->errmsg, sizeof(op->errmsg), "%s",
                         n->backend ? kerf_backend_errmsg(n->backend) : "no backend");
        if (op->r || op->b < 0) { /* no device call to make: recorded now */
                finish(n, op);
                free(op->du);
                free(op);
                return;
        }
        if (n->mig_tail)
                n->mig_tail->next = op;
        else
                n->mig_q = op;
        n->mig_tail = op;
        pthread_cond_signal(&n->kick); /* decided by an attach's step: the ticker makes it */
}

/* n->mu released: destroys the instance the decision names, found by its GPU instance id and
 * checked by (profile, start): an id the device gave to another instance since (the one kerfd
 * knew destroyed by hand, then another made) is not kerfd's to destroy. An instance already
 * gone answers -ENOENT, which finish() confirms as destroyed. */
static int destroy(kerf_backend *b, const kerfd_migop *op)
{
        kerf_backend_mig m[KERF_BACKEND_MAX_MIG * 2];
        int nm = kerf_backend_mig_list(b, (unsigned)op->b, m, KERF_BACKEND_MAX_MIG * 2);
        if (nm < 0)
                return nm;
        for (int i = 0; i < nm && i < KERF_BACKEND_MAX_MIG * 2; i++)
                if (m[i].gi_id == op->gi)
                        return m[i].start == op->d.mig_start &&
                                       m[i].profile_id == op->d.mig_profile_id
                                   ? kerf_backend_mig_destroy(b, (unsigned)op->b, op->gi)
                                   : -ENOENT;
        return -ENOENT;
}

/* n->mu released: the NVML call. */
static void run(kerfd_node *n, kerfd_migop *op, unsigned slow_ms)
{
        if (slow_ms) {
                /* test hook (KERFD_TEST_SLOW_LAUNCH_MS, docs/DAEMON.md): a slow device call */
                struct timespec ts = {(time_t)(slow_ms / 1000), (long)(slow_ms % 1000) * 1000000L};
                while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                        ;
        }
        if (op->d.kind == KERF_DEC_MIG_CREATE)
                op->r = kerf_backend_mig_create(n->backend, (unsigned)op->b, op->d.mig_profile_id,
                                                op->d.mig_start, &op->m);
        else
                op->r = destroy(n->backend, op);
        /* the message of the last failed call on the handle: this one's unless another
         * thread's call failed in between (include/kerf/backend.h) */
        if (op->r < 0)
                snprintf(op->errmsg, sizeof(op->errmsg), "%s", kerf_backend_errmsg(n->backend));
}

void kerfd__mig_drain(kerfd_node *n)
{
        kerfd_migop *op;

        for (;;) {
                /* an attach's scheduler step waits for no device call: it goes first */
                while (n->launch_waiters && n->mig_q && !n->stopping)
                        pthread_cond_wait(&n->launched, &n->mu);
                if (!(op = n->mig_q))
                        break;
                n->mig_q = op->next;
                if (!n->mig_q)
                        n->mig_tail = NULL;
                /* kerfd stopping: a change decided before is still made, as before */
                n->launch_inflight = true;
                unsigned slow_ms = n->slow_launch_ms;
                pthread_mutex_unlock(&n->mu);
                run(n, op, slow_ms);
                pthread_mutex_lock(&n->mu);
                n->launch_inflight = false;
                finish(n, op);
                free(op->du);
                free(op);
                n->want_tick = true; /* the task the instance is for: its START */
                pthread_cond_broadcast(&n->launched);
        }
}

uint64_t kerfd__mig_by_uuid(kerfd_node *n, const char *uuid, unsigned *gpu)
{
        kerf_unit_info us[32]; /* a GPU in MIG mode holds at most 7 instances */
        for (size_t g = 0; g < n->fleet->n_gpus; g++) {
                if (!n->fleet->gpus[g].mig_enabled)
                        continue;
                size_t nu = kerf_sched_unit_list(n->sched, (int)g, us, 32);
                for (size_t i = 0; i < nu && i < 32; i++) {
                        const dunit *m;
                        if (us[i].kind != KERF_UNIT_MIG ||
                            !(m = kerf_u64map_get(&n->migs, us[i].id)))
                                continue;
                        if (m->mig_uuid[0] && strcmp(m->mig_uuid, uuid) == 0) {
                                *gpu = us[i].gpu;
                                return us[i].id;
                        }
                }
        }
        return 0;
}
