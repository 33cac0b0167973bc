/* SPDX-License-Identifier: Apache-2.0 */
/* poc_sw4.c - SW4 reclamation: cancel, timeout, failure, idle, scale-down (docs/POC.md) */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "poc_sw.h"

#define GIB      (1024ULL * 1024 * 1024)
#define REUSE_MS 2000 /* the unit is reusable within 2 s of the end (kerfd ticks every 20-50 ms)   \
                       */

static bool pid_alive(long long pid)
{
        char path[64];
        struct stat st;
        snprintf(path, sizeof(path), "/proc/%lld", pid);
        return pid > 0 && stat(path, &st) == 0;
}

/* How many series of /metrics carry task="ID" */
static int task_series(poc_ctx *p, long long id)
{
        kerf_client_response r;
        char needle[48];
        int n = 0;
        if (kerf_client_call(p->client, "GET", "/metrics", NULL, &r) < 0)
                return -1;
        snprintf(needle, sizeof(needle), "task=\"%lld\"", id);
        for (const char *s = r.body; s && (s = strstr(s, needle)); s += strlen(needle))
                n++;
        kerf_client_response_fini(&r);
        return n;
}

/* One reclamation case: victim v holds poc-b's whole memory quota (4 GiB), a waiter w needs
 * exactly that room; `how` ends v (cancel) or v ends by itself (NULL). */
static void one_case(poc_ctx *p, json_t *rec, const char *name, json_t *vreq,
                     const char *const *vargs, bool cancel)
{
        char secs[32], m[160], kus[32];
        poc_task v, w;
        snprintf(secs, sizeof(secs), "%.2f", p->sz.contention_s);
        sw_kus(p, kus, sizeof(kus));
        const char *wargs[] = {"dev", "--seconds", "0.3", "--kernel-us", kus, NULL};
        sw_set_quota(p, "poc-b", "memory", json_integer((json_int_t)(4 * GIB)));
        poc_submit(p, rec, &v, vreq, vargs);
        json_decref(vreq);
        poc_wait_state(p, &v, "running", 15000);
        long long pid = (long long)poc_task_num(&v, "pid", 0);
        json_t *wreq = sw_slice("poc-b", 4 * GIB, 10, 0);
        poc_submit(p, rec, &w, wreq, wargs);
        json_decref(wreq);
        if (cancel) {
                poc_sleep_ms(p, 300);
                poc_cancel(p, &v);
        }
        poc_wait_state(p, &v, "succeeded|failed|cancelled", (int)(p->sz.idle_s * 1000) + 20000);
        poc_wait_state(p, &w, "running|succeeded|failed", 20000);
        double ended = poc_task_num(&v, "ended_ms", NAN);
        double started = poc_task_num(&w, "started_ms", NAN);
        poc_progress(p, "SW4 %s: task %lld ended (%s), waiter %lld %s", name, v.id,
                     poc_task_str(&v, "end_reason"), w.id, poc_task_state(&w));
        snprintf(m, sizeof(m), "%s: end reason", name);
        poc_event(rec, (int64_t)(isfinite(ended) ? ended : 0), name,
                  json_pack("{s:I, s:s, s:s}", "task", (json_int_t)v.id, "end_reason",
                            poc_task_str(&v, "end_reason"), "reason",
                            poc_task_str(&v, "reason.text")));
        snprintf(m, sizeof(m), "%s: time until the room is reused (waiter start - end)", name);
        poc_measure(rec, m, started - ended, "ms", "<=", REUSE_MS,
                    "a waiting task that needs exactly the released quota");
        long st;
        char path[64];
        snprintf(path, sizeof(path), "/v1/units?limit=1000");
        json_t *units = poc_call(p, "GET", path, NULL, &st), *u;
        size_t i;
        int held = 0;
        json_array_foreach(json_object_get(units, "items"), i, u) held +=
            json_integer_value(json_object_get(u, "task")) == v.id;
        json_decref(units);
        snprintf(m, sizeof(m), "%s: units still held", name);
        poc_measure(rec, m, held, "count", "<=", 0, "GET /v1/units");
        if (pid > 0) {
                snprintf(m, sizeof(m), "%s: task process alive", name);
                poc_measure(rec, m, pid_alive(pid), "bool", "==", 0, "/proc/PID on this node");
        } else {
                poc_skip(rec, name, "no pid recorded: the process check was not made");
        }
        snprintf(m, sizeof(m), "%s: metrics series left for the task", name);
        poc_measure(rec, m, task_series(p, v.id), "count", "<=", 0, "GET /metrics");
        json_t *t = poc_call(p, "GET", "/v1/tenants", NULL, &st), *tn;
        double used = NAN;
        json_array_foreach(json_object_get(t, "items"), i,
                           tn) if (!strcmp(sw_str(tn, "name"), "poc-b")) used =
            sw_num(json_object_get(tn, "usage"), "memory");
        json_decref(t);
        snprintf(m, sizeof(m), "%s: poc-b memory charged beyond the waiter's (bytes)", name);
        poc_measure(rec, m, used - (sw_is_live(&w) ? (double)(4 * GIB) : 0), "bytes", "<=", 0,
                    "the quota accounting released with the unit");
        poc_cancel(p, &w);
        sw_cite(p, rec, &v);
        sw_cite(p, rec, &w);
        json_decref(poc_task_lines(p, rec, &v));
        json_decref(poc_task_lines(p, rec, &w));
        poc_task_fini(&v);
        poc_task_fini(&w);
        sw_quota_reset(p, "poc-b");
}

