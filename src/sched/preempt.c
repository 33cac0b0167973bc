/* SPDX-License-Identifier: Apache-2.0 */
/* preempt.c - choosing a minimal set of victims to make room for a task, and evicting them */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Victim order: lowest priority first, then tasks running on borrowed quota, then newest. */
static int victim_cmp(const void *a, const void *b)
{
        const stask *x = *(stask *const *)a, *y = *(stask *const *)b;
        if (x->prio != y->prio)
                return x->prio < y->prio ? -1 : 1;
        if (x->borrowing != y->borrowing)
                return x->borrowing ? -1 : 1;
        return x->seq > y->seq ? -1 : x->seq < y->seq ? 1 : 0;
}

/* May `t` preempt `v`? By priority: v is preemptible and strictly lower. By reclaim: v runs on
 * quota borrowed within t's cohort (then t itself must end up within its nominal quota). */
static bool cohort_peers(const stask *t, const stask *v)
{
        return v->tenant != t->tenant && t->tenant->cohort >= 0 &&
               v->tenant->cohort == t->tenant->cohort;
}

/* Within a cohort a tenant's nominal quota is its own: a peer may evict its tasks by priority
 * only while they run on borrowed quota. Without this, a lender reclaiming from a
 * higher-priority borrower and the borrower preempting back by priority would alternate. */
static bool by_priority(const stask *t, const stask *v)
{
        return v->preemptible && v->prio < t->prio && (!cohort_peers(t, v) || v->borrowing);
}

static bool by_reclaim(const stask *t, const stask *v)
{
        return v->borrowing && cohort_peers(t, v);
}

static bool eligible(const stask *t, const stask *v)
{
        return v != t && v->state == KERF_TASK_RUNNING && (by_priority(t, v) || by_reclaim(t, v));
}

/* Doomed tasks' charges are taken off their tenants while a what-if runs. */
static void doom(kerf_sched *s, stask *v, bool on)
{
        v->doomed = on;
        for (unsigned r = 0; r < KERF_RES_COUNT; r++) {
                if (on)
                        v->tenant->usage[r] -= v->charge[r];
                else
                        v->tenant->usage[r] += v->charge[r];
        }
}

typedef struct vset {
        stask *v[256];
        unsigned n;
        long cost;
} vset;

static long set_cost(const vset *vs)
{
        long c = 0;
        for (unsigned i = 0; i < vs->n; i++)
                c += 2001 + vs->v[i]->prio; /* fewer victims first, then lower priorities */
        return c;
}

static bool any_reclaim(const stask *t, const vset *vs)
{
        for (unsigned i = 0; i < vs->n; i++)
                if (!by_priority(t, vs->v[i]))
                        return true;
        return false;
}

/* A task that must borrow may not take, by priority, the place of a task of another tenant of
 * its cohort: that tenant could reclaim its lent quota at once and the two would evict each
 * other forever (Kueue's borrowWithinCohort off). */
static bool evicts_cohort_peer(const stask *t, const vset *vs)
{
        for (unsigned i = 0; i < vs->n; i++)
                if (cohort_peers(t, vs->v[i]))
                        return true;
        return false;
}

/* Does t fit (placement + quota) with the doomed tasks of vs gone, within the scope? */
static bool fits(kerf_sched *s, stask *t, kerf_unit_kind route, int gpu, int node, const vset *vs,
                 splan *plan)
{
        s->only_node = node;
        kerf_why w = kerf__place_route(s, t, route, gpu, plan, NULL);
        s->only_node = -1;
        if (w != KERF_WHY_NONE)
                return false;
        bool borrow = false;
        if (kerf__quota_check(s, t->tenant, plan->charge, &borrow, NULL) != KERF_WHY_NONE)
                return false;
        /* a reclaimer must not itself borrow, or two tenants could evict each other forever */
        return !borrow || (!any_reclaim(t, vs) && !evicts_cohort_peer(t, vs));
}

/* Greedily dooms candidates until t fits in the scope, then drops every victim that is not
 * needed. Leaves nothing doomed. Returns true and fills *out when a set exists. */
