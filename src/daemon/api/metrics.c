/* SPDX-License-Identifier: Apache-2.0 */
/* metrics.c - GET /metrics in Prometheus text format (docs/METRICS.md); tenants see their own.
 * Under n->mu only a snapshot is taken (numbers and names; per-task rows only for tasks that
 * hold a unit, pending tasks counted per tenant/queue/state); the text is formatted after
 * n->mu is released (kreq.render), so a scrape of a large queue does not stall the API. */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>

#include "metrics.h"

static void head(FILE *f, const char *name, const char *type, const char *help)
{
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Label values: escape backslash, quote and newline. */
static void lv(FILE *f, const char *s)
{
        for (; s && *s; s++) {
                if (*s == '\\' || *s == '"')
                        fputc('\\', f);
                if (*s == '\n') {
                        fputs("\\n", f);
                        continue;
                }
                fputc(*s, f);
        }
}

/* ---- the snapshot (n->mu held) ------------------------------------------------------------ */

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
        size_t nc = *cap ? *cap : 64;
        void *np;
        if (need <= *cap)
                return p;
        while (nc < need)
                nc *= 2;
        np = realloc(p, nc * size);
        if (np)
                *cap = nc;
        return np;
}

/* Open-addressing index of s->agg by (tenant, queue, state); rebuilt when it fills. */
typedef struct aindex {
        size_t cap;
        size_t *slot; /* agg index + 1; 0 = empty */
} aindex;

static size_t ahash(const char *tenant, const char *queue, unsigned state)
{
        size_t h = 1469598103934665603ULL ^ state;
        for (const char *p = tenant; *p; p++)
                h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        h = (h ^ 0xff) * 1099511628211ULL;
        for (const char *p = queue; *p; p++)
                h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        return h;
}

static int aindex_fill(aindex *ix, const msnap *s, size_t cap)
{
        size_t *slot = calloc(cap, sizeof(*slot));
        if (!slot)
                return -1;
        free(ix->slot);
        ix->slot = slot;
        ix->cap = cap;
        for (size_t i = 0; i < s->n_agg; i++) {
                size_t h = ahash(s->agg[i].tenant, s->agg[i].queue, s->agg[i].state) & (cap - 1);
                while (slot[h])
                        h = (h + 1) & (cap - 1);
                slot[h] = i + 1;
        }
        return 0;
}

static int count_task(msnap *s, aindex *ix, const dtask *t, unsigned state, double wait_s)
{
        size_t h;
        magg *a;
        if ((s->n_agg + 1) * 2 > ix->cap && aindex_fill(ix, s, ix->cap ? ix->cap * 4 : 64) < 0)
                return -1;
        h = ahash(t->rec.tenant, t->rec.queue, state) & (ix->cap - 1);
        for (; ix->slot[h]; h = (h + 1) & (ix->cap - 1)) {
                a = &s->agg[ix->slot[h] - 1];
                if (a->state == state && !strcmp(a->tenant, t->rec.tenant) &&
                    !strcmp(a->queue, t->rec.queue)) {
                        a->count++;
                        if (wait_s > a->oldest_wait_s)
                                a->oldest_wait_s = wait_s;
                        return 0;
                }
        }
        s->agg = grow(s->agg, &s->cap_agg, s->n_agg + 1, sizeof(*s->agg));
        if (!s->agg)
                return -1;
        a = &s->agg[s->n_agg];
        memset(a, 0, sizeof(*a));
        snprintf(a->tenant, sizeof(a->tenant), "%s", t->rec.tenant);
        snprintf(a->queue, sizeof(a->queue), "%s", t->rec.queue);
        a->state = state;
        a->count = 1;
        a->oldest_wait_s = wait_s;
        ix->slot[h] = ++s->n_agg;
        return 0;
}

