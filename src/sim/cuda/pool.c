/* SPDX-License-Identifier: Apache-2.0 */
/* pool.c - stream-ordered allocation: memory pools, cuMemAllocAsync, cuMemFreeAsync */
#include <stdlib.h>
#include <string.h>

#include "mem.h"

/* A pool keeps freed blocks reserved (still charged to the device, as the real driver keeps
 * them mapped) until a trim or a synchronisation above the release threshold gives them back. */
typedef struct kc_blk {
        struct kc_blk *next;
        void *mem;
        size_t len;
} kc_blk;

typedef struct CUmemPoolHandle_st {
        int dev;
        bool is_default, destroyed;
        uint64_t threshold, reserved, reserved_high, used, used_high, max_size;
        int reuse[3];
        kc_blk *free_list;
} kc_pool;

int kc__pool_dev(const struct CUmemPoolHandle_st *p)
{
        return p->destroyed ? -1 : p->dev;
}

static kc_pool *pool_new(int dev, bool is_default)
{
        kc_pool *p = calloc(1, sizeof(*p));
        if (!p)
                return NULL;
        p->dev = dev;
        p->is_default = is_default;
        p->reuse[0] = p->reuse[1] = p->reuse[2] = 1;
        kc__handle_add(p, KC_H_POOL);
        return p;
}

static kc_pool *default_pool(int dev)
{
        kc_dev *d = &kc_g.devs[dev];
        if (!d->default_pool)
                d->default_pool = pool_new(dev, true);
        if (!d->cur_pool)
                d->cur_pool = d->default_pool;
        return d->cur_pool;
}

static void trim(kc_pool *p, uint64_t keep)
{
        kc_blk **pp = &p->free_list;
        while (*pp && p->reserved > keep) {
                kc_blk *b = *pp;
                *pp = b->next;
                kc__unmap_lazy(b->mem, b->len);
                kc__mem_uncharge(p->dev, b->len);
                p->reserved -= b->len;
                free(b);
        }
}

static void pool_maybe_free(kc_pool *p)
{
        if (p->destroyed && !p->used) {
                trim(p, 0);
                free(p);
        }
}

void kc__pool_return(kc_alloc *a)
{
        kc_pool *p = a->pool;
        kc_blk *b = calloc(1, sizeof(*b));
        kc__alloc_remove(a);
        p->used -= a->map_len;
        if (b) {
                b->mem = (void *)(uintptr_t)a->base;
                b->len = a->map_len;
                b->next = p->free_list;
                p->free_list = b;
        } else {
                kc__unmap_lazy((void *)(uintptr_t)a->base, a->map_len);
                kc__mem_uncharge(p->dev, a->map_len);
                p->reserved -= a->map_len;
        }
        free(a);
        pool_maybe_free(p);
}

void kc__pool_release_excess(int dev)
{
        kc__lock();
        kc_dev *d = &kc_g.devs[dev];
        if (d->default_pool)
                trim(d->default_pool, d->default_pool->threshold);
        if (d->cur_pool && d->cur_pool != d->default_pool)
                trim(d->cur_pool, d->cur_pool->threshold);
        kc__unlock();
}

/* Takes a block from the pool or grows it. Caller holds kc_g.mu. */
static CUresult pool_alloc(kc_pool *p, kc_ctx *ctx, size_t size, CUdeviceptr *ret)
{
        size_t len = kc_round_up(size, KC_GRAN);
        if (len < size)
                return CUDA_ERROR_OUT_OF_MEMORY;
        kc_blk **pp = &p->free_list, *b = NULL;
        for (; *pp; pp = &(*pp)->next)
                if ((*pp)->len == len) {
                        b = *pp;
                        *pp = b->next;
                        break;
                }
        void *mem;
        if (b) {
                mem = b->mem;
                free(b);
        } else {
                if (p->max_size && (len > p->max_size || p->reserved > p->max_size - len))
                        return CUDA_ERROR_OUT_OF_MEMORY;
                CUresult r = kc__mem_charge(p->dev, len);
                if (r == CUDA_ERROR_OUT_OF_MEMORY && p->free_list) {
                        /* The driver trims unused reserve before failing an allocation. */
                        trim(p, 0);
                        r = kc__mem_charge(p->dev, len);
                }
                if (r)
                        return r;
                mem = kc__map_lazy(len);
                if (!mem) {
                        kc__mem_uncharge(p->dev, len);
                        return CUDA_ERROR_OUT_OF_MEMORY;
                }
                p->reserved += len;
                if (p->reserved > p->reserved_high)
                        p->reserved_high = p->reserved;
        }
        kc_alloc *a = calloc(1, sizeof(*a));
        if (a) {
                a->base = (CUdeviceptr)(uintptr_t)mem;
                a->size = size;
                a->map_len = len;
                a->dev = p->dev;
                a->ctx = ctx;
                a->kind = KC_A_POOL;
                a->pool = p;
        }
        if (!a || kc__alloc_insert(a) < 0) {
                free(a);
                kc_blk *nb = calloc(1, sizeof(*nb));
                if (nb) {
                        nb->mem = mem;
                        nb->len = len;
                        nb->next = p->free_list;
                        p->free_list = nb;
                }
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        p->used += len;
        if (p->used > p->used_high)
                p->used_high = p->used;
        *ret = a->base;
        return CUDA_SUCCESS;
}

static CUresult alloc_async(CUdeviceptr *dptr, size_t size, kc_pool *pool, CUstream h, bool pt)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!dptr || !size)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, pt, &s);
        if (r)
                goto out;
        if (s->cap_status) { /* a graph alloc node; a pool argument is not kept [UNVERIFIED] */
                r = kc__capture_mem_alloc(s, size, dptr);
                goto out;
        }
        if (!pool)
                pool = default_pool(s->ctx->dev);
        else if (!kc__handle_ok(pool, KC_H_POOL) || pool->destroyed) {
                r = CUDA_ERROR_INVALID_VALUE;
                goto out;
        }
        r = pool_alloc(pool, s->ctx, size, dptr);
