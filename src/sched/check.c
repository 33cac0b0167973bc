/* SPDX-License-Identifier: Apache-2.0 */
/* check.c - full invariant check of the scheduler state (for tests and debugging) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define FAIL(...)                                                                                  \
        do {                                                                                       \
                if (err)                                                                           \
                        snprintf(err, errlen, __VA_ARGS__);                                        \
                return -KERF_ECORRUPT;                                                             \
        } while (0)

static int check_gpu(const kerf_sched *s, const sgpu *g, char *err, size_t errlen)
{
        uint64_t mem = 0;
        unsigned comp = 0, n = 0, migc = 0, counts[32] = {0};
        uint8_t mask = 0, live_mask = 0;
        for (const sunit *u = g->head; u; u = u->next) {
                n++;
                if (u->gpu != g->idx)
                        FAIL("unit %llu on GPU %u's list says GPU %u", (unsigned long long)u->id,
                             g->idx, u->gpu);
                if (kerf_u64map_get(&s->units, u->id) != u)
                        FAIL("unit %llu not in the unit map", (unsigned long long)u->id);
                if (u->kind == KERF_UNIT_MIG) {
                        if (g->mode != KERF_GPU_MODE_MIG)
                                FAIL("MIG unit %llu on GPU %u in mode %s",
                                     (unsigned long long)u->id, g->idx,
                                     kerf_gpu_mode_name(g->mode));
                        if (!kerf_mig_start_valid(u->prof, u->start))
                                FAIL("MIG unit %llu at invalid start %u", (unsigned long long)u->id,
                                     u->start);
                        uint8_t m = kerf_mig_slice_mask(u->prof, u->start);
                        if (mask & m)
                                FAIL("MIG placements overlap on GPU %u (unit %llu at slice %u)",
                                     g->idx, (unsigned long long)u->id, u->start);
                        mask |= m;
                        if (u->state != KERF_UNIT_DESTROYING)
                                live_mask |= m;
                        migc += u->prof->compute_slices;
                        if (u->prof->id < 32 && ++counts[u->prof->id] > u->prof->max_count)
                                FAIL("GPU %u has more than %u %s instances", g->idx,
                                     u->prof->max_count, u->prof->name);
                } else {
                        mem += u->mem;
                        comp += u->compute;
                        bool okmode =
                            (u->kind == KERF_UNIT_WHOLE && g->mode == KERF_GPU_MODE_WHOLE) ||
                            ((u->kind == KERF_UNIT_SLICE || u->kind == KERF_UNIT_TSLICE) &&
                             g->mode == KERF_GPU_MODE_SHARED) ||
                            (u->kind == KERF_UNIT_MPS && g->mode == KERF_GPU_MODE_MPS);
                        if (!okmode)
                                FAIL("%s unit %llu on GPU %u in mode %s",
                                     kerf_unit_kind_name(u->kind), (unsigned long long)u->id,
                                     g->idx, kerf_gpu_mode_name(g->mode));
                }
                if (u->kind != KERF_UNIT_MIG && u->state != KERF_UNIT_ASSIGNED)
                        FAIL("%s unit %llu is %s", kerf_unit_kind_name(u->kind),
                             (unsigned long long)u->id, kerf_unit_state_name(u->state));
                if (u->create_pending && u->state != KERF_UNIT_FAULT)
                        FAIL("unit %llu marked create-pending while %s", (unsigned long long)u->id,
                             kerf_unit_state_name(u->state));
                if ((u->state == KERF_UNIT_READY || u->state == KERF_UNIT_FAULT) && u->task)
                        FAIL("%s unit %llu still points at task %llu",
                             kerf_unit_state_name(u->state), (unsigned long long)u->id,
                             (unsigned long long)u->task->id);
                if ((u->state == KERF_UNIT_CREATING || u->state == KERF_UNIT_DESTROYING) &&
                    u->task) {
                        const stask *t = u->task;
                        if (kerf_u64map_get(&s->tasks, t->id) != t ||
                            t->state != KERF_TASK_STARTING)
                                FAIL("%s unit %llu waits for a task that is not starting",
                                     kerf_unit_state_name(u->state), (unsigned long long)u->id);
                        bool creating = u->state == KERF_UNIT_CREATING;
                        if (creating != (t->n_units == 1 && t->units[0] == u))
                                FAIL("%s unit %llu and task %llu disagree",
                                     kerf_unit_state_name(u->state), (unsigned long long)u->id,
                                     (unsigned long long)t->id);
                }
                if (u->state == KERF_UNIT_ASSIGNED) {
                        const stask *t = u->task;
                        if (!t || kerf_u64map_get(&s->tasks, t->id) != t)
                                FAIL("assigned unit %llu has no live task",
                                     (unsigned long long)u->id);
                        if (t->state != KERF_TASK_RUNNING)
                                FAIL("unit %llu assigned to task %llu in state %s",
                                     (unsigned long long)u->id, (unsigned long long)t->id,
                                     kerf_task_state_name(t->state));
                        bool found = false;
                        for (unsigned i = 0; i < t->n_units; i++)
                                found |= t->units[i] == u;
                        if (!found)
                                FAIL("unit %llu thinks it is task %llu's, the task disagrees",
                                     (unsigned long long)u->id, (unsigned long long)t->id);
                }
        }
        if (n != g->n_units)
                FAIL("GPU %u counts %u units, has %u", g->idx, g->n_units, n);
        if (mem != g->mem_res || comp != g->comp_res)
                FAIL("GPU %u accounting drift: mem %llu vs %llu, compute %u vs %u", g->idx,
                     (unsigned long long)mem, (unsigned long long)g->mem_res, comp, g->comp_res);
        if (mem > g->mem_total)
                FAIL("GPU %u memory over-committed: %llu > %llu", g->idx, (unsigned long long)mem,
                     (unsigned long long)g->mem_total);
        if (comp > 100)
                FAIL("GPU %u reserved compute %u%% > 100%%", g->idx, comp);
        if (mask != g->mig_mask || migc != g->mig_compute)
                FAIL("GPU %u MIG mask/compute drift", g->idx);
        if (migc > KERF_MIG_COMPUTE)
                FAIL("GPU %u uses %u MIG compute slices", g->idx, migc);
        if (g->mig_plan_mask & live_mask)
                FAIL("GPU %u planned MIG slices overlap live instances", g->idx);
        if (g->mode == KERF_GPU_MODE_WHOLE && n != 1)
                FAIL("GPU %u in whole mode with %u units", g->idx, n);
        if (g->mode == KERF_GPU_MODE_FREE && n != 0)
                FAIL("free GPU %u has %u units", g->idx, n);
        if ((g->mode == KERF_GPU_MODE_SHARED || g->mode == KERF_GPU_MODE_MPS) && n == 0)
                FAIL("GPU %u in %s mode without units", g->idx, kerf_gpu_mode_name(g->mode));
        return 0;
}

static int check_task(const kerf_sched *s, const stask *t, uint64_t (*use)[KERF_RES_COUNT],
                      uint8_t *plan, uint64_t *node_use, char *err, size_t errlen)
{
        if (t->doomed)
                FAIL("task %llu left doomed", (unsigned long long)t->id);
        const squeue *q = t->queue;
        bool queued = t->heap_idx < q->len && q->heap[t->heap_idx] == t;
        if (t->state == KERF_TASK_PENDING) {
                if (!queued && !t->held)
                        FAIL("pending task %llu is not in its queue", (unsigned long long)t->id);
                if (queued && t->held)
                        FAIL("held task %llu is in its queue", (unsigned long long)t->id);
                if (t->n_units)
                        FAIL("pending task %llu holds %u units", (unsigned long long)t->id,
                             t->n_units);
                for (unsigned r = 0; r < KERF_RES_COUNT; r++)
                        if (t->charge[r])
                                FAIL("pending task %llu is charged", (unsigned long long)t->id);
                return 0;
        }
        if (t->held)
                FAIL("task %llu is %s and held", (unsigned long long)t->id,
                     kerf_task_state_name(t->state));
        if (queued)
                FAIL("task %llu is both %s and pending", (unsigned long long)t->id,
                     kerf_task_state_name(t->state));
        if (t->state == KERF_TASK_RUNNING) {
                unsigned want = t->route == KERF_UNIT_WHOLE ? t->ngpus : 1;
                if (t->n_units != want)
                        FAIL("running task %llu holds %u units, needs %u",
                             (unsigned long long)t->id, t->n_units, want);
                for (unsigned i = 0; i < t->n_units; i++) {
                        const sunit *u = t->units[i];
                        if (u->task != t || u->state != KERF_UNIT_ASSIGNED)
                                FAIL("task %llu's unit %llu is not assigned to it",
                                     (unsigned long long)t->id, (unsigned long long)u->id);
                        if (s->gpus[u->gpu].d->node != t->node)
                                FAIL("task %llu spans nodes", (unsigned long long)t->id);
                }
        }
        if (t->state == KERF_TASK_STARTING) {
                if (t->route != KERF_UNIT_MIG || t->n_units > 1)
                        FAIL("starting task %llu is not a MIG task with at most one unit",
                             (unsigned long long)t->id);
                if (t->n_units == 1 && (t->units[0]->state != KERF_UNIT_CREATING ||
                                        t->units[0]->task != t || t->destroys_left))
                        FAIL("starting task %llu's unit is not being created for it",
                             (unsigned long long)t->id);
                if (t->n_units == 0) {
                        /* waiting for destroys, or for its create at the next step */
                        const sgpu *g = &s->gpus[t->plan.gpus[0]];
                        unsigned nd = 0;
                        for (const sunit *u = g->head; u; u = u->next)
                                nd += u->task == t && u->state == KERF_UNIT_DESTROYING;
                        bool ready = false;
                        for (size_t i = 0; i < s->n_ready; i++)
                                ready |= s->ready[i] == t;
                        if (nd != t->destroys_left || (nd == 0) != ready)
                                FAIL("starting task %llu waits for %u destroys, %u outstanding%s",
                                     (unsigned long long)t->id, t->destroys_left, nd,
                                     ready ? ", and is ready to create" : "");
                        plan[t->plan.gpus[0]] |= kerf_mig_slice_mask(t->plan.prof, t->plan.start);
                }
        }
        if (t->borrowing && t->tenant->cohort < 0)
                FAIL("task %llu borrows, its tenant has no cohort", (unsigned long long)t->id);
        for (unsigned r = 0; r < KERF_RES_COUNT; r++)
                use[t->tenant->idx][r] += t->charge[r];
        node_use[2 * t->node] += t->cpu;
        node_use[2 * t->node + 1] += t->hmem;
        return 0;
}

