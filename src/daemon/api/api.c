/* SPDX-License-Identifier: Apache-2.0 */
/* api.c - the task endpoints of docs/API.md and helpers the API handlers share */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "kerf/errno.h"
#include "kerf/fields.h" /* KERF_MAX_GRACE_S */

json_t *api_body(kreq *r)
{
        json_error_t e;
        json_t *j;

        if (!r->body || !r->len) {
                kreq_error(r, 400, "invalid_json", "a JSON object body is required");
                return NULL;
        }
        j = json_loadb(r->body, r->len, JSON_REJECT_DUPLICATES, &e);
        if (!j) {
                kreq_error(r, 400, "invalid_json", "line %d column %d: %s", e.line, e.column,
                           e.text);
                return NULL;
        }
        if (!json_is_object(j)) {
                json_decref(j);
                kreq_error(r, 400, "invalid_json", "the body must be a JSON object");
                return NULL;
        }
        return j;
}

bool api_u64(const char *s, uint64_t *ret)
{
        char *end;
        unsigned long long v;
        if (!s || !*s || *s == '-' || *s == '+')
                return false;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || *end)
                return false;
        *ret = v;
        return true;
}

bool api_name_ok(const char *s)
{
        return kerf_name_ok(s);
}

bool api_page(kreq *r, uint64_t *after, unsigned *limit)
{
        const char *a = kreq_arg(r, "after"), *l = kreq_arg(r, "limit");
        uint64_t v;
        *after = 0;
        *limit = 100;
        if (a && (!api_u64(a, after) || *after > (uint64_t)INT64_MAX)) {
                kreq_error(r, 400, "invalid_argument", "after: a cursor from \"next\"");
                return false;
        }
        if (l) {
                if (!api_u64(l, &v) || v < 1 || v > 1000) {
                        kreq_error(r, 400, "invalid_argument", "limit: an integer 1..1000");
                        return false;
                }
                *limit = (unsigned)v;
        }
        return true;
}

json_t *api_list(json_t *items, uint64_t next)
{
        return json_pack("{s:o, s:o}", "items", items, "next",
                         next ? json_sprintf("%llu", (unsigned long long)next) : json_null());
}

/* ---- tasks ---------------------------------------------------------------------------------- */

/* The stored record of a task `r` may see, or NULL (answer queued). */
static int visible_task(kreq *r, uint64_t id, kerf_store_task *rec, dtask **live)
{
        kerfd_node *n = r->node;
        dtask *t = kerfd__live(n, id);
        if (t) {
                if (!r->admin && strcmp(t->rec.tenant, r->tenant) != 0)
                        goto nf;
                *live = t;
                *rec = t->rec;
                return 0;
        }
        *live = NULL;
        /* an end not yet written shows as it is (records.c), not as the store still has it */
        if (kerfd__records_task_get(n, id, rec) < 0 && kerf_store_task_get(n->store, id, rec) < 0)
                goto nf;
        if (!r->admin && strcmp(rec->tenant, r->tenant) != 0) {
                kerf_store_task_fini(rec);
                goto nf;
        }
        return 1; /* caller finis rec */
nf:
        kreq_error(r, 404, "not_found", "no task %llu", (unsigned long long)id);
        return -ENOENT;
}

static void task_get(kreq *r, uint64_t id)
{
        kerf_store_task rec;
        dtask *t;
        int k = visible_task(r, id, &rec, &t);
        if (k < 0)
                return;
        json_t *j = kerfd_task_json(r->node, &rec, t);
        kerfd__records_mark(r->node, id, j); /* "durable": false while not yet written */
        kreq_json(r, 200, j);
        if (k == 1)
                kerf_store_task_fini(&rec);
}

static bool rate_ok(kerfd_node *n, const char *tenant)
{
        ktenant *t = kerfd__tenant_find(n, tenant);
        uint64_t now = kerfd_now_ms();
        if (!t || n->cfg.submit_rate <= 0)
                return true;
        t->tokens += (double)(now - t->refill_ms) * n->cfg.submit_rate / 1000.0;
        if (t->tokens > n->cfg.submit_burst)
                t->tokens = n->cfg.submit_burst;
        t->refill_ms = now;
        if (t->tokens < 1.0)
                return false;
        t->tokens -= 1.0;
        return true;
}

