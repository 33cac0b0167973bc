/* SPDX-License-Identifier: Apache-2.0 */
/* bench_launch.c - the shim's compute share: added cost per unthrottled cuLaunchKernel, and
 * the share accuracy table (all figures on the simulated driver) */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_abi.h"
#include "test_compute.h"

/*
 * bench_launch [--launches N] [--no-share]
 *
 * 1. Overhead: one process, a simulated node with KERF_SIM_CLOCK=virtual (kernels take no wall
 *    time), a slice region at 90 % (the limiter on), a 1 us kernel (so 90 % is never reached:
 *    every launch is unthrottled). The real simulated cuLaunchKernel and the shim's wrapper are
 *    both resolved in this process (libcuda.so.1 and libkerf-cuda.so dlopened side by side) and
 *    timed in alternating batches of 1000 launches; the figure is the median batch.
 * 2. Share accuracy: compute_child saturating launchers at 10..90 % on separate simulated GPUs
 *    (default clock), the simulator's engine time per 1 s window, as in the tests.
 */

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*init_fn)(unsigned);
typedef CUresult (*ctx_fn)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice);
typedef CUresult (*modload_fn)(CUmodule *, const void *);
typedef CUresult (*getfn_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*sync_fn)(void);

static int cmp_d(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static void *sym(void *h, const char *n)
{
        void *p = dlsym(h, n);
        if (!p) {
                fprintf(stderr, "bench_launch: %s: %s\n", n, dlerror());
                exit(1);
        }
        return p;
}

static int overhead(ct_node *nd, unsigned long launches)
{
        char region[128];
        struct kerf_slice_region *r = ct_region(nd, region, sizeof(region), 90, 90);
        if (!r)
                return -1;
        setenv("KERF_SIM_DIR", nd->sim_dir, 1);
        setenv("KERF_SIM_CLOCK", "virtual", 1);
        setenv("KERF_SLICE_REGION", region, 1);
        setenv("KERF_SLICE_ABI", "2", 1);
        setenv("CUDA_VISIBLE_DEVICES", "7", 1);
        void *cuda = dlopen(KERF_BENCH_CUDA, RTLD_NOW | RTLD_LOCAL);
        void *shim = dlopen(KERF_BENCH_SHIM, RTLD_NOW | RTLD_LOCAL);
        if (!cuda || !shim) {
                fprintf(stderr, "bench_launch: dlopen: %s\n", dlerror());
                return -1;
        }
        launch_fn direct = (launch_fn)sym(cuda, "cuLaunchKernel");
        launch_fn wrapped = (launch_fn)sym(shim, "cuLaunchKernel");
        if (direct == wrapped) {
                fprintf(stderr, "bench_launch: the shim does not wrap cuLaunchKernel\n");
                return -1;
        }
        CUcontext ctx;
        CUmodule mod;
        CUfunction f;
        if (((init_fn)sym(shim, "cuInit"))(0) ||
            ((ctx_fn)sym(shim, "cuCtxCreate_v4"))(&ctx, NULL, 0, 0) ||
            ((modload_fn)sym(cuda, "cuModuleLoadData"))(&mod,
                                                        "KERFSIM-MODULE 1\nkernel k cost_us=1\n") ||
            ((getfn_fn)sym(cuda, "cuModuleGetFunction"))(&f, mod, "k")) {
                fprintf(stderr, "bench_launch: driver setup failed (shim init?)\n");
                return -1;
        }
        sync_fn sync = (sync_fn)sym(cuda, "cuCtxSynchronize");
        /* warm-up: the cost key gets its estimate */
        for (int i = 0; i < 2000; i++)
                wrapped(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
        sync();
        ct_sleep_ms(20);
        /* (a) per launch: direct and wrapped calls alternate, each timed alone (the clock's
         * own cost cancels in the difference); the median launch is an unsampled one.
         * (b) per batch of 200: the mean, which includes the sampled launches (timing events
         * around 1 launch in 64..192). */
        enum { BATCH = 200 };
        unsigned long n = launches / 2;
        unsigned long nb = n / BATCH;
        double *xd = calloc(n, sizeof(double)), *xw = calloc(n, sizeof(double));
        double *bd = calloc(nb, sizeof(double)), *bw = calloc(nb, sizeof(double));
        if (!xd || !xw || !bd || !bw)
                return -1;
        for (unsigned long i = 0; i < n; i++) {
                for (int pass = 0; pass < 2; pass++) {
                        launch_fn fn = (pass ^ (int)(i & 1)) ? wrapped : direct;
                        uint64_t t0 = ct_now();
                        if (fn(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL))
                                return -1;
                        (fn == wrapped ? xw : xd)[i] = (double)(ct_now() - t0);
                }
                if (i % 1000 == 999)
                        sync();
        }
        sync();
        for (unsigned long b = 0; b < nb; b++) {
                for (int pass = 0; pass < 2; pass++) {
                        launch_fn fn = (pass ^ (int)(b & 1)) ? wrapped : direct;
                        uint64_t t0 = ct_now();
                        for (int i = 0; i < BATCH; i++)
                                if (fn(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL))
                                        return -1;
                        (fn == wrapped ? bw : bd)[b] = (double)(ct_now() - t0) / BATCH;
                        sync();
                }
        }
        qsort(xd, n, sizeof(double), cmp_d);
        qsort(xw, n, sizeof(double), cmp_d);
        qsort(bd, nb, sizeof(double), cmp_d);
        qsort(bw, nb, sizeof(double), cmp_d);
        printf("launch overhead (simulated driver, virtual clock, limiter on at 90%%, "
               "unthrottled; clock_gettime included in both):\n");
        printf("  per launch (%lu each): direct median %.0f ns (p10 %.0f, p90 %.0f), through "
               "libkerf-cuda.so median %.0f ns (p10 %.0f, p90 %.0f)\n",
               n, xd[n / 2], xd[n / 10], xd[n * 9 / 10], xw[n / 2], xw[n / 10], xw[n * 9 / 10]);
        printf("  added per launch: median %.0f ns, p10 %.0f ns (ratio of medians %.3f)\n",
               xw[n / 2] - xd[n / 2], xw[n / 10] - xd[n / 10], xw[n / 2] / xd[n / 2]);
        printf("  per batch of %d (mean per launch, sampled launches included): direct median "
               "%.0f ns, wrapped %.0f ns, added %.0f ns (%lu batch pairs); held %llu launches\n",
               BATCH, bd[nb / 2], bw[nb / 2], bw[nb / 2] - bd[nb / 2], nb,
               (unsigned long long)atomic_load(&r->held_launches));
        free(xd);
        free(xw);
        free(bd);
        free(bw);
        kerf_slice_region_unmap(r);
        return 0;
}

static int share_table(void)
{
        static const unsigned targets[] = {10, 30, 50, 70, 90};
        static const char *const modes[][3] = {{"async", "500", NULL},
                                               {"graph", "300", NULL},
                                               {"sync", "2000", NULL},
                                               {"async", "2000", "KERF_SIM_CLOCK=virtual"},
                                               {"sync", "5000", "KERF_SIM_CLOCK=virtual"}};
        printf("share accuracy (simulated engine time, every 1 s window after 0.5 s, 3 s runs, "
               "5 runs side by side on 5 simulated GPUs; clock: default = wall-clock engine, "
               "virtual = KERF_SIM_CLOCK=virtual):\n");
        printf("  %-6s %-8s %-8s %6s %7s %12s %6s\n", "mode", "kernel", "clock", "target", "mean",
               "worst window", "MAE");
        for (unsigned m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
                ct_node node, *nd = &node; /* a fresh node: the clock is fixed per engine */
                if (ct_setup(nd) < 0)
                        return -1;
                int idx[5];
                uint64_t t0[5];
                for (unsigned i = 0; i < 5; i++) {
                        const char *args[] = {modes[m][0], modes[m][1], "3000", NULL};
                        idx[i] =
                            ct_spawn(nd, (int)i, targets[i], targets[i], -1, modes[m][2], args);
                        if (idx[i] < 0)
                                return -1;
                }
                for (unsigned i = 0; i < 5; i++) {
                        if (!ct_expect(&nd->p[idx[i]], "ready", 10000))
                                return -1;
                        t0[i] = ct_now();
                }
                for (unsigned i = 0; i < 5; i++)
                        ct_wait(&nd->p[idx[i]]);
                for (unsigned i = 0; i < 5; i++) {
                        double w, mae, mean;
                        ct_windows(nd, &nd->p[idx[i]], t0[i] + 500 * CT_MS, t0[i] + 2900 * CT_MS,
                                   targets[i], &w, &mae, &mean);
                        printf("  %-6s %5s us %-8s %5u%% %6.1f%% %9.1f pt %6.2f\n", modes[m][0],
                               modes[m][1], modes[m][2] ? "virtual" : "default", targets[i], mean,
                               w, mae);
                }
                fflush(stdout);
                ct_teardown(nd);
        }
        return 0;
}

int main(int argc, char **argv)
{
        unsigned long launches = 400000;
        bool share = true;
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--launches") && i + 1 < argc)
                        launches = strtoul(argv[++i], NULL, 10);
                else if (!strcmp(argv[i], "--no-share"))
                        share = false;
                else {
                        fprintf(stderr, "usage: bench_launch [--launches N] [--no-share]\n");
                        return 2;
                }
        }
        char self[1024], child[1100];
        if (fxc_self(NULL, 0, self, sizeof(self)) == 0 && !getenv("KERF_COMPUTE_CHILD")) {
                snprintf(child, sizeof(child), "%s/bench_launch_child", self);
                setenv("KERF_COMPUTE_CHILD", child, 1);
        }
        printf("== shim compute share (all figures simulated: kerf-sim libcuda)\n");
        int rc = share ? share_table() : 0;
        ct_node nd;
        if (!rc && ct_setup(&nd) < 0)
                return 1;
        if (!rc) {
                rc = overhead(&nd, launches);
                ct_teardown(&nd);
        }
        return rc ? 1 : 0;
}
