/* SPDX-License-Identifier: Apache-2.0 */
/* records.c - every write kerfd makes to its store, and what happens when one fails: the
 * outbox of unrecorded transitions (kept in order, retried every tick until they commit), the
 * degraded state (507 for new work, /v1/health), the state files' modes and the audit anchor
 * key. docs/STATE.md "Store failures" is the policy this file carries out. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "http.h"
#include "node.h"
#include "kerf/errno.h"

enum {
        OP_TASK_INSERT,
        OP_TASK_UPDATE,
        OP_TASK_LEASE,
        OP_UNIT_UPSERT,
        OP_UNIT_DELETE,
        OP_AUDIT,
        OP_EVENT,
        OP_RUN_OPEN,
        OP_RUN_CLOSE,
        OP_MEMBER_ADD,
        OP_MEMBER_DELETE
};

typedef struct krec_op {
        int kind;
        union {
                kerf_store_task task; /* a deep copy (heap strings owned) */
                kerf_store_unit unit;
                kerf_store_audit audit;
                kerf_store_event event;
                kerf_store_run run;
                kerf_store_member member; /* add; delete: task and pid (0 = all) */
                struct {
                        uint64_t task;
                        int64_t end_ms, used_ns;
                } close;
                struct {
                        uint64_t id;
                        int64_t ms;
                } lease;
                uint64_t id;
        } u;
} krec_op;

struct kerfd_tx {
        krec_op *ops;
        unsigned n, cap;
        bool oom;
        uint64_t task; /* the task it is about, 0 = none */
        char what[KERF_NAME_LEN];
        uint64_t made_ms;
        struct kerfd_tx *next;
};

/* ---- building a change ------------------------------------------------------------------- */

kerfd_tx *kerfd__tx_new(const char *what, uint64_t task)
{
        kerfd_tx *x = calloc(1, sizeof(*x));

        if (!x)
                return NULL;
        snprintf(x->what, sizeof(x->what), "%s", what ? what : "");
        x->task = task;
        x->made_ms = kerfd_now_ms();
        return x;
}

static krec_op *op_add(kerfd_tx *x, int kind)
{
        if (!x || x->oom)
                return NULL;
        if (x->n == x->cap) {
                unsigned nc = x->cap ? x->cap * 2 : 4;
                krec_op *no = realloc(x->ops, nc * sizeof(*no));
                if (!no) {
                        x->oom = true;
                        return NULL;
                }
                x->ops = no;
                x->cap = nc;
        }
        memset(&x->ops[x->n], 0, sizeof(x->ops[0]));
        x->ops[x->n].kind = kind;
        return &x->ops[x->n++];
}

static char *dup_or_null(const char *s, bool *ok)
{
        char *d;
        if (!s)
                return NULL;
        if (!(d = strdup(s)))
                *ok = false;
        return d;
}

static bool task_copy(kerf_store_task *dst, const kerf_store_task *src)
{
        bool ok = true;

        *dst = *src;
        dst->request_json = dup_or_null(src->request_json, &ok);
        dst->argv_json = dup_or_null(src->argv_json, &ok);
        dst->env_json = dup_or_null(src->env_json, &ok);
        dst->cwd = dup_or_null(src->cwd, &ok);
        dst->log_stdout = dup_or_null(src->log_stdout, &ok);
        dst->log_stderr = dup_or_null(src->log_stderr, &ok);
        return ok;
}

void kerfd__tx_task(kerfd_tx *x, const kerf_store_task *t, bool insert)
{
        krec_op *o = op_add(x, insert ? OP_TASK_INSERT : OP_TASK_UPDATE);

        if (o && !task_copy(&o->u.task, t))
                x->oom = true;
}

void kerfd__tx_lease(kerfd_tx *x, uint64_t id, int64_t expiry_ms)
{
        krec_op *o = op_add(x, OP_TASK_LEASE);

        if (o) {
                o->u.lease.id = id;
                o->u.lease.ms = expiry_ms;
        }
}

void kerfd__tx_member_add(kerfd_tx *x, const kerf_store_member *m)
{
        krec_op *o = op_add(x, OP_MEMBER_ADD);

        if (o)
                o->u.member = *m;
}

void kerfd__tx_member_delete(kerfd_tx *x, uint64_t task, int64_t pid)
{
        krec_op *o = op_add(x, OP_MEMBER_DELETE);

        if (o) {
                o->u.member.task = task;
                o->u.member.pid = pid;
        }
}

