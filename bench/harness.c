/* SPDX-License-Identifier: Apache-2.0 */
/* harness.c - the steady-state workload of the scheduler benchmarks: tasks finish and arrive so
 * the pending queue stays at its depth; each kerf_sched_step(max = 1) call is timed */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "kerf/errno.h"

static uint64_t rng(uint64_t *x)
{
        uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
}

static double cpu_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Mean over GPUs of the larger of reserved memory and compute (MIG: slices held). */
static double occupancy(const kerf_sched *s)
{
        const kerf_fleet *f = kerf_sched_fleet(s);
        double sum = 0;
        for (unsigned g = 0; g < f->n_gpus; g++) {
                kerf_gpu_state gs;
                if (kerf_sched_gpu_get(s, g, &gs) < 0)
                        continue;
                double m = gs.mem_total ? (double)gs.mem_reserved / (double)gs.mem_total : 0;
                double c = gs.compute_reserved / 100.0;
                if (gs.mode == KERF_GPU_MODE_MIG)
                        m = c = gs.mig_compute_used / 7.0;
                sum += m > c ? m : c;
        }
        return f->n_gpus ? sum / f->n_gpus : 0;
}

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A mixed request: training on whole GPUs (1-8), inference on MIG or slices, dev on
 * time-slices, batch on anything. */
static void make_request(kerf_request *r, uint64_t *seed, unsigned tenants, char *tenant_buf)
{
        kerf_request_init(r);
        snprintf(tenant_buf, 16, "t%03u", (unsigned)(rng(seed) % tenants));
        r->tenant = tenant_buf;
        unsigned k = (unsigned)(rng(seed) % 100);
        r->priority = (int)(rng(seed) % 3);
        if (k < 20) {
                static const unsigned g[] = {1, 1, 1, 1, 2, 2, 4, 8};
                r->workload = KERF_WL_TRAINING;
                r->gpus = g[rng(seed) % 8];
        } else if (k < 50) {
                r->workload = KERF_WL_INFERENCE;
                r->tier = KERF_TIER_HIGH;
                r->mem_bytes = (10 + rng(seed) % 30) * KERF_GIB;
                r->compute_pct = 15 + (unsigned)(rng(seed) % 35);
        } else if (k < 70) {
                r->workload = KERF_WL_INFERENCE;
                r->mem_bytes = (5 + rng(seed) % 15) * KERF_GIB;
                r->compute_pct = 10 + (unsigned)(rng(seed) % 20);
        } else if (k < 85) {
                r->workload = KERF_WL_DEV;
                r->tier = KERF_TIER_EXPLORATORY;
                r->mem_bytes = 8 * KERF_GIB;
        } else {
                r->workload = KERF_WL_BATCH;
                r->mem_bytes = (4 + rng(seed) % 12) * KERF_GIB;
                r->compute_pct = 10 + (unsigned)(rng(seed) % 15);
        }
        r->cpu_milli = 1000 + rng(seed) % 8000;
        r->host_mem_bytes = (4 + rng(seed) % 60) * KERF_GIB;
}

typedef struct run {
        kerf_sched *s;
        uint64_t *running; /* ids of running tasks */
        size_t n_running, cap_running;
        bench_out *out;
        const bench_cfg *cfg;
        uint64_t clock_ms;  /* the scheduler's clock */
        uint32_t *mr;       /* max_runtime_s by task id (ids are sequential) */
        uint64_t *deadline; /* by task id: start + max_runtime (ms), 0 = none */
        size_t cap_ids;
} run;

static uint64_t run_clock(void *arg)
{
        return ((const run *)arg)->clock_ms;
}

static int ids_room(run *r, uint64_t id)
{
        if (id < r->cap_ids)
                return 0;
        size_t nc = r->cap_ids ? r->cap_ids : 1024;
        while (nc <= id)
                nc *= 2;
        uint32_t *m = realloc(r->mr, nc * sizeof(*m));
        if (!m)
                return -ENOMEM;
        r->mr = m;
        uint64_t *d = realloc(r->deadline, nc * sizeof(*d));
        if (!d)
                return -ENOMEM;
        r->deadline = d;
        memset(r->mr + r->cap_ids, 0, (nc - r->cap_ids) * sizeof(*m));
        memset(r->deadline + r->cap_ids, 0, (nc - r->cap_ids) * sizeof(*d));
        r->cap_ids = nc;
        return 0;
}

