/* SPDX-License-Identifier: Apache-2.0 */
/* test_metrics.c - /metrics values (docs/METRICS.md): the read-only metrics credential on the
 * API and on metrics.listen (node-wide series, 403 for everything else), the queue-wait
 * histogram, per-tenant preemption and fault counters that outlive their tasks, granted memory
 * per route, DCGM join labels, the daemon's health histograms and the store gauge */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static kd K;
static char tokdir[64], tokfile[128], token[80], fail_file[96];
static unsigned port;

/* A free loopback port (bound, read, closed: another program may take it first; unlikely). */
static unsigned free_port(void)
{
        struct sockaddr_in a = {.sin_family = AF_INET};
        socklen_t l = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        unsigned p;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_true(fd >= 0);
        assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
        assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
        p = ntohs(a.sin_port);
        close(fd);
        return p;
}

static int setup(void **st)
{
        char extra[512];
        FILE *f;
        (void)st;
        snprintf(tokdir, sizeof(tokdir), "/tmp/kerf-it-metrics-XXXXXX");
        assert_non_null(mkdtemp(tokdir));
        snprintf(tokfile, sizeof(tokfile), "%s/token", tokdir);
        snprintf(token, sizeof(token), "m3tr1cs-%d-0123456789abcdef0123456789abcdef", getpid());
        f = fopen(tokfile, "w");
        assert_non_null(f);
        fprintf(f, "%s\n", token);
        fclose(f);
        assert_int_equal(chmod(tokfile, 0600), 0);
        port = free_port();
        snprintf(fail_file, sizeof(fail_file), "%s/store-fail", tokdir);
        char hook[160];
        snprintf(hook, sizeof(hook), "*@%s", fail_file); /* every write fails while it exists */
        setenv("KERFD_TEST_STORE_FAIL", hook, 1);
        snprintf(extra, sizeof(extra), "metrics:\n  listen: 127.0.0.1:%u\n  token_file: %s\n", port,
                 tokfile);
        kd_setup(&K, extra);
        return 0;
}

static int teardown(void **st)
{
        (void)st;
        kd_stop(&K);
        kd_cleanup(&K);
        unsetenv("KERFD_TEST_STORE_FAIL");
        unlink(fail_file);
        unlink(tokfile);
        rmdir(tokdir);
        return 0;
}

/* A request to the metrics listener; returns the status, *raw the body (free()). */
static long mcall(const char *method, const char *path, const char *tok, char **raw)
{
        long status = 0;
        json_decref(kd_call_tcp(port, method, path, strcmp(method, "POST") ? NULL : "{}", tok,
                                &status, raw));
        assert_true(status != 0); /* an answer came */
        if (raw && !*raw)
                *raw = strdup("");
        return status;
}

static char *metrics(void)
{
        long s;
        char *raw = NULL;
        json_decref(kd_call(&K, "GET", "/metrics", NULL, NULL, &s, &raw));
        assert_int_equal(s, 200);
        return raw;
}

/* The value of the sample `key` (its name and labels exactly as written), -1 when absent. */
static double val(const char *raw, const char *key)
{
        size_t l = strlen(key);
        for (const char *p = raw; (p = strstr(p, key)); p += l)
                if ((p == raw || p[-1] == '\n') && p[l] == ' ')
                        return strtod(p + l + 1, NULL);
        return -1;
}

/* ---- the metrics credential ----------------------------------------------------------------- */

