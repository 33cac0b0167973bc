/* SPDX-License-Identifier: Apache-2.0 */
/* test_init.c - fail-closed initialisation, fork, exit and dead-process reclaim */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "shim_fx.h"

#define CUDA_ERROR_NOT_INITIALIZED 3

/* cuInit refuses with NOT_INITIALIZED and exactly one line on stderr that contains `why`. */
static void refuses(fx *e, const char *const *extra, const char *why)
{
        int rc = fx_run(e, FX_ARGS("init"), extra);
        assert_int_equal(rc, CUDA_ERROR_NOT_INITIALIZED);
        assert_string_equal(e->out, "cuInit=3\n");
        assert_non_null(strstr(e->err, "kerf-shim: "));
        if (!strstr(e->err, why))
                fail_msg("stderr '%s' does not say '%s'", e->err, why);
        assert_non_null(strchr(e->err, '\n'));
        assert_int_equal(strchr(e->err, '\n')[1], 0); /* one line */
        assert_int_equal(atomic_load(&e->r->nprocs), 0);
}

static void test_region_missing(void **state)
{
        fx e;
        assert_int_equal(fx_setup(&e, FX_GIB), 0);
        refuses(&e, FX_ARGS("-KERF_SLICE_REGION"), "KERF_SLICE_REGION is not set");
        refuses(&e, FX_ARGS("-KERF_SLICE_REGION", "-KERF_SLICE_ABI"), "not in a kerf slice");
        refuses(&e, FX_ARGS("KERF_SLICE_REGION=/nonexistent/slice"), "cannot map");
        fx_teardown(&e);
}

static void test_region_world_readable(void **state)
{
        fx e;
        assert_int_equal(fx_setup(&e, FX_GIB), 0);
        assert_int_equal(chmod(e.region, 0664), 0);
        refuses(&e, NULL, "accessible to other users");
        assert_int_equal(chmod(e.region, 0660), 0);
        assert_int_equal(fx_run(&e, FX_ARGS("init"), NULL), 0);
        fx_teardown(&e);
}

static void test_region_foreign_abi(void **state)
{
        fx e;
        assert_int_equal(fx_setup(&e, FX_GIB), 0);
        e.r->abi_version = 1;
        refuses(&e, NULL, "ABI version 1");
        e.r->abi_version = KERF_SLICE_ABI_VERSION;
        refuses(&e, FX_ARGS("KERF_SLICE_ABI=1"), "KERF_SLICE_ABI=1");
        atomic_store(&e.r->magic, 0);
        refuses(&e, NULL, "not a kerf slice region");
        fx_teardown(&e);
}

static void test_region_lying(void **state)
{
        fx e;
        assert_int_equal(fx_setup(&e, FX_GIB), 0);
        atomic_store(&e.r->limits.memory_limit, 0);
        refuses(&e, NULL, "insane memory limits");
        atomic_store(&e.r->limits.memory_limit, UINT64_MAX);
        refuses(&e, NULL, "insane memory limits");
        atomic_store(&e.r->limits.memory_limit, FX_GIB);
        atomic_store(&e.r->limits.compute_limit_pct, 250);
        refuses(&e, NULL, "insane compute limits");
        fx_teardown(&e);
}

/* A fork child re-initialises: its own slot, none of the parent's charges. */
static void test_fork(void **state)
{
        fx e;
        assert_int_equal(fx_setup(&e, 4 * FX_GIB), 0);
        assert_int_equal(fx_run(&e, FX_ARGS("fork"), NULL), 0);
        assert_int_equal(atomic_load(&e.r->memory_charged), 0);
        assert_int_equal(atomic_load(&e.r->nprocs), 0);
        fx_teardown(&e);
}

/* SIGKILL while holding memory: a live process of the task reclaims the slot within ~1 s,
 * and the heartbeat moves. */
static void test_dead_process_reclaimed(void **state)
{
        fx e;
        assert_int_equal(fx_setup(&e, 4 * FX_GIB), 0);
        int in = -1, out = -1;
        pid_t a = fx_spawn(&e, FX_ARGS("hold"), NULL, &in, &out);
        char buf[32] = {0};
        assert_true(read(out, buf, sizeof(buf) - 1) > 0);
        assert_true(atomic_load(&e.r->memory_charged) >= FX_GIB + 300 * FX_MIB);
        kill(a, SIGKILL);
        fx_wait(&e, a);
        close(in);
        close(out);
        assert_int_equal(atomic_load(&e.r->nprocs), 1); /* dead, not yet reclaimed */
        pid_t b = fx_spawn(&e, FX_ARGS("hold"), NULL, &in, &out);
        assert_true(read(out, buf, sizeof(buf) - 1) > 0);
        uint64_t hb = atomic_load(&e.r->heartbeat_ns);
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
        assert_true(atomic_load(&e.r->heartbeat_ns) > hb);
        assert_int_equal(atomic_load(&e.r->nprocs), 1);
        assert_int_equal(atomic_load(&e.r->memory_charged), FX_GIB + 300 * FX_MIB);
        close(in);
        close(out);
        assert_int_equal(fx_wait(&e, b), 0);
        assert_int_equal(atomic_load(&e.r->memory_charged), 0);
        fx_teardown(&e);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_region_missing),
            cmocka_unit_test(test_region_world_readable),
            cmocka_unit_test(test_region_foreign_abi),
            cmocka_unit_test(test_region_lying),
            cmocka_unit_test(test_fork),
            cmocka_unit_test(test_dead_process_reclaimed),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
