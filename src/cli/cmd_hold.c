/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_hold.c - kerf hold / release / update of pending tasks (as Slurm's scontrol hold,
 * release, update) and kerf gpu drain / resume / recover (docs/CLI.md) */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "kerf/fields.h"
#include "kerf/sched.h"
#include "kerf/units.h"

/* One POST/PATCH of task `id`; on failure prints "kerf: task N: why" and returns the exit code
 * (the first failure's is kept by the callers). */
static int task_post(cli *c, const char *method, unsigned long long id, const char *suffix,
                     json_t *body, json_t **ret)
{
        char path[96];
        snprintf(path, sizeof(path), "/v1/tasks/%llu%s", id, suffix);
        return cli_call(c, method, path, body, ret);
}

static void task_line(const char *verb, const json_t *t)
{
        const char *name = cli_str(t, "name");
        bool named = *name && strcmp(name, "-");
        printf("task %s%s%s%s %s\n", cli_num(t, "id"), named ? " (" : "", named ? name : "",
               named ? ")" : "", verb);
}

/* kerf hold ID... / kerf release ID... */
static int hold_verb(cli *c, int argc, char **argv, bool on)
{
        static const struct option lo[] = {
            {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
        const char *verb = on ? "hold" : "release";
        int opt, ex = 0;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, ":hj", lo, NULL)) != -1) {
                switch (opt) {
                case 'j':
                        c->json = true;
                        break;
                case 'h':
                        cli_usage(stdout, argv[0]);
                        return 0;
                default:
                        return cli_bad_flag(verb, opt, argv, lo);
                }
        }
        if (optind >= argc) {
                cli_err("%s: give one or more task ids (kerf %s ID...)", verb, verb);
                return KERF_EXIT_USAGE;
        }
        unsigned long long ids[256];
        int n = 0;
        for (int i = optind; i < argc; i++) {
                if (n == (int)(sizeof(ids) / sizeof(ids[0]))) {
                        cli_err("%s: at most %zu ids at once", verb, sizeof(ids) / sizeof(ids[0]));
                        return KERF_EXIT_USAGE;
                }
                if (!cli_parse_id(argv[i], &ids[n++]))
                        return KERF_EXIT_USAGE;
        }
        json_t *all = c->json ? json_array() : NULL;
        for (int i = 0; i < n; i++) {
                json_t *t = NULL;
                int e = task_post(c, "POST", ids[i], on ? "/hold" : "/release", NULL, &t);
                if (e) {
                        if (!ex)
                                ex = e;
                        continue;
                }
                if (all)
                        json_array_append(all, t);
                else
                        task_line(on ? "held" : "released", t);
                json_decref(t);
        }
        if (all) {
                cli_print_json(all);
                json_decref(all);
        }
        return ex;
}

int cli_hold(cli *c, int argc, char **argv)
{
        return hold_verb(c, argc, argv, true);
}

int cli_release(cli *c, int argc, char **argv)
{
        return hold_verb(c, argc, argv, false);
}

/* kerf update ID [--priority N] [--max-runtime D] [--idle-timeout D] [--preemptible BOOL] */
int cli_update(cli *c, int argc, char **argv)
{
        enum { O_PRIO = 256, O_RUNTIME, O_IDLE, O_PREEMPT };
        static const struct option lo[] = {{"priority", required_argument, 0, O_PRIO},
                                           {"max-runtime", required_argument, 0, O_RUNTIME},
                                           {"idle-timeout", required_argument, 0, O_IDLE},
                                           {"preemptible", required_argument, 0, O_PREEMPT},
                                           {"json", no_argument, 0, 'j'},
                                           {"help", no_argument, 0, 'h'},
                                           {0, 0, 0, 0}};
        json_t *body = json_object(), *t = NULL;
        unsigned long long id;
        int opt, ex = KERF_EXIT_USAGE;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, ":hj", lo, NULL)) != -1) {
                switch (opt) {
                case O_PRIO:
                case O_RUNTIME:
                case O_IDLE: /* by the submit's descriptors: the same bounds and words */
                        if (!cli_field_flag(body,
                                            kerf_field_find(kerf_task_fields,
                                                            kerf_task_fields_count,
                                                            opt == O_PRIO      ? "priority"
                                                            : opt == O_RUNTIME ? "max_runtime_s"
                                                                               : "idle_timeout_s"),
                                            optarg))
                                goto out;
                        break;
                case O_PREEMPT:
                        if (strcmp(optarg, "true") && strcmp(optarg, "false")) {
                                cli_err("update: --preemptible: '%s' is not true or false", optarg);
                                goto out;
                        }
                        json_object_set_new(body, "preemptible",
                                            json_boolean(!strcmp(optarg, "true")));
                        break;
                case 'j':
                        c->json = true;
                        break;
                case 'h':
                        cli_usage(stdout, argv[0]);
                        ex = 0;
                        goto out;
                default:
                        ex = cli_bad_flag("update", opt, argv, lo);
                        goto out;
                }
        }
        if (argc - optind != 1) {
                cli_err("update: give one task id (kerf update ID --priority N ...)");
                goto out;
        }
        if (!cli_parse_id(argv[optind], &id))
                goto out;
        if (json_object_size(body) == 0) {
                cli_err("update: nothing to change: give --priority, --max-runtime, "
                        "--idle-timeout or --preemptible");
                goto out;
        }
        if ((ex = task_post(c, "PATCH", id, "", body, &t)))
                goto out;
        if (c->json)
                cli_print_json(t);
        else
                printf("task %llu updated: priority %s, max runtime %s, idle timeout %s, "
                       "preemptible %s\n",
                       id, cli_num(t, "priority"),
                       cli_duration(json_object_get(t, "request"), "max_runtime_s"),
                       cli_duration(json_object_get(t, "request"), "idle_timeout_s"),
                       json_is_true(json_object_get(t, "preemptible")) ? "yes" : "no");
