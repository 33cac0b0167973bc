/* SPDX-License-Identifier: Apache-2.0 */
/* units.c - unit bookkeeping: binding plans to tasks, releasing them, emitting decisions */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

sunit *kerf__unit_new(kerf_sched *s, sgpu *g, kerf_unit_kind kind)
{
        return kerf__unit_new_id(s, g, kind, 0);
}

sunit *kerf__unit_new_id(kerf_sched *s, sgpu *g, kerf_unit_kind kind, uint64_t id)
{
        sunit *u = calloc(1, sizeof(*u));
        if (!u)
                return NULL;
        if (id) {
                u->id = id;
                if (id > s->next_unit)
                        s->next_unit = id;
        } else {
                u->id = ++s->next_unit;
        }
        if (kerf_u64map_put(&s->units, u->id, u) < 0) {
                free(u);
                return NULL;
        }
        u->kind = kind;
        u->gpu = g->idx;
        u->prev = g->tail;
        if (g->tail)
                g->tail->next = u;
        else
                g->head = u;
        g->tail = u;
        g->n_units++;
        return u;
}

void kerf__unit_free(kerf_sched *s, sunit *u)
{
        sgpu *g = &s->gpus[u->gpu];
        if (u->prev)
                u->prev->next = u->next;
        else
                g->head = u->next;
        if (u->next)
                u->next->prev = u->prev;
        else
                g->tail = u->prev;
        g->n_units--;
        if (u->kind == KERF_UNIT_MIG) {
                g->mig_mask &= (uint8_t)~kerf_mig_slice_mask(u->prof, u->start);
                g->mig_compute -= u->prof->compute_slices;
        }
        kerf_u64map_del(&s->units, u->id);
        free(u);
}

int kerf__emit(kerf_sched *s, kerf_decision_kind k, stask *t, const kerf_reason *why)
{
        if (s->dq_head + s->dq_len == s->dq_cap) {
                if (s->dq_head > 0) {
                        memmove(s->dq, s->dq + s->dq_head, s->dq_len * sizeof(*s->dq));
                        s->dq_head = 0;
                } else {
                        size_t ncap = s->dq_cap ? s->dq_cap * 2 : 64;
                        kerf_decision *nd = realloc(s->dq, ncap * sizeof(*nd));
                        if (!nd)
                                return -ENOMEM;
                        s->dq = nd;
                        s->dq_cap = ncap;
                }
        }
        kerf_decision *d = &s->dq[s->dq_head + s->dq_len++];
        memset(d, 0, sizeof(*d));
        d->kind = k;
        d->seq = ++s->dec_seq;
        if (t) {
                d->task = t->id;
                d->n_units = t->n_units;
                for (unsigned i = 0; i < t->n_units; i++)
                        d->units[i] = t->units[i]->id;
                if (t->n_units)
                        d->gpu = t->units[0]->gpu;
        }
        if (why)
                d->reason = *why;
        return 0;
}

static kerf_decision *last_decision(kerf_sched *s)
{
        return &s->dq[s->dq_head + s->dq_len - 1];
}

static void node_charge(kerf_sched *s, unsigned node, const stask *t, int sign)
{
        snode *n = &s->nodes[node];
        if (n->cpu_free != UINT64_MAX)
                n->cpu_free = sign > 0 ? n->cpu_free - t->cpu : n->cpu_free + t->cpu;
        if (n->mem_free != UINT64_MAX)
                n->mem_free = sign > 0 ? n->mem_free - t->hmem : n->mem_free + t->hmem;
}

/* Creates the CREATING instance of a planned MIG placement and asks the backend for it. */
static int mig_create(kerf_sched *s, stask *t)
{
        sgpu *g = &s->gpus[t->plan.gpus[0]];
        sunit *u = kerf__unit_new(s, g, KERF_UNIT_MIG);
        if (!u)
                return -ENOMEM;
        u->state = KERF_UNIT_CREATING;
        u->prof = t->plan.prof;
        u->start = t->plan.start;
        u->mem = t->plan.mem;
        u->compute = u->limit = t->plan.compute;
        u->task = t;
        g->mig_plan_mask &= (uint8_t)~kerf_mig_slice_mask(u->prof, u->start);
        g->mig_mask |= kerf_mig_slice_mask(u->prof, u->start);
        g->mig_compute += u->prof->compute_slices;
        t->units[0] = u;
        t->n_units = 1;
        s->st.mig_creates++;
        kerf_reason why;
        kerf__reason_set(&why, KERF_WHY_MIG_PENDING, 0,
                         "create %s at slice %u of GPU %u for task %llu", u->prof->name, u->start,
                         g->idx, (unsigned long long)t->id);
        int r = kerf__emit(s, KERF_DEC_MIG_CREATE, t, &why);
        if (r == 0) {
                kerf_decision *d = last_decision(s);
                d->mig_profile_id = u->prof->id;
                d->mig_start = u->start;
        }
        return r;
}

int kerf__mig_create_planned(kerf_sched *s, stask *t)
{
        return mig_create(s, t);
}

