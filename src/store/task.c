/* SPDX-License-Identifier: Apache-2.0 */
/* task.c - task, unit and event rows */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kerf/errno.h"

#define STMT_OR_FAIL(st, s, id)                                                                    \
        do {                                                                                       \
                (st) = kerf__stmt((s), (id));                                                      \
                if (!(st))                                                                         \
                        return kerf__sqlerr(sqlite3_errcode((s)->db));                             \
        } while (0)

/* ---- tasks ---------------------------------------------------------------------------------- */

void kerf_store_task_init(kerf_store_task *t)
{
        if (!t)
                return;
        memset(t, 0, sizeof(*t));
        t->uid = t->gid = -1;
        t->exit_code = -1;
}

void kerf_store_task_fini(kerf_store_task *t)
{
        if (!t)
                return;
        free(t->request_json);
        free(t->argv_json);
        free(t->env_json);
        free(t->cwd);
        free(t->log_stdout);
        free(t->log_stderr);
        kerf_store_task_init(t);
}

static bool fits(const char *v, size_t len)
{
        return strnlen(v, len) < len;
}

static int task_valid(const kerf_store_task *t)
{
        if (!t || t->id == 0 || t->id > INT64_MAX || !fits(t->tenant, sizeof(t->tenant)) ||
            !t->tenant[0] || !fits(t->queue, sizeof(t->queue)) || !fits(t->name, sizeof(t->name)) ||
            !fits(t->state, sizeof(t->state)) || !t->state[0] ||
            !fits(t->end_reason, sizeof(t->end_reason)) || !fits(t->route, sizeof(t->route)) ||
            !fits(t->reason_code, sizeof(t->reason_code)) ||
            !fits(t->reason_text, sizeof(t->reason_text)) || !fits(t->held, sizeof(t->held)) ||
            t->proc_start > INT64_MAX || t->reason_task > INT64_MAX)
                return -EINVAL;
        return 0;
}

static void task_bind(sqlite3_stmt *st, const kerf_store_task *t)
{
        sqlite3_bind_int64(st, 1, (int64_t)t->id);
        sqlite3_bind_text(st, 2, t->tenant, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, t->queue[0] ? t->queue : "default", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, t->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, t->state, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 6, t->end_reason, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 7, t->route, -1, SQLITE_STATIC);
        kerf__bind_text(st, 8, t->request_json);
        kerf__bind_text(st, 9, t->argv_json);
        kerf__bind_text(st, 10, t->env_json);
        kerf__bind_text(st, 11, t->cwd);
        kerf__bind_text(st, 12, t->log_stdout);
        kerf__bind_text(st, 13, t->log_stderr);
        sqlite3_bind_int64(st, 14, t->uid);
        sqlite3_bind_int64(st, 15, t->gid);
        sqlite3_bind_int64(st, 16, t->pid);
        sqlite3_bind_int64(st, 17, t->pgid);
        sqlite3_bind_int64(st, 18, (int64_t)t->proc_start);
        sqlite3_bind_int(st, 19, t->exit_code);
        sqlite3_bind_int(st, 20, t->signal);
        sqlite3_bind_int64(st, 21, t->submitted_ms);
        sqlite3_bind_int64(st, 22, t->started_ms);
        sqlite3_bind_int64(st, 23, t->ended_ms);
        sqlite3_bind_int64(st, 24, t->preemptions);
        sqlite3_bind_int64(st, 25, t->restarts);
        sqlite3_bind_text(st, 26, t->reason_code, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 27, (int64_t)t->reason_task);
        sqlite3_bind_text(st, 28, t->reason_text, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 29, t->lease_expiry_ms);
        sqlite3_bind_text(st, 30, t->held, -1, SQLITE_STATIC);
}

int kerf_store_task_insert(kerf_store *s, kerf_store_task *t)
{
        sqlite3_stmt *st;
        int64_t saved;
        int r;

        if (!s || task_valid(t) < 0 || !t->request_json)
                return -EINVAL;
        KERF__FAILPOINT(s, "task_insert");
        STMT_OR_FAIL(st, s, ST_TASK_INSERT);
        saved = t->submitted_ms;
        t->submitted_ms = kerf__now_ms(t->submitted_ms);
        task_bind(st, t);
        r = kerf__exec_stmt(st);
        if (r < 0)
                t->submitted_ms = saved;
        return r;
}

