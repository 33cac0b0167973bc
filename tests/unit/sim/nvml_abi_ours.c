/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_abi_ours.c - the NVML ABI list evaluated with kerf's nvml_abi.h */
#include <stddef.h>

#include "nvml_abi.h"

#define X(e) (unsigned long long)(e),
const unsigned long long kerf_nvml_abi_ours[] = {
#include "nvml_abi_list.h"
};
#undef X
