/* SPDX-License-Identifier: Apache-2.0 */
/* metrics.c - GET /metrics in Prometheus text format (docs/METRICS.md); tenants see their own */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

typedef struct mbuf {
        FILE *f;
} mbuf;

static void head(mbuf *m, const char *name, const char *type, const char *help)
{
        fprintf(m->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Label values: escape backslash, quote and newline. */
static void lv(mbuf *m, const char *s)
{
        for (; s && *s; s++) {
                if (*s == '\\' || *s == '"')
                        fputc('\\', m->f);
                if (*s == '\n') {
                        fputs("\\n", m->f);
                        continue;
                }
                fputc(*s, m->f);
        }
}

/* DCGM exporter's label names on DCGM_ series (UUID, modelName); snake_case on kerf_ ones. */
static void gpu_labels(mbuf *m, kerfd_node *n, size_t g, bool dcgm)
{
        const kerf_gpu_desc *d = &n->fleet->gpus[g];
        fprintf(m->f, "{gpu=\"%zu\",%s=\"", g, dcgm ? "UUID" : "uuid");
        lv(m, d->uuid);
        fprintf(m->f, "\",%s=\"", dcgm ? "modelName" : "model_name");
        lv(m, d->model->product ? d->model->product : d->model->name);
        fputs("\"}", m->f);
}

static void task_labels(mbuf *m, const dtask *t)
{
        fprintf(m->f, "{task=\"%llu\",tenant=\"", (unsigned long long)t->rec.id);
        lv(m, t->rec.tenant);
        fputs("\",queue=\"", m->f);
        lv(m, t->rec.queue);
        if (kerfd__enforcement(t)) /* software slices: "shim" or "unenforced" */
                fprintf(m->f, "\",enforcement=\"%s", kerfd__enforcement(t));
        fputs("\"}", m->f);
}

static void gpus(mbuf *m, kerfd_node *n)
{
        static const struct {
                const char *name, *type, *help;
        } g[] = {
            {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."},
            {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."},
            {"DCGM_FI_DEV_FB_TOTAL", "gauge", "Framebuffer memory total (in MiB)."},
            {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."},
            {"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."},
            {"kerf_gpu_xid_errors_total", "counter", "XID errors seen on the GPU."},
            {"kerf_gpu_memory_reserved_bytes", "gauge", "GPU memory granted to units."},
            {"kerf_gpu_compute_reserved_percent", "gauge", "Compute share guaranteed to units."},
            {"kerf_gpu_faulted", "gauge", "1 when the GPU is out of service after a fault."},
        };
        for (size_t k = 0; k < sizeof(g) / sizeof(g[0]); k++) {
                head(m, g[k].name, g[k].type, g[k].help);
                for (size_t i = 0; i < n->fleet->n_gpus && i < KERF_MAX_NODE_GPUS; i++) {
                        kerf_gpu_state st;
                        uint64_t total = n->fleet->gpus[i].model->mem_bytes,
                                 used = n->gpu_mem_used[i];
                        double v = 0;
                        if (kerf_sched_gpu_get(n->sched, (unsigned)i, &st) < 0)
                                continue;
                        switch (k) {
                        case 0:
                                v = (double)(used / KERF_MIB);
                                break;
                        case 1:
                                v = (double)((total > used ? total - used : 0) / KERF_MIB);
                                break;
                        case 2:
                                v = (double)(total / KERF_MIB);
                                break;
                        case 3:
                                v = n->gpu_util[i];
                                break;
                        case 4:
                                v = n->last_xid[i];
                                break;
                        case 5:
                                v = (double)n->xid_count[i];
                                break;
                        case 6:
                                v = (double)st.mem_reserved;
                                break;
                        case 7:
                                v = st.compute_reserved;
                                break;
                        default:
                                v = st.faulted;
                                break;
                        }
                        fputs(g[k].name, m->f);
                        gpu_labels(m, n, i, k <= 4);
                        fprintf(m->f, " %.0f\n", v);
                }
        }
}

static void tasks(mbuf *m, kreq *r)
{
        kerfd_node *n = r->node;
        static const struct {
                const char *name, *type, *help;
        } g[] = {
            {"kerf_task_memory_granted_bytes", "gauge", "GPU memory granted to the task per GPU."},
            {"kerf_task_compute_granted_percent", "gauge", "Guaranteed compute share of the task."},
            {"kerf_task_compute_limit_percent", "gauge", "Burst compute limit of the task."},
            {"kerf_task_running", "gauge", "1 while the task runs, 0 while it waits."},
            {"kerf_task_queue_wait_seconds", "gauge", "Time the task waited (or waits) in queue."},
            {"kerf_task_preemptions_total", "counter", "Times the task was preempted."},
            {"kerf_task_restarts_total", "counter", "Times the task was started again."},
            {"kerf_task_xid_errors_total", "counter", "XID errors that hit the task's units."},
            {"kerf_task_memory_used_bytes", "gauge",
             "GPU memory the task's processes hold (slice region, as charged by the shim)."},
            {"kerf_task_compute_used_seconds_total", "counter",
             "GPU time the task's kernels used (slice region, measured by the shim)."},
            {"kerf_task_throttled_seconds_total", "counter",
             "Time the shim held the task's launches back to keep its compute share."},
        };
        uint64_t now = kerfd_now_ms();
        for (size_t k = 0; k < sizeof(g) / sizeof(g[0]); k++) {
                head(m, g[k].name, g[k].type, g[k].help);
                for (size_t i = 0; i < n->live.cap; i++) {
                        dtask *t;
                        double v = 0;
                        bool run;
                        if (n->live.keys[i] == 0 || n->live.keys[i] == UINT64_MAX)
                                continue;
                        t = n->live.vals[i];
                        if (!r->admin && strcmp(t->rec.tenant, r->tenant) != 0)
                                continue;
                        run = !strcmp(t->rec.state, "running");
                        if (k >= 8) {
                                uint64_t mu, dn, tn;
                                if (!kerfd__slice_counters(t, &mu, &dn, &tn))
                                        continue;
                                v = k == 8 ? (double)mu : (double)(k == 9 ? dn : tn) / 1e9;
                                fputs(g[k].name, m->f);
                                task_labels(m, t);
                                fprintf(m->f, " %.3f\n", v);
                                continue;
                        }
                        switch (k) {
                        case 0:
                                v = t->n_units ? (double)t->units[0].mem : 0;
                                break;
                        case 1:
                                v = t->n_units ? t->units[0].compute : 0;
                                break;
                        case 2:
                                v = t->n_units ? t->units[0].compute_limit : 0;
                                break;
                        case 3:
                                v = run;
                                break;
                        case 4:
                                v = (double)((t->rec.started_ms ? (uint64_t)t->rec.started_ms
                                                                : now) -
                                             (uint64_t)t->rec.submitted_ms) /
                                    1000.0;
                                break;
                        case 5:
                                v = t->rec.preemptions;
                                break;
                        case 6:
                                v = t->rec.restarts;
                                break;
                        default:
                                v = t->xid_errors;
                                break;
                        }
                        if ((k <= 2) && !t->n_units)
                                continue;
                        fputs(g[k].name, m->f);
                        task_labels(m, t);
                        fprintf(m->f, " %.3f\n", v);
                }
        }
}

static void tenants(mbuf *m, kreq *r)
{
        kerfd_node *n = r->node;
        static const char *res[KERF_RES_COUNT] = {"gpus", "memory", "compute", "mig_slices"};
        head(m, "kerf_tenant_usage", "gauge",
             "Quota usage of the tenant per resource (gpus, memory bytes, compute %, MIG "
             "slices).");
        for (unsigned i = 0; i < n->n_tenants; i++) {
                uint64_t use[KERF_RES_COUNT] = {0};
                if (!r->admin && strcmp(n->tenants[i].cfg.name, r->tenant) != 0)
                        continue;
                kerf_sched_tenant_usage(n->sched, n->tenants[i].cfg.name, use);
                for (int k = 0; k < KERF_RES_COUNT; k++) {
                        fputs("kerf_tenant_usage{tenant=\"", m->f);
                        lv(m, n->tenants[i].cfg.name);
                        fprintf(m->f, "\",resource=\"%s\"} %llu\n", res[k],
                                (unsigned long long)use[k]);
                }
        }
        head(m, "kerf_tenant_tasks", "gauge", "Unfinished tasks of the tenant by state.");
        for (unsigned i = 0; i < n->n_tenants; i++) {
                unsigned cnt[2] = {0, 0};
                if (!r->admin && strcmp(n->tenants[i].cfg.name, r->tenant) != 0)
                        continue;
                for (size_t j = 0; j < n->live.cap; j++) {
                        dtask *t;
                        if (n->live.keys[j] == 0 || n->live.keys[j] == UINT64_MAX)
                                continue;
                        t = n->live.vals[j];
                        if (!strcmp(t->rec.tenant, n->tenants[i].cfg.name))
                                cnt[!strcmp(t->rec.state, "running")]++;
                }
                for (int s = 0; s < 2; s++) {
                        fputs("kerf_tenant_tasks{tenant=\"", m->f);
                        lv(m, n->tenants[i].cfg.name);
                        fprintf(m->f, "\",state=\"%s\"} %u\n", s ? "running" : "pending", cnt[s]);
                }
        }
}

static void units(mbuf *m, kreq *r)
{
        kerfd_node *n = r->node;
        static kerf_unit_info us[1024];
        size_t nu = kerf_sched_unit_list(n->sched, -1, us, 1024);
        head(m, "kerf_unit_memory_bytes", "gauge", "GPU memory of the unit.");
        for (size_t i = 0; i < nu && i < 1024; i++) {
                dtask *t = kerfd__live(n, us[i].task);
                if (!r->admin && (!t || strcmp(t->rec.tenant, r->tenant) != 0))
                        continue;
                fprintf(m->f, "kerf_unit_memory_bytes{unit=\"%llu\",kind=\"%s\",gpu=\"%u\"",
                        (unsigned long long)us[i].id, kerf_unit_kind_name(us[i].kind), us[i].gpu);
                if (us[i].kind == KERF_UNIT_MIG) {
                        dunit *mg = kerf_u64map_get(&n->migs, us[i].id);
                        fprintf(m->f, ",GPU_I_PROFILE=\"%s\",GPU_I_ID=\"%d\"",
                                us[i].mig_profile_name, mg ? mg->mig_gi : -1);
                }
                fprintf(m->f, ",state=\"%s\"} %llu\n", kerf_unit_state_name(us[i].state),
                        (unsigned long long)us[i].mem_bytes);
        }
}

void kerfd_api_metrics(kreq *r)
{
        kerfd_node *n = r->node;
        mbuf m;
        char *buf = NULL;
        size_t len = 0;

        m.f = open_memstream(&buf, &len);
        if (!m.f) {
                kreq_error(r, 500, "internal", "out of memory");
                return;
        }
        if (r->admin) {
                gpus(&m, n);
                head(&m, "kerf_preemptions_total", "counter", "Preemptions since kerfd started.");
                fprintf(m.f, "kerf_preemptions_total %llu\n",
                        (unsigned long long)n->preemptions_total);
                head(&m, "kerf_reclaims_total", "counter",
                     "Task ends whose units were reclaimed since kerfd started.");
                fprintf(m.f, "kerf_reclaims_total %llu\n", (unsigned long long)n->reclaims_total);
                head(&m, "kerf_xid_errors_total", "counter",
                     "XID errors seen on the node since kerfd started, by class.");
                for (unsigned c = 0; c < KERF_XID_CLASS_COUNT; c++)
                        fprintf(m.f, "kerf_xid_errors_total{class=\"%s\"} %llu\n",
                                kerf_xid_class_name((kerf_xid_class)c),
                                (unsigned long long)n->xid_class_count[c]);
                head(&m, "kerf_device_faults_total", "counter",
                     "Device events (XID, GPU lost) handled since kerfd started.");
                fprintf(m.f, "kerf_device_faults_total %llu\n",
                        (unsigned long long)n->faults_total);
                head(&m, "kerf_simulated", "gauge", "1 when kerfd runs on the simulated fleet.");
                fprintf(m.f, "kerf_simulated %d\n", n->simulated ? 1 : 0);
        }
        units(&m, r);
        tasks(&m, r);
        kerfd__metrics_slices(m.f, r);
        tenants(&m, r);
        fclose(m.f);
        r->status = 200;
        r->raw = buf;
        r->raw_len = len;
        r->ctype = "text/plain; version=0.0.4; charset=utf-8";
}
