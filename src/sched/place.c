/* SPDX-License-Identifier: Apache-2.0 */
/* place.c - finding units for a task: whole GPUs, MIG instances and shares, with a
 * fragmentation-aware score (after FGD, ATC'23) and best-fit / first-fit baselines */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "kerf/units.h"

uint64_t kerf__task_mem_on(const stask *t, const sgpu *g)
{
        if (t->mem_permille)
                return g->mem_total * t->mem_permille / 1000;
        return t->mem_req;
}

/* The GPUs a task may use: its models, and the GPUs a launcher named (its pins). */
static bool model_ok(const stask *t, const sgpu *g)
{
        if (t->n_pins) {
                unsigned i = 0;
                while (i < t->n_pins && t->pins[i] != g->idx)
                        i++;
                if (i == t->n_pins)
                        return false;
        }
        if (!t->model_mask)
                return true;
        int mi = kerf_gpu_model_index(g->d->model);
        return mi >= 0 && mi < 64 && (t->model_mask >> mi) & 1;
}

bool kerf__gpu_allowed(const stask *t, const sgpu *g)
{
        return model_ok(t, g);
}

/* Node resources for one more GPU-set of `t` on node n. */
static bool node_ok(const kerf_sched *s, const stask *t, unsigned n)
{
        const snode *nd = &s->nodes[n];
        return nd->cpu_free >= t->cpu && nd->mem_free >= t->hmem;
}

static void charge_set(splan *p, const sgpu *g)
{
        memset(p->charge, 0, sizeof(p->charge));
        switch (p->route) {
        case KERF_UNIT_WHOLE:
                p->charge[KERF_RES_GPUS] = p->n;
                p->charge[KERF_RES_MEM] = g->mem_total * p->n;
                p->charge[KERF_RES_COMPUTE] = 100ULL * p->n;
                break;
        case KERF_UNIT_MIG:
                p->charge[KERF_RES_MIG_SLICES] = p->prof->compute_slices;
                p->charge[KERF_RES_MEM] = p->prof->mem_mib * KERF_MIB;
                p->charge[KERF_RES_COMPUTE] = p->prof->compute_slices * 100 / KERF_MIG_COMPUTE;
                break;
        case KERF_UNIT_SLICE:
        case KERF_UNIT_MPS:
                p->charge[KERF_RES_MEM] = p->mem;
                p->charge[KERF_RES_COMPUTE] = p->compute;
                break;
        case KERF_UNIT_TSLICE:
                p->charge[KERF_RES_MEM] = p->mem;
                break;
        default:
                break;
        }
}

/* ---- shares: slice, time-slice, MPS ------------------------------------------------------ */

/* A GPU's sharing state as a what-if sees it: units of doomed tasks count as gone. */
typedef struct geff {
        kerf_gpu_mode mode;
        uint64_t mem_res;
        unsigned comp_res;
} geff;

static void gpu_eff(const kerf_sched *s, const sgpu *g, geff *e)
{
        e->mode = g->mode;
        e->mem_res = g->mem_res;
        e->comp_res = g->comp_res;
        if (!s->whatif || g->mode == KERF_GPU_MODE_MIG)
                return;
        unsigned left = 0;
        for (const sunit *u = g->head; u; u = u->next) {
                if (u->task && u->task->doomed) {
                        e->mem_res -= u->mem;
                        e->comp_res -= u->compute;
                } else {
                        left++;
                }
        }
        if (left == 0)
                e->mode = KERF_GPU_MODE_FREE;
}

/* Free milli-GPUs left on g after a share of `comp` percent and `mem` bytes. */
static unsigned share_after(const sgpu *g, const geff *e, unsigned comp, uint64_t mem)
{
        uint64_t c = (100 - e->comp_res - comp) * 10ULL;
        uint64_t m = (g->mem_total - e->mem_res - mem) * 1000 / g->mem_total;
        return (unsigned)(c < m ? c : m);
}

