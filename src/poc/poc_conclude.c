/* SPDX-License-Identifier: Apache-2.0 */
/* poc_conclude.c - the conclusions per route (suitable, limitations, missing, not recommended)
 * derived from the records by one rule table (docs/POC.md "Conclusions"): every sentence comes
 * from a rule and carries the numbers that triggered it. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "poc.h"
#include "poc_report_int.h"

/* What a rule looks at. */
typedef enum when {
        W_PASSED,     /* the test's record is PASS (and `requires`, if set, is PASS too) */
        W_FAILED,     /* per failing measure of the test's record (of this route) */
        W_NOT_RUN,    /* per test of the list that has no record */
        W_SKIPPED,    /* per skipped step of the route's records */
        W_MEASURE_OK, /* the test PASSes and its measures matching `match` all hold: the worst */
        W_WORST,      /* the matching measure with the highest value (pass or not) */
        W_HEADROOM,   /* per record of the route: the measure closest to its threshold */
        W_SIMULATED,  /* any record of the route ran on the simulated fleet */
        W_NO_COST,    /* the report's cost is not available */
} when;

typedef enum category { C_SUITABLE, C_LIMITATIONS, C_MISSING, C_NOT_RECOMMENDED } category;
static const char *const category_key[] = {"suitable", "limitations", "missing", "not_recommended"};

typedef struct rule {
        const char *id;
        const char *route;    /* software | hardware */
        const char *tests;    /* comma-separated test ids; "*" any record of the route */
        const char *match;    /* measure-name words (all must appear, "!w" must not), or NULL */
        const char *requires; /* a test that must be PASS too, or NULL */
        when when;
        category cat;
        const char *text; /* {test} {title} {name} {value} {unit} {op} {threshold} {step} {why}
                             {n} {workload} {why} */
} rule;

/* The workload each test speaks for: what a failure of that test rules out. */
static const struct {
        const char *test, *workload;
} workloads[] = {
    {"SW1", "tasks that rely on a slice's memory cap and compute share"},
    {"SW2", "contended, queued or preemptible work on shared GPUs"},
    {"SW3", "sharing a GPU with tasks that may crash, allocate without end or exit early"},
    {"SW4", "short-lived or cancellable jobs that need their unit back at once"},
    {"HW1", "workloads that need MIG instances created and re-created on demand"},
    {"HW2", "services that need a device fault contained to its own unit"},
    {"HW3", "services that must stay traceable across driver and CUDA upgrades"},
    {"HW4", "MIG units and slices mixed under one set of queues and quotas"},
    {"NB", "latency-sensitive inference beside a noisy neighbour"},
};

