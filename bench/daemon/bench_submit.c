/* SPDX-License-Identifier: Apache-2.0 */
/* bench_submit.c - submit latency of kerfd with tasks running (issue 8 D4)
 *
 * For each binary (this build's kerfd, and --base PATH when given: run alternately, the same
 * load, so that the ratio is taken in one run): a throwaway kerfd (simulated 8xH200 fleet, own
 * Unix socket), --running tasks of tenant alice (/bin/sleep) started and seen running, then
 * --submits sequential POST /v1/tasks of tenant q (no quota: stored and queued, never started)
 * over one keep-alive connection (--starting 1: of tenant alice, /bin/true on a slice, each
 * started by kerfd and ended at once; --starting 2: --running tasks take whole GPUs, the
 * submits ask for one and wait behind them). Prints p50 / p99 / max latency and submits/s per run,
 * the median per binary, and the ratio this/base.
 *
 * usage: bench_submit [--submits N] [--running R] [--rounds K] [--starting 0|1|2] [--base KERFD]
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 9

static unsigned n_submits = 2000, n_running = 16, rounds = 3;
/* --starting 1: the submits are tasks that start (and end) at once; 2: the running tasks hold
 * every GPU whole and the submits ask for a whole GPU (queued, tried by every scheduler step) */
static int starting;
static pid_t kd_pid;

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long call(const char *sock, const char *method, const char *path, const char *body);
static char g_sock[128];              /* the running kerfd's socket */
static unsigned long long g_ids[256]; /* and its running tasks, cancelled before it stops */
static unsigned g_n;

static void cancel_running(void)
{
        char path[96];
        for (unsigned i = 0; i < g_n; i++) {
                snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", g_ids[i]);
                call(g_sock, "POST", path, "{\"grace_s\":0}");
        }
        if (g_n)
                usleep(1500 * 1000); /* reaped before kerfd stops: no task outlives the bench */
        g_n = 0;
}

static void die(const char *msg, const char *arg)
{
        fprintf(stderr, "bench_submit: %s %s\n", msg, arg ? arg : "");
        if (kd_pid > 0) {
                cancel_running();
                kill(kd_pid, SIGKILL);
        }
        exit(1);
}

typedef struct buf {
        char p[65536];
        size_t n;
} buf;

static size_t on_data(char *d, size_t sz, size_t nm, void *ud)
{
        buf *b = ud;
        size_t l = sz * nm, c = l < sizeof(b->p) - 1 - b->n ? l : sizeof(b->p) - 1 - b->n;
        memcpy(b->p + b->n, d, c);
        b->n += c;
        b->p[b->n] = 0;
        return l;
}

static CURL *h;
static buf b;
static struct curl_slist *hdr;

static long call(const char *sock, const char *method, const char *path, const char *body)
{
        char url[256];
        long st = 0;

        snprintf(url, sizeof(url), "http://kerfd%s", path);
        b.n = 0;
        b.p[0] = 0;
        curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, sock);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
        if (body) {
                curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, NULL);
                curl_easy_setopt(h, CURLOPT_POST, 1L);
                curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
                curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
        } else {
                curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
                curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, strcmp(method, "GET") ? method : NULL);
        }
        if (curl_easy_perform(h) == CURLE_OK)
                curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st);
        return st;
}

static int cmp_d(const void *a, const void *c)
{
        double x = *(const double *)a, y = *(const double *)c;
        return x < y ? -1 : x > y;
}

typedef struct result {
        double p50, p99, max, rate;
} result;

