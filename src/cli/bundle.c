/* SPDX-License-Identifier: Apache-2.0 */
/* bundle.c - the merged audit bundle of a cluster export: manifest.json (every node, its
 * checkpoint, record count and file digests) and merged.jsonl (every node's records in one time
 * order), and kerf audit verify --bundle over it (docs/CLUSTER.md "Merged audit bundle") */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "cli.h"
#include "kerf/core.h"
#include "kerf/store.h"

#define BUNDLE_KIND   "kerf-audit-bundle"
#define BUNDLE_ORDER  "time_ms, node, seq"
#define MAX_PROBLEMS  10 /* lines printed per node; the rest are counted */
#define SHA256_HEX    CLI_SHA256_HEX
#define AUDIT_FILE    "audit.jsonl"
#define CP_FILE       "checkpoint.json"
#define MERGED_FILE   "merged.jsonl"
#define MANIFEST_FILE "manifest.json"

/* One audit record of the bundle: where it sorts, where its line is (export) and a digest of
 * its canonical JSON (sorted keys, compact), which tells an altered copy from the original. */
typedef struct brec {
        int64_t time_ms;
        uint64_t seq;
        size_t node; /* index into the bundle's nodes */
        const char *line;
        size_t len;
        unsigned char dig[crypto_hash_sha256_BYTES];
        bool seen;
} brec;

typedef struct brecs {
        brec *v;
        size_t n, cap;
} brecs;

/* The digest of record object `o` and its seq and time_ms; -EINVAL when it is not a record. */
static int rec_of(json_t *o, brec *r)
{
        json_t *seq = json_object_get(o, "seq"), *tm = json_object_get(o, "time_ms");
        char *canon;

        if (!json_is_object(o) || !json_is_integer(seq) || json_integer_value(seq) <= 0 ||
            !json_is_integer(tm))
                return -EINVAL;
        canon = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
        if (!canon)
                return -ENOMEM;
        crypto_hash_sha256(r->dig, (const unsigned char *)canon, strlen(canon));
        free(canon);
        r->seq = (uint64_t)json_integer_value(seq);
        r->time_ms = (int64_t)json_integer_value(tm);
        return 0;
}

/* Appends every record of audit export `text` (node `node`) to *rs; a line that is not a record
 * sets why (line number) and returns -EINVAL, or is skipped when why is NULL (the chain check
 * has reported it already). */
static int load_records(char *text, size_t node, brecs *rs, char *why, size_t cap)
{
        size_t lineno = 0;

        for (char *p = text, *nl; p && *p; p = nl ? nl + 1 : NULL) {
                brec r = {.node = node, .line = p};
                json_t *o;
                int q;

                nl = strchr(p, '\n');
                r.len = nl ? (size_t)(nl - p) : strlen(p);
                lineno++;
                if (r.len == 0)
                        continue;
                o = json_loadb(p, r.len, JSON_REJECT_DUPLICATES, NULL);
                q = o ? rec_of(o, &r) : -EINVAL;
                json_decref(o);
                if (q < 0 && !why)
                        continue;
                if (q < 0) {
                        snprintf(why, cap, AUDIT_FILE " line %zu is not an audit record", lineno);
                        return q;
                }
                if (rs->n == rs->cap) {
                        size_t nc = rs->cap ? 2 * rs->cap : 1024;
                        brec *nv = realloc(rs->v, nc * sizeof(*nv));
                        if (!nv) {
                                if (why)
                                        snprintf(why, cap, "out of memory");
                                return -ENOMEM;
                        }
                        rs->v = nv;
                        rs->cap = nc;
                }
                rs->v[rs->n++] = r;
        }
        return 0;
}

/* The bundle's order: time, then node name, then seq (docs/CLUSTER.md). */
static const cli_bundle_node *sort_nodes;
static int key_cmp(int64_t ta, const char *na, uint64_t sa, int64_t tb, const char *nb, uint64_t sb)
{
        int c;
        if (ta != tb)
                return ta < tb ? -1 : 1;
        if ((c = strcmp(na, nb)))
                return c;
        return sa < sb ? -1 : sa > sb;
}

static int brec_cmp(const void *a, const void *b)
{
        const brec *x = a, *y = b;
        return key_cmp(x->time_ms, sort_nodes[x->node].name, x->seq, y->time_ms,
                       sort_nodes[y->node].name, y->seq);
}

