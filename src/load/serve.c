/* SPDX-License-Identifier: Apache-2.0 */
/* serve.c - kerf-load serve: an open-loop inference service (one rate, or a sweep of rates) */
#include <math.h>
#include <stdio.h>

#include "load.h"

/*
 * Arrivals are scheduled in advance (open loop): request i arrives at a_i whatever happened to
 * the earlier ones. One worker serves them in order (a single-stream service): it waits until
 * a_i, launches --kernels spin kernels of --kernel-us on its stream and synchronises the stream.
 * latency_i = completion_i - a_i, so time spent queued behind earlier requests (an overloaded
 * or throttled service) counts. Arrivals still waiting when the step's time is up are
 * `dropped`. Patterns, for a mean of R requests/s:
 *   steady   every 1/R s
 *   ramp     the rate grows linearly from 0.1 R (t = 0) to 1.9 R (end of the step)
 *   burst    periods of 1 s: 4 R for the first 200 ms, R/4 for the other 800 ms
 *   poisson  exponential gaps of mean 1/R (xorshift64 seeded by --seed)
 */

typedef struct arrivals {
        kl_pattern p;
        double rate, secs;
        uint64_t rng;
} arrivals;

static double rate_at(const arrivals *a, double t)
{
        switch (a->p) {
        case KL_RAMP:
                return a->rate * (0.1 + 1.8 * t / a->secs);
        case KL_BURST:
                return fmod(t, 1.0) < 0.2 ? 4 * a->rate : a->rate / 4;
        default:
                return a->rate;
        }
}

