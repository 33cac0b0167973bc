/* SPDX-License-Identifier: Apache-2.0 */
/* procaddr.c - cuGetProcAddress(_v2): versioned and per-thread-stream entry point lookup */
#include <string.h>

#include "internal.h"
#include "legacy.h"

/* CUDA 10.0 cuGraphAddKernelNode (graph.c) takes the v1 parameter block. */
CUresult cuGraphAddKernelNode(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const void *);

/* One row per (name, first CUDA version, stream flavour): the driver hands out the newest
 * row whose version does not exceed the caller's, preferring a per-thread row when asked. */
typedef struct {
        const char *name;
        int version;
        bool per_thread;
        void *fn;
} entry;

#define E(n, v, f)                                                                                 \
        {                                                                                          \
                n, v, false, (void *)(f)                                                           \
        }
#define PT(n, v, f)                                                                                \
        {                                                                                          \
                n, v, true, (void *)(f)                                                            \
        }

static const entry table[] = {
    E("cuInit", 2000, cuInit),
    E("cuDriverGetVersion", 2020, cuDriverGetVersion),
    E("cuGetErrorName", 6000, cuGetErrorName),
    E("cuGetErrorString", 6000, cuGetErrorString),
    E("cuGetProcAddress", 11030, cuGetProcAddress),
    E("cuGetProcAddress", 12000, cuGetProcAddress_v2),
    E("cuDeviceGet", 2000, cuDeviceGet),
    E("cuDeviceGetCount", 2000, cuDeviceGetCount),
    E("cuDeviceGetName", 2000, cuDeviceGetName),
    E("cuDeviceGetUuid", 9020, cuDeviceGetUuid),
    E("cuDeviceGetUuid", 11040, cuDeviceGetUuid_v2),
    E("cuDeviceTotalMem", 3020, cuDeviceTotalMem_v2),
    E("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
    E("cuDeviceGetPCIBusId", 4010, cuDeviceGetPCIBusId),
    E("cuDeviceCanAccessPeer", 4000, cuDeviceCanAccessPeer),
    E("cuDeviceGetDefaultMemPool", 11020, cuDeviceGetDefaultMemPool),
    E("cuDeviceGetMemPool", 11020, cuDeviceGetMemPool),
    E("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    E("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease),
    E("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
    E("cuDevicePrimaryCtxReset", 7000, cuDevicePrimaryCtxReset),
    E("cuDevicePrimaryCtxReset", 11000, cuDevicePrimaryCtxReset_v2),
    E("cuDevicePrimaryCtxSetFlags", 7000, cuDevicePrimaryCtxSetFlags),
    E("cuDevicePrimaryCtxSetFlags", 11000, cuDevicePrimaryCtxSetFlags_v2),
    E("cuDevicePrimaryCtxGetState", 7000, cuDevicePrimaryCtxGetState),
    E("cuCtxCreate", 3020, cuCtxCreate_v2),
    E("cuCtxCreate", 11040, cuCtxCreate_v3),
    E("cuCtxCreate", 12050, cuCtxCreate_v4),
    E("cuCtxDestroy", 4000, cuCtxDestroy_v2),
    E("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
    E("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    E("cuCtxPushCurrent", 4000, cuCtxPushCurrent_v2),
    E("cuCtxPopCurrent", 4000, cuCtxPopCurrent_v2),
    E("cuCtxGetDevice", 2000, cuCtxGetDevice),
    E("cuCtxGetDevice", 13000, cuCtxGetDevice_v2),
    E("cuCtxGetFlags", 7000, cuCtxGetFlags),
    E("cuCtxGetApiVersion", 3020, cuCtxGetApiVersion),
    E("cuCtxSynchronize", 2000, cuCtxSynchronize),
    E("cuCtxSynchronize", 13000, cuCtxSynchronize_v2),
    E("cuMemGetInfo", 3020, cuMemGetInfo_v2),
    E("cuMemAlloc", 3020, cuMemAlloc_v2),
    E("cuMemAllocPitch", 3020, cuMemAllocPitch_v2),
    E("cuMemAllocManaged", 6000, cuMemAllocManaged),
    E("cuMemFree", 3020, cuMemFree_v2),
    E("cuMemGetAddressRange", 3020, cuMemGetAddressRange_v2),
    E("cuMemAllocHost", 3020, cuMemAllocHost_v2),
    E("cuMemFreeHost", 2000, cuMemFreeHost),
    E("cuMemAllocAsync", 11020, cuMemAllocAsync),
    PT("cuMemAllocAsync", 11020, cuMemAllocAsync_ptsz),
    E("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync),
    PT("cuMemAllocFromPoolAsync", 11020, cuMemAllocFromPoolAsync_ptsz),
    E("cuMemFreeAsync", 11020, cuMemFreeAsync),
    PT("cuMemFreeAsync", 11020, cuMemFreeAsync_ptsz),
    E("cuMemPoolCreate", 11020, cuMemPoolCreate),
    E("cuMemPoolDestroy", 11020, cuMemPoolDestroy),
    E("cuMemPoolTrimTo", 11020, cuMemPoolTrimTo),
    E("cuMemPoolSetAttribute", 11020, cuMemPoolSetAttribute),
    E("cuMemPoolGetAttribute", 11020, cuMemPoolGetAttribute),
    E("cuMemCreate", 10020, cuMemCreate),
    E("cuMemRelease", 10020, cuMemRelease),
    E("cuMemAddressReserve", 10020, cuMemAddressReserve),
    E("cuMemAddressFree", 10020, cuMemAddressFree),
    E("cuMemMap", 10020, cuMemMap),
    E("cuMemUnmap", 10020, cuMemUnmap),
    E("cuMemSetAccess", 10020, cuMemSetAccess),
    E("cuMemGetAllocationGranularity", 10020, cuMemGetAllocationGranularity),
    E("cuArrayCreate", 3020, cuArrayCreate_v2),
    E("cuArray3DCreate", 3020, cuArray3DCreate_v2),
    E("cuArrayDestroy", 2000, cuArrayDestroy),
    E("cuMipmappedArrayCreate", 5000, cuMipmappedArrayCreate),
    E("cuMipmappedArrayDestroy", 5000, cuMipmappedArrayDestroy),
    E("cuMemcpy", 4000, cuMemcpy),
    PT("cuMemcpy", 7000, cuMemcpy_ptds),
    E("cuMemcpyAsync", 4000, cuMemcpyAsync),
    PT("cuMemcpyAsync", 7000, cuMemcpyAsync_ptsz),
    E("cuMemcpyHtoD", 3020, cuMemcpyHtoD_v2),
    PT("cuMemcpyHtoD", 7000, cuMemcpyHtoD_v2_ptds),
    E("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2),
    PT("cuMemcpyDtoH", 7000, cuMemcpyDtoH_v2_ptds),
    E("cuMemcpyDtoD", 3020, cuMemcpyDtoD_v2),
    PT("cuMemcpyDtoD", 7000, cuMemcpyDtoD_v2_ptds),
    E("cuMemcpyHtoDAsync", 3020, cuMemcpyHtoDAsync_v2),
    PT("cuMemcpyHtoDAsync", 7000, cuMemcpyHtoDAsync_v2_ptsz),
    E("cuMemcpyDtoHAsync", 3020, cuMemcpyDtoHAsync_v2),
    PT("cuMemcpyDtoHAsync", 7000, cuMemcpyDtoHAsync_v2_ptsz),
    E("cuMemcpyDtoDAsync", 3020, cuMemcpyDtoDAsync_v2),
    PT("cuMemcpyDtoDAsync", 7000, cuMemcpyDtoDAsync_v2_ptsz),
    E("cuMemcpy2D", 3020, cuMemcpy2D_v2),
    PT("cuMemcpy2D", 7000, cuMemcpy2D_v2_ptds),
    E("cuMemcpy2DAsync", 3020, cuMemcpy2DAsync_v2),
    PT("cuMemcpy2DAsync", 7000, cuMemcpy2DAsync_v2_ptsz),
    E("cuMemsetD8", 3020, cuMemsetD8_v2),
    PT("cuMemsetD8", 7000, cuMemsetD8_v2_ptds),
    E("cuMemsetD32", 3020, cuMemsetD32_v2),
    PT("cuMemsetD32", 7000, cuMemsetD32_v2_ptds),
    E("cuMemsetD8Async", 3020, cuMemsetD8Async),
    PT("cuMemsetD8Async", 7000, cuMemsetD8Async_ptsz),
    E("cuMemsetD32Async", 3020, cuMemsetD32Async),
    PT("cuMemsetD32Async", 7000, cuMemsetD32Async_ptsz),
    E("cuStreamCreate", 2000, cuStreamCreate),
    E("cuStreamCreateWithPriority", 5050, cuStreamCreateWithPriority),
    E("cuStreamDestroy", 4000, cuStreamDestroy_v2),
    E("cuStreamSynchronize", 2000, cuStreamSynchronize),
    PT("cuStreamSynchronize", 7000, cuStreamSynchronize_ptsz),
    E("cuStreamQuery", 2000, cuStreamQuery),
    PT("cuStreamQuery", 7000, cuStreamQuery_ptsz),
    E("cuStreamWaitEvent", 3020, cuStreamWaitEvent),
    PT("cuStreamWaitEvent", 7000, cuStreamWaitEvent_ptsz),
    E("cuStreamGetFlags", 5050, cuStreamGetFlags),
    E("cuStreamGetCtx", 9020, cuStreamGetCtx),
    E("cuLaunchHostFunc", 10000, cuLaunchHostFunc),
    PT("cuLaunchHostFunc", 10000, cuLaunchHostFunc_ptsz),
    E("cuEventCreate", 2000, cuEventCreate),
    E("cuEventRecord", 2000, cuEventRecord),
    PT("cuEventRecord", 7000, cuEventRecord_ptsz),
    E("cuEventRecordWithFlags", 11010, cuEventRecordWithFlags),
    PT("cuEventRecordWithFlags", 11010, cuEventRecordWithFlags_ptsz),
    E("cuEventQuery", 2000, cuEventQuery),
    E("cuEventSynchronize", 2000, cuEventSynchronize),
    E("cuEventDestroy", 4000, cuEventDestroy_v2),
    E("cuEventElapsedTime", 2000, cuEventElapsedTime),
    E("cuEventElapsedTime", 12080, cuEventElapsedTime_v2),
    E("cuModuleLoad", 2000, cuModuleLoad),
    E("cuModuleLoadData", 2000, cuModuleLoadData),
    E("cuModuleLoadDataEx", 2010, cuModuleLoadDataEx),
    E("cuModuleGetFunction", 2000, cuModuleGetFunction),
    E("cuModuleUnload", 2000, cuModuleUnload),
    E("cuLibraryLoadData", 12000, cuLibraryLoadData),
    E("cuLibraryUnload", 12000, cuLibraryUnload),
    E("cuLibraryGetKernel", 12000, cuLibraryGetKernel),
    E("cuLibraryGetModule", 12000, cuLibraryGetModule),
    E("cuKernelGetFunction", 12000, cuKernelGetFunction),
    E("cuLaunchKernel", 4000, cuLaunchKernel),
    PT("cuLaunchKernel", 7000, cuLaunchKernel_ptsz),
    E("cuLaunchKernelEx", 11060, cuLaunchKernelEx),
    PT("cuLaunchKernelEx", 11060, cuLaunchKernelEx_ptsz),
    E("cuLaunchCooperativeKernel", 9000, cuLaunchCooperativeKernel),
    PT("cuLaunchCooperativeKernel", 9000, cuLaunchCooperativeKernel_ptsz),
    E("cuStreamBeginCapture", 10000, cuStreamBeginCapture),
    PT("cuStreamBeginCapture", 10000, cuStreamBeginCapture_ptsz),
    E("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2),
    PT("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2_ptsz),
    E("cuStreamEndCapture", 10000, cuStreamEndCapture),
    PT("cuStreamEndCapture", 10000, cuStreamEndCapture_ptsz),
    E("cuStreamIsCapturing", 10000, cuStreamIsCapturing),
    E("cuGraphCreate", 10000, cuGraphCreate),
    E("cuGraphAddKernelNode", 10000, cuGraphAddKernelNode),
    E("cuGraphAddKernelNode", 12000, cuGraphAddKernelNode_v2),
    E("cuGraphInstantiate", 10000, cuGraphInstantiate_v2),
    E("cuGraphInstantiate", 11000, cuGraphInstantiate_v2),
    E("cuGraphInstantiate", 12000, cuGraphInstantiateWithFlags),
    E("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags),
    E("cuGraphLaunch", 10000, cuGraphLaunch),
    PT("cuGraphLaunch", 10000, cuGraphLaunch_ptsz),
    E("cuGraphExecDestroy", 10000, cuGraphExecDestroy),
    E("cuGraphDestroy", 10000, cuGraphDestroy),
    E("cuGraphAddMemAllocNode", 11040, cuGraphAddMemAllocNode),
    E("cuGraphAddMemFreeNode", 11040, cuGraphAddMemFreeNode),
    E("cuGraphMemAllocNodeGetParams", 11040, cuGraphMemAllocNodeGetParams),
    E("cuGraphMemFreeNodeGetParams", 11040, cuGraphMemFreeNodeGetParams),
    E("cuDeviceGraphMemTrim", 11040, cuDeviceGraphMemTrim),
    E("cuGraphGetNodes", 10000, cuGraphGetNodes),
    E("cuGraphNodeGetType", 10000, cuGraphNodeGetType),
    E("cuDeviceGetGraphMemAttribute", 11040, cuDeviceGetGraphMemAttribute),
    E("cuDeviceSetGraphMemAttribute", 11040, cuDeviceSetGraphMemAttribute),
    /* funcattr.c */
    E("cuFuncGetAttribute", 2020, cuFuncGetAttribute),
    E("cuFuncSetAttribute", 9000, cuFuncSetAttribute),
    E("cuFuncSetCacheConfig", 3000, cuFuncSetCacheConfig),
    E("cuFuncSetSharedMemConfig", 4020, cuFuncSetSharedMemConfig),
    E("cuFuncGetModule", 11000, cuFuncGetModule),
    E("cuFuncGetName", 12030, cuFuncGetName),
    E("cuFuncIsLoaded", 12040, cuFuncIsLoaded),
    E("cuFuncLoad", 12040, cuFuncLoad),
    E("cuKernelGetAttribute", 12000, cuKernelGetAttribute),
    E("cuKernelSetAttribute", 12000, cuKernelSetAttribute),
    E("cuKernelSetCacheConfig", 12000, cuKernelSetCacheConfig),
    E("cuKernelGetName", 12030, cuKernelGetName),
    E("cuKernelGetLibrary", 12050, cuKernelGetLibrary),
    E("cuModuleGetLoadingMode", 11070, cuModuleGetLoadingMode),
    E("cuModuleGetFunctionCount", 12040, cuModuleGetFunctionCount),
    E("cuModuleEnumerateFunctions", 12040, cuModuleEnumerateFunctions),
    E("cuLibraryGetKernelCount", 12040, cuLibraryGetKernelCount),
    E("cuLibraryEnumerateKernels", 12040, cuLibraryEnumerateKernels),
    E("cuModuleGetGlobal", 3020, cuModuleGetGlobal_v2),
    E("cuLibraryGetGlobal", 12000, cuLibraryGetGlobal),
    E("cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050,
      cuOccupancyMaxActiveBlocksPerMultiprocessor),
    E("cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", 7000,
      cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags),
    E("cuOccupancyMaxPotentialBlockSize", 6050, cuOccupancyMaxPotentialBlockSize),
    E("cuOccupancyMaxPotentialBlockSizeWithFlags", 7000, cuOccupancyMaxPotentialBlockSizeWithFlags),
    E("cuOccupancyAvailableDynamicSMemPerBlock", 11000, cuOccupancyAvailableDynamicSMemPerBlock),
    E("cuOccupancyMaxPotentialClusterSize", 11080, cuOccupancyMaxPotentialClusterSize),
    E("cuOccupancyMaxActiveClusters", 11080, cuOccupancyMaxActiveClusters),
    /* link.c */
    E("cuLinkCreate", 5050, cuLinkCreate),
    E("cuLinkCreate", 6050, cuLinkCreate_v2),
    E("cuLinkAddData", 5050, cuLinkAddData),
    E("cuLinkAddData", 6050, cuLinkAddData_v2),
    E("cuLinkAddFile", 5050, cuLinkAddFile),
    E("cuLinkAddFile", 6050, cuLinkAddFile_v2),
    E("cuLinkComplete", 5050, cuLinkComplete),
    E("cuLinkDestroy", 5050, cuLinkDestroy),
    E("cuLibraryLoadFromFile", 12000, cuLibraryLoadFromFile),
    /* ctxmisc.c */
    E("cuCtxGetLimit", 3010, cuCtxGetLimit),
    E("cuCtxSetLimit", 3010, cuCtxSetLimit),
    E("cuCtxGetStreamPriorityRange", 5050, cuCtxGetStreamPriorityRange),
    E("cuCtxGetCacheConfig", 3020, cuCtxGetCacheConfig),
    E("cuCtxSetCacheConfig", 3020, cuCtxSetCacheConfig),
    E("cuCtxGetSharedMemConfig", 4020, cuCtxGetSharedMemConfig),
    E("cuCtxSetSharedMemConfig", 4020, cuCtxSetSharedMemConfig),
    E("cuCtxGetId", 12000, cuCtxGetId),
    E("cuCtxSetFlags", 12010, cuCtxSetFlags),
    E("cuCtxResetPersistingL2Cache", 11000, cuCtxResetPersistingL2Cache),
    E("cuCtxGetExecAffinity", 11040, cuCtxGetExecAffinity),
    E("cuCtxEnablePeerAccess", 4000, cuCtxEnablePeerAccess),
    E("cuCtxDisablePeerAccess", 4000, cuCtxDisablePeerAccess),
    E("cuDeviceGetExecAffinitySupport", 11040, cuDeviceGetExecAffinitySupport),
    E("cuDeviceGetP2PAttribute", 8000, cuDeviceGetP2PAttribute),
    E("cuDeviceGetLuid", 10000, cuDeviceGetLuid),
    E("cuDeviceGetByPCIBusId", 4010, cuDeviceGetByPCIBusId),
    E("cuDeviceComputeCapability", 2000, cuDeviceComputeCapability),
    E("cuDeviceGetProperties", 2000, cuDeviceGetProperties),
    E("cuDeviceSetMemPool", 11020, cuDeviceSetMemPool),
    E("cuProfilerStart", 4000, cuProfilerStart),
    E("cuProfilerStop", 4000, cuProfilerStop),
    E("cuGetExportTable", 3000, cuGetExportTable),
    /* stream2.c */
    E("cuStreamGetPriority", 5050, cuStreamGetPriority),
    PT("cuStreamGetPriority", 7000, cuStreamGetPriority_ptsz),
    E("cuStreamGetId", 12000, cuStreamGetId),
    PT("cuStreamGetId", 12000, cuStreamGetId_ptsz),
    PT("cuStreamGetFlags", 7000, cuStreamGetFlags_ptsz),
    PT("cuStreamGetCtx", 9020, cuStreamGetCtx_ptsz),
    E("cuStreamGetCtx", 12050, cuStreamGetCtx_v2),
    PT("cuStreamGetCtx", 12050, cuStreamGetCtx_v2_ptsz),
    E("cuStreamGetDevice", 12080, cuStreamGetDevice),
    PT("cuStreamGetDevice", 12080, cuStreamGetDevice_ptsz),
    E("cuStreamAddCallback", 5000, cuStreamAddCallback),
    PT("cuStreamAddCallback", 7000, cuStreamAddCallback_ptsz),
    E("cuStreamAttachMemAsync", 6000, cuStreamAttachMemAsync),
    PT("cuStreamAttachMemAsync", 7000, cuStreamAttachMemAsync_ptsz),
    PT("cuStreamIsCapturing", 10000, cuStreamIsCapturing_ptsz),
    E("cuStreamGetCaptureInfo", 10010, cuStreamGetCaptureInfo),
    PT("cuStreamGetCaptureInfo", 10010, cuStreamGetCaptureInfo_ptsz),
    E("cuStreamGetCaptureInfo", 11030, cuStreamGetCaptureInfo_v2),
    PT("cuStreamGetCaptureInfo", 11030, cuStreamGetCaptureInfo_v2_ptsz),
    E("cuStreamGetCaptureInfo", 12030, cuStreamGetCaptureInfo_v3),
    PT("cuStreamGetCaptureInfo", 12030, cuStreamGetCaptureInfo_v3_ptsz),
    E("cuThreadExchangeStreamCaptureMode", 10010, cuThreadExchangeStreamCaptureMode),
    E("cuGraphUpload", 11010, cuGraphUpload),
    PT("cuGraphUpload", 11010, cuGraphUpload_ptsz),
    /* pointer.c */
    E("cuPointerGetAttribute", 4000, cuPointerGetAttribute),
    E("cuPointerGetAttributes", 7000, cuPointerGetAttributes),
    E("cuPointerSetAttribute", 6000, cuPointerSetAttribute),
    E("cuMemHostAlloc", 2020, cuMemHostAlloc),
    E("cuMemHostGetDevicePointer", 3020, cuMemHostGetDevicePointer_v2),
    E("cuMemHostGetFlags", 2030, cuMemHostGetFlags),
    E("cuMemHostRegister", 4000, cuMemHostRegister),
    E("cuMemHostRegister", 6050, cuMemHostRegister_v2),
    E("cuMemHostUnregister", 4000, cuMemHostUnregister),
    E("cuMemAdvise", 8000, cuMemAdvise),
    E("cuMemAdvise", 12020, cuMemAdvise_v2),
    E("cuMemPrefetchAsync", 8000, cuMemPrefetchAsync),
    PT("cuMemPrefetchAsync", 8000, cuMemPrefetchAsync_ptsz),
    E("cuMemPrefetchAsync", 12020, cuMemPrefetchAsync_v2),
    PT("cuMemPrefetchAsync", 12020, cuMemPrefetchAsync_v2_ptsz),
    E("cuMemRangeGetAttribute", 8000, cuMemRangeGetAttribute),
    E("cuMemRangeGetAttributes", 8000, cuMemRangeGetAttributes),
    /* vmm2.c */
    E("cuMemRetainAllocationHandle", 11000, cuMemRetainAllocationHandle),
    E("cuMemGetAllocationPropertiesFromHandle", 10020, cuMemGetAllocationPropertiesFromHandle),
    /* memops2.c */
    E("cuMemsetD16", 3020, cuMemsetD16_v2),
    PT("cuMemsetD16", 7000, cuMemsetD16_v2_ptds),
    E("cuMemsetD16Async", 3020, cuMemsetD16Async),
    PT("cuMemsetD16Async", 7000, cuMemsetD16Async_ptsz),
    E("cuMemsetD2D8", 3020, cuMemsetD2D8_v2),
    PT("cuMemsetD2D8", 7000, cuMemsetD2D8_v2_ptds),
    E("cuMemsetD2D16", 3020, cuMemsetD2D16_v2),
    PT("cuMemsetD2D16", 7000, cuMemsetD2D16_v2_ptds),
    E("cuMemsetD2D32", 3020, cuMemsetD2D32_v2),
    PT("cuMemsetD2D32", 7000, cuMemsetD2D32_v2_ptds),
    E("cuMemsetD2D8Async", 3020, cuMemsetD2D8Async),
    PT("cuMemsetD2D8Async", 7000, cuMemsetD2D8Async_ptsz),
    E("cuMemsetD2D16Async", 3020, cuMemsetD2D16Async),
    PT("cuMemsetD2D16Async", 7000, cuMemsetD2D16Async_ptsz),
    E("cuMemsetD2D32Async", 3020, cuMemsetD2D32Async),
    PT("cuMemsetD2D32Async", 7000, cuMemsetD2D32Async_ptsz),
    E("cuMemcpy3D", 3020, cuMemcpy3D_v2),
    PT("cuMemcpy3D", 7000, cuMemcpy3D_v2_ptds),
    E("cuMemcpy3DAsync", 3020, cuMemcpy3DAsync_v2),
    PT("cuMemcpy3DAsync", 7000, cuMemcpy3DAsync_v2_ptsz),
    E("cuMemcpy3DPeer", 4000, cuMemcpy3DPeer),
    PT("cuMemcpy3DPeer", 7000, cuMemcpy3DPeer_ptds),
    E("cuMemcpy3DPeerAsync", 4000, cuMemcpy3DPeerAsync),
    PT("cuMemcpy3DPeerAsync", 7000, cuMemcpy3DPeerAsync_ptsz),
    E("cuMemcpy2DUnaligned", 3020, cuMemcpy2DUnaligned_v2),
    PT("cuMemcpy2DUnaligned", 7000, cuMemcpy2DUnaligned_v2_ptds),
    E("cuMemcpyPeer", 4000, cuMemcpyPeer),
    PT("cuMemcpyPeer", 7000, cuMemcpyPeer_ptds),
    E("cuMemcpyPeerAsync", 4000, cuMemcpyPeerAsync),
    PT("cuMemcpyPeerAsync", 7000, cuMemcpyPeerAsync_ptsz),
};

static CUresult lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status)
{
        if (!symbol || !pfn ||
            (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                                   CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
                return CUDA_ERROR_INVALID_VALUE;
        bool want_pt = flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
        const entry *best = NULL, *best_pt = NULL;
        bool known = false;
        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
                const entry *e = &table[i];
                if (strcmp(e->name, symbol))
                        continue;
                known = true;
                if (e->version > version)
                        continue;
                const entry **slot = e->per_thread ? &best_pt : &best;
                if (!*slot || e->version >= (*slot)->version)
                        *slot = e;
        }
        const entry *pick = want_pt && best_pt ? best_pt : best;
        if (!pick) {
                *pfn = NULL;
                if (status)
                        *status = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                                        : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
                return CUDA_ERROR_NOT_FOUND;
        }
        *pfn = pick->fn;
        if (status)
                *status = CU_GET_PROC_ADDRESS_SUCCESS;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                              cuuint64_t flags,
                                              CUdriverProcAddressQueryResult *symbolStatus)
{
        return lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}

KERF_CUDA_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                           cuuint64_t flags)
{
        return lookup(symbol, pfn, cudaVersion, flags, NULL);
}
