/* SPDX-License-Identifier: Apache-2.0 */
/* test_control.c - held tasks (never started, no queue head, released in order), updates of
 * pending tasks, and draining GPUs (nothing new placed, running work kept, resume places) */
#include "helpers.h"

/* n whole H200s, tenant "a". */
static kerf_sched *setup(unsigned n_gpus)
{
        kerf_sched *s = sched_over(fleet_h200(n_gpus, 0), NULL);
        tenant_add(s, "a", NULL, NULL, 1);
        return s;
}

static uint64_t whole(kerf_sched *s, unsigned gpus, int prio)
{
        kerf_request r = req("a", KERF_WL_TRAINING, KERF_TIER_QUEUEABLE);
        r.route = KERF_UNIT_WHOLE;
        r.gpus = gpus;
        r.priority = prio;
        return submit_ok(s, &r);
}

static void held_never_starts(void **state)
{
        (void)state;
        kerf_sched *s = setup(2);
        uint64_t a = whole(s, 1, 0);
        assert_int_equal(kerf_sched_task_hold(s, a, "held by admin"), 0);
        check_ok(s);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        assert_int_equal(n, 0);
        kerf_task_info ti = task_info(s, a);
        assert_int_equal(ti.state, KERF_TASK_PENDING);
        assert_true(ti.held);
        assert_int_equal(ti.reason.code, KERF_WHY_HELD);
        assert_string_equal(ti.reason.text, "held by admin");
        assert_string_equal(kerf_why_name(KERF_WHY_HELD), "held");
        kerf_explain ex;
        assert_int_equal(kerf_sched_explain(s, a, &ex), 0);
        assert_int_equal(ex.reason.code, KERF_WHY_HELD);
        assert_true(contains(ex.hint, "kerf release"));
        /* holding again changes the words only; releasing starts it */
        assert_int_equal(kerf_sched_task_hold(s, a, "held by tenant"), 0);
        assert_string_equal(task_info(s, a).reason.text, "held by tenant");
        assert_int_equal(kerf_sched_task_release(s, a), 0);
        assert_false(task_info(s, a).held);
        assert_int_equal(kerf_sched_task_release(s, a), -KERF_ESTATE);
        n = step_all(s, d, DEC_MAX);
        assert_non_null(dec_find(d, n, KERF_DEC_START, a));
        assert_int_equal(task_state(s, a), KERF_TASK_RUNNING);
        /* only pending tasks */
        assert_int_equal(kerf_sched_task_hold(s, a, NULL), -KERF_ESTATE);
        assert_int_equal(kerf_sched_task_hold(s, 999, NULL), -ENOENT);
        kerf_task_update u = {.set_priority = true, .priority = 5};
        assert_int_equal(kerf_sched_task_update(s, a, &u, NULL), -KERF_ESTATE);
        kerf_sched_free(s);
}

/* A strict queue: a held head that could not run anyway does not block a small task behind it
 * (without the hold, the big head blocks it: Kueue's StrictFIFO). */
static void held_head_does_not_block(void **state)
{
        (void)state;
        kerf_sched *s = setup(2);
        uint64_t busy = whole(s, 1, 0);
        step_n(s);
        assert_int_equal(task_state(s, busy), KERF_TASK_RUNNING);
        uint64_t big = whole(s, 2, 10); /* does not fit while `busy` runs */
        uint64_t small = whole(s, 1, 0);
        step_n(s);
        assert_int_equal(task_state(s, small), KERF_TASK_PENDING);
        kerf_explain ex;
        assert_int_equal(kerf_sched_explain(s, small, &ex), 0);
        assert_int_equal(ex.reason.code, KERF_WHY_QUEUE_ORDER);
        assert_int_equal(kerf_sched_task_hold(s, big, "held by tenant"), 0);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        assert_non_null(dec_find(d, n, KERF_DEC_START, small));
        assert_int_equal(task_state(s, big), KERF_TASK_PENDING);
        /* a cancelled held task leaves cleanly */
        assert_int_equal(kerf_sched_cancel(s, big), 0);
        check_ok(s);
        kerf_sched_stats st;
        kerf_sched_stats_get(s, &st);
        assert_int_equal(st.pending, 0);
        kerf_sched_free(s);
}

/* Released tasks go back in their place: by priority, then submission order. */
static void release_keeps_order(void **state)
{
        (void)state;
        kerf_sched *s = setup(1);
        uint64_t run = whole(s, 1, 0);
        step_n(s);
        assert_int_equal(task_state(s, run), KERF_TASK_RUNNING);
        uint64_t first = whole(s, 1, 0);
        uint64_t second = whole(s, 1, 0);
        assert_int_equal(kerf_sched_task_hold(s, first, NULL), 0);
        assert_int_equal(kerf_sched_task_release(s, first), 0);
        check_ok(s);
        assert_int_equal(kerf_sched_finish(s, run), 0);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        assert_non_null(dec_find(d, n, KERF_DEC_START, first));
        assert_null(dec_find(d, n, KERF_DEC_START, second));
        kerf_sched_free(s);
}

