/* SPDX-License-Identifier: Apache-2.0 */
/* test_nvml_query.c - the further NVML queries tools make (identity, clocks, power, PCIe...) */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>

#include "nvml_test_api.h"
#include "sim_test_util.h"

/* Not initialised: every new entry point answers UNINITIALIZED before looking at arguments
 * (NULL handles and outputs included). */
static void test_query_uninitialized(void **state)
{
        (void)state;
        nvmlDevice_t d = NULL;
        assert_int_equal(N.nvmlDeviceGetIndex(NULL, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetCudaComputeCapability(NULL, NULL, NULL),
                         NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetArchitecture(d, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetBrand(d, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetSerial(d, NULL, 0), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetNumGpuCores(d, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetAttributes_v2(d, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetClockInfo(d, NVML_CLOCK_SM, NULL),
                         NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetClock(d, NVML_CLOCK_SM, NVML_CLOCK_ID_CURRENT, NULL),
                         NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetCurrentClocksEventReasons(d, NULL),
                         NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetPerformanceState(d, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetEnforcedPowerLimit(d, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetTotalEnergyConsumption(d, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetFanSpeed(d, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetEccMode(d, NULL, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetBAR1MemoryInfo(d, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetCurrPcieLinkWidth(d, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetGraphicsRunningProcesses_v3(d, NULL, NULL),
                         NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetMPSComputeRunningProcesses_v3(d, NULL, NULL),
                         NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetP2PStatus(d, d, NVML_P2P_CAPS_INDEX_READ, NULL),
                         NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetTopologyCommonAncestor(d, d, NULL),
                         NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetNvLinkState(d, 0, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlSystemGetNVMLVersion(NULL, 0), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlSystemGetProcessName(0, NULL, 0), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetHandleByPciBusId_v2(NULL, NULL), NVML_ERROR_UNINITIALIZED);
        /* pynvml's nvmlInit(): nvmlInitWithFlags, reference-counted like nvmlInit_v2 */
        char dir[64];
        unsigned n;
        assert_int_equal(sim_test_node(dir), 0);
        assert_int_equal(N.nvmlInitWithFlags(0), NVML_SUCCESS);
        assert_int_equal(N.nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
        assert_int_equal(n, 3);
        assert_int_equal(N.nvmlShutdown(), NVML_SUCCESS);
        assert_int_equal(N.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
        sim_test_rmdir(dir);
}

/* GPU 0 (H200, MIG on) gets two 3g.71gb instances with their full CIs; returns the handle of
 * MIG device `idx`. */
static nvmlDevice_t mig_devices(struct nvml_fx *fx, unsigned idx)
{
        unsigned gi, ci;
        nvmlDevice_t m = NULL;
        for (int k = 0; k < 2; k++) {
                assert_int_equal(kerf_sim_gi_create(fx->st, 0, 9, k ? 0 : 4, &gi), 0);
                assert_int_equal(
                    kerf_sim_ci_create(fx->st, 0, gi, NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE, &ci),
                    0);
        }
        assert_int_equal(N.nvmlDeviceGetMigDeviceHandleByIndex(fx->dev[0], idx, &m), NVML_SUCCESS);
        return m;
}

static void test_query_identity(void **state)
{
        struct nvml_fx *fx = *state;
        unsigned u;
        int major, minor;
        nvmlDeviceArchitecture_t arch;
        nvmlBrandType_t brand;
        char buf[NVML_DEVICE_PART_NUMBER_BUFFER_SIZE], serial1[32], small[4];
        for (unsigned i = 0; i < 3; i++) {
                assert_int_equal(N.nvmlDeviceGetIndex(fx->dev[i], &u), NVML_SUCCESS);
                assert_int_equal(u, i);
        }
        assert_int_equal(N.nvmlDeviceGetIndex(fx->dev[1], NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetIndex((nvmlDevice_t)buf, &u), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetCudaComputeCapability(fx->dev[1], &major, &minor),
                         NVML_SUCCESS);
        assert_true(major == 9 && minor == 0);
        assert_int_equal(N.nvmlDeviceGetCudaComputeCapability(fx->dev[2], &major, &minor),
                         NVML_SUCCESS);
        assert_true(major == 7 && minor == 5);
        assert_int_equal(N.nvmlDeviceGetCudaComputeCapability(fx->dev[2], &major, NULL),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetArchitecture(fx->dev[1], &arch), NVML_SUCCESS);
        assert_int_equal(arch, NVML_DEVICE_ARCH_HOPPER);
        assert_int_equal(N.nvmlDeviceGetArchitecture(fx->dev[2], &arch), NVML_SUCCESS);
        assert_int_equal(arch, NVML_DEVICE_ARCH_TURING);
        assert_int_equal(N.nvmlDeviceGetBrand(fx->dev[1], &brand), NVML_SUCCESS);
        assert_int_equal(brand, NVML_BRAND_NVIDIA);
        assert_int_equal(N.nvmlDeviceGetBrand(fx->dev[2], &brand), NVML_SUCCESS);
        assert_int_equal(brand, NVML_BRAND_TESLA);
        /* serial: 13 digits, stable, different per board */
        assert_int_equal(N.nvmlDeviceGetSerial(fx->dev[1], serial1, sizeof(serial1)), NVML_SUCCESS);
        assert_int_equal(strlen(serial1), 13);
        for (const char *p = serial1; *p; p++)
                assert_true(isdigit((unsigned char)*p));
        assert_int_equal(N.nvmlDeviceGetSerial(fx->dev[1], buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_equal(buf, serial1);
        assert_int_equal(N.nvmlDeviceGetSerial(fx->dev[2], buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_not_equal(buf, serial1);
        assert_int_equal(N.nvmlDeviceGetSerial(fx->dev[1], small, sizeof(small)),
                         NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(N.nvmlDeviceGetBoardPartNumber(fx->dev[1], buf, sizeof(buf)),
                         NVML_SUCCESS);
        assert_string_equal(buf, "KERFSIM-H200-141GB");
        assert_int_equal(N.nvmlDeviceGetVbiosVersion(fx->dev[1], buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_equal(buf, "96.00.00.00.01");
        assert_int_equal(N.nvmlDeviceGetNumGpuCores(fx->dev[1], &u), NVML_SUCCESS);
        assert_int_equal(u, 132 * 128);
        assert_int_equal(N.nvmlDeviceGetNumGpuCores(fx->dev[2], &u), NVML_SUCCESS);
        assert_int_equal(u, 40 * 64);
        assert_int_equal(N.nvmlDeviceGetNumaNodeId(fx->dev[2], &u), NVML_SUCCESS);
        assert_int_equal(u, 1);
        /* attributes: MIG device handles only */
        nvmlDeviceAttributes_t a;
        assert_int_equal(N.nvmlDeviceGetAttributes_v2(fx->dev[1], &a), NVML_ERROR_NOT_SUPPORTED);
        nvmlDevice_t m1 = mig_devices(fx, 1), m0 = NULL;
        assert_int_equal(N.nvmlDeviceGetMigDeviceHandleByIndex(fx->dev[0], 0, &m0), NVML_SUCCESS);
        assert_int_equal(N.nvmlDeviceGetIndex(m0, &u), NVML_SUCCESS);
        assert_int_equal(u, 0);
        assert_int_equal(N.nvmlDeviceGetIndex(m1, &u), NVML_SUCCESS);
        assert_int_equal(u, 1); /* the index nvmlDeviceGetMigDeviceHandleByIndex takes */
        memset(&a, 0xA5, sizeof(a));
        assert_int_equal(N.nvmlDeviceGetAttributes_v2(m1, &a), NVML_SUCCESS);
        assert_int_equal(a.multiprocessorCount, 60);
        assert_int_equal(a.gpuInstanceSliceCount, 3);
        assert_int_equal(a.computeInstanceSliceCount, 3);
        assert_int_equal(a.memorySizeMB, 71168);
        assert_int_equal(a.sharedCopyEngineCount, 3);
        assert_int_equal(a.sharedDecoderCount, 3);
        assert_int_equal(N.nvmlDeviceGetAttributes(m1, &a), NVML_SUCCESS);
        assert_int_equal(a.multiprocessorCount, 60);
        assert_int_equal(N.nvmlDeviceGetAttributes_v2(m1, NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetNumGpuCores(m1, &u), NVML_SUCCESS);
        assert_int_equal(u, 60 * 128);
        assert_int_equal(N.nvmlDeviceGetCudaComputeCapability(m1, &major, &minor), NVML_SUCCESS);
        assert_int_equal(major, 9);
        /* board-level queries are not answered for a MIG device handle */
        assert_int_equal(N.nvmlDeviceGetSerial(m1, buf, sizeof(buf)), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(N.nvmlDeviceGetClockInfo(m1, NVML_CLOCK_SM, &u), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(N.nvmlDeviceGetEnforcedPowerLimit(m1, &u), NVML_ERROR_NOT_SUPPORTED);
        /* a lost GPU */
        assert_int_equal(kerf_sim_gpu_lost(fx->st, 1), 0);
        u = 77;
        assert_int_equal(N.nvmlDeviceGetIndex(fx->dev[1], &u), NVML_ERROR_GPU_IS_LOST);
        assert_int_equal(u, 77);
        assert_int_equal(N.nvmlDeviceGetClockInfo(fx->dev[1], NVML_CLOCK_SM, &u),
                         NVML_ERROR_GPU_IS_LOST);
}

static void test_query_clocks_power(void **state)
{
        struct nvml_fx *fx = *state;
        unsigned u, lo, hi;
        unsigned long long reasons, e1, e2;
        nvmlPstates_t ps;
        /* idle GPU 1: idle SM clock, GpuIdle */
        assert_int_equal(N.nvmlDeviceGetClockInfo(fx->dev[1], NVML_CLOCK_SM, &u), NVML_SUCCESS);
        assert_int_equal(u, 345);
        assert_int_equal(N.nvmlDeviceGetCurrentClocksEventReasons(fx->dev[1], &reasons),
                         NVML_SUCCESS);
        assert_int_equal(reasons, nvmlClocksEventReasonGpuIdle);
        assert_int_equal(N.nvmlDeviceGetMaxClockInfo(fx->dev[1], NVML_CLOCK_SM, &u), NVML_SUCCESS);
        assert_int_equal(u, 1980);
        assert_int_equal(N.nvmlDeviceGetMaxClockInfo(fx->dev[1], NVML_CLOCK_MEM, &u), NVML_SUCCESS);
        assert_int_equal(u, 3201);
        assert_int_equal(N.nvmlDeviceGetMaxClockInfo(fx->dev[2], NVML_CLOCK_GRAPHICS, &u),
                         NVML_SUCCESS);
        assert_int_equal(u, 1590);
        assert_int_equal(N.nvmlDeviceGetClockInfo(fx->dev[1], NVML_CLOCK_COUNT, &u),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetClockInfo(fx->dev[1], NVML_CLOCK_SM, NULL),
                         NVML_ERROR_INVALID_ARGUMENT);
        /* busy: boost clock, no event reason */
        assert_int_equal(
            kerf_sim_engine_account(fx->st, getpid(), (kerf_sim_target){1, -1, -1}, 500000000ULL),
            0);
        assert_int_equal(N.nvmlDeviceGetClockInfo(fx->dev[1], NVML_CLOCK_SM, &u), NVML_SUCCESS);
        assert_int_equal(u, 1980);
        assert_int_equal(N.nvmlDeviceGetCurrentClocksThrottleReasons(fx->dev[1], &reasons),
                         NVML_SUCCESS);
        assert_int_equal(reasons, nvmlClocksEventReasonNone);
        assert_int_equal(N.nvmlDeviceGetCurrentClocksEventReasons(fx->dev[2], &reasons),
                         NVML_SUCCESS);
        assert_int_equal(reasons, nvmlClocksEventReasonGpuIdle); /* the T4 stays idle */
        assert_int_equal(N.nvmlDeviceGetSupportedClocksEventReasons(fx->dev[1], &reasons),
                         NVML_SUCCESS);
        assert_int_equal(reasons & nvmlClocksEventReasonGpuIdle, nvmlClocksEventReasonGpuIdle);
        assert_int_equal(
            N.nvmlDeviceGetClock(fx->dev[1], NVML_CLOCK_SM, NVML_CLOCK_ID_CUSTOMER_BOOST_MAX, &u),
            NVML_SUCCESS);
        assert_int_equal(u, 1980);
        assert_int_equal(N.nvmlDeviceGetClock(fx->dev[1], NVML_CLOCK_SM, NVML_CLOCK_ID_COUNT, &u),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetMaxCustomerBoostClock(fx->dev[1], NVML_CLOCK_MEM, &u),
                         NVML_SUCCESS);
        assert_int_equal(u, 3201);
        assert_int_equal(N.nvmlDeviceGetApplicationsClock(fx->dev[2], NVML_CLOCK_SM, &u),
                         NVML_SUCCESS);
        assert_int_equal(u, 1590);
        assert_int_equal(N.nvmlDeviceGetDefaultApplicationsClock(fx->dev[2], NVML_CLOCK_SM, &u),
                         NVML_SUCCESS);
        assert_int_equal(N.nvmlDeviceGetPerformanceState(fx->dev[1], &ps), NVML_SUCCESS);
        assert_int_equal(ps, NVML_PSTATE_0);
        assert_int_equal(N.nvmlDeviceGetPowerState(fx->dev[1], NULL), NVML_ERROR_INVALID_ARGUMENT);
        /* power: the model's limit, in mW */
        assert_int_equal(N.nvmlDeviceGetEnforcedPowerLimit(fx->dev[1], &u), NVML_SUCCESS);
        assert_int_equal(u, 700000);
        assert_int_equal(N.nvmlDeviceGetPowerManagementLimit(fx->dev[2], &u), NVML_SUCCESS);
        assert_int_equal(u, 70000);
        assert_int_equal(N.nvmlDeviceGetPowerManagementDefaultLimit(fx->dev[2], &u), NVML_SUCCESS);
        assert_int_equal(u, 70000);
        assert_int_equal(N.nvmlDeviceGetPowerManagementLimitConstraints(fx->dev[1], &lo, &hi),
                         NVML_SUCCESS);
        assert_true(lo > 0 && lo < hi && hi == 700000);
        assert_int_equal(N.nvmlDeviceGetPowerManagementLimitConstraints(fx->dev[1], &lo, NULL),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetPowerUsage(fx->dev[1], &u), NVML_SUCCESS);
        assert_true(u > 70000 && u <= 700000); /* busy: above the idle draw */
        assert_int_equal(N.nvmlDeviceGetTotalEnergyConsumption(fx->dev[1], &e1), NVML_SUCCESS);
        struct timespec d = {0, 20000000L};
        nanosleep(&d, NULL);
        assert_int_equal(N.nvmlDeviceGetTotalEnergyConsumption(fx->dev[1], &e2), NVML_SUCCESS);
        assert_true(e2 > e1); /* mJ, monotonic */
}

static void test_query_board(void **state)
{
        struct nvml_fx *fx = *state;
        unsigned u, period;
        nvmlEnableState_t cur, pend;
        nvmlComputeMode_t cm;
        nvmlBAR1Memory_t bar1;
        /* fans: passively cooled datacenter boards; NULL is still INVALID_ARGUMENT */
        assert_int_equal(N.nvmlDeviceGetFanSpeed(fx->dev[1], &u), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(N.nvmlDeviceGetFanSpeed(fx->dev[1], NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetFanSpeed_v2(fx->dev[2], 0, &u), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(N.nvmlDeviceGetNumFans(fx->dev[1], &u), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(N.nvmlDeviceGetPersistenceMode(fx->dev[1], &cur), NVML_SUCCESS);
        assert_int_equal(cur, NVML_FEATURE_ENABLED);
        assert_int_equal(N.nvmlDeviceGetComputeMode(fx->dev[1], &cm), NVML_SUCCESS);
        assert_int_equal(cm, NVML_COMPUTEMODE_DEFAULT);
        assert_int_equal(N.nvmlDeviceGetDisplayMode(fx->dev[1], &cur), NVML_SUCCESS);
        assert_int_equal(cur, NVML_FEATURE_DISABLED);
        assert_int_equal(N.nvmlDeviceGetDisplayActive(fx->dev[1], &cur), NVML_SUCCESS);
        assert_int_equal(cur, NVML_FEATURE_DISABLED);
        assert_int_equal(N.nvmlDeviceGetPowerManagementMode(fx->dev[1], &cur), NVML_SUCCESS);
        assert_int_equal(cur, NVML_FEATURE_ENABLED);
        assert_int_equal(N.nvmlDeviceGetEccMode(fx->dev[1], &cur, &pend), NVML_SUCCESS);
        assert_true(cur == NVML_FEATURE_ENABLED && pend == NVML_FEATURE_ENABLED);
        assert_int_equal(N.nvmlDeviceGetEccMode(fx->dev[1], &cur, NULL),
                         NVML_ERROR_INVALID_ARGUMENT);
        /* BAR1: 141 GiB of framebuffer -> 256 GiB window */
        assert_int_equal(N.nvmlDeviceGetBAR1MemoryInfo(fx->dev[1], &bar1), NVML_SUCCESS);
        assert_int_equal(bar1.bar1Total, 256ULL << 30);
        assert_int_equal(bar1.bar1Free + bar1.bar1Used, bar1.bar1Total);
        assert_int_equal(N.nvmlDeviceGetBAR1MemoryInfo(fx->dev[1], NULL),
                         NVML_ERROR_INVALID_ARGUMENT);
        /* PCIe: Gen5 x16 (H200), Gen3 x16 (T4) */
        assert_int_equal(N.nvmlDeviceGetCurrPcieLinkGeneration(fx->dev[1], &u), NVML_SUCCESS);
        assert_int_equal(u, 5);
        assert_int_equal(N.nvmlDeviceGetMaxPcieLinkGeneration(fx->dev[2], &u), NVML_SUCCESS);
        assert_int_equal(u, 3);
        assert_int_equal(N.nvmlDeviceGetGpuMaxPcieLinkGeneration(fx->dev[1], &u), NVML_SUCCESS);
        assert_int_equal(u, 5);
        assert_int_equal(N.nvmlDeviceGetCurrPcieLinkWidth(fx->dev[1], &u), NVML_SUCCESS);
        assert_int_equal(u, 16);
        assert_int_equal(N.nvmlDeviceGetMaxPcieLinkWidth(fx->dev[2], &u), NVML_SUCCESS);
        assert_int_equal(u, 16);
        assert_int_equal(N.nvmlDeviceGetEncoderUtilization(fx->dev[1], &u, &period), NVML_SUCCESS);
        assert_true(u == 0 && period > 0);
        assert_int_equal(N.nvmlDeviceGetDecoderUtilization(fx->dev[1], &u, NULL),
                         NVML_ERROR_INVALID_ARGUMENT);
}

static void test_query_processes_pairs(void **state)
{
        struct nvml_fx *fx = *state;
        unsigned n;
        nvmlProcessInfo_t pi[4];
        nvmlProcessInfo_v1_t p1[4];
        nvmlGpuP2PStatus_t st;
        nvmlGpuTopologyLevel_t lvl;
        nvmlEnableState_t on;
        /* a compute process exists; graphics and MPS lists stay empty */
        assert_int_equal(
            kerf_sim_mem_charge(fx->st, getpid(), (kerf_sim_target){1, -1, -1}, KERF_GIB), 0);
        n = 4;
        assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses_v3(fx->dev[1], &n, pi),
                         NVML_SUCCESS);
        assert_int_equal(n, 1);
        n = 0;
        assert_int_equal(N.nvmlDeviceGetGraphicsRunningProcesses_v3(fx->dev[1], &n, NULL),
                         NVML_SUCCESS);
        assert_int_equal(n, 0);
        n = 4;
        assert_int_equal(N.nvmlDeviceGetGraphicsRunningProcesses_v2(fx->dev[1], &n, pi),
                         NVML_SUCCESS);
        assert_int_equal(n, 0);
        n = 4;
        assert_int_equal(N.nvmlDeviceGetGraphicsRunningProcesses(fx->dev[1], &n, p1), NVML_SUCCESS);
        assert_int_equal(n, 0);
        assert_int_equal(N.nvmlDeviceGetGraphicsRunningProcesses_v3(fx->dev[1], NULL, pi),
                         NVML_ERROR_INVALID_ARGUMENT);
        n = 4;
        assert_int_equal(N.nvmlDeviceGetMPSComputeRunningProcesses_v3(fx->dev[1], &n, pi),
                         NVML_SUCCESS);
        assert_int_equal(n, 0);
        n = 4;
        assert_int_equal(N.nvmlDeviceGetMPSComputeRunningProcesses_v2(fx->dev[1], &n, pi),
                         NVML_SUCCESS);
        n = 4;
        assert_int_equal(N.nvmlDeviceGetMPSComputeRunningProcesses(fx->dev[1], &n, p1),
                         NVML_SUCCESS);
        assert_int_equal(n, 0);
        assert_int_equal(N.nvmlDeviceGetMPSComputeRunningProcesses_v3(NULL, &n, pi),
                         NVML_ERROR_INVALID_ARGUMENT);
        /* pairs: no peer access; topology from NUMA nodes (GPUs 0, 1 on node 0; 2 on node 1) */
        assert_int_equal(
            N.nvmlDeviceGetP2PStatus(fx->dev[1], fx->dev[2], NVML_P2P_CAPS_INDEX_READ, &st),
            NVML_SUCCESS);
        assert_int_equal(st, NVML_P2P_STATUS_NOT_SUPPORTED);
        assert_int_equal(
            N.nvmlDeviceGetP2PStatus(fx->dev[1], fx->dev[2], NVML_P2P_CAPS_INDEX_UNKNOWN, &st),
            NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetP2PStatus(fx->dev[1], NULL, NVML_P2P_CAPS_INDEX_READ, &st),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetTopologyCommonAncestor(fx->dev[0], fx->dev[1], &lvl),
                         NVML_SUCCESS);
        assert_int_equal(lvl, NVML_TOPOLOGY_NODE);
        assert_int_equal(N.nvmlDeviceGetTopologyCommonAncestor(fx->dev[1], fx->dev[2], &lvl),
                         NVML_SUCCESS);
        assert_int_equal(lvl, NVML_TOPOLOGY_SYSTEM);
        assert_int_equal(N.nvmlDeviceGetTopologyCommonAncestor(fx->dev[2], fx->dev[2], &lvl),
                         NVML_SUCCESS);
        assert_int_equal(lvl, NVML_TOPOLOGY_INTERNAL);
        assert_int_equal(N.nvmlDeviceGetTopologyCommonAncestor(fx->dev[1], fx->dev[2], NULL),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetNvLinkState(fx->dev[1], 0, &on), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(N.nvmlDeviceGetNvLinkState(fx->dev[1], 99, &on),
                         NVML_ERROR_INVALID_ARGUMENT);
}

static void test_query_system(void **state)
{
        struct nvml_fx *fx = *state;
        char buf[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE], small[4];
        nvmlDevice_t d;
        nvmlPciInfo_t pci;
        assert_int_equal(N.nvmlSystemGetNVMLVersion(buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_equal(buf, "12.550.54.15");
        assert_int_equal(N.nvmlSystemGetNVMLVersion(small, sizeof(small)),
                         NVML_ERROR_INSUFFICIENT_SIZE);
        /* process names: argv[0], cropped to the buffer */
        assert_int_equal(N.nvmlSystemGetProcessName((unsigned)getpid(), buf, sizeof(buf)),
                         NVML_SUCCESS);
        assert_non_null(strstr(buf, "sim_test_nvml"));
        assert_int_equal(N.nvmlSystemGetProcessName((unsigned)getpid(), small, sizeof(small)),
                         NVML_SUCCESS);
        assert_int_equal(strlen(small), 3);
        assert_memory_equal(small, buf, 3);
        assert_int_equal(N.nvmlSystemGetProcessName((unsigned)getpid(), buf, 0),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlSystemGetProcessName((unsigned)getpid(), NULL, 8),
                         NVML_ERROR_INVALID_ARGUMENT);
        pid_t c = fork();
        if (c == 0)
                _exit(0);
        assert_int_equal(waitpid(c, NULL, 0), c);
        assert_int_equal(N.nvmlSystemGetProcessName((unsigned)c, buf, sizeof(buf)),
                         NVML_ERROR_NOT_FOUND);
        /* handles by PCI bus id: the addresses nvmlDeviceGetPciInfo_v3 reports */
        for (unsigned i = 0; i < 3; i++) {
                assert_int_equal(N.nvmlDeviceGetPciInfo_v3(fx->dev[i], &pci), NVML_SUCCESS);
                assert_int_equal(N.nvmlDeviceGetHandleByPciBusId_v2(pci.busId, &d), NVML_SUCCESS);
                assert_ptr_equal(d, fx->dev[i]);
                assert_int_equal(N.nvmlDeviceGetHandleByPciBusId(pci.busIdLegacy, &d),
                                 NVML_SUCCESS);
                assert_ptr_equal(d, fx->dev[i]);
        }
        assert_int_equal(N.nvmlDeviceGetHandleByPciBusId_v2("11:00.0", &d), NVML_SUCCESS);
        assert_ptr_equal(d, fx->dev[1]);
        assert_int_equal(N.nvmlDeviceGetHandleByPciBusId_v2("00000000:20:00.0", &d),
                         NVML_ERROR_NOT_FOUND);
        assert_int_equal(N.nvmlDeviceGetHandleByPciBusId_v2("junk", &d),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetHandleByPciBusId_v2("00000000:11:00.0", NULL),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(kerf_sim_gpu_lost(fx->st, 1), 0);
        assert_int_equal(N.nvmlDeviceGetHandleByPciBusId_v2("00000000:11:00.0", &d),
                         NVML_ERROR_GPU_IS_LOST);
}

const struct CMUnitTest nvml_query_tests[] = {
    cmocka_unit_test(test_query_uninitialized),
    cmocka_unit_test_setup_teardown(test_query_identity, nvml_setup, nvml_teardown),
    cmocka_unit_test_setup_teardown(test_query_clocks_power, nvml_setup, nvml_teardown),
    cmocka_unit_test_setup_teardown(test_query_board, nvml_setup, nvml_teardown),
    cmocka_unit_test_setup_teardown(test_query_processes_pairs, nvml_setup, nvml_teardown),
    cmocka_unit_test_setup_teardown(test_query_system, nvml_setup, nvml_teardown),
};
const size_t nvml_query_tests_n = sizeof(nvml_query_tests) / sizeof(nvml_query_tests[0]);
