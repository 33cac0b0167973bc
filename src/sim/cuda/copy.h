/* SPDX-License-Identifier: Apache-2.0 */
/* copy.h - what memcpy.c and memops2.c share: call modes, the pointer cast and stream-ordered
 * submission of copy/set operations */
#ifndef KERF_SIM_CUDA_COPY_H
#define KERF_SIM_CUDA_COPY_H

#include "internal.h"

/* Modes of a copy or set entry point: SYNC waits for completion (the non-Async calls), PT
 * resolves the default stream per thread (the _ptds/_ptsz variants). */
enum { SYNC = 1, PT = 2 };

#define P(x) ((void *)(uintptr_t)(x))

/* A KC_OP_SET8 or KC_OP_SET32 of n values v at d. */
static inline kc_op kc__set_op(int kind, CUdeviceptr d, uint32_t v, size_t n)
{
        kc_op op = {.kind = kind};
        op.u.set.dst = P(d);
        op.u.set.val = v;
        op.u.set.n = n;
        return op;
}

/* Enqueues ops[0..n) in order on one stream and, for synchronous calls, waits for the last.
 * The device extents [d1, d1+n1) and [d2, d2+n2) (0 = none) must lie in live allocations
 * (INVALID_VALUE otherwise, as the driver answers for foreign pointers). */
CUresult kc__submit_ops(const kc_op *ops, size_t n, CUstream h, int mode, CUdeviceptr d1, size_t n1,
                        CUdeviceptr d2, size_t n2);

#endif /* KERF_SIM_CUDA_COPY_H */
