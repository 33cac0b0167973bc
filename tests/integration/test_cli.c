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

#include "harness.h"
#include "kerf/units.h"

static kd K;

typedef struct out {
        int code;   /* exit status, 128+N when killed by signal N */
        char *out;  /* stdout text (never NULL) */
        char *err;  /* stderr text (never NULL) */
        json_t *js; /* stdout parsed as JSON, or NULL */
} out;

static void out_fini(out *o)
{
        free(o->out);
        free(o->err);
        json_decref(o->js);
        memset(o, 0, sizeof(*o));
}

static char *slurp(const char *path)
{
        FILE *f = fopen(path, "re");
        char *b = NULL;
        size_t n = 0;
        if (f) {
                long len;
                fseek(f, 0, SEEK_END);
                len = ftell(f);
                fseek(f, 0, SEEK_SET);
                b = malloc((size_t)len + 1);
                if (b)
                        n = fread(b, 1, (size_t)len, f);
                fclose(f);
        }
        if (!b)
                b = malloc(1);
        assert_non_null(b);
        b[n] = 0;
        return b;
}

/* Runs `kerf --socket SOCK [--token TOKEN] ARGS...` (NULL-terminated) with a 60 s bound and
 * collects its exit status, stdout and stderr. sock NULL = the test's kerfd. */
static out run_sock(const char *sock, const char *token, ...)
{
        char *argv[64], of[400], ef[400];
        int n = 0;
        va_list ap;
        out o = {0};
        pid_t p;
        int st = 0;

        argv[n++] = "kerf";
        if (!sock || strcmp(sock, "-")) { /* "-": no --socket (the client config file's) */
                argv[n++] = "--socket";
                argv[n++] = (char *)(sock ? sock : K.sock);
        }
        if (token) {
                argv[n++] = "--token";
                argv[n++] = (char *)token;
        }
        va_start(ap, token);
        for (char *a; (a = va_arg(ap, char *)) != NULL && n < 63;)
                argv[n++] = a;
        va_end(ap);
        argv[n] = NULL;
        snprintf(of, sizeof(of), "%s/cli.out", K.dir);
        snprintf(ef, sizeof(ef), "%s/cli.err", K.dir);
        p = fork();
        assert_true(p >= 0);
        if (p == 0) {
                int fo = open(of, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                int fe = open(ef, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                int fi = open("/dev/null", O_RDONLY);
                if (fo < 0 || fe < 0 || fi < 0)
                        _exit(126);
                dup2(fi, 0);
                dup2(fo, 1);
                dup2(fe, 2);
                unsetenv("KERF_TOKEN");
                unsetenv("KERF_SOCKET");
                execv(KERF_CLI, argv);
                _exit(127);
        }
        for (int waited = 0;; waited += 10) {
                pid_t w = waitpid(p, &st, WNOHANG);
                if (w == p)
                        break;
                if (waited >= 60000) {
                        kill(p, SIGKILL);
                        waitpid(p, NULL, 0);
                        fail_msg("kerf %s did not finish within 60 s", argv[1]);
                }
                kd_sleep_ms(10);
        }
        o.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        o.out = slurp(of);
        o.err = slurp(ef);
        o.js = json_loads(o.out, 0, NULL);
        return o;
}

#define kerf(...)          run_sock(NULL, NULL, __VA_ARGS__, (char *)NULL)
#define kerf_tok(tok, ...) run_sock(NULL, tok, __VA_ARGS__, (char *)NULL)

/* The exit code must be `code` and stderr exactly one line starting "kerf: ". */
static void assert_one_error(const out *o, int code)
{
        if (o->code != code)
                fail_msg("exit %d (expected %d); stderr: %s stdout: %.300s", o->code, code, o->err,
                         o->out);
        const char *nl = strchr(o->err, '\n');
        if (strncmp(o->err, "kerf: ", 6) != 0 || !nl || nl[1] != 0)
                fail_msg("stderr is not one 'kerf: ...' line: [%s]", o->err);
}

static void assert_ok(const out *o)
{
        if (o->code != 0)
                fail_msg("exit %d; stderr: %s stdout: %.300s", o->code, o->err, o->out);
}

static unsigned long long submit_json(const char *tenant, const char *cmd)
{
        out o = kerf("--json", "submit", "--tenant", tenant, "--", "/bin/sh", "-c", cmd);
        assert_ok(&o);
        assert_non_null(o.js);
        unsigned long long id = (unsigned long long)json_integer_value(json_object_get(o.js, "id"));
        assert_true(id > 0);
        assert_string_equal(json_string_value(json_object_get(o.js, "tenant")), tenant);
        assert_non_null(json_string_value(json_object_get(o.js, "state")));
        out_fini(&o);
        return id;
}

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
        out o = kerf("version");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "kerf client"));
        assert_non_null(strstr(o.out, "kerfd"));
        assert_non_null(strstr(o.out, "simulated"));
        assert_non_null(strstr(o.out, "you are an admin"));
        out_fini(&o);
        o = kerf("version", "--json");
        assert_ok(&o);
        assert_non_null(o.js);
        assert_non_null(json_object_get(o.js, "client"));
        assert_non_null(json_object_get(json_object_get(o.js, "server"), "kerf"));
        assert_true(json_is_true(json_object_get(json_object_get(o.js, "whoami"), "admin")));
        out_fini(&o);
}

