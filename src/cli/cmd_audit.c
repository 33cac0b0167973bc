/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_audit.c - kerf audit checkpoint / verify --against / verify --in / verify --bundle: the
 * chain anchored outside kerfd's database (docs/STATE.md "Checkpoints"); the bundle of a cluster
 * export is checked by bundle.c */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "cli.h"
#include "kerf/store.h"

static int checkpoint(cli *c, int argc, char **argv)
{
        const char *out = NULL, *append = NULL;
        json_t *j = NULL;
        char *line;
        int ex;

        for (int i = 2; i < argc; i++) {
                if (!strcmp(argv[i], "--out") && i + 1 < argc)
                        out = argv[++i];
                else if (!strcmp(argv[i], "--append") && i + 1 < argc)
                        append = argv[++i];
                else {
                        cli_err("audit checkpoint: expected [--out FILE] [--append FILE]");
                        return KERF_EXIT_USAGE;
                }
        }
        if ((ex = cli_call(c, "POST", "/v1/audit/checkpoint", NULL, &j)))
                return ex;
        line = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(j);
        if (!line) {
                cli_err("audit checkpoint: out of memory");
                return KERF_EXIT_REFUSED;
        }
        const char *paths[2] = {out, append};
        for (int k = 0; k < 2; k++) {
                FILE *f;
                if (!paths[k] || !strcmp(paths[k], "-"))
                        continue;
                f = fopen(paths[k], k ? "ae" : "we");
                if (!f || fprintf(f, "%s\n", line) < 0 || fclose(f) != 0) {
                        cli_err("audit checkpoint: %s: %s", paths[k], strerror(errno));
                        free(line);
                        return KERF_EXIT_REFUSED;
                }
        }
        if ((!out && !append) || (out && !strcmp(out, "-")))
                printf("%s\n", line);
        free(line);
        return 0;
}

/* The last non-empty line of a checkpoint file (an --append log holds one per line). */
static int load_checkpoint(const char *path, const char *pub, kerf_store_checkpoint *cp)
{
        char *text = cli_file_read(path, NULL), *last = NULL, err[256];
        int r;

        if (!text) {
                cli_err("--against %s: %s", path, strerror(errno));
                return KERF_EXIT_USAGE;
        }
        for (char *p = strtok(text, "\n"); p; p = strtok(NULL, "\n"))
                if (*p)
                        last = p;
        r = last ? kerf_store_checkpoint_parse(last, pub, cp, err, sizeof(err)) : -EINVAL;
        if (r < 0) {
                cli_err("--against %s: %s", path, last ? err : "empty file");
                free(text);
                return KERF_EXIT_REFUSED;
        }
        free(text);
        return 0;
}

static int report(cli *c, const kerf_store_audit_report *rep, const kerf_store_checkpoint *cp,
                  const char *src)
{
        if (c->json) {
                json_t *j = json_pack("{s:b, s:I, s:o, s:s, s:s}", "ok", rep->ok, "records",
                                      (json_int_t)rep->records, "first_bad",
                                      rep->first_bad ? json_integer((json_int_t)rep->first_bad)
                                                     : json_null(),
                                      "problem", rep->problem, "source", src);
                if (cp)
                        json_object_set_new(j, "checkpoint_seq", json_integer((json_int_t)cp->seq));
                cli_print_json(j);
                json_decref(j);
        } else if (rep->ok && cp) {
                printf("audit chain intact: %llu records (%s), holds the checkpointed record "
                       "%llu\n",
                       (unsigned long long)rep->records, src, (unsigned long long)cp->seq);
        } else if (rep->ok) {
                printf("audit chain intact: %llu records (%s)\n", (unsigned long long)rep->records,
                       src);
        } else {
                printf("audit chain BROKEN at record %llu (%s): %s\n",
                       (unsigned long long)rep->first_bad, src, rep->problem);
        }
        return rep->ok ? 0 : KERF_EXIT_REFUSED;
}

static int verify(cli *c, int argc, char **argv)
{
        const char *in = NULL, *against = NULL, *key = NULL, *bundle = NULL, *nodes = NULL;
        kerf_store_checkpoint cp;
        kerf_store_audit_report rep;
        char pub[KERF_STORE_PK_HEX];
        FILE *f;
        char *body = NULL;
        int ex, r;

        for (int i = 2; i < argc; i++) {
                if (!strcmp(argv[i], "--in") && i + 1 < argc)
                        in = argv[++i];
                else if (!strcmp(argv[i], "--against") && i + 1 < argc)
                        against = argv[++i];
                else if (!strcmp(argv[i], "--key") && i + 1 < argc)
                        key = argv[++i];
                else if (!strcmp(argv[i], "--bundle") && i + 1 < argc)
                        bundle = argv[++i];
                else if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
                        nodes = argv[++i];
                else {
                        cli_err("audit verify: expected [--in EXPORT] [--against CHECKPOINT] "
                                "[--key PUBLIC_KEY] or --bundle DIR [--nodes FILE]");
                        return KERF_EXIT_USAGE;
                }
        }
        if (bundle && (in || against || key)) {
                /* each node signs with its own key: pin one with --in/--against/--key */
                cli_err("audit verify --bundle DIR takes no --in, --against or --key (one node: "
                        "kerf audit verify --in DIR/NODE/audit.jsonl --against "
                        "DIR/NODE/checkpoint.json --key PUB)");
                return KERF_EXIT_USAGE;
        }
        if (nodes && !bundle) {
                cli_err("audit verify: --nodes FILE goes with --bundle DIR (it pins the nodes "
                        "and their keys a cluster bundle must hold)");
                return KERF_EXIT_USAGE;
        }
        if (bundle) {
                cli_bundle_pin *pins = NULL;
                size_t n_pins = 0;
                char path[4096];
                if (nodes && (ex = cli_cluster_pins(nodes, &pins, &n_pins, path, sizeof(path))))
                        return ex;
                ex = cli_bundle_verify(bundle, pins, n_pins, nodes ? path : NULL, c->json);
                free(pins);
                return ex;
        }
        if (key && (ex = cli_pub_key(key, "--key", pub)))
                return ex;
        if (against && (ex = load_checkpoint(against, key ? pub : NULL, &cp)))
                return ex;
        if (in) {
                f = fopen(in, "re");
                if (!f) {
                        cli_err("audit verify: %s: %s", in, strerror(errno));
                        return KERF_EXIT_USAGE;
                }
        } else {
                /* the chain as kerfd holds it, checked here against the checkpoint */
                if ((ex = cli_call_raw(c, "GET", "/v1/audit/export", &body)))
                        return ex;
                f = fmemopen(body, strlen(body), "r");
                if (!f) {
                        free(body);
                        cli_err("audit verify: out of memory");
                        return KERF_EXIT_REFUSED;
                }
        }
        r = kerf_store_audit_verify_file(f, against ? &cp : NULL, &rep);
        fclose(f);
        free(body);
        if (r < 0) {
                cli_err("audit verify: %s: %s", in ? in : "export", strerror(-r));
                return KERF_EXIT_REFUSED;
        }
        return report(c, &rep, against ? &cp : NULL, in ? in : "kerfd export");
}

int cli_audit_anchor(cli *c, int argc, char **argv)
{
        if (!strcmp(argv[1], "checkpoint"))
                return checkpoint(c, argc, argv);
        return verify(c, argc, argv);
}
