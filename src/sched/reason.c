/* SPDX-License-Identifier: Apache-2.0 */
/* reason.c - reason codes and their words */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "kerf/units.h"

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
    [KERF_WHY_HELD] = "held",
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

sdetail *kerf__detail(sdetail *d, smsg msg)
{
        if (!d)
                return NULL;
        memset(d, 0, sizeof(*d));
        d->msg = (uint8_t)msg;
        d->route = KERF_UNIT_KIND_COUNT;
        return d;
}

/* Formats an amount of resource r for people: memory as kerf_format_size writes it (the form
 * every reader of a size accepts), the rest as numbers. */
static const char *fmt_res(unsigned r, uint64_t v, char *buf, size_t len)
{
        if (v == KERF_UNLIMITED)
                snprintf(buf, len, "unlimited");
        else if (r == KERF_RES_MEM)
                kerf_format_size(v, buf, len);
        else if (r == KERF_RES_COMPUTE)
                snprintf(buf, len, "%llu%% compute", (unsigned long long)v);
        else
                snprintf(buf, len, "%llu %s", (unsigned long long)v, kerf_res_name(r));
        return buf;
}

static void detail_words(const kerf_sched *s, const sdetail *d, char *buf, size_t len)
{
        unsigned long long a = d->a, b = d->b, c = d->c;
        const char *tn = d->tenant ? d->tenant->name : "?";
        char x[48], y[48], z[48];
        _Static_assert(sizeof(x) >= KERF_UNITS_BUF, "fmt_res and kerf_format_size buffers");
        switch ((smsg)d->msg) {
        case MSG_SHARE_NO_MODEL:
                snprintf(buf, len, "no healthy GPU of an allowed model can take a %s unit",
                         kerf_unit_kind_name((kerf_unit_kind)d->a));
                break;
        case MSG_SHARE_NODE:
                snprintf(buf, len, "GPUs have room but their nodes lack CPU or host memory");
                break;
        case MSG_SHARE_FRAGMENTED:
                snprintf(buf, len, "%s free in total but at most %s on any one GPU",
                         kerf_format_size(a, x, sizeof(x)), kerf_format_size(b, y, sizeof(y)));
                break;
        case MSG_SHARE_NO_FIT:
                snprintf(buf, len, "no GPU has %s and %llu%% compute free",
                         kerf_format_size(a, x, sizeof(x)), b);
                break;
        case MSG_SHARE_MULTI:
                snprintf(buf, len, "shares are single-GPU");
                break;
        case MSG_WHOLE_NODE:
                snprintf(buf, len, "free GPUs exist but their nodes lack CPU or host memory");
                break;
        case MSG_WHOLE_FRAGMENTED:
                snprintf(buf, len,
                         "%llu whole GPUs free in the fleet but at most %llu on one node; %llu "
                         "needed on one node",
                         a, b, c);
                break;
        case MSG_WHOLE_NO_FIT:
                snprintf(buf, len, "%llu whole GPU%s needed, %llu free", a, a > 1 ? "s" : "", b);
                break;
        case MSG_MIG_NONE:
                snprintf(buf, len, "no healthy MIG-enabled GPU offers a profile that fits");
                break;
        case MSG_MIG_NODE:
                snprintf(buf, len, "MIG GPUs have room but their nodes lack CPU or host memory");
                break;
        case MSG_MIG_FRAGMENTED:
                snprintf(buf, len, "no free MIG placement for the profile%s",
                         a ? " and no idle instances to reclaim" : "");
                break;
        case MSG_MIG_PIN:
                if (b)
                        snprintf(buf, len,
                                 "the named MIG instance (unit %llu) is held by task %llu", a, b);
                else
                        snprintf(buf, len,
                                 "the named MIG instance (unit %llu) is gone, faulted or draining",
                                 a);
                break;
        case MSG_UNKNOWN_ROUTE:
                snprintf(buf, len, "unknown route");
                break;
        case MSG_QUOTA:
                snprintf(buf, len, "tenant %s would use %s, over its quota of %s", tn,
                         fmt_res(d->res, d->a, x, sizeof(x)), fmt_res(d->res, d->b, y, sizeof(y)));
                break;
        case MSG_QUOTA_BORROW:
                snprintf(buf, len, "tenant %s would use %s, over its quota %s + borrowing limit %s",
                         tn, fmt_res(d->res, d->a, x, sizeof(x)),
                         fmt_res(d->res, d->b, y, sizeof(y)), fmt_res(d->res, d->c, z, sizeof(z)));
                break;
        case MSG_COHORT:
                snprintf(buf, len,
                         "tenant %s needs to borrow %s from cohort %s, which lends only %s now", tn,
                         fmt_res(d->res, d->a, x, sizeof(x)),
                         d->cohort >= 0 && (size_t)d->cohort < s->n_cohorts ? s->cohorts[d->cohort]
                                                                            : "?",
                         fmt_res(d->res, d->b, y, sizeof(y)));
                break;
        case MSG_COHORT_LENT:
                snprintf(buf, len,
                         "tenant %s needs back %s of the quota it lends to cohort %s, which other "
                         "members borrow",
                         tn, fmt_res(d->res, d->a, x, sizeof(x)),
                         d->cohort >= 0 && (size_t)d->cohort < s->n_cohorts ? s->cohorts[d->cohort]
                                                                            : "?");
                break;
        case MSG_NO_ROUTE:
                snprintf(buf, len, "no route can ever hold this request");
                break;
        case MSG_BEHIND_HEAD:
                if (b == UINT64_MAX)
                        snprintf(buf, len,
                                 "fits now, but waits behind task %llu of its queue, which has no "
                                 "expected start (it waits for tasks without max_runtime_s); "
                                 "starting could delay it",
                                 a);
                else
                        snprintf(buf, len,
                                 "fits now, but waits behind task %llu of its queue, expected to "
                                 "start in %llu s; running up to %llu s it could delay it",
                                 a, b, c);
                break;
        case MSG_NONE:
        default:
                snprintf(buf, len, "%s", "");
                break;
        }
}

void kerf__detail_format(const kerf_sched *s, const sdetail *d, char *buf, size_t len)
{
        if (d->route >= KERF_UNIT_KIND_COUNT) {
                detail_words(s, d, buf, len);
                return;
        }
        char w[KERF_TEXT_LEN];
        detail_words(s, d, w, sizeof(w));
        snprintf(buf, len, "%s: %.240s", kerf_unit_kind_name((kerf_unit_kind)d->route), w);
}

void kerf__task_reason(const kerf_sched *s, const stask *t, kerf_reason *ret)
{
        ret->code = t->reason.code;
        ret->other_task = t->reason.other_task;
        if (t->reason.text[0] == 0 && t->wait.msg != MSG_NONE)
                kerf__detail_format(s, &t->wait, ret->text, sizeof(ret->text));
        else
                memcpy(ret->text, t->reason.text, sizeof(ret->text));
        if (t->state == KERF_TASK_PENDING &&
            (ret->code == KERF_WHY_NO_FIT || ret->code == KERF_WHY_FRAGMENTED))
                kerf__drain_note(s, t, ret->text, sizeof(ret->text));
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
