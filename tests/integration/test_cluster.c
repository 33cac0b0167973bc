/* SPDX-License-Identifier: Apache-2.0 */
/* test_cluster.c - kerf cluster over two throwaway kerfds: the aggregated view with a NODE
 * column, a stopped node as one "unreachable" line and exit 1, per-node audit bundles that
 * verify, the merged bundle (manifest.json, merged.jsonl) that kerf audit verify --bundle checks
 * whole and every tampering it names, a partial bundle, kerf --node NAME, and a bad nodes file
 * named by line */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"

static kd A, B;

static int run(const char *cmd, char *out, size_t cap)
{
        FILE *p = popen(cmd, "r");
        size_t n;
        assert_non_null(p);
        n = fread(out, 1, cap - 1, p);
        out[n] = '\0';
        int st = pclose(p);
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static size_t count(const char *s, const char *needle)
{
        size_t n = 0;
        for (const char *p = s; (p = strstr(p, needle)); p++)
                n++;
        return n;
}

/* The lines of `path` (at most 4096), each a heap string without its newline. */
static size_t read_lines(const char *path, char **lines)
{
        char *text = kd_read(path), *save = NULL;
        size_t n = 0;
        assert_non_null(text);
        for (char *p = strtok_r(text, "\n", &save); p && n < 4096; p = strtok_r(NULL, "\n", &save))
                lines[n++] = strdup(p);
        free(text);
        return n;
}

static void write_lines(const char *path, char **lines, size_t n, size_t skip)
{
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        for (size_t i = 0; i < n; i++)
                if (i != skip)
                        fprintf(f, "%s\n", lines[i]);
        fclose(f);
}

static void free_lines(char **lines, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(lines[i]);
}

static void dump_json(const char *path, json_t *j)
{
        assert_int_equal(json_dump_file(j, path, JSON_COMPACT | JSON_PRESERVE_ORDER), 0);
}

/* A fresh copy of the bundle in DIR/bundle as DIR/t<k>; returns its path in `to`. */
static void copy_bundle(const char *dir, int k, char *to, size_t cap)
{
        char cmd[4096];
        snprintf(to, cap, "%s/t%d", dir, k);
        snprintf(cmd, sizeof(cmd), "rm -rf %s && cp -r %s/bundle %s", to, dir, to);
        assert_int_equal(system(cmd), 0);
}

/* kerf audit verify --bundle `b` fails (exit 1) and says every one of the NULL-ended needles. */
static void verify_fails(const char *b, ...)
{
        static char out[65536];
        char cmd[2048];
        va_list ap;
        snprintf(cmd, sizeof(cmd), "%s audit verify --bundle %s 2>&1", KERF_BIN, b);
        assert_int_equal(run(cmd, out, sizeof(out)), 1);
        va_start(ap, b);
        for (const char *n; (n = va_arg(ap, const char *));) {
                if (!strstr(out, n))
                        fail_msg("verify --bundle %s: no \"%s\" in:\n%s", b, n, out);
        }
        va_end(ap);
}

/* The merged bundle: it verifies, and each kind of tampering is named with its node. */
static void check_merged(const char *dir)
{
        static char out[131072], cmd[2048], path[1024], b[512];
        static char *lines[4096];
        size_t n, total = 0;
        json_t *j, *rec;

        snprintf(cmd, sizeof(cmd), "%s audit verify --bundle %s/bundle", KERF_BIN, dir);
        assert_int_equal(run(cmd, out, sizeof(out)), 0);
        assert_non_null(strstr(out, "na: OK: "));
        assert_non_null(strstr(out, "nb: OK: "));
        assert_non_null(strstr(out, "intact: 2 nodes"));
        snprintf(cmd, sizeof(cmd), "%s --json audit verify --bundle %s/bundle", KERF_BIN, dir);
        assert_int_equal(run(cmd, out, sizeof(out)), 0);
        j = json_loads(out, 0, NULL);
        assert_non_null(j);
        assert_true(json_is_true(json_object_get(j, "ok")));
        assert_int_equal(json_array_size(json_object_get(j, "nodes")), 2);
        json_decref(j);

        /* merged.jsonl: every node's records, each with its node, in (time, node, seq) order */
        for (int k = 0; k < 2; k++) {
                snprintf(path, sizeof(path), "%s/bundle/%s/audit.jsonl", dir, k ? "nb" : "na");
                n = read_lines(path, lines);
                total += n;
                free_lines(lines, n);
        }
        snprintf(path, sizeof(path), "%s/bundle/merged.jsonl", dir);
        n = read_lines(path, lines);
        assert_int_equal(n, total);
        long long pt = -1, ps = 0;
        char pn[64] = "";
        int switches = 0;
        for (size_t i = 0; i < n; i++) {
                json_t *m = json_loads(lines[i], 0, NULL);
                assert_non_null(m);
                rec = json_object_get(m, "record");
                const char *nn = json_string_value(json_object_get(m, "node"));
                long long t = json_integer_value(json_object_get(rec, "time_ms"));
                long long sq = json_integer_value(json_object_get(rec, "seq"));
                assert_non_null(nn);
                /* the record untouched: the node's own "node" field is there too */
                assert_string_equal(json_string_value(json_object_get(rec, "node")), nn);
                assert_true(t > pt ||
                            (t == pt && (strcmp(nn, pn) > 0 || (!strcmp(nn, pn) && sq > ps))));
                switches += i && strcmp(nn, pn) != 0;
                pt = t;
                ps = sq;
                snprintf(pn, sizeof(pn), "%s", nn);
                json_decref(m);
        }
        assert_true(switches >= 3); /* interleaved, not one node after the other */
        free_lines(lines, n);
        snprintf(path, sizeof(path), "%s/bundle/manifest.json", dir);
        j = json_load_file(path, 0, NULL);
        assert_non_null(j);
        assert_string_equal(json_string_value(json_object_get(j, "kind")), "kerf-audit-bundle");
        assert_int_equal(
            json_integer_value(json_object_get(json_object_get(j, "merged"), "records")), total);
        json_decref(j);

        /* one byte of nb's audit.jsonl */
        copy_bundle(dir, 1, b, sizeof(b));
        snprintf(path, sizeof(path), "%s/nb/audit.jsonl", b);
        char *t = kd_read(path), *a = strstr(t, "\"action\":\"");
        assert_non_null(a);
        a[10] = a[10] == 'X' ? 'Y' : 'X';
        FILE *f = fopen(path, "w");
        fputs(t, f);
        fclose(f);
        free(t);
        verify_fails(b, "nb: FAIL: nb/audit.jsonl: its SHA-256",
                     "nb: FAIL: nb/audit.jsonl: audit "
                     "chain broken at record",
                     "does NOT verify: FAIL nb", NULL);

        /* a record dropped from merged.jsonl: the node of the dropped line is named */
        copy_bundle(dir, 2, b, sizeof(b));
        snprintf(path, sizeof(path), "%s/merged.jsonl", b);
        n = read_lines(path, lines);
        j = json_loads(lines[n / 2], 0, NULL);
        snprintf(out, sizeof(out), "%s: FAIL: merged.jsonl lacks record seq %lld of %s (dropped)",
                 json_string_value(json_object_get(j, "node")),
                 json_integer_value(json_object_get(json_object_get(j, "record"), "seq")),
                 json_string_value(json_object_get(j, "node")));
        json_decref(j);
        write_lines(path, lines, n, n / 2);
        free_lines(lines, n);
        verify_fails(b, out, NULL);

        /* a record added to merged.jsonl (a copy of na's last under a new seq) */
        copy_bundle(dir, 3, b, sizeof(b));
        snprintf(path, sizeof(path), "%s/merged.jsonl", b);
        n = read_lines(path, lines);
        for (size_t i = n; i-- > 0;) {
                j = json_loads(lines[i], 0, NULL);
                if (!strcmp(json_string_value(json_object_get(j, "node")), "na")) {
                        json_object_set_new(json_object_get(j, "record"), "seq",
                                            json_integer(99999));
                        free(lines[i]);
                        lines[i] = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
                        json_decref(j);
                        break;
                }
                json_decref(j);
        }
        {
                /* the copy is appended and the original kept */
                char *orig[4096];
                size_t m = read_lines(path, orig);
                f = fopen(path, "a");
                for (size_t i = 0; i < n; i++)
                        if (strcmp(lines[i], orig[i]))
                                fprintf(f, "%s\n", lines[i]);
                fclose(f);
                free_lines(orig, m);
        }
        free_lines(lines, n);
        verify_fails(b, "na: FAIL: merged.jsonl line ",
                     "record seq 99999 of na is not in "
                     "na/audit.jsonl (added)",
                     NULL);

        /* a record of merged.jsonl altered (its reason) */
        copy_bundle(dir, 4, b, sizeof(b));
        snprintf(path, sizeof(path), "%s/merged.jsonl", b);
        n = read_lines(path, lines);
        j = json_loads(lines[0], 0, NULL);
        snprintf(out, sizeof(out), "%s: FAIL: merged.jsonl line 1: record seq %lld of %s differs",
                 json_string_value(json_object_get(j, "node")),
                 json_integer_value(json_object_get(json_object_get(j, "record"), "seq")),
                 json_string_value(json_object_get(j, "node")));
        json_object_set_new(json_object_get(j, "record"), "reason", json_string("edited"));
        free(lines[0]);
        lines[0] = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(j);
        write_lines(path, lines, n, (size_t)-1);
        free_lines(lines, n);
        verify_fails(b, out, "(altered)", NULL);

        /* the manifest's hash of na's audit.jsonl edited */
        copy_bundle(dir, 5, b, sizeof(b));
        snprintf(path, sizeof(path), "%s/manifest.json", b);
        j = json_load_file(path, 0, NULL);
        json_t *nd = json_array_get(json_object_get(j, "nodes"), 0);
        assert_string_equal(json_string_value(json_object_get(nd, "name")), "na");
        json_object_set_new(json_object_get(json_object_get(nd, "files"), "audit.jsonl"), "sha256",
                            json_string("00000000000000000000000000000000000000000000000000000000"
                                        "00000000"));
        dump_json(path, j);
        json_decref(j);
        verify_fails(b, "na: FAIL: na/audit.jsonl: its SHA-256", "is not the manifest's 0000",
                     "nb: OK", NULL);

        /* nb's checkpoint edited: its signature no longer holds */
        copy_bundle(dir, 6, b, sizeof(b));
        snprintf(path, sizeof(path), "%s/nb/checkpoint.json", b);
        j = json_load_file(path, 0, NULL);
        assert_non_null(j);
        json_object_set_new(j, "seq",
                            json_integer(json_integer_value(json_object_get(j, "seq")) - 1));
        dump_json(path, j);
        json_decref(j);
        verify_fails(b, "nb: FAIL: nb/checkpoint.json: bad signature", "na: OK", NULL);

        /* --bundle with --key is refused (each node has its own key) */
        snprintf(cmd, sizeof(cmd), "%s audit verify --bundle %s/bundle --key 00 2>&1", KERF_BIN,
                 dir);
        assert_int_equal(run(cmd, out, sizeof(out)), 2);
}

/* kerf audit verify --bundle B --nodes PINS: its exit code, its output in out */
static int verify_pinned(const char *b, const char *pins, char *out, size_t cap)
{
        char cmd[2048];
        snprintf(cmd, sizeof(cmd), "%s audit verify --bundle %s --nodes %s 2>&1", KERF_BIN, b,
                 pins);
        return run(cmd, out, cap);
}

static void write_pins(const char *path, const char *body)
{
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(body, f);
        fclose(f);
}

/* --nodes pins the bundle's node set and each node's audit key (docs/CLUSTER.md): a node
 * removed whole, a node of the file missing, a node signed by another key all fail. */
static void check_pins(const char *dir)
{
        static char out[65536], pins[600], body[4096], path[1024], b[512];
        char *pub_b;
        json_t *j, *kept;
        char *lines[4096];
        size_t n, m = 0;

        snprintf(path, sizeof(path), "%s/state/audit.pub", B.dir);
        pub_b = kd_read(path);
        assert_non_null(pub_b);
        pub_b[strcspn(pub_b, "\n")] = '\0';
        assert_int_equal(strlen(pub_b), 64);
        snprintf(pins, sizeof(pins), "%s/pins.yaml", dir);
        /* na's key as a file, nb's as hex: the bundle verifies, keys pinned */
        snprintf(body, sizeof(body),
                 "nodes:\n  - {name: na, socket: /x, audit_key: %s/state/audit.pub}\n"
                 "  - {name: nb, socket: /y, audit_key: %s}\n",
                 A.dir, pub_b);
        write_pins(pins, body);
        snprintf(b, sizeof(b), "%s/bundle", dir);
        assert_int_equal(verify_pinned(b, pins, out, sizeof(out)), 0);
        assert_non_null(strstr(out, "na: OK: "));
        assert_non_null(strstr(out, ", key pinned, all in merged.jsonl"));
        assert_null(strstr(out, "were not checked"));
        /* na pinned to nb's key: na's checkpoint is another kerfd's */
        snprintf(body, sizeof(body),
                 "nodes:\n  - {name: na, socket: /x, audit_key: %s}\n  - {name: nb, socket: /y}\n",
                 pub_b);
        write_pins(pins, body);
        assert_int_equal(verify_pinned(b, pins, out, sizeof(out)), 1);
        assert_non_null(strstr(out, "na: FAIL: na/checkpoint.json is signed by key"));
        assert_non_null(strstr(out, "nb: OK: "));
        /* a node of the file that the bundle lacks */
        write_pins(pins, "nodes:\n  - {name: na, socket: /x}\n  - {name: nb, socket: /y}\n"
                         "  - {name: nc, socket: /z}\n");
        assert_int_equal(verify_pinned(b, pins, out, sizeof(out)), 1);
        assert_non_null(strstr(out, "bundle: FAIL: node nc of"));
        /* a bad audit_key: the nodes file's line is named, exit 2 */
        write_pins(pins, "nodes:\n  - {name: na, socket: /x, audit_key: 12ab}\n");
        assert_int_equal(verify_pinned(b, pins, out, sizeof(out)), 2);
        assert_non_null(strstr(out, "pins.yaml:2: audit_key:"));

        /* nb removed whole (its directory, manifest entry and merged lines): the bundle still
         * verifies on its own (the gap the pins close), and fails against the nodes file */
        copy_bundle(dir, 7, b, sizeof(b));
        snprintf(path, sizeof(path), "rm -r %s/nb", b);
        assert_int_equal(system(path), 0);
        snprintf(path, sizeof(path), "%s/merged.jsonl", b);
        n = read_lines(path, lines);
        for (size_t i = 0; i < n; i++) {
                if (strstr(lines[i], "{\"node\":\"nb\"")) {
                        free(lines[i]);
                        continue;
                }
                lines[m++] = lines[i];
        }
        assert_true(m > 0 && m < n);
        write_lines(path, lines, m, (size_t)-1);
        free_lines(lines, m);
        snprintf(path, sizeof(path), "%s/manifest.json", b);
        j = json_load_file(path, 0, NULL);
        assert_non_null(j);
        kept = json_array();
        json_array_append(kept, json_array_get(json_object_get(j, "nodes"), 0));
        json_object_set_new(j, "nodes", kept);
        json_object_set_new(json_object_get(j, "merged"), "records", json_integer((json_int_t)m));
        dump_json(path, j);
        json_decref(j);
        snprintf(body, sizeof(body), "%s audit verify --bundle %s 2>&1", KERF_BIN, b);
        assert_int_equal(run(body, out, sizeof(out)), 0);
        assert_non_null(strstr(out, "were not checked"));
        write_pins(pins, "nodes:\n  - {name: na, socket: /x}\n  - {name: nb, socket: /y}\n");
        assert_int_equal(verify_pinned(b, pins, out, sizeof(out)), 1);
        assert_non_null(strstr(out, "bundle: FAIL: node nb of"));
        assert_non_null(strstr(out, "is not in the bundle"));

        /* the export checks the pins too: nb pinned to na's key is listed as failed */
        snprintf(body, sizeof(body),
                 "nodes:\n  - {name: na, socket: %s, audit_key: %s/state/audit.pub}\n"
                 "  - {name: nb, socket: %s, audit_key: %s/state/audit.pub}\n",
                 A.sock, A.dir, B.sock, A.dir);
        write_pins(pins, body);
        snprintf(body, sizeof(body), "%s cluster audit export --nodes %s --out %s/pinned 2>&1",
                 KERF_BIN, pins, dir);
        assert_int_equal(run(body, out, sizeof(out)), 1);
        assert_non_null(strstr(out, "nb: checkpoint.json is signed by key"));
        snprintf(b, sizeof(b), "%s/pinned", dir);
        assert_int_equal(verify_pinned(b, pins, out, sizeof(out)), 1);
        assert_non_null(strstr(out, "na: OK: "));
        assert_non_null(strstr(out, "nb: NOT EXPORTED: checkpoint.json is signed by key"));
        free(pub_b);
}

static void test_cluster(void **st)
{
        (void)st;
        static char out[131072], cmd[2048], nodes[512];
        FILE *f;

        kd_setup(&A, "node_name: na\n");
        kd_setup(&B, "node_name: nb\n");
        snprintf(nodes, sizeof(nodes), "%s/nodes.yaml", A.dir);
        f = fopen(nodes, "w");
        assert_non_null(f);
        fprintf(f, "nodes:\n  - name: na\n    socket: %s\n  - name: nb\n    socket: %s\n", A.sock,
                B.sock);
        fclose(f);

        snprintf(cmd, sizeof(cmd), "KERF_NODES=%s %s cluster gpus", nodes, KERF_BIN);
        assert_int_equal(run(cmd, out, sizeof(out)), 0);
        assert_non_null(strstr(out, "NODE"));
        assert_int_equal(count(out, "\nna "), 8);
        assert_int_equal(count(out, "\nnb "), 8);
        snprintf(cmd, sizeof(cmd), "%s cluster units --nodes %s --json", KERF_BIN, nodes);
        assert_int_equal(run(cmd, out, sizeof(out)), 0);
        json_t *j = json_loads(out, 0, NULL);
        assert_int_equal(json_array_size(json_object_get(j, "nodes")), 2);
        json_decref(j);
        /* kerf --node NAME talks to that node */
        snprintf(cmd, sizeof(cmd), "KERF_NODES=%s %s --node nb slurm node-conf 2>/dev/null", nodes,
                 KERF_BIN);
        assert_int_equal(run(cmd, out, sizeof(out)), 0);
        assert_memory_equal(out, "NodeName=nb ", 12);

        /* records on both nodes, interleaved in time, for the merged bundle's order */
        for (int k = 0; k < 3; k++) {
                kd_submit(&A, "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"]}", NULL);
                kd_sleep_ms(5);
                kd_submit(&B, "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"]}", NULL);
                kd_sleep_ms(5);
        }
        /* one bundle per node, each verifiable offline */
        snprintf(cmd, sizeof(cmd), "%s cluster audit export --nodes %s --out %s/bundle", KERF_BIN,
                 nodes, A.dir);
        assert_int_equal(run(cmd, out, sizeof(out)), 0);
        for (int k = 0; k < 2; k++) {
                const char *n = k ? "nb" : "na";
                snprintf(cmd, sizeof(cmd),
                         "%s --socket %s audit verify --in %s/bundle/%s/audit.jsonl --against "
                         "%s/bundle/%s/checkpoint.json",
                         KERF_BIN, A.sock, A.dir, n, A.dir, n);
                assert_int_equal(run(cmd, out, sizeof(out)), 0);
                assert_non_null(strstr(out, "intact"));
                snprintf(cmd, sizeof(cmd), "%s/bundle/%s/node.json", A.dir, n);
                char *meta = kd_read(cmd);
                assert_non_null(meta);
                assert_non_null(strstr(meta, n));
                free(meta);
                /* every record names its node, in its hash (docs/STATE.md "Audit chain") */
                snprintf(cmd, sizeof(cmd), "%s/bundle/%s/audit.jsonl", A.dir, n);
                char *lines = kd_read(cmd), want[32];
                assert_non_null(lines);
                snprintf(want, sizeof(want), "\"node\":\"%s\"", n);
                assert_int_equal(count(lines, want), count(lines, "\n"));
                free(lines);
        }
        check_merged(A.dir);
        check_pins(A.dir);
        /* /metrics names the node once (kerf_node_info) */
        {
                long status;
                char *raw = NULL;
                json_decref(kd_call(&A, "GET", "/metrics", NULL, NULL, &status, &raw));
                assert_int_equal(status, 200);
                assert_non_null(strstr(raw, "kerf_node_info{node=\"na\","));
                free(raw);
        }

        /* nb stopped: its line says unreachable, na still shown, exit 1 */
        kd_stop(&B);
        snprintf(cmd, sizeof(cmd), "%s cluster gpus --nodes %s", KERF_BIN, nodes);
        assert_int_equal(run(cmd, out, sizeof(out)), 1);
        assert_int_equal(count(out, "\nna "), 8);
        assert_int_equal(count(out, "\nnb "), 0);
        assert_non_null(strstr(out, "nb: unreachable"));
        snprintf(cmd, sizeof(cmd), "%s cluster top --nodes %s", KERF_BIN, nodes);
        assert_int_equal(run(cmd, out, sizeof(out)), 1);
        assert_non_null(strstr(out, "nb: unreachable"));
        /* a partial bundle: nb is listed as not exported, with why; verify names it, exit 1 */
        snprintf(cmd, sizeof(cmd), "%s cluster audit export --nodes %s --out %s/partial", KERF_BIN,
                 nodes, A.dir);
        assert_int_equal(run(cmd, out, sizeof(out)), 1);
        assert_non_null(strstr(out, "nb: unreachable"));
        snprintf(cmd, sizeof(cmd), "%s audit verify --bundle %s/partial", KERF_BIN, A.dir);
        assert_int_equal(run(cmd, out, sizeof(out)), 1);
        assert_non_null(strstr(out, "na: OK: "));
        assert_non_null(strstr(out, "nb: NOT EXPORTED: unreachable"));
        assert_non_null(strstr(out, "PARTIAL, not exported: nb"));
        snprintf(cmd, sizeof(cmd), "%s --json audit verify --bundle %s/partial", KERF_BIN, A.dir);
        assert_int_equal(run(cmd, out, sizeof(out)), 1);
        j = json_loads(out, 0, NULL);
        assert_non_null(j);
        assert_true(json_is_true(json_object_get(j, "partial")));
        assert_false(json_is_true(json_object_get(j, "ok")));
        json_decref(j);

        /* a bad nodes file: the line is named, exit 2 */
        f = fopen(nodes, "w");
        fprintf(f, "nodes:\n  - name: na\n    socket: /x\n  - name: nb\n    sockt: /y\n");
        fclose(f);
        snprintf(cmd, sizeof(cmd), "%s cluster gpus --nodes %s 2>&1", KERF_BIN, nodes);
        assert_int_equal(run(cmd, out, sizeof(out)), 2);
        assert_non_null(strstr(out, "nodes.yaml:5: unknown key"));
        kd_stop(&A);
        kd_cleanup(&A);
        kd_cleanup(&B);
}

int main(void)
{
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_cluster)};
        return cmocka_run_group_tests(tests, NULL, NULL);
}
