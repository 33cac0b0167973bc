/* SPDX-License-Identifier: Apache-2.0 */
/* mem.h - allocation records shared by memory.c, pool.c, vmm.c, array.c and memcpy.c */
#ifndef KERF_SIM_CUDA_MEM_H
#define KERF_SIM_CUDA_MEM_H

#include "internal.h"

enum { KC_A_LINEAR = 1, KC_A_MANAGED, KC_A_HOST, KC_A_POOL, KC_A_VMM };

/* One addressable range: an allocation, a pool block in use, or a VMM mapping. */
typedef struct kc_alloc {
        CUdeviceptr base;
        size_t size;
        uint64_t charged; /* bytes charged to simstate for this record (pool: the block) */
        int dev;
        kc_ctx *ctx;
        int kind;
        bool freeing; /* free queued or in progress */
        struct CUmemPoolHandle_st *pool;
        struct kc_vmm *vmm; /* KC_A_VMM: the physical handle mapped here */
        size_t map_len;     /* pool: block length */
} kc_alloc;

/* Range table (memory.c); caller holds kc_g.mu. */
int kc__alloc_insert(kc_alloc *a);
void kc__alloc_remove(kc_alloc *a);
kc_alloc *kc__alloc_find(CUdeviceptr base);
kc_alloc *kc__alloc_containing(CUdeviceptr p);
void kc__alloc_release(kc_alloc *a);
void *kc__map_lazy(size_t bytes);
void kc__unmap_lazy(void *p, size_t bytes);

/* pool.c: gives a pool allocation's block back to its pool. Caller holds kc_g.mu. */
void kc__pool_return(kc_alloc *a);
/* array.c: frees the arrays of a destroyed context. Caller holds kc_g.mu. */
void kc__arrays_ctx_destroyed(kc_ctx *ctx);

#endif /* KERF_SIM_CUDA_MEM_H */