int kerf_store_task_update(kerf_store *s, const kerf_store_task *t)
{
        sqlite3_stmt *st;
        int r;

        if (!s || task_valid(t) < 0)
                return -EINVAL;
        KERF__FAILPOINT(s, "task_update");
        STMT_OR_FAIL(st, s, ST_TASK_UPDATE);
        task_bind(st, t);
        r = kerf__exec_stmt(st);
        if (r == 0 && sqlite3_changes(s->db) == 0)
                return -ENOENT;
        return r;
}

int kerf_store_task_lease_set(kerf_store *s, uint64_t id, int64_t expiry_ms)
{
        sqlite3_stmt *st;
        int r;

        if (!s || id == 0 || id > INT64_MAX)
                return -EINVAL;
        KERF__FAILPOINT(s, "task_lease");
        STMT_OR_FAIL(st, s, ST_TASK_LEASE);
        sqlite3_bind_int64(st, 1, (int64_t)id);
        sqlite3_bind_int64(st, 2, expiry_ms);
        r = kerf__exec_stmt(st);
        if (r == 0 && sqlite3_changes(s->db) == 0)
                return -ENOENT;
        return r;
}

/* Fills the fixed fields of *t from a row of TASK_COLS; `borrow` points the strings into the
 * row (valid until the next step) instead of copying them. */
static int task_row(sqlite3_stmt *st, kerf_store_task *t, bool borrow)
{
        bool ok = true;

        kerf_store_task_init(t);
        t->id = (uint64_t)sqlite3_column_int64(st, 0);
        kerf__col_cpy(st, 1, t->tenant, sizeof(t->tenant));
        kerf__col_cpy(st, 2, t->queue, sizeof(t->queue));
        kerf__col_cpy(st, 3, t->name, sizeof(t->name));
        kerf__col_cpy(st, 4, t->state, sizeof(t->state));
        kerf__col_cpy(st, 5, t->end_reason, sizeof(t->end_reason));
        kerf__col_cpy(st, 6, t->route, sizeof(t->route));
        if (borrow) {
                char **f[] = {&t->request_json, &t->argv_json,  &t->env_json,
                              &t->cwd,          &t->log_stdout, &t->log_stderr};

                for (int i = 0; i < 6; i++)
                        *f[i] = (char *)sqlite3_column_text(st, 7 + i);
        } else {
                t->request_json = kerf__col_dup(st, 7, &ok);
                t->argv_json = kerf__col_dup(st, 8, &ok);
                t->env_json = kerf__col_dup(st, 9, &ok);
                t->cwd = kerf__col_dup(st, 10, &ok);
                t->log_stdout = kerf__col_dup(st, 11, &ok);
                t->log_stderr = kerf__col_dup(st, 12, &ok);
        }
        t->uid = sqlite3_column_int64(st, 13);
        t->gid = sqlite3_column_int64(st, 14);
        t->pid = sqlite3_column_int64(st, 15);
        t->pgid = sqlite3_column_int64(st, 16);
        t->proc_start = (uint64_t)sqlite3_column_int64(st, 17);
        t->exit_code = sqlite3_column_int(st, 18);
        t->signal = sqlite3_column_int(st, 19);
        t->submitted_ms = sqlite3_column_int64(st, 20);
        t->started_ms = sqlite3_column_int64(st, 21);
        t->ended_ms = sqlite3_column_int64(st, 22);
        t->preemptions = (unsigned)sqlite3_column_int64(st, 23);
        t->restarts = (unsigned)sqlite3_column_int64(st, 24);
        kerf__col_cpy(st, 25, t->reason_code, sizeof(t->reason_code));
        t->reason_task = (uint64_t)sqlite3_column_int64(st, 26);
        kerf__col_cpy(st, 27, t->reason_text, sizeof(t->reason_text));
        t->lease_expiry_ms = sqlite3_column_int64(st, 28);
        kerf__col_cpy(st, 29, t->held, sizeof(t->held));
        if (!ok) {
                kerf_store_task_fini(t);
                return -ENOMEM;
        }
        return 0;
}

int kerf_store_task_get(kerf_store *s, uint64_t id, kerf_store_task *ret)
{
        kerf_store_task t;
        sqlite3_stmt *st;
        int rc, r;

        if (!s || !ret || id == 0 || id > INT64_MAX)
                return -EINVAL;
        STMT_OR_FAIL(st, s, ST_TASK_GET);
        sqlite3_bind_int64(st, 1, (int64_t)id);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                r = task_row(st, &t, false);
                if (r == 0)
                        *ret = t;
        } else {
                r = rc == SQLITE_DONE ? -ENOENT : kerf__sqlerr(rc);
        }
        sqlite3_reset(st);
        return r;
}

