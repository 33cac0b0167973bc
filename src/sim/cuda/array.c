/* SPDX-License-Identifier: Apache-2.0 */
/* array.c - CUDA arrays and mipmapped arrays, charged to the device like any allocation */
#include <stdlib.h>

#include "mem.h"

#include "cuda_array_size.h" /* after mem.h, which sets the driver's KERF_CUDA_EXPORT */

typedef struct kc_arr {
        struct kc_arr *next;
        int kind; /* KC_H_ARRAY or KC_H_MIPMAP */
        kc_ctx *ctx;
        void *mem;
        size_t bytes;
        uint64_t charged;
} kc_arr;

static kc_arr *arrays;

/* Bytes of a w x h x d array (0 dims count as 1), or 0 when the descriptor is invalid: an
 * unknown format, a channel count other than 1, 2 or 4, or a size too large to describe. */
static size_t desc_bytes(size_t w, size_t h, size_t d, CUarray_format f, unsigned ch)
{
        if (ch != 1 && ch != 2 && ch != 4)
                return 0;
        uint64_t n = kerf_cuda_array_bytes(w, h, d, f, ch, 0);
        return n > SIZE_MAX ? 0 : (size_t)n;
}

static CUresult arr_new(int kind, size_t bytes, void **ret)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        uint64_t charge = kc_round_up(bytes, KC_GRAN);
        if (charge < bytes)
                return CUDA_ERROR_OUT_OF_MEMORY;
        kc__lock();
        r = kc__mem_charge(ctx->dev, charge);
        kc_arr *a = r ? NULL : calloc(1, sizeof(*a));
        void *mem = a ? kc__map_lazy(bytes) : NULL;
        if (!mem) {
                if (!r)
                        kc__mem_uncharge(ctx->dev, charge);
                free(a);
                kc__unlock();
                return r ? r : CUDA_ERROR_OUT_OF_MEMORY;
        }
        a->kind = kind;
        a->ctx = ctx;
        a->mem = mem;
        a->bytes = bytes;
        a->charged = charge;
        a->next = arrays;
        arrays = a;
        kc__handle_add(a, kind);
        kc__unlock();
        *ret = a;
        return CUDA_SUCCESS;
}

static void arr_free(kc_arr *a)
{
        for (kc_arr **pp = &arrays; *pp; pp = &(*pp)->next)
                if (*pp == a) {
                        *pp = a->next;
                        break;
                }
        kc__handle_del(a);
        kc__unmap_lazy(a->mem, a->bytes);
        kc__mem_uncharge(a->ctx->dev, a->charged);
        free(a);
}

void kc__arrays_ctx_destroyed(kc_ctx *ctx)
{
        kc_arr **pp = &arrays;
        while (*pp) {
                if ((*pp)->ctx == ctx)
                        arr_free(*pp);
                else
                        pp = &(*pp)->next;
        }
}

static CUresult arr_destroy(void *h, int kind)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc__lock();
        if (!kc__handle_ok(h, kind)) {
                kc__unlock();
                return CUDA_ERROR_INVALID_HANDLE;
        }
        arr_free(h);
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *d)
{
        if (!pHandle || !d)
                return CUDA_ERROR_INVALID_VALUE;
        size_t b = desc_bytes(d->Width, d->Height, 0, d->Format, d->NumChannels);
        if (!b)
                return CUDA_ERROR_INVALID_VALUE;
        void *h;
        CUresult r = arr_new(KC_H_ARRAY, b, &h);
        if (!r)
                *pHandle = h;
        return r;
}

KERF_CUDA_EXPORT CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
        if (!pHandle || !d)
                return CUDA_ERROR_INVALID_VALUE;
        if (d->Depth && !d->Height && !(d->Flags & CUDA_ARRAY3D_LAYERED))
                return CUDA_ERROR_INVALID_VALUE;
        size_t b = desc_bytes(d->Width, d->Height, d->Depth, d->Format, d->NumChannels);
        if (!b)
                return CUDA_ERROR_INVALID_VALUE;
        void *h;
        CUresult r = arr_new(KC_H_ARRAY, b, &h);
        if (!r)
                *pHandle = h;
        return r;
}

KERF_CUDA_EXPORT CUresult cuArrayDestroy(CUarray hArray)
{
        return arr_destroy(hArray, KC_H_ARRAY);
}

KERF_CUDA_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle,
                                                 const CUDA_ARRAY3D_DESCRIPTOR *d,
                                                 unsigned int numMipmapLevels)
{
        if (!pHandle || !d || !numMipmapLevels)
                return CUDA_ERROR_INVALID_VALUE;
        size_t total = 0, w = d->Width, h = d->Height, z = d->Depth;
        bool layered = d->Flags & CUDA_ARRAY3D_LAYERED;
        for (unsigned l = 0; l < numMipmapLevels; l++) {
                size_t b = desc_bytes(w, h, z, d->Format, d->NumChannels);
                if (!b)
                        return CUDA_ERROR_INVALID_VALUE;
                if (__builtin_add_overflow(total, b, &total))
                        return CUDA_ERROR_INVALID_VALUE;
                if (w == 1 && h <= 1 && (z <= 1 || layered) && l + 1 < numMipmapLevels)
                        return CUDA_ERROR_INVALID_VALUE; /* more levels than the extent allows */
                w = w > 1 ? w / 2 : 1;
                h = h > 1 ? h / 2 : h;
                z = layered ? z : (z > 1 ? z / 2 : z);
        }
        void *hd;
        CUresult r = arr_new(KC_H_MIPMAP, total, &hd);
        if (!r)
                *pHandle = hd;
        return r;
}

KERF_CUDA_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
        return arr_destroy(hMipmappedArray, KC_H_MIPMAP);
}
