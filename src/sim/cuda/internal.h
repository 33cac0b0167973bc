/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h - shared state of the simulated libcuda: devices, contexts, streams, engine */
#ifndef KERF_SIM_CUDA_INTERNAL_H
#define KERF_SIM_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define KERF_CUDA_EXPORT __attribute__((visibility("default")))
#include "cuda_abi.h"
#include "../simstate.h"

/* Older or per-thread entry points the driver still exports but cuda.h no longer declares. */
KERF_CUDA_EXPORT CUresult cuCtxCreate_v2(CUcontext *, unsigned int, CUdevice);
KERF_CUDA_EXPORT CUresult cuCtxCreate_v3(CUcontext *, CUexecAffinityParam *, int, unsigned int,
                                         CUdevice);
KERF_CUDA_EXPORT CUresult cuDeviceGetUuid(CUuuid *, CUdevice);
KERF_CUDA_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice);
KERF_CUDA_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice);
KERF_CUDA_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice, unsigned int);
KERF_CUDA_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *, size_t, CUstream);
KERF_CUDA_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *, size_t, CUmemoryPool,
                                                       CUstream);
KERF_CUDA_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr, CUstream);
KERF_CUDA_EXPORT CUresult cuStreamBeginCapture(CUstream);
KERF_CUDA_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream);
KERF_CUDA_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *, CUgraph, CUgraphNode *, char *,
                                                size_t);
KERF_CUDA_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                           cuuint64_t flags);

#define KC_MAX_DEVS     KERF_SIM_MAX_GPUS
#define KC_GRAN         (2ULL * 1024 * 1024)   /* allocation and VMM granularity */
#define KC_CTX_OVERHEAD (300ULL * 1024 * 1024) /* default device memory a context costs */
#define KC_TIMESLICE_NS 2000000ULL             /* engine time slice: 2 ms */
#define KC_PITCH_ALIGN  512
#define KC_DRIVER_API   13000 /* cuCtxGetApiVersion */

/* Handle kinds in the process-wide registry (handles.c). */
enum kc_kind {
        KC_H_CTX = 1,
        KC_H_STREAM,
        KC_H_EVENT,
        KC_H_MODULE,
        KC_H_FUNC,
        KC_H_POOL,
        KC_H_ARRAY,
        KC_H_MIPMAP,
        KC_H_GRAPH,
        KC_H_NODE,
        KC_H_EXEC,
        KC_H_LIBRARY,
        KC_H_VMM,
};

struct kc_engine;

/* One CUDA device as this process enumerates it (after CUDA_VISIBLE_DEVICES). */
typedef struct kc_dev {
        kerf_sim_target target;
        char uuid[KERF_SIM_MIG_UUID_LEN]; /* "GPU-..." or "MIG-..." */
        char gpu_uuid[KERF_UUID_LEN];     /* the physical GPU's uuid */
        char name[128];
        const kerf_gpu_model *model;
        unsigned sms;
        uint64_t mem_total;
        struct kc_engine *engine; /* lazily started */
        struct CUctx_st *primary; /* NULL until first retain */
        unsigned primary_flags;
        int primary_refs;
        struct CUmemPoolHandle_st *default_pool;
        struct CUmemPoolHandle_st *cur_pool;
        uint64_t charged; /* bytes this process charged on the device */
        int n_ctx;        /* live contexts of this process on the device */
} kc_dev;

typedef struct kc_global {
        pthread_mutex_t mu; /* guards everything below and all handle objects but queues */
        bool init_done;
        CUresult init_result;
        kerf_sim *sim;
        int cuda_version;
        int n_devs;
        kc_dev devs[KC_MAX_DEVS];
        uint64_t ctx_overhead;
        bool virtual_clock;
        pid_t pid;
} kc_global;

extern kc_global kc_g;

/* ---- queued work ---- */

enum kc_op_kind {
        KC_OP_KERNEL = 1,
        KC_OP_COPY,
        KC_OP_SET8,
        KC_OP_SET32,
        KC_OP_COPY2D,
        KC_OP_EVENT_RECORD,
        KC_OP_EVENT_WAIT,
        KC_OP_HOST_FN,
        KC_OP_FREE,
};

typedef struct kc_op {
        struct kc_op *next;
        int kind;
        uint64_t seq;          /* per-context submission order (legacy-stream semantics) */
        uint64_t remaining_ns; /* kernels: device time still to run */
        union {
                struct {
                        void *dst;
                        const void *src;
                        size_t n;
                } copy;
                struct {
                        void *dst;
                        uint32_t val;
                        size_t n;
                } set;
                CUDA_MEMCPY2D c2d;
                struct {
                        struct CUevent_st *ev;
                        uint64_t gen;
                } ev;
                struct {
                        CUhostFn fn;
                        void *arg;
                } host;
                CUdeviceptr free_ptr;
        } u;
} kc_op;

typedef struct CUstream_st {
        uint32_t magic;
        struct CUctx_st *ctx;
        unsigned flags;
        int priority;
        int kind; /* 0 user, 1 legacy, 2 per-thread */
        kc_op *head, *tail;
        uint64_t submitted, completed;
        bool running; /* head op is being executed by the worker */
        struct CUstream_st *next;
        /* capture */
        int cap_status; /* CUstreamCaptureStatus */
        struct CUgraph_st *cap_graph;
        struct CUgraphNode_st *cap_last;
} kc_stream;

typedef struct CUctx_st {
        uint32_t magic;
        int dev;
        unsigned flags;
        bool primary;
        bool charged;
        kc_stream *legacy;
        kc_stream *streams; /* every stream incl. legacy and per-thread ones */
        uint64_t seq;
        struct CUctx_st *next_on_engine;
        unsigned rr; /* round-robin cursor over streams */
} kc_ctx;

