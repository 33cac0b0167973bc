/* SPDX-License-Identifier: Apache-2.0 */
/* frag.c - the fragmentation score of the KERF placement policy, after FGD (Weng et al.,
 * USENIX ATC'23, "Beware of Fragmentation").
 *
 * The target workload is a bounded table of request classes (GPU count, per-GPU need, allowed
 * models, node CPU and host memory, the last two bucketed) with a decayed popularity p_m
 * learned from submitted requests. The fragment of node n for class m, F_n(m), is the free GPU
 * capacity of n that m cannot use: all of it when m cannot run on n at all (CPU, host memory,
 * fewer usable GPUs than it needs), otherwise the free capacity of GPUs that are too small for
 * m or of a model m may not use. A placement is scored by the change of sum_m p_m F_n(m) on the
 * node it touches; lower is better. Two extensions beyond FGD, both measured on the openb trace
 * (docs/PERFORMANCE.md, c):
 * - CPU and host memory bound the usable capacity: m can use at most q * need_m GPU, q being the
 *   instances of m the node's free CPU and memory still hold; this steers CPU-heavy tasks to
 *   CPU-rich nodes before CPU-poor nodes strand their GPUs;
 * - scarcity: p_m is scaled by (free capacity of the fleet / free capacity of the models m may
 *   use)^2, so that model-restricted classes whose models are contested weigh more, and
 *   flexible tasks stay off the models few restricted classes depend on; for a multi-GPU class
 *   the capacity it may use is the fully free GPUs on nodes that hold at least its GPU count
 *   (a look-ahead: the last nodes that can still host an 8-GPU task are kept for it).
 *
 * Per node, a cache keeps the free capacity of each GPU and, per class, the free capacity m
 * cannot use ("small") and the number of GPUs m can use ("cnt"), so scoring one candidate is
 * O(classes). The cache is checked against the GPUs' current free capacity on every use, so it
 * needs no hooks where units change, and holds in what-if mode too. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define NEED_NEVER 1001 /* a per-GPU need no GPU meets */

typedef struct fnode {
        bool valid;
        unsigned ng;
        uint32_t sum; /* free milli-GPUs on the node */
        uint16_t freev[KERF_MAX_NODE_GPUS];
        uint32_t stamp[KERF_NCLS]; /* class stamp the entries below were computed for */
        uint32_t small[KERF_NCLS];
        uint8_t cnt[KERF_NCLS];
} fnode;

/* Quarter-octave bucket of a positive value (0 stays 0). */
static unsigned bucket(uint64_t v)
{
        if (v < 4)
                return (unsigned)v;
        unsigned msb = 63u - (unsigned)__builtin_clzll(v);
        return (msb << 2) | (unsigned)((v >> (msb - 2)) & 3);
}

void kerf__class_note(kerf_sched *s, const stask *t, bool whole)
{
        sclass k;
        memset(&k, 0, sizeof(k));
        k.ngpus = t->ngpus ? t->ngpus : 1;
        if (whole || k.ngpus > 1) {
                k.compute = 100;
                k.permille = 1000;
        } else {
                k.compute = t->compute;
                k.permille = t->mem_permille;
                k.mem = t->mem_permille ? 0 : t->mem_req;
        }
        k.mask = t->model_mask;
        k.cpu_b = bucket(t->cpu);
        k.hmem_b = bucket(t->hmem);

        /* exponential decay keeps the estimate of the target workload recent */
        int hit = -1, low = -1;
        for (unsigned i = 0; i < s->n_cls; i++) {
                sclass *c = &s->cls[i];
                c->w *= 0.999;
                if (c->ngpus == k.ngpus && c->compute == k.compute && c->permille == k.permille &&
                    c->mem == k.mem && c->mask == k.mask && c->cpu_b == k.cpu_b &&
                    c->hmem_b == k.hmem_b)
                        hit = (int)i;
                if (low < 0 || c->w < s->cls[low].w)
                        low = (int)i;
        }
        if (hit < 0) {
                if (s->n_cls < KERF_NCLS)
                        hit = (int)s->n_cls++;
                else
                        hit = low;                /* the least popular class gives way */
                if (s->cls_stamp == UINT32_MAX) { /* wrapped: every cached entry is stale */
                        for (unsigned i = 0; i < s->n_cls; i++)
                                s->cls[i].stamp = i + 1;
                        s->cls_stamp = s->n_cls;
                        for (size_t n = 0; s->fnodes && n < s->fleet->n_nodes; n++)
                                s->fnodes[n].valid = false;
                }
                k.stamp = ++s->cls_stamp;
                s->cls[hit] = k;
        }
        sclass *c = &s->cls[hit];
        /* the class needs what its largest member needs (conservative within a bucket) */
        if (t->cpu > c->cpu || t->hmem > c->hmem) {
                c->cpu = t->cpu > c->cpu ? t->cpu : c->cpu;
                c->hmem = t->hmem > c->hmem ? t->hmem : c->hmem;
        }
        c->w += 1.0;
}

