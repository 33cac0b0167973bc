/* SPDX-License-Identifier: Apache-2.0 */
/* test_replay.c - the pod -> request mapping and tiny replays whose allocations are known */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "replay.h"

static void test_mapping(void **state)
{
        (void)state;
        kerf_replay_pod p = {"share", 6000, 12288, 1, 460, 0x5};
        kerf_request r;
        assert_int_equal(kerf_replay_pod_request(&p, "ten", &r), 0);
        assert_int_equal(r.route, KERF_UNIT_SLICE);
        assert_int_equal(r.gpus, 1);
        assert_int_equal(r.mem_permille, 460);
        assert_int_equal(r.compute_pct, 46);
        assert_int_equal(r.mem_bytes, 0);
        assert_int_equal(r.cpu_milli, 6000);
        assert_int_equal(r.host_mem_bytes, 12288ULL * KERF_MIB);
        assert_int_equal(r.model_mask, 0x5);
        assert_string_equal(r.tenant, "ten");
        assert_false(r.preemptible);

        kerf_replay_pod w = {"whole", 88000, 1024, 8, 1000, 0};
        assert_int_equal(kerf_replay_pod_request(&w, "ten", &r), 0);
        assert_int_equal(r.route, KERF_UNIT_WHOLE);
        assert_int_equal(r.gpus, 8);
        assert_int_equal(r.mem_permille, 0);

        kerf_replay_pod cpu = {"cpu", 1000, 1, 0, 0, 0};
        kerf_replay_pod bad = {"bad", 1, 1, 2, 500, 0};
        r.gpus = 77;
        assert_int_equal(kerf_replay_pod_request(&cpu, "ten", &r), -EINVAL);
        assert_int_equal(kerf_replay_pod_request(&bad, "ten", &r), -EINVAL);
        assert_int_equal(r.gpus, 77); /* untouched on failure */
}

static kerf_fleet *two_t4_nodes(uint64_t cpu_milli)
{
        kerf_fleet *f = NULL;
        const kerf_gpu_model *t4 = kerf_gpu_model_find("T4");
        assert_int_equal(kerf_fleet_new(&f), 0);
        assert_true(kerf_fleet_add_node(f, "n0", cpu_milli, 64 * KERF_GIB, NULL, 0) >= 0);
        assert_true(kerf_fleet_add_gpu(f, 0, t4, false, -1, NULL) >= 0);
        assert_true(kerf_fleet_add_node(f, "n1", cpu_milli, 64 * KERF_GIB, NULL, 0) >= 0);
        assert_true(kerf_fleet_add_gpu(f, 1, t4, false, -1, NULL) >= 0);
        return f;
}

static const kerf_replay_point *end(const kerf_replay_curve *c)
{
        return &c->pts[c->n_pts - 1];
}

/* Halves pack two per GPU: everything fits, nothing is fragmented. */
static void test_replay_halves(void **state)
{
        (void)state;
        kerf_fleet *f = two_t4_nodes(64000);
        kerf_replay_pod pods[] = {{"half", 1000, 1024, 1, 500, 0}, {"cpu", 1000, 1, 0, 0, 0}};
        kerf_replay_opts o;
        kerf_replay_result r;
        kerf_replay_opts_init(&o);
        o.step_pct = 25;
        assert_int_equal(kerf_replay_run(f, pods, 2, &o, &r), 0);
        assert_int_equal(r.capacity_milli, 2000);
        assert_int_equal(r.n_gpu_pods, 1);
        assert_int_equal(r.n_curves, 3);
        for (size_t c = 0; c < 3; c++) {
                const kerf_replay_point *e = end(&r.curves[c]);
                assert_int_equal(r.curves[c].n_pts, 5); /* 0, 25, 50, 75, 100 */
                assert_int_equal(e->arrived, 4);
                assert_int_equal(e->placed, 4);
                assert_int_equal(e->failed, 0);
                assert_float_equal(e->arrived_pct, 100.0, 1e-9);
                assert_float_equal(e->alloc_pct, 100.0, 1e-9);
                assert_float_equal(e->unalloc_pct, 0.0, 1e-9);
                assert_float_equal(e->frag_pct, 0.0, 1e-9);
                assert_float_equal(r.curves[c].first_fail_arrived_pct, -1, 1e-9);
        }
        kerf_replay_result_fini(&r);
        kerf_fleet_free(f);
}

