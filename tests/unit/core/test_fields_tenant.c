/* SPDX-License-Identifier: Apache-2.0 */
/* test_fields_tenant.c - the tenant's field descriptors (kerf_tenant_fields): the table's
 * consistency and its bounds being the one constants, the validator on tenant values (null,
 * lists of workloads), lookups per object, help lines, and docs/API.md's tenant table and
 * docs/DAEMON.md's tenant rows against the descriptors */
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

#define ALL                                                                                        \
        (KERF_FIELD_TENANT_CREATE | KERF_FIELD_TENANT_PATCH | KERF_FIELD_TENANT_FILE |             \
         KERF_FIELD_TENANT_DEFAULTS)

#define FIELD_TABLE       kerf_tenant_fields
#define FIELD_TABLE_COUNT kerf_tenant_fields_count
#include "field_check.h"

static void test_table(void **st)
{
        (void)st;
        assert_true(kerf_tenant_fields_count >= 12);
        for (size_t i = 0; i < kerf_tenant_fields_count; i++) {
                const kerf_field *f = &kerf_tenant_fields[i];
                char line[1024];
                if (!f->help || !*f->help || !f->def || !*f->def)
                        fail_msg("%s: no help or default", f->name);
                if (f->min > f->max && !(f->max == 0 && f->type == KERF_FIELD_STRLIST))
                        fail_msg("%s: min %lld > max %lld", f->name, (long long)f->min,
                                 (long long)f->max);
                if (!f->objects || (f->objects & ~(unsigned)ALL))
                        fail_msg("%s: objects 0x%x", f->name, f->objects);
                if ((f->def[0] >= '0' && f->def[0] <= '9') || f->def[0] == '-') {
                        long long d = strtoll(f->def, NULL, 10);
                        if (d < f->min || d > f->max)
                                fail_msg("%s: default %lld outside its bounds", f->name, d);
                }
                if (f->type == KERF_FIELD_ENUM || f->value_name) {
                        unsigned n = 0;
                        assert_non_null(f->value_parse);
                        while (f->value_name(n))
                                n++;
                        if (f->type == KERF_FIELD_ENUM) {
                                assert_int_equal(f->min, 0);
                                assert_int_equal(f->max, n - 1);
                        }
                        for (unsigned k = 0; k < n; k++)
                                assert_int_equal(f->value_parse(f->value_name(k)), k);
                }
                /* a flag is for an API object; its help line names its help */
                if (f->flag && !(f->objects & KERF_FIELD_TENANT_API))
                        fail_msg("%s: a flag but no API object", f->name);
                kerf_field_help_line(f, line, sizeof(line));
                if (f->flag && (strncmp(line, "  --", 4) || !strstr(line, f->help)))
                        fail_msg("%s: help line [%s]", f->name, line);
                for (size_t j = 0; j < i; j++) {
                        assert_string_not_equal(f->name, kerf_tenant_fields[j].name);
                        if (f->flag && kerf_tenant_fields[j].flag)
                                assert_string_not_equal(f->flag, kerf_tenant_fields[j].flag);
                }
        }
        /* the bounds are the one constants: a ceiling on priority is a task priority */
        const kerf_field *prio =
            kerf_field_find(kerf_task_fields, kerf_task_fields_count, "priority");
        assert_non_null(prio);
        assert_int_equal(F("max_priority")->min, prio->min);
        assert_int_equal(F("max_priority")->max, prio->max);
        assert_int_equal(F("max_priority")->min, KERF_PRIORITY_MIN);
        assert_int_equal(F("weight")->max, KERF_TENANT_WEIGHT_MAX);
        assert_int_equal(F("max_pending")->max, KERF_TENANT_MAX_PENDING);
        assert_int_equal(F("uid")->max, KERF_MAX_TENANT_ID);
        assert_int_equal(F("gid")->max, KERF_MAX_TENANT_ID);
        assert_int_equal(F("max_tier")->max, KERF_TIER_COUNT - 1);
        /* what each object takes */
        assert_true(F("allow_root")->objects == KERF_FIELD_TENANT_FILE);
        assert_false(F("name")->objects & KERF_FIELD_TENANT_PATCH);
        assert_true(F("max_pending")->objects & KERF_FIELD_TENANT_DEFAULTS);
        assert_false(F("uid_base")->objects & ~KERF_FIELD_TENANT_DEFAULTS);
}

