/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_abi_protos.h - prototypes of the CUDA driver entry points (simulated libcuda, shim) */
#ifndef KERF_SIM_CUDA_ABI_PROTOS_H
#define KERF_SIM_CUDA_ABI_PROTOS_H

/* Kept apart from the types so that a test can include it after NVIDIA's own cuda.h: the
 * compiler then rejects any prototype here whose type differs from the real one. Names are the
 * versioned ABI names (cuMemAlloc_v2, not the cuMemAlloc macro). */

#ifndef KERF_CUDA_EXPORT
#define KERF_CUDA_EXPORT
#endif

#define KERF_CUDA_FN(ret) KERF_CUDA_EXPORT ret

/* init, version, errors, entry points */
KERF_CUDA_FN(CUresult) cuInit(unsigned int Flags);
KERF_CUDA_FN(CUresult) cuDriverGetVersion(int *driverVersion);
KERF_CUDA_FN(CUresult) cuGetErrorName(CUresult error, const char **pStr);
KERF_CUDA_FN(CUresult) cuGetErrorString(CUresult error, const char **pStr);
KERF_CUDA_FN(CUresult)
cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                    CUdriverProcAddressQueryResult *symbolStatus);

/* devices */
KERF_CUDA_FN(CUresult) cuDeviceGet(CUdevice *device, int ordinal);
KERF_CUDA_FN(CUresult) cuDeviceGetCount(int *count);
KERF_CUDA_FN(CUresult) cuDeviceGetName(char *name, int len, CUdevice dev);
KERF_CUDA_FN(CUresult) cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev);
KERF_CUDA_FN(CUresult) cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
KERF_CUDA_FN(CUresult) cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev);
KERF_CUDA_FN(CUresult) cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);
KERF_CUDA_FN(CUresult) cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev);
KERF_CUDA_FN(CUresult) cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev);
KERF_CUDA_FN(CUresult) cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev);

/* primary and created contexts */
KERF_CUDA_FN(CUresult) cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
KERF_CUDA_FN(CUresult) cuDevicePrimaryCtxRelease_v2(CUdevice dev);
KERF_CUDA_FN(CUresult) cuDevicePrimaryCtxReset_v2(CUdevice dev);
KERF_CUDA_FN(CUresult) cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active);
KERF_CUDA_FN(CUresult) cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags);
KERF_CUDA_FN(CUresult)
cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
               CUdevice dev);
KERF_CUDA_FN(CUresult) cuCtxDestroy_v2(CUcontext ctx);
KERF_CUDA_FN(CUresult) cuCtxSetCurrent(CUcontext ctx);
KERF_CUDA_FN(CUresult) cuCtxGetCurrent(CUcontext *pctx);
KERF_CUDA_FN(CUresult) cuCtxPushCurrent_v2(CUcontext ctx);
KERF_CUDA_FN(CUresult) cuCtxPopCurrent_v2(CUcontext *pctx);
KERF_CUDA_FN(CUresult) cuCtxGetDevice(CUdevice *device);
KERF_CUDA_FN(CUresult) cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx);
KERF_CUDA_FN(CUresult) cuCtxGetFlags(unsigned int *flags);
KERF_CUDA_FN(CUresult) cuCtxGetApiVersion(CUcontext ctx, unsigned int *version);
KERF_CUDA_FN(CUresult) cuCtxSynchronize(void);
KERF_CUDA_FN(CUresult) cuCtxSynchronize_v2(CUcontext ctx);

/* memory */
KERF_CUDA_FN(CUresult) cuMemGetInfo_v2(size_t *free, size_t *total);
KERF_CUDA_FN(CUresult) cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
KERF_CUDA_FN(CUresult)
cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                   unsigned int ElementSizeBytes);
KERF_CUDA_FN(CUresult) cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
KERF_CUDA_FN(CUresult) cuMemFree_v2(CUdeviceptr dptr);
KERF_CUDA_FN(CUresult) cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr);
KERF_CUDA_FN(CUresult) cuMemAllocHost_v2(void **pp, size_t bytesize);
KERF_CUDA_FN(CUresult) cuMemFreeHost(void *p);
KERF_CUDA_FN(CUresult) cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream);
KERF_CUDA_FN(CUresult) cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream);
KERF_CUDA_FN(CUresult) cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps);
KERF_CUDA_FN(CUresult) cuMemPoolDestroy(CUmemoryPool pool);
KERF_CUDA_FN(CUresult) cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep);
KERF_CUDA_FN(CUresult)
cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value);
KERF_CUDA_FN(CUresult)
cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value);
KERF_CUDA_FN(CUresult)
cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
            unsigned long long flags);
