/* SPDX-License-Identifier: Apache-2.0 */
/* slicectl.c - kerfd's half of the compute loop (docs/SHIM.md "## Compute") */
#include "slicectl.h"

#include <stdlib.h>
#include <string.h>

/*
 * Per GPU, every step:
 *   active(s)  = last_activity within active_ns, or the task younger than start_grace_ns
 *   reserved   = sum of compute_pct over active slices (each keeps at least its guarantee)
 *   room       = 100 - reserved, shared among active slices that can burst
 *                (compute_limit_pct > compute_pct) in proportion to their guarantees (equally
 *                when all of them guarantee 0), capped at each one's compute_limit_pct; what a
 *                capped slice cannot take is handed to the others (water filling)
 *   allowed    = compute_pct + share (active), compute_pct (inactive: a slice that wakes up
 *                has its guarantee at once; bursters are pulled back on the next step)
 *   YIELD      = best_effort and a high_impact slice on the same GPU active within hi_busy_ns
 *   FROZEN     = frozen
 * TSLICE and MPS slices have no compute reservation: only their flags are managed.
 */

#define MS 1000000ULL

void kerf_slicectl_params_default(kerf_slicectl_params *p)
{
        p->active_ns = 200 * MS;
        p->hi_busy_ns = 200 * MS;
        p->start_grace_ns = 1000 * MS;
}

static bool recent(uint64_t stamp, uint64_t now, uint64_t within)
{
        return stamp && (stamp >= now || now - stamp < within);
}

static bool compute_managed(const kerf_slicectl_slice *s)
{
        uint32_t f = atomic_load_explicit(&s->region->limits.flags, memory_order_relaxed);
        return !(f & (KERF_SLICE_F_TSLICE | KERF_SLICE_F_MPS));
}

/* Computes allowed[] for the slices of one GPU (indexes idx[0..m)). */
static void balance_gpu(const kerf_slicectl_slice *s, const size_t *idx, size_t m,
                        const bool *active, uint32_t *allowed)
{
        uint32_t reserved = 0;
        for (size_t k = 0; k < m; k++) {
                const struct kerf_slice_limits *l = &s[idx[k]].region->limits;
                uint32_t pct = atomic_load_explicit(&l->compute_pct, memory_order_relaxed);
                uint32_t lim = atomic_load_explicit(&l->compute_limit_pct, memory_order_relaxed);
                if (pct > 100)
                        pct = 100;
                if (lim < pct)
                        lim = pct;
                if (lim > 100)
                        lim = 100;
                allowed[k] = pct;
                if (active[idx[k]] && compute_managed(&s[idx[k]]))
                        reserved += pct;
        }
        if (reserved >= 100)
                return;
        uint32_t room = 100 - reserved;
        /* Water filling: up to m rounds, each hands the room out in proportion to the
         * guarantees of the active bursters still below their ceiling. */
        for (size_t round = 0; round < m && room > 0; round++) {
                uint64_t weight = 0;
                size_t open = 0;
                for (size_t k = 0; k < m; k++) {
                        const kerf_slicectl_slice *sl = &s[idx[k]];
                        uint32_t lim = atomic_load_explicit(&sl->region->limits.compute_limit_pct,
                                                            memory_order_relaxed);
                        if (lim > 100)
                                lim = 100;
                        if (!active[idx[k]] || !compute_managed(sl) || allowed[k] >= lim)
                                continue;
                        open++;
                        weight += atomic_load_explicit(&sl->region->limits.compute_pct,
                                                       memory_order_relaxed);
                }
                if (!open)
                        break;
                uint32_t given = 0;
                for (size_t k = 0; k < m; k++) {
                        const kerf_slicectl_slice *sl = &s[idx[k]];
                        uint32_t lim = atomic_load_explicit(&sl->region->limits.compute_limit_pct,
                                                            memory_order_relaxed);
                        uint32_t pct = atomic_load_explicit(&sl->region->limits.compute_pct,
                                                            memory_order_relaxed);
                        if (lim > 100)
                                lim = 100;
                        if (!active[idx[k]] || !compute_managed(sl) || allowed[k] >= lim)
                                continue;
                        uint64_t share = weight ? (uint64_t)room * pct / weight : room / open;
                        if (share > lim - allowed[k])
                                share = lim - allowed[k];
                        allowed[k] += (uint32_t)share;
                        given += (uint32_t)share;
                }
                if (!given) { /* rounding left less than one point per slice: stop */
                        break;
                }
                room -= given;
        }
}

