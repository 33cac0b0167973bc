/* SPDX-License-Identifier: Apache-2.0 */
/* u64map.h - open-addressing hash map from non-zero uint64_t keys to pointers */
#ifndef KERF_U64MAP_H
#define KERF_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Caller-allocated; zero-initialise or call kerf_u64map_init(). Keys 0 and UINT64_MAX are
 * reserved. The fields are the table's own: outside u64map.c read `len` at most, and walk the
 * entries with kerf_u64map_next(). */
typedef struct kerf_u64map {
        uint64_t *keys; /* 0 = empty, UINT64_MAX = tombstone */
        void **vals;
        size_t cap;  /* power of two */
        size_t len;  /* live entries */
        size_t used; /* live + tombstones */
} kerf_u64map;

void kerf_u64map_init(kerf_u64map *m);
/* Releases the table (not the values). */
void kerf_u64map_fini(kerf_u64map *m);
/* Inserts or replaces. Returns 0, -EINVAL (key 0 or UINT64_MAX) or -ENOMEM. */
int kerf_u64map_put(kerf_u64map *m, uint64_t key, void *val);
/* Returns the value or NULL. */
void *kerf_u64map_get(const kerf_u64map *m, uint64_t key);
/* Removes and returns the value, or NULL when absent. */
void *kerf_u64map_del(kerf_u64map *m, uint64_t key);

/* A position in a walk over a map's entries; start it with KERF_U64MAP_ITER_INIT. */
typedef struct kerf_u64map_iter {
        size_t slot; /* the next slot to look at */
} kerf_u64map_iter;
#define KERF_U64MAP_ITER_INIT                                                                      \
        {                                                                                          \
                0                                                                                  \
        }

/* Steps `it` to the next live entry of `m` (in table order: no order to rely on) and returns
 * true with its key in *ret_key and value in *ret_val (either may be NULL); false, outputs
 * untouched, once every entry has been seen. While walking:
 *   - kerf_u64map_del() of any key, the one just returned included, is safe: a removed entry
 *     that was not yet reached is not returned, every other entry still is, exactly once;
 *   - kerf_u64map_put() of a key already present (replacing its value) is safe;
 *   - kerf_u64map_put() of a new key is NOT: it may grow and rehash the table, after which the
 *     walk may skip or repeat entries. Collect the keys first and add them after the walk. */
bool kerf_u64map_next(const kerf_u64map *m, kerf_u64map_iter *it, uint64_t *ret_key,
                      void **ret_val);

#endif /* KERF_U64MAP_H */
