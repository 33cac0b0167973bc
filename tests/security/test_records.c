/* SPDX-License-Identifier: Apache-2.0 */
/* test_records.c - issue 8 S4, R3, R4 against a real kerfd: private state files whatever the
 * umask; a store write that fails at each call site (the start before the fork, a lease
 * renewal, a preemption's requeue, a MIG unit row) loses nothing, lies about nothing and
 * forks nothing unrecorded; signed audit checkpoints catch a truncated chain offline. Store
 * failures are injected with kerfd's test hook KERFD_TEST_STORE_FAIL=OP@FLAGFILE (a write of
 * OP fails while FLAGFILE exists). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static char flag[128];
static long ignored; /* kd_call status nobody looks at */

static void flag_set(bool on)
{
        if (on) {
                int fd = open(flag, O_WRONLY | O_CREAT, 0600);
                assert_true(fd >= 0);
                close(fd);
        } else {
                unlink(flag);
        }
}

/* Starts a kerfd whose writes of `op` fail while the flag file exists. */
static void setup_failing(kd *k, const char *op, const char *extra)
{
        char spec[200];

        snprintf(flag, sizeof(flag), "/tmp/kerf-sec-records-%d.flag", (int)getpid());
        unlink(flag);
        snprintf(spec, sizeof(spec), "%s@%s", op, flag);
        setenv("KERFD_TEST_STORE_FAIL", spec, 1);
        kd_setup(k, extra);
        unsetenv("KERFD_TEST_STORE_FAIL");
}

static json_t *health(kd *k)
{
        long s;
        json_t *j = kd_call(k, "GET", "/v1/health", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        return j;
}

static bool store_ok(kd *k)
{
        json_t *h = health(k);
        bool ok = !strcmp(json_string_value(json_object_get(h, "store")), "ok") &&
                  !strcmp(json_string_value(json_object_get(h, "status")), "ok") &&
                  json_integer_value(json_object_get(h, "pending_records")) == 0;
        json_decref(h);
        return ok;
}

static bool wait_store_ok(kd *k, unsigned ms)
{
        for (unsigned w = 0; w < ms; w += 50) {
                if (store_ok(k))
                        return true;
                kd_sleep_ms(50);
        }
        return false;
}

static bool durable(json_t *t)
{
        json_t *d = json_object_get(t, "durable");
        return !d || json_is_true(d);
}

static void verify_audit(kd *k)
{
        long s;
        json_t *v = kd_call(k, "POST", "/v1/audit/verify", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        if (!json_is_true(json_object_get(v, "ok")))
                fail_msg("audit chain broken: %s",
                         json_string_value(json_object_get(v, "problem")));
        json_decref(v);
}

static mode_t mode_of(const char *dir, const char *name)
{
        char p[512];
        struct stat st;

        snprintf(p, sizeof(p), "%s/state/%s", dir, name);
        if (stat(p, &st) < 0)
                fail_msg("%s: missing", p);
        return st.st_mode & 07777;
}

/* S4: the state dir pre-exists 0755 and kerfd runs under umask 022: kerf.db, -wal and -shm are
 * 0600; a database left 0644 by an older kerfd is made private at start (and logged); a state
 * dir others may write is refused. */
static void test_modes(void **st)
{
        char p[512], cmd[1200], *log;
        mode_t old;
        kd k;
        (void)st;

        kd_setup(&k, NULL);
        kd_stop(&k);
        snprintf(cmd, sizeof(cmd), "rm -f '%s'/state/kerf.db*", k.dir);
        assert_int_equal(system(cmd), 0);
        snprintf(p, sizeof(p), "%s/state", k.dir);
        assert_int_equal(chmod(p, 0755), 0);
        old = umask(022);
        kd_start(&k);
        json_decref(kd_call(&k, "POST", "/v1/tasks",
                            "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"],"
                            "\"env\":{\"SECRET\":\"hunter2\"}}",
                            NULL, &ignored, NULL));
        assert_int_equal(mode_of(k.dir, "kerf.db"), 0600);
        assert_int_equal(mode_of(k.dir, "kerf.db-wal"), 0600);
        assert_int_equal(mode_of(k.dir, "kerf.db-shm"), 0600);
        assert_int_equal(mode_of(k.dir, "audit.key"), 0600);
        kd_stop(&k);

        /* an older kerfd's world-readable files: fixed at start, and said so */
        snprintf(p, sizeof(p), "%s/state/kerf.db", k.dir);
        assert_int_equal(chmod(p, 0644), 0);
        kd_start(&k);
        assert_int_equal(mode_of(k.dir, "kerf.db"), 0600);
        log = kd_read(k.log);
        assert_non_null(log);
        assert_non_null(strstr(log, "made private"));
        free(log);
        kd_stop(&k);

        /* a state dir anyone may write to: refused, with the reason */
        snprintf(p, sizeof(p), "%s/state", k.dir);
        assert_int_equal(chmod(p, 0777), 0);
        snprintf(cmd, sizeof(cmd), "timeout 20 '%s' -c '%s' >>'%s' 2>&1", KERFD_BIN, k.cfg, k.log);
        int ws = system(cmd);
        assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) != 0 && WEXITSTATUS(ws) != 124);
        log = kd_read(k.log);
        assert_non_null(strstr(log, "writable by group or others"));
        free(log);
        assert_int_equal(chmod(p, 0755), 0);
        umask(old);
        kd_cleanup(&k);
}

