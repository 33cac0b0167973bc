/* SPDX-License-Identifier: Apache-2.0 */
/* test_anchor.c - issue 8 R4: signed checkpoints anchor the audit chain outside the database;
 * truncating the tail (audit_head fixed in the same edit) and rewriting the head are caught,
 * offline, from an export file */
#include <errno.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include "helpers.h"

static void append_n(kerf_store *s, int from, int to)
{
        kerf_store_audit a;

        for (int i = from; i <= to; i++) {
                memset(&a, 0, sizeof(a));
                snprintf(a.actor, sizeof(a.actor), "uid:0");
                snprintf(a.tenant, sizeof(a.tenant), "t%d", i % 3);
                snprintf(a.action, sizeof(a.action), "task.submit");
                snprintf(a.object, sizeof(a.object), "task:%d", i);
                snprintf(a.result, sizeof(a.result), "ok");
                assert_int_equal(kerf_store_audit_append(s, &a), 0);
        }
}

static void sql(const char *path, const char *q)
{
        sqlite3 *db;
        char *msg = NULL;

        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        if (sqlite3_exec(db, q, NULL, NULL, &msg) != SQLITE_OK)
                fail_msg("SQL failed: %s: %s", q, msg);
        sqlite3_close(db);
}

/* Exports the chain of `s` and verifies the file against `cp` (may be NULL). */
static kerf_store_audit_report verify_export(kerf_store *s, const kerf_store_checkpoint *cp)
{
        kerf_store_audit_report rep;
        FILE *fp = tmpfile();

        assert_non_null(fp);
        assert_true(kerf_store_audit_export(s, NULL, 0, fp) >= 0);
        rewind(fp);
        assert_int_equal(kerf_store_audit_verify_file(fp, cp, &rep), 0);
        fclose(fp);
        return rep;
}

