/* SPDX-License-Identifier: Apache-2.0 */
/* test_fields_fleet.c - field descriptors read from YAML scalars (kerf_field_check_text) per
 * type and bound, the fleet file's tables (fields_fleet.c: help, bounds, defaults), an unknown
 * key's suggestion, and docs/FLEET.md's key tables against the descriptors */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerf/core.h"
#include "kerf/errno.h"
#include "kerf/fields_fleet.h"
#include "md_table.h"

static const kerf_field *NODE(const char *name)
{
        const kerf_field *f =
            kerf_field_find(kerf_fleet_node_fields, kerf_fleet_node_fields_count, name);
        if (!f)
                fail_msg("no node key %s", name);
        return f;
}

static const kerf_field *GPU(const char *name)
{
        const kerf_field *f =
            kerf_field_find(kerf_fleet_gpu_fields, kerf_fleet_gpu_fields_count, name);
        if (!f)
                fail_msg("no GPU key %s", name);
        return f;
}

static const kerf_field *TASK(const char *name)
{
        const kerf_field *f = kerf_field_find(kerf_task_fields, kerf_task_fields_count, name);
        if (!f)
                fail_msg("no task field %s", name);
        return f;
}

/* Checks scalar `s` against `f`: accepted when want is NULL, else refused with exactly `want`
 * (or, when want ends in '*', a message starting with it); *ret untouched on failure. */
static kerf_field_value check(const kerf_field *f, const char *s, const char *want)
{
        kerf_field_value v = {.i = 77}, keep = v;
        char msg[512] = "";
        int r = kerf_field_check_text(f, s, &v, msg, sizeof(msg));
        size_t wl = want ? strlen(want) : 0;
        bool prefix = wl && want[wl - 1] == '*';

        if (!want && r != 0)
                fail_msg("%s='%s' refused: %s", f->name, s, msg);
        if (want && (r != -EINVAL || (prefix ? strncmp(msg, want, wl - 1) : strcmp(msg, want))))
                fail_msg("%s='%s': r=%d '%s', want '%s'", f->name, s, r, msg, want);
        if (want)
                assert_memory_equal(&v, &keep, sizeof(v));
        return v;
}

static void test_int_milli_bool(void **st)
{
        (void)st;
        assert_int_equal(check(GPU("count"), "1", NULL).i, 1);
        assert_int_equal(check(GPU("count"), "64", NULL).i, KERF_MAX_NODE_GPUS);
        check(GPU("count"), "65", "count: an integer 1..64, got '65'");
        check(GPU("count"), "0", "count: an integer 1..64, got '0'");
        check(GPU("count"), "two", "count: an integer 1..64, got 'two'");
        check(GPU("count"), "2.0", "count: an integer 1..64, got '2.0'");
        check(GPU("count"), " 2", "count: an integer 1..64, got ' 2'");
        check(GPU("count"), "", "count: an integer 1..64, got ''");
        check(GPU("count"), "99999999999999999999", "count: an integer 1..64, got *");
        assert_int_equal(check(GPU("numa"), "-1", NULL).i, -1);
        check(GPU("numa"), "-2", "numa: an integer -1..1023, got '-2'");
        assert_int_equal(check(NODE("count"), "4096", NULL).i, KERF_MAX_NODE_REPLICAS);
        /* cpus: a number with up to 3 decimals, stored in thousandths */
        assert_int_equal(check(NODE("cpus"), "0.5", NULL).i, 500);
        assert_int_equal(check(NODE("cpus"), "112", NULL).i, 112000);
        assert_int_equal(check(NODE("cpus"), "1.125", NULL).i, 1125);
        assert_int_equal(check(NODE("cpus"), "100000", NULL).i, (int64_t)KERF_MAX_CPU_MILLI);
        check(NODE("cpus"), "100000.001",
              "cpus: a number 0..100000 with up to 3 decimals, like 64 or 0.5, got '100000.001'");
        check(NODE("cpus"), "0.0005", "cpus: a number 0..100000 with up to 3 decimals*");
        check(NODE("cpus"), "-1", "cpus: a number 0..100000 with up to 3 decimals*");
        check(NODE("cpus"), ".5", "cpus: a number 0..100000 with up to 3 decimals*");
        assert_int_equal(check(NODE("cpu_milli"), "500", NULL).i, 500);
        check(NODE("cpu_milli"), "0.5", "cpu_milli: an integer 0..100000000, got '0.5'");
        /* a percent (task fields serve for the types the fleet file lacks) */
        assert_int_equal(check(TASK("compute"), "100", NULL).i, 100);
        check(TASK("compute"), "101", "compute: an integer 0..100 (percent), got '101'");
        /* bool: YAML 1.1's words, any case */
        assert_true(check(GPU("mig"), "true", NULL).b);
        assert_true(check(GPU("mig"), "Yes", NULL).b);
        assert_true(check(GPU("mig"), "ON", NULL).b);
        assert_false(check(GPU("mig"), "false", NULL).b);
        assert_false(check(GPU("mig"), "no", NULL).b);
        assert_false(check(GPU("mig"), "off", NULL).b);
        check(GPU("mig"), "1", "mig: true or false (or yes/no, on/off), got '1'");
        check(GPU("mig"), "maybe", "mig: true or false (or yes/no, on/off), got 'maybe'");
}