static unsigned filter_mask(const kerf_store_task_filter *f)
{
        return (f->tenant ? 1u : 0) | (f->state ? 2u : 0) | (f->queue ? 4u : 0) |
               (f->unfinished ? 8u : 0);
}

/* The cached query for a filter shape; ?1 tenant ?2 state ?3 queue ?4 after ?5 limit. */
static sqlite3_stmt *task_query(kerf_store *s, const kerf_store_task_filter *f)
{
        unsigned m = filter_mask(f);
        char sql[1024];
        sqlite3_stmt *st = s->task_q[m];

        if (st) {
                sqlite3_reset(st);
                sqlite3_clear_bindings(st);
        } else {
                snprintf(sql, sizeof(sql),
                         "SELECT %s FROM tasks WHERE id > ?4%s%s%s%s ORDER BY id LIMIT ?5",
                         kerf__task_cols, (m & 1) ? " AND tenant = ?1" : "",
                         (m & 2) ? " AND state = ?2" : "", (m & 4) ? " AND queue = ?3" : "",
                         (m & 8) ? " AND ended_ms = 0" : "");
                if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) !=
                    SQLITE_OK)
                        return NULL;
                s->task_q[m] = st;
        }
        if (f->tenant)
                sqlite3_bind_text(st, 1, f->tenant, -1, SQLITE_STATIC);
        if (f->state)
                sqlite3_bind_text(st, 2, f->state, -1, SQLITE_STATIC);
        if (f->queue)
                sqlite3_bind_text(st, 3, f->queue, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, f->after > INT64_MAX ? INT64_MAX : (int64_t)f->after);
        return st;
}

static int task_fill(sqlite3_stmt *st, void *item)
{
        return task_row(st, item, false);
}

int kerf_store_task_list(kerf_store *s, const kerf_store_task_filter *f,
                         kerf_store_task **ret_tasks, size_t *ret_n, uint64_t *ret_next)
{
        kerf_store_task_filter all = {0};
        kerf_store_task *arr = NULL;
        sqlite3_stmt *st;
        size_t n = 0;
        unsigned limit;
        int r;

        if (!s || !ret_tasks || !ret_n)
                return -EINVAL;
        if (!f)
                f = &all;
        limit = kerf__limit(f->limit);
        st = task_query(s, f);
        if (!st)
                return kerf__sqlerr(sqlite3_errcode(s->db));
        sqlite3_bind_int64(st, 5, (int64_t)limit + 1);
        r = kerf__collect(st, sizeof(*arr), limit, task_fill, (void **)&arr, &n, ret_next);
        if (r < 0)
                return r;
        *ret_tasks = arr;
        *ret_n = n;
        return 0;
}

void kerf_store_task_list_free(kerf_store_task *tasks, size_t n)
{
        if (!tasks)
                return;
        for (size_t i = 0; i < n; i++)
                kerf_store_task_fini(&tasks[i]);
        free(tasks);
}

int kerf_store_task_foreach(kerf_store *s, const kerf_store_task_filter *f, kerf_store_task_cb cb,
                            void *userdata)
{
        kerf_store_task_filter all = {0};
        kerf_store_task t;
        sqlite3_stmt *st;
        int rc, r = 0;

        if (!s || !cb)
                return -EINVAL;
        if (!f)
                f = &all;
        st = task_query(s, f);
        if (!st)
                return kerf__sqlerr(sqlite3_errcode(s->db));
        sqlite3_bind_int64(st, 5, f->limit ? (int64_t)f->limit : -1);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                task_row(st, &t, true);
                r = cb(&t, userdata);
                if (r)
                        break;
        }
        if (!r && rc != SQLITE_DONE)
                r = kerf__sqlerr(rc);
        sqlite3_reset(st);
        return r;
}

int kerf_store_task_count(kerf_store *s, const kerf_store_task_filter *f, uint64_t *ret_count)
{
        kerf_store_task_filter all = {0};
        sqlite3_stmt *st;
        char sql[256];
        unsigned m;
        int rc;

        if (!s || !ret_count)
                return -EINVAL;
        if (!f)
                f = &all;
        m = filter_mask(f);
        snprintf(sql, sizeof(sql), "SELECT count(*) FROM tasks WHERE id > ?4%s%s%s%s",
                 (m & 1) ? " AND tenant = ?1" : "", (m & 2) ? " AND state = ?2" : "",
                 (m & 4) ? " AND queue = ?3" : "", (m & 8) ? " AND ended_ms = 0" : "");
        rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
        if (rc != SQLITE_OK)
                return kerf__sqlerr(rc);
        if (f->tenant)
                sqlite3_bind_text(st, 1, f->tenant, -1, SQLITE_STATIC);
        if (f->state)
                sqlite3_bind_text(st, 2, f->state, -1, SQLITE_STATIC);
        if (f->queue)
                sqlite3_bind_text(st, 3, f->queue, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, f->after > INT64_MAX ? INT64_MAX : (int64_t)f->after);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
                *ret_count = (uint64_t)sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return rc == SQLITE_ROW ? 0 : kerf__sqlerr(rc);
}

