/* SPDX-License-Identifier: Apache-2.0 */
/* task_state.c - names of the task states and end reasons (include/kerf/task_state.h) */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "kerf/task_state.h"
#include "nametab.h"

static const char *const state_names[KERF_TASK_STATE_COUNT] = {
    [KERF_TASK_PENDING] = "pending", [KERF_TASK_STARTING] = "starting",
    [KERF_TASK_RUNNING] = "running", [KERF_TASK_SUCCEEDED] = "succeeded",
    [KERF_TASK_FAILED] = "failed",   [KERF_TASK_CANCELLED] = "cancelled",
};

static const char *const end_names[KERF_END_REASON_COUNT] = {
    [KERF_END_NONE] = "",
    [KERF_END_EXIT] = "exit",
    [KERF_END_FAILURE] = "failure",
    [KERF_END_CANCEL] = "cancel",
    [KERF_END_TIMEOUT] = "timeout",
    [KERF_END_IDLE] = "idle",
    [KERF_END_PREEMPTED] = "preempted",
    [KERF_END_FAULT] = "fault",
    [KERF_END_LEASE_EXPIRED] = "lease_expired",
};

static const char *name_of(const char *const *names, size_t n, unsigned v)
{
        return kerf__nametab_name(names, n, v);
}

/* stored words are matched exactly */
static int parse_of(const char *const *names, size_t n, const char *s)
{
        return kerf__nametab_parse(names, n, s, true);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

const char *kerf_task_state_name(kerf_task_state s)
{
        return name_of(state_names, N(state_names), (unsigned)s);
}

int kerf_task_state_parse(const char *s)
{
        return parse_of(state_names, N(state_names), s);
}

const char *kerf_end_reason_name(kerf_end_reason r)
{
        return name_of(end_names, N(end_names), (unsigned)r);
}

int kerf_end_reason_parse(const char *s)
{
        return parse_of(end_names, N(end_names), s);
}

bool kerf_task_state_ended(kerf_task_state s)
{
        return s == KERF_TASK_SUCCEEDED || s == KERF_TASK_FAILED || s == KERF_TASK_CANCELLED;
}

kerf_task_state kerf_end_reason_state(kerf_end_reason r)
{
        if (r == KERF_END_CANCEL)
                return KERF_TASK_CANCELLED;
        return r == KERF_END_EXIT ? KERF_TASK_SUCCEEDED : KERF_TASK_FAILED;
}
