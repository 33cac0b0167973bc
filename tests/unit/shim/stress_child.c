/* SPDX-License-Identifier: Apache-2.0 */
/* stress_child.c - driver-API worker for the shim stress tests (test_stress_*.c) */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_abi.h"
#include "kerf/slice_abi.h"
#include "nvml_abi.h"

/*
 * One process of a slice, linked against libcuda.so.1 (the simulated driver in the tests, run
 * with LD_PRELOAD=libkerf-cuda.so). It only uses the public driver API, NVML through dlopen
 * (as Python bindings do) and a read-only mapping of the region to read its own slot.
 *
 *   stress_child MODE [seed=N] [ops=N] [hold_mib=N]
 *
 * Protocol: one line per message. The child prints "READY pid=P ctx=BYTES" once its context,
 * stream, pool and module exist (ctx = its slot's memory_used then: what the shim charged for
 * the context), then follows its mode; it reads commands from stdin and exits 0 at EOF. Any
 * unexpected driver answer prints "ERR ..." and exits 1.
 *
 * Modes:
 *   race      rounds of: "GO T" (CLOCK_MONOTONIC ns): sleep until T, then allocate on random
 *             paths (2/4/8 MiB, mipmaps 10 MiB) until the cap refuses a 2 MiB cuMemAlloc_v2; some
 *             async blocks are freed back to their pool on the way (the driver keeps them
 *             reserved). Prints "DONE held=B asyncfreed=B allocs=N". Then "FREE": frees all,
 *             synchronises, trims, prints "FREED".
 *   churn     "GO": `ops` random allocate/free operations over every path (random sizes), with
 *             random synchronisations and pool trims, then frees everything, synchronises and
 *             trims; prints "DONE ops=N allocs=N frees=N".
 *   views     "GO": holds hold_mib MiB (cuMemAlloc_v2 + VMM), prints "HELD". Each "REPORT":
 *             prints "VIEW cu_free=.. cu_total=.. dev_total=.. nvml_total=.. nvml_free=..
 *             nvml_used=.. nvml2_total=.. nvml2_free=.. nvml2_used=.. nvml2_reserved=..".
 *   survivor  "GO": allocates / frees / launches / synchronises, timing every call, until a
 *             line arrives; "HOLD": frees its async blocks, synchronises, trims, prints
 *             "HELD bytes=B ctx=B maxlat_ns=N maxcall=NAME calls=N ooms=N".
 *   victim    no READY line and no commands: allocates, frees and launches until killed.
 */

#define MIB (1024ull * 1024)

enum path {
        P_ALLOC,
        P_PITCH,
        P_MANAGED,
        P_ASYNC,
        P_POOL,
        P_VMM,     /* cuMemCreate, handle kept */
        P_VMM_MAP, /* cuMemCreate + map + cuMemRelease: the mapping keeps the memory alive */
        P_ARRAY,
        P_ARRAY3D,
        P_MIPMAP,
        P_VMM_HOST, /* cuMemCreate on a host location: not device memory */
        P_N
};
static const char *const path_name[P_N] = {"alloc",   "pitch",  "managed", "async",
                                           "pool",    "vmm",    "vmm_map", "array",
                                           "array3d", "mipmap", "vmm_host"};

typedef struct blk {
        int path;
        size_t size; /* bytes the caller asked for (what a cap must count) */
        CUdeviceptr p;
        CUmemGenericAllocationHandle h;
        void *arr;
} blk;

static CUdevice dev;
static CUcontext ctx;
static CUstream stream;
static CUmemoryPool pool, dpool;
static CUfunction kfn;
static struct kerf_slice_region *region;
static uint64_t rng;
static const char *mode;

static uint64_t rnd(void)
{
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return rng;
}

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void say(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
}

static void die(const char *what, CUresult r)
{
        say("ERR %s %s rc=%d", mode, what, (int)r);
        exit(1);
}