/* R3 policy "no fork if the start was not recorded": the task stays pending (saying why), its
 * program does not run, new work gets 507 and /v1/health says so; once the store writes, the
 * start is retried and the task runs once. */
static void test_start_not_recorded(void **st)
{
        char marker[160], body[400];
        unsigned long long id;
        json_t *t, *h;
        long s;
        kd k;
        (void)st;

        setup_failing(&k, "task_update", NULL);
        snprintf(marker, sizeof(marker), "/tmp/kerf-sec-records-%d.ran", (int)getpid());
        unlink(marker);
        flag_set(true);
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"command\":[\"/bin/sh\",\"-c\",\"echo x >>%s\"]}", marker);
        id = kd_submit(&k, body, NULL); /* the insert works; the start's record does not */
        kd_sleep_ms(600);
        assert_int_not_equal(access(marker, F_OK), 0); /* never forked */
        t = kd_task(&k, id);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "pending");
        assert_true(json_integer_value(json_object_get(t, "pid")) == 0);
        json_decref(t);
        h = health(&k);
        assert_string_equal(json_string_value(json_object_get(h, "status")), "degraded");
        assert_non_null(strstr(json_string_value(json_object_get(h, "store")), "read-only"));
        json_decref(h);
        t = kd_call(&k, "POST", "/v1/tasks", "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"]}",
                    NULL, &s, NULL);
        assert_int_equal(s, 507);
        assert_string_equal(json_string_value(json_object_get(t, "error")), "insufficient_storage");
        json_decref(t);

        flag_set(false);
        t = kd_wait_task(&k, id, "succeeded", 10000);
        assert_non_null(t);
        json_decref(t);
        char *ran = kd_read(marker);
        assert_non_null(ran);
        assert_string_equal(ran, "x\n"); /* once */
        free(ran);
        unlink(marker);
        assert_true(wait_store_ok(&k, 5000));
        verify_audit(&k);
        kd_stop(&k);
        kd_cleanup(&k);
}

/* R2/R3 lease renewal: the renewal that cannot be written is kept (durable: false), the
 * attached task is not expired by it, and it is written once the store can. */
