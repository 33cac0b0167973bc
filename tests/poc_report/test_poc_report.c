/* SPDX-License-Identifier: Apache-2.0 */
/* test_poc_report.c - poc_report_write on a fixture with a real kerfd audit chain, and
 * `poc verify` on it and on tampered copies (docs/POC.md "Report", "Verify"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fixture.h"
#include "poc_report_int.h"

static fx X;

static int group_setup(void **st)
{
        (void)st;
        fx_build(&X);
        return 0;
}

static int group_teardown(void **st)
{
        (void)st;
        fx_fini(&X);
        return 0;
}

static char *slurp(const char *dir, const char *name)
{
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        char *s = poc__read_file(path, NULL);
        assert_non_null(s);
        return s;
}

static void rmtree(const char *dir)
{
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
}

static void test_files_written(void **st)
{
        const char *names[] = {"report.json", "report.md", "report.html", "audit.ndjson",
                               "checkpoint.json"};
        json_t *r, *d;
        char *s, path[1024];

        (void)st;
        assert_int_equal(X.write_rc, 0);
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                snprintf(path, sizeof(path), "%s/%s", X.dir, names[i]);
                assert_int_equal(access(path, R_OK), 0);
        }
        r = fx_load(X.dir);
        assert_string_equal(json_string_value(json_object_get(r, "kind")), "kerf-poc-report");
        assert_int_equal(json_integer_value(json_object_get(r, "version")), 1);
        assert_true(json_equal(json_object_get(r, "records"), X.records));
        d = json_object_get(r, "digests");
        /* every cited file and the audit evidence carry their SHA-256 */
        assert_int_equal(strlen(json_string_value(json_object_get(d, "logs/empty.err"))), 64);
        assert_string_equal(json_string_value(json_object_get(d, "logs/empty.err")),
                            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        assert_non_null(json_string_value(json_object_get(d, "metrics/SW1-1.prom")));
        assert_non_null(json_string_value(json_object_get(d, "audit.ndjson")));
        assert_non_null(json_string_value(json_object_get(d, "checkpoint.json")));
        assert_null(json_object_get(d, "/var/lib/kerf/logs/1.out"));
        /* the audit export is kerfd's ndjson: one record per line, seq from 1 */
        s = slurp(X.dir, "audit.ndjson");
        assert_true(strncmp(s, "{", 1) == 0);
        json_t *first = json_loadb(s, strcspn(s, "\n"), 0, NULL);
        assert_int_equal(json_integer_value(json_object_get(first, "seq")), 1);
        json_decref(first);
        free(s);
        /* this kerfd has no GET /v1/cost (or has one): the report says which */
        json_t *cost = json_object_get(r, "cost");
        if (!json_is_true(json_object_get(cost, "available"))) {
                assert_non_null(strstr(json_string_value(json_object_get(cost, "why")),
                                       "not available from this kerfd"));
                json_t *miss = json_object_get(
                    json_object_get(json_object_get(r, "conclusions"), "software"), "missing");
                size_t i;
                json_t *it;
                int found = 0;
                json_array_foreach(miss, i, it) found +=
                    strstr(json_string_value(json_object_get(it, "text")), "cost") != NULL;
                assert_int_equal(found, 1);
        } else {
                assert_true(json_is_array(json_object_get(cost, "items")));
        }
        /* the Markdown: summary, measures vs thresholds, skipped steps with why, conclusions */
        s = slurp(X.dir, "report.md");
        assert_non_null(
            strstr(s, "| SW1 | request vs reality | software | **PASS** | 2 / 2 | 0 |"));
        assert_non_null(
            strstr(s, "| probe 4GiB: memory total vs request | 0.4 | % | &lt;= 1 | yes |"));
        assert_non_null(strstr(s, "- MIG re-create: MIG changes are never made on a real GPU"));
        assert_non_null(strstr(s, "## Conclusions"));
        assert_null(strstr(s, "<script>"));
        free(s);
        json_decref(r);
}

static void test_verify_passes(void **st)
{
        char *out;
        (void)st;
        int rc = fx_verify(X.dir, &out);
        if (rc)
                fprintf(stderr, "verify said:\n%s", out);
        assert_int_equal(rc, 0);
        /* one line: what was verified, no problem line */
        assert_non_null(strstr(out, ": verified: 5 records"));
        assert_true(strchr(out, '\n') == out + strlen(out) - 1);
        free(out);
}

/* Applies `tamper` to a copy of the report and expects verify to fail naming `needle`. */
static void expect_fail(void (*tamper)(const char *dir), const char *needle)
{
        char dir[256], *out;
        int rc;

        fx_copy(X.dir, dir, sizeof(dir));
        tamper(dir);
        rc = fx_verify(dir, &out);
        if (!strstr(out, needle))
                fprintf(stderr, "expected '%s' in:\n%s", needle, out);
        assert_int_equal(rc, 1);
        assert_non_null(strstr(out, needle));
        free(out);
        rmtree(dir);
}

