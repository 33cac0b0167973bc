/* SPDX-License-Identifier: Apache-2.0 */
/* stream.c - streams, events, host functions and stream-ordered submission */
#include <stdlib.h>

#include "internal.h"

kc_stream *kc__stream_new(kc_ctx *ctx, unsigned flags, int prio);
void kc__stream_free(kc_stream *s);

CUresult kc__submit(kc_stream *s, const kc_op *tmpl)
{
        CUresult r;
        if (kc__capture_op(s, tmpl, &r))
                return r;
        kc_op *op = malloc(sizeof(*op));
        if (!op)
                return CUDA_ERROR_OUT_OF_MEMORY;
        *op = *tmpl;
        kc__engine_submit(s, op);
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
                                                     int priority)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!phStream || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
                return CUDA_ERROR_INVALID_VALUE;
        if (priority < -5) /* clamp into [greatest, least] = [-5, 0] like the driver */
                priority = -5;
        if (priority > 0)
                priority = 0;
        kc__lock();
        kc_stream *s = kc__stream_new(ctx, flags, priority);
        kc__unlock();
        if (!s)
                return CUDA_ERROR_OUT_OF_MEMORY;
        *phStream = s;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
        return cuStreamCreateWithPriority(phStream, Flags, 0);
}

KERF_CUDA_EXPORT CUresult cuStreamDestroy_v2(CUstream h)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD ||
            !kc__handle_ok(h, KC_H_STREAM) || h->kind != 0)
                return CUDA_ERROR_INVALID_HANDLE;
        /* The driver returns at once and frees after the work; waiting keeps queued work safe. */
        kc__engine_wait_stream(h, 0);
        kc__lock();
        kc__stream_free(h);
        kc__unlock();
        return CUDA_SUCCESS;
}

static CUresult stream_sync(CUstream h, bool pt)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc_stream *s;
        kc__lock();
        r = kc__stream_resolve(h, pt, &s);
        if (!r && s->cap_status) {
                s->cap_status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
                r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        }
        kc__unlock();
        if (r)
                return r;
        if (s->kind == 1)
                kc__engine_wait_ctx(s->ctx); /* the legacy stream waits for all blocking work */
        else
                kc__engine_wait_stream(s, 0);
        kc__pool_release_excess(s->ctx->dev);
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuStreamSynchronize(CUstream h)
{
        return stream_sync(h, false);
}

KERF_CUDA_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream h)
{
        return stream_sync(h, true);
}

static CUresult stream_query(CUstream h, bool pt)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc_stream *s;
        kc__lock();
        r = kc__stream_resolve(h, pt, &s);
        kc__unlock();
        if (r)
                return r;
        if (s->cap_status)
                return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        kc__engine_lock(s->ctx);
        bool idle = s->completed == s->submitted;
        kc__engine_unlock(s->ctx);
        return idle ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

KERF_CUDA_EXPORT CUresult cuStreamQuery(CUstream h)
{
        return stream_query(h, false);
}

KERF_CUDA_EXPORT CUresult cuStreamQuery_ptsz(CUstream h)
{
        return stream_query(h, true);
}

static CUresult wait_event(CUstream h, CUevent ev, unsigned flags, bool pt)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, pt, &s);
        if (!r && !kc__handle_ok(ev, KC_H_EVENT))
                r = CUDA_ERROR_INVALID_HANDLE;
        if (!r && ev->rec_gen) { /* waiting on a never-recorded event is a no-op */
                kc_op op = {.kind = KC_OP_EVENT_WAIT};
                op.u.ev.ev = ev;
                op.u.ev.gen = ev->rec_gen;
                r = kc__submit(s, &op);
        }
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuStreamWaitEvent(CUstream h, CUevent ev, unsigned int Flags)
{
        return wait_event(h, ev, Flags, false);
}

KERF_CUDA_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream h, CUevent ev, unsigned int Flags)
{
        return wait_event(h, ev, Flags, true);
}

KERF_CUDA_EXPORT CUresult cuStreamGetFlags(CUstream h, unsigned int *flags)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!flags)
                return CUDA_ERROR_INVALID_VALUE;
        kc_stream *s;
        kc__lock();
        r = kc__stream_resolve(h, false, &s);
        kc__unlock();
        if (!r)
                *flags = s->flags;
        return r;
}