static bool try_scope(kerf_sched *s, stask *t, kerf_unit_kind route, int gpu, int node,
                      stask **cand, unsigned nc, vset *out)
{
        vset vs = {.n = 0};
        splan plan;
        bool ok = false;
        for (unsigned i = 0; i < nc && vs.n < 256; i++) {
                if (cand[i]->doomed)
                        continue;
                doom(s, cand[i], true);
                vs.v[vs.n++] = cand[i];
                if (fits(s, t, route, gpu, node, &vs, &plan)) {
                        ok = true;
                        break;
                }
        }
        if (ok) {
                /* minimise: a victim whose return still leaves room is spared */
                for (int i = (int)vs.n - 1; i >= 0; i--) {
                        stask *v = vs.v[i];
                        doom(s, v, false);
                        vs.v[i] = vs.v[--vs.n];
                        if (fits(s, t, route, gpu, node, &vs, &plan))
                                continue;
                        vs.v[vs.n++] = vs.v[i];
                        vs.v[i] = v;
                        doom(s, v, true);
                }
        }
        for (unsigned i = 0; i < vs.n; i++)
                doom(s, vs.v[i], false);
        if (!ok)
                return false;
        vs.cost = set_cost(&vs);
        *out = vs;
        return true;
}

/* Candidates holding a unit on GPU g (or any GPU of node n when g < 0), sorted. */
static unsigned gather(kerf_sched *s, stask *t, int g, int n, stask **cand, unsigned max)
{
        unsigned nc = 0;
        size_t lo = 0, hi = s->n_gpus;
        if (g >= 0) {
                lo = (size_t)g;
                hi = lo + 1;
        } else if (n >= 0) {
                lo = s->fleet->nodes[n].first_gpu;
                hi = lo + s->fleet->nodes[n].n_gpus;
        }
        for (size_t i = lo; i < hi; i++) {
                for (sunit *u = s->gpus[i].head; u; u = u->next) {
                        stask *v = u->task;
                        if (!v || u->state != KERF_UNIT_ASSIGNED || !eligible(t, v))
                                continue;
                        bool dup = false;
                        for (unsigned k = 0; k < nc && !dup; k++)
                                dup = cand[k] == v;
                        if (!dup && nc < max)
                                cand[nc++] = v;
                }
        }
        qsort(cand, nc, sizeof(*cand), victim_cmp);
        return nc;
}

/* Borrowing tasks of t's cohort peers, anywhere in the fleet, sorted. */
static unsigned gather_borrowers(kerf_sched *s, stask *t, stask **cand, unsigned max)
{
        unsigned nc = 0;
        for (size_t i = 0; i < s->n_gpus; i++) {
                for (sunit *u = s->gpus[i].head; u; u = u->next) {
                        stask *v = u->task;
                        if (!v || u->state != KERF_UNIT_ASSIGNED || v->state != KERF_TASK_RUNNING ||
                            !by_reclaim(t, v))
                                continue;
                        /* a multi-GPU task holds several units: count it once */
                        if (v->n_units > 1 && v->units[0] != u)
                                continue;
                        if (nc < max)
                                cand[nc++] = v;
                }
        }
        qsort(cand, nc, sizeof(*cand), victim_cmp);
        return nc;
}

