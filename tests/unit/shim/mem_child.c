/* SPDX-License-Identifier: Apache-2.0 */
/* mem_child.c - driver-API scenarios the shim tests run under LD_PRELOAD (one per argv[1]) */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cuda_abi.h"
#include "kerf/slice_abi.h"
#include "child_check.h"
#include "nvml_abi.h"

/* Entry points the driver exports that cuda.h no longer declares. */
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *, size_t, CUstream);
CUresult cuCtxCreate_v2(CUcontext *, unsigned int, CUdevice);
CUresult cuGetProcAddress(const char *, void **, int, cuuint64_t);

/*
 * Exit status 0 = pass; a failed check prints file:line and the expression to stderr and
 * exits 1. The region (KERF_SLICE_REGION) is mapped read-only to read the shim's counters.
 */

static struct kerf_slice_region *reg;
static uint64_t cap;

static uint64_t charged(void)
{
        return atomic_load(&reg->memory_charged);
}

static uint64_t denied(void)
{
        return atomic_load(&reg->memory_denied);
}

/* This process's slot's memory_used (exact even while other processes come and go). */
static uint64_t my_used(void)
{
        for (unsigned i = 0; i < KERF_SLICE_MAX_PROCS; i++)
                if (atomic_load(&reg->procs[i].pid) == getpid())
                        return atomic_load(&reg->procs[i].memory_used);
        return UINT64_MAX;
}

/* The API as the scenario calls it: straight symbols, or what cuGetProcAddress_v2 gave. */
static struct api {
        __typeof__(cuInit) *Init;
        __typeof__(cuDeviceGet) *DeviceGet;
        __typeof__(cuDevicePrimaryCtxRetain) *PrimaryCtxRetain;
        __typeof__(cuDevicePrimaryCtxRelease_v2) *PrimaryCtxRelease;
        __typeof__(cuCtxSetCurrent) *CtxSetCurrent;
        __typeof__(cuMemAlloc_v2) *MemAlloc;
        __typeof__(cuMemFree_v2) *MemFree;
        __typeof__(cuMemAllocPitch_v2) *MemAllocPitch;
        __typeof__(cuMemAllocManaged) *MemAllocManaged;
        __typeof__(cuMemAllocAsync) *MemAllocAsync;
        __typeof__(cuMemFreeAsync) *MemFreeAsync;
        __typeof__(cuMemAllocFromPoolAsync) *MemAllocFromPoolAsync;
        __typeof__(cuMemPoolCreate) *MemPoolCreate;
        __typeof__(cuMemPoolDestroy) *MemPoolDestroy;
        __typeof__(cuMemPoolTrimTo) *MemPoolTrimTo;
        __typeof__(cuDeviceGetDefaultMemPool) *DeviceGetDefaultMemPool;
        __typeof__(cuStreamCreate) *StreamCreate;
        __typeof__(cuStreamSynchronize) *StreamSynchronize;
        __typeof__(cuArrayCreate_v2) *ArrayCreate;
        __typeof__(cuArray3DCreate_v2) *Array3DCreate;
        __typeof__(cuArrayDestroy) *ArrayDestroy;
        __typeof__(cuMipmappedArrayCreate) *MipmappedArrayCreate;
        __typeof__(cuMipmappedArrayDestroy) *MipmappedArrayDestroy;
        __typeof__(cuMemCreate) *MemCreate;
        __typeof__(cuMemRelease) *MemRelease;
        __typeof__(cuMemAddressReserve) *MemAddressReserve;
        __typeof__(cuMemAddressFree) *MemAddressFree;
        __typeof__(cuMemMap) *MemMap;
        __typeof__(cuMemUnmap) *MemUnmap;
        __typeof__(cuMemGetInfo_v2) *MemGetInfo;
        __typeof__(cuDeviceTotalMem_v2) *DeviceTotalMem;
} api = {
    cuInit,
    cuDeviceGet,
    cuDevicePrimaryCtxRetain,
    cuDevicePrimaryCtxRelease_v2,
    cuCtxSetCurrent,
    cuMemAlloc_v2,
    cuMemFree_v2,
    cuMemAllocPitch_v2,
    cuMemAllocManaged,
    cuMemAllocAsync,
    cuMemFreeAsync,
    cuMemAllocFromPoolAsync,
    cuMemPoolCreate,
    cuMemPoolDestroy,
    cuMemPoolTrimTo,
    cuDeviceGetDefaultMemPool,
    cuStreamCreate,
    cuStreamSynchronize,
    cuArrayCreate_v2,
    cuArray3DCreate_v2,
    cuArrayDestroy,
    cuMipmappedArrayCreate,
    cuMipmappedArrayDestroy,
    cuMemCreate,
    cuMemRelease,
    cuMemAddressReserve,
    cuMemAddressFree,
    cuMemMap,
    cuMemUnmap,
    cuMemGetInfo_v2,
    cuDeviceTotalMem_v2,
};

