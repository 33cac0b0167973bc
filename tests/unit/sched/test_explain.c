/* SPDX-License-Identifier: Apache-2.0 */
/* test_explain.c - why a pending task waits, per route, with a hint; and who preempted it */
#include "helpers.h"

static void reasons(void **state)
{
        (void)state;
        kerf_sched *s = sched_over(fleet_h200(3, 1), NULL);
        uint64_t nom[KERF_RES_COUNT] = {1, KERF_UNLIMITED, KERF_UNLIMITED, KERF_UNLIMITED};
        tenant_add(s, "q", NULL, nom, 1);
        tenant_add(s, "x", NULL, NULL, 1);
        tenant_add(s, "y", NULL, NULL, 1);
        kerf_explain ex;
        /* quota */
        kerf_request r = req("q", KERF_WL_TRAINING, KERF_TIER_HIGH);
        r.gpus = 2;
        r.route = KERF_UNIT_WHOLE;
        uint64_t a = submit_ok(s, &r);
        step_n(s);
        assert_int_equal(kerf_sched_explain(s, a, &ex), 0);
        assert_int_equal(ex.state, KERF_TASK_PENDING);
        assert_int_equal(ex.reason.code, KERF_WHY_QUOTA);
        assert_true(contains(ex.hint, "quota"));
        assert_int_equal(ex.queue_position, 1);
        /* queue order: behind a */
        r.gpus = 1;
        uint64_t b = submit_ok(s, &r);
        step_n(s);
        assert_int_equal(kerf_sched_explain(s, b, &ex), 0);
        assert_int_equal(ex.reason.code, KERF_WHY_QUEUE_ORDER);
        assert_int_equal(ex.reason.other_task, a);
        assert_int_equal(ex.queue_position, 2);
        assert_true(ex.hint[0] != 0);
        /* per route: inference/high tries MIG then slice; both full */
        r = req("x", KERF_WL_INFERENCE, KERF_TIER_HIGH);
        r.mem_bytes = 130 * KERF_GIB;
        uint64_t c = submit_ok(s, &r), d = submit_ok(s, &r), d2 = submit_ok(s, &r);
        kerf_decision dec[DEC_MAX];
        size_t n = step_all(s, dec, DEC_MAX);
        mig_confirm_all(s, dec, n, 0);
        step_n(s);
        assert_int_equal(task_state(s, c), KERF_TASK_RUNNING);
        assert_int_equal(task_state(s, d), KERF_TASK_RUNNING);
        assert_int_equal(task_state(s, d2), KERF_TASK_RUNNING);
        uint64_t e = submit_ok(s, &r);
        step_n(s);
        assert_int_equal(kerf_sched_explain(s, e, &ex), 0);
        assert_int_equal(ex.n_routes, 2);
        assert_int_equal(ex.routes[0].route, KERF_UNIT_MIG);
        assert_int_equal(ex.routes[1].route, KERF_UNIT_SLICE);
        assert_true(ex.routes[0].code != KERF_WHY_NONE && ex.routes[1].code != KERF_WHY_NONE);
        assert_true(ex.reason.code == KERF_WHY_NO_FIT || ex.reason.code == KERF_WHY_FRAGMENTED);
        assert_true(ex.hint[0] != 0);
        /* running tasks explain their placement */
        assert_int_equal(kerf_sched_explain(s, c, &ex), 0);
        assert_int_equal(ex.reason.code, KERF_WHY_PLACED);
        kerf_sched_free(s);
}

static void fair_share_and_preempted(void **state)
{
        (void)state;
        kerf_sched *s = sched_over(fleet_h200(3, 0), NULL);
        tenant_add(s, "x", NULL, NULL, 1);
        tenant_add(s, "y", NULL, NULL, 1);
        kerf_request r = req("x", KERF_WL_BATCH, KERF_TIER_HIGH);
        r.route = KERF_UNIT_WHOLE;
        uint64_t x1 = submit_ok(s, &r);
        step_n(s);
        uint64_t x2 = submit_ok(s, &r);
        r.tenant = "y";
        submit_ok(s, &r);
        kerf_explain ex;
        assert_int_equal(kerf_sched_explain(s, x2, &ex), 0);
        assert_int_equal(ex.reason.code, KERF_WHY_FAIR_SHARE);
        assert_int_equal(ex.fair_share_rank, 2);
        assert_true(ex.dominant_share > 0.3 && ex.dominant_share < 0.34);
        step_n(s);
        /* all three GPUs taken by batch (preemptible) tasks; a training task preempts one */
        r = req("y", KERF_WL_TRAINING, KERF_TIER_HIGH);
        r.priority = 5;
        uint64_t t = submit_ok(s, &r);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        const kerf_decision *p = dec_find(d, n, KERF_DEC_PREEMPT, 0);
        assert_non_null(p);
        assert_int_equal(kerf_sched_explain(s, p->task, &ex), 0);
        assert_int_equal(ex.state, KERF_TASK_PENDING);
        assert_int_equal(ex.reason.other_task, t);
        char want[64];
        snprintf(want, sizeof(want), "preempted by task %llu", (unsigned long long)t);
        assert_true(contains(ex.reason.text, want));
        (void)x1;
        kerf_sched_free(s);
}

