/* SPDX-License-Identifier: Apache-2.0 */
/* test_config.c - `kerfd --check-config` refuses each bad config with exit 1 and "FILE:LINE:
 * what is wrong" naming the key, and accepts the shipped examples/kerfd.yaml */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

/* Runs kerfd --check-config -c path; returns its exit status, output (stdout+stderr) in out. */
static int check(const char *path, char *out, size_t cap)
{
        char cmd[1024];
        size_t n = 0;
        FILE *p;
        int st;

        snprintf(cmd, sizeof(cmd), "'%s' --check-config -c '%s' 2>&1", KERFD_BIN, path);
        p = popen(cmd, "r");
        assert_non_null(p);
        n = fread(out, 1, cap - 1, p);
        out[n] = 0;
        st = pclose(p);
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const struct bad {
        const char *yaml;
        unsigned line;
        const char *needle; /* part of the message: the key and what is wrong */
} bads[] = {
    {"state_dir: /tmp/x\nbogus: 1\n", 2, "unknown key \"bogus\""},
    {"metrics:\n  listen: 0.0.0.0:9464\n", 2, "metrics.listen needs metrics.token_file"},
    {"metrics:\n  listen: somehost:9464\n  token_file: /t\n", 2,
     "metrics.listen: expected IPV4-ADDRESS:PORT"},
    {"metrics:\n  listen: 0.0.0.0:0\n  token_file: /t\n", 2, "metrics.listen: port 1..65535"},
    {"metrics:\n  token_file: rel/tok\n", 2, "metrics.token_file: expected an absolute path"},
    {"metrics:\n  scrape: yes\n", 2, "metrics: unknown key \"scrape\" (listen, token_file)"},
    {"state_dir: /tmp/x\nstate_dir: /tmp/y\n", 2,
     "key \"state_dir\" given twice (first at line 1)"},
    {"limits:\n  tick_ms: 50\n  tick_ms: 60\n", 3, "key \"tick_ms\" given twice"},
    {"limits:\n  threads: many\n", 2, "threads: expected an integer 1..256, got \"many\""},
    {"limits:\n  threads: 0\n", 2, "threads: expected an integer 1..256"},
    {"limits:\n  thread: 4\n", 2,
     "limits: unknown key \"thread\"; did you mean threads? (max_body,"},
    {"limits:\n  min_lease_s: 2h\n", 2, "min_lease_s: 1s..1h, got \"2h\""},
    {"limits:\n  tick_ms: 2\n", 2, "tick_ms: expected an integer 5..10000"},
    {"limits:\n  max_body: 12 apples\n", 2,
     "max_body: '12 apples' is not a size: write a number and a binary unit"},
    {"limits:\n  max_body: 100B\n", 2, "max_body: 1KiB..64MiB, got \"100B\""},
    /* the one size rule (docs/UNITS.md): a bare number is no size, GB is ambiguous */
    {"limits:\n  max_body: 65536\n", 2, "max_body: '65536' has no unit"},
    {"tenants:\n  - name: a\n    quota:\n      memory: {nominal: 48}\n", 4,
     "quota.memory.nominal: '48' has no unit: write 48GiB or 48MiB"},
    {"tenants:\n  - name: a\n    quota:\n      memory:\n        nominal: 1TiB\n"
     "        borrow_limit: 2GB\n",
     6, "quota.memory.borrow_limit: '2GB' is ambiguous (powers of 1000 or of 1024?): write 2GiB"},
    {"tenants:\n  - name: a\n    quota:\n      memory: {lend: 2048PiB}\n", 4,
     "quota.memory.lend: 0B..1024PiB, got \"2048PiB\""},
    {"policy:\n  dev_default_memory: 16\n", 2,
     "dev_default_memory: '16' has no unit: write 16GiB or 16MiB"},
    {"policy:\n  dev_default_memory: 2PiB\n", 2, "dev_default_memory: 1MiB..1PiB"},
    /* durations: seconds or the one duration rule */
    {"limits:\n  grace_s: -3\n", 2, "grace_s: '-3' is not a duration: write seconds (90)"},
    {"limits:\n  grace_s: 2h\n", 2, "grace_s: 0s..1h, got \"2h\""},
    {"limits:\n  request_timeout_s: 0\n", 2, "request_timeout_s: 1s..1h, got \"0\""},
    {"limits: [1, 2]\n", 1, "limits: expected a mapping"},
    {"socket: /tmp/"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaaaa.sock\n",
     1, "socket: at most 107 characters"},
    {"state_dir: \"\"\n", 1, "state_dir: expected a path"},
    {"tenants:\n  - name: a\n  - name: b\n  - name: a\n", 4, "tenant \"a\" defined twice"},
    {"tenants:\n  - name: a b\n", 2, "name: expected 1..63 characters"},
    {"tenants:\n  - name: a\n    cohort: \"x/y\"\n", 3,
     "cohort: expected 1..63 characters [A-Za-z0-9_.-], not starting with '-' or '.', got "
     "\"x/y\""},
    {"tenants:\n  - name: a\n    uid: 2147483647\n", 3, "uid: expected an integer 0..2147483646"},
    {"tenants:\n  - name: a\n    gid: -1\n", 3,
     "gid: expected an integer 0..2147483646, got \"-1\""},
    {"tenants:\n  - name: a\n    weight: 0\n", 3, "weight: expected an integer 1..1000"},
    {"tenants:\n  - cohort: lab\n", 2, "tenant: name is required"},
    {"tenants:\n  - name: a\n    colour: red\n", 3, "tenant: colour: unknown field (name, cohort"},
    /* every tenant key by its descriptor (kerf_tenant_fields): bounds, values, typos */
    {"tenants:\n  - name: a\n    max_prio: 5\n", 3,
     "tenant: max_prio: unknown field (did you mean max_priority?)"},
    {"tenants:\n  - name: a\n    max_priority: 1001\n", 3,
     "max_priority: expected an integer -1000..1000, got \"1001\""},
    {"tenants:\n  - name: a\n    max_priority: -1001\n", 3,
     "max_priority: expected an integer -1000..1000, got \"-1001\""},
    {"tenants:\n  - name: a\n    max_tier: urgent\n", 3,
     "max_tier: expected one of high, queueable, exploratory, got \"urgent\""},
    {"tenants:\n  - name: a\n    max_pending: 10000001\n", 3,
     "max_pending: expected an integer 0..10000000"},
    {"tenants:\n  - name: a\n    workloads: [dev, gaming]\n", 3,
     "workloads: expected a list of at least 1 of training, inference, dev, batch, got "
     "\"gaming\""},
    {"tenants:\n  - name: a\n    workloads: []\n", 3, "workloads: expected a list of at least 1"},
    {"tenants:\n  - name: a\n    uid_base: 70000\n", 3,
     "tenant: uid_base: only accepted by kerfd's config file (tenant_defaults)"},
    {"tenant_defaults:\n  weight: 2\n", 2, "tenant_defaults: weight: only accepted by"},
    {"tenant_defaults:\n  max_priority: 2000\n", 2,
     "max_priority: expected an integer -1000..1000, got \"2000\""},
    {"tenant_defaults:\n  uid_span: 0\n", 2, "uid_span: expected an integer 1..1073741824"},
    {"tenants:\n  - name: a\n    quota:\n      gpus: {nominal: 2000000}\n", 4,
     "nominal: expected an integer 0..1048576"},
    {"tenants:\n  - name: a\n    quota:\n      memory: {nominal: 2, nominal: 3}\n", 4,
     "key \"nominal\" given twice"},
    {"tenants:\n  - name: a\n    quota:\n      memory: {nominal: 1GiB}\n      mem: {lend: 1}\n", 5,
     "quota: mem given twice"},
    {"tenants:\n  - name: a\n    quota:\n      disks: {nominal: 1}\n", 4,
     "quota: unknown resource \"disks\""},
    {"policy:\n  routes:\n    inference:\n      high: [mig, gpu]\n", 4, "unknown route \"gpu\""},
    {"policy:\n  routes:\n    inference:\n      high:\n        - mig\n        - slice\n        - "
     "mig\n",
     7, "route \"mig\" given twice"},
    {"policy:\n  routes:\n    inference:\n      high: []\n", 4, "at least one route"},
    {"policy:\n  routes:\n    gaming:\n      high: [mig]\n", 3, "unknown workload \"gaming\""},
    {"policy:\n  placement: random\n", 2,
     "policy.placement: one of kerf, bestfit, firstfit, got \"random\""},
    {"policy:\n  preemption: maybe\n", 2, "preemption: expected true or false"},
    {"policy:\n  unenforced_slices: yes\n", 2,
     "policy.unenforced_slices: one of refuse, allow, got \"yes\""},
    {"policy:\n  preempt_slices_by: pause\n", 2, "policy.preempt_slices_by: one of kill, suspend"},
    {"policy:\n  shim_bypass: ignore\n", 2, "policy.shim_bypass: one of record, stop"},
    {"policy:\n  preemptoin: true\n", 2,
     "policy: unknown key \"preemptoin\"; did you mean preemption?"},
    {"backend:\n  simulate: true\n", 2,
     "backend: unknown key \"simulate\"; did you mean simulated?"},
    {"backend:\n  nvml_library: \"\"\n", 2,
     "backend.nvml_library: expected a value, got an empty one"},
    /* queues: (docs/DAEMON.md "Queues") */
    {"queues:\n  - name: q\n    mode: fifo\n", 3,
     "queue mode: strict or best-effort, got \"fifo\""},
    {"queues:\n  - name: q\n    backfill: sometimes\n", 3,
     "queue backfill: expected true or false"},
    {"queues:\n  - name: q\n    mode: best-effort\n    starvation_s: 0\n", 4,
     "queue starvation_s: 1s..365d, got \"0\""},
    {"queues:\n  - name: q\n    starvation_s: 60\n", 3,
     "queue \"q\": starvation_s applies to best-effort queues only"},
    {"queues:\n  - mode: strict\n", 2, "queue: name is required"},
    {"queues:\n  - name: q\n  - name: q\n", 3, "queue \"q\" defined twice"},
    {"queues:\n  - name: \"a b\"\n", 2, "queue name \"a b\""},
    {"queues:\n  - name: q\n    depth: 3\n", 3, "queue: unknown key \"depth\""},
    {"queues: strict\n", 1, "queues: expected a list"},
    {"fencing: sometimes\n", 1, "fencing: mode must be auto, off, v1 or v2"},
    {"fencing:\n  mode: v2\n  dev_dir: dev\n", 3, "dev_dir: expected an absolute path"},
    {"listen_tcp: 10.0.0.1:80\n", 1, "listen_tcp: only loopback"},
    {"listen_tcp: 127.0.0.1:0\n", 1, "listen_tcp: port 1..65535"},
    {"state_dir: [a\n", 2, "did not find expected"},
    {"backend:\n  sim_gid: 0\n", 2, "sim_gid: expected an integer 1..2147483646"},
    {"backend:\n  sim_gid: video\n", 2,
     "sim_gid: expected an integer 1..2147483646, got \"video\""},
};

/* backend.sim_gid against the rest of the config: each refused with why (no line: the check
 * runs once the whole file is read). */
static const struct {
        const char *yaml, *needle;
} bad_gids[] = {
    {"backend:\n  sim_gid: 2000000005\n",
     "backend.sim_gid: 2000000005 lies in tenant_defaults' uids 2000000000..2001048575"},
    {"tenant_defaults:\n  uid_base: 1999999000\n",
     "backend.sim_gid: 1999999999 lies in tenant_defaults' uids 1999999000.."},
    {"backend:\n  sim_gid: 5000\ntenants:\n  - name: a\n    uid: 4000\n    gid: 5000\n",
     "backend.sim_gid: 5000 is the uid or gid of tenant \"a\""},
};

static void test_bad_sim_gid(void **st)
{
        char path[128], out[4096];
        (void)st;
        for (size_t i = 0; i < sizeof(bad_gids) / sizeof(bad_gids[0]); i++) {
                FILE *f;
                int ex;
                snprintf(path, sizeof(path), "%s/gid%zu.yaml", dir, i);
                f = fopen(path, "w");
                assert_non_null(f);
                fputs(bad_gids[i].yaml, f);
                fclose(f);
                ex = check(path, out, sizeof(out));
                if (ex != 1 || !strstr(out, bad_gids[i].needle))
                        fail_msg("config:\n%s\ngot exit %d, output:\n%s\nwant exit 1 with \"%s\"",
                                 bad_gids[i].yaml, ex, out, bad_gids[i].needle);
                unlink(path);
        }
        /* a gid of its own, outside every tenant's identity, is accepted */
        snprintf(path, sizeof(path), "%s/gidok.yaml", dir);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs("backend:\n  sim_gid: 4242\n", f);
        fclose(f);
        int ex = check(path, out, sizeof(out));
        if (ex != 0)
                fail_msg("sim_gid 4242: exit %d: %s", ex, out);
        unlink(path);
}

static void test_bad_configs(void **st)
{
        char path[128], out[4096], want[1200];
        (void)st;
        for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
                FILE *f;
                int ex;
                snprintf(path, sizeof(path), "%s/bad%zu.yaml", dir, i);
                f = fopen(path, "w");
                assert_non_null(f);
                fputs(bads[i].yaml, f);
                fclose(f);
                ex = check(path, out, sizeof(out));
                snprintf(want, sizeof(want), "%s:%u: ", path, bads[i].line);
                if (ex != 1 || !strstr(out, want) || !strstr(out, bads[i].needle))
                        fail_msg("config %zu:\n%s\ngot exit %d, output:\n%s\nwant exit 1 with "
                                 "\"%s\" and \"%s\"",
                                 i, bads[i].yaml, ex, out, want, bads[i].needle);
                unlink(path);
        }
}

