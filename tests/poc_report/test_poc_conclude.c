/* SPDX-License-Identifier: Apache-2.0 */
/* test_poc_conclude.c - the conclusions follow the rule table (docs/POC.md "Conclusions") and
 * the verdict rule (docs/POC.md "Verdicts"), and the Markdown/HTML render a report's cost and a
 * poc_series() series; no kerfd needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "poc.h"
#include "poc_report_int.h"

static json_t *meas(const char *name, double v, const char *op, double t)
{
        int pass = poc__measure_holds(v, op, t) == 1;
        return json_pack("{s:s, s:f, s:s, s:s, s:f, s:b}", "name", name, "value", v, "unit", "%",
                         "op", op, "threshold", t, "pass", pass);
}

static json_t *rec(const char *id, const char *route, json_t *measures, json_t *skipped,
                   int simulated)
{
        json_t *r = json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:b}}", "id", id, "route", route,
                              "title", id, "measures", measures, "skipped",
                              skipped ? skipped : json_array(), "env", "simulated", simulated);
        json_object_set_new(r, "verdict", json_string(poc_verdict_of(r)));
        return r;
}

/* The item of route/category made by `rule` whose text contains `needle`, or NULL. */
static const char *item(const json_t *c, const char *route, const char *cat, const char *rule,
                        const char *needle)
{
        size_t i;
        json_t *it;

        json_array_foreach(json_object_get(json_object_get(c, route), cat), i, it)
        {
                const char *t = json_string_value(json_object_get(it, "text"));
                if (!strcmp(json_string_value(json_object_get(it, "rule")), rule) &&
                    (!needle || strstr(t, needle)))
                        return t;
        }
        return NULL;
}

static void test_verdict_rule(void **st)
{
        (void)st;
        json_t *r = rec("X", "software", json_array(), NULL, 0);
        assert_string_equal(poc_verdict_of(r), POC_PASS);
        json_decref(r);
        r = rec("X", "software", json_array(), json_pack("[{s:s,s:s}]", "step", "a", "why", "b"),
                0);
        assert_string_equal(poc_verdict_of(r), POC_SKIPPED);
        json_decref(r);
        r = rec("X", "software", json_pack("[o]", meas("m", 2, "<=", 1)),
                json_pack("[{s:s,s:s}]", "step", "a", "why", "b"), 0);
        assert_string_equal(poc_verdict_of(r), POC_FAIL);
        json_decref(r);
        /* pass is what the numbers say, not what the field says */
        r = rec("X", "software", json_pack("[o]", meas("m", 1, "==", 1)), NULL, 0);
        assert_string_equal(poc_verdict_of(r), POC_PASS);
        json_object_set_new(json_array_get(json_object_get(r, "measures"), 0), "value",
                            json_real(1.0000001));
        assert_string_equal(poc_verdict_of(r), POC_FAIL);
        json_decref(r);
        assert_int_equal(poc__measure_holds(1, "<", 2), -1);
}

static void test_sw1_failed_not_recommended(void **st)
{
        (void)st;
        json_t *recs =
            json_pack("[o]", rec("SW1", "software",
                                 json_pack("[o, o]", meas("memory total vs request", 37.5, "<=", 1),
                                           meas("compute share", 2, "<=", 5)),
                                 NULL, 0));
        json_t *c = poc_conclusions(recs);
        const char *t = item(c, "software", "not_recommended", "N1", "SW1 failed");

        assert_non_null(t);
        assert_string_equal(t, "tasks that rely on a slice's memory cap and compute share: SW1 "
                               "failed: memory total vs request = 37.5 %, required <= 1");
        assert_null(item(c, "software", "suitable", "S1", NULL));
        /* a failed test gives no "closest to its limit" line: it is under not-recommended */
        assert_null(item(c, "software", "limitations", "L4", NULL));
        assert_int_equal(
            json_array_size(json_object_get(json_object_get(c, "hardware"), "not_recommended")), 0);
        json_decref(c);
        json_decref(recs);
}

