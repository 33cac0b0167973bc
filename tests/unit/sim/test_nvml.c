/* SPDX-License-Identifier: Apache-2.0 */
/* test_nvml.c - the simulated libnvidia-ml.so.1 through dlopen: init, devices, memory, events */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>

#include "kerf/errno.h"
#include "nvml_test_api.h"
#include "sim_test_util.h"

struct nvml_api N;

static int nvml_load(void)
{
        N.dl = dlopen(KERF_SIM_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
        if (!N.dl)
                return -1;
#define X(n)                                                                                       \
        if (!(N.n = (__typeof__(&n))dlsym(N.dl, #n)))                                              \
                return -1;
        NVML_TEST_FNS(X)
#undef X
        return 0;
}

int nvml_setup(void **state)
{
        struct nvml_fx *fx = calloc(1, sizeof(*fx));
        if (!fx || sim_test_node(fx->dir) < 0 || kerf_sim_open(NULL, &fx->st) < 0)
                return -1;
        if (N.nvmlInit_v2() != NVML_SUCCESS)
                return -1;
        for (unsigned i = 0; i < 3; i++)
                if (N.nvmlDeviceGetHandleByIndex_v2(i, &fx->dev[i]) != NVML_SUCCESS)
                        return -1;
        *state = fx;
        return 0;
}

int nvml_teardown(void **state)
{
        struct nvml_fx *fx = *state;
        while (N.nvmlShutdown() == NVML_SUCCESS)
                ;
        kerf_sim_close(fx->st);
        sim_test_rmdir(fx->dir);
        free(fx);
        return 0;
}

static void test_exports(void **state)
{
        (void)state;
        /* only NVML's names are exported: the simulator's own code stays hidden */
        assert_null(dlsym(N.dl, "kerf_sim_open"));
        assert_null(dlsym(N.dl, "kerf__nvml_enter"));
        assert_null(dlsym(N.dl, "kerf_gpu_model_find"));
        assert_string_equal(N.nvmlErrorString(NVML_SUCCESS), "Success");
        assert_non_null(N.nvmlErrorString(NVML_ERROR_UNKNOWN));
        assert_non_null(N.nvmlErrorString((nvmlReturn_t)12345));
        assert_string_equal(N.nvmlErrorString(NVML_ERROR_GPU_IS_LOST), "GPU is lost");
}

static void test_init_refcount(void **state)
{
        (void)state;
        char dir[64];
        unsigned n;
        nvmlDevice_t d;
        assert_int_equal(N.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetHandleByIndex_v2(0, &d), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
        /* not initialised: UNINITIALIZED comes before any argument check, NULLs included */
        assert_int_equal(N.nvmlDeviceGetCount_v2(NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlSystemGetCudaDriverVersion(NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlSystemGetDriverVersion(NULL, 0), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetHandleByIndex_v2(0, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetGpuInstanceId(NULL, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetComputeInstanceId(NULL, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(NULL, NULL),
                         NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlDeviceGetPciInfo_v3(NULL, NULL), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlEventSetCreate(NULL), NVML_ERROR_UNINITIALIZED);
        /* no simulated node: as if no driver were loaded */
        strcpy(dir, "/tmp/kerf-sim-empty-XXXXXX");
        assert_non_null(mkdtemp(dir));
        setenv(KERF_SIM_ENV, dir, 1);
        assert_int_equal(N.nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
        rmdir(dir);
        assert_int_equal(sim_test_node(dir), 0);
        assert_int_equal(N.nvmlInit_v2(), NVML_SUCCESS);
        assert_int_equal(N.nvmlInit(), NVML_SUCCESS);
        assert_int_equal(N.nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
        assert_int_equal(n, 3);
        assert_int_equal(N.nvmlShutdown(), NVML_SUCCESS);
        assert_int_equal(N.nvmlDeviceGetCount_v2(&n), NVML_SUCCESS); /* one reference left */
        assert_int_equal(N.nvmlShutdown(), NVML_SUCCESS);
        assert_int_equal(N.nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
        assert_int_equal(N.nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
        sim_test_rmdir(dir);
}

static void test_system_and_handles(void **state)
{
        struct nvml_fx *fx = *state;
        char buf[NVML_DEVICE_UUID_V2_BUFFER_SIZE], small[4];
        int cuda;
        unsigned minor;
        nvmlDevice_t d;
        assert_int_equal(N.nvmlSystemGetDriverVersion(buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_equal(buf, "550.54.15");
        assert_int_equal(N.nvmlSystemGetDriverVersion(small, sizeof(small)),
                         NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(N.nvmlSystemGetCudaDriverVersion(&cuda), NVML_SUCCESS);
        assert_int_equal(cuda, 12040);
        assert_int_equal(N.nvmlDeviceGetHandleByIndex_v2(3, &d), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetHandleByIndex_v2(0, NULL), NVML_ERROR_INVALID_ARGUMENT);
        for (unsigned i = 0; i < 3; i++) {
                assert_int_equal(N.nvmlDeviceGetUUID(fx->dev[i], buf, sizeof(buf)), NVML_SUCCESS);
                assert_memory_equal(buf, "GPU-", 4);
                assert_int_equal(N.nvmlDeviceGetHandleByUUID(buf, &d), NVML_SUCCESS);
                assert_ptr_equal(d, fx->dev[i]); /* stable handles */
                assert_int_equal(N.nvmlDeviceGetMinorNumber(fx->dev[i], &minor), NVML_SUCCESS);
                assert_int_equal(minor, i);
        }
        assert_int_equal(N.nvmlDeviceGetUUID(fx->dev[0], small, sizeof(small)),
                         NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(
            N.nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000", &d),
            NVML_ERROR_NOT_FOUND);
        assert_int_equal(N.nvmlDeviceGetHandleByUUID("bogus", &d), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetName(fx->dev[0], buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_equal(buf, "NVIDIA H200");
        assert_int_equal(N.nvmlDeviceGetName(fx->dev[2], buf, sizeof(buf)), NVML_SUCCESS);
        assert_string_equal(buf, "Tesla T4");
        assert_int_equal(N.nvmlDeviceGetName((nvmlDevice_t)buf, buf, sizeof(buf)),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetName(NULL, buf, sizeof(buf)), NVML_ERROR_INVALID_ARGUMENT);
        /* initialised: NULL outputs are INVALID_ARGUMENT */
        assert_int_equal(N.nvmlDeviceGetCount_v2(NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlSystemGetCudaDriverVersion(NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetGpuInstanceId(fx->dev[0], NULL),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(fx->dev[0], NULL),
                         NVML_ERROR_INVALID_ARGUMENT);
}

/* nvmlDeviceGetPciInfo_v3: the model's real PCI device id, a stable made-up bus address. */
static void test_pci_info(void **state)
{
        struct nvml_fx *fx = *state;
        nvmlPciInfo_t p;
        memset(&p, 0xA5, sizeof(p));
        assert_int_equal(N.nvmlDeviceGetPciInfo_v3(fx->dev[0], &p), NVML_SUCCESS);
        assert_int_equal(p.pciDeviceId, kerf_gpu_model_find("H200")->pci_device_id);
        assert_int_equal(p.pciDeviceId & 0xFFFF, 0x10DE); /* NVIDIA's vendor id, low half */
        assert_int_equal(p.domain, 0);
        assert_int_equal(p.bus, 0x10);
        assert_string_equal(p.busId, "00000000:10:00.0");
        assert_string_equal(p.busIdLegacy, "0000:10:00.0");
        assert_int_equal(N.nvmlDeviceGetPciInfo_v3(fx->dev[2], &p), NVML_SUCCESS);
        assert_int_equal(p.pciDeviceId, kerf_gpu_model_find("T4")->pci_device_id);
        assert_string_equal(p.busId, "00000000:12:00.0");
        assert_int_equal(N.nvmlDeviceGetPciInfo_v3(fx->dev[0], NULL), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetPciInfo_v3(NULL, &p), NVML_ERROR_INVALID_ARGUMENT);
        /* a lost GPU answers GPU_IS_LOST and leaves the output alone */
        assert_int_equal(kerf_sim_gpu_lost(fx->st, 1), 0);
        memset(&p, 0, sizeof(p));
        assert_int_equal(N.nvmlDeviceGetPciInfo_v3(fx->dev[1], &p), NVML_ERROR_GPU_IS_LOST);
        assert_int_equal(p.pciDeviceId, 0);
}

static void test_memory(void **state)
{
        struct nvml_fx *fx = *state;
        nvmlMemory_t m;
        nvmlMemory_v2_t m2 = {0};
        const kerf_gpu_model *h200 = kerf_gpu_model_find("H200");
        assert_int_equal(N.nvmlDeviceGetMemoryInfo(fx->dev[1], &m), NVML_SUCCESS);
        assert_int_equal(m.total, h200->mem_bytes);
        assert_int_equal(m.used, 0);
        assert_int_equal(m.free, m.total);
        assert_int_equal(
            kerf_sim_mem_charge(fx->st, getpid(), (kerf_sim_target){1, -1, -1}, 3 * KERF_GIB), 0);
        assert_int_equal(N.nvmlDeviceGetMemoryInfo(fx->dev[1], &m), NVML_SUCCESS);
        assert_int_equal(m.used, 3 * KERF_GIB);
        assert_int_equal(m.free, m.total - 3 * KERF_GIB);
        assert_int_equal(N.nvmlDeviceGetMemoryInfo_v2(fx->dev[1], &m2),
                         NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        m2.version = nvmlMemory_v2;
        assert_int_equal(N.nvmlDeviceGetMemoryInfo_v2(fx->dev[1], &m2), NVML_SUCCESS);
        assert_int_equal(m2.used, 3 * KERF_GIB);
        assert_int_equal(m2.total, h200->mem_bytes);
        assert_int_equal(m2.reserved + m2.free + m2.used, m2.total);
        assert_int_equal(N.nvmlDeviceGetMemoryInfo(fx->dev[1], NULL), NVML_ERROR_INVALID_ARGUMENT);
}

static void test_processes_and_util(void **state)
{
        struct nvml_fx *fx = *state;
        kerf_sim_target g1 = {1, -1, -1};
        nvmlProcessInfo_t pi[4];
        nvmlProcessInfo_v1_t p1[4];
        nvmlProcessUtilizationSample_t us[4];
        nvmlUtilization_t u;
        unsigned n = 0;
        assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses_v3(fx->dev[1], &n, NULL),
                         NVML_SUCCESS);
        assert_int_equal(n, 0);
        assert_int_equal(kerf_sim_mem_charge(fx->st, getpid(), g1, KERF_GIB), 0);
        assert_int_equal(kerf_sim_mem_charge(fx->st, getppid(), g1, 2 * KERF_GIB), 0);
        n = 0;
        assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses_v3(fx->dev[1], &n, pi),
                         NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(n, 2);
        n = 4;
        assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses_v3(fx->dev[1], &n, pi),
                         NVML_SUCCESS);
        assert_int_equal(n, 2);
        assert_int_equal(pi[0].usedGpuMemory + pi[1].usedGpuMemory, 3 * KERF_GIB);
        assert_int_equal(pi[0].gpuInstanceId, 0xFFFFFFFFu);
        n = 4;
        assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses_v2(fx->dev[1], &n, pi),
                         NVML_SUCCESS);
        assert_int_equal(n, 2);
        n = 4;
        assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses(fx->dev[1], &n, p1), NVML_SUCCESS);
        assert_int_equal(p1[0].usedGpuMemory + p1[1].usedGpuMemory, 3 * KERF_GIB);
        assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses_v3(fx->dev[1], NULL, pi),
                         NVML_ERROR_INVALID_ARGUMENT);

        /* utilisation: not on MIG-enabled GPUs; elsewhere from the engine-time counters */
        assert_int_equal(N.nvmlDeviceGetUtilizationRates(fx->dev[0], &u), NVML_ERROR_NOT_SUPPORTED);
        n = 4;
        assert_int_equal(N.nvmlDeviceGetProcessUtilization(fx->dev[0], us, &n, 0),
                         NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(N.nvmlDeviceGetProcessUtilization(fx->dev[1], us, &n, 0),
                         NVML_ERROR_NOT_FOUND); /* no engine activity yet */
        struct timespec d = {0, 300000000L};
        nanosleep(&d, NULL);
        assert_int_equal(kerf_sim_engine_account(fx->st, getpid(), g1, 150000000ULL), 0);
        n = 0;
        assert_int_equal(N.nvmlDeviceGetProcessUtilization(fx->dev[1], NULL, &n, 0),
                         NVML_ERROR_INSUFFICIENT_SIZE);
        assert_int_equal(n, 1);
        assert_int_equal(N.nvmlDeviceGetProcessUtilization(fx->dev[1], us, &n, 0), NVML_SUCCESS);
        assert_int_equal(us[0].pid, (unsigned)getpid());
        assert_int_equal(us[0].smUtil, 15); /* 150 ms in the 1 s sample period before it */
        assert_true(us[0].timeStamp > 0 && us[0].timeStamp <= kerf_sim_now_us());
        n = 4;
        assert_int_equal(N.nvmlDeviceGetProcessUtilization(fx->dev[1], us, &n, us[0].timeStamp),
                         NVML_ERROR_NOT_FOUND);
        assert_int_equal(N.nvmlDeviceGetUtilizationRates(fx->dev[1], &u), NVML_SUCCESS);
        assert_true(u.gpu >= 14 && u.gpu <= 16);
        assert_int_equal(N.nvmlDeviceGetUtilizationRates(fx->dev[2], &u), NVML_SUCCESS);
        assert_int_equal(u.gpu, 0);
}

static void test_temperature_power(void **state)
{
        struct nvml_fx *fx = *state;
        unsigned t, p;
        nvmlTemperature_t tv = {0};
        assert_int_equal(N.nvmlDeviceGetTemperature(fx->dev[1], NVML_TEMPERATURE_GPU, &t),
                         NVML_SUCCESS);
        assert_true(t >= 25 && t <= 90);
        assert_int_equal(N.nvmlDeviceGetTemperature(fx->dev[1], NVML_TEMPERATURE_COUNT, &t),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetTemperatureV(fx->dev[1], &tv),
                         NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        tv.version = nvmlTemperature_v1;
        assert_int_equal(N.nvmlDeviceGetTemperatureV(fx->dev[1], &tv), NVML_SUCCESS);
        assert_int_equal((unsigned)tv.temperature, t);
        assert_int_equal(N.nvmlDeviceGetPowerUsage(fx->dev[1], &p), NVML_SUCCESS);
        assert_true(p >= 50000 && p <= 700000); /* mW, within the H200's 700 W */
}

static void test_events(void **state)
{
        struct nvml_fx *fx = *state;
        nvmlEventSet_t set;
        nvmlEventData_t ev;
        unsigned long long types;
        nvmlMemory_t m;
        assert_int_equal(N.nvmlEventSetCreate(&set), NVML_SUCCESS);
        assert_int_equal(N.nvmlDeviceGetSupportedEventTypes(fx->dev[0], &types), NVML_SUCCESS);
        assert_int_equal(types & nvmlEventTypeXidCriticalError, nvmlEventTypeXidCriticalError);
        /* an XID from before registration is not seen */
        assert_true(kerf_sim_xid_inject(fx->st, 0, 13, -1, -1) > 0);
        assert_int_equal(N.nvmlDeviceRegisterEvents(fx->dev[0], nvmlEventTypePState, set),
                         NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(N.nvmlDeviceRegisterEvents(fx->dev[0], nvmlEventTypeXidCriticalError, set),
                         NVML_SUCCESS);
        assert_int_equal(N.nvmlDeviceRegisterEvents(fx->dev[1], nvmlEventTypeXidCriticalError, set),
                         NVML_SUCCESS);
        assert_int_equal(N.nvmlEventSetWait_v2(set, &ev, 0), NVML_ERROR_TIMEOUT);
        /* another process injects while we wait */
        pid_t c = fork();
        if (c == 0) {
                kerf_sim *st = NULL;
                struct timespec d = {0, 100000000L};
                nanosleep(&d, NULL);
                _exit(kerf_sim_open(NULL, &st) == 0 && kerf_sim_xid_inject(st, 1, 48, -1, -1) > 0
                          ? 0
                          : 1);
        }
        assert_int_equal(N.nvmlEventSetWait_v2(set, &ev, 5000), NVML_SUCCESS);
        waitpid(c, NULL, 0);
        assert_ptr_equal(ev.device, fx->dev[1]);
        assert_int_equal(ev.eventType, nvmlEventTypeXidCriticalError);
        assert_int_equal(ev.eventData, 48);
        assert_int_equal(ev.gpuInstanceId, 0xFFFFFFFFu);
        assert_int_equal(ev.computeInstanceId, 0xFFFFFFFFu);
        /* attributed to a MIG instance */
        unsigned gi, ci;
        assert_int_equal(kerf_sim_gi_create(fx->st, 0, 9, 0, &gi), 0);
        assert_int_equal(kerf_sim_ci_create(fx->st, 0, gi, 2, &ci), 0);
        assert_true(kerf_sim_xid_inject(fx->st, 0, 94, (int)gi, (int)ci) > 0);
        assert_int_equal(N.nvmlEventSetWait(set, &ev, 1000), NVML_SUCCESS);
        assert_ptr_equal(ev.device, fx->dev[0]);
        assert_int_equal(ev.eventData, 94);
        assert_int_equal(ev.gpuInstanceId, gi);
        assert_int_equal(ev.computeInstanceId, ci);
        assert_int_equal(N.nvmlEventSetWait_v2(set, &ev, 10), NVML_ERROR_TIMEOUT);
        /* GPU lost, registered for XIDs only: waits answer GPU_IS_LOST */
        assert_int_equal(kerf_sim_gpu_lost(fx->st, 1), 0);
        assert_int_equal(N.nvmlEventSetWait_v2(set, &ev, 1000), NVML_ERROR_GPU_IS_LOST);
        assert_int_equal(N.nvmlDeviceGetMemoryInfo(fx->dev[1], &m), NVML_ERROR_GPU_IS_LOST);
        assert_int_equal(kerf_sim_gpu_reset(fx->st, 1, false), 0);
        assert_int_equal(N.nvmlDeviceGetMemoryInfo(fx->dev[1], &m), NVML_SUCCESS);
        /* registered for GpuUnavailableError: one event per loss, then GPU_IS_LOST */
        assert_int_equal(types & nvmlEventTypeGpuUnavailableError,
                         nvmlEventTypeGpuUnavailableError);
        assert_int_equal(
            N.nvmlDeviceRegisterEvents(fx->dev[1], nvmlEventTypeGpuUnavailableError, set),
            NVML_SUCCESS);
        assert_int_equal(N.nvmlEventSetWait_v2(set, &ev, 0), NVML_ERROR_TIMEOUT);
        for (int loss = 0; loss < 2; loss++) {
                assert_int_equal(kerf_sim_gpu_lost(fx->st, 1), 0);
                memset(&ev, 0, sizeof(ev));
                assert_int_equal(N.nvmlEventSetWait_v2(set, &ev, 1000), NVML_SUCCESS);
                assert_ptr_equal(ev.device, fx->dev[1]);
                assert_int_equal(ev.eventType, nvmlEventTypeGpuUnavailableError);
                assert_int_equal(ev.gpuInstanceId, 0xFFFFFFFFu);
                assert_int_equal(N.nvmlEventSetWait_v2(set, &ev, 10), NVML_ERROR_GPU_IS_LOST);
                assert_int_equal(kerf_sim_gpu_reset(fx->st, 1, false), 0);
                assert_int_equal(N.nvmlEventSetWait_v2(set, &ev, 0), NVML_ERROR_TIMEOUT);
        }
        assert_int_equal(N.nvmlEventSetFree(set), NVML_SUCCESS);
        assert_int_equal(N.nvmlEventSetCreate(NULL), NVML_ERROR_INVALID_ARGUMENT);
}

static void test_mig_mode(void **state)
{
        struct nvml_fx *fx = *state;
        unsigned cur, pend;
        nvmlReturn_t act = NVML_ERROR_UNKNOWN;
        assert_int_equal(N.nvmlDeviceGetMigMode(fx->dev[0], &cur, &pend), NVML_SUCCESS);
        assert_int_equal(cur, NVML_DEVICE_MIG_ENABLE);
        assert_int_equal(N.nvmlDeviceGetMigMode(fx->dev[1], &cur, &pend), NVML_SUCCESS);
        assert_int_equal(cur, NVML_DEVICE_MIG_DISABLE);
        assert_int_equal(N.nvmlDeviceGetMigMode(fx->dev[2], &cur, &pend), NVML_ERROR_NOT_SUPPORTED);
        unsetenv("KERF_SIM_ALLOW_MIG_MODE");
        assert_int_equal(N.nvmlDeviceSetMigMode(fx->dev[1], 1, &act), NVML_ERROR_NO_PERMISSION);
        setenv("KERF_SIM_ALLOW_MIG_MODE", "1", 1);
        assert_int_equal(kerf_sim_proc_attach(fx->st, getpid(), (kerf_sim_target){1, -1, -1}), 0);
        assert_int_equal(N.nvmlDeviceSetMigMode(fx->dev[1], 1, &act), NVML_ERROR_IN_USE);
        assert_int_equal(act, NVML_ERROR_IN_USE);
        assert_int_equal(kerf_sim_proc_detach_all(fx->st, getpid()), 1);
        assert_int_equal(N.nvmlDeviceSetMigMode(fx->dev[1], 1, &act), NVML_SUCCESS);
        assert_int_equal(act, NVML_SUCCESS);
        assert_int_equal(N.nvmlDeviceGetMigMode(fx->dev[1], &cur, &pend), NVML_SUCCESS);
        assert_int_equal(cur, NVML_DEVICE_MIG_ENABLE);
        assert_int_equal(N.nvmlDeviceSetMigMode(fx->dev[1], 2, &act), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceSetMigMode(fx->dev[2], 1, &act), NVML_ERROR_NOT_SUPPORTED);
        unsetenv("KERF_SIM_ALLOW_MIG_MODE");
}

int main(void)
{
        if (nvml_load() < 0) {
                fprintf(stderr, "cannot load %s: %s\n", KERF_SIM_NVML_PATH, dlerror());
                return 1;
        }
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_exports),
            cmocka_unit_test(test_init_refcount),
            cmocka_unit_test_setup_teardown(test_pci_info, nvml_setup, nvml_teardown),
            cmocka_unit_test_setup_teardown(test_system_and_handles, nvml_setup, nvml_teardown),
            cmocka_unit_test_setup_teardown(test_memory, nvml_setup, nvml_teardown),
            cmocka_unit_test_setup_teardown(test_processes_and_util, nvml_setup, nvml_teardown),
            cmocka_unit_test_setup_teardown(test_temperature_power, nvml_setup, nvml_teardown),
            cmocka_unit_test_setup_teardown(test_events, nvml_setup, nvml_teardown),
            cmocka_unit_test_setup_teardown(test_mig_mode, nvml_setup, nvml_teardown),
        };
        int fails = cmocka_run_group_tests_name("nvml", tests, NULL, NULL);
        fails += _cmocka_run_group_tests("nvml_mig", nvml_mig_tests, nvml_mig_tests_n, NULL, NULL);
        fails +=
            _cmocka_run_group_tests("nvml_query", nvml_query_tests, nvml_query_tests_n, NULL, NULL);
        return fails;
}