void kerf__frag_free(kerf_sched *s)
{
        free(s->fnodes);
        s->fnodes = NULL;
}

/* Free capacity of a GPU in milli-GPUs as a share sees it: the scarcer of compute and memory
 * (0 for whole, MIG or faulted GPUs). Units of doomed tasks count as gone in what-if mode. */
unsigned kerf__gpu_free_milli(const kerf_sched *s, const sgpu *g)
{
        if (kerf__gpu_closed(g) || g->mode == KERF_GPU_MODE_MIG)
                return 0;
        kerf_gpu_mode mode = g->mode;
        uint64_t mem_res = g->mem_res;
        unsigned comp_res = g->comp_res;
        if (s->whatif && mode != KERF_GPU_MODE_FREE) {
                unsigned left = 0;
                for (const sunit *u = g->head; u; u = u->next) {
                        if (u->task && u->task->doomed) {
                                mem_res -= u->mem;
                                comp_res -= u->compute;
                        } else {
                                left++;
                        }
                }
                if (left == 0)
                        mode = KERF_GPU_MODE_FREE;
        }
        switch (mode) {
        case KERF_GPU_MODE_FREE:
                return 1000;
        case KERF_GPU_MODE_SHARED:
        case KERF_GPU_MODE_MPS: {
                unsigned c = comp_res >= 100 ? 0 : (100 - comp_res) * 10;
                unsigned m = g->mem_total && mem_res < g->mem_total
                                 ? (unsigned)((g->mem_total - mem_res) * 1000 / g->mem_total)
                                 : 0;
                return c < m ? c : m;
        }
        default:
                return 0;
        }
}

/* The free milli-GPUs class c needs on GPU g (NEED_NEVER when g is of a model c may not use
 * or too small). */
static unsigned class_need(const sclass *c, const sgpu *g)
{
        if (c->mask) {
                int mi = kerf_gpu_model_index(g->d->model);
                if (mi < 0 || mi >= 64 || !((c->mask >> mi) & 1))
                        return NEED_NEVER;
        }
        uint64_t need = (uint64_t)c->compute * 10;
        uint64_t m = c->permille;
        if (!m && c->mem)
                m = g->mem_total ? (c->mem * 1000 + g->mem_total - 1) / g->mem_total : NEED_NEVER;
        if (m > need)
                need = m;
        if (need == 0)
                need = 1;
        return need > 1000 ? NEED_NEVER : (unsigned)need;
}

static void class_fill(const kerf_sched *s, const kerf_node_desc *nd, fnode *f, unsigned m)
{
        const sclass *c = &s->cls[m];
        uint32_t small = 0;
        unsigned cnt = 0;
        for (unsigned i = 0; i < f->ng; i++) {
                unsigned need = class_need(c, &s->gpus[nd->first_gpu + i]);
                if (f->freev[i] < need)
                        small += f->freev[i];
                else
                        cnt++;
        }
        f->small[m] = small;
        f->cnt[m] = (uint8_t)(cnt > 255 ? 255 : cnt);
        f->stamp[m] = c->stamp;
}