static void test_size_duration(void **st)
{
        char want[256];
        (void)st;
        assert_int_equal(check(NODE("memory"), "2TiB", NULL).u, 2 * KERF_TIB);
        assert_int_equal(check(NODE("memory"), "0", NULL).u, 0);
        assert_int_equal(check(NODE("memory"), "1.5 GiB", NULL).u, 3 * KERF_GIB / 2);
        assert_int_equal(check(NODE("memory"), "1024PiB", NULL).u, KERF_MAX_MEM_BYTES);
        /* the one size parser's words */
        check(NODE("memory"), "512", "memory: '512' has no unit*");
        check(NODE("memory"), "lots", "memory: 'lots' is not a size*");
        check(NODE("memory"), "1025PiB",
              "memory: a size with a unit such as 16GiB or 512MiB, 0B..1024PiB, got '1025PiB'");
        /* a duration through kerf_parse_duration, bounds in its words */
        assert_int_equal(check(TASK("lease_s"), "1h", NULL).u, 3600);
        assert_int_equal(check(TASK("lease_s"), "90", NULL).u, 90);
        check(TASK("lease_s"), "0",
              "lease_s: a duration such as 90, 15m or 1h30m, 1s..1h, got '0'");
        check(TASK("lease_s"), "1h1s", "lease_s: a duration such as 90, 15m or 1h30m*");
        snprintf(want, sizeof(want), "lease_s: %s", "*");
        check(TASK("lease_s"), "soon", want);
}

static void test_strings_enum(void **st)
{
        char long_name[80];
        (void)st;
        assert_string_equal(check(NODE("name"), "node0", NULL).s, "node0");
        assert_string_equal(check(NODE("name"), "a:b/c", NULL).s, "a:b/c"); /* printable */
        check(NODE("name"), "has space",
              "name: 1..63 printable characters, no spaces, got "
              "'has space'");
        check(NODE("name"), "", "name: 1..63 printable characters, no spaces, got ''");
        memset(long_name, 'n', 64);
        long_name[64] = '\0';
        check(NODE("name"), long_name, "name: 1..63 printable characters, no spaces*");
        long_name[63] = '\0';
        check(NODE("name"), long_name, NULL);
        check(NODE("driver"), "550 54",
              "driver: 1..31 printable characters, no spaces, got '550 54'");
        /* a plain string: any bytes, length bounds only */
        check(GPU("nvlink"), "switch 0", NULL);
        check(GPU("nvlink"), "", "nvlink: a string of 1..31 bytes, got ''");
        /* enum: the model table, aliases and product names too, any case */
        const kerf_gpu_model *h200 = kerf_gpu_model_find("H200-141GB");
        assert_int_equal(check(GPU("model"), "h200", NULL).i, kerf_gpu_model_index(h200));
        assert_int_equal(check(GPU("model"), "NVIDIA H200", NULL).i, kerf_gpu_model_index(h200));
        check(GPU("model"), "H300", "model: one of H200-141GB, H100-80GB, *");
        /* name and path (task fields) */
        check(TASK("queue"), "gpu.q", NULL);
        check(TASK("queue"), "-q", "queue: " KERF_NAME_RULE ", got '-q'");
        check(TASK("cwd"), "/tmp", NULL);
        check(TASK("cwd"), "tmp", "cwd: an absolute path of at most 1024 bytes, got 'tmp'");
        /* lists and mappings are never scalars */
        check(NODE("gpus"), "x", "gpus: a list of 0..64 entries, got 'x'");
        check(TASK("env"), "x", "env: a mapping, got 'x'");
}

