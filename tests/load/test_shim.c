/* SPDX-License-Identifier: Apache-2.0 */
/* test_shim.c - kerf-load under the shim (libkerf-cuda.so) in a slice on the simulated driver */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "load_fx.h"

#define MIB ((uint64_t)1 << 20)
#define GIB ((uint64_t)1 << 30)

static int setup(void **state)
{
        static lfx e;
        if (lfx_setup(&e) < 0)
                return -1;
        *state = &e;
        return 0;
}

static int teardown(void **state)
{
        lfx_teardown(*state);
        return 0;
}

static json_t *run_ok(lfx *e, const char *const *args)
{
        int rc = lfx_run(e, args);
        if (rc != 0)
                print_message("kerf-load %s: exit %d; stderr: %s\n", args[0], rc, lfx_stderr(e));
        assert_int_equal(rc, 0);
        json_t *l = lfx_lines(e);
        assert_non_null(l);
        return l;
}

/* The probe sees the slice: total = the cap, nothing larger than the cap allocates, and the
 * compute share is the slice's. */
static void test_probe_slice(void **state)
{
        lfx *e = *state;
        const uint64_t cap = 8 * GIB;
        assert_int_equal(lfx_region(e, cap, 50), 0);
        const char *args[] = {"probe", "--window-ms", "2000", "--warmup-ms", "500", NULL};
        json_t *l = run_ok(e, args);
        json_t *r = lfx_find(l, "result"), *st = lfx_find(l, "start");
        assert_non_null(r);
        double total = lfx_num(r, "memory_total"), fr = lfx_num(r, "memory_free");
        double largest = lfx_num(r, "largest_alloc"), share = lfx_num(r, "achieved_share");
        print_message("probe in a 8 GiB / 50 %% slice: total %.0f free %.0f largest %.0f share "
                      "%.3f (events %.3f) kernels %.0f\n",
                      total, fr, largest, share, lfx_num(r, "event_share"), lfx_num(r, "kernels"));
        assert_true(lfx_num(st, "memory_total") == (double)cap);
        assert_true(total == (double)cap);
        assert_true(largest <= fr && largest <= (double)cap);
        assert_true(largest >= fr - 4.0 * MIB);
        /* 50 %: the shim's limiter holds it within a few points; the loaded host may lose some
         * more between kernels (the probe alone gets > 0.8 here). */
        assert_true(share >= 0.35 && share <= 0.58);
        json_decref(l);
}

static void test_hog_slice(void **state)
{
        lfx *e = *state;
        const uint64_t cap = 4 * GIB;
        assert_int_equal(lfx_region(e, cap, 100), 0);
        const char *args[] = {"hog", "--chunk", "256MiB", "--hold-s", "0.2", "--spin", NULL};
        json_t *l = run_ok(e, args);
        json_t *h = lfx_find(l, "hog"), *st = lfx_find(l, "start"), *r = lfx_find(l, "result");
        assert_non_null(h);
        assert_non_null(r);
        assert_string_equal(json_string_value(json_object_get(h, "error")),
                            "CUDA_ERROR_OUT_OF_MEMORY");
        double a = lfx_num(h, "allocated"), fr = lfx_num(st, "memory_free");
        print_message("hog in a 4 GiB slice: %.0f allocated, %.0f free at start\n", a, fr);
        assert_true(a <= (double)cap && a <= fr && a + 256.0 * MIB > fr);
        assert_true(lfx_num(r, "kernels") > 0);
        json_decref(l);
}

/* A service in a slice: its requests still complete, slower than alone but without errors. */
static void test_serve_slice(void **state)
{
        lfx *e = *state;
        assert_int_equal(lfx_region(e, 8 * GIB, 50), 0);
        const char *args[] = {"serve", "--rate",    "20",  "--kernels", "2",    "--kernel-us",
                              "2000",  "--seconds", "1.5", "--mem",     "2GiB", NULL};
        json_t *l = run_ok(e, args);
        json_t *r = lfx_find(l, "result");
        print_message("serve in a 50 %% slice: p50 %.2f p99 %.2f ms, throughput %.1f\n",
                      lfx_num(r, "p50_ms"), lfx_num(r, "p99_ms"), lfx_num(r, "throughput"));
        assert_true(lfx_num(r, "errors") == 0);
        assert_true(lfx_num(r, "p50_ms") >= 4.0);
        assert_true(fabs(lfx_num(r, "throughput") - 20) <= 3);
        json_decref(l);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_probe_slice),
            cmocka_unit_test(test_hog_slice),
            cmocka_unit_test(test_serve_slice),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
