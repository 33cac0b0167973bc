/* SPDX-License-Identifier: Apache-2.0 */
/* graph.h - graph, node and executable-graph objects shared by graph.c and graphmem.c */
#ifndef KERF_SIM_CUDA_GRAPH_H
#define KERF_SIM_CUDA_GRAPH_H

#include "internal.h"

/* One graph allocation (an alloc node's memory): its address is fixed when the node is
 * created; it is live from a launch of its graph until a free node of some graph frees it
 * (launches of a graph that frees it in the graph may overlap: it stays live till the last).
 * Referenced by its alloc node, by free nodes naming it, and by executable graphs. */
typedef struct kc_gmem {
        struct kc_gmem *next; /* process-wide registry */
        CUDA_MEM_ALLOC_NODE_PARAMS params;
        void *map;
        uint64_t len; /* bytesize rounded up to KC_GRAN */
        int dev;
        int refs;
        int live; /* launches whose allocation is not yet freed (the address is one memory) */
} kc_gmem;

enum { KC_GM_NONE = 0, KC_GM_ALLOC, KC_GM_FREE };

typedef struct CUgraphNode_st {
        struct CUgraph_st *g;
        kc_op op;
        struct CUgraphNode_st **deps;
        size_t n_deps;
        int gm_kind;
        kc_gmem *gm;
} kc_node;

typedef struct CUgraph_st {
        kc_node **nodes;
        size_t n;
} kc_graph;

typedef struct CUgraphExec_st {
        kc_op *ops;
        size_t n;
        kc_gmem **gm_alloc, **gm_free;
        size_t n_alloc, n_free;
} kc_exec;

/* ---- graphmem.c (callers hold kc_g.mu) ---- */

/* A new graph allocation on device `dev` of p->bytesize bytes (its address set in the copy). */
kc_gmem *kc__gm_new(int dev, const CUDA_MEM_ALLOC_NODE_PARAMS *p);
/* The graph allocation at exactly `dptr`, or NULL. */
kc_gmem *kc__gm_find(CUdeviceptr dptr);
void kc__gm_unref(kc_gmem *m);
/* Copies the executable graph's memory nodes out of g's nodes (taking references). */
CUresult kc__gm_exec_init(kc_exec *x, const kc_graph *g);
void kc__gm_exec_free(kc_exec *x);
/* Launch of x on s: grows the reservation to cover x's allocations (charging the process)
 * and marks them live, before x's work is queued. */
CUresult kc__gm_launch_begin(kc_exec *x);
/* After x's work: queues the frees of x's free nodes, applied when the stream reaches them. */
CUresult kc__gm_launch_end(kc_exec *x, kc_stream *s);

#endif
