/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_info.c - kerf gpus, units, tenants, quota, queue, audit, top, version */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "kerf/core.h"

/* Strips --json (anywhere) and returns the new argc. */
static int take_json(cli *c, int argc, char **argv)
{
        return cli_take_flag(argc, argv, "--json", NULL, &c->json);
}

static int no_args(int argc, char **argv)
{
        if (argc > 1) {
                cli_err("%s: unexpected argument '%s' (see kerf %s --help)", argv[0], argv[1],
                        argv[0]);
                return KERF_EXIT_USAGE;
        }
        return 0;
}

static json_t *items_of(json_t *j)
{
        json_t *it = json_object_get(j, "items");
        return it ? it : j;
}

/* GET of a paginated list, following "next" until the last page: one answer whose "items" holds
 * every page's items (and "next": null). `path` may already carry a query. */
static int call_all(cli *c, const char *path, json_t **ret)
{
        json_t *all = NULL;
        char *cursor = NULL;
        int ex = 0;

        for (unsigned page = 0; page < 100000; page++) {
                char p[512];
                json_t *j = NULL, *nx;
                if (cursor)
                        snprintf(p, sizeof(p), "%s%cafter=%s", path, strchr(path, '?') ? '&' : '?',
                                 cursor);
                else
                        snprintf(p, sizeof(p), "%s", path);
                free(cursor);
                cursor = NULL;
                if ((ex = cli_call(c, "GET", p, NULL, &j)))
                        break;
                nx = json_object_get(j, "next");
                if (json_is_string(nx) && *json_string_value(nx))
                        cursor = strdup(json_string_value(nx));
                if (!all) {
                        all = j;
                } else {
                        json_array_extend(items_of(all), items_of(j));
                        json_decref(j);
                }
                if (!cursor)
                        break;
        }
        free(cursor);
        if (ex) {
                json_decref(all);
                return ex;
        }
        if (all && json_is_object(all))
                json_object_set_new(all, "next", json_null());
        *ret = all;
        return 0;
}

static void print_gpus(json_t *j)
{
        static const char *const h[] = {"GPU",     "UUID", "MODEL", "MODE",      "MEMORY RESERVED",
                                        "COMPUTE", "UTIL", "STATE", "MIG LAYOUT"};
        cli_table *t = cli_table_new(h, 9);
        size_t i;
        json_t *g;
        json_array_foreach(items_of(j), i, g)
        {
                char mem[64], lay[160] = "", comp[16];
                snprintf(mem, sizeof(mem), "%s/%s", cli_bytes(g, "memory_reserved"),
                         cli_bytes(g, "memory_total"));
                snprintf(comp, sizeof(comp), "%s%%", cli_num(g, "compute_reserved"));
                size_t k;
                json_t *m;
                int o = 0;
                json_array_foreach(json_object_get(g, "mig_layout"), k, m)
                {
                        if (o < (int)sizeof(lay) - 40)
                                o += snprintf(lay + o, sizeof(lay) - (size_t)o, "%s%s@%s",
                                              o ? " " : "", cli_str(m, "profile"),
                                              cli_num(m, "start"));
                }
                cli_table_add(t, cli_num(g, "index"), cli_str(g, "uuid"), cli_str(g, "model"),
                              cli_str(g, "mode"), mem, comp, cli_num(g, "utilization"),
                              json_is_true(json_object_get(g, "faulted"))    ? "FAULT"
                              : json_is_true(json_object_get(g, "draining")) ? "DRAIN"
                                                                             : "ok",
                              o ? lay : "-");
        }
        cli_table_print(t, stdout);
        cli_table_free(t);
}

int cli_gpus(cli *c, int argc, char **argv)
{
        argc = take_json(c, argc, argv);
        int ex = no_args(argc, argv);
        json_t *j = NULL;
        if (ex || (ex = call_all(c, "/v1/gpus", &j)))
                return ex;
        if (c->json)
                cli_print_json(j);
        else
                print_gpus(j);
        json_decref(j);
        return 0;
}