static void t_measure(const char *dir)
{
        json_t *r = fx_load(dir);
        json_t *m = json_array_get(
            json_object_get(json_array_get(json_object_get(r, "records"), 0), "measures"), 0);
        json_object_set_new(m, "value", json_real(7.5));
        fx_store(dir, r);
        json_decref(r);
}

static void t_env(const char *dir)
{
        json_t *r = fx_load(dir);
        json_object_del(json_object_get(json_array_get(json_object_get(r, "records"), 4), "env"),
                        "driver");
        fx_store(dir, r);
        json_decref(r);
}

static void t_verdict(const char *dir)
{
        json_t *r = fx_load(dir);
        json_object_set_new(json_array_get(json_object_get(r, "records"), 2), "verdict",
                            json_string("FAIL"));
        fx_store(dir, r);
        json_decref(r);
}

/* Rewrites audit.ndjson through `edit` on its lines. */
static void edit_audit(const char *dir, int drop, int change)
{
        char path[1024], *s, *save = NULL;
        FILE *f;
        int n = 0;

        snprintf(path, sizeof(path), "%s/audit.ndjson", dir);
        s = poc__read_file(path, NULL);
        assert_non_null(s);
        f = fopen(path, "w");
        for (char *l = strtok_r(s, "\n", &save); l; l = strtok_r(NULL, "\n", &save), n++) {
                if (n == drop)
                        continue;
                if (n == change) {
                        json_t *j = json_loads(l, 0, NULL);
                        json_object_set_new(j, "actor", json_string("uid:4242"));
                        char *t = json_dumps(j, JSON_COMPACT);
                        fprintf(f, "%s\n", t);
                        free(t);
                        json_decref(j);
                        continue;
                }
                fprintf(f, "%s\n", l);
        }
        fclose(f);
        free(s);
}

static void t_audit_removed(const char *dir)
{
        edit_audit(dir, 1, -1);
}

static void t_audit_changed(const char *dir)
{
        edit_audit(dir, -1, 2);
}

/* Drops every record from the one SW2 cites on: the chain left verifies as a chain, but not
 * against the checkpoint, and SW2's seqs are gone. */
static void t_audit_truncated(const char *dir)
{
        json_t *r = fx_load(dir);
        json_int_t seq = json_integer_value(json_array_get(
            json_object_get(json_array_get(json_object_get(r, "records"), 1), "audit"), 0));
        char path[1024], *s, *save = NULL;
        FILE *f;
        int n = 1;

        json_decref(r);
        snprintf(path, sizeof(path), "%s/audit.ndjson", dir);
        s = poc__read_file(path, NULL);
        f = fopen(path, "w");
        for (char *l = strtok_r(s, "\n", &save); l && n < seq; l = strtok_r(NULL, "\n", &save))
                fprintf(f, "%s\n", l), n++;
        fclose(f);
        free(s);
}

static void t_log(const char *dir)
{
        char path[1024];
        snprintf(path, sizeof(path), "%s/logs/task-%llu.out", dir, X.task[0]);
        FILE *f = fopen(path, "a");
        fputs("{\"event\":\"window\"}\n", f);
        fclose(f);
}

static void t_log_removed(const char *dir)
{
        char path[1024];
        snprintf(path, sizeof(path), "%s/metrics/SW1-1.prom", dir);
        assert_int_equal(unlink(path), 0);
}

static void t_conclusion(const char *dir)
{
        json_t *r = fx_load(dir);
        json_t *s = json_object_get(json_object_get(r, "conclusions"), "software");
        json_t *it = json_array_get(json_object_get(s, "suitable"), 0);
        json_object_set_new(it, "text", json_string("everything, always"));
        fx_store(dir, r);
        json_decref(r);
}

static void t_checkpoint(const char *dir)
{
        char path[1024], *s, *p;
        snprintf(path, sizeof(path), "%s/checkpoint.json", dir);
        s = poc__read_file(path, NULL);
        p = strstr(s, "\"signature\"");
        assert_non_null(p);
        p = strchr(p + 12, '"') + 1;
        *p = *p == 'a' ? 'b' : 'a';
        FILE *f = fopen(path, "w");
        fputs(s, f);
        fclose(f);
        free(s);
}

static void test_tamper_measure(void **st)
{
        (void)st;
        expect_fail(t_measure, "SW1: measure 'probe 4GiB: memory total vs request': pass is true "
                               "but 7.5 <= 1 is false");
}

static void test_tamper_verdict(void **st)
{
        (void)st;
        expect_fail(t_verdict, "NB: verdict is FAIL but its measures give PASS");
}

static void test_tamper_env(void **st)
{
        (void)st;
        expect_fail(t_env, "HW2: env has no driver version");
}

static void test_tamper_audit_removed(void **st)
{
        (void)st;
        expect_fail(t_audit_removed, "audit.ndjson: the audit chain does not verify at record 2");
}