static void task_submit(kreq *r, bool attach)
{
        kerfd_node *n = r->node;
        json_t *body = api_body(r), *v;
        const char *code = "invalid_argument";
        char msg[512];
        kerf_reason why;
        dtask *t = NULL;
        uint64_t id;
        int rc;

        if (!body)
                return;
        rc = kerfd_task_parse(n, body, attach, r->admin, r->tenant, &t, &code, msg, sizeof(msg));
        json_decref(body);
        if (rc < 0) {
                unsigned st = !strcmp(code, "forbidden")   ? 403
                              : !strcmp(code, "not_found") ? 404
                                                           : 400;
                kreq_error(r, st, code, "%s", msg);
                return;
        }
        /* checks that hold for a new request only (not for a stored one at recovery) */
        if (attach && (rc = kerfd__attach_check(n, (pid_t)t->rec.pid, r->has_cred, r->uid,
                                                t->rec.tenant, msg, sizeof(msg))) < 0) {
                api_attach_refused(r, rc, msg);
                kerfd_task_free(t);
                return;
        }
        /* the tenant's policy binds its tokens; an admin submitting for it is the operator */
        if (!r->admin && (rc = kerfd__tenant_policy_check(n, kerfd__tenant_find(n, t->rec.tenant),
                                                          &t->req, msg, sizeof(msg))) < 0) {
                kerfd_task_free(t);
                if (rc == -EAGAIN)
                        kreq_error(r, 429, "rate_limited", "%s", msg);
                else
                        kreq_error(r, 403, "forbidden", "%s", msg);
                return;
        }
        if (json_object_get(t->req_json, "run_as") && geteuid() != 0 &&
            t->rec.uid != (long long)geteuid()) {
                kreq_error(r, 400, "invalid_argument",
                           "run_as.uid: kerfd is not root; it runs tasks only as uid %u",
                           (unsigned)geteuid());
                kerfd_task_free(t);
                return;
        }
        if (kerfd__slice_submit_check(n, &t->req, msg, sizeof(msg)) < 0) {
                kerfd_task_free(t);
                kreq_error(r, 422, "not_enforced", "%s", msg);
                return;
        }
        /* node-wide: refuses tenants; the admin is never locked out by it (docs/DAEMON.md) */
        if (!r->admin && n->n_live >= n->cfg.max_tasks) {
                kerfd_task_free(t);
                kreq_error(r, 429, "rate_limited",
                           "kerfd holds %u unfinished tasks (limits.max_tasks, node-wide)",
                           n->cfg.max_tasks);
                return;
        }
        if (!rate_ok(n, t->rec.tenant)) {
                kerfd_task_free(t);
                kreq_error(r, 429, "rate_limited", "tenant over its submit rate (%g/s)",
                           n->cfg.submit_rate);
                return;
        }
        id = n->next_task_id + 1;
        memset(&why, 0, sizeof(why));
        rc = kerf_sched_submit_id(n->sched, &t->req, id, &why);
        if (rc < 0) {
                kerfd_task_free(t);
                if (rc == -KERF_ENEVER)
                        kreq_error(r, 422, "never_fits", "%s", why.text);
                else if (rc == -ENOENT)
                        kreq_error(r, 404, "not_found", "unknown tenant");
                else
                        kreq_error(r, 400, "invalid_argument", "%s",
                                   why.text[0] ? why.text : kerf_strerror(rc));
                return;
        }
        t->rec.id = id;
        t->rec.submitted_ms = (int64_t)kerfd_now_ms();
        snprintf(t->rec.reason_code, sizeof(t->rec.reason_code), "not_tried");
        if (attach) {
                v = json_object_get(t->req_json, "lease_s");
                t->rec.lease_expiry_ms =
                    t->rec.submitted_ms + (int64_t)json_integer_value(v) * 1000;
        }
        /* an attach names its launcher's job (Slurm job, step, user, account) in the audit */
        kerfd__external_text(t, msg, sizeof(msg));
        if (kerfd__commit_task(n, t, true, r->actor, attach ? "task.attach" : "task.submit", "ok",
                               msg) < 0) {
                kerf_sched_cancel(n->sched, id);
                kerfd_task_free(t);
                if (!kerfd__store_refuse(r)) /* 507 when the store cannot write */
                        kreq_error(r, 500, "internal", "the task could not be stored");
                return;
        }
        n->next_task_id = id;
        kerf_u64map_put(&n->live, id, t);
        n->n_live++;
        kerfd__tenant_count(n, t->rec.tenant, +1);
        /* A submit wakes the ticker and is answered pending (clients poll): its answer does
         * not wait for a tick (reaping, limits, GPU polls, starts). An attach is placed now,
         * the scheduler step only: its launcher needs attach_env in the answer (docs/API.md). */
        if (attach) {
                kerfd__launch_wait(n); /* no step while a fork is in flight (launch.c) */
                kerfd__sched_pass(n);
        } else
                kerfd__kick(n);
        if (!(t = kerfd__live(n, id))) {
                task_get(r, id); /* it already ended (could not start) */
                r->status = 201;
                return;
        }
        kreq_json(r, 201, kerfd_task_json(n, &t->rec, t));
}

