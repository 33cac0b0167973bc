/* SPDX-License-Identifier: Apache-2.0 */
/* region.c - slot claim/free, reserve/release on memory_charged, dead-process reclaim */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/*
 * Everything here is a C11 atomic on the shared region (docs/SHIM-CONTRACT.md rules 1-4): no
 * lock, so a process SIGKILLed at any instant never blocks another. Counters that go down
 * saturate at zero instead of wrapping (a wrap would show "17 TB used" and lock the task out);
 * with exact process-local tables they never need to.
 */

uint64_t ks__now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Subtracts n from *w, never below 0. */
static void sub_sat(_Atomic uint64_t *w, uint64_t n)
{
        uint64_t c = atomic_load(w);
        while (!atomic_compare_exchange_weak(w, &c, c > n ? c - n : 0))
                ;
}

static void store_max(_Atomic uint64_t *w, uint64_t v)
{
        uint64_t c = atomic_load_explicit(w, memory_order_relaxed);
        while (c < v && !atomic_compare_exchange_weak(w, &c, v))
                ;
}

/* Rule 3: one CAS loop on memory_charged; never exceeds the limit. */
static bool try_reserve(struct kerf_slice_region *r, uint64_t n)
{
        uint64_t limit = atomic_load_explicit(&r->limits.memory_limit, memory_order_acquire);
        uint64_t c = atomic_load(&r->memory_charged);
        for (;;) {
                if (n > limit || c > limit - n)
                        return false;
                if (atomic_compare_exchange_weak(&r->memory_charged, &c, c + n))
                        break;
        }
        store_max(&r->memory_peak, c + n);
        return true;
}

/* Reserve n for this process; `loud`: on refusal reclaim dead slots, retry once, and count the
 * denial (a quiet caller, e.g. a pool probe, retries on its own terms). */
static bool reserve(uint64_t n, bool loud)
{
        struct kerf_slice_region *r = ks.region;
        struct kerf_slice_proc *s = ks.slot;

        if (!n || !r || !s || atomic_load(&ks.exited))
                return true;
        if (!try_reserve(r, n)) {
                if (!loud)
                        return false;
                /* A dead process may still hold charges the driver already gave back. */
                ks__reclaim_dead();
                if (!try_reserve(r, n)) {
                        atomic_fetch_add(&r->memory_denied, 1);
                        return false;
                }
        }
        uint64_t used = atomic_fetch_add(&s->memory_used, n) + n;
        store_max(&s->memory_peak, used);
        return true;
}

bool ks__mem_reserve(uint64_t n)
{
        return reserve(n, true);
}

bool ks__mem_reserve_quiet(uint64_t n)
{
        return reserve(n, false);
}

void ks__mem_release(uint64_t n)
{
        struct kerf_slice_region *r = ks.region;
        struct kerf_slice_proc *s = ks.slot;

        if (!n || !r || !s || atomic_load(&ks.exited))
                return;
        sub_sat(&s->memory_used, n);
        sub_sat(&r->memory_charged, n);
}

uint64_t ks__proc_starttime(pid_t pid)
{
        char path[64], buf[1024];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return 0;
        buf[n] = 0;
        /* comm (field 2) may contain spaces and parentheses: count from the last ')'. */
        char *p = strrchr(buf, ')');
        if (!p)
                return 0;
        p++;
        for (int field = 3; field < 22; field++) {
                p = strchr(p + 1, ' ');
                if (!p)
                        return 0;
        }
        return strtoull(p + 1, NULL, 10);
}

/* A slot owner is dead when kill() says ESRCH, or its pid was reused (starttime differs). */
static bool owner_dead(pid_t pid, uint64_t starttime)
{
        if (kill(pid, 0) < 0 && errno == ESRCH)
                return true;
        if (!starttime)
                return false;
        uint64_t now = ks__proc_starttime(pid);
        return now && now != starttime;
}

/* Slot s, owned by pid: reclaimed when its owner is dead. Returns true when the owner is
 * alive (nothing done). */
static bool check_slot(struct kerf_slice_region *r, struct kerf_slice_proc *s, int32_t pid)
{
        if (!owner_dead(pid, atomic_load(&s->starttime)))
                return true;
        if (!atomic_compare_exchange_strong(&s->pid, &pid, KERF_SLICE_PID_RECLAIMING))
                return false; /* someone else reclaims it, or it changed hands */
        uint64_t n = atomic_exchange(&s->memory_used, 0);
        sub_sat(&r->memory_charged, n);
        atomic_store(&s->starttime, 0);
        atomic_store(&s->memory_peak, 0);
        atomic_store(&s->device_time_ns, 0);
        atomic_store(&s->throttled_ns, 0);
        atomic_store(&s->launches, 0);
        atomic_store(&s->last_activity_ns, 0);
        uint32_t np = atomic_load(&r->nprocs);
        while (np && !atomic_compare_exchange_weak(&r->nprocs, &np, np - 1))
                ;
        atomic_store_explicit(&s->pid, 0, memory_order_release);
        return false;
}

