/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_cluster.c - kerf cluster gpus|units|top|audit export: every node's kerfd, read-only, from
 * a nodes file (docs/CLUSTER.md "Cluster view"); kerf --node NAME picks one node of it */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <yaml.h>

#include "bundle.h"
#include "cli.h"
#include "kerf/core.h"

#define MAX_NODES 256

typedef struct cnode {
        char name[64]; /* sizeof(cli_bundle_pin.name) */
        char socket[256];
        char url[256];
        char token[256];
        char audit_key[KERF_STORE_PK_HEX]; /* "" when the file gives none */
} cnode;

static cnode nodes[MAX_NODES];
static size_t n_nodes;

/* Where the nodes file is: `opt`, $KERF_NODES, or ~/.config/kerf/nodes.yaml. */
static void nodes_path(const char *opt, char *out, size_t cap)
{
        const char *e = getenv("KERF_NODES"), *home = getenv("HOME");
        if (opt)
                snprintf(out, cap, "%s", opt);
        else if (e && *e)
                snprintf(out, cap, "%s", e);
        else
                snprintf(out, cap, "%s/.config/kerf/nodes.yaml", home ? home : "");
}

static int bad(const char *path, const yaml_node_t *n, const char *what)
{
        cli_err("%s:%zu: %s", path, n ? n->start_mark.line + 1 : 0, what);
        return KERF_EXIT_USAGE;
}

static int set_str(const char *path, yaml_node_t *v, const char *key, char *out, size_t cap)
{
        char msg[160];
        if (v->type != YAML_SCALAR_NODE || v->data.scalar.length == 0 ||
            v->data.scalar.length >= cap) {
                snprintf(msg, sizeof(msg), "%s: a string of 1..%zu characters", key, cap - 1);
                return bad(path, v, msg);
        }
        snprintf(out, cap, "%s", (const char *)v->data.scalar.value);
        return 0;
}

/* audit_key: the node's audit public key, 64 hex digits or a file holding them (a relative
 * path is taken from the nodes file's directory). */
static int set_key(const char *path, yaml_node_t *v, char out[KERF_STORE_PK_HEX])
{
        char arg[4096], why[512], msg[700];
        const char *s, *slash = strrchr(path, '/');

        if (v->type != YAML_SCALAR_NODE || v->data.scalar.length == 0 ||
            v->data.scalar.length >= 2048)
                return bad(path, v, "audit_key: 64 hex digits or a file holding them");
        s = (const char *)v->data.scalar.value;
        if (s[0] != '/' && strlen(s) != KERF_STORE_PK_HEX - 1 && slash)
                snprintf(arg, sizeof(arg), "%.*s/%s", (int)(slash - path), path, s);
        else
                snprintf(arg, sizeof(arg), "%s", s);
        if (cli_pub_key_parse(arg, out, why, sizeof(why)) < 0) {
                snprintf(msg, sizeof(msg), "audit_key: %s", why);
                return bad(path, v, msg);
        }
        return 0;
}

/* Reads the nodes file:
 *   nodes:
 *     - {name: n1, socket: /run/kerf/kerfd.sock}
 *     - {name: n2, url: "http://127.0.0.1:7070", token: "..."}
 * Every mistake is one line naming the file and line; returns 0 or KERF_EXIT_USAGE. */
