/* SPDX-License-Identifier: Apache-2.0 */
/* uidcache.h - who is an admin on kerfd's socket (uid 0, kerfd's own uid, group `kerf`),
 * cached so that NSS (getpwuid_r, getgrouplist) does not run under n->mu
 * (docs/DAEMON.md "The daemon mutex") */
#ifndef KERFD_UIDCACHE_H
#define KERFD_UIDCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* An entry is fresh for this long; a stale one is answered from the cache under n->mu (and
 * refreshed by the ticker outside it), looked up again by a caller that may block. */
#define KERFD_UIDCACHE_TTL_MS 5000

/* What NSS says of a uid: its name ("" when it has none) and whether group `kerf` is one of its
 * groups. Returns 0, or -1 when the lookup failed (not an admin). Replaceable for tests. */
typedef int (*kerfd_uid_resolver)(uid_t uid, gid_t kerf_gid, char *name, size_t len, bool *admin);

/* Looks up group `kerf` (NSS): at start, before any thread takes n->mu. */
void kerfd__uidcache_init(void);
/* group `kerf`'s gid; false when there is no such group */
bool kerfd__uidcache_kerf_gid(gid_t *gid);
/* Whether uid is an admin: uid 0 and kerfd's own uid without a lookup; gid (the peer's primary
 * group, -1 when not known) == kerf's gid too. may_block: the caller holds no lock, a missing or
 * stale entry is looked up now; else (under n->mu) a stale entry is answered as it is and a
 * missing one is looked up all the same, counted (kerfd__uidcache_locked_misses). name (may be
 * NULL) gets the user name when known. */
bool kerfd__uid_admin(long long uid, long long gid, bool may_block, char *name, size_t len);
/* Looks uid up now unless fresh (no lock held), and keeps it fresh from now on when pin: the
 * uids of tenants (config file, tenant creation) and of run_as. */
void kerfd__uidcache_warm(long long uid, bool pin);
/* True when some entry should be looked up again (cheap). */
bool kerfd__uidcache_due(void);
/* Looks up again the stale entries that were pinned or used lately; call without n->mu. */
void kerfd__uidcache_refresh(void);
/* NSS lookups made for a caller under n->mu (a uid that was not warmed before). */
unsigned long kerfd__uidcache_locked_misses(void);

/* tests: the resolver, the clock (monotonic ms), kerf's gid; and forget every entry */
void kerfd__uidcache_test_hooks(kerfd_uid_resolver r, uint64_t (*clock_ms)(void),
                                long long kerf_gid);

#endif
