/* SPDX-License-Identifier: Apache-2.0 */
/* shard.c - Slurm shard counts per GPU and what a number of shards grants (kerf/shard.h) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kerf/shard.h"

#define GIB (1024ull * 1024 * 1024)

void kerf_shard_rule_default(kerf_shard_rule *ret)
{
        ret->unit = KERF_SHARD_PCT;
        ret->count = 0;
}

int kerf_shard_rule_parse(const char *unit, const char *per_gpu, kerf_shard_rule *ret)
{
        kerf_shard_rule r;
        kerf_shard_rule_default(&r);
        if (unit && per_gpu)
                return -EINVAL;
        if (unit) {
                if (!strcmp(unit, "pct"))
                        r.unit = KERF_SHARD_PCT;
                else if (!strcmp(unit, "gib"))
                        r.unit = KERF_SHARD_GIB;
                else
                        return -EINVAL;
        } else if (per_gpu) {
                char *end;
                unsigned long v;
                if (per_gpu[0] < '0' || per_gpu[0] > '9')
                        return -EINVAL;
                errno = 0;
                v = strtoul(per_gpu, &end, 10);
                if (errno || *end || v < 1 || v > KERF_SHARD_MAX_PER_GPU)
                        return -EINVAL;
                r.unit = KERF_SHARD_COUNT;
                r.count = (unsigned)v;
        }
        *ret = r;
        return 0;
}

const char *kerf_shard_unit_name(kerf_shard_unit u)
{
        switch (u) {
        case KERF_SHARD_GIB:
                return "gib";
        case KERF_SHARD_COUNT:
                return "count";
        case KERF_SHARD_PCT:
        default:
                return "pct";
        }
}

unsigned kerf_shard_per_gpu(const kerf_shard_rule *r, uint64_t mem_bytes)
{
        switch (r->unit) {
        case KERF_SHARD_GIB: {
                uint64_t g = mem_bytes / GIB;
                return g > KERF_SHARD_MAX_PER_GPU ? KERF_SHARD_MAX_PER_GPU : (unsigned)g;
        }
        case KERF_SHARD_COUNT:
                return r->count;
        case KERF_SHARD_PCT:
        default:
                return 100;
        }
}

int kerf_shard_grant(const kerf_shard_rule *r, unsigned shards, uint64_t mem_bytes,
                     uint64_t *ret_mem, unsigned *ret_compute_pct)
{
        unsigned per = kerf_shard_per_gpu(r, mem_bytes);
        uint64_t mem;
        unsigned pct;
        if (shards == 0 || per == 0 || shards > per)
                return -EINVAL;
        if (r->unit == KERF_SHARD_GIB)
                mem = (uint64_t)shards * GIB; /* exactly the GiB asked for */
        else /* shards/per of the memory, without overflow: per <= 10000 */
                mem = mem_bytes / per * shards + mem_bytes % per * shards / per;
        pct = (unsigned)((100ull * shards) / per);
        if (pct == 0)
                pct = 1;
        *ret_mem = mem;
        *ret_compute_pct = pct;
        return 0;
}

int kerf_gres_mig_order(long long gpu_a, long long unit_a, long long gpu_b, long long unit_b)
{
        if (gpu_a != gpu_b)
                return gpu_a < gpu_b ? -1 : 1;
        return unit_a < unit_b ? -1 : unit_a > unit_b;
}

int kerf_gres_mig_cmp(const void *a, const void *b)
{
        json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
        return kerf_gres_mig_order(json_integer_value(json_object_get(x, "gpu")),
                                   json_integer_value(json_object_get(x, "unit")),
                                   json_integer_value(json_object_get(y, "gpu")),
                                   json_integer_value(json_object_get(y, "unit")));
}
