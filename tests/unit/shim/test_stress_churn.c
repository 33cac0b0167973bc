/* SPDX-License-Identifier: Apache-2.0 */
/* test_stress_churn.c - 10^5 random allocate/free operations leave the counters exactly as found */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "stress_harness.h"

/*
 * (b) 4 processes of one slice perform 25 000 random operations each (10^5 in all): allocations
 * on every path (cuMemAlloc_v2, pitch, managed, async on the default pool, async on a created
 * pool, VMM handles, VMM mapped-then-released, VMM on a host location, 2D/3D arrays, mipmapped
 * arrays) with random sizes from 1 byte to 6 MiB, mostly unaligned; frees (sync and
 * stream-ordered); random stream/context synchronisations, pool trims and kernel launches.
 * Then each frees everything, synchronises and trims its pools to 0.
 *
 * Checked, while every process still holds its context: memory_charged is exactly the
 * baseline taken after the contexts were created, and every slot's memory_used is exactly its
 * own baseline (allowing the shim up to 1.5 s to reconcile pools). After they exit: 0 and no
 * slot in use. memory_charged <= memory_limit at every watcher sample throughout.
 */

#define NPROC 4
#define OPS   25000

static sx_env env;
static sx_child kids[NPROC];

static void test_churn_returns_to_baseline(void **state)
{
        (void)state;
        char line[512];
        uint64_t t_start = sx_now_ns();
        assert_int_equal(sx_setup(&env, 16 * SX_GIB, 100), 0);
        for (int i = 0; i < NPROC; i++) {
                char seed[32], ops[32];
                snprintf(seed, sizeof(seed), "seed=%d", 100 + i);
                snprintf(ops, sizeof(ops), "ops=%d", OPS);
                const char *args[] = {"churn", seed, ops, NULL};
                assert_int_equal(sx_spawn(&env, &kids[i], args), 0);
        }
        uint64_t slot_base[NPROC];
        for (int i = 0; i < NPROC; i++) {
                assert_int_equal(sx_expect(&kids[i], "READY", line, sizeof(line), 30000), 0);
                slot_base[i] = sx_field(line, "ctx");
        }
        uint64_t base = sx_charged(&env);
        unsigned nslots;
        uint64_t slots = sx_slots_sum(&env, &nslots);
        printf("churn: baseline charged %" PRIu64 " B, %u slots (sum %" PRIu64 " B)\n", base,
               nslots, slots);
        sx_watch w;
        sx_watch_start(&w, &env, false, 0);
        uint64_t t_go = sx_now_ns();
        for (int i = 0; i < NPROC; i++)
                assert_int_equal(sx_send(&kids[i], "GO"), 0);
        long total_ops = 0;
        for (int i = 0; i < NPROC; i++) {
                assert_int_equal(sx_expect(&kids[i], "DONE", line, sizeof(line), 45000), 0);
                printf("churn: child %d: %s\n", i, line + 5);
                total_ops += (long)sx_field(line, "ops");
        }
        uint64_t t_done = sx_now_ns();
        bool exact = false;
        for (;;) {
                exact = sx_charged(&env) == base;
                for (int i = 0; i < NPROC && exact; i++)
                        exact = sx_slot_used(&env, kids[i].pid, NULL) == slot_base[i];
                if (exact || sx_now_ns() - t_done > 1500000000ull)
                        break;
                sx_sleep_ms(5);
        }
        sx_watch_stop(&w);
        printf("churn: %ld operations in %.2f s; charged %" PRIu64 " B vs baseline %" PRIu64
               " B (%+" PRId64 ") after %.0f ms; watcher %" PRIu64 " samples, %" PRIu64
               " over the cap, max charged %" PRIu64 " MiB\n",
               total_ops, (double)(t_done - t_go) / 1e9, sx_charged(&env), base,
               (int64_t)(sx_charged(&env) - base), (double)(sx_now_ns() - t_done) / 1e6, w.samples,
               w.over, w.max_charged / SX_MIB);
        for (int i = 0; i < NPROC; i++) {
                bool found;
                uint64_t u = sx_slot_used(&env, kids[i].pid, &found);
                printf("churn: slot of child %d: %s memory_used %" PRIu64 " B vs %" PRIu64
                       " B (%+" PRId64 ")\n",
                       i, found ? "" : "(no slot)", u, slot_base[i], (int64_t)(u - slot_base[i]));
        }
        assert_int_equal(total_ops, NPROC * OPS);
        assert_int_equal(w.over, 0);
        if (!env.no_shim) {
                assert_int_equal(nslots, NPROC);
                assert_true(w.max_charged > base); /* the operations were charged at all */
        }
        assert_true(exact);

        for (int i = 0; i < NPROC; i++)
                assert_int_equal(sx_finish(&kids[i], 20000), 0);
        sx_wait_released(&env, &nslots, 1500);
        printf("churn: after exit charged %" PRIu64 " B, %u slots in use; total %.1f s\n",
               sx_charged(&env), nslots, (double)(sx_now_ns() - t_start) / 1e9);
        assert_true(sx_charged(&env) == 0);
        assert_int_equal(nslots, 0);
        sx_teardown(&env);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_churn_returns_to_baseline),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
