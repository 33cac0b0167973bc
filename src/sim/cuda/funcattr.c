/* SPDX-License-Identifier: Apache-2.0 */
/* funcattr.c - function/kernel attributes, occupancy, module queries and module globals */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "module.h"

/* What the simulator reports for a kernel it cannot inspect: no static shared, constant or
 * local memory, 32 registers per thread, the full block size. */
#define KC_FUNC_REGS      32
#define KC_SMEM_DEFAULT   (48 * 1024) /* dynamic shared memory without opting in */
#define KC_SMEM_RESERVED  1024        /* per block, reserved by the system (sm_80 and later) */
#define KC_MAX_CLUSTER    8
#define KC_MAX_CLUSTER_NP 16

void kc__func_attr_init(kc_func *f)
{
        memset(&f->attrs, 0, sizeof(f->attrs));
        f->attrs.max_dyn_smem = KC_SMEM_DEFAULT;
        f->attrs.carveout = -1;
}

static int dev_attr(int d, CUdevice_attribute a)
{
        int v = 0;
        cuDeviceGetAttribute(&v, a, d);
        return v;
}

/* Validates a function handle. Returns its device through *ret_dev. */
static CUresult func_dev(CUfunction f, int *ret_dev)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc_ctx *ctx;
        if ((r = kc__func_check(f, &ctx)))
                return r;
        *ret_dev = ctx->dev;
        return CUDA_SUCCESS;
}

static CUresult attr_get(const kc_func *f, int d, CUfunction_attribute a, int *ret)
{
        const kc_dev *dev = &kc_g.devs[d];
        int cc = (int)(dev->model->cc_major * 10 + dev->model->cc_minor);
        switch (a) {
        case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
                *ret = 1024;
                return CUDA_SUCCESS;
        case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
        case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
        case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
        case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
        case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
                *ret = 0;
                return CUDA_SUCCESS;
        case CU_FUNC_ATTRIBUTE_NUM_REGS:
                *ret = KC_FUNC_REGS;
                return CUDA_SUCCESS;
        case CU_FUNC_ATTRIBUTE_PTX_VERSION:
        case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
                *ret = cc;
                return CUDA_SUCCESS;
        case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
                *ret = f->attrs.max_dyn_smem;
                return CUDA_SUCCESS;
        case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
                *ret = f->attrs.carveout;
                return CUDA_SUCCESS;
        case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
        case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
        case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
                *ret = f->attrs.cluster[a - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH];
                return CUDA_SUCCESS;
        case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
                *ret = f->attrs.non_portable;
                return CUDA_SUCCESS;
        case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
                *ret = f->attrs.sched_pref;
                return CUDA_SUCCESS;
        default:
                return CUDA_ERROR_INVALID_VALUE;
        }
}

/* Only the attributes the driver documents as settable; the rest are read-only. */
static CUresult attr_set(kc_func *f, int d, CUfunction_attribute a, int v)
{
        bool hopper = kc_g.devs[d].model->cc_major >= 9;
        switch (a) {
        case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
                if (v < 0 || v > dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN))
                        return CUDA_ERROR_INVALID_VALUE;
                f->attrs.max_dyn_smem = v;
                return CUDA_SUCCESS;
        case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
                if (v < -1 || v > 100)
                        return CUDA_ERROR_INVALID_VALUE;
                f->attrs.carveout = v;
                return CUDA_SUCCESS;
        case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
        case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
        case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
                if (!hopper)
                        return CUDA_ERROR_NOT_SUPPORTED; /* clusters need sm_90 */
                if (v < 0 || v > (f->attrs.non_portable ? KC_MAX_CLUSTER_NP : KC_MAX_CLUSTER))
                        return CUDA_ERROR_INVALID_VALUE;
                f->attrs.cluster[a - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH] = v;
                return CUDA_SUCCESS;
        case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
                if (!hopper)
                        return CUDA_ERROR_NOT_SUPPORTED;
                if (v != 0 && v != 1)
                        return CUDA_ERROR_INVALID_VALUE;
                f->attrs.non_portable = v;
                return CUDA_SUCCESS;
        case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
                if (v < 0 || v > 2)
                        return CUDA_ERROR_INVALID_VALUE;
                f->attrs.sched_pref = v;
                return CUDA_SUCCESS;
        default:
                return CUDA_ERROR_INVALID_VALUE;
        }
}

