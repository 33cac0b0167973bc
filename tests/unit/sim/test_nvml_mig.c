/* SPDX-License-Identifier: Apache-2.0 */
/* test_nvml_mig.c - MIG lifecycle through the simulated NVML ABI (H200 tables and placements) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kerf/errno.h"
#include "nvml_test_api.h"
#include "sim_test_util.h"

static void test_profiles(void **state)
{
        struct nvml_fx *fx = *state;
        /* NVML index -> driver id on H200 (GPU-REFERENCE §1.1) */
        static const struct {
                unsigned idx, id, slices;
                const char *name;
        } want[] = {{0x0, 19, 1, "1g.18gb"}, {0x7, 20, 1, "1g.18gb+me"}, {0x9, 15, 1, "1g.35gb"},
                    {0x1, 14, 2, "2g.35gb"}, {0x2, 9, 3, "3g.71gb"},     {0x3, 5, 4, "4g.71gb"},
                    {0x4, 0, 7, "7g.141gb"}};
        nvmlGpuInstanceProfileInfo_t info;
        nvmlGpuInstanceProfileInfo_v2_t v2;
        unsigned ok = 0;
        for (unsigned i = 0; i < NVML_GPU_INSTANCE_PROFILE_COUNT; i++) {
                nvmlReturn_t r = N.nvmlDeviceGetGpuInstanceProfileInfo(fx->dev[0], i, &info);
                bool known = false;
                for (unsigned k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
                        if (want[k].idx != i)
                                continue;
                        known = true;
                        assert_int_equal(r, NVML_SUCCESS);
                        assert_int_equal(info.id, want[k].id);
                        assert_int_equal(info.sliceCount, want[k].slices);
                        memset(&v2, 0, sizeof(v2));
                        v2.version = nvmlGpuInstanceProfileInfo_v2;
                        assert_int_equal(N.nvmlDeviceGetGpuInstanceProfileInfoV(fx->dev[0], i, &v2),
                                         NVML_SUCCESS);
                        assert_string_equal(v2.name, want[k].name);
                        assert_int_equal(v2.memorySizeMB, info.memorySizeMB);
                        ok++;
                }
                if (!known)
                        assert_int_equal(r, NVML_ERROR_NOT_SUPPORTED);
        }
        assert_int_equal(ok, 7);
        assert_int_equal(N.nvmlDeviceGetGpuInstanceProfileInfo(
                             fx->dev[0], NVML_GPU_INSTANCE_PROFILE_COUNT, &info),
                         NVML_ERROR_INVALID_ARGUMENT);
        nvmlGpuInstanceProfileInfo_v3_t v3 = {.version = nvmlGpuInstanceProfileInfo_v3};
        assert_int_equal(N.nvmlDeviceGetGpuInstanceProfileInfoV(
                             fx->dev[0], 2, (nvmlGpuInstanceProfileInfo_v2_t *)&v3),
                         NVML_SUCCESS);
        assert_int_equal(v3.id, 9);
        assert_int_equal(v3.sliceCount, 3);
        assert_string_equal(v3.name, "3g.71gb");
        v2.version = 1;
        assert_int_equal(N.nvmlDeviceGetGpuInstanceProfileInfoV(fx->dev[0], 2, &v2),
                         NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        assert_int_equal(N.nvmlDeviceGetGpuInstanceProfileInfo(fx->dev[2], 0, &info),
                         NVML_ERROR_NOT_SUPPORTED); /* T4 */
}