/* Writes what fill(arg) opens to DIR/NAME through a temporary file renamed into place. */
static int write_atomic(const char *dir, const char *name, FILE *(*fill)(void *), void *arg,
                        char *err, size_t errlen)
{
        char tmp[4400], dst[4400];
        FILE *src = fill(arg), *f;
        char chunk[65536];
        size_t k;
        int r = 0;

        snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
        snprintf(dst, sizeof(dst), "%s/%s", dir, name);
        if (!src) {
                snprintf(err, errlen, "%s: out of memory", dst);
                return -ENOMEM;
        }
        f = fopen(tmp, "we");
        if (!f) {
                r = -errno;
                goto out;
        }
        while ((k = fread(chunk, 1, sizeof(chunk), src)) > 0)
                if (fwrite(chunk, 1, k, f) != k)
                        break;
        if (ferror(f) || fclose(f) != 0) {
                r = errno ? -errno : -EIO;
                unlink(tmp);
                goto out;
        }
        if (rename(tmp, dst) < 0) {
                r = -errno;
                unlink(tmp);
        }
out:
        if (r < 0)
                snprintf(err, errlen, "%s: %s", dst, strerror(-r));
        fclose(src);
        return r;
}

typedef struct wctx {
        const cli_bundle_node *nodes;
        const brecs *rs;
        const char *manifest;
        char *buf;
        size_t len;
} wctx;

static FILE *merged_text(void *arg)
{
        wctx *w = arg;
        FILE *m = open_memstream(&w->buf, &w->len);
        if (!m)
                return NULL;
        for (size_t i = 0; i < w->rs->n; i++) {
                const brec *r = &w->rs->v[i];
                fprintf(m, "{\"node\":\"%s\",\"record\":%.*s}\n", w->nodes[r->node].name,
                        (int)r->len, r->line);
        }
        if (fclose(m) != 0)
                return NULL;
        return fmemopen(w->buf, w->len, "r");
}

static FILE *manifest_text(void *arg)
{
        wctx *w = arg;
        w->len = strlen(w->manifest);
        return fmemopen((void *)w->manifest, w->len, "r");
}

/* Reads back node i's files, its checkpoint and records; sets nodes[i].error on failure. */
static json_t *node_entry(const char *dir, cli_bundle_node *nd, size_t i, brecs *rs, char **texts)
{
        char path[4400], cph[SHA256_HEX], auh[SHA256_HEX], perr[256];
        size_t cplen = 0, aulen = 0, before = rs->n;
        char *cp = NULL, *au = NULL, *last = NULL;
        kerf_store_checkpoint c;
        json_t *e;

        e = json_pack("{s:s, s:s, s:I}", "name", nd->name, "endpoint", nd->endpoint, "exported_s",
                      (json_int_t)nd->exported_s);
        if (nd->error[0])
                goto failed;
        snprintf(path, sizeof(path), "%s/%s/" CP_FILE, dir, nd->name);
        if (!(cp = cli_file_read(path, &cplen))) {
                snprintf(nd->error, sizeof(nd->error), "%s/" CP_FILE ": %s", nd->name,
                         strerror(errno));
                goto failed;
        }
        snprintf(path, sizeof(path), "%s/%s/" AUDIT_FILE, dir, nd->name);
        if (!(au = cli_file_read(path, &aulen))) {
                snprintf(nd->error, sizeof(nd->error), "%s/" AUDIT_FILE ": %s", nd->name,
                         strerror(errno));
                goto failed;
        }
        cli_sha256_hex(cp, cplen, cph);
        cli_sha256_hex(au, aulen, auh);
        for (char *p = strtok(cp, "\n"); p; p = strtok(NULL, "\n"))
                last = p;
        if (!last || kerf_store_checkpoint_parse(last, NULL, &c, perr, sizeof(perr)) < 0) {
                snprintf(nd->error, sizeof(nd->error), CP_FILE ": %s", last ? perr : "empty");
                goto failed;
        }
        if (nd->key[0] && strcmp(c.public_key, nd->key) != 0) {
                snprintf(nd->error, sizeof(nd->error),
                         CP_FILE " is signed by key %.16s..., not the nodes file's audit_key "
                                 "%.16s...",
                         c.public_key, nd->key);
                goto failed;
        }
        if (load_records(au, i, rs, nd->error, sizeof(nd->error)) < 0)
                goto failed;
        json_object_set_new(e, "ok", json_true());
        json_object_set_new(e, "checkpoint",
                            json_pack("{s:I, s:s, s:I}", "seq", (json_int_t)c.seq, "hash", c.hash,
                                      "time_ms", (json_int_t)c.time_ms));
        json_object_set_new(e, "records", json_integer((json_int_t)(rs->n - before)));
        json_object_set_new(e, "files",
                            json_pack("{s:{s:I, s:s}, s:{s:I, s:s}}", AUDIT_FILE, "bytes",
                                      (json_int_t)aulen, "sha256", auh, CP_FILE, "bytes",
                                      (json_int_t)cplen, "sha256", cph));
        free(cp);
        *texts = au; /* merged.jsonl points into it */
        return e;
failed:
        rs->n = before;
        free(cp);
        free(au);
        json_object_set_new(e, "ok", json_false());
        json_object_set_new(e, "error", json_string(nd->error));
        return e;
}

