/* SPDX-License-Identifier: Apache-2.0 */
/* test_fields.c - field descriptors: the validator per type and bound, unknown fields and their
 * suggestion, the task table's consistency, help lines, and docs/API.md's task request table
 * against kerf_task_fields */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc_table.h"
#include "kerf/core.h"
#include "kerf/fields.h"
#include "md_table.h"

#define FIELD_TABLE       kerf_task_fields
#define FIELD_TABLE_COUNT kerf_task_fields_count
#include "field_check.h"

static void test_int_percent_bool(void **st)
{
        (void)st;
        assert_int_equal(check("gpus", "1", NULL).i, 1);
        assert_int_equal(check("gpus", "16", NULL).i, KERF_MAX_TASK_GPUS);
        check("gpus", "0", "gpus: an integer 1..16");
        check("gpus", "17", "gpus: an integer 1..16");
        check("gpus", "\"2\"", "gpus: an integer 1..16");
        check("gpus", "2.0", "gpus: an integer 1..16");
        assert_int_equal(check("priority", "-1000", NULL).i, -1000);
        check("priority", "1001", "priority: an integer -1000..1000");
        check("priority", "99999999999999", "priority: an integer -1000..1000");
        assert_int_equal(check("compute", "100", NULL).i, 100);
        check("compute", "101", "compute: an integer 0..100 (percent)");
        check("cpu_milli", "100000001", "cpu_milli: an integer 0..100000000");
        assert_true(check("preemptible", "true", NULL).b);
        assert_false(check("preemptible", "false", NULL).b);
        check("preemptible", "1", "preemptible: true or false");
}

static void test_duration(void **st)
{
        (void)st;
        assert_int_equal(check("max_runtime_s", "31536000", NULL).i, KERF_MAX_RUNTIME_S);
        check("max_runtime_s", "31536001",
              "max_runtime_s: an integer 0..31536000 (seconds, at most 365d)");
        check("max_runtime_s", "-3",
              "max_runtime_s: an integer 0..31536000 (seconds, at most 365d)");
        check("max_runtime_s", "\"1h\"",
              "max_runtime_s: an integer 0..31536000 (seconds, at most 365d)");
        check("lease_s", "0", "lease_s: an integer 1..3600 (seconds, at most 1h)");
        assert_int_equal(check("lease_s", "3600", NULL).i, KERF_MAX_LEASE_S);
}

static void test_size(void **st)
{
        (void)st;
        assert_int_equal(check("memory", "\"1.5GiB\"", NULL).u, 1536ULL << 20);
        assert_int_equal(check("memory", "17179869184", NULL).u, 16ULL << 30);
        assert_int_equal(check("host_memory", "\"0\"", NULL).u, 0);
        check("memory", "1125899906842625", "memory: at most 1PiB");
        check("host_memory", "\"2048PiB\"", "host_memory: at most 1024PiB");
        check("memory", "true",
              "memory: bytes (an integer) or a string with a unit such as \"16GiB\", at most 1PiB");
        check("memory", "-1",
              "memory: bytes (an integer) or a string with a unit such as \"16GiB\", at most 1PiB");
        /* a bad string says what was wrong with it: the one size parser's words */
        json_t *v = json_string("16GB");
        kerf_field_value val;
        char msg[256];
        assert_int_equal(kerf_field_check(F("memory"), v, &val, msg, sizeof(msg)), -EINVAL);
        assert_non_null(strstr(msg, "memory: '16GB' is ambiguous"));
        json_decref(v);
}