static void print_units(json_t *j)
{
        static const char *const h[] = {"UNIT",   "KIND",    "STATE", "GPU",     "PROFILE",
                                        "MEMORY", "COMPUTE", "TASK",  "MIG UUID"};
        cli_table *t = cli_table_new(h, 9);
        size_t i;
        json_t *u;
        json_array_foreach(items_of(j), i, u)
        {
                char comp[32];
                snprintf(comp, sizeof(comp), "%s%%", cli_num(u, "compute"));
                cli_table_add(t, cli_num(u, "id"), cli_str(u, "kind"), cli_str(u, "state"),
                              cli_num(u, "gpu"), cli_str(u, "mig_profile"), cli_bytes(u, "memory"),
                              comp, cli_num(u, "task"), cli_str(u, "mig_uuid"));
        }
        cli_table_print(t, stdout);
        cli_table_free(t);
}

int cli_units(cli *c, int argc, char **argv)
{
        argc = take_json(c, argc, argv);
        int ex = no_args(argc, argv);
        json_t *j = NULL;
        if (ex || (ex = call_all(c, "/v1/units?limit=1000", &j)))
                return ex;
        if (c->json)
                cli_print_json(j);
        else
                print_units(j);
        json_decref(j);
        return 0;
}

static const char *const resources[] = {"gpus", "memory", "compute", "mig_slices"};

static const char *quota_cell(json_t *ten, const char *res)
{
        static char b[4][2 * KERF_UNITS_BUF];
        static int n;
        char *out = b[n++ % 4];
        json_t *q = json_object_get(json_object_get(ten, "quota"), res);
        json_t *nom = json_object_get(q, "nominal");
        json_t *use = json_object_get(json_object_get(ten, "usage"), res);
        char used[KERF_UNITS_BUF], lim[KERF_UNITS_BUF];
        bool mem = !strcmp(res, "memory");
        if (mem) { /* the one formatter: "16GiB", "1.5TiB" */
                kerf_format_size(json_is_integer(use) && json_integer_value(use) > 0
                                     ? (uint64_t)json_integer_value(use)
                                     : 0,
                                 used, sizeof(used));
                kerf_format_size(json_is_integer(nom) && json_integer_value(nom) > 0
                                     ? (uint64_t)json_integer_value(nom)
                                     : 0,
                                 lim, sizeof(lim));
        } else {
                snprintf(used, sizeof(used), "%lld",
                         json_is_integer(use) ? (long long)json_integer_value(use) : 0);
                snprintf(lim, sizeof(lim), "%lld",
                         json_is_integer(nom) ? (long long)json_integer_value(nom) : 0);
        }
        snprintf(out, sizeof(b[0]), "%s/%s", used, json_is_integer(nom) ? lim : "inf");
        return out;
}

static void print_tenants(json_t *j)
{
        static const char *const h[] = {"TENANT",   "COHORT",  "WEIGHT",     "GPUS",
                                        "MEMORY",   "COMPUTE", "MIG SLICES", "MAX PRIO",
                                        "MAX TIER", "PENDING", "RUNS AS"};
        cli_table *t = cli_table_new(h, 11);
        size_t i;
        json_t *ten;
        json_array_foreach(items_of(j), i, ten)
        {
                char pend[48], uid[32];
                json_t *ra = json_object_get(ten, "runs_as");
                snprintf(pend, sizeof(pend), "%s/%s", cli_num(ten, "pending"),
                         cli_num(ten, "max_pending"));
                snprintf(uid, sizeof(uid), "%s",
                         ra && !json_is_null(ra) ? cli_num(ra, "uid") : "-");
                cli_table_add(t, cli_str(ten, "name"), cli_str(ten, "cohort"),
                              cli_num(ten, "weight"), quota_cell(ten, resources[0]),
                              quota_cell(ten, resources[1]), quota_cell(ten, resources[2]),
                              quota_cell(ten, resources[3]), cli_num(ten, "max_priority"),
                              cli_str(ten, "max_tier"), pend, uid);
        }
        cli_table_print(t, stdout);
        printf("(used/nominal quota; inf = unlimited; PENDING = unfinished/max_pending; RUNS AS = "
               "the uid its tasks run as, - = refused)\n");
        cli_table_free(t);
}

