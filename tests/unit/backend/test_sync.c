/* SPDX-License-Identifier: Apache-2.0 */
/* test_sync.c - scheduler decides -> NVML backend creates on the simulated NVML -> state visible
 * via NVML -> destroy -> re-create; adoption of instances that already exist; refusals */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "backend_test_util.h"
#include "kerf/errno.h"
#include "kerf/sched.h"

static kerf_sched *new_sched(const bt *t)
{
        kerf_sched *s = NULL;
        kerf_tenant_spec ts;
        assert_int_equal(kerf_sched_new(t->fleet, NULL, &s), 0);
        kerf_tenant_spec_init(&ts, "acme");
        assert_int_equal(kerf_sched_tenant_set(s, &ts), 0);
        return s;
}

static uint64_t submit_mig(kerf_sched *s, const char *profile)
{
        kerf_request r;
        uint64_t id = 0;
        kerf_request_init(&r);
        r.tenant = "acme";
        r.workload = KERF_WL_INFERENCE;
        r.tier = KERF_TIER_HIGH;
        r.mig_profile = profile;
        assert_int_equal(kerf_sched_submit(s, &r, &id, NULL), 0);
        return id;
}

/* One scheduling pass executed through the backend; returns the decisions. */
static int pass(kerf_backend *b, kerf_sched *s, kerf_decision *d, size_t max,
                kerf_backend_sync_stats *st)
{
        int n = kerf_sched_step(s, d, max);
        assert_true(n >= 0);
        assert_int_equal(kerf_backend_sync_sched(b, s, d, (size_t)n, NULL, st), 0);
        return n;
}

static void test_end_to_end(void **state)
{
        bt t;
        kerf_sched *s;
        kerf_decision d[16];
        kerf_backend_sync_stats st;
        kerf_backend_mig l[8];
        kerf_task_info ti;
        char err[256];
        (void)state;
        assert_int_equal(bt_setup(&t, KERF_TEST_NVML, false), 0);
        s = new_sched(&t);

        uint64_t task = submit_mig(s, "3g.71gb");
        int n = pass(t.b, s, d, 16, &st);
        assert_true(n >= 1);
        assert_int_equal(st.created, 1);
        assert_int_equal(st.refused, 0);
        /* visible through NVML */
        assert_int_equal(kerf_backend_mig_list(t.b, 0, l, 8), 1);
        assert_int_equal(l[0].profile_id, P_3G);
        /* the next pass starts the task on its confirmed instance */
        pass(t.b, s, d, 16, &st);
        assert_int_equal(kerf_sched_task_get(s, task, &ti), 0);
        assert_int_equal(ti.state, KERF_TASK_RUNNING);
        kerf_unit_info ui;
        assert_int_equal(kerf_sched_unit_get(s, ti.units[0], &ui), 0);
        assert_int_equal(ui.mig_start, l[0].start);
        assert_int_equal(kerf_sched_check(s, err, sizeof(err)), 0);

        /* the task ends; a 7g request makes the scheduler destroy the idle 3g and create 7g */
        assert_int_equal(kerf_sched_finish(s, task), 0);
        uint64_t big = submit_mig(s, "7g.141gb");
        unsigned destroyed = 0, created = 0;
        for (int i = 0; i < 4; i++) {
                pass(t.b, s, d, 16, &st);
                destroyed += st.destroyed;
                created += st.created;
        }
        assert_int_equal(destroyed, 1);
        assert_int_equal(created, 1);
        assert_int_equal(kerf_backend_mig_list(t.b, 0, l, 8), 1);
        assert_int_equal(l[0].profile_id, P_7G);
        assert_int_equal(kerf_sched_task_get(s, big, &ti), 0);
        assert_int_equal(ti.state, KERF_TASK_RUNNING);
        assert_int_equal(kerf_sched_check(s, err, sizeof(err)), 0);
        kerf_sched_free(s);
        bt_teardown(&t);
}

/* Instances made outside the scheduler (a previous kerfd, an operator) are adopted once. */
static void test_adopt(void **state)
{
        bt t;
        kerf_sched *s;
        kerf_backend_sync_stats st;
        kerf_unit_info u[8];
        (void)state;
        assert_int_equal(bt_setup(&t, KERF_TEST_NVML, false), 0);
        assert_int_equal(kerf_backend_mig_create(t.b, 0, P_2G, 4, NULL), 0);
        assert_int_equal(kerf_backend_mig_create(t.b, 0, P_1G, 0, NULL), 0);
        s = new_sched(&t);
        assert_int_equal(kerf_backend_sync_sched(t.b, s, NULL, 0, NULL, &st), 0);
        assert_int_equal(st.adopted, 2);
        assert_int_equal(kerf_sched_unit_list(s, 0, u, 8), 2);
        assert_int_equal(kerf_backend_sync_sched(t.b, s, NULL, 0, NULL, &st), 0);
        assert_int_equal(st.adopted, 0);
        kerf_sched_free(s);
        bt_teardown(&t);
}

/* The backend refuses a create (someone took the slices behind the scheduler's back): the
 * refusal reaches the scheduler, which sends the task back to pending. */
static void test_refusal(void **state)
{
        bt t;
        kerf_sched *s;
        kerf_decision d[16];
        int res[16];
        kerf_task_info ti;
        kerf_backend_sync_stats st;
        (void)state;
        assert_int_equal(bt_setup(&t, KERF_TEST_NVML, false), 0);
        s = new_sched(&t);
        uint64_t task = submit_mig(s, "7g.141gb");
        int n = kerf_sched_step(s, d, 16);
        assert_true(n >= 1);
        /* behind the scheduler's back */
        unsigned gi;
        assert_int_equal(kerf_sim_gi_create(t.st, 0, P_1G, 6, &gi), 0);
        assert_int_equal(kerf_backend_sync_sched(t.b, s, d, (size_t)n, res, &st), 1);
        assert_int_equal(st.refused, 1);
        bool saw = false;
        for (int i = 0; i < n; i++)
                if (d[i].kind == KERF_DEC_MIG_CREATE) {
                        assert_int_equal(res[i], -KERF_ENOFIT);
                        saw = true;
                }
        assert_true(saw);
        assert_int_equal(kerf_sched_task_get(s, task, &ti), 0);
        assert_int_equal(ti.state, KERF_TASK_PENDING);
        assert_int_equal(ti.reason.code, KERF_WHY_BACKEND_REFUSED);
        kerf_sched_free(s);
        bt_teardown(&t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_end_to_end),
            cmocka_unit_test(test_adopt),
            cmocka_unit_test(test_refusal),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
