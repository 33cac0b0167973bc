/* SPDX-License-Identifier: Apache-2.0 */
/* child_check.h - the checks of the shim tests' child programs: exit status 0 = pass; a failed
 * check prints file:line and the expression (or the CUresult) to stderr and exits 1 */
#ifndef KERF_SHIM_CHILD_CHECK_H
#define KERF_SHIM_CHILD_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CK(c)                                                                                      \
        do {                                                                                       \
                if (!(c)) {                                                                        \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);      \
                        exit(1);                                                                   \
                }                                                                                  \
        } while (0)
#define CU(call)                                                                                   \
        do {                                                                                       \
                CUresult r_ = (call);                                                              \
                if (r_ != CUDA_SUCCESS) {                                                          \
                        fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #call, (int)r_);   \
                        exit(1);                                                                   \
                }                                                                                  \
        } while (0)

#define MIB (1ull << 20)
#define GIB (1ull << 30)

#endif /* KERF_SHIM_CHILD_CHECK_H */