static int load_nodes(const char *path)
{
        FILE *f = fopen(path, "re");
        yaml_parser_t p;
        yaml_document_t d;
        yaml_node_t *root, *seq = NULL;
        int ex = 0;

        n_nodes = 0;
        if (!f) {
                cli_err("nodes file %s: %s (--nodes FILE, $KERF_NODES or "
                        "~/.config/kerf/nodes.yaml)",
                        path, strerror(errno));
                return KERF_EXIT_USAGE;
        }
        yaml_parser_initialize(&p);
        yaml_parser_set_input_file(&p, f);
        if (!yaml_parser_load(&p, &d)) {
                cli_err("%s:%zu: not YAML: %s", path, p.problem_mark.line + 1,
                        p.problem ? p.problem : "?");
                yaml_parser_delete(&p);
                fclose(f);
                return KERF_EXIT_USAGE;
        }
        root = yaml_document_get_root_node(&d);
        if (!root || root->type != YAML_MAPPING_NODE) {
                ex = bad(path, root, "expected a mapping with `nodes:`");
                goto out;
        }
        for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
             pr < root->data.mapping.pairs.top; pr++) {
                yaml_node_t *k = yaml_document_get_node(&d, pr->key);
                if (k->type == YAML_SCALAR_NODE && !strcmp((char *)k->data.scalar.value, "nodes"))
                        seq = yaml_document_get_node(&d, pr->value);
                else {
                        ex = bad(path, k, "unknown key (nodes)");
                        goto out;
                }
        }
        if (!seq || seq->type != YAML_SEQUENCE_NODE ||
            seq->data.sequence.items.start == seq->data.sequence.items.top) {
                ex = bad(path, seq ? seq : root, "nodes: a list of at least one node");
                goto out;
        }
        for (yaml_node_item_t *it = seq->data.sequence.items.start;
             it < seq->data.sequence.items.top; it++) {
                yaml_node_t *m = yaml_document_get_node(&d, *it);
                cnode *c;
                if (n_nodes >= MAX_NODES) {
                        ex = bad(path, m, "more than 256 nodes");
                        goto out;
                }
                c = &nodes[n_nodes];
                memset(c, 0, sizeof(*c));
                if (m->type != YAML_MAPPING_NODE) {
                        ex = bad(path, m,
                                 "a node is a mapping {name, socket | url, token, audit_key}");
                        goto out;
                }
                for (yaml_node_pair_t *pr = m->data.mapping.pairs.start;
                     pr < m->data.mapping.pairs.top; pr++) {
                        yaml_node_t *k = yaml_document_get_node(&d, pr->key);
                        yaml_node_t *v = yaml_document_get_node(&d, pr->value);
                        const char *ks =
                            k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
                        if (!strcmp(ks, "name"))
                                ex = set_str(path, v, ks, c->name, sizeof(c->name));
                        else if (!strcmp(ks, "socket"))
                                ex = set_str(path, v, ks, c->socket, sizeof(c->socket));
                        else if (!strcmp(ks, "url"))
                                ex = set_str(path, v, ks, c->url, sizeof(c->url));
                        else if (!strcmp(ks, "token"))
                                ex = set_str(path, v, ks, c->token, sizeof(c->token));
                        else if (!strcmp(ks, "audit_key"))
                                ex = set_key(path, v, c->audit_key);
                        else
                                ex = bad(path, k,
                                         "unknown key (name, socket, url, token, audit_key)");
                        if (ex)
                                goto out;
                }
                if (!kerf_name_ok(c->name))
                        ex = bad(path, m, "name: 1..63 characters [A-Za-z0-9_.-]");
                else if (!c->socket[0] == !c->url[0])
                        ex = bad(path, m, "give exactly one of socket and url");
                else if (c->url[0] && strncmp(c->url, "http://", 7) != 0)
                        ex = bad(path, m, "url: must start with http://");
                for (size_t j = 0; !ex && j < n_nodes; j++)
                        if (!strcmp(nodes[j].name, c->name))
                                ex = bad(path, m, "name: listed twice");
                if (ex)
                        goto out;
                n_nodes++;
        }
out:
        yaml_document_delete(&d);
        yaml_parser_delete(&p);
        fclose(f);
        return ex;
}

static void opts_of(const cnode *c, kerf_client_opts *o)
{
        memset(o, 0, sizeof(*o));
        o->socket = c->socket[0] ? c->socket : NULL;
        o->url = c->url[0] ? c->url : NULL;
        o->token = c->token[0] ? c->token : NULL;
        o->timeout_ms = 5000; /* one dead node must not hold the view up */
}

int cli_cluster_node(const char *name, kerf_client_opts *o)
{
        char path[4096];
        int ex;
        nodes_path(NULL, path, sizeof(path));
        if ((ex = load_nodes(path)))
                return ex;
        for (size_t i = 0; i < n_nodes; i++)
                if (!strcmp(nodes[i].name, name)) {
                        opts_of(&nodes[i], o);
                        return 0;
                }
        cli_err("--node: no node '%s' in %s", cli_safe(name), path);
        return KERF_EXIT_USAGE;
}

