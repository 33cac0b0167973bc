/* SPDX-License-Identifier: Apache-2.0 */
/* test_mig.c - the MIG path end to end on the simulated fleet (kerfd is the one MIG executor:
 * src/daemon/node/migop.c, recover.c): an inference/high task gets a MIG instance created through
 * the fake NVML, sees it in CUDA_VISIBLE_DEVICES; a larger profile makes kerfd destroy the idle
 * instance and create the bigger one; instances found at start are adopted once; an instance
 * destroyed by hand is confirmed as destroyed; a create the device refuses is recorded and the
 * task waits until it can be made; a task pinned to an instance by its MIG- UUID gets that one */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static kd K;

static json_t *unit_of(unsigned long long id)
{
        char path[64];
        long s;
        json_t *t, *u;
        snprintf(path, sizeof(path), "/v1/tasks/%llu", id);
        t = kd_call(&K, "GET", path, NULL, NULL, &s, NULL);
        u = json_incref(json_array_get(json_object_get(t, "units"), 0));
        json_decref(t);
        return u;
}

/* Submits a high-tier inference task of `tenant` on MIG `profile` that sleeps `secs`. */
static unsigned long long mig_task(const char *tenant, const char *profile, int secs)
{
        char body[256];
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"%s\",\"workload\":\"inference\",\"tier\":\"high\","
                 "\"mig_profile\":\"%s\",\"command\":[\"/bin/sleep\",\"%d\"]}",
                 tenant, profile, secs);
        return kd_submit(&K, body, NULL);
}

static void test_mig_lifecycle(void **st)
{
        (void)st;
        char out[65536], *log, logp[512], mig[96], gi_s[32];
        unsigned long long a, big, big2;
        json_t *u, *units, *it, *e;
        long s;
        size_t i;
        bool listed = false;
        int gpu_a;

        kd_setup(&K, NULL);
        a = kd_submit(&K,
                      "{\"tenant\":\"alice\",\"workload\":\"inference\",\"tier\":\"high\","
                      "\"mig_profile\":\"1g.18gb\",\"command\":[\"/bin/sh\",\"-c\","
                      "\"echo VIS=$CUDA_VISIBLE_DEVICES; sleep 2\"]}",
                      NULL);
        json_decref(kd_wait_task(&K, a, "running", 15000));
        u = unit_of(a);
        assert_non_null(u);
        assert_string_equal(json_string_value(json_object_get(u, "kind")), "mig");
        snprintf(mig, sizeof(mig), "%s", json_string_value(json_object_get(u, "mig_uuid")));
        assert_memory_equal(mig, "MIG-", 4);
        gpu_a = (int)json_integer_value(json_object_get(u, "gpu"));
        snprintf(gi_s, sizeof(gi_s), "\"gi\":%d",
                 (int)json_integer_value(json_object_get(u, "mig_gi")));
        json_decref(u);
        /* /v1/units carries the MIG identity */
        units = kd_call(&K, "GET", "/v1/units", NULL, NULL, &s, NULL);
        json_array_foreach(json_object_get(units, "items"), i, it)
        {
                const char *mu = json_string_value(json_object_get(it, "mig_uuid"));
                if (mu && !strcmp(mu, mig)) {
                        listed = true;
                        assert_true(json_integer_value(json_object_get(it, "mig_gi")) >= 0);
                        assert_true(json_integer_value(json_object_get(it, "mig_ci")) >= 0);
                }
        }
        json_decref(units);
        assert_true(listed);
        /* the device has it */
        assert_int_equal(kd_sim(&K, "describe --json", out, sizeof(out)), 0);
        assert_non_null(strstr(out, mig));
        json_decref(kd_wait_task(&K, a, "succeeded", 15000));
        snprintf(logp, sizeof(logp), "%s/state/logs/%llu.out", K.dir, a);
        log = kd_read(logp);
        assert_non_null(log);
        assert_non_null(strstr(log, "VIS=MIG-"));
        assert_non_null(strstr(log, mig));
        free(log);
        /* fill the other MIG GPU, then a 7g request must reuse GPU gpu_a: destroy + create */
        big = mig_task("bob", "7g.141gb", 30);
        json_decref(kd_wait_task(&K, big, "running", 15000));
        u = unit_of(big);
        assert_int_not_equal(json_integer_value(json_object_get(u, "gpu")), gpu_a);
        json_decref(u);
        big2 = mig_task("alice", "7g.141gb", 30);
        json_decref(kd_wait_task(&K, big2, "running", 15000));
        u = unit_of(big2);
        assert_non_null(u);
        assert_int_equal(json_integer_value(json_object_get(u, "gpu")), gpu_a);
        assert_string_equal(json_string_value(json_object_get(u, "mig_profile")), "7g.141gb");
        json_decref(u);
        e = kd_event(&K, "mig_destroy", "destroyed");
        assert_non_null(e);
        json_decref(e);
        assert_int_equal(kd_sim(&K, "describe --json", out, sizeof(out)), 0);
        assert_null(strstr(out, mig)); /* the small instance is gone from the device */
        assert_non_null(strstr(out, "7g.141gb"));
        (void)gi_s;
        kd_stop(&K);
        kd_cleanup(&K);
}

