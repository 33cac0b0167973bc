/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - the kerf command-line tool: global flags and verb dispatch */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "replay_cli.h"

/* Every verb, in the order of `kerf help --commands`. A verb declares what the global --json
 * does to it: no_json NULL means it prints its answer as JSON; else --json is refused with
 * "kerf VERB: --json is not supported; <no_json>" (it_cli_json runs every verb with --json, so
 * a new verb needs this decision). help, cluster and poc are dispatched by main() itself. */
static const struct verb {
        const char *name;
        cli_verb_fn fn;
        bool local;          /* runs without kerfd */
        const char *no_json; /* NULL: --json honoured; else why not and what to use */
} verbs[] = {
    {"submit", cli_submit, false, NULL},
    {"run", cli_run, false,
     "it streams the task's output; use kerf --json submit, then kerf --json show ID"},
    {"ls", cli_ls, false, NULL},
    {"show", cli_show, false, NULL},
    {"cancel", cli_cancel, false, NULL},
    {"logs", cli_logs, false,
     "it prints the task's raw output; kerf --json show ID has its log paths"},
    {"explain", cli_explain, false, NULL},
    {"gpus", cli_gpus, false, NULL},
    {"units", cli_units, false, NULL},
    {"tenants", cli_tenants, false, NULL},
    {"tenant", cli_tenants, false, NULL},
    {"quota", cli_quota, false, NULL},
    {"queue", cli_queue, false, NULL},
    {"audit", cli_audit, false, NULL},
    {"top", cli_top, false, NULL},
    {"version", cli_version, false, NULL},
    {"suspend", cli_suspend, false, NULL},
    {"resume", cli_resume, false, NULL},
    {"cost", cli_cost, false, NULL},
    {"export", cli_export, false, NULL},
    {"cdi", cli_cdi, false, NULL},
    {"slurm", cli_slurm, false, NULL},
    {"history", cli_history, false, NULL},
    {"gc", cli_gc, false, NULL},
    {"replay", NULL, true, NULL},
    {"hold", cli_hold, false, NULL},
    {"release", cli_release, false, NULL},
    {"update", cli_update, false, NULL},
    {"gpu", cli_gpu, false, NULL},
    {"cluster", NULL, false, NULL},
    {"poc", NULL, false, "it writes its report as JSON to OUT/report.json"},
    {"help", NULL, false, "it prints text"},
};
#define N_VERBS (sizeof(verbs) / sizeof(verbs[0]))

static const struct verb *verb_get(const char *name)
{
        for (size_t v = 0; v < N_VERBS; v++)
                if (!strcmp(name, verbs[v].name))
                        return &verbs[v];
        return NULL;
}

int cli_json_refuse(const char *verb)
{
        const struct verb *v = verb_get(verb);
        fprintf(stderr, "kerf %s: --json is not supported; %s\n", verb,
                v && v->no_json ? v->no_json : "it prints text");
        return KERF_EXIT_USAGE;
}

/* kerf replay with the global --json: its own --json added to its arguments. */
static int replay(int argc, char **argv, bool json)
{
        char **a;
        int ex;
        if (!json)
                return kerf_replay_cli(argc, argv);
        if (!(a = calloc((size_t)argc + 2, sizeof(*a)))) {
                cli_err("out of memory");
                return KERF_EXIT_REFUSED;
        }
        memcpy(a, argv, (size_t)argc * sizeof(*a));
        a[argc] = "--json";
        ex = kerf_replay_cli(argc + 1, a);
        free(a);
        return ex;
}

