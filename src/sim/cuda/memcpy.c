/* SPDX-License-Identifier: Apache-2.0 */
/* memcpy.c - cuMemcpy* and cuMemset*: stream-ordered copies into lazily backed device memory */
#include <string.h>

#include "copy.h"

CUresult kc__submit_ops(const kc_op *ops, size_t n, CUstream h, int mode, CUdeviceptr d1, size_t n1,
                        CUdeviceptr d2, size_t n2)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, mode & PT, &s);
        if (!r && ((d1 && !kc__mem_range_ok(d1, n1)) || (d2 && !kc__mem_range_ok(d2, n2))))
                r = CUDA_ERROR_INVALID_VALUE;
        if (!r && (mode & SYNC) && s->cap_status)
                r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        for (size_t i = 0; i < n && !r; i++)
                r = kc__submit(s, &ops[i]);
        uint64_t upto = 0;
        if (!r) {
                kc__engine_lock(s->ctx);
                upto = s->submitted;
                kc__engine_unlock(s->ctx);
        }
        kc__unlock();
        if (!r && (mode & SYNC))
                kc__engine_wait_stream(s, upto);
        return r;
}

/* One operation: see kc__submit_ops. */
static CUresult go(const kc_op *op, CUstream h, int mode, CUdeviceptr d1, size_t n1, CUdeviceptr d2,
                   size_t n2)
{
        return kc__submit_ops(op, 1, h, mode, d1, n1, d2, n2);
}

static CUresult copy(void *dst, const void *src, size_t n, CUstream h, int mode, bool dst_dev,
                     bool src_dev)
{
        if (!n)
                return kc__check_init();
        if (!dst || !src)
                return CUDA_ERROR_INVALID_VALUE;
        kc_op op = {.kind = KC_OP_COPY};
        op.u.copy.dst = dst;
        op.u.copy.src = src;
        op.u.copy.n = n;
        return go(&op, h, mode, dst_dev ? (CUdeviceptr)(uintptr_t)dst : 0, n,
                  src_dev ? (CUdeviceptr)(uintptr_t)src : 0, n);
}

KERF_CUDA_EXPORT CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n)
{
        return copy(P(d), P(s), n, NULL, SYNC, false, false);
}
KERF_CUDA_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr d, CUdeviceptr s, size_t n)
{
        return copy(P(d), P(s), n, NULL, SYNC | PT, false, false);
}
KERF_CUDA_EXPORT CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
        return copy(P(d), P(s), n, h, 0, false, false);
}
KERF_CUDA_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
        return copy(P(d), P(s), n, h, PT, false, false);
}
KERF_CUDA_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n)
{
        return copy(P(d), s, n, NULL, SYNC, true, false);
}
KERF_CUDA_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *s, size_t n)
{
        return copy(P(d), s, n, NULL, SYNC | PT, true, false);
}
KERF_CUDA_EXPORT CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n)
{
        return copy(d, P(s), n, NULL, SYNC, false, true);
}
KERF_CUDA_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *d, CUdeviceptr s, size_t n)
{
        return copy(d, P(s), n, NULL, SYNC | PT, false, true);
}
KERF_CUDA_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n)
{
        return copy(P(d), P(s), n, NULL, SYNC, true, true);
}
KERF_CUDA_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr d, CUdeviceptr s, size_t n)
{
        return copy(P(d), P(s), n, NULL, SYNC | PT, true, true);
}
KERF_CUDA_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream h)
{
        return copy(P(d), s, n, h, 0, true, false);
}
KERF_CUDA_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void *s, size_t n,
                                                    CUstream h)
{
        return copy(P(d), s, n, h, PT, true, false);
}
KERF_CUDA_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream h)
{
        return copy(d, P(s), n, h, 0, false, true);
}
KERF_CUDA_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *d, CUdeviceptr s, size_t n, CUstream h)
{
        return copy(d, P(s), n, h, PT, false, true);
}
KERF_CUDA_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream h)
{
        return copy(P(d), P(s), n, h, 0, true, true);
}
KERF_CUDA_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n,
                                                    CUstream h)
{
        return copy(P(d), P(s), n, h, PT, true, true);
}

