/* SPDX-License-Identifier: Apache-2.0 */
/* cli.h - shared declarations of the kerf command-line tool */
#ifndef KERF_CLI_H
#define KERF_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "kerf/client.h"

/* Exit codes (docs/CLI.md). `kerf run` exits with the task's own code instead. */
enum {
        KERF_EXIT_OK = 0,
        KERF_EXIT_REFUSED = 1,     /* kerfd answered with an error (4xx/5xx) */
        KERF_EXIT_USAGE = 2,       /* bad command line */
        KERF_EXIT_UNREACHABLE = 3, /* kerfd could not be reached */
        KERF_EXIT_NOT_FOUND = 4,   /* no such task/unit/tenant (404) */
        KERF_EXIT_DENIED = 5,      /* 401/403 */
        KERF_EXIT_RUN_FAILED = 125 /* kerf run: the task never started or was cancelled */
};

typedef struct cli {
        kerf_client *client;
        kerf_client_opts opts; /* what client was made from (kerf cdi attach's holder) */
        bool json;
        const char *prog;
} cli;

/* One verb. argv[0] is the verb name. Returns the process exit code. */
typedef int (*cli_verb_fn)(cli *c, int argc, char **argv);

/* main.c: prints "kerf VERB: --json is not supported; <why>" (the verb table's reason) and
 * returns KERF_EXIT_USAGE. */
int cli_json_refuse(const char *verb);

/* out.c */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Calls kerfd; on success returns 0 and, when ret_json is not NULL, the parsed JSON body (or
 * NULL for an empty/non-JSON body). On any failure prints one line and returns the exit code. */
int cli_call(cli *c, const char *method, const char *path, json_t *body, json_t **ret_json);
/* Same, keeping the raw body (for /metrics and audit export). Caller frees *ret_body. */
int cli_call_raw(cli *c, const char *method, const char *path, char **ret_body);
/* Prints a JSON value pretty (the --json output). */
void cli_print_json(const json_t *j);
/* Table output: add cells row by row, then print with aligned columns. */
typedef struct cli_table cli_table;
cli_table *cli_table_new(const char *const *headers, int ncols);
void cli_table_add(cli_table *t, ...); /* ncols const char * cells */
void cli_table_print(cli_table *t, FILE *f);
void cli_table_print_rows(cli_table *t, FILE *f); /* the same, without the header line */
void cli_table_free(cli_table *t);
/* Formatting helpers: return a pointer into a static rotating buffer. */
/* A string from kerfd made safe for a terminal: control characters (C0, DEL, C1) as \xNN
 * (idempotent: its output has none left). Returns `s` itself when nothing needs escaping, else one
 * of 16 rotating static buffers (2 KiB, longer text is cut). Everything the CLI prints from kerfd
 * goes through it (cli_str, table cells, error messages). */
const char *cli_safe(const char *s);
/* The escaping of cli_safe into out (cap bytes, NUL-terminated; keep_lines: newline and tab
 * pass); returns the length. */
size_t cli_escape(char *out, size_t cap, const char *s, bool keep_lines);
/* The value of `key` for printing (strings escaped with cli_safe; "-" when absent). */
const char *cli_str(const json_t *obj, const char *key);
const char *cli_num(const json_t *obj, const char *key);
/* Sizes and durations by the one formatter (kerf_format_size / _duration, docs/UNITS.md):
 * an integer of bytes as "16GiB", "117.74MiB"; an integer of seconds as "1h30m"; "-" when
 * absent. A size string kerfd echoes back (a request's "16GiB") is shown as given. */
const char *cli_bytes(const json_t *obj, const char *key);
const char *cli_duration(const json_t *obj, const char *key);
/* Parses the value of --FLAG as a size (a unit is required: "--memory: '16' has no unit: write
 * 16GiB or 16MiB") or a duration (90, 90s, 15m, 1h30m, 1-00:00:00) of at most `max`; prints one
 * line naming the flag, what was wrong and the accepted forms, and returns false on error. */