static int running_add(run *r, uint64_t id)
{
        if (r->n_running == r->cap_running) {
                size_t nc = r->cap_running ? r->cap_running * 2 : 1024;
                uint64_t *n = realloc(r->running, nc * sizeof(*n));
                if (!n)
                        return -ENOMEM;
                r->running = n;
                r->cap_running = nc;
        }
        r->running[r->n_running++] = id;
        return 0;
}

static void running_del(run *r, uint64_t id)
{
        for (size_t i = 0; i < r->n_running; i++)
                if (r->running[i] == id) {
                        r->running[i] = r->running[--r->n_running];
                        return;
                }
}

/* Acts on a decision as a backend would: MIG creates and destroys are confirmed at once. */
static int handle(run *r, const kerf_decision *d)
{
        switch (d->kind) {
        case KERF_DEC_START:
                r->out->starts++;
                r->out->passed += !strncmp(d->reason.text, "backfilled", 10) ||
                                  !strncmp(d->reason.text, "best-effort", 11);
                if (d->task < r->cap_ids && r->mr[d->task])
                        r->deadline[d->task] = r->clock_ms + r->mr[d->task] * 1000ULL;
                /* decisions are handed out one per call: a task ended meanwhile (past its
                 * max_runtime_s after a preempt-and-restart) is gone */
                kerf_task_info ti;
                if (kerf_sched_task_get(r->s, d->task, &ti) < 0 || ti.state != KERF_TASK_RUNNING)
                        return 0;
                return running_add(r, d->task);
        case KERF_DEC_PREEMPT:
                running_del(r, d->task);
                return 0;
        case KERF_DEC_MIG_CREATE:
                r->out->mig_creates++;
                return d->n_units ? kerf_sched_mig_done(r->s, d->units[0], 0) : -EINVAL;
        case KERF_DEC_MIG_DESTROY:
                r->out->mig_destroys++;
                return d->n_units ? kerf_sched_mig_done(r->s, d->units[0], 0) : -EINVAL;
        default:
                return 0;
        }
}

