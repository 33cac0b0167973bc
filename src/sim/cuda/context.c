/* SPDX-License-Identifier: Apache-2.0 */
/* context.c - primary and created contexts, the per-thread context stack, stream lookup */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "legacy.h"

#define CTX_MAGIC   0x4b435458u
#define STACK_DEPTH 64
#define PTS_SLOTS   16

static __thread struct {
        kc_ctx *stack[STACK_DEPTH];
        int depth;
        struct {
                kc_ctx *ctx;
                kc_stream *s;
        } pts[PTS_SLOTS];
} tls;

static bool ctx_ok(const kc_ctx *c)
{
        return c && kc__handle_ok(c, KC_H_CTX);
}

kc_ctx *kc__ctx_current(void)
{
        if (!tls.depth)
                return NULL;
        kc_ctx *c = tls.stack[tls.depth - 1];
        return ctx_ok(c) ? c : NULL;
}

CUresult kc__ctx_require(kc_ctx **ret)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc_ctx *c = kc__ctx_current();
        if (!c)
                return CUDA_ERROR_INVALID_CONTEXT;
        *ret = c;
        return CUDA_SUCCESS;
}

static kc_stream *stream_new(kc_ctx *ctx, int kind, unsigned flags, int prio)
{
        kc_stream *s = calloc(1, sizeof(*s));
        if (!s)
                return NULL;
        s->magic = 0x4b435354u;
        s->ctx = ctx;
        s->kind = kind;
        s->flags = flags;
        s->priority = prio;
        kc__engine_lock(ctx);
        s->next = ctx->streams;
        ctx->streams = s;
        kc__engine_unlock(ctx);
        kc__handle_add(s, KC_H_STREAM);
        return s;
}

/* Exposed to stream.c through kc__stream_new. */
kc_stream *kc__stream_new(kc_ctx *ctx, unsigned flags, int prio);
kc_stream *kc__stream_new(kc_ctx *ctx, unsigned flags, int prio)
{
        return stream_new(ctx, 0, flags, prio);
}

/* Unlinks and frees an idle stream. */
void kc__stream_free(kc_stream *s);
void kc__stream_free(kc_stream *s)
{
        kc_ctx *ctx = s->ctx;
        kc__handle_del(s);
        kc__engine_lock(ctx);
        for (kc_stream **pp = &ctx->streams; *pp; pp = &(*pp)->next)
                if (*pp == s) {
                        *pp = s->next;
                        break;
                }
        kc__engine_unlock(ctx);
        free(s);
}

CUresult kc__stream_resolve(CUstream h, bool per_thread, kc_stream **ret)
{
        if (h && h != CU_STREAM_LEGACY && h != CU_STREAM_PER_THREAD) {
                if (!kc__handle_ok(h, KC_H_STREAM))
                        return CUDA_ERROR_INVALID_HANDLE;
                *ret = h;
                return CUDA_SUCCESS;
        }
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (h == CU_STREAM_LEGACY || (!h && !per_thread)) {
                *ret = ctx->legacy;
                return CUDA_SUCCESS;
        }
        int free_slot = -1;
        for (int i = 0; i < PTS_SLOTS; i++) {
                if (tls.pts[i].ctx == ctx && kc__handle_ok(tls.pts[i].s, KC_H_STREAM) &&
                    tls.pts[i].s->ctx == ctx) {
                        *ret = tls.pts[i].s;
                        return CUDA_SUCCESS;
                }
                if (free_slot < 0 && (!tls.pts[i].ctx || !ctx_ok(tls.pts[i].ctx)))
                        free_slot = i;
        }
        kc_stream *s = stream_new(ctx, 2, 0, 0);
        if (!s)
                return CUDA_ERROR_OUT_OF_MEMORY;
        if (free_slot >= 0) {
                tls.pts[free_slot].ctx = ctx;
                tls.pts[free_slot].s = s;
        }
        *ret = s;
        return CUDA_SUCCESS;
}

static CUresult check_flags(unsigned flags)
{
        if (flags & ~(unsigned)CU_CTX_FLAGS_MASK)
                return CUDA_ERROR_INVALID_VALUE;
        unsigned sched = flags & CU_CTX_SCHED_MASK;
        if (sched == 3 || sched > 4)
                return CUDA_ERROR_INVALID_VALUE;
        return CUDA_SUCCESS;
}

