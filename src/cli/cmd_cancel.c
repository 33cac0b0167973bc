/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_cancel.c - kerf cancel: many ids and/or a filter (as scancel), --dry-run, --grace and
 * --signal (POST /v1/tasks/{id}/cancel {"grace_s", "signal"}) */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "kerf/task_state.h"
#include "kerf/fields.h" /* KERF_MAX_GRACE_S */

static const struct {
        const char *name;
        int sig;
} sigs[] = {{"HUP", SIGHUP},   {"INT", SIGINT},    {"QUIT", SIGQUIT}, {"ABRT", SIGABRT},
            {"KILL", SIGKILL}, {"USR1", SIGUSR1},  {"USR2", SIGUSR2}, {"ALRM", SIGALRM},
            {"TERM", SIGTERM}, {"CONT", SIGCONT},  {"STOP", SIGSTOP}, {"TSTP", SIGTSTP},
            {"XCPU", SIGXCPU}, {"WINCH", SIGWINCH}};

/* TERM, SIGTERM, term or 15; 1..64. */
static int parse_signal(const char *s)
{
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (*s && !*end && !errno)
                return v >= 1 && v <= 64 ? (int)v : -1;
        if (!strncasecmp(s, "SIG", 3))
                s += 3;
        for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
                if (!strcasecmp(s, sigs[i].name))
                        return sigs[i].sig;
        return -1;
}

/* One cancel; on failure prints "kerf: task N: why" and returns the exit code. */
static int cancel_one(cli *c, unsigned long long id, json_t *body, json_t **ret)
{
        char path[64], *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
        kerf_client_response r;
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", id);
        int rc = kerf_client_call(c->client, "POST", path, text, &r);
        free(text);
        if (rc < 0) {
                cli_err("%s", kerf_client_error(c->client)[0] ? kerf_client_error(c->client)
                                                              : strerror(-rc));
                return KERF_EXIT_UNREACHABLE;
        }
        json_t *j = json_loadb(r.body, r.len, 0, NULL);
        int ex = 0;
        if (r.status >= 400) {
                const char *msg = json_string_value(json_object_get(j, "message"));
                const char *code = json_string_value(json_object_get(j, "error"));
                cli_err("task %llu: %s (%s, HTTP %ld)", id, msg ? cli_safe(msg) : "refused",
                        code ? cli_safe(code) : "error", r.status);
                ex = r.status == 404                      ? KERF_EXIT_NOT_FOUND
                     : r.status == 401 || r.status == 403 ? KERF_EXIT_DENIED
                                                          : KERF_EXIT_REFUSED;
                json_decref(j);
                j = NULL;
        }
        kerf_client_response_fini(&r);
        *ret = j;
        return ex;
}

/* "task 7 (train) cancelled"; a task still ending says "stopping" */
static void task_line(const char *verb, const json_t *t)
{
        const char *name = cli_str(t, "name"), *st = cli_str(t, "state");
        bool named = *name && strcmp(name, "-");
        printf("%s%stask %s%s%s%s %s\n", verb, *verb ? " " : "", cli_num(t, "id"),
               named ? " (" : "", named ? name : "", named ? ")" : "",
               *verb || !strcmp(st, "cancelled") ? st : "stopping");
}

