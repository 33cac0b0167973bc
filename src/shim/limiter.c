/* SPDX-License-Identifier: Apache-2.0 */
/* limiter.c - the compute share: shared token bucket, measured device time, FROZEN / YIELD */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compute.h"
#include "syms.h"

/*
 * docs/SHIM.md "## Compute" describes the algorithm; in short:
 *
 * Cost keys. Every launch has a key: (function, grid, block, shared memory) or (graph exec).
 * A process-local open-addressing table (lock-free: slots claimed by CAS) holds per key the
 * device-time estimate and a ring of the last KS_RING measured samples.
 *
 * Measurement. Some launches are bracketed by a pair of timing events recorded on the
 * launch's stream (pairs come from a per-context pool created once per context): every launch
 * of a key with fewer than KS_MIN_SAMPLES samples, then one launch of a thread in
 * KS_SAMPLE_EVERY/2..3/2 (jittered) and at least one per key per KS_REFRESH_NS. The background
 * thread collects finished pairs (cuEventQuery / cuEventElapsedTime). Time-slicing with other
 * processes only ever adds to a pair's elapsed time: the estimate is the median of samples
 * that started behind earlier work (jitter both ways), or else the minimum of samples that
 * started on an idle stream (which also carry the launch latency) - never the mean.
 *
 * Bucket. region->credit_ns is shared by every process of the task. Anyone refills it by CAS
 * on credit_stamp_ns at compute_allowed_pct of the elapsed wall time, capped at the burst
 * (window_ms / 5 at that rate). A launch subtracts its key's estimate; when the credit is then
 * negative the launch is held until the debt is repaid plus a small release threshold (so
 * held launches leave in short batches), adding the time held to throttled_ns. The debt of a
 * launch is carried by the credit, so nothing is forgotten at window boundaries.
 *
 * A launch of a key without an estimate is charged KS_PROVISIONAL_NS and always sampled; the
 * difference to the first estimate is charged when the pair is collected. At most
 * KS_MAX_UNKNOWN such launches per key are in flight: more wait for the first sample.
 */

#define KS_TABLE          2048u /* cost keys (power of two) */
#define KS_PROBES         32u
#define KS_MIN_SAMPLES    3u
#define KS_SAMPLE_EVERY   128u
#define KS_REFRESH_NS     100000000ULL /* at least one sample per key per 100 ms of use */
#define KS_PROVISIONAL_NS 100000LL
#define KS_MAX_UNKNOWN    4u
#define KS_POOLS          16u
#define KS_PAIRS          64u
#define KS_THREADS        256u /* per-thread counter blocks; more threads share one (atomics) */

typedef struct ks_key {
        _Atomic uint64_t tag; /* 0 free, else hash | 1 */
        uint64_t obj, dims;   /* written before `ready` */
        _Atomic uint32_t ready;
        _Atomic uint32_t nsamp;  /* samples ever collected */
        _Atomic uint64_t est_ns; /* 0: unknown yet */
        _Atomic uint64_t last_sample_ns;
        _Atomic uint32_t unknown_inflight; /* provisional launches not collected yet */
        uint32_t ring[KS_RING];            /* us; collector only (under collect_mu) */
        uint32_t ring_n, ring_pos;
} ks_key;

enum { PAIR_ARMED = 1, PAIR_PENDING = 2, PAIR_VOID = 3 };

typedef struct ks_pair {
        CUevent a, b; /* start, end */
        _Atomic uint32_t state;
        ks_key *key;
        int64_t charged_ns;
        bool provisional;
        bool idle;
} ks_pair;

typedef struct ks_pool {
        _Atomic(CUcontext) ctx;
        _Atomic int ok;
        _Atomic uint64_t free_mask; /* bit i: pair[i] free */
        ks_pair pair[KS_PAIRS];
} ks_pool;

