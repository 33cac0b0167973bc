/* SPDX-License-Identifier: Apache-2.0 */
/* bench_metrics.c - task GET latency of kerfd with 100k pending tasks, without and with
 * concurrent /metrics scrapers (issue 8 D3; docs/PERFORMANCE.md "GETs while scraping") */
/*
 * Starts a throwaway kerfd (simulated fleet, own Unix socket) whose store holds N pending
 * tasks of tenant q (quota 0, so they stay pending: one made through the API, the rest clones
 * written with the store library, re-queued by recovery), then:
 *   phase 1  G threads GET /v1/tasks/{random pending id} over keep-alive for S seconds
 *   phase 2  the same while K threads GET /metrics in a loop (as an admin: the whole node)
 * and prints req/s, p50 and p99 of the GETs of each phase, the ratio phase 2 / phase 1, and
 * the scrape size, rate and latency. $KERFD overrides the kerfd binary.
 * usage: bench_metrics [--tasks N] [--seconds S] [--getters G] [--scrapers K] [--scrape-ms MS]
 * (--scrape-ms: each scraper pauses that long between scrapes; default 0, back to back)
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kerf/store.h"

static unsigned n_tasks = 100000, getters = 2, scrapers = 2, scrape_ms;
static double seconds = 5.0;
static char dir[256], sock[320], cfg[320], log_path[320], db[320];
static pid_t kpid;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void kill_kd(void)
{
        if (kpid > 0) {
                kill(kpid, SIGKILL);
                waitpid(kpid, NULL, 0);
                kpid = 0;
        }
}

static void die(const char *fmt, ...)
{
        va_list ap;
        fputs("bench_metrics: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        kill_kd();
        exit(1);
}

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(unsigned ms)
{
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

typedef struct buf {
        char *p;
        size_t n, cap;
} buf;

static size_t on_data(char *d, size_t sz, size_t nm, void *ud)
{
        buf *b = ud;
        size_t l = sz * nm;
        if (b->n + l + 1 > b->cap) {
                size_t nc = b->cap ? b->cap * 2 : 8192;
                while (nc < b->n + l + 1)
                        nc *= 2;
                char *np = realloc(b->p, nc);
                if (!np)
                        return 0;
                b->p = np;
                b->cap = nc;
        }
        memcpy(b->p + b->n, d, l);
        b->n += l;
        b->p[b->n] = 0;
        return l;
}

/* One keep-alive connection over the Unix socket. */
typedef struct conn {
        CURL *h;
        struct curl_slist *hdr;
        buf b;
} conn;

static void conn_init(conn *c)
{
        memset(c, 0, sizeof(*c));
        if (!(c->h = curl_easy_init()))
                die("curl_easy_init failed");
        curl_easy_setopt(c->h, CURLOPT_UNIX_SOCKET_PATH, sock);
        c->hdr = curl_slist_append(NULL, "Expect:");
        c->hdr = curl_slist_append(c->hdr, "Content-Type: application/json");
        curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, c->hdr);
        curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS, 60000L);
        curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &c->b);
}

static void conn_fini(conn *c)
{
        curl_easy_cleanup(c->h);
        curl_slist_free_all(c->hdr);
        free(c->b.p);
}

static long call(conn *c, const char *path, const char *body)
{
        char url[256];
        long st = 0;
        snprintf(url, sizeof(url), "http://kerfd%s", path);
        c->b.n = 0;
        curl_easy_setopt(c->h, CURLOPT_URL, url);
        if (body) {
                curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body);
        } else {
                curl_easy_setopt(c->h, CURLOPT_HTTPGET, 1L);
        }
        if (curl_easy_perform(c->h) == CURLE_OK)
                curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &st);
        return st;
}

static void kd_start(void)
{
        double t0 = now_s();
        unlink(sock);
        kpid = fork();
        if (kpid < 0)
                die("fork: %s", strerror(errno));
        if (kpid == 0) {
                int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
                if (fd >= 0) {
                        dup2(fd, 1);
                        dup2(fd, 2);
                }
                const char *bin = getenv("KERFD") ? getenv("KERFD") : KERFD_BIN;
                execl(bin, "kerfd", "-c", cfg, (char *)NULL);
                _exit(127);
        }
        while (now_s() - t0 < 120.0) {
                conn c;
                conn_init(&c);
                long st = access(sock, F_OK) == 0 ? call(&c, "/v1/health", NULL) : 0;
                conn_fini(&c);
                if (st == 200)
                        return;
                if (waitpid(kpid, NULL, WNOHANG) == kpid) {
                        kpid = 0;
                        die("kerfd exited at start; see %s", log_path);
                }
                sleep_ms(20);
        }
        die("kerfd did not answer within 120 s; see %s", log_path);
}