/* Validates a kernel handle for device dev (a kernel handle is its function in the simulator;
 * attributes are kept once, not per device). */
static CUresult kernel_check(CUkernel kernel, CUdevice dev)
{
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        return kc__handle_ok(kernel, KC_H_FUNC) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* Once the handle checked out (r, the result of func_dev or kernel_check), reads attribute a
 * of f on device d into *pi (get) or sets it to v, under kc_g.mu. */
static CUresult attr_access(CUresult r, kc_func *f, int d, CUfunction_attribute a, bool get,
                            int *pi, int v)
{
        if (r)
                return r;
        if (get && !pi)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        r = get ? attr_get(f, d, a, pi) : attr_set(f, d, a, v);
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
        int d = 0;
        CUresult r = func_dev(hfunc, &d);
        return attr_access(r, hfunc, d, attrib, true, pi, 0);
}

KERF_CUDA_EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib,
                                             int value)
{
        int d = 0;
        CUresult r = func_dev(hfunc, &d);
        return attr_access(r, hfunc, d, attrib, false, NULL, value);
}

KERF_CUDA_EXPORT CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib,
                                               CUkernel kernel, CUdevice dev)
{
        return attr_access(kernel_check(kernel, dev), (kc_func *)kernel, dev, attrib, true, pi, 0);
}

KERF_CUDA_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val,
                                               CUkernel kernel, CUdevice dev)
{
        return attr_access(kernel_check(kernel, dev), (kc_func *)kernel, dev, attrib, false, NULL,
                           val);
}

/* Once the handle checked out (r), records f's cache preference c (no effect on the
 * simulation). */
static CUresult set_cache(CUresult r, kc_func *f, CUfunc_cache c)
{
        if (r)
                return r;
        if (!kc_cache_config_ok(c))
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        f->attrs.cache_config = c;
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
        int d;
        return set_cache(func_dev(hfunc, &d), hfunc, config);
}

KERF_CUDA_EXPORT CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev)
{
        return set_cache(kernel_check(kernel, dev), (kc_func *)kernel, config);
}

KERF_CUDA_EXPORT CUresult cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config)
{
        int d;
        CUresult r = func_dev(hfunc, &d);
        if (r)
                return r;
        if (!kc_shmem_config_ok(config))
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        hfunc->attrs.shmem_config = config;
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
        int d;
        CUresult r = func_dev(hfunc, &d);
        if (r)
                return r;
        if (!hmod)
                return CUDA_ERROR_INVALID_VALUE;
        *hmod = hfunc->mod;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
        if (!name)
                return CUDA_ERROR_INVALID_VALUE;
        int d;
        CUresult r = func_dev(hfunc, &d);
        if (!r)
                *name = hfunc->name;
        return r;
}

KERF_CUDA_EXPORT CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
        if (!name)
                return CUDA_ERROR_INVALID_VALUE;
        if (!kc__handle_ok(hfunc, KC_H_FUNC))
                return CUDA_ERROR_INVALID_HANDLE;
        *name = ((kc_func *)hfunc)->name;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
        if (!pLib)
                return CUDA_ERROR_INVALID_VALUE;
        if (!kc__handle_ok(kernel, KC_H_FUNC))
                return CUDA_ERROR_INVALID_HANDLE;
        kc_lib *l = ((kc_func *)kernel)->mod->lib;
        if (!l) /* a function of a plain module is not a library kernel */
                return CUDA_ERROR_INVALID_HANDLE;
        *pLib = l;
        return CUDA_SUCCESS;
}

/* Functions are usable as soon as their module loads: always LOADED. */
KERF_CUDA_EXPORT CUresult cuFuncIsLoaded(CUfunctionLoadingState *state, CUfunction function)
{
        if (!state)
                return CUDA_ERROR_INVALID_VALUE;
        int d;
        CUresult r = func_dev(function, &d);
        if (!r)
                *state = CU_FUNCTION_LOADING_STATE_LOADED;
        return r;
}

KERF_CUDA_EXPORT CUresult cuFuncLoad(CUfunction function)
{
        int d;
        return func_dev(function, &d);
}

