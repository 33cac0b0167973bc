/* SPDX-License-Identifier: Apache-2.0 */
/* ctxmisc.c - context limits/configs/ids, peer access, device queries, profiler, export tables */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "legacy.h"
#include "mem.h"
#include "pci_bus_id.h"

/* Per-context settings, kept beside the context record (internal.h) in a small table: a
 * process has few contexts. Guarded by kc_g.mu; ctx_free forgets an entry. */
#define KC_CTX_SLOTS 64

typedef struct ctx_extra {
        const kc_ctx *ctx;
        unsigned long long id;
        size_t limit[CU_LIMIT_MAX];
        bool limit_set[CU_LIMIT_MAX];
        int cache_config;
        int shmem_config;
} ctx_extra;

static ctx_extra extras[KC_CTX_SLOTS];
static unsigned long long next_ctx_id = 1;

/* The entry of ctx, created on first use (NULL when the table is full). Caller holds mu. */
static ctx_extra *extra_of(const kc_ctx *ctx)
{
        ctx_extra *free_slot = NULL;
        for (int i = 0; i < KC_CTX_SLOTS; i++) {
                if (extras[i].ctx == ctx)
                        return &extras[i];
                if (!extras[i].ctx && !free_slot)
                        free_slot = &extras[i];
        }
        if (free_slot) {
                memset(free_slot, 0, sizeof(*free_slot));
                free_slot->ctx = ctx;
                free_slot->id = next_ctx_id++;
        }
        return free_slot;
}

void kc__ctxmisc_forget(const kc_ctx *ctx)
{
        for (int i = 0; i < KC_CTX_SLOTS; i++)
                if (extras[i].ctx == ctx)
                        memset(&extras[i], 0, sizeof(extras[i]));
}

/* Driver defaults of a fresh context (H100/A100, CUDA 12/13). */
static size_t limit_default(CUlimit l)
{
        switch (l) {
        case CU_LIMIT_STACK_SIZE:
                return 1024;
        case CU_LIMIT_PRINTF_FIFO_SIZE:
                return 1048576;
        case CU_LIMIT_MALLOC_HEAP_SIZE:
                return 8388608;
        case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
                return 2;
        case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT:
                return 2048;
        case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
                return 64;
        default:
                return 0; /* PERSISTING_L2_CACHE_SIZE */
        }
}

/* CU_LIMIT_SHMEM_SIZE and the CIG limits apply to CIG (graphics-interop) contexts only. */
static bool limit_supported(CUlimit l)
{
        return l >= CU_LIMIT_STACK_SIZE && l <= CU_LIMIT_PERSISTING_L2_CACHE_SIZE;
}

KERF_CUDA_EXPORT CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!pvalue || (unsigned)limit >= CU_LIMIT_MAX)
                return CUDA_ERROR_INVALID_VALUE;
        if (!limit_supported(limit))
                return CUDA_ERROR_UNSUPPORTED_LIMIT;
        kc__lock();
        ctx_extra *x = extra_of(ctx);
        *pvalue = x && x->limit_set[limit] ? x->limit[limit] : limit_default(limit);
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if ((unsigned)limit >= CU_LIMIT_MAX)
                return CUDA_ERROR_INVALID_VALUE;
        if (!limit_supported(limit))
                return CUDA_ERROR_UNSUPPORTED_LIMIT;
        int l2 = 0;
        cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, ctx->dev);
        switch (limit) {
        case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
                /* A hint between 0 and 128 bytes, rounded down to a power of two by the driver. */
                if (value > 128)
                        return CUDA_ERROR_INVALID_VALUE;
                for (size_t p = 128; p; p /= 2)
                        if (value >= p) {
                                value = p;
                                break;
                        }
                break;
        case CU_LIMIT_PERSISTING_L2_CACHE_SIZE:
                /* At most 75 % of L2 can be set aside for persisting accesses. */
                if (value > (size_t)l2 / 4 * 3)
                        value = (size_t)l2 / 4 * 3;
                break;
        case CU_LIMIT_STACK_SIZE:
                value = (value + 15) / 16 * 16;
                break;
        default:
                break;
        }
        kc__lock();
        ctx_extra *x = extra_of(ctx);
        if (x) {
                x->limit[limit] = value;
                x->limit_set[limit] = true;
        }
        kc__unlock();
        return x ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Stream priorities: [least, greatest] = [0, -5], the range cuStreamCreateWithPriority clamps
 * to (stream.c). Either pointer may be NULL. */
