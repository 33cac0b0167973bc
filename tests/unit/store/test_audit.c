/* SPDX-License-Identifier: Apache-2.0 */
/* test_audit.c - the audit chain: append, query, export, and verify against tampering */
#include <errno.h>
#include <jansson.h>
#include <sqlite3.h>

#include "helpers.h"

#define N_RECORDS 10

static void build_chain(kerf_store *s)
{
        kerf_store_audit a;

        assert_int_equal(kerf_store_set_versions(s, "550.54.15", "12.4", "0.1.0"), 0);
        for (int i = 1; i <= N_RECORDS; i++) {
                memset(&a, 0, sizeof(a));
                snprintf(a.actor, sizeof(a.actor), i % 2 ? "uid:0" : "tenant:serving");
                snprintf(a.tenant, sizeof(a.tenant), i % 2 ? "research" : "serving");
                snprintf(a.action, sizeof(a.action), "task.submit");
                snprintf(a.object, sizeof(a.object), "task:%d", i);
                snprintf(a.result, sizeof(a.result), "ok");
                snprintf(a.reason, sizeof(a.reason), "submitted \"quoted\" \\ %d", i);
                snprintf(a.gpu_uuid, sizeof(a.gpu_uuid), "GPU-%04d", i);
                if (i == 3)
                        snprintf(a.driver, sizeof(a.driver), "560.1");
                assert_int_equal(kerf_store_audit_append(s, &a), 0);
                assert_int_equal(a.seq, (uint64_t)i);
                assert_int_equal(strlen(a.hash), 64);
                assert_string_equal(a.driver, i == 3 ? "560.1" : "550.54.15");
                assert_string_equal(a.kerf, "0.1.0");
        }
}

static void tamper(const char *path, const char *sql)
{
        sqlite3 *db;
        char *msg = NULL;

        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        /* an attacker with write access first removes the append-only triggers */
        assert_int_equal(sqlite3_exec(db,
                                      "DROP TRIGGER audit_no_update; DROP TRIGGER "
                                      "audit_no_delete;",
                                      NULL, NULL, &msg),
                         SQLITE_OK);
        if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
                fail_msg("tamper SQL failed: %s", msg);
        sqlite3_close(db);
}

static void expect_bad(fixture *f, uint64_t seq, const char *words)
{
        kerf_store_audit_report rep;

        assert_int_equal(kerf_store_audit_verify(f->s, &rep), 0);
        if (rep.ok || rep.first_bad != seq || !strstr(rep.problem, words))
                fail_msg("expected seq %llu '%s', got ok=%d seq %llu '%s'", (unsigned long long)seq,
                         words, rep.ok, (unsigned long long)rep.first_bad, rep.problem);
}

