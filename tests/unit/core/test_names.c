/* SPDX-License-Identifier: Apache-2.0 */
/* test_names.c - enum names and their parsers round-trip */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "kerf/core.h"

static void round_trips(void **state)
{
        (void)state;
        for (int i = 0; i < KERF_UNIT_KIND_COUNT; i++)
                assert_int_equal(kerf_unit_kind_parse(kerf_unit_kind_name(i)), i);
        for (int i = 0; i < KERF_GPU_MODE_COUNT; i++)
                assert_int_equal(kerf_gpu_mode_parse(kerf_gpu_mode_name(i)), i);
        for (int i = 0; i < KERF_WL_COUNT; i++)
                assert_int_equal(kerf_workload_parse(kerf_workload_name(i)), i);
        for (int i = 0; i < KERF_TIER_COUNT; i++)
                assert_int_equal(kerf_tier_parse(kerf_tier_name(i)), i);
        for (int i = 0; i < KERF_UNIT_STATE_COUNT; i++)
                assert_string_not_equal(kerf_unit_state_name(i), "?");
}

static void spellings(void **state)
{
        (void)state;
        assert_string_equal(kerf_unit_kind_name(KERF_UNIT_TSLICE), "tslice");
        assert_string_equal(kerf_gpu_mode_name(KERF_GPU_MODE_SHARED), "shared");
        assert_string_equal(kerf_unit_state_name(KERF_UNIT_DESTROYING), "destroying");
        assert_string_equal(kerf_workload_name(KERF_WL_INFERENCE), "inference");
        assert_string_equal(kerf_tier_name(KERF_TIER_EXPLORATORY), "exploratory");
        assert_int_equal(kerf_tier_parse("high-impact"), KERF_TIER_HIGH);
        assert_int_equal(kerf_tier_parse("High"), KERF_TIER_HIGH);
        assert_int_equal(kerf_unit_kind_parse("MIG"), KERF_UNIT_MIG);
}

static void out_of_range(void **state)
{
        (void)state;
        assert_string_equal(kerf_unit_kind_name(KERF_UNIT_KIND_COUNT), "?");
        assert_string_equal(kerf_unit_kind_name((kerf_unit_kind)-1), "?");
        assert_string_equal(kerf_gpu_mode_name(KERF_GPU_MODE_COUNT), "?");
        assert_string_equal(kerf_unit_state_name(KERF_UNIT_STATE_COUNT), "?");
        assert_string_equal(kerf_workload_name(KERF_WL_COUNT), "?");
        assert_string_equal(kerf_tier_name(KERF_TIER_COUNT), "?");
        assert_int_equal(kerf_unit_kind_parse("gpu"), -EINVAL);
        assert_int_equal(kerf_gpu_mode_parse(""), -EINVAL);
        assert_int_equal(kerf_workload_parse(NULL), -EINVAL);
        assert_int_equal(kerf_tier_parse("low"), -EINVAL);
}

/* The one name rule (issue 8 S7): nothing a terminal, a shell or a path would read as more. */
static void name_rule(void **state)
{
        char longest[KERF_NAME_LEN], too_long[KERF_NAME_LEN + 1];
        (void)state;
        memset(longest, 'a', sizeof(longest) - 1);
        longest[sizeof(longest) - 1] = '\0';
        memset(too_long, 'a', sizeof(too_long) - 1);
        too_long[sizeof(too_long) - 1] = '\0';
        assert_true(kerf_name_ok("alice"));
        assert_true(kerf_name_ok("train-1.v2_X"));
        assert_true(kerf_name_ok(longest));
        assert_false(kerf_name_ok(too_long));
        assert_false(kerf_name_ok(""));
        assert_false(kerf_name_ok(NULL));
        assert_false(kerf_name_ok("-rf"));
        assert_false(kerf_name_ok(".."));
        assert_false(kerf_name_ok("a b"));
        assert_false(kerf_name_ok("a/b"));
        assert_false(kerf_name_ok("x\x1b[2J"));
        assert_false(kerf_name_ok("bell\a"));
        assert_false(kerf_name_ok("a\nb"));
        assert_false(kerf_name_ok("caf\xc3\xa9"));
        assert_false(kerf_name_ok("\xc2\x9b"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(round_trips),
            cmocka_unit_test(spellings),
            cmocka_unit_test(out_of_range),
            cmocka_unit_test(name_rule),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
