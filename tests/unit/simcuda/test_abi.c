/* SPDX-License-Identifier: Apache-2.0 */
/* test_abi.c - cuda_abi.h against NVIDIA's cuda.h: layouts, values and prototypes */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../sim/abi_check.h"

#ifdef KERF_NO_REAL_CUDA_H
static void t_abi(void **state)
{
        (void)state;
        skip(); /* /usr/local/cuda/include/cuda.h not found: nothing to compare against */
}
#else
/* The list abi_list.h, evaluated with NVIDIA's header (abi_real.c) and with ours
 * (abi_ours.c). */
extern const unsigned long long kerf_abi_real[];
extern const unsigned long long kerf_abi_ours[];
extern const char *const kerf_abi_names[];
extern const size_t kerf_abi_count;

static void t_abi(void **state)
{
        (void)state;
        kerf_abi_compare(kerf_abi_real, kerf_abi_ours, kerf_abi_names, kerf_abi_count);
}
#endif

int main(void)
{
        return kerf_abi_main(t_abi);
}
