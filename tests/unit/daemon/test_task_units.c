/* SPDX-License-Identifier: Apache-2.0 */
/* test_task_units.c - the API's size rule on kerfd's task parser (docs/UNITS.md): a new request
 * needs a unit in a size string, while a request stored before the rule ("17179869184", "2GB"
 * read as GiB then) is recovered as it was accepted */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "node.h"

static kerfd_node node;
static kerf_node_desc fleet_nodes[1] = {{.name = "n0", .first_gpu = 0, .n_gpus = 1}};
static kerf_gpu_desc fleet_gpus[1] = {
    {.uuid = "GPU-00000000-0000-0000-0000-000000000000", .index = 0, .numa = -1}};
static kerf_fleet fleet = {.nodes = fleet_nodes, .n_nodes = 1, .gpus = fleet_gpus, .n_gpus = 1};

static int setup(void **st)
{
        (void)st;
        kerfd_config_defaults(&node.cfg);
        node.fleet = &fleet;
        node.n_tenants = 1;
        snprintf(node.tenants[0].cfg.name, sizeof(node.tenants[0].cfg.name), "alice");
        node.tenants[0].cfg.uid = -1;
        node.tenants[0].cfg.gid = -1;
        node.tenants[0].cfg.weight = 1;
        return 0;
}

/* Parses `text` as a new request from admin; returns 0 or the refusal, message in msg. */
static int parse(const char *text, dtask **ret, char *msg, size_t len)
{
        const char *code = NULL;
        json_t *body = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
        assert_non_null(body);
        int r = kerfd_task_parse(&node, body, false, true, "alice", ret, &code, msg, len);
        json_decref(body);
        return r;
}

static void new_requests(void **st)
{
        static const struct {
                const char *body;
                const char *msg; /* NULL: accepted */
                uint64_t mem, host;
        } cases[] = {
            {"{\"command\":[\"x\"],\"memory\":\"1.5GiB\",\"host_memory\":17179869184}", NULL,
             1536ULL << 20, 16ULL << 30},
            {"{\"command\":[\"x\"],\"memory\":\"4G\"}", NULL, 4ULL << 30, 0},
            {"{\"command\":[\"x\"],\"memory\":\"17179869184\"}",
             "memory: '17179869184' has no unit: write 17179869184GiB or 17179869184MiB", 0, 0},
            {"{\"command\":[\"x\"],\"host_memory\":\"2GB\"}",
             "host_memory: '2GB' is ambiguous (powers of 1000 or of 1024?): write 2GiB", 0, 0},
            {"{\"command\":[\"x\"],\"memory\":1125899906842625}", "memory: at most 1PiB", 0, 0},
            {"{\"command\":[\"x\"],\"memory\":true}",
             "memory: bytes (an integer) or a string with a unit", 0, 0},
        };
        (void)st;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char msg[512] = "";
                dtask *t = NULL;
                int r = parse(cases[i].body, &t, msg, sizeof(msg));
                if (cases[i].msg) {
                        if (r >= 0 || !strstr(msg, cases[i].msg))
                                fail_msg("%s: r=%d '%s', want '%s'", cases[i].body, r, msg,
                                         cases[i].msg);
                        continue;
                }
                if (r < 0)
                        fail_msg("%s refused: %s", cases[i].body, msg);
                assert_int_equal(t->req.mem_bytes, cases[i].mem);
                assert_int_equal(t->req.host_mem_bytes, cases[i].host);
                kerfd_task_free(t);
        }
}

static void stored_before_the_rule(void **st)
{
        char msg[512] = "";
        dtask *t = NULL, *back = NULL;
        (void)st;
        assert_int_equal(parse("{\"command\":[\"x\"],\"memory\":\"1GiB\"}", &t, msg, sizeof(msg)),
                         0);
        /* what an older kerfd accepted and stored */
        free(t->rec.request_json);
        t->rec.request_json = strdup("{\"tenant\":\"alice\",\"command\":[\"x\"],\"memory\":"
                                     "\"17179869184\",\"host_memory\":\"2GB\"}");
        int r = kerfd_task_from_store(&node, &t->rec, &back, msg, sizeof(msg));
        if (r < 0)
                fail_msg("refused at recovery: %s", msg);
        assert_int_equal(back->req.mem_bytes, 17179869184ULL);
        assert_int_equal(back->req.host_mem_bytes, 2ULL << 30);
        kerfd_task_free(back);
        kerfd_task_free(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {cmocka_unit_test(new_requests),
                                           cmocka_unit_test(stored_before_the_rule)};
        return cmocka_run_group_tests(tests, setup, NULL);
}
