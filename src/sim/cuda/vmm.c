/* SPDX-License-Identifier: Apache-2.0 */
/* vmm.c - virtual memory management: cuMemCreate / Reserve / Map / SetAccess / Unmap / Release */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mem.h"

/* A physical allocation (kc_vmm, mem.h) is a sparse memfd so that it can be mapped at reserved
 * addresses. It is charged to the device at create (host locations are never charged to a
 * device) and uncharged when it is released and no longer mapped, as the driver frees it. */

typedef struct kc_resv {
        struct kc_resv *next;
        CUdeviceptr base;
        size_t size;
} kc_resv;

static kc_resv *resvs;

static void vmm_put(kc_vmm *v)
{
        if (--v->refs > 0)
                return;
        close(v->fd);
        if (v->dev >= 0)
                kc__mem_uncharge(v->dev, v->size);
        free(v);
}

static CUresult check_prop(const CUmemAllocationProp *prop, int *ret_dev)
{
        if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
                return CUDA_ERROR_INVALID_VALUE;
        switch (prop->location.type) {
        case CU_MEM_LOCATION_TYPE_DEVICE:
                if (kc__check_dev(prop->location.id))
                        return CUDA_ERROR_INVALID_DEVICE;
                *ret_dev = prop->location.id;
                return CUDA_SUCCESS;
        case CU_MEM_LOCATION_TYPE_HOST:
        case CU_MEM_LOCATION_TYPE_HOST_NUMA:
        case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
                *ret_dev = -1; /* never index the device table with a host location */
                return CUDA_SUCCESS;
        default:
                return CUDA_ERROR_INVALID_VALUE;
        }
}

