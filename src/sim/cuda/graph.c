/* SPDX-License-Identifier: Apache-2.0 */
/* graph.c - CUDA graphs: stream capture, kernel nodes, instantiate and launch */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A node holds the operation it stands for; an executable graph is its nodes in a
 * topological order, replayed into the launch stream (the engine runs one op at a time, so
 * the order loses nothing but intra-graph concurrency, which is not simulated). */
typedef struct CUgraphNode_st {
        struct CUgraph_st *g;
        kc_op op;
        struct CUgraphNode_st **deps;
        size_t n_deps;
} kc_node;

typedef struct CUgraph_st {
        kc_node **nodes;
        size_t n;
} kc_graph;

typedef struct CUgraphExec_st {
        kc_op *ops;
        size_t n;
} kc_exec;

static kc_node *node_add(kc_graph *g, const kc_op *op, kc_node *const *deps, size_t n_deps)
{
        kc_node *nd = calloc(1, sizeof(*nd));
        kc_node **nn = realloc(g->nodes, (g->n + 1) * sizeof(*nn));
        if (!nd || !nn) {
                free(nd);
                if (nn)
                        g->nodes = nn;
                return NULL;
        }
        g->nodes = nn;
        if (n_deps) {
                nd->deps = malloc(n_deps * sizeof(*nd->deps));
                if (!nd->deps) {
                        free(nd);
                        return NULL;
                }
                memcpy(nd->deps, deps, n_deps * sizeof(*deps));
        }
        nd->n_deps = n_deps;
        nd->g = g;
        nd->op = *op;
        nd->op.next = NULL;
        g->nodes[g->n++] = nd;
        kc__handle_add(nd, KC_H_NODE);
        return nd;
}

static kc_graph *graph_new(void)
{
        kc_graph *g = calloc(1, sizeof(*g));
        if (g)
                kc__handle_add(g, KC_H_GRAPH);
        return g;
}

static void graph_free(kc_graph *g)
{
        kc__handle_del(g);
        for (size_t i = 0; i < g->n; i++) {
                kc__handle_del(g->nodes[i]);
                free(g->nodes[i]->deps);
                free(g->nodes[i]);
        }
        free(g->nodes);
        free(g);
}

bool kc__capture_op(kc_stream *s, const kc_op *op, CUresult *ret)
{
        if (!s->cap_status)
                return false;
        if (s->cap_status == CU_STREAM_CAPTURE_STATUS_INVALIDATED) {
                *ret = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
                return true;
        }
        kc_node *dep = s->cap_last;
        kc_node *nd = node_add(s->cap_graph, op, dep ? &dep : NULL, dep ? 1 : 0);
        if (!nd) {
                *ret = CUDA_ERROR_OUT_OF_MEMORY;
                return true;
        }
        s->cap_last = nd;
        *ret = CUDA_SUCCESS;
        return true;
}

static CUresult begin(CUstream h, CUstreamCaptureMode mode, bool pt)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
            mode != CU_STREAM_CAPTURE_MODE_RELAXED)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, pt, &s);
        if (!r && s->kind == 1)
                r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* the legacy stream cannot capture */
        else if (!r && s->cap_status)
                r = CUDA_ERROR_ILLEGAL_STATE;
        if (!r) {
                s->cap_graph = graph_new();
                if (!s->cap_graph)
                        r = CUDA_ERROR_OUT_OF_MEMORY;
                else {
                        s->cap_status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
                        s->cap_last = NULL;
                }
        }
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuStreamBeginCapture_v2(CUstream h, CUstreamCaptureMode mode)
{
        return begin(h, mode, false);
}

KERF_CUDA_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream h, CUstreamCaptureMode mode)
{
        return begin(h, mode, true);
}

/* CUDA 10.0 form, without a mode: global capture. */
KERF_CUDA_EXPORT CUresult cuStreamBeginCapture(CUstream h)
{
        return begin(h, CU_STREAM_CAPTURE_MODE_GLOBAL, false);
}

KERF_CUDA_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream h)
{
        return begin(h, CU_STREAM_CAPTURE_MODE_GLOBAL, true);
}

static CUresult end(CUstream h, CUgraph *phGraph, bool pt)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!phGraph)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, pt, &s);
        if (!r && !s->cap_status)
                r = CUDA_ERROR_ILLEGAL_STATE;
        if (!r) {
                kc_graph *g = s->cap_graph;
                bool bad = s->cap_status == CU_STREAM_CAPTURE_STATUS_INVALIDATED;
                s->cap_status = CU_STREAM_CAPTURE_STATUS_NONE;
                s->cap_graph = NULL;
                s->cap_last = NULL;
                if (bad) {
                        graph_free(g);
                        *phGraph = NULL;
                        r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
                } else {
                        *phGraph = g;
                }
        }
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuStreamEndCapture(CUstream h, CUgraph *phGraph)
{
        return end(h, phGraph, false);
}

KERF_CUDA_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream h, CUgraph *phGraph)
{
        return end(h, phGraph, true);
}

KERF_CUDA_EXPORT CUresult cuStreamIsCapturing(CUstream h, CUstreamCaptureStatus *st)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!st)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, false, &s);
        if (!r)
                *st = (CUstreamCaptureStatus)s->cap_status;
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!phGraph || flags)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        kc_graph *g = graph_new();
        kc__unlock();
        if (!g)
                return CUDA_ERROR_OUT_OF_MEMORY;
        *phGraph = g;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuGraphDestroy(CUgraph g)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc__lock();
        if (!kc__handle_ok(g, KC_H_GRAPH)) {
                kc__unlock();
                return CUDA_ERROR_INVALID_VALUE;
        }
        graph_free(g);
        kc__unlock();
        return CUDA_SUCCESS;
}

