/* SPDX-License-Identifier: Apache-2.0 */
/* poc_sw.h - helpers shared by the software-route tests (poc_sw.c, poc_sw34.c) */
#ifndef KERF_POC_SW_H
#define KERF_POC_SW_H

#include "poc.h"

/* A submit body for a slice (route slice, inference, tier high, not preemptible); caller
 * decrefs. */
json_t *sw_slice(const char *tenant, unsigned long long mem, int compute, int priority);
/* running or suspended */
bool sw_is_live(const poc_task *t);
/* Polls t until it ends (or timeout_ms); returns a copy of the last live object that carried
 * `usage` (caller decrefs), NULL when none was seen. */
json_t *sw_follow(poc_ctx *p, poc_task *t, int timeout_ms);
/* The same for n tasks at once (they run side by side): live[i] for t[i]. */
void sw_follow_all(poc_ctx *p, poc_task *t, size_t n, int timeout_ms, json_t **live);
/* A number field, NaN when absent. */
double sw_num(const json_t *o, const char *key);
/* A string field, "" when absent. */
const char *sw_str(const json_t *o, const char *key);
/* Sets tenant's quota of `res` (memory, gpus, compute) to nominal (stolen), no borrowing. */
int sw_set_quota(poc_ctx *p, const char *tenant, const char *res, json_t *nominal);
/* memory, gpus and compute back to unlimited */
void sw_quota_reset(poc_ctx *p, const char *tenant);
/* Cites the audit records of the task ("task:ID"). */
void sw_cite(poc_ctx *p, json_t *rec, const poc_task *t);
/* The device's view of a task over a window: the mean of its distinct device_util samples
 * (NVML per-process SM %, as kerfd last polled it), the first one seen left out (it may cover
 * time before the window). */
typedef struct sw_devview {
        int64_t last_ms; /* sampled_ms of the newest sample taken */
        bool skipped;    /* the first one was seen (and left out) */
        unsigned n;
        double sum;
} sw_devview;
void sw_devview_add(sw_devview *v, const poc_task *t);
/* The kernel length argument ("1000") into buf. */
char *sw_kus(const poc_ctx *p, char *buf, size_t cap);

#endif /* KERF_POC_SW_H */
