/* SPDX-License-Identifier: Apache-2.0 */
/* bucket.c - the compute share's pure parts: the cost estimator, the shared token bucket's
 * refill and cap, the launch-shape hash (limiter.c uses them; docs/SHIM.md "## Compute") */
#include "compute.h"

uint64_t ks__dims_hash(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned smem)
{
        uint64_t h = 0x9e3779b97f4a7c15ULL;
        const uint64_t v[4] = {(uint64_t)gx << 32 | gy, (uint64_t)gz << 32 | bx,
                               (uint64_t)by << 32 | bz, smem};
        for (int i = 0; i < 4; i++) {
                h ^= v[i] + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
                h *= 0xff51afd7ed558ccdULL;
                h ^= h >> 33;
        }
        return h;
}

uint64_t ks__estimate(const uint32_t *samples_us, unsigned n)
{
        uint32_t busy[KS_RING], idle[KS_RING];
        unsigned nb = 0, ni = 0;
        if (n > KS_RING)
                n = KS_RING;
        for (unsigned i = 0; i < n; i++) {
                if (samples_us[i] & KS_IDLE)
                        idle[ni++] = samples_us[i] & ~KS_IDLE;
                else
                        busy[nb++] = samples_us[i];
        }
        uint64_t ns, idle_min = UINT64_MAX;
        for (unsigned i = 0; i < ni; i++)
                if (idle[i] < idle_min)
                        idle_min = idle[i];
        if (nb >= 3 || (nb && !ni)) {
                /* started behind earlier work: elapsed = cost +- the jitter of two event
                 * timestamps (plus, rarely, a neighbour's time slice): the median */
                for (unsigned i = 1; i < nb; i++) /* insertion sort: nb <= 8 */
                        for (unsigned j = i; j > 0 && busy[j - 1] > busy[j]; j--) {
                                uint32_t t = busy[j];
                                busy[j] = busy[j - 1];
                                busy[j - 1] = t;
                        }
                ns = nb & 1 ? (uint64_t)busy[nb / 2] * 1000
                            : ((uint64_t)busy[nb / 2 - 1] + busy[nb / 2]) * 500;
                /* an idle sample is never less than the cost: it bounds a median pulled up
                 * by a few slow samples (a host that fell behind, a neighbour's slice) */
                if (ni && ns > idle_min * 1000)
                        ns = idle_min * 1000;
        } else if (ni) {
                /* started on an idle stream: elapsed = cost + the launch latency (the start
                 * event ran before the kernel arrived) + any neighbour's slice, never less
                 * than the cost: the minimum */
                ns = idle_min * 1000;
        } else {
                return 0;
        }
        return ns ? ns : 1000; /* never 0: 0 means "unknown" */
}

int64_t ks__bucket_burst(uint32_t pct, uint32_t window_ms)
{
        if (window_ms < 5)
                window_ms = 5;
        if (window_ms > 1000)
                window_ms = 1000;
        return (int64_t)window_ms * KS_MS / 5 * pct / 100;
}

int64_t ks__bucket_refill(struct kerf_slice_region *r, uint64_t now_ns, uint32_t pct,
                          int64_t burst_ns)
{
        uint64_t st = atomic_load_explicit(&r->credit_stamp_ns, memory_order_acquire);
        if (now_ns > st &&
            atomic_compare_exchange_strong_explicit(&r->credit_stamp_ns, &st, now_ns,
                                                    memory_order_acq_rel, memory_order_acquire)) {
                uint64_t dt = now_ns - st;
                if (dt > 10000000000ULL) /* first refill, or a long pause: a full bucket */
                        dt = 10000000000ULL;
                int64_t add = (int64_t)(dt * pct / 100);
                int64_t c = atomic_load_explicit(&r->credit_ns, memory_order_relaxed);
                for (;;) {
                        int64_t n = c + add;
                        if (n > burst_ns) /* also drops what a higher rate left above the cap */
                                n = burst_ns;
                        if (atomic_compare_exchange_weak_explicit(
                                &r->credit_ns, &c, n, memory_order_acq_rel, memory_order_relaxed))
                                return n;
                }
        }
        return atomic_load_explicit(&r->credit_ns, memory_order_acquire);
}
