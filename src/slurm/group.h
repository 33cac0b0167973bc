/* SPDX-License-Identifier: Apache-2.0 */
/* group.h - the tasks of a step on one node that share one device set share one kerf task:
 * a table in memory shared between slurmstepd and its forked task children */
#ifndef KERF_SPANK_GROUP_H
#define KERF_SPANK_GROUP_H

#include <stdint.h>

/* Local tasks of one step on one node the table holds (S_TASK_ID 0..MAX-1). */
#define KERF_SPANK_MAX_TASKS 1024
/* The longest group key (the device set: CUDA_VISIBLE_DEVICES and the route). */
#define KERF_SPANK_KEY_MAX 320

typedef struct kerf_spank_groups kerf_spank_groups;

/* What a task child does after kerf_spank_group_enter. */
enum { KERF_SPANK_LEAD = 0, KERF_SPANK_JOIN = 1 };

/* Maps the table (MAP_SHARED | MAP_ANONYMOUS, zeroed) so that children forked afterwards see
 * the same memory. Returns NULL with errno set when mmap fails. Release with
 * kerf_spank_groups_free (in the process that mapped it; children inherit the mapping). */
kerf_spank_groups *kerf_spank_groups_new(void);

/* Unmaps the table; accepts NULL; returns NULL. */
kerf_spank_groups *kerf_spank_groups_free(kerf_spank_groups *gs);

/* In a task child: local task `task` joins the group of the device set `key` (the same key
 * for every task that sees the same devices; a key no other task uses gives a group of one).
 * The first task of a key is its leader: returns KERF_SPANK_LEAD, and the caller attaches and
 * then calls kerf_spank_group_publish. Another task waits up to wait_ms for the leader's
 * answer: returns KERF_SPANK_JOIN with the leader's kerf task id in *ret_id (the caller joins
 * it). A group whose last task ended and whose kerf task was detached is led again by the
 * next task that enters it. Errors (*ret_id untouched): -EINVAL (task out of
 * 0..KERF_SPANK_MAX_TASKS-1, a key empty or of KERF_SPANK_KEY_MAX bytes or more, the task
 * entered already), -ENOSPC (table full), the leader's error when its attach failed (what it
 * published), -ESRCH (the leader died before it answered), -ETIMEDOUT (no answer within
 * wait_ms). A task counts as a member of its group from here on, also when this fails: call
 * kerf_spank_group_leave when it exits. Safe in concurrent processes (C11 atomics). */
int kerf_spank_group_enter(kerf_spank_groups *gs, int task, const char *key, long wait_ms,
                           uint64_t *ret_id);

/* In the leader's child: err 0 and its attach gave kerf task `id` (> 0); or err < 0, the
 * attach failed: the tasks of the group waiting or entering later get err from
 * kerf_spank_group_enter (-ECANCELED when err is not negative or id is 0). Ignored for a task
 * that is not the leader of its group now. */
void kerf_spank_group_publish(kerf_spank_groups *gs, int task, uint64_t id, int err);

/* Called with each kerf task id the table hands back; `arg` is the caller's. */
typedef void kerf_spank_group_fn(uint64_t id, void *arg);

/* In slurmstepd, when local task `task` exited: it leaves its group. When it was the last
 * member and the group holds a kerf task, calls detach(id, arg) once (other tasks entering
 * meanwhile wait; afterwards the next one leads a new attach). Returns 1 when detach was
 * called, 0 otherwise (a task that never entered, or other members left). */
int kerf_spank_group_leave(kerf_spank_groups *gs, int task, kerf_spank_group_fn *detach, void *arg);

/* In slurmstepd: calls fn once for every distinct kerf task the table holds now (the lease
 * renewal). Safe while children enter and leave. */
void kerf_spank_groups_each(kerf_spank_groups *gs, kerf_spank_group_fn *fn, void *arg);

/* In slurmstepd at the step's end: calls detach once for each kerf task still held (members
 * whose exit was not seen), and closes those groups. Returns how many. */
int kerf_spank_groups_close(kerf_spank_groups *gs, kerf_spank_group_fn *detach, void *arg);

#endif /* KERF_SPANK_GROUP_H */
