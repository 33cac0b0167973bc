/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_test_api.h - the simulated NVML as a consumer sees it: dlopen() + dlsym() of each name */
#ifndef KERF_NVML_TEST_API_H
#define KERF_NVML_TEST_API_H

#include "nvml_abi.h"

/* clang-format off */
#define NVML_TEST_FNS(X) \
        X(nvmlInit_v2) \
        X(nvmlInit) \
        X(nvmlShutdown) \
        X(nvmlErrorString) \
        X(nvmlSystemGetDriverVersion) \
        X(nvmlSystemGetCudaDriverVersion) \
        X(nvmlDeviceGetCount_v2) \
        X(nvmlDeviceGetHandleByIndex_v2) \
        X(nvmlDeviceGetHandleByUUID) \
        X(nvmlDeviceGetUUID) \
        X(nvmlDeviceGetName) \
        X(nvmlDeviceGetMinorNumber) \
        X(nvmlDeviceGetPciInfo_v3) \
        X(nvmlDeviceGetMemoryInfo) \
        X(nvmlDeviceGetMemoryInfo_v2) \
        X(nvmlDeviceGetUtilizationRates) \
        X(nvmlDeviceGetProcessUtilization) \
        X(nvmlDeviceGetComputeRunningProcesses_v3) \
        X(nvmlDeviceGetComputeRunningProcesses_v2) \
        X(nvmlDeviceGetComputeRunningProcesses) \
        X(nvmlDeviceGetTemperature) \
        X(nvmlDeviceGetTemperatureV) \
        X(nvmlDeviceGetPowerUsage) \
        X(nvmlDeviceSetMigMode) \
        X(nvmlDeviceGetMigMode) \
        X(nvmlDeviceGetGpuInstanceProfileInfo) \
        X(nvmlDeviceGetGpuInstanceProfileInfoV) \
        X(nvmlDeviceGetGpuInstancePossiblePlacements_v2) \
        X(nvmlDeviceGetGpuInstanceRemainingCapacity) \
        X(nvmlDeviceCreateGpuInstance) \
        X(nvmlDeviceCreateGpuInstanceWithPlacement) \
        X(nvmlGpuInstanceDestroy) \
        X(nvmlDeviceGetGpuInstances) \
        X(nvmlDeviceGetGpuInstanceById) \
        X(nvmlGpuInstanceGetInfo) \
        X(nvmlGpuInstanceGetComputeInstanceProfileInfo) \
        X(nvmlGpuInstanceGetComputeInstanceProfileInfoV) \
        X(nvmlGpuInstanceCreateComputeInstance) \
        X(nvmlGpuInstanceGetComputeInstances) \
        X(nvmlComputeInstanceDestroy) \
        X(nvmlComputeInstanceGetInfo_v2) \
        X(nvmlDeviceGetMaxMigDeviceCount) \
        X(nvmlDeviceGetMigDeviceHandleByIndex) \
        X(nvmlDeviceIsMigDeviceHandle) \
        X(nvmlDeviceGetGpuInstanceId) \
        X(nvmlDeviceGetComputeInstanceId) \
        X(nvmlDeviceGetDeviceHandleFromMigDeviceHandle) \
        X(nvmlEventSetCreate) \
        X(nvmlDeviceGetSupportedEventTypes) \
        X(nvmlDeviceRegisterEvents) \
        X(nvmlEventSetWait_v2) \
        X(nvmlEventSetWait) \
        X(nvmlEventSetFree) \
        X(nvmlInitWithFlags) \
        X(nvmlSystemGetNVMLVersion) \
        X(nvmlSystemGetProcessName) \
        X(nvmlDeviceGetHandleByPciBusId_v2) \
        X(nvmlDeviceGetHandleByPciBusId) \
        X(nvmlDeviceGetIndex) \
        X(nvmlDeviceGetCudaComputeCapability) \
        X(nvmlDeviceGetArchitecture) \
        X(nvmlDeviceGetBrand) \
        X(nvmlDeviceGetSerial) \
        X(nvmlDeviceGetBoardPartNumber) \
        X(nvmlDeviceGetVbiosVersion) \
        X(nvmlDeviceGetNumGpuCores) \
        X(nvmlDeviceGetNumaNodeId) \
        X(nvmlDeviceGetAttributes_v2) \
        X(nvmlDeviceGetAttributes) \
        X(nvmlDeviceGetClockInfo) \
        X(nvmlDeviceGetMaxClockInfo) \
        X(nvmlDeviceGetClock) \
        X(nvmlDeviceGetMaxCustomerBoostClock) \
        X(nvmlDeviceGetApplicationsClock) \
        X(nvmlDeviceGetDefaultApplicationsClock) \
        X(nvmlDeviceGetCurrentClocksEventReasons) \
        X(nvmlDeviceGetCurrentClocksThrottleReasons) \
        X(nvmlDeviceGetSupportedClocksEventReasons) \
        X(nvmlDeviceGetSupportedClocksThrottleReasons) \
        X(nvmlDeviceGetPerformanceState) \
        X(nvmlDeviceGetPowerState) \
        X(nvmlDeviceGetEnforcedPowerLimit) \
        X(nvmlDeviceGetPowerManagementLimit) \
        X(nvmlDeviceGetPowerManagementDefaultLimit) \
        X(nvmlDeviceGetPowerManagementLimitConstraints) \
        X(nvmlDeviceGetPowerManagementMode) \
        X(nvmlDeviceGetTotalEnergyConsumption) \
        X(nvmlDeviceGetFanSpeed) \
        X(nvmlDeviceGetFanSpeed_v2) \
        X(nvmlDeviceGetNumFans) \
        X(nvmlDeviceGetPersistenceMode) \
        X(nvmlDeviceGetComputeMode) \
        X(nvmlDeviceGetDisplayMode) \
        X(nvmlDeviceGetDisplayActive) \
        X(nvmlDeviceGetEccMode) \
        X(nvmlDeviceGetBAR1MemoryInfo) \
        X(nvmlDeviceGetCurrPcieLinkGeneration) \
        X(nvmlDeviceGetCurrPcieLinkWidth) \
        X(nvmlDeviceGetMaxPcieLinkGeneration) \
        X(nvmlDeviceGetGpuMaxPcieLinkGeneration) \
        X(nvmlDeviceGetMaxPcieLinkWidth) \
        X(nvmlDeviceGetEncoderUtilization) \
        X(nvmlDeviceGetDecoderUtilization) \
        X(nvmlDeviceGetGraphicsRunningProcesses_v3) \
        X(nvmlDeviceGetGraphicsRunningProcesses_v2) \
        X(nvmlDeviceGetGraphicsRunningProcesses) \
        X(nvmlDeviceGetMPSComputeRunningProcesses_v3) \
        X(nvmlDeviceGetMPSComputeRunningProcesses_v2) \
        X(nvmlDeviceGetMPSComputeRunningProcesses) \
        X(nvmlDeviceGetP2PStatus) \
        X(nvmlDeviceGetTopologyCommonAncestor) \
        X(nvmlDeviceGetNvLinkState)
/* clang-format on */

struct nvml_api {
        void *dl;
#define X(n) __typeof__(&n) n;
        NVML_TEST_FNS(X)
#undef X
};

/* Filled by nvml_test_load() (test_nvml.c). */
extern struct nvml_api N;
/* Per-test fixture shared by the NVML test files. */
int nvml_setup(void **state);
int nvml_teardown(void **state);
struct nvml_fx {
        char dir[64];
        struct kerf_sim *st;
        nvmlDevice_t dev[3]; /* H200 (MIG on), H200, T4 */
};
/* The MIG lifecycle tests (test_nvml_mig.c). */
extern const struct CMUnitTest nvml_mig_tests[];
extern const size_t nvml_mig_tests_n;
/* The further device/system queries (test_nvml_query.c). */
extern const struct CMUnitTest nvml_query_tests[];
extern const size_t nvml_query_tests_n;

#endif /* KERF_NVML_TEST_API_H */
