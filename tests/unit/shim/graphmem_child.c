/* SPDX-License-Identifier: Apache-2.0 */
/* graphmem_child.c - graph memory nodes under the shim's cap (run by test_mem_graph.c) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuda_abi.h"
#include "kerf/slice_abi.h"
#include "child_check.h"

CUresult cuGraphInstantiate_v2(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);

static struct kerf_slice_region *reg;

static uint64_t charged(void)
{
        return atomic_load(&reg->memory_charged);
}

static cuuint64_t reserved(void)
{
        cuuint64_t v = ~0ull;
        CU(cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &v));
        return v;
}

static CUgraphNode add_alloc(CUgraph g, CUgraphNode *dep, uint64_t bytes, CUdeviceptr *p)
{
        CUDA_MEM_ALLOC_NODE_PARAMS a;
        memset(&a, 0, sizeof(a));
        a.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        a.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        a.poolProps.location.id = 0;
        a.bytesize = bytes;
        CUgraphNode n;
        CU(cuGraphAddMemAllocNode(&n, g, dep, dep ? 1 : 0, &a));
        *p = a.dptr;
        return n;
}

static void sc_graph(void)
{
        CUdevice dev;
        CUcontext ctx;
        CUstream s;
        CU(cuInit(0));
        CU(cuDeviceGet(&dev, 0));
        CU(cuDevicePrimaryCtxRetain(&ctx, dev));
        CU(cuCtxSetCurrent(ctx));
        CU(cuStreamCreate(&s, 0));
        uint64_t base = charged(), den = atomic_load(&reg->memory_denied);

        /* within the cap: 3 GiB allocated and freed in the graph */
        CUgraph g1;
        CUdeviceptr p;
        CU(cuGraphCreate(&g1, 0));
        CUgraphNode a = add_alloc(g1, NULL, 3 * GIB, &p), f;
        CU(cuGraphAddMemFreeNode(&f, g1, &a, 1, p));
        CUgraphExec x1;
        CU(cuGraphInstantiateWithFlags(&x1, g1, 0));
        CK(charged() == base + 3 * GIB); /* promised before any launch */
        CU(cuGraphLaunch(x1, s));
        CU(cuStreamSynchronize(s));
        CK(reserved() == 3 * GIB);
        CK(charged() == base + 3 * GIB);
        CU(cuGraphLaunch(x1, s));
        CU(cuStreamSynchronize(s));
        CK(charged() == base + 3 * GIB);
        /* trim: the driver gives the reservation back; the live executable graph keeps its
         * promise until it is destroyed */
        CU(cuDeviceGraphMemTrim(0));
        CK(reserved() == 0);
        CK(charged() == base + 3 * GIB);

        /* beyond the cap: two 3 GiB allocations live together */
        CUgraph g2;
        CUdeviceptr q1, q2;
        CU(cuGraphCreate(&g2, 0));
        CUgraphNode b = add_alloc(g2, NULL, 3 * GIB, &q1);
        add_alloc(g2, &b, 3 * GIB, &q2);
        CUgraphExec x2 = NULL;
        CK(cuGraphInstantiateWithFlags(&x2, g2, 0) == CUDA_ERROR_OUT_OF_MEMORY);
        CK(cuGraphInstantiate_v2(&x2, g2, NULL, NULL, 0) == CUDA_ERROR_OUT_OF_MEMORY);
        CK(atomic_load(&reg->memory_denied) > den);
        CK(charged() == base + 3 * GIB);
        /* also beside a live promise: 2 GiB more does not fit next to x1's 3 GiB... */
        CUgraph g3;
        CUdeviceptr r3;
        CU(cuGraphCreate(&g3, 0));
        add_alloc(g3, NULL, 2 * GIB, &r3);
        CUgraphExec x3;
        CU(cuGraphInstantiateWithFlags(&x3, g3, 0));
        /* ...the promise is the largest need, not the sum: x1 and x3 never hold memory at once
         * here, and a launch of x3 leaves its allocation live (not freed in the graph) */
        CK(charged() == base + 3 * GIB);
        CU(cuGraphLaunch(x3, s));
        CU(cuStreamSynchronize(s));
        CK(reserved() == 2 * GIB);
        CU(cuGraphExecDestroy(x1));
        CU(cuGraphExecDestroy(x3));
        CU(cuGraphDestroy(g3)); /* the unfreed allocation goes with its node */
        CU(cuDeviceGraphMemTrim(0));
        CK(reserved() == 0);
        CK(charged() == base);

        /* captured stream-ordered allocation becomes alloc/free nodes, capped the same way */
        CUdeviceptr c;
        CU(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
        CU(cuMemAllocAsync(&c, 1 * GIB, s));
        CU(cuMemFreeAsync(c, s));
        CUgraph g4;
        CU(cuStreamEndCapture(s, &g4));
        CUgraphExec x4;
        CU(cuGraphInstantiate_v2(&x4, g4, NULL, NULL, 0));
        CK(charged() == base + 1 * GIB);
        CU(cuGraphLaunch(x4, s));
        CU(cuStreamSynchronize(s));
        CU(cuGraphExecDestroy(x4));
        CK(charged() == base + 1 * GIB); /* the driver's reservation, until trimmed */
        CU(cuDeviceGraphMemTrim(0));
        CK(charged() == base);
        CU(cuGraphDestroy(g1));
        CU(cuGraphDestroy(g2));
        CU(cuGraphDestroy(g4));
}

int main(int argc, char **argv)
{
        const char *rpath = getenv("KERF_SLICE_REGION");
        if (argc < 2 || !rpath || kerf_slice_region_map(rpath, false, &reg) != 0)
                return 2;
        if (!strcmp(argv[1], "graph"))
                sc_graph();
        else
                return 2;
        return 0;
}
