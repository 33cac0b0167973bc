/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_ls.c - kerf ls: tasks with filters (server-side state/queue/tenant, client-side name,
 * route, GPU), sorting, table/wide/json/yaml output, paging hints and --watch; the task
 * selection is shared with kerf cancel (cli_task_fetch, cli_task_match) */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "cli.h"
#include "kerf/task_state.h"

const char *const *cli_state_words(bool live)
{
        static const char *all[KERF_TASK_STATE_COUNT + 2], *unended[KERF_TASK_STATE_COUNT + 2];
        const char **w = live ? unended : all;
        size_t k = 0;
        if (w[0])
                return w;
        for (int s = 0; s < KERF_TASK_STATE_COUNT; s++) {
                if (live && kerf_task_state_ended(s))
                        continue;
                w[k++] = kerf_task_state_name(s);
                if (s == KERF_TASK_RUNNING) /* kerfd lists a suspended task under running */
                        w[k++] = KERF_TASK_SUSPENDED_WORD;
        }
        w[k] = NULL;
        return w;
}

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t geti(const json_t *o, const char *k)
{
        return (int64_t)json_integer_value(json_object_get(o, k));
}

/* Whether `s` is one of the comma-separated words of `list`. */
static bool in_list(const char *list, const char *s)
{
        size_t n = strlen(s);
        for (const char *p = list; p && *p;) {
                const char *e = strchr(p, ',');
                size_t l = e ? (size_t)(e - p) : strlen(p);
                if (l == n && !strncmp(p, s, n))
                        return true;
                p = e ? e + 1 : NULL;
        }
        return false;
}

bool cli_states_ok(const char *verb, const char *list, const char *const *allowed)
{
        char w[64];
        for (const char *p = list;;) {
                const char *e = strchr(p, ',');
                size_t l = e ? (size_t)(e - p) : strlen(p);
                bool ok = false;
                snprintf(w, sizeof(w), "%.*s", (int)(l < 63 ? l : 63), p);
                for (const char *const *a = allowed; *a && l < 63; a++)
                        ok = ok || !strcmp(*a, w);
                if (!ok) {
                        char acc[200] = "";
                        for (const char *const *a = allowed; *a; a++)
                                snprintf(acc + strlen(acc), sizeof(acc) - strlen(acc), "%s%s",
                                         a == allowed ? "" : ", ", *a);
                        cli_err("%s: --state: '%s' is not a state (accepted, comma-separated: %s)",
                                verb, w, acc);
                        return false;
                }
                if (!e)
                        return true;
                p = e + 1;
        }
}

bool cli_task_match(const cli_task_filter *f, const json_t *t)
{
        const char *st = json_string_value(json_object_get(t, "state"));
        if (f->states && st &&
            !(in_list(f->states, st) ||
              (!strcmp(st, KERF_TASK_SUSPENDED_WORD) &&
               in_list(f->states, kerf_task_state_name(KERF_TASK_RUNNING)))))
                return false;
        if (f->name && fnmatch(f->name, cli_str(t, "name"), 0) != 0)
                return false;
        if (f->route && strcmp(cli_str(t, "route"), f->route) != 0)
                return false;
        if (f->gpu >= 0) {
                size_t i;
                json_t *u;
                bool on = false;
                json_array_foreach(json_object_get(t, "units"), i, u) on =
                    on || geti(u, "gpu") == f->gpu;
                if (!on)
                        return false;
        }
        return true;
}

static int id_cmp(const void *a, const void *b)
{
        int64_t x = geti(*(json_t *const *)a, "id"), y = geti(*(json_t *const *)b, "id");
        return x < y ? -1 : x > y;
}