static void test_submit_show_ls(void **st)
{
        char ids[32];
        unsigned long long id = submit_json("alice", "sleep 0.2");
        snprintf(ids, sizeof(ids), "%llu", id);

        out o = kerf("submit", "--tenant", "bob", "--name", "plain", "--", "/bin/true");
        assert_ok(&o);
        assert_true(strncmp(o.out, "task ", 5) == 0);
        assert_non_null(strstr(o.out, "(plain)"));
        out_fini(&o);

        o = kerf("show", ids);
        assert_ok(&o);
        assert_non_null(strstr(o.out, "tenant"));
        assert_non_null(strstr(o.out, "alice"));
        out_fini(&o);
        o = kerf("show", ids, "--json");
        assert_ok(&o);
        assert_int_equal(json_integer_value(json_object_get(o.js, "id")), id);
        out_fini(&o);

        o = kerf("ls");
        assert_ok(&o);
        assert_true(strncmp(o.out, "ID", 2) == 0);
        assert_non_null(strstr(o.out, "alice"));
        assert_non_null(strstr(o.out, "plain"));
        out_fini(&o);
        o = kerf("--json", "ls", "--tenant", "alice");
        assert_ok(&o);
        json_t *items = json_object_get(o.js, "items"), *t;
        size_t i;
        assert_true(json_array_size(items) >= 1);
        json_array_foreach(items, i, t)
        {
                assert_string_equal(json_string_value(json_object_get(t, "tenant")), "alice");
        }
        out_fini(&o);
}