static bool name_ok(const char *s)
{
        return kerf_name_ok(s); /* the one name rule (src/core/names.c) */
}

int cli_tenants(cli *c, int argc, char **argv)
{
        argc = take_json(c, argc, argv);
        json_t *j = NULL;
        int ex;
        if (argc == 1) {
                if ((ex = call_all(c, "/v1/tenants?limit=1000", &j)))
                        return ex;
                if (c->json)
                        cli_print_json(j);
                else
                        print_tenants(j);
                json_decref(j);
                return 0;
        }
        if ((!strcmp(argv[1], "create") || !strcmp(argv[1], "patch")) && argc >= 3)
                return cli_tenant_write(c, argc, argv);
        if (!strcmp(argv[1], "token") && argc == 4 && !strcmp(argv[2], "create")) {
                if (!name_ok(argv[3])) {
                        cli_err("tenant token create: '%s' is not a tenant name", argv[3]);
                        return KERF_EXIT_USAGE;
                }
                char path[128];
                snprintf(path, sizeof(path), "/v1/tenants/%s/tokens", argv[3]);
                if ((ex = cli_call(c, "POST", path, NULL, &j)))
                        return ex;
                if (c->json)
                        cli_print_json(j);
                else
                        printf("%s\n(token %s of tenant %s; shown once: store it now)\n",
                               cli_str(j, "token"), cli_num(j, "id"), argv[3]);
                json_decref(j);
                return 0;
        }
        if (!strcmp(argv[1], "token") && argc == 5 && !strcmp(argv[2], "revoke")) {
                unsigned long long id;
                if (!name_ok(argv[3]) || !cli_parse_id(argv[4], &id))
                        return KERF_EXIT_USAGE;
                char path[160];
                snprintf(path, sizeof(path), "/v1/tenants/%s/tokens/%llu", argv[3], id);
                if ((ex = cli_call(c, "DELETE", path, NULL, NULL)))
                        return ex;
                printf("token %llu of tenant %s revoked\n", id, argv[3]);
                return 0;
        }
        cli_err("%s: expected no argument, 'create NAME [flags]', 'patch NAME flags', "
                "'token create NAME' or 'token revoke NAME ID' (see kerf tenant --help)",
                argv[0]);
        return KERF_EXIT_USAGE;
}