void poc_sw4(poc_ctx *p)
{
        json_t *rec = poc_record_new(p, "SW4", POC_ROUTE_SOFTWARE, "reclamation");
        char secs[32], kus[32], idle[32];
        snprintf(secs, sizeof(secs), "%.2f", p->sz.contention_s + 30);
        sw_kus(p, kus, sizeof(kus));
        snprintf(idle, sizeof(idle), "%.0f", p->sz.idle_s * 1000 * 20);
        const char *busy[] = {"dev", "--seconds", secs, "--kernel-us", kus, "--idle-ms", "0", NULL};
        const char *sleepy[] = {"dev",       "--seconds", secs,        "--kernel-us", kus,
                                "--busy-ms", "5",         "--idle-ms", idle,          NULL};
        const char *crash[] = {"crash", "--after-ms", "300", "--how", "segv", NULL};
        json_t *r;

        one_case(p, rec, "cancel", sw_slice("poc-b", 4 * GIB, 10, 0), busy, true);
        r = sw_slice("poc-b", 4 * GIB, 10, 0);
        json_object_set_new(r, "max_runtime_s", json_integer((json_int_t)p->sz.timeout_s));
        one_case(p, rec, "timeout", r, busy, false);
        one_case(p, rec, "failure", sw_slice("poc-b", 4 * GIB, 10, 0), crash, false);
        r = sw_slice("poc-b", 4 * GIB, 10, 0);
        json_object_set_new(r, "idle_timeout_s", json_integer((json_int_t)p->sz.idle_s));
        one_case(p, rec, "idle", r, sleepy, false);

        /* scale-down on one node: a service of N replicas loses N-1, the last keeps serving */
        int n = (int)p->sz.replicas;
        poc_task rep[8];
        char rate[32];
        snprintf(rate, sizeof(rate), "%.0f", p->sz.serve_rate);
        snprintf(secs, sizeof(secs), "%.2f", p->sz.serve_s);
        const char *serve[] = {"serve", "--seconds",   secs, "--rate",      rate,  "--kernels",
                               "1",     "--kernel-us", kus,  "--window-ms", "250", NULL};
        for (int i = 0; i < n; i++) {
                json_t *q = sw_slice("poc-a", 2 * GIB, 10, 0);
                poc_submit(p, rec, &rep[i], q, serve);
                json_decref(q);
        }
        for (int i = 0; i < n; i++)
                poc_wait_state(p, &rep[i], "running", 15000);
        poc_sleep_ms(p, 500);
        int64_t t_down = poc_now_ms();
        for (int i = 1; i < n; i++)
                poc_cancel(p, &rep[i]);
        poc_event(rec, t_down, "scale-down", json_pack("{s:i, s:i}", "from", n, "to", 1));
        int freed = 0;
        for (int i = 1; i < n; i++) {
                poc_wait_state(p, &rep[i], "cancelled|succeeded|failed", 10000);
                freed += !strcmp(poc_task_state(&rep[i]), "cancelled");
        }
        poc_measure(rec, "scale-down: replicas removed", freed, "count", "==", n - 1, "");
        json_decref(sw_follow(p, &rep[0], (int)(p->sz.serve_s * 1000) + 20000));
        json_t *lines = poc_task_lines(p, rec, &rep[0]), *res = poc_line(lines, "result");
        poc_measure(rec, "scale-down: the remaining replica kept serving (errors)",
                    sw_num(res, "errors"), "count", "<=", 0, "");
        poc_measure(rec, "scale-down: the remaining replica ended succeeded",
                    !strcmp(poc_task_state(&rep[0]), "succeeded"), "bool", "==", 1, "");
        json_decref(lines);
        for (int i = 0; i < n; i++) {
                sw_cite(p, rec, &rep[i]);
                if (i)
                        json_decref(poc_task_lines(p, rec, &rep[i]));
                poc_task_fini(&rep[i]);
        }
        poc_snapshot_metrics(p, rec, "after");
        poc_handling(rec,
                     "released unit, processes, metrics series and quota together at each end "
                     "(cancel, max_runtime_s, crash, idle_timeout_s, scale-down)",
                     "none", 0);
        poc_record_finish(p, rec);
}