static int submit(run *r, uint64_t *seed, unsigned tenants)
{
        kerf_request req;
        char tn[16];
        uint64_t id;
        make_request(&req, seed, tenants, tn);
        if (r->cfg->bounded_pct && rng(seed) % 100 < r->cfg->bounded_pct)
                req.max_runtime_s = 60 + rng(seed) % 3540;
        int rc = kerf_sched_submit(r->s, &req, &id, NULL);
        if (rc == 0 && req.max_runtime_s) {
                if (ids_room(r, id) < 0)
                        return -ENOMEM;
                r->mr[id] = (uint32_t)req.max_runtime_s;
        }
        return rc == -KERF_ENEVER ? 0 : rc;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static int load_fleet(const char *path, kerf_fleet **ret)
{
        FILE *f = fopen(path, "rbe");
        if (!f) {
                fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
                return -errno;
        }
        static char buf[1 << 16];
        size_t n = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        char err[256] = "";
        int rc = kerf_fleet_parse_yaml(buf, n, ret, err, sizeof(err));
        if (rc < 0)
                fprintf(stderr, "bench: %s: %s\n", path, err);
        return rc;
}

int bench_run(const bench_cfg *cfg, bench_out *out)
{
        kerf_fleet *fleet = NULL;
        run r;
        double *per_dec = NULL, *per_call = NULL;
        uint64_t seed = cfg->seed;
        int rc;
        memset(&r, 0, sizeof(r));
        memset(out, 0, sizeof(*out));
        r.out = out;
        r.cfg = cfg;
        if ((rc = load_fleet(cfg->fleet_path, &fleet)) < 0)
                return rc;
        kerf_policy pol;
        kerf_policy_default(&pol);
        pol.place = cfg->place;
        pol.queue_default.backfill = !cfg->no_backfill;
        if (cfg->backfill_depth)
                pol.backfill_depth = cfg->backfill_depth;
        if (cfg->best_effort) {
                pol.queue_default.mode = KERF_QUEUE_BEST_EFFORT;
                pol.queue_default.starvation_s = 600;
        }
        if ((rc = kerf_sched_new(fleet, &pol, &r.s)) < 0)
                goto out;
        kerf_sched_clock_set(r.s, run_clock, &r);
        for (unsigned i = 0; i < cfg->tenants; i++) {
                char name[16];
                kerf_tenant_spec ts;
                snprintf(name, sizeof(name), "t%03u", i);
                kerf_tenant_spec_init(&ts, name);
                ts.weight = 1 + i % 4;
                if ((rc = kerf_sched_tenant_set(r.s, &ts)) < 0)
                        goto out;
        }
        /* the backlog, then fill the fleet until nothing more starts */
        double t0 = now_s();
        for (size_t i = 0; i < cfg->pending; i++)
                if ((rc = submit(&r, &seed, cfg->tenants)) < 0)
                        goto out;
        out->fill_s = now_s() - t0;
        kerf_decision dec[64];
        int n;
        do {
                n = kerf_sched_step(r.s, dec, 64);
                for (int i = 0; i < n; i++)
                        if ((rc = handle(&r, &dec[i])) < 0)
                                goto out;
        } while (n > 0);
        per_dec = malloc(cfg->calls * sizeof(*per_dec));
        per_call = malloc(cfg->calls * sizeof(*per_call));
        if (!per_dec || !per_call) {
                rc = -ENOMEM;
                goto out;
        }
        size_t nd = 0, nbusy = 0;
        kerf_sched_stats st;
        for (size_t c = 0; c < cfg->calls; c++) {
                /* with a clock: tasks past their max_runtime_s end (the executor's limit) */
                if (cfg->bounded_pct) {
                        r.clock_ms += 1000;
                        for (size_t k = 0; k < r.n_running;) {
                                uint64_t id = r.running[k];
                                if (id < r.cap_ids && r.deadline[id] &&
                                    r.deadline[id] <= r.clock_ms) {
                                        r.running[k] = r.running[--r.n_running];
                                        if ((rc = kerf_sched_finish(r.s, id)) < 0)
                                                goto out;
                                } else {
                                        k++;
                                }
                        }
                }
                /* one task ends, arrivals keep the backlog at its depth */
                if (r.n_running && c % 2 == 0) {
                        size_t k = rng(&seed) % r.n_running;
                        uint64_t id = r.running[k];
                        r.running[k] = r.running[--r.n_running];
                        if ((rc = kerf_sched_finish(r.s, id)) < 0)
                                goto out;
                }
                kerf_sched_stats_get(r.s, &st);
                for (uint64_t p = st.pending; p < cfg->pending; p++)
                        if ((rc = submit(&r, &seed, cfg->tenants)) < 0)
                                goto out;
                uint64_t a0 = st.attempts;
                double s0 = now_s(), c0 = cpu_s();
                n = kerf_sched_step(r.s, dec, 1);
                double dt = now_s() - s0;
                out->call_cpu_mean_us += (cpu_s() - c0) * 1e6;
                if (c % 100 == 0) {
                        out->busy += occupancy(r.s);
                        nbusy++;
                }
                if (n < 0) {
                        rc = n;
                        goto out;
                }
                kerf_sched_stats_get(r.s, &st);
                uint64_t na = st.attempts - a0;
                out->total_s += dt;
                out->attempts += na;
                per_call[c] = dt * 1e6;
                if (na)
                        per_dec[nd++] = dt * 1e6 / (double)na;
                for (int i = 0; i < n; i++)
                        if ((rc = handle(&r, &dec[i])) < 0)
                                goto out;
        }
        out->calls = cfg->calls;
        qsort(per_dec, nd, sizeof(*per_dec), cmp_double);
        qsort(per_call, cfg->calls, sizeof(*per_call), cmp_double);
        out->dec_per_s = out->total_s > 0 ? (double)out->attempts / out->total_s : 0;
        out->mean_us = out->attempts ? out->total_s * 1e6 / (double)out->attempts : 0;
        if (nd) {
                out->p50_us = per_dec[nd / 2];
                out->p99_us = per_dec[nd * 99 / 100];
                out->max_us = per_dec[nd - 1];
        }
        out->call_p99_us = per_call[cfg->calls * 99 / 100];
        out->call_mean_us = out->total_s * 1e6 / (double)cfg->calls;
        out->call_cpu_mean_us /= (double)cfg->calls;
        out->busy = nbusy ? out->busy / (double)nbusy : 0;
        kerf_sched_stats_get(r.s, &st);
        out->pending_end = st.pending;
        out->running_end = st.running;
        rc = 0;
out:
        free(per_dec);
        free(per_call);
        free(r.running);
        free(r.mr);
        free(r.deadline);
        kerf_sched_free(r.s);
        kerf_fleet_free(fleet);
        return rc;
}
