/* SPDX-License-Identifier: Apache-2.0 */
/* poc_sw34.c - SW2 contention, SW3 anomaly, SW4 reclamation (docs/POC.md) */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "poc_sw.h"

#define GIB (1024ULL * 1024 * 1024)

static void sw_secs(char *buf, size_t cap, double s)
{
        snprintf(buf, cap, "%.2f", s);
}

/* ---- SW2 ---- */

/* The GPU UUID of the task's first unit in its last read object, "" when none. */
static const char *unit_gpu(const poc_task *t)
{
        const char *s = json_string_value(
            json_object_get(json_array_get(json_object_get(t->last, "units"), 0), "gpu_uuid"));
        return s ? s : "";
}

/* Appends [x, y] to lines[line]. */
static void sw_point(json_t *lines, const char *line, double x, double y)
{
        json_array_append_new(json_object_get(lines, line), json_pack("[f, f]", x, y));
}

void poc_sw2(poc_ctx *p)
{
        json_t *rec = poc_record_new(p, "SW2", POC_ROUTE_SOFTWARE, "contention");
        char secs[32], kus[32], busy[32];
        sw_secs(secs, sizeof(secs), p->sz.contention_s + 5);
        sw_kus(p, kus, sizeof(kus));
        snprintf(busy, sizeof(busy), "%.0f", p->sz.contention_s * 1000 + 5000);
        /* dev with no idle gap: spins kernels for the whole run */
        const char *spin[] = {"dev",       "--seconds", secs,        "--kernel-us", kus,
                              "--busy-ms", busy,        "--idle-ms", "0",           NULL};
        poc_task l1, l2, h, over, v, pre, fa, fb;
        json_t *req;

        /* queueing, over-quota, priority order: poc-b holds 8 GiB of quota */
        sw_quota_reset(p, "poc-b");
        sw_set_quota(p, "poc-b", "memory", json_integer((json_int_t)(8 * GIB)));
        req = sw_slice("poc-b", 8 * GIB, 10, 0);
        poc_submit(p, rec, &l1, req, spin);
        json_decref(req);
        poc_wait_state(p, &l1, "running", 15000);
        req = sw_slice("poc-b", 8 * GIB, 10, 0);
        poc_submit(p, rec, &l2, req, spin);
        json_decref(req);
        req = sw_slice("poc-b", 8 * GIB, 10, 500);
        poc_submit(p, rec, &h, req, spin);
        json_decref(req);
        req = sw_slice("poc-b", 12 * GIB, 10, 0);
        /* a queue of its own: in the first one it would wait behind l2 (strict FIFO) */
        json_object_set_new(req, "queue", json_string("big"));
        long ost = poc_submit(p, rec, &over, req, spin);
        json_decref(req);
        poc_sleep_ms(p, 500);
        poc_task_get(p, &l2);
        poc_task_get(p, &h);
        poc_task_get(p, &over);
        /* h (priority 500) heads the queue once submitted: it is the task the scheduler tries
         * and finds over quota; l2 waits behind it */
        poc_measure(
            rec, "queueing: tasks beyond the quota wait, the queue's head with reason quota",
            !strcmp(poc_task_state(&l2), "pending") && !strcmp(poc_task_state(&h), "pending") &&
                !strcmp(poc_task_str(&h, "reason.code"), "quota"),
            "bool", "==", 1, poc_task_str(&h, "reason.text"));
        poc_measure(rec, "over-quota: a request above the whole quota never runs",
                    ost != 201 || (!strcmp(poc_task_state(&over), "pending") &&
                                   !strcmp(poc_task_str(&over, "reason.code"), "quota")),
                    "bool", "==", 1, "refused at submit or pending with reason quota");
        poc_cancel(p, &over);
        poc_cancel(p, &l1);
        poc_wait_state(p, &h, "running|succeeded|failed", 10000);
        poc_task_get(p, &l2);
        poc_measure(rec, "priority order: priority 500 starts before the earlier priority 0",
                    sw_is_live(&h) && !strcmp(poc_task_state(&l2), "pending"), "bool", "==", 1,
                    "after the quota holder was cancelled");
        poc_measure(rec, "queueing: the priority task's recorded wait",
                    poc_task_num(&h, "queue_wait_ms", NAN), "ms", ">=", 1,
                    "queue_wait_ms of the task object");
        for (poc_task *t = &l1; t; t = t == &l1 ? &l2 : t == &l2 ? &h : NULL) {
                poc_cancel(p, t);
                sw_cite(p, rec, t);
        }
        sw_cite(p, rec, &over);
        sw_quota_reset(p, "poc-b");

        /* preemption: poc-a holds 8 GiB; a preemptible priority 0 task, then priority 600 */
        sw_set_quota(p, "poc-a", "memory", json_integer((json_int_t)(8 * GIB)));
        req = sw_slice("poc-a", 8 * GIB, 10, 0);
        json_object_set_new(req, "preemptible", json_true());
        json_object_set_new(req, "workload", json_string("batch"));
        json_object_set_new(req, "tier", json_string("queueable"));
        poc_submit(p, rec, &v, req, spin);
        json_decref(req);
        poc_wait_state(p, &v, "running", 15000);
        req = sw_slice("poc-a", 8 * GIB, 10, 600);
        poc_submit(p, rec, &pre, req, spin);
        json_decref(req);
        poc_wait_state(p, &pre, "running", 15000);
        poc_task_get(p, &v);
        poc_measure(rec, "preemption: the high-priority task runs", sw_is_live(&pre), "bool",
                    "==", 1, "");
        poc_measure(rec, "preemption: the victim's reason names its preemptor",
                    !strcmp(poc_task_str(&v, "reason.code"), "preempted") &&
                        (long long)poc_task_num(&v, "reason.other_task", 0) == pre.id,
                    "bool", "==", 1, poc_task_str(&v, "reason.text"));
        poc_cancel(p, &v);
        poc_cancel(p, &pre);
        sw_cite(p, rec, &v);
        sw_cite(p, rec, &pre);
        sw_quota_reset(p, "poc-a");

        /* fair share and throttling: two tenants of equal weight, same grant, at peak at once,
         * on one GPU (fb is placed on fa's GPU: on two GPUs nothing would contend) */
        req = sw_slice("poc-a", 4 * GIB, 30, 0);
        poc_submit(p, rec, &fa, req, spin);
        json_decref(req);
        poc_wait_state(p, &fa, "running", 15000);
        char gu[96]; /* a copy: fa.last is replaced at every read */
        snprintf(gu, sizeof(gu), "%s", unit_gpu(&fa));
        req = sw_slice("poc-b", 4 * GIB, 30, 0);
        if (*gu)
                json_object_set_new(req, "gpu_uuid", json_string(gu));
        poc_submit(p, rec, &fb, req, spin);
        json_decref(req);
        poc_wait_state(p, &fb, "running", 15000);
        poc_sleep_ms(p, 300);
        poc_task_get(p, &fa);
        poc_task_get(p, &fb);
        double a0 = poc_task_num(&fa, "usage.device_time_ns", 0);
        double b0 = poc_task_num(&fb, "usage.device_time_ns", 0);
        json_t *pts = json_pack("{s:[], s:[]}", "poc-a", "poc-b"),
               *dpts = json_pack("{s:[], s:[]}", "poc-a", "poc-b");
        sw_devview va = {0}, vb = {0};
        int64_t t0 = poc_now_ms();
        while (poc_now_ms() - t0 < (int64_t)(p->sz.fair_s * 1000) && poc_sleep_ms(p, 250)) {
                poc_task_get(p, &fa);
                poc_task_get(p, &fb);
                sw_devview_add(&va, &fa);
                sw_devview_add(&vb, &fb);
                double ts = (double)(poc_now_ms() - t0) / 1000.0;
                sw_point(pts, "poc-a", ts, poc_task_num(&fa, "usage.compute_used_pct", 0));
                sw_point(pts, "poc-b", ts, poc_task_num(&fb, "usage.compute_used_pct", 0));
                sw_point(dpts, "poc-a", ts, poc_task_num(&fa, "device_util.sm_pct", 0));
                sw_point(dpts, "poc-b", ts, poc_task_num(&fb, "device_util.sm_pct", 0));
        }
        poc_snapshot_metrics(p, rec, "peak");
        double da = poc_task_num(&fa, "usage.device_time_ns", 0) - a0;
        double db = poc_task_num(&fb, "usage.device_time_ns", 0) - b0;
        double win_ns = (double)(poc_now_ms() - t0) * 1e6;
        poc_series_lines(rec, "share", "s", "compute used (%, the shim's measure)", pts);
        poc_series_lines(rec, "device", "s", "SM (%, the device's view)", dpts);
        poc_measure(rec, "fair share: both tasks on one GPU", *gu && !strcmp(gu, unit_gpu(&fb)),
                    "bool", "==", 1, *gu ? gu : "poc-a's task has no unit");
        poc_measure(rec, "fair share: device time poc-a / poc-b over the window",
                    fmin(da, db) / fmax(fmax(da, db), 1), "ratio", ">=", 0.8,
                    "equal weight, equal grant");
        poc_measure(rec, "throttling: poc-a device time share over the window", da / win_ns,
                    "share", "<=", 0.30 + 0.10, "grant 30 %, limit 30 %; the shim's measure");
        poc_measure(rec, "throttling: poc-b device time share over the window", db / win_ns,
                    "share", "<=", 0.30 + 0.10, "grant 30 %, limit 30 %; the shim's measure");
        /* the device's own view (device_util: NVML per-process utilisation through kerfd),
         * which a shim that under-counts its kernels cannot bend */
        if (va.n && vb.n) {
                double sa = va.sum / va.n / 100, sb = vb.sum / vb.n / 100;
                char why[160];
                snprintf(why, sizeof(why), "device_util.sm_pct, %u and %u samples (%s)", va.n, vb.n,
                         poc_task_str(&fa, "device_util.source"));
                poc_measure(rec, "throttling (device's view): poc-a SM share", sa, "share",
                            "<=", 0.30 + 0.10, why);
                poc_measure(rec, "throttling (device's view): poc-b SM share", sb, "share",
                            "<=", 0.30 + 0.10, why);
                poc_measure(rec, "guarantee (device's view): the lower SM share", fmin(sa, sb),
                            "share", ">=", 0.30 / 2,
                            "each task ran and got half its grant or more");
                poc_measure(rec, "accounting: shim-measured share minus the device's, worst",
                            fmax(fabs(da / win_ns - sa), fabs(db / win_ns - sb)), "share",
                            "<=", 0.10, "usage.device_time_ns against device_util.sm_pct");
        } else {
                poc_skip(rec, "throttling (device's view)",
                         va.skipped && vb.skipped
                             ? "one device_util sample per task: fair_s is too short for a "
                               "sample that covers only the window (kerfd polls once a second)"
                             : "no device_util samples: the backend gives no per-process "
                               "utilisation");
        }
        poc_measure(rec, "throttling: launches held back (throttled_ns, both)",
                    fmin(poc_task_num(&fa, "usage.throttled_ns", 0),
                         poc_task_num(&fb, "usage.throttled_ns", 0)) /
                        1e6,
                    "ms", ">=", 1, "the shim held launches of a task at its limit");
        poc_cancel(p, &fa);
        poc_cancel(p, &fb);
        sw_cite(p, rec, &fa);
        sw_cite(p, rec, &fb);
        poc_task *all[] = {&l1, &l2, &h, &over, &v, &pre, &fa, &fb};
        for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
                json_decref(poc_task_lines(p, rec, all[i]));
                poc_task_fini(all[i]);
        }
        poc_handling(rec,
                     "queued over-quota work with reason quota, started the higher priority "
                     "first, preempted a preemptible task naming the preemptor, throttled each "
                     "slice to its limit",
                     "none: every decision is in `kerf explain` and the audit", 0);
        poc_record_finish(p, rec);
}

