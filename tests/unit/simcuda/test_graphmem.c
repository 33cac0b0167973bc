/* SPDX-License-Identifier: Apache-2.0 */
/* test_graphmem.c - graph memory nodes: alloc/free nodes, capture of stream-ordered
 * allocation, the device's graph memory reservation, its attributes, trim and charging */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "simcuda_fixture.h"

#define MiB (1024ULL * 1024)

static cuuint64_t attr(CUgraphMem_attribute a)
{
        cuuint64_t v = ~0ULL;
        CU(cuDeviceGetGraphMemAttribute(0, a, &v));
        return v;
}

static CUDA_MEM_ALLOC_NODE_PARAMS alloc_params(int dev, size_t bytes)
{
        CUDA_MEM_ALLOC_NODE_PARAMS p;
        memset(&p, 0, sizeof(p));
        p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        p.poolProps.location.id = dev;
        p.bytesize = bytes;
        return p;
}

static void sc_nodes(void)
{
        CU(cuInit(0));
        fx_ctx_on(0);
        uint64_t base = fx_used_now();
        CUgraph g;
        CU(cuGraphCreate(&g, 0));
        CUDA_MEM_ALLOC_NODE_PARAMS p = alloc_params(0, 100 * MiB + 1);
        CUgraphNode na, nf, bad;
        CU(cuGraphAddMemAllocNode(&na, g, NULL, 0, &p));
        CK(p.dptr != 0);
        CUDA_MEM_ALLOC_NODE_PARAMS q;
        CU(cuGraphMemAllocNodeGetParams(na, &q));
        CK(q.dptr == p.dptr && q.bytesize == 100 * MiB + 1 && q.poolProps.location.id == 0);
        CK(cuGraphMemFreeNodeGetParams(na, &q.dptr) == CUDA_ERROR_INVALID_VALUE);
        /* invalid parameters */
        CUDA_MEM_ALLOC_NODE_PARAMS e = alloc_params(0, 0);
        CK(cuGraphAddMemAllocNode(&bad, g, NULL, 0, &e) == CUDA_ERROR_INVALID_VALUE);
        e = alloc_params(7, MiB);
        CK(cuGraphAddMemAllocNode(&bad, g, NULL, 0, &e) == CUDA_ERROR_INVALID_VALUE);
        e = alloc_params(0, MiB);
        e.poolProps.location.type = CU_MEM_LOCATION_TYPE_HOST;
        CK(cuGraphAddMemAllocNode(&bad, g, NULL, 0, &e) == CUDA_ERROR_INVALID_VALUE);
        CK(cuGraphAddMemAllocNode(&bad, g, NULL, 0, NULL) == CUDA_ERROR_INVALID_VALUE);
        CK(cuGraphAddMemFreeNode(&bad, g, &na, 1, p.dptr + 8) == CUDA_ERROR_INVALID_VALUE);
        CU(cuGraphAddMemFreeNode(&nf, g, &na, 1, p.dptr));
        CK(cuGraphAddMemFreeNode(&bad, g, &nf, 1, p.dptr) == CUDA_ERROR_INVALID_VALUE);
        CUdeviceptr fp = 0;
        CU(cuGraphMemFreeNodeGetParams(nf, &fp));
        CK(fp == p.dptr);
        size_t nn = 0;
        CU(cuGraphGetNodes(g, NULL, &nn));
        CK(nn == 2);
        CUgraphNode ns[3];
        nn = 3;
        CU(cuGraphGetNodes(g, ns, &nn));
        CK(nn == 2 && ns[0] == na && ns[1] == nf && ns[2] == NULL);
        CUgraphNodeType t;
        CU(cuGraphNodeGetType(na, &t));
        CK(t == CU_GRAPH_NODE_TYPE_MEM_ALLOC);
        CU(cuGraphNodeGetType(nf, &t));
        CK(t == CU_GRAPH_NODE_TYPE_MEM_FREE);
        /* nothing is reserved before a launch */
        CUgraphExec x;
        CU(cuGraphInstantiateWithFlags(&x, g, 0));
        CK(attr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT) == 0);
        CK(fx_used_now() == base);
        CUstream s;
        CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        CU(cuGraphLaunch(x, s));
        CK(attr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT) == 102 * MiB);
        CK(fx_used_now() == base + 102 * MiB);
        CU(cuStreamSynchronize(s));
        CK(attr(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT) == 0);
        CK(attr(CU_GRAPH_MEM_ATTR_USED_MEM_HIGH) == 102 * MiB);
        CK(attr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT) == 102 * MiB);
        /* the reservation is reused */
        CU(cuGraphLaunch(x, s));
        CU(cuGraphLaunch(x, s));
        CU(cuStreamSynchronize(s));
        CK(attr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH) == 102 * MiB);
        CK(fx_used_now() == base + 102 * MiB);
        /* trim gives it back */
        CU(cuDeviceGraphMemTrim(0));
        CK(attr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT) == 0);
        CK(fx_used_now() == base);
        CK(cuDeviceGraphMemTrim(9) == CUDA_ERROR_INVALID_DEVICE);
        /* watermarks: reset to 0 only */
        cuuint64_t z = 0, one = 1;
        CU(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &z));
        CU(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &z));
        CK(attr(CU_GRAPH_MEM_ATTR_USED_MEM_HIGH) == 0);
        CK(attr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH) == 0);
        CK(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, &one) ==
           CUDA_ERROR_INVALID_VALUE);
        CK(cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &z) ==
           CUDA_ERROR_INVALID_VALUE);
        CK(cuDeviceGetGraphMemAttribute(0, (CUgraphMem_attribute)9, &z) ==
           CUDA_ERROR_INVALID_VALUE);
        CK(cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, NULL) ==
           CUDA_ERROR_INVALID_VALUE);
        /* the node's address outlives the graph while an executable graph uses it */
        CU(cuGraphDestroy(g));
        CU(cuGraphLaunch(x, s));
        CU(cuStreamSynchronize(s));
        CU(cuGraphExecDestroy(x));
        CU(cuDeviceGraphMemTrim(0));
        CK(fx_used_now() == base);
}

