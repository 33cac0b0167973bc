/* SPDX-License-Identifier: Apache-2.0 */
/* modes.c - kerf-load dev, hog, crash and probe */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "load.h"

#define MIB2 ((size_t)2 << 20)

/* One spin kernel and a sync; an error line and false on failure. */
static bool spin_sync(kl_gpu *g, uint64_t us)
{
        const char *call;
        CUresult r = kl_spin(g, g->stream, us, &call);
        if (r == CUDA_SUCCESS) {
                call = "cuStreamSynchronize";
                r = kl_cu.cuStreamSynchronize(g->stream);
        }
        if (r != CUDA_SUCCESS)
                kl_cuda_error(call, r);
        return r == CUDA_SUCCESS;
}

/* ---- dev: cycles of --busy-ms of back-to-back spins, then --idle-ms asleep ---- */

int kl_dev(const kl_opts *o, kl_gpu *g)
{
        CUdeviceptr mem;
        if (kl_hold_mem(o, &mem) < 0)
                return KL_EXIT_CUDA;
        uint64_t t0 = kl_now_ns(), end = t0 + (uint64_t)(o->seconds * 1e9);
        uint64_t win_ns = o->window_ms * 1000000ull, next_win = t0 + win_ns;
        uint64_t cycles = 0, kernels = 0, busy_ns = 0, w_cycles = 0, w_kernels = 0, w_busy = 0;
        int rc = KL_EXIT_OK;
        while (kl_now_ns() < end && rc == KL_EXIT_OK) {
                uint64_t b0 = kl_now_ns(), bend = b0 + o->busy_ms * 1000000ull;
                /* Busy: kernels two deep until busy_ms of wall time has passed. */
                uint64_t k = 0;
                const char *call = "cuLaunchKernel";
                CUresult r = CUDA_SUCCESS;
                while (kl_now_ns() < bend && r == CUDA_SUCCESS) {
                        r = kl_spin(g, g->stream, o->kernel_us, &call);
                        if (r == CUDA_SUCCESS && ++k % 2 == 0) {
                                call = "cuStreamSynchronize";
                                r = kl_cu.cuStreamSynchronize(g->stream);
                        }
                }
                if (r == CUDA_SUCCESS) {
                        call = "cuStreamSynchronize";
                        r = kl_cu.cuStreamSynchronize(g->stream);
                }
                if (r != CUDA_SUCCESS) {
                        kl_cuda_error(call, r);
                        rc = KL_EXIT_CUDA;
                }
                uint64_t b = kl_now_ns() - b0;
                cycles++, w_cycles++;
                kernels += k, w_kernels += k;
                busy_ns += b, w_busy += b;
                uint64_t idle_end = kl_now_ns() + o->idle_ms * 1000000ull;
                for (;;) {
                        uint64_t now = kl_now_ns();
                        if (now >= next_win) {
                                kl_line l;
                                kl_line_begin(&l, "window");
                                kl_line_dbl(&l, "t_ms", kl_t_ms());
                                kl_line_u64(&l, "cycles", w_cycles);
                                kl_line_u64(&l, "kernels", w_kernels);
                                kl_line_dbl(&l, "busy_ms", (double)w_busy / 1e6);
                                kl_line_end(&l);
                                w_cycles = w_kernels = w_busy = 0;
                                next_win += win_ns;
                                if (next_win <= now)
                                        next_win = now + win_ns;
                        }
                        if (rc != KL_EXIT_OK || now >= idle_end || now >= end)
                                break;
                        uint64_t wake = idle_end < next_win ? idle_end : next_win;
                        kl_sleep_until(wake < end ? wake : end);
                }
        }
        double secs = (double)(kl_now_ns() - t0) / 1e9;
        kl_line l;
        kl_line_begin(&l, "result");
        kl_line_dbl(&l, "t_ms", kl_t_ms());
        kl_line_str(&l, "mode", "dev");
        kl_line_bool(&l, "ok", rc == KL_EXIT_OK);
        kl_line_u64(&l, "cycles", cycles);
        kl_line_u64(&l, "kernels", kernels);
        kl_line_dbl(&l, "busy_ms", (double)busy_ns / 1e6);
        kl_line_dbl(&l, "seconds", secs);
        kl_line_dbl(&l, "busy_fraction", secs > 0 ? (double)busy_ns / 1e9 / secs : 0);
        kl_line_end(&l);
        if (mem)
                (void)kl_cu.cuMemFree(mem);
        return rc;
}