/* One page of GET /v1/tasks for one server-side state (or any: NULL); appends to items. */
static int fetch_page(cli *c, const cli_task_filter *f, const char *state, const char *after,
                      unsigned limit, json_t *items, char **ret_next, int64_t *remaining)
{
        char path[512];
        json_t *j = NULL;
        int len = snprintf(path, sizeof(path), "/v1/tasks?limit=%u", limit);
        if (after)
                len += snprintf(path + len, sizeof(path) - (size_t)len, "&after=%.40s", after);
        if (state)
                len += snprintf(path + len, sizeof(path) - (size_t)len, "&state=%s", state);
        if (f->queue)
                len += snprintf(path + len, sizeof(path) - (size_t)len, "&queue=%.100s", f->queue);
        if (f->tenant)
                snprintf(path + len, sizeof(path) - (size_t)len, "&tenant=%.100s", f->tenant);
        int ex = cli_call(c, "GET", path, NULL, &j);
        if (ex)
                return ex;
        json_array_extend(items, json_object_get(j, "items"));
        json_t *rem = json_object_get(j, "remaining"); /* absent from an older kerfd: -1 */
        if (!json_is_integer(rem) || *remaining < 0)
                *remaining = -1;
        else
                *remaining += json_integer_value(rem);
        json_t *nx = json_object_get(j, "next");
        *ret_next = NULL;
        if (json_is_string(nx))
                *ret_next = strdup(json_string_value(nx));
        else if (json_is_integer(nx)) {
                char b[32];
                snprintf(b, sizeof(b), "%lld", (long long)json_integer_value(nx));
                *ret_next = strdup(b);
        }
        json_decref(j);
        return 0;
}

/* One page over the server-side states of f: with several states, one request each with the
 * same cursor, merged in id order and cut at `limit` (task cursors are ids: docs/API.md). */
static int fetch_one(cli *c, const cli_task_filter *f, const char *after, unsigned limit,
                     json_t *items, char **ret_next, int64_t *remaining)
{
        const char *sv[8];
        size_t ns = 0;
        for (const char *const *s = cli_state_words(false); f->states && *s; s++) {
                const char *srv = strcmp(*s, KERF_TASK_SUSPENDED_WORD)
                                      ? *s
                                      : kerf_task_state_name(KERF_TASK_RUNNING);
                bool dup = false;
                if (!in_list(f->states, *s))
                        continue;
                for (size_t k = 0; k < ns; k++)
                        dup = dup || !strcmp(sv[k], srv);
                if (!dup)
                        sv[ns++] = srv;
        }
        if (ns <= 1)
                return fetch_page(c, f, ns ? sv[0] : NULL, after, limit, items, ret_next,
                                  remaining);
        json_t *all = json_array();
        bool more = false;
        for (size_t k = 0; k < ns; k++) {
                char *nx = NULL;
                int ex = fetch_page(c, f, sv[k], after, limit, all, &nx, remaining);
                if (ex) {
                        json_decref(all);
                        return ex;
                }
                more = more || nx;
                free(nx);
        }
        size_t n = json_array_size(all);
        json_t **v = calloc(n + 1, sizeof(*v));
        for (size_t i = 0; v && i < n; i++)
                v[i] = json_array_get(all, i);
        if (v)
                qsort(v, n, sizeof(*v), id_cmp);
        size_t kept = 0;
        int64_t last = 0;
        for (size_t i = 0; v && i < n && kept < limit; i++) {
                if (geti(v[i], "id") == last)
                        continue;
                last = geti(v[i], "id");
                json_array_append(items, v[i]);
                kept++;
        }
        *ret_next = NULL;
        if (more || kept < n) {
                char b[32];
                bool cut = false;
                /* what remains: each state's rest past its page, and the merged rows cut */
                for (size_t i = 0; v && i < n; i++)
                        if (geti(v[i], "id") > last &&
                            (i == 0 || geti(v[i], "id") != geti(v[i - 1], "id"))) {
                                cut = true;
                                if (*remaining >= 0)
                                        (*remaining)++;
                        }
                if (more || cut) {
                        snprintf(b, sizeof(b), "%lld", (long long)last);
                        *ret_next = strdup(b);
                }
        }
        free(v);
        json_decref(all);
        return 0;
}

