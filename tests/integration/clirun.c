/* SPDX-License-Identifier: Apache-2.0 */
/* clirun.c - the kerf binary under test (clirun.h) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clirun.h"

#ifndef KERF_CLI
#define KERF_CLI "kerf"
#endif

void kd_out_fini(kd_out *o)
{
        free(o->out);
        free(o->err);
        json_decref(o->js);
        memset(o, 0, sizeof(*o));
}

pid_t kd_cli_spawn(kd *k, const char *tag, const char *sock, const char *token, char *const *args)
{
        char *argv[72], of[400], ef[400];
        int n = 0;
        argv[n++] = "kerf";
        if (!sock || strcmp(sock, "-")) {
                argv[n++] = "--socket";
                argv[n++] = (char *)(sock ? sock : k->sock);
        }
        if (token) {
                argv[n++] = "--token";
                argv[n++] = (char *)token;
        }
        for (int i = 0; args[i] && n < 71; i++)
                argv[n++] = args[i];
        argv[n] = NULL;
        snprintf(of, sizeof(of), "%s/%s.out", k->dir, tag);
        snprintf(ef, sizeof(ef), "%s/%s.err", k->dir, tag);
        pid_t p = fork();
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
                if (!getenv("KERF_CONFIG"))
                        setenv("KERF_CONFIG", "/nonexistent/kerf-test-config.yaml", 1);
                execv(KERF_CLI, argv);
                _exit(127);
        }
        return p;
}

int kd_cli_reap(pid_t p, unsigned ms)
{
        int st;
        for (unsigned w = 0; w <= ms; w += 10) {
                if (waitpid(p, &st, WNOHANG) == p)
                        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
                kd_sleep_ms(10);
        }
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
        return -1;
}

static char *slurp(const char *path)
{
        char *b = kd_read(path);
        b = b ? b : strdup("");
        assert_non_null(b);
        return b;
}

kd_out kd_cli_collect(kd *k, const char *tag, int code)
{
        char f[400];
        kd_out o = {.code = code};
        snprintf(f, sizeof(f), "%s/%s.out", k->dir, tag);
        o.out = slurp(f);
        snprintf(f, sizeof(f), "%s/%s.err", k->dir, tag);
        o.err = slurp(f);
        o.js = json_loads(o.out, 0, NULL);
        return o;
}

kd_out kd_cli_run(kd *k, const char *sock, const char *token, char *const *args)
{
        int code = kd_cli_reap(kd_cli_spawn(k, "cli", sock, token, args), 60000);
        if (code < 0)
                fail_msg("kerf %s did not finish within 60 s", args[0] ? args[0] : "");
        return kd_cli_collect(k, "cli", code);
}

kd_out kd_cli_runv(kd *k, const char *sock, const char *token, ...)
{
        char *args[64];
        int n = 0;
        va_list ap;
        va_start(ap, token);
        for (char *a; (a = va_arg(ap, char *)) != NULL && n < 63;)
                args[n++] = a;
        va_end(ap);
        args[n] = NULL;
        return kd_cli_run(k, sock, token, args);
}

void kd_cli_assert_code(const kd_out *o, int code)
{
        if (o->code != code)
                fail_msg("exit %d (expected %d); stderr: %s stdout: %.400s", o->code, code, o->err,
                         o->out);
}

void kd_cli_assert_one_error(const kd_out *o, int code)
{
        kd_cli_assert_code(o, code);
        const char *nl = strchr(o->err, '\n');
        if (strncmp(o->err, "kerf: ", 6) != 0 || !nl || nl[1] != 0)
                fail_msg("stderr is not one 'kerf: ...' line: [%s]", o->err);
}

unsigned long long kd_cli_submit(kd *k, const char *tenant, const char *cmd)
{
        kd_out o = kd_cli_runv(k, NULL, NULL, "--json", "submit", "--tenant", tenant, "--",
                               "/bin/sh", "-c", cmd, (char *)NULL);
        kd_cli_assert_code(&o, 0);
        assert_non_null(o.js);
        unsigned long long id = (unsigned long long)json_integer_value(json_object_get(o.js, "id"));
        assert_true(id > 0);
        assert_string_equal(json_string_value(json_object_get(o.js, "tenant")), tenant);
        assert_non_null(json_string_value(json_object_get(o.js, "state")));
        kd_out_fini(&o);
        return id;
}
