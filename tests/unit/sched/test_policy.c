/* SPDX-License-Identifier: Apache-2.0 */
/* test_policy.c - workload/tier routes, their validation, and explicit routes and profiles */
#include "helpers.h"

static kerf_sched *setup(const kerf_policy *p)
{
        kerf_sched *s = sched_over(fleet_h200(8, 2), p);
        tenant_add(s, "acme", NULL, NULL, 1);
        return s;
}

/* Submits r, runs a step (confirming MIG creates), returns the task's info. */
static kerf_task_info place(kerf_sched *s, const kerf_request *r)
{
        kerf_decision d[DEC_MAX];
        uint64_t id = submit_ok(s, r);
        size_t n = step_all(s, d, DEC_MAX);
        mig_confirm_all(s, d, n, 0);
        step_all(s, d, DEC_MAX);
        return task_info(s, id);
}

static void defaults_table(void **state)
{
        (void)state;
        kerf_policy p;
        kerf_policy_default(&p);
        assert_int_equal(p.n_routes[KERF_WL_TRAINING][KERF_TIER_HIGH], 1);
        assert_int_equal(p.routes[KERF_WL_TRAINING][KERF_TIER_HIGH][0], KERF_UNIT_WHOLE);
        assert_int_equal(p.n_routes[KERF_WL_TRAINING][KERF_TIER_EXPLORATORY], 2);
        assert_int_equal(p.routes[KERF_WL_INFERENCE][KERF_TIER_HIGH][0], KERF_UNIT_MIG);
        assert_int_equal(p.routes[KERF_WL_INFERENCE][KERF_TIER_HIGH][1], KERF_UNIT_SLICE);
        assert_int_equal(p.routes[KERF_WL_DEV][KERF_TIER_QUEUEABLE][0], KERF_UNIT_TSLICE);
        assert_int_equal(p.n_routes[KERF_WL_BATCH][KERF_TIER_EXPLORATORY], 4);
        assert_true(p.force_preemptible[KERF_WL_BATCH]);
        assert_false(p.force_preemptible[KERF_WL_TRAINING]);
        assert_true(p.preemption && p.mig_reconfigure);
        assert_int_equal(p.place, KERF_PLACE_KERF);
        assert_int_equal(p.dev_default_mem, 8 * KERF_GIB);
}

static void set_routes_validation(void **state)
{
        (void)state;
        kerf_policy p;
        kerf_policy_default(&p);
        const kerf_unit_kind ok[] = {KERF_UNIT_MPS, KERF_UNIT_SLICE};
        const kerf_unit_kind dup[] = {KERF_UNIT_MPS, KERF_UNIT_MPS};
        const kerf_unit_kind bad[] = {KERF_UNIT_MPS, (kerf_unit_kind)9};
        const kerf_unit_kind six[] = {0, 1, 2, 3, 4, 0};
        assert_int_equal(kerf_policy_set_routes(NULL, 0, 0, ok, 2), -EINVAL);
        assert_int_equal(kerf_policy_set_routes(&p, KERF_WL_COUNT, 0, ok, 2), -EINVAL);
        assert_int_equal(kerf_policy_set_routes(&p, 0, KERF_TIER_COUNT, ok, 2), -EINVAL);
        assert_int_equal(kerf_policy_set_routes(&p, 0, 0, NULL, 2), -EINVAL);
        assert_int_equal(kerf_policy_set_routes(&p, 0, 0, ok, 0), -EINVAL);
        assert_int_equal(kerf_policy_set_routes(&p, 0, 0, six, 6), -EINVAL);
        assert_int_equal(kerf_policy_set_routes(&p, 0, 0, dup, 2), -EINVAL);
        assert_int_equal(kerf_policy_set_routes(&p, 0, 0, bad, 2), -EINVAL);
        /* failures leave the table untouched */
        assert_int_equal(p.n_routes[0][0], 1);
        assert_int_equal(p.routes[0][0][0], KERF_UNIT_WHOLE);
        assert_int_equal(kerf_policy_set_routes(&p, KERF_WL_DEV, KERF_TIER_HIGH, ok, 2), 0);
        assert_int_equal(p.n_routes[KERF_WL_DEV][KERF_TIER_HIGH], 2);
        assert_int_equal(p.routes[KERF_WL_DEV][KERF_TIER_HIGH][0], KERF_UNIT_MPS);

        /* a custom policy is used */
        kerf_sched *s = setup(&p);
        kerf_request r = req("acme", KERF_WL_DEV, KERF_TIER_HIGH);
        kerf_task_info ti = place(s, &r);
        assert_int_equal(ti.state, KERF_TASK_RUNNING);
        assert_int_equal(ti.route, KERF_UNIT_MPS);
        assert_int_equal(gpu_state(s, ti.gpus[0]).mode, KERF_GPU_MODE_MPS);
        kerf_sched_free(s);
}

