/* SPDX-License-Identifier: Apache-2.0 */
/* test_quota.c - nominal quotas, cohort borrowing and lending, quota changes, fair share */
#include "helpers.h"

static const uint64_t U = KERF_UNLIMITED;

static void spec(kerf_sched *s, const char *name, const char *cohort, uint64_t gpus,
                 uint64_t borrow, uint64_t lend, unsigned weight)
{
        kerf_tenant_spec t;
        kerf_tenant_spec_init(&t, name);
        t.cohort = cohort;
        t.weight = weight;
        t.nominal[KERF_RES_GPUS] = gpus;
        t.borrow_limit[KERF_RES_GPUS] = borrow;
        t.lend_limit[KERF_RES_GPUS] = lend;
        assert_int_equal(kerf_sched_tenant_set(s, &t), 0);
}

static uint64_t train(kerf_sched *s, const char *tenant)
{
        kerf_request r = req(tenant, KERF_WL_TRAINING, KERF_TIER_HIGH);
        return submit_ok(s, &r);
}

static void nominal(void **state)
{
        (void)state;
        kerf_sched *s = sched_over(fleet_h200(8, 0), NULL);
        spec(s, "a", NULL, 2, U, U, 1);
        uint64_t t[3];
        for (int i = 0; i < 3; i++)
                t[i] = train(s, "a");
        step_n(s);
        assert_int_equal(task_state(s, t[0]), KERF_TASK_RUNNING);
        assert_int_equal(task_state(s, t[1]), KERF_TASK_RUNNING);
        kerf_task_info ti = task_info(s, t[2]);
        assert_int_equal(ti.state, KERF_TASK_PENDING);
        assert_int_equal(ti.reason.code, KERF_WHY_QUOTA);
        assert_true(contains(ti.reason.text, "gpus"));
        uint64_t use[KERF_RES_COUNT];
        assert_int_equal(kerf_sched_tenant_usage(s, "a", use), 0);
        assert_int_equal(use[KERF_RES_GPUS], 2);
        assert_int_equal(use[KERF_RES_MEM], 2 * H200_MEM);
        /* memory quota for shares */
        kerf_tenant_spec m;
        kerf_tenant_spec_init(&m, "b");
        m.nominal[KERF_RES_MEM] = 20 * KERF_GIB;
        assert_int_equal(kerf_sched_tenant_set(s, &m), 0);
        kerf_request r = req("b", KERF_WL_DEV, KERF_TIER_HIGH);
        r.mem_bytes = 15 * KERF_GIB;
        uint64_t x = submit_ok(s, &r);
        r.mem_bytes = 6 * KERF_GIB;
        uint64_t y = submit_ok(s, &r);
        step_n(s);
        assert_int_equal(task_state(s, x), KERF_TASK_RUNNING);
        assert_int_equal(task_info(s, y).reason.code, KERF_WHY_QUOTA);
        kerf_sched_free(s);
}

static void cohort_borrowing(void **state)
{
        (void)state;
        kerf_sched *s = sched_over(fleet_h200(8, 0), NULL);
        spec(s, "a", "pool", 1, 2, 0, 1); /* may borrow 2, lends nothing */
        spec(s, "b", "pool", 3, U, 1, 1); /* lends at most 1 */
        spec(s, "c", NULL, 1, U, U, 1);   /* no cohort: capped at nominal */
        uint64_t t[4];
        for (int i = 0; i < 4; i++)
                t[i] = train(s, "a");
        step_n(s);
        assert_int_equal(task_state(s, t[0]), KERF_TASK_RUNNING);
        assert_false(task_info(s, t[0]).borrowing);
        assert_int_equal(task_state(s, t[1]), KERF_TASK_RUNNING);
        assert_true(task_info(s, t[1]).borrowing);
        assert_true(contains(task_info(s, t[1]).reason.text, "borrowed"));
        kerf_task_info ti = task_info(s, t[2]);
        assert_int_equal(ti.state, KERF_TASK_PENDING);
        assert_int_equal(ti.reason.code, KERF_WHY_COHORT);
        /* b uses its quota: it lends less (only unused quota is lent) */
        uint64_t b[3];
        for (int i = 0; i < 3; i++)
                b[i] = train(s, "b");
        step_n(s);
        for (int i = 0; i < 3; i++)
                assert_int_equal(task_state(s, b[i]), KERF_TASK_RUNNING);
        /* ... so a cannot borrow more (the GPUs are physically free, the quota is not) */
        step_n(s);
        assert_int_equal(task_state(s, t[2]), KERF_TASK_PENDING);
        assert_int_equal(task_info(s, t[2]).reason.code, KERF_WHY_COHORT);
        uint64_t c1 = train(s, "c"), c2 = train(s, "c");
        step_n(s);
        assert_int_equal(task_state(s, c1), KERF_TASK_RUNNING);
        assert_int_equal(task_info(s, c2).reason.code, KERF_WHY_QUOTA);
        kerf_sched_free(s);

        /* borrow limit */
        s = sched_over(fleet_h200(8, 0), NULL);
        spec(s, "a", "pool", 1, 1, U, 1);
        spec(s, "b", "pool", 5, U, U, 1);
        for (int i = 0; i < 3; i++)
                t[i] = train(s, "a");
        step_n(s);
        assert_int_equal(task_state(s, t[1]), KERF_TASK_RUNNING);
        assert_int_equal(task_info(s, t[2]).reason.code, KERF_WHY_QUOTA);
        kerf_sched_free(s);
}

