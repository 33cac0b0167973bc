/* SPDX-License-Identifier: Apache-2.0 */
/* client.h - the small client library for kerfd's HTTP API (CLI, SPANK plugin, tests) */
#ifndef KERF_CLIENT_H
#define KERF_CLIENT_H

#include <stddef.h>

typedef struct kerf_client kerf_client;

typedef struct kerf_client_opts {
        const char *socket; /* Unix socket path; NULL = kerf_client_default_socket() */
        const char *url;    /* "http://127.0.0.1:PORT" instead of the socket; NULL = socket */
        const char *token;  /* bearer token; NULL = $KERF_TOKEN, or none */
        long timeout_ms;    /* whole-request timeout; 0 = 30 s */
} kerf_client_opts;

/* Writes the default socket path: $KERF_SOCKET if set, /run/kerf/kerfd.sock for root,
 * $XDG_RUNTIME_DIR/kerf/kerfd.sock otherwise (or /tmp/kerf-UID/kerfd.sock without it).
 * Returns 0 or -ENAMETOOLONG. */
int kerf_client_default_socket(char *buf, size_t len);

/* Creates a client (no connection is made yet). Returns 0, -EINVAL or -ENOMEM; free with
 * kerf_client_free(). A client is not thread-safe; use one per thread. */
int kerf_client_new(const kerf_client_opts *o, kerf_client **ret);
kerf_client *kerf_client_free(kerf_client *c);

/* A response. `body` is NUL-terminated (len excludes the NUL) and owned by the caller: release
 * with kerf_client_response_fini(). */
typedef struct kerf_client_response {
        long status;
        char *body;
        size_t len;
        char content_type[64];
} kerf_client_response;
void kerf_client_response_fini(kerf_client_response *r);

/* Sends METHOD PATH (e.g. "GET", "/v1/tasks?limit=10") with an optional JSON body. Returns 0
 * when an HTTP answer came back (any status: see ret->status), or -ECONNREFUSED / -ENOENT (no
 * socket) / -ETIMEDOUT / -EIO when kerfd could not be reached; kerf_client_error() then says
 * why in words. `ret` is written only on success. */
int kerf_client_call(kerf_client *c, const char *method, const char *path, const char *body,
                     kerf_client_response *ret);

/* The last transport error, in words ("" if none). Valid until the next call. */
const char *kerf_client_error(const kerf_client *c);

#endif /* KERF_CLIENT_H */