/* Creates a context on device d, charging its overhead. Caller holds kc_g.mu. */
static CUresult ctx_new(int d, unsigned flags, bool primary, kc_ctx **ret)
{
        kc_dev *dev = &kc_g.devs[d];
        int err = kerf_sim_proc_attach(kc_g.sim, kc_g.pid, dev->target);
        if (err < 0)
                return kc__from_errno(err);
        CUresult r = kc__mem_charge(d, kc_g.ctx_overhead);
        if (r)
                return r;
        kc_ctx *c = calloc(1, sizeof(*c));
        if (!c) {
                kc__mem_uncharge(d, kc_g.ctx_overhead);
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        c->magic = CTX_MAGIC;
        c->dev = d;
        c->flags = flags;
        c->primary = primary;
        c->charged = true;
        if (kc__engine_attach(d, c) < 0) {
                kc__mem_uncharge(d, kc_g.ctx_overhead);
                free(c);
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        c->legacy = stream_new(c, 1, 0, 0);
        if (!c->legacy) {
                kc__engine_detach(d, c);
                kc__mem_uncharge(d, kc_g.ctx_overhead);
                free(c);
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        dev->n_ctx++;
        kc__handle_add(c, KC_H_CTX);
        *ret = c;
        return CUDA_SUCCESS;
}

/* Tears down ctx after its work finished: allocations, streams, charge. Takes kc_g.mu. */
static void ctx_free(kc_ctx *c)
{
        kc__engine_wait_ctx(c);
        kc__lock();
        kc_dev *dev = &kc_g.devs[c->dev];
        kc__handle_del(c);
        kc__ctxmisc_forget(c);
        kc__mem_ctx_destroyed(c);
        while (c->streams)
                kc__stream_free(c->streams);
        kc__engine_detach(c->dev, c);
        kc__mem_uncharge(c->dev, kc_g.ctx_overhead);
        dev->n_ctx--;
        if (!dev->n_ctx && !dev->charged)
                kerf_sim_proc_detach(kc_g.sim, kc_g.pid, dev->target);
        kc__unlock();
        free(c);
        /* Pop it from this thread's stack wherever it appears. */
        int j = 0;
        for (int i = 0; i < tls.depth; i++)
                if (tls.stack[i] != c)
                        tls.stack[j++] = tls.stack[i];
        tls.depth = j;
}

static CUresult push(kc_ctx *c)
{
        if (tls.depth >= STACK_DEPTH)
                return CUDA_ERROR_INVALID_VALUE;
        tls.stack[tls.depth++] = c;
        return CUDA_SUCCESS;
}

static CUresult create_common(CUcontext *pctx, const CUexecAffinityParam *aff, int naff,
                              unsigned flags, CUdevice dev)
{
        if (!pctx)
                return CUDA_ERROR_INVALID_VALUE;
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        if ((r = check_flags(flags)))
                return r;
        if (naff < 0 || (naff > 0 && !aff))
                return CUDA_ERROR_INVALID_VALUE;
        if (naff > 0) /* SM-count affinity needs MPS, which the simulator does not model */
                return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
        kc_ctx *c;
        kc__lock();
        r = ctx_new(dev, flags, false, &c);
        kc__unlock();
        if (r)
                return r;
        if ((r = push(c))) {
                ctx_free(c);
                return r;
        }
        *pctx = c;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
        return create_common(pctx, NULL, 0, flags, dev);
}

KERF_CUDA_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray,
                                         int numParams, unsigned int flags, CUdevice dev)
{
        return create_common(pctx, paramsArray, numParams, flags, dev);
}

KERF_CUDA_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *p, unsigned int flags,
                                         CUdevice dev)
{
        if (p && p->cigParams)
                return CUDA_ERROR_NOT_SUPPORTED;
        return create_common(pctx, p ? p->execAffinityParams : NULL,
                             p ? p->numExecAffinityParams : 0, flags, dev);
}

KERF_CUDA_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!ctx)
                return CUDA_ERROR_INVALID_VALUE;
        if (!ctx_ok(ctx) || ctx->primary)
                return CUDA_ERROR_INVALID_CONTEXT;
        ctx_free(ctx);
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
        if (!pctx)
                return CUDA_ERROR_INVALID_VALUE;
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        kc__lock();
        kc_dev *d = &kc_g.devs[dev];
        if (!d->primary) {
                kc_ctx *c;
                r = ctx_new(dev, d->primary_flags, true, &c);
                if (r) {
                        kc__unlock();
                        return r;
                }
                d->primary = c;
                d->primary_refs = 0;
        }
        d->primary_refs++;
        *pctx = d->primary;
        kc__unlock();
        return CUDA_SUCCESS;
}

