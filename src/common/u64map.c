/* SPDX-License-Identifier: Apache-2.0 */
/* u64map.c - open-addressing (linear probing) hash map from uint64_t to pointers */
#include <errno.h>
#include <stdlib.h>

#include "u64map.h"

#define TOMB UINT64_MAX

static size_t slot_of(uint64_t k, size_t cap)
{
        /* splitmix64 finaliser: sequential ids spread over the table */
        k ^= k >> 30;
        k *= 0xbf58476d1ce4e5b9ULL;
        k ^= k >> 27;
        k *= 0x94d049bb133111ebULL;
        k ^= k >> 31;
        return (size_t)k & (cap - 1);
}

void kerf_u64map_init(kerf_u64map *m)
{
        m->keys = NULL;
        m->vals = NULL;
        m->cap = m->len = m->used = 0;
}

void kerf_u64map_fini(kerf_u64map *m)
{
        free(m->keys);
        free(m->vals);
        kerf_u64map_init(m);
}

static int grow(kerf_u64map *m)
{
        size_t ncap = m->cap ? m->cap : 16;
        while (m->len * 2 + 2 > ncap)
                ncap *= 2;
        uint64_t *nk = calloc(ncap, sizeof(*nk));
        void **nv = calloc(ncap, sizeof(*nv));
        if (!nk || !nv) {
                free(nk);
                free(nv);
                return -ENOMEM;
        }
        for (size_t i = 0; i < m->cap; i++) {
                uint64_t k = m->keys[i];
                if (k == 0 || k == TOMB)
                        continue;
                size_t j = slot_of(k, ncap);
                while (nk[j])
                        j = (j + 1) & (ncap - 1);
                nk[j] = k;
                nv[j] = m->vals[i];
        }
        free(m->keys);
        free(m->vals);
        m->keys = nk;
        m->vals = nv;
        m->cap = ncap;
        m->used = m->len;
        return 0;
}

int kerf_u64map_put(kerf_u64map *m, uint64_t key, void *val)
{
        if (key == 0 || key == TOMB)
                return -EINVAL;
        if ((m->used + 1) * 4 >= m->cap * 3) {
                int r = grow(m);
                if (r < 0)
                        return r;
        }
        size_t i = slot_of(key, m->cap), tomb = SIZE_MAX;
        for (;;) {
                uint64_t k = m->keys[i];
                if (k == key) {
                        m->vals[i] = val;
                        return 0;
                }
                if (k == TOMB && tomb == SIZE_MAX)
                        tomb = i;
                if (k == 0)
                        break;
                i = (i + 1) & (m->cap - 1);
        }
        if (tomb != SIZE_MAX) {
                i = tomb;
        } else {
                m->used++;
        }
        m->keys[i] = key;
        m->vals[i] = val;
        m->len++;
        return 0;
}

static size_t find(const kerf_u64map *m, uint64_t key)
{
        if (m->cap == 0 || key == 0 || key == TOMB)
                return SIZE_MAX;
        size_t i = slot_of(key, m->cap);
        for (;;) {
                uint64_t k = m->keys[i];
                if (k == key)
                        return i;
                if (k == 0)
                        return SIZE_MAX;
                i = (i + 1) & (m->cap - 1);
        }
}

void *kerf_u64map_get(const kerf_u64map *m, uint64_t key)
{
        size_t i = find(m, key);
        return i == SIZE_MAX ? NULL : m->vals[i];
}

void *kerf_u64map_del(kerf_u64map *m, uint64_t key)
{
        size_t i = find(m, key);
        if (i == SIZE_MAX)
                return NULL;
        void *v = m->vals[i];
        m->keys[i] = TOMB;
        m->vals[i] = NULL;
        m->len--;
        return v;
}

bool kerf_u64map_next(const kerf_u64map *m, kerf_u64map_iter *it, uint64_t *ret_key, void **ret_val)
{
        /* del only turns a slot into a tombstone and never moves an entry, so a slot index
         * stays a valid position across deletions */
        for (; it->slot < m->cap; it->slot++) {
                uint64_t k = m->keys[it->slot];
                if (k == 0 || k == TOMB)
                        continue;
                if (ret_key)
                        *ret_key = k;
                if (ret_val)
                        *ret_val = m->vals[it->slot];
                it->slot++;
                return true;
        }
        return false;
}
