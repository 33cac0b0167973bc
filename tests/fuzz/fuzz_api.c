/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_api.c - libFuzzer target: request bodies through kerfd's API dispatch
 * (kerfd_api_dispatch, as the HTTP layer calls it under the node mutex) on a real node
 * (simulated fleet, temporary state dir, store, scheduler, no HTTP listener, fencing off).
 * Only endpoints that run no command: tenant create, quota, token create, task cancel and
 * suspend. The first byte picks the endpoint (low bits) and the caller (bit 7: tenant alice,
 * else admin); the rest is the body. Every answer must have a status and a JSON body. */
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "http.h"
#include "node.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static kerfd_node node;
static kerfd_config cfg;
static char dir[64];

static const struct {
        const char *method, *path;
} routes[] = {
    {"POST", "/v1/tenants"},
    {"PUT", "/v1/tenants/alice/quota"},
    {"POST", "/v1/tenants/bob/tokens"},
    {"POST", "/v1/tasks/1/cancel"},
    {"POST", "/v1/tasks/1/suspend"},
};

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
        (void)st;
        (void)flag;
        (void)f;
        return remove(p);
}

static void cleanup(void)
{
        if (dir[0])
                nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        char path[PATH_MAX], exe[PATH_MAX], err[1024];
        FILE *f;

        (void)argc;
        (void)argv;
        snprintf(dir, sizeof(dir), "/tmp/kerf-fuzz-api-XXXXXX");
        if (!mkdtemp(dir))
                abort();
        atexit(cleanup);
        snprintf(path, sizeof(path), "%s/kerfd.yaml", dir);
        if (!(f = fopen(path, "w")))
                abort();
        fprintf(f,
                "state_dir: %s/state\nsocket: %s/kerfd.sock\nfleet: %s/examples/fleet-8xh200.yaml\n"
                "backend:\n  simulated: true\nfencing: {mode: off}\n"
                "tenants:\n  - name: alice\n  - name: bob\n",
                dir, dir, KERF_SOURCE_DIR);
        fclose(f);
        kerfd_config_defaults(&cfg);
        if (kerfd_config_load(&cfg, path, err, sizeof(err)) < 0) {
                fprintf(stderr, "fuzz_api: %s\n", err);
                abort();
        }
        /* kerfd looks for what it runs beside its own binary (the simulated NVML at
         * <bindir>/../lib, absent: bookkeeping only; and whatever helper it starts tasks with):
         * the node is started as if from kerfd's build directory */
        snprintf(exe, sizeof(exe), "%s", KERFD_BIN_DIR);
        if (kerfd_node_start(&node, &cfg, exe) < 0) {
                fprintf(stderr, "fuzz_api: node start failed\n");
                abort();
        }
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        kreq r;

        if (size < 1)
                return 0;
        memset(&r, 0, sizeof(r));
        r.node = &node;
        r.method = routes[data[0] % (sizeof(routes) / sizeof(routes[0]))].method;
        snprintf(r.path, sizeof(r.path), "%s",
                 routes[data[0] % (sizeof(routes) / sizeof(routes[0]))].path);
        r.admin = !(data[0] & 0x80);
        r.has_cred = true;
        r.uid = r.admin ? 0 : 1000;
        snprintf(r.tenant, sizeof(r.tenant), "%s", r.admin ? "" : "alice");
        snprintf(r.actor, sizeof(r.actor), "%s", r.admin ? "uid:0" : "tenant:alice");
        if (size > 1) {
                r.body = malloc(size);
                if (!r.body)
                        return 0;
                memcpy(r.body, data + 1, size - 1);
                r.body[size - 1] = 0;
                r.len = size - 1;
        }
        pthread_mutex_lock(&node.mu);
        kerfd_api_dispatch(&r);
        pthread_mutex_unlock(&node.mu);
        if (!r.status || (r.status != 204 && !r.out && !r.raw))
                abort(); /* every request is answered */
        json_decref(r.out);
        free(r.raw);
        free(r.body);
        return 0;
}
