/* SPDX-License-Identifier: Apache-2.0 */
/* stream2.c - stream queries, stream callbacks, managed-memory attach and capture info */
#include <stdlib.h>

#include "legacy.h"
#include "mem.h"

/* The start of every stream query: INVALID_VALUE for a NULL output `out`, then resolves h
 * (per-thread flavour pt) under kc_g.mu. */
static CUresult resolve_out(CUstream h, bool pt, const void *out, kc_stream **ret)
{
        if (!out)
                return CUDA_ERROR_INVALID_VALUE;
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc__lock();
        r = kc__stream_resolve(h, pt, ret);
        kc__unlock();
        return r;
}

static CUresult get_priority(CUstream h, int *priority, bool pt)
{
        kc_stream *s;
        CUresult r = resolve_out(h, pt, priority, &s);
        if (!r)
                *priority = s->priority;
        return r;
}

KERF_CUDA_EXPORT CUresult cuStreamGetPriority(CUstream hStream, int *priority)
{
        return get_priority(hStream, priority, false);
}

KERF_CUDA_EXPORT CUresult cuStreamGetPriority_ptsz(CUstream hStream, int *priority)
{
        return get_priority(hStream, priority, true);
}

/* The id is the stream record's address: unique among live streams of the process, stable for
 * the stream's life (the driver's ids are also never reused; these may be after a destroy). */
static CUresult get_id(CUstream h, unsigned long long *id, bool pt)
{
        kc_stream *s;
        CUresult r = resolve_out(h, pt, id, &s);
        if (!r)
                *id = (unsigned long long)(uintptr_t)s;
        return r;
}

KERF_CUDA_EXPORT CUresult cuStreamGetId(CUstream hStream, unsigned long long *streamId)
{
        return get_id(hStream, streamId, false);
}

KERF_CUDA_EXPORT CUresult cuStreamGetId_ptsz(CUstream hStream, unsigned long long *streamId)
{
        return get_id(hStream, streamId, true);
}

KERF_CUDA_EXPORT CUresult cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags)
{
        kc_stream *s;
        CUresult r = resolve_out(hStream, true, flags, &s);
        if (!r)
                *flags = s->flags;
        return r;
}

static CUresult get_ctx(CUstream h, CUcontext *pctx, CUgreenCtx *pgreen, bool pt, bool v2)
{
        if (v2 && !pgreen)
                return CUDA_ERROR_INVALID_VALUE;
        kc_stream *s;
        CUresult r = resolve_out(h, pt, pctx, &s);
        if (r)
                return r;
        *pctx = s->ctx;
        if (v2)
                *pgreen = NULL; /* green contexts are not simulated */
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx)
{
        return get_ctx(hStream, pctx, NULL, true, false);
}

KERF_CUDA_EXPORT CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext *pCtx,
                                            CUgreenCtx *pGreenCtx)
{
        return get_ctx(hStream, pCtx, pGreenCtx, false, true);
}

KERF_CUDA_EXPORT CUresult cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext *pCtx,
                                                 CUgreenCtx *pGreenCtx)
{
        return get_ctx(hStream, pCtx, pGreenCtx, true, true);
}

static CUresult get_device(CUstream h, CUdevice *dev, bool pt)
{
        kc_stream *s;
        CUresult r = resolve_out(h, pt, dev, &s);
        if (!r)
                *dev = s->ctx->dev;
        return r;
}

KERF_CUDA_EXPORT CUresult cuStreamGetDevice(CUstream hStream, CUdevice *device)
{
        return get_device(hStream, device, false);
}

KERF_CUDA_EXPORT CUresult cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device)
{
        return get_device(hStream, device, true);
}

KERF_CUDA_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream hStream,
                                                   CUstreamCaptureStatus *captureStatus)
{
        if (!captureStatus)
                return CUDA_ERROR_INVALID_VALUE;
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(hStream, true, &s);
        if (!r)
                *captureStatus = (CUstreamCaptureStatus)s->cap_status;
        kc__unlock();
        return r;
}

/* ---- callbacks ---- */

typedef struct cb_rec {
        CUstreamCallback fn;
        CUstream handle; /* as the caller passed it: the callback receives it back */
        void *user;
} cb_rec;

static void run_callback(void *arg)
{
        cb_rec *c = arg;
        c->fn(c->handle, CUDA_SUCCESS, c->user);
        free(c);
}

/* A host function that also gets the stream and a status. Refused while the stream captures
 * (the driver only allows cuLaunchHostFunc in graphs). */
static CUresult add_callback(CUstream h, CUstreamCallback fn, void *user, unsigned flags, bool pt)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!fn || flags)
                return CUDA_ERROR_INVALID_VALUE;
        cb_rec *c = malloc(sizeof(*c));
        if (!c)
                return CUDA_ERROR_OUT_OF_MEMORY;
        c->fn = fn;
        c->handle = h;
        c->user = user;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, pt, &s);
        if (!r && s->cap_status)
                r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        if (!r) {
                kc_op op = {.kind = KC_OP_HOST_FN};
                op.u.host.fn = run_callback;
                op.u.host.arg = c;
                r = kc__submit(s, &op);
        }
        kc__unlock();
        if (r)
                free(c);
        return r;
}

