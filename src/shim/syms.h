/* SPDX-License-Identifier: Apache-2.0 */
/* syms.h - the driver entry points the shim interposes (X-macro: KS_SYM(name)) */
#ifndef KERF_SHIM_SYMS_H
#define KERF_SHIM_SYMS_H

#include "internal.h"

/* Entry points the driver exports that cuda.h (and so cuda_abi_protos.h) no longer declares. */
KS_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags);
KS_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *, size_t, CUstream);
KS_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
KS_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr, CUstream);
KS_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice);
KS_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice);
KS_EXPORT CUresult cuCtxCreate_v2(CUcontext *, unsigned int, CUdevice);
KS_EXPORT CUresult cuCtxCreate_v3(CUcontext *, CUexecAffinityParam *, int, unsigned int, CUdevice);
KS_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);

/* Legacy (CUDA < 3.2) 32-bit entry points the driver still exports (CUDA 13's stub does):
 * interposed only to refuse them inside a slice (legacy.c). */
typedef unsigned int ks_deviceptr_v1;
KS_EXPORT CUresult cuMemAlloc(ks_deviceptr_v1 *dptr, unsigned int bytesize);
KS_EXPORT CUresult cuMemAllocPitch(ks_deviceptr_v1 *dptr, unsigned int *pPitch,
                                   unsigned int WidthInBytes, unsigned int Height,
                                   unsigned int ElementSizeBytes);
KS_EXPORT CUresult cuArrayCreate(CUarray *pHandle, const void *pAllocateArray);
KS_EXPORT CUresult cuArray3DCreate(CUarray *pHandle, const void *pAllocateArray);
KS_EXPORT CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev);
KS_EXPORT CUresult cuMemGetInfo(unsigned int *free, unsigned int *total);
KS_EXPORT CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev);

/*
 * Every interposed driver entry point, by its exported (versioned) name. real.c builds from
 * this list the table of real pointers (ks_real.<name>, typed from the prototype) and the
 * pointer -> wrapper map that cuGetProcAddress and dlsym use. Adding a wrapper = one line
 * here + the function (exported, same name and prototype) in the file that owns its group.
 * The version script (libkerf-cuda.map) is generated from this list by CMake.
 */
