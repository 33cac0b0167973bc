/* SPDX-License-Identifier: Apache-2.0 */
/* fleet.c - building a fleet description: nodes, GPUs, deterministic UUIDs, NVLink peers */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerf/core.h"

int kerf_fleet_new(kerf_fleet **ret)
{
        kerf_fleet *f;

        if (!ret)
                return -EINVAL;
        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        *ret = f;
        return 0;
}

kerf_fleet *kerf_fleet_free(kerf_fleet *f)
{
        if (!f)
                return NULL;
        free(f->nodes);
        free(f->gpus);
        free(f);
        return NULL;
}

/* Printable, no spaces or control characters, 1..max-1 bytes. */
static bool token_ok(const char *s, size_t max)
{
        size_t n;

        if (!s)
                return false;
        n = strlen(s);
        if (n == 0 || n >= max)
                return false;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c <= 0x20 || c >= 0x7f)
                        return false;
        }
        return true;
}

/* Grows *arr (elements of `size` bytes) so that it holds at least `need`; 0 or -ENOMEM.
 * Leaves *arr and *cap unchanged on failure. */
static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
        size_t ncap;
        void *p;

        if (need <= *cap)
                return 0;
        ncap = *cap ? *cap : 8;
        while (ncap < need) {
                if (ncap > SIZE_MAX / 2 / size)
                        return -ENOMEM;
                ncap *= 2;
        }
        p = realloc(*arr, ncap * size);
        if (!p)
                return -ENOMEM;
        *arr = p;
        *cap = ncap;
        return 0;
}

int kerf_fleet_add_node(kerf_fleet *f, const char *name, uint64_t cpu_milli, uint64_t mem_bytes,
                        const char *driver, int cuda_version)
{
        kerf_node_desc *n;
        int r;

        if (!f || !token_ok(name, KERF_NAME_LEN) || cuda_version < 0)
                return -EINVAL;
        if (driver && !token_ok(driver, sizeof(n->driver_version)))
                return -EINVAL;
        if (f->n_nodes >= (size_t)INT32_MAX)
                return -EINVAL;
        for (size_t i = 0; i < f->n_nodes; i++)
                if (strcmp(f->nodes[i].name, name) == 0)
                        return -EINVAL;
        r = grow((void **)&f->nodes, &f->cap_nodes, f->n_nodes + 1, sizeof(*f->nodes));
        if (r < 0)
                return r;
        n = &f->nodes[f->n_nodes];
        memset(n, 0, sizeof(*n));
        snprintf(n->name, sizeof(n->name), "%s", name);
        snprintf(n->driver_version, sizeof(n->driver_version), "%s", driver ? driver : "unknown");
        n->cpu_milli = cpu_milli;
        n->mem_bytes = mem_bytes;
        n->cuda_version = cuda_version;
        n->first_gpu = (unsigned)f->n_gpus;
        n->n_gpus = 0;
        return (int)f->n_nodes++;
}

/* 64-bit FNV-1a over `s`, starting from `seed` instead of the usual offset basis, followed by
 * a murmur3-style finaliser: FNV-1a alone barely changes the high bits when only the last
 * character differs, and UUIDs of neighbouring GPUs would then look alike. */
static uint64_t hash64(uint64_t seed, const char *s)
{
        uint64_t h = seed;

        for (; *s; s++) {
                h ^= (unsigned char)*s;
                h *= 0x100000001b3ULL;
        }
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33;
        h *= 0xc4ceb9fe1a85ec53ULL;
        h ^= h >> 33;
        return h;
}

/* "GPU-" + 32 lowercase hex digits in 8-4-4-4-12 groups, from two seeded hashes of
 * "<node name>/<index>": stable across runs, builds and machines (docs/FLEET.md). */
static void derive_uuid(const char *node, unsigned index, char out[KERF_UUID_LEN])
{
        char key[KERF_NAME_LEN + 16];
        uint64_t hi, lo;

        snprintf(key, sizeof(key), "%s/%u", node, index);
        hi = hash64(0xcbf29ce484222325ULL, key);
        lo = hash64(0x6c62272e07bb0142ULL, key);
        snprintf(out, KERF_UUID_LEN, "GPU-%08x-%04x-%04x-%04x-%04x%08x", (unsigned)(hi >> 32),
                 (unsigned)((hi >> 16) & 0xffff), (unsigned)(hi & 0xffff), (unsigned)(lo >> 48),
                 (unsigned)((lo >> 32) & 0xffff), (unsigned)(lo & 0xffffffffu));
}

