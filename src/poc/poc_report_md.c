/* SPDX-License-Identifier: Apache-2.0 */
/* poc_report_md.c - report.md: the report for people, in Markdown (summary table, each record's
 * measures against thresholds, skipped steps, failure handling, evidence, conclusions, cost). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "poc.h"
#include "poc_report_int.h"

/* Text from a record, safe in a Markdown table cell and inert when the Markdown is rendered
 * to HTML: | and line breaks cannot end the cell, <, > and & are entities. */
static void esc(FILE *f, const char *s)
{
        for (; s && *s; s++) {
                switch (*s) {
                case '|':
                        fputs("\\|", f);
                        break;
                case '\n':
                case '\r':
                        fputc(' ', f);
                        break;
                case '<':
                        fputs("&lt;", f);
                        break;
                case '>':
                        fputs("&gt;", f);
                        break;
                case '&':
                        fputs("&amp;", f);
                        break;
                case '`':
                        fputs("\\`", f);
                        break;
                default:
                        fputc(*s, f);
                }
        }
}

static void when(FILE *f, const json_t *v)
{
        time_t t;
        struct tm tm;
        char buf[64];

        if (!json_is_integer(v)) {
                fputs("-", f);
                return;
        }
        t = (time_t)(json_integer_value(v) / 1000);
        gmtime_r(&t, &tm);
        strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
        fprintf(f, "%s.%03lld UTC", buf, (long long)(json_integer_value(v) % 1000));
}

static void dump_inline(FILE *f, const json_t *v)
{
        char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        esc(f, s ? s : "?");
        free(s);
}

static void summary(FILE *f, const json_t *records)
{
        size_t i, k, ok;
        json_t *rec, *m;

        fputs("## Summary\n\n| Test | Title | Route | Verdict | Measures passed | Skipped steps |\n"
              "|---|---|---|---|---|---|\n",
              f);
        json_array_foreach(records, i, rec)
        {
                ok = 0;
                json_array_foreach(json_object_get(rec, "measures"), k, m) ok +=
                    json_is_true(json_object_get(m, "pass"));
                fputs("| ", f);
                esc(f, poc__str(rec, "id"));
                fputs(" | ", f);
                esc(f, poc__str(rec, "title"));
                fputs(" | ", f);
                esc(f, poc__str(rec, "route"));
                fputs(" | **", f);
                esc(f, poc__str(rec, "verdict"));
                fprintf(f, "** | %zu / %zu | %zu |\n", ok,
                        json_array_size(json_object_get(rec, "measures")),
                        json_array_size(json_object_get(rec, "skipped")));
        }
        if (!json_array_size(records))
                fputs("| (no test was run) | | | | | |\n", f);
        fputc('\n', f);
}

