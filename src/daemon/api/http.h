/* SPDX-License-Identifier: Apache-2.0 */
/* http.h - kerfd's HTTP layer over libmicrohttpd: listeners, identity, request/answer helpers */
#ifndef KERFD_HTTP_H
#define KERFD_HTTP_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "node.h"

/* One request, as the API handlers see it. */
typedef struct kreq {
        kerfd_node *node;
        struct MHD_Connection *conn;
        const char *method;
        char path[512]; /* URL path without query */
        /* The route's {...} segments, in order (route.c): each cut to fit, param_len the
         * segment's real length. */
        char param[2][80];
        size_t param_len[2];
        unsigned n_param;
        char allow[48]; /* a 405's Allow header ("GET, POST"), "" otherwise */
        char *body;     /* NUL-terminated, may be NULL */
        size_t len;
        bool too_large;
        /* the metrics token: GET /metrics only, node-wide (metrics_auth.c) */
        bool metrics_reader;
        bool admin;    /* peer is root / kerf group / kerfd's own uid */
        bool has_cred; /* peer credentials known (Unix socket) */
        uid_t uid;
        /* from the bearer token; "" for an admin without one and for an anonymous caller of a
         * public route (route.c) */
        char tenant[KERF_NAME_LEN];
        char actor[96]; /* for audit: "uid:0", "tenant:foo" */
        /* the answer */
        unsigned status;
        json_t *out; /* JSON answer (simulated flag added) */
        char *raw;   /* or a raw body (owned, malloc) */
        size_t raw_len;
        const char *ctype; /* content type of raw */
        /* Set by a handler that snapshots under n->mu: called after n->mu is released to
         * build the answer from `render_ctx` (which it frees). /metrics uses it. */
        void (*render)(struct kreq *r);
        void *render_ctx;
} kreq;

/* Starts the listeners (Unix socket bound here, optional loopback TCP). 0 or -errno. */
int kerfd_http_start(kerfd_node *n);
/* Stops accepting, waits for in-flight requests, closes listeners, unlinks the socket. */
void kerfd_http_stop(void);

/* Answer helpers for the API handlers. They take ownership of `j`. */
void kreq_json(kreq *r, unsigned status, json_t *j);
void kreq_error(kreq *r, unsigned status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
const char *kreq_arg(kreq *r, const char *name);

/* http.c: true for an admin peer (uid 0, kerfd's uid, group kerf); may call NSS. */
bool kerfd__peer_admin(uid_t uid, gid_t gid);

/* http_sock.c: binds and listens on the Unix socket `path`, creating its directory (0750,
 * group kerf when have_gid and root) only when missing; an existing directory is never
 * changed and must be owned by kerfd's user or root and not writable by others without the
 * sticky bit. Returns the listening fd, or -errno with the reason in err. */
int kerfd__sock_bind(const char *path, bool have_gid, gid_t gid, char *err, size_t errlen);

/* http_conn.c: connection limits (docs/DAEMON.md "Connections"). The notify callback is
 * MHD_OPTION_NOTIFY_CONNECTION's (cls: the node); it refuses a peer over its share with a 503.
 * _busy marks a connection whose request arrived whole (true) or was answered (false: the
 * next request's deadline starts); _quiet one answered early (413, body not read). */
void kerfd__conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                        enum MHD_ConnectionNotificationCode toe);
void kerfd__conn_busy(struct MHD_Connection *conn, bool busy);
void kerfd__conn_quiet(struct MHD_Connection *conn);
/* Starts / stops the thread that cuts requests older than limits.request_timeout_s. */
int kerfd__conn_start(kerfd_node *n);
void kerfd__conn_stop(void);
/* Open connections, connections refused over a limit, requests cut at the deadline. */
void kerfd__conn_stats(uint64_t *ret_open, uint64_t *ret_refused, uint64_t *ret_cut);

/* route.c: answers one request (body complete) through the route table: 404, 405 (with Allow),
 * 507 for new work the store cannot take, 403 for an admin route, else the route's handler.
 * Called under n->mu with the caller identified. */
void kerfd_api_dispatch(kreq *r);
/* route.c: true when METHOD PATH is a public route (no identity needed). Reads only the static
 * table: safe without n->mu. */
bool kerfd__route_public(const char *method, const char *path);

#endif /* KERFD_HTTP_H */