static void test_run_logs(void **st)
{
        out o = kerf("run", "--tenant", "alice", "--", "/bin/sh", "-c",
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
        out_fini(&o);

        char ids[32];
        snprintf(ids, sizeof(ids), "%llu", id);
        o = kerf("logs", ids);
        assert_ok(&o);
        assert_string_equal(o.out, "hi\n");
        out_fini(&o);
        o = kerf("logs", "--stderr", ids);
        assert_ok(&o);
        /* (a slice task's stderr may also hold the loader's word on the shim) */
        assert_true(strlen(o.err) >= 5 && !strcmp(o.err + strlen(o.err) - 5, "oops\n"));
        out_fini(&o);

        o = kerf("explain", ids);
        assert_ok(&o);
        assert_non_null(strstr(o.out, "is failed"));
        out_fini(&o);
        o = kerf("explain", "--json", ids);
        assert_ok(&o);
        assert_string_equal(json_string_value(json_object_get(o.js, "state")), "failed");
        out_fini(&o);

        /* a task that succeeds: exit 0 */
        o = kerf("run", "--tenant", "bob", "--", "/bin/true");
        assert_ok(&o);
        out_fini(&o);
}

static void test_cancel(void **st)
{
        char ids[32];
        unsigned long long id = submit_json("alice", "sleep 60");
        snprintf(ids, sizeof(ids), "%llu", id);
        out o = kerf("cancel", ids);
        assert_ok(&o);
        assert_non_null(strstr(o.out, ids));
        out_fini(&o);
        o = kerf("cancel", ids);
        assert_one_error(&o, 1);
        assert_non_null(strstr(o.err, "conflict"));
        out_fini(&o);
        json_t *t = kd_wait_task(&K, id, "cancelled", 15000);
        assert_non_null(t);
        json_decref(t);
        o = kerf("cancel", ids);
        assert_one_error(&o, 1);
        out_fini(&o);
}

static void test_node_views(void **st)
{
        out o = kerf("gpus");
        assert_ok(&o);
        assert_true(strncmp(o.out, "GPU", 3) == 0);
        assert_non_null(strstr(o.out, "H200"));
        out_fini(&o);
        o = kerf("gpus", "--json");
        assert_ok(&o);
        assert_int_equal(json_array_size(json_object_get(o.js, "items")), 8);
        out_fini(&o);

        o = kerf("units");
        assert_ok(&o);
        assert_true(strncmp(o.out, "UNIT", 4) == 0);
        out_fini(&o);
        o = kerf("--json", "units");
        assert_ok(&o);
        assert_true(json_is_array(json_object_get(o.js, "items")));
        out_fini(&o);

        o = kerf("queue");
        assert_ok(&o);
        assert_true(strncmp(o.out, "TENANT", 6) == 0);
        out_fini(&o);
        o = kerf("queue", "--json");
        assert_ok(&o);
        assert_true(json_is_array(json_object_get(o.js, "items")));
        out_fini(&o);

        o = kerf("top", "--once");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "kerf top"));
        assert_non_null(strstr(o.out, "running tasks"));
        assert_null(strchr(o.out, '\033'));
        out_fini(&o);
}

static void test_tenants_quota(void **st)
{
        out o = kerf("tenants");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "alice"));
        assert_non_null(strstr(o.out, "bob"));
        out_fini(&o);

        o = kerf("tenant", "create", "carol", "--weight", "2");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "carol"));
        out_fini(&o);
        o = kerf("tenant", "token", "create", "carol");
        assert_ok(&o);
        char tok[256];
        assert_true(sscanf(o.out, "%255s", tok) == 1);
        assert_true(strncmp(tok, "kerf_", 5) == 0);
        out_fini(&o);

        /* carol with her token submits and sees only her own tasks */
        o = kerf_tok(tok, "submit", "--name", "mine", "--", "/bin/true");
        assert_ok(&o);
        out_fini(&o);
        o = kerf_tok(tok, "--json", "ls");
        assert_ok(&o);
        json_t *items = json_object_get(o.js, "items"), *t;
        size_t i;
        assert_int_equal(json_array_size(items), 1);
        json_array_foreach(items, i, t)
        {
                assert_string_equal(json_string_value(json_object_get(t, "tenant")), "carol");
        }
        out_fini(&o);
        o = kerf("--json", "ls");
        assert_ok(&o);
        assert_true(json_array_size(json_object_get(o.js, "items")) > 1);
        out_fini(&o);
        /* another tenant's task is "not found" for carol; admin verbs are refused */
        unsigned long long aid = submit_json("alice", "true");
        char ids[32];
        snprintf(ids, sizeof(ids), "%llu", aid);
        o = kerf_tok(tok, "show", ids);
        assert_one_error(&o, 4);
        out_fini(&o);
        o = kerf_tok(tok, "quota", "carol", "--gpus", "5");
        assert_one_error(&o, 5);
        out_fini(&o);
        o = kerf_tok(tok, "version");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "you are tenant carol"));
        out_fini(&o);
        o = kerf_tok(tok, "tenants");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "carol"));
        assert_null(strstr(o.out, "alice"));
        out_fini(&o);
        o = run_sock(NULL, "kerf_notavalidtoken", "ls", (char *)NULL);
        assert_one_error(&o, 5);
        out_fini(&o);

        o = kerf("quota", "alice");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "alice"));
        out_fini(&o);
        o = kerf("quota", "alice", "--gpus", "2", "--borrow-gpus", "1", "--memory", "64GiB");
        assert_ok(&o);
        out_fini(&o);
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
        out_fini(&o);
        o = kerf("tenants"); /* the memory quota by the one formatter: used/nominal */
        assert_ok(&o);
        if (!strstr(o.out, "/64GiB"))
                fail_msg("tenants: no /64GiB: %s", o.out);
        out_fini(&o);
        o = kerf("quota", "nosuchtenant");
        assert_one_error(&o, 4);
        out_fini(&o);
}