static void test_check(void **st)
{
        (void)st;
        assert_int_equal(check("weight", "1000", NULL).i, 1000);
        check("weight", "0", "weight: an integer 1..1000");
        check("weight", "1001", "weight: an integer 1..1000");
        assert_int_equal(check("max_priority", "-1000", NULL).i, -1000);
        check("max_priority", "1001", "max_priority: an integer -1000..1000 or null");
        check("max_priority", "\"5\"", "max_priority: an integer -1000..1000 or null");
        /* null is the caller's (back to tenant_defaults): the check alone refuses it */
        check("max_priority", "null", "max_priority: an integer -1000..1000 or null");
        assert_int_equal(check("max_pending", "10000000", NULL).i, KERF_TENANT_MAX_PENDING);
        check("max_pending", "-1", "max_pending: an integer 0..10000000 or null");
        assert_int_equal(check("max_tier", "\"high-impact\"", NULL).i, KERF_TIER_HIGH);
        check("max_tier", "\"urgent\"", "max_tier: one of high, queueable, exploratory or null");
        assert_int_equal(check("uid", "2147483646", NULL).i, KERF_MAX_TENANT_ID);
        check("uid", "2147483647", "uid: an integer 0..2147483646");
        check("gid", "-4", "gid: an integer 0..2147483646");
        check("cohort", "\"x/y\"", "cohort: " KERF_NAME_RULE " or null");
        check("name", "\"a b\"", "name: " KERF_NAME_RULE);
        check("name", "\"team-a\"", NULL);
        /* a list of workloads: each one a workload; the value is their mask */
        assert_int_equal(check("workloads", "[\"training\", \"dev\"]", NULL).i,
                         (1 << KERF_WL_TRAINING) | (1 << KERF_WL_DEV));
        check("workloads", "[]",
              "workloads: a list of at least 1 of training, inference, dev, batch or null");
        check("workloads", "[\"training\", \"gaming\"]",
              "workloads: a list of at least 1 of training, inference, dev, batch or null");
        check("workloads", "[7]",
              "workloads: a list of at least 1 of training, inference, dev, batch or null");
        check("allow_root", "true", NULL);
        check("quota", "{\"gpus\": {\"nominal\": 1}}", NULL);
        check("quota", "[]", "quota: an object of at most 4 members");
}

static void test_lookup(void **st)
{
        char msg[256];
        (void)st;
        assert_ptr_equal(kerf_field_lookup(kerf_tenant_fields, kerf_tenant_fields_count, "max_tier",
                                           KERF_FIELD_TENANT_PATCH, msg, sizeof(msg)),
                         F("max_tier"));
        assert_null(kerf_field_lookup(kerf_tenant_fields, kerf_tenant_fields_count, "max_prio",
                                      KERF_FIELD_TENANT_PATCH, msg, sizeof(msg)));
        assert_string_equal(msg, "max_prio: unknown field (did you mean max_priority?)");
        assert_null(kerf_field_lookup(kerf_tenant_fields, kerf_tenant_fields_count, "name",
                                      KERF_FIELD_TENANT_PATCH, msg, sizeof(msg)));
        assert_string_equal(
            msg, "name: only accepted by POST /v1/tenants and kerfd's config file (tenants[])");
        assert_null(kerf_field_lookup(kerf_tenant_fields, kerf_tenant_fields_count, "allow_root",
                                      KERF_FIELD_TENANT_CREATE, msg, sizeof(msg)));
        assert_string_equal(msg, "allow_root: only accepted by kerfd's config file (tenants[])");
        assert_null(kerf_field_lookup(kerf_tenant_fields, kerf_tenant_fields_count, "uid_base",
                                      KERF_FIELD_TENANT_FILE, msg, sizeof(msg)));
        assert_string_equal(msg,
                            "uid_base: only accepted by kerfd's config file (tenant_defaults)");
        assert_null(kerf_field_lookup(kerf_tenant_fields, kerf_tenant_fields_count, "weight",
                                      KERF_FIELD_TENANT_DEFAULTS, msg, sizeof(msg)));
        assert_string_equal(msg, "weight: only accepted by POST /v1/tenants and kerfd's config "
                                 "file (tenants[])");
        assert_null(kerf_field_lookup(kerf_tenant_fields, kerf_tenant_fields_count, "colour",
                                      KERF_FIELD_TENANT_FILE, msg, sizeof(msg)));
        assert_string_equal(msg, "colour: unknown field");
        assert_null(kerf_field_lookup(kerf_tenant_fields, kerf_tenant_fields_count, "workload",
                                      KERF_FIELD_TENANT_CREATE, msg, sizeof(msg)));
        assert_string_equal(msg, "workload: unknown field (did you mean workloads?)");
        /* the task table's objects are unchanged by the tenant's */
        assert_string_equal(kerf_field_object_name(KERF_FIELD_ATTACH), "/v1/attach");
        assert_string_equal(kerf_field_object_name(KERF_FIELD_TENANT_PATCH),
                            "PATCH /v1/tenants/{name}");
}

