/* SPDX-License-Identifier: Apache-2.0 */
/* retain.c - retention's view of the tasks table: what is due, what was removed, old rows */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kerf/errno.h"

/* Retention runs at most once a pass (default hourly): its statements are prepared per call
 * rather than kept with the hot ones in kerf__sql. */
static int prep(kerf_store *s, const char *sql, sqlite3_stmt **ret)
{
        if (sqlite3_prepare_v2(s->db, sql, -1, ret, NULL) != SQLITE_OK)
                return kerf__sqlerr(sqlite3_errcode(s->db));
        return 0;
}

void kerf_store_gc_items_free(kerf_store_gc_item *items, size_t n)
{
        for (size_t i = 0; items && i < n; i++) {
                free(items[i].log_stdout);
                free(items[i].log_stderr);
        }
        free(items);
}

int kerf_store_gc_items(kerf_store *s, uint64_t after, unsigned limit,
                        kerf_store_gc_item **ret_items, size_t *ret_n)
{
        /* the WHERE repeats tasks_gc's own terms, so that the partial index serves it */
        static const char sql[] =
            "SELECT id, ended_ms, log_stdout, log_stderr, logs_gone_ms, work_gone_ms, logs_capped"
            " FROM tasks WHERE ended_ms > 0 AND"
            " (logs_gone_ms = 0 OR work_gone_ms = 0 OR logs_capped = 0) AND id > ?1"
            " ORDER BY id LIMIT ?2";
        kerf_store_gc_item *items;
        sqlite3_stmt *st;
        size_t n = 0;
        bool ok = true;
        int r, rc;

        if (!s || !ret_items || !ret_n || limit < 1 || limit > 10000 || after > INT64_MAX)
                return -EINVAL;
        items = calloc(limit, sizeof(*items));
        if (!items)
                return -ENOMEM;
        if ((r = prep(s, sql, &st)) < 0) {
                free(items);
                return r;
        }
        sqlite3_bind_int64(st, 1, (int64_t)after);
        sqlite3_bind_int64(st, 2, limit);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW && n < limit) {
                kerf_store_gc_item *it = &items[n++];
                it->id = (uint64_t)sqlite3_column_int64(st, 0);
                it->ended_ms = sqlite3_column_int64(st, 1);
                it->log_stdout = kerf__col_dup(st, 2, &ok);
                it->log_stderr = kerf__col_dup(st, 3, &ok);
                it->logs_gone_ms = sqlite3_column_int64(st, 4);
                it->work_gone_ms = sqlite3_column_int64(st, 5);
                it->logs_capped = sqlite3_column_int64(st, 6) != 0;
        }
        r = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : kerf__sqlerr(rc);
        sqlite3_finalize(st);
        if (!ok && r == 0)
                r = -ENOMEM;
        if (r < 0) {
                kerf_store_gc_items_free(items, n);
                return r;
        }
        *ret_items = items;
        *ret_n = n;
        return 0;
}

int kerf_store_gc_mark(kerf_store *s, uint64_t id, int64_t logs_gone_ms, int64_t work_gone_ms,
                       bool capped)
{
        static const char sql[] =
            "UPDATE tasks SET logs_gone_ms = CASE WHEN ?2 > 0 THEN ?2 ELSE logs_gone_ms END,"
            " work_gone_ms = CASE WHEN ?3 > 0 THEN ?3 ELSE work_gone_ms END,"
            " logs_capped = MAX(logs_capped, ?4) WHERE id = ?1 AND ended_ms > 0";
        sqlite3_stmt *st;
        int r;

        if (!s || id == 0 || id > INT64_MAX || logs_gone_ms < 0 || work_gone_ms < 0)
                return -EINVAL;
        KERF__FAILPOINT(s, "gc_mark");
        if ((r = prep(s, sql, &st)) < 0)
                return r;
        sqlite3_bind_int64(st, 1, (int64_t)id);
        sqlite3_bind_int64(st, 2, logs_gone_ms);
        sqlite3_bind_int64(st, 3, work_gone_ms);
        sqlite3_bind_int(st, 4, capped ? 1 : 0);
        r = kerf__exec_stmt(st);
        if (r == 0 && sqlite3_changes(s->db) == 0)
                r = -ENOENT;
        sqlite3_finalize(st);
        return r;
}

