/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli.c - the real `kerf` binary against a throwaway kerfd: every verb, --json, --help,
 * exit codes (bad flags 2, unreachable 3, unknown id 4) and a tenant token's view */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clirun.h"
#include "harness.h"
#include "kerf/units.h"

static kd K;

/* the kerf binary under test (clirun.h) */
#define kerf(...)                  kd_cli_runv(&K, NULL, NULL, __VA_ARGS__, (char *)NULL)
#define kerf_tok(tok, ...)         kd_cli_runv(&K, NULL, tok, __VA_ARGS__, (char *)NULL)
#define run_sock(sock, token, ...) kd_cli_runv(&K, sock, token, __VA_ARGS__)

static void assert_ok(const kd_out *o)
{
        kd_cli_assert_code(o, 0);
}

#define submit_json(tenant, cmd) kd_cli_submit(&K, tenant, cmd)

static int setup(void **st)
{
        /* slices count as enforced (a do-nothing "shim"), whether or not the real one is built */
        setenv("KERFD_TEST_SHIM_PATH", NOOP_SHIM, 1);
        kd_setup(&K, NULL);
        return 0;
}

static int teardown(void **st)
{
        kd_stop(&K);
        kd_cleanup(&K);
        return 0;
}

static void test_version(void **st)
{
        kd_out o = kerf("version");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "kerf client"));
        assert_non_null(strstr(o.out, "kerfd"));
        assert_non_null(strstr(o.out, "simulated"));
        assert_non_null(strstr(o.out, "you are an admin"));
        kd_out_fini(&o);
        o = kerf("version", "--json");
        assert_ok(&o);
        assert_non_null(o.js);
        assert_non_null(json_object_get(o.js, "client"));
        assert_non_null(json_object_get(json_object_get(o.js, "server"), "kerf"));
        assert_true(json_is_true(json_object_get(json_object_get(o.js, "whoami"), "admin")));
        kd_out_fini(&o);
}

static void test_submit_show_ls(void **st)
{
        char ids[32];
        unsigned long long id = submit_json("alice", "sleep 0.2");
        snprintf(ids, sizeof(ids), "%llu", id);

        kd_out o = kerf("submit", "--tenant", "bob", "--name", "plain", "--", "/bin/true");
        assert_ok(&o);
        assert_true(strncmp(o.out, "task ", 5) == 0);
        assert_non_null(strstr(o.out, "(plain)"));
        kd_out_fini(&o);

        o = kerf("show", ids);
        assert_ok(&o);
        assert_non_null(strstr(o.out, "tenant"));
        assert_non_null(strstr(o.out, "alice"));
        kd_out_fini(&o);
        o = kerf("show", ids, "--json");
        assert_ok(&o);
        assert_int_equal(json_integer_value(json_object_get(o.js, "id")), id);
        kd_out_fini(&o);

        o = kerf("ls");
        assert_ok(&o);
        assert_true(strncmp(o.out, "ID", 2) == 0);
        assert_non_null(strstr(o.out, "alice"));
        assert_non_null(strstr(o.out, "plain"));
        kd_out_fini(&o);
        o = kerf("--json", "ls", "--tenant", "alice");
        assert_ok(&o);
        json_t *items = json_object_get(o.js, "items"), *t;
        size_t i;
        assert_true(json_array_size(items) >= 1);
        json_array_foreach(items, i, t)
        {
                assert_string_equal(json_string_value(json_object_get(t, "tenant")), "alice");
        }
        kd_out_fini(&o);
}

