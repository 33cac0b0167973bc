/* SPDX-License-Identifier: Apache-2.0 */
/* group.c - one kerf task per device set of a step on a node: the group table the task
 * children of slurmstepd claim entries of with compare-and-swap (docs/CLUSTER.md "Several
 * tasks on one node")
 *
 * An entry is a group: its key (the device set), and one atomic word with the group's state
 * in the low byte and its member count above. The states:
 *   ATTACHING  the leader attaches; members entering wait for its answer
 *   READY      the leader published the kerf task id; members entering join it
 *   FAILED     the leader's attach failed; members entering fail with its error
 *   CLOSING    slurmstepd detaches the kerf task (the last member left); entering waits
 *   CLOSED     detached; the next member to enter leads a new attach
 * Members are counted from the moment they enter until slurmstepd sees their task exit, so a
 * kerf task is detached only when no task of its group runs or is about to join. Entries are
 * never freed during a step: a step has at most KERF_SPANK_MAX_TASKS groups. */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "group.h"

/* shared between processes: the atomics must not fall back to a lock in one address space */
_Static_assert(ATOMIC_LONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
               "64-bit and 32-bit atomics must be lock-free to work across processes");

enum { ATTACHING = 0, READY, FAILED, CLOSING, CLOSED };
#define STATE(w)   ((unsigned)((w)&0xff))
#define MEMBERS(w) ((w) >> 8)
#define ONE        ((uint64_t)1 << 8)
#define POLL_NS    (2 * 1000000L)

struct entry {
        _Atomic uint64_t hash;   /* 0: free; else the key's hash (never 0) */
        _Atomic int named;       /* 1 once text holds the key */
        _Atomic int leader_task; /* the leader's local task + 1 while it attaches */
        _Atomic int leader_pid;  /* its process: a dead leader does not keep others waiting */
        _Atomic uint64_t word;   /* STATE | MEMBERS << 8 */
        _Atomic uint64_t id;     /* the kerf task, valid in READY and CLOSING */
        _Atomic int err;         /* the leader's error, valid in FAILED */
        char text[KERF_SPANK_KEY_MAX];
};

struct kerf_spank_groups {
        _Atomic int member[KERF_SPANK_MAX_TASKS]; /* entry index + 1 of each local task */
        struct entry e[KERF_SPANK_MAX_TASKS];
};

