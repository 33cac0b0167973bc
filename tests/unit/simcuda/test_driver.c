/* SPDX-License-Identifier: Apache-2.0 */
/* test_driver.c - conformance of the simulated libcuda: devices, memory, streams, graphs */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "simcuda_fixture.h"

static CUcontext ctx0(void)
{
        CU(cuInit(0));
        return fx_ctx_on(0);
}

static void sc_devices(void)
{
        int n, v;
        char name[128];
        CK(cuDeviceGetCount(&n) == CUDA_ERROR_NOT_INITIALIZED);
        CU(cuInit(0));
        CK(cuInit(1) == CUDA_ERROR_INVALID_VALUE);
        CU(cuDeviceGetCount(&n));
        CK(n == 2);
        CU(cuDriverGetVersion(&v));
        CK(v == 13000);
        CU(cuDeviceGetName(name, sizeof(name), 0));
        CK(!strcmp(name, "NVIDIA H200"));
        CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
        CK(v == 132);
        CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 1));
        CK(v == 9);
        CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 2) == CUDA_ERROR_INVALID_DEVICE);
        CK(cuDeviceGetAttribute(&v, (CUdevice_attribute)100000, 0) == CUDA_ERROR_INVALID_VALUE);
        size_t tot;
        CU(cuDeviceTotalMem_v2(&tot, 0));
        CK(tot > 140ULL << 30);
        const char *s;
        CU(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &s));
        CK(!strcmp(s, "CUDA_ERROR_OUT_OF_MEMORY"));
        /* contexts and the stack */
        CUcontext c, p, cur;
        CK(cuMemAlloc_v2(&(CUdeviceptr){0}, 16) == CUDA_ERROR_INVALID_CONTEXT);
        CU(cuDevicePrimaryCtxRetain(&p, 1));
        unsigned fl;
        int act;
        CU(cuDevicePrimaryCtxGetState(1, &fl, &act));
        CK(act == 1);
        CU(cuCtxCreate_v4(&c, NULL, 0, 0));
        CU(cuCtxGetCurrent(&cur));
        CK(cur == c);
        CU(cuCtxPushCurrent_v2(p));
        CUdevice d;
        CU(cuCtxGetDevice(&d));
        CK(d == 1);
        CU(cuCtxPopCurrent_v2(&cur));
        CK(cur == p);
        CK(cuCtxDestroy_v2(p) == CUDA_ERROR_INVALID_CONTEXT);
        CU(cuDevicePrimaryCtxRelease_v2(1));
        CU(cuDevicePrimaryCtxGetState(1, &fl, &act));
        CK(act == 0);
        CK(cuCtxCreate_v4(&c, NULL, 0x3, 0) == CUDA_ERROR_INVALID_VALUE);
        CU(cuCtxDestroy_v2(cur = c));
        CK(cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == NULL);
}

