/* SPDX-License-Identifier: Apache-2.0 */
/* test_compute_ctl.c - shares between slices with kerfd's controller: 30:70, burst and pull
 * back, yield to a high-impact neighbour, freeze */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "slicectl.h"
#include "test_compute.h"

#define V "KERF_SIM_CLOCK=virtual"

/* kerfd's controller loop, as a thread of the test: kerf_slicectl_step every 10 ms. */
typedef struct ctl {
        ct_node *nd;
        kerf_slicectl_slice s[4];
        size_t n;
        atomic_bool stop;
        pthread_mutex_t mu;
        pthread_t th;
} ctl;

static void *ctl_main(void *arg)
{
        ctl *c = arg;
        kerf_slicectl_params p;
        kerf_slicectl_params_default(&p);
        while (!atomic_load(&c->stop)) {
                pthread_mutex_lock(&c->mu);
                kerf_slicectl_step(c->s, c->n, ct_now(), &p);
                pthread_mutex_unlock(&c->mu);
                ct_sleep_ms(10);
        }
        return NULL;
}

static void ctl_start(ctl *c)
{
        pthread_mutex_init(&c->mu, NULL);
        atomic_store(&c->stop, false);
        assert_int_equal(pthread_create(&c->th, NULL, ctl_main, c), 0);
}

static void ctl_add(ctl *c, struct kerf_slice_region *r, int gpu, bool hi, bool be)
{
        pthread_mutex_lock(&c->mu);
        c->s[c->n] = (kerf_slicectl_slice){.region = r,
                                           .task_id = c->n + 1,
                                           .gpu = gpu,
                                           .high_impact = hi,
                                           .best_effort = be,
                                           .started_ns = ct_now()};
        c->n++;
        pthread_mutex_unlock(&c->mu);
}

static void ctl_stop(ctl *c)
{
        atomic_store(&c->stop, true);
        pthread_join(c->th, NULL);
}

/* Two slices at 30 and 70 on one GPU, both saturating: 30:70 +- 5 points in every 1 s
 * window. On the virtual clock (the engine has room for both) each also gets its target; on
 * the default clock the GPU is full and the simulated engine may lose a little wall time to its
 * own host overhead, so the split is what is checked. */
/* true when the split held (the virtual clock asserts it; the wall clock answers, so that a
 * miss can be measured again: one round on a loaded 2-core host can be host noise) */
static bool two_slices(const char *env)
{
        ct_node nd;
        assert_int_equal(ct_setup(&nd), 0);
        /* 2 ms kernels on the virtual clock: few launches a second, even on a busy host */
        const char *args[] = {"async", env ? "2000" : "500", "3000", NULL};
        int a = ct_spawn(&nd, 0, 30, 30, -1, env, args);
        int b = ct_spawn(&nd, 0, 70, 70, -1, env, args);
        assert_true(a >= 0 && b >= 0);
        assert_true(ct_expect(&nd.p[a], "ready", 10000));
        assert_true(ct_expect(&nd.p[b], "ready", 10000));
        uint64_t t0 = ct_now();
        bool ok = ct_wait(&nd.p[a]) & ct_wait(&nd.p[b]);
        /* every 1 s window: the 30 % slice's part of the device time both got, and each one's
         * share of the GPU (on the default clock the simulated engine may lose a little wall
         * time to its own host overhead, so two slices that fill the GPU can get a little less
         * than their targets) */
        double worst = 0, sa = 0, sb = 0;
        int nw = 0;
        for (uint64_t t = t0 + 500 * CT_MS; t + CT_SEC <= t0 + 2900 * CT_MS; t += 100 * CT_MS) {
                double x = ct_share(&nd, &nd.p[a], t, t + CT_SEC);
                double y = ct_share(&nd, &nd.p[b], t, t + CT_SEC);
                if (x < 0 || y < 0 || x + y <= 0)
                        continue;
                double part = 100.0 * x / (x + y);
                if (fabs(part - 30.0) > worst)
                        worst = fabs(part - 30.0);
                sa += x;
                sb += y;
                nw++;
        }
        double wa, ma, ea, wb, mb, eb;
        ct_windows(&nd, &nd.p[a], t0 + 500 * CT_MS, t0 + 2900 * CT_MS, 30, &wa, &ma, &ea);
        ct_windows(&nd, &nd.p[b], t0 + 500 * CT_MS, t0 + 2900 * CT_MS, 70, &wb, &mb, &eb);
        print_message("%s: ", env ? env : "default clock");
        print_message(
            "30%% slice: mean %.1f%%, 70%% slice: mean %.1f%% of the GPU; split %.1f:%.1f, "
            "worst window %.1f points off 30:70 (%d windows)\n",
            nw ? sa / nw : 0, nw ? sb / nw : 0, 100 * sa / (sa + sb), 100 * sb / (sa + sb), worst,
            nw);
        ct_teardown(&nd);
        assert_true(ok);
        assert_true(nw >= 10);
        if (env) { /* virtual clock: the split, and each at its target too */
                assert_true(worst <= 5.0);
                assert_true(sa / nw >= 25.0 && sb / nw >= 60.0);
                assert_true(wa <= 5.0 && wb <= 5.0);
                assert_true(ma <= 2.0 && mb <= 2.0);
                return true;
        }
        return worst <= 5.0 && sa / nw >= 25.0 && sb / nw >= 60.0;
}

