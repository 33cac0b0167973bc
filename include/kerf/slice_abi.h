/* SPDX-License-Identifier: Apache-2.0 */
/* slice_abi.h - binary layout of the per-slice shared region kerfd and the shim share */
#ifndef KERF_SLICE_ABI_H
#define KERF_SLICE_ABI_H

/*
 * One region per software slice (unit kinds slice, tslice, and the memory cap of mps), a
 * regular file that kerfd creates before the task starts and removes after reclamation. Its
 * path is in KERF_SLICE_REGION (docs/SHIM-CONTRACT.md). Every process of the task maps it
 * MAP_SHARED. The protocol is lock-free: only C11 atomics on naturally aligned 32/64-bit
 * words, so a process SIGKILLed at any instant never blocks another.
 *
 * Who writes what:
 *   header, limits ..... kerfd (limits may change while the task runs; `generation` is
 *                        incremented after each change, release order)
 *   counters, procs[] .. the shim in the task's processes; kerfd only reads them, except
 *                        that it may reclaim the slot of a dead process (same protocol
 *                        as the shim, below)
 *
 * Memory: `memory_charged` is the one word every reservation goes through.
 *   reserve(n):   do { c = load(charged); if (n > limit || c > limit - n) -> refuse }
 *                 while (!CAS(charged, c, c + n));  then  slot.memory_used += n
 *   alloc failed: slot.memory_used -= n; charged -= n
 *   free(n):      (after the real free) slot.memory_used -= n; charged -= n
 *   So charged never exceeds the limit, whatever the number of racing processes.
 *   A dead process (kill(pid,0) == ESRCH, or /proc/PID/stat starttime != slot.starttime):
 *   CAS slot.pid from pid to KERF_SLICE_PID_RECLAIMING; n = exchange(slot.memory_used, 0);
 *   charged -= n; zero the slot's other fields; store slot.pid = 0 (release). The driver has
 *   freed the dead process's memory, so this is exact, except for a death between the CAS on
 *   `charged` and the slot update: that reservation stays charged (a safe-direction leak of
 *   one allocation) until kerfd finds no live process in the task and resets the counters.
 *
 * Compute: the shim charges measured GPU time to device_time_ns (per process and total)
 * and time it held launches back to throttled_ns, aiming at compute_allowed_pct of each
 * window_ms window (kerfd moves compute_allowed_pct between compute_pct and
 * compute_limit_pct as the GPU has room). last_activity_ns (CLOCK_MONOTONIC) is updated
 * on every launch, copy or synchronisation that found work: kerfd's idle timeout reads it.
 * heartbeat_ns is updated at least once a second by any live process of the task.
 *
 * Versioning: `abi_version` changes when a field moves or changes meaning; fields are only
 * ever added in the reserved space, with header_size/proc_size unchanged. A mapper refuses
 * a region whose magic, version or sizes differ from its own.
 */

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define KERF_SLICE_MAGIC             0x3143534652454b00ULL /* "\0KERFSC1" little-endian */
#define KERF_SLICE_ABI_VERSION       2u
#define KERF_SLICE_MAX_PROCS         128u
#define KERF_SLICE_PID_RECLAIMING    (-1)
#define KERF_SLICE_DEFAULT_WINDOW_MS 100u

/* limits.flags */
#define KERF_SLICE_F_TSLICE 0x1u /* time-slice share: no compute reservation, cap memory only */
#define KERF_SLICE_F_MPS    0x2u /* MPS client: compute by CUDA_MPS_ACTIVE_THREAD_PERCENTAGE */
#define KERF_SLICE_F_FROZEN 0x4u /* kerfd asks the shim to hold all launches (preemption) */
#define KERF_SLICE_F_YIELD                                                                         \
        0x8u /* ABI 2: a high-impact neighbour on the GPU is busy: hold                            \
              * launches (as FROZEN) until kerfd clears it */

/* Written by kerfd. */
struct kerf_slice_limits {
        _Atomic uint64_t memory_limit;        /* bytes, all processes of the task together */
        _Atomic uint64_t device_memory;       /* physical memory of the GPU; views show min() */
        _Atomic uint32_t compute_pct;         /* guaranteed share, 0..100 */
        _Atomic uint32_t compute_limit_pct;   /* burst ceiling, compute_pct..100 */
        _Atomic uint32_t compute_allowed_pct; /* what may be used now */
        _Atomic uint32_t flags;               /* KERF_SLICE_F_* */
        _Atomic uint32_t window_ms;           /* limiter window, > 0 */
        uint32_t reserved0;
        _Atomic uint64_t generation; /* incremented after every change */
        uint64_t unit_id;
        uint64_t task_id;
        uint64_t reserved[8];
};