static void test_tamper_audit_changed(void **st)
{
        (void)st;
        expect_fail(t_audit_changed, "audit.ndjson: the audit chain does not verify at record 3");
}

static void test_tamper_audit_truncated(void **st)
{
        (void)st;
        expect_fail(t_audit_truncated, "SW2: cites audit seq");
        expect_fail(t_audit_truncated, "audit.ndjson: the audit chain does not verify");
}

static void test_tamper_log(void **st)
{
        char needle[128];
        (void)st;
        snprintf(needle, sizeof(needle), "SW1: logs/task-%llu.out was changed", X.task[0]);
        expect_fail(t_log, needle);
        expect_fail(t_log_removed, "SW1: cites metrics/SW1-1.prom, which cannot be read");
}

static void test_tamper_conclusion(void **st)
{
        (void)st;
        expect_fail(t_conclusion,
                    "conclusions: software suitable item 0 is \"everything, always\"");
}

static void test_tamper_checkpoint(void **st)
{
        (void)st;
        expect_fail(t_checkpoint, "checkpoint.json: the signature does not verify");
}

static void test_not_a_report(void **st)
{
        char dir[] = "/tmp/kerf-poc-empty-XXXXXX", *out;
        (void)st;
        assert_non_null(mkdtemp(dir));
        assert_int_equal(fx_verify(dir, &out), 1);
        assert_non_null(strstr(out, "report.json"));
        free(out);
        rmtree(dir);
}

static void test_html(void **st)
{
        char *s = slurp(X.dir, "report.html");
        (void)st;
        /* self-contained: nothing that could be fetched */
        assert_null(strstr(s, "http://"));
        assert_null(strstr(s, "https://"));
        assert_null(strstr(s, " src="));
        assert_null(strstr(s, "<link"));
        assert_non_null(strstr(s, "default-src 'none'"));
        /* the record's markup is text */
        assert_null(strstr(s, "<script>alert(1)</script>"));
        assert_non_null(strstr(s, "device fault &lt;script&gt;alert(1)&lt;/script&gt;"));
        /* charts: the latency curves, the share over time, the fault timeline */
        assert_non_null(strstr(s, "data-record=\"NB\" data-series=\"latency\""));
        assert_non_null(strstr(s, "<g class=\"line\" data-line=\"slice p99\""));
        assert_non_null(strstr(s, "data-record=\"SW2\" data-series=\"share\""));
        assert_non_null(strstr(s, "<figure class=\"timeline\" data-record=\"HW2\""));
        assert_non_null(strstr(s, "XID 79 on GPU 0"));
        assert_non_null(strstr(s, "&quot;blast_radius&quot;:[12,13]"));
        free(s);
}

/* Without kerfd the report is still written (the records are not lost), but it says the audit
 * evidence is missing, and verify refuses it. */
static void test_without_kerfd(void **st)
{
        char dir[] = "/tmp/kerf-poc-nokerfd-XXXXXX", err[512], *out;
        kerf_client_opts co = {.socket = "/nonexistent/kerfd.sock", .timeout_ms = 2000};
        poc_ctx p;
        json_t *r;

        (void)st;
        assert_non_null(mkdtemp(dir));
        memset(&p, 0, sizeof(p));
        assert_int_equal(kerf_client_new(&co, &p.client), 0);
        snprintf(p.out, sizeof(p.out), "%s", dir);
        p.records = json_deep_copy(X.records);
        assert_int_equal(poc_report_write(&p, err, sizeof(err)), -EIO);
        assert_non_null(strstr(err, "without its audit evidence: audit checkpoint"));
        r = fx_load(dir);
        assert_true(json_is_null(json_object_get(json_object_get(r, "files"), "audit")));
        assert_false(json_is_true(json_object_get(json_object_get(r, "cost"), "available")));
        /* the logs were never copied here: their digests say so */
        assert_true(json_is_null(json_object_get(json_object_get(r, "digests"), "logs/empty.err")));
        json_decref(r);
        assert_int_equal(fx_verify(dir, &out), 1);
        assert_non_null(strstr(out, "report.json: files.audit does not name the audit export"));
        assert_non_null(
            strstr(out, "SW1: cites logs/empty.err, which was absent when the report was written"));
        free(out);
        json_decref(p.records);
        kerf_client_free(p.client);
        rmtree(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_files_written),
            cmocka_unit_test(test_verify_passes),
            cmocka_unit_test(test_tamper_measure),
            cmocka_unit_test(test_tamper_verdict),
            cmocka_unit_test(test_tamper_env),
            cmocka_unit_test(test_tamper_audit_removed),
            cmocka_unit_test(test_tamper_audit_changed),
            cmocka_unit_test(test_tamper_audit_truncated),
            cmocka_unit_test(test_tamper_log),
            cmocka_unit_test(test_tamper_conclusion),
            cmocka_unit_test(test_tamper_checkpoint),
            cmocka_unit_test(test_not_a_report),
            cmocka_unit_test(test_html),
            cmocka_unit_test(test_without_kerfd),
        };
        return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
