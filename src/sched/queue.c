/* SPDX-License-Identifier: Apache-2.0 */
/* queue.c - per-queue priority heaps of pending tasks, and queue modes */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Higher priority first; among equals, earlier submission (lower seq) first. */
bool kerf__task_before(const stask *a, const stask *b)
{
        if (a->prio != b->prio)
                return a->prio > b->prio;
        return a->seq < b->seq;
}

static void hswap(squeue *q, size_t i, size_t j)
{
        stask *t = q->heap[i];
        q->heap[i] = q->heap[j];
        q->heap[j] = t;
        q->heap[i]->heap_idx = i;
        q->heap[j]->heap_idx = j;
}

static void sift_up(squeue *q, size_t i)
{
        while (i > 0) {
                size_t p = (i - 1) / 2;
                if (!kerf__task_before(q->heap[i], q->heap[p]))
                        break;
                hswap(q, i, p);
                i = p;
        }
}

static void sift_down(squeue *q, size_t i)
{
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i;
                if (l < q->len && kerf__task_before(q->heap[l], q->heap[m]))
                        m = l;
                if (r < q->len && kerf__task_before(q->heap[r], q->heap[m]))
                        m = r;
                if (m == i)
                        return;
                hswap(q, i, m);
                i = m;
        }
}

int kerf__queue_push(squeue *q, stask *t)
{
        if (q->len == q->cap) {
                size_t ncap = q->cap ? q->cap * 2 : 16;
                stask **nh = realloc(q->heap, ncap * sizeof(*nh));
                if (!nh)
                        return -ENOMEM;
                q->heap = nh;
                q->cap = ncap;
        }
        q->heap[q->len] = t;
        t->heap_idx = q->len++;
        q->n_bounded += t->max_runtime > 0;
        sift_up(q, t->heap_idx);
        return 0;
}

void kerf__queue_remove(squeue *q, stask *t)
{
        size_t i = t->heap_idx;
        if (i >= q->len || q->heap[i] != t)
                return;
        q->len--;
        q->n_bounded -= t->max_runtime > 0;
        if (i != q->len) {
                q->heap[i] = q->heap[q->len];
                q->heap[i]->heap_idx = i;
                sift_down(q, i);
                sift_up(q, i);
        }
        t->heap_idx = SIZE_MAX;
}

stask *kerf__queue_top(const squeue *q)
{
        return q->len ? q->heap[0] : NULL;
}

int kerf__task_enqueue(kerf_sched *s, stask *t)
{
        int r = kerf__queue_push(t->queue, t);
        if (r < 0)
                return r;
        t->state = KERF_TASK_PENDING;
        t->queued_ms = kerf__now(s);
        t->backfilled = false;
        t->tenant->n_pending++;
        s->st.pending++;
        /* a new head may be runnable even if the old one was not */
        if (t->queue->heap[0] == t)
                t->queue->blocked_gen = 0;
        else
                t->queue->bf_done_gen = 0; /* a new candidate behind a blocked head */
        return 0;
}

static const char *const mode_names[KERF_QUEUE_MODE_COUNT] = {"strict", "best-effort"};

const char *kerf_queue_mode_name(kerf_queue_mode m)
{
        return (unsigned)m < KERF_QUEUE_MODE_COUNT ? mode_names[m] : "?";
}

int kerf_queue_mode_parse(const char *name, kerf_queue_mode *ret)
{
        for (int m = 0; name && m < KERF_QUEUE_MODE_COUNT; m++)
                if (!strcmp(name, mode_names[m])) {
                        *ret = (kerf_queue_mode)m;
                        return 0;
                }
        return -EINVAL;
}

void kerf_queue_spec_default(kerf_queue_spec *q)
{
        memset(q, 0, sizeof(*q));
        q->mode = KERF_QUEUE_STRICT;
        q->backfill = true;
        q->starvation_s = 3600;
}

void kerf__queue_spec_for(const kerf_sched *s, const char *name, kerf_queue_spec *ret)
{
        for (size_t i = 0; i < s->n_qspecs; i++)
                if (!strcmp(s->qspecs[i].name, name)) {
                        *ret = s->qspecs[i].spec;
                        return;
                }
        *ret = s->pol.queue_default;
}

void kerf_sched_clock_set(kerf_sched *s, kerf_clock_fn fn, void *arg)
{
        if (!s)
                return;
        s->clock = fn;
        s->clock_arg = arg;
}

int kerf_sched_queue_set(kerf_sched *s, const char *name, const kerf_queue_spec *spec)
{
        size_t n = name ? strlen(name) : 0;
        if (!s || !spec || n == 0 || n >= KERF_NAME_LEN ||
            (unsigned)spec->mode >= KERF_QUEUE_MODE_COUNT || spec->starvation_s > 31536000 ||
            (spec->mode == KERF_QUEUE_BEST_EFFORT && spec->starvation_s == 0))
                return -EINVAL;
        size_t i = 0;
        while (i < s->n_qspecs && strcmp(s->qspecs[i].name, name))
                i++;
        if (i == s->n_qspecs) {
                sqspec *ns = realloc(s->qspecs, (s->n_qspecs + 1) * sizeof(*ns));
                if (!ns)
                        return -ENOMEM;
                s->qspecs = ns;
                snprintf(ns[i].name, sizeof(ns[i].name), "%s", name);
                s->n_qspecs++;
        }
        s->qspecs[i].spec = *spec;
        for (size_t k = 0; k < s->n_tenants; k++)
                for (squeue *q = s->tenants[k]->queues; q; q = q->next)
                        if (!strcmp(q->name, name)) {
                                q->spec = *spec;
                                q->bf_done_gen = 0; /* its tasks may be tried again */
                        }
        return 0;
}

int kerf_sched_queue_get(const kerf_sched *s, const char *name, kerf_queue_spec *ret)
{
        if (!s || !name || !ret)
                return -EINVAL;
        kerf__queue_spec_for(s, name, ret);
        return 0;
}