static void t_two_slices_virtual(void **state)
{
        (void)state;
        assert_true(two_slices("KERF_SIM_CLOCK=virtual"));
}

static void t_two_slices(void **state)
{
        (void)state;
        if (ct_overloaded())
                skip();
        if (!two_slices(NULL)) {
                fprintf(stderr, "compute test: default-clock 30:70 split off once: measuring "
                                "again\n");
                assert_true(two_slices(NULL));
        }
}

/* A burstable 20 -> 60 slice alone gets >= 55 %; a guaranteed neighbour that takes the rest
 * of the GPU (80 %) starts: within one 100 ms window the burster is at <= 25 %. (Virtual
 * clock: what is checked is the controller and the limiter following it, not the engine.) */
static void t_burst_pull_back(void **state)
{
        (void)state;
        ct_node nd;
        ctl c = {.nd = &nd};
        assert_int_equal(ct_setup(&nd), 0);
        ctl_start(&c);
        const char *args[] = {"async", "1000", "3500", NULL};
        int a = ct_spawn(&nd, 1, 20, 60, -1, V, args);
        assert_true(a >= 0);
        ctl_add(&c, nd.p[a].r, 1, false, false);
        assert_true(ct_expect(&nd.p[a], "ready", 10000));
        uint64_t t0 = ct_now();
        ct_sleep_ms(1600);
        double alone = ct_share(&nd, &nd.p[a], t0 + 500 * CT_MS, t0 + 1500 * CT_MS);
        const char *args2[] = {"async", "1000", "1800", NULL};
        uint64_t t1 = ct_now();
        int b = ct_spawn(&nd, 1, 80, 80, -1, V, args2);
        assert_true(b >= 0);
        ctl_add(&c, nd.p[b].r, 1, false, false);
        uint32_t allowed_after = 0;
        for (int i = 0; i < 10; i++) { /* the controller reacts on its next step */
                ct_sleep_ms(5);
                allowed_after = atomic_load(&nd.p[a].r->limits.compute_allowed_pct);
                if (allowed_after == 20)
                        break;
        }
        uint64_t t_pulled = ct_now() - t1;
        assert_true(ct_expect(&nd.p[b], "ready", 10000));
        bool ok = ct_wait(&nd.p[a]) & ct_wait(&nd.p[b]);
        ctl_stop(&c);
        double worst_after = 0;
        for (uint64_t t = t1 + 100 * CT_MS; t + 100 * CT_MS <= t1 + 1600 * CT_MS;
             t += 100 * CT_MS) {
                double s = ct_share(&nd, &nd.p[a], t, t + 100 * CT_MS);
                if (s > worst_after)
                        worst_after = s;
        }
        double nb = ct_share(&nd, &nd.p[b], t1 + 600 * CT_MS, t1 + 1600 * CT_MS);
        print_message("burster alone %.1f%%; neighbour started: allowed %u%% after %.1f ms, "
                      "burster worst 100 ms window %.1f%%, neighbour %.1f%%\n",
                      alone, allowed_after, (double)t_pulled / 1e6, worst_after, nb);
        ct_teardown(&nd);
        assert_true(ok);
        assert_true(alone >= 55.0);
        assert_int_equal(allowed_after, 20);
        assert_true(worst_after <= 25.0);
        assert_true(nb >= 75.0);
}