/* ---- hog: allocate --chunk until refused, then hold ---- */

int kl_hog(const kl_opts *o, kl_gpu *g)
{
        size_t n = 0, cap = 0;
        CUdeviceptr *held = NULL;
        uint64_t allocated = 0;
        CUresult r = CUDA_SUCCESS;
        for (;;) {
                if (n == cap) {
                        size_t nc = cap ? cap * 2 : 256;
                        CUdeviceptr *p = realloc(held, nc * sizeof(*p));
                        if (!p) {
                                fprintf(stderr, "kerf-load: out of host memory\n");
                                break;
                        }
                        held = p;
                        cap = nc;
                }
                r = kl_cu.cuMemAlloc(&held[n], o->chunk);
                if (r != CUDA_SUCCESS)
                        break;
                n++;
                allocated += o->chunk;
        }
        kl_line l;
        kl_line_begin(&l, "hog");
        kl_line_dbl(&l, "t_ms", kl_t_ms());
        kl_line_u64(&l, "allocated", allocated);
        kl_line_u64(&l, "count", n);
        kl_line_u64(&l, "chunk", o->chunk);
        kl_line_str(&l, "error", r == CUDA_SUCCESS ? NULL : kl_cuda_errname(r));
        kl_line_end(&l);
        int rc = r == CUDA_ERROR_OUT_OF_MEMORY ? KL_EXIT_OK : KL_EXIT_CUDA;
        if (rc != KL_EXIT_OK && r != CUDA_SUCCESS)
                kl_cuda_error("cuMemAlloc(--chunk)", r);
        uint64_t t0 = kl_now_ns(), win_ns = o->window_ms * 1000000ull, next_win = t0 + win_ns;
        uint64_t end = o->hold_s < 0 ? UINT64_MAX : t0 + (uint64_t)(o->hold_s * 1e9);
        uint64_t kernels = 0, w_kernels = 0;
        while (rc == KL_EXIT_OK) {
                uint64_t now = kl_now_ns();
                if (now >= next_win) {
                        kl_line_begin(&l, "window");
                        kl_line_dbl(&l, "t_ms", kl_t_ms());
                        kl_line_u64(&l, "allocated", allocated);
                        kl_line_u64(&l, "kernels", w_kernels);
                        kl_line_end(&l);
                        w_kernels = 0;
                        next_win += win_ns;
                        if (next_win <= now)
                                next_win = now + win_ns;
                }
                if (now >= end)
                        break;
                if (o->spin) {
                        if (!spin_sync(g, 1000))
                                rc = KL_EXIT_CUDA;
                        kernels++, w_kernels++;
                } else {
                        kl_sleep_until(next_win < end ? next_win : end);
                }
        }
        kl_line_begin(&l, "result");
        kl_line_dbl(&l, "t_ms", kl_t_ms());
        kl_line_str(&l, "mode", "hog");
        kl_line_u64(&l, "allocated", allocated);
        kl_line_u64(&l, "count", n);
        kl_line_str(&l, "error", r == CUDA_SUCCESS ? NULL : kl_cuda_errname(r));
        kl_line_u64(&l, "kernels", kernels);
        kl_line_dbl(&l, "held_s", (double)(kl_now_ns() - t0) / 1e9);
        kl_line_end(&l);
        while (n)
                (void)kl_cu.cuMemFree(held[--n]);
        free(held);
        return rc;
}

/* ---- crash: spin for --after-ms, then die --how ---- */