static void test_audit(void **st)
{
        char path[400];
        out o = kerf("audit");
        assert_ok(&o);
        assert_true(strncmp(o.out, "SEQ", 3) == 0);
        assert_non_null(strstr(o.out, "task.submit"));
        out_fini(&o);
        o = kerf("audit", "--json");
        assert_ok(&o);
        assert_true(json_array_size(json_object_get(o.js, "items")) > 0);
        out_fini(&o);
        o = kerf("audit", "verify");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "intact"));
        out_fini(&o);

        snprintf(path, sizeof(path), "%s/audit.jsonl", K.dir);
        o = kerf("audit", "export", "--out", path);
        assert_ok(&o);
        out_fini(&o);
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
                out o = kerf(verbs[i], "--help");
                if (o.code != 0 || !strstr(o.out, "usage: kerf") || o.err[0])
                        fail_msg("kerf %s --help: exit %d, stdout [%.80s], stderr [%s]", verbs[i],
                                 o.code, o.out, o.err);
                out_fini(&o);
        }
        out o = kerf("--help");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "Exit codes"));
        out_fini(&o);
        o = kerf("help", "ls");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "kerf ls"));
        out_fini(&o);
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
        out o = run_sock("/nonexistent/kerfd.sock", NULL, "replay", "--nodes", nodes, "--pods",
                         pods, "--policy", "all", "--json", NULL);
        assert_ok(&o);
        assert_non_null(o.js);
        json_decref(o.js);
        o.js = NULL;
        out_fini(&o);
        o = run_sock("/nonexistent/kerfd.sock", NULL, "replay", "--pods", pods, NULL);
        assert_int_equal(o.code, 2);
        assert_non_null(strstr(o.err, "--nodes"));
        out_fini(&o);
        o = run_sock("/nonexistent/kerfd.sock", NULL, "replay", "--nodes", pods, "--pods", pods,
                     NULL);
        assert_int_not_equal(o.code, 0);
        out_fini(&o);
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
                out o = kerf(bad[i][0], bad[i][1], bad[i][2], bad[i][3], bad[i][4], bad[i][5]);
                const char *nl = strchr(o.err, '\n');
                if (o.code != 2 || strncmp(o.err, "kerf: ", 6) != 0 || !nl || nl[1])
                        fail_msg("kerf %s %s: exit %d (expected 2), stderr [%s]", bad[i][0],
                                 bad[i][1] ? bad[i][1] : "", o.code, o.err);
                assert_string_equal(o.out, "");
                out_fini(&o);
        }
        out o = kerf(NULL);
        assert_int_equal(o.code, 2);
        out_fini(&o);
}