int kerf_sched_check(const kerf_sched *s, char *err, size_t errlen)
{
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < s->n_gpus; i++) {
                int r = check_gpu(s, &s->gpus[i], err, errlen);
                if (r < 0)
                        return r;
        }
        uint64_t use[256][KERF_RES_COUNT];
        if (s->n_tenants > 256)
                FAIL("check supports at most 256 tenants");
        memset(use, 0, sizeof(use));
        uint64_t pending = 0, running = 0;
        size_t npend[256] = {0};
        uint8_t *plan = calloc(s->n_gpus, sizeof(*plan));
        uint64_t *node_use = calloc(2 * s->fleet->n_nodes, sizeof(*node_use));
        int rc = plan && node_use ? 0 : -ENOMEM;
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *v;
        while (rc == 0 && kerf_u64map_next(&s->tasks, &it, NULL, &v)) {
                const stask *t = v;
                rc = check_task(s, t, use, plan, node_use, err, errlen);
                if (rc < 0)
                        break;
                pending += t->state == KERF_TASK_PENDING;
                running += t->state == KERF_TASK_RUNNING;
                npend[t->tenant->idx] += t->state == KERF_TASK_PENDING;
        }
        for (size_t i = 0; i < s->n_gpus && rc == 0; i++)
                if (plan[i] != s->gpus[i].mig_plan_mask) {
                        if (err)
                                snprintf(err, errlen,
                                         "GPU %zu MIG slices %#x planned, starting tasks plan %#x",
                                         i, s->gpus[i].mig_plan_mask, plan[i]);
                        rc = -KERF_ECORRUPT;
                }
        for (size_t n = 0; n < s->fleet->n_nodes && rc == 0; n++) {
                const kerf_node_desc *nd = &s->fleet->nodes[n];
                const snode *sn = &s->nodes[n];
                if ((nd->cpu_milli &&
                     sn->cpu_free + sn->cpu_held + node_use[2 * n] != nd->cpu_milli) ||
                    (nd->mem_bytes &&
                     sn->mem_free + sn->mem_held + node_use[2 * n + 1] != nd->mem_bytes)) {
                        if (err)
                                snprintf(err, errlen, "node %s CPU/host-memory accounting drift",
                                         nd->name);
                        rc = -KERF_ECORRUPT;
                }
        }
        free(plan);
        free(node_use);
        if (rc < 0)
                return rc;
        if (pending != s->st.pending || running != s->st.running)
                FAIL("stats drift: pending %llu/%llu running %llu/%llu",
                     (unsigned long long)pending, (unsigned long long)s->st.pending,
                     (unsigned long long)running, (unsigned long long)s->st.running);
        for (size_t i = 0; i < s->n_tenants; i++) {
                const stenant *t = s->tenants[i];
                if (npend[i] != t->n_pending)
                        FAIL("tenant %s pending count drift", t->name);
                for (unsigned r = 0; r < KERF_RES_COUNT; r++) {
                        if (use[i][r] != t->usage[r])
                                FAIL("tenant %s %s usage %llu, tasks hold %llu", t->name,
                                     kerf_res_name(r), (unsigned long long)t->usage[r],
                                     (unsigned long long)use[i][r]);
                        uint64_t limit = t->nominal[r];
                        if (t->cohort >= 0 && limit != KERF_UNLIMITED)
                                limit = t->borrow[r] > UINT64_MAX - limit ? UINT64_MAX
                                                                          : limit + t->borrow[r];
                        if (t->usage[r] > limit && t->usage[r] > t->grand[r])
                                FAIL("tenant %s uses %llu %s, over its limit %llu", t->name,
                                     (unsigned long long)t->usage[r], kerf_res_name(r),
                                     (unsigned long long)limit);
                }
        }
        return 0;
}
