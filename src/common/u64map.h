/* SPDX-License-Identifier: Apache-2.0 */
/* u64map.h - open-addressing hash map from non-zero uint64_t keys to pointers */
#ifndef KERF_U64MAP_H
#define KERF_U64MAP_H

#include <stddef.h>
#include <stdint.h>

/* Caller-allocated; zero-initialise or call kerf_u64map_init(). Key 0 is reserved. */
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

#endif /* KERF_U64MAP_H */