#define KS_SYMS_CUDA(X)                                                                            \
        /* init.c / procaddr.c */                                                                  \
        X(cuInit)                                                                                  \
        X(cuGetProcAddress)                                                                        \
        X(cuGetProcAddress_v2)                                                                     \
        /* mem.c: allocation paths */                                                              \
        X(cuMemAlloc_v2)                                                                           \
        X(cuMemAllocPitch_v2)                                                                      \
        X(cuMemAllocManaged)                                                                       \
        X(cuMemFree_v2)                                                                            \
        X(cuMemAllocAsync)                                                                         \
        X(cuMemAllocAsync_ptsz)                                                                    \
        X(cuMemAllocFromPoolAsync)                                                                 \
        X(cuMemAllocFromPoolAsync_ptsz)                                                            \
        X(cuMemFreeAsync)                                                                          \
        X(cuMemFreeAsync_ptsz)                                                                     \
        X(cuMemPoolCreate)                                                                         \
        X(cuMemPoolDestroy)                                                                        \
        X(cuMemPoolTrimTo)                                                                         \
        X(cuMemCreate)                                                                             \
        X(cuMemRelease)                                                                            \
        X(cuMemMap)                                                                                \
        X(cuMemUnmap)                                                                              \
        X(cuArrayCreate_v2)                                                                        \
        X(cuArray3DCreate_v2)                                                                      \
        X(cuArrayDestroy)                                                                          \
        X(cuMipmappedArrayCreate)                                                                  \
        X(cuMipmappedArrayDestroy)                                                                 \
        /* mem.c: contexts (their overhead is charged) */                                          \
        X(cuDevicePrimaryCtxRetain)                                                                \
        X(cuDevicePrimaryCtxRelease)                                                               \
        X(cuDevicePrimaryCtxRelease_v2)                                                            \
        X(cuDevicePrimaryCtxReset)                                                                 \
        X(cuDevicePrimaryCtxReset_v2)                                                              \
        X(cuCtxCreate_v2)                                                                          \
        X(cuCtxCreate_v3)                                                                          \
        X(cuCtxCreate_v4)                                                                          \
        X(cuCtxDestroy_v2)                                                                         \
        /* mem.c: synchronisation points (pool reconcile, activity) */                             \
        X(cuStreamSynchronize)                                                                     \
        X(cuStreamSynchronize_ptsz)                                                                \
        X(cuCtxSynchronize)                                                                        \
        X(cuCtxSynchronize_v2)                                                                     \
        X(cuEventSynchronize)                                                                      \
        /* mem_graph.c: graph memory nodes (the graph memory reservation) */                       \
        X(cuGraphInstantiateWithFlags)                                                             \
        X(cuGraphInstantiate_v2)                                                                   \
        X(cuGraphExecDestroy)                                                                      \
        X(cuDeviceGraphMemTrim)                                                                    \
        /* legacy.c: 32-bit entry points, refused (allocations) or answered as views */            \
        X(cuMemAlloc)                                                                              \
        X(cuMemAllocPitch)                                                                         \
        X(cuArrayCreate)                                                                           \
        X(cuArray3DCreate)                                                                         \
        X(cuCtxCreate)                                                                             \
        X(cuMemGetInfo)                                                                            \
        X(cuDeviceTotalMem)                                                                        \
        /* views.c */                                                                              \
        X(cuMemGetInfo_v2)                                                                         \
        X(cuDeviceTotalMem_v2)                                                                     \
        /* launch.c */                                                                             \
        X(cuLaunchKernel)                                                                          \
        X(cuLaunchKernel_ptsz)                                                                     \
        X(cuLaunchKernelEx)                                                                        \
        X(cuLaunchKernelEx_ptsz)                                                                   \
        X(cuLaunchCooperativeKernel)                                                               \
        X(cuLaunchCooperativeKernel_ptsz)                                                          \
        X(cuGraphLaunch)                                                                           \
        X(cuGraphLaunch_ptsz)

/* Real driver functions the shim calls but does not interpose (resolved at init). */
#define KS_SYMS_CUDA_CALLED(X)                                                                     \
        X(cuCtxGetCurrent)                                                                         \
        X(cuCtxSetCurrent)                                                                         \
        X(cuCtxGetDevice)                                                                          \
        X(cuDeviceGet)                                                                             \
        X(cuDeviceGetUuid_v2)                                                                      \
        X(cuMemPoolGetAttribute)                                                                   \
        X(cuDeviceGetDefaultMemPool)                                                               \
        X(cuEventCreate)                                                                           \
        X(cuEventDestroy_v2)                                                                       \
        X(cuEventRecord)                                                                           \
        X(cuEventRecord_ptsz)                                                                      \
        X(cuEventQuery)                                                                            \
        X(cuEventElapsedTime)                                                                      \
        X(cuStreamGetCtx)                                                                          \
        /* added for mem.c / views.c */                                                            \
        X(cuDeviceGetMemPool)                                                                      \
        X(cuStreamQuery)                                                                           \
        X(cuStreamQuery_ptsz)                                                                      \
        X(cuDeviceGetCount)                                                                        \
        /* mem_graph.c */                                                                          \
        X(cuDeviceGetGraphMemAttribute)                                                            \
        X(cuGraphGetNodes)                                                                         \
        X(cuGraphNodeGetType)                                                                      \
        X(cuGraphMemAllocNodeGetParams)

typedef struct ks_real_table {
#define KS_REAL_FIELD(name) __typeof__(name) *name;
        KS_SYMS_CUDA(KS_REAL_FIELD)
        KS_SYMS_CUDA_CALLED(KS_REAL_FIELD)
#undef KS_REAL_FIELD
} ks_real_table;

/* The real driver's functions; filled by init before ks.ready. A NULL field means the driver
 * does not export that entry point (older driver): wrappers then answer
 * CUDA_ERROR_NOT_SUPPORTED, never call NULL. */
extern ks_real_table ks_real;

#endif /* KERF_SHIM_SYMS_H */
