/* SPDX-License-Identifier: Apache-2.0 */
/* mem_pool.c - stream-ordered allocation: pools are charged what they reserve, until trimmed */
#include <stdlib.h>
#include <string.h>

#include "syms.h"
#include "u64map.h"

/*
 * A memory pool keeps freed blocks reserved (the device memory stays taken) until it is
 * trimmed: by cuMemPoolTrimTo, by a synchronisation above the release threshold, or by the
 * driver itself before it fails an allocation. So the shim charges each pool what the driver
 * says it has reserved (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), not what the application
 * holds:
 *
 *   cuMemAllocAsync(n)   reserve round_up(n, 2 MiB) first (the most one allocation can grow
 *                        the pool; refused -> trim this pool's unused blocks, retry, then
 *                        CUDA_ERROR_OUT_OF_MEMORY), call, then reconcile: the pool's growth
 *                        is taken from that reservation and the rest given back.
 *   cuMemFreeAsync       nothing is released: the block stays in the pool.
 *   trim, sync, tick     reconcile every known pool: a shrunken reservation is released.
 *   cuMemPoolDestroy     the pool's charge goes when its last outstanding allocation does.
 *
 * Pools are known from cuMemPoolCreate, from cuMemAllocFromPoolAsync's argument, and from
 * the current pool of the device (cuDeviceGetMemPool) at each cuMemAllocAsync. Everything
 * here runs under ks__mem_mu, held across the real call so that a pool's reservation and its
 * charge are compared with nothing in between.
 */

typedef struct ks_pool {
        CUmemoryPool pool;
        uint64_t charged;     /* bytes of memory_charged this pool holds */
        unsigned outstanding; /* allocations made through us and not yet freed */
        bool destroyed;
} ks_pool;

typedef struct ks_arec {
        CUmemoryPool pool; /* NULL: the pool was unknown; `bytes` were charged to the record */
        uint64_t bytes;
} ks_arec;

static ks_pool *pools;
static size_t npools, cappools;
static _Atomic size_t npools_seen; /* lock-free "any pool?" for the sync paths */
static kerf_u64map arecs;          /* CUdeviceptr -> ks_arec */

static ks_pool *find_locked(CUmemoryPool p)
{
        for (size_t i = 0; i < npools; i++)
                if (pools[i].pool == p)
                        return &pools[i];
        return NULL;
}

static ks_pool *find_or_add_locked(CUmemoryPool p)
{
        ks_pool *kp = find_locked(p);
        if (kp || !p)
                return kp;
        if (npools == cappools) {
                size_t nc = cappools ? cappools * 2 : 8;
                ks_pool *np = realloc(pools, nc * sizeof(*np));
                if (!np)
                        return NULL;
                pools = np;
                cappools = nc;
        }
        kp = &pools[npools++];
        memset(kp, 0, sizeof(*kp));
        kp->pool = p;
        atomic_store(&npools_seen, npools);
        return kp;
}

static void remove_locked(ks_pool *kp)
{
        *kp = pools[--npools];
        atomic_store(&npools_seen, npools);
}

/* Brings kp->charged to the pool's reserved size. Growth is first taken from *pending (a
 * reservation made for this purpose); growth beyond it is reserved if the cap allows, else
 * left uncharged until a later reconcile (only possible if the pool grows behind our back). */
static void reconcile_locked(ks_pool *kp, uint64_t *pending)
{
        cuuint64_t res = 0;
        if (!kp || kp->destroyed || !ks_real.cuMemPoolGetAttribute ||
            ks_real.cuMemPoolGetAttribute(kp->pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &res) !=
                CUDA_SUCCESS)
                return;
        if (res > kp->charged) {
                uint64_t grow = res - kp->charged;
                uint64_t take = pending && *pending < grow ? *pending : (pending ? grow : 0);
                if (pending)
                        *pending -= take;
                kp->charged += take;
                grow -= take;
                if (grow && ks__mem_reserve_quiet(grow))
                        kp->charged += grow;
        } else if (res < kp->charged) {
                ks__mem_release(kp->charged - res);
                kp->charged = res;
        }
}