static void test_sw1_passed_and_neighbour(void **st)
{
        (void)st;
        json_t *recs = json_pack(
            "[o, o]",
            rec("SW1", "software",
                json_pack("[o, o]", meas("memory", 0.5, "<=", 1), meas("share", 4, "<=", 5)), NULL,
                1),
            rec("NB", "both",
                json_pack("[o, o, o, o]", meas("p99 under slice vs alone (10 req/s)", 8, "<=", 20),
                          meas("p99 under slice vs alone (40 req/s)", 14.5, "<=", 20),
                          meas("p99 under time-slicing vs alone", 140, "<=", 100),
                          meas("p99 under MIG vs alone", 3, "<=", 20)),
                NULL, 1));
        json_t *c = poc_conclusions(recs);

        assert_non_null(item(c, "software", "suitable", "S1", "passed (2 measures held)"));
        /* S2: the worst slice p99 is the number quoted */
        assert_non_null(item(c, "software", "suitable", "S2",
                             "worst p99 under slice vs alone (40 req/s) = 14.5 %"));
        assert_non_null(item(c, "software", "limitations", "L1", "= 14.5 %"));
        assert_non_null(item(c, "software", "limitations", "L2", "= 140 %"));
        /* SW1's closest measure: share 4 of 5 (20 % headroom) vs memory 0.5 of 1 (50 %) */
        assert_non_null(
            item(c, "software", "limitations", "L4", "SW1: closest to its limit: share"));
        /* time-slicing failed: software, not hardware; MIG's measure counts for hardware */
        assert_non_null(item(c, "software", "not_recommended", "N1",
                             "latency-sensitive inference beside a noisy neighbour: NB failed: "
                             "p99 under time-slicing vs alone = 140 %"));
        assert_null(item(c, "hardware", "not_recommended", "N2", NULL));
        assert_non_null(item(c, "hardware", "limitations", "L3", "p99 under MIG vs alone = 3 %"));
        /* HW1 was not run, so S7 (MIG suitable for inference beside a neighbour) does not hold */
        assert_null(item(c, "hardware", "suitable", "S7", NULL));
        assert_non_null(item(c, "hardware", "missing", "M2", "HW1 was not run"));
        assert_non_null(item(c, "software", "limitations", "L6", "(2 records)"));
        json_decref(c);
        json_decref(recs);
}

static void test_slice_over_threshold(void **st)
{
        (void)st;
        json_t *recs = json_pack(
            "[o, o]",
            rec("SW1", "software", json_pack("[o]", meas("memory", 0.5, "<=", 1)), NULL, 0),
            rec("NB", "both", json_pack("[o]", meas("p99 under slice vs alone", 31, "<=", 20)),
                NULL, 0));
        json_t *c = poc_conclusions(recs);

        assert_null(item(c, "software", "suitable", "S2", NULL));
        assert_non_null(item(c, "software", "not_recommended", "N1",
                             "p99 under slice vs alone = 31 %, required <= 20"));
        assert_null(item(c, "software", "limitations", "L6", NULL));
        json_decref(c);
        json_decref(recs);
}

static void test_missing(void **st)
{
        (void)st;
        json_t *recs = json_pack(
            "[o, o]",
            rec("SW1", "software", json_pack("[o]", meas("memory", 0.5, "<=", 1)), NULL, 0),
            rec("HW1", "hardware", json_array(),
                json_pack("[{s:s, s:s}]", "step", "MIG re-create", "why",
                          "MIG changes are never made on a real GPU"),
                0));
        json_t *cost =
            json_pack("{s:b, s:s}", "available", 0, "why", "cost is not available from this kerfd");
        json_t *c = poc__conclude(recs, cost);

        for (const char *const *t = (const char *const[]){"SW2", "SW3", "SW4", "NB", NULL}; *t;
             t++) {
                char needle[64];
                snprintf(needle, sizeof(needle), "%s was not run", *t);
                assert_non_null(item(c, "software", "missing", "M1", needle));
        }
        assert_null(item(c, "software", "missing", "M1", "SW1 was not run"));
        assert_non_null(item(c, "hardware", "missing", "M4",
                             "HW1: MIG re-create was skipped: MIG changes are never made"));
        assert_null(item(c, "hardware", "suitable", "S6", NULL));
        assert_non_null(item(c, "software", "missing", "M5", "cost is not available"));
        assert_non_null(item(c, "hardware", "missing", "M6", "cost is not available"));
        json_decref(c);
        json_object_set_new(cost, "available", json_true());
        c = poc__conclude(recs, cost);
        assert_null(item(c, "software", "missing", "M5", NULL));
        json_decref(c);
        /* poc_conclusions() does not consider cost at all */
        c = poc_conclusions(recs);
        assert_null(item(c, "software", "missing", "M5", NULL));
        json_decref(c);
        json_decref(cost);
        json_decref(recs);
}