/* One process of the task; claimed by CAS of pid from 0 to getpid(). */
struct kerf_slice_proc {
        _Atomic int32_t pid; /* 0 free, > 0 owner, KERF_SLICE_PID_RECLAIMING */
        uint32_t reserved0;
        _Atomic uint64_t starttime;   /* owner's /proc/PID/stat field 22 */
        _Atomic uint64_t memory_used; /* bytes charged by this process */
        _Atomic uint64_t memory_peak;
        _Atomic uint64_t device_time_ns;
        _Atomic uint64_t throttled_ns;
        _Atomic uint64_t launches;
        _Atomic uint64_t last_activity_ns; /* CLOCK_MONOTONIC */
        uint64_t reserved[8];
};

struct kerf_slice_region {
        /* header: written once by kerfd; magic is stored last (release) */
        _Atomic uint64_t magic;
        uint32_t abi_version;
        uint32_t header_size; /* offsetof(procs) */
        uint32_t region_size; /* sizeof(struct kerf_slice_region) */
        uint32_t proc_size;   /* sizeof(struct kerf_slice_proc) */
        uint32_t max_procs;   /* KERF_SLICE_MAX_PROCS */
        uint32_t reserved0;
        struct kerf_slice_limits limits;
        /* counters: written by the shim */
        _Atomic uint64_t memory_charged; /* reserved + allocated bytes; <= memory_limit */
        _Atomic uint64_t memory_peak;
        _Atomic uint64_t memory_denied;    /* allocations refused by the cap */
        _Atomic uint64_t device_time_ns;   /* measured GPU time, all processes */
        _Atomic uint64_t throttled_ns;     /* time launches were held back */
        _Atomic uint64_t last_activity_ns; /* CLOCK_MONOTONIC ns of the last GPU work */
        _Atomic uint64_t heartbeat_ns;     /* CLOCK_MONOTONIC ns, at least every second */
        _Atomic uint32_t nprocs;           /* slots in use */
        uint32_t reserved1;
        /* ABI 2: the compute limiter's shared token bucket (docs/SHIM.md). credit_ns is the
         * device time the task may still start now (negative = debt carried forward); any
         * process refills it by CAS of credit_stamp_ns at allowed_pct of the wall time since. */
        _Atomic int64_t credit_ns;
        _Atomic uint64_t credit_stamp_ns; /* CLOCK_MONOTONIC ns of the last refill */
        _Atomic uint64_t launches;        /* launches (all kinds) of all processes */
        _Atomic uint64_t held_launches;   /* launches that waited for credit, FROZEN or YIELD */
        /* ABI 2, from the reserved space: launches of a kernel without a cost estimate yet that
         * waited for its first measurement (KS_MAX_UNKNOWN unmeasured ones in flight, docs/
         * SHIM.md); not throttling, so neither in throttled_ns nor in held_launches. 0 from a
         * shim that does not count them. */
        _Atomic uint64_t sample_wait_ns;
        _Atomic uint64_t sample_waits;
        uint64_t reserved[14];
        struct kerf_slice_proc procs[KERF_SLICE_MAX_PROCS];
};

_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics must be lock-free");
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "32-bit atomics must be lock-free");
_Static_assert(sizeof(_Atomic uint64_t) == 8, "atomic u64 is a plain word");
_Static_assert(sizeof(struct kerf_slice_limits) == 128, "limits layout");
_Static_assert(sizeof(struct kerf_slice_proc) == 128, "proc slot layout");
_Static_assert(offsetof(struct kerf_slice_region, limits) == 32, "header layout");
_Static_assert(offsetof(struct kerf_slice_region, memory_charged) == 160, "counters layout");
_Static_assert(offsetof(struct kerf_slice_region, procs) == 384, "procs offset");
_Static_assert(sizeof(struct kerf_slice_region) == 384 + 128 * KERF_SLICE_MAX_PROCS, "region size");

#ifndef KERF_SLICE_ABI_NO_HELPERS
/* Helpers shared by kerfd (create) and the shim (map). POSIX; no allocation, no printing. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Initial values of a region's limits, for kerf_slice_region_create(). */
struct kerf_slice_init {
        uint64_t memory_limit;
        uint64_t device_memory;
        uint32_t compute_pct;
        uint32_t compute_limit_pct;
        uint32_t flags;
        uint32_t window_ms; /* 0 = KERF_SLICE_DEFAULT_WINDOW_MS */
        uint64_t unit_id;
        uint64_t task_id;
};