static struct {
        _Atomic uint64_t now;      /* coarse CLOCK_MONOTONIC, stored by the tick */
        _Atomic int64_t device_ns; /* corrections; launches count in tcounts */
        int64_t pub_device_ns;     /* tick only */
        uint64_t pub_launches;
        ks_key overflow; /* keys that found no slot share this one */
        pthread_mutex_t collect_mu, pool_mu, pub_mu;
        CUresult (*is_capturing)(CUstream, CUstreamCaptureStatus *);
        CUresult (*is_capturing_ptsz)(CUstream, CUstreamCaptureStatus *);
        CUresult (*elapsed)(float *, CUevent, CUevent);
        CUresult (*stream_query)(CUstream);
        CUresult (*stream_query_ptsz)(CUstream);
} kc = {.collect_mu = PTHREAD_MUTEX_INITIALIZER,
        .pool_mu = PTHREAD_MUTEX_INITIALIZER,
        .pub_mu = PTHREAD_MUTEX_INITIALIZER};

/* Per-thread counters: written by their thread only (plain relaxed stores, no locked
 * instruction on the launch path), summed by the tick. Never freed: a thread that exited
 * keeps its totals. */
typedef struct ks_tcount {
        _Atomic uint64_t launches;
        _Atomic int64_t device_ns;
        uint32_t countdown; /* launches until this thread samples one */
        char pad[44];
} ks_tcount;

static ks_tcount tcounts[KS_THREADS + 1]; /* the last one is shared (atomics) */
static _Atomic uint32_t ntcounts;
static __thread ks_tcount *my_tcount;

static ks_key keys[KS_TABLE];
static ks_pool pools[KS_POOLS];
static _Atomic unsigned pools_hi; /* pools[0..pools_hi) were ever used: the collector's range */
bool ks__limiter_broken;
/* The tables above were used in this process image (a fork child, or a second init in the
 * unit tests, resets them; a first init leaves the zero pages untouched: no page faults). */
static bool limiter_dirty;

/* ---- pure parts: bucket.c (ks__estimate, ks__bucket_*, ks__dims_hash) ---- */

static uint64_t mix(uint64_t a, uint64_t b)
{
        uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0xc2b2ae3d27d4eb4fULL);
        h ^= h >> 31;
        h *= 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 29;
        return h | 1;
}

/* ---- cost keys ---- */

static ks_key *key_get(uint64_t obj, uint64_t dims)
{
        uint64_t tag = mix(obj, dims);
        for (unsigned i = 0; i < KS_PROBES; i++) {
                ks_key *k = &keys[(tag + i) & (KS_TABLE - 1)];
                uint64_t t = atomic_load_explicit(&k->tag, memory_order_acquire);
                if (!t) {
                        uint64_t z = 0;
                        if (atomic_compare_exchange_strong_explicit(
                                &k->tag, &z, tag, memory_order_acq_rel, memory_order_acquire)) {
                                k->obj = obj;
                                k->dims = dims;
                                atomic_store_explicit(&k->ready, 1, memory_order_release);
                                return k;
                        }
                        t = z;
                }
                if (t != tag)
                        continue;
                while (!atomic_load_explicit(&k->ready, memory_order_acquire))
                        ; /* the claimer is between two stores */
                if (k->obj == obj && k->dims == dims)
                        return k;
        }
        return &kc.overflow;
}

/* ---- timing pairs ---- */

static ks_pool *pool_create(CUcontext ctx)
{
        ks_pool *p = NULL;
        pthread_mutex_lock(&kc.pool_mu);
        for (unsigned i = 0; i < KS_POOLS && !p; i++)
                if (atomic_load(&pools[i].ctx) == ctx)
                        p = &pools[i];
        for (unsigned i = 0; i < KS_POOLS && !p; i++)
                if (!atomic_load(&pools[i].ctx))
                        p = &pools[i];
        if (p && !atomic_load(&p->ok)) {
                CUcontext cur = NULL;
                bool sw = false;
                unsigned n = 0;
                if (ks_real.cuCtxGetCurrent && ks_real.cuCtxSetCurrent && ks_real.cuEventCreate &&
                    ks_real.cuCtxGetCurrent(&cur) == CUDA_SUCCESS) {
                        sw = cur != ctx && ks_real.cuCtxSetCurrent(ctx) == CUDA_SUCCESS;
                        if (cur == ctx || sw)
                                for (; n < KS_PAIRS; n++)
                                        if (ks_real.cuEventCreate(&p->pair[n].a, 0) ||
                                            ks_real.cuEventCreate(&p->pair[n].b, 0))
                                                break;
                        if (sw)
                                ks_real.cuCtxSetCurrent(cur);
                }
                unsigned hi = (unsigned)(p - pools) + 1;
                if (atomic_load(&pools_hi) < hi)
                        atomic_store(&pools_hi, hi);
                atomic_store(&p->free_mask, n >= 64 ? ~0ULL : ((1ULL << n) - 1));
                atomic_store(&p->ok, n > 0);
                atomic_store_explicit(&p->ctx, ctx, memory_order_release);
        }
        pthread_mutex_unlock(&kc.pool_mu);
        return p && atomic_load(&p->ok) ? p : NULL;
}

