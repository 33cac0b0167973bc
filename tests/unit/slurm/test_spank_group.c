/* SPDX-License-Identifier: Apache-2.0 */
/* test_spank_group.c - the group table of spank_kerf.so: one leader per device set among
 * concurrently forked children, the followers get its kerf task id (or its failure), the last
 * member to leave detaches once, and a detached group is led again */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "group.h"

#define NCHILD 16

static void ms_sleep(long ms)
{
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

/* children wait here so that they enter the table at the same moment */
static _Atomic int *go;

/* Child `task` enters `key`; a leader answers `id` (0: fails) after lead_ms. Exit status:
 * 10 led, 20 + (joined id == id) joined, 30 + -err for an error. */
static pid_t child(kerf_spank_groups *gs, int task, const char *key, uint64_t id, long lead_ms,
                   long wait_ms)
{
        pid_t p = fork();
        if (p != 0)
                return p;
        uint64_t got = 0;
        while (go && !atomic_load(go))
                ;
        int r = kerf_spank_group_enter(gs, task, key, wait_ms, &got);
        if (r == KERF_SPANK_LEAD) {
                ms_sleep(lead_ms);
                kerf_spank_group_publish(gs, task, id, id ? 0 : -ECONNREFUSED);
                _exit(10);
        }
        if (r == KERF_SPANK_JOIN)
                _exit(20 + (got == id));
        _exit(30 - r);
}

static int status(pid_t p)
{
        int st = 0;
        assert_int_equal(waitpid(p, &st, 0), p);
        assert_true(WIFEXITED(st));
        return WEXITSTATUS(st);
}

struct calls {
        int n;
        uint64_t ids[8];
};

static void record(uint64_t id, void *arg)
{
        struct calls *c = arg;
        if (c->n < 8)
                c->ids[c->n] = id;
        c->n++;
}

/* NCHILD children released at once race for one key: exactly one leads, all others join its
 * id (many rounds: a claim that is not one atomic step shows up as two leaders) */
static void test_one_leader(void **st)
{
        kerf_spank_groups *gs = NULL;
        pid_t p[NCHILD];
        int led = 0, joined = 0;
        (void)st;
        go = mmap(NULL, sizeof(*go), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        assert_true(go != MAP_FAILED);
        for (int round = 0; round < 30; round++) {
                kerf_spank_groups_free(gs);
                gs = kerf_spank_groups_new();
                assert_non_null(gs);
                atomic_store(go, 0);
                for (int i = 0; i < NCHILD; i++)
                        p[i] = child(gs, i, "gpu:0,1", 42, 20, 5000);
                atomic_store(go, 1);
                led = joined = 0;
                for (int i = 0; i < NCHILD; i++) {
                        int s = status(p[i]);
                        led += s == 10;
                        joined += s == 21;
                }
                assert_int_equal(led, 1);
                assert_int_equal(joined, NCHILD - 1);
        }
        munmap(go, sizeof(*go));
        go = NULL;

        /* renewal sees the one kerf task once */
        struct calls c = {0};
        kerf_spank_groups_each(gs, record, &c);
        assert_int_equal(c.n, 1);
        assert_int_equal(c.ids[0], 42);

        /* detached only when the last member leaves */
        c.n = 0;
        for (int i = 0; i < NCHILD - 1; i++)
                assert_int_equal(kerf_spank_group_leave(gs, i, record, &c), 0);
        assert_int_equal(c.n, 0);
        assert_int_equal(kerf_spank_group_leave(gs, NCHILD - 1, record, &c), 1);
        assert_int_equal(c.n, 1);
        assert_int_equal(c.ids[0], 42);
        /* a task leaves once */
        assert_int_equal(kerf_spank_group_leave(gs, NCHILD - 1, record, &c), 0);
        c.n = 0;
        kerf_spank_groups_each(gs, record, &c);
        assert_int_equal(c.n, 0);

        /* after the detach the next task of the same devices leads a new attach */
        uint64_t id = 0;
        assert_int_equal(kerf_spank_group_enter(gs, NCHILD, "gpu:0,1", 100, &id), KERF_SPANK_LEAD);
        kerf_spank_group_publish(gs, NCHILD, 43, 0);
        assert_int_equal(kerf_spank_group_enter(gs, NCHILD + 1, "gpu:0,1", 100, &id),
                         KERF_SPANK_JOIN);
        assert_int_equal(id, 43);
        assert_int_equal(kerf_spank_groups_close(gs, record, &c), 1);
        assert_int_equal(c.ids[0], 43);
        kerf_spank_groups_free(gs);
}

/* different device sets are different groups, each with its own leader */
static void test_keys_apart(void **st)
{
        kerf_spank_groups *gs = kerf_spank_groups_new();
        static const char *const keys[] = {"gpu:0", "gpu:1", "gpu:0,1", "mig:2"};
        pid_t p[8];
        uint64_t id = 0;
        (void)st;
        for (int i = 0; i < 8; i++)
                p[i] = child(gs, i, keys[i % 4], 100 + (uint64_t)(i % 4), 30, 5000);
        int led = 0, joined = 0;
        for (int i = 0; i < 8; i++) {
                int s = status(p[i]);
                led += s == 10;
                joined += s == 21;
        }
        assert_int_equal(led, 4);
        assert_int_equal(joined, 4);
        struct calls c = {0};
        kerf_spank_groups_each(gs, record, &c);
        assert_int_equal(c.n, 4);
        /* a key prefix is another key */
        assert_int_equal(kerf_spank_group_enter(gs, 8, "gpu:0,", 100, &id), KERF_SPANK_LEAD);
        c.n = 0;
        assert_int_equal(kerf_spank_groups_close(gs, record, &c), 4); /* gpu:0, still ATTACHING */
        kerf_spank_groups_free(gs);
}

/* the leader's attach fails: every follower fails with its error, none attaches by itself */
static void test_leader_failed(void **st)
{
        kerf_spank_groups *gs = kerf_spank_groups_new();
        pid_t p[4];
        (void)st;
        for (int i = 0; i < 4; i++)
                p[i] = child(gs, i, "mig:MIG-x", 0, 50, 5000);
        int led = 0, cancelled = 0;
        for (int i = 0; i < 4; i++) {
                int s = status(p[i]);
                led += s == 10;
                cancelled += s == 30 + ECONNREFUSED;
        }
        assert_int_equal(led, 1);
        assert_int_equal(cancelled, 3);
        /* a task entering later fails the same way; nothing to renew or detach */
        uint64_t id = 7;
        assert_int_equal(kerf_spank_group_enter(gs, 9, "mig:MIG-x", 100, &id), -ECONNREFUSED);
        assert_int_equal(id, 7);
        struct calls c = {0};
        kerf_spank_groups_each(gs, record, &c);
        for (int i = 0; i < 10; i++)
                kerf_spank_group_leave(gs, i, record, &c);
        assert_int_equal(c.n, 0);
        /* a failure without an error, or an id of 0: -ECANCELED */
        assert_int_equal(kerf_spank_group_enter(gs, 20, "k2", 100, &id), KERF_SPANK_LEAD);
        kerf_spank_group_publish(gs, 20, 0, 0);
        assert_int_equal(kerf_spank_group_enter(gs, 21, "k2", 100, &id), -ECANCELED);
        assert_int_equal(kerf_spank_group_enter(gs, 22, "k3", 100, &id), KERF_SPANK_LEAD);
        kerf_spank_group_publish(gs, 22, 5, 1);
        assert_int_equal(kerf_spank_group_enter(gs, 23, "k3", 100, &id), -ECANCELED);
        assert_int_equal(id, 7);
        kerf_spank_groups_free(gs);
}

/* a leader that never answers: followers give up at wait_ms; a dead one: at once */
static void test_leader_silent(void **st)
{
        kerf_spank_groups *gs = kerf_spank_groups_new();
        uint64_t id = 0;
        (void)st;
        assert_int_equal(kerf_spank_group_enter(gs, 0, "gpu:3", 100, &id), KERF_SPANK_LEAD);
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        assert_int_equal(status(child(gs, 1, "gpu:3", 1, 0, 200)), 30 + ETIMEDOUT);
        clock_gettime(CLOCK_MONOTONIC, &b);
        long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
        assert_true(ms >= 200 && ms < 3000);

        /* a leader child that exits without publishing (killed during its attach) */
        pid_t l = fork();
        if (l == 0)
                _exit(kerf_spank_group_enter(gs, 2, "gpu:4", 100, &id) == KERF_SPANK_LEAD ? 0 : 1);
        assert_int_equal(status(l), 0);
        clock_gettime(CLOCK_MONOTONIC, &a);
        assert_int_equal(status(child(gs, 3, "gpu:4", 1, 0, 10000)), 30 + ESRCH);
        clock_gettime(CLOCK_MONOTONIC, &b);
        ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
        assert_true(ms < 2000);
        kerf_spank_groups_free(gs);
}

/* a member that joins while the last one leaves: the detach and the new leader do not mix */
static void test_leave_then_enter(void **st)
{
        for (int round = 0; round < 20; round++) {
                kerf_spank_groups *gs = kerf_spank_groups_new();
                uint64_t id = 0;
                (void)st;
                assert_int_equal(kerf_spank_group_enter(gs, 0, "gpu:0", 100, &id), KERF_SPANK_LEAD);
                kerf_spank_group_publish(gs, 0, 5, 0);
                pid_t p = child(gs, 1, "gpu:0", 6, 0, 5000);
                struct calls c = {0};
                int detached = kerf_spank_group_leave(gs, 0, record, &c);
                int s = status(p);
                /* either the child joined 5 before the leave (no detach), or the leave
                 * detached 5 and the child led a new attach (6) */
                if (detached) {
                        assert_int_equal(c.ids[0], 5);
                        assert_int_equal(s, 10);
                } else {
                        assert_int_equal(s, 20); /* joined 5, not 6 */
                        assert_int_equal(kerf_spank_group_leave(gs, 1, record, &c), 1);
                        assert_int_equal(c.ids[0], 5);
                }
                kerf_spank_groups_free(gs);
        }
}

static void test_bad_input(void **st)
{
        kerf_spank_groups *gs = kerf_spank_groups_new();
        char key[KERF_SPANK_KEY_MAX + 1], k[32];
        uint64_t id = 9;
        (void)st;
        memset(key, 'a', sizeof(key) - 1);
        key[sizeof(key) - 1] = 0;
        assert_int_equal(kerf_spank_group_enter(gs, -1, "gpu:0", 10, &id), -EINVAL);
        assert_int_equal(kerf_spank_group_enter(gs, KERF_SPANK_MAX_TASKS, "gpu:0", 10, &id),
                         -EINVAL);
        assert_int_equal(kerf_spank_group_enter(gs, 0, "", 10, &id), -EINVAL);
        assert_int_equal(kerf_spank_group_enter(gs, 0, NULL, 10, &id), -EINVAL);
        assert_int_equal(kerf_spank_group_enter(gs, 0, key, 10, &id), -EINVAL);
        key[KERF_SPANK_KEY_MAX - 1] = 0; /* the longest key */
        assert_int_equal(kerf_spank_group_enter(gs, 0, key, 10, &id), KERF_SPANK_LEAD);
        assert_int_equal(kerf_spank_group_enter(gs, 0, "gpu:0", 10, &id), -EINVAL); /* again */
        assert_int_equal(id, 9);
        /* every task its own key: the table holds KERF_SPANK_MAX_TASKS groups */
        kerf_spank_groups_free(gs);
        gs = kerf_spank_groups_new();
        for (int i = 0; i < KERF_SPANK_MAX_TASKS; i++) {
                snprintf(k, sizeof(k), "task:%d", i);
                assert_int_equal(kerf_spank_group_enter(gs, i, k, 10, &id), KERF_SPANK_LEAD);
        }
        kerf_spank_group_leave(gs, 0, NULL, NULL);
        assert_int_equal(kerf_spank_group_enter(gs, 0, "task:new", 10, &id), -ENOSPC);
        /* publish by a task that is not the leader changes nothing */
        assert_int_equal(kerf_spank_group_enter(gs, 0, "task:1", 10, &id), -ETIMEDOUT);
        kerf_spank_group_leave(gs, 0, NULL, NULL);
        kerf_spank_group_publish(gs, 0, 77, 0);
        kerf_spank_group_publish(gs, 1, 78, 0);
        assert_int_equal(kerf_spank_group_enter(gs, 0, "task:1", 10, &id), KERF_SPANK_JOIN);
        assert_int_equal(id, 78);
        kerf_spank_groups_free(gs);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_one_leader),       cmocka_unit_test(test_keys_apart),
            cmocka_unit_test(test_leader_failed),    cmocka_unit_test(test_leader_silent),
            cmocka_unit_test(test_leave_then_enter), cmocka_unit_test(test_bad_input)};
        return cmocka_run_group_tests(tests, NULL, NULL);
}