static bool store_if(_Atomic uint32_t *w, uint32_t v)
{
        if (atomic_load_explicit(w, memory_order_relaxed) == v)
                return false;
        atomic_store_explicit(w, v, memory_order_release);
        return true;
}

/* Per-slice scratch of one step. */
typedef struct scratch {
        bool *active, *hi_busy, *done;
        size_t *idx;
        uint32_t *allowed;
} scratch;

static size_t step(kerf_slicectl_slice *s, size_t n, uint64_t now_ns, const kerf_slicectl_params *p,
                   const scratch *w)
{
        for (size_t i = 0; i < n; i++) {
                uint64_t last = s[i].region ? atomic_load_explicit(&s[i].region->last_activity_ns,
                                                                   memory_order_relaxed)
                                            : 0;
                w->active[i] = s[i].region && (recent(last, now_ns, p->active_ns) ||
                                               recent(s[i].started_ns, now_ns, p->start_grace_ns));
                w->hi_busy[i] =
                    s[i].region && s[i].high_impact && recent(last, now_ns, p->hi_busy_ns);
                w->done[i] = false;
        }
        size_t changed = 0;
        for (size_t i = 0; i < n; i++) {
                if (w->done[i] || !s[i].region)
                        continue;
                size_t m = 0;
                bool hi = false;
                for (size_t j = i; j < n; j++) {
                        if (w->done[j] || !s[j].region || s[j].gpu != s[i].gpu)
                                continue;
                        w->idx[m++] = j;
                        w->done[j] = true;
                        hi |= w->hi_busy[j];
                }
                balance_gpu(s, w->idx, m, w->active, w->allowed);
                for (size_t k = 0; k < m; k++) {
                        kerf_slicectl_slice *sl = &s[w->idx[k]];
                        struct kerf_slice_limits *l = &sl->region->limits;
                        bool ch = false;
                        if (compute_managed(sl))
                                ch |= store_if(&l->compute_allowed_pct, w->allowed[k]);
                        uint32_t f = atomic_load_explicit(&l->flags, memory_order_relaxed);
                        uint32_t nf = f & ~(KERF_SLICE_F_FROZEN | KERF_SLICE_F_YIELD);
                        if (sl->frozen)
                                nf |= KERF_SLICE_F_FROZEN;
                        if (sl->best_effort && !sl->high_impact && hi)
                                nf |= KERF_SLICE_F_YIELD;
                        ch |= store_if(&l->flags, nf);
                        if (ch) {
                                atomic_fetch_add_explicit(&l->generation, 1, memory_order_release);
                                changed++;
                        }
                }
        }
        return changed;
}

size_t kerf_slicectl_step(kerf_slicectl_slice *s, size_t n, uint64_t now_ns,
                          const kerf_slicectl_params *p)
{
        kerf_slicectl_params def;
        if (!p) {
                kerf_slicectl_params_default(&def);
                p = &def;
        }
        if (!s || !n)
                return 0;
        /* Scratch on the stack up to KERF_SLICECTL_MAX slices, else on the heap (and, should
         * that fail, the first KERF_SLICECTL_MAX slices only). */
        enum { M = KERF_SLICECTL_MAX };
        bool active[M], hi_busy[M], done[M];
        size_t idx[M];
        uint32_t allowed[M];
        scratch w = {active, hi_busy, done, idx, allowed};
        void *heap = NULL;
        if (n > M) {
                heap = calloc(n, 3 * sizeof(bool) + sizeof(size_t) + sizeof(uint32_t));
                if (heap) {
                        w.idx = heap; /* most aligned first */
                        w.allowed = (uint32_t *)(w.idx + n);
                        w.active = (bool *)(w.allowed + n);
                        w.hi_busy = w.active + n;
                        w.done = w.hi_busy + n;
                } else {
                        n = M;
                }
        }
        size_t changed = step(s, n, now_ns, p, &w);
        free(heap);
        return changed;
}