KERF_CUDA_EXPORT CUresult cuStreamGetCtx(CUstream h, CUcontext *pctx)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!pctx)
                return CUDA_ERROR_INVALID_VALUE;
        kc_stream *s;
        kc__lock();
        r = kc__stream_resolve(h, false, &s);
        kc__unlock();
        if (!r)
                *pctx = s->ctx;
        return r;
}

static CUresult host_func(CUstream h, CUhostFn fn, void *arg, bool pt)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!fn)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, pt, &s);
        if (!r) {
                kc_op op = {.kind = KC_OP_HOST_FN};
                op.u.host.fn = fn;
                op.u.host.arg = arg;
                r = kc__submit(s, &op);
        }
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuLaunchHostFunc(CUstream h, CUhostFn fn, void *userData)
{
        return host_func(h, fn, userData, false);
}

KERF_CUDA_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream h, CUhostFn fn, void *userData)
{
        return host_func(h, fn, userData, true);
}

/* ---- events ---- */

KERF_CUDA_EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!phEvent || (Flags & ~7u))
                return CUDA_ERROR_INVALID_VALUE;
        if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))
                return CUDA_ERROR_INVALID_VALUE;
        kc_event *ev = calloc(1, sizeof(*ev));
        if (!ev)
                return CUDA_ERROR_OUT_OF_MEMORY;
        ev->magic = 0x4b434556u;
        ev->ctx = ctx;
        ev->flags = Flags;
        kc__handle_add(ev, KC_H_EVENT);
        *phEvent = ev;
        return CUDA_SUCCESS;
}

static CUresult record(CUevent ev, CUstream h, unsigned flags, bool pt)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, pt, &s);
        if (!r && !kc__handle_ok(ev, KC_H_EVENT))
                r = CUDA_ERROR_INVALID_HANDLE;
        if (!r && ev->ctx != s->ctx)
                r = CUDA_ERROR_INVALID_HANDLE;
        if (!r) {
                kc_op op = {.kind = KC_OP_EVENT_RECORD};
                op.u.ev.ev = ev;
                if (!s->cap_status) {
                        kc__engine_lock(s->ctx);
                        op.u.ev.gen = ++ev->rec_gen;
                        ev->ever_recorded = true;
                        kc__engine_unlock(s->ctx);
                }
                r = kc__submit(s, &op);
        }
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuEventRecord(CUevent ev, CUstream h)
{
        return record(ev, h, 0, false);
}

KERF_CUDA_EXPORT CUresult cuEventRecord_ptsz(CUevent ev, CUstream h)
{
        return record(ev, h, 0, true);
}

KERF_CUDA_EXPORT CUresult cuEventRecordWithFlags(CUevent ev, CUstream h, unsigned int flags)
{
        return record(ev, h, flags, false);
}

KERF_CUDA_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent ev, CUstream h, unsigned int flags)
{
        return record(ev, h, flags, true);
}

KERF_CUDA_EXPORT CUresult cuEventQuery(CUevent ev)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!kc__handle_ok(ev, KC_H_EVENT))
                return CUDA_ERROR_INVALID_HANDLE;
        return __atomic_load_n(&ev->done_gen, __ATOMIC_ACQUIRE) >= ev->rec_gen
                   ? CUDA_SUCCESS
                   : CUDA_ERROR_NOT_READY;
}

KERF_CUDA_EXPORT CUresult cuEventSynchronize(CUevent ev)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!kc__handle_ok(ev, KC_H_EVENT))
                return CUDA_ERROR_INVALID_HANDLE;
        kc__engine_wait_event(ev);
        kc__pool_release_excess(ev->ctx->dev);
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuEventDestroy_v2(CUevent ev)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!kc__handle_ok(ev, KC_H_EVENT))
                return CUDA_ERROR_INVALID_HANDLE;
        kc__handle_del(ev);
        kc__engine_wait_event(ev); /* queued records still point at it */
        free(ev);
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!ms)
                return CUDA_ERROR_INVALID_VALUE;
        if (!kc__handle_ok(a, KC_H_EVENT) || !kc__handle_ok(b, KC_H_EVENT))
                return CUDA_ERROR_INVALID_HANDLE;
        if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING || !a->ever_recorded ||
            !b->ever_recorded)
                return CUDA_ERROR_INVALID_HANDLE;
        if (cuEventQuery(a) || cuEventQuery(b))
                return CUDA_ERROR_NOT_READY;
        *ms = (float)((double)((int64_t)(b->time_ns - a->time_ns)) / 1e6);
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
        return cuEventElapsedTime_v2(ms, a, b);
}
