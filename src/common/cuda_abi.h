/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_abi.h - the CUDA driver API types and values kerf's simulated libcuda implements */
#ifndef KERF_SIM_CUDA_ABI_H
#define KERF_SIM_CUDA_ABI_H

/* Written for kerf from the published ABI of the CUDA driver (names, enum values, struct
 * layouts as of CUDA 13.0), so that the simulator builds where NVIDIA's cuda.h is absent.
 * tests/unit/simcuda/test_abi_*.c checks every layout and value below against the real header
 * when /usr/local/cuda/include/cuda.h exists. Only what the simulator needs is declared. */

#include <stddef.h>
#include <stdint.h>

#define KERF_CUDA_ABI_VERSION 13000 /* the CUDA_VERSION this file follows */

typedef uint32_t cuuint32_t;
typedef uint64_t cuuint64_t;

typedef unsigned long long CUdeviceptr;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUlib_st *CUlibrary;
typedef struct CUkern_st *CUkernel;
typedef struct CUarray_st *CUarray;
typedef struct CUmipmappedArray_st *CUmipmappedArray;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUgraphDeviceUpdatableNode_st *CUgraphDeviceNode;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef void (*CUhostFn)(void *userData);

#define CU_STREAM_LEGACY               ((CUstream)0x1)
#define CU_STREAM_PER_THREAD           ((CUstream)0x2)
#define CU_LAUNCH_PARAM_END            ((void *)0x00)
#define CU_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define CU_LAUNCH_PARAM_BUFFER_SIZE    ((void *)0x02)
#define CUDA_ARRAY3D_LAYERED           0x01
#define CUDA_ARRAY3D_SURFACE_LDST      0x02
#define CUDA_ARRAY3D_CUBEMAP           0x04
#define CU_MEMHOSTALLOC_PORTABLE       0x01
#define CU_MEMHOSTALLOC_DEVICEMAP      0x02
#define CU_MEMHOSTALLOC_WRITECOMBINED  0x04
#define CU_MEMHOSTREGISTER_PORTABLE    0x01
#define CU_MEMHOSTREGISTER_DEVICEMAP   0x02
#define CU_MEMHOSTREGISTER_IOMEMORY    0x04
#define CU_MEMHOSTREGISTER_READ_ONLY   0x08

typedef struct CUuuid_st {
        char bytes[16];
} CUuuid;

typedef enum cudaError_enum {
        CUDA_SUCCESS = 0,
        CUDA_ERROR_INVALID_VALUE = 1,
        CUDA_ERROR_OUT_OF_MEMORY = 2,
        CUDA_ERROR_NOT_INITIALIZED = 3,
        CUDA_ERROR_DEINITIALIZED = 4,
        CUDA_ERROR_STUB_LIBRARY = 34,
        CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
        CUDA_ERROR_NO_DEVICE = 100,
        CUDA_ERROR_INVALID_DEVICE = 101,
        CUDA_ERROR_INVALID_IMAGE = 200,
        CUDA_ERROR_INVALID_CONTEXT = 201,
        CUDA_ERROR_CONTEXT_ALREADY_CURRENT = 202,
        CUDA_ERROR_MAP_FAILED = 205,
        CUDA_ERROR_UNMAP_FAILED = 206,
        CUDA_ERROR_ALREADY_MAPPED = 208,
        CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
        CUDA_ERROR_NOT_MAPPED = 211,
        CUDA_ERROR_ECC_UNCORRECTABLE = 214,
        CUDA_ERROR_UNSUPPORTED_LIMIT = 215,
        CUDA_ERROR_CONTEXT_ALREADY_IN_USE = 216,
        CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
        CUDA_ERROR_INVALID_PTX = 218,
        CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY = 224,
        CUDA_ERROR_INVALID_SOURCE = 300,
        CUDA_ERROR_FILE_NOT_FOUND = 301,
        CUDA_ERROR_OPERATING_SYSTEM = 304,
        CUDA_ERROR_INVALID_HANDLE = 400,
        CUDA_ERROR_ILLEGAL_STATE = 401,
        CUDA_ERROR_NOT_FOUND = 500,
        CUDA_ERROR_NOT_READY = 600,
        CUDA_ERROR_ILLEGAL_ADDRESS = 700,
        CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
        CUDA_ERROR_LAUNCH_TIMEOUT = 702,
        CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
        CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
        CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE = 708,
        CUDA_ERROR_CONTEXT_IS_DESTROYED = 709,
        CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
        CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
        CUDA_ERROR_LAUNCH_FAILED = 719,
        CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
        CUDA_ERROR_NOT_PERMITTED = 800,
        CUDA_ERROR_NOT_SUPPORTED = 801,
        CUDA_ERROR_SYSTEM_NOT_READY = 802,
        CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
        CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
        CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903,
        CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
        CUDA_ERROR_INVALID_CLUSTER_SIZE = 912,
        CUDA_ERROR_UNKNOWN = 999
} CUresult;