void kerfd__tx_unit(kerfd_tx *x, const kerf_store_unit *u)
{
        krec_op *o = op_add(x, OP_UNIT_UPSERT);

        if (o)
                o->u.unit = *u;
}

void kerfd__tx_unit_delete(kerfd_tx *x, uint64_t id)
{
        krec_op *o = op_add(x, OP_UNIT_DELETE);

        if (o)
                o->u.id = id;
}

void kerfd__tx_audit(kerfd_tx *x, const char *actor, const char *tenant, const char *action,
                     const char *object, const char *result, const char *reason,
                     const char *gpu_uuid)
{
        krec_op *o = op_add(x, OP_AUDIT);
        kerf_store_audit *a;

        if (!o)
                return;
        a = &o->u.audit;
        a->time_ms = (int64_t)kerfd_now_ms(); /* when it happened, not when it is written */
        snprintf(a->actor, sizeof(a->actor), "%s", actor && *actor ? actor : "kerfd");
        snprintf(a->tenant, sizeof(a->tenant), "%s", tenant ? tenant : "");
        snprintf(a->action, sizeof(a->action), "%s", action);
        snprintf(a->object, sizeof(a->object), "%s", object);
        snprintf(a->result, sizeof(a->result), "%s", result ? result : "ok");
        snprintf(a->reason, sizeof(a->reason), "%s", reason ? reason : "");
        snprintf(a->gpu_uuid, sizeof(a->gpu_uuid), "%s", gpu_uuid ? gpu_uuid : "");
}

void kerfd__tx_eventv(kerfd_tx *x, const char *kind, int gpu, uint64_t unit, uint64_t task, int xid,
                      const char *cls, const char *fmt, va_list ap)
{
        krec_op *o = op_add(x, OP_EVENT);
        kerf_store_event *e;

        if (!o)
                return;
        e = &o->u.event;
        e->time_ms = (int64_t)kerfd_now_ms();
        snprintf(e->kind, sizeof(e->kind), "%s", kind);
        e->gpu = gpu;
        e->unit = unit;
        e->task = task;
        e->xid = xid;
        snprintf(e->class, sizeof(e->class), "%s", cls ? cls : "");
        vsnprintf(e->text, sizeof(e->text), fmt, ap);
}

void kerfd__tx_event(kerfd_tx *x, const char *kind, int gpu, uint64_t unit, uint64_t task, int xid,
                     const char *cls, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        kerfd__tx_eventv(x, kind, gpu, unit, task, xid, cls, fmt, ap);
        va_end(ap);
}

void kerfd__tx_run_open(kerfd_tx *x, const kerf_store_run *run)
{
        krec_op *o = op_add(x, OP_RUN_OPEN);

        if (o)
                o->u.run = *run;
}

void kerfd__tx_run_close(kerfd_tx *x, uint64_t task, int64_t end_ms, int64_t used_ns)
{
        krec_op *o = op_add(x, OP_RUN_CLOSE);

        if (o) {
                o->u.close.task = task;
                o->u.close.end_ms = end_ms;
                o->u.close.used_ns = used_ns;
        }
}

static void tx_free(kerfd_tx *x)
{
        if (!x)
                return;
        for (unsigned i = 0; i < x->n; i++)
                if (x->ops[i].kind == OP_TASK_INSERT || x->ops[i].kind == OP_TASK_UPDATE)
                        kerf_store_task_fini(&x->ops[i].u.task);
        free(x->ops);
        free(x);
}

/* ---- applying a change: one transaction through kerf_store_tx ------------------------------ */

static int apply(kerf_store *s, void *userdata)
{
        kerfd_tx *x = userdata;
        int r = 0;

        for (unsigned i = 0; r >= 0 && i < x->n; i++) {
                krec_op *o = &x->ops[i];
                switch (o->kind) {
                case OP_TASK_INSERT:
                        r = kerf_store_task_insert(s, &o->u.task);
                        break;
                case OP_TASK_UPDATE:
                        r = kerf_store_task_update(s, &o->u.task);
                        break;
                case OP_TASK_LEASE:
                        r = kerf_store_task_lease_set(s, o->u.lease.id, o->u.lease.ms);
                        break;
                case OP_UNIT_UPSERT:
                        r = kerf_store_unit_upsert(s, &o->u.unit);
                        break;
                case OP_UNIT_DELETE:
                        r = kerf_store_unit_delete(s, o->u.id);
                        if (r == -ENOENT)
                                r = 0; /* already gone */
                        break;
                case OP_AUDIT: {
                        kerf_store_audit a = o->u.audit; /* seq and hashes are set at write */
                        r = kerf_store_audit_append(s, &a);
                        break;
                }
                case OP_EVENT: {
                        kerf_store_event e = o->u.event;
                        r = kerf_store_event_append(s, &e);
                        break;
                }
                case OP_RUN_OPEN: {
                        kerf_store_run run = o->u.run;
                        r = kerf_store_run_open(s, &run);
                        break;
                }
                case OP_RUN_CLOSE:
                        r = kerf_store_run_close(s, o->u.close.task, o->u.close.end_ms,
                                                 o->u.close.used_ns);
                        break;
                case OP_MEMBER_ADD:
                        r = kerf_store_member_add(s, &o->u.member);
                        break;
                case OP_MEMBER_DELETE:
                        r = kerf_store_member_delete(s, o->u.member.task, o->u.member.pid);
                        break;
                }
        }
        return r;
}

