/* SPDX-License-Identifier: Apache-2.0 */
/* test_memory2.c - conformance of the later driver entry points: stream queries, callbacks and
 * capture info, pointer attributes, host memory, managed hints, 16-bit/2D sets, 3D/peer copies */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "legacy.h"
#include "simcuda_fixture.h"

/* ---- streams: queries, callbacks, capture info ---- */

static CUstream cb_stream;
static void *cb_user;
static int cb_calls;
static CUresult cb_status = (CUresult)-1;

static void cb(CUstream h, CUresult st, void *user)
{
        cb_stream = h;
        cb_status = st;
        cb_user = user;
        cb_calls++;
}

static void sc_streams2(void)
{
        CU(cuInit(0));
        CUcontext c = fx_ctx_on(0);
        CUstream s1, s2;
        CU(cuStreamCreateWithPriority(&s1, CU_STREAM_NON_BLOCKING, -3));
        CU(cuStreamCreateWithPriority(&s2, 0, -10));
        int pr;
        CU(cuStreamGetPriority(s1, &pr));
        CK(pr == -3);
        CU(cuStreamGetPriority(s2, &pr));
        CK(pr == -5);
        CU(cuStreamGetPriority(NULL, &pr));
        CK(pr == 0);
        CU(cuStreamGetPriority_ptsz(NULL, &pr));
        CK(pr == 0);
        CK(cuStreamGetPriority(s1, NULL) == CUDA_ERROR_INVALID_VALUE);
        unsigned long long i1, i2, i1b, il, ipt;
        CU(cuStreamGetId(s1, &i1));
        CU(cuStreamGetId(s2, &i2));
        CU(cuStreamGetId(s1, &i1b));
        CU(cuStreamGetId(CU_STREAM_LEGACY, &il));
        CU(cuStreamGetId_ptsz(NULL, &ipt));
        CK(i1 != i2 && i1 == i1b && il != i1 && ipt != il);
        unsigned fl;
        CU(cuStreamGetFlags_ptsz(s1, &fl));
        CK(fl == CU_STREAM_NON_BLOCKING);
        CUdevice d = -1;
        CU(cuStreamGetDevice(s1, &d));
        CK(d == 0);
        CU(cuStreamGetDevice_ptsz(NULL, &d));
        CUcontext got;
        CUgreenCtx green = (CUgreenCtx)&got;
        CU(cuStreamGetCtx_v2(s1, &got, &green));
        CK(got == c && green == NULL);
        CU(cuStreamGetCtx_ptsz(NULL, &got));
        CK(got == c);
        CK(cuStreamGetPriority((CUstream)&pr, &pr) == CUDA_ERROR_INVALID_HANDLE);
        /* callbacks run in stream order, with the stream handle and status */
        CUmodule m;
        CUfunction k;
        CU(cuModuleLoadData(&m, fx_module));
        CU(cuModuleGetFunction(&k, m, "k20ms"));
        CU(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
        CU(cuStreamAddCallback(s1, cb, &pr, 0));
        CU(cuStreamSynchronize(s1));
        CK(cb_calls == 1 && cb_stream == s1 && cb_status == CUDA_SUCCESS && cb_user == &pr);
        CU(cuStreamAddCallback_ptsz(NULL, cb, NULL, 0));
        CU(cuCtxSynchronize());
        CK(cb_calls == 2 && cb_stream == NULL);
        CK(cuStreamAddCallback(s1, cb, NULL, 1) == CUDA_ERROR_INVALID_VALUE);
        CK(cuStreamAddCallback(s1, NULL, NULL, 0) == CUDA_ERROR_INVALID_VALUE);
        /* capture info */
        CUstreamCaptureStatus st;
        cuuint64_t id = 0, id1 = 0;
        CUgraph g = (CUgraph)&st;
        const CUgraphNode *deps = (const CUgraphNode *)&st;
        size_t nd = 9;
        CU(cuStreamGetCaptureInfo_v3(s1, &st, &id, &g, &deps, NULL, &nd));
        CK(st == CU_STREAM_CAPTURE_STATUS_NONE && g == NULL && deps == NULL && nd == 0);
        CU(cuStreamBeginCapture_v2(s1, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CU(cuStreamGetCaptureInfo_v3(s1, &st, &id, &g, &deps, NULL, &nd));
        CK(st == CU_STREAM_CAPTURE_STATUS_ACTIVE && id != 0 && g != NULL && nd == 0);
        CU(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
        const CUgraphEdgeData *ed = (const CUgraphEdgeData *)&st;
        CU(cuStreamGetCaptureInfo_v3(s1, &st, &id1, &g, &deps, &ed, &nd));
        CK(id1 == id && nd == 1 && deps && deps[0] && ed == NULL);
        CU(cuStreamGetCaptureInfo(s1, &st, &id1));
        CK(st == CU_STREAM_CAPTURE_STATUS_ACTIVE && id1 == id);
        CU(cuStreamGetCaptureInfo_v2(s1, &st, NULL, NULL, NULL, &nd));
        CK(nd == 1);
        CU(cuStreamIsCapturing_ptsz(s1, &st));
        CK(st == CU_STREAM_CAPTURE_STATUS_ACTIVE);
        CK(cuStreamAddCallback(s1, cb, NULL, 0) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
        CU(cuStreamEndCapture(s1, &g));
        CUgraphExec gx;
        CU(cuGraphInstantiateWithFlags(&gx, g, 0));
        CU(cuGraphUpload(gx, s1));
        CU(cuGraphUpload_ptsz(gx, NULL));
        CK(cuGraphUpload(NULL, s1) == CUDA_ERROR_INVALID_VALUE);
        CK(cuGraphUpload((CUgraphExec)&gx, s1) == CUDA_ERROR_INVALID_HANDLE);
        CU(cuGraphLaunch(gx, s1));
        CU(cuStreamSynchronize(s1));
        CU(cuGraphExecDestroy(gx));
        CK(cuGraphUpload(gx, s1) == CUDA_ERROR_INVALID_HANDLE);
        CU(cuGraphDestroy(g));
        CU(cuStreamGetCaptureInfo_v3_ptsz(NULL, &st, NULL, NULL, NULL, NULL, NULL));
        CK(st == CU_STREAM_CAPTURE_STATUS_NONE);
        CK(cuStreamGetCaptureInfo_v3(s1, NULL, NULL, NULL, NULL, NULL, NULL) ==
           CUDA_ERROR_INVALID_VALUE);
        /* the thread's capture mode is exchanged */
        CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
        CU(cuThreadExchangeStreamCaptureMode(&mode));
        CK(mode == CU_STREAM_CAPTURE_MODE_GLOBAL);
        CU(cuThreadExchangeStreamCaptureMode(&mode));
        CK(mode == CU_STREAM_CAPTURE_MODE_RELAXED);
        mode = (CUstreamCaptureMode)3;
        CK(cuThreadExchangeStreamCaptureMode(&mode) == CUDA_ERROR_INVALID_VALUE);
        /* attaching managed memory */
        CUdeviceptr mg, lin;
        CU(cuMemAllocManaged(&mg, 1 << 20, CU_MEM_ATTACH_GLOBAL));
        CU(cuMemAlloc_v2(&lin, 1 << 20));
        CU(cuStreamAttachMemAsync(s1, mg, 0, CU_MEM_ATTACH_SINGLE));
        CU(cuStreamAttachMemAsync_ptsz(NULL, mg, 4096, CU_MEM_ATTACH_HOST));
        CK(cuStreamAttachMemAsync(s1, mg + 16, 0, CU_MEM_ATTACH_SINGLE) ==
           CUDA_ERROR_INVALID_VALUE);
        CK(cuStreamAttachMemAsync(s1, lin, 0, CU_MEM_ATTACH_SINGLE) == CUDA_ERROR_INVALID_VALUE);
        CK(cuStreamAttachMemAsync(s1, mg, 0, 8) == CUDA_ERROR_INVALID_VALUE);
        CU(cuStreamDestroy_v2(s1));
        CU(cuStreamDestroy_v2(s2));
}

/* ---- pointers and host memory ---- */

static bool pa_bool(CUpointer_attribute a, CUdeviceptr p)
{
        bool b = false;
        CU(cuPointerGetAttribute(&b, a, p));
        return b;
}

static void sc_pointer(void)
{
        CU(cuInit(0));
        CUcontext c = fx_ctx_on(0);
        CUdeviceptr d, d2, mg;
        CU(cuMemAlloc_v2(&d, 1000));
        CU(cuMemAlloc_v2(&d2, 1000));
        CU(cuMemAllocManaged(&mg, 4096, CU_MEM_ATTACH_GLOBAL));
        unsigned mt;
        CU(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d + 10));
        CK(mt == CU_MEMORYTYPE_DEVICE);
        CUdeviceptr dp, start;
        CU(cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, d + 10));
        CK(dp == d + 10);
        CU(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, d + 10));
        CK(start == d);
        size_t sz;
        CU(cuPointerGetAttribute(&sz, CU_POINTER_ATTRIBUTE_RANGE_SIZE, d + 999));
        CK(sz == 1000);
        CUcontext pc;
        CU(cuPointerGetAttribute(&pc, CU_POINTER_ATTRIBUTE_CONTEXT, d));
        CK(pc == c);
        int ord = -1;
        CU(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, d));
        CK(ord == 0);
        void *hp;
        CK(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, d) ==
           CUDA_ERROR_INVALID_VALUE);
        CK(!pa_bool(CU_POINTER_ATTRIBUTE_IS_MANAGED, d));
        CK(pa_bool(CU_POINTER_ATTRIBUTE_IS_MANAGED, mg));
        CK(pa_bool(CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, d));
        CK(pa_bool(CU_POINTER_ATTRIBUTE_MAPPED, d));
        CU(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, mg));
        CK(hp == (void *)(uintptr_t)mg);
        unsigned long long b1, b1b, b2;
        CU(cuPointerGetAttribute(&b1, CU_POINTER_ATTRIBUTE_BUFFER_ID, d));
        CU(cuPointerGetAttribute(&b1b, CU_POINTER_ATTRIBUTE_BUFFER_ID, d + 1));
        CU(cuPointerGetAttribute(&b2, CU_POINTER_ATTRIBUTE_BUFFER_ID, d2));
        CK(b1 && b1 == b1b && b2 != b1);
        CK(cuPointerGetAttribute(&b1, CU_POINTER_ATTRIBUTE_P2P_TOKENS, d) ==
           CUDA_ERROR_NOT_SUPPORTED);
        CK(!pa_bool(CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
        bool yes = true;
        CU(cuPointerSetAttribute(&yes, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
        CK(pa_bool(CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d + 5));
        CK(cuPointerSetAttribute(&yes, CU_POINTER_ATTRIBUTE_IS_MANAGED, d) ==
           CUDA_ERROR_INVALID_VALUE);
        /* a stream-ordered allocation names its pool */
        CUdeviceptr pd;
        CUmemoryPool pool, cur;
        CU(cuMemAllocAsync(&pd, 4096, NULL));
        CU(cuCtxSynchronize());
        CU(cuPointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, pd));
        CU(cuDeviceGetMemPool(&cur, 0));
        CK(pool && pool == cur);
        CU(cuPointerGetAttribute(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, d));
        CK(pool == NULL);
        CU(cuMemFreeAsync(pd, NULL));
        /* foreign pointers: an error alone, NULL values in the plural call */
        int local = 0;
        CUdeviceptr lp = (CUdeviceptr)(uintptr_t)&local;
        CK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, lp) ==
           CUDA_ERROR_INVALID_VALUE);
        CUpointer_attribute as[4] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_CONTEXT,
                                     CU_POINTER_ATTRIBUTE_HOST_POINTER,
                                     CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
        mt = 77;
        pc = c;
        hp = &hp;
        ord = 5;
        void *data[4] = {&mt, &pc, &hp, &ord};
        CU(cuPointerGetAttributes(4, as, data, lp));
        CK(mt == 0 && pc == NULL && hp == NULL && ord == -2);
        hp = &hp;
        CU(cuPointerGetAttributes(4, as, data, d));
        CK(mt == CU_MEMORYTYPE_DEVICE && pc == c && hp == NULL && ord == 0);
        data[1] = NULL;
        CK(cuPointerGetAttributes(4, as, data, d) == CUDA_ERROR_INVALID_VALUE);
        CU(cuMemFree_v2(d2));
        CK(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d2) ==
           CUDA_ERROR_INVALID_VALUE);
        /* page-locked host allocations */
        void *h;
        unsigned hf;
        CK(cuMemHostAlloc(&h, 4096, 0x10) == CUDA_ERROR_INVALID_VALUE);
        CU(cuMemHostAlloc(&h, 8192, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_WRITECOMBINED));
        CU(cuMemHostGetFlags(&hf, h));
        CK(hf ==
           (CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_WRITECOMBINED | CU_MEMHOSTALLOC_DEVICEMAP));
        CU(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)h));
        CK(mt == CU_MEMORYTYPE_HOST);
        CU(cuMemHostGetDevicePointer_v2(&dp, (char *)h + 8, 0));
        CK(dp == (CUdeviceptr)(uintptr_t)h + 8);
        CK(cuMemHostGetDevicePointer_v2(&dp, h, 1) == CUDA_ERROR_INVALID_VALUE);
        CK(cuMemHostGetDevicePointer_v2(&dp, (void *)(uintptr_t)d, 0) == CUDA_ERROR_INVALID_VALUE);
        CK(cuMemHostGetFlags(&hf, (void *)(uintptr_t)d) == CUDA_ERROR_INVALID_VALUE);
        CU(cuMemFreeHost(h));
        /* registered host memory: not charged, never unmapped by the driver */
        uint64_t before = fx_used_now();
        size_t len = 1 << 16;
        unsigned char *buf = aligned_alloc(4096, len);
        CK(buf);
        memset(buf, 0x5c, len);
        CK(cuMemHostRegister_v2(buf, len, CU_MEMHOSTREGISTER_IOMEMORY) == CUDA_ERROR_NOT_SUPPORTED);
        CK(cuMemHostRegister_v2(buf, 0, 0) == CUDA_ERROR_INVALID_VALUE);
        CU(cuMemHostRegister_v2(buf, len, CU_MEMHOSTREGISTER_DEVICEMAP));
        CK(fx_used_now() == before);
        CK(cuMemHostRegister_v2(buf + 4096, 4096, 0) == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
        CK(cuMemHostRegister_v2((void *)(uintptr_t)d, 16, 0) == CUDA_ERROR_INVALID_VALUE);
        CU(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 (CUdeviceptr)(uintptr_t)(buf + 100)));
        CK(mt == CU_MEMORYTYPE_HOST);
        CU(cuMemHostGetDevicePointer_v2(&dp, buf, 0));
        CK(dp == (CUdeviceptr)(uintptr_t)buf);
        CK(cuMemFree_v2(dp) == CUDA_ERROR_INVALID_VALUE);
        CK(cuMemFreeHost(buf) == CUDA_ERROR_INVALID_VALUE);
        CK(cuMemFreeAsync(dp, NULL) == CUDA_ERROR_INVALID_VALUE);
        CU(cuMemsetD8_v2(dp, 0x11, 128)); /* usable as device memory (unified addressing) */
        CK(buf[0] == 0x11 && buf[127] == 0x11 && buf[128] == 0x5c);
        CK(cuMemHostUnregister(buf + 1) == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
        CU(cuMemHostUnregister(buf));
        CK(cuMemHostUnregister(buf) == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
        buf[0] = 1; /* still the caller's memory */
        CU(cuMemHostRegister(buf, len, 0));
        CU(cuCtxDestroy_v2(c)); /* forgets the registration without unmapping */
        buf[len - 1] = 2;
        CK(buf[0] == 1);
        free(buf);
}

static int range_int(CUmem_range_attribute a, CUdeviceptr p, size_t n)
{
        int v = 12345;
        CU(cuMemRangeGetAttribute(&v, 4, a, p, n));
        return v;
}

static void sc_managed_hints(void)
{
        CU(cuInit(0));
        fx_ctx_on(0);
        CUdeviceptr mg, lin;
        size_t n = 4 << 20;
        CU(cuMemAllocManaged(&mg, n, CU_MEM_ATTACH_GLOBAL));
        CU(cuMemAlloc_v2(&lin, 4096));
        CK(range_int(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, mg, n) == 0);
        CK(range_int(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, mg, n) == CU_DEVICE_INVALID);
        CK(range_int(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, mg, n) == CU_DEVICE_INVALID);
        CU(cuMemAdvise(mg, n, CU_MEM_ADVISE_SET_READ_MOSTLY, 0));
        CK(range_int(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, mg, n) == 1);
        CU(cuMemAdvise(mg, n, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, 0));
        CK(range_int(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, mg, 4096) == 0);
        CK(range_int(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, mg, n) ==
           CU_MEM_LOCATION_TYPE_DEVICE);
        CUmemLocation host = {.type = CU_MEM_LOCATION_TYPE_HOST, .id = 0};
        CU(cuMemAdvise_v2(mg, n, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host));
        CK(range_int(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, mg, n) == CU_DEVICE_CPU);
        CK(range_int(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE, mg, n) ==
           CU_MEM_LOCATION_TYPE_HOST);
        CU(cuMemAdvise(mg, n, CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, 0));
        CK(range_int(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, mg, n) == CU_DEVICE_INVALID);
        CU(cuMemAdvise(mg, n, CU_MEM_ADVISE_SET_ACCESSED_BY, 0));
        CU(cuMemAdvise(mg, n, CU_MEM_ADVISE_SET_ACCESSED_BY, CU_DEVICE_CPU));
        int acc[4];
        CU(cuMemRangeGetAttribute(acc, sizeof(acc), CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, mg, n));
        CK(acc[0] == 0 && acc[1] == CU_DEVICE_CPU && acc[2] == CU_DEVICE_INVALID &&
           acc[3] == CU_DEVICE_INVALID);
        CU(cuMemAdvise(mg, n, CU_MEM_ADVISE_UNSET_ACCESSED_BY, 0));
        CU(cuMemRangeGetAttribute(acc, sizeof(acc), CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, mg, n));
        CK(acc[0] == CU_DEVICE_CPU && acc[1] == CU_DEVICE_INVALID);
        CK(cuMemRangeGetAttribute(acc, 6, CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, mg, n) ==
           CUDA_ERROR_INVALID_VALUE);
        CK(cuMemRangeGetAttribute(acc, 8, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, mg, n) ==
           CUDA_ERROR_INVALID_VALUE);
        CK(cuMemAdvise(lin, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, 0) == CUDA_ERROR_INVALID_VALUE);
        CK(cuMemAdvise(mg, n + 1, CU_MEM_ADVISE_SET_READ_MOSTLY, 0) == CUDA_ERROR_INVALID_VALUE);
        CK(cuMemAdvise(mg, n, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, 5) ==
           CUDA_ERROR_INVALID_DEVICE);
        CK(cuMemAdvise(mg, n, (CUmem_advise)7, 0) == CUDA_ERROR_INVALID_VALUE);
        CK(cuMemRangeGetAttribute(acc, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, lin, 4) ==
           CUDA_ERROR_INVALID_VALUE);
        /* prefetches remember where they went */
        CU(cuMemPrefetchAsync(mg, n, 0, NULL));
        CK(range_int(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, mg, n) == 0);
        CU(cuMemPrefetchAsync_v2(mg, 4096, host, 0, NULL));
        CK(range_int(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, mg, n) == CU_DEVICE_CPU);
        CK(range_int(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE, mg, n) ==
           CU_MEM_LOCATION_TYPE_HOST);
        CUmemLocation dev0 = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
        CU(cuMemPrefetchAsync_v2_ptsz(mg, n, dev0, 0, NULL));
        CK(range_int(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID, mg, n) == 0);
        CK(cuMemPrefetchAsync_v2(mg, n, dev0, 1, NULL) == CUDA_ERROR_INVALID_VALUE);
        CK(cuMemPrefetchAsync(lin, 4096, 0, NULL) == CUDA_ERROR_INVALID_VALUE);
        CK(cuMemPrefetchAsync(mg, n, 3, NULL) == CUDA_ERROR_INVALID_DEVICE);
        CK(cuMemPrefetchAsync(mg, n, 0, (CUstream)&n) == CUDA_ERROR_INVALID_HANDLE);
        int rm, pl;
        void *data[2] = {&rm, &pl};
        size_t sizes[2] = {4, 4};
        CUmem_range_attribute as[2] = {CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY,
                                       CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION};
        CU(cuMemRangeGetAttributes(data, sizes, as, 2, mg, n));
        CK(rm == 1 && pl == 0);
}

/* ---- VMM handles ---- */

static void sc_vmm_handles(void)
{
        CU(cuInit(0));
        fx_ctx_on(0);
        uint64_t before = fx_used_now();
        CUmemAllocationProp prop = {0};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = 0;
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        size_t sz = 4 << 20;
        CUmemGenericAllocationHandle h, h2;
        CUdeviceptr va;
        CU(cuMemCreate(&h, sz, &prop, 0));
        CUdeviceptr resv;
        CU(cuMemAddressReserve(&resv, 2 * sz, 0, 0, 0));
        va = resv + sz;
        CU(cuMemMap(va, sz, 0, h, 0));
        /* pointer attributes of a mapping, before access is granted too */
        unsigned mt = 0;
        CUdeviceptr base;
        size_t rsz, msz;
        unsigned long long ht;
        CU(cuPointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va + 10));
        CK(mt == CU_MEMORYTYPE_DEVICE);
        CU(cuPointerGetAttribute(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, va + 10));
        CU(cuPointerGetAttribute(&rsz, CU_POINTER_ATTRIBUTE_RANGE_SIZE, va + 10));
        CK(base == resv && rsz == 2 * sz); /* the reservation */
        CU(cuPointerGetAttribute(&base, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, va + 10));
        CU(cuPointerGetAttribute(&msz, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, va + 10));
        CK(base == va && msz == sz); /* the mapping */
        CU(cuPointerGetAttribute(&ht, CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, va));
        CK(ht == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        CUmemAccessDesc acc = {.location = prop.location,
                               .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
        CU(cuMemSetAccess(va, sz, &acc, 1));
        CU(cuMemRetainAllocationHandle(&h2, (void *)(uintptr_t)(va + 12345)));
        CK(h2 == h);
        CUmemAllocationProp got;
        memset(&got, 0xff, sizeof(got));
        CU(cuMemGetAllocationPropertiesFromHandle(&got, h2));
        CK(got.type == CU_MEM_ALLOCATION_TYPE_PINNED && got.location.id == 0 &&
           got.location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
           got.requestedHandleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        /* each reference is released once; the handle lives until the last */
        CU(cuMemRelease(h));
        CU(cuMemGetAllocationPropertiesFromHandle(&got, h2));
        CU(cuMemRelease(h2));
        CK(cuMemGetAllocationPropertiesFromHandle(&got, h2) == CUDA_ERROR_INVALID_VALUE);
        CK(cuMemRelease(h2) == CUDA_ERROR_INVALID_VALUE);
        CK(fx_used_now() == before + sz); /* still mapped: still charged */
        CU(cuMemsetD32_v2(va, 5, sz / 4));
        /* a released handle comes back while a mapping holds the memory (as NCCL frees) */
        CU(cuMemRetainAllocationHandle(&h2, (void *)(uintptr_t)va));
        CU(cuMemRelease(h2));
        CU(cuMemUnmap(va, sz));
        CK(fx_used_now() == before);
        CU(cuMemAddressFree(resv, 2 * sz));
        int local;
        CK(cuMemRetainAllocationHandle(&h2, &local) == CUDA_ERROR_INVALID_VALUE);
        CUdeviceptr lin;
        CU(cuMemAlloc_v2(&lin, 4096));
        CK(cuMemRetainAllocationHandle(&h2, (void *)(uintptr_t)lin) == CUDA_ERROR_INVALID_VALUE);
        CK(cuMemGetAllocationPropertiesFromHandle(NULL, h) == CUDA_ERROR_INVALID_VALUE);
}

/* ---- 16-bit and 2D sets, 3D and peer copies ---- */

static void sc_memops(void)
{
        CU(cuInit(0));
        CUcontext c0 = fx_ctx_on(0);
        CUdeviceptr d;
        size_t n = 1 << 20;
        CU(cuMemAlloc_v2(&d, n));
        unsigned char h[256];
        uint16_t h16[16];
        /* D16 at an address that is 2- but not 4-byte aligned, odd count */
        CU(cuMemsetD8_v2(d, 0x11, 64));
        CU(cuMemsetD16_v2(d + 2, 0xabcd, 7));
        CU(cuMemcpyDtoH_v2(h16, d, 20));
        CK(h16[0] == 0x1111 && h16[8] == 0x1111 && h16[9] == 0x1111);
        for (int i = 1; i <= 7; i++)
                CK(h16[i] == 0xabcd);
        CK(cuMemsetD16_v2(d + 1, 1, 4) == CUDA_ERROR_INVALID_VALUE);
        CK(cuMemsetD16_v2(d + n - 2, 1, 2) == CUDA_ERROR_INVALID_VALUE); /* past the end */
        CU(cuMemsetD16_v2(d, 0, 0));
        CUstream s;
        CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        CU(cuMemsetD16Async(d, 0x4242, 8, s));
        CU(cuMemsetD16Async_ptsz(d + 16, 0x0102, 4, NULL));
        CU(cuStreamSynchronize(s));
        CU(cuStreamSynchronize_ptsz(NULL));
        CU(cuMemcpyDtoH_v2_ptds(h16, d, 32));
        CK(h16[0] == 0x4242 && h16[7] == 0x4242 && h16[8] == 0x0102 && h16[11] == 0x0102 &&
           h16[12] == 0x1111);
        CU(cuMemsetD16_v2_ptds(d, 0xffee, 1));
        CU(cuMemcpyDtoH_v2(h16, d, 4));
        CK(h16[0] == 0xffee && h16[1] == 0x4242);
        /* 2D sets touch Width elements of each row and nothing between rows */
        CU(cuMemsetD8_v2(d, 0, 256));
        CU(cuMemsetD2D8_v2(d, 32, 0x5a, 10, 5));
        CU(cuMemcpyDtoH_v2(h, d, 256));
        for (int y = 0; y < 8; y++)
                for (int x = 0; x < 32; x++)
                        CK(h[y * 32 + x] == (y < 5 && x < 10 ? 0x5a : 0));
        CU(cuMemsetD8_v2(d, 0, 256));
        CU(cuMemsetD2D16_v2(d + 2, 16, 0x1234, 3, 4));
        CU(cuMemcpyDtoH_v2(h, d, 256));
        for (int y = 0; y < 5; y++)
                for (int x = 0; x < 16; x += 2) {
                        uint16_t v;
                        memcpy(&v, h + y * 16 + x, 2);
                        CK(v == (y < 4 && x >= 2 && x < 8 ? 0x1234 : 0));
                }
        CU(cuMemsetD8_v2(d, 0, 256));
        CU(cuMemsetD2D32Async(d, 16, 0xdeadbeef, 3, 3, s));
        CU(cuStreamSynchronize(s));
        CU(cuMemcpyDtoH_v2(h, d, 64));
        for (int y = 0; y < 4; y++)
                for (int x = 0; x < 4; x++) {
                        uint32_t v;
                        memcpy(&v, h + y * 16 + x * 4, 4);
                        CK(v == (y < 3 && x < 3 ? 0xdeadbeef : 0));
                }
        CK(cuMemsetD2D32_v2(d, 8, 1, 3, 2) == CUDA_ERROR_INVALID_VALUE);      /* pitch < width */
        CK(cuMemsetD2D32_v2(d + 2, 16, 1, 3, 2) == CUDA_ERROR_INVALID_VALUE); /* misaligned */
        CK(cuMemsetD2D8_v2(d, n, 1, 1, 2) == CUDA_ERROR_INVALID_VALUE);       /* past the end */
        CU(cuMemsetD2D8_v2_ptds(d, 0, 3, 4, 1)); /* one row: pitch unused */
        CU(cuMemsetD2D16_v2_ptds(d, 8, 3, 4, 2));
        CU(cuMemsetD2D32_v2_ptds(d, 16, 3, 4, 2));
        CU(cuMemsetD2D8Async_ptsz(d, 8, 3, 4, 2, NULL));
        CU(cuMemsetD2D16Async_ptsz(d, 8, 3, 4, 2, NULL));
        CU(cuMemsetD2D32Async_ptsz(d, 16, 3, 4, 2, NULL));
        CU(cuMemsetD2D8Async(d, 8, 3, 4, 2, s));
        CU(cuMemsetD2D16Async(d, 8, 3, 4, 2, s));
        CU(cuCtxSynchronize());
        /* captured 2D sets replay from the graph */
        CU(cuMemsetD8_v2(d, 0, 256));
        CU(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CU(cuMemsetD2D16Async(d, 16, 0x7777, 2, 3, s));
        CUgraph g;
        CU(cuStreamEndCapture(s, &g));
        CU(cuMemcpyDtoH_v2(h, d, 64));
        CK(h[0] == 0); /* captured, not run */
        CUgraphExec gx;
        CU(cuGraphInstantiateWithFlags(&gx, g, 0));
        CU(cuGraphLaunch(gx, s));
        CU(cuStreamSynchronize(s));
        CU(cuMemcpyDtoH_v2(h, d, 64));
        CK(h[0] == 0x77 && h[3] == 0x77 && h[4] == 0 && h[32] == 0x77 && h[35] == 0x77 &&
           h[48] == 0);
        CU(cuGraphExecDestroy(gx));
        CU(cuGraphDestroy(g));
        /* 3D: a 4x3x2 host box into a pitched device volume and back */
        unsigned char box[2][3][4], back[2][3][4];
        for (int z = 0; z < 2; z++)
                for (int y = 0; y < 3; y++)
                        for (int x = 0; x < 4; x++)
                                box[z][y][x] = (unsigned char)(z * 100 + y * 10 + x);
        CU(cuMemsetD8_v2(d, 0xff, 512));
        CUDA_MEMCPY3D c3 = {0};
        c3.srcMemoryType = CU_MEMORYTYPE_HOST;
        c3.srcHost = box;
        c3.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        c3.dstDevice = d;
        c3.dstPitch = 8;
        c3.dstHeight = 4;
        c3.dstXInBytes = 2;
        c3.WidthInBytes = 4;
        c3.Height = 3;
        c3.Depth = 2;
        CU(cuMemcpy3D_v2(&c3));
        CU(cuMemcpyDtoH_v2(h, d, 64));
        CK(h[0] == 0xff && h[1] == 0xff && h[2] == 0 && h[5] == 3 && h[6] == 0xff);
        CK(h[8 + 2] == 10 && h[16 + 5] == 23 && h[24 + 2] == 0xff); /* row 3 of slice 0: gap */
        CK(h[32 + 2] == 100 && h[32 + 16 + 5] == 123);
        CUDA_MEMCPY3D r3 = {0};
        r3.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        r3.srcDevice = d;
        r3.srcPitch = 8;
        r3.srcHeight = 4;
        r3.srcXInBytes = 2;
        r3.dstMemoryType = CU_MEMORYTYPE_HOST;
        r3.dstHost = back;
        r3.WidthInBytes = 4;
        r3.Height = 3;
        r3.Depth = 2;
        memset(back, 0, sizeof(back));
        CU(cuMemcpy3DAsync_v2(&r3, s));
        CU(cuStreamSynchronize(s));
        CK(!memcmp(box, back, sizeof(box)));
        memset(back, 0, sizeof(back));
        CU(cuMemcpy3D_v2_ptds(&r3));
        CK(!memcmp(box, back, sizeof(box)));
        memset(back, 0, sizeof(back));
        CU(cuMemcpy3DAsync_v2_ptsz(&r3, NULL));
        CU(cuCtxSynchronize());
        CK(!memcmp(box, back, sizeof(box)));
        CUDA_MEMCPY3D bad = c3;
        bad.dstHeight = 2; /* shorter than Height with Depth > 1 */
        CK(cuMemcpy3D_v2(&bad) == CUDA_ERROR_INVALID_VALUE);
        bad = c3;
        bad.dstLOD = 1;
        CK(cuMemcpy3D_v2(&bad) == CUDA_ERROR_INVALID_VALUE);
        bad = c3;
        bad.dstMemoryType = CU_MEMORYTYPE_ARRAY;
        CK(cuMemcpy3D_v2(&bad) == CUDA_ERROR_NOT_SUPPORTED);
        bad = c3;
        bad.dstPitch = n;
        CK(cuMemcpy3D_v2(&bad) == CUDA_ERROR_INVALID_VALUE); /* second slice past the end */
        /* peer copies between contexts on two GPUs (one address space) */
        CUcontext c1 = fx_ctx_on(1);
        CUdeviceptr e;
        CU(cuMemAlloc_v2(&e, 4096));
        CU(cuMemsetD8_v2(e, 0x3c, 4096));
        CU(cuCtxSetCurrent(c0));
        CU(cuMemcpyPeer(d, c0, e, c1, 100));
        CU(cuMemcpyDtoH_v2(h, d, 101));
        CK(h[0] == 0x3c && h[99] == 0x3c && h[100] != 0x3c);
        CU(cuMemcpyPeerAsync(e, c1, d + 200, c0, 1, s));
        CU(cuMemcpyPeer_ptds(e, c1, d, c0, 1));
        CU(cuMemcpyPeerAsync_ptsz(e, c1, d, c0, 1, NULL));
        CU(cuCtxSynchronize());
        CK(cuMemcpyPeer(d, c0, e, (CUcontext)&e, 1) == CUDA_ERROR_INVALID_CONTEXT);
        CK(cuMemcpyPeer(d, c0, e, c1, 8192) == CUDA_ERROR_INVALID_VALUE);
        CUDA_MEMCPY3D_PEER p3 = {0};
        p3.srcMemoryType = CU_MEMORYTYPE_HOST;
        p3.srcHost = box;
        p3.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        p3.dstDevice = e;
        p3.dstContext = c1;
        p3.WidthInBytes = 24;
        p3.Height = 1;
        p3.Depth = 1;
        CU(cuMemcpy3DPeer(&p3));
        CU(cuMemcpyDtoH_v2(h, e, 24));
        CK(!memcmp(h, box, 24));
        CU(cuMemcpy3DPeerAsync(&p3, s));
        CU(cuMemcpy3DPeer_ptds(&p3));
        CU(cuMemcpy3DPeerAsync_ptsz(&p3, NULL));
        CU(cuCtxSynchronize());
        p3.dstContext = NULL;
        CK(cuMemcpy3DPeer(&p3) == CUDA_ERROR_INVALID_CONTEXT);
        /* unaligned 2D copies are 2D copies */
        CUDA_MEMCPY2D c2 = {0};
        c2.srcMemoryType = CU_MEMORYTYPE_HOST;
        c2.srcHost = "abcdefgh";
        c2.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        c2.dstDevice = d + 1;
        c2.WidthInBytes = 8;
        c2.Height = 1;
        CU(cuMemcpy2DUnaligned_v2(&c2));
        CU(cuMemcpy2DUnaligned_v2_ptds(&c2));
        CU(cuMemcpyDtoH_v2(h, d + 1, 8));
        CK(!memcmp(h, "abcdefgh", 8));
}

FX_SCEN(sc_streams2, "H200", 1, false, "virtual")
FX_SCEN(sc_pointer, "H200", 1, false, "virtual")
FX_SCEN(sc_managed_hints, "H200", 1, false, "virtual")
FX_SCEN(sc_memops, "H200", 2, false, "virtual")
FX_SCEN(sc_vmm_handles, "H200", 1, false, "virtual")

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(t_sc_streams2),      cmocka_unit_test(t_sc_pointer),
            cmocka_unit_test(t_sc_managed_hints), cmocka_unit_test(t_sc_memops),
            cmocka_unit_test(t_sc_vmm_handles),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
