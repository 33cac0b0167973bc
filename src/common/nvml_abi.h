/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_abi.h - NVML types, constants and prototypes (x86_64 ABI), written from GPU-REFERENCE §2 */
#ifndef KERF_NVML_ABI_H
#define KERF_NVML_ABI_H

/*
 * kerf's own description of the NVML ABI: enough for the simulated libnvidia-ml.so.1
 * (src/sim/nvml) to implement it and for kerf's NVML backend to dlopen() the real library.
 * Only what kerf or the simulator uses is declared. Layouts are checked below for x86_64 LP64,
 * and against NVIDIA's nvml.h by tests/unit/sim/test_nvml_abi.c when one is installed.
 *
 * Versioned entry points: consumers should dlsym() the versioned names listed here
 * (nvmlInit_v2, nvmlDeviceGetCount_v2, ..._ComputeRunningProcesses_v3, nvmlEventSetWait_v2)
 * and fall back to the older names when absent. No unversioned aliases are #defined here.
 *
 * With KERF_NVML_ABI_PROTOS_ONLY defined, only the prototypes are declared: the ABI test
 * (tests/unit/sim/nvml_abi_real.c) includes NVIDIA's nvml.h first and then re-declares every
 * prototype of ours, so any signature that differs from NVIDIA's fails the build.
 */

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef KERF_NVML_ABI_PROTOS_ONLY

