/* SPDX-License-Identifier: Apache-2.0 */
/* fixture.c - the report directory the report tests check (fixture.h) */
#include <errno.h>
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

json_t *fx_measure(const char *name, double value, const char *unit, const char *op,
                   double threshold)
{
        int pass = !strcmp(op, "<=")   ? value <= threshold
                   : !strcmp(op, ">=") ? value >= threshold
                                       : value == threshold;
        return json_pack("{s:s, s:f, s:s, s:s, s:f, s:b, s:s}", "name", name, "value", value,
                         "unit", unit, "op", op, "threshold", threshold, "pass", pass, "note", "");
}

json_t *fx_record(const char *id, const char *route, const char *title, json_t *measures,
                  json_t *skipped)
{
        const char *verdict = "PASS";
        size_t i;
        json_t *m;
        int64_t t = now_ms();

        if (!skipped)
                skipped = json_array();
        json_array_foreach(measures, i, m) if (!json_is_true(json_object_get(m, "pass"))) verdict =
            "FAIL";
        if (!json_array_size(measures) && json_array_size(skipped) && !strcmp(verdict, "PASS"))
                verdict = "SKIPPED";
        return json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:[], s:[], s:[], s:[], s:o, s:o, "
                         "s:{s:s, s:s, s:i}, s:{s:s, s:s, s:s, s:s, s:s, s:b}, s:s}",
                         "id", id, "title", title, "route", route, "owner", "fixture", "start_ms",
                         (json_int_t)(t - 5000), "end_ms", (json_int_t)t, "input", "logs",
                         "metrics", "audit", "measures", measures, "skipped", skipped, "handling",
                         "kerf", "released the unit", "operator", "nothing", "commands", 0, "env",
                         "device", "NVIDIA H200", "gpu_uuid", "GPU-sim-0", "driver", "550.54.15",
                         "cuda", "12.4", "kerf", "0.1.0", "simulated", 1, "verdict", verdict);
}

