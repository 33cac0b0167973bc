/* SPDX-License-Identifier: Apache-2.0 */
/* bench_store.c - durable submits/s (task + audit per transaction) and recovery time */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kerf/errno.h"
#include "kerf/store.h"

/* A realistic submit body (~300 bytes). */
static const char *request =
    "{\"name\":\"chat-api\",\"queue\":\"serve\",\"workload\":\"inference\",\"tier\":\"high\","
    "\"memory\":\"16GiB\",\"compute\":30,\"compute_limit\":60,\"priority\":80,"
    "\"command\":[\"python3\",\"serve.py\",\"--port\",\"8080\"],\"env\":{\"MODEL\":"
    "\"llama-3-8b\",\"BATCH\":\"16\"},\"max_runtime_s\":3600}";

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void db_remove(const char *path)
{
        const char *sfx[] = {"", "-wal", "-shm"};
        char p[600];

        for (int i = 0; i < 3; i++) {
                snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
                unlink(p);
        }
}

static int die(const char *what, int r)
{
        fprintf(stderr, "bench_store: %s: %s\n", what, kerf_strerror(r));
        exit(1);
}

static kerf_store *open_db(const char *path, kerf_store_sync sync)
{
        kerf_store_opts o = {.sync = sync};
        kerf_store *s;
        char err[256];
        int r = kerf_store_open(path, &o, &s, err, sizeof(err));

        if (r < 0) {
                fprintf(stderr, "bench_store: %s\n", err);
                exit(1);
        }
        return s;
}

static void submit(kerf_store *s, uint64_t id, bool ended)
{
        kerf_store_task t;
        kerf_store_audit a;
        int r;

        kerf_store_task_init(&t);
        t.id = id;
        snprintf(t.tenant, sizeof(t.tenant), "tenant%llu", (unsigned long long)(id % 10));
        snprintf(t.queue, sizeof(t.queue), "serve");
        snprintf(t.name, sizeof(t.name), "chat-api");
        snprintf(t.state, sizeof(t.state), ended ? "succeeded" : "pending");
        t.request_json = (char *)request;
        t.argv_json = (char *)"[\"python3\",\"serve.py\",\"--port\",\"8080\"]";
        t.env_json = (char *)"{\"MODEL\":\"llama-3-8b\",\"BATCH\":\"16\"}";
        if (ended) {
                t.ended_ms = 1;
                t.exit_code = 0;
                snprintf(t.end_reason, sizeof(t.end_reason), "exit");
        }
        memset(&a, 0, sizeof(a));
        snprintf(a.actor, sizeof(a.actor), "tenant:%s", t.tenant);
        snprintf(a.tenant, sizeof(a.tenant), "%s", t.tenant);
        snprintf(a.action, sizeof(a.action), "task.submit");
        snprintf(a.object, sizeof(a.object), "task:%llu", (unsigned long long)id);
        snprintf(a.result, sizeof(a.result), "ok");
        if ((r = kerf_store_task_insert(s, &t)) < 0)
                die("task insert", r);
        if ((r = kerf_store_audit_append(s, &a)) < 0)
                die("audit append", r);
}

static void tenants(kerf_store *s)
{
        kerf_store_tenant t;
        char name[32];

        for (int i = 0; i < 10; i++) {
                snprintf(name, sizeof(name), "tenant%d", i);
                int r = kerf_store_tenant_init(&t, name);
                if (r < 0 || (r = kerf_store_tenant_upsert(s, &t)) < 0)
                        die("tenant", r);
        }
}

/* n submits, `batch` per transaction (1 = one commit per submit, as kerfd answers each). */
static double submits_per_s(const char *path, kerf_store_sync sync, unsigned batch, unsigned n)
{
        kerf_store *s;
        double t0, dt;
        int r;

        db_remove(path);
        s = open_db(path, sync);
        tenants(s);
        t0 = now_s();
        for (unsigned i = 0; i < n; i += batch) {
                if ((r = kerf_store_begin(s)) < 0)
                        die("begin", r);
                for (unsigned j = 0; j < batch && i + j < n; j++)
                        submit(s, i + j + 1, false);
                if ((r = kerf_store_commit(s)) < 0)
                        die("commit", r);
        }
        dt = now_s() - t0;
        kerf_store_close(s);
        return n / dt;
}