int cli_cluster_pins(const char *file, cli_bundle_pin **ret, size_t *ret_n, char *path,
                     size_t pathcap)
{
        int ex;
        nodes_path(file, path, pathcap);
        if ((ex = load_nodes(path)))
                return ex;
        if (!(*ret = calloc(n_nodes, sizeof(**ret)))) {
                cli_err("out of memory");
                return KERF_EXIT_REFUSED;
        }
        for (size_t i = 0; i < n_nodes; i++) {
                memcpy((*ret)[i].name, nodes[i].name, sizeof((*ret)[i].name));
                memcpy((*ret)[i].key, nodes[i].audit_key, sizeof((*ret)[i].key));
        }
        *ret_n = n_nodes;
        return 0;
}

/* GET path on node i into *ret; on failure *ret_why says why (static). 0 or an exit code. */
static int node_get(size_t i, const char *method, const char *path, json_t **ret, char **raw,
                    char *why, size_t cap)
{
        kerf_client_opts o;
        kerf_client *kc = NULL;
        kerf_client_response rs;
        int r;
        opts_of(&nodes[i], &o);
        if (kerf_client_new(&o, &kc) < 0) {
                snprintf(why, cap, "bad endpoint");
                return KERF_EXIT_USAGE;
        }
        r = kerf_client_call(kc, method, path, NULL, &rs);
        if (r < 0) {
                snprintf(why, cap, "unreachable: %s", kerf_client_error(kc));
                kerf_client_free(kc);
                return KERF_EXIT_UNREACHABLE;
        }
        kerf_client_free(kc);
        if (rs.status < 200 || rs.status >= 300) {
                snprintf(why, cap, "refused: HTTP %ld %.200s", rs.status, rs.body ? rs.body : "");
                kerf_client_response_fini(&rs);
                return KERF_EXIT_REFUSED;
        }
        if (raw) {
                *raw = rs.body;
                rs.body = NULL;
        } else {
                *ret = json_loads(rs.body ? rs.body : "", 0, NULL);
        }
        kerf_client_response_fini(&rs);
        return 0;
}

typedef enum { V_GPUS, V_UNITS, V_TOP } view;

static void add_rows(cli_table *t, view v, const char *node, json_t *j)
{
        size_t i;
        json_t *x, *items = json_object_get(j, "items");
        if (v == V_TOP) {
                unsigned long long tot = 0, res = 0, util = 0;
                size_t n = json_array_size(items);
                char g[16], m[96], u[16];
                json_array_foreach(items, i, x)
                {
                        tot += (unsigned long long)json_integer_value(
                            json_object_get(x, "memory_total"));
                        res += (unsigned long long)json_integer_value(
                            json_object_get(x, "memory_reserved"));
                        util += (unsigned long long)json_integer_value(
                            json_object_get(x, "utilization"));
                }
                snprintf(g, sizeof(g), "%zu", n);
                char rs[KERF_UNITS_BUF], ts[KERF_UNITS_BUF];
                snprintf(m, sizeof(m), "%s/%s", kerf_format_size(res, rs, sizeof(rs)),
                         kerf_format_size(tot, ts, sizeof(ts)));
                snprintf(u, sizeof(u), "%llu%%", n ? util / n : 0);
                cli_table_add(t, node, g, m, u, "ok");
                return;
        }
        json_array_foreach(items, i, x)
        {
                if (v == V_GPUS)
                        cli_table_add(t, node, cli_num(x, "index"), cli_str(x, "uuid"),
                                      cli_str(x, "model"), cli_str(x, "mode"),
                                      cli_bytes(x, "memory_reserved"), cli_bytes(x, "memory_total"),
                                      json_is_true(json_object_get(x, "faulted")) ? "FAULT" : "ok");
                else
                        cli_table_add(t, node, cli_num(x, "id"), cli_str(x, "kind"),
                                      cli_str(x, "state"), cli_num(x, "gpu"),
                                      cli_str(x, "mig_profile"), cli_bytes(x, "memory"),
                                      cli_num(x, "task"));
        }
}

