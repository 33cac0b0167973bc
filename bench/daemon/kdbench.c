/* SPDX-License-Identifier: Apache-2.0 */
/* kdbench.c - the throwaway kerfd and the keep-alive connections of the kerfd benchmarks */
#include "kdbench.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_LIVE 4

static const char *bench_name = "bench";
static kdb_kerfd *live[MAX_LIVE];
static void (*at_die)(void);

void kdb_at_die(void (*fn)(void))
{
        at_die = fn;
}

static void kill_live(void)
{
        for (int i = 0; i < MAX_LIVE; i++)
                if (live[i] && live[i]->pid > 0)
                        kdb_kill9(live[i]);
}

void kdb_die(const char *fmt, ...)
{
        va_list ap;
        fprintf(stderr, "%s: ", bench_name);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        if (at_die)
                at_die();
        kill_live();
        exit(1);
}

void kdb_init(const char *name)
{
        bench_name = name;
        signal(SIGPIPE, SIG_IGN);
        curl_global_init(CURL_GLOBAL_DEFAULT);
        atexit(kill_live);
}

double kdb_now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void kdb_sleep_ms(unsigned ms)
{
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

int kdb_cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

double kdb_pct(const double *sorted, size_t n, double p)
{
        return n ? sorted[(size_t)((double)(n - 1) * p)] : 0;
}

/* ---- kerfd --------------------------------------------------------------------------------- */

static unsigned free_port(void)
{
        struct sockaddr_in sa = {.sin_family = AF_INET};
        socklen_t l = sizeof(sa);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        unsigned p = 0;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
            getsockname(fd, (struct sockaddr *)&sa, &l) == 0)
                p = ntohs(sa.sin_port);
        if (fd >= 0)
                close(fd);
        if (!p)
                kdb_die("no free loopback port");
        return p;
}

void kdb_setup(kdb_kerfd *k, bool tcp, const char *extra)
{
        char listen[64] = "";
        FILE *f;
        memset(k, 0, sizeof(*k));
        snprintf(k->dir, sizeof(k->dir), "/tmp/kerf-bench-XXXXXX");
        if (!mkdtemp(k->dir) || chmod(k->dir, 0711) != 0) /* tasks run as their own uid */
                kdb_die("mkdtemp: %s", strerror(errno));
        snprintf(k->sock, sizeof(k->sock), "%s/kerfd.sock", k->dir);
        snprintf(k->cfg, sizeof(k->cfg), "%s/kerfd.yaml", k->dir);
        snprintf(k->log, sizeof(k->log), "%s/kerfd.log", k->dir);
        snprintf(k->db, sizeof(k->db), "%s/state/kerf.db", k->dir);
        if (tcp) {
                k->port = free_port();
                snprintf(listen, sizeof(listen), "listen_tcp: 127.0.0.1:%u\n", k->port);
        }
        if (!(f = fopen(k->cfg, "w")))
                kdb_die("%s: %s", k->cfg, strerror(errno));
        fprintf(f,
                "state_dir: %s/state\nsocket: %s\n%sfleet: %s/examples/fleet-8xh200.yaml\n"
                "backend:\n  simulated: true\n%s",
                k->dir, k->sock, listen, KERF_SOURCE_DIR, extra ? extra : "");
        if (fclose(f) != 0)
                kdb_die("%s: %s", k->cfg, strerror(errno));
        for (int i = 0; i < MAX_LIVE; i++)
                if (!live[i] || live[i] == k) {
                        live[i] = k;
                        return;
                }
        kdb_die("more than %d kerfds at once", MAX_LIVE);
}

static long health(const kdb_kerfd *k)
{
        kdb_conn c;
        kdb_conn_init(&c, k, false, NULL);
        curl_easy_setopt(c.h, CURLOPT_TIMEOUT_MS, 2000L);
        long st = kdb_call(&c, "GET", "/v1/health", NULL);
        kdb_conn_fini(&c);
        return st;
}

