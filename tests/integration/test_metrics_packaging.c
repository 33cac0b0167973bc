/* SPDX-License-Identifier: Apache-2.0 */
/* test_metrics_packaging.c - packaging/prometheus and packaging/grafana against kerfd: the alert
 * rules pass promtool check/test, the dashboard is JSON, and every kerf_ series the rules and
 * the dashboard name is in a real /metrics answer of a simulated kerfd (they cannot drift) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define PROM KERF_SOURCE_DIR "/packaging/prometheus"
#define DASH KERF_SOURCE_DIR "/packaging/grafana/kerf.json"

static void need_promtool(void)
{
        if (system("command -v promtool >/dev/null 2>&1") != 0)
                fail_msg("promtool not found: install Debian's prometheus package "
                         "(scripts/deps.sh); the alert rules cannot be checked without it");
}

static void test_rules(void **st)
{
        (void)st;
        need_promtool();
        assert_int_equal(system("promtool check rules " PROM "/kerf-alerts.yml"), 0);
        /* promtool test rules reads rule_files relative to the test file's directory */
        assert_int_equal(system("cd " PROM " && promtool test rules kerf-alerts.test.yml"), 0);
}

static void test_dashboard_json(void **st)
{
        json_error_t e;
        json_t *d = json_load_file(DASH, 0, &e);
        (void)st;
        if (!d)
                fail_msg("%s:%d: %s", DASH, e.line, e.text);
        assert_true(json_array_size(json_object_get(d, "panels")) > 10);
        assert_string_equal(json_string_value(json_object_get(d, "uid")), "kerf-overview");
        json_decref(d);
}

/* True when /metrics (`m`) has the series `name`: a TYPE line, or a histogram's _bucket, _sum
 * or _count of one. */
static bool has_series(const char *m, const char *name)
{
        static const char *const sfx[] = {"_bucket", "_sum", "_count"};
        char want[200], base[160];
        size_t l = strlen(name);

        snprintf(want, sizeof(want), "# TYPE %s ", name);
        if (strstr(m, want))
                return true;
        for (size_t i = 0; i < 3; i++) {
                size_t sl = strlen(sfx[i]);
                if (l > sl && !strcmp(name + l - sl, sfx[i])) {
                        snprintf(base, sizeof(base), "%.*s", (int)(l - sl), name);
                        snprintf(want, sizeof(want), "# TYPE %s histogram\n", base);
                        if (strstr(m, want))
                                return true;
                }
        }
        return false;
}

/* Every kerf_ name in file `path` is a series of `m`; returns how many names were checked. */
static unsigned check_names(const char *path, const char *m)
{
        char *text = kd_read(path);
        unsigned n = 0;
        assert_non_null(text);
        for (char *p = text; (p = strstr(p, "kerf_"));) {
                char name[160];
                size_t l = 0;
                if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) {
                        p += 5;
                        continue;
                }
                while ((isalnum((unsigned char)p[l]) || p[l] == '_') && l < sizeof(name) - 1)
                        l++;
                snprintf(name, sizeof(name), "%.*s", (int)l, p);
                p += l;
                if (l == 5) /* "kerf_" alone, in a comment */
                        continue;
                if (!has_series(m, name))
                        fail_msg("%s names %s, which kerfd's /metrics does not have", path, name);
                n++;
        }
        free(text);
        return n;
}

static void test_names_exist(void **st)
{
        kd k;
        long s;
        char *m = NULL;
        (void)st;
        kd_setup(&k, NULL);
        json_decref(kd_call(&k, "GET", "/metrics", NULL, NULL, &s, &m));
        kd_stop(&k);
        kd_cleanup(&k);
        assert_int_equal(s, 200);
        assert_true(check_names(PROM "/kerf-alerts.yml", m) >= 6);
        assert_true(check_names(PROM "/kerf-alerts.test.yml", m) >= 6);
        assert_true(check_names(DASH, m) >= 20);
        free(m);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_rules),
            cmocka_unit_test(test_dashboard_json),
            cmocka_unit_test(test_names_exist),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
