/* SPDX-License-Identifier: Apache-2.0 */
/* poc_verify.c - `kerf poc verify DIR`: re-checks a report directory offline (docs/POC.md
 * "Verify"): the audit chain and its checkpoint, the cited audit seqs, the cited files and
 * their digests, every measure's pass, every verdict, and the conclusions. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "kerf/store.h"
#include "poc.h"
#include "poc_report_int.h"

typedef struct vctx {
        const char *dir;
        FILE *out;
        int problems;
        size_t cited; /* audit seqs cited by the records, found in the export */
} vctx;

static void problem(vctx *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(vctx *v, const char *fmt, ...)
{
        va_list ap;

        v->problems++;
        if (!v->out)
                return;
        va_start(ap, fmt);
        vfprintf(v->out, fmt, ap);
        va_end(ap);
        fputc('\n', v->out);
}

static const char *rec_id(const json_t *rec, size_t i, char *buf, size_t len)
{
        const char *id = json_string_value(json_object_get(rec, "id"));

        if (id)
                return id;
        snprintf(buf, len, "record %zu", i);
        return buf;
}

/* The chain in the audit file, checked against the checkpoint; fills `seqs` (seq -> true). */
static void check_audit(vctx *v, const json_t *report, json_t *seqs)
{
        const json_t *files = json_object_get(report, "files");
        const char *an = json_string_value(json_object_get(files, "audit"));
        const char *cn = json_string_value(json_object_get(files, "checkpoint"));
        char path[8400], err[256];
        kerf_store_checkpoint cp;
        kerf_store_audit_report rep;
        bool have_cp = false;
        char *text, *line, *save = NULL;
        FILE *f;
        int r;

        if (!an || !poc__path_inside(an)) {
                problem(v, "report.json: files.audit does not name the audit export");
                return;
        }
        if (!cn || !poc__path_inside(cn)) {
                problem(v, "report.json: files.checkpoint does not name the audit checkpoint");
        } else {
                snprintf(path, sizeof(path), "%s/%s", v->dir, cn);
                text = poc__read_file(path, NULL);
                if (!text) {
                        problem(v, "%s: cannot be read: %s", cn, strerror(errno));
                } else {
                        r = kerf_store_checkpoint_parse(text, NULL, &cp, err, sizeof(err));
                        if (r < 0)
                                problem(v, "%s: %s", cn,
                                        r == -EINVAL ? err : "the signature does not verify");
                        else
                                have_cp = true;
                        free(text);
                }
        }
        snprintf(path, sizeof(path), "%s/%s", v->dir, an);
        text = poc__read_file(path, NULL);
        if (!text) {
                problem(v, "%s: cannot be read: %s", an, strerror(errno));
                return;
        }
        f = fmemopen(text, strlen(text), "r");
        if (!f) {
                problem(v, "%s: out of memory", an);
                free(text);
                return;
        }
        r = kerf_store_audit_verify_file(f, have_cp ? &cp : NULL, &rep);
        fclose(f);
        if (r < 0)
                problem(v, "%s: the audit chain cannot be read: %s", an, strerror(-r));
        else if (!rep.ok)
                problem(v, "%s: the audit chain does not verify at record %llu: %s", an,
                        (unsigned long long)rep.first_bad, rep.problem);
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                json_t *j = json_loads(line, 0, NULL);
                json_t *s = json_object_get(j, "seq");
                char key[32];
                if (json_is_integer(s)) {
                        snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(s));
                        json_object_set_new(seqs, key, json_true());
                }
                json_decref(j);
        }
        free(text);
}

static void check_file(vctx *v, const char *who, const char *rel, const json_t *digests)
{
        const json_t *d = json_object_get(digests, rel);
        char path[8400], hex[POC_SHA256_HEX];
        int r;

        if (!poc__path_inside(rel)) {
                problem(v, "%s: cites %s, which is outside the report directory", who, rel);
                return;
        }
        if (!d) {
                problem(v, "%s: cites %s, which has no digest in report.json", who, rel);
                return;
        }
        snprintf(path, sizeof(path), "%s/%s", v->dir, rel);
        r = poc__sha256_file(path, hex);
        if (json_is_null(d)) {
                problem(v, "%s: cites %s, which was absent when the report was written", who, rel);
                return;
        }
        if (r < 0)
                problem(v, "%s: cites %s, which cannot be read: %s", who, rel, strerror(-r));
        else if (!json_is_string(d) || strcmp(json_string_value(d), hex))
                problem(v, "%s: %s was changed: its SHA-256 is %s, the report says %s", who, rel,
                        hex, json_is_string(d) ? json_string_value(d) : "(not a string)");
}

