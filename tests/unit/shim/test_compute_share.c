/* SPDX-License-Identifier: Apache-2.0 */
/* test_compute_share.c - compute shares 10..90 % held within +-5 points in every 1 s window */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_compute.h"

/*
 * Each run: up to 8 children side by side, one per simulated GPU, each in its own slice at
 * its target, each saturating its GPU (it would take 100 % without the shim). After 0.5 s of
 * warm-up, every 1 s window (100 ms steps) of the child's simulated engine time must be within
 * 5 points of the target, and the mean absolute error over the windows at most 2 points.
 */

#define RUN_MS 3000

typedef struct spec {
        unsigned pct;
        const char *mode;
        const char *cost_us;
        const char *env;
        double worst, mae, mean; /* out */
        int nwin;
} spec;

static void run(spec *sp, unsigned n)
{
        ct_node nd;
        assert_int_equal(ct_setup(&nd), 0);
        char ms[16];
        snprintf(ms, sizeof(ms), "%d", RUN_MS);
        int idx[CT_GPUS];
        uint64_t t_ready[CT_GPUS];
        for (unsigned i = 0; i < n; i++) {
                const char *args[] = {sp[i].mode, sp[i].cost_us, ms, NULL};
                idx[i] = ct_spawn(&nd, (int)i, sp[i].pct, sp[i].pct, -1, sp[i].env, args);
                assert_true(idx[i] >= 0);
        }
        for (unsigned i = 0; i < n; i++) {
                assert_true(ct_expect(&nd.p[idx[i]], "ready", 10000));
                t_ready[i] = ct_now();
        }
        bool ok = true;
        for (unsigned i = 0; i < n; i++)
                ok &= ct_wait(&nd.p[idx[i]]);
        for (unsigned i = 0; i < n; i++) {
                ct_proc *p = &nd.p[idx[i]];
                sp[i].nwin = ct_windows(&nd, p, t_ready[i] + 500 * CT_MS,
                                        t_ready[i] + (RUN_MS - 100) * CT_MS, sp[i].pct,
                                        &sp[i].worst, &sp[i].mae, &sp[i].mean);
                double charged = (double)atomic_load(&p->r->device_time_ns);
                double eng = p->n ? (double)p->eng[p->n - 1] : 0;
                print_message("%-5s %3sus %s target %2u%%: mean %5.1f%%  worst window %4.1f "
                              "points  MAE %4.2f  (%d windows, held %llu launches, charged/engine "
                              "%.3f)\n",
                              sp[i].mode, sp[i].cost_us, sp[i].env ? sp[i].env : "", sp[i].pct,
                              sp[i].mean, sp[i].worst, sp[i].mae, sp[i].nwin,
                              (unsigned long long)atomic_load(&p->r->held_launches),
                              eng > 0 ? charged / eng : 0);
        }
        ct_teardown(&nd);
        assert_true(ok);
}

static bool held(const spec *sp, unsigned n)
{
        for (unsigned i = 0; i < n; i++)
                if (sp[i].nwin < 10 || sp[i].worst > 5.0 || sp[i].mae > 2.0)
                        return false;
        return true;
}

static void check(const spec *sp, unsigned n)
{
        for (unsigned i = 0; i < n; i++) {
                assert_true(sp[i].nwin >= 10);
                assert_true(sp[i].worst <= 5.0);
                assert_true(sp[i].mae <= 2.0);
        }
}

#define V "KERF_SIM_CLOCK=virtual"

/* Virtual clock (kernels take no wall time, events carry exact engine times): the limiter's
 * own accuracy, whatever the load of the machine running the test. Every launch kind. The
 * kernels are long enough (1-5 ms of device time) that a child needs few launches a second to
 * ask for more than its share even when the 2-core host is busy. */
static void t_virtual_launch_kinds(void **state)
{
        (void)state;
        spec sp[] = {{10, "async", "2000", V, 0, 0, 0, 0}, {30, "async", "2000", V, 0, 0, 0, 0},
                     {50, "async", "2000", V, 0, 0, 0, 0}, {70, "async", "2000", V, 0, 0, 0, 0},
                     {90, "async", "2000", V, 0, 0, 0, 0}, {40, "ex", "1000", V, 0, 0, 0, 0},
                     {60, "coop", "2000", V, 0, 0, 0, 0},  {20, "sync", "5000", V, 0, 0, 0, 0}};
        run(sp, 8);
        check(sp, 8);
}

/* Graph launches at every target; loops that synchronise after every launch. */
static void t_virtual_graph_sync(void **state)
{
        (void)state;
        spec sp[] = {{10, "graph", "1500", V, 0, 0, 0, 0}, {30, "graph", "1500", V, 0, 0, 0, 0},
                     {50, "graph", "1500", V, 0, 0, 0, 0}, {70, "graph", "1500", V, 0, 0, 0, 0},
                     {90, "graph", "1500", V, 0, 0, 0, 0}, {50, "sync", "5000", V, 0, 0, 0, 0},
                     {70, "sync", "3000", V, 0, 0, 0, 0},  {90, "sync", "5000", V, 0, 0, 0, 0}};
        run(sp, 8);
        check(sp, 8);
}

/* The default clock: kernels take wall time on a time-sliced engine and events carry the
 * engine's wall-clock timestamps (with its scheduling noise). Moderate targets, fewer
 * children side by side (the machine has 2 cores); a loop that synchronises after every
 * launch at 70 % (its timing pairs start on an idle stream: an overcharge reads low here). */
static void t_default_clock(void **state)
{
        (void)state;
        if (ct_overloaded())
                skip();
        spec sp[] = {{30, "async", "500", NULL, 0, 0, 0, 0},
                     {50, "async", "500", NULL, 0, 0, 0, 0},
                     {40, "graph", "300", NULL, 0, 0, 0, 0},
                     {70, "sync", "2000", NULL, 0, 0, 0, 0}};
        run(sp, 4);
        if (!held(sp, 4)) {
                /* wall-clock windows on a shared 2-core host: a miss must repeat to count */
                fprintf(stderr, "compute test: a default-clock share was off once: measuring "
                                "again\n");
                run(sp, 4); /* run() writes every result field anew */
        }
        check(sp, 4);
}

/* The test switch that breaks the limiter must make the share check fail. */
static void t_broken_limiter_fails(void **state)
{
        (void)state;
        spec sp[] = {{50, "async", "500", V " KERF_SHIM_TEST_BREAK_LIMITER=1", 0, 0, 0, 0},
                     {50, "async", "500", "KERF_SHIM_TEST_BREAK_LIMITER=1", 0, 0, 0, 0}};
        run(sp, 2);
        for (int i = 0; i < 2; i++) {
                assert_true(sp[i].nwin >= 10);
                assert_true(sp[i].worst > 5.0);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(t_virtual_launch_kinds),
            cmocka_unit_test(t_virtual_graph_sync),
            cmocka_unit_test(t_default_clock),
            cmocka_unit_test(t_broken_limiter_fails),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