static void test_run_logs(void **st)
{
        kd_out o = kerf("run", "--tenant", "alice", "--", "/bin/sh", "-c",
                        "echo hi; echo oops >&2; exit 3");
        if (o.code != 3)
                fail_msg("kerf run exited %d; stderr: %s", o.code, o.err);
        assert_string_equal(o.out, "hi\n");
        assert_non_null(strstr(o.err, "oops\n"));
        /* the id is in "kerf: task N submitted" */
        const char *p = strstr(o.err, "kerf: task ");
        assert_non_null(p);
        unsigned long long id = strtoull(p + 11, NULL, 10);
        assert_true(id > 0);
        kd_out_fini(&o);

        char ids[32];
        snprintf(ids, sizeof(ids), "%llu", id);
        o = kerf("logs", ids);
        assert_ok(&o);
        assert_string_equal(o.out, "hi\n");
        kd_out_fini(&o);
        o = kerf("logs", "--stderr", ids);
        assert_ok(&o);
        /* (a slice task's stderr may also hold the loader's word on the shim) */
        assert_true(strlen(o.err) >= 5 && !strcmp(o.err + strlen(o.err) - 5, "oops\n"));
        kd_out_fini(&o);

        o = kerf("explain", ids);
        assert_ok(&o);
        assert_non_null(strstr(o.out, "is failed"));
        kd_out_fini(&o);
        o = kerf("explain", "--json", ids);
        assert_ok(&o);
        assert_string_equal(json_string_value(json_object_get(o.js, "state")), "failed");
        kd_out_fini(&o);

        /* a task that succeeds: exit 0 */
        o = kerf("run", "--tenant", "bob", "--", "/bin/true");
        assert_ok(&o);
        kd_out_fini(&o);
}

static void test_cancel(void **st)
{
        char ids[32];
        unsigned long long id = submit_json("alice", "sleep 60");
        snprintf(ids, sizeof(ids), "%llu", id);
        kd_out o = kerf("cancel", ids);
        assert_ok(&o);
        assert_non_null(strstr(o.out, ids));
        kd_out_fini(&o);
        o = kerf("cancel", ids);
        kd_cli_assert_one_error(&o, 1);
        assert_non_null(strstr(o.err, "conflict"));
        kd_out_fini(&o);
        json_t *t = kd_wait_task(&K, id, "cancelled", 15000);
        assert_non_null(t);
        json_decref(t);
        o = kerf("cancel", ids);
        kd_cli_assert_one_error(&o, 1);
        kd_out_fini(&o);
}

static void test_node_views(void **st)
{
        kd_out o = kerf("gpus");
        assert_ok(&o);
        assert_true(strncmp(o.out, "GPU", 3) == 0);
        assert_non_null(strstr(o.out, "H200"));
        kd_out_fini(&o);
        o = kerf("gpus", "--json");
        assert_ok(&o);
        assert_int_equal(json_array_size(json_object_get(o.js, "items")), 8);
        kd_out_fini(&o);

        o = kerf("units");
        assert_ok(&o);
        assert_true(strncmp(o.out, "UNIT", 4) == 0);
        kd_out_fini(&o);
        o = kerf("--json", "units");
        assert_ok(&o);
        assert_true(json_is_array(json_object_get(o.js, "items")));
        kd_out_fini(&o);

        o = kerf("queue");
        assert_ok(&o);
        assert_true(strncmp(o.out, "TENANT", 6) == 0);
        kd_out_fini(&o);
        o = kerf("queue", "--json");
        assert_ok(&o);
        assert_true(json_is_array(json_object_get(o.js, "items")));
        kd_out_fini(&o);

        o = kerf("top", "--once");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "kerf top"));
        assert_non_null(strstr(o.out, "running tasks"));
        assert_null(strchr(o.out, '\033'));
        kd_out_fini(&o);
}

