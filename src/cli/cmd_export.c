/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_export.c - kerf export: everything a customer takes when leaving, in one tar archive
 * with a manifest of sha256 digests (docs/EXPORT.md). Written to a temporary file beside the
 * target and renamed into place only when complete: FILE is whole or absent. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "cli.h"
#include "kerf/core.h"

#define MAX_POC 64

typedef struct xp {
        cli *c;
        struct archive *a;
        json_t *files; /* manifest entries */
        int64_t now_ms;
        int ex; /* first failure's exit code */
} xp;

/* Adds one regular file `path` (inside the archive) with `len` bytes of `data`. */
static int add(xp *x, const char *path, const void *data, size_t len, const char *format,
               const char *what)
{
        struct archive_entry *e;
        char hex[65];

        if (x->ex)
                return x->ex;
        e = archive_entry_new();
        if (!e) {
                cli_err("export: out of memory");
                return x->ex = KERF_EXIT_REFUSED;
        }
        archive_entry_set_pathname(e, path);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        archive_entry_set_size(e, (la_int64_t)len);
        archive_entry_set_mtime(e, (time_t)(x->now_ms / 1000), 0);
        if (archive_write_header(x->a, e) != ARCHIVE_OK ||
            (len && archive_write_data(x->a, data, len) != (la_ssize_t)len)) {
                cli_err("export: writing %s: %s", path, archive_error_string(x->a));
                archive_entry_free(e);
                return x->ex = KERF_EXIT_REFUSED;
        }
        archive_entry_free(e);
        cli_sha256_hex(data, len, hex);
        if (x->files)
                json_array_append_new(x->files, json_pack("{s:s, s:I, s:s, s:s, s:s}", "path", path,
                                                          "bytes", (json_int_t)len, "sha256", hex,
                                                          "format", format, "what", what));
        return 0;
}

static int add_json(xp *x, const char *path, json_t *j, const char *what)
{
        char *s;
        int r;

        if (x->ex || !j)
                return x->ex ? x->ex : (x->ex = KERF_EXIT_REFUSED);
        s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
        if (!s) {
                cli_err("export: %s: out of memory", path);
                return x->ex = KERF_EXIT_REFUSED;
        }
        size_t l = strlen(s);
        char *nl = realloc(s, l + 2);
        if (nl) {
                s = nl;
                s[l++] = '\n';
                s[l] = 0;
        }
        r = add(x, path, s, l, "json", what);
        free(s);
        return r;
}

/* Every page of a list endpoint (?limit=1000&after=...), as JSON Lines (one item a line). */
static int add_list(xp *x, const char *endpoint, const char *path, const char *what)
{
        char url[600], after[256] = "";
        char *buf = NULL;
        size_t len = 0;
        FILE *m;
        int ex = 0;

        if (x->ex)
                return x->ex;
        if (!(m = open_memstream(&buf, &len))) {
                cli_err("export: out of memory");
                return x->ex = KERF_EXIT_REFUSED;
        }
        for (;;) {
                json_t *j = NULL, *it, *next;
                size_t i;
                snprintf(url, sizeof(url), "%s%slimit=1000%s%s", endpoint,
                         strchr(endpoint, '?') ? "&" : "?", after[0] ? "&after=" : "", after);
                if ((ex = cli_call(x->c, "GET", url, NULL, &j)))
                        break;
                json_array_foreach(json_object_get(j, "items"), i, it)
                {
                        char *line = json_dumps(it, JSON_COMPACT | JSON_PRESERVE_ORDER);
                        if (line) {
                                fputs(line, m);
                                fputc('\n', m);
                        }
                        free(line);
                }
                next = json_object_get(j, "next");
                if (json_is_string(next) && strlen(json_string_value(next)) < sizeof(after) &&
                    strspn(json_string_value(next),
                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
                           "TUVWXYZ0123456789_.-/") == strlen(json_string_value(next))) {
                        snprintf(after, sizeof(after), "%s", json_string_value(next));
                        json_decref(j);
                        continue;
                }
                if (!json_is_null(next) && next) {
                        cli_err("export: %s: a cursor kerf cannot pass back", endpoint);
                        ex = KERF_EXIT_REFUSED;
                }
                json_decref(j);
                break;
        }
        fclose(m);
        if (!ex)
                ex = add(x, path, buf ? buf : "", buf ? len : 0, "jsonl", what);
        else
                x->ex = ex;
        free(buf);
        return ex;
}