static void record(FILE *f, const json_t *rec)
{
        const json_t *h = json_object_get(rec, "handling"), *e, *env = json_object_get(rec, "env");
        size_t i;

        fputs("## ", f);
        esc(f, poc__str(rec, "id"));
        fputs(": ", f);
        esc(f, poc__str(rec, "title"));
        fputs(" (", f);
        esc(f, poc__str(rec, "verdict"));
        fputs(")\n\nRoute ", f);
        esc(f, poc__str(rec, "route"));
        fputs(", owner ", f);
        esc(f, poc__str(rec, "owner"));
        fputs(", ", f);
        when(f, json_object_get(rec, "start_ms"));
        fputs(" to ", f);
        when(f, json_object_get(rec, "end_ms"));
        fputs(". Device ", f);
        esc(f, poc__str(env, "device"));
        fputs(", driver ", f);
        esc(f, poc__str(env, "driver"));
        fputs(", CUDA ", f);
        esc(f, poc__str(env, "cuda"));
        fputs(", kerf ", f);
        esc(f, poc__str(env, "kerf"));
        fputs(json_is_true(json_object_get(env, "simulated")) ? " (simulated fleet).\n\n" : ".\n\n",
              f);

        fputs("| Measure | Value | Unit | Required | Pass | Note |\n|---|---|---|---|---|---|\n",
              f);
        json_array_foreach(json_object_get(rec, "measures"), i, e)
        {
                fputs("| ", f);
                esc(f, poc__str(e, "name"));
                fputs(" | ", f);
                poc__num(f, json_object_get(e, "value"));
                fputs(" | ", f);
                esc(f, poc__str(e, "unit"));
                fputs(" | ", f);
                esc(f, poc__str(e, "op"));
                fputc(' ', f);
                poc__num(f, json_object_get(e, "threshold"));
                fprintf(f, " | %s | ", json_is_true(json_object_get(e, "pass")) ? "yes" : "**no**");
                esc(f, poc__str(e, "note"));
                fputs(" |\n", f);
        }
        if (!json_array_size(json_object_get(rec, "measures")))
                fputs("| (nothing measured) | | | | | |\n", f);

        if (json_array_size(json_object_get(rec, "skipped"))) {
                fputs("\nSkipped:\n\n", f);
                json_array_foreach(json_object_get(rec, "skipped"), i, e)
                {
                        fputs("- ", f);
                        esc(f, poc__str(e, "step"));
                        fputs(": ", f);
                        esc(f, poc__str(e, "why"));
                        fputc('\n', f);
                }
        }
        if (json_is_object(h)) {
                fputs("\nFailure handling: kerf ", f);
                esc(f, poc__str(h, "kerf"));
                fputs("; the operator ", f);
                esc(f, poc__str(h, "operator"));
                fputs(" (", f);
                poc__num(f, json_object_get(h, "commands"));
                fputs(" commands).\n", f);
        }
        if (json_array_size(json_object_get(rec, "timeline"))) {
                fputs("\nTimeline:\n\n", f);
                json_array_foreach(json_object_get(rec, "timeline"), i, e)
                {
                        fputs("- ", f);
                        when(f, json_object_get(e, "t_ms"));
                        fputs(": ", f);
                        esc(f, poc__str(e, "what"));
                        if (json_object_get(e, "detail")) {
                                fputs(" (", f);
                                dump_inline(f, json_object_get(e, "detail"));
                                fputc(')', f);
                        }
                        fputc('\n', f);
                }
        }
        fputs("\nEvidence:", f);
        json_array_foreach(json_object_get(rec, "logs"), i, e)
        {
                fputs(" log ", f);
                esc(f, poc__str(e, "stdout"));
                if (*poc__str(e, "stderr")) {
                        fputs(", ", f);
                        esc(f, poc__str(e, "stderr"));
                }
                fputc(';', f);
        }
        json_array_foreach(json_object_get(rec, "metrics"), i, e)
        {
                fputs(" metrics ", f);
                esc(f, poc__str(e, "file"));
                fputs(" (", f);
                esc(f, poc__str(e, "label"));
                fputs(");", f);
        }
        fputs(" audit seqs", f);
        json_array_foreach(json_object_get(rec, "audit"), i, e)
        {
                fputc(' ', f);
                poc__num(f, e);
        }
        if (!json_array_size(json_object_get(rec, "audit")))
                fputs(" (none)", f);
        fputs(".\n\n", f);
}

static void conclusions(FILE *f, const json_t *c)
{
        static const char *const cats[][2] = {{"suitable", "Suitable"},
                                              {"limitations", "Limitations"},
                                              {"missing", "Missing information"},
                                              {"not_recommended", "Not recommended"}};
        const char *route;
        json_t *r, *it;
        size_t i;

        fputs("## Conclusions (derived by the rules in docs/POC.md \"Conclusions\")\n\n", f);
        json_object_foreach((json_t *)c, route, r)
        {
                fputs("### ", f);
                esc(f, route);
                fputs(" route\n\n", f);
                for (size_t k = 0; k < 4; k++) {
                        json_t *l = json_object_get(r, cats[k][0]);
                        fprintf(f, "**%s**%s\n\n", cats[k][1], json_array_size(l) ? ":" : ": none");
                        json_array_foreach(l, i, it)
                        {
                                fputs("- ", f);
                                esc(f, poc__str(it, "text"));
                                fputs(" [", f);
                                esc(f, poc__str(it, "rule"));
                                fputs("]\n", f);
                        }
                        if (json_array_size(l))
                                fputc('\n', f);
                }
        }
}