static void test_good_configs(void **st)
{
        char path[128], out[4096];
        int ex;
        FILE *f;
        (void)st;

        ex = check(KERF_SOURCE_DIR "/examples/kerfd.yaml", out, sizeof(out));
        if (ex != 0 || !strstr(out, "ok (2 tenants)"))
                fail_msg("examples/kerfd.yaml: exit %d: %s", ex, out);
        /* queue modes */
        snprintf(path, sizeof(path), "%s/queues.yaml", dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("queues:\n  - name: dev\n    mode: best-effort\n    starvation_s: 600\n"
              "  - name: train\n    mode: strict\n    backfill: false\n",
              f);
        fclose(f);
        ex = check(path, out, sizeof(out));
        if (ex != 0)
                fail_msg("queues: exit %d: %s", ex, out);
        unlink(path);
        /* a relative state_dir is resolved against the working directory */
        snprintf(path, sizeof(path), "%s/rel.yaml", dir);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs("state_dir: state\nsocket: /tmp/kerf-test.sock\n"
              "limits: {grace_s: 1m30s, request_timeout_s: 00:30, min_lease_s: 45, max_body: "
              "1MiB}\n"
              "policy: {dev_default_memory: 8G}\n"
              "tenants:\n  - name: a\n    quota: {memory: {nominal: 1.5TiB, borrow_limit: 0, "
              "lend_limit: 512 GiB}}\n",
              f);
        fclose(f);
        ex = check(path, out, sizeof(out));
        if (ex != 0)
                fail_msg("relative state_dir: exit %d: %s", ex, out);
        unlink(path);
}

/* `kerfd --check-config FILE` (FILE without -c) must not check the defaults and say "ok". */
static void test_positional_refused(void **st)
{
        char cmd[1024], out[2048];
        size_t n;
        FILE *p;
        int ws;
        (void)st;

        snprintf(cmd, sizeof(cmd), "'%s' --check-config '%s/examples/kerfd.yaml' 2>&1", KERFD_BIN,
                 KERF_SOURCE_DIR);
        p = popen(cmd, "r");
        assert_non_null(p);
        n = fread(out, 1, sizeof(out) - 1, p);
        out[n] = 0;
        ws = pclose(p);
        assert_true(WIFEXITED(ws));
        assert_int_equal(WEXITSTATUS(ws), 2);
        assert_non_null(strstr(out, "unexpected argument"));
        assert_null(strstr(out, ": ok"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_bad_configs), cmocka_unit_test(test_good_configs),
            cmocka_unit_test(test_bad_sim_gid), cmocka_unit_test(test_positional_refused)};
        int r;
        snprintf(dir, sizeof(dir), "/tmp/kerf-cfg-XXXXXX");
        if (!mkdtemp(dir))
                return 1;
        r = cmocka_run_group_tests(tests, NULL, NULL);
        rmdir(dir);
        return r;
}
