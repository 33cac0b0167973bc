/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h - libkerf-cuda.so (the shim): state and the interfaces between its parts */
#ifndef KERF_SHIM_INTERNAL_H
#define KERF_SHIM_INTERNAL_H

/*
 * The shim is LD_PRELOADed into every process of a task on a software slice
 * (docs/SHIM-CONTRACT.md, docs/SHIM.md). Its parts:
 *
 *   init.c      lazy, once: region (KERF_SLICE_REGION) mapped and checked, slot claimed, the
 *               real driver opened and ks_real filled, background thread started. cuInit
 *               fails with NOT_INITIALIZED and one line on stderr when the region cannot be
 *               trusted. Never abort()/exit().
 *   real.c      the table of interposed entry points: name -> our wrapper, and the real
 *               pointer; maps a pointer the real driver returned to our wrapper.
 *   procaddr.c  cuGetProcAddress(_v2) and dlsym(): answer our wrapper wherever the real
 *               driver would have answered the real function we interpose.
 *   region.c    slot claim/free, reserve/release on memory_charged (contract rule 3), dead
 *               process reclaim (rule 4), heartbeat.
 *   mem.c ...   every allocation path (reserve, call, undo on failure, release on free).
 *   views.c     cuMemGetInfo, cuDeviceTotalMem; nvml.c the NVML memory and process views.
 *   launch.c    launch wrappers (plain, Ex, cooperative, graph) -> limiter gate.
 *   limiter.c   the compute share: shared token bucket (credit_ns), sampled device-time
 *               measurement, FROZEN / YIELD holds.
 *
 * Exported: only the interposed entry points (libkerf-cuda.map, -fvisibility=hidden).
 * Hot path (unthrottled launch): atomics and process-local reads only - no getenv,
 * allocation, syscall or contended lock.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define KERF_CUDA_EXPORT __attribute__((visibility("default")))
#include "cuda_abi.h"
#include "kerf/slice_abi.h"

#define KS_EXPORT __attribute__((visibility("default")))

/* Per-process state. Written by init before `ready` is stored (release); read-only after. */
typedef struct ks_state {
        _Atomic int ready;               /* 1 once init succeeded, -1 when it failed */
        struct kerf_slice_region *region; /* mapped read-write */
        struct kerf_slice_proc *slot;     /* this process's slot in region->procs */
        pid_t pid;                        /* the pid that owns `slot` (fork: children re-init) */
        void *libcuda;                    /* dlopen handle of the real driver */
        uint64_t ctx_overhead;            /* bytes charged per context (docs/SHIM.md) */
        char err[256];                    /* why init failed, for the one stderr line */
} ks_state;

extern ks_state ks;

/* ---- init.c ---- */

/* Makes sure init ran in this process (once; after fork() in the child again). Returns
 * CUDA_SUCCESS, or CUDA_ERROR_NOT_INITIALIZED after printing ks.err once to stderr. Cheap
 * after the first call (one atomic load and a getpid-free pid check through a fork
 * handler). */
CUresult ks__ensure(void);

/* The real dlsym (never our interposed one). */
void *ks__real_dlsym(void *handle, const char *name);

/* ---- region.c ---- */

/* Reserves n bytes on memory_charged and the slot (contract rule 3). true on success; false
 * when the cap refuses it (memory_denied counted, dead slots reclaimed and retried once). */
bool ks__mem_reserve(uint64_t n);
/* Gives back n bytes reserved earlier (failed driver call, or after a free). */
void ks__mem_release(uint64_t n);
/* Reclaims the slots of dead processes (rule 4). Called on a refused reservation and from
 * the background thread at least once a second. */
void ks__reclaim_dead(void);
/* CLOCK_MONOTONIC in ns. */
uint64_t ks__now_ns(void);

/* ---- background thread (init.c starts it; one per process) ----
 * Every KS_TICK_MS it calls ks__limiter_tick() and, at least once a second, stores
 * heartbeat_ns, reclaims dead slots and reconciles pool reservations (mem.c). */
#define KS_TICK_MS 2u
void ks__limiter_tick(uint64_t now_ns);
void ks__mem_tick(uint64_t now_ns);

/* ---- limiter.c ---- */

/* Called once from init, before `ready`. */
void ks__limiter_init(void);

#endif /* KERF_SHIM_INTERNAL_H */
