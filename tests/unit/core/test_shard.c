/* SPDX-License-Identifier: Apache-2.0 */
/* test_shard.c - the shard rule: counts per GPU, parsing, and what S shards grant */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdlib.h>
#include <errno.h>
#include <stdint.h>

#include "kerf/shard.h"

#define GIB  (1024ull * 1024 * 1024)
#define H200 (141ull * GIB + 512ull * 1024 * 1024) /* not a whole number of GiB */

static void test_parse(void **st)
{
        (void)st;
        kerf_shard_rule r = {.unit = KERF_SHARD_GIB, .count = 7};
        assert_int_equal(kerf_shard_rule_parse(NULL, NULL, &r), 0);
        assert_int_equal(r.unit, KERF_SHARD_PCT);
        assert_int_equal(kerf_shard_rule_parse("gib", NULL, &r), 0);
        assert_int_equal(r.unit, KERF_SHARD_GIB);
        assert_int_equal(kerf_shard_rule_parse(NULL, "16", &r), 0);
        assert_int_equal(r.unit, KERF_SHARD_COUNT);
        assert_int_equal(r.count, 16);
        /* refused, *ret untouched */
        assert_int_equal(kerf_shard_rule_parse("mib", NULL, &r), -EINVAL);
        assert_int_equal(kerf_shard_rule_parse("pct", "8", &r), -EINVAL);
        assert_int_equal(kerf_shard_rule_parse(NULL, "0", &r), -EINVAL);
        assert_int_equal(kerf_shard_rule_parse(NULL, "-3", &r), -EINVAL);
        assert_int_equal(kerf_shard_rule_parse(NULL, "8x", &r), -EINVAL);
        assert_int_equal(kerf_shard_rule_parse(NULL, "10001", &r), -EINVAL);
        assert_int_equal(kerf_shard_rule_parse(NULL, "", &r), -EINVAL);
        assert_int_equal(r.count, 16);
        assert_string_equal(kerf_shard_unit_name(KERF_SHARD_PCT), "pct");
        assert_string_equal(kerf_shard_unit_name(KERF_SHARD_GIB), "gib");
        assert_string_equal(kerf_shard_unit_name(KERF_SHARD_COUNT), "count");
}

static void test_per_gpu_and_grant(void **st)
{
        (void)st;
        kerf_shard_rule pct, gib, cnt;
        uint64_t mem = 0;
        unsigned c = 0;
        kerf_shard_rule_default(&pct);
        kerf_shard_rule_parse("gib", NULL, &gib);
        kerf_shard_rule_parse(NULL, "8", &cnt);
        assert_int_equal(kerf_shard_per_gpu(&pct, H200), 100);
        assert_int_equal(kerf_shard_per_gpu(&gib, H200), 141);
        assert_int_equal(kerf_shard_per_gpu(&gib, GIB - 1), 0);
        assert_int_equal(kerf_shard_per_gpu(&cnt, H200), 8);
        /* 25 % shards: a quarter of memory and compute */
        assert_int_equal(kerf_shard_grant(&pct, 25, 80 * GIB, &mem, &c), 0);
        assert_true(mem == 20 * GIB);
        assert_int_equal(c, 25);
        /* GiB shards: exactly N GiB, compute the same fraction of the GPU */
        assert_int_equal(kerf_shard_grant(&gib, 40, 80 * GIB, &mem, &c), 0);
        assert_true(mem == 40 * GIB);
        assert_int_equal(c, 50);
        assert_int_equal(kerf_shard_grant(&gib, 1, H200, &mem, &c), 0);
        assert_int_equal(c, 1); /* 100/141 rounds down to 0: at least 1 % */
        /* counted shards: 2 of 8 */
        assert_int_equal(kerf_shard_grant(&cnt, 2, 80 * GIB, &mem, &c), 0);
        assert_true(mem == 20 * GIB);
        assert_int_equal(c, 25);
        /* the whole GPU */
        assert_int_equal(kerf_shard_grant(&pct, 100, H200, &mem, &c), 0);
        assert_true(mem == H200);
        assert_int_equal(c, 100);
        /* refused: none, more than the GPU offers; outputs untouched */
        mem = 7;
        c = 7;
        assert_int_equal(kerf_shard_grant(&pct, 0, H200, &mem, &c), -EINVAL);
        assert_int_equal(kerf_shard_grant(&pct, 101, H200, &mem, &c), -EINVAL);
        assert_int_equal(kerf_shard_grant(&cnt, 9, H200, &mem, &c), -EINVAL);
        assert_int_equal(kerf_shard_grant(&gib, 1, GIB / 2, &mem, &c), -EINVAL);
        assert_true(mem == 7 && c == 7);
}

/* gres.conf's MIG order, which the plugin maps Slurm's device indexes back with */
static void test_mig_order(void **st)
{
        (void)st;
        assert_true(kerf_gres_mig_order(0, 9, 1, 2) < 0); /* GPU first */
        assert_true(kerf_gres_mig_order(2, 1, 1, 7) > 0);
        assert_true(kerf_gres_mig_order(3, 4, 3, 5) < 0); /* then unit id */
        assert_true(kerf_gres_mig_order(3, 6, 3, 5) > 0);
        assert_int_equal(kerf_gres_mig_order(3, 5, 3, 5), 0);
        /* the comparator over kerfd's unit objects sorts the same way */
        json_t *u[4] = {json_pack("{s:i, s:i}", "gpu", 1, "unit", 2),
                        json_pack("{s:i, s:i}", "gpu", 0, "unit", 9),
                        json_pack("{s:i, s:i}", "gpu", 1, "unit", 1),
                        json_pack("{s:i, s:i}", "gpu", 0, "unit", 3)};
        qsort(u, 4, sizeof(u[0]), kerf_gres_mig_cmp);
        static const int want[4][2] = {{0, 3}, {0, 9}, {1, 1}, {1, 2}};
        for (int i = 0; i < 4; i++) {
                assert_int_equal(json_integer_value(json_object_get(u[i], "gpu")), want[i][0]);
                assert_int_equal(json_integer_value(json_object_get(u[i], "unit")), want[i][1]);
                json_decref(u[i]);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_parse),
            cmocka_unit_test(test_per_gpu_and_grant),
            cmocka_unit_test(test_mig_order),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
