/* SPDX-License-Identifier: Apache-2.0 */
/* http.c - a minimal HTTP/1.1 client over kerfd's Unix socket for spank_kerf.so.
 * Why not src/client (libcurl): the attach runs in a task's forked child of slurmstepd, a
 * threaded process, before exec; libcurl's global state and the TLS stack it loads have no
 * business there. One request per connection, Connection: close, bounded reads. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "spank_kerf.h"

#define MAX_ANSWER (1u << 20)

static int wait_fd(int fd, short ev, long timeout_ms)
{
        struct pollfd p = {.fd = fd, .events = ev};
        int r;
        do
                r = poll(&p, 1, (int)timeout_ms);
        while (r < 0 && errno == EINTR);
        return r > 0 ? 0 : r == 0 ? -ETIMEDOUT : -errno;
}

int kerf_spank_http(const char *sock, const char *method, const char *path, const char *body,
                    long timeout_ms, long *ret_status, json_t **ret_body, char *err, size_t errlen)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        char *req = NULL, *ans = NULL;
        size_t blen = body ? strlen(body) : 0, got = 0, cap = 0, sent = 0;
        long status = 0;
        int fd = -1, r, n;

        if (strlen(sock) >= sizeof(sa.sun_path)) {
                snprintf(err, errlen, "socket path too long");
                return -ENAMETOOLONG;
        }
        memcpy(sa.sun_path, sock, strlen(sock) + 1);
        if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0) {
                r = -errno;
                snprintf(err, errlen, "socket: %s", strerror(errno));
                return r;
        }
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
                r = -errno;
                snprintf(err, errlen, "connect: %s", strerror(errno));
                goto out;
        }
        n = asprintf(&req,
                     "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                     "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                     method, path, blen, body ? body : "");
        if (n < 0) {
                req = NULL;
                r = -ENOMEM;
                snprintf(err, errlen, "out of memory");
                goto out;
        }
        while (sent < (size_t)n) {
                if ((r = wait_fd(fd, POLLOUT, timeout_ms)) < 0) {
                        snprintf(err, errlen, "send: %s", strerror(-r));
                        goto out;
                }
                ssize_t w = send(fd, req + sent, (size_t)n - sent, MSG_NOSIGNAL);
                if (w < 0 && errno != EAGAIN && errno != EINTR) {
                        r = -errno;
                        snprintf(err, errlen, "send: %s", strerror(errno));
                        goto out;
                }
                if (w > 0)
                        sent += (size_t)w;
        }
        for (;;) {
                if ((r = wait_fd(fd, POLLIN, timeout_ms)) < 0) {
                        snprintf(err, errlen, "no answer: %s", strerror(-r));
                        goto out;
                }
                if (got + 4096 + 1 > cap) {
                        char *nb;
                        if (cap >= MAX_ANSWER || !(nb = realloc(ans, cap ? cap * 2 : 8192))) {
                                r = -EMSGSIZE;
                                snprintf(err, errlen, "answer too large");
                                goto out;
                        }
                        ans = nb;
                        cap = cap ? cap * 2 : 8192;
                }
                ssize_t k = read(fd, ans + got, cap - got - 1);
                if (k < 0 && (errno == EAGAIN || errno == EINTR))
                        continue;
                if (k < 0) {
                        r = -errno;
                        snprintf(err, errlen, "read: %s", strerror(errno));
                        goto out;
                }
                if (k == 0)
                        break;
                got += (size_t)k;
        }
        if (!ans || sscanf(ans, "HTTP/1.%*d %ld", &status) != 1) {
                r = -EPROTO;
                snprintf(err, errlen, "not an HTTP answer");
                goto out;
        }
        ans[got] = 0;
        {
                const char *b = strstr(ans, "\r\n\r\n");
                json_error_t je;
                *ret_body = b ? json_loads(b + 4, JSON_DECODE_ANY, &je) : NULL;
        }
        *ret_status = status;
        r = 0;
out:
        free(req);
        free(ans);
        close(fd);
        return r;
}
