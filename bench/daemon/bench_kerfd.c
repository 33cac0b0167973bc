/* SPDX-License-Identifier: Apache-2.0 */
/* bench_kerfd.c - kerfd over loopback: task GETs/s, list/s, durable submits/s, recovery time */
/*
 * Starts a throwaway kerfd (temp state dir, simulated fleet, own Unix socket and loopback TCP
 * port) and drives it with libcurl, one keep-alive easy handle per client thread:
 *
 *   submit    POST /v1/tasks for tenant "q" whose GPU quota is 0: every task is acknowledged
 *             after its store commit and stays pending, so the executor is not measured
 *   get       GET /v1/tasks/{id} of random live (pending) tasks
 *   list      GET /v1/tasks?limit=100&after=RANDOM
 *   tcp get / tcp list: the same over 127.0.0.1 with tenant q's bearer token
 *   recovery  a second state dir with N task records written straight into kerf.db with the
 *             store library (clones of real records made through the API; a share pending),
 *             kerfd kill -9'd, then timed from fork+exec to GET /v1/health answering 200
 *   get ended GET /v1/tasks/{id} of random ended tasks (answered from the store) on it
 *   recovery, all pending: the same with every record pending (all re-queued at start)
 *
 * $KERFD overrides the kerfd binary (default: the one of this build).
 * usage: bench_kerfd [--seconds S] [--runs N] [--threads T] [--records N] [--pending PCT]
 * Prints one line per run and the median of the runs per metric.
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
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <time.h>
#include <unistd.h>

#include "kerf/store.h"

#define MAX_RUNS    9
#define MAX_THREADS 32

static double seconds = 3.0;
static int runs = 3, nthreads = 4, pending_pct = 10;
static unsigned records = 100000;

typedef struct kd {
        char dir[256], sock[320], cfg[320], log[320], db[320];
        unsigned port;
        pid_t pid;
} kd;

static kd *live[2];

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void kill_all(void)
{
        for (int i = 0; i < 2; i++)
                if (live[i] && live[i]->pid > 0) {
                        kill(live[i]->pid, SIGKILL);
                        waitpid(live[i]->pid, NULL, 0);
                        live[i]->pid = 0;
                }
}

static void die(const char *fmt, ...)
{
        va_list ap;
        fputs("bench_kerfd: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        kill_all();
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

/* ---- HTTP ------------------------------------------------------------------------------- */

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

/* One keep-alive connection: a reused easy handle. */
typedef struct conn {
        CURL *h;
        struct curl_slist *hdr, *hdr_body;
        char base[64];
        buf b;
} conn;

static void conn_init(conn *c, const kd *k, bool tcp, const char *token)
{
        char auth[256];
        memset(c, 0, sizeof(*c));
        c->h = curl_easy_init();
        if (!c->h)
                die("curl_easy_init failed");
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
        curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS, 20000L);
        curl_easy_setopt(c->h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &c->b);
        curl_easy_setopt(c->h, CURLOPT_TCP_NODELAY, 1L);
}

static void conn_fini(conn *c)
{
        curl_easy_cleanup(c->h);
        curl_slist_free_all(c->hdr);
        curl_slist_free_all(c->hdr_body);
        free(c->b.p);
}

/* Returns the HTTP status (0 when no answer); the body is in c->b.p. */
static long conn_call(conn *c, const char *method, const char *path, const char *body)
{
        char url[512];
        long st = 0;
        snprintf(url, sizeof(url), "%s%s", c->base, path);
        c->b.n = 0;
        if (c->b.p)
                c->b.p[0] = 0;
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

/* ---- kerfd ------------------------------------------------------------------------------- */

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
                die("no free loopback port");
        return p;
}

static void kd_setup(kd *k, int slot)
{
        FILE *f;
        memset(k, 0, sizeof(*k));
        snprintf(k->dir, sizeof(k->dir), "/tmp/kerf-bench-XXXXXX");
        if (!mkdtemp(k->dir))
                die("mkdtemp: %s", strerror(errno));
        snprintf(k->sock, sizeof(k->sock), "%s/kerfd.sock", k->dir);
        snprintf(k->cfg, sizeof(k->cfg), "%s/kerfd.yaml", k->dir);
        snprintf(k->log, sizeof(k->log), "%s/kerfd.log", k->dir);
        snprintf(k->db, sizeof(k->db), "%s/state/kerf.db", k->dir);
        k->port = free_port();
        f = fopen(k->cfg, "w");
        if (!f)
                die("%s: %s", k->cfg, strerror(errno));
        /* tenant q has no quota at all: its tasks are stored and queued, never started */
        fprintf(f,
                "state_dir: %s/state\nsocket: %s\nlisten_tcp: 127.0.0.1:%u\n"
                "fleet: %s/examples/fleet-8xh200.yaml\n"
                "backend:\n  simulated: true\nlimits:\n  grace_s: 2\n  max_tasks: 200000\n"
                "tenants:\n  - name: alice\n  - name: q\n    quota:\n"
                "      gpus: {nominal: 0, borrow_limit: 0}\n"
                "      memory: {nominal: 0, borrow_limit: 0}\n"
                "      compute: {nominal: 0, borrow_limit: 0}\n"
                "      mig_slices: {nominal: 0, borrow_limit: 0}\n",
                k->dir, k->sock, k->port, KERF_SOURCE_DIR);
        fclose(f);
        live[slot] = k;
}

