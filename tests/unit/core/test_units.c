/* SPDX-License-Identifier: Apache-2.0 */
/* test_units.c - the one size and duration rule (docs/UNITS.md): accepted and refused forms,
 * the messages, overflow, and formatter round trips */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kerf/units.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void size_good(void **state)
{
        static const struct {
                const char *s;
                uint64_t v;
        } cases[] = {
            {"0", 0},
            {"0B", 0},
            {"16GiB", 16 * KERF_GIB},
            {"16G", 16 * KERF_GIB}, /* Slurm's one-letter units are binary */
            {"16g", 16 * KERF_GIB},
            {"16gib", 16 * KERF_GIB},
            {"16 GiB", 16 * KERF_GIB},
            {"512MiB", 512 * KERF_MIB},
            {"512M", 512 * KERF_MIB},
            {"1.5TiB", 1536 * KERF_GIB},
            {"2TiB", 2048 * KERF_GIB},
            {"0.5KiB", 512},
            {"4K", 4096},
            {"100B", 100},
            {"17179869184B", 17179869184ULL},
            {"1PiB", 1ULL << 50},
            {"1P", 1ULL << 50},
            {"0.1GiB", 107374182}, /* rounded down to a whole byte */
            {"18446744073709551615B", UINT64_MAX},
            {"15.999999999GiB", 17179869182ULL},
            {"16383PiB", 16383ULL << 50},
        };

        (void)state;
        for (size_t i = 0; i < N(cases); i++) {
                uint64_t v = 42;
                char err[256] = "";
                int r = kerf_parse_size(cases[i].s, &v, err, sizeof(err));
                if (r != 0 || v != cases[i].v)
                        print_error("'%s': r=%d v=%llu err='%s'\n", cases[i].s, r,
                                    (unsigned long long)v, err);
                assert_int_equal(r, 0);
                assert_int_equal(v, cases[i].v);
        }
}

static void size_bad(void **state)
{
        static const struct {
                const char *s;
                int r;
                const char *msg; /* a piece of the message */
        } cases[] = {
            {"16", -EINVAL, "'16' has no unit: write 16GiB or 16MiB"},
            {"48", -EINVAL, "'48' has no unit: write 48GiB or 48MiB"},
            {"1.5", -EINVAL, "write 1.5GiB or 1.5MiB"},
            {"17179869184", -EINVAL, "has no unit"},
            {"16GB", -EINVAL, "'16GB' is ambiguous (powers of 1000 or of 1024?): write 16GiB"},
            {"16gb", -EINVAL, "write 16GiB"},
            {"512MB", -EINVAL, "write 512MiB"},
            {"2 TB", -EINVAL, "write 2TiB"},
            {"1KB", -EINVAL, "write 1KiB"},
            {"1PB", -EINVAL, "write 1PiB"},
            {"", -EINVAL, "'' is not a size: write a number and a binary unit"},
            {"lots", -EINVAL,
             "'lots' is not a size: write a number and a binary unit: B, KiB, "
             "MiB, GiB, TiB, PiB (or K, M, G, T, P)"},
            {"GiB", -EINVAL, "is not a size"},
            {"-1GiB", -EINVAL, "is not a size"},
            {"+1GiB", -EINVAL, "is not a size"},
            {"1.", -EINVAL, "is not a size"},
            {".5G", -EINVAL, "is not a size"},
            {"1.5B", -EINVAL, "not a whole number of bytes"},
            {"16 ", -EINVAL, "is not a size"},
            {" 16G", -EINVAL, "is not a size"},
            {"16  G", -EINVAL, "is not a size"},
            {"16XB", -EINVAL, "is not a size"},
            {"16GiBs", -EINVAL, "is not a size"},
            {"1e9G", -EINVAL, "is not a size"},
            {"0x10G", -EINVAL, "is not a size"},
            {"1,5G", -EINVAL, "is not a size"},
            {"16Gi", -EINVAL, "is not a size"},
            {"16iB", -EINVAL, "is not a size"},
            {"16EiB", -EINVAL, "is not a size"},
            {"1.0000000001G", -EINVAL, "at most 9 decimals"},
            {"18446744073709551616B", -ERANGE, "too large"},
            {"16777216TiB", -ERANGE, "too large"},
            {"16384PiB", -ERANGE, "too large"},
            {"99999999999999999999999GiB", -ERANGE, "too large"},
        };
        uint64_t v = 42;

        (void)state;
        for (size_t i = 0; i < N(cases); i++) {
                char err[256] = "";
                int r = kerf_parse_size(cases[i].s, &v, err, sizeof(err));
                if (r != cases[i].r || !strstr(err, cases[i].msg))
                        print_error("'%s': r=%d err='%s', want %d '%s'\n", cases[i].s, r, err,
                                    cases[i].r, cases[i].msg);
                assert_int_equal(r, cases[i].r);
                assert_non_null(strstr(err, cases[i].msg));
                assert_int_equal(kerf_parse_size(cases[i].s, &v, NULL, 0), cases[i].r);
        }
        assert_int_equal(v, 42); /* never written on failure */
        assert_int_equal(kerf_parse_size(NULL, &v, NULL, 0), -EINVAL);
        assert_int_equal(kerf_parse_size("1G", NULL, NULL, 0), -EINVAL);
}

