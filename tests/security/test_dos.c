/* SPDX-License-Identifier: Apache-2.0 */
/* test_dos.c - issue 8 D1 and D3: slow-loris connections of unprivileged peers do not stop
 * the socket for root, a request must arrive whole within its deadline, an oversized
 * Content-Length is answered 413 before the body is read, and /metrics stays small with
 * thousands of pending tasks */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define PER_PEER 8
#define TOTAL    40
#define DEADLINE 2

static kd K;

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dial(const char *path)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -1;
        if (strlen(path) >= sizeof(sa.sun_path)) {
                close(fd);
                return -1;
        }
        memcpy(sa.sun_path, path, strlen(path) + 1);
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

/* True when the server ended the connection (EOF or an answer then EOF) within ms. */
static bool closed_within(int fd, unsigned ms)
{
        char b[1024];
        double end = now_s() + ms / 1000.0;
        for (;;) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                int left = (int)((end - now_s()) * 1000);
                if (poll(&p, 1, left > 0 ? left : 0) <= 0)
                        return false;
                ssize_t r = recv(fd, b, sizeof(b), MSG_DONTWAIT);
                if (r <= 0 && !(r < 0 && errno == EAGAIN))
                        return true;
        }
}

static int setup(void **st)
{
        kd_limits = "  max_connections: 40\n  max_connections_per_peer: 8\n"
                    "  admin_connections: 16\n  request_timeout_s: 2\n";
        kd_setup(&K, "");
        /* let unprivileged test users reach the socket (the test's own temp dir) */
        chmod(K.dir, 0755);
        chmod(K.sock, 0666);
        return 0;
}

static int teardown(void **st)
{
        kd_stop(&K);
        kd_cleanup(&K);
        return 0;
}

/* A child as `uid` opens `n` connections that send partial headers and reports in its exit
 * status how many the server closed at once (within 1 s: refused over a limit). It then
 * keeps the rest until the server cuts them (the deadline) and exits. */
static pid_t loris(uid_t uid, int n, int report_fd)
{
        pid_t p = fork();
        assert_true(p >= 0);
        if (p)
                return p;
        int fds[24], early = 0, late = 0, open_n = 0;
        if (setgroups(0, NULL) < 0 || setgid(uid) < 0 || setuid(uid) < 0)
                _exit(200);
        for (int i = 0; i < n && i < 24; i++) {
                fds[i] = dial(K.sock);
                if (fds[i] >= 0) {
                        (void)send(fds[i], "GET /v1/health HTTP/1.1\r\nHost: k\r\n", 34,
                                   MSG_NOSIGNAL);
                        open_n++;
                }
        }
        kd_sleep_ms(800); /* refusals come at once; the deadline is 2 s away */
        for (int i = 0; i < n; i++)
                if (fds[i] >= 0 && closed_within(fds[i], 1)) {
                        early++;
                        close(fds[i]);
                        fds[i] = -1;
                }
        /* the kept ones: cut by the deadline (2 s) within a few seconds */
        for (int i = 0; i < n; i++)
                if (fds[i] >= 0 && closed_within(fds[i], (DEADLINE + 3) * 1000))
                        late++;
        dprintf(report_fd, "%d %d %d\n", open_n, early, late);
        _exit(0);
}

