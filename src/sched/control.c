/* SPDX-License-Identifier: Apache-2.0 */
/* control.c - an operator's hand on the scheduler: holding, releasing and updating pending
 * tasks, draining GPUs (docs/SCHEDULER.md "Holds, updates and draining") */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static stask *pending_task(kerf_sched *s, uint64_t id, int *rc)
{
        stask *t = s ? kerf_u64map_get(&s->tasks, id) : NULL;
        *rc = !s ? -EINVAL : !t ? -ENOENT : t->state != KERF_TASK_PENDING ? -KERF_ESTATE : 0;
        return *rc ? NULL : t;
}

/* Takes a queued task out of its heap; the head it leaves (or becomes) is tried again. */
static void unqueue(kerf_sched *s, stask *t)
{
        squeue *q = t->queue;
        kerf__queue_remove(q, t);
        q->blocked_gen = 0;
        q->bf_done_gen = 0;
        s->gen++; /* reservations and blocked heads computed with it are stale */
}

static int requeue(kerf_sched *s, stask *t)
{
        squeue *q = t->queue;
        int r = kerf__queue_push(q, t);
        if (r < 0)
                return r;
        q->blocked_gen = 0;
        q->bf_done_gen = 0;
        s->gen++;
        return 0;
}

int kerf_sched_task_hold(kerf_sched *s, uint64_t task, const char *text)
{
        int rc;
        stask *t = pending_task(s, task, &rc);
        if (!t)
                return rc;
        if (!t->held) {
                unqueue(s, t);
                t->held = true;
        }
        kerf__reason_set(&t->reason, KERF_WHY_HELD, 0, "%s", text && *text ? text : "held");
        return 0;
}

int kerf_sched_task_release(kerf_sched *s, uint64_t task)
{
        int rc;
        stask *t = pending_task(s, task, &rc);
        if (!t)
                return rc;
        if (!t->held)
                return -KERF_ESTATE;
        rc = requeue(s, t);
        if (rc < 0)
                return rc;
        t->held = false;
        /* its wait as a queue head (best-effort starvation) counts from its release */
        t->queued_ms = kerf__now(s);
        kerf__reason_set(&t->reason, KERF_WHY_NOT_TRIED, 0, "released, not yet considered");
        return 0;
}

int kerf_sched_task_update(kerf_sched *s, uint64_t task, const kerf_task_update *u,
                           kerf_reason *why)
{
        int rc;
        stask *t = pending_task(s, task, &rc);
        if (!t || !u)
                return t ? -EINVAL : rc;
        if (u->set_priority &&
            (u->priority < KERF_PRIORITY_MIN || u->priority > KERF_PRIORITY_MAX)) {
                if (why)
                        kerf__reason_set(why, KERF_WHY_NONE, 0, "priority: %d is outside %d..%d",
                                         u->priority, KERF_PRIORITY_MIN, KERF_PRIORITY_MAX);
                return -EINVAL;
        }
        /* out of the heap while its order or its backfill count changes */
        bool queued = !t->held;
        if (queued)
                unqueue(s, t);
        if (u->set_priority)
                t->prio = u->priority;
        if (u->set_preemptible)
                t->preemptible = u->preemptible || s->pol.force_preemptible[t->wl];
        if (u->set_max_runtime)
                t->max_runtime = u->max_runtime_s;
        if (u->set_idle_timeout)
                t->idle_timeout = u->idle_timeout_s;
        if (queued && (rc = requeue(s, t)) < 0)
                return rc;
        s->gen++;
        return 0;
}

int kerf_sched_gpu_drain(kerf_sched *s, unsigned gpu, bool on)
{
        if (!s || gpu >= s->n_gpus)
                return -EINVAL;
        s->gpus[gpu].draining = on;
        s->gen++; /* blocked heads may fit (resume) or must look elsewhere (drain) */
        return 0;
}

void kerf__drain_note(const kerf_sched *s, const stask *t, char *buf, size_t len)
{
        size_t at = strlen(buf);
        unsigned shown = 0, more = 0;
        for (size_t i = 0; i < s->n_gpus; i++) {
                const sgpu *g = &s->gpus[i];
                if (!g->draining || !kerf__gpu_allowed(t, g))
                        continue;
                if (shown == 4) {
                        more++;
                        continue;
                }
                if (at < len)
                        at += (size_t)snprintf(buf + at, len - at, "; GPU %zu is draining", i);
                shown++;
        }
        if (more && at < len)
                snprintf(buf + at, len - at, " (and %u more)", more);
}