static void check_table(const char *what, const kerf_field *t, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                const kerf_field *f = &t[i];
                kerf_field_value v;
                char msg[512], d[320];
                if (!f->help || !*f->help || !f->def || !*f->def)
                        fail_msg("%s %s: no help or no default", what, f->name);
                if (f->flag || f->metavar || f->objects || (f->flags & KERF_FIELD_REPEAT))
                        fail_msg("%s %s: a CLI flag or an API object", what, f->name);
                if (!(f->min <= f->max || (f->type == KERF_FIELD_STRLIST && f->max == 0)))
                        fail_msg("%s %s: bounds %lld..%lld", what, f->name, (long long)f->min,
                                 (long long)f->max);
                for (size_t j = 0; j < i; j++)
                        assert_string_not_equal(f->name, t[j].name);
                assert_non_null(kerf_field_describe_text(f, d, sizeof(d)));
                assert_true(strlen(d) > 3);
                /* a default written as a value is one, within the bounds: the reader applies it */
                if (f->type == KERF_FIELD_INT || f->type == KERF_FIELD_PERCENT ||
                    f->type == KERF_FIELD_BOOL || f->type == KERF_FIELD_SIZE ||
                    f->type == KERF_FIELD_DURATION)
                        if (kerf_field_check_text(f, f->def, &v, msg, sizeof(msg)) != 0)
                                fail_msg("%s %s: default '%s': %s", what, f->name, f->def, msg);
                if (f->type == KERF_FIELD_ENUM)
                        for (unsigned k = 0; f->value_name(k); k++) {
                                assert_true((int64_t)k <= f->max);
                                assert_int_equal(f->value_parse(f->value_name(k)), k);
                        }
        }
}

static void test_tables(void **st)
{
        (void)st;
        check_table("fleet", kerf_fleet_doc_fields, kerf_fleet_doc_fields_count);
        check_table("node", kerf_fleet_node_fields, kerf_fleet_node_fields_count);
        check_table("GPU", kerf_fleet_gpu_fields, kerf_fleet_gpu_fields_count);
        assert_int_equal(GPU("model")->max + 1, KERF_MAX_GPU_MODELS);
        assert_true(kerf_gpu_model_count() <= KERF_MAX_GPU_MODELS);
        assert_int_equal(NODE("gpus")->max, KERF_MAX_NODE_GPUS);
        assert_int_equal(NODE("driver")->max + 1,
                         (int64_t)sizeof(((kerf_node_desc *)0)->driver_version));
}

/* parses y, which must fail with a message containing `want` */
static void refused(const char *y, const char *want)
{
        char err[512] = "";
        kerf_fleet *f = NULL;
        int r = kerf_fleet_parse_yaml(y, strlen(y), &f, err, sizeof(err));
        if (r != -KERF_EPARSE || !strstr(err, want))
                fail_msg("r=%d '%s', want '%s'", r, err, want);
        assert_null(f);
}

static void test_unknown_key(void **st)
{
        (void)st;
        refused("nodes:\n  - name: n0\n    gpus:\n      - {model: H200, nvlnk: a}\n",
                "line 4: nvlnk: unknown key in a GPU entry, did you mean nvlink? (known: model, "
                "count, mig, numa, nvlink, uuid)");
        refused("nodes:\n  - name: n0\n    memroy: 1GiB\n",
                "line 3: memroy: unknown key in a node, did you mean memory? (known: name, count, "
                "cpus, cpu_milli, memory, driver, cuda, gpus)");
        refused("node:\n  - name: n0\n", "line 1: node: unknown key in the fleet, did you mean "
                                         "nodes? (known: nodes)");
        refused("nodes:\n  - name: n0\n    colour: red\n",
                "line 3: colour: unknown key in a node (known: name,");
}