int cli_quota(cli *c, int argc, char **argv)
{
        argc = take_json(c, argc, argv);
        if (argc < 2 || !name_ok(argv[1])) {
                cli_err("quota: expects a tenant name: kerf quota TENANT [--gpus N] [--memory "
                        "SIZE] [--compute PCT] [--mig-slices N] [--borrow-RES V] [--lend-RES V]");
                return KERF_EXIT_USAGE;
        }
        json_t *body = json_object();
        for (int i = 2; i < argc; i++) {
                const char *f = argv[i];
                if (strncmp(f, "--", 2) != 0 || i + 1 >= argc) {
                        cli_err("quota: '%s' is not a flag with a value", f);
                        json_decref(body);
                        return KERF_EXIT_USAGE;
                }
                f += 2;
                const char *field = "nominal";
                if (!strncmp(f, "borrow-", 7)) {
                        field = "borrow_limit";
                        f += 7;
                } else if (!strncmp(f, "lend-", 5)) {
                        field = "lend_limit";
                        f += 5;
                }
                const char *res = NULL;
                for (int r = 0; r < 4; r++) {
                        char dashed[16];
                        snprintf(dashed, sizeof(dashed), "%s", resources[r]);
                        for (char *p = dashed; *p; p++)
                                if (*p == '_')
                                        *p = '-';
                        if (!strcmp(f, dashed))
                                res = resources[r];
                }
                if (!res) {
                        cli_err("quota: unknown flag '%s' (gpus, memory, compute, mig-slices, "
                                "with optional borrow-/lend- prefix)",
                                argv[i]);
                        json_decref(body);
                        return KERF_EXIT_USAGE;
                }
                const char *val = argv[++i];
                json_t *jv;
                uint64_t b;
                if (!strcmp(val, "unlimited")) {
                        jv = json_null();
                } else if (!strcmp(res, "memory")) {
                        char flag[32];
                        snprintf(flag, sizeof(flag), "%s", argv[i - 1] + 2);
                        if (!cli_parse_size(flag, val, KERF_QUOTA_MAX_MEM_BYTES, &b)) {
                                json_decref(body);
                                return KERF_EXIT_USAGE;
                        }
                        jv = json_integer((json_int_t)b);
                } else {
                        char *end;
                        errno = 0;
                        long long v = strtoll(val, &end, 10);
                        if (*end || errno || v < 0 || !*val) {
                                cli_err("quota: %s: '%s' is not a non-negative number", argv[i - 1],
                                        val);
                                json_decref(body);
                                return KERF_EXIT_USAGE;
                        }
                        jv = json_integer(v);
                }
                json_t *r = json_object_get(body, res);
                if (!r)
                        json_object_set_new(body, res, r = json_object());
                json_object_set_new(r, field, jv);
        }
        char path[128];
        json_t *j = NULL;
        int ex;
        if (json_object_size(body) == 0) {
                ex = call_all(c, "/v1/tenants?limit=1000", &j);
                json_decref(body);
                if (ex)
                        return ex;
                /* keep only the asked tenant */
                json_t *one = NULL, *ten;
                size_t i;
                json_array_foreach(items_of(j), i, ten) if (!strcmp(cli_str(ten, "name"), argv[1]))
                    one = ten;
                if (!one) {
                        cli_err("quota: no tenant '%s'", argv[1]);
                        json_decref(j);
                        return KERF_EXIT_NOT_FOUND;
                }
                json_incref(one);
                json_decref(j);
                j = one;
        } else {
                snprintf(path, sizeof(path), "/v1/tenants/%s/quota", argv[1]);
                ex = cli_call(c, "PUT", path, body, &j);
                json_decref(body);
                if (ex)
                        return ex;
        }
        if (c->json) {
                cli_print_json(j);
        } else {
                json_t *arr = json_array();
                json_array_append(arr, j);
                print_tenants(arr);
                json_decref(arr);
        }
        json_decref(j);
        return 0;
}

int cli_queue(cli *c, int argc, char **argv)
{
        argc = take_json(c, argc, argv);
        int ex = no_args(argc, argv);
        json_t *j = NULL;
        if (ex || (ex = call_all(c, "/v1/queues?limit=1000", &j)))
                return ex;
        if (c->json) {
                cli_print_json(j);
        } else {
                static const char *const h[] = {"TENANT",  "QUEUE",   "MODE", "BACKFILL",
                                                "PENDING", "RUNNING", "HEAD"};
                cli_table *t = cli_table_new(h, 7);
                size_t i;
                json_t *q;
                json_array_foreach(items_of(j), i, q)
                {
                        json_t *bf = json_object_get(q, "backfill");
                        cli_table_add(
                            t, cli_str(q, "tenant"), cli_str(q, "queue"), cli_str(q, "mode"),
                            json_is_boolean(bf) ? (json_is_true(bf) ? "on" : "off") : "-",
                            cli_num(q, "pending"), cli_num(q, "running"), cli_num(q, "head"));
                }
                cli_table_print(t, stdout);
                cli_table_free(t);
        }
        json_decref(j);
        return 0;
}

