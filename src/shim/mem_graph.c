/* SPDX-License-Identifier: Apache-2.0 */
/* mem_graph.c - graph memory nodes: the device's graph memory reservation is charged */
#include <stdlib.h>
#include <string.h>

#include "syms.h"
#include "u64map.h"

/*
 * Alloc nodes of a CUDA graph (cuGraphAddMemAllocNode, or cuMemAllocAsync captured into a
 * graph) take device memory when the graph is launched, from a per-device graph memory
 * reservation the driver grows as needed and keeps until cuDeviceGraphMemTrim. The shim
 * charges each device's reservation to memory_charged and caps it before the driver can grow
 * it, at instantiation (launch belongs to the compute limiter):
 *
 *   cuGraphInstantiate*  need = sum over the graph's alloc nodes on the device of
 *                        round_up(bytesize, 2 MiB). The device's charge is raised to
 *                        max(RESERVED_MEM_CURRENT, USED_MEM_CURRENT + need, need of any live
 *                        executable graph); refused -> cuDeviceGraphMemTrim, retry, then
 *                        CUDA_ERROR_OUT_OF_MEMORY without instantiating. The need stays
 *                        promised while the executable graph lives (it will launch again).
 *   cuGraphExecDestroy   the executable graph's promise goes.
 *   trim, sync, tick     reconcile: charge = max(RESERVED_MEM_CURRENT, largest live promise);
 *                        growth beyond the charge (graphs whose nodes the shim could not see)
 *                        is taken quietly if the cap allows, as for pools.
 *
 * Everything runs under ks__mem_mu. Child-graph nodes are not searched for alloc nodes.
 */

#define KS_GDEV 64

typedef struct ks_gexec {
        uint64_t need[KS_GDEV];
} ks_gexec;

static uint64_t charged[KS_GDEV]; /* bytes of memory_charged held for the device */
static bool seen[KS_GDEV];
static _Atomic int any_seen;
static kerf_u64map execs; /* CUgraphExec -> ks_gexec */

static cuuint64_t gattr(int d, CUgraphMem_attribute a)
{
        cuuint64_t v = 0;
        if (!ks_real.cuDeviceGetGraphMemAttribute ||
            ks_real.cuDeviceGetGraphMemAttribute(d, a, &v) != CUDA_SUCCESS)
                return 0;
        return v;
}

/* The largest need of a live executable graph on device d. */
static uint64_t promised_locked(int d)
{
        uint64_t p = 0;
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;
        while (kerf_u64map_next(&execs, &it, NULL, &val)) {
                const ks_gexec *x = val;
                if (x->need[d] > p)
                        p = x->need[d];
        }
        return p;
}

static void reconcile_locked(int d)
{
        uint64_t want = gattr(d, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT);
        uint64_t p = promised_locked(d);
        if (p > want)
                want = p;
        if (want > charged[d]) {
                if (ks__mem_reserve_quiet(want - charged[d]))
                        charged[d] = want;
        } else if (want < charged[d]) {
                ks__mem_release(charged[d] - want);
                charged[d] = want;
        }
}

void ks__graphmem_reconcile(void)
{
        if (!atomic_load_explicit(&any_seen, memory_order_relaxed))
                return;
        pthread_mutex_lock(&ks__mem_mu);
        for (int d = 0; d < KS_GDEV; d++)
                if (seen[d])
                        reconcile_locked(d);
        pthread_mutex_unlock(&ks__mem_mu);
}

void ks__graphmem_forget(void)
{
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;
        while (kerf_u64map_next(&execs, &it, NULL, &val))
                free(val);
        kerf_u64map_fini(&execs);
        kerf_u64map_init(&execs);
        memset(charged, 0, sizeof(charged));
        memset(seen, 0, sizeof(seen));
        atomic_store(&any_seen, 0);
}

/* Adds up g's alloc nodes per device; false when there are none (or they cannot be seen). */
static bool graph_need(CUgraph g, ks_gexec *x)
{
        size_t n = 0;
        bool any = false;
        memset(x, 0, sizeof(*x));
        if (!ks_real.cuGraphGetNodes || !ks_real.cuGraphNodeGetType ||
            !ks_real.cuGraphMemAllocNodeGetParams || ks_real.cuGraphGetNodes(g, NULL, &n) || !n)
                return false;
        CUgraphNode *nodes = calloc(n, sizeof(*nodes));
        if (!nodes || ks_real.cuGraphGetNodes(g, nodes, &n) != CUDA_SUCCESS) {
                free(nodes);
                return false;
        }
        for (size_t i = 0; i < n; i++) {
                CUgraphNodeType t;
                CUDA_MEM_ALLOC_NODE_PARAMS p;
                if (!nodes[i] || ks_real.cuGraphNodeGetType(nodes[i], &t) ||
                    t != CU_GRAPH_NODE_TYPE_MEM_ALLOC ||
                    ks_real.cuGraphMemAllocNodeGetParams(nodes[i], &p))
                        continue;
                int d = p.poolProps.location.id;
                uint64_t b = ks__round(p.bytesize);
                if (d < 0 || d >= KS_GDEV || b == UINT64_MAX)
                        continue;
                x->need[d] = x->need[d] > UINT64_MAX - b ? UINT64_MAX : x->need[d] + b;
                any = true;
        }
        free(nodes);
        return any;
}

