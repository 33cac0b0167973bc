/* SPDX-License-Identifier: Apache-2.0 */
/* test_nvml_abi.c - nvml_abi.h against NVIDIA's nvml.h: layouts, values and prototypes */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#ifdef KERF_NO_REAL_NVML_H
static void t_abi(void **state)
{
        (void)state;
        skip(); /* no nvml.h (/usr/local/cuda/include, or -DKERF_REAL_NVML_H=...) to compare */
}
#else
/* Two translation units evaluate the same list (nvml_abi_list.h): one with NVIDIA's header
 * (nvml_abi_real.c, which also re-declares every prototype of nvml_abi.h so the compiler
 * rejects any signature mismatch), one with ours (nvml_abi_ours.c). */
extern const unsigned long long kerf_nvml_abi_real[];
extern const unsigned long long kerf_nvml_abi_ours[];
extern const char *const kerf_nvml_abi_names[];
extern const size_t kerf_nvml_abi_count;

static void t_abi(void **state)
{
        (void)state;
        int bad = 0;
        for (size_t i = 0; i < kerf_nvml_abi_count; i++)
                if (kerf_nvml_abi_real[i] != kerf_nvml_abi_ours[i]) {
                        print_error("%s: real %llu, ours %llu\n", kerf_nvml_abi_names[i],
                                    kerf_nvml_abi_real[i], kerf_nvml_abi_ours[i]);
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
