/* SPDX-License-Identifier: Apache-2.0 */
/* memops2.c - 16-bit and 2D memsets, 3D, peer and unaligned copies, built from the engine's
 * existing operations (8/32-bit sets and 2D copies) */
#include <stdlib.h>
#include <string.h>

#include "copy.h"

/* One row of n 16-bit values at d (2-byte aligned): byte sets for an unaligned head or an odd
 * tail, one 32-bit set for the middle. Writes at most 5 ops. */
static size_t row16(kc_op *ops, CUdeviceptr d, unsigned short us, size_t n)
{
        size_t k = 0;
        unsigned char lo = us & 0xff, hi = us >> 8;
        if (lo == hi) {
                ops[k++] = kc__set_op(KC_OP_SET8, d, lo, n * 2);
                return k;
        }
        if (d % 4) {
                ops[k++] = kc__set_op(KC_OP_SET8, d, lo, 1);
                ops[k++] = kc__set_op(KC_OP_SET8, d + 1, hi, 1);
                d += 2;
                n--;
        }
        if (n >= 2) {
                /* little-endian: the value at the lower address is the low half */
                ops[k++] = kc__set_op(KC_OP_SET32, d, (uint32_t)us | (uint32_t)us << 16, n / 2);
                d += n / 2 * 4;
                n %= 2;
        }
        if (n) {
                ops[k++] = kc__set_op(KC_OP_SET8, d, lo, 1);
                ops[k++] = kc__set_op(KC_OP_SET8, d + 1, hi, 1);
        }
        return k;
}

/* A 2D set: the first row from set ops, the others copied from it by one 2D copy whose source
 * pitch is 0. `es` is the element size (1, 2 or 4); width is in elements. */
static CUresult set2d(CUdeviceptr d, size_t pitch, uint32_t v, size_t width, size_t height,
                      unsigned es, CUstream h, int mode)
{
        if (!width || !height)
                return kc__check_init();
        if (!d || d % es || width > SIZE_MAX / es)
                return CUDA_ERROR_INVALID_VALUE;
        size_t wb = width * es;
        if (height > 1 && (pitch < wb || pitch % es))
                return CUDA_ERROR_INVALID_VALUE;
        if (height > 1 && (height - 1) > (SIZE_MAX - wb) / pitch)
                return CUDA_ERROR_INVALID_VALUE;
        kc_op ops[6];
        size_t k = 0;
        if (es == 1)
                ops[k++] = kc__set_op(KC_OP_SET8, d, v & 0xff, width);
        else if (es == 4)
                ops[k++] = kc__set_op(KC_OP_SET32, d, v, width);
        else
                k = row16(ops, d, (unsigned short)v, width);
        if (height > 1) {
                kc_op c = {.kind = KC_OP_COPY2D};
                c.u.c2d.srcMemoryType = CU_MEMORYTYPE_DEVICE;
                c.u.c2d.srcDevice = d;
                c.u.c2d.srcPitch = 0; /* every destination row reads the first row */
                c.u.c2d.dstMemoryType = CU_MEMORYTYPE_DEVICE;
                c.u.c2d.dstDevice = d + pitch;
                c.u.c2d.dstPitch = pitch;
                c.u.c2d.WidthInBytes = wb;
                c.u.c2d.Height = height - 1;
                ops[k++] = c;
        }
        size_t extent = (height - 1) * pitch + wb;
        return kc__submit_ops(ops, k, h, mode, d, extent, 0, 0);
}

static CUresult set16(CUdeviceptr d, unsigned short us, size_t n, CUstream h, int mode)
{
        return set2d(d, 0, us, n, 1, 2, h, mode);
}

KERF_CUDA_EXPORT CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short us, size_t N)
{
        return set16(d, us, N, NULL, SYNC);
}
KERF_CUDA_EXPORT CUresult cuMemsetD16_v2_ptds(CUdeviceptr d, unsigned short us, size_t N)
{
        return set16(d, us, N, NULL, SYNC | PT);
}
KERF_CUDA_EXPORT CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short us, size_t N, CUstream h)
{
        return set16(d, us, N, h, 0);
}
KERF_CUDA_EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short us, size_t N,
                                                CUstream h)
{
        return set16(d, us, N, h, PT);
}

