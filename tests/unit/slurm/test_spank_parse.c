/* SPDX-License-Identifier: Apache-2.0 */
/* test_spank_parse.c - the values --gpu-mem, --gpu-compute and --gpu-compute-limit accept */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "spank_kerf.h"

/* --gpu-mem: the one size rule (docs/UNITS.md), 1B..1PiB */
static void test_size(void **st)
{
        static const struct {
                const char *s;
                uint64_t v;
        } good[] = {{"4G", 4ull << 30},       {"4GiB", 4ull << 30}, {"512m", 512ull << 20},
                    {"512MiB", 512ull << 20}, {"1T", 1ull << 40},   {"1.5G", 3ull << 29},
                    {"1PiB", 1ull << 50},     {"4096B", 4096}};
        static const struct {
                const char *s;
                const char *msg;
        } bad[] = {
            {"1048576", "'1048576' has no unit: write 1048576GiB or 1048576MiB"},
            {"512MB", "'512MB' is ambiguous (powers of 1000 or of 1024?): write 512MiB"},
            {"lots", "'lots' is not a size: write a number and a binary unit"},
            {"0", "'0' is not in 1B..1PiB"},
            {"2PiB", "'2PiB' is not in 1B..1PiB"},
            {"99999999999999999999G", "too large"},
            {"", "is not a size"},
            {"-1G", "is not a size"},
            {"4X", "is not a size"},
            {"4Gx", "is not a size"},
            {" 4G", "is not a size"},
        };
        char err[256];
        uint64_t v = 7;
        (void)st;
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                assert_int_equal(kerf_spank_parse_mem(good[i].s, &v, err, sizeof(err)), 0);
                assert_int_equal(v, good[i].v);
        }
        v = 7;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                err[0] = 0;
                assert_true(kerf_spank_parse_mem(bad[i].s, &v, err, sizeof(err)) < 0);
                if (!strstr(err, bad[i].msg))
                        fail_msg("'%s': '%s', want '%s'", bad[i].s, err, bad[i].msg);
                assert_int_equal(v, 7); /* untouched on failure */
        }
        assert_int_equal(kerf_spank_parse_mem(NULL, &v, err, sizeof(err)), -22);
}

static void test_pct(void **st)
{
        unsigned v = 7;
        (void)st;
        assert_int_equal(kerf_spank_parse_pct("1", 1, &v), 0);
        assert_int_equal(v, 1);
        assert_int_equal(kerf_spank_parse_pct("100", 1, &v), 0);
        assert_int_equal(v, 100);
        v = 7;
        static const char *const bad[] = {"0", "101", "", "50%", "-5", "x", "5.5", "1e2"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(kerf_spank_parse_pct(bad[i], 1, &v), -22);
                assert_int_equal(v, 7);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_size), cmocka_unit_test(test_pct)};
        return cmocka_run_group_tests(tests, NULL, NULL);
}