static int add_get(xp *x, const char *endpoint, const char *path, const char *what)
{
        json_t *j = NULL;
        int ex;

        if (x->ex)
                return x->ex;
        if ((ex = cli_call(x->c, "GET", endpoint, NULL, &j)))
                return x->ex = ex;
        ex = add_json(x, path, j, what);
        json_decref(j);
        return ex;
}

static int add_raw(xp *x, const char *method, const char *endpoint, const char *path,
                   const char *format, const char *what)
{
        char *body = NULL;
        int ex;

        if (x->ex)
                return x->ex;
        if ((ex = cli_call_raw(x->c, method, endpoint, &body)))
                return x->ex = ex;
        ex = add(x, path, body ? body : "", body ? strlen(body) : 0, format, what);
        free(body);
        return ex;
}

/* A POC report directory, recursively: regular files only (a link or device is refused, so
 * that the archive holds what the report is, not what a link points at). */
static int name_cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_tree(xp *x, const char *dir, const char *prefix, int depth)
{
        DIR *d;
        struct dirent *de;
        int ex = 0;

        if (depth > 16) {
                cli_err("export: --poc %s: nested more than 16 levels", dir);
                return x->ex = KERF_EXIT_USAGE;
        }
        if (!(d = opendir(dir))) {
                cli_err("export: --poc %s: %s", dir, strerror(errno));
                return x->ex = KERF_EXIT_USAGE;
        }
        /* sorted, so that two exports of one directory list it alike */
        char **names = NULL;
        size_t n = 0, cap = 0;
        while ((de = readdir(d))) {
                if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                        continue;
                if (n == cap) {
                        cap = cap ? cap * 2 : 16;
                        char **nn = realloc(names, cap * sizeof(*nn));
                        if (!nn)
                                break;
                        names = nn;
                }
                names[n++] = strdup(de->d_name);
        }
        closedir(d);
        if (n) /* qsort hands the comparator pointers to the elements (char **) */
                qsort(names, n, sizeof(*names), name_cmp);
        for (size_t i = 0; i < n && !ex; i++) {
                char src[PATH_MAX], dst[PATH_MAX];
                struct stat st;
                if (!names[i] ||
                    snprintf(src, sizeof(src), "%s/%s", dir, names[i]) >= (int)sizeof(src) ||
                    snprintf(dst, sizeof(dst), "%s/%s", prefix, names[i]) >= (int)sizeof(dst)) {
                        cli_err("export: --poc %s: a path too long", dir);
                        ex = x->ex = KERF_EXIT_USAGE;
                        break;
                }
                if (lstat(src, &st) < 0) {
                        cli_err("export: %s: %s", src, strerror(errno));
                        ex = x->ex = KERF_EXIT_USAGE;
                } else if (S_ISDIR(st.st_mode)) {
                        ex = add_tree(x, src, dst, depth + 1);
                } else if (S_ISREG(st.st_mode)) {
                        char *buf = NULL;
                        size_t len = 0;
                        FILE *f = fopen(src, "re"), *m = open_memstream(&buf, &len);
                        char chunk[65536];
                        size_t got;
                        bool ok = f && m;
                        while (ok && (got = fread(chunk, 1, sizeof(chunk), f)) > 0)
                                ok = fwrite(chunk, 1, got, m) == got;
                        if (f && ferror(f))
                                ok = false;
                        if (f)
                                fclose(f);
                        if (m)
                                fclose(m);
                        if (!ok) {
                                cli_err("export: %s: %s", src, strerror(errno ? errno : EIO));
                                ex = x->ex = KERF_EXIT_USAGE;
                        } else {
                                ex = add(x, dst, buf ? buf : "", len, "poc", "a POC report file");
                        }
                        free(buf);
                } else {
                        cli_err("export: %s: not a regular file or directory (links are not "
                                "followed)",
                                src);
                        ex = x->ex = KERF_EXIT_USAGE;
                }
        }
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return ex;
}

