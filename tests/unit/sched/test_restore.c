/* SPDX-License-Identifier: Apache-2.0 */
/* test_restore.c - rebuilding the scheduler from stored state after a daemon restart */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>

#include <cmocka.h>

#include "kerf/errno.h"
#include "kerf/sched.h"

static kerf_sched *mk(void)
{
        kerf_fleet *f = NULL;
        assert_int_equal(kerf_fleet_new(&f), 0);
        assert_true(kerf_fleet_add_node(f, "n0", 0, 0, "550.54.15", 12040) >= 0);
        const kerf_gpu_model *m = kerf_gpu_model_find("H200");
        for (int i = 0; i < 4; i++)
                assert_true(kerf_fleet_add_gpu(f, 0, m, i == 0, 0, NULL) >= 0);
        kerf_sched *s = NULL;
        assert_int_equal(kerf_sched_new(f, NULL, &s), 0);
        kerf_fleet_free(f);
        kerf_tenant_spec t;
        kerf_tenant_spec_init(&t, "a");
        assert_int_equal(kerf_sched_tenant_set(s, &t), 0);
        return s;
}

static void check(kerf_sched *s)
{
        char err[256] = "";
        int r = kerf_sched_check(s, err, sizeof(err));
        if (r)
                fail_msg("invariant: %s", err);
}

static void restore_each_kind(void **state)
{
        (void)state;
        kerf_sched *s = mk();
        kerf_request r;
        kerf_reason why;
        kerf_request_init(&r);
        r.tenant = "a";

        /* a whole GPU with unit id 40 */
        kerf_unit_info u[2];
        memset(u, 0, sizeof(u));
        u[0].id = 40;
        u[0].kind = KERF_UNIT_WHOLE;
        u[0].gpu = 1;
        r.route = KERF_UNIT_WHOLE;
        assert_int_equal(kerf_sched_restore(s, &r, 7, u, 1, &why), 0);

        /* a slice next to it on GPU 2 */
        memset(u, 0, sizeof(u));
        u[0].id = 41;
        u[0].kind = KERF_UNIT_SLICE;
        u[0].gpu = 2;
        u[0].mem_bytes = 10 * KERF_GIB;
        u[0].compute_pct = 30;
        u[0].compute_limit_pct = 60;
        r.route = KERF_UNIT_SLICE;
        r.mem_bytes = 10 * KERF_GIB;
        r.compute_pct = 30;
        assert_int_equal(kerf_sched_restore(s, &r, 9, u, 1, &why), 0);

        /* a MIG instance adopted with its stored id, then the task on it */
        uint64_t mu = 0;
        assert_int_equal(kerf_sched_mig_adopt_id(s, 0, 9, 4, 50, &mu), 0);
        assert_int_equal(mu, 50);
        memset(u, 0, sizeof(u));
        u[0].id = 50;
        u[0].kind = KERF_UNIT_MIG;
        u[0].gpu = 0;
        kerf_request_init(&r);
        r.tenant = "a";
        r.mig_profile = "3g.71gb";
        assert_int_equal(kerf_sched_restore(s, &r, 3, u, 1, &why), 0);
        check(s);

        kerf_task_info ti;
        assert_int_equal(kerf_sched_task_get(s, 9, &ti), 0);
        assert_int_equal(ti.state, KERF_TASK_RUNNING);
        assert_int_equal(ti.units[0], 41);
        assert_int_equal(ti.compute_limit_pct, 60);
        assert_int_equal(kerf_sched_task_get(s, 3, &ti), 0);
        assert_int_equal(ti.route, KERF_UNIT_MIG);

        /* new ids continue above the restored ones */
        kerf_request_init(&r);
        r.tenant = "a";
        r.workload = KERF_WL_DEV;
        uint64_t id = 0;
        assert_int_equal(kerf_sched_submit(s, &r, &id, &why), 0);
        assert_true(id > 9);
        kerf_decision d[8];
        int n = kerf_sched_step(s, d, 8);
        assert_true(n >= 1);
        for (int i = 0; i < n; i++)
                if (d[i].kind == KERF_DEC_START)
                        assert_true(d[i].units[0] > 50);
        check(s);

        /* finishing a restored task frees its unit */
        assert_int_equal(kerf_sched_finish(s, 7), 0);
        kerf_gpu_state gs;
        assert_int_equal(kerf_sched_gpu_get(s, 1, &gs), 0);
        assert_int_equal(gs.mode, KERF_GPU_MODE_FREE);
        check(s);
        kerf_sched_free(s);
}