/* The unit of `kind` "mig" on `gpu` with `profile` in GET /v1/units: its id (0 when none);
 * *count receives how many such units are listed. */
static unsigned long long mig_unit(int gpu, const char *profile, int *count, char *uuid, size_t cap)
{
        long s;
        size_t i;
        json_t *units = kd_call(&K, "GET", "/v1/units", NULL, NULL, &s, NULL), *it;
        unsigned long long id = 0;
        *count = 0;
        assert_int_equal(s, 200);
        json_array_foreach(json_object_get(units, "items"), i, it)
        {
                const char *k = json_string_value(json_object_get(it, "kind"));
                const char *p = json_string_value(json_object_get(it, "mig_profile"));
                if (k && !strcmp(k, "mig") && p && !strcmp(p, profile) &&
                    json_integer_value(json_object_get(it, "gpu")) == gpu) {
                        (*count)++;
                        id = (unsigned long long)json_integer_value(json_object_get(it, "id"));
                        if (uuid)
                                snprintf(uuid, cap, "%s",
                                         json_string_value(json_object_get(it, "mig_uuid")));
                }
        }
        json_decref(units);
        return id;
}

/* An instance made on the device while kerfd was down is adopted at start (unit row, MIG
 * identity), used by a task of its profile without a create, and adopted once: a second
 * restart keeps the same unit. */
static void test_mig_adopt(void **st)
{
        (void)st;
        char out[4096], uuid[96], uuid2[96];
        unsigned long long unit, unit2, a;
        int count;
        json_t *u, *e;

        kd_setup(&K, NULL);
        kd_stop(&K);
        assert_int_equal(
            kd_sim(&K, "mig create --gpu 1 --profile 2g.35gb --start 4", out, sizeof(out)), 0);
        kd_start(&K);
        unit = mig_unit(1, "2g.35gb", &count, uuid, sizeof(uuid));
        assert_int_equal(count, 1);
        assert_memory_equal(uuid, "MIG-", 4);
        /* a task of that profile runs on it: no create */
        a = mig_task("alice", "2g.35gb", 30);
        json_decref(kd_wait_task(&K, a, "running", 15000));
        u = unit_of(a);
        assert_non_null(u);
        assert_int_equal((unsigned long long)json_integer_value(json_object_get(u, "id")), unit);
        assert_string_equal(json_string_value(json_object_get(u, "mig_uuid")), uuid);
        json_decref(u);
        e = kd_event(&K, "mig_create", NULL);
        assert_null(e);
        /* adopted once: the next kerfd finds its stored unit again */
        kd_stop(&K);
        kd_start(&K);
        unit2 = mig_unit(1, "2g.35gb", &count, uuid2, sizeof(uuid2));
        assert_int_equal(count, 1);
        assert_int_equal(unit2, unit);
        assert_string_equal(uuid2, uuid);
        kd_stop(&K);
        kd_cleanup(&K);
}

/* The idle instance kerfd would destroy was destroyed by hand: the destroy is confirmed as
 * done and the larger instance is made in its place. */
