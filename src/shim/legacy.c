/* SPDX-License-Identifier: Apache-2.0 */
/* legacy.c - the driver's 32-bit (CUDA < 3.2) entry points inside a slice */
#include <limits.h>

#include "syms.h"

/*
 * Drivers still export the pre-3.2 names (cuMemAlloc with a 32-bit size and a 32-bit device
 * pointer, cuCtxCreate, ...) next to the _v2 ones; a program can reach them by dlsym or by
 * cuGetProcAddress with an old version. No 64-bit program needs them, and each allocating one
 * would be a path around the cap: inside a slice they are refused with
 * CUDA_ERROR_NOT_SUPPORTED before the driver is called. The two memory views answer the
 * slice's view, clamped to 32 bits, as the driver does for these calls.
 */

static CUresult refuse(void)
{
        CUresult r = ks__ensure();
        return r != CUDA_SUCCESS ? r : CUDA_ERROR_NOT_SUPPORTED;
}

KS_EXPORT CUresult cuMemAlloc(ks_deviceptr_v1 *dptr, unsigned int bytesize)
{
        (void)dptr;
        (void)bytesize;
        return refuse();
}

KS_EXPORT CUresult cuMemAllocPitch(ks_deviceptr_v1 *dptr, unsigned int *pPitch,
                                   unsigned int WidthInBytes, unsigned int Height,
                                   unsigned int ElementSizeBytes)
{
        (void)dptr;
        (void)pPitch;
        (void)WidthInBytes;
        (void)Height;
        (void)ElementSizeBytes;
        return refuse();
}

KS_EXPORT CUresult cuArrayCreate(CUarray *pHandle, const void *pAllocateArray)
{
        (void)pHandle;
        (void)pAllocateArray;
        return refuse();
}

KS_EXPORT CUresult cuArray3DCreate(CUarray *pHandle, const void *pAllocateArray)
{
        (void)pHandle;
        (void)pAllocateArray;
        return refuse();
}

KS_EXPORT CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
        (void)pctx;
        (void)flags;
        (void)dev;
        return refuse();
}

static unsigned int clamp32(uint64_t v)
{
        return v > UINT_MAX ? UINT_MAX : (unsigned int)v;
}

KS_EXPORT CUresult cuMemGetInfo(unsigned int *free, unsigned int *total)
{
        size_t f = 0, t = 0;
        CUresult r = cuMemGetInfo_v2(&f, &t); /* the slice's view (views.c) */
        if (r != CUDA_SUCCESS)
                return r;
        if (free)
                *free = clamp32(f);
        if (total)
                *total = clamp32(t);
        return CUDA_SUCCESS;
}

KS_EXPORT CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
        size_t b = 0;
        CUresult r = cuDeviceTotalMem_v2(&b, dev);
        if (r != CUDA_SUCCESS)
                return r;
        if (bytes)
                *bytes = clamp32(b);
        return CUDA_SUCCESS;
}
