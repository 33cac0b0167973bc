/* SPDX-License-Identifier: Apache-2.0 */
/* test_backfill.c - queue modes (strict, best-effort with a starvation bound) and backfill
 * behind a blocked head, on a fake clock */
#include "helpers.h"

static uint64_t fake_ms;

static uint64_t fake_clock(void *arg)
{
        (void)arg;
        return fake_ms;
}

/* 4 whole GPUs, tenant "a", the fake clock at 0. */
static kerf_sched *setup(unsigned n_gpus)
{
        kerf_sched *s = sched_over(fleet_h200(n_gpus, 0), NULL);
        fake_ms = 0;
        kerf_sched_clock_set(s, fake_clock, NULL);
        tenant_add(s, "a", NULL, NULL, 1);
        return s;
}

static uint64_t whole(kerf_sched *s, const char *queue, unsigned gpus, uint64_t max_runtime_s)
{
        kerf_request r = req("a", KERF_WL_TRAINING, KERF_TIER_QUEUEABLE);
        r.route = KERF_UNIT_WHOLE;
        r.gpus = gpus;
        r.queue = queue;
        r.max_runtime_s = max_runtime_s;
        return submit_ok(s, &r);
}

static uint64_t pinned(kerf_sched *s, unsigned gpu, uint64_t max_runtime_s)
{
        kerf_request r = req("a", KERF_WL_TRAINING, KERF_TIER_QUEUEABLE);
        r.route = KERF_UNIT_WHOLE;
        r.n_gpu_pins = 1;
        r.gpu_pins[0] = gpu;
        r.max_runtime_s = max_runtime_s;
        return submit_ok(s, &r);
}

/* A on 2 GPUs ends at 100 s, B on 1 GPU at 1000 s, one GPU free; the head H needs 3: it is
 * expected to start at 100 s on A's GPUs and the free one. */
static void blocked_head(kerf_sched *s, uint64_t *a, uint64_t *b, uint64_t *h)
{
        *a = whole(s, NULL, 2, 100);
        *b = whole(s, NULL, 1, 1000);
        step_n(s);
        assert_int_equal(task_state(s, *a), KERF_TASK_RUNNING);
        assert_int_equal(task_state(s, *b), KERF_TASK_RUNNING);
        *h = whole(s, NULL, 3, 500);
}

static void ends_before_head(void **state)
{
        (void)state;
        kerf_sched *s = setup(4);
        uint64_t a, b, h;
        blocked_head(s, &a, &b, &h);
        fake_ms = 10000; /* 10 s later */
        uint64_t small = whole(s, NULL, 1, 50);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        const kerf_decision *st = dec_find(d, n, KERF_DEC_START, small);
        assert_non_null(st);
        assert_true(contains(st->reason.text, "backfilled: ends within 50 s"));
        assert_true(contains(st->reason.text, "expected start in 90 s"));
        assert_null(dec_find(d, n, KERF_DEC_START, h));
        assert_true(task_info(s, small).backfilled);
        assert_false(task_info(s, a).backfilled);
        /* the head's expected start is unchanged by the backfilled task */
        kerf_explain ex;
        uint64_t behind = whole(s, NULL, 1, 0);
        assert_int_equal(kerf_sched_explain(s, behind, &ex), 0);
        assert_int_equal(ex.reason.code, KERF_WHY_QUEUE_ORDER);
        assert_int_equal(ex.head_task, h);
        assert_int_equal(ex.head_start_in_s, 90);
        assert_true(contains(ex.reason.text, "expected to start in 90 s"));
        assert_true(contains(ex.reason.text, "never backfilled"));
        assert_true(contains(ex.hint, "with a max_runtime_s it may be backfilled"));
        /* the small task ends, then A at its max_runtime: the head starts at its time */
        fake_ms = 60000;
        assert_int_equal(kerf_sched_finish(s, small), 0);
        step_n(s);
        assert_int_equal(task_state(s, h), KERF_TASK_PENDING);
        fake_ms = 100000;
        assert_int_equal(kerf_sched_finish(s, a), 0);
        n = step_all(s, d, DEC_MAX);
        assert_non_null(dec_find(d, n, KERF_DEC_START, h));
        assert_false(task_info(s, h).backfilled);
        /* the task without max_runtime_s waited behind the head and did not start */
        assert_int_equal(task_state(s, behind), KERF_TASK_PENDING);
        kerf_sched_free(s);
}

