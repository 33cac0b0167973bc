/* SPDX-License-Identifier: Apache-2.0 */
/* test_share.c - software slices, time-slice and MPS shares: packing, memory, compute, modes */
#include "helpers.h"

static kerf_sched *setup(unsigned n)
{
        kerf_sched *s = sched_over(fleet_h200(n, 0), NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        return s;
}

static kerf_request share(kerf_unit_kind route, uint64_t gib, unsigned comp)
{
        kerf_request r = req("acme", KERF_WL_DEV, KERF_TIER_HIGH);
        r.route = (int)route;
        r.mem_bytes = gib * KERF_GIB;
        r.compute_pct = comp;
        return r;
}

static kerf_task_info run(kerf_sched *s, const kerf_request *r)
{
        uint64_t id = submit_ok(s, r);
        step_n(s);
        return task_info(s, id);
}

static void packed(void **state)
{
        (void)state;
        kerf_sched *s = setup(4);
        kerf_request r = share(KERF_UNIT_SLICE, 20, 20);
        kerf_decision d[DEC_MAX];
        uint64_t a = submit_ok(s, &r);
        size_t n = step_all(s, d, DEC_MAX);
        /* a GPU_MODE decision, then the start */
        assert_int_equal(n, 2);
        assert_int_equal(d[0].kind, KERF_DEC_GPU_MODE);
        assert_int_equal(d[0].mode, KERF_GPU_MODE_SHARED);
        assert_int_equal(d[1].kind, KERF_DEC_START);
        unsigned g = task_info(s, a).gpus[0];
        assert_int_equal(d[0].gpu, g);
        for (int i = 0; i < 3; i++) {
                uint64_t b = submit_ok(s, &r);
                n = step_all(s, d, DEC_MAX);
                assert_int_equal(n, 1); /* no new mode switch */
                assert_int_equal(task_info(s, b).gpus[0], g);
        }
        for (unsigned i = 0; i < 4; i++)
                if (i != g)
                        assert_int_equal(gpu_state(s, i).mode, KERF_GPU_MODE_FREE);
        kerf_gpu_state gs = gpu_state(s, g);
        assert_int_equal(gs.compute_reserved, 80);
        assert_int_equal(gs.mem_reserved, 80 * KERF_GIB);
        assert_int_equal(gs.n_units, 4);
        /* 30% more does not fit there (80 + 30 > 100): another GPU */
        r.compute_pct = 30;
        kerf_task_info ti = run(s, &r);
        assert_int_equal(ti.state, KERF_TASK_RUNNING);
        assert_true(ti.gpus[0] != g);
        kerf_sched_free(s);
}

static void no_overcommit(void **state)
{
        (void)state;
        kerf_sched *s = setup(1);
        kerf_request r = share(KERF_UNIT_SLICE, 100, 10);
        assert_int_equal(run(s, &r).state, KERF_TASK_RUNNING);
        r.mem_bytes = 41 * KERF_GIB; /* 100 + 41 > 140.4 */
        kerf_task_info ti = run(s, &r);
        assert_int_equal(ti.state, KERF_TASK_PENDING);
        assert_int_equal(ti.reason.code, KERF_WHY_NO_FIT);
        assert_int_equal(kerf_sched_cancel(s, ti.id), 0); /* it heads the queue */
        r.mem_bytes = 40 * KERF_GIB;
        assert_int_equal(run(s, &r).state, KERF_TASK_RUNNING);
        assert_true(gpu_state(s, 0).mem_reserved <= H200_MEM);
        kerf_sched_free(s);

        /* guaranteed compute never above 100 */
        s = setup(1);
        r = share(KERF_UNIT_SLICE, 1, 60);
        assert_int_equal(run(s, &r).state, KERF_TASK_RUNNING);
        r.compute_pct = 41;
        assert_int_equal(run(s, &r).state, KERF_TASK_PENDING);
        kerf_sched_free(s);
        s = setup(1);
        r.compute_pct = 40;
        assert_int_equal(run(s, &r).state, KERF_TASK_RUNNING);
        r.compute_pct = 60;
        assert_int_equal(run(s, &r).state, KERF_TASK_RUNNING);
        assert_int_equal(gpu_state(s, 0).compute_reserved, 100);
        /* a time-slice share reserves no compute: it still fits */
        r = share(KERF_UNIT_TSLICE, 10, 50);
        kerf_task_info ti2 = run(s, &r);
        assert_int_equal(ti2.state, KERF_TASK_RUNNING);
        assert_int_equal(ti2.compute_pct, 0);
        assert_int_equal(ti2.compute_limit_pct, 100);
        assert_int_equal(ti2.usage[KERF_RES_COMPUTE], 0);
        assert_int_equal(ti2.usage[KERF_RES_MEM], 10 * KERF_GIB);
        assert_int_equal(gpu_state(s, 0).compute_reserved, 100);
        kerf_sched_free(s);
}

static void burstable(void **state)
{
        (void)state;
        kerf_sched *s = setup(1);
        kerf_request r = share(KERF_UNIT_SLICE, 10, 20);
        r.compute_limit_pct = 80;
        kerf_task_info ti = run(s, &r);
        assert_int_equal(ti.compute_pct, 20);
        assert_int_equal(ti.compute_limit_pct, 80);
        kerf_unit_info u = unit_info_of(s, ti.units[0]);
        assert_int_equal(u.compute_pct, 20);
        assert_int_equal(u.compute_limit_pct, 80);
        assert_int_equal(u.kind, KERF_UNIT_SLICE);
        /* only the guarantee is reserved and charged */
        assert_int_equal(gpu_state(s, 0).compute_reserved, 20);
        assert_int_equal(ti.usage[KERF_RES_COMPUTE], 20);
        /* no limit given: limit = guarantee */
        r.compute_limit_pct = 0;
        ti = run(s, &r);
        assert_int_equal(ti.compute_limit_pct, 20);
        kerf_sched_free(s);
}

static void mps_separate(void **state)
{
        (void)state;
        kerf_sched *s = setup(2);
        kerf_request r = share(KERF_UNIT_MPS, 10, 30);
        kerf_task_info m = run(s, &r);
        assert_int_equal(m.route, KERF_UNIT_MPS);
        assert_int_equal(gpu_state(s, m.gpus[0]).mode, KERF_GPU_MODE_MPS);
        r = share(KERF_UNIT_SLICE, 10, 30);
        kerf_task_info sl = run(s, &r);
        assert_true(sl.gpus[0] != m.gpus[0]);
        assert_int_equal(gpu_state(s, sl.gpus[0]).mode, KERF_GPU_MODE_SHARED);
        /* time-slices join the SHARED GPU, never the MPS one */
        r = share(KERF_UNIT_TSLICE, 10, 0);
        assert_int_equal(run(s, &r).gpus[0], sl.gpus[0]);
        /* a third mode has no GPU left: whole waits */
        r = req("acme", KERF_WL_TRAINING, KERF_TIER_HIGH);
        assert_int_equal(run(s, &r).state, KERF_TASK_PENDING);
        /* when the MPS client leaves, its GPU is FREE again and takes the whole GPU */
        assert_int_equal(kerf_sched_finish(s, m.id), 0);
        assert_int_equal(gpu_state(s, m.gpus[0]).mode, KERF_GPU_MODE_FREE);
        step_n(s);
        assert_int_equal(gpu_state(s, m.gpus[0]).mode, KERF_GPU_MODE_WHOLE);
        kerf_sched_free(s);
}

static void permille(void **state)
{
        (void)state;
        kerf_sched *s = setup(1);
        kerf_request r = share(KERF_UNIT_SLICE, 0, 10);
        r.mem_permille = 250;
        kerf_task_info ti = run(s, &r);
        assert_int_equal(ti.mem_bytes, H200_MEM * 250 / 1000);
        for (int i = 0; i < 3; i++)
                assert_int_equal(run(s, &r).state, KERF_TASK_RUNNING);
        /* four quarters: full */
        assert_int_equal(run(s, &r).state, KERF_TASK_PENDING);
        kerf_sched_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(packed),    cmocka_unit_test(no_overcommit),
            cmocka_unit_test(burstable), cmocka_unit_test(mps_separate),
            cmocka_unit_test(permille),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