typedef enum CUdevice_attribute_enum {
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
        CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY = 9,
        CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
        CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
        CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
        CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
        CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
        CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
        CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20,
        CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS = 31,
        CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
        CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
        CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
        CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
        CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
        CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
        CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40,
        CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
        CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
        CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED = 78,
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
        CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
        CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
        CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD = 84,
        CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
        CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
        CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
        CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
        CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
        CU_DEVICE_ATTRIBUTE_MAX = 148 /* one past the last attribute of CUDA 13.0 */
} CUdevice_attribute;

typedef enum CUctx_flags_enum {
        CU_CTX_SCHED_AUTO = 0x00,
        CU_CTX_SCHED_SPIN = 0x01,
        CU_CTX_SCHED_YIELD = 0x02,
        CU_CTX_SCHED_BLOCKING_SYNC = 0x04,
        CU_CTX_SCHED_MASK = 0x07,
        CU_CTX_MAP_HOST = 0x08,
        CU_CTX_LMEM_RESIZE_TO_MAX = 0x10,
        CU_CTX_COREDUMP_ENABLE = 0x20,
        CU_CTX_USER_COREDUMP_ENABLE = 0x40,
        CU_CTX_SYNC_MEMOPS = 0x80,
        CU_CTX_FLAGS_MASK = 0xFF
} CUctx_flags;

typedef enum CUstream_flags_enum {
        CU_STREAM_DEFAULT = 0x0,
        CU_STREAM_NON_BLOCKING = 0x1
} CUstream_flags;

typedef enum CUevent_flags_enum {
        CU_EVENT_DEFAULT = 0x0,
        CU_EVENT_BLOCKING_SYNC = 0x1,
        CU_EVENT_DISABLE_TIMING = 0x2,
        CU_EVENT_INTERPROCESS = 0x4
} CUevent_flags;

typedef enum CUevent_record_flags_enum {
        CU_EVENT_RECORD_DEFAULT = 0x0,
        CU_EVENT_RECORD_EXTERNAL = 0x1
} CUevent_record_flags;

typedef enum CUevent_wait_flags_enum {
        CU_EVENT_WAIT_DEFAULT = 0x0,
        CU_EVENT_WAIT_EXTERNAL = 0x1
} CUevent_wait_flags;

typedef enum CUmemAttach_flags_enum {
        CU_MEM_ATTACH_GLOBAL = 0x1,
        CU_MEM_ATTACH_HOST = 0x2,
        CU_MEM_ATTACH_SINGLE = 0x4
} CUmemAttach_flags;

typedef enum CUmemorytype_enum {
        CU_MEMORYTYPE_HOST = 0x01,
        CU_MEMORYTYPE_DEVICE = 0x02,
        CU_MEMORYTYPE_ARRAY = 0x03,
        CU_MEMORYTYPE_UNIFIED = 0x04
} CUmemorytype;

typedef enum CUarray_format_enum {
        CU_AD_FORMAT_UNSIGNED_INT8 = 0x01,
        CU_AD_FORMAT_UNSIGNED_INT16 = 0x02,
        CU_AD_FORMAT_UNSIGNED_INT32 = 0x03,
        CU_AD_FORMAT_SIGNED_INT8 = 0x08,
        CU_AD_FORMAT_SIGNED_INT16 = 0x09,
        CU_AD_FORMAT_SIGNED_INT32 = 0x0a,
        CU_AD_FORMAT_HALF = 0x10,
        CU_AD_FORMAT_FLOAT = 0x20,
        CU_AD_FORMAT_MAX = 0x7FFFFFFF
} CUarray_format;

typedef struct CUDA_ARRAY_DESCRIPTOR_st {
        size_t Width;
        size_t Height;
        CUarray_format Format;
        unsigned int NumChannels;
} CUDA_ARRAY_DESCRIPTOR;

