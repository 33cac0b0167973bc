/* SPDX-License-Identifier: Apache-2.0 */
/* http.c - libmicrohttpd listeners (own Unix socket + optional loopback TCP), body limits,
 * peer credentials and bearer tokens (verified before n->mu: tokcache.c); hands complete
 * requests to route.c */
#include <arpa/inet.h>
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "http.h"
#include "kerf/errno.h"
#include "metrics.h"
#include "tokcache.h"
#include "uidcache.h"

static struct MHD_Daemon *unix_d, *tcp_d;
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];

void kreq_json(kreq *r, unsigned status, json_t *j)
{
        if (r->out)
                json_decref(r->out);
        r->status = status;
        r->out = j;
}

void kreq_error(kreq *r, unsigned status, const char *code, const char *fmt, ...)
{
        char msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (status >= 500)
                log_error("%s %s: %s", r->method, r->path, msg);
        json_t *j = json_pack("{s:s, s:s}", "error", code, "message", msg);
        if (!j) { /* msg is not UTF-8 (input echoed, or cut mid-character): say it in ASCII */
                for (char *p = msg; *p; p++)
                        if ((unsigned char)*p >= 0x80)
                                *p = '?';
                j = json_pack("{s:s, s:s}", "error", code, "message", msg);
        }
        kreq_json(r, status, j);
}

const char *kreq_arg(kreq *r, const char *name)
{
        return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

/* Admin: uid 0, kerfd's own uid, or a member of group `kerf` (uidcache.c). */
bool kerfd__peer_admin(uid_t uid, gid_t gid)
{
        return kerfd__uid_admin(uid, gid, true, NULL, 0);
}

/* Who the peer is on the Unix socket, before n->mu is taken: SO_PEERCRED, admin by uid and
 * groups (NSS through uidcache.c), and for an admin the /proc chain that tells whether it is a
 * task's process (matched against the live tasks under n->mu, identify()). */
static void identify_peer(kreq *r, kerfd_peer_chain *chain)
{
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        struct ucred uc;
        socklen_t l = sizeof(uc);
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);

        chain->n = 0;
        chain->cgroup_task = 0;
        if (!ci || getsockname(ci->connect_fd, (struct sockaddr *)&ss, &sl) != 0 ||
            ss.ss_family != AF_UNIX ||
            getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &uc, &l) != 0)
                return;
        r->has_cred = true;
        r->uid = uc.uid;
        r->admin = kerfd__uid_admin(uc.uid, uc.gid, true, NULL, 0);
        snprintf(r->actor, sizeof(r->actor), "uid:%u", (unsigned)uc.uid);
        if (r->admin)
                kerfd__peer_chain(uc.pid, chain);
}

/* An admin's body that names a uid (tenant creation, run_as): the uid is looked up now, before
 * n->mu, so that the decision under it reads the cache (uidcache.c). */
static void warm_body_uids(kreq *r)
{
        json_t *j, *u;

        if (!r->admin || !r->body || !strstr(r->body, "\"uid\""))
                return;
        if (!(j = json_loadb(r->body, r->len, 0, NULL)))
                return;
        if (json_is_object(j)) {
                if (json_is_integer(u = json_object_get(j, "uid")))
                        kerfd__uidcache_warm(json_integer_value(u), true);
                if (json_is_integer(u = json_object_get(json_object_get(j, "run_as"), "uid")))
                        kerfd__uidcache_warm(json_integer_value(u), true);
        }
        json_decref(j);
}

/* What a request's Authorization header came to (bearer(), before n->mu). */
typedef enum {
        TOK_NONE,     /* no header */
        TOK_OK,       /* a valid token: r->tenant is its tenant */
        TOK_REFUSED,  /* 401 queued */
        TOK_FALLBACK, /* no token cache (tokcache.c did not open): verify under n->mu */
        TOK_METRICS,  /* the read-only metrics token (metrics_auth.c) on GET /metrics */
} tok_state;

/* The bearer token, verified before n->mu through the token cache (tokcache.h): a hit takes
 * only the cache's lock; a miss reads the store on the cache's own read-only connection. */
