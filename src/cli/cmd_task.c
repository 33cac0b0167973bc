/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_task.c - kerf submit, show, suspend, resume, logs, explain (run: cmd_run.c, ls: cmd_ls.c,
 * cancel: cmd_cancel.c) */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "kerf/core.h"
#include "kerf/fields.h"

/* getopt values: 256 + i for kerf_task_fields[i]'s flag; then the flags of kerf submit itself */
enum { O_FIELD = 256, O_JSON = 1024 };

void cli_field_options(const kerf_field *tab, size_t n, unsigned objects, int base, int json,
                       struct option *lo, size_t cap)
{
        size_t k = 0;
        for (size_t i = 0; i < n && k + 3 < cap; i++) {
                const kerf_field *f = &tab[i];
                if (!f->flag || !(f->objects & objects))
                        continue;
                lo[k++] = (struct option){f->flag, f->metavar ? required_argument : no_argument, 0,
                                          base + (int)i};
        }
        lo[k++] = (struct option){"json", no_argument, 0, json};
        lo[k++] = (struct option){"help", no_argument, 0, 'h'};
        lo[k] = (struct option){0, 0, 0, 0};
}

/* The long options of kerf submit and run: one per kerf_task_fields flag, --json, --help.
 * Built once from the table (kerf is one thread). */
static const struct option *submit_opts(void)
{
        static struct option lo[64 + 3];

        if (lo[0].name)
                return lo;
        cli_field_options(kerf_task_fields, kerf_task_fields_count, KERF_FIELD_SUBMIT, O_FIELD,
                          O_JSON, lo, sizeof(lo) / sizeof(lo[0]));
        return lo;
}

void cli_task_flags_help(FILE *out)
{
        char line[1024];
        for (size_t i = 0; i < kerf_task_fields_count; i++)
                if (kerf_task_fields[i].objects & KERF_FIELD_SUBMIT)
                        fputs(kerf_field_help_line(&kerf_task_fields[i], line, sizeof(line)), out);
}

bool cli_field_flag(json_t *req, const kerf_field *f, const char *s)
{
        char d[320];
        json_t *cur = json_object_get(req, f->name);
        char *end;
        long long v;
        uint64_t u;
        int e;

        switch (f->type) {
        case KERF_FIELD_ENUM:
                if ((e = f->value_parse(s)) < 0) {
                        cli_err("--%s: '%s' is not %s", f->flag, s,
                                kerf_field_describe(f, d, sizeof(d)));
                        return false;
                }
                json_object_set_new(req, f->name, json_string(f->value_name((unsigned)e)));
                return true;
        case KERF_FIELD_INT:
        case KERF_FIELD_PERCENT:
                errno = 0;
                v = strtoll(s, &end, 10);
                if (!*s || *end || errno || v < f->min || v > f->max) {
                        cli_err("--%s: '%s' is not %s", f->flag, s,
                                kerf_field_describe(f, d, sizeof(d)));
                        return false;
                }
                json_object_set_new(req, f->name, json_integer(v));
                return true;
        case KERF_FIELD_SIZE:
                if (!cli_parse_size(f->flag, s, (uint64_t)f->max, &u))
                        return false;
                json_object_set_new(req, f->name, json_integer((json_int_t)u));
                return true;
        case KERF_FIELD_DURATION:
                if (!cli_parse_duration(f->flag, s, (uint64_t)f->max, &u))
                        return false;
                if ((int64_t)u < f->min) {
                        cli_err("--%s: '%s': at least %llds", f->flag, s, (long long)f->min);
                        return false;
                }
                json_object_set_new(req, f->name, json_integer((json_int_t)u));
                return true;
        case KERF_FIELD_BOOL:
                json_object_set_new(req, f->name, json_true());
                return true;
        case KERF_FIELD_STRLIST:
                if (f->value_parse && (e = f->value_parse(s)) < 0) {
                        cli_err("--%s: '%s' is not one of %s", f->flag, s,
                                kerf_field_describe(f, d, sizeof(d)));
                        return false;
                }
                if (!cur)
                        json_object_set_new(req, f->name, cur = json_array());
                json_array_append_new(cur, json_string(s));
                return true;
        case KERF_FIELD_OBJECT: { /* KEY=VALUE, repeatable */
                const char *eq = strchr(s, '=');
                char key[256];
                if (!eq || eq == s) {
                        cli_err("--%s: '%s' is not KEY=VALUE", f->flag, s);
                        return false;
                }
                if (!cur)
                        json_object_set_new(req, f->name, cur = json_object());
                snprintf(key, sizeof(key), "%.*s", (int)(eq - s), s);
                json_object_set_new(cur, key, json_string(eq + 1));
                return true;
        }
        default: /* names, strings, paths: kerfd checks them against the same descriptor */
                json_object_set_new(req, f->name, json_string(s));
                return true;
        }
}

