/* SPDX-License-Identifier: Apache-2.0 */
/* test_fault.c - GPU and MIG-instance faults, recovery, and deterministic decision streams */
#include "helpers.h"

static uint64_t share(kerf_sched *s, int gpu_hint)
{
        kerf_request r = req("acme", KERF_WL_DEV, KERF_TIER_HIGH);
        r.mem_bytes = (uint64_t)(10 + gpu_hint) * KERF_GIB;
        r.compute_pct = 10;
        return submit_ok(s, &r);
}

static void gpu_fault(void **state)
{
        (void)state;
        kerf_sched *s = sched_over(fleet_h200(2, 0), NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        uint64_t a = share(s, 0), b = share(s, 0);
        step_n(s);
        unsigned g = task_info(s, a).gpus[0];
        assert_int_equal(task_info(s, b).gpus[0], g);
        uint64_t hit[8];
        assert_int_equal(kerf_sched_fault(s, g, 0, true, hit, 8), 2);
        check_ok(s);
        assert_int_equal(hit[0], a);
        assert_int_equal(hit[1], b);
        kerf_task_info ti = task_info(s, a);
        assert_int_equal(ti.state, KERF_TASK_PENDING);
        assert_int_equal(ti.reason.code, KERF_WHY_FAULT);
        assert_true(gpu_state(s, g).faulted);
        assert_int_equal(gpu_state(s, g).n_units, 0);
        /* requeued tasks go to the healthy GPU only */
        step_n(s);
        assert_int_equal(task_info(s, a).gpus[0], 1 - g);
        assert_int_equal(task_info(s, b).gpus[0], 1 - g);
        /* removal: the tasks are gone */
        assert_int_equal(kerf_sched_fault(s, 1 - g, 0, false, hit, 1), 2);
        assert_int_equal(kerf_sched_task_get(s, a, &ti), -ENOENT);
        assert_int_equal(kerf_sched_task_get(s, b, &ti), -ENOENT);
        check_ok(s);
        uint64_t c = share(s, 0);
        step_n(s);
        assert_int_equal(task_state(s, c), KERF_TASK_PENDING);
        assert_int_equal(kerf_sched_recover(s, g, 0), 0);
        step_n(s);
        assert_int_equal(task_state(s, c), KERF_TASK_RUNNING);
        assert_int_equal(task_info(s, c).gpus[0], g);
        kerf_sched_free(s);
}

static void mig_instance_fault(void **state)
{
        (void)state;
        kerf_sched *s = sched_over(fleet_h200(1, 1), NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        uint64_t u1, u2;
        assert_int_equal(kerf_sched_mig_adopt(s, 0, 9, 0, &u1), 0);
        assert_int_equal(kerf_sched_mig_adopt(s, 0, 9, 4, &u2), 0);
        kerf_request r = req("acme", KERF_WL_INFERENCE, KERF_TIER_HIGH);
        r.mig_profile = "3g.71gb";
        uint64_t a = submit_ok(s, &r), b = submit_ok(s, &r);
        step_n(s);
        uint64_t ua = task_info(s, a).units[0];
        uint64_t hit[4];
        assert_int_equal(kerf_sched_fault(s, 0, ua, true, hit, 4), 1);
        assert_int_equal(hit[0], a);
        check_ok(s);
        assert_int_equal(task_state(s, b), KERF_TASK_RUNNING);
        assert_int_equal(unit_info_of(s, ua).state, KERF_UNIT_FAULT);
        /* the faulted instance is not reused until recovered */
        step_n(s);
        assert_int_equal(task_state(s, a), KERF_TASK_PENDING);
        assert_int_equal(kerf_sched_recover(s, 0, ua), 0);
        assert_int_equal(kerf_sched_recover(s, 0, ua), -KERF_ESTATE);
        step_n(s);
        assert_int_equal(task_state(s, a), KERF_TASK_RUNNING);
        assert_int_equal(task_info(s, a).units[0], ua);
        kerf_sched_free(s);
}

static void creating_fault(void **state)
{
        (void)state;
        kerf_sched *s = sched_over(fleet_h200(1, 1), NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        kerf_request r = req("acme", KERF_WL_INFERENCE, KERF_TIER_HIGH);
        r.mig_profile = "7g.141gb";
        uint64_t a = submit_ok(s, &r);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        assert_int_equal(n, 1);
        uint64_t u = d[0].units[0];
        uint64_t hit[2];
        assert_int_equal(kerf_sched_fault(s, 0, u, true, hit, 2), 1);
        check_ok(s);
        /* the backend still answers the create: a refusal frees the slices */
        assert_int_equal(kerf_sched_mig_done(s, u, -KERF_EBACKEND), 0);
        check_ok(s);
        assert_int_equal(kerf_sched_unit_get(s, u, &(kerf_unit_info){0}), -ENOENT);
        n = step_all(s, d, DEC_MAX);
        assert_non_null(dec_find(d, n, KERF_DEC_MIG_CREATE, a));
        kerf_sched_free(s);
}

/* One scripted run; writes its decisions to out and returns how many. */
static size_t script(kerf_decision *out, size_t cap)
{
        kerf_sched *s = sched_over(fleet_h200(4, 1), NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        tenant_add(s, "beta", NULL, NULL, 2);
        size_t n = 0;
        for (int i = 0; i < 12; i++) {
                kerf_request r =
                    req(i % 2 ? "acme" : "beta", (kerf_workload)(i % 4), (kerf_tier)(i % 3));
                r.priority = i % 5;
                r.mem_bytes = (uint64_t)(5 + 7 * i) * KERF_GIB;
                submit_ok(s, &r);
                if (i % 3 == 2) {
                        size_t k = step_all(s, out + n, cap - n);
                        mig_confirm_all(s, out + n, k, i % 2 ? -KERF_EBACKEND : 0);
                        n += k;
                }
        }
        uint64_t hit[16];
        assert_true(kerf_sched_fault(s, 1, 0, true, hit, 16) >= 0);
        n += step_all(s, out + n, cap - n);
        assert_int_equal(kerf_sched_recover(s, 1, 0), 0);
        n += step_all(s, out + n, cap - n);
        kerf_sched_free(s);
        return n;
}

static void determinism(void **state)
{
        (void)state;
        static kerf_decision a[DEC_MAX], b[DEC_MAX];
        size_t na = script(a, DEC_MAX), nb = script(b, DEC_MAX);
        assert_true(na > 5);
        assert_int_equal(na, nb);
        for (size_t i = 0; i < na; i++) {
                assert_int_equal(a[i].kind, b[i].kind);
                assert_int_equal(a[i].seq, b[i].seq);
                assert_int_equal(a[i].task, b[i].task);
                assert_int_equal(a[i].by_task, b[i].by_task);
                assert_int_equal(a[i].gpu, b[i].gpu);
                assert_int_equal(a[i].mode, b[i].mode);
                assert_int_equal(a[i].mig_profile_id, b[i].mig_profile_id);
                assert_int_equal(a[i].mig_start, b[i].mig_start);
                assert_int_equal(a[i].n_units, b[i].n_units);
                assert_memory_equal(a[i].units, b[i].units, sizeof(a[i].units));
                assert_int_equal(a[i].reason.code, b[i].reason.code);
                assert_int_equal(a[i].reason.other_task, b[i].reason.other_task);
                assert_string_equal(a[i].reason.text, b[i].reason.text);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(gpu_fault),
            cmocka_unit_test(mig_instance_fault),
            cmocka_unit_test(creating_fault),
            cmocka_unit_test(determinism),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
