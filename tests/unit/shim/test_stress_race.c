/* SPDX-License-Identifier: Apache-2.0 */
/* test_stress_race.c - 64 processes of one slice race allocations on every path to the cap */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "stress_harness.h"

/*
 * (a) 64 processes of one slice, released at the same instant, allocate on random paths
 * (cuMemAlloc_v2, pitch, managed, async default pool, async created pool, VMM handle, VMM
 * mapped-then-released, 2D/3D arrays, mipmapped arrays; every size a multiple of 2 MiB so that
 * the driver's rounding plays no part) until the cap refuses a 2 MiB cuMemAlloc_v2. Some async
 * blocks are freed back to their pool on the way: the driver keeps them reserved.
 *
 * Checked:
 *   - memory_charged <= memory_limit at every sample of a watcher (every ~50 us);
 *   - the simulator's own charge for those processes never exceeds limit + their contexts'
 *     overhead (300 MiB each in the simulator, less what the shim charged per context);
 *   - the cap is reached (charged > limit - 2 MiB - bytes freed to pools) and the charge
 *     matches what the children hold (held <= charged - baseline <= held + freed to pools);
 *   - after every process freed everything: charged == baseline (contexts only); after every
 *     process exited: charged == 0, no slot in use.
 * ROUNDS rounds (race, check, free all, check). The race budget is 2 GiB above the contexts' charge
 * (limit raised after all contexts exist, the way kerfd changes limits: store, then generation++).
 */

#define NPROC  64
#define BUDGET (2048 * SX_MIB)
#define ROUNDS 4

static sx_env env;
static sx_child kids[NPROC];

/* One round: all race from the same instant to the cap, then all free. */
static void race_round(int round, uint64_t cap, uint64_t base, uint64_t allowance)
{
        char line[512];
        uint64_t t0 = sx_now_ns() + 100000000ull;
        for (int i = 0; i < NPROC; i++)
                assert_int_equal(sx_send(&kids[i], "GO %" PRIu64, t0), 0);
        uint64_t held = 0, freed = 0, allocs = 0;
        for (int i = 0; i < NPROC; i++) {
                assert_int_equal(sx_expect(&kids[i], "DONE", line, sizeof(line), 30000), 0);
                held += sx_field(line, "held");
                freed += sx_field(line, "asyncfreed");
                allocs += sx_field(line, "allocs");
        }
        uint64_t t_done = sx_now_ns();
        uint64_t charged = sx_charged(&env), sim_used = 0;
        unsigned sim_n = 0;
        assert_int_equal(sx_sim_used(&env, &sim_used, &sim_n), 0);
        printf("race %d: %" PRIu64 " allocations in %.2f s; limit %" PRIu64 " MiB, charged %" PRIu64
               " MiB; children hold %" PRIu64 " MiB + %" PRIu64
               " MiB freed to pools; simulator %" PRIu64 " MiB for %u processes\n",
               round, allocs, (double)(t_done - t0) / 1e9, cap / SX_MIB, charged / SX_MIB,
               held / SX_MIB, freed / SX_MIB, sim_used / SX_MIB, sim_n);
        assert_true(charged <= cap);
        assert_true(sim_used <= cap + sim_n * allowance);
        /* The cap was reached, and the charge is what the children hold. */
        assert_true(charged + 2 * SX_MIB + freed > cap);
        assert_true(charged >= base + held);
        assert_true(charged <= base + held + freed);
        /* Everything freed: back to the contexts' charge. */
        for (int i = 0; i < NPROC; i++)
                assert_int_equal(sx_send(&kids[i], "FREE"), 0);
        for (int i = 0; i < NPROC; i++)
                assert_int_equal(sx_expect(&kids[i], "FREED", line, sizeof(line), 30000), 0);
        uint64_t t_freed = sx_now_ns();
        while (sx_charged(&env) != base && sx_now_ns() - t_freed < 1500000000ull)
                sx_sleep_ms(5);
        if (sx_charged(&env) != base)
                printf("race %d: after every free charged %" PRIu64 " B, baseline %" PRIu64
                       " B (%+" PRId64 ")\n",
                       round, sx_charged(&env), base, (int64_t)(sx_charged(&env) - base));
        assert_true(sx_charged(&env) == base);
}

