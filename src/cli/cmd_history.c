/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_history.c - kerf history: ended tasks, as sacct shows jobs: when each was submitted,
 * waited, ran and ended, how, on which route, and the GPU-hours its runs were granted and used
 * (GET /v1/tasks per ended state, GET /v1/cost/runs; docs/CLI.md "kerf history"). One row
 * object per task feeds the table, CSV and JSON outputs alike. */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "kerf/task_state.h"
#include "kerf/units.h"
#include "u64map.h"

#define HIST_PAGE      1000
#define HIST_MAX_TASKS 1000000 /* a bound on what one command pulls from kerfd */

typedef struct hist_opts {
        int64_t since_ms, until_ms;
        const char *tenant, *queue, *route;
        bool state[KERF_TASK_STATE_COUNT]; /* the end states asked */
        long long limit;
        enum { OUT_TABLE, OUT_CSV, OUT_JSON } out;
        bool no_headers;
} hist_opts;

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *iso_ms(int64_t ms, char *b, size_t n)
{
        time_t s = (time_t)(ms / 1000);
        struct tm tm;
        if (ms <= 0 || !gmtime_r(&s, &tm))
                return "";
        strftime(b, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
        return b;
}

/* A span with the one duration formatter (docs/UNITS.md: "1h30m", "2d", "0s") */
static const char *span(int64_t ms, char *b, size_t n)
{
        return ms < 0 ? "" : kerf_format_duration((uint64_t)(ms / 1000), b, n);
}

static bool name_ok(const char *flag, const char *v)
{
        if (strpbrk(v, "&?=#% ")) {
                cli_err("history: --%s: '%s' contains characters a name cannot have", flag, v);
                return false;
        }
        return true;
}

static int parse(cli *c, int argc, char **argv, hist_opts *o)
{
        static const struct option lo[] = {
            {"since", required_argument, 0, 'S'},  {"until", required_argument, 0, 'U'},
            {"tenant", required_argument, 0, 't'}, {"queue", required_argument, 0, 'q'},
            {"route", required_argument, 0, 'r'},  {"state", required_argument, 0, 's'},
            {"limit", required_argument, 0, 'n'},  {"output", required_argument, 0, 'o'},
            {"json", no_argument, 0, 'j'},         {"no-headers", no_argument, 0, 'H'},
            {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
        int64_t now = now_ms();
        int opt;
        bool any_state = false;

        o->since_ms = now - 7 * 86400000LL;
        o->until_ms = now;
        o->limit = 1000;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:hjo:n:", lo, NULL)) != -1) {
                switch (opt) {
                case 'S':
                case 'U':
                        if (cli_parse_time(optarg, now, opt == 'S' ? &o->since_ms : &o->until_ms)) {
                                cli_err("history: --%s: '%s' is not a time (2026-12-01, "
                                        "2026-12-01T15:00Z, now, or back from now: 90m, 24h, 7d)",
                                        opt == 'S' ? "since" : "until", optarg);
                                return KERF_EXIT_USAGE;
                        }
                        break;
                case 't':
                case 'q':
                        if (!name_ok(opt == 't' ? "tenant" : "queue", optarg))
                                return KERF_EXIT_USAGE;
                        *(opt == 't' ? &o->tenant : &o->queue) = optarg;
                        break;
                case 'r':
                        o->route = optarg;
                        break;
                case 's': {
                        char buf[128], *save = NULL;
                        snprintf(buf, sizeof(buf), "%s", optarg);
                        for (char *w = strtok_r(buf, ",", &save); w;
                             w = strtok_r(NULL, ",", &save)) {
                                int k = kerf_task_state_parse(w);
                                if (k < 0 || !kerf_task_state_ended(k)) {
                                        cli_err("history: --state: '%s' is not an end state: "
                                                "%s, %s or %s (comma-separated)",
                                                w, kerf_task_state_name(KERF_TASK_SUCCEEDED),
                                                kerf_task_state_name(KERF_TASK_FAILED),
                                                kerf_task_state_name(KERF_TASK_CANCELLED));
                                        return KERF_EXIT_USAGE;
                                }
                                o->state[k] = any_state = true;
                        }
                        break;
                }
                case 'n': {
                        char *end;
                        o->limit = strtoll(optarg, &end, 10);
                        if (*end || end == optarg || o->limit < 1 || o->limit > HIST_MAX_TASKS) {
                                cli_err("history: --limit: '%s' is not an integer 1..%d", optarg,
                                        HIST_MAX_TASKS);
                                return KERF_EXIT_USAGE;
                        }
                        break;
                }
                case 'o':
                        if (!strcmp(optarg, "table"))
                                o->out = OUT_TABLE;
                        else if (!strcmp(optarg, "csv"))
                                o->out = OUT_CSV;
                        else if (!strcmp(optarg, "json"))
                                o->out = OUT_JSON;
                        else {
                                cli_err("history: -o: '%s': table, csv or json", optarg);
                                return KERF_EXIT_USAGE;
                        }
                        break;
                case 'j':
                        o->out = OUT_JSON;
                        break;
                case 'H':
                        o->no_headers = true;
                        break;
                case 'h':
                        cli_usage(stdout, argv[0]);
                        return -1;
                default:
                        return cli_bad_flag("history", opt, argv, lo);
                }
        }
        if (optind < argc) {
                cli_err("history: unexpected argument '%s'", argv[optind]);
                return KERF_EXIT_USAGE;
        }
        if (o->until_ms <= o->since_ms) {
                cli_err("history: --until must be after --since");
                return KERF_EXIT_USAGE;
        }
        if (!any_state)
                for (int k = 0; k < KERF_TASK_STATE_COUNT; k++)
                        o->state[k] = kerf_task_state_ended(k);
        if (c->json)
                o->out = OUT_JSON;
        return 0;
}

/* Every item of a paged list (`{"items", "next"}`) at `base` into `into`, up to `cap`. */
static int fetch_all(cli *c, const char *base, json_t *into, size_t cap)
{
        char path[768], next[64] = "";
        for (;;) {
                snprintf(path, sizeof(path), "%s%climit=%d%s%s", base,
                         strchr(base, '?') ? '&' : '?', HIST_PAGE, *next ? "&after=" : "", next);
                json_t *j = NULL;
                int ex = cli_call(c, "GET", path, NULL, &j);
                if (ex)
                        return ex;
                json_array_extend(into, json_object_get(j, "items"));
                json_t *nx = json_object_get(j, "next");
                if (json_is_integer(nx))
                        snprintf(next, sizeof(next), "%lld", (long long)json_integer_value(nx));
                else if (json_is_string(nx) && strlen(json_string_value(nx)) < 60)
                        snprintf(next, sizeof(next), "%s", json_string_value(nx));
                else
                        next[0] = '\0';
                json_decref(j);
                if (!*next || json_array_size(into) >= cap)
                        return 0;
        }
}

static int64_t geti(const json_t *o, const char *k)
{
        json_t *v = json_object_get(o, k);
        return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

/* One row per ended task in the period, with its runs' GPU-hours. */
static int collect(cli *c, const hist_opts *o, json_t *rows)
{
        json_t *tasks = json_array(), *runs = json_array();
        char base[512];
        int ex = 0;
        for (int k = 0; k < KERF_TASK_STATE_COUNT && !ex; k++) {
                if (!o->state[k])
                        continue;
                int len =
                    snprintf(base, sizeof(base), "/v1/tasks?state=%s", kerf_task_state_name(k));
                if (o->tenant)
                        len += snprintf(base + len, sizeof(base) - (size_t)len, "&tenant=%.100s",
                                        o->tenant);
                if (o->queue)
                        snprintf(base + len, sizeof(base) - (size_t)len, "&queue=%.100s", o->queue);
                ex = fetch_all(c, base, tasks, HIST_MAX_TASKS);
        }
        if (!ex)
                ex = fetch_all(c, "/v1/cost/runs", runs, 4 * (size_t)HIST_MAX_TASKS);
        if (ex)
                goto out;
        size_t i, r;
        json_t *t, *run;
        /* each task's runs, found in one pass over the runs (ids are > 0: key 0 is the map's) */
        kerf_u64map by_task;
        json_t *lists = json_array(); /* owns the per-task arrays */
        kerf_u64map_init(&by_task);
        json_array_foreach(runs, r, run)
        {
                int64_t id = geti(run, "task");
                json_t *l = id > 0 ? kerf_u64map_get(&by_task, (uint64_t)id) : NULL;
                if (id <= 0)
                        continue;
                if (!l && ((l = json_array()) == NULL || json_array_append_new(lists, l) < 0 ||
                           kerf_u64map_put(&by_task, (uint64_t)id, l) < 0)) {
                        cli_err("history: out of memory");
                        ex = KERF_EXIT_REFUSED;
                        goto out_map;
                }
                json_array_append(l, run);
        }
        json_array_foreach(tasks, i, t)
        {
                int64_t ended = geti(t, "ended_ms"), started = geti(t, "started_ms");
                int64_t submitted = geti(t, "submitted_ms"), wait = geti(t, "queue_wait_ms");
                const char *route = json_string_value(json_object_get(t, "route"));
                if (ended < o->since_ms || ended >= o->until_ms)
                        continue;
                if (o->tenant && strcmp(o->tenant, cli_str(t, "tenant")))
                        continue;
                if (o->route && (!route || strcmp(o->route, route)))
                        continue;
                double granted = 0, used = 0;
                bool measured = true;
                unsigned nruns = 0;
                json_t *mine = kerf_u64map_get(&by_task, (uint64_t)geti(t, "id"));
                json_array_foreach(mine, r, run)
                {
                        int64_t a = geti(run, "started_ms"), b = geti(run, "ended_ms");
                        json_t *un = json_object_get(run, "used_ns");
                        if (b < 0)
                                b = ended;
                        nruns++;
                        granted += json_number_value(json_object_get(run, "fraction")) *
                                   (double)(b > a ? b - a : 0) / 3.6e6;
                        if (json_is_integer(un))
                                used += (double)json_integer_value(un) / 3.6e12;
                        else
                                measured = false;
                }
                json_t *sig = json_object_get(t, "signal"), *code = json_object_get(t, "exit_code");
                json_t *row = json_pack(
                    "{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:O?, s:I, s:I, s:I, s:I, "
                    "s:I, "
                    "s:I, s:f, s:o}",
                    "id", json_object_get(t, "id"), "name", json_object_get(t, "name"), "tenant",
                    json_object_get(t, "tenant"), "queue", json_object_get(t, "queue"), "workload",
                    json_object_get(t, "workload"), "state", json_object_get(t, "state"),
                    "end_reason", json_object_get(t, "end_reason"), "route",
                    json_object_get(t, "route"), "exit_code", code, "submitted_ms",
                    (json_int_t)submitted, "started_ms", (json_int_t)(started > 0 ? started : 0),
                    "ended_ms", (json_int_t)ended, "queue_wait_ms",
                    (json_int_t)(wait >= 0 ? wait : 0), "elapsed_ms",
                    (json_int_t)(started > 0 && ended >= started ? ended - started : 0), "runs",
                    (json_int_t)nruns, "granted_gpu_hours", granted, "used_gpu_hours",
                    measured && nruns ? json_real(used) : json_null());
                if (!row) {
                        cli_err("history: out of memory");
                        ex = KERF_EXIT_REFUSED;
                        goto out_map;
                }
                if (json_is_integer(sig) && json_integer_value(sig) > 0)
                        json_object_set(row, "signal", sig);
                json_array_append_new(rows, row);
                if ((long long)json_array_size(rows) >= o->limit)
                        break;
        }
out_map:
        kerf_u64map_fini(&by_task);
        json_decref(lists);
out:
        json_decref(tasks);
        json_decref(runs);
        return ex;
}

static int by_ended(const void *a, const void *b)
{
        int64_t x = geti(*(json_t *const *)a, "ended_ms"),
                y = geti(*(json_t *const *)b, "ended_ms");
        return x < y ? -1 : x > y;
}

/* RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled */
static void csv_field(const char *s, bool last)
{
        if (strpbrk(s, ",\"\r\n")) {
                putchar('"');
                for (; *s; s++) {
                        if (*s == '"')
                                putchar('"');
                        putchar(*s);
                }
                putchar('"');
        } else {
                fputs(s, stdout);
        }
        putchar(last ? '\n' : ',');
}

int cli_history(cli *c, int argc, char **argv)
{
        hist_opts o = {0};
        int ex = parse(c, argc, argv, &o);
        if (ex)
                return ex < 0 ? 0 : ex;
        json_t *rows = json_array();
        if ((ex = collect(c, &o, rows))) {
                json_decref(rows);
                return ex;
        }
        /* oldest end first, as sacct */
        size_t n = json_array_size(rows);
        json_t **v = calloc(n ? n : 1, sizeof(*v));
        for (size_t i = 0; v && i < n; i++)
                v[i] = json_incref(json_array_get(rows, i));
        if (v)
                qsort(v, n, sizeof(*v), by_ended);
        json_array_clear(rows);
        for (size_t i = 0; v && i < n; i++)
                json_array_append_new(rows, v[i]);
        free(v);

        /* totals per route: tasks, granted and used GPU-hours (used null once one is unmeasured) */
        json_t *tot = json_object();
        size_t i;
        json_t *row;
        json_array_foreach(rows, i, row)
        {
                const char *rt = json_string_value(json_object_get(row, "route"));
                json_t *t = json_object_get(tot, rt ? rt : "none");
                if (!t) {
                        t = json_pack("{s:i, s:f, s:f}", "tasks", 0, "granted_gpu_hours", 0.0,
                                      "used_gpu_hours", 0.0);
                        json_object_set_new(tot, rt ? rt : "none", t);
                }
                json_t *u = json_object_get(row, "used_gpu_hours"),
                       *tu = json_object_get(t, "used_gpu_hours");
                json_object_set_new(
                    t, "tasks", json_integer(json_integer_value(json_object_get(t, "tasks")) + 1));
                json_object_set_new(
                    t, "granted_gpu_hours",
                    json_real(json_real_value(json_object_get(t, "granted_gpu_hours")) +
                              json_real_value(json_object_get(row, "granted_gpu_hours"))));
                if (json_is_real(u) && json_is_real(tu))
                        json_object_set_new(t, "used_gpu_hours",
                                            json_real(json_real_value(tu) + json_real_value(u)));
                else
                        json_object_set_new(t, "used_gpu_hours", json_null());
        }

        if (o.out == OUT_JSON) {
                json_t *all = json_pack("{s:I, s:I, s:o, s:o}", "since_ms", (json_int_t)o.since_ms,
                                        "until_ms", (json_int_t)o.until_ms, "items", rows,
                                        "totals_by_route", tot);
                cli_print_json(all);
                json_decref(all);
                return 0;
        }
        static const char *const h[] = {"ID",      "NAME",  "TENANT", "QUEUE",  "STATE",
                                        "END",     "EXIT",  "ROUTE",  "SUBMIT", "WAIT",
                                        "ELAPSED", "GPU_H", "USED_H"};
        enum { NC = sizeof(h) / sizeof(h[0]) };
        cli_table *t = o.out == OUT_TABLE ? cli_table_new(h, NC) : NULL;
        if (o.out == OUT_CSV && !o.no_headers)
                for (int k = 0; k < NC; k++)
                        csv_field(h[k], k == NC - 1);
        json_array_foreach(rows, i, row)
        {
                char sub[32], w[KERF_UNITS_BUF], el[KERF_UNITS_BUF], exit_s[24], g[32], u[32];
                json_t *code = json_object_get(row, "exit_code"),
                       *sig = json_object_get(row, "signal");
                json_t *uh = json_object_get(row, "used_gpu_hours");
                if (json_is_integer(sig))
                        snprintf(exit_s, sizeof(exit_s), "sig%lld",
                                 (long long)json_integer_value(sig));
                else if (json_is_integer(code))
                        snprintf(exit_s, sizeof(exit_s), "%lld",
                                 (long long)json_integer_value(code));
                else
                        snprintf(exit_s, sizeof(exit_s), "-");
                snprintf(g, sizeof(g), "%.4f",
                         json_real_value(json_object_get(row, "granted_gpu_hours")));
                if (json_is_real(uh))
                        snprintf(u, sizeof(u), "%.4f", json_real_value(uh));
                else
                        snprintf(u, sizeof(u), "-");
                const char *cells[NC] = {cli_num(row, "id"),
                                         cli_str(row, "name"),
                                         cli_str(row, "tenant"),
                                         cli_str(row, "queue"),
                                         cli_str(row, "state"),
                                         cli_str(row, "end_reason"),
                                         exit_s,
                                         cli_str(row, "route"),
                                         iso_ms(geti(row, "submitted_ms"), sub, sizeof(sub)),
                                         span(geti(row, "queue_wait_ms"), w, sizeof(w)),
                                         span(geti(row, "elapsed_ms"), el, sizeof(el)),
                                         g,
                                         u};
                if (t)
                        cli_table_add(t, cells[0], cells[1], cells[2], cells[3], cells[4], cells[5],
                                      cells[6], cells[7], cells[8], cells[9], cells[10], cells[11],
                                      cells[12]);
                else
                        for (int k = 0; k < NC; k++)
                                csv_field(cells[k], k == NC - 1);
        }
        if (t) {
                if (o.no_headers)
                        cli_table_print_rows(t, stdout);
                else
                        cli_table_print(t, stdout);
                cli_table_free(t);
                /* one summary line per route, as sacct's totals */
                const char *rt;
                json_t *tv;
                json_object_foreach(tot, rt, tv)
                {
                        json_t *tu = json_object_get(tv, "used_gpu_hours");
                        printf("total %s: %lld tasks, %.4f GPU-hours granted, ", cli_safe(rt),
                               (long long)json_integer_value(json_object_get(tv, "tasks")),
                               json_real_value(json_object_get(tv, "granted_gpu_hours")));
                        if (json_is_real(tu))
                                printf("%.4f used\n", json_real_value(tu));
                        else
                                printf("used not measured on every run\n");
                }
        }
        json_decref(rows);
        json_decref(tot);
        return 0;
}
