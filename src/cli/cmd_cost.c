/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_cost.c - kerf cost: GPU-hours granted and used per tenant, route and unit kind for a
 * period (GET /v1/cost; docs/STATE.md "Runs and cost") */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

int cli_parse_time(const char *s, int64_t now_ms, int64_t *ret)
{
        struct tm tm;
        char *end;
        const char *p;

        if (!s || !*s)
                return -EINVAL;
        if (!strcmp(s, "now")) {
                *ret = now_ms;
                return 0;
        }
        if (s[0] >= '0' && s[0] <= '9' && strlen(s) <= 12) {
                /* relative: N followed by s, m, h, d or w, counted back from now */
                unsigned long long v;
                int64_t unit;
                errno = 0;
                v = strtoull(s, &end, 10);
                if (!errno && end != s && end[0] && !end[1]) {
                        switch (*end) {
                        case 's':
                                unit = 1000;
                                break;
                        case 'm':
                                unit = 60000;
                                break;
                        case 'h':
                                unit = 3600000;
                                break;
                        case 'd':
                                unit = 86400000;
                                break;
                        case 'w':
                                unit = 7 * 86400000LL;
                                break;
                        default:
                                unit = 0;
                        }
                        if (unit && v <= (unsigned long long)(now_ms / unit)) {
                                *ret = now_ms - (int64_t)v * unit;
                                return 0;
                        }
                        if (unit)
                                return -ERANGE;
                }
        }
        /* ISO 8601 in UTC: YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS]Z */
        memset(&tm, 0, sizeof(tm));
        p = strptime(s, "%Y-%m-%d", &tm);
        if (!p)
                return -EINVAL;
        if (*p == 'T') {
                const char *q = strptime(p + 1, "%H:%M:%S", &tm);
                if (!q)
                        q = strptime(p + 1, "%H:%M", &tm);
                if (!q || strcmp(q, "Z") != 0)
                        return -EINVAL;
        } else if (*p) {
                return -EINVAL;
        }
        time_t t = timegm(&tm);
        if (t < 0)
                return -ERANGE;
        *ret = (int64_t)t * 1000;
        return 0;
}

static const char *hours(const json_t *o, const char *key)
{
        static char buf[4][32];
        static int k;
        const json_t *v = json_object_get(o, key);
        char *b = buf[k++ & 3];

        if (!json_is_number(v))
                return "-";
        snprintf(b, 32, "%.4f", json_number_value(v));
        return b;
}

int cli_cost(cli *c, int argc, char **argv)
{
        const char *since = NULL, *until = NULL, *by = NULL;
        struct timespec ts;
        int64_t now, from = 0, to;
        char path[256];
        json_t *j = NULL, *it;
        size_t i;
        int ex;

        clock_gettime(CLOCK_REALTIME, &ts);
        now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        to = now;
        for (int a = 1; a < argc; a++) {
                if (!strcmp(argv[a], "--json")) {
                        c->json = true;
                } else if (!strcmp(argv[a], "--since") && a + 1 < argc) {
                        since = argv[++a];
                } else if (!strcmp(argv[a], "--until") && a + 1 < argc) {
                        until = argv[++a];
                } else if (!strcmp(argv[a], "--by") && a + 1 < argc) {
                        by = argv[++a];
                } else {
                        cli_err("cost: unexpected '%s' (expected [--since TIME] [--until TIME] "
                                "[--by tenant,route,unit_kind] [--json])",
                                cli_safe(argv[a]));
                        return KERF_EXIT_USAGE;
                }
        }
        if (since && cli_parse_time(since, now, &from) < 0) {
                cli_err("--since '%s': expected an ISO 8601 UTC time (2026-12-01 or "
                        "2026-12-01T15:00:00Z), 'now', or a span back from now (90s, 30m, 24h, "
                        "7d, 2w)",
                        cli_safe(since));
                return KERF_EXIT_USAGE;
        }
        if (until && cli_parse_time(until, now, &to) < 0) {
                cli_err("--until '%s': expected an ISO 8601 UTC time (2026-12-01 or "
                        "2026-12-01T15:00:00Z), 'now', or a span back from now (90s, 30m, 24h, "
                        "7d, 2w)",
                        cli_safe(until));
                return KERF_EXIT_USAGE;
        }
        if (to <= from) {
                cli_err("--until must be after --since");
                return KERF_EXIT_USAGE;
        }
        if (by && (strlen(by) > 64 || strspn(by, "abcdefghijklmnopqrstuvwxyz_,") != strlen(by))) {
                cli_err("--by '%s': a comma-separated list of tenant, route, unit_kind",
                        cli_safe(by));
                return KERF_EXIT_USAGE;
        }
        snprintf(path, sizeof(path), "/v1/cost?from_ms=%lld&to_ms=%lld%s%s", (long long)from,
                 (long long)to, by ? "&by=" : "", by ? by : "");
        if ((ex = cli_call(c, "GET", path, NULL, &j)))
                return ex;
        if (c->json) {
                cli_print_json(j);
                json_decref(j);
                return 0;
        }
        static const char *const hdr[] = {"TENANT", "ROUTE",         "UNIT KIND",
                                          "TASKS",  "GRANTED GPU-H", "USED GPU-H"};
        cli_table *t = cli_table_new(hdr, 6);
        json_array_foreach(json_object_get(j, "items"), i, it)
        {
                cli_table_add(t, cli_str(it, "tenant"), cli_str(it, "route"),
                              cli_str(it, "unit_kind"), cli_num(it, "tasks"),
                              hours(it, "granted_gpu_hours"), hours(it, "used_gpu_hours"));
        }
        json_t *tot = json_object_get(j, "totals");
        cli_table_add(t, "TOTAL", "", "", "", hours(tot, "granted_gpu_hours"),
                      hours(tot, "used_gpu_hours"));
        cli_table_print(t, stdout);
        cli_table_free(t);
        {
                time_t a = (time_t)(from / 1000), b = (time_t)(to / 1000);
                char fa[32], fb[32];
                struct tm tm;
                strftime(fa, sizeof(fa), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&a, &tm));
                strftime(fb, sizeof(fb), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&b, &tm));
                printf("period %s .. %s; used \"-\" = not measured\n%s\n", fa, fb,
                       cli_str(j, "notes"));
        }
        json_decref(j);
        return 0;
}
