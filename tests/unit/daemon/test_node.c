/* SPDX-License-Identifier: Apache-2.0 */
/* test_node.c - kerfd's node controller linked without main.c or the HTTP server (kerfd_lib):
 * a real store in a temporary state dir, the simulated fleet and backend, fencing off. Requests
 * go through kerfd_api_dispatch under n->mu as the HTTP layer calls it; what the node did is
 * read back from the store, the record that must stay true across a restart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "http.h"
#include "node.h"
#include "uidcache.h"

static kerfd_node node;
static kerfd_config cfg;
static char dir[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
        (void)st;
        (void)flag;
        (void)f;
        return remove(p);
}

static void start_node(void)
{
        char err[1024];
        memset(&node, 0, sizeof(node));
        kerfd_config_defaults(&cfg);
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/kerfd.yaml", dir);
        if (kerfd_config_load(&cfg, path, err, sizeof(err)) < 0)
                fail_msg("config: %s", err);
        if (kerfd_config_check(&cfg, err, sizeof(err)) < 0)
                fail_msg("config check: %s", err);
        /* as if started from kerfd's build directory: kerf-supervise and the simulated
         * libraries are found beside it */
        if (kerfd_node_start(&node, &cfg, KERFD_BIN_DIR) < 0)
                fail_msg("node start failed");
}

static int setup(void **st)
{
        char path[PATH_MAX];
        FILE *f;
        (void)st;
        kerfd__uidcache_init(); /* as kerfd's main: group kerf (NSS), before any thread */
        snprintf(dir, sizeof(dir), "/tmp/kerf-test-node-XXXXXX");
        if (!mkdtemp(dir) || chmod(dir, 0711) < 0) /* tasks run as the tenant's own uid */
                return -1;
        snprintf(path, sizeof(path), "%s/kerfd.yaml", dir);
        if (!(f = fopen(path, "w")))
                return -1;
        fprintf(f,
                "state_dir: %s/state\nsocket: %s/kerfd.sock\nfleet: %s/examples/fleet-8xh200.yaml\n"
                "backend:\n  simulated: true\nfencing: {mode: off}\nlimits:\n  grace_s: 1\n"
                "tenants:\n  - name: alice\n",
                dir, dir, KERF_SOURCE_DIR);
        fclose(f);
        start_node();
        return 0;
}

static int teardown(void **st)
{
        (void)st;
        kerfd_node_stop(&node);
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
        return 0;
}

/* One request as tenant alice; returns the status, the answer in *out (or NULL). */
static unsigned call(const char *method, const char *path, const char *body, json_t **out)
{
        kreq r;
        memset(&r, 0, sizeof(r));
        r.node = &node;
        r.method = method;
        snprintf(r.path, sizeof(r.path), "%s", path);
        r.has_cred = true;
        r.uid = 1000;
        snprintf(r.tenant, sizeof(r.tenant), "alice");
        snprintf(r.actor, sizeof(r.actor), "tenant:alice");
        if (body) {
                r.body = strdup(body);
                r.len = strlen(body);
        }
        pthread_mutex_lock(&node.mu);
        kerfd_api_dispatch(&r);
        pthread_mutex_unlock(&node.mu);
        if (r.render)
                r.render(&r);
        free(r.body);
        free(r.raw);
        if (out)
                *out = r.out;
        else
                json_decref(r.out);
        return r.status;
}

static uint64_t submit(const char *body)
{
        json_t *o = NULL;
        unsigned st = call("POST", "/v1/tasks", body, &o);
        if (st != 201)
                fail_msg("submit %s: %u %s", body, st,
                         o ? json_string_value(json_object_get(o, "message")) : "");
        uint64_t id = (uint64_t)json_integer_value(json_object_get(o, "id"));
        json_decref(o);
        assert_true(id > 0);
        return id;
}

