/* SPDX-License-Identifier: Apache-2.0 */
/* memory.c - linear, pitched, managed and host allocations, the range table, cuMemGetInfo */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mem.h"

/* Sorted array of live ranges (base ascending); lookups by binary search. */
static kc_alloc **tab;
static size_t n_tab, cap_tab;

static size_t lower(CUdeviceptr p)
{
        size_t lo = 0, hi = n_tab;
        while (lo < hi) {
                size_t m = (lo + hi) / 2;
                if (tab[m]->base < p)
                        lo = m + 1;
                else
                        hi = m;
        }
        return lo;
}

int kc__alloc_insert(kc_alloc *a)
{
        if (n_tab == cap_tab) {
                size_t nc = cap_tab ? cap_tab * 2 : 64;
                kc_alloc **nt = realloc(tab, nc * sizeof(*nt));
                if (!nt)
                        return -ENOMEM;
                tab = nt;
                cap_tab = nc;
        }
        size_t i = lower(a->base);
        memmove(&tab[i + 1], &tab[i], (n_tab - i) * sizeof(*tab));
        tab[i] = a;
        n_tab++;
        return 0;
}

void kc__alloc_remove(kc_alloc *a)
{
        size_t i = lower(a->base);
        if (i < n_tab && tab[i] == a) {
                memmove(&tab[i], &tab[i + 1], (n_tab - i - 1) * sizeof(*tab));
                n_tab--;
        }
}

kc_alloc *kc__alloc_find(CUdeviceptr p)
{
        size_t i = lower(p);
        return i < n_tab && tab[i]->base == p ? tab[i] : NULL;
}

kc_alloc *kc__alloc_containing(CUdeviceptr p)
{
        size_t i = lower(p + 1);
        if (!i)
                return NULL;
        kc_alloc *a = tab[i - 1];
        return p >= a->base && p < a->base + a->size ? a : NULL;
}

bool kc__mem_range_ok(CUdeviceptr p, size_t n)
{
        kc_alloc *a = kc__alloc_containing(p);
        return a && !a->freeing && n <= a->base + a->size - p;
}

void *kc__map_lazy(size_t bytes)
{
        void *m = mmap(NULL, kc_round_up(bytes ? bytes : 1, 4096), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        return m == MAP_FAILED ? NULL : m;
}

void kc__unmap_lazy(void *p, size_t bytes)
{
        if (p)
                munmap(p, kc_round_up(bytes ? bytes : 1, 4096));
}

CUresult kc__mem_charge(int d, uint64_t bytes)
{
        if (!bytes)
                return CUDA_SUCCESS;
        int r = kerf_sim_mem_charge(kc_g.sim, kc_g.pid, kc_g.devs[d].target, bytes);
        if (r < 0)
                return r == -ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : kc__from_errno(r);
        kc_g.devs[d].charged += bytes;
        return CUDA_SUCCESS;
}

void kc__mem_uncharge(int d, uint64_t bytes)
{
        if (!bytes)
                return;
        kerf_sim_mem_uncharge(kc_g.sim, kc_g.pid, kc_g.devs[d].target, bytes);
        kc_g.devs[d].charged -= bytes;
}

/* Allocates a charged, lazily backed range for ctx. Caller holds kc_g.mu. */
static CUresult alloc_linear(kc_ctx *ctx, size_t size, int kind, CUdeviceptr *ret)
{
        uint64_t charge = kc_round_up(size, KC_GRAN);
        if (charge < size)
                return CUDA_ERROR_OUT_OF_MEMORY;
        CUresult r = kc__mem_charge(ctx->dev, charge);
        if (r)
                return r;
        kc_alloc *a = calloc(1, sizeof(*a));
        void *m = a ? kc__map_lazy(size) : NULL;
        if (m) {
                a->base = (CUdeviceptr)(uintptr_t)m;
                a->size = size;
                a->charged = charge;
                a->dev = ctx->dev;
                a->ctx = ctx;
                a->kind = kind;
        }
        if (!m || kc__alloc_insert(a) < 0) {
                kc__unmap_lazy(m, size);
                free(a);
                kc__mem_uncharge(ctx->dev, charge);
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        *ret = a->base;
        return CUDA_SUCCESS;
}

/* Releases a non-pool allocation record. Caller holds kc_g.mu. */
void kc__alloc_release(kc_alloc *a)
{
        kc__alloc_remove(a);
        if (a->kind != KC_A_HOSTREG) /* registered memory belongs to the caller */
                kc__unmap_lazy((void *)(uintptr_t)a->base, a->size);
        if (a->kind != KC_A_HOST && a->kind != KC_A_HOSTREG)
                kc__mem_uncharge(a->dev, a->charged);
        free(a);
}

KERF_CUDA_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!dptr || !bytesize)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        r = alloc_linear(ctx, bytesize, KC_A_LINEAR, dptr);
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
                                             size_t Height, unsigned int ElementSizeBytes)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!dptr || !pPitch || !WidthInBytes || !Height ||
            (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
                return CUDA_ERROR_INVALID_VALUE;
        size_t pitch = kc_round_up(WidthInBytes, KC_PITCH_ALIGN);
        if (!pitch || Height > SIZE_MAX / pitch) /* !pitch: the width itself overflowed */
                return CUDA_ERROR_OUT_OF_MEMORY;
        kc__lock();
        r = alloc_linear(ctx, pitch * Height, KC_A_LINEAR, dptr);
        kc__unlock();
        if (!r)
                *pPitch = pitch;
        return r;
}

