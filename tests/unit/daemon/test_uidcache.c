/* SPDX-License-Identifier: Apache-2.0 */
/* test_uidcache.c - the admin cache (src/daemon/config/uidcache.c): a uid added to group kerf is an
 * admin within the TTL, a removed one stops being one; under n->mu (may_block false) a stale
 * answer stands until the refresh, and a uid nobody warmed is counted */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "uidcache.h"

#define KGID 4242
#define U    ((uid_t)70001)

static uint64_t clk = 1000000;
static bool in_group;  /* what "NSS" says of U */
static unsigned calls; /* lookups made */

static uint64_t fake_clock(void)
{
        return clk;
}

static int fake_resolve(uid_t uid, gid_t kerf_gid, char *name, size_t len, bool *admin)
{
        calls++;
        snprintf(name, len, "user%u", (unsigned)uid);
        *admin = uid == U && in_group && kerf_gid == KGID;
        return 0;
}

static int setup(void **state)
{
        (void)state;
        clk = 1000000;
        in_group = false;
        calls = 0;
        kerfd__uidcache_test_hooks(fake_resolve, fake_clock, KGID);
        return 0;
}

static void test_fast_paths(void **state)
{
        (void)state;
        assert_true(kerfd__uid_admin(0, -1, true, NULL, 0));
        assert_true(kerfd__uid_admin(geteuid(), -1, false, NULL, 0));
        assert_true(kerfd__uid_admin(U, KGID, true, NULL, 0)); /* primary group kerf */
        assert_false(kerfd__uid_admin(-1, -1, true, NULL, 0));
        assert_int_equal(calls, 0);
        kerfd__uidcache_test_hooks(fake_resolve, fake_clock, -1); /* no group kerf */
        assert_false(kerfd__uid_admin(U, -1, true, NULL, 0));
        assert_int_equal(calls, 0);
}

static void test_added_within_ttl(void **state)
{
        (void)state;
        assert_false(kerfd__uid_admin(U, 100, true, NULL, 0));
        assert_int_equal(calls, 1);
        in_group = true; /* gpasswd -a user kerf */
        clk += KERFD_UIDCACHE_TTL_MS - 1;
        assert_false(kerfd__uid_admin(U, 100, true, NULL, 0)); /* cached */
        assert_int_equal(calls, 1);
        clk += 1;
        assert_true(kerfd__uid_admin(U, 100, true, NULL, 0)); /* looked up again */
        assert_int_equal(calls, 2);
}

static void test_removed_within_ttl(void **state)
{
        char name[64];
        (void)state;
        in_group = true;
        assert_true(kerfd__uid_admin(U, 100, true, name, sizeof(name)));
        assert_string_equal(name, "user70001");
        in_group = false; /* gpasswd -d user kerf */
        clk += KERFD_UIDCACHE_TTL_MS;
        assert_false(kerfd__uid_admin(U, 100, true, NULL, 0));
}

static void test_locked_reads_cache_refresh_updates(void **state)
{
        (void)state;
        kerfd__uidcache_warm(U, true); /* config load / tenant creation */
        assert_int_equal(calls, 1);
        in_group = true;
        clk += 10 * KERFD_UIDCACHE_TTL_MS;
        /* under n->mu: the stale answer, no lookup */
        assert_false(kerfd__uid_admin(U, -1, false, NULL, 0));
        assert_int_equal(calls, 1);
        assert_int_equal(kerfd__uidcache_locked_misses(), 0);
        /* the ticker, outside n->mu */
        assert_true(kerfd__uidcache_due());
        kerfd__uidcache_refresh();
        assert_int_equal(calls, 2);
        assert_false(kerfd__uidcache_due());
        assert_true(kerfd__uid_admin(U, -1, false, NULL, 0));
        assert_int_equal(calls, 2);
        /* pinned: refreshed again after TTL/2, even unused */
        in_group = false;
        clk += 60 * 60 * 1000;
        kerfd__uidcache_refresh();
        assert_int_equal(calls, 3);
        assert_false(kerfd__uid_admin(U, -1, false, NULL, 0));
}

static void test_unwarmed_under_lock_counted(void **state)
{
        (void)state;
        assert_false(kerfd__uid_admin(U + 1, -1, false, NULL, 0));
        assert_int_equal(calls, 1);
        assert_int_equal(kerfd__uidcache_locked_misses(), 1);
        assert_false(kerfd__uid_admin(U + 1, -1, false, NULL, 0)); /* now cached */
        assert_int_equal(kerfd__uidcache_locked_misses(), 1);
}

static void test_idle_not_refreshed(void **state)
{
        (void)state;
        assert_false(kerfd__uid_admin(U, -1, true, NULL, 0)); /* a peer, not pinned */
        clk += 11 * 60 * 1000;                                /* unused for 11 min */
        kerfd__uidcache_refresh();
        assert_int_equal(calls, 1);
}

static void test_many_uids(void **state)
{
        (void)state;
        for (long long u = 100000; u < 102000; u++)
                assert_false(kerfd__uid_admin(u, -1, true, NULL, 0));
        in_group = true;
        clk += KERFD_UIDCACHE_TTL_MS;
        assert_true(kerfd__uid_admin(U, -1, true, NULL, 0));
}

static void test_pinned_kept(void **state)
{
        (void)state;
        kerfd__uidcache_warm(U, true);
        for (unsigned k = 1; k <= 20; k++) /* the same probe window, 512 slots apart */
                assert_false(kerfd__uid_admin((long long)U + 512 * k, -1, true, NULL, 0));
        assert_int_equal(calls, 21);
        assert_false(kerfd__uid_admin(U, -1, false, NULL, 0)); /* still there */
        assert_int_equal(calls, 21);
        assert_int_equal(kerfd__uidcache_locked_misses(), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup(test_fast_paths, setup),
            cmocka_unit_test_setup(test_added_within_ttl, setup),
            cmocka_unit_test_setup(test_removed_within_ttl, setup),
            cmocka_unit_test_setup(test_locked_reads_cache_refresh_updates, setup),
            cmocka_unit_test_setup(test_unwarmed_under_lock_counted, setup),
            cmocka_unit_test_setup(test_idle_not_refreshed, setup),
            cmocka_unit_test_setup(test_many_uids, setup),
            cmocka_unit_test_setup(test_pinned_kept, setup),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