/* ---- return codes -------------------------------------------------------------------- */
typedef enum nvmlReturn_enum {
        NVML_SUCCESS = 0,
        NVML_ERROR_UNINITIALIZED = 1,
        NVML_ERROR_INVALID_ARGUMENT = 2,
        NVML_ERROR_NOT_SUPPORTED = 3,
        NVML_ERROR_NO_PERMISSION = 4,
        NVML_ERROR_ALREADY_INITIALIZED = 5,
        NVML_ERROR_NOT_FOUND = 6,
        NVML_ERROR_INSUFFICIENT_SIZE = 7,
        NVML_ERROR_INSUFFICIENT_POWER = 8,
        NVML_ERROR_DRIVER_NOT_LOADED = 9,
        NVML_ERROR_TIMEOUT = 10,
        NVML_ERROR_IRQ_ISSUE = 11,
        NVML_ERROR_LIBRARY_NOT_FOUND = 12,
        NVML_ERROR_FUNCTION_NOT_FOUND = 13,
        NVML_ERROR_CORRUPTED_INFOROM = 14,
        NVML_ERROR_GPU_IS_LOST = 15,
        NVML_ERROR_RESET_REQUIRED = 16,
        NVML_ERROR_OPERATING_SYSTEM = 17,
        NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
        NVML_ERROR_IN_USE = 19,
        NVML_ERROR_MEMORY = 20,
        NVML_ERROR_NO_DATA = 21,
        NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
        NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
        NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
        NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
        NVML_ERROR_DEPRECATED = 26,
        NVML_ERROR_NOT_READY = 27,
        NVML_ERROR_GPU_NOT_FOUND = 28,
        NVML_ERROR_INVALID_STATE = 29,
        NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
        NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

/* ---- opaque handles -------------------------------------------------------------------- */
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st *nvmlComputeInstance_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

/* ---- buffer sizes ------------------------------------------------------------------------ */
#define NVML_DEVICE_UUID_BUFFER_SIZE           80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE        96
#define NVML_DEVICE_NAME_BUFFER_SIZE           64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE        96
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE     32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE  16
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE   80
#define NVML_DEVICE_SERIAL_BUFFER_SIZE         30
#define NVML_DEVICE_PART_NUMBER_BUFFER_SIZE    80
#define NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE  32
#define NVML_NVLINK_MAX_LINKS                  36 /* NVML 13; 18 in NVML 12 */

/* nvmlInitWithFlags */
#define NVML_INIT_FLAG_NO_GPUS   (1 << 0)
#define NVML_INIT_FLAG_NO_ATTACH (1 << 1)

/* Struct version tag: size of the versioned struct | version << 24. */
#define NVML_STRUCT_VERSION(type, ver)                                                             \
        ((unsigned int)(sizeof(nvml##type##_v##ver##_t) | ((ver) << 24U)))

/* ---- MIG ------------------------------------------------------------------------------- */
#define NVML_DEVICE_MIG_DISABLE 0x0
#define NVML_DEVICE_MIG_ENABLE  0x1

/* GPU-instance profile *indexes* (passed to GetGpuInstanceProfileInfo*); the driver profile
 * id comes back in info.id and is what every later call takes. */
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE        0x0
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE        0x1
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE        0x2
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE        0x3
#define NVML_GPU_INSTANCE_PROFILE_7_SLICE        0x4
#define NVML_GPU_INSTANCE_PROFILE_8_SLICE        0x5
#define NVML_GPU_INSTANCE_PROFILE_6_SLICE        0x6
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1   0x7
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1   0x8
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2   0x9
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_GFX    0xA
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_GFX    0xB
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE_GFX    0xC
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_NO_ME  0xD
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_NO_ME  0xE
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME 0xF
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME 0x10
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE_GFX    0x11
#define NVML_GPU_INSTANCE_PROFILE_COUNT          0x12

#define NVML_GPU_INSTANCE_PROFILE_CAPS_P2P 0x1
#define NVML_GPU_INSTANCE_PROFILE_CAPS_GFX 0x2

/* Compute-instance profile indexes; in kerf-sim the CI profile id equals the index. */
#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE      0x0
#define NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE      0x1
#define NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE      0x2
#define NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE      0x3
#define NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE      0x4
#define NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE      0x5
#define NVML_COMPUTE_INSTANCE_PROFILE_6_SLICE      0x6
#define NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE_REV1 0x7
#define NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE_NVL  0x8
#define NVML_COMPUTE_INSTANCE_PROFILE_COUNT        0x9

#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED 0x0
#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_COUNT  0x1

/* ---- events ------------------------------------------------------------------------------ */
#define nvmlEventTypeSingleBitEccError      0x0000000000000001ULL
#define nvmlEventTypeDoubleBitEccError      0x0000000000000002ULL
#define nvmlEventTypePState                 0x0000000000000004ULL
#define nvmlEventTypeXidCriticalError       0x0000000000000008ULL
#define nvmlEventTypeClock                  0x0000000000000010ULL
#define nvmlEventTypePowerSourceChange      0x0000000000000080ULL
#define nvmlEventMigConfigChange            0x0000000000000100ULL
#define nvmlEventTypeSingleBitEccErrorStorm 0x0000000000000200ULL
#define nvmlEventTypeDramRetirementEvent    0x0000000000000400ULL
#define nvmlEventTypeDramRetirementFailure  0x0000000000000800ULL
#define nvmlEventTypeNonFatalPoisonError    0x0000000000001000ULL
#define nvmlEventTypeFatalPoisonError       0x0000000000002000ULL
#define nvmlEventTypeGpuUnavailableError    0x0000000000004000ULL
#define nvmlEventTypeGpuRecoveryAction      0x0000000000008000ULL
#define nvmlEventTypeNone                   0x0000000000000000ULL

/* GI/CI id in nvmlEventData_t when the event cannot be attributed to an instance. */
#define KERF_NVML_ID_UNATTRIBUTED 0xFFFFFFFFU

/* ---- temperature ------------------------------------------------------------------------- */
typedef enum nvmlTemperatureSensors_enum {
        NVML_TEMPERATURE_GPU = 0,
        NVML_TEMPERATURE_COUNT
} nvmlTemperatureSensors_t;

/* ---- device state enums --------------------------------------------------------------- */
typedef enum nvmlEnableState_enum {
        NVML_FEATURE_DISABLED = 0,
        NVML_FEATURE_ENABLED = 1
} nvmlEnableState_t;

typedef enum nvmlBrandType_enum {
        NVML_BRAND_UNKNOWN = 0,
        NVML_BRAND_QUADRO = 1,
        NVML_BRAND_TESLA = 2,
        NVML_BRAND_NVS = 3,
        NVML_BRAND_GRID = 4,
        NVML_BRAND_GEFORCE = 5,
        NVML_BRAND_TITAN = 6,
        NVML_BRAND_NVIDIA_VAPPS = 7,
        NVML_BRAND_NVIDIA_VPC = 8,
        NVML_BRAND_NVIDIA_VCS = 9,
        NVML_BRAND_NVIDIA_VWS = 10,
        NVML_BRAND_NVIDIA_CLOUD_GAMING = 11,
        NVML_BRAND_QUADRO_RTX = 12,
        NVML_BRAND_NVIDIA_RTX = 13,
        NVML_BRAND_NVIDIA = 14,
        NVML_BRAND_GEFORCE_RTX = 15,
        NVML_BRAND_TITAN_RTX = 16,
        NVML_BRAND_COUNT = 18
} nvmlBrandType_t;

typedef unsigned int nvmlDeviceArchitecture_t;
#define NVML_DEVICE_ARCH_KEPLER    2
#define NVML_DEVICE_ARCH_MAXWELL   3
#define NVML_DEVICE_ARCH_PASCAL    4
#define NVML_DEVICE_ARCH_VOLTA     5
#define NVML_DEVICE_ARCH_TURING    6
#define NVML_DEVICE_ARCH_AMPERE    7
#define NVML_DEVICE_ARCH_ADA       8
#define NVML_DEVICE_ARCH_HOPPER    9
#define NVML_DEVICE_ARCH_BLACKWELL 10
#define NVML_DEVICE_ARCH_UNKNOWN   0xffffffff

typedef enum nvmlClockType_enum {
        NVML_CLOCK_GRAPHICS = 0,
        NVML_CLOCK_SM = 1,
        NVML_CLOCK_MEM = 2,
        NVML_CLOCK_VIDEO = 3,
        NVML_CLOCK_COUNT
} nvmlClockType_t;

typedef enum nvmlClockId_enum {
        NVML_CLOCK_ID_CURRENT = 0,
        NVML_CLOCK_ID_APP_CLOCK_TARGET = 1,
        NVML_CLOCK_ID_APP_CLOCK_DEFAULT = 2,
        NVML_CLOCK_ID_CUSTOMER_BOOST_MAX = 3,
        NVML_CLOCK_ID_COUNT
} nvmlClockId_t;

/* Clock event ("throttle") reasons, a bit mask. */
#define nvmlClocksEventReasonGpuIdle                   0x0000000000000001LL
#define nvmlClocksEventReasonApplicationsClocksSetting 0x0000000000000002LL
#define nvmlClocksEventReasonSwPowerCap                0x0000000000000004LL
#define nvmlClocksThrottleReasonHwSlowdown             0x0000000000000008LL
#define nvmlClocksEventReasonSyncBoost                 0x0000000000000010LL
#define nvmlClocksEventReasonSwThermalSlowdown         0x0000000000000020LL
#define nvmlClocksThrottleReasonHwThermalSlowdown      0x0000000000000040LL
#define nvmlClocksThrottleReasonHwPowerBrakeSlowdown   0x0000000000000080LL
#define nvmlClocksEventReasonDisplayClockSetting       0x0000000000000100LL
#define nvmlClocksEventReasonNone                      0x0000000000000000LL

typedef enum nvmlPStates_enum {
        NVML_PSTATE_0 = 0,
        NVML_PSTATE_1 = 1,
        NVML_PSTATE_2 = 2,
        NVML_PSTATE_3 = 3,
        NVML_PSTATE_4 = 4,
        NVML_PSTATE_5 = 5,
        NVML_PSTATE_6 = 6,
        NVML_PSTATE_7 = 7,
        NVML_PSTATE_8 = 8,
        NVML_PSTATE_9 = 9,
        NVML_PSTATE_10 = 10,
        NVML_PSTATE_11 = 11,
        NVML_PSTATE_12 = 12,
        NVML_PSTATE_13 = 13,
        NVML_PSTATE_14 = 14,
        NVML_PSTATE_15 = 15,
        NVML_PSTATE_UNKNOWN = 32
} nvmlPstates_t;

typedef enum nvmlComputeMode_enum {
        NVML_COMPUTEMODE_DEFAULT = 0,
        NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,
        NVML_COMPUTEMODE_PROHIBITED = 2,
        NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
        NVML_COMPUTEMODE_COUNT
} nvmlComputeMode_t;

typedef enum nvmlGpuP2PStatus_enum {
        NVML_P2P_STATUS_OK = 0,
        NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED = 1,
        NVML_P2P_STATUS_CHIPSET_NOT_SUPPORTED = NVML_P2P_STATUS_CHIPSET_NOT_SUPPORED,
        NVML_P2P_STATUS_GPU_NOT_SUPPORTED = 2,
        NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
        NVML_P2P_STATUS_DISABLED_BY_REGKEY = 4,
        NVML_P2P_STATUS_NOT_SUPPORTED = 5,
        NVML_P2P_STATUS_UNKNOWN = 6
} nvmlGpuP2PStatus_t;

typedef enum nvmlGpuP2PCapsIndex_enum {
        NVML_P2P_CAPS_INDEX_READ = 0,
        NVML_P2P_CAPS_INDEX_WRITE = 1,
        NVML_P2P_CAPS_INDEX_NVLINK = 2,
        NVML_P2P_CAPS_INDEX_ATOMICS = 3,
        NVML_P2P_CAPS_INDEX_PCI = 4,
        NVML_P2P_CAPS_INDEX_PROP = NVML_P2P_CAPS_INDEX_PCI,
        NVML_P2P_CAPS_INDEX_UNKNOWN = 5
} nvmlGpuP2PCapsIndex_t;

typedef enum nvmlGpuLevel_enum {
        NVML_TOPOLOGY_INTERNAL = 0,
        NVML_TOPOLOGY_SINGLE = 10,
        NVML_TOPOLOGY_MULTIPLE = 20,
        NVML_TOPOLOGY_HOSTBRIDGE = 30,
        NVML_TOPOLOGY_NODE = 40,
        NVML_TOPOLOGY_SYSTEM = 50
} nvmlGpuTopologyLevel_t;

/* ---- structs (byte offsets / sizes for x86_64 in comments, asserted below) --------------- */
typedef struct nvmlMemory_st {
        unsigned long long total; /* 0 */
        unsigned long long free;  /* 8 */
        unsigned long long used;  /* 16 */
} nvmlMemory_t;                   /* 24 */
typedef nvmlMemory_t nvmlMemory_v1_t;

typedef struct nvmlMemory_v2_st {
        unsigned int version;                        /* 0, nvmlMemory_v2 */
        unsigned long long total;                    /* 8 */
        unsigned long long reserved;                 /* 16 */
        unsigned long long free;                     /* 24 */
        unsigned long long used;                     /* 32 */
} nvmlMemory_v2_t;                                   /* 40 */
#define nvmlMemory_v2 NVML_STRUCT_VERSION(Memory, 2) /* 0x02000028 */

typedef struct nvmlBAR1Memory_st {
        unsigned long long bar1Total; /* 0, bytes */
        unsigned long long bar1Free;  /* 8 */
        unsigned long long bar1Used;  /* 16 */
} nvmlBAR1Memory_t;                   /* 24 */

/* nvmlDeviceGetAttributes_v2: MIG device handles only. */
typedef struct nvmlDeviceAttributes_st {
        unsigned int multiprocessorCount;       /* 0 */
        unsigned int sharedCopyEngineCount;     /* 4 */
        unsigned int sharedDecoderCount;        /* 8 */
        unsigned int sharedEncoderCount;        /* 12 */
        unsigned int sharedJpegCount;           /* 16 */
        unsigned int sharedOfaCount;            /* 20 */
        unsigned int gpuInstanceSliceCount;     /* 24 */
        unsigned int computeInstanceSliceCount; /* 28 */
        unsigned long long memorySizeMB;        /* 32 */
} nvmlDeviceAttributes_t;                       /* 40 */

typedef struct nvmlUtilization_st {
        unsigned int gpu;    /* percent */
        unsigned int memory; /* percent */
} nvmlUtilization_t;         /* 8 */

/* Used by the _v2 and _v3 running-process calls (the two layouts are the same). */
typedef struct nvmlProcessInfo_st {
        unsigned int pid;                 /* 0 */
        unsigned long long usedGpuMemory; /* 8, bytes */
        unsigned int gpuInstanceId;       /* 16, 0xFFFFFFFF when not on a MIG device */
        unsigned int computeInstanceId;   /* 20 */
} nvmlProcessInfo_t;                      /* 24 */
typedef nvmlProcessInfo_t nvmlProcessInfo_v2_t;

/* Used by the unversioned nvmlDeviceGetComputeRunningProcesses. */
typedef struct nvmlProcessInfo_v1_st {
        unsigned int pid;                 /* 0 */
        unsigned long long usedGpuMemory; /* 8 */
} nvmlProcessInfo_v1_t;                   /* 16 */

typedef struct nvmlProcessUtilizationSample_st {
        unsigned int pid;             /* 0 */
        unsigned long long timeStamp; /* 8, CPU timestamp in microseconds */
        unsigned int smUtil;          /* 16 */
        unsigned int memUtil;         /* 20 */
        unsigned int encUtil;         /* 24 */
        unsigned int decUtil;         /* 28 */
} nvmlProcessUtilizationSample_t;     /* 32 */

typedef struct nvmlEventData_st {
        nvmlDevice_t device;            /* 0 */
        unsigned long long eventType;   /* 8 */
        unsigned long long eventData;   /* 16, the XID for XID events */
        unsigned int gpuInstanceId;     /* 24 */
        unsigned int computeInstanceId; /* 28 */
} nvmlEventData_t;                      /* 32 */

typedef struct nvmlGpuInstancePlacement_st {
        unsigned int start; /* memory slice */
        unsigned int size;  /* memory slices */
} nvmlGpuInstancePlacement_t;

typedef struct nvmlGpuInstanceProfileInfo_st {
        unsigned int id; /* driver profile id */
        unsigned int isP2pSupported;
        unsigned int sliceCount;
        unsigned int instanceCount;
        unsigned int multiprocessorCount;
        unsigned int copyEngineCount;
        unsigned int decoderCount;
        unsigned int encoderCount;
        unsigned int jpegCount;
        unsigned int ofaCount;
        unsigned long long memorySizeMB; /* 40 */
} nvmlGpuInstanceProfileInfo_t;          /* 48 */

typedef struct nvmlGpuInstanceProfileInfo_v2_st {
        unsigned int version;
        unsigned int id;
        unsigned int isP2pSupported;
        unsigned int sliceCount;
        unsigned int instanceCount;
        unsigned int multiprocessorCount;
        unsigned int copyEngineCount;
        unsigned int decoderCount;
        unsigned int encoderCount;
        unsigned int jpegCount;
        unsigned int ofaCount;
        unsigned long long memorySizeMB;            /* 48 */
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE]; /* 56 */
} nvmlGpuInstanceProfileInfo_v2_t;                  /* 152 */
#define nvmlGpuInstanceProfileInfo_v2                                                              \
        NVML_STRUCT_VERSION(GpuInstanceProfileInfo, 2) /* 0x02000098 */

typedef struct nvmlGpuInstanceProfileInfo_v3_st {
        unsigned int version;
        unsigned int id;
        unsigned int sliceCount;
        unsigned int instanceCount;
        unsigned int multiprocessorCount;
        unsigned int copyEngineCount;
        unsigned int decoderCount;
        unsigned int encoderCount;
        unsigned int jpegCount;
        unsigned int ofaCount;
        unsigned long long memorySizeMB;            /* 40 */
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE]; /* 48 */
        unsigned int capabilities;                  /* 144, NVML_GPU_INSTANCE_PROFILE_CAPS_* */
} nvmlGpuInstanceProfileInfo_v3_t;                  /* 152 */
#define nvmlGpuInstanceProfileInfo_v3                                                              \
        NVML_STRUCT_VERSION(GpuInstanceProfileInfo, 3) /* 0x03000098 */

typedef struct nvmlGpuInstanceInfo_st {
        nvmlDevice_t device;                  /* 0 */
        unsigned int id;                      /* 8 */
        unsigned int profileId;               /* 12 */
        nvmlGpuInstancePlacement_t placement; /* 16 */
} nvmlGpuInstanceInfo_t;                      /* 24 */

typedef struct nvmlComputeInstanceProfileInfo_st {
        unsigned int id;
        unsigned int sliceCount;
        unsigned int instanceCount;
        unsigned int multiprocessorCount;
        unsigned int sharedCopyEngineCount;
        unsigned int sharedDecoderCount;
        unsigned int sharedEncoderCount;
        unsigned int sharedJpegCount;
        unsigned int sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t; /* 36 */

typedef struct nvmlComputeInstanceProfileInfo_v2_st {
        unsigned int version;
        unsigned int id;
        unsigned int sliceCount;
        unsigned int instanceCount;
        unsigned int multiprocessorCount;
        unsigned int sharedCopyEngineCount;
        unsigned int sharedDecoderCount;
        unsigned int sharedEncoderCount;
        unsigned int sharedJpegCount;
        unsigned int sharedOfaCount;
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE]; /* 40 */
} nvmlComputeInstanceProfileInfo_v2_t;              /* 136 */
#define nvmlComputeInstanceProfileInfo_v2                                                          \
        NVML_STRUCT_VERSION(ComputeInstanceProfileInfo, 2) /* 0x02000088 */

typedef struct nvmlComputeInstancePlacement_st {
        unsigned int start; /* compute slice */
        unsigned int size;  /* compute slices */
} nvmlComputeInstancePlacement_t;

typedef struct nvmlComputeInstanceInfo_st {
        nvmlDevice_t device;                      /* 0 */
        nvmlGpuInstance_t gpuInstance;            /* 8 */
        unsigned int id;                          /* 16 */
        unsigned int profileId;                   /* 20 */
        nvmlComputeInstancePlacement_t placement; /* 24 */
} nvmlComputeInstanceInfo_t;                      /* 32 */

/* nvmlDeviceGetPciInfo_v3. Checked, like every layout here, against NVIDIA's nvml.h (NVML
 * 13.3.29) by sim_test_nvml_abi. */
typedef struct nvmlPciInfo_st {
        char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE]; /* 0, "0000:BB:DD.F" */
        unsigned int domain;                                     /* 16 */
        unsigned int bus;                                        /* 20 */
        unsigned int device;                                     /* 24 */
        unsigned int pciDeviceId;    /* 28, device id << 16 | vendor id (0x10DE): 0x233510DE */
        unsigned int pciSubSystemId; /* 32 */
        char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE]; /* 36, "00000000:BB:DD.F" */
} nvmlPciInfo_t;                                        /* 68 */

