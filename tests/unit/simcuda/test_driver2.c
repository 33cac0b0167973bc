/* SPDX-License-Identifier: Apache-2.0 */
/* test_driver2.c - conformance of the later driver entry points: function and kernel
 * attributes, occupancy, module globals, linking, context limits, device queries, procaddr rows */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "legacy.h"
#include "simcuda_fixture.h"

static int fattr(CUfunction f, CUfunction_attribute a)
{
        int v = -12345;
        CU(cuFuncGetAttribute(&v, a, f));
        return v;
}

/* ---- function and kernel attributes, module queries ---- */

static void sc_funcattr(void)
{
        CUmodule m;
        CUfunction k, f2;
        CK(cuModuleGetLoadingMode(&(CUmoduleLoadingMode){0}) == CUDA_ERROR_NOT_INITIALIZED);
        CU(cuInit(0));
        CUcontext c = fx_ctx_on(0);
        CU(cuModuleLoadData(&m, fx_module));
        CU(cuModuleGetFunction(&k, m, "k500"));
        CK(fattr(k, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == 1024);
        CK(fattr(k, CU_FUNC_ATTRIBUTE_NUM_REGS) == 32);
        CK(fattr(k, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) == 0);
        CK(fattr(k, CU_FUNC_ATTRIBUTE_PTX_VERSION) == 90); /* H200: sm_90 */
        CK(fattr(k, CU_FUNC_ATTRIBUTE_BINARY_VERSION) == 90);
        CK(fattr(k, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == 48 * 1024);
        CK(fattr(k, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) == -1);
        int v;
        CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX, k) == CUDA_ERROR_INVALID_VALUE);
        CK(cuFuncGetAttribute(NULL, CU_FUNC_ATTRIBUTE_NUM_REGS, k) == CUDA_ERROR_INVALID_VALUE);
        CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, (CUfunction)&v) ==
           CUDA_ERROR_INVALID_HANDLE);
        /* settable attributes, with the device's limits; read-only ones refused */
        int optin;
        CU(cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 0));
        CU(cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin));
        CK(fattr(k, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == optin);
        CK(cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin + 1) ==
           CUDA_ERROR_INVALID_VALUE);
        CK(fattr(k, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == optin);
        CK(cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_NUM_REGS, 64) == CUDA_ERROR_INVALID_VALUE);
        CU(cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50));
        CK(fattr(k, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) == 50);
        CK(cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 101) ==
           CUDA_ERROR_INVALID_VALUE);
        CU(cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 8));
        CK(cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 16) ==
           CUDA_ERROR_INVALID_VALUE);
        CU(cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
        CU(cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 16));
        CK(fattr(k, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH) == 16);
        /* attributes are per function */
        CU(cuModuleGetFunction(&f2, m, "k20ms"));
        CK(fattr(f2, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) == 48 * 1024);
        CU(cuFuncSetCacheConfig(k, CU_FUNC_CACHE_PREFER_L1));
        CK(cuFuncSetCacheConfig(k, (CUfunc_cache)4) == CUDA_ERROR_INVALID_VALUE);
        CU(cuFuncSetSharedMemConfig(k, CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE));
        CK(cuFuncSetSharedMemConfig(k, (CUsharedconfig)3) == CUDA_ERROR_INVALID_VALUE);
        /* names, modules, loading state, enumeration */
        CUmodule got;
        CU(cuFuncGetModule(&got, k));
        CK(got == m);
        const char *name;
        CU(cuFuncGetName(&name, f2));
        CK(!strcmp(name, "k20ms"));
        CUfunctionLoadingState ls;
        CU(cuFuncIsLoaded(&ls, k));
        CK(ls == CU_FUNCTION_LOADING_STATE_LOADED);
        CU(cuFuncLoad(k));
        CK(cuFuncLoad(NULL) == CUDA_ERROR_INVALID_HANDLE);
        unsigned n;
        CU(cuModuleGetFunctionCount(&n, m));
        CK(n == 3);
        CUfunction fs[4] = {0};
        CU(cuModuleEnumerateFunctions(fs, 4, m));
        CK(fs[0] == k && fs[1] == f2 && fs[2] != NULL && fs[3] == NULL);
        CU(cuFuncGetName(&name, fs[2]));
        CK(!strcmp(name, "kwave"));
        CK(cuModuleGetFunctionCount(&n, (CUmodule)&n) == CUDA_ERROR_INVALID_HANDLE);
        CUmoduleLoadingMode lm;
        unsetenv("CUDA_MODULE_LOADING");
        CU(cuModuleGetLoadingMode(&lm));
        CK(lm == CU_MODULE_LAZY_LOADING);
        setenv("CUDA_MODULE_LOADING", "EAGER", 1);
        CU(cuModuleGetLoadingMode(&lm));
        CK(lm == CU_MODULE_EAGER_LOADING);
        /* libraries: kernels, their attributes per device, their library */
        CUlibrary lib;
        CUkernel kk;
        CU(cuLibraryLoadData(&lib, fx_module, NULL, NULL, 0, NULL, NULL, 0));
        CU(cuLibraryGetKernelCount(&n, lib));
        CK(n == 3);
        CUkernel ks[3];
        CU(cuLibraryEnumerateKernels(ks, 3, lib));
        CU(cuLibraryGetKernel(&kk, lib, "kwave"));
        CK(ks[2] == kk);
        CU(cuKernelGetName(&name, kk));
        CK(!strcmp(name, "kwave"));
        CUlibrary back;
        CU(cuKernelGetLibrary(&back, kk));
        CK(back == lib);
        CK(cuKernelGetLibrary(&back, (CUkernel)k) == CUDA_ERROR_INVALID_HANDLE);
        CU(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 65536, kk, 0));
        CU(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, kk, 0));
        CK(v == 65536);
        CK(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, kk, 7) ==
           CUDA_ERROR_INVALID_DEVICE);
        CU(cuKernelSetCacheConfig(kk, CU_FUNC_CACHE_PREFER_SHARED, 0));
        CU(cuLibraryUnload(lib));
        CK(cuKernelGetName(&name, kk) == CUDA_ERROR_INVALID_HANDLE);
        CU(cuModuleUnload(m));
        CK(cuFuncGetName(&name, k) == CUDA_ERROR_INVALID_HANDLE);
        CU(cuCtxDestroy_v2(c));
}

