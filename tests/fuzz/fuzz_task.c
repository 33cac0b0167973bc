/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_task.c - libFuzzer target: a POST /v1/tasks (or /v1/attach) body through what the API
 * does with it (api.c task_submit: json_loadb with JSON_REJECT_DUPLICATES, then
 * kerfd_task_parse), on a node that knows tenants alice and bob. An accepted request must be
 * accepted again from its stored form (kerfd_task_from_store, the recovery path). The first
 * byte picks the caller: bit 0 attach, bit 1 admin, bit 2 token tenant "" (admin only). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static kerfd_node node;
/* The node's GPUs, for "gpu_uuid" (kerfd always has a fleet; a NULL one is not a state it has) */
static kerf_node_desc fleet_nodes[1] = {{.name = "n0", .first_gpu = 0, .n_gpus = 2}};
static kerf_gpu_desc fleet_gpus[2] = {
    {.uuid = "GPU-00000000-0000-0000-0000-000000000000", .index = 0, .numa = -1},
    {.uuid = "GPU-00000000-0000-0000-0000-000000000001", .index = 1, .numa = -1},
};
static kerf_fleet fleet = {.nodes = fleet_nodes, .n_nodes = 1, .gpus = fleet_gpus, .n_gpus = 2};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        kerfd_config_defaults(&node.cfg);
        node.fleet = &fleet;
        node.n_tenants = 2;
        for (unsigned i = 0; i < node.n_tenants; i++) {
                kerfd_tenant_cfg *c = &node.tenants[i].cfg;
                snprintf(c->name, sizeof(c->name), "%s", i ? "bob" : "alice");
                c->uid = i ? 1000 : -1;
                c->gid = -1;
                c->weight = 1;
        }
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *code = NULL, *tenant;
        char msg[512];
        bool attach, admin;
        dtask *t = NULL, *back = NULL;
        json_t *body;
        int r;

        if (size < 1)
                return 0;
        attach = data[0] & 1;
        admin = data[0] & 2;
        tenant = admin && (data[0] & 4) ? "" : "alice";
        body = json_loadb((const char *)data + 1, size - 1, JSON_REJECT_DUPLICATES, NULL);
        if (!json_is_object(body)) {
                json_decref(body);
                return 0;
        }
        r = kerfd_task_parse(&node, body, attach, admin, tenant, &t, &code, msg, sizeof(msg));
        json_decref(body);
        if (r < 0) {
                if (!code || !*msg)
                        abort(); /* every refusal names a code and says why */
                return 0;
        }
        /* what was accepted and stored is accepted again at recovery */
        r = kerfd_task_from_store(&node, &t->rec, &back, msg, sizeof(msg));
        if (r < 0) {
                fprintf(stderr, "stored request %s refused at recovery: %s\n", t->rec.request_json,
                        msg);
                abort();
        }
        kerfd_task_free(back);
        kerfd_task_free(t);
        return 0;
}