bool kerf__preempt(kerf_sched *s, stask *t, kerf_why why, splan *plan)
{
        if (t->reclaimed)
                return false;
        kerf_unit_kind routes[KERF_UNIT_KIND_COUNT];
        unsigned nr;
        if (t->route_req >= 0) {
                routes[0] = (kerf_unit_kind)t->route_req;
                nr = 1;
        } else {
                nr = s->pol.n_routes[t->wl][t->tier];
                memcpy(routes, s->pol.routes[t->wl][t->tier], nr * sizeof(*routes));
        }
        stask *cand[512];
        vset best = {.n = 0}, vs;
        kerf_unit_kind best_route = KERF_UNIT_WHOLE;
        int best_gpu = -1, best_node = -1;
        bool found = false;

        s->whatif = true;
        /* Reclaim on quota (Kueue's reclaimWithinCohort): t fits physically but the quota it
         * lends is borrowed by cohort peers. Their borrowing tasks, anywhere, give it back;
         * t must then be within its own nominal quota (fits() checks), so a borrower never
         * evicts a lender and two tenants cannot evict each other in turn. */
        if (why == KERF_WHY_COHORT && t->tenant->cohort >= 0) {
                unsigned nc = gather_borrowers(s, t, cand, 512);
                for (unsigned ri = 0; ri < nr && nc && !found; ri++) {
                        if (!kerf__route_possible(s, t, routes[ri], NULL, 0))
                                continue;
                        if (try_scope(s, t, routes[ri], -1, -1, cand, nc, &vs)) {
                                best = vs;
                                best_route = routes[ri];
                                found = true;
                        }
                }
        }
        for (unsigned ri = 0; ri < nr && !found; ri++) {
                kerf_unit_kind route = routes[ri];
                if (!kerf__route_possible(s, t, route, NULL, 0))
                        continue;
                if (route == KERF_UNIT_WHOLE && t->ngpus > 1) {
                        for (size_t n = 0; n < s->fleet->n_nodes; n++) {
                                unsigned nc = gather(s, t, -1, (int)n, cand, 512);
                                if (nc && try_scope(s, t, route, -1, (int)n, cand, nc, &vs) &&
                                    (best_gpu == -1 && best_node == -1 ? true
                                                                       : vs.cost < best.cost)) {
                                        best = vs;
                                        best_route = route;
                                        best_node = (int)n;
                                        best_gpu = -1;
                                }
                        }
                } else {
                        for (size_t g = 0; g < s->n_gpus; g++) {
                                if (kerf__gpu_closed(&s->gpus[g]) || s->gpus[g].n_units == 0)
                                        continue;
                                unsigned nc = gather(s, t, (int)g, -1, cand, 512);
                                if (nc && try_scope(s, t, route, (int)g, -1, cand, nc, &vs) &&
                                    (best_gpu == -1 && best_node == -1 ? true
                                                                       : vs.cost < best.cost)) {
                                        best = vs;
                                        best_route = route;
                                        best_gpu = (int)g;
                                        best_node = -1;
                                }
                        }
                }
                found = best_gpu >= 0 || best_node >= 0;
        }
        if (!found) {
                s->whatif = false;
                return false;
        }
        /* re-check quota with the chosen set (fits() already did, per scope) */
        s->whatif = false;
        for (unsigned i = 0; i < best.n; i++) {
                stask *v = best.v[i];
                bool reclaim = !by_priority(t, v);
                char text[KERF_TEXT_LEN];
                if (reclaim)
                        snprintf(
                            text, sizeof(text),
                            "reclaimed: tenant %s takes back quota lent to tenant %s, for task "
                            "%llu",
                            t->tenant->name, v->tenant->name, (unsigned long long)t->id);
                else
                        snprintf(text, sizeof(text),
                                 "preempted by task %llu (priority %d > %d) of tenant %s",
                                 (unsigned long long)t->id, t->prio, v->prio, t->tenant->name);
                kerf_reason why_v;
                kerf__reason_set(&why_v, reclaim ? KERF_WHY_RECLAIMED : KERF_WHY_PREEMPTED, t->id,
                                 "%s", text);
                kerf__emit(s, KERF_DEC_PREEMPT, v, &why_v);
                s->dq[s->dq_head + s->dq_len - 1].by_task = t->id;
                v->preemptions++;
                s->st.preemptions++;
                kerf__task_evict(s, v, why_v.code, t->id, text);
                v->reclaimed = reclaim;
                /* a victim must not block its own queue's next decision: it re-enters fairly */
        }
        s->only_node = best_node;
        kerf_why w = kerf__place_route(s, t, best_route, best_gpu, plan, NULL);
        s->only_node = -1;
        if (w != KERF_WHY_NONE)
                return false;
        bool borrow = false;
        if (kerf__quota_check(s, t->tenant, plan->charge, &borrow, NULL) != KERF_WHY_NONE)
                return false;
        plan->borrowing = borrow;
        return true;
}