int cli_audit(cli *c, int argc, char **argv)
{
        argc = take_json(c, argc, argv);
        int ex;
        json_t *j = NULL;
        /* checkpoint, verify --in/--against: cmd_audit.c */
        if (argc >= 2 &&
            (!strcmp(argv[1], "checkpoint") || (!strcmp(argv[1], "verify") && argc > 2)))
                return cli_audit_anchor(c, argc, argv);
        if (argc >= 2 && !strcmp(argv[1], "verify")) {
                if ((ex = no_args(argc - 1, argv + 1)) ||
                    (ex = cli_call(c, "POST", "/v1/audit/verify", NULL, &j)))
                        return ex;
                bool ok = json_is_true(json_object_get(j, "ok"));
                if (c->json)
                        cli_print_json(j);
                else if (ok)
                        printf("audit chain intact: %s records\n", cli_num(j, "records"));
                else
                        printf("audit chain BROKEN at record %s: %s\n", cli_num(j, "first_bad"),
                               cli_str(j, "problem"));
                json_decref(j);
                return ok ? 0 : KERF_EXIT_REFUSED;
        }
        if (argc >= 2 && !strcmp(argv[1], "export")) {
                FILE *out = stdout;
                if (argc != 2 && !(argc == 4 && !strcmp(argv[2], "--out"))) {
                        cli_err("audit export: expected [--out FILE]");
                        return KERF_EXIT_USAGE;
                }
                char *body = NULL;
                /* the file is written only once kerfd has answered */
                if ((ex = cli_call_raw(c, "GET", "/v1/audit/export", &body)))
                        return ex;
                if (argc == 4 && !(out = fopen(argv[3], "we"))) {
                        cli_err("audit export: %s: %s", argv[3], strerror(errno));
                        free(body);
                        return KERF_EXIT_REFUSED;
                }
                fputs(body, out);
                free(body);
                if (out != stdout && fclose(out) != 0) {
                        cli_err("audit export: %s: %s", argv[3], strerror(errno));
                        return KERF_EXIT_REFUSED;
                }
                return 0;
        }
        char path[128] = "/v1/audit?limit=100";
        if (argc == 3 && !strcmp(argv[1], "--after")) {
                unsigned long long after;
                if (!cli_parse_id(argv[2], &after))
                        return KERF_EXIT_USAGE;
                snprintf(path, sizeof(path), "/v1/audit?limit=100&after=%llu", after);
        } else if ((ex = no_args(argc, argv))) {
                return ex;
        }
        if ((ex = cli_call(c, "GET", path, NULL, &j)))
                return ex;
        if (c->json) {
                cli_print_json(j);
        } else {
                static const char *const h[] = {"SEQ",    "TIME_MS", "ACTOR",  "TENANT",
                                                "ACTION", "OBJECT",  "RESULT", "REASON"};
                cli_table *t = cli_table_new(h, 8);
                size_t i;
                json_t *a;
                json_array_foreach(items_of(j), i, a)
                    cli_table_add(t, cli_num(a, "seq"), cli_num(a, "time_ms"), cli_str(a, "actor"),
                                  cli_str(a, "tenant"), cli_str(a, "action"), cli_str(a, "object"),
                                  cli_str(a, "result"), cli_str(a, "reason"));
                cli_table_print(t, stdout);
                cli_table_free(t);
        }
        json_decref(j);
        return 0;
}

/* The software slices among `tasks`: use against grant (docs/CLI.md "kerf top"). */
static void print_slices(json_t *tasks)
{
        size_t i;
        json_t *t;
        bool head = false;
        json_array_foreach(items_of(tasks), i, t)
        {
                const json_t *u = json_object_get(t, "usage");
                char mem[64], cu[64];
                if (!json_is_object(u))
                        continue;
                if (!head) {
                        printf("\nslices:\n  %-6s %-10s %-10s %-19s %-17s %-10s %-7s %-7s\n",
                               "TASK", "ENFORCED", "STATE", "MEMORY used/cap", "COMPUTE used/al",
                               "THROTTLED", "DENIED", "HELD");
                        head = true;
                }
                snprintf(mem, sizeof(mem), "%s/%s", cli_bytes(u, "memory_used_bytes"),
                         cli_bytes(u, "memory_limit_bytes"));
                snprintf(cu, sizeof(cu), "%.0f%%/%s%%",
                         json_number_value(json_object_get(u, "compute_used_pct")),
                         cli_num(u, "compute_allowed_pct"));
                printf("  %-6s %-10s %-10s %-19s %-17s %-10.1f %-7s %-7s\n", cli_num(t, "id"),
                       cli_str(t, "enforcement"), cli_str(t, "state"), mem, cu,
                       (double)json_integer_value(json_object_get(u, "throttled_ns")) / 1e9,
                       cli_num(u, "memory_denied"), cli_num(u, "held_launches"));
        }
}

