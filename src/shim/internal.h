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
 *               measurement, FROZEN / YIELD holds; bucket.c its pure parts (estimator,
 *               refill, launch-shape hash).
 *
 * Exported: only the interposed entry points (libkerf-cuda.map, -fvisibility=hidden).
 * Hot path (unthrottled launch): atomics and process-local reads only - no getenv,
 * allocation, syscall or contended lock.
 */

#include <pthread.h>
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
        _Atomic int ready;                /* 1 once init succeeded, -1 when it failed */
        struct kerf_slice_region *region; /* mapped read-write */
        struct kerf_slice_proc *slot;     /* this process's slot in region->procs */
        pid_t pid;                        /* the pid that owns `slot` (fork: children re-init) */
        void *libcuda;                    /* dlopen handle of the real driver */
        uint64_t ctx_overhead;            /* bytes charged per context (docs/SHIM.md) */
        char err[256];                    /* why init failed, for the one stderr line */
        /* Added by init.c's owner (append only). */
        _Atomic int exited; /* 1 after the exit handler gave the slot back: no more accounting */
        int slot_index;     /* index of `slot` in region->procs */
        /* 1 while the background thread sleeps longer than KS_TICK_MS: the launch path then
         * reads the clock itself (the tick's coarse copy may be stale). */
        _Atomic int ticker_idle;
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
/* For code that may run before the sanitizer runtimes are initialised (their start-up calls
 * dlsym, i.e. ours, before shadow memory exists): not instrumented. */
#define KS_NO_SANITIZE __attribute__((no_sanitize("address", "undefined")))

/* ---- region.c ---- */

/* Reserves n bytes on memory_charged and the slot (contract rule 3). true on success; false
 * when the cap refuses it (memory_denied counted, dead slots reclaimed and retried once). */
bool ks__mem_reserve(uint64_t n);
/* As ks__mem_reserve, but neither counts a denial nor reclaims (pool reconciliation). */
bool ks__mem_reserve_quiet(uint64_t n);
/* Gives back n bytes reserved earlier (failed driver call, or after a free). */
void ks__mem_release(uint64_t n);
/* Reclaims the slots of dead processes (rule 4): every slot. Called on a refused reservation
 * and when no slot is free. */
void ks__reclaim_dead(void);
/* The background thread's share of rule 4 (every KS_SLOW_MS): checks the slots after its
 * own, in ring order, up to the second one whose owner is alive, reclaiming the dead ones on
 * the way. Each dead slot lies after some live owner, who reaches it: the task as a whole
 * checks every slot within one KS_SLOW_MS, at a cost per process that does not grow with
 * the number of processes. */
void ks__reclaim_tick(void);
/* CLOCK_MONOTONIC in ns. */
uint64_t ks__now_ns(void);

/* ---- background thread (init.c starts it; one per process) ----
 * Every KS_TICK_MS while the limiter reports work (launches since the last tick, timing
 * pairs in flight), backing off to KS_IDLE_TICK_MS otherwise, it calls ks__limiter_tick();
 * every KS_SLOW_MS (at least once a second, contract) it stores heartbeat_ns, checks the
 * neighbouring slots for dead owners (ks__reclaim_tick) and reconciles pool reservations.
 * docs/SHIM.md "Background thread". */
#define KS_TICK_MS      2u
#define KS_IDLE_TICK_MS 100u
#define KS_SLOW_MS      250u
/* Returns true while the process needs KS_TICK_MS ticks. */
bool ks__limiter_tick(uint64_t now_ns);
/* Exit hook: publishes what was counted since the last tick (no driver call). */
void ks__limiter_exit(void);
/* A context is gone (destroyed, last primary release, primary reset): its timing events
 * went with it. Caller may hold ks__mem_mu. */
void ks__limiter_ctx_gone(CUcontext ctx);
void ks__mem_tick(uint64_t now_ns);

/* ---- real.c ---- */