static void test_lease_not_recorded(void **st)
{
        char body[256], path[96];
        unsigned long long id;
        json_t *t, *h;
        long s;
        kd k;
        pid_t c;
        (void)st;

        c = fork();
        assert_true(c >= 0);
        if (c == 0) {
                for (int i = 0; i < 300; i++)
                        usleep(100000);
                _exit(0);
        }
        kd_limits = "  min_lease_s: 1\n";
        setup_failing(&k, "task_lease", NULL);
        kd_limits = NULL;
        snprintf(body, sizeof(body), "{\"tenant\":\"alice\",\"pid\":%d,\"lease_s\":2}", (int)c);
        t = kd_call(&k, "POST", "/v1/attach", body, NULL, &s, NULL);
        assert_int_equal(s, 201);
        id = (unsigned long long)json_integer_value(json_object_get(t, "id"));
        json_decref(t);
        flag_set(true);
        snprintf(path, sizeof(path), "/v1/tasks/%llu/lease", id);
        for (int i = 0; i < 5; i++) { /* 2.5 s: past the 2 s lease */
                kd_sleep_ms(500);
                t = kd_call(&k, "POST", path, NULL, NULL, &s, NULL);
                assert_int_equal(s, 200);
                assert_string_equal(json_string_value(json_object_get(t, "state")), "running");
                assert_false(durable(t));
                json_decref(t);
        }
        h = health(&k);
        assert_string_equal(json_string_value(json_object_get(h, "status")), "degraded");
        assert_true(json_integer_value(json_object_get(h, "pending_records")) >= 1);
        json_decref(h);
        flag_set(false);
        assert_true(wait_store_ok(&k, 5000));
        t = kd_task(&k, id);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "running");
        assert_true(durable(t));
        json_decref(t);
        verify_audit(&k);
        kill(c, SIGKILL);
        waitpid(c, NULL, 0);
        kd_stop(&k);
        kd_cleanup(&k);
}

/* R3 requeue: the preemption whose record cannot be written waits in order; the preemptor is
 * not started before it (no fork unrecorded); everything lands once the store writes, and a
 * restarted kerfd agrees. */
static void test_requeue_not_recorded(void **st)
{
        unsigned long long ids[6], hi;
        int preempted = -1;
        json_t *t;
        kd k;
        (void)st;

        setup_failing(&k, "unit_delete", NULL);
        for (int i = 0; i < 6; i++) {
                ids[i] = kd_submit(&k,
                                   "{\"tenant\":\"bob\",\"route\":\"whole\",\"command\":"
                                   "[\"/bin/sleep\",\"60\"]}",
                                   NULL);
                t = kd_wait_task(&k, ids[i], "running", 10000);
                assert_non_null(t);
                json_decref(t);
        }
        flag_set(true);
        hi = kd_submit(&k,
                       "{\"tenant\":\"alice\",\"workload\":\"training\",\"tier\":\"high\","
                       "\"priority\":500,\"command\":[\"/bin/sleep\",\"60\"]}",
                       NULL);
        kd_sleep_ms(800);
        for (int i = 0; i < 6; i++) {
                t = kd_task(&k, ids[i]);
                if (json_integer_value(json_object_get(t, "preemptions")) == 1) {
                        preempted = i;
                        assert_string_equal(json_string_value(json_object_get(t, "state")),
                                            "pending");
                        assert_false(durable(t)); /* the truth, said not yet written */
                }
                json_decref(t);
        }
        assert_true(preempted >= 0);
        t = kd_task(&k, hi);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "pending");
        json_decref(t);
        assert_false(store_ok(&k));

        flag_set(false);
        t = kd_wait_task(&k, hi, "running", 10000);
        assert_non_null(t);
        json_decref(t);
        assert_true(wait_store_ok(&k, 5000));
        verify_audit(&k);
        kd_stop(&k);
        kd_start(&k);
        t = kd_task(&k, ids[preempted]);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "pending");
        assert_int_equal(json_integer_value(json_object_get(t, "preemptions")), 1);
        json_decref(t);
        t = kd_wait_task(&k, hi, "running", 5000);
        assert_non_null(t);
        json_decref(t);
        verify_audit(&k);
        for (int i = 0; i < 6; i++) {
                char path[64];
                snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", ids[i]);
                json_decref(kd_call(&k, "POST", path, "{\"grace_s\":0}", NULL, &ignored, NULL));
        }
        kd_stop(&k);
        kd_cleanup(&k);
}

