/* SPDX-License-Identifier: Apache-2.0 */
/* poc_sw.c - the software-route tests: SW1 request vs reality, SW2 contention (docs/POC.md) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "poc_sw.h"

#define GIB (1024ULL * 1024 * 1024)

/* ---- helpers shared by SW1-SW4 (poc_sw.h) ---- */

json_t *sw_slice(const char *tenant, unsigned long long mem, int compute, int priority)
{
        return json_pack("{s:s, s:s, s:s, s:I, s:i, s:i, s:b, s:s}", "tenant", tenant, "route",
                         "slice", "workload", "inference", "memory", (json_int_t)mem, "compute",
                         compute, "priority", priority, "preemptible", false, "tier", "high");
}

bool sw_is_live(const poc_task *t)
{
        const char *s = poc_task_state(t);
        return !strcmp(s, "running") || !strcmp(s, "suspended");
}

void sw_follow_all(poc_ctx *p, poc_task *t, size_t n, int timeout_ms, json_t **live)
{
        int64_t end = poc_now_ms() + timeout_ms;
        size_t open = 0;
        for (size_t i = 0; i < n; i++) {
                live[i] = NULL;
                open += t[i].id != 0;
        }
        while (open) {
                open = 0;
                for (size_t i = 0; i < n; i++) {
                        if (!t[i].id || poc_task_get(p, &t[i]) != 200)
                                continue;
                        const char *s = poc_task_state(&t[i]);
                        if (sw_is_live(&t[i]) &&
                            json_is_object(json_object_get(t[i].last, "usage"))) {
                                json_decref(live[i]);
                                live[i] = json_deep_copy(t[i].last);
                        }
                        open +=
                            strcmp(s, "succeeded") && strcmp(s, "failed") && strcmp(s, "cancelled");
                }
                if (poc_now_ms() > end || !poc_sleep_ms(p, 50))
                        break;
        }
}

json_t *sw_follow(poc_ctx *p, poc_task *t, int timeout_ms)
{
        json_t *live;
        sw_follow_all(p, t, 1, timeout_ms, &live);
        return live;
}

const char *sw_str(const json_t *o, const char *key)
{
        const char *s = json_string_value(json_object_get(o, key));
        return s ? s : "";
}

double sw_num(const json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);
        return json_is_number(v) ? json_number_value(v) : NAN;
}

void sw_devview_add(sw_devview *v, const poc_task *t)
{
        double ms = poc_task_num(t, "device_util.sampled_ms", NAN);
        double pct = poc_task_num(t, "device_util.sm_pct", NAN);
        if (isnan(ms) || isnan(pct) || (int64_t)ms == v->last_ms)
                return;
        v->last_ms = (int64_t)ms;
        if (!v->skipped) {
                v->skipped = true;
                return;
        }
        v->n++;
        v->sum += pct;
}

int sw_set_quota(poc_ctx *p, const char *tenant, const char *res, json_t *nominal)
{
        char path[128];
        long st;
        snprintf(path, sizeof(path), "/v1/tenants/%s/quota", tenant);
        json_t *b = json_pack("{s:{s:o, s:i}}", res, "nominal", nominal, "borrow_limit", 0);
        json_decref(poc_call(p, "PUT", path, b, &st));
        json_decref(b);
        return st == 200 ? 0 : -1;
}

void sw_quota_reset(poc_ctx *p, const char *tenant)
{
        char path[128];
        long st;
        snprintf(path, sizeof(path), "/v1/tenants/%s/quota", tenant);
        json_t *b = json_pack("{s:{s:n, s:n}, s:{s:n, s:n}, s:{s:n, s:n}}", "memory", "nominal",
                              "borrow_limit", "gpus", "nominal", "borrow_limit", "compute",
                              "nominal", "borrow_limit");
        json_decref(poc_call(p, "PUT", path, b, &st));
        json_decref(b);
}

void sw_cite(poc_ctx *p, json_t *rec, const poc_task *t)
{
        char obj[48];
        if (!t->id)
                return;
        snprintf(obj, sizeof(obj), "task:%lld", t->id);
        poc_cite_audit(p, rec, obj);
}

char *sw_kus(const poc_ctx *p, char *buf, size_t cap)
{
        snprintf(buf, cap, "%.0f", p->sz.kernel_us);
        return buf;
}

/* ---- SW1: request vs reality ---- */

/* Memory total within 1 % of the slice (the shim reports the cap as the device's memory); the
 * largest allocation within the slice and at least 90 % of what cuMemGetInfo reports free (the
 * context's own memory is charged to the slice; 2 MiB rounding);
 * achieved share at most the limit + 10 points (the limiter's window and a 2-core host's
 * jitter) and at least half the guarantee (a loaded host may give less, never 0). */
#define SW1_MEM_TOL_PCT      1.0
#define SW1_ALLOC_MIN_FRAC   0.90
#define SW1_SHARE_OVER       0.10
#define SW1_SHARE_UNDER_FRAC 0.5