#define SW POC_ROUTE_SOFTWARE
#define HW POC_ROUTE_HARDWARE
static const rule rules[] = {
    /* suitable: a passed test, with the number that supports it */
    {"S1", SW, "SW1", NULL, NULL, W_PASSED, C_SUITABLE,
     "slices whose memory cap and compute share must hold: SW1 ({title}) passed ({n} "
     "measures held)"},
    {"S2", SW, "NB", "p99 slice !time", "SW1", W_MEASURE_OK, C_SUITABLE,
     "online inference on a kerf slice beside a noisy neighbour: worst {name} = {value} "
     "{unit} (limit {op} {threshold}), and SW1 passed"},
    {"S3", SW, "SW2", NULL, NULL, W_PASSED, C_SUITABLE,
     "batch and queued, preemptible work under contention: SW2 ({title}) passed ({n} measures "
     "held)"},
    {"S4", SW, "SW3", NULL, NULL, W_PASSED, C_SUITABLE,
     "development and debug tasks beside other work: SW3 ({title}) passed ({n} measures held)"},
    {"S5", SW, "SW4", NULL, NULL, W_PASSED, C_SUITABLE,
     "short-lived and cancellable jobs: SW4 ({title}) passed ({n} measures held)"},
    {"S6", HW, "HW1", NULL, NULL, W_PASSED, C_SUITABLE,
     "online inference on a MIG instance of fixed size: HW1 ({title}) passed ({n} measures held)"},
    {"S7", HW, "NB", "p99 mig", "HW1", W_MEASURE_OK, C_SUITABLE,
     "latency-sensitive inference beside a noisy neighbour on MIG: worst {name} = {value} "
     "{unit} (limit {op} {threshold}), and HW1 passed"},
    {"S8", HW, "HW2", NULL, NULL, W_PASSED, C_SUITABLE,
     "high-impact services that need a device fault contained: HW2 ({title}) passed ({n} "
     "measures held)"},
    {"S9", HW, "HW3", NULL, NULL, W_PASSED, C_SUITABLE,
     "long-lived services across driver and CUDA upgrades: HW3 ({title}) passed ({n} measures "
     "held)"},
    {"S10", HW, "HW4", NULL, NULL, W_PASSED, C_SUITABLE,
     "MIG units under the same quotas, queues and preemption as slices: HW4 ({title}) passed "
     "({n} measures held)"},
    /* limitations: the measured worst cases */
    {"L1", SW, "NB", "p99 slice !time", NULL, W_WORST, C_LIMITATIONS,
     "neighbour impact under a kerf slice: worst {name} = {value} {unit} (limit {op} "
     "{threshold})"},
    {"L2", SW, "NB", "p99 time", NULL, W_WORST, C_LIMITATIONS,
     "neighbour impact under plain time-slicing: worst {name} = {value} {unit} (limit {op} "
     "{threshold})"},
    {"L3", HW, "NB", "p99 mig", NULL, W_WORST, C_LIMITATIONS,
     "neighbour impact under MIG: worst {name} = {value} {unit} (limit {op} {threshold})"},
    {"L4", SW, "SW1,SW2,SW3,SW4", NULL, NULL, W_HEADROOM, C_LIMITATIONS,
     "{test}: closest to its limit: {name} = {value} {unit} (limit {op} {threshold})"},
    {"L5", HW, "HW1,HW2,HW3,HW4", NULL, NULL, W_HEADROOM, C_LIMITATIONS,
     "{test}: closest to its limit: {name} = {value} {unit} (limit {op} {threshold})"},
    {"L6", SW, "*", NULL, NULL, W_SIMULATED, C_LIMITATIONS,
     "measured on the simulated fleet ({n} records): the figures are kerf-sim's, not a real "
     "GPU's"},
    {"L7", HW, "*", NULL, NULL, W_SIMULATED, C_LIMITATIONS,
     "measured on the simulated fleet ({n} records): the figures are kerf-sim's, not a real "
     "GPU's"},
    /* missing information */
    {"M1", SW, "SW1,SW2,SW3,SW4,NB", NULL, NULL, W_NOT_RUN, C_MISSING,
     "{test} was not run: nothing is known about {workload}"},
    {"M2", HW, "HW1,HW2,HW3,HW4,NB", NULL, NULL, W_NOT_RUN, C_MISSING,
     "{test} was not run: nothing is known about {workload}"},
    {"M3", SW, "*", NULL, NULL, W_SKIPPED, C_MISSING, "{test}: {step} was skipped: {why}"},
    {"M4", HW, "*", NULL, NULL, W_SKIPPED, C_MISSING, "{test}: {step} was skipped: {why}"},
    {"M5", SW, "*", NULL, NULL, W_NO_COST, C_MISSING, "cost of the run: {why}"},
    {"M6", HW, "*", NULL, NULL, W_NO_COST, C_MISSING, "cost of the run: {why}"},
    /* not recommended: every failed measure */
    {"N1", SW, "*", NULL, NULL, W_FAILED, C_NOT_RECOMMENDED,
     "{workload}: {test} failed: {name} = {value} {unit}, required {op} {threshold}"},
    {"N2", HW, "*", NULL, NULL, W_FAILED, C_NOT_RECOMMENDED,
     "{workload}: {test} failed: {name} = {value} {unit}, required {op} {threshold}"},
};

static const char *workload_of(const char *test)
{
        for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
                if (!strcmp(workloads[i].test, test))
                        return workloads[i].workload;
        return "the workloads this test stands for";
}

static bool has_word(const char *name, const char *w, size_t wl)
{
        for (const char *s = name; *s; s++)
                if (!strncasecmp(s, w, wl))
                        return true;
        return false;
}

/* All words of `match` in name (case-insensitive), none of the "!word"s. */
static bool name_matches(const char *name, const char *match)
{
        const char *s = match;

        if (!match)
                return true;
        while (*s) {
                bool neg = *s == '!';
                size_t n;
                if (neg)
                        s++;
                n = strcspn(s, " ");
                if (n && has_word(name, s, n) == neg)
                        return false;
                s += n;
                while (*s == ' ')
                        s++;
        }
        return true;
}

/* Whether a measure of a record counts for `route`: a software or hardware record's measures
 * count for its route; a "both" record's (the neighbour test) count for hardware when the name
 * says MIG, for software otherwise. */
