/* SPDX-License-Identifier: Apache-2.0 */
/* bundle.h - the merged multi-node audit bundle of kerf cluster audit export (manifest.json,
 * merged.jsonl) and its verification, kerf audit verify --bundle (docs/CLUSTER.md) */
#ifndef KERF_CLI_BUNDLE_H
#define KERF_CLI_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>

/* One node of a cluster export, as kerf cluster audit export saw it. `error` is empty when the
 * node's directory (DIR/NAME/checkpoint.json, audit.jsonl) was written, else why it was not. */
typedef struct cli_bundle_node {
        char name[64];
        char endpoint[256];
        long long exported_s;
        char error[512];
} cli_bundle_node;

/* Writes DIR/merged.jsonl and then DIR/manifest.json (each to a temporary file renamed into
 * place) over the `n` nodes. A node whose files cannot be read back or are not a checkpoint and
 * an audit export gets its `error` set and is listed as failed. *ret_records: the records
 * merged. Returns 0, or -errno when a bundle file could not be written (err says which). */
int cli_bundle_write(const char *dir, cli_bundle_node *nodes, size_t n, size_t *ret_records,
                     char *err, size_t errlen);

/* Verifies the bundle in `dir` and prints per node OK/FAIL with the reasons (or, `json`, one
 * object). Returns the exit code: 0 when every node and merged.jsonl verify, 1 when anything
 * fails or a node's export had failed (partial), 2 when dir holds no manifest.json. */
int cli_bundle_verify(const char *dir, bool json);

/* The whole file at `path` (heap, NUL-terminated; free()); *ret_len its size when not NULL.
 * NULL with errno set when it cannot be read. */
char *cli_file_read(const char *path, size_t *ret_len);

/* SHA-256 of len bytes at data as 64 lowercase hex digits and a NUL (libsodium). */
#define CLI_SHA256_HEX 65
void cli_sha256_hex(const void *data, size_t len, char out[CLI_SHA256_HEX]);

#endif