static void test_tenants_quota(void **st)
{
        kd_out o = kerf("tenants");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "alice"));
        assert_non_null(strstr(o.out, "bob"));
        kd_out_fini(&o);

        o = kerf("tenant", "create", "carol", "--weight", "2", "--max-priority", "5", "--workload",
                 "dev", "--workload", "batch");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "carol"));
        kd_out_fini(&o);
        /* the flags are kerf_tenant_fields': bounds checked before kerfd is asked */
        o = kerf("tenant", "create", "dora", "--max-priority", "2000");
        if (o.code != 2 || !strstr(o.err, "--max-priority: '2000' is not an integer -1000..1000"))
                fail_msg("kerf tenant create --max-priority 2000: exit %d [%s]", o.code, o.err);
        kd_out_fini(&o);
        o = kerf("tenant", "create", "dora", "--workload", "gaming");
        if (o.code != 2 || !strstr(o.err, "--workload: 'gaming'"))
                fail_msg("kerf tenant create --workload gaming: exit %d [%s]", o.code, o.err);
        kd_out_fini(&o);
        o = kerf("tenant", "patch", "carol", "--weight", "3"); /* not a PATCH field */
        if (o.code != 2 || !strstr(o.err, "unknown flag '--weight'"))
                fail_msg("kerf tenant patch --weight: exit %d [%s]", o.code, o.err);
        kd_out_fini(&o);
        o = kerf("--json", "tenant", "patch", "carol", "--max-priority", "default", "--max-tier",
                 "high", "--max-pending", "7");
        assert_ok(&o);
        assert_int_equal(json_integer_value(json_object_get(o.js, "max_priority")), 0);
        assert_string_equal(json_string_value(json_object_get(o.js, "max_tier")), "high");
        assert_int_equal(json_integer_value(json_object_get(o.js, "max_pending")), 7);
        assert_int_equal(json_array_size(json_object_get(o.js, "workloads")), 2);
        assert_int_equal(json_integer_value(json_object_get(o.js, "weight")), 2);
        kd_out_fini(&o);
        o = kerf("tenant", "patch", "carol", "--max-pending", "default");
        assert_ok(&o);
        kd_out_fini(&o);
        o = kerf("tenant", "token", "create", "carol");
        assert_ok(&o);
        char tok[256];
        assert_true(sscanf(o.out, "%255s", tok) == 1);
        assert_true(strncmp(tok, "kerf_", 5) == 0);
        kd_out_fini(&o);

        /* carol with her token submits and sees only her own tasks */
        o = kerf_tok(tok, "submit", "--name", "mine", "--", "/bin/true");
        assert_ok(&o);
        kd_out_fini(&o);
        o = kerf_tok(tok, "--json", "ls");
        assert_ok(&o);
        json_t *items = json_object_get(o.js, "items"), *t;
        size_t i;
        assert_int_equal(json_array_size(items), 1);
        json_array_foreach(items, i, t)
        {
                assert_string_equal(json_string_value(json_object_get(t, "tenant")), "carol");
        }
        kd_out_fini(&o);
        o = kerf("--json", "ls");
        assert_ok(&o);
        assert_true(json_array_size(json_object_get(o.js, "items")) > 1);
        kd_out_fini(&o);
        /* another tenant's task is "not found" for carol; admin verbs are refused */
        unsigned long long aid = submit_json("alice", "true");
        char ids[32];
        snprintf(ids, sizeof(ids), "%llu", aid);
        o = kerf_tok(tok, "show", ids);
        kd_cli_assert_one_error(&o, 4);
        kd_out_fini(&o);
        o = kerf_tok(tok, "quota", "carol", "--gpus", "5");
        kd_cli_assert_one_error(&o, 5);
        kd_out_fini(&o);
        o = kerf_tok(tok, "version");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "you are tenant carol"));
        kd_out_fini(&o);
        o = kerf_tok(tok, "tenants");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "carol"));
        assert_null(strstr(o.out, "alice"));
        kd_out_fini(&o);
        o = run_sock(NULL, "kerf_notavalidtoken", "ls", (char *)NULL);
        kd_cli_assert_one_error(&o, 5);
        kd_out_fini(&o);

        o = kerf("quota", "alice");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "alice"));
        kd_out_fini(&o);
        o = kerf("quota", "alice", "--gpus", "2", "--borrow-gpus", "1", "--memory", "64GiB");
        assert_ok(&o);
        kd_out_fini(&o);
        o = kerf("--json", "quota", "alice");
        assert_ok(&o);
        json_t *q = json_object_get(o.js, "quota");
        assert_int_equal(json_integer_value(json_object_get(json_object_get(q, "gpus"), "nominal")),
                         2);
        assert_int_equal(
            json_integer_value(json_object_get(json_object_get(q, "gpus"), "borrow_limit")), 1);
        assert_int_equal(
            json_integer_value(json_object_get(json_object_get(q, "memory"), "nominal")),
            64LL << 30);
        kd_out_fini(&o);
        o = kerf("tenants"); /* the memory quota by the one formatter: used/nominal */
        assert_ok(&o);
        if (!strstr(o.out, "/64GiB"))
                fail_msg("tenants: no /64GiB: %s", o.out);
        kd_out_fini(&o);
        o = kerf("quota", "nosuchtenant");
        kd_cli_assert_one_error(&o, 4);
        kd_out_fini(&o);
}