int kerf_store_gc_gone(kerf_store *s, uint64_t id, int64_t *ret_logs_ms, int64_t *ret_work_ms)
{
        static const char sql[] = "SELECT logs_gone_ms, work_gone_ms FROM tasks WHERE id = ?1";
        sqlite3_stmt *st;
        int r, rc;

        if (!s || id > INT64_MAX)
                return -EINVAL;
        if ((r = prep(s, sql, &st)) < 0)
                return r;
        sqlite3_bind_int64(st, 1, (int64_t)id);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                if (ret_logs_ms)
                        *ret_logs_ms = sqlite3_column_int64(st, 0);
                if (ret_work_ms)
                        *ret_work_ms = sqlite3_column_int64(st, 1);
                r = 0;
        } else {
                r = rc == SQLITE_DONE ? -ENOENT : kerf__sqlerr(rc);
        }
        sqlite3_finalize(st);
        return r;
}

int kerf_store_gc_tasks(kerf_store *s, int64_t before_ms, unsigned limit, bool dry_run,
                        unsigned *ret_n, int64_t *ret_oldest)
{
        /* only rows whose files are recorded gone (nothing on disk is left without its row) and
         * that no unit names (units.task is a foreign key); runs, events and audit stay */
        static const char pick[] =
            "SELECT COUNT(*), IFNULL(MIN(ended_ms), 0) FROM (SELECT id, ended_ms FROM tasks"
            " WHERE ended_ms > 0 AND ended_ms <= ?1 AND logs_gone_ms > 0 AND work_gone_ms > 0"
            " AND NOT EXISTS (SELECT 1 FROM units WHERE units.task = tasks.id)"
            " ORDER BY ended_ms LIMIT ?2)";
        static const char del[] =
            "DELETE FROM tasks WHERE id IN (SELECT id FROM tasks WHERE ended_ms > 0 AND"
            " ended_ms <= ?1 AND logs_gone_ms > 0 AND work_gone_ms > 0 AND NOT EXISTS"
            " (SELECT 1 FROM units WHERE units.task = tasks.id) ORDER BY ended_ms LIMIT ?2)";
        sqlite3_stmt *st;
        unsigned n = 0;
        int64_t oldest = 0;
        int r, rc;

        if (!s || !ret_n || before_ms <= 0 || limit < 1)
                return -EINVAL;
        if (!dry_run)
                KERF__FAILPOINT(s, "gc_tasks");
        if ((r = kerf__sp_begin(s)) < 0)
                return r;
        if ((r = prep(s, pick, &st)) < 0)
                goto out;
        sqlite3_bind_int64(st, 1, before_ms);
        sqlite3_bind_int64(st, 2, limit);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                n = (unsigned)sqlite3_column_int64(st, 0);
                oldest = sqlite3_column_int64(st, 1);
        } else {
                r = kerf__sqlerr(rc);
        }
        sqlite3_finalize(st);
        if (r < 0 || dry_run || n == 0)
                goto out;
        if ((r = prep(s, del, &st)) < 0)
                goto out;
        sqlite3_bind_int64(st, 1, before_ms);
        sqlite3_bind_int64(st, 2, limit);
        r = kerf__exec_stmt(st);
        if (r == 0)
                n = (unsigned)sqlite3_changes(s->db);
        sqlite3_finalize(st);
out:
        r = kerf__sp_end(s, r);
        if (r >= 0) {
                *ret_n = n;
                if (ret_oldest)
                        *ret_oldest = oldest;
        }
        return r;
}
