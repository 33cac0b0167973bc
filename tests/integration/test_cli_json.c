/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_json.c - `kerf --json VERB` for every verb of the CLI's table (`kerf help
 * --commands`): each prints one JSON document on stdout or is refused with "kerf VERB: --json is
 * not supported; ..." (exit 2). A verb without a case here fails the test: a new verb needs its
 * JSON decision (src/cli/main.c) and a case below. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clirun.h"
#include "harness.h"

static kd K;

enum { JSON, REFUSED };

/* One case: the verb, what --json must do, its arguments ("@ID" a running task, "@CANCEL" a
 * task to cancel, "@SLICE" a running software slice, "@PENDING" a task that waits, "@DIR" the
 * test's directory). */
static const struct jcase {
        const char *verb;
        int want;
        const char *args[8];
} cases[] = {
    {"submit", JSON, {"--tenant", "alice", "--", "/bin/true"}},
    {"run", REFUSED, {"--tenant", "alice", "--", "/bin/true"}},
    {"ls", JSON, {NULL}},
    {"show", JSON, {"@ID"}},
    {"cancel", JSON, {"@CANCEL"}},
    {"logs", REFUSED, {"@ID"}},
    {"explain", JSON, {"@ID"}},
    {"gpus", JSON, {NULL}},
    {"units", JSON, {NULL}},
    {"tenants", JSON, {NULL}},
    {"tenant", JSON, {NULL}},
    {"quota", JSON, {"alice"}},
    {"queue", JSON, {NULL}},
    {"audit", JSON, {NULL}},
    {"top", JSON, {NULL}},
    {"version", JSON, {NULL}},
    {"suspend", JSON, {"@SLICE"}},
    {"resume", JSON, {"@SLICE"}},
    {"cost", JSON, {NULL}},
    {"export", JSON, {"--out", "@DIR/export.tar"}},
    {"cdi", JSON, {"generate"}},
    {"slurm", JSON, {"gres-conf"}},
    {"history", JSON, {NULL}},
    {"gc", JSON, {"--dry-run"}},
    {"replay", JSON, {"--nodes", "@DIR/nodes.csv", "--pods", "@DIR/pods.csv"}},
    {"hold", JSON, {"@PENDING"}},
    {"release", JSON, {"@PENDING"}},
    {"update", JSON, {"@PENDING", "--priority", "0"}},
    {"gpu", JSON, {"drain", "7"}},
    {"cluster", JSON, {"gpus", "--nodes", "@DIR/nodes.yaml"}},
    {"poc", REFUSED, {"run"}},
    {"help", REFUSED, {NULL}},
};

static unsigned long long id_run, id_cancel, id_slice, id_pending;

static void put(const char *name, const char *text)
{
        char p[400];
        FILE *f;
        snprintf(p, sizeof(p), "%s/%s", K.dir, name);
        f = fopen(p, "we");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static int setup(void **st)
{
        char nodes[600];
        (void)st;
        /* slices count as enforced (a do-nothing "shim"), whether or not the real one is built */
        setenv("KERFD_TEST_SHIM_PATH", NOOP_SHIM, 1);
        kd_setup(&K, NULL);
        id_run = kd_cli_submit(&K, "alice", "sleep 60");
        id_cancel = kd_cli_submit(&K, "alice", "sleep 60");
        kd_out o = kd_cli_runv(&K, NULL, NULL, "--json", "submit", "--tenant", "alice", "--route",
                               "slice", "--memory", "1GiB", "--compute", "20", "--", "/bin/sleep",
                               "60", (char *)NULL);
        kd_cli_assert_code(&o, 0);
        assert_non_null(o.js);
        id_slice = (unsigned long long)json_integer_value(json_object_get(o.js, "id"));
        kd_out_fini(&o);
        json_decref(kd_wait_task(&K, id_run, "running", 15000));
        json_decref(kd_wait_task(&K, id_slice, "running", 15000));
        /* six whole GPUs twice: the second waits behind the first */
        const char *six = "{\"tenant\":\"alice\",\"route\":\"whole\",\"gpus\":6,"
                          "\"command\":[\"/bin/sleep\",\"60\"]}";
        kd_submit(&K, six, NULL);
        id_pending = kd_submit(&K, six, NULL);
        put("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,8000,65536,2,T4\n");
        put("pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\n");
        snprintf(nodes, sizeof(nodes), "nodes:\n  - {name: n1, socket: %s}\n", K.sock);
        put("nodes.yaml", nodes);
        return 0;
}

static int teardown(void **st)
{
        (void)st;
        kd_stop(&K);
        kd_cleanup(&K);
        return 0;
}

static const struct jcase *case_of(const char *verb)
{
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                if (!strcmp(cases[i].verb, verb))
                        return &cases[i];
        return NULL;
}

/* Runs `kerf --json VERB ARGS` and checks it against the case. */
static void run_case(const struct jcase *c)
{
        char *args[16], bufs[8][440], prefix[200];
        int n = 0;
        args[n++] = "--json";
        args[n++] = (char *)c->verb;
        for (int i = 0; i < 8 && c->args[i]; i++) {
                const char *a = c->args[i];
                unsigned long long id = !strcmp(a, "@ID")        ? id_run
                                        : !strcmp(a, "@CANCEL")  ? id_cancel
                                        : !strcmp(a, "@SLICE")   ? id_slice
                                        : !strcmp(a, "@PENDING") ? id_pending
                                                                 : 0;
                if (id)
                        snprintf(bufs[i], sizeof(bufs[i]), "%llu", id);
                else if (!strncmp(a, "@DIR", 4))
                        snprintf(bufs[i], sizeof(bufs[i]), "%s%s", K.dir, a + 4);
                else
                        snprintf(bufs[i], sizeof(bufs[i]), "%s", a);
                args[n++] = bufs[i];
        }
        args[n] = NULL;
        kd_out o = kd_cli_run(&K, NULL, NULL, args);
        if (c->want == JSON) {
                if (o.code != 0 || !o.js)
                        fail_msg(
                            "kerf --json %s: exit %d, stdout is %sJSON [%.300s], stderr [%.300s]",
                            c->verb, o.code, o.js ? "" : "not ", o.out, o.err);
        } else {
                snprintf(prefix, sizeof(prefix), "kerf %s: --json is not supported; ", c->verb);
                if (o.code != 2 || strncmp(o.err, prefix, strlen(prefix)) != 0 || o.out[0])
                        fail_msg("kerf --json %s: exit %d (expected 2), stderr [%.300s] (expected "
                                 "'%s...'), stdout [%.100s]",
                                 c->verb, o.code, o.err, prefix, o.out);
        }
        kd_out_fini(&o);
}

/* Every verb the binary lists has a case, and each case behaves as declared. */
static void test_every_verb(void **st)
{
        (void)st;
        char *save = NULL;
        unsigned n = 0;
        kd_out o = kd_cli_runv(&K, NULL, NULL, "help", "--commands", (char *)NULL);
        kd_cli_assert_code(&o, 0);
        for (char *v = strtok_r(o.out, "\n", &save); v; v = strtok_r(NULL, "\n", &save)) {
                const struct jcase *c = case_of(v);
                if (!c)
                        fail_msg("kerf %s has no --json case in test_cli_json.c: decide whether it "
                                 "prints JSON (src/cli/main.c's verb table) and add one",
                                 v);
                run_case(c);
                n++;
        }
        kd_out_fini(&o);
        assert_int_equal(n, sizeof(cases) / sizeof(cases[0]));
}

/* A verb's own --json flag is refused too where the verb prints no JSON. */
static void test_own_flag(void **st)
{
        (void)st;
        char id[32];
        snprintf(id, sizeof(id), "%llu", id_run);
        kd_out o = kd_cli_runv(&K, NULL, NULL, "logs", id, "--json", (char *)NULL);
        kd_cli_assert_code(&o, 2);
        assert_non_null(strstr(o.err, "kerf logs: --json is not supported; "));
        kd_out_fini(&o);
        o = kd_cli_runv(&K, NULL, NULL, "run", "--json", "--tenant", "alice", "--", "/bin/true",
                        (char *)NULL);
        kd_cli_assert_code(&o, 2);
        assert_non_null(strstr(o.err, "kerf run: --json is not supported; "));
        kd_out_fini(&o);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_every_verb),
            cmocka_unit_test(test_own_flag),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