/* Caller-given UUIDs: "GPU-" then printable characters without spaces. */
static bool uuid_ok(const char *u)
{
        return token_ok(u, KERF_UUID_LEN) && strncmp(u, "GPU-", 4) == 0 && u[4] != '\0';
}

static unsigned char lower(unsigned char c)
{
        return c >= 'A' && c <= 'Z' ? (unsigned char)(c + ('a' - 'A')) : c;
}

/* ASCII case-insensitive equality; no locale, since this runs once per GPU already in the
 * fleet each time a GPU is added. */
static bool ascii_ieq(const char *a, const char *b)
{
        for (;; a++, b++) {
                unsigned char x = lower((unsigned char)*a), y = lower((unsigned char)*b);
                if (x != y)
                        return false;
                if (!x)
                        return true;
        }
}

int kerf_fleet_gpu_by_uuid(const kerf_fleet *f, const char *uuid)
{
        unsigned char first;

        if (!f || !uuid ||
            (lower((unsigned char)uuid[0]) != 'g' || lower((unsigned char)uuid[1]) != 'p' ||
             lower((unsigned char)uuid[2]) != 'u' || uuid[3] != '-'))
                return -ENOENT;
        /* every stored UUID starts with "GPU-" (uuid_ok, derive_uuid) */
        first = lower((unsigned char)uuid[4]);
        for (size_t i = 0; i < f->n_gpus; i++)
                if (lower((unsigned char)f->gpus[i].uuid[4]) == first &&
                    ascii_ieq(f->gpus[i].uuid + 4, uuid + 4))
                        return (int)i;
        return -ENOENT;
}

int kerf_fleet_add_gpu(kerf_fleet *f, unsigned node, const kerf_gpu_model *model, bool mig,
                       int numa, const char *uuid)
{
        char u[KERF_UUID_LEN];
        kerf_node_desc *n;
        kerf_gpu_desc *g;
        int r;

        if (!f || f->n_nodes == 0 || node != f->n_nodes - 1)
                return -EINVAL;
        /* Model masks index the table, so only table models are accepted. */
        if (kerf_gpu_model_index(model) < 0 || (mig && !kerf_gpu_model_has_mig(model)))
                return -EINVAL;
        if (numa < -1)
                return -EINVAL;
        n = &f->nodes[node];
        if (n->n_gpus >= KERF_MAX_NODE_GPUS || f->n_gpus >= (size_t)INT32_MAX)
                return -EINVAL;
        if (uuid) {
                if (!uuid_ok(uuid))
                        return -EINVAL;
                snprintf(u, sizeof(u), "%s", uuid);
        } else {
                derive_uuid(n->name, n->n_gpus, u);
        }
        if (kerf_fleet_gpu_by_uuid(f, u) >= 0)
                return -EINVAL;
        r = grow((void **)&f->gpus, &f->cap_gpus, f->n_gpus + 1, sizeof(*f->gpus));
        if (r < 0)
                return r;
        g = &f->gpus[f->n_gpus];
        memset(g, 0, sizeof(*g));
        memcpy(g->uuid, u, sizeof(g->uuid));
        g->model = model;
        g->node = node;
        g->index = n->n_gpus;
        g->numa = numa;
        g->nvlink_peers = 0;
        g->mig_enabled = mig;
        n->n_gpus++;
        return (int)f->n_gpus++;
}

int kerf_fleet_link(kerf_fleet *f, unsigned a, unsigned b)
{
        kerf_gpu_desc *ga, *gb;

        if (!f || a == b || a >= f->n_gpus || b >= f->n_gpus)
                return -EINVAL;
        ga = &f->gpus[a];
        gb = &f->gpus[b];
        if (ga->node != gb->node || ga->index >= 64 || gb->index >= 64)
                return -EINVAL;
        ga->nvlink_peers |= 1ULL << gb->index;
        gb->nvlink_peers |= 1ULL << ga->index;
        return 0;
}