/* A high-impact inference loop (300 us kernel + sync, 1 ms gaps) next to a best-effort
 * saturating neighbour: its p99 latency within +10 % of running alone on the GPU. "Alone" is
 * measured with the neighbour's process already there but frozen by the controller (never on
 * the GPU), so that both runs share the 2-core host with the same processes; then the
 * neighbour is released, saturates the GPU (checked), and the loop runs again while the
 * controller makes the neighbour yield. Three rounds, alone and with interleaved; the best p99
 * of each condition is compared.
 *
 * Two clocks. On the virtual clock (env V) the latency is the loop's own event pair on the
 * shared device clock (start event before the launch, end event after the kernel): queueing
 * behind the neighbour's kernels shows there, host scheduling noise does not, so the bar is
 * strict and never skipped. On the default clock the latency is host time (launch + sync),
 * which a loaded 2-core host moves by more than 10 % from run to run: when the three "alone"
 * p99s themselves spread by more than the bar, a miss of the bar is host noise and the check
 * is skipped, saying so - a neighbour that does not yield still fails it (its 500 us kernels
 * in 2 ms slices add far more than any noise: more than 2x is never excused). */
static unsigned infer_p99(ct_node *nd, int share_with, const char *env, unsigned *p50)
{
        const char *inf[] = {"infer", "300", "1000", "1000", NULL};
        int h = ct_spawn(nd, 2, 0, 0, share_with, env, inf);
        assert_true(h >= 0);
        assert_true(ct_expect(&nd->p[h], "ready", 10000));
        unsigned p99 = 0, n = 0;
        if (env) {
                assert_true(ct_expect(&nd->p[h], "vlat", 10000));
                assert_int_equal(sscanf(nd->p[h].last, "vlat %u %u %u", p50, &p99, &n), 3);
        } else {
                assert_true(ct_expect(&nd->p[h], "lat", 10000));
                assert_int_equal(sscanf(nd->p[h].last, "lat %u %u %u", p50, &p99, &n), 3);
        }
        assert_true(n >= 200);
        assert_true(ct_wait(&nd->p[h]));
        return p99;
}

/* Runs the comparison; true when the high-impact p99 next to the yielding neighbour is within
 * the bar (the yield itself — neighbour held, < 1 % of the engine — is asserted every time). */
static bool yield_high_impact(const char *env)
{
        ct_node nd;
        ctl c = {.nd = &nd};
        assert_int_equal(ct_setup(&nd), 0);
        ctl_start(&c);
        /* the high-impact slice (its region; each run maps it) */
        char hpath[128];
        struct kerf_slice_region *hr = ct_region(&nd, hpath, sizeof(hpath), 50, 50);
        assert_non_null(hr);
        ctl_add(&c, hr, 2, true, false);
        pthread_mutex_lock(&nd.mu);
        nd.p[nd.np] = (ct_proc){.pid = -1, .out = -1};
        memcpy(nd.p[nd.np].region, hpath, sizeof(hpath));
        int hslot = (int)nd.np++;
        pthread_mutex_unlock(&nd.mu);
        unsigned best_alone = ~0u, worst_alone = 0, best_with = ~0u, p50a = 0, p50b = 0;
        double be_alone = 100, be_during = 0;
        uint64_t held = 0;
        for (int round = 0; round < 3; round++) {
                const char *be[] = {"async", "500", "3200", NULL};
                int b = ct_spawn(&nd, 2, 0, 100, -1, env, be);
                assert_true(b >= 0);
                ctl_add(&c, nd.p[b].r, 2, false, true);
                pthread_mutex_lock(&c.mu);
                c.s[c.n - 1].frozen = true;
                pthread_mutex_unlock(&c.mu);
                assert_true(ct_expect(&nd.p[b], "ready", 10000));
                unsigned p99 = infer_p99(&nd, hslot, env, &p50a);
                if (p99 < best_alone)
                        best_alone = p99;
                if (p99 > worst_alone)
                        worst_alone = p99;
                ct_sleep_ms(250); /* the high-impact slice is idle now: no YIELD */
                pthread_mutex_lock(&c.mu);
                c.s[c.n - 1].frozen = false;
                pthread_mutex_unlock(&c.mu);
                ct_sleep_ms(250);
                double x = ct_share(&nd, &nd.p[b], ct_now() - 200 * CT_MS, ct_now());
                if (x < be_alone)
                        be_alone = x;
                uint64_t th = ct_now();
                p99 = infer_p99(&nd, hslot, env, &p50b);
                if (p99 < best_with)
                        best_with = p99;
                /* while the high-impact loop ran (after its warm-up) the neighbour yielded */
                x = ct_share(&nd, &nd.p[b], th + 350 * CT_MS, th + 1000 * CT_MS);
                if (x > be_during)
                        be_during = x;
                assert_true(ct_wait(&nd.p[b]));
                held += atomic_load(&nd.p[b].r->held_launches);
                pthread_mutex_lock(&c.mu); /* the neighbour's slice ends */
                c.n--;
                pthread_mutex_unlock(&c.mu);
        }
        ctl_stop(&c);
        print_message("%s clock: high-impact p99 (best of 3): alone on the GPU %u us (p50 %u, "
                      "worst alone %u), next to a best-effort saturating neighbour %u us (p50 "
                      "%u); neighbour alone >= %.0f%%, while yielding <= %.1f%%, held %llu "
                      "times\n",
                      env ? "virtual" : "default", best_alone, p50a, worst_alone, best_with, p50b,
                      be_alone, be_during, (unsigned long long)held);
        kerf_slice_region_unmap(hr);
        ct_teardown(&nd);
        /* the yield itself: the neighbour was held and got (almost) nothing of the engine */
        assert_true(held > 0);
        assert_true(be_during < 1.0);
        if (env) {
                /* device time on the shared virtual clock: host noise cannot enter */
                assert_true(be_alone >= 80.0);
                return best_with <= best_alone * 1.10;
        }
        /* On the wall clock a loaded host can keep the saturating neighbour below 80 % even
         * alone: that round proves nothing either way, so it counts as a miss to re-measure. */
        if (be_alone < 80.0)
                return false;
        /* Wall-clock p99s on a shared 2-core host carry the host's scheduling noise: the bar
         * is +10 % plus the spread the same measurement showed between the three "alone"
         * rounds. Under sanitizers the host timing is not meaningful (the virtual-clock test
         * is the proof there). */
        double noise = (double)worst_alone / best_alone - 1.0;
#ifdef KERF_SANITIZE_BUILD
        if (best_with > best_alone * 1.10 && best_with <= best_alone * 2) {
                fprintf(stderr,
                        "compute test: sanitizer build: default-clock p99 %u vs %u us "
                        "not judged (the virtual-clock check stands)\n",
                        best_with, best_alone);
                skip();
        }
#endif
        return best_with <= best_alone * (1.10 + noise);
}

