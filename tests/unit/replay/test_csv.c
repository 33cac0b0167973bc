/* SPDX-License-Identifier: Apache-2.0 */
/* test_csv.c - the openb node and pod list readers: good files, and bad lines named by line */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kerf/errno.h"
#include "replay.h"

#define NODE_HDR "sn,cpu_milli,memory_mib,gpu,model\n"
#define POD_HDR  "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n"

static int nodes(const char *text, kerf_fleet **f, char *err)
{
        return kerf_replay_nodes_parse(text, strlen(text), "n.csv", f, err, 256);
}

static int pods(const char *text, kerf_replay_pod **p, size_t *n, char *err)
{
        return kerf_replay_pods_parse(text, strlen(text), "p.csv", p, n, err, 256);
}

static void test_nodes_good(void **state)
{
        (void)state;
        kerf_fleet *f = NULL;
        char err[256] = "";
        assert_int_equal(nodes(NODE_HDR "a,64000,262144,2,P100\r\n\nb,96000,786432,8,V100M32\n"
                                        "c,32000,1024,0,\n",
                               &f, err),
                         0);
        assert_int_equal(f->n_nodes, 3);
        assert_int_equal(f->n_gpus, 10);
        assert_string_equal(f->nodes[1].name, "b");
        assert_int_equal(f->nodes[1].cpu_milli, 96000);
        assert_int_equal(f->nodes[1].mem_bytes, 786432ULL * KERF_MIB);
        assert_ptr_equal(f->gpus[0].model, kerf_gpu_model_find("P100"));
        assert_ptr_equal(f->gpus[9].model, kerf_gpu_model_find("V100M32"));
        assert_false(f->gpus[9].mig_enabled);
        kerf_fleet_free(f);
}

static void expect_node_error(const char *text, const char *msg)
{
        kerf_fleet *f = NULL;
        char err[256] = "";
        assert_int_equal(nodes(text, &f, err), -KERF_EPARSE);
        assert_null(f);
        if (!strstr(err, msg))
                fail_msg("error '%s' lacks '%s'", err, msg);
}

static void test_nodes_bad(void **state)
{
        (void)state;
        expect_node_error("", "n.csv:0: empty file");
        expect_node_error("sn,cpu_milli,gpu,model\n", "n.csv:1: header lacks column 'memory_mib'");
        expect_node_error(NODE_HDR "a,64000,262144,2,P100\nb,1,2,3\n", "n.csv:3: 4 fields");
        expect_node_error(NODE_HDR "a,64k,262144,2,P100\n", "n.csv:2: cpu_milli '64k'");
        expect_node_error(NODE_HDR "a,-1,262144,2,P100\n", "n.csv:2: cpu_milli '-1'");
        expect_node_error(NODE_HDR "a,1,262144,2,K80\n", "n.csv:2: unknown GPU model 'K80'");
        expect_node_error(NODE_HDR "a,1,1,1,T4\na,1,1,1,T4\n", "n.csv:3: bad or duplicate node");
        expect_node_error(NODE_HDR "a,1,1,65,T4\n", "n.csv:2: gpu '65' is larger than 64");
        expect_node_error(NODE_HDR "\"a\",1,1,1,T4\n", "n.csv:2: quotes");
        expect_node_error(NODE_HDR, "no GPUs");
}

static void test_pods_good(void **state)
{
        (void)state;
        kerf_replay_pod *p = NULL;
        size_t n = 0;
        char err[256] = "";
        assert_int_equal(pods(POD_HDR "p0,12000,16384,1,1000,,LS\n"
                                      "p1,6000,12288,1,460,T4|P100,BE\n"
                                      "p2,1000,100,0,0,,LS\n"
                                      "p3,88000,327680,8,1000,V100M32,LS\n",
                              &p, &n, err),
                         0);
        assert_int_equal(n, 4);
        assert_string_equal(p[1].name, "p1");
        assert_int_equal(p[1].cpu_milli, 6000);
        assert_int_equal(p[1].mem_mib, 12288);
        assert_int_equal(p[1].num_gpu, 1);
        assert_int_equal(p[1].gpu_milli, 460);
        uint64_t t4 = 1ULL << kerf_gpu_model_index(kerf_gpu_model_find("T4"));
        uint64_t p100 = 1ULL << kerf_gpu_model_index(kerf_gpu_model_find("P100"));
        assert_int_equal(p[1].model_mask, t4 | p100);
        assert_int_equal(p[0].model_mask, 0);
        assert_int_equal(p[2].num_gpu, 0);
        assert_int_equal(p[3].num_gpu, 8);
        assert_int_equal(kerf_replay_pod_demand(&p[3]), 8000);
        free(p);
        /* gpu_spec is optional (multigpu20 has no such column) */
        assert_int_equal(
            pods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\nx,1,1,1,500\n", &p, &n, err), 0);
        assert_int_equal(n, 1);
        free(p);
}

static void expect_pod_error(const char *text, const char *msg)
{
        kerf_replay_pod *p = NULL;
        size_t n = 0;
        char err[256] = "";
        assert_int_equal(pods(text, &p, &n, err), -KERF_EPARSE);
        assert_null(p);
        assert_int_equal(n, 0);
        if (!strstr(err, msg))
                fail_msg("error '%s' lacks '%s'", err, msg);
}

static void test_pods_bad(void **state)
{
        (void)state;
        expect_pod_error("name,cpu_milli,memory_mib,num_gpu\n", "p.csv:1: header lacks column "
                                                                "'gpu_milli'");
        expect_pod_error(POD_HDR "p0,1,1,1,1001,,LS\n", "p.csv:2: gpu_milli '1001' is larger");
        expect_pod_error(POD_HDR "p0,1,1,2,500,,LS\n", "p.csv:2: num_gpu 2 needs gpu_milli 1000");
        expect_pod_error(POD_HDR "p0,1,1,1,0,,LS\n", "p.csv:2: num_gpu 1 with gpu_milli 0");
        expect_pod_error(POD_HDR "p0,1,1,0,10,,LS\n", "p.csv:2: gpu_milli 10 without GPUs");
        expect_pod_error(POD_HDR "p0,1,1,1,500,T4|K80,LS\n", "p.csv:2: gpu_spec names unknown "
                                                             "GPU model 'K80'");
        expect_pod_error(POD_HDR "p0,1,1,1,500,T4||P100,LS\n", "empty model name");
        expect_pod_error(POD_HDR "p0,1,1,1,500,,LS\np1,1,1,1,500,LS\n", "p.csv:3: 6 fields");
        expect_pod_error(POD_HDR "p0,1,,1,500,,LS\n", "p.csv:2: memory_mib is empty");
        expect_pod_error(POD_HDR ",1,1,1,500,,LS\n", "p.csv:2: name must be");
        expect_pod_error(POD_HDR, "no pods");
        expect_pod_error(POD_HDR "p0,1,1,17,1000,,LS\n", "num_gpu '17' is larger than 16");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_nodes_good),
            cmocka_unit_test(test_nodes_bad),
            cmocka_unit_test(test_pods_good),
            cmocka_unit_test(test_pods_bad),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