static long health(const kd *k)
{
        conn c;
        conn_init(&c, k, false, NULL);
        curl_easy_setopt(c.h, CURLOPT_TIMEOUT_MS, 2000L);
        long st = conn_call(&c, "GET", "/v1/health", NULL);
        conn_fini(&c);
        return st;
}

/* Starts kerfd and polls /v1/health every millisecond; returns seconds from fork to 200. */
static double kd_start(kd *k)
{
        unlink(k->sock);
        double t0 = now_s();
        pid_t p = fork();
        if (p < 0)
                die("fork: %s", strerror(errno));
        if (p == 0) {
                int fd = open(k->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
                if (fd >= 0) {
                        dup2(fd, 1);
                        dup2(fd, 2);
                }
                const char *bin = getenv("KERFD") ? getenv("KERFD") : KERFD_BIN;
                execl(bin, "kerfd", "-c", k->cfg, (char *)NULL);
                _exit(127);
        }
        k->pid = p;
        while (now_s() - t0 < 30.0) {
                if (access(k->sock, F_OK) == 0 && health(k) == 200)
                        return now_s() - t0;
                if (waitpid(p, NULL, WNOHANG) == p) {
                        k->pid = 0;
                        die("kerfd exited at start; see %s", k->log);
                }
                sleep_ms(1);
        }
        die("kerfd did not answer /v1/health within 30 s; see %s", k->log);
}

/* Resident memory of kerfd (VmRSS, MiB), or -1. */
static long rss_mib(pid_t pid)
{
        char path[64], line[256];
        long kb = -1;
        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
                        break;
        fclose(f);
        return kb < 0 ? -1 : kb / 1024;
}

static void kd_kill9(kd *k)
{
        if (k->pid > 0) {
                kill(k->pid, SIGKILL);
                waitpid(k->pid, NULL, 0);
        }
        k->pid = 0;
}

static void kd_cleanup(kd *k)
{
        char cmd[400];
        kd_kill9(k);
        if (getenv("KERF_BENCH_KEEP")) {
                fprintf(stderr, "kept %s\n", k->dir);
                return;
        }
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", k->dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", k->dir);
}

/* ---- load generator ---------------------------------------------------------------------- */

typedef enum { OP_SUBMIT, OP_GET, OP_LIST } op_kind;

typedef struct job {
        const kd *k;
        op_kind op;
        bool tcp;
        const char *token;
        uint64_t id_lo, id_hi; /* ids to GET / list after */
        volatile int *go, *stop;
        unsigned seed;
        uint64_t ok, bad;
        uint64_t max_id;
        long last_bad;
} job;

static void *worker(void *arg)
{
        job *j = arg;
        conn c;
        char path[128];
        const char *body = j->tcp ? "{\"command\":[\"/bin/true\"],\"name\":\"bench\"}"
                                  : "{\"tenant\":\"q\",\"command\":[\"/bin/true\"],"
                                    "\"name\":\"bench\"}";
        conn_init(&c, j->k, j->tcp, j->token);
        /* warm the connection before the clock starts */
        conn_call(&c, "GET", "/v1/health", NULL);
        while (!*j->go)
                sleep_ms(1);
        while (!*j->stop) {
                long st;
                uint64_t span = j->id_hi - j->id_lo + 1;
                uint64_t id = j->id_lo + (uint64_t)rand_r(&j->seed) % span;
                switch (j->op) {
                case OP_SUBMIT:
                        st = conn_call(&c, "POST", "/v1/tasks", body);
                        if (st == 201) {
                                json_t *t = json_loads(c.b.p, 0, NULL);
                                uint64_t nid =
                                    (uint64_t)json_integer_value(json_object_get(t, "id"));
                                json_decref(t);
                                if (nid > j->max_id)
                                        j->max_id = nid;
                        }
                        st = st == 201 ? 200 : st;
                        break;
                case OP_GET:
                        snprintf(path, sizeof(path), "/v1/tasks/%llu", (unsigned long long)id);
                        st = conn_call(&c, "GET", path, NULL);
                        break;
                default:
                        snprintf(path, sizeof(path), "/v1/tasks?limit=100&after=%llu",
                                 (unsigned long long)(id > 100 ? id - 100 : 0));
                        st = conn_call(&c, "GET", path, NULL);
                        break;
                }
                if (st == 200) {
                        j->ok++;
                } else {
                        j->bad++;
                        j->last_bad = st;
                }
        }
        conn_fini(&c);
        return NULL;
}