static void test_placements(void **state)
{
        struct nvml_fx *fx = *state;
        /* GPU-REFERENCE §1.2: profile id, size, valid starts (bit mask) */
        static const struct {
                unsigned id, size, starts;
        } want[] = {{19, 1, 0x7f}, {20, 1, 0x7f}, {15, 2, 0x55}, {14, 2, 0x15},
                    {9, 4, 0x11},  {5, 4, 0x01},  {0, 8, 0x01}};
        nvmlGpuInstancePlacement_t pl[8];
        for (unsigned k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
                unsigned n = 0, mask = 0;
                assert_int_equal(N.nvmlDeviceGetGpuInstancePossiblePlacements_v2(
                                     fx->dev[0], want[k].id, NULL, &n),
                                 NVML_SUCCESS);
                assert_int_equal(n, (unsigned)__builtin_popcount(want[k].starts));
                if (n > 1) {
                        unsigned small = 1;
                        assert_int_equal(N.nvmlDeviceGetGpuInstancePossiblePlacements_v2(
                                             fx->dev[0], want[k].id, pl, &small),
                                         NVML_ERROR_INSUFFICIENT_SIZE);
                        assert_int_equal(small, n);
                }
                assert_int_equal(
                    N.nvmlDeviceGetGpuInstancePossiblePlacements_v2(fx->dev[0], want[k].id, pl, &n),
                    NVML_SUCCESS);
                for (unsigned i = 0; i < n; i++) {
                        assert_int_equal(pl[i].size, want[k].size);
                        mask |= 1u << pl[i].start;
                }
                assert_int_equal(mask, want[k].starts);
        }
        unsigned n = 8;
        assert_int_equal(N.nvmlDeviceGetGpuInstancePossiblePlacements_v2(fx->dev[0], 77, pl, &n),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetGpuInstancePossiblePlacements_v2(fx->dev[1], 9, pl, &n),
                         NVML_ERROR_NOT_SUPPORTED); /* MIG off */
}

