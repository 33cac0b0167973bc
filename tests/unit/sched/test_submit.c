/* SPDX-License-Identifier: Apache-2.0 */
/* test_submit.c - request validation, unknown tenants and requests no route could ever hold */
#include "helpers.h"

static kerf_sched *setup(void)
{
        kerf_sched *s = sched_over(fleet_h200(8, 2), NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        return s;
}

/* Submits r and expects rc, with a reason naming `field` when given. */
static void expect(kerf_sched *s, const kerf_request *r, int rc, const char *field)
{
        uint64_t id = 12345;
        kerf_reason why;
        memset(&why, 0, sizeof(why));
        int got = kerf_sched_submit(s, r, &id, &why);
        if (got != rc)
                fail_msg("want %s got %s (%s)", kerf_strerror(rc), kerf_strerror(got), why.text);
        if (rc != 0)
                assert_int_equal(id, 12345); /* output untouched on failure */
        if (field && !contains(why.text, field))
                fail_msg("reason '%s' does not name '%s'", why.text, field);
        check_ok(s);
}

static void bad_fields(void **state)
{
        (void)state;
        kerf_sched *s = setup();
        kerf_request r;
        char longname[80];
        memset(longname, 'a', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = 0;

#define BAD(field, stmt)                                                                           \
        do {                                                                                       \
                r = req("acme", KERF_WL_INFERENCE, KERF_TIER_QUEUEABLE);                           \
                stmt;                                                                              \
                expect(s, &r, -EINVAL, field);                                                     \
        } while (0)
        BAD("name", r.name = longname);
        BAD("workload", r.workload = (kerf_workload)7);
        BAD("workload", r.workload = (kerf_workload)-1);
        BAD("tier", r.tier = (kerf_tier)3);
        BAD("route", r.route = -2);
        BAD("route", r.route = KERF_UNIT_KIND_COUNT);
        BAD("gpus", r.gpus = KERF_MAX_TASK_GPUS + 1);
        BAD("compute_pct", r.compute_pct = 101);
        BAD("compute_limit_pct", (r.compute_pct = 50, r.compute_limit_pct = 40));
        BAD("compute_limit_pct", (r.compute_pct = 50, r.compute_limit_pct = 101));
        BAD("mem_permille", r.mem_permille = 1001);
        BAD("mem_bytes and mem_permille", (r.mem_permille = 10, r.mem_bytes = KERF_GIB));
        BAD("priority", r.priority = 1001);
        BAD("priority", r.priority = -1001);
        BAD("mig_profile", r.mig_profile = "");
        BAD("mig_profile", r.mig_profile = "a-profile-name-that-is-far-too-long");
        BAD("mig_profile", (r.mig_profile = "3g.71gb", r.route = KERF_UNIT_SLICE));
        BAD("gpus", (r.gpus = 2, r.route = KERF_UNIT_SLICE));
        BAD("queue", r.queue = "bad queue");
        BAD("queue", r.queue = longname);
#undef BAD
        /* NULL arguments */
        r = req("acme", KERF_WL_DEV, KERF_TIER_HIGH);
        uint64_t id;
        assert_int_equal(kerf_sched_submit(NULL, &r, &id, NULL), -EINVAL);
        assert_int_equal(kerf_sched_submit(s, NULL, &id, NULL), -EINVAL);
        assert_int_equal(kerf_sched_submit(s, &r, NULL, NULL), -EINVAL);
        /* `why` may be NULL */
        r.priority = 5000;
        assert_int_equal(kerf_sched_submit(s, &r, &id, NULL), -EINVAL);

        kerf_sched_stats st;
        kerf_sched_stats_get(s, &st);
        assert_int_equal(st.pending, 0);
        assert_int_equal(kerf_sched_task_list(s, KERF_TASK_PENDING, NULL, 0), 0);
        kerf_sched_free(s);
}

static void unknown_tenant(void **state)
{
        (void)state;
        kerf_sched *s = setup();
        kerf_request r = req("nobody", KERF_WL_DEV, KERF_TIER_HIGH);
        expect(s, &r, -ENOENT, "tenant");
        r.tenant = NULL;
        expect(s, &r, -ENOENT, "tenant");
        kerf_sched_free(s);
}

static void never_fits(void **state)
{
        (void)state;
        kerf_sched *s = setup();
        kerf_request r;
        kerf_reason why;
        uint64_t id;

        /* 200 GiB on 141 GiB GPUs, on every route */
        for (int w = 0; w < KERF_WL_COUNT; w++) {
                r = req("acme", (kerf_workload)w, KERF_TIER_HIGH);
                r.mem_bytes = 200 * KERF_GIB;
                assert_int_equal(kerf_sched_submit(s, &r, &id, &why), -KERF_ENEVER);
                assert_true(contains(why.text, "can never run"));
        }
        r = req("acme", KERF_WL_DEV, KERF_TIER_HIGH);
        r.mem_bytes = 200 * KERF_GIB;
        r.route = KERF_UNIT_SLICE;
        assert_int_equal(kerf_sched_submit(s, &r, &id, &why), -KERF_ENEVER);
        assert_true(contains(why.text, "200GiB requested"));

        /* 9 GPUs on 8-GPU nodes */
        r = req("acme", KERF_WL_TRAINING, KERF_TIER_HIGH);
        r.gpus = 9;
        assert_int_equal(kerf_sched_submit(s, &r, &id, &why), -KERF_ENEVER);
        assert_true(contains(why.text, "9 allowed GPUs"));
        /* 8 is fine */
        r.gpus = 8;
        assert_int_equal(kerf_sched_submit(s, &r, &id, &why), 0);

        /* a MIG profile no GPU has */
        r = req("acme", KERF_WL_INFERENCE, KERF_TIER_HIGH);
        r.mig_profile = "3g.40gb"; /* an H100 name */
        assert_int_equal(kerf_sched_submit(s, &r, &id, &why), -KERF_ENEVER);
        assert_true(contains(why.text, "of that name"));
        r.mig_profile = "3g.71gb";
        assert_int_equal(kerf_sched_submit(s, &r, &id, &why), 0);

        /* a model mask that excludes every GPU of the fleet */
        r = req("acme", KERF_WL_TRAINING, KERF_TIER_HIGH);
        r.model_mask = 1ULL << kerf_gpu_model_index(model("T4"));
        assert_int_equal(kerf_sched_submit(s, &r, &id, &why), -KERF_ENEVER);

        /* the explicit MIG route on a fleet without MIG GPUs */
        kerf_sched *plain = sched_over(fleet_h200(2, 0), NULL);
        tenant_add(plain, "acme", NULL, NULL, 1);
        r = req("acme", KERF_WL_INFERENCE, KERF_TIER_HIGH);
        r.route = KERF_UNIT_MIG;
        assert_int_equal(kerf_sched_submit(plain, &r, &id, &why), -KERF_ENEVER);
        /* inference/high may fall back to a slice there */
        r.route = -1;
        assert_int_equal(kerf_sched_submit(plain, &r, &id, &why), 0);
        kerf_sched_free(plain);

        /* a share on a fleet whose only GPUs are in MIG mode */
        kerf_sched *mig = sched_over(fleet_h200(1, 1), NULL);
        tenant_add(mig, "acme", NULL, NULL, 1);
        r = req("acme", KERF_WL_DEV, KERF_TIER_HIGH);
        r.route = KERF_UNIT_SLICE;
        assert_int_equal(kerf_sched_submit(mig, &r, &id, &why), -KERF_ENEVER);
        kerf_sched_free(mig);
        check_ok(s);
        kerf_sched_free(s);
}

static void node_limits_never(void **state)
{
        (void)state;
        kerf_fleet *f = NULL;
        assert_int_equal(kerf_fleet_new(&f), 0);
        fleet_add_node(f, "n0", "H200", 2, 0, true, 16000, 64 * KERF_GIB);
        kerf_sched *s = sched_over(f, NULL);
        tenant_add(s, "acme", NULL, NULL, 1);
        kerf_request r = req("acme", KERF_WL_TRAINING, KERF_TIER_HIGH);
        uint64_t id;
        kerf_reason why;
        r.cpu_milli = 32000;
        assert_int_equal(kerf_sched_submit(s, &r, &id, &why), -KERF_ENEVER);
        r.cpu_milli = 16000;
        r.host_mem_bytes = 65 * KERF_GIB;
        assert_int_equal(kerf_sched_submit(s, &r, &id, &why), -KERF_ENEVER);
        r.host_mem_bytes = 64 * KERF_GIB;
        assert_int_equal(kerf_sched_submit(s, &r, &id, &why), 0);
        kerf_sched_free(s);
}

static void accepted_task_recorded(void **state)
{
        (void)state;
        kerf_sched *s = setup();
        kerf_request r = req("acme", KERF_WL_INFERENCE, KERF_TIER_HIGH);
        r.name = "svc";
        r.queue = "online";
        r.priority = 7;
        r.mem_bytes = 10 * KERF_GIB;
        r.compute_pct = 20;
        r.compute_limit_pct = 60;
        uint64_t a = submit_ok(s, &r);
        uint64_t b = submit_ok(s, &r);
        assert_true(a > 0 && b > a);
        kerf_task_info ti = task_info(s, a);
        assert_int_equal(ti.state, KERF_TASK_PENDING);
        assert_string_equal(ti.name, "svc");
        assert_string_equal(ti.tenant, "acme");
        assert_string_equal(ti.queue, "online");
        assert_int_equal(ti.priority, 7);
        assert_int_equal(ti.mem_bytes, 10 * KERF_GIB);
        assert_int_equal(ti.compute_pct, 20);
        assert_int_equal(ti.compute_limit_pct, 60);
        assert_int_equal(ti.reason.code, KERF_WHY_NOT_TRIED);
        assert_true(task_info(s, b).submit_seq > ti.submit_seq);
        /* queue defaults to "default"; dev shares without memory get the policy default */
        r = req("acme", KERF_WL_DEV, KERF_TIER_HIGH);
        uint64_t c = submit_ok(s, &r);
        ti = task_info(s, c);
        assert_string_equal(ti.queue, "default");
        assert_int_equal(ti.mem_bytes, 8 * KERF_GIB);
        /* batch is forced preemptible */
        r = req("acme", KERF_WL_BATCH, KERF_TIER_HIGH);
        assert_true(task_info(s, submit_ok(s, &r)).preemptible);
        r = req("acme", KERF_WL_TRAINING, KERF_TIER_HIGH);
        assert_false(task_info(s, submit_ok(s, &r)).preemptible);
        assert_int_equal(kerf_sched_task_list(s, KERF_TASK_PENDING, NULL, 0), 5);
        /* cancel of an unknown id */
        assert_int_equal(kerf_sched_cancel(s, 999), -ENOENT);
        assert_int_equal(kerf_sched_finish(s, 0), -ENOENT);
        assert_int_equal(kerf_sched_cancel(s, a), 0);
        assert_int_equal(kerf_sched_cancel(s, a), -ENOENT);
        check_ok(s);
        kerf_sched_free(s);
}

static void api_validation(void **state)
{
        (void)state;
        kerf_sched *s = NULL;
        kerf_fleet *f = fleet_h200(2, 1);
        kerf_fleet *empty = NULL;
        assert_int_equal(kerf_fleet_new(&empty), 0);
        assert_int_equal(kerf_sched_new(NULL, NULL, &s), -EINVAL);
        assert_int_equal(kerf_sched_new(f, NULL, NULL), -EINVAL);
        assert_int_equal(kerf_sched_new(empty, NULL, &s), -EINVAL);
        kerf_policy p;
        kerf_policy_default(&p);
        p.n_routes[KERF_WL_DEV][KERF_TIER_HIGH] = 0;
        assert_int_equal(kerf_sched_new(f, &p, &s), -EINVAL);
        kerf_fleet_free(empty);
        s = sched_over(f, NULL);
        assert_null(kerf_sched_free(NULL));

        kerf_tenant_spec t;
        kerf_tenant_spec_init(&t, "bad name");
        assert_int_equal(kerf_sched_tenant_set(s, &t), -EINVAL);
        kerf_tenant_spec_init(&t, "ok");
        t.weight = 1001;
        assert_int_equal(kerf_sched_tenant_set(s, &t), -EINVAL);
        t.weight = 0; /* means 1 */
        t.cohort = "bad cohort";
        assert_int_equal(kerf_sched_tenant_set(s, &t), -EINVAL);
        t.cohort = "";
        assert_int_equal(kerf_sched_tenant_set(s, &t), 0);
        assert_int_equal(kerf_sched_tenant_set(NULL, &t), -EINVAL);
        uint64_t use[KERF_RES_COUNT];
        assert_int_equal(kerf_sched_tenant_usage(s, "nobody", use), -ENOENT);
        assert_int_equal(kerf_sched_tenant_usage(s, "ok", use), 0);

        kerf_decision d[4];
        assert_int_equal(kerf_sched_step(NULL, d, 4), -EINVAL);
        assert_int_equal(kerf_sched_step(s, NULL, 4), -EINVAL);
        assert_int_equal(kerf_sched_step(s, d, 4), 0);
        assert_int_equal(kerf_sched_mig_done(s, 77, 0), -ENOENT);
        assert_int_equal(kerf_sched_fault(s, 9, 0, true, NULL, 0), -EINVAL);
        assert_int_equal(kerf_sched_fault(s, 0, 77, true, NULL, 0), -ENOENT);
        assert_int_equal(kerf_sched_recover(s, 9, 0), -EINVAL);
        kerf_task_info ti;
        assert_int_equal(kerf_sched_task_get(s, 1, &ti), -ENOENT);
        kerf_explain ex;
        assert_int_equal(kerf_sched_explain(s, 1, &ex), -ENOENT);
        kerf_gpu_state gs;
        assert_int_equal(kerf_sched_gpu_get(s, 2, &gs), -EINVAL);
        assert_int_equal(kerf_sched_check(NULL, NULL, 0), -EINVAL);
        check_ok(s);
        kerf_sched_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(bad_fields),
            cmocka_unit_test(unknown_tenant),
            cmocka_unit_test(never_fits),
            cmocka_unit_test(node_limits_never),
            cmocka_unit_test(accepted_task_recorded),
            cmocka_unit_test(api_validation),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