KERF_CUDA_FN(CUresult) cuMemRelease(CUmemGenericAllocationHandle handle);
KERF_CUDA_FN(CUresult)
cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                    unsigned long long flags);
KERF_CUDA_FN(CUresult) cuMemAddressFree(CUdeviceptr ptr, size_t size);
KERF_CUDA_FN(CUresult)
cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
         unsigned long long flags);
KERF_CUDA_FN(CUresult) cuMemUnmap(CUdeviceptr ptr, size_t size);
KERF_CUDA_FN(CUresult)
cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count);
KERF_CUDA_FN(CUresult)
cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr);
KERF_CUDA_FN(CUresult)
cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                       CUmemGenericAllocationHandle handle);
KERF_CUDA_FN(CUresult)
cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                              CUmemAllocationGranularity_flags option);
KERF_CUDA_FN(CUresult)
cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray);
KERF_CUDA_FN(CUresult)
cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray);
KERF_CUDA_FN(CUresult) cuArrayDestroy(CUarray hArray);
KERF_CUDA_FN(CUresult)
cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
                       const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
                       unsigned int numMipmapLevels);
KERF_CUDA_FN(CUresult) cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray);

/* copies and sets (legacy default stream and _ptds/_ptsz per-thread variants) */
KERF_CUDA_FN(CUresult) cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
KERF_CUDA_FN(CUresult) cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
KERF_CUDA_FN(CUresult)
cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
KERF_CUDA_FN(CUresult)
cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
KERF_CUDA_FN(CUresult) cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
KERF_CUDA_FN(CUresult) cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
KERF_CUDA_FN(CUresult)
cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount);
KERF_CUDA_FN(CUresult)
cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount);
KERF_CUDA_FN(CUresult)
cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                     CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,
                          CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                     CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                          CUstream hStream);
KERF_CUDA_FN(CUresult) cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy);
KERF_CUDA_FN(CUresult) cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *pCopy);
KERF_CUDA_FN(CUresult) cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream);
KERF_CUDA_FN(CUresult) cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *pCopy, CUstream hStream);
KERF_CUDA_FN(CUresult) cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N);
KERF_CUDA_FN(CUresult) cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N);
KERF_CUDA_FN(CUresult) cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N);
KERF_CUDA_FN(CUresult) cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N);
KERF_CUDA_FN(CUresult)
cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream);

/* streams and events */
KERF_CUDA_FN(CUresult) cuStreamCreate(CUstream *phStream, unsigned int Flags);
KERF_CUDA_FN(CUresult)
cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority);
KERF_CUDA_FN(CUresult) cuStreamDestroy_v2(CUstream hStream);
KERF_CUDA_FN(CUresult) cuStreamSynchronize(CUstream hStream);
KERF_CUDA_FN(CUresult) cuStreamSynchronize_ptsz(CUstream hStream);
KERF_CUDA_FN(CUresult) cuStreamQuery(CUstream hStream);
KERF_CUDA_FN(CUresult) cuStreamQuery_ptsz(CUstream hStream);
KERF_CUDA_FN(CUresult) cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags);
KERF_CUDA_FN(CUresult) cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags);
KERF_CUDA_FN(CUresult) cuStreamGetFlags(CUstream hStream, unsigned int *flags);
KERF_CUDA_FN(CUresult) cuStreamGetCtx(CUstream hStream, CUcontext *pctx);
KERF_CUDA_FN(CUresult) cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData);
KERF_CUDA_FN(CUresult) cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData);
KERF_CUDA_FN(CUresult) cuEventCreate(CUevent *phEvent, unsigned int Flags);
KERF_CUDA_FN(CUresult) cuEventRecord(CUevent hEvent, CUstream hStream);
KERF_CUDA_FN(CUresult) cuEventRecord_ptsz(CUevent hEvent, CUstream hStream);
KERF_CUDA_FN(CUresult) cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags);
KERF_CUDA_FN(CUresult)
cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags);
KERF_CUDA_FN(CUresult) cuEventQuery(CUevent hEvent);
KERF_CUDA_FN(CUresult) cuEventSynchronize(CUevent hEvent);
KERF_CUDA_FN(CUresult) cuEventDestroy_v2(CUevent hEvent);
KERF_CUDA_FN(CUresult) cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
KERF_CUDA_FN(CUresult) cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd);

