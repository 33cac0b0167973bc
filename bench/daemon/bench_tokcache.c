/* SPDX-License-Identifier: Apache-2.0 */
/* bench_tokcache.c - what verifying a bearer token costs: the store's verify (a keyed BLAKE2b
 * and an indexed SQLite read: what ran under kerfd's mutex before issue 8 D4) against the token
 * cache kerfd now consults before the mutex (src/daemon/api/tokcache.c), hit and miss.
 * usage: bench_tokcache [--seconds S] [--tokens N]; prints ns per verify and verifies/s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kerf/store.h"
#include "tokcache.h"

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *err)
{
        fprintf(stderr, "bench_tokcache: %s: %s\n", what, err);
        exit(1);
}

enum { STORE, HIT, MISS };

static void run(int mode, kerf_store *s, char (*toks)[KERF_STORE_TOKEN_LEN], int n, double secs)
{
        static const char *name[] = {"store verify (under n->mu before)", "cache hit",
                                     "cache miss (invalidated each time)"};
        char tenant[KERF_NAME_LEN];
        unsigned long long k = 0;
        double t0 = now_s(), el;

        do {
                for (int i = 0; i < 256; i++, k++) {
                        const char *t = toks[k % (unsigned)n];
                        int r;
                        if (mode == MISS)
                                kerfd__tokcache_invalidate();
                        r = mode == STORE ? kerf_store_token_verify(s, t, tenant, NULL)
                                          : kerfd__tokcache_verify(t, tenant, NULL);
                        if (r < 0)
                                die("verify", "a valid token was refused");
                }
        } while ((el = now_s() - t0) < secs);
        printf("%-36s %8.0f ns  %10.0f verifies/s\n", name[mode], el * 1e9 / (double)k,
               (double)k / el);
}

int main(int argc, char **argv)
{
        double secs = 1.0;
        int n = 100;
        char dir[] = "/tmp/kerf-bench-tok-XXXXXX", path[128], err[256] = "";
        kerf_store *s = NULL;
        kerf_store_tenant t;
        uint64_t id;

        for (int i = 1; i + 1 < argc; i += 2) {
                if (!strcmp(argv[i], "--seconds"))
                        secs = atof(argv[i + 1]);
                else if (!strcmp(argv[i], "--tokens"))
                        n = atoi(argv[i + 1]);
        }
        if (secs <= 0 || n < 1 || n > KERFD_TOKCACHE_SLOTS)
                die("flags", "--seconds > 0, --tokens 1..1024");
        if (!mkdtemp(dir))
                die("mkdtemp", "failed");
        snprintf(path, sizeof(path), "%s/kerf.db", dir);
        if (kerf_store_open(path, NULL, &s, err, sizeof(err)) < 0)
                die("store", err);
        if (kerf_store_tenant_init(&t, "q") < 0 || kerf_store_tenant_upsert(s, &t) < 0)
                die("tenant", kerf_store_errmsg(s));
        char(*toks)[KERF_STORE_TOKEN_LEN] = calloc((size_t)n, KERF_STORE_TOKEN_LEN);
        for (int i = 0; i < n; i++)
                if (kerf_store_token_create(s, "q", NULL, 0, &id, toks[i]) < 0)
                        die("token", kerf_store_errmsg(s));
        if (kerfd__tokcache_open(path, err, sizeof(err)) < 0)
                die("tokcache", err);
        printf("== bench_tokcache: %d tokens, %.1f s each\n", n, secs);
        run(STORE, s, toks, n, secs);
        run(HIT, s, toks, n, secs);
        run(MISS, s, toks, n, secs);
        kerfd__tokcache_close();
        kerf_store_close(s);
        free(toks);
        char p[160];
        const char *sfx[] = {"", "-wal", "-shm"};
        for (int i = 0; i < 3; i++) {
                snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
                unlink(p);
        }
        rmdir(dir);
        return 0;
}