static void test_unreachable_and_not_found(void **st)
{
        char sock[400];
        snprintf(sock, sizeof(sock), "%s/nobody-here.sock", K.dir);
        static const char *const verbs[] = {"ls", "gpus", "version", "audit"};
        for (size_t i = 0; i < 4; i++) {
                out o = run_sock(sock, NULL, verbs[i], (char *)NULL);
                assert_one_error(&o, 3);
                out_fini(&o);
        }
        out o = run_sock(sock, NULL, "run", "--", "/bin/true", (char *)NULL);
        assert_one_error(&o, 3);
        assert_non_null(strstr(o.err, "does not exist"));
        out_fini(&o);
        /* a stale socket path that nobody listens on */
        FILE *f = fopen(sock, "w");
        assert_non_null(f);
        fclose(f);
        o = run_sock(sock, NULL, "ls", (char *)NULL);
        assert_one_error(&o, 3);
        assert_non_null(strstr(o.err, "nothing answers"));
        out_fini(&o);

        static const char *const by_id[] = {"show", "cancel", "logs", "explain"};
        for (size_t i = 0; i < 4; i++) {
                o = kerf(by_id[i], "999999");
                assert_one_error(&o, 4);
                assert_non_null(strstr(o.err, "not_found"));
                out_fini(&o);
        }
        o = kerf("tenant", "token", "create", "nosuchtenant");
        assert_one_error(&o, 4);
        out_fini(&o);
}

/* kerf suspend / resume, and a slice's enforcement and usage in show, ls and top */
static void test_slice_verbs(void **st)
{
        char ids[32];
        out o = kerf("--json", "submit", "--tenant", "alice", "--route", "slice", "--memory",
                     "4GiB", "--compute", "20", "--", SLICE_TASK_BIN, "0.2", "60");
        assert_ok(&o);
        unsigned long long id = (unsigned long long)json_integer_value(json_object_get(o.js, "id"));
        out_fini(&o);
        json_decref(kd_wait_task(&K, id, "running", 10000));
        snprintf(ids, sizeof(ids), "%llu", id);
        o = kerf("suspend", ids);
        assert_ok(&o);
        assert_non_null(strstr(o.out, "suspended"));
        out_fini(&o);
        o = kerf("show", ids);
        assert_ok(&o);
        assert_non_null(strstr(o.out, "suspended"));
        assert_non_null(strstr(o.out, "enforcement    shim"));
        assert_non_null(strstr(o.out, "memory         117.74MiB used")); /* 123456789 bytes */
        assert_non_null(strstr(o.out, "cap 4GiB"));
        assert_non_null(strstr(o.out, "compute"));
        assert_non_null(strstr(o.out, "throttling     1.500 s throttled"));
        out_fini(&o);
        o = kerf("ls");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "suspended"));
        out_fini(&o);
        o = kerf("top", "--once");
        assert_ok(&o);
        assert_non_null(strstr(o.out, "slices:"));
        assert_non_null(strstr(o.out, "117.74MiB/4GiB"));
        out_fini(&o);
        o = kerf("suspend", ids); /* already suspended: one error line, exit non-zero */
        assert_true(o.code != 0);
        assert_non_null(strstr(o.err, "already suspended"));
        out_fini(&o);
        o = kerf("resume", ids);
        assert_ok(&o);
        assert_non_null(strstr(o.out, "running"));
        out_fini(&o);
        o = kerf("cancel", ids);
        assert_ok(&o);
        out_fini(&o);
}

/* kerf history: ended tasks with state, exit, times and GPU-hours; filters; CSV and JSON */
static json_t *hist_item(const json_t *items, unsigned long long id)
{
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it) if ((unsigned long long)json_integer_value(
                                                 json_object_get(it, "id")) == id) return it;
        return NULL;
}

