/* SPDX-License-Identifier: Apache-2.0 */
/* test_procaddr.c - entry points reached through cuGetProcAddress_v2 and dlsym are capped */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "shim_fx.h"

#define CAP (4 * FX_GIB)

static void scenario(const char *const *args)
{
        fx e;
        assert_int_equal(fx_setup(&e, CAP), 0);
        assert_int_equal(fx_run(&e, args, NULL), 0);
        assert_int_equal(atomic_load(&e.r->memory_charged), 0);
        assert_true(atomic_load(&e.r->memory_peak) <= CAP);
        fx_teardown(&e);
}

/* As cudart does: every entry point from cuGetProcAddress_v2 with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM; the _ptsz flavour where the driver gives
 * it, the versions the driver picks, symbolStatus untouched, then every path capped. */
static void test_cudart_style_lookup(void **state)
{
        scenario(FX_ARGS("procaddr"));
}

/* dlopen("libcuda.so.1") + dlsym of interposed names answer the shim (mapped from the real
 * pointer), others pass through; the pointer obtained that way is capped. */
static void test_dlsym(void **state)
{
        scenario(FX_ARGS("dlsym"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cudart_style_lookup),
            cmocka_unit_test(test_dlsym),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
