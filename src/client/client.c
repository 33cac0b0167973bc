/* SPDX-License-Identifier: Apache-2.0 */
/* client.c - HTTP over a Unix socket (or loopback TCP) to kerfd, with libcurl */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "kerf/client.h"

struct kerf_client {
        CURL *curl;
        char *socket;
        char *base; /* "http://localhost" or the given URL, no trailing slash */
        char *auth; /* "Authorization: Bearer ..." or NULL */
        long timeout_ms;
        char err[CURL_ERROR_SIZE + 64];
};

int kerf_client_default_socket(char *buf, size_t len)
{
        const char *env = getenv("KERF_SOCKET");
        int n;
        if (env && *env)
                n = snprintf(buf, len, "%s", env);
        else if (geteuid() == 0)
                n = snprintf(buf, len, "/run/kerf/kerfd.sock");
        else if (getenv("XDG_RUNTIME_DIR") && *getenv("XDG_RUNTIME_DIR"))
                n = snprintf(buf, len, "%s/kerf/kerfd.sock", getenv("XDG_RUNTIME_DIR"));
        else
                n = snprintf(buf, len, "/tmp/kerf-%u/kerfd.sock", (unsigned)geteuid());
        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static void client_free_fields(kerf_client *c)
{
        free(c->socket);
        free(c->base);
        free(c->auth);
}

int kerf_client_new(const kerf_client_opts *o, kerf_client **ret)
{
        static int global_done;
        if (!ret)
                return -EINVAL;
        if (!global_done) {
                /* curl_global_init is not thread-safe; the first client does it */
                if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                        return -ENOMEM;
                global_done = 1;
        }
        kerf_client *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        const char *url = o ? o->url : NULL;
        const char *token = o && o->token ? o->token : getenv("KERF_TOKEN");
        c->timeout_ms = o && o->timeout_ms > 0 ? o->timeout_ms : 30000;
        if (url) {
                if (strncmp(url, "http://", 7) != 0)
                        goto inval;
                c->base = strdup(url);
                if (c->base && c->base[0] && c->base[strlen(c->base) - 1] == '/')
                        c->base[strlen(c->base) - 1] = 0;
        } else {
                char path[4096];
                if (o && o->socket)
                        c->socket = strdup(o->socket); /* as given: never cut short */
                else if (kerf_client_default_socket(path, sizeof(path)) < 0)
                        goto inval;
                else
                        c->socket = strdup(path);
                c->base = strdup("http://localhost");
                if (!c->socket)
                        goto oom;
        }
        if (token && *token) {
                if (strpbrk(token, "\r\n"))
                        goto inval;
                size_t n = strlen(token) + 32;
                c->auth = malloc(n);
                if (!c->auth)
                        goto oom;
                snprintf(c->auth, n, "Authorization: Bearer %s", token);
        }
        c->curl = curl_easy_init();
        if (!c->base || !c->curl)
                goto oom;
        *ret = c;
        return 0;
inval:
        client_free_fields(c);
        free(c);
        return -EINVAL;
oom:
        if (c->curl)
                curl_easy_cleanup(c->curl);
        client_free_fields(c);
        free(c);
        return -ENOMEM;
}

kerf_client *kerf_client_free(kerf_client *c)
{
        if (!c)
                return NULL;
        curl_easy_cleanup(c->curl);
        client_free_fields(c);
        free(c);
        return NULL;
}

const char *kerf_client_error(const kerf_client *c)
{
        return c ? c->err : "";
}

void kerf_client_response_fini(kerf_client_response *r)
{
        if (!r)
                return;
        free(r->body);
        r->body = NULL;
        r->len = 0;
}

typedef struct buf {
        char *p;
        size_t len, cap;
        int oom;
} buf;

static size_t on_data(char *ptr, size_t size, size_t n, void *ud)
{
        buf *b = ud;
        size_t add = size * n;
        if (b->len + add + 1 > b->cap) {
                size_t nc = b->cap ? b->cap : 4096;
                while (nc < b->len + add + 1)
                        nc *= 2;
                char *np = realloc(b->p, nc);
                if (!np) {
                        b->oom = 1;
                        return 0;
                }
                b->p = np;
                b->cap = nc;
        }
        memcpy(b->p + b->len, ptr, add);
        b->len += add;
        b->p[b->len] = 0;
        return add;
}

int kerf_client_call(kerf_client *c, const char *method, const char *path, const char *body,
                     kerf_client_response *ret)
{
        if (!c || !method || !path || path[0] != '/' || !ret)
                return -EINVAL;
        c->err[0] = 0;
        size_t ulen = strlen(c->base) + strlen(path) + 1;
        char *url = malloc(ulen);
        if (!url)
                return -ENOMEM;
        snprintf(url, ulen, "%s%s", c->base, path);

        CURL *h = c->curl;
        curl_easy_reset(h);
        buf b = {0};
        struct curl_slist *hdr = NULL;
        hdr = curl_slist_append(hdr, "Accept: application/json");
        if (body)
                hdr = curl_slist_append(hdr, "Content-Type: application/json");
        if (c->auth)
                hdr = curl_slist_append(hdr, c->auth);
        hdr = curl_slist_append(hdr, "Expect:");
        curl_easy_setopt(h, CURLOPT_URL, url);
        if (c->socket)
                curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->socket);
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
        curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->err);
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http");
        if (body) {
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
                curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
        } else if (strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0) {
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
                curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
        }
        CURLcode rc = curl_easy_perform(h);
        curl_slist_free_all(hdr);
        free(url);
        if (rc != CURLE_OK || b.oom) {
                free(b.p);
                if (b.oom)
                        return -ENOMEM;
                if (!c->err[0])
                        snprintf(c->err, sizeof(c->err), "%s", curl_easy_strerror(rc));
                if (c->socket && access(c->socket, F_OK) != 0) {
                        snprintf(c->err, sizeof(c->err),
                                 "cannot reach kerfd: socket %s does not exist (is kerfd running?)",
                                 c->socket);
                        return -ENOENT;
                }
                if (rc == CURLE_COULDNT_CONNECT) {
                        /* curl's own words name "localhost port 80" for a Unix socket */
                        if (c->socket)
                                snprintf(c->err, sizeof(c->err),
                                         "cannot reach kerfd: nothing answers on socket %s "
                                         "(is kerfd running?)",
                                         c->socket);
                        return -ECONNREFUSED;
                }
                switch (rc) {
                case CURLE_OPERATION_TIMEDOUT:
                        return -ETIMEDOUT;
                default:
                        return -EIO;
                }
        }
        memset(ret, 0, sizeof(*ret));
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &ret->status);
        char *ct = NULL;
        curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
        if (ct)
                snprintf(ret->content_type, sizeof(ret->content_type), "%s", ct);
        if (!b.p) {
                b.p = strdup("");
                if (!b.p)
                        return -ENOMEM;
        }
        ret->body = b.p;
        ret->len = b.len;
        return 0;
}