int kl_crash(const kl_opts *o, kl_gpu *g)
{
        uint64_t end = kl_now_ns() + o->after_ms * 1000000ull, kernels = 0;
        while (kl_now_ns() < end) {
                if (!spin_sync(g, o->kernel_us))
                        return KL_EXIT_CUDA;
                kernels++;
        }
        kl_line l;
        kl_line_begin(&l, "crash");
        kl_line_dbl(&l, "t_ms", kl_t_ms());
        kl_line_str(&l, "how", kl_how_name(o->how));
        kl_line_u64(&l, "kernels", kernels);
        kl_line_end(&l);
        /* The default dispositions first: a sanitizer's handler would turn the signal into a
         * report and exit 1, and the point is to die of the signal. */
        switch (o->how) {
        case KL_SEGV: {
                signal(SIGSEGV, SIG_DFL);
                raise(SIGSEGV);
                break;
        }
        case KL_ABORT:
                signal(SIGABRT, SIG_DFL);
                abort();
        case KL_EXIT:
                exit(KL_EXIT_CRASH);
        case KL_KILL:
                raise(SIGKILL);
                break;
        }
        return KL_EXIT_CRASH; /* not reached */
}

/* ---- probe: what the process really got ---- */

/* Whether one cuMemAlloc of `bytes` succeeds (freed at once); *err keeps a non-OOM error. */
static bool try_alloc(size_t bytes, CUresult *err)
{
        CUdeviceptr p;
        CUresult r = kl_cu.cuMemAlloc(&p, bytes);
        if (r == CUDA_SUCCESS) {
                (void)kl_cu.cuMemFree(p);
                return true;
        }
        if (r != CUDA_ERROR_OUT_OF_MEMORY && *err == CUDA_SUCCESS)
                *err = r;
        return false;
}

/*
 * The compute share: spin kernels of --kernel-us kept 4 deep on one stream for --warmup-ms,
 * then for --window-ms. share = completed kernels x kernel duration / wall, counting the
 * kernels that completed inside the window. The kernel's duration is its declared cost on
 * the simulator and its %globaltimer spin on hardware (both exact by construction), so a
 * launch the shim holds on the host is never counted as device time. event_share (the sum of
 * cuEventElapsedTime around each kernel / wall) is printed beside it: it includes host-held
 * time while the stream was idle, so it is an upper bound.
 */
static int probe_share(const kl_opts *o, kl_gpu *g, double *share, double *ev_share,
                       uint64_t *kernels)
{
        enum { D = 4 };
        CUevent a[D], b[D];
        for (int i = 0; i < D; i++) {
                CUresult r = kl_cu.cuEventCreate(&a[i], CU_EVENT_DEFAULT);
                if (r == CUDA_SUCCESS)
                        r = kl_cu.cuEventCreate(&b[i], CU_EVENT_DEFAULT);
                if (r != CUDA_SUCCESS) {
                        kl_cuda_error("cuEventCreate", r);
                        return -1;
                }
        }
        uint64_t head = 0, tail = 0, done = 0, t_begin = 0, end = 0;
        uint64_t t0 = kl_now_ns(), warm_end = t0 + o->warmup_ms * 1000000ull;
        double ev_ms = 0;
        bool measuring = false;
        const char *call = "cuLaunchKernel";
        CUresult r = CUDA_SUCCESS;
        for (;;) {
                uint64_t now = kl_now_ns();
                if (!measuring && now >= warm_end) {
                        measuring = true;
                        t_begin = now;
                        end = t_begin + o->window_ms * 1000000ull;
                }
                if (measuring && now >= end)
                        break;
                if (head - tail == D) {
                        CUevent e = b[tail % D];
                        call = "cuEventSynchronize";
                        if ((r = kl_cu.cuEventSynchronize(e)) != CUDA_SUCCESS)
                                break;
                        /* A kernel that completed before the window began is not counted. */
                        uint64_t t_done = kl_now_ns();
                        if (measuring && t_done <= end) {
                                float ms = 0;
                                call = "cuEventElapsedTime";
                                if ((r = kl_cu.cuEventElapsedTime(&ms, a[tail % D], e)) !=
                                    CUDA_SUCCESS)
                                        break;
                                if (t_done > t_begin) {
                                        done++;
                                        ev_ms += ms;
                                }
                        }
                        tail++;
                        continue;
                }
                call = "cuEventRecord";
                if ((r = kl_cu.cuEventRecord(a[head % D], g->stream)) != CUDA_SUCCESS)
                        break;
                if ((r = kl_spin(g, g->stream, o->kernel_us, &call)) != CUDA_SUCCESS)
                        break;
                call = "cuEventRecord";
                if ((r = kl_cu.cuEventRecord(b[head % D], g->stream)) != CUDA_SUCCESS)
                        break;
                head++;
        }
        double wall_ms = (double)(kl_now_ns() - t_begin) / 1e6;
        CUresult s = kl_cu.cuStreamSynchronize(g->stream);
        if (r == CUDA_SUCCESS && s != CUDA_SUCCESS) {
                r = s;
                call = "cuStreamSynchronize";
        }
        if (r != CUDA_SUCCESS) {
                kl_cuda_error(call, r);
                return -1;
        }
        *kernels = done;
        *share = wall_ms > 0 ? (double)done * (double)o->kernel_us / 1000.0 / wall_ms : 0;
        *ev_share = wall_ms > 0 ? ev_ms / wall_ms : 0;
        return 0;
}

