/* SPDX-License-Identifier: Apache-2.0 */
/* mem.h - allocation records shared by memory.c, pool.c, vmm.c, array.c and memcpy.c */
#ifndef KERF_SIM_CUDA_MEM_H
#define KERF_SIM_CUDA_MEM_H

#include "internal.h"

/* KC_A_HOSTREG: user memory registered with cuMemHostRegister (never unmapped or charged). */
enum { KC_A_LINEAR = 1, KC_A_MANAGED, KC_A_HOST, KC_A_POOL, KC_A_VMM, KC_A_HOSTREG };

/* A VMM physical allocation (vmm.c): a sparse memfd, `refs` counts the handle references
 * (`handle_refs`: cuMemCreate and each cuMemRetainAllocationHandle) plus the mappings. */
typedef struct kc_vmm {
        int fd;
        size_t size;
        int dev; /* -1: host location */
        int refs;
        int handle_refs;
        bool released; /* every handle reference released: the handle is invalid */
        CUmemAllocationProp prop;
} kc_vmm;

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
        /* pointer.c: attributes and hints (zero-initialised with the record) */
        unsigned host_flags;          /* KC_A_HOST / KC_A_HOSTREG: CU_MEMHOSTALLOC_* / REGISTER_* */
        unsigned long long buffer_id; /* CU_POINTER_ATTRIBUTE_BUFFER_ID, assigned on first query */
        bool sync_memops;             /* CU_POINTER_ATTRIBUTE_SYNC_MEMOPS */
        bool read_mostly;             /* managed: CU_MEM_ADVISE_SET_READ_MOSTLY */
        CUmemLocation preferred;      /* managed: preferred location (type 0 = none) */
        CUmemLocation prefetched;     /* managed: last prefetch location (type 0 = none) */
        uint32_t accessed_by;         /* managed: bit d = device d, bit 31 = the host */
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
/* pointer.c: the allocation's process-unique id (CU_POINTER_ATTRIBUTE_BUFFER_ID), assigned on
 * first use and never reused. Caller holds kc_g.mu. */
unsigned long long kc__alloc_id(kc_alloc *a);
/* vmm.c: the address reservation holding p (cuMemAddressReserve), if any. Caller holds mu. */
bool kc__resv_find(CUdeviceptr p, CUdeviceptr *ret_base, size_t *ret_size);
/* pool.c: the device of a live pool, -1 once destroyed. Caller holds kc_g.mu. */
int kc__pool_dev(const struct CUmemPoolHandle_st *p);
/* array.c: frees the arrays of a destroyed context. Caller holds kc_g.mu. */
void kc__arrays_ctx_destroyed(kc_ctx *ctx);

#endif /* KERF_SIM_CUDA_MEM_H */