static void test_history(void **st)
{
        char ids[3][32];
        unsigned long long ok = submit_json("alice", "exit 0");
        unsigned long long bad = submit_json("alice", "exit 3");
        unsigned long long gone = submit_json("alice", "sleep 60");
        snprintf(ids[0], 32, "%llu", ok);
        snprintf(ids[1], 32, "%llu", bad);
        snprintf(ids[2], 32, "%llu", gone);
        json_t *t = kd_wait_task(&K, gone, "running", 15000);
        assert_non_null(t);
        json_decref(t);
        out o = kerf("cancel", ids[2]);
        assert_ok(&o);
        out_fini(&o);
        for (int i = 0; i < 3; i++) {
                t = kd_wait_task(&K, i == 0 ? ok : i == 1 ? bad : gone, NULL, 15000);
                assert_non_null(t);
                json_decref(t);
        }

        o = kerf("history", "--json");
        assert_ok(&o);
        assert_non_null(o.js);
        json_t *items = json_object_get(o.js, "items");
        json_t *a = hist_item(items, ok), *b = hist_item(items, bad), *c = hist_item(items, gone);
        assert_non_null(a);
        assert_non_null(b);
        assert_non_null(c);
        assert_string_equal(json_string_value(json_object_get(a, "state")), "succeeded");
        assert_string_equal(json_string_value(json_object_get(b, "state")), "failed");
        assert_int_equal(json_integer_value(json_object_get(b, "exit_code")), 3);
        assert_string_equal(json_string_value(json_object_get(c, "state")), "cancelled");
        /* the cancelled task ran: a run, elapsed time and granted GPU-hours */
        assert_true(json_integer_value(json_object_get(c, "runs")) >= 1);
        assert_true(json_integer_value(json_object_get(c, "elapsed_ms")) >= 0);
        assert_true(json_integer_value(json_object_get(c, "ended_ms")) >=
                    json_integer_value(json_object_get(c, "submitted_ms")));
        assert_true(json_real_value(json_object_get(c, "granted_gpu_hours")) > 0);
        assert_non_null(json_object_get(o.js, "totals_by_route"));
        out_fini(&o);

        /* --state filters; CSV has a header and the exit code */
        o = kerf("history", "--state", "failed", "-o", "csv");
        assert_ok(&o);
        assert_true(strncmp(o.out, "ID,NAME,TENANT,QUEUE,STATE,END,EXIT,", 36) == 0);
        assert_non_null(strstr(o.out, ",failed,"));
        assert_null(strstr(o.out, ",succeeded,"));
        assert_null(strstr(o.out, ",cancelled,"));
        out_fini(&o);
        o = kerf("history", "--state", "succeeded", "--no-headers");
        assert_ok(&o);
        assert_null(strstr(o.out, "TENANT"));
        assert_non_null(strstr(o.out, "succeeded"));
        assert_non_null(strstr(o.out, "total "));
        out_fini(&o);
        /* a period before any task: nothing */
        o = kerf("history", "--since", "2020-01-01", "--until", "2020-01-02", "--json");
        assert_ok(&o);
        assert_int_equal(json_array_size(json_object_get(o.js, "items")), 0);
        out_fini(&o);
        /* bob's token sees none of alice's tasks */
        o = kerf_tok(kd_token(&K, "bob"), "history", "--json");
        assert_ok(&o);
        assert_null(hist_item(json_object_get(o.js, "items"), ok));
        out_fini(&o);
        /* bad command lines: one clear error, exit 2 */
        o = kerf("history", "--state", "running");
        assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, "succeeded, failed or cancelled"));
        out_fini(&o);
        o = kerf("history", "--since", "1h", "--until", "2h");
        assert_one_error(&o, 2);
        out_fini(&o);
        o = kerf("history", "-o", "yaml");
        assert_one_error(&o, 2);
        out_fini(&o);
        o = kerf("history", "--since", "yesterday");
        assert_one_error(&o, 2);
        out_fini(&o);
}

/* The client configuration file ($KERF_CONFIG): endpoint, token_file, output; its mistakes
 * named by file:line:key; "did you mean" for mistyped commands and flags; --flag=value. */
static void write_file(const char *path, const char *text, mode_t mode)
{
        FILE *f = fopen(path, "we");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
        assert_int_equal(chmod(path, mode), 0);
}

