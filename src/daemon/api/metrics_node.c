/* SPDX-License-Identifier: Apache-2.0 */
/* metrics_node.c - /metrics per tenant and route (granted vs used, quota, preemptions and
 * faults kept past a task's end, queue-wait histograms) and the daemon's health (build info,
 * HTTP, tick and store-commit latency histograms, store writable); docs/METRICS.md */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kerf/slice_abi.h"
#include "metrics.h"

/* ---- histograms ------------------------------------------------------------------------- */

const mbounds kerfd__latency_bounds = {
    12, {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5}};
const mbounds kerfd__queue_wait_bounds = {
    12, {1, 5, 15, 30, 60, 120, 300, 900, 1800, 3600, 14400, 86400}};

void kerfd__hist_observe(kerfd_hist *h, double seconds)
{
        unsigned i = 0;

        if (!(seconds >= 0)) /* NaN or negative (a clock step): counted as 0 */
                seconds = 0;
        while (i < h->bounds->n && seconds > h->bounds->le[i])
                i++;
        atomic_fetch_add_explicit(&h->b[i], 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&h->sum_us, (uint64_t)(seconds * 1e6), memory_order_relaxed);
}

void kerfd__hist_copy(const kerfd_hist *h, mhist *ret)
{
        ret->bounds = h->bounds;
        for (unsigned i = 0; i <= MHIST_MAX; i++)
                ret->b[i] = atomic_load_explicit(&h->b[i], memory_order_relaxed);
        ret->sum_us = atomic_load_explicit(&h->sum_us, memory_order_relaxed);
}

void kerfd__hist_write(FILE *f, const char *name, const char *labels, const mhist *h)
{
        uint64_t cum = 0;
        const char *sep = labels[0] ? "," : "";

        for (unsigned i = 0; i < h->bounds->n; i++) {
                cum += h->b[i];
                fprintf(f, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep, h->bounds->le[i],
                        (unsigned long long)cum);
        }
        cum += h->b[h->bounds->n];
        fprintf(f, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep, (unsigned long long)cum);
        fprintf(f, "%s_sum%s%s%s %.6f\n", name, sep[0] ? "{" : "", labels, sep[0] ? "}" : "",
                (double)h->sum_us / 1e6);
        fprintf(f, "%s_count%s%s%s %llu\n", name, sep[0] ? "{" : "", labels, sep[0] ? "}" : "",
                (unsigned long long)cum);
}

void kerfd__metrics_esc(char *buf, size_t cap, const char *s)
{
        size_t o = 0;

        for (; s && *s && o + 3 < cap; s++) {
                if (*s == '\\' || *s == '"')
                        buf[o++] = '\\';
                if (*s == '\n') {
                        buf[o++] = '\\';
                        buf[o++] = 'n';
                        continue;
                }
                buf[o++] = *s;
        }
        buf[o] = 0;
}

static char hostname[256];
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

static void host_read(void)
{
        if (gethostname(hostname, sizeof(hostname) - 1) != 0)
                hostname[0] = 0;
}

const char *kerfd__metrics_hostname(void)
{
        pthread_once(&host_once, host_read);
        return hostname;
}

/* ---- the daemon's timings (any thread) ------------------------------------------------- */

static kerfd_hist tick_h = {.bounds = &kerfd__latency_bounds};
static kerfd_hist commit_h = {.bounds = &kerfd__latency_bounds};
/* by status class: 2xx, 3xx, 4xx, 5xx */
static kerfd_hist http_h[4] = {{.bounds = &kerfd__latency_bounds},
                               {.bounds = &kerfd__latency_bounds},
                               {.bounds = &kerfd__latency_bounds},
                               {.bounds = &kerfd__latency_bounds}};

