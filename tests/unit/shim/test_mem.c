/* SPDX-License-Identifier: Apache-2.0 */
/* test_mem.c - every allocation path capped at 4 GiB by the shim, alone and mixed */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "shim_fx.h"

#define CAP (4 * FX_GIB)

/* One scenario of mem_child in a fresh node and region; afterwards the region must be back
 * to zero (every process gave its slot and its charges back). */
static void scenario(const char *const *args)
{
        fx e;
        assert_int_equal(fx_setup(&e, CAP), 0);
        int rc = fx_run(&e, args, NULL);
        assert_int_equal(rc, 0);
        assert_int_equal(atomic_load(&e.r->memory_charged), 0);
        assert_int_equal(atomic_load(&e.r->nprocs), 0);
        assert_true(atomic_load(&e.r->memory_peak) <= CAP);
        fx_teardown(&e);
}

static void test_linear(void **state)
{
        scenario(FX_ARGS("paths", "linear"));
}

static void test_pitch(void **state)
{
        scenario(FX_ARGS("paths", "pitch"));
}

static void test_managed(void **state)
{
        scenario(FX_ARGS("paths", "managed"));
}

static void test_async_default_pool(void **state)
{
        scenario(FX_ARGS("paths", "async"));
}

static void test_created_pool(void **state)
{
        scenario(FX_ARGS("paths", "pool"));
}

static void test_default_pool_explicit(void **state)
{
        scenario(FX_ARGS("paths", "defpool"));
}

static void test_array(void **state)
{
        scenario(FX_ARGS("paths", "array"));
}

static void test_array3d(void **state)
{
        scenario(FX_ARGS("paths", "array3d"));
}

static void test_mipmap(void **state)
{
        scenario(FX_ARGS("paths", "mipmap"));
}

static void test_vmm(void **state)
{
        scenario(FX_ARGS("paths", "vmm"));
}

static void test_all_paths_one_process(void **state)
{
        scenario(FX_ARGS("paths"));
}

static void test_mixed_and_random(void **state)
{
        scenario(FX_ARGS("mixed"));
}

static void test_vmm_host_and_mapping(void **state)
{
        scenario(FX_ARGS("vmm"));
}

static void test_contexts(void **state)
{
        scenario(FX_ARGS("ctx"));
}

/* A process that exits holding memory gives it back (exit handler). */
static void test_exit_gives_back(void **state)
{
        scenario(FX_ARGS("exit_holding"));
}

/* The cap holds against the simulator's own accounting too: the driver never allocated
 * more than the cap in the child (peak over the whole run <= cap). */
static void test_peak_below_cap(void **state)
{
        fx e;
        assert_int_equal(fx_setup(&e, CAP), 0);
        assert_int_equal(fx_run(&e, FX_ARGS("paths"), NULL), 0);
        uint64_t peak = atomic_load(&e.r->memory_peak);
        assert_true(peak <= CAP);
        assert_true(peak >= 3 * FX_GIB); /* it did fill up to the cap */
        assert_true(atomic_load(&e.r->memory_denied) >= 10);
        fx_teardown(&e);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_linear),
            cmocka_unit_test(test_pitch),
            cmocka_unit_test(test_managed),
            cmocka_unit_test(test_async_default_pool),
            cmocka_unit_test(test_created_pool),
            cmocka_unit_test(test_default_pool_explicit),
            cmocka_unit_test(test_array),
            cmocka_unit_test(test_array3d),
            cmocka_unit_test(test_mipmap),
            cmocka_unit_test(test_vmm),
            cmocka_unit_test(test_all_paths_one_process),
            cmocka_unit_test(test_mixed_and_random),
            cmocka_unit_test(test_vmm_host_and_mapping),
            cmocka_unit_test(test_contexts),
            cmocka_unit_test(test_exit_gives_back),
            cmocka_unit_test(test_peak_below_cap),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