int cli_bundle_write(const char *dir, cli_bundle_node *nodes, size_t n, size_t *ret_records,
                     char *err, size_t errlen)
{
        brecs rs = {0};
        char **texts = calloc(n ? n : 1, sizeof(*texts));
        json_t *man, *arr = json_array();
        wctx w = {.nodes = nodes, .rs = &rs};
        time_t now = time(NULL);
        char created[32];
        int r = -ENOMEM;

        if (!texts || !arr || sodium_init() < 0) {
                snprintf(err, errlen, "out of memory");
                goto out;
        }
        for (size_t i = 0; i < n; i++)
                json_array_append_new(arr, node_entry(dir, &nodes[i], i, &rs, &texts[i]));
        sort_nodes = nodes;
        if (rs.n)
                qsort(rs.v, rs.n, sizeof(*rs.v), brec_cmp);
        if ((r = write_atomic(dir, MERGED_FILE, merged_text, &w, err, errlen)) < 0)
                goto out;
        strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        man = json_pack("{s:s, s:i, s:s, s:I, s:s, s:{s:s, s:I, s:s}, s:O}", "kind", BUNDLE_KIND,
                        "version", 1, "created", created, "created_s", (json_int_t)now, "verify",
                        "kerf audit verify --bundle DIR", "merged", "file", MERGED_FILE, "records",
                        (json_int_t)rs.n, "order", BUNDLE_ORDER, "nodes", arr);
        w.manifest = man ? json_dumps(man, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
        json_decref(man);
        free(w.buf);
        w.buf = NULL;
        if (!w.manifest) {
                snprintf(err, errlen, "out of memory");
                r = -ENOMEM;
                goto out;
        }
        r = write_atomic(dir, MANIFEST_FILE, manifest_text, &w, err, errlen);
        free((char *)w.manifest);
        if (r == 0 && ret_records)
                *ret_records = rs.n;
out:
        free(w.buf);
        for (size_t i = 0; texts && i < n; i++)
                free(texts[i]);
        free(texts);
        free(rs.v);
        json_decref(arr);
        return r;
}

/* ---- kerf audit verify --bundle ------------------------------------------------------------ */

typedef struct vnode {
        const char *name;
        bool exported;   /* false: the manifest lists its export as failed */
        const char *why; /* the manifest's reason when not exported */
        size_t first, n; /* its records in the verifier's list */
        uint64_t cp_seq;
        const char *key; /* the nodes file's audit_key for it, or NULL */
        json_t *problems;
} vnode;

static void problem(json_t *list, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(json_t *list, const char *fmt, ...)
{
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        json_array_append_new(list, json_string(msg));
}

/* The file `name` of node v against the manifest's bytes and sha256; returns its text or NULL. */
static char *node_file(const char *dir, vnode *v, json_t *files, const char *name, size_t *len)
{
        char path[4400], hex[SHA256_HEX];
        json_t *f = json_object_get(files, name);
        const char *want = json_string_value(json_object_get(f, "sha256"));
        char *text;

        snprintf(path, sizeof(path), "%s/%s/%s", dir, v->name, name);
        if (!(text = cli_file_read(path, len))) {
                problem(v->problems, "%s/%s: %s", v->name, name, strerror(errno));
                return NULL;
        }
        cli_sha256_hex(text, *len, hex);
        if (!want)
                problem(v->problems, "the manifest gives no sha256 of %s/%s", v->name, name);
        else if (strcmp(want, hex) != 0)
                problem(v->problems,
                        "%s/%s: its SHA-256 %.16s... is not the manifest's %.16s... (the file or "
                        "the manifest was edited after the export)",
                        v->name, name, hex, want);
        return text;
}

/* Node v's own checks: file digests, its checkpoint (signature, and the one the manifest
 * names), its chain against it (kerf_store_audit_verify_file), its record count. */
static void verify_node(const char *dir, vnode *v, size_t i, json_t *e, brecs *rs, char **au)
{
        json_t *mcp = json_object_get(e, "checkpoint"), *files = json_object_get(e, "files");
        char *cp, *last = NULL, perr[256];
        size_t cplen, aulen;
        kerf_store_checkpoint c;
        kerf_store_audit_report rep;
        bool have_cp = false;
        FILE *f;

        cp = node_file(dir, v, files, CP_FILE, &cplen);
        *au = node_file(dir, v, files, AUDIT_FILE, &aulen);
        for (char *p = cp ? strtok(cp, "\n") : NULL; p; p = strtok(NULL, "\n"))
                last = p;
        if (cp && last && v->key &&
            kerf_store_checkpoint_parse(last, v->key, &c, perr, sizeof(perr)) < 0 &&
            kerf_store_checkpoint_parse(last, NULL, &c, perr, sizeof(perr)) == 0) {
                problem(v->problems,
                        "%s/" CP_FILE " is signed by key %.16s..., not the nodes file's "
                        "audit_key %.16s... (another kerfd's chain, or a forged one)",
                        v->name, c.public_key, v->key);
                last = NULL;
        } else if (cp &&
                   (!last || kerf_store_checkpoint_parse(last, NULL, &c, perr, sizeof(perr)) < 0))
                problem(v->problems, "%s/" CP_FILE ": %s", v->name, last ? perr : "empty");
        else if (cp) {
                have_cp = true;
                v->cp_seq = c.seq;
                if ((uint64_t)json_integer_value(json_object_get(mcp, "seq")) != c.seq ||
                    !json_is_string(json_object_get(mcp, "hash")) ||
                    strcmp(json_string_value(json_object_get(mcp, "hash")), c.hash) != 0)
                        problem(
                            v->problems,
                            "%s/" CP_FILE " (seq %" PRIu64
                            ") is not the checkpoint the manifest names (seq %" JSON_INTEGER_FORMAT
                            ")",
                            v->name, c.seq, json_integer_value(json_object_get(mcp, "seq")));
        }
        free(cp);
        if (!*au)
                return;
        f = fmemopen(*au, aulen, "r");
        if (!f || kerf_store_audit_verify_file(f, have_cp ? &c : NULL, &rep) < 0)
                problem(v->problems, "%s/" AUDIT_FILE ": unreadable", v->name);
        else if (!rep.ok)
                problem(v->problems,
                        "%s/" AUDIT_FILE ": audit chain broken at record %" PRIu64 ": %s", v->name,
                        rep.first_bad, rep.problem);
        if (f)
                fclose(f);
        v->first = rs->n;
        if (load_records(*au, i, rs, NULL, 0) < 0)
                problem(v->problems, "%s/" AUDIT_FILE ": out of memory", v->name);
        v->n = rs->n - v->first;
        if ((json_int_t)v->n != json_integer_value(json_object_get(e, "records")))
                problem(v->problems,
                        "%s/" AUDIT_FILE
                        " holds %zu records, the manifest says %" JSON_INTEGER_FORMAT,
                        v->name, v->n, json_integer_value(json_object_get(e, "records")));
}

static vnode *find_node(vnode *vs, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (vs[i].name && !strcmp(vs[i].name, name))
                        return &vs[i];
        return NULL;
}

static brec *find_rec(brecs *rs, const vnode *v, uint64_t seq)
{
        if (seq >= 1 && seq <= v->n && rs->v[v->first + seq - 1].seq == seq)
                return &rs->v[v->first + seq - 1];
        for (size_t i = 0; i < v->n; i++)
                if (rs->v[v->first + i].seq == seq)
                        return &rs->v[v->first + i];
        return NULL;
}

/* merged.jsonl: exactly the union of the nodes' records (none missing, added or altered, by
 * node, seq and the record's whole content) in the bundle's order. */
static void verify_merged(const char *dir, vnode *vs, size_t n, brecs *rs, json_t *bprob)
{
        char path[4400], pn[64] = "";
        size_t lineno = 0;
        int64_t pt = 0;
        uint64_t ps = 0;
        bool have_prev = false;
        char *text;

        snprintf(path, sizeof(path), "%s/" MERGED_FILE, dir);
        if (!(text = cli_file_read(path, NULL))) {
                problem(bprob, MERGED_FILE ": %s", strerror(errno));
                return;
        }
        for (char *p = text, *nl; p && *p; p = nl ? nl + 1 : NULL) {
                size_t len;
                json_t *o;
                const char *node;
                brec r = {0}, *b = NULL;
                vnode *v = NULL;

                nl = strchr(p, '\n');
                len = nl ? (size_t)(nl - p) : strlen(p);
                lineno++;
                if (len == 0)
                        continue;
                o = json_loadb(p, len, JSON_REJECT_DUPLICATES, NULL);
                node = json_string_value(json_object_get(o, "node"));
                if (!node || json_object_size(o) != 2 ||
                    rec_of(json_object_get(o, "record"), &r) < 0) {
                        problem(bprob, MERGED_FILE " line %zu is not {\"node\", \"record\"}",
                                lineno);
                } else if (!(v = find_node(vs, n, node))) {
                        problem(bprob, MERGED_FILE " line %zu: node '%s' is not in the manifest",
                                lineno, node);
                } else if (!v->exported) {
                        problem(v->problems,
                                MERGED_FILE " line %zu holds a record of %s, whose export failed "
                                            "(added)",
                                lineno, v->name);
                } else if (!(b = find_rec(rs, v, r.seq))) {
                        problem(v->problems,
                                MERGED_FILE " line %zu: record seq %" PRIu64
                                            " of %s is not in %s/" AUDIT_FILE " (added)",
                                lineno, r.seq, v->name, v->name);
                } else if (b->seen) {
                        problem(v->problems,
                                MERGED_FILE " line %zu: record seq %" PRIu64
                                            " of %s appears twice (added)",
                                lineno, r.seq, v->name);
                        b = NULL;
                } else {
                        b->seen = true;
                        if (memcmp(b->dig, r.dig, sizeof(r.dig)) != 0)
                                problem(v->problems,
                                        MERGED_FILE " line %zu: record seq %" PRIu64
                                                    " of %s differs from %s/" AUDIT_FILE
                                                    " (altered)",
                                        lineno, r.seq, v->name, v->name);
                }
                if (b) {
                        if (have_prev && key_cmp(r.time_ms, v->name, r.seq, pt, pn, ps) <= 0)
                                problem(v->problems,
                                        MERGED_FILE " line %zu: record seq %" PRIu64
                                                    " of %s is out of order (" BUNDLE_ORDER ")",
                                        lineno, r.seq, v->name);
                        have_prev = true;
                        pt = r.time_ms;
                        ps = r.seq;
                        snprintf(pn, sizeof(pn), "%s", v->name);
                }
                json_decref(o);
        }
        free(text);
        for (size_t i = 0; i < n; i++) {
                size_t miss = 0;
                uint64_t first = 0;
                for (size_t k = 0; vs[i].exported && k < vs[i].n; k++)
                        if (!rs->v[vs[i].first + k].seen && !miss++)
                                first = rs->v[vs[i].first + k].seq;
                if (miss == 1)
                        problem(vs[i].problems,
                                MERGED_FILE " lacks record seq %" PRIu64 " of %s (dropped)", first,
                                vs[i].name);
                else if (miss)
                        problem(vs[i].problems,
                                MERGED_FILE " lacks %zu records of %s, the first seq %" PRIu64
                                            " (dropped)",
                                miss, vs[i].name, first);
        }
}

/* A node directory (one holding an audit.jsonl) the manifest does not list. */
static void verify_dirs(const char *dir, vnode *vs, size_t n, json_t *bprob)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        char path[4400];
        struct stat st;

        if (!d)
                return;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' || find_node(vs, n, de->d_name))
                        continue;
                snprintf(path, sizeof(path), "%s/%s/" AUDIT_FILE, dir, de->d_name);
                if (stat(path, &st) == 0)
                        problem(bprob,
                                "%s/ holds an audit export but is not in the manifest (a node "
                                "removed from it, or left from an earlier export into %s)",
                                de->d_name, dir);
        }
        closedir(d);
}

