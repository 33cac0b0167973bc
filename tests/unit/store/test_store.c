/* SPDX-License-Identifier: Apache-2.0 */
/* test_store.c - round-trips of every record type, pagination, transactions, tokens, schema */
#include <errno.h>
#include <sqlite3.h>

#include "helpers.h"

static void test_task_roundtrip(void **state)
{
        fixture *f = *state;
        kerf_store_task t, g;

        add_tenant(f->s, "serving");
        make_task(&t, 12, "serving", "running");
        snprintf(t.queue, sizeof(t.queue), "serve");
        snprintf(t.route, sizeof(t.route), "mig");
        t.env_json = (char *)"{\"A\":\"1\"}";
        t.cwd = (char *)"/tmp";
        t.log_stdout = (char *)"/var/lib/kerf/logs/12.out";
        t.log_stderr = (char *)"/var/lib/kerf/logs/12.err";
        t.uid = 1000;
        t.gid = 1001;
        t.pid = 4242;
        t.pgid = 4242;
        t.proc_start = 123456789;
        t.submitted_ms = 1000;
        t.started_ms = 2000;
        t.preemptions = 2;
        t.restarts = 3;
        snprintf(t.reason_code, sizeof(t.reason_code), "placed");
        t.reason_task = 7;
        snprintf(t.reason_text, sizeof(t.reason_text), "started on GPU 0");
        t.lease_expiry_ms = 99999;
        assert_int_equal(kerf_store_task_insert(f->s, &t), 0);
        assert_int_equal(kerf_store_task_insert(f->s, &t), -EEXIST);

        assert_int_equal(kerf_store_task_get(f->s, 12, &g), 0);
        assert_int_equal(g.id, 12);
        assert_string_equal(g.tenant, "serving");
        assert_string_equal(g.queue, "serve");
        assert_string_equal(g.name, "task-12");
        assert_string_equal(g.state, "running");
        assert_string_equal(g.route, "mig");
        assert_string_equal(g.end_reason, "");
        assert_string_equal(g.request_json, t.request_json);
        assert_string_equal(g.argv_json, "[\"true\"]");
        assert_string_equal(g.env_json, "{\"A\":\"1\"}");
        assert_string_equal(g.cwd, "/tmp");
        assert_string_equal(g.log_stdout, t.log_stdout);
        assert_string_equal(g.log_stderr, t.log_stderr);
        assert_int_equal(g.uid, 1000);
        assert_int_equal(g.gid, 1001);
        assert_int_equal(g.pid, 4242);
        assert_int_equal(g.pgid, 4242);
        assert_int_equal(g.proc_start, 123456789);
        assert_int_equal(g.exit_code, -1);
        assert_int_equal(g.signal, 0);
        assert_int_equal(g.submitted_ms, 1000);
        assert_int_equal(g.started_ms, 2000);
        assert_int_equal(g.ended_ms, 0);
        assert_int_equal(g.preemptions, 2);
        assert_int_equal(g.restarts, 3);
        assert_string_equal(g.reason_code, "placed");
        assert_int_equal(g.reason_task, 7);
        assert_string_equal(g.reason_text, "started on GPU 0");
        assert_int_equal(g.lease_expiry_ms, 99999);

        /* update: mutable fields change, fixed ones do not */
        snprintf(g.state, sizeof(g.state), "succeeded");
        snprintf(g.end_reason, sizeof(g.end_reason), "exit");
        snprintf(g.name, sizeof(g.name), "renamed");
        g.exit_code = 0;
        g.ended_ms = 3000;
        assert_int_equal(kerf_store_task_update(f->s, &g), 0);
        assert_int_equal(kerf_store_task_lease_set(f->s, 12, 5), 0);
        kerf_store_task_fini(&g);
        assert_int_equal(kerf_store_task_get(f->s, 12, &g), 0);
        assert_string_equal(g.state, "succeeded");
        assert_string_equal(g.end_reason, "exit");
        assert_string_equal(g.name, "task-12");
        assert_int_equal(g.exit_code, 0);
        assert_int_equal(g.ended_ms, 3000);
        assert_int_equal(g.lease_expiry_ms, 5);
        kerf_store_task_fini(&g);
        assert_null(g.request_json);

        assert_int_equal(kerf_store_task_get(f->s, 13, &g), -ENOENT);
        make_task(&t, 13, "serving", "pending");
        assert_int_equal(kerf_store_task_update(f->s, &t), -ENOENT);
        assert_int_equal(kerf_store_task_lease_set(f->s, 13, 1), -ENOENT);
        make_task(&t, 14, "nobody", "pending");
        assert_int_equal(kerf_store_task_insert(f->s, &t), -ENOENT); /* unknown tenant */
        make_task(&t, 0, "serving", "pending");
        assert_int_equal(kerf_store_task_insert(f->s, &t), -EINVAL);
        make_task(&t, 15, "serving", "pending");
        t.request_json = NULL;
        assert_int_equal(kerf_store_task_insert(f->s, &t), -EINVAL);
}