static CUdevice dev;
static CUcontext ctx;
static CUstream stream;
static uint64_t base; /* charged with the primary context alone */

static void setup(void)
{
        CU(api.Init(0));
        CU(api.DeviceGet(&dev, 0));
        CU(api.PrimaryCtxRetain(&ctx, dev));
        CU(api.CtxSetCurrent(ctx));
        CK(my_used() == 300 * MIB); /* the context's overhead is charged */
        CU(api.StreamCreate(&stream, 0));
        base = charged();
}

/* ---- fill-until-refused on each path ---- */

#define MAXN 64

typedef struct path {
        const char *name;
        CUresult (*alloc)(int i);
        void (*free_one)(int i);
        void (*settle)(void); /* after the frees: give pool memory back */
} path;

static CUdeviceptr ptrs[MAXN];
static CUarray arrs[MAXN];
static CUmipmappedArray mips[MAXN];
static CUmemGenericAllocationHandle vmh[MAXN];
static CUmemoryPool pool, defpool;

static CUresult a_linear(int i)
{
        return api.MemAlloc(&ptrs[i], GIB);
}
static void f_linear(int i)
{
        CU(api.MemFree(ptrs[i]));
}
static CUresult a_pitch(int i)
{
        size_t pitch = 0;
        CUresult r = api.MemAllocPitch(&ptrs[i], &pitch, 32768 - 100, 32768, 4);
        CK(r || pitch == 32768);
        return r;
}
static CUresult a_managed(int i)
{
        return api.MemAllocManaged(&ptrs[i], GIB, CU_MEM_ATTACH_GLOBAL);
}
static CUresult a_async(int i)
{
        return api.MemAllocAsync(&ptrs[i], GIB, stream);
}
static void f_async(int i)
{
        uint64_t c = charged();
        CU(api.MemFreeAsync(ptrs[i], stream));
        CK(charged() == c); /* the block stays in the pool: not released */
}
static void s_sync(void)
{
        CU(api.StreamSynchronize(stream));
}
static CUresult a_pool(int i)
{
        return api.MemAllocFromPoolAsync(&ptrs[i], GIB, pool, stream);
}
static void s_trim(void)
{
        CU(api.StreamSynchronize(stream));
        CU(api.MemPoolTrimTo(pool, 0));
}
static CUresult a_defpool(int i)
{
        return api.MemAllocFromPoolAsync(&ptrs[i], GIB, defpool, stream);
}
static void s_trim_def(void)
{
        CU(api.StreamSynchronize(stream));
        CU(api.MemPoolTrimTo(defpool, 0));
}
static CUresult a_array(int i)
{
        CUDA_ARRAY_DESCRIPTOR d = {8192, 8192, CU_AD_FORMAT_FLOAT, 4}; /* 1 GiB */
        return api.ArrayCreate(&arrs[i], &d);
}
static void f_array(int i)
{
        CU(api.ArrayDestroy(arrs[i]));
}
static CUresult a_array3d(int i)
{
        CUDA_ARRAY3D_DESCRIPTOR d = {1024, 1024, 256, CU_AD_FORMAT_FLOAT, 1, 0}; /* 1 GiB */
        return api.Array3DCreate(&arrs[i], &d);
}
static CUresult a_mipmap(int i)
{
        CUDA_ARRAY3D_DESCRIPTOR d = {8192, 8192, 0, CU_AD_FORMAT_FLOAT, 4, 0}; /* 1.33 GiB */
        return api.MipmappedArrayCreate(&mips[i], &d, 14);
}
static void f_mipmap(int i)
{
        CU(api.MipmappedArrayDestroy(mips[i]));
}
static CUresult a_vmm(int i)
{
        CUmemAllocationProp p;
        memset(&p, 0, sizeof(p));
        p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        p.location.id = dev;
        return api.MemCreate(&vmh[i], GIB, &p, 0);
}
static void f_vmm(int i)
{
        CU(api.MemRelease(vmh[i]));
}