int main(int argc, char **argv)
{
        cli c = {.prog = "kerf"};
        kerf_client_opts o = {0};
        int i = 1;
        bool json_flag = false; /* --json given (the config file's default is not refused) */
        const char *node = NULL;
        for (; i < argc && argv[i][0] == '-'; i++) {
                static const char *const gflags[] = {"--socket", "--url",  "--token",  "--node",
                                                     "--json",   "--help", "--version"};
                char *a = argv[i], *val = NULL, *eq = strchr(a, '=');
                if (eq && !strncmp(a, "--", 2)) { /* --flag=value as well as --flag value */
                        *eq = '\0';
                        val = eq + 1;
                }
                bool takes = !strcmp(a, "--socket") || !strcmp(a, "--url") ||
                             !strcmp(a, "--token") || !strcmp(a, "--node");
                if (takes && !val) {
                        if (i + 1 >= argc) {
                                cli_err("%s needs a value (see kerf --help)", a);
                                return KERF_EXIT_USAGE;
                        }
                        val = argv[++i];
                } else if (!takes && val) {
                        cli_err("%s takes no value (see kerf --help)", a);
                        return KERF_EXIT_USAGE;
                }
                if (!strcmp(a, "--json")) {
                        c.json = json_flag = true;
                } else if (!strcmp(a, "--socket")) {
                        o.socket = val;
                } else if (!strcmp(a, "--url")) {
                        o.url = val;
                } else if (!strcmp(a, "--token")) {
                        o.token = val;
                } else if (!strcmp(a, "--node")) {
                        node = val;
                } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
                        cli_usage(stdout, NULL);
                        return 0;
                } else if (!strcmp(a, "--version")) {
                        printf("kerf %s\n", KERF_VERSION);
                        return 0;
                } else {
                        const char *near = cli_nearest(a, gflags, 7);
                        cli_err("unknown global flag '%s'%s%s%s (see kerf --help)", a,
                                near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
                        return KERF_EXIT_USAGE;
                }
        }
        if (i >= argc) {
                cli_usage(stderr, NULL);
                return KERF_EXIT_USAGE;
        }
        const char *verb = argv[i];
        const struct verb *vb = verb_get(verb);
        if (vb && vb->no_json && json_flag)
                return cli_json_refuse(verb);
        if (!strcmp(verb, "help") && i + 1 < argc && !strcmp(argv[i + 1], "--commands")) {
                for (size_t v = 0; v < N_VERBS; v++) /* for completion scripts and tests */
                        printf("%s\n", verbs[v].name);
                return 0;
        }
        if (!strcmp(verb, "help")) {
                cli_usage(stdout, i + 1 < argc ? argv[i + 1] : NULL);
                return 0;
        }
        if (strcmp(verb, "replay")) { /* the client configuration file; flags and env win */
                int ex = cli_config_load(&o, &c.json, &node);
                if (ex)
                        return ex;
                if (vb && vb->no_json)
                        c.json = false; /* a default for the verbs that print JSON */
        }
        if (node && (o.socket || o.url)) {
                cli_err("give one of --socket, --url and --node");
                return KERF_EXIT_USAGE;
        }
        if (node) {
                int ex = cli_cluster_node(node, &o); /* the nodes file's entry */
                if (ex)
                        return ex;
        }
        if (!strcmp(verb, "cluster")) /* one client per node of the nodes file */
                return cli_cluster(argc - i, argv + i, c.json);
        if (!strcmp(verb, "poc")) /* makes its own client (or spawns kerfd): src/poc */
                return cli_poc(argc - i, argv + i, &o);
        if (vb && vb->local) /* runs here, without kerfd */
                return replay(argc - i, argv + i, c.json);
        if (vb && vb->fn) {
                int vargc = argc - i;
                char **vargv = argv + i;
                if (cli_wants_help(vargc, vargv))
                        return 0;
                if (o.url && strncmp(o.url, "http://", 7) != 0) {
                        cli_err("--url: '%s' must start with http:// (loopback TCP)", o.url);
                        return KERF_EXIT_USAGE;
                }
                c.opts = o;
                int r = kerf_client_new(&o, &c.client);
                if (r < 0) {
                        cli_err("cannot set up the client: bad --socket/--url/--token");
                        return KERF_EXIT_USAGE;
                }
                int ex = vb->fn(&c, vargc, vargv);
                kerf_client_free(c.client);
                return ex;
        }
        const char *names[N_VERBS];
        for (size_t v = 0; v < N_VERBS; v++)
                names[v] = verbs[v].name;
        const char *near = cli_nearest(verb, names, sizeof(names) / sizeof(names[0]));
        cli_err("unknown command '%s'%s%s%s (see kerf --help)", verb,
                near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
        return KERF_EXIT_USAGE;
}