typedef struct CUDA_ARRAY3D_DESCRIPTOR_st {
        size_t Width;
        size_t Height;
        size_t Depth;
        CUarray_format Format;
        unsigned int NumChannels;
        unsigned int Flags;
} CUDA_ARRAY3D_DESCRIPTOR;

typedef struct CUDA_MEMCPY2D_st {
        size_t srcXInBytes;
        size_t srcY;
        CUmemorytype srcMemoryType;
        const void *srcHost;
        CUdeviceptr srcDevice;
        CUarray srcArray;
        size_t srcPitch;
        size_t dstXInBytes;
        size_t dstY;
        CUmemorytype dstMemoryType;
        void *dstHost;
        CUdeviceptr dstDevice;
        CUarray dstArray;
        size_t dstPitch;
        size_t WidthInBytes;
        size_t Height;
} CUDA_MEMCPY2D;

/* ---- memory pools and virtual memory management ---- */

typedef enum CUmemLocationType_enum {
        CU_MEM_LOCATION_TYPE_INVALID = 0x0,
        CU_MEM_LOCATION_TYPE_DEVICE = 0x1,
        CU_MEM_LOCATION_TYPE_HOST = 0x2,
        CU_MEM_LOCATION_TYPE_HOST_NUMA = 0x3,
        CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT = 0x4,
        CU_MEM_LOCATION_TYPE_MAX = 0x7FFFFFFF
} CUmemLocationType;

typedef enum CUmemAllocationType_enum {
        CU_MEM_ALLOCATION_TYPE_INVALID = 0x0,
        CU_MEM_ALLOCATION_TYPE_PINNED = 0x1,
        CU_MEM_ALLOCATION_TYPE_MANAGED = 0x2,
        CU_MEM_ALLOCATION_TYPE_MAX = 0x7FFFFFFF
} CUmemAllocationType;

typedef enum CUmemAllocationHandleType_enum {
        CU_MEM_HANDLE_TYPE_NONE = 0x0,
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 0x1,
        CU_MEM_HANDLE_TYPE_WIN32 = 0x2,
        CU_MEM_HANDLE_TYPE_WIN32_KMT = 0x4,
        CU_MEM_HANDLE_TYPE_FABRIC = 0x8,
        CU_MEM_HANDLE_TYPE_MAX = 0x7FFFFFFF
} CUmemAllocationHandleType;

typedef enum CUmemAccess_flags_enum {
        CU_MEM_ACCESS_FLAGS_PROT_NONE = 0x0,
        CU_MEM_ACCESS_FLAGS_PROT_READ = 0x1,
        CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3,
        CU_MEM_ACCESS_FLAGS_PROT_MAX = 0x7FFFFFFF
} CUmemAccess_flags;

typedef enum CUmemAllocationGranularity_flags_enum {
        CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0x0,
        CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 0x1
} CUmemAllocationGranularity_flags;

typedef struct CUmemLocation_st {
        CUmemLocationType type;
        int id;
} CUmemLocation;

typedef struct CUmemAllocationProp_st {
        CUmemAllocationType type;
        CUmemAllocationHandleType requestedHandleTypes;
        CUmemLocation location;
        void *win32HandleMetaData;
        struct {
                unsigned char compressionType;
                unsigned char gpuDirectRDMACapable;
                unsigned short usage;
                unsigned char reserved[4];
        } allocFlags;
} CUmemAllocationProp;

typedef struct CUmemAccessDesc_st {
        CUmemLocation location;
        CUmemAccess_flags flags;
} CUmemAccessDesc;

typedef enum CUmemPool_attribute_enum {
        CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,
        CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC = 2,
        CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3,
        CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
        CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT = 5,
        CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH = 6,
        CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7,
        CU_MEMPOOL_ATTR_USED_MEM_HIGH = 8
} CUmemPool_attribute;

typedef struct CUmemPoolProps_st {
        CUmemAllocationType allocType;
        CUmemAllocationHandleType handleTypes;
        CUmemLocation location;
        void *win32SecurityAttributes;
        size_t maxSize;
        unsigned short usage;
        unsigned char reserved[54];
} CUmemPoolProps;

/* Graph memory nodes (cuGraphAddMemAllocNode) and the device's graph memory attributes. */
typedef struct CUDA_MEM_ALLOC_NODE_PARAMS_v1_st {
        CUmemPoolProps poolProps;
        const CUmemAccessDesc *accessDescs;
        size_t accessDescCount;
        size_t bytesize;
        CUdeviceptr dptr;
} CUDA_MEM_ALLOC_NODE_PARAMS;