static void task_cancel(kreq *r, uint64_t id)
{
        kerfd_node *n = r->node;
        kerf_store_task rec;
        dtask *t;
        json_t *body = NULL, *v;
        unsigned grace = n->cfg.grace_s;
        int k, sig = 0;
        char text[96] = "cancelled by request";

        if (r->len) {
                const char *key;
                if (!(body = api_body(r)))
                        return;
                json_object_foreach(body, key, v)
                {
                        bool is_sig = !strcmp(key, "signal");
                        json_int_t lo = is_sig ? 1 : 0, hi = is_sig ? 64 : KERF_MAX_GRACE_S;
                        if (!is_sig && strcmp(key, "grace_s") != 0) {
                                kreq_error(r, 400, "unknown_field", "%s: unknown field", key);
                                json_decref(body);
                                return;
                        }
                        if (!json_is_integer(v) || json_integer_value(v) < lo ||
                            json_integer_value(v) > hi) {
                                if (is_sig)
                                        kreq_error(r, 400, "invalid_argument",
                                                   "signal: a signal number 1..64");
                                else
                                        kreq_error(r, 400, "invalid_argument",
                                                   "grace_s: an integer 0..%d", KERF_MAX_GRACE_S);
                                json_decref(body);
                                return;
                        }
                        if (is_sig)
                                sig = (int)json_integer_value(v);
                        else
                                grace = (unsigned)json_integer_value(v);
                }
                json_decref(body);
        }
        k = visible_task(r, id, &rec, &t);
        if (k < 0)
                return;
        if (!t || (t->stopping && !t->stop_requeue)) {
                kreq_error(r, 409, "conflict", "task %llu has %s", (unsigned long long)id,
                           t ? "already been asked to stop" : "already ended");
                if (k == 1)
                        kerf_store_task_fini(&rec);
                return;
        }
        /* a chosen first signal goes to a running process; the end's audit record names it */
        if (sig && t->in_exec && kerf_exec_stop_signal(n->exec, id, sig) == 0)
                snprintf(text, sizeof(text), "cancelled by request (signal %d, grace %u s)", sig,
                         grace);
        kerfd__task_stop(n, t, KERF_END_CANCEL, r->actor, text, grace);
        /* the answer: the task as it is now (ended, or stopping) */
        if ((t = kerfd__live(n, id)))
                kreq_json(r, 200, kerfd_task_json(n, &t->rec, t));
        else
                task_get(r, id);
        kerfd__kick(n);
}

bool api_no_body(kreq *r, const char *what)
{
        json_t *b, *v;
        const char *key;
        if (!r->len)
                return true;
        if (!(b = api_body(r)))
                return false;
        json_object_foreach(b, key, v)
        {
                kreq_error(r, 400, "unknown_field", "%s: unknown field (%s has none)", key, what);
                json_decref(b);
                return false;
        }
        json_decref(b);
        return true;
}

/* POST /v1/tasks/ID/suspend and /resume: tenant-scoped like cancel; no body. */
static void task_suspend(kreq *r, uint64_t id, bool on)
{
        kerf_store_task rec;
        dtask *t;
        char msg[512];
        int k, rc;

        if (!api_no_body(r, on ? "a suspend" : "a resume"))
                return;
        k = visible_task(r, id, &rec, &t);
        if (k < 0)
                return;
        if (!t) {
                kreq_error(r, 409, "conflict", "task %llu has already ended",
                           (unsigned long long)id);
                kerf_store_task_fini(&rec);
                return;
        }
        rc = kerfd__task_suspend(r->node, t, on, r->actor, msg, sizeof(msg));
        if (rc < 0) {
                kreq_error(r, 409, rc == -EALREADY ? "conflict" : "invalid_state", "%s", msg);
                return;
        }
        kreq_json(r, 200, kerfd_task_json(r->node, &t->rec, t));
}