/* ---- units ---------------------------------------------------------------------------------- */

void kerf_store_unit_init(kerf_store_unit *u)
{
        if (!u)
                return;
        memset(u, 0, sizeof(*u));
        u->mig_gi = u->mig_ci = u->mig_start = -1;
}

int kerf_store_unit_upsert(kerf_store *s, const kerf_store_unit *u)
{
        sqlite3_stmt *st;

        if (!s || !u || u->id == 0 || u->id > INT64_MAX || u->task > INT64_MAX ||
            !fits(u->kind, sizeof(u->kind)) || !u->kind[0] || !fits(u->state, sizeof(u->state)) ||
            !u->state[0] || !fits(u->gpu_uuid, sizeof(u->gpu_uuid)) ||
            !fits(u->mig_profile, sizeof(u->mig_profile)) ||
            !fits(u->mig_uuid, sizeof(u->mig_uuid)) || u->mem_bytes > INT64_MAX || u->gpu < 0)
                return -EINVAL;
        KERF__FAILPOINT(s, "unit_upsert");
        STMT_OR_FAIL(st, s, ST_UNIT_UPSERT);
        sqlite3_bind_int64(st, 1, (int64_t)u->id);
        if (u->task)
                sqlite3_bind_int64(st, 2, (int64_t)u->task);
        sqlite3_bind_text(st, 3, u->kind, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, u->state, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 5, u->gpu);
        sqlite3_bind_text(st, 6, u->gpu_uuid, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 7, (int64_t)u->mem_bytes);
        sqlite3_bind_int64(st, 8, u->compute_pct);
        sqlite3_bind_int64(st, 9, u->compute_limit_pct);
        sqlite3_bind_text(st, 10, u->mig_profile, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 11, u->mig_gi);
        sqlite3_bind_int(st, 12, u->mig_ci);
        sqlite3_bind_int(st, 13, u->mig_start);
        sqlite3_bind_text(st, 14, u->mig_uuid, -1, SQLITE_STATIC);
        return kerf__exec_stmt(st);
}

int kerf_store_unit_delete(kerf_store *s, uint64_t id)
{
        sqlite3_stmt *st;
        int r;

        if (!s || id == 0 || id > INT64_MAX)
                return -EINVAL;
        KERF__FAILPOINT(s, "unit_delete");
        STMT_OR_FAIL(st, s, ST_UNIT_DELETE);
        sqlite3_bind_int64(st, 1, (int64_t)id);
        r = kerf__exec_stmt(st);
        if (r == 0 && sqlite3_changes(s->db) == 0)
                return -ENOENT;
        return r;
}

static int unit_fill(sqlite3_stmt *st, void *item)
{
        kerf_store_unit *u = item;

        kerf_store_unit_init(u);
        u->id = (uint64_t)sqlite3_column_int64(st, 0);
        u->task = (uint64_t)sqlite3_column_int64(st, 1); /* NULL reads as 0 */
        kerf__col_cpy(st, 2, u->kind, sizeof(u->kind));
        kerf__col_cpy(st, 3, u->state, sizeof(u->state));
        u->gpu = sqlite3_column_int(st, 4);
        kerf__col_cpy(st, 5, u->gpu_uuid, sizeof(u->gpu_uuid));
        u->mem_bytes = (uint64_t)sqlite3_column_int64(st, 6);
        u->compute_pct = (unsigned)sqlite3_column_int64(st, 7);
        u->compute_limit_pct = (unsigned)sqlite3_column_int64(st, 8);
        kerf__col_cpy(st, 9, u->mig_profile, sizeof(u->mig_profile));
        u->mig_gi = sqlite3_column_int(st, 10);
        u->mig_ci = sqlite3_column_int(st, 11);
        u->mig_start = sqlite3_column_int(st, 12);
        kerf__col_cpy(st, 13, u->mig_uuid, sizeof(u->mig_uuid));
        return 0;
}

