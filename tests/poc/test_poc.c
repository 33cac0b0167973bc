/* SPDX-License-Identifier: Apache-2.0 */
/* test_poc.c - `kerf poc run --spawn` end to end: the records, their evidence, the verdicts */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
        do {                                                                                       \
                if (!(c)) {                                                                        \
                        fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                       \
                        fprintf(stderr, __VA_ARGS__);                                              \
                        fputc('\n', stderr);                                                       \
                        failures++;                                                                \
                }                                                                                  \
        } while (0)

static char dir[64];

/* Runs kerf poc run with args into dir/out; returns the exit status. */
static int run(const char *args)
{
        char cmd[1024];
        snprintf(cmd, sizeof(cmd), "%s poc run --spawn --out %s/out %s", KERF_BIN, dir, args);
        fprintf(stderr, "+ %s\n", cmd);
        int st = system(cmd);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static json_t *report(void)
{
        char path[128];
        snprintf(path, sizeof(path), "%s/out/report.json", dir);
        json_t *r = json_load_file(path, 0, NULL);
        CHECK(r, "no %s", path);
        return r;
}

static const char *verdict(json_t *rep, const char *id)
{
        json_t *r;
        size_t i;
        json_array_foreach(
            json_object_get(rep, "records"), i,
            r) if (!strcmp(json_string_value(json_object_get(r, "id")),
                           id)) return json_string_value(json_object_get(r, "verdict"));
        return "";
}

/* Whether record `id` has a measure whose name starts with `prefix` and that failed. */
static bool measure_failed(json_t *rep, const char *id, const char *prefix)
{
        json_t *r, *m;
        size_t i, j;
        json_array_foreach(json_object_get(rep, "records"), i, r)
        {
                if (strcmp(json_string_value(json_object_get(r, "id")), id))
                        continue;
                json_array_foreach(json_object_get(r, "measures"), j, m)
                {
                        const char *name = json_string_value(json_object_get(m, "name"));
                        if (name && !strncmp(name, prefix, strlen(prefix)) &&
                            !json_is_true(json_object_get(m, "pass")))
                                return true;
                }
        }
        return false;
}

/* every field of docs/POC.md "Record", every cited audit seq in audit.ndjson, logs present */
static void check_records(json_t *rep)
{
        static const char *const fields[] = {
            "id",       "title",  "route",    "owner", "start_ms", "end_ms",
            "input",    "logs",   "metrics",  "audit", "measures", "skipped",
            "handling", "series", "timeline", "env",   "verdict"};
        char path[256], line[8192];
        snprintf(path, sizeof(path), "%s/out/audit.ndjson", dir);
        FILE *f = fopen(path, "r");
        CHECK(f, "no %s", path);
        json_t *seqs = json_object(), *r, *v;
        while (f && fgets(line, sizeof(line), f)) {
                json_t *a = json_loads(line, 0, NULL);
                char k[32];
                snprintf(k, sizeof(k), "%lld",
                         (long long)json_integer_value(json_object_get(a, "seq")));
                json_object_set_new(seqs, k, json_true());
                json_decref(a);
        }
        if (f)
                fclose(f);
        size_t i, j;
        json_array_foreach(json_object_get(rep, "records"), i, r)
        {
                const char *id = json_string_value(json_object_get(r, "id"));
                for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++)
                        CHECK(json_object_get(r, fields[k]), "%s: no field %s", id, fields[k]);
                json_array_foreach(json_object_get(r, "audit"), j, v)
                {
                        char k[32];
                        snprintf(k, sizeof(k), "%lld", (long long)json_integer_value(v));
                        CHECK(json_object_get(seqs, k), "%s cites audit seq %s, not exported", id,
                              k);
                }
                json_array_foreach(json_object_get(r, "logs"), j, v)
                {
                        struct stat st;
                        snprintf(path, sizeof(path), "%s/out/%s", dir,
                                 json_string_value(json_object_get(v, "stdout")));
                        CHECK(stat(path, &st) == 0, "%s: log %s missing", id, path);
                }
                if (!strncmp(id, "SW", 2)) {
                        CHECK(json_array_size(json_object_get(r, "input")) > 0, "%s: no input", id);
                        CHECK(json_array_size(json_object_get(r, "measures")) > 0,
                              "%s: no measures", id);
                        CHECK(json_array_size(json_object_get(r, "audit")) > 0, "%s: no audit", id);
                }
        }
        json_decref(seqs);
}

