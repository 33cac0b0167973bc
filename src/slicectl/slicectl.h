/* SPDX-License-Identifier: Apache-2.0 */
/* slicectl.h - kerfd's half of the compute loop: burst allowance, yield to high-impact
 * neighbours, freeze (docs/SHIM.md "kerfd's controller") */
#ifndef KERF_SLICECTL_H
#define KERF_SLICECTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kerf/slice_abi.h"

/* One software slice on a GPU, as kerfd's controller sees it. The region is mapped
 * read-write by kerfd (kerf_slice_region_map(path, true, ...)). */
typedef struct kerf_slicectl_slice {
        struct kerf_slice_region *region;
        uint64_t task_id;
        int gpu;             /* fleet GPU index: slices of one GPU are balanced together */
        bool high_impact;    /* tier high: best-effort neighbours yield while it is busy */
        bool best_effort;    /* may be held (YIELD) while a high-impact neighbour is busy */
        bool frozen;         /* kerfd holds every launch (kerf suspend) */
        uint64_t started_ns; /* CLOCK_MONOTONIC when the task started (a new slice counts as
                              * wanting its share at once, before its first launch) */
} kerf_slicectl_slice;

typedef struct kerf_slicectl_params {
        uint64_t active_ns;      /* activity newer than this = the slice wants its share
                                  * (default 200 ms) */
        uint64_t hi_busy_ns;     /* a high-impact slice active within this = busy (200 ms) */
        uint64_t start_grace_ns; /* a slice this young wants its share (1 s) */
} kerf_slicectl_params;

/* Default parameters. */
void kerf_slicectl_params_default(kerf_slicectl_params *p);

/* Slices one step handles without allocating (more: scratch from the heap). */
#define KERF_SLICECTL_MAX 512

/* One control step over `n` slices (any GPUs, any order) at CLOCK_MONOTONIC `now_ns`: sets each
 * region's compute_allowed_pct between compute_pct and compute_limit_pct (room on its GPU that
 * active neighbours do not claim), the FROZEN flag from `frozen`, the YIELD flag for best-effort
 * slices while a high-impact neighbour on the same GPU is busy, and bumps `generation` of every
 * region it changed. Writes only when a value changes. Thread-safe against the shims (atomics); not
 * against a concurrent step on the same regions. Returns the number of regions changed. Call every
 * 10-20 ms. `p` NULL = defaults. Slices with a NULL region are skipped. */
size_t kerf_slicectl_step(kerf_slicectl_slice *s, size_t n, uint64_t now_ns,
                          const kerf_slicectl_params *p);

#endif /* KERF_SLICECTL_H */
