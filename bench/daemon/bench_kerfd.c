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
 *   --tokens  only TCP requests with a bearer token (whoami, task GETs), and with --base KERFD
 *             the same for another kerfd binary, alternating (docs/PERFORMANCE.md "d3.")
 * usage: bench_kerfd [--seconds S] [--runs N] [--threads T] [--records N] [--pending PCT]
 *                    [--tokens [--base KERFD]]
 * Prints one line per run and the median of the runs per metric.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kdbench.h"
#include "kerf/store.h"

#define MAX_RUNS    9
#define MAX_THREADS 32

static double seconds = 3.0;
static int runs = 3, nthreads = 4, pending_pct = 10;
static unsigned records = 100000;

/* tenant q has no quota at all: its tasks are stored and queued, never started */
#define LIVE_CONFIG                                                                                \
        "limits:\n  grace_s: 2\n  max_tasks: 200000\n"                                             \
        "tenants:\n  - name: alice\n  - name: q\n" KDB_NO_QUOTA

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

/* ---- load generator ---------------------------------------------------------------------- */

typedef enum { OP_SUBMIT, OP_GET, OP_LIST, OP_WHOAMI } op_kind;

typedef struct job {
        const kdb_kerfd *k;
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
        kdb_conn c;
        char path[128];
        const char *body = j->tcp ? "{\"command\":[\"/bin/true\"],\"name\":\"bench\"}"
                                  : "{\"tenant\":\"q\",\"command\":[\"/bin/true\"],"
                                    "\"name\":\"bench\"}";
        kdb_conn_init(&c, j->k, j->tcp, j->token);
        /* warm the connection before the clock starts */
        kdb_call(&c, "GET", "/v1/health", NULL);
        while (!*j->go)
                kdb_sleep_ms(1);
        while (!*j->stop) {
                long st;
                uint64_t span = j->id_hi - j->id_lo + 1;
                uint64_t id = j->id_lo + (uint64_t)rand_r(&j->seed) % span;
                switch (j->op) {
                case OP_SUBMIT:
                        st = kdb_call(&c, "POST", "/v1/tasks", body);
                        if (st == 201) {
                                json_t *t = json_loads(c.body, 0, NULL);
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
                        st = kdb_call(&c, "GET", path, NULL);
                        break;
                case OP_WHOAMI: /* identity only: the token check and a tiny answer */
                        st = kdb_call(&c, "GET", "/v1/whoami", NULL);
                        break;
                default:
                        snprintf(path, sizeof(path), "/v1/tasks?limit=100&after=%llu",
                                 (unsigned long long)(id > 100 ? id - 100 : 0));
                        st = kdb_call(&c, "GET", path, NULL);
                        break;
                }
                if (st == 200) {
                        j->ok++;
                } else {
                        j->bad++;
                        j->last_bad = st;
                }
        }
        kdb_conn_fini(&c);
        return NULL;
}

typedef struct result {
        double rate;
        uint64_t ok, bad;
        uint64_t max_id;
} result;

static result load(const kdb_kerfd *k, op_kind op, bool tcp, const char *token, uint64_t lo,
                   uint64_t hi)
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
                        kdb_die("pthread_create failed");
        }
        kdb_sleep_ms(100);
        double t0 = kdb_now_s();
        go = 1;
        while (kdb_now_s() - t0 < seconds)
                kdb_sleep_ms(10);
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
        double el = kdb_now_s() - t0; /* includes the last in-flight request of each thread */
        r.rate = (double)r.ok / el;
        return r;
}

/* ---- metrics table ----------------------------------------------------------------------- */

enum {
        M_SUBMIT,
        M_GET,
        M_LIST,
        M_TGET,
        M_TLIST,
        M_RECOV,
        M_GET_END,
        M_RECOV_ALL,
        M_TOK_WHO,
        M_TOK_GET,
        M_BTOK_WHO,
        M_BTOK_GET,
        M_COUNT
};
static const char *const mname[M_COUNT] = {
    "durable submits/s (unix)",  "task GETs/s (unix, live)",  "list/s limit=100 (unix)",
    "task GETs/s (tcp, token)",  "list/s limit=100 (tcp)",    "recovery to /v1/health (s)",
    "task GETs/s (unix, ended)", "recovery, all pending (s)", "whoami/s (tcp, token)",
    "task GETs/s (tcp, token)",  "base: whoami/s (tcp, tok)", "base: task GETs/s (tcp, tok)"};
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