#define CK(call)                                                                                   \
        do {                                                                                       \
                CUresult r_ = (call);                                                              \
                if (r_ != CUDA_SUCCESS)                                                            \
                        die(#call, r_);                                                            \
        } while (0)

/* One command line from stdin into buf; false at EOF. */
static bool get_line(char *buf, size_t n)
{
        if (!fgets(buf, (int)n, stdin))
                return false;
        buf[strcspn(buf, "\n")] = 0;
        return true;
}

static bool line_waiting(void)
{
        struct pollfd p = {.fd = 0, .events = POLLIN};
        return poll(&p, 1, 0) > 0;
}

static uint64_t my_slot_used(void)
{
        if (!region)
                return 0;
        for (unsigned i = 0; i < KERF_SLICE_MAX_PROCS; i++)
                if (atomic_load(&region->procs[i].pid) == (int32_t)getpid())
                        return atomic_load(&region->procs[i].memory_used);
        return 0;
}

static const char kmodule[] = "KERFSIM-MODULE 1\n"
                              "kernel k500 cost_us=500\n";

static void setup(void)
{
        CK(cuInit(0));
        CK(cuDeviceGet(&dev, 0));
        CK(cuDevicePrimaryCtxRetain(&ctx, dev));
        CK(cuCtxSetCurrent(ctx));
        CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
        CK(cuDeviceGetDefaultMemPool(&dpool, dev));
        CUmemPoolProps pp;
        memset(&pp, 0, sizeof(pp));
        pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        pp.location.id = dev;
        CK(cuMemPoolCreate(&pool, &pp));
        CUmodule mod;
        CK(cuModuleLoadData(&mod, kmodule));
        CK(cuModuleGetFunction(&kfn, mod, "k500"));
        const char *rp = getenv("KERF_SLICE_REGION");
        if (rp && *rp && kerf_slice_region_map(rp, false, &region) < 0)
                region = NULL;
}

static void vmm_prop(CUmemAllocationProp *p, bool host)
{
        memset(p, 0, sizeof(*p));
        p->type = CU_MEM_ALLOCATION_TYPE_PINNED;
        p->location.type = host ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
        p->location.id = host ? 0 : dev;
}

/* Allocates `size` bytes on `path` into *b. size must suit the path: a multiple of 2 MiB for
 * the VMM paths, a multiple of 4096 for arrays, a multiple of 16 KiB for mipmaps. */
static CUresult alloc_on(int path, size_t size, blk *b)
{
        CUresult r;
        memset(b, 0, sizeof(*b));
        b->path = path;
        b->size = size;
        switch (path) {
        case P_ALLOC:
                return cuMemAlloc_v2(&b->p, size);
        case P_PITCH: {
                size_t pitch, w = size >= 4096 ? 4096 : size;
                r = cuMemAllocPitch_v2(&b->p, &pitch, w, size / w, 4);
                if (!r)
                        b->size = pitch * (size / w);
                return r;
        }
        case P_MANAGED:
                return cuMemAllocManaged(&b->p, size, CU_MEM_ATTACH_GLOBAL);
        case P_ASYNC:
                return cuMemAllocAsync(&b->p, size, stream);
        case P_POOL:
                return cuMemAllocFromPoolAsync(&b->p, size, pool, stream);
        case P_VMM:
        case P_VMM_HOST: {
                CUmemAllocationProp p;
                vmm_prop(&p, path == P_VMM_HOST);
                return cuMemCreate(&b->h, size, &p, 0);
        }
        case P_VMM_MAP: {
                CUmemAllocationProp p;
                vmm_prop(&p, false);
                if ((r = cuMemCreate(&b->h, size, &p, 0)))
                        return r;
                CK(cuMemAddressReserve(&b->p, size, 0, 0, 0));
                CK(cuMemMap(b->p, size, 0, b->h, 0));
                CUmemAccessDesc a = {.location = p.location,
                                     .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
                CK(cuMemSetAccess(b->p, size, &a, 1));
                CK(cuMemRelease(b->h)); /* the mapping keeps it alive */
                b->h = 0;
                return CUDA_SUCCESS;
        }
        case P_ARRAY: {
                CUDA_ARRAY_DESCRIPTOR d = {.Width = 4096,
                                           .Height = size / 4096,
                                           .Format = CU_AD_FORMAT_UNSIGNED_INT8,
                                           .NumChannels = 1};
                return cuArrayCreate_v2((CUarray *)&b->arr, &d);
        }
        case P_ARRAY3D: {
                CUDA_ARRAY3D_DESCRIPTOR d = {.Width = 1024,
                                             .Height = 4,
                                             .Depth = size / 4096,
                                             .Format = CU_AD_FORMAT_UNSIGNED_INT8,
                                             .NumChannels = 1};
                return cuArray3DCreate_v2((CUarray *)&b->arr, &d);
        }
        case P_MIPMAP: {
                /* Two levels: w x h bytes, then w/2 x h/2: size = 1.25 w h. */
                size_t l0 = size / 5 * 4;
                CUDA_ARRAY3D_DESCRIPTOR d = {.Width = 4096,
                                             .Height = l0 / 4096,
                                             .Format = CU_AD_FORMAT_UNSIGNED_INT8,
                                             .NumChannels = 1};
                return cuMipmappedArrayCreate((CUmipmappedArray *)&b->arr, &d, 2);
        }
        }
        return CUDA_ERROR_INVALID_VALUE;
}

/* Frees b; async-path blocks go back with cuMemFreeAsync when `async`. */
static void free_blk(blk *b, bool async)
{
        switch (b->path) {
        case P_ASYNC:
        case P_POOL:
                if (async)
                        CK(cuMemFreeAsync(b->p, stream));
                else
                        CK(cuMemFree_v2(b->p));
                break;
        case P_ALLOC:
        case P_PITCH:
        case P_MANAGED:
                CK(cuMemFree_v2(b->p));
                break;
        case P_VMM:
        case P_VMM_HOST:
                CK(cuMemRelease(b->h));
                break;
        case P_VMM_MAP:
                CK(cuMemUnmap(b->p, b->size));
                CK(cuMemAddressFree(b->p, b->size));
                break;
        case P_ARRAY:
        case P_ARRAY3D:
                CK(cuArrayDestroy((CUarray)b->arr));
                break;
        case P_MIPMAP:
                CK(cuMipmappedArrayDestroy((CUmipmappedArray)b->arr));
                break;
        }
}

static void settle(void)
{
        CK(cuStreamSynchronize(stream));
        CK(cuCtxSynchronize());
        CK(cuMemPoolTrimTo(dpool, 0));
        CK(cuMemPoolTrimTo(pool, 0));
}

static void launch(void)
{
        CK(cuLaunchKernel(kfn, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
}

/* ---- race ---------------------------------------------------------------------------------- */

static void race_round(uint64_t t0)
{
        static blk held[4096];
        static const int paths[] = {P_ALLOC, P_PITCH,   P_MANAGED, P_ASYNC,   P_POOL,
                                    P_VMM,   P_VMM_MAP, P_ARRAY,   P_ARRAY3D, P_MIPMAP};
        size_t n = 0, allocs = 0;
        uint64_t bytes = 0, asyncfreed = 0;
        char line[128];
        struct timespec ts = {.tv_sec = (time_t)(t0 / 1000000000ull),
                              .tv_nsec = (long)(t0 % 1000000000ull)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
        while (n < sizeof(held) / sizeof(held[0])) {
                int path = paths[rnd() % (sizeof(paths) / sizeof(paths[0]))];
                size_t size = path == P_MIPMAP ? 10 * MIB : (2u << (rnd() % 3)) * MIB;
                CUresult r = alloc_on(path, size, &held[n]);
                if (r == CUDA_SUCCESS) {
                        allocs++;
                        if ((path == P_ASYNC || path == P_POOL) && rnd() % 4 == 0) {
                                free_blk(&held[n], true); /* back to the pool, still reserved */
                                asyncfreed += size;
                                continue;
                        }
                        bytes += held[n++].size;
                        continue;
                }
                if (r != CUDA_ERROR_OUT_OF_MEMORY) {
                        say("ERR race path=%s size=%zu rc=%d", path_name[path], size, (int)r);
                        exit(1);
                }
                r = alloc_on(P_ALLOC, 2 * MIB, &held[n]);
                if (r == CUDA_ERROR_OUT_OF_MEMORY)
                        break;
                if (r)
                        die("cuMemAlloc_v2 after OOM", r);
                allocs++;
                bytes += held[n++].size;
        }
        say("DONE held=%" PRIu64 " asyncfreed=%" PRIu64 " allocs=%zu", bytes, asyncfreed, allocs);
        if (!get_line(line, sizeof(line)))
                exit(0);
        if (strcmp(line, "FREE"))
                die("race: expected FREE", CUDA_ERROR_INVALID_VALUE);
        for (size_t i = 0; i < n; i++)
                free_blk(&held[i], rnd() % 2);
        settle();
        say("FREED");
}

static void run_race(void)
{
        char line[128];
        while (get_line(line, sizeof(line)))
                if (!strncmp(line, "GO ", 3))
                        race_round(strtoull(line + 3, NULL, 10));
}

/* ---- churn --------------------------------------------------------------------------------- */

static size_t churn_size(int path)
{
        switch (path) {
        case P_VMM:
        case P_VMM_MAP:
        case P_VMM_HOST:
                return (1 + rnd() % 3) * 2 * MIB;
        case P_ARRAY:
        case P_ARRAY3D:
                return (1 + rnd() % 256) * 4096;
        case P_MIPMAP:
                return (1 + rnd() % 64) * 20480; /* l0 = 16 KiB multiples */
        default:
                /* bytes to a few MiB, mostly unaligned */
                switch (rnd() % 4) {
                case 0:
                        return 1 + rnd() % 4096;
                case 1:
                        return 1 + rnd() % (256 * 1024);
                case 2:
                        return 1 + rnd() % (4 * MIB);
                default:
                        return (1 + rnd() % 2) * 2 * MIB;
                }
        }
}

static void run_churn(long ops)
{
        enum { MAXH = 48 };
        blk held[MAXH];
        size_t n = 0;
        long allocs = 0, frees = 0, per[P_N] = {0};
        char line[64];
        if (!get_line(line, sizeof(line)) || strcmp(line, "GO"))
                exit(0);
        for (long i = 0; i < ops; i++) {
                uint64_t x = rnd();
                if (x % 61 == 0) {
                        switch (x / 61 % 4) {
                        case 0:
                                CK(cuStreamSynchronize(stream));
                                break;
                        case 1:
                                CK(cuCtxSynchronize());
                                break;
                        case 2:
                                CK(cuMemPoolTrimTo(rnd() % 2 ? pool : dpool, rnd() % (8 * MIB)));
                                break;
                        default:
                                launch();
                        }
                        continue;
                }
                if (n && (n == MAXH || x % 2)) {
                        size_t k = rnd() % n;
                        free_blk(&held[k], rnd() % 2);
                        held[k] = held[--n];
                        frees++;
                        continue;
                }
                int path = (int)(rnd() % P_N);
                size_t size = churn_size(path);
                CUresult r = alloc_on(path, size, &held[n]);
                if (r) {
                        say("ERR churn op=%ld path=%s size=%zu rc=%d", i, path_name[path], size,
                            (int)r);
                        exit(1);
                }
                n++;
                allocs++;
                per[path]++;
        }
        while (n)
                free_blk(&held[--n], rnd() % 2), frees++;
        settle();
        say("DONE ops=%ld allocs=%ld frees=%ld alloc=%ld pitch=%ld managed=%ld async=%ld pool=%ld "
            "vmm=%ld vmm_map=%ld array=%ld array3d=%ld mipmap=%ld vmm_host=%ld",
            ops, allocs, frees, per[P_ALLOC], per[P_PITCH], per[P_MANAGED], per[P_ASYNC],
            per[P_POOL], per[P_VMM], per[P_VMM_MAP], per[P_ARRAY], per[P_ARRAY3D], per[P_MIPMAP],
            per[P_VMM_HOST]);
        while (get_line(line, sizeof(line)))
                ;
}

/* ---- views --------------------------------------------------------------------------------- */

typedef nvmlReturn_t (*nvml_void_fn)(void);
typedef nvmlReturn_t (*nvml_by_uuid_fn)(const char *, nvmlDevice_t *);
typedef nvmlReturn_t (*nvml_by_index_fn)(unsigned, nvmlDevice_t *);
typedef nvmlReturn_t (*nvml_mem_fn)(nvmlDevice_t, nvmlMemory_t *);
typedef nvmlReturn_t (*nvml_mem2_fn)(nvmlDevice_t, nvmlMemory_v2_t *);

static void run_views(unsigned hold_mib)
{
        char line[64];
        blk b[2];
        if (!get_line(line, sizeof(line)) || strcmp(line, "GO"))
                exit(0);
        CK(alloc_on(P_ALLOC, (size_t)hold_mib * MIB, &b[0]));
        CK(alloc_on(P_VMM, 2 * MIB * (1 + hold_mib % 3), &b[1]));
        say("HELD");
        /* NVML the way Python bindings reach it: dlopen + dlsym. */
        void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                say("ERR views dlopen libnvidia-ml.so.1: %s", dlerror());
                exit(1);
        }
        nvml_void_fn init = (nvml_void_fn)dlsym(h, "nvmlInit_v2");
        nvml_by_uuid_fn by_uuid = (nvml_by_uuid_fn)dlsym(h, "nvmlDeviceGetHandleByUUID");
        nvml_by_index_fn by_index = (nvml_by_index_fn)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
        nvml_mem_fn mem = (nvml_mem_fn)dlsym(h, "nvmlDeviceGetMemoryInfo");
        nvml_mem2_fn mem2 = (nvml_mem2_fn)dlsym(h, "nvmlDeviceGetMemoryInfo_v2");
        if (!init || !by_uuid || !by_index || !mem || !mem2) {
                say("ERR views nvml symbols missing");
                exit(1);
        }
        nvmlDevice_t nd;
        const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
        if (init() != NVML_SUCCESS ||
            ((cvd && !strncmp(cvd, "GPU-", 4)) ? by_uuid(cvd, &nd) : by_index(0, &nd)) !=
                NVML_SUCCESS) {
                say("ERR views nvml init/handle");
                exit(1);
        }
        while (get_line(line, sizeof(line))) {
                if (strcmp(line, "REPORT"))
                        continue;
                size_t cu_free = 0, cu_total = 0, dev_total = 0;
                CK(cuMemGetInfo_v2(&cu_free, &cu_total));
                CK(cuDeviceTotalMem_v2(&dev_total, dev));
                nvmlMemory_t m1;
                nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
                if (mem(nd, &m1) != NVML_SUCCESS || mem2(nd, &m2) != NVML_SUCCESS) {
                        say("ERR views nvmlDeviceGetMemoryInfo");
                        exit(1);
                }
                say("VIEW cu_free=%zu cu_total=%zu dev_total=%zu nvml_total=%llu nvml_free=%llu "
                    "nvml_used=%llu nvml2_total=%llu nvml2_free=%llu nvml2_used=%llu "
                    "nvml2_reserved=%llu",
                    cu_free, cu_total, dev_total, m1.total, m1.free, m1.used, m2.total, m2.free,
                    m2.used, m2.reserved);
        }
}

/* ---- survivor / victim ----------------------------------------------------------------------- */

static uint64_t max_lat, n_calls;
static const char *max_call = "-";

#define TIMED(name, call)                                                                          \
        ({                                                                                         \
                uint64_t t_ = now_ns();                                                            \
                CUresult r_ = (call);                                                              \
                uint64_t d_ = now_ns() - t_;                                                       \
                n_calls++;                                                                         \
                if (d_ > max_lat)                                                                  \
                        max_lat = d_, max_call = (name);                                           \
                r_;                                                                                \
        })

static void run_worker(bool survivor)
{
        enum { MAXH = 16 };
        static const int paths[] = {P_ALLOC, P_PITCH, P_VMM, P_ASYNC, P_POOL};
        blk held[MAXH];
        size_t n = 0;
        uint64_t ooms = 0;
        char line[64];
        if (survivor && (!get_line(line, sizeof(line)) || strcmp(line, "GO")))
                exit(0);
        for (uint64_t i = 0; !survivor || !line_waiting(); i++) {
                uint64_t x = rnd();
                if (x % 3 == 0) {
                        if (TIMED("cuLaunchKernel",
                                  cuLaunchKernel(kfn, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL)))
                                die("cuLaunchKernel", CUDA_ERROR_UNKNOWN);
                } else if (n && (n == MAXH || x % 3 == 1)) {
                        size_t k = rnd() % n;
                        blk *b = &held[k];
                        CUresult r;
                        if (b->path == P_VMM)
                                r = TIMED("cuMemRelease", cuMemRelease(b->h));
                        else if (b->path == P_ASYNC || b->path == P_POOL)
                                r = TIMED("cuMemFreeAsync", cuMemFreeAsync(b->p, stream));
                        else
                                r = TIMED("cuMemFree_v2", cuMemFree_v2(b->p));
                        if (r)
                                die("free", r);
                        held[k] = held[--n];
                } else {
                        int path = paths[rnd() % (sizeof(paths) / sizeof(paths[0]))];
                        size_t size = (1 + rnd() % 2) * 2 * MIB;
                        CUresult r = TIMED(path_name[path], alloc_on(path, size, &held[n]));
                        if (r == CUDA_SUCCESS)
                                n++;
                        else if (r == CUDA_ERROR_OUT_OF_MEMORY)
                                ooms++;
                        else
                                die(path_name[path], r);
                }
                if (i % 8 == 7 && TIMED("cuStreamSynchronize", cuStreamSynchronize(stream)))
                        die("cuStreamSynchronize", CUDA_ERROR_UNKNOWN);
        }
        if (!get_line(line, sizeof(line)) || strcmp(line, "HOLD"))
                exit(0);
        uint64_t bytes = 0;
        for (size_t k = 0; k < n;) {
                if (held[k].path == P_ASYNC || held[k].path == P_POOL) {
                        free_blk(&held[k], true);
                        held[k] = held[--n];
                } else {
                        bytes += held[k++].size;
                }
        }
        settle();
        say("HELD bytes=%" PRIu64 " slot=%" PRIu64 " maxlat_ns=%" PRIu64
            " maxcall=%s calls=%" PRIu64 " ooms=%" PRIu64,
            bytes, my_slot_used(), max_lat, max_call, n_calls, ooms);
        while (get_line(line, sizeof(line)))
                ;
}

int main(int argc, char **argv)
{
        if (argc < 2) {
                fprintf(stderr, "usage: %s race|churn|views|survivor|victim [key=value...]\n",
                        argv[0]);
                return 2;
        }
        mode = argv[1];
        long ops = 1000;
        unsigned hold_mib = 64;
        rng = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull | 1;
        for (int i = 2; i < argc; i++) {
                if (!strncmp(argv[i], "seed=", 5))
                        rng = strtoull(argv[i] + 5, NULL, 0) * 0x9e3779b97f4a7c15ull | 1;
                else if (!strncmp(argv[i], "ops=", 4))
                        ops = strtol(argv[i] + 4, NULL, 0);
                else if (!strncmp(argv[i], "hold_mib=", 9))
                        hold_mib = (unsigned)strtoul(argv[i] + 9, NULL, 0);
        }
        setup();
        if (!strcmp(mode, "victim")) {
                run_worker(false);
                return 0;
        }
        say("READY pid=%d ctx=%" PRIu64, (int)getpid(), my_slot_used());
        if (!strcmp(mode, "race"))
                run_race();
        else if (!strcmp(mode, "churn"))
                run_churn(ops);
        else if (!strcmp(mode, "views"))
                run_views(hold_mib);
        else if (!strcmp(mode, "survivor"))
                run_worker(true);
        else
                return 2;
        return 0;
}
