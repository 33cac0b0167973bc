/* SPDX-License-Identifier: Apache-2.0 */
/* handles.c - registry of live handles so stale or forged ones give INVALID_HANDLE, not a crash */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Open addressing keyed by pointer value; tombstones keep probe chains intact. */
#define TOMB ((uintptr_t)1)

static struct slot {
        uintptr_t key;
        int kind;
} * tab;
static size_t cap, used; /* used counts live + tombstones */
static pthread_mutex_t hmu = PTHREAD_MUTEX_INITIALIZER;

static size_t hash(uintptr_t k)
{
        k ^= k >> 33;
        k *= 0xff51afd7ed558ccdULL;
        k ^= k >> 33;
        return (size_t)k;
}

static void grow(void)
{
        size_t ncap = cap ? cap * 2 : 256;
        struct slot *nt = calloc(ncap, sizeof(*nt));
        if (!nt)
                return;
        for (size_t i = 0; i < cap; i++) {
                if (tab[i].key <= TOMB)
                        continue;
                size_t j = hash(tab[i].key) & (ncap - 1);
                while (nt[j].key)
                        j = (j + 1) & (ncap - 1);
                nt[j] = tab[i];
        }
        free(tab);
        tab = nt;
        cap = ncap;
        used = 0;
        for (size_t i = 0; i < cap; i++)
                used += tab[i].key != 0;
}

void kc__handle_add(const void *h, int kind)
{
        uintptr_t k = (uintptr_t)h;
        pthread_mutex_lock(&hmu);
        if ((used + 1) * 2 > cap)
                grow();
        if (cap) {
                size_t j = hash(k) & (cap - 1);
                while (tab[j].key > TOMB && tab[j].key != k)
                        j = (j + 1) & (cap - 1);
                if (!tab[j].key)
                        used++;
                tab[j].key = k;
                tab[j].kind = kind;
        }
        pthread_mutex_unlock(&hmu);
}

static struct slot *find(uintptr_t k)
{
        if (!cap || k <= TOMB)
                return NULL;
        size_t j = hash(k) & (cap - 1);
        for (size_t n = 0; n < cap && tab[j].key; n++, j = (j + 1) & (cap - 1))
                if (tab[j].key == k)
                        return &tab[j];
        return NULL;
}

void kc__handle_del(const void *h)
{
        pthread_mutex_lock(&hmu);
        struct slot *s = find((uintptr_t)h);
        if (s) {
                s->key = TOMB;
                s->kind = 0;
        }
        pthread_mutex_unlock(&hmu);
}

bool kc__handle_ok(const void *h, int kind)
{
        pthread_mutex_lock(&hmu);
        struct slot *s = find((uintptr_t)h);
        bool ok = s && s->kind == kind;
        pthread_mutex_unlock(&hmu);
        return ok;
}
