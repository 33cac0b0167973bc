/* SPDX-License-Identifier: Apache-2.0 */
/* bundle.h - the merged multi-node audit bundle of kerf cluster audit export (manifest.json,
 * merged.jsonl) and its verification, kerf audit verify --bundle (docs/CLUSTER.md) */
#ifndef KERF_CLI_BUNDLE_H
#define KERF_CLI_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>

#include "kerf/store.h"

/* One node of a cluster export, as kerf cluster audit export saw it. `error` is empty when the
 * node's directory (DIR/NAME/checkpoint.json, audit.jsonl) was written, else why it was not. A
 * node with a `key` whose checkpoint another key signed is listed as failed. */
typedef struct cli_bundle_node {
        char name[64];
        char endpoint[256];
        long long exported_s;
        char error[512];
        char key[KERF_STORE_PK_HEX]; /* the nodes file's audit_key, "" when none */
} cli_bundle_node;

/* Writes DIR/merged.jsonl and then DIR/manifest.json (each to a temporary file renamed into
 * place) over the `n` nodes. A node whose files cannot be read back or are not a checkpoint and
 * an audit export gets its `error` set and is listed as failed. *ret_records: the records
 * merged. Returns 0, or -errno when a bundle file could not be written (err says which). */
int cli_bundle_write(const char *dir, cli_bundle_node *nodes, size_t n, size_t *ret_records,
                     char *err, size_t errlen);

/* A node the verifier expects in the bundle (the nodes file's entry), and the public key its
 * checkpoint must be signed with ("" when the nodes file gives none: the node set is pinned,
 * not its key). */
typedef struct cli_bundle_pin {
        char name[64];
        char key[KERF_STORE_PK_HEX];
} cli_bundle_pin;

/* Verifies the bundle in `dir` and prints per node OK/FAIL with the reasons (or, `json`, one
 * object). With `pins` (n_pins entries, read from the nodes file `pins_from`), the bundle must
 * hold exactly those nodes and each pinned key must have signed its node's checkpoint; NULL:
 * neither is checked (the output says so). Returns the exit code: 0 when every node and
 * merged.jsonl verify, 1 when anything fails or a node's export had failed (partial), 2 when
 * dir holds no manifest.json. */
int cli_bundle_verify(const char *dir, const cli_bundle_pin *pins, size_t n_pins,
                      const char *pins_from, bool json);

/* The nodes file at `file` (NULL: $KERF_NODES, else ~/.config/kerf/nodes.yaml) as pins: each
 * node's name and its `audit_key`. 0, or an exit code after a message (cmd_cluster.c). */
int cli_cluster_pins(const char *file, cli_bundle_pin **ret, size_t *ret_n, char *path,
                     size_t pathcap);

/* clifile.c: the whole file at `path` (heap, NUL-terminated; free()); *ret_len its size when
 * not NULL. NULL with errno set when it cannot be read. */
char *cli_file_read(const char *path, size_t *ret_len);

/* SHA-256 of len bytes at data as 64 lowercase hex digits and a NUL (libsodium). */
#define CLI_SHA256_HEX 65
void cli_sha256_hex(const void *data, size_t len, char out[CLI_SHA256_HEX]);

/* An Ed25519 public key given as 64 hex digits or as a file holding them (kerfd's
 * <state>/audit.pub) into pub. 0, or -1 with `why` set. */
int cli_pub_key_parse(const char *arg, char pub[KERF_STORE_PK_HEX], char *why, size_t cap);
/* The same, printing "OPT: why" on failure: 0 or KERF_EXIT_USAGE. */
int cli_pub_key(const char *arg, const char *opt, char pub[KERF_STORE_PK_HEX]);

#endif
