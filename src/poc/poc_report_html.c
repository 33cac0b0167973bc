/* SPDX-License-Identifier: Apache-2.0 */
/* poc_report_html.c - report.html: one self-contained page (inline CSS, inline SVG charts, a
 * Content-Security-Policy that forbids every fetch), every record string HTML-escaped. Charts:
 * each record series as a line chart (latency curves, share over time) and each record timeline
 * (faults and their blast radius); every point also sits in data-x/data-y attributes and in a
 * table, so that tests and readers get the numbers back. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poc.h"
#include "poc_report_int.h"

#define CW 720.0 /* chart width, height and margins (px) */
#define CH 300.0
#define ML 70.0
#define MR 190.0
#define MT 20.0
#define MB 45.0

static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};

static void esc(FILE *f, const char *s)
{
        for (; s && *s; s++) {
                switch (*s) {
                case '<':
                        fputs("&lt;", f);
                        break;
                case '>':
                        fputs("&gt;", f);
                        break;
                case '&':
                        fputs("&amp;", f);
                        break;
                case '"':
                        fputs("&quot;", f);
                        break;
                case '\'':
                        fputs("&#39;", f);
                        break;
                default:
                        fputc(*s, f);
                }
        }
}

static void dump_esc(FILE *f, const json_t *v)
{
        char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        esc(f, s ? s : "?");
        free(s);
}

static bool point(const json_t *p, double *x, double *y)
{
        const json_t *a = json_array_get(p, 0), *b = json_array_get(p, 1);

        if (!json_is_number(a) || !json_is_number(b))
                return false;
        *x = json_number_value(a);
        *y = json_number_value(b);
        return true;
}

/* A line chart of one series: one polyline and circles per line, a legend, axis labels. */
static void line_chart(FILE *f, const char *rec, const char *name, const json_t *series)
{
        json_t *lines = poc__series_lines(name, series), *pts, *p;
        double x0 = DBL_MAX, x1 = -DBL_MAX, y0 = 0, y1 = -DBL_MAX, x, y;
        const char *ln;
        size_t i, c = 0, n = 0;

        json_object_foreach(lines, ln, pts) json_array_foreach(pts, i, p) if (point(p, &x, &y))
        {
                x0 = x < x0 ? x : x0;
                x1 = x > x1 ? x : x1;
                y0 = y < y0 ? y : y0;
                y1 = y > y1 ? y : y1;
                n++;
        }
        if (!n) {
                x0 = 0, x1 = 1, y1 = 1;
        }
        if (x1 <= x0)
                x0 -= 1, x1 += 1;
        if (y1 <= y0)
                y1 = y0 + 1;
        y1 += (y1 - y0) * 0.05;
#define PX(v) (ML + ((v)-x0) / (x1 - x0) * (CW - ML - MR))
#define PY(v) (CH - MB - ((v)-y0) / (y1 - y0) * (CH - MT - MB))
        fputs("<figure class=\"chart\" data-record=\"", f);
        esc(f, rec);
        fputs("\" data-series=\"", f);
        esc(f, name);
        fprintf(f, "\"><figcaption>%s", "");
        esc(f, rec);
        fputs(": ", f);
        esc(f, name);
        fprintf(f,
                "</figcaption>\n<svg class=\"chart\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
                CW, CH, CW, CH);
        fprintf(f,
                "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                "<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                ML, CH - MB, CW - MR, CH - MB, ML, MT, ML, CH - MB);
        for (int t = 0; t <= 4; t++) {
                double xv = x0 + (x1 - x0) * t / 4, yv = y0 + (y1 - y0) * t / 4;
                fprintf(f,
                        "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.4g"
                        "</text><text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
                        "text-anchor=\"end\">%.4g</text>\n",
                        PX(xv), CH - MB + 15, xv, ML - 5, PY(yv) + 4, yv);
        }
        fprintf(f, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                (ML + CW - MR) / 2, CH - 8);
        esc(f, poc__str(series, "x"));
        fprintf(f,
                "</text><text class=\"label\" x=\"14\" y=\"%.1f\" text-anchor=\"middle\" "
                "transform=\"rotate(-90 14 %.1f)\">",
                (MT + CH - MB) / 2, (MT + CH - MB) / 2);
        esc(f, poc__str(series, "y"));
        fputs("</text>\n", f);
        json_object_foreach(lines, ln, pts)
        {
                const char *col = colours[c % (sizeof(colours) / sizeof(colours[0]))];
                fputs("<g class=\"line\" data-line=\"", f);
                esc(f, ln);
                fprintf(f, "\" stroke=\"%s\" fill=\"%s\"><polyline fill=\"none\" points=\"", col,
                        col);
                json_array_foreach(pts, i, p) if (point(p, &x, &y))
                    fprintf(f, "%s%.2f,%.2f", i ? " " : "", PX(x), PY(y));
                fputs("\"/>\n", f);
                json_array_foreach(pts, i, p) if (point(p, &x, &y))
                {
                        fprintf(f,
                                "<circle class=\"pt\" cx=\"%.2f\" cy=\"%.2f\" r=\"3\" "
                                "data-x=\"%.17g\" data-y=\"%.17g\"><title>",
                                PX(x), PY(y), x, y);
                        esc(f, ln);
                        fprintf(f, ": %.6g, %.6g</title></circle>\n", x, y);
                }
                fprintf(f, "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\" stroke=\"none\">",
                        CW - MR + 10, MT + 14 + 16.0 * (double)c);
                esc(f, ln);
                fputs("</text></g>\n", f);
                c++;
        }
        fputs("</svg>\n<details><summary>points</summary><table "
              "class=\"points\"><tr><th>line</th><th>",
              f);
        esc(f, poc__str(series, "x"));
        fputs("</th><th>", f);
        esc(f, poc__str(series, "y"));
        fputs("</th></tr>\n", f);
        json_object_foreach(lines, ln, pts) json_array_foreach(pts, i, p) if (point(p, &x, &y))
        {
                fputs("<tr><td>", f);
                esc(f, ln);
                fprintf(f, "</td><td>%.6g</td><td>%.6g</td></tr>\n", x, y);
        }
        fputs("</table></details></figure>\n", f);
        json_decref(lines);
}

