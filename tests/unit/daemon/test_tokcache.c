/* SPDX-License-Identifier: Apache-2.0 */
/* test_tokcache.c - the token cache (src/daemon/api/tokcache.c) over a real store: a valid token is
 * answered from the cache after its first verify; revocation, token and tenant deletion take
 * effect at once through kerfd__tokcache_invalidate, and an entry expires after its TTL;
 * wrong tokens are never kept and the cache never holds more than KERFD_TOKCACHE_SLOTS. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kerf/errno.h"
#include "kerf/store.h"
#include "tokcache.h"

static char dir[256], path[320];
static kerf_store *s;
static uint64_t fake_now = 1000000;

static uint64_t fake_clock(void)
{
        return fake_now;
}

static void add_tenant(const char *name)
{
        kerf_store_tenant t;
        assert_int_equal(kerf_store_tenant_init(&t, name), 0);
        assert_int_equal(kerf_store_tenant_upsert(s, &t), 0);
}

static uint64_t add_token(const char *tenant, char tok[KERF_STORE_TOKEN_LEN])
{
        uint64_t id = 0;
        assert_int_equal(kerf_store_token_create(s, tenant, NULL, 0, &id, tok), 0);
        return id;
}

static int setup(void **st)
{
        char err[256] = "";
        (void)st;
        snprintf(dir, sizeof(dir), "/tmp/kerf-tokcache-XXXXXX");
        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/kerf.db", dir);
        if (kerf_store_open(path, NULL, &s, err, sizeof(err)) < 0)
                fail_msg("open: %s", err);
        add_tenant("alice");
        add_tenant("bob");
        kerfd__tokcache_test_clock(fake_clock);
        if (kerfd__tokcache_open(path, err, sizeof(err)) < 0)
                fail_msg("tokcache: %s", err);
        return 0;
}

static int teardown(void **st)
{
        const char *sfx[] = {"", "-wal", "-shm"};
        char p[400];
        (void)st;
        kerfd__tokcache_close();
        kerf_store_close(s);
        for (int i = 0; i < 3; i++) {
                snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
                unlink(p);
        }
        rmdir(dir);
        return 0;
}

static void stats(uint64_t *h, uint64_t *m, unsigned *e)
{
        kerfd__tokcache_stats(h, m, e);
}

static void test_hit_after_first_verify(void **st)
{
        char tok[KERF_STORE_TOKEN_LEN], tenant[KERF_NAME_LEN];
        uint64_t id = add_token("alice", tok), got = 0, h0, m0, h1, m1;
        unsigned e;
        (void)st;

        stats(&h0, &m0, &e);
        assert_int_equal(kerfd__tokcache_verify(tok, tenant, &got), 0);
        assert_string_equal(tenant, "alice");
        assert_int_equal(got, id);
        for (int i = 0; i < 10; i++)
                assert_int_equal(kerfd__tokcache_verify(tok, tenant, &got), 0);
        stats(&h1, &m1, &e);
        assert_int_equal(m1 - m0, 1);
        assert_int_equal(h1 - h0, 10);
        assert_string_equal(tenant, "alice");
}

static void test_revoke_refused_at_once(void **st)
{
        char tok[KERF_STORE_TOKEN_LEN], tenant[KERF_NAME_LEN];
        uint64_t id = add_token("alice", tok);
        (void)st;

        assert_int_equal(kerfd__tokcache_verify(tok, tenant, NULL), 0);
        assert_int_equal(kerf_store_token_revoke(s, "alice", id, 0), 0);
        kerfd__tokcache_invalidate(); /* what DELETE /v1/tenants/{name}/tokens/{id} does */
        assert_int_equal(kerfd__tokcache_verify(tok, tenant, NULL), -KERF_EPERM);
        assert_int_equal(kerfd__tokcache_verify(tok, tenant, NULL), -KERF_EPERM);
}

/* A change kerfd did not make (no invalidate): seen once the entry's TTL has passed. */
static void test_entry_expires(void **st)
{
        char tok[KERF_STORE_TOKEN_LEN], tenant[KERF_NAME_LEN];
        uint64_t id = add_token("bob", tok);
        (void)st;

        assert_int_equal(kerfd__tokcache_verify(tok, tenant, NULL), 0);
        assert_int_equal(kerf_store_token_revoke(s, NULL, id, 0), 0);
        fake_now += KERFD_TOKCACHE_TTL_MS - 1;
        assert_int_equal(kerfd__tokcache_verify(tok, tenant, NULL), 0); /* still cached */
        fake_now += 1;
        assert_int_equal(kerfd__tokcache_verify(tok, tenant, NULL), -KERF_EPERM);
}

static void test_tenant_delete(void **st)
{
        char tok[KERF_STORE_TOKEN_LEN], tenant[KERF_NAME_LEN];
        (void)st;

        add_tenant("carol");
        add_token("carol", tok);
        assert_int_equal(kerfd__tokcache_verify(tok, tenant, NULL), 0);
        assert_string_equal(tenant, "carol");
        assert_int_equal(kerf_store_tenant_delete(s, "carol"), 0); /* its tokens go with it */
        kerfd__tokcache_invalidate();
        assert_int_equal(kerfd__tokcache_verify(tok, tenant, NULL), -KERF_EPERM);
}

