/* SPDX-License-Identifier: Apache-2.0 */
/* simproc.c - kerf-sim process attachments: memory charges, reclaim, engine time, utilisation */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "internal.h"
#include "kerf/errno.h"

void kerf__sim_clear_slot(struct sim_slot *s)
{
        memset(s, 0, sizeof(*s));
}

/* Start time of `pid` in clock ticks since boot (field 22 of /proc/pid/stat), 0 if unknown.
 * Used to tell a live process from a new one that reused a dead one's pid. */
static uint64_t proc_starttime(pid_t pid)
{
        char path[64], buf[1024];
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        if (kerf_file_read_small(path, buf, sizeof(buf)) <= 0)
                return 0;
        char *p = strrchr(buf, ')');
        if (!p)
                return 0;
        /* after ") " come fields 3..: skip to field 22 */
        unsigned field = 2;
        for (; *p && field < 22; p++)
                if (*p == ' ')
                        field++;
        return strtoull(p, NULL, 10);
}

static void proc_comm(pid_t pid, char out[16])
{
        char path[64], buf[64];
        snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
        memset(out, 0, 16);
        if (kerf_file_read_small(path, buf, sizeof(buf)) <= 0)
                return;
        buf[strcspn(buf, "\n")] = '\0';
        buf[15] = '\0';
        memcpy(out, buf, strlen(buf));
}

static bool slot_dead(const struct sim_slot *s)
{
        if (kill(s->pid, 0) < 0 && errno == ESRCH)
                return true;
        if (s->starttime) {
                uint64_t now = proc_starttime(s->pid);
                if (now && now != s->starttime)
                        return true;
        }
        return false;
}

int kerf__sim_reclaim_locked(kerf_sim *st)
{
        int n = 0;
        for (unsigned i = 0; i < KERF_SIM_MAX_PROCS; i++) {
                struct sim_slot *s = &st->f->slot[i];
                if (s->pid > 0 && slot_dead(s)) {
                        kerf__sim_clear_slot(s);
                        n++;
                } else if (s->pid < 0) {
                        kerf__sim_clear_slot(s); /* never written by us: torn slot */
                }
        }
        return n;
}

uint64_t kerf__sim_used(kerf_sim *st, unsigned gpu, int gi, int ci, unsigned *ret_procs)
{
        uint64_t sum = 0;
        unsigned n = 0;
        for (unsigned i = 0; i < KERF_SIM_MAX_PROCS; i++) {
                const struct sim_slot *s = &st->f->slot[i];
                if (s->pid <= 0 || s->gpu != (int)gpu || (gi >= 0 && s->gi != gi) ||
                    (ci >= 0 && s->ci != ci))
                        continue;
                sum += s->mem;
                n++;
        }
        if (ret_procs)
                *ret_procs = n;
        return sum;
}

static int target_usable(kerf_sim *st, kerf_sim_target t)
{
        int rc = kerf__sim_target_check(st, t);
        if (rc < 0)
                return rc;
        struct sim_gpu *g = &st->f->gpu[t.gpu];
        if (g->lost)
                return -KERF_EDEVICE;
        if (t.gi < 0 && g->mig_enabled)
                return -KERF_EUNSUPP; /* in MIG mode work runs on MIG devices only */
        if (t.gi >= 0 && t.ci < 0)
                return -EINVAL; /* a GI without a CI runs nothing */
        return 0;
}

static struct sim_slot *slot_find(kerf_sim *st, pid_t pid, kerf_sim_target t)
{
        for (unsigned i = 0; i < KERF_SIM_MAX_PROCS; i++) {
                struct sim_slot *s = &st->f->slot[i];
                if (s->pid == pid && s->gpu == t.gpu && s->gi == t.gi && s->ci == t.ci)
                        return s;
        }
        return NULL;
}