static void test_pagination(void **state)
{
        fixture *f = *state;
        kerf_store_task t, *arr;
        kerf_store_task_filter flt = {0};
        uint64_t next, count, seen = 0;
        size_t n;

        add_tenant(f->s, "a");
        add_tenant(f->s, "b");
        for (uint64_t id = 1; id <= 250; id++) {
                make_task(&t, id, id % 2 ? "a" : "b", id % 5 == 0 ? "running" : "pending");
                if (id % 10 == 0)
                        t.ended_ms = 1;
                assert_int_equal(kerf_store_task_insert(f->s, &t), 0);
        }
        /* all of tenant a, 40 per page */
        flt.tenant = "a";
        flt.limit = 40;
        do {
                assert_int_equal(kerf_store_task_list(f->s, &flt, &arr, &n, &next), 0);
                for (size_t i = 0; i < n; i++) {
                        assert_string_equal(arr[i].tenant, "a");
                        assert_true(arr[i].id > flt.after);
                        assert_true(i == 0 || arr[i].id > arr[i - 1].id);
                        seen++;
                }
                if (next)
                        assert_int_equal(n, 40);
                if (n)
                        assert_true(next == 0 || next == arr[n - 1].id);
                kerf_store_task_list_free(arr, n);
                flt.after = next;
        } while (next);
        assert_int_equal(seen, 125);

        /* tenant b + state running: ids 10, 20, ... 250 */
        memset(&flt, 0, sizeof(flt));
        flt.tenant = "b";
        flt.state = "running";
        assert_int_equal(kerf_store_task_list(f->s, &flt, &arr, &n, &next), 0);
        assert_int_equal(n, 25);
        assert_int_equal(next, 0);
        assert_int_equal(arr[0].id, 10);
        kerf_store_task_list_free(arr, n);
        assert_int_equal(kerf_store_task_count(f->s, &flt, &count), 0);
        assert_int_equal(count, 25);

        memset(&flt, 0, sizeof(flt));
        flt.unfinished = true;
        assert_int_equal(kerf_store_task_count(f->s, &flt, &count), 0);
        assert_int_equal(count, 225);
        flt.queue = "other";
        assert_int_equal(kerf_store_task_list(f->s, &flt, &arr, &n, &next), 0);
        assert_int_equal(n, 0);
        assert_null(arr);

        /* exactly limit rows left: no next cursor */
        memset(&flt, 0, sizeof(flt));
        flt.after = 240;
        flt.limit = 10;
        assert_int_equal(kerf_store_task_list(f->s, &flt, &arr, &n, &next), 0);
        assert_int_equal(n, 10);
        assert_int_equal(next, 0);
        kerf_store_task_list_free(arr, n);
        /* a count honours the cursor: what remains after a page */
        assert_int_equal(kerf_store_task_count(f->s, &flt, &count), 0);
        assert_int_equal(count, 10);
}

static int count_cb(const kerf_store_task *t, void *ud)
{
        uint64_t *c = ud;

        assert_non_null(t->request_json);
        (*c)++;
        return *c == 50 ? 7 : 0;
}

static void test_foreach(void **state)
{
        fixture *f = *state;
        kerf_store_task t;
        uint64_t c = 0, mt, mu, me;

        add_tenant(f->s, "a");
        assert_int_equal(kerf_store_begin(f->s), 0);
        for (uint64_t id = 1; id <= 100; id++) {
                make_task(&t, id, "a", "pending");
                assert_int_equal(kerf_store_task_insert(f->s, &t), 0);
        }
        assert_int_equal(kerf_store_commit(f->s), 0);
        assert_int_equal(kerf_store_task_foreach(f->s, NULL, count_cb, &c), 7);
        assert_int_equal(c, 50);
        assert_int_equal(kerf_store_max_ids(f->s, &mt, &mu, &me), 0);
        assert_int_equal(mt, 100);
        assert_int_equal(mu, 0);
        assert_int_equal(me, 0);
}

