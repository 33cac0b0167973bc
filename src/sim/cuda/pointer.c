/* SPDX-License-Identifier: Apache-2.0 */
/* pointer.c - pointer attributes, mapped/registered host memory, managed-memory hints */
#include <stdlib.h>
#include <string.h>

#include "legacy.h"
#include "mem.h"

#define ACCESSED_BY_HOST (1u << 31)
#define ACCESS_FLAG_RW   0x3 /* CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE */

static unsigned long long next_buffer_id = 1;

unsigned long long kc__alloc_id(kc_alloc *a)
{
        if (!a->buffer_id)
                a->buffer_id = next_buffer_id++;
        return a->buffer_id;
}

static bool is_host_kind(const kc_alloc *a)
{
        return a->kind == KC_A_HOST || a->kind == KC_A_HOSTREG;
}

/* Writes one attribute of allocation `a` (NULL: not a CUDA pointer) for pointer p. Booleans
 * are written as one byte (bool), as the driver does. Caller holds kc_g.mu. */
static CUresult attr_one(kc_alloc *a, CUdeviceptr p, CUpointer_attribute attr, void *data,
                         bool lenient)
{
        if (!a) {
                if (!lenient)
                        return CUDA_ERROR_INVALID_VALUE;
                /* cuPointerGetAttributes: "default NULL values" for foreign pointers */
                switch (attr) {
                case CU_POINTER_ATTRIBUTE_CONTEXT:
                        *(CUcontext *)data = NULL;
                        return CUDA_SUCCESS;
                case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
                        *(unsigned *)data = 0;
                        return CUDA_SUCCESS;
                case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
                case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
                case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
                        *(CUdeviceptr *)data = 0;
                        return CUDA_SUCCESS;
                case CU_POINTER_ATTRIBUTE_HOST_POINTER:
                case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
                        *(void **)data = NULL;
                        return CUDA_SUCCESS;
                case CU_POINTER_ATTRIBUTE_BUFFER_ID:
                case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
                case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
                        *(unsigned long long *)data = 0;
                        return CUDA_SUCCESS;
                case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
                case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
                        *(size_t *)data = 0;
                        return CUDA_SUCCESS;
                case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
                        *(int *)data = -2; /* CU_DEVICE_INVALID */
                        return CUDA_SUCCESS;
                case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
                        *(unsigned *)data = 0;
                        return CUDA_SUCCESS;
                case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
                case CU_POINTER_ATTRIBUTE_IS_MANAGED:
                case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
                case CU_POINTER_ATTRIBUTE_MAPPED:
                case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
                case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
                        *(bool *)data = false;
                        return CUDA_SUCCESS;
                default:
                        return CUDA_ERROR_INVALID_VALUE;
                }
        }
        bool host = is_host_kind(a);
        switch (attr) {
        case CU_POINTER_ATTRIBUTE_CONTEXT:
                *(CUcontext *)data = a->ctx;
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
                /* Managed memory reports DEVICE, IS_MANAGED tells it apart [UNVERIFIED]. */
                *(unsigned *)data = host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
                *(CUdeviceptr *)data = p; /* unified addressing: the same address */
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_HOST_POINTER:
                if (!host && a->kind != KC_A_MANAGED)
                        return CUDA_ERROR_INVALID_VALUE; /* device memory: no host mapping */
                *(void **)data = (void *)(uintptr_t)p;
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_P2P_TOKENS:
                return CUDA_ERROR_NOT_SUPPORTED; /* no nv-p2p kernel interface */
        case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
                *(bool *)data = a->sync_memops;
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_BUFFER_ID:
                *(unsigned long long *)data = kc__alloc_id(a);
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_IS_MANAGED:
                *(bool *)data = a->kind == KC_A_MANAGED;
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
                *(int *)data = a->dev;
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
                *(bool *)data = a->kind == KC_A_LINEAR;
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE: {
                /* VMM: the reserved address range, of which the mapping is a part */
                CUdeviceptr base = a->base;
                size_t size = a->size;
                if (a->kind == KC_A_VMM)
                        kc__resv_find(a->base, &base, &size);
                if (attr == CU_POINTER_ATTRIBUTE_RANGE_SIZE)
                        *(size_t *)data = size;
                else
                        *(CUdeviceptr *)data = base;
                return CUDA_SUCCESS;
        }
        case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
                *(CUdeviceptr *)data = a->base;
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
                *(size_t *)data = a->size;
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_MAPPED:
                *(bool *)data = true;
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
                /* only VMM memory can be exported (which the simulator does not do) */
                *(unsigned long long *)data =
                    a->kind == KC_A_VMM && a->vmm ? a->vmm->prop.requestedHandleTypes : 0;
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
        case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
                *(bool *)data = false;
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
                *(unsigned *)data = ACCESS_FLAG_RW;
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
                *(CUmemoryPool *)data = a->kind == KC_A_POOL ? a->pool : NULL;
                return CUDA_SUCCESS;
        case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
                *(unsigned long long *)data = (unsigned long long)a->base;
                return CUDA_SUCCESS;
        default:
                return CUDA_ERROR_INVALID_VALUE;
        }
}

