/* SPDX-License-Identifier: Apache-2.0 */
/* init.c - lazy per-process init, cuInit, the background thread, fork and exit */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kerf/units.h"
#include "syms.h"

/*
 * Call graph:
 *
 *   any wrapper / cuInit
 *     ks__ensure()                 fast path: one atomic load of ks.ready
 *       init_locked()              once per process (again in a fork child)
 *         ks__real_resolve()       real.c: dlopen libcuda.so.1, fill ks_real
 *         map_region()             KERF_SLICE_REGION, checked (mode, ABI, sane limits)
 *         ks__slot_claim()         region.c: CAS pid 0 -> getpid() (contract rule 2)
 *         ks__mem_init()           mem.c: KERF_SHIM_CTX_OVERHEAD_MIB
 *         ks__limiter_init()       limiter.c (weak default here)
 *         pthread_create(ticker)   KS_TICK_MS while busy, up to KS_IDLE_TICK_MS when idle:
 *                                  ks__limiter_tick; every KS_SLOW_MS: heartbeat,
 *                                  ks__reclaim_tick, ks__mem_tick
 *         atexit(on_exit) / pthread_atfork(...)   registered once per process image
 *
 * Failure (no region, foreign ABI, open to others, insane limits, no slot, no driver):
 * ks.ready = -1, one line on stderr, every wrapper answers CUDA_ERROR_NOT_INITIALIZED. The
 * shim never aborts or exits: it lives in the task's process.
 */

ks_state ks;

static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int reported;
static bool handlers_registered;
static pthread_t ticker;
static _Atomic int ticker_stop;

#if defined(__SANITIZE_ADDRESS__)
#define KS_TICKER_STACK (1024u * 1024u) /* redzones and fake frames */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KS_TICKER_STACK (1024u * 1024u)
#endif
#endif
#ifndef KS_TICKER_STACK
#define KS_TICKER_STACK (256u * 1024u)
#endif

/* ---- weak defaults for the compute limiter (limiter.c overrides them) ---- */

__attribute__((weak)) void ks__limiter_init(void)
{
}

__attribute__((weak)) bool ks__limiter_tick(uint64_t now_ns)
{
        (void)now_ns;
        return false;
}

__attribute__((weak)) void ks__limiter_exit(void)
{
}

__attribute__((weak)) void ks__limiter_ctx_gone(CUcontext ctx)
{
        (void)ctx;
}

/* ---- the region ---- */

/* no GPU has more than 1 PiB (include/kerf/units.h): a larger value is a lie */
#define KS_SANE_MAX_BYTES KERF_MAX_GPU_MEM_BYTES

/* Reads the header of a file that failed kerf_slice_region_map to say what it is. */
static void explain_foreign(const char *path, int err)
{
        struct stat st;
        if (stat(path, &st) == 0 && (st.st_mode & 0007)) {
                snprintf(ks.err, sizeof(ks.err),
                         "slice region %s is accessible to other users (mode %03o); refusing it",
                         path, (unsigned)(st.st_mode & 0777));
                return;
        }
        if (err != -EPROTO) {
                snprintf(ks.err, sizeof(ks.err), "cannot map slice region %s: %s", path,
                         strerror(-err));
                return;
        }
        uint64_t magic = 0;
        uint32_t abi = 0;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd >= 0) {
                if (pread(fd, &magic, sizeof(magic), 0) != sizeof(magic) ||
                    pread(fd, &abi, sizeof(abi), 8) != sizeof(abi))
                        magic = 0;
                close(fd);
        }
        if (magic != KERF_SLICE_MAGIC)
                snprintf(ks.err, sizeof(ks.err), "%s is not a kerf slice region", path);
        else if (abi != KERF_SLICE_ABI_VERSION)
                snprintf(ks.err, sizeof(ks.err),
                         "slice region %s has ABI version %u; this shim speaks %u", path, abi,
                         KERF_SLICE_ABI_VERSION);
        else
                snprintf(ks.err, sizeof(ks.err),
                         "slice region %s has the wrong size or layout for ABI %u", path,
                         KERF_SLICE_ABI_VERSION);
}

