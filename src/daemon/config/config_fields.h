/* SPDX-License-Identifier: Apache-2.0 */
/* config_fields.h - field descriptors of kerfd.yaml's limits: and retention: keys
 * (kerf/fields.h): the one place of each key's type, bounds and default; config.c reads a
 * section through its table (kerfd__cfg_section), docs/DAEMON.md's rows are checked against
 * them (daemon_test_config_fields) */
#ifndef KERFD_CONFIG_FIELDS_H
#define KERFD_CONFIG_FIELDS_H

#include <stddef.h>

#include "config.h"
#include "kerf/fields.h"

/* where a key's value goes in kerfd_config */
typedef enum kerfd_cfg_slot {
        KERFD_SLOT_UNSIGNED,
        KERFD_SLOT_U64,
        KERFD_SLOT_DOUBLE,
        KERFD_SLOT_BOOL,   /* a bool member: a KERF_FIELD_BOOL, or a two-word KERF_FIELD_ENUM
                            * (the second word is true) */
        KERFD_SLOT_INT,    /* an int-sized enum member: a KERF_FIELD_ENUM's value */
        KERFD_SLOT_STR,    /* a char[f.max + 1] member: a KERF_FIELD_STRING */
        KERFD_SLOT_CUSTOM, /* read by `custom` (a mapping or list the table cannot say) */
} kerfd_cfg_slot;

struct cfgctx;
struct yaml_node_s;

typedef struct kerfd_cfg_key {
        kerf_field f; /* name (the key under its section), type, bounds, default, help */
        size_t off;   /* offset of its member in the section's struct (kerfd_config for
                       * limits:, kerfd_retention_cfg for retention:) */
        kerfd_cfg_slot slot;
        /* KERFD_SLOT_CUSTOM: reads the value node into base; 0 or kerfd__cfg_fail()'s code */
        int (*custom)(struct cfgctx *x, struct yaml_node_s *v, void *base);
} kerfd_cfg_key;

/* a section of kerfd.yaml read through its table */
typedef struct kerfd_cfg_section {
        const char *name; /* "limits" */
        const kerfd_cfg_key *keys;
        size_t n;
} kerfd_cfg_section;

extern const kerfd_cfg_key kerfd_limits_keys[];
extern const size_t kerfd_limits_keys_count;
extern const kerfd_cfg_key kerfd_retention_keys[];
extern const size_t kerfd_retention_keys_count;
extern const kerfd_cfg_section kerfd_cfg_limits, kerfd_cfg_retention, kerfd_cfg_policy,
    kerfd_cfg_backend;

extern const kerfd_cfg_key kerfd_policy_keys[], kerfd_backend_keys[];

/* Stores `v` (already within the key's bounds) into base's member for `k` (a number, a bool
 * or an enum's value; not a string or a custom key). */
void kerfd__cfg_key_store(void *base, const kerfd_cfg_key *k, uint64_t v);

/* Sets every member of a section's struct `base` to its descriptor's default. 0, or -EINVAL
 * when a default is not a value of its own type (a bug the unit test catches). */
int kerfd__cfg_defaults(const kerfd_cfg_section *sec, void *base);
int kerfd__cfg_limits_defaults(kerfd_config *c);

#endif /* KERFD_CONFIG_FIELDS_H */
