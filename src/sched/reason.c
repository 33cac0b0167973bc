/* SPDX-License-Identifier: Apache-2.0 */
/* reason.c - reason codes and their words */
#include <stdio.h>

#include "internal.h"

static const char *const why_names[KERF_WHY_COUNT] = {
    [KERF_WHY_NONE] = "none",
    [KERF_WHY_PLACED] = "placed",
    [KERF_WHY_QUOTA] = "quota",
    [KERF_WHY_COHORT] = "cohort",
    [KERF_WHY_NO_FIT] = "no_fit",
    [KERF_WHY_FRAGMENTED] = "fragmented",
    [KERF_WHY_NODE_RESOURCES] = "node_resources",
    [KERF_WHY_QUEUE_ORDER] = "queue_order",
    [KERF_WHY_FAIR_SHARE] = "fair_share",
    [KERF_WHY_MIG_PENDING] = "mig_pending",
    [KERF_WHY_PREEMPTED] = "preempted",
    [KERF_WHY_RECLAIMED] = "reclaimed",
    [KERF_WHY_FAULT] = "fault",
    [KERF_WHY_BACKEND_REFUSED] = "backend_refused",
    [KERF_WHY_NOT_TRIED] = "not_tried",
};

const char *kerf_why_name(kerf_why w)
{
        return (unsigned)w < KERF_WHY_COUNT ? why_names[w] : "?";
}

void kerf__reason_set(kerf_reason *r, kerf_why code, uint64_t other, const char *fmt, ...)
{
        va_list ap;
        r->code = code;
        r->other_task = other;
        va_start(ap, fmt);
        vsnprintf(r->text, sizeof(r->text), fmt, ap);
        va_end(ap);
}

static const char *const task_state_names[KERF_TASK_STATE_COUNT] = {"pending", "starting",
                                                                    "running"};

const char *kerf_task_state_name(kerf_task_state st)
{
        return (unsigned)st < KERF_TASK_STATE_COUNT ? task_state_names[st] : "?";
}

static const char *const dec_names[KERF_DEC_KIND_COUNT] = {"start", "preempt", "mig_create",
                                                           "mig_destroy", "gpu_mode"};

const char *kerf_decision_kind_name(kerf_decision_kind k)
{
        return (unsigned)k < KERF_DEC_KIND_COUNT ? dec_names[k] : "?";
}

static const char *const res_names[KERF_RES_COUNT] = {"gpus", "mem", "compute", "mig_slices"};

const char *kerf_res_name(kerf_res r)
{
        return (unsigned)r < KERF_RES_COUNT ? res_names[r] : "?";
}
