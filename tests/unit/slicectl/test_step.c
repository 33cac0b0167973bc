/* SPDX-License-Identifier: Apache-2.0 */
/* test_step.c - kerf_slicectl_step on real region files: burst, pull back, yield, freeze */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "slicectl.h"

#define MS 1000000ULL
#define T0 (100000 * MS) /* a CLOCK_MONOTONIC-like "now" far from 0 */

static char dir[64];
static int nreg;

static struct kerf_slice_region *mkregion(uint32_t pct, uint32_t lim, uint32_t flags)
{
        char path[128];
        snprintf(path, sizeof(path), "%s/r%d", dir, nreg++);
        struct kerf_slice_init in = {.memory_limit = 1ULL << 30,
                                     .device_memory = 1ULL << 34,
                                     .compute_pct = pct,
                                     .compute_limit_pct = lim,
                                     .flags = flags};
        assert_int_equal(kerf_slice_region_create(path, getuid(), getgid(), &in), 0);
        struct kerf_slice_region *r = NULL;
        assert_int_equal(kerf_slice_region_map(path, true, &r), 0);
        unlink(path);
        return r;
}

static int setup(void **state)
{
        (void)state;
        snprintf(dir, sizeof(dir), "/tmp/kerf-slicectl-XXXXXX");
        assert_non_null(mkdtemp(dir));
        nreg = 0;
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        rmdir(dir);
        return 0;
}

static uint32_t allowed(const kerf_slicectl_slice *s)
{
        return atomic_load(&s->region->limits.compute_allowed_pct);
}

static uint32_t flags(const kerf_slicectl_slice *s)
{
        return atomic_load(&s->region->limits.flags);
}

static void touch(kerf_slicectl_slice *s, uint64_t now)
{
        atomic_store(&s->region->last_activity_ns, now);
}

static kerf_slicectl_slice mk(uint32_t pct, uint32_t lim, int gpu)
{
        kerf_slicectl_slice s = {.region = mkregion(pct, lim, 0), .gpu = gpu};
        return s;
}

static void release(kerf_slicectl_slice *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                kerf_slice_region_unmap(s[i].region);
}

/* A burster alone gets its ceiling; a neighbour that becomes active is served on the very
 * next step; when the neighbour goes idle the burst comes back. */
static void t_burst_and_pull_back(void **state)
{
        (void)state;
        kerf_slicectl_params p;
        kerf_slicectl_params_default(&p);
        kerf_slicectl_slice s[2] = {mk(20, 60, 0), mk(80, 80, 0)};
        uint64_t now = T0;
        touch(&s[0], now);
        uint64_t g0 = atomic_load(&s[0].region->limits.generation);
        assert_int_equal(kerf_slicectl_step(s, 2, now, &p), 1);
        assert_int_equal(allowed(&s[0]), 60);
        assert_int_equal(allowed(&s[1]), 80);
        assert_true(atomic_load(&s[0].region->limits.generation) > g0);
        /* nothing changes: nothing written */
        g0 = atomic_load(&s[0].region->limits.generation);
        assert_int_equal(kerf_slicectl_step(s, 2, now + 10 * MS, &p), 0);
        assert_int_equal(atomic_load(&s[0].region->limits.generation), g0);
        /* the neighbour starts (start grace, before any launch) */
        now += 20 * MS;
        touch(&s[0], now);
        s[1].started_ns = now;
        kerf_slicectl_step(s, 2, now, &p);
        assert_int_equal(allowed(&s[0]), 20);
        assert_int_equal(allowed(&s[1]), 80);
        /* the neighbour stops: after the grace and active windows the burst returns */
        now += p.start_grace_ns + p.active_ns + MS;
        touch(&s[0], now);
        kerf_slicectl_step(s, 2, now, &p);
        assert_int_equal(allowed(&s[0]), 60);
        /* the neighbour launches again: pulled back at once */
        now += 10 * MS;
        touch(&s[0], now);
        touch(&s[1], now);
        kerf_slicectl_step(s, 2, now, &p);
        assert_int_equal(allowed(&s[0]), 20);
        release(s, 2);
}

/* Room is shared in proportion to guarantees, capped by ceilings, rest handed on. */
static void t_proportional_water_filling(void **state)
{
        (void)state;
        kerf_slicectl_slice s[4] = {mk(10, 100, 0), mk(30, 100, 0), mk(20, 25, 0), mk(50, 100, 1)};
        uint64_t now = T0;
        for (int i = 0; i < 4; i++)
                touch(&s[i], now);
        kerf_slicectl_step(s, 4, now, NULL);
        /* GPU 0: reserved 60, room 40: weights 10:30:20 -> 6.7, 20, 13.3 -> slice 2 capped at 25
         * (+5), the rest handed on to 0 and 1 */
        uint32_t a0 = allowed(&s[0]), a1 = allowed(&s[1]), a2 = allowed(&s[2]);
        print_message("allowed %u %u %u\n", a0, a1, a2);
        assert_int_equal(a2, 25);
        assert_true(a0 + a1 + a2 <= 100 && a0 + a1 + a2 >= 98);
        assert_true(a0 >= 10 && a1 >= 30 && a1 > a0);
        /* GPU 1 alone: its ceiling */
        assert_int_equal(allowed(&s[3]), 100);
        /* inactive slices keep their guarantee and claim nothing */
        now += 2000 * MS;
        touch(&s[1], now);
        kerf_slicectl_step(s, 4, now, NULL);
        assert_int_equal(allowed(&s[0]), 10);
        assert_int_equal(allowed(&s[1]), 100);
        assert_int_equal(allowed(&s[2]), 20);
        assert_int_equal(allowed(&s[3]), 50);
        release(s, 4);
}

