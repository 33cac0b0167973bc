/* SPDX-License-Identifier: Apache-2.0 */
/* step.c - the scheduling pass: fair-share order between tenants, priority order within a
 * queue, placement, preemption and MIG actions */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "kerf/units.h"

/* The queue whose head goes next: among tenants with an unblocked queue, the lowest weighted
 * dominant share (ties: tenant creation order); within the tenant, the best head. With
 * `behind`, the same among queues whose head is blocked but whose tasks behind it may still
 * be tried (backfill.c): as in Slurm, that pass comes after every head that can start. */
static squeue *pick_of(const kerf_sched *s, bool behind)
{
        squeue *best = NULL;
        const stenant *bt = NULL;
        for (size_t i = 0; i < s->n_tenants; i++) {
                const stenant *t = s->tenants[i];
                if (t->n_pending == 0)
                        continue;
                if (bt && t->share >= bt->share)
                        continue;
                squeue *tq = NULL;
                for (squeue *q = t->queues; q; q = q->next) {
                        if (q->len == 0 || (q->blocked_gen == s->gen) != behind ||
                            (behind && !kerf__backfill_pending(s, q)))
                                continue;
                        if (!tq || kerf__task_before(q->heap[0], tq->heap[0]))
                                tq = q;
                }
                if (tq) {
                        best = tq;
                        bt = t;
                }
        }
        return best;
}

static squeue *pick(const kerf_sched *s)
{
        squeue *q = pick_of(s, false);
        return q ? q : pick_of(s, true);
}

int kerf__start(kerf_sched *s, stask *t, splan *plan, const char *why)
{
        squeue *q = t->queue;
        bool head = q->len && q->heap[0] == t;
        kerf__queue_remove(q, t);
        t->tenant->n_pending--;
        s->st.pending--;
        /* a backfilled task leaves the head blocked: what it took frees nothing */
        if (head)
                q->blocked_gen = 0;
        int r = kerf__task_bind(s, t, plan);
        if (r < 0)
                return r;
        t->reclaimed = false;
        t->start_ms = kerf__now(s);
        t->backfilled = why != NULL;
        const char *pre = why ? why : "";
        if (t->state == KERF_TASK_STARTING) {
                kerf__reason_set(&t->reason, KERF_WHY_MIG_PENDING, 0,
                                 "%swaiting for the backend to %s a %s instance on GPU %u", pre,
                                 plan->n_destroy ? "reconfigure MIG and create" : "create",
                                 plan->prof->name, plan->gpus[0]);
                return 0;
        }
        s->st.running++;
        s->st.placed++;
        sunit *u = t->units[0];
        char w[KERF_TEXT_LEN], sz[KERF_UNITS_BUF];
        if (t->route == KERF_UNIT_MIG)
                snprintf(w, sizeof(w), "placed on MIG instance %s (unit %llu) of GPU %u",
                         u->prof->name, (unsigned long long)u->id, u->gpu);
        else if (t->route == KERF_UNIT_WHOLE)
                snprintf(w, sizeof(w), "placed on %u whole GPU%s starting at GPU %u%s", t->n_units,
                         t->n_units > 1 ? "s" : "", u->gpu,
                         t->borrowing ? " (on borrowed quota)" : "");
        else
                snprintf(w, sizeof(w), "placed as a %s of GPU %u: %s, %u%% compute guaranteed%s",
                         kerf_unit_kind_name(t->route), u->gpu,
                         kerf_format_size(u->mem, sz, sizeof(sz)), u->compute,
                         t->borrowing ? " (on borrowed quota)" : "");
        kerf__reason_set(&t->reason, KERF_WHY_PLACED, 0, "%s%s", pre, w);
        return kerf__emit(s, KERF_DEC_START, t, &t->reason);
}

void kerf__note_wait(stask *t, kerf_why w, const sdetail *d)
{
        /* why it was taken off (preempted by whom, reclaimed, fault, refusal) outlives the
         * failed retries: explain adds the current blocker to it */
        kerf_why last = t->reason.code;
        if (last == KERF_WHY_PREEMPTED || last == KERF_WHY_RECLAIMED || last == KERF_WHY_FAULT ||
            last == KERF_WHY_BACKEND_REFUSED)
                return;
        /* words only when read (kerf__task_reason): most are overwritten */
        t->reason.code = w;
        t->reason.other_task = 0;
        t->reason.text[0] = 0;
        t->wait = *d;
}

int kerf_sched_step(kerf_sched *s, kerf_decision *out, size_t max)
{
        if (!s || (!out && max))
                return -EINVAL;
        /* creates whose destroys were confirmed, in confirmation order */
        for (size_t i = 0; i < s->n_ready; i++) {
                int r = kerf__mig_create_planned(s, s->ready[i]);
                if (r < 0)
                        return r;
        }
        s->n_ready = 0;

        while (s->dq_len < max) {
                squeue *q = pick(s);
                if (!q)
                        break;
                if (q->blocked_gen == s->gen) {
                        /* the head cannot run: tasks behind it, as the queue's mode allows */
                        int r = kerf__backfill(s, q);
                        if (r < 0)
                                return r;
                        continue;
                }
                stask *t = kerf__queue_top(q);
                splan plan;
                sdetail d;
                s->st.attempts++;
                kerf_why w = kerf__place(s, t, &plan, &d, NULL);
                kerf_why pw = d.any_cohort ? KERF_WHY_COHORT : w;
                if (w == KERF_WHY_NONE || (s->pol.preemption && kerf__preempt(s, t, pw, &plan))) {
                        int r = kerf__start(s, t, &plan, NULL);
                        if (r < 0)
                                return r;
                        continue;
                }
                kerf__note_wait(t, w, &d);
                q->blocked_gen = s->gen;
        }
        size_t n = s->dq_len < max ? s->dq_len : max;
        if (n) /* dq is NULL until the first decision: memcpy(NULL) is undefined */
                memcpy(out, s->dq + s->dq_head, n * sizeof(*out));
        s->dq_head += n;
        s->dq_len -= n;
        if (s->dq_len == 0)
                s->dq_head = 0;
        return (int)n;
}
