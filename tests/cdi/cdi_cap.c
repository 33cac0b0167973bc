/* SPDX-License-Identifier: Apache-2.0 */
/* cdi_cap.c - runs inside a container given a kerf CDI slice device: loads libcuda.so.1 the
 * way a CUDA program does (the loader's path: the spec's LD_LIBRARY_PATH), makes a context on
 * device 0 and prints what cuMemGetInfo reports (the slice's cap, through the shim and the
 * simulated driver), then tries to allocate more than the cap. Exit 0 when the over-cap
 * allocation was refused. */
#include <dlfcn.h>
#include <stdio.h>

typedef int (*init_fn)(unsigned);
typedef int (*devget_fn)(int *, int);
typedef int (*ctx_fn)(void **, int);
typedef int (*setcur_fn)(void *);
typedef int (*info_fn)(size_t *, size_t *);
typedef int (*alloc_fn)(unsigned long long *, size_t);

int main(void)
{
        void *h = dlopen("libcuda.so.1", RTLD_NOW), *ctx = NULL;
        size_t freeb = 0, total = 0;
        unsigned long long p = 0;
        int dev = 0, rc;
        if (!h) {
                fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror());
                return 3;
        }
        init_fn cu_init = (init_fn)dlsym(h, "cuInit");
        devget_fn cu_devget = (devget_fn)dlsym(h, "cuDeviceGet");
        ctx_fn cu_retain = (ctx_fn)dlsym(h, "cuDevicePrimaryCtxRetain");
        setcur_fn cu_setcur = (setcur_fn)dlsym(h, "cuCtxSetCurrent");
        info_fn cu_info = (info_fn)dlsym(h, "cuMemGetInfo_v2");
        alloc_fn cu_alloc = (alloc_fn)dlsym(h, "cuMemAlloc_v2");
        if (!cu_init || !cu_devget || !cu_retain || !cu_setcur || !cu_info || !cu_alloc) {
                fprintf(stderr, "libcuda.so.1 lacks a driver entry point\n");
                return 3;
        }
        if ((rc = cu_init(0)) || (rc = cu_devget(&dev, 0)) || (rc = cu_retain(&ctx, dev)) ||
            (rc = cu_setcur(ctx)) || (rc = cu_info(&freeb, &total))) {
                fprintf(stderr, "CUDA setup failed: error %d\n", rc);
                return 4;
        }
        printf("cuMemGetInfo total=%zu free=%zu\n", total, freeb);
        rc = cu_alloc(&p, total + (1u << 20));
        printf("over-cap allocation of %zu bytes: error %d\n", total + (1u << 20), rc);
        return rc != 0 ? 0 : 5;
}
