/* SPDX-License-Identifier: Apache-2.0 */
/* test_enospc.c - issue 8 R2: a full disk loses nothing and lies about nothing. kerfd's state
 * dir is a 64 MiB tmpfs (room for the libraries kerfd copies into <state>/lib, then filled); with
 * it full, new work gets 507 and /v1/health says the store is read-only; a task that exits 0 and
 * one that is cancelled show their true end (durable: false) although it cannot be written; once
 * space is freed every change commits in order, the audit chain verifies, and a restarted kerfd
 * agrees. Skipped (with a message) where mounting a tmpfs is not permitted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

static char mnt[400];

static void unmount(void)
{
        char cmd[512];

        if (!mnt[0])
                return;
        snprintf(cmd, sizeof(cmd), "umount -l '%s' 2>/dev/null", mnt);
        if (system(cmd) != 0)
                fprintf(stderr, "could not unmount %s\n", mnt);
        mnt[0] = '\0';
}

static json_t *get(kd *k, const char *path, long *s)
{
        return kd_call(k, "GET", path, NULL, NULL, s, NULL);
}

static const char *str(json_t *j, const char *key)
{
        const char *v = json_string_value(json_object_get(j, key));
        return v ? v : "";
}

static bool durable(json_t *t)
{
        json_t *d = json_object_get(t, "durable");
        return !d || json_is_true(d);
}

/* Fills the file system of `dir` to the last byte; returns the filler's path. */
static void fill(const char *path)
{
        static char buf[65536];
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        size_t chunk = sizeof(buf);

        assert_true(fd >= 0);
        memset(buf, 0xa5, sizeof(buf));
        for (;;) {
                ssize_t w = write(fd, buf, chunk);
                if (w < 0 && errno == ENOSPC) {
                        if (chunk == 1)
                                break;
                        chunk /= 2;
                        continue;
                }
                assert_true(w > 0);
        }
        close(fd);
}