typedef enum CUgraphNodeType_enum {
        CU_GRAPH_NODE_TYPE_KERNEL = 0,
        CU_GRAPH_NODE_TYPE_MEMCPY = 1,
        CU_GRAPH_NODE_TYPE_MEMSET = 2,
        CU_GRAPH_NODE_TYPE_HOST = 3,
        CU_GRAPH_NODE_TYPE_GRAPH = 4,
        CU_GRAPH_NODE_TYPE_EMPTY = 5,
        CU_GRAPH_NODE_TYPE_WAIT_EVENT = 6,
        CU_GRAPH_NODE_TYPE_EVENT_RECORD = 7,
        CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL = 8,
        CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT = 9,
        CU_GRAPH_NODE_TYPE_MEM_ALLOC = 10,
        CU_GRAPH_NODE_TYPE_MEM_FREE = 11,
        CU_GRAPH_NODE_TYPE_BATCH_MEM_OP = 12,
        CU_GRAPH_NODE_TYPE_CONDITIONAL = 13
} CUgraphNodeType;

typedef enum CUgraphMem_attribute_enum {
        CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT = 0,
        CU_GRAPH_MEM_ATTR_USED_MEM_HIGH = 1,
        CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT = 2,
        CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH = 3
} CUgraphMem_attribute;

/* ---- contexts ---- */

typedef enum CUexecAffinityType_enum {
        CU_EXEC_AFFINITY_TYPE_SM_COUNT = 0,
        CU_EXEC_AFFINITY_TYPE_MAX
} CUexecAffinityType;

typedef struct CUexecAffinitySmCount_st {
        unsigned int val;
} CUexecAffinitySmCount;

typedef struct CUexecAffinityParam_st {
        CUexecAffinityType type;
        union {
                CUexecAffinitySmCount smCount;
        } param;
} CUexecAffinityParam;

typedef struct CUctxCigParam_st CUctxCigParam; /* green/CIG contexts: not simulated */

typedef struct CUctxCreateParams_st {
        CUexecAffinityParam *execAffinityParams;
        int numExecAffinityParams;
        CUctxCigParam *cigParams;
} CUctxCreateParams;

/* ---- launches ---- */

typedef enum CUlaunchAttributeID_enum {
        CU_LAUNCH_ATTRIBUTE_IGNORE = 0,
        CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1,
        CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2,
        CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY = 3,
        CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
        CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5,
        CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
        CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT = 7,
        CU_LAUNCH_ATTRIBUTE_PRIORITY = 8,
        CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP = 9,
        CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN = 10,
        CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION = 11,
        CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT = 12,
        CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE = 13,
        CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 14,
        CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING = 16
} CUlaunchAttributeID;

/* 64 bytes, 8-byte aligned; only the members the simulator reads are named. */
typedef union CUlaunchAttributeValue_union {
        char pad[64];
        int cooperative;
        int priority;
        struct {
                unsigned int x, y, z;
        } clusterDim;
        struct {
                CUevent event;
                int flags;
        } launchCompletionEvent;
} CUlaunchAttributeValue;

typedef struct CUlaunchAttribute_st {
        CUlaunchAttributeID id;
        char pad[8 - sizeof(CUlaunchAttributeID)];
        CUlaunchAttributeValue value;
} CUlaunchAttribute;

typedef struct CUlaunchConfig_st {
        unsigned int gridDimX;
        unsigned int gridDimY;
        unsigned int gridDimZ;
        unsigned int blockDimX;
        unsigned int blockDimY;
        unsigned int blockDimZ;
        unsigned int sharedMemBytes;
        CUstream hStream;
        CUlaunchAttribute *attrs;
        unsigned int numAttrs;
} CUlaunchConfig;

/* ---- modules ---- */

typedef enum CUjit_option_enum {
        CU_JIT_MAX_REGISTERS = 0 /* options are accepted and ignored by the simulator */
} CUjit_option;

typedef enum CUlibraryOption_enum {
        CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE = 0,
        CU_LIBRARY_BINARY_IS_PRESERVED = 1,
        CU_LIBRARY_NUM_OPTIONS
} CUlibraryOption;

/* ---- graphs and stream capture ---- */

typedef enum CUstreamCaptureMode_enum {
        CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
        CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
        CU_STREAM_CAPTURE_MODE_RELAXED = 2
} CUstreamCaptureMode;