void ks__pools_reconcile(void)
{
        ks__graphmem_reconcile();
        if (!atomic_load_explicit(&npools_seen, memory_order_relaxed))
                return;
        pthread_mutex_lock(&ks__mem_mu);
        for (size_t i = 0; i < npools; i++)
                reconcile_locked(&pools[i], NULL);
        pthread_mutex_unlock(&ks__mem_mu);
}

void ks__mem_tick(uint64_t now_ns)
{
        (void)now_ns;
        if (atomic_load(&ks.ready) == 1 && !atomic_load(&ks.exited))
                ks__pools_reconcile();
}

void ks__pools_forget(void)
{
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;
        while (kerf_u64map_next(&arecs, &it, NULL, &val))
                free(val);
        kerf_u64map_fini(&arecs);
        kerf_u64map_init(&arecs);
        free(pools);
        pools = NULL;
        npools = cappools = 0;
        atomic_store(&npools_seen, 0);
        ks__graphmem_forget();
}

/* The pool cuMemAllocAsync draws from: the current pool of the current context's device. */
static CUmemoryPool current_pool(void)
{
        CUdevice dev;
        CUmemoryPool p = NULL;
        if (!ks_real.cuCtxGetDevice || !ks_real.cuDeviceGetMemPool ||
            ks_real.cuCtxGetDevice(&dev) != CUDA_SUCCESS ||
            ks_real.cuDeviceGetMemPool(&p, dev) != CUDA_SUCCESS)
                return NULL;
        return p;
}

enum { KS_ASYNC, KS_ASYNC_PTSZ, KS_FROMPOOL, KS_FROMPOOL_PTSZ };

static CUresult call_alloc(int which, CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream s)
{
        switch (which) {
        case KS_ASYNC:
                return ks_real.cuMemAllocAsync(dptr, size, s);
        case KS_ASYNC_PTSZ:
                return ks_real.cuMemAllocAsync_ptsz(dptr, size, s);
        case KS_FROMPOOL:
                return ks_real.cuMemAllocFromPoolAsync(dptr, size, pool, s);
        default:
                return ks_real.cuMemAllocFromPoolAsync_ptsz(dptr, size, pool, s);
        }
}

static CUresult pool_alloc(int which, CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream s)
{
        CUresult r;
        if (!dptr || !size)
                return call_alloc(which, dptr, size, pool, s);
        uint64_t n = ks__round(size);
        pthread_mutex_lock(&ks__mem_mu);
        if (which == KS_ASYNC || which == KS_ASYNC_PTSZ)
                pool = current_pool();
        ks_pool *kp = find_or_add_locked(pool);
        if (!ks__mem_reserve_quiet(n)) {
                /* As the driver does before failing: give the pool's unused blocks back. */
                if (kp && ks_real.cuMemPoolTrimTo) {
                        ks_real.cuMemPoolTrimTo(kp->pool, 0);
                        reconcile_locked(kp, NULL);
                }
                if (!ks__mem_reserve(n)) {
                        pthread_mutex_unlock(&ks__mem_mu);
                        return CUDA_ERROR_OUT_OF_MEMORY;
                }
        }
        uint64_t pending = n;
        r = call_alloc(which, dptr, size, pool, s);
        if (r == CUDA_SUCCESS) {
                ks_arec *a = malloc(sizeof(*a));
                if (a) {
                        a->pool = kp ? kp->pool : NULL;
                        a->bytes = kp ? 0 : n;
                        if (kerf_u64map_put(&arecs, *dptr, a) < 0)
                                free(a);
                }
                if (kp) {
                        kp->outstanding++;
                } else {
                        pending = 0; /* unknown pool: the record holds the charge */
                }
        }
        reconcile_locked(kp, &pending);
        ks__mem_release(pending);
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}

KS_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        if (!ks_real.cuMemAllocAsync)
                return CUDA_ERROR_NOT_SUPPORTED;
        return pool_alloc(KS_ASYNC, dptr, bytesize, NULL, hStream);
}

KS_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        if (!ks_real.cuMemAllocAsync_ptsz)
                return CUDA_ERROR_NOT_SUPPORTED;
        return pool_alloc(KS_ASYNC_PTSZ, dptr, bytesize, NULL, hStream);
}

KS_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                           CUstream hStream)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        if (!ks_real.cuMemAllocFromPoolAsync)
                return CUDA_ERROR_NOT_SUPPORTED;
        return pool_alloc(KS_FROMPOOL, dptr, bytesize, pool, hStream);
}