static int snap_task(msnap *s, const dtask *t, bool run, double wait_s)
{
        mtask *m;
        s->tasks = grow(s->tasks, &s->cap_tasks, s->n_tasks + 1, sizeof(*s->tasks));
        if (!s->tasks)
                return -1;
        m = &s->tasks[s->n_tasks++];
        memset(m, 0, sizeof(*m));
        m->id = t->rec.id;
        snprintf(m->tenant, sizeof(m->tenant), "%s", t->rec.tenant);
        snprintf(m->queue, sizeof(m->queue), "%s", t->rec.queue);
        m->enf = kerfd__enforcement(t);
        m->run = run;
        m->has_units = t->n_units > 0;
        if (m->has_units) {
                m->mem = t->units[0].mem;
                m->compute = t->units[0].compute;
                m->compute_limit = t->units[0].compute_limit;
                m->kind = t->units[0].kind;
                m->n_units = t->n_units;
        }
        m->wait_s = wait_s;
        m->preemptions = t->rec.preemptions;
        m->restarts = t->rec.restarts;
        m->xid_errors = t->xid_errors;
        m->has_counters = kerfd__slice_counters(t, &m->mem_used, &m->dev_ns, &m->thr_ns);
        m->has_usage = kerfd__metrics_slice_read(t, &m->u);
        int64_t sm_ms;
        m->has_dev_sm = kerfd__task_dev_sm(t, &m->dev_sm, &sm_ms);
        m->gpu = t->preempt_frozen ? t->preempt_gpu : t->n_units ? t->units[0].gpu : 0;
        return 0;
}

static void snap_gpus(msnap *s, kerfd_node *n)
{
        for (size_t i = 0; i < n->fleet->n_gpus && i < KERF_MAX_NODE_GPUS; i++) {
                const kerf_gpu_desc *d = &n->fleet->gpus[i];
                mgpu *g = &s->gpus[s->n_gpus];
                kerf_gpu_state st;
                uint64_t total = d->model->mem_bytes, used = n->gpu_mem_used[i];
                if (kerf_sched_gpu_get(n->sched, (unsigned)i, &st) < 0)
                        continue;
                snprintf(g->uuid, sizeof(g->uuid), "%s", d->uuid);
                snprintf(g->model, sizeof(g->model), "%s",
                         d->model->product ? d->model->product : d->model->name);
                g->v[0] = (double)used;
                g->v[1] = (double)(total > used ? total - used : 0);
                g->v[2] = (double)total;
                g->v[3] = n->gpu_util[i];
                g->v[4] = n->last_xid[i];
                g->v[5] = (double)n->xid_count[i];
                g->v[6] = (double)st.mem_reserved;
                g->v[7] = st.compute_reserved;
                g->v[8] = st.faulted;
                g->v[9] = st.draining;
                s->n_gpus++;
        }
}

static int snapshot(kerfd_node *n, msnap *s)
{
        static kerf_unit_info us[1024];
        uint64_t now = kerfd_now_ms();
        aindex ix = {0};
        size_t nu;
        int rc = 0;

        {
                snap_gpus(s, n);
                s->simulated = n->simulated;
                snprintf(s->node, sizeof(s->node), "%s", n->node_name);
                snprintf(s->driver, sizeof(s->driver), "%s", n->driver);
                snprintf(s->cuda, sizeof(s->cuda), "%s", n->cuda);
                s->preemptions_total = n->preemptions_total;
                s->reclaims_total = n->reclaims_total;
                s->faults_total = n->faults_total;
                memcpy(s->xid_class_count, n->xid_class_count, sizeof(s->xid_class_count));
                s->shim_present = n->shim_path[0] != 0;
                s->unenforced_allowed = n->cfg.unenforced_slices;
                s->unenforced_refused_total = n->unenforced_refused_total;
                s->bypass_total = n->bypass_total;
                s->suspends_total = n->suspends_total;
                s->ctl_steps = n->ctl_steps;
                s->ctl_changes = n->ctl_changes;
        }
        nu = kerf_sched_unit_list(n->sched, -1, us, 1024);
        if (nu > 1024)
                nu = 1024;
        s->units = malloc((nu ? nu : 1) * sizeof(*s->units));
        s->unit_gi = malloc((nu ? nu : 1) * sizeof(*s->unit_gi));
        s->unit_tenant = calloc(nu ? nu : 1, sizeof(*s->unit_tenant));
        if (!s->units || !s->unit_gi || !s->unit_tenant)
                return -1;
        for (size_t i = 0; i < nu; i++) {
                dtask *t = kerfd__live(n, us[i].task);
                dunit *mg;
                if (t)
                        snprintf(s->unit_tenant[s->n_units], KERF_NAME_LEN, "%s", t->rec.tenant);
                mg = us[i].kind == KERF_UNIT_MIG ? kerf_u64map_get(&n->migs, us[i].id) : NULL;
                s->unit_gi[s->n_units] = mg ? mg->mig_gi : -1;
                s->units[s->n_units++] = us[i];
        }
        s->tenants = calloc(n->n_tenants ? n->n_tenants : 1, sizeof(*s->tenants));
        if (!s->tenants)
                return -1;
        for (unsigned i = 0; i < n->n_tenants; i++) {
                mtenant *m = &s->tenants[s->n_tenants];
                snprintf(m->name, sizeof(m->name), "%s", n->tenants[i].cfg.name);
                kerf_sched_tenant_usage(n->sched, m->name, m->use);
                s->n_tenants++;
        }
        if (kerfd__metrics_node_snap(n, s) < 0)
                return -1;
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;
        while (rc == 0 && kerf_u64map_next(&n->live, &it, NULL, &val)) {
                dtask *t;
                bool run;
                double wait_s;
                t = val;
                run = t->state == KERF_TASK_RUNNING;
                wait_s = (double)((t->rec.started_ms ? (uint64_t)t->rec.started_ms : now) -
                                  (uint64_t)t->rec.submitted_ms) /
                         1000.0;
                rc = count_task(s, &ix, t, run, run ? 0 : wait_s);
                if (rc == 0 && (t->n_units || t->region))
                        rc = snap_task(s, t, run, wait_s);
        }
        free(ix.slot);
        return rc;
}

