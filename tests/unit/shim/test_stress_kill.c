/* SPDX-License-Identifier: Apache-2.0 */
/* test_stress_kill.c - SIGKILL chaos: survivors never block, counters exact after the reap */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "stress_harness.h"

/*
 * (d) Three survivors of one slice allocate (cuMemAlloc_v2, pitch, VMM, async default pool,
 * async created pool; 2 or 4 MiB), free, launch 500 us kernels and synchronise, timing every
 * driver call, while victims of the same slice doing the same are SIGKILLed at random instants
 * (0..400 ms after they were started, so some die in cuInit or context creation, most in the
 * middle of allocations, frees and launches). Four victims are alive at any time, for
 * CHAOS_MS.
 *
 * Checked:
 *   - no survivor call took longer than 1 s (each call's latency measured by the survivor);
 *   - no survivor and no victim failed a driver call (victims only die by SIGKILL);
 *   - memory_charged <= memory_limit at every watcher sample;
 *   - once every victim is reaped and the survivors hold still: within 1 s (+ 250 ms of
 *     scheduling slack on a loaded machine) no slot belongs to a dead process, every
 *     survivor's slot is exactly its context charge + the bytes it holds, and memory_charged is
 *     exactly the sum of the survivors' holdings.
 *     The contract (docs/SHIM-CONTRACT.md §2 rule 4) allows one leak: a process killed
 *     between its CAS on memory_charged and its slot update leaves that one reservation charged
 *     until kerfd resets the counters. An excess of memory_charged over the slots that such
 *     windows can explain (positive, at most one allocation per killed victim) is reported and
 *     tolerated; any other difference fails. KERF_STRESS_STRICT=1 tolerates none.
 */

#define NSURV    3
#define NVICT    4
#define CHAOS_MS 5000
#define MAXKILL  400 /* ms */
#define MAXALLOC (4 * SX_MIB)

static sx_env env;
static sx_child surv[NSURV], vict[NVICT];

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

/* Reaps victim v if it is gone (waits when `block`); returns true then. Counts how it ended. */
static bool reap(sx_child *v, bool block, unsigned *killed, unsigned *failed)
{
        if (v->reaped || waitpid(v->pid, &v->status, block ? 0 : WNOHANG) != v->pid)
                return v->reaped;
        v->reaped = true;
        char line[256];
        if (WIFSIGNALED(v->status) && WTERMSIG(v->status) == SIGKILL) {
                (*killed)++;
        } else {
                (*failed)++;
                printf("kill: victim %d ended with status 0x%x\n", (int)v->pid, v->status);
        }
        while (sx_line(v, line, sizeof(line), 0) == 0)
                printf("kill: victim %d said: %s\n", (int)v->pid, line);
        close(v->in);
        close(v->out);
        return true;
}