static void test_credential(void **st)
{
        static const char *const other[][2] = {
            {"GET", "/v1/tasks"},        {"POST", "/v1/tasks"},
            {"GET", "/v1/tasks/1"},      {"POST", "/v1/tasks/1/cancel"},
            {"GET", "/v1/health"},       {"GET", "/v1/tenants"},
            {"POST", "/v1/tenants"},     {"GET", "/v1/audit"},
            {"GET", "/v1/events"},       {"GET", "/v1/gpus"},
            {"POST", "/v1/tokens"},      {"POST", "/metrics"},
            {"GET", "/nowhere"},         {"POST", "/v1/attach"},
            {"GET", "/v1/audit/export"},
        };
        char *raw = NULL, *alice = kd_token(&K, "alice");
        long s;
        (void)st;
        kd_submit(&K, "{\"tenant\":\"alice\",\"command\":[\"/bin/sleep\",\"30\"]}", NULL);
        kd_submit(&K, "{\"tenant\":\"bob\",\"command\":[\"/bin/sleep\",\"30\"]}", NULL);
        /* over the network: node-wide series, every tenant's */
        assert_int_equal(mcall("GET", "/metrics", token, &raw), 200);
        assert_non_null(strstr(raw, "kerf_gpu_faulted{gpu=\"0\""));
        assert_non_null(strstr(raw, "kerf_build_info{version=\""));
        assert_non_null(strstr(raw, "tenant=\"alice\""));
        assert_non_null(strstr(raw, "tenant=\"bob\""));
        free(raw);
        /* no token, a wrong one, a tenant's: 401 there */
        assert_int_equal(mcall("GET", "/metrics", NULL, NULL), 401);
        assert_int_equal(
            mcall("GET", "/metrics", "m3tr1cs-wrong-0123456789abcdef0123456789ab", NULL), 401);
        assert_int_equal(mcall("GET", "/metrics", alice, NULL), 401);
        /* on the Unix socket the token reads the node-wide /metrics too */
        json_decref(kd_call(&K, "GET", "/metrics", NULL, token, &s, &raw));
        assert_int_equal(s, 200);
        assert_non_null(strstr(raw, "kerf_gpu_faulted{gpu=\"0\""));
        assert_non_null(strstr(raw, "tenant=\"bob\""));
        free(raw);
        /* and nothing else, on either listener */
        for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
                const char *body = !strcmp(other[i][0], "POST") ? "{}" : NULL;
                json_decref(kd_call(&K, other[i][0], other[i][1], body, token, &s, NULL));
                if (s != 403)
                        fail_msg("socket: %s %s with the metrics token: %ld", other[i][0],
                                 other[i][1], s);
                s = mcall(other[i][0], other[i][1], token, NULL);
                if (s != 403)
                        fail_msg("metrics.listen: %s %s: %ld", other[i][0], other[i][1], s);
        }
        /* a tenant's own /metrics stays its own */
        json_decref(kd_call(&K, "GET", "/metrics", NULL, alice, &s, &raw));
        assert_int_equal(s, 200);
        assert_null(strstr(raw, "tenant=\"bob\""));
        assert_null(strstr(raw, "kerf_gpu_faulted"));
        free(raw);
}

/* ---- queue wait, granted memory, DCGM labels ------------------------------------------------ */

static void test_queue_wait(void **st)
{
        unsigned long long big, small;
        json_t *t;
        char *raw;
        double v;
        (void)st;
        /* six whole GPUs (two of the eight are MIG) held for 2 s; then one more waits for them */
        big = kd_submit(&K,
                        "{\"tenant\":\"bob\",\"route\":\"whole\",\"gpus\":6,\"queue\":\"fast\","
                        "\"command\":[\"/bin/sleep\",\"2\"]}",
                        NULL);
        t = kd_wait_task(&K, big, "running", 10000);
        assert_non_null(t);
        json_decref(t);
        small = kd_submit(&K,
                          "{\"tenant\":\"alice\",\"route\":\"whole\",\"queue\":\"slow\","
                          "\"command\":[\"/bin/sleep\",\"30\"]}",
                          NULL);
        raw = metrics();
        assert_true(val(raw, "kerf_queue_wait_seconds_count{tenant=\"alice\",queue=\"slow\"}") < 0);
        assert_int_equal(val(raw, "kerf_tasks{tenant=\"alice\",queue=\"slow\",state=\"pending\"}"),
                         1);
        free(raw);
        t = kd_wait_task(&K, small, "running", 15000);
        assert_non_null(t);
        json_decref(t);
        raw = metrics();
        /* bob's started at once: the first bucket */
        assert_int_equal(
            val(raw, "kerf_queue_wait_seconds_bucket{tenant=\"bob\",queue=\"fast\",le=\"1\"}"), 1);
        /* alice's waited ~2 s: not in le=1, in le=15 */
        assert_int_equal(val(raw, "kerf_queue_wait_seconds_count{tenant=\"alice\",queue=\"slow\"}"),
                         1);
        assert_int_equal(
            val(raw, "kerf_queue_wait_seconds_bucket{tenant=\"alice\",queue=\"slow\",le=\"1\"}"),
            0);
        assert_int_equal(
            val(raw, "kerf_queue_wait_seconds_bucket{tenant=\"alice\",queue=\"slow\",le=\"15\"}"),
            1);
        v = val(raw, "kerf_queue_wait_seconds_sum{tenant=\"alice\",queue=\"slow\"}");
        assert_true(v >= 1.0 && v < 15.0);
        /* alice's whole GPU, granted: the GPU's memory, 100 % compute */
        v = val(raw, "kerf_tenant_memory_granted_bytes{tenant=\"alice\",route=\"whole\"}");
        assert_true(v > 100e9);
        assert_int_equal(
            val(raw, "kerf_tenant_compute_granted_percent{tenant=\"alice\",route=\"whole\"}"), 100);
        assert_int_equal(
            val(raw, "kerf_tenant_memory_granted_bytes{tenant=\"alice\",route=\"software\"}"), 0);
        assert_non_null(strstr(raw, "kerf_tenant_quota{tenant=\"alice\",resource=\"gpus\","
                                    "limit=\"nominal\"} +Inf\n"));
        /* DCGM's join labels beside kerf's own, same UUID */
        {
                const char *p = strstr(raw, "\nkerf_gpu_faulted{gpu=\"0\",uuid=\"");
                char uuid[80], want[120];
                assert_non_null(p);
                assert_int_equal(sscanf(p, "\nkerf_gpu_faulted{gpu=\"0\",uuid=\"%79[^\"]", uuid),
                                 1);
                snprintf(want, sizeof(want), "UUID=\"%s\",Hostname=\"", uuid);
                assert_non_null(strstr(p, want));
                assert_non_null(strstr(raw, "kerf_unit_memory_bytes{unit="));
                assert_non_null(
                    strstr(strstr(raw, "kerf_unit_memory_bytes{unit="), ",UUID=\"GPU-"));
        }
        assert_null(strstr(raw, "DCGM_FI_"));
        free(raw);
}