static bool measure_for_route(const json_t *rec, const json_t *m, const char *route)
{
        const char *rr = json_string_value(json_object_get(rec, "route"));
        const char *name = json_string_value(json_object_get(m, "name"));

        if (!rr || strcmp(rr, POC_ROUTE_BOTH))
                return rr && !strcmp(rr, route);
        return has_word(name ? name : "", "mig", 3) == !strcmp(route, POC_ROUTE_HARDWARE);
}

static bool record_for_route(const json_t *rec, const char *route)
{
        const char *rr = json_string_value(json_object_get(rec, "route"));

        return rr && (!strcmp(rr, route) || !strcmp(rr, POC_ROUTE_BOTH));
}

static bool in_list(const char *list, const char *id)
{
        size_t n = strlen(id);

        if (!strcmp(list, "*"))
                return true;
        for (const char *s = list; *s;) {
                size_t k = strcspn(s, ",");
                if (k == n && !strncmp(s, id, n))
                        return true;
                s += k;
                if (*s == ',')
                        s++;
        }
        return false;
}

static const json_t *find_record(const json_t *records, const char *id)
{
        size_t i;
        json_t *rec;

        json_array_foreach(records, i, rec)
        {
                const char *rid = json_string_value(json_object_get(rec, "id"));
                if (rid && !strcmp(rid, id))
                        return rec;
        }
        return NULL;
}

static bool holds(const json_t *m)
{
        return poc__measure_holds(json_number_value(json_object_get(m, "value")),
                                  json_string_value(json_object_get(m, "op")),
                                  json_number_value(json_object_get(m, "threshold"))) == 1;
}

/* The values a template may name. */
typedef struct vars {
        const char *test, *title, *step, *why, *workload;
        const json_t *m; /* the measure, or NULL */
        long n;
} vars;

static void put_num(FILE *f, const json_t *v)
{
        if (json_is_integer(v))
                fprintf(f, "%lld", (long long)json_integer_value(v));
        else if (json_is_real(v))
                fprintf(f, "%.4g", json_real_value(v));
        else
                fputs("?", f);
}

static void emit(json_t *out, const rule *r, const vars *v)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        const char *s = r->text;
        json_t *item;

        if (!f)
                return;
        while (*s) {
                const char *e = *s == '{' ? strchr(s, '}') : NULL;
                size_t k = e ? (size_t)(e - s - 1) : 0;
                const char *str = NULL;
                if (!e) {
                        fputc(*s++, f);
                        continue;
                }
#define KEY(w) (k == strlen(w) && !strncmp(s + 1, w, k))
                if (KEY("test"))
                        str = v->test;
                else if (KEY("title"))
                        str = v->title;
                else if (KEY("step"))
                        str = v->step;
                else if (KEY("why"))
                        str = v->why;
                else if (KEY("workload"))
                        str = v->workload;
                else if (KEY("name"))
                        str = json_string_value(json_object_get(v->m, "name"));
                else if (KEY("unit"))
                        str = json_string_value(json_object_get(v->m, "unit"));
                else if (KEY("op"))
                        str = json_string_value(json_object_get(v->m, "op"));
                else if (KEY("value"))
                        put_num(f, json_object_get(v->m, "value"));
                else if (KEY("threshold"))
                        put_num(f, json_object_get(v->m, "threshold"));
                else if (KEY("n"))
                        fprintf(f, "%ld", v->n);
                else
                        fwrite(s, 1, k + 2, f);
#undef KEY
                if (str)
                        fputs(str, f);
                s = e + 1;
        }
        fclose(f);
        item = json_pack("{s:s, s:s?, s:s}", "rule", r->id, "test",
                         v->test && strcmp(v->test, "*") ? v->test : NULL, "text", buf);
        free(buf);
        json_array_append_new(json_object_get(json_object_get(out, r->route), category_key[r->cat]),
                              item);
}

/* How far a measure is from failing, relative to its threshold (negative: it failed). */
static double headroom(const json_t *m)
{
        double v = json_number_value(json_object_get(m, "value"));
        double t = json_number_value(json_object_get(m, "threshold"));
        const char *op = json_string_value(json_object_get(m, "op"));
        double d = op && !strcmp(op, ">=") ? v - t : t - v;

        if (op && !strcmp(op, "=="))
                d = -fabs(v - t);
        return d / (fabs(t) > 1e-12 ? fabs(t) : 1.0);
}