int cli_cancel(cli *c, int argc, char **argv)
{
        enum { O_STATE = 256, O_QUEUE, O_TENANT, O_NAME, O_DRY, O_GRACE, O_SIGNAL };
        static const struct option lo[] = {{"state", required_argument, 0, O_STATE},
                                           {"queue", required_argument, 0, O_QUEUE},
                                           {"tenant", required_argument, 0, O_TENANT},
                                           {"name", required_argument, 0, O_NAME},
                                           {"dry-run", no_argument, 0, O_DRY},
                                           {"grace", required_argument, 0, O_GRACE},
                                           {"signal", required_argument, 0, O_SIGNAL},
                                           {"json", no_argument, 0, 'j'},
                                           {"help", no_argument, 0, 'h'},
                                           {0, 0, 0, 0}};
        cli_task_filter f = {.gpu = -1};
        bool dry = false, filtered = false;
        long grace = -1;
        int sig = 0, opt;
        char *end;
        optind = 1;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "+:hj", lo, NULL)) != -1) {
                switch (opt) {
                case O_STATE:
                        if (!cli_states_ok("cancel", optarg, cli_state_words(true)))
                                return KERF_EXIT_USAGE;
                        f.states = optarg;
                        filtered = true;
                        break;
                case O_QUEUE:
                case O_TENANT:
                        if (!cli_name_ok("cancel", opt == O_QUEUE ? "--queue" : "--tenant", optarg))
                                return KERF_EXIT_USAGE;
                        *(opt == O_QUEUE ? &f.queue : &f.tenant) = optarg;
                        filtered = true;
                        break;
                case O_NAME:
                        f.name = optarg;
                        filtered = true;
                        break;
                case O_DRY:
                        dry = true;
                        break;
                case O_GRACE:
                        errno = 0;
                        grace = strtol(optarg, &end, 10);
                        if (!*optarg || *end || errno || grace < 0 || grace > KERF_MAX_GRACE_S) {
                                cli_err("cancel: --grace: '%s' is not a number of seconds "
                                        "0..%d",
                                        optarg, KERF_MAX_GRACE_S);
                                return KERF_EXIT_USAGE;
                        }
                        break;
                case O_SIGNAL:
                        if ((sig = parse_signal(optarg)) < 0) {
                                cli_err("cancel: --signal: '%s' is not a signal (a name such as "
                                        "TERM, INT, KILL, USR1, HUP, or a number 1..64)",
                                        optarg);
                                return KERF_EXIT_USAGE;
                        }
                        break;
                case 'j':
                        c->json = true;
                        break;
                case 'h':
                        cli_usage(stdout, argv[0]);
                        return 0;
                default:
                        return cli_bad_flag("cancel", opt, argv, lo);
                }
        }
        int nids = argc - optind;
        unsigned long long *ids = calloc((size_t)nids + 1, sizeof(*ids));
        if (!ids)
                return KERF_EXIT_REFUSED;
        for (int i = 0; i < nids; i++)
                if (!cli_parse_id(argv[optind + i], &ids[i])) {
                        free(ids);
                        return KERF_EXIT_USAGE;
                }
        if (!nids && !filtered) {
                cli_err("cancel: give task ids or a filter (--state, --queue, --tenant, --name); "
                        "see kerf cancel --help");
                free(ids);
                return KERF_EXIT_USAGE;
        }
        /* the targets: the ids (those matching the filter, when one is given), or every
         * unfinished task the filter matches */
        json_t *targets = json_array(), *t;
        int ex = 0, n_missing = 0;
        if (!f.states)
                f.states = "pending,starting,running";
        if (!nids) {
                char *next = NULL;
                json_t *items = NULL;
                ex = cli_task_fetch(c, &f, NULL, 1000, true, &items, &next, NULL);
                free(next);
                if (ex) {
                        json_decref(targets);
                        free(ids);
                        return ex;
                }
                json_array_extend(targets, items);
                json_decref(items);
        }
        for (int i = 0; i < nids; i++) {
                char path[64];
                json_t *task = NULL;
                snprintf(path, sizeof(path), "/v1/tasks/%llu", ids[i]);
                if (!filtered && !dry) { /* no need to look first */
                        json_array_append_new(targets,
                                              json_pack("{s:I}", "id", (json_int_t)ids[i]));
                        continue;
                }
                int e = cli_call(c, "GET", path, NULL, &task);
                if (e == KERF_EXIT_UNREACHABLE || e == KERF_EXIT_DENIED) {
                        json_decref(targets);
                        free(ids);
                        return e;
                }
                if (e) {
                        n_missing++;
                        continue;
                }
                if (cli_task_match(&f, task))
                        json_array_append(targets, task);
                else
                        fprintf(stderr, "kerf: task %llu does not match the filter; left alone\n",
                                ids[i]);
                json_decref(task);
        }
        free(ids);
        size_t n = json_array_size(targets), i;
        if (n == 0) {
                if (!n_missing)
                        cli_err("cancel: no task matches");
                json_decref(targets);
                return KERF_EXIT_NOT_FOUND;
        }
        if (dry) {
                if (c->json)
                        cli_print_json(targets);
                else
                        json_array_foreach(targets, i, t) task_line("would cancel", t);
                json_decref(targets);
                return n_missing ? KERF_EXIT_REFUSED : 0;
        }
        json_t *body = NULL;
        if (grace >= 0 || sig) {
                body = json_object();
                if (grace >= 0)
                        json_object_set_new(body, "grace_s", json_integer(grace));
                if (sig)
                        json_object_set_new(body, "signal", json_integer(sig));
        }
        json_t *done = json_array();
        int n_ok = 0, n_nf = n_missing, n_bad = 0;
        json_array_foreach(targets, i, t)
        {
                json_t *res = NULL;
                int e =
                    cancel_one(c, (unsigned long long)json_integer_value(json_object_get(t, "id")),
                               body, &res);
                if (e == KERF_EXIT_UNREACHABLE || e == KERF_EXIT_DENIED) {
                        ex = e;
                        break;
                }
                if (e == KERF_EXIT_NOT_FOUND)
                        n_nf++;
                else if (e)
                        n_bad++;
                else {
                        n_ok++;
                        if (!c->json)
                                task_line("", res);
                        json_array_append_new(done, res);
                }
        }
        json_decref(body);
        json_decref(targets);
        if (c->json) {
                /* one id: the task object, as before; more: the array of what was cancelled */
                if (nids == 1 && !filtered && json_array_size(done) == 1)
                        cli_print_json(json_array_get(done, 0));
                else if (n_ok || nids != 1)
                        cli_print_json(done);
        }
        json_decref(done);
        if (ex)
                return ex;
        if (!n_ok && !n_bad)
                return KERF_EXIT_NOT_FOUND;
        return n_nf || n_bad ? KERF_EXIT_REFUSED : 0;
}
