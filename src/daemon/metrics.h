/* SPDX-License-Identifier: Apache-2.0 */
/* metrics.h - the /metrics snapshot: taken under n->mu, formatted after it is released
 * (metrics.c, metrics_slice.c; docs/METRICS.md) */
#ifndef KERFD_METRICS_H
#define KERFD_METRICS_H

#include <stdio.h>

#include "api.h"

/* What one slice region says, in the units the series use. */
typedef struct msusage {
        double mem_used, mem_peak, mem_limit, compute_used, compute_allowed, throttled_s;
        double denied, held;
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
        unsigned gpu;                      /* the GPU its region is summed on */
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
        double v[9]; /* gpus() series, in order */
} mgpu;

typedef struct mtenant {
        char name[KERF_NAME_LEN];
        uint64_t use[KERF_RES_COUNT];
} mtenant;

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
} msnap;

/* metrics_slice.c: reads t's region into *u under n->mu; false when it has none. */
bool kerfd__metrics_slice_read(const dtask *t, msusage *u);
/* Formats the software-slice series of the snapshot (no lock held); `tenant` NULL: the
 * admin's view, else only that tenant's tasks and line. */
void kerfd__metrics_slices(FILE *f, const msnap *s, const char *tenant);

#endif /* KERFD_METRICS_H */
