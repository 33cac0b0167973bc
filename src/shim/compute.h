/* SPDX-License-Identifier: Apache-2.0 */
/* compute.h - the compute share inside the shim: interface between launch.c and limiter.c */
#ifndef KERF_SHIM_COMPUTE_H
#define KERF_SHIM_COMPUTE_H

/*
 * A launch goes  ks__gate_begin() -> real driver call -> ks__gate_end().
 * begin: look up the launch's cost key, charge its device-time estimate to the shared token
 *        bucket (region->credit_ns), hold the calling thread while FROZEN / YIELD / in debt,
 *        and, for a sampled launch, record the start event of a timing pair.
 * end:   record the end event (sampled launch) or undo the charge (the driver refused it).
 * The background thread (ks__limiter_tick) collects finished pairs into the estimates,
 * refills the bucket and publishes the counters. docs/SHIM.md "## Compute".
 */

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

/* One launch in flight between begin and end (on the caller's stack). */
typedef struct ks_launch {
        struct ks_key *key;   /* cost-key entry (never NULL after begin) */
        struct ks_pair *pair; /* timing pair when sampled, else NULL */
        int64_t charged_ns;   /* the launch's device-time charge */
        bool debited;         /* charged_ns was taken from the bucket */
        CUstream stream;
        bool ptsz; /* per-thread default stream variant */
} ks_launch;

#define KS_RING 8u          /* samples kept per cost key */
#define KS_IDLE 0x80000000u /* ring entry: sampled on an idle stream */
#define KS_MS   1000000LL

/* Launch kinds (part of the key, so a graph and a kernel never share an estimate). */
enum { KS_KIND_KERNEL = 1, KS_KIND_GRAPH = 2 };

/* Key of a kernel launch: function + grid, block, shared memory; of a graph: the exec. */
uint64_t ks__dims_hash(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned smem);

void ks__gate_begin(ks_launch *l, int kind, const void *obj, uint64_t dims, CUstream stream,
                    bool ptsz);
void ks__gate_end(ks_launch *l, CUresult r);

/* ---- pure parts, exposed for the unit tests (tests/unit/shim/test_compute_unit.c) ---- */

/* Estimate from the recent samples of a key (ns): a low order statistic (docs/SHIM.md). */
uint64_t ks__estimate(const uint32_t *samples_us, unsigned n);

/* The bucket on a region: refill at pct of the time since credit_stamp_ns, capped at
 * burst_ns; returns the credit after the refill. */
int64_t ks__bucket_refill(struct kerf_slice_region *r, uint64_t now_ns, uint32_t pct,
                          int64_t burst_ns);
/* Burst cap for pct and the region's window (window_ms / 5 x pct / 100, >= 1 ms x pct). */
int64_t ks__bucket_burst(uint32_t pct, uint32_t window_ms);

/* Test switch state (KERF_SHIM_TEST_BREAK_LIMITER=1, read at init only). */
extern bool ks__limiter_broken;

#endif /* KERF_SHIM_COMPUTE_H */