static void test_audit(void **st)
{
        char path[400];
        kd_out o = kerf("audit");
        assert_ok(&o);
        assert_true(strncmp(o.out, "SEQ", 3) == 0);
        assert_non_null(strstr(o.out, "task.submit"));
        kd_out_fini(&o);
        o = kerf("audit", "--json");
        assert_ok(&o);
        assert_true(json_array_size(json_object_get(o.js, "items")) > 0);
        kd_out_fini(&o);
        o = kerf("audit", "verify");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "intact"));
        kd_out_fini(&o);

        snprintf(path, sizeof(path), "%s/audit.jsonl", K.dir);
        o = kerf("audit", "export", "--out", path);
        assert_ok(&o);
        kd_out_fini(&o);
        FILE *f = fopen(path, "re");
        assert_non_null(f);
        char line[16384];
        unsigned n = 0;
        long long prev = 0;
        while (fgets(line, sizeof(line), f)) {
                json_error_t je;
                json_t *r = json_loads(line, 0, &je);
                if (!r)
                        fail_msg("audit export line %u is not JSON: %s", n + 1, je.text);
                long long seq = json_integer_value(json_object_get(r, "seq"));
                assert_true(seq > prev);
                prev = seq;
                assert_non_null(json_string_value(json_object_get(r, "hash")));
                json_decref(r);
                n++;
        }
        fclose(f);
        assert_true(n > 0);
}

static void test_help(void **st)
{
        static const char *const verbs[] = {"submit",  "run",     "ls",      "show",  "cancel",
                                            "logs",    "explain", "gpus",    "units", "tenants",
                                            "tenant",  "quota",   "queue",   "audit", "top",
                                            "version", "replay",  "suspend", "resume"};
        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
                kd_out o = kerf(verbs[i], "--help");
                if (o.code != 0 || !strstr(o.out, "usage: kerf") || o.err[0])
                        fail_msg("kerf %s --help: exit %d, stdout [%.80s], stderr [%s]", verbs[i],
                                 o.code, o.out, o.err);
                kd_out_fini(&o);
        }
        /* submit's and run's request flags are made from kerf_task_fields: bounds, defaults */
        for (int k = 0; k < 2; k++) {
                kd_out h = kerf(k ? "run" : "submit", "--help");
                if (!strstr(h.out, "  --gpus N            GPUs") ||
                    !strstr(h.out, "1..16; default 1)") ||
                    !strstr(h.out, "training | inference | dev | batch") ||
                    !strstr(h.out, "--max-runtime D") || !strstr(h.out, "at most 365d"))
                        fail_msg("kerf %s --help: [%s]", k ? "run" : "submit", h.out);
                kd_out_fini(&h);
        }
        /* kerf tenant's create and patch flags are made from kerf_tenant_fields */
        kd_out th = kerf("tenant", "--help");
        if (!strstr(th.out, "--max-priority P") || !strstr(th.out, "-1000..1000") ||
            !strstr(th.out, "--weight W") || !strstr(th.out, "1..1000; default 1") ||
            !strstr(th.out, "kerf tenant patch NAME"))
                fail_msg("kerf tenant --help: [%s]", th.out);
        kd_out_fini(&th);
        kd_out b = kerf("submit", "--gpus", "0", "--", "x");
        if (b.code != 2 || !strstr(b.err, "--gpus: '0' is not an integer 1..16"))
                fail_msg("kerf submit --gpus 0: exit %d [%s]", b.code, b.err);
        kd_out_fini(&b);
        kd_out o = kerf("--help");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "Exit codes"));
        kd_out_fini(&o);
        o = kerf("help", "ls");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "kerf ls"));
        kd_out_fini(&o);
}