static void apply_record(json_t *out, const rule *r, const json_t *rec, const json_t *records)
{
        const json_t *ms = json_object_get(rec, "measures"), *best = NULL, *m;
        vars v = {.test = json_string_value(json_object_get(rec, "id")),
                  .title = json_string_value(json_object_get(rec, "title"))};
        const char *verdict = json_string_value(json_object_get(rec, "verdict"));
        bool all_ok = true;
        size_t i;

        (void)verdict;
        v.workload = workload_of(v.test ? v.test : "");
        switch (r->when) {
        case W_PASSED:
                if (strcmp(poc_verdict_of(rec), POC_PASS) || !json_array_size(ms))
                        return;
                v.n = (long)json_array_size(ms);
                emit(out, r, &v);
                return;
        case W_FAILED:
                json_array_foreach(ms, i, m) if (measure_for_route(rec, m, r->route) && !holds(m))
                {
                        v.m = m;
                        emit(out, r, &v);
                }
                return;
        case W_SKIPPED:
                json_array_foreach(json_object_get(rec, "skipped"), i, m)
                {
                        v.step = json_string_value(json_object_get(m, "step"));
                        v.why = json_string_value(json_object_get(m, "why"));
                        emit(out, r, &v);
                }
                return;
        case W_MEASURE_OK:
        case W_WORST:
                if (r->requires) {
                        const json_t *q = find_record(records, r->requires);
                        if (!q || strcmp(poc_verdict_of(q), POC_PASS))
                                return;
                }
                json_array_foreach(ms, i, m)
                {
                        const char *name = json_string_value(json_object_get(m, "name"));
                        if (!name || !name_matches(name, r->match) ||
                            !json_is_number(json_object_get(m, "value")))
                                continue;
                        all_ok = all_ok && holds(m);
                        if (!best || json_number_value(json_object_get(m, "value")) >
                                         json_number_value(json_object_get(best, "value")))
                                best = m;
                }
                if (!best || (r->when == W_MEASURE_OK && !all_ok))
                        return;
                v.m = best;
                emit(out, r, &v);
                return;
        case W_HEADROOM:
                /* only where the test passed: a failed test is under not-recommended already */
                if (strcmp(poc_verdict_of(rec), POC_PASS))
                        return;
                json_array_foreach(ms, i, m)
                {
                        /* an exact condition (==) has no distance to its limit */
                        const char *op = json_string_value(json_object_get(m, "op"));
                        if (!measure_for_route(rec, m, r->route) || !op || !strcmp(op, "=="))
                                continue;
                        if (!best || headroom(m) < headroom(best))
                                best = m;
                }
                if (!best)
                        return;
                v.m = best;
                emit(out, r, &v);
                return;
        default:
                return;
        }
}

static void apply(json_t *out, const rule *r, const json_t *records, const json_t *cost)
{
        vars v = {.test = r->tests};
        const json_t *rec;
        size_t i;

        switch (r->when) {
        case W_NOT_RUN:
                for (const char *s = r->tests; *s;) {
                        char id[16];
                        size_t k = strcspn(s, ",");
                        snprintf(id, sizeof(id), "%.*s", (int)(k < 15 ? k : 15), s);
                        if (!find_record(records, id)) {
                                v.test = id;
                                v.workload = workload_of(id);
                                emit(out, r, &v);
                        }
                        s += k;
                        if (*s == ',')
                                s++;
                }
                return;
        case W_SIMULATED:
                json_array_foreach(
                    records, i, rec) if (record_for_route(rec, r->route) &&
                                         json_is_true(json_object_get(json_object_get(rec, "env"),
                                                                      "simulated"))) v.n++;
                if (v.n)
                        emit(out, r, &v);
                return;
        case W_NO_COST:
                if (!cost || json_is_true(json_object_get(cost, "available")))
                        return;
                v.why = json_string_value(json_object_get(cost, "why"));
                if (!v.why)
                        v.why = "not available";
                emit(out, r, &v);
                return;
        default:
                json_array_foreach(records, i, rec)
                {
                        const char *id = json_string_value(json_object_get(rec, "id"));
                        if (id && record_for_route(rec, r->route) && in_list(r->tests, id))
                                apply_record(out, r, rec, records);
                }
                return;
        }
}

json_t *poc__conclude(const json_t *records, const json_t *cost)
{
        json_t *out = json_object();
        const char *routes[] = {POC_ROUTE_SOFTWARE, POC_ROUTE_HARDWARE};

        for (size_t i = 0; i < 2; i++) {
                json_t *r = json_object();
                for (size_t c = 0; c < 4; c++)
                        json_object_set_new(r, category_key[c], json_array());
                json_object_set_new(out, routes[i], r);
        }
        for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
                apply(out, &rules[i], records, cost);
        return out;
}