static void test_deterministic(void **st)
{
        (void)st;
        json_t *recs =
            json_pack("[o]", rec("HW2", "hardware", json_pack("[o]", meas("tasks hit", 0, "==", 0)),
                                 NULL, 0));
        json_t *a = poc_conclusions(recs), *b = poc_conclusions(recs);
        assert_true(json_equal(a, b));
        assert_non_null(
            item(a, "hardware", "suitable", "S8", "HW2 (HW2) passed (1 measures held)"));
        json_decref(a);
        json_decref(b);
        json_decref(recs);
}

static void test_render_cost_and_points(void **st)
{
        (void)st;
        json_t *recs = json_pack(
            "[o]", rec("SW2", "software", json_pack("[o]", meas("share", 4, "<=", 10)), NULL, 0));
        json_t *r1 = json_array_get(recs, 0);
        /* a series as poc_series() writes it: one "points" array */
        json_object_set_new(r1, "series",
                            json_pack("{s:{s:s, s:s, s:[[i, f], [i, f]]}}", "share", "x", "s", "y",
                                      "%", "points", 0, 49.5, 1, 50.25));
        json_t *cost = json_pack(
            "{s:b, s:I, s:I, s:[{s:s, s:s, s:s, s:i, s:f, s:n}], s:{s:f}, s:s}", "available", 1,
            "from_ms", (json_int_t)1, "to_ms", (json_int_t)2, "items", "tenant", "poc-a", "route",
            "software", "unit_kind", "slice", "tasks", 3, "granted_gpu_hours", 0.125,
            "used_gpu_hours", "totals", "granted_gpu_hours", 0.125, "notes", "a <b> note");
        json_t *report =
            json_pack("{s:s, s:i, s:{}, s:{}, s:O, s:O, s:o, s:{}, s:{}}", "kind", POC_REPORT_KIND,
                      "version", 1, "run", "env", "records", recs, "cost", cost, "conclusions",
                      poc__conclude(recs, cost), "files", "digests");
        char *md = poc__report_md(report), *html = poc__report_html(report);

        assert_non_null(strstr(md, "| poc-a | software | slice | 3 | 0.125 | not measured |"));
        assert_non_null(strstr(md, "Notes: a &lt;b&gt; note"));
        assert_non_null(strstr(html, "<td>poc-a</td><td>software</td><td>slice</td><td>3</td>"
                                     "<td>0.125</td><td>not measured</td>"));
        assert_non_null(strstr(html, "<g class=\"line\" data-line=\"share\""));
        assert_non_null(strstr(html, "data-x=\"1\" data-y=\"50.25\""));
        assert_null(strstr(html, "<b>"));
        assert_non_null(strstr(html, "<p>Notes: a &lt;b&gt; note</p>"));
        /* cost available: nothing about it under missing */
        assert_null(
            item(json_object_get(report, "conclusions"), "software", "missing", "M5", NULL));
        free(md);
        free(html);
        json_decref(report);
        json_decref(cost);
        json_decref(recs);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_verdict_rule),
            cmocka_unit_test(test_sw1_failed_not_recommended),
            cmocka_unit_test(test_sw1_passed_and_neighbour),
            cmocka_unit_test(test_slice_over_threshold),
            cmocka_unit_test(test_missing),
            cmocka_unit_test(test_deterministic),
            cmocka_unit_test(test_render_cost_and_points),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