static tok_state bearer(kreq *r, const char **ret_tok)
{
        const char *auth = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "Authorization");
        char tenant[KERF_NAME_LEN];
        int rc;

        if (!auth)
                return TOK_NONE;
        if (strncasecmp(auth, "Bearer ", 7) != 0) {
                kreq_error(r, 401, "unauthorized", "Authorization must be \"Bearer <token>\"");
                return TOK_REFUSED;
        }
        *ret_tok = auth + 7;
        rc = kerfd__metrics_bearer(r, auth + 7); /* the read-only metrics token: no store */
        if (rc)
                return rc > 0 ? TOK_METRICS : TOK_REFUSED;
        rc = kerfd__tokcache_verify(auth + 7, tenant, NULL);
        if (rc == -ENODEV)
                return TOK_FALLBACK;
        if (rc < 0) {
                if (rc != -KERF_EPERM)
                        log_warn("token verification: the store could not be read (%s)",
                                 kerf_strerror(rc));
                kreq_error(r, 401, "unauthorized", "invalid or revoked token");
                return TOK_REFUSED;
        }
        snprintf(r->tenant, sizeof(r->tenant), "%s", tenant);
        return TOK_OK;
}

/* Decides who is calling, under n->mu (the task table; the token store only for
 * TOK_FALLBACK). Returns false (with an answer queued in r) when the caller is refused. */
static bool identify(kreq *r, const kerfd_peer_chain *chain, tok_state tok, const char *token)
{
        if (r->admin) {
                /* a task's process is never admin, whatever its uid (peer.c) */
                uint64_t task = kerfd__peer_chain_task(r->node, chain);
                if (task) {
                        r->admin = false;
                        snprintf(r->actor, sizeof(r->actor), "uid:%u task:%llu", (unsigned)r->uid,
                                 (unsigned long long)task);
                }
        }
        if (tok == TOK_METRICS) { /* node-wide /metrics and nothing else (bearer()) */
                r->admin = false;
                r->tenant[0] = '\0';
                snprintf(r->actor, sizeof(r->actor), "metrics");
                return true;
        }
        if (tok == TOK_FALLBACK) {
                char tenant[KERF_NAME_LEN];
                if (kerf_store_token_verify(r->node->store, token, tenant, NULL) < 0) {
                        kreq_error(r, 401, "unauthorized", "invalid or revoked token");
                        return false;
                }
                snprintf(r->tenant, sizeof(r->tenant), "%s", tenant);
                tok = TOK_OK;
        }
        if (tok == TOK_OK) {
                /* A token always acts as its tenant, even for an admin peer. */
                r->admin = false;
                snprintf(r->actor, sizeof(r->actor), "tenant:%s", r->tenant);
                return true;
        }
        if (!r->admin) {
                /* a public route needs no identity (routes.def): the caller is anonymous */
                if (kerfd__route_public(r->method, r->path))
                        return true;
                kreq_error(r, 401, "unauthorized", "%s",
                           strstr(r->actor, "task:")
                               ? "a bearer token is required: a task's process is never an admin"
                               : "a bearer token is required (you are not root or in group kerf)");
                return false;
        }
        return true;
}

typedef struct conn_state {
        kreq r;
        size_t cap;
        bool answered; /* 413 queued before the body */
} conn_state;

/* A body over limits.max_body by at most this much is read and dropped, then answered 413:
 * clients that send the whole body before they read see the answer (an early answer closes
 * the connection under them). A larger one is answered at once and never read. */
#define DRAIN_MAX (1024 * 1024)

/* Turns a JSON answer into its text (r->raw). Called under n->mu for the API's answers: their
 * JSON may share (borrowed, incref'd) values with live tasks that the ticker frees once
 * n->mu is released, so it is encoded before (TSan, issue 8 D4). */
static void encode(kreq *r)
{
        char *text;
        size_t len;

        if (!r->out)
                return;
        if (json_is_object(r->out) && r->node->simulated)
                json_object_set_new(r->out, "simulated", json_true());
        text = json_dumps(r->out, JSON_COMPACT);
        json_decref(r->out);
        r->out = NULL;
        if (!text) {
                text = strdup("{\"error\":\"internal\",\"message\":\"encoding\"}");
                r->status = 500;
                if (!text)
                        return;
        }
        len = strlen(text);
        /* newline-terminated for curl users */
        char *t2 = realloc(text, len + 2);
        if (t2) {
                text = t2;
                text[len++] = '\n';
                text[len] = 0;
        }
        free(r->raw);
        r->raw = text;
        r->raw_len = len;
        r->ctype = "application/json";
}

static enum MHD_Result send_answer(kreq *r)
{
        struct MHD_Response *resp;
        enum MHD_Result ret;
        const char *ctype = "application/json";
        char *text;
        size_t len;

