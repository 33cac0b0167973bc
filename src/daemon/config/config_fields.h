/* SPDX-License-Identifier: Apache-2.0 */
/* config_fields.h - field descriptors of kerfd.yaml's limits: keys (kerf/fields.h): the one
 * place of each key's type, bounds and default; config.c reads them, docs/DAEMON.md's table is
 * checked against them (daemon_test_config_fields) */
#ifndef KERFD_CONFIG_FIELDS_H
#define KERFD_CONFIG_FIELDS_H

#include <stddef.h>

#include "config.h"
#include "kerf/fields.h"

/* where a key's value goes in kerfd_config */
typedef enum kerfd_cfg_slot {
        KERFD_SLOT_UNSIGNED,
        KERFD_SLOT_U64,
        KERFD_SLOT_DOUBLE
} kerfd_cfg_slot;

typedef struct kerfd_cfg_key {
        kerf_field f; /* name (the key under limits:), type, bounds, default, help */
        size_t off;   /* offsetof(kerfd_config, ...) */
        kerfd_cfg_slot slot;
} kerfd_cfg_key;

extern const kerfd_cfg_key kerfd_limits_keys[];
extern const size_t kerfd_limits_keys_count;

/* Stores `v` (already within the key's bounds) into c's member for `k`. */
void kerfd__cfg_key_store(kerfd_config *c, const kerfd_cfg_key *k, uint64_t v);

/* Sets every limits: member of `c` to its descriptor's default. 0, or -EINVAL when a default
 * is not a value of its own type (a bug the unit test catches). */
int kerfd__cfg_limits_defaults(kerfd_config *c);

#endif /* KERFD_CONFIG_FIELDS_H */
