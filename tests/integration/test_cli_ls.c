/* SPDX-License-Identifier: Apache-2.0 */
/* test_cli_ls.c - the real `kerf` binary against a throwaway kerfd: kerf ls (filters, sort,
 * outputs, paging, --watch), kerf cancel (many ids, filters, --dry-run, --signal) and kerf run
 * (Ctrl-C, the pending reason, a failed start, --cwd default, --export) */
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
#include <yaml.h>

#include "clirun.h"
#include "harness.h"

static kd K;
static long dummy_st; /* kd_call's status, where the test does not look */

/* the kerf binary under test (clirun.h) */
static pid_t spawn(const char *tag, char **args)
{
        return kd_cli_spawn(&K, tag, NULL, NULL, args);
}

static kd_out collect(const char *tag, int code)
{
        return kd_cli_collect(&K, tag, code);
}

#define kerf(...) kd_cli_run(&K, NULL, NULL, (char *[]){__VA_ARGS__, NULL})

static char *slurp(const char *path)
{
        char *b = kd_read(path);
        return b ? b : strdup("");
}

/* Waits (bounded) until file <dir>/TAG.SUFFIX holds `needle`. */
static bool wait_text(const char *tag, const char *suffix, const char *needle, unsigned ms)
{
        char f[400];
        snprintf(f, sizeof(f), "%s/%s.%s", K.dir, tag, suffix);
        for (unsigned w = 0; w <= ms; w += 50) {
                char *b = slurp(f);
                bool hit = strstr(b, needle) != NULL;
                free(b);
                if (hit)
                        return true;
                kd_sleep_ms(50);
        }
        return false;
}

static unsigned long long submit(const char *body)
{
        return kd_submit(&K, body, NULL);
}

/* Whether the JSON list of o holds task id. */
static bool has_id(const kd_out *o, unsigned long long id)
{
        size_t i;
        json_t *t, *items = json_is_array(o->js) ? o->js : json_object_get(o->js, "items");
        json_array_foreach(items, i, t) if ((unsigned long long)json_integer_value(
                                                json_object_get(t, "id")) == id) return true;
        return false;
}

static size_t n_items(const kd_out *o)
{
        return json_array_size(json_is_array(o->js) ? o->js : json_object_get(o->js, "items"));
}

static const char *state_of(unsigned long long id)
{
        static char st[32];
        char path[64];
        long s;
        snprintf(path, sizeof(path), "/v1/tasks/%llu", id);
        json_t *j = kd_call(&K, "GET", path, NULL, NULL, &s, NULL);
        snprintf(st, sizeof(st), "%s", json_string_value(json_object_get(j, "state")));
        json_decref(j);
        return st;
}

static int setup(void **st)
{
        setenv("KERFD_TEST_SHIM_PATH", NOOP_SHIM, 1);
        /* carol: one GPU of quota, so that a second whole-GPU task waits on it */
        kd_setup(&K,
                 "  - name: carol\n    allow_root: true\n    quota:\n      gpus: {nominal: 1}\n");
        return 0;
}

static int teardown(void **st)
{
        kd_stop(&K);
        kd_cleanup(&K);
        return 0;
}

/* Reads the YAML text back with libyaml; true when its root is a mapping whose "items" is a
 * sequence of n mappings, each with an "id" and a "submitted". */
static bool yaml_items(const char *text, size_t n)
{
        yaml_parser_t p;
        yaml_document_t d;
        bool ok = false;
        yaml_parser_initialize(&p);
        yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
        if (!yaml_parser_load(&p, &d)) {
                yaml_parser_delete(&p);
                return false;
        }
        yaml_node_t *root = yaml_document_get_root_node(&d);
        for (yaml_node_pair_t *kv =
                 root && root->type == YAML_MAPPING_NODE ? root->data.mapping.pairs.start : NULL;
             kv && kv < root->data.mapping.pairs.top; kv++) {
                yaml_node_t *k = yaml_document_get_node(&d, kv->key);
                yaml_node_t *v = yaml_document_get_node(&d, kv->value);
                if (strcmp((char *)k->data.scalar.value, "items") || v->type != YAML_SEQUENCE_NODE)
                        continue;
                size_t cnt = 0, good = 0;
                for (yaml_node_item_t *it = v->data.sequence.items.start;
                     it < v->data.sequence.items.top; it++, cnt++) {
                        yaml_node_t *t = yaml_document_get_node(&d, *it);
                        int seen = 0;
                        for (yaml_node_pair_t *q = t->data.mapping.pairs.start;
                             t->type == YAML_MAPPING_NODE && q < t->data.mapping.pairs.top; q++) {
                                const char *key =
                                    (char *)yaml_document_get_node(&d, q->key)->data.scalar.value;
                                seen += !strcmp(key, "id") || !strcmp(key, "submitted");
                        }
                        good += seen == 2;
                }
                ok = cnt == n && good == n;
        }
        yaml_document_delete(&d);
        yaml_parser_delete(&p);
        return ok;
}