static void test_slowloris(void **st)
{
        int pfd[2];
        pid_t kids[8];
        char buf[512] = {0};
        double worst = 0;
        if (geteuid() != 0) {
                fprintf(stderr, "not root: cannot switch to unprivileged users; skipped\n");
                skip();
        }
        assert_int_equal(pipe(pfd), 0);
        /* 8 users x 24 partial requests: 16 each over the per-peer share, and 64 allowed ones
         * over the total of 40 */
        for (int i = 0; i < 8; i++)
                kids[i] = loris((uid_t)(60000 + i), 24, pfd[1]);
        close(pfd[1]);
        kd_sleep_ms(300);
        /* root keeps being answered quickly while they hold their connections */
        for (int i = 0; i < 20; i++) {
                long s = 0;
                double t0 = now_s();
                json_decref(kd_call(&K, "GET", "/v1/health", NULL, NULL, &s, NULL));
                assert_int_equal(s, 200);
                if (now_s() - t0 > worst)
                        worst = now_s() - t0;
                kd_sleep_ms(50);
        }
        fprintf(stderr, "root's worst /v1/health under slow-loris: %.3f s\n", worst);
        assert_true(worst < 1.0);
        for (int i = 0; i < 8; i++) {
                int ws;
                assert_int_equal(waitpid(kids[i], &ws, 0), kids[i]);
                assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
        }
        size_t got = 0;
        ssize_t r;
        while ((r = read(pfd[0], buf + got, sizeof(buf) - 1 - got)) > 0)
                got += (size_t)r;
        close(pfd[0]);
        int held = 0, refused = 0, cut = 0;
        char *p = buf;
        for (int i = 0; i < 8; i++) {
                int o, e, l;
                assert_int_equal(sscanf(p, "%d %d %d", &o, &e, &l), 3);
                p = strchr(p, '\n') + 1;
                fprintf(stderr, "peer %d: opened %d, refused %d, cut %d\n", i, o, e, l);
                assert_int_equal(o, 24);
                /* over its per-peer share: refused at once */
                assert_true(e >= 24 - PER_PEER);
                refused += e;
                held += o - e;
                cut += l;
        }
        fprintf(stderr, "slow-loris: %d refused at once, %d held, %d cut by the deadline\n",
                refused, held, cut);
        /* never more than the non-admin total, and every held one cut by the deadline */
        assert_true(held <= TOTAL);
        assert_int_equal(cut, held);
}

/* Headers that trickle in (a byte every 300 ms keeps an idle timeout happy) are cut. */
static void test_deadline(void **st)
{
        const char *req = "GET /v1/health HTTP/1.1\r\nHost: k\r\nX-Slow: aaaaaaaaaaaaaaaaaaaa";
        int fd = dial(K.sock);
        double t0 = now_s(), cut = 0;
        char b[512];
        assert_true(fd >= 0);
        for (size_t i = 0; req[i]; i++) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                if (send(fd, req + i, 1, MSG_NOSIGNAL) < 0 || poll(&p, 1, 300) > 0) {
                        cut = now_s() - t0;
                        break;
                }
        }
        if (!cut && closed_within(fd, 3000))
                cut = now_s() - t0;
        ssize_t r = recv(fd, b, sizeof(b) - 1, MSG_DONTWAIT);
        if (r > 0) {
                b[r] = 0;
                assert_non_null(strstr(b, "408"));
        }
        close(fd);
        fprintf(stderr, "trickled request cut after %.2f s (deadline %d s)\n", cut, DEADLINE);
        assert_true(cut > DEADLINE - 0.5 && cut < DEADLINE + 2.0);
}

/* Content-Length: 10 GB is answered 413 before any of the body is sent. */
static void test_big_body(void **st)
{
        const char *h = "POST /v1/tasks HTTP/1.1\r\nHost: k\r\nContent-Type: application/json\r\n"
                        "Content-Length: 10000000000\r\n\r\n";
        static char chunk[1 << 16];
        char b[1024] = {0};
        int fd = dial(K.sock);
        size_t sent = 0;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        double t0;
        assert_true(fd >= 0);
        assert_int_equal(send(fd, h, strlen(h), MSG_NOSIGNAL), (ssize_t)strlen(h));
        t0 = now_s();
        assert_int_equal(poll(&p, 1, 3000), 1);
        assert_true(recv(fd, b, sizeof(b) - 1, 0) > 0);
        fprintf(stderr, "10 GB Content-Length answered in %.3f s: %.40s\n", now_s() - t0, b);
        assert_non_null(strstr(b, " 413 "));
        /* and the server does not read on: the body cannot be pushed */
        memset(chunk, 'x', sizeof(chunk));
        fcntl(fd, F_SETFL, O_NONBLOCK);
        for (int i = 0; i < 400; i++) {
                ssize_t r = send(fd, chunk, sizeof(chunk), MSG_NOSIGNAL);
                if (r < 0 && errno == EAGAIN) {
                        kd_sleep_ms(5);
                        continue;
                }
                if (r <= 0)
                        break;
                sent += (size_t)r;
        }
        close(fd);
        fprintf(stderr, "body bytes the socket took after the 413: %zu\n", sent);
        assert_true(sent < 4u * 1024 * 1024);
}

