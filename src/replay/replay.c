/* SPDX-License-Identifier: Apache-2.0 */
/* replay.c - the FGD (ATC'23) arrival experiment: pods drawn with a fixed seed keep arriving,
 * none leave, each policy places the same sequence; curves of allocation and fragmentation */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hold.h"
#include "kerf/errno.h"
#include "replay.h"

#define TENANT "replay"

void kerf_replay_opts_init(kerf_replay_opts *o)
{
        memset(o, 0, sizeof(*o));
        o->seed = 42;
        o->step_pct = 5;
        o->stop_pct = 100;
        o->n_policies = 3;
        o->policies[0] = KERF_PLACE_KERF;
        o->policies[1] = KERF_PLACE_BESTFIT;
        o->policies[2] = KERF_PLACE_FIRSTFIT;
}

const char *kerf_replay_policy_name(kerf_place_policy p)
{
        switch (p) {
        case KERF_PLACE_KERF:
                return "kerf";
        case KERF_PLACE_BESTFIT:
                return "bestfit";
        case KERF_PLACE_FIRSTFIT:
                return "firstfit";
        }
        return "?";
}

int kerf_replay_policy_parse(const char *s)
{
        if (!s)
                return -EINVAL;
        if (!strcasecmp(s, "kerf") || !strcasecmp(s, "fgd"))
                return KERF_PLACE_KERF;
        if (!strcasecmp(s, "bestfit") || !strcasecmp(s, "best-fit"))
                return KERF_PLACE_BESTFIT;
        if (!strcasecmp(s, "firstfit") || !strcasecmp(s, "first-fit"))
                return KERF_PLACE_FIRSTFIT;
        return -EINVAL;
}

int kerf_replay_pod_request(const kerf_replay_pod *p, const char *tenant, kerf_request *ret)
{
        if (!p || !tenant || !ret || p->num_gpu == 0 || p->gpu_milli == 0 || p->gpu_milli > 1000 ||
            p->num_gpu > KERF_MAX_TASK_GPUS || (p->num_gpu > 1 && p->gpu_milli != 1000))
                return -EINVAL;
        kerf_request r;
        kerf_request_init(&r);
        r.name = p->name;
        r.tenant = tenant;
        r.workload = KERF_WL_BATCH;
        r.preemptible = false;
        r.cpu_milli = p->cpu_milli;
        r.host_mem_bytes = p->mem_mib * KERF_MIB;
        r.model_mask = p->model_mask;
        if (p->gpu_milli < 1000) {
                r.route = KERF_UNIT_SLICE;
                r.gpus = 1;
                r.mem_permille = p->gpu_milli;
                r.compute_pct = p->gpu_milli / 10;
        } else {
                r.route = KERF_UNIT_WHOLE;
                r.gpus = p->num_gpu;
        }
        *ret = r;
        return 0;
}

/* ---- the FGD fragmentation measure ------------------------------------------------------- */

/* A task class of the target workload: pods with the same shape, and how often it occurs. */
typedef struct tclass {
        unsigned num_gpu, gpu_milli;
        uint64_t cpu, mem_mib, mask;
        double p;
} tclass;

static int class_cmp(const void *a, const void *b)
{
        const tclass *x = a, *y = b;
#define CMP(f)                                                                                     \
        if (x->f != y->f)                                                                          \
                return x->f < y->f ? -1 : 1;
        CMP(num_gpu)
        CMP(gpu_milli)
        CMP(cpu)
        CMP(mem_mib)
        CMP(mask)
#undef CMP
        return 0;
}

/* Distinct GPU pod shapes with their popularity (FGD's target workload). */
static int classes_build(const kerf_replay_pod *pods, size_t n, tclass **ret, size_t *ret_n)
{
        tclass *c = malloc((n ? n : 1) * sizeof(*c));
        if (!c)
                return -ENOMEM;
        size_t k = 0, total = 0;
        for (size_t i = 0; i < n; i++) {
                if (!pods[i].num_gpu)
                        continue;
                c[k++] = (tclass){pods[i].num_gpu, pods[i].gpu_milli,  pods[i].cpu_milli,
                                  pods[i].mem_mib, pods[i].model_mask, 1.0};
                total++;
        }
        qsort(c, k, sizeof(*c), class_cmp);
        size_t m = 0;
        for (size_t i = 0; i < k; i++) {
                if (m && class_cmp(&c[m - 1], &c[i]) == 0)
                        c[m - 1].p += 1.0;
                else
                        c[m++] = c[i];
        }
        for (size_t i = 0; i < m; i++)
                c[i].p /= (double)total;
        *ret = c;
        *ret_n = m;
        return 0;
}