KERF_CUDA_EXPORT CUresult cuMemsetD2D8_v2(CUdeviceptr d, size_t p, unsigned char uc, size_t w,
                                          size_t hgt)
{
        return set2d(d, p, uc, w, hgt, 1, NULL, SYNC);
}
KERF_CUDA_EXPORT CUresult cuMemsetD2D8_v2_ptds(CUdeviceptr d, size_t p, unsigned char uc, size_t w,
                                               size_t hgt)
{
        return set2d(d, p, uc, w, hgt, 1, NULL, SYNC | PT);
}
KERF_CUDA_EXPORT CUresult cuMemsetD2D16_v2(CUdeviceptr d, size_t p, unsigned short us, size_t w,
                                           size_t hgt)
{
        return set2d(d, p, us, w, hgt, 2, NULL, SYNC);
}
KERF_CUDA_EXPORT CUresult cuMemsetD2D16_v2_ptds(CUdeviceptr d, size_t p, unsigned short us,
                                                size_t w, size_t hgt)
{
        return set2d(d, p, us, w, hgt, 2, NULL, SYNC | PT);
}
KERF_CUDA_EXPORT CUresult cuMemsetD2D32_v2(CUdeviceptr d, size_t p, unsigned int ui, size_t w,
                                           size_t hgt)
{
        return set2d(d, p, ui, w, hgt, 4, NULL, SYNC);
}
KERF_CUDA_EXPORT CUresult cuMemsetD2D32_v2_ptds(CUdeviceptr d, size_t p, unsigned int ui, size_t w,
                                                size_t hgt)
{
        return set2d(d, p, ui, w, hgt, 4, NULL, SYNC | PT);
}
KERF_CUDA_EXPORT CUresult cuMemsetD2D8Async(CUdeviceptr d, size_t p, unsigned char uc, size_t w,
                                            size_t hgt, CUstream h)
{
        return set2d(d, p, uc, w, hgt, 1, h, 0);
}
KERF_CUDA_EXPORT CUresult cuMemsetD2D8Async_ptsz(CUdeviceptr d, size_t p, unsigned char uc,
                                                 size_t w, size_t hgt, CUstream h)
{
        return set2d(d, p, uc, w, hgt, 1, h, PT);
}
KERF_CUDA_EXPORT CUresult cuMemsetD2D16Async(CUdeviceptr d, size_t p, unsigned short us, size_t w,
                                             size_t hgt, CUstream h)
{
        return set2d(d, p, us, w, hgt, 2, h, 0);
}
KERF_CUDA_EXPORT CUresult cuMemsetD2D16Async_ptsz(CUdeviceptr d, size_t p, unsigned short us,
                                                  size_t w, size_t hgt, CUstream h)
{
        return set2d(d, p, us, w, hgt, 2, h, PT);
}
KERF_CUDA_EXPORT CUresult cuMemsetD2D32Async(CUdeviceptr d, size_t p, unsigned int ui, size_t w,
                                             size_t hgt, CUstream h)
{
        return set2d(d, p, ui, w, hgt, 4, h, 0);
}
KERF_CUDA_EXPORT CUresult cuMemsetD2D32Async_ptsz(CUdeviceptr d, size_t p, unsigned int ui,
                                                  size_t w, size_t hgt, CUstream h)
{
        return set2d(d, p, ui, w, hgt, 4, h, PT);
}

/* ---- 3D copies: one 2D copy per slice ---- */

