/* SPDX-License-Identifier: Apache-2.0 */
/* test_attach.c - issue 8 S2: POST /v1/attach takes only a process of the caller's own uid,
 * never init, kerfd, another task's process, and each process once */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static kd K;
static char *alice, *bob;

static int setup(void **st)
{
        (void)st;
        kd_setup(&K, NULL);
        alice = kd_token(&K, "alice");
        bob = kd_token(&K, "bob");
        return 0;
}

static int teardown(void **st)
{
        (void)st;
        kd_stop(&K);
        kd_cleanup(&K);
        free(alice);
        free(bob);
        return 0;
}

/* A sleeping child of the test, as uid `uid` (-1: the test's own). */
static pid_t child(long long uid)
{
        pid_t p = fork();
        assert_true(p >= 0);
        if (p == 0) {
                if (uid >= 0 && (setgid((gid_t)uid) < 0 || setuid((uid_t)uid) < 0))
                        _exit(1);
                for (int i = 0; i < 600; i++) /* bounded: 60 s at most */
                        usleep(100000);
                _exit(0);
        }
        return p;
}

static void reap(pid_t p)
{
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
}

/* Attaches pid with token tok; returns the status and checks the message holds `needle`. */
static long attach(pid_t pid, const char *tok, const char *needle)
{
        char body[128], *msg = NULL;
        long s;
        snprintf(body, sizeof(body), "{%s\"pid\":%d,\"lease_s\":60}",
                 tok ? "" : "\"tenant\":\"bob\",", (int)pid);
        s = sec_call(&K, "POST", "/v1/attach", body, tok, &msg);
        if (needle && (!msg || !strstr(msg, needle)))
                fail_msg("attach %d: %ld \"%s\", want a message with \"%s\"", (int)pid, s,
                         msg ? msg : "", needle);
        free(msg);
        return s;
}

static void test_never_init_or_kerfd(void **st)
{
        (void)st;
        assert_int_equal(attach(1, bob, "init"), 403);
        assert_int_equal(attach(1, NULL, "init"), 403); /* not even for the admin */
        assert_int_equal(attach(K.pid, bob, "kerfd itself"), 403);
        assert_int_equal(attach(K.pid, NULL, "kerfd itself"), 403);
}

static void test_only_own_uid(void **st)
{
        pid_t c = child(2000);
        (void)st;
        usleep(200000); /* let it switch uid */
        assert_int_equal(attach(c, bob, "real uid 2000 is not the caller's"), 403);
        reap(c);
}

static void test_not_another_task(void **st)
{
        unsigned long long id =
            kd_submit(&K, "{\"command\":[\"/bin/sleep\",\"30\"],\"name\":\"victim\"}", alice);
        json_t *t = kd_wait_task(&K, id, "running", 10000);
        char path[64];
        long s;
        (void)st;
        assert_non_null(t);
        pid_t pid = (pid_t)json_integer_value(json_object_get(t, "pid"));
        json_decref(t);
        assert_int_equal(attach(pid, bob, "belongs to task"), 403);
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", id);
        json_decref(kd_call(&K, "POST", path, NULL, NULL, &s, NULL));
}

static void test_once_per_process(void **st)
{
        pid_t c = child(-1);
        (void)st;
        assert_int_equal(attach(c, bob, NULL), 201);
        assert_int_equal(attach(c, bob, "already attached"), 409);
        assert_int_equal(attach(c, alice, "already attached"), 409);
        reap(c);
}

/* POST /v1/attach over loopback TCP with a token: no peer credentials there. */
static long attach_tcp(unsigned port, const char *tok, pid_t pid)
{
        char body[128];
        long st = 0;
        snprintf(body, sizeof(body), "{\"pid\":%d,\"lease_s\":60}", (int)pid);
        json_decref(kd_call_tcp(port, "POST", "/v1/attach", body, tok, &st, NULL));
        return st;
}

/* Over TCP the tenant's configured uid is the caller's uid. */
static void test_tcp_tenant_uid(void **st)
{
        unsigned port = kd_free_port();
        char extra[200], *tok;
        pid_t mine = child(2001), other = child(-1);
        kd k2;
        (void)st;
        snprintf(extra, sizeof(extra), "  - name: dave\n    uid: 2001\nlisten_tcp: 127.0.0.1:%u\n",
                 port);
        kd_setup(&k2, extra);
        tok = kd_token(&k2, "dave");
        usleep(200000);
        assert_int_equal(attach_tcp(port, tok, other), 403); /* root's process */
        assert_int_equal(attach_tcp(port, tok, mine), 201);
        free(tok);
        kd_stop(&k2);
        kd_cleanup(&k2);
        reap(mine);
        reap(other);
}

int main(void)
{
        sec_need_root("processes of another uid are created");
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_never_init_or_kerfd), cmocka_unit_test(test_only_own_uid),
            cmocka_unit_test(test_not_another_task),    cmocka_unit_test(test_once_per_process),
            cmocka_unit_test(test_tcp_tenant_uid),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
