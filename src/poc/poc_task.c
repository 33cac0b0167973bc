/* SPDX-License-Identifier: Apache-2.0 */
/* poc_task.c - the POC's kerfd calls, tasks, kerf-load output and evidence records */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "poc.h"
#include "poc_report_int.h"

json_t *poc_call(poc_ctx *p, const char *method, const char *path, json_t *body, long *status)
{
        kerf_client_response r;
        char *b = body ? json_dumps(body, JSON_COMPACT) : NULL;
        int rc = kerf_client_call(p->client, method, path, b, &r);
        json_t *j = NULL;
        free(b);
        *status = 0;
        if (rc < 0)
                return NULL;
        *status = r.status;
        if (r.body && r.len)
                j = json_loadb(r.body, r.len, 0, NULL);
        kerf_client_response_fini(&r);
        return j;
}

/* ---- tasks ---- */

long poc_submit(poc_ctx *p, json_t *rec, poc_task *t, json_t *req, const char *const *args)
{
        json_t *cmd = json_array(), *body = json_deep_copy(req), *ans;
        json_array_append_new(cmd, json_string(p->load));
        for (size_t i = 0; args && args[i]; i++)
                json_array_append_new(cmd, json_string(args[i]));
        json_object_set_new(body, "command", cmd);
        memset(t, 0, sizeof(*t));
        ans = poc_call(p, "POST", "/v1/tasks", body, &t->status);
        t->req = body;
        if (t->status == 201) {
                t->id = (long long)json_integer_value(json_object_get(ans, "id"));
                t->last = ans;
                ans = NULL;
        }
        if (rec) {
                json_t *in = json_pack("{s:I, s:O, s:i}", "task", (json_int_t)t->id, "spec", body,
                                       "status", (int)t->status);
                if (t->status != 201 && ans)
                        json_object_set(in, "answer", ans);
                json_array_append_new(json_object_get(rec, "input"), in);
        }
        if (t->status != 201 && ans) /* kept for the caller: why it was refused */
                t->last = ans;
        else
                json_decref(ans);
        return t->status;
}

long poc_task_get(poc_ctx *p, poc_task *t)
{
        char path[64];
        long st;
        if (!t->id)
                return 0;
        snprintf(path, sizeof(path), "/v1/tasks/%lld", t->id);
        json_t *j = poc_call(p, "GET", path, NULL, &st);
        if (st == 200 && j) {
                json_decref(t->last);
                t->last = j;
        } else {
                json_decref(j);
        }
        return st;
}

const char *poc_task_state(const poc_task *t)
{
        const char *s = json_string_value(json_object_get(t->last, "state"));
        return s ? s : "";
}

static json_t *dotted(const json_t *o, const char *path)
{
        char key[64];
        while (o && *path) {
                const char *dot = strchr(path, '.');
                size_t n = dot ? (size_t)(dot - path) : strlen(path);
                if (n >= sizeof(key))
                        return NULL;
                memcpy(key, path, n);
                key[n] = 0;
                o = json_object_get(o, key);
                path += n + (dot ? 1 : 0);
        }
        return (json_t *)o;
}

double poc_task_num(const poc_task *t, const char *path, double dflt)
{
        json_t *v = dotted(t->last, path);
        return json_is_number(v) ? json_number_value(v) : dflt;
}

const char *poc_task_str(const poc_task *t, const char *path)
{
        const char *s = json_string_value(dotted(t->last, path));
        return s ? s : "";
}

static bool state_in(const char *state, const char *states)
{
        size_t n = strlen(state);
        for (const char *s = states; s && *s;) {
                const char *e = strchr(s, '|');
                size_t l = e ? (size_t)(e - s) : strlen(s);
                if (n && l == n && !strncmp(s, state, n))
                        return true;
                s = e ? e + 1 : NULL;
        }
        return false;
}

bool poc_wait_state(poc_ctx *p, poc_task *t, const char *states, int timeout_ms)
{
        int64_t end = poc_now_ms() + timeout_ms;
        do {
                if (poc_task_get(p, t) == 200 && state_in(poc_task_state(t), states))
                        return true;
        } while (poc_now_ms() < end && poc_sleep_ms(p, 25));
        return false;
}

long poc_cancel(poc_ctx *p, poc_task *t)
{
        char path[64];
        long st;
        if (!t->id)
                return 0;
        snprintf(path, sizeof(path), "/v1/tasks/%lld/cancel", t->id);
        json_t *b = json_pack("{s:i}", "grace_s", 1);
        json_t *j = poc_call(p, "POST", path, b, &st);
        json_decref(b);
        if (st == 200) {
                json_decref(t->last);
                t->last = j;
        } else {
                json_decref(j);
        }
        return st;
}

void poc_task_fini(poc_task *t)
{
        json_decref(t->req);
        json_decref(t->last);
        memset(t, 0, sizeof(*t));
}