/* The record's timeline: each event a marker on a time axis, its blast radius listed below. */
static void timeline_chart(FILE *f, const char *rec, const json_t *tl, const json_t *start)
{
        double t0 = DBL_MAX, t1 = -DBL_MAX, t;
        size_t i, n = 0;
        json_t *e;

        json_array_foreach(tl, i, e) if (json_is_number(json_object_get(e, "t_ms")))
        {
                t = json_number_value(json_object_get(e, "t_ms"));
                t0 = t < t0 ? t : t0;
                t1 = t > t1 ? t : t1;
                n++;
        }
        if (!n)
                return;
        if (json_is_number(start) && json_number_value(start) < t0)
                t0 = json_number_value(start);
        if (t1 <= t0)
                t1 = t0 + 1;
        fputs("<figure class=\"timeline\" data-record=\"", f);
        esc(f, rec);
        fputs("\"><figcaption>", f);
        esc(f, rec);
        fprintf(f,
                ": timeline (ms since the test started)</figcaption>\n<svg class=\"chart "
                "timeline\" width=\"%.0f\" height=\"120\" viewBox=\"0 0 %.0f 120\" role=\"img\">\n"
                "<line class=\"axis\" x1=\"%.1f\" y1=\"60\" x2=\"%.1f\" y2=\"60\"/>\n",
                CW, CW, ML, CW - MR);
        fprintf(f,
                "<text class=\"tick\" x=\"%.1f\" y=\"80\" text-anchor=\"middle\">0</text>"
                "<text class=\"tick\" x=\"%.1f\" y=\"80\" text-anchor=\"middle\">%.0f</text>\n",
                ML, CW - MR, t1 - t0);
        n = 0;
        json_array_foreach(tl, i, e) if (json_is_number(json_object_get(e, "t_ms")))
        {
                t = json_number_value(json_object_get(e, "t_ms"));
                double px = ML + (t - t0) / (t1 - t0) * (CW - ML - MR);
                fprintf(f,
                        "<g class=\"event\"><line x1=\"%.2f\" y1=\"30\" x2=\"%.2f\" y2=\"60\" "
                        "stroke=\"#d62728\"/><circle class=\"ev\" cx=\"%.2f\" cy=\"60\" r=\"5\" "
                        "fill=\"#d62728\" data-t=\"%.17g\" data-rel=\"%.17g\"><title>",
                        px, px, px, t, t - t0);
                esc(f, poc__str(e, "what"));
                fprintf(f,
                        "</title></circle><text class=\"tick\" x=\"%.2f\" y=\"%.0f\" "
                        "text-anchor=\"middle\">%zu</text></g>\n",
                        px, n % 2 ? 100.0 : 24.0, n + 1);
                n++;
        }
        fputs("</svg>\n<ol class=\"events\">\n", f);
        json_array_foreach(tl, i, e)
        {
                fputs("<li data-t=\"", f);
                poc__num(f, json_object_get(e, "t_ms"));
                fputs("\"><b>+", f);
                if (json_is_number(json_object_get(e, "t_ms")))
                        fprintf(f, "%.0f", json_number_value(json_object_get(e, "t_ms")) - t0);
                fputs(" ms</b> ", f);
                esc(f, poc__str(e, "what"));
                if (json_object_get(e, "detail")) {
                        fputs(": <code>", f);
                        dump_esc(f, json_object_get(e, "detail"));
                        fputs("</code>", f);
                }
                fputs("</li>\n", f);
        }
        fputs("</ol></figure>\n", f);
}