static void test_client_config(void **st)
{
        char cfg[400], tokf[400], text[1200];
        snprintf(cfg, sizeof(cfg), "%s/kerf-client.yaml", K.dir);
        snprintf(tokf, sizeof(tokf), "%s/bob.token", K.dir);
        setenv("KERF_CONFIG", cfg, 1);

        snprintf(text, sizeof(text), "socket: %s\noutput: json\n", K.sock);
        write_file(cfg, text, 0644);
        out o = run_sock("-", NULL, "ls", (char *)NULL);
        assert_ok(&o);
        assert_non_null(o.js); /* output: json */
        assert_non_null(json_object_get(o.js, "items"));
        out_fini(&o);

        /* token_file: bob's token; group/other-readable is refused */
        snprintf(text, sizeof(text), "%s\n", kd_token(&K, "bob"));
        write_file(tokf, text, 0644);
        snprintf(text, sizeof(text), "socket: %s\noutput: json\ntoken_file: %s\n", K.sock, tokf);
        write_file(cfg, text, 0644);
        o = run_sock("-", NULL, "tenants", (char *)NULL);
        assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, ":3: token_file:"));
        assert_non_null(strstr(o.err, "0600"));
        out_fini(&o);
        assert_int_equal(chmod(tokf, 0600), 0);
        o = run_sock("-", NULL, "tenants", (char *)NULL);
        assert_ok(&o);
        assert_non_null(o.js);
        assert_int_equal(json_array_size(json_object_get(o.js, "items")), 1); /* bob sees bob */
        out_fini(&o);

        /* mistakes in the file: file:line:key and a suggestion */
        snprintf(text, sizeof(text), "socket: %s\nsockte: /x\n", K.sock);
        write_file(cfg, text, 0644);
        o = run_sock("-", NULL, "ls", (char *)NULL);
        assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, "kerf-client.yaml:2: unknown key 'sockte'"));
        assert_non_null(strstr(o.err, "did you mean 'socket'"));
        out_fini(&o);
        write_file(cfg, "output: yaml\n", 0644);
        o = run_sock("-", NULL, "ls", (char *)NULL);
        assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, ":1: output: 'yaml': table or json"));
        out_fini(&o);
        /* the command line wins over the file */
        write_file(cfg, "socket: /nonexistent/kerfd.sock\n", 0644);
        o = kerf("ls");
        assert_ok(&o);
        out_fini(&o);
        unsetenv("KERF_CONFIG");

        /* did you mean; --flag=value */
        o = kerf("sumbit");
        assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, "did you mean 'submit'"));
        out_fini(&o);
        char sockflag[400];
        snprintf(sockflag, sizeof(sockflag), "--socket=%s", K.sock);
        o = run_sock("-", NULL, sockflag, "--json", "ls", (char *)NULL);
        assert_ok(&o);
        assert_non_null(o.js);
        out_fini(&o);
        o = run_sock("-", NULL, "--sockte", K.sock, "ls", (char *)NULL);
        assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, "did you mean '--socket'"));
        out_fini(&o);
}

/* The one size and duration rule (docs/UNITS.md) on the command line: a bare number is no size
 * and names the forms; durations take seconds, units and Slurm's forms; show prints them back
 * with the one formatter. */