/* The state one policy's run tracks outside the scheduler: node CPU/memory in use (the
 * scheduler keeps its own; these mirror it for the measure). */
typedef struct prun {
        kerf_sched *s;
        uint64_t *cpu_used, *mem_used; /* per node */
        uint64_t alloc, failed;        /* milli-GPUs */
        uint64_t placed, nfailed;
        kerf_replay_curve *curve;
        size_t cap_pts;
} prun;

/* Free milli-GPU of a GPU as a share-placing task sees it (0 for whole/MIG/faulted GPUs). */
static unsigned gpu_free_milli(const kerf_sched *s, unsigned gi)
{
        kerf_gpu_state g;
        if (kerf_sched_gpu_get(s, gi, &g) < 0 || g.faulted)
                return 0;
        if (g.mode == KERF_GPU_MODE_FREE)
                return 1000;
        if (g.mode != KERF_GPU_MODE_SHARED)
                return 0;
        unsigned c = g.compute_reserved >= 100 ? 0 : (100 - g.compute_reserved) * 10;
        unsigned m =
            g.mem_total ? (unsigned)((g.mem_total - g.mem_reserved) * 1000 / g.mem_total) : 0;
        return c < m ? c : m;
}

/* FGD's expected fragmentation, in milli-GPUs: for every node and task class m (weight p_m),
 * the node's free GPU capacity that m cannot use: all of it when m cannot run on the node
 * (model, CPU, host memory, too few fully free GPUs), otherwise the free capacity of the GPUs
 * that are individually too small for m. */
static double frag_measure(const kerf_fleet *f, const prun *r, const tclass *cls, size_t ncls)
{
        double total = 0;
        unsigned freev[KERF_MAX_NODE_GPUS];
        for (size_t ni = 0; ni < f->n_nodes; ni++) {
                const kerf_node_desc *nd = &f->nodes[ni];
                if (!nd->n_gpus)
                        continue;
                unsigned nfull = 0;
                uint64_t sum = 0;
                for (unsigned i = 0; i < nd->n_gpus; i++) {
                        freev[i] = gpu_free_milli(r->s, nd->first_gpu + i);
                        sum += freev[i];
                        nfull += freev[i] == 1000;
                }
                if (!sum)
                        continue;
                int mi = kerf_gpu_model_index(f->gpus[nd->first_gpu].model);
                uint64_t cpu_free = nd->cpu_milli ? nd->cpu_milli - r->cpu_used[ni] : UINT64_MAX;
                uint64_t mem_free =
                    nd->mem_bytes ? nd->mem_bytes / KERF_MIB - r->mem_used[ni] : UINT64_MAX;
                for (size_t c = 0; c < ncls; c++) {
                        const tclass *k = &cls[c];
                        double fr;
                        bool model_ok = !k->mask || (mi >= 0 && mi < 64 && (k->mask >> mi) & 1);
                        if (!model_ok || k->cpu > cpu_free || k->mem_mib > mem_free ||
                            (k->gpu_milli == 1000 && nfull < k->num_gpu)) {
                                fr = (double)sum;
                        } else {
                                uint64_t small = 0;
                                for (unsigned i = 0; i < nd->n_gpus; i++)
                                        if (freev[i] < k->gpu_milli)
                                                small += freev[i];
                                fr = (double)small;
                        }
                        total += k->p * fr;
                }
        }
        return total;
}

static int point_add(prun *r, const kerf_fleet *f, const tclass *cls, size_t ncls, uint64_t cap,
                     uint64_t arrived, uint64_t n_arrived)
{
        kerf_replay_curve *c = r->curve;
        if (c->n_pts == r->cap_pts) {
                size_t nc = r->cap_pts ? r->cap_pts * 2 : 32;
                kerf_replay_point *np = realloc(c->pts, nc * sizeof(*np));
                if (!np)
                        return -ENOMEM;
                c->pts = np;
                r->cap_pts = nc;
        }
        kerf_replay_point *p = &c->pts[c->n_pts++];
        double k = 100.0 / (double)cap;
        p->arrived_pct = (double)arrived * k;
        p->alloc_pct = (double)r->alloc * k;
        p->unalloc_pct = 100.0 - p->alloc_pct;
        p->failed_pct = (double)r->failed * k;
        p->frag_pct = frag_measure(f, r, cls, ncls) * k;
        p->arrived = n_arrived;
        p->placed = r->placed;
        p->failed = r->nfailed;
        return 0;
}

