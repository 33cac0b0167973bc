/* SPDX-License-Identifier: Apache-2.0 */
/* spin.c - driver-API probe for tests/gpu/run.sh: memory cap, compute share, launch cost */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_abi.h"
#include "nvml_abi.h"

/*
 *   spin [--image FILE] info
 *   spin [--image FILE] memcap [--chunk-mib N]
 *   spin [--image FILE] calibrate [--kernel-us K]
 *   spin [--image FILE] share --seconds S [--kernel-us K --cycles C] [--warmup-ms W] [--depth D]
 *   spin [--image FILE] launch [--n N]
 *   spin ptx                  (prints the PTX, for ptxas in ctest)
 *
 * Loads libcuda.so.1 with dlopen and resolves every entry point with cuGetProcAddress_v2 (as
 * the CUDA runtime does; plain dlsym on drivers older than 12.0), so that the same binary runs
 * on the real driver and, with LD_LIBRARY_PATH=<build>/lib, on the simulated one, with or
 * without LD_PRELOAD=libkerf-cuda.so. The kernels are PTX text compiled by the driver at
 * cuModuleLoadData (no nvcc at run time): `spin(u64 cycles)` busy-waits on clock64 for
 * `cycles` SM clocks, `empty()` returns. --image FILE loads FILE instead (a KERFSIM-MODULE 1
 * image for the simulator, which must define kernels `spin` and `empty`).
 *
 * Output: one line per mode, "KEY name=value ...", parsed by run.sh:
 *   INFO   uuid= name= total= free= dev_total= sms= clock_khz= driver= procaddr=
 *   MEMCAP total= free= dev_total= allocated= err= (the error that stopped the filling)
 *   CALIB  cycles= kernel_us= (spin(cycles) lasts kernel_us alone, measured with events)
 *   SHARE  wall_ms= busy_ms= share_pct= win_min= win_max= launches= kernel_us= ev_ms= nvml_pct=
 *          (busy = completed kernels x kernel_us, share = busy / wall, per 1 s window min/max;
 *          ev_ms = sum of event times around the kernels, which includes launches held on
 *          the host; nvml_pct = this pid's mean smUtil from nvmlDeviceGetProcessUtilization
 *          over the run, or NA)
 *   LAUNCH n= median_ns= p90_ns= (host time of one cuLaunchKernel, batches of 100)
 * Exit 0, or 1 with "ERR ..." on an unexpected driver answer.
 */

static const char ptx[] = ".version 6.0\n"
                          ".target sm_50\n"
                          ".address_size 64\n"
                          "\n"
                          ".visible .entry spin(.param .u64 cycles)\n"
                          "{\n"
                          "        .reg .pred %p;\n"
                          "        .reg .u64 %rd<5>;\n"
                          "        ld.param.u64 %rd1, [cycles];\n"
                          "        mov.u64 %rd2, %clock64;\n"
                          "LOOP:\n"
                          "        mov.u64 %rd3, %clock64;\n"
                          "        sub.u64 %rd4, %rd3, %rd2;\n"
                          "        setp.lt.u64 %p, %rd4, %rd1;\n"
                          "        @%p bra LOOP;\n"
                          "        ret;\n"
                          "}\n"
                          "\n"
                          ".visible .entry empty()\n"
                          "{\n"
                          "        ret;\n"
                          "}\n";

/* ---- the driver, resolved at run time ---- */

#define FN(name, ver) static __typeof__(ver) *p_##name;
#define CUDA_FNS(X)                                                                                \
        X(cuInit, cuInit)                                                                          \
        X(cuDriverGetVersion, cuDriverGetVersion)                                                  \
        X(cuDeviceGet, cuDeviceGet)                                                                \
        X(cuDeviceGetAttribute, cuDeviceGetAttribute)                                              \
        X(cuDeviceGetName, cuDeviceGetName)                                                        \
        X(cuDeviceGetUuid, cuDeviceGetUuid_v2)                                                     \
        X(cuDeviceTotalMem, cuDeviceTotalMem_v2)                                                   \
        X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain)                                      \
        X(cuCtxSetCurrent, cuCtxSetCurrent)                                                        \
        X(cuModuleLoadData, cuModuleLoadData)                                                      \
        X(cuModuleGetFunction, cuModuleGetFunction)                                                \
        X(cuLaunchKernel, cuLaunchKernel)                                                          \
        X(cuStreamCreate, cuStreamCreate)                                                          \
        X(cuStreamSynchronize, cuStreamSynchronize)                                                \
        X(cuEventCreate, cuEventCreate)                                                            \
        X(cuEventRecord, cuEventRecord)                                                            \
        X(cuEventSynchronize, cuEventSynchronize)                                                  \
        X(cuEventElapsedTime, cuEventElapsedTime)                                                  \
        X(cuMemAlloc, cuMemAlloc_v2)                                                               \
        X(cuMemFree, cuMemFree_v2)                                                                 \
        X(cuMemGetInfo, cuMemGetInfo_v2)                                                           \
        X(cuGetErrorName, cuGetErrorName)
