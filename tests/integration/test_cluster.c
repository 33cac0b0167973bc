/* SPDX-License-Identifier: Apache-2.0 */
/* test_cluster.c - kerf cluster over two throwaway kerfds: the aggregated view with a NODE
 * column, a stopped node as one "unreachable" line and exit 1, per-node audit bundles that
 * verify, kerf --node NAME, and a bad nodes file named by line */
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