static double median(int m)
{
        double v[MAX_RUNS];
        int n = nvals[m];
        memcpy(v, vals[m], sizeof(double) * (size_t)n);
        qsort(v, (size_t)n, sizeof(double), kdb_cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- phases ------------------------------------------------------------------------------ */

static char *make_token(const kdb_kerfd *k, const char *tenant)
{
        kdb_conn c;
        char path[128];
        kdb_conn_init(&c, k, false, NULL);
        snprintf(path, sizeof(path), "/v1/tenants/%s/tokens", tenant);
        curl_easy_setopt(c.h, CURLOPT_CUSTOMREQUEST, "POST");
        long st = kdb_call(&c, "POST", path, "{}");
        json_t *j = json_loads(c.body ? c.body : "", 0, NULL);
        const char *t = json_string_value(json_object_get(j, "token"));
        if (st != 201 || !t)
                kdb_die("token for %s: HTTP %ld %s", tenant, st, c.body ? c.body : "");
        char *ret = strdup(t);
        json_decref(j);
        kdb_conn_fini(&c);
        return ret;
}

static uint64_t submit_one(const kdb_kerfd *k, const char *body, json_t **ret)
{
        kdb_conn c;
        kdb_conn_init(&c, k, false, NULL);
        long st = kdb_call(&c, "POST", "/v1/tasks", body);
        json_t *j = json_loads(c.body ? c.body : "", 0, NULL);
        if (st != 201 || !j)
                kdb_die("submit %s: HTTP %ld %s", body, st, c.body ? c.body : "");
        kdb_conn_fini(&c);
        uint64_t id = (uint64_t)json_integer_value(json_object_get(j, "id"));
        if (ret)
                *ret = j;
        else
                json_decref(j);
        return id;
}

static const char *task_state(const kdb_kerfd *k, uint64_t id)
{
        static char st_buf[32];
        kdb_conn c;
        char path[64];
        kdb_conn_init(&c, k, false, NULL);
        snprintf(path, sizeof(path), "/v1/tasks/%llu", (unsigned long long)id);
        kdb_call(&c, "GET", path, NULL);
        json_t *j = json_loads(c.body ? c.body : "", 0, NULL);
        snprintf(st_buf, sizeof(st_buf), "%s",
                 json_string_value(json_object_get(j, "state")) ?: "?");
        json_decref(j);
        kdb_conn_fini(&c);
        return st_buf;
}

static void bench_live(void)
{
        kdb_kerfd k;
        kdb_setup(&k, true, LIVE_CONFIG);
        kdb_start(&k, NULL, 1, 30.0);
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
                        kdb_die("no submit succeeded; see %s", k.log);
                record(M_GET, load(&k, OP_GET, false, NULL, first, last).rate);
                record(M_LIST, load(&k, OP_LIST, false, NULL, first, last).rate);
                record(M_TGET, load(&k, OP_GET, true, tok, first, last).rate);
                record(M_TLIST, load(&k, OP_LIST, true, tok, first, last).rate);
        }
        const char *st = task_state(&k, last);
        printf("  (%llu tasks submitted in all; task %llu is %s)\n", (unsigned long long)last,
               (unsigned long long)last, st);
        if (strcmp(st, "pending") != 0)
                kdb_die("the submitted tasks should stay pending (tenant q has no GPU quota)");
        free(tok);
        kdb_cleanup(&k);
}

/* --tokens: TCP requests with a bearer token only (GET /v1/whoami: identity and a tiny answer;
 * GET /v1/tasks/{id} of 2,000 pending tasks), for this build's kerfd and, with --base, for
 * another binary, alternating which goes first per run (docs/PERFORMANCE.md "d3."). */
static void tokens_one(const char *bin, int m_who, int m_get)
{
        kdb_kerfd k;
        uint64_t first = 0, last = 0;
        char *tok;

        kdb_setup(&k, true, LIVE_CONFIG);
        kdb_start(&k, bin, 1, 30.0);
        tok = make_token(&k, "q");
        for (int i = 0; i < 2000; i++) {
                last = submit_one(&k, "{\"tenant\":\"q\",\"command\":[\"/bin/true\"]}", NULL);
                if (!first)
                        first = last;
        }
        printf("  %s\n", bin ? bin : "(this build)");
        record(m_who, load(&k, OP_WHOAMI, true, tok, first, last).rate);
        record(m_get, load(&k, OP_GET, true, tok, first, last).rate);
        free(tok);
        kdb_cleanup(&k);
}

static void bench_tokens(const char *base)
{
        printf("== kerfd TCP + bearer token: %d client threads, %.1f s per measurement, %d runs\n",
               nthreads, seconds, runs);
        for (int r = 0; r < runs; r++) {
                printf("run %d\n", r + 1);
                if (base && r % 2)
                        tokens_one(base, M_BTOK_WHO, M_BTOK_GET);
                tokens_one(NULL, M_TOK_WHO, M_TOK_GET);
                if (base && !(r % 2))
                        tokens_one(base, M_BTOK_WHO, M_BTOK_GET);
        }
}

/* Clones `tpl` into ids [from, to) inside one transaction per 10,000. */
static void clone_records(kerf_store *s, const kerf_store_task *tpl, uint64_t from, uint64_t to)
{
        for (uint64_t id = from; id < to;) {
                if (kerf_store_begin(s) < 0)
                        kdb_die("store begin: %s", kerf_store_errmsg(s));
                for (unsigned n = 0; n < 10000 && id < to; n++, id++) {
                        kerf_store_task t = *tpl;
                        char name[KERF_NAME_LEN];
                        t.id = id;
                        snprintf(name, sizeof(name), "rec-%llu", (unsigned long long)id);
                        snprintf(t.name, sizeof(t.name), "%s", name);
                        if (kerf_store_task_insert(s, &t) < 0)
                                kdb_die("task insert %llu: %s", (unsigned long long)id,
                                        kerf_store_errmsg(s));
                        kerf_store_audit a = {0};
                        a.time_ms = t.submitted_ms;
                        snprintf(a.actor, sizeof(a.actor), "uid:0");
                        snprintf(a.tenant, sizeof(a.tenant), "%s", t.tenant);
                        snprintf(a.action, sizeof(a.action), "task.submit");
                        snprintf(a.object, sizeof(a.object), "task:%llu", (unsigned long long)id);
                        snprintf(a.result, sizeof(a.result), "ok");
                        if (kerf_store_audit_append(s, &a) < 0)
                                kdb_die("audit append: %s", kerf_store_errmsg(s));
                }
                if (kerf_store_commit(s) < 0)
                        kdb_die("store commit: %s", kerf_store_errmsg(s));
        }
}

static void bench_recovery(int pct, int metric)
{
        kdb_kerfd k;
        kdb_setup(&k, true, LIVE_CONFIG);
        printf("== kerfd recovery: %u task records (%d%% pending, the rest ended), %d runs\n",
               records, pct, runs);
        kdb_start(&k, NULL, 1, 30.0);
        /* two real records, made by kerfd itself: one that ends, one that stays pending */
        uint64_t done_id =
            submit_one(&k, "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"]}", NULL);
        uint64_t pend_id = submit_one(&k, "{\"tenant\":\"q\",\"command\":[\"/bin/true\"]}", NULL);
        for (int i = 0; i < 500 && strcmp(task_state(&k, done_id), "succeeded") != 0; i++)
                kdb_sleep_ms(20);
        if (strcmp(task_state(&k, done_id), "succeeded") != 0)
                kdb_die("task %llu did not succeed; see %s", (unsigned long long)done_id, k.log);
        kdb_kill9(&k);

        double t0 = kdb_now_s();
        kerf_store *s = NULL;
        char err[256];
        if (kerf_store_open(k.db, NULL, &s, err, sizeof(err)) < 0)
                kdb_die("open %s: %s", k.db, err);
        kerf_store_task done, pend;
        kerf_store_task_init(&done);
        kerf_store_task_init(&pend);
        if (kerf_store_task_get(s, done_id, &done) < 0 ||
            kerf_store_task_get(s, pend_id, &pend) < 0)
                kdb_die("template records missing");
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
               kdb_now_s() - t0, (unsigned long long)base, (unsigned long long)end - 1,
               (unsigned long long)n_pend);

        /* a first start brings the WAL and the page cache to their steady state */
        kdb_start(&k, NULL, 1, 30.0);
        kdb_kill9(&k);
        for (int r = 0; r < runs; r++) {
                printf("run %d\n", r + 1);
                record(metric, kdb_start(&k, NULL, 1, 30.0));
                printf("  %-28s %ld MiB\n", "kerfd RSS after recovery", rss_mib(k.pid));
                if (end - n_pend > base)
                        record(M_GET_END,
                               load(&k, OP_GET, false, NULL, base, end - n_pend - 1).rate);
                kdb_kill9(&k);
        }
        kdb_cleanup(&k);
}

