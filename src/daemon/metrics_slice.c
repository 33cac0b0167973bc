/* SPDX-License-Identifier: Apache-2.0 */
/* metrics_slice.c - /metrics series of software slices (docs/METRICS.md "Software slices"):
 * usage against the grant per task, summed per tenant and per GPU, and node counters */
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "kerf/slice_abi.h"

/* What one region says, in the units the series use. */
typedef struct susage {
        double mem_used, mem_peak, mem_limit, compute_used, compute_allowed, throttled_s;
        double denied, held;
} susage;

enum {
        S_MEM_USED,
        S_MEM_PEAK,
        S_MEM_LIMIT,
        S_CU_USED,
        S_CU_ALLOWED,
        S_THROTTLED,
        S_DENIED,
        S_HELD,
        S_COUNT
};

static const struct {
        const char *name, *type, *help;
} SERIES[S_COUNT] = {
    [S_MEM_USED] = {"memory_used_bytes", "gauge", "GPU memory charged by the shim now."},
    [S_MEM_PEAK] = {"memory_peak_bytes", "gauge", "Highest GPU memory charged by the shim."},
    [S_MEM_LIMIT] = {"memory_cap_bytes", "gauge", "GPU memory cap of the slice region."},
    [S_CU_USED] = {"compute_used_percent", "gauge",
                   "GPU time used over the last sample interval (about 1 s), percent of one GPU."},
    [S_CU_ALLOWED] = {"compute_allowed_percent", "gauge",
                      "Compute share the controller allows now (compute_pct..limit)."},
    [S_THROTTLED] = {"throttled_seconds_total", "counter", "Time the shim held launches back."},
    [S_DENIED] = {"memory_denied_total", "counter", "Allocations the memory cap refused."},
    [S_HELD] = {"held_launches_total", "counter",
                "Launches that waited (compute credit, suspend, yield)."},
};

static double sget(const susage *u, int k)
{
        const double v[S_COUNT] = {
            u->mem_used,        u->mem_peak,    u->mem_limit, u->compute_used,
            u->compute_allowed, u->throttled_s, u->denied,    u->held};
        return v[k];
}

static void sadd(susage *a, const susage *b)
{
        a->mem_used += b->mem_used;
        a->mem_peak += b->mem_peak;
        a->mem_limit += b->mem_limit;
        a->compute_used += b->compute_used;
        a->compute_allowed += b->compute_allowed;
        a->throttled_s += b->throttled_s;
        a->denied += b->denied;
        a->held += b->held;
}

static bool read_usage(const dtask *t, susage *u)
{
        const struct kerf_slice_region *r = t->region;
        if (!r)
                return false;
        u->mem_used = (double)atomic_load(&r->memory_charged);
        u->mem_peak = (double)atomic_load(&r->memory_peak);
        u->mem_limit = (double)atomic_load(&r->limits.memory_limit);
        u->compute_used = t->compute_used_pct;
        u->compute_allowed = atomic_load(&r->limits.compute_allowed_pct);
        u->throttled_s = (double)atomic_load(&r->throttled_ns) / 1e9;
        u->denied = (double)atomic_load(&r->memory_denied);
        u->held = (double)atomic_load(&r->held_launches);
        return true;
}

static bool visible(const kreq *r, const dtask *t)
{
        return r->admin || !strcmp(t->rec.tenant, r->tenant);
}

static dtask *nth_live(kerfd_node *n, size_t i)
{
        if (n->live.keys[i] == 0 || n->live.keys[i] == UINT64_MAX)
                return NULL;
        return n->live.vals[i];
}