static void quota_change(void **state)
{
        (void)state;
        kerf_sched *s = sched_over(fleet_h200(8, 0), NULL);
        spec(s, "a", NULL, 3, U, U, 1);
        uint64_t t[4];
        for (int i = 0; i < 4; i++)
                t[i] = train(s, "a");
        step_n(s);
        assert_int_equal(task_state(s, t[3]), KERF_TASK_PENDING);
        /* lowering keeps the running ones */
        spec(s, "a", NULL, 1, U, U, 1);
        check_ok(s);
        step_n(s);
        for (int i = 0; i < 3; i++)
                assert_int_equal(task_state(s, t[i]), KERF_TASK_RUNNING);
        assert_int_equal(kerf_sched_finish(s, t[0]), 0);
        step_n(s);
        assert_int_equal(task_state(s, t[3]), KERF_TASK_PENDING); /* 2 used, 1 allowed */
        /* raising unblocks at the next step */
        spec(s, "a", NULL, 4, U, U, 1);
        assert_int_equal(task_state(s, t[3]), KERF_TASK_PENDING);
        step_n(s);
        assert_int_equal(task_state(s, t[3]), KERF_TASK_RUNNING);
        kerf_sched_free(s);
}

static void fair_share(void **state)
{
        (void)state;
        kerf_sched *s = sched_over(fleet_h200(4, 0), NULL);
        spec(s, "x", NULL, U, U, U, 1);
        spec(s, "y", NULL, U, U, U, 1);
        uint64_t x1 = train(s, "x"), x2 = train(s, "x");
        step_n(s);
        assert_int_equal(task_state(s, x2), KERF_TASK_RUNNING);
        /* x holds 2 of 4 GPUs; x asks first, y second: y (share 0) goes first */
        kerf_request r = req("x", KERF_WL_TRAINING, KERF_TIER_HIGH);
        r.gpus = 2;
        uint64_t x3 = submit_ok(s, &r);
        r.tenant = "y";
        uint64_t y1 = submit_ok(s, &r);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        assert_int_equal(n, 1);
        assert_int_equal(d[0].task, y1);
        assert_int_equal(task_state(s, x3), KERF_TASK_PENDING);
        (void)x1;
        kerf_sched_free(s);

        /* weights: x (weight 4) holding 1 GPU goes before y (weight 1) holding 1 */
        s = sched_over(fleet_h200(3, 0), NULL);
        spec(s, "y", NULL, U, U, U, 1);
        spec(s, "x", NULL, U, U, U, 4);
        train(s, "y");
        train(s, "x");
        step_n(s);
        uint64_t y2 = train(s, "y");
        uint64_t x4 = train(s, "x");
        n = step_all(s, d, DEC_MAX);
        assert_int_equal(n, 1);
        assert_int_equal(d[0].task, x4);
        assert_int_equal(task_state(s, y2), KERF_TASK_PENDING);
        kerf_sched_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(nominal),
            cmocka_unit_test(cohort_borrowing),
            cmocka_unit_test(quota_change),
            cmocka_unit_test(fair_share),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
