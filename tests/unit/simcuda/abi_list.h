/* SPDX-License-Identifier: Apache-2.0 */
/* abi_list.h - the layouts and values compared between cuda_abi.h and NVIDIA's cuda.h */
/* No include guard: included once per translation unit with X() defined. */
X(sizeof(CUdeviceptr))
X(sizeof(CUdevice)) X(sizeof(CUuuid)) X(sizeof(CUresult)) X(sizeof(CUmemGenericAllocationHandle)) X(
    sizeof(
        CUDA_MEMCPY2D)) X(offsetof(CUDA_MEMCPY2D,
                                   srcMemoryType)) X(offsetof(CUDA_MEMCPY2D,
                                                              srcDevice)) X(offsetof(CUDA_MEMCPY2D,
                                                                                     dstXInBytes))
    X(offsetof(CUDA_MEMCPY2D, dstHost)) X(offsetof(CUDA_MEMCPY2D, WidthInBytes)) X(offsetof(CUDA_MEMCPY2D, Height)) X(
        sizeof(CUDA_ARRAY_DESCRIPTOR)) X(offsetof(CUDA_ARRAY_DESCRIPTOR,
                                                  Format)) X(offsetof(CUDA_ARRAY_DESCRIPTOR, NumChannels))
        X(sizeof(CUDA_ARRAY3D_DESCRIPTOR)) X(offsetof(CUDA_ARRAY3D_DESCRIPTOR, Format)) X(offsetof(
            CUDA_ARRAY3D_DESCRIPTOR,
            Flags)) X(sizeof(CUmemLocation)) X(sizeof(CUmemAllocationProp)) X(offsetof(CUmemAllocationProp, location))
            X(offsetof(CUmemAllocationProp, win32HandleMetaData)) X(offsetof(CUmemAllocationProp, allocFlags)) X(
                sizeof(CUmemAccessDesc)) X(offsetof(CUmemAccessDesc, flags)) X(sizeof(CUmemPoolProps))
                X(offsetof(CUmemPoolProps, location)) X(offsetof(CUmemPoolProps, maxSize)) X(
                    offsetof(CUmemPoolProps,
                             usage)) X(sizeof(CUexecAffinityParam)) X(sizeof(CUctxCreateParams))
                    X(offsetof(CUctxCreateParams, numExecAffinityParams)) X(offsetof(CUctxCreateParams, cigParams)) X(
                        sizeof(CUlaunchAttributeValue)) X(sizeof(CUlaunchAttribute)) X(offsetof(CUlaunchAttribute, value))
                        X(sizeof(CUlaunchConfig)) X(offsetof(CUlaunchConfig, sharedMemBytes)) X(
                            offsetof(CUlaunchConfig,
                                     hStream)) X(offsetof(CUlaunchConfig,
                                                          attrs)) X(offsetof(CUlaunchConfig, numAttrs))
                            X(sizeof(CUDA_KERNEL_NODE_PARAMS_v2)) X(offsetof(CUDA_KERNEL_NODE_PARAMS_v2, kernelParams)) X(offsetof(
                                CUDA_KERNEL_NODE_PARAMS_v2,
                                kern)) X(offsetof(CUDA_KERNEL_NODE_PARAMS_v2,
                                                  ctx)) X(CUDA_SUCCESS) X(CUDA_ERROR_INVALID_VALUE) X(CUDA_ERROR_OUT_OF_MEMORY)
                                X(CUDA_ERROR_NOT_INITIALIZED) X(CUDA_ERROR_DEINITIALIZED) X(
                                    CUDA_ERROR_STUB_LIBRARY) X(CUDA_ERROR_DEVICE_UNAVAILABLE) X(CUDA_ERROR_NO_DEVICE)
                                    X(CUDA_ERROR_INVALID_DEVICE) X(CUDA_ERROR_INVALID_IMAGE) X(CUDA_ERROR_INVALID_CONTEXT) X(CUDA_ERROR_CONTEXT_ALREADY_CURRENT) X(CUDA_ERROR_MAP_FAILED) X(CUDA_ERROR_UNMAP_FAILED) X(CUDA_ERROR_ALREADY_MAPPED) X(CUDA_ERROR_NO_BINARY_FOR_GPU) X(CUDA_ERROR_NOT_MAPPED) X(CUDA_ERROR_ECC_UNCORRECTABLE) X(CUDA_ERROR_CONTEXT_ALREADY_IN_USE) X(CUDA_ERROR_INVALID_PTX) X(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY) X(CUDA_ERROR_INVALID_SOURCE) X(CUDA_ERROR_FILE_NOT_FOUND) X(CUDA_ERROR_OPERATING_SYSTEM) X(CUDA_ERROR_INVALID_HANDLE) X(CUDA_ERROR_ILLEGAL_STATE) X(CUDA_ERROR_NOT_FOUND) X(CUDA_ERROR_NOT_READY) X(CUDA_ERROR_ILLEGAL_ADDRESS) X(
                                        CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) X(CUDA_ERROR_LAUNCH_TIMEOUT) X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE) X(CUDA_ERROR_CONTEXT_IS_DESTROYED) X(CUDA_ERROR_LAUNCH_FAILED) X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) X(CUDA_ERROR_NOT_PERMITTED) X(CUDA_ERROR_NOT_SUPPORTED) X(CUDA_ERROR_SYSTEM_NOT_READY)
                                        X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED) X(
                                            CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD) X(CUDA_ERROR_UNKNOWN) X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
                                            X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z) X(CU_DEVICE_ATTRIBUTE_WARP_SIZE) X(CU_DEVICE_ATTRIBUTE_CLOCK_RATE) X(
                                                CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) X(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS)
                                                X(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID) X(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE) X(
                                                    CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING) X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) X(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) X(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH) X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) X(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) X(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR) X(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) X(CU_DEVICE_ATTRIBUTE_MAX)
                                                    X(CU_CTX_SCHED_BLOCKING_SYNC) X(CU_CTX_MAP_HOST) X(CU_CTX_SYNC_MEMOPS) X(
                                                        CU_CTX_FLAGS_MASK) X(CU_STREAM_NON_BLOCKING) X(CU_EVENT_DISABLE_TIMING)
                                                        X(CU_EVENT_INTERPROCESS) X(CU_EVENT_RECORD_EXTERNAL) X(
                                                            CU_EVENT_WAIT_EXTERNAL) X(CU_MEM_ATTACH_GLOBAL)
                                                            X(CU_MEM_ATTACH_HOST) X(CU_MEMORYTYPE_UNIFIED) X(
                                                                CU_AD_FORMAT_HALF) X(CU_AD_FORMAT_FLOAT) X(CU_AD_FORMAT_SIGNED_INT32)
                                                                X(CU_MEM_LOCATION_TYPE_DEVICE) X(
                                                                    CU_MEM_LOCATION_TYPE_HOST) X(CU_MEM_LOCATION_TYPE_HOST_NUMA)
                                                                    X(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT) X(
                                                                        CU_MEM_ALLOCATION_TYPE_PINNED) X(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
                                                                        X(CU_MEM_HANDLE_TYPE_FABRIC) X(CU_MEM_ACCESS_FLAGS_PROT_READWRITE) X(
                                                                            CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) X(CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES)
                                                                            X(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) X(
                                                                                CU_MEMPOOL_ATTR_USED_MEM_HIGH) X(CU_EXEC_AFFINITY_TYPE_SM_COUNT)
                                                                                X(CU_LAUNCH_ATTRIBUTE_COOPERATIVE) X(
                                                                                    CU_LAUNCH_ATTRIBUTE_PRIORITY) X(CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT)
                                                                                    X(CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) X(
                                                                                        CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING)
                                                                                        X(CU_STREAM_CAPTURE_MODE_RELAXED) X(
                                                                                            CU_STREAM_CAPTURE_STATUS_INVALIDATED)
                                                                                            X(CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY) X(
                                                                                                CU_GET_PROC_ADDRESS_LEGACY_STREAM)
                                                                                                X(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) X(
                                                                                                    CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)
                                                                                                    X(CU_LIBRARY_BINARY_IS_PRESERVED) X(
                                                                                                        (uintptr_t)
                                                                                                            CU_STREAM_LEGACY)
                                                                                                        X((uintptr_t)
                                                                                                              CU_STREAM_PER_THREAD)
                                                                                                            X((uintptr_t)
                                                                                                                  CU_LAUNCH_PARAM_BUFFER_SIZE)
                                                                                                                X(CUDA_ARRAY3D_CUBEMAP)
