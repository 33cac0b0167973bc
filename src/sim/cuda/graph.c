/* SPDX-License-Identifier: Apache-2.0 */
/* graph.c - CUDA graphs: stream capture, kernel nodes, instantiate and launch */
#include <stdlib.h>
#include <string.h>

#include "graph.h"

/* A node holds the operation it stands for; an executable graph is its nodes in a
 * topological order, replayed into the launch stream (the engine runs one op at a time, so
 * the order loses nothing but intra-graph concurrency, which is not simulated). Memory alloc
 * and free nodes carry no operation: graphmem.c accounts for them around the replay. */
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
                kc__gm_unref(g->nodes[i]->gm);
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
        size_t placed = 0;
        for (bool progress = true; progress && placed < g->n;) {
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
                                placed++;
                                if (g->nodes[i]->gm_kind == KC_GM_NONE)
                                        x->ops[x->n++] = g->nodes[i]->op;
                        }
                }
        }
        free(done);
        CUresult gr = placed < g->n ? CUDA_ERROR_INVALID_VALUE : kc__gm_exec_init(x, g);
        if (gr) { /* a cycle, or no memory */
                free(x->ops);
                free(x);
                kc__unlock();
                return gr;
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
        if (!r)
                r = kc__gm_launch_begin(x);
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
        if (!r)
                r = kc__gm_launch_end(x, s);
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
        kc__gm_exec_free(x);
        free(x->ops);
        free(x);
        kc__unlock();
        return CUDA_SUCCESS;
}

/* Checks the graph and dependency list of a node about to be added. Caller holds mu. */
static bool deps_ok(CUgraph g, const CUgraphNode *deps, size_t n)
{
        if (!kc__handle_ok(g, KC_H_GRAPH) || (n && !deps))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!kc__handle_ok(deps[i], KC_H_NODE) || deps[i]->g != g)
                        return false;
        return true;
}

/* Adds an alloc node for p (its address written back into p->dptr). Caller holds mu. */
static CUresult add_alloc(kc_node **ph, kc_graph *g, kc_node *const *deps, size_t n,
                          CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
        const CUmemPoolProps *pp = &p->poolProps;
        if (!p->bytesize || pp->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
            pp->handleTypes != CU_MEM_HANDLE_TYPE_NONE ||
            pp->location.type != CU_MEM_LOCATION_TYPE_DEVICE || kc__check_dev(pp->location.id) ||
            (p->accessDescCount && !p->accessDescs))
                return CUDA_ERROR_INVALID_VALUE;
        kc_gmem *m = kc__gm_new(pp->location.id, p);
        if (!m)
                return CUDA_ERROR_OUT_OF_MEMORY;
        kc_op op = {0};
        kc_node *nd = node_add(g, &op, deps, n);
        if (!nd) {
                kc__gm_unref(m);
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        nd->gm_kind = KC_GM_ALLOC;
        nd->gm = m;
        p->dptr = m->params.dptr;
        *ph = nd;
        return CUDA_SUCCESS;
}

/* Adds a free node of graph allocation dptr, freed at most once per graph. Caller holds mu. */
static CUresult add_free(kc_node **ph, kc_graph *g, kc_node *const *deps, size_t n,
                         CUdeviceptr dptr)
{
        kc_gmem *m = kc__gm_find(dptr);
        if (!m)
                return CUDA_ERROR_INVALID_VALUE;
        for (size_t i = 0; i < g->n; i++)
                if (g->nodes[i]->gm_kind == KC_GM_FREE && g->nodes[i]->gm == m)
                        return CUDA_ERROR_INVALID_VALUE;
        kc_op op = {0};
        kc_node *nd = node_add(g, &op, deps, n);
        if (!nd)
                return CUDA_ERROR_OUT_OF_MEMORY;
        nd->gm_kind = KC_GM_FREE;
        nd->gm = m;
        m->refs++;
        *ph = nd;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *ph, CUgraph g,
                                                 const CUgraphNode *deps, size_t n,
                                                 CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!ph || !p)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        r = deps_ok(g, deps, n) ? add_alloc(ph, g, deps, n, p) : CUDA_ERROR_INVALID_VALUE;
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode *ph, CUgraph g, const CUgraphNode *deps,
                                                size_t n, CUdeviceptr dptr)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!ph)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        r = deps_ok(g, deps, n) ? add_free(ph, g, deps, n, dptr) : CUDA_ERROR_INVALID_VALUE;
        kc__unlock();
        return r;
}