static void test_enum_names_strings(void **st)
{
        (void)st;
        assert_int_equal(check("workload", "\"dev\"", NULL).i, KERF_WL_DEV);
        check("workload", "\"x\"", "workload: one of training, inference, dev, batch");
        check("workload", "3", "workload: one of training, inference, dev, batch");
        assert_int_equal(check("tier", "\"high-impact\"", NULL).i, KERF_TIER_HIGH);
        check("tier", "\"urgent\"", "tier: one of high, queueable, exploratory");
        assert_int_equal(check("route", "\"mig\"", NULL).i, KERF_UNIT_MIG);
        check("route", "\"gpu\"", "route: one of whole, mig, slice, mps, tslice");
        check("name", "\"\"", NULL);
        check("name", "\"-x\"", "name: " KERF_NAME_RULE " (or \"\")");
        check("tenant", "\"\"", "tenant: " KERF_NAME_RULE);
        check("queue", "\"a b\"", "queue: " KERF_NAME_RULE);
        check("mig_profile", "\"3g.71gb\"", NULL);
        check("mig_profile", "\"\"", "mig_profile: a string of 1..31 bytes");
        check("mig_profile", "\"0123456789012345678901234567890123\"",
              "mig_profile: a string of 1..31 bytes");
        check("cwd", "\"/tmp\"", NULL);
        check("cwd", "\"tmp\"", "cwd: an absolute path of at most 1024 bytes");
        check("command", "[\"x\"]", NULL);
        check("command", "[]", "command: a list of 1..4096 strings");
        check("gpu_models", "\"A100\"", "gpu_models: a list of at least 1 strings");
        check("gpu_uuids",
              "[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\","
              "\"l\",\"m\",\"n\",\"o\",\"p\",\"q\"]",
              "gpu_uuids: a list of 1..16 strings");
        check("env", "{\"A\":\"1\"}", NULL);
        check("env", "[]", "env: an object of at most 4096 members");
        check("run_as", "{\"uid\":1}", NULL);
        check("run_as", "7", "run_as: an object");
}

/* an unknown field names the nearest known one; a field of the other object names its own */
static void test_lookup(void **st)
{
        char msg[256];
        (void)st;
        assert_ptr_equal(kerf_field_lookup(kerf_task_fields, kerf_task_fields_count, "gpus",
                                           KERF_FIELD_SUBMIT, msg, sizeof(msg)),
                         F("gpus"));
        assert_null(kerf_field_lookup(kerf_task_fields, kerf_task_fields_count, "gpu",
                                      KERF_FIELD_SUBMIT, msg, sizeof(msg)));
        assert_string_equal(msg, "gpu: unknown field (did you mean gpus?)");
        assert_null(kerf_field_lookup(kerf_task_fields, kerf_task_fields_count, "max_runtime",
                                      KERF_FIELD_SUBMIT, msg, sizeof(msg)));
        assert_string_equal(msg, "max_runtime: unknown field (did you mean max_runtime_s?)");
        assert_null(kerf_field_lookup(kerf_task_fields, kerf_task_fields_count, "colour",
                                      KERF_FIELD_SUBMIT, msg, sizeof(msg)));
        assert_string_equal(msg, "colour: unknown field");
        assert_null(kerf_field_lookup(kerf_task_fields, kerf_task_fields_count, "pid",
                                      KERF_FIELD_SUBMIT, msg, sizeof(msg)));
        assert_string_equal(msg, "pid: only accepted by /v1/attach");
        assert_null(kerf_field_lookup(kerf_task_fields, kerf_task_fields_count, "command",
                                      KERF_FIELD_ATTACH, msg, sizeof(msg)));
        assert_string_equal(msg, "command: only accepted by /v1/tasks");
        /* a suggestion is only a field the object takes */
        assert_null(kerf_field_lookup(kerf_task_fields, kerf_task_fields_count, "commands",
                                      KERF_FIELD_ATTACH, msg, sizeof(msg)));
        assert_string_equal(msg, "commands: unknown field");
        assert_non_null(kerf_field_lookup(kerf_task_fields, kerf_task_fields_count, "lease_s",
                                          KERF_FIELD_ATTACH, msg, sizeof(msg)));
}

static void test_nearest(void **st)
{
        static const char *const c[] = {"submit", "show", NULL, "suspend"};
        (void)st;
        assert_string_equal(kerf_nearest("sumbit", c, 4), "submit");
        assert_string_equal(kerf_nearest("sus", c, 4), "suspend");
        assert_null(kerf_nearest("zzzzzz", c, 4));
        assert_null(kerf_nearest("", c, 4));
}

/* every descriptor: a help line, a default, bounds in order, a numeric default within them, an
 * object, a unique name and flag; an enum's bounds are its value table's */