static kerf_why place_share(kerf_sched *s, stask *t, kerf_unit_kind route, int only, splan *plan,
                            sdetail *d)
{
        kerf_gpu_mode want = route == KERF_UNIT_MPS ? KERF_GPU_MODE_MPS : KERF_GPU_MODE_SHARED;
        unsigned comp = route == KERF_UNIT_TSLICE ? 0 : t->compute;
        int best = -1;
        double best_score = 0;
        uint64_t best_left = 0;
        bool any_model = false, node_short = false;
        uint64_t total_free_mem = 0, max_mem = 0;

        /* one candidate (a what-if probe of one GPU): nothing to compare */
        bool frag = s->pol.place == KERF_PLACE_KERF && only < 0;
        if (frag)
                kerf__frag_begin(s);

        for (size_t i = 0; i < s->n_gpus; i++) {
                sgpu *g = &s->gpus[i];
                if (only >= 0 && (size_t)only != i)
                        continue;
                if (kerf__gpu_closed(g) || !model_ok(t, g) || g->mode == KERF_GPU_MODE_MIG)
                        continue;
                geff e;
                gpu_eff(s, g, &e);
                if (e.mode != KERF_GPU_MODE_FREE && e.mode != want)
                        continue;
                any_model = true;
                uint64_t mem = kerf__task_mem_on(t, g);
                uint64_t mfree = g->mem_total - e.mem_res;
                total_free_mem += mfree;
                if (mfree > max_mem)
                        max_mem = mfree;
                if (mem > mfree || comp + e.comp_res > 100)
                        continue;
                if (!node_ok(s, t, g->d->node)) {
                        node_short = true;
                        continue;
                }
                uint64_t left = (mfree - mem) * 100 / g->mem_total + (100 - e.comp_res - comp);
                double score = 0;
                switch (s->pol.place) {
                case KERF_PLACE_FIRSTFIT:
                        best = (int)i;
                        goto found;
                case KERF_PLACE_BESTFIT:
                        if (best < 0 || left < best_left) {
                                best = (int)i;
                                best_left = left;
                        }
                        continue;
                case KERF_PLACE_KERF:
                default:
                        if (frag)
                                score =
                                    kerf__frag_share_delta(s, t, g, share_after(g, &e, comp, mem));
                        if (best < 0 || score < best_score - 1e-9 ||
                            (score < best_score + 1e-9 && left < best_left)) {
                                best = (int)i;
                                best_score = score;
                                best_left = left;
                        }
                        continue;
                }
        }
found:
        if (best < 0) {
                sdetail *x;
                if (!any_model) {
                        if ((x = kerf__detail(d, MSG_SHARE_NO_MODEL)))
                                x->a = route;
                        return KERF_WHY_NO_FIT;
                }
                if (node_short) {
                        kerf__detail(d, MSG_SHARE_NODE);
                        return KERF_WHY_NODE_RESOURCES;
                }
                uint64_t need = t->mem_permille ? 0 : t->mem_req;
                if (need && total_free_mem >= need && max_mem < need) {
                        if ((x = kerf__detail(d, MSG_SHARE_FRAGMENTED))) {
                                x->a = total_free_mem;
                                x->b = max_mem;
                        }
                        return KERF_WHY_FRAGMENTED;
                }
                if ((x = kerf__detail(d, MSG_SHARE_NO_FIT))) {
                        x->a = need;
                        x->b = comp;
                }
                return KERF_WHY_NO_FIT;
        }
        sgpu *g = &s->gpus[best];
        memset(plan, 0, sizeof(*plan));
        plan->route = route;
        plan->n = 1;
        plan->gpus[0] = (unsigned)best;
        plan->mem = kerf__task_mem_on(t, g);
        plan->compute = comp;
        plan->limit = route == KERF_UNIT_TSLICE ? 100 : (t->limit ? t->limit : comp);
        plan->switch_mode = KERF_GPU_MODE_FREE;
        if (g->mode == KERF_GPU_MODE_FREE || (s->whatif && g->mode != want))
                plan->switch_mode = want;
        charge_set(plan, g);
        return KERF_WHY_NONE;
}

/* ---- whole GPUs ----------------------------------------------------------------------------- */

static bool gpu_whole_ok(const kerf_sched *s, const stask *t, const sgpu *g)
{
        if (kerf__gpu_closed(g) || !model_ok(t, g) || (t->mem_req && t->mem_req > g->mem_total))
                return false;
        if (g->mode == KERF_GPU_MODE_FREE)
                return true;
        if (!s->whatif || g->mode == KERF_GPU_MODE_MIG)
                return false;
        for (const sunit *u = g->head; u; u = u->next)
                if (!u->task || !u->task->doomed)
                        return false;
        return true;
}