static void test_ls(void **st)
{
        char ids[2][32];
        unsigned long long a1 = submit("{\"tenant\": \"alice\", \"name\": \"lsa-1\", \"queue\": "
                                       "\"qa\", \"command\": [\"sleep\", \"60\"]}");
        unsigned long long a2 = submit("{\"tenant\": \"alice\", \"name\": \"lsa-2\", \"queue\": "
                                       "\"qb\", \"command\": [\"sleep\", \"60\"]}");
        unsigned long long b1 = submit("{\"tenant\": \"bob\", \"name\": \"lsb-1\", \"priority\": "
                                       "5, \"command\": [\"/bin/true\"]}");
        unsigned long long c1 = submit("{\"tenant\": \"carol\", \"name\": \"lsc-1\", \"gpus\": "
                                       "1, \"workload\": \"training\", \"command\": [\"sleep\", "
                                       "\"60\"]}");
        json_t *t = kd_wait_task(&K, c1, "running", 10000);
        if (!t) {
                char *raw = NULL, path[64];
                snprintf(path, sizeof(path), "/v1/tasks/%llu/explain", c1);
                json_decref(kd_call(&K, "GET", path, NULL, NULL, &dummy_st, &raw));
                fail_msg("lsc-1 did not start: %s", raw);
        }
        int gpu = (int)json_integer_value(
            json_object_get(json_array_get(json_object_get(t, "units"), 0), "gpu"));
        json_decref(t);
        unsigned long long c2 = submit("{\"tenant\": \"carol\", \"name\": \"lsc-2\", \"gpus\": "
                                       "1, \"workload\": \"training\", \"command\": [\"sleep\", "
                                       "\"60\"]}");
        assert_non_null(t = kd_wait_task(&K, b1, "succeeded", 10000));
        json_decref(t);
        assert_non_null(t = kd_wait_task(&K, a1, "running", 10000));
        json_decref(t);
        kd_sleep_ms(300); /* c2 tried at least once */
        snprintf(ids[0], 32, "%llu", c2);

        /* table: the pending reason, relative times */
        kd_out o = kerf("ls");
        kd_cli_assert_code(&o, 0);
        assert_true(!strncmp(o.out, "ID", 2));
        assert_non_null(strstr(o.out, "SUBMITTED"));
        assert_non_null(strstr(o.out, "s ago"));
        char *row = strstr(o.out, "lsc-2");
        assert_non_null(row);
        char *eol = strchr(row, '\n');
        *eol = 0;
        assert_non_null(strstr(row, "pending"));
        if (!strstr(row, "quota"))
                fail_msg("the pending row has no quota reason: %s", row);
        kd_out_fini(&o);
        o = kerf("ls", "--no-headers");
        kd_cli_assert_code(&o, 0);
        assert_true(o.out[0] >= '1' && o.out[0] <= '9');
        assert_null(strstr(o.out, "SUBMITTED"));
        kd_out_fini(&o);
        o = kerf("ls", "-o", "wide");
        kd_cli_assert_code(&o, 0);
        assert_non_null(strstr(o.out, "PRIO"));
        assert_non_null(strstr(o.out, "TIER"));
        assert_non_null(strstr(o.out, "MEMORY"));
        assert_non_null(strstr(o.out, "COMPUTE"));
        assert_non_null(strstr(o.out, "UNITS"));
        kd_out_fini(&o);

        /* filters */
        o = kerf("ls", "--tenant", "alice", "-o", "json");
        kd_cli_assert_code(&o, 0);
        assert_int_equal(n_items(&o), 2);
        assert_true(has_id(&o, a1) && has_id(&o, a2));
        json_t *it = json_array_get(json_object_get(o.js, "items"), 0);
        const char *sub = json_string_value(json_object_get(it, "submitted"));
        assert_non_null(sub);
        assert_int_equal(strlen(sub), 20);
        assert_int_equal(sub[19], 'Z');
        assert_true(json_is_null(json_object_get(it, "ended")));
        kd_out_fini(&o);
        o = kerf("--json", "ls", "--name", "lsa-*");
        assert_int_equal(n_items(&o), 2);
        assert_true(has_id(&o, a1) && has_id(&o, a2));
        kd_out_fini(&o);
        o = kerf("--json", "ls", "--queue", "qb");
        assert_int_equal(n_items(&o), 1);
        assert_true(has_id(&o, a2));
        kd_out_fini(&o);
        o = kerf("--json", "ls", "--state", "pending,succeeded");
        kd_cli_assert_code(&o, 0);
        assert_true(has_id(&o, c2) && has_id(&o, b1));
        assert_false(has_id(&o, a1) || has_id(&o, c1));
        kd_out_fini(&o);
        o = kerf("--json", "ls", "--route", "whole");
        assert_true(has_id(&o, c1));
        assert_false(has_id(&o, a1) || has_id(&o, b1));
        kd_out_fini(&o);
        snprintf(ids[1], 32, "%d", gpu);
        o = kerf("--json", "ls", "--gpu", ids[1]);
        assert_true(has_id(&o, c1));
        assert_false(has_id(&o, c2));
        kd_out_fini(&o);

        /* sort */
        o = kerf("--json", "ls", "--sort", "priority", "-r");
        kd_cli_assert_code(&o, 0);
        assert_int_equal(json_integer_value(json_object_get(
                             json_array_get(json_object_get(o.js, "items"), 0), "id")),
                         b1);
        kd_out_fini(&o);
        o = kerf("--json", "ls", "--sort", "name");
        size_t i;
        const char *prev = "";
        json_array_foreach(json_object_get(o.js, "items"), i, it)
        {
                const char *nm = json_string_value(json_object_get(it, "name"));
                assert_true(strcmp(prev, nm) <= 0);
                prev = nm;
        }
        kd_out_fini(&o);
        o = kerf("--json", "ls", "-r");
        it = json_array_get(json_object_get(o.js, "items"), 0);
        assert_int_equal(json_integer_value(json_object_get(it, "id")), c2);
        kd_out_fini(&o);

        /* yaml reads back */
        o = kerf("ls", "--tenant", "alice", "-o", "yaml");
        kd_cli_assert_code(&o, 0);
        if (!yaml_items(o.out, 2))
                fail_msg("not the YAML expected: %s", o.out);
        kd_out_fini(&o);

        /* paging: the hint names the next page; --all pages through */
        o = kerf("--json", "ls");
        size_t total = n_items(&o);
        kd_out_fini(&o);
        o = kerf("ls", "--limit", "2");
        kd_cli_assert_code(&o, 0);
        char more[64];
        snprintf(more, sizeof(more), "kerf: %zu more tasks: ", total - 2);
        if (!strstr(o.err, more))
                fail_msg("no '%s' in the hint: %s", more, o.err);
        const char *h = strstr(o.err, "kerf ls --limit 2 --after ");
        if (!h)
                fail_msg("no paging hint: %s", o.err);
        assert_non_null(strstr(o.err, "--all"));
        char cursor[32];
        snprintf(cursor, sizeof(cursor), "%s", h + strlen("kerf ls --limit 2 --after "));
        cursor[strcspn(cursor, " ")] = 0;
        kd_out_fini(&o);
        o = kerf("--json", "ls", "--limit", "2", "--after", cursor);
        kd_cli_assert_code(&o, 0);
        assert_int_equal(n_items(&o), 2);
        assert_false(has_id(&o, a1));
        kd_out_fini(&o);
        o = kerf("--json", "ls", "--limit", "2", "--all");
        assert_int_equal(n_items(&o), total);
        kd_out_fini(&o);
        /* a state list pages too (one request per state, merged in id order) */
        o = kerf("--json", "ls", "--state", "running,succeeded", "--limit", "1");
        assert_int_equal(n_items(&o), 1);
        assert_true(json_is_string(json_object_get(o.js, "next")));
        /* a1, a2, c1 running and b1 succeeded: 3 more after the first */
        assert_int_equal(json_integer_value(json_object_get(o.js, "remaining")), 3);
        kd_out_fini(&o);

        /* bad input: one line, exit 2 */
        o = kerf("ls", "--state", "sleeping");
        kd_cli_assert_one_error(&o, 2);
        assert_non_null(strstr(o.err, "pending"));
        kd_out_fini(&o);
        o = kerf("ls", "-o", "xml");
        kd_cli_assert_one_error(&o, 2);
        kd_out_fini(&o);
        o = kerf("ls", "--sort", "size");
        kd_cli_assert_one_error(&o, 2);
        kd_out_fini(&o);
        o = kerf("ls", "--gpu", "x");
        kd_cli_assert_one_error(&o, 2);
        kd_out_fini(&o);

        /* --watch redraws until Ctrl-C, which exits 0 */
        pid_t p = spawn("watch", (char *[]){"ls", "--watch", "1", NULL});
        kd_sleep_ms(2500);
        kill(p, SIGINT);
        o = collect("watch", kd_cli_reap(p, 10000));
        kd_cli_assert_code(&o, 0);
        char *second = strstr(o.out, "Every 1s");
        assert_non_null(second);
        assert_non_null(strstr(second + 1, "Every 1s"));
        assert_null(strstr(o.out, "\033[")); /* not a terminal: no escape codes */
        kd_out_fini(&o);

        unsigned long long mine[] = {a1, a2, c1, c2};
        for (int k = 0; k < 4; k++) {
                char path[64];
                snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", mine[k]);
                json_decref(kd_call(&K, "POST", path, NULL, NULL, &dummy_st, NULL));
        }
}