/* Submits pod `p` to one policy's scheduler and places it at once, or records the failure. */
static int arrive(prun *r, const kerf_fleet *f, const kerf_replay_pod *p, uint64_t cap,
                  uint64_t arrived_before)
{
        kerf_request req;
        uint64_t id = 0;
        int rc = kerf_replay_pod_request(p, TENANT, &req);
        if (rc < 0)
                return rc;
        rc = kerf_sched_submit(r->s, &req, &id, NULL);
        bool placed = false;
        if (rc == 0) {
                kerf_decision dec[8];
                int n;
                while ((n = kerf_sched_step(r->s, dec, 8)) == 8)
                        ;
                if (n < 0)
                        return n;
                kerf_task_info ti;
                rc = kerf_sched_task_get(r->s, id, &ti);
                if (rc < 0)
                        return rc;
                placed = ti.state == KERF_TASK_RUNNING;
                if (placed) {
                        unsigned node = f->gpus[ti.gpus[0]].node;
                        r->cpu_used[node] += p->cpu_milli;
                        r->mem_used[node] += p->mem_mib;
                } else if ((rc = kerf_sched_cancel(r->s, id)) < 0) {
                        return rc;
                }
        } else if (rc != -KERF_ENEVER) {
                return rc;
        }
        uint64_t d = kerf_replay_pod_demand(p);
        if (placed) {
                r->alloc += d;
                r->placed++;
        } else {
                if (r->nfailed == 0) {
                        r->curve->first_fail_arrived_pct = (double)arrived_before * 100.0 / cap;
                        r->curve->first_fail_unalloc_pct = 100.0 - (double)r->alloc * 100.0 / cap;
                }
                r->failed += d;
                r->nfailed++;
        }
        return 0;
}

/* A pod without GPUs: onto the node with the least free CPU that holds it (then least free
 * memory, then fleet order), the same rule for every policy; its CPU and memory are held in the
 * scheduler so that GPU tasks see what is left. */
static int arrive_cpu(prun *r, const kerf_fleet *f, const kerf_replay_pod *p)
{
        size_t best = SIZE_MAX;
        uint64_t best_cpu = 0, best_mem = 0;
        for (size_t n = 0; n < f->n_nodes; n++) {
                const kerf_node_desc *nd = &f->nodes[n];
                uint64_t cpu = nd->cpu_milli ? nd->cpu_milli - r->cpu_used[n] : UINT64_MAX;
                uint64_t mem =
                    nd->mem_bytes ? nd->mem_bytes / KERF_MIB - r->mem_used[n] : UINT64_MAX;
                if (cpu < p->cpu_milli || mem < p->mem_mib)
                        continue;
                if (best == SIZE_MAX || cpu < best_cpu || (cpu == best_cpu && mem < best_mem)) {
                        best = n;
                        best_cpu = cpu;
                        best_mem = mem;
                }
        }
        if (best == SIZE_MAX) {
                r->curve->cpu_failed++;
                return 0;
        }
        int rc = kerf__sched_node_hold(r->s, (unsigned)best, p->cpu_milli, p->mem_mib * KERF_MIB);
        if (rc < 0)
                return rc;
        r->cpu_used[best] += p->cpu_milli;
        r->mem_used[best] += p->mem_mib;
        r->curve->cpu_placed++;
        return 0;
}

/* splitmix64: small, fast, and the same everywhere */
static uint64_t rng_next(uint64_t *x)
{
        uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
}

void kerf_replay_result_fini(kerf_replay_result *r)
{
        if (!r)
                return;
        for (size_t i = 0; i < r->n_curves; i++)
                free(r->curves[i].pts);
        memset(r, 0, sizeof(*r));
}

