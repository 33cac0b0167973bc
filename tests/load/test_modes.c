/* SPDX-License-Identifier: Apache-2.0 */
/* test_modes.c - kerf-load's modes on the simulated driver, without the shim */
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

/* Runs args, expects exit code rc, returns the parsed lines (caller decrefs). */
static json_t *run_ok(lfx *e, int rc, const char *const *args)
{
        int got = lfx_run(e, args);
        if (got != rc)
                print_message("kerf-load %s: exit %d (wanted %d); stderr: %s\n", args[0], got, rc,
                              lfx_stderr(e));
        assert_int_equal(got, rc);
        json_t *l = lfx_lines(e);
        assert_non_null(l);
        json_t *st = lfx_find(l, "start");
        assert_non_null(st);
        assert_string_equal(json_string_value(json_object_get(st, "mode")), args[0]);
        assert_string_equal(json_string_value(json_object_get(st, "kernels")), "kerfsim");
        assert_true(lfx_num(st, "memory_total") == (double)e->phys);
        return l;
}

static void test_probe(void **state)
{
        lfx *e = *state;
        const char *args[] = {"probe", "--window-ms", "500", "--warmup-ms", "100", NULL};
        json_t *l = run_ok(e, 0, args);
        json_t *r = lfx_find(l, "result");
        assert_non_null(r);
        double total = lfx_num(r, "memory_total"), fr = lfx_num(r, "memory_free");
        double largest = lfx_num(r, "largest_alloc"), share = lfx_num(r, "achieved_share");
        print_message("probe alone: total %.0f free %.0f largest %.0f share %.3f kernels %.0f\n",
                      total, fr, largest, share, lfx_num(r, "kernels"));
        assert_true(total == (double)e->phys);
        assert_true(largest <= fr);
        assert_true(largest >= fr - 4.0 * MIB); /* 2 MiB granularity of search and charges */
        assert_true(lfx_num(r, "kernels") > 0);
        /* Alone the GPU is ours; the host (shared, loaded) costs a little between kernels. */
        assert_true(share > 0.5 && share <= 1.02);
        json_decref(l);
}

static void test_serve(void **state)
{
        lfx *e = *state;
        const char *args[] = {"serve",       "--rate", "40",        "--kernels", "3",
                              "--kernel-us", "2000",   "--seconds", "2",         "--window-ms",
                              "500",         "--mem",  "1GiB",      NULL};
        json_t *l = run_ok(e, 0, args);
        json_t *r = lfx_find(l, "result");
        assert_non_null(r);
        print_message("serve 40/s x 3 x 2 ms: n %.0f p50 %.2f p99 %.2f ms, throughput %.2f\n",
                      lfx_num(r, "n"), lfx_num(r, "p50_ms"), lfx_num(r, "p99_ms"),
                      lfx_num(r, "throughput"));
        assert_true(lfx_num(r, "errors") == 0);
        /* No request can finish before its kernels ran: 3 x 2 ms. */
        assert_true(lfx_num(r, "p50_ms") >= 6.0);
        assert_true(lfx_num(r, "p95_ms") >= lfx_num(r, "p50_ms"));
        assert_true(lfx_num(r, "p99_ms") >= lfx_num(r, "p95_ms"));
        assert_true(fabs(lfx_num(r, "throughput") - 40) <= 4);
        assert_true(fabs(lfx_num(r, "offered") - 40) <= 2);
        assert_true(lfx_count(l, "window") >= 3);
        json_t *w = lfx_find(l, "window");
        assert_true(lfx_num(w, "rate") == 40);
        assert_true(json_is_number(json_object_get(w, "p99_ms")));
        json_decref(l);
}

static void test_serve_sweep(void **state)
{
        lfx *e = *state;
        const char *args[] = {"serve", "--rates",   "20,60", "--kernels", "2",     "--kernel-us",
                              "1000",  "--seconds", "1",     "--pattern", "burst", NULL};
        json_t *l = run_ok(e, 0, args);
        assert_int_equal(lfx_count(l, "step"), 2);
        size_t i, k = 0;
        json_t *o;
        const double rates[] = {20, 60};
        json_array_foreach(l, i, o)
        {
                if (strcmp(lfx_ev(o), "step"))
                        continue;
                print_message("step %.0f/s: n %.0f p99 %.2f ms throughput %.1f\n",
                              lfx_num(o, "rate"), lfx_num(o, "n"), lfx_num(o, "p99_ms"),
                              lfx_num(o, "throughput"));
                assert_true(lfx_num(o, "rate") == rates[k]);
                assert_true(lfx_num(o, "p50_ms") >= 2.0);
                assert_true(fabs(lfx_num(o, "throughput") - rates[k]) <= rates[k] * 0.15);
                k++;
        }
        json_t *r = lfx_find(l, "result");
        assert_int_equal(json_array_size(json_object_get(r, "rates")), 2);
        json_decref(l);
}