/* /metrics with thousands of pending tasks: no per-task series for them, a bounded size. */
static void test_metrics_pending(void **st)
{
        char *raw = NULL, body[256], path[64];
        long s;
        int n = 2000;
        unsigned long long first = 0;
        double t0 = now_s();
        for (int i = 0; i < n; i++) {
                /* 8 GPUs each: one runs, the rest wait */
                snprintf(body, sizeof(body),
                         "{\"tenant\":\"%s\",\"command\":[\"/bin/sleep\",\"60\"],"
                         "\"route\":\"whole\",\"gpus\":8}",
                         i % 2 ? "alice" : "bob");
                json_t *j = kd_call(&K, "POST", "/v1/tasks", body, NULL, &s, NULL);
                if (!first)
                        first = (unsigned long long)json_integer_value(json_object_get(j, "id"));
                json_decref(j);
                assert_int_equal(s, 201);
        }
        fprintf(stderr, "%d submits in %.1f s\n", n, now_s() - t0);
        json_decref(kd_call(&K, "GET", "/metrics", NULL, NULL, &s, &raw));
        assert_int_equal(s, 200);
        size_t len = strlen(raw);
        int task_lines = 0;
        for (char *p = raw; (p = strstr(p, "task=\"")); p++)
                task_lines++;
        fprintf(stderr, "/metrics with %d pending tasks: %zu bytes, %d task-labelled lines\n",
                n - 1, len, task_lines);
        assert_non_null(strstr(raw, "kerf_tasks{tenant=\"alice\",queue="));
        assert_non_null(strstr(raw, "state=\"pending\"} "));
        /* one running task at most carries task series (a dozen lines) */
        assert_true(task_lines <= 40);
        assert_true(len < 64 * 1024);
        free(raw);
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", first);
        json_decref(kd_call(&K, "POST", path, "{\"grace_s\":0}", NULL, &s, NULL));
}

/* Over TCP one address gets its share (limits.max_connections_per_peer), no more; the
 * socket and other addresses are not held up. */
static void test_tcp_per_address(void **st)
{
        int fds[PER_PEER + 8], kept = 0, refused = 0;
        char extra[64];
        unsigned port = kd_free_port();
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        kd t;
        long s;

        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        snprintf(extra, sizeof(extra), "listen_tcp: 127.0.0.1:%u\n", port);
        kd_setup(&t, extra);
        /* kd_setup waits for the socket; the TCP listener comes right after it */
        for (int tries = 0;; tries++) {
                int probe = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                int ok = connect(probe, (struct sockaddr *)&sa, sizeof(sa));
                close(probe);
                if (ok == 0)
                        break;
                assert_true(tries < 100);
                kd_sleep_ms(20);
        }
        kd_sleep_ms(100); /* the probe's connection is gone from kerfd's count */
        for (int i = 0; i < PER_PEER + 8; i++) {
                fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                assert_int_equal(connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
                (void)send(fds[i], "GET /v1/health HTTP/1.1\r\nHost: k\r\n", 34, MSG_NOSIGNAL);
        }
        kd_sleep_ms(800);
        for (int i = 0; i < PER_PEER + 8; i++) {
                if (closed_within(fds[i], 1))
                        refused++;
                else
                        kept++;
                close(fds[i]);
        }
        fprintf(stderr, "tcp, one address: %d kept, %d refused\n", kept, refused);
        assert_int_equal(kept, PER_PEER);
        json_decref(kd_call(&t, "GET", "/v1/health", NULL, NULL, &s, NULL));
        assert_int_equal(s, 200);
        kd_stop(&t);
        kd_cleanup(&t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_big_body),        cmocka_unit_test(test_deadline),
            cmocka_unit_test(test_slowloris),       cmocka_unit_test(test_metrics_pending),
            cmocka_unit_test(test_tcp_per_address),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