/* The reader's defaults are the descriptors': a GPU without count, numa, mig, nvlink */
static void test_defaults_applied(void **st)
{
        const char *y = "nodes:\n  - name: n0\n    gpus:\n      - {model: H200}\n";
        kerf_field_value count, numa, mig, cpus, mem;
        char msg[256];
        kerf_fleet *f = NULL;
        (void)st;
        assert_int_equal(
            kerf_field_check_text(GPU("count"), GPU("count")->def, &count, msg, sizeof(msg)), 0);
        assert_int_equal(
            kerf_field_check_text(GPU("numa"), GPU("numa")->def, &numa, msg, sizeof(msg)), 0);
        assert_int_equal(kerf_field_check_text(GPU("mig"), GPU("mig")->def, &mig, msg, sizeof(msg)),
                         0);
        assert_int_equal(
            kerf_field_check_text(NODE("cpus"), NODE("cpus")->def, &cpus, msg, sizeof(msg)), 0);
        assert_int_equal(
            kerf_field_check_text(NODE("memory"), NODE("memory")->def, &mem, msg, sizeof(msg)), 0);
        assert_int_equal(kerf_fleet_parse_yaml(y, strlen(y), &f, msg, sizeof(msg)), 0);
        assert_int_equal(f->n_gpus, (size_t)count.i);
        assert_int_equal(f->gpus[0].numa, numa.i);
        assert_int_equal(f->gpus[0].mig_enabled, mig.b);
        assert_int_equal(f->gpus[0].nvlink_peers, 0);
        assert_int_equal(f->nodes[0].cpu_milli, (uint64_t)cpus.i);
        assert_int_equal(f->nodes[0].mem_bytes, mem.u);
        assert_string_equal(f->nodes[0].driver_version, NODE("driver")->def);
        kerf_fleet_free(f);
}

/* docs/FLEET.md's key table after `anchor` has one row per descriptor of t, in its order:
 * `key` | type (kerf_field_doc_type_text) | default | meaning (help). A differing row fails
 * with the row expected. */
static int md_keys(const char *doc, const char *anchor, const kerf_field *t, size_t n)
{
        const char *p = md_table(doc, anchor, "\n| key | type | default | meaning |");
        char c[6][MD_CELL_LEN], want[4][MD_CELL_LEN];
        size_t i = 0;
        int bad = 0;

        if (!p)
                fail_msg("docs/FLEET.md: no key table after %s", anchor);
        for (; md_row(p, c, 6) > 0; p = md_next(p), i++) {
                if (md_row(p, c, 6) != 4)
                        fail_msg("docs/FLEET.md %s: a row of other than 4 cells: %s", anchor, c[0]);
                if (i >= n) {
                        fprintf(stderr, "docs/FLEET.md %s: row %s: no descriptor\n", anchor, c[0]);
                        bad++;
                        continue;
                }
                snprintf(want[0], MD_CELL_LEN, "`%s`", t[i].name);
                kerf_field_doc_type_text(&t[i], want[1], MD_CELL_LEN);
                snprintf(want[2], MD_CELL_LEN, "%s", t[i].def);
                snprintf(want[3], MD_CELL_LEN, "%s", t[i].help);
                for (int k = 0; k < 4; k++)
                        if (strcmp(c[k], want[k])) {
                                fprintf(stderr,
                                        "docs/FLEET.md %s: row %zu: want | %s | %s | %s | %s |\n",
                                        anchor, i, want[0], want[1], want[2], want[3]);
                                bad++;
                                break;
                        }
        }
        if (i < n) {
                fprintf(stderr, "docs/FLEET.md %s: %zu rows, %zu descriptors (next: %s)\n", anchor,
                        i, n, t[i].name);
                bad++;
        }
        return bad;
}

static void test_fleet_md(void **st)
{
        char *doc = slurp(KERF_SOURCE_DIR "/docs/FLEET.md");
        int bad = 0;
        (void)st;
        assert_non_null(doc);
        bad +=
            md_keys(doc, "### Document keys", kerf_fleet_doc_fields, kerf_fleet_doc_fields_count);
        bad += md_keys(doc, "### Node keys", kerf_fleet_node_fields, kerf_fleet_node_fields_count);
        bad +=
            md_keys(doc, "### GPU entry keys", kerf_fleet_gpu_fields, kerf_fleet_gpu_fields_count);
        free(doc);
        assert_int_equal(bad, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_int_milli_bool), cmocka_unit_test(test_size_duration),
            cmocka_unit_test(test_strings_enum),   cmocka_unit_test(test_tables),
            cmocka_unit_test(test_unknown_key),    cmocka_unit_test(test_defaults_applied),
            cmocka_unit_test(test_fleet_md),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
