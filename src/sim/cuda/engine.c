/* SPDX-License-Identifier: Apache-2.0 */
/* engine.c - the simulated GPU engine: per-process worker, cross-process time-sliced token */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/*
 * One engine per simulated GPU or MIG device, shared by every process using it through a
 * small file in the state directory (cuda-engine-G-I-C). The file holds a robust
 * process-shared mutex, the pid holding the GPU ("token") and a FIFO of processes that have
 * kernels to run. Each process runs one worker thread per device: it executes its queued
 * operations in stream order; for kernels it takes the token, runs up to one time slice of
 * device time of one context, publishes the time to simstate, and hands the token to the next
 * waiter, queueing itself again atomically if it still has kernels (strict round robin that
 * does not depend on how fast the host schedules the waiter). Device time is counted in the
 * engine (declared kernel cost), never measured from the wall clock.
 *
 * Host time between slices (accounting, the hand-over, waking up) is not device time: while
 * the engine stays busy (the holder had more kernels, or handed over to a waiter) the next
 * slice starts at the previous slice's device deadline (busy_until), not at "now", so that
 * overhead never accumulates (up to CATCH_UP_NS of host delay is absorbed). A lone holder
 * with more kernels keeps the token instead of handing it over to itself; it hands over at
 * the end of a slice as soon as another process waits, so round robin is unchanged.
 *
 * A process killed while holding the token or queued is skipped by the next waiter that
 * times out (20 ms) and finds the pid dead or a zombie.
 */

#define SHM_MAGIC 0x4b434532u /* "KCE2" (KCE1 had no busy_until) */
#define MAX_WAIT  64
#define WAIT_NS   20000000L
/* Host delay between busy slices absorbed (a descheduled worker, a slow accounting lock): the
 * simulated device does not stall with its host thread, it runs ahead, as a real one would. */
#define CATCH_UP_NS (50 * KC_TIMESLICE_NS)

typedef struct kc_shm {
        uint32_t magic;
        uint32_t virtual_clock;
        pthread_mutex_t mu;
        uint32_t futex;
        int32_t holder;
        uint64_t next_ticket;
        uint64_t vclock_ns;
        uint64_t busy_ns;
        uint64_t busy_until; /* CLOCK_MONOTONIC device deadline of the last slice; 0 = idle */
        uint32_t nwait;
        struct {
                int32_t pid;
                uint64_t ticket;
        } w[MAX_WAIT];
} kc_shm;

typedef struct kc_engine {
        int dev;
        kc_shm *sh;
        pthread_mutex_t mu;
        pthread_cond_t cv_work, cv_done;
        pthread_t thread;
        bool stop, queued;
        kc_ctx *ctxs;
        kc_ctx *rr_ctx;
        uint64_t pending_ops, pending_kernels;
        /* the device time of the last event recorded here: a later slice never starts before
         * it, so an event pair around a kernel spans at least the kernel's cost even when a
         * late host absorbs its delay (busy_until) */
        uint64_t last_event_ns;
} kc_engine;

static bool pid_dead(pid_t p)
{
        if (p <= 0)
                return true;
        if (kill(p, 0) < 0 && errno == ESRCH)
                return true;
        char path[64], buf[512];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)p);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return false;
        buf[n] = 0;
        char *rp = strrchr(buf, ')');
        return rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
}

static void shm_lock(kc_shm *s)
{
        if (pthread_mutex_lock(&s->mu) == EOWNERDEAD)
                pthread_mutex_consistent(&s->mu);
}

static void shm_unlock(kc_shm *s)
{
        pthread_mutex_unlock(&s->mu);
}