int kerf_store_unit_get(kerf_store *s, uint64_t id, kerf_store_unit *ret)
{
        kerf_store_unit u;
        sqlite3_stmt *st;
        int rc;

        if (!s || !ret || id == 0 || id > INT64_MAX)
                return -EINVAL;
        STMT_OR_FAIL(st, s, ST_UNIT_GET);
        sqlite3_bind_int64(st, 1, (int64_t)id);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                unit_fill(st, &u);
                *ret = u;
        }
        sqlite3_reset(st);
        if (rc == SQLITE_ROW)
                return 0;
        return rc == SQLITE_DONE ? -ENOENT : kerf__sqlerr(rc);
}

int kerf_store_unit_list(kerf_store *s, uint64_t task, kerf_store_unit **ret_units, size_t *ret_n)
{
        kerf_store_unit *arr = NULL;
        sqlite3_stmt *st;
        size_t n = 0;
        int r;

        if (!s || !ret_units || !ret_n || task > INT64_MAX)
                return -EINVAL;
        STMT_OR_FAIL(st, s, task ? ST_UNIT_LIST_TASK : ST_UNIT_LIST_ALL);
        if (task)
                sqlite3_bind_int64(st, 1, (int64_t)task);
        r = kerf__collect(st, sizeof(*arr), UINT32_MAX, unit_fill, (void **)&arr, &n, NULL);
        if (r < 0)
                return r;
        *ret_units = arr;
        *ret_n = n;
        return 0;
}

/* ---- events --------------------------------------------------------------------------------- */

int kerf_store_event_append(kerf_store *s, kerf_store_event *e)
{
        sqlite3_stmt *st;
        int64_t t;
        int r;

        if (!s || !e || !fits(e->kind, sizeof(e->kind)) || !e->kind[0] ||
            !fits(e->class, sizeof(e->class)) || !fits(e->text, sizeof(e->text)) ||
            e->unit > INT64_MAX || e->task > INT64_MAX)
                return -EINVAL;
        KERF__FAILPOINT(s, "event_append");
        STMT_OR_FAIL(st, s, ST_EVENT_INSERT);
        t = kerf__now_ms(e->time_ms);
        sqlite3_bind_int64(st, 1, t);
        sqlite3_bind_text(st, 2, e->kind, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 3, e->gpu);
        sqlite3_bind_int64(st, 4, (int64_t)e->unit);
        sqlite3_bind_int64(st, 5, (int64_t)e->task);
        sqlite3_bind_int(st, 6, e->xid);
        sqlite3_bind_text(st, 7, e->class, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 8, e->text, -1, SQLITE_STATIC);
        r = kerf__exec_stmt(st);
        if (r == 0) {
                e->id = (uint64_t)sqlite3_last_insert_rowid(s->db);
                e->time_ms = t;
        }
        return r;
}

static int event_fill(sqlite3_stmt *st, void *item)
{
        kerf_store_event *e = item;

        e->id = (uint64_t)sqlite3_column_int64(st, 0);
        e->time_ms = sqlite3_column_int64(st, 1);
        kerf__col_cpy(st, 2, e->kind, sizeof(e->kind));
        e->gpu = sqlite3_column_int(st, 3);
        e->unit = (uint64_t)sqlite3_column_int64(st, 4);
        e->task = (uint64_t)sqlite3_column_int64(st, 5);
        e->xid = sqlite3_column_int(st, 6);
        kerf__col_cpy(st, 7, e->class, sizeof(e->class));
        kerf__col_cpy(st, 8, e->text, sizeof(e->text));
        return 0;
}

int kerf_store_event_list(kerf_store *s, uint64_t task, uint64_t after, unsigned limit,
                          kerf_store_event **ret_events, size_t *ret_n, uint64_t *ret_next)
{
        kerf_store_event *arr = NULL;
        sqlite3_stmt *st;
        size_t n = 0;
        int r;

        if (!s || !ret_events || !ret_n || task > INT64_MAX)
                return -EINVAL;
        limit = kerf__limit(limit);
        STMT_OR_FAIL(st, s, task ? ST_EVENT_LIST_TASK : ST_EVENT_LIST);
        sqlite3_bind_int64(st, 1, after > INT64_MAX ? INT64_MAX : (int64_t)after);
        sqlite3_bind_int64(st, 2, (int64_t)limit + 1);
        if (task)
                sqlite3_bind_int64(st, 3, (int64_t)task);
        r = kerf__collect(st, sizeof(*arr), limit, event_fill, (void **)&arr, &n, ret_next);
        if (r < 0)
                return r;
        *ret_events = arr;
        *ret_n = n;
        return 0;
}
