/* SPDX-License-Identifier: Apache-2.0 */
/* test_retain.c - the store's side of retention (schema 5): which tasks are due, marks only on
 * ended tasks, rows deleted only when ended, old enough, their files recorded gone and no unit
 * names them; runs and the audit chain survive the deletion; an injected failure writes nothing */
#include <errno.h>
#include <sqlite3.h>

#include "helpers.h"

extern const char *const kerf__migrations[]; /* src/store/schema.c */

static void add(kerf_store *s, uint64_t id, const char *state, int64_t ended_ms)
{
        kerf_store_task t;
        make_task(&t, id, "a", state);
        t.ended_ms = ended_ms;
        t.started_ms = ended_ms ? ended_ms - 10 : 0;
        assert_int_equal(kerf_store_task_insert(s, &t), 0);
}

static void audit(kerf_store *s, const char *action)
{
        kerf_store_audit a;
        memset(&a, 0, sizeof(a));
        snprintf(a.actor, sizeof(a.actor), "kerfd");
        snprintf(a.action, sizeof(a.action), "%s", action);
        snprintf(a.object, sizeof(a.object), "task:1");
        snprintf(a.result, sizeof(a.result), "ok");
        assert_int_equal(kerf_store_audit_append(s, &a), 0);
}

static int count_runs(const kerf_store_run *r, void *ud)
{
        (void)r;
        (*(int *)ud)++;
        return 0;
}

static void ids(kerf_store *s, uint64_t *out, size_t *n)
{
        kerf_store_gc_item *it;
        assert_int_equal(kerf_store_gc_items(s, 0, 100, &it, n), 0);
        for (size_t i = 0; i < *n; i++)
                out[i] = it[i].id;
        kerf_store_gc_items_free(it, *n);
}

static void test_retain(void **state)
{
        fixture *f = *state;
        kerf_store_run r;
        kerf_store_unit u;
        kerf_store_task t;
        kerf_store_audit_report rep;
        kerf_store_gc_item *items;
        uint64_t got[8];
        size_t n;
        unsigned del;
        int64_t oldest, lg, wk;
        int runs = 0;

        add_tenant(f->s, "a");
        add(f->s, 1, "succeeded", 1000);
        add(f->s, 2, "failed", 2000);
        add(f->s, 3, "running", 0);
        add(f->s, 4, "succeeded", 1500);
        memset(&r, 0, sizeof(r));
        r.task = 1;
        snprintf(r.tenant, sizeof(r.tenant), "a");
        snprintf(r.route, sizeof(r.route), "whole");
        snprintf(r.unit_kind, sizeof(r.unit_kind), "whole");
        r.units = 1;
        r.fraction = 1;
        r.started_ms = 990;
        assert_int_equal(kerf_store_run_open(f->s, &r), 0);
        assert_int_equal(kerf_store_run_close(f->s, 1, 1000, -1), 0);
        kerf_store_unit_init(&u);
        u.id = 7;
        u.task = 4;
        snprintf(u.kind, sizeof(u.kind), "mig");
        snprintf(u.state, sizeof(u.state), "ready");
        assert_int_equal(kerf_store_unit_upsert(f->s, &u), 0);
        audit(f->s, "task.end");

        /* due: the ended tasks, never the running one */
        ids(f->s, got, &n);
        assert_int_equal(n, 3);
        assert_int_equal(got[0], 1);
        assert_int_equal(got[1], 2);
        assert_int_equal(got[2], 4);
        /* marks: ended tasks only */
        assert_int_equal(kerf_store_gc_mark(f->s, 3, 5000, 5000, true), -ENOENT);
        assert_int_equal(kerf_store_gc_mark(f->s, 99, 5000, 0, false), -ENOENT);
        assert_int_equal(kerf_store_gc_mark(f->s, 1, 5000, 0, false), 0);
        assert_int_equal(kerf_store_gc_mark(f->s, 1, 0, 6000, false), 0); /* logs kept */
        assert_int_equal(kerf_store_gc_gone(f->s, 1, &lg, &wk), 0);
        assert_int_equal(lg, 5000);
        assert_int_equal(wk, 6000);
        assert_int_equal(kerf_store_gc_gone(f->s, 3, &lg, &wk), 0);
        assert_int_equal(lg, 0);
        assert_int_equal(kerf_store_gc_gone(f->s, 99, &lg, &wk), -ENOENT);
        assert_int_equal(kerf_store_gc_mark(f->s, 2, 5000, 0, true), 0); /* work dir left */
        assert_int_equal(kerf_store_gc_mark(f->s, 4, 5000, 5000, true), 0);

        /* rows: only 1 (2's work dir is not gone, 4 is named by a unit, 3 is running) */
        assert_int_equal(kerf_store_gc_tasks(f->s, 3000, 100, true, &del, &oldest), 0);
        assert_int_equal(del, 1);
        assert_int_equal(oldest, 1000);
        assert_int_equal(kerf_store_task_get(f->s, 1, &t), 0); /* the dry run kept it */
        kerf_store_task_fini(&t);
        /* an injected failure deletes nothing */
        assert_int_equal(kerf_store_fail_set(f->s, "gc_tasks"), 0);
        assert_int_equal(kerf_store_gc_tasks(f->s, 3000, 100, false, &del, NULL), -EIO);
        assert_int_equal(kerf_store_fail_set(f->s, NULL), 0);
        assert_int_equal(kerf_store_task_get(f->s, 1, &t), 0);
        kerf_store_task_fini(&t);
        /* not yet old enough */
        assert_int_equal(kerf_store_gc_tasks(f->s, 999, 100, false, &del, NULL), 0);
        assert_int_equal(del, 0);
        assert_int_equal(kerf_store_gc_tasks(f->s, 3000, 100, false, &del, &oldest), 0);
        assert_int_equal(del, 1);
        assert_int_equal(kerf_store_task_get(f->s, 1, &t), -ENOENT);
        assert_int_equal(kerf_store_task_get(f->s, 4, &t), 0);
        kerf_store_task_fini(&t);
        assert_int_equal(kerf_store_task_get(f->s, 3, &t), 0);
        kerf_store_task_fini(&t);

        /* its run and the audit chain stay */
        assert_int_equal(kerf_store_run_foreach(f->s, NULL, 0, INT64_MAX, count_runs, &runs), 0);
        assert_int_equal(runs, 1);
        audit(f->s, "node.gc");
        assert_int_equal(kerf_store_audit_verify(f->s, &rep), 0);
        assert_true(rep.ok);
        assert_int_equal(rep.records, 2);

        /* 4 (all done) left the due set; 2 stays until its work dir is gone */
        ids(f->s, got, &n);
        assert_int_equal(n, 1);
        assert_int_equal(got[0], 2);
        assert_int_equal(kerf_store_gc_items(f->s, 0, 0, &items, &n), -EINVAL);
}