static int slot_get(kerf_sim *st, pid_t pid, kerf_sim_target t, struct sim_slot **ret)
{
        struct sim_slot *s = slot_find(st, pid, t);
        if (s) {
                *ret = s;
                return 0;
        }
        for (int pass = 0; pass < 2 && !s; pass++) {
                if (pass == 1)
                        kerf__sim_reclaim_locked(st);
                for (unsigned i = 0; i < KERF_SIM_MAX_PROCS && !s; i++)
                        if (st->f->slot[i].pid == 0)
                                s = &st->f->slot[i];
        }
        if (!s)
                return -ENOSPC;
        memset(s, 0, sizeof(*s));
        s->gpu = t.gpu;
        s->gi = t.gi;
        s->ci = t.ci;
        s->starttime = proc_starttime(pid);
        proc_comm(pid, s->comm);
        s->attach_us = kerf_sim_now_us();
        s->snap[0] = (struct sim_snap){s->attach_us, 0};
        s->snap_n = 1;
        s->pid = pid; /* last: a slot with pid != 0 is complete */
        *ret = s;
        return 0;
}

int kerf_sim_proc_attach(kerf_sim *st, pid_t pid, kerf_sim_target t)
{
        int rc;
        struct sim_slot *s;
        if (!st || pid <= 0)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        if ((rc = target_usable(st, t)) == 0)
                rc = slot_get(st, pid, t, &s);
        kerf__sim_unlock(st);
        return rc;
}

int kerf_sim_proc_detach(kerf_sim *st, pid_t pid, kerf_sim_target t)
{
        int rc;
        if (!st || pid <= 0)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        struct sim_slot *s = slot_find(st, pid, t);
        if (s)
                kerf__sim_clear_slot(s);
        kerf__sim_unlock(st);
        return s ? 0 : -ENOENT;
}

int kerf_sim_proc_detach_all(kerf_sim *st, pid_t pid)
{
        int rc, n = 0;
        if (!st || pid <= 0)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        for (unsigned i = 0; i < KERF_SIM_MAX_PROCS; i++) {
                if (st->f->slot[i].pid == pid) {
                        kerf__sim_clear_slot(&st->f->slot[i]);
                        n++;
                }
        }
        kerf__sim_unlock(st);
        return n;
}

int kerf_sim_reclaim(kerf_sim *st)
{
        int rc;
        if (!st)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        rc = kerf__sim_reclaim_locked(st);
        kerf__sim_unlock(st);
        return rc;
}

int kerf_sim_mem_charge(kerf_sim *st, pid_t pid, kerf_sim_target t, uint64_t bytes)
{
        int rc;
        struct sim_slot *s;
        if (!st || pid <= 0)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        if ((rc = target_usable(st, t)) < 0)
                goto out;
        uint64_t cap = kerf__sim_capacity(st, (unsigned)t.gpu, t.gi);
        for (int pass = 0; pass < 2; pass++) {
                uint64_t used = kerf__sim_used(st, (unsigned)t.gpu, t.gi, -1, NULL);
                rc = (used > cap || bytes > cap - used) ? -ENOMEM : 0;
                if (rc == 0 || pass == 1 || kerf__sim_reclaim_locked(st) == 0)
                        break;
        }
        if (rc < 0)
                goto out;
        if ((rc = slot_get(st, pid, t, &s)) < 0)
                goto out;
        s->mem += bytes;
out:
        kerf__sim_unlock(st);
        return rc;
}

int kerf_sim_mem_uncharge(kerf_sim *st, pid_t pid, kerf_sim_target t, uint64_t bytes)
{
        int rc;
        if (!st || pid <= 0)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        struct sim_slot *s = slot_find(st, pid, t);
        if (!s)
                rc = -ENOENT;
        else if (bytes > s->mem)
                rc = -EINVAL;
        else
                s->mem -= bytes;
        kerf__sim_unlock(st);
        return rc;
}

static void snap_push(struct sim_slot *s, uint64_t ts_us, uint64_t ns)
{
        s->snap[s->snap_n % SIM_SNAPS] = (struct sim_snap){ts_us, ns};
        s->snap_n++;
}