static void test_race_to_cap(void **state)
{
        (void)state;
        char line[512];
        uint64_t t_start = sx_now_ns();
        assert_int_equal(sx_setup(&env, 0, 100), 0);
        /* Contexts first, under a limit large enough for all of them. */
        sx_set_limit(&env, env.phys);
        uint64_t ctx_min = UINT64_MAX, ctx_max = 0;
        for (int i = 0; i < NPROC; i++) {
                char seed[32];
                snprintf(seed, sizeof(seed), "seed=%d", i + 1);
                const char *args[] = {"race", seed, NULL};
                assert_int_equal(sx_spawn(&env, &kids[i], args), 0);
        }
        for (int i = 0; i < NPROC; i++) {
                assert_int_equal(sx_expect(&kids[i], "READY", line, sizeof(line), 30000), 0);
                uint64_t c = sx_field(line, "ctx");
                ctx_min = c < ctx_min ? c : ctx_min;
                ctx_max = c > ctx_max ? c : ctx_max;
        }
        uint64_t base = sx_charged(&env);
        unsigned nslots;
        uint64_t slots = sx_slots_sum(&env, &nslots);
        printf("race: %d processes up in %.2f s; shim charge per context %" PRIu64 "..%" PRIu64
               " MiB; baseline charged %" PRIu64 " MiB, slots %u (sum %" PRIu64 " MiB)\n",
               NPROC, (double)(sx_now_ns() - t_start) / 1e9, ctx_min / SX_MIB, ctx_max / SX_MIB,
               base / SX_MIB, nslots, slots / SX_MIB);
        if (!env.no_shim) {
                assert_int_equal(nslots, NPROC);
                assert_true(slots == base);
        }
        uint64_t cap = base + BUDGET;
        sx_set_limit(&env, cap);
        uint64_t allowance =
            SX_SIM_CTX_MIB * SX_MIB > ctx_min ? SX_SIM_CTX_MIB * SX_MIB - ctx_min : 0;
        sx_watch w;
        sx_watch_start(&w, &env, true, allowance);
        for (int round = 0; round < ROUNDS; round++)
                race_round(round, cap, base, allowance);
        sx_watch_stop(&w);
        printf("race: watcher %" PRIu64 " samples, %" PRIu64 " over the cap (worst +%" PRIu64
               " B, max seen %" PRIu64 " MiB); simulator %" PRIu64 " samples, %" PRIu64
               " over limit + contexts (worst +%" PRIu64 " MiB, max %" PRIu64
               " MiB, allowance %" PRIu64 " MiB/process)\n",
               w.samples, w.over, w.worst_excess, w.max_charged / SX_MIB, w.sim_samples, w.sim_over,
               w.sim_worst / SX_MIB, w.sim_max / SX_MIB, allowance / SX_MIB);
        assert_true(w.samples > 0 && w.sim_samples > 0);
        assert_int_equal(w.over, 0);
        assert_true(w.max_charged <= cap);
        assert_int_equal(w.sim_over, 0);

        /* Normal exits give everything back and free the slots. */
        for (int i = 0; i < NPROC; i++)
                assert_int_equal(sx_finish(&kids[i], 20000), 0);
        sx_wait_released(&env, &nslots, 1500);
        printf("race: after exit charged %" PRIu64 " B, %u slots in use, nprocs %u; total %.1f s\n",
               sx_charged(&env), nslots, atomic_load(&env.r->nprocs),
               (double)(sx_now_ns() - t_start) / 1e9);
        assert_true(sx_charged(&env) == 0);
        assert_int_equal(nslots, 0);
        assert_int_equal(atomic_load(&env.r->nprocs), 0);
        sx_teardown(&env);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_race_to_cap),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
