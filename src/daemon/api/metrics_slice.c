/* SPDX-License-Identifier: Apache-2.0 */
/* metrics_slice.c - /metrics series of software slices (docs/METRICS.md "Software slices"):
 * usage against the grant per task, summed per tenant and per GPU, and node counters */
#include <stdio.h>
#include <string.h>

#include "metrics.h"
#include "kerf/slice_abi.h"

enum {
        S_MEM_USED,
        S_MEM_PEAK,
        S_MEM_LIMIT,
        S_CU_USED,
        S_CU_ALLOWED,
        S_THROTTLED,
        S_DENIED,
        S_HELD,
        S_SAMPLE_WAIT,
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
    [S_SAMPLE_WAIT] = {"sample_wait_seconds_total", "counter",
                       "Time launches of a new kernel waited for its first cost sample."},
};

static double sget(const msusage *u, int k)
{
        const double v[S_COUNT] = {
            u->mem_used,    u->mem_peak, u->mem_limit, u->compute_used, u->compute_allowed,
            u->throttled_s, u->denied,   u->held,      u->sample_wait_s};
        return v[k];
}

static void sadd(msusage *a, const msusage *b)
{
        a->mem_used += b->mem_used;
        a->mem_peak += b->mem_peak;
        a->mem_limit += b->mem_limit;
        a->compute_used += b->compute_used;
        a->compute_allowed += b->compute_allowed;
        a->throttled_s += b->throttled_s;
        a->denied += b->denied;
        a->held += b->held;
        a->sample_wait_s += b->sample_wait_s;
}

bool kerfd__metrics_slice_read(const dtask *t, msusage *u)
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
        u->sample_wait_s = (double)atomic_load(&r->sample_wait_ns) / 1e9;
        return true;
}

void kerfd__metrics_slices(FILE *f, const msnap *s, const char *tenant)
{
        msusage gpu[KERF_MAX_NODE_GPUS];
        bool gpu_has[KERF_MAX_NODE_GPUS];
        char host[512];

        /* per task (the snapshot holds only the tasks the caller may see) */
        for (int k = 0; k < S_COUNT; k++) {
                fprintf(f, "# HELP kerf_slice_%s %s\n# TYPE kerf_slice_%s %s\n", SERIES[k].name,
                        SERIES[k].help, SERIES[k].name, SERIES[k].type);
                for (size_t i = 0; i < s->n_tasks; i++) {
                        const mtask *t = &s->tasks[i];
                        if (!t->has_usage || (tenant && strcmp(t->tenant, tenant) != 0))
                                continue;
                        fprintf(f,
                                "kerf_slice_%s{task=\"%llu\",tenant=\"%s\",enforcement=\"%s\"} "
                                "%.3f\n",
                                SERIES[k].name, (unsigned long long)t->id, t->tenant,
                                t->enf ? t->enf : "none", sget(&t->u, k));
                }
        }
        /* per tenant */
        for (int k = 0; k < S_COUNT; k++) {
                fprintf(f, "# HELP kerf_tenant_slice_%s %s (sum over the tenant's slices)\n",
                        SERIES[k].name, SERIES[k].help);
                fprintf(f, "# TYPE kerf_tenant_slice_%s %s\n", SERIES[k].name, SERIES[k].type);
                for (unsigned ti = 0; ti < s->n_tenants; ti++) {
                        const char *name = s->tenants[ti].name;
                        msusage sum = {0};
                        if (tenant && strcmp(name, tenant) != 0)
                                continue;
                        for (size_t i = 0; i < s->n_tasks; i++)
                                if (s->tasks[i].has_usage && !strcmp(s->tasks[i].tenant, name))
                                        sadd(&sum, &s->tasks[i].u);
                        fprintf(f, "kerf_tenant_slice_%s{tenant=\"%s\"} %.3f\n", SERIES[k].name,
                                name, sget(&sum, k));
                }
        }
        if (tenant)
                return;
        kerfd__metrics_esc(host, sizeof(host), kerfd__metrics_hostname());
        /* per GPU (admin: it sums every tenant's slices) */
        memset(gpu, 0, sizeof(gpu));
        memset(gpu_has, 0, sizeof(gpu_has));
        for (size_t i = 0; i < s->n_tasks; i++) {
                const mtask *t = &s->tasks[i];
                if (t->has_usage && t->gpu < KERF_MAX_NODE_GPUS) {
                        sadd(&gpu[t->gpu], &t->u);
                        gpu_has[t->gpu] = true;
                }
        }
        for (int k = 0; k < S_COUNT; k++) {
                fprintf(f, "# HELP kerf_gpu_slice_%s %s (sum over the GPU's slices)\n",
                        SERIES[k].name, SERIES[k].help);
                fprintf(f, "# TYPE kerf_gpu_slice_%s %s\n", SERIES[k].name, SERIES[k].type);
                for (size_t g = 0; g < s->n_gpus; g++)
                        fprintf(f,
                                "kerf_gpu_slice_%s{gpu=\"%zu\",uuid=\"%s\",UUID=\"%s\","
                                "Hostname=\"%s\"} %.3f\n",
                                SERIES[k].name, g, s->gpus[g].uuid, s->gpus[g].uuid, host,
                                gpu_has[g] ? sget(&gpu[g], k) : 0.0);
        }
        /* one info series to join on (Prometheus adds instance/job to every series; the node
         * name, driver and CUDA version are here once, not a label on every series) */
        fprintf(f,
                "# HELP kerf_node_info The node this kerfd runs (node_name) and its driver.\n"
                "# TYPE kerf_node_info gauge\nkerf_node_info{node=\"%s\",driver=\"%s\","
                "cuda=\"%s\",kerf=\"%s\",simulated=\"%s\"} 1\n",
                s->node, s->driver, s->cuda, KERFD_VERSION, s->simulated ? "true" : "false");
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
                s->shim_present ? 1 : 0, s->unenforced_allowed ? 1 : 0,
                (unsigned long long)s->unenforced_refused_total,
                (unsigned long long)s->bypass_total, (unsigned long long)s->suspends_total,
                (unsigned long long)s->ctl_steps, (unsigned long long)s->ctl_changes);
}