static ks_pair *pair_claim(CUstream h)
{
        CUcontext ctx = NULL;
        uintptr_t hv = (uintptr_t)h;
        if (hv > 2 && ks_real.cuStreamGetCtx) {
                if (ks_real.cuStreamGetCtx(h, &ctx))
                        return NULL;
        } else if (!ks_real.cuCtxGetCurrent || ks_real.cuCtxGetCurrent(&ctx)) {
                return NULL;
        }
        if (!ctx)
                return NULL;
        ks_pool *p = NULL;
        for (unsigned i = 0; i < KS_POOLS; i++)
                if (atomic_load_explicit(&pools[i].ctx, memory_order_acquire) == ctx) {
                        if (!atomic_load(&pools[i].ok))
                                return NULL; /* no events in this context: not measured */
                        p = &pools[i];
                        break;
                }
        if (!p && !(p = pool_create(ctx)))
                return NULL;
        uint64_t m = atomic_load_explicit(&p->free_mask, memory_order_acquire);
        while (m) {
                unsigned i = (unsigned)__builtin_ctzll(m);
                if (atomic_compare_exchange_weak_explicit(&p->free_mask, &m, m & ~(1ULL << i),
                                                          memory_order_acq_rel,
                                                          memory_order_acquire)) {
                        atomic_store_explicit(&p->pair[i].state, PAIR_ARMED, memory_order_relaxed);
                        return &p->pair[i];
                }
        }
        return NULL;
}

static void pair_free(ks_pair *q)
{
        for (unsigned i = 0; i < KS_POOLS; i++) {
                ks_pool *p = &pools[i];
                if (q >= p->pair && q < p->pair + KS_PAIRS) {
                        atomic_store_explicit(&q->state, 0, memory_order_relaxed);
                        atomic_fetch_or_explicit(&p->free_mask, 1ULL << (q - p->pair),
                                                 memory_order_release);
                        return;
                }
        }
}

/* Device time charged outside a launch (corrections): shared, atomic. */
static void charge(int64_t ns)
{
        atomic_fetch_add_explicit(&kc.device_ns, ns, memory_order_relaxed);
}

static ks_tcount *tcount_get(void)
{
        ks_tcount *t = my_tcount;
        if (__builtin_expect(!t, 0)) {
                uint32_t i = atomic_fetch_add(&ntcounts, 1);
                t = my_tcount = &tcounts[i < KS_THREADS ? i : KS_THREADS];
        }
        return t;
}