static CUresult copy2d(const CUDA_MEMCPY2D *c, CUstream h, int mode)
{
        if (!c)
                return CUDA_ERROR_INVALID_VALUE;
        if (c->srcMemoryType == CU_MEMORYTYPE_ARRAY || c->dstMemoryType == CU_MEMORYTYPE_ARRAY)
                return CUDA_ERROR_NOT_SUPPORTED; /* array copies are not simulated */
        size_t sp = c->srcPitch ? c->srcPitch : c->WidthInBytes;
        size_t dp = c->dstPitch ? c->dstPitch : c->WidthInBytes;
        if (sp < c->WidthInBytes + c->srcXInBytes || dp < c->WidthInBytes + c->dstXInBytes)
                return CUDA_ERROR_INVALID_VALUE;
        if (!c->WidthInBytes || !c->Height)
                return kc__check_init();
        kc_op op = {.kind = KC_OP_COPY2D};
        op.u.c2d = *c;
        op.u.c2d.srcPitch = sp;
        op.u.c2d.dstPitch = dp;
        bool sd = c->srcMemoryType != CU_MEMORYTYPE_HOST;
        bool dd = c->dstMemoryType != CU_MEMORYTYPE_HOST;
        if (!(sd ? c->srcDevice : (CUdeviceptr)(uintptr_t)c->srcHost) ||
            !(dd ? c->dstDevice : (CUdeviceptr)(uintptr_t)c->dstHost))
                return CUDA_ERROR_INVALID_VALUE;
        size_t slen = (c->srcY + c->Height - 1) * sp + c->srcXInBytes + c->WidthInBytes;
        size_t dlen = (c->dstY + c->Height - 1) * dp + c->dstXInBytes + c->WidthInBytes;
        return go(&op, h, mode, dd ? c->dstDevice : 0, dlen, sd ? c->srcDevice : 0, slen);
}

KERF_CUDA_EXPORT CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *c)
{
        return copy2d(c, NULL, SYNC);
}
KERF_CUDA_EXPORT CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *c)
{
        return copy2d(c, NULL, SYNC | PT);
}
KERF_CUDA_EXPORT CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *c, CUstream h)
{
        return copy2d(c, h, 0);
}
KERF_CUDA_EXPORT CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *c, CUstream h)
{
        return copy2d(c, h, PT);
}

static CUresult set(CUdeviceptr d, uint32_t v, size_t n, unsigned width, CUstream h, int mode)
{
        if (!n)
                return kc__check_init();
        if (!d || (width == 4 && d % 4))
                return CUDA_ERROR_INVALID_VALUE;
        kc_op op = kc__set_op(width == 4 ? KC_OP_SET32 : KC_OP_SET8, d, v, n);
        return go(&op, h, mode, d, n * width, 0, 0);
}

KERF_CUDA_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char uc, size_t N)
{
        return set(d, uc, N, 1, NULL, SYNC);
}
KERF_CUDA_EXPORT CUresult cuMemsetD8_v2_ptds(CUdeviceptr d, unsigned char uc, size_t N)
{
        return set(d, uc, N, 1, NULL, SYNC | PT);
}
KERF_CUDA_EXPORT CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int ui, size_t N)
{
        return set(d, ui, N, 4, NULL, SYNC);
}
KERF_CUDA_EXPORT CUresult cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned int ui, size_t N)
{
        return set(d, ui, N, 4, NULL, SYNC | PT);
}
KERF_CUDA_EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char uc, size_t N, CUstream h)
{
        return set(d, uc, N, 1, h, 0);
}
KERF_CUDA_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char uc, size_t N,
                                               CUstream h)
{
        return set(d, uc, N, 1, h, PT);
}
KERF_CUDA_EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int ui, size_t N, CUstream h)
{
        return set(d, ui, N, 4, h, 0);
}
KERF_CUDA_EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int ui, size_t N,
                                                CUstream h)
{
        return set(d, ui, N, 4, h, PT);
}
