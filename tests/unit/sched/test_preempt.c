/* SPDX-License-Identifier: Apache-2.0 */
/* test_preempt.c - minimal victim sets, priority rules, reasons, reclaim within a cohort */
#include "helpers.h"

static uint64_t slice(kerf_sched *s, const char *tenant, int prio, bool preemptible, unsigned c)
{
        kerf_request r = req(tenant, KERF_WL_INFERENCE, KERF_TIER_QUEUEABLE);
        r.route = KERF_UNIT_SLICE;
        r.mem_bytes = 10 * KERF_GIB;
        r.compute_pct = c;
        r.priority = prio;
        r.preemptible = preemptible;
        return submit_ok(s, &r);
}

static kerf_sched *full(uint64_t *low)
{
        kerf_sched *s = sched_over(fleet_h200(2, 0), NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        for (int i = 0; i < 4; i++)
                low[i] = slice(s, "acme", i == 3 ? 1 : 0, true, 50);
        step_n(s);
        for (int i = 0; i < 4; i++)
                assert_int_equal(task_state(s, low[i]), KERF_TASK_RUNNING);
        return s;
}

static void minimal_set(void **state)
{
        (void)state;
        uint64_t low[4];
        kerf_sched *s = full(low);
        uint64_t hi = slice(s, "acme", 10, false, 50);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        assert_int_equal(dec_count(d, n, KERF_DEC_PREEMPT), 1);
        const kerf_decision *p = dec_find(d, n, KERF_DEC_PREEMPT, 0);
        assert_int_equal(p->by_task, hi);
        assert_int_equal(p->reason.code, KERF_WHY_PREEMPTED);
        assert_int_equal(p->reason.other_task, hi);
        /* one of the lowest priority goes */
        assert_true(p->task != low[3]);
        assert_non_null(dec_find(d, n, KERF_DEC_START, hi));
        kerf_task_info v = task_info(s, p->task);
        assert_int_equal(v.state, KERF_TASK_PENDING);
        assert_int_equal(v.reason.code, KERF_WHY_PREEMPTED);
        assert_int_equal(v.reason.other_task, hi);
        char want[64];
        snprintf(want, sizeof(want), "preempted by task %llu", (unsigned long long)hi);
        assert_true(contains(v.reason.text, want));
        assert_int_equal(v.preemptions, 1);
        /* the spared keep running; the preemptor is on the victim's GPU */
        for (int i = 0; i < 4; i++)
                if (low[i] != p->task)
                        assert_int_equal(task_state(s, low[i]), KERF_TASK_RUNNING);
        /* the victim cannot preempt back (lower priority): nothing more happens */
        assert_int_equal(step_all(s, d, DEC_MAX), 0);
        kerf_sched_stats st;
        kerf_sched_stats_get(s, &st);
        assert_int_equal(st.preemptions, 1);
        kerf_sched_free(s);
}

static void never_equal_or_protected(void **state)
{
        (void)state;
        uint64_t low[4];
        kerf_sched *s = full(low);
        /* equal priority (0 = the lowest running) never preempts */
        uint64_t eq = slice(s, "acme", 0, false, 50);
        kerf_decision d[DEC_MAX];
        assert_int_equal(step_all(s, d, DEC_MAX), 0);
        assert_int_equal(task_state(s, eq), KERF_TASK_PENDING);
        kerf_sched_free(s);

        /* non-preemptible tasks are never victims */
        s = sched_over(fleet_h200(1, 0), NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        uint64_t a = slice(s, "acme", -5, false, 100);
        step_n(s);
        uint64_t hi = slice(s, "acme", 100, false, 10);
        assert_int_equal(step_all(s, d, DEC_MAX), 0);
        assert_int_equal(task_state(s, a), KERF_TASK_RUNNING);
        assert_int_equal(task_state(s, hi), KERF_TASK_PENDING);
        kerf_sched_free(s);

        /* preemption off in the policy */
        kerf_policy p;
        kerf_policy_default(&p);
        p.preemption = false;
        s = sched_over(fleet_h200(1, 0), &p);
        tenant_add(s, "acme", NULL, NULL, 1);
        slice(s, "acme", -5, true, 100);
        step_n(s);
        hi = slice(s, "acme", 100, false, 10);
        assert_int_equal(step_all(s, d, DEC_MAX), 0);
        kerf_sched_free(s);
}

static void whole_gpu_victims(void **state)
{
        (void)state;
        uint64_t low[4];
        kerf_sched *s = full(low);
        kerf_request r = req("acme", KERF_WL_TRAINING, KERF_TIER_HIGH);
        r.priority = 10;
        uint64_t hi = submit_ok(s, &r);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        /* one GPU's two slices, not all four */
        assert_int_equal(dec_count(d, n, KERF_DEC_PREEMPT), 2);
        assert_int_equal(task_state(s, hi), KERF_TASK_RUNNING);
        unsigned g = task_info(s, hi).gpus[0];
        for (int i = 0; i < 4; i++) {
                kerf_task_info ti = task_info(s, low[i]);
                if (ti.state == KERF_TASK_RUNNING)
                        assert_true(ti.gpus[0] != g);
        }
        kerf_sched_free(s);
}

static void reclaim(void **state)
{
        (void)state;
        kerf_sched *s = sched_over(fleet_h200(2, 0), NULL);
        kerf_tenant_spec t;
        kerf_tenant_spec_init(&t, "lender");
        t.cohort = "pool";
        t.nominal[KERF_RES_GPUS] = 1;
        assert_int_equal(kerf_sched_tenant_set(s, &t), 0);
        kerf_tenant_spec_init(&t, "borrower");
        t.cohort = "pool";
        t.nominal[KERF_RES_GPUS] = 1;
        assert_int_equal(kerf_sched_tenant_set(s, &t), 0);
        kerf_request r = req("borrower", KERF_WL_TRAINING, KERF_TIER_HIGH);
        r.priority = 50;
        r.preemptible = true;
        uint64_t b1 = submit_ok(s, &r), b2 = submit_ok(s, &r);
        step_n(s);
        assert_false(task_info(s, b1).borrowing);
        assert_true(task_info(s, b2).borrowing);
        /* the lender, at a lower priority, takes its GPU back */
        r = req("lender", KERF_WL_TRAINING, KERF_TIER_HIGH);
        r.priority = -50;
        uint64_t l1 = submit_ok(s, &r);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        const kerf_decision *p = dec_find(d, n, KERF_DEC_PREEMPT, 0);
        assert_non_null(p);
        assert_int_equal(p->task, b2);
        assert_int_equal(p->by_task, l1);
        assert_int_equal(p->reason.code, KERF_WHY_RECLAIMED);
        assert_int_equal(task_state(s, l1), KERF_TASK_RUNNING);
        assert_int_equal(task_state(s, b1), KERF_TASK_RUNNING);
        assert_int_equal(task_info(s, b2).reason.code, KERF_WHY_RECLAIMED);
        /* beyond its nominal the lender cannot reclaim; the borrower cannot bounce back */
        uint64_t l2 = submit_ok(s, &r);
        assert_int_equal(step_all(s, d, DEC_MAX), 0);
        assert_int_equal(task_state(s, l2), KERF_TASK_PENDING);
        assert_int_equal(task_state(s, b2), KERF_TASK_PENDING);
        kerf_sched_free(s);
}

static void cohort_pair(kerf_sched *s, uint64_t lender_gpus, uint64_t borrower_gpus)
{
        kerf_tenant_spec t;
        kerf_tenant_spec_init(&t, "lender");
        t.cohort = "pool";
        t.nominal[KERF_RES_GPUS] = lender_gpus;
        assert_int_equal(kerf_sched_tenant_set(s, &t), 0);
        kerf_tenant_spec_init(&t, "borrower");
        t.cohort = "pool";
        t.nominal[KERF_RES_GPUS] = borrower_gpus;
        assert_int_equal(kerf_sched_tenant_set(s, &t), 0);
}

static uint64_t gpu_task(kerf_sched *s, const char *tenant, int prio, bool preemptible)
{
        kerf_request r = req(tenant, KERF_WL_TRAINING, KERF_TIER_HIGH);
        r.priority = prio;
        r.preemptible = preemptible;
        return submit_ok(s, &r);
}

/* The lender fits physically, but what it lends is borrowed: it takes it back (Kueue's
 * reclaimWithinCohort), lowest priority then newest borrower first, one victim at a time. */
static void reclaim_on_quota(void **state)
{
        (void)state;
        kerf_sched *s = sched_over(fleet_h200(4, 0), NULL);
        cohort_pair(s, 2, 1);
        uint64_t b1 = gpu_task(s, "borrower", 0, false);
        uint64_t b2 = gpu_task(s, "borrower", 0, false);
        step_n(s);
        uint64_t b3 = gpu_task(s, "borrower", 5, false);
        step_n(s);
        assert_false(task_info(s, b1).borrowing);
        assert_true(task_info(s, b2).borrowing);
        assert_true(task_info(s, b3).borrowing);
        /* one GPU is free: before, the lender just took it and the cohort stayed over-lent */
        uint64_t l1 = gpu_task(s, "lender", 0, false);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        assert_int_equal(dec_count(d, n, KERF_DEC_PREEMPT), 1);
        const kerf_decision *p = dec_find(d, n, KERF_DEC_PREEMPT, 0);
        assert_int_equal(p->task, b2); /* priority 0 before the newer b3 at 5 */
        assert_int_equal(p->by_task, l1);
        assert_int_equal(p->reason.code, KERF_WHY_RECLAIMED);
        assert_true(contains(p->reason.text, "takes back quota lent to tenant borrower"));
        assert_int_equal(task_state(s, l1), KERF_TASK_RUNNING);
        assert_int_equal(task_state(s, b1), KERF_TASK_RUNNING);
        assert_int_equal(task_state(s, b3), KERF_TASK_RUNNING);
        check_ok(s);
        /* the second takes the rest back */
        uint64_t l2 = gpu_task(s, "lender", 0, false);
        n = step_all(s, d, DEC_MAX);
        assert_int_equal(dec_count(d, n, KERF_DEC_PREEMPT), 1);
        assert_int_equal(dec_find(d, n, KERF_DEC_PREEMPT, 0)->task, b3);
        assert_int_equal(task_state(s, l2), KERF_TASK_RUNNING);
        assert_int_equal(task_info(s, b3).reason.code, KERF_WHY_RECLAIMED);
        /* nothing lent any more: the borrowers wait, nothing bounces */
        assert_int_equal(step_all(s, d, DEC_MAX), 0);
        assert_int_equal(task_info(s, b2).state, KERF_TASK_PENDING);
        kerf_explain ex;
        assert_int_equal(kerf_sched_explain(s, b3, &ex), 0);
        assert_int_equal(ex.reason.code, KERF_WHY_COHORT);
        assert_int_equal(ex.reason.other_task, l2);
        assert_true(contains(ex.reason.text, "reclaimed"));
        /* beyond its nominal the lender borrows like anyone: it evicts nobody */
        uint64_t l3 = gpu_task(s, "lender", 0, false);
        assert_int_equal(step_all(s, d, DEC_MAX), 0);
        assert_int_equal(task_info(s, l3).reason.code, KERF_WHY_COHORT);
        assert_int_equal(task_state(s, b1), KERF_TASK_RUNNING);
        check_ok(s);
        kerf_sched_free(s);

        /* preemption off: the lender waits, and says why */
        kerf_policy pol;
        kerf_policy_default(&pol);
        pol.preemption = false;
        s = sched_over(fleet_h200(4, 0), &pol);
        cohort_pair(s, 1, 1);
        gpu_task(s, "borrower", 0, false);
        gpu_task(s, "borrower", 0, false);
        step_n(s);
        l1 = gpu_task(s, "lender", 0, false);
        assert_int_equal(step_all(s, d, DEC_MAX), 0);
        kerf_task_info ti = task_info(s, l1);
        assert_int_equal(ti.reason.code, KERF_WHY_COHORT);
        if (!contains(ti.reason.text,
                      "tenant lender needs back 1 gpus of the quota it lends to cohort pool"))
                fail_msg("reason: %s", ti.reason.text);
        kerf_sched_free(s);
}

/* A borrower, whatever its priority, never evicts a lender's tasks within the lender's nominal,
 * neither by priority nor by reclaim. */
static void borrower_never_evicts_lender(void **state)
{
        (void)state;
        kerf_sched *s = sched_over(fleet_h200(2, 0), NULL);
        cohort_pair(s, 1, 1);
        uint64_t l1 = gpu_task(s, "lender", -10, true);
        uint64_t b1 = gpu_task(s, "borrower", 0, false);
        step_n(s);
        assert_int_equal(task_state(s, l1), KERF_TASK_RUNNING);
        assert_int_equal(task_state(s, b1), KERF_TASK_RUNNING);
        uint64_t b2 = gpu_task(s, "borrower", 100, false);
        kerf_decision d[DEC_MAX];
        assert_int_equal(step_all(s, d, DEC_MAX), 0);
        assert_int_equal(task_state(s, b2), KERF_TASK_PENDING);
        assert_int_equal(task_state(s, l1), KERF_TASK_RUNNING);
        /* with a GPU free it still may not borrow what the lender uses */
        kerf_sched_free(s);
        s = sched_over(fleet_h200(3, 0), NULL);
        cohort_pair(s, 1, 1);
        l1 = gpu_task(s, "lender", -10, true);
        b1 = gpu_task(s, "borrower", 0, false);
        step_n(s);
        b2 = gpu_task(s, "borrower", 100, false);
        assert_int_equal(step_all(s, d, DEC_MAX), 0);
        assert_int_equal(task_info(s, b2).reason.code, KERF_WHY_COHORT);
        assert_int_equal(task_state(s, l1), KERF_TASK_RUNNING);
        check_ok(s);
        kerf_sched_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(minimal_set),       cmocka_unit_test(never_equal_or_protected),
            cmocka_unit_test(whole_gpu_victims), cmocka_unit_test(reclaim),
            cmocka_unit_test(reclaim_on_quota),  cmocka_unit_test(borrower_never_evicts_lender),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
