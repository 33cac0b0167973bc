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
                         "it runs after task %llu; raise its priority or use another queue",
                         (unsigned long long)r->other_task);
                break;
        case KERF_WHY_FAIR_SHARE:
                snprintf(
                    hint, len,
                    "it runs when tenant %s has the lowest weighted share among waiting tenants",
                    t->tenant->name);
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
        if (t->state != KERF_TASK_PENDING) {
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
        if (ret->queue_position > 1 && head) {
                kerf__reason_set(&ret->reason, KERF_WHY_QUEUE_ORDER, head->id,
                                 "%sposition %u in queue %s/%s, behind task %llu (priority %d)",
                                 before, ret->queue_position, t->tenant->name, t->queue->name,
                                 (unsigned long long)head->id, head->prio);
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