/* CUDA_MODULE_LOADING=EAGER selects eager loading; the default is lazy (CUDA >= 12.2). */
KERF_CUDA_EXPORT CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!mode)
                return CUDA_ERROR_INVALID_VALUE;
        const char *e = getenv("CUDA_MODULE_LOADING");
        *mode = e && !strcmp(e, "EAGER") ? CU_MODULE_EAGER_LOADING : CU_MODULE_LAZY_LOADING;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!count)
                return CUDA_ERROR_INVALID_VALUE;
        if (!kc__handle_ok(mod, KC_H_MODULE))
                return CUDA_ERROR_INVALID_HANDLE;
        *count = (unsigned)mod->n_funcs;
        return CUDA_SUCCESS;
}

/* Fills up to numFunctions handles, in declaration order. */
KERF_CUDA_EXPORT CUresult cuModuleEnumerateFunctions(CUfunction *functions,
                                                     unsigned int numFunctions, CUmodule mod)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!functions || !numFunctions)
                return CUDA_ERROR_INVALID_VALUE;
        if (!kc__handle_ok(mod, KC_H_MODULE))
                return CUDA_ERROR_INVALID_HANDLE;
        for (size_t i = 0; i < mod->n_funcs && i < numFunctions; i++)
                functions[i] = &mod->funcs[i];
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
        if (!count)
                return CUDA_ERROR_INVALID_VALUE;
        CUmodule m;
        CUresult r = cuLibraryGetModule(&m, lib);
        if (r)
                return r;
        return cuModuleGetFunctionCount(count, m);
}

KERF_CUDA_EXPORT CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels,
                                                    CUlibrary lib)
{
        if (!kernels || !numKernels)
                return CUDA_ERROR_INVALID_VALUE;
        CUmodule m;
        CUresult r = cuLibraryGetModule(&m, lib);
        if (r)
                return r;
        return cuModuleEnumerateFunctions((CUfunction *)kernels, numKernels, m);
}

/* ---- module globals ---- */

CUresult kc__mod_parse_global(kc_mod *m, const char *line)
{
        char name[128], extra[8];
        unsigned long long bytes;
        if (sscanf(line, "global %127s bytes=%llu %7s", name, &bytes, extra) != 2 || !bytes ||
            bytes > SIZE_MAX)
                return CUDA_ERROR_INVALID_IMAGE;
        for (size_t i = 0; i < m->n_globals; i++)
                if (!strcmp(m->globals[i].name, name))
                        return CUDA_ERROR_INVALID_IMAGE; /* duplicate symbol */
        kc_global_var *ng = realloc(m->globals, (m->n_globals + 1) * sizeof(*ng));
        if (!ng)
                return CUDA_ERROR_OUT_OF_MEMORY;
        m->globals = ng;
        kc_global_var *g = &m->globals[m->n_globals++];
        memset(g, 0, sizeof(*g));
        snprintf(g->name, sizeof(g->name), "%s", name);
        g->bytes = (size_t)bytes;
        return CUDA_SUCCESS;
}

CUresult kc__mod_globals_alloc(kc_mod *m)
{
        for (size_t i = 0; i < m->n_globals; i++) {
                /* The module loads into the current context, which cuMemAlloc charges. */
                kc_global_var *g = &m->globals[i];
                CUresult r = cuMemAlloc_v2(&g->dptr, g->bytes);
                if (r)
                        return r;
                kc__lock();
                kc_alloc *a = kc__alloc_find(g->dptr);
                g->id = a ? kc__alloc_id(a) : 0;
                kc__unlock();
        }
        return CUDA_SUCCESS;
}

void kc__mod_globals_free(kc_mod *m)
{
        for (size_t i = 0; i < m->n_globals; i++) {
                CUdeviceptr p = m->globals[i].dptr;
                if (!p)
                        continue;
                /* Destroying the context freed it already; the address may hold another
                 * allocation since, which the id tells apart. */
                kc__lock();
                kc_alloc *a = kc__alloc_find(p);
                bool mine = a && !a->freeing && a->buffer_id && a->buffer_id == m->globals[i].id;
                kc__unlock();
                if (mine)
                        cuMemFree_v2(p);
        }
        free(m->globals);
        m->globals = NULL;
        m->n_globals = 0;
}

KERF_CUDA_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
                                               const char *name)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!name)
                return CUDA_ERROR_INVALID_VALUE;
        if (!kc__handle_ok(hmod, KC_H_MODULE))
                return CUDA_ERROR_INVALID_HANDLE;
        for (size_t i = 0; i < hmod->n_globals; i++)
                if (!strcmp(hmod->globals[i].name, name)) {
                        if (dptr)
                                *dptr = hmod->globals[i].dptr;
                        if (bytes)
                                *bytes = hmod->globals[i].bytes;
                        return CUDA_SUCCESS;
                }
        return CUDA_ERROR_NOT_FOUND;
}