static void record(FILE *f, const json_t *rec)
{
        const char *id = poc__str(rec, "id"), *v = poc__str(rec, "verdict"), *k;
        const json_t *h = json_object_get(rec, "handling"), *env = json_object_get(rec, "env");
        json_t *e;
        size_t i;

        fputs("<section class=\"record\" id=\"rec-", f);
        esc(f, id);
        fputs("\"><h2>", f);
        esc(f, id);
        fputs(": ", f);
        esc(f, poc__str(rec, "title"));
        fputs(" <span class=\"v ", f);
        esc(f, v);
        fputs("\">", f);
        esc(f, v);
        fputs("</span></h2>\n<p>Route ", f);
        esc(f, poc__str(rec, "route"));
        fputs(", owner ", f);
        esc(f, poc__str(rec, "owner"));
        fputs(", device ", f);
        esc(f, poc__str(env, "device"));
        fputs(", driver ", f);
        esc(f, poc__str(env, "driver"));
        fputs(", CUDA ", f);
        esc(f, poc__str(env, "cuda"));
        fputs(", kerf ", f);
        esc(f, poc__str(env, "kerf"));
        fputs(json_is_true(json_object_get(env, "simulated")) ? " (simulated)" : "", f);
        fputs(".</p>\n<table class=\"measures\"><tr><th>Measure</th><th>Value</th><th>Unit</th>"
              "<th>Required</th><th>Pass</th><th>Note</th></tr>\n",
              f);
        json_array_foreach(json_object_get(rec, "measures"), i, e)
        {
                bool ok = json_is_true(json_object_get(e, "pass"));
                fprintf(f, "<tr class=\"%s\"><td>", ok ? "ok" : "bad");
                esc(f, poc__str(e, "name"));
                fputs("</td><td>", f);
                poc__num(f, json_object_get(e, "value"));
                fputs("</td><td>", f);
                esc(f, poc__str(e, "unit"));
                fputs("</td><td>", f);
                esc(f, poc__str(e, "op"));
                fputc(' ', f);
                poc__num(f, json_object_get(e, "threshold"));
                fprintf(f, "</td><td>%s</td><td>", ok ? "yes" : "NO");
                esc(f, poc__str(e, "note"));
                fputs("</td></tr>\n", f);
        }
        fputs("</table>\n", f);
        if (json_array_size(json_object_get(rec, "skipped"))) {
                fputs("<p>Skipped:</p><ul>\n", f);
                json_array_foreach(json_object_get(rec, "skipped"), i, e)
                {
                        fputs("<li>", f);
                        esc(f, poc__str(e, "step"));
                        fputs(": ", f);
                        esc(f, poc__str(e, "why"));
                        fputs("</li>\n", f);
                }
                fputs("</ul>\n", f);
        }
        if (json_is_object(h)) {
                fputs("<p>Failure handling: kerf ", f);
                esc(f, poc__str(h, "kerf"));
                fputs("; the operator ", f);
                esc(f, poc__str(h, "operator"));
                fputs(" (", f);
                poc__num(f, json_object_get(h, "commands"));
                fputs(" commands).</p>\n", f);
        }
        json_object_foreach((json_t *)json_object_get(rec, "series"), k, e) line_chart(f, id, k, e);
        timeline_chart(f, id, json_object_get(rec, "timeline"), json_object_get(rec, "start_ms"));
        fputs("<p class=\"evidence\">Evidence:", f);
        json_array_foreach(json_object_get(rec, "logs"), i, e)
        {
                fputs(" log <code>", f);
                esc(f, poc__str(e, "stdout"));
                fputs("</code>;", f);
        }
        json_array_foreach(json_object_get(rec, "metrics"), i, e)
        {
                fputs(" metrics <code>", f);
                esc(f, poc__str(e, "file"));
                fputs("</code>;", f);
        }
        fputs(" audit seqs", f);
        json_array_foreach(json_object_get(rec, "audit"), i, e)
        {
                fputc(' ', f);
                poc__num(f, e);
        }
        fputs(".</p></section>\n", f);
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

        fputs("<section id=\"conclusions\"><h2>Conclusions</h2>\n", f);
        json_object_foreach((json_t *)c, route, r)
        {
                fputs("<h3>", f);
                esc(f, route);
                fputs(" route</h3>\n", f);
                for (size_t k = 0; k < 4; k++) {
                        fprintf(f, "<h4>%s</h4><ul class=\"%s\">\n", cats[k][1], cats[k][0]);
                        json_array_foreach(json_object_get(r, cats[k][0]), i, it)
                        {
                                fputs("<li>", f);
                                esc(f, poc__str(it, "text"));
                                fputs(" <small>[", f);
                                esc(f, poc__str(it, "rule"));
                                fputs("]</small></li>\n", f);
                        }
                        fputs("</ul>\n", f);
                }
        }
        fputs("</section>\n", f);
}