/* The fields docs/POC.md "Record" requires of every record, the versions among them. */
static void check_complete(vctx *v, const json_t *rec, const char *id)
{
        static const char *const strings[] = {"id", "title", "route", "owner", "verdict"};
        static const char *const ints[] = {"start_ms", "end_ms"};
        static const char *const arrays[] = {"measures", "skipped", "audit", "logs", "metrics"};
        static const char *const env[] = {"device", "driver", "cuda", "kerf"};
        const json_t *e = json_object_get(rec, "env");
        const char *route = json_string_value(json_object_get(rec, "route"));

        for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
                if (!json_is_string(json_object_get(rec, strings[i])))
                        problem(v, "%s: has no %s", id, strings[i]);
        for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
                if (!json_is_integer(json_object_get(rec, ints[i])))
                        problem(v, "%s: has no %s", id, ints[i]);
        for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
                if (!json_is_array(json_object_get(rec, arrays[i])))
                        problem(v, "%s: has no %s array", id, arrays[i]);
        if (route && strcmp(route, POC_ROUTE_SOFTWARE) && strcmp(route, POC_ROUTE_HARDWARE) &&
            strcmp(route, POC_ROUTE_BOTH))
                problem(v, "%s: route '%s' is not software, hardware or both", id, route);
        for (size_t i = 0; i < sizeof(env) / sizeof(env[0]); i++)
                if (!json_is_string(json_object_get(e, env[i])))
                        problem(v, "%s: env has no %s version", id, env[i]);
}

static void check_record(vctx *v, const json_t *rec, size_t i, const json_t *seqs,
                         const json_t *digests)
{
        char buf[32], key[32];
        const char *id = rec_id(rec, i, buf, sizeof(buf));
        const char *verdict = json_string_value(json_object_get(rec, "verdict"));
        const char *want;
        json_t *m, *e;
        size_t k;

        if (!json_is_object(rec)) {
                problem(v, "record %zu: not an object", i);
                return;
        }
        check_complete(v, rec, id);
        json_array_foreach(json_object_get(rec, "audit"), k, e)
        {
                if (!json_is_integer(e)) {
                        problem(v, "%s: audit entry %zu is not a seq number", id, k);
                        continue;
                }
                snprintf(key, sizeof(key), "%lld", (long long)json_integer_value(e));
                if (!json_object_get(seqs, key))
                        problem(v, "%s: cites audit seq %s, which the audit export does not hold",
                                id, key);
                else
                        v->cited++;
        }
        json_array_foreach(json_object_get(rec, "logs"), k, e)
        {
                const char *f[] = {json_string_value(json_object_get(e, "stdout")),
                                   json_string_value(json_object_get(e, "stderr"))};
                for (int j = 0; j < 2; j++)
                        if (f[j] && f[j][0] != '/')
                                check_file(v, id, f[j], digests);
        }
        json_array_foreach(json_object_get(rec, "metrics"), k, e)
        {
                const char *f = json_string_value(json_object_get(e, "file"));
                if (!f)
                        problem(v, "%s: metrics entry %zu names no file", id, k);
                else
                        check_file(v, id, f, digests);
        }
        json_array_foreach(json_object_get(rec, "measures"), k, m)
        {
                const char *name = json_string_value(json_object_get(m, "name"));
                const char *op = json_string_value(json_object_get(m, "op"));
                json_t *val = json_object_get(m, "value"), *thr = json_object_get(m, "threshold");
                json_t *pass = json_object_get(m, "pass");
                int h;
                if (!name)
                        name = "(unnamed)";
                if (json_is_null(val) && json_is_number(thr)) { /* not measured: never a pass */
                        if (!json_is_false(pass))
                                problem(v,
                                        "%s: measure '%s': not measured (value null) but pass is "
                                        "not false",
                                        id, name);
                        continue;
                }
                if (!json_is_number(val) || !json_is_number(thr)) {
                        problem(v, "%s: measure '%s': value or threshold is not a number", id,
                                name);
                        continue;
                }
                h = poc__measure_holds(json_number_value(val), op, json_number_value(thr));
                if (h < 0)
                        problem(v, "%s: measure '%s': op '%s' is not <=, >= or ==", id, name,
                                op ? op : "(none)");
                else if (!json_is_boolean(pass) || json_is_true(pass) != (h == 1))
                        problem(v, "%s: measure '%s': pass is %s but %.17g %s %.17g is %s", id,
                                name,
                                json_is_boolean(pass) ? (json_is_true(pass) ? "true" : "false")
                                                      : "missing",
                                json_number_value(val), op, json_number_value(thr),
                                h ? "true" : "false");
        }
        want = poc_verdict_of(rec);
        if (!verdict || strcmp(verdict, want))
                problem(v, "%s: verdict is %s but its measures give %s", id,
                        verdict ? verdict : "missing", want);
}