/* Parses the submit flags into a JSON request; `--` ends flags, the rest is the command.
 * Returns 0 and the request, or an exit code. */
static int parse_request(cli *c, int argc, char **argv, bool need_cmd, json_t **ret)
{
        const struct option *lo = submit_opts();
        json_t *req = json_object();
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:h", lo, NULL)) != -1) {
                if (opt >= O_FIELD && opt < O_FIELD + (int)kerf_task_fields_count) {
                        if (!cli_field_flag(req, &kerf_task_fields[opt - O_FIELD], optarg))
                                goto usage;
                        continue;
                }
                switch (opt) {
                case O_JSON:
                        c->json = true;
                        break;
                case 'h':
                        cli_usage(stdout, argv[0]);
                        json_decref(req);
                        return -1;
                default:
                        cli_bad_flag(argv[0], opt, argv, lo);
                        goto usage;
                }
        }
        if (need_cmd) {
                if (optind >= argc) {
                        cli_err("%s: give the command to run after the flags, e.g. "
                                "'kerf %s --workload dev -- python3 train.py'",
                                argv[0], argv[0]);
                        goto usage;
                }
                json_t *cmd = json_array();
                for (int i = optind; i < argc; i++)
                        json_array_append_new(cmd, json_string(argv[i]));
                json_object_set_new(req, "command", cmd);
        }
        *ret = req;
        return 0;
usage:
        json_decref(req);
        return KERF_EXIT_USAGE;
}

int cli_parse_request(cli *c, int argc, char **argv, json_t **ret)
{
        return parse_request(c, argc, argv, false, ret);
}

int cli_parse_run_request(cli *c, int argc, char **argv, json_t **ret)
{
        return parse_request(c, argc, argv, true, ret);
}

static void print_task_line(const json_t *t)
{
        const char *name = cli_safe(json_string_value(json_object_get(t, "name")));
        const char *why =
            cli_safe(json_string_value(json_object_get(json_object_get(t, "reason"), "text")));
        printf("task %s%s%s%s %s%s%s\n", cli_num(t, "id"), name && *name ? " (" : "",
               name && *name ? name : "", name && *name ? ")" : "", cli_str(t, "state"),
               why && *why ? ": " : "", why && *why ? why : "");
}

int cli_submit(cli *c, int argc, char **argv)
{
        json_t *req = NULL, *task = NULL;
        int ex = parse_request(c, argc, argv, true, &req);
        if (ex)
                return ex < 0 ? 0 : ex;
        ex = cli_call(c, "POST", "/v1/tasks", req, &task);
        json_decref(req);
        if (ex)
                return ex;
        if (c->json)
                cli_print_json(task);
        else
                print_task_line(task);
        json_decref(task);
        return 0;
}

/* Copies new log bytes of one stream to `out`; returns 0 or the exit code of a failed call
 * (its error already printed). */
int cli_pump(cli *c, unsigned long long id, const char *stream, long long *off, FILE *out,
             bool *eof)
{
        char path[128];
        json_t *j = NULL;
        int ex;
        snprintf(path, sizeof(path), "/v1/tasks/%llu/logs?stream=%s&offset=%lld&limit=65536", id,
                 stream, *off);
        if ((ex = cli_call(c, "GET", path, NULL, &j)))
                return ex;
        const char *data = json_string_value(json_object_get(j, "data"));
        if (data && *data) {
                /* a task's own bytes pass as they are to a file or pipe; a terminal gets them
                 * with control sequences escaped (docs/CLI.md) */
                if (isatty(fileno(out))) {
                        size_t len = strlen(data), cap = len * 8 + 1;
                        char *e = malloc(cap);
                        if (e) {
                                cli_escape(e, cap, data, true);
                                fputs(e, out);
                                free(e);
                        }
                } else {
                        fputs(data, out);
                }
                fflush(out);
        }
        json_t *o = json_object_get(j, "offset");
        if (json_is_integer(o))
                *off = json_integer_value(o);
        *eof = json_is_true(json_object_get(j, "eof"));
        json_decref(j);
        return 0;
}

