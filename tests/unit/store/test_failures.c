/* SPDX-License-Identifier: Apache-2.0 */
/* test_failures.c - issue 8 S4/R3: private files whatever the umask, the transaction helper,
 * failure injection at each write, and a really full database (SQLITE_FULL) losing nothing */
#include <errno.h>
#include <sqlite3.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "helpers.h"

static mode_t mode_of(const char *path)
{
        struct stat st;

        if (stat(path, &st) < 0)
                return (mode_t)-1;
        return st.st_mode & 07777;
}

/* S4: a pre-existing 0755 dir and umask 022: the db, -wal and -shm are 0600 */
static void test_modes_umask(void **state)
{
        fixture *f = *state;
        char p[400], err[256];
        kerf_store *s;
        mode_t old;

        char dir[300];
        snprintf(dir, sizeof(dir), "%s/sub", f->dir);
        assert_int_equal(mkdir(dir, 0755), 0);
        snprintf(p, sizeof(p), "%s/state.db", dir);
        old = umask(022);
        assert_int_equal(kerf_store_open(p, NULL, &s, err, sizeof(err)), 0);
        add_tenant(s, "a"); /* a write: the WAL exists */
        umask(old);
        assert_int_equal(mode_of(p), 0600);
        snprintf(p, sizeof(p), "%s/state.db-wal", dir);
        assert_int_equal(mode_of(p), 0600);
        snprintf(p, sizeof(p), "%s/state.db-shm", dir);
        assert_int_equal(mode_of(p), 0600);
        kerf_store_close(s);
        rm_rf(dir);
}

/* S4: existing files with group/other bits are made private (and said so); a file of another
 * owner is refused */
static void test_secure_files(void **state)
{
        fixture *f = *state;
        char p[400], note[512];

        assert_int_equal(chmod(f->path, 0644), 0);
        snprintf(p, sizeof(p), "%s-wal", f->path);
        assert_int_equal(chmod(p, 0666), 0);
        assert_int_equal(kerf_store_secure_files(f->path, note, sizeof(note)), 2);
        assert_non_null(strstr(note, "0644 -> 0600"));
        assert_non_null(strstr(note, "0666 -> 0600"));
        assert_int_equal(mode_of(f->path), 0600);
        assert_int_equal(mode_of(p), 0600);
        assert_int_equal(kerf_store_secure_files(f->path, note, sizeof(note)), 0);
        if (geteuid() == 0) {
                assert_int_equal(chown(p, 65534, 65534), 0);
                assert_int_equal(kerf_store_secure_files(f->path, note, sizeof(note)), -EPERM);
                assert_non_null(strstr(note, "not a regular file owned by"));
                assert_int_equal(chown(p, 0, 0), 0);
        }
        /* a link in place of the database is not followed */
        snprintf(p, sizeof(p), "%s/link.db", f->dir);
        assert_int_equal(symlink(f->path, p), 0);
        assert_int_equal(kerf_store_secure_files(p, note, sizeof(note)), -EPERM);
        unlink(p);
}

static int put_two(kerf_store *s, void *ud)
{
        kerf_store_task t;
        int r;

        make_task(&t, 1, "a", "pending");
        if ((r = kerf_store_task_insert(s, &t)) < 0)
                return r;
        make_task(&t, 2, "a", "pending");
        if ((r = kerf_store_task_insert(s, &t)) < 0)
                return r;
        return *(int *)ud;
}

static uint64_t count_tasks(kerf_store *s)
{
        uint64_t n = 99;

        assert_int_equal(kerf_store_task_count(s, NULL, &n), 0);
        return n;
}

/* R3: the one transaction helper: all or nothing, inside or outside a transaction */
static void test_tx_helper(void **state)
{
        fixture *f = *state;
        int fail = -EIO, ok = 0;

        add_tenant(f->s, "a");
        assert_int_equal(kerf_store_tx(f->s, put_two, &fail), -EIO);
        assert_false(kerf_store_in_transaction(f->s));
        assert_int_equal(count_tasks(f->s), 0);
        assert_int_equal(kerf_store_tx(f->s, put_two, &ok), 0);
        assert_int_equal(count_tasks(f->s), 2);
        /* nested in a caller's transaction: a savepoint */
        assert_int_equal(kerf_store_tx(f->s, put_two, &ok), -EEXIST);
        assert_int_equal(kerf_store_begin(f->s), 0);
        assert_int_equal(kerf_store_tx(f->s, put_two, &ok), -EEXIST);
        assert_true(kerf_store_in_transaction(f->s));
        assert_int_equal(kerf_store_end(f->s, 0), 0);
        assert_int_equal(kerf_store_end(f->s, 0), -KERF_ESTATE);
        assert_int_equal(count_tasks(f->s), 2);
}