static int count_cb(const kerf_store_task *t, void *ud)
{
        uint64_t *sum = ud;

        *sum += t->id + strlen(t->request_json); /* touch every row */
        return 0;
}

int main(int argc, char **argv)
{
        const char *dir = argc > 1 ? argv[1] : ".";
        unsigned n = argc > 2 ? (unsigned)atoi(argv[2]) : 20000;
        unsigned records = argc > 3 ? (unsigned)atoi(argv[3]) : 100000;
        kerf_store_task_filter unfinished = {.unfinished = true};
        kerf_store_audit_report rep;
        kerf_store_unit *units;
        char path[512], tok[KERF_STORE_TOKEN_LEN], tenant[KERF_NAME_LEN];
        uint64_t sum = 0, id;
        size_t nu;
        double t0, t_open, t_all, t_unf;
        kerf_store *s;
        int r;

        if (argc > 4 || n == 0 || records == 0) {
                fprintf(stderr, "usage: bench_store [DIR [SUBMITS [RECORDS]]]\n");
                return 2;
        }
        snprintf(path, sizeof(path), "%s/bench-store.db", dir);
        printf("# bench_store: dir %s, %u submits, %u records\n", dir, n, records);
        printf("submits_per_s sync=normal batch=1   %10.0f\n",
               submits_per_s(path, KERF_STORE_SYNC_NORMAL, 1, n));
        printf("submits_per_s sync=normal batch=16  %10.0f\n",
               submits_per_s(path, KERF_STORE_SYNC_NORMAL, 16, n));
        printf("submits_per_s sync=full   batch=1   %10.0f\n",
               submits_per_s(path, KERF_STORE_SYNC_FULL, 1, n / 10 ? n / 10 : 1));
        printf("submits_per_s sync=full   batch=16  %10.0f\n",
               submits_per_s(path, KERF_STORE_SYNC_FULL, 16, n));

        /* recovery: `records` tasks (90% finished) with their audit records */
        db_remove(path);
        s = open_db(path, KERF_STORE_SYNC_NORMAL);
        tenants(s);
        for (unsigned i = 0; i < records; i += 1000) {
                if ((r = kerf_store_begin(s)) < 0)
                        die("begin", r);
                for (unsigned j = 0; j < 1000 && i + j < records; j++)
                        submit(s, i + j + 1, (i + j) % 10 != 0);
                if ((r = kerf_store_commit(s)) < 0)
                        die("commit", r);
        }
        if ((r = kerf_store_token_create(s, "tenant1", NULL, 0, &id, tok)) < 0)
                die("token", r);
        kerf_store_close(s);

        t0 = now_s();
        s = open_db(path, KERF_STORE_SYNC_NORMAL);
        t_open = now_s() - t0;
        if ((r = kerf_store_task_foreach(s, NULL, count_cb, &sum)) < 0)
                die("foreach", r);
        if ((r = kerf_store_unit_list(s, 0, &units, &nu)) < 0)
                die("units", r);
        free(units);
        t_all = now_s() - t0;
        t0 = now_s();
        if ((r = kerf_store_task_foreach(s, &unfinished, count_cb, &sum)) < 0)
                die("foreach", r);
        t_unf = now_s() - t0;
        printf("recovery_open_s                     %10.4f\n", t_open);
        printf("recovery_open_load_all_s            %10.4f  (%u tasks)\n", t_all, records);
        printf("recovery_load_unfinished_s          %10.4f  (%u tasks)\n", t_unf, records / 10);

        t0 = now_s();
        for (int i = 0; i < 100000; i++)
                if ((r = kerf_store_token_verify(s, tok, tenant, NULL)) < 0)
                        die("verify", r);
        printf("token_verifies_per_s                %10.0f\n", 100000 / (now_s() - t0));
        t0 = now_s();
        if ((r = kerf_store_audit_verify(s, &rep)) < 0 || !rep.ok)
                die("audit verify", r < 0 ? r : -KERF_ECORRUPT);
        printf("audit_verify_s                      %10.4f  (%llu records)\n", now_s() - t0,
               (unsigned long long)rep.records);
        kerf_store_close(s);
        db_remove(path);
        return sum == 0;
}
