/* SPDX-License-Identifier: Apache-2.0 */
/* explain.c - why a task waits (or why it was preempted), and what would let it run */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static unsigned queue_position(const stask *t, const stask **head)
{
        const squeue *q = t->queue;
        unsigned pos = 1;
        *head = q->len ? q->heap[0] : NULL;
        for (size_t i = 0; i < q->len; i++)
                if (q->heap[i] != t && kerf__task_before(q->heap[i], t))
                        pos++;
        return pos;
}

static unsigned share_rank(const kerf_sched *s, const stenant *me)
{
        unsigned rank = 1;
        for (size_t i = 0; i < s->n_tenants; i++) {
                const stenant *o = s->tenants[i];
                if (o == me || o->n_pending == 0)
                        continue;
                if (o->share < me->share || (o->share == me->share && o->idx < me->idx))
                        rank++;
        }
        return rank;
}

static void hint_for(const kerf_sched *s, const stask *t, kerf_why code, const kerf_reason *r,
                     char *hint, size_t len)
{
        switch (code) {
        case KERF_WHY_QUOTA:
                snprintf(hint, len,
                         "raise tenant %s's quota, or wait for its running tasks to finish",
                         t->tenant->name);
                break;
        case KERF_WHY_COHORT:
                snprintf(
                    hint, len,
                    "wait for other members of the cohort to free quota they lend, or raise their "
                    "lend limits");
                break;
        case KERF_WHY_NO_FIT:
                snprintf(hint, len,
                         "wait for running tasks to finish%s; a smaller request or another route "
                         "may fit sooner",
                         t->prio < 1000 ? "; a higher priority could preempt lower-priority "
                                          "preemptible tasks"
                                        : "");
                break;
        case KERF_WHY_FRAGMENTED:
                snprintf(hint, len,
                         "capacity is free but split across GPUs/slices; it runs when a neighbour "
                         "finishes or idle MIG instances can be reconfigured");
                break;
        case KERF_WHY_NODE_RESOURCES:
                snprintf(hint, len, "lower the CPU or host-memory request, or wait for node room");
                break;
        case KERF_WHY_QUEUE_ORDER:
                snprintf(hint, len,
                         "it runs after task %llu; raise its priority or use another queue%s",
                         (unsigned long long)r->other_task,
                         t->queue->spec.backfill && !t->max_runtime
                             ? "; with a max_runtime_s it may be backfilled when it cannot delay "
                               "that task"
                             : "");
                break;
        case KERF_WHY_FAIR_SHARE:
                snprintf(
                    hint, len,
                    "it runs when tenant %s has the lowest weighted share among waiting tenants",
                    t->tenant->name);
                break;
        case KERF_WHY_HELD:
                snprintf(hint, len, "it waits until it is released (kerf release %llu)",
                         (unsigned long long)t->id);
                break;
        case KERF_WHY_MIG_PENDING:
                snprintf(hint, len,
                         "the backend must confirm the MIG change (kerf_sched_mig_done)");
                break;
        default:
                hint[0] = 0;
                break;
        }
        (void)s;
}