static CUresult copy3d(const CUDA_MEMCPY3D *c, CUstream h, int mode)
{
        if (!c)
                return CUDA_ERROR_INVALID_VALUE;
        if (c->srcMemoryType == CU_MEMORYTYPE_ARRAY || c->dstMemoryType == CU_MEMORYTYPE_ARRAY)
                return CUDA_ERROR_NOT_SUPPORTED; /* array copies are not simulated */
        if (c->srcLOD || c->dstLOD || c->reserved0 || c->reserved1)
                return CUDA_ERROR_INVALID_VALUE;
        size_t sp = c->srcPitch ? c->srcPitch : c->WidthInBytes;
        size_t dp = c->dstPitch ? c->dstPitch : c->WidthInBytes;
        size_t sh = c->srcHeight ? c->srcHeight : c->Height;
        size_t dh = c->dstHeight ? c->dstHeight : c->Height;
        if (sp < c->WidthInBytes + c->srcXInBytes || dp < c->WidthInBytes + c->dstXInBytes)
                return CUDA_ERROR_INVALID_VALUE;
        if (c->Depth > 1 && (sh < c->Height + c->srcY || dh < c->Height + c->dstY))
                return CUDA_ERROR_INVALID_VALUE;
        if (!c->WidthInBytes || !c->Height || !c->Depth)
                return kc__check_init();
        bool sd = c->srcMemoryType != CU_MEMORYTYPE_HOST;
        bool dd = c->dstMemoryType != CU_MEMORYTYPE_HOST;
        if (!(sd ? c->srcDevice : (CUdeviceptr)(uintptr_t)c->srcHost) ||
            !(dd ? c->dstDevice : (CUdeviceptr)(uintptr_t)c->dstHost))
                return CUDA_ERROR_INVALID_VALUE;
        if (c->Depth > SIZE_MAX / sizeof(kc_op))
                return CUDA_ERROR_INVALID_VALUE;
        kc_op *ops = malloc(c->Depth * sizeof(*ops));
        if (!ops)
                return CUDA_ERROR_OUT_OF_MEMORY;
        for (size_t z = 0; z < c->Depth; z++) {
                memset(&ops[z], 0, sizeof(ops[z]));
                ops[z].kind = KC_OP_COPY2D;
                CUDA_MEMCPY2D *o = &ops[z].u.c2d;
                o->srcXInBytes = c->srcXInBytes;
                o->srcY = (c->srcZ + z) * sh + c->srcY;
                o->srcMemoryType = c->srcMemoryType;
                o->srcHost = c->srcHost;
                o->srcDevice = c->srcDevice;
                o->srcPitch = sp;
                o->dstXInBytes = c->dstXInBytes;
                o->dstY = (c->dstZ + z) * dh + c->dstY;
                o->dstMemoryType = c->dstMemoryType;
                o->dstHost = c->dstHost;
                o->dstDevice = c->dstDevice;
                o->dstPitch = dp;
                o->WidthInBytes = c->WidthInBytes;
                o->Height = c->Height;
        }
        size_t slen = ((c->srcZ + c->Depth - 1) * sh + c->srcY + c->Height - 1) * sp +
                      c->srcXInBytes + c->WidthInBytes;
        size_t dlen = ((c->dstZ + c->Depth - 1) * dh + c->dstY + c->Height - 1) * dp +
                      c->dstXInBytes + c->WidthInBytes;
        CUresult r = kc__submit_ops(ops, c->Depth, h, mode, dd ? c->dstDevice : 0, dlen,
                                    sd ? c->srcDevice : 0, slen);
        free(ops);
        return r;
}

KERF_CUDA_EXPORT CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *c)
{
        return copy3d(c, NULL, SYNC);
}
KERF_CUDA_EXPORT CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *c)
{
        return copy3d(c, NULL, SYNC | PT);
}
KERF_CUDA_EXPORT CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *c, CUstream h)
{
        return copy3d(c, h, 0);
}
KERF_CUDA_EXPORT CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *c, CUstream h)
{
        return copy3d(c, h, PT);
}

/* ---- peer copies: contexts are checked, then it is an ordinary copy (one address space) ---- */

static bool ctx_ok(CUcontext c)
{
        return c && kc__handle_ok(c, KC_H_CTX);
}