CUDA_FNS(FN)
#undef FN

static const char *procaddr = "dlsym";

static const char *errname(CUresult r)
{
        const char *s = NULL;
        if (p_cuGetErrorName && p_cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
                return s;
        static char b[32];
        snprintf(b, sizeof(b), "CUresult_%d", (int)r);
        return b;
}

static void die(const char *what, CUresult r)
{
        printf("ERR %s: %s\n", what, errname(r));
        fflush(stdout);
        exit(1);
}

#define CK(call)                                                                                   \
        do {                                                                                       \
                CUresult r_ = (call);                                                              \
                if (r_ != CUDA_SUCCESS)                                                            \
                        die(#call, r_);                                                            \
        } while (0)

static void load_driver(void)
{
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
        if (!h) {
                printf("ERR dlopen libcuda.so.1: %s\n", dlerror());
                exit(1);
        }
        __typeof__(cuGetProcAddress_v2) *gpa =
            (__typeof__(cuGetProcAddress_v2) *)dlsym(h, "cuGetProcAddress_v2");
        if (gpa)
                procaddr = "cuGetProcAddress_v2";
#define GET(name, ver)                                                                             \
        do {                                                                                       \
                void *f_ = NULL;                                                                   \
                CUdriverProcAddressQueryResult st_;                                                \
                if (!gpa || gpa(#name, &f_, 12000, 0, &st_) != CUDA_SUCCESS)                       \
                        f_ = dlsym(h, #ver);                                                       \
                if (!f_) {                                                                         \
                        printf("ERR the driver has no %s\n", #ver);                                \
                        exit(1);                                                                   \
                }                                                                                  \
                p_##name = (__typeof__(ver) *)f_;                                                  \
        } while (0);
        CUDA_FNS(GET)
#undef GET
}

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static CUdevice dev;
static CUcontext ctx;
static CUstream stream;
static CUfunction f_spin, f_empty;
static int sms = 1, clock_khz = 1000000;

static void setup(const char *image)
{
        load_driver();
        CK(p_cuInit(0));
        CK(p_cuDeviceGet(&dev, 0));
        CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
        CK(p_cuCtxSetCurrent(ctx));
        CK(p_cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
        if (p_cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) || sms <= 0)
                sms = 1;
        if (p_cuDeviceGetAttribute(&clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev) ||
            clock_khz <= 0)
                clock_khz = 1000000;
        char *img = (char *)ptx;
        if (image) {
                FILE *f = fopen(image, "r");
                static char buf[1 << 16];
                size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
                if (f)
                        fclose(f);
                if (!n) {
                        printf("ERR cannot read image %s\n", image);
                        exit(1);
                }
                buf[n] = 0;
                img = buf;
        }
        CUmodule mod;
        CK(p_cuModuleLoadData(&mod, img));
        CK(p_cuModuleGetFunction(&f_spin, mod, "spin"));
        CK(p_cuModuleGetFunction(&f_empty, mod, "empty"));
}

static void uuid_str(char *b, size_t n)
{
        CUuuid u;
        memset(&u, 0, sizeof(u));
        if (p_cuDeviceGetUuid(&u, dev) != CUDA_SUCCESS) {
                snprintf(b, n, "unknown");
                return;
        }
        const unsigned char *x = (const unsigned char *)u.bytes;
        snprintf(b, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                 x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12],
                 x[13], x[14], x[15]);
}

/* ---- modes ---- */

static int mode_info(void)
{
        char name[128] = "", uuid[64];
        size_t fr = 0, tot = 0, dt = 0;
        int drv = 0;
        CK(p_cuDeviceGetName(name, (int)sizeof(name), dev));
        for (char *c = name; *c; c++)
                if (*c == ' ')
                        *c = '_';
        CK(p_cuMemGetInfo(&fr, &tot));
        CK(p_cuDeviceTotalMem(&dt, dev));
        CK(p_cuDriverGetVersion(&drv));
        uuid_str(uuid, sizeof(uuid));
        printf("INFO uuid=%s name=%s total=%zu free=%zu dev_total=%zu sms=%d clock_khz=%d "
               "driver=%d procaddr=%s\n",
               uuid, name, tot, fr, dt, sms, clock_khz, drv, procaddr);
        return 0;
}

static int mode_memcap(unsigned chunk_mib)
{
        size_t fr = 0, tot = 0, dt = 0;
        CK(p_cuMemGetInfo(&fr, &tot));
        CK(p_cuDeviceTotalMem(&dt, dev));
        static CUdeviceptr held[1 << 16];
        size_t n = 0, allocated = 0, chunk = (size_t)chunk_mib << 20;
        CUresult r = CUDA_SUCCESS;
        /* Big chunks, then 2 MiB ones: fill to the brim, past the cap if the cap leaks. */
        for (int pass = 0; pass < 2; pass++) {
                size_t sz = pass ? (size_t)2 << 20 : chunk;
                while (n < sizeof(held) / sizeof(held[0])) {
                        r = p_cuMemAlloc(&held[n], sz);
                        if (r != CUDA_SUCCESS)
                                break;
                        n++;
                        allocated += sz;
                        if (allocated > tot + ((size_t)1 << 30))
                                break; /* 1 GiB past what the view says: the cap leaks */
                }
                if (r != CUDA_SUCCESS && r != CUDA_ERROR_OUT_OF_MEMORY)
                        break;
        }
        printf("MEMCAP total=%zu free=%zu dev_total=%zu allocated=%zu err=%s\n", tot, fr, dt,
               allocated, r == CUDA_SUCCESS ? "none" : errname(r));
        while (n)
                CK(p_cuMemFree(held[--n]));
        return 0;
}

static CUevent ev_new(void)
{
        CUevent e;
        CK(p_cuEventCreate(&e, CU_EVENT_DEFAULT));
        return e;
}

/* Launches spin(cycles) between two events on the stream. */
static void spin_launch(uint64_t cycles, CUevent a, CUevent b)
{
        void *args[] = {&cycles};
        CK(p_cuEventRecord(a, stream));
        CK(p_cuLaunchKernel(f_spin, (unsigned)sms, 1, 1, 32, 1, 1, 0, stream, args, NULL));
        CK(p_cuEventRecord(b, stream));
}

static float ev_ms(CUevent a, CUevent b)
{
        float ms = 0;
        CK(p_cuEventSynchronize(b));
        CK(p_cuEventElapsedTime(&ms, a, b));
        return ms;
}

typedef nvmlReturn_t (*nv_init_fn)(void);
typedef nvmlReturn_t (*nv_uuid_fn)(const char *, nvmlDevice_t *);
typedef nvmlReturn_t (*nv_putil_fn)(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned int *,
                                    unsigned long long);

/* This pid's mean smUtil since since_us, or -1. */
static double nvml_share(unsigned long long since_us)
{
        void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h)
                return -1;
        nv_init_fn init = (nv_init_fn)dlsym(h, "nvmlInit_v2");
        nv_uuid_fn by_uuid = (nv_uuid_fn)dlsym(h, "nvmlDeviceGetHandleByUUID");
        nv_putil_fn putil = (nv_putil_fn)dlsym(h, "nvmlDeviceGetProcessUtilization");
        char uuid[64];
        nvmlDevice_t nd;
        uuid_str(uuid, sizeof(uuid));
        if (!init || !by_uuid || !putil || init() != NVML_SUCCESS ||
            by_uuid(uuid, &nd) != NVML_SUCCESS)
                return -1;
        static nvmlProcessUtilizationSample_t s[1024];
        unsigned int n = 1024;
        if (putil(nd, s, &n, since_us) != NVML_SUCCESS)
                return -1;
        double sum = 0;
        unsigned k = 0;
        for (unsigned i = 0; i < n && i < 1024; i++)
                if (s[i].pid == (unsigned)getpid() && s[i].timeStamp >= since_us) {
                        sum += s[i].smUtil;
                        k++;
                }
        return k ? sum / k : -1;
}

/* Cycles for one spin kernel of kernel_us, measured alone (no other work in the process). */
static uint64_t calibrate(double kernel_us, double *measured_us)
{
        CUevent a = ev_new(), b = ev_new();
        uint64_t cycles = (uint64_t)(kernel_us * clock_khz / 1000.0);
        float ms[5];
        for (int it = 0; it < 4; it++) {
                for (int k = 0; k < 5; k++) {
                        spin_launch(cycles, a, b);
                        ms[k] = ev_ms(a, b);
                }
                for (int x = 0; x < 5; x++)
                        for (int y = x + 1; y < 5; y++)
                                if (ms[y] < ms[x]) {
                                        float t = ms[x];
                                        ms[x] = ms[y];
                                        ms[y] = t;
                                }
                if (ms[2] <= 0)
                        break;
                double scale = kernel_us / (ms[2] * 1000.0);
                if (scale > 0.98 && scale < 1.02)
                        break;
                cycles = (uint64_t)((double)cycles * scale) + 1;
        }
        *measured_us = ms[2] * 1000.0;
        return cycles;
}

static int mode_calibrate(double kernel_us)
{
        double us;
        uint64_t cycles = calibrate(kernel_us, &us);
        printf("CALIB cycles=%" PRIu64 " kernel_us=%.1f\n", cycles, us);
        return 0;
}

/*
 * Keeps `depth` spin kernels in flight for warmup_ms + seconds and counts the kernels that
 * complete in the measured part. The share is launches x kernel_us / wall, kernel_us being
 * the kernel's duration measured alone (calibrate, without the shim): a launch the shim holds
 * on the host would otherwise be counted as device time by the events around it (they are
 * recorded before the launch call). Event times are reported as ev_ms for comparison.
 */
static int mode_share(double seconds, double kernel_us, uint64_t cycles, double warmup_ms,
                      unsigned depth)
{
        enum { MAXD = 16, MAXWIN = 600 };
        if (depth < 1 || depth > MAXD)
                depth = 4;
        CUevent a[MAXD], b[MAXD];
        for (unsigned i = 0; i < MAXD; i++)
                a[i] = ev_new(), b[i] = ev_new();
        if (!cycles) {
                double us;
                cycles = calibrate(kernel_us, &us);
                kernel_us = us;
        }
        double ev_busy = 0;
        uint64_t done = 0, win_done[MAXWIN] = {0}, t_begin = 0, head = 0, tail = 0;
        unsigned long long since_us = 0;
        bool measuring = false;
        uint64_t t0 = now_ns(), end = UINT64_MAX;
        for (;;) {
                uint64_t t = now_ns();
                if (!measuring && t - t0 >= (uint64_t)(warmup_ms * 1e6)) {
                        while (tail < head) { /* drain the warm-up */
                                (void)ev_ms(a[tail % depth], b[tail % depth]);
                                tail++;
                        }
                        measuring = true;
                        t_begin = now_ns();
                        struct timespec rt;
                        clock_gettime(CLOCK_REALTIME, &rt);
                        since_us = (unsigned long long)rt.tv_sec * 1000000ull +
                                   (unsigned long long)rt.tv_nsec / 1000;
                        end = t_begin + (uint64_t)(seconds * 1e9);
                }
                if (measuring && t >= end)
                        break;
                if (head - tail == depth) {
                        float ms = ev_ms(a[tail % depth], b[tail % depth]);
                        if (measuring) {
                                ev_busy += ms;
                                done++;
                                uint64_t w = (now_ns() - t_begin) / 1000000000ull;
                                if (w < MAXWIN)
                                        win_done[w]++;
                        }
                        tail++;
                }
                spin_launch(cycles, a[head % depth], b[head % depth]);
                head++;
        }
        /* Kernels still in flight at the end are not counted: the wall stops here. */
        double wall_ms = (double)(now_ns() - t_begin) / 1e6;
        while (tail < head) {
                (void)ev_ms(a[tail % depth], b[tail % depth]);
                tail++;
        }
        double busy_ms = (double)done * kernel_us / 1000.0;
        double wmin = 100, wmax = 0;
        uint64_t nwin = (uint64_t)(wall_ms / 1000.0);
        for (uint64_t w = 0; w < nwin && w < MAXWIN; w++) {
                double sh = (double)win_done[w] * kernel_us / 1e4; /* % of 1 s */
                wmin = sh < wmin ? sh : wmin;
                wmax = sh > wmax ? sh : wmax;
        }
        if (!nwin)
                wmin = wmax = 100.0 * busy_ms / wall_ms;
        double nv = nvml_share(since_us);
        char nvb[32];
        if (nv < 0)
                snprintf(nvb, sizeof(nvb), "NA");
        else
                snprintf(nvb, sizeof(nvb), "%.1f", nv);
        printf("SHARE wall_ms=%.1f busy_ms=%.1f share_pct=%.1f win_min=%.1f win_max=%.1f "
               "launches=%" PRIu64 " kernel_us=%.1f ev_ms=%.1f nvml_pct=%s\n",
               wall_ms, busy_ms, 100.0 * busy_ms / wall_ms, wmin, wmax, done, kernel_us, ev_busy,
               nvb);
        return 0;
}

static int cmp_u64(const void *x, const void *y)
{
        uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
        return a < b ? -1 : a > b;
}

static int mode_launch(unsigned n)
{
        enum { BATCH = 100 };
        unsigned nb = n / BATCH ? n / BATCH : 1;
        uint64_t *t = calloc(nb, sizeof(*t));
        if (!t)
                return 1;
        for (unsigned w = 0; w < 20; w++) { /* warm-up */
                CK(p_cuLaunchKernel(f_empty, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
                CK(p_cuStreamSynchronize(stream));
        }
        for (unsigned i = 0; i < nb; i++) {
                uint64_t t0 = now_ns();
                for (unsigned k = 0; k < BATCH; k++)
                        CK(p_cuLaunchKernel(f_empty, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
                t[i] = (now_ns() - t0) / BATCH;
                CK(p_cuStreamSynchronize(stream));
        }
        qsort(t, nb, sizeof(*t), cmp_u64);
        printf("LAUNCH n=%u median_ns=%" PRIu64 " p90_ns=%" PRIu64 "\n", nb * BATCH, t[nb / 2],
               t[nb * 9 / 10]);
        free(t);
        return 0;
}

static void usage(void)
{
        fprintf(stderr, "usage: spin [--image FILE] info | memcap [--chunk-mib N] | calibrate "
                        "[--kernel-us K] | share --seconds S [--kernel-us K --cycles C] "
                        "[--warmup-ms W] [--depth D] | launch [--n N]\n");
        exit(2);
}

int main(int argc, char **argv)
{
        const char *image = NULL, *mode = NULL;
        double seconds = 3, kernel_us = 2000, warmup_ms = 1000;
        unsigned chunk_mib = 256, depth = 4, n = 20000;
        uint64_t cycles = 0;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (!strcmp(a, "--image") && v)
                        image = v, i++;
                else if (!strcmp(a, "--chunk-mib") && v)
                        chunk_mib = (unsigned)strtoul(v, NULL, 10), i++;
                else if (!strcmp(a, "--seconds") && v)
                        seconds = strtod(v, NULL), i++;
                else if (!strcmp(a, "--kernel-us") && v)
                        kernel_us = strtod(v, NULL), i++;
                else if (!strcmp(a, "--cycles") && v)
                        cycles = strtoull(v, NULL, 10), i++;
                else if (!strcmp(a, "--warmup-ms") && v)
                        warmup_ms = strtod(v, NULL), i++;
                else if (!strcmp(a, "--depth") && v)
                        depth = (unsigned)strtoul(v, NULL, 10), i++;
                else if (!strcmp(a, "--n") && v)
                        n = (unsigned)strtoul(v, NULL, 10), i++;
                else if (!mode && a[0] != '-')
                        mode = a;
                else
                        usage();
        }
        if (mode && !strcmp(mode, "ptx")) { /* for ptxas in ctest: no driver needed */
                fputs(ptx, stdout);
                return 0;
        }
        if (!mode || seconds <= 0 || seconds > 600 || kernel_us <= 0 || !chunk_mib || !n)
                usage();
        setup(image);
        if (!strcmp(mode, "info"))
                return mode_info();
        if (!strcmp(mode, "memcap"))
                return mode_memcap(chunk_mib);
        if (!strcmp(mode, "calibrate"))
                return mode_calibrate(kernel_us);
        if (!strcmp(mode, "share"))
                return mode_share(seconds, kernel_us, cycles, warmup_ms, depth);
        if (!strcmp(mode, "launch"))
                return mode_launch(n);
        usage();
        return 2;
}