static void test_untouched(void **state)
{
        fixture *f = *state;
        kerf_store_audit_report rep;
        kerf_store_audit *arr;
        char hash[KERF_STORE_HASH_HEX];
        uint64_t count, next;
        size_t n;
        sqlite3 *db;

        assert_int_equal(kerf_store_audit_verify(f->s, &rep), 0); /* empty chain */
        assert_true(rep.ok);
        assert_int_equal(rep.records, 0);
        build_chain(f->s);
        assert_int_equal(kerf_store_audit_verify(f->s, &rep), 0);
        assert_true(rep.ok);
        assert_int_equal(rep.records, N_RECORDS);
        assert_int_equal(rep.first_bad, 0);
        assert_string_equal(rep.problem, "");

        assert_int_equal(kerf_store_audit_head(f->s, &count, hash), 0);
        assert_int_equal(count, N_RECORDS);
        assert_int_equal(kerf_store_audit_list(f->s, NULL, 0, 0, &arr, &n, &next), 0);
        assert_int_equal(n, N_RECORDS);
        assert_string_equal(arr[N_RECORDS - 1].hash, hash);
        assert_string_equal(arr[0].prev_hash, "0000000000000000000000000000000000000000000000000"
                                              "000000000000000");
        for (size_t i = 1; i < n; i++)
                assert_string_equal(arr[i].prev_hash, arr[i - 1].hash);
        free(arr);

        /* tenant filter + pagination */
        assert_int_equal(kerf_store_audit_list(f->s, "serving", 0, 3, &arr, &n, &next), 0);
        assert_int_equal(n, 3);
        assert_int_equal(arr[0].seq, 2);
        assert_int_equal(next, 6);
        free(arr);
        assert_int_equal(kerf_store_audit_list(f->s, "serving", next, 3, &arr, &n, &next), 0);
        assert_int_equal(n, 2);
        assert_int_equal(next, 0);
        free(arr);

        /* the append-only triggers refuse a plain UPDATE / DELETE */
        assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
        assert_int_not_equal(sqlite3_exec(db, "UPDATE audit SET result = 'x'", NULL, NULL, NULL),
                             SQLITE_OK);
        assert_int_not_equal(sqlite3_exec(db, "DELETE FROM audit", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
}

static void test_export(void **state)
{
        fixture *f = *state;
        char line[2048];
        FILE *fp = tmpfile();
        int lines = 0;

        assert_non_null(fp);
        build_chain(f->s);
        assert_int_equal(kerf_store_audit_export(f->s, NULL, 0, fp), N_RECORDS);
        rewind(fp);
        while (fgets(line, sizeof(line), fp)) {
                json_error_t err;
                json_t *o = json_loads(line, 0, &err);

                assert_non_null(o);
                lines++;
                assert_int_equal(json_integer_value(json_object_get(o, "seq")), lines);
                assert_string_equal(json_string_value(json_object_get(o, "action")), "task.submit");
                assert_non_null(
                    strstr(json_string_value(json_object_get(o, "reason")), "\"quoted\" \\"));
                assert_int_equal(strlen(json_string_value(json_object_get(o, "hash"))), 64);
                assert_non_null(json_object_get(o, "cuda"));
                json_decref(o);
        }
        assert_int_equal(lines, N_RECORDS);
        fclose(fp);
        fp = tmpfile();
        assert_int_equal(kerf_store_audit_export(f->s, "research", 4, fp), 3); /* 5, 7, 9 */
        fclose(fp);
}

static void test_edited(void **state)
{
        fixture *f = *state;

        build_chain(f->s);
        tamper(f->path, "UPDATE audit SET result = 'denied' WHERE seq = 4");
        expect_bad(f, 4, "edited");
}

static void test_edited_hash_too(void **state)
{
        fixture *f = *state;

        build_chain(f->s); /* editing a field and the record's own hash breaks the next link */
        tamper(f->path, "UPDATE audit SET tenant = 'x', hash = 'aa' || substr(hash, 3)"
                        " WHERE seq = 7");
        expect_bad(f, 7, "edited");
}

static void test_deleted(void **state)
{
        fixture *f = *state;

        build_chain(f->s);
        tamper(f->path, "DELETE FROM audit WHERE seq = 6");
        expect_bad(f, 6, "missing");
}

static void test_deleted_renumbered(void **state)
{
        fixture *f = *state;

        build_chain(f->s);
        tamper(f->path, "DELETE FROM audit WHERE seq = 6;"
                        "UPDATE audit SET seq = seq + 1000 WHERE seq > 6;"
                        "UPDATE audit SET seq = seq - 1001 WHERE seq > 1000;");
        expect_bad(f, 6, "chain break");
}

static void test_inserted(void **state)
{
        fixture *f = *state;

        build_chain(f->s);
        tamper(f->path, "UPDATE audit SET seq = seq + 1000 WHERE seq >= 5;"
                        "UPDATE audit SET seq = seq - 999 WHERE seq >= 1000;"
                        "INSERT INTO audit SELECT 5, time_ms, actor, tenant, 'task.cancel',"
                        " object, result, reason, gpu_uuid, driver, cuda, kerf, hash,"
                        " 'ff' || substr(hash, 3), node FROM audit WHERE seq = 4;");
        expect_bad(f, 5, "edited");
}

/* The node a record names is part of its hash (schema 4); records without one verify as they
 * always did (their hash never covered a node). */
static void test_node(void **state)
{
        fixture *f = *state;
        kerf_store_audit a = {0};
        kerf_store_audit_report rep;

        assert_int_equal(kerf_store_set_node(f->s, "n7"), 0);
        build_chain(f->s);
        snprintf(a.actor, sizeof(a.actor), "admin");
        snprintf(a.action, sizeof(a.action), "task.cancel");
        snprintf(a.object, sizeof(a.object), "task:1");
        snprintf(a.result, sizeof(a.result), "ok");
        assert_int_equal(kerf_store_audit_append(f->s, &a), 0);
        assert_string_equal(a.node, "n7");
        char *j = kerf_store_audit_json(&a);
        assert_non_null(strstr(j, "\"node\":\"n7\""));
        free(j);
        assert_int_equal(kerf_store_audit_verify(f->s, &rep), 0);
        assert_true(rep.ok);
        tamper(f->path, "UPDATE audit SET node = 'n8' WHERE seq = 3;");
        expect_bad(f, 3, "edited");
}

static void test_appended(void **state)
{
        fixture *f = *state;

        build_chain(f->s);
        tamper(f->path, "INSERT INTO audit SELECT 11, time_ms, actor, tenant, action, object,"
                        " result, reason, gpu_uuid, driver, cuda, kerf, hash, hash, node FROM"
                        " audit WHERE seq = 10;");
        expect_bad(f, 11, "edited");
}

static void test_truncated(void **state)
{
        fixture *f = *state;

        build_chain(f->s);
        tamper(f->path, "DELETE FROM audit WHERE seq >= 9");
        expect_bad(f, 9, "truncated");
}

static void test_duplicate_seq_refused(void **state)
{
        fixture *f = *state;
        sqlite3 *db;

        build_chain(f->s);
        assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
        assert_int_not_equal(sqlite3_exec(db, "INSERT INTO audit SELECT * FROM audit WHERE seq = 3",
                                          NULL, NULL, NULL),
                             SQLITE_OK);
        sqlite3_close(db);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_untouched, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_export, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_edited, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_edited_hash_too, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_deleted, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_deleted_renumbered, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_inserted, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_node, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_appended, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_truncated, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_duplicate_seq_refused, fx_setup, fx_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