static int list_view(view v, bool json)
{
        static const char *const hg[] = {"NODE", "GPU",      "UUID",  "MODEL",
                                         "MODE", "RESERVED", "TOTAL", "STATE"};
        static const char *const hu[] = {"NODE", "UNIT",    "KIND",   "STATE",
                                         "GPU",  "PROFILE", "MEMORY", "TASK"};
        static const char *const ht[] = {"NODE", "GPUS", "MEMORY RESERVED", "UTIL", "STATE"};
        const char *path = v == V_UNITS ? "/v1/units?limit=1000" : "/v1/gpus?limit=1000";
        cli_table *t = v == V_GPUS    ? cli_table_new(hg, 8)
                       : v == V_UNITS ? cli_table_new(hu, 8)
                                      : cli_table_new(ht, 5);
        json_t *all = json_array();
        char fails[MAX_NODES][320];
        int ex = 0;

        for (size_t i = 0; i < n_nodes; i++) {
                json_t *j = NULL;
                fails[i][0] = '\0';
                if (node_get(i, "GET", path, &j, NULL, fails[i], sizeof(fails[i])) || !j) {
                        if (!fails[i][0])
                                snprintf(fails[i], sizeof(fails[i]), "refused: not JSON");
                        ex = KERF_EXIT_REFUSED;
                        json_array_append_new(all,
                                              json_pack("{s:s, s:b, s:s}", "node", nodes[i].name,
                                                        "ok", 0, "error", fails[i]));
                        continue;
                }
                add_rows(t, v, nodes[i].name, j);
                json_array_append_new(all, json_pack("{s:s, s:b, s:O}", "node", nodes[i].name, "ok",
                                                     1, "items", json_object_get(j, "items")));
                json_decref(j);
        }
        if (json) {
                json_t *o = json_pack("{s:o}", "nodes", all);
                cli_print_json(o);
                json_decref(o);
        } else {
                json_decref(all);
                cli_table_print(t, stdout);
                for (size_t i = 0; i < n_nodes; i++)
                        if (fails[i][0])
                                printf("%s: %s\n", nodes[i].name, cli_safe(fails[i]));
        }
        cli_table_free(t);
        return ex;
}

/* One directory per node: checkpoint.json (taken first), audit.jsonl (holds the checkpointed
 * record), node.json (which node and endpoint, when): each verifies on its own with
 * kerf audit verify --in DIR/NODE/audit.jsonl --against DIR/NODE/checkpoint.json. Then the
 * merged bundle over them (bundle.c): DIR/merged.jsonl and DIR/manifest.json, which lists a
 * node that failed with its reason; kerf audit verify --bundle DIR checks it whole. */