int cli_task_fetch(cli *c, const cli_task_filter *f, const char *after, unsigned limit, bool all,
                   json_t **ret_items, char **ret_next, int64_t *ret_remaining)
{
        int64_t remaining = 0;
        json_t *items = json_array(), *page;
        char *cur = after ? strdup(after) : NULL, *next = NULL;
        int ex = 0;
        for (;;) {
                page = json_array();
                remaining = 0;
                ex = fetch_one(c, f, cur, all ? 1000 : limit, page, &next, &remaining);
                if (ex) {
                        json_decref(page);
                        break;
                }
                size_t i;
                json_t *t;
                json_array_foreach(page, i, t) if (cli_task_match(f, t))
                    json_array_append(items, t);
                json_decref(page);
                free(cur);
                cur = next;
                next = NULL;
                if (!all || !cur)
                        break;
        }
        if (ex) {
                free(cur);
                json_decref(items);
                return ex;
        }
        *ret_items = items;
        *ret_next = cur;
        if (ret_remaining)
                *ret_remaining = cur ? remaining : 0;
        return 0;
}

/* ---- output -------------------------------------------------------------------------------- */

static const char *rel_time(int64_t ms, int64_t now, char *b, size_t n)
{
        if (ms <= 0) {
                snprintf(b, n, "-");
                return b;
        }
        long long s = (long long)((now - ms) / 1000);
        if (s < 0)
                s = 0;
        if (s < 60)
                snprintf(b, n, "%llds ago", s);
        else if (s < 3600)
                snprintf(b, n, "%lldm ago", s / 60);
        else if (s < 86400)
                snprintf(b, n, "%lldh ago", s / 3600);
        else
                snprintf(b, n, "%lldd ago", s / 86400);
        return b;
}

static json_t *iso_json(int64_t ms)
{
        char b[40];
        time_t s = (time_t)(ms / 1000);
        struct tm tm;
        if (ms <= 0 || !gmtime_r(&s, &tm))
                return json_null();
        strftime(b, sizeof(b), "%Y-%m-%dT%H:%M:%SZ", &tm);
        return json_string(b);
}

/* Joins one field of every unit ("0,1"), or "-". */
static void units_join(const json_t *t, const char *key, char *b, size_t n)
{
        size_t i, l = 0;
        json_t *u;
        b[0] = '\0';
        json_array_foreach(json_object_get(t, "units"), i, u) if (l + 24 < n) l +=
            (size_t)snprintf(b + l, n - l, "%s%s", l ? "," : "", cli_num(u, key));
        if (!l)
                snprintf(b, n, "-");
}

static void print_table(json_t *items, bool wide, bool no_headers)
{
        static const char *const h[] = {
            "ID",   "NAME",   "TENANT",  "QUEUE", "WORKLOAD",  "STATE",   "ROUTE", "GPU",   "PRIO",
            "TIER", "MEMORY", "COMPUTE", "UNITS", "SUBMITTED", "STARTED", "ENDED", "REASON"};
        static const char *const hn[] = {"ID",        "NAME",    "TENANT", "QUEUE",
                                         "WORKLOAD",  "STATE",   "ROUTE",  "GPU",
                                         "SUBMITTED", "STARTED", "ENDED",  "REASON"};
        cli_table *t = wide ? cli_table_new(h, 17) : cli_table_new(hn, 12);
        int64_t now = now_ms();
        size_t i;
        json_t *task;
        json_array_foreach(items, i, task)
        {
                char gpu[160], units[160], sub[32], sta[32], end[32], reason[80], mem[32], comp[32];
                json_t *u0 = json_array_get(json_object_get(task, "units"), 0);
                json_t *req = json_object_get(task, "request");
                units_join(task, "gpu", gpu, sizeof(gpu));
                units_join(task, "id", units, sizeof(units));
                snprintf(reason, sizeof(reason), "%.78s",
                         cli_str(json_object_get(task, "reason"), "text"));
                if (!strcmp(reason, "-") || !reason[0])
                        snprintf(reason, sizeof(reason), "-");
                rel_time(geti(task, "submitted_ms"), now, sub, sizeof(sub));
                rel_time(geti(task, "started_ms"), now, sta, sizeof(sta));
                rel_time(geti(task, "ended_ms"), now, end, sizeof(end));
                /* granted (the first unit) while it holds units, else what was asked */
                snprintf(mem, sizeof(mem), "%s",
                         u0 ? cli_bytes(u0, "memory")
                         : json_is_integer(json_object_get(req, "memory"))
                             ? cli_bytes(req, "memory")
                             : cli_str(req, "memory"));
                if (u0 && geti(u0, "compute_limit") > geti(u0, "compute"))
                        snprintf(comp, sizeof(comp), "%s-%s%%", cli_num(u0, "compute"),
                                 cli_num(u0, "compute_limit"));
                else if (u0 || json_object_get(req, "compute"))
                        snprintf(comp, sizeof(comp), "%s%%", cli_num(u0 ? u0 : req, "compute"));
                else
                        snprintf(comp, sizeof(comp), "-");
                const char *route = cli_str(task, "route");
                if (wide)
                        cli_table_add(t, cli_num(task, "id"), cli_str(task, "name"),
                                      cli_str(task, "tenant"), cli_str(task, "queue"),
                                      cli_str(task, "workload"), cli_str(task, "state"), route, gpu,
                                      cli_num(task, "priority"), cli_str(task, "tier"), mem, comp,
                                      units, sub, sta, end, reason);
                else
                        cli_table_add(t, cli_num(task, "id"), cli_str(task, "name"),
                                      cli_str(task, "tenant"), cli_str(task, "queue"),
                                      cli_str(task, "workload"), cli_str(task, "state"), route, gpu,
                                      sub, sta, end, reason);
        }
        if (no_headers)
                cli_table_print_rows(t, stdout);
        else
                cli_table_print(t, stdout);
        cli_table_free(t);
}