/* The node's cache entry, brought up to date; NULL when out of memory. */
static fnode *node_get(kerf_sched *s, unsigned n)
{
        if (!s->fnodes) {
                s->fnodes = calloc(s->fleet->n_nodes ? s->fleet->n_nodes : 1, sizeof(fnode));
                if (!s->fnodes)
                        return NULL;
        }
        const kerf_node_desc *nd = &s->fleet->nodes[n];
        fnode *f = &s->fnodes[n];
        uint16_t freev[KERF_MAX_NODE_GPUS];
        uint32_t sum = 0;
        unsigned ng = nd->n_gpus < KERF_MAX_NODE_GPUS ? nd->n_gpus : KERF_MAX_NODE_GPUS;
        for (unsigned i = 0; i < ng; i++) {
                freev[i] = (uint16_t)kerf__gpu_free_milli(s, &s->gpus[nd->first_gpu + i]);
                sum += freev[i];
        }
        if (!f->valid || f->ng != ng || memcmp(f->freev, freev, ng * sizeof(*freev)) != 0) {
                f->valid = true;
                f->ng = ng;
                f->sum = sum;
                memcpy(f->freev, freev, ng * sizeof(*freev));
                memset(f->stamp, 0, sizeof(f->stamp));
        }
        for (unsigned m = 0; m < s->n_cls; m++)
                if (f->stamp[m] != s->cls[m].stamp)
                        class_fill(s, nd, f, m);
        return f;
}

/* F_n(m): the free capacity of a node that class c cannot use. FGD's measure (all of it when
 * c cannot run there, otherwise what lies on GPUs too small for c), extended by the node's CPU
 * and host memory: c can use at most as much GPU as the instances of c that the node's CPU and
 * memory can still hold; the rest of the usable capacity is fragmented for it too. */
static int64_t frag_of(const sclass *c, int64_t small, int cnt, int64_t sum, uint64_t cpu,
                       uint64_t mem, unsigned need)
{
        if (cnt < (int)c->ngpus || cpu < c->cpu || mem < c->hmem)
                return sum;
        int64_t usable = sum - small;
        double q = 1e18; /* instances of c the node's CPU and memory still hold */
        if (c->cpu && cpu != UINT64_MAX)
                q = (double)cpu / (double)c->cpu;
        if (c->hmem && mem != UINT64_MAX && (double)mem / (double)c->hmem < q)
                q = (double)mem / (double)c->hmem;
        double capv = q * c->ngpus * (need > 1000 ? 1000 : need);
        if (capv < (double)usable)
                usable = (int64_t)capv;
        return sum - usable;
}

/* Per-decision weights: p_m scaled by how contested class m's supply is, the free capacity of
 * the fleet over the free capacity of the models m may use (1 for classes that may use any). */