int kerf_sim_engine_account(kerf_sim *st, pid_t pid, kerf_sim_target t, uint64_t busy_ns)
{
        int rc;
        struct sim_slot *s;
        if (!st || pid <= 0)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        if ((rc = kerf__sim_target_check(st, t)) < 0)
                goto out;
        if (!(s = slot_find(st, pid, t)) && (rc = target_usable(st, t)) < 0)
                goto out;
        if (!s && (rc = slot_get(st, pid, t, &s)) < 0)
                goto out;
        uint64_t now = kerf_sim_now_us();
        const struct sim_snap *newest = &s->snap[(s->snap_n - 1) % SIM_SNAPS];
        /* The device time was used just before now: [now - busy, now]. If that starts an idle
         * gap's length after the last activity, record the gap's ends, so utilisation windows
         * that start inside the gap see the counter flat there instead of interpolating
         * across it. */
        uint64_t flat = s->last_us > newest->ts_us ? s->last_us : newest->ts_us;
        uint64_t start = now - busy_ns / 1000ULL;
        if (busy_ns / 1000ULL > now || start < flat)
                start = flat;
        if (start >= flat + SIM_SNAP_MIN_US) {
                if (newest->ns != s->engine_ns)
                        snap_push(s, s->last_us, s->engine_ns);
                snap_push(s, start, s->engine_ns);
                newest = &s->snap[(s->snap_n - 1) % SIM_SNAPS];
        }
        s->engine_ns += busy_ns;
        s->last_us = now;
        if (now >= newest->ts_us + SIM_SNAP_MIN_US)
                snap_push(s, now, s->engine_ns);
        rc = 0;
out:
        kerf__sim_unlock(st);
        return rc;
}

static void fill_proc(const struct sim_slot *s, kerf_sim_proc_info *p)
{
        memset(p, 0, sizeof(*p));
        p->pid = s->pid;
        p->target = (kerf_sim_target){s->gpu, s->gi, s->ci};
        memcpy(p->comm, s->comm, sizeof(p->comm));
        p->comm[sizeof(p->comm) - 1] = '\0';
        p->mem_bytes = s->mem;
        p->engine_ns = s->engine_ns;
        p->attach_us = s->attach_us;
        p->last_active_us = s->last_us;
}

int kerf_sim_proc_list(kerf_sim *st, int gpu, int gi, kerf_sim_proc_info *out, unsigned cap,
                       unsigned *ret_n)
{
        int rc;
        if (!st || !ret_n || (cap && !out))
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        kerf__sim_reclaim_locked(st);
        unsigned n = 0;
        for (unsigned i = 0; i < KERF_SIM_MAX_PROCS; i++) {
                const struct sim_slot *s = &st->f->slot[i];
                if (s->pid <= 0 || (gpu >= 0 && s->gpu != gpu) ||
                    (gpu >= 0 && gi >= 0 && s->gi != gi))
                        continue;
                if (n < cap)
                        fill_proc(s, &out[n]);
                n++;
        }
        kerf__sim_unlock(st);
        *ret_n = n;
        return 0;
}

/* The engine-time counter of a slot at time t (us), from its snapshots and its newest
 * activity (last_us, engine_ns): linear between known points, flat after the last one, 0
 * before attach. Times before the oldest snapshot kept are unknown: *t is moved up to it. */