/* Opens the real driver (dlopen "libcuda.so.1") and fills ks_real, once per process image.
 * Independent of the region, so cuGetProcAddress/dlsym work before cuInit. Returns 0, or -1
 * with a reason in ks.err. Thread-safe; safe to call from inside dlsym. */
int ks__real_resolve(void);
/* Maps a pointer a real lookup returned to our wrapper: our wrapper when `fn` is the real
 * function of an interposed entry point (compared by pointer) or already one of our wrappers;
 * NULL when the shim does not interpose it (the caller then passes `fn` through). */
void *ks__cuda_wrapper_for(void *fn);

/* ---- nvml.c ---- */

/* The same for NVML: our wrapper when `fn`, returned by a real lookup of `name`, is the
 * real NVML function we interpose; NULL otherwise. */
void *ks__nvml_wrapper_for(const char *name, void *fn);

/* ---- mem.c (and mem_*.c) ---- */

/* Called once by init after the slot is claimed (reads KERF_SHIM_CTX_OVERHEAD_MIB). */
void ks__mem_init(void);
/* Process exit: forgets the tables (the slot is given back by init.c). */
void ks__mem_exit(void);
/* fork(): prepare / parent / child handlers for the allocation tables. The child forgets
 * every record of the parent (the child never inherits the parent's charges). */
void ks__mem_atfork_prepare(void);
void ks__mem_atfork_parent(void);
void ks__mem_atfork_child(void);
/* The allocation tables' mutex: allocation, free, context and pool paths only (never a
 * launch path). Held across the real call where the record and the call must not be
 * separated (pools, contexts, frees). */
extern pthread_mutex_t ks__mem_mu;
/* Bytes the driver takes for n: rounded up to KS_GRAN; UINT64_MAX on overflow. */
#define KS_GRAN (2ull * 1024 * 1024)
uint64_t ks__round(uint64_t n);
/* mem.c: takes the record of a linear allocation out of its table (0 when unknown), or puts
 * one back. Caller holds ks__mem_mu. Used by cuMemFreeAsync on cuMemAlloc memory. */
uint64_t ks__linear_take_locked(CUdeviceptr p);
void ks__linear_put_locked(CUdeviceptr p, uint64_t bytes);
/* mem_pool.c: frees (through cuMemFree_v2) memory that came from a pool; returns
 * CUDA_ERROR_NOT_FOUND without calling the driver when p is not a pool allocation. */
CUresult ks__pool_free_sync(CUdeviceptr p);
/* mem_pool.c: reconciles every known pool's charge with its reserved size. */
void ks__pools_reconcile(void);
/* mem_pool.c: fork child / exit. */
void ks__pools_forget(void);
/* mem_graph.c: reconciles the graph memory reservations' charge (pool reconcile points);
 * fork child / exit. */
void ks__graphmem_reconcile(void);
void ks__graphmem_forget(void);
/* Stores now into last_activity_ns (slot and region); activity rule 7. */
void ks__activity(void);

/* ---- views.c ---- */

/* The slice's memory view from the region: total = min(limit, device memory), free =
 * total - charged (>= 0). Requires a successful ks__ensure(). */
void ks__view(uint64_t *ret_total, uint64_t *ret_free);

/* ---- region.c (slot) ---- */

/* Claims a free slot (rule 2). Returns 0, or -1 with ks.err set. */
int ks__slot_claim(void);
/* Gives the slot's memory back and frees it (normal exit). */
void ks__slot_free(void);
/* Stores heartbeat_ns. */
void ks__heartbeat(uint64_t now_ns);
/* /proc/PID/stat field 22 (starttime) of pid, or 0 when unreadable. */
uint64_t ks__proc_starttime(pid_t pid);

/* ---- limiter.c ---- */

/* Called once from init, before `ready`. */
void ks__limiter_init(void);

#endif /* KERF_SHIM_INTERNAL_H */