int kerf_replay_run(const kerf_fleet *fleet, const kerf_replay_pod *pods, size_t n_pods,
                    const kerf_replay_opts *opts, kerf_replay_result *ret)
{
        if (!fleet || !pods || !opts || !ret || opts->n_policies == 0 ||
            opts->n_policies > KERF_REPLAY_MAX_POLICIES || opts->step_pct == 0 ||
            opts->stop_pct == 0 || fleet->n_gpus == 0)
                return -EINVAL;
        size_t *pool = malloc(n_pods * sizeof(*pool) + 1);
        tclass *cls = NULL;
        size_t ncls = 0, ngp = 0, npool = 0;
        prun runs[KERF_REPLAY_MAX_POLICIES];
        kerf_replay_result res;
        int rc = 0;
        memset(runs, 0, sizeof(runs));
        memset(&res, 0, sizeof(res));
        if (!pool)
                return -ENOMEM;
        for (size_t i = 0; i < n_pods; i++)
                if (pods[i].num_gpu || opts->cpu_pods)
                        pool[npool++] = i;
        for (size_t i = 0; i < npool; i++)
                ngp += pods[pool[i]].num_gpu != 0;
        if (ngp == 0) {
                rc = -EINVAL;
                goto out;
        }
        if ((rc = classes_build(pods, n_pods, &cls, &ncls)) < 0)
                goto out;
        res.capacity_milli = (uint64_t)fleet->n_gpus * 1000;
        res.n_gpu_pods = ngp;
        res.n_cpu_pods = npool - ngp;
        res.n_curves = opts->n_policies;
        for (unsigned i = 0; i < opts->n_policies; i++) {
                kerf_policy pol;
                kerf_tenant_spec ts;
                kerf_policy_default(&pol);
                pol.place = opts->policies[i];
                pol.preemption = false; /* FGD: nothing leaves, nothing is evicted */
                res.curves[i].policy = pol.place;
                res.curves[i].first_fail_arrived_pct = -1;
                res.curves[i].first_fail_unalloc_pct = -1;
                runs[i].curve = &res.curves[i];
                runs[i].cpu_used = calloc(fleet->n_nodes, sizeof(uint64_t));
                runs[i].mem_used = calloc(fleet->n_nodes, sizeof(uint64_t));
                if (!runs[i].cpu_used || !runs[i].mem_used) {
                        rc = -ENOMEM;
                        goto out;
                }
                if ((rc = kerf_sched_new(fleet, &pol, &runs[i].s)) < 0)
                        goto out;
                kerf_tenant_spec_init(&ts, TENANT);
                if ((rc = kerf_sched_tenant_set(runs[i].s, &ts)) < 0)
                        goto out;
        }
        uint64_t cap = res.capacity_milli;
        uint64_t stop = cap * opts->stop_pct / 100, step = cap * opts->step_pct / 100;
        uint64_t arrived = 0, n_arrived = 0, next_pt = step ? step : 1, seed = opts->seed;
        for (unsigned i = 0; i < opts->n_policies; i++)
                if ((rc = point_add(&runs[i], fleet, cls, ncls, cap, 0, 0)) < 0)
                        goto out;
        while (arrived < stop) {
                const kerf_replay_pod *p = &pods[pool[rng_next(&seed) % npool]];
                if (!p->num_gpu) {
                        for (unsigned i = 0; i < opts->n_policies; i++)
                                if ((rc = arrive_cpu(&runs[i], fleet, p)) < 0)
                                        goto out;
                        continue;
                }
                for (unsigned i = 0; i < opts->n_policies; i++)
                        if ((rc = arrive(&runs[i], fleet, p, cap, arrived)) < 0)
                                goto out;
                arrived += kerf_replay_pod_demand(p);
                n_arrived++;
                bool last = arrived >= stop;
                if (arrived >= next_pt || last) {
                        while (next_pt <= arrived)
                                next_pt += step ? step : 1;
                        for (unsigned i = 0; i < opts->n_policies; i++)
                                if ((rc = point_add(&runs[i], fleet, cls, ncls, cap, arrived,
                                                    n_arrived)) < 0)
                                        goto out;
                }
        }
        *ret = res;
        memset(&res, 0, sizeof(res));
out:
        for (unsigned i = 0; i < KERF_REPLAY_MAX_POLICIES; i++) {
                kerf_sched_free(runs[i].s);
                free(runs[i].cpu_used);
                free(runs[i].mem_used);
        }
        kerf_replay_result_fini(&res);
        free(cls);
        free(pool);
        return rc;
}