static void default_routes(void **state)
{
        (void)state;
        kerf_sched *s = setup(NULL);
        kerf_request r;
        kerf_task_info ti;

        /* training: whole GPUs, never the MIG ones */
        r = req("acme", KERF_WL_TRAINING, KERF_TIER_HIGH);
        ti = place(s, &r);
        assert_int_equal(ti.state, KERF_TASK_RUNNING);
        assert_int_equal(ti.route, KERF_UNIT_WHOLE);
        assert_true(ti.gpus[0] >= 2);
        assert_int_equal(ti.mem_bytes, H200_MEM);
        assert_false(ti.preemptible);

        /* dev: time-slice, no compute reservation */
        r = req("acme", KERF_WL_DEV, KERF_TIER_QUEUEABLE);
        r.compute_pct = 30;
        ti = place(s, &r);
        assert_int_equal(ti.route, KERF_UNIT_TSLICE);
        assert_int_equal(ti.compute_pct, 0);
        assert_int_equal(ti.mem_bytes, 8 * KERF_GIB);

        /* batch: a slice first, always preemptible */
        r = req("acme", KERF_WL_BATCH, KERF_TIER_HIGH);
        r.compute_pct = 10;
        ti = place(s, &r);
        assert_int_equal(ti.route, KERF_UNIT_SLICE);
        assert_true(ti.preemptible);

        /* inference high: MIG first (a 7g for 100 GiB), then a slice when MIG is full */
        r = req("acme", KERF_WL_INFERENCE, KERF_TIER_HIGH);
        r.mem_bytes = 100 * KERF_GIB;
        r.compute_pct = 50;
        for (int i = 0; i < 2; i++) {
                ti = place(s, &r);
                assert_int_equal(ti.state, KERF_TASK_RUNNING);
                assert_int_equal(ti.route, KERF_UNIT_MIG);
                assert_true(ti.gpus[0] < 2);
                kerf_unit_info u = unit_info_of(s, ti.units[0]);
                assert_string_equal(u.mig_profile_name, "7g.141gb");
        }
        ti = place(s, &r);
        assert_int_equal(ti.state, KERF_TASK_RUNNING);
        assert_int_equal(ti.route, KERF_UNIT_SLICE);
        assert_true(ti.gpus[0] >= 2);
        assert_int_equal(ti.compute_pct, 50);
        check_ok(s);
        kerf_sched_free(s);
}

static void smallest_profile(void **state)
{
        (void)state;
        kerf_sched *s = setup(NULL);
        kerf_request r = req("acme", KERF_WL_INFERENCE, KERF_TIER_HIGH);
        /* 10 GiB, 10%: a 1g.18gb (never the +me variant unless asked) */
        r.mem_bytes = 10 * KERF_GIB;
        r.compute_pct = 10;
        kerf_task_info ti = place(s, &r);
        assert_string_equal(unit_info_of(s, ti.units[0]).mig_profile_name, "1g.18gb");
        /* 20 GiB: 1g.35gb; 30% compute: 3g.71gb (2/7 < 30%) */
        r.mem_bytes = 20 * KERF_GIB;
        ti = place(s, &r);
        assert_string_equal(unit_info_of(s, ti.units[0]).mig_profile_name, "1g.35gb");
        r.compute_pct = 30;
        ti = place(s, &r);
        assert_string_equal(unit_info_of(s, ti.units[0]).mig_profile_name, "3g.71gb");
        /* mem_permille of the GPU: 400 permille of 140 GiB needs a 4-slice profile */
        r.mem_bytes = 0;
        r.compute_pct = 0;
        r.mem_permille = 400;
        ti = place(s, &r);
        assert_string_equal(unit_info_of(s, ti.units[0]).mig_profile_name, "3g.71gb");
        kerf_sched_free(s);
}

static void explicit_route_and_profile(void **state)
{
        (void)state;
        kerf_sched *s = setup(NULL);
        kerf_request r;
        kerf_task_info ti;

        /* training that insists on MPS gets MPS */
        r = req("acme", KERF_WL_TRAINING, KERF_TIER_HIGH);
        r.route = KERF_UNIT_MPS;
        r.mem_bytes = 4 * KERF_GIB;
        r.compute_pct = 25;
        ti = place(s, &r);
        assert_int_equal(ti.route, KERF_UNIT_MPS);
        assert_int_equal(ti.compute_pct, 25);

        /* a named profile, even a +me one, is honoured; it implies route mig */
        r = req("acme", KERF_WL_DEV, KERF_TIER_EXPLORATORY);
        r.mig_profile = "1g.18gb+me";
        ti = place(s, &r);
        assert_int_equal(ti.route, KERF_UNIT_MIG);
        assert_string_equal(unit_info_of(s, ti.units[0]).mig_profile_name, "1g.18gb+me");
        r.mig_profile = "2g.35gb";
        r.route = KERF_UNIT_MIG;
        ti = place(s, &r);
        assert_string_equal(unit_info_of(s, ti.units[0]).mig_profile_name, "2g.35gb");

        /* an explicit whole GPU for inference */
        r = req("acme", KERF_WL_INFERENCE, KERF_TIER_HIGH);
        r.route = KERF_UNIT_WHOLE;
        ti = place(s, &r);
        assert_int_equal(ti.route, KERF_UNIT_WHOLE);
        kerf_sched_free(s);
}

static void model_mask_honoured(void **state)
{
        (void)state;
        kerf_fleet *f = NULL;
        assert_int_equal(kerf_fleet_new(&f), 0);
        fleet_add_node(f, "a", "A100-80GB", 2, 0, true, 0, 0);
        fleet_add_node(f, "h", "H100-80GB", 2, 0, true, 0, 0);
        kerf_sched *s = sched_over(f, NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        kerf_request r = req("acme", KERF_WL_TRAINING, KERF_TIER_HIGH);
        r.model_mask = 1ULL << kerf_gpu_model_index(model("H100-80GB"));
        kerf_task_info ti = place(s, &r);
        assert_int_equal(ti.state, KERF_TASK_RUNNING);
        assert_true(ti.gpus[0] >= 2);
        ti = place(s, &r);
        assert_true(ti.gpus[0] >= 2);
        /* the H100s are taken: the third waits although A100s are free */
        ti = place(s, &r);
        assert_int_equal(ti.state, KERF_TASK_PENDING);
        kerf_sched_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(defaults_table),
            cmocka_unit_test(set_routes_validation),
            cmocka_unit_test(default_routes),
            cmocka_unit_test(smallest_profile),
            cmocka_unit_test(explicit_route_and_profile),
            cmocka_unit_test(model_mask_honoured),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
