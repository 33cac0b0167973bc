/* SPDX-License-Identifier: Apache-2.0 */
/* graphmem.c - graph memory nodes: the per-device graph memory reservation, its attributes and
 * trim (model and its limits: docs/SIMULATOR.md, "Graph memory nodes") */
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "mem.h"

/* Per device: bytes of live graph allocations (used) and of the reservation backing them
 * (reserved, charged to this process in simstate); high watermarks since the last reset. */
static struct {
        uint64_t used, used_high, reserved, reserved_high;
} gm_dev[KC_MAX_DEVS];

static kc_gmem *gm_list;

kc_gmem *kc__gm_new(int dev, const CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
        uint64_t len = kc_round_up(p->bytesize, KC_GRAN);
        if (!len)
                return NULL;
        kc_gmem *m = calloc(1, sizeof(*m));
        if (!m)
                return NULL;
        m->map = kc__map_lazy(len);
        if (!m->map) {
                free(m);
                return NULL;
        }
        m->params = *p;
        m->params.dptr = (CUdeviceptr)(uintptr_t)m->map;
        m->params.accessDescs = NULL; /* the caller's array does not outlive the call */
        m->len = len;
        m->dev = dev;
        m->refs = 1;
        m->next = gm_list;
        gm_list = m;
        return m;
}

kc_gmem *kc__gm_find(CUdeviceptr dptr)
{
        for (kc_gmem *m = gm_list; m; m = m->next)
                if (m->params.dptr == dptr)
                        return m;
        return NULL;
}

static void gm_release(kc_gmem *m, bool all)
{
        if (m->live && (all || --m->live == 0)) {
                m->live = 0;
                gm_dev[m->dev].used -= m->len;
        }
}

static bool frees(const kc_exec *x, const kc_gmem *m)
{
        for (size_t i = 0; i < x->n_free; i++)
                if (x->gm_free[i] == m)
                        return true;
        return false;
}

void kc__gm_unref(kc_gmem *m)
{
        if (!m || --m->refs > 0)
                return;
        gm_release(m, true); /* [UNVERIFIED] an unfreed allocation dies with its last user */
        for (kc_gmem **pp = &gm_list; *pp; pp = &(*pp)->next)
                if (*pp == m) {
                        *pp = m->next;
                        break;
                }
        kc__unmap_lazy(m->map, m->len);
        free(m);
}

