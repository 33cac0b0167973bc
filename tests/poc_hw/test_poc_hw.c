/* SPDX-License-Identifier: Apache-2.0 */
/* test_poc_hw.c - `kerf poc run --quick --spawn` on the simulated fleet for the hardware tests
 * (case "hw": HW1-HW4 pass; every fault of HW2 has a timeline entry whose blast radius matched
 * what happened; HW3 cites kerfd's node.upgrade record, present in the audit export; HW1's
 * re-created instance has a new uuid) and the neighbour test (case "nb": four conditions, a
 * curve each, MIG's p50 within its bound) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[128];

static int run_poc(const char *only)
{
        char cmd[1024];
        snprintf(dir, sizeof(dir), "/tmp/kerf-pochw-XXXXXX");
        assert_non_null(mkdtemp(dir));
        /* tasks run as the tenants' uids: they must traverse it to the private kerfd's files */
        assert_int_equal(chmod(dir, 0711), 0);
        /* a fresh out dir below the temp dir (kerf poc refuses one that holds a report) */
        snprintf(cmd, sizeof(cmd),
                 "%s poc run --quick --spawn --only %s --out %s/r >%s/out.txt 2>&1", KERF_CLI, only,
                 dir, dir);
        int st = system(cmd);
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static json_t *report(void)
{
        char path[256];
        json_error_t e;
        snprintf(path, sizeof(path), "%s/r/report.json", dir);
        json_t *r = json_load_file(path, 0, &e);
        if (!r)
                fprintf(stderr, "%s: %s\n", path, e.text);
        assert_non_null(r);
        return r;
}

static json_t *record(json_t *rep, const char *id)
{
        json_t *r;
        size_t i;
        json_array_foreach(
            json_object_get(rep, "records"), i,
            r) if (!strcmp(json_string_value(json_object_get(r, "id")), id)) return r;
        fail_msg("no record %s", id);
        return NULL;
}

static const json_t *measure(json_t *rec, const char *prefix)
{
        json_t *m;
        size_t i;
        json_array_foreach(json_object_get(rec, "measures"), i,
                           m) if (!strncmp(json_string_value(json_object_get(m, "name")), prefix,
                                           strlen(prefix))) return m;
        fail_msg("%s: no measure \"%s\"", json_string_value(json_object_get(rec, "id")), prefix);
        return NULL;
}

static void show_failures(json_t *rep)
{
        json_t *r, *m;
        size_t i, k;
        json_array_foreach(json_object_get(rep, "records"), i, r) json_array_foreach(
            json_object_get(r, "measures"), k, m) if (!json_is_true(json_object_get(m, "pass")))
            fprintf(stderr, "%s FAIL: %s = %g (%s)\n", json_string_value(json_object_get(r, "id")),
                    json_string_value(json_object_get(m, "name")),
                    json_number_value(json_object_get(m, "value")),
                    json_string_value(json_object_get(m, "note")));
}

static void cleanup(void)
{
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", dir);
}

static void test_hw(void **st)
{
        (void)st;
        int rc = run_poc("HW1,HW2,HW3,HW4");
        json_t *rep = report(), *hw2, *e, *hw3, *a;
        size_t i;
        show_failures(rep);
        assert_int_equal(rc, 0);
        static const char *const ids[] = {"HW1", "HW2", "HW3", "HW4"};
        for (size_t k = 0; k < 4; k++)
                assert_string_equal(
                    json_string_value(json_object_get(record(rep, ids[k]), "verdict")), "PASS");
        /* HW1: the re-created instance is a new one */
        assert_true(json_is_true(
            json_object_get(measure(record(rep, "HW1"), "re-create: a new MIG uuid"), "pass")));
        /* HW2: four faults and the kerfd failure on the timeline; each fault's blast radius
         * names exactly the tasks that were hit */
        hw2 = record(rep, "HW2");
        int faults = 0;
        json_array_foreach(json_object_get(hw2, "timeline"), i, e)
        {
                json_t *d = json_object_get(e, "detail");
                if (!json_object_get(d, "blast_radius"))
                        continue;
                faults++;
                assert_int_equal(json_integer_value(json_object_get(d, "mismatches")), 0);
                assert_true(strstr(json_string_value(json_object_get(d, "blast_radius")),
                                   "tasks [") != NULL);
        }
        assert_int_equal(faults, 4);
        assert_true(
            json_integer_value(json_object_get(json_object_get(hw2, "handling"), "commands")) >= 3);
        /* HW3: the node.upgrade record it cites is in the audit export */
        hw3 = record(rep, "HW3");
        assert_true(json_array_size(json_object_get(hw3, "audit")) >= 1);
        char path[256], line[4096];
        snprintf(path, sizeof(path), "%s/r/audit.ndjson", dir);
        FILE *f = fopen(path, "r");
        assert_non_null(f);
        bool found = false;
        while (fgets(line, sizeof(line), f))
                if (strstr(line, "\"node.upgrade\"")) {
                        json_t *j = json_loads(line, 0, NULL);
                        json_int_t seq = json_integer_value(json_object_get(j, "seq"));
                        json_array_foreach(json_object_get(hw3, "audit"), i, a) found |=
                            json_integer_value(a) == seq;
                        json_decref(j);
                }
        fclose(f);
        assert_true(found);
        json_decref(rep);
        cleanup();
}

static void test_nb(void **st)
{
        (void)st;
        (void)run_poc("NB");
        json_t *rep = report(), *nb = record(rep, "NB"), *series = json_object_get(nb, "series");
        show_failures(rep);
        static const char *const conds[] = {"alone", "time-slicing + noisy", "kerf slice + noisy",
                                            "MIG + noisy"};
        for (size_t k = 0; k < 4; k++) {
                char name[96];
                snprintf(name, sizeof(name), "p99 %s", conds[k]);
                json_t *s = json_object_get(series, name);
                assert_non_null(s);
                assert_int_equal(json_array_size(json_object_get(s, "points")), 3);
        }
        /* device isolation under MIG: the median p50 is the robust check */
        assert_true(
            json_is_true(json_object_get(measure(nb, "p50 degradation, MIG + noisy"), "pass")));
        json_decref(rep);
        cleanup();
}

int main(void)
{
        const struct CMUnitTest hw[] = {cmocka_unit_test(test_hw)};
        const struct CMUnitTest nb[] = {cmocka_unit_test(test_nb)};
        if (!strcmp(POC_HW_CASE, "nb"))
                return cmocka_run_group_tests(nb, NULL, NULL);
        return cmocka_run_group_tests(hw, NULL, NULL);
}
