/* SPDX-License-Identifier: Apache-2.0 */
/* out.c - calling kerfd, mapping its answers to exit codes, tables and help; every string from
 * kerfd is escaped before it reaches the terminal (cli_safe) */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kerf/units.h"

void cli_err(const char *fmt, ...)
{
        va_list ap;
        fputs("kerf: ", stderr);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
}

/* ---- terminal safety ----------------------------------------------------------------------- */

size_t cli_escape(char *out, size_t cap, const char *s, bool keep_lines)
{
        static const char hex[] = "0123456789abcdef";
        size_t o = 0;

        if (!cap)
                return 0;
        for (; s && *s; s++) {
                unsigned char c = (unsigned char)*s;
                bool ctl = (c < 0x20 && !(keep_lines && (c == '\n' || c == '\t'))) || c == 0x7f;
                /* C1 controls (U+0080..U+009F) arrive in UTF-8 as C2 80..C2 9F */
                bool c1 = c == 0xc2 && (unsigned char)s[1] >= 0x80 && (unsigned char)s[1] <= 0x9f;
                size_t need = c1 ? 8 : ctl ? 4 : 1;
                if (o + need >= cap)
                        break;
                if (c1) {
                        const unsigned char b[2] = {c, (unsigned char)s[1]};
                        for (int i = 0; i < 2; i++) {
                                out[o++] = '\\';
                                out[o++] = 'x';
                                out[o++] = hex[b[i] >> 4];
                                out[o++] = hex[b[i] & 15];
                        }
                        s++;
                } else if (ctl) {
                        out[o++] = '\\';
                        out[o++] = 'x';
                        out[o++] = hex[c >> 4];
                        out[o++] = hex[c & 15];
                } else {
                        out[o++] = (char)c;
                }
        }
        out[o] = '\0';
        return o;
}

/* Whether `s` needs escaping (a C0 or C1 control character, DEL). */
static bool needs_escape(const char *s)
{
        for (; s && *s; s++) {
                unsigned char c = (unsigned char)*s;
                if (c < 0x20 || c == 0x7f ||
                    (c == 0xc2 && (unsigned char)s[1] >= 0x80 && (unsigned char)s[1] <= 0x9f))
                        return true;
        }
        return false;
}

const char *cli_safe(const char *s)
{
        static char bufs[16][2048];
        static unsigned i;
        char *b;

        if (!s || !needs_escape(s))
                return s;
        b = bufs[i++ % 16];
        cli_escape(b, sizeof(bufs[0]), s, false);
        return b;
}

static int exit_for_status(long st)
{
        if (st == 404)
                return KERF_EXIT_NOT_FOUND;
        if (st == 401 || st == 403)
                return KERF_EXIT_DENIED;
        return KERF_EXIT_REFUSED;
}

/* Prints kerfd's error answer as one line. */
static int report_error(const kerf_client_response *r)
{
        json_error_t je;
        json_t *j = json_loadb(r->body, r->len, 0, &je);
        const char *msg = j ? json_string_value(json_object_get(j, "message")) : NULL;
        const char *code = j ? json_string_value(json_object_get(j, "error")) : NULL;
        if (msg)
                cli_err("%s (%s, HTTP %ld)", cli_safe(msg), code ? cli_safe(code) : "error",
                        r->status);
        else {
                char body[201];
                snprintf(body, sizeof(body), "%.200s", r->len ? r->body : "");
                cli_err("kerfd answered HTTP %ld: %s", r->status, cli_safe(body));
        }
        json_decref(j);
        return exit_for_status(r->status);
}

static int transport(cli *c, const char *method, const char *path, json_t *body,
                     kerf_client_response *r)
{
        char *text = NULL;
        if (body) {
                text = json_dumps(body, JSON_COMPACT);
                if (!text) {
                        cli_err("out of memory");
                        return KERF_EXIT_REFUSED;
                }
        }
        int rc = kerf_client_call(c->client, method, path, text, r);
        free(text);
        if (rc < 0) {
                cli_err("%s", kerf_client_error(c->client)[0] ? kerf_client_error(c->client)
                                                              : strerror(-rc));
                return KERF_EXIT_UNREACHABLE;
        }
        if (r->status >= 400) {
                int ex = report_error(r);
                kerf_client_response_fini(r);
                return ex;
        }
        return 0;
}

