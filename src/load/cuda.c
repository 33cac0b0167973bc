/* SPDX-License-Identifier: Apache-2.0 */
/* cuda.c - kerf-load's driver: libcuda.so.1 at run time, spin kernels, error lines */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "load.h"

kl_fns kl_cu;

/*
 * The spin kernel on hardware: spin(u64 ns) busy-waits on %globaltimer (wall-clock ns) for
 * `ns`; compiled by the driver at cuModuleLoadData, so no toolkit is needed at run time.
 * %globaltimer keeps running while the context is switched out, so a kernel that is time-
 * sliced with a neighbour ends `ns` after it started, whatever share it got meanwhile.
 */
static const char ptx_text[] = ".version 6.0\n"
                               ".target sm_50\n"
                               ".address_size 64\n"
                               "\n"
                               ".visible .entry spin(.param .u64 ns)\n"
                               "{\n"
                               "        .reg .pred %p;\n"
                               "        .reg .u64 %rd<5>;\n"
                               "        ld.param.u64 %rd1, [ns];\n"
                               "        mov.u64 %rd2, %globaltimer;\n"
                               "LOOP:\n"
                               "        mov.u64 %rd3, %globaltimer;\n"
                               "        sub.u64 %rd4, %rd3, %rd2;\n"
                               "        setp.lt.u64 %p, %rd4, %rd1;\n"
                               "        @%p bra LOOP;\n"
                               "        ret;\n"
                               "}\n";

const char *kl_spin_ptx(void)
{
        return ptx_text;
}

const char *kl_cuda_errname(CUresult r)
{
        const char *s = NULL;
        if (kl_cu.cuGetErrorName && kl_cu.cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
                return s;
        static char b[32];
        snprintf(b, sizeof(b), "CUresult_%d", (int)r);
        return b;
}

void kl_cuda_error(const char *call, CUresult r)
{
        kl_line l;
        kl_line_begin(&l, "error");
        kl_line_dbl(&l, "t_ms", kl_t_ms());
        kl_line_str(&l, "call", call);
        kl_line_str(&l, "error", kl_cuda_errname(r));
        kl_line_i64(&l, "code", (int64_t)r);
        kl_line_end(&l);
}

/* Resolves every entry point: cuGetProcAddress_v2 as the CUDA runtime does (so that the shim's
 * lookup path is the one exercised), plain dlsym of the versioned name where it is missing. */
static int load_driver(kl_gpu *g)
{
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
        if (!h) {
                fprintf(stderr,
                        "kerf-load: cannot load libcuda.so.1 (no NVIDIA driver here?): %s\n",
                        dlerror());
                return -1;
        }
        CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
            (CUresult(*)(const char *, void **, int, cuuint64_t,
                         CUdriverProcAddressQueryResult *))dlsym(h, "cuGetProcAddress_v2");
        g->procaddr = gpa ? "cuGetProcAddress_v2" : "dlsym";
        static const struct {
                const char *name, *versioned;
                size_t off;
        } tab[] = {
#define E(n, v) {#n, #v, offsetof(kl_fns, n)}
            E(cuInit, cuInit),
            E(cuDriverGetVersion, cuDriverGetVersion),
            E(cuDeviceGet, cuDeviceGet),
            E(cuDeviceGetAttribute, cuDeviceGetAttribute),
            E(cuDeviceGetName, cuDeviceGetName),
            E(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain),
            E(cuCtxSetCurrent, cuCtxSetCurrent),
            E(cuModuleLoadData, cuModuleLoadData),
            E(cuModuleGetFunction, cuModuleGetFunction),
            E(cuLaunchKernel, cuLaunchKernel),
            E(cuStreamCreate, cuStreamCreate),
            E(cuStreamSynchronize, cuStreamSynchronize),
            E(cuEventCreate, cuEventCreate),
            E(cuEventRecord, cuEventRecord),
            E(cuEventSynchronize, cuEventSynchronize),
            E(cuEventElapsedTime, cuEventElapsedTime),
            E(cuMemAlloc, cuMemAlloc_v2),
            E(cuMemFree, cuMemFree_v2),
            E(cuMemGetInfo, cuMemGetInfo_v2),
            E(cuGetErrorName, cuGetErrorName),
#undef E
        };
        for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
                void *f = NULL;
                CUdriverProcAddressQueryResult st;
                if (!gpa || gpa(tab[i].name, &f, 12000, 0, &st) != CUDA_SUCCESS)
                        f = dlsym(h, tab[i].versioned);
                if (!f) {
                        fprintf(stderr, "kerf-load: libcuda.so.1 has no %s\n", tab[i].versioned);
                        return -1;
                }
                memcpy((char *)&kl_cu + tab[i].off, &f, sizeof(f));
        }
        return 0;
}

#define CK(call, what)                                                                             \
        do {                                                                                       \
                CUresult r_ = (call);                                                              \
                if (r_ != CUDA_SUCCESS) {                                                          \
                        kl_cuda_error(what, r_);                                                   \
                        return -1;                                                                 \
                }                                                                                  \
        } while (0)