/* A string YAML would read as something else (a number, bool, null) or that is empty. */
static bool yaml_ambiguous(const char *s)
{
        static const char *const words[] = {"y",    "n",     "yes",  "no", "on", "off",
                                            "true", "false", "null", "~",  NULL};
        if (!*s || strchr("0123456789+-.", *s))
                return true;
        for (const char *const *w = words; *w; w++)
                if (!strcasecmp(s, *w))
                        return true;
        return false;
}

static int yaml_scalar(yaml_emitter_t *e, const char *v, bool str)
{
        yaml_event_t ev;
        bool plain = !str || !yaml_ambiguous(v);
        yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)v, (int)strlen(v), plain, str,
                                     str ? YAML_ANY_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE);
        return yaml_emitter_emit(e, &ev) ? 0 : -1;
}

static int yaml_value(yaml_emitter_t *e, const json_t *j)
{
        yaml_event_t ev;
        char b[64];
        size_t i;
        const char *k;
        json_t *v;
        switch (json_typeof(j)) {
        case JSON_OBJECT:
                yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_ANY_MAPPING_STYLE);
                if (!yaml_emitter_emit(e, &ev))
                        return -1;
                json_object_foreach((json_t *)j, k, v) if (yaml_scalar(e, k, true) < 0 ||
                                                           yaml_value(e, v) < 0) return -1;
                yaml_mapping_end_event_initialize(&ev);
                return yaml_emitter_emit(e, &ev) ? 0 : -1;
        case JSON_ARRAY:
                yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_ANY_SEQUENCE_STYLE);
                if (!yaml_emitter_emit(e, &ev))
                        return -1;
                json_array_foreach(j, i, v) if (yaml_value(e, v) < 0) return -1;
                yaml_sequence_end_event_initialize(&ev);
                return yaml_emitter_emit(e, &ev) ? 0 : -1;
        case JSON_STRING:
                return yaml_scalar(e, json_string_value(j), true);
        case JSON_INTEGER:
                snprintf(b, sizeof(b), "%lld", (long long)json_integer_value(j));
                return yaml_scalar(e, b, false);
        case JSON_REAL:
                snprintf(b, sizeof(b), "%.17g", json_real_value(j));
                return yaml_scalar(e, b, false);
        case JSON_TRUE:
                return yaml_scalar(e, "true", false);
        case JSON_FALSE:
                return yaml_scalar(e, "false", false);
        default:
                return yaml_scalar(e, "null", false);
        }
}