/* modules and launches */
KERF_CUDA_FN(CUresult) cuModuleLoad(CUmodule *module, const char *fname);
KERF_CUDA_FN(CUresult) cuModuleLoadData(CUmodule *module, const void *image);
KERF_CUDA_FN(CUresult)
cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                   CUjit_option *options, void **optionValues);
KERF_CUDA_FN(CUresult) cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
KERF_CUDA_FN(CUresult) cuModuleUnload(CUmodule hmod);
KERF_CUDA_FN(CUresult)
cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                  void **jitOptionsValues, unsigned int numJitOptions,
                  CUlibraryOption *libraryOptions, void **libraryOptionValues,
                  unsigned int numLibraryOptions);
KERF_CUDA_FN(CUresult) cuLibraryUnload(CUlibrary library);
KERF_CUDA_FN(CUresult) cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name);
KERF_CUDA_FN(CUresult) cuLibraryGetModule(CUmodule *pMod, CUlibrary library);
KERF_CUDA_FN(CUresult) cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel);
KERF_CUDA_FN(CUresult)
cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
               unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
               unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra);
KERF_CUDA_FN(CUresult)
cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                    unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                    unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                    void **kernelParams, void **extra);
KERF_CUDA_FN(CUresult)
cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra);
KERF_CUDA_FN(CUresult)
cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                      void **extra);
KERF_CUDA_FN(CUresult)
cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                          unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                          unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                          void **kernelParams);
KERF_CUDA_FN(CUresult)
cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                               unsigned int gridDimZ, unsigned int blockDimX,
                               unsigned int blockDimY, unsigned int blockDimZ,
                               unsigned int sharedMemBytes, CUstream hStream, void **kernelParams);

/* graphs and stream capture */
KERF_CUDA_FN(CUresult) cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode);
KERF_CUDA_FN(CUresult) cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode);
KERF_CUDA_FN(CUresult) cuStreamEndCapture(CUstream hStream, CUgraph *phGraph);
KERF_CUDA_FN(CUresult) cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph);
KERF_CUDA_FN(CUresult) cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus);
KERF_CUDA_FN(CUresult) cuGraphCreate(CUgraph *phGraph, unsigned int flags);
KERF_CUDA_FN(CUresult)
cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                        size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams);
KERF_CUDA_FN(CUresult)
cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags);
KERF_CUDA_FN(CUresult) cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream);
KERF_CUDA_FN(CUresult) cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream);
KERF_CUDA_FN(CUresult) cuGraphExecDestroy(CUgraphExec hGraphExec);
KERF_CUDA_FN(CUresult) cuGraphDestroy(CUgraph hGraph);
KERF_CUDA_FN(CUresult)
cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                       size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams);
KERF_CUDA_FN(CUresult)
cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                      size_t numDependencies, CUdeviceptr dptr);
KERF_CUDA_FN(CUresult)
cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *params_out);
KERF_CUDA_FN(CUresult) cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out);
KERF_CUDA_FN(CUresult) cuDeviceGraphMemTrim(CUdevice device);
KERF_CUDA_FN(CUresult) cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes);
KERF_CUDA_FN(CUresult) cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type);
KERF_CUDA_FN(CUresult)
cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value);
KERF_CUDA_FN(CUresult)
cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value);

/* function and kernel attributes, occupancy, module queries, linking */
KERF_CUDA_FN(CUresult) cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc);
KERF_CUDA_FN(CUresult) cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value);
KERF_CUDA_FN(CUresult) cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config);
KERF_CUDA_FN(CUresult) cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config);
KERF_CUDA_FN(CUresult) cuFuncGetModule(CUmodule *hmod, CUfunction hfunc);
KERF_CUDA_FN(CUresult) cuFuncGetName(const char **name, CUfunction hfunc);
KERF_CUDA_FN(CUresult) cuFuncIsLoaded(CUfunctionLoadingState *state, CUfunction function);
KERF_CUDA_FN(CUresult) cuFuncLoad(CUfunction function);
KERF_CUDA_FN(CUresult)
cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev);
KERF_CUDA_FN(CUresult)
cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev);
KERF_CUDA_FN(CUresult) cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev);
KERF_CUDA_FN(CUresult) cuKernelGetName(const char **name, CUkernel hfunc);
KERF_CUDA_FN(CUresult) cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel);
KERF_CUDA_FN(CUresult) cuModuleGetLoadingMode(CUmoduleLoadingMode *mode);
KERF_CUDA_FN(CUresult) cuModuleGetFunctionCount(unsigned int *count, CUmodule mod);
KERF_CUDA_FN(CUresult)
cuModuleEnumerateFunctions(CUfunction *functions, unsigned int numFunctions, CUmodule mod);
KERF_CUDA_FN(CUresult) cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib);
KERF_CUDA_FN(CUresult)
cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels, CUlibrary lib);
KERF_CUDA_FN(CUresult)
cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name);
KERF_CUDA_FN(CUresult)
cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name);
KERF_CUDA_FN(CUresult)
cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                            size_t dynamicSMemSize);
KERF_CUDA_FN(CUresult)
cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func, int blockSize,
                                                     size_t dynamicSMemSize, unsigned int flags);