/* ---- counters that outlive their tasks ------------------------------------------------------ */

static void cancel(unsigned long long id)
{
        char path[64];
        long s;
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", id);
        json_decref(kd_call(&K, "POST", path, "{\"grace_s\":0}", NULL, &s, NULL));
        json_decref(kd_wait_task(&K, id, NULL, 15000));
}

static void test_preemptions_kept(void **st)
{
        unsigned long long ids[6], hi;
        char *raw, key[128];
        (void)st;
        for (int i = 0; i < 6; i++) {
                ids[i] = kd_submit(&K,
                                   "{\"tenant\":\"bob\",\"route\":\"whole\",\"command\":"
                                   "[\"/bin/sleep\",\"60\"]}",
                                   NULL);
                json_decref(kd_wait_task(&K, ids[i], "running", 10000));
        }
        raw = metrics();
        assert_int_equal(val(raw, "kerf_tenant_preemptions_total{tenant=\"bob\"}"), 0);
        free(raw);
        hi = kd_submit(&K,
                       "{\"tenant\":\"alice\",\"workload\":\"training\",\"tier\":\"high\","
                       "\"priority\":500,\"command\":[\"/bin/sleep\",\"60\"]}",
                       NULL);
        json_decref(kd_wait_task(&K, hi, "running", 10000));
        raw = metrics();
        assert_int_equal(val(raw, "kerf_tenant_preemptions_total{tenant=\"bob\"}"), 1);
        assert_int_equal(val(raw, "kerf_tenant_preemptions_total{tenant=\"alice\"}"), 0);
        free(raw);
        for (int i = 0; i < 6; i++)
                cancel(ids[i]);
        cancel(hi);
        raw = metrics();
        /* the tasks are gone, with their own series; the tenant's counter stays */
        for (int i = 0; i < 6; i++) {
                snprintf(key, sizeof(key), "{task=\"%llu\",", ids[i]);
                assert_null(strstr(raw, key));
        }
        assert_int_equal(val(raw, "kerf_tenant_preemptions_total{tenant=\"bob\"}"), 1);
        free(raw);
}

static void test_faults_kept(void **st)
{
        unsigned long long a;
        char path[64], args[96], *raw;
        json_t *t, *u;
        long s;
        int g;
        (void)st;
        a = kd_submit(&K,
                      "{\"tenant\":\"alice\",\"workload\":\"training\",\"command\":[\"/bin/sleep\","
                      "\"60\"]}",
                      NULL);
        json_decref(kd_wait_task(&K, a, "running", 10000));
        snprintf(path, sizeof(path), "/v1/tasks/%llu", a);
        t = kd_call(&K, "GET", path, NULL, NULL, &s, NULL);
        u = json_array_get(json_object_get(t, "units"), 0);
        assert_non_null(u);
        g = (int)json_integer_value(json_object_get(u, "gpu"));
        json_decref(t);
        snprintf(args, sizeof(args), "inject xid --gpu %d --code 31", g);
        assert_int_equal(kd_sim(&K, args, NULL, 0), 0);
        t = kd_wait_task(&K, a, "failed", 15000);
        assert_non_null(t);
        json_decref(t);
        raw = metrics();
        assert_int_equal(val(raw, "kerf_tenant_faults_total{tenant=\"alice\"}"), 1);
        assert_int_equal(val(raw, "kerf_tenant_faults_total{tenant=\"bob\"}"), 0);
        free(raw);
}

/* A slice's throttled time (1.5 s, written by it_slice_task as the shim would) stays in the
 * tenant's counter after its region is gone; the live-only sum goes back to 0. */