static int audit_export(const char *dir, bool json)
{
        int ex = 0;
        json_t *sum = json_array();
        cli_bundle_node *bn = calloc(n_nodes, sizeof(*bn));
        char err[4600];
        size_t merged = 0;

        if (!bn) {
                cli_err("cluster audit export: out of memory");
                json_decref(sum);
                return KERF_EXIT_REFUSED;
        }
        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                cli_err("cluster audit export: %s: %s", dir, strerror(errno));
                json_decref(sum);
                free(bn);
                return KERF_EXIT_USAGE;
        }
        for (size_t i = 0; i < n_nodes; i++) {
                char nd[4400], p[4500], why[4700] = "";
                char *cp = NULL, *body = NULL;
                FILE *f;
                int r;
                snprintf(bn[i].name, sizeof(bn[i].name), "%s", nodes[i].name);
                snprintf(bn[i].endpoint, sizeof(bn[i].endpoint), "%s",
                         nodes[i].socket[0] ? nodes[i].socket : nodes[i].url);
                bn[i].exported_s = (long long)time(NULL);
                memcpy(bn[i].key, nodes[i].audit_key, sizeof(bn[i].key));
                snprintf(nd, sizeof(nd), "%s/%s", dir, nodes[i].name);
                if (mkdir(nd, 0755) < 0 && errno != EEXIST) {
                        snprintf(why, sizeof(why), "%s: %s", nd, strerror(errno));
                        r = KERF_EXIT_REFUSED;
                } else {
                        r = node_get(i, "POST", "/v1/audit/checkpoint", NULL, &cp, why,
                                     sizeof(why));
                        if (!r)
                                r = node_get(i, "GET", "/v1/audit/export", NULL, &body, why,
                                             sizeof(why));
                }
                for (int k = 0; !r && k < 3; k++) {
                        static const char *const nm[] = {"checkpoint.json", "audit.jsonl",
                                                         "node.json"};
                        char meta[1024];
                        const char *txt = k == 0 ? cp : k == 1 ? body : meta;
                        size_t len;
                        snprintf(meta, sizeof(meta),
                                 "{\"node\": \"%s\", \"endpoint\": \"%s\", \"exported_s\": "
                                 "%lld}\n",
                                 bn[i].name, bn[i].endpoint, bn[i].exported_s);
                        len = strlen(txt ? txt : "");
                        snprintf(p, sizeof(p), "%s/%s", nd, nm[k]);
                        f = fopen(p, "we");
                        if (!f || fwrite(txt ? txt : "", 1, len, f) != len ||
                            (k == 0 && len && txt[len - 1] != '\n' && fputc('\n', f) == EOF) ||
                            fclose(f) != 0) {
                                snprintf(why, sizeof(why), "%s: %s", p, strerror(errno));
                                r = KERF_EXIT_REFUSED;
                        }
                }
                free(cp);
                free(body);
                if (r) { /* why is longer than the bundle keeps: cut */
                        size_t l = strnlen(why, sizeof(bn[i].error) - 1);
                        memcpy(bn[i].error, why, l);
                        bn[i].error[l] = '\0';
                }
        }
        /* the bundle reads each node's files back: one it cannot use is listed as failed */
        if (cli_bundle_write(dir, bn, n_nodes, &merged, err, sizeof(err)) < 0) {
                cli_err("cluster audit export: %s", err);
                ex = KERF_EXIT_REFUSED;
        }
        for (size_t i = 0; i < n_nodes; i++) {
                char nd[4400];
                snprintf(nd, sizeof(nd), "%s/%s", dir, bn[i].name);
                if (bn[i].error[0]) {
                        ex = KERF_EXIT_REFUSED;
                        if (!json)
                                printf("%s: %s\n", bn[i].name, cli_safe(bn[i].error));
                        json_array_append_new(sum, json_pack("{s:s, s:b, s:s}", "node", bn[i].name,
                                                             "ok", 0, "error", bn[i].error));
                } else {
                        if (!json)
                                printf("%s: %s\n", bn[i].name, nd);
                        json_array_append_new(sum, json_pack("{s:s, s:b, s:s}", "node", bn[i].name,
                                                             "ok", 1, "dir", nd));
                }
        }
        if (json) {
                json_t *o = json_pack("{s:o, s:s+, s:s+, s:I}", "nodes", sum, "manifest", dir,
                                      "/manifest.json", "merged", dir, "/merged.jsonl", "records",
                                      (json_int_t)merged);
                cli_print_json(o);
                json_decref(o);
        } else {
                json_decref(sum);
                printf("bundle: %s/manifest.json, %s/merged.jsonl (%zu records); kerf audit "
                       "verify --bundle %s\n",
                       dir, dir, merged, dir);
        }
        free(bn);
        return ex;
}

int cli_cluster(int argc, char **argv, bool json)
{
        const char *file = NULL, *out = NULL;
        char path[4096];
        int ex, nargs = 0;
        char *args[3] = {NULL, NULL, NULL};

        if (cli_wants_help(argc, argv))
                return 0;
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--json"))
                        json = true;
                else if ((!strcmp(argv[i], "--nodes") || !strcmp(argv[i], "--out")) &&
                         i + 1 < argc) {
                        if (!strcmp(argv[i], "--nodes"))
                                file = argv[++i];
                        else
                                out = argv[++i];
                } else if (argv[i][0] != '-' && nargs < 2) {
                        args[nargs++] = argv[i];
                } else {
                        cli_err("cluster: unexpected argument '%s' (see kerf cluster --help)",
                                argv[i]);
                        return KERF_EXIT_USAGE;
                }
        }
        if (!args[0]) {
                cli_err("cluster: missing view: gpus, units, top or audit export");
                return KERF_EXIT_USAGE;
        }
        bool audit = !strcmp(args[0], "audit");
        if (audit ? !args[1] || strcmp(args[1], "export") != 0 || !out
                  : (args[1] || out ||
                     (strcmp(args[0], "gpus") && strcmp(args[0], "units") &&
                      strcmp(args[0], "top")))) {
                cli_err("cluster: expected gpus | units | top | audit export --out DIR (see kerf "
                        "cluster --help)");
                return KERF_EXIT_USAGE;
        }
        nodes_path(file, path, sizeof(path));
        if ((ex = load_nodes(path)))
                return ex;
        if (audit)
                return audit_export(out, json);
        return list_view(!strcmp(args[0], "gpus")    ? V_GPUS
                         : !strcmp(args[0], "units") ? V_UNITS
                                                     : V_TOP,
                         json);
}