static void size_format(void **state)
{
        static const struct {
                uint64_t v;
                const char *s;
        } cases[] = {
            {0, "0B"},
            {100, "100B"},
            {1023, "1023B"},
            {1024, "1KiB"},
            {1536, "1.5KiB"},
            {16 * KERF_GIB, "16GiB"},
            {512 * KERF_MIB, "512MiB"},
            {1536 * KERF_GIB, "1.5TiB"},
            {16 * KERF_GIB - KERF_MIB * 10, "15.99GiB"},
            {4 * KERF_GIB + 1, "4GiB"}, /* rounded */
            {KERF_GIB - 1, "1GiB"},     /* rounded up into the next unit */
            {1023 * KERF_MIB, "1023MiB"},
            {1ULL << 60, "1024PiB"},
            {UINT64_MAX, "16384PiB"},
        };
        char buf[KERF_UNITS_BUF];

        (void)state;
        for (size_t i = 0; i < N(cases); i++) {
                kerf_format_size(cases[i].v, buf, sizeof(buf));
                if (strcmp(buf, cases[i].s))
                        print_error("%llu: '%s', want '%s'\n", (unsigned long long)cases[i].v, buf,
                                    cases[i].s);
                assert_string_equal(buf, cases[i].s);
        }
        assert_string_equal(kerf_format_size(5, buf, 3), "5B"); /* truncated, terminated */
}

/* parse(format(x)) == x for whole units, within 0.5 % otherwise */
static void size_round_trip(void **state)
{
        char buf[KERF_UNITS_BUF];
        uint64_t x = 1, v;

        (void)state;
        for (unsigned shift = 0; shift <= 50; shift += 10)
                for (uint64_t n = 1; n < 1024; n = n * 3 + 1) {
                        x = n << shift;
                        assert_int_equal(
                            kerf_parse_size(kerf_format_size(x, buf, sizeof(buf)), &v, NULL, 0), 0);
                        assert_int_equal(v, x);
                }
        for (x = 1; x < UINT64_MAX / 7; x = x * 7 + 3) {
                kerf_format_size(x, buf, sizeof(buf));
                assert_int_equal(kerf_parse_size(buf, &v, NULL, 0), 0);
                uint64_t d = v > x ? v - x : x - v;
                if (d > x / 200)
                        print_error("%llu -> '%s' -> %llu\n", (unsigned long long)x, buf,
                                    (unsigned long long)v);
                assert_true(d <= x / 200);
        }
}

static void duration_good(void **state)
{
        static const struct {
                const char *s;
                uint64_t v;
        } cases[] = {
            {"0", 0},
            {"90", 90},
            {"90s", 90},
            {"15m", 900},
            {"1h30m", 5400},
            {"2d", 172800},
            {"1d12h", 129600},
            {"1d2h3m4s", 93784},
            {"365d", 365 * KERF_DAY_S},
            {"0s", 0},
            {"1-00:00:00", 86400},       /* Slurm: D-HH:MM:SS */
            {"01:30:00", 5400},          /* HH:MM:SS */
            {"100:00:00", 360000},       /* the first field is unbounded */
            {"90:30", 5430},             /* MM:SS */
            {"2-12", 2 * 86400 + 43200}, /* D-HH */
            {"2-12:30", 2 * 86400 + 43200 + 1800},
            {"0-0:0:1", 1},
            {"18446744073709551615", UINT64_MAX},
        };

        (void)state;
        for (size_t i = 0; i < N(cases); i++) {
                uint64_t v = 42;
                char err[256] = "";
                int r = kerf_parse_duration(cases[i].s, &v, err, sizeof(err));
                if (r != 0 || v != cases[i].v)
                        print_error("'%s': r=%d v=%llu err='%s'\n", cases[i].s, r,
                                    (unsigned long long)v, err);
                assert_int_equal(r, 0);
                assert_int_equal(v, cases[i].v);
        }
}