static const char *item_text(const json_t *it)
{
        const char *t = json_string_value(json_object_get(it, "text"));

        return !it ? "(none)" : t ? t : "(no text)";
}

/* Names the first difference between the recorded and the recomputed conclusions. */
static void check_conclusions(vctx *v, const json_t *got, const json_t *want)
{
        const char *route, *cat;
        json_t *wr, *wl;

        if (json_equal((json_t *)got, (json_t *)want))
                return;
        if (!json_is_object(got)) {
                problem(v, "report.json: conclusions are missing");
                return;
        }
        json_object_foreach((json_t *)want, route, wr)
        {
                json_object_foreach(wr, cat, wl)
                {
                        const json_t *gl = json_object_get(json_object_get(got, route), cat);
                        size_t n = json_array_size(wl), gn = json_array_size(gl), k;
                        for (k = 0; k < n || k < gn; k++) {
                                const json_t *a = json_array_get(gl, k), *b = json_array_get(wl, k);
                                if (a && b && json_equal((json_t *)a, (json_t *)b))
                                        continue;
                                problem(v,
                                        "conclusions: %s %s item %zu is \"%s\" but the rules give "
                                        "\"%s\"",
                                        route, cat, k, item_text(a), item_text(b));
                                break;
                        }
                }
        }
        /* a difference the walk above cannot see (an extra route or category) */
        if (json_object_size(got) != json_object_size(want))
                problem(v, "conclusions: they hold routes the rules do not give");
}

int poc_verify_dir(const char *dir, FILE *out)
{
        vctx v = {.dir = dir, .out = out};
        char path[8400];
        json_error_t je;
        json_t *report, *seqs, *rec, *want, *d;
        const char *kind, *rel;
        size_t i;

        if (!dir || !*dir) {
                problem(&v, "verify: no report directory given");
                return 1;
        }
        if (sodium_init() < 0) {
                problem(&v, "verify: libsodium failed to initialise");
                return 1;
        }
        snprintf(path, sizeof(path), "%s/report.json", dir);
        report = json_load_file(path, 0, &je);
        if (!report) {
                problem(&v, "report.json: %s (line %d)", je.text, je.line);
                return 1;
        }
        kind = json_string_value(json_object_get(report, "kind"));
        if (!kind || strcmp(kind, POC_REPORT_KIND) ||
            json_integer_value(json_object_get(report, "version")) != POC_REPORT_VERSION) {
                problem(&v, "report.json: not a %s version %d", POC_REPORT_KIND,
                        POC_REPORT_VERSION);
                json_decref(report);
                return 1;
        }
        if (!json_is_array(json_object_get(report, "records")))
                problem(&v, "report.json: records is not an array");

        seqs = json_object();
        check_audit(&v, report, seqs);
        d = json_object_get(report, "digests");
        if (!json_is_object(d))
                problem(&v, "report.json: digests is not an object");
        json_array_foreach(json_object_get(report, "records"), i, rec)
            check_record(&v, rec, i, seqs, d);
        /* the audit export and checkpoint carry digests too */
        json_object_foreach(d, rel, rec)
        {
                json_t *files = json_object_get(report, "files");
                const char *an = json_string_value(json_object_get(files, "audit"));
                const char *cn = json_string_value(json_object_get(files, "checkpoint"));
                if ((an && !strcmp(rel, an)) || (cn && !strcmp(rel, cn)))
                        check_file(&v, "report.json", rel, d);
        }
        json_decref(seqs);

        want = poc__conclude(json_object_get(report, "records"), json_object_get(report, "cost"));
        check_conclusions(&v, json_object_get(report, "conclusions"), want);
        json_decref(want);
        if (v.problems)
                fprintf(out, "%s: %d problem%s: the report does not hold\n", dir, v.problems,
                        v.problems == 1 ? "" : "s");
        else
                fprintf(out,
                        "%s: verified: %zu records (verdicts follow from their measures), %zu "
                        "audit records cited and present in a chain that holds its signed "
                        "checkpoint, %zu files match their digests\n",
                        dir, json_array_size(json_object_get(report, "records")), v.cited,
                        json_object_size(json_object_get(report, "digests")));
        json_decref(report);
        return v.problems ? 1 : 0;
}