static void snap_free(msnap *s)
{
        if (!s)
                return;
        free(s->units);
        free(s->unit_gi);
        free(s->unit_tenant);
        free(s->tasks);
        free(s->agg);
        free(s->tenants);
        free(s->qwait);
        free(s);
}

/* ---- formatting (no lock) ---------------------------------------------------------------- */

/* `only`: NULL for the admin's view, else the one tenant whose series are shown. */
static bool shown(const char *only, const char *tenant)
{
        return !only || !strcmp(only, tenant);
}

/* Per GPU: kerf_ names (never DCGM_FI_*: dcgm-exporter may run beside kerfd), with DCGM's
 * join labels UUID and Hostname beside kerf's own (docs/METRICS.md "Joining DCGM"). */
static void gpus(FILE *f, const msnap *s, const char *host)
{
        static const struct {
                const char *name, *type, *help;
        } g[] = {
            {"kerf_gpu_memory_used_bytes", "gauge", "GPU memory used (NVML / simulated node)."},
            {"kerf_gpu_memory_free_bytes", "gauge", "GPU memory free."},
            {"kerf_gpu_memory_total_bytes", "gauge", "GPU memory in all."},
            {"kerf_gpu_utilization_percent", "gauge", "GPU utilisation (NVML), percent."},
            {"kerf_gpu_last_xid", "gauge", "The last XID seen on the GPU (0: none)."},
            {"kerf_gpu_xid_errors_total", "counter", "XID errors seen on the GPU."},
            {"kerf_gpu_memory_reserved_bytes", "gauge", "GPU memory granted to units."},
            {"kerf_gpu_compute_reserved_percent", "gauge", "Compute share guaranteed to units."},
            {"kerf_gpu_faulted", "gauge", "1 when the GPU is out of service after a fault."},
            {"kerf_gpu_draining", "gauge", "1 when an admin drained the GPU: no new work placed."},
        };
        for (size_t k = 0; k < sizeof(g) / sizeof(g[0]); k++) {
                head(f, g[k].name, g[k].type, g[k].help);
                for (size_t i = 0; i < s->n_gpus; i++) {
                        fprintf(f, "%s{gpu=\"%zu\",uuid=\"", g[k].name, i);
                        lv(f, s->gpus[i].uuid);
                        fputs("\",model_name=\"", f);
                        lv(f, s->gpus[i].model);
                        fputs("\",UUID=\"", f);
                        lv(f, s->gpus[i].uuid);
                        fputs("\",Hostname=\"", f);
                        lv(f, host);
                        fprintf(f, "\"} %.0f\n", s->gpus[i].v[k]);
                }
        }
}

