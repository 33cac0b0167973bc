/* SPDX-License-Identifier: Apache-2.0 */
/* abi_ours.c - the ABI list evaluated with kerf's cuda_abi.h */
#include <stddef.h>
#include <stdint.h>

#include "cuda_abi.h"

#define X(e) (unsigned long long)(e),
const unsigned long long kerf_abi_ours[] = {
#include "abi_list.h"
};
#undef X