/* R3 MIG unit rows: a created MIG instance whose row cannot be written is kept with its event
 * and audit record in one change; its task does not start before it is recorded. */
static void test_mig_row_not_recorded(void **st)
{
        unsigned long long id;
        json_t *t, *u, *units;
        long s;
        kd k;
        bool found = false;
        char mig[96];
        (void)st;

        setup_failing(&k, "unit_upsert", NULL);
        flag_set(true);
        id = kd_submit(&k,
                       "{\"tenant\":\"alice\",\"workload\":\"inference\",\"tier\":\"high\","
                       "\"mig_profile\":\"1g.18gb\",\"command\":[\"/bin/sleep\",\"60\"]}",
                       NULL);
        kd_sleep_ms(600);
        t = kd_task(&k, id);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "pending");
        json_decref(t);
        assert_false(store_ok(&k));
        flag_set(false);
        t = kd_wait_task(&k, id, "running", 10000);
        assert_non_null(t);
        u = json_array_get(json_object_get(t, "units"), 0);
        snprintf(mig, sizeof(mig), "%s", json_string_value(json_object_get(u, "mig_uuid")));
        json_decref(t);
        assert_true(wait_store_ok(&k, 5000));
        verify_audit(&k);
        /* the row is there after a restart */
        kd_stop(&k);
        kd_start(&k);
        units = kd_call(&k, "GET", "/v1/units", NULL, NULL, &s, NULL);
        for (size_t i = 0; i < json_array_size(json_object_get(units, "items")); i++) {
                json_t *it = json_array_get(json_object_get(units, "items"), i);
                const char *mu = json_string_value(json_object_get(it, "mig_uuid"));
                if (mu && !strcmp(mu, mig))
                        found = true;
        }
        json_decref(units);
        assert_true(found);
        t = kd_call(&k, "GET", "/v1/audit?limit=1000", NULL, NULL, &s, NULL);
        bool created = false;
        for (size_t i = 0; i < json_array_size(json_object_get(t, "items")); i++)
                created |= !strcmp(json_string_value(json_object_get(
                                       json_array_get(json_object_get(t, "items"), i), "action")),
                                   "mig.create");
        json_decref(t);
        assert_true(created);
        snprintf(mig, sizeof(mig), "/v1/tasks/%llu/cancel", id);
        json_decref(kd_call(&k, "POST", mig, "{\"grace_s\":0}", NULL, &ignored, NULL));
        kd_stop(&k);
        kd_cleanup(&k);
}

/* R2: kerfd stopped while its store still cannot write: what waits is not dropped silently;
 * every waiting record is written to kerfd's log (the audit record as its JSON). */
static void test_stop_while_failing(void **st)
{
        unsigned long long id;
        char path[64], *log;
        json_t *t;
        long s;
        kd k;
        (void)st;

        setup_failing(&k, "*", NULL);
        id = kd_submit(&k, "{\"tenant\":\"alice\",\"command\":[\"/bin/sleep\",\"60\"]}", NULL);
        json_decref(kd_wait_task(&k, id, "running", 10000));
        flag_set(true);
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", id);
        json_decref(kd_call(&k, "POST", path, "{\"grace_s\":0}", NULL, &s, NULL));
        t = kd_wait_task(&k, id, "cancelled", 10000);
        assert_non_null(t);
        assert_false(durable(t));
        json_decref(t);
        kd_stop(&k);
        flag_set(false);
        log = kd_read(k.log);
        assert_non_null(log);
        assert_non_null(strstr(log, "NOT WRITTEN"));
        assert_non_null(strstr(log, "\"action\":\"task.end\""));
        free(log);
        kd_cleanup(&k);
}