/* Reads a whole log stream of the task through the API (tenant-scoped like `kerf logs`) and
 * writes it to `file`; returns the text (free()), NULL when kerfd had none. */
static char *fetch_log(poc_ctx *p, long long id, const char *stream, const char *file)
{
        char path[160];
        size_t len = 0;
        char *all = NULL;
        long long off = 0;
        for (int guard = 0; guard < 256; guard++) {
                long st;
                snprintf(path, sizeof(path),
                         "/v1/tasks/%lld/logs?stream=%s&offset=%lld&limit=1048576", id, stream,
                         off);
                json_t *j = poc_call(p, "GET", path, NULL, &st);
                const char *d = json_string_value(json_object_get(j, "data"));
                size_t n = d ? json_string_length(json_object_get(j, "data")) : 0;
                if (st != 200 || !n) {
                        json_decref(j);
                        break;
                }
                char *grown = realloc(all, len + n + 1);
                if (!grown) {
                        json_decref(j);
                        break;
                }
                all = grown;
                memcpy(all + len, d, n);
                len += n;
                all[len] = 0;
                off = (long long)json_integer_value(json_object_get(j, "offset"));
                json_decref(j);
        }
        FILE *f = fopen(file, "we");
        if (f) {
                if (len)
                        fwrite(all, 1, len, f);
                fclose(f);
        }
        return all;
}

json_t *poc_task_lines(poc_ctx *p, json_t *rec, poc_task *t)
{
        char out[4200], err[4200];
        json_t *lines = json_array();
        if (!t->id)
                return lines;
        snprintf(out, sizeof(out), "%s/logs/task-%lld.out", p->out, t->id);
        snprintf(err, sizeof(err), "%s/logs/task-%lld.err", p->out, t->id);
        char *text = fetch_log(p, t->id, "stdout", out);
        free(fetch_log(p, t->id, "stderr", err));
        for (char *s = text, *e; s && *s; s = e ? e + 1 : NULL) {
                e = strchr(s, '\n');
                if (e)
                        *e = 0;
                json_t *j = json_loads(s, 0, NULL);
                if (json_is_object(j))
                        json_array_append_new(lines, j);
                else
                        json_decref(j);
                if (!e)
                        break;
        }
        free(text);
        if (rec) {
                json_t *logs = json_object_get(rec, "logs"), *l;
                size_t i;
                json_array_foreach(logs, i, l) if (json_integer_value(json_object_get(l, "task")) ==
                                                   t->id) return lines;
                poc_task_get(p, t);
                const char *kso = poc_task_str(t, "log.stdout");
                snprintf(out, sizeof(out), "logs/task-%lld.out", t->id);
                snprintf(err, sizeof(err), "logs/task-%lld.err", t->id);
                json_array_append_new(logs,
                                      json_pack("{s:I, s:s, s:s, s:s}", "task", (json_int_t)t->id,
                                                "stdout", out, "stderr", err, "kerfd_stdout", kso));
        }
        return lines;
}

json_t *poc_line(json_t *lines, const char *event)
{
        for (size_t i = json_array_size(lines); i-- > 0;) {
                json_t *l = json_array_get(lines, i);
                const char *e = json_string_value(json_object_get(l, "event"));
                if (e && !strcmp(e, event))
                        return l;
        }
        return NULL;
}

const char *poc_bytes_arg(unsigned long long bytes)
{
        static char buf[8][32];
        static unsigned k;
        char *b = buf[k++ % 8];
        snprintf(b, 32, "%lluB", bytes); /* a unit: kerf-load refuses bare numbers */
        return b;
}

/* ---- records ---- */

static json_t *env_json(const poc_ctx *p)
{
        return json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:b, s:i, s:b}", "device", p->env.device,
                         "gpu_uuid", p->env.gpu_uuid, "driver", p->env.driver, "cuda", p->env.cuda,
                         "kerf", p->env.kerf, "simulated", p->env.simulated, "shim", p->env.shim,
                         "gpus", p->env.n_gpus, "mig_capable", p->env.mig_capable);
}

json_t *poc_record_new(poc_ctx *p, const char *id, const char *route, const char *title)
{
        const char *owner = p->o.owner;
        return json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:[], s:[], s:[], s:[], s:[], s:[], "
                         "s:{s:s, s:s, s:i}, s:{}, s:[], s:o, s:s}",
                         "id", id, "title", title, "route", route, "owner",
                         owner ? owner : "unknown", "start_ms", (json_int_t)poc_now_ms(), "end_ms",
                         (json_int_t)0, "input", "logs", "metrics", "audit", "measures", "skipped",
                         "handling", "kerf", "", "operator", "", "commands", 0, "series",
                         "timeline", "env", env_json(p), "verdict", POC_SKIPPED);
}