/* The first number after `key ` in a file, or -1. */
static long long file_num(const char *path, const char *key)
{
        char buf[256] = "";
        FILE *f = fopen(path, "r");
        if (!f)
                return -1;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = 0;
        fclose(f);
        const char *p = strstr(buf, key);
        return p ? atoll(p + strlen(key)) : -1;
}

static void test_train_resume(void **state)
{
        lfx *e = *state;
        char ck[160], prog[176];
        snprintf(ck, sizeof(ck), "%s/ck", e->dir);
        snprintf(prog, sizeof(prog), "%s.progress", ck);
        const char *args[] = {
            "train",     "--checkpoint",       ck,   "--step-us", "1000", "--steps",
            "100000000", "--checkpoint-every", "25", NULL};
        pid_t pid = lfx_start(e, true, args);
        assert_true(pid > 0);
        /* Until a checkpoint exists and the progress is past it, then kill -9. */
        long long c = -1, p = -1;
        for (int i = 0; i < 1000; i++) {
                fxc_sleep_ms(10);
                c = file_num(ck, "step ");
                p = file_num(prog, "step ");
                if (c >= 50 && p > c + 3)
                        break;
        }
        kill(pid, SIGKILL);
        assert_int_equal(lfx_wait(pid), 128 + SIGKILL);
        c = file_num(ck, "step ");
        p = file_num(prog, "step ");
        print_message("killed at progress %lld, checkpoint %lld\n", p, c);
        assert_true(c >= 50 && p >= c);
        const char *again[] = {
            "train", "--checkpoint",       ck,   "--step-us", "1000", "--seconds",
            "0.3",   "--checkpoint-every", "25", NULL};
        json_t *l = run_ok(e, 0, again);
        json_t *r = lfx_find(l, "result");
        assert_true(lfx_num(r, "resumed_from") == (double)c);
        assert_true(lfx_num(r, "retries") == 1);
        assert_true(lfx_num(r, "work_lost_steps") == (double)(p - c));
        assert_true(lfx_num(r, "step") == (double)c + lfx_num(r, "steps_done"));
        assert_true(lfx_num(r, "steps_done") > 0);
        double end = lfx_num(r, "step");
        json_decref(l);
        /* A clean end checkpoints where it stopped: nothing lost the next time. */
        l = run_ok(e, 0, again);
        r = lfx_find(l, "result");
        assert_true(lfx_num(r, "resumed_from") == end);
        assert_true(lfx_num(r, "retries") == 2);
        assert_true(lfx_num(r, "work_lost_steps") == 0);
        json_decref(l);
        /* --steps is counted over resumes: already there, nothing to do. */
        char upto[32];
        snprintf(upto, sizeof(upto), "%.0f", end);
        const char *done[] = {"train", "--checkpoint", ck, "--steps", upto, NULL};
        l = run_ok(e, 0, done);
        r = lfx_find(l, "result");
        assert_true(lfx_num(r, "steps_done") == 0);
        json_decref(l);
}

static void test_hog(void **state)
{
        lfx *e = *state;
        const char *args[] = {"hog", "--chunk", "8GiB", "--hold-s", "0.2", NULL};
        json_t *l = run_ok(e, 0, args);
        json_t *h = lfx_find(l, "hog"), *st = lfx_find(l, "start");
        assert_non_null(h);
        assert_string_equal(json_string_value(json_object_get(h, "error")),
                            "CUDA_ERROR_OUT_OF_MEMORY");
        double a = lfx_num(h, "allocated"), fr = lfx_num(st, "memory_free");
        print_message("hog: %.0f of %.0f free in %.0f chunks\n", a, fr, lfx_num(h, "count"));
        assert_true(a <= fr && a + 8.0 * GIB > fr);
        assert_true(lfx_num(h, "count") * 8.0 * GIB == a);
        assert_non_null(lfx_find(l, "result"));
        json_decref(l);
}

static void test_crash(void **state)
{
        lfx *e = *state;
        const struct {
                const char *how;
                int rc;
        } c[] = {{"exit", 3},
                 {"segv", 128 + SIGSEGV},
                 {"abort", 128 + SIGABRT},
                 {"kill", 128 + SIGKILL}};
        for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
                const char *args[] = {"crash", "--after-ms", "100", "--how", c[i].how, NULL};
                json_t *l = run_ok(e, c[i].rc, args);
                json_t *x = lfx_find(l, "crash");
                assert_non_null(x);
                assert_string_equal(json_string_value(json_object_get(x, "how")), c[i].how);
                assert_true(lfx_num(x, "kernels") > 0 && lfx_num(x, "t_ms") >= 100);
                assert_null(lfx_find(l, "result"));
                json_decref(l);
        }
}