/* Counts one launch that charged ns: the thread's own block, or the shared one. */
static void count_launch(int64_t ns)
{
        ks_tcount *t = tcount_get();
        if (__builtin_expect(t == &tcounts[KS_THREADS], 0)) {
                atomic_fetch_add_explicit(&t->launches, 1, memory_order_relaxed);
                atomic_fetch_add_explicit(&t->device_ns, ns, memory_order_relaxed);
                return;
        }
        atomic_store_explicit(&t->launches,
                              atomic_load_explicit(&t->launches, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        atomic_store_explicit(&t->device_ns,
                              atomic_load_explicit(&t->device_ns, memory_order_relaxed) + ns,
                              memory_order_relaxed);
}

/* Folds one measured sample into its key; charges the difference for a provisional launch. */
static void sample_add(ks_pair *q, uint64_t elapsed_ns, uint64_t now)
{
        ks_key *k = q->key;
        uint64_t us = elapsed_ns / 1000;
        if (us > ~KS_IDLE)
                us = ~KS_IDLE;
        k->ring[k->ring_pos] = (uint32_t)us | (q->idle ? KS_IDLE : 0);
        k->ring_pos = (k->ring_pos + 1) % KS_RING;
        if (k->ring_n < KS_RING)
                k->ring_n++;
        uint64_t est = ks__estimate(k->ring, k->ring_n);
        atomic_store_explicit(&k->est_ns, est, memory_order_release);
        atomic_fetch_add_explicit(&k->nsamp, 1, memory_order_relaxed);
        atomic_store_explicit(&k->last_sample_ns, now, memory_order_relaxed);
        if (q->provisional) {
                atomic_fetch_sub_explicit(&k->unknown_inflight, 1, memory_order_relaxed);
                int64_t diff = ks__limiter_broken ? 0 : (int64_t)est - q->charged_ns;
                if (diff && ks.region)
                        atomic_fetch_sub_explicit(&ks.region->credit_ns, diff,
                                                  memory_order_acq_rel);
                charge(diff);
        }
}

/* Collects finished pairs; one collector at a time (the tick, or a launch waiting for its
 * key's first sample). Returns the number of pairs still in flight (1 when another
 * collector is at work). */
static unsigned collect(uint64_t now)
{
        unsigned left = 0;
        unsigned hi = atomic_load_explicit(&pools_hi, memory_order_acquire);
        if (!hi)
                return 0; /* nothing was ever sampled: touch no pool (no page faults) */
        if (pthread_mutex_trylock(&kc.collect_mu))
                return 1;
        for (unsigned i = 0; i < hi; i++) {
                ks_pool *p = &pools[i];
                if (!atomic_load_explicit(&p->ok, memory_order_acquire))
                        continue;
                uint64_t busy = ~atomic_load_explicit(&p->free_mask, memory_order_acquire);
                while (busy) {
                        unsigned j = (unsigned)__builtin_ctzll(busy);
                        busy &= busy - 1;
                        ks_pair *q = &p->pair[j];
                        uint32_t st = atomic_load_explicit(&q->state, memory_order_acquire);
                        if (st == PAIR_VOID) {
                                if (q->provisional)
                                        atomic_fetch_sub(&q->key->unknown_inflight, 1);
                                pair_free(q);
                                continue;
                        }
                        if (st != PAIR_PENDING) {
                                left++; /* armed: its launch is between begin and end */
                                continue;
                        }
                        CUresult r = ks_real.cuEventQuery(q->b);
                        if (r == CUDA_ERROR_NOT_READY) {
                                left++;
                                continue;
                        }
                        float ms = 0;
                        if (r == CUDA_SUCCESS && kc.elapsed && !kc.elapsed(&ms, q->a, q->b) &&
                            ms >= 0)
                                sample_add(q, (uint64_t)((double)ms * 1e6), now);
                        else if (q->provisional)
                                atomic_fetch_sub(&q->key->unknown_inflight, 1);
                        pair_free(q);
                }
        }
        pthread_mutex_unlock(&kc.collect_mu);
        return left;
}

/* ---- holds ---- */

static void sleep_ns(int64_t ns)
{
        struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
        while (nanosleep(&ts, &ts) && errno == EINTR)
                ;
}

static bool throttled(uint32_t flags, uint32_t pct)
{
        return pct < 100 && !(flags & (KERF_SLICE_F_TSLICE | KERF_SLICE_F_MPS));
}

static uint32_t rate(uint32_t pct)
{
        return pct ? pct : 1; /* allowed 0: crawl at 1 % rather than never wake up */
}

static void held_account(uint64_t t0)
{
        uint64_t d = ks__now_ns() - t0;
        struct kerf_slice_region *r = ks.region;
        atomic_fetch_add_explicit(&r->throttled_ns, d, memory_order_relaxed);
        atomic_fetch_add_explicit(&r->held_launches, 1, memory_order_relaxed);
        if (ks.slot && !atomic_load_explicit(&ks.exited, memory_order_acquire))
                atomic_fetch_add_explicit(&ks.slot->throttled_ns, d, memory_order_relaxed);
}

/* Holds while FROZEN / YIELD, then (when `indebt`) until the credit is back above the release
 * threshold. */
static void hold(bool indebt)
{
        struct kerf_slice_region *r = ks.region;
        uint64_t t0 = ks__now_ns();
        int64_t poll = 100000;
        bool held = false;
        for (;;) {
                uint32_t f = atomic_load_explicit(&r->limits.flags, memory_order_acquire);
                if (f & (KERF_SLICE_F_FROZEN | KERF_SLICE_F_YIELD)) {
                        /* polls back off from 0.1 to 8 ms: a short hold resumes at once, a
                         * long one costs the neighbours it yields to ~125 wake-ups a second */
                        held = true;
                        sleep_ns(poll);
                        if (poll < 8 * KS_MS)
                                poll *= 2;
                        continue;
                }
                uint32_t pct =
                    atomic_load_explicit(&r->limits.compute_allowed_pct, memory_order_relaxed);
                if (!indebt || !throttled(f, pct) || ks__limiter_broken)
                        break;
                pct = rate(pct);
                int64_t burst = ks__bucket_burst(
                    pct, atomic_load_explicit(&r->limits.window_ms, memory_order_relaxed));
                int64_t want = burst / 4;
                int64_t c = ks__bucket_refill(r, ks__now_ns(), pct, burst);
                if (c >= want)
                        break;
                int64_t wait = (want - c) * 100 / pct;
                if (wait < 50000)
                        wait = 50000;
                if (wait > 5 * KS_MS)
                        wait = 5 * KS_MS;
                held = true;
                sleep_ns(wait);
        }
        if (held)
                held_account(t0);
}

/* A key without an estimate: wait (collecting ourselves) while KS_MAX_UNKNOWN of its
 * launches are in flight unmeasured; gives up after 1 s. */
static void wait_first_sample(ks_key *k)
{
        uint64_t t0 = ks__now_ns();
        bool held = false;
        while (!atomic_load_explicit(&k->est_ns, memory_order_acquire) &&
               atomic_load_explicit(&k->unknown_inflight, memory_order_relaxed) >= KS_MAX_UNKNOWN &&
               ks__now_ns() - t0 < 1000000000ULL) {
                held = true;
                collect(ks__now_ns());
                sleep_ns(100000);
        }
        if (held) { /* the limiter learning a cost, not holding the task at its share */
                struct kerf_slice_region *r = ks.region;
                atomic_fetch_add_explicit(&r->sample_wait_ns, ks__now_ns() - t0,
                                          memory_order_relaxed);
                atomic_fetch_add_explicit(&r->sample_waits, 1, memory_order_relaxed);
        }
}

/* ---- the gate ---- */

static void store_max(_Atomic uint64_t *w, uint64_t v)
{
        uint64_t c = atomic_load_explicit(w, memory_order_relaxed);
        while (c < v && !atomic_compare_exchange_weak_explicit(w, &c, v, memory_order_relaxed,
                                                               memory_order_relaxed))
                ;
}

/* The first launches after a quiet spell, while the background thread sleeps long (it
 * publishes activity only when it wakes, up to KS_IDLE_TICK_MS later): the launch stores
 * last_activity_ns itself (rule 7), so that kerfd's controller sees the slice active at once
 * (an inactive best-effort slice is allowed only its guarantee, and a held launch would not
 * be counted, hence not published, until it is released). Atomics only, at most once a ms. */
static void idle_activity(struct kerf_slice_region *r)
{
        uint64_t now = ks__now_ns();
        if (atomic_load_explicit(&r->last_activity_ns, memory_order_relaxed) + KS_MS < now)
                store_max(&r->last_activity_ns, now);
        struct kerf_slice_proc *slot =
            atomic_load_explicit(&ks.exited, memory_order_acquire) ? NULL : ks.slot;
        if (slot &&
            atomic_load_explicit(&slot->last_activity_ns, memory_order_relaxed) + KS_MS < now)
                atomic_store_explicit(&slot->last_activity_ns, now, memory_order_relaxed);
}

void ks__gate_begin(ks_launch *l, int kind, const void *obj, uint64_t dims, CUstream stream,
                    bool ptsz)
{
        struct kerf_slice_region *r = ks.region;
        l->pair = NULL;
        l->stream = stream;
        l->ptsz = ptsz;
        l->charged_ns = 0;
        l->debited = false;
        l->key = key_get((uint64_t)(uintptr_t)obj ^ (uint64_t)kind << 60, dims);
        if (!r)
                return;
        if (__builtin_expect(atomic_load_explicit(&ks.ticker_idle, memory_order_relaxed), 0))
                idle_activity(r);
        uint32_t f = atomic_load_explicit(&r->limits.flags, memory_order_acquire);
        if (__builtin_expect(f & (KERF_SLICE_F_FROZEN | KERF_SLICE_F_YIELD), 0)) {
                hold(false);
                f = atomic_load_explicit(&r->limits.flags, memory_order_acquire);
        }
        ks_key *k = l->key;
        /* the tick's coarse clock, unless the background thread sleeps long (then the vDSO
         * clock: no syscall) */
        uint64_t now =
            __builtin_expect(atomic_load_explicit(&ks.ticker_idle, memory_order_relaxed), 0)
                ? ks__now_ns()
                : atomic_load_explicit(&kc.now, memory_order_relaxed);
        uint64_t est = atomic_load_explicit(&k->est_ns, memory_order_acquire);
        bool sample = atomic_load_explicit(&k->nsamp, memory_order_relaxed) < KS_MIN_SAMPLES;
        /* one launch in KS_SAMPLE_EVERY/2..3/2 of this thread, jittered so that a periodic
         * pattern of the application is not aliased */
        if (!sample) {
                ks_tcount *t = tcount_get();
                if (t != &tcounts[KS_THREADS] && !t->countdown--) { /* shared: time only */
                        t->countdown = KS_SAMPLE_EVERY / 2 +
                                       (uint32_t)((mix(now, (uintptr_t)t) >> 7) % KS_SAMPLE_EVERY);
                        sample = true;
                }
        }
        if (!sample) {
                uint64_t last = atomic_load_explicit(&k->last_sample_ns, memory_order_relaxed);
                sample = now - last > KS_REFRESH_NS &&
                         atomic_compare_exchange_strong_explicit(&k->last_sample_ns, &last, now,
                                                                 memory_order_relaxed,
                                                                 memory_order_relaxed);
        }
        bool provisional = !est;
        if (provisional) {
                wait_first_sample(k);
                est = atomic_load_explicit(&k->est_ns, memory_order_acquire);
                provisional = !est;
                if (provisional)
                        est = KS_PROVISIONAL_NS;
        }
        int64_t c = ks__limiter_broken ? 1000 : (int64_t)est; /* broken: "grid size" charging */
        l->charged_ns = c;
        uint32_t pct = atomic_load_explicit(&r->limits.compute_allowed_pct, memory_order_relaxed);
        if (throttled(f, pct)) {
                pct = rate(pct);
                uint64_t st = atomic_load_explicit(&r->credit_stamp_ns, memory_order_relaxed);
                if (now > st)
                        ks__bucket_refill(
                            r, now, pct,
                            ks__bucket_burst(pct, atomic_load_explicit(&r->limits.window_ms,
                                                                       memory_order_relaxed)));
                int64_t left =
                    atomic_fetch_sub_explicit(&r->credit_ns, c, memory_order_acq_rel) - c;
                l->debited = true;
                if (__builtin_expect(left < 0, 0) && !ks__limiter_broken)
                        hold(true);
        }
        if (sample || provisional) {
                CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
                CUresult (*cap)(CUstream, CUstreamCaptureStatus *) =
                    ptsz ? kc.is_capturing_ptsz : kc.is_capturing;
                if (cap && cap(stream, &cs) == CUDA_SUCCESS &&
                    cs != CU_STREAM_CAPTURE_STATUS_NONE) {
                        /* captured, not run: nothing to charge or measure */
                        if (l->debited)
                                atomic_fetch_add_explicit(&r->credit_ns, c, memory_order_acq_rel);
                        l->debited = false;
                        l->charged_ns = 0;
                        return;
                }
                ks_pair *q = kc.elapsed ? pair_claim(stream) : NULL;
                if (q) {
                        CUresult (*rec)(CUevent, CUstream) = ptsz && ks_real.cuEventRecord_ptsz
                                                                 ? ks_real.cuEventRecord_ptsz
                                                                 : ks_real.cuEventRecord;
                        CUresult (*query)(CUstream) = ptsz ? kc.stream_query_ptsz : kc.stream_query;
                        q->key = k;
                        q->charged_ns = c;
                        q->provisional = provisional;
                        q->idle = query && query(stream) == CUDA_SUCCESS;
                        CUresult rr = rec(q->a, stream);
                        if (rr) {
                                pair_free(q);
                                q = NULL;
                        } else if (provisional) {
                                atomic_fetch_add_explicit(&k->unknown_inflight, 1,
                                                          memory_order_relaxed);
                        }
                }
                l->pair = q;
        }
}

void ks__gate_end(ks_launch *l, CUresult res)
{
        struct kerf_slice_region *r = ks.region;
        ks_pair *q = l->pair;
        if (!r)
                return;
        if (res != CUDA_SUCCESS) { /* nothing was queued: give the charge back */
                if (l->debited)
                        atomic_fetch_add_explicit(&r->credit_ns, l->charged_ns,
                                                  memory_order_acq_rel);
                if (q)
                        atomic_store_explicit(&q->state, PAIR_VOID, memory_order_release);
                return;
        }
        if (q) {
                CUresult rr = l->ptsz && ks_real.cuEventRecord_ptsz
                                  ? ks_real.cuEventRecord_ptsz(q->b, l->stream)
                                  : ks_real.cuEventRecord(q->b, l->stream);
                atomic_store_explicit(&q->state, rr ? PAIR_VOID : PAIR_PENDING,
                                      memory_order_release);
        }
        count_launch(l->charged_ns);
}

/* ---- init and the background tick ---- */

void ks__limiter_init(void)
{
        const char *b = getenv("KERF_SHIM_TEST_BREAK_LIMITER");
        ks__limiter_broken = b && b[0] == '1';
        if (limiter_dirty) {
                memset(pools, 0, sizeof(pools)); /* after fork the parent's events are not ours */
                atomic_store(&pools_hi, 0);
                for (unsigned i = 0; i < KS_TABLE; i++) /* nor its pairs in flight */
                        if (atomic_load_explicit(&keys[i].tag, memory_order_relaxed))
                                atomic_store_explicit(&keys[i].unknown_inflight, 0,
                                                      memory_order_relaxed);
                atomic_store_explicit(&kc.overflow.unknown_inflight, 0, memory_order_relaxed);
                atomic_store(&kc.device_ns, 0);
                memset(tcounts, 0, sizeof(tcounts)); /* nor its totals */
                pthread_mutex_init(&kc.collect_mu, NULL);
                pthread_mutex_init(&kc.pool_mu, NULL);
                pthread_mutex_init(&kc.pub_mu, NULL);
        }
        limiter_dirty = true;
        kc.pub_launches = 0;
        kc.pub_device_ns = 0;
        atomic_store(&kc.now, ks__now_ns());
        if (ks.libcuda) {
                kc.is_capturing = (CUresult(*)(CUstream, CUstreamCaptureStatus *))ks__real_dlsym(
                    ks.libcuda, "cuStreamIsCapturing");
                kc.is_capturing_ptsz =
                    (CUresult(*)(CUstream, CUstreamCaptureStatus *))ks__real_dlsym(
                        ks.libcuda, "cuStreamIsCapturing_ptsz");
                kc.elapsed = (CUresult(*)(float *, CUevent, CUevent))ks__real_dlsym(
                    ks.libcuda, "cuEventElapsedTime_v2");
                kc.stream_query =
                    (CUresult(*)(CUstream))ks__real_dlsym(ks.libcuda, "cuStreamQuery");
                kc.stream_query_ptsz =
                    (CUresult(*)(CUstream))ks__real_dlsym(ks.libcuda, "cuStreamQuery_ptsz");
        }
        if (!kc.elapsed)
                kc.elapsed = ks_real.cuEventElapsedTime;
        if (!ks_real.cuEventRecord || !ks_real.cuEventQuery || !ks_real.cuEventCreate)
                kc.elapsed = NULL; /* no measurement: keys keep their provisional cost */
}

/* Publishes the counters summed since the last call: region and slot. Returns the number of
 * launches published. */
static uint64_t publish(uint64_t now)
{
        struct kerf_slice_region *r = ks.region;
        /* after the exit handler gave the slot back it may be someone else's */
        struct kerf_slice_proc *slot =
            atomic_load_explicit(&ks.exited, memory_order_acquire) ? NULL : ks.slot;
        pthread_mutex_lock(&kc.pub_mu);
        uint64_t n = 0;
        int64_t d = atomic_load_explicit(&kc.device_ns, memory_order_relaxed);
        uint32_t nt = atomic_load_explicit(&ntcounts, memory_order_relaxed);
        if (nt > KS_THREADS + 1)
                nt = KS_THREADS + 1;
        for (uint32_t i = 0; i < nt; i++) {
                n += atomic_load_explicit(&tcounts[i].launches, memory_order_relaxed);
                d += atomic_load_explicit(&tcounts[i].device_ns, memory_order_relaxed);
        }
        uint64_t dn = n - kc.pub_launches;
        uint64_t dd = (uint64_t)(d - kc.pub_device_ns);
        kc.pub_launches = n;
        kc.pub_device_ns = d;
        pthread_mutex_unlock(&kc.pub_mu);
        if (dd) {
                atomic_fetch_add_explicit(&r->device_time_ns, dd, memory_order_relaxed);
                if (slot)
                        atomic_fetch_add_explicit(&slot->device_time_ns, dd, memory_order_relaxed);
        }
        if (dn) {
                atomic_fetch_add_explicit(&r->launches, dn, memory_order_relaxed);
                uint64_t la = atomic_load_explicit(&r->last_activity_ns, memory_order_relaxed);
                while (la < now && !atomic_compare_exchange_weak_explicit(&r->last_activity_ns, &la,
                                                                          now, memory_order_relaxed,
                                                                          memory_order_relaxed))
                        ;
                if (slot) {
                        atomic_fetch_add_explicit(&slot->launches, dn, memory_order_relaxed);
                        atomic_store_explicit(&slot->last_activity_ns, now, memory_order_relaxed);
                }
        }
        return dn;
}

bool ks__limiter_tick(uint64_t now)
{
        struct kerf_slice_region *r = ks.region;
        atomic_store_explicit(&kc.now, now, memory_order_relaxed);
        if (!r)
                return false;
        uint32_t f = atomic_load_explicit(&r->limits.flags, memory_order_relaxed);
        uint32_t pct = atomic_load_explicit(&r->limits.compute_allowed_pct, memory_order_relaxed);
        if (throttled(f, pct))
                ks__bucket_refill(r, now, rate(pct),
                                  ks__bucket_burst(rate(pct), atomic_load(&r->limits.window_ms)));
        unsigned inflight = kc.elapsed ? collect(now) : 0;
        /* busy: launched since the last tick, or pairs to collect */
        return publish(now) > 0 || inflight > 0;
}

void ks__limiter_exit(void)
{
        if (ks.region)
                publish(ks__now_ns());
}

void ks__limiter_ctx_gone(CUcontext ctx)
{
        if (!ctx)
                return;
        /* no collector in the middle of this context's pairs, no launch creating its pool */
        pthread_mutex_lock(&kc.collect_mu);
        pthread_mutex_lock(&kc.pool_mu);
        unsigned hi = atomic_load(&pools_hi);
        for (unsigned i = 0; i < hi; i++) {
                ks_pool *p = &pools[i];
                if (atomic_load_explicit(&p->ctx, memory_order_acquire) != ctx)
                        continue;
                /* the driver destroyed the events with the context: drop the pairs in flight
                 * (their launches were never measured) and forget the pool, so that a context
                 * created later at the same address gets fresh events */
                uint64_t busy = ~atomic_exchange(&p->free_mask, 0);
                while (busy) {
                        unsigned j = (unsigned)__builtin_ctzll(busy);
                        busy &= busy - 1;
                        ks_pair *q = &p->pair[j];
                        uint32_t st = atomic_load_explicit(&q->state, memory_order_acquire);
                        if (st && q->provisional && q->key)
                                atomic_fetch_sub(&q->key->unknown_inflight, 1);
                }
                atomic_store(&p->ok, 0);
                memset(p->pair, 0, sizeof(p->pair));
                atomic_store_explicit(&p->ctx, NULL, memory_order_release);
        }
        pthread_mutex_unlock(&kc.pool_mu);
        pthread_mutex_unlock(&kc.collect_mu);
}