static json_t *health(kd *k)
{
        long s;
        json_t *h = kd_call(k, "GET", "/v1/health", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        return h;
}

static unsigned long long seq_of(json_t *items, const char *action, const char *object)
{
        for (size_t i = 0; i < json_array_size(items); i++) {
                json_t *a = json_array_get(items, i);
                if (!strcmp(str(a, "action"), action) && !strcmp(str(a, "object"), object))
                        return (unsigned long long)json_integer_value(json_object_get(a, "seq"));
        }
        return 0;
}

static void verify_audit(kd *k)
{
        long s;
        json_t *v = kd_call(k, "POST", "/v1/audit/verify", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        if (!json_is_true(json_object_get(v, "ok")))
                fail_msg("audit chain broken: %s", str(v, "problem"));
        json_decref(v);
}

/* Starts a throwaway kerfd whose state dir is a fresh small tmpfs (skips the test where
 * mounting is not permitted). */
static void small_disk(kd *k)
{
        char cmd[1200];

        kd_setup(k, NULL);
        kd_stop(k);
        snprintf(mnt, sizeof(mnt), "%s/state", k->dir);
        snprintf(cmd, sizeof(cmd), "mount -t tmpfs -o size=64m,mode=0750 tmpfs '%s' 2>&1", mnt);
        if (system(cmd) != 0) {
                mnt[0] = '\0';
                kd_cleanup(k);
                fprintf(stderr, "SKIP test_enospc: cannot mount a tmpfs here (needs root with "
                                "CAP_SYS_ADMIN); the full-disk path is not exercised\n");
                skip();
        }
        atexit(unmount);
        kd_start(k);
}

static void test_full_disk(void **st)
{
        char cmd[1200], go[160], filler[500], body[400], objA[32], objB[32];
        unsigned long long a, b;
        json_t *t, *h, *au;
        long s;
        kd k;
        (void)st;

        small_disk(&k);

        snprintf(go, sizeof(go), "/tmp/kerf-sec-enospc-%d.go", (int)getpid());
        unlink(go);
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"command\":[\"/bin/sh\",\"-c\","
                 "\"while [ ! -e %s ]; do sleep 0.05; done; exit 0\"]}",
                 go);
        a = kd_submit(&k, body, NULL);
        b = kd_submit(&k, "{\"tenant\":\"bob\",\"command\":[\"/bin/sleep\",\"60\"]}", NULL);
        json_decref(kd_wait_task(&k, a, "running", 10000));
        json_decref(kd_wait_task(&k, b, "running", 10000));
        snprintf(objA, sizeof(objA), "task:%llu", a);
        snprintf(objB, sizeof(objB), "task:%llu", b);

        snprintf(filler, sizeof(filler), "%s/filler", mnt);
        fill(filler);

        /* new work: 507, the store says why */
        t = kd_call(&k, "POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"]}",
                    NULL, &s, NULL);
        assert_int_equal(s, 507);
        assert_string_equal(str(t, "error"), "insufficient_storage");
        json_decref(t);

        /* a task that exits 0 while the disk is full: its true end, not yet durable */
        int fd = open(go, O_WRONLY | O_CREAT, 0600);
        assert_true(fd >= 0);
        close(fd);
        t = kd_wait_task(&k, a, "succeeded", 10000);
        assert_non_null(t);
        assert_false(durable(t));
        json_decref(t);
        /* the list says the same */
        json_t *l = get(&k, "/v1/tasks?limit=1000", &s);
        assert_int_equal(s, 200);
        bool listed = false;
        for (size_t i = 0; i < json_array_size(json_object_get(l, "items")); i++) {
                json_t *it = json_array_get(json_object_get(l, "items"), i);
                if ((unsigned long long)json_integer_value(json_object_get(it, "id")) != a)
                        continue;
                listed = true;
                assert_string_equal(str(it, "state"), "succeeded");
                assert_false(durable(it));
        }
        json_decref(l);
        assert_true(listed);
        /* a cancelled one */
        snprintf(cmd, sizeof(cmd), "/v1/tasks/%llu/cancel", b);
        json_decref(kd_call(&k, "POST", cmd, "{\"grace_s\":0}", NULL, &s, NULL));
        assert_true(s == 200 || s == 202);
        t = kd_wait_task(&k, b, "cancelled", 10000);
        assert_non_null(t);
        assert_false(durable(t));
        json_decref(t);

        h = health(&k);
        assert_string_equal(str(h, "status"), "degraded");
        assert_non_null(strstr(str(h, "store"), "read-only"));
        assert_non_null(strstr(str(h, "store"), "since"));
        assert_true(json_integer_value(json_object_get(h, "pending_records")) >= 3);
        json_decref(h);
        json_decref(kd_call(&k, "POST", "/v1/tenants", "{\"name\":\"carol\"}", NULL, &s, NULL));
        assert_int_equal(s, 507);

        /* space again: everything lands, in order */
        unlink(filler);
        bool ok = false;
        for (int i = 0; i < 100 && !ok; i++) {
                h = health(&k);
                ok = !strcmp(str(h, "store"), "ok") &&
                     json_integer_value(json_object_get(h, "pending_records")) == 0;
                json_decref(h);
                if (!ok)
                        kd_sleep_ms(50);
        }
        assert_true(ok);
        t = kd_task(&k, a);
        assert_string_equal(str(t, "state"), "succeeded");
        assert_true(durable(t));
        json_decref(t);
        t = kd_task(&k, b);
        assert_string_equal(str(t, "state"), "cancelled");
        assert_true(durable(t));
        json_decref(t);
        au = get(&k, "/v1/audit?limit=1000", &s);
        assert_int_equal(s, 200);
        unsigned long long ea = seq_of(json_object_get(au, "items"), "task.end", objA);
        unsigned long long sb = seq_of(json_object_get(au, "items"), "task.stop", objB);
        unsigned long long eb = seq_of(json_object_get(au, "items"), "task.end", objB);
        json_decref(au);
        assert_true(ea && sb && eb);
        assert_true(ea < sb && sb < eb); /* the order they happened in */
        verify_audit(&k);
        t = kd_call(&k, "POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"]}",
                    NULL, &s, NULL);
        assert_int_equal(s, 201);
        json_decref(t);

        /* a restarted kerfd has the same truth */
        kd_stop(&k);
        kd_start(&k);
        t = kd_task(&k, a);
        assert_string_equal(str(t, "state"), "succeeded");
        json_decref(t);
        t = kd_task(&k, b);
        assert_string_equal(str(t, "state"), "cancelled");
        json_decref(t);
        verify_audit(&k);
        kd_stop(&k);
        unlink(go);
        unmount();
        kd_cleanup(&k);
}

/* A full disk and then a crash: the end of a task that exited 3 while its record could not be
 * written is still true after kill -9 and a restart (the supervisor's status file stays until
 * the end is in the store; issue 8 R1 with R2). */
static void test_full_disk_then_crash(void **st)
{
        char go[160], filler[500], body[400];
        unsigned long long a;
        json_t *t;
        kd k;
        (void)st;

        small_disk(&k);
        snprintf(go, sizeof(go), "/tmp/kerf-sec-enospc2-%d.go", (int)getpid());
        unlink(go);
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"command\":[\"/bin/sh\",\"-c\","
                 "\"while [ ! -e %s ]; do sleep 0.05; done; exit 3\"]}",
                 go);
        a = kd_submit(&k, body, NULL);
        json_decref(kd_wait_task(&k, a, "running", 10000));
        snprintf(filler, sizeof(filler), "%s/filler", mnt);
        fill(filler);
        int fd = open(go, O_WRONLY | O_CREAT, 0600);
        assert_true(fd >= 0);
        close(fd);
        t = kd_wait_task(&k, a, "failed", 10000);
        assert_non_null(t);
        assert_false(durable(t));
        json_decref(t);
        kd_sleep_ms(600); /* several reaps pass while the end waits to be written */
        kd_kill9(&k);
        unlink(filler);
        kd_start(&k);
        t = kd_wait_task(&k, a, NULL, 10000);
        assert_non_null(t);
        assert_string_equal(str(t, "state"), "failed");
        assert_int_equal(json_integer_value(json_object_get(t, "exit_code")), 3);
        json_decref(t);
        verify_audit(&k);
        kd_stop(&k);
        unlink(go);
        unmount();
        kd_cleanup(&k);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_full_disk),
            cmocka_unit_test(test_full_disk_then_crash),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
