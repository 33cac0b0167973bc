/* SPDX-License-Identifier: Apache-2.0 */
/* test_task_state.c - the task state and end reason tables: every value named, round trips */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "kerf/task_state.h"

static void states(void **state)
{
        (void)state;
        for (int i = 0; i < KERF_TASK_STATE_COUNT; i++) {
                const char *s = kerf_task_state_name(i);
                assert_non_null(s);
                assert_true(s[0] != 0);
                assert_string_not_equal(s, "?");
                assert_int_equal(kerf_task_state_parse(s), i);
                for (int j = 0; j < i; j++) /* names are distinct */
                        assert_string_not_equal(kerf_task_state_name(j), s);
        }
        /* the words the store and the API carry */
        assert_int_equal(kerf_task_state_parse("pending"), KERF_TASK_PENDING);
        assert_int_equal(kerf_task_state_parse("starting"), KERF_TASK_STARTING);
        assert_int_equal(kerf_task_state_parse("running"), KERF_TASK_RUNNING);
        assert_int_equal(kerf_task_state_parse("succeeded"), KERF_TASK_SUCCEEDED);
        assert_int_equal(kerf_task_state_parse("failed"), KERF_TASK_FAILED);
        assert_int_equal(kerf_task_state_parse("cancelled"), KERF_TASK_CANCELLED);
        assert_true(kerf_task_state_ended(KERF_TASK_SUCCEEDED));
        assert_true(kerf_task_state_ended(KERF_TASK_FAILED));
        assert_true(kerf_task_state_ended(KERF_TASK_CANCELLED));
        assert_false(kerf_task_state_ended(KERF_TASK_PENDING));
        assert_false(kerf_task_state_ended(KERF_TASK_STARTING));
        assert_false(kerf_task_state_ended(KERF_TASK_RUNNING));
}

static void end_reasons(void **state)
{
        (void)state;
        assert_string_equal(kerf_end_reason_name(KERF_END_NONE), "");
        assert_int_equal(kerf_end_reason_parse(""), KERF_END_NONE);
        for (int i = 0; i < KERF_END_REASON_COUNT; i++) {
                const char *s = kerf_end_reason_name(i);
                assert_non_null(s);
                assert_string_not_equal(s, "?");
                assert_true(i == KERF_END_NONE || s[0] != 0);
                assert_int_equal(kerf_end_reason_parse(s), i);
        }
        assert_int_equal(kerf_end_reason_parse("lease_expired"), KERF_END_LEASE_EXPIRED);
        assert_int_equal(kerf_end_reason_parse("timeout"), KERF_END_TIMEOUT);
        /* the state each end records */
        assert_int_equal(kerf_end_reason_state(KERF_END_EXIT), KERF_TASK_SUCCEEDED);
        assert_int_equal(kerf_end_reason_state(KERF_END_CANCEL), KERF_TASK_CANCELLED);
        for (int i = 0; i < KERF_END_REASON_COUNT; i++)
                if (i != KERF_END_EXIT && i != KERF_END_CANCEL)
                        assert_int_equal(kerf_end_reason_state(i), KERF_TASK_FAILED);
}

static void unknown(void **state)
{
        (void)state;
        assert_int_equal(kerf_task_state_parse(NULL), -EINVAL);
        assert_int_equal(kerf_task_state_parse(""), -EINVAL);
        assert_int_equal(kerf_task_state_parse("runing"), -EINVAL);
        assert_int_equal(kerf_task_state_parse("Running"), -EINVAL);   /* exact words */
        assert_int_equal(kerf_task_state_parse("suspended"), -EINVAL); /* an API word only */
        assert_int_equal(kerf_end_reason_parse(NULL), -EINVAL);
        assert_int_equal(kerf_end_reason_parse("timed_out"), -EINVAL);
        assert_string_equal(kerf_task_state_name(KERF_TASK_STATE_COUNT), "?");
        assert_string_equal(kerf_task_state_name((kerf_task_state)-1), "?");
        assert_string_equal(kerf_end_reason_name(KERF_END_REASON_COUNT), "?");
        assert_string_equal(kerf_end_reason_name((kerf_end_reason)-1), "?");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(states),
            cmocka_unit_test(end_reasons),
            cmocka_unit_test(unknown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
