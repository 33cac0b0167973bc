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

enum {
        O_NAME = 256,
        O_TENANT,
        O_QUEUE,
        O_WORKLOAD,
        O_TIER,
        O_ROUTE,
        O_MIG,
        O_GPUS,
        O_MEM,
        O_COMPUTE,
        O_LIMIT,
        O_CPU,
        O_HMEM,
        O_MODEL,
        O_PRIO,
        O_PREEMPT,
        O_RUNTIME,
        O_IDLE,
        O_ENV,
        O_CWD,
        O_JSON,
};

static const struct option submit_opts[] = {
    {"name", required_argument, 0, O_NAME},
    {"tenant", required_argument, 0, O_TENANT},
    {"queue", required_argument, 0, O_QUEUE},
    {"workload", required_argument, 0, O_WORKLOAD},
    {"tier", required_argument, 0, O_TIER},
    {"route", required_argument, 0, O_ROUTE},
    {"mig-profile", required_argument, 0, O_MIG},
    {"gpus", required_argument, 0, O_GPUS},
    {"memory", required_argument, 0, O_MEM},
    {"compute", required_argument, 0, O_COMPUTE},
    {"compute-limit", required_argument, 0, O_LIMIT},
    {"cpu-milli", required_argument, 0, O_CPU},
    {"host-memory", required_argument, 0, O_HMEM},
    {"gpu-model", required_argument, 0, O_MODEL},
    {"priority", required_argument, 0, O_PRIO},
    {"preemptible", no_argument, 0, O_PREEMPT},
    {"max-runtime", required_argument, 0, O_RUNTIME},
    {"idle-timeout", required_argument, 0, O_IDLE},
    {"env", required_argument, 0, O_ENV},
    {"cwd", required_argument, 0, O_CWD},
    {"json", no_argument, 0, O_JSON},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

static bool parse_int(const char *flag, const char *s, long long lo, long long hi, long long *ret)
{
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (!*s || *end || errno || v < lo || v > hi) {
                cli_err("--%s: '%s' is not an integer in %lld..%lld", flag, s, lo, hi);
                return false;
        }
        *ret = v;
        return true;
}

static bool one_of(const char *flag, const char *s, const char *const *allowed)
{
        for (const char *const *a = allowed; *a; a++)
                if (strcmp(s, *a) == 0)
                        return true;
        cli_err("--%s: '%s' is not one of the accepted values (see kerf submit --help)", flag, s);
        return false;
}

/* Parses the submit flags into a JSON request; `--` ends flags, the rest is the command.
 * Returns 0 and the request, or an exit code. */
static int parse_request(cli *c, int argc, char **argv, bool need_cmd, json_t **ret)
{
        static const char *const wls[] = {"training", "inference", "dev", "batch", NULL};
        static const char *const tiers[] = {"high", "high-impact", "queueable", "exploratory",
                                            NULL};
        static const char *const routes[] = {"whole", "mig", "slice", "mps", "tslice", NULL};
        json_t *req = json_object(), *env = NULL, *models = NULL;
        long long v;
        int opt;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:h", submit_opts, NULL)) != -1) {
                switch (opt) {
                case O_NAME:
                        json_object_set_new(req, "name", json_string(optarg));
                        break;
                case O_TENANT:
                        json_object_set_new(req, "tenant", json_string(optarg));
                        break;
                case O_QUEUE:
                        json_object_set_new(req, "queue", json_string(optarg));
                        break;
                case O_WORKLOAD:
                        if (!one_of("workload", optarg, wls))
                                goto usage;
                        json_object_set_new(req, "workload", json_string(optarg));
                        break;
                case O_TIER:
                        if (!one_of("tier", optarg, tiers))
                                goto usage;
                        json_object_set_new(
                            req, "tier",
                            json_string(strcmp(optarg, "high-impact") ? optarg : "high"));
                        break;
                case O_ROUTE:
                        if (!one_of("route", optarg, routes))
                                goto usage;
                        json_object_set_new(req, "route", json_string(optarg));
                        break;
                case O_MIG:
                        json_object_set_new(req, "mig_profile", json_string(optarg));
                        break;
                case O_GPUS:
                        if (!parse_int("gpus", optarg, 1, 16, &v))
                                goto usage;
                        json_object_set_new(req, "gpus", json_integer(v));
                        break;
                case O_MEM:
                case O_HMEM: {
                        uint64_t b;
                        if (!cli_parse_size(
                                opt == O_MEM ? "memory" : "host-memory", optarg,
                                opt == O_MEM ? KERF_MAX_GPU_MEM_BYTES : KERF_MAX_MEM_BYTES, &b))
                                goto usage;
                        json_object_set_new(req, opt == O_MEM ? "memory" : "host_memory",
                                            json_integer((json_int_t)b));
                        break;
                }
                case O_COMPUTE:
                case O_LIMIT:
                        if (!parse_int(opt == O_COMPUTE ? "compute" : "compute-limit", optarg, 0,
                                       100, &v))
                                goto usage;
                        json_object_set_new(req, opt == O_COMPUTE ? "compute" : "compute_limit",
                                            json_integer(v));
                        break;
                case O_CPU:
                        if (!parse_int("cpu-milli", optarg, 0, (long long)KERF_MAX_CPU_MILLI, &v))
                                goto usage;
                        json_object_set_new(req, "cpu_milli", json_integer(v));
                        break;
                case O_MODEL:
                        if (!models)
                                models = json_array();
                        json_array_append_new(models, json_string(optarg));
                        break;
                case O_PRIO:
                        if (!parse_int("priority", optarg, -1000, 1000, &v))
                                goto usage;
                        json_object_set_new(req, "priority", json_integer(v));
                        break;
                case O_PREEMPT:
                        json_object_set_new(req, "preemptible", json_true());
                        break;
                case O_RUNTIME:
                case O_IDLE: {
                        uint64_t d;
                        if (!cli_parse_duration(
                                opt == O_RUNTIME ? "max-runtime" : "idle-timeout", optarg,
                                opt == O_RUNTIME ? KERF_MAX_RUNTIME_S : KERF_MAX_IDLE_TIMEOUT_S,
                                &d))
                                goto usage;
                        json_object_set_new(req,
                                            opt == O_RUNTIME ? "max_runtime_s" : "idle_timeout_s",
                                            json_integer((json_int_t)d));
                        break;
                }
                case O_ENV: {
                        const char *eq = strchr(optarg, '=');
                        if (!eq || eq == optarg) {
                                cli_err("--env: '%s' is not KEY=VALUE", optarg);
                                goto usage;
                        }
                        if (!env)
                                env = json_object();
                        char key[256];
                        snprintf(key, sizeof(key), "%.*s", (int)(eq - optarg), optarg);
                        json_object_set_new(env, key, json_string(eq + 1));
                        break;
                }
                case O_CWD:
                        json_object_set_new(req, "cwd", json_string(optarg));
                        break;
                case O_JSON:
                        c->json = true;
                        break;
                case 'h':
                        cli_usage(stdout, argv[0]);
                        json_decref(req);
                        json_decref(env);
                        json_decref(models);
                        return -1;
                default:
                        cli_bad_flag(argv[0], opt, argv, submit_opts);
                        goto usage;
                }
        }
        if (env)
                json_object_set_new(req, "env", env);
        if (models)
                json_object_set_new(req, "gpu_models", models);
        env = models = NULL;
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
        json_decref(env);
        json_decref(models);
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
        printf("%-14s %.3f s throttled, %s of %s launches held\n", "throttling",
               (double)json_integer_value(json_object_get(u, "throttled_ns")) / 1e9,
               cli_num(u, "held_launches"), cli_num(u, "launches"));
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
        printf("%-14s %s\n", "reason", cli_str(json_object_get(t, "reason"), "text"));
        const json_t *rq = json_object_get(t, "request");
        printf("%-14s memory %s, host memory %s, max runtime %s, idle timeout %s\n", "requested",
               cli_bytes(rq, "memory"), cli_bytes(rq, "host_memory"),
               cli_duration(rq, "max_runtime_s"), cli_duration(rq, "idle_timeout_s"));
        size_t i;
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
