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
 * the median per binary, and the ratio this/base. With --starting 1 also ended/s: the submits
 * divided by the time from the first submit until the last submitted task has ended (the
 * starts' throughput, which submits answered before their start do not show).
 *
 * usage: bench_submit [--submits N] [--running R] [--rounds K] [--starting 0|1|2] [--base KERFD]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kdbench.h"

#define MAX_ROUNDS 9

static unsigned n_submits = 2000, n_running = 16, rounds = 3;
/* --starting 1: the submits are tasks that start (and end) at once; 2: the running tasks hold
 * every GPU whole and the submits ask for a whole GPU (queued, tried by every scheduler step) */
static int starting;
static kdb_conn g_conn;               /* to the running kerfd (g_conn.h NULL: none) */
static unsigned long long g_ids[256]; /* and its running tasks, cancelled before it stops */
static unsigned g_n;

static long call(const char *method, const char *path, const char *body)
{
        return kdb_call(&g_conn, method, path, body);
}

static void cancel_running(void)
{
        char path[96];
        for (unsigned i = 0; g_conn.h && i < g_n; i++) {
                snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", g_ids[i]);
                call("POST", path, "{\"grace_s\":0}");
        }
        if (g_n)
                usleep(1500 * 1000); /* reaped before kerfd stops: no task outlives the bench */
        g_n = 0;
}

typedef struct result {
        double p50, p99, max, rate, ended; /* ended: tasks ended per second (--starting 1) */
} result;

static result one_run(const char *bin)
{
        char path[96];
        double *lat = calloc(n_submits, sizeof(double)), t0;
        unsigned long long last = 0;
        kdb_kerfd kd;
        result r = {0};

        if (!lat)
                kdb_die("out of memory");
        kdb_setup(&kd, false,
                  "limits:\n  grace_s: 1\n  max_tasks: 200000\n  submit_rate: 0\n"
                  "tenants:\n  - name: alice\n    max_pending: 10000000\n"
                  "  - name: q\n    max_pending: 10000000\n" KDB_NO_QUOTA);
        kdb_start(&kd, bin, 2, 30.0);
        kdb_conn_init(&g_conn, &kd, false, NULL);
        /* tasks running: the tick has exits to reap, limits and GPUs to poll */
        for (unsigned i = 0; i < n_running && i < 256; i++) {
                if (call("POST", "/v1/tasks",
                         starting == 2
                             ? "{\"tenant\":\"alice\",\"route\":\"whole\","
                               "\"command\":[\"/bin/sleep\",\"600\"]}"
                             : "{\"tenant\":\"alice\",\"memory\":\"1GiB\",\"compute\":5,"
                               "\"route\":\"slice\",\"command\":[\"/bin/sleep\",\"600\"]}") != 201)
                        kdb_die("submit running: %s", g_conn.body);
                g_ids[g_n++] = kdb_json_u64(&g_conn, "id");
        }
        for (unsigned i = 0; i < n_running && i < 256; i++) {
                snprintf(path, sizeof(path), "/v1/tasks/%llu", g_ids[i]);
                for (t0 = kdb_now_s(); call("GET", path, NULL) == 200 &&
                                       !strstr(g_conn.body, "\"state\":\"running\"");
                     usleep(5000))
                        if (kdb_now_s() - t0 > 30)
                                kdb_die("task not running: %s", g_conn.body);
        }
        t0 = kdb_now_s();
        for (unsigned i = 0; i < n_submits; i++) {
                double s = kdb_now_s();
                if (call("POST", "/v1/tasks",
                         starting == 2 ? "{\"tenant\":\"alice\",\"route\":\"whole\","
                                         "\"command\":[\"/bin/true\"]}"
                         : starting    ? "{\"tenant\":\"alice\",\"memory\":\"1GiB\",\"compute\":5,"
                                         "\"route\":\"slice\",\"command\":[\"/bin/true\"]}"
                                       : "{\"tenant\":\"q\",\"command\":[\"/bin/true\"]}") != 201)
                        kdb_die("submit: %s", g_conn.body);
                lat[i] = kdb_now_s() - s;
                last = kdb_json_u64(&g_conn, "id");
        }
        r.rate = n_submits / (kdb_now_s() - t0);
        if (starting == 1) {
                /* started in order: the last one ended, all did */
                snprintf(path, sizeof(path), "/v1/tasks/%llu", last);
                while (call("GET", path, NULL) == 200 &&
                       (strstr(g_conn.body, "\"state\":\"pending\"") ||
                        strstr(g_conn.body, "\"state\":\"starting\"") ||
                        strstr(g_conn.body, "\"state\":\"running\""))) {
                        if (kdb_now_s() - t0 > 600)
                                kdb_die("task %llu not ended after 600 s", last);
                        usleep(2000);
                }
                r.ended = n_submits / (kdb_now_s() - t0);
        }
        qsort(lat, n_submits, sizeof(double), kdb_cmp_double);
        r.p50 = lat[n_submits / 2] * 1e3;
        r.p99 = lat[n_submits * 99 / 100] * 1e3;
        r.max = lat[n_submits - 1] * 1e3;
        cancel_running();
        kdb_conn_fini(&g_conn);
        g_conn.h = NULL;
        kdb_stop(&kd);
        kdb_cleanup(&kd);
        free(lat);
        return r;
}

static double med(double *v, unsigned n)
{
        qsort(v, n, sizeof(double), kdb_cmp_double);
        return v[n / 2];
}

int main(int argc, char **argv)
{
        const char *base = NULL, *bin = getenv("KERFD") ? getenv("KERFD") : KERFD_BIN;
        const char *bins[2];
        double v[2][5][MAX_ROUNDS], m[2][5];
        unsigned nb;

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *x = i + 1 < argc ? argv[i + 1] : NULL;
                if (!x)
                        kdb_die("missing value for %s", a);
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
                        kdb_die("unknown option %s", a);
                i++;
        }
        if (n_submits < 100 || !rounds || rounds > MAX_ROUNDS)
                kdb_die("--submits >= 100, --rounds 1..9");
        kdb_init("bench_submit");
        kdb_at_die(cancel_running);
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
                        v[j][3][k] = r.rate, v[j][4][k] = r.ended;
                        printf("  %-4s round %u: p50 %.3f ms  p99 %.3f ms  max %.3f ms  %.0f "
                               "submits/s  %.1f ended/s\n",
                               j ? "base" : "this", k + 1, r.p50, r.p99, r.max, r.rate, r.ended);
                        fflush(stdout);
                }
        for (unsigned j = 0; j < nb; j++) {
                for (unsigned q = 0; q < 5; q++)
                        m[j][q] = med(v[j][q], rounds);
                printf("%-4s median: p50 %.3f ms  p99 %.3f ms  max %.3f ms  %.0f submits/s  %.1f "
                       "ended/s  (%s)\n",
                       j ? "base" : "this", m[j][0], m[j][1], m[j][2], m[j][3], m[j][4], bins[j]);
        }
        if (nb == 2)
                printf("this/base: p50 %.2fx  p99 %.2fx  submits/s %.2fx%s", m[0][0] / m[1][0],
                       m[0][1] / m[1][1], m[0][3] / m[1][3], starting == 1 ? "" : "\n");
        if (nb == 2 && starting == 1)
                printf("  ended/s %.2fx\n", m[0][4] / m[1][4]);
        return 0;
}