static void test_table(void **st)
{
        (void)st;
        assert_true(kerf_task_fields_count > 20);
        for (size_t i = 0; i < kerf_task_fields_count; i++) {
                const kerf_field *f = &kerf_task_fields[i];
                char line[1024];
                if (!f->help || !*f->help || !f->def || !*f->def)
                        fail_msg("%s: no help or default", f->name);
                if (f->min > f->max && !(f->max == 0 && (f->type == KERF_FIELD_STRLIST ||
                                                         f->type == KERF_FIELD_OBJECT)))
                        fail_msg("%s: min %lld > max %lld", f->name, (long long)f->min,
                                 (long long)f->max);
                if (f->type >= KERF_FIELD_TYPE_COUNT ||
                    !(f->objects & (KERF_FIELD_SUBMIT | KERF_FIELD_ATTACH)))
                        fail_msg("%s: bad type or objects", f->name);
                if ((f->def[0] >= '0' && f->def[0] <= '9') || f->def[0] == '-') {
                        long long d = strtoll(f->def, NULL, 10);
                        if (d < f->min || d > f->max)
                                fail_msg("%s: default %lld outside %lld..%lld", f->name, d,
                                         (long long)f->min, (long long)f->max);
                }
                if (f->type == KERF_FIELD_ENUM) {
                        unsigned n = 0;
                        assert_non_null(f->value_name);
                        assert_non_null(f->value_parse);
                        while (f->value_name(n))
                                n++;
                        assert_int_equal(f->min, 0);
                        assert_int_equal(f->max, n - 1);
                        for (unsigned k = 0; k < n; k++)
                                assert_int_equal(f->value_parse(f->value_name(k)), k);
                }
                for (size_t j = 0; j < i; j++) {
                        assert_string_not_equal(f->name, kerf_task_fields[j].name);
                        if (f->flag && kerf_task_fields[j].flag)
                                assert_string_not_equal(f->flag, kerf_task_fields[j].flag);
                }
                kerf_field_help_line(f, line, sizeof(line));
                if (f->flag && (strncmp(line, "  --", 4) || !strstr(line, f->help)))
                        fail_msg("%s: help line [%s]", f->name, line);
                if (!f->flag && line[0])
                        fail_msg("%s: a help line without a flag", f->name);
        }
        /* the bounds are the one constants, not copies */
        assert_int_equal(F("gpus")->max, KERF_MAX_TASK_GPUS);
        assert_int_equal(F("memory")->max, KERF_MAX_GPU_MEM_BYTES);
        assert_int_equal(F("host_memory")->max, KERF_MAX_MEM_BYTES);
        assert_int_equal(F("max_runtime_s")->max, KERF_MAX_RUNTIME_S);
        assert_int_equal(F("idle_timeout_s")->max, KERF_MAX_IDLE_TIMEOUT_S);
        assert_int_equal(F("cpu_milli")->max, KERF_MAX_CPU_MILLI);
}

static void test_help_line(void **st)
{
        char line[1024];
        (void)st;
        kerf_field_help_line(F("gpus"), line, sizeof(line));
        assert_non_null(strstr(line, "  --gpus N"));
        assert_non_null(strstr(line, "1..16; default 1)"));
        kerf_field_help_line(F("workload"), line, sizeof(line));
        assert_non_null(strstr(line, "training | inference | dev | batch"));
        kerf_field_help_line(F("memory"), line, sizeof(line));
        assert_non_null(strstr(line, "at most 1PiB"));
        kerf_field_help_line(F("env"), line, sizeof(line));
        assert_non_null(strstr(line, "(repeatable)"));
        for (char *p = line, *nl; (nl = strchr(p, '\n')); p = nl + 1)
                assert_true(nl - p <= 80);
}

/* docs/API.md's task request table (the one after "`POST /v1/tasks` — submit") has one row per
 * descriptor, in its order: `name` | type (kerf_field_doc_type) | default | meaning. A row for
 * a field the table lacks, or a type or default that differs, fails with the expected row. */
static void test_api_md(void **st)
{
        static doc_row rows[64];
        char *doc = slurp(KERF_SOURCE_DIR "/docs/API.md");
        int n;
        (void)st;
        assert_non_null(doc);
        n = doc_table(doc, "`POST /v1/tasks` — submit", "\n| field | type | default | meaning |",
                      rows, 64);
        assert_true(n > 0);
        assert_int_equal(doc_check_fields("docs/API.md tasks", rows, n, kerf_task_fields,
                                          kerf_task_fields_count,
                                          KERF_FIELD_SUBMIT | KERF_FIELD_ATTACH, 1, 2),
                         0);
        free(doc);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_int_percent_bool),
            cmocka_unit_test(test_duration),
            cmocka_unit_test(test_size),
            cmocka_unit_test(test_enum_names_strings),
            cmocka_unit_test(test_lookup),
            cmocka_unit_test(test_nearest),
            cmocka_unit_test(test_table),
            cmocka_unit_test(test_help_line),
            cmocka_unit_test(test_api_md),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