static void print_node(const vnode *v)
{
        size_t np = json_array_size(v->problems), i;
        json_t *p;

        if (!v->exported) {
                printf("%s: NOT EXPORTED: %s\n", v->name, cli_safe(v->why));
                return;
        }
        if (!np) {
                printf("%s: OK: %zu records, checkpoint seq %" PRIu64 "%s, all in " MERGED_FILE
                       "\n",
                       v->name, v->n, v->cp_seq, v->key ? ", key pinned" : "");
                return;
        }
        json_array_foreach(v->problems, i, p)
        {
                if (i == MAX_PROBLEMS) {
                        printf("%s: FAIL: ... and %zu more problems\n", v->name, np - i);
                        break;
                }
                printf("%s: FAIL: %s\n", v->name, cli_safe(json_string_value(p)));
        }
}

static int report(const char *dir, vnode *vs, size_t n, size_t records, json_t *bprob,
                  const char *pins_from, bool json)
{
        char failed[2048] = "", missing[2048] = "";
        bool ok = json_array_size(bprob) == 0, partial = false;
        json_t *out = json_array(), *p;
        size_t i, nodes = 0;

        for (i = 0; i < n; i++) {
                vnode *v = &vs[i];
                json_t *e;
                if (!v->name)
                        continue;
                nodes++;
                if (!v->exported) {
                        partial = true;
                        snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
                                 "%s%s (%s)", missing[0] ? ", " : "", v->name, cli_safe(v->why));
                        e = json_pack("{s:s, s:s, s:s}", "node", v->name, "status", "not_exported",
                                      "error", v->why);
                } else {
                        bool good = json_array_size(v->problems) == 0;
                        if (!good)
                                snprintf(failed + strlen(failed), sizeof(failed) - strlen(failed),
                                         "%s%s", failed[0] ? ", " : "", v->name);
                        ok = ok && good;
                        e = json_pack("{s:s, s:s, s:I, s:I, s:b, s:O}", "node", v->name, "status",
                                      good ? "ok" : "fail", "records", (json_int_t)v->n,
                                      "checkpoint_seq", (json_int_t)v->cp_seq, "key_pinned",
                                      v->key != NULL, "problems", v->problems);
                }
                json_array_append_new(out, e);
                if (!json)
                        print_node(v);
        }
        if (json) {
                json_t *o =
                    json_pack("{s:s, s:b, s:b, s:I, s:s?, s:o, s:O}", "bundle", dir, "ok",
                              ok && !partial, "partial", partial, "records", (json_int_t)records,
                              "pinned_by", pins_from, "nodes", out, "problems", bprob);
                cli_print_json(o);
                json_decref(o);
                return ok && !partial ? 0 : KERF_EXIT_REFUSED;
        }
        json_decref(out);
        json_array_foreach(bprob, i, p)
            printf("bundle: FAIL: %s\n", cli_safe(json_string_value(p)));
        if (!pins_from)
                printf("bundle: note: which nodes it must hold and their keys were not checked "
                       "(--nodes FILE with each node's audit_key pins them)\n");
        if (ok && !partial)
                printf("bundle %s intact: %zu nodes, %zu records\n", cli_safe(dir), nodes, records);
        else
                printf("bundle %s does NOT verify:%s%s%s%s%s\n", cli_safe(dir),
                       failed[0] ? " FAIL " : "", failed, !ok && !failed[0] ? " FAIL bundle" : "",
                       partial ? "; PARTIAL, not exported: " : "", missing);
        return ok && !partial ? 0 : KERF_EXIT_REFUSED;
}

