/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_more.c - the real kerf binary against a throwaway kerfd, continued from test_cli.c:
 * kerf history, the client configuration file and "did you mean", the one size and duration
 * rule on the command line (docs/UNITS.md). */
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
        kd_out o = kerf("cancel", ids[2]);
        assert_ok(&o);
        kd_out_fini(&o);
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
        kd_out_fini(&o);

        /* --state filters; CSV has a header and the exit code */
        o = kerf("history", "--state", "failed", "-o", "csv");
        assert_ok(&o);
        assert_true(strncmp(o.out, "ID,NAME,TENANT,QUEUE,STATE,END,EXIT,", 36) == 0);
        assert_non_null(strstr(o.out, ",failed,"));
        assert_null(strstr(o.out, ",succeeded,"));
        assert_null(strstr(o.out, ",cancelled,"));
        kd_out_fini(&o);
        o = kerf("history", "--state", "succeeded", "--no-headers");
        assert_ok(&o);
        assert_null(strstr(o.out, "TENANT"));
        assert_non_null(strstr(o.out, "succeeded"));
        assert_non_null(strstr(o.out, "total "));
        kd_out_fini(&o);
        /* a period before any task: nothing */
        o = kerf("history", "--since", "2020-01-01", "--until", "2020-01-02", "--json");
        assert_ok(&o);
        assert_int_equal(json_array_size(json_object_get(o.js, "items")), 0);
        kd_out_fini(&o);
        /* bob's token sees none of alice's tasks */
        o = kerf_tok(kd_token(&K, "bob"), "history", "--json");
        assert_ok(&o);
        assert_null(hist_item(json_object_get(o.js, "items"), ok));
        kd_out_fini(&o);
        /* bad command lines: one clear error, exit 2 */
        o = kerf("history", "--state", "running");
        kd_cli_assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, "succeeded, failed or cancelled"));
        kd_out_fini(&o);
        o = kerf("history", "--since", "1h", "--until", "2h");
        kd_cli_assert_one_error(&o, 2);
        kd_out_fini(&o);
        o = kerf("history", "-o", "yaml");
        kd_cli_assert_one_error(&o, 2);
        kd_out_fini(&o);
        o = kerf("history", "--since", "yesterday");
        kd_cli_assert_one_error(&o, 2);
        kd_out_fini(&o);
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
        kd_out o = run_sock("-", NULL, "ls", (char *)NULL);
        assert_ok(&o);
        assert_non_null(o.js); /* output: json */
        assert_non_null(json_object_get(o.js, "items"));
        kd_out_fini(&o);

        /* token_file: bob's token; group/other-readable is refused */
        snprintf(text, sizeof(text), "%s\n", kd_token(&K, "bob"));
        write_file(tokf, text, 0644);
        snprintf(text, sizeof(text), "socket: %s\noutput: json\ntoken_file: %s\n", K.sock, tokf);
        write_file(cfg, text, 0644);
        o = run_sock("-", NULL, "tenants", (char *)NULL);
        kd_cli_assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, ":3: token_file:"));
        assert_non_null(strstr(o.err, "0600"));
        kd_out_fini(&o);
        assert_int_equal(chmod(tokf, 0600), 0);
        o = run_sock("-", NULL, "tenants", (char *)NULL);
        assert_ok(&o);
        assert_non_null(o.js);
        assert_int_equal(json_array_size(json_object_get(o.js, "items")), 1); /* bob sees bob */
        kd_out_fini(&o);

        /* mistakes in the file: file:line:key and a suggestion */
        snprintf(text, sizeof(text), "socket: %s\nsockte: /x\n", K.sock);
        write_file(cfg, text, 0644);
        o = run_sock("-", NULL, "ls", (char *)NULL);
        kd_cli_assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, "kerf-client.yaml:2: unknown key 'sockte'"));
        assert_non_null(strstr(o.err, "did you mean 'socket'"));
        kd_out_fini(&o);
        write_file(cfg, "output: yaml\n", 0644);
        o = run_sock("-", NULL, "ls", (char *)NULL);
        kd_cli_assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, ":1: output: 'yaml': table or json"));
        kd_out_fini(&o);
        /* the command line wins over the file */
        write_file(cfg, "socket: /nonexistent/kerfd.sock\n", 0644);
        o = kerf("ls");
        assert_ok(&o);
        kd_out_fini(&o);
        unsetenv("KERF_CONFIG");

        /* did you mean; --flag=value */
        o = kerf("submit", "--memroy", "1GiB", "--", "/bin/true");
        kd_cli_assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, "unknown flag '--memroy'; did you mean '--memory'?"));
        kd_out_fini(&o);
        o = kerf("ls", "--sate=running");
        kd_cli_assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, "did you mean '--state'?"));
        kd_out_fini(&o);
        o = kerf("sumbit");
        kd_cli_assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, "did you mean 'submit'"));
        kd_out_fini(&o);
        char sockflag[400];
        snprintf(sockflag, sizeof(sockflag), "--socket=%s", K.sock);
        o = run_sock("-", NULL, sockflag, "--json", "ls", (char *)NULL);
        assert_ok(&o);
        assert_non_null(o.js);
        kd_out_fini(&o);
        o = run_sock("-", NULL, "--sockte", K.sock, "ls", (char *)NULL);
        kd_cli_assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, "did you mean '--socket'"));
        kd_out_fini(&o);
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
                kd_out o = kerf(a[0], a[1], a[2], a[3], a[4], a[5]);
                if (o.code != 2 || strcmp(o.err, bad[i].err) != 0)
                        fail_msg("kerf %s %s %s: exit %d, stderr [%s], want 2 [%s]", a[0], a[1],
                                 a[2], o.code, o.err, bad[i].err);
                assert_string_equal(o.out, "");
                kd_out_fini(&o);
        }

        kd_out o =
            kerf("--json", "submit", "--tenant", "alice", "--memory", "1.5GiB", "--max-runtime",
                 "1h30m", "--idle-timeout", "1-00:00:00", "--", "/bin/sleep", "30");
        assert_ok(&o);
        json_t *req = json_object_get(o.js, "request");
        assert_int_equal(json_integer_value(json_object_get(req, "memory")), 1536 * KERF_MIB);
        assert_int_equal(json_integer_value(json_object_get(req, "max_runtime_s")), 5400);
        assert_int_equal(json_integer_value(json_object_get(req, "idle_timeout_s")), 86400);
        char ids[32];
        snprintf(ids, sizeof(ids), "%lld",
                 (long long)json_integer_value(json_object_get(o.js, "id")));
        kd_out_fini(&o);
        o = kerf("show", ids);
        assert_ok(&o);
        if (!strstr(o.out, "requested      memory 1.5GiB, host memory -, max runtime 1h30m, "
                           "idle timeout 1d\n"))
                fail_msg("show: %s", o.out);
        kd_out_fini(&o);
        o = kerf("cancel", ids);
        assert_ok(&o);
        kd_out_fini(&o);
        o = kerf("--json", "submit", "--tenant", "alice", "--max-runtime", "90", "--idle-timeout",
                 "05:00", "--", "/bin/true");
        assert_ok(&o);
        req = json_object_get(o.js, "request");
        assert_int_equal(json_integer_value(json_object_get(req, "max_runtime_s")), 90);
        assert_int_equal(json_integer_value(json_object_get(req, "idle_timeout_s")), 300);
        kd_out_fini(&o);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_history),
            cmocka_unit_test(test_client_config),
            cmocka_unit_test(test_units_flags),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