static int b2d_calls;
static size_t b2d(int bs)
{
        b2d_calls++;
        return (size_t)bs * 64;
}

static void sc_occupancy(void)
{
        CU(cuInit(0));
        fx_ctx_on(0);
        CUmodule m;
        CUfunction k;
        CU(cuModuleLoadData(&m, fx_module));
        CU(cuModuleGetFunction(&k, m, "k500"));
        int nb;
        /* H200: 2048 threads, 32 blocks, 64K registers (32 per thread), 228 KiB smem per SM */
        CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k, 256, 0));
        CK(nb == 8);
        CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k, 1024, 0));
        CK(nb == 2);
        CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k, 32, 0));
        CK(nb == 32);
        CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k, 2048, 0));
        CK(nb == 0);
        CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k, 0, 0) == CUDA_ERROR_INVALID_VALUE);
        /* more dynamic shared memory than the function allows: nothing fits */
        CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k, 256, 100 * 1024));
        CK(nb == 0);
        CU(cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 200 * 1024));
        CU(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&nb, k, 256, 100 * 1024, 1));
        CK(nb == 2); /* 233472 / (102400 + 1024) */
        CK(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&nb, k, 256, 0, 2) ==
           CUDA_ERROR_INVALID_VALUE);
        int grid, bs;
        CU(cuOccupancyMaxPotentialBlockSize(&grid, &bs, k, NULL, 0, 0));
        CK(bs == 1024 && grid == 2 * 132);
        CU(cuOccupancyMaxPotentialBlockSize(&grid, &bs, k, NULL, 0, 200));
        CK(bs == 128 && grid == 16 * 132);
        CU(cuOccupancyMaxPotentialBlockSizeWithFlags(&grid, &bs, k, b2d, 0, 0, 0));
        CK(b2d_calls == 32 && bs > 0 && grid > 0);
        CK(cuOccupancyMaxPotentialBlockSize(NULL, &bs, k, NULL, 0, 0) == CUDA_ERROR_INVALID_VALUE);
        size_t smem;
        CU(cuOccupancyAvailableDynamicSMemPerBlock(&smem, k, 2, 256));
        CK(smem == 233472 / 2 - 1024);
        CU(cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 48 * 1024));
        CU(cuOccupancyAvailableDynamicSMemPerBlock(&smem, k, 2, 256));
        CK(smem == 48 * 1024);
        CU(cuOccupancyAvailableDynamicSMemPerBlock(&smem, k, 9, 256));
        CK(smem == 0); /* 9 blocks of 256 threads never fit */
        /* launches above 48 KiB of dynamic shared memory need the function's opt-in */
        CK(cuLaunchKernel(k, 1, 1, 1, 32, 1, 1, 64 * 1024, NULL, NULL, NULL) ==
           CUDA_ERROR_INVALID_VALUE);
        CU(cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024));
        CU(cuLaunchKernel(k, 1, 1, 1, 32, 1, 1, 64 * 1024, NULL, NULL, NULL));
        CU(cuCtxSynchronize());
        /* clusters: 8 GPCs of 16 SMs on 132 SMs, 8 blocks of 256 threads per SM */
        CUlaunchAttribute at = {.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
        at.value.clusterDim.x = 2;
        at.value.clusterDim.y = 1;
        at.value.clusterDim.z = 1;
        CUlaunchConfig lc = {.gridDimX = 64,
                             .gridDimY = 1,
                             .gridDimZ = 1,
                             .blockDimX = 256,
                             .blockDimY = 1,
                             .blockDimZ = 1,
                             .attrs = &at,
                             .numAttrs = 1};
        int ncl, csz;
        CU(cuOccupancyMaxActiveClusters(&ncl, k, &lc));
        CK(ncl == 8 * (8 * 16 / 2));
        at.value.clusterDim.x = 16;
        CK(cuOccupancyMaxActiveClusters(&ncl, k, &lc) == CUDA_ERROR_INVALID_CLUSTER_SIZE);
        lc.numAttrs = 0;
        CK(cuOccupancyMaxActiveClusters(&ncl, k, &lc) == CUDA_ERROR_INVALID_CLUSTER_SIZE);
        CU(cuOccupancyMaxPotentialClusterSize(&csz, k, &lc));
        CK(csz == 8);
        CU(cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
        CU(cuOccupancyMaxPotentialClusterSize(&csz, k, &lc));
        CK(csz == 16);
        CU(cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 4));
        CU(cuOccupancyMaxPotentialClusterSize(&csz, k, &lc));
        CK(csz == 4);
        CU(cuOccupancyMaxActiveClusters(&ncl, k, &lc)); /* the required size applies */
        CK(ncl == 8 * (8 * 16 / 4));
        CK(cuOccupancyMaxActiveClusters(&ncl, k, NULL) == CUDA_ERROR_INVALID_VALUE);
}