/* Limits kerfd would never write: a region that claims them is not trusted. */
static bool limits_sane(const struct kerf_slice_region *r)
{
        uint64_t lim = atomic_load(&r->limits.memory_limit);
        uint64_t dev = atomic_load(&r->limits.device_memory);
        uint32_t pct = atomic_load(&r->limits.compute_pct);
        uint32_t lpct = atomic_load(&r->limits.compute_limit_pct);
        uint32_t apct = atomic_load(&r->limits.compute_allowed_pct);
        uint32_t win = atomic_load(&r->limits.window_ms);
        if (!lim || lim > KS_SANE_MAX_BYTES || !dev || dev > KS_SANE_MAX_BYTES) {
                snprintf(ks.err, sizeof(ks.err),
                         "slice region has insane memory limits (limit %llu, device %llu bytes)",
                         (unsigned long long)lim, (unsigned long long)dev);
                return false;
        }
        if (pct > 100 || lpct > 100 || lpct < pct || apct > 100 || !win || win > 60000) {
                snprintf(ks.err, sizeof(ks.err),
                         "slice region has insane compute limits (%u%%, ceiling %u%%, allowed "
                         "%u%%, window %u ms)",
                         pct, lpct, apct, win);
                return false;
        }
        return true;
}

static int map_region(void)
{
        const char *path = getenv("KERF_SLICE_REGION");
        const char *abi = getenv("KERF_SLICE_ABI");
        if (!path || !*path) {
                snprintf(ks.err, sizeof(ks.err),
                         "KERF_SLICE_REGION is not set: this process is not in a kerf slice%s",
                         abi ? "" : " (libkerf-cuda.so is only preloaded into slices)");
                return -1;
        }
        if (abi && strtoul(abi, NULL, 10) != KERF_SLICE_ABI_VERSION) {
                snprintf(ks.err, sizeof(ks.err), "KERF_SLICE_ABI=%s but this shim speaks ABI %u",
                         abi, KERF_SLICE_ABI_VERSION);
                return -1;
        }
        struct kerf_slice_region *r = NULL;
        int err = kerf_slice_region_map(path, true, &r);
        if (err < 0) {
                explain_foreign(path, err);
                return -1;
        }
        if (!limits_sane(r)) {
                kerf_slice_region_unmap(r);
                return -1;
        }
        /* KERF_SLICE_* variables are a convenience; the region wins (docs/SHIM-CONTRACT.md). */
        ks.region = r;
        return 0;
}

/* ---- the background thread ---- */

/*
 * Cadence (docs/SHIM.md "Background thread"). The thread ticks every KS_TICK_MS while the
 * process launches or has timing pairs in flight (ks__limiter_tick says so); otherwise it
 * backs off, doubling its sleep up to KS_IDLE_TICK_MS. While it sleeps longer than
 * KS_TICK_MS, ks.ticker_idle is 1 and the launch path reads the clock itself instead of the
 * tick's coarse copy; the first launch after a quiet spell is seen at the next wake-up (at
 * most KS_IDLE_TICK_MS later), which brings the thread back to KS_TICK_MS. The launch path
 * never wakes the thread (no syscall): it reads FROZEN / YIELD / allowed from the region
 * words directly, so nothing it obeys depends on the tick.
 *
 * Every KS_SLOW_MS (whatever the cadence): heartbeat_ns, a few neighbours' slots checked for
 * dead owners (ks__reclaim_tick) and pool reconciliation. Its phase is spread by pid so that
 * the processes of a large task do not all do it at the same instant.
 */
static void *ticker_main(void *arg)
{
        (void)arg;
        prctl(PR_SET_NAME, "kerf-shim", 0, 0, 0); /* for top -H, and the tests */
        uint64_t now = ks__now_ns();
        /* init stored the first heartbeat; spread the first slow pass over one period */
        uint64_t last_slow = now - (uint64_t)(ks.pid % KS_SLOW_MS) * 1000000ull;
        uint32_t period_ms = KS_IDLE_TICK_MS; /* idle until the first launch is seen */
        while (!atomic_load_explicit(&ticker_stop, memory_order_relaxed)) {
                now = ks__now_ns();
                bool busy = ks__limiter_tick(now);
                if (now - last_slow >= (uint64_t)KS_SLOW_MS * 1000000ull) {
                        last_slow = now;
                        ks__heartbeat(now);
                        ks__reclaim_tick();
                        ks__mem_tick(now);
                }
                if (busy)
                        period_ms = KS_TICK_MS;
                else if (period_ms < KS_IDLE_TICK_MS)
                        period_ms =
                            period_ms * 2 < KS_IDLE_TICK_MS ? period_ms * 2 : KS_IDLE_TICK_MS;
                int idle = period_ms > KS_TICK_MS;
                /* stored on change only: the launch path reads this cache line */
                if (atomic_load_explicit(&ks.ticker_idle, memory_order_relaxed) != idle)
                        atomic_store_explicit(&ks.ticker_idle, idle, memory_order_relaxed);
                struct timespec ts = {0, (long)period_ms * 1000000L};
                nanosleep(&ts, NULL);
        }
        return NULL;
}

