/* SPDX-License-Identifier: Apache-2.0 */
/* abi_check.h - the header-ABI test shared by tests/unit/sim (nvml_abi.h against NVIDIA's
 * nvml.h) and tests/unit/simcuda (cuda_abi.h against NVIDIA's cuda.h).
 *
 * Two translation units evaluate the same X() list: one with NVIDIA's header (which also
 * re-declares every prototype of ours, so the compiler rejects any signature mismatch), one
 * with ours. The test compares the two arrays entry by entry. Include after <cmocka.h>. */
#ifndef KERF_TEST_ABI_CHECK_H
#define KERF_TEST_ABI_CHECK_H

#include <stddef.h>

/* Fails the current test, naming every entry where `real` and `ours` differ. */
static inline void kerf_abi_compare(const unsigned long long *real, const unsigned long long *ours,
                                    const char *const *names, size_t count)
{
        int bad = 0;
        for (size_t i = 0; i < count; i++)
                if (real[i] != ours[i]) {
                        print_error("%s: real %llu, ours %llu\n", names[i], real[i], ours[i]);
                        bad++;
                }
        assert_int_equal(bad, 0);
}

/* Runs the one test `t_abi` of an ABI test program. */
static inline int kerf_abi_main(void (*t_abi)(void **state))
{
        const struct CMUnitTest tests[] = {cmocka_unit_test(t_abi)};
        return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif /* KERF_TEST_ABI_CHECK_H */