/* Picks n GPUs of node nd from the candidates, preferring NVLink cliques on one NUMA node.
 * Writes them to out and returns the topology penalty (0 = all joined, one NUMA node). */
static unsigned pick_topology(const kerf_sched *s, const unsigned *cand, unsigned nc, unsigned n,
                              unsigned *out)
{
        unsigned best_pen = UINT32_MAX;
        for (unsigned seed = 0; seed < nc; seed++) {
                unsigned sel[KERF_MAX_TASK_GPUS], ns = 0, pen = 0;
                bool used[KERF_MAX_NODE_GPUS] = {false};
                sel[ns++] = cand[seed];
                used[seed] = true;
                while (ns < n) {
                        int pick = -1;
                        unsigned pick_pen = UINT32_MAX;
                        for (unsigned j = 0; j < nc; j++) {
                                if (used[j])
                                        continue;
                                const kerf_gpu_desc *dj = s->gpus[cand[j]].d;
                                unsigned p = 0;
                                for (unsigned k = 0; k < ns; k++) {
                                        const kerf_gpu_desc *dk = s->gpus[sel[k]].d;
                                        if (!((dk->nvlink_peers >> dj->index) & 1))
                                                p += 2;
                                }
                                if (dj->numa != s->gpus[sel[0]].d->numa)
                                        p += 1;
                                if (p < pick_pen) {
                                        pick_pen = p;
                                        pick = (int)j;
                                }
                        }
                        used[pick] = true;
                        sel[ns++] = cand[pick];
                        pen += pick_pen;
                }
                if (pen < best_pen) {
                        best_pen = pen;
                        memcpy(out, sel, n * sizeof(*out));
                        if (pen == 0)
                                break;
                }
        }
        return best_pen;
}

static kerf_why place_whole(kerf_sched *s, stask *t, int only, splan *plan, sdetail *d)
{
        unsigned n = t->ngpus;
        int best_node = -1;
        unsigned best_sel[KERF_MAX_TASK_GPUS];
        double best_score = 0;
        unsigned best_pen = 0, best_free = 0;
        unsigned total_free = 0, max_node_free = 0;
        bool node_short = false;

        bool frag = s->pol.place == KERF_PLACE_KERF && only < 0 && s->only_node < 0;
        if (frag)
                kerf__frag_begin(s);
        for (size_t ni = 0; ni < s->fleet->n_nodes; ni++) {
                const kerf_node_desc *nd = &s->fleet->nodes[ni];
                unsigned cand[KERF_MAX_NODE_GPUS], nc = 0;
                if (s->only_node >= 0 && (size_t)s->only_node != ni)
                        continue;
                for (unsigned i = 0; i < nd->n_gpus && nc < KERF_MAX_NODE_GPUS; i++) {
                        unsigned gi = nd->first_gpu + i;
                        if (only >= 0 && (unsigned)only != gi)
                                continue;
                        if (gpu_whole_ok(s, t, &s->gpus[gi]))
                                cand[nc++] = gi;
                }
                total_free += nc;
                if (nc > max_node_free)
                        max_node_free = nc;
                if (nc < n)
                        continue;
                if (!node_ok(s, t, (unsigned)ni)) {
                        node_short = true;
                        continue;
                }
                unsigned sel[KERF_MAX_TASK_GPUS];
                unsigned pen = n > 1 ? pick_topology(s, cand, nc, n, sel) : 0;
                if (n == 1)
                        sel[0] = cand[0];
                double score = 0;
                if (s->pol.place == KERF_PLACE_FIRSTFIT) {
                        best_node = (int)ni;
                        memcpy(best_sel, sel, n * sizeof(*sel));
                        break;
                }
                if (frag)
                        score = kerf__frag_whole_delta(s, t, (unsigned)ni, sel, n);
                bool better;
                if (best_node < 0)
                        better = true;
                else if (pen != best_pen)
                        better = pen < best_pen;
                else if (s->pol.place == KERF_PLACE_KERF &&
                         (score < best_score - 1e-9 || score > best_score + 1e-9))
                        better = score < best_score;
                else
                        better = nc < best_free; /* best fit: the node with the fewest free GPUs */
                if (better) {
                        best_node = (int)ni;
                        best_pen = pen;
                        best_score = score;
                        best_free = nc;
                        memcpy(best_sel, sel, n * sizeof(*sel));
                }
        }
        if (best_node < 0) {
                sdetail *x;
                if (node_short) {
                        kerf__detail(d, MSG_WHOLE_NODE);
                        return KERF_WHY_NODE_RESOURCES;
                }
                if (total_free >= n && n > 1) {
                        if ((x = kerf__detail(d, MSG_WHOLE_FRAGMENTED))) {
                                x->a = total_free;
                                x->b = max_node_free;
                                x->c = n;
                        }
                        return KERF_WHY_FRAGMENTED;
                }
                if ((x = kerf__detail(d, MSG_WHOLE_NO_FIT))) {
                        x->a = n;
                        x->b = total_free;
                }
                return KERF_WHY_NO_FIT;
        }
        memset(plan, 0, sizeof(*plan));
        plan->route = KERF_UNIT_WHOLE;
        plan->n = n;
        memcpy(plan->gpus, best_sel, n * sizeof(*best_sel));
        plan->mem = s->gpus[best_sel[0]].mem_total;
        plan->compute = plan->limit = 100;
        plan->switch_mode = KERF_GPU_MODE_WHOLE;
        charge_set(plan, &s->gpus[best_sel[0]]);
        return KERF_WHY_NONE;
}