void ks__reclaim_dead(void)
{
        struct kerf_slice_region *r = ks.region;
        if (!r)
                return;
        for (unsigned i = 0; i < KERF_SLICE_MAX_PROCS; i++) {
                struct kerf_slice_proc *s = &r->procs[i];
                int32_t pid = atomic_load_explicit(&s->pid, memory_order_acquire);
                if (pid > 0 && pid != (int32_t)ks.pid)
                        check_slot(r, s, pid);
        }
}

/* Live owners after ours that one pass checks (two: a stopped or starved neighbour does not
 * leave the dead slots behind it unchecked). */
#define KS_RECLAIM_LIVE 2u

void ks__reclaim_tick(void)
{
        struct kerf_slice_region *r = ks.region;
        if (!r || atomic_load_explicit(&ks.exited, memory_order_acquire))
                return;
        unsigned start = ks.slot_index >= 0 ? (unsigned)ks.slot_index : 0, live = 0;
        for (unsigned k = 1; k < KERF_SLICE_MAX_PROCS && live < KS_RECLAIM_LIVE; k++) {
                struct kerf_slice_proc *s = &r->procs[(start + k) % KERF_SLICE_MAX_PROCS];
                int32_t pid = atomic_load_explicit(&s->pid, memory_order_acquire);
                if (pid > 0 && pid != (int32_t)ks.pid && check_slot(r, s, pid))
                        live++;
        }
}

int ks__slot_claim(void)
{
        struct kerf_slice_region *r = ks.region;
        int32_t me = (int32_t)getpid();
        uint64_t st = ks__proc_starttime(me);

        for (int pass = 0; pass < 2; pass++) {
                for (unsigned i = 0; i < KERF_SLICE_MAX_PROCS; i++) {
                        struct kerf_slice_proc *s = &r->procs[i];
                        int32_t zero = 0;
                        if (atomic_load_explicit(&s->pid, memory_order_relaxed) != 0 ||
                            !atomic_compare_exchange_strong(&s->pid, &zero, me))
                                continue;
                        /* A slot is zeroed before its pid goes back to 0; make sure anyway. */
                        atomic_store(&s->starttime, st);
                        atomic_store(&s->memory_used, 0);
                        atomic_store(&s->memory_peak, 0);
                        atomic_store(&s->device_time_ns, 0);
                        atomic_store(&s->throttled_ns, 0);
                        atomic_store(&s->launches, 0);
                        atomic_store(&s->last_activity_ns, 0);
                        atomic_fetch_add(&r->nprocs, 1);
                        ks.slot = s;
                        ks.slot_index = (int)i;
                        return 0;
                }
                ks__reclaim_dead();
        }
        snprintf(ks.err, sizeof(ks.err),
                 "no free process slot in the slice region (%u processes of the task already "
                 "use CUDA)",
                 KERF_SLICE_MAX_PROCS);
        return -1;
}

void ks__slot_free(void)
{
        struct kerf_slice_region *r = ks.region;
        struct kerf_slice_proc *s = ks.slot;
        int32_t me = (int32_t)ks.pid;

        if (!r || !s || atomic_load_explicit(&s->pid, memory_order_acquire) != me)
                return;
        uint64_t n = atomic_exchange(&s->memory_used, 0);
        sub_sat(&r->memory_charged, n);
        atomic_store(&s->starttime, 0);
        atomic_store(&s->memory_peak, 0);
        atomic_store(&s->device_time_ns, 0);
        atomic_store(&s->throttled_ns, 0);
        atomic_store(&s->launches, 0);
        atomic_store(&s->last_activity_ns, 0);
        uint32_t np = atomic_load(&r->nprocs);
        while (np && !atomic_compare_exchange_weak(&r->nprocs, &np, np - 1))
                ;
        /* Only if it is still ours: a reclaimer that thought us dead owns it now. */
        atomic_compare_exchange_strong(&s->pid, &me, 0);
}

void ks__heartbeat(uint64_t now_ns)
{
        if (ks.region)
                atomic_store_explicit(&ks.region->heartbeat_ns, now_ns, memory_order_relaxed);
}

void ks__activity(void)
{
        uint64_t now = ks__now_ns();
        if (ks.slot)
                atomic_store_explicit(&ks.slot->last_activity_ns, now, memory_order_relaxed);
        if (ks.region)
                atomic_store_explicit(&ks.region->last_activity_ns, now, memory_order_relaxed);
}