int cli_print_yaml(const json_t *j)
{
        yaml_emitter_t e;
        yaml_event_t ev;
        int r = -1;
        if (!yaml_emitter_initialize(&e))
                return -1;
        yaml_emitter_set_output_file(&e, stdout);
        yaml_emitter_set_unicode(&e, !isatty(STDOUT_FILENO));
        yaml_emitter_set_width(&e, -1);
        yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
        if (!yaml_emitter_emit(&e, &ev))
                goto out;
        yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
        if (!yaml_emitter_emit(&e, &ev) || yaml_value(&e, j) < 0)
                goto out;
        yaml_document_end_event_initialize(&ev, 1);
        if (!yaml_emitter_emit(&e, &ev))
                goto out;
        yaml_stream_end_event_initialize(&ev);
        r = yaml_emitter_emit(&e, &ev) ? 0 : -1;
out:
        yaml_emitter_delete(&e);
        return r;
}

/* ---- kerf ls ------------------------------------------------------------------------------- */

enum { OUT_TABLE, OUT_WIDE, OUT_JSON, OUT_YAML };
enum { SORT_ID, SORT_SUBMITTED, SORT_PRIORITY, SORT_STATE, SORT_NAME };

static int sort_key, sort_rev;

static int state_rank(const char *s)
{
        for (int i = 0; cli_state_words(false)[i]; i++)
                if (!strcmp(cli_state_words(false)[i], s))
                        return i;
        return 99;
}

static int task_cmp(const void *a, const void *b)
{
        const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
        int64_t dx = 0, dy = 0;
        int c = 0;
        switch (sort_key) {
        case SORT_SUBMITTED:
                dx = geti(x, "submitted_ms"), dy = geti(y, "submitted_ms");
                break;
        case SORT_PRIORITY:
                dx = geti(x, "priority"), dy = geti(y, "priority");
                break;
        case SORT_STATE:
                dx = state_rank(cli_str(x, "state")), dy = state_rank(cli_str(y, "state"));
                break;
        case SORT_NAME:
                c = strcmp(cli_str(x, "name"), cli_str(y, "name"));
                break;
        }
        if (!c)
                c = dx < dy ? -1 : dx > dy;
        if (!c)
                c = geti(x, "id") < geti(y, "id") ? -1 : geti(x, "id") > geti(y, "id");
        return sort_rev ? -c : c;
}

static void sort_items(json_t *items)
{
        size_t n = json_array_size(items);
        json_t **v = calloc(n + 1, sizeof(*v));
        if (!v)
                return;
        for (size_t i = 0; i < n; i++)
                v[i] = json_incref(json_array_get(items, i));
        qsort(v, n, sizeof(*v), task_cmp);
        json_array_clear(items);
        for (size_t i = 0; i < n; i++)
                json_array_append_new(items, v[i]);
        free(v);
}

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
        (void)sig;
        interrupted = 1;
}

typedef struct ls_opts {
        cli_task_filter f;
        const char *after;
        unsigned limit;
        bool all, no_headers;
        int out;
        long watch_s; /* 0: once */
} ls_opts;

/* The hint after a page: the same command line with --after CURSOR. */
static void print_more(int argc, char **argv, const char *next, int64_t remaining,
                       bool client_filters)
{
        char line[1024];
        size_t l = (size_t)snprintf(line, sizeof(line), "kerf ls");
        for (int i = 1; i < argc && l < sizeof(line); i++) {
                if (!strcmp(argv[i], "--after")) {
                        i++;
                        continue;
                }
                if (!strncmp(argv[i], "--after=", 8))
                        continue;
                l += (size_t)snprintf(line + l, sizeof(line) - l, " %s", argv[i]);
        }
        if (l < sizeof(line))
                snprintf(line + l, sizeof(line) - l, " --after %s", next);
        char n[32] = "";
        if (remaining > 0)
                snprintf(n, sizeof(n), "%lld ", (long long)remaining);
        fprintf(stderr, "kerf: %smore tasks%s: %s (or --all for every page)\n", n,
                client_filters ? " (before the --name/--route/--gpu filters)" : "", cli_safe(line));
}