/* update: a new priority reorders the queue; bounds checked; other fields reach the task. */
static void update_reorders(void **state)
{
        (void)state;
        kerf_sched *s = setup(1);
        uint64_t run = whole(s, 1, 0);
        step_n(s);
        uint64_t x = whole(s, 1, 5);
        uint64_t y = whole(s, 1, 0);
        kerf_task_update u = {.set_priority = true, .priority = 1001};
        kerf_reason why;
        assert_int_equal(kerf_sched_task_update(s, y, &u, &why), -EINVAL);
        assert_true(contains(why.text, "-1000..1000"));
        assert_int_equal(task_info(s, y).priority, 0);
        u.priority = 9;
        u.set_max_runtime = true;
        u.max_runtime_s = 600;
        u.set_idle_timeout = true;
        u.idle_timeout_s = 60;
        u.set_preemptible = true;
        u.preemptible = true;
        assert_int_equal(kerf_sched_task_update(s, y, &u, &why), 0);
        check_ok(s);
        kerf_task_info ti = task_info(s, y);
        assert_int_equal(ti.priority, 9);
        assert_int_equal(ti.max_runtime_s, 600);
        assert_int_equal(ti.idle_timeout_s, 60);
        assert_true(ti.preemptible);
        kerf_explain ex;
        assert_int_equal(kerf_sched_explain(s, x, &ex), 0);
        assert_int_equal(ex.queue_position, 2);
        assert_int_equal(kerf_sched_finish(s, run), 0);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        assert_non_null(dec_find(d, n, KERF_DEC_START, y));
        assert_null(dec_find(d, n, KERF_DEC_START, x));
        /* a held task can be updated too, and stays out of its queue */
        assert_int_equal(kerf_sched_task_hold(s, x, NULL), 0);
        u = (kerf_task_update){.set_priority = true, .priority = -3};
        assert_int_equal(kerf_sched_task_update(s, x, &u, NULL), 0);
        check_ok(s);
        assert_true(task_info(s, x).held);
        assert_int_equal(task_info(s, x).priority, -3);
        kerf_sched_free(s);
}

static void drain_places_nothing(void **state)
{
        (void)state;
        kerf_sched *s = setup(2);
        uint64_t on0 = whole(s, 1, 0);
        step_n(s);
        kerf_task_info ti = task_info(s, on0);
        assert_int_equal(ti.state, KERF_TASK_RUNNING);
        unsigned busy = ti.gpus[0], other = 1 - busy;
        /* drain the free GPU: a new task finds no room; the running one is untouched */
        assert_int_equal(kerf_sched_gpu_drain(s, other, true), 0);
        assert_true(gpu_state(s, other).draining);
        assert_false(gpu_state(s, busy).draining);
        assert_int_equal(kerf_sched_gpu_drain(s, 7, true), -EINVAL);
        uint64_t next = whole(s, 1, 0);
        step_n(s);
        assert_int_equal(task_state(s, next), KERF_TASK_PENDING);
        assert_int_equal(task_state(s, on0), KERF_TASK_RUNNING);
        char words[64];
        snprintf(words, sizeof(words), "GPU %u is draining", other);
        assert_true(contains(task_info(s, next).reason.text, words));
        kerf_explain ex;
        assert_int_equal(kerf_sched_explain(s, next, &ex), 0);
        assert_true(contains(ex.reason.text, words));
        /* draining the busy GPU keeps its task running */
        assert_int_equal(kerf_sched_gpu_drain(s, busy, true), 0);
        step_n(s);
        assert_int_equal(task_state(s, on0), KERF_TASK_RUNNING);
        assert_int_equal(kerf_sched_finish(s, on0), 0);
        step_n(s);
        assert_int_equal(task_state(s, next), KERF_TASK_PENDING); /* both drain now */
        /* resume: placed on the resumed GPU */
        assert_int_equal(kerf_sched_gpu_drain(s, other, false), 0);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        assert_non_null(dec_find(d, n, KERF_DEC_START, next));
        assert_int_equal(task_info(s, next).gpus[0], other);
        kerf_sched_free(s);
}

/* Preemption does not make room on a draining GPU. */
static void drain_blocks_preemption(void **state)
{
        (void)state;
        kerf_sched *s = setup(1);
        kerf_request r = req("a", KERF_WL_TRAINING, KERF_TIER_QUEUEABLE);
        r.route = KERF_UNIT_WHOLE;
        r.preemptible = true;
        uint64_t low = submit_ok(s, &r);
        step_n(s);
        assert_int_equal(task_state(s, low), KERF_TASK_RUNNING);
        assert_int_equal(kerf_sched_gpu_drain(s, 0, true), 0);
        uint64_t high = whole(s, 1, 100);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        assert_null(dec_find(d, n, KERF_DEC_PREEMPT, low));
        assert_int_equal(task_state(s, high), KERF_TASK_PENDING);
        assert_int_equal(kerf_sched_gpu_drain(s, 0, false), 0);
        n = step_all(s, d, DEC_MAX);
        assert_non_null(dec_find(d, n, KERF_DEC_PREEMPT, low));
        kerf_sched_free(s);
}

/* Shares: a draining GPU takes no new slice either. */
static void drain_shares(void **state)
{
        (void)state;
        kerf_sched *s = setup(1);
        assert_int_equal(kerf_sched_gpu_drain(s, 0, true), 0);
        kerf_request r = req("a", KERF_WL_INFERENCE, KERF_TIER_QUEUEABLE);
        r.route = KERF_UNIT_SLICE;
        r.mem_bytes = 10 * KERF_GIB;
        r.compute_pct = 10;
        uint64_t t = submit_ok(s, &r);
        step_n(s);
        assert_int_equal(task_state(s, t), KERF_TASK_PENDING);
        assert_true(contains(task_info(s, t).reason.text, "GPU 0 is draining"));
        assert_int_equal(kerf_sched_gpu_drain(s, 0, false), 0);
        step_n(s);
        assert_int_equal(task_state(s, t), KERF_TASK_RUNNING);
        kerf_sched_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(held_never_starts),    cmocka_unit_test(held_head_does_not_block),
            cmocka_unit_test(release_keeps_order),  cmocka_unit_test(update_reorders),
            cmocka_unit_test(drain_places_nothing), cmocka_unit_test(drain_blocks_preemption),
            cmocka_unit_test(drain_shares),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