static const path paths[] = {
    {"linear", a_linear, f_linear, NULL},   {"pitch", a_pitch, f_linear, NULL},
    {"managed", a_managed, f_linear, NULL}, {"async", a_async, f_async, s_sync},
    {"pool", a_pool, f_async, s_trim},      {"defpool", a_defpool, f_async, s_trim_def},
    {"array", a_array, f_array, NULL},      {"array3d", a_array3d, f_array, NULL},
    {"mipmap", a_mipmap, f_mipmap, NULL},   {"vmm", a_vmm, f_vmm, NULL},
};

/* Allocates through p until the cap refuses: the refusal must be exactly
 * CUDA_ERROR_OUT_OF_MEMORY, counted, with the charge at most the cap; freeing everything
 * must bring the counters back to exactly where they were. */
static void fill(const path *p)
{
        uint64_t d0 = denied(), c0 = charged();
        int n = 0;
        CUresult r = CUDA_SUCCESS;
        while (n < MAXN && (r = p->alloc(n)) == CUDA_SUCCESS) {
                CK(charged() <= cap);
                n++;
        }
        if (r != CUDA_ERROR_OUT_OF_MEMORY)
                fprintf(stderr, "path %s: refused with %d after %d\n", p->name, (int)r, n);
        CK(r == CUDA_ERROR_OUT_OF_MEMORY);
        CK(n >= 1 && n < MAXN);
        CK(charged() <= cap);
        CK(denied() > d0);
        for (int i = 0; i < n; i++)
                p->free_one(i);
        if (p->settle)
                p->settle();
        if (charged() != c0)
                fprintf(stderr, "path %s: charged %llu, was %llu\n", p->name,
                        (unsigned long long)charged(), (unsigned long long)c0);
        CK(charged() == c0);
}

static void make_pools(void)
{
        CUmemPoolProps pp;
        memset(&pp, 0, sizeof(pp));
        pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        pp.location.id = dev;
        CU(api.MemPoolCreate(&pool, &pp));
        CU(api.DeviceGetDefaultMemPool(&defpool, dev));
}

static void sc_paths(const char *only)
{
        setup();
        make_pools();
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
                if (!only || !strcmp(only, paths[i].name))
                        fill(&paths[i]);
        /* One allocation as large as the cap, on the paths another interposer let through. */
        CUarray a;
        CUDA_ARRAY_DESCRIPTOR d = {16384, 16384, CU_AD_FORMAT_FLOAT, 4}; /* 4 GiB */
        CK(api.ArrayCreate(&a, &d) == CUDA_ERROR_OUT_OF_MEMORY);
        CUdeviceptr p;
        CK(api.MemAllocAsync(&p, cap, stream) == CUDA_ERROR_OUT_OF_MEMORY);
        CK(api.MemAllocFromPoolAsync(&p, cap, pool, stream) == CUDA_ERROR_OUT_OF_MEMORY);
        CK(charged() == base);
        CU(api.MemPoolDestroy(pool));
        CK(charged() == base);
        CU(api.PrimaryCtxRelease(dev));
        CK(charged() == 0);
}