static void write_file(const char *dir, const char *rel, const char *text)
{
        char path[1024];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

/* The audit seqs of records about `object`. */
static json_t *seqs_of(kd *k, const char *object)
{
        long s;
        json_t *a = kd_call(k, "GET", "/v1/audit?limit=1000", NULL, NULL, &s, NULL), *it;
        json_t *out = json_array();
        size_t i;

        assert_int_equal(s, 200);
        json_array_foreach(json_object_get(a, "items"), i, it)
        {
                const char *o = json_string_value(json_object_get(it, "object"));
                if (o && !strcmp(o, object))
                        json_array_append(out, json_object_get(it, "seq"));
        }
        json_decref(a);
        assert_true(json_array_size(out) > 0);
        return out;
}

static json_t *line(double x0, double dx, double y0, double dy, int n)
{
        json_t *a = json_array();
        for (int i = 0; i < n; i++)
                json_array_append_new(a, json_pack("[f, f]", x0 + dx * i, y0 + dy * i * i));
        return a;
}

void fx_build(fx *x)
{
        char object[64], rel[600], text[512];
        json_t *rec, *ms, *sk;
        kerf_client_opts co = {0};
        poc_ctx p;

        memset(x, 0, sizeof(*x));
        kd_setup(&x->k, NULL);
        for (int i = 0; i < 2; i++) {
                x->task[i] = kd_submit(&x->k,
                                       i ? "{\"tenant\":\"bob\",\"command\":[\"/bin/false\"]}"
                                         : "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"]}",
                                       NULL);
                json_decref(kd_wait_task(&x->k, x->task[i], NULL, 10000));
        }
        snprintf(x->dir, sizeof(x->dir), "/tmp/kerf-poc-report-XXXXXX");
        assert_non_null(mkdtemp(x->dir));
        snprintf(rel, sizeof(rel), "%s/logs", x->dir);
        assert_int_equal(mkdir(rel, 0755), 0);
        snprintf(rel, sizeof(rel), "%s/metrics", x->dir);
        assert_int_equal(mkdir(rel, 0755), 0);

        x->records = json_array();
        /* SW1: passes; cites task 0's audit records, its logs and a metrics snapshot */
        ms = json_array();
        json_array_append_new(
            ms, fx_measure("probe 4GiB: memory total vs request", 0.4, "%", "<=", 1.0));
        json_array_append_new(
            ms, fx_measure("probe 4GiB: achieved compute share vs 30 %", 3.5, "%", "<=", 5.0));
        rec = fx_record("SW1", "software", "request vs reality", ms, NULL);
        snprintf(object, sizeof(object), "task:%llu", x->task[0]);
        json_object_set_new(rec, "audit", seqs_of(&x->k, object));
        snprintf(rel, sizeof(rel), "logs/task-%llu.out", x->task[0]);
        snprintf(text, sizeof(text),
                 "{\"event\":\"start\",\"mode\":\"probe\"}\n{\"event\":\"result\",\"mem_total\":"
                 "4294967296}\n");
        write_file(x->dir, rel, text);
        json_array_append_new(json_object_get(rec, "logs"),
                              json_pack("{s:I, s:s, s:s, s:s}", "task", (json_int_t)x->task[0],
                                        "stdout", rel, "stderr", "logs/empty.err", "kerfd_stdout",
                                        "/var/lib/kerf/logs/1.out"));
        write_file(x->dir, "logs/empty.err", "");
        write_file(x->dir, "metrics/SW1-1.prom", "kerf_task_memory_bytes{task=\"1\"} 4294967296\n");
        json_array_append_new(json_object_get(rec, "metrics"),
                              json_pack("{s:I, s:s, s:s}", "time_ms", (json_int_t)now_ms(), "label",
                                        "peak", "file", "metrics/SW1-1.prom"));
        json_array_append_new(x->records, rec);

        /* SW2: share over time */
        ms = json_array();
        json_array_append_new(ms, fx_measure("fair share: worst deviation", 4.0, "%", "<=", 10.0));
        rec = fx_record("SW2", "software", "contention", ms, NULL);
        json_object_set_new(rec, "series",
                            json_pack("{s:{s:s, s:s, s:{s:o, s:o}}}", "share", "x", "time (s)", "y",
                                      "compute share (%)", "lines", "poc-a",
                                      line(0, 1, 50, 0.25, 6), "poc-b", line(0, 1, 50, -0.25, 6)));
        snprintf(object, sizeof(object), "task:%llu", x->task[1]);
        json_object_set_new(rec, "audit", seqs_of(&x->k, object));
        json_array_append_new(x->records, rec);

        /* NB: the latency curves of both routes */
        ms = json_array();
        json_array_append_new(ms, fx_measure("p99 under slice vs alone", 12.5, "%", "<=", 20.0));
        json_array_append_new(
            ms, fx_measure("p99 under time-slicing vs alone", 85.0, "%", "<=", 100.0));
        json_array_append_new(ms, fx_measure("p99 under MIG vs alone", 2.25, "%", "<=", 20.0));
        rec = fx_record("NB", "both", "neighbour impact", ms, NULL);
        json_object_set_new(rec, "series",
                            json_pack("{s:{s:s, s:s, s:{s:o, s:o, s:o, s:o}}}", "latency", "x",
                                      "offered load (req/s)", "y", "ms", "lines", "alone p99",
                                      line(10, 10, 5.0, 0.05, 5), "slice p99",
                                      line(10, 10, 5.5, 0.1, 5), "time-slicing p99",
                                      line(10, 10, 9.0, 0.5, 5), "MIG p99",
                                      line(10, 10, 5.1, 0.05, 5)));
        json_array_append_new(x->records, rec);

        /* HW1: nothing measured, a step skipped */
        sk = json_pack("[{s:s, s:s}]", "step", "MIG re-create", "why",
                       "MIG changes are never made on a real GPU");
        json_array_append_new(x->records,
                              fx_record("HW1", "hardware", "unit lifecycle", json_array(), sk));

        /* HW2: a fault timeline; its title carries markup that must stay text */
        ms = json_array();
        json_array_append_new(
            ms, fx_measure("blast radius: tasks hit outside the GPU", 0, "count", "==", 0));
        rec = fx_record("HW2", "hardware", "device fault <script>alert(1)</script>", ms, NULL);
        json_object_set_new(rec, "timeline",
                            json_pack("[{s:I, s:s, s:{s:[i,i], s:[s]}}, {s:I, s:s}]", "t_ms",
                                      json_integer_value(json_object_get(rec, "start_ms")) + 1200,
                                      "what", "XID 79 on GPU 0", "detail", "blast_radius", 12, 13,
                                      "units", "mig-1", "t_ms",
                                      json_integer_value(json_object_get(rec, "start_ms")) + 3400,
                                      "what", "GPU 0 reset, tasks requeued"));
        json_array_append_new(x->records, rec);

        memset(&p, 0, sizeof(p));
        p.o.owner = "fixture";
        p.o.route = "both";
        p.o.seed = 7;
        co.socket = x->k.sock;
        assert_int_equal(kerf_client_new(&co, &p.client), 0);
        p.env.simulated = true;
        p.env.shim = true;
        snprintf(p.env.device, sizeof(p.env.device), "NVIDIA H200");
        snprintf(p.env.driver, sizeof(p.env.driver), "550.54.15");
        snprintf(p.env.cuda, sizeof(p.env.cuda), "12.4");
        snprintf(p.env.kerf, sizeof(p.env.kerf), "0.1.0");
        p.env.n_gpus = 8;
        snprintf(p.out, sizeof(p.out), "%s", x->dir);
        p.records = json_deep_copy(x->records);
        p.t0_ms = now_ms() - 60000;
        x->write_rc = poc_report_write(&p, x->write_err, sizeof(x->write_err));
        json_decref(p.records);
        kerf_client_free(p.client);
}

void fx_fini(fx *x)
{
        char cmd[600];

        kd_stop(&x->k);
        kd_cleanup(&x->k);
        if (x->dir[0] && getenv("KERF_POC_REPORT_KEEP")) {
                fprintf(stderr, "fixture: kept %s\n", x->dir);
        } else if (x->dir[0]) {
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", x->dir);
                if (system(cmd) != 0)
                        fprintf(stderr, "fixture: could not remove %s\n", x->dir);
        }
        json_decref(x->records);
}

void fx_copy(const char *dir, char *ret, size_t len)
{
        char cmd[1200];

        snprintf(ret, len, "/tmp/kerf-poc-tamper-XXXXXX");
        assert_non_null(mkdtemp(ret));
        snprintf(cmd, sizeof(cmd), "cp -a '%s'/. '%s'/", dir, ret);
        assert_int_equal(system(cmd), 0);
}

int fx_verify(const char *dir, char **ret_out)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int rc;

        assert_non_null(f);
        rc = poc_verify_dir(dir, f);
        fclose(f);
        *ret_out = buf;
        return rc;
}

json_t *fx_load(const char *dir)
{
        char path[1024];
        json_t *j;

        snprintf(path, sizeof(path), "%s/report.json", dir);
        j = json_load_file(path, 0, NULL);
        assert_non_null(j);
        return j;
}

void fx_store(const char *dir, json_t *report)
{
        char path[1024];

        snprintf(path, sizeof(path), "%s/report.json", dir);
        assert_int_equal(json_dump_file(report, path, JSON_INDENT(1) | JSON_PRESERVE_ORDER), 0);
}
