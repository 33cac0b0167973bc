/* SPDX-License-Identifier: Apache-2.0 */
/* mem.c - linear, pitched, managed, array and VMM allocations: reserve, call, record, free */
#include <stdlib.h>
#include <string.h>

#include "syms.h"
#include "cuda_array_size.h"
#include "u64map.h"

/*
 * Every path follows contract rule 3: reserve the bytes the driver will take on the shared
 * memory_charged word, call the real driver, undo the reservation if it failed, record
 * pointer/handle -> bytes in a process-local table, and release exactly the recorded bytes
 * after a successful free. Size formulas (docs/SHIM.md "Memory"):
 *
 *   cuMemAlloc_v2, cuMemAllocManaged   round_up(bytes, 2 MiB)
 *   cuMemAllocPitch_v2                 round_up(pitch * height, 2 MiB), reserved with the
 *                                      pitch estimate round_up(width, 512) and corrected
 *                                      to the pitch the driver returned
 *   cuArrayCreate_v2, cuArray3DCreate_v2
 *                                      round_up(w * max(h,1) * max(d,1) * elem * channels, 2 MiB)
 *   cuMipmappedArrayCreate             round_up(sum over levels of the above, 2 MiB);
 *                                      each level halves w, h and (unless layered) d
 *   cuMemCreate (device location)      round_up(size, 2 MiB); host locations: nothing
 *
 * The driver frees a context's linear memory and arrays when the context is destroyed
 * (cuCtxDestroy, last primary release, primary reset): their records go with it.
 */

pthread_mutex_t ks__mem_mu = PTHREAD_MUTEX_INITIALIZER;

enum { KS_K_LINEAR = 1, KS_K_MANAGED, KS_K_ARRAY, KS_K_MIPMAP };

typedef struct ks_rec {
        uint64_t bytes;
        CUcontext ctx; /* current context at allocation (the driver frees with it) */
        int kind;
        struct ks_rec *next; /* free list */
} ks_rec;

/* A VMM physical allocation: charged from cuMemCreate until it is released and unmapped. */
typedef struct ks_vmm {
        uint64_t bytes;
        unsigned maps;
        bool released;
} ks_vmm;

typedef struct ks_map {
        CUdeviceptr ptr;
        size_t size;
        CUmemGenericAllocationHandle handle;
} ks_map;

#define KS_MAX_DEV 64

static kerf_u64map linear;  /* CUdeviceptr -> ks_rec */
static kerf_u64map handles; /* CUarray / CUmipmappedArray -> ks_rec */
static kerf_u64map vmm;     /* CUmemGenericAllocationHandle -> ks_vmm */
static kerf_u64map ctxs;    /* created CUcontext -> ks_rec (bytes = overhead) */
static ks_map *maps;
static size_t nmaps, capmaps;
static struct {
        CUcontext ctx;
        int refs;
        uint64_t bytes;
} prim[KS_MAX_DEV];

#define KS_GUARD(fn)                                                                               \
        do {                                                                                       \
                CUresult ks_r_ = ks__ensure();                                                     \
                if (ks_r_ != CUDA_SUCCESS)                                                         \
                        return ks_r_;                                                              \
                if (!ks_real.fn)                                                                   \
                        return CUDA_ERROR_NOT_SUPPORTED;                                           \
        } while (0)

uint64_t ks__round(uint64_t n)
{
        if (n > UINT64_MAX - (KS_GRAN - 1))
                return UINT64_MAX;
        return (n + KS_GRAN - 1) & ~(KS_GRAN - 1);
}

void ks__mem_init(void)
{
        uint64_t mib = 300;
        const char *e = getenv("KERF_SHIM_CTX_OVERHEAD_MIB");
        if (e && *e) {
                char *end;
                unsigned long long v = strtoull(e, &end, 10);
                if (!*end && v <= 65536)
                        mib = v;
        }
        ks.ctx_overhead = mib * 1024 * 1024;
}

static CUcontext current_ctx(void)
{
        CUcontext c = NULL;
        if (ks_real.cuCtxGetCurrent && ks_real.cuCtxGetCurrent(&c) != CUDA_SUCCESS)
                c = NULL;
        return c;
}

/* Records come from a free list refilled KS_REC_CHUNK at a time and are never handed back
 * to malloc: an allocate/free pair costs no malloc, free or mmap (docs/SHIM.md). */
#define KS_REC_CHUNK 64
static ks_rec *rec_free_list;

