/* SPDX-License-Identifier: Apache-2.0 */
/* test_nvml.c - NVML backend against the simulated libnvidia-ml.so.1: discovery, versions, MIG
 * lifecycle (create, assign, IN_USE refusal, destroy, re-create, conflict), safety, fallbacks */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "backend_test_util.h"
#include "kerf/errno.h"

static int setup(void **state)
{
        static bt t;
        if (bt_setup(&t, KERF_TEST_NVML, false) < 0)
                return -1;
        *state = &t;
        return 0;
}

static int teardown(void **state)
{
        bt_teardown(*state);
        return 0;
}

static void test_discovery(void **state)
{
        bt *t = *state;
        kerf_backend_gpu g;
        assert_string_equal(kerf_backend_name(t->b), "nvml");
        assert_int_equal(kerf_backend_gpu_count(t->b), 3);
        assert_int_equal(kerf_backend_gpu_get(t->b, 0, &g), 0);
        assert_int_equal(g.index, 0);
        assert_string_equal(g.uuid, t->fleet->gpus[0].uuid);
        assert_non_null(g.model);
        assert_ptr_equal(g.model, kerf_gpu_model_find("H200"));
        assert_true(g.mig_capable && g.mig_current);
        assert_false(g.lost);
        assert_true(g.mem_total > 100 * KERF_GIB);
        assert_int_equal(kerf_backend_gpu_get(t->b, 1, &g), 0);
        assert_false(g.mig_current);
        assert_int_equal(g.minor, 1);
        assert_int_equal(kerf_backend_gpu_get(t->b, 2, &g), 0);
        assert_ptr_equal(g.model, kerf_gpu_model_find("T4"));
        assert_false(g.mig_current);
        assert_int_equal(kerf_backend_gpu_get(t->b, 3, &g), -EINVAL);
        assert_non_null(strstr(kerf_backend_errmsg(t->b), "out of range"));
        assert_int_equal(kerf_backend_gpu_find(t->b, t->fleet->gpus[2].uuid), 2);
        assert_int_equal(kerf_backend_gpu_find(t->b, "GPU-nope"), -ENOENT);
}

static void test_versions_and_upgrade(void **state)
{
        bt *t = *state;
        kerf_backend_versions v;
        assert_int_equal(kerf_backend_versions_get(t->b, &v), 0);
        assert_string_equal(v.backend, "nvml");
        assert_string_equal(v.driver, "550.54.15");
        assert_int_equal(v.cuda_version, 12040);
        assert_false(v.fallback_used);
        assert_string_equal(v.library, KERF_TEST_NVML);
        /* A simulated driver upgrade is visible to the running backend. */
        assert_int_equal(bt_cli(t, "upgrade --driver 560.35.03 --cuda 12.6"), 0);
        assert_int_equal(kerf_backend_versions_get(t->b, &v), 0);
        assert_string_equal(v.driver, "560.35.03");
        assert_int_equal(v.cuda_version, 12060);
        /* Unit identities survive it. */
        kerf_backend_gpu g;
        assert_int_equal(kerf_backend_gpu_get(t->b, 0, &g), 0);
        assert_string_equal(g.uuid, t->fleet->gpus[0].uuid);
}

static void test_create_list(void **state)
{
        bt *t = *state;
        kerf_backend_mig m, l[8];
        kerf_sim_gi_info gi;
        assert_int_equal(kerf_backend_mig_list(t->b, 0, l, 8), 0);
        assert_int_equal(kerf_backend_mig_create(t->b, 0, P_3G, 4, &m), 0);
        assert_int_equal(m.gpu, 0);
        assert_int_equal(m.profile_id, P_3G);
        assert_int_equal(m.start, 4);
        assert_int_equal(m.size, 4);
        assert_string_equal(m.profile_name, "3g.71gb");
        assert_int_not_equal(m.ci_id, KERF_BACKEND_NO_ID);
        assert_int_equal(strncmp(m.uuid, "MIG-", 4), 0);
        assert_true(m.mem_total > 60 * KERF_GIB);
        /* the simulated state agrees */
        assert_int_equal(kerf_sim_gi_get(t->st, 0, m.gi_id, &gi), 0);
        assert_int_equal(gi.start, 4);
        assert_int_equal(gi.n_cis, 1);
        assert_string_equal(gi.cis[0].uuid, m.uuid);
        assert_int_equal(kerf_backend_mig_create(t->b, 0, P_1G, 0, NULL), 0);
        assert_int_equal(kerf_backend_mig_list(t->b, 0, l, 8), 2);
        assert_true(l[0].gi_id < l[1].gi_id);
        /* MIG off / non-MIG GPUs */
        assert_int_equal(kerf_backend_mig_create(t->b, 1, P_1G, 0, NULL), -KERF_EUNSUPP);
        assert_non_null(strstr(kerf_backend_errmsg(t->b), "not enabled"));
        assert_int_equal(kerf_backend_mig_list(t->b, 2, l, 8), -KERF_EUNSUPP);
}