/* The allocation holding p, unless its free is under way. A VMM mapping without access yet
 * (marked `freeing` by vmm.c until cuMemSetAccess) is still mapped memory. */
static kc_alloc *live_containing(CUdeviceptr p)
{
        kc_alloc *a = kc__alloc_containing(p);
        return a && (!a->freeing || a->kind == KC_A_VMM) ? a : NULL;
}

KERF_CUDA_EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
                                                CUdeviceptr ptr)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!data)
                return CUDA_ERROR_INVALID_VALUE;
        if (attribute == CU_POINTER_ATTRIBUTE_DEVICE_POINTER && !kc__ctx_current())
                return CUDA_ERROR_INVALID_CONTEXT;
        kc__lock();
        r = attr_one(live_containing(ptr), ptr, attribute, data, false);
        kc__unlock();
        return r;
}

/* Unlike the single-attribute call, foreign pointers succeed with NULL/0 values. */
KERF_CUDA_EXPORT CUresult cuPointerGetAttributes(unsigned int numAttributes,
                                                 CUpointer_attribute *attributes, void **data,
                                                 CUdeviceptr ptr)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!numAttributes || !attributes || !data)
                return CUDA_ERROR_INVALID_VALUE;
        for (unsigned i = 0; i < numAttributes; i++)
                if (!data[i])
                        return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_alloc *a = live_containing(ptr);
        for (unsigned i = 0; i < numAttributes && !r; i++) {
                r = attr_one(a, ptr, attributes[i], data[i], true);
                /* HOST_POINTER of device memory reads as NULL here instead of failing. */
                if (r == CUDA_ERROR_INVALID_VALUE &&
                    attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER) {
                        *(void **)data[i] = NULL;
                        r = CUDA_SUCCESS;
                }
        }
        kc__unlock();
        return r;
}

/* Only SYNC_MEMOPS is settable. */
KERF_CUDA_EXPORT CUresult cuPointerSetAttribute(const void *value, CUpointer_attribute attribute,
                                                CUdeviceptr ptr)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!value || attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_alloc *a = live_containing(ptr);
        if (a)
                a->sync_memops = *(const bool *)value;
        kc__unlock();
        return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- page-locked host memory ---- */

#define HOSTALLOC_FLAGS                                                                            \
        (CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)
#define HOSTREGISTER_FLAGS                                                                         \
        (CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |                              \
         CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY)

KERF_CUDA_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
        if (Flags & ~(unsigned)HOSTALLOC_FLAGS)
                return CUDA_ERROR_INVALID_VALUE;
        void *p;
        CUresult r = cuMemAllocHost_v2(&p, bytesize);
        if (r)
                return r;
        kc__lock();
        kc_alloc *a = kc__alloc_find((CUdeviceptr)(uintptr_t)p);
        if (a)
                a->host_flags = Flags;
        kc__unlock();
        *pp = p;
        return CUDA_SUCCESS;
}

/* Flags the memory was allocated with; with unified addressing all pinned memory is mapped,
 * so DEVICEMAP is always reported (as the driver does). */
KERF_CUDA_EXPORT CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!pFlags || !p)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_alloc *a = live_containing((CUdeviceptr)(uintptr_t)p);
        bool ok = a && a->kind == KC_A_HOST;
        if (ok)
                *pFlags = a->host_flags | CU_MEMHOSTALLOC_DEVICEMAP;
        kc__unlock();
        return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

KERF_CUDA_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p,
                                                       unsigned int Flags)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!pdptr || !p || Flags)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_alloc *a = live_containing((CUdeviceptr)(uintptr_t)p);
        bool ok = a && is_host_kind(a);
        kc__unlock();
        if (!ok)
                return CUDA_ERROR_INVALID_VALUE;
        *pdptr = (CUdeviceptr)(uintptr_t)p; /* unified addressing: the same address */
        return CUDA_SUCCESS;
}

/* Registers [p, p+bytesize) as page-locked host memory of the current context: a range record
 * that is never charged or unmapped. IOMEMORY (PCIe BAR memory) is not simulated. */
