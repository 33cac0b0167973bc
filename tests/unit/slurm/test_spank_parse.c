/* SPDX-License-Identifier: Apache-2.0 */
/* test_spank_parse.c - the values --gpu-mem, --gpu-compute and --gpu-compute-limit accept */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "spank_kerf.h"

static void test_size(void **st)
{
        uint64_t v = 7;
        (void)st;
        assert_int_equal(kerf_spank_parse_size("4G", &v), 0);
        assert_int_equal(v, 4ull << 30);
        assert_int_equal(kerf_spank_parse_size("4GiB", &v), 0);
        assert_int_equal(v, 4ull << 30);
        assert_int_equal(kerf_spank_parse_size("512m", &v), 0);
        assert_int_equal(v, 512ull << 20);
        assert_int_equal(kerf_spank_parse_size("512MB", &v), 0);
        assert_int_equal(v, 512ull << 20);
        assert_int_equal(kerf_spank_parse_size("1048576", &v), 0);
        assert_int_equal(v, 1048576);
        assert_int_equal(kerf_spank_parse_size("1T", &v), 0);
        assert_int_equal(v, 1ull << 40);
        v = 7;
        static const char *const bad[] = {
            "",          "lots", "-1", "0", "4X", "4Gx", "4 G", "G", "99999999999999999999",
            "20000000T", " 4G"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                assert_int_equal(kerf_spank_parse_size(bad[i], &v), -22);
                assert_int_equal(v, 7); /* untouched on failure */
        }
        assert_int_equal(kerf_spank_parse_size(NULL, &v), -22);
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