static void test_placement_conflict(void **state)
{
        bt *t = *state;
        kerf_backend_mig m;
        assert_int_equal(kerf_backend_mig_create(t->b, 0, P_3G, 0, &m), 0);
        /* 2g at slice 2 overlaps the 3g at 0..3 */
        assert_int_equal(kerf_backend_mig_create(t->b, 0, P_2G, 2, NULL), -KERF_ENOFIT);
        assert_non_null(strstr(kerf_backend_errmsg(t->b), "placement conflict"));
        assert_non_null(strstr(kerf_backend_errmsg(t->b), "Insufficient"));
        /* 3g cannot start at slice 2 at all */
        assert_int_equal(kerf_backend_mig_create(t->b, 0, P_3G, 2, NULL), -EINVAL);
        assert_non_null(strstr(kerf_backend_errmsg(t->b), "valid starts: 0,4"));
        assert_int_equal(kerf_backend_mig_create(t->b, 0, 77, 0, NULL), -EINVAL);
        assert_int_equal(kerf_backend_mig_create(t->b, 0, P_3G, 9, NULL), -EINVAL);
        /* nothing half-created */
        unsigned n;
        assert_int_equal(kerf_sim_gi_list(t->st, 0, NULL, 0, &n), 0);
        assert_int_equal(n, 1);
}

/* create -> assign (a child process on the instance) -> destroy refused IN_USE -> the child
 * exits -> destroy -> re-create at the same placement. */
static void test_lifecycle_in_use(void **state)
{
        bt *t = *state;
        kerf_backend_mig m, m2;
        kerf_backend_proc pr[8];
        assert_int_equal(kerf_backend_mig_create(t->b, 0, P_2G, 2, &m), 0);
        pid_t child = bt_child();
        assert_true(child > 0);
        kerf_sim_target tg = {0, (int)m.gi_id, (int)m.ci_id};
        assert_int_equal(kerf_sim_mem_charge(t->st, child, tg, 3 * KERF_GIB), 0);

        assert_int_equal(kerf_backend_proc_list(t->b, 0, m.gi_id, pr, 8), 1);
        assert_int_equal(pr[0].pid, (uint32_t)child);
        assert_int_equal(pr[0].mem_bytes, 3 * KERF_GIB);
        assert_int_equal(pr[0].gi_id, m.gi_id);
        assert_int_equal(kerf_backend_proc_list(t->b, 0, KERF_BACKEND_NO_ID, pr, 8), 1);
        kerf_backend_mig l[8];
        assert_int_equal(kerf_backend_mig_list(t->b, 0, l, 8), 1);
        assert_int_equal(l[0].mem_used, 3 * KERF_GIB);

        assert_int_equal(kerf_backend_mig_destroy(t->b, 0, m.gi_id), -KERF_EINUSE);
        char want[64];
        snprintf(want, sizeof(want), "pid %d", (int)child);
        assert_non_null(strstr(kerf_backend_errmsg(t->b), want));
        /* refused before anything changed: CI still there */
        kerf_sim_gi_info gi;
        assert_int_equal(kerf_sim_gi_get(t->st, 0, m.gi_id, &gi), 0);
        assert_int_equal(gi.n_cis, 1);

        bt_child_end(child);
        assert_int_equal(kerf_backend_proc_list(t->b, 0, m.gi_id, pr, 8), 0);
        assert_int_equal(kerf_backend_mig_destroy(t->b, 0, m.gi_id), 0);
        assert_int_equal(kerf_sim_gi_get(t->st, 0, m.gi_id, &gi), -ENOENT);
        assert_int_equal(kerf_backend_mig_destroy(t->b, 0, m.gi_id), -ENOENT);

        assert_int_equal(kerf_backend_mig_create(t->b, 0, P_2G, 2, &m2), 0);
        assert_int_equal(m2.start, 2);
        assert_int_equal(kerf_backend_mig_list(t->b, 0, l, 8), 1);
        assert_string_equal(l[0].uuid, m2.uuid);
}