/* N pending tasks: one through the API (a true record), N-1 clones of it in the store. */
static uint64_t fill(uint64_t *ret_lo)
{
        conn c;
        kerf_store *s = NULL;
        kerf_store_task tpl;
        char err[256];
        uint64_t id;

        conn_init(&c);
        if (call(&c, "/v1/tasks", "{\"tenant\":\"q\",\"command\":[\"/bin/true\"]}") != 201)
                die("submit: %s", c.b.p ? c.b.p : "no answer");
        json_t *j = json_loads(c.b.p, 0, NULL);
        id = (uint64_t)json_integer_value(json_object_get(j, "id"));
        json_decref(j);
        conn_fini(&c);
        kill_kd();
        if (kerf_store_open(db, NULL, &s, err, sizeof(err)) < 0)
                die("open %s: %s", db, err);
        kerf_store_task_init(&tpl);
        if (kerf_store_task_get(s, id, &tpl) < 0)
                die("template record missing");
        for (uint64_t i = id + 1; i < id + n_tasks;) {
                if (kerf_store_begin(s) < 0)
                        die("begin: %s", kerf_store_errmsg(s));
                for (unsigned k = 0; k < 10000 && i < id + n_tasks; k++, i++) {
                        kerf_store_task t = tpl;
                        t.id = i;
                        snprintf(t.name, sizeof(t.name), "p-%llu", (unsigned long long)i);
                        if (kerf_store_task_insert(s, &t) < 0)
                                die("insert: %s", kerf_store_errmsg(s));
                }
                if (kerf_store_commit(s) < 0)
                        die("commit: %s", kerf_store_errmsg(s));
        }
        kerf_store_task_fini(&tpl);
        kerf_store_close(s);
        *ret_lo = id;
        return id + n_tasks - 1;
}

typedef struct job {
        bool scrape;
        uint64_t lo, hi;
        unsigned seed;
        volatile int *go, *stop;
        double *lat; /* GET latencies (s) */
        size_t n, cap;
        uint64_t bad, bytes;
} job;

static void *worker(void *arg)
{
        job *j = arg;
        conn c;
        char path[64];
        conn_init(&c);
        call(&c, "/v1/health", NULL);
        while (!*j->go)
                sleep_ms(1);
        while (!*j->stop) {
                uint64_t id = j->lo + (uint64_t)rand_r(&j->seed) % (j->hi - j->lo + 1);
                double t0 = now_s();
                long st;
                if (j->scrape) {
                        st = call(&c, "/metrics", NULL);
                        j->bytes += c.b.n;
                } else {
                        snprintf(path, sizeof(path), "/v1/tasks/%llu", (unsigned long long)id);
                        st = call(&c, path, NULL);
                }
                if (st != 200) {
                        j->bad++;
                        continue;
                }
                if (j->n == j->cap) {
                        j->cap = j->cap ? j->cap * 2 : 65536;
                        j->lat = realloc(j->lat, j->cap * sizeof(double));
                        if (!j->lat)
                                die("out of memory");
                }
                j->lat[j->n++] = now_s() - t0;
                if (j->scrape && scrape_ms)
                        sleep_ms(scrape_ms);
        }
        conn_fini(&c);
        return NULL;
}