KERF_CUDA_FN(CUresult)
cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                 CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                 size_t dynamicSMemSize, int blockSizeLimit);
KERF_CUDA_FN(CUresult)
cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize, CUfunction func,
                                          CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                          size_t dynamicSMemSize, int blockSizeLimit,
                                          unsigned int flags);
KERF_CUDA_FN(CUresult)
cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, CUfunction func, int numBlocks,
                                        int blockSize);
KERF_CUDA_FN(CUresult)
cuOccupancyMaxPotentialClusterSize(int *clusterSize, CUfunction func, const CUlaunchConfig *config);
KERF_CUDA_FN(CUresult)
cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func, const CUlaunchConfig *config);
KERF_CUDA_FN(CUresult)
cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options, void **optionValues,
                CUlinkState *stateOut);
KERF_CUDA_FN(CUresult)
cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                 unsigned int numOptions, CUjit_option *options, void **optionValues);
KERF_CUDA_FN(CUresult)
cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path, unsigned int numOptions,
                 CUjit_option *options, void **optionValues);
KERF_CUDA_FN(CUresult)
cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                      void **jitOptionsValues, unsigned int numJitOptions,
                      CUlibraryOption *libraryOptions, void **libraryOptionValues,
                      unsigned int numLibraryOptions);
KERF_CUDA_FN(CUresult) cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut);
KERF_CUDA_FN(CUresult) cuLinkDestroy(CUlinkState state);

/* context and device queries */
KERF_CUDA_FN(CUresult) cuCtxGetLimit(size_t *pvalue, CUlimit limit);
KERF_CUDA_FN(CUresult) cuCtxSetLimit(CUlimit limit, size_t value);
KERF_CUDA_FN(CUresult) cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority);
KERF_CUDA_FN(CUresult) cuCtxGetCacheConfig(CUfunc_cache *pconfig);
KERF_CUDA_FN(CUresult) cuCtxSetCacheConfig(CUfunc_cache config);
KERF_CUDA_FN(CUresult) cuCtxGetSharedMemConfig(CUsharedconfig *pConfig);
KERF_CUDA_FN(CUresult) cuCtxSetSharedMemConfig(CUsharedconfig config);
KERF_CUDA_FN(CUresult) cuCtxGetId(CUcontext ctx, unsigned long long *ctxId);
KERF_CUDA_FN(CUresult) cuCtxSetFlags(unsigned int flags);
KERF_CUDA_FN(CUresult) cuCtxResetPersistingL2Cache(void);
KERF_CUDA_FN(CUresult)
cuCtxGetExecAffinity(CUexecAffinityParam *pExecAffinity, CUexecAffinityType type);
KERF_CUDA_FN(CUresult) cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags);
KERF_CUDA_FN(CUresult) cuCtxDisablePeerAccess(CUcontext peerContext);
KERF_CUDA_FN(CUresult)
cuDeviceGetExecAffinitySupport(int *pi, CUexecAffinityType type, CUdevice dev);
KERF_CUDA_FN(CUresult)
cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                        CUdevice dstDevice);
KERF_CUDA_FN(CUresult) cuDeviceGetLuid(char *luid, unsigned int *deviceNodeMask, CUdevice dev);
KERF_CUDA_FN(CUresult) cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId);
KERF_CUDA_FN(CUresult) cuDeviceComputeCapability(int *major, int *minor, CUdevice dev);
KERF_CUDA_FN(CUresult) cuDeviceGetProperties(CUdevprop *prop, CUdevice dev);
KERF_CUDA_FN(CUresult) cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool);
KERF_CUDA_FN(CUresult) cuProfilerStart(void);
KERF_CUDA_FN(CUresult) cuProfilerStop(void);
KERF_CUDA_FN(CUresult) cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId);

/* stream queries, callbacks and capture info */
KERF_CUDA_FN(CUresult) cuStreamGetPriority(CUstream hStream, int *priority);
KERF_CUDA_FN(CUresult) cuStreamGetPriority_ptsz(CUstream hStream, int *priority);
KERF_CUDA_FN(CUresult) cuStreamGetId(CUstream hStream, unsigned long long *streamId);
KERF_CUDA_FN(CUresult) cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId);
KERF_CUDA_FN(CUresult) cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags);
KERF_CUDA_FN(CUresult) cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx);
KERF_CUDA_FN(CUresult) cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx);
KERF_CUDA_FN(CUresult)
cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx, CUgreenCtx *pGreenCtx);
KERF_CUDA_FN(CUresult) cuStreamGetDevice(CUstream hStream, CUdevice *device);
KERF_CUDA_FN(CUresult) cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device);
KERF_CUDA_FN(CUresult)
cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
                    unsigned int flags);