/* A caller trying tokens at random: each costs a lookup, none is kept. */
static void test_wrong_tokens_not_kept(void **st)
{
        char tok[KERF_STORE_TOKEN_LEN], tenant[KERF_NAME_LEN], big[300];
        uint64_t h0, m0, h1, m1;
        unsigned e0, e1;
        (void)st;

        stats(&h0, &m0, &e0);
        for (int i = 0; i < 5000; i++) {
                snprintf(tok, sizeof(tok), "kerf_%043d", i);
                assert_int_equal(kerfd__tokcache_verify(tok, tenant, NULL), -KERF_EPERM);
        }
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = 0;
        assert_int_equal(kerfd__tokcache_verify(big, tenant, NULL), -KERF_EPERM);
        stats(&h1, &m1, &e1);
        assert_int_equal(e1, e0);
        assert_int_equal(h1, h0);
        assert_int_equal(m1 - m0, 5000);
}

/* More valid tokens than slots: the cache stays bounded and every token still verifies. */
static void test_bounded(void **st)
{
        enum { N = KERFD_TOKCACHE_SLOTS + 500 };
        static char toks[N][KERF_STORE_TOKEN_LEN];
        char tenant[KERF_NAME_LEN];
        uint64_t h, m;
        unsigned e;
        (void)st;

        assert_int_equal(kerf_store_begin(s), 0);
        for (int i = 0; i < N; i++)
                add_token(i & 1 ? "alice" : "bob", toks[i]);
        assert_int_equal(kerf_store_commit(s), 0);
        for (int round = 0; round < 2; round++)
                for (int i = 0; i < N; i++) {
                        assert_int_equal(kerfd__tokcache_verify(toks[i], tenant, NULL), 0);
                        assert_string_equal(tenant, i & 1 ? "alice" : "bob");
                }
        stats(&h, &m, &e);
        assert_true(e <= KERFD_TOKCACHE_SLOTS);
        assert_true(e > KERFD_TOKCACHE_SLOTS / 2);
}

/* A revocation that commits while a verify is between its store read and keeping the entry:
 * that verify may succeed (it read before the commit), the next one must not. */
static uint64_t mid_id;

static void revoke_now(void)
{
        kerfd__tokcache_test_after_store(NULL);
        assert_int_equal(kerf_store_token_revoke(s, "bob", mid_id, 0), 0);
        kerfd__tokcache_invalidate();
}

static void test_revoke_mid_verify(void **st)
{
        char tok[KERF_STORE_TOKEN_LEN], tenant[KERF_NAME_LEN];
        (void)st;

        mid_id = add_token("bob", tok);
        kerfd__tokcache_test_after_store(revoke_now);
        assert_int_equal(kerfd__tokcache_verify(tok, tenant, NULL), 0);
        assert_int_equal(kerfd__tokcache_verify(tok, tenant, NULL), -KERF_EPERM);
}

/* Verifiers racing a revocation: a verify that starts after the revocation's commit and
 * invalidate have returned is refused, whatever the others keep in the cache meanwhile. */
static char race_tok[KERF_STORE_TOKEN_LEN];
static atomic_int revoked, stop, late_ok;

static void *verifier(void *arg)
{
        char tenant[KERF_NAME_LEN];
        (void)arg;
        while (!atomic_load(&stop)) {
                int after = atomic_load(&revoked);
                int r = kerfd__tokcache_verify(race_tok, tenant, NULL);
                if (after && r == 0)
                        atomic_fetch_add(&late_ok, 1);
        }
        return NULL;
}

static void test_revoke_races_verifiers(void **st)
{
        pthread_t th[4];
        uint64_t id;
        (void)st;

        for (int round = 0; round < 20; round++) {
                id = add_token("alice", race_tok);
                atomic_store(&revoked, 0);
                atomic_store(&stop, 0);
                for (int i = 0; i < 4; i++)
                        assert_int_equal(pthread_create(&th[i], NULL, verifier, NULL), 0);
                usleep(2000);
                assert_int_equal(kerf_store_token_revoke(s, "alice", id, 0), 0);
                kerfd__tokcache_invalidate();
                atomic_store(&revoked, 1);
                usleep(5000);
                atomic_store(&stop, 1);
                for (int i = 0; i < 4; i++)
                        pthread_join(th[i], NULL);
        }
        assert_int_equal(atomic_load(&late_ok), 0);
}

static void test_closed(void **st)
{
        char tenant[KERF_NAME_LEN], err[256];
        (void)st;
        kerfd__tokcache_close();
        assert_int_equal(kerfd__tokcache_verify("kerf_x", tenant, NULL), -ENODEV);
        assert_int_equal(kerfd__tokcache_open(path, err, sizeof(err)), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_hit_after_first_verify),
            cmocka_unit_test(test_revoke_refused_at_once),
            cmocka_unit_test(test_entry_expires),
            cmocka_unit_test(test_tenant_delete),
            cmocka_unit_test(test_wrong_tokens_not_kept),
            cmocka_unit_test(test_bounded),
            cmocka_unit_test(test_revoke_mid_verify),
            cmocka_unit_test(test_revoke_races_verifiers),
            cmocka_unit_test(test_closed),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
