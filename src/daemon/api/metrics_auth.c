/* SPDX-License-Identifier: Apache-2.0 */
/* metrics_auth.c - the read-only metrics credential (metrics.token_file) and the metrics-only
 * listener (metrics.listen) a Prometheus server scrapes over the network (docs/METRICS.md
 * "Scraping remotely", docs/SECURITY.md) */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "metrics.h"

/* Read once before any listener starts, never changed after: read without a lock. */
static char token[256];
static size_t token_len;
static struct MHD_Daemon *metrics_d;

/* Constant time in the length of the metrics token. */
static bool token_is(const char *tok)
{
        size_t l = strnlen(tok, sizeof(token));
        unsigned char d = l != token_len;

        for (size_t i = 0; i < token_len; i++)
                d |= (unsigned char)(token[i] ^ (i < l ? tok[i] : 0));
        return token_len && !d;
}

int kerfd__metrics_bearer(kreq *r, const char *tok)
{
        if (!token_is(tok))
                return 0;
        r->admin = false;
        r->tenant[0] = 0;
        snprintf(r->actor, sizeof(r->actor), "metrics");
        if (strcmp(r->method, "GET") != 0 || strcmp(r->path, "/metrics") != 0) {
                kreq_error(r, 403, "forbidden", "the metrics token may only GET /metrics");
                return -1;
        }
        r->metrics_reader = true;
        return 1;
}

/* The token file: a regular file of kerfd's user or root, not writable by its group nor
 * readable by others, holding 32..255 visible ASCII characters (a trailing newline is fine). */
static int token_load(const char *path)
{
        struct stat st;
        char buf[sizeof(token) + 2];
        ssize_t k;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        int r = 0;

        if (fd < 0) {
                r = -errno;
                log_error("metrics.token_file %s: %s", path, strerror(errno));
                return r;
        }
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
            (st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & 027) != 0) {
                log_error("metrics.token_file %s: must be a regular file owned by kerfd's user or "
                          "root, mode 0600 or 0640",
                          path);
                close(fd);
                return -EPERM;
        }
        k = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (k < 0)
                return -EIO;
        while (k > 0 && (buf[k - 1] == '\n' || buf[k - 1] == '\r' || buf[k - 1] == ' '))
                k--;
        buf[k] = 0;
        for (ssize_t i = 0; i < k; i++)
                if (buf[i] < 0x21 || buf[i] > 0x7e)
                        r = -EINVAL;
        if (r < 0 || k < 32 || (size_t)k >= sizeof(token)) {
                log_error("metrics.token_file %s: expected one token of 32..255 visible ASCII "
                          "characters (e.g. openssl rand -hex 32)",
                          path);
                return -EINVAL;
        }
        memcpy(token, buf, (size_t)k + 1);
        token_len = (size_t)k;
        return 0;
}

static enum MHD_Result answer(struct MHD_Connection *conn, kreq *r)
{
        struct MHD_Response *resp;
        enum MHD_Result ret;
        const char *ctype = r->ctype ? r->ctype : "text/plain";
        char *text = r->raw;
        size_t len = r->raw_len;

        r->raw = NULL;
        if (!text && r->out) {
                text = json_dumps(r->out, JSON_COMPACT);
                len = text ? strlen(text) : 0;
                ctype = "application/json";
        }
        if (r->out)
                json_decref(r->out);
        r->out = NULL;
        resp = MHD_create_response_from_buffer(
            len, text ? text : (void *)"", text ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
        if (!resp) {
                free(text);
                return MHD_NO;
        }
        MHD_add_response_header(resp, "Content-Type", ctype);
        ret = MHD_queue_response(conn, r->status ? r->status : 500, resp);
        MHD_destroy_response(resp);
        return ret;
}

/* Every request is answered at its first call (headers only; a body is never read): GET
 * /metrics with the metrics token, else 401 (no or another token) or 403. */
static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload_data,
                               size_t *upload_data_size, void **con_cls)
{
        kerfd_node *n = cls;
        const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
        uint64_t t0 = kerfd__metrics_clock_us();
        kreq r;

        (void)version;
        (void)upload_data;
        (void)upload_data_size;
        (void)con_cls;
        memset(&r, 0, sizeof(r));
        r.node = n;
        r.conn = conn;
        r.method = method;
        snprintf(r.path, sizeof(r.path), "%s", url);
        if (atomic_load(&n->stopping))
                kreq_error(&r, 503, "unavailable", "kerfd is shutting down");
        else if (!auth || strncasecmp(auth, "Bearer ", 7) != 0 || !token_is(auth + 7))
                kreq_error(&r, 401, "unauthorized",
                           "this listener serves only the metrics token (metrics.token_file)");
        else if (kerfd__metrics_bearer(&r, auth + 7) > 0) {
                pthread_mutex_lock(&n->mu);
                kerfd_api_metrics(&r);
                pthread_mutex_unlock(&n->mu);
                if (r.render)
                        r.render(&r);
        }
        kerfd__metrics_http(t0, r.status);
        return answer(conn, &r);
}

int kerfd__metrics_listen_start(kerfd_node *n)
{
        struct sockaddr_in sin = {.sin_family = AF_INET};
        int r;

        if (n->cfg.metrics_token_file[0] && (r = token_load(n->cfg.metrics_token_file)) < 0)
                return r;
        if (!n->cfg.metrics_port)
                return 0;
        sin.sin_port = htons((uint16_t)n->cfg.metrics_port);
        if (inet_pton(AF_INET, n->cfg.metrics_host, &sin.sin_addr) != 1)
                return -EINVAL;
        /* one thread: scrapes are rare; a few connections per scraper, cut after 10 s idle */
        metrics_d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC,
                                     (uint16_t)n->cfg.metrics_port, NULL, NULL, handler, n,
                                     MHD_OPTION_SOCK_ADDR, &sin, MHD_OPTION_CONNECTION_LIMIT, 32u,
                                     MHD_OPTION_PER_IP_CONNECTION_LIMIT, 8u,
                                     MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
        if (!metrics_d) {
                log_error("cannot listen on %s:%u (metrics.listen)", n->cfg.metrics_host,
                          n->cfg.metrics_port);
                return -EADDRINUSE;
        }
        log_info("metrics: listening on tcp:%s:%u (GET /metrics with the metrics token only)",
                 n->cfg.metrics_host, n->cfg.metrics_port);
        return 0;
}

void kerfd__metrics_listen_stop(void)
{
        if (metrics_d)
                MHD_stop_daemon(metrics_d);
        metrics_d = NULL;
}
