/* SPDX-License-Identifier: Apache-2.0 */
/* restore.c - rebuilding running tasks on their recorded units after a daemon restart */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define BAD(code, ...)                                                                             \
        do {                                                                                       \
                if (why)                                                                           \
                        kerf__reason_set(why, KERF_WHY_NONE, 0, __VA_ARGS__);                      \
                return code;                                                                       \
        } while (0)

static bool mode_ok(kerf_unit_kind k, kerf_gpu_mode m)
{
        switch (k) {
        case KERF_UNIT_WHOLE:
                return m == KERF_GPU_MODE_FREE;
        case KERF_UNIT_SLICE:
        case KERF_UNIT_TSLICE:
                return m == KERF_GPU_MODE_FREE || m == KERF_GPU_MODE_SHARED;
        case KERF_UNIT_MPS:
                return m == KERF_GPU_MODE_FREE || m == KERF_GPU_MODE_MPS;
        default:
                return m == KERF_GPU_MODE_MIG;
        }
}

/* Checks every unit description against the current state without changing anything. */
static int validate(const kerf_sched *s, const stask *t, const kerf_unit_info *units, unsigned n,
                    kerf_reason *why)
{
        if (n == 0 || n > KERF_MAX_TASK_GPUS)
                BAD(-EINVAL, "units: %u given, 1..%d expected", n, KERF_MAX_TASK_GPUS);
        kerf_unit_kind k = units[0].kind;
        if ((unsigned)k >= KERF_UNIT_KIND_COUNT)
                BAD(-EINVAL, "units[0].kind: unknown");
        if (n != (k == KERF_UNIT_WHOLE ? t->ngpus : 1))
                BAD(-EINVAL, "units: %u given for %u GPU(s) of kind %s", n, t->ngpus,
                    kerf_unit_kind_name(k));
        for (unsigned i = 0; i < n; i++) {
                const kerf_unit_info *u = &units[i];
                if (u->kind != k)
                        BAD(-EINVAL, "units[%u].kind: all units of a task share one kind", i);
                if (u->gpu >= s->n_gpus)
                        BAD(-EINVAL, "units[%u].gpu: %u is not a GPU of this fleet", i, u->gpu);
                if (u->id == 0 || u->id == UINT64_MAX)
                        BAD(-EINVAL, "units[%u].id: must be a unit id", i);
                const sgpu *g = &s->gpus[u->gpu];
                if (g->d->node != s->gpus[units[0].gpu].d->node)
                        BAD(-EINVAL, "units: a task's units are on one node");
                for (unsigned j = 0; j < i; j++)
                        if (units[j].id == u->id || units[j].gpu == u->gpu)
                                BAD(-EINVAL, "units[%u]: repeats unit or GPU of units[%u]", i, j);
                if (g->faulted)
                        BAD(-KERF_EINUSE, "units[%u]: GPU %u is faulted", i, u->gpu);
                const sunit *have = kerf_u64map_get(&s->units, u->id);
                if (k == KERF_UNIT_MIG) {
                        if (!have || have->kind != KERF_UNIT_MIG || have->gpu != u->gpu)
                                BAD(-EINVAL,
                                    "units[%u].id: %llu is not an adopted MIG instance "
                                    "of GPU %u",
                                    i, (unsigned long long)u->id, u->gpu);
                        if (have->state != KERF_UNIT_READY)
                                BAD(-KERF_EINUSE, "units[%u]: MIG instance %llu is %s", i,
                                    (unsigned long long)u->id, kerf_unit_state_name(have->state));
                        continue;
                }
                if (have)
                        BAD(-KERF_EINUSE, "units[%u].id: %llu is already in use", i,
                            (unsigned long long)u->id);
                if (!mode_ok(k, g->mode))
                        BAD(-KERF_EINUSE, "units[%u]: GPU %u serves %s units", i, u->gpu,
                            kerf_gpu_mode_name(g->mode));
                if (u->compute_pct > 100 || u->compute_limit_pct > 100)
                        BAD(-EINVAL, "units[%u].compute_pct: over 100", i);
                if (k != KERF_UNIT_WHOLE && (u->mem_bytes > g->mem_total - g->mem_res ||
                                             u->compute_pct + g->comp_res > 100))
                        BAD(-KERF_EINUSE, "units[%u]: GPU %u has no room for it", i, u->gpu);
        }
        return 0;
}