KERF_CUDA_EXPORT CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (leastPriority)
                *leastPriority = 0;
        if (greatestPriority)
                *greatestPriority = -5;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuCtxGetCacheConfig(CUfunc_cache *pconfig)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!pconfig)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        ctx_extra *x = extra_of(ctx);
        *pconfig = x ? (CUfunc_cache)x->cache_config : CU_FUNC_CACHE_PREFER_NONE;
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuCtxSetCacheConfig(CUfunc_cache config)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!kc_cache_config_ok(config))
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        ctx_extra *x = extra_of(ctx);
        if (x)
                x->cache_config = config;
        kc__unlock();
        return x ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Bank size is fixed at four bytes on every GPU kerf models: the setter is accepted and has no
 * effect, and the getter keeps answering FOUR_BYTE_BANK_SIZE, as on Volta and later. */
KERF_CUDA_EXPORT CUresult cuCtxGetSharedMemConfig(CUsharedconfig *pConfig)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!pConfig)
                return CUDA_ERROR_INVALID_VALUE;
        *pConfig = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuCtxSetSharedMemConfig(CUsharedconfig config)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!kc_shmem_config_ok(config))
                return CUDA_ERROR_INVALID_VALUE;
        return CUDA_SUCCESS;
}

/* Ids are unique for the life of the process (never reused), starting at 1. */
KERF_CUDA_EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!ctxId)
                return CUDA_ERROR_INVALID_VALUE;
        if (!ctx && !(ctx = kc__ctx_current()))
                return CUDA_ERROR_INVALID_CONTEXT;
        if (!kc__handle_ok(ctx, KC_H_CTX))
                return CUDA_ERROR_INVALID_CONTEXT;
        kc__lock();
        ctx_extra *x = extra_of(ctx);
        if (x)
                *ctxId = x->id;
        kc__unlock();
        return x ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Replaces the current context's flags; only scheduling, SYNC_MEMOPS and the coredump flags
 * may change after creation (MAP_HOST and LMEM_RESIZE_TO_MAX are fixed at creation). */
KERF_CUDA_EXPORT CUresult cuCtxSetFlags(unsigned int flags)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        unsigned settable = CU_CTX_SCHED_MASK | CU_CTX_SYNC_MEMOPS | CU_CTX_COREDUMP_ENABLE |
                            CU_CTX_USER_COREDUMP_ENABLE;
        if (flags & ~settable || (flags & CU_CTX_SCHED_MASK) > CU_CTX_SCHED_BLOCKING_SYNC ||
            (flags & CU_CTX_SCHED_MASK) == 3)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        ctx->flags = (ctx->flags & ~settable) | flags;
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuCtxResetPersistingL2Cache(void)
{
        kc_ctx *ctx;
        return kc__ctx_require(&ctx);
}

/* Without MPS a context owns every SM of its device (or MIG instance). */
KERF_CUDA_EXPORT CUresult cuCtxGetExecAffinity(CUexecAffinityParam *pExecAffinity,
                                               CUexecAffinityType type)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!pExecAffinity)
                return CUDA_ERROR_INVALID_VALUE;
        if (type != CU_EXEC_AFFINITY_TYPE_SM_COUNT)
                return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
        pExecAffinity->type = type;
        pExecAffinity->param.smCount.val = kc_g.devs[ctx->dev].sms;
        return CUDA_SUCCESS;
}

/* Execution affinity needs MPS, which is not simulated: reported unsupported. */
KERF_CUDA_EXPORT CUresult cuDeviceGetExecAffinitySupport(int *pi, CUexecAffinityType type,
                                                         CUdevice dev)
{
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        if (!pi || (unsigned)type >= CU_EXEC_AFFINITY_TYPE_MAX)
                return CUDA_ERROR_INVALID_VALUE;
        *pi = 0;
        return CUDA_SUCCESS;
}

/* Peer access is never possible (cuDeviceCanAccessPeer answers 0), so enabling it fails the way
 * the driver fails for GPUs without a peer path. */
KERF_CUDA_EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (Flags)
                return CUDA_ERROR_INVALID_VALUE;
        if (!peerContext || !kc__handle_ok(peerContext, KC_H_CTX))
                return CUDA_ERROR_INVALID_CONTEXT;
        if (peerContext->dev == ctx->dev)
                return CUDA_ERROR_INVALID_DEVICE;
        return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
}

KERF_CUDA_EXPORT CUresult cuCtxDisablePeerAccess(CUcontext peerContext)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!peerContext || !kc__handle_ok(peerContext, KC_H_CTX))
                return CUDA_ERROR_INVALID_CONTEXT;
        return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
}

