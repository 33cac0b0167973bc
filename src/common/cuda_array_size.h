/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_array_size.h - the byte size of a CUDA array, one definition for the simulated driver
 * (src/sim/cuda/array.c: what an array costs on the simulated device) and the shim
 * (src/shim/mem.c: what an array is charged against a slice's memory cap). Include it after
 * the file that sets KERF_CUDA_EXPORT and includes cuda_abi.h, if any. */
#ifndef KERF_CUDA_ARRAY_SIZE_H
#define KERF_CUDA_ARRAY_SIZE_H

#include <stdint.h>

#include "cuda_abi.h"

/* Bytes per channel element of format `f`; 0 for a format this table does not know. */
static inline uint64_t kerf_cuda_array_elem_size(CUarray_format f)
{
        switch (f) {
        case CU_AD_FORMAT_UNSIGNED_INT8:
        case CU_AD_FORMAT_SIGNED_INT8:
                return 1;
        case CU_AD_FORMAT_UNSIGNED_INT16:
        case CU_AD_FORMAT_SIGNED_INT16:
        case CU_AD_FORMAT_HALF:
                return 2;
        case CU_AD_FORMAT_UNSIGNED_INT32:
        case CU_AD_FORMAT_SIGNED_INT32:
        case CU_AD_FORMAT_FLOAT:
                return 4;
        default:
                return 0;
        }
}

/* Bytes of a `width` x `height` x `depth` array of `channels` elements of `format`:
 * width * max(height,1) * max(depth,1) * element size * max(channels,1).
 * A format kerf_cuda_array_elem_size() does not know counts `unknown_elem_size` bytes per
 * element (0: such a format is invalid; the shim passes 16, the widest, to over- rather than
 * under-charge). Returns 0 when the array is invalid (width 0, unknown format with
 * unknown_elem_size 0) or too large to describe (the product overflows 64 bits). Checking
 * the channel count (CUDA accepts 1, 2 or 4) is the caller's. */
static inline uint64_t kerf_cuda_array_bytes(uint64_t width, uint64_t height, uint64_t depth,
                                             CUarray_format format, unsigned channels,
                                             uint64_t unknown_elem_size)
{
        uint64_t es = kerf_cuda_array_elem_size(format);
        if (!es)
                es = unknown_elem_size;
        if (!width || !es)
                return 0;
        uint64_t n = width,
                 dims[] = {height ? height : 1, depth ? depth : 1, es, channels ? channels : 1};
        for (unsigned i = 0; i < sizeof(dims) / sizeof(dims[0]); i++)
                if (__builtin_mul_overflow(n, dims[i], &n))
                        return 0;
        return n;
}

#endif /* KERF_CUDA_ARRAY_SIZE_H */