static void test_cancel_many(void **st)
{
        char a[32], b[32], c[32];
        unsigned long long x = submit("{\"tenant\": \"bob\", \"command\": [\"sleep\", \"60\"]}");
        unsigned long long y = submit("{\"tenant\": \"bob\", \"command\": [\"sleep\", \"60\"]}");
        unsigned long long z = submit("{\"tenant\": \"bob\", \"command\": [\"sleep\", \"60\"]}");
        snprintf(a, 32, "%llu", x);
        snprintf(b, 32, "%llu", y);
        snprintf(c, 32, "%llu", z);
        kd_out o = kerf("cancel", a, b, c);
        kd_cli_assert_code(&o, 0);
        assert_non_null(strstr(o.out, a));
        assert_non_null(strstr(o.out, c));
        kd_out_fini(&o);
        json_t *t;
        for (int i = 0; i < 3; i++) {
                assert_non_null(t = kd_wait_task(&K,
                                                 i == 0   ? x
                                                 : i == 1 ? y
                                                          : z,
                                                 "cancelled", 15000));
                json_decref(t);
        }
        o = kerf("cancel", "999999");
        kd_cli_assert_one_error(&o, 4);
        kd_out_fini(&o);
        o = kerf("cancel", a, "999999"); /* both fail, each on its line */
        kd_cli_assert_code(&o, 1);
        assert_non_null(strstr(o.err, "task 999999"));
        assert_non_null(strstr(o.err, a));
        assert_non_null(strchr(strchr(o.err, '\n') + 1, '\n'));
        kd_out_fini(&o);

        /* by filter, AND-ed; --dry-run cancels nothing */
        unsigned long long f1 = submit("{\"tenant\": \"bob\", \"name\": \"cf-x\", \"queue\": "
                                       "\"cq\", \"command\": [\"sleep\", \"60\"]}");
        unsigned long long f2 = submit("{\"tenant\": \"bob\", \"name\": \"cf-x\", \"queue\": "
                                       "\"cq\", \"command\": [\"sleep\", \"60\"]}");
        unsigned long long f3 = submit("{\"tenant\": \"bob\", \"name\": \"cf-y\", \"queue\": "
                                       "\"cq\", \"command\": [\"sleep\", \"60\"]}");
        unsigned long long f4 = submit("{\"tenant\": \"alice\", \"name\": \"cf-x\", \"queue\": "
                                       "\"cq\", \"command\": [\"sleep\", \"60\"]}");
        unsigned long long fs[] = {f1, f2, f3, f4};
        for (int k = 0; k < 4; k++) {
                assert_non_null(t = kd_wait_task(&K, fs[k], "running", 10000));
                json_decref(t);
        }
        o = kerf("cancel", "--queue", "cq", "--name", "cf-x", "--tenant", "bob", "--dry-run",
                 "--json");
        kd_cli_assert_code(&o, 0);
        assert_int_equal(n_items(&o), 2);
        assert_true(has_id(&o, f1) && has_id(&o, f2));
        kd_out_fini(&o);
        kd_sleep_ms(300);
        assert_string_equal(state_of(f1), "running");
        assert_string_equal(state_of(f2), "running");
        o = kerf("cancel", "--queue", "cq", "--name", "cf-x", "--tenant", "bob");
        kd_cli_assert_code(&o, 0);
        kd_out_fini(&o);
        assert_non_null(t = kd_wait_task(&K, f1, "cancelled", 15000));
        json_decref(t);
        assert_non_null(t = kd_wait_task(&K, f2, "cancelled", 15000));
        json_decref(t);
        assert_string_equal(state_of(f3), "running");
        assert_string_equal(state_of(f4), "running");
        o = kerf("cancel", "--name", "no-such-*");
        kd_cli_assert_one_error(&o, 4);
        kd_out_fini(&o);
        o = kerf("cancel");
        kd_cli_assert_one_error(&o, 2);
        kd_out_fini(&o);
        o = kerf("cancel", "--grace", "-1", "1");
        kd_cli_assert_one_error(&o, 2);
        kd_out_fini(&o);
        o = kerf("cancel", "--signal", "0", "1");
        kd_cli_assert_one_error(&o, 2);
        kd_out_fini(&o);
        o = kerf("cancel", "--signal", "SIGBOGUS", "1");
        kd_cli_assert_one_error(&o, 2);
        kd_out_fini(&o);
        o = kerf("cancel", "--state", "succeeded");
        kd_cli_assert_one_error(&o, 2);
        kd_out_fini(&o);
        long s;
        char path[64];
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", f3);
        json_decref(kd_call(&K, "POST", path, "{\"signal\": 0}", NULL, &s, NULL));
        assert_int_equal(s, 400);
        json_decref(kd_call(&K, "POST", path, "{\"signal\": 65}", NULL, &s, NULL));
        assert_int_equal(s, 400);

        /* --signal USR1: the task's trap runs and it ends with its own code */
        unsigned long long u =
            submit("{\"tenant\": \"bob\", \"command\": [\"/bin/sh\", \"-c\", \"trap 'echo got; "
                   "exit 7' USR1; while :; do sleep 0.1; done\"]}");
        assert_non_null(t = kd_wait_task(&K, u, "running", 10000));
        json_decref(t);
        kd_sleep_ms(300); /* the trap is set */
        snprintf(a, 32, "%llu", u);
        o = kerf("cancel", "--signal", "USR1", "--grace", "20", a);
        kd_cli_assert_code(&o, 0);
        kd_out_fini(&o);
        assert_non_null(t = kd_wait_task(&K, u, NULL, 15000));
        assert_string_equal(json_string_value(json_object_get(t, "state")), "cancelled");
        assert_int_equal(json_integer_value(json_object_get(t, "exit_code")), 7);
        json_decref(t);
        o = kerf("logs", a);
        assert_string_equal(o.out, "got\n");
        kd_out_fini(&o);
        o = kerf("audit", "export");
        assert_non_null(strstr(o.out, "signal 10"));
        kd_out_fini(&o);
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", f3);
        json_decref(kd_call(&K, "POST", path, NULL, NULL, &dummy_st, NULL));
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", f4);
        json_decref(kd_call(&K, "POST", path, NULL, NULL, &dummy_st, NULL));
}