static CUresult primary_drop(CUdevice dev, bool reset)
{
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        kc__lock();
        kc_dev *d = &kc_g.devs[dev];
        kc_ctx *c = d->primary;
        if (!c) {
                kc__unlock();
                return reset ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
        }
        if (!reset && --d->primary_refs > 0) {
                kc__unlock();
                return CUDA_SUCCESS;
        }
        d->primary = NULL;
        d->primary_refs = 0;
        kc__unlock();
        ctx_free(c);
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
        return primary_drop(dev, false);
}

KERF_CUDA_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
        return primary_drop(dev, false);
}

KERF_CUDA_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
        return primary_drop(dev, true);
}

KERF_CUDA_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
        return primary_drop(dev, true);
}

KERF_CUDA_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        if (!flags || !active)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        *flags = kc_g.devs[dev].primary_flags;
        *active = kc_g.devs[dev].primary != NULL;
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        if ((r = check_flags(flags)))
                return r;
        kc__lock();
        kc_g.devs[dev].primary_flags = flags;
        if (kc_g.devs[dev].primary)
                kc_g.devs[dev].primary->flags = flags;
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
        return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

KERF_CUDA_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!ctx) {
                if (tls.depth)
                        tls.depth--;
                return CUDA_SUCCESS;
        }
        if (!ctx_ok(ctx))
                return CUDA_ERROR_INVALID_CONTEXT;
        if (tls.depth)
                tls.stack[tls.depth - 1] = ctx;
        else
                tls.stack[tls.depth++] = ctx;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!pctx)
                return CUDA_ERROR_INVALID_VALUE;
        *pctx = kc__ctx_current();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!ctx_ok(ctx))
                return CUDA_ERROR_INVALID_CONTEXT;
        return push(ctx);
}

KERF_CUDA_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!tls.depth)
                return CUDA_ERROR_INVALID_CONTEXT;
        kc_ctx *c = tls.stack[--tls.depth];
        if (pctx)
                *pctx = c;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
        if (!device)
                return CUDA_ERROR_INVALID_VALUE;
        kc_ctx *c;
        CUresult r = kc__ctx_require(&c);
        if (r)
                return r;
        *device = c->dev;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
        if (!ctx)
                return cuCtxGetDevice(device);
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!device)
                return CUDA_ERROR_INVALID_VALUE;
        if (!ctx_ok(ctx))
                return CUDA_ERROR_INVALID_CONTEXT;
        *device = ctx->dev;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuCtxGetFlags(unsigned int *flags)
{
        if (!flags)
                return CUDA_ERROR_INVALID_VALUE;
        kc_ctx *c;
        CUresult r = kc__ctx_require(&c);
        if (r)
                return r;
        *flags = c->flags;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!version)
                return CUDA_ERROR_INVALID_VALUE;
        if (!ctx)
                ctx = kc__ctx_current();
        if (!ctx_ok(ctx))
                return CUDA_ERROR_INVALID_CONTEXT;
        *version = KC_DRIVER_API;
        return CUDA_SUCCESS;
}

static CUresult sync_ctx(kc_ctx *c)
{
        kc__engine_wait_ctx(c);
        kc__pool_release_excess(c->dev);
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuCtxSynchronize(void)
{
        kc_ctx *c;
        CUresult r = kc__ctx_require(&c);
        return r ? r : sync_ctx(c);
}

KERF_CUDA_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
        if (!ctx)
                return cuCtxSynchronize();
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!ctx_ok(ctx))
                return CUDA_ERROR_INVALID_CONTEXT;
        return sync_ctx(ctx);
}