static void test_units_flags(void **st)
{
        static const struct {
                const char *argv[6];
                const char *err; /* the whole stderr */
        } bad[] = {
            {{"submit", "--memory", "16", "--", "/bin/true"},
             "kerf: --memory: '16' has no unit: write 16GiB or 16MiB\n"},
            {{"run", "--host-memory", "16GB", "--", "/bin/true"},
             "kerf: --host-memory: '16GB' is ambiguous (powers of 1000 or of 1024?): write 16GiB "
             "(kerf's units are binary)\n"},
            {{"submit", "--memory", "2PiB", "--", "/bin/true"},
             "kerf: --memory: '2PiB' is more than 1PiB\n"},
            {{"submit", "--max-runtime", "1y", "--", "/bin/true"},
             "kerf: --max-runtime: '1y' is not a duration: write seconds (90), units d h m s in "
             "that order (90s, 15m, 1h30m, 2d) or Slurm's [D-]HH:MM:SS, MM:SS, D-HH "
             "(1-00:00:00)\n"},
            {{"submit", "--idle-timeout", "366d", "--", "/bin/true"},
             "kerf: --idle-timeout: '366d' is longer than 365d\n"},
            {{"submit", "--max-runtime", "1-24:00:00", "--", "/bin/true"},
             "kerf: --max-runtime: '1-24:00:00': minutes and seconds are 0..59, hours after 'D-' "
             "0..23 (Slurm's [D-]HH:MM:SS)\n"},
            {{"quota", "alice", "--memory", "48"},
             "kerf: --memory: '48' has no unit: write 48GiB or 48MiB\n"},
            {{"quota", "alice", "--lend-memory", "1TB"},
             "kerf: --lend-memory: '1TB' is ambiguous (powers of 1000 or of 1024?): write 1TiB "
             "(kerf's units are binary)\n"},
        };
        (void)st;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                const char *const *a = bad[i].argv;
                out o = kerf(a[0], a[1], a[2], a[3], a[4], a[5]);
                if (o.code != 2 || strcmp(o.err, bad[i].err) != 0)
                        fail_msg("kerf %s %s %s: exit %d, stderr [%s], want 2 [%s]", a[0], a[1],
                                 a[2], o.code, o.err, bad[i].err);
                assert_string_equal(o.out, "");
                out_fini(&o);
        }

        out o = kerf("--json", "submit", "--tenant", "alice", "--memory", "1.5GiB", "--max-runtime",
                     "1h30m", "--idle-timeout", "1-00:00:00", "--", "/bin/sleep", "30");
        assert_ok(&o);
        json_t *req = json_object_get(o.js, "request");
        assert_int_equal(json_integer_value(json_object_get(req, "memory")), 1536 * KERF_MIB);
        assert_int_equal(json_integer_value(json_object_get(req, "max_runtime_s")), 5400);
        assert_int_equal(json_integer_value(json_object_get(req, "idle_timeout_s")), 86400);
        char ids[32];
        snprintf(ids, sizeof(ids), "%lld",
                 (long long)json_integer_value(json_object_get(o.js, "id")));
        out_fini(&o);
        o = kerf("show", ids);
        assert_ok(&o);
        if (!strstr(o.out, "requested      memory 1.5GiB, host memory -, max runtime 1h30m, "
                           "idle timeout 1d\n"))
                fail_msg("show: %s", o.out);
        out_fini(&o);
        o = kerf("cancel", ids);
        assert_ok(&o);
        out_fini(&o);
        o = kerf("--json", "submit", "--tenant", "alice", "--max-runtime", "90", "--idle-timeout",
                 "05:00", "--", "/bin/true");
        assert_ok(&o);
        req = json_object_get(o.js, "request");
        assert_int_equal(json_integer_value(json_object_get(req, "max_runtime_s")), 90);
        assert_int_equal(json_integer_value(json_object_get(req, "idle_timeout_s")), 300);
        out_fini(&o);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_version),
            cmocka_unit_test(test_submit_show_ls),
            cmocka_unit_test(test_run_logs),
            cmocka_unit_test(test_cancel),
            cmocka_unit_test(test_history),
            cmocka_unit_test(test_client_config),
            cmocka_unit_test(test_slice_verbs),
            cmocka_unit_test(test_node_views),
            cmocka_unit_test(test_tenants_quota),
            cmocka_unit_test(test_audit),
            cmocka_unit_test(test_help),
            cmocka_unit_test(test_replay),
            cmocka_unit_test(test_bad_command_lines),
            cmocka_unit_test(test_units_flags),
            cmocka_unit_test(test_unreachable_and_not_found),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