typedef enum CUstreamCaptureStatus_enum {
        CU_STREAM_CAPTURE_STATUS_NONE = 0,
        CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
        CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2
} CUstreamCaptureStatus;

typedef enum CUgraphInstantiate_flags_enum {
        CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH = 1,
        CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD = 2,
        CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH = 4,
        CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY = 8
} CUgraphInstantiate_flags;

typedef struct CUDA_KERNEL_NODE_PARAMS_v2_st {
        CUfunction func;
        unsigned int gridDimX;
        unsigned int gridDimY;
        unsigned int gridDimZ;
        unsigned int blockDimX;
        unsigned int blockDimY;
        unsigned int blockDimZ;
        unsigned int sharedMemBytes;
        void **kernelParams;
        void **extra;
        CUkernel kern;
        CUcontext ctx;
} CUDA_KERNEL_NODE_PARAMS_v2;
typedef CUDA_KERNEL_NODE_PARAMS_v2 CUDA_KERNEL_NODE_PARAMS;

/* ---- entry points ---- */

typedef enum CUdriverProcAddress_flags_enum {
        CU_GET_PROC_ADDRESS_DEFAULT = 0,
        CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1 << 0,
        CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 1 << 1
} CUdriverProcAddress_flags;

typedef enum CUdriverProcAddressQueryResult_enum {
        CU_GET_PROC_ADDRESS_SUCCESS = 0,
        CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
        CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
} CUdriverProcAddressQueryResult;

/* ---- driver API additions: attributes, limits, pointers, 3D copies, linking ---- */

typedef struct CUgreenCtx_st *CUgreenCtx; /* green contexts: not simulated */
typedef struct CUlinkState_st *CUlinkState;
typedef void (*CUstreamCallback)(CUstream hStream, CUresult status, void *userData);
typedef size_t (*CUoccupancyB2DSize)(int blockSize);

typedef enum CUfunction_attribute_enum {
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
        CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
        CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
        CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
        CU_FUNC_ATTRIBUTE_PTX_VERSION = 5,
        CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6,
        CU_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7,
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,
        CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET = 10,
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 11,
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT = 12,
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH = 13,
        CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
        CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15,
        CU_FUNC_ATTRIBUTE_MAX
} CUfunction_attribute;

typedef enum CUfunc_cache_enum {
        CU_FUNC_CACHE_PREFER_NONE = 0x00,
        CU_FUNC_CACHE_PREFER_SHARED = 0x01,
        CU_FUNC_CACHE_PREFER_L1 = 0x02,
        CU_FUNC_CACHE_PREFER_EQUAL = 0x03
} CUfunc_cache;

typedef enum CUsharedconfig_enum {
        CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE = 0x00,
        CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE = 0x01,
        CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE = 0x02
} CUsharedconfig;

typedef enum CUfunctionLoadingState_enum {
        CU_FUNCTION_LOADING_STATE_UNLOADED = 0,
        CU_FUNCTION_LOADING_STATE_LOADED = 1,
        CU_FUNCTION_LOADING_STATE_MAX
} CUfunctionLoadingState;

typedef enum CUmoduleLoadingMode_enum {
        CU_MODULE_EAGER_LOADING = 0x1,
        CU_MODULE_LAZY_LOADING = 0x2
} CUmoduleLoadingMode;

typedef enum CUjitInputType_enum {
        CU_JIT_INPUT_CUBIN = 0,
        CU_JIT_INPUT_PTX = 1,
        CU_JIT_INPUT_FATBINARY = 2,
        CU_JIT_INPUT_OBJECT = 3,
        CU_JIT_INPUT_LIBRARY = 4,
        CU_JIT_INPUT_NVVM = 5,
        CU_JIT_NUM_INPUT_TYPES = 6
} CUjitInputType;

typedef enum CUlimit_enum {
        CU_LIMIT_STACK_SIZE = 0x00,
        CU_LIMIT_PRINTF_FIFO_SIZE = 0x01,
        CU_LIMIT_MALLOC_HEAP_SIZE = 0x02,
        CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH = 0x03,
        CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT = 0x04,
        CU_LIMIT_MAX_L2_FETCH_GRANULARITY = 0x05,
        CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06,
        CU_LIMIT_SHMEM_SIZE = 0x07,
        CU_LIMIT_CIG_ENABLED = 0x08,
        CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED = 0x09,
        CU_LIMIT_MAX
} CUlimit;