/* ---- MIG ------------------------------------------------------------------------------------ */

const kerf_mig_profile *kerf__mig_profile_for(const stask *t, const kerf_gpu_model *m)
{
        if (!kerf_gpu_model_has_mig(m))
                return NULL;
        if (t->mig_name[0])
                return kerf_mig_profile_by_name(m, t->mig_name);
        const kerf_mig_profile *best = NULL;
        uint64_t mem = t->mem_req;
        for (size_t i = 0; i < m->n_profiles; i++) {
                const kerf_mig_profile *p = &m->profiles[i];
                if (p->ofas > 0 && p->nvml_index == 0x7)
                        continue; /* +me only when asked for by name */
                if (t->mem_permille &&
                    p->mem_mib * KERF_MIB * 1000 < m->mem_bytes * t->mem_permille)
                        continue;
                if (mem && p->mem_mib * KERF_MIB < mem)
                        continue;
                if (p->compute_slices * 100 < t->compute * KERF_MIG_COMPUTE)
                        continue;
                if (!best || p->compute_slices < best->compute_slices ||
                    (p->compute_slices == best->compute_slices && p->mem_slices < best->mem_slices))
                        best = p;
        }
        return best;
}

/* READY, or held by a task a what-if counts as gone. */
static bool mig_idle(const kerf_sched *s, const sunit *u)
{
        return u->state == KERF_UNIT_READY ||
               (s->whatif && u->state == KERF_UNIT_ASSIGNED && u->task && u->task->doomed);
}

static unsigned prof_count(const sgpu *g, const kerf_mig_profile *p)
{
        unsigned c = 0;
        for (const sunit *u = g->head; u; u = u->next)
                if (u->kind == KERF_UNIT_MIG && u->prof->id == p->id)
                        c++;
        return c;
}