/* A failure that writing again later can cure (a full or failing disk, a lock). Anything
 * else (a constraint, a bad field) would fail forever and block every record behind it. */
static bool transient(int r)
{
        return r == -ENOSPC || r == -EIO || r == -EBUSY || r == -EROFS || r == -ENOMEM ||
               r == -EACCES || r == -EDQUOT;
}

static void set_failed(kerfd_node *n, int r)
{
        if (!n->store_err) {
                n->store_err_since_ms = kerfd_now_ms();
                log_error("store: cannot write (%s: %s); transitions are kept in memory and "
                          "retried, new work is refused (507) until it can",
                          kerf_strerror(r), kerf_store_errmsg(n->store));
        }
        n->store_err = r;
}

static void set_writable(kerfd_node *n)
{
        if (n->store_err)
                log_info("store: writable again after %llu s",
                         (unsigned long long)((kerfd_now_ms() - n->store_err_since_ms) / 1000));
        n->store_err = 0;
        n->store_err_since_ms = 0;
}

/* Says in kerfd's log what a dropped record was, so that it is not lost without a trace. */
static void log_dropped(const kerfd_tx *x, const char *why)
{
        for (unsigned i = 0; i < x->n; i++) {
                const krec_op *o = &x->ops[i];
                if (o->kind == OP_AUDIT) {
                        char *j = kerf_store_audit_json(&o->u.audit);
                        log_error("store: audit record NOT WRITTEN (%s): %s", why, j ? j : "?");
                        free(j);
                } else if (o->kind == OP_TASK_INSERT || o->kind == OP_TASK_UPDATE) {
                        log_error("store: task %llu state %s (%s) exit %d NOT WRITTEN (%s)",
                                  (unsigned long long)o->u.task.id, o->u.task.state,
                                  o->u.task.end_reason, o->u.task.exit_code, why);
                }
        }
}

static void outbox_push(kerfd_node *n, kerfd_tx *x)
{
        x->next = NULL;
        if (n->outbox_tail)
                n->outbox_tail->next = x;
        else
                n->outbox_head = x;
        n->outbox_tail = x;
        n->outbox_len++;
}

static kerfd_tx *outbox_pop(kerfd_node *n)
{
        kerfd_tx *x = n->outbox_head;

        if (!x)
                return NULL;
        n->outbox_head = x->next;
        if (!n->outbox_head)
                n->outbox_tail = NULL;
        n->outbox_len--;
        return x;
}

/* One transaction, timed for /metrics (kerf_store_commit_duration_seconds). */
static int store_tx(kerfd_node *n, kerfd_tx *x)
{
        uint64_t t0 = kerfd__metrics_clock_us();
        int r = kerf_store_tx(n->store, apply, x);
        kerfd__metrics_commit(t0);
        return r;
}

int kerfd__records_flush(kerfd_node *n)
{
        size_t done = 0;
        kerfd_tx *x;
        int r = 0;

        while ((x = n->outbox_head)) {
                r = store_tx(n, x);
                if (r < 0 && transient(r)) {
                        set_failed(n, r);
                        return r;
                }
                if (r < 0) {
                        log_dropped(x, kerf_strerror(r));
                        r = 0;
                }
                tx_free(outbox_pop(n));
                done++;
        }
        if (done)
                log_info("store: %zu delayed change%s written", done, done == 1 ? "" : "s");
        return 0;
}