/* Verbs that take one task id and an optional --json. */
static int one_id(cli *c, int argc, char **argv, unsigned long long *id)
{
        argc = cli_take_flag(argc, argv, "--json", NULL, &c->json);
        if (argc != 2) {
                cli_err("%s: expects exactly one task id (kerf %s ID)", argv[0], argv[0]);
                return KERF_EXIT_USAGE;
        }
        return cli_parse_id(argv[1], id) ? 0 : KERF_EXIT_USAGE;
}

/* The ID verbs: parses the id, calls METHOD /v1/tasks/ID SUFFIX. With --json the answer is
 * printed and -1 returned (done); else 0 and the answer through *ret (caller frees), or an exit
 * code. */
static int task_call(cli *c, int argc, char **argv, const char *method, const char *suffix,
                     unsigned long long *id, json_t **ret)
{
        char path[96];
        int ex = one_id(c, argc, argv, id);
        if (ex)
                return ex;
        snprintf(path, sizeof(path), "/v1/tasks/%llu%s", *id, suffix);
        if ((ex = cli_call(c, method, path, NULL, ret)))
                return ex;
        if (!c->json)
                return 0;
        cli_print_json(*ret);
        json_decref(*ret);
        return -1;
}

/* A software slice: its enforcement and what it uses against what it was granted. */
static void print_slice(const json_t *t)
{
        const json_t *u = json_object_get(t, "usage");
        if (!json_object_get(t, "enforcement"))
                return;
        printf("%-14s %s%s%s\n", "enforcement", cli_str(t, "enforcement"),
               !strcmp(cli_str(t, "enforcement"), "unenforced")
                   ? " (no shim: nothing caps its memory or compute)"
                   : "",
               json_is_true(json_object_get(t, "shim_bypass"))
                   ? "; ANOMALY: a process used the GPU without the shim"
                   : "");
        if (!json_is_object(u))
                return;
        printf("%-14s %s used, peak %s, cap %s, %s allocation(s) denied\n", "memory",
               cli_bytes(u, "memory_used_bytes"), cli_bytes(u, "memory_peak_bytes"),
               cli_bytes(u, "memory_limit_bytes"), cli_num(u, "memory_denied"));
        printf("%-14s %.1f%% used, %s%% allowed now (granted %s%%, burst to %s%%)\n", "compute",
               json_number_value(json_object_get(u, "compute_used_pct")),
               cli_num(u, "compute_allowed_pct"), cli_num(u, "compute_pct"),
               cli_num(u, "compute_limit_pct"));
        printf("%-14s %.3f s throttled, %s of %s launches held", "throttling",
               (double)json_integer_value(json_object_get(u, "throttled_ns")) / 1e9,
               cli_num(u, "held_launches"), cli_num(u, "launches"));
        if (json_integer_value(json_object_get(u, "sample_waits")) > 0)
                printf("; %.3f s in %s wait(s) for a new kernel's first cost sample",
                       (double)json_integer_value(json_object_get(u, "sample_wait_ns")) / 1e9,
                       cli_num(u, "sample_waits"));
        putchar('\n');
}