double kdb_start(kdb_kerfd *k, const char *bin, unsigned poll_ms, double timeout_s)
{
        if (!bin)
                bin = getenv("KERFD") ? getenv("KERFD") : KERFD_BIN;
        unlink(k->sock);
        double t0 = kdb_now_s();
        pid_t p = fork();
        if (p < 0)
                kdb_die("fork: %s", strerror(errno));
        if (p == 0) {
                int fd = open(k->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                if (fd >= 0) {
                        dup2(fd, 1);
                        dup2(fd, 2);
                }
                execl(bin, "kerfd", "-c", k->cfg, (char *)NULL);
                _exit(127);
        }
        k->pid = p;
        while (kdb_now_s() - t0 < timeout_s) {
                if (access(k->sock, F_OK) == 0 && health(k) == 200)
                        return kdb_now_s() - t0;
                if (waitpid(p, NULL, WNOHANG) == p) {
                        k->pid = 0;
                        kdb_die("kerfd exited at start; see %s", k->log);
                }
                kdb_sleep_ms(poll_ms);
        }
        kdb_die("kerfd did not answer /v1/health within %.0f s; see %s", timeout_s, k->log);
}

void kdb_kill9(kdb_kerfd *k)
{
        if (k->pid > 0) {
                kill(k->pid, SIGKILL);
                waitpid(k->pid, NULL, 0);
        }
        k->pid = 0;
}

void kdb_stop(kdb_kerfd *k)
{
        if (k->pid > 0) {
                kill(k->pid, SIGTERM);
                waitpid(k->pid, NULL, 0);
        }
        k->pid = 0;
}

void kdb_cleanup(kdb_kerfd *k)
{
        char cmd[400];
        kdb_kill9(k);
        for (int i = 0; i < MAX_LIVE; i++)
                if (live[i] == k)
                        live[i] = NULL;
        if (getenv("KERF_BENCH_KEEP")) {
                fprintf(stderr, "kept %s\n", k->dir);
                return;
        }
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", k->dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", k->dir);
}

/* ---- HTTP ---------------------------------------------------------------------------------- */

static size_t on_data(char *d, size_t sz, size_t nm, void *ud)
{
        kdb_conn *c = ud;
        size_t l = sz * nm;
        if (c->len + l + 1 > c->cap) {
                size_t nc = c->cap ? c->cap * 2 : 8192;
                while (nc < c->len + l + 1)
                        nc *= 2;
                char *np = realloc(c->body, nc);
                if (!np)
                        return 0;
                c->body = np;
                c->cap = nc;
        }
        memcpy(c->body + c->len, d, l);
        c->len += l;
        c->body[c->len] = 0;
        return l;
}

void kdb_conn_init(kdb_conn *c, const kdb_kerfd *k, bool tcp, const char *token)
{
        char auth[256];
        memset(c, 0, sizeof(*c));
        if (!(c->h = curl_easy_init()))
                kdb_die("curl_easy_init failed");
        if (tcp) {
                snprintf(c->base, sizeof(c->base), "http://127.0.0.1:%u", k->port);
        } else {
                snprintf(c->base, sizeof(c->base), "http://kerfd");
                curl_easy_setopt(c->h, CURLOPT_UNIX_SOCKET_PATH, k->sock);
        }
        c->hdr = curl_slist_append(c->hdr, "Expect:");
        if (token) {
                snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
                c->hdr = curl_slist_append(c->hdr, auth);
        }
        c->hdr_body = curl_slist_append(NULL, "Expect:");
        c->hdr_body = curl_slist_append(c->hdr_body, "Content-Type: application/json");
        if (token)
                c->hdr_body = curl_slist_append(c->hdr_body, auth);
        curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS, 60000L);
        curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c->h, CURLOPT_WRITEDATA, c);
        curl_easy_setopt(c->h, CURLOPT_TCP_NODELAY, 1L);
}

void kdb_conn_fini(kdb_conn *c)
{
        curl_easy_cleanup(c->h);
        curl_slist_free_all(c->hdr);
        curl_slist_free_all(c->hdr_body);
        free(c->body);
}

long kdb_call(kdb_conn *c, const char *method, const char *path, const char *body)
{
        char url[512];
        long st = 0;
        snprintf(url, sizeof(url), "%s%s", c->base, path);
        c->len = 0;
        if (c->body)
                c->body[0] = 0;
        curl_easy_setopt(c->h, CURLOPT_URL, url);
        if (body) {
                curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, NULL);
                curl_easy_setopt(c->h, CURLOPT_POST, 1L);
                curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body);
                curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
                curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, c->hdr_body);
        } else {
                curl_easy_setopt(c->h, CURLOPT_HTTPGET, 1L);
                curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST,
                                 strcmp(method, "GET") ? method : NULL);
                curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, c->hdr);
        }
        if (curl_easy_perform(c->h) == CURLE_OK)
                curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &st);
        return st;
}

unsigned long long kdb_json_u64(const kdb_conn *c, const char *key)
{
        json_t *j = c->body ? json_loads(c->body, 0, NULL) : NULL;
        json_int_t v = json_integer_value(json_object_get(j, key));
        json_decref(j);
        return v > 0 ? (unsigned long long)v : 0;
}