KERF_CUDA_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!p || !bytesize || (Flags & ~(unsigned)HOSTREGISTER_FLAGS) ||
            (uintptr_t)p + bytesize < (uintptr_t)p)
                return CUDA_ERROR_INVALID_VALUE;
        if (Flags & CU_MEMHOSTREGISTER_IOMEMORY)
                return CUDA_ERROR_NOT_SUPPORTED;
        CUdeviceptr b = (CUdeviceptr)(uintptr_t)p;
        kc__lock();
        kc_alloc *o1 = kc__alloc_containing(b), *o2 = kc__alloc_containing(b + bytesize - 1);
        kc_alloc *o = o1 ? o1 : o2;
        if (o) {
                r = is_host_kind(o) ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
                                    : CUDA_ERROR_INVALID_VALUE;
        } else {
                kc_alloc *a = calloc(1, sizeof(*a));
                r = CUDA_ERROR_OUT_OF_MEMORY;
                if (a) {
                        a->base = b;
                        a->size = bytesize;
                        a->dev = ctx->dev;
                        a->ctx = ctx;
                        a->kind = KC_A_HOSTREG;
                        a->host_flags = Flags;
                        if (kc__alloc_insert(a) == 0)
                                r = CUDA_SUCCESS;
                        else
                                free(a);
                }
        }
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
        return cuMemHostRegister_v2(p, bytesize, Flags);
}

KERF_CUDA_EXPORT CUresult cuMemHostUnregister(void *p)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!p)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_alloc *a = kc__alloc_find((CUdeviceptr)(uintptr_t)p);
        kc_ctx *ctx = a && a->kind == KC_A_HOSTREG ? a->ctx : NULL;
        kc__unlock();
        if (!ctx)
                return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
        kc__engine_wait_ctx(ctx); /* queued copies may still read or write it */
        kc__lock();
        a = kc__alloc_find((CUdeviceptr)(uintptr_t)p);
        if (a && a->kind == KC_A_HOSTREG)
                kc__alloc_release(a);
        else
                r = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
        kc__unlock();
        return r;
}

/* ---- managed memory: advice, prefetch, range attributes ---- */

/* The managed allocation holding all of [p, p+n), or NULL. Caller holds kc_g.mu. */
static kc_alloc *managed_range(CUdeviceptr p, size_t n)
{
        kc_alloc *a = live_containing(p);
        if (!a || a->kind != KC_A_MANAGED || !n || n > a->base + a->size - p)
                return NULL;
        return a;
}

/* A location for advice/prefetch: a device, or the host (any NUMA flavour). */
static CUresult location_check(CUmemLocation loc)
{
        switch (loc.type) {
        case CU_MEM_LOCATION_TYPE_DEVICE:
                return kc__check_dev(loc.id);
        case CU_MEM_LOCATION_TYPE_HOST:
        case CU_MEM_LOCATION_TYPE_HOST_NUMA:
        case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT:
                return CUDA_SUCCESS;
        default:
                return CUDA_ERROR_INVALID_VALUE;
        }
}

static CUmemLocation from_device(CUdevice d)
{
        CUmemLocation l;
        memset(&l, 0, sizeof(l));
        l.type = d == CU_DEVICE_CPU ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
        l.id = d == CU_DEVICE_CPU ? 0 : d;
        return l;
}

static uint32_t location_bit(CUmemLocation l)
{
        return l.type == CU_MEM_LOCATION_TYPE_DEVICE ? 1u << l.id : ACCESSED_BY_HOST;
}

/* Advice is kept per allocation (not per page range), which is all the simulator can answer
 * back through cuMemRangeGetAttribute; it changes nothing else. */
KERF_CUDA_EXPORT CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                                         CUmemLocation location)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY)
                return CUDA_ERROR_INVALID_VALUE;
        bool needs_loc = advice == CU_MEM_ADVISE_SET_PREFERRED_LOCATION ||
                         advice == CU_MEM_ADVISE_SET_ACCESSED_BY ||
                         advice == CU_MEM_ADVISE_UNSET_ACCESSED_BY;
        if (needs_loc && (r = location_check(location)))
                return r;
        kc__lock();
        kc_alloc *a = managed_range(devPtr, count);
        if (!a) {
                kc__unlock();
                return CUDA_ERROR_INVALID_VALUE;
        }
        switch (advice) {
        case CU_MEM_ADVISE_SET_READ_MOSTLY:
                a->read_mostly = true;
                break;
        case CU_MEM_ADVISE_UNSET_READ_MOSTLY:
                a->read_mostly = false;
                break;
        case CU_MEM_ADVISE_SET_PREFERRED_LOCATION:
                a->preferred = location;
                break;
        case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION:
                memset(&a->preferred, 0, sizeof(a->preferred));
                break;
        case CU_MEM_ADVISE_SET_ACCESSED_BY:
                a->accessed_by |= location_bit(location);
                break;
        case CU_MEM_ADVISE_UNSET_ACCESSED_BY:
                a->accessed_by &= ~location_bit(location);
                break;
        }
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                                      CUdevice device)
{
        if (device != CU_DEVICE_CPU && advice != CU_MEM_ADVISE_SET_READ_MOSTLY &&
            advice != CU_MEM_ADVISE_UNSET_READ_MOSTLY &&
            advice != CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION) {
                CUresult r = kc__check_dev(device);
                if (r)
                        return r;
        }
        return cuMemAdvise_v2(devPtr, count, advice, from_device(device));
}

