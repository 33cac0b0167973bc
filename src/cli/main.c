/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - the kerf command-line tool: global flags and verb dispatch */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "replay_cli.h"

static const struct {
        const char *name;
        cli_verb_fn fn;
        bool local; /* runs without kerfd */
} verbs[] = {
    {"submit", cli_submit, false},   {"run", cli_run, false},
    {"ls", cli_ls, false},           {"show", cli_show, false},
    {"cancel", cli_cancel, false},   {"logs", cli_logs, false},
    {"explain", cli_explain, false}, {"gpus", cli_gpus, false},
    {"units", cli_units, false},     {"tenants", cli_tenants, false},
    {"tenant", cli_tenants, false},  {"quota", cli_quota, false},
    {"queue", cli_queue, false},     {"audit", cli_audit, false},
    {"top", cli_top, false},         {"version", cli_version, false},
    {"suspend", cli_suspend, false}, {"resume", cli_resume, false},
    {"cost", cli_cost, false},       {"export", cli_export, false},
    {"cdi", cli_cdi, false},         {"slurm", cli_slurm, false},
    {"history", cli_history, false}, {"gc", cli_gc, false},
    {"replay", NULL, true},          {"hold", cli_hold, false},
    {"release", cli_release, false}, {"update", cli_update, false},
    {"gpu", cli_gpu, false},
};

int main(int argc, char **argv)
{
        cli c = {.prog = "kerf"};
        kerf_client_opts o = {0};
        int i = 1;
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
                        c.json = true;
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
        if (!strcmp(verb, "help")) {
                cli_usage(stdout, i + 1 < argc ? argv[i + 1] : NULL);
                return 0;
        }
        if (strcmp(verb, "replay")) { /* the client configuration file; flags and env win */
                int ex = cli_config_load(&o, &c.json, &node);
                if (ex)
                        return ex;
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
        for (size_t v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++) {
                if (strcmp(verb, verbs[v].name) != 0)
                        continue;
                int vargc = argc - i;
                char **vargv = argv + i;
                if (verbs[v].local) /* runs here, without kerfd */
                        return kerf_replay_cli(vargc, vargv);
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
                int ex = verbs[v].fn(&c, vargc, vargv);
                kerf_client_free(c.client);
                return ex;
        }
        const char *names[sizeof(verbs) / sizeof(verbs[0]) + 3] = {"help", "cluster", "poc"};
        for (size_t v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
                names[v + 3] = verbs[v].name;
        const char *near = cli_nearest(verb, names, sizeof(names) / sizeof(names[0]));
        cli_err("unknown command '%s'%s%s%s (see kerf --help)", verb,
                near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
        return KERF_EXIT_USAGE;
}