KERF_CUDA_EXPORT CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
                                             const char *name)
{
        CUmodule m;
        CUresult r = cuLibraryGetModule(&m, library);
        if (r)
                return r;
        return cuModuleGetGlobal_v2(dptr, bytes, m, name);
}

/* ---- occupancy ---- */

/* Blocks of `bs` threads using `smem` dynamic shared memory that fit on one SM of device d:
 * limited by threads, registers (KC_FUNC_REGS per thread, per-warp allocation), the block
 * count and shared memory. */
static int blocks_per_sm(const kc_func *f, int d, int bs, size_t smem)
{
        if (bs <= 0 || bs > 1024 || smem > (size_t)f->attrs.max_dyn_smem)
                return 0;
        int warps = (bs + 31) / 32;
        int by_threads =
            dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) / (warps * 32);
        int by_regs = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR) /
                      (warps * 32 * KC_FUNC_REGS);
        int by_blocks = dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
        size_t by_smem =
            (size_t)dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR) /
            (smem + KC_SMEM_RESERVED);
        int n = by_threads < by_regs ? by_threads : by_regs;
        if (by_blocks < n)
                n = by_blocks;
        if (by_smem < (size_t)n)
                n = (int)by_smem;
        return n;
}

static CUresult max_active(int *numBlocks, CUfunction func, int blockSize, size_t smem,
                           unsigned flags)
{
        int d;
        CUresult r = func_dev(func, &d);
        if (r)
                return r;
        if (!numBlocks || blockSize <= 0 ||
            flags > 1) /* 1: CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE */
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        *numBlocks = blocks_per_sm(func, d, blockSize, smem);
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks,
                                                                      CUfunction func,
                                                                      int blockSize,
                                                                      size_t dynamicSMemSize)
{
        return max_active(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

KERF_CUDA_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize, unsigned int flags)
{
        return max_active(numBlocks, func, blockSize, dynamicSMemSize, flags);
}

/* The block size (a multiple of the warp size, from the largest down) that maximises resident
 * threads per SM, as cudaOccupancyMaxPotentialBlockSize computes it. */
static CUresult potential(int *minGridSize, int *blockSize, CUfunction func, CUoccupancyB2DSize b2d,
                          size_t smem, int limit, unsigned flags)
{
        int d;
        CUresult r = func_dev(func, &d);
        if (r)
                return r;
        if (!minGridSize || !blockSize || limit < 0 || flags > 1)
                return CUDA_ERROR_INVALID_VALUE;
        int max_bs = limit && limit < 1024 ? limit : 1024;
        int best_bs = 0, best_blocks = 0, best_threads = 0;
        kc__lock();
        kc_func snap = *func; /* the callback may call back into the driver: run it unlocked */
        kc__unlock();
        for (int bs = max_bs; bs > 0; bs = bs % 32 ? bs / 32 * 32 : bs - 32) {
                size_t s = b2d ? b2d(bs) : smem;
                int n = blocks_per_sm(&snap, d, bs, s);
                if (n * bs > best_threads) {
                        best_threads = n * bs;
                        best_bs = bs;
                        best_blocks = n;
                }
        }
        *minGridSize = best_blocks * (int)kc_g.devs[d].sms;
        *blockSize = best_bs;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize,
                                                           CUfunction func, CUoccupancyB2DSize b2d,
                                                           size_t dynamicSMemSize,
                                                           int blockSizeLimit)
{
        return potential(minGridSize, blockSize, func, b2d, dynamicSMemSize, blockSizeLimit, 0);
}

KERF_CUDA_EXPORT CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(
    int *minGridSize, int *blockSize, CUfunction func, CUoccupancyB2DSize b2d,
    size_t dynamicSMemSize, int blockSizeLimit, unsigned int flags)
{
        return potential(minGridSize, blockSize, func, b2d, dynamicSMemSize, blockSizeLimit, flags);
}

KERF_CUDA_EXPORT CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize,
                                                                  CUfunction func, int numBlocks,
                                                                  int blockSize)
{
        int d;
        CUresult r = func_dev(func, &d);
        if (r)
                return r;
        if (!dynamicSmemSize || numBlocks <= 0 || blockSize <= 0)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        size_t out = 0;
        if (blocks_per_sm(func, d, blockSize, 0) >= numBlocks) {
                size_t per_sm =
                    (size_t)dev_attr(d, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
                size_t each = per_sm / (size_t)numBlocks;
                out = each > KC_SMEM_RESERVED ? each - KC_SMEM_RESERVED : 0;
                if (out > (size_t)func->attrs.max_dyn_smem)
                        out = (size_t)func->attrs.max_dyn_smem;
        }
        kc__unlock();
        *dynamicSmemSize = out;
        return CUDA_SUCCESS;
}

/* ---- thread-block clusters (sm_90) ---- */

/* Clusters are scheduled inside one GPC; the simulator assumes GPCs of 16 SMs (H100/H200 have
 * 16 to 18 usable SMs per GPC) [UNVERIFIED: the exact per-part GPC layout]. */
#define KC_GPC_SMS 16

/* Block size, dynamic shared memory and cluster size of a launch configuration for f; the
 * cluster size is the CLUSTER_DIMENSION attribute, else the function's required one, else 0. */
static CUresult cluster_config(const kc_func *f, const CUlaunchConfig *c, int *bs, size_t *smem,
                               int *csize)
{
        if (!c || (c->numAttrs && !c->attrs))
                return CUDA_ERROR_INVALID_VALUE;
        uint64_t b = (uint64_t)c->blockDimX * c->blockDimY * c->blockDimZ;
        if (!b || b > 1024)
                return CUDA_ERROR_INVALID_VALUE;
        *bs = (int)b;
        *smem = c->sharedMemBytes;
        uint64_t cs = (uint64_t)f->attrs.cluster[0] *
                      (f->attrs.cluster[1] ? f->attrs.cluster[1] : 1) *
                      (f->attrs.cluster[2] ? f->attrs.cluster[2] : 1);
        for (unsigned i = 0; i < c->numAttrs; i++)
                if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
                        cs = (uint64_t)c->attrs[i].value.clusterDim.x *
                             c->attrs[i].value.clusterDim.y * c->attrs[i].value.clusterDim.z;
        *csize = cs > 64 ? 64 : (int)cs;
        return CUDA_SUCCESS;
}

/* The start of both cluster queries: the function's device d, a non-NULL output, sm_90, then
 * the launch configuration. On success kc_g.mu is held: the caller must unlock. */
static CUresult cluster_enter(CUfunction func, const CUlaunchConfig *config, const void *out,
                              int *d, int *bs, size_t *smem, int *cs)
{
        CUresult r = func_dev(func, d);
        if (r)
                return r;
        if (!out)
                return CUDA_ERROR_INVALID_VALUE;
        if (kc_g.devs[*d].model->cc_major < 9)
                return CUDA_ERROR_NOT_SUPPORTED;
        kc__lock();
        r = cluster_config(func, config, bs, smem, cs);
        if (r)
                kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuOccupancyMaxPotentialClusterSize(int *clusterSize, CUfunction func,
                                                             const CUlaunchConfig *config)
{
        int d, bs, cs;
        size_t smem;
        CUresult r = cluster_enter(func, config, clusterSize, &d, &bs, &smem, &cs);
        if (r)
                return r;
        int limit = func->attrs.non_portable ? KC_MAX_CLUSTER_NP : KC_MAX_CLUSTER;
        int per_gpc = blocks_per_sm(func, d, bs, smem) * KC_GPC_SMS;
        bool required = func->attrs.cluster[0] != 0;
        *clusterSize = required ? cs : per_gpc < limit ? per_gpc : limit;
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func,
                                                       const CUlaunchConfig *config)
{
        int d, bs, cs;
        size_t smem;
        CUresult r = cluster_enter(func, config, numClusters, &d, &bs, &smem, &cs);
        if (r)
                return r;
        int limit = func->attrs.non_portable ? KC_MAX_CLUSTER_NP : KC_MAX_CLUSTER;
        if (cs < 1 || cs > limit) {
                r = CUDA_ERROR_INVALID_CLUSTER_SIZE;
        } else {
                int sms = (int)kc_g.devs[d].sms;
                int gpc_sms = sms < KC_GPC_SMS ? sms : KC_GPC_SMS;
                int gpcs = sms / gpc_sms > 0 ? sms / gpc_sms : 1;
                *numClusters = gpcs * (blocks_per_sm(func, d, bs, smem) * gpc_sms / cs);
        }
        kc__unlock();
        return r;
}
