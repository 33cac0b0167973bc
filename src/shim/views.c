/* SPDX-License-Identifier: Apache-2.0 */
/* views.c - cuMemGetInfo and cuDeviceTotalMem as the slice sees them */
#include "syms.h"

/*
 * Contract rule 5: total = min(memory_limit, device_memory), used = memory_charged (every
 * process of the task, context overhead included), free = total - used, never negative.
 * Everything comes from the shared region, so every process of the task reports the same
 * numbers at the same moment. The real call is still made first, so that its errors (no
 * context, bad device) reach the caller unchanged.
 */

void ks__view(uint64_t *ret_total, uint64_t *ret_free)
{
        struct kerf_slice_region *r = ks.region;
        uint64_t lim = atomic_load(&r->limits.memory_limit);
        uint64_t dev = atomic_load(&r->limits.device_memory);
        uint64_t total = lim < dev ? lim : dev;
        uint64_t used = atomic_load(&r->memory_charged);
        *ret_total = total;
        *ret_free = total > used ? total - used : 0;
}

KS_EXPORT CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        if (!ks_real.cuMemGetInfo_v2)
                return CUDA_ERROR_NOT_SUPPORTED;
        size_t f = 0, t = 0;
        r = ks_real.cuMemGetInfo_v2(&f, &t);
        if (r != CUDA_SUCCESS)
                return r;
        uint64_t vt, vf;
        ks__view(&vt, &vf);
        if (free)
                *free = (size_t)vf;
        if (total)
                *total = (size_t)vt;
        return r;
}

KS_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        if (!ks_real.cuDeviceTotalMem_v2)
                return CUDA_ERROR_NOT_SUPPORTED;
        size_t t = 0;
        r = ks_real.cuDeviceTotalMem_v2(&t, dev);
        if (r != CUDA_SUCCESS)
                return r;
        uint64_t vt, vf;
        ks__view(&vt, &vf);
        if (bytes)
                *bytes = (size_t)vt;
        return r;
}