CUresult kc__gm_exec_init(kc_exec *x, const kc_graph *g)
{
        size_t na = 0, nf = 0;
        for (size_t i = 0; i < g->n; i++) {
                na += g->nodes[i]->gm_kind == KC_GM_ALLOC;
                nf += g->nodes[i]->gm_kind == KC_GM_FREE;
        }
        x->gm_alloc = na ? calloc(na, sizeof(*x->gm_alloc)) : NULL;
        x->gm_free = nf ? calloc(nf, sizeof(*x->gm_free)) : NULL;
        if ((na && !x->gm_alloc) || (nf && !x->gm_free)) {
                free(x->gm_alloc);
                free(x->gm_free);
                x->gm_alloc = x->gm_free = NULL;
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        for (size_t i = 0; i < g->n; i++) {
                kc_node *nd = g->nodes[i];
                if (nd->gm_kind == KC_GM_ALLOC)
                        x->gm_alloc[x->n_alloc++] = nd->gm;
                else if (nd->gm_kind == KC_GM_FREE)
                        x->gm_free[x->n_free++] = nd->gm;
                else
                        continue;
                nd->gm->refs++;
        }
        return CUDA_SUCCESS;
}

void kc__gm_exec_free(kc_exec *x)
{
        for (size_t i = 0; i < x->n_alloc; i++)
                kc__gm_unref(x->gm_alloc[i]);
        for (size_t i = 0; i < x->n_free; i++)
                kc__gm_unref(x->gm_free[i]);
        free(x->gm_alloc);
        free(x->gm_free);
}

CUresult kc__gm_launch_begin(kc_exec *x)
{
        uint64_t need[KC_MAX_DEVS] = {0};
        for (size_t i = 0; i < x->n_alloc; i++) {
                kc_gmem *m = x->gm_alloc[i];
                if (m->live && !frees(x, m)) /* [UNVERIFIED] error code of a relaunch */
                        return CUDA_ERROR_INVALID_VALUE;
                if (!m->live)
                        need[m->dev] += m->len;
        }
        uint64_t grown[KC_MAX_DEVS] = {0};
        for (int d = 0; d < kc_g.n_devs; d++) {
                uint64_t want = gm_dev[d].used + need[d];
                if (!need[d] || want <= gm_dev[d].reserved)
                        continue;
                CUresult r = kc__mem_charge(d, want - gm_dev[d].reserved);
                if (r) {
                        for (int e = 0; e < d; e++) {
                                if (grown[e]) {
                                        kc__mem_uncharge(e, grown[e]);
                                        gm_dev[e].reserved -= grown[e];
                                }
                        }
                        return r;
                }
                grown[d] = want - gm_dev[d].reserved;
                gm_dev[d].reserved = want;
                if (want > gm_dev[d].reserved_high)
                        gm_dev[d].reserved_high = want;
        }
        for (size_t i = 0; i < x->n_alloc; i++) {
                kc_gmem *m = x->gm_alloc[i];
                if (m->live++)
                        continue;
                gm_dev[m->dev].used += m->len;
                if (gm_dev[m->dev].used > gm_dev[m->dev].used_high)
                        gm_dev[m->dev].used_high = gm_dev[m->dev].used;
        }
        return CUDA_SUCCESS;
}

typedef struct {
        size_t n;
        kc_gmem *m[];
} gm_frees;

static void gm_frees_run(void *arg)
{
        gm_frees *f = arg;
        kc__lock();
        for (size_t i = 0; i < f->n; i++) {
                gm_release(f->m[i], false);
                kc__gm_unref(f->m[i]);
        }
        kc__unlock();
        free(f);
}

CUresult kc__gm_launch_end(kc_exec *x, kc_stream *s)
{
        if (!x->n_free)
                return CUDA_SUCCESS;
        gm_frees *f = malloc(sizeof(*f) + x->n_free * sizeof(f->m[0]));
        if (!f)
                return CUDA_ERROR_OUT_OF_MEMORY;
        f->n = x->n_free;
        for (size_t i = 0; i < x->n_free; i++) {
                f->m[i] = x->gm_free[i];
                f->m[i]->refs++;
        }
        kc_op op = {.kind = KC_OP_HOST_FN};
        op.u.host.fn = gm_frees_run;
        op.u.host.arg = f;
        CUresult r = kc__submit(s, &op);
        if (r) { /* not queued: free now */
                for (size_t i = 0; i < f->n; i++) {
                        gm_release(f->m[i], false);
                        kc__gm_unref(f->m[i]);
                }
                free(f);
        }
        return r;
}

KERF_CUDA_EXPORT CUresult cuDeviceGraphMemTrim(CUdevice device)
{
        CUresult r = kc__check_init();
        if (!r)
                r = kc__check_dev(device);
        if (r)
                return r;
        kc__lock();
        uint64_t spare = gm_dev[device].reserved - gm_dev[device].used;
        if (spare) {
                kc__mem_uncharge(device, spare);
                gm_dev[device].reserved -= spare;
        }
        kc__unlock();
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr,
                                                       void *value)
{
        CUresult r = kc__check_init();
        if (!r)
                r = kc__check_dev(device);
        if (r)
                return r;
        if (!value)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        cuuint64_t v = 0;
        switch (attr) {
        case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
                v = gm_dev[device].used;
                break;
        case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
                v = gm_dev[device].used_high;
                break;
        case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT:
                v = gm_dev[device].reserved;
                break;
        case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
                v = gm_dev[device].reserved_high;
                break;
        default:
                r = CUDA_ERROR_INVALID_VALUE;
        }
        kc__unlock();
        if (!r)
                memcpy(value, &v, sizeof(v));
        return r;
}

/* Only the high watermarks can be set, and only to 0. */
KERF_CUDA_EXPORT CUresult cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr,
                                                       void *value)
{
        CUresult r = kc__check_init();
        if (!r)
                r = kc__check_dev(device);
        if (r)
                return r;
        cuuint64_t v;
        if (!value)
                return CUDA_ERROR_INVALID_VALUE;
        memcpy(&v, value, sizeof(v));
        if (v || (attr != CU_GRAPH_MEM_ATTR_USED_MEM_HIGH &&
                  attr != CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH))
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        if (attr == CU_GRAPH_MEM_ATTR_USED_MEM_HIGH)
                gm_dev[device].used_high = 0;
        else
                gm_dev[device].reserved_high = 0;
        kc__unlock();
        return CUDA_SUCCESS;
}