static void test_dev(void **state)
{
        lfx *e = *state;
        const char *args[] = {"dev",       "--busy-ms", "100",         "--idle-ms", "150",
                              "--seconds", "1",         "--window-ms", "500",       NULL};
        json_t *l = run_ok(e, 0, args);
        json_t *r = lfx_find(l, "result");
        double f = lfx_num(r, "busy_fraction");
        print_message("dev: %.0f cycles, busy fraction %.2f\n", lfx_num(r, "cycles"), f);
        assert_true(lfx_num(r, "cycles") >= 3 && lfx_num(r, "cycles") <= 5);
        assert_true(f > 0.25 && f < 0.65); /* 100 / 250 */
        assert_true(lfx_count(l, "window") >= 1);
        json_decref(l);
}

static void test_bad_args(void **state)
{
        lfx *e = *state;
        static const struct {
                const char *args[6];
                const char *says;
        } c[] = {
            {{NULL}, "MODE"},
            {{"bogus", NULL}, "MODE bogus"},
            {{"serve", "--rate", "x", NULL}, "--rate x"},
            {{"serve", "--rate", "0", NULL}, "--rate 0"},
            {{"serve", "--rate", NULL}, "--rate: needs a value"},
            {{"serve", "--rates", "1,,2", NULL}, "--rates 1,,2"},
            {{"serve", "--rates", "1,2,", NULL}, "--rates 1,2,"},
            {{"serve", "--rate", "5", "--rates", "1,2", NULL}, "--rates"},
            {{"serve", "--pattern", "zig", NULL}, "--pattern zig"},
            {{"serve", "--kernels", "-3", NULL}, "--kernels -3"},
            {{"serve", "--mem", "12XB", NULL}, "--mem 12XB: '12XB' is not a size"},
            /* the one size rule (docs/UNITS.md): no bare numbers, no ambiguous GB */
            {{"serve", "--mem", "1024", NULL}, "--mem 1024: '1024' has no unit: write 1024GiB"},
            {{"train", "--mem", "2GB", NULL}, "--mem 2GB: '2GB' is ambiguous"},
            {{"serve", "--seconds", "nan", NULL}, "--seconds nan"},
            {{"probe", "--mem", "1GiB", NULL}, "--mem: not an option of probe"},
            {{"hog", "--chunk", "1MiB", NULL}, "--chunk 1MiB: must be from 2MiB to"},
            {{"train", "--steps", "5", NULL}, "--checkpoint"},
            {{"train", "--checkpoint", "/tmp/x", NULL}, "--steps"},
            {{"crash", "--how", "burn", NULL}, "--how burn"},
            {{"probe", "--device", "64", NULL}, "--device 64"},
            {{"probe", "--frobnicate", NULL}, "--frobnicate: unknown option"},
        };
        for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
                int rc = lfx_run(e, c[i].args);
                const char *err = lfx_stderr(e);
                if (rc != 2 || !strstr(err, c[i].says))
                        print_message("case %zu: exit %d, stderr: %s", i, rc, err);
                assert_int_equal(rc, 2);
                assert_non_null(strstr(err, c[i].says));
        }
        const char *help[] = {"--help", NULL};
        assert_int_equal(lfx_run(e, help), 0);
}

static void test_no_driver(void **state)
{
        lfx *e = *state;
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (h) {
                dlclose(h);
                skip(); /* a real driver is installed: kerf-load would find it */
        }
        const char *args[] = {"probe", NULL};
        pid_t pid = lfx_start(e, false, args);
        assert_int_equal(lfx_wait(pid), 1);
        assert_non_null(strstr(lfx_stderr(e), "cannot load libcuda.so.1"));
}

/* Arguments go into the start line escaped: quotes, backslashes, control characters. */
static void test_escaping(void **state)
{
        lfx *e = *state;
        char ck[192];
        snprintf(ck, sizeof(ck), "%s/c\"k\\\n\t\x01x", e->dir);
        const char *args[] = {"train", "--checkpoint", ck, "--steps", "3", "--step-us", "10", NULL};
        json_t *l = run_ok(e, 0, args);
        json_t *a = json_object_get(lfx_find(l, "start"), "args");
        assert_int_equal(json_array_size(a), 7);
        assert_string_equal(json_string_value(json_array_get(a, 2)), ck);
        assert_true(lfx_num(lfx_find(l, "result"), "step") == 3);
        json_decref(l);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_bad_args),    cmocka_unit_test(test_no_driver),
            cmocka_unit_test(test_probe),       cmocka_unit_test(test_serve),
            cmocka_unit_test(test_serve_sweep), cmocka_unit_test(test_train_resume),
            cmocka_unit_test(test_hog),         cmocka_unit_test(test_crash),
            cmocka_unit_test(test_dev),         cmocka_unit_test(test_escaping),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
