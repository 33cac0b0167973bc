/* SPDX-License-Identifier: Apache-2.0 */
/* abi_real.c - the ABI list evaluated with NVIDIA's cuda.h, plus a prototype check */
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

/* Every prototype of ours, re-declared after the real ones: a differing type fails the build. */
#include "cuda_abi_protos.h"

#define X(e) (unsigned long long)(e),
const unsigned long long kerf_abi_real[] = {
#include "abi_list.h"
};
#undef X
#define X(e) #e,
const char *const kerf_abi_names[] = {
#include "abi_list.h"
};
#undef X
const size_t kerf_abi_count = sizeof(kerf_abi_real) / sizeof(kerf_abi_real[0]);