bool cli_parse_size(const char *flag, const char *s, uint64_t max, uint64_t *ret);
bool cli_parse_duration(const char *flag, const char *s, uint64_t max, uint64_t *ret);
/* Parses an id argument; prints an error and returns false when it is not a positive integer. */
bool cli_parse_id(const char *s, unsigned long long *ret);
/* Removes every `flag` (or `alias`, may be NULL) before a "--" from argv, setting *ret_seen when
 * one was there. Returns the new argc; argv stays NULL-terminated. */
int cli_take_flag(int argc, char **argv, const char *flag, const char *alias, bool *ret_seen);
/* clicfg.c: the client configuration file ($KERF_CONFIG, else ~/.config/kerf/config.yaml;
 * docs/CLI.md "Client configuration") fills what flags and the environment left unset: socket,
 * url, token (from token_file), node (*node when NULL), output json. 0, or an exit code after
 * one error line naming file:line:key. */
int cli_config_load(kerf_client_opts *o, bool *json, const char **node);
/* The candidate a mistyped `word` most likely meant (a few edits away, or word a prefix of
 * it), or NULL: for "did you mean". */
const char *cli_nearest(const char *word, const char *const *cands, size_t n); /* kerf_nearest */
/* A getopt_long failure (':' a flag without its value, else an unknown flag) as one error line
 * naming the verb, with the nearest of `lo`'s long flags suggested; returns KERF_EXIT_USAGE. */
struct option;
int cli_bad_flag(const char *verb, int opt, char **argv, const struct option *lo);
/* --help text for every verb and the exit codes. */
void cli_usage(FILE *f, const char *verb);
/* Writes the --help lines of kerf submit's request flags, made from kerf_task_fields. */
void cli_task_flags_help(FILE *out);
/* Adds flag value `s` of field `f` (kerf/fields.h) to `req` as the field's type reads it (sizes
 * and durations through units.h, enum values by their parser, bounds from the descriptor).
 * false after saying what was wrong. */
struct kerf_field;
bool cli_field_flag(json_t *req, const struct kerf_field *f, const char *s);
/* lo[0..cap): one long option per field of tab[0..n) that `objects` takes and has a flag
 * (getopt value base + its index), then --json (value json) and --help ('h'), then the end. */
struct option;
void cli_field_options(const struct kerf_field *tab, size_t n, unsigned objects, int base, int json,
                       struct option *lo, size_t cap);
/* cmd_tenant.c: kerf tenant create NAME / patch NAME with flags made from kerf_tenant_fields,
 * and their --help lines. */
int cli_tenant_write(cli *c, int argc, char **argv);
void cli_tenant_flags_help(FILE *out);
/* True if argv has -h/--help; prints the verb's help to stdout. */
bool cli_wants_help(int argc, char **argv);

/* cmd_task.c (submit show suspend resume logs explain); cmd_run.c: cli_run; cmd_ls.c: cli_ls;
 * cmd_cancel.c: cli_cancel */
/* Parses submit flags (argv[0] the verb, no command) into a request object (*ret, caller
 * decrefs). 0, an exit code, or -1 after --help was printed. */
int cli_parse_request(cli *c, int argc, char **argv, json_t **ret);
int cli_submit(cli *c, int argc, char **argv);
int cli_run(cli *c, int argc, char **argv);
int cli_ls(cli *c, int argc, char **argv);
int cli_show(cli *c, int argc, char **argv);
int cli_cancel(cli *c, int argc, char **argv);
/* cmd_hold.c: kerf hold / release / update ID, kerf gpu drain|resume|recover N */
int cli_hold(cli *c, int argc, char **argv);
int cli_release(cli *c, int argc, char **argv);
int cli_update(cli *c, int argc, char **argv);
int cli_gpu(cli *c, int argc, char **argv);
int cli_suspend(cli *c, int argc, char **argv);
int cli_resume(cli *c, int argc, char **argv);
int cli_logs(cli *c, int argc, char **argv);
int cli_explain(cli *c, int argc, char **argv);
/* The submit flags and the command after them (kerf run). 0, an exit code, or -1 after --help. */
int cli_parse_run_request(cli *c, int argc, char **argv, json_t **ret);
/* Copies new bytes of one log stream of task `id` to `out` from *off; *eof when it ended and all
 * was read. 0, or the exit code of a failed call (its error printed). */
int cli_pump(cli *c, unsigned long long id, const char *stream, long long *off, FILE *out,
             bool *eof);

