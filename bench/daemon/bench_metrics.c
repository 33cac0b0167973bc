/* SPDX-License-Identifier: Apache-2.0 */
/* bench_metrics.c - task GET latency of kerfd with 100k pending tasks, without and with
 * concurrent /metrics scrapers (issue 8 D3; docs/PERFORMANCE.md d2) */
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

static unsigned n_tasks = 100000, getters = 2, scrapers = 2, scrape_ms;
static double seconds = 5.0;
static kdb_kerfd kd;

/* N pending tasks: one through the API (a true record), N-1 clones of it in the store. */
static uint64_t fill(uint64_t *ret_lo)
{
        kdb_conn c;
        kerf_store *s = NULL;
        kerf_store_task tpl;
        char err[256];
        uint64_t id;

        kdb_conn_init(&c, &kd, false, NULL);
        if (kdb_call(&c, "POST", "/v1/tasks", "{\"tenant\":\"q\",\"command\":[\"/bin/true\"]}") !=
            201)
                kdb_die("submit: %s", c.body ? c.body : "no answer");
        id = kdb_json_u64(&c, "id");
        kdb_conn_fini(&c);
        kdb_kill9(&kd);
        if (kerf_store_open(kd.db, NULL, &s, err, sizeof(err)) < 0)
                kdb_die("open %s: %s", kd.db, err);
        kerf_store_task_init(&tpl);
        if (kerf_store_task_get(s, id, &tpl) < 0)
                kdb_die("template record missing");
        for (uint64_t i = id + 1; i < id + n_tasks;) {
                if (kerf_store_begin(s) < 0)
                        kdb_die("begin: %s", kerf_store_errmsg(s));
                for (unsigned k = 0; k < 10000 && i < id + n_tasks; k++, i++) {
                        kerf_store_task t = tpl;
                        t.id = i;
                        snprintf(t.name, sizeof(t.name), "p-%llu", (unsigned long long)i);
                        if (kerf_store_task_insert(s, &t) < 0)
                                kdb_die("insert: %s", kerf_store_errmsg(s));
                }
                if (kerf_store_commit(s) < 0)
                        kdb_die("commit: %s", kerf_store_errmsg(s));
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
        kdb_conn c;
        char path[64];
        kdb_conn_init(&c, &kd, false, NULL);
        kdb_call(&c, "GET", "/v1/health", NULL);
        while (!*j->go)
                kdb_sleep_ms(1);
        while (!*j->stop) {
                uint64_t id = j->lo + (uint64_t)rand_r(&j->seed) % (j->hi - j->lo + 1);
                double t0 = kdb_now_s();
                long st;
                if (j->scrape) {
                        st = kdb_call(&c, "GET", "/metrics", NULL);
                        j->bytes += c.len;
                } else {
                        snprintf(path, sizeof(path), "/v1/tasks/%llu", (unsigned long long)id);
                        st = kdb_call(&c, "GET", path, NULL);
                }
                if (st != 200) {
                        j->bad++;
                        continue;
                }
                if (j->n == j->cap) {
                        j->cap = j->cap ? j->cap * 2 : 65536;
                        j->lat = realloc(j->lat, j->cap * sizeof(double));
                        if (!j->lat)
                                kdb_die("out of memory");
                }
                j->lat[j->n++] = kdb_now_s() - t0;
                if (j->scrape && scrape_ms)
                        kdb_sleep_ms(scrape_ms);
        }
        kdb_conn_fini(&c);
        return NULL;
}

typedef struct phase {
        double rate, p50, p99, scrape_rate, scrape_p50, scrape_mb;
} phase;

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
                        kdb_die("pthread_create");
        }
        kdb_sleep_ms(200);
        double t0 = kdb_now_s();
        go = 1;
        while (kdb_now_s() - t0 < seconds)
                kdb_sleep_ms(10);
        stop = 1;
        for (unsigned i = 0; i < n; i++)
                pthread_join(th[i], NULL);
        double el = kdb_now_s() - t0;
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
        qsort(all, na, sizeof(double), kdb_cmp_double);
        qsort(sc, ns, sizeof(double), kdb_cmp_double);
        ph.rate = (double)na / el;
        ph.p50 = kdb_pct(all, na, 0.50) * 1000;
        ph.p99 = kdb_pct(all, na, 0.99) * 1000;
        ph.scrape_rate = (double)ns / el;
        ph.scrape_p50 = kdb_pct(sc, ns, 0.50) * 1000;
        ph.scrape_mb = ns ? (double)bytes / (double)ns / 1e6 : 0;
        free(all);
        free(sc);
        return ph;
}

int main(int argc, char **argv)
{
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
                        kdb_die("unknown flag %s", argv[i]);
        }
        if (n_tasks < 2 || n_tasks > 1000000 || getters < 1 || getters > 32 || scrapers > 32 ||
            seconds < 0.5 || seconds > 120)
                kdb_die("a flag is out of range");
        kdb_init("bench_metrics");
        kdb_setup(&kd, false,
                  "limits:\n  max_tasks: 1000000\ntenants:\n  - name: q\n" KDB_NO_QUOTA);
        printf("== bench_metrics: %u pending tasks, %u GET threads, %u scrapers (pause %u ms), "
               "%.0f s per phase, %ld CPUs\n",
               n_tasks, getters, scrapers, scrape_ms, seconds, sysconf(_SC_NPROCESSORS_ONLN));
        kdb_start(&kd, NULL, 20, 120.0);
        hi = fill(&lo);
        double t0 = kdb_now_s();
        kdb_start(&kd, NULL, 20, 120.0);
        printf("  (store filled, kerfd recovered %u tasks in %.1f s)\n", n_tasks, kdb_now_s() - t0);
        phase a = run_phase(lo, hi, 0), b = run_phase(lo, hi, scrapers);
        printf("%-34s %10.0f req/s  p50 %7.3f ms  p99 %7.3f ms\n", "task GETs, no scrape", a.rate,
               a.p50, a.p99);
        printf("%-34s %10.0f req/s  p50 %7.3f ms  p99 %7.3f ms\n", "task GETs, scrapers running",
               b.rate, b.p50, b.p99);
        printf("%-34s %10.2f (req/s), p99 x%.1f\n", "ratio scraping / no scrape",
               a.rate > 0 ? b.rate / a.rate : 0, a.p99 > 0 ? b.p99 / a.p99 : 0);
        printf("%-34s %10.1f scrapes/s  p50 %7.1f ms  %.3f MB each\n", "/metrics", b.scrape_rate,
               b.scrape_p50, b.scrape_mb);
        kdb_cleanup(&kd);
        curl_global_cleanup();
        return 0;
}