static void test_whole_gpu_procs_util(void **state)
{
        bt *t = *state;
        kerf_backend_proc pr[4];
        kerf_backend_util u;
        kerf_backend_proc_util pu[4];
        pid_t child = bt_child();
        kerf_sim_target tg = {1, -1, -1};
        assert_int_equal(kerf_sim_mem_charge(t->st, child, tg, KERF_GIB), 0);
        assert_int_equal(kerf_sim_engine_account(t->st, child, tg, 1000000), 0);
        assert_int_equal(kerf_backend_proc_list(t->b, 1, KERF_BACKEND_NO_ID, pr, 4), 1);
        assert_int_equal(pr[0].pid, (uint32_t)child);
        assert_int_equal(pr[0].gi_id, KERF_BACKEND_NO_ID);
        assert_int_equal(kerf_backend_proc_list(t->b, 1, 3, pr, 4), -KERF_EUNSUPP);
        assert_int_equal(kerf_backend_util_get(t->b, 1, &u), 0);
        assert_true(u.gpu_pct <= 100);
        int n = kerf_backend_proc_util_list(t->b, 1, 0, pu, 4);
        assert_true(n >= 0);
        /* not reported on MIG-enabled GPUs */
        assert_int_equal(kerf_backend_util_get(t->b, 0, &u), -KERF_EUNSUPP);
        assert_non_null(strstr(kerf_backend_errmsg(t->b), "MIG"));
        kerf_backend_gpu g;
        assert_int_equal(kerf_backend_gpu_get(t->b, 1, &g), 0);
        assert_int_equal(g.mem_used, KERF_GIB);
        bt_child_end(child);
}

/* NVML may buffer several samples of one process: the backend gives one per process, the
 * mean of its samples at the newest time, in order of first appearance. */
static void test_proc_util_merge(void **state)
{
        (void)state;
        kerf_backend_proc_util s[] = {
            {7, 100, 30, 10}, {9, 110, 50, 0}, {7, 300, 31, 11}, {7, 200, 20, 3}, {4, 50, 0, 0}};
        assert_int_equal(kerf_backend_proc_util_merge(s, 5), 3);
        assert_int_equal(s[0].pid, 7);
        assert_int_equal(s[0].sm_pct, 27); /* (30 + 31 + 20) / 3 = 27 */
        assert_int_equal(s[0].mem_pct, 8); /* (10 + 11 + 3) / 3 = 8 */
        assert_int_equal(s[0].ts_us, 300);
        assert_int_equal(s[1].pid, 9);
        assert_int_equal(s[1].sm_pct, 50);
        assert_int_equal(s[1].ts_us, 110);
        assert_int_equal(s[2].pid, 4);
        assert_int_equal(kerf_backend_proc_util_merge(s, 0), 0);
        kerf_backend_proc_util one = {5, 1, 1, 1};
        assert_int_equal(kerf_backend_proc_util_merge(&one, 1), 1);
        assert_int_equal(one.sm_pct, 1);
}

static void test_mig_mode_guard(void **state)
{
        bt *t = *state;
        kerf_sim_gpu_info gi;
        assert_int_equal(kerf_backend_mig_mode_set(t->b, 1, true), -KERF_EPERM);
        assert_non_null(strstr(kerf_backend_errmsg(t->b), "allow_mig_mode_change"));
        assert_int_equal(kerf_sim_gpu_get(t->st, 1, &gi), 0);
        assert_false(gi.mig_enabled);
}

static void test_mig_mode_allowed(void **state)
{
        bt t;
        kerf_sim_gpu_info gi;
        assert_int_equal(bt_setup(&t, KERF_TEST_NVML, true), 0);
        /* allowed by kerf, refused by the (simulated) driver: NVML's NO_PERMISSION */
        unsetenv("KERF_SIM_ALLOW_MIG_MODE");
        assert_int_equal(kerf_backend_mig_mode_set(t.b, 1, true), -KERF_EPERM);
        assert_non_null(strstr(kerf_backend_errmsg(t.b), "nvmlDeviceSetMigMode"));
        setenv("KERF_SIM_ALLOW_MIG_MODE", "1", 1);
        assert_int_equal(kerf_backend_mig_mode_set(t.b, 1, true), 0);
        assert_int_equal(kerf_sim_gpu_get(t.st, 1, &gi), 0);
        assert_true(gi.mig_enabled);
        assert_int_equal(kerf_backend_mig_mode_set(t.b, 2, true), -KERF_EUNSUPP);
        unsetenv("KERF_SIM_ALLOW_MIG_MODE");
        bt_teardown(&t);
        (void)state;
}