static void would_delay_head(void **state)
{
        (void)state;
        kerf_sched *s = setup(4);
        uint64_t a, b, h;
        blocked_head(s, &a, &b, &h);
        /* runs up to 200 s on the GPU the head needs at 100 s */
        uint64_t small = whole(s, NULL, 1, 200);
        step_n(s);
        assert_int_equal(task_state(s, small), KERF_TASK_PENDING);
        kerf_task_info ti = task_info(s, small);
        assert_int_equal(ti.reason.code, KERF_WHY_QUEUE_ORDER);
        assert_int_equal(ti.reason.other_task, h);
        assert_true(contains(ti.reason.text, "expected to start in 100 s"));
        assert_true(contains(ti.reason.text, "could delay it"));
        kerf_explain ex;
        assert_int_equal(kerf_sched_explain(s, small, &ex), 0);
        assert_int_equal(ex.reason.code, KERF_WHY_QUEUE_ORDER);
        assert_int_equal(ex.head_start_in_s, 100);
        /* exactly at the head's expected start is still safe */
        uint64_t fits = whole(s, NULL, 1, 100);
        step_n(s);
        assert_int_equal(task_state(s, fits), KERF_TASK_RUNNING);
        assert_int_equal(task_state(s, small), KERF_TASK_PENDING);
        kerf_sched_free(s);
}

/* The first candidate fits but would delay the head (its reservation is computed then); the
 * next one is still tried, and backfilled. */
static void unsafe_then_safe_candidate(void **state)
{
        (void)state;
        kerf_sched *s = setup(4);
        uint64_t a, b, h;
        blocked_head(s, &a, &b, &h);
        kerf_request r = req("a", KERF_WL_TRAINING, KERF_TIER_QUEUEABLE);
        r.route = KERF_UNIT_WHOLE;
        r.max_runtime_s = 200;
        r.priority = -1; /* behind h, ahead of c2 */
        uint64_t c1 = submit_ok(s, &r);
        r.max_runtime_s = 50;
        r.priority = -2;
        uint64_t c2 = submit_ok(s, &r);
        step_n(s);
        assert_int_equal(task_state(s, c1), KERF_TASK_PENDING);
        assert_int_equal(task_info(s, c1).reason.code, KERF_WHY_QUEUE_ORDER);
        assert_int_equal(task_state(s, c2), KERF_TASK_RUNNING);
        assert_true(task_info(s, c2).backfilled);
        assert_int_equal(task_info(s, a).reason.code, KERF_WHY_PLACED);
        assert_int_equal(task_info(s, b).reason.code, KERF_WHY_PLACED);
        kerf_sched_free(s);
}

static void no_max_runtime_not_backfilled(void **state)
{
        (void)state;
        kerf_sched *s = setup(4);
        uint64_t a, b, h;
        blocked_head(s, &a, &b, &h);
        uint64_t small = whole(s, NULL, 1, 0);
        step_n(s);
        assert_int_equal(task_state(s, small), KERF_TASK_PENDING);
        assert_int_equal(task_state(s, h), KERF_TASK_PENDING);
        kerf_sched_free(s);
}

static void strict_without_backfill(void **state)
{
        (void)state;
        kerf_sched *s = setup(4);
        kerf_queue_spec q;
        kerf_queue_spec_default(&q);
        q.backfill = false;
        assert_int_equal(kerf_sched_queue_set(s, "default", &q), 0);
        uint64_t a, b, h;
        blocked_head(s, &a, &b, &h);
        uint64_t small = whole(s, NULL, 1, 10);
        step_n(s);
        assert_int_equal(task_state(s, small), KERF_TASK_PENDING);
        kerf_explain ex;
        assert_int_equal(kerf_sched_explain(s, small, &ex), 0);
        assert_true(contains(ex.reason.text, "backfill is off"));
        /* turned on: the next pass backfills it */
        q.backfill = true;
        assert_int_equal(kerf_sched_queue_set(s, "default", &q), 0);
        step_n(s);
        assert_int_equal(task_state(s, small), KERF_TASK_RUNNING);
        kerf_sched_free(s);
}

/* The head waits for a task without max_runtime_s: it has no expected start, so only a task
 * that keeps off the GPUs it will take may pass it. */