typedef struct result {
        double rate;
        uint64_t ok, bad;
        uint64_t max_id;
} result;

static result load(const kd *k, op_kind op, bool tcp, const char *token, uint64_t lo, uint64_t hi)
{
        pthread_t th[MAX_THREADS];
        job jobs[MAX_THREADS];
        volatile int go = 0, stop = 0;
        result r = {0};
        for (int i = 0; i < nthreads; i++) {
                jobs[i] = (job){.k = k,
                                .op = op,
                                .tcp = tcp,
                                .token = token,
                                .id_lo = lo,
                                .id_hi = hi,
                                .go = &go,
                                .stop = &stop,
                                .seed = 12345u + (unsigned)i * 7919u};
                if (pthread_create(&th[i], NULL, worker, &jobs[i]) != 0)
                        die("pthread_create failed");
        }
        sleep_ms(100);
        double t0 = now_s();
        go = 1;
        while (now_s() - t0 < seconds)
                sleep_ms(10);
        stop = 1;
        for (int i = 0; i < nthreads; i++) {
                pthread_join(th[i], NULL);
                r.ok += jobs[i].ok;
                r.bad += jobs[i].bad;
                if (jobs[i].max_id > r.max_id)
                        r.max_id = jobs[i].max_id;
                if (jobs[i].bad)
                        fprintf(stderr, "  (thread %d: %llu answers were not 200/201, last %ld)\n",
                                i, (unsigned long long)jobs[i].bad, jobs[i].last_bad);
        }
        double el = now_s() - t0; /* includes the last in-flight request of each thread */
        r.rate = (double)r.ok / el;
        return r;
}

/* ---- metrics table ----------------------------------------------------------------------- */

enum { M_SUBMIT, M_GET, M_LIST, M_TGET, M_TLIST, M_RECOV, M_GET_END, M_RECOV_ALL, M_COUNT };
static const char *const mname[M_COUNT] = {
    "durable submits/s (unix)",  "task GETs/s (unix, live)", "list/s limit=100 (unix)",
    "task GETs/s (tcp, token)",  "list/s limit=100 (tcp)",   "recovery to /v1/health (s)",
    "task GETs/s (unix, ended)", "recovery, all pending (s)"};
static double vals[M_COUNT][MAX_RUNS];
static int nvals[M_COUNT];

static void record(int m, double v)
{
        if (nvals[m] < MAX_RUNS)
                vals[m][nvals[m]++] = v;
        if (m == M_RECOV || m == M_RECOV_ALL)
                printf("  %-28s %.3f\n", mname[m], v);
        else
                printf("  %-28s %.0f\n", mname[m], v);
        fflush(stdout);
}