static ks_rec *rec_new_locked(void)
{
        if (!rec_free_list) {
                ks_rec *c = malloc(KS_REC_CHUNK * sizeof(*c));
                if (!c)
                        return NULL;
                for (size_t i = 0; i < KS_REC_CHUNK; i++) {
                        c[i].next = rec_free_list;
                        rec_free_list = &c[i];
                }
        }
        ks_rec *r = rec_free_list;
        rec_free_list = r->next;
        return r;
}

static void rec_free_locked(ks_rec *r)
{
        if (!r)
                return;
        r->next = rec_free_list;
        rec_free_list = r;
}

/* Records key -> bytes (caller holds ks__mem_mu); on ENOMEM the charge stays (a
 * safe-direction leak). */
static void record_locked(kerf_u64map *m, uint64_t key, uint64_t bytes, int kind, CUcontext ctx)
{
        ks_rec *r = rec_new_locked();
        if (!r)
                return;
        r->bytes = bytes;
        r->kind = kind;
        r->ctx = ctx;
        if (kerf_u64map_put(m, key, r) < 0)
                rec_free_locked(r);
}

static void record(kerf_u64map *m, uint64_t key, uint64_t bytes, int kind, CUcontext ctx)
{
        pthread_mutex_lock(&ks__mem_mu);
        record_locked(m, key, bytes, kind, ctx);
        pthread_mutex_unlock(&ks__mem_mu);
}

/* Takes a record out of m into *out; false when unknown. */
static bool take(kerf_u64map *m, uint64_t key, ks_rec *out)
{
        pthread_mutex_lock(&ks__mem_mu);
        ks_rec *r = key ? kerf_u64map_del(m, key) : NULL;
        if (r) {
                *out = *r;
                rec_free_locked(r);
        }
        pthread_mutex_unlock(&ks__mem_mu);
        return r != NULL;
}

static void put_back(kerf_u64map *m, uint64_t key, const ks_rec *r)
{
        record(m, key, r->bytes, r->kind, r->ctx); /* forgotten on ENOMEM: charged until exit */
}

uint64_t ks__linear_take_locked(CUdeviceptr p)
{
        ks_rec *r = p ? kerf_u64map_del(&linear, p) : NULL;
        uint64_t n = r ? r->bytes : 0;
        rec_free_locked(r);
        return n;
}

void ks__linear_put_locked(CUdeviceptr p, uint64_t bytes)
{
        record_locked(&linear, p, bytes, KS_K_LINEAR, NULL);
}

/* The driver destroyed ctx and everything allocated in it: release those records. Caller
 * holds ks__mem_mu. */
static void ctx_gone_locked(CUcontext ctx)
{
        kerf_u64map *tabs[] = {&linear, &handles};
        if (!ctx)
                return;
        for (size_t t = 0; t < 2; t++) {
                kerf_u64map *m = tabs[t];
                kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
                uint64_t k;
                void *val;
                while (kerf_u64map_next(m, &it, &k, &val)) {
                        ks_rec *r = val;
                        if (r->ctx != ctx)
                                continue;
                        kerf_u64map_del(m, k); /* the entry just returned: allowed */
                        ks__mem_release(r->bytes);
                        rec_free_locked(r);
                }
        }
}

/* ---- linear memory ---- */

static CUresult alloc_linear(CUdeviceptr *dptr, size_t size, int kind, unsigned flags)
{
        uint64_t n = ks__round(size);
        if (!dptr || !size)
                return kind == KS_K_MANAGED ? ks_real.cuMemAllocManaged(dptr, size, flags)
                                            : ks_real.cuMemAlloc_v2(dptr, size);
        if (!ks__mem_reserve(n))
                return CUDA_ERROR_OUT_OF_MEMORY;
        CUresult r = kind == KS_K_MANAGED ? ks_real.cuMemAllocManaged(dptr, size, flags)
                                          : ks_real.cuMemAlloc_v2(dptr, size);
        if (r != CUDA_SUCCESS) {
                ks__mem_release(n);
                return r;
        }
        record(&linear, *dptr, n, kind, current_ctx());
        return r;
}

KS_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
        KS_GUARD(cuMemAlloc_v2);
        return alloc_linear(dptr, bytesize, KS_K_LINEAR, 0);
}

KS_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
        KS_GUARD(cuMemAllocManaged);
        return alloc_linear(dptr, bytesize, KS_K_MANAGED, flags);
}

#define KS_PITCH_ALIGN 512u