KS_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
                                                CUmemoryPool pool, CUstream hStream)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        if (!ks_real.cuMemAllocFromPoolAsync_ptsz)
                return CUDA_ERROR_NOT_SUPPORTED;
        return pool_alloc(KS_FROMPOOL_PTSZ, dptr, bytesize, pool, hStream);
}

/* Bookkeeping after a successful free of a pool allocation. Caller holds ks__mem_mu. */
static void freed_locked(ks_arec *a)
{
        ks_pool *kp = a->pool ? find_locked(a->pool) : NULL;
        ks__mem_release(a->bytes);
        if (kp) {
                if (kp->outstanding)
                        kp->outstanding--;
                if (kp->destroyed && !kp->outstanding) {
                        ks__mem_release(kp->charged);
                        remove_locked(kp);
                } else {
                        reconcile_locked(kp, NULL);
                }
        }
        free(a);
}

/* which: 0 plain, 1 _ptsz. Frees of cuMemAlloc memory through cuMemFreeAsync are honoured
 * (the driver allows it) and release their linear charge. */
static CUresult pool_free(int which, CUdeviceptr p, CUstream s)
{
        CUresult r;
        pthread_mutex_lock(&ks__mem_mu);
        ks_arec *a = p ? kerf_u64map_del(&arecs, p) : NULL;
        uint64_t lin = a ? 0 : ks__linear_take_locked(p);
        r = which ? ks_real.cuMemFreeAsync_ptsz(p, s) : ks_real.cuMemFreeAsync(p, s);
        if (r != CUDA_SUCCESS) {
                if (a && kerf_u64map_put(&arecs, p, a) < 0)
                        free(a);
                if (lin)
                        ks__linear_put_locked(p, lin);
        } else if (a) {
                freed_locked(a);
        } else {
                ks__mem_release(lin);
        }
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}

KS_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        if (!ks_real.cuMemFreeAsync)
                return CUDA_ERROR_NOT_SUPPORTED;
        return pool_free(0, dptr, hStream);
}

KS_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        if (!ks_real.cuMemFreeAsync_ptsz)
                return CUDA_ERROR_NOT_SUPPORTED;
        return pool_free(1, dptr, hStream);
}

CUresult ks__pool_free_sync(CUdeviceptr p)
{
        pthread_mutex_lock(&ks__mem_mu);
        ks_arec *a = p ? kerf_u64map_del(&arecs, p) : NULL;
        if (!a) {
                pthread_mutex_unlock(&ks__mem_mu);
                return CUDA_ERROR_NOT_FOUND;
        }
        CUresult r = ks_real.cuMemFree_v2(p);
        if (r != CUDA_SUCCESS) {
                if (kerf_u64map_put(&arecs, p, a) < 0)
                        free(a);
        } else {
                freed_locked(a);
        }
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}

KS_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        if (!ks_real.cuMemPoolCreate)
                return CUDA_ERROR_NOT_SUPPORTED;
        pthread_mutex_lock(&ks__mem_mu);
        r = ks_real.cuMemPoolCreate(pool, poolProps);
        if (r == CUDA_SUCCESS && pool)
                find_or_add_locked(*pool);
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}

KS_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        if (!ks_real.cuMemPoolDestroy)
                return CUDA_ERROR_NOT_SUPPORTED;
        pthread_mutex_lock(&ks__mem_mu);
        ks_pool *kp = find_locked(pool);
        reconcile_locked(kp, NULL);
        r = ks_real.cuMemPoolDestroy(pool);
        if (r == CUDA_SUCCESS && kp) {
                if (!kp->outstanding) {
                        ks__mem_release(kp->charged);
                        remove_locked(kp);
                } else {
                        kp->destroyed = true; /* charged until its last block comes back */
                }
        }
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}

KS_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        if (!ks_real.cuMemPoolTrimTo)
                return CUDA_ERROR_NOT_SUPPORTED;
        pthread_mutex_lock(&ks__mem_mu);
        r = ks_real.cuMemPoolTrimTo(pool, minBytesToKeep);
        if (r == CUDA_SUCCESS)
                reconcile_locked(find_or_add_locked(pool), NULL);
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}
