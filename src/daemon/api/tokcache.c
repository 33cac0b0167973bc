/* SPDX-License-Identifier: Apache-2.0 */
/* tokcache.c - the token cache of tokcache.h: valid tokens by keyed hash, a generation that
 * invalidates them all at once, and the read-only store connection misses are verified on */
#include <errno.h>
#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kerf/errno.h"
#include "tokcache.h"

#define WAYS 4
#define SETS (KERFD_TOKCACHE_SLOTS / WAYS)

typedef struct entry {
        unsigned char h[crypto_generichash_BYTES]; /* keyed hash of the token */
        char tenant[KERF_NAME_LEN];
        uint64_t id;
        uint64_t gen;        /* kerfd__tokcache_invalidate's count when it was verified */
        uint64_t expires_ms; /* verified again after this (KERFD_TOKCACHE_TTL_MS) */
        uint64_t used_ms;    /* for the choice of the entry to replace */
        bool used;
} entry;

/* Lock order: `mu` (the table) and `db_mu` (the connection) are leaves, never held together
 * and never with n->mu: a verify drops `mu` before it takes `db_mu`. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER, db_mu = PTHREAD_MUTEX_INITIALIZER;
static entry table[SETS][WAYS];
static unsigned char key[crypto_generichash_KEYBYTES];
static kerf_store *ro;
static _Atomic uint64_t gen = 1;
static _Atomic uint64_t hits, misses;
static uint64_t (*clock_fn)(void);
static void (*after_store_fn)(void); /* tests: runs between the store read and the keep */

static uint64_t now_ms(void)
{
        struct timespec ts;
        if (clock_fn)
                return clock_fn();
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void forget_all(void)
{
        pthread_mutex_lock(&mu);
        sodium_memzero(table, sizeof(table));
        pthread_mutex_unlock(&mu);
}

int kerfd__tokcache_open(const char *db_path, char *err, size_t errlen)
{
        kerf_store_opts o = {.read_only = true};
        kerf_store *s = NULL;
        int r;

        if (sodium_init() < 0) {
                snprintf(err, errlen, "libsodium failed to initialise");
                return -EIO;
        }
        if ((r = kerf_store_open(db_path, &o, &s, err, errlen)) < 0)
                return r;
        pthread_mutex_lock(&db_mu);
        kerf_store_close(ro);
        ro = s;
        pthread_mutex_unlock(&db_mu);
        randombytes_buf(key, sizeof(key));
        forget_all();
        atomic_fetch_add(&gen, 1);
        return 0;
}

void kerfd__tokcache_close(void)
{
        pthread_mutex_lock(&db_mu);
        ro = kerf_store_close(ro);
        pthread_mutex_unlock(&db_mu);
        forget_all();
        atomic_fetch_add(&gen, 1);
}

void kerfd__tokcache_invalidate(void)
{
        atomic_fetch_add(&gen, 1);
}

/* The entry of hash h in its set that is valid now, or NULL. Under mu. */
static entry *lookup(const unsigned char *h, entry *set, uint64_t g, uint64_t now)
{
        for (int w = 0; w < WAYS; w++) {
                entry *e = &set[w];
                if (e->used && e->gen == g && now < e->expires_ms && !memcmp(e->h, h, sizeof(e->h)))
                        return e;
        }
        return NULL;
}

/* Keeps a verified token: in its own slot if it has one, else an empty or outdated slot, else
 * the least recently used of the set. Under mu. */
static void keep(const unsigned char *h, entry *set, uint64_t g, uint64_t now, const char *tenant,
                 uint64_t id)
{
        uint64_t cur = atomic_load(&gen);
        entry *e = NULL;

        for (int w = 0; w < WAYS && !e; w++)
                if (set[w].used && !memcmp(set[w].h, h, sizeof(set[w].h)))
                        e = &set[w];
        for (int w = 0; w < WAYS && !e; w++)
                if (!set[w].used || set[w].gen != cur || now >= set[w].expires_ms)
                        e = &set[w];
        if (!e) {
                e = &set[0];
                for (int w = 1; w < WAYS; w++)
                        if (set[w].used_ms < e->used_ms)
                                e = &set[w];
        }
        memcpy(e->h, h, sizeof(e->h));
        snprintf(e->tenant, sizeof(e->tenant), "%s", tenant);
        e->id = id;
        e->gen = g;
        e->expires_ms = now + KERFD_TOKCACHE_TTL_MS;
        e->used_ms = now;
        e->used = true;
}

int kerfd__tokcache_verify(const char *token, char ret_tenant[KERF_NAME_LEN], uint64_t *ret_id)
{
        unsigned char h[crypto_generichash_BYTES];
        char tenant[KERF_NAME_LEN];
        uint64_t id = 0, g, now;
        size_t len;
        entry *set, *e;
        int r;

        if (!token || !ret_tenant)
                return -EINVAL;
        len = strnlen(token, KERF_STORE_TOKEN_LEN);
        if (len >= KERF_STORE_TOKEN_LEN)
                return -KERF_EPERM; /* longer than any token: not hashed, not looked up */
        crypto_generichash(h, sizeof(h), (const unsigned char *)token, len, key, sizeof(key));
        set = table[(h[0] | (unsigned)h[1] << 8) % SETS];
        now = now_ms();
        pthread_mutex_lock(&mu);
        e = lookup(h, set, atomic_load(&gen), now);
        if (e) {
                e->used_ms = now;
                snprintf(ret_tenant, KERF_NAME_LEN, "%s", e->tenant);
                if (ret_id)
                        *ret_id = e->id;
                pthread_mutex_unlock(&mu);
                atomic_fetch_add(&hits, 1);
                return 0;
        }
        pthread_mutex_unlock(&mu);
        /* The generation is read before the store: a revocation committed after this read
         * bumps it, and the entry kept below is outdated from birth. */
        g = atomic_load(&gen);
        pthread_mutex_lock(&db_mu);
        r = ro ? kerf_store_token_verify(ro, token, tenant, &id) : -ENODEV;
        pthread_mutex_unlock(&db_mu);
        if (r == -ENODEV)
                return r;
        atomic_fetch_add(&misses, 1);
        if (r < 0)
                return r; /* never kept: a wrong guess costs a lookup, not memory */
        if (after_store_fn)
                after_store_fn();
        pthread_mutex_lock(&mu);
        keep(h, set, g, now, tenant, id);
        pthread_mutex_unlock(&mu);
        snprintf(ret_tenant, KERF_NAME_LEN, "%s", tenant);
        if (ret_id)
                *ret_id = id;
        return 0;
}

void kerfd__tokcache_stats(uint64_t *ret_hits, uint64_t *ret_misses, unsigned *ret_entries)
{
        unsigned n = 0;
        pthread_mutex_lock(&mu);
        for (unsigned s = 0; s < SETS; s++)
                for (int w = 0; w < WAYS; w++)
                        n += table[s][w].used;
        pthread_mutex_unlock(&mu);
        *ret_hits = atomic_load(&hits);
        *ret_misses = atomic_load(&misses);
        *ret_entries = n;
}

void kerfd__tokcache_test_clock(uint64_t (*clock_ms)(void))
{
        clock_fn = clock_ms;
}

void kerfd__tokcache_test_after_store(void (*fn)(void))
{
        after_store_fn = fn;
}