/* Raises device d's charge to cover a launch needing `need` more; false past the cap. */
static bool cover_locked(int d, uint64_t need, uint64_t *took)
{
        *took = 0;
        seen[d] = true;
        atomic_store(&any_seen, 1);
        reconcile_locked(d);
        uint64_t used = gattr(d, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT);
        uint64_t want = used > UINT64_MAX - need ? UINT64_MAX : used + need;
        if (want <= charged[d])
                return true;
        if (!ks__mem_reserve_quiet(want - charged[d])) {
                /* As the driver does before failing: give the unused reservation back. */
                if (ks_real.cuDeviceGraphMemTrim) {
                        ks_real.cuDeviceGraphMemTrim(d);
                        reconcile_locked(d);
                }
                if (want > charged[d] && !ks__mem_reserve(want - charged[d]))
                        return false;
        }
        if (want > charged[d]) {
                *took = want - charged[d];
                charged[d] = want;
        }
        return true;
}

enum { KS_I_FLAGS, KS_I_V2 };

static CUresult instantiate(int which, CUgraphExec *ph, CUgraph g, unsigned long long flags,
                            CUgraphNode *err, char *log, size_t logsz)
{
        ks_gexec need;
        bool any = ph && graph_need(g, &need);
        uint64_t took[KS_GDEV] = {0};
        CUresult r = CUDA_SUCCESS;
        pthread_mutex_lock(&ks__mem_mu);
        for (int d = 0; any && d < KS_GDEV; d++) {
                if (need.need[d] && !cover_locked(d, need.need[d], &took[d])) {
                        for (int e = 0; e <= d; e++) {
                                ks__mem_release(took[e]);
                                charged[e] -= took[e];
                        }
                        r = CUDA_ERROR_OUT_OF_MEMORY;
                        break;
                }
        }
        if (r == CUDA_SUCCESS) {
                r = which == KS_I_FLAGS ? ks_real.cuGraphInstantiateWithFlags(ph, g, flags)
                                        : ks_real.cuGraphInstantiate_v2(ph, g, err, log, logsz);
                ks_gexec *x = any && r == CUDA_SUCCESS ? malloc(sizeof(*x)) : NULL;
                if (x) {
                        *x = need;
                        if (kerf_u64map_put(&execs, (uint64_t)(uintptr_t)*ph, x) < 0)
                                free(x);
                }
                for (int d = 0; any && d < KS_GDEV; d++)
                        if (need.need[d])
                                reconcile_locked(d);
        }
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}

KS_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                               unsigned long long flags)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        if (!ks_real.cuGraphInstantiateWithFlags)
                return CUDA_ERROR_NOT_SUPPORTED;
        return instantiate(KS_I_FLAGS, phGraphExec, hGraph, flags, NULL, NULL, 0);
}

KS_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph,
                                         CUgraphNode *phErrorNode, char *logBuffer,
                                         size_t bufferSize)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        if (!ks_real.cuGraphInstantiate_v2)
                return CUDA_ERROR_NOT_SUPPORTED;
        return instantiate(KS_I_V2, phGraphExec, hGraph, 0, phErrorNode, logBuffer, bufferSize);
}

KS_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        if (!ks_real.cuGraphExecDestroy)
                return CUDA_ERROR_NOT_SUPPORTED;
        pthread_mutex_lock(&ks__mem_mu);
        r = ks_real.cuGraphExecDestroy(hGraphExec);
        ks_gexec *x =
            r == CUDA_SUCCESS ? kerf_u64map_del(&execs, (uint64_t)(uintptr_t)hGraphExec) : NULL;
        if (x) {
                for (int d = 0; d < KS_GDEV; d++)
                        if (x->need[d])
                                reconcile_locked(d);
                free(x);
        }
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}

KS_EXPORT CUresult cuDeviceGraphMemTrim(CUdevice device)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        if (!ks_real.cuDeviceGraphMemTrim)
                return CUDA_ERROR_NOT_SUPPORTED;
        pthread_mutex_lock(&ks__mem_mu);
        r = ks_real.cuDeviceGraphMemTrim(device);
        if (r == CUDA_SUCCESS && device >= 0 && device < KS_GDEV && seen[device])
                reconcile_locked(device);
        pthread_mutex_unlock(&ks__mem_mu);
        return r;
}