static void want_reason(const kerf_sched *s, uint64_t id, kerf_why code, const char *text)
{
        kerf_task_info ti = task_info(s, id);
        assert_int_equal(ti.state, KERF_TASK_PENDING);
        assert_int_equal(ti.reason.code, code);
        if (strcmp(ti.reason.text, text) != 0)
                fail_msg("reason '%s', want '%s'", ti.reason.text, text);
        kerf_explain ex;
        assert_int_equal(kerf_sched_explain(s, id, &ex), 0);
        assert_int_equal(ex.reason.code, code);
        if (strcmp(ex.reason.text, text) != 0)
                fail_msg("explain '%s', want '%s'", ex.reason.text, text);
}

/* The words of a failed attempt are formatted only when read: they must be the same words. */
static void pending_reason_words(void **state)
{
        (void)state;
        kerf_sched *s = sched_over(fleet_h200(3, 1), NULL);
        uint64_t one[KERF_RES_COUNT] = {1, KERF_UNLIMITED, KERF_UNLIMITED, KERF_UNLIMITED};
        uint64_t none[KERF_RES_COUNT] = {0, KERF_UNLIMITED, KERF_UNLIMITED, KERF_UNLIMITED};
        tenant_add(s, "q", NULL, one, 1);
        tenant_add(s, "w", NULL, NULL, 1);
        tenant_add(s, "m", NULL, NULL, 1);
        tenant_add(s, "c1", "co", none, 1);
        tenant_add(s, "c2", "co", none, 1);

        kerf_request r = req("q", KERF_WL_TRAINING, KERF_TIER_HIGH);
        r.route = KERF_UNIT_WHOLE;
        r.gpus = 2;
        uint64_t a = submit_ok(s, &r);
        r.tenant = "w";
        r.gpus = 3;
        uint64_t b = submit_ok(s, &r);
        r.tenant = "c1";
        r.gpus = 1;
        uint64_t c = submit_ok(s, &r);
        r = req("m", KERF_WL_INFERENCE, KERF_TIER_HIGH);
        r.mig_profile = "7g.141gb";
        uint64_t m1 = submit_ok(s, &r);
        kerf_decision dec[DEC_MAX];
        size_t n = step_all(s, dec, DEC_MAX);
        mig_confirm_all(s, dec, n, 0);
        step_n(s);
        assert_int_equal(task_state(s, m1), KERF_TASK_RUNNING);
        uint64_t m2 = submit_ok(s, &r);
        step_n(s);

        want_reason(s, a, KERF_WHY_QUOTA,
                    "whole: tenant q would use 2 gpus, over its quota of 1 gpus");
        want_reason(s, b, KERF_WHY_NO_FIT, "whole: 3 whole GPUs needed, 2 free");
        want_reason(s, c, KERF_WHY_COHORT,
                    "whole: tenant c1 needs to borrow 1 gpus from cohort co, which lends only 0 "
                    "gpus now");
        want_reason(s, m2, KERF_WHY_FRAGMENTED,
                    "mig: no free MIG placement for the profile and no idle instances to reclaim");
        kerf_explain ex;
        assert_int_equal(kerf_sched_explain(s, b, &ex), 0);
        assert_int_equal(ex.n_routes, 1);
        assert_string_equal(ex.routes[0].text, "3 whole GPUs needed, 2 free");
        kerf_sched_free(s);
}

/* Sizes in the words are kerf_format_size's (include/kerf/units.h), as everywhere else. */
static void reason_sizes(void **state)
{
        (void)state;
        kerf_sched *s = sched_over(fleet_h200(1, 0), NULL);
        uint64_t mem[KERF_RES_COUNT] = {KERF_UNLIMITED, 24 * KERF_GIB + 512 * KERF_MIB,
                                        KERF_UNLIMITED, KERF_UNLIMITED};
        tenant_add(s, "g", NULL, mem, 1);
        kerf_request r = req("g", KERF_WL_DEV, KERF_TIER_HIGH);
        r.route = KERF_UNIT_SLICE;
        r.mem_bytes = 30 * KERF_GIB;
        uint64_t a = submit_ok(s, &r);
        step_n(s);
        want_reason(s, a, KERF_WHY_QUOTA,
                    "slice: tenant g would use 30GiB, over its quota of 24.5GiB");
        kerf_sched_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(reasons),
            cmocka_unit_test(fair_share_and_preempted),
            cmocka_unit_test(pending_reason_words),
            cmocka_unit_test(reason_sizes),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