/* The stored record of task id once its state is `want` (waits up to `ms`). */
static void wait_state(uint64_t id, const char *want, unsigned ms, kerf_store_task *rec)
{
        struct timespec ts = {0, 20 * 1000000};
        for (unsigned w = 0;; w += 20) {
                int r;
                kerf_store_task_init(rec);
                pthread_mutex_lock(&node.mu);
                r = kerf_store_task_get(node.store, id, rec);
                pthread_mutex_unlock(&node.mu);
                if (r == 0 && strcmp(rec->state, want) == 0)
                        return;
                if (w >= ms)
                        fail_msg("task %llu: state '%s', want '%s'", (unsigned long long)id,
                                 r == 0 ? rec->state : "(no record)", want);
                kerf_store_task_fini(rec);
                nanosleep(&ts, NULL);
        }
}

/* A task is started by the node's own ticker, runs under kerf-supervise and its end is
 * recorded with its exit code. */
static void test_lifecycle(void **st)
{
        kerf_store_task rec;
        (void)st;
        uint64_t ok = submit("{\"command\":[\"/bin/true\"],\"route\":\"whole\"}");
        uint64_t bad = submit("{\"command\":[\"/bin/sh\",\"-c\",\"exit 3\"],\"route\":\"whole\"}");
        wait_state(ok, "succeeded", 20000, &rec);
        assert_string_equal(rec.end_reason, "exit");
        assert_int_equal(rec.exit_code, 0);
        assert_true(rec.started_ms > 0 && rec.ended_ms >= rec.started_ms);
        kerf_store_task_fini(&rec);
        wait_state(bad, "failed", 20000, &rec);
        assert_string_equal(rec.end_reason, "failure");
        assert_int_equal(rec.exit_code, 3);
        kerf_store_task_fini(&rec);
}

/* The limit checker stops a task over its max runtime (after grace) and records why. */
static void test_max_runtime(void **st)
{
        kerf_store_task rec;
        (void)st;
        uint64_t id =
            submit("{\"command\":[\"/bin/sleep\",\"60\"],\"route\":\"whole\",\"max_runtime_s\":1}");
        wait_state(id, "running", 20000, &rec);
        kerf_store_task_fini(&rec);
        wait_state(id, "failed", 20000, &rec);
        assert_string_equal(rec.end_reason, "timeout");
        kerf_store_task_fini(&rec);
}

/* Bad input is refused by the node with a message and nothing is stored. */
static void test_refusal(void **st)
{
        json_t *o = NULL;
        kerf_store_task *tasks = NULL;
        size_t n0 = 0, n1 = 0;
        uint64_t next = 0;
        kerf_store_task_filter f;
        (void)st;
        memset(&f, 0, sizeof(f));
        pthread_mutex_lock(&node.mu);
        assert_int_equal(kerf_store_task_list(node.store, &f, &tasks, &n0, &next), 0);
        pthread_mutex_unlock(&node.mu);
        kerf_store_task_list_free(tasks, n0);
        assert_int_equal(call("POST", "/v1/tasks", "{\"command\":[\"x\"],\"gpus\":99}", &o), 400);
        assert_non_null(strstr(json_string_value(json_object_get(o, "message")), "gpus"));
        json_decref(o);
        pthread_mutex_lock(&node.mu);
        assert_int_equal(kerf_store_task_list(node.store, &f, &tasks, &n1, &next), 0);
        pthread_mutex_unlock(&node.mu);
        kerf_store_task_list_free(tasks, n1);
        assert_int_equal(n0, n1);
}

/* A restart of the node controller on the same state dir recovers the records as they were. */
static void test_restart(void **st)
{
        kerf_store_task rec;
        (void)st;
        uint64_t id = submit("{\"command\":[\"/bin/true\"],\"route\":\"whole\",\"name\":\"keep\"}");
        wait_state(id, "succeeded", 20000, &rec);
        kerf_store_task_fini(&rec);
        kerfd_node_stop(&node);
        start_node();
        wait_state(id, "succeeded", 0, &rec);
        assert_string_equal(rec.name, "keep");
        kerf_store_task_fini(&rec);
        /* and it still schedules */
        id = submit("{\"command\":[\"/bin/true\"],\"route\":\"whole\"}");
        wait_state(id, "succeeded", 20000, &rec);
        kerf_store_task_fini(&rec);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_lifecycle), cmocka_unit_test(test_max_runtime),
            cmocka_unit_test(test_refusal), cmocka_unit_test(test_restart)};
        return cmocka_run_group_tests(tests, setup, teardown);
}
