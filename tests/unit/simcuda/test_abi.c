/* SPDX-License-Identifier: Apache-2.0 */
/* test_abi.c - cuda_abi.h against NVIDIA's cuda.h: layouts, values and prototypes */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#ifdef KERF_NO_REAL_CUDA_H
static void t_abi(void **state)
{
        (void)state;
        skip(); /* /usr/local/cuda/include/cuda.h not found: nothing to compare against */
}
#else
/* Two translation units evaluate the same list (abi_list.h): one with NVIDIA's header
 * (abi_real.c, which also re-declares every prototype of cuda_abi_protos.h so the compiler
 * rejects any signature mismatch), one with ours (abi_ours.c). */
extern const unsigned long long kerf_abi_real[];
extern const unsigned long long kerf_abi_ours[];
extern const char *const kerf_abi_names[];
extern const size_t kerf_abi_count;

static void t_abi(void **state)
{
        (void)state;
        int bad = 0;
        for (size_t i = 0; i < kerf_abi_count; i++)
                if (kerf_abi_real[i] != kerf_abi_ours[i]) {
                        print_error("%s: real %llu, ours %llu\n", kerf_abi_names[i],
                                    kerf_abi_real[i], kerf_abi_ours[i]);
                        bad++;
                }
        assert_int_equal(bad, 0);
}
#endif

int main(void)
{
        const struct CMUnitTest tests[] = {cmocka_unit_test(t_abi)};
        return cmocka_run_group_tests(tests, NULL, NULL);
}