void poc_sw1(poc_ctx *p)
{
        static const struct {
                unsigned long long mem;
                int compute;
        } REQ[] = {{2 * GIB, 10}, {4 * GIB, 20}, {8 * GIB, 30}, {16 * GIB, 50}, {24 * GIB, 70}};
        enum { N = sizeof(REQ) / sizeof(REQ[0]) };
        json_t *rec = poc_record_new(p, "SW1", POC_ROUTE_SOFTWARE, "request vs reality");
        poc_task t[N];
        char win[32], kus[32];
        snprintf(win, sizeof(win), "%.0f", p->sz.probe_s * 1000);
        sw_kus(p, kus, sizeof(kus));
        const char *args[] = {"probe", "--kernel-us", kus,   "--window-ms",
                              win,     "--warmup-ms", "100", NULL};
        for (int i = 0; i < N; i++) {
                json_t *req = sw_slice("poc-a", REQ[i].mem, REQ[i].compute, 0);
                poc_submit(p, rec, &t[i], req, args);
                json_decref(req);
                poc_progress(p, "SW1 probe %d/%d: %llu GiB, %d %% -> task %lld (HTTP %ld)", i + 1,
                             N, REQ[i].mem / GIB, REQ[i].compute, t[i].id, t[i].status);
        }
        int64_t deadline = (int64_t)(p->sz.probe_s * 1000) + 30000;
        json_t *sh = json_array(), *lives[N];
        sw_follow_all(p, t, N, (int)deadline, lives);
        for (int i = 0; i < N; i++) {
                char name[128];
                json_t *live = lives[i];
                json_t *lines = poc_task_lines(p, rec, &t[i]);
                json_t *res = poc_line(lines, "result");
                json_t *u0 = json_array_get(json_object_get(live, "units"), 0);
                json_t *usage = json_object_get(live, "usage");
                double want = (double)REQ[i].mem, share = REQ[i].compute / 100.0;
                double unit_mem = sw_num(u0, "memory"), lim = sw_num(u0, "compute_limit");
                snprintf(name, sizeof(name), "%lluGiB/%d%%: recorded unit memory vs request",
                         REQ[i].mem / GIB, REQ[i].compute);
                poc_measure(rec, name, fabs(unit_mem - want) / want * 100, "%", "<=", 0,
                            "task object units[0].memory");
                snprintf(name, sizeof(name), "%lluGiB/%d%%: probe memory total vs unit",
                         REQ[i].mem / GIB, REQ[i].compute);
                poc_measure(rec, name,
                            fabs(sw_num(res, "memory_total") - unit_mem) / unit_mem * 100, "%",
                            "<=", SW1_MEM_TOL_PCT, "cuMemGetInfo total inside the task");
                snprintf(name, sizeof(name), "%lluGiB/%d%%: largest allocation / unit",
                         REQ[i].mem / GIB, REQ[i].compute);
                double la = sw_num(res, "largest_alloc") / unit_mem;
                poc_measure(rec, name, la, "ratio", "<=", 1.0, "never above the slice");
                snprintf(name, sizeof(name), "%lluGiB/%d%%: largest allocation / reported free",
                         REQ[i].mem / GIB, REQ[i].compute);
                poc_measure(rec, name, sw_num(res, "largest_alloc") / sw_num(res, "memory_free"),
                            "ratio", ">=", SW1_ALLOC_MIN_FRAC,
                            "what cuMemGetInfo calls free is really allocatable (the context "
                            "takes its part of the slice)");
                double got = sw_num(res, "achieved_share");
                if (isfinite(lim) && lim > 0)
                        share = lim / 100.0;
                snprintf(name, sizeof(name), "%lluGiB/%d%%: achieved share", REQ[i].mem / GIB,
                         REQ[i].compute);
                poc_measure(rec, name, got, "share", "<=", share + SW1_SHARE_OVER,
                            "kerf-load probe: kernel time / wall time");
                snprintf(name, sizeof(name), "%lluGiB/%d%%: achieved share (floor)",
                         REQ[i].mem / GIB, REQ[i].compute);
                poc_measure(rec, name, got, "share", ">=", share * SW1_SHARE_UNDER_FRAC,
                            "the guarantee is delivered");
                snprintf(name, sizeof(name), "%lluGiB/%d%%: enforced by the shim", REQ[i].mem / GIB,
                         REQ[i].compute);
                poc_measure(rec, name, !strcmp(sw_str(live, "enforcement"), "shim"), "bool",
                            "==", 1, "task object enforcement");
                json_array_append_new(sh, json_pack("[f, f]", (double)REQ[i].compute,
                                                    isfinite(got) ? got * 100 : 0.0));
                if (usage)
                        poc_event(
                            rec, poc_now_ms(), "recorded usage",
                            json_pack("{s:I, s:O}", "task", (json_int_t)t[i].id, "usage", usage));
                sw_cite(p, rec, &t[i]);
                json_decref(lines);
                json_decref(live);
                poc_task_fini(&t[i]);
        }
        poc_series(rec, "share", "requested compute (%)", "achieved (%)", sh);
        poc_snapshot_metrics(p, rec, "after the probes");
        poc_handling(rec,
                     "placed each request on a software slice; the shim caps memory (cuMemGetInfo "
                     "shows the slice) and paces launches to the compute limit",
                     "none when every measure passes; else check that kerfd found the shim "
                     "(kerf_shim_present) and that tasks load it",
                     0);
        poc_record_finish(p, rec);
}