static int start_ticker(void)
{
        sigset_t all, old;
        sigfillset(&all);
        /* The thread must never take the application's signals. */
        pthread_sigmask(SIG_SETMASK, &all, &old);
        atomic_store(&ticker_stop, 0);
        atomic_store(&ks.ticker_idle, 1);
        pthread_attr_t at;
        pthread_attr_init(&at);
        /* A small stack: glibc's default (8 MiB, from RLIMIT_STACK) costs a large mmap and
         * its teardown at exit, which 128 processes starting at once feel (docs/SHIM.md). The
         * thread's deepest calls are into the driver (event queries, pool attributes). */
        pthread_attr_setstacksize(&at, KS_TICKER_STACK);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        int err = pthread_create(&ticker, &at, ticker_main, NULL);
        pthread_attr_destroy(&at);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (err) {
                snprintf(ks.err, sizeof(ks.err), "cannot start the shim's thread: %s",
                         strerror(err));
                return -1;
        }
        return 0;
}

/* ---- exit and fork ---- */

static void on_exit_handler(void)
{
        if (ks.pid != getpid() || atomic_load(&ks.ready) != 1)
                return;
        atomic_store(&ticker_stop, 1);
        /* The launches and device time counted since the last tick (up to KS_TICK_MS of
         * them, or more while the thread slept long) go to the region first. */
        ks__limiter_exit();
        /* Accounting off first: a release racing with the slot's hand-back would otherwise
         * subtract the same bytes twice from memory_charged. */
        atomic_store(&ks.exited, 1);
        ks__mem_exit();
        ks__slot_free();
}

static void atfork_prepare(void)
{
        ks__mem_atfork_prepare();
        pthread_mutex_lock(&init_mu);
}

static void atfork_parent(void)
{
        pthread_mutex_unlock(&init_mu);
        ks__mem_atfork_parent();
}

/* The child is a new process of the task: it forgets the parent's slot and charges (the
 * parent still owns them) and re-initialises on its first CUDA call. The parent's
 * background thread does not exist in the child; re-init starts its own. */
static void atfork_child(void)
{
        pthread_mutex_init(&init_mu, NULL);
        ks__mem_atfork_child();
        if (ks.region)
                kerf_slice_region_unmap(ks.region);
        ks.region = NULL;
        ks.slot = NULL;
        ks.slot_index = -1;
        ks.err[0] = 0;
        atomic_store(&reported, 0);
        atomic_store(&ks.exited, 0);
        atomic_store(&ks.ready, 0);
}

/* ---- init ---- */

static int init_locked(void)
{
        ks.pid = getpid();
        if (ks__real_resolve() < 0)
                return -1;
        if (!ks_real.cuInit) {
                snprintf(ks.err, sizeof(ks.err), "libcuda.so.1 does not export cuInit");
                return -1;
        }
        if (map_region() < 0)
                return -1;
        if (ks__slot_claim() < 0)
                goto fail;
        ks__mem_init();
        ks__limiter_init();
        if (start_ticker() < 0) {
                ks__slot_free();
                goto fail;
        }
        ks__heartbeat(ks__now_ns());
        if (!handlers_registered) {
                handlers_registered = true;
                atexit(on_exit_handler);
                pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
        }
        return 0;
fail:
        kerf_slice_region_unmap(ks.region);
        ks.region = NULL;
        ks.slot = NULL;
        return -1;
}

static void report(void)
{
        if (atomic_exchange(&reported, 1))
                return;
        char line[320];
        int n = snprintf(line, sizeof(line), "kerf-shim: CUDA disabled in pid %d: %s\n",
                         (int)getpid(), ks.err[0] ? ks.err : "initialisation failed");
        if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
                return;
}

CUresult ks__ensure(void)
{
        int s = atomic_load_explicit(&ks.ready, memory_order_acquire);
        if (s == 1)
                return CUDA_SUCCESS;
        if (s == 0) {
                pthread_mutex_lock(&init_mu);
                s = atomic_load(&ks.ready);
                if (s == 0) {
                        s = init_locked() == 0 ? 1 : -1;
                        atomic_store_explicit(&ks.ready, s, memory_order_release);
                }
                pthread_mutex_unlock(&init_mu);
                if (s == 1)
                        return CUDA_SUCCESS;
        }
        report();
        return CUDA_ERROR_NOT_INITIALIZED;
}

KS_EXPORT CUresult cuInit(unsigned int Flags)
{
        CUresult r = ks__ensure();
        if (r != CUDA_SUCCESS)
                return r;
        return ks_real.cuInit(Flags);
}