/* A library without the versioned names: the fallbacks are used and said so. */
static void test_fallback_symbols(void **state)
{
        bt t;
        kerf_backend_versions v;
        kerf_backend_gpu g;
        kerf_backend_proc pr[4];
        (void)state;
        assert_int_equal(bt_setup(&t, KERF_TEST_NVML_OLD, false), 0);
        assert_int_equal(kerf_backend_versions_get(t.b, &v), 0);
        assert_true(v.fallback_used);
        assert_non_null(strstr(v.fallbacks, "nvmlInit"));
        assert_non_null(strstr(v.fallbacks, "nvmlDeviceGetCount"));
        assert_non_null(strstr(v.fallbacks, "nvmlDeviceGetHandleByIndex"));
        assert_non_null(strstr(v.fallbacks, "nvmlDeviceGetComputeRunningProcesses"));
        assert_string_equal(v.driver, "550.54.15");
        assert_int_equal(v.cuda_version, 12040);
        assert_int_equal(kerf_backend_gpu_count(t.b), 3);
        assert_int_equal(kerf_backend_gpu_get(t.b, 0, &g), 0);
        assert_true(g.mem_total > 100 * KERF_GIB);              /* nvmlDeviceGetMemoryInfo (v1) */
        assert_ptr_equal(g.model, kerf_gpu_model_find("H200")); /* no PCI info: by name */
        pid_t child = bt_child();
        kerf_sim_target tg = {1, -1, -1};
        assert_int_equal(kerf_sim_mem_charge(t.st, child, tg, 2 * KERF_GIB), 0);
        assert_int_equal(kerf_backend_proc_list(t.b, 1, KERF_BACKEND_NO_ID, pr, 4), 1);
        assert_int_equal(pr[0].pid, (uint32_t)child);
        assert_int_equal(pr[0].mem_bytes, 2 * KERF_GIB); /* v1 layout read correctly */
        bt_child_end(child);
        /* MIG entry points absent: a clear "unsupported" */
        assert_int_equal(kerf_backend_mig_create(t.b, 0, P_1G, 0, NULL), -KERF_EUNSUPP);
        assert_non_null(strstr(kerf_backend_errmsg(t.b), "lacks"));
        bt_teardown(&t);
}

/* A board the driver does not name (no PCI info in NVML's name): the model is found by its PCI
 * device id; a name the table does not know stays as the driver said it. */
static void test_model_by_pci_id(void **state)
{
        bt t;
        kerf_backend_gpu g;
        (void)state;
        assert_int_equal(bt_setup(&t, KERF_TEST_NVML_REBADGE, false), 0);
        assert_null(kerf_gpu_model_find("NVIDIA Graphics Device"));
        assert_int_equal(kerf_backend_gpu_get(t.b, 0, &g), 0);
        assert_string_equal(g.name, "NVIDIA Graphics Device");
        assert_ptr_equal(g.model, kerf_gpu_model_find("H200"));
        assert_int_equal(kerf_backend_gpu_get(t.b, 2, &g), 0);
        assert_ptr_equal(g.model, kerf_gpu_model_find("T4"));
        /* a lost GPU: PCI info answers GPU_IS_LOST, the GPU is reported lost, nothing crashes */
        assert_int_equal(kerf_sim_gpu_lost(t.st, 1), 0);
        assert_int_equal(kerf_backend_gpu_get(t.b, 1, &g), 0);
        assert_true(g.lost);
        bt_teardown(&t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_discovery, setup, teardown),
            cmocka_unit_test(test_proc_util_merge),
            cmocka_unit_test_setup_teardown(test_versions_and_upgrade, setup, teardown),
            cmocka_unit_test_setup_teardown(test_create_list, setup, teardown),
            cmocka_unit_test_setup_teardown(test_placement_conflict, setup, teardown),
            cmocka_unit_test_setup_teardown(test_lifecycle_in_use, setup, teardown),
            cmocka_unit_test_setup_teardown(test_whole_gpu_procs_util, setup, teardown),
            cmocka_unit_test_setup_teardown(test_mig_mode_guard, setup, teardown),
            cmocka_unit_test(test_mig_mode_allowed),
            cmocka_unit_test(test_fallback_symbols),
            cmocka_unit_test(test_model_by_pci_id),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