int cli_call(cli *c, const char *method, const char *path, json_t *body, json_t **ret_json)
{
        kerf_client_response r;
        int ex = transport(c, method, path, body, &r);
        if (ex)
                return ex;
        if (ret_json) {
                *ret_json = NULL;
                if (r.len) {
                        json_error_t je;
                        *ret_json = json_loadb(r.body, r.len, 0, &je);
                        if (!*ret_json) {
                                cli_err("kerfd sent invalid JSON: %s", je.text);
                                kerf_client_response_fini(&r);
                                return KERF_EXIT_REFUSED;
                        }
                }
        }
        kerf_client_response_fini(&r);
        return 0;
}

int cli_call_raw(cli *c, const char *method, const char *path, char **ret_body)
{
        kerf_client_response r;
        int ex = transport(c, method, path, NULL, &r);
        if (ex)
                return ex;
        *ret_body = r.body;
        return 0;
}

void cli_print_json(const json_t *j)
{
        /* JSON escapes C0 controls; on a terminal every non-ASCII character is escaped too, so
         * that a C1 control (U+0080..U+009F) cannot reach it either */
        char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                    (isatty(STDOUT_FILENO) ? JSON_ENSURE_ASCII : 0));
        if (s) {
                puts(s);
                free(s);
        }
}

/* ---- tables ------------------------------------------------------------------------------ */

struct cli_table {
        int ncols;
        char **cells; /* row-major, headers first */
        size_t n, cap;
};

static void table_push(cli_table *t, const char *s)
{
        if (t->n == t->cap) {
                size_t nc = t->cap ? t->cap * 2 : 64;
                char **np = realloc(t->cells, nc * sizeof(*np));
                if (!np)
                        return;
                t->cells = np;
                t->cap = nc;
        }
        t->cells[t->n++] = strdup(s ? cli_safe(s) : "");
}

cli_table *cli_table_new(const char *const *headers, int ncols)
{
        cli_table *t = calloc(1, sizeof(*t));
        if (!t)
                return NULL;
        t->ncols = ncols;
        for (int i = 0; i < ncols; i++)
                table_push(t, headers[i]);
        return t;
}

void cli_table_add(cli_table *t, ...)
{
        va_list ap;
        va_start(ap, t);
        for (int i = 0; i < t->ncols; i++)
                table_push(t, va_arg(ap, const char *));
        va_end(ap);
}

static void table_print(cli_table *t, FILE *f, bool no_headers);

void cli_table_print(cli_table *t, FILE *f)
{
        table_print(t, f, false);
}

void cli_table_print_rows(cli_table *t, FILE *f)
{
        table_print(t, f, true);
}

static void table_print(cli_table *t, FILE *f, bool no_headers)
{
        size_t w[32] = {0};
        for (size_t i = 0; i < t->n; i++) {
                size_t l = t->cells[i] ? strlen(t->cells[i]) : 0;
                if (l > w[i % (size_t)t->ncols])
                        w[i % (size_t)t->ncols] = l;
        }
        for (size_t i = no_headers ? (size_t)t->ncols : 0; i < t->n; i++) {
                size_t col = i % (size_t)t->ncols;
                bool last = col == (size_t)t->ncols - 1;
                const char *cell = t->cells[i] ? t->cells[i] : "";
                if (last)
                        fprintf(f, "%s\n", cell);
                else
                        fprintf(f, "%-*s  ", (int)w[col], cell);
        }
}

void cli_table_free(cli_table *t)
{
        if (!t)
                return;
        for (size_t i = 0; i < t->n; i++)
                free(t->cells[i]);
        free(t->cells);
        free(t);
}

/* ---- formatting ---------------------------------------------------------------------------- */

static char *slot(void)
{
        static char bufs[16][128];
        static unsigned i;
        return bufs[i++ % 16];
}