KERF_CUDA_EXPORT CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback,
                                              void *userData, unsigned int flags)
{
        return add_callback(hStream, callback, userData, flags, false);
}

KERF_CUDA_EXPORT CUresult cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback,
                                                   void *userData, unsigned int flags)
{
        return add_callback(hStream, callback, userData, flags, true);
}

/* ---- managed memory attach ---- */

/* Validates like the driver (managed memory, whole allocation when length is 0, one of the
 * attach flags); the simulator has no host/device migration, so there is nothing to attach. */
static CUresult attach(CUstream h, CUdeviceptr p, size_t len, unsigned flags, bool pt)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST &&
            flags != CU_MEM_ATTACH_SINGLE)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, pt, &s);
        if (!r) {
                kc_alloc *a = kc__alloc_containing(p);
                if (!a || a->kind != KC_A_MANAGED || (!len && p != a->base) ||
                    (len && len > a->base + a->size - p))
                        r = CUDA_ERROR_INVALID_VALUE;
        }
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length,
                                                 unsigned int flags)
{
        return attach(hStream, dptr, length, flags, false);
}

KERF_CUDA_EXPORT CUresult cuStreamAttachMemAsync_ptsz(CUstream hStream, CUdeviceptr dptr,
                                                      size_t length, unsigned int flags)
{
        return attach(hStream, dptr, length, flags, true);
}

/* ---- capture info ---- */

/* The capture id is the capture graph's address; the dependency set of the next captured node
 * is the last captured node (captures are recorded linearly, see docs/SIMULATOR.md). */
static CUresult capture_info(CUstream h, bool pt, CUstreamCaptureStatus *st, cuuint64_t *id,
                             CUgraph *graph, const CUgraphNode **deps,
                             const CUgraphEdgeData **edges, size_t *ndeps)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!st)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, pt, &s);
        if (!r) {
                *st = (CUstreamCaptureStatus)s->cap_status;
                bool active = s->cap_status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
                if (id && s->cap_status)
                        *id = (cuuint64_t)(uintptr_t)s->cap_graph;
                if (graph)
                        *graph = active ? s->cap_graph : NULL;
                if (deps)
                        *deps = active && s->cap_last ? (const CUgraphNode *)&s->cap_last : NULL;
                if (edges)
                        *edges = NULL; /* all edges are default edges */
                if (ndeps)
                        *ndeps = active && s->cap_last ? 1 : 0;
        }
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *st,
                                                 cuuint64_t *id)
{
        return capture_info(hStream, false, st, id, NULL, NULL, NULL, NULL);
}

KERF_CUDA_EXPORT CUresult cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus *st,
                                                      cuuint64_t *id)
{
        return capture_info(hStream, true, st, id, NULL, NULL, NULL, NULL);
}

KERF_CUDA_EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *st,
                                                    cuuint64_t *id, CUgraph *graph,
                                                    const CUgraphNode **deps, size_t *ndeps)
{
        return capture_info(hStream, false, st, id, graph, deps, NULL, ndeps);
}

KERF_CUDA_EXPORT CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream,
                                                         CUstreamCaptureStatus *st, cuuint64_t *id,
                                                         CUgraph *graph, const CUgraphNode **deps,
                                                         size_t *ndeps)
{
        return capture_info(hStream, true, st, id, graph, deps, NULL, ndeps);
}

KERF_CUDA_EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream hStream,
                                                    CUstreamCaptureStatus *captureStatus_out,
                                                    cuuint64_t *id_out, CUgraph *graph_out,
                                                    const CUgraphNode **dependencies_out,
                                                    const CUgraphEdgeData **edgeData_out,
                                                    size_t *numDependencies_out)
{
        return capture_info(hStream, false, captureStatus_out, id_out, graph_out, dependencies_out,
                            edgeData_out, numDependencies_out);
}

KERF_CUDA_EXPORT CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream,
                                                         CUstreamCaptureStatus *captureStatus_out,
                                                         cuuint64_t *id_out, CUgraph *graph_out,
                                                         const CUgraphNode **dependencies_out,
                                                         const CUgraphEdgeData **edgeData_out,
                                                         size_t *numDependencies_out)
{
        return capture_info(hStream, true, captureStatus_out, id_out, graph_out, dependencies_out,
                            edgeData_out, numDependencies_out);
}

/* Graphs are executed from their nodes on every launch: there is nothing to upload ahead. */
static CUresult graph_upload(CUgraphExec x, CUstream h, bool pt)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!x)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, pt, &s);
        if (!r && !kc__handle_ok(x, KC_H_EXEC))
                r = CUDA_ERROR_INVALID_HANDLE;
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream)
{
        return graph_upload(hGraphExec, hStream, false);
}

KERF_CUDA_EXPORT CUresult cuGraphUpload_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
        return graph_upload(hGraphExec, hStream, true);
}

/* The thread's capture interaction mode: exchanged and kept, but not enforced (the simulator
 * does not refuse unsafe calls made while another thread captures). */
static _Thread_local CUstreamCaptureMode capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

KERF_CUDA_EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
        if (!mode || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED)
                return CUDA_ERROR_INVALID_VALUE;
        CUstreamCaptureMode old = capture_mode;
        capture_mode = *mode;
        *mode = old;
        return CUDA_SUCCESS;
}