static result one_run(const char *bin)
{
        char dir[64] = "/tmp/kerf-bsub-XXXXXX", sock[128], cfg[128], log[128], path[96];
        double *lat = calloc(n_submits, sizeof(double)), t0;
        result r;
        FILE *f;

        if (!lat || !mkdtemp(dir) || chmod(dir, 0711) != 0) /* tasks run as their own uid */
                die("setup:", strerror(errno));
        snprintf(sock, sizeof(sock), "%s/kerfd.sock", dir);
        snprintf(cfg, sizeof(cfg), "%s/kerfd.yaml", dir);
        snprintf(g_sock, sizeof(g_sock), "%s", sock);
        snprintf(log, sizeof(log), "%s/kerfd.log", dir);
        if (!(f = fopen(cfg, "w")))
                die("config:", strerror(errno));
        fprintf(f,
                "state_dir: %s/state\nsocket: %s\nfleet: %s/examples/fleet-8xh200.yaml\n"
                "backend:\n  simulated: true\nlimits:\n  grace_s: 1\n  max_tasks: 200000\n"
                "  submit_rate: 0\n"
                "tenants:\n  - name: alice\n    max_pending: 10000000\n"
                "  - name: q\n    max_pending: 10000000\n    quota:\n"
                "      gpus: {nominal: 0, borrow_limit: 0}\n"
                "      memory: {nominal: 0, borrow_limit: 0}\n"
                "      compute: {nominal: 0, borrow_limit: 0}\n"
                "      mig_slices: {nominal: 0, borrow_limit: 0}\n",
                dir, sock, KERF_SOURCE_DIR);
        fclose(f);
        if ((kd_pid = fork()) == 0) {
                int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
                if (fd >= 0) {
                        dup2(fd, 1);
                        dup2(fd, 2);
                }
                execl(bin, "kerfd", "-c", cfg, (char *)NULL);
                _exit(127);
        }
        for (t0 = now_s(); call(sock, "GET", "/v1/health", NULL) != 200; usleep(2000))
                if (now_s() - t0 > 30)
                        die("kerfd did not start; see", log);
        /* tasks running: the tick has exits to reap, limits and GPUs to poll */
        for (unsigned i = 0; i < n_running && i < 256; i++) {
                if (call(sock, "POST", "/v1/tasks",
                         starting == 2
                             ? "{\"tenant\":\"alice\",\"route\":\"whole\","
                               "\"command\":[\"/bin/sleep\",\"600\"]}"
                             : "{\"tenant\":\"alice\",\"memory\":\"1GiB\",\"compute\":5,"
                               "\"route\":\"slice\",\"command\":[\"/bin/sleep\",\"600\"]}") != 201)
                        die("submit running:", b.p);
                g_ids[g_n++] = strtoull(strstr(b.p, "\"id\":") + 5, NULL, 10);
        }
        for (unsigned i = 0; i < n_running && i < 256; i++) {
                snprintf(path, sizeof(path), "/v1/tasks/%llu", g_ids[i]);
                for (t0 = now_s();
                     call(sock, "GET", path, NULL) == 200 && !strstr(b.p, "\"state\":\"running\"");
                     usleep(5000))
                        if (now_s() - t0 > 30)
                                die("task not running:", b.p);
        }
        t0 = now_s();
        for (unsigned i = 0; i < n_submits; i++) {
                double s = now_s();
                if (call(sock, "POST", "/v1/tasks",
                         starting == 2 ? "{\"tenant\":\"alice\",\"route\":\"whole\","
                                         "\"command\":[\"/bin/true\"]}"
                         : starting    ? "{\"tenant\":\"alice\",\"memory\":\"1GiB\",\"compute\":5,"
                                         "\"route\":\"slice\",\"command\":[\"/bin/true\"]}"
                                       : "{\"tenant\":\"q\",\"command\":[\"/bin/true\"]}") != 201)
                        die("submit:", b.p);
                lat[i] = now_s() - s;
        }
        r.rate = n_submits / (now_s() - t0);
        qsort(lat, n_submits, sizeof(double), cmp_d);
        r.p50 = lat[n_submits / 2] * 1e3;
        r.p99 = lat[n_submits * 99 / 100] * 1e3;
        r.max = lat[n_submits - 1] * 1e3;
        cancel_running();
        kill(kd_pid, SIGTERM);
        waitpid(kd_pid, NULL, 0);
        kd_pid = 0;
        snprintf(path, sizeof(path), "rm -rf '%s'", dir);
        if (!getenv("KERF_BENCH_KEEP") && system(path) != 0)
                fprintf(stderr, "could not remove %s\n", dir);
        free(lat);
        return r;
}

static double med(double *v, unsigned n)
{
        qsort(v, n, sizeof(double), cmp_d);
        return v[n / 2];
}

int main(int argc, char **argv)
{
        const char *base = NULL, *bin = getenv("KERFD") ? getenv("KERFD") : KERFD_BIN;
        const char *bins[2];
        double v[2][4][MAX_ROUNDS], m[2][4];
        unsigned nb;

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *x = i + 1 < argc ? argv[i + 1] : NULL;
                if (!x)
                        die("missing value for", a);
                if (!strcmp(a, "--submits"))
                        n_submits = (unsigned)atoi(x);
                else if (!strcmp(a, "--running"))
                        n_running = (unsigned)atoi(x);
                else if (!strcmp(a, "--rounds"))
                        rounds = (unsigned)atoi(x);
                else if (!strcmp(a, "--base"))
                        base = x;
                else if (!strcmp(a, "--starting"))
                        starting = atoi(x);
                else
                        die("unknown option", a);
                i++;
        }
        if (n_submits < 100 || !rounds || rounds > MAX_ROUNDS)
                die("--submits >= 100, --rounds 1..9", NULL);
        curl_global_init(CURL_GLOBAL_ALL);
        h = curl_easy_init();
        hdr = curl_slist_append(NULL, "Expect:");
        hdr = curl_slist_append(hdr, "Content-Type: application/json");
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 20000L);
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        bins[0] = bin;
        bins[1] = base;
        nb = base ? 2 : 1;
        printf("%u submits (%s) with %u tasks running, %u rounds\n", n_submits,
               starting == 2 ? "tenant alice, a whole GPU each: queued behind the running"
               : starting    ? "tenant alice, /bin/true on a slice: each starts and ends"
                             : "tenant q, queued",
               n_running, rounds);
        for (unsigned k = 0; k < rounds; k++)
                for (unsigned i = 0; i < nb; i++) {
                        unsigned j = (k % 2) ? nb - 1 - i : i; /* alternate who goes first */
                        result r = one_run(bins[j]);
                        v[j][0][k] = r.p50, v[j][1][k] = r.p99, v[j][2][k] = r.max;
                        v[j][3][k] = r.rate;
                        printf("  %-4s round %u: p50 %.3f ms  p99 %.3f ms  max %.3f ms  %.0f "
                               "submits/s\n",
                               j ? "base" : "this", k + 1, r.p50, r.p99, r.max, r.rate);
                        fflush(stdout);
                }
        for (unsigned j = 0; j < nb; j++) {
                for (unsigned q = 0; q < 4; q++)
                        m[j][q] = med(v[j][q], rounds);
                printf("%-4s median: p50 %.3f ms  p99 %.3f ms  max %.3f ms  %.0f submits/s  (%s)\n",
                       j ? "base" : "this", m[j][0], m[j][1], m[j][2], m[j][3], bins[j]);
        }
        if (nb == 2)
                printf("this/base: p50 %.2fx  p99 %.2fx  submits/s %.2fx\n", m[0][0] / m[1][0],
                       m[0][1] / m[1][1], m[0][3] / m[1][3]);
        curl_easy_cleanup(h);
        curl_slist_free_all(hdr);
        return 0;
}
