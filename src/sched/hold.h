/* SPDX-License-Identifier: Apache-2.0 */
/* hold.h - an internal hook of the scheduling core, not part of the public API (include/kerf):
 * src/replay uses it to account pods that request no GPU, which kerf_request cannot express
 * (docs/PERFORMANCE.md, c). */
#ifndef KERF_SCHED_HOLD_H
#define KERF_SCHED_HOLD_H

#include <stdint.h>

#include "kerf/sched.h"

/* Takes cpu_milli CPU and mem_bytes host memory of node `node` out of what the scheduler may
 * give tasks, for work placed outside it. Nothing is emitted and no task is touched; the hold
 * lasts as long as the scheduler (it is not part of snapshots). 0, or -EINVAL (no such node,
 * or the node's unaccounted free CPU/memory is short). */
int kerf__sched_node_hold(kerf_sched *s, unsigned node, uint64_t cpu_milli, uint64_t mem_bytes);

#endif
