/* SPDX-License-Identifier: Apache-2.0 */
/* test_mig.c - MIG placements, layout choice, reuse, create/destroy actions and confirmations */
#include "helpers.h"

#define P_1G   19
#define P_1GME 20
#define P_2G   14
#define P_3G   9
#define P_4G   5

static kerf_sched *setup(unsigned n_gpus, unsigned n_mig)
{
        kerf_sched *s = sched_over(fleet_h200(n_gpus, n_mig), NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        return s;
}

static uint64_t submit_prof(kerf_sched *s, const char *prof)
{
        kerf_request r = req("acme", KERF_WL_INFERENCE, KERF_TIER_HIGH);
        r.mig_profile = prof;
        return submit_ok(s, &r);
}

/* Submits a profile request, steps, confirms its create; returns the unit. */
static kerf_unit_info run_prof(kerf_sched *s, const char *prof)
{
        kerf_decision d[DEC_MAX];
        uint64_t id = submit_prof(s, prof);
        size_t n = step_all(s, d, DEC_MAX);
        const kerf_decision *c = dec_find(d, n, KERF_DEC_MIG_CREATE, id);
        assert_non_null(c);
        assert_int_equal(task_state(s, id), KERF_TASK_STARTING);
        assert_int_equal(kerf_sched_mig_done(s, c->units[0], 0), 0);
        n = step_all(s, d, DEC_MAX);
        assert_non_null(dec_find(d, n, KERF_DEC_START, id));
        kerf_task_info ti = task_info(s, id);
        assert_int_equal(ti.state, KERF_TASK_RUNNING);
        return unit_info_of(s, ti.units[0]);
}

static void no_overlaps(const kerf_sched *s, unsigned gpu)
{
        kerf_unit_info us[16];
        size_t n = kerf_sched_unit_list(s, (int)gpu, us, 16);
        const kerf_gpu_model *m = kerf_sched_fleet(s)->gpus[gpu].model;
        uint8_t used = 0;
        for (size_t i = 0; i < n; i++) {
                const kerf_mig_profile *p = kerf_mig_profile_by_id(m, us[i].mig_profile_id);
                assert_non_null(p);
                assert_true(kerf_mig_start_valid(p, us[i].mig_start));
                uint8_t mask = kerf_mig_slice_mask(p, us[i].mig_start);
                assert_int_equal(used & mask, 0);
                used |= mask;
        }
        assert_int_equal(gpu_state(s, gpu).mig_used_mask, used);
}

static void layout_keeps_big_profiles(void **state)
{
        (void)state;
        kerf_sched *s = setup(1, 1);
        /* a 3g goes to slice 4, so the 4g (start 0 only) stays placeable */
        kerf_unit_info a = run_prof(s, "3g.71gb");
        assert_int_equal(a.mig_start, 4);
        kerf_unit_info b = run_prof(s, "4g.71gb");
        assert_int_equal(b.mig_start, 0);
        no_overlaps(s, 0);
        assert_int_equal(gpu_state(s, 0).mig_compute_used, 7);
        /* full: another 1g waits (and no destroy of assigned instances) */
        kerf_decision d[DEC_MAX];
        uint64_t c = submit_prof(s, "1g.18gb");
        size_t n = step_all(s, d, DEC_MAX);
        assert_int_equal(dec_count(d, n, KERF_DEC_MIG_DESTROY), 0);
        assert_int_equal(task_state(s, c), KERF_TASK_PENDING);
        kerf_sched_free(s);

        /* a 1g keeps the 4g and a 3g placeable: not at slice 0 */
        s = setup(1, 1);
        kerf_unit_info one = run_prof(s, "1g.18gb");
        assert_true(one.mig_start >= 4);
        assert_int_equal(run_prof(s, "4g.71gb").mig_start, 0);
        no_overlaps(s, 0);
        kerf_sched_free(s);

        /* 2g instances pack: three of them, then none */
        s = setup(1, 1);
        unsigned starts = 0;
        for (int i = 0; i < 3; i++) {
                kerf_unit_info u = run_prof(s, "2g.35gb");
                assert_int_equal(u.mig_start % 2, 0);
                assert_true(u.mig_start <= 4);
                starts |= 1u << u.mig_start;
        }
        assert_int_equal(starts, 0x15);
        no_overlaps(s, 0);
        uint64_t t = submit_prof(s, "2g.35gb");
        step_n(s);
        assert_int_equal(task_state(s, t), KERF_TASK_PENDING);
        /* it blocks its queue (strict priority order); gone, a 1g still fits at slice 6 */
        assert_int_equal(kerf_sched_cancel(s, t), 0);
        assert_int_equal(run_prof(s, "1g.18gb").mig_start, 6);
        kerf_sched_free(s);
}

static void reuse_ready_instance(void **state)
{
        (void)state;
        kerf_sched *s = setup(2, 1);
        uint64_t unit = 0;
        assert_int_equal(kerf_sched_mig_adopt(s, 0, P_2G, 2, &unit), 0);
        assert_true(unit > 0);
        kerf_unit_info u = unit_info_of(s, unit);
        assert_int_equal(u.state, KERF_UNIT_READY);
        assert_string_equal(u.mig_profile_name, "2g.35gb");

        kerf_decision d[DEC_MAX];
        uint64_t id = submit_prof(s, "2g.35gb");
        size_t n = step_all(s, d, DEC_MAX);
        assert_int_equal(n, 1);
        assert_int_equal(d[0].kind, KERF_DEC_START);
        assert_int_equal(d[0].units[0], unit);
        assert_int_equal(unit_info_of(s, unit).state, KERF_UNIT_ASSIGNED);
        assert_int_equal(unit_info_of(s, unit).task, id);
        /* finishing hands it back READY, and the next task reuses it */
        assert_int_equal(kerf_sched_finish(s, id), 0);
        assert_int_equal(unit_info_of(s, unit).state, KERF_UNIT_READY);
        assert_int_equal(unit_info_of(s, unit).task, 0);
        uint64_t id2 = submit_prof(s, "2g.35gb");
        n = step_all(s, d, DEC_MAX);
        assert_int_equal(n, 1);
        assert_int_equal(d[0].units[0], unit);
        assert_int_equal(task_info(s, id2).units[0], unit);
        kerf_sched_free(s);
}

static void create_confirmed_or_refused(void **state)
{
        (void)state;
        kerf_sched *s = setup(1, 1);
        kerf_decision d[DEC_MAX];
        uint64_t id = submit_prof(s, "3g.71gb");
        size_t n = step_all(s, d, DEC_MAX);
        assert_int_equal(n, 1);
        assert_int_equal(d[0].kind, KERF_DEC_MIG_CREATE);
        assert_int_equal(d[0].task, id);
        assert_int_equal(d[0].gpu, 0);
        assert_int_equal(d[0].mig_profile_id, P_3G);
        assert_true(d[0].mig_start == 0 || d[0].mig_start == 4);
        assert_int_equal(d[0].reason.code, KERF_WHY_MIG_PENDING);
        uint64_t unit = d[0].units[0];
        assert_int_equal(unit_info_of(s, unit).state, KERF_UNIT_CREATING);
        kerf_task_info ti = task_info(s, id);
        assert_int_equal(ti.state, KERF_TASK_STARTING);
        assert_int_equal(ti.reason.code, KERF_WHY_MIG_PENDING);
        /* nothing pending on a READY unit; double confirmation */
        assert_int_equal(kerf_sched_mig_done(s, unit, -KERF_EBACKEND), 0);
        assert_int_equal(kerf_sched_mig_done(s, unit, 0), -ENOENT);
        check_ok(s);
        ti = task_info(s, id);
        assert_int_equal(ti.state, KERF_TASK_PENDING);
        assert_int_equal(ti.reason.code, KERF_WHY_BACKEND_REFUSED);
        assert_int_equal(ti.n_units, 0);
        assert_int_equal(gpu_state(s, 0).mig_used_mask, 0);
        uint64_t use[KERF_RES_COUNT];
        assert_int_equal(kerf_sched_tenant_usage(s, "acme", use), 0);
        assert_int_equal(use[KERF_RES_MIG_SLICES], 0);

        /* it is tried again, and a confirmation starts it */
        n = step_all(s, d, DEC_MAX);
        const kerf_decision *c = dec_find(d, n, KERF_DEC_MIG_CREATE, id);
        assert_non_null(c);
        assert_int_equal(kerf_sched_mig_done(s, c->units[0], 0), 0);
        assert_int_equal(kerf_sched_mig_done(s, c->units[0], 0), -KERF_ESTATE);
        n = step_all(s, d, DEC_MAX);
        assert_non_null(dec_find(d, n, KERF_DEC_START, id));
        assert_int_equal(task_state(s, id), KERF_TASK_RUNNING);
        assert_int_equal(kerf_sched_tenant_usage(s, "acme", use), 0);
        assert_int_equal(use[KERF_RES_MIG_SLICES], 3);
        assert_int_equal(use[KERF_RES_COMPUTE], 300 / 7);
        kerf_sched_free(s);
}

/* Seven idle 1g instances fill the GPU. */
static void adopt_seven(kerf_sched *s, uint64_t *units)
{
        for (unsigned i = 0; i < 7; i++)
                assert_int_equal(kerf_sched_mig_adopt(s, 0, P_1G, i, &units[i]), 0);
        check_ok(s);
}

static void reconfigure(void **state)
{
        (void)state;
        kerf_sched *s = setup(1, 1);
        uint64_t units[7];
        adopt_seven(s, units);
        kerf_decision d[DEC_MAX];
        uint64_t id = submit_prof(s, "3g.71gb");
        size_t n = step_all(s, d, DEC_MAX);
        /* the fewest destroys: the three 1g at slices 4-6 */
        assert_int_equal(dec_count(d, n, KERF_DEC_MIG_DESTROY), 3);
        assert_int_equal(dec_count(d, n, KERF_DEC_MIG_CREATE), 0);
        for (size_t i = 0; i < n; i++) {
                assert_int_equal(d[i].task, id);
                assert_true(d[i].mig_start >= 4);
                assert_int_equal(unit_info_of(s, d[i].units[0]).state, KERF_UNIT_DESTROYING);
        }
        assert_int_equal(task_state(s, id), KERF_TASK_STARTING);
        /* slices 0-3 are untouched and still usable by others */
        uint64_t other = submit_prof(s, "1g.18gb");
        kerf_decision d2[DEC_MAX];
        size_t n2 = step_all(s, d2, DEC_MAX);
        assert_int_equal(n2, 1);
        assert_int_equal(d2[0].kind, KERF_DEC_START);
        assert_true(unit_info_of(s, d2[0].units[0]).mig_start < 4);
        assert_int_equal(task_state(s, other), KERF_TASK_RUNNING);
        /* confirming two of three destroys changes nothing yet */
        assert_int_equal(kerf_sched_mig_done(s, d[0].units[0], 0), 0);
        assert_int_equal(kerf_sched_mig_done(s, d[1].units[0], 0), 0);
        assert_int_equal(step_all(s, d2, DEC_MAX), 0);
        assert_int_equal(kerf_sched_mig_done(s, d[2].units[0], 0), 0);
        check_ok(s);
        /* the next step emits the create, its confirmation the start */
        n2 = step_all(s, d2, DEC_MAX);
        assert_int_equal(n2, 1);
        assert_int_equal(d2[0].kind, KERF_DEC_MIG_CREATE);
        assert_int_equal(d2[0].task, id);
        assert_int_equal(d2[0].mig_start, 4);
        assert_int_equal(kerf_sched_mig_done(s, d2[0].units[0], 0), 0);
        n2 = step_all(s, d2, DEC_MAX);
        assert_non_null(dec_find(d2, n2, KERF_DEC_START, id));
        no_overlaps(s, 0);
        kerf_sched_free(s);
}

static void reconfigure_refused(void **state)
{
        (void)state;
        kerf_sched *s = setup(1, 1);
        uint64_t units[7];
        adopt_seven(s, units);
        kerf_decision d[DEC_MAX];
        uint64_t id = submit_prof(s, "3g.71gb");
        size_t n = step_all(s, d, DEC_MAX);
        assert_int_equal(n, 3);
        assert_int_equal(kerf_sched_mig_done(s, d[0].units[0], 0), 0);
        assert_int_equal(kerf_sched_mig_done(s, d[1].units[0], -KERF_EBACKEND), 0);
        check_ok(s);
        assert_int_equal(unit_info_of(s, d[1].units[0]).state, KERF_UNIT_READY);
        kerf_task_info ti = task_info(s, id);
        assert_int_equal(ti.state, KERF_TASK_PENDING);
        assert_int_equal(ti.reason.code, KERF_WHY_BACKEND_REFUSED);
        /* the third destroy still completes; nothing is left planned */
        assert_int_equal(kerf_sched_mig_done(s, d[2].units[0], 0), 0);
        check_ok(s);
        assert_int_equal(kerf_sched_task_list(s, KERF_TASK_STARTING, NULL, 0), 0);
        kerf_sched_free(s);

        /* a task cancelled after its destroys were confirmed leaves no planned slices */
        s = setup(1, 1);
        adopt_seven(s, units);
        id = submit_prof(s, "3g.71gb");
        n = step_all(s, d, DEC_MAX);
        mig_confirm_all(s, d, n, 0);
        assert_int_equal(kerf_sched_cancel(s, id), 0);
        check_ok(s);
        assert_int_equal(step_all(s, d, DEC_MAX), 0);
        /* the freed slices take a 4g... no: the 1g at 3 blocks it; a 3g at 4 fits */
        uint64_t again = submit_prof(s, "3g.71gb");
        n = step_all(s, d, DEC_MAX);
        assert_non_null(dec_find(d, n, KERF_DEC_MIG_CREATE, again));
        kerf_sched_free(s);
}

static void reconfigure_off(void **state)
{
        (void)state;
        kerf_policy p;
        kerf_policy_default(&p);
        p.mig_reconfigure = false;
        kerf_sched *s = sched_over(fleet_h200(1, 1), &p);
        tenant_add(s, "acme", NULL, NULL, 1);
        uint64_t units[7];
        adopt_seven(s, units);
        uint64_t id = submit_prof(s, "3g.71gb");
        kerf_decision d[DEC_MAX];
        assert_int_equal(step_all(s, d, DEC_MAX), 0);
        kerf_task_info ti = task_info(s, id);
        assert_int_equal(ti.state, KERF_TASK_PENDING);
        assert_int_equal(ti.reason.code, KERF_WHY_FRAGMENTED);
        kerf_sched_free(s);
}

static void adopt_rules(void **state)
{
        (void)state;
        kerf_sched *s = setup(2, 1);
        uint64_t u = 0, v = 0;
        assert_int_equal(kerf_sched_mig_adopt(s, 0, P_3G, 4, &u), 0);
        assert_int_equal(kerf_sched_mig_adopt(s, 0, P_2G, 4, &v), -KERF_EINUSE);
        assert_int_equal(kerf_sched_mig_adopt(s, 0, P_1G, 7, &v), -EINVAL); /* no start 7 */
        assert_int_equal(kerf_sched_mig_adopt(s, 0, P_3G, 2, &v), -EINVAL); /* 3g: 0 or 4 */
        assert_int_equal(kerf_sched_mig_adopt(s, 0, 77, 0, &v), -EINVAL);
        assert_int_equal(kerf_sched_mig_adopt(s, 1, P_1G, 0, &v), -EINVAL); /* not MIG */
        assert_int_equal(kerf_sched_mig_adopt(s, 2, P_1G, 0, &v), -EINVAL);
        assert_int_equal(kerf_sched_mig_adopt(s, 0, P_1G, 0, NULL), -EINVAL);
        assert_int_equal(kerf_sched_mig_adopt(s, 0, P_4G, 0, &v), 0);
        /* compute is full (3 + 4): even a free slice cannot take more */
        assert_int_equal(v == 0, 0);
        check_ok(s);
        kerf_sched_free(s);

        /* per-profile maximum: one +me per GPU */
        s = setup(1, 1);
        assert_int_equal(kerf_sched_mig_adopt(s, 0, P_1GME, 0, &u), 0);
        assert_int_equal(kerf_sched_mig_adopt(s, 0, P_1GME, 1, &v), -KERF_EINUSE);
        check_ok(s);
        kerf_sched_free(s);
}

static void max_count_on_create(void **state)
{
        (void)state;
        kerf_sched *s = setup(1, 1);
        kerf_unit_info a = run_prof(s, "1g.18gb+me");
        assert_string_equal(a.mig_profile_name, "1g.18gb+me");
        uint64_t b = submit_prof(s, "1g.18gb+me");
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        assert_int_equal(n, 0);
        assert_int_equal(task_state(s, b), KERF_TASK_PENDING);
        /* two 3g at most, and never a third by reconfiguring the assigned ones */
        kerf_sched_free(s);
        s = setup(1, 1);
        run_prof(s, "3g.71gb");
        run_prof(s, "3g.71gb");
        b = submit_prof(s, "3g.71gb");
        n = step_all(s, d, DEC_MAX);
        assert_int_equal(n, 0);
        no_overlaps(s, 0);
        kerf_sched_free(s);
}

/* A sequence of profile requests on fresh H200s; each must land at the expected GPU and start
 * (the layout written out below), and the GPUs stay overlap-free. */
struct step_want {
        const char *prof;
        unsigned gpu, start;
};

static void run_sequence(unsigned n_gpus, const struct step_want *w, size_t n)
{
        kerf_sched *s = setup(n_gpus, n_gpus);
        for (size_t i = 0; i < n; i++) {
                kerf_unit_info u = run_prof(s, w[i].prof);
                if (u.gpu != w[i].gpu || u.mig_start != w[i].start)
                        fail_msg("step %zu (%s): GPU %u start %u, want GPU %u start %u", i,
                                 w[i].prof, u.gpu, u.mig_start, w[i].gpu, w[i].start);
        }
        for (unsigned g = 0; g < n_gpus; g++)
                no_overlaps(s, g);
        check_ok(s);
        kerf_sched_free(s);
}

static void layout_sequences(void **state)
{
        (void)state;
        /* memory slices 0..7 of an H200; compute 7 slices.
         * 1g 2g 2g 2g: | 2g | 2g | 2g | 1g - |  (the old score put the 1g at 4: no third 2g) */
        static const struct step_want a[] = {
            {"1g.18gb", 0, 6}, {"2g.35gb", 0, 4}, {"2g.35gb", 0, 2}, {"2g.35gb", 0, 0}};
        run_sequence(1, a, 4);
        /* 1g 1g 1g 4g: | 4g | 1g 1g 1g - | */
        static const struct step_want b[] = {
            {"1g.18gb", 0, 6}, {"1g.18gb", 0, 5}, {"1g.18gb", 0, 4}, {"4g.71gb", 0, 0}};
        run_sequence(1, b, 4);
        /* 2g 1g 3g: | 3g | 2g | 1g - | */
        static const struct step_want c[] = {
            {"2g.35gb", 0, 4}, {"1g.18gb", 0, 6}, {"3g.71gb", 0, 0}};
        run_sequence(1, c, 3);
        /* 3g 2g 1g 1g: | 1g 1g | 2g | 3g | */
        static const struct step_want d[] = {
            {"3g.71gb", 0, 4}, {"2g.35gb", 0, 2}, {"1g.18gb", 0, 1}, {"1g.18gb", 0, 0}};
        run_sequence(1, d, 4);
        /* 1g.35gb 2g 2g 2g: | 2g | 2g | 2g | 1g.35gb | */
        static const struct step_want e[] = {
            {"1g.35gb", 0, 6}, {"2g.35gb", 0, 4}, {"2g.35gb", 0, 2}, {"2g.35gb", 0, 0}};
        run_sequence(1, e, 4);
        /* seven 1g, from the top down */
        static const struct step_want f[] = {
            {"1g.18gb", 0, 6}, {"1g.18gb", 0, 5}, {"1g.18gb", 0, 4}, {"1g.18gb", 0, 3},
            {"1g.18gb", 0, 2}, {"1g.18gb", 0, 1}, {"1g.18gb", 0, 0}};
        run_sequence(1, f, 7);
        /* two GPUs: small profiles fill the GPU already cut, the empty one keeps its 7g */
        static const struct step_want g[] = {
            {"3g.71gb", 0, 4}, {"1g.18gb", 0, 3}, {"2g.35gb", 0, 0}, {"7g.141gb", 1, 0}};
        run_sequence(2, g, 4);
}

/* The old score only asked whether each profile could still be placed somewhere: a 1g went to
 * slice 4 and a third 2g then had no room. */
static void layout_old_failure(void **state)
{
        (void)state;
        kerf_sched *s = setup(1, 1);
        run_prof(s, "1g.18gb");
        for (int i = 0; i < 3; i++)
                run_prof(s, "2g.35gb"); /* the third found no room before */
        assert_int_equal(gpu_state(s, 0).mig_compute_used, 7);
        assert_int_equal(gpu_state(s, 0).mig_used_mask, 0x7f);
        no_overlaps(s, 0);
        kerf_sched_free(s);
}

/* A launcher (Slurm) names the MIG instance it counted: the task gets exactly that one, waits
 * while it is busy (another free instance of the same profile is not taken, none is created),
 * and a request naming an instance that is not there or does not match is refused. */
static void pinned_instance(void **state)
{
        (void)state;
        kerf_sched *s = setup(2, 1);
        uint64_t u1 = 0, u2 = 0;
        kerf_decision d[DEC_MAX];
        kerf_reason why;
        uint64_t id = 0;
        assert_int_equal(kerf_sched_mig_adopt(s, 0, P_1G, 6, &u1), 0);
        assert_int_equal(kerf_sched_mig_adopt(s, 0, P_1G, 5, &u2), 0);

        kerf_request r = req("acme", KERF_WL_INFERENCE, KERF_TIER_HIGH);
        r.mig_unit_pin = u2; /* the profile and route follow the instance */
        uint64_t a = submit_ok(s, &r);
        size_t n = step_all(s, d, DEC_MAX);
        assert_non_null(dec_find(d, n, KERF_DEC_START, a));
        assert_int_equal(task_info(s, a).units[0], u2);
        assert_int_equal(task_info(s, a).route, KERF_UNIT_MIG);

        /* the same instance again: waits although u1 is free, and says who holds it */
        uint64_t b = submit_ok(s, &r);
        n = step_all(s, d, DEC_MAX);
        assert_null(dec_find(d, n, KERF_DEC_START, b));
        assert_null(dec_find(d, n, KERF_DEC_MIG_CREATE, b));
        kerf_task_info bi = task_info(s, b);
        assert_int_equal(bi.state, KERF_TASK_PENDING);
        assert_non_null(strstr(bi.reason.text, "held by task"));
        assert_int_equal(unit_info_of(s, u1).state, KERF_UNIT_READY);
        /* freed: b takes it */
        assert_int_equal(kerf_sched_finish(s, a), 0);
        n = step_all(s, d, DEC_MAX);
        assert_non_null(dec_find(d, n, KERF_DEC_START, b));
        assert_int_equal(task_info(s, b).units[0], u2);

        /* its GPU draining: a task pinned there waits, and says so */
        assert_int_equal(kerf_sched_finish(s, b), 0);
        assert_int_equal(kerf_sched_gpu_drain(s, 0, true), 0);
        uint64_t dr = submit_ok(s, &r);
        n = step_all(s, d, DEC_MAX);
        assert_null(dec_find(d, n, KERF_DEC_START, dr));
        assert_non_null(strstr(task_info(s, dr).reason.text, "draining"));
        assert_int_equal(kerf_sched_gpu_drain(s, 0, false), 0);
        n = step_all(s, d, DEC_MAX);
        assert_non_null(dec_find(d, n, KERF_DEC_START, dr));

        /* refusals */
        r.mig_unit_pin = 999999;
        assert_int_equal(kerf_sched_submit(s, &r, &id, &why), -EINVAL);
        assert_non_null(strstr(why.text, "no MIG instance 999999"));
        r.mig_unit_pin = u1;
        r.mig_profile = "2g.35gb";
        assert_int_equal(kerf_sched_submit(s, &r, &id, &why), -EINVAL);
        assert_non_null(strstr(why.text, "is a 1g.18gb, not a 2g.35gb"));
        r.mig_profile = NULL;
        r.n_gpu_pins = 1;
        r.gpu_pins[0] = 1;
        assert_int_equal(kerf_sched_submit(s, &r, &id, &why), -EINVAL);
        assert_non_null(strstr(why.text, "not on the named GPU 1"));
        r.n_gpu_pins = 0;
        r.route = KERF_UNIT_SLICE;
        assert_int_equal(kerf_sched_submit(s, &r, &id, &why), -EINVAL);
        check_ok(s);
        kerf_sched_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(layout_keeps_big_profiles),
            cmocka_unit_test(reuse_ready_instance),
            cmocka_unit_test(create_confirmed_or_refused),
            cmocka_unit_test(reconfigure),
            cmocka_unit_test(reconfigure_refused),
            cmocka_unit_test(reconfigure_off),
            cmocka_unit_test(adopt_rules),
            cmocka_unit_test(max_count_on_create),
            cmocka_unit_test(layout_sequences),
            cmocka_unit_test(layout_old_failure),
            cmocka_unit_test(pinned_instance),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