static void test_throttled_kept(void **st)
{
        char body[512], *raw;
        unsigned long long id;
        json_t *t;
        (void)st;
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"workload\":\"dev\",\"route\":\"slice\","
                 "\"memory\":\"4GiB\",\"command\":[\"%s\",\"1\",\"0\"]}",
                 SLICE_TASK_BIN);
        id = kd_submit(&K, body, NULL);
        t = kd_wait_task(&K, id, "succeeded", 20000);
        assert_non_null(t);
        json_decref(t);
        raw = metrics();
        assert_int_equal(val(raw, "kerf_tenant_slice_throttled_seconds_total{tenant=\"alice\"}"),
                         0);
        assert_true(val(raw, "kerf_tenant_throttled_seconds_total{tenant=\"alice\"}") == 1.5);
        assert_int_equal(val(raw, "kerf_tenant_throttled_seconds_total{tenant=\"bob\"}"), 0);
        free(raw);
}

/* ---- the daemon's health -------------------------------------------------------------------- */

static void test_health(void **st)
{
        unsigned long long id;
        char *raw;
        FILE *f;
        (void)st;
        id = kd_submit(&K, "{\"tenant\":\"alice\",\"command\":[\"/bin/sleep\",\"30\"]}", NULL);
        json_decref(kd_wait_task(&K, id, "running", 10000));
        raw = metrics();
        assert_int_equal(val(raw, "kerf_build_info{version=\"0.1.0\"}"), 1);
        assert_true(val(raw, "kerf_http_request_duration_seconds_count{code=\"2xx\"}") >= 2);
        assert_true(val(raw, "kerf_tick_duration_seconds_count") >= 1);
        assert_true(val(raw, "kerf_store_commit_duration_seconds_count") >= 2);
        assert_int_equal(val(raw, "kerf_store_writable"), 1);
        free(raw);
        /* the store fails: the gauge says so until a write succeeds again */
        f = fopen(fail_file, "w");
        assert_non_null(f);
        fclose(f);
        cancel(id);
        raw = metrics();
        assert_int_equal(val(raw, "kerf_store_writable"), 0);
        assert_true(val(raw, "kerf_store_outbox") >= 1);
        free(raw);
        unlink(fail_file);
        for (int i = 0; i < 100; i++) {
                raw = metrics();
                double w = val(raw, "kerf_store_writable");
                free(raw);
                if (w == 1)
                        return;
                kd_sleep_ms(100);
        }
        fail_msg("kerf_store_writable did not come back to 1");
}

/* ---- a token file kerfd will not use ------------------------------------------------------- */

/* Starts kerfd on a throwaway dir with metrics.token_file = a file of `mode` holding `text`;
 * returns its exit status (it must stop at start) and its log in log (free()). */
static int start_with_token(const char *text, mode_t mode, char **log)
{
        char dir[64] = "/tmp/kerf-it-mtok-XXXXXX", path[160], cmd[800];
        FILE *f;
        int st;
        assert_non_null(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/token", dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
        assert_int_equal(chmod(path, mode), 0);
        snprintf(path, sizeof(path), "%s/kerfd.yaml", dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f,
                "state_dir: %s/state\nsocket: %s/k.sock\nfleet: %s\nmetrics:\n  token_file: "
                "%s/token\n",
                dir, dir, FLEET, dir);
        fclose(f);
        snprintf(cmd, sizeof(cmd), "timeout 30 %s -c %s --simulated > %s/log 2>&1", KERFD_BIN, path,
                 dir);
        st = system(cmd);
        snprintf(path, sizeof(path), "%s/log", dir);
        *log = kd_read(path);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(system(cmd), 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_token_file_refused(void **st)
{
        char *log = NULL;
        (void)st;
        /* readable by others */
        assert_int_equal(start_with_token("0123456789abcdef0123456789abcdef\n", 0644, &log), 1);
        assert_non_null(strstr(log, "metrics.token_file"));
        assert_non_null(strstr(log, "mode 0600 or 0640"));
        free(log);
        /* too short to be a secret */
        assert_int_equal(start_with_token("short\n", 0600, &log), 1);
        assert_non_null(strstr(log, "32..255 visible ASCII"));
        free(log);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_credential, setup, teardown),
            cmocka_unit_test_setup_teardown(test_queue_wait, setup, teardown),
            cmocka_unit_test_setup_teardown(test_preemptions_kept, setup, teardown),
            cmocka_unit_test_setup_teardown(test_faults_kept, setup, teardown),
            cmocka_unit_test_setup_teardown(test_health, setup, teardown),
            cmocka_unit_test_setup_teardown(test_throttled_kept, setup, teardown),
            cmocka_unit_test(test_token_file_refused),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