int cli_top(cli *c, int argc, char **argv)
{
        double interval = 2.0;
        bool once = false;
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--once")) {
                        once = true;
                } else if (!strcmp(argv[i], "--watch")) {
                        once = false; /* the default: refresh every --interval */
                } else if (!strcmp(argv[i], "--interval") && i + 1 < argc) {
                        char *end;
                        interval = strtod(argv[++i], &end);
                        if (*end || interval < 0.2 || interval > 3600) {
                                cli_err("--interval: '%s' is not 0.2..3600 seconds", argv[i]);
                                return KERF_EXIT_USAGE;
                        }
                } else {
                        cli_err("top: unknown argument '%s' (--interval S, --once, --watch)",
                                argv[i]);
                        return KERF_EXIT_USAGE;
                }
        }
        for (;;) {
                json_t *g = NULL, *u = NULL, *t = NULL;
                int ex = call_all(c, "/v1/gpus", &g);
                if (!ex)
                        ex = call_all(c, "/v1/units?limit=1000", &u);
                if (!ex)
                        ex = cli_call(c, "GET", "/v1/tasks?limit=50&state=running", NULL, &t);
                if (ex) {
                        json_decref(g);
                        json_decref(u);
                        return ex;
                }
                if (c->json) { /* one document, once: {"gpus", "units", "tasks"} */
                        json_t *j = json_pack("{s:o, s:o, s:o}", "gpus", g, "units", u, "tasks", t);
                        if (!j) {
                                cli_err("top: out of memory");
                                return KERF_EXIT_REFUSED;
                        }
                        cli_print_json(j);
                        json_decref(j);
                        return 0;
                }
                if (!once)
                        fputs("\033[H\033[2J", stdout);
                time_t now = time(NULL);
                printf("kerf top - %s", ctime(&now));
                if (json_is_true(json_object_get(g, "simulated")))
                        printf("(simulated fleet)\n");
                printf("\n");
                print_gpus(g);
                printf("\n");
                print_units(u);
                printf("\nrunning tasks:\n");
                size_t i;
                json_t *task;
                json_array_foreach(items_of(t), i, task) printf(
                    "  %s %-16s %-10s %-9s %-9s %s\n", cli_num(task, "id"), cli_str(task, "name"),
                    cli_str(task, "tenant"), cli_str(task, "route"), cli_str(task, "state"),
                    cli_str(json_object_get(task, "reason"), "text"));
                print_slices(t);
                fflush(stdout);
                json_decref(g);
                json_decref(u);
                json_decref(t);
                if (once)
                        return 0;
                struct timespec ts = {(time_t)interval,
                                      (long)((interval - (double)(time_t)interval) * 1e9)};
                nanosleep(&ts, NULL);
        }
}

int cli_version(cli *c, int argc, char **argv)
{
        argc = take_json(c, argc, argv);
        int ex = no_args(argc, argv);
        if (ex)
                return ex;
        json_t *j = NULL, *who = NULL;
        ex = cli_call(c, "GET", "/v1/version", NULL, &j);
        if (!ex) {
                /* who kerfd takes the caller for (quietly: an older kerfd may not know it) */
                kerf_client_response r;
                if (kerf_client_call(c->client, "GET", "/v1/whoami", NULL, &r) == 0) {
                        if (r.status == 200)
                                who = json_loadb(r.body, r.len, 0, NULL);
                        kerf_client_response_fini(&r);
                }
        }
        if (c->json) {
                json_t *o = json_pack("{s:s,s:O?,s:O?}", "client", KERF_VERSION, "server", j,
                                      "whoami", who);
                cli_print_json(o);
                json_decref(o);
        } else {
                printf("kerf client %s\n", KERF_VERSION);
                if (!ex)
                        printf("kerfd %s (API %s), driver %s, CUDA %s%s\n", cli_str(j, "kerf"),
                               cli_num(j, "api"), cli_str(j, "driver"), cli_str(j, "cuda"),
                               json_is_true(json_object_get(j, "simulated")) ? ", simulated" : "");
                if (json_is_true(json_object_get(who, "admin")))
                        printf("you are an admin\n");
                else if (json_is_string(json_object_get(who, "tenant")))
                        printf("you are tenant %s\n", cli_str(who, "tenant"));
        }
        json_decref(j);
        json_decref(who);
        return ex;
}