static int poc_name(const char *dir, char *out, size_t cap)
{
        char tmp[PATH_MAX];
        size_t l;

        snprintf(tmp, sizeof(tmp), "%s", dir);
        while ((l = strlen(tmp)) > 1 && tmp[l - 1] == '/')
                tmp[l - 1] = 0;
        snprintf(out, cap, "%s", basename(tmp));
        return kerf_name_ok(out) ? 0 : -EINVAL;
}

#define METRICS_NOTE                                                                               \
        "kerfd keeps no time series of its metrics. The history it keeps, and this archive "       \
        "holds, is: cost/runs.jsonl (every run of every task: tenant, route, unit kind, fraction " \
        "of a GPU, start, end, measured device time), tasks.jsonl (submit, start, end, queue "     \
        "wait, preemptions of each task), events.jsonl and the audit chain. metrics.prom is a "    \
        "snapshot of /metrics at export time, not a history."

static int build(xp *x, const char **poc, int n_poc)
{
        json_t *ver = NULL, *who = NULL, *man;
        int ex;

        if ((ex = cli_call(x->c, "GET", "/v1/whoami", NULL, &who)))
                return ex;
        if (!json_is_true(json_object_get(who, "admin")) ||
            json_is_string(json_object_get(who, "tenant"))) {
                json_decref(who);
                cli_err("export: admin only (kerfd takes you for a tenant): run it as root or a "
                        "member of group kerf, without a token");
                return KERF_EXIT_DENIED;
        }
        json_decref(who);
        if ((ex = cli_call(x->c, "GET", "/v1/version", NULL, &ver)))
                return ex;
        add_get(x, "/v1/config", "config.json", "kerfd's effective configuration, no secrets");
        add_list(x, "/v1/tenants", "tenants.jsonl", "tenants: quotas, usage, ceilings, identity");
        add_list(x, "/v1/tasks", "tasks.jsonl", "every task, finished or not");
        add_list(x, "/v1/units", "units.jsonl", "units: whole GPUs, MIG instances, slices");
        add_list(x, "/v1/gpus", "gpus.jsonl", "GPUs at export time");
        add_list(x, "/v1/events", "events.jsonl", "events: XIDs, faults, MIG changes, preemptions");
        /* the checkpoint first: the export taken after it holds its record (or more) */
        add_raw(x, "POST", "/v1/audit/checkpoint", "audit/checkpoint.json", "json",
                "a signed checkpoint of the audit chain's head (Ed25519)");
        add_raw(x, "GET", "/v1/audit/export", "audit/audit.jsonl", "jsonl",
                "the whole audit chain; kerf audit verify --in checks it offline");
        add_list(x, "/v1/cost/runs", "cost/runs.jsonl", "every run of every task (cost history)");
        add_get(x, "/v1/cost", "cost/summary.json",
                "GPU-hours granted and used per tenant, route and unit kind, all time");
        add_raw(x, "GET", "/metrics", "metrics.prom", "prometheus",
                "a snapshot of /metrics at export time");
        for (int i = 0; i < n_poc && !x->ex; i++) {
                char name[KERF_NAME_LEN * 2], prefix[PATH_MAX];
                poc_name(poc[i], name, sizeof(name));
                snprintf(prefix, sizeof(prefix), "poc/%s", name);
                add_tree(x, poc[i], prefix, 0);
        }
        if (x->ex) {
                json_decref(ver);
                return x->ex;
        }
        {
                time_t t = (time_t)(x->now_ms / 1000);
                char when[32];
                struct tm tm;
                strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
                man = json_pack("{s:s, s:i, s:s, s:O, s:I, s:s, s:s, s:s, s:O}", "kind",
                                "kerf-export", "version", 1, "kerf_client", KERF_VERSION, "kerfd",
                                ver, "created_ms", (json_int_t)x->now_ms, "created", when,
                                "metrics_history", METRICS_NOTE, "audit_verify",
                                "kerf audit verify --in audit/audit.jsonl --against "
                                "audit/checkpoint.json --key <kerfd's audit.pub, kept apart>",
                                "files", x->files);
        }
        json_t *files = x->files;
        x->files = NULL; /* the manifest does not list itself */
        add_json(x, "manifest.json", man, "");
        x->files = files;
        json_decref(man);
        json_decref(ver);
        return x->ex;
}

