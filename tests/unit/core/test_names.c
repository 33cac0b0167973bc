/* SPDX-License-Identifier: Apache-2.0 */
/* test_names.c - enum names and their parsers round-trip */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

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

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(round_trips),
            cmocka_unit_test(spellings),
            cmocka_unit_test(out_of_range),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
