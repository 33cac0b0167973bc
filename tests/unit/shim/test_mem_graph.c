/* SPDX-License-Identifier: Apache-2.0 */
/* test_mem_graph.c - graph memory nodes: the graph memory reservation is capped at 4 GiB */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "shim_fx.h"

#define CAP (4 * FX_GIB)

static void test_graph_memory(void **state)
{
        (void)state;
        fx e;
        assert_int_equal(fx_setup(&e, CAP), 0);
        char *sl = strrchr(e.child, '/'); /* this test's own child, next to shim_mem_child */
        assert_non_null(sl);
        snprintf(sl + 1, sizeof(e.child) - (size_t)(sl + 1 - e.child), "shim_graphmem_child");
        int rc = fx_run(&e, FX_ARGS("graph"), NULL);
        if (rc)
                fprintf(stderr, "%s%s", e.out, e.err);
        assert_int_equal(rc, 0);
        assert_int_equal(atomic_load(&e.r->memory_charged), 0);
        assert_int_equal(atomic_load(&e.r->nprocs), 0);
        assert_true(atomic_load(&e.r->memory_peak) <= CAP);
        fx_teardown(&e);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_graph_memory),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