static void sc_capture(void)
{
        CU(cuInit(0));
        fx_ctx_on(0);
        uint64_t base = fx_used_now();
        CUmodule m;
        CUfunction k;
        CU(cuModuleLoadData(&m, fx_module));
        CU(cuModuleGetFunction(&k, m, "k500"));
        CUstream s;
        CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
        CUdeviceptr a = 0, b = 0;
        CU(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CU(cuMemAllocAsync(&a, 64 * MiB, s));
        CU(cuMemAllocAsync(&b, 3 * MiB, s));
        CU(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL));
        CU(cuMemFreeAsync(a, s));
        CK(cuMemFreeAsync(a, s) == CUDA_ERROR_INVALID_VALUE);
        CUgraph g;
        CU(cuStreamEndCapture(s, &g));
        CK(a && b && a != b);
        CK(attr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT) == 0);
        CUgraphExec x;
        CU(cuGraphInstantiateWithFlags(&x, g, 0));
        CU(cuGraphLaunch(x, s));
        /* both allocations are made at launch; the stream may already have reached the free
         * of a (the engine runs on its own thread: a loaded host lets it get there first) */
        uint64_t used = attr(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT);
        CK(used == 68 * MiB || used == 4 * MiB);
        CK(fx_used_now() >= base + 4 * MiB && fx_used_now() <= base + 68 * MiB);
        CU(cuStreamSynchronize(s));
        /* b is not freed in the graph: it stays live, and a relaunch is refused */
        CK(attr(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT) == 4 * MiB);
        CK(cuGraphLaunch(x, s) == CUDA_ERROR_INVALID_VALUE);
        CU(cuDeviceGraphMemTrim(0));
        CK(attr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT) == 4 * MiB);
        CK(fx_used_now() == base + 4 * MiB);
        /* a second graph frees b (captured free of a graph allocation) */
        CU(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CU(cuMemFreeAsync(b, s));
        CUgraph g2;
        CU(cuStreamEndCapture(s, &g2));
        CUgraphExec x2;
        CU(cuGraphInstantiateWithFlags(&x2, g2, 0));
        CU(cuGraphLaunch(x2, s));
        CU(cuStreamSynchronize(s));
        CK(attr(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT) == 0);
        CU(cuGraphLaunch(x, s));
        CU(cuStreamSynchronize(s));
        CU(cuGraphExecDestroy(x));
        CU(cuGraphDestroy(g));
        CU(cuGraphExecDestroy(x2));
        CU(cuGraphDestroy(g2));
        CK(attr(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT) == 0);
        CU(cuDeviceGraphMemTrim(0));
        CK(fx_used_now() == base);
}

static void sc_oom(void)
{
        CU(cuInit(0));
        fx_ctx_on(0);
        uint64_t base = fx_used_now();
        size_t fr, tot;
        CU(cuMemGetInfo_v2(&fr, &tot));
        CUgraph g;
        CU(cuGraphCreate(&g, 0));
        CUDA_MEM_ALLOC_NODE_PARAMS p = alloc_params(0, fr / 2 + 64 * MiB);
        CUgraphNode n1, n2;
        CU(cuGraphAddMemAllocNode(&n1, g, NULL, 0, &p));
        CU(cuGraphAddMemAllocNode(&n2, g, &n1, 1, &p));
        CUgraphExec x;
        CU(cuGraphInstantiateWithFlags(&x, g, 0));
        CK(cuGraphLaunch(x, NULL) == CUDA_ERROR_OUT_OF_MEMORY);
        CK(attr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT) == 0);
        CK(attr(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT) == 0);
        CK(fx_used_now() == base);
        CU(cuGraphExecDestroy(x));
        CU(cuGraphDestroy(g));
}

FX_SCEN(sc_nodes, "H200", 1, false, "virtual")
FX_SCEN(sc_capture, "H200", 1, false, "virtual")
FX_SCEN(sc_oom, "H200", 1, false, "virtual")

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(t_sc_nodes),
            cmocka_unit_test(t_sc_capture),
            cmocka_unit_test(t_sc_oom),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
