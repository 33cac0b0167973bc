/* SPDX-License-Identifier: Apache-2.0 */
/* compute_child.c - driver-API workloads for the compute-share tests (test_compute*.c) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "cuda_abi.h"

/*
 * compute_child MODE COST_US RUN_MS [GAP_US]
 *   async  cuLaunchKernel, 8..16 kernels kept queued (events every 8 launches)
 *   ex     the same through cuLaunchKernelEx
 *   coop   the same through cuLaunchCooperativeKernel
 *   graph  a captured graph of 4 kernels (cost COST_US each), launched like async
 *   sync   cuLaunchKernel + cuCtxSynchronize after every launch
 *   infer  cuLaunchKernel + cuStreamSynchronize, then GAP_US of host time; prints
 *          "vlat p50_us p99_us n" (start event before the launch to end event after it, on
 *          the device clock: queueing behind a neighbour counts, host noise does not) and
 *          "lat p50_us p99_us n" (host latency of launch + sync) at the end; the first
 *          300 ms are a warm-up and not counted
 *   idle   16 launches + sync, prints "idle", sleeps RUN_MS, then 16 launches + sync and
 *          exits at once (the background thread's idle cadence; the exit hook's counts)
 * Prints "ready" once its context and module are set up, then runs RUN_MS ms. Exit 0 when
 * every driver call succeeded.
 *
 * The simulated engine sleeps until each kernel's end; with the default 50 us timer slack its
 * event timestamps land ~55 us late, which the simulated device time does not count. The test
 * programs narrow that gap (PR_SET_TIMERSLACK 1 ns, inherited by the engine worker created by
 * this thread) so that measured and simulated device time agree as on a real GPU.
 */

#define CK(call)                                                                                   \
        do {                                                                                       \
                CUresult r_ = (call);                                                              \
                if (r_ != CUDA_SUCCESS) {                                                          \
                        fprintf(stderr, "compute_child: %s: %d\n", #call, (int)r_);                \
                        exit(2);                                                                   \
                }                                                                                  \
        } while (0)

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
        if (argc < 4) {
                fprintf(stderr, "usage: compute_child MODE COST_US RUN_MS [GAP_US]\n");
                return 2;
        }
        const char *mode = argv[1];
        unsigned cost = (unsigned)atoi(argv[2]);
        uint64_t run_ns = (uint64_t)atoll(argv[3]) * 1000000ULL;
        unsigned gap_us = argc > 4 ? (unsigned)atoi(argv[4]) : 0;
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);

        char image[128];
        snprintf(image, sizeof(image), "KERFSIM-MODULE 1\nkernel spin cost_us=%u\n", cost);
        CUcontext ctx;
        CUmodule mod;
        CUfunction f;
        CUstream s;
        CUevent ev[4];
        CK(cuInit(0));
        CK(cuCtxCreate_v4(&ctx, NULL, 0, 0));
        CK(cuModuleLoadData(&mod, image));
        CK(cuModuleGetFunction(&f, mod, "spin"));
        CK(cuStreamCreate(&s, 0));
        for (int i = 0; i < 4; i++)
                CK(cuEventCreate(&ev[i], 0));
        CUgraphExec gx = NULL;
        if (!strcmp(mode, "graph")) {
                CUgraph g;
                CK(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_RELAXED));
                for (int i = 0; i < 4; i++)
                        CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
                CK(cuStreamEndCapture(s, &g));
                CK(cuGraphInstantiateWithFlags(&gx, g, 0));
        }
        printf("ready\n");
        fflush(stdout);

        if (!strcmp(mode, "idle")) {
                for (int round = 0; round < 2; round++) {
                        for (int k = 0; k < 16; k++)
                                CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
                        CK(cuCtxSynchronize());
                        if (round)
                                break;
                        printf("idle\n");
                        fflush(stdout);
                        usleep((useconds_t)(run_ns / 1000));
                }
                return 0;
        }

        uint64_t *lat = NULL, *vlat = NULL;
        size_t nlat = 0, cap = 0, vcap = 0;
        uint64_t t_start = now_ns(), t_end = t_start + run_ns, i = 0, groups = 0;
        while (now_ns() < t_end) {
                if (!strcmp(mode, "sync")) {
                        CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
                        CK(cuCtxSynchronize());
                        continue;
                }
                if (!strcmp(mode, "infer")) {
                        uint64_t t0 = now_ns();
                        CK(cuEventRecord(ev[0], s));
                        CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
                        CK(cuEventRecord(ev[1], s));
                        CK(cuStreamSynchronize(s));
                        if (t0 - t_start < 300000000ULL) {
                                if (gap_us)
                                        usleep(gap_us);
                                continue;
                        }
                        if (nlat == cap) {
                                cap = cap ? cap * 2 : 1024;
                                lat = realloc(lat, cap * sizeof(*lat));
                                if (!lat)
                                        return 2;
                        }
                        float ms = 0;
                        CK(cuEventElapsedTime(&ms, ev[0], ev[1]));
                        if (nlat == vcap) {
                                vcap = vcap ? vcap * 2 : 1024;
                                vlat = realloc(vlat, vcap * sizeof(*vlat));
                                if (!vlat)
                                        return 2;
                        }
                        vlat[nlat] = (uint64_t)((double)ms * 1e6);
                        lat[nlat++] = now_ns() - t0;
                        if (gap_us)
                                usleep(gap_us);
                        continue;
                }
                if (!strcmp(mode, "graph")) {
                        CK(cuGraphLaunch(gx, s));
                } else if (!strcmp(mode, "ex")) {
                        CUlaunchConfig c = {.gridDimX = 1,
                                            .gridDimY = 1,
                                            .gridDimZ = 1,
                                            .blockDimX = 32,
                                            .blockDimY = 1,
                                            .blockDimZ = 1,
                                            .hStream = s};
                        CK(cuLaunchKernelEx(&c, f, NULL, NULL));
                } else if (!strcmp(mode, "coop")) {
                        CK(cuLaunchCooperativeKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL));
                } else {
                        CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
                }
                /* keep 8..16 launches queued (graphs: 2..4 graphs) */
                unsigned per = strcmp(mode, "graph") ? 8 : 2;
                if (++i % per == 0) {
                        CK(cuEventRecord(ev[groups % 4], s));
                        if (groups >= 1)
                                CK(cuEventSynchronize(ev[(groups - 1) % 4]));
                        groups++;
                }
        }
        CK(cuCtxSynchronize());
        if (nlat) {
                qsort(vlat, nlat, sizeof(*vlat), cmp_u64);
                printf("vlat %llu %llu %zu\n", (unsigned long long)(vlat[nlat / 2] / 1000),
                       (unsigned long long)(vlat[nlat * 99 / 100] / 1000), nlat);
                qsort(lat, nlat, sizeof(*lat), cmp_u64);
                printf("lat %llu %llu %zu\n", (unsigned long long)(lat[nlat / 2] / 1000),
                       (unsigned long long)(lat[nlat * 99 / 100] / 1000), nlat);
        }
        printf("done\n");
        fflush(stdout);
        free(lat);
        free(vlat);
        return 0;
}