static void test_help(void **st)
{
        char line[1024];
        (void)st;
        kerf_field_help_line(F("max_priority"), line, sizeof(line));
        assert_non_null(strstr(line, "  --max-priority P"));
        assert_non_null(strstr(line, "-1000..1000"));
        kerf_field_help_line(F("workloads"), line, sizeof(line));
        assert_non_null(strstr(line, "--workload WL"));
        assert_non_null(strstr(line, "training | inference | dev |")); /* then a wrap */
        assert_non_null(strstr(line, "repeatable"));
        kerf_field_help_line(F("weight"), line, sizeof(line));
        assert_non_null(strstr(line, "1..1000; default 1"));
        kerf_field_help_line(F("allow_root"), line, sizeof(line));
        assert_string_equal(line, ""); /* never a flag: config file only */
}

/* "POST, PATCH, file, defaults": the objects of f as docs/API.md's last column writes them */
static void objects_words(const kerf_field *f, char *buf, size_t len)
{
        static const struct {
                unsigned bit;
                const char *word;
        } w[] = {{KERF_FIELD_TENANT_CREATE, "POST"},
                 {KERF_FIELD_TENANT_PATCH, "PATCH"},
                 {KERF_FIELD_TENANT_FILE, "file"},
                 {KERF_FIELD_TENANT_DEFAULTS, "defaults"}};
        size_t o = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
                if (f->objects & w[i].bit)
                        o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "", w[i].word);
}

/* docs/API.md's tenant table: a row per descriptor in order, `name` | type | default |
 * meaning | accepted by. */
static void test_api_md(void **st)
{
        static doc_row rows[32];
        char *doc = slurp(KERF_SOURCE_DIR "/docs/API.md");
        int n, bad;
        (void)st;
        assert_non_null(doc);
        n = doc_table(doc, "## Tenants and quotas",
                      "\n| field | type | default | meaning | accepted by |", rows, 32);
        assert_true(n > 0);
        bad = doc_check_fields("docs/API.md tenants", rows, n, kerf_tenant_fields,
                               kerf_tenant_fields_count, ALL, 1, 2);
        for (int i = 0; i < n && (size_t)i < kerf_tenant_fields_count; i++) {
                char want[64];
                objects_words(&kerf_tenant_fields[i], want, sizeof(want));
                if (rows[i].n < 5 || strcmp(rows[i].cell[4], want)) {
                        fprintf(stderr, "docs/API.md tenants: %s accepted by [%s], want [%s]\n",
                                rows[i].cell[0], rows[i].n >= 5 ? rows[i].cell[4] : "", want);
                        bad++;
                }
        }
        free(doc);
        assert_int_equal(bad, 0);
}

/* docs/DAEMON.md: the "Tenant policy" table's types (the PATCH fields, in order), and the
 * configuration reference's tenants[] and tenant_defaults rows naming every key of theirs. */
static void test_daemon_md(void **st)
{
        static doc_row rows[32];
        char *doc = slurp(KERF_SOURCE_DIR "/docs/DAEMON.md");
        static const struct {
                const char *row;
                unsigned object;
        } keys[] = {{"\n| `tenants[]` |", KERF_FIELD_TENANT_FILE},
                    {"\n| `tenant_defaults` |", KERF_FIELD_TENANT_DEFAULTS}};
        int n, bad;
        (void)st;
        assert_non_null(doc);
        n = doc_table(doc, "## Tenant policy", "\n| key (tenant, config and API) |", rows, 32);
        assert_true(n > 0);
        bad = doc_check_fields("docs/DAEMON.md Tenant policy", rows, n, kerf_tenant_fields,
                               kerf_tenant_fields_count, KERF_FIELD_TENANT_PATCH, 1, -1);
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
                const char *row = strstr(doc, keys[k].row), *end;
                char line[2048], want[80];
                assert_non_null(row);
                end = strchr(row + 1, '\n');
                snprintf(line, sizeof(line), "%.*s", (int)(end - row), row);
                for (size_t i = 0; i < kerf_tenant_fields_count; i++) {
                        const kerf_field *f = &kerf_tenant_fields[i];
                        if (!(f->objects & keys[k].object))
                                continue;
                        /* a key of tenant_defaults alone is written with its default */
                        if (f->objects == KERF_FIELD_TENANT_DEFAULTS)
                                snprintf(want, sizeof(want), "`%s` (%s", f->name, f->def);
                        else
                                snprintf(want, sizeof(want), "`%s`", f->name);
                        if (!strstr(line, want)) {
                                fprintf(stderr, "docs/DAEMON.md %s row lacks %s\n", keys[k].row + 1,
                                        want);
                                bad++;
                        }
                }
        }
        free(doc);
        assert_int_equal(bad, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_table),  cmocka_unit_test(test_check),
            cmocka_unit_test(test_lookup), cmocka_unit_test(test_help),
            cmocka_unit_test(test_api_md), cmocka_unit_test(test_daemon_md),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