/* Nothing migrates (memory is host memory either way); the destination is remembered as the
 * last prefetch location when the call is made, not when the stream reaches it. */
static CUresult prefetch(CUdeviceptr p, size_t n, CUmemLocation loc, unsigned flags, CUstream h,
                         bool pt)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (flags)
                return CUDA_ERROR_INVALID_VALUE;
        if ((r = location_check(loc)))
                return r;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, pt, &s);
        if (!r) {
                kc_alloc *a = managed_range(p, n);
                if (a)
                        a->prefetched = loc;
                else
                        r = CUDA_ERROR_INVALID_VALUE;
        }
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count,
                                                CUmemLocation location, unsigned int flags,
                                                CUstream hStream)
{
        return prefetch(devPtr, count, location, flags, hStream, false);
}

KERF_CUDA_EXPORT CUresult cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count,
                                                     CUmemLocation location, unsigned int flags,
                                                     CUstream hStream)
{
        return prefetch(devPtr, count, location, flags, hStream, true);
}

static CUresult prefetch_v1(CUdeviceptr p, size_t n, CUdevice d, CUstream h, bool pt)
{
        if (d != CU_DEVICE_CPU) {
                CUresult r = kc__check_dev(d);
                if (r)
                        return r;
        }
        return prefetch(p, n, from_device(d), 0, h, pt);
}

KERF_CUDA_EXPORT CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                                             CUstream hStream)
{
        return prefetch_v1(devPtr, count, dstDevice, hStream, false);
}

KERF_CUDA_EXPORT CUresult cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count,
                                                  CUdevice dstDevice, CUstream hStream)
{
        return prefetch_v1(devPtr, count, dstDevice, hStream, true);
}

/* A location as the legacy device-id attributes report it: a device ordinal, CU_DEVICE_CPU for
 * the host, CU_DEVICE_INVALID for none. */
static int location_as_device(CUmemLocation l)
{
        if (l.type == CU_MEM_LOCATION_TYPE_DEVICE)
                return l.id;
        return l.type == CU_MEM_LOCATION_TYPE_INVALID ? CU_DEVICE_INVALID : CU_DEVICE_CPU;
}

static CUresult range_attr(const kc_alloc *a, void *data, size_t size, CUmem_range_attribute at)
{
        int v;
        switch (at) {
        case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY:
                v = a->read_mostly;
                break;
        case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
                v = location_as_device(a->preferred);
                break;
        case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
                v = location_as_device(a->prefetched);
                break;
        case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
                v = a->preferred.type;
                break;
        case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
                v = a->preferred.id;
                break;
        case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
                v = a->prefetched.type;
                break;
        case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID:
                v = a->prefetched.id;
                break;
        case CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY: {
                /* An array of ints: the devices (and CU_DEVICE_CPU), padded with INVALID. */
                if (!size || size % 4)
                        return CUDA_ERROR_INVALID_VALUE;
                size_t n = size / 4, k = 0;
                int *out = data;
                for (int d = 0; d < kc_g.n_devs && k < n; d++)
                        if (a->accessed_by & (1u << d))
                                out[k++] = d;
                if (k < n && (a->accessed_by & ACCESSED_BY_HOST))
                        out[k++] = CU_DEVICE_CPU;
                while (k < n)
                        out[k++] = CU_DEVICE_INVALID;
                return CUDA_SUCCESS;
        }
        default:
                return CUDA_ERROR_INVALID_VALUE;
        }
        if (size != 4)
                return CUDA_ERROR_INVALID_VALUE;
        memcpy(data, &v, 4);
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuMemRangeGetAttribute(void *data, size_t dataSize,
                                                 CUmem_range_attribute attribute,
                                                 CUdeviceptr devPtr, size_t count)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!data)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_alloc *a = managed_range(devPtr, count);
        r = a ? range_attr(a, data, dataSize, attribute) : CUDA_ERROR_INVALID_VALUE;
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuMemRangeGetAttributes(void **data, size_t *dataSizes,
                                                  CUmem_range_attribute *attributes,
                                                  size_t numAttributes, CUdeviceptr devPtr,
                                                  size_t count)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!data || !dataSizes || !attributes || !numAttributes)
                return CUDA_ERROR_INVALID_VALUE;
        for (size_t i = 0; i < numAttributes; i++)
                if (!data[i])
                        return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_alloc *a = managed_range(devPtr, count);
        r = a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
        for (size_t i = 0; i < numAttributes && !r; i++)
                r = range_attr(a, data[i], dataSizes[i], attributes[i]);
        kc__unlock();
        return r;
}