int kl_probe(const kl_opts *o, kl_gpu *g)
{
        size_t fr = 0, tot = 0;
        CUresult r = kl_cu.cuMemGetInfo(&fr, &tot);
        if (r != CUDA_SUCCESS) {
                kl_cuda_error("cuMemGetInfo", r);
                return KL_EXIT_CUDA;
        }
        /* Largest single allocation, in 2 MiB units, searched over [0, total]: a cap that
         * leaks shows as largest_alloc > memory_free. */
        CUresult err = CUDA_SUCCESS;
        size_t lo = 0, hi = tot / MIB2 + 1; /* lo succeeds (nothing), hi is assumed to fail */
        if (try_alloc((hi - 1) * MIB2, &err) && hi > 1)
                lo = hi - 1;
        while (hi - lo > 1 && err == CUDA_SUCCESS) {
                size_t mid = lo + (hi - lo) / 2;
                if (try_alloc(mid * MIB2, &err))
                        lo = mid;
                else
                        hi = mid;
        }
        if (err != CUDA_SUCCESS) {
                kl_cuda_error("cuMemAlloc(probe)", err);
                return KL_EXIT_CUDA;
        }
        double share = 0, ev_share = 0;
        uint64_t kernels = 0;
        if (probe_share(o, g, &share, &ev_share, &kernels) < 0)
                return KL_EXIT_CUDA;
        kl_line l;
        kl_line_begin(&l, "window");
        kl_line_dbl(&l, "t_ms", kl_t_ms());
        kl_line_u64(&l, "kernels", kernels);
        kl_line_dbl(&l, "achieved_share", share);
        kl_line_end(&l);
        kl_line_begin(&l, "result");
        kl_line_dbl(&l, "t_ms", kl_t_ms());
        kl_line_str(&l, "mode", "probe");
        kl_line_u64(&l, "memory_total", tot);
        kl_line_u64(&l, "memory_free", fr);
        kl_line_u64(&l, "largest_alloc", (uint64_t)lo * MIB2);
        kl_line_dbl(&l, "achieved_share", share);
        kl_line_dbl(&l, "event_share", ev_share);
        kl_line_u64(&l, "kernels", kernels);
        kl_line_u64(&l, "kernel_us", o->kernel_us);
        kl_line_u64(&l, "window_ms", o->window_ms);
        kl_line_end(&l);
        return KL_EXIT_OK;
}