static void test_mig_destroy_gone(void **st)
{
        (void)st;
        char out[4096], cmd[128];
        unsigned long long a, big, big2;
        int gpu_a, gi;
        json_t *u, *e;

        kd_setup(&K, NULL);
        a = mig_task("alice", "1g.18gb", 1);
        /* long enough to read its unit while it runs */
        json_decref(kd_wait_task(&K, a, "running", 15000));
        u = unit_of(a);
        assert_non_null(u);
        gpu_a = (int)json_integer_value(json_object_get(u, "gpu"));
        gi = (int)json_integer_value(json_object_get(u, "mig_gi"));
        json_decref(u);
        json_decref(kd_wait_task(&K, a, "succeeded", 15000));
        /* the fleet's GPUs are the simulated node's, in the same order */
        snprintf(cmd, sizeof(cmd), "mig destroy --gpu %d --gi %d", gpu_a, gi);
        assert_int_equal(kd_sim(&K, cmd, out, sizeof(out)), 0);
        /* fill the other MIG GPU; the next 7g needs gpu_a, where kerfd destroys first */
        big = mig_task("bob", "7g.141gb", 30);
        json_decref(kd_wait_task(&K, big, "running", 15000));
        big2 = mig_task("alice", "7g.141gb", 30);
        json_decref(kd_wait_task(&K, big2, "running", 15000));
        u = unit_of(big2);
        assert_non_null(u);
        assert_int_equal(json_integer_value(json_object_get(u, "gpu")), gpu_a);
        json_decref(u);
        e = kd_event(&K, "mig_destroy", "destroyed");
        assert_non_null(e);
        json_decref(e);
        e = kd_event(&K, "mig_destroy", "not destroyed");
        assert_null(e);
        kd_stop(&K);
        kd_cleanup(&K);
}

/* The device refuses kerfd's create (instances made by hand while the call waited, with the
 * test hook KERFD_TEST_SLOW_LAUNCH_MS): the refusal is recorded as a mig_create event with the
 * backend's reason, the task does not run, and it runs once the slices are free again. */