/* cmd_ls.c: kerf ls, and the task selection kerf cancel shares. A filter: states (a
 * comma-separated list; running includes suspended), queue and tenant go to kerfd; name (a
 * glob), route and gpu (-1: any) are checked here. */
typedef struct cli_task_filter {
        const char *states, *queue, *tenant, *name, *route;
        int gpu;
} cli_task_filter;
/* Tasks matching f from cursor `after` (NULL: the start): one page of `limit`, or every page
 * (all). *ret_items: a new array (caller decrefs); *ret_next: the cursor after them or NULL
 * (caller frees); *ret_remaining (may be NULL): how many more kerfd holds past the cursor
 * before the filters applied here, -1 when kerfd does not say. 0, or an exit code after one
 * error line. */
int cli_task_fetch(cli *c, const cli_task_filter *f, const char *after, unsigned limit, bool all,
                   json_t **ret_items, char **ret_next, int64_t *ret_remaining);
bool cli_task_match(const cli_task_filter *f, const json_t *t);
/* Checks a comma-separated --state list against `allowed` (NULL-terminated); false after one
 * error line naming the bad word and the accepted ones. */
bool cli_states_ok(const char *verb, const char *list, const char *const *allowed);
/* The state words a --state list takes, NULL-terminated, from the one table
 * (include/kerf/task_state.h) with "suspended" after "running": every state, or (live) the
 * unended ones only. Static: not to be freed. */
const char *const *cli_state_words(bool live);
/* A tenant or queue name for a query; false after one error line. */
bool cli_name_ok(const char *verb, const char *flag, const char *v);
/* Prints a JSON value as a YAML document (libyaml's emitter; strings that would read back as
 * another type are quoted). 0 or -1. */
int cli_print_yaml(const json_t *j);

/* cmd_info.c */
int cli_gpus(cli *c, int argc, char **argv);
int cli_units(cli *c, int argc, char **argv);
int cli_tenants(cli *c, int argc, char **argv);
int cli_quota(cli *c, int argc, char **argv);
int cli_queue(cli *c, int argc, char **argv);
int cli_audit(cli *c, int argc, char **argv);
/* cmd_audit.c: audit checkpoint, audit verify --in/--against */
int cli_audit_anchor(cli *c, int argc, char **argv);
int cli_top(cli *c, int argc, char **argv);
/* cmd_cost.c: kerf cost. cli_parse_time reads an ISO 8601 UTC time (2026-12-01,
 * 2026-12-01T15:00[:00]Z), "now", or a span back from now_ms (90s, 30m, 24h, 7d, 2w) into
 * *ret (ms since the epoch); -EINVAL / -ERANGE otherwise. */
int cli_cost(cli *c, int argc, char **argv);
/* cmd_gc.c: kerf gc [--dry-run] [--json] (retention; admin) */
int cli_gc(cli *c, int argc, char **argv);
int cli_parse_time(const char *s, int64_t now_ms, int64_t *ret);
/* cmd_history.c: kerf history (ended tasks, sacct-like; docs/CLI.md) */
int cli_history(cli *c, int argc, char **argv);
/* cmd_export.c: kerf export --out FILE [--poc DIR]... (admin) */
int cli_export(cli *c, int argc, char **argv);
int cli_version(cli *c, int argc, char **argv);
/* cmd_cdi.c: kerf cdi generate | attach | release (docs/CLUSTER.md "Containers (CDI)") */
int cli_cdi(cli *c, int argc, char **argv);

/* cmd_slurm.c: kerf slurm gres-conf | node-conf (admin; docs/CLUSTER.md) */
int cli_slurm(cli *c, int argc, char **argv);

/* cmd_cluster.c: kerf cluster gpus|units|top|audit export over every node of the nodes file;
 * cli_cluster_node fills *o with node `name`'s endpoint (kerf --node NAME). */
int cli_cluster(int argc, char **argv, bool json);
int cli_cluster_node(const char *name, kerf_client_opts *o);

/* cmd_poc.c: kerf poc run|verify (docs/POC.md); argv[0] is "poc" */
int cli_poc(int argc, char **argv, const kerf_client_opts *co);

#endif /* KERF_CLI_H */