static void duration_bad(void **state)
{
        static const struct {
                const char *s;
                int r;
                const char *msg;
        } cases[] = {
            {"", -EINVAL, "'' is not a duration: write seconds (90), units d h m s"},
            {"soon", -EINVAL,
             "'soon' is not a duration: write seconds (90), units d h m s in "
             "that order (90s, 15m, 1h30m, 2d) or Slurm's [D-]HH:MM:SS"},
            {"-5", -EINVAL, "is not a duration"},
            {"+5", -EINVAL, "is not a duration"},
            {"1.5h", -EINVAL, "is not a duration"},
            {"30m1h", -EINVAL, "is not a duration"}, /* largest unit first */
            {"1h1h", -EINVAL, "is not a duration"},
            {"1h30", -EINVAL, "is not a duration"},
            {"h", -EINVAL, "is not a duration"},
            {"1w", -EINVAL, "is not a duration"},
            {"1H", -EINVAL, "is not a duration"},
            {"1 h", -EINVAL, "is not a duration"},
            {" 90", -EINVAL, "is not a duration"},
            {"1:2:3:4", -EINVAL, "is not a duration"},
            {"1-", -EINVAL, "is not a duration"},
            {"-1:00", -EINVAL, "is not a duration"},
            {"1-2-3", -EINVAL, "is not a duration"},
            {"1::00", -EINVAL, "is not a duration"},
            {"10:", -EINVAL, "is not a duration"},
            {"1-00:00:00:00", -EINVAL, "is not a duration"},
            {"10:60", -EINVAL, "minutes and seconds are 0..59"},
            {"1:60:00", -EINVAL, "minutes and seconds are 0..59"},
            {"1-24:00:00", -EINVAL, "hours after 'D-' 0..23"},
            {"18446744073709551616", -ERANGE, "too long a duration"},
            {"213503982334602d", -ERANGE, "too long a duration"},
            {"213503982334601d7h0m16s", -ERANGE, "too long a duration"},
            {"213503982334602-00:00:00", -ERANGE, "too long a duration"},
            {"99999999999999999999h", -ERANGE, "too long a duration"},
        };
        uint64_t v = 42;

        (void)state;
        for (size_t i = 0; i < N(cases); i++) {
                char err[256] = "";
                int r = kerf_parse_duration(cases[i].s, &v, err, sizeof(err));
                if (r != cases[i].r || !strstr(err, cases[i].msg))
                        print_error("'%s': r=%d err='%s', want %d '%s'\n", cases[i].s, r, err,
                                    cases[i].r, cases[i].msg);
                assert_int_equal(r, cases[i].r);
                assert_non_null(strstr(err, cases[i].msg));
        }
        assert_int_equal(v, 42);
        assert_int_equal(kerf_parse_duration(NULL, &v, NULL, 0), -EINVAL);
        assert_int_equal(kerf_parse_duration("1h", NULL, NULL, 0), -EINVAL);
}

static void duration_format(void **state)
{
        static const struct {
                uint64_t v;
                const char *s;
        } cases[] = {
            {0, "0s"},          {59, "59s"},
            {90, "1m30s"},      {900, "15m"},
            {5400, "1h30m"},    {86400, "1d"},
            {172800, "2d"},     {93784, "1d2h3m4s"},
            {31536000, "365d"}, {UINT64_MAX, "213503982334601d7h15s"},
        };
        char buf[KERF_UNITS_BUF];
        uint64_t v;

        (void)state;
        for (size_t i = 0; i < N(cases); i++) {
                kerf_format_duration(cases[i].v, buf, sizeof(buf));
                assert_string_equal(buf, cases[i].s);
                assert_int_equal(kerf_parse_duration(buf, &v, NULL, 0), 0);
                assert_int_equal(v, cases[i].v); /* exact round trip */
        }
        for (uint64_t x = 1; x < UINT64_MAX / 5; x = x * 5 + 1) {
                assert_int_equal(
                    kerf_parse_duration(kerf_format_duration(x, buf, sizeof(buf)), &v, NULL, 0), 0);
                assert_int_equal(v, x);
        }
}

/* The bounds every reader shares (include/kerf/units.h), pinned: changing one is a decision
 * that docs/UNITS.md records. */
static void bounds(void **state)
{
        (void)state;
        assert_int_equal(KERF_MAX_RUNTIME_S, 31536000);
        assert_int_equal(KERF_MAX_IDLE_TIMEOUT_S, 31536000);
        assert_int_equal(KERF_MAX_CPU_MILLI, 100000000);
        assert_int_equal(KERF_MAX_GPU_MEM_BYTES, 1ULL << 50);
        assert_int_equal(KERF_MAX_MEM_BYTES, 1ULL << 60);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(size_good),       cmocka_unit_test(size_bad),
            cmocka_unit_test(size_format),     cmocka_unit_test(size_round_trip),
            cmocka_unit_test(duration_good),   cmocka_unit_test(duration_bad),
            cmocka_unit_test(duration_format), cmocka_unit_test(bounds),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