/* The pins: every node of the bundle is one of them (its key, if pinned, set in vs), and every
 * one of them is in the bundle. */
static void check_pins(vnode *vs, size_t n, const cli_bundle_pin *pins, size_t n_pins,
                       const char *from, json_t *bprob)
{
        for (size_t i = 0; i < n; i++) {
                size_t k = 0;
                if (!vs[i].name)
                        continue;
                while (k < n_pins && strcmp(pins[k].name, vs[i].name) != 0)
                        k++;
                if (k == n_pins)
                        problem(bprob, "node %s is in the bundle but not in %s", vs[i].name, from);
                else if (pins[k].key[0])
                        vs[i].key = pins[k].key;
        }
        for (size_t k = 0; k < n_pins; k++)
                if (!find_node(vs, n, pins[k].name))
                        problem(bprob,
                                "node %s of %s is not in the bundle (removed from it: no "
                                "directory, manifest entry or lines; or exported from another "
                                "nodes file)",
                                pins[k].name, from);
}

int cli_bundle_verify(const char *dir, const cli_bundle_pin *pins, size_t n_pins,
                      const char *pins_from, bool json)
{
        char path[4400];
        json_error_t je;
        json_t *man, *nodes, *bprob = json_array();
        vnode *vs = NULL;
        char **aus = NULL;
        brecs rs = {0};
        size_t n = 0;
        int ex = KERF_EXIT_REFUSED;

        snprintf(path, sizeof(path), "%s/" MANIFEST_FILE, dir);
        man = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
        if (!man) {
                if (access(path, F_OK) < 0) {
                        cli_err("audit verify --bundle: %s: %s (a directory written by kerf "
                                "cluster audit export --out DIR)",
                                path, strerror(errno));
                        ex = KERF_EXIT_USAGE;
                } else {
                        cli_err("audit verify --bundle: %s: not JSON: %s (line %d)", path, je.text,
                                je.line);
                }
                goto out;
        }
        nodes = json_object_get(man, "nodes");
        if (!json_is_string(json_object_get(man, "kind")) ||
            strcmp(json_string_value(json_object_get(man, "kind")), BUNDLE_KIND) != 0 ||
            json_integer_value(json_object_get(man, "version")) != 1 || !json_is_array(nodes)) {
                cli_err("audit verify --bundle: %s: not a kerf audit bundle manifest (kind "
                        "\"" BUNDLE_KIND "\", version 1, nodes)",
                        path);
                goto out;
        }
        if (sodium_init() < 0) {
                cli_err("audit verify --bundle: libsodium failed to start");
                goto out;
        }
        n = json_array_size(nodes);
        vs = calloc(n ? n : 1, sizeof(*vs));
        aus = calloc(n ? n : 1, sizeof(*aus));
        if (!vs || !aus) {
                cli_err("audit verify --bundle: out of memory");
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                json_t *e = json_array_get(nodes, i);
                const char *name = json_string_value(json_object_get(e, "name"));
                vs[i].problems = json_array();
                if (!name || !kerf_name_ok(name)) {
                        problem(bprob, "manifest node %zu: no valid name", i + 1);
                        continue;
                }
                if (find_node(vs, i, name)) {
                        problem(bprob, "manifest: node %s is listed twice", name);
                        continue;
                }
                vs[i].name = name;
        }
        if (pins)
                check_pins(vs, n, pins, n_pins, pins_from, bprob);
        for (size_t i = 0; i < n; i++) {
                json_t *e = json_array_get(nodes, i);
                if (!vs[i].name)
                        continue;
                if (!json_is_true(json_object_get(e, "ok"))) {
                        vs[i].why = json_string_value(json_object_get(e, "error"));
                        if (!vs[i].why)
                                vs[i].why = "no reason given";
                        continue;
                }
                vs[i].exported = true;
                verify_node(dir, &vs[i], i, e, &rs, &aus[i]);
        }
        verify_dirs(dir, vs, n, bprob);
        verify_merged(dir, vs, n, &rs, bprob);
        if ((json_int_t)rs.n !=
            json_integer_value(json_object_get(json_object_get(man, "merged"), "records")))
                problem(bprob, "the manifest's merged record count is not the nodes' %zu", rs.n);
        ex = report(dir, vs, n, rs.n, bprob, pins ? pins_from : NULL, json);
out:
        for (size_t i = 0; i < n; i++) {
                json_decref(vs ? vs[i].problems : NULL);
                free(aus ? aus[i] : NULL);
        }
        free(vs);
        free(aus);
        free(rs.v);
        json_decref(bprob);
        json_decref(man);
        return ex;
}