static void t_yield_high_impact_virtual(void **state)
{
        (void)state;
        assert_true(yield_high_impact(V));
}

static void t_yield_high_impact(void **state)
{
        (void)state;
        if (ct_overloaded())
                skip();
        /* a wall-clock miss must repeat to count: one round can be host noise */
        if (!yield_high_impact(NULL)) {
                fprintf(stderr, "compute test: default-clock p99 over the bar once: measuring "
                                "again\n");
                assert_true(yield_high_impact(NULL));
        }
}

/* FROZEN holds every launch (after the queue drains); clearing it resumes. */
static void t_frozen(void **state)
{
        (void)state;
        ct_node nd;
        assert_int_equal(ct_setup(&nd), 0);
        const char *args[] = {"async", "2000", "2000", NULL};
        int a = ct_spawn(&nd, 3, 50, 50, -1, V, args);
        assert_true(a >= 0);
        struct kerf_slice_region *r = nd.p[a].r;
        assert_true(ct_expect(&nd.p[a], "ready", 10000));
        ct_sleep_ms(400);
        atomic_fetch_or(&r->limits.flags, KERF_SLICE_F_FROZEN);
        atomic_fetch_add(&r->limits.generation, 1);
        uint64_t tf = ct_now();
        ct_sleep_ms(700);
        atomic_fetch_and(&r->limits.flags, ~KERF_SLICE_F_FROZEN);
        atomic_fetch_add(&r->limits.generation, 1);
        uint64_t tu = ct_now();
        ct_sleep_ms(600);
        double before = ct_share(&nd, &nd.p[a], tf - 300 * CT_MS, tf);
        double frozen = ct_share(&nd, &nd.p[a], tf + 100 * CT_MS, tu);
        double after = ct_share(&nd, &nd.p[a], tu + 100 * CT_MS, tu + 500 * CT_MS);
        uint64_t held = atomic_load(&r->held_launches), thr = atomic_load(&r->throttled_ns);
        bool ok = ct_wait(&nd.p[a]);
        print_message("before %.1f%%, frozen %.1f%%, after %.1f%%; held %llu, throttled %.0f ms\n",
                      before, frozen, after, (unsigned long long)held, (double)thr / 1e6);
        ct_teardown(&nd);
        assert_true(ok);
        assert_true(before > 40.0 && before < 60.0);
        assert_true(frozen < 0.5);
        assert_true(after > 40.0 && after < 60.0);
        assert_true(held > 0 && thr >= 500 * CT_MS);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(t_two_slices_virtual), cmocka_unit_test(t_two_slices),
            cmocka_unit_test(t_burst_pull_back),    cmocka_unit_test(t_yield_high_impact_virtual),
            cmocka_unit_test(t_yield_high_impact),  cmocka_unit_test(t_frozen),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
