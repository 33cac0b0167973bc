/* SPDX-License-Identifier: Apache-2.0 */
/* vmm2.c - VMM handle queries: retaining a mapped allocation's handle, reading its properties */

#include "mem.h"

/* The handle of the physical allocation mapped at addr (any address inside a mapping). Each
 * retain is one more reference that cuMemRelease gives back; a handle already released comes
 * back to life while a mapping keeps the memory. */
KERF_CUDA_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle,
                                                      void *addr)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!handle || !addr)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_alloc *a = kc__alloc_containing((CUdeviceptr)(uintptr_t)addr);
        if (!a || a->kind != KC_A_VMM || !a->vmm) {
                kc__unlock();
                return CUDA_ERROR_INVALID_VALUE;
        }
        kc_vmm *v = a->vmm;
        if (v->released) {
                v->released = false;
                kc__handle_add(v, KC_H_VMM);
        }
        v->handle_refs++;
        v->refs++;
        kc__unlock();
        *handle = (CUmemGenericAllocationHandle)(uintptr_t)v;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(
    CUmemAllocationProp *prop, CUmemGenericAllocationHandle handle)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!prop)
                return CUDA_ERROR_INVALID_VALUE;
        kc_vmm *v = (kc_vmm *)(uintptr_t)handle;
        kc__lock();
        bool ok = kc__handle_ok(v, KC_H_VMM) && !v->released;
        if (ok)
                *prop = v->prop;
        kc__unlock();
        return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