KS_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                                      size_t Height, unsigned int ElementSizeBytes)
{
        KS_GUARD(cuMemAllocPitch_v2);
        if (!dptr || !pPitch || !WidthInBytes || !Height)
                return ks_real.cuMemAllocPitch_v2(dptr, pPitch, WidthInBytes, Height,
                                                  ElementSizeBytes);
        uint64_t pitch =
            ((uint64_t)WidthInBytes + KS_PITCH_ALIGN - 1) / KS_PITCH_ALIGN * KS_PITCH_ALIGN;
        uint64_t raw;
        if (pitch < WidthInBytes || __builtin_mul_overflow(pitch, (uint64_t)Height, &raw))
                return CUDA_ERROR_OUT_OF_MEMORY; /* no device holds that */
        uint64_t est = ks__round(raw);
        if (!ks__mem_reserve(est))
                return CUDA_ERROR_OUT_OF_MEMORY;
        CUresult r =
            ks_real.cuMemAllocPitch_v2(dptr, pPitch, WidthInBytes, Height, ElementSizeBytes);
        if (r != CUDA_SUCCESS) {
                ks__mem_release(est);
                return r;
        }
        /* Correct to the pitch the driver chose (its alignment may exceed our estimate). */
        uint64_t actual = est;
        if (!__builtin_mul_overflow((uint64_t)*pPitch, (uint64_t)Height, &raw))
                actual = ks__round(raw);
        if (actual > est && !ks__mem_reserve(actual - est)) {
                ks_real.cuMemFree_v2(*dptr);
                ks__mem_release(est);
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        if (actual < est)
                ks__mem_release(est - actual);
        record(&linear, *dptr, actual, KS_K_LINEAR, current_ctx());
        return r;
}

KS_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
        KS_GUARD(cuMemFree_v2);
        ks_rec rec;
        if (!take(&linear, dptr, &rec)) {
                CUresult r = ks__pool_free_sync(dptr);
                return r == CUDA_ERROR_NOT_FOUND ? ks_real.cuMemFree_v2(dptr) : r;
        }
        CUresult r = ks_real.cuMemFree_v2(dptr);
        if (r != CUDA_SUCCESS) {
                put_back(&linear, dptr, &rec);
                return r;
        }
        ks__mem_release(rec.bytes);
        return r;
}

/* ---- arrays ---- */

/* The one array size rule (src/common/cuda_array_size.h); formats the shim does not know count
 * 16 bytes per element (the widest) so that an unknown format is over- rather than
 * under-charged. 0 when invalid or too large to describe. */
static uint64_t array_bytes(uint64_t w, uint64_t h, uint64_t d, CUarray_format f, unsigned ch)
{
        return kerf_cuda_array_bytes(w, h, d, f, ch, 16);
}

/* Reserve n (0: let the driver judge an invalid descriptor), call, record. */
#define KS_ARRAY_CALL(n, kind, handle, call)                                                       \
        do {                                                                                       \
                uint64_t ks_n_ = (n) ? ks__round(n) : 0;                                           \
                if (!ks__mem_reserve(ks_n_))                                                       \
                        return CUDA_ERROR_OUT_OF_MEMORY;                                           \
                CUresult ks_r_ = (call);                                                           \
                if (ks_r_ != CUDA_SUCCESS) {                                                       \
                        ks__mem_release(ks_n_);                                                    \
                        return ks_r_;                                                              \
                }                                                                                  \
                if (ks_n_)                                                                         \
                        record(&handles, (uint64_t)(uintptr_t)(handle), ks_n_, kind,               \
                               current_ctx());                                                     \
                return ks_r_;                                                                      \
        } while (0)

KS_EXPORT CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *d)
{
        KS_GUARD(cuArrayCreate_v2);
        uint64_t n =
            pHandle && d ? array_bytes(d->Width, d->Height, 0, d->Format, d->NumChannels) : 0;
        KS_ARRAY_CALL(n, KS_K_ARRAY, *pHandle, ks_real.cuArrayCreate_v2(pHandle, d));
}

KS_EXPORT CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
        KS_GUARD(cuArray3DCreate_v2);
        uint64_t n = pHandle && d
                         ? array_bytes(d->Width, d->Height, d->Depth, d->Format, d->NumChannels)
                         : 0;
        KS_ARRAY_CALL(n, KS_K_ARRAY, *pHandle, ks_real.cuArray3DCreate_v2(pHandle, d));
}