static kerf_why place_mig(kerf_sched *s, stask *t, int only, splan *plan, sdetail *d)
{
        sunit *reuse = NULL;
        int best = -1;
        unsigned best_start = 0, best_loss = 0, best_free = 0;
        const kerf_mig_profile *best_prof = NULL;
        bool any = false, node_short = false;

        if (t->mig_pin) { /* that instance or none: never another, never a new one */
                sunit *u = kerf_u64map_get(&s->units, t->mig_pin);
                memset(plan, 0, sizeof(*plan));
                plan->route = KERF_UNIT_MIG;
                plan->n = 1;
                if (!u || u->kind != KERF_UNIT_MIG || kerf__gpu_closed(&s->gpus[u->gpu]) ||
                    (only >= 0 && (unsigned)only != u->gpu) || !mig_idle(s, u)) {
                        sdetail *x = kerf__detail(d, MSG_MIG_PIN);
                        if (x) {
                                x->a = t->mig_pin;
                                x->b = u && u->kind == KERF_UNIT_MIG &&
                                               !kerf__gpu_closed(&s->gpus[u->gpu]) && u->task
                                           ? u->task->id
                                           : 0;
                        }
                        return KERF_WHY_NO_FIT;
                }
                if (!node_ok(s, t, s->gpus[u->gpu].d->node)) {
                        kerf__detail(d, MSG_MIG_NODE);
                        return KERF_WHY_NODE_RESOURCES;
                }
                plan->gpus[0] = u->gpu;
                plan->prof = u->prof;
                plan->reuse = u;
                plan->start = u->start;
                goto done;
        }
        for (size_t i = 0; i < s->n_gpus; i++) {
                sgpu *g = &s->gpus[i];
                if (only >= 0 && (size_t)only != i)
                        continue;
                if (kerf__gpu_closed(g) || g->mode != KERF_GPU_MODE_MIG || !model_ok(t, g))
                        continue;
                const kerf_mig_profile *p = kerf__mig_profile_for(t, g->d->model);
                if (!p)
                        continue;
                any = true;
                if (!node_ok(s, t, g->d->node)) {
                        node_short = true;
                        continue;
                }
                for (sunit *u = g->head; u; u = u->next)
                        if (u->kind == KERF_UNIT_MIG && mig_idle(s, u) && u->prof->id == p->id) {
                                reuse = u;
                                break;
                        }
                if (reuse) {
                        best = (int)i;
                        best_prof = p;
                        break;
                }
                unsigned counts[KERF_MIGFIT_PROFILES];
                kerf__mig_prof_counts(g, counts);
                size_t pi = (size_t)(p - g->d->model->profiles);
                if (pi >= KERF_MIGFIT_PROFILES || counts[pi] >= p->max_count ||
                    g->mig_compute + p->compute_slices > KERF_MIG_COMPUTE)
                        continue;
                const struct migfit *f = kerf__migfit_of(s, g->d->model);
                if (!f)
                        continue;
                uint8_t used = g->mig_mask | g->mig_plan_mask;
                unsigned nfree = KERF_MIG_SLICES - (unsigned)__builtin_popcount(used);
                unsigned before =
                    kerf__mig_layout_value(f, g->d->model, used, g->mig_compute, counts);
                counts[pi]++;
                /* small profiles: ties go to the highest start (the driver packs them from the
                 * top); large ones to the lowest */
                bool top = p->compute_slices <= 2 && s->pol.place != KERF_PLACE_FIRSTFIT;
                for (unsigned k = 0; k < KERF_MIG_SLICES; k++) {
                        unsigned st = top ? KERF_MIG_SLICES - 1 - k : k;
                        if (!kerf_mig_start_valid(p, st) || (used & kerf_mig_slice_mask(p, st)))
                                continue;
                        unsigned after = kerf__mig_layout_value(
                            f, g->d->model, used | kerf_mig_slice_mask(p, st),
                            g->mig_compute + p->compute_slices, counts);
                        unsigned loss = before > after ? before - after : 0;
                        bool better = best < 0;
                        if (!better && s->pol.place == KERF_PLACE_FIRSTFIT)
                                break;
                        if (!better && loss != best_loss)
                                better = loss < best_loss;
                        else if (!better)
                                better = nfree < best_free;
                        if (better) {
                                best = (int)i;
                                best_start = st;
                                best_loss = loss;
                                best_free = nfree;
                                best_prof = p;
                        }
                }
        }
        memset(plan, 0, sizeof(*plan));
        plan->route = KERF_UNIT_MIG;
        plan->n = 1;
        if (best >= 0) {
                plan->gpus[0] = (unsigned)best;
                plan->prof = best_prof;
                plan->reuse = reuse;
                plan->start = reuse ? reuse->start : best_start;
                goto done;
        }
        if (!any) {
                kerf__detail(d, MSG_MIG_NONE);
                return KERF_WHY_NO_FIT;
        }
        if (node_short) {
                kerf__detail(d, MSG_MIG_NODE);
                return KERF_WHY_NODE_RESOURCES;
        }
        /* reconfigure: destroy the fewest idle instances that free a valid placement */
        if (s->pol.mig_reconfigure) {
                unsigned best_nd = UINT32_MAX;
                for (size_t i = 0; i < s->n_gpus; i++) {
                        sgpu *g = &s->gpus[i];
                        if (only >= 0 && (size_t)only != i)
                                continue;
                        if (kerf__gpu_closed(g) || g->mode != KERF_GPU_MODE_MIG || !model_ok(t, g))
                                continue;
                        const kerf_mig_profile *p = kerf__mig_profile_for(t, g->d->model);
                        if (!p)
                                continue;
                        for (unsigned st = 0; st < KERF_MIG_SLICES; st++) {
                                if (!kerf_mig_start_valid(p, st))
                                        continue;
                                uint8_t mask = kerf_mig_slice_mask(p, st);
                                if (mask & g->mig_plan_mask)
                                        continue;
                                sunit *dv[KERF_MIG_SLICES];
                                unsigned nd = 0, freed_c = 0, same = 0;
                                bool ok = true;
                                for (sunit *u = g->head; u; u = u->next) {
                                        if (u->kind != KERF_UNIT_MIG)
                                                continue;
                                        if (!(kerf_mig_slice_mask(u->prof, u->start) & mask))
                                                continue;
                                        if (!mig_idle(s, u)) {
                                                ok = false;
                                                break;
                                        }
                                        dv[nd++] = u;
                                        freed_c += u->prof->compute_slices;
                                        same += u->prof->id == p->id;
                                }
                                if (!ok || nd == 0)
                                        continue;
                                if (g->mig_compute - freed_c + p->compute_slices >
                                        KERF_MIG_COMPUTE ||
                                    prof_count(g, p) - same >= p->max_count)
                                        continue;
                                if (nd < best_nd) {
                                        best_nd = nd;
                                        best = (int)i;
                                        best_start = st;
                                        best_prof = p;
                                        memcpy(plan->destroy, dv, nd * sizeof(*dv));
                                        plan->n_destroy = nd;
                                }
                        }
                }
                if (best >= 0) {
                        plan->gpus[0] = (unsigned)best;
                        plan->prof = best_prof;
                        plan->start = best_start;
                        goto done;
                }
        }
        sdetail *x = kerf__detail(d, MSG_MIG_FRAGMENTED);
        if (x)
                x->a = s->pol.mig_reconfigure;
        return KERF_WHY_FRAGMENTED;
done:
        plan->mem = plan->prof->mem_mib * KERF_MIB;
        plan->compute = plan->limit = plan->prof->compute_slices * 100 / KERF_MIG_COMPUTE;
        plan->switch_mode = KERF_GPU_MODE_FREE;
        charge_set(plan, &s->gpus[plan->gpus[0]]);
        return KERF_WHY_NONE;
}