/* `kerf replay` runs locally (no kerfd): a 2-node fleet and 3 pods whose placement is known. */
static void test_replay(void **st)
{
        char nodes[400], pods[400];
        FILE *f;
        snprintf(nodes, sizeof(nodes), "%s/nodes.csv", K.dir);
        snprintf(pods, sizeof(pods), "%s/pods.csv", K.dir);
        f = fopen(nodes, "we");
        assert_non_null(f);
        fputs("sn,cpu_milli,memory_mib,gpu,model\n"
              "n0,8000,65536,2,T4\n"
              "n1,8000,65536,2,T4\n",
              f);
        fclose(f);
        f = fopen(pods, "we");
        assert_non_null(f);
        fputs("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
              "p0,1000,1024,1,500\n"
              "p1,1000,1024,2,1000\n"
              "p2,1000,1024,1,1000\n",
              f);
        fclose(f);
        kd_out o = run_sock("/nonexistent/kerfd.sock", NULL, "replay", "--nodes", nodes, "--pods",
                            pods, "--policy", "all", "--json", NULL);
        assert_ok(&o);
        assert_non_null(o.js);
        json_decref(o.js);
        o.js = NULL;
        kd_out_fini(&o);
        o = run_sock("/nonexistent/kerfd.sock", NULL, "replay", "--pods", pods, NULL);
        assert_int_equal(o.code, 2);
        assert_non_null(strstr(o.err, "--nodes"));
        kd_out_fini(&o);
        o = run_sock("/nonexistent/kerfd.sock", NULL, "replay", "--nodes", pods, "--pods", pods,
                     NULL);
        assert_int_not_equal(o.code, 0);
        kd_out_fini(&o);
}