/* Creates the region file at `path` (must not exist: O_EXCL, O_NOFOLLOW), sized and
 * initialised, mode 0660, owned by uid:gid when the caller is root (else by the caller).
 * Never world-accessible. Returns 0, -EINVAL (bad limits), -EEXIST, or -errno; on failure
 * the file is removed. */
static inline int kerf_slice_region_create(const char *path, uid_t uid, gid_t gid,
                                           const struct kerf_slice_init *in)
{
        struct kerf_slice_region *r;
        int fd, err = 0;

        if (!path || !*path || !in || in->compute_pct > 100 || in->compute_limit_pct > 100 ||
            in->compute_limit_pct < in->compute_pct)
                return -EINVAL;
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        if (ftruncate(fd, (off_t)sizeof(*r)) < 0 || (geteuid() == 0 && fchown(fd, uid, gid) < 0) ||
            fchmod(fd, 0660) < 0) {
                err = -errno;
                goto fail;
        }
        r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (r == MAP_FAILED) {
                err = -errno;
                goto fail;
        }
        /* ftruncate zero-filled the file: only non-zero fields are written. */
        r->abi_version = KERF_SLICE_ABI_VERSION;
        r->header_size = (uint32_t)offsetof(struct kerf_slice_region, procs);
        r->region_size = (uint32_t)sizeof(*r);
        r->proc_size = (uint32_t)sizeof(struct kerf_slice_proc);
        r->max_procs = KERF_SLICE_MAX_PROCS;
        atomic_store(&r->limits.memory_limit, in->memory_limit);
        atomic_store(&r->limits.device_memory, in->device_memory);
        atomic_store(&r->limits.compute_pct, in->compute_pct);
        atomic_store(&r->limits.compute_limit_pct, in->compute_limit_pct);
        atomic_store(&r->limits.compute_allowed_pct, in->compute_pct);
        atomic_store(&r->limits.flags, in->flags);
        atomic_store(&r->limits.window_ms,
                     in->window_ms ? in->window_ms : KERF_SLICE_DEFAULT_WINDOW_MS);
        r->limits.unit_id = in->unit_id;
        r->limits.task_id = in->task_id;
        atomic_store_explicit(&r->magic, KERF_SLICE_MAGIC, memory_order_release);
        munmap(r, sizeof(*r));
        close(fd);
        return 0;
fail:
        unlink(path);
        close(fd);
        return err;
}

/* Maps an existing region, read-write (`writable`, the shim) or read-only (monitors), and
 * checks magic, version and sizes. Returns 0 and *ret (release with
 * kerf_slice_region_unmap()), -EPROTO (not a region of this ABI), or -errno. */
static inline int kerf_slice_region_map(const char *path, bool writable,
                                        struct kerf_slice_region **ret)
{
        struct kerf_slice_region *r;
        struct stat st;
        int fd, err = 0;

        if (!path || !*path || !ret)
                return -EINVAL;
        fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                err = -errno;
                goto out;
        }
        if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != sizeof(*r) || (st.st_mode & 0007)) {
                err = -EPROTO;
                goto out;
        }
        r = mmap(NULL, sizeof(*r), PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
        if (r == MAP_FAILED) {
                err = -errno;
                goto out;
        }
        if (atomic_load_explicit(&r->magic, memory_order_acquire) != KERF_SLICE_MAGIC ||
            r->abi_version != KERF_SLICE_ABI_VERSION ||
            r->header_size != offsetof(struct kerf_slice_region, procs) ||
            r->region_size != sizeof(*r) || r->proc_size != sizeof(struct kerf_slice_proc) ||
            r->max_procs != KERF_SLICE_MAX_PROCS) {
                munmap(r, sizeof(*r));
                err = -EPROTO;
                goto out;
        }
        *ret = r;
out:
        close(fd);
        return err;
}

/* Unmaps a region from kerf_slice_region_map(). Accepts NULL. */
static inline void kerf_slice_region_unmap(struct kerf_slice_region *r)
{
        if (r)
                munmap(r, sizeof(*r));
}
#endif /* KERF_SLICE_ABI_NO_HELPERS */

#endif /* KERF_SLICE_ABI_H */