static double uniform01(uint64_t *s)
{
        uint64_t x = *s;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *s = x;
        return ((double)(x >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
}

/* The arrival after the one at t (seconds since the step began). */
static double next_arrival(arrivals *a, double t)
{
        if (a->p == KL_STEADY)
                return t + 1 / a->rate;
        if (a->p == KL_POISSON)
                return t - log(uniform01(&a->rng)) / a->rate;
        /* ramp, burst: the next point where the integral of the rate from t reaches 1, in
         * segments of at most 1 ms that never cross a burst edge (rate taken mid-segment). */
        double need = 1;
        for (;;) {
                double end = floor(t * 1000 + 1e-9) / 1000 + 0.001;
                double r = rate_at(a, (t + end) / 2);
                if (r * (end - t) >= need)
                        return t + need / r;
                need -= r * (end - t);
                t = end;
        }
}

typedef struct stats {
        kl_lat lat;
        uint64_t n, errors;
} stats;

static void put_stats(kl_line *l, stats *s, double secs)
{
        kl_line_u64(l, "n", s->n);
        kl_line_u64(l, "errors", s->errors);
        kl_line_dbl(l, "p50_ms", kl_lat_quantile(&s->lat, 0.50));
        kl_line_dbl(l, "p95_ms", kl_lat_quantile(&s->lat, 0.95));
        kl_line_dbl(l, "p99_ms", kl_lat_quantile(&s->lat, 0.99));
        kl_line_dbl(l, "throughput", secs > 0 ? (double)s->n / secs : 0);
}

static void add(stats *s, double ms, bool ok)
{
        if (!ok) {
                s->errors++;
                return;
        }
        s->n++;
        (void)kl_lat_add(&s->lat, ms); /* out of memory: the sample is lost, the count kept */
}

/* One request: K kernels and a sync. Prints at most `*quota` error lines. */
static bool request(const kl_opts *o, kl_gpu *g, unsigned *quota)
{
        const char *call = "cuLaunchKernel";
        CUresult r = CUDA_SUCCESS;
        for (uint64_t k = 0; k < o->kernels && r == CUDA_SUCCESS; k++)
                r = kl_spin(g, g->stream, o->kernel_us, &call);
        CUresult s = kl_cu.cuStreamSynchronize(g->stream);
        if (r == CUDA_SUCCESS && s != CUDA_SUCCESS) {
                r = s;
                call = "cuStreamSynchronize";
        }
        if (r != CUDA_SUCCESS && *quota) {
                (*quota)--;
                kl_cuda_error(call, r);
        }
        return r == CUDA_SUCCESS;
}

typedef struct run {
        stats total;
        uint64_t offered, dropped;
        double secs;
} run;

/* Serves `rate` for o->seconds; prints window lines and, in a sweep, one step line. */
static void step(const kl_opts *o, kl_gpu *g, double rate, bool sweep, run *tot)
{
        arrivals a = {.p = o->pattern, .rate = rate, .secs = o->seconds, .rng = o->seed | 1};
        stats win = {0}, st = {0};
        uint64_t offered = 0, win_ns = o->window_ms * 1000000ull;
        uint64_t t0 = kl_now_ns(), end = t0 + (uint64_t)(o->seconds * 1e9), next_win = t0 + win_ns;
        uint64_t win_start = t0;
        double arr = next_arrival(&a, 0);
        if (a.p == KL_STEADY || a.p == KL_BURST || a.p == KL_RAMP)
                arr = 0; /* the first request arrives at once */
        unsigned quota = 20;
        for (;;) {
                uint64_t now = kl_now_ns();
                if (now >= next_win) {
                        kl_line l;
                        kl_line_begin(&l, "window");
                        kl_line_dbl(&l, "t_ms", kl_t_ms());
                        kl_line_dbl(&l, "rate", rate);
                        put_stats(&l, &win, (double)(now - win_start) / 1e9);
                        kl_line_end(&l);
                        kl_lat_clear(&win.lat);
                        win.n = win.errors = 0;
                        win_start = now;
                        next_win += win_ns;
                        if (next_win <= now)
                                next_win = now + win_ns;
                        quota = 20;
                }
                if (now >= end)
                        break;
                uint64_t at = t0 + (uint64_t)(arr * 1e9);
                if (at >= end || now < at) {
                        uint64_t wake = at < next_win ? at : next_win;
                        kl_sleep_until(wake < end ? wake : end);
                        continue;
                }
                offered++;
                bool ok = request(o, g, &quota);
                double ms = (double)(kl_now_ns() - at) / 1e6;
                add(&win, ms, ok);
                add(&st, ms, ok);
                add(&tot->total, ms, ok);
                arr = next_arrival(&a, arr);
        }
        uint64_t dropped = 0;
        for (; arr < o->seconds; arr = next_arrival(&a, arr))
                dropped++;
        double secs = (double)(kl_now_ns() - t0) / 1e9;
        tot->offered += offered + dropped;
        tot->dropped += dropped;
        tot->secs += secs;
        if (sweep) {
                kl_line l;
                kl_line_begin(&l, "step");
                kl_line_dbl(&l, "t_ms", kl_t_ms());
                kl_line_dbl(&l, "rate", rate);
                kl_line_dbl(&l, "offered", (double)(offered + dropped) / o->seconds);
                kl_line_u64(&l, "dropped", dropped);
                put_stats(&l, &st, secs);
                kl_line_end(&l);
        }
        kl_lat_fini(&win.lat);
        kl_lat_fini(&st.lat);
}

int kl_serve(const kl_opts *o, kl_gpu *g)
{
        CUdeviceptr mem;
        if (kl_hold_mem(o, &mem) < 0)
                return KL_EXIT_CUDA;
        run tot = {0};
        bool sweep = o->nrates > 0;
        unsigned nsteps = sweep ? o->nrates : 1;
        for (unsigned i = 0; i < nsteps; i++)
                step(o, g, sweep ? o->rates[i] : o->rate, sweep, &tot);
        kl_line l;
        kl_line_begin(&l, "result");
        kl_line_dbl(&l, "t_ms", kl_t_ms());
        kl_line_str(&l, "mode", "serve");
        kl_line_str(&l, "pattern", kl_pattern_name(o->pattern));
        if (sweep)
                kl_line_dblv(&l, "rates", o->rates, o->nrates);
        else
                kl_line_dbl(&l, "rate", o->rate);
        kl_line_u64(&l, "kernels", o->kernels);
        kl_line_u64(&l, "kernel_us", o->kernel_us);
        kl_line_u64(&l, "mem", o->mem);
        kl_line_dbl(&l, "seconds", tot.secs);
        kl_line_dbl(&l, "offered", tot.secs > 0 ? (double)tot.offered / tot.secs : 0);
        kl_line_u64(&l, "dropped", tot.dropped);
        put_stats(&l, &tot.total, tot.secs);
        kl_line_end(&l);
        bool all_failed = tot.total.errors && !tot.total.n;
        kl_lat_fini(&tot.total.lat);
        if (mem)
                (void)kl_cu.cuMemFree(mem);
        return all_failed ? KL_EXIT_CUDA : KL_EXIT_OK;
}