kerf_spank_groups *kerf_spank_groups_new(void)
{
        void *p = mmap(NULL, sizeof(kerf_spank_groups), PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        return p == MAP_FAILED ? NULL : p; /* anonymous memory is zeroed: all entries free */
}

kerf_spank_groups *kerf_spank_groups_free(kerf_spank_groups *gs)
{
        if (gs)
                munmap(gs, sizeof(*gs));
        return NULL;
}

static uint64_t key_hash(const char *key)
{
        uint64_t h = 1469598103934665603ull; /* FNV-1a */
        for (const unsigned char *p = (const unsigned char *)key; *p; p++)
                h = (h ^ *p) * 1099511628211ull;
        return h ? h : 1;
}

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap(void)
{
        struct timespec ts = {0, POLL_NS};
        nanosleep(&ts, NULL);
}

static int lead(kerf_spank_groups *gs, struct entry *e, int task, size_t idx)
{
        atomic_store(&e->leader_pid, (int)getpid());
        atomic_store(&e->leader_task, task + 1);
        atomic_store(&gs->member[task], (int)idx + 1);
        return KERF_SPANK_LEAD;
}

/* A member of entry `idx` that is not (yet) its leader: counts itself in, then waits for the
 * leader's answer. */
static int follow(kerf_spank_groups *gs, size_t idx, int task, int64_t deadline, uint64_t *ret_id)
{
        struct entry *e = &gs->e[idx];
        uint64_t w = atomic_load(&e->word);
        for (;;) {
                unsigned st = STATE(w);
                if (st == CLOSED) {
                        /* detached: this task leads a new attach of the same devices */
                        if (atomic_compare_exchange_weak(&e->word, &w, (uint64_t)ATTACHING | ONE))
                                return lead(gs, e, task, idx);
                        continue;
                }
                if (st == CLOSING) {
                        if (now_ms() >= deadline)
                                return -ETIMEDOUT;
                        nap();
                        w = atomic_load(&e->word);
                        continue;
                }
                if (atomic_compare_exchange_weak(&e->word, &w, w + ONE))
                        break;
        }
        atomic_store(&gs->member[task], (int)idx + 1);
        for (;;) {
                w = atomic_load(&e->word);
                if (STATE(w) == READY) {
                        *ret_id = atomic_load(&e->id);
                        return KERF_SPANK_JOIN;
                }
                if (STATE(w) == FAILED)
                        return atomic_load(&e->err);
                /* ATTACHING (CLOSING cannot come while this task is a member) */
                int pid = atomic_load(&e->leader_pid);
                if (pid > 0 && kill(pid, 0) < 0 && errno == ESRCH &&
                    STATE(atomic_load(&e->word)) == ATTACHING)
                        return -ESRCH;
                if (now_ms() >= deadline)
                        return -ETIMEDOUT;
                nap();
        }
}

int kerf_spank_group_enter(kerf_spank_groups *gs, int task, const char *key, long wait_ms,
                           uint64_t *ret_id)
{
        size_t klen = key ? strlen(key) : 0;
        int64_t deadline = now_ms() + (wait_ms > 0 ? wait_ms : 0);

        if (!gs || task < 0 || task >= KERF_SPANK_MAX_TASKS || !klen ||
            klen >= KERF_SPANK_KEY_MAX || atomic_load(&gs->member[task]) != 0)
                return -EINVAL;
        uint64_t h = key_hash(key);
        for (size_t i = 0; i < KERF_SPANK_MAX_TASKS; i++) {
                size_t idx = (size_t)((h + i) % KERF_SPANK_MAX_TASKS);
                struct entry *e = &gs->e[idx];
                uint64_t cur = 0;
                if (atomic_compare_exchange_strong(&e->hash, &cur, h)) {
                        /* a free entry: this task's group, and it leads it */
                        memcpy(e->text, key, klen + 1);
                        atomic_fetch_add(&e->word, ONE); /* ATTACHING, one member */
                        lead(gs, e, task, idx);
                        atomic_store(&e->named, 1);
                        return KERF_SPANK_LEAD;
                }
                if (cur != h)
                        continue;
                /* the same hash: the claimer writes its key right after its claim */
                while (!atomic_load(&e->named)) {
                        if (now_ms() >= deadline)
                                return -ETIMEDOUT;
                        nap();
                }
                if (strcmp(e->text, key) != 0)
                        continue; /* another device set with the same hash */
                return follow(gs, idx, task, deadline, ret_id);
        }
        return -ENOSPC;
}

void kerf_spank_group_publish(kerf_spank_groups *gs, int task, uint64_t id, int err)
{
        if (!gs || task < 0 || task >= KERF_SPANK_MAX_TASKS)
                return;
        int m = atomic_load(&gs->member[task]);
        if (m <= 0)
                return;
        struct entry *e = &gs->e[m - 1];
        if (atomic_load(&e->leader_task) != task + 1)
                return;
        bool ok = err == 0 && id != 0;
        if (ok)
                atomic_store(&e->id, id);
        else
                atomic_store(&e->err, err < 0 ? err : -ECANCELED);
        uint64_t w = atomic_load(&e->word);
        while (STATE(w) == ATTACHING &&
               !atomic_compare_exchange_weak(&e->word, &w,
                                             (w & ~(uint64_t)0xff) | (ok ? READY : FAILED)))
                ;
}

/* Ends a group that held kerf task e->id; the caller moved it to CLOSING. */
static void close_entry(struct entry *e, kerf_spank_group_fn *detach, void *arg)
{
        atomic_store(&e->leader_task, 0);
        atomic_store(&e->leader_pid, 0);
        if (detach)
                detach(atomic_load(&e->id), arg);
        atomic_store(&e->word, (uint64_t)CLOSED);
}

int kerf_spank_group_leave(kerf_spank_groups *gs, int task, kerf_spank_group_fn *detach, void *arg)
{
        if (!gs || task < 0 || task >= KERF_SPANK_MAX_TASKS)
                return 0;
        int m = atomic_exchange(&gs->member[task], 0);
        if (m <= 0)
                return 0;
        struct entry *e = &gs->e[m - 1];
        uint64_t w = atomic_load(&e->word);
        for (;;) {
                if (MEMBERS(w) == 0)
                        return 0;
                if (MEMBERS(w) == 1 && STATE(w) == READY) {
                        if (!atomic_compare_exchange_weak(&e->word, &w, (uint64_t)CLOSING))
                                continue;
                        close_entry(e, detach, arg);
                        return 1;
                }
                if (atomic_compare_exchange_weak(&e->word, &w, w - ONE))
                        return 0;
        }
}

void kerf_spank_groups_each(kerf_spank_groups *gs, kerf_spank_group_fn *fn, void *arg)
{
        if (!gs)
                return;
        for (size_t i = 0; i < KERF_SPANK_MAX_TASKS; i++) {
                struct entry *e = &gs->e[i];
                if (!atomic_load(&e->hash))
                        continue;
                if (STATE(atomic_load(&e->word)) != READY)
                        continue;
                uint64_t id = atomic_load(&e->id); /* stored before the state became READY */
                if (id)
                        fn(id, arg);
        }
}

int kerf_spank_groups_close(kerf_spank_groups *gs, kerf_spank_group_fn *detach, void *arg)
{
        int n = 0;
        if (!gs)
                return 0;
        for (size_t i = 0; i < KERF_SPANK_MAX_TASKS; i++) {
                struct entry *e = &gs->e[i];
                uint64_t w = atomic_load(&e->word);
                while (STATE(w) == READY) {
                        if (atomic_compare_exchange_weak(&e->word, &w, (uint64_t)CLOSING)) {
                                close_entry(e, detach, arg);
                                n++;
                                break;
                        }
                }
        }
        return n;
}