bool poc_measure(json_t *rec, const char *name, double value, const char *unit, const char *op,
                 double threshold, const char *note)
{
        /* nothing measured (the workload gave no figure): value null, never a pass */
        bool measured = isfinite(value);
        bool pass = measured && poc__measure_holds(value, op, threshold) == 1;
        json_array_append_new(json_object_get(rec, "measures"),
                              json_pack("{s:s, s:o, s:s, s:s, s:f, s:b, s:s}", "name", name,
                                        "value", measured ? json_real(value) : json_null(), "unit",
                                        unit, "op", op, "threshold", threshold, "pass", pass,
                                        "note",
                                        measured ? (note ? note : "")
                                                 : "not measured (the workload gave no figure)"));
        return pass;
}

void poc_skip(json_t *rec, const char *step, const char *why)
{
        json_array_append_new(json_object_get(rec, "skipped"),
                              json_pack("{s:s, s:s}", "step", step, "why", why));
}

void poc_handling(json_t *rec, const char *kerf_did, const char *operator_must, int commands)
{
        json_object_set_new(rec, "handling",
                            json_pack("{s:s, s:s, s:i}", "kerf", kerf_did, "operator",
                                      operator_must, "commands", commands));
}

int poc_cite_audit(poc_ctx *p, json_t *rec, const char *object)
{
        char path[160];
        long st;
        int n = 0;
        long long after = p->audit_seq0;
        json_int_t since = json_integer_value(json_object_get(rec, "start_ms"));
        json_t *cited = json_object_get(rec, "audit");
        for (int guard = 0; guard < 10000; guard++) {
                snprintf(path, sizeof(path), "/v1/audit?limit=1000&after=%lld", after);
                json_t *a = poc_call(p, "GET", path, NULL, &st), *r;
                json_t *items = json_object_get(a, "items");
                size_t i;
                if (st != 200 || !json_array_size(items)) {
                        json_decref(a);
                        break;
                }
                json_array_foreach(items, i, r)
                {
                        long long seq = (long long)json_integer_value(json_object_get(r, "seq"));
                        const char *obj = json_string_value(json_object_get(r, "object"));
                        after = seq;
                        if (!obj || strcmp(obj, object) != 0 ||
                            json_integer_value(json_object_get(r, "time_ms")) < since)
                                continue;
                        bool dup = false;
                        size_t k;
                        json_t *c;
                        json_array_foreach(cited, k, c) dup |= json_integer_value(c) == seq;
                        if (!dup)
                                json_array_append_new(cited, json_integer(seq));
                        n++;
                }
                bool more = json_is_string(json_object_get(a, "next"));
                json_decref(a);
                if (!more)
                        break;
        }
        return n;
}

int poc_snapshot_metrics(poc_ctx *p, json_t *rec, const char *label)
{
        kerf_client_response r;
        char file[4300], rel[128];
        json_t *m = json_object_get(rec, "metrics");
        if (kerf_client_call(p->client, "GET", "/metrics", NULL, &r) < 0)
                return -EIO;
        if (r.status != 200) {
                kerf_client_response_fini(&r);
                return -EIO;
        }
        snprintf(rel, sizeof(rel), "metrics/%s-%zu.prom",
                 json_string_value(json_object_get(rec, "id")), json_array_size(m) + 1);
        snprintf(file, sizeof(file), "%s/%s", p->out, rel);
        FILE *f = fopen(file, "we");
        if (!f) {
                kerf_client_response_fini(&r);
                return -errno;
        }
        fwrite(r.body, 1, r.len, f);
        fclose(f);
        kerf_client_response_fini(&r);
        json_array_append_new(m, json_pack("{s:I, s:s, s:s}", "time_ms", (json_int_t)poc_now_ms(),
                                           "label", label, "file", rel));
        return 0;
}

void poc_series(json_t *rec, const char *name, const char *xlabel, const char *ylabel,
                json_t *points)
{
        json_object_set_new(json_object_get(rec, "series"), name,
                            json_pack("{s:s, s:s, s:o}", "x", xlabel, "y", ylabel, "points",
                                      points ? points : json_array()));
}

void poc_series_lines(json_t *rec, const char *name, const char *xlabel, const char *ylabel,
                      json_t *lines)
{
        json_object_set_new(json_object_get(rec, "series"), name,
                            json_pack("{s:s, s:s, s:o}", "x", xlabel, "y", ylabel, "lines",
                                      lines ? lines : json_object()));
}

void poc_event(json_t *rec, int64_t t_ms, const char *what, json_t *detail)
{
        json_array_append_new(json_object_get(rec, "timeline"),
                              json_pack("{s:I, s:s, s:o}", "t_ms", (json_int_t)t_ms, "what", what,
                                        "detail", detail ? detail : json_null()));
}

void poc_record_finish(poc_ctx *p, json_t *rec)
{
        const char *v = poc_verdict_of(rec);
        json_object_set_new(rec, "end_ms", json_integer(poc_now_ms()));
        json_object_set_new(rec, "verdict", json_string(v));
        if (!strcmp(v, POC_FAIL))
                p->failed++;
        json_array_append_new(p->records, rec);
}