void kerf__frag_begin(kerf_sched *s)
{
        double by_model[64] = {0}, total = 0;
        /* full[k][mi]: fully free GPUs of model mi on nodes that hold at least k of them */
        double full[KERF_MAX_TASK_GPUS + 1][64];
        bool multi = false;
        for (unsigned m = 0; m < s->n_cls; m++)
                multi |= s->cls[m].ngpus > 1 && s->cls[m].ngpus <= KERF_MAX_TASK_GPUS;
        if (multi)
                memset(full, 0, sizeof(full));
        for (size_t n = 0; n < s->fleet->n_nodes; n++) {
                const kerf_node_desc *nd = &s->fleet->nodes[n];
                int cur = -1;
                unsigned nfull = 0;
                for (unsigned i = 0; i <= nd->n_gpus; i++) {
                        const sgpu *g = i < nd->n_gpus ? &s->gpus[nd->first_gpu + i] : NULL;
                        int mi = g ? kerf_gpu_model_index(g->d->model) : -2;
                        if (multi && mi != cur) { /* a run of GPUs of one model ends */
                                if (cur >= 0 && cur < 64)
                                        for (unsigned k = 2; k <= nfull && k <= KERF_MAX_TASK_GPUS;
                                             k++)
                                                full[k][cur] += nfull;
                                cur = mi;
                                nfull = 0;
                        }
                        if (!g)
                                break;
                        unsigned f = kerf__gpu_free_milli(s, g);
                        if (!f)
                                continue;
                        nfull += f == 1000;
                        if (mi >= 0 && mi < 64)
                                by_model[mi] += f;
                        total += f;
                }
        }
        for (unsigned m = 0; m < s->n_cls; m++) {
                sclass *c = &s->cls[m];
                c->we = c->w;
                /* multi-GPU classes: their supply is the full GPUs on nodes that hold enough */
                bool whole_multi = c->ngpus > 1 && c->ngpus <= KERF_MAX_TASK_GPUS;
                if (!c->mask && !whole_multi)
                        continue;
                double u = 0;
                for (unsigned mi = 0; mi < 64; mi++)
                        if (!c->mask || ((c->mask >> mi) & 1))
                                u += whole_multi ? full[c->ngpus][mi] * 1000 : by_model[mi];
                /* nothing left for it: every node is all fragment for it, a constant */
                double r = u > 0 ? total / u : 1;
                if (r > 64) /* keeps the other terms within double precision */
                        r = 64;
                c->we = c->w * r * r;
        }
}

static uint64_t sub_sat(uint64_t a, uint64_t b)
{
        return a == UINT64_MAX ? a : a > b ? a - b : 0;
}

/* Score change when the GPUs gi[0..n) of node `node` go from their current free capacity to
 * after[0..n) and the node gives task t its CPU and host memory. */
static double delta(kerf_sched *s, const stask *t, unsigned node, const unsigned *gi,
                    const unsigned *after, unsigned n)
{
        fnode *f = node_get(s, node);
        if (!f)
                return 0;
        const kerf_node_desc *nd = &s->fleet->nodes[node];
        const snode *sn = &s->nodes[node];
        uint64_t cpu_a = sub_sat(sn->cpu_free, t->cpu), mem_a = sub_sat(sn->mem_free, t->hmem);
        unsigned before[KERF_MAX_TASK_GPUS];
        int64_t sum_a = f->sum;
        for (unsigned j = 0; j < n; j++) {
                before[j] = f->freev[gi[j] - nd->first_gpu];
                sum_a += (int64_t)after[j] - (int64_t)before[j];
        }
        double d = 0;
        for (unsigned m = 0; m < s->n_cls; m++) {
                const sclass *c = &s->cls[m];
                int64_t small = f->small[m];
                int cnt = f->cnt[m];
                for (unsigned j = 0; j < n; j++) {
                        unsigned need = class_need(c, &s->gpus[gi[j]]);
                        if (before[j] < need)
                                small -= before[j];
                        else
                                cnt--;
                        if (after[j] < need)
                                small += after[j];
                        else
                                cnt++;
                }
                unsigned need = class_need(c, &s->gpus[gi[0]]);
                int64_t fb =
                    frag_of(c, f->small[m], f->cnt[m], f->sum, sn->cpu_free, sn->mem_free, need);
                int64_t fa = frag_of(c, small, cnt, sum_a, cpu_a, mem_a, need);
                d += c->we * (double)(fa - fb);
        }
        return d;
}

double kerf__frag_share_delta(kerf_sched *s, const stask *t, const sgpu *g, unsigned after)
{
        unsigned gi = g->idx;
        return delta(s, t, g->d->node, &gi, &after, 1);
}

double kerf__frag_whole_delta(kerf_sched *s, const stask *t, unsigned node, const unsigned *sel,
                              unsigned n)
{
        unsigned after[KERF_MAX_TASK_GPUS] = {0};
        return delta(s, t, node, sel, after, n);
}