typedef struct nvmlTemperature_v1_st {
        unsigned int version; /* nvmlTemperature_v1 */
        int sensorType;       /* nvmlTemperatureSensors_t */
        int temperature;      /* degrees C */
} nvmlTemperature_v1_t;       /* 12 */
typedef nvmlTemperature_v1_t nvmlTemperature_t;
#define nvmlTemperature_v1 NVML_STRUCT_VERSION(Temperature, 1) /* 0x0100000C */

/* ---- layout checks (x86_64 LP64) ------------------------------------------------------- */
#if defined(__x86_64__) || defined(__aarch64__)
#define KERF_NVML_CHECK(cond) _Static_assert(cond, #cond)
KERF_NVML_CHECK(sizeof(nvmlMemory_t) == 24);
KERF_NVML_CHECK(sizeof(nvmlMemory_v2_t) == 40 && offsetof(nvmlMemory_v2_t, total) == 8);
KERF_NVML_CHECK(nvmlMemory_v2 == 0x02000028U);
KERF_NVML_CHECK(sizeof(nvmlUtilization_t) == 8);
KERF_NVML_CHECK(sizeof(nvmlProcessInfo_t) == 24);
KERF_NVML_CHECK(offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8);
KERF_NVML_CHECK(offsetof(nvmlProcessInfo_t, gpuInstanceId) == 16);
KERF_NVML_CHECK(offsetof(nvmlProcessInfo_t, computeInstanceId) == 20);
KERF_NVML_CHECK(sizeof(nvmlProcessInfo_v1_t) == 16);
KERF_NVML_CHECK(sizeof(nvmlProcessUtilizationSample_t) == 32);
KERF_NVML_CHECK(offsetof(nvmlProcessUtilizationSample_t, timeStamp) == 8);
KERF_NVML_CHECK(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16);
KERF_NVML_CHECK(sizeof(nvmlEventData_t) == 32);
KERF_NVML_CHECK(offsetof(nvmlEventData_t, eventType) == 8);
KERF_NVML_CHECK(offsetof(nvmlEventData_t, eventData) == 16);
KERF_NVML_CHECK(offsetof(nvmlEventData_t, gpuInstanceId) == 24);
KERF_NVML_CHECK(offsetof(nvmlEventData_t, computeInstanceId) == 28);
KERF_NVML_CHECK(sizeof(nvmlGpuInstancePlacement_t) == 8);
KERF_NVML_CHECK(sizeof(nvmlGpuInstanceProfileInfo_t) == 48);
KERF_NVML_CHECK(offsetof(nvmlGpuInstanceProfileInfo_t, memorySizeMB) == 40);
KERF_NVML_CHECK(sizeof(nvmlGpuInstanceProfileInfo_v2_t) == 152);
KERF_NVML_CHECK(offsetof(nvmlGpuInstanceProfileInfo_v2_t, memorySizeMB) == 48);
KERF_NVML_CHECK(offsetof(nvmlGpuInstanceProfileInfo_v2_t, name) == 56);
KERF_NVML_CHECK(nvmlGpuInstanceProfileInfo_v2 == 0x02000098U);
KERF_NVML_CHECK(sizeof(nvmlGpuInstanceProfileInfo_v3_t) == 152);
KERF_NVML_CHECK(offsetof(nvmlGpuInstanceProfileInfo_v3_t, memorySizeMB) == 40);
KERF_NVML_CHECK(offsetof(nvmlGpuInstanceProfileInfo_v3_t, name) == 48);
KERF_NVML_CHECK(offsetof(nvmlGpuInstanceProfileInfo_v3_t, capabilities) == 144);
KERF_NVML_CHECK(nvmlGpuInstanceProfileInfo_v3 == 0x03000098U);
KERF_NVML_CHECK(sizeof(nvmlGpuInstanceInfo_t) == 24);
KERF_NVML_CHECK(offsetof(nvmlGpuInstanceInfo_t, id) == 8);
KERF_NVML_CHECK(offsetof(nvmlGpuInstanceInfo_t, profileId) == 12);
KERF_NVML_CHECK(offsetof(nvmlGpuInstanceInfo_t, placement) == 16);
KERF_NVML_CHECK(sizeof(nvmlComputeInstanceProfileInfo_t) == 36);
KERF_NVML_CHECK(sizeof(nvmlComputeInstanceProfileInfo_v2_t) == 136);
KERF_NVML_CHECK(offsetof(nvmlComputeInstanceProfileInfo_v2_t, name) == 40);
KERF_NVML_CHECK(nvmlComputeInstanceProfileInfo_v2 == 0x02000088U);
KERF_NVML_CHECK(sizeof(nvmlComputeInstanceInfo_t) == 32);
KERF_NVML_CHECK(offsetof(nvmlComputeInstanceInfo_t, gpuInstance) == 8);
KERF_NVML_CHECK(offsetof(nvmlComputeInstanceInfo_t, id) == 16);
KERF_NVML_CHECK(offsetof(nvmlComputeInstanceInfo_t, profileId) == 20);
KERF_NVML_CHECK(offsetof(nvmlComputeInstanceInfo_t, placement) == 24);
KERF_NVML_CHECK(sizeof(nvmlPciInfo_t) == 68);
KERF_NVML_CHECK(offsetof(nvmlPciInfo_t, domain) == 16);
KERF_NVML_CHECK(offsetof(nvmlPciInfo_t, bus) == 20);
KERF_NVML_CHECK(offsetof(nvmlPciInfo_t, device) == 24);
KERF_NVML_CHECK(offsetof(nvmlPciInfo_t, pciDeviceId) == 28);
KERF_NVML_CHECK(offsetof(nvmlPciInfo_t, pciSubSystemId) == 32);
KERF_NVML_CHECK(offsetof(nvmlPciInfo_t, busId) == 36);
KERF_NVML_CHECK(sizeof(nvmlTemperature_t) == 12);
KERF_NVML_CHECK(nvmlTemperature_v1 == 0x0100000CU);
KERF_NVML_CHECK(sizeof(nvmlBAR1Memory_t) == 24);
KERF_NVML_CHECK(sizeof(nvmlDeviceAttributes_t) == 40);
KERF_NVML_CHECK(offsetof(nvmlDeviceAttributes_t, memorySizeMB) == 32);
KERF_NVML_CHECK(sizeof(nvmlPstates_t) == 4 && sizeof(nvmlEnableState_t) == 4);
#undef KERF_NVML_CHECK
#endif