out:
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
        return alloc_async(dptr, bytesize, NULL, hStream, false);
}

KERF_CUDA_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
        return alloc_async(dptr, bytesize, NULL, hStream, true);
}

KERF_CUDA_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
                                                  CUmemoryPool pool, CUstream hStream)
{
        if (!pool)
                return CUDA_ERROR_INVALID_VALUE;
        return alloc_async(dptr, bytesize, pool, hStream, false);
}

KERF_CUDA_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
                                                       CUmemoryPool pool, CUstream hStream)
{
        if (!pool)
                return CUDA_ERROR_INVALID_VALUE;
        return alloc_async(dptr, bytesize, pool, hStream, true);
}

static CUresult free_async(CUdeviceptr dptr, CUstream h, bool pt)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, pt, &s);
        if (r)
                goto out;
        if (s->cap_status) { /* a graph free node: only of graph allocations */
                r = kc__capture_mem_free(s, dptr);
                goto out;
        }
        kc_alloc *a = kc__alloc_find(dptr);
        if (!a || a->freeing || a->kind == KC_A_HOST || a->kind == KC_A_VMM ||
            a->kind == KC_A_HOSTREG) {
                r = CUDA_ERROR_INVALID_VALUE;
                goto out;
        }
        kc_op *op = calloc(1, sizeof(*op));
        if (!op) {
                r = CUDA_ERROR_OUT_OF_MEMORY;
                goto out;
        }
        a->freeing = true;
        op->kind = KC_OP_FREE;
        op->u.free_ptr = dptr;
        kc__engine_submit(s, op);
out:
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
        return free_async(dptr, hStream, false);
}

KERF_CUDA_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
        return free_async(dptr, hStream, true);
}

KERF_CUDA_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        if (!pool_out)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        default_pool(dev);
        *pool_out = kc_g.devs[dev].default_pool;
        kc__unlock();
        return *pool_out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

KERF_CUDA_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        if (!pool)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        *pool = default_pool(dev);
        kc__unlock();
        return *pool ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

KERF_CUDA_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *pp)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!pool || !pp || pp->allocType != CU_MEM_ALLOCATION_TYPE_PINNED)
                return CUDA_ERROR_INVALID_VALUE;
        if (pp->handleTypes &
            ~(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC))
                return CUDA_ERROR_INVALID_VALUE;
        if (pp->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
                return CUDA_ERROR_NOT_SUPPORTED; /* host pools are not simulated */
        if (kc__check_dev(pp->location.id))
                return CUDA_ERROR_INVALID_DEVICE;
        kc__lock();
        kc_pool *p = pool_new(pp->location.id, false);
        if (p)
                p->max_size = pp->maxSize;
        kc__unlock();
        if (!p)
                return CUDA_ERROR_OUT_OF_MEMORY;
        *pool = p;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc__lock();
        if (!kc__handle_ok(pool, KC_H_POOL) || pool->is_default) {
                kc__unlock();
                return CUDA_ERROR_INVALID_VALUE;
        }
        kc__handle_del(pool);
        kc_dev *d = &kc_g.devs[pool->dev];
        if (d->cur_pool == pool)
                d->cur_pool = d->default_pool;
        pool->destroyed = true;
        trim(pool, 0);
        pool_maybe_free(pool);
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc__lock();
        if (!kc__handle_ok(pool, KC_H_POOL)) {
                kc__unlock();
                return CUDA_ERROR_INVALID_VALUE;
        }
        trim(pool, minBytesToKeep);
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                                                void *value)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!value)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        r = CUDA_SUCCESS;
        if (!kc__handle_ok(pool, KC_H_POOL)) {
                r = CUDA_ERROR_INVALID_VALUE;
                goto out;
        }
        uint64_t v;
        switch (attr) {
        case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
                pool->reuse[attr - 1] = *(int *)value != 0;
                break;
        case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
                memcpy(&pool->threshold, value, sizeof(v));
                break;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
        case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
                memcpy(&v, value, sizeof(v));
                if (v) { /* only a reset to zero is allowed */
                        r = CUDA_ERROR_INVALID_VALUE;
                        break;
                }
                if (attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)
                        pool->reserved_high = pool->reserved;
                else
                        pool->used_high = pool->used;
                break;
        default:
                r = CUDA_ERROR_INVALID_VALUE;
        }
out:
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
                                                void *value)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!value)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        r = CUDA_SUCCESS;
        if (!kc__handle_ok(pool, KC_H_POOL)) {
                r = CUDA_ERROR_INVALID_VALUE;
                goto out;
        }
        uint64_t v = 0;
        switch (attr) {
        case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
                *(int *)value = pool->reuse[attr - 1];
                goto out;
        case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
                v = pool->threshold;
                break;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
                v = pool->reserved;
                break;
        case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
                v = pool->reserved_high;
                break;
        case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
                v = pool->used;
                break;
        case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
                v = pool->used_high;
                break;
        default:
                r = CUDA_ERROR_INVALID_VALUE;
                goto out;
        }
        memcpy(value, &v, sizeof(v));
out:
        kc__unlock();
        return r;
}
