/* SPDX-License-Identifier: Apache-2.0 */
/* test_poc_html.c - report.html opened in headless Chromium: it renders without console errors
 * and the DOM Chromium dumps holds the SVG charts with the records' measured points. Exits 77
 * (CTest SKIP) when chromium is not installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "poc_report_int.h"

static fx X;
static char tmp[64];
static const char *chromium;

/* Loads `html` in headless Chromium; returns the dumped DOM (heap) and its stderr (heap). */
static char *render(const char *html, char **ret_err)
{
        char cmd[2048], path[256], *dom;

        snprintf(cmd, sizeof(cmd),
                 "timeout 25 '%s' --headless --disable-gpu --no-sandbox --no-first-run "
                 "--disable-extensions --disable-background-networking --user-data-dir=%s/profile "
                 "--enable-logging=stderr --v=0 --dump-dom 'file://%s' >%s/dom.html 2>%s/err.log",
                 chromium, tmp, html, tmp, tmp);
        assert_int_equal(system(cmd), 0);
        snprintf(path, sizeof(path), "%s/dom.html", tmp);
        dom = poc__read_file(path, NULL);
        assert_non_null(dom);
        snprintf(path, sizeof(path), "%s/err.log", tmp);
        *ret_err = poc__read_file(path, NULL);
        assert_non_null(*ret_err);
        return dom;
}

/* The part of the DOM from `start` to the next `end` (a new string). */
static char *section(const char *dom, const char *start, const char *end)
{
        const char *a = strstr(dom, start), *b;

        if (!a)
                fail_msg("the DOM has no '%s'", start);
        b = strstr(a, end);
        assert_non_null(b);
        return strndup(a, (size_t)(b - a));
}

/* The value of attribute `name` at or after p, as a number; p is moved past it. */
static double attr(const char **p, const char *name)
{
        char key[32];
        const char *a;

        snprintf(key, sizeof(key), " %s=\"", name);
        a = strstr(*p, key);
        assert_non_null(a);
        *p = a + strlen(key);
        return strtod(*p, NULL);
}

static void check_series(const char *dom, const char *rec_id, const char *name, const json_t *s)
{
        char start[256], gline[256];
        char *fig;
        const char *ln;
        json_t *pts, *pt;
        size_t i;

        snprintf(start, sizeof(start), "data-record=\"%s\" data-series=\"%s\"", rec_id, name);
        fig = section(dom, start, "</figure>");
        json_object_foreach(json_object_get(s, "lines"), ln, pts)
        {
                snprintf(gline, sizeof(gline), "<g class=\"line\" data-line=\"%s\"", ln);
                char *g = section(fig, gline, "</g>");
                const char *p = g;
                size_t n = 0;
                for (const char *c = g; (c = strstr(c, "<circle")); c++)
                        n++;
                assert_int_equal(n, json_array_size(pts));
                json_array_foreach(pts, i, pt)
                {
                        /* exact: the page carries the numbers with 17 significant digits */
                        double x = attr(&p, "data-x"), y = attr(&p, "data-y");
                        assert_true(x == json_number_value(json_array_get(pt, 0)));
                        assert_true(y == json_number_value(json_array_get(pt, 1)));
                }
                free(g);
        }
        free(fig);
}

static void test_renders_with_points(void **st)
{
        char html[600], *err, *dom, *fig, want[64];
        json_t *rec, *s, *ev;
        const char *k, *p;
        size_t i, points = 0;

        (void)st;
        snprintf(html, sizeof(html), "%s/report.html", X.dir);
        dom = render(html, &err);
        if (strstr(err, ":CONSOLE"))
                fail_msg("console output while rendering report.html:\n%s", err);
        assert_non_null(strstr(dom, "data-rendered=\"ok\""));
        assert_null(strstr(dom, "data-errors="));
        json_array_foreach(X.records, i, rec)
        {
                json_object_foreach(json_object_get(rec, "series"), k, s)
                {
                        const char *ln;
                        json_t *pts;
                        check_series(dom, json_string_value(json_object_get(rec, "id")), k, s);
                        json_object_foreach(json_object_get(s, "lines"), ln, pts) points +=
                            json_array_size(pts);
                }
        }
        assert_true(points >= 20);
        snprintf(want, sizeof(want), "data-points=\"%zu\"", points);
        assert_non_null(strstr(dom, want));
        /* the fault timeline: one marker per event at its time */
        rec = json_array_get(X.records, 4);
        assert_string_equal(json_string_value(json_object_get(rec, "id")), "HW2");
        fig = section(dom, "<figure class=\"timeline\" data-record=\"HW2\"", "</figure>");
        p = fig;
        json_array_foreach(json_object_get(rec, "timeline"), i, ev)
            assert_true(attr(&p, "data-t") == json_number_value(json_object_get(ev, "t_ms")));
        assert_non_null(strstr(fig, "XID 79 on GPU 0"));
        free(fig);
        /* the record's markup stayed text in the browser too */
        assert_null(strstr(dom, "<script>alert(1)"));
        assert_non_null(strstr(dom, "&lt;script&gt;alert(1)&lt;/script&gt;"));
        free(dom);
        free(err);
}

/* The check above would see a broken page: the same report with a failing script does not
 * pass it. */
static void test_detects_errors(void **st)
{
        char html[600], bad[128], *text, *cut, *err, *dom;
        FILE *f;

        (void)st;
        snprintf(html, sizeof(html), "%s/report.html", X.dir);
        text = poc__read_file(html, NULL);
        assert_non_null(text);
        cut = strstr(text, "</body>");
        assert_non_null(cut);
        snprintf(bad, sizeof(bad), "%s/bad.html", tmp);
        f = fopen(bad, "w");
        fprintf(f, "%.*s<script>no_such_function();</script>%s", (int)(cut - text), text, cut);
        fclose(f);
        free(text);
        dom = render(bad, &err);
        assert_non_null(strstr(dom, "data-rendered=\"errors\""));
        assert_non_null(strstr(dom, "no_such_function"));
        assert_non_null(strstr(err, ":CONSOLE"));
        free(dom);
        free(err);
}

static int group_setup(void **st)
{
        (void)st;
        snprintf(tmp, sizeof(tmp), "/tmp/kerf-poc-chromium-XXXXXX");
        if (!mkdtemp(tmp))
                return -1;
        fx_build(&X);
        return X.write_rc;
}

static int group_teardown(void **st)
{
        char cmd[128];

        (void)st;
        fx_fini(&X);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
        return system(cmd) ? -1 : 0;
}

int main(void)
{
        static const char *const paths[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser"};
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_renders_with_points),
            cmocka_unit_test(test_detects_errors),
        };

        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]) && !chromium; i++)
                if (access(paths[i], X_OK) == 0)
                        chromium = paths[i];
        if (getenv("KERF_CHROMIUM"))
                chromium = getenv("KERF_CHROMIUM");
        if (!chromium) {
                printf("SKIP: chromium is not installed (Debian package chromium; "
                       "scripts/deps.sh installs it)\n");
                return 77;
        }
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