int main(int argc, char **argv)
{
        bool tokens = false;
        const char *base = NULL;

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (!strcmp(a, "--tokens")) {
                        tokens = true;
                        continue;
                }
                if (!v) {
                        fprintf(stderr,
                                "usage: bench_kerfd [--seconds S] [--runs N] [--threads "
                                "T] [--records N] [--pending PCT] [--tokens [--base KERFD]]\n");
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
                else if (!strcmp(a, "--base"))
                        base = v;
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
        kdb_init("bench_kerfd");
        double load1 = 0;
        FILE *la = fopen("/proc/loadavg", "r");
        if (la) {
                if (fscanf(la, "%lf", &load1) != 1)
                        load1 = -1;
                fclose(la);
        }
        printf("== bench_kerfd: %ld CPUs, load average %.2f at start\n",
               sysconf(_SC_NPROCESSORS_ONLN), load1);
        if (tokens) {
                bench_tokens(base);
        } else {
                bench_live();
                bench_recovery(pending_pct, M_RECOV);
                if (pending_pct != 100)
                        bench_recovery(100, M_RECOV_ALL);
        }
        printf("== median of %d runs\n", runs);
        for (int m = 0; m < M_COUNT; m++)
                if (nvals[m])
                        printf(m == M_RECOV || m == M_RECOV_ALL ? "%-30s %.3f\n" : "%-30s %.0f\n",
                               mname[m], median(m));
        curl_global_cleanup();
        return 0;
}
