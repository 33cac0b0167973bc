/* SPDX-License-Identifier: Apache-2.0 */
/* test_members.c - schema 7: the members of an attached task (add, list in join order,
 * delete one or all, refused duplicates and unknown tasks, failure injection, removal with the
 * task row); a schema 6 database migrates to 7 */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>

#include "helpers.h"

extern const char *const kerf__migrations[]; /* src/store/schema.c */

static kerf_store_member member(uint64_t task, int64_t pid, uint64_t start)
{
        kerf_store_member m = {.task = task, .pid = pid, .proc_start = start};
        return m;
}

static void test_members(void **state)
{
        fixture *f = *state;
        kerf_store_task t;
        kerf_store_member m, *list = NULL;
        size_t n = 9;
        unsigned del = 0;

        add_tenant(f->s, "a");
        make_task(&t, 3, "a", "running");
        t.argv_json = NULL;
        t.pid = 100;
        assert_int_equal(kerf_store_task_insert(f->s, &t), 0);

        assert_int_equal(kerf_store_member_list(f->s, 3, &list, &n), 0);
        assert_int_equal(n, 0);
        assert_null(list);
        /* joined in this order: 300, then 200 (the list is in join order, not by pid) */
        m = member(3, 300, 31);
        assert_int_equal(kerf_store_member_add(f->s, &m), 0);
        m = member(3, 200, 21);
        assert_int_equal(kerf_store_member_add(f->s, &m), 0);
        assert_int_equal(kerf_store_member_add(f->s, &m), -EEXIST);
        m = member(4, 200, 21); /* no task 4 */
        assert_int_equal(kerf_store_member_add(f->s, &m), -ENOENT);
        m = member(3, 0, 1);
        assert_int_equal(kerf_store_member_add(f->s, &m), -EINVAL);
        m = member(0, 5, 1);
        assert_int_equal(kerf_store_member_add(f->s, &m), -EINVAL);
        assert_int_equal(kerf_store_member_list(f->s, 3, &list, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(list[0].pid, 300);
        assert_int_equal(list[0].proc_start, 31);
        assert_int_equal(list[0].task, 3);
        assert_int_equal(list[1].pid, 200);
        assert_int_equal(list[1].proc_start, 21);
        free(list);

        /* an injected failure changes nothing */
        assert_int_equal(kerf_store_fail_set(f->s, "member_add"), 0);
        m = member(3, 400, 41);
        assert_int_equal(kerf_store_member_add(f->s, &m), -EIO);
        assert_int_equal(kerf_store_fail_set(f->s, NULL), 0);
        assert_int_equal(kerf_store_member_list(f->s, 3, &list, &n), 0);
        assert_int_equal(n, 2);
        free(list);

        /* one goes; a pid that is not there is no error; a new member comes after the rest */
        assert_int_equal(kerf_store_member_delete(f->s, 3, 300), 0);
        assert_int_equal(kerf_store_member_delete(f->s, 3, 300), 0);
        m = member(3, 300, 32);
        assert_int_equal(kerf_store_member_add(f->s, &m), 0);
        assert_int_equal(kerf_store_member_list(f->s, 3, &list, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(list[0].pid, 200);
        assert_int_equal(list[1].pid, 300);
        assert_int_equal(list[1].proc_start, 32);
        free(list);
        assert_int_equal(kerf_store_member_delete(f->s, 3, -1), -EINVAL);
        /* pid 0: all of them */
        assert_int_equal(kerf_store_member_delete(f->s, 3, 0), 0);
        assert_int_equal(kerf_store_member_list(f->s, 3, &list, &n), 0);
        assert_int_equal(n, 0);

        /* a task row removed by retention takes its members with it */
        m = member(3, 500, 51);
        assert_int_equal(kerf_store_member_add(f->s, &m), 0);
        snprintf(t.state, sizeof(t.state), "succeeded");
        t.started_ms = 900;
        t.ended_ms = 1000;
        assert_int_equal(kerf_store_task_update(f->s, &t), 0);
        assert_int_equal(kerf_store_gc_mark(f->s, 3, 2000, 2000, true), 0);
        assert_int_equal(kerf_store_gc_tasks(f->s, 3000, 10, false, &del, NULL), 0);
        assert_int_equal(del, 1);
        make_task(&t, 3, "a", "running"); /* the same id again: no member left behind */
        assert_int_equal(kerf_store_task_insert(f->s, &t), 0);
        assert_int_equal(kerf_store_member_list(f->s, 3, &list, &n), 0);
        assert_int_equal(n, 0);
}

/* A schema 6 database opens as 7: its tasks kept, members can be added. */
static void test_migrate_from_6(void **state)
{
        fixture *f = *state;
        char path[400], err[256] = "";
        const char *sfx[] = {"", "-wal", "-shm"};
        sqlite3 *db;
        kerf_store *s;
        kerf_store_task t;
        kerf_store_member m = member(1, 77, 7), *list = NULL;
        size_t n = 0;

        snprintf(path, sizeof(path), "%s/v6.db", f->dir);
        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        for (int v = 1; v <= 6; v++)
                assert_int_equal(sqlite3_exec(db, kerf__migrations[v], NULL, NULL, NULL),
                                 SQLITE_OK);
        assert_int_equal(
            sqlite3_exec(db,
                         "INSERT INTO meta VALUES ('kerf.schema', '6');"
                         "INSERT INTO tenants (name) VALUES ('a');"
                         "INSERT INTO tasks (id, tenant, queue, state, request, uid, gid, pid,"
                         " pgid, proc_start, exit_code, signal, submitted_ms, started_ms,"
                         " ended_ms, preemptions, restarts) VALUES (1, 'a', 'q', 'running',"
                         " '{}', 0, 0, 55, 0, 0, -1, 0, 900, 990, 0, 0, 0);",
                         NULL, NULL, NULL),
            SQLITE_OK);
        sqlite3_close(db);

        assert_int_equal(kerf_store_open(path, NULL, &s, err, sizeof(err)), 0);
        assert_int_equal(kerf_store_schema_version(s), KERF_STORE_SCHEMA_VERSION);
        assert_int_equal(kerf_store_task_get(s, 1, &t), 0);
        assert_int_equal(t.pid, 55);
        kerf_store_task_fini(&t);
        assert_int_equal(kerf_store_member_add(s, &m), 0);
        assert_int_equal(kerf_store_member_list(s, 1, &list, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(list[0].pid, 77);
        free(list);
        kerf_store_close(s);
        for (int i = 0; i < 3; i++) {
                snprintf(path, sizeof(path), "%s/v6.db%s", f->dir, sfx[i]);
                unlink(path);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_members, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_migrate_from_6, fx_setup, fx_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