const char *cli_str(const json_t *obj, const char *key)
{
        const json_t *v = json_object_get(obj, key);
        if (json_is_string(v))
                return cli_safe(json_string_value(v));
        char *b = slot();
        if (json_is_integer(v))
                snprintf(b, 128, "%lld", (long long)json_integer_value(v));
        else if (json_is_real(v))
                snprintf(b, 128, "%.3g", json_real_value(v));
        else if (json_is_true(v))
                snprintf(b, 128, "yes");
        else if (json_is_false(v))
                snprintf(b, 128, "no");
        else
                snprintf(b, 128, "-");
        return b;
}

const char *cli_num(const json_t *obj, const char *key)
{
        return cli_str(obj, key);
}

const char *cli_bytes(const json_t *obj, const char *key)
{
        const json_t *v = json_object_get(obj, key);
        if (json_is_string(v))
                return cli_safe(json_string_value(v));
        if (!json_is_integer(v) || json_integer_value(v) < 0)
                return "-";
        return kerf_format_size((uint64_t)json_integer_value(v), slot(), 128);
}

const char *cli_duration(const json_t *obj, const char *key)
{
        const json_t *v = json_object_get(obj, key);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
                return "-";
        return kerf_format_duration((uint64_t)json_integer_value(v), slot(), 128);
}

bool cli_parse_size(const char *flag, const char *s, uint64_t max, uint64_t *ret)
{
        char why[256], m[KERF_UNITS_BUF];
        uint64_t v;

        if (kerf_parse_size(s, &v, why, sizeof(why)) < 0) {
                cli_err("--%s: %s", flag, why);
                return false;
        }
        if (v > max) {
                cli_err("--%s: '%s' is more than %s", flag, s, kerf_format_size(max, m, sizeof(m)));
                return false;
        }
        *ret = v;
        return true;
}

bool cli_parse_duration(const char *flag, const char *s, uint64_t max, uint64_t *ret)
{
        char why[256], m[KERF_UNITS_BUF];
        uint64_t v;

        if (kerf_parse_duration(s, &v, why, sizeof(why)) < 0) {
                cli_err("--%s: %s", flag, why);
                return false;
        }
        if (v > max) {
                cli_err("--%s: '%s' is longer than %s", flag, s,
                        kerf_format_duration(max, m, sizeof(m)));
                return false;
        }
        *ret = v;
        return true;
}

bool cli_parse_id(const char *s, unsigned long long *ret)
{
        char *end;
        errno = 0;
        unsigned long long v = s ? strtoull(s, &end, 10) : 0;
        if (!s || !*s || *end || errno || v == 0 || s[0] == '-') {
                cli_err("'%s' is not a task id (a positive integer)", s ? s : "");
                return false;
        }
        *ret = v;
        return true;
}

int cli_take_flag(int argc, char **argv, const char *flag, const char *alias, bool *ret_seen)
{
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--"))
                        break;
                if (strcmp(argv[i], flag) != 0 && (!alias || strcmp(argv[i], alias) != 0))
                        continue;
                *ret_seen = true;
                memmove(&argv[i], &argv[i + 1], (size_t)(argc - i) * sizeof(*argv));
                argc--;
                i--;
        }
        return argc;
}

int cli_bad_flag(const char *verb, int opt, char **argv, const struct option *lo)
{
        const char *arg = optind > 0 ? argv[optind - 1] : "";
        const char *names[64];
        char buf[64][48], a[64];
        size_t n = 0;
        if (opt == ':') {
                cli_err("%s: %s needs a value (see kerf %s --help)", verb, arg, verb);
                return KERF_EXIT_USAGE;
        }
        if (optopt && optopt < 256) {
                cli_err("%s: unknown flag '-%c' (see kerf %s --help)", verb, optopt, verb);
                return KERF_EXIT_USAGE;
        }
        for (; lo && lo[n].name && n < 64; n++) {
                snprintf(buf[n], sizeof(buf[n]), "--%s", lo[n].name);
                names[n] = buf[n];
        }
        snprintf(a, sizeof(a), "%s", arg);
        a[strcspn(a, "=")] = '\0'; /* --flag=value */
        const char *near = cli_nearest(a, names, n);
        cli_err("%s: unknown flag '%s'%s%s%s (see kerf %s --help)", verb, cli_safe(arg),
                near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "", verb);
        return KERF_EXIT_USAGE;
}
