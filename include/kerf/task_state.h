/* SPDX-License-Identifier: Apache-2.0 */
/* task_state.h - a task's lifecycle states and end reasons, and their one name table */
#ifndef KERF_TASK_STATE_H
#define KERF_TASK_STATE_H

#include <stdbool.h>

/* Where a task is in its life. The scheduler holds live tasks only (pending, starting,
 * running); kerfd's records and the API also carry the three ended states. */
typedef enum kerf_task_state {
        KERF_TASK_PENDING = 0,
        KERF_TASK_STARTING, /* placed; its start (a MIG instance, the fork) not yet done */
        KERF_TASK_RUNNING,
        KERF_TASK_SUCCEEDED,
        KERF_TASK_FAILED,
        KERF_TASK_CANCELLED,
        KERF_TASK_STATE_COUNT
} kerf_task_state;

/* Why an ended task ended (docs/DAEMON.md "How a task ends"). */
typedef enum kerf_end_reason {
        KERF_END_NONE = 0,      /* "": not ended */
        KERF_END_EXIT,          /* its process exited 0, or an attached process ended/detached */
        KERF_END_FAILURE,       /* non-zero exit, a signal, a failed start */
        KERF_END_CANCEL,        /* cancelled by a user or an admin */
        KERF_END_TIMEOUT,       /* max_runtime_s reached */
        KERF_END_IDLE,          /* idle_timeout_s without GPU activity */
        KERF_END_PREEMPTED,     /* preempted and not requeued */
        KERF_END_FAULT,         /* a device fault on its unit */
        KERF_END_LEASE_EXPIRED, /* an attached task's lease not renewed */
        KERF_END_REASON_COUNT
} kerf_end_reason;

/* The API's word for a live task held by kerf suspend (or frozen by a preemption): shown in
 * place of running/pending; not a stored state (the store keeps running/pending). */
#define KERF_TASK_SUSPENDED_WORD "suspended"

/* Name <-> value. _name() returns a static string ("?" if out of range); _parse() returns the
 * value, or -EINVAL for NULL or an unknown word (exact, case-sensitive: these are the words the
 * store and the API carry). States: pending starting running succeeded failed cancelled.
 * End reasons: "" (none) exit failure cancel timeout idle preempted fault lease_expired. */
const char *kerf_task_state_name(kerf_task_state s);
int kerf_task_state_parse(const char *s);
const char *kerf_end_reason_name(kerf_end_reason r);
int kerf_end_reason_parse(const char *s);

/* True for succeeded, failed and cancelled. */
bool kerf_task_state_ended(kerf_task_state s);

/* The state a task that stops for `r` ends in: cancelled for cancel, succeeded for exit,
 * failed for every other reason. */
kerf_task_state kerf_end_reason_state(kerf_end_reason r);

#endif /* KERF_TASK_STATE_H */