static CUresult add_kernel(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps, size_t n,
                           CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                           unsigned by, unsigned bz)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!ph || (n && !deps) || !gx || !gy || !gz || !bx || !by || !bz)
                return CUDA_ERROR_INVALID_VALUE;
        kc_ctx *ctx;
        if ((r = kc__func_check(f, &ctx)))
                return r;
        kc__lock();
        r = CUDA_ERROR_INVALID_VALUE;
        if (!kc__handle_ok(g, KC_H_GRAPH))
                goto out;
        for (size_t i = 0; i < n; i++)
                if (!kc__handle_ok(deps[i], KC_H_NODE) || deps[i]->g != g)
                        goto out;
        kc_op op = {.kind = KC_OP_KERNEL};
        op.remaining_ns = kc__func_cost_ns(f, ctx->dev, (uint64_t)gx * gy * gz);
        kc_node *nd = node_add(g, &op, deps, n);
        r = nd ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
        if (nd)
                *ph = nd;
out:
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *ph, CUgraph g,
                                                  const CUgraphNode *deps, size_t n,
                                                  const CUDA_KERNEL_NODE_PARAMS *p)
{
        if (!p)
                return CUDA_ERROR_INVALID_VALUE;
        CUfunction f = p->func ? p->func : (CUfunction)p->kern;
        return add_kernel(ph, g, deps, n, f, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX,
                          p->blockDimY, p->blockDimZ);
}

/* The CUDA 10.0 parameter block: the v2 one without kern and ctx. */
typedef struct {
        CUfunction func;
        unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ;
        unsigned int sharedMemBytes;
        void **kernelParams;
        void **extra;
} kc_kernel_params_v1;

KERF_CUDA_EXPORT CUresult cuGraphAddKernelNode(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps,
                                               size_t n, const kc_kernel_params_v1 *p);
KERF_CUDA_EXPORT CUresult cuGraphAddKernelNode(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps,
                                               size_t n, const kc_kernel_params_v1 *p)
{
        if (!p)
                return CUDA_ERROR_INVALID_VALUE;
        return add_kernel(ph, g, deps, n, p->func, p->gridDimX, p->gridDimY, p->gridDimZ,
                          p->blockDimX, p->blockDimY, p->blockDimZ);
}

/* Kahn's algorithm; the graph's nodes only depend on nodes of the same graph. */
static CUresult instantiate(CUgraphExec *ph, CUgraph g)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!ph)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        if (!kc__handle_ok(g, KC_H_GRAPH)) {
                kc__unlock();
                return CUDA_ERROR_INVALID_VALUE;
        }
        kc_exec *x = calloc(1, sizeof(*x));
        bool *done = calloc(g->n + 1, sizeof(*done));
        if (x)
                x->ops = calloc(g->n + 1, sizeof(*x->ops));
        if (!x || !done || !x->ops) {
                free(done);
                if (x)
                        free(x->ops);
                free(x);
                kc__unlock();
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        for (bool progress = true; progress && x->n < g->n;) {
                progress = false;
                for (size_t i = 0; i < g->n; i++) {
                        if (done[i])
                                continue;
                        bool ready = true;
                        for (size_t d = 0; d < g->nodes[i]->n_deps && ready; d++)
                                for (size_t j = 0; j < g->n; j++)
                                        if (g->nodes[j] == g->nodes[i]->deps[d] && !done[j])
                                                ready = false;
                        if (ready) {
                                done[i] = progress = true;
                                x->ops[x->n++] = g->nodes[i]->op;
                        }
                }
        }
        free(done);
        if (x->n < g->n) { /* a cycle */
                free(x->ops);
                free(x);
                kc__unlock();
                return CUDA_ERROR_INVALID_VALUE;
        }
        kc__handle_add(x, KC_H_EXEC);
        kc__unlock();
        *ph = x;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *ph, CUgraph g,
                                                      unsigned long long flags)
{
        if (flags & ~0xfULL)
                return CUDA_ERROR_INVALID_VALUE;
        return instantiate(ph, g);
}

KERF_CUDA_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *ph, CUgraph g, CUgraphNode *err,
                                                char *log, size_t logsz)
{
        if (err)
                *err = NULL;
        if (log && logsz)
                log[0] = 0;
        return instantiate(ph, g);
}

static CUresult glaunch(CUgraphExec x, CUstream h, bool pt)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, pt, &s);
        if (!r && !kc__handle_ok(x, KC_H_EXEC))
                r = CUDA_ERROR_INVALID_VALUE;
        if (!r && s->cap_status)
                r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* child graphs are not simulated */
        for (size_t i = 0; !r && i < x->n; i++) {
                kc_op op = x->ops[i];
                if (op.kind == KC_OP_EVENT_RECORD) {
                        kc__engine_lock(s->ctx);
                        op.u.ev.gen = ++op.u.ev.ev->rec_gen;
                        op.u.ev.ev->ever_recorded = true;
                        kc__engine_unlock(s->ctx);
                }
                r = kc__submit(s, &op);
        }
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuGraphLaunch(CUgraphExec x, CUstream h)
{
        return glaunch(x, h, false);
}

KERF_CUDA_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec x, CUstream h)
{
        return glaunch(x, h, true);
}

KERF_CUDA_EXPORT CUresult cuGraphExecDestroy(CUgraphExec x)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc__lock();
        if (!kc__handle_ok(x, KC_H_EXEC)) {
                kc__unlock();
                return CUDA_ERROR_INVALID_VALUE;
        }
        kc__handle_del(x);
        free(x->ops);
        free(x);
        kc__unlock();
        return CUDA_SUCCESS;
}