        encode(r);
        if (r->raw) {
                text = r->raw;
                len = r->raw_len;
                r->raw = NULL;
                ctype = r->ctype ? r->ctype : "text/plain";
        } else {
                text = NULL;
                len = 0;
        }
        resp = MHD_create_response_from_buffer(
            len, text ? text : (void *)"", text ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
        if (!resp) {
                free(text);
                return MHD_NO;
        }
        if (len)
                MHD_add_response_header(resp, "Content-Type", ctype);
        if (r->allow[0]) /* a 405: the methods the path has (route.c) */
                MHD_add_response_header(resp, "Allow", r->allow);
        if (r->node->simulated)
                MHD_add_response_header(resp, "X-Kerf-Simulated", "true");
        ret = MHD_queue_response(r->conn, r->status ? r->status : 500, resp);
        MHD_destroy_response(resp);
        return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload_data,
                               size_t *upload_data_size, void **con_cls)
{
        kerfd_node *n = cls;
        conn_state *cs = *con_cls;

        if (!cs) {
                const char *cl;
                cs = calloc(1, sizeof(*cs));
                if (!cs)
                        return MHD_NO;
                *con_cls = cs;
                cs->r.node = n;
                cs->r.conn = conn;
                cs->r.method = method;
                snprintf(cs->r.path, sizeof(cs->r.path), "%s", url);
                cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
                if (cl && strtoull(cl, NULL, 10) > n->cfg.max_body + DRAIN_MAX) {
                        /* Answered before the body is read: libmicrohttpd then stops reading
                         * and closes the connection after the answer. */
                        cs->r.too_large = cs->answered = true;
                        kerfd__conn_quiet(conn);
                        kreq_error(&cs->r, 413, "too_large",
                                   "request body of %s bytes is over %llu (limits.max_body)", cl,
                                   (unsigned long long)n->cfg.max_body);
                        return send_answer(&cs->r);
                }
                if (cl && strtoull(cl, NULL, 10) > n->cfg.max_body)
                        cs->r.too_large = true; /* read and dropped (DRAIN_MAX) */
                return MHD_YES;
        }
        if (cs->answered) /* nothing more is read */
                return *upload_data_size ? MHD_NO : MHD_YES;
        if (*upload_data_size) {
                size_t add = *upload_data_size;
                *upload_data_size = 0;
                if (!cs->r.too_large && cs->r.len + add > n->cfg.max_body) {
                        /* a chunked body past the limit: dropped from here on */
                        cs->r.too_large = true;
                        free(cs->r.body);
                        cs->r.body = NULL;
                        cs->cap = 0;
                }
                if (cs->r.too_large) {
                        cs->r.len += add;
                        return cs->r.len > n->cfg.max_body + DRAIN_MAX ? MHD_NO : MHD_YES;
                }
                if (cs->r.len + add + 1 > cs->cap) {
                        size_t nc = cs->cap ? cs->cap * 2 : 1024;
                        while (nc < cs->r.len + add + 1)
                                nc *= 2;
                        char *nb = realloc(cs->r.body, nc);
                        if (!nb)
                                return MHD_NO;
                        cs->r.body = nb;
                        cs->cap = nc;
                }
                memcpy(cs->r.body + cs->r.len, upload_data, add);
                cs->r.len += add;
                cs->r.body[cs->r.len] = 0;
                return MHD_YES;
        }
        if (cs->r.too_large) {
                kerfd__conn_busy(conn, true);
                kreq_error(&cs->r, 413, "too_large",
                           "request body over %llu bytes (limits.max_body)",
                           (unsigned long long)n->cfg.max_body);
                return send_answer(&cs->r);
        }
        kerfd__conn_busy(conn, true);
        if (atomic_load(&n->stopping)) {
                kreq_error(&cs->r, 503, "unavailable", "kerfd is shutting down");
        } else {
                /* One daemon mutex around the node state; API handlers are short. What may
                 * run under it: docs/DAEMON.md "The daemon mutex". The bearer token is verified
                 * (tokcache.c), the peer's credentials and groups looked up before it. */
                kerfd_peer_chain chain;
                uint64_t t0 = kerfd__metrics_clock_us();
                const char *token = NULL;
                tok_state tok = bearer(&cs->r, &token);
                if (tok == TOK_REFUSED) { /* answered without n->mu */
                        kerfd__metrics_http(t0, cs->r.status);
                        return send_answer(&cs->r);
                }
                identify_peer(&cs->r, &chain);
                if (tok == TOK_NONE)
                        warm_body_uids(&cs->r);
                pthread_mutex_lock(&n->mu);
                if (identify(&cs->r, &chain, tok, token))
                        kerfd_api_dispatch(&cs->r);
                encode(&cs->r);
                pthread_mutex_unlock(&n->mu);
                if (cs->r.render)
                        cs->r.render(&cs->r);
                kerfd__metrics_http(t0, cs->r.status);
        }
        return send_answer(&cs->r);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
        conn_state *cs = *con_cls;
        kerfd__conn_busy(conn, false);
        if (!cs)
                return;
        free(cs->r.body);
        free(cs->r.raw);
        if (cs->r.out)
                json_decref(cs->r.out);
        free(cs);
        *con_cls = NULL;
}

int kerfd_http_start(kerfd_node *n)
{
        char err[512];
        gid_t kerf_gid = 0;
        bool have_kerf_gid = kerfd__uidcache_kerf_gid(&kerf_gid);
        unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC;
        /* Admins keep limits.admin_connections slots of the socket that no other peer can
         * take (http_conn.c refuses a non-admin past limits.max_connections). */
        unsigned unix_cap = n->cfg.max_conns + n->cfg.admin_conns;
        int fd;

        fd = kerfd__sock_bind(n->cfg.socket, have_kerf_gid, kerf_gid, err, sizeof(err));
        if (fd < 0) {
                log_error("cannot listen on %s: %s", n->cfg.socket, err);
                return fd;
        }
        snprintf(sock_path, sizeof(sock_path), "%.*s", (int)sizeof(sock_path) - 1, n->cfg.socket);
        /* tokens are verified on a read-only connection of their own, outside n->mu; without
         * it (logged) under n->mu on the daemon's connection, as before */
        char db[4200];
        snprintf(db, sizeof(db), "%s/kerf.db", n->cfg.state_dir);
        if (kerfd__tokcache_open(db, err, sizeof(err)) < 0)
                log_warn("token cache: %s; bearer tokens are verified under the daemon mutex", err);
        if (kerfd__conn_start(n) < 0) {
                log_error("cannot start the request deadline thread");
                close(fd);
                unlink(sock_path);
                return -EIO;
        }
        unix_d = MHD_start_daemon(
            flags, 0, NULL, NULL, handler, n, MHD_OPTION_LISTEN_SOCKET, fd,
            MHD_OPTION_THREAD_POOL_SIZE, (unsigned)n->cfg.threads, MHD_OPTION_NOTIFY_COMPLETED,
            completed, n, MHD_OPTION_NOTIFY_CONNECTION, kerfd__conn_notify, n,
            MHD_OPTION_CONNECTION_LIMIT, unix_cap, MHD_OPTION_CONNECTION_TIMEOUT,
            (unsigned)n->cfg.request_timeout_s * 2 + 1, MHD_OPTION_END);
        if (!unix_d) {
                log_error("libmicrohttpd could not start on %s", n->cfg.socket);
                close(fd);
                kerfd_http_stop();
                return -EIO;
        }
        log_info("listening on unix:%s (connections: %u per peer, %u in all, %u more for admins; "
                 "requests within %u s)",
                 n->cfg.socket, n->cfg.max_conns_per_peer, n->cfg.max_conns, n->cfg.admin_conns,
                 n->cfg.request_timeout_s);
        if (n->cfg.tcp_port) {
                struct sockaddr_in sin = {.sin_family = AF_INET,
                                          .sin_port = htons((uint16_t)n->cfg.tcp_port)};
                sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                tcp_d = MHD_start_daemon(
                    flags, (uint16_t)n->cfg.tcp_port, NULL, NULL, handler, n, MHD_OPTION_SOCK_ADDR,
                    &sin, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)n->cfg.threads,
                    MHD_OPTION_NOTIFY_COMPLETED, completed, n, MHD_OPTION_NOTIFY_CONNECTION,
                    kerfd__conn_notify, n, MHD_OPTION_CONNECTION_LIMIT, n->cfg.max_conns,
                    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)n->cfg.request_timeout_s * 2 + 1,
                    MHD_OPTION_END);
                if (!tcp_d) {
                        log_error("cannot listen on 127.0.0.1:%u", n->cfg.tcp_port);
                        kerfd_http_stop();
                        return -EADDRINUSE;
                }
                log_info("listening on tcp:127.0.0.1:%u (bearer tokens only)", n->cfg.tcp_port);
        }
        return 0;
}

void kerfd_http_stop(void)
{
        /* MHD_stop_daemon closes the listeners and joins the worker threads after the
         * in-flight requests are answered. */
        if (tcp_d)
                MHD_stop_daemon(tcp_d);
        if (unix_d)
                MHD_stop_daemon(unix_d);
        tcp_d = unix_d = NULL;
        kerfd__conn_stop();
        kerfd__tokcache_close();
        if (sock_path[0])
                unlink(sock_path);
        sock_path[0] = 0;
}