int kerfd__tx_commit(kerfd_node *n, kerfd_tx *x, bool defer)
{
        int r;

        if (!x || x->oom) {
                log_error("store: %s of task %llu: out of memory building the record",
                          x ? x->what : "change", x ? (unsigned long long)x->task : 0ULL);
                tx_free(x);
                return -ENOMEM;
        }
        if (x->n == 0) {
                tx_free(x);
                return 0;
        }
        /* in order: nothing overtakes a change that is still waiting (the tick retries
         * those; a new change does not hammer a failing disk with another attempt) */
        if (n->outbox_head) {
                r = n->store_err ? n->store_err : -EIO;
        } else {
                r = store_tx(n, x);
                if (r >= 0) {
                        set_writable(n);
                        tx_free(x);
                        return 0;
                }
                if (!transient(r)) {
                        log_error("store: %s of task %llu failed: %s (%s)", x->what,
                                  (unsigned long long)x->task, kerf_strerror(r),
                                  kerf_store_errmsg(n->store));
                        if (defer)
                                log_dropped(x, kerf_strerror(r));
                        tx_free(x);
                        return r;
                }
                set_failed(n, r);
        }
        if (!defer) {
                tx_free(x);
                return r;
        }
        kerfd_tx *tail = n->outbox_tail;
        if (tail && x->n == 1 && tail->n == 1 && x->ops[0].kind == OP_TASK_LEASE &&
            tail->ops[0].kind == OP_TASK_LEASE && tail->ops[0].u.lease.id == x->ops[0].u.lease.id) {
                /* renewals of one lease: only the newest expiry matters */
                tail->ops[0].u.lease.ms = x->ops[0].u.lease.ms;
                tx_free(x);
                return 1;
        }
        log_warn("store: %s of task %llu not yet recorded (%s): kept in memory, retried every "
                 "tick (%zu waiting)",
                 x->what, (unsigned long long)x->task, kerf_strerror(r), n->outbox_len + 1);
        outbox_push(n, x);
        return 1;
}

/* ---- what the API shows ------------------------------------------------------------------ */

bool kerfd__records_pending(const kerfd_node *n, uint64_t task)
{
        for (const kerfd_tx *x = n->outbox_head; x; x = x->next)
                if (x->task == task)
                        return true;
        return false;
}

int kerfd__records_task_get(const kerfd_node *n, uint64_t id, kerf_store_task *ret)
{
        const kerf_store_task *last = NULL;

        for (const kerfd_tx *x = n->outbox_head; x; x = x->next)
                for (unsigned i = 0; i < x->n; i++)
                        if ((x->ops[i].kind == OP_TASK_INSERT ||
                             x->ops[i].kind == OP_TASK_UPDATE) &&
                            x->ops[i].u.task.id == id)
                                last = &x->ops[i].u.task;
        if (!last)
                return -ENOENT;
        if (!task_copy(ret, last)) {
                kerf_store_task_fini(ret);
                return -ENOMEM;
        }
        return 0;
}

void kerfd__records_mark(const kerfd_node *n, uint64_t task, json_t *j)
{
        if (j && kerfd__records_pending(n, task))
                json_object_set_new(j, "durable", json_false());
}

bool kerfd__store_ok(const kerfd_node *n)
{
        return !n->store_err && !n->outbox_head;
}

json_t *kerfd__store_health(const kerfd_node *n)
{
        char buf[160], when[40];
        time_t t = (time_t)(n->store_err_since_ms / 1000);
        struct tm tm;

        if (kerfd__store_ok(n))
                return json_string("ok");
        gmtime_r(&t, &tm);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(buf, sizeof(buf), "read-only: %s since %s (%zu change%s waiting)",
                 kerf_strerror(n->store_err ? n->store_err : -EIO), when, n->outbox_len,
                 n->outbox_len == 1 ? "" : "s");
        return json_string(buf);
}

bool kerfd__store_refuse(kreq *r)
{
        kerfd_node *n = r->node;

        if (kerfd__store_ok(n))
                return false;
        kreq_error(r, 507, "insufficient_storage",
                   "kerfd cannot write its state store (%s, %zu change%s waiting to be "
                   "recorded): new work is refused until it can; free space under %s",
                   kerf_strerror(n->store_err ? n->store_err : -EIO), n->outbox_len,
                   n->outbox_len == 1 ? "" : "s", n->cfg.state_dir);
        return true;
}

/* ---- the tick ------------------------------------------------------------------------------ */

