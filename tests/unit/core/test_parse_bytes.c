/* SPDX-License-Identifier: Apache-2.0 */
/* test_parse_bytes.c - byte sizes with binary units */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kerf/core.h"

static void good(void **state)
{
        static const struct {
                const char *s;
                uint64_t v;
        } cases[] = {
            {"0", 0},
            {"17179869184", 17179869184ULL},
            {"16GiB", 16 * KERF_GIB},
            {"16G", 16 * KERF_GIB},
            {"16GB", 16 * KERF_GIB},
            {"16gb", 16 * KERF_GIB},
            {"16 GiB", 16 * KERF_GIB},
            {"512MiB", 512 * KERF_MIB},
            {"512M", 512 * KERF_MIB},
            {"1.5TiB", 1536 * KERF_GIB},
            {"2TiB", 2048 * KERF_GIB},
            {"0.5KiB", 512},
            {"4K", 4096},
            {"100B", 100},
            {"1PiB", 1ULL << 50},
            {"0.1GiB", 107374182}, /* floor */
            {"18446744073709551615", UINT64_MAX},
            {"15.999999999GiB", 17179869182ULL},
        };

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                uint64_t v = 42;
                if (kerf_parse_bytes(cases[i].s, &v) != 0)
                        print_error("'%s' refused\n", cases[i].s);
                assert_int_equal(kerf_parse_bytes(cases[i].s, &v), 0);
                assert_int_equal(v, cases[i].v);
        }
}

static void bad(void **state)
{
        static const char *const cases[] = {
            "",
            "GiB",
            "-1",
            "+1",
            "1.",
            ".5G",
            "1.5",
            "1.5B",
            "16 ",
            " 16",
            "16  G",
            "16XB",
            "16GiBs",
            "1e9",
            "0x10",
            "16 G B",
            "1,5G",
            "16Gi",
            "16iB",
            "1.0000000001G",
            "18446744073709551616",
            "16777216TiB",
            "16384PiB",
        };
        uint64_t v = 42;

        (void)state;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                if (kerf_parse_bytes(cases[i], &v) != -EINVAL)
                        print_error("'%s' accepted\n", cases[i]);
                assert_int_equal(kerf_parse_bytes(cases[i], &v), -EINVAL);
        }
        assert_int_equal(v, 42); /* never written on failure */
        assert_int_equal(kerf_parse_bytes(NULL, &v), -EINVAL);
        assert_int_equal(kerf_parse_bytes("1G", NULL), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(good),
            cmocka_unit_test(bad),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
