/* SPDX-License-Identifier: Apache-2.0 */
/* test_whole.c - whole GPUs: one node, NVLink and NUMA preference, fragmentation, node limits */
#include "helpers.h"

static kerf_task_info run(kerf_sched *s, const kerf_request *r)
{
        uint64_t id = submit_ok(s, r);
        step_n(s);
        return task_info(s, id);
}

static kerf_request whole(unsigned n)
{
        kerf_request r = req("acme", KERF_WL_TRAINING, KERF_TIER_HIGH);
        r.gpus = n;
        return r;
}

static void one_node(void **state)
{
        (void)state;
        kerf_fleet *f = NULL;
        assert_int_equal(kerf_fleet_new(&f), 0);
        fleet_add_node(f, "a", "H200", 4, 0, true, 0, 0);
        fleet_add_node(f, "b", "H200", 4, 0, true, 0, 0);
        kerf_sched *s = sched_over(f, NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        kerf_request r = whole(3);
        kerf_task_info a = run(s, &r);
        assert_int_equal(a.state, KERF_TASK_RUNNING);
        assert_int_equal(a.n_units, 3);
        unsigned node = a.gpus[0] / 4;
        for (unsigned i = 0; i < 3; i++) {
                assert_int_equal(a.gpus[i] / 4, node);
                assert_int_equal(gpu_state(s, a.gpus[i]).mode, KERF_GPU_MODE_WHOLE);
        }
        assert_int_equal(a.usage[KERF_RES_GPUS], 3);
        assert_int_equal(a.usage[KERF_RES_COMPUTE], 300);
        /* 2 more: the other node (one free GPU left on the first) */
        r = whole(2);
        kerf_task_info b = run(s, &r);
        assert_int_equal(b.gpus[0] / 4, 1 - node);
        assert_int_equal(b.gpus[1] / 4, 1 - node);
        /* 3 GPUs are free in total (1 + 2) but on no single node */
        r = whole(3);
        kerf_task_info c = run(s, &r);
        assert_int_equal(c.state, KERF_TASK_PENDING);
        assert_int_equal(c.reason.code, KERF_WHY_FRAGMENTED);
        kerf_explain ex;
        assert_int_equal(kerf_sched_explain(s, c.id, &ex), 0);
        assert_int_equal(ex.reason.code, KERF_WHY_FRAGMENTED);
        assert_true(ex.hint[0] != 0);
        kerf_sched_free(s);
}

static void nvlink_numa(void **state)
{
        (void)state;
        /* 8 GPUs: NVLink pairs {0,1} {2,3} (NUMA 0) and a 4-clique {4..7} (NUMA 1) */
        kerf_fleet *f = NULL;
        assert_int_equal(kerf_fleet_new(&f), 0);
        assert_int_equal(kerf_fleet_add_node(f, "n", 0, 0, NULL, 0), 0);
        for (int i = 0; i < 8; i++)
                assert_int_equal(
                    kerf_fleet_add_gpu(f, 0, model("H100-80GB"), false, i < 4 ? 0 : 1, NULL), i);
        assert_int_equal(kerf_fleet_link(f, 0, 1), 0);
        assert_int_equal(kerf_fleet_link(f, 2, 3), 0);
        for (unsigned i = 4; i < 8; i++)
                for (unsigned j = i + 1; j < 8; j++)
                        assert_int_equal(kerf_fleet_link(f, i, j), 0);
        kerf_sched *s = sched_over(f, NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        /* 4 GPUs: only the clique joins them all */
        kerf_request r = whole(4);
        kerf_task_info a = run(s, &r);
        unsigned mask = 0;
        for (unsigned i = 0; i < 4; i++)
                mask |= 1u << a.gpus[i];
        assert_int_equal(mask, 0xf0);
        /* 2 GPUs: a linked pair */
        r = whole(2);
        kerf_task_info b = run(s, &r);
        assert_int_equal(b.gpus[0] / 2, b.gpus[1] / 2);
        kerf_sched_free(s);

        /* no NVLink at all: 2 GPUs on one NUMA node */
        f = NULL;
        assert_int_equal(kerf_fleet_new(&f), 0);
        assert_int_equal(kerf_fleet_add_node(f, "n", 0, 0, NULL, 0), 0);
        int numa[] = {0, 1, 1, 0};
        for (int i = 0; i < 4; i++)
                kerf_fleet_add_gpu(f, 0, model("H100-80GB"), false, numa[i], NULL);
        s = sched_over(f, NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        r = whole(1);
        kerf_task_info one = run(s, &r);
        r = whole(2);
        kerf_task_info two = run(s, &r);
        assert_int_equal(two.state, KERF_TASK_RUNNING);
        assert_int_equal(numa[two.gpus[0]], numa[two.gpus[1]]);
        (void)one;
        kerf_sched_free(s);
}

static void node_resources(void **state)
{
        (void)state;
        kerf_fleet *f = NULL;
        assert_int_equal(kerf_fleet_new(&f), 0);
        fleet_add_node(f, "n", "H200", 4, 0, true, 32000, 256 * KERF_GIB);
        kerf_sched *s = sched_over(f, NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        kerf_request r = whole(1);
        r.cpu_milli = 20000;
        r.host_mem_bytes = 100 * KERF_GIB;
        assert_int_equal(run(s, &r).state, KERF_TASK_RUNNING);
        /* 12 cores left: a 20-core task waits though 3 GPUs are free */
        kerf_task_info b = run(s, &r);
        assert_int_equal(b.state, KERF_TASK_PENDING);
        assert_int_equal(b.reason.code, KERF_WHY_NODE_RESOURCES);
        /* host memory too */
        r.cpu_milli = 1000;
        r.host_mem_bytes = 157 * KERF_GIB;
        assert_int_equal(kerf_sched_cancel(s, b.id), 0);
        kerf_task_info c = run(s, &r);
        assert_int_equal(c.state, KERF_TASK_PENDING);
        assert_int_equal(c.reason.code, KERF_WHY_NODE_RESOURCES);
        r.host_mem_bytes = 156 * KERF_GIB;
        assert_int_equal(kerf_sched_cancel(s, c.id), 0);
        assert_int_equal(run(s, &r).state, KERF_TASK_RUNNING);
        /* shares honour the node too */
        r = req("acme", KERF_WL_DEV, KERF_TIER_HIGH);
        r.cpu_milli = 12000;
        kerf_task_info d = run(s, &r);
        assert_int_equal(d.state, KERF_TASK_PENDING);
        assert_int_equal(d.reason.code, KERF_WHY_NODE_RESOURCES);
        kerf_sched_free(s);
}

static void whole_excludes_shared(void **state)
{
        (void)state;
        kerf_sched *s = sched_over(fleet_h200(2, 1), NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        kerf_request r = req("acme", KERF_WL_DEV, KERF_TIER_HIGH);
        r.mem_bytes = KERF_GIB;
        kerf_task_info a = run(s, &r);
        assert_int_equal(a.gpus[0], 1);
        /* the only non-MIG GPU is shared: a whole GPU waits, MIG GPUs are never whole */
        r = whole(1);
        kerf_task_info b = run(s, &r);
        assert_int_equal(b.state, KERF_TASK_PENDING);
        assert_int_equal(b.reason.code, KERF_WHY_NO_FIT);
        assert_int_equal(kerf_sched_finish(s, a.id), 0);
        step_n(s);
        assert_int_equal(task_state(s, b.id), KERF_TASK_RUNNING);
        assert_int_equal(task_info(s, b.id).gpus[0], 1);
        kerf_sched_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(one_node),
            cmocka_unit_test(nvlink_numa),
            cmocka_unit_test(node_resources),
            cmocka_unit_test(whole_excludes_shared),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
