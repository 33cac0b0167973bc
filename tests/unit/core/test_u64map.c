/* SPDX-License-Identifier: Apache-2.0 */
/* test_u64map.c - the hash map and its iterator: every live entry once, deletions mid-walk */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "u64map.h"

#define N 1000

/* Walks m, counting each key in seen[] (keys 1..N) and checking the value is the key. */
static size_t walk(const kerf_u64map *m, unsigned *seen)
{
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        uint64_t k;
        void *v;
        size_t n = 0;
        while (kerf_u64map_next(m, &it, &k, &v)) {
                assert_true(k >= 1 && k <= N);
                assert_ptr_equal(v, (void *)(uintptr_t)k);
                seen[k]++;
                n++;
        }
        return n;
}

static void basic(void **state)
{
        (void)state;
        kerf_u64map m;
        kerf_u64map_init(&m);
        assert_int_equal(kerf_u64map_put(&m, 0, NULL), -EINVAL);
        assert_int_equal(kerf_u64map_put(&m, UINT64_MAX, NULL), -EINVAL);
        for (uint64_t k = 1; k <= N; k++)
                assert_int_equal(kerf_u64map_put(&m, k, (void *)(uintptr_t)k), 0);
        assert_int_equal(m.len, N);
        for (uint64_t k = 1; k <= N; k++)
                assert_ptr_equal(kerf_u64map_get(&m, k), (void *)(uintptr_t)k);
        assert_null(kerf_u64map_get(&m, N + 1));
        assert_ptr_equal(kerf_u64map_del(&m, 7), (void *)7);
        assert_null(kerf_u64map_del(&m, 7));
        assert_null(kerf_u64map_get(&m, 7));
        kerf_u64map_fini(&m);
}

static void iter_empty(void **state)
{
        (void)state;
        kerf_u64map m;
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        uint64_t k = 42;
        void *v = &k;
        kerf_u64map_init(&m); /* no table at all */
        assert_false(kerf_u64map_next(&m, &it, &k, &v));
        assert_int_equal(k, 42); /* outputs untouched at the end */
        assert_ptr_equal(v, &k);
        /* a table whose every entry was removed: only tombstones */
        for (uint64_t i = 1; i <= 40; i++)
                assert_int_equal(kerf_u64map_put(&m, i, (void *)(uintptr_t)i), 0);
        for (uint64_t i = 1; i <= 40; i++)
                kerf_u64map_del(&m, i);
        it = (kerf_u64map_iter)KERF_U64MAP_ITER_INIT;
        assert_false(kerf_u64map_next(&m, &it, NULL, NULL));
        /* a finished walk stays finished */
        assert_false(kerf_u64map_next(&m, &it, NULL, NULL));
        kerf_u64map_fini(&m);
}

static void iter_all_once(void **state)
{
        (void)state;
        static unsigned seen[N + 1];
        kerf_u64map m;
        kerf_u64map_init(&m);
        for (uint64_t k = 1; k <= N; k++)
                kerf_u64map_put(&m, k, (void *)(uintptr_t)k);
        /* tombstones in the table: every third key removed, then half of them put back */
        for (uint64_t k = 3; k <= N; k += 3)
                kerf_u64map_del(&m, k);
        for (uint64_t k = 6; k <= N; k += 6)
                kerf_u64map_put(&m, k, (void *)(uintptr_t)k);
        memset(seen, 0, sizeof(seen));
        assert_int_equal(walk(&m, seen), m.len);
        for (uint64_t k = 1; k <= N; k++)
                assert_int_equal(seen[k], (k % 3 == 0 && k % 6 != 0) ? 0 : 1);
        /* replacing a value while walking is allowed */
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        uint64_t k;
        size_t n = 0;
        while (kerf_u64map_next(&m, &it, &k, NULL)) {
                assert_int_equal(kerf_u64map_put(&m, k, (void *)(uintptr_t)k), 0);
                n++;
        }
        assert_int_equal(n, m.len);
        kerf_u64map_fini(&m);
}

static void iter_delete_current(void **state)
{
        (void)state;
        static unsigned seen[N + 1];
        kerf_u64map m;
        kerf_u64map_init(&m);
        for (uint64_t k = 1; k <= N; k++)
                kerf_u64map_put(&m, k, (void *)(uintptr_t)k);
        /* delete every even key as it is returned: every key is still seen exactly once */
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        uint64_t k;
        void *v;
        memset(seen, 0, sizeof(seen));
        while (kerf_u64map_next(&m, &it, &k, &v)) {
                seen[k]++;
                if (k % 2 == 0)
                        assert_ptr_equal(kerf_u64map_del(&m, k), v);
        }
        for (k = 1; k <= N; k++)
                assert_int_equal(seen[k], 1);
        assert_int_equal(m.len, N / 2);
        memset(seen, 0, sizeof(seen));
        assert_int_equal(walk(&m, seen), N / 2);
        for (k = 1; k <= N; k++)
                assert_int_equal(seen[k], k % 2);
        /* delete everything while walking: the map ends empty */
        it = (kerf_u64map_iter)KERF_U64MAP_ITER_INIT;
        while (kerf_u64map_next(&m, &it, &k, NULL))
                kerf_u64map_del(&m, k);
        assert_int_equal(m.len, 0);
        it = (kerf_u64map_iter)KERF_U64MAP_ITER_INIT;
        assert_false(kerf_u64map_next(&m, &it, NULL, NULL));
        kerf_u64map_fini(&m);
}

static void iter_delete_ahead(void **state)
{
        (void)state;
        static unsigned seen[N + 1];
        kerf_u64map m;
        kerf_u64map_init(&m);
        for (uint64_t k = 1; k <= N; k++)
                kerf_u64map_put(&m, k, (void *)(uintptr_t)k);
        /* the first entry returned deletes every other key: none of those is returned after */
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        uint64_t k, first = 0;
        memset(seen, 0, sizeof(seen));
        while (kerf_u64map_next(&m, &it, &k, NULL)) {
                seen[k]++;
                if (!first) {
                        first = k;
                        for (uint64_t j = 1; j <= N; j++)
                                if (j != first)
                                        kerf_u64map_del(&m, j);
                }
        }
        for (k = 1; k <= N; k++)
                assert_int_equal(seen[k], k == first);
        kerf_u64map_fini(&m);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(basic),
            cmocka_unit_test(iter_empty),
            cmocka_unit_test(iter_all_once),
            cmocka_unit_test(iter_delete_current),
            cmocka_unit_test(iter_delete_ahead),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