KERF_CUDA_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!dptr || !bytesize || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        r = alloc_linear(ctx, bytesize, KC_A_MANAGED, dptr);
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!pp || !bytesize)
                return CUDA_ERROR_INVALID_VALUE;
        CUdeviceptr p;
        kc__lock();
        kc_alloc *a = calloc(1, sizeof(*a));
        void *m = a ? kc__map_lazy(bytesize) : NULL;
        r = CUDA_ERROR_OUT_OF_MEMORY;
        if (m) {
                a->base = p = (CUdeviceptr)(uintptr_t)m;
                a->size = bytesize;
                a->dev = ctx->dev;
                a->ctx = ctx;
                a->kind = KC_A_HOST;
                if (kc__alloc_insert(a) == 0) {
                        *pp = m;
                        r = CUDA_SUCCESS;
                }
        }
        if (r) {
                kc__unmap_lazy(m, bytesize);
                free(a);
        }
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuMemFreeHost(void *p)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc__lock();
        kc_alloc *a = kc__alloc_find((CUdeviceptr)(uintptr_t)p);
        if (!a || a->kind != KC_A_HOST) {
                kc__unlock();
                return CUDA_ERROR_INVALID_VALUE;
        }
        kc__alloc_release(a);
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc__lock();
        kc_alloc *a = kc__alloc_find(dptr);
        if (!a || a->freeing || a->kind == KC_A_HOST || a->kind == KC_A_VMM ||
            a->kind == KC_A_HOSTREG) {
                kc__unlock();
                return CUDA_ERROR_INVALID_VALUE;
        }
        a->freeing = true;
        kc_ctx *ctx = a->ctx;
        kc__unlock();
        /* cuMemFree synchronises: queued work may still touch the range. */
        if (ctx)
                kc__engine_wait_ctx(ctx);
        kc__lock();
        if (a->kind == KC_A_POOL)
                kc__pool_return(a);
        else
                kc__alloc_release(a);
        kc__unlock();
        return CUDA_SUCCESS;
}

void kc__mem_free_ordered(CUdeviceptr p)
{
        kc__lock();
        kc_alloc *a = kc__alloc_find(p);
        if (a && a->freeing) {
                if (a->kind == KC_A_POOL)
                        kc__pool_return(a);
                else
                        kc__alloc_release(a);
        }
        kc__unlock();
}

void kc__mem_ctx_destroyed(kc_ctx *ctx)
{
        for (size_t i = 0; i < n_tab;) {
                kc_alloc *a = tab[i];
                if (a->ctx == ctx && a->kind != KC_A_POOL && a->kind != KC_A_VMM)
                        kc__alloc_release(a);
                else
                        i++;
        }
        kc__arrays_ctx_destroyed(ctx);
}

KERF_CUDA_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize,
                                                  CUdeviceptr dptr)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc__lock();
        kc_alloc *a = kc__alloc_containing(dptr);
        if (a) {
                if (pbase)
                        *pbase = a->base;
                if (psize)
                        *psize = a->size;
        }
        kc__unlock();
        return a ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

KERF_CUDA_EXPORT CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total_b)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!free_b || !total_b)
                return CUDA_ERROR_INVALID_VALUE;
        uint64_t total, used;
        int e = kerf_sim_target_mem(kc_g.sim, kc_g.devs[ctx->dev].target, &total, &used);
        if (e < 0)
                return kc__from_errno(e);
        *total_b = total;
        *free_b = used < total ? total - used : 0;
        return CUDA_SUCCESS;
}