KERF_CUDA_EXPORT CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib,
                                                  CUdevice srcDevice, CUdevice dstDevice)
{
        CUresult r = kc__check_dev(srcDevice);
        if (!r)
                r = kc__check_dev(dstDevice);
        if (r)
                return r;
        if (!value || attrib < CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK ||
            attrib > CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED)
                return CUDA_ERROR_INVALID_VALUE;
        if (srcDevice == dstDevice)
                return CUDA_ERROR_INVALID_DEVICE;
        *value = 0; /* no peer path between simulated GPUs */
        return CUDA_SUCCESS;
}

/* LUIDs exist on Windows only. */
KERF_CUDA_EXPORT CUresult cuDeviceGetLuid(char *luid, unsigned int *deviceNodeMask, CUdevice dev)
{
        (void)luid;
        (void)deviceNodeMask;
        CUresult r = kc__check_dev(dev);
        return r ? r : CUDA_ERROR_NOT_SUPPORTED;
}

/* Accepts "domain:bus:device.function" and "bus:device.function" (hex, any case), as the driver
 * does; a MIG device shares its parent's bus id, so the first matching ordinal is returned. */
KERF_CUDA_EXPORT CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!dev || !pciBusId)
                return CUDA_ERROR_INVALID_VALUE;
        unsigned dom, bus, d, fn;
        if (!kerf_pci_bus_id_parse(pciBusId, &dom, &bus, &d, &fn))
                return CUDA_ERROR_INVALID_VALUE;
        for (int i = 0; i < kc_g.n_devs; i++) {
                char id[32];
                unsigned idom, ibus, idev, ifn;
                if (cuDeviceGetPCIBusId(id, sizeof(id), i) ||
                    !kerf_pci_bus_id_parse(id, &idom, &ibus, &idev, &ifn))
                        continue;
                if (idom == dom && ibus == bus && idev == d && ifn == fn) {
                        *dev = i;
                        return CUDA_SUCCESS;
                }
        }
        return CUDA_ERROR_INVALID_DEVICE;
}

KERF_CUDA_EXPORT CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
        if (!major || !minor)
                return CUDA_ERROR_INVALID_VALUE;
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        *major = (int)kc_g.devs[dev].model->cc_major;
        *minor = (int)kc_g.devs[dev].model->cc_minor;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuDeviceGetProperties(CUdevprop *prop, CUdevice dev)
{
        if (!prop)
                return CUDA_ERROR_INVALID_VALUE;
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        static const CUdevice_attribute dims[] = {
            CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
            CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
            CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z};
        CUdevprop p;
        memset(&p, 0, sizeof(p));
        cuDeviceGetAttribute(&p.maxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev);
        for (int i = 0; i < 3; i++) {
                cuDeviceGetAttribute(&p.maxThreadsDim[i], dims[i], dev);
                cuDeviceGetAttribute(&p.maxGridSize[i], dims[3 + i], dev);
        }
        cuDeviceGetAttribute(&p.sharedMemPerBlock, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
                             dev);
        cuDeviceGetAttribute(&p.totalConstantMemory, CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY,
                             dev);
        cuDeviceGetAttribute(&p.SIMDWidth, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev);
        p.memPitch = 2147483647;
        cuDeviceGetAttribute(&p.regsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, dev);
        cuDeviceGetAttribute(&p.clockRate, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
        p.textureAlign = 512;
        *prop = p;
        return CUDA_SUCCESS;
}

/* Makes `pool` (of device dev) the pool cuMemAllocAsync uses on dev. */
KERF_CUDA_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        if (!pool)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        if (!kc__handle_ok(pool, KC_H_POOL) || kc__pool_dev(pool) < 0)
                r = CUDA_ERROR_INVALID_VALUE;
        else if (kc__pool_dev(pool) != dev)
                r = CUDA_ERROR_INVALID_DEVICE;
        else
                kc_g.devs[dev].cur_pool = pool;
        kc__unlock();
        return r;
}

/* No profiler is attached to a simulated GPU: both succeed once a context is current. */
KERF_CUDA_EXPORT CUresult cuProfilerStart(void)
{
        kc_ctx *ctx;
        return kc__ctx_require(&ctx);
}

KERF_CUDA_EXPORT CUresult cuProfilerStop(void)
{
        kc_ctx *ctx;
        return kc__ctx_require(&ctx);
}

/* The export tables are private driver interfaces (cudart's, the profiler's) whose contents the
 * simulator cannot provide. Every table id is answered as an unknown one: INVALID_VALUE, with
 * *ppExportTable left untouched. A caller that probes optional tables carries on; cudart itself
 * cannot run on the simulated driver anyway (it needs real module images). */
KERF_CUDA_EXPORT CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
        (void)ppExportTable;
        (void)pExportTableId;
        return CUDA_ERROR_INVALID_VALUE;
}