static void unknown_start_disjoint_only(void **state)
{
        (void)state;
        kerf_sched *s = setup(4);
        uint64_t u = pinned(s, 0, 0);
        step_n(s);
        assert_int_equal(task_state(s, u), KERF_TASK_RUNNING);
        uint64_t h = pinned(s, 0, 100);
        uint64_t other = whole(s, NULL, 1, 100000);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        const kerf_decision *st = dec_find(d, n, KERF_DEC_START, other);
        assert_non_null(st);
        assert_true(contains(st->reason.text, "uses none of the GPUs task"));
        assert_int_equal(task_state(s, h), KERF_TASK_PENDING);
        kerf_explain ex;
        uint64_t w = whole(s, NULL, 1, 0);
        assert_int_equal(kerf_sched_explain(s, w, &ex), 0);
        assert_int_equal(ex.head_start_in_s, -1);
        assert_true(contains(ex.reason.text, "no expected start"));
        kerf_sched_free(s);
}

static void unknown_start_overlap_waits(void **state)
{
        (void)state;
        kerf_sched *s = setup(2);
        uint64_t u = whole(s, NULL, 1, 0);
        step_n(s);
        assert_int_equal(task_state(s, u), KERF_TASK_RUNNING);
        uint64_t h = whole(s, NULL, 2, 100);
        uint64_t small = whole(s, NULL, 1, 1);
        step_n(s);
        assert_int_equal(task_state(s, h), KERF_TASK_PENDING);
        assert_int_equal(task_state(s, small), KERF_TASK_PENDING);
        kerf_task_info ti = task_info(s, small);
        assert_int_equal(ti.reason.code, KERF_WHY_QUEUE_ORDER);
        assert_true(contains(ti.reason.text, "no expected start"));
        kerf_sched_free(s);
}

static void best_effort_skips_and_starvation_bound(void **state)
{
        (void)state;
        kerf_sched *s = setup(2);
        kerf_queue_spec q;
        kerf_queue_spec_default(&q);
        q.mode = KERF_QUEUE_BEST_EFFORT;
        q.starvation_s = 100;
        assert_int_equal(kerf_sched_queue_set(s, "be", &q), 0);
        kerf_queue_spec got;
        assert_int_equal(kerf_sched_queue_get(s, "be", &got), 0);
        assert_int_equal(got.mode, KERF_QUEUE_BEST_EFFORT);
        assert_int_equal(kerf_sched_queue_get(s, "other", &got), 0);
        assert_int_equal(got.mode, KERF_QUEUE_STRICT);
        assert_true(got.backfill);
        uint64_t a = whole(s, "be", 1, 1000); /* ends at 1000 s */
        step_n(s);
        uint64_t h = whole(s, "be", 2, 0);
        fake_ms = 10000;
        /* no max_runtime: best-effort does not need one */
        uint64_t s1 = whole(s, "be", 1, 0);
        kerf_decision d[DEC_MAX];
        size_t n = step_all(s, d, DEC_MAX);
        const kerf_decision *st = dec_find(d, n, KERF_DEC_START, s1);
        assert_non_null(st);
        assert_true(contains(st->reason.text, "best-effort queue"));
        assert_true(task_info(s, s1).backfilled);
        assert_int_equal(task_state(s, h), KERF_TASK_PENDING);
        /* within the bound a waiting task's explanation is its own fit, not the head */
        uint64_t s2 = whole(s, "be", 1, 0);
        kerf_explain ex;
        step_n(s);
        assert_int_equal(kerf_sched_explain(s, s2, &ex), 0);
        assert_int_not_equal(ex.reason.code, KERF_WHY_QUEUE_ORDER);
        /* the head has now waited 200 s > 100 s: the queue is strict for it */
        fake_ms = 200000;
        assert_int_equal(kerf_sched_finish(s, s1), 0);
        step_n(s);
        assert_int_equal(task_state(s, s2), KERF_TASK_PENDING);
        assert_int_equal(kerf_sched_explain(s, s2, &ex), 0);
        assert_int_equal(ex.reason.code, KERF_WHY_QUEUE_ORDER);
        assert_int_equal(ex.head_start_in_s, 800);
        /* ... and backfill still lets a task that ends before the head's start pass it */
        uint64_t s3 = whole(s, "be", 1, 800);
        step_n(s);
        assert_int_equal(task_state(s, s3), KERF_TASK_RUNNING);
        assert_int_equal(task_state(s, s2), KERF_TASK_PENDING);
        fake_ms = 1000000;
        assert_int_equal(kerf_sched_finish(s, s3), 0);
        assert_int_equal(kerf_sched_finish(s, a), 0);
        step_n(s);
        assert_int_equal(task_state(s, h), KERF_TASK_RUNNING);
        kerf_sched_free(s);
}

