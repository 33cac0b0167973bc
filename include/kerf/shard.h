/* SPDX-License-Identifier: Apache-2.0 */
/* shard.h - the one rule that turns Slurm `shard` gres into GPU memory and compute */
#ifndef KERF_SHARD_H
#define KERF_SHARD_H

#include <stdint.h>

/* How many shards one GPU offers (docs/CLUSTER.md "Node configuration").
 *   KERF_SHARD_PCT: 100 shards per GPU, one per 1 % of the GPU (the default);
 *   KERF_SHARD_GIB: one shard per whole GiB of the GPU's memory;
 *   KERF_SHARD_COUNT: `count` shards per GPU (--shards-per-gpu N).
 * A grant of S shards on a GPU offering P is the fraction S/P of that GPU: S/P of its memory
 * and S/P of its compute (at least 1 %). kerf slurm gres-conf and the SPANK plugin both call
 * these functions, so the count Slurm schedules and the cap kerfd enforces cannot disagree. */
typedef enum {
        KERF_SHARD_PCT = 0,
        KERF_SHARD_GIB,
        KERF_SHARD_COUNT,
} kerf_shard_unit;

#define KERF_SHARD_MAX_PER_GPU 10000u

typedef struct kerf_shard_rule {
        kerf_shard_unit unit;
        unsigned count; /* KERF_SHARD_COUNT only: 1..KERF_SHARD_MAX_PER_GPU */
} kerf_shard_rule;

/* The default rule: KERF_SHARD_PCT. */
void kerf_shard_rule_default(kerf_shard_rule *ret);

/* Parses a rule: `unit` is "pct" or "gib" (or NULL), `per_gpu` a decimal count
 * 1..KERF_SHARD_MAX_PER_GPU (or NULL); both NULL gives the default, both set is -EINVAL.
 * Returns 0 or -EINVAL; *ret is written only on success. */
int kerf_shard_rule_parse(const char *unit, const char *per_gpu, kerf_shard_rule *ret);

/* The rule's name for output: "pct", "gib" or "count". Static string. */
const char *kerf_shard_unit_name(kerf_shard_unit u);

/* Shards offered by a GPU with `mem_bytes` of memory under rule `r` (0 when the GPU has less
 * than 1 GiB under KERF_SHARD_GIB). */
unsigned kerf_shard_per_gpu(const kerf_shard_rule *r, uint64_t mem_bytes);

/* What `shards` shards of a GPU with `mem_bytes` of memory give: memory in bytes and compute
 * percent (1..100). Returns 0, or -EINVAL when shards is 0 or more than the GPU offers;
 * outputs are written only on success. */
int kerf_shard_grant(const kerf_shard_rule *r, unsigned shards, uint64_t mem_bytes,
                     uint64_t *ret_mem, unsigned *ret_compute_pct);

/* The order of MIG instances in gres.conf, which is the order Slurm numbers their devices in
 * (after the whole GPUs): by GPU index, then by kerf unit id. kerf slurm gres-conf writes them in
 * this order and the SPANK plugin maps Slurm's device index back to an instance with it: one
 * comparison (qsort-style: <0, 0, >0) for both. */
int kerf_gres_mig_order(long long gpu_a, long long unit_a, long long gpu_b, long long unit_b);

/* The same order as a qsort comparator over an array of `json_t *`, each a MIG unit of
 * kerfd's GET /v1/node answer ("gpu", "unit"): what gres-conf and the plugin sort with. */
int kerf_gres_mig_cmp(const void *a, const void *b);

#endif /* KERF_SHARD_H */