static int cmp_d(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

typedef struct phase {
        double rate, p50, p99, scrape_rate, scrape_p50, scrape_mb;
} phase;

static double pct(const double *v, size_t n, double p)
{
        return n ? v[(size_t)((double)(n - 1) * p)] : 0;
}

static phase run_phase(uint64_t lo, uint64_t hi, unsigned n_scrapers)
{
        pthread_t th[64];
        job jobs[64];
        volatile int go = 0, stop = 0;
        unsigned n = getters + n_scrapers;
        phase ph = {0};
        double *all = NULL, *sc = NULL;
        size_t na = 0, ns = 0;
        uint64_t bytes = 0;

        for (unsigned i = 0; i < n; i++) {
                jobs[i] = (job){.scrape = i >= getters,
                                .lo = lo,
                                .hi = hi,
                                .seed = 777u + i * 7919u,
                                .go = &go,
                                .stop = &stop};
                if (pthread_create(&th[i], NULL, worker, &jobs[i]) != 0)
                        die("pthread_create");
        }
        sleep_ms(200);
        double t0 = now_s();
        go = 1;
        while (now_s() - t0 < seconds)
                sleep_ms(10);
        stop = 1;
        for (unsigned i = 0; i < n; i++)
                pthread_join(th[i], NULL);
        double el = now_s() - t0;
        for (unsigned i = 0; i < n; i++) {
                double **dst = jobs[i].scrape ? &sc : &all;
                size_t *dn = jobs[i].scrape ? &ns : &na;
                *dst = realloc(*dst, (*dn + jobs[i].n + 1) * sizeof(double));
                memcpy(*dst + *dn, jobs[i].lat, jobs[i].n * sizeof(double));
                *dn += jobs[i].n;
                bytes += jobs[i].bytes;
                if (jobs[i].bad)
                        fprintf(stderr, "  (%llu answers not 200)\n",
                                (unsigned long long)jobs[i].bad);
                free(jobs[i].lat);
        }
        qsort(all, na, sizeof(double), cmp_d);
        qsort(sc, ns, sizeof(double), cmp_d);
        ph.rate = (double)na / el;
        ph.p50 = pct(all, na, 0.50) * 1000;
        ph.p99 = pct(all, na, 0.99) * 1000;
        ph.scrape_rate = (double)ns / el;
        ph.scrape_p50 = pct(sc, ns, 0.50) * 1000;
        ph.scrape_mb = ns ? (double)bytes / (double)ns / 1e6 : 0;
        free(all);
        free(sc);
        return ph;
}

int main(int argc, char **argv)
{
        FILE *f;
        uint64_t lo, hi;
        for (int i = 1; i + 1 < argc; i += 2) {
                if (!strcmp(argv[i], "--tasks"))
                        n_tasks = (unsigned)strtoul(argv[i + 1], NULL, 10);
                else if (!strcmp(argv[i], "--seconds"))
                        seconds = atof(argv[i + 1]);
                else if (!strcmp(argv[i], "--getters"))
                        getters = (unsigned)atoi(argv[i + 1]);
                else if (!strcmp(argv[i], "--scrapers"))
                        scrapers = (unsigned)atoi(argv[i + 1]);
                else if (!strcmp(argv[i], "--scrape-ms"))
                        scrape_ms = (unsigned)atoi(argv[i + 1]);
                else
                        die("unknown flag %s", argv[i]);
        }
        if (n_tasks < 2 || n_tasks > 1000000 || getters < 1 || getters > 32 || scrapers > 32 ||
            seconds < 0.5 || seconds > 120)
                die("a flag is out of range");
        signal(SIGPIPE, SIG_IGN);
        curl_global_init(CURL_GLOBAL_DEFAULT);
        atexit(kill_kd);
        snprintf(dir, sizeof(dir), "/tmp/kerf-bench-XXXXXX");
        if (!mkdtemp(dir))
                die("mkdtemp: %s", strerror(errno));
        snprintf(sock, sizeof(sock), "%s/kerfd.sock", dir);
        snprintf(cfg, sizeof(cfg), "%s/kerfd.yaml", dir);
        snprintf(log_path, sizeof(log_path), "%s/kerfd.log", dir);
        snprintf(db, sizeof(db), "%s/state/kerf.db", dir);
        if (!(f = fopen(cfg, "w")))
                die("%s: %s", cfg, strerror(errno));
        fprintf(f,
                "state_dir: %s/state\nsocket: %s\nfleet: %s/examples/fleet-8xh200.yaml\n"
                "backend:\n  simulated: true\nlimits:\n  max_tasks: 1000000\n"
                "tenants:\n  - name: q\n    quota:\n"
                "      gpus: {nominal: 0, borrow_limit: 0}\n"
                "      memory: {nominal: 0, borrow_limit: 0}\n"
                "      compute: {nominal: 0, borrow_limit: 0}\n"
                "      mig_slices: {nominal: 0, borrow_limit: 0}\n",
                dir, sock, KERF_SOURCE_DIR);
        fclose(f);
        printf("== bench_metrics: %u pending tasks, %u GET threads, %u scrapers (pause %u ms), "
               "%.0f s per phase, %ld CPUs\n",
               n_tasks, getters, scrapers, scrape_ms, seconds, sysconf(_SC_NPROCESSORS_ONLN));
        kd_start();
        hi = fill(&lo);
        double t0 = now_s();
        kd_start();
        printf("  (store filled, kerfd recovered %u tasks in %.1f s)\n", n_tasks, now_s() - t0);
        phase a = run_phase(lo, hi, 0), b = run_phase(lo, hi, scrapers);
        printf("%-34s %10.0f req/s  p50 %7.3f ms  p99 %7.3f ms\n", "task GETs, no scrape", a.rate,
               a.p50, a.p99);
        printf("%-34s %10.0f req/s  p50 %7.3f ms  p99 %7.3f ms\n", "task GETs, scrapers running",
               b.rate, b.p50, b.p99);
        printf("%-34s %10.2f (req/s), p99 x%.1f\n", "ratio scraping / no scrape",
               a.rate > 0 ? b.rate / a.rate : 0, a.p99 > 0 ? b.p99 / a.p99 : 0);
        printf("%-34s %10.1f scrapes/s  p50 %7.1f ms  %.3f MB each\n", "/metrics", b.scrape_rate,
               b.scrape_p50, b.scrape_mb);
        kill_kd();
        if (!getenv("KERF_BENCH_KEEP")) {
                char cmd[300];
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
                if (system(cmd) != 0)
                        fprintf(stderr, "could not remove %s\n", dir);
        }
        curl_global_cleanup();
        return 0;
}