int kerf_sched_restore(kerf_sched *s, const kerf_request *r, uint64_t id,
                       const kerf_unit_info *units, unsigned n, kerf_reason *why)
{
        if (!s || !r || !units || id == 0 || id == UINT64_MAX || kerf_u64map_get(&s->tasks, id))
                BAD(-EINVAL, "id: must be a free task id");
        stask tmp;
        int rc = kerf__task_from_request(s, r, &tmp, why);
        if (rc < 0)
                return rc;
        rc = validate(s, &tmp, units, n, why);
        if (rc < 0)
                return rc;

        stask *t = malloc(sizeof(*t));
        if (!t)
                return -ENOMEM;
        *t = tmp;
        t->id = id;
        if (id > s->next_task)
                s->next_task = id;
        t->seq = ++s->next_seq;
        if (kerf_u64map_put(&s->tasks, id, t) < 0) {
                free(t);
                return -ENOMEM;
        }
        kerf_unit_kind k = units[0].kind;
        t->route = k;
        t->node = s->gpus[units[0].gpu].d->node;
        for (unsigned i = 0; i < n; i++) {
                sgpu *g = &s->gpus[units[i].gpu];
                sunit *u;
                if (k == KERF_UNIT_MIG) {
                        u = kerf_u64map_get(&s->units, units[i].id);
                } else {
                        u = kerf__unit_new_id(s, g, k, units[i].id);
                        if (!u) {
                                /* undo: release what was bound so far */
                                kerf__task_unbind(s, t);
                                kerf_u64map_del(&s->tasks, id);
                                free(t);
                                return -ENOMEM;
                        }
                        if (g->mode == KERF_GPU_MODE_FREE)
                                g->mode = k == KERF_UNIT_WHOLE ? KERF_GPU_MODE_WHOLE
                                          : k == KERF_UNIT_MPS ? KERF_GPU_MODE_MPS
                                                               : KERF_GPU_MODE_SHARED;
                        u->mem = k == KERF_UNIT_WHOLE ? g->mem_total : units[i].mem_bytes;
                        u->compute = k == KERF_UNIT_WHOLE ? 100 : units[i].compute_pct;
                        u->limit = k == KERF_UNIT_WHOLE         ? 100
                                   : units[i].compute_limit_pct ? units[i].compute_limit_pct
                                                                : u->compute;
                        g->mem_res += u->mem;
                        g->comp_res += u->compute;
                }
                u->state = KERF_UNIT_ASSIGNED;
                u->task = t;
                t->units[t->n_units++] = u;
        }
        /* charge what the units hold */
        memset(t->charge, 0, sizeof(t->charge));
        for (unsigned i = 0; i < n; i++) {
                const sunit *u = t->units[i];
                t->charge[KERF_RES_MEM] += u->mem;
                if (k == KERF_UNIT_WHOLE) {
                        t->charge[KERF_RES_GPUS] += 1;
                        t->charge[KERF_RES_COMPUTE] += 100;
                } else if (k == KERF_UNIT_MIG) {
                        t->charge[KERF_RES_MIG_SLICES] += u->prof->compute_slices;
                        t->charge[KERF_RES_COMPUTE] += u->compute;
                } else if (k != KERF_UNIT_TSLICE) {
                        t->charge[KERF_RES_COMPUTE] += u->compute;
                }
        }
        stenant *ten = t->tenant;
        t->borrowing = false;
        for (unsigned res = 0; res < KERF_RES_COUNT; res++)
                if (ten->nominal[res] != KERF_UNLIMITED &&
                    ten->usage[res] + t->charge[res] > ten->nominal[res] && t->charge[res])
                        t->borrowing = ten->cohort >= 0;
        kerf__quota_charge(s, ten, t->charge, +1);
        for (unsigned res = 0; res < KERF_RES_COUNT; res++) {
                uint64_t limit = ten->nominal[res];
                if (ten->cohort >= 0 && limit != KERF_UNLIMITED)
                        limit = ten->borrow[res] > UINT64_MAX - limit ? UINT64_MAX
                                                                      : limit + ten->borrow[res];
                if (ten->usage[res] > limit && ten->usage[res] > ten->grand[res])
                        ten->grand[res] = ten->usage[res];
        }
        snode *nd = &s->nodes[t->node];
        if (nd->cpu_free != UINT64_MAX)
                nd->cpu_free = nd->cpu_free > t->cpu ? nd->cpu_free - t->cpu : 0;
        if (nd->mem_free != UINT64_MAX)
                nd->mem_free = nd->mem_free > t->hmem ? nd->mem_free - t->hmem : 0;
        t->state = KERF_TASK_RUNNING;
        t->start_ms = kerf__now(s); /* until kerf_sched_task_started says when */
        s->st.running++;
        kerf__reason_set(&t->reason, KERF_WHY_PLACED, 0, "restored on its recorded units");
        s->gen++;
        return 0;
}