static void task_list(kreq *r)
{
        kerfd_node *n = r->node;
        kerf_store_task_filter f = {0};
        kerf_store_task *ts = NULL;
        size_t nt = 0;
        uint64_t next = 0;
        const char *st = kreq_arg(r, "state"), *tn = kreq_arg(r, "tenant");
        json_t *items;

        if (!api_page(r, &f.after, &f.limit))
                return;
        if (st && kerf_task_state_parse(st) < 0) {
                char names[128];
                size_t o = 0;
                for (int i = 0; i < KERF_TASK_STATE_COUNT && o < sizeof(names); i++)
                        o += (size_t)snprintf(names + o, sizeof(names) - o, "%s%s",
                                              i == 0                           ? ""
                                              : i == KERF_TASK_STATE_COUNT - 1 ? " or "
                                                                               : ", ",
                                              kerf_task_state_name(i));
                kreq_error(r, 400, "invalid_argument", "state: %s", names);
                return;
        }
        f.state = st;
        f.queue = kreq_arg(r, "queue");
        if (f.queue && !api_name_ok(f.queue)) {
                kreq_error(r, 400, "invalid_argument", "queue: " KERF_NAME_RULE);
                return;
        }
        if (tn && !api_name_ok(tn)) {
                kreq_error(r, 400, "invalid_argument", "tenant: " KERF_NAME_RULE);
                return;
        }
        if (!r->admin) {
                if (tn && strcmp(tn, r->tenant) != 0) {
                        kreq_error(r, 403, "forbidden",
                                   "tenant: only an admin may list "
                                   "another tenant's tasks");
                        return;
                }
                f.tenant = r->tenant;
        } else {
                f.tenant = tn;
        }
        if (kerf_store_task_list(n->store, &f, &ts, &nt, &next) < 0) {
                kreq_error(r, 500, "internal", "listing tasks: %s", kerf_store_errmsg(n->store));
                return;
        }
        items = json_array();
        for (size_t i = 0; i < nt; i++) {
                dtask *t = kerfd__live(n, ts[i].id);
                kerf_store_task w; /* an end not yet written: shown as it is (records.c) */
                bool waiting = !t && kerfd__records_task_get(n, ts[i].id, &w) == 0;
                json_t *j = kerfd_task_json(n, t ? &t->rec : waiting ? &w : &ts[i], t);
                kerfd__records_mark(n, ts[i].id, j);
                json_array_append_new(items, j);
                if (waiting)
                        kerf_store_task_fini(&w);
        }
        kerf_store_task_list_free(ts, nt);
        /* how many more match after this page, for "N more" (0 on the last page) */
        uint64_t remaining = 0;
        f.after = next;
        if (next && kerf_store_task_count(n->store, &f, &remaining) < 0)
                remaining = 0;
        json_t *ans = api_list(items, next);
        json_object_set_new(ans, "remaining", json_integer((json_int_t)remaining));
        kreq_json(r, 200, ans);
}

