/* SPDX-License-Identifier: Apache-2.0 */
/* queue.c - per-queue priority heaps of pending tasks */
#include <errno.h>
#include <stdlib.h>

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
        sift_up(q, t->heap_idx);
        return 0;
}

void kerf__queue_remove(squeue *q, stask *t)
{
        size_t i = t->heap_idx;
        if (i >= q->len || q->heap[i] != t)
                return;
        q->len--;
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
        t->tenant->n_pending++;
        s->st.pending++;
        /* a new head may be runnable even if the old one was not */
        if (t->queue->heap[0] == t)
                t->queue->blocked_gen = 0;
        return 0;
}