/* ---- SW3 ---- */

static json_t *windows(json_t *lines, double from, double to)
{
        json_t *a = json_array(), *l;
        size_t i;
        json_array_foreach(lines, i, l)
        {
                double t = sw_num(l, "t_ms");
                if (!strcmp(sw_str(l, "event"), "window") && t >= from && t < to)
                        json_array_append(a, l);
        }
        return a;
}

static double worst(json_t *ws, const char *key)
{
        double m = NAN;
        json_t *w;
        size_t i;
        json_array_foreach(ws, i, w)
        {
                double v = sw_num(w, key);
                if (isfinite(v) && (!isfinite(m) || v > m))
                        m = v;
        }
        return m;
}

static double total(json_t *ws, const char *key)
{
        double s = 0;
        json_t *w;
        size_t i;
        json_array_foreach(ws, i, w) s += isfinite(sw_num(w, key)) ? sw_num(w, key) : 0;
        return s;
}

void poc_sw3(poc_ctx *p)
{
        json_t *rec = poc_record_new(p, "SW3", POC_ROUTE_SOFTWARE, "anomaly");
        char secs[32], rate[32], win[32], kus[32];
        sw_secs(secs, sizeof(secs), p->sz.serve_s);
        snprintf(rate, sizeof(rate), "%.0f", p->sz.serve_rate);
        snprintf(win, sizeof(win), "%.0f", p->sz.window_ms);
        sw_kus(p, kus, sizeof(kus));
        const char *serve[] = {"serve",     "--seconds", secs,          "--rate", rate,
                               "--kernels", "2",         "--kernel-us", kus,      "--window-ms",
                               win,         "--mem",     "1GiB",        NULL};
        const char *crash[] = {"crash", "--after-ms", "300", "--how", "segv", NULL};
        const char *early[] = {"crash", "--after-ms", "100", "--how", "exit", NULL};
        const char *hog[] = {"hog", "--chunk", "256MiB", "--hold-s", "1", NULL};
        poc_task s, c, e, hg;
        json_t *req = sw_slice("poc-a", 8 * GIB, 40, 0);
        poc_submit(p, rec, &s, req, serve);
        json_decref(req);
        poc_wait_state(p, &s, "running", 15000);
        int64_t start = poc_now_ms();
        double third = p->sz.serve_s * 1000 / 3;
        poc_sleep_ms(p, (int)third);
        int64_t t_fault = poc_now_ms();
        poc_event(rec, t_fault, "noisy tasks start: crash, early exit, hog", NULL);
        req = sw_slice("poc-noisy", 4 * GIB, 20, 0);
        poc_submit(p, rec, &c, req, crash);
        poc_submit(p, rec, &e, req, early);
        poc_submit(p, rec, &hg, req, hog);
        json_decref(req);
        json_decref(sw_follow(p, &c, 20000));
        json_decref(sw_follow(p, &e, 20000));
        json_t *hl = sw_follow(p, &hg, 20000);
        int64_t t_calm = poc_now_ms();
        poc_event(rec, t_calm, "noisy tasks ended", NULL);
        json_decref(sw_follow(p, &s, (int)(p->sz.serve_s * 1000) + 20000));
        json_t *lines = poc_task_lines(p, rec, &s);
        /* serve's t_ms counts from its own start; map the harness's times onto it */
        double off = (double)(start - poc_task_num(&s, "started_ms", (double)start));
        double f = (double)(t_fault - start) + off, cm = (double)(t_calm - start) + off;
        json_t *before = windows(lines, 0, f), *during = windows(lines, f, cm + p->sz.window_ms),
               *after = windows(lines, cm + p->sz.window_ms, 1e12);
        json_t *pts = json_array(), *w;
        size_t i;
        json_array_foreach(lines, i, w) if (!strcmp(sw_str(w, "event"), "window"))
            json_array_append_new(
                pts, json_pack("[f, f]", sw_num(w, "t_ms") / 1000,
                               isfinite(sw_num(w, "p99_ms")) ? sw_num(w, "p99_ms") : 0.0));
        poc_series(rec, "latency", "s", "serve p99 (ms)", pts);
        double pb = worst(before, "p99_ms"), pd = worst(during, "p99_ms");
        poc_measure(rec, "serve survives: its state", !strcmp(poc_task_state(&s), "succeeded"),
                    "bool", "==", 1, poc_task_state(&s));
        poc_measure(rec, "serve errors during the anomalies", total(during, "errors"), "count",
                    "<=", 0, "");
        poc_measure(rec, "serve errors after", total(after, "errors"), "count", "<=", 0, "");
        poc_measure(rec, "serve p99 during vs before (ms over 3x before + 20)",
                    pd - (3 * (isfinite(pb) ? pb : 0) + 20), "ms", "<=", 0,
                    "a 2-core host shares its CPU with the noisy tasks");
        poc_measure(rec, "serve answered requests after the anomalies", total(after, "n"), "count",
                    ">=", 1, "");
        json_t *hlines = poc_task_lines(p, rec, &hg), *hres = poc_line(hlines, "result");
        double hcap = sw_num(json_array_get(json_object_get(hl, "units"), 0), "memory");
        poc_measure(rec, "hog refused at its own cap: allocated / its slice",
                    sw_num(hres, "allocated") / hcap, "ratio", "<=", 1.0,
                    "never the neighbour's memory");
        poc_measure(rec, "hog refused at its own cap: allocated / its slice (floor)",
                    sw_num(hres, "allocated") / hcap, "ratio", ">=", 0.8,
                    "the refusal came at the cap, within one chunk");
        poc_measure(rec, "crash ended failed", !strcmp(poc_task_state(&c), "failed"), "bool",
                    "==", 1, poc_task_str(&c, "end_reason"));
        /* the device afterwards: no unit left for the ended tasks, memory back */
        long st;
        json_t *units = poc_call(p, "GET", "/v1/units?limit=1000", NULL, &st), *u;
        int leaked = 0;
        json_array_foreach(json_object_get(units, "items"), i, u)
        {
                long long tk = (long long)json_integer_value(json_object_get(u, "task"));
                leaked += tk && (tk == c.id || tk == e.id || tk == hg.id || tk == s.id);
        }
        json_decref(units);
        poc_measure(rec, "units left behind by the ended tasks", leaked, "count", "<=", 0, "");
        json_t *gpus = poc_call(p, "GET", "/v1/gpus", NULL, &st), *g;
        double reserved = 0;
        json_array_foreach(json_object_get(gpus, "items"), i, g) reserved +=
            sw_num(g, "memory_reserved");
        json_decref(gpus);
        poc_measure(rec, "GPU memory still reserved after all ended", reserved, "bytes", "<=", 0,
                    "every GPU of the node");
        poc_snapshot_metrics(p, rec, "after");
        poc_task *all[] = {&s, &c, &e, &hg};
        for (size_t k = 0; k < 4; k++) {
                sw_cite(p, rec, all[k]);
                poc_task_fini(all[k]);
        }
        json_decref(hl);
        json_decref(hlines);
        json_decref(lines);
        json_decref(before);
        json_decref(during);
        json_decref(after);
        poc_handling(rec,
                     "recorded the crash and early exit, refused the hog's allocations at its "
                     "own slice, reclaimed their units; serve kept running",
                     "none", 0);
        poc_record_finish(p, rec);
}