KS_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
                                          const CUDA_ARRAY3D_DESCRIPTOR *d,
                                          unsigned int numMipmapLevels)
{
        KS_GUARD(cuMipmappedArrayCreate);
        uint64_t total = 0;
        if (pHandle && d) {
                uint64_t w = d->Width, h = d->Height, z = d->Depth;
                bool layered = d->Flags & CUDA_ARRAY3D_LAYERED;
                for (unsigned l = 0; l < numMipmapLevels; l++) {
                        uint64_t b = array_bytes(w, h, z, d->Format, d->NumChannels);
                        if (!b || __builtin_add_overflow(total, b, &total)) {
                                total = 0;
                                break;
                        }
                        w = w > 1 ? w / 2 : 1;
                        h = h > 1 ? h / 2 : h;
                        z = layered ? z : (z > 1 ? z / 2 : z);
                }
        }
        KS_ARRAY_CALL(total, KS_K_MIPMAP, *pHandle,
                      ks_real.cuMipmappedArrayCreate(pHandle, d, numMipmapLevels));
}

static CUresult destroy_handle(uint64_t h, CUresult (*call)(uint64_t))
{
        ks_rec rec;
        bool known = take(&handles, h, &rec);
        CUresult r = call(h);
        if (r != CUDA_SUCCESS) {
                if (known)
                        put_back(&handles, h, &rec);
                return r;
        }
        if (known)
                ks__mem_release(rec.bytes);
        return r;
}

static CUresult call_array_destroy(uint64_t h)
{
        return ks_real.cuArrayDestroy((CUarray)(uintptr_t)h);
}

static CUresult call_mipmap_destroy(uint64_t h)
{
        return ks_real.cuMipmappedArrayDestroy((CUmipmappedArray)(uintptr_t)h);
}

KS_EXPORT CUresult cuArrayDestroy(CUarray hArray)
{
        KS_GUARD(cuArrayDestroy);
        return destroy_handle((uint64_t)(uintptr_t)hArray, call_array_destroy);
}

KS_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
        KS_GUARD(cuMipmappedArrayDestroy);
        return destroy_handle((uint64_t)(uintptr_t)hMipmappedArray, call_mipmap_destroy);
}

/* ---- virtual memory management ---- */

KS_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                               const CUmemAllocationProp *prop, unsigned long long flags)
{
        KS_GUARD(cuMemCreate);
        /* Only device locations are device memory; a host location's id is a NUMA node or
         * nothing, never an index into anything of ours. */
        uint64_t n = handle && prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE && size
                         ? ks__round(size)
                         : 0;
        if (!ks__mem_reserve(n))
                return CUDA_ERROR_OUT_OF_MEMORY;
        CUresult r = ks_real.cuMemCreate(handle, size, prop, flags);
        if (r != CUDA_SUCCESS) {
                ks__mem_release(n);
                return r;
        }
        if (!n)
                return r;
        ks_vmm *v = calloc(1, sizeof(*v));
        if (!v)
                return r;
        v->bytes = n;
        pthread_mutex_lock(&ks__mem_mu);
        if (kerf_u64map_put(&vmm, *handle, v) < 0)
                free(v);
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}

/* Releases v's charge once it is both released and unmapped. Caller holds ks__mem_mu. */
static void vmm_maybe_free_locked(CUmemGenericAllocationHandle h, ks_vmm *v)
{
        if (!v->released || v->maps)
                return;
        kerf_u64map_del(&vmm, h);
        ks__mem_release(v->bytes);
        free(v);
}

KS_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
        KS_GUARD(cuMemRelease);
        pthread_mutex_lock(&ks__mem_mu);
        CUresult r = ks_real.cuMemRelease(handle);
        ks_vmm *v = r == CUDA_SUCCESS && handle ? kerf_u64map_get(&vmm, handle) : NULL;
        if (v) {
                v->released = true;
                vmm_maybe_free_locked(handle, v);
        }
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}

KS_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                            CUmemGenericAllocationHandle handle, unsigned long long flags)
{
        KS_GUARD(cuMemMap);
        pthread_mutex_lock(&ks__mem_mu);
        CUresult r = ks_real.cuMemMap(ptr, size, offset, handle, flags);
        ks_vmm *v = r == CUDA_SUCCESS && handle ? kerf_u64map_get(&vmm, handle) : NULL;
        if (v) {
                if (nmaps == capmaps) {
                        size_t nc = capmaps ? capmaps * 2 : 16;
                        ks_map *nm = realloc(maps, nc * sizeof(*nm));
                        if (nm) {
                                maps = nm;
                                capmaps = nc;
                        }
                }
                if (nmaps < capmaps) {
                        maps[nmaps++] = (ks_map){ptr, size, handle};
                        v->maps++;
                }
        }
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}