static void test_mig_refused(void **st)
{
        (void)st;
        char out[4096], cmd[128];
        unsigned long long big;
        unsigned gis[2];
        json_t *e = NULL, *t;
        long s;

        setenv("KERFD_TEST_SLOW_LAUNCH_MS", "2000", 1);
        kd_setup(&K, NULL);
        unsetenv("KERFD_TEST_SLOW_LAUNCH_MS");
        big = mig_task("alice", "7g.141gb", 30);
        /* kerfd waits 2 s before its create: both MIG GPUs get a small instance meanwhile */
        for (int g = 0; g < 2; g++) {
                snprintf(cmd, sizeof(cmd), "mig create --gpu %d --profile 1g.18gb --start 6", g);
                assert_int_equal(kd_sim(&K, cmd, out, sizeof(out)), 0);
                assert_int_equal(sscanf(out, "created GI %u", &gis[g]), 1);
        }
        for (int i = 0; i < 100 && !e; i++) {
                e = kd_event(&K, "mig_create", "refused");
                if (!e)
                        kd_sleep_ms(100);
        }
        assert_non_null(e);
        json_decref(e);
        snprintf(cmd, sizeof(cmd), "/v1/tasks/%llu", big);
        t = kd_call(&K, "GET", cmd, NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_string_not_equal(json_string_value(json_object_get(t, "state")), "running");
        json_decref(t);
        /* the slices freed: a retry is made and the task runs */
        for (int g = 0; g < 2; g++) {
                snprintf(cmd, sizeof(cmd), "mig destroy --gpu %d --gi %u", g, gis[g]);
                assert_int_equal(kd_sim(&K, cmd, out, sizeof(out)), 0);
        }
        t = kd_wait_task(&K, big, "running", 30000);
        assert_non_null(t);
        json_decref(t);
        e = kd_event(&K, "mig_create", "created");
        assert_non_null(e);
        json_decref(e);
        kd_stop(&K);
        kd_cleanup(&K);
}

/* A launcher names the instance (gpu_uuid = its MIG- UUID): the task gets exactly that one even
 * when another of the profile is free, waits while it is held, and a UUID that is not one of
 * this node's instances is refused. */
/* POST /v1/tasks: the status, the message in msg */
static long submit_status(const char *body, char *msg, size_t len)
{
        long s = 0;
        json_t *o = kd_call(&K, "POST", "/v1/tasks", body, NULL, &s, NULL);
        snprintf(msg, len, "%s", o ? json_string_value(json_object_get(o, "message")) ?: "" : "");
        json_decref(o);
        return s;
}

static void test_mig_pinned(void **st)
{
        (void)st;
        char body[512], u1[96], u2[96], msg[256];
        unsigned long long a, b, c, p;
        json_t *u, *t;
        long s;

        kd_setup(&K, NULL);
        /* two 1g instances, both left READY when their tasks end */
        a = mig_task("alice", "1g.18gb", 2);
        b = mig_task("alice", "1g.18gb", 2);
        json_decref(kd_wait_task(&K, a, "running", 15000));
        json_decref(kd_wait_task(&K, b, "running", 15000));
        u = unit_of(a);
        snprintf(u1, sizeof(u1), "%s", json_string_value(json_object_get(u, "mig_uuid")));
        json_decref(u);
        u = unit_of(b);
        snprintf(u2, sizeof(u2), "%s", json_string_value(json_object_get(u, "mig_uuid")));
        json_decref(u);
        assert_string_not_equal(u1, u2);
        json_decref(kd_wait_task(&K, a, "succeeded", 15000));
        json_decref(kd_wait_task(&K, b, "succeeded", 15000));

        /* pinned to the second: gets it (route and profile follow the instance) */
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"gpu_uuid\":\"%s\",\"command\":[\"/bin/sleep\",\"30\"]}",
                 u2);
        p = kd_submit(&K, body, NULL);
        json_decref(kd_wait_task(&K, p, "running", 15000));
        u = unit_of(p);
        assert_string_equal(json_string_value(json_object_get(u, "mig_uuid")), u2);
        assert_string_equal(json_string_value(json_object_get(u, "kind")), "mig");
        json_decref(u);
        /* the same instance again waits, though the first instance is free */
        c = kd_submit(&K, body, NULL);
        for (int i = 0;; i++) {
                char path[64];
                snprintf(path, sizeof(path), "/v1/tasks/%llu", c);
                t = kd_call(&K, "GET", path, NULL, NULL, &s, NULL);
                const char *r =
                    json_string_value(json_object_get(json_object_get(t, "reason"), "text"));
                if (r && strstr(r, "held by task")) {
                        assert_string_equal(json_string_value(json_object_get(t, "state")),
                                            "pending");
                        json_decref(t);
                        break;
                }
                json_decref(t);
                if (i > 100)
                        fail_msg("task %llu: no 'held by task' reason", c);
                kd_sleep_ms(100);
        }
        /* refused: not an instance of this node, another route, another profile */
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"gpu_uuid\":\"MIG-00000000-0000-0000-0000-00000000dead\","
                 "\"command\":[\"true\"]}");
        assert_int_equal(submit_status(body, msg, sizeof(msg)), 400);
        assert_non_null(strstr(msg, "is not a MIG instance of this node"));
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"route\":\"whole\",\"gpu_uuid\":\"%s\","
                 "\"command\":[\"true\"]}",
                 u1);
        assert_int_equal(submit_status(body, msg, sizeof(msg)), 400);
        assert_non_null(strstr(msg, "route whole"));
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"mig_profile\":\"2g.35gb\",\"gpu_uuid\":\"%s\","
                 "\"command\":[\"true\"]}",
                 u1);
        assert_int_equal(submit_status(body, msg, sizeof(msg)), 400);
        assert_non_null(strstr(msg, "not a 2g.35gb"));
        kd_stop(&K);
        kd_cleanup(&K);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_mig_lifecycle),    cmocka_unit_test(test_mig_adopt),
            cmocka_unit_test(test_mig_destroy_gone), cmocka_unit_test(test_mig_refused),
            cmocka_unit_test(test_mig_pinned),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