static void test_rollback(void **state)
{
        fixture *f = *state;
        kerf_store_task t, g;
        kerf_store_audit a = {0};
        kerf_store_unit u;
        uint64_t count;
        char hash[KERF_STORE_HASH_HEX];

        add_tenant(f->s, "a");
        assert_int_equal(kerf_store_commit(f->s), -KERF_ESTATE);
        assert_int_equal(kerf_store_begin(f->s), 0);
        assert_int_equal(kerf_store_begin(f->s), -KERF_ESTATE);
        make_task(&t, 1, "a", "pending");
        assert_int_equal(kerf_store_task_insert(f->s, &t), 0);
        kerf_store_unit_init(&u);
        u.id = 1;
        u.task = 1;
        snprintf(u.kind, sizeof(u.kind), "slice");
        snprintf(u.state, sizeof(u.state), "assigned");
        assert_int_equal(kerf_store_unit_upsert(f->s, &u), 0);
        snprintf(a.actor, sizeof(a.actor), "uid:0");
        snprintf(a.action, sizeof(a.action), "task.submit");
        snprintf(a.object, sizeof(a.object), "task:1");
        snprintf(a.result, sizeof(a.result), "ok");
        assert_int_equal(kerf_store_audit_append(f->s, &a), 0);
        assert_int_equal(kerf_store_rollback(f->s), 0);
        assert_false(kerf_store_in_transaction(f->s));
        assert_int_equal(kerf_store_task_get(f->s, 1, &g), -ENOENT);
        assert_int_equal(kerf_store_unit_get(f->s, 1, &u), -ENOENT);
        assert_int_equal(kerf_store_audit_head(f->s, &count, hash), 0);
        assert_int_equal(count, 0);

        /* a failed statement inside a transaction does not poison it */
        assert_int_equal(kerf_store_begin(f->s), 0);
        assert_int_equal(kerf_store_task_insert(f->s, &t), 0);
        assert_int_equal(kerf_store_task_insert(f->s, &t), -EEXIST);
        assert_int_equal(kerf_store_audit_append(f->s, &a), 0);
        assert_int_equal(kerf_store_commit(f->s), 0);
        assert_int_equal(kerf_store_task_get(f->s, 1, &g), 0);
        kerf_store_task_fini(&g);
        assert_int_equal(kerf_store_audit_head(f->s, &count, hash), 0);
        assert_int_equal(count, 1);
}

