/* SPDX-License-Identifier: Apache-2.0 */
/* harness.h - a steady-state scheduling workload shared by the throughput and growth
 * benchmarks: a mixed fleet, 100 tenants, a pending queue kept at a fixed depth */
#ifndef KERF_BENCH_HARNESS_H
#define KERF_BENCH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kerf/sched.h"

typedef struct bench_cfg {
        const char *fleet_path; /* fleet YAML */
        unsigned tenants;
        size_t pending; /* queue depth kept during the measurement */
        size_t calls;   /* kerf_sched_step calls measured */
        uint64_t seed;
        kerf_place_policy place;
        /* queues (bench_sched_backfill): tasks with a max_runtime_s, in percent; each call
         * advances the scheduler's clock by one second and ends tasks past their max_runtime_s
         * as the executor would */
        unsigned bounded_pct;
        bool no_backfill;        /* the default queue's backfill off (strict, as before backfill) */
        bool best_effort;        /* the default queue best-effort (starvation_s 600) */
        unsigned backfill_depth; /* policy.backfill_depth; 0 = the default */
} bench_cfg;

typedef struct bench_out {
        size_t calls;                  /* step calls measured */
        uint64_t attempts;             /* decisions (tasks considered) in them */
        uint64_t starts;               /* START decisions seen */
        uint64_t mig_creates;          /* MIG_CREATE confirmed with kerf_sched_mig_done */
        uint64_t mig_destroys;         /* MIG_DESTROY confirmed */
        double total_s;                /* time inside kerf_sched_step */
        double dec_per_s;              /* attempts / total_s */
        double mean_us;                /* per decision */
        double p50_us, p99_us, max_us; /* per decision: a call's time / its attempts */
        double call_p99_us;            /* per step call */
        double call_mean_us;           /* per step call */
        uint64_t passed;               /* starts ahead of a blocked head (backfill/best-effort) */
        double call_cpu_mean_us;       /* per step call, thread CPU time (robust to load) */
        double busy;                   /* mean GPU occupancy 0..1, sampled every 100 calls */
        double fill_s;                 /* time to submit the backlog */
        size_t pending_end, running_end;
} bench_out;

/* Runs the workload; returns 0 or a negative errno (a message is printed to stderr). */
int bench_run(const bench_cfg *cfg, bench_out *out);

#endif /* KERF_BENCH_HARNESS_H */
