/* SPDX-License-Identifier: Apache-2.0 */
/* hold.c - node CPU and host memory held for work the scheduler does not place (hold.h) */
#include <errno.h>

#include "hold.h"
#include "internal.h"

int kerf__sched_node_hold(kerf_sched *s, unsigned node, uint64_t cpu_milli, uint64_t mem_bytes)
{
        if (!s || node >= s->fleet->n_nodes)
                return -EINVAL;
        snode *n = &s->nodes[node];
        if ((n->cpu_free != UINT64_MAX && n->cpu_free < cpu_milli) ||
            (n->mem_free != UINT64_MAX && n->mem_free < mem_bytes))
                return -EINVAL;
        if (n->cpu_free != UINT64_MAX) {
                n->cpu_free -= cpu_milli;
                n->cpu_held += cpu_milli;
        }
        if (n->mem_free != UINT64_MAX) {
                n->mem_free -= mem_bytes;
                n->mem_held += mem_bytes;
        }
        s->gen++;
        return 0;
}