static void task_labels(FILE *f, const mtask *t)
{
        fprintf(f, "{task=\"%llu\",tenant=\"", (unsigned long long)t->id);
        lv(f, t->tenant);
        fputs("\",queue=\"", f);
        lv(f, t->queue);
        if (t->enf) /* software slices: "shim" or "unenforced" */
                fprintf(f, "\",enforcement=\"%s", t->enf);
        fputs("\"}", f);
}

static void tasks(FILE *f, const msnap *s, const char *only)
{
        static const struct {
                const char *name, *type, *help;
        } g[] = {
            {"kerf_task_memory_granted_bytes", "gauge", "GPU memory granted to the task per GPU."},
            {"kerf_task_compute_granted_percent", "gauge", "Guaranteed compute share of the task."},
            {"kerf_task_compute_limit_percent", "gauge", "Burst compute limit of the task."},
            {"kerf_task_running", "gauge", "1 while the task runs, 0 while it waits."},
            {"kerf_task_queue_wait_seconds", "gauge", "Time the task waited in queue."},
            {"kerf_task_preemptions_total", "counter", "Times the task was preempted."},
            {"kerf_task_restarts_total", "counter", "Times the task was started again."},
            {"kerf_task_xid_errors_total", "counter", "XID errors that hit the task's units."},
            {"kerf_task_memory_used_bytes", "gauge",
             "GPU memory the task's processes hold (slice region, as charged by the shim)."},
            {"kerf_task_compute_used_seconds_total", "counter",
             "GPU time the task's kernels used (slice region, measured by the shim)."},
            {"kerf_task_throttled_seconds_total", "counter",
             "Time the shim held the task's launches back to keep its compute share."},
            {"kerf_task_device_sm_percent", "gauge",
             "SM utilisation the device reports for the task's processes (per-process samples "
             "at the last 1 s poll, summed over its GPUs; not the shim's figure)."},
        };
        for (size_t k = 0; k < sizeof(g) / sizeof(g[0]); k++) {
                head(f, g[k].name, g[k].type, g[k].help);
                for (size_t i = 0; i < s->n_tasks; i++) {
                        const mtask *t = &s->tasks[i];
                        double v;
                        if (!shown(only, t->tenant))
                                continue;
                        if (k == 11) {
                                if (!t->has_dev_sm)
                                        continue;
                                v = t->dev_sm;
                        } else if (k >= 8) {
                                if (!t->has_counters)
                                        continue;
                                v = k == 8 ? (double)t->mem_used
                                           : (double)(k == 9 ? t->dev_ns : t->thr_ns) / 1e9;
                        } else {
                                const double all[8] = {(double)t->mem,   t->compute,
                                                       t->compute_limit, t->run,
                                                       t->wait_s,        t->preemptions,
                                                       t->restarts,      (double)t->xid_errors};
                                if (k <= 2 && !t->has_units)
                                        continue;
                                v = all[k];
                        }
                        fputs(g[k].name, f);
                        task_labels(f, t);
                        fprintf(f, " %.3f\n", v);
                }
        }
        head(f, "kerf_tasks", "gauge", "Unfinished tasks by tenant, queue and state.");
        for (size_t i = 0; i < s->n_agg; i++) {
                if (!shown(only, s->agg[i].tenant))
                        continue;
                fputs("kerf_tasks{tenant=\"", f);
                lv(f, s->agg[i].tenant);
                fputs("\",queue=\"", f);
                lv(f, s->agg[i].queue);
                fprintf(
                    f, "\",state=\"%s\"} %llu\n",
                    kerf_task_state_name(s->agg[i].state ? KERF_TASK_RUNNING : KERF_TASK_PENDING),
                    (unsigned long long)s->agg[i].count);
        }
        head(f, "kerf_queue_oldest_wait_seconds", "gauge",
             "Wait of the oldest pending task by tenant and queue.");
        for (size_t i = 0; i < s->n_agg; i++) {
                if (s->agg[i].state || !shown(only, s->agg[i].tenant))
                        continue;
                fputs("kerf_queue_oldest_wait_seconds{tenant=\"", f);
                lv(f, s->agg[i].tenant);
                fputs("\",queue=\"", f);
                lv(f, s->agg[i].queue);
                fprintf(f, "\"} %.3f\n", s->agg[i].oldest_wait_s);
        }
}

