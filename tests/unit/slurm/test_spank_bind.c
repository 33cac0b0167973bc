/* SPDX-License-Identifier: Apache-2.0 */
/* test_spank_bind.c - a task's CUDA_VISIBLE_DEVICES after Slurm's per-task binding, mapped to
 * the UUIDs of the step's GPUs (kerf_spank_bind_uuids) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "spank_kerf.h"

static void test_bind(void **st)
{
        json_t *u = json_pack("[s,s,s]", "GPU-a", "GPU-b", "GPU-c");
        char buf[64];
        (void)st;
        /* the step got gres indices 1,3,4; Slurm bound the task to some of them */
        assert_int_equal(kerf_spank_bind_uuids("1,3,4", u, "3", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "GPU-b");
        assert_int_equal(kerf_spank_bind_uuids("1,3,4", u, "4,1", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "GPU-c,GPU-a");
        assert_int_equal(kerf_spank_bind_uuids("1,3,4", u, "1,3", buf, sizeof(buf)), 0);
        assert_string_equal(buf, "GPU-a,GPU-b");
        /* nothing to narrow, or a binding outside the grant: kerf's list stays */
        strcpy(buf, "kept");
        assert_int_equal(kerf_spank_bind_uuids("1,3,4", u, "1,3,4", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(kerf_spank_bind_uuids("1,3,4", u, "", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(kerf_spank_bind_uuids("1,3,4", u, "2", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(kerf_spank_bind_uuids("1,3,4", u, "13", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(kerf_spank_bind_uuids("1,3,4", u, "3,", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(kerf_spank_bind_uuids("1,3", u, "3", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(kerf_spank_bind_uuids("1,3,4", NULL, "3", buf, sizeof(buf)), -ENOENT);
        assert_int_equal(kerf_spank_bind_uuids(NULL, u, "3", buf, sizeof(buf)), -ENOENT);
        assert_string_equal(buf, "kept");
        assert_int_equal(kerf_spank_bind_uuids("1,3,4", u, "3,4", buf, 8), -ENAMETOOLONG);
        json_decref(u);
}

static void test_count(void **st)
{
        (void)st;
        assert_int_equal(kerf_spank_count_list("0"), 1);
        assert_int_equal(kerf_spank_count_list("0,1,2"), 3);
}

int main(void)
{
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_bind),
                                           cmocka_unit_test(test_count)};
        return cmocka_run_group_tests(tests, NULL, NULL);
}