static void futex_wake(uint32_t *w)
{
        syscall(SYS_futex, w, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

static void futex_wait(uint32_t *w, uint32_t val, long ns)
{
        struct timespec ts = {0, ns};
        syscall(SYS_futex, w, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void wait_remove(kc_shm *s, unsigned i)
{
        memmove(&s->w[i], &s->w[i + 1], (s->nwait - i - 1) * sizeof(s->w[0]));
        s->nwait--;
}

static void wait_add(kc_shm *s, pid_t pid)
{
        if (s->nwait < MAX_WAIT) {
                s->w[s->nwait].pid = pid;
                s->w[s->nwait].ticket = ++s->next_ticket;
                s->nwait++;
        }
}

static void reap(kc_shm *s)
{
        if (s->holder && pid_dead(s->holder))
                s->holder = 0;
        for (unsigned i = 0; i < s->nwait;) {
                if (pid_dead(s->w[i].pid))
                        wait_remove(s, i);
                else
                        i++;
        }
}

static void token_acquire(kc_engine *e)
{
        kc_shm *s = e->sh;
        pid_t me = kc_g.pid;
        shm_lock(s);
        if (s->holder != me && !e->queued) {
                wait_add(s, me);
                e->queued = true;
        }
        for (;;) {
                if (__atomic_load_n(&e->stop, __ATOMIC_RELAXED))
                        break;
                if (s->holder == me) /* left over from a slice interrupted by shutdown */
                        break;
                if (!s->holder && s->nwait && s->w[0].pid == me) {
                        s->holder = me;
                        wait_remove(s, 0);
                        break;
                }
                if (!s->nwait || s->nwait >= MAX_WAIT) { /* table full: fall back to free-for-all */
                        if (!s->holder) {
                                s->holder = me;
                                break;
                        }
                }
                uint32_t f = s->futex;
                shm_unlock(s);
                futex_wait(&s->futex, f, WAIT_NS);
                shm_lock(s);
                if (s->futex == f)
                        reap(s);
        }
        e->queued = false;
        shm_unlock(s);
}

/* Hands the token on; with `again`, queues this process behind the current waiters first.
 * Returns true when instead this process keeps the token: it has more kernels (`again`) and
 * nobody waits, so handing over to itself would only cost host time. */
static bool token_release(kc_engine *e, bool again)
{
        kc_shm *s = e->sh;
        shm_lock(s);
        if (again && !e->stop && s->holder == kc_g.pid && s->nwait == 0) {
                shm_unlock(s);
                return true;
        }
        if (s->holder == kc_g.pid)
                s->holder = 0;
        if (again && !e->queued && !e->stop) {
                wait_add(s, kc_g.pid);
                e->queued = true;
        }
        if (s->nwait == 0) /* nobody continues: the device goes idle */
                __atomic_store_n(&s->busy_until, 0, __ATOMIC_RELEASE);
        s->futex++;
        shm_unlock(s);
        futex_wake(&s->futex);
        return false;
}

static uint64_t mono_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t engine_now(kc_engine *e)
{
        if (e->sh->virtual_clock)
                return __atomic_load_n(&e->sh->vclock_ns, __ATOMIC_ACQUIRE);
        return mono_ns();
}

uint64_t kc__engine_now(kc_ctx *ctx)
{
        return engine_now(kc_g.devs[ctx->dev].engine);
}

/* ---- queues ---- */

static bool blocking(const kc_stream *s)
{
        return s->kind != 1 && !(s->flags & CU_STREAM_NON_BLOCKING);
}

static bool op_ready(kc_stream *s, kc_op *op)
{
        kc_ctx *c = s->ctx;
        if (op->kind == KC_OP_EVENT_WAIT &&
            __atomic_load_n(&op->u.ev.ev->done_gen, __ATOMIC_ACQUIRE) < op->u.ev.gen)
                return false;
        if (s->kind == 1) { /* legacy stream waits for earlier work of every blocking stream */
                for (kc_stream *t = c->streams; t; t = t->next)
                        if (t != s && blocking(t) && t->head && t->head->seq < op->seq)
                                return false;
        } else if (blocking(s)) {
                kc_stream *l = c->legacy;
                if (l && l->head && l->head->seq < op->seq)
                        return false;
        }
        return true;
}

/* First ready operation, round robin over contexts (or only `only`) and their streams. */
static kc_op *pick(kc_engine *e, kc_ctx *only, kc_stream **ret_s)
{
        kc_ctx *start = only ? only : (e->rr_ctx ? e->rr_ctx : e->ctxs);
        kc_ctx *c = start;
        while (c) {
                unsigned n = 0, i = 0;
                for (kc_stream *s = c->streams; s; s = s->next)
                        n++;
                for (unsigned k = 0; k < n; k++) {
                        unsigned want = (c->rr + k) % n;
                        i = 0;
                        for (kc_stream *s = c->streams; s; s = s->next, i++) {
                                if (i != want)
                                        continue;
                                if (s->head && !s->running && op_ready(s, s->head)) {
                                        c->rr = want + 1;
                                        *ret_s = s;
                                        return s->head;
                                }
                        }
                }
                if (only)
                        break;
                c = c->next_on_engine ? c->next_on_engine : e->ctxs;
                if (c == start)
                        break;
        }
        return NULL;
}

static void complete(kc_engine *e, kc_stream *s, kc_op *op)
{
        s->head = op->next;
        if (!s->head)
                s->tail = NULL;
        s->completed++;
        s->running = false;
        e->pending_ops--;
        if (op->kind == KC_OP_KERNEL)
                e->pending_kernels--;
        free(op);
        pthread_cond_broadcast(&e->cv_done);
}

static void copy2d(const CUDA_MEMCPY2D *c)
{
        const char *src =
            c->srcMemoryType == CU_MEMORYTYPE_HOST ? c->srcHost : (const char *)c->srcDevice;
        char *dst = c->dstMemoryType == CU_MEMORYTYPE_HOST ? c->dstHost : (char *)c->dstDevice;
        for (size_t y = 0; y < c->Height; y++)
                memmove(dst + (c->dstY + y) * c->dstPitch + c->dstXInBytes,
                        src + (c->srcY + y) * c->srcPitch + c->srcXInBytes, c->WidthInBytes);
}

/* Runs a non-kernel op with e->mu dropped (copies may be large; frees take kc_g.mu). */
/* dev_ns: the device time at which the stream reaches op (inside a slice: its start plus the
 * device time used so far), 0 = now. */
static void run_other(kc_engine *e, kc_stream *s, kc_op *op, uint64_t dev_ns)
{
        s->running = true;
        pthread_mutex_unlock(&e->mu);
        switch (op->kind) {
        case KC_OP_COPY:
                memmove(op->u.copy.dst, op->u.copy.src, op->u.copy.n);
                break;
        case KC_OP_SET8:
                memset(op->u.set.dst, (int)op->u.set.val, op->u.set.n);
                break;
        case KC_OP_SET32:
                for (size_t i = 0; i < op->u.set.n; i++)
                        memcpy((char *)op->u.set.dst + 4 * i, &op->u.set.val, 4);
                break;
        case KC_OP_COPY2D:
                copy2d(&op->u.c2d);
                break;
        case KC_OP_HOST_FN:
                op->u.host.fn(op->u.host.arg);
                break;
        case KC_OP_FREE:
                kc__mem_free_ordered(op->u.free_ptr);
                break;
        default:
                break;
        }
        pthread_mutex_lock(&e->mu);
        if (op->kind == KC_OP_EVENT_RECORD) {
                kc_event *ev = op->u.ev.ev;
                uint64_t now = engine_now(e);
                ev->time_ns = dev_ns && !e->sh->virtual_clock && dev_ns < now ? dev_ns : now;
                if (ev->time_ns < e->last_event_ns) /* one device clock: never backwards */
                        ev->time_ns = e->last_event_ns;
                e->last_event_ns = ev->time_ns;
                __atomic_store_n(&ev->done_gen, op->u.ev.gen, __ATOMIC_RELEASE);
                /* Workers of other devices may wait on this event: they poll on a timeout. */
        }
        complete(e, s, op);
}

static void dev_sleep_until(uint64_t t)
{
        struct timespec ts = {(time_t)(t / 1000000000ULL), (long)(t % 1000000000ULL)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
}

/* Device start of a slice: the previous slice's deadline while the engine stayed busy (the
 * host time since then was hand-over overhead, not idle device time), else now. */
static uint64_t slice_start(kc_engine *e)
{
        uint64_t now = mono_ns();
        uint64_t bu = __atomic_load_n(&e->sh->busy_until, __ATOMIC_ACQUIRE);
        uint64_t t = bu && bu <= now && now - bu <= CATCH_UP_NS ? bu : now;
        return t < e->last_event_ns && e->last_event_ns <= now ? e->last_event_ns : t;
}

/* Whether op starts device work: a kernel, or an event recorded right before a queued kernel
 * (the pair a timing bracket opens). The worker runs such an event inside the kernel's slice,
 * so it takes the device time the kernel starts at, not the host time the worker got to it: on
 * an idle GPU a real stream reaches both within microseconds; the worker's wake-up and the
 * token hand-over are this simulator's host overhead, not device time between them. */
static bool starts_kernel(const kc_op *op)
{
        return op->kind == KC_OP_KERNEL ||
               (op->kind == KC_OP_EVENT_RECORD && op->next && op->next->kind == KC_OP_KERNEL);
}

/* Holding the token, runs up to one time slice of `ctx`. Called and returns with e->mu held.
 * Returns the device time used. Events that are ready when the slice's time is used up are
 * recorded at its device end (the time the stream reached them), not after the hand-over. */
static uint64_t run_slice(kc_engine *e, kc_ctx *ctx)
{
        uint64_t used = 0, t0 = slice_start(e);
        kc_stream *s;
        kc_op *op;
        while (used < KC_TIMESLICE_NS && !e->stop && (op = pick(e, ctx, &s))) {
                if (op->kind != KC_OP_KERNEL) {
                        run_other(e, s, op, t0 + used);
                        continue;
                }
                uint64_t chunk = op->remaining_ns;
                if (chunk > KC_TIMESLICE_NS - used)
                        chunk = KC_TIMESLICE_NS - used;
                s->running = true;
                pthread_mutex_unlock(&e->mu);
                if (e->sh->virtual_clock)
                        __atomic_add_fetch(&e->sh->vclock_ns, chunk, __ATOMIC_RELEASE);
                else
                        dev_sleep_until(t0 + used + chunk);
                pthread_mutex_lock(&e->mu);
                used += chunk;
                op->remaining_ns -= chunk;
                s->running = false;
                if (!op->remaining_ns)
                        complete(e, s, op);
        }
        while (!e->stop && (op = pick(e, ctx, &s)) && op->kind == KC_OP_EVENT_RECORD)
                run_other(e, s, op, t0 + used);
        if (used && !e->sh->virtual_clock)
                __atomic_store_n(&e->sh->busy_until, t0 + used, __ATOMIC_RELEASE);
        return used;
}

static void *worker(void *arg)
{
        kc_engine *e = arg;
        kc_dev *d = &kc_g.devs[e->dev];
        bool held = false; /* the token, kept from the previous slice (nobody else waited) */
        pthread_mutex_lock(&e->mu);
        while (!e->stop) {
                kc_stream *s;
                kc_op *op = pick(e, NULL, &s);
                if (held && (!op || !starts_kernel(op))) {
                        /* nothing to run on the device now: never idle (or run host work)
                         * while others may be waiting for the token */
                        pthread_mutex_unlock(&e->mu);
                        token_release(e, false);
                        held = false;
                        pthread_mutex_lock(&e->mu);
                        continue;
                }
                if (!op) {
                        if (e->pending_ops) { /* blocked on an event of another engine: poll */
                                struct timespec ts;
                                clock_gettime(CLOCK_REALTIME, &ts);
                                ts.tv_nsec += 1000000;
                                if (ts.tv_nsec >= 1000000000) {
                                        ts.tv_sec++;
                                        ts.tv_nsec -= 1000000000;
                                }
                                pthread_cond_timedwait(&e->cv_work, &e->mu, &ts);
                        } else {
                                pthread_cond_wait(&e->cv_work, &e->mu);
                        }
                        continue;
                }
                if (!starts_kernel(op)) {
                        run_other(e, s, op, 0);
                        continue;
                }
                kc_ctx *ctx = s->ctx;
                pthread_mutex_unlock(&e->mu);
                if (!held)
                        token_acquire(e);
                pthread_mutex_lock(&e->mu);
                uint64_t used = run_slice(e, ctx);
                e->rr_ctx = ctx->next_on_engine; /* next slice starts with the next context */
                bool again = e->pending_kernels > 0;
                pthread_mutex_unlock(&e->mu);
                if (used) {
                        __atomic_add_fetch(&e->sh->busy_ns, used, __ATOMIC_RELAXED);
                        kerf_sim_engine_account(kc_g.sim, kc_g.pid, d->target, used);
                }
                held = token_release(e, again);
                pthread_mutex_lock(&e->mu);
        }
        pthread_mutex_unlock(&e->mu);
        if (held)
                token_release(e, false);
        return NULL;
}

static kc_shm *shm_open_engine(const kc_dev *d)
{
        char path[4096];
        int n = snprintf(path, sizeof(path), "%s/cuda-engine-%d-%d-%d", kerf_sim_dir(kc_g.sim),
                         d->target.gpu, d->target.gi, d->target.ci);
        if (n < 0 || (size_t)n >= sizeof(path))
                return NULL; /* a cut path could name another device's engine */
        /* The directory may be shared by the tasks of many uids through the simulated device
         * group (kerfd: 03770, docs/SECURITY.md): an existing file is opened without O_CREAT
         * (fs.protected_regular refuses O_CREAT on another uid's file in a sticky directory),
         * never through a link; a new one is made 0660 whatever the umask, so the other
         * processes on this device can open it. */
        int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        for (int i = 0; fd < 0 && errno == ENOENT && i < 2; i++) {
                fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0660);
                if (fd >= 0)
                        (void)fchmod(fd, 0660);
                else if (errno == EEXIST) /* made by another process meanwhile */
                        fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0)
                return NULL;
        kc_shm *s = NULL;
        struct stat st;
        if (flock(fd, LOCK_EX) < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                goto out;
        bool fresh = st.st_size < (off_t)sizeof(kc_shm);
        if (fresh && ftruncate(fd, sizeof(kc_shm)) < 0)
                goto out;
        s = mmap(NULL, sizeof(kc_shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (s == MAP_FAILED) {
                s = NULL;
                goto out;
        }
        if (fresh || s->magic != SHM_MAGIC) {
                memset(s, 0, sizeof(*s));
                pthread_mutexattr_t a;
                pthread_mutexattr_init(&a);
                pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
                pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
                pthread_mutex_init(&s->mu, &a);
                pthread_mutexattr_destroy(&a);
                s->virtual_clock = kc_g.virtual_clock;
                __atomic_store_n(&s->magic, SHM_MAGIC, __ATOMIC_RELEASE);
        }
out:
        flock(fd, LOCK_UN);
        close(fd);
        return s;
}

int kc__engine_attach(int d, kc_ctx *ctx)
{
        kc_dev *dev = &kc_g.devs[d];
        kc_engine *e = dev->engine;
        if (!e) {
                e = calloc(1, sizeof(*e));
                if (!e)
                        return -ENOMEM;
                e->dev = d;
                e->sh = shm_open_engine(dev);
                if (!e->sh) {
                        free(e);
                        return -EIO;
                }
                pthread_mutex_init(&e->mu, NULL);
                pthread_cond_init(&e->cv_work, NULL);
                pthread_cond_init(&e->cv_done, NULL);
                /* The worker must not inherit the application's signal handling duties. */
                sigset_t all, old;
                sigfillset(&all);
                pthread_sigmask(SIG_SETMASK, &all, &old);
                int r = pthread_create(&e->thread, NULL, worker, e);
                pthread_sigmask(SIG_SETMASK, &old, NULL);
                if (r) {
                        munmap(e->sh, sizeof(kc_shm));
                        free(e);
                        return -r;
                }
                dev->engine = e;
        }
        pthread_mutex_lock(&e->mu);
        ctx->next_on_engine = e->ctxs;
        e->ctxs = ctx;
        pthread_mutex_unlock(&e->mu);
        return 0;
}

void kc__engine_detach(int d, kc_ctx *ctx)
{
        kc_engine *e = kc_g.devs[d].engine;
        if (!e)
                return;
        pthread_mutex_lock(&e->mu);
        for (kc_ctx **pp = &e->ctxs; *pp; pp = &(*pp)->next_on_engine)
                if (*pp == ctx) {
                        *pp = ctx->next_on_engine;
                        break;
                }
        e->rr_ctx = NULL;
        pthread_mutex_unlock(&e->mu);
}

void kc__engine_lock(kc_ctx *ctx)
{
        pthread_mutex_lock(&kc_g.devs[ctx->dev].engine->mu);
}

void kc__engine_unlock(kc_ctx *ctx)
{
        pthread_mutex_unlock(&kc_g.devs[ctx->dev].engine->mu);
}

void kc__engine_submit(kc_stream *s, kc_op *op)
{
        kc_engine *e = kc_g.devs[s->ctx->dev].engine;
        op->next = NULL;
        pthread_mutex_lock(&e->mu);
        op->seq = ++s->ctx->seq;
        if (s->tail)
                s->tail->next = op;
        else
                s->head = op;
        s->tail = op;
        s->submitted++;
        e->pending_ops++;
        if (op->kind == KC_OP_KERNEL)
                e->pending_kernels++;
        pthread_cond_signal(&e->cv_work);
        pthread_mutex_unlock(&e->mu);
}

void kc__engine_wait_stream(kc_stream *s, uint64_t upto)
{
        kc_engine *e = kc_g.devs[s->ctx->dev].engine;
        pthread_mutex_lock(&e->mu);
        uint64_t target = upto ? upto : s->submitted;
        while (s->completed < target && !e->stop)
                pthread_cond_wait(&e->cv_done, &e->mu);
        pthread_mutex_unlock(&e->mu);
}

void kc__engine_wait_ctx(kc_ctx *ctx)
{
        kc_engine *e = kc_g.devs[ctx->dev].engine;
        pthread_mutex_lock(&e->mu);
        for (;;) {
                bool busy = false;
                for (kc_stream *s = ctx->streams; s; s = s->next)
                        busy |= s->completed < s->submitted;
                if (!busy || e->stop)
                        break;
                pthread_cond_wait(&e->cv_done, &e->mu);
        }
        pthread_mutex_unlock(&e->mu);
}

void kc__engine_wait_event(kc_event *ev)
{
        kc_engine *e = kc_g.devs[ev->ctx->dev].engine;
        pthread_mutex_lock(&e->mu);
        while (__atomic_load_n(&ev->done_gen, __ATOMIC_ACQUIRE) < ev->rec_gen && !e->stop)
                pthread_cond_wait(&e->cv_done, &e->mu);
        pthread_mutex_unlock(&e->mu);
}

void kc__engine_shutdown(void)
{
        for (int i = 0; i < kc_g.n_devs; i++) {
                kc_engine *e = kc_g.devs[i].engine;
                if (!e)
                        continue;
                pthread_mutex_lock(&e->mu);
                e->stop = true;
                pthread_cond_broadcast(&e->cv_work);
                pthread_cond_broadcast(&e->cv_done);
                pthread_mutex_unlock(&e->mu);
                kc_shm *s = e->sh;
                shm_lock(s);
                if (s->holder == kc_g.pid)
                        s->holder = 0;
                for (unsigned j = 0; j < s->nwait;) {
                        if (s->w[j].pid == kc_g.pid)
                                wait_remove(s, j);
                        else
                                j++;
                }
                s->futex++;
                shm_unlock(s);
                futex_wake(&s->futex);
        }
}