/* Spin kernels: one simulated module per duration (the format has a fixed cost per kernel),
 * one PTX module for all (the duration is the parameter). */
enum { MAXK = 32 };
static struct {
        uint64_t us;
        CUfunction f;
} kern[MAXK];
static unsigned nkern;
static CUfunction ptx_fn;

/* Loads the simulated module for `us`; *r = the driver's answer. */
static CUresult load_sim(uint64_t us, CUfunction *f)
{
        char img[160];
        snprintf(img, sizeof(img),
                 "KERFSIM-MODULE 1\n# kerf-load spin kernel\nkernel spin cost_us=%llu\n",
                 (unsigned long long)us);
        CUmodule m;
        CUresult r = kl_cu.cuModuleLoadData(&m, img);
        if (r == CUDA_SUCCESS)
                r = kl_cu.cuModuleGetFunction(f, m, "spin");
        return r;
}

static CUresult load_ptx(void)
{
        CUmodule m;
        CUresult r = kl_cu.cuModuleLoadData(&m, ptx_text);
        if (r == CUDA_SUCCESS)
                r = kl_cu.cuModuleGetFunction(&ptx_fn, m, "spin");
        return r;
}

/* Decides the kernel kind once: the simulated format first; a driver that refuses it as an
 * image (INVALID_IMAGE, INVALID_PTX, NO_BINARY_FOR_GPU: a real driver reads the text as PTX)
 * gets the PTX kernel. Any other answer is a CUDA failure. */
static int pick_kernels(kl_gpu *g)
{
        CUfunction f;
        CUresult r = load_sim(1000, &f);
        if (r == CUDA_SUCCESS) {
                kern[nkern].us = 1000;
                kern[nkern++].f = f;
                g->ptx = false;
                return 0;
        }
        if (r != CUDA_ERROR_INVALID_IMAGE && r != CUDA_ERROR_INVALID_PTX &&
            r != CUDA_ERROR_NO_BINARY_FOR_GPU) {
                kl_cuda_error("cuModuleLoadData(KERFSIM-MODULE)", r);
                return -1;
        }
        CK(load_ptx(), "cuModuleLoadData(PTX)");
        g->ptx = true;
        return 0;
}

int kl_cuda_open(int device, kl_gpu *g)
{
        memset(g, 0, sizeof(*g));
        if (load_driver(g) < 0)
                return -1;
        CK(kl_cu.cuInit(0), "cuInit");
        CK(kl_cu.cuDriverGetVersion(&g->driver_version), "cuDriverGetVersion");
        CK(kl_cu.cuDeviceGet(&g->dev, device), "cuDeviceGet");
        CK(kl_cu.cuDeviceGetName(g->name, (int)sizeof(g->name), g->dev), "cuDeviceGetName");
        if (kl_cu.cuDeviceGetAttribute(&g->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, g->dev) !=
                CUDA_SUCCESS ||
            g->sms <= 0)
                g->sms = 1;
        CK(kl_cu.cuDevicePrimaryCtxRetain(&g->ctx, g->dev), "cuDevicePrimaryCtxRetain");
        CK(kl_cu.cuCtxSetCurrent(g->ctx), "cuCtxSetCurrent");
        CK(kl_cu.cuStreamCreate(&g->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        CK(kl_cu.cuMemGetInfo(&g->mem_free, &g->mem_total), "cuMemGetInfo");
        return pick_kernels(g);
}

CUresult kl_spin(kl_gpu *g, CUstream stream, uint64_t us, const char **call)
{
        *call = "cuLaunchKernel";
        if (g->ptx) {
                uint64_t ns = us * 1000;
                void *args[] = {&ns};
                return kl_cu.cuLaunchKernel(ptx_fn, (unsigned)g->sms, 1, 1, 32, 1, 1, 0, stream,
                                            args, NULL);
        }
        CUfunction f = NULL;
        for (unsigned i = 0; i < nkern; i++)
                if (kern[i].us == us)
                        f = kern[i].f;
        if (!f) {
                if (nkern == MAXK) { /* not reached: each mode uses one or two durations */
                        *call = "spin kernel cache";
                        return CUDA_ERROR_INVALID_VALUE;
                }
                CUresult r = load_sim(us, &f);
                if (r != CUDA_SUCCESS) {
                        *call = "cuModuleLoadData(KERFSIM-MODULE)";
                        return r;
                }
                kern[nkern].us = us;
                kern[nkern++].f = f;
        }
        return kl_cu.cuLaunchKernel(f, (unsigned)g->sms, 1, 1, 32, 1, 1, 0, stream, NULL, NULL);
}

int kl_hold_mem(const kl_opts *o, CUdeviceptr *ret)
{
        *ret = 0;
        if (!o->mem)
                return 0;
        CK(kl_cu.cuMemAlloc(ret, o->mem), "cuMemAlloc(--mem)");
        return 0;
}