KS_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
        KS_GUARD(cuMemUnmap);
        pthread_mutex_lock(&ks__mem_mu);
        CUresult r = ks_real.cuMemUnmap(ptr, size);
        if (r == CUDA_SUCCESS) {
                for (size_t i = 0; i < nmaps;) {
                        ks_map m = maps[i];
                        if (m.ptr < ptr || m.ptr - ptr >= size) {
                                i++;
                                continue;
                        }
                        maps[i] = maps[--nmaps];
                        ks_vmm *v = kerf_u64map_get(&vmm, m.handle);
                        if (v && v->maps) {
                                v->maps--;
                                vmm_maybe_free_locked(m.handle, v);
                        }
                }
        }
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}

/* ---- tables: fork, exit ---- */

/* recs: the values are records (back to the free list), else malloc'd (ks_vmm). */
static void forget_map(kerf_u64map *m, bool recs)
{
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;
        while (kerf_u64map_next(m, &it, NULL, &val)) {
                if (recs)
                        rec_free_locked(val);
                else
                        free(val);
        }
        kerf_u64map_fini(m);
        kerf_u64map_init(m);
}

static void forget_all(void)
{
        forget_map(&linear, true);
        forget_map(&handles, true);
        forget_map(&vmm, false);
        forget_map(&ctxs, true);
        free(maps);
        maps = NULL;
        nmaps = capmaps = 0;
        memset(prim, 0, sizeof(prim));
        ks__pools_forget();
}

void ks__mem_exit(void)
{
        /* The slot's memory_used goes back in one step (ks__slot_free); the driver frees the
         * memory itself at process exit. */
}

void ks__mem_atfork_prepare(void)
{
        pthread_mutex_lock(&ks__mem_mu);
}

void ks__mem_atfork_parent(void)
{
        pthread_mutex_unlock(&ks__mem_mu);
}

void ks__mem_atfork_child(void)
{
        pthread_mutex_init(&ks__mem_mu, NULL);
        forget_all();
}

/* ---- contexts: each costs ks.ctx_overhead of device memory ---- */

#define KS_CTX_CREATE(call)                                                                        \
        do {                                                                                       \
                uint64_t ks_n_ = ks.ctx_overhead;                                                  \
                if (!pctx)                                                                         \
                        return (call);                                                             \
                if (!ks__mem_reserve(ks_n_))                                                       \
                        return CUDA_ERROR_OUT_OF_MEMORY;                                           \
                CUresult ks_r_ = (call);                                                           \
                if (ks_r_ != CUDA_SUCCESS) {                                                       \
                        ks__mem_release(ks_n_);                                                    \
                        return ks_r_;                                                              \
                }                                                                                  \
                record(&ctxs, (uint64_t)(uintptr_t)*pctx, ks_n_, 0, *pctx);                        \
                return ks_r_;                                                                      \
        } while (0)

KS_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
        KS_GUARD(cuCtxCreate_v2);
        KS_CTX_CREATE(ks_real.cuCtxCreate_v2(pctx, flags, dev));
}

KS_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                                  unsigned int flags, CUdevice dev)
{
        KS_GUARD(cuCtxCreate_v3);
        KS_CTX_CREATE(ks_real.cuCtxCreate_v3(pctx, paramsArray, numParams, flags, dev));
}

KS_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *p, unsigned int flags,
                                  CUdevice dev)
{
        KS_GUARD(cuCtxCreate_v4);
        KS_CTX_CREATE(ks_real.cuCtxCreate_v4(pctx, p, flags, dev));
}

KS_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
        KS_GUARD(cuCtxDestroy_v2);
        pthread_mutex_lock(&ks__mem_mu);
        CUresult r = ks_real.cuCtxDestroy_v2(ctx);
        if (r == CUDA_SUCCESS && ctx) {
                ks__limiter_ctx_gone(ctx);
                ks_rec *c = kerf_u64map_del(&ctxs, (uint64_t)(uintptr_t)ctx);
                if (c)
                        ks__mem_release(c->bytes);
                rec_free_locked(c);
                ctx_gone_locked(ctx);
        }
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}