typedef struct CUevent_st {
        uint32_t magic;
        kc_ctx *ctx;
        unsigned flags;
        uint64_t rec_gen, done_gen; /* recorded vs completed record operations */
        uint64_t time_ns;           /* device time of the last completed record */
        bool ever_recorded;
} kc_event;

/* ---- engine.c ---- */

/* Starts (once) the engine of device `d` and attaches `ctx` to it. Caller holds kc_g.mu. */
int kc__engine_attach(int d, kc_ctx *ctx);
/* Detaches `ctx` after waiting for its queued work. Caller holds kc_g.mu. */
void kc__engine_detach(int d, kc_ctx *ctx);
/* Appends `op` to stream `s` (of a context on an engine) and wakes the worker. */
void kc__engine_submit(kc_stream *s, kc_op *op);
/* Waits until stream `s` has completed everything submitted so far (until `upto` if != 0). */
void kc__engine_wait_stream(kc_stream *s, uint64_t upto);
/* Waits until every stream of `ctx` is idle. */
void kc__engine_wait_ctx(kc_ctx *ctx);
/* Waits until event `ev`'s last record completed. */
void kc__engine_wait_event(kc_event *ev);
/* Lock for stream queues and event state of the engine serving ctx. */
void kc__engine_lock(kc_ctx *ctx);
void kc__engine_unlock(kc_ctx *ctx);
/* The device time now (engine clock: monotonic, or the shared virtual clock). */
uint64_t kc__engine_now(kc_ctx *ctx);
/* Stops every worker (library unload / process exit) and releases the GPU token. */
void kc__engine_shutdown(void);

/* ---- context.c ---- */

/* Current context of the calling thread or NULL. */
kc_ctx *kc__ctx_current(void);
/* Checks init and returns the current context, or writes the error. */
CUresult kc__ctx_require(kc_ctx **ret);
/* Resolves a stream argument: NULL/LEGACY/PER_THREAD per the ptsz flag. Caller holds kc_g.mu. */
CUresult kc__stream_resolve(CUstream h, bool per_thread, kc_stream **ret);

/* ---- stream.c ---- */

/* Submits a copy of `tmpl` to s, or records it into s's capture graph. Caller holds mu. */
CUresult kc__submit(kc_stream *s, const kc_op *tmpl);

/* ---- memory.c ---- */

/* Charges / uncharges device memory of device d (simstate); CUDA error on failure. */
CUresult kc__mem_charge(int d, uint64_t bytes);
void kc__mem_uncharge(int d, uint64_t bytes);
/* Checks [p, p+n) lies in memory the process may touch as device memory. Caller holds mu. */
bool kc__mem_range_ok(CUdeviceptr p, size_t n);
/* Frees every allocation owned by ctx (context destroy). Caller holds kc_g.mu. */
void kc__mem_ctx_destroyed(kc_ctx *ctx);
/* Releases pool memory above each pool's release threshold (at synchronisation points). */
void kc__pool_release_excess(int d);
/* Executes a stream-ordered free (from the worker). Takes kc_g.mu. */
void kc__mem_free_ordered(CUdeviceptr p);

/* ---- module.c / graph.c ---- */

/* Device time of one launch of `f` with the grid given on device d, in ns. */
uint64_t kc__func_cost_ns(CUfunction f, int d, uint64_t blocks);
/* Validates f and returns its owning context. */
CUresult kc__func_check(CUfunction f, kc_ctx **ret_ctx);
/* Records or enqueues a kernel launch on s (honours stream capture). Caller holds kc_g.mu. */
CUresult kc__launch(kc_stream *s, CUfunction f, uint64_t blocks);
/* If s is capturing: adds a node copying `op` to the capture graph and returns true. */
bool kc__capture_op(kc_stream *s, const kc_op *op, CUresult *ret);
/* s is capturing: adds a graph alloc node of `size` bytes (its address in *dptr) / a free node
 * of graph allocation dptr after s's last captured node. */
CUresult kc__capture_mem_alloc(kc_stream *s, size_t size, CUdeviceptr *dptr);
CUresult kc__capture_mem_free(kc_stream *s, CUdeviceptr dptr);

/* ---- handles.c ---- */

void kc__handle_add(const void *h, int kind);
void kc__handle_del(const void *h);
bool kc__handle_ok(const void *h, int kind);

/* ---- init.c ---- */

/* CUDA_SUCCESS once cuInit succeeded; otherwise NOT_INITIALIZED / the cuInit failure. */
CUresult kc__check_init(void);
/* Validates a device ordinal. */
CUresult kc__check_dev(CUdevice d);
/* Converts a kerf/errno code to the CUresult the driver would give. */
CUresult kc__from_errno(int err);

/* Lock helpers for kc_g.mu. */
void kc__lock(void);
void kc__unlock(void);

/* `v` rounded up to a multiple of `a` (> 0); 0 when that does not fit in 64 bits, which
 * callers treat as "too large" (0 < v). */
static inline uint64_t kc_round_up(uint64_t v, uint64_t a)
{
        if (v > UINT64_MAX - (a - 1))
                return 0;
        return (v + a - 1) / a * a;
}

/* Valid cache and shared-memory bank preferences (the context's and a function's setters). */
static inline bool kc_cache_config_ok(CUfunc_cache c)
{
        return c >= CU_FUNC_CACHE_PREFER_NONE && c <= CU_FUNC_CACHE_PREFER_EQUAL;
}

static inline bool kc_shmem_config_ok(CUsharedconfig c)
{
        return c >= CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE &&
               c <= CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE;
}

#endif /* KERF_SIM_CUDA_INTERNAL_H */