/* Guarantees that fill the GPU leave no burst at all. */
static void t_full_gpu(void **state)
{
        (void)state;
        kerf_slicectl_slice s[3] = {mk(50, 100, 2), mk(30, 60, 2), mk(20, 20, 2)};
        for (int i = 0; i < 3; i++)
                touch(&s[i], T0);
        kerf_slicectl_step(s, 3, T0, NULL);
        assert_int_equal(allowed(&s[0]), 50);
        assert_int_equal(allowed(&s[1]), 30);
        assert_int_equal(allowed(&s[2]), 20);
        release(s, 3);
}

/* YIELD on best-effort slices while a high-impact neighbour on the same GPU is busy. */
static void t_yield(void **state)
{
        (void)state;
        kerf_slicectl_params p;
        kerf_slicectl_params_default(&p);
        kerf_slicectl_slice s[3] = {mk(50, 50, 0), mk(0, 100, 0), mk(0, 100, 1)};
        s[0].high_impact = true;
        s[1].best_effort = true;
        s[2].best_effort = true; /* other GPU: never yields to s[0] */
        uint64_t now = T0;
        touch(&s[1], now);
        touch(&s[2], now);
        kerf_slicectl_step(s, 3, now, &p);
        assert_int_equal(flags(&s[1]) & KERF_SLICE_F_YIELD, 0);
        touch(&s[0], now + MS);
        uint64_t g = atomic_load(&s[1].region->limits.generation);
        kerf_slicectl_step(s, 3, now + 2 * MS, &p);
        assert_int_equal(flags(&s[1]) & KERF_SLICE_F_YIELD, KERF_SLICE_F_YIELD);
        assert_true(atomic_load(&s[1].region->limits.generation) > g);
        assert_int_equal(flags(&s[2]) & KERF_SLICE_F_YIELD, 0);
        assert_int_equal(flags(&s[0]) & KERF_SLICE_F_YIELD, 0);
        /* high-impact idle for longer than hi_busy_ns: cleared */
        now += p.hi_busy_ns + 10 * MS;
        kerf_slicectl_step(s, 3, now, &p);
        assert_int_equal(flags(&s[1]) & KERF_SLICE_F_YIELD, 0);
        release(s, 3);
}

/* FROZEN follows `frozen`; other flag bits are kept; TSLICE slices get flags only. */
static void t_freeze_and_tslice(void **state)
{
        (void)state;
        kerf_slicectl_slice s[2] = {mk(40, 40, 0), {.region = mkregion(0, 0, KERF_SLICE_F_TSLICE)}};
        atomic_store(&s[1].region->limits.compute_allowed_pct, 77);
        s[0].frozen = s[1].frozen = true;
        touch(&s[1], T0);
        kerf_slicectl_step(s, 2, T0, NULL);
        assert_int_equal(flags(&s[0]), KERF_SLICE_F_FROZEN);
        assert_int_equal(flags(&s[1]), KERF_SLICE_F_FROZEN | KERF_SLICE_F_TSLICE);
        assert_int_equal(allowed(&s[1]), 77);
        assert_int_equal(allowed(&s[0]), 40);
        s[0].frozen = s[1].frozen = false;
        assert_int_equal(kerf_slicectl_step(s, 2, T0 + MS, NULL), 2);
        assert_int_equal(flags(&s[0]), 0);
        assert_int_equal(flags(&s[1]), KERF_SLICE_F_TSLICE);
        /* NULL region and n = 0 are harmless */
        kerf_slicectl_slice none = {0};
        assert_int_equal(kerf_slicectl_step(&none, 1, T0, NULL), 0);
        assert_int_equal(kerf_slicectl_step(s, 0, T0, NULL), 0);
        release(s, 2);
}

/* More slices than the stack scratch: every one is handled. */
static void t_many(void **state)
{
        (void)state;
        enum { N = KERF_SLICECTL_MAX + 40 };
        static kerf_slicectl_slice s[N];
        for (int i = 0; i < N; i++) {
                s[i] = mk(0, 100, i % 16);
                s[i].frozen = true;
        }
        assert_int_equal(kerf_slicectl_step(s, N, T0, NULL), N);
        for (int i = 0; i < N; i++)
                assert_int_equal(flags(&s[i]), KERF_SLICE_F_FROZEN);
        release(s, N);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(t_burst_and_pull_back, setup, teardown),
            cmocka_unit_test_setup_teardown(t_proportional_water_filling, setup, teardown),
            cmocka_unit_test_setup_teardown(t_full_gpu, setup, teardown),
            cmocka_unit_test_setup_teardown(t_yield, setup, teardown),
            cmocka_unit_test_setup_teardown(t_freeze_and_tslice, setup, teardown),
            cmocka_unit_test_setup_teardown(t_many, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