uint64_t kerfd__metrics_clock_us(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static double since_s(uint64_t t0_us)
{
        uint64_t now = kerfd__metrics_clock_us();
        return now > t0_us ? (double)(now - t0_us) / 1e6 : 0;
}

void kerfd__metrics_tick(uint64_t t0_us)
{
        kerfd__hist_observe(&tick_h, since_s(t0_us));
}

void kerfd__metrics_commit(uint64_t t0_us)
{
        kerfd__hist_observe(&commit_h, since_s(t0_us));
}

void kerfd__metrics_http(uint64_t t0_us, unsigned status)
{
        unsigned c = status >= 200 && status < 600 ? status / 100 - 2 : 3;
        kerfd__hist_observe(&http_h[c], since_s(t0_us));
}

/* ---- kept past a task's end (n->mu held) ----------------------------------------------- */

/* Counters per tenant name; a full table drops further tenants' counts (logged once). */
#define MAX_TCOUNT 512
typedef struct tcount {
        char tenant[KERF_NAME_LEN];
        uint64_t preemptions, faults, throttled_ns;
} tcount;
static tcount tc[MAX_TCOUNT];
static unsigned n_tc;

/* Queue-wait histograms per tenant and queue (queues are free names: bounded, the last slot
 * takes every pair past it as tenant="_other", queue="_other"). */
#define MAX_QWAIT 256
typedef struct qwait {
        char tenant[KERF_NAME_LEN], queue[KERF_NAME_LEN];
        kerfd_hist h;
} qwait;
static qwait qw[MAX_QWAIT];
static unsigned n_qw;

static tcount *tc_get(const char *tenant)
{
        for (unsigned i = 0; i < n_tc; i++)
                if (!strcmp(tc[i].tenant, tenant))
                        return &tc[i];
        if (n_tc == MAX_TCOUNT) {
                static bool said;
                if (!said)
                        log_warn("metrics: more than %d tenants seen; counters of the others are "
                                 "not kept",
                                 MAX_TCOUNT);
                said = true;
                return NULL;
        }
        snprintf(tc[n_tc].tenant, sizeof(tc[n_tc].tenant), "%s", tenant);
        return &tc[n_tc++];
}

void kerfd__metrics_preempted(const dtask *t)
{
        tcount *c = tc_get(t->rec.tenant);
        if (c)
                c->preemptions++;
}

void kerfd__metrics_fault(const dtask *t)
{
        tcount *c = tc_get(t->rec.tenant);
        if (c)
                c->faults++;
}

void kerfd__metrics_slice_gone(const dtask *t)
{
        tcount *c = t->region ? tc_get(t->rec.tenant) : NULL;
        if (c)
                c->throttled_ns += atomic_load(&t->region->throttled_ns);
}

void kerfd__metrics_started(const dtask *t)
{
        qwait *q = NULL;

        if (t->rec.restarts || !t->rec.started_ms)
                return; /* the first start only: a restart's wait is not since submit */
        for (unsigned i = 0; i < n_qw && !q; i++)
                if (!strcmp(qw[i].tenant, t->rec.tenant) && !strcmp(qw[i].queue, t->rec.queue))
                        q = &qw[i];
        if (!q) {
                q = &qw[n_qw < MAX_QWAIT ? n_qw++ : MAX_QWAIT - 1];
                if (!q->h.bounds) {
                        bool other = q == &qw[MAX_QWAIT - 1];
                        snprintf(q->tenant, sizeof(q->tenant), "%s",
                                 other ? "_other" : t->rec.tenant);
                        snprintf(q->queue, sizeof(q->queue), "%s", other ? "_other" : t->rec.queue);
                        q->h.bounds = &kerfd__queue_wait_bounds;
                }
        }
        kerfd__hist_observe(&q->h, (double)(t->rec.started_ms - t->rec.submitted_ms) / 1000.0);
}

int kerfd__metrics_node_snap(kerfd_node *n, msnap *s)
{
        for (unsigned i = 0; i < s->n_tenants; i++) {
                mtenant *m = &s->tenants[i];
                const ktenant *kt = kerfd__tenant_find(n, m->name);
                if (kt) {
                        memcpy(m->nominal, kt->cfg.nominal, sizeof(m->nominal));
                        memcpy(m->borrow, kt->cfg.borrow_limit, sizeof(m->borrow));
                        memcpy(m->lend, kt->cfg.lend_limit, sizeof(m->lend));
                }
                for (unsigned j = 0; j < n_tc; j++)
                        if (!strcmp(tc[j].tenant, m->name)) {
                                m->preemptions = tc[j].preemptions;
                                m->faults = tc[j].faults;
                                m->throttled_gone_s = (double)tc[j].throttled_ns / 1e9;
                        }
        }
        s->qwait = calloc(n_qw ? n_qw : 1, sizeof(*s->qwait));
        if (!s->qwait)
                return -1;
        for (unsigned i = 0; i < n_qw; i++) {
                memcpy(s->qwait[i].tenant, qw[i].tenant, sizeof(qw[i].tenant));
                memcpy(s->qwait[i].queue, qw[i].queue, sizeof(qw[i].queue));
                kerfd__hist_copy(&qw[i].h, &s->qwait[i].h);
        }
        s->n_qwait = n_qw;
        s->store_ok = kerfd__store_ok(n);
        s->outbox_len = n->outbox_len;
        return 0;
}

/* ---- formatting (no lock) ------------------------------------------------------------- */

static void head(FILE *f, const char *name, const char *type, const char *help)
{
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static bool shown(const char *only, const char *tenant)
{
        return !only || !strcmp(only, tenant);
}

enum { R_WHOLE, R_HARDWARE, R_SOFTWARE, R_COUNT };
static const char *const ROUTES[R_COUNT] = {"whole", "hardware", "software"};

static int route_of(kerf_unit_kind k)
{
        const char *r = kerfd__cost_route(k);
        for (int i = 0; i < R_COUNT; i++)
                if (!strcmp(r, ROUTES[i]))
                        return i;
        return R_SOFTWARE;
}

/* Granted and used memory and compute of one tenant per route, summed over its live tasks. */
typedef struct troute {
        double mem_granted[R_COUNT], cu_granted[R_COUNT], mem_used, cu_used, throttled_s;
} troute;

static void tenant_sum(const msnap *s, const char *tenant, troute *r)
{
        memset(r, 0, sizeof(*r));
        for (size_t i = 0; i < s->n_tasks; i++) {
                const mtask *t = &s->tasks[i];
                if (strcmp(t->tenant, tenant) != 0)
                        continue;
                if (t->has_units) {
                        int k = route_of(t->kind);
                        r->mem_granted[k] += (double)t->mem * t->n_units;
                        r->cu_granted[k] += (double)t->compute * t->n_units;
                }
                if (t->has_usage) {
                        r->mem_used += t->u.mem_used;
                        r->cu_used += t->u.compute_used;
                        r->throttled_s += t->u.throttled_s;
                }
        }
}

static void quota_line(FILE *f, const char *tenant, const char *res, const char *limit, uint64_t v)
{
        fprintf(f, "kerf_tenant_quota{tenant=\"%s\",resource=\"%s\",limit=\"%s\"} ", tenant, res,
                limit);
        if (v == KERF_UNLIMITED)
                fputs("+Inf\n", f);
        else
                fprintf(f, "%llu\n", (unsigned long long)v);
}

void kerfd__metrics_tenant_series(FILE *f, const msnap *s, const char *only)
{
        static const char *res[KERF_RES_COUNT] = {"gpus", "memory", "compute", "mig_slices"};
        static const struct {
                const char *name, *help;
        } g[4] = {
            {"kerf_tenant_memory_granted_bytes", "GPU memory granted to the tenant's live tasks."},
            {"kerf_tenant_compute_granted_percent",
             "Compute guaranteed to the tenant's live tasks, percent of one GPU, summed."},
            {"kerf_tenant_memory_used_bytes",
             "GPU memory the tenant's tasks hold, where measured (software slices: the shim)."},
            {"kerf_tenant_compute_used_percent",
             "GPU time the tenant's tasks used over the last ~1 s, percent of one GPU, where "
             "measured (software slices)."},
        };
        char tn[2 * KERF_NAME_LEN], lab[6 * KERF_NAME_LEN];
        troute *sum = calloc(s->n_tenants ? s->n_tenants : 1, sizeof(*sum));

        if (!sum)
                return;
        for (unsigned i = 0; i < s->n_tenants; i++)
                tenant_sum(s, s->tenants[i].name, &sum[i]);
        for (int k = 0; k < 4; k++) {
                head(f, g[k].name, "gauge", g[k].help);
                for (unsigned i = 0; i < s->n_tenants; i++) {
                        if (!shown(only, s->tenants[i].name))
                                continue;
                        kerfd__metrics_esc(tn, sizeof(tn), s->tenants[i].name);
                        for (int r = 0; r < R_COUNT; r++) {
                                double v = k == 0   ? sum[i].mem_granted[r]
                                           : k == 1 ? sum[i].cu_granted[r]
                                           : k == 2 ? sum[i].mem_used
                                                    : sum[i].cu_used;
                                if (k >= 2 && r != R_SOFTWARE)
                                        continue; /* not measured on whole GPUs and MIG */
                                fprintf(f, "%s{tenant=\"%s\",route=\"%s\"} %.3f\n", g[k].name, tn,
                                        ROUTES[r], v);
                        }
                }
        }
        head(f, "kerf_tenant_throttled_seconds_total", "counter",
             "Time the shim held the tenant's slices back, since kerfd started (kept after the "
             "tasks end).");
        for (unsigned i = 0; i < s->n_tenants; i++)
                if (shown(only, s->tenants[i].name)) {
                        kerfd__metrics_esc(tn, sizeof(tn), s->tenants[i].name);
                        fprintf(f, "kerf_tenant_throttled_seconds_total{tenant=\"%s\"} %.3f\n", tn,
                                s->tenants[i].throttled_gone_s + sum[i].throttled_s);
                }
        free(sum);
        head(f, "kerf_tenant_quota", "gauge",
             "The tenant's quota per resource: nominal, borrow (limit over nominal) and lend "
             "(limit lent to its cohort); +Inf when unlimited.");
        for (unsigned i = 0; i < s->n_tenants; i++) {
                const mtenant *m = &s->tenants[i];
                if (!shown(only, m->name))
                        continue;
                kerfd__metrics_esc(tn, sizeof(tn), m->name);
                for (int k = 0; k < KERF_RES_COUNT; k++) {
                        quota_line(f, tn, res[k], "nominal", m->nominal[k]);
                        quota_line(f, tn, res[k], "borrow", m->borrow[k]);
                        quota_line(f, tn, res[k], "lend", m->lend[k]);
                }
        }
        head(f, "kerf_tenant_preemptions_total", "counter",
             "Preemptions of the tenant's tasks since kerfd started (kept after the tasks end).");
        for (unsigned i = 0; i < s->n_tenants; i++)
                if (shown(only, s->tenants[i].name)) {
                        kerfd__metrics_esc(tn, sizeof(tn), s->tenants[i].name);
                        fprintf(f, "kerf_tenant_preemptions_total{tenant=\"%s\"} %llu\n", tn,
                                (unsigned long long)s->tenants[i].preemptions);
                }
        head(f, "kerf_tenant_faults_total", "counter",
             "Device faults (XID, GPU lost) that hit the tenant's tasks since kerfd started.");
        for (unsigned i = 0; i < s->n_tenants; i++)
                if (shown(only, s->tenants[i].name)) {
                        kerfd__metrics_esc(tn, sizeof(tn), s->tenants[i].name);
                        fprintf(f, "kerf_tenant_faults_total{tenant=\"%s\"} %llu\n", tn,
                                (unsigned long long)s->tenants[i].faults);
                }
        head(f, "kerf_queue_wait_seconds", "histogram",
             "Seconds from submit to first start, observed when a task starts.");
        for (size_t i = 0; i < s->n_qwait; i++) {
                char qn[2 * KERF_NAME_LEN];
                if (!shown(only, s->qwait[i].tenant))
                        continue;
                kerfd__metrics_esc(tn, sizeof(tn), s->qwait[i].tenant);
                kerfd__metrics_esc(qn, sizeof(qn), s->qwait[i].queue);
                snprintf(lab, sizeof(lab), "tenant=\"%s\",queue=\"%s\"", tn, qn);
                kerfd__hist_write(f, "kerf_queue_wait_seconds", lab, &s->qwait[i].h);
        }
}

void kerfd__metrics_health(FILE *f, const msnap *s)
{
        static const char *cls[4] = {"2xx", "3xx", "4xx", "5xx"};
        mhist h;
        char lab[32];

        head(f, "kerf_build_info", "gauge", "kerfd's version (always 1).");
        fprintf(f, "kerf_build_info{version=\"%s\"} 1\n", KERFD_VERSION);
        head(f, "kerf_http_request_duration_seconds", "histogram",
             "API requests from their arrival whole to the answer, by status class.");
        for (int c = 0; c < 4; c++) {
                kerfd__hist_copy(&http_h[c], &h);
                snprintf(lab, sizeof(lab), "code=\"%s\"", cls[c]);
                kerfd__hist_write(f, "kerf_http_request_duration_seconds", lab, &h);
        }
        head(f, "kerf_tick_duration_seconds", "histogram",
             "One controller pass (reap, limits, faults, scheduling) under the daemon mutex.");
        kerfd__hist_copy(&tick_h, &h);
        kerfd__hist_write(f, "kerf_tick_duration_seconds", "", &h);
        head(f, "kerf_store_commit_duration_seconds", "histogram",
             "One store transaction (kerfd__tx_commit), failed ones included.");
        kerfd__hist_copy(&commit_h, &h);
        kerfd__hist_write(f, "kerf_store_commit_duration_seconds", "", &h);
        head(f, "kerf_store_writable", "gauge",
             "1 when the store writes; 0 while writes fail (/v1/health store).");
        fprintf(f, "kerf_store_writable %d\n", s->store_ok ? 1 : 0);
        head(f, "kerf_store_outbox", "gauge", "Changes waiting to be written to the store.");
        fprintf(f, "kerf_store_outbox %llu\n", (unsigned long long)s->outbox_len);
}
