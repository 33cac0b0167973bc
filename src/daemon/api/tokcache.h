/* SPDX-License-Identifier: Apache-2.0 */
/* tokcache.h - bearer tokens verified before n->mu: a bounded cache of the tokens found valid,
 * in front of a read-only store connection of its own (docs/DAEMON.md "The daemon mutex") */
#ifndef KERFD_TOKCACHE_H
#define KERFD_TOKCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kerf/store.h"

/* Entries the cache holds at most (4-way sets; the least recently used of a full set goes):
 * about 150 KiB. Only tokens the store found valid are kept, so a caller trying tokens at
 * random costs one store lookup each and no memory. */
#define KERFD_TOKCACHE_SLOTS 1024
/* An entry is answered for this long, then verified against the store again: a bound on how
 * long a change to kerf.db made behind kerfd's back (sqlite3 by hand) goes unseen. Every
 * change kerfd makes itself (token revocation) takes effect at once (_invalidate). */
#define KERFD_TOKCACHE_TTL_MS 10000

/* Opens the store at db_path read-only for verifying tokens (its own SQLite connection,
 * serialised by a lock of this module: the daemon's connection is used under n->mu only).
 * 0, or -errno with a line in err; without it kerfd__tokcache_verify answers -ENODEV. Call at
 * start, before the listeners. */
int kerfd__tokcache_open(const char *db_path, char *err, size_t errlen);
/* Closes the connection and forgets every entry (after the listeners stopped). */
void kerfd__tokcache_close(void);

/* Verifies a presented token: 0 with its tenant and token id (ret_id may be NULL) when valid,
 * -KERF_EPERM when malformed, unknown or revoked, -ENODEV when no store is open
 * (kerfd__tokcache_open), another -errno when the store could not be read. The token itself
 * is never stored: entries are keyed by a keyed BLAKE2b of it (a key made at open). Takes only
 * this module's locks, never n->mu; call it without n->mu. Thread-safe. */
int kerfd__tokcache_verify(const char *token, char ret_tenant[KERF_NAME_LEN], uint64_t *ret_id);
/* Every entry is verified against the store again from now on. Call after committing a change
 * that makes a token invalid (revocation; deleting a token or its tenant), before answering:
 * the next request that presents it is refused. Thread-safe, lock-free. */
void kerfd__tokcache_invalidate(void);

/* Counters: answered from the cache, verified against the store, entries held now. */
void kerfd__tokcache_stats(uint64_t *ret_hits, uint64_t *ret_misses, unsigned *ret_entries);
/* tests: the clock (monotonic ms; NULL: the real one); a function run by a verify between its
 * store read and keeping the entry (NULL: none), to put a revocation exactly there */
void kerfd__tokcache_test_clock(uint64_t (*clock_ms)(void));
void kerfd__tokcache_test_after_store(void (*fn)(void));

#endif