/* A schema 4 database (runs with their foreign key on tasks) migrates to 5: its runs and
 * tasks are kept, the new columns are 0, and a task row with a run can then be deleted. */
static void test_migrate_from_4(void **state)
{
        fixture *f = *state;
        char path[400], err[256] = "";
        sqlite3 *db;
        kerf_store *s;
        kerf_store_task t;
        kerf_store_run r;
        int64_t lg = -1, wk = -1;
        unsigned del;
        int runs = 0;

        snprintf(path, sizeof(path), "%s/v4.db", f->dir);
        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        for (int v = 1; v <= 4; v++)
                assert_int_equal(sqlite3_exec(db, kerf__migrations[v], NULL, NULL, NULL),
                                 SQLITE_OK);
        assert_int_equal(
            sqlite3_exec(db,
                         "INSERT INTO meta VALUES ('kerf.schema', '4');"
                         "INSERT INTO tenants (name) VALUES ('a');"
                         "INSERT INTO tasks (id, tenant, queue, state, request, uid, gid, pid,"
                         " pgid, proc_start, exit_code, signal, submitted_ms, started_ms,"
                         " ended_ms, preemptions, restarts) VALUES (1, 'a', 'q', 'succeeded',"
                         " '{}', 0, 0, 0, 0, 0, 0, 0, 900, 990, 1000, 0, 0);"
                         "INSERT INTO runs (task, tenant, route, unit_kind, units, fraction,"
                         " started_ms, ended_ms) VALUES (1, 'a', 'whole', 'whole', 1, 1, 990,"
                         " 1000);",
                         NULL, NULL, NULL),
            SQLITE_OK);
        sqlite3_close(db);

        assert_int_equal(kerf_store_open(path, NULL, &s, err, sizeof(err)), 0);
        assert_int_equal(kerf_store_schema_version(s), KERF_STORE_SCHEMA_VERSION);
        assert_int_equal(kerf_store_run_foreach(s, NULL, 0, INT64_MAX, count_runs, &runs), 0);
        assert_int_equal(runs, 1);
        assert_int_equal(kerf_store_gc_gone(s, 1, &lg, &wk), 0);
        assert_int_equal(lg, 0);
        assert_int_equal(wk, 0);
        memset(&r, 0, sizeof(r));
        r.task = 2; /* no such task: still refused without the foreign key */
        snprintf(r.tenant, sizeof(r.tenant), "a");
        snprintf(r.route, sizeof(r.route), "whole");
        snprintf(r.unit_kind, sizeof(r.unit_kind), "whole");
        r.units = 1;
        r.fraction = 1;
        r.started_ms = 990;
        assert_int_equal(kerf_store_run_open(s, &r), -ENOENT);
        assert_int_equal(kerf_store_gc_mark(s, 1, 2000, 2000, true), 0);
        assert_int_equal(kerf_store_gc_tasks(s, 3000, 10, false, &del, NULL), 0);
        assert_int_equal(del, 1);
        assert_int_equal(kerf_store_task_get(s, 1, &t), -ENOENT);
        runs = 0;
        assert_int_equal(kerf_store_run_foreach(s, NULL, 0, INT64_MAX, count_runs, &runs), 0);
        assert_int_equal(runs, 1);
        kerf_store_close(s);
        unlink(path);
        snprintf(path, sizeof(path), "%s/v4.db-wal", f->dir);
        unlink(path);
        snprintf(path, sizeof(path), "%s/v4.db-shm", f->dir);
        unlink(path);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_retain, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_migrate_from_4, fx_setup, fx_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