#endif /* KERF_NVML_ABI_PROTOS_ONLY */

/* ---- prototypes (GPU-REFERENCE §2.2, plus the fallback names of §2.1) ------------------- */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlInit(void); /* legacy alias of nvmlInit_v2 */
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion);
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization);
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *processSamplesCount,
                                             unsigned long long lastSeenTimeStamp);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v2_t *infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                  nvmlProcessInfo_v1_t *infos);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
                                      unsigned int *temp);
nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t *temperature);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power); /* mW */

/* Further queries tools make (nvidia-smi-like tools, pynvml, PyTorch, vLLM, DCGM-lite); the
 * simulated answers are described in docs/SIMULATOR.md, "NVML coverage". */
nvmlReturn_t nvmlInitWithFlags(unsigned int flags);
nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length);
nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index);
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor);
nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t device, nvmlDeviceArchitecture_t *arch);
nvmlReturn_t nvmlDeviceGetBrand(nvmlDevice_t device, nvmlBrandType_t *type);
nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char *serial, unsigned int length);
nvmlReturn_t nvmlDeviceGetBoardPartNumber(nvmlDevice_t device, char *partNumber,
                                          unsigned int length);
nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t device, char *version, unsigned int length);
nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int *numCores);
nvmlReturn_t nvmlDeviceGetNumaNodeId(nvmlDevice_t device, unsigned int *node);
nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t *attributes);
nvmlReturn_t nvmlDeviceGetAttributes(nvmlDevice_t device, nvmlDeviceAttributes_t *attributes);
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock);
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
                                       unsigned int *clock);
