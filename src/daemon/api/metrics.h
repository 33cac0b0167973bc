/* SPDX-License-Identifier: Apache-2.0 */
/* metrics.h - the /metrics snapshot: taken under n->mu, formatted after it is released
 * (metrics.c, metrics_slice.c; docs/METRICS.md) */
#ifndef KERFD_METRICS_H
#define KERFD_METRICS_H

#include <stdatomic.h>
#include <stdio.h>

#include "api.h"

/* ---- histograms (metrics_node.c): fixed buckets, atomic counts ---------------------------- */
#define MHIST_MAX 14 /* upper bounds at most */

/* Bucket upper bounds in seconds, ascending (the +Inf bucket is implicit). */
typedef struct mbounds {
        unsigned n;
        double le[MHIST_MAX];
} mbounds;
extern const mbounds kerfd__latency_bounds;    /* 0.5 ms .. 5 s: HTTP, tick, store commit */
extern const mbounds kerfd__queue_wait_bounds; /* 1 s .. 1 day */

/* Observed without a lock (relaxed atomics); each bucket counts its own range, made
 * cumulative when written. The sum is kept in microseconds. */
typedef struct kerfd_hist {
        const mbounds *bounds;
        _Atomic uint64_t b[MHIST_MAX + 1];
        _Atomic uint64_t sum_us;
} kerfd_hist;

/* A copy of a kerfd_hist for a snapshot. */
typedef struct mhist {
        const mbounds *bounds;
        uint64_t b[MHIST_MAX + 1];
        uint64_t sum_us;
} mhist;

void kerfd__hist_observe(kerfd_hist *h, double seconds);
void kerfd__hist_copy(const kerfd_hist *h, mhist *ret);
/* Writes name_bucket{labels,le}, name_sum{labels} and name_count{labels}; `labels` is "" or
 * `a="x",b="y"` (already escaped). The HELP/TYPE head is the caller's. */
void kerfd__hist_write(FILE *f, const char *name, const char *labels, const mhist *h);
/* Escapes a label value into buf (cut to cap). */
void kerfd__metrics_esc(char *buf, size_t cap, const char *s);
/* This machine's host name as dcgm-exporter's Hostname label has it (read once). */
const char *kerfd__metrics_hostname(void);

/* What one slice region says, in the units the series use. */
typedef struct msusage {
        double mem_used, mem_peak, mem_limit, compute_used, compute_allowed, throttled_s;
        double denied, held, sample_wait_s;
} msusage;

/* A live task that holds a unit (or keeps a slice region): the only tasks with series of
 * their own. Pending tasks are counted in magg only. */
typedef struct mtask {
        uint64_t id;
        char tenant[KERF_NAME_LEN], queue[KERF_NAME_LEN];
        const char *enf; /* kerfd__enforcement(): static or NULL */
        bool run, has_units, has_counters, has_usage;
        uint64_t mem;
        unsigned compute, compute_limit, preemptions, restarts;
        uint64_t xid_errors;
        double wait_s;
        uint64_t mem_used, dev_ns, thr_ns; /* kerfd__slice_counters */
        msusage u;                         /* metrics_slice.c's read of the region */
        bool has_dev_sm;                   /* the device's view (kerfd__task_dev_sm) */
        unsigned dev_sm;
        unsigned gpu;        /* the GPU its region is summed on */
        kerf_unit_kind kind; /* of its units (has_units) */
        unsigned n_units;
} mtask;

/* Live tasks by tenant, queue and state (0 pending, 1 running). */
typedef struct magg {
        char tenant[KERF_NAME_LEN], queue[KERF_NAME_LEN];
        unsigned state;
        uint64_t count;
        double oldest_wait_s;
} magg;

typedef struct mgpu {
        char uuid[KERF_UUID_LEN], model[64];
        double v[10]; /* gpus() series, in order */
} mgpu;

typedef struct mtenant {
        char name[KERF_NAME_LEN];
        uint64_t use[KERF_RES_COUNT];
        uint64_t nominal[KERF_RES_COUNT], borrow[KERF_RES_COUNT], lend[KERF_RES_COUNT];
        uint64_t preemptions, faults; /* kept by metrics_node.c past the tasks' end */
        double throttled_gone_s;      /* throttled time of slice regions that are gone */
} mtenant;

/* The queue-wait histogram of one tenant and queue. */
typedef struct mqwait {
        char tenant[KERF_NAME_LEN], queue[KERF_NAME_LEN];
        mhist h;
} mqwait;

/* One snapshot of the whole node (the admin's view); a tenant's answer is filtered from it
 * when formatted. Shared by the answers formatted from it (refs, under metrics.c's lock). */
typedef struct msnap {
        unsigned refs;
        uint64_t built_ms, build_us; /* when (monotonic ms) and how long it took under n->mu */
        /* node (admin) */
        size_t n_gpus;
        mgpu gpus[KERF_MAX_NODE_GPUS];
        bool simulated;
        char node[64], driver[KERF_STORE_VER_LEN], cuda[KERF_STORE_VER_LEN]; /* kerf_node_info */
        uint64_t preemptions_total, reclaims_total, faults_total;
        uint64_t xid_class_count[KERF_XID_CLASS_COUNT];
        /* slices node counters (admin) */
        bool shim_present, unenforced_allowed;
        uint64_t unenforced_refused_total, bypass_total, suspends_total, ctl_steps, ctl_changes;
        /* units, with the MIG GI id (-1) and the tenant of their task ("" when none) */
        size_t n_units;
        kerf_unit_info *units;
        int *unit_gi;
        char (*unit_tenant)[KERF_NAME_LEN];
        /* tasks with series of their own; aggregates; configured tenants */
        size_t n_tasks, cap_tasks;
        mtask *tasks;
        size_t n_agg, cap_agg;
        magg *agg;
        unsigned n_tenants;
        mtenant *tenants;
        /* metrics_node.c: queue waits, the store's health */
        size_t n_qwait;
        mqwait *qwait;
        bool store_ok;
        uint64_t outbox_len;
} msnap;

/* metrics_slice.c: reads t's region into *u under n->mu; false when it has none. */
bool kerfd__metrics_slice_read(const dtask *t, msusage *u);
/* Formats the software-slice series of the snapshot (no lock held); `tenant` NULL: the
 * admin's view, else only that tenant's tasks and line. */
void kerfd__metrics_slices(FILE *f, const msnap *s, const char *tenant);

/* metrics_node.c: under n->mu, copies the per-tenant counters, quotas, queue-wait histograms
 * and the store's health into s (after the tenants are in it); 0 or -1 (out of memory). */
int kerfd__metrics_node_snap(kerfd_node *n, msnap *s);
/* Formats (no lock) the per-tenant series (granted/used per route, quota, counters, queue
 * wait) for `tenant` (NULL: every tenant), and the daemon's health series (admin view). */
void kerfd__metrics_tenant_series(FILE *f, const msnap *s, const char *tenant);
void kerfd__metrics_health(FILE *f, const msnap *s);

/* metrics_auth.c: the read-only metrics credential (docs/METRICS.md "Scraping remotely").
 * A bearer token `tok` that is the metrics token: 1 for GET /metrics (r->metrics_reader set),
 * -1 for anything else (a 403 is queued in r); 0 when it is not the metrics token. */
int kerfd__metrics_bearer(kreq *r, const char *tok);

#endif /* KERFD_METRICS_H */
