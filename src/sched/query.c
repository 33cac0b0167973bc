/* SPDX-License-Identifier: Apache-2.0 */
/* query.c - device faults and recovery, snapshots of tasks, units and GPUs, statistics */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int kerf_sched_fault(kerf_sched *s, unsigned gpu, uint64_t unit, bool requeue, uint64_t *ret_tasks,
                     size_t max)
{
        if (!s || gpu >= s->n_gpus || (max && !ret_tasks))
                return -EINVAL;
        sgpu *g = &s->gpus[gpu];
        sunit *only = NULL;
        if (unit) {
                only = kerf_u64map_get(&s->units, unit);
                if (!only || only->gpu != gpu)
                        return -ENOENT;
                /* an instance already being destroyed is going away: its fault changes nothing,
                 * and the task waiting for its slices still gets them once the destroy is
                 * confirmed (marking it FAULT would strand that task and its planned slices) */
                if (only->state == KERF_UNIT_DESTROYING)
                        return 0;
        }
        /* collect the tasks hit first: evicting changes the unit lists */
        stask *hit[KERF_MAX_NODE_GPUS * 8];
        size_t nhit = 0, total = 0;
        for (sunit *u = g->head; u; u = u->next) {
                if (only && u != only)
                        continue;
                if (!u->task || (u->state != KERF_UNIT_ASSIGNED && u->state != KERF_UNIT_CREATING))
                        continue;
                bool dup = false;
                for (size_t k = 0; k < nhit; k++)
                        dup |= hit[k] == u->task;
                if (!dup && nhit < sizeof(hit) / sizeof(hit[0]))
                        hit[nhit++] = u->task;
        }
        /* tasks waiting on destroys planned on this GPU are hit too */
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *v;
        while (!only && kerf_u64map_next(&s->tasks, &it, NULL, &v)) {
                stask *t = v;
                if (t->state == KERF_TASK_STARTING && t->n_units == 0 && t->plan.gpus[0] == gpu) {
                        bool dup = false;
                        for (size_t k = 0; k < nhit; k++)
                                dup |= hit[k] == t;
                        if (!dup && nhit < sizeof(hit) / sizeof(hit[0]))
                                hit[nhit++] = t;
                }
        }
        if (only) {
                only->create_pending = only->state == KERF_UNIT_CREATING;
                only->state = KERF_UNIT_FAULT;
        } else {
                g->faulted = true;
        }
        char text[KERF_TEXT_LEN];
        if (only)
                snprintf(text, sizeof(text), "MIG instance %llu (%s) of GPU %u faulted",
                         (unsigned long long)unit, only->prof ? only->prof->name : "?", gpu);
        else
                snprintf(text, sizeof(text), "GPU %u (%s) faulted", gpu, g->d->uuid);
        /* sort for determinism: by task id */
        for (size_t i = 1; i < nhit; i++)
                for (size_t j = i; j > 0 && hit[j - 1]->id > hit[j]->id; j--) {
                        stask *x = hit[j];
                        hit[j] = hit[j - 1];
                        hit[j - 1] = x;
                }
        for (size_t i = 0; i < nhit; i++) {
                stask *t = hit[i];
                if (total < max)
                        ret_tasks[total] = t->id;
                total++;
                if (requeue) {
                        int r = kerf__task_evict(s, t, KERF_WHY_FAULT, 0, text);
                        if (r < 0)
                                return r;
                } else {
                        if (t->state == KERF_TASK_RUNNING)
                                s->st.running--;
                        kerf__task_unbind(s, t);
                        kerf_u64map_del(&s->tasks, t->id);
                        free(t);
                }
        }
        /* a faulted MIG instance that is idle stays FAULT; faulted GPU: its MIG units too */
        if (!only)
                for (sunit *u = g->head; u; u = u->next)
                        if (u->kind == KERF_UNIT_MIG && u->state == KERF_UNIT_READY)
                                u->state = KERF_UNIT_FAULT;
        s->gen++;
        return (int)total;
}

/* A recovered instance is READY again, or CREATING when the backend has yet to answer. */
static void unit_recover(sunit *u)
{
        u->state = u->create_pending ? KERF_UNIT_CREATING : KERF_UNIT_READY;
        u->create_pending = false;
}

int kerf_sched_recover(kerf_sched *s, unsigned gpu, uint64_t unit)
{
        if (!s || gpu >= s->n_gpus)
                return -EINVAL;
        sgpu *g = &s->gpus[gpu];
        if (unit) {
                sunit *u = kerf_u64map_get(&s->units, unit);
                if (!u || u->gpu != gpu)
                        return -ENOENT;
                if (u->state != KERF_UNIT_FAULT)
                        return -KERF_ESTATE;
                unit_recover(u);
        } else {
                g->faulted = false;
                for (sunit *u = g->head; u; u = u->next)
                        if (u->state == KERF_UNIT_FAULT)
                                unit_recover(u);
        }
        s->gen++;
        return 0;
}