KERF_CUDA_EXPORT CUresult cuMemGetAllocationGranularity(size_t *granularity,
                                                        const CUmemAllocationProp *prop,
                                                        CUmemAllocationGranularity_flags option)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        int dev;
        if (!granularity || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
                             option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
                return CUDA_ERROR_INVALID_VALUE;
        if ((r = check_prop(prop, &dev)))
                return r;
        *granularity = KC_GRAN;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                                      const CUmemAllocationProp *prop, unsigned long long flags)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        int dev;
        if (!handle || !size || size % KC_GRAN || flags)
                return CUDA_ERROR_INVALID_VALUE;
        if ((r = check_prop(prop, &dev)))
                return r;
        kc__lock();
        kc_vmm *v = calloc(1, sizeof(*v));
        if (!v) {
                kc__unlock();
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        if (dev >= 0 && (r = kc__mem_charge(dev, size))) {
                free(v);
                kc__unlock();
                return r;
        }
        v->fd = memfd_create("kerf-sim-vmm", MFD_CLOEXEC);
        if (v->fd < 0 || ftruncate(v->fd, (off_t)size) < 0) {
                if (v->fd >= 0)
                        close(v->fd);
                if (dev >= 0)
                        kc__mem_uncharge(dev, size);
                free(v);
                kc__unlock();
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        v->size = size;
        v->dev = dev;
        v->refs = 1;
        v->handle_refs = 1;
        v->prop = *prop;
        kc__handle_add(v, KC_H_VMM);
        kc__unlock();
        *handle = (CUmemGenericAllocationHandle)(uintptr_t)v;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc_vmm *v = (kc_vmm *)(uintptr_t)handle;
        kc__lock();
        if (!kc__handle_ok(v, KC_H_VMM) || v->released) {
                kc__unlock();
                return CUDA_ERROR_INVALID_VALUE;
        }
        if (--v->handle_refs == 0) { /* retained handles (vmm2.c) need a release each */
                v->released = true;
                kc__handle_del(v);
        }
        vmm_put(v);
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                              CUdeviceptr addr, unsigned long long flags)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!ptr || !size || size % KC_GRAN || flags || (alignment & (alignment - 1)))
                return CUDA_ERROR_INVALID_VALUE;
        size_t align = alignment > KC_GRAN ? alignment : KC_GRAN;
        size_t span;
        if (__builtin_add_overflow(size, align, &span))
                return CUDA_ERROR_OUT_OF_MEMORY; /* no address range that large */
        char *m = mmap(addr ? (void *)(uintptr_t)addr : NULL, span, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
                return CUDA_ERROR_OUT_OF_MEMORY;
        uintptr_t base = kc_round_up((uintptr_t)m, align);
        if (base > (uintptr_t)m)
                munmap(m, base - (uintptr_t)m);
        size_t tail = (uintptr_t)m + span - (base + size);
        if (tail)
                munmap((void *)(base + size), tail);
        kc_resv *rv = calloc(1, sizeof(*rv));
        if (!rv) {
                munmap((void *)base, size);
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        rv->base = base;
        rv->size = size;
        kc__lock();
        rv->next = resvs;
        resvs = rv;
        kc__unlock();
        *ptr = base;
        return CUDA_SUCCESS;
}

static kc_resv *resv_containing(CUdeviceptr p, size_t n)
{
        for (kc_resv *rv = resvs; rv; rv = rv->next)
                if (p >= rv->base && p - rv->base <= rv->size && n <= rv->size - (p - rv->base))
                        return rv;
        return NULL;
}

bool kc__resv_find(CUdeviceptr p, CUdeviceptr *ret_base, size_t *ret_size)
{
        kc_resv *rv = resv_containing(p, 1);
        if (rv) {
                *ret_base = rv->base;
                *ret_size = rv->size;
        }
        return rv != NULL;
}

static bool any_mapping_in(CUdeviceptr p, size_t n)
{
        for (CUdeviceptr q = p; q < p + n; q += KC_GRAN)
                if (kc__alloc_containing(q))
                        return true;
        return false;
}

KERF_CUDA_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc__lock();
        kc_resv **pp = &resvs;
        for (; *pp; pp = &(*pp)->next)
                if ((*pp)->base == ptr && (*pp)->size == size)
                        break;
        if (!*pp || any_mapping_in(ptr, size)) {
                kc__unlock();
                return CUDA_ERROR_INVALID_VALUE;
        }
        kc_resv *rv = *pp;
        *pp = rv->next;
        kc__unlock();
        munmap((void *)(uintptr_t)ptr, size);
        free(rv);
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                   CUmemGenericAllocationHandle handle, unsigned long long flags)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc_vmm *v = (kc_vmm *)(uintptr_t)handle;
        if (!size || size % KC_GRAN || offset % KC_GRAN || ptr % KC_GRAN || flags)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        r = CUDA_ERROR_INVALID_VALUE;
        if (!kc__handle_ok(v, KC_H_VMM) || offset > v->size || size > v->size - offset ||
            !resv_containing(ptr, size) || any_mapping_in(ptr, size))
                goto out;
        kc_alloc *a = calloc(1, sizeof(*a));
        if (!a) {
                r = CUDA_ERROR_OUT_OF_MEMORY;
                goto out;
        }
        if (mmap((void *)(uintptr_t)ptr, size, PROT_NONE, MAP_SHARED | MAP_FIXED, v->fd,
                 (off_t)offset) == MAP_FAILED) {
                free(a);
                r = CUDA_ERROR_MAP_FAILED;
                goto out;
        }
        a->base = ptr;
        a->size = size;
        a->dev = v->dev;
        a->kind = KC_A_VMM;
        a->vmm = v;
        a->freeing = true; /* not accessible until cuMemSetAccess */
        if (kc__alloc_insert(a) < 0) {
                mmap((void *)(uintptr_t)ptr, size, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
                free(a);
                r = CUDA_ERROR_OUT_OF_MEMORY;
                goto out;
        }
        v->refs++;
        r = CUDA_SUCCESS;
out:
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!size || size % KC_GRAN || ptr % KC_GRAN)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        /* The range must be made exactly of whole mappings. */
        CUdeviceptr q = ptr;
        while (q < ptr + size) {
                kc_alloc *a = kc__alloc_find(q);
                if (!a || a->kind != KC_A_VMM || a->size > ptr + size - q) {
                        kc__unlock();
                        return CUDA_ERROR_INVALID_VALUE;
                }
                q += a->size;
        }
        for (q = ptr; q < ptr + size;) {
                kc_alloc *a = kc__alloc_find(q);
                q += a->size;
                kc__alloc_remove(a);
                mmap((void *)(uintptr_t)a->base, a->size, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
                vmm_put(a->vmm);
                free(a);
        }
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                                         size_t count)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!desc || !count || !size)
                return CUDA_ERROR_INVALID_VALUE;
        int prot = PROT_NONE;
        for (size_t i = 0; i < count; i++) {
                if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
                    kc__check_dev(desc[i].location.id))
                        return CUDA_ERROR_INVALID_DEVICE;
                if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
                        prot = PROT_READ | PROT_WRITE;
                else if (desc[i].flags == CU_MEM_ACCESS_FLAGS_PROT_READ && prot == PROT_NONE)
                        prot = PROT_READ;
                else if (desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
                         desc[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ)
                        return CUDA_ERROR_INVALID_VALUE;
        }
        kc__lock();
        CUdeviceptr q = ptr;
        while (q < ptr + size) {
                kc_alloc *a = kc__alloc_containing(q);
                if (!a || a->kind != KC_A_VMM) {
                        kc__unlock();
                        return CUDA_ERROR_INVALID_VALUE;
                }
                q = a->base + a->size;
        }
        for (q = ptr; q < ptr + size;) {
                kc_alloc *a = kc__alloc_containing(q);
                mprotect((void *)(uintptr_t)a->base, a->size, prot);
                a->freeing = prot != (PROT_READ | PROT_WRITE);
                q = a->base + a->size;
        }
        kc__unlock();
        return CUDA_SUCCESS;
}