/* ---- route dispatch -------------------------------------------------------------------------- */

kerf_why kerf__place_route(kerf_sched *s, stask *t, kerf_unit_kind route, int only, splan *plan,
                           sdetail *d)
{
        switch (route) {
        case KERF_UNIT_WHOLE:
                return place_whole(s, t, only, plan, d);
        case KERF_UNIT_MIG:
                return place_mig(s, t, only, plan, d);
        case KERF_UNIT_SLICE:
        case KERF_UNIT_MPS:
        case KERF_UNIT_TSLICE:
                if (t->ngpus > 1) {
                        kerf__detail(d, MSG_SHARE_MULTI);
                        return KERF_WHY_NO_FIT;
                }
                return place_share(s, t, route, only, plan, d);
        default:
                kerf__detail(d, MSG_UNKNOWN_ROUTE);
                return KERF_WHY_NO_FIT;
        }
}

/* The routes a task may take, in order. */
static unsigned task_routes(const kerf_sched *s, const stask *t, kerf_unit_kind *out)
{
        if (t->route_req >= 0) {
                out[0] = (kerf_unit_kind)t->route_req;
                return 1;
        }
        unsigned n = s->pol.n_routes[t->wl][t->tier];
        memcpy(out, s->pol.routes[t->wl][t->tier], n * sizeof(*out));
        return n;
}