static CUresult copy3d_peer(const CUDA_MEMCPY3D_PEER *p, CUstream h, int mode)
{
        if (!p)
                return CUDA_ERROR_INVALID_VALUE;
        CUresult r = kc__check_init();
        if (r)
                return r;
        if ((p->srcMemoryType != CU_MEMORYTYPE_HOST && !ctx_ok(p->srcContext)) ||
            (p->dstMemoryType != CU_MEMORYTYPE_HOST && !ctx_ok(p->dstContext)))
                return CUDA_ERROR_INVALID_CONTEXT;
        CUDA_MEMCPY3D c;
        memset(&c, 0, sizeof(c));
        c.srcXInBytes = p->srcXInBytes;
        c.srcY = p->srcY;
        c.srcZ = p->srcZ;
        c.srcLOD = p->srcLOD;
        c.srcMemoryType = p->srcMemoryType;
        c.srcHost = p->srcHost;
        c.srcDevice = p->srcDevice;
        c.srcArray = p->srcArray;
        c.srcPitch = p->srcPitch;
        c.srcHeight = p->srcHeight;
        c.dstXInBytes = p->dstXInBytes;
        c.dstY = p->dstY;
        c.dstZ = p->dstZ;
        c.dstLOD = p->dstLOD;
        c.dstMemoryType = p->dstMemoryType;
        c.dstHost = p->dstHost;
        c.dstDevice = p->dstDevice;
        c.dstArray = p->dstArray;
        c.dstPitch = p->dstPitch;
        c.dstHeight = p->dstHeight;
        c.WidthInBytes = p->WidthInBytes;
        c.Height = p->Height;
        c.Depth = p->Depth;
        return copy3d(&c, h, mode);
}

KERF_CUDA_EXPORT CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *p)
{
        return copy3d_peer(p, NULL, SYNC);
}
KERF_CUDA_EXPORT CUresult cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER *p)
{
        return copy3d_peer(p, NULL, SYNC | PT);
}
KERF_CUDA_EXPORT CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *p, CUstream h)
{
        return copy3d_peer(p, h, 0);
}
KERF_CUDA_EXPORT CUresult cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER *p, CUstream h)
{
        return copy3d_peer(p, h, PT);
}

static CUresult copy_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
                          size_t n, CUstream h, int mode)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!ctx_ok(dctx) || !ctx_ok(sctx))
                return CUDA_ERROR_INVALID_CONTEXT;
        if (!n)
                return CUDA_SUCCESS;
        if (!dst || !src)
                return CUDA_ERROR_INVALID_VALUE;
        kc_op op = {.kind = KC_OP_COPY};
        op.u.copy.dst = P(dst);
        op.u.copy.src = P(src);
        op.u.copy.n = n;
        return kc__submit_ops(&op, 1, h, mode, dst, n, src, n);
}

KERF_CUDA_EXPORT CUresult cuMemcpyPeer(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc,
                                       size_t n)
{
        return copy_peer(d, dc, s, sc, n, NULL, SYNC);
}
KERF_CUDA_EXPORT CUresult cuMemcpyPeer_ptds(CUdeviceptr d, CUcontext dc, CUdeviceptr s,
                                            CUcontext sc, size_t n)
{
        return copy_peer(d, dc, s, sc, n, NULL, SYNC | PT);
}
KERF_CUDA_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr s,
                                            CUcontext sc, size_t n, CUstream h)
{
        return copy_peer(d, dc, s, sc, n, h, 0);
}
KERF_CUDA_EXPORT CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr d, CUcontext dc, CUdeviceptr s,
                                                 CUcontext sc, size_t n, CUstream h)
{
        return copy_peer(d, dc, s, sc, n, h, PT);
}

/* Unaligned 2D copies differ from cuMemcpy2D only in the hardware path they may take. */
KERF_CUDA_EXPORT CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *c)
{
        return cuMemcpy2D_v2(c);
}
KERF_CUDA_EXPORT CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *c)
{
        return cuMemcpy2D_v2_ptds(c);
}
