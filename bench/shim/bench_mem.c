/* SPDX-License-Identifier: Apache-2.0 */
/* bench_mem.c - added cost of the shim per allocate/free pair, on the simulated driver */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_abi.h"
#include "kerf/core.h"
#include "kerf/slice_abi.h"
#include "fx_common.h"
#include "simstate.h"

/*
 * bench_mem [--runs R] [--batches B]       (defaults 3 and 300; figures are SIMULATED)
 *
 * A simulated node (1 x H200) and one slice. This program runs itself as a child R times
 * without and R times with LD_PRELOAD=<build>/lib/libkerf-cuda.so, alternating (direct, shim,
 * direct, shim, ...), so both modes see the same machine state. Each child times, after a
 * warm-up, B batches of 64 pairs per operation and reports the median batch's ns per pair:
 *   cuMemAlloc_v2 + cuMemFree_v2           1 MiB
 *   cuMemAllocAsync + cuMemFreeAsync       1 MiB on a stream (pool reuse; synchronised
 *                                          between batches, outside the timing)
 *   cuMemCreate + cuMemRelease             2 MiB VMM handle
 * The table gives, per operation, the median over the R children of each mode, the added ns
 * and the ratio. The simulated driver's own costs (a process-shared lock, mmap) are not a real
 * driver's: the added ns is the comparable figure, the ratio is not.
 */

#define MIB     ((uint64_t)1 << 20)
#define PAIRS   64
#define MAXRUNS 9
#define NOPS    3

static const char *const op_name[NOPS] = {
    "cuMemAlloc_v2+cuMemFree_v2", "cuMemAllocAsync+cuMemFreeAsync", "cuMemCreate+cuMemRelease"};

#define now_ns fxc_now_ns

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* ---- child --------------------------------------------------------------------------------- */