static int ls_once(cli *c, const ls_opts *o, int argc, char **argv)
{
        json_t *items = NULL;
        char *next = NULL;
        int64_t remaining = 0;
        int ex = cli_task_fetch(c, &o->f, o->after, o->limit, o->all, &items, &next, &remaining);
        if (ex)
                return ex;
        if (sort_key != SORT_ID || sort_rev)
                sort_items(items);
        if (o->out == OUT_JSON || o->out == OUT_YAML) {
                size_t i;
                json_t *t;
                json_array_foreach(items, i, t)
                {
                        json_object_set_new(t, "submitted", iso_json(geti(t, "submitted_ms")));
                        json_object_set_new(t, "started", iso_json(geti(t, "started_ms")));
                        json_object_set_new(t, "ended", iso_json(geti(t, "ended_ms")));
                }
                json_t *j = json_pack("{s:o, s:o, s:I}", "items", items, "next",
                                      next ? json_string(next) : json_null(), "remaining",
                                      (json_int_t)(remaining > 0 ? remaining : 0));
                if (o->out == OUT_JSON)
                        cli_print_json(j);
                else
                        cli_print_yaml(j);
                json_decref(j);
        } else {
                print_table(items, o->out == OUT_WIDE, o->no_headers);
                json_decref(items);
                if (next)
                        print_more(argc, argv, next, remaining,
                                   o->f.name || o->f.route || o->f.gpu >= 0);
        }
        fflush(stdout);
        free(next);
        return 0;
}

static bool word_of(const char *flag, const char *v, const char *const *words, int *ret)
{
        for (int i = 0; words[i]; i++)
                if (!strcmp(v, words[i])) {
                        *ret = i;
                        return true;
                }
        char acc[160] = "";
        for (int i = 0; words[i]; i++)
                snprintf(acc + strlen(acc), sizeof(acc) - strlen(acc), "%s%s", i ? ", " : "",
                         words[i]);
        cli_err("ls: %s: '%s' is not accepted (one of: %s)", flag, v, acc);
        return false;
}

static bool parse_long(const char *flag, const char *s, long lo, long hi, long *ret)
{
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (!*s || *end || errno || v < lo || v > hi) {
                cli_err("ls: %s: '%s' is not an integer in %ld..%ld", flag, s, lo, hi);
                return false;
        }
        *ret = v;
        return true;
}

bool cli_name_ok(const char *verb, const char *flag, const char *v)
{
        if (!*v || strpbrk(v, "&?=#% /")) {
                cli_err("%s: %s: '%s' is not a name (1..63 characters [A-Za-z0-9_.-])", verb, flag,
                        v);
                return false;
        }
        return true;
}

