/* SPDX-License-Identifier: Apache-2.0 */
/* backfill.c - tasks behind a queue's blocked head: best-effort skipping, and backfill that
 * keeps the head's expected start (after Slurm's backfill; docs/SCHEDULER.md) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

uint64_t kerf__now(const kerf_sched *s)
{
        return s->clock ? s->clock(s->clock_arg) : 0;
}

int kerf_sched_task_started(kerf_sched *s, uint64_t task, uint64_t start_ms)
{
        stask *t = s ? kerf_u64map_get(&s->tasks, task) : NULL;
        if (!t || t->state == KERF_TASK_PENDING)
                return -ENOENT;
        t->start_ms = start_ms;
        s->gen++; /* reservations computed with the old start are stale */
        return 0;
}

/* A best-effort queue turns strict for a head that has waited starvation_s: from then on only
 * backfill (when on) may pass it, so a large task is not overtaken forever. */
bool kerf__queue_strict(const squeue *q, const stask *head, uint64_t now)
{
        if (q->spec.mode == KERF_QUEUE_STRICT)
                return true;
        uint64_t waited = now > head->queued_ms ? now - head->queued_ms : 0;
        return waited / 1000 >= q->spec.starvation_s;
}

bool kerf__backfill_pending(const kerf_sched *s, const squeue *q)
{
        if (q->bf_done_gen == s->gen || q->len < 2 || s->pol.backfill_depth == 0 ||
            (s->bf_gen == s->gen && s->bf_used >= s->pol.backfill_depth))
                return false;
        if (q->spec.mode == KERF_QUEUE_BEST_EFFORT)
                return true;
        /* strict: only tasks with a max_runtime can be backfilled */
        return q->spec.backfill && q->n_bounded > (q->heap[0]->max_runtime > 0);
}

/* Grows a scratch list to hold n tasks. */
static int buf_room(stask ***buf, size_t *cap, size_t n)
{
        if (n <= *cap)
                return 0;
        size_t nc = *cap ? *cap : 64;
        while (nc < n)
                nc *= 2;
        stask **b = realloc(*buf, nc * sizeof(*b));
        if (!b)
                return -ENOMEM;
        *buf = b;
        *cap = nc;
        return 0;
}

static uint64_t end_ms(const stask *t)
{
        return t->start_ms + t->max_runtime * 1000;
}

/* Bounded tasks first, by end; then the rest. */
static int end_cmp(const void *a, const void *b)
{
        const stask *x = *(stask *const *)a, *y = *(stask *const *)b;
        if ((x->max_runtime > 0) != (y->max_runtime > 0))
                return x->max_runtime > 0 ? -1 : 1;
        uint64_t ex = end_ms(x), ey = end_ms(y);
        if (ex != ey)
                return ex < ey ? -1 : 1;
        return x->id < y->id ? -1 : x->id > y->id;
}

/* As preempt.c's what-if: a doomed task's units count as free and its charge as gone. */
static void doom(stask *v, bool on)
{
        v->doomed = on;
        for (unsigned r = 0; r < KERF_RES_COUNT; r++) {
                if (on)
                        v->tenant->usage[r] -= v->charge[r];
                else
                        v->tenant->usage[r] += v->charge[r];
        }
}

/* Dooms exactly the first k of run[] (cur of them are doomed now). */
static void doom_to(stask **run, size_t *cur, size_t k)
{
        while (*cur < k)
                doom(run[(*cur)++], true);
        while (*cur > k)
                doom(run[--(*cur)], false);
}

static bool head_fits(kerf_sched *s, stask *head, splan *plan)
{
        return kerf__place(s, head, plan, NULL, NULL) == KERF_WHY_NONE;
}

static void resv_take(squeue *q, const kerf_sched *s, const splan *p)
{
        q->resv_ok = true;
        q->resv_n = p->n;
        memcpy(q->resv_gpus, p->gpus, p->n * sizeof(*p->gpus));
        q->resv_node = s->gpus[p->gpus[0]].d->node;
        memcpy(q->resv_charge, p->charge, sizeof(q->resv_charge));
}

/* The head's reservation: the earliest time it fits if running tasks end at start +
 * max_runtime_s (a task without one never ends), and where it would go then. Placement only
 * gets easier as tasks end, so the earliest prefix of ends is found by bisection: O(log n)
 * placement probes. With no such time, where it would go once every running task is gone. */
