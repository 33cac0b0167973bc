/* SPDX-License-Identifier: Apache-2.0 */
/* launch.c - launch wrappers (plain, Ex, cooperative, graph): gate -> real call -> gate end */
#include "compute.h"
#include "syms.h"

/*
 * Every way a kernel reaches the GPU goes through the same gate (limiter.c): the plain,
 * extended and cooperative launches and graph launches, each with its per-thread default
 * stream (_ptsz) variant. A missing real entry point answers CUDA_ERROR_NOT_SUPPORTED.
 */

#define ENSURE(fn)                                                                                 \
        do {                                                                                       \
                CUresult e_ = ks__ensure();                                                        \
                if (e_ != CUDA_SUCCESS)                                                            \
                        return e_;                                                                 \
                if (!ks_real.fn)                                                                   \
                        return CUDA_ERROR_NOT_SUPPORTED;                                           \
        } while (0)

static CUresult kernel(bool ptsz, bool coop, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                       unsigned bx, unsigned by, unsigned bz, unsigned smem, CUstream h,
                       void **params, void **extra)
{
        ks_launch l;
        CUresult r;
        ks__gate_begin(&l, KS_KIND_KERNEL, f, ks__dims_hash(gx, gy, gz, bx, by, bz, smem), h, ptsz);
        if (coop)
                r = (ptsz ? ks_real.cuLaunchCooperativeKernel_ptsz
                          : ks_real.cuLaunchCooperativeKernel)(f, gx, gy, gz, bx, by, bz, smem, h,
                                                               params);
        else
                r = (ptsz ? ks_real.cuLaunchKernel_ptsz : ks_real.cuLaunchKernel)(
                    f, gx, gy, gz, bx, by, bz, smem, h, params, extra);
        ks__gate_end(&l, r);
        return r;
}

KS_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                  unsigned int bx, unsigned int by, unsigned int bz,
                                  unsigned int smem, CUstream h, void **params, void **extra)
{
        ENSURE(cuLaunchKernel);
        return kernel(false, false, f, gx, gy, gz, bx, by, bz, smem, h, params, extra);
}

KS_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                       unsigned int gz, unsigned int bx, unsigned int by,
                                       unsigned int bz, unsigned int smem, CUstream h,
                                       void **params, void **extra)
{
        ENSURE(cuLaunchKernel_ptsz);
        return kernel(true, false, f, gx, gy, gz, bx, by, bz, smem, h, params, extra);
}

KS_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy,
                                             unsigned int gz, unsigned int bx, unsigned int by,
                                             unsigned int bz, unsigned int smem, CUstream h,
                                             void **params)
{
        ENSURE(cuLaunchCooperativeKernel);
        return kernel(false, true, f, gx, gy, gz, bx, by, bz, smem, h, params, NULL);
}

KS_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                                  unsigned int gz, unsigned int bx, unsigned int by,
                                                  unsigned int bz, unsigned int smem, CUstream h,
                                                  void **params)
{
        ENSURE(cuLaunchCooperativeKernel_ptsz);
        return kernel(true, true, f, gx, gy, gz, bx, by, bz, smem, h, params, NULL);
}

static CUresult kernel_ex(bool ptsz, const CUlaunchConfig *c, CUfunction f, void **params,
                          void **extra)
{
        ks_launch l;
        if (!c) /* let the driver answer */
                return (ptsz ? ks_real.cuLaunchKernelEx_ptsz
                             : ks_real.cuLaunchKernelEx)(c, f, params, extra);
        ks__gate_begin(&l, KS_KIND_KERNEL, f,
                       ks__dims_hash(c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
                                     c->blockDimY, c->blockDimZ, c->sharedMemBytes),
                       c->hStream, ptsz);
        CUresult r =
            (ptsz ? ks_real.cuLaunchKernelEx_ptsz : ks_real.cuLaunchKernelEx)(c, f, params, extra);
        ks__gate_end(&l, r);
        return r;
}

KS_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params,
                                    void **extra)
{
        ENSURE(cuLaunchKernelEx);
        return kernel_ex(false, config, f, params, extra);
}

KS_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **params,
                                         void **extra)
{
        ENSURE(cuLaunchKernelEx_ptsz);
        return kernel_ex(true, config, f, params, extra);
}

static CUresult graph(bool ptsz, CUgraphExec x, CUstream h)
{
        ks_launch l;
        ks__gate_begin(&l, KS_KIND_GRAPH, x, 0, h, ptsz);
        CUresult r = (ptsz ? ks_real.cuGraphLaunch_ptsz : ks_real.cuGraphLaunch)(x, h);
        ks__gate_end(&l, r);
        return r;
}

KS_EXPORT CUresult cuGraphLaunch(CUgraphExec x, CUstream h)
{
        ENSURE(cuGraphLaunch);
        return graph(false, x, h);
}

KS_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec x, CUstream h)
{
        ENSURE(cuGraphLaunch_ptsz);
        return graph(true, x, h);
}
