/* SPDX-License-Identifier: Apache-2.0 */
/* test_crash.c - kill -9 a writer at random points: every acknowledged commit survives */
#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <time.h>

#include "helpers.h"

#define ROUNDS 6

/* The child: submit tasks (task + audit record, one transaction each) forever, writing each id
 * to the pipe only after its commit returned: what the parent reads is what was acknowledged. */
static void writer(const char *path, uint64_t first, int fd)
{
        kerf_store *s;
        kerf_store_task t;
        kerf_store_audit a;

        if (kerf_store_open(path, NULL, &s, NULL, 0) < 0)
                _exit(2);
        for (uint64_t id = first;; id++) {
                make_task(&t, id, "batch", "pending");
                memset(&a, 0, sizeof(a));
                snprintf(a.actor, sizeof(a.actor), "uid:0");
                snprintf(a.tenant, sizeof(a.tenant), "batch");
                snprintf(a.action, sizeof(a.action), "task.submit");
                snprintf(a.object, sizeof(a.object), "task:%llu", (unsigned long long)id);
                snprintf(a.result, sizeof(a.result), "ok");
                if (kerf_store_begin(s) < 0 || kerf_store_task_insert(s, &t) < 0 ||
                    kerf_store_audit_append(s, &a) < 0 || kerf_store_commit(s) < 0)
                        _exit(3);
                if (write(fd, &id, sizeof(id)) != sizeof(id))
                        _exit(4);
        }
}

static void check_db(const char *path)
{
        sqlite3 *db;
        sqlite3_stmt *st;

        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
        sqlite3_finalize(st);
        assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &st, NULL),
                         SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        sqlite3_finalize(st);
        sqlite3_close(db);
}

static void test_kill9(void **state)
{
        fixture *f = *state;
        unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
        const char *env = getenv("KERF_SEED");
        uint64_t first = 1, total_acked = 0;

        if (env)
                seed = (unsigned)strtoul(env, NULL, 10);
        print_message("KERF_SEED=%u\n", seed);
        srand(seed);
        add_tenant(f->s, "batch");
        f->s = kerf_store_close(f->s);

        for (int round = 0; round < ROUNDS; round++) {
                int p[2], status;
                uint64_t id, last = 0, acked = 0, max_task, count;
                struct timespec delay = {0, (long)(5 + rand() % 150) * 1000000L};
                kerf_store_audit_report rep;
                kerf_store_task_filter flt = {0};
                kerf_store_task t;
                pid_t pid;

                assert_int_equal(pipe(p), 0);
                pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        close(p[0]);
                        writer(f->path, first, p[1]);
                }
                close(p[1]);
                nanosleep(&delay, NULL);
                kill(pid, SIGKILL);
                assert_int_equal(waitpid(pid, &status, 0), pid);
                assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
                while (read(p[0], &id, sizeof(id)) == sizeof(id)) {
                        assert_int_equal(id, first + acked);
                        last = id;
                        acked++;
                }
                close(p[0]);
                total_acked += acked;

                check_db(f->path);
                assert_int_equal(kerf_store_open(f->path, NULL, &f->s, NULL, 0), 0);
                for (id = first; id <= last; id++) { /* every acknowledged submit is there */
                        assert_int_equal(kerf_store_task_get(f->s, id, &t), 0);
                        kerf_store_task_fini(&t);
                }
                /* at most the one in flight committed without its acknowledgement */
                assert_int_equal(kerf_store_max_ids(f->s, &max_task, NULL, NULL), 0);
                assert_true(max_task == (first - 1) + acked || max_task == (first - 1) + acked + 1);
                assert_int_equal(kerf_store_task_count(f->s, &flt, &count), 0);
                assert_int_equal(count, max_task);
                /* each task committed together with its audit record, and the chain holds */
                assert_int_equal(kerf_store_audit_verify(f->s, &rep), 0);
                if (!rep.ok)
                        fail_msg("audit: %s", rep.problem);
                assert_int_equal(rep.records, max_task);
                f->s = kerf_store_close(f->s);
                print_message("round %d: killed after %ld ms, %llu acknowledged, %llu stored\n",
                              round, delay.tv_nsec / 1000000L, (unsigned long long)acked,
                              (unsigned long long)(max_task - first + 1));
                first = max_task + 1;
        }
        assert_true(total_acked > 0);
        assert_int_equal(kerf_store_open(f->path, NULL, &f->s, NULL, 0), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_kill9, fx_setup, fx_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