static void dump_fails(json_t *rep)
{
        json_t *r, *m;
        size_t i, j;
        json_array_foreach(json_object_get(rep, "records"), i, r) json_array_foreach(
            json_object_get(r, "measures"), j, m) if (!json_is_true(json_object_get(m, "pass")))
            fprintf(stderr, "  %s: %s = %g (%s %g)\n", json_string_value(json_object_get(r, "id")),
                    json_string_value(json_object_get(m, "name")),
                    json_number_value(json_object_get(m, "value")),
                    json_string_value(json_object_get(m, "op")),
                    json_number_value(json_object_get(m, "threshold")));
}

int main(int argc, char **argv)
{
        const char *mode = argc > 1 ? argv[1] : "quick";
        json_t *rep = NULL;
        snprintf(dir, sizeof(dir), "/tmp/kerf-poc-XXXXXX");
        if (!mkdtemp(dir) || chmod(dir, 0755) < 0) /* tasks run as tenant uids below it */
                return 1;
        if (!strcmp(mode, "quick")) {
                int ex = run("--quick --route software");
                rep = report();
                CHECK(ex == 0, "exit %d, want 0", ex);
                check_records(rep);
                for (int i = 1; i <= 4; i++) {
                        char id[8];
                        snprintf(id, sizeof(id), "SW%d", i);
                        CHECK(!strcmp(verdict(rep, id), "PASS"), "%s verdict %s", id,
                              verdict(rep, id));
                }
        } else if (!strcmp(mode, "broken_limiter")) {
                int ex = run("--quick --only SW1,SW2 --test-break-limiter");
                rep = report();
                CHECK(ex == 1, "exit %d, want 1", ex);
                CHECK(!strcmp(verdict(rep, "SW1"), "FAIL"), "SW1 %s", verdict(rep, "SW1"));
                CHECK(!strcmp(verdict(rep, "SW2"), "FAIL"), "SW2 %s", verdict(rep, "SW2"));
                /* caught by what the device saw, not only by what the broken shim reports */
                CHECK(measure_failed(rep, "SW2", "throttling (device's view): poc-a"),
                      "SW2: the device's view of poc-a's share did not fail");
                CHECK(measure_failed(rep, "SW2", "throttling (device's view): poc-b"),
                      "SW2: the device's view of poc-b's share did not fail");
                CHECK(measure_failed(rep, "SW2", "accounting:"),
                      "SW2: the shim's under-counted device time was not caught");
        } else if (!strcmp(mode, "no_shim")) {
                int ex = run("--quick --only SW1,SW2,SW3 --test-no-shim");
                rep = report();
                CHECK(ex == 1, "exit %d, want 1", ex);
                for (int i = 1; i <= 3; i++) {
                        char id[8];
                        snprintf(id, sizeof(id), "SW%d", i);
                        CHECK(!strcmp(verdict(rep, id), "FAIL"), "%s %s", id, verdict(rep, id));
                }
        } else if (!strcmp(mode, "flags")) {
                static const char *const bad[] = {"--route sideways",
                                                  "--only SW9",
                                                  "--seed 0",
                                                  "--seed x",
                                                  "--bogus",
                                                  "--suite /nonexistent.json",
                                                  "--spawn --restart-cmd true",
                                                  "--out",
                                                  "--fleet x"};
                for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                        char cmd[512];
                        snprintf(cmd, sizeof(cmd), "%s poc run %s 2>/dev/null", KERF_BIN, bad[i]);
                        int st = system(cmd);
                        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2, "'%s': exit %d, want 2",
                              bad[i], WEXITSTATUS(st));
                }
                char suite[128], cmd[512];
                snprintf(suite, sizeof(suite), "%s/suite.json", dir);
                FILE *f = fopen(suite, "w");
                fputs("{\"probe_s\": 1, \"nope\": 2}\n", f);
                fclose(f);
                snprintf(cmd, sizeof(cmd), "%s poc run --suite %s 2>/dev/null", KERF_BIN, suite);
                int st = system(cmd);
                CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2, "unknown suite field: exit %d",
                      WEXITSTATUS(st));
                snprintf(cmd, sizeof(cmd), "%s poc bogus 2>/dev/null", KERF_BIN);
                st = system(cmd);
                CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2, "poc bogus: exit %d", WEXITSTATUS(st));
        }
        if (rep && failures)
                dump_fails(rep);
        json_decref(rep);
        if (!failures && !getenv("KERF_POC_KEEP")) {
                char cmd[128];
                snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
                if (system(cmd) != 0)
                        fprintf(stderr, "could not remove %s\n", dir);
        } else {
                fprintf(stderr, "evidence kept in %s\n", dir);
        }
        return failures ? 1 : 0;
}