static void test_run(void **st)
{
        /* Ctrl-C: the task is cancelled and kerf exits 130 */
        pid_t p = spawn("run1", (char *[]){"run", "--tenant", "bob", "--", "/bin/sh", "-c",
                                           "echo started; sleep 60", NULL});
        assert_true(wait_text("run1", "out", "started", 15000));
        kill(p, SIGINT);
        kd_out o = collect("run1", kd_cli_reap(p, 20000));
        kd_cli_assert_code(&o, 130);
        const char *idp = strstr(o.err, "kerf: task ");
        assert_non_null(idp);
        unsigned long long id = strtoull(idp + 11, NULL, 10);
        assert_non_null(strstr(o.err, "cancelling"));
        kd_out_fini(&o);
        json_t *t = kd_wait_task(&K, id, NULL, 15000);
        assert_non_null(t);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "cancelled");
        json_decref(t);

        /* pending: why it waits, once; it runs when the quota frees */
        unsigned long long blk = submit("{\"tenant\": \"carol\", \"gpus\": 1, \"workload\": "
                                        "\"training\", \"command\": [\"sleep\", \"60\"]}");
        assert_non_null(t = kd_wait_task(&K, blk, "running", 10000));
        json_decref(t);
        p = spawn("run2", (char *[]){"run", "--tenant", "carol", "--gpus", "1", "--workload",
                                     "training", "--", "/bin/sh", "-c", "echo ran", NULL});
        assert_true(wait_text("run2", "err", "quota", 15000));
        kd_sleep_ms(1000);
        char path[64];
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", blk);
        json_decref(kd_call(&K, "POST", path, NULL, NULL, &dummy_st, NULL));
        o = collect("run2", kd_cli_reap(p, 30000));
        kd_cli_assert_code(&o, 0);
        assert_string_equal(o.out, "ran\n");
        /* once per change: the first reason line is not repeated */
        char *pend = strstr(o.err, "pending: ");
        assert_non_null(pend);
        char line[600];
        snprintf(line, sizeof(line), "%.*s", (int)(strchr(pend, '\n') - pend + 1), pend);
        assert_non_null(strstr(line, "quota"));
        assert_null(strstr(pend + 1, line));
        kd_out_fini(&o);

        /* a start that fails says why */
        o = kerf("run", "--tenant", "bob", "--", "/nonexistent/prog");
        kd_cli_assert_code(&o, 125);
        assert_non_null(strstr(o.err, "exec failed"));
        kd_out_fini(&o);

        /* the caller's directory by default when any uid can enter it (the task's uid need not
         * be the caller's); a private one (0700) is not passed; --no-cwd lets kerfd choose */
        char old[1024], open_dir[] = "/tmp/kerf-cwd-XXXXXX", priv[] = "/tmp/kerf-cwd-XXXXXX";
        char want[1100];
        assert_non_null(getcwd(old, sizeof(old)));
        assert_non_null(mkdtemp(open_dir));
        assert_int_equal(chmod(open_dir, 0755), 0);
        assert_non_null(mkdtemp(priv)); /* 0700 */
        snprintf(want, sizeof(want), "%s\n", open_dir);
        assert_int_equal(chdir(open_dir), 0);
        o = kerf("run", "--tenant", "bob", "--", "/bin/pwd");
        kd_cli_assert_code(&o, 0);
        assert_string_equal(o.out, want);
        kd_out_fini(&o);
        o = kerf("run", "--no-cwd", "--tenant", "bob", "--", "/bin/pwd");
        kd_cli_assert_code(&o, 0);
        assert_string_not_equal(o.out, want);
        kd_out_fini(&o);
        snprintf(want, sizeof(want), "%s\n", priv);
        assert_int_equal(chdir(priv), 0);
        o = kerf("run", "--tenant", "bob", "--", "/bin/pwd");
        kd_cli_assert_code(&o, 0);
        assert_string_not_equal(o.out, want);
        kd_out_fini(&o);
        assert_int_equal(chdir(old), 0);
        rmdir(open_dir);
        rmdir(priv);

        /* --export and --env-from-shell copy variables; KERF_* never */
        setenv("LSX_ONE", "hello", 1);
        setenv("LSX_TWO", "world", 1);
        o = kerf("run", "--tenant", "bob", "--export", "LSX_ONE", "--", "/bin/sh", "-c",
                 "echo $LSX_ONE-$LSX_TWO");
        kd_cli_assert_code(&o, 0);
        assert_string_equal(o.out, "hello-\n");
        kd_out_fini(&o);
        o = kerf("run", "--tenant", "bob", "--env-from-shell", "--env", "LSX_TWO=mine", "--",
                 "/bin/sh", "-c", "echo $LSX_ONE-$LSX_TWO");
        kd_cli_assert_code(&o, 0);
        assert_string_equal(o.out, "hello-mine\n");
        kd_out_fini(&o);
        o = kerf("run", "--export", "KERF_TOKEN", "--", "/bin/true");
        kd_cli_assert_one_error(&o, 2);
        kd_out_fini(&o);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_ls),
            cmocka_unit_test(test_cancel_many),
            cmocka_unit_test(test_run),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