/* Paths mixed in one process, then many small random operations: exact return to base. */
static void sc_mixed(void)
{
        setup();
        make_pools();
        CU(a_linear(0));
        CU(a_async(1));
        CU(a_array(0));
        CK(a_vmm(0) == CUDA_ERROR_OUT_OF_MEMORY);
        CK(a_pool(2) == CUDA_ERROR_OUT_OF_MEMORY);
        CK(a_mipmap(0) == CUDA_ERROR_OUT_OF_MEMORY);
        CK(charged() <= cap);
        f_linear(0);
        f_async(1);
        f_array(0);
        s_sync();
        CK(charged() == base);

        enum { SLOTS = 48 };
        struct {
                int kind; /* 0 free slot */
                CUdeviceptr p;
                CUarray a;
                CUmemGenericAllocationHandle h;
        } s[SLOTS];
        memset(s, 0, sizeof(s));
        srand(7);
        for (int op = 0; op < 3000; op++) {
                int i = rand() % SLOTS;
                size_t sz = 1 + (size_t)(rand() % (64 * 1024 * 1024));
                if (!s[i].kind) {
                        int k = 1 + rand() % 5;
                        CUresult r;
                        size_t pitch;
                        CUDA_ARRAY_DESCRIPTOR ad = {1 + sz / 64, 16, CU_AD_FORMAT_UNSIGNED_INT8, 1};
                        CUmemAllocationProp vp;
                        memset(&vp, 0, sizeof(vp));
                        vp.type = CU_MEM_ALLOCATION_TYPE_PINNED;
                        vp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
                        switch (k) {
                        case 1:
                                r = api.MemAlloc(&s[i].p, sz);
                                break;
                        case 2:
                                r = api.MemAllocPitch(&s[i].p, &pitch, sz / 1024 + 1, 1024, 4);
                                break;
                        case 3:
                                r = api.MemAllocFromPoolAsync(&s[i].p, sz, pool, stream);
                                break;
                        case 4:
                                r = api.ArrayCreate(&s[i].a, &ad);
                                break;
                        default:
                                r = api.MemCreate(&s[i].h, (sz + 2 * MIB - 1) & ~(2 * MIB - 1), &vp,
                                                  0);
                                break;
                        }
                        CK(r == CUDA_SUCCESS || r == CUDA_ERROR_OUT_OF_MEMORY);
                        if (r == CUDA_SUCCESS)
                                s[i].kind = k;
                } else {
                        switch (s[i].kind) {
                        case 1:
                        case 2:
                                CU(api.MemFree(s[i].p));
                                break;
                        case 3:
                                CU(api.MemFreeAsync(s[i].p, stream));
                                break;
                        case 4:
                                CU(api.ArrayDestroy(s[i].a));
                                break;
                        default:
                                CU(api.MemRelease(s[i].h));
                                break;
                        }
                        s[i].kind = 0;
                }
                CK(charged() <= cap);
                if (op % 500 == 0)
                        s_trim();
        }
        for (int i = 0; i < SLOTS; i++) {
                if (s[i].kind == 1 || s[i].kind == 2)
                        CU(api.MemFree(s[i].p));
                else if (s[i].kind == 3)
                        CU(api.MemFreeAsync(s[i].p, stream));
                else if (s[i].kind == 4)
                        CU(api.ArrayDestroy(s[i].a));
                else if (s[i].kind == 5)
                        CU(api.MemRelease(s[i].h));
        }
        s_trim();
        CK(charged() == base);
        for (unsigned i = 0; i < KERF_SLICE_MAX_PROCS; i++)
                if (atomic_load(&reg->procs[i].pid) == getpid())
                        CK(atomic_load(&reg->procs[i].memory_used) == base);
}

/* VMM: host locations are not device memory; a released but still mapped handle keeps its
 * charge until it is unmapped (the driver frees it then). */
static void sc_vmm(void)
{
        setup();
        CUmemAllocationProp p;
        memset(&p, 0, sizeof(p));
        p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        p.location.type = CU_MEM_LOCATION_TYPE_HOST;
        p.location.id = 4096; /* a host id far beyond any device index */
        CUmemGenericAllocationHandle h;
        CU(api.MemCreate(&h, 8 * GIB, &p, 0));
        CK(charged() == base);
        CU(api.MemRelease(h));
        p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        p.location.id = dev;
        CU(api.MemCreate(&h, GIB, &p, 0));
        CK(charged() == base + GIB);
        CUdeviceptr va;
        CU(api.MemAddressReserve(&va, GIB, 0, 0, 0));
        CU(api.MemMap(va, GIB, 0, h, 0));
        CU(api.MemRelease(h));
        CK(charged() == base + GIB); /* still mapped: still taken */
        CU(api.MemUnmap(va, GIB));
        CK(charged() == base);
        CU(api.MemAddressFree(va, GIB));
}