int cli_ls(cli *c, int argc, char **argv)
{
        enum {
                O_STATE = 256,
                O_QUEUE,
                O_TENANT,
                O_LIMIT,
                O_NAME,
                O_ROUTE,
                O_GPU,
                O_AFTER,
                O_ALL,
                O_SORT,
                O_NOHDR,
                O_WATCH
        };
        static const struct option lo[] = {{"state", required_argument, 0, O_STATE},
                                           {"queue", required_argument, 0, O_QUEUE},
                                           {"tenant", required_argument, 0, O_TENANT},
                                           {"limit", required_argument, 0, O_LIMIT},
                                           {"name", required_argument, 0, O_NAME},
                                           {"route", required_argument, 0, O_ROUTE},
                                           {"gpu", required_argument, 0, O_GPU},
                                           {"after", required_argument, 0, O_AFTER},
                                           {"all", no_argument, 0, O_ALL},
                                           {"sort", required_argument, 0, O_SORT},
                                           {"reverse", no_argument, 0, 'r'},
                                           {"output", required_argument, 0, 'o'},
                                           {"no-headers", no_argument, 0, O_NOHDR},
                                           {"watch", optional_argument, 0, O_WATCH},
                                           {"json", no_argument, 0, 'j'},
                                           {"help", no_argument, 0, 'h'},
                                           {0, 0, 0, 0}};
        static const char *const outs[] = {"table", "wide", "json", "yaml", NULL};
        static const char *const sorts[] = {"id", "submitted", "priority", "state", "name", NULL};
        static const char *const routes[] = {"whole", "mig", "slice", "mps", "tslice", NULL};
        ls_opts o = {.f = {.gpu = -1}, .limit = 100, .out = c->json ? OUT_JSON : OUT_TABLE};
        long v;
        int opt;
        sort_key = SORT_ID;
        sort_rev = 0;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:hjro:", lo, NULL)) != -1) {
                switch (opt) {
                case O_STATE:
                        if (!cli_states_ok("ls", optarg, cli_state_words(false)))
                                return KERF_EXIT_USAGE;
                        o.f.states = optarg;
                        break;
                case O_QUEUE:
                case O_TENANT:
                        if (!cli_name_ok("ls", opt == O_QUEUE ? "--queue" : "--tenant", optarg))
                                return KERF_EXIT_USAGE;
                        *(opt == O_QUEUE ? &o.f.queue : &o.f.tenant) = optarg;
                        break;
                case O_LIMIT:
                        if (!parse_long("--limit", optarg, 1, 1000, &v))
                                return KERF_EXIT_USAGE;
                        o.limit = (unsigned)v;
                        break;
                case O_NAME:
                        o.f.name = optarg;
                        break;
                case O_ROUTE: {
                        int k;
                        if (!word_of("--route", optarg, routes, &k))
                                return KERF_EXIT_USAGE;
                        o.f.route = optarg;
                        break;
                }
                case O_GPU:
                        if (!parse_long("--gpu", optarg, 0, 1023, &v))
                                return KERF_EXIT_USAGE;
                        o.f.gpu = (int)v;
                        break;
                case O_AFTER:
                        if (!*optarg || strpbrk(optarg, "&?=#% ")) {
                                cli_err("ls: --after: '%s' is not a cursor (the one a previous "
                                        "page named)",
                                        optarg);
                                return KERF_EXIT_USAGE;
                        }
                        o.after = optarg;
                        break;
                case O_ALL:
                        o.all = true;
                        break;
                case O_SORT:
                        if (!word_of("--sort", optarg, sorts, &sort_key))
                                return KERF_EXIT_USAGE;
                        break;
                case 'r':
                        sort_rev = 1;
                        break;
                case 'o':
                        if (!word_of("-o", optarg, outs, &o.out))
                                return KERF_EXIT_USAGE;
                        break;
                case 'j':
                        o.out = OUT_JSON;
                        break;
                case O_NOHDR:
                        o.no_headers = true;
                        break;
                case O_WATCH:
                        o.watch_s = 2;
                        /* --watch 5 as well as --watch=5 */
                        if (!optarg && optind < argc && argv[optind][0] >= '0' &&
                            argv[optind][0] <= '9')
                                optarg = argv[optind++];
                        if (optarg && !parse_long("--watch", optarg, 1, 86400, &o.watch_s))
                                return KERF_EXIT_USAGE;
                        break;
                case 'h':
                        cli_usage(stdout, argv[0]);
                        return 0;
                default:
                        return cli_bad_flag("ls", opt, argv, lo);
                }
        }
        if (optind < argc) {
                cli_err("ls: unexpected argument '%s' (kerf ls takes flags only)", argv[optind]);
                return KERF_EXIT_USAGE;
        }
        if (!o.watch_s)
                return ls_once(c, &o, argc, argv);
        /* --watch: redraw until Ctrl-C, which ends it with 0 */
        struct sigaction sa = {.sa_handler = on_sigint};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        bool tty = isatty(STDOUT_FILENO);
        while (!interrupted) {
                if (tty)
                        fputs("\033[H\033[2J", stdout);
                time_t now = time(NULL);
                struct tm tm;
                char when[40];
                strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
                printf("Every %lds: kerf ls    %s\n\n", o.watch_s, when);
                int ex = ls_once(c, &o, argc, argv);
                if (ex)
                        return ex;
                if (!tty)
                        putchar('\n');
                fflush(stdout);
                struct timespec ts = {o.watch_s, 0};
                while (!interrupted && nanosleep(&ts, &ts) < 0 && errno == EINTR)
                        ;
        }
        return 0;
}