/* R3: every injected write failure reaches the caller and leaves nothing half-written */
static void test_injection(void **state)
{
        fixture *f = *state;
        static const char *const ops[] = {"task_insert", "audit_append", "commit"};
        kerf_store_task t;
        kerf_store_unit u;
        kerf_store_event e;
        kerf_store_audit a;
        char flag[320];

        add_tenant(f->s, "a");
        assert_int_equal(kerf_store_fail_set(f->s, "nonsense:0"), -EINVAL);
        assert_int_equal(kerf_store_fail_set(f->s, ":1"), -EINVAL);
        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
                assert_int_equal(kerf_store_fail_set(f->s, ops[i]), 0);
                assert_int_equal(kerf_store_begin(f->s), 0);
                make_task(&t, 10 + i, "a", "pending");
                int r = kerf_store_task_insert(f->s, &t);
                if (r == 0) {
                        memset(&a, 0, sizeof(a));
                        snprintf(a.actor, sizeof(a.actor), "uid:0");
                        snprintf(a.action, sizeof(a.action), "task.submit");
                        snprintf(a.object, sizeof(a.object), "task:%zu", 10 + i);
                        snprintf(a.result, sizeof(a.result), "ok");
                        r = kerf_store_audit_append(f->s, &a);
                }
                assert_int_equal(kerf_store_end(f->s, r), -EIO);
                assert_int_equal(count_tasks(f->s), 0);
        }
        /* the 2nd call only, then writes work again */
        assert_int_equal(kerf_store_fail_set(f->s, "task_update:2:1"), 0);
        make_task(&t, 1, "a", "pending");
        assert_int_equal(kerf_store_task_insert(f->s, &t), 0);
        assert_int_equal(kerf_store_task_update(f->s, &t), 0);
        assert_int_equal(kerf_store_task_update(f->s, &t), -EIO);
        assert_int_equal(kerf_store_task_update(f->s, &t), 0);
        /* each call site kerfd has: lease, unit rows, events */
        assert_int_equal(kerf_store_fail_set(f->s, "task_lease"), 0);
        assert_int_equal(kerf_store_task_lease_set(f->s, 1, 5), -EIO);
        assert_int_equal(kerf_store_fail_set(f->s, "unit_upsert"), 0);
        kerf_store_unit_init(&u);
        u.id = 3;
        snprintf(u.kind, sizeof(u.kind), "mig");
        snprintf(u.state, sizeof(u.state), "ready");
        assert_int_equal(kerf_store_unit_upsert(f->s, &u), -EIO);
        assert_int_equal(kerf_store_fail_set(f->s, "*"), 0);
        memset(&e, 0, sizeof(e));
        snprintf(e.kind, sizeof(e.kind), "xid");
        assert_int_equal(kerf_store_event_append(f->s, &e), -EIO);
        assert_int_equal(kerf_store_unit_delete(f->s, 3), -EIO);
        /* @FILE: only while the file exists */
        snprintf(flag, sizeof(flag), "%s/fail", f->dir);
        char spec[400];
        snprintf(spec, sizeof(spec), "unit_upsert@%s", flag);
        assert_int_equal(kerf_store_fail_set(f->s, spec), 0);
        assert_int_equal(kerf_store_unit_upsert(f->s, &u), 0);
        FILE *ff = fopen(flag, "w");
        assert_non_null(ff);
        fclose(ff);
        assert_int_equal(kerf_store_unit_upsert(f->s, &u), -EIO);
        unlink(flag);
        assert_int_equal(kerf_store_unit_upsert(f->s, &u), 0);
        assert_int_equal(kerf_store_fail_set(f->s, NULL), 0);
        assert_int_equal(kerf_store_task_lease_set(f->s, 1, 5), 0);
}

static off_t size_of(const char *path)
{
        struct stat st;

        return stat(path, &st) < 0 ? 0 : st.st_size;
}

/* R2/R3: a disk that refuses to grow the files (RLIMIT_FSIZE: the kernel's EFBIG, as a full
 * disk's ENOSPC) fails the write, rolls the transaction back whole, keeps the chain
 * verifiable, and the same write goes through once there is room again */
static void test_disk_refuses(void **state)
{
        fixture *f = *state;
        kerf_store_audit_report rep;
        kerf_store_audit a;
        struct rlimit old, lim;
        char wal[320];
        uint64_t count = 0, before;
        char hash[KERF_STORE_HASH_HEX];
        int r = 0, i;

        add_tenant(f->s, "a");
        snprintf(wal, sizeof(wal), "%s-wal", f->path);
        signal(SIGXFSZ, SIG_IGN);
        assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
        lim = old;
        off_t big = size_of(f->path) > size_of(wal) ? size_of(f->path) : size_of(wal);
        lim.rlim_cur = (rlim_t)big + 8 * 4096;
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
        for (i = 0; i < 10000; i++) {
                memset(&a, 0, sizeof(a));
                snprintf(a.actor, sizeof(a.actor), "uid:0");
                snprintf(a.action, sizeof(a.action), "task.submit");
                snprintf(a.object, sizeof(a.object), "task:%d", i);
                snprintf(a.result, sizeof(a.result), "ok");
                memset(a.reason, 'r', sizeof(a.reason) - 1);
                if ((r = kerf_store_begin(f->s)) < 0)
                        break;
                r = kerf_store_audit_append(f->s, &a);
                if ((r = kerf_store_end(f->s, r)) < 0)
                        break;
        }
        assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
        assert_true(r < 0); /* the limit was reached */
        assert_true(r == -EIO || r == -ENOSPC);
        assert_false(kerf_store_in_transaction(f->s));
        assert_int_equal(kerf_store_audit_head(f->s, &before, hash), 0);
        assert_int_equal(before, (uint64_t)i); /* the failed one left nothing */
        assert_int_equal(kerf_store_audit_verify(f->s, &rep), 0);
        assert_true(rep.ok);
        /* room again: the same write goes through, the chain continues */
        assert_int_equal(kerf_store_audit_append(f->s, &a), 0);
        assert_int_equal(a.seq, before + 1);
        assert_int_equal(kerf_store_audit_head(f->s, &count, hash), 0);
        assert_int_equal(count, before + 1);
        assert_int_equal(kerf_store_audit_verify(f->s, &rep), 0);
        assert_true(rep.ok);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_modes_umask, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_secure_files, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_tx_helper, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_injection, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_disk_refuses, fx_setup, fx_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