static void make_cp(fixture *f, kerf_store_checkpoint *cp, char pub[KERF_STORE_PK_HEX])
{
        char key[320], *json, err[256];
        kerf_store_checkpoint back;
        struct stat st;

        snprintf(key, sizeof(key), "%s/audit.key", f->dir);
        assert_int_equal(kerf_store_checkpoint_make(f->s, key, 0, cp), 0);
        assert_int_equal(stat(key, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        assert_int_equal(kerf_store_anchor_key(key, false, pub), 0);
        assert_string_equal(pub, cp->public_key);
        json = kerf_store_checkpoint_json(cp);
        assert_non_null(json);
        assert_int_equal(kerf_store_checkpoint_parse(json, pub, &back, err, sizeof(err)), 0);
        assert_int_equal(back.seq, cp->seq);
        assert_string_equal(back.hash, cp->hash);
        free(json);
        unlink(key); /* keep the test dir removable; the key is re-created per test */
}

static void test_checkpoint_signature(void **state)
{
        fixture *f = *state;
        kerf_store_checkpoint cp, back;
        char pub[KERF_STORE_PK_HEX], other[KERF_STORE_PK_HEX], err[256], *json, *p;

        append_n(f->s, 1, 5);
        make_cp(f, &cp, pub);
        assert_int_equal(cp.seq, 5);
        json = kerf_store_checkpoint_json(&cp);
        assert_non_null(json);
        /* an edited seq breaks the signature */
        p = strstr(json, "\"seq\":5");
        assert_non_null(p);
        p[6] = '9';
        assert_int_equal(kerf_store_checkpoint_parse(json, NULL, &back, err, sizeof(err)),
                         -KERF_EPERM);
        assert_non_null(strstr(err, "bad signature"));
        p[6] = '5';
        /* pinned to another key */
        memset(other, 'a', sizeof(other) - 1);
        other[sizeof(other) - 1] = '\0';
        assert_int_equal(kerf_store_checkpoint_parse(json, other, &back, err, sizeof(err)),
                         -KERF_EPERM);
        assert_int_equal(
            kerf_store_checkpoint_parse("{\"kind\":\"x\"}", NULL, &back, err, sizeof(err)),
            -EINVAL);
        free(json);
        /* a key file others can read is refused */
        char key[320];
        snprintf(key, sizeof(key), "%s/audit.key", f->dir);
        assert_int_equal(kerf_store_anchor_key(key, true, pub), 0);
        assert_int_equal(chmod(key, 0644), 0);
        assert_int_equal(kerf_store_anchor_key(key, false, pub), -EPERM);
        unlink(key);
}

/* The hole of issue 8 R4: the last records deleted and audit_head fixed in the same edit pass
 * the database's own verify; the checkpoint taken before catches it. */
static void test_truncation(void **state)
{
        fixture *f = *state;
        kerf_store_checkpoint cp;
        kerf_store_audit_report rep;
        char pub[KERF_STORE_PK_HEX], q[512], hash[KERF_STORE_HASH_HEX];
        kerf_store_audit *arr;
        size_t n;
        uint64_t next;

        append_n(f->s, 1, 10);
        make_cp(f, &cp, pub);
        rep = verify_export(f->s, &cp);
        assert_true(rep.ok);
        assert_int_equal(rep.records, 10);
        append_n(f->s, 11, 12); /* later records are fine */
        rep = verify_export(f->s, &cp);
        assert_true(rep.ok);

        /* the attacker: drop 9..12, set audit_head to seq 8 */
        assert_int_equal(kerf_store_audit_list(f->s, NULL, 7, 1, &arr, &n, &next), 0);
        assert_int_equal(arr[0].seq, 8);
        snprintf(hash, sizeof(hash), "%s", arr[0].hash);
        free(arr);
        snprintf(q, sizeof(q),
                 "DROP TRIGGER audit_no_delete; DELETE FROM audit WHERE seq > 8;"
                 " UPDATE audit_head SET count = 8, last_seq = 8, hash = '%s'",
                 hash);
        sql(f->path, q);
        assert_int_equal(kerf_store_audit_verify(f->s, &rep), 0);
        assert_true(rep.ok); /* the database alone cannot tell */
        rep = verify_export(f->s, NULL);
        assert_true(rep.ok); /* nor can the export without an anchor */
        rep = verify_export(f->s, &cp);
        assert_false(rep.ok);
        assert_int_equal(rep.first_bad, 9);
        assert_non_null(strstr(rep.problem, "truncated"));
}

/* The head rewritten: record 10 (the checkpointed one) replaced by another with a valid
 * hash and audit_head fixed; the database verifies, the checkpoint does not. */
static void test_rewritten_head(void **state)
{
        fixture *f = *state;
        kerf_store_checkpoint cp;
        kerf_store_audit_report rep;
        kerf_store_audit *arr;
        char pub[KERF_STORE_PK_HEX], q[1024];
        size_t n;
        uint64_t next;

        append_n(f->s, 1, 10);
        make_cp(f, &cp, pub);
        assert_int_equal(kerf_store_audit_list(f->s, NULL, 9, 1, &arr, &n, &next), 0);
        snprintf(arr[0].result, sizeof(arr[0].result), "denied");
        kerf_store_audit_hash(&arr[0], arr[0].hash);
        snprintf(q, sizeof(q),
                 "DROP TRIGGER audit_no_update; UPDATE audit SET result = 'denied', hash = '%s'"
                 " WHERE seq = 10; UPDATE audit_head SET hash = '%s'",
                 arr[0].hash, arr[0].hash);
        free(arr);
        sql(f->path, q);
        assert_int_equal(kerf_store_audit_verify(f->s, &rep), 0);
        assert_true(rep.ok);
        rep = verify_export(f->s, &cp);
        assert_false(rep.ok);
        assert_int_equal(rep.first_bad, 10);
        assert_non_null(strstr(rep.problem, "rewritten"));
}

/* An export verified offline: untouched passes; an edited line, a removed line, a filtered
 * export each fail with where and why. */
static void test_offline_file(void **state)
{
        fixture *f = *state;
        kerf_store_audit_report rep;
        char path[320], line[4096];
        FILE *fp, *out;
        int k = 0;

        append_n(f->s, 1, 6);
        snprintf(path, sizeof(path), "%s/export.jsonl", f->dir);
        fp = fopen(path, "w");
        assert_non_null(fp);
        assert_int_equal(kerf_store_audit_export(f->s, NULL, 0, fp), 6);
        fclose(fp);
        fp = fopen(path, "r");
        assert_int_equal(kerf_store_audit_verify_file(fp, NULL, &rep), 0);
        fclose(fp);
        assert_true(rep.ok);
        assert_int_equal(rep.records, 6);

        /* an edited field in line 3 */
        fp = fopen(path, "r");
        out = tmpfile();
        while (fgets(line, sizeof(line), fp)) {
                char *p;
                if (++k == 3 && (p = strstr(line, "\"result\":\"ok\"")))
                        memcpy(p + 10, "no", 2);
                fputs(line, out);
        }
        fclose(fp);
        rewind(out);
        assert_int_equal(kerf_store_audit_verify_file(out, NULL, &rep), 0);
        fclose(out);
        assert_false(rep.ok);
        assert_int_equal(rep.first_bad, 3);
        assert_non_null(strstr(rep.problem, "hash mismatch"));

        /* line 4 removed */
        fp = fopen(path, "r");
        out = tmpfile();
        k = 0;
        while (fgets(line, sizeof(line), fp))
                if (++k != 4)
                        fputs(line, out);
        fclose(fp);
        rewind(out);
        assert_int_equal(kerf_store_audit_verify_file(out, NULL, &rep), 0);
        fclose(out);
        assert_false(rep.ok);
        assert_int_equal(rep.first_bad, 4);
        assert_non_null(strstr(rep.problem, "missing"));

        /* not an export at all */
        out = tmpfile();
        fputs("hello\n", out);
        rewind(out);
        assert_int_equal(kerf_store_audit_verify_file(out, NULL, &rep), 0);
        fclose(out);
        assert_false(rep.ok);
        unlink(path);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_checkpoint_signature, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_truncation, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_rewritten_head, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_offline_file, fx_setup, fx_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