static void sc_alloc_paths(void)
{
        CUcontext c = ctx0();
        uint64_t base = fx_used_now();
        CUdeviceptr p;
        size_t pitch;
        CU(cuMemAlloc_v2(&p, 100 << 20));
        CK(fx_used_now() == base + (100 << 20));
        CU(cuMemsetD8_v2(p, 7, 100 << 20)); /* touches lazily backed pages */
        CU(cuMemFree_v2(p));
        CK(cuMemFree_v2(p) == CUDA_ERROR_INVALID_VALUE);
        CK(fx_used_now() == base);
        CU(cuMemAllocPitch_v2(&p, &pitch, 1000, 1000, 4));
        CK(pitch == 1024 && fx_used_now() > base);
        CU(cuMemFree_v2(p));
        CU(cuMemAllocManaged(&p, 3 << 20, CU_MEM_ATTACH_GLOBAL));
        CK(fx_used_now() == base + (4 << 20));
        CU(cuMemFree_v2(p));
        CK(fx_used_now() == base);
        /* stream-ordered: the pool keeps blocks until a sync above the threshold */
        CUstream s;
        CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        CU(cuMemAllocAsync(&p, 8 << 20, s));
        CK(fx_used_now() == base + (8 << 20));
        CU(cuMemFreeAsync(p, s));
        CU(cuStreamSynchronize(s));
        CK(fx_used_now() == base);
        CUmemoryPool pool;
        CU(cuDeviceGetDefaultMemPool(&pool, 0));
        cuuint64_t thr = 64 << 20, rv;
        CU(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr));
        CU(cuMemAllocFromPoolAsync(&p, 8 << 20, pool, s));
        CU(cuMemFreeAsync(p, s));
        CU(cuStreamSynchronize(s));
        CU(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &rv));
        CK(rv == 8 << 20 && fx_used_now() == base + (8 << 20));
        CU(cuMemPoolTrimTo(pool, 0));
        CK(fx_used_now() == base);
        /* VMM */
        CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED};
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        size_t g;
        CU(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
        CUmemGenericAllocationHandle h;
        CK(cuMemCreate(&h, g + 1, &prop, 0) == CUDA_ERROR_INVALID_VALUE);
        CU(cuMemCreate(&h, 4 * g, &prop, 0));
        CK(fx_used_now() == base + 4 * g);
        CUdeviceptr va;
        CU(cuMemAddressReserve(&va, 4 * g, 0, 0, 0));
        CU(cuMemMap(va, 4 * g, 0, h, 0));
        CU(cuMemRelease(h)); /* still mapped: memory stays charged */
        CK(fx_used_now() == base + 4 * g);
        CUmemAccessDesc ad = {.location = prop.location,
                              .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
        CU(cuMemSetAccess(va, 4 * g, &ad, 1));
        CU(cuMemsetD32_v2(va, 0xabcdef01u, g));
        unsigned got;
        CU(cuMemcpyDtoH_v2(&got, va + 8, 4));
        CK(got == 0xabcdef01u);
        CU(cuMemUnmap(va, 4 * g));
        CU(cuMemAddressFree(va, 4 * g));
        CK(fx_used_now() == base);
        prop.location.type = CU_MEM_LOCATION_TYPE_HOST; /* host VMM is never charged on a device */
        CU(cuMemCreate(&h, g, &prop, 0));
        CK(fx_used_now() == base);
        CU(cuMemRelease(h));
        /* arrays */
        CUarray a;
        CUDA_ARRAY_DESCRIPTOR d = {4096, 4096, CU_AD_FORMAT_FLOAT, 4};
        CU(cuArrayCreate_v2(&a, &d));
        CK(fx_used_now() == base + 256 * (1 << 20));
        CU(cuArrayDestroy(a));
        CUDA_ARRAY3D_DESCRIPTOR d3 = {256, 256, 64, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0};
        CU(cuArray3DCreate_v2(&a, &d3));
        CU(cuArrayDestroy(a));
        CUmipmappedArray mm;
        CU(cuMipmappedArrayCreate(&mm, &d3, 4));
        CK(fx_used_now() > base);
        CU(cuMipmappedArrayDestroy(mm));
        CK(fx_used_now() == base);
        CU(cuStreamDestroy_v2(s));
        /* the context overhead itself goes when the context does */
        CU(cuCtxDestroy_v2(c));
        kerf_sim *st;
        uint64_t tot, used;
        CK(kerf_sim_open(NULL, &st) == 0);
        CK(kerf_sim_target_mem(st, (kerf_sim_target){0, -1, -1}, &tot, &used) == 0);
        CK(used == 0);
        kerf_sim_close(st);
}

/* Sizes near SIZE_MAX: a clean error, nothing charged, no crash (each was a wrap-around). */
static void sc_huge_sizes(void)
{
        CUcontext c = ctx0();
        uint64_t base = fx_used_now();
        CUdeviceptr p;
        size_t pitch = 77;
        CK(cuMemAlloc_v2(&p, SIZE_MAX) == CUDA_ERROR_OUT_OF_MEMORY);
        CK(cuMemAlloc_v2(&p, SIZE_MAX - (1 << 20)) == CUDA_ERROR_OUT_OF_MEMORY);
        CK(cuMemAllocManaged(&p, SIZE_MAX, CU_MEM_ATTACH_GLOBAL) == CUDA_ERROR_OUT_OF_MEMORY);
        /* the pitch rounding of a SIZE_MAX width used to be 0, then divided by */
        CK(cuMemAllocPitch_v2(&p, &pitch, SIZE_MAX, 2, 4) == CUDA_ERROR_OUT_OF_MEMORY);
        CK(cuMemAllocPitch_v2(&p, &pitch, 1 << 20, SIZE_MAX / 1024, 4) == CUDA_ERROR_OUT_OF_MEMORY);
        CK(pitch == 77); /* untouched on failure */
        /* array extents whose byte count does not fit in 64 bits */
        CUarray a;
        CUDA_ARRAY_DESCRIPTOR d = {SIZE_MAX / 2, 3, CU_AD_FORMAT_FLOAT, 4};
        CK(cuArrayCreate_v2(&a, &d) == CUDA_ERROR_INVALID_VALUE);
        CUDA_ARRAY3D_DESCRIPTOR d3 = {
            1ULL << 22, 1ULL << 22, 1ULL << 22, CU_AD_FORMAT_UNSIGNED_INT8, 1, 0};
        CK(cuArray3DCreate_v2(&a, &d3) == CUDA_ERROR_INVALID_VALUE);
        /* an address reservation whose size + alignment wraps */
        CUdeviceptr va;
        CK(cuMemAddressReserve(&va, SIZE_MAX - (SIZE_MAX % (2 << 20)), 1ULL << 63, 0, 0) ==
           CUDA_ERROR_OUT_OF_MEMORY);
        /* pools: a maxSize limit near the top of the range */
        CUstream s;
        CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        CK(cuMemAllocAsync(&p, SIZE_MAX, s) == CUDA_ERROR_OUT_OF_MEMORY);
        CU(cuStreamDestroy_v2(s));
        CK(fx_used_now() == base);
        CU(cuCtxDestroy_v2(c));
}

static void sc_oom_two_procs(void)
{
        int up[2], down[2];
        CK(pipe(up) == 0 && pipe(down) == 0);
        pid_t a = fork();
        if (a == 0) {
                CUdeviceptr p;
                ctx0();
                CU(cuMemAlloc_v2(&p, 10ULL << 30));
                CK(write(up[1], "x", 1) == 1);
                char b;
                CK(read(down[0], &b, 1) == 1);
                exit(0);
        }
        char b;
        CK(read(up[0], &b, 1) == 1);
        ctx0();
        CUdeviceptr p;
        CK(cuMemAlloc_v2(&p, 10ULL << 30) == CUDA_ERROR_OUT_OF_MEMORY);
        size_t f, t;
        CU(cuMemGetInfo_v2(&f, &t));
        CK(f < 5ULL << 30);
        CK(write(down[1], "x", 1) == 1);
        int st;
        waitpid(a, &st, 0);
        CK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        CU(cuMemAlloc_v2(&p, 10ULL << 30)); /* A's memory went with A */
        CU(cuMemFree_v2(p));
}

static int order[16], n_order;
static void mark(void *arg)
{
        order[n_order++] = (int)(intptr_t)arg;
}

static void sc_streams_events(void)
{
        ctx0();
        CUmodule m;
        CUfunction k20, k500;
        CK(cuModuleLoadData(&m, "garbage") == CUDA_ERROR_INVALID_IMAGE);
        CU(cuModuleLoadData(&m, fx_module));
        CU(cuModuleGetFunction(&k20, m, "k20ms"));
        CU(cuModuleGetFunction(&k500, m, "k500"));
        CK(cuModuleGetFunction(&k20, m, "nope") == CUDA_ERROR_NOT_FOUND);
        CUstream s1, s2;
        CU(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
        CU(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
        CUdeviceptr buf;
        CU(cuMemAlloc_v2(&buf, 4096));
        /* in-order within a stream, asynchronous to the host */
        CU(cuMemsetD32Async(buf, 1, 1, s1));
        CU(cuLaunchKernel(k20, 1, 1, 1, 32, 1, 1, 0, s1, NULL, NULL));
        CU(cuLaunchHostFunc(s1, mark, (void *)1));
        CU(cuMemsetD32Async(buf, 2, 1, s1));
        /* On the virtual clock the 20 ms kernel takes no wall time, so a slow host (sanitizers,
         * a loaded machine) may find the stream done already: only wall time guarantees it. */
        const char *clk = getenv("KERF_SIM_CLOCK");
        bool virt = clk && !strcmp(clk, "virtual");
        CUresult q = cuStreamQuery(s1);
        CK(q == CUDA_ERROR_NOT_READY || (virt && q == CUDA_SUCCESS));
        /* s2 waits on an event recorded after s1's kernel */
        CUevent e, a, b;
        CU(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
        CU(cuEventRecord(e, s1));
        CU(cuStreamWaitEvent(s2, e, 0));
        CU(cuLaunchHostFunc(s2, mark, (void *)2));
        CU(cuStreamSynchronize(s2));
        CU(cuStreamSynchronize(s1));
        CK(n_order == 2 && order[0] == 1 && order[1] == 2);
        unsigned v;
        CU(cuMemcpyDtoH_v2(&v, buf, 4));
        CK(v == 2);
        /* event timing: device time of the kernels between the records */
        CU(cuEventCreate(&a, 0));
        CU(cuEventCreate(&b, 0));
        float ms;
        CK(cuEventElapsedTime_v2(&ms, a, b) == CUDA_ERROR_INVALID_HANDLE); /* never recorded */
        CU(cuEventRecord(a, s1));
        CU(cuLaunchKernel(k20, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
        CU(cuLaunchKernel(k500, 1, 1, 1, 1, 1, 1, 0, s1, NULL, NULL));
        CU(cuEventRecord(b, s1));
        CU(cuEventSynchronize(b));
        CU(cuEventElapsedTime_v2(&ms, a, b));
        if (virt)
                CK(ms > 20.49f && ms < 20.51f);
        else
                CK(ms >= 20.4f && ms < 1000.0f); /* wall clock: never shorter, generous above */
        CK(cuEventElapsedTime_v2(&ms, e, b) == CUDA_ERROR_INVALID_HANDLE);
        /* legacy stream orders against blocking streams */
        CUstream s3;
        CU(cuStreamCreate(&s3, CU_STREAM_DEFAULT));
        CU(cuLaunchKernel(k20, 1, 1, 1, 1, 1, 1, 0, s3, NULL, NULL));
        CU(cuLaunchHostFunc(s3, mark, (void *)3));
        CU(cuLaunchHostFunc(NULL, mark, (void *)4));
        CU(cuStreamSynchronize(NULL));
        CK(n_order == 4 && order[2] == 3 && order[3] == 4);
        /* wave scaling: 133 blocks on 132 SMs = 2 waves */
        CUfunction kw;
        CU(cuModuleGetFunction(&kw, m, "kwave"));
        CU(cuEventRecord(a, s1));
        CU(cuLaunchKernel(kw, 133, 1, 1, 128, 1, 1, 0, s1, NULL, NULL));
        CU(cuEventRecord(b, s1));
        CU(cuEventSynchronize(b));
        CU(cuEventElapsedTime_v2(&ms, a, b));
        CK(ms >= 0.199f);
        CK(cuLaunchKernel(k500, 1, 1, 1, 2048, 1, 1, 0, s1, NULL, NULL) ==
           CUDA_ERROR_INVALID_VALUE);
        CU(cuEventDestroy_v2(a));
        CU(cuEventDestroy_v2(b));
        CU(cuEventDestroy_v2(e));
        CU(cuStreamDestroy_v2(s1));
        CU(cuStreamDestroy_v2(s2));
        CU(cuStreamDestroy_v2(s3));
        CU(cuMemFree_v2(buf));
        CU(cuModuleUnload(m));
}

static void sc_graphs(void)
{
        ctx0();
        CUmodule m;
        CUfunction k;
        CU(cuModuleLoadData(&m, fx_module));
        CU(cuModuleGetFunction(&k, m, "k500"));
        CUstream s;
        CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        CK(cuStreamBeginCapture_v2(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL) ==
           CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
        CU(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
        for (int i = 0; i < 4; i++)
                CU(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
        CU(cuLaunchHostFunc(s, mark, (void *)7));
        CK(cuStreamQuery(s) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
        CUgraph g;
        CU(cuStreamEndCapture(s, &g));
        CK(n_order == 0); /* captured, not run */
        CUgraphExec x;
        CU(cuGraphInstantiateWithFlags(&x, g, 0));
        CUevent a, b;
        CU(cuEventCreate(&a, 0));
        CU(cuEventCreate(&b, 0));
        CU(cuEventRecord(a, s));
        CU(cuGraphLaunch(x, s));
        CU(cuGraphLaunch(x, s));
        CU(cuEventRecord(b, s));
        CU(cuStreamSynchronize(s));
        float ms;
        CU(cuEventElapsedTime_v2(&ms, a, b));
        CK(ms >= 3.99f);
        CK(n_order == 2 && order[0] == 7 && order[1] == 7);
        CU(cuGraphExecDestroy(x));
        CU(cuGraphDestroy(g));
        /* explicit construction: a diamond */
        CUgraphNode n1, n2, n3, n4;
        CUDA_KERNEL_NODE_PARAMS p = {.func = k, 1, 1, 1, 1, 1, 1};
        CU(cuGraphCreate(&g, 0));
        CU(cuGraphAddKernelNode_v2(&n1, g, NULL, 0, &p));
        CU(cuGraphAddKernelNode_v2(&n2, g, &n1, 1, &p));
        CU(cuGraphAddKernelNode_v2(&n3, g, &n1, 1, &p));
        CUgraphNode deps[2] = {n2, n3};
        CU(cuGraphAddKernelNode_v2(&n4, g, deps, 2, &p));
        CU(cuGraphInstantiateWithFlags(&x, g, 0));
        CU(cuEventRecord(a, s));
        CU(cuGraphLaunch(x, s));
        CU(cuEventRecord(b, s));
        CU(cuEventSynchronize(b));
        CU(cuEventElapsedTime_v2(&ms, a, b));
        CK(ms >= 1.99f);
        CU(cuGraphExecDestroy(x));
        CU(cuGraphDestroy(g));
        CU(cuEventDestroy_v2(a));
        CU(cuEventDestroy_v2(b));
        CU(cuStreamDestroy_v2(s));
}

static void sc_procaddr(void)
{
        CU(cuInit(0));
        void *fn;
        CUdriverProcAddressQueryResult st;
        CU(cuGetProcAddress_v2("cuMemAlloc", &fn, 12000, 0, &st));
        CK(fn == (void *)cuMemAlloc_v2 && st == CU_GET_PROC_ADDRESS_SUCCESS);
        CU(cuGetProcAddress_v2("cuLaunchKernel", &fn, 12000, 0, &st));
        CK(fn == (void *)cuLaunchKernel);
        CU(cuGetProcAddress_v2("cuLaunchKernel", &fn, 12000,
                               CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
        CK(fn == (void *)cuLaunchKernel_ptsz);
        CU(cuGetProcAddress_v2("cuMemcpyHtoD", &fn, 12000,
                               CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
        CK(fn == (void *)cuMemcpyHtoD_v2_ptds);
        CU(cuGetProcAddress_v2("cuMemcpyHtoD", &fn, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st));
        CK(fn == (void *)cuMemcpyHtoD_v2);
        /* no per-thread variant before 7.0: the legacy one */
        CU(cuGetProcAddress_v2("cuLaunchKernel", &fn, 6050,
                               CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
        CK(fn == (void *)cuLaunchKernel);
        CU(cuGetProcAddress_v2("cuCtxCreate", &fn, 13000, 0, &st));
        CK(fn == (void *)cuCtxCreate_v4);
        CU(cuGetProcAddress_v2("cuCtxCreate", &fn, 11040, 0, &st));
        CK(fn != (void *)cuCtxCreate_v4);
        CU(cuGetProcAddress_v2("cuGraphInstantiate", &fn, 12000, 0, &st));
        CK(fn == (void *)cuGraphInstantiateWithFlags);
        CK(cuGetProcAddress_v2("cuMemAllocAsync", &fn, 11000, 0, &st) == CUDA_ERROR_NOT_FOUND);
        CK(st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT && fn == NULL);
        CK(cuGetProcAddress_v2("cuNoSuchThing", &fn, 13000, 0, &st) == CUDA_ERROR_NOT_FOUND);
        CK(st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
        CK(cuGetProcAddress_v2("cuMemAlloc", &fn, 13000, 4, &st) == CUDA_ERROR_INVALID_VALUE);
        CK(cuGetProcAddress_v2(NULL, &fn, 13000, 0, &st) == CUDA_ERROR_INVALID_VALUE);
        CU(cuGetProcAddress_v2("cuGetProcAddress", &fn, 12000, 0, &st));
        CK(fn == (void *)cuGetProcAddress_v2);
}

static void sc_cvd(void)
{
        kerf_sim *st;
        kerf_sim_gpu_info g1;
        CK(kerf_sim_open(NULL, &st) == 0 && kerf_sim_gpu_get(st, 1, &g1) == 0);
        kerf_sim_close(st);
        char spec[64];
        snprintf(spec, sizeof(spec), "%.12s", g1.uuid); /* "GPU-" + 8 hex: a prefix */
        setenv("CUDA_VISIBLE_DEVICES", spec, 1);
        CU(cuInit(0));
        int n;
        CU(cuDeviceGetCount(&n));
        CK(n == 1);
        CUuuid u;
        CU(cuDeviceGetUuid_v2(&u, 0));
        unsigned b0;
        sscanf(g1.uuid + 4, "%2x", &b0);
        CK((unsigned char)u.bytes[0] == b0);
}

static void sc_cvd_list(void)
{
        setenv("CUDA_VISIBLE_DEVICES", "1,bogus,0", 1);
        CU(cuInit(0));
        int n;
        CU(cuDeviceGetCount(&n));
        CK(n == 1);
}

/* A list longer than 1 KiB is read whole (it used to be cut, dropping the entries after). */
static void sc_cvd_long(void)
{
        static char v[2048];
        memset(v, ' ', sizeof(v) - 1);
        memcpy(v, "0,", 2);
        v[sizeof(v) - 2] = '1';
        setenv("CUDA_VISIBLE_DEVICES", v, 1);
        CU(cuInit(0));
        int n;
        CU(cuDeviceGetCount(&n));
        CK(n == 2);
}

static void sc_cvd_empty(void)
{
        setenv("CUDA_VISIBLE_DEVICES", "", 1);
        CK(cuInit(0) == CUDA_ERROR_NO_DEVICE);
        CK(cuInit(0) == CUDA_ERROR_NO_DEVICE);
}

static void sc_mig(void)
{
        kerf_sim *st;
        unsigned gi, ci;
        kerf_sim_gi_info info;
        CK(kerf_sim_open(NULL, &st) == 0);
        CK(kerf_sim_gi_create(st, 0, 19, -1, &gi) == 0); /* 1g.18gb */
        CK(kerf_sim_gi_get(st, 0, gi, &info) == 0);
        CK(kerf_sim_ci_create(st, 0, gi, info.profile->ci_profile, &ci) == 0);
        char uuid[KERF_SIM_MIG_UUID_LEN];
        CK(kerf_sim_target_uuid(st, (kerf_sim_target){0, (int)gi, (int)ci}, uuid, sizeof(uuid)) ==
           0);
        kerf_sim_close(st);
        setenv("CUDA_VISIBLE_DEVICES", uuid, 1);
        CU(cuInit(0));
        int n, sms;
        CU(cuDeviceGetCount(&n));
        CK(n == 1);
        CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
        CK(sms == (int)info.profile->sms);
        size_t tot;
        CU(cuDeviceTotalMem_v2(&tot, 0));
        CK(tot == info.mem_total);
        ctx0();
        CUdeviceptr p;
        CK(cuMemAlloc_v2(&p, tot) == CUDA_ERROR_OUT_OF_MEMORY); /* context overhead took some */
        CU(cuMemAlloc_v2(&p, tot / 2));
        CU(cuMemFree_v2(p));
}

FX_SCEN(sc_devices, "H200", 2, false, "virtual")
FX_SCEN(sc_alloc_paths, "H200", 1, false, "virtual")
FX_SCEN(sc_oom_two_procs, "T4", 1, false, "virtual")
FX_SCEN(sc_huge_sizes, "H200", 1, false, "virtual")
FX_SCEN(sc_streams_events, "H200", 1, false, "virtual")
static void t_sc_streams_events_wall(void **state)
{
        (void)state;
        assert_int_equal(fx_scenario(sc_streams_events, "H200", 1, false, NULL), 0);
}
FX_SCEN(sc_graphs, "H200", 1, false, "virtual")
FX_SCEN(sc_procaddr, "H200", 1, false, NULL)
FX_SCEN(sc_cvd, "H200", 2, false, NULL)
FX_SCEN(sc_cvd_list, "H200", 2, false, NULL)
FX_SCEN(sc_cvd_empty, "H200", 2, false, NULL)
FX_SCEN(sc_cvd_long, "H200", 2, false, NULL)
FX_SCEN(sc_mig, "H200", 1, true, "virtual")

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(t_sc_devices),
            cmocka_unit_test(t_sc_alloc_paths),
            cmocka_unit_test(t_sc_oom_two_procs),
            cmocka_unit_test(t_sc_huge_sizes),
            cmocka_unit_test(t_sc_streams_events),
            cmocka_unit_test(t_sc_streams_events_wall),
            cmocka_unit_test(t_sc_graphs),
            cmocka_unit_test(t_sc_procaddr),
            cmocka_unit_test(t_sc_cvd),
            cmocka_unit_test(t_sc_cvd_list),
            cmocka_unit_test(t_sc_cvd_empty),
            cmocka_unit_test(t_sc_cvd_long),
            cmocka_unit_test(t_sc_mig),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