static void tenants(FILE *f, const msnap *s, const char *only)
{
        static const char *res[KERF_RES_COUNT] = {"gpus", "memory", "compute", "mig_slices"};
        head(f, "kerf_tenant_usage", "gauge",
             "Quota usage of the tenant per resource (gpus, memory bytes, compute %, MIG "
             "slices).");
        for (unsigned i = 0; i < s->n_tenants; i++)
                for (int k = 0; k < KERF_RES_COUNT && shown(only, s->tenants[i].name); k++) {
                        fputs("kerf_tenant_usage{tenant=\"", f);
                        lv(f, s->tenants[i].name);
                        fprintf(f, "\",resource=\"%s\"} %llu\n", res[k],
                                (unsigned long long)s->tenants[i].use[k]);
                }
        head(f, "kerf_tenant_tasks", "gauge", "Unfinished tasks of the tenant by state.");
        for (unsigned i = 0; i < s->n_tenants; i++) {
                uint64_t cnt[2] = {0, 0};
                if (!shown(only, s->tenants[i].name))
                        continue;
                for (size_t j = 0; j < s->n_agg; j++)
                        if (!strcmp(s->agg[j].tenant, s->tenants[i].name))
                                cnt[s->agg[j].state ? 1 : 0] += s->agg[j].count;
                for (int st = 0; st < 2; st++) {
                        fputs("kerf_tenant_tasks{tenant=\"", f);
                        lv(f, s->tenants[i].name);
                        fprintf(f, "\",state=\"%s\"} %llu\n",
                                kerf_task_state_name(st ? KERF_TASK_RUNNING : KERF_TASK_PENDING),
                                (unsigned long long)cnt[st]);
                }
        }
}

static void units(FILE *f, const msnap *s, const char *only, const char *host)
{
        head(f, "kerf_unit_memory_bytes", "gauge", "GPU memory of the unit.");
        for (size_t i = 0; i < s->n_units; i++) {
                const kerf_unit_info *u = &s->units[i];
                if (only && strcmp(only, s->unit_tenant[i]) != 0)
                        continue;
                fprintf(f, "kerf_unit_memory_bytes{unit=\"%llu\",kind=\"%s\",gpu=\"%u\"",
                        (unsigned long long)u->id, kerf_unit_kind_name(u->kind), u->gpu);
                if (u->kind == KERF_UNIT_MIG)
                        fprintf(f, ",GPU_I_PROFILE=\"%s\",GPU_I_ID=\"%d\"", u->mig_profile_name,
                                s->unit_gi[i]);
                fprintf(f, ",state=\"%s\",UUID=\"", kerf_unit_state_name(u->state));
                lv(f, u->gpu < s->n_gpus ? s->gpus[u->gpu].uuid : "");
                fputs("\",Hostname=\"", f);
                lv(f, host);
                fprintf(f, "\"} %llu\n", (unsigned long long)u->mem_bytes);
        }
}

static void node(FILE *f, const msnap *s, const uint64_t conns[3])
{
        head(f, "kerf_preemptions_total", "counter", "Preemptions since kerfd started.");
        fprintf(f, "kerf_preemptions_total %llu\n", (unsigned long long)s->preemptions_total);
        head(f, "kerf_reclaims_total", "counter",
             "Task ends whose units were reclaimed since kerfd started.");
        fprintf(f, "kerf_reclaims_total %llu\n", (unsigned long long)s->reclaims_total);
        head(f, "kerf_xid_errors_total", "counter",
             "XID errors seen on the node since kerfd started, by class.");
        for (unsigned c = 0; c < KERF_XID_CLASS_COUNT; c++)
                fprintf(f, "kerf_xid_errors_total{class=\"%s\"} %llu\n",
                        kerf_xid_class_name((kerf_xid_class)c),
                        (unsigned long long)s->xid_class_count[c]);
        head(f, "kerf_device_faults_total", "counter",
             "Device events (XID, GPU lost) handled since kerfd started.");
        fprintf(f, "kerf_device_faults_total %llu\n", (unsigned long long)s->faults_total);
        head(f, "kerf_simulated", "gauge", "1 when kerfd runs on the simulated fleet.");
        fprintf(f, "kerf_simulated %d\n", s->simulated ? 1 : 0);
        head(f, "kerf_http_connections", "gauge", "Open API connections (socket and TCP).");
        fprintf(f, "kerf_http_connections %llu\n", (unsigned long long)conns[0]);
        head(f, "kerf_http_connections_refused_total", "counter",
             "Connections refused over limits.max_connections(_per_peer).");
        fprintf(f, "kerf_http_connections_refused_total %llu\n", (unsigned long long)conns[1]);
        head(f, "kerf_http_requests_cut_total", "counter",
             "Requests cut at limits.request_timeout_s.");
        fprintf(f, "kerf_http_requests_cut_total %llu\n", (unsigned long long)conns[2]);
}