static void test_sigkill_chaos(void **state)
{
        (void)state;
        char line[512];
        uint64_t t_start = sx_now_ns();
        assert_int_equal(sx_setup(&env, 8 * SX_GIB, 100), 0);
        uint64_t ctx[NSURV];
        for (int i = 0; i < NSURV; i++) {
                char seed[32];
                snprintf(seed, sizeof(seed), "seed=%d", 7 + i);
                const char *args[] = {"survivor", seed, NULL};
                assert_int_equal(sx_spawn(&env, &surv[i], args), 0);
        }
        for (int i = 0; i < NSURV; i++) {
                assert_int_equal(sx_expect(&surv[i], "READY", line, sizeof(line), 20000), 0);
                ctx[i] = sx_field(line, "ctx");
        }
        sx_watch w;
        sx_watch_start(&w, &env, false, 0);
        for (int i = 0; i < NSURV; i++)
                assert_int_equal(sx_send(&surv[i], "GO"), 0);

        /* Chaos: NVICT victims alive at any time, each SIGKILLed at a random instant. */
        const char *vargs[] = {"victim", NULL};
        uint64_t deadline[NVICT];
        unsigned spawned = 0, killed = 0, failed = 0, holding = 0;
        for (int i = 0; i < NVICT; i++)
                vict[i].reaped = true;
        uint64_t t_chaos = sx_now_ns();
        while (sx_now_ns() - t_chaos < CHAOS_MS * 1000000ull) {
                uint64_t now = sx_now_ns();
                for (int i = 0; i < NVICT; i++) {
                        if (vict[i].reaped) {
                                assert_int_equal(sx_spawn(&env, &vict[i], vargs), 0);
                                deadline[i] = now + rnd() % (MAXKILL * 1000000ull);
                                spawned++;
                        } else if (now >= deadline[i]) {
                                /* beyond its context: it had allocations to reclaim */
                                if (sx_slot_used(&env, vict[i].pid, NULL) > ctx[0])
                                        holding++;
                                kill(vict[i].pid, SIGKILL);
                                deadline[i] = UINT64_MAX;
                        }
                        reap(&vict[i], false, &killed, &failed);
                }
                for (int i = 0; i < NSURV; i++)
                        if (waitpid(surv[i].pid, &surv[i].status, WNOHANG) == surv[i].pid) {
                                surv[i].reaped = true;
                                while (sx_line(&surv[i], line, sizeof(line), 0) == 0)
                                        printf("kill: survivor %d said: %s\n", i, line);
                                fail_msg("survivor %d ended during the chaos (status 0x%x)", i,
                                         surv[i].status);
                        }
                sx_sleep_ms(2);
        }
        for (int i = 0; i < NVICT; i++)
                if (!vict[i].reaped) {
                        kill(vict[i].pid, SIGKILL);
                        reap(&vict[i], true, &killed, &failed);
                }
        uint64_t t_reap = sx_now_ns();

        /* Survivors hold still and say what they hold. */
        for (int i = 0; i < NSURV; i++)
                assert_int_equal(sx_send(&surv[i], "HOLD"), 0);
        uint64_t hold[NSURV], want = 0, maxlat = 0;
        for (int i = 0; i < NSURV; i++) {
                assert_int_equal(sx_expect(&surv[i], "HELD", line, sizeof(line), 5000), 0);
                hold[i] = ctx[i] + sx_field(line, "bytes");
                want += hold[i];
                uint64_t l = sx_field(line, "maxlat_ns");
                maxlat = l > maxlat ? l : maxlat;
                printf("kill: survivor %d: %s (context %" PRIu64 " B)\n", i, line + 5, ctx[i]);
        }
        /* Exact within 1 s of the reap (+ scheduling slack). */
        bool slots_ok = false, exact = false;
        uint64_t charged = 0, slots = 0;
        unsigned nslots = 0, dead = 0;
        for (;;) {
                charged = sx_charged(&env);
                slots = sx_slots_sum(&env, &nslots);
                slots_ok = nslots == NSURV;
                for (int i = 0; i < NSURV && slots_ok; i++)
                        slots_ok = sx_slot_used(&env, surv[i].pid, NULL) == hold[i];
                exact = slots_ok && charged == want;
                if (exact || sx_now_ns() - t_reap > 1250000000ull)
                        break;
                sx_sleep_ms(5);
        }
        double settle_ms = (double)(sx_now_ns() - t_reap) / 1e6;
        sx_watch_stop(&w);
        for (unsigned i = 0; i < KERF_SLICE_MAX_PROCS; i++) {
                int32_t p = atomic_load(&env.r->procs[i].pid);
                bool ours = false;
                for (int k = 0; k < NSURV; k++)
                        ours |= p == surv[k].pid;
                if (p && !ours) {
                        dead++;
                        printf("kill: slot %u still held by pid %d (memory_used %" PRIu64 " B)\n",
                               i, (int)p, atomic_load(&env.r->procs[i].memory_used));
                }
        }
        printf(
            "kill: %u victims started, %u SIGKILLed (%u of them holding allocations), %u failed on "
            "their own, in %.1f s; survivors' slowest call %.1f ms; max charged %" PRIu64 " MiB\n",
            spawned, killed, holding, failed, (double)CHAOS_MS / 1e3, (double)maxlat / 1e6,
            w.max_charged / SX_MIB);
        printf("kill: %.0f ms after the reap: charged %" PRIu64 " B, survivors hold %" PRIu64
               " B (%+" PRId64 "), slots %u (sum %" PRIu64 " B), %u held by dead pids; "
               "watcher %" PRIu64 " samples, %" PRIu64 " over the cap\n",
               settle_ms, charged, want, (int64_t)(charged - want), nslots, slots, dead, w.samples,
               w.over);
        assert_int_equal(failed, 0);
        assert_true(killed > 0);
        if (!env.no_shim)
                assert_true(holding > 0); /* reclaim was exercised */
        assert_true(maxlat < 1000000000ull);
        assert_int_equal(w.over, 0);
        assert_int_equal(dead, 0);
        assert_true(slots_ok);
        if (!exact) {
                bool strict =
                    getenv("KERF_STRESS_STRICT") && !strcmp(getenv("KERF_STRESS_STRICT"), "1");
                bool documented = charged > want && charged - want <= killed * MAXALLOC &&
                                  (charged - want) % (2 * SX_MIB) == 0;
                printf("kill: charged exceeds the survivors' holdings by %" PRId64 " B: %s\n",
                       (int64_t)(charged - want),
                       documented ? "explainable by the contract's one-reservation leak window"
                                  : "NOT explainable by the contract's leak window");
                assert_true(documented && !strict);
        }

        for (int i = 0; i < NSURV; i++)
                assert_int_equal(sx_finish(&surv[i], 20000), 0);
        printf("kill: total %.1f s\n", (double)(sx_now_ns() - t_start) / 1e9);
        sx_teardown(&env);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_sigkill_chaos),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