static void test_lifecycle(void **state)
{
        struct nvml_fx *fx = *state;
        nvmlGpuInstance_t gi, gi2, list[7];
        nvmlComputeInstance_t ci, cis[7];
        nvmlGpuInstancePlacement_t pl = {4, 4};
        nvmlGpuInstanceInfo_t ginfo;
        nvmlComputeInstanceInfo_t cinfo;
        unsigned n, rem;

        assert_int_equal(N.nvmlDeviceCreateGpuInstanceWithPlacement(fx->dev[0], 9, &pl, &gi),
                         NVML_SUCCESS);
        assert_int_equal(N.nvmlDeviceCreateGpuInstanceWithPlacement(fx->dev[0], 9, &pl, &gi2),
                         NVML_ERROR_INSUFFICIENT_RESOURCES);
        nvmlGpuInstancePlacement_t bad = {2, 4}, badsize = {0, 2};
        assert_int_equal(N.nvmlDeviceCreateGpuInstanceWithPlacement(fx->dev[0], 9, &bad, &gi2),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceCreateGpuInstanceWithPlacement(fx->dev[0], 9, &badsize, &gi2),
                         NVML_ERROR_INVALID_ARGUMENT);
        nvmlGpuInstancePlacement_t over = {4, 2};
        assert_int_equal(N.nvmlDeviceCreateGpuInstanceWithPlacement(fx->dev[0], 14, &over, &gi2),
                         NVML_ERROR_INSUFFICIENT_RESOURCES);
        assert_int_equal(N.nvmlDeviceGetGpuInstanceRemainingCapacity(fx->dev[0], 9, &rem),
                         NVML_SUCCESS);
        assert_int_equal(rem, 1);
        assert_int_equal(N.nvmlDeviceGetGpuInstanceRemainingCapacity(fx->dev[0], 0, &rem),
                         NVML_SUCCESS);
        assert_int_equal(rem, 0);
        assert_int_equal(N.nvmlDeviceGetGpuInstanceRemainingCapacity(fx->dev[0], 19, &rem),
                         NVML_SUCCESS);
        assert_int_equal(rem, 4);
        assert_int_equal(N.nvmlGpuInstanceGetInfo(gi, &ginfo), NVML_SUCCESS);
        assert_ptr_equal(ginfo.device, fx->dev[0]);
        assert_int_equal(ginfo.profileId, 9);
        assert_int_equal(ginfo.placement.start, 4);
        assert_int_equal(ginfo.placement.size, 4);
        assert_int_equal(N.nvmlDeviceGetGpuInstances(fx->dev[0], 9, list, &n), NVML_SUCCESS);
        assert_int_equal(n, 1);
        assert_ptr_equal(list[0], gi);
        assert_int_equal(N.nvmlDeviceGetGpuInstanceById(fx->dev[0], ginfo.id, &gi2), NVML_SUCCESS);
        assert_ptr_equal(gi2, gi);
        assert_int_equal(N.nvmlDeviceGetGpuInstanceById(fx->dev[0], 13, &gi2),
                         NVML_ERROR_NOT_FOUND);

        /* compute instances */
        nvmlComputeInstanceProfileInfo_t cp;
        nvmlComputeInstanceProfileInfo_v2_t cp2 = {.version = nvmlComputeInstanceProfileInfo_v2};
        assert_int_equal(N.nvmlGpuInstanceGetComputeInstanceProfileInfo(gi, 2, 0, &cp),
                         NVML_SUCCESS);
        assert_int_equal(cp.sliceCount, 3);
        assert_int_equal(cp.instanceCount, 1);
        assert_int_equal(N.nvmlGpuInstanceGetComputeInstanceProfileInfo(gi, 0, 0, &cp),
                         NVML_SUCCESS);
        assert_int_equal(cp.instanceCount, 3);
        assert_int_equal(N.nvmlGpuInstanceGetComputeInstanceProfileInfo(gi, 4, 0, &cp),
                         NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(N.nvmlGpuInstanceGetComputeInstanceProfileInfo(gi, 9, 0, &cp),
                         NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlGpuInstanceGetComputeInstanceProfileInfoV(gi, 2, 0, &cp2),
                         NVML_SUCCESS);
        assert_string_equal(cp2.name, "3g.71gb");
        cp2.version = 0;
        assert_int_equal(N.nvmlGpuInstanceGetComputeInstanceProfileInfoV(gi, 2, 0, &cp2),
                         NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
        assert_int_equal(N.nvmlGpuInstanceCreateComputeInstance(gi, 2, &ci), NVML_SUCCESS);
        assert_int_equal(N.nvmlGpuInstanceCreateComputeInstance(gi, 2, cis),
                         NVML_ERROR_INSUFFICIENT_RESOURCES);
        assert_int_equal(N.nvmlGpuInstanceGetComputeInstances(gi, 2, cis, &n), NVML_SUCCESS);
        assert_int_equal(n, 1);
        assert_ptr_equal(cis[0], ci);
        assert_int_equal(N.nvmlComputeInstanceGetInfo_v2(ci, &cinfo), NVML_SUCCESS);
        assert_ptr_equal(cinfo.device, fx->dev[0]);
        assert_ptr_equal(cinfo.gpuInstance, gi);
        assert_int_equal(cinfo.profileId, 2);
        assert_int_equal(cinfo.placement.size, 3);

        /* MIG device handles */
        nvmlDevice_t mig, mig2, parent;
        unsigned isMig, id, cnt;
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE], uuid2[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        assert_int_equal(N.nvmlDeviceGetMaxMigDeviceCount(fx->dev[0], &cnt), NVML_SUCCESS);
        assert_int_equal(cnt, 7);
        assert_int_equal(N.nvmlDeviceGetMaxMigDeviceCount(fx->dev[1], &cnt), NVML_SUCCESS);
        assert_int_equal(cnt, 0);
        assert_int_equal(N.nvmlDeviceGetMigDeviceHandleByIndex(fx->dev[0], 0, &mig), NVML_SUCCESS);
        assert_int_equal(N.nvmlDeviceGetMigDeviceHandleByIndex(fx->dev[0], 1, &mig2),
                         NVML_ERROR_NOT_FOUND);
        assert_int_equal(N.nvmlDeviceIsMigDeviceHandle(mig, &isMig), NVML_SUCCESS);
        assert_int_equal(isMig, 1);
        assert_int_equal(N.nvmlDeviceIsMigDeviceHandle(fx->dev[0], &isMig), NVML_SUCCESS);
        assert_int_equal(isMig, 0);
        assert_int_equal(N.nvmlDeviceGetGpuInstanceId(mig, &id), NVML_SUCCESS);
        assert_int_equal(id, ginfo.id);
        assert_int_equal(N.nvmlDeviceGetComputeInstanceId(mig, &id), NVML_SUCCESS);
        assert_int_equal(id, cinfo.id);
        assert_int_equal(N.nvmlDeviceGetGpuInstanceId(fx->dev[0], &id), NVML_ERROR_NOT_SUPPORTED);
        assert_int_equal(N.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(mig, &parent),
                         NVML_SUCCESS);
        assert_ptr_equal(parent, fx->dev[0]);
        assert_int_equal(N.nvmlDeviceGetUUID(mig, uuid, sizeof(uuid)), NVML_SUCCESS);
        assert_memory_equal(uuid, "MIG-", 4);
        assert_int_equal(N.nvmlDeviceGetHandleByUUID(uuid, &mig2), NVML_SUCCESS);
        assert_ptr_equal(mig2, mig);
        assert_int_equal(N.nvmlDeviceGetName(mig, uuid2, sizeof(uuid2)), NVML_SUCCESS);
        assert_string_equal(uuid2, "NVIDIA H200 MIG 3g.71gb");
        nvmlMemory_t m;
        assert_int_equal(N.nvmlDeviceGetMemoryInfo(mig, &m), NVML_SUCCESS);
        assert_int_equal(m.total, 71168ULL * KERF_MIB);

        /* a process on the MIG device blocks destroy */
        kerf_sim_target t;
        assert_int_equal(kerf_sim_resolve(fx->st, uuid, &t), 0);
        assert_int_equal(kerf_sim_mem_charge(fx->st, getpid(), t, KERF_GIB), 0);
        nvmlProcessInfo_t pi[2];
        n = 2;
        assert_int_equal(N.nvmlDeviceGetComputeRunningProcesses_v3(mig, &n, pi), NVML_SUCCESS);
        assert_int_equal(n, 1);
        assert_int_equal(pi[0].gpuInstanceId, ginfo.id);
        assert_int_equal(pi[0].computeInstanceId, cinfo.id);
        assert_int_equal(N.nvmlDeviceGetMemoryInfo(mig, &m), NVML_SUCCESS);
        assert_int_equal(m.used, KERF_GIB);
        assert_int_equal(N.nvmlGpuInstanceDestroy(gi), NVML_ERROR_IN_USE);     /* CI exists */
        assert_int_equal(N.nvmlComputeInstanceDestroy(ci), NVML_ERROR_IN_USE); /* process */
        assert_int_equal(kerf_sim_proc_detach_all(fx->st, getpid()), 1);
        assert_int_equal(N.nvmlComputeInstanceDestroy(ci), NVML_SUCCESS);
        assert_int_equal(N.nvmlComputeInstanceGetInfo_v2(ci, &cinfo), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetUUID(mig, uuid2, sizeof(uuid2)),
                         NVML_ERROR_INVALID_ARGUMENT); /* stale MIG device */
        assert_int_equal(N.nvmlGpuInstanceDestroy(gi), NVML_SUCCESS);
        assert_int_equal(N.nvmlGpuInstanceGetInfo(gi, &ginfo), NVML_ERROR_INVALID_ARGUMENT);
        assert_int_equal(N.nvmlDeviceGetGpuInstances(fx->dev[0], 9, list, &n), NVML_SUCCESS);
        assert_int_equal(n, 0);

        /* re-create: same place, a new MIG uuid */
        assert_int_equal(N.nvmlDeviceCreateGpuInstanceWithPlacement(fx->dev[0], 9, &pl, &gi),
                         NVML_SUCCESS);
        assert_int_equal(N.nvmlGpuInstanceCreateComputeInstance(gi, 2, &ci), NVML_SUCCESS);
        assert_int_equal(N.nvmlDeviceGetMigDeviceHandleByIndex(fx->dev[0], 0, &mig), NVML_SUCCESS);
        assert_int_equal(N.nvmlDeviceGetUUID(mig, uuid2, sizeof(uuid2)), NVML_SUCCESS);
        assert_string_not_equal(uuid, uuid2);

        /* without placement: first free valid start */
        assert_int_equal(N.nvmlDeviceCreateGpuInstance(fx->dev[0], 14, &gi2), NVML_SUCCESS);
        assert_int_equal(N.nvmlGpuInstanceGetInfo(gi2, &ginfo), NVML_SUCCESS);
        assert_int_equal(ginfo.placement.start, 0);
        assert_int_equal(N.nvmlDeviceCreateGpuInstance(fx->dev[0], 14, &gi2), NVML_SUCCESS);
        assert_int_equal(N.nvmlGpuInstanceGetInfo(gi2, &ginfo), NVML_SUCCESS);
        assert_int_equal(ginfo.placement.start, 2);
        assert_int_equal(N.nvmlDeviceCreateGpuInstance(fx->dev[0], 14, &gi2),
                         NVML_ERROR_INSUFFICIENT_RESOURCES);
        assert_int_equal(N.nvmlDeviceCreateGpuInstance(fx->dev[0], 0, &gi2),
                         NVML_ERROR_INSUFFICIENT_RESOURCES);
        assert_int_equal(N.nvmlDeviceCreateGpuInstance(fx->dev[1], 14, &gi2),
                         NVML_ERROR_NOT_SUPPORTED); /* MIG off */
}

static void test_seven_1g(void **state)
{
        struct nvml_fx *fx = *state;
        nvmlGpuInstance_t gi;
        nvmlComputeInstance_t ci;
        unsigned rem;
        for (unsigned i = 0; i < 7; i++) {
                assert_int_equal(N.nvmlDeviceCreateGpuInstance(fx->dev[0], 19, &gi), NVML_SUCCESS);
                assert_int_equal(N.nvmlGpuInstanceCreateComputeInstance(gi, 0, &ci), NVML_SUCCESS);
        }
        assert_int_equal(N.nvmlDeviceCreateGpuInstance(fx->dev[0], 19, &gi),
                         NVML_ERROR_INSUFFICIENT_RESOURCES);
        assert_int_equal(N.nvmlDeviceGetGpuInstanceRemainingCapacity(fx->dev[0], 20, &rem),
                         NVML_SUCCESS);
        assert_int_equal(rem, 0);
        nvmlDevice_t mig;
        for (unsigned i = 0; i < 7; i++)
                assert_int_equal(N.nvmlDeviceGetMigDeviceHandleByIndex(fx->dev[0], i, &mig),
                                 NVML_SUCCESS);
        assert_int_equal(N.nvmlDeviceGetMigDeviceHandleByIndex(fx->dev[0], 7, &mig),
                         NVML_ERROR_INVALID_ARGUMENT);
}

const struct CMUnitTest nvml_mig_tests[] = {
    cmocka_unit_test_setup_teardown(test_profiles, nvml_setup, nvml_teardown),
    cmocka_unit_test_setup_teardown(test_placements, nvml_setup, nvml_teardown),
    cmocka_unit_test_setup_teardown(test_lifecycle, nvml_setup, nvml_teardown),
    cmocka_unit_test_setup_teardown(test_seven_1g, nvml_setup, nvml_teardown),
};
const size_t nvml_mig_tests_n = sizeof(nvml_mig_tests) / sizeof(nvml_mig_tests[0]);