/* The last snapshot, reused while it is young: a snapshot costs one pass over the live
 * tasks under n->mu, so back-to-back scrapes of a large node share one, at most
 * SNAP_REUSE times as old as it took to build and never older than SNAP_MAX_AGE_MS. A
 * snapshot that took under SNAP_FREE_US is never reused (small nodes: always fresh). */
#define SNAP_REUSE      10
#define SNAP_MAX_AGE_MS 1000
#define SNAP_FREE_US    2000
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static msnap *cache;

static void snap_put(msnap *s)
{
        bool last;
        if (!s)
                return;
        pthread_mutex_lock(&cache_mu);
        last = --s->refs == 0;
        pthread_mutex_unlock(&cache_mu);
        if (last)
                snap_free(s);
}

typedef struct mview {
        msnap *s;
        bool admin;
        char tenant[KERF_NAME_LEN];
} mview;

static void render(kreq *r)
{
        mview *v = r->render_ctx;
        const msnap *s = v->s;
        const char *only = v->admin ? NULL : v->tenant;
        char *buf = NULL;
        size_t len = 0;
        FILE *f;

        r->render = NULL;
        r->render_ctx = NULL;
        f = open_memstream(&buf, &len);
        if (f) {
                const char *host = kerfd__metrics_hostname();
                if (!only) {
                        uint64_t conns[3];
                        kerfd__conn_stats(&conns[0], &conns[1], &conns[2]);
                        gpus(f, s, host);
                        node(f, s, conns);
                        kerfd__metrics_health(f, s);
                }
                units(f, s, only, host);
                tasks(f, s, only);
                kerfd__metrics_slices(f, s, only);
                tenants(f, s, only);
                kerfd__metrics_tenant_series(f, s, only);
                fclose(f);
        }
        snap_put(v->s);
        free(v);
        if (!f) {
                kreq_error(r, 500, "internal", "out of memory");
                return;
        }
        r->status = 200;
        r->raw = buf;
        r->raw_len = len;
        r->ctype = "text/plain; version=0.0.4; charset=utf-8";
}

/* n->mu held: takes (or reuses) the snapshot; the text is made by render() after n->mu. */
void kerfd_api_metrics(kreq *r)
{
        mview *v = calloc(1, sizeof(*v));
        uint64_t now = kerfd_mono_ms();
        msnap *s = NULL;

        if (!v)
                goto oom;
        pthread_mutex_lock(&cache_mu);
        if (cache && cache->build_us >= SNAP_FREE_US && now - cache->built_ms < SNAP_MAX_AGE_MS &&
            (now - cache->built_ms) * 1000 < cache->build_us * SNAP_REUSE) {
                s = cache;
                s->refs++;
        }
        pthread_mutex_unlock(&cache_mu);
        if (!s) {
                struct timespec t0, t1;
                clock_gettime(CLOCK_MONOTONIC, &t0);
                s = calloc(1, sizeof(*s));
                if (!s || snapshot(r->node, s) < 0) {
                        snap_free(s);
                        goto oom;
                }
                clock_gettime(CLOCK_MONOTONIC, &t1);
                s->built_ms = now;
                s->build_us = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000L +
                                         (t1.tv_nsec - t0.tv_nsec) / 1000);
                s->refs = 2; /* this answer and the cache */
                pthread_mutex_lock(&cache_mu);
                msnap *old = cache;
                cache = s;
                pthread_mutex_unlock(&cache_mu);
                snap_put(old);
        }
        v->s = s;
        v->admin = r->admin || r->metrics_reader; /* the metrics credential: node-wide */
        snprintf(v->tenant, sizeof(v->tenant), "%s", r->tenant);
        r->render = render;
        r->render_ctx = v;
        return;
oom:
        free(v);
        kreq_error(r, 500, "internal", "out of memory");
}