static void test_units(void **state)
{
        fixture *f = *state;
        kerf_store_task t;
        kerf_store_unit u, g, *arr;
        size_t n;

        add_tenant(f->s, "a");
        make_task(&t, 3, "a", "running");
        assert_int_equal(kerf_store_task_insert(f->s, &t), 0);
        kerf_store_unit_init(&u);
        u.id = 5;
        u.task = 3;
        snprintf(u.kind, sizeof(u.kind), "mig");
        snprintf(u.state, sizeof(u.state), "assigned");
        u.gpu = 1;
        snprintf(u.gpu_uuid, sizeof(u.gpu_uuid), "GPU-1234");
        u.mem_bytes = 34628173824ULL;
        u.compute_pct = 28;
        u.compute_limit_pct = 28;
        snprintf(u.mig_profile, sizeof(u.mig_profile), "2g.35gb");
        u.mig_gi = 3;
        u.mig_ci = 0;
        u.mig_start = 4;
        snprintf(u.mig_uuid, sizeof(u.mig_uuid), "MIG-abcd");
        assert_int_equal(kerf_store_unit_upsert(f->s, &u), 0);
        assert_int_equal(kerf_store_unit_get(f->s, 5, &g), 0);
        assert_memory_equal(&g, &u, sizeof(u));

        u.id = 6;
        u.task = 0;
        snprintf(u.state, sizeof(u.state), "ready");
        assert_int_equal(kerf_store_unit_upsert(f->s, &u), 0);
        u.task = 99;
        assert_int_equal(kerf_store_unit_upsert(f->s, &u), -ENOENT); /* no such task */

        assert_int_equal(kerf_store_unit_list(f->s, 0, &arr, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(arr[1].task, 0);
        free(arr);
        assert_int_equal(kerf_store_unit_list(f->s, 3, &arr, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(arr[0].id, 5);
        free(arr);
        assert_int_equal(kerf_store_unit_delete(f->s, 5), 0);
        assert_int_equal(kerf_store_unit_delete(f->s, 5), -ENOENT);
        assert_int_equal(kerf_store_unit_get(f->s, 5, &g), -ENOENT);
}

static void test_tenants(void **state)
{
        fixture *f = *state;
        kerf_store_tenant t, g, *arr;
        kerf_store_task task;
        size_t n;

        assert_int_equal(kerf_store_tenant_init(&t, "research"), 0);
        snprintf(t.cohort, sizeof(t.cohort), "lab");
        t.weight = 3;
        t.nominal[KERF_RES_GPUS] = 4;
        t.borrow_limit[KERF_RES_GPUS] = 2;
        t.lend_limit[KERF_RES_GPUS] = 0;
        t.nominal[KERF_RES_MEM] = 200 * KERF_GIB;
        t.uid = 2000;
        t.gid = 2000;
        assert_int_equal(kerf_store_tenant_upsert(f->s, &t), 0);
        assert_int_equal(kerf_store_tenant_get(f->s, "research", &g), 0);
        assert_memory_equal(&g, &t, sizeof(t));
        t.nominal[KERF_RES_GPUS] = 8; /* quota change */
        assert_int_equal(kerf_store_tenant_upsert(f->s, &t), 0);
        add_tenant(f->s, "alpha");
        assert_int_equal(kerf_store_tenant_list(f->s, &arr, &n), 0);
        assert_int_equal(n, 2);
        assert_string_equal(arr[0].name, "alpha");
        assert_int_equal(arr[0].nominal[KERF_RES_GPUS], KERF_UNLIMITED);
        assert_int_equal(arr[1].nominal[KERF_RES_GPUS], 8);
        assert_int_equal(arr[1].borrow_limit[KERF_RES_GPUS], 2);
        assert_int_equal(arr[1].lend_limit[KERF_RES_GPUS], 0);
        free(arr);
        assert_int_equal(kerf_store_tenant_get(f->s, "nobody", &g), -ENOENT);

        make_task(&task, 1, "research", "pending");
        assert_int_equal(kerf_store_task_insert(f->s, &task), 0);
        assert_int_equal(kerf_store_tenant_delete(f->s, "research"), -KERF_EINUSE);
        assert_int_equal(kerf_store_tenant_delete(f->s, "alpha"), 0);
        assert_int_equal(kerf_store_tenant_delete(f->s, "alpha"), -ENOENT);
        assert_int_equal(kerf_store_tenant_init(&t, "a-name-that-is-far-too-long-for-the-field-"
                                                    "of-sixty-four-characters-really"),
                         -EINVAL);
}

static void test_tokens(void **state)
{
        fixture *f = *state;
        char tok[KERF_STORE_TOKEN_LEN], tok2[KERF_STORE_TOKEN_LEN], tenant[KERF_NAME_LEN];
        kerf_store_token *arr;
        uint64_t id, id2, got;
        size_t n;
        sqlite3 *db;
        sqlite3_stmt *st;

        add_tenant(f->s, "serving");
        add_tenant(f->s, "research");
        assert_int_equal(kerf_store_token_create(f->s, "nobody", NULL, 0, &id, tok), -ENOENT);
        assert_int_equal(kerf_store_token_create(f->s, "serving", "ci", 0, &id, tok), 0);
        assert_int_equal(strncmp(tok, "kerf_", 5), 0);
        assert_int_equal(strlen(tok), 48);
        assert_int_equal(kerf_store_token_create(f->s, "research", NULL, 0, &id2, tok2), 0);
        assert_string_not_equal(tok, tok2);

        assert_int_equal(kerf_store_token_verify(f->s, tok, tenant, &got), 0);
        assert_string_equal(tenant, "serving");
        assert_int_equal(got, id);
        assert_int_equal(kerf_store_token_verify(f->s, tok2, tenant, NULL), 0);
        assert_string_equal(tenant, "research");
        tok[20] = tok[20] == 'A' ? 'B' : 'A';
        assert_int_equal(kerf_store_token_verify(f->s, tok, tenant, NULL), -KERF_EPERM);
        assert_int_equal(kerf_store_token_verify(f->s, "", tenant, NULL), -KERF_EPERM);
        assert_int_equal(kerf_store_token_verify(f->s, "Bearer x", tenant, NULL), -KERF_EPERM);

        /* the token itself is never stored */
        assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(db,
                                            "SELECT count(*) FROM tokens WHERE"
                                            " instr(CAST(hash AS TEXT), ?1) > 0 OR"
                                            " instr(prefix, ?1) > 0",
                                            -1, &st, NULL),
                         SQLITE_OK);
        sqlite3_bind_text(st, 1, tok2 + 12, -1, SQLITE_STATIC);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(st, 0), 0);
        sqlite3_finalize(st);
        sqlite3_close(db);

        assert_int_equal(kerf_store_token_revoke(f->s, "serving", id2, 0), -ENOENT); /* not its */
        assert_int_equal(kerf_store_token_revoke(f->s, "research", id2, 0), 0);
        assert_int_equal(kerf_store_token_revoke(f->s, NULL, id2, 0), -ENOENT); /* already */
        assert_int_equal(kerf_store_token_verify(f->s, tok2, tenant, NULL), -KERF_EPERM);
        assert_int_equal(kerf_store_token_list(f->s, NULL, &arr, &n), 0);
        assert_int_equal(n, 2);
        assert_string_equal(arr[0].label, "ci");
        assert_int_equal(arr[0].revoked_ms, 0);
        assert_true(arr[1].revoked_ms > 0);
        assert_int_equal(strncmp(arr[1].prefix, tok2, 12), 0);
        free(arr);
        assert_int_equal(kerf_store_token_list(f->s, "research", &arr, &n), 0);
        assert_int_equal(n, 1);
        free(arr);
}

static void test_events_meta(void **state)
{
        fixture *f = *state;
        kerf_store_event e = {0}, *arr;
        uint64_t next;
        size_t n;
        char v[64];

        for (int i = 0; i < 5; i++) {
                memset(&e, 0, sizeof(e));
                snprintf(e.kind, sizeof(e.kind), "xid");
                e.gpu = i;
                e.task = (uint64_t)(i % 2);
                e.xid = 79;
                snprintf(e.class, sizeof(e.class), "device");
                snprintf(e.text, sizeof(e.text), "fell off the bus %d", i);
                assert_int_equal(kerf_store_event_append(f->s, &e), 0);
                assert_int_equal(e.id, (uint64_t)i + 1);
                assert_true(e.time_ms > 0);
        }
        assert_int_equal(kerf_store_event_list(f->s, 0, 1, 2, &arr, &n, &next), 0);
        assert_int_equal(n, 2);
        assert_int_equal(arr[0].id, 2);
        assert_int_equal(arr[0].gpu, 1);
        assert_int_equal(arr[0].xid, 79);
        assert_string_equal(arr[0].text, "fell off the bus 1");
        assert_int_equal(next, 3);
        free(arr);
        assert_int_equal(kerf_store_event_list(f->s, 1, 0, 0, &arr, &n, &next), 0);
        assert_int_equal(n, 2);
        assert_int_equal(next, 0);
        free(arr);

        assert_int_equal(kerf_store_meta_get(f->s, "driver", v, sizeof(v)), -ENOENT);
        assert_int_equal(kerf_store_meta_set(f->s, "driver", "550.54.15"), 0);
        assert_int_equal(kerf_store_meta_get(f->s, "driver", v, sizeof(v)), 0);
        assert_string_equal(v, "550.54.15");
        assert_int_equal(kerf_store_meta_set(f->s, "kerf.schema", "9"), -EINVAL);
}

static void test_schema(void **state)
{
        fixture *f = *state;
        kerf_store *s2 = NULL;
        kerf_store_opts ro = {.read_only = true};
        char err[256] = "", bogus[320];
        sqlite3 *db;
        FILE *fp;

        assert_int_equal(kerf_store_schema_version(f->s), KERF_STORE_SCHEMA_VERSION);
        f->s = kerf_store_close(f->s);
        /* a second open migrates nothing and works read-only */
        assert_int_equal(kerf_store_open(f->path, &ro, &s2, err, sizeof(err)), 0);
        s2 = kerf_store_close(s2);

        assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'kerf.schema'",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
        sqlite3_close(db);
        assert_int_equal(kerf_store_open(f->path, NULL, &s2, err, sizeof(err)), -KERF_EUNSUPP);
        assert_null(s2);
        assert_non_null(strstr(err, "schema version 99 is newer"));

        /* not a database at all, and a database that is not kerf's */
        snprintf(bogus, sizeof(bogus), "%s/state.db-journal", f->dir);
        fp = fopen(bogus, "w");
        assert_non_null(fp);
        fputs("this is not an SQLite file, not at all, and it is long enough to tell", fp);
        fclose(fp);
        err[0] = '\0';
        assert_int_equal(kerf_store_open(bogus, NULL, &s2, err, sizeof(err)), -KERF_ECORRUPT);
        assert_true(strlen(err) > 0);
        unlink(bogus);
        assert_int_equal(sqlite3_open(bogus, &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, "CREATE TABLE x (y)", NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
        assert_int_equal(kerf_store_open(bogus, NULL, &s2, err, sizeof(err)), -KERF_ECORRUPT);
        unlink(bogus);

        err[0] = '\0';
        assert_int_equal(kerf_store_open("/nonexistent-dir/x.db", NULL, &s2, err, sizeof(err)),
                         -ENOENT);
        assert_true(strlen(err) > 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_task_roundtrip, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_pagination, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_foreach, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_rollback, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_units, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_tenants, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_tokens, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_events_meta, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_schema, fx_setup, fx_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