static void cost(FILE *f, const json_t *c)
{
        json_t *it;
        size_t i;

        fputs("<section id=\"cost\"><h2>Cost of the run</h2>\n", f);
        if (!json_is_true(json_object_get(c, "available"))) {
                fputs("<p>Not available: ", f);
                esc(f, poc__str(c, "why"));
                fputs("</p></section>\n", f);
                return;
        }
        fputs("<table><tr><th>Tenant</th><th>Route</th><th>Unit kind</th><th>Tasks</th>"
              "<th>GPU-hours granted</th><th>GPU-hours used</th></tr>\n",
              f);
        json_array_foreach(json_object_get(c, "items"), i, it)
        {
                fputs("<tr><td>", f);
                esc(f, poc__str(it, "tenant"));
                fputs("</td><td>", f);
                esc(f, poc__str(it, "route"));
                fputs("</td><td>", f);
                esc(f, poc__str(it, "unit_kind"));
                fputs("</td><td>", f);
                poc__num(f, json_object_get(it, "tasks"));
                fputs("</td><td>", f);
                poc__num(f, json_object_get(it, "granted_gpu_hours"));
                fputs("</td><td>", f);
                if (json_is_null(json_object_get(it, "used_gpu_hours")))
                        fputs("not measured", f);
                else
                        poc__num(f, json_object_get(it, "used_gpu_hours"));
                fputs("</td></tr>\n", f);
        }
        fputs("</table>\n<p>Totals: <code>", f);
        dump_esc(f, json_object_get(c, "totals"));
        fputs("</code></p>\n", f);
        if (json_is_string(json_object_get(c, "notes"))) {
                fputs("<p>Notes: ", f);
                esc(f, poc__str(c, "notes"));
                fputs("</p>\n", f);
        } else if (json_object_get(c, "notes")) {
                fputs("<p>Notes: <code>", f);
                dump_esc(f, json_object_get(c, "notes"));
                fputs("</code></p>\n", f);
        }
        fputs("</section>\n", f);
}

/* The page's only script: it records script errors into the DOM (data-errors) and marks the
 * page rendered once loaded, so a headless browser's DOM dump shows both. */