/* 0.6 GPU tasks: one per GPU, the 0.4 left on each is fragmented for this workload. */
static void test_replay_fragmented(void **state)
{
        (void)state;
        kerf_fleet *f = two_t4_nodes(64000);
        kerf_replay_pod pods[] = {{"big", 1000, 1024, 1, 600, 0}};
        kerf_replay_opts o;
        kerf_replay_result r;
        kerf_replay_opts_init(&o);
        assert_int_equal(kerf_replay_run(f, pods, 1, &o, &r), 0);
        for (size_t c = 0; c < 3; c++) {
                const kerf_replay_point *e = end(&r.curves[c]);
                assert_int_equal(e->arrived, 4); /* 600, 1200, 1800, 2400 milli */
                assert_int_equal(e->placed, 2);
                assert_int_equal(e->failed, 2);
                assert_float_equal(e->alloc_pct, 60.0, 1e-9);
                assert_float_equal(e->unalloc_pct, 40.0, 1e-9);
                assert_float_equal(e->failed_pct, 60.0, 1e-9);
                assert_float_equal(e->frag_pct, 40.0, 1e-9);
                assert_float_equal(r.curves[c].first_fail_arrived_pct, 60.0, 1e-9);
                assert_float_equal(r.curves[c].first_fail_unalloc_pct, 40.0, 1e-9);
        }
        kerf_replay_result_fini(&r);
        kerf_fleet_free(f);
}

/* Node CPU is honoured: one 800-milli-CPU task per 1000-milli node, the GPU left free counts
 * as fragmented because no task of the workload can use it. */
static void test_replay_node_cpu(void **state)
{
        (void)state;
        kerf_fleet *f = two_t4_nodes(1000);
        kerf_replay_pod pods[] = {{"cpu-heavy", 800, 1024, 1, 300, 0}};
        kerf_replay_opts o;
        kerf_replay_result r;
        kerf_replay_opts_init(&o);
        o.n_policies = 1;
        o.policies[0] = KERF_PLACE_BESTFIT;
        assert_int_equal(kerf_replay_run(f, pods, 1, &o, &r), 0);
        const kerf_replay_point *e = end(&r.curves[0]);
        assert_int_equal(r.n_curves, 1);
        assert_int_equal(e->arrived, 7); /* 7 x 300 = 2100 >= 2000 */
        assert_int_equal(e->placed, 2);
        assert_float_equal(e->alloc_pct, 30.0, 1e-9);
        assert_float_equal(e->frag_pct, 70.0, 1e-9);
        kerf_replay_result_fini(&r);
        kerf_fleet_free(f);
}

/* cpu_pods: pods without GPUs are drawn too and hold node CPU; a node whose CPU a CPU-only pod
 * took has none left for a GPU pod, under every policy. */
static void test_replay_cpu_pods(void **state)
{
        (void)state;
        kerf_fleet *f = two_t4_nodes(1000);
        kerf_replay_pod pods[] = {{"gpu", 100, 1, 1, 1000, 0}, {"cpu", 1000, 1, 0, 0, 0}};
        unsigned held = 0;
        for (uint64_t seed = 1; seed <= 20; seed++) {
                kerf_replay_opts o;
                kerf_replay_result r;
                kerf_replay_opts_init(&o);
                o.seed = seed;
                o.cpu_pods = true;
                assert_int_equal(kerf_replay_run(f, pods, 2, &o, &r), 0);
                assert_int_equal(r.n_gpu_pods, 1);
                assert_int_equal(r.n_cpu_pods, 1);
                for (size_t c = 0; c < r.n_curves; c++) {
                        const kerf_replay_curve *k = &r.curves[c];
                        const kerf_replay_point *e = end(k);
                        assert_true(k->cpu_placed <= 2);
                        assert_int_equal(k->cpu_placed, r.curves[0].cpu_placed);
                        assert_int_equal(k->cpu_failed, r.curves[0].cpu_failed);
                        assert_true(e->placed <= 2 - k->cpu_placed);
                        assert_int_equal(e->placed + e->failed, e->arrived);
                        held += k->cpu_placed > 0;
                }
                kerf_replay_result_fini(&r);
        }
        assert_true(held > 0);
        kerf_fleet_free(f);
}

static void test_replay_args(void **state)
{
        (void)state;
        kerf_fleet *f = two_t4_nodes(1000);
        kerf_replay_pod cpu[] = {{"cpu", 1000, 1, 0, 0, 0}};
        kerf_replay_opts o;
        kerf_replay_result r;
        kerf_replay_opts_init(&o);
        assert_int_equal(kerf_replay_run(f, cpu, 1, &o, &r), -EINVAL);
        o.step_pct = 0;
        assert_int_equal(kerf_replay_run(f, cpu, 1, &o, &r), -EINVAL);
        assert_int_equal(kerf_replay_policy_parse("bestfit"), KERF_PLACE_BESTFIT);
        assert_int_equal(kerf_replay_policy_parse("nope"), -EINVAL);
        assert_string_equal(kerf_replay_policy_name(KERF_PLACE_FIRSTFIT), "firstfit");
        kerf_fleet_free(f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_mapping),           cmocka_unit_test(test_replay_halves),
            cmocka_unit_test(test_replay_fragmented), cmocka_unit_test(test_replay_node_cpu),
            cmocka_unit_test(test_replay_cpu_pods),   cmocka_unit_test(test_replay_args),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
