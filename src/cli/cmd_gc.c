/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_gc.c - kerf gc: what retention would remove now, or a pass now (GET/POST /v1/gc;
 * docs/DAEMON.md "Retention") */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* "512 B", "1.5 KiB", "3.0 GiB": exact below 1 KiB (a few bytes of logs are not "0MiB") */
static const char *human(const json_t *c, char *buf, size_t len)
{
        static const char *const u[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = (double)json_integer_value(json_object_get(c, "bytes"));
        int i = -1;

        if (v < 1024) {
                snprintf(buf, len, "%.0f B", v);
                return buf;
        }
        while (v >= 1024 && i < 4) {
                v /= 1024;
                i++;
        }
        snprintf(buf, len, "%.1f %s", v, u[i]);
        return buf;
}

static void row(cli_table *t, const char *what, const json_t *c, bool bytes)
{
        char b[32];
        const char *oldest = cli_str(c, "oldest_ended");
        char when[80];

        snprintf(when, sizeof(when), "%s", oldest && *oldest ? oldest : "-");
        if (oldest && *oldest && json_object_get(c, "oldest_task"))
                snprintf(when, sizeof(when), "%s (task %s)", oldest, cli_str(c, "oldest_task"));
        cli_table_add(t, what, cli_num(c, "count"), bytes ? human(c, b, sizeof(b)) : "-", when);
}

int cli_gc(cli *c, int argc, char **argv)
{
        bool dry = false;
        json_t *j = NULL, *body = NULL;
        int ex;

        for (int a = 1; a < argc; a++) {
                if (!strcmp(argv[a], "--dry-run") || !strcmp(argv[a], "-n")) {
                        dry = true;
                } else if (!strcmp(argv[a], "--json")) {
                        c->json = true;
                } else {
                        cli_err("gc: unexpected '%s' (expected [--dry-run] [--json])",
                                cli_safe(argv[a]));
                        return KERF_EXIT_USAGE;
                }
        }
        if (dry)
                ex = cli_call(c, "GET", "/v1/gc", NULL, &j);
        else {
                body = json_object();
                ex = cli_call(c, "POST", "/v1/gc", body, &j);
                json_decref(body);
        }
        if (ex)
                return ex;
        if (c->json) {
                cli_print_json(j);
                json_decref(j);
                return 0;
        }
        static const char *const hdr[] = {"WHAT", "COUNT", "BYTES", "OLDEST ENDED"};
        cli_table *t = cli_table_new(hdr, 4);
        row(t, dry ? "logs (would remove)" : "logs removed", json_object_get(j, "logs"), true);
        row(t, dry ? "work dirs (would remove)" : "work dirs removed",
            json_object_get(j, "work_dirs"), true);
        row(t, dry ? "logs (would cap)" : "logs capped", json_object_get(j, "logs_capped"), true);
        row(t, dry ? "task rows (would delete)" : "task rows deleted", json_object_get(j, "tasks"),
            false);
        cli_table_print(t, stdout);
        cli_table_free(t);
        json_t *rc = json_object_get(j, "retention");
        printf("retention: logs_after %s, work_dirs_after %s, tasks_after %s, max_log_bytes %s, "
               "interval %s (0 = never)\n",
               cli_str(rc, "logs_after"), cli_str(rc, "work_dirs_after"),
               cli_str(rc, "tasks_after"), cli_bytes(rc, "max_log_bytes"), cli_str(rc, "interval"));
        if (json_object_get(j, "first_error"))
                printf("problems: %s; first: %s\n", cli_num(j, "errors"),
                       cli_str(j, "first_error"));
        if (json_is_true(json_object_get(j, "more")))
                printf("more is due than one pass handles; the next pass goes on\n");
        json_decref(j);
        return 0;
}