static uint64_t counter_at(const struct sim_slot *s, uint64_t *t)
{
        unsigned kept = s->snap_n < SIM_SNAPS ? s->snap_n : SIM_SNAPS;
        const struct sim_snap *oldest = &s->snap[(s->snap_n - kept) % SIM_SNAPS];
        if (*t < oldest->ts_us) {
                if (s->snap_n > SIM_SNAPS)
                        *t = oldest->ts_us; /* history lost: the window shrinks */
                else
                        return 0; /* before attach (the first snapshot is the attach time) */
        }
        struct sim_snap prev = *oldest;
        for (unsigned k = 1; k <= kept; k++) {
                struct sim_snap next = k < kept ? s->snap[(s->snap_n - kept + k) % SIM_SNAPS]
                                                : (struct sim_snap){s->last_us, s->engine_ns};
                if (next.ts_us < prev.ts_us || next.ns < prev.ns)
                        continue; /* the live point when it is older than the newest snapshot */
                if (*t < next.ts_us) {
                        if (*t <= prev.ts_us)
                                return prev.ns;
                        return prev.ns +
                               (uint64_t)((double)(next.ns - prev.ns) * (double)(*t - prev.ts_us) /
                                          (double)(next.ts_us - prev.ts_us));
                }
                prev = next;
        }
        return s->engine_ns;
}

/* Engine busy share of a slot over (from, to], in percent (0..100); at least 1 when it ran at
 * all (NVML returns samples of processes with non-zero utilisation). */
static unsigned pct_window(const struct sim_slot *s, uint64_t from, uint64_t to)
{
        uint64_t end = to;
        uint64_t c1 = counter_at(s, &end);
        uint64_t c0 = counter_at(s, &from);
        if (to <= from || c1 < c0)
                return 0;
        uint64_t wall_us = to - from, busy_us = (c1 - c0) / 1000ULL;
        uint64_t pct = (busy_us * 100ULL + wall_us / 2) / wall_us;
        if (pct == 0 && c1 > c0)
                pct = 1;
        return pct > 100 ? 100 : (unsigned)pct;
}

int kerf_sim_util_samples(kerf_sim *st, unsigned gpu, uint64_t since_us, kerf_sim_util_sample *out,
                          unsigned cap, unsigned *ret_n)
{
        int rc;
        if (!st || !ret_n || (cap && !out))
                return -EINVAL;
        if (gpu >= st->f->n_gpus)
                return -ENOENT;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        kerf__sim_reclaim_locked(st);
        uint64_t now = kerf_sim_now_us();
        unsigned n = 0;
        for (unsigned i = 0; i < KERF_SIM_MAX_PROCS; i++) {
                const struct sim_slot *s = &st->f->slot[i];
                if (s->pid <= 0 || s->gpu != (int)gpu || s->last_us == 0 || s->last_us <= since_us)
                        continue;
                /* The newest sample of the process: taken at its last activity, covering the
                 * sample period before it (NVML: "samples since lastSeenTimeStamp", each over
                 * the last sample period), never the idle time before or after. */
                uint64_t ts = s->last_us > now ? now : s->last_us;
                uint64_t from = ts > KERF_SIM_UTIL_PERIOD_US ? ts - KERF_SIM_UTIL_PERIOD_US : 0;
                if (n < cap)
                        out[n] = (kerf_sim_util_sample){
                            s->pid, {s->gpu, s->gi, s->ci}, ts, pct_window(s, from, ts)};
                n++;
        }
        kerf__sim_unlock(st);
        *ret_n = n;
        return 0;
}

int kerf_sim_util_gpu(kerf_sim *st, unsigned gpu, unsigned window_ms, unsigned *ret_pct)
{
        int rc;
        if (!st || !ret_pct || window_ms == 0)
                return -EINVAL;
        if (gpu >= st->f->n_gpus)
                return -ENOENT;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        uint64_t now = kerf_sim_now_us();
        uint64_t since = now - (uint64_t)window_ms * 1000ULL;
        unsigned sum = 0;
        for (unsigned i = 0; i < KERF_SIM_MAX_PROCS; i++) {
                const struct sim_slot *s = &st->f->slot[i];
                if (s->pid > 0 && s->gpu == (int)gpu && s->last_us)
                        sum += pct_window(s, since, now);
        }
        kerf__sim_unlock(st);
        *ret_pct = sum > 100 ? 100 : sum;
        return 0;
}