int kerf_sched_explain(const kerf_sched *cs, uint64_t id, kerf_explain *ret)
{
        if (!cs || !ret)
                return -EINVAL;
        /* placement probes only read the state; the cast lets them share code with the step */
        kerf_sched *s = (kerf_sched *)cs;
        stask *t = kerf_u64map_get(&s->tasks, id);
        if (!t)
                return -ENOENT;
        memset(ret, 0, sizeof(*ret));
        ret->task = id;
        ret->state = t->state;
        ret->dominant_share = t->tenant->share * t->tenant->weight;
        if (t->state != KERF_TASK_PENDING || t->held) {
                kerf__task_reason(s, t, &ret->reason);
                hint_for(s, t, t->reason.code, &t->reason, ret->hint, sizeof(ret->hint));
                return 0;
        }
        const stask *head = NULL;
        ret->queue_position = queue_position(t, &head);
        ret->fair_share_rank = share_rank(s, t->tenant);

        splan plan;
        char text[KERF_TEXT_LEN];
        sdetail d;
        kerf_why w = kerf__place(s, t, &plan, &d, ret);
        kerf__detail_format(s, &d, text, sizeof(text));
        const char *before = "";
        char prev[KERF_TEXT_LEN + 32] = "";
        if (t->reason.code == KERF_WHY_PREEMPTED || t->reason.code == KERF_WHY_RECLAIMED ||
            t->reason.code == KERF_WHY_FAULT || t->reason.code == KERF_WHY_BACKEND_REFUSED) {
                snprintf(prev, sizeof(prev), "%s; ", t->reason.text);
                before = prev;
        }
        squeue *q = t->queue;
        uint64_t now = kerf__now(s);
        bool behind = ret->queue_position > 1 && head;
        /* a best-effort queue (head not starving) does not hold it back: its own fit does */
        bool skip = behind && !kerf__queue_strict(q, head, now);
        ret->head_start_in_s = -1;
        if (behind && !skip) {
                char eta[128];
                stask *h = (stask *)head;
                kerf__reserve(s, q, h);
                ret->head_task = head->id;
                if (q->resv_at != UINT64_MAX) {
                        ret->head_start_in_s = (int64_t)((q->resv_at - now) / 1000);
                        snprintf(eta, sizeof(eta), ", expected to start in %lld s",
                                 (long long)ret->head_start_in_s);
                } else {
                        snprintf(eta, sizeof(eta),
                                 ", which has no expected start (it waits for running tasks "
                                 "without max_runtime_s)");
                }
                kerf__reason_set(&ret->reason, KERF_WHY_QUEUE_ORDER, head->id,
                                 "%sposition %u in queue %s/%s, behind task %llu (priority %d)%s%s",
                                 before, ret->queue_position, t->tenant->name, t->queue->name,
                                 (unsigned long long)head->id, head->prio, eta,
                                 !q->spec.backfill     ? "; backfill is off in this queue"
                                 : t->max_runtime == 0 ? "; without max_runtime_s it is never "
                                                         "backfilled"
                                                       : "");
        } else if (skip && w == KERF_WHY_NONE) {
                kerf__reason_set(&ret->reason, KERF_WHY_NOT_TRIED, 0,
                                 "%sfits now; best-effort queue %s/%s: it starts at the next "
                                 "scheduling pass although task %llu ahead of it waits",
                                 before, t->tenant->name, q->name, (unsigned long long)head->id);
        } else if (w == KERF_WHY_NONE) {
                if (ret->fair_share_rank > 1)
                        kerf__reason_set(
                            &ret->reason, KERF_WHY_FAIR_SHARE, 0,
                            "%sfits now, but %u tenant(s) with a lower weighted dominant "
                            "share go first",
                            before, ret->fair_share_rank - 1);
                else
                        kerf__reason_set(&ret->reason, KERF_WHY_NOT_TRIED, 0,
                                         "%sfits now; it starts at the next scheduling pass",
                                         before);
        } else {
                if (w == KERF_WHY_NO_FIT || w == KERF_WHY_FRAGMENTED)
                        kerf__drain_note(s, t, text, sizeof(text));
                kerf__reason_set(&ret->reason, w, 0, "%s%s", before, text);
        }
        /* other_task names the blocker; for a task that waits only because it was evicted it
         * names the preemptor */
        if ((t->reason.code == KERF_WHY_PREEMPTED || t->reason.code == KERF_WHY_RECLAIMED) &&
            ret->reason.code != KERF_WHY_QUEUE_ORDER)
                ret->reason.other_task = t->reason.other_task;
        hint_for(s, t, ret->reason.code, &ret->reason, ret->hint, sizeof(ret->hint));
        return 0;
}
