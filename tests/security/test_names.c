/* SPDX-License-Identifier: Apache-2.0 */
/* test_names.c - issue 8 S7: names are restricted to one safe set in the API and the config
 * file, and the CLI escapes whatever a server sends before it reaches the terminal */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "common.h"

static kd K;

static int setup(void **st)
{
        (void)st;
        kd_setup(&K, NULL);
        return 0;
}

static int teardown(void **st)
{
        (void)st;
        kd_stop(&K);
        kd_cleanup(&K);
        return 0;
}

static void bad(const char *path, const char *body, const char *needle)
{
        char *msg = NULL;
        long s = sec_call(&K, "POST", path, body, NULL, &msg);
        if (s != 400 || !msg || !strstr(msg, needle))
                fail_msg("%s %s: %ld \"%s\", want 400 naming %s", path, body, s, msg ? msg : "",
                         needle);
        free(msg);
}

static void test_api_refuses_control_characters(void **st)
{
        (void)st;
        bad("/v1/tasks",
            "{\"tenant\":\"alice\",\"name\":\"x\\u001b[2J\",\"command\":[\"/bin/true\"]}", "name");
        bad("/v1/tasks", "{\"tenant\":\"alice\",\"name\":\"a\\nb\",\"command\":[\"/bin/true\"]}",
            "name");
        bad("/v1/tasks",
            "{\"tenant\":\"alice\",\"name\":\"bell\\u0007\",\"command\":[\"/bin/true\"]}", "name");
        bad("/v1/tasks",
            "{\"tenant\":\"alice\",\"queue\":\"q\\u001b\",\"command\":[\"/bin/true\"]}", "queue");
        bad("/v1/tasks", "{\"tenant\":\"alice\",\"name\":\"-rf\",\"command\":[\"/bin/true\"]}",
            "name");
        bad("/v1/tenants", "{\"name\":\"evil\\u001b]0;owned\\u0007\"}", "name");
        bad("/v1/tenants", "{\"name\":\"ok\",\"cohort\":\"c\\r\"}", "cohort");
        /* the safe set still works */
        kd_submit(&K,
                  "{\"tenant\":\"alice\",\"name\":\"train-1.v2_x\",\"command\":[\"/bin/true\"]}",
                  NULL);
}

static void test_config_refuses_control_characters(void **st)
{
        char cfg[400], cmd[900], out[2048] = "";
        FILE *f, *p;
        size_t n;
        int rc;
        (void)st;
        snprintf(cfg, sizeof(cfg), "%s/names.yaml", K.dir);
        f = fopen(cfg, "w");
        assert_non_null(f);
        fprintf(f,
                "state_dir: %s/namestate\nsocket: %s/names.sock\nbackend:\n  simulated: true\n"
                "fleet: %s/examples/fleet-8xh200.yaml\ntenants:\n  - name: \"bad\\e[31m\"\n",
                K.dir, K.dir, KERF_SOURCE_DIR);
        fclose(f);
        snprintf(cmd, sizeof(cmd), "timeout 20 %s -c %s 2>&1", KERFD_BIN, cfg);
        p = popen(cmd, "r");
        assert_non_null(p);
        n = fread(out, 1, sizeof(out) - 1, p);
        out[n] = '\0';
        rc = pclose(p);
        /* the value is named with its control bytes made visible, never echoed raw */
        if (rc == 0 || !strstr(out, "name: expected") || !strstr(out, "got \"bad?[31m\"") ||
            strchr(out, '\033'))
                fail_msg("kerfd with a bad tenant name: status %d, output: %s", rc, out);
}

/* ---- a hostile server: the CLI must not pass its bytes to the terminal ----------------------
 */

#define EVIL "\\u001b]0;owned\\u0007\\u001b[2J\\r\\u009b31m"

static pid_t serve(const char *path)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        pid_t p;
        assert_true(fd >= 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        unlink(path);
        assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
        assert_int_equal(listen(fd, 8), 0);
        p = fork();
        assert_true(p >= 0);
        if (p > 0) {
                close(fd);
                return p;
        }
        for (int i = 0; i < 20; i++) {
                char req[8192], head[256], body[2048];
                ssize_t got = 0, r;
                int c = accept(fd, NULL, NULL);
                if (c < 0)
                        _exit(1);
                while (got < (ssize_t)sizeof(req) - 1 &&
                       (r = read(c, req + got, sizeof(req) - 1 - (size_t)got)) > 0) {
                        got += r;
                        req[got] = '\0';
                        if (strstr(req, "\r\n\r\n"))
                                break;
                }
                req[got > 0 ? got : 0] = '\0';
                bool list = !strncmp(req, "GET /v1/tasks?", 14);
                if (list)
                        snprintf(body, sizeof(body),
                                 "{\"items\":[{\"id\":7,\"name\":\"" EVIL "\",\"tenant\":\"" EVIL
                                 "\",\"queue\":\"default\",\"workload\":\"batch\",\"state\":"
                                 "\"pending\",\"units\":[],\"reason\":{\"code\":\"x\",\"text\":"
                                 "\"" EVIL "\"}}],\"next\":null}");
                else
                        snprintf(body, sizeof(body),
                                 "{\"error\":\"not_found\",\"message\":\"no task " EVIL "\"}");
                snprintf(head, sizeof(head),
                         "HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: "
                         "%zu\r\nConnection: close\r\n\r\n",
                         list ? "200 OK" : "404 Not Found", strlen(body));
                if (write(c, head, strlen(head)) < 0 || write(c, body, strlen(body)) < 0)
                        _exit(1);
                close(c);
        }
        _exit(0);
}

static char *run_cli(const char *sock, const char *args, bool err)
{
        char cmd[800], *out = calloc(1, 65536);
        FILE *p;
        size_t n;
        snprintf(cmd, sizeof(cmd), "%s --socket %s %s %s", KERF_CLI, sock, args,
                 err ? "2>&1 >/dev/null" : "2>/dev/null");
        p = popen(cmd, "r");
        assert_non_null(p);
        n = fread(out, 1, 65535, p);
        out[n] = '\0';
        pclose(p);
        return out;
}

static void no_controls(const char *what, const char *out)
{
        for (const unsigned char *c = (const unsigned char *)out; *c; c++)
                if ((*c < 0x20 && *c != '\n') || *c == 0x7f ||
                    (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f))
                        fail_msg("%s: control byte 0x%02x reached the terminal: %s", what, *c, out);
        if (!strstr(out, "\\x1b"))
                fail_msg("%s: the escape is not shown as \\x1b: %s", what, out);
}

static void test_cli_escapes_server_text(void **st)
{
        char sock[300], *out;
        pid_t srv;
        (void)st;
        snprintf(sock, sizeof(sock), "%s/evil.sock", K.dir);
        srv = serve(sock);
        out = run_cli(sock, "ls", false);
        if (!strstr(out, "7"))
                fail_msg("kerf ls against the fake server printed: %s", out);
        no_controls("kerf ls", out);
        free(out);
        out = run_cli(sock, "show 7", true);
        no_controls("kerf show (error)", out);
        free(out);
        kill(srv, SIGKILL);
        waitpid(srv, NULL, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_api_refuses_control_characters),
            cmocka_unit_test(test_config_refuses_control_characters),
            cmocka_unit_test(test_cli_escapes_server_text),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
