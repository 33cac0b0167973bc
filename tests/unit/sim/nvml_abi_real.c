/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_abi_real.c - the NVML ABI list evaluated with NVIDIA's nvml.h, plus a prototype check */
#include <stddef.h>

/* Unversioned names stay real functions (no "#define nvmlInit nvmlInit_v2"), as we export
 * them. */
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>

/* Every prototype of ours, re-declared after the real ones: a differing type fails the build. */
#define KERF_NVML_ABI_PROTOS_ONLY
#include "nvml_abi.h"

#define X(e) (unsigned long long)(e),
const unsigned long long kerf_nvml_abi_real[] = {
#include "nvml_abi_list.h"
};
#undef X
#define X(e) #e,
const char *const kerf_nvml_abi_names[] = {
#include "nvml_abi_list.h"
};
#undef X
const size_t kerf_nvml_abi_count = sizeof(kerf_nvml_abi_real) / sizeof(kerf_nvml_abi_real[0]);