static void task_logs(kreq *r, uint64_t id)
{
        const char *stream = kreq_arg(r, "stream"), *off = kreq_arg(r, "offset"),
                   *lim = kreq_arg(r, "limit");
        uint64_t offset = 0, limit = 65536;
        kerf_store_task rec;
        dtask *t;
        const char *path;
        char *buf;
        ssize_t got = 0;
        int k, fd;
        struct stat sb;
        bool ended;

        if (stream && strcmp(stream, "stdout") && strcmp(stream, "stderr")) {
                kreq_error(r, 400, "invalid_argument", "stream: stdout or stderr");
                return;
        }
        if (off && (!api_u64(off, &offset) || offset > (uint64_t)INT64_MAX)) {
                kreq_error(r, 400, "invalid_argument", "offset: an integer 0..%lld",
                           (long long)INT64_MAX);
                return;
        }
        if (lim && (!api_u64(lim, &limit) || limit < 1 || limit > 1048576)) {
                kreq_error(r, 400, "invalid_argument", "limit: an integer 1..1048576 (bytes)");
                return;
        }
        if ((k = visible_task(r, id, &rec, &t)) < 0)
                return;
        /* 410 once retention removed them (retention.c); an attached task never had logs */
        if (rec.ended_ms && (rec.log_stdout || rec.log_stderr) &&
            kerfd__retention_logs_gone(r, id)) {
                if (k == 1)
                        kerf_store_task_fini(&rec);
                return;
        }
        path = stream && !strcmp(stream, "stderr") ? rec.log_stderr : rec.log_stdout;
        ended = rec.ended_ms != 0;
        buf = malloc(limit + 1);
        fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
        if (buf && fd >= 0 && fstat(fd, &sb) == 0) {
                uint64_t max = r->node->cfg.retention.max_log_bytes;
                uint64_t keep = kerfd__logcap_keep(max);
                /* a follower past the end of a running task's log that was cut (logcap.c)
                 * goes on from the cut's marker */
                if (max && !ended && offset > (uint64_t)sb.st_size && keep < (uint64_t)sb.st_size)
                        offset = keep;
                got = pread(fd, buf, limit, (off_t)offset);
                if (got < 0)
                        got = 0;
        } else {
                sb.st_size = 0;
        }
        if (fd >= 0)
                close(fd);
        if (!buf) {
                kreq_error(r, 500, "internal", "out of memory");
        } else {
                json_t *j = json_object();
                json_object_set_new(j, "data", json_stringn_nocheck(buf, (size_t)got));
                json_object_set_new(j, "offset",
                                    json_integer((json_int_t)(offset + (uint64_t)got)));
                json_object_set_new(
                    j, "eof",
                    json_boolean(ended && offset + (uint64_t)got >= (uint64_t)sb.st_size));
                kreq_json(r, 200, j);
        }
        free(buf);
        if (k == 1)
                kerf_store_task_fini(&rec);
}

static void task_explain(kreq *r, uint64_t id)
{
        kerf_store_task rec;
        kerf_explain e;
        dtask *t;
        json_t *routes, *j;
        int k = visible_task(r, id, &rec, &t);

        if (k < 0)
                return;
        if (!t || kerf_sched_explain(r->node->sched, id, &e) < 0) {
                j = json_pack("{s:I, s:s, s:{s:s, s:s, s:I}, s:[], s:n, s:n, s:n, s:s}", "task",
                              (json_int_t)id, "state", rec.state, "reason", "code",
                              rec.reason_code[0] ? rec.reason_code : "none", "text",
                              rec.reason_text, "other_task", (json_int_t)rec.reason_task, "routes",
                              "queue_position", "fair_share_rank", "dominant_share", "hint",
                              rec.ended_ms ? "the task has ended" : "");
        } else {
                routes = json_array();
                for (unsigned i = 0; i < e.n_routes; i++)
                        json_array_append_new(routes,
                                              json_pack("{s:s, s:s, s:s}", "route",
                                                        kerf_unit_kind_name(e.routes[i].route),
                                                        "code", kerf_why_name(e.routes[i].code),
                                                        "text", e.routes[i].text));
                j = json_pack("{s:I, s:s, s:{s:s, s:s, s:I}, s:o, s:i, s:i, s:f, s:s}", "task",
                              (json_int_t)id, "state", rec.state, "reason", "code",
                              kerf_why_name(e.reason.code), "text", e.reason.text, "other_task",
                              (json_int_t)e.reason.other_task, "routes", routes, "queue_position",
                              (int)e.queue_position, "fair_share_rank", (int)e.fair_share_rank,
                              "dominant_share", e.dominant_share, "hint", e.hint);
                /* behind a blocked head (backfill, docs/SCHEDULER.md): who and when */
                if (j && e.head_task) {
                        json_object_set_new(j, "head_task", json_integer((json_int_t)e.head_task));
                        json_object_set_new(j, "head_start_in_s",
                                            e.head_start_in_s >= 0
                                                ? json_integer((json_int_t)e.head_start_in_s)
                                                : json_null());
                }
        }
        kreq_json(r, 200, j);
        if (k == 1)
                kerf_store_task_fini(&rec);
}