/* Created contexts cost their overhead; destroying one frees what was allocated in it. */
static void sc_ctx(void)
{
        setup();
        CUcontext c2, c3;
        CU(cuCtxCreate_v2(&c2, 0, dev));
        CK(charged() == base + 300 * MIB);
        CUctxCreateParams cp = {NULL, 0, NULL};
        CU(cuCtxCreate_v4(&c3, &cp, 0, dev));
        CK(charged() == base + 600 * MIB);
        CU(cuCtxSetCurrent(c3));
        CUdeviceptr p;
        CU(cuMemAlloc_v2(&p, 100 * MIB));
        CK(charged() == base + 600 * MIB + 100 * MIB);
        CU(cuCtxDestroy_v2(c3));
        CK(charged() == base + 300 * MIB);
        CU(cuCtxDestroy_v2(c2));
        CK(charged() == base);
        /* 13 contexts of 300 MiB do not fit in 4 GiB: the cap says so, as OUT_OF_MEMORY. */
        CUcontext cs[16];
        int n = 0;
        CUresult r;
        while (n < 16 && (r = cuCtxCreate_v2(&cs[n], 0, dev)) == CUDA_SUCCESS)
                n++;
        CK(r == CUDA_ERROR_OUT_OF_MEMORY && charged() <= cap);
        while (n--)
                CU(cuCtxDestroy_v2(cs[n]));
        CK(charged() == base);
        CU(cuCtxSetCurrent(ctx));
        CU(cuDevicePrimaryCtxReset_v2(dev));
        CK(charged() == 0);
}

/* ---- cuGetProcAddress / dlsym ---- */

static void *self_sym(const char *name)
{
        return dlsym(RTLD_DEFAULT, name); /* the shim is first: its export */
}

static bool in_shim(void *fn)
{
        Dl_info di;
        return fn && dladdr(fn, &di) && di.dli_fname && strstr(di.dli_fname, "libkerf-cuda");
}

static void *gpa(const char *name, int version, cuuint64_t flags)
{
        void *fn = NULL;
        CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        CU(cuGetProcAddress_v2(name, &fn, version, flags, &st));
        CK(st == CU_GET_PROC_ADDRESS_SUCCESS);
        return fn;
}

#define PT CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM

static void sc_procaddr(void)
{
        /* Before cuInit, as cudart does. */
        CK(gpa("cuMemAllocAsync", 13000, PT) == self_sym("cuMemAllocAsync_ptsz"));
        CK(gpa("cuMemAllocAsync", 13000, 0) == self_sym("cuMemAllocAsync"));
        CK(gpa("cuMemAllocFromPoolAsync", 13000, PT) == self_sym("cuMemAllocFromPoolAsync_ptsz"));
        CK(gpa("cuMemFreeAsync", 13000, PT) == self_sym("cuMemFreeAsync_ptsz"));
        CK(gpa("cuStreamSynchronize", 13000, PT) == self_sym("cuStreamSynchronize_ptsz"));
        CK(gpa("cuMemAlloc", 13000, PT) == self_sym("cuMemAlloc_v2"));
        CK(in_shim(gpa("cuMemAlloc", 13000, PT)));
        CK(gpa("cuCtxCreate", 13000, 0) == self_sym("cuCtxCreate_v4"));
        CK(gpa("cuCtxCreate", 11040, 0) == self_sym("cuCtxCreate_v3"));
        CK(gpa("cuCtxCreate", 3020, 0) == self_sym("cuCtxCreate_v2"));
        CK(gpa("cuDevicePrimaryCtxRelease", 13000, 0) == self_sym("cuDevicePrimaryCtxRelease_v2"));
        CK(gpa("cuDevicePrimaryCtxRelease", 10000, 0) == self_sym("cuDevicePrimaryCtxRelease"));
        CK(gpa("cuGetProcAddress", 13000, 0) == self_sym("cuGetProcAddress_v2"));
        /* Not interposed: the real driver's own per-thread flavour, untouched. */
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        CK(h);
        void *real_ptds = dlsym(h, "cuMemcpyHtoD_v2_ptds");
        CK(real_ptds && !in_shim(real_ptds));
        CK(gpa("cuMemcpyHtoD", 13000, PT) == real_ptds);
        /* Errors and symbolStatus as the driver sets them. */
        void *fn = (void *)1;
        CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
        CK(cuGetProcAddress_v2("cuNoSuchThing", &fn, 13000, 0, &st) == CUDA_ERROR_NOT_FOUND);
        CK(st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND && fn == NULL);
        CK(cuGetProcAddress_v2("cuMemAllocAsync", &fn, 11000, 0, &st) == CUDA_ERROR_NOT_FOUND);
        CK(st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
        fn = NULL;
        CU(cuGetProcAddress("cuMemAllocAsync", &fn, 13000, PT));
        CK(fn == self_sym("cuMemAllocAsync_ptsz"));

        /* The same capped program, every entry point from cuGetProcAddress_v2. */
#define G(field, name, ver) api.field = gpa(name, ver, PT)
        G(Init, "cuInit", 13000);
        G(DeviceGet, "cuDeviceGet", 13000);
        G(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 13000);
        G(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease", 13000);
        G(CtxSetCurrent, "cuCtxSetCurrent", 13000);
        G(MemAlloc, "cuMemAlloc", 13000);
        G(MemFree, "cuMemFree", 13000);
        G(MemAllocPitch, "cuMemAllocPitch", 13000);
        G(MemAllocManaged, "cuMemAllocManaged", 13000);
        G(MemAllocAsync, "cuMemAllocAsync", 13000);
        G(MemFreeAsync, "cuMemFreeAsync", 13000);
        G(MemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 13000);
        G(MemPoolCreate, "cuMemPoolCreate", 13000);
        G(MemPoolDestroy, "cuMemPoolDestroy", 13000);
        G(MemPoolTrimTo, "cuMemPoolTrimTo", 13000);
        G(DeviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", 13000);
        G(StreamCreate, "cuStreamCreate", 13000);
        G(StreamSynchronize, "cuStreamSynchronize", 13000);
        G(ArrayCreate, "cuArrayCreate", 13000);
        G(Array3DCreate, "cuArray3DCreate", 13000);
        G(ArrayDestroy, "cuArrayDestroy", 13000);
        G(MipmappedArrayCreate, "cuMipmappedArrayCreate", 13000);
        G(MipmappedArrayDestroy, "cuMipmappedArrayDestroy", 13000);
        G(MemCreate, "cuMemCreate", 13000);
        G(MemRelease, "cuMemRelease", 13000);
        G(MemAddressReserve, "cuMemAddressReserve", 13000);
        G(MemAddressFree, "cuMemAddressFree", 13000);
        G(MemMap, "cuMemMap", 13000);
        G(MemUnmap, "cuMemUnmap", 13000);
        G(MemGetInfo, "cuMemGetInfo", 13000);
        G(DeviceTotalMem, "cuDeviceTotalMem", 13000);
#undef G
        sc_paths(NULL);
}

/* dlopen + dlsym of the driver reach the shim (pointer mapped from the real function). */
static void sc_dlsym(void)
{
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        CK(h);
        static const char *const names[] = {"cuInit",
                                            "cuMemAlloc_v2",
                                            "cuMemFree_v2",
                                            "cuMemCreate",
                                            "cuMemAllocAsync_ptsz",
                                            "cuGetProcAddress_v2",
                                            "cuArray3DCreate_v2"};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                void *fn = dlsym(h, names[i]);
                CK(fn == self_sym(names[i]) && in_shim(fn));
        }
        CK(!in_shim(dlsym(h, "cuMemcpyHtoD_v2"))); /* not interposed: passed through */
        /* RTLD_NEXT from the executable: the shim comes next for interposed names, the
         * driver for the others, libc for everything else (answered as for the caller). */
        CK(dlsym(RTLD_NEXT, "cuMemAlloc_v2") == self_sym("cuMemAlloc_v2"));
        CK(dlsym(RTLD_NEXT, "cuMemcpyHtoD_v2") == dlsym(h, "cuMemcpyHtoD_v2"));
        CK(dlsym(RTLD_NEXT, "write") == dlsym(RTLD_DEFAULT, "write") &&
           !in_shim(dlsym(RTLD_NEXT, "write")));
        CK(in_shim(dlsym(RTLD_NEXT, "nvmlDeviceGetMemoryInfo_v2")));
        CK(dlsym(h, "cuNoSuchThing") == NULL);
        api.MemAlloc = dlsym(h, "cuMemAlloc_v2");
        setup();
        /* the legacy 32-bit allocation entry points are refused, never a way around the cap */
        typedef CUresult (*alloc_v1_fn)(unsigned int *, unsigned int);
        typedef CUresult (*info_v1_fn)(unsigned int *, unsigned int *);
        alloc_v1_fn a1 = (alloc_v1_fn)dlsym(RTLD_DEFAULT, "cuMemAlloc");
        info_v1_fn i1 = (info_v1_fn)dlsym(RTLD_DEFAULT, "cuMemGetInfo");
        CK(a1 && in_shim((void *)a1) && i1 && in_shim((void *)i1));
        uint64_t before = charged();
        unsigned int p1 = 0, f1 = 0, t1 = 0;
        CK(a1(&p1, 1u << 20) == CUDA_ERROR_NOT_SUPPORTED && p1 == 0 && charged() == before);
        CK(atomic_load(&reg->memory_denied) == 0);
        CU(i1(&f1, &t1));
        CK(t1 == UINT32_MAX); /* the 4 GiB view does not fit in 32 bits: clamped */
        fill(&paths[0]);
}

/* ---- views ---- */

static void check_views(void)
{
        size_t fr = 0, tot = 0, dt = 0;
        uint64_t lim = atomic_load(&reg->limits.memory_limit);
        uint64_t phys = atomic_load(&reg->limits.device_memory);
        uint64_t want = lim < phys ? lim : phys;
        CU(api.MemGetInfo(&fr, &tot));
        uint64_t c = charged();
        CK(tot == want);
        CK(fr == (want > c ? want - c : 0));
        CU(api.DeviceTotalMem(&dt, dev));
        CK(dt == want);
}

static void sc_views(void)
{
        setup();
        check_views();
        CUdeviceptr p;
        CU(cuMemAlloc_v2(&p, GIB));
        check_views();
        CU(cuMemFree_v2(p));
        check_views();
}

/* Holds 1 GiB until stdin closes (another process checks the views meanwhile). */
static void sc_hold(void)
{
        setup();
        CUdeviceptr p;
        CU(cuMemAlloc_v2(&p, GIB));
        printf("ready\n");
        fflush(stdout);
        char buf[16];
        while (read(0, buf, sizeof(buf)) > 0)
                ;
}

/* views2 MIN: the views include at least MIN bytes charged by other processes. */
static void sc_views2(uint64_t min_other)
{
        setup();
        CK(charged() >= base && base >= min_other + 300 * MIB);
        check_views();
}

static void sc_nvml(void)
{
        setup();
        CUdeviceptr p;
        CU(cuMemAlloc_v2(&p, GIB));
        CK(nvmlInit_v2() == NVML_SUCCESS);
        nvmlDevice_t d;
        CK(nvmlDeviceGetHandleByUUID(getenv("CUDA_VISIBLE_DEVICES"), &d) == NVML_SUCCESS);
        uint64_t lim = atomic_load(&reg->limits.memory_limit);
        uint64_t phys = atomic_load(&reg->limits.device_memory);
        uint64_t want = lim < phys ? lim : phys;
        nvmlMemory_t m;
        CK(nvmlDeviceGetMemoryInfo(d, &m) == NVML_SUCCESS);
        CK(m.total == want && m.used == charged() && m.free == want - charged());
        nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
        CK(nvmlDeviceGetMemoryInfo_v2(d, &m2) == NVML_SUCCESS);
        CK(m2.total == want && m2.used == charged() && m2.free == want - charged());
        unsigned n = 0;
        CK(nvmlDeviceGetComputeRunningProcesses_v3(d, &n, NULL) == NVML_ERROR_INSUFFICIENT_SIZE);
        CK(n == 1);
        nvmlProcessInfo_t pi[4];
        n = 4;
        CK(nvmlDeviceGetComputeRunningProcesses_v3(d, &n, pi) == NVML_SUCCESS);
        CK(n == 1 && pi[0].pid == (unsigned)getpid() && pi[0].usedGpuMemory == charged());
        nvmlProcessInfo_v1_t p1[4];
        n = 4;
        CK(nvmlDeviceGetComputeRunningProcesses(d, &n, p1) == NVML_SUCCESS);
        CK(n == 1 && p1[0].pid == (unsigned)getpid() && p1[0].usedGpuMemory == charged());
        /* Through dlopen/dlsym, as monitoring libraries reach NVML. */
        void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
        CK(h);
        __typeof__(nvmlDeviceGetMemoryInfo) *gm = dlsym(h, "nvmlDeviceGetMemoryInfo");
        CK(in_shim((void *)gm));
        memset(&m, 0, sizeof(m));
        CK(gm(d, &m) == NVML_SUCCESS && m.total == want);
        CK(!in_shim(dlsym(h, "nvmlDeviceGetName")));
        CU(cuMemFree_v2(p));
}

/* ---- lifecycle ---- */

static void sc_init(void)
{
        CUresult r = cuInit(0);
        printf("cuInit=%d\n", (int)r);
        fflush(stdout);
        /* Every other entry point refuses too, with the same code, and nothing crashes. */
        CUdeviceptr p;
        size_t f, t;
        CUresult r2 = cuMemAlloc_v2(&p, MIB), r3 = cuMemGetInfo_v2(&f, &t);
        CK(r != CUDA_SUCCESS || (r2 != CUDA_ERROR_NOT_INITIALIZED));
        if (r == CUDA_ERROR_NOT_INITIALIZED)
                CK(r2 == CUDA_ERROR_NOT_INITIALIZED && r3 == CUDA_ERROR_NOT_INITIALIZED);
        exit((int)r);
}

static void sc_fork(void)
{
        setup();
        CUdeviceptr p;
        CU(cuMemAlloc_v2(&p, GIB));
        uint64_t c = charged();
        CK(atomic_load(&reg->nprocs) == 1);
        fflush(NULL);
        pid_t k = fork();
        if (k == 0) {
                /* A new process of the task: its own slot, none of the parent's charges. */
                CK(cuInit(0) == CUDA_SUCCESS);
                int mine = 0;
                for (unsigned i = 0; i < KERF_SLICE_MAX_PROCS; i++)
                        if (atomic_load(&reg->procs[i].pid) == getpid()) {
                                mine++;
                                CK(atomic_load(&reg->procs[i].memory_used) == 0);
                        }
                CK(mine == 1);
                CK(atomic_load(&reg->nprocs) == 2);
                CK(charged() == c);
                exit(0);
        }
        int st = 0;
        CK(waitpid(k, &st, 0) == k && WIFEXITED(st) && WEXITSTATUS(st) == 0);
        CK(charged() == c);
        CK(atomic_load(&reg->nprocs) == 1);
        CU(cuMemFree_v2(p));
        CK(charged() == base);
}

/* Exits holding memory and a context: the exit handler gives everything back. */
static void sc_exit_holding(void)
{
        setup();
        CUdeviceptr p;
        CU(cuMemAlloc_v2(&p, GIB));
        exit(0);
}

int main(int argc, char **argv)
{
        const char *rpath = getenv("KERF_SLICE_REGION");
        if (argc < 2)
                return 2;
        if (strcmp(argv[1], "init")) {
                CK(rpath && kerf_slice_region_map(rpath, false, &reg) == 0);
                uint64_t lim = atomic_load(&reg->limits.memory_limit);
                uint64_t phys = atomic_load(&reg->limits.device_memory);
                cap = lim < phys ? lim : phys;
        }
        const char *s = argv[1];
        if (!strcmp(s, "paths"))
                sc_paths(argc > 2 ? argv[2] : NULL);
        else if (!strcmp(s, "mixed"))
                sc_mixed();
        else if (!strcmp(s, "vmm"))
                sc_vmm();
        else if (!strcmp(s, "ctx"))
                sc_ctx();
        else if (!strcmp(s, "procaddr"))
                sc_procaddr();
        else if (!strcmp(s, "dlsym"))
                sc_dlsym();
        else if (!strcmp(s, "views"))
                sc_views();
        else if (!strcmp(s, "hold"))
                sc_hold();
        else if (!strcmp(s, "views2"))
                sc_views2(argc > 2 ? strtoull(argv[2], NULL, 10) : 0);
        else if (!strcmp(s, "nvml"))
                sc_nvml();
        else if (!strcmp(s, "init"))
                sc_init();
        else if (!strcmp(s, "fork"))
                sc_fork();
        else if (!strcmp(s, "exit_holding"))
                sc_exit_holding();
        else
                return 2;
        return 0;
}
