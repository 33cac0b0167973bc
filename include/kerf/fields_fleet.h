/* SPDX-License-Identifier: Apache-2.0 */
/* fields_fleet.h - field descriptors (kerf/fields.h) of the fleet file's objects (docs/FLEET.md):
 * the document, a node entry and a GPU entry. kerf_fleet_parse_yaml() checks each key's scalar
 * with kerf_field_check_text(), takes its defaults from them and suggests the nearest key for an
 * unknown one; docs/FLEET.md's key tables are checked against them (core_test_fields_fleet). */
#ifndef KERF_FIELDS_FLEET_H
#define KERF_FIELDS_FLEET_H

#include <stddef.h>

#include "kerf/fields.h"

/* Order: the order of docs/FLEET.md's tables. */
extern const kerf_field kerf_fleet_doc_fields[]; /* the document: nodes */
extern const size_t kerf_fleet_doc_fields_count;
extern const kerf_field kerf_fleet_node_fields[]; /* an entry of nodes */
extern const size_t kerf_fleet_node_fields_count;
extern const kerf_field kerf_fleet_gpu_fields[]; /* an entry of a node's gpus */
extern const size_t kerf_fleet_gpu_fields_count;

#endif /* KERF_FIELDS_FLEET_H */