int kerf__task_bind(kerf_sched *s, stask *t, splan *p)
{
        t->route = p->route;
        t->node = s->gpus[p->gpus[0]].d->node;
        memcpy(t->charge, p->charge, sizeof(t->charge));
        t->borrowing = p->borrowing;
        t->n_units = 0;
        kerf__quota_charge(s, t->tenant, t->charge, +1);
        node_charge(s, t->node, t, +1);

        if (p->route == KERF_UNIT_MIG) {
                sgpu *g = &s->gpus[p->gpus[0]];
                if (p->reuse) {
                        p->reuse->state = KERF_UNIT_ASSIGNED;
                        p->reuse->task = t;
                        t->units[t->n_units++] = p->reuse;
                        t->state = KERF_TASK_RUNNING;
                        return 0;
                }
                t->state = KERF_TASK_STARTING;
                t->plan = *p;
                t->destroys_left = p->n_destroy;
                if (p->n_destroy == 0)
                        return mig_create(s, t);
                g->mig_plan_mask |= kerf_mig_slice_mask(p->prof, p->start);
                for (unsigned i = 0; i < p->n_destroy; i++) {
                        sunit *u = p->destroy[i];
                        u->state = KERF_UNIT_DESTROYING;
                        u->task = t;
                        s->st.mig_destroys++;
                        kerf_reason why;
                        kerf__reason_set(
                            &why, KERF_WHY_MIG_PENDING, 0,
                            "destroy idle %s at slice %u of GPU %u to make room for %s "
                            "(task %llu)",
                            u->prof->name, u->start, g->idx, p->prof->name,
                            (unsigned long long)t->id);
                        int r = kerf__emit(s, KERF_DEC_MIG_DESTROY, NULL, &why);
                        if (r < 0)
                                return r;
                        kerf_decision *d = last_decision(s);
                        d->task = t->id;
                        d->gpu = g->idx;
                        d->n_units = 1;
                        d->units[0] = u->id;
                        d->mig_profile_id = u->prof->id;
                        d->mig_start = u->start;
                }
                return 0;
        }

        for (unsigned i = 0; i < p->n; i++) {
                sgpu *g = &s->gpus[p->gpus[i]];
                if (p->switch_mode != KERF_GPU_MODE_FREE && g->mode == KERF_GPU_MODE_FREE) {
                        g->mode = p->switch_mode;
                        if (p->switch_mode != KERF_GPU_MODE_WHOLE) {
                                kerf_reason why;
                                kerf__reason_set(&why, KERF_WHY_PLACED, t->id,
                                                 "free GPU %u now serves %s units", g->idx,
                                                 kerf_gpu_mode_name(p->switch_mode));
                                int r = kerf__emit(s, KERF_DEC_GPU_MODE, NULL, &why);
                                if (r < 0)
                                        return r;
                                kerf_decision *d = last_decision(s);
                                d->gpu = g->idx;
                                d->mode = p->switch_mode;
                        }
                }
                sunit *u = kerf__unit_new(s, g, p->route);
                if (!u)
                        return -ENOMEM;
                u->state = KERF_UNIT_ASSIGNED;
                u->task = t;
                u->mem = p->route == KERF_UNIT_WHOLE ? g->mem_total : p->mem;
                u->compute = p->compute;
                u->limit = p->limit;
                g->mem_res += u->mem;
                g->comp_res += u->compute;
                t->units[t->n_units++] = u;
        }
        t->state = KERF_TASK_RUNNING;
        return 0;
}

void kerf__task_unbind(kerf_sched *s, stask *t)
{
        for (unsigned i = 0; i < t->n_units; i++) {
                sunit *u = t->units[i];
                sgpu *g = &s->gpus[u->gpu];
                if (u->kind == KERF_UNIT_MIG) {
                        if (u->state == KERF_UNIT_ASSIGNED)
                                u->state = KERF_UNIT_READY;
                        u->task = NULL; /* a CREATING instance stays, orphaned, until confirmed */
                        continue;
                }
                g->mem_res -= u->mem;
                g->comp_res -= u->compute;
                kerf__unit_free(s, u);
                if (g->n_units == 0 && g->mode != KERF_GPU_MODE_MIG)
                        g->mode = KERF_GPU_MODE_FREE;
        }
        /* a planned create not yet emitted holds its slices in mig_plan_mask: while destroys
         * are outstanding, and after the last one is confirmed until the next step emits it */
        bool planned = t->state == KERF_TASK_STARTING && t->destroys_left > 0;
        for (size_t i = 0; i < s->n_ready; i++)
                if (s->ready[i] == t) {
                        s->ready[i] = s->ready[--s->n_ready];
                        planned = true;
                        break;
                }
        if (planned) {
                sgpu *g = &s->gpus[t->plan.gpus[0]];
                g->mig_plan_mask &= (uint8_t)~kerf_mig_slice_mask(t->plan.prof, t->plan.start);
                for (sunit *u = g->head; u; u = u->next)
                        if (u->task == t)
                                u->task = NULL;
                t->destroys_left = 0;
        }
        t->n_units = 0;
        kerf__quota_charge(s, t->tenant, t->charge, -1);
        memset(t->charge, 0, sizeof(t->charge));
        node_charge(s, t->node, t, -1);
        t->borrowing = false;
        s->gen++;
}