/* Tasks behind a blocked head are tried in priority order, then submission order. */
static void priority_order_among_candidates(void **state)
{
        (void)state;
        kerf_sched *s = setup(4);
        uint64_t a = whole(s, NULL, 2, 100), b = whole(s, NULL, 1, 1000);
        step_n(s);
        kerf_request r = req("a", KERF_WL_TRAINING, KERF_TIER_QUEUEABLE);
        r.route = KERF_UNIT_WHOLE;
        r.gpus = 3;
        r.priority = 5;
        uint64_t h = submit_ok(s, &r);
        r.gpus = 1;
        r.max_runtime_s = 10;
        r.priority = 0;
        uint64_t c1 = submit_ok(s, &r);
        r.priority = 2;
        uint64_t c2 = submit_ok(s, &r);
        step_n(s);
        assert_int_equal(task_state(s, h), KERF_TASK_PENDING);
        assert_int_equal(task_state(s, c2), KERF_TASK_RUNNING);
        assert_true(task_info(s, c2).backfilled);
        assert_int_equal(task_state(s, c1), KERF_TASK_PENDING);
        (void)a;
        (void)b;
        kerf_sched_free(s);
}

/* Backfill comes after every head that can start (Slurm's order): another queue's head that
 * fits goes before a candidate behind a blocked head, even a candidate of an older queue. */
static void heads_before_backfill(void **state)
{
        (void)state;
        kerf_sched *s = setup(4);
        uint64_t a, b, h;
        blocked_head(s, &a, &b, &h);
        uint64_t c = whole(s, NULL, 1, 50);   /* backfillable behind h */
        uint64_t o = whole(s, "other", 1, 0); /* head of another queue: fits */
        step_n(s);
        assert_int_equal(task_state(s, o), KERF_TASK_RUNNING);
        assert_false(task_info(s, o).backfilled);
        assert_int_equal(task_state(s, c), KERF_TASK_PENDING);
        assert_int_equal(task_state(s, h), KERF_TASK_PENDING);
        kerf_sched_free(s);
}

static void queue_set_validates(void **state)
{
        (void)state;
        kerf_sched *s = setup(1);
        kerf_queue_spec q;
        kerf_queue_spec_default(&q);
        assert_int_equal(q.mode, KERF_QUEUE_STRICT);
        assert_true(q.backfill);
        assert_int_equal(q.starvation_s, 3600);
        q.mode = KERF_QUEUE_BEST_EFFORT;
        q.starvation_s = 0;
        assert_int_equal(kerf_sched_queue_set(s, "x", &q), -EINVAL);
        q.starvation_s = 10;
        assert_int_equal(kerf_sched_queue_set(s, "", &q), -EINVAL);
        q.mode = KERF_QUEUE_MODE_COUNT;
        assert_int_equal(kerf_sched_queue_set(s, "x", &q), -EINVAL);
        kerf_queue_mode m;
        assert_int_equal(kerf_queue_mode_parse("best-effort", &m), 0);
        assert_int_equal(m, KERF_QUEUE_BEST_EFFORT);
        assert_int_equal(kerf_queue_mode_parse("fifo", &m), -EINVAL);
        assert_string_equal(kerf_queue_mode_name(KERF_QUEUE_STRICT), "strict");
        kerf_sched_free(s);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(ends_before_head),
            cmocka_unit_test(would_delay_head),
            cmocka_unit_test(unsafe_then_safe_candidate),
            cmocka_unit_test(no_max_runtime_not_backfilled),
            cmocka_unit_test(strict_without_backfill),
            cmocka_unit_test(unknown_start_disjoint_only),
            cmocka_unit_test(unknown_start_overlap_waits),
            cmocka_unit_test(best_effort_skips_and_starvation_bound),
            cmocka_unit_test(priority_order_among_candidates),
            cmocka_unit_test(heads_before_backfill),
            cmocka_unit_test(queue_set_validates),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