typedef enum CUdevice_P2PAttribute_enum {
        CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK = 0x01,
        CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED = 0x02,
        CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED = 0x03,
        CU_DEVICE_P2P_ATTRIBUTE_ACCESS_ACCESS_SUPPORTED = 0x04,
        CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED = 0x04,
        CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED = 0x05
} CUdevice_P2PAttribute;

typedef struct CUdevprop_st {
        int maxThreadsPerBlock;
        int maxThreadsDim[3];
        int maxGridSize[3];
        int sharedMemPerBlock;
        int totalConstantMemory;
        int SIMDWidth;
        int memPitch;
        int regsPerBlock;
        int clockRate;
        int textureAlign;
} CUdevprop;

typedef enum CUpointer_attribute_enum {
        CU_POINTER_ATTRIBUTE_CONTEXT = 1,
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
        CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3,
        CU_POINTER_ATTRIBUTE_HOST_POINTER = 4,
        CU_POINTER_ATTRIBUTE_P2P_TOKENS = 5,
        CU_POINTER_ATTRIBUTE_SYNC_MEMOPS = 6,
        CU_POINTER_ATTRIBUTE_BUFFER_ID = 7,
        CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
        CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE = 10,
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
        CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
        CU_POINTER_ATTRIBUTE_MAPPED = 13,
        CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES = 14,
        CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE = 15,
        CU_POINTER_ATTRIBUTE_ACCESS_FLAGS = 16,
        CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE = 17,
        CU_POINTER_ATTRIBUTE_MAPPING_SIZE = 18,
        CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR = 19,
        CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID = 20,
        CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE = 21
} CUpointer_attribute;

typedef enum CUmem_advise_enum {
        CU_MEM_ADVISE_SET_READ_MOSTLY = 1,
        CU_MEM_ADVISE_UNSET_READ_MOSTLY = 2,
        CU_MEM_ADVISE_SET_PREFERRED_LOCATION = 3,
        CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION = 4,
        CU_MEM_ADVISE_SET_ACCESSED_BY = 5,
        CU_MEM_ADVISE_UNSET_ACCESSED_BY = 6
} CUmem_advise;

typedef enum CUmem_range_attribute_enum {
        CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY = 1,
        CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION = 2,
        CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY = 3,
        CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION = 4,
        CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE = 5,
        CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID = 6,
        CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE = 7,
        CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID = 8
} CUmem_range_attribute;

#define CU_DEVICE_CPU     ((CUdevice)-1)
#define CU_DEVICE_INVALID ((CUdevice)-2)

typedef struct CUDA_MEMCPY3D_st {
        size_t srcXInBytes;
        size_t srcY;
        size_t srcZ;
        size_t srcLOD;
        CUmemorytype srcMemoryType;
        const void *srcHost;
        CUdeviceptr srcDevice;
        CUarray srcArray;
        void *reserved0;
        size_t srcPitch;
        size_t srcHeight;
        size_t dstXInBytes;
        size_t dstY;
        size_t dstZ;
        size_t dstLOD;
        CUmemorytype dstMemoryType;
        void *dstHost;
        CUdeviceptr dstDevice;
        CUarray dstArray;
        void *reserved1;
        size_t dstPitch;
        size_t dstHeight;
        size_t WidthInBytes;
        size_t Height;
        size_t Depth;
} CUDA_MEMCPY3D;

typedef struct CUDA_MEMCPY3D_PEER_st {
        size_t srcXInBytes;
        size_t srcY;
        size_t srcZ;
        size_t srcLOD;
        CUmemorytype srcMemoryType;
        const void *srcHost;
        CUdeviceptr srcDevice;
        CUarray srcArray;
        CUcontext srcContext;
        size_t srcPitch;
        size_t srcHeight;
        size_t dstXInBytes;
        size_t dstY;
        size_t dstZ;
        size_t dstLOD;
        CUmemorytype dstMemoryType;
        void *dstHost;
        CUdeviceptr dstDevice;
        CUarray dstArray;
        CUcontext dstContext;
        size_t dstPitch;
        size_t dstHeight;
        size_t WidthInBytes;
        size_t Height;
        size_t Depth;
} CUDA_MEMCPY3D_PEER;

typedef struct CUgraphEdgeData_st {
        unsigned char from_port;
        unsigned char to_port;
        unsigned char type;
        unsigned char reserved[5];
} CUgraphEdgeData;

#include "cuda_abi_protos.h"

#endif /* KERF_SIM_CUDA_ABI_H */