KERF_CUDA_FN(CUresult)
cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void *userData,
                         unsigned int flags);
KERF_CUDA_FN(CUresult)
cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags);
KERF_CUDA_FN(CUresult)
cuStreamAttachMemAsync_ptsz(CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags);
KERF_CUDA_FN(CUresult)
cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus);
KERF_CUDA_FN(CUresult)
cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                          cuuint64_t *id_out, CUgraph *graph_out,
                          const CUgraphNode **dependencies_out,
                          const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out);
KERF_CUDA_FN(CUresult)
cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *captureStatus_out,
                               cuuint64_t *id_out, CUgraph *graph_out,
                               const CUgraphNode **dependencies_out,
                               const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out);
KERF_CUDA_FN(CUresult) cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode);
KERF_CUDA_FN(CUresult) cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream);
KERF_CUDA_FN(CUresult) cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream);

/* pointers, host memory, managed-memory hints */
KERF_CUDA_FN(CUresult)
cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr);
KERF_CUDA_FN(CUresult)
cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes, void **data,
                       CUdeviceptr ptr);
KERF_CUDA_FN(CUresult)
cuPointerSetAttribute(const void *value, CUpointer_attribute attribute, CUdeviceptr ptr);
KERF_CUDA_FN(CUresult) cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags);
KERF_CUDA_FN(CUresult)
cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags);
KERF_CUDA_FN(CUresult) cuMemHostGetFlags(unsigned int *pFlags, void *p);
KERF_CUDA_FN(CUresult) cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags);
KERF_CUDA_FN(CUresult) cuMemHostUnregister(void *p);
KERF_CUDA_FN(CUresult)
cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location);
KERF_CUDA_FN(CUresult)
cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
                      CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                           unsigned int flags, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemRangeGetAttribute(void *data, size_t dataSize, CUmem_range_attribute attribute,
                       CUdeviceptr devPtr, size_t count);
KERF_CUDA_FN(CUresult)
cuMemRangeGetAttributes(void **data, size_t *dataSizes, CUmem_range_attribute *attributes,
                        size_t numAttributes, CUdeviceptr devPtr, size_t count);

/* 16-bit and 2D sets, 3D, peer and unaligned copies */
KERF_CUDA_FN(CUresult) cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N);
KERF_CUDA_FN(CUresult) cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N);
KERF_CUDA_FN(CUresult)
cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                size_t Height);
KERF_CUDA_FN(CUresult)
cuMemsetD2D8_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                     size_t Height);
KERF_CUDA_FN(CUresult)
cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                 size_t Height);
KERF_CUDA_FN(CUresult)
cuMemsetD2D16_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                      size_t Height);
KERF_CUDA_FN(CUresult)
cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                 size_t Height);
KERF_CUDA_FN(CUresult)
cuMemsetD2D32_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                      size_t Height);
KERF_CUDA_FN(CUresult)
cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                  size_t Height, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemsetD2D8Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                       size_t Height, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                   size_t Height, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemsetD2D16Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                        size_t Height, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                   size_t Height, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemsetD2D32Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                        size_t Height, CUstream hStream);
KERF_CUDA_FN(CUresult) cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy);
KERF_CUDA_FN(CUresult) cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy);
KERF_CUDA_FN(CUresult) cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream);
KERF_CUDA_FN(CUresult) cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream);
KERF_CUDA_FN(CUresult) cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *pCopy);
KERF_CUDA_FN(CUresult) cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER *pCopy);
KERF_CUDA_FN(CUresult) cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream);
KERF_CUDA_FN(CUresult) cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER *pCopy, CUstream hStream);
KERF_CUDA_FN(CUresult) cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy);
KERF_CUDA_FN(CUresult) cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *pCopy);
KERF_CUDA_FN(CUresult)
cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
             CUcontext srcContext, size_t ByteCount);
KERF_CUDA_FN(CUresult)
cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                  CUcontext srcContext, size_t ByteCount);
KERF_CUDA_FN(CUresult)
cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                  CUcontext srcContext, size_t ByteCount, CUstream hStream);
KERF_CUDA_FN(CUresult)
cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                       CUcontext srcContext, size_t ByteCount, CUstream hStream);

#endif /* KERF_SIM_CUDA_ABI_PROTOS_H */