void kerfd__metrics_slices(FILE *f, kreq *r)
{
        kerfd_node *n = r->node;
        static susage gpu[KERF_MAX_NODE_GPUS];
        static bool gpu_has[KERF_MAX_NODE_GPUS];

        /* per task */
        for (int k = 0; k < S_COUNT; k++) {
                fprintf(f, "# HELP kerf_slice_%s %s\n# TYPE kerf_slice_%s %s\n", SERIES[k].name,
                        SERIES[k].help, SERIES[k].name, SERIES[k].type);
                for (size_t i = 0; i < n->live.cap; i++) {
                        dtask *t = nth_live(n, i);
                        susage u;
                        const char *enf;
                        if (!t || !visible(r, t) || !read_usage(t, &u))
                                continue;
                        enf = kerfd__enforcement(t);
                        fprintf(f,
                                "kerf_slice_%s{task=\"%llu\",tenant=\"%s\",enforcement=\"%s\"} "
                                "%.3f\n",
                                SERIES[k].name, (unsigned long long)t->rec.id, t->rec.tenant,
                                enf ? enf : "none", sget(&u, k));
                }
        }
        /* per tenant */
        for (int k = 0; k < S_COUNT; k++) {
                fprintf(f, "# HELP kerf_tenant_slice_%s %s (sum over the tenant's slices)\n",
                        SERIES[k].name, SERIES[k].help);
                fprintf(f, "# TYPE kerf_tenant_slice_%s %s\n", SERIES[k].name, SERIES[k].type);
                for (unsigned ti = 0; ti < n->n_tenants; ti++) {
                        const char *name = n->tenants[ti].cfg.name;
                        susage sum = {0};
                        if (!r->admin && strcmp(name, r->tenant) != 0)
                                continue;
                        for (size_t i = 0; i < n->live.cap; i++) {
                                dtask *t = nth_live(n, i);
                                susage u;
                                if (t && !strcmp(t->rec.tenant, name) && read_usage(t, &u))
                                        sadd(&sum, &u);
                        }
                        fprintf(f, "kerf_tenant_slice_%s{tenant=\"%s\"} %.3f\n", SERIES[k].name,
                                name, sget(&sum, k));
                }
        }
        if (!r->admin)
                return;
        /* per GPU (admin: it sums every tenant's slices) */
        memset(gpu, 0, sizeof(gpu));
        memset(gpu_has, 0, sizeof(gpu_has));
        for (size_t i = 0; i < n->live.cap; i++) {
                dtask *t = nth_live(n, i);
                susage u;
                unsigned g;
                if (!t || !read_usage(t, &u))
                        continue;
                g = t->preempt_frozen ? t->preempt_gpu : t->n_units ? t->units[0].gpu : 0;
                if (g < KERF_MAX_NODE_GPUS) {
                        sadd(&gpu[g], &u);
                        gpu_has[g] = true;
                }
        }
        for (int k = 0; k < S_COUNT; k++) {
                fprintf(f, "# HELP kerf_gpu_slice_%s %s (sum over the GPU's slices)\n",
                        SERIES[k].name, SERIES[k].help);
                fprintf(f, "# TYPE kerf_gpu_slice_%s %s\n", SERIES[k].name, SERIES[k].type);
                for (size_t g = 0; g < n->fleet->n_gpus && g < KERF_MAX_NODE_GPUS; g++)
                        fprintf(f, "kerf_gpu_slice_%s{gpu=\"%zu\",uuid=\"%s\"} %.3f\n",
                                SERIES[k].name, g, n->fleet->gpus[g].uuid,
                                gpu_has[g] ? sget(&gpu[g], k) : 0.0);
        }
        fprintf(f,
                "# HELP kerf_shim_present 1 when the shim was found at kerfd's start.\n"
                "# TYPE kerf_shim_present gauge\nkerf_shim_present %d\n"
                "# HELP kerf_slices_unenforced_allowed 1 when policy.unenforced_slices is allow.\n"
                "# TYPE kerf_slices_unenforced_allowed gauge\n"
                "kerf_slices_unenforced_allowed %d\n"
                "# HELP kerf_slice_submits_refused_total Submits refused: slices without the "
                "shim.\n# TYPE kerf_slice_submits_refused_total counter\n"
                "kerf_slice_submits_refused_total %llu\n"
                "# HELP kerf_shim_bypass_total Tasks seen on their GPU without a live shim.\n"
                "# TYPE kerf_shim_bypass_total counter\nkerf_shim_bypass_total %llu\n"
                "# HELP kerf_slice_suspends_total kerf suspend requests carried out.\n"
                "# TYPE kerf_slice_suspends_total counter\nkerf_slice_suspends_total %llu\n"
                "# HELP kerf_slicectl_steps_total Steps of the slice controller thread.\n"
                "# TYPE kerf_slicectl_steps_total counter\nkerf_slicectl_steps_total %llu\n"
                "# HELP kerf_slicectl_changes_total Region limit changes the controller made.\n"
                "# TYPE kerf_slicectl_changes_total counter\nkerf_slicectl_changes_total %llu\n",
                n->shim_path[0] ? 1 : 0, n->cfg.unenforced_slices ? 1 : 0,
                (unsigned long long)n->unenforced_refused_total,
                (unsigned long long)n->bypass_total, (unsigned long long)n->suspends_total,
                (unsigned long long)n->ctl_steps, (unsigned long long)n->ctl_changes);
}
