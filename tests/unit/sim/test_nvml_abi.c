/* SPDX-License-Identifier: Apache-2.0 */
/* test_nvml_abi.c - nvml_abi.h against NVIDIA's nvml.h: layouts, values and prototypes */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "abi_check.h"

#ifdef KERF_NO_REAL_NVML_H
static void t_abi(void **state)
{
        (void)state;
        skip(); /* no nvml.h (/usr/local/cuda/include, or -DKERF_REAL_NVML_H=...) to compare */
}
#else
/* The list nvml_abi_list.h, evaluated with NVIDIA's header (nvml_abi_real.c) and with ours
 * (nvml_abi_ours.c). */
extern const unsigned long long kerf_nvml_abi_real[];
extern const unsigned long long kerf_nvml_abi_ours[];
extern const char *const kerf_nvml_abi_names[];
extern const size_t kerf_nvml_abi_count;

static void t_abi(void **state)
{
        (void)state;
        kerf_abi_compare(kerf_nvml_abi_real, kerf_nvml_abi_ours, kerf_nvml_abi_names,
                         kerf_nvml_abi_count);
}
#endif

int main(void)
{
        return kerf_abi_main(t_abi);
}
