/* SPDX-License-Identifier: Apache-2.0 */
/* run.c - the runs of tasks on their units: what each start held and for how long (cost) */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "kerf/errno.h"

#define STMT_OR_FAIL(st, s, id)                                                                    \
        do {                                                                                       \
                (st) = kerf__stmt((s), (id));                                                      \
                if (!(st))                                                                         \
                        return kerf__sqlerr(sqlite3_errcode((s)->db));                             \
        } while (0)

static bool fits(const char *v, size_t len)
{
        return strnlen(v, len) < len;
}

static int run_valid(const kerf_store_run *r)
{
        if (!r || r->task == 0 || r->task > INT64_MAX || !fits(r->tenant, sizeof(r->tenant)) ||
            !r->tenant[0] || !fits(r->route, sizeof(r->route)) || !r->route[0] ||
            !fits(r->unit_kind, sizeof(r->unit_kind)) || !r->unit_kind[0] || r->units == 0 ||
            !isfinite(r->fraction) || r->fraction <= 0 || r->started_ms <= 0)
                return -EINVAL;
        return 0;
}

int kerf_store_run_open(kerf_store *s, kerf_store_run *r)
{
        sqlite3_stmt *st;
        int64_t start, last_end;
        int rc, res;

        if (!s || run_valid(r) < 0)
                return -EINVAL;
        KERF__FAILPOINT(s, "run_open");
        if ((res = kerf__sp_begin(s)) < 0)
                return res;
        /* an open run of this task already: the same start, written again */
        st = kerf__stmt(s, ST_RUN_UPDATE_OPEN);
        if (!st) {
                res = kerf__sqlerr(sqlite3_errcode(s->db));
                goto out;
        }
        sqlite3_bind_int64(st, 1, (int64_t)r->task);
        sqlite3_bind_text(st, 2, r->tenant, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, r->route, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, r->unit_kind, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, r->units);
        sqlite3_bind_double(st, 6, r->fraction);
        if ((res = kerf__exec_stmt(st)) < 0 || sqlite3_changes(s->db) > 0)
                goto out;
        st = kerf__stmt(s, ST_RUN_LAST_END);
        if (!st) {
                res = kerf__sqlerr(sqlite3_errcode(s->db));
                goto out;
        }
        sqlite3_bind_int64(st, 1, (int64_t)r->task);
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) {
                res = kerf__sqlerr(rc);
                goto out;
        }
        last_end = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        start = r->started_ms > last_end ? r->started_ms : last_end;
        /* runs have no foreign key on tasks since schema 5 (a run outlives its task row):
         * a run of a task that does not exist is still refused */
        st = kerf__stmt(s, ST_TASK_GET);
        if (!st) {
                res = kerf__sqlerr(sqlite3_errcode(s->db));
                goto out;
        }
        sqlite3_bind_int64(st, 1, (int64_t)r->task);
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_ROW) {
                res = rc == SQLITE_DONE ? -ENOENT : kerf__sqlerr(rc);
                goto out;
        }
        st = kerf__stmt(s, ST_RUN_INSERT);
        if (!st) {
                res = kerf__sqlerr(sqlite3_errcode(s->db));
                goto out;
        }
        sqlite3_bind_int64(st, 1, (int64_t)r->task);
        sqlite3_bind_text(st, 2, r->tenant, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, r->route, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, r->unit_kind, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, r->units);
        sqlite3_bind_double(st, 6, r->fraction);
        sqlite3_bind_int64(st, 7, start);
        res = kerf__exec_stmt(st);
        if (res == 0) {
                r->id = (uint64_t)sqlite3_last_insert_rowid(s->db);
                r->started_ms = start;
        }
out:
        return kerf__sp_end(s, res);
}

int kerf_store_run_close(kerf_store *s, uint64_t task, int64_t end_ms, int64_t used_ns)
{
        sqlite3_stmt *st;

        if (!s || task == 0 || task > INT64_MAX || end_ms <= 0 || used_ns < -1)
                return -EINVAL;
        KERF__FAILPOINT(s, "run_close");
        STMT_OR_FAIL(st, s, ST_RUN_CLOSE);
        sqlite3_bind_int64(st, 1, (int64_t)task);
        sqlite3_bind_int64(st, 2, end_ms);
        if (used_ns >= 0)
                sqlite3_bind_int64(st, 3, used_ns);
        else
                sqlite3_bind_null(st, 3);
        return kerf__exec_stmt(st);
}

int kerf_store_run_close_ended(kerf_store *s, unsigned *ret_n)
{
        sqlite3_stmt *st;
        int r;

        if (!s)
                return -EINVAL;
        KERF__FAILPOINT(s, "run_close");
        STMT_OR_FAIL(st, s, ST_RUN_CLOSE_ENDED);
        r = kerf__exec_stmt(st);
        if (r == 0 && ret_n)
                *ret_n = (unsigned)sqlite3_changes(s->db);
        return r;
}

int kerf_store_run_foreach(kerf_store *s, const char *tenant, int64_t from_ms, int64_t to_ms,
                           kerf_store_run_cb cb, void *userdata)
{
        sqlite3_stmt *st;
        int rc, r = 0;

        if (!s || !cb || from_ms < 0 || to_ms < from_ms)
                return -EINVAL;
        STMT_OR_FAIL(st, s, ST_RUN_PERIOD);
        sqlite3_bind_int64(st, 1, from_ms);
        sqlite3_bind_int64(st, 2, to_ms);
        sqlite3_bind_text(st, 3, tenant ? tenant : "", -1, SQLITE_TRANSIENT);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                kerf_store_run run;
                memset(&run, 0, sizeof(run));
                run.id = (uint64_t)sqlite3_column_int64(st, 0);
                run.task = (uint64_t)sqlite3_column_int64(st, 1);
                kerf__col_cpy(st, 2, run.tenant, sizeof(run.tenant));
                kerf__col_cpy(st, 3, run.route, sizeof(run.route));
                kerf__col_cpy(st, 4, run.unit_kind, sizeof(run.unit_kind));
                run.units = (unsigned)sqlite3_column_int64(st, 5);
                run.fraction = sqlite3_column_double(st, 6);
                run.started_ms = sqlite3_column_int64(st, 7);
                run.ended_ms = sqlite3_column_int64(st, 8);
                run.used_ns =
                    sqlite3_column_type(st, 9) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 9);
                if ((r = cb(&run, userdata)) < 0)
                        break;
        }
        if (r >= 0 && rc != SQLITE_DONE)
                r = kerf__sqlerr(rc);
        sqlite3_reset(st);
        return r < 0 ? r : 0;
}
