/* SPDX-License-Identifier: Apache-2.0 */
/* test_views.c - cuMemGetInfo, cuDeviceTotalMem and NVML as the slice sees them */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "shim_fx.h"

static void run_ok(uint64_t cap, const char *const *args)
{
        fx e;
        assert_int_equal(fx_setup(&e, cap), 0);
        assert_int_equal(fx_run(&e, args, NULL), 0);
        fx_teardown(&e);
}

/* total = cap, free = cap - charged, before and after an allocation. */
static void test_views_cap_below_physical(void **state)
{
        run_ok(4 * FX_GIB, FX_ARGS("views"));
}

/* A cap above the GPU: total = physical (cuDNN sizes its plans from it). */
static void test_views_cap_above_physical(void **state)
{
        run_ok(1ull << 49, FX_ARGS("views"));
}

/* Two processes of one task see each other's charges at the same moment. */
static void test_views_two_processes(void **state)
{
        fx e;
        assert_int_equal(fx_setup(&e, 8 * FX_GIB), 0);
        int in = -1, out = -1;
        pid_t a = fx_spawn(&e, FX_ARGS("hold"), NULL, &in, &out);
        assert_true(a > 0);
        char buf[32] = {0};
        ssize_t n = read(out, buf, sizeof(buf) - 1);
        assert_true(n > 0 && !strncmp(buf, "ready", 5));
        char min[32];
        snprintf(min, sizeof(min), "%llu", (unsigned long long)(FX_GIB + 300 * FX_MIB));
        assert_int_equal(fx_run(&e, FX_ARGS("views2", min), NULL), 0);
        close(in);
        close(out);
        assert_int_equal(fx_wait(&e, a), 0);
        assert_int_equal(atomic_load(&e.r->memory_charged), 0);
        fx_teardown(&e);
}

/* NVML memory info (v1, v2) and the process list, called directly and through dlsym. */
static void test_nvml_views(void **state)
{
        run_ok(4 * FX_GIB, FX_ARGS("nvml"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_views_cap_below_physical),
            cmocka_unit_test(test_views_cap_above_physical),
            cmocka_unit_test(test_views_two_processes),
            cmocka_unit_test(test_nvml_views),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