/* Runs the CLI against kerfd; returns its exit status, stdout in out. */
static int cli(kd *k, char *out, size_t cap, const char *args)
{
        char cmd[2048];
        FILE *p;
        size_t n;

        snprintf(cmd, sizeof(cmd), "timeout 30 '%s' --socket '%s' %s 2>&1", KERF_CLI, k->sock,
                 args);
        p = popen(cmd, "r");
        assert_non_null(p);
        n = fread(out, 1, cap - 1, p);
        out[n] = '\0';
        int ws = pclose(p);
        return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* R4: kerf audit checkpoint, verify --against (live), verify --in (offline, no kerfd): an
 * export whose tail was cut is caught against the checkpoint; an edited one without. */
static void test_checkpoint_cli(void **st)
{
        char out[8192], args[2048], cp[400], ex[400], cut[400], pub[400];
        char *text;
        kd k;
        (void)st;

        kd_setup(&k, NULL);
        for (int i = 0; i < 3; i++)
                kd_submit(&k, "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"]}", NULL);
        kd_sleep_ms(300);
        snprintf(cp, sizeof(cp), "%s/cp.json", k.dir);
        snprintf(ex, sizeof(ex), "%s/export.jsonl", k.dir);
        snprintf(cut, sizeof(cut), "%s/cut.jsonl", k.dir);
        snprintf(pub, sizeof(pub), "%s/state/audit.pub", k.dir);
        snprintf(args, sizeof(args), "audit checkpoint --out '%s'", cp);
        assert_int_equal(cli(&k, out, sizeof(out), args), 0);
        text = kd_read(cp);
        assert_non_null(strstr(text, "\"kind\":\"kerf-audit-checkpoint\""));
        free(text);
        snprintf(args, sizeof(args), "audit verify --against '%s' --key '%s'", cp, pub);
        if (cli(&k, out, sizeof(out), args) != 0)
                fail_msg("verify --against: %s", out);
        assert_non_null(strstr(out, "intact"));
        kd_submit(&k, "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"]}", NULL);
        kd_sleep_ms(200);
        snprintf(args, sizeof(args), "audit export --out '%s'", ex);
        assert_int_equal(cli(&k, out, sizeof(out), args), 0);
        kd_stop(&k); /* offline from here */

        snprintf(args, sizeof(args), "audit verify --in '%s' --against '%s' --key '%s'", ex, cp,
                 pub);
        if (cli(&k, out, sizeof(out), args) != 0)
                fail_msg("verify --in: %s", out);
        /* the tail cut back to before the checkpoint: each line is a whole valid record, the
         * chain alone still verifies, the checkpoint does not */
        snprintf(args, sizeof(args), "head -n 2 '%s' > '%s'", ex, cut);
        assert_int_equal(system(args), 0);
        snprintf(args, sizeof(args), "audit verify --in '%s'", cut);
        assert_int_equal(cli(&k, out, sizeof(out), args), 0);
        snprintf(args, sizeof(args), "audit verify --in '%s' --against '%s'", cut, cp);
        assert_int_not_equal(cli(&k, out, sizeof(out), args), 0);
        assert_non_null(strstr(out, "truncated"));
        /* a checkpoint with an edited seq: bad signature */
        snprintf(args, sizeof(args), "sed -i 's/\"seq\":/\"seq\":1/' '%s'", cp);
        assert_int_equal(system(args), 0);
        snprintf(args, sizeof(args), "audit verify --in '%s' --against '%s'", ex, cp);
        assert_int_not_equal(cli(&k, out, sizeof(out), args), 0);
        assert_non_null(strstr(out, "signature"));
        kd_cleanup(&k);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_modes),
            cmocka_unit_test(test_start_not_recorded),
            cmocka_unit_test(test_lease_not_recorded),
            cmocka_unit_test(test_requeue_not_recorded),
            cmocka_unit_test(test_mig_row_not_recorded),
            cmocka_unit_test(test_stop_while_failing),
            cmocka_unit_test(test_checkpoint_cli),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