static const char page_script[] =
    "(function(){var errs=[];var root=document.documentElement;"
    "window.addEventListener('error',function(e){errs.push(String(e.message));"
    "root.setAttribute('data-errors',errs.join(' | '));});"
    "window.addEventListener('load',function(){"
    "root.setAttribute('data-points',String(document.querySelectorAll('svg circle.pt')."
    "length));root.setAttribute('data-rendered',errs.length?'errors':'ok');});})();";

static const char page_style[] =
    "body{font:14px/1.4 sans-serif;margin:2em;max-width:1000px;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;"
    "text-align:left}tr.bad td{background:#fde0e0}.v{padding:1px 6px;border-radius:3px}"
    ".v.PASS{background:#d4f4d4}.v.FAIL{background:#f8c8c8}.v.SKIPPED{background:#eee}"
    "svg .axis{stroke:#444}svg .tick,svg .label{font-size:11px;fill:#444}"
    "svg .legend{font-size:12px}table.points{font-size:11px}figure{margin:1em 0}";

char *poc__report_html(const json_t *report)
{
        const json_t *run = json_object_get(report, "run"), *env = json_object_get(report, "env");
        const json_t *d;
        const char *k;
        char *buf = NULL;
        size_t len = 0, i;
        json_t *rec;
        FILE *f = open_memstream(&buf, &len);

        if (!f)
                return NULL;
        fprintf(f,
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
                "<title>kerf POC report</title>\n<style>%s</style>\n<script>%s</script>\n"
                "</head><body>\n<h1>kerf POC report</h1>\n<p>Run by ",
                page_style, page_script);
        esc(f, poc__str(run, "owner"));
        fputs(", route ", f);
        esc(f, poc__str(run, "route"));
        fputs(", seed ", f);
        poc__num(f, json_object_get(run, "seed"));
        fputs(". Environment: ", f);
        esc(f, poc__str(env, "device"));
        fputs(", driver ", f);
        esc(f, poc__str(env, "driver"));
        fputs(", CUDA ", f);
        esc(f, poc__str(env, "cuda"));
        fputs(", kerf ", f);
        esc(f, poc__str(env, "kerf"));
        fputs(json_is_true(json_object_get(env, "simulated")) ? ", simulated fleet" : "", f);
        fputs(".</p>\n<table id=\"summary\"><tr><th>Test</th><th>Title</th><th>Route</th>"
              "<th>Verdict</th><th>Measures</th><th>Skipped</th></tr>\n",
              f);
        json_array_foreach(json_object_get(report, "records"), i, rec)
        {
                fputs("<tr><td><a href=\"#rec-", f);
                esc(f, poc__str(rec, "id"));
                fputs("\">", f);
                esc(f, poc__str(rec, "id"));
                fputs("</a></td><td>", f);
                esc(f, poc__str(rec, "title"));
                fputs("</td><td>", f);
                esc(f, poc__str(rec, "route"));
                fputs("</td><td class=\"v ", f);
                esc(f, poc__str(rec, "verdict"));
                fputs("\">", f);
                esc(f, poc__str(rec, "verdict"));
                fprintf(f, "</td><td>%zu</td><td>%zu</td></tr>\n",
                        json_array_size(json_object_get(rec, "measures")),
                        json_array_size(json_object_get(rec, "skipped")));
        }
        fputs("</table>\n", f);
        json_array_foreach(json_object_get(report, "records"), i, rec) record(f, rec);
        conclusions(f, json_object_get(report, "conclusions"));
        cost(f, json_object_get(report, "cost"));
        fputs("<section id=\"files\"><h2>Evidence files</h2><table><tr><th>File</th>"
              "<th>SHA-256</th></tr>\n",
              f);
        json_object_foreach((json_t *)json_object_get(report, "digests"), k, d)
        {
                fputs("<tr><td><code>", f);
                esc(f, k);
                fputs("</code></td><td><code>", f);
                esc(f, json_is_string(d) ? json_string_value(d) : "(absent)");
                fputs("</code></td></tr>\n", f);
        }
        fputs("</table><p>Re-check with <code>kerf poc verify DIR</code>.</p></section>\n"
              "</body></html>\n",
              f);
        fclose(f);
        return buf;
}