static int cmp_d(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double median(int m)
{
        double v[MAX_RUNS];
        int n = nvals[m];
        memcpy(v, vals[m], sizeof(double) * (size_t)n);
        qsort(v, (size_t)n, sizeof(double), cmp_d);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- phases ------------------------------------------------------------------------------ */

static char *make_token(const kd *k, const char *tenant)
{
        conn c;
        char path[128];
        conn_init(&c, k, false, NULL);
        snprintf(path, sizeof(path), "/v1/tenants/%s/tokens", tenant);
        curl_easy_setopt(c.h, CURLOPT_CUSTOMREQUEST, "POST");
        long st = conn_call(&c, "POST", path, "{}");
        json_t *j = json_loads(c.b.p ? c.b.p : "", 0, NULL);
        const char *t = json_string_value(json_object_get(j, "token"));
        if (st != 201 || !t)
                die("token for %s: HTTP %ld %s", tenant, st, c.b.p ? c.b.p : "");
        char *ret = strdup(t);
        json_decref(j);
        conn_fini(&c);
        return ret;
}

static uint64_t submit_one(const kd *k, const char *body, json_t **ret)
{
        conn c;
        conn_init(&c, k, false, NULL);
        long st = conn_call(&c, "POST", "/v1/tasks", body);
        json_t *j = json_loads(c.b.p ? c.b.p : "", 0, NULL);
        if (st != 201 || !j)
                die("submit %s: HTTP %ld %s", body, st, c.b.p ? c.b.p : "");
        conn_fini(&c);
        uint64_t id = (uint64_t)json_integer_value(json_object_get(j, "id"));
        if (ret)
                *ret = j;
        else
                json_decref(j);
        return id;
}

static const char *task_state(const kd *k, uint64_t id)
{
        static char st_buf[32];
        conn c;
        char path[64];
        conn_init(&c, k, false, NULL);
        snprintf(path, sizeof(path), "/v1/tasks/%llu", (unsigned long long)id);
        conn_call(&c, "GET", path, NULL);
        json_t *j = json_loads(c.b.p ? c.b.p : "", 0, NULL);
        snprintf(st_buf, sizeof(st_buf), "%s",
                 json_string_value(json_object_get(j, "state")) ?: "?");
        json_decref(j);
        conn_fini(&c);
        return st_buf;
}

static void bench_live(void)
{
        kd k;
        kd_setup(&k, 0);
        kd_start(&k);
        char *tok = make_token(&k, "q");
        uint64_t first = 0, last = 0;
        printf("== kerfd live: %d client threads, %.1f s per measurement, %d runs\n", nthreads,
               seconds, runs);
        for (int r = 0; r < runs; r++) {
                printf("run %d\n", r + 1);
                result s = load(&k, OP_SUBMIT, false, NULL, 1, 1);
                record(M_SUBMIT, s.rate);
                if (!first)
                        first = 1;
                if (s.max_id > last)
                        last = s.max_id;
                if (!last)
                        die("no submit succeeded; see %s", k.log);
                record(M_GET, load(&k, OP_GET, false, NULL, first, last).rate);
                record(M_LIST, load(&k, OP_LIST, false, NULL, first, last).rate);
                record(M_TGET, load(&k, OP_GET, true, tok, first, last).rate);
                record(M_TLIST, load(&k, OP_LIST, true, tok, first, last).rate);
        }
        const char *st = task_state(&k, last);
        printf("  (%llu tasks submitted in all; task %llu is %s)\n", (unsigned long long)last,
               (unsigned long long)last, st);
        if (strcmp(st, "pending") != 0)
                die("the submitted tasks should stay pending (tenant q has no GPU quota)");
        free(tok);
        kd_cleanup(&k);
        live[0] = NULL;
}

/* Clones `tpl` into ids [from, to) inside one transaction per 10,000. */
static void clone_records(kerf_store *s, const kerf_store_task *tpl, uint64_t from, uint64_t to)
{
        for (uint64_t id = from; id < to;) {
                if (kerf_store_begin(s) < 0)
                        die("store begin: %s", kerf_store_errmsg(s));
                for (unsigned n = 0; n < 10000 && id < to; n++, id++) {
                        kerf_store_task t = *tpl;
                        char name[KERF_NAME_LEN];
                        t.id = id;
                        snprintf(name, sizeof(name), "rec-%llu", (unsigned long long)id);
                        snprintf(t.name, sizeof(t.name), "%s", name);
                        if (kerf_store_task_insert(s, &t) < 0)
                                die("task insert %llu: %s", (unsigned long long)id,
                                    kerf_store_errmsg(s));
                        kerf_store_audit a = {0};
                        a.time_ms = t.submitted_ms;
                        snprintf(a.actor, sizeof(a.actor), "uid:0");
                        snprintf(a.tenant, sizeof(a.tenant), "%s", t.tenant);
                        snprintf(a.action, sizeof(a.action), "task.submit");
                        snprintf(a.object, sizeof(a.object), "task:%llu", (unsigned long long)id);
                        snprintf(a.result, sizeof(a.result), "ok");
                        if (kerf_store_audit_append(s, &a) < 0)
                                die("audit append: %s", kerf_store_errmsg(s));
                }
                if (kerf_store_commit(s) < 0)
                        die("store commit: %s", kerf_store_errmsg(s));
        }
}

static void bench_recovery(int pct, int metric)
{
        kd k;
        kd_setup(&k, 1);
        printf("== kerfd recovery: %u task records (%d%% pending, the rest ended), %d runs\n",
               records, pct, runs);
        kd_start(&k);
        /* two real records, made by kerfd itself: one that ends, one that stays pending */
        uint64_t done_id =
            submit_one(&k, "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"]}", NULL);
        uint64_t pend_id = submit_one(&k, "{\"tenant\":\"q\",\"command\":[\"/bin/true\"]}", NULL);
        for (int i = 0; i < 500 && strcmp(task_state(&k, done_id), "succeeded") != 0; i++)
                sleep_ms(20);
        if (strcmp(task_state(&k, done_id), "succeeded") != 0)
                die("task %llu did not succeed; see %s", (unsigned long long)done_id, k.log);
        kd_kill9(&k);

        double t0 = now_s();
        kerf_store *s = NULL;
        char err[256];
        if (kerf_store_open(k.db, NULL, &s, err, sizeof(err)) < 0)
                die("open %s: %s", k.db, err);
        kerf_store_task done, pend;
        kerf_store_task_init(&done);
        kerf_store_task_init(&pend);
        if (kerf_store_task_get(s, done_id, &done) < 0 ||
            kerf_store_task_get(s, pend_id, &pend) < 0)
                die("template records missing");
        uint64_t base = pend_id + 1, n_pend = (uint64_t)records * (uint64_t)pct / 100;
        uint64_t end = base + records - 2; /* the two templates count as records */
        if (n_pend > records - 2)
                n_pend = records - 2;
        /* ended records first, then the pending ones (recovery re-queues those) */
        clone_records(s, &done, base, end - n_pend);
        clone_records(s, &pend, end - n_pend, end);
        kerf_store_task_fini(&done);
        kerf_store_task_fini(&pend);
        kerf_store_close(s);
        printf("  (records written with kerf_store in %.2f s: ids %llu..%llu, %llu pending)\n",
               now_s() - t0, (unsigned long long)base, (unsigned long long)end - 1,
               (unsigned long long)n_pend);

        /* a first start brings the WAL and the page cache to their steady state */
        kd_start(&k);
        kd_kill9(&k);
        for (int r = 0; r < runs; r++) {
                printf("run %d\n", r + 1);
                record(metric, kd_start(&k));
                printf("  %-28s %ld MiB\n", "kerfd RSS after recovery", rss_mib(k.pid));
                if (end - n_pend > base)
                        record(M_GET_END,
                               load(&k, OP_GET, false, NULL, base, end - n_pend - 1).rate);
                kd_kill9(&k);
        }
        kd_cleanup(&k);
        live[1] = NULL;
}

int main(int argc, char **argv)
{
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (!v) {
                        fprintf(stderr, "usage: bench_kerfd [--seconds S] [--runs N] [--threads "
                                        "T] [--records N] [--pending PCT]\n");
                        return 2;
                }
                i++;
                if (!strcmp(a, "--seconds"))
                        seconds = atof(v);
                else if (!strcmp(a, "--runs"))
                        runs = atoi(v);
                else if (!strcmp(a, "--threads"))
                        nthreads = atoi(v);
                else if (!strcmp(a, "--records"))
                        records = (unsigned)strtoul(v, NULL, 10);
                else if (!strcmp(a, "--pending"))
                        pending_pct = atoi(v);
                else {
                        fprintf(stderr, "bench_kerfd: unknown flag %s\n", a);
                        return 2;
                }
        }
        if (seconds < 0.1 || seconds > 60 || runs < 1 || runs > MAX_RUNS || nthreads < 1 ||
            nthreads > MAX_THREADS || records < 2 || records > 1000000 || pending_pct < 0 ||
            pending_pct > 100) {
                fprintf(stderr, "bench_kerfd: a flag is out of range\n");
                return 2;
        }
        signal(SIGPIPE, SIG_IGN);
        curl_global_init(CURL_GLOBAL_DEFAULT);
        atexit(kill_all);
        double load1 = 0;
        FILE *la = fopen("/proc/loadavg", "r");
        if (la) {
                if (fscanf(la, "%lf", &load1) != 1)
                        load1 = -1;
                fclose(la);
        }
        printf("== bench_kerfd: %ld CPUs, load average %.2f at start\n",
               sysconf(_SC_NPROCESSORS_ONLN), load1);
        bench_live();
        bench_recovery(pending_pct, M_RECOV);
        if (pending_pct != 100)
                bench_recovery(100, M_RECOV_ALL);
        printf("== median of %d runs\n", runs);
        for (int m = 0; m < M_COUNT; m++)
                if (nvals[m])
                        printf(m == M_RECOV || m == M_RECOV_ALL ? "%-30s %.3f\n" : "%-30s %.0f\n",
                               mname[m], median(m));
        curl_global_cleanup();
        return 0;
}