static void test_bad_command_lines(void **st)
{
        static const char *const bad[][6] = {
            {"--bogus", "ls"},
            {"nosuchverb"},
            {"ls", "--bogus"},
            {"ls", "--limit", "0"},
            {"ls", "extra"},
            {"ls", "--limit"},
            {"submit", "--gpus"},
            {"submit", "--gpus", "99", "--", "/bin/true"},
            {"submit", "--workload", "party", "--", "/bin/true"},
            {"submit", "--bogus", "--", "/bin/true"},
            {"submit", "--name", "x"},
            {"run", "--memory", "lots", "--", "/bin/true"},
            {"show"},
            {"show", "abc"},
            {"show", "1", "2"},
            {"cancel", "-5"},
            {"suspend"},
            {"resume", "x"},
            {"logs", "--bogus", "1"},
            {"explain"},
            {"gpus", "extra"},
            {"units", "--bogus"},
            {"tenant", "create", "bad name"},
            {"tenant", "frobnicate"},
            {"quota"},
            {"quota", "alice", "--gpus", "many"},
            {"quota", "alice", "--bogus", "1"},
            {"queue", "x"},
            {"audit", "--after", "x"},
            {"audit", "export", "--bogus"},
            {"top", "--interval", "0"},
            {"top", "--bogus"},
            {"version", "x"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                kd_out o = kerf(bad[i][0], bad[i][1], bad[i][2], bad[i][3], bad[i][4], bad[i][5]);
                const char *nl = strchr(o.err, '\n');
                if (o.code != 2 || strncmp(o.err, "kerf: ", 6) != 0 || !nl || nl[1])
                        fail_msg("kerf %s %s: exit %d (expected 2), stderr [%s]", bad[i][0],
                                 bad[i][1] ? bad[i][1] : "", o.code, o.err);
                assert_string_equal(o.out, "");
                kd_out_fini(&o);
        }
        kd_out o = kerf(NULL);
        assert_int_equal(o.code, 2);
        kd_out_fini(&o);
}

static void test_unreachable_and_not_found(void **st)
{
        char sock[400];
        snprintf(sock, sizeof(sock), "%s/nobody-here.sock", K.dir);
        static const char *const verbs[] = {"ls", "gpus", "version", "audit"};
        for (size_t i = 0; i < 4; i++) {
                kd_out o = run_sock(sock, NULL, verbs[i], (char *)NULL);
                kd_cli_assert_one_error(&o, 3);
                kd_out_fini(&o);
        }
        kd_out o = run_sock(sock, NULL, "run", "--", "/bin/true", (char *)NULL);
        kd_cli_assert_one_error(&o, 3);
        assert_non_null(strstr(o.err, "does not exist"));
        kd_out_fini(&o);
        /* a stale socket path that nobody listens on */
        FILE *f = fopen(sock, "w");
        assert_non_null(f);
        fclose(f);
        o = run_sock(sock, NULL, "ls", (char *)NULL);
        kd_cli_assert_one_error(&o, 3);
        assert_non_null(strstr(o.err, "nothing answers"));
        kd_out_fini(&o);

        static const char *const by_id[] = {"show", "cancel", "logs", "explain"};
        for (size_t i = 0; i < 4; i++) {
                o = kerf(by_id[i], "999999");
                kd_cli_assert_one_error(&o, 4);
                assert_non_null(strstr(o.err, "not_found"));
                kd_out_fini(&o);
        }
        o = kerf("tenant", "token", "create", "nosuchtenant");
        kd_cli_assert_one_error(&o, 4);
        kd_out_fini(&o);
}

/* kerf suspend / resume, and a slice's enforcement and usage in show, ls and top */
static void test_slice_verbs(void **st)
{
        char ids[32];
        kd_out o = kerf("--json", "submit", "--tenant", "alice", "--route", "slice", "--memory",
                        "4GiB", "--compute", "20", "--", SLICE_TASK_BIN, "0.2", "60");
        assert_ok(&o);
        unsigned long long id = (unsigned long long)json_integer_value(json_object_get(o.js, "id"));
        kd_out_fini(&o);
        json_decref(kd_wait_task(&K, id, "running", 10000));
        snprintf(ids, sizeof(ids), "%llu", id);
        o = kerf("suspend", ids);
        assert_ok(&o);
        assert_non_null(strstr(o.out, "suspended"));
        kd_out_fini(&o);
        o = kerf("show", ids);
        assert_ok(&o);
        assert_non_null(strstr(o.out, "suspended"));
        assert_non_null(strstr(o.out, "enforcement    shim"));
        assert_non_null(strstr(o.out, "memory         117.74MiB used")); /* 123456789 bytes */
        assert_non_null(strstr(o.out, "cap 4GiB"));
        assert_non_null(strstr(o.out, "compute"));
        assert_non_null(strstr(o.out, "throttling     1.500 s throttled"));
        kd_out_fini(&o);
        o = kerf("ls");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "suspended"));
        kd_out_fini(&o);
        o = kerf("top", "--once");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "slices:"));
        assert_non_null(strstr(o.out, "117.74MiB/4GiB"));
        kd_out_fini(&o);
        o = kerf("suspend", ids); /* already suspended: one error line, exit non-zero */
        assert_true(o.code != 0);
        assert_non_null(strstr(o.err, "already suspended"));
        kd_out_fini(&o);
        o = kerf("resume", ids);
        assert_ok(&o);
        assert_non_null(strstr(o.out, "running"));
        kd_out_fini(&o);
        o = kerf("cancel", ids);
        assert_ok(&o);
        kd_out_fini(&o);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_version),
            cmocka_unit_test(test_submit_show_ls),
            cmocka_unit_test(test_run_logs),
            cmocka_unit_test(test_cancel),
            cmocka_unit_test(test_slice_verbs),
            cmocka_unit_test(test_node_views),
            cmocka_unit_test(test_tenants_quota),
            cmocka_unit_test(test_audit),
            cmocka_unit_test(test_help),
            cmocka_unit_test(test_replay),
            cmocka_unit_test(test_bad_command_lines),
            cmocka_unit_test(test_unreachable_and_not_found),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