#define CK(call)                                                                                   \
        do {                                                                                       \
                CUresult r_ = (call);                                                              \
                if (r_ != CUDA_SUCCESS) {                                                          \
                        fprintf(stderr, "bench_mem: %s: CUresult %d\n", #call, (int)r_);           \
                        exit(1);                                                                   \
                }                                                                                  \
        } while (0)

static CUstream stream;
static CUmemAllocationProp vprop;

static void pairs(int op, unsigned n)
{
        CUdeviceptr p[PAIRS];
        CUmemGenericAllocationHandle h[PAIRS];
        for (unsigned i = 0; i < n; i++) {
                switch (op) {
                case 0:
                        CK(cuMemAlloc_v2(&p[i], MIB));
                        CK(cuMemFree_v2(p[i]));
                        break;
                case 1:
                        CK(cuMemAllocAsync(&p[i], MIB, stream));
                        CK(cuMemFreeAsync(p[i], stream));
                        break;
                default:
                        CK(cuMemCreate(&h[i], 2 * MIB, &vprop, 0));
                        CK(cuMemRelease(h[i]));
                }
        }
}

static int child(unsigned batches)
{
        CUdevice dev;
        CUcontext ctx;
        CK(cuInit(0));
        CK(cuDeviceGet(&dev, 0));
        CK(cuDevicePrimaryCtxRetain(&ctx, dev));
        CK(cuCtxSetCurrent(ctx));
        CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
        vprop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        vprop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        vprop.location.id = dev;
        static uint64_t t[4096];
        for (int op = 0; op < NOPS; op++) {
                for (unsigned w = 0; w < 30; w++) {
                        pairs(op, PAIRS);
                        CK(cuStreamSynchronize(stream));
                }
                for (unsigned b = 0; b < batches; b++) {
                        uint64_t t0 = now_ns();
                        pairs(op, PAIRS);
                        t[b] = (now_ns() - t0) / PAIRS;
                        CK(cuStreamSynchronize(stream));
                }
                qsort(t, batches, sizeof(t[0]), cmp_u64);
                printf("M %d %" PRIu64 "\n", op, t[batches / 2]);
        }
        fflush(stdout);
        CK(cuStreamDestroy_v2(stream));
        CK(cuDevicePrimaryCtxRelease_v2(dev));
        return 0;
}

/* ---- parent -------------------------------------------------------------------------------- */

static char dir[64], sim_dir[96], region[112], uuid[KERF_UUID_LEN], self[PATH_MAX], shim[PATH_MAX],
    libdir[PATH_MAX];

static int setup(void)
{
        char exe[PATH_MAX - 64];
        if (fxc_self(self, sizeof(self), exe, sizeof(exe)) < 0)
                return -1;
        fxc_lib_paths(exe, shim, sizeof(shim), libdir, sizeof(libdir));
        if (access(shim, R_OK) < 0) {
                fprintf(stderr, "bench_mem: shim %s: %s\n", shim, strerror(errno));
                return -1;
        }
        snprintf(dir, sizeof(dir), "/tmp/kerf-bench-mem-XXXXXX");
        if (!mkdtemp(dir))
                return -1;
        snprintf(sim_dir, sizeof(sim_dir), "%s/node", dir);
        snprintf(region, sizeof(region), "%s/slice", dir);
        int rc = fxc_node_create(sim_dir, 1);
        kerf_sim_gpu_info gi;
        if (rc < 0 || fxc_node_gpu0(sim_dir, NULL, &gi) < 0) {
                fprintf(stderr, "bench_mem: simulated node: %d\n", rc);
                return -1;
        }
        snprintf(uuid, sizeof(uuid), "%s", gi.uuid);
        if ((rc = fxc_region_create(region, gi.mem_total / 2, gi.mem_total, 100, 100, 1)) < 0) {
                fprintf(stderr, "bench_mem: region: %s\n", strerror(-rc));
                return -1;
        }
        return 0;
}

/* Runs one child; fills med[NOPS]. */
static int run_child(bool with_shim, unsigned batches, uint64_t *med)
{
        char bs[16];
        fxc_env b;
        fxc_env_fill(&b, shim, region, sim_dir, uuid, libdir);
        snprintf(bs, sizeof(bs), "%u", batches);
        char *envp[520];
        size_t ne = fxc_env_inherit(envp, 500, false);
        fxc_env_push(envp, &ne, &b, with_shim);
        envp[ne++] = "KERF_SLICE_ABI=2";
        envp[ne] = NULL;
        int out[2];
        if (pipe2(out, O_CLOEXEC) < 0)
                return -1;
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        char *argv[] = {self, "--child", bs, NULL};
        pid_t pid;
        int e = posix_spawn(&pid, self, &fa, NULL, argv, envp);
        posix_spawn_file_actions_destroy(&fa);
        close(out[1]);
        if (e) {
                close(out[0]);
                fprintf(stderr, "bench_mem: spawn: %s\n", strerror(e));
                return -1;
        }
        FILE *f = fdopen(out[0], "r");
        char line[128];
        int got = 0;
        while (f && fgets(line, sizeof(line), f)) {
                int op;
                uint64_t ns;
                if (sscanf(line, "M %d %" SCNu64, &op, &ns) == 2 && op >= 0 && op < NOPS) {
                        med[op] = ns;
                        got++;
                }
        }
        if (f)
                fclose(f);
        int st;
        waitpid(pid, &st, 0);
        return got == NOPS && WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

int main(int argc, char **argv)
{
        if (argc == 3 && !strcmp(argv[1], "--child"))
                return child((unsigned)strtoul(argv[2], NULL, 10));
        unsigned runs = 3, batches = 300;
        for (int i = 1; i + 1 < argc; i += 2) {
                if (!strcmp(argv[i], "--runs"))
                        runs = (unsigned)strtoul(argv[i + 1], NULL, 10);
                else if (!strcmp(argv[i], "--batches"))
                        batches = (unsigned)strtoul(argv[i + 1], NULL, 10);
        }
        if (!runs || runs > MAXRUNS || batches < 10 || batches > 4096) {
                fprintf(stderr, "usage: bench_mem [--runs 1..%d] [--batches 10..4096]\n", MAXRUNS);
                return 2;
        }
        if (setup() < 0)
                return 1;
        uint64_t med[2][NOPS][MAXRUNS];
        int rc = 0;
        for (unsigned r = 0; r < runs && !rc; r++)
                for (int m = 0; m < 2 && !rc; m++) {
                        uint64_t v[NOPS];
                        rc = run_child(m == 1, batches, v);
                        for (int op = 0; op < NOPS; op++)
                                med[m][op][r] = v[op];
                }
        fxc_rmdir(dir, NULL, "bench_mem");
        if (rc) {
                fprintf(stderr, "bench_mem: a child failed\n");
                return 1;
        }
        printf("== shim memory calls: median ns per pair (%u runs x %u batches x %d pairs per "
               "mode, alternating); SIMULATED driver\n",
               runs, batches, PAIRS);
        printf("%-32s %10s %10s %10s %7s\n", "pair", "direct ns", "shim ns", "added ns", "ratio");
        for (int op = 0; op < NOPS; op++) {
                qsort(med[0][op], runs, sizeof(uint64_t), cmp_u64);
                qsort(med[1][op], runs, sizeof(uint64_t), cmp_u64);
                uint64_t d = med[0][op][runs / 2], s = med[1][op][runs / 2];
                printf("%-32s %10" PRIu64 " %10" PRIu64 " %+10" PRId64 " %7.2f\n", op_name[op], d,
                       s, (int64_t)(s - d), d ? (double)s / (double)d : 0.0);
        }
        return 0;
}