kerf_why kerf__place(kerf_sched *s, stask *t, splan *plan, sdetail *d, kerf_explain *ex)
{
        kerf_unit_kind routes[KERF_UNIT_KIND_COUNT];
        unsigned n = task_routes(s, t, routes);
        kerf_why first = KERF_WHY_NO_FIT;
        sdetail rd;
        bool have_first = false;
        /* *d is defined on every return, a placement that fits included (MSG_NONE): explain
         * formats it whatever the outcome */
        kerf__detail(d, MSG_NONE);

        for (unsigned i = 0; i < n; i++) {
                if (ex) {
                        char buf[KERF_TEXT_LEN];
                        if (!kerf__route_possible(s, t, routes[i], buf, sizeof(buf))) {
                                ex->routes[ex->n_routes].route = routes[i];
                                ex->routes[ex->n_routes].code = KERF_WHY_NO_FIT;
                                snprintf(ex->routes[ex->n_routes].text, KERF_TEXT_LEN,
                                         "never: %.240s", buf);
                                ex->n_routes++;
                                continue;
                        }
                } else if (!kerf__route_possible(s, t, routes[i], NULL, 0)) {
                        continue;
                }
                kerf_why w = kerf__place_route(s, t, routes[i], -1, plan, &rd);
                if (w == KERF_WHY_NONE) {
                        bool borrow = false;
                        w = kerf__quota_check(s, t->tenant, plan->charge, &borrow, &rd);
                        if (w == KERF_WHY_NONE) {
                                plan->borrowing = borrow;
                                return KERF_WHY_NONE;
                        }
                }
                if (ex) {
                        ex->routes[ex->n_routes].route = routes[i];
                        ex->routes[ex->n_routes].code = w;
                        kerf__detail_format(s, &rd, ex->routes[ex->n_routes].text, KERF_TEXT_LEN);
                        ex->n_routes++;
                }
                if (w == KERF_WHY_COHORT && d)
                        d->any_cohort = true;
                if (!have_first) {
                        first = w;
                        if (d) {
                                bool ac = d->any_cohort;
                                *d = rd;
                                d->route = (uint8_t)routes[i];
                                d->any_cohort = ac;
                        }
                        have_first = true;
                }
        }
        if (!have_first)
                kerf__detail(d, MSG_NO_ROUTE);
        return first;
}

/* Could this route ever hold the task on this fleet, with everything else gone? */
bool kerf__route_possible(const kerf_sched *s, const stask *t, kerf_unit_kind route, char *text,
                          size_t len)
{
        uint64_t max_mem = 0;
        for (size_t ni = 0; ni < s->fleet->n_nodes; ni++) {
                const kerf_node_desc *nd = &s->fleet->nodes[ni];
                if ((nd->cpu_milli && t->cpu > nd->cpu_milli) ||
                    (nd->mem_bytes && t->hmem > nd->mem_bytes))
                        continue;
                unsigned ok = 0;
                for (unsigned i = 0; i < nd->n_gpus; i++) {
                        const sgpu *g = &s->gpus[nd->first_gpu + i];
                        if (!model_ok(t, g))
                                continue;
                        if (g->mem_total > max_mem)
                                max_mem = g->mem_total;
                        uint64_t mem = kerf__task_mem_on(t, g);
                        switch (route) {
                        case KERF_UNIT_WHOLE:
                                ok += mem <= g->mem_total;
                                break;
                        case KERF_UNIT_MIG:
                                ok += g->d->mig_enabled && kerf__mig_profile_for(t, g->d->model);
                                break;
                        default:
                                ok +=
                                    !g->d->mig_enabled && mem <= g->mem_total && t->compute <= 100;
                                break;
                        }
                }
                if (ok >= (route == KERF_UNIT_WHOLE ? t->ngpus : 1) &&
                    (route == KERF_UNIT_WHOLE || t->ngpus <= 1))
                        return true;
        }
        if (!text)
                return false;
        char x[KERF_UNITS_BUF], y[KERF_UNITS_BUF];
        if (route == KERF_UNIT_MIG)
                snprintf(text, len, "no MIG-enabled GPU has a profile with %s and %u%% compute%s",
                         kerf_format_size(t->mem_req, x, sizeof(x)), t->compute,
                         t->mig_name[0] ? " of that name" : "");
        else if (t->mem_req > max_mem)
                snprintf(text, len, "%s requested, the largest allowed GPU has %s",
                         kerf_format_size(t->mem_req, x, sizeof(x)),
                         kerf_format_size(max_mem, y, sizeof(y)));
        else if (route != KERF_UNIT_WHOLE && t->ngpus > 1)
                snprintf(text, len, "%s units are single-GPU; %u GPUs requested",
                         kerf_unit_kind_name(route), t->ngpus);
        else
                snprintf(text, len,
                         "no node has %u allowed GPU%s with the CPU and host memory asked",
                         t->ngpus, t->ngpus > 1 ? "s" : "");
        return false;
}