void kerfd__records_tick(kerfd_node *n, uint64_t mono)
{
        uint64_t ids[64];
        unsigned k = 0;

        if (kerfd__store_ok(n) && !n->n_start_unrecorded)
                return;
        if (mono - n->records_mono < 100)
                return; /* a failing disk is tried at most ten times a second */
        n->records_mono = mono;
        if (n->outbox_head) {
                if (kerfd__records_flush(n) < 0)
                        return;
                set_writable(n);
        } else if (n->store_err && !n->n_start_unrecorded) {
                /* nothing waits, but the last write failed: is the disk writable again? (with
                 * unrecorded starts, their retry below is the probe) */
                char v[32];
                int r;
                snprintf(v, sizeof(v), "%llu", (unsigned long long)kerfd_now_ms());
                r = kerf_store_meta_set(n->store, "store_probe", v);
                if (r < 0) {
                        set_failed(n, r);
                        return;
                }
                set_writable(n);
        }
        /* starts that were not recorded (so not forked): try them again, in id order */
        uint64_t id;
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;
        while (n->n_start_unrecorded && k < 64 && kerf_u64map_next(&n->live, &it, &id, &val)) {
                dtask *t = val;
                if (t->start_unrecorded)
                        ids[k++] = id;
        }
        for (unsigned i = 0; i < k; i++) {
                dtask *t = kerfd__live(n, ids[i]);
                if (!t || !t->start_unrecorded)
                        continue;
                t->start_unrecorded = false;
                n->n_start_unrecorded--;
                kerfd__retry_deferred(n, t);
        }
}

void kerfd__records_stop(kerfd_node *n)
{
        kerfd_tx *x;

        if (!n->outbox_head || !n->store)
                return;
        for (int i = 0; i < 20 && n->outbox_head && kerfd__records_flush(n) < 0; i++)
                usleep(100 * 1000);
        while ((x = outbox_pop(n))) {
                log_dropped(x, "kerfd stopped while the store could not write");
                tx_free(x);
        }
}

/* ---- opening the store: modes, the failure hook, the anchor key -------------------------- */

int kerfd__store_open(kerfd_node *n)
{
        kerf_store_opts so = {0};
        char path[4400], note[1024], err[512], pub[KERF_STORE_PK_HEX];
        const char *hook = getenv("KERFD_TEST_STORE_FAIL");
        struct stat st;
        int r;

        /* the state dir: traversal for task uids is the layout's business (docs/STATE.md);
         * but nobody else may create or replace files in it */
        if (stat(n->cfg.state_dir, &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH))) {
                log_error("state dir %s is writable by group or others (mode %04o): anyone "
                          "there could replace kerf.db; chmod go-w it",
                          n->cfg.state_dir, (unsigned)(st.st_mode & 07777));
                return -EPERM;
        }
        snprintf(path, sizeof(path), "%s/kerf.db", n->cfg.state_dir);
        r = kerf_store_secure_files(path, note, sizeof(note));
        if (r < 0) {
                log_error("store %s: %s", path, note[0] ? note : kerf_strerror(r));
                return r;
        }
        if (r > 0)
                log_warn("store: made private (group/other bits removed): %s", note);
        if ((r = kerf_store_open(path, &so, &n->store, err, sizeof(err))) < 0) {
                log_error("store %s: %s", path, err);
                return r;
        }
        if (kerf_store_set_versions(n->store, n->driver, n->cuda, KERFD_VERSION) < 0)
                log_warn("store: version strings too long for the audit records");
        if (kerf_store_set_node(n->store, n->node_name) < 0) /* set by kerfd__node_devs */
                log_warn("store: node name too long for the audit records");
        if (hook && *hook) {
                if (kerf_store_fail_set(n->store, hook) < 0) {
                        log_error("KERFD_TEST_STORE_FAIL=%s: expected OP[:NTH[:COUNT]][@FILE]",
                                  hook);
                        return -EINVAL;
                }
                log_warn("KERFD_TEST_STORE_FAIL=%s: test hook, store writes fail on purpose", hook);
        }
        snprintf(path, sizeof(path), "%s/audit.key", n->cfg.state_dir);
        if ((r = kerf_store_anchor_key(path, true, pub)) < 0) {
                log_error("audit key %s: %s (it must be a private file of kerfd's uid)", path,
                          kerf_strerror(r));
                return r;
        }
        snprintf(n->audit_pub, sizeof(n->audit_pub), "%s", pub);
        /* the public half, for `kerf audit verify --key` (not secret) */
        snprintf(path, sizeof(path), "%s/audit.pub", n->cfg.state_dir);
        FILE *f = fopen(path, "we");
        bool ok = f && fprintf(f, "%s\n", pub) > 0;
        if ((f && fclose(f) != 0) || !ok)
                log_warn("audit public key %s not written: %s", path, strerror(errno));
        return 0;
}