out:
        json_decref(t);
        json_decref(body);
        return ex;
}

/* ---- kerf gpu drain|resume|recover N ------------------------------------------------------ */

/* The GPU object of index g from GET /v1/gpus (a new reference), or NULL with an exit code. */
static json_t *gpu_get(cli *c, unsigned long long g, int *ex)
{
        char path[64];
        json_t *j = NULL, *it, *found = NULL;
        size_t i;
        snprintf(path, sizeof(path), "/v1/gpus?after=%llu&limit=1", g);
        if ((*ex = cli_call(c, "GET", path, NULL, &j)))
                return NULL;
        json_array_foreach(json_object_get(j, "items"), i, it)
        {
                json_t *ix = json_object_get(it, "index");
                if (json_is_integer(ix) && (unsigned long long)json_integer_value(ix) == g)
                        found = json_incref(it);
        }
        json_decref(j);
        if (!found) {
                cli_err("gpu: no GPU %llu on this node", g);
                *ex = KERF_EXIT_NOT_FOUND;
        }
        return found;
}

/* --wait: polls until no task holds a unit on GPU g (Ctrl-C stops waiting, not the drain). */
static int gpu_wait(cli *c, unsigned long long g)
{
        bool said = false;
        for (;;) {
                int ex;
                json_t *it = gpu_get(c, g, &ex);
                if (!it)
                        return ex;
                json_int_t left = json_integer_value(json_object_get(it, "tasks"));
                bool draining = json_is_true(json_object_get(it, "draining"));
                json_decref(it);
                if (!draining) {
                        cli_err("gpu: GPU %llu was resumed while waiting", g);
                        return KERF_EXIT_REFUSED;
                }
                if (left == 0)
                        return 0;
                if (!said && !c->json) {
                        printf("waiting for %lld task(s) on GPU %llu to end\n", (long long)left, g);
                        fflush(stdout);
                        said = true;
                }
                struct timespec ts = {0, 500 * 1000 * 1000};
                nanosleep(&ts, NULL);
        }
}

int cli_gpu(cli *c, int argc, char **argv)
{
        enum { O_WAIT = 256, O_REASON };
        static const struct option lo[] = {{"wait", no_argument, 0, O_WAIT},
                                           {"reason", required_argument, 0, O_REASON},
                                           {"json", no_argument, 0, 'j'},
                                           {"help", no_argument, 0, 'h'},
                                           {0, 0, 0, 0}};
        static const char *const subs[] = {"drain", "resume", "recover"};
        const char *reason = NULL;
        bool wait = false;
        int opt, ex;
        optind = 1;
        opterr = 0;
        /* permute: `kerf gpu drain 3 --wait` as well as `kerf gpu --wait drain 3` */
        while ((opt = getopt_long(argc, argv, ":hj", lo, NULL)) != -1) {
                switch (opt) {
                case O_WAIT:
                        wait = true;
                        break;
                case O_REASON:
                        reason = optarg;
                        break;
                case 'j':
                        c->json = true;
                        break;
                case 'h':
                        cli_usage(stdout, "gpu");
                        return 0;
                default:
                        return cli_bad_flag("gpu", opt, argv, lo);
                }
        }
        if (argc - optind != 2) {
                cli_err("gpu: usage: kerf gpu drain|resume|recover INDEX (see kerf gpu --help)");
                return KERF_EXIT_USAGE;
        }
        const char *sub = argv[optind];
        size_t k = 0;
        while (k < 3 && strcmp(sub, subs[k]))
                k++;
        if (k == 3) {
                const char *near = cli_nearest(sub, subs, 3);
                cli_err("gpu: '%s' is not drain, resume or recover%s%s%s", sub,
                        near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
                return KERF_EXIT_USAGE;
        }
        char *end;
        errno = 0;
        unsigned long long g = strtoull(argv[optind + 1], &end, 10);
        if (!*argv[optind + 1] || *end || errno || argv[optind + 1][0] == '-') {
                cli_err("gpu: '%s' is not a GPU index (0, 1, ... as kerf gpus shows)",
                        argv[optind + 1]);
                return KERF_EXIT_USAGE;
        }
        if ((wait || reason) && k != 0) {
                cli_err("gpu %s: %s is for drain only", sub, wait ? "--wait" : "--reason");
                return KERF_EXIT_USAGE;
        }
        json_t *body = NULL, *res = NULL;
        if (reason)
                body = json_pack("{s:s}", "reason", reason);
        char path[64];
        snprintf(path, sizeof(path), "/v1/gpus/%llu/%s", g, sub);
        ex = cli_call(c, "POST", path, body, &res);
        json_decref(body);
        if (ex)
                return ex;
        if (c->json && !wait)
                cli_print_json(res);
        else if (!c->json)
                printf("%s\n", cli_str(res, "message"));
        json_decref(res);
        if (wait) {
                if ((ex = gpu_wait(c, g)))
                        return ex;
                json_t *it = gpu_get(c, g, &ex);
                if (!it)
                        return ex;
                if (c->json)
                        cli_print_json(it);
                else
                        printf("GPU %llu is drained: no task runs on it\n", g);
                json_decref(it);
        }
        return 0;
}
