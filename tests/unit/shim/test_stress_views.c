/* SPDX-License-Identifier: Apache-2.0 */
/* test_stress_views.c - three processes of one slice see the same memory at the same moment */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "stress_harness.h"

/*
 * (c) Three processes of one slice hold different amounts (cuMemAlloc_v2 + a VMM handle); when
 * all hold, all report cuMemGetInfo_v2, cuDeviceTotalMem_v2, nvmlDeviceGetMemoryInfo and
 * nvmlDeviceGetMemoryInfo_v2 (NVML through dlopen + dlsym, as Python bindings do), and the
 * reports are compared: identical in the three processes; total = min(memory_limit, physical)
 * in every view; free = total - used >= 0; used covers memory_charged read at the same moment;
 * NVML agrees with cuMemGetInfo. Three limits: below physical memory, above it (a cap larger
 * than the card must not show more than the card), and a limit lowered while the processes
 * run (kerfd's store + generation++).
 */

#define NPROC 3

static sx_env env;
static sx_child kids[NPROC];

static const char *const keys[] = {"cu_free",     "cu_total",   "dev_total",
                                   "nvml_total",  "nvml_free",  "nvml_used",
                                   "nvml2_total", "nvml2_free", "nvml2_used"};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* All processes report; checks one snapshot against `limit`. */
static void snapshot(const char *what, uint64_t limit)
{
        char line[NPROC][640];
        uint64_t v[NPROC][NKEYS];
        uint64_t c0 = sx_charged(&env);
        for (int i = 0; i < NPROC; i++)
                assert_int_equal(sx_send(&kids[i], "REPORT"), 0);
        for (int i = 0; i < NPROC; i++) {
                assert_int_equal(sx_expect(&kids[i], "VIEW", line[i], sizeof(line[i]), 20000), 0);
                for (size_t k = 0; k < NKEYS; k++)
                        v[i][k] = sx_field(line[i], keys[k]);
        }
        uint64_t c1 = sx_charged(&env);
        uint64_t total = limit < env.phys ? limit : env.phys;
        uint64_t used = v[0][1] - v[0][0];
        printf("views %s: limit %" PRIu64 " MiB, physical %" PRIu64 " MiB, charged %" PRIu64
               " B\n  %s\n",
               what, limit / SX_MIB, env.phys / SX_MIB, c0, line[0]);
        int bad = 0;
        for (int i = 1; i < NPROC; i++)
                for (size_t k = 0; k < NKEYS; k++)
                        if (v[i][k] != v[0][k]) {
                                printf("  MISMATCH %s: process 0 %" PRIu64 ", process %d %" PRIu64
                                       "\n",
                                       keys[k], v[0][k], i, v[i][k]);
                                bad++;
                        }
        for (size_t k = 0; k < NKEYS; k++)
                if (strstr(keys[k], "total") && v[0][k] != total) {
                        printf("  WRONG %s %" PRIu64 ", expected min(limit, physical) %" PRIu64
                               "\n",
                               keys[k], v[0][k], total);
                        bad++;
                }
        if (v[0][0] > v[0][1] || v[0][4] != v[0][0] || v[0][7] != v[0][0] || v[0][5] != used ||
            v[0][8] != used) {
                printf("  WRONG free/used: cu free %" PRIu64 " (used %" PRIu64
                       "), nvml free %" PRIu64 " used %" PRIu64 ", nvml_v2 free %" PRIu64
                       " used %" PRIu64 "\n",
                       v[0][0], used, v[0][4], v[0][5], v[0][7], v[0][8]);
                bad++;
        }
        if (c0 != c1 || used < c0) {
                printf("  WRONG used %" PRIu64 " B vs memory_charged %" PRIu64 " B (then %" PRIu64
                       " B)\n",
                       used, c0, c1);
                bad++;
        } else {
                printf("  used - memory_charged = %" PRIu64 " B\n", used - c0);
        }
        assert_int_equal(bad, 0);
}

static void run(const char *what, uint64_t limit, uint64_t lowered)
{
        char line[256];
        assert_int_equal(sx_setup(&env, limit, 100), 0);
        for (int i = 0; i < NPROC; i++) {
                char hold[32];
                snprintf(hold, sizeof(hold), "hold_mib=%d", 100 * (i + 1) + 7 * i);
                const char *args[] = {"views", hold, NULL};
                assert_int_equal(sx_spawn(&env, &kids[i], args), 0);
        }
        for (int i = 0; i < NPROC; i++)
                assert_int_equal(sx_expect(&kids[i], "READY", line, sizeof(line), 20000), 0);
        for (int i = 0; i < NPROC; i++)
                assert_int_equal(sx_send(&kids[i], "GO"), 0);
        for (int i = 0; i < NPROC; i++)
                assert_int_equal(sx_expect(&kids[i], "HELD", line, sizeof(line), 20000), 0);
        snapshot(what, limit);
        if (lowered) {
                sx_set_limit(&env, lowered);
                snapshot("after the limit was lowered", lowered);
        }
        for (int i = 0; i < NPROC; i++)
                assert_int_equal(sx_finish(&kids[i], 20000), 0);
        sx_teardown(&env);
}

static void test_views_below_physical(void **state)
{
        (void)state;
        run("cap 16 GiB", 16 * SX_GIB, 12 * SX_GIB);
}

static void test_views_above_physical(void **state)
{
        (void)state;
        run("cap 1 TiB (above the card)", 1024 * SX_GIB, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_views_below_physical),
            cmocka_unit_test(test_views_above_physical),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