int cli_show(cli *c, int argc, char **argv)
{
        unsigned long long id;
        json_t *t = NULL;
        int ex = task_call(c, argc, argv, "GET", "", &id, &t);
        if (ex)
                return ex < 0 ? 0 : ex;
        static const char *const keys[] = {
            "id",        "name",        "tenant",        "queue",       "workload", "tier",
            "priority",  "preemptible", "state",         "end_reason",  "route",    "pid",
            "exit_code", "signal",      "queue_wait_ms", "preemptions", "restarts", NULL};
        for (const char *const *k = keys; *k; k++)
                printf("%-14s %s\n", *k, cli_str(t, *k));
        json_t *pids = json_object_get(t, "pids"), *p;
        size_t i;
        if (json_array_size(pids) > 0) { /* a live attached task: its pid and those that joined */
                printf("%-14s", "pids");
                json_array_foreach(pids, i, p) printf(" %lld", (long long)json_integer_value(p));
                printf(" (%zu process%s)\n", json_array_size(pids),
                       json_array_size(pids) == 1 ? "" : "es");
        }
        printf("%-14s %s\n", "reason", cli_str(json_object_get(t, "reason"), "text"));
        const json_t *rq = json_object_get(t, "request");
        printf("%-14s memory %s, host memory %s, max runtime %s, idle timeout %s\n", "requested",
               cli_bytes(rq, "memory"), cli_bytes(rq, "host_memory"),
               cli_duration(rq, "max_runtime_s"), cli_duration(rq, "idle_timeout_s"));
        json_t *u;
        json_array_foreach(json_object_get(t, "units"), i, u)
        {
                printf("unit %-9s %s %s on GPU %s (%s)%s%s, memory %s, compute %s%%\n",
                       cli_num(u, "id"), cli_str(u, "kind"), cli_str(u, "mig_profile"),
                       cli_num(u, "gpu"), cli_str(u, "gpu_uuid"),
                       json_object_get(u, "mig_uuid") ? " " : "",
                       json_object_get(u, "mig_uuid") ? cli_str(u, "mig_uuid") : "",
                       cli_bytes(u, "memory"), cli_num(u, "compute"));
        }
        print_slice(t);
        const json_t *du = json_object_get(t, "device_util");
        if (json_is_object(du)) /* what the device itself reports, beside the shim's figures */
                printf("%-14s SM %s%% (%s per-process utilisation, summed over its GPUs)\n",
                       "device", cli_num(du, "sm_pct"), cli_str(du, "source"));
        json_t *log = json_object_get(t, "log");
        printf("%-14s %s\n%-14s %s\n", "stdout", cli_str(log, "stdout"), "stderr",
               cli_str(log, "stderr"));
        json_decref(t);
        return 0;
}

static int suspend_verb(cli *c, int argc, char **argv, const char *suffix)
{
        unsigned long long id;
        json_t *t = NULL;
        int ex = task_call(c, argc, argv, "POST", suffix, &id, &t);
        if (ex)
                return ex < 0 ? 0 : ex;
        print_task_line(t);
        json_decref(t);
        return 0;
}

int cli_suspend(cli *c, int argc, char **argv)
{
        return suspend_verb(c, argc, argv, "/suspend");
}

int cli_resume(cli *c, int argc, char **argv)
{
        return suspend_verb(c, argc, argv, "/resume");
}

int cli_logs(cli *c, int argc, char **argv)
{
        bool err = false, follow = false;
        argc = cli_take_flag(argc, argv, "--stderr", NULL, &err);
        argc = cli_take_flag(argc, argv, "--follow", "-f", &follow);
        unsigned long long id;
        int ex = one_id(c, argc, argv, &id);
        if (ex)
                return ex;
        if (c->json) /* its own --json flag (the global one is refused by main) */
                return cli_json_refuse("logs");
        long long off = 0, was;
        bool eof = false;
        for (;;) {
                was = off;
                if ((ex = cli_pump(c, id, err ? "stderr" : "stdout", &off, err ? stderr : stdout,
                                   &eof)))
                        return ex;
                if (off - was == 65536 && !eof) /* a full page: the log goes on */
                        continue;
                if (!follow || eof)
                        break;
                struct timespec ts = {0, 200 * 1000 * 1000};
                nanosleep(&ts, NULL);
        }
        return 0;
}

int cli_explain(cli *c, int argc, char **argv)
{
        unsigned long long id;
        json_t *e = NULL;
        int ex = task_call(c, argc, argv, "GET", "/explain", &id, &e);
        if (ex)
                return ex < 0 ? 0 : ex;
        json_t *r = json_object_get(e, "reason");
        printf("task %llu is %s: [%s] %s\n", id, cli_str(e, "state"), cli_str(r, "code"),
               cli_str(r, "text"));
        if (json_object_get(e, "queue_position"))
                printf("  queue position %s, fair-share rank %s, tenant dominant share %s\n",
                       cli_num(e, "queue_position"), cli_num(e, "fair_share_rank"),
                       cli_num(e, "dominant_share"));
        size_t i;
        json_t *rt;
        json_array_foreach(json_object_get(e, "routes"), i, rt)
            printf("  route %-6s [%s] %s\n", cli_str(rt, "route"), cli_str(rt, "code"),
                   cli_str(rt, "text"));
        const char *hint = cli_safe(json_string_value(json_object_get(e, "hint")));
        if (hint && *hint)
                printf("  -> %s\n", hint);
        json_decref(e);
        return 0;
}
