/* SPDX-License-Identifier: Apache-2.0 */
/* http.h - kerfd's HTTP layer over libmicrohttpd: listeners, identity, request/answer helpers */
#ifndef KERFD_HTTP_H
#define KERFD_HTTP_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "internal.h"

/* One request, as the API handlers see it. */
typedef struct kreq {
        kerfd_node *node;
        struct MHD_Connection *conn;
        const char *method;
        char path[512]; /* URL path without query */
        char *body;     /* NUL-terminated, may be NULL */
        size_t len;
        bool too_large;
        bool admin;    /* peer is root / kerf group / kerfd's own uid */
        bool has_cred; /* peer credentials known (Unix socket) */
        uid_t uid;
        char tenant[KERF_NAME_LEN]; /* from the bearer token; "" for an admin without one */
        char actor[96];             /* for audit: "uid:0", "tenant:foo" */
        /* the answer */
        unsigned status;
        json_t *out; /* JSON answer (simulated flag added) */
        char *raw;   /* or a raw body (owned, malloc) */
        size_t raw_len;
        const char *ctype; /* content type of raw */
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

/* api.c: routes one request (body complete). */
void kerfd_api_dispatch(kreq *r);

#endif /* KERFD_HTTP_H */