static void restore_refuses_conflicts(void **state)
{
        (void)state;
        kerf_sched *s = mk();
        kerf_request r;
        kerf_reason why;
        kerf_request_init(&r);
        r.tenant = "a";
        r.route = KERF_UNIT_WHOLE;
        kerf_unit_info u;
        memset(&u, 0, sizeof(u));
        u.id = 5;
        u.kind = KERF_UNIT_WHOLE;
        u.gpu = 1;
        assert_int_equal(kerf_sched_restore(s, &r, 1, &u, 1, &why), 0);
        /* same GPU again: in use */
        u.id = 6;
        assert_int_equal(kerf_sched_restore(s, &r, 2, &u, 1, &why), -KERF_EINUSE);
        /* same task id: invalid */
        u.gpu = 2;
        assert_int_equal(kerf_sched_restore(s, &r, 1, &u, 1, &why), -EINVAL);
        /* same unit id: in use */
        u.id = 5;
        assert_int_equal(kerf_sched_restore(s, &r, 3, &u, 1, &why), -KERF_EINUSE);
        /* MIG unit that was never adopted */
        u.id = 99;
        u.kind = KERF_UNIT_MIG;
        u.gpu = 0;
        kerf_request_init(&r);
        r.tenant = "a";
        r.route = KERF_UNIT_MIG;
        assert_int_equal(kerf_sched_restore(s, &r, 4, &u, 1, &why), -EINVAL);
        assert_non_null(strstr(why.text, "adopted"));
        /* a slice that does not fit */
        u.kind = KERF_UNIT_SLICE;
        u.gpu = 3;
        u.mem_bytes = 500 * KERF_GIB;
        kerf_request_init(&r);
        r.tenant = "a";
        r.route = KERF_UNIT_SLICE;
        assert_int_equal(kerf_sched_restore(s, &r, 4, &u, 1, &why), -KERF_EINUSE);
        /* unknown tenant */
        r.tenant = "nobody";
        u.mem_bytes = KERF_GIB;
        assert_int_equal(kerf_sched_restore(s, &r, 4, &u, 1, &why), -ENOENT);
        /* nothing half-done */
        check(s);
        kerf_sched_stats st;
        kerf_sched_stats_get(s, &st);
        assert_int_equal(st.running, 1);
        kerf_sched_free(s);
}

static void submit_with_id(void **state)
{
        (void)state;
        kerf_sched *s = mk();
        kerf_request r;
        kerf_reason why;
        kerf_request_init(&r);
        r.tenant = "a";
        assert_int_equal(kerf_sched_submit_id(s, &r, 100, &why), 0);
        assert_int_equal(kerf_sched_submit_id(s, &r, 100, &why), -EINVAL);
        assert_int_equal(kerf_sched_submit_id(s, &r, 0, &why), -EINVAL);
        uint64_t id = 0;
        assert_int_equal(kerf_sched_submit(s, &r, &id, &why), 0);
        assert_int_equal(id, 101);
        assert_int_equal(kerf_sched_mig_adopt_id(s, 0, 0, 0, 7, &id), 0);
        assert_int_equal(kerf_sched_mig_adopt_id(s, 0, 19, 0, 7, &id), -EINVAL);
        check(s);
        kerf_sched_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(restore_each_kind),
            cmocka_unit_test(restore_refuses_conflicts),
            cmocka_unit_test(submit_with_id),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