int cli_export(cli *c, int argc, char **argv)
{
        const char *out = NULL, *poc[MAX_POC];
        int n_poc = 0, fd, ex;
        char tmp[PATH_MAX + 32];
        struct timespec ts;
        xp x = {.c = c};

        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--out") && i + 1 < argc) {
                        out = argv[++i];
                } else if (!strcmp(argv[i], "--poc") && i + 1 < argc) {
                        if (n_poc == MAX_POC) {
                                cli_err("export: at most %d --poc directories", MAX_POC);
                                return KERF_EXIT_USAGE;
                        }
                        poc[n_poc++] = argv[++i];
                } else {
                        cli_err("export: unexpected '%s' (expected --out FILE [--poc DIR]...)",
                                cli_safe(argv[i]));
                        return KERF_EXIT_USAGE;
                }
        }
        if (!out || !*out) {
                cli_err("export: --out FILE is required");
                return KERF_EXIT_USAGE;
        }
        for (int i = 0; i < n_poc; i++) {
                char name[KERF_NAME_LEN * 2], other[KERF_NAME_LEN * 2];
                struct stat st;
                if (stat(poc[i], &st) < 0 || !S_ISDIR(st.st_mode)) {
                        cli_err("export: --poc %s: not a directory", cli_safe(poc[i]));
                        return KERF_EXIT_USAGE;
                }
                if (poc_name(poc[i], name, sizeof(name)) < 0) {
                        cli_err("export: --poc %s: its name must be " KERF_NAME_RULE,
                                cli_safe(poc[i]));
                        return KERF_EXIT_USAGE;
                }
                for (int k = 0; k < i; k++)
                        if (poc_name(poc[k], other, sizeof(other)) == 0 && !strcmp(name, other)) {
                                cli_err("export: two --poc directories are named %s", name);
                                return KERF_EXIT_USAGE;
                        }
        }
        if (sodium_init() < 0) {
                cli_err("export: libsodium could not start");
                return KERF_EXIT_REFUSED;
        }
        if (snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", out) >= (int)sizeof(tmp)) {
                cli_err("export: --out %s: path too long", cli_safe(out));
                return KERF_EXIT_USAGE;
        }
        if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
                cli_err("export: cannot write beside %s: %s", cli_safe(out), strerror(errno));
                return KERF_EXIT_REFUSED;
        }
        clock_gettime(CLOCK_REALTIME, &ts);
        x.now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
        x.files = json_array();
        x.a = archive_write_new();
        if (!x.a || archive_write_set_format_pax_restricted(x.a) != ARCHIVE_OK ||
            archive_write_open_fd(x.a, fd) != ARCHIVE_OK) {
                cli_err("export: %s", x.a ? archive_error_string(x.a) : "out of memory");
                ex = KERF_EXIT_REFUSED;
        } else {
                ex = build(&x, poc, n_poc);
                if (archive_write_close(x.a) != ARCHIVE_OK && !ex) {
                        cli_err("export: finishing %s: %s", tmp, archive_error_string(x.a));
                        ex = KERF_EXIT_REFUSED;
                }
        }
        if (x.a)
                archive_write_free(x.a);
        if (!ex && fsync(fd) < 0) {
                cli_err("export: %s: %s", tmp, strerror(errno));
                ex = KERF_EXIT_REFUSED;
        }
        if (close(fd) < 0 && !ex) {
                cli_err("export: %s: %s", tmp, strerror(errno));
                ex = KERF_EXIT_REFUSED;
        }
        if (!ex && rename(tmp, out) < 0) {
                cli_err("export: %s: %s", cli_safe(out), strerror(errno));
                ex = KERF_EXIT_REFUSED;
        }
        if (ex) {
                unlink(tmp); /* nothing partial is left */
        } else if (!c->json) {
                printf("exported %zu files to %s (manifest.json lists their sha256)\n",
                       json_array_size(x.files) + 1, out);
        } else {
                json_t *j = json_pack("{s:s, s:I}", "out", out, "files",
                                      (json_int_t)json_array_size(x.files) + 1);
                cli_print_json(j);
                json_decref(j);
        }
        json_decref(x.files);
        return ex;
}