static void task_lease(kreq *r, uint64_t id)
{
        kerfd_node *n = r->node;
        kerf_store_task rec;
        dtask *t;
        int k;
        json_t *lease;

        if (!api_no_body(r, "a renewal"))
                return;
        k = visible_task(r, id, &rec, &t);
        if (k < 0)
                return;
        if (!t || !t->rec.lease_expiry_ms) {
                kreq_error(r, 409, "conflict", "task %llu is not an attached task with a lease",
                           (unsigned long long)id);
                if (k == 1)
                        kerf_store_task_fini(&rec);
                return;
        }
        lease = json_object_get(t->req_json, "lease_s");
        t->rec.lease_expiry_ms =
            (int64_t)kerfd_now_ms() + (int64_t)json_integer_value(lease) * 1000;
        kerfd_tx *x = kerfd__tx_new("task.lease", id); /* kept until written (records.c) */
        kerfd__tx_lease(x, id, t->rec.lease_expiry_ms);
        (void)kerfd__tx_commit(n, x, true);
        json_t *j = kerfd_task_json(n, &t->rec, t);
        kerfd__records_mark(n, id, j);
        kreq_json(r, 200, j);
}

/* POST /v1/tasks/ID/detach: the launcher of an attached task says its process is done; kerfd
 * ends it now (succeeded, exit) and reclaims its unit, region and fence at once instead of at
 * its next check of the pid. No body, or {}. */
static void task_detach(kreq *r, uint64_t id)
{
        kerfd_node *n = r->node;
        kerf_store_task rec;
        dtask *t;
        int k;

        if (!api_no_body(r, "a detach"))
                return;
        k = visible_task(r, id, &rec, &t);
        if (k < 0)
                return;
        if (!t || t->argv) {
                kreq_error(r, 409, "conflict", "task %llu %s", (unsigned long long)id,
                           t ? "is not an attached task (cancel it instead)" : "has already ended");
                if (k == 1)
                        kerf_store_task_fini(&rec);
                return;
        }
        kerfd__task_end(n, t, KERF_END_EXIT, r->actor, "detached by its launcher");
        task_get(r, id);
        kerfd__kick(n);
}

void api_attach_refused(kreq *r, int rc, const char *msg)
{
        kreq_error(r,
                   rc == -ESRCH    ? 400
                   : rc == -EEXIST ? 409
                                   : 403,
                   rc == -ESRCH    ? "invalid_argument"
                   : rc == -EEXIST ? "conflict"
                                   : "forbidden",
                   "%s", msg);
}

/* ---- the routes (routes.def) ----------------------------------------------------------------- */

/* The {id} of /v1/tasks/{id}...: false with a 404 naming it when it is not 1..2^63-1. */
static bool task_id(kreq *r, uint64_t *id)
{
        size_t l = r->param_len[0];
        if (l < 32 && api_u64(r->param[0], id) && *id != 0 && *id <= (uint64_t)INT64_MAX)
                return true;
        kreq_error(r, 404, "not_found", "task id: \"%.*s\" is not a task id (an integer 1..%lld)",
                   (int)(l > 40 ? 40 : l), r->param[0], (long long)INT64_MAX);
        return false;
}

void kerfd_api_task_list(kreq *r)
{
        task_list(r);
}

void kerfd_api_task_submit(kreq *r)
{
        task_submit(r, false);
}

void kerfd_api_task_attach(kreq *r)
{
        task_submit(r, true);
}

bool api_task_id(kreq *r, uint64_t *id)
{
        return task_id(r, id);
}

int api_task_visible(kreq *r, uint64_t id, kerf_store_task *rec, dtask **live)
{
        return visible_task(r, id, rec, live);
}

#define TASK_ROUTE(name, call)                                                                     \
        void kerfd_api_task_##name(kreq *r)                                                        \
        {                                                                                          \
                uint64_t id;                                                                       \
                if (task_id(r, &id))                                                               \
                        call;                                                                      \
        }

TASK_ROUTE(get, task_get(r, id))
TASK_ROUTE(cancel, task_cancel(r, id))
TASK_ROUTE(suspend, task_suspend(r, id, true))
TASK_ROUTE(resume, task_suspend(r, id, false))
TASK_ROUTE(logs, task_logs(r, id))
TASK_ROUTE(explain, task_explain(r, id))
TASK_ROUTE(lease, task_lease(r, id))
TASK_ROUTE(detach, task_detach(r, id))
