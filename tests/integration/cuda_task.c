/* SPDX-License-Identifier: Apache-2.0 */
/* cuda_task.c - a small CUDA driver-API program for the integration tests: finds libcuda.so.1
 * the way a real one does (the loader's search path, LD_LIBRARY_PATH included), makes a
 * context on device 0, allocates, then every 100 ms for ACTIVE_S seconds memsets and launches
 * a simulated kernel (20 ms of device time; docs/SIMULATOR.md "Module image") and syncs, then
 * sleeps IDLE_S more. With NOSHIM=1 in its environment it first re-executes itself without
 * LD_PRELOAD (a tenant bypassing the shim). Prints what it did; exit 0 on success. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*init_fn)(unsigned);
typedef int (*devget_fn)(int *, int);
typedef int (*ctx_fn)(void **, int);
typedef int (*setcur_fn)(void *);
typedef int (*alloc_fn)(unsigned long long *, size_t);
typedef int (*memset_fn)(unsigned long long, unsigned char, size_t);
typedef int (*sync_fn)(void);
typedef int (*modload_fn)(void **, const void *);
typedef int (*getfn_fn)(void **, void *, const char *);
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, void *, void **, void **);

extern char **environ;

int main(int argc, char **argv)
{
        double active = argc > 1 ? atof(argv[1]) : 1, idle = argc > 2 ? atof(argv[2]) : 0;
        struct timespec tick = {0, 100000000L};
        unsigned long long ptr = 0;
        void *h, *ctx = NULL, *mod = NULL, *fn = NULL;
        int dev = 0, rc;

        if (getenv("NOSHIM") && getenv("LD_PRELOAD")) {
                unsetenv("LD_PRELOAD");
                execv("/proc/self/exe", argv);
                perror("execv");
                return 2;
        }
        h = dlopen("libcuda.so.1", RTLD_NOW);
        if (!h) {
                fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror());
                return 3;
        }
        init_fn cu_init = (init_fn)dlsym(h, "cuInit");
        devget_fn cu_devget = (devget_fn)dlsym(h, "cuDeviceGet");
        ctx_fn cu_retain = (ctx_fn)dlsym(h, "cuDevicePrimaryCtxRetain");
        setcur_fn cu_setcur = (setcur_fn)dlsym(h, "cuCtxSetCurrent");
        alloc_fn cu_alloc = (alloc_fn)dlsym(h, "cuMemAlloc_v2");
        memset_fn cu_memset = (memset_fn)dlsym(h, "cuMemsetD8_v2");
        sync_fn cu_sync = (sync_fn)dlsym(h, "cuCtxSynchronize");
        modload_fn cu_modload = (modload_fn)dlsym(h, "cuModuleLoadData");
        getfn_fn cu_getfn = (getfn_fn)dlsym(h, "cuModuleGetFunction");
        launch_fn cu_launch = (launch_fn)dlsym(h, "cuLaunchKernel");
        if (!cu_init || !cu_devget || !cu_retain || !cu_setcur || !cu_alloc || !cu_memset ||
            !cu_sync || !cu_modload || !cu_getfn || !cu_launch) {
                fprintf(stderr, "libcuda.so.1 lacks a driver entry point\n");
                return 4;
        }
        if ((rc = cu_init(0)) || (rc = cu_devget(&dev, 0)) || (rc = cu_retain(&ctx, dev)) ||
            (rc = cu_setcur(ctx)) || (rc = cu_alloc(&ptr, 64u << 20)) ||
            (rc = cu_modload(&mod, "KERFSIM-MODULE 1\nkernel spin cost_us=20000\n")) ||
            (rc = cu_getfn(&fn, mod, "spin"))) {
                fprintf(stderr, "CUDA setup failed: error %d\n", rc);
                return 5;
        }
        printf("cuda ok: context on device 0, 64 MiB at %#llx, preload %s\n", ptr,
               getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "(none)");
        fflush(stdout);
        for (double t = 0; t < active; t += 0.1) {
                cu_memset(ptr, 1, 64u << 20);
                if ((rc = cu_launch(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL))) {
                        fprintf(stderr, "cuLaunchKernel: error %d\n", rc);
                        return 6;
                }
                cu_sync();
                nanosleep(&tick, NULL);
        }
        for (double t = 0; t < idle; t += 0.1)
                nanosleep(&tick, NULL);
        return 0;
}