static void cost(FILE *f, const json_t *c)
{
        size_t i;
        json_t *it;

        fputs("## Cost of the run\n\n", f);
        if (!json_is_true(json_object_get(c, "available"))) {
                fputs("Not available: ", f);
                esc(f, poc__str(c, "why"));
                fputs("\n\n", f);
                return;
        }
        fputs("| Tenant | Route | Unit kind | Tasks | GPU-hours granted | GPU-hours used |\n"
              "|---|---|---|---|---|---|\n",
              f);
        json_array_foreach(json_object_get(c, "items"), i, it)
        {
                fputs("| ", f);
                esc(f, poc__str(it, "tenant"));
                fputs(" | ", f);
                esc(f, poc__str(it, "route"));
                fputs(" | ", f);
                esc(f, poc__str(it, "unit_kind"));
                fputs(" | ", f);
                poc__num(f, json_object_get(it, "tasks"));
                fputs(" | ", f);
                poc__num(f, json_object_get(it, "granted_gpu_hours"));
                fputs(" | ", f);
                if (json_is_null(json_object_get(it, "used_gpu_hours")))
                        fputs("not measured", f);
                else
                        poc__num(f, json_object_get(it, "used_gpu_hours"));
                fputs(" |\n", f);
        }
        if (json_object_get(c, "totals")) {
                fputs("\nTotals: ", f);
                dump_inline(f, json_object_get(c, "totals"));
                fputc('\n', f);
        }
        if (json_object_get(c, "notes")) {
                fputs("\nNotes: ", f);
                if (json_is_string(json_object_get(c, "notes")))
                        esc(f, poc__str(c, "notes"));
                else
                        dump_inline(f, json_object_get(c, "notes"));
                fputc('\n', f);
        }
        fputc('\n', f);
}

char *poc__report_md(const json_t *report)
{
        const json_t *run = json_object_get(report, "run"), *env = json_object_get(report, "env");
        const json_t *records = json_object_get(report, "records"), *d;
        const char *k;
        char *buf = NULL;
        size_t len = 0, i;
        json_t *rec;
        FILE *f = open_memstream(&buf, &len);

        if (!f)
                return NULL;
        fputs("# kerf POC report\n\nRun by ", f);
        esc(f, poc__str(run, "owner"));
        fputs(", route ", f);
        esc(f, poc__str(run, "route"));
        fputs(", seed ", f);
        poc__num(f, json_object_get(run, "seed"));
        fputs(json_is_true(json_object_get(run, "quick")) ? " (quick)" : "", f);
        fputs(", from ", f);
        when(f, json_object_get(run, "start_ms"));
        fputs(" to ", f);
        when(f, json_object_get(run, "end_ms"));
        fputs(".\nEnvironment: ", f);
        esc(f, poc__str(env, "device"));
        fputs(", driver ", f);
        esc(f, poc__str(env, "driver"));
        fputs(", CUDA ", f);
        esc(f, poc__str(env, "cuda"));
        fputs(", kerf ", f);
        esc(f, poc__str(env, "kerf"));
        fputs(json_is_true(json_object_get(env, "simulated")) ? ", simulated fleet" : "", f);
        fputs(json_is_true(json_object_get(env, "shim")) ? ", shim present" : ", shim absent", f);
        fputs(".\n\n", f);

        summary(f, records);
        json_array_foreach(records, i, rec) record(f, rec);
        conclusions(f, json_object_get(report, "conclusions"));
        cost(f, json_object_get(report, "cost"));

        fputs("## Evidence files\n\nThe audit export and its signed checkpoint: ", f);
        esc(f, poc__str(json_object_get(report, "files"), "audit"));
        fputs(", ", f);
        esc(f, poc__str(json_object_get(report, "files"), "checkpoint"));
        fputs(". Re-check everything with `kerf poc verify DIR`.\n\n| File | SHA-256 |\n"
              "|---|---|\n",
              f);
        json_object_foreach((json_t *)json_object_get(report, "digests"), k, d)
        {
                fputs("| ", f);
                esc(f, k);
                fputs(" | ", f);
                esc(f, json_is_string(d) ? json_string_value(d) : "(absent)");
                fputs(" |\n", f);
        }
        fclose(f);
        return buf;
}