int kerf_sched_task_get(const kerf_sched *s, uint64_t id, kerf_task_info *ret)
{
        if (!s || !ret)
                return -EINVAL;
        const stask *t = kerf_u64map_get(&s->tasks, id);
        if (!t)
                return -ENOENT;
        memset(ret, 0, sizeof(*ret));
        ret->id = t->id;
        ret->state = t->state;
        snprintf(ret->name, sizeof(ret->name), "%s", t->name);
        snprintf(ret->tenant, sizeof(ret->tenant), "%s", t->tenant->name);
        snprintf(ret->queue, sizeof(ret->queue), "%s", t->queue->name);
        ret->workload = t->wl;
        ret->tier = t->tier;
        ret->priority = t->prio;
        ret->preemptible = t->preemptible;
        ret->route = t->route;
        ret->n_units = t->n_units;
        for (unsigned i = 0; i < t->n_units; i++) {
                ret->units[i] = t->units[i]->id;
                ret->gpus[i] = t->units[i]->gpu;
        }
        ret->mem_bytes = t->n_units ? t->units[0]->mem : t->mem_req;
        ret->compute_pct = t->n_units ? t->units[0]->compute : t->compute;
        ret->compute_limit_pct = t->n_units ? t->units[0]->limit : t->limit;
        memcpy(ret->usage, t->charge, sizeof(ret->usage));
        ret->borrowing = t->borrowing;
        ret->preemptions = t->preemptions;
        ret->backfilled = t->state != KERF_TASK_PENDING && t->backfilled;
        ret->submit_seq = t->seq;
        ret->held = t->held;
        ret->max_runtime_s = t->max_runtime;
        ret->idle_timeout_s = t->idle_timeout;
        kerf__task_reason(s, t, &ret->reason);
        return 0;
}

static void unit_info(const kerf_sched *s, const sunit *u, kerf_unit_info *ret)
{
        memset(ret, 0, sizeof(*ret));
        ret->id = u->id;
        ret->kind = u->kind;
        ret->state = u->state;
        ret->gpu = u->gpu;
        snprintf(ret->gpu_uuid, sizeof(ret->gpu_uuid), "%s", s->gpus[u->gpu].d->uuid);
        ret->task = u->state == KERF_UNIT_ASSIGNED && u->task ? u->task->id : 0;
        ret->mem_bytes = u->mem;
        ret->compute_pct = u->compute;
        ret->compute_limit_pct = u->limit;
        if (u->prof) {
                ret->mig_profile_id = u->prof->id;
                ret->mig_start = u->start;
                ret->mig_profile_name = u->prof->name;
        }
}

int kerf_sched_unit_get(const kerf_sched *s, uint64_t id, kerf_unit_info *ret)
{
        if (!s || !ret)
                return -EINVAL;
        const sunit *u = kerf_u64map_get(&s->units, id);
        if (!u)
                return -ENOENT;
        unit_info(s, u, ret);
        return 0;
}

static int cmp_unit(const void *a, const void *b)
{
        const kerf_unit_info *x = a, *y = b;
        return x->id < y->id ? -1 : x->id > y->id;
}

size_t kerf_sched_unit_list(const kerf_sched *s, int gpu, kerf_unit_info *out, size_t max)
{
        if (!s)
                return 0;
        size_t n = 0;
        for (size_t i = 0; i < s->n_gpus; i++) {
                if (gpu >= 0 && (size_t)gpu != i)
                        continue;
                for (const sunit *u = s->gpus[i].head; u; u = u->next) {
                        if (n < max && out)
                                unit_info(s, u, &out[n]);
                        n++;
                }
        }
        if (out)
                qsort(out, n < max ? n : max, sizeof(*out), cmp_unit);
        return n;
}

int kerf_sched_gpu_get(const kerf_sched *s, unsigned gpu, kerf_gpu_state *ret)
{
        if (!s || !ret || gpu >= s->n_gpus)
                return -EINVAL;
        const sgpu *g = &s->gpus[gpu];
        memset(ret, 0, sizeof(*ret));
        ret->gpu = gpu;
        ret->mode = g->mode;
        ret->faulted = g->faulted;
        ret->draining = g->draining;
        ret->n_units = g->n_units;
        ret->mem_total = g->mem_total;
        ret->mem_reserved = g->mem_res;
        ret->compute_reserved = g->comp_res;
        ret->mig_used_mask = g->mig_mask;
        ret->mig_compute_used = g->mig_compute;
        if (g->mode == KERF_GPU_MODE_MIG)
                for (const sunit *u = g->head; u; u = u->next) {
                        ret->mem_reserved += u->mem;
                        ret->compute_reserved += u->compute;
                }
        return 0;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

size_t kerf_sched_task_list(const kerf_sched *s, kerf_task_state st, uint64_t *out, size_t max)
{
        if (!s)
                return 0;
        /* collect all matching ids, sort, then copy the first max */
        size_t n = 0, cap = 0;
        uint64_t *all = NULL;
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *v;
        while (kerf_u64map_next(&s->tasks, &it, NULL, &v)) {
                const stask *t = v;
                if (t->state != st)
                        continue;
                if (n == cap) {
                        size_t nc = cap ? cap * 2 : 64;
                        uint64_t *na = realloc(all, nc * sizeof(*na));
                        if (!na)
                                break;
                        all = na;
                        cap = nc;
                }
                all[n++] = t->id;
        }
        if (n)
                qsort(all, n, sizeof(*all), cmp_u64);
        if (out && n && max)
                memcpy(out, all, (n < max ? n : max) * sizeof(*out));
        free(all);
        return n;
}

void kerf_sched_stats_get(const kerf_sched *s, kerf_sched_stats *ret)
{
        if (s && ret)
                *ret = s->st;
}
