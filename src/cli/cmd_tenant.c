/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_tenant.c - kerf tenant create NAME / kerf tenant patch NAME: the flags are made from
 * kerf_tenant_fields (the descriptors kerfd checks the body with), one per field of
 * POST /v1/tenants or PATCH /v1/tenants/{name} that has a flag */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "kerf/core.h"
#include "kerf/fields.h"

/* getopt values: 256 + i for kerf_tenant_fields[i]'s flag */
enum { O_FIELD = 256, O_JSON = 1024 };

/* The long options of the verb whose objects are `object`, --json and --help. */
static void tenant_opts(unsigned object, struct option *lo, size_t cap)
{
        cli_field_options(kerf_tenant_fields, kerf_tenant_fields_count, object, O_FIELD, O_JSON, lo,
                          cap);
}

void cli_tenant_flags_help(FILE *out)
{
        static const struct {
                const char *head;
                unsigned object;
        } verbs[] = {
            {"kerf tenant create NAME (admin):\n", KERF_FIELD_TENANT_CREATE},
            {"kerf tenant patch NAME (admin; 'default' puts a ceiling back to "
             "tenant_defaults):\n",
             KERF_FIELD_TENANT_PATCH},
        };
        char line[1024];

        for (size_t v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++) {
                fputs(verbs[v].head, out);
                for (size_t i = 0; i < kerf_tenant_fields_count; i++)
                        if (kerf_tenant_fields[i].objects & verbs[v].object)
                                fputs(kerf_field_help_line(&kerf_tenant_fields[i], line,
                                                           sizeof(line)),
                                      out);
        }
}

/* argv: "tenant", "create"|"patch", NAME, flags... */
int cli_tenant_write(cli *c, int argc, char **argv)
{
        bool patch = !strcmp(argv[1], "patch");
        unsigned object = patch ? KERF_FIELD_TENANT_PATCH : KERF_FIELD_TENANT_CREATE;
        const char *verb = patch ? "tenant patch" : "tenant create", *name = argv[2];
        struct option lo[64];
        json_t *b, *j = NULL;
        char path[128];
        int opt, ex;

        if (!kerf_name_ok(name)) {
                cli_err("%s: '%s' is not a name (" KERF_NAME_RULE ")", verb, name);
                return KERF_EXIT_USAGE;
        }
        tenant_opts(object, lo, sizeof(lo) / sizeof(lo[0]));
        b = patch ? json_object() : json_pack("{s:s}", "name", name);
        optind = 1;
        opterr = 0;
        /* argv + 2: NAME stands where getopt expects the program's name */
        while ((opt = getopt_long(argc - 2, argv + 2, "+:h", lo, NULL)) != -1) {
                if (opt >= O_FIELD && opt < O_FIELD + (int)kerf_tenant_fields_count) {
                        const kerf_field *f = &kerf_tenant_fields[opt - O_FIELD];
                        if (patch && (f->flags & KERF_FIELD_NULLABLE) &&
                            !strcmp(optarg, "default")) {
                                json_object_set_new(b, f->name, json_null());
                                continue;
                        }
                        if (json_is_null(json_object_get(b, f->name)))
                                json_object_del(b, f->name); /* a value after 'default' */
                        if (!cli_field_flag(b, f, optarg))
                                goto usage;
                        continue;
                }
                if (opt == O_JSON) {
                        c->json = true;
                        continue;
                }
                if (opt == 'h') {
                        cli_usage(stdout, "tenant");
                        json_decref(b);
                        return 0;
                }
                cli_bad_flag(verb, opt, argv + 2, lo);
                goto usage;
        }
        if (optind < argc - 2) {
                cli_err("%s: unexpected argument '%s'", verb, argv[2 + optind]);
                goto usage;
        }
        if (patch && json_object_size(b) == 0) {
                cli_err("tenant patch: nothing to change (see kerf tenant --help)");
                goto usage;
        }
        if (patch) {
                snprintf(path, sizeof(path), "/v1/tenants/%s", name);
                ex = cli_call(c, "PATCH", path, b, &j);
        } else {
                ex = cli_call(c, "POST", "/v1/tenants", b, &j);
        }
        json_decref(b);
        if (ex)
                return ex;
        if (c->json)
                cli_print_json(j);
        else
                printf("tenant %s %s\n", name, patch ? "changed" : "created");
        json_decref(j);
        return 0;
usage:
        json_decref(b);
        return KERF_EXIT_USAGE;
}
