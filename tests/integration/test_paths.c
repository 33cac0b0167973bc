/* SPDX-License-Identifier: Apache-2.0 */
/* test_paths.c - kerfd's paths in GET /v1/health (admin only) and kerf-load staged into
 * <state>/lib from next to kerfd's binary (docs/API.md, docs/DAEMON.md "Task libraries") */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

static const char fake_load[] = "#!/bin/sh\necho fake-kerf-load \"$@\"\n";

static json_t *health(kd *k, const char *tok)
{
        long st;
        json_t *j = kd_call(k, "GET", "/v1/health", NULL, tok, &st, NULL);
        assert_int_equal(st, 200);
        assert_non_null(j);
        return j;
}

/* The admin sees where kerfd keeps its state, the staged files and the simulated node; a
 * tenant sees health but not the host's layout. */
static void test_health_paths(void **st)
{
        kd k;
        char want[600];
        json_t *h, *p;
        char *tok;
        (void)st;

        kd_setup(&k, NULL);
        h = health(&k, NULL);
        p = json_object_get(h, "paths");
        if (!json_is_object(p))
                fail_msg("admin's health has no paths object");
        snprintf(want, sizeof(want), "%s/state", k.dir);
        assert_string_equal(json_string_value(json_object_get(p, "state")), want);
        snprintf(want, sizeof(want), "%s/state/lib", k.dir);
        assert_string_equal(json_string_value(json_object_get(p, "lib")), want);
        snprintf(want, sizeof(want), "%s/state/sim", k.dir);
        /* the simulated fleet: sim names the node's state, which kerf-sim opens */
        assert_true(json_is_true(json_object_get(h, "simulated")));
        assert_string_equal(json_string_value(json_object_get(p, "sim")), want);
        snprintf(want, sizeof(want), "%s/state/sim/state", k.dir);
        assert_int_equal(access(want, F_OK), 0);
        json_decref(h);

        tok = kd_token(&k, "alice");
        h = health(&k, tok);
        assert_string_equal(json_string_value(json_object_get(h, "status")), "ok");
        assert_null(json_object_get(h, "paths"));
        json_decref(h);
        free(tok);
        kd_stop(&k);
        kd_cleanup(&k);
}

/* kerf-load next to the build's kerfd (when it was built) is staged 0755 with its content;
 * absent, nothing is staged and kerfd runs. */
static void test_build_kerf_load(void **st)
{
        char dir[PATH_MAX], *slash, src[PATH_MAX + 16], dst[600];
        struct stat sb;
        kd k;
        (void)st;

        snprintf(dir, sizeof(dir), "%s", KERFD_BIN);
        slash = strrchr(dir, '/');
        assert_non_null(slash);
        *slash = '\0';
        snprintf(src, sizeof(src), "%s/kerf-load", dir);
        kd_setup(&k, NULL);
        snprintf(dst, sizeof(dst), "%s/state/lib/kerf-load", k.dir);
        if (access(src, X_OK) == 0) {
                char *a = kd_read(src), *b = kd_read(dst);
                assert_int_equal(lstat(dst, &sb), 0);
                assert_true(S_ISREG(sb.st_mode));
                assert_int_equal(sb.st_mode & 07777, 0755);
                assert_non_null(a);
                assert_non_null(b);
                assert_int_equal(sb.st_size, lstat(src, &sb) == 0 ? sb.st_size : -1);
                free(a);
                free(b);
                printf("kerf-load built: staged as %s\n", dst);
        } else {
                assert_int_equal(lstat(dst, &sb), -1);
                printf("kerf-load not built: nothing staged\n");
        }
        kd_stop(&k);
        kd_cleanup(&k);
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
        char cmd[1400];
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
        assert_int_equal(system(cmd), 0);
        assert_int_equal(chmod(to, mode), 0);
}

/* A copy of kerfd in a bin dir of its own: with a (fake) kerf-load there it is staged 0755
 * and a task runs it from paths.lib; once removed, a restart drops the staged copy and logs
 * one line; kerfd keeps running either way. */
static void test_stage_kerf_load(void **st)
{
        char root[] = "/tmp/kerf-itbin-XXXXXX", bin[300], p[600], sup[PATH_MAX + 32];
        char kerfd[400], script[700], *s, *out, *log;
        struct stat sb;
        FILE *f;
        kd k;
        json_t *h, *t;
        unsigned long long id;
        long code;
        (void)st;

        assert_non_null(mkdtemp(root));
        snprintf(bin, sizeof(bin), "%s/bin", root);
        assert_int_equal(mkdir(bin, 0755), 0);
        snprintf(kerfd, sizeof(kerfd), "%s/kerfd", bin);
        copy_file(KERFD_BIN, kerfd, 0755);
        snprintf(sup, sizeof(sup), "%s", KERFD_BIN);
        *strrchr(sup, '/') = '\0';
        strcat(sup, "/kerf-supervise");
        snprintf(p, sizeof(p), "%s/kerf-supervise", bin);
        copy_file(sup, p, 0755);
        snprintf(p, sizeof(p), "%s/lib", root);
        assert_int_equal(symlink(KERF_LIB_DIR, p), 0);
        snprintf(p, sizeof(p), "%s/kerf-load", bin);
        f = fopen(p, "w");
        assert_non_null(f);
        fputs(fake_load, f);
        fclose(f);
        assert_int_equal(chmod(p, 0700), 0); /* staged 0755 whatever its mode here */

        kd_bin = kerfd;
        kd_setup(&k, NULL);
        h = health(&k, NULL);
        s = strdup(json_string_value(json_object_get(json_object_get(h, "paths"), "lib")));
        json_decref(h);
        snprintf(p, sizeof(p), "%s/kerf-load", s);
        assert_int_equal(lstat(p, &sb), 0);
        assert_true(S_ISREG(sb.st_mode));
        assert_int_equal(sb.st_mode & 07777, 0755);
        out = kd_read(p);
        assert_non_null(out);
        assert_string_equal(out, fake_load);
        free(out);
        /* a task runs it where health says it is */
        snprintf(script, sizeof(script),
                 "{\"tenant\": \"alice\", \"command\": [\"%s\", \"probe\"]}", p);
        id = kd_submit(&k, script, NULL);
        t = kd_wait_task(&k, id, NULL, 15000);
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "succeeded");
        json_decref(t);
        snprintf(script, sizeof(script), "/v1/tasks/%llu/logs?stream=stdout", id);
        t = kd_call(&k, "GET", script, NULL, NULL, &code, NULL);
        assert_int_equal(code, 200);
        assert_string_equal(json_string_value(json_object_get(t, "data")),
                            "fake-kerf-load probe\n");
        json_decref(t);
        kd_stop(&k);

        /* gone from next to kerfd: not staged (an old copy removed), one line, kerfd starts */
        snprintf(script, sizeof(script), "%s/kerf-load", bin);
        assert_int_equal(unlink(script), 0);
        kd_start(&k);
        assert_int_equal(lstat(p, &sb), -1);
        assert_int_equal(errno, ENOENT);
        log = kd_read(k.log);
        assert_non_null(log);
        assert_non_null(strstr(log, "kerf-load not found: not staged in"));
        free(log);
        kd_stop(&k);
        kd_bin = NULL;
        kd_cleanup(&k);
        free(s);
        snprintf(script, sizeof(script), "rm -rf '%s'", root);
        assert_int_equal(system(script), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_health_paths),
            cmocka_unit_test(test_build_kerf_load),
            cmocka_unit_test(test_stage_kerf_load),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