void kerf__reserve(kerf_sched *s, squeue *q, stask *head)
{
        if (q->resv_gen == s->gen && q->resv_head == head->id)
                return;
        q->resv_gen = s->gen;
        q->resv_head = head->id;
        q->resv_at = UINT64_MAX;
        q->resv_ok = false;
        uint64_t now = kerf__now(s);
        splan plan;
        if (head_fits(s, head, &plan)) {
                q->resv_at = now;
                resv_take(q, s, &plan);
                return;
        }
        /* the placed tasks, from the units of each GPU (a task on several units once) */
        size_t n = 0;
        uint64_t stamp = ++s->mark;
        for (size_t i = 0; i < s->n_gpus; i++)
                for (sunit *u = s->gpus[i].head; u; u = u->next) {
                        stask *t = u->task;
                        if (!t || t->state == KERF_TASK_PENDING || t->mark == stamp)
                                continue;
                        if (buf_room(&s->rv_buf, &s->rv_cap, n + 1) < 0)
                                return; /* no reservation: nothing is shown safe */
                        t->mark = stamp;
                        s->rv_buf[n++] = t;
                }
        /* not bf_buf: kerf__backfill walks its candidates there while it calls this */
        stask **run = s->rv_buf;
        if (n)
                qsort(run, n, sizeof(*run), end_cmp);
        size_t nb = 0;
        while (nb < n && run[nb]->max_runtime > 0)
                nb++;
        size_t cur = 0;
        s->whatif = true;
        doom_to(run, &cur, nb);
        if (nb > 0 && head_fits(s, head, &plan)) {
                size_t lo = 1, hi = nb; /* fits with hi ended; find the fewest */
                splan best = plan;
                while (lo < hi) {
                        size_t mid = lo + (hi - lo) / 2;
                        doom_to(run, &cur, mid);
                        if (head_fits(s, head, &plan)) {
                                hi = mid;
                                best = plan;
                        } else {
                                lo = mid + 1;
                        }
                }
                uint64_t at = end_ms(run[hi - 1]);
                q->resv_at = at > now ? at : now;
                resv_take(q, s, &best);
        } else {
                doom_to(run, &cur, n);
                if (head_fits(s, head, &plan))
                        resv_take(q, s, &plan);
        }
        doom_to(run, &cur, 0);
        s->whatif = false;
}

/* Could `c`, placed by `p` now, delay the head? Writes the START reason's prefix when not. */
static bool safe(kerf_sched *s, squeue *q, stask *head, const stask *c, const splan *p,
                 uint64_t now, char *why, size_t len)
{
        kerf__reserve(s, q, head); /* computed when a candidate first fits, then reused */
        unsigned long long hid = (unsigned long long)head->id;
        if (q->resv_at != UINT64_MAX && now + c->max_runtime * 1000 <= q->resv_at) {
                snprintf(why, len,
                         "backfilled: ends within %llu s, before task %llu's expected start in "
                         "%llu s; ",
                         (unsigned long long)c->max_runtime, hid,
                         (unsigned long long)((q->resv_at - now) / 1000));
                return true;
        }
        if (!q->resv_ok)
                return false;
        for (unsigned i = 0; i < p->n; i++)
                for (unsigned j = 0; j < q->resv_n; j++)
                        if (p->gpus[i] == q->resv_gpus[j])
                                return false;
        if ((c->cpu || c->hmem) && s->gpus[p->gpus[0]].d->node == q->resv_node)
                return false;
        /* the head's tenant (c's too) must still have quota for the head beside c */
        stenant *ten = q->tenant;
        for (unsigned r = 0; r < KERF_RES_COUNT; r++)
                ten->usage[r] += p->charge[r];
        bool borrow = false;
        kerf_why w = kerf__quota_check(s, ten, q->resv_charge, &borrow, NULL);
        for (unsigned r = 0; r < KERF_RES_COUNT; r++)
                ten->usage[r] -= p->charge[r];
        if (w != KERF_WHY_NONE)
                return false;
        snprintf(why, len, "backfilled: uses none of the GPUs task %llu is expected to take; ",
                 hid);
        return true;
}

static int cand_cmp(const void *a, const void *b)
{
        const stask *x = *(stask *const *)a, *y = *(stask *const *)b;
        return kerf__task_before(x, y) ? -1 : kerf__task_before(y, x) ? 1 : 0;
}

int kerf__backfill(kerf_sched *s, squeue *q)
{
        stask *head = q->heap[0];
        uint64_t now = kerf__now(s);
        if (s->bf_gen != s->gen) { /* the budget is per capacity change, for all queues */
                s->bf_gen = s->gen;
                s->bf_used = 0;
        }
        bool strict = kerf__queue_strict(q, head, now);
        if (strict && !q->spec.backfill)
                goto done;
        /* the candidates not yet tried at this generation, best first */
        size_t n = 0;
        if (buf_room(&s->bf_buf, &s->bf_cap, q->len) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < q->len; i++) {
                stask *c = q->heap[i];
                if (c != head && c->bf_gen != s->gen && (!strict || c->max_runtime > 0))
                        s->bf_buf[n++] = c;
        }
        qsort(s->bf_buf, n, sizeof(*s->bf_buf), cand_cmp);
        for (size_t i = 0; i < n && s->bf_used < s->pol.backfill_depth; i++) {
                stask *c = s->bf_buf[i];
                s->bf_used++;
                c->bf_gen = s->gen;
                s->st.attempts++;
                splan plan;
                sdetail d;
                kerf_why w = kerf__place(s, c, &plan, &d, NULL);
                if (w != KERF_WHY_NONE) {
                        kerf__note_wait(c, w, &d);
                        continue;
                }
                char why[KERF_TEXT_LEN / 2];
                if (!strict) {
                        snprintf(why, sizeof(why),
                                 "best-effort queue: task %llu ahead of it does not fit; ",
                                 (unsigned long long)head->id);
                } else if (!safe(s, q, head, c, &plan, now, why, sizeof(why))) {
                        kerf__detail(&d, MSG_BEHIND_HEAD);
                        d.a = head->id;
                        d.b = q->resv_at == UINT64_MAX ? UINT64_MAX : (q->resv_at - now) / 1000;
                        d.c = c->max_runtime;
                        kerf__note_wait(c, KERF_WHY_QUEUE_ORDER, &d);
                        if (c->reason.code == KERF_WHY_QUEUE_ORDER)
                                c->reason.other_task = head->id;
                        continue;
                }
                int r = kerf__start(s, c, &plan, why);
                return r < 0 ? r : 1;
        }
done:
        q->bf_done_gen = s->gen;
        return 0;
}
