/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli.c - the kerf-sim command: good and bad inputs, exit codes, one-line errors */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "kerf/errno.h"
#include "sim_test_util.h"

static char g_dir[64];
static char g_out[8192], g_err[8192];

/* Runs kerf-sim with `args` (NULL-terminated, after argv[0]) in $KERF_SIM_DIR=g_dir. */
static int run(const char *a0, ...)
{
        const char *argv[24] = {KERF_SIM_BIN};
        va_list ap;
        int n = 1;
        va_start(ap, a0);
        for (const char *a = a0; a && n < 23; a = va_arg(ap, const char *))
                argv[n++] = a;
        va_end(ap);
        argv[n] = NULL;
        char po[] = "/tmp/kerf-sim-cli-out-XXXXXX", pe[] = "/tmp/kerf-sim-cli-err-XXXXXX";
        int fo = mkstemp(po), fe = mkstemp(pe);
        pid_t c = fork();
        if (c == 0) {
                dup2(fo, 1);
                dup2(fe, 2);
                execv(argv[0], (char *const *)argv);
                _exit(127);
        }
        int ws = 0;
        waitpid(c, &ws, 0);
        memset(g_out, 0, sizeof(g_out));
        memset(g_err, 0, sizeof(g_err));
        if (pread(fo, g_out, sizeof(g_out) - 1, 0) < 0 ||
            pread(fe, g_err, sizeof(g_err) - 1, 0) < 0)
                return -1;
        close(fo);
        close(fe);
        unlink(po);
        unlink(pe);
        return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

static void assert_one_error_line(void)
{
        assert_true(strncmp(g_err, "kerf-sim: ", 10) == 0);
        char *nl = strchr(g_err, '\n');
        assert_non_null(nl);
        assert_int_equal(nl[1], '\0');
}

static int setup(void **state)
{
        (void)state;
        strcpy(g_dir, "/tmp/kerf-sim-cli-XXXXXX");
        if (!mkdtemp(g_dir))
                return -1;
        rmdir(g_dir); /* create makes it */
        setenv(KERF_SIM_ENV, g_dir, 1);
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        sim_test_rmdir(g_dir);
        return 0;
}

static void test_create_describe(void **state)
{
        (void)state;
        assert_int_equal(run("create", "--fleet", KERF_SIM_EXAMPLES "/fleet-8xh200.yaml", NULL), 0);
        assert_int_equal(run("create", "--fleet", KERF_SIM_EXAMPLES "/fleet-8xh200.yaml", NULL), 1);
        assert_one_error_line();
        assert_non_null(strstr(g_err, "already exists"));
        assert_int_equal(
            run("create", "--fleet", KERF_SIM_EXAMPLES "/fleet-8xh200.yaml", "--force", NULL), 0);
        assert_int_equal(run("describe", NULL), 0);
        assert_non_null(strstr(g_out, "simulated"));
        assert_non_null(strstr(g_out, "GPU 7"));
        assert_int_equal(run("describe", "--json", NULL), 0);
        assert_true(strncmp(g_out, "{\"simulated\":true", 17) == 0);
        assert_non_null(strstr(g_out, "\"mig_enabled\":true"));
        assert_int_equal(run("create", "--fleet", "/nonexistent.yaml", "--force", NULL), 1);
        assert_one_error_line();
        assert_int_equal(run("create", NULL), 2);
        assert_one_error_line();
}

static void test_bad_yaml(void **state)
{
        (void)state;
        char path[] = "/tmp/kerf-sim-cli-yaml-XXXXXX";
        int fd = mkstemp(path);
        const char *y = "nodes:\n  - name: n0\n    gpus:\n      - {model: NoSuchGPU, count: 1}\n";
        assert_int_equal(write(fd, y, strlen(y)), (ssize_t)strlen(y));
        close(fd);
        assert_int_equal(run("create", "--fleet", path, NULL), 1);
        assert_one_error_line();
        unlink(path);
        assert_int_equal(run("describe", NULL), 1); /* nothing was created */
        assert_one_error_line();
        assert_non_null(strstr(g_err, "kerf-sim create"));
}

static void test_mig_and_faults(void **state)
{
        (void)state;
        assert_int_equal(run("create", "--fleet", KERF_SIM_EXAMPLES "/fleet-8xh200.yaml", NULL), 0);
        assert_int_equal(
            run("mig", "create", "--gpu", "0", "--profile", "3g.71gb", "--start", "4", NULL), 0);
        assert_int_equal(
            run("mig", "create", "--gpu", "0", "--profile", "3g.71gb", "--start", "4", NULL), 1);
        assert_one_error_line();
        assert_int_equal(
            run("mig", "create", "--gpu", "0", "--profile", "3g.71gb", "--start", "2", NULL), 1);
        assert_one_error_line();
        assert_int_equal(run("mig", "create", "--gpu", "0", "--profile", "9g.1tb", NULL), 1);
        assert_one_error_line();
        assert_int_equal(run("mig", "create", "--gpu", "2", "--profile", "1g.18gb", NULL), 1);
        assert_non_null(strstr(g_err, "MIG is off"));
        assert_int_equal(run("mig", "create", "--gpu", "0", "--profile", "19", NULL), 0);
        assert_int_equal(run("describe", "--json", NULL), 0);
        assert_non_null(strstr(g_out, "\"profile\":\"3g.71gb\""));
        assert_non_null(strstr(g_out, "MIG-"));
        assert_int_equal(run("mig", "destroy", "--gpu", "0", "--gi", "9", NULL), 1);
        assert_one_error_line();
        assert_int_equal(run("mig", "destroy", "--gpu", "0", "--gi", "1", NULL), 0);
        assert_int_equal(run("inject", "xid", "--gpu", "0", "--code", "48", NULL), 0);
        assert_int_equal(run("inject", "xid", "--gpu", "0", "--gi", "2", "--code", "94", NULL), 0);
        assert_int_equal(run("inject", "xid", "--gpu", "0", "--gi", "7", "--code", "94", NULL), 1);
        assert_one_error_line();
        assert_int_equal(run("inject", "xid", "--gpu", "0", "--code", "1000", NULL), 2);
        assert_one_error_line();
        assert_int_equal(run("inject", "xid", "--gpu", "42", "--code", "13", NULL), 2);
        assert_int_equal(run("inject", "xid", "--gpu", "8", "--code", "13", NULL), 1);
        assert_one_error_line();
        assert_int_equal(run("inject", "lost", "--gpu", "3", NULL), 0);
        assert_int_equal(run("describe", NULL), 0);
        assert_non_null(strstr(g_out, "LOST"));
        assert_int_equal(run("inject", "reset", "--gpu", "3", NULL), 0);
        assert_int_equal(run("inject", "melt", "--gpu", "3", NULL), 2);
        assert_one_error_line();
        assert_int_equal(run("upgrade", "--driver", "560.35.03", "--cuda", "12.6", NULL), 0);
        assert_int_equal(run("describe", "--json", NULL), 0);
        assert_non_null(strstr(g_out, "\"driver\":\"560.35.03\",\"cuda_version\":12060"));
        assert_int_equal(run("upgrade", "--driver", "abc", NULL), 1);
        assert_one_error_line();
        assert_int_equal(run("upgrade", "--driver", "1.2", "--cuda", "x", NULL), 2);
        assert_int_equal(run("reset", NULL), 0);
        assert_int_equal(run("describe", "--json", NULL), 0);
        assert_non_null(strstr(g_out, "\"driver\":\"550.54.15\""));
        assert_null(strstr(g_out, "MIG-"));
        assert_int_equal(run("frobnicate", NULL), 2);
        assert_one_error_line();
        assert_int_equal(run("describe", "--bogus", NULL), 2);
        assert_one_error_line();
        assert_int_equal(run("--help", NULL), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_create_describe, setup, teardown),
            cmocka_unit_test_setup_teardown(test_bad_yaml, setup, teardown),
            cmocka_unit_test_setup_teardown(test_mig_and_faults, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
