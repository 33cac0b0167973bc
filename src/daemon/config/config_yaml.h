/* SPDX-License-Identifier: Apache-2.0 */
/* config_yaml.h - the YAML helpers config.c and config_tenant.c share while reading kerfd.yaml;
 * each getter checks one value and, on failure, writes "FILE:LINE: key: what is wrong" */
#ifndef KERFD_CONFIG_YAML_H
#define KERFD_CONFIG_YAML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "config.h"

typedef struct cfgctx {
        yaml_document_t doc;
        const char *file;
        char *err;
        size_t errlen;
} cfgctx;

#define FOR_PAIRS(x, map, p)                                                                       \
        for (yaml_node_pair_t *p = (map)->data.mapping.pairs.start;                                \
             p < (map)->data.mapping.pairs.top; p++)

/* Writes "FILE:LINE: <message>" (the line of `n`, 0 without one) and returns -KERF_EPARSE. */
int kerfd__cfg_fail(cfgctx *x, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
yaml_node_t *kerfd__cfg_node(cfgctx *x, int id);
/* The text of a scalar node, NULL for anything else. */
const char *kerfd__cfg_scalar(cfgctx *x, yaml_node_t *n);

/* Getters: 0 and the value, or kerfd__cfg_fail()'s code. Output written only on success. */
int kerfd__cfg_str(cfgctx *x, yaml_node_t *n, const char *key, char *out, size_t cap);
int kerfd__cfg_range(cfgctx *x, yaml_node_t *n, const char *key, uint64_t min, uint64_t max,
                     uint64_t *ret);
int kerfd__cfg_u64(cfgctx *x, yaml_node_t *n, const char *key, uint64_t max, uint64_t *ret);
int kerfd__cfg_bool(cfgctx *x, yaml_node_t *n, const char *key, bool *ret);
/* A size by the one rule (kerf_parse_size, docs/UNITS.md: a unit is required), min..max. */
int kerfd__cfg_size(cfgctx *x, yaml_node_t *n, const char *key, uint64_t min, uint64_t max,
                    uint64_t *ret);
/* A duration by the one rule (kerf_parse_duration: 90, 90s, 15m, 1h30m...), min..max seconds. */
int kerfd__cfg_duration(cfgctx *x, yaml_node_t *n, const char *key, uint64_t min, uint64_t max,
                        uint64_t *ret);
/* A mapping whose keys are strings, each given once; a list. */
int kerfd__cfg_map(cfgctx *x, yaml_node_t *n, const char *what);
int kerfd__cfg_seq(cfgctx *x, yaml_node_t *n, const char *what);

/* config_tenant.c: one entry of tenants: (appended to c->tenants), and tenant_defaults:. */
int kerfd__cfg_tenant(cfgctx *x, yaml_node_t *m, kerfd_config *c);
int kerfd__cfg_tenant_defaults(cfgctx *x, yaml_node_t *m, kerfd_config *c);
/* retention_cfg.c: the `retention` mapping into *ret (changed only on success). */
int kerfd_retention_parse(cfgctx *x, yaml_node_t *m, kerfd_retention_cfg *ret);
/* A kerfd.yaml section read through its descriptors (config.c; config_fields.h). */
struct kerfd_cfg_section;
int kerfd__cfg_section(cfgctx *x, yaml_node_t *m, const struct kerfd_cfg_section *sec, void *base);
/* policy.routes (config.c), the policy table's custom key; base is the kerfd_config. */
int kerfd__cfg_policy_routes(cfgctx *x, yaml_node_t *v, void *base);

#endif /* KERFD_CONFIG_YAML_H */