KS_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
        KS_GUARD(cuDevicePrimaryCtxRetain);
        if (!pctx || dev < 0 || dev >= KS_MAX_DEV)
                return ks_real.cuDevicePrimaryCtxRetain(pctx, dev);
        pthread_mutex_lock(&ks__mem_mu);
        uint64_t n = prim[dev].refs ? 0 : ks.ctx_overhead;
        CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
        if (ks__mem_reserve(n)) {
                r = ks_real.cuDevicePrimaryCtxRetain(pctx, dev);
                if (r != CUDA_SUCCESS) {
                        ks__mem_release(n);
                } else {
                        if (!prim[dev].refs)
                                prim[dev].bytes = n;
                        prim[dev].refs++;
                        prim[dev].ctx = *pctx;
                }
        }
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}

/* The primary context of dev is gone (last release, or reset). Caller holds ks__mem_mu. */
static void primary_gone_locked(CUdevice dev)
{
        ks__mem_release(prim[dev].bytes);
        ks__limiter_ctx_gone(prim[dev].ctx);
        ctx_gone_locked(prim[dev].ctx);
        prim[dev].bytes = 0;
        prim[dev].refs = 0;
        prim[dev].ctx = NULL;
}

static CUresult primary_drop(CUdevice dev, bool reset, CUresult (*call)(CUdevice))
{
        if (dev < 0 || dev >= KS_MAX_DEV)
                return call(dev);
        pthread_mutex_lock(&ks__mem_mu);
        CUresult r = call(dev);
        if (r == CUDA_SUCCESS && (reset || (prim[dev].refs && !--prim[dev].refs)))
                primary_gone_locked(dev);
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}

KS_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
        KS_GUARD(cuDevicePrimaryCtxRelease);
        return primary_drop(dev, false, ks_real.cuDevicePrimaryCtxRelease);
}

KS_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
        KS_GUARD(cuDevicePrimaryCtxRelease_v2);
        return primary_drop(dev, false, ks_real.cuDevicePrimaryCtxRelease_v2);
}

KS_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
        KS_GUARD(cuDevicePrimaryCtxReset);
        return primary_drop(dev, true, ks_real.cuDevicePrimaryCtxReset);
}

KS_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
        KS_GUARD(cuDevicePrimaryCtxReset_v2);
        return primary_drop(dev, true, ks_real.cuDevicePrimaryCtxReset_v2);
}

/* ---- synchronisation: activity and pool reconciliation ---- */

KS_EXPORT CUresult cuStreamSynchronize(CUstream hStream)
{
        KS_GUARD(cuStreamSynchronize);
        bool busy = ks_real.cuStreamQuery && ks_real.cuStreamQuery(hStream) == CUDA_ERROR_NOT_READY;
        CUresult r = ks_real.cuStreamSynchronize(hStream);
        if (busy)
                ks__activity();
        ks__pools_reconcile();
        return r;
}

KS_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
        KS_GUARD(cuStreamSynchronize_ptsz);
        bool busy = ks_real.cuStreamQuery_ptsz &&
                    ks_real.cuStreamQuery_ptsz(hStream) == CUDA_ERROR_NOT_READY;
        CUresult r = ks_real.cuStreamSynchronize_ptsz(hStream);
        if (busy)
                ks__activity();
        ks__pools_reconcile();
        return r;
}

/* A context has no cheap "busy?" query: a synchronisation that blocked for more than 20 us
 * waited for work. */
#define KS_WAITED_NS 20000ull

KS_EXPORT CUresult cuCtxSynchronize(void)
{
        KS_GUARD(cuCtxSynchronize);
        uint64_t t0 = ks__now_ns();
        CUresult r = ks_real.cuCtxSynchronize();
        if (ks__now_ns() - t0 > KS_WAITED_NS)
                ks__activity();
        ks__pools_reconcile();
        return r;
}

KS_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
        KS_GUARD(cuCtxSynchronize_v2);
        uint64_t t0 = ks__now_ns();
        CUresult r = ks_real.cuCtxSynchronize_v2(ctx);
        if (ks__now_ns() - t0 > KS_WAITED_NS)
                ks__activity();
        ks__pools_reconcile();
        return r;
}

KS_EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{
        KS_GUARD(cuEventSynchronize);
        bool busy = ks_real.cuEventQuery && ks_real.cuEventQuery(hEvent) == CUDA_ERROR_NOT_READY;
        CUresult r = ks_real.cuEventSynchronize(hEvent);
        if (busy)
                ks__activity();
        ks__pools_reconcile();
        return r;
}