/* Clusters need sm_90: an A100 refuses the cluster occupancy queries. */
static void sc_clusters_ampere(void)
{
        CU(cuInit(0));
        fx_ctx_on(0);
        CUmodule m;
        CUfunction k;
        CU(cuModuleLoadData(&m, fx_module));
        CU(cuModuleGetFunction(&k, m, "k500"));
        CUlaunchConfig lc = {.gridDimX = 1,
                             .gridDimY = 1,
                             .gridDimZ = 1,
                             .blockDimX = 32,
                             .blockDimY = 1,
                             .blockDimZ = 1};
        int v;
        CK(cuOccupancyMaxActiveClusters(&v, k, &lc) == CUDA_ERROR_NOT_SUPPORTED);
        CK(cuFuncSetAttribute(k, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, 2) ==
           CUDA_ERROR_NOT_SUPPORTED);
        CK(fattr(k, CU_FUNC_ATTRIBUTE_PTX_VERSION) == 80);
        CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&v, k, 1024, 0));
        CK(v == 2);
}

/* ---- module globals ---- */

static const char glob_module[] = "KERFSIM-MODULE 1\n"
                                  "kernel k cost_us=10\n"
                                  "global counters bytes=4096\n"
                                  "global table bytes=3000000\n";

static void sc_globals(void)
{
        CU(cuInit(0));
        CUcontext c = fx_ctx_on(0);
        uint64_t before = fx_used_now();
        CUmodule m;
        CU(cuModuleLoadData(&m, glob_module));
        CK(fx_used_now() - before == (2ULL + 4ULL)
                                         << 20); /* each global charged, rounded to 2 MiB */
        CUdeviceptr p, q;
        size_t sz;
        CU(cuModuleGetGlobal_v2(&p, &sz, m, "counters"));
        CK(p && sz == 4096);
        CU(cuModuleGetGlobal_v2(&q, NULL, m, "table"));
        CU(cuModuleGetGlobal_v2(NULL, &sz, m, "table"));
        CK(q && q != p && sz == 3000000);
        CK(cuModuleGetGlobal_v2(&p, &sz, m, "nope") == CUDA_ERROR_NOT_FOUND);
        CK(cuModuleGetGlobal_v2(&p, &sz, m, NULL) == CUDA_ERROR_INVALID_VALUE);
        unsigned char buf[4096];
        memset(buf, 0xee, sizeof(buf));
        CU(cuMemcpyDtoH_v2(buf, p, sizeof(buf)));
        for (size_t i = 0; i < sizeof(buf); i++)
                CK(buf[i] == 0); /* globals start zeroed */
        CU(cuMemsetD32_v2(p, 7, 1024));
        CU(cuModuleUnload(m));
        CK(fx_used_now() == before);
        /* malformed global lines */
        static const char *bad[] = {
            "KERFSIM-MODULE 1\nkernel k cost_us=1\nglobal g bytes=0\n",
            "KERFSIM-MODULE 1\nkernel k cost_us=1\nglobal g\n",
            "KERFSIM-MODULE 1\nkernel k cost_us=1\nglobal g bytes=8 extra\n",
            "KERFSIM-MODULE 1\nkernel k cost_us=1\nglobal g bytes=8\nglobal g bytes=8\n",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                CK(cuModuleLoadData(&m, bad[i]) == CUDA_ERROR_INVALID_IMAGE);
        CK(fx_used_now() == before);
        /* libraries give their globals too */
        CUlibrary lib;
        CU(cuLibraryLoadData(&lib, glob_module, NULL, NULL, 0, NULL, NULL, 0));
        CU(cuLibraryGetGlobal(&p, &sz, lib, "counters"));
        CK(p && sz == 4096);
        CU(cuLibraryUnload(lib));
        CK(fx_used_now() == before);
        /* a module outliving its context does not free memory it no longer owns */
        CU(cuModuleLoadData(&m, glob_module));
        CU(cuCtxDestroy_v2(c));
        c = fx_ctx_on(0);
        CU(cuMemAlloc_v2(&q, 1 << 20));
        CU(cuModuleUnload(m));
        CK(cuMemsetD8_v2(q, 1, 1 << 20) == CUDA_SUCCESS);
        CU(cuMemFree_v2(q));
}

/* ---- linking ---- */

static void sc_link(void)
{
        CUlinkState ls;
        CK(cuLinkCreate_v2(0, NULL, NULL, &ls) == CUDA_ERROR_NOT_INITIALIZED);
        CU(cuInit(0));
        fx_ctx_on(0);
        CK(cuLinkCreate_v2(1, NULL, NULL, &ls) == CUDA_ERROR_INVALID_VALUE);
        CU(cuLinkCreate_v2(0, NULL, NULL, &ls));
        void *out;
        size_t outsz;
        CK(cuLinkComplete(ls, &out, &outsz) == CUDA_ERROR_INVALID_IMAGE); /* nothing added */
        CU(cuLinkAddData_v2(ls, CU_JIT_INPUT_CUBIN, (void *)fx_module, strlen(fx_module), "a", 0,
                            NULL, NULL));
        static const char second[] = "KERFSIM-MODULE 1\nkernel kx cost_us=5\nglobal g bytes=8";
        CU(cuLinkAddData_v2(ls, CU_JIT_INPUT_FATBINARY, (void *)second, sizeof(second), "b", 0,
                            NULL, NULL));
        static const char ptx[] = ".version 8.0\n.target sm_90\n";
        CK(cuLinkAddData_v2(ls, CU_JIT_INPUT_PTX, (void *)ptx, sizeof(ptx), "c", 0, NULL, NULL) ==
           CUDA_ERROR_INVALID_PTX);
        CK(cuLinkAddData_v2(ls, CU_JIT_INPUT_CUBIN, (void *)ptx, sizeof(ptx), "c", 0, NULL, NULL) ==
           CUDA_ERROR_INVALID_IMAGE);
        CK(cuLinkAddData_v2(ls, CU_JIT_NUM_INPUT_TYPES, (void *)second, sizeof(second), "c", 0,
                            NULL, NULL) == CUDA_ERROR_INVALID_VALUE);
        CK(cuLinkAddData_v2(ls, CU_JIT_INPUT_CUBIN, NULL, 4, "c", 0, NULL, NULL) ==
           CUDA_ERROR_INVALID_VALUE);
        char path[] = "/tmp/kerf-link-XXXXXX";
        int fd = mkstemp(path);
        CK(fd >= 0);
        static const char third[] = "KERFSIM-MODULE 1\nkernel kfile cost_us=1\n";
        CK(write(fd, third, strlen(third)) == (ssize_t)strlen(third));
        close(fd);
        CU(cuLinkAddFile_v2(ls, CU_JIT_INPUT_OBJECT, path, 0, NULL, NULL));
        CUlibrary lib;
        CUkernel kf;
        CU(cuLibraryLoadFromFile(&lib, path, NULL, NULL, 0, NULL, NULL, 0));
        CU(cuLibraryGetKernel(&kf, lib, "kfile"));
        CU(cuLibraryUnload(lib));
        unlink(path);
        CK(cuLibraryLoadFromFile(&lib, path, NULL, NULL, 0, NULL, NULL, 0) ==
           CUDA_ERROR_FILE_NOT_FOUND);
        CK(cuLinkAddFile_v2(ls, CU_JIT_INPUT_OBJECT, path, 0, NULL, NULL) ==
           CUDA_ERROR_FILE_NOT_FOUND);
        CU(cuLinkComplete(ls, &out, &outsz));
        CK(outsz == strlen(out) + 1);
        CUmodule m;
        CUfunction f;
        CU(cuModuleLoadData(&m, out));
        CU(cuModuleGetFunction(&f, m, "k500"));
        CU(cuModuleGetFunction(&f, m, "kx"));
        CU(cuModuleGetFunction(&f, m, "kfile"));
        CU(cuModuleGetGlobal_v2(NULL, NULL, m, "g"));
        unsigned n;
        CU(cuModuleGetFunctionCount(&n, m));
        CK(n == 5);
        CU(cuLinkDestroy(ls));
        CK(cuLinkDestroy(ls) == CUDA_ERROR_INVALID_HANDLE);
        CK(cuLinkAddData_v2(ls, CU_JIT_INPUT_CUBIN, (void *)second, sizeof(second), "b", 0, NULL,
                            NULL) == CUDA_ERROR_INVALID_HANDLE);
        /* the pre-6.5 names */
        CU(cuLinkCreate(0, NULL, NULL, &ls));
        CU(cuLinkAddData(ls, CU_JIT_INPUT_CUBIN, (void *)second, sizeof(second), "b", 0, NULL,
                         NULL));
        CU(cuLinkComplete(ls, &out, &outsz));
        CU(cuLinkDestroy(ls));
}

/* ---- contexts and devices ---- */

static void sc_ctx_misc(void)
{
        size_t v;
        CU(cuInit(0));
        CK(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE) == CUDA_ERROR_INVALID_CONTEXT);
        CK(cuProfilerStart() == CUDA_ERROR_INVALID_CONTEXT);
        CUcontext c0 = fx_ctx_on(0);
        CU(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
        CK(v == 1024);
        CU(cuCtxGetLimit(&v, CU_LIMIT_MALLOC_HEAP_SIZE));
        CK(v == 8 << 20);
        CU(cuCtxGetLimit(&v, CU_LIMIT_PRINTF_FIFO_SIZE));
        CK(v == 1 << 20);
        CU(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 4001));
        CU(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
        CK(v == 4016);
        CU(cuCtxSetLimit(CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 100));
        CU(cuCtxGetLimit(&v, CU_LIMIT_MAX_L2_FETCH_GRANULARITY));
        CK(v == 64);
        CU(cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, SIZE_MAX));
        CU(cuCtxGetLimit(&v, CU_LIMIT_PERSISTING_L2_CACHE_SIZE));
        CK(v == 50331648 / 4 * 3);
        CK(cuCtxGetLimit(&v, CU_LIMIT_SHMEM_SIZE) == CUDA_ERROR_UNSUPPORTED_LIMIT);
        CK(cuCtxSetLimit(CU_LIMIT_CIG_ENABLED, 1) == CUDA_ERROR_UNSUPPORTED_LIMIT);
        CK(cuCtxGetLimit(&v, CU_LIMIT_MAX) == CUDA_ERROR_INVALID_VALUE);
        CK(cuCtxGetLimit(NULL, CU_LIMIT_STACK_SIZE) == CUDA_ERROR_INVALID_VALUE);
        /* limits belong to the context */
        CUcontext c1 = fx_ctx_on(1);
        CU(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
        CK(v == 1024);
        int lo = 99, hi = 99;
        CU(cuCtxGetStreamPriorityRange(&lo, &hi));
        CK(lo == 0 && hi == -5);
        CU(cuCtxGetStreamPriorityRange(NULL, &hi));
        CU(cuCtxGetStreamPriorityRange(NULL, NULL));
        CUfunc_cache cc;
        CU(cuCtxGetCacheConfig(&cc));
        CK(cc == CU_FUNC_CACHE_PREFER_NONE);
        CU(cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_L1));
        CU(cuCtxGetCacheConfig(&cc));
        CK(cc == CU_FUNC_CACHE_PREFER_L1);
        CK(cuCtxSetCacheConfig((CUfunc_cache)9) == CUDA_ERROR_INVALID_VALUE);
        CUsharedconfig sc;
        CU(cuCtxSetSharedMemConfig(CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE));
        CU(cuCtxGetSharedMemConfig(&sc));
        CK(sc == CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE);
        /* ids: distinct, stable, never reused */
        unsigned long long id0, id1, idc, id2;
        CU(cuCtxGetId(c0, &id0));
        CU(cuCtxGetId(c1, &id1));
        CU(cuCtxGetId(NULL, &idc));
        CK(id0 && id1 && id0 != id1 && idc == id1);
        CU(cuCtxGetId(c0, &idc));
        CK(idc == id0);
        CU(cuCtxDestroy_v2(c1));
        CK(cuCtxGetId(c1, &idc) == CUDA_ERROR_INVALID_CONTEXT);
        CUcontext c2 = fx_ctx_on(1);
        CU(cuCtxGetId(c2, &id2));
        CK(id2 != id0 && id2 != id1);
        CU(cuCtxGetLimit(&v, CU_LIMIT_STACK_SIZE));
        CK(v == 1024); /* even if the record reuses c1's address */
        /* flags */
        unsigned fl;
        CU(cuCtxSetFlags(CU_CTX_SCHED_BLOCKING_SYNC | CU_CTX_SYNC_MEMOPS));
        CU(cuCtxGetFlags(&fl));
        CK((fl & CU_CTX_SCHED_MASK) == CU_CTX_SCHED_BLOCKING_SYNC && (fl & CU_CTX_SYNC_MEMOPS));
        CK(cuCtxSetFlags(CU_CTX_LMEM_RESIZE_TO_MAX) == CUDA_ERROR_INVALID_VALUE);
        CK(cuCtxSetFlags(3) == CUDA_ERROR_INVALID_VALUE);
        CU(cuCtxResetPersistingL2Cache());
        CUexecAffinityParam ap;
        CU(cuCtxGetExecAffinity(&ap, CU_EXEC_AFFINITY_TYPE_SM_COUNT));
        CK(ap.type == CU_EXEC_AFFINITY_TYPE_SM_COUNT && ap.param.smCount.val == 132);
        CK(cuCtxGetExecAffinity(&ap, CU_EXEC_AFFINITY_TYPE_MAX) ==
           CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY);
        int iv = 7;
        CU(cuDeviceGetExecAffinitySupport(&iv, CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0));
        CK(iv == 0);
        /* peers: never accessible, consistently with cuDeviceCanAccessPeer */
        CU(cuDeviceCanAccessPeer(&iv, 1, 0));
        CK(iv == 0);
        CK(cuCtxEnablePeerAccess(c0, 0) == CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
        CK(cuCtxEnablePeerAccess(c0, 1) == CUDA_ERROR_INVALID_VALUE);
        CK(cuCtxEnablePeerAccess(c2, 0) == CUDA_ERROR_INVALID_DEVICE);
        CK(cuCtxEnablePeerAccess(c1, 0) == CUDA_ERROR_INVALID_CONTEXT);
        CK(cuCtxDisablePeerAccess(c0) == CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
        iv = 7;
        CU(cuDeviceGetP2PAttribute(&iv, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1));
        CK(iv == 0);
        CK(cuDeviceGetP2PAttribute(&iv, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 1, 1) ==
           CUDA_ERROR_INVALID_DEVICE);
        CK(cuDeviceGetP2PAttribute(&iv, (CUdevice_P2PAttribute)9, 0, 1) ==
           CUDA_ERROR_INVALID_VALUE);
        char luid[8];
        unsigned mask;
        CK(cuDeviceGetLuid(luid, &mask, 0) == CUDA_ERROR_NOT_SUPPORTED);
        CK(cuDeviceGetLuid(luid, &mask, 5) == CUDA_ERROR_INVALID_DEVICE);
        /* PCI bus ids round-trip, in either form and any case */
        char bus[32];
        CUdevice d;
        CU(cuDeviceGetPCIBusId(bus, sizeof(bus), 1));
        CU(cuDeviceGetByPCIBusId(&d, bus));
        CK(d == 1);
        for (char *p = bus; *p; p++)
                if (*p >= 'A' && *p <= 'F')
                        *p = (char)(*p - 'A' + 'a');
        CU(cuDeviceGetByPCIBusId(&d, bus));
        CK(d == 1);
        CU(cuDeviceGetByPCIBusId(&d, strchr(bus, ':') + 1)); /* without the domain */
        CK(d == 1);
        CK(cuDeviceGetByPCIBusId(&d, "0000:7f:00.0") == CUDA_ERROR_INVALID_DEVICE);
        CK(cuDeviceGetByPCIBusId(&d, "gpu0") == CUDA_ERROR_INVALID_VALUE);
        int maj, min;
        CU(cuDeviceComputeCapability(&maj, &min, 0));
        CK(maj == 9 && min == 0);
        CUdevprop prop;
        CU(cuDeviceGetProperties(&prop, 0));
        CK(prop.maxThreadsPerBlock == 1024 && prop.SIMDWidth == 32 && prop.maxThreadsDim[2] == 64 &&
           prop.maxGridSize[1] == 65535 && prop.sharedMemPerBlock == 48 * 1024);
        /* the current pool of a device */
        CUmemoryPool pool, cur, def;
        CUmemPoolProps pp = {0};
        pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        pp.location.id = 0;
        CU(cuMemPoolCreate(&pool, &pp));
        CU(cuDeviceGetDefaultMemPool(&def, 0));
        CU(cuDeviceSetMemPool(0, pool));
        CU(cuDeviceGetMemPool(&cur, 0));
        CK(cur == pool && cur != def);
        CK(cuDeviceSetMemPool(1, pool) == CUDA_ERROR_INVALID_DEVICE);
        CK(cuDeviceSetMemPool(0, (CUmemoryPool)&cur) == CUDA_ERROR_INVALID_VALUE);
        CK(cuDeviceSetMemPool(9, pool) == CUDA_ERROR_INVALID_DEVICE);
        CU(cuMemPoolDestroy(pool));
        CU(cuDeviceGetMemPool(&cur, 0));
        CK(cur == def);
        CK(cuDeviceSetMemPool(0, pool) == CUDA_ERROR_INVALID_VALUE);
        CU(cuProfilerStart());
        CU(cuProfilerStop());
        const void *tbl = &tbl;
        CUuuid id = {{0}};
        CK(cuGetExportTable(&tbl, &id) == CUDA_ERROR_INVALID_VALUE);
        CK(tbl == &tbl);
        const char *s;
        CU(cuGetErrorName(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, &s));
        CK(!strcmp(s, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"));
        CU(cuGetErrorName(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, &s));
        CK(!strcmp(s, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"));
}

/* ---- cuGetProcAddress rows of the new entry points ---- */

static void *sym(const char *n)
{
        void *p = dlsym(RTLD_DEFAULT, n);
        CK(p);
        return p;
}

static void *proc(const char *n, int ver, cuuint64_t fl)
{
        void *fn = NULL;
        CUdriverProcAddressQueryResult st;
        CU(cuGetProcAddress_v2(n, &fn, ver, fl, &st));
        CK(st == CU_GET_PROC_ADDRESS_SUCCESS && fn);
        return fn;
}

static void sc_procaddr2(void)
{
        CU(cuInit(0));
        const cuuint64_t PTF = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
        /* newest version, legacy and per-thread flavours */
        static const struct {
                const char *name, *legacy, *per_thread;
        } rows[] = {
            {"cuFuncGetAttribute", "cuFuncGetAttribute", "cuFuncGetAttribute"},
            {"cuModuleGetGlobal", "cuModuleGetGlobal_v2", "cuModuleGetGlobal_v2"},
            {"cuLinkCreate", "cuLinkCreate_v2", "cuLinkCreate_v2"},
            {"cuMemHostRegister", "cuMemHostRegister_v2", "cuMemHostRegister_v2"},
            {"cuMemHostGetDevicePointer", "cuMemHostGetDevicePointer_v2",
             "cuMemHostGetDevicePointer_v2"},
            {"cuMemsetD16", "cuMemsetD16_v2", "cuMemsetD16_v2_ptds"},
            {"cuMemsetD2D32Async", "cuMemsetD2D32Async", "cuMemsetD2D32Async_ptsz"},
            {"cuMemcpy3D", "cuMemcpy3D_v2", "cuMemcpy3D_v2_ptds"},
            {"cuMemcpy3DPeerAsync", "cuMemcpy3DPeerAsync", "cuMemcpy3DPeerAsync_ptsz"},
            {"cuMemcpyPeer", "cuMemcpyPeer", "cuMemcpyPeer_ptds"},
            {"cuMemAdvise", "cuMemAdvise_v2", "cuMemAdvise_v2"},
            {"cuMemPrefetchAsync", "cuMemPrefetchAsync_v2", "cuMemPrefetchAsync_v2_ptsz"},
            {"cuStreamGetCaptureInfo", "cuStreamGetCaptureInfo_v3",
             "cuStreamGetCaptureInfo_v3_ptsz"},
            {"cuStreamGetCtx", "cuStreamGetCtx_v2", "cuStreamGetCtx_v2_ptsz"},
            {"cuStreamGetPriority", "cuStreamGetPriority", "cuStreamGetPriority_ptsz"},
            {"cuStreamAddCallback", "cuStreamAddCallback", "cuStreamAddCallback_ptsz"},
            {"cuPointerGetAttributes", "cuPointerGetAttributes", "cuPointerGetAttributes"},
            {"cuCtxGetLimit", "cuCtxGetLimit", "cuCtxGetLimit"},
            {"cuGetExportTable", "cuGetExportTable", "cuGetExportTable"},
            {"cuGraphUpload", "cuGraphUpload", "cuGraphUpload_ptsz"},
            {"cuDeviceSetMemPool", "cuDeviceSetMemPool", "cuDeviceSetMemPool"},
            {"cuOccupancyMaxActiveClusters", "cuOccupancyMaxActiveClusters",
             "cuOccupancyMaxActiveClusters"},
        };
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                if (proc(rows[i].name, 13000, 0) != sym(rows[i].legacy) ||
                    proc(rows[i].name, 13000, PTF) != sym(rows[i].per_thread)) {
                        fprintf(stderr, "procaddr row %s\n", rows[i].name);
                        exit(1);
                }
        }
        /* older callers get the older versions */
        CK(proc("cuStreamGetCaptureInfo", 11030, 0) == sym("cuStreamGetCaptureInfo_v2"));
        CK(proc("cuStreamGetCaptureInfo", 11020, PTF) == sym("cuStreamGetCaptureInfo_ptsz"));
        CK(proc("cuMemAdvise", 12000, 0) == sym("cuMemAdvise"));
        CK(proc("cuMemPrefetchAsync", 12000, PTF) == sym("cuMemPrefetchAsync_ptsz"));
        CK(proc("cuLinkCreate", 6000, 0) == sym("cuLinkCreate"));
        CK(proc("cuStreamGetCtx", 12000, PTF) == sym("cuStreamGetCtx_ptsz"));
        CK(proc("cuMemsetD16", 6050, PTF) == sym("cuMemsetD16_v2"));
        void *fn;
        CUdriverProcAddressQueryResult st;
        CK(cuGetProcAddress_v2("cuFuncGetName", &fn, 12020, 0, &st) == CUDA_ERROR_NOT_FOUND);
        CK(st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
}

FX_SCEN(sc_funcattr, "H200", 1, false, "virtual")
FX_SCEN(sc_occupancy, "H200", 1, false, "virtual")
FX_SCEN(sc_clusters_ampere, "A100-80GB", 1, false, "virtual")
FX_SCEN(sc_globals, "H200", 1, false, "virtual")
FX_SCEN(sc_link, "H200", 1, false, "virtual")
FX_SCEN(sc_ctx_misc, "H200", 2, false, "virtual")
FX_SCEN(sc_procaddr2, "H200", 1, false, "virtual")

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(t_sc_funcattr),
            cmocka_unit_test(t_sc_occupancy),
            cmocka_unit_test(t_sc_clusters_ampere),
            cmocka_unit_test(t_sc_globals),
            cmocka_unit_test(t_sc_link),
            cmocka_unit_test(t_sc_ctx_misc),
            cmocka_unit_test(t_sc_procaddr2),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