static CUresult node_params(CUgraphNode h, int kind, kc_gmem *out)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc__lock();
        r = CUDA_ERROR_INVALID_VALUE;
        if (kc__handle_ok(h, KC_H_NODE) && h->gm_kind == kind) {
                *out = *h->gm;
                r = CUDA_SUCCESS;
        }
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuGraphMemAllocNodeGetParams(CUgraphNode h,
                                                       CUDA_MEM_ALLOC_NODE_PARAMS *out)
{
        kc_gmem m;
        if (!out)
                return CUDA_ERROR_INVALID_VALUE;
        CUresult r = node_params(h, KC_GM_ALLOC, &m);
        if (!r)
                *out = m.params;
        return r;
}

KERF_CUDA_EXPORT CUresult cuGraphMemFreeNodeGetParams(CUgraphNode h, CUdeviceptr *out)
{
        kc_gmem m;
        if (!out)
                return CUDA_ERROR_INVALID_VALUE;
        CUresult r = node_params(h, KC_GM_FREE, &m);
        if (!r)
                *out = m.params.dptr;
        return r;
}

/* Stream capture of cuMemAllocAsync / cuMemFreeAsync: alloc / free nodes after the stream's
 * last captured node. Caller holds mu; s is capturing. */
CUresult kc__capture_mem_alloc(kc_stream *s, size_t size, CUdeviceptr *dptr)
{
        if (s->cap_status == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
                return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        CUDA_MEM_ALLOC_NODE_PARAMS p = {0};
        p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        p.poolProps.location.id = s->ctx->dev;
        p.bytesize = size;
        kc_node *dep = s->cap_last, *nd;
        CUresult r = add_alloc(&nd, s->cap_graph, dep ? &dep : NULL, dep ? 1 : 0, &p);
        if (!r) {
                s->cap_last = nd;
                *dptr = p.dptr;
        }
        return r;
}

CUresult kc__capture_mem_free(kc_stream *s, CUdeviceptr dptr)
{
        if (s->cap_status == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
                return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        kc_node *dep = s->cap_last, *nd;
        CUresult r = add_free(&nd, s->cap_graph, dep ? &dep : NULL, dep ? 1 : 0, dptr);
        if (!r)
                s->cap_last = nd;
        return r;
}

/* Nodes in creation order; with nodes NULL, their number. */
KERF_CUDA_EXPORT CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *num)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!num)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        if (!kc__handle_ok(g, KC_H_GRAPH)) {
                kc__unlock();
                return CUDA_ERROR_INVALID_VALUE;
        }
        if (nodes) {
                size_t i = 0;
                for (; i < *num && i < g->n; i++)
                        nodes[i] = g->nodes[i];
                for (; i < *num; i++)
                        nodes[i] = NULL;
        }
        *num = g->n;
        kc__unlock();
        return CUDA_SUCCESS;
}

/* Captured or added operations answer the node type they stand for. */
KERF_CUDA_EXPORT CUresult cuGraphNodeGetType(CUgraphNode h, CUgraphNodeType *type)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!type)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        r = kc__handle_ok(h, KC_H_NODE) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
        if (!r) {
                static const CUgraphNodeType by_op[] = {
                    [KC_OP_KERNEL] = CU_GRAPH_NODE_TYPE_KERNEL,
                    [KC_OP_COPY] = CU_GRAPH_NODE_TYPE_MEMCPY,
                    [KC_OP_SET8] = CU_GRAPH_NODE_TYPE_MEMSET,
                    [KC_OP_SET32] = CU_GRAPH_NODE_TYPE_MEMSET,
                    [KC_OP_COPY2D] = CU_GRAPH_NODE_TYPE_MEMCPY,
                    [KC_OP_EVENT_RECORD] = CU_GRAPH_NODE_TYPE_EVENT_RECORD,
                    [KC_OP_EVENT_WAIT] = CU_GRAPH_NODE_TYPE_WAIT_EVENT,
                    [KC_OP_HOST_FN] = CU_GRAPH_NODE_TYPE_HOST,
                    [KC_OP_FREE] = CU_GRAPH_NODE_TYPE_MEM_FREE,
                };
                if (h->gm_kind == KC_GM_ALLOC)
                        *type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
                else if (h->gm_kind == KC_GM_FREE)
                        *type = CU_GRAPH_NODE_TYPE_MEM_FREE;
                else if (h->op.kind > 0 && (size_t)h->op.kind < sizeof(by_op) / sizeof(by_op[0]))
                        *type = by_op[h->op.kind];
                else
                        *type = CU_GRAPH_NODE_TYPE_EMPTY;
        }
        kc__unlock();
        return r;
}