nvmlReturn_t nvmlDeviceGetClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                nvmlClockId_t clockId, unsigned int *clockMHz);
nvmlReturn_t nvmlDeviceGetMaxCustomerBoostClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                                unsigned int *clockMHz);
nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                            unsigned int *clockMHz); /* deprecated in 13.0 */
nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t device, nvmlClockType_t clockType,
                                                   unsigned int *clockMHz); /* deprecated */
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                    unsigned long long *clocksEventReasons);
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                       unsigned long long *clocksThrottleReasons);
nvmlReturn_t
nvmlDeviceGetSupportedClocksEventReasons(nvmlDevice_t device,
                                         unsigned long long *supportedClocksEventReasons);
nvmlReturn_t
nvmlDeviceGetSupportedClocksThrottleReasons(nvmlDevice_t device,
                                            unsigned long long *supportedClocksThrottleReasons);
nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t *pState);
nvmlReturn_t nvmlDeviceGetPowerState(nvmlDevice_t device, nvmlPstates_t *pState); /* deprecated */
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit);
nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int *limit);
nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device,
                                                      unsigned int *defaultLimit);
nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device,
                                                          unsigned int *minLimit,
                                                          unsigned int *maxLimit);
nvmlReturn_t nvmlDeviceGetPowerManagementMode(nvmlDevice_t device, nvmlEnableState_t *mode);
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy);
nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned int *speed);
nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device, unsigned int fan, unsigned int *speed);
nvmlReturn_t nvmlDeviceGetNumFans(nvmlDevice_t device, unsigned int *numFans);
nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t *mode);
nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t device, nvmlComputeMode_t *mode);
nvmlReturn_t nvmlDeviceGetDisplayMode(nvmlDevice_t device, nvmlEnableState_t *display);
nvmlReturn_t nvmlDeviceGetDisplayActive(nvmlDevice_t device, nvmlEnableState_t *isActive);
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t *current,
                                  nvmlEnableState_t *pending);
nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t *bar1Memory);
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int *currLinkGen);
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int *currLinkWidth);
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int *maxLinkGen);
nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t device,
                                                   unsigned int *maxLinkGenDevice);
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int *maxLinkWidth);
nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs);
nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs);
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                      nvmlProcessInfo_t *infos);
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                      nvmlProcessInfo_v2_t *infos);
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                   nvmlProcessInfo_v1_t *infos);
nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t device,
                                                        unsigned int *infoCount,
                                                        nvmlProcessInfo_t *infos);
nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v2(nvmlDevice_t device,
                                                        unsigned int *infoCount,
                                                        nvmlProcessInfo_v2_t *infos);
nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v1_t *infos);
nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
                                    nvmlGpuP2PCapsIndex_t p2pIndex, nvmlGpuP2PStatus_t *p2pStatus);
nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2,
                                                 nvmlGpuTopologyLevel_t *pathInfo);
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                      nvmlEnableState_t *isActive);

/* MIG */
nvmlReturn_t nvmlDeviceSetMigMode(nvmlDevice_t device, unsigned int mode,
                                  nvmlReturn_t *activationStatus);
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
                                  unsigned int *pendingMode);
nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile,
                                                 nvmlGpuInstanceProfileInfo_t *info);
/* info->version must be nvmlGpuInstanceProfileInfo_v2 or _v3 (v3 layout when _v3). */
nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device, unsigned int profile,
                                                  nvmlGpuInstanceProfileInfo_v2_t *info);
nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device,
                                                           unsigned int profileId,
                                                           nvmlGpuInstancePlacement_t *placements,
                                                           unsigned int *count);
nvmlReturn_t nvmlDeviceGetGpuInstanceRemainingCapacity(nvmlDevice_t device, unsigned int profileId,
                                                       unsigned int *count);
nvmlReturn_t nvmlDeviceCreateGpuInstance(nvmlDevice_t device, unsigned int profileId,
                                         nvmlGpuInstance_t *gpuInstance);
nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(nvmlDevice_t device, unsigned int profileId,
                                                      const nvmlGpuInstancePlacement_t *placement,
                                                      nvmlGpuInstance_t *gpuInstance);
nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpuInstance);
nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId,
                                       nvmlGpuInstance_t *gpuInstances, unsigned int *count);
nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id,
                                          nvmlGpuInstance_t *gpuInstance);
nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance, nvmlGpuInstanceInfo_t *info);
nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(nvmlGpuInstance_t gpuInstance,
                                                          unsigned int profile,
                                                          unsigned int engProfile,
                                                          nvmlComputeInstanceProfileInfo_t *info);
/* info->version must be nvmlComputeInstanceProfileInfo_v2. */
nvmlReturn_t
nvmlGpuInstanceGetComputeInstanceProfileInfoV(nvmlGpuInstance_t gpuInstance, unsigned int profile,
                                              unsigned int engProfile,
                                              nvmlComputeInstanceProfileInfo_v2_t *info);
nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gpuInstance,
                                                  unsigned int profileId,
                                                  nvmlComputeInstance_t *computeInstance);
nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gpuInstance,
                                                unsigned int profileId,
                                                nvmlComputeInstance_t *computeInstances,
                                                unsigned int *count);
nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t computeInstance);
nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t computeInstance,
                                           nvmlComputeInstanceInfo_t *info);
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count);
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                 nvmlDevice_t *migDevice);
nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice);
nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id);
nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id);
nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice,
                                                          nvmlDevice_t *device);

/* events */
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set);
nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *eventTypes);
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes,
                                      nvmlEventSet_t set);
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms);
nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms);
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set);

#ifdef __cplusplus
}
#endif

#endif /* KERF_NVML_ABI_H */
