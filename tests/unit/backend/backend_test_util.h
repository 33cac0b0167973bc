/* SPDX-License-Identifier: Apache-2.0 */
/* backend_test_util.h - per-test simulated node (H200 MIG on, H200 MIG off, T4) + NVML backend */
#ifndef KERF_BACKEND_TEST_UTIL_H
#define KERF_BACKEND_TEST_UTIL_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kerf/backend.h"
#include "kerf/core.h"
#include "simstate.h"

/* H200 driver profile ids (GPU-REFERENCE §1.1). */
#define P_1G  19
#define P_1G2 15
#define P_2G  14
#define P_3G  9
#define P_4G  5
#define P_7G  0

typedef struct bt {
        char dir[64];
        kerf_fleet *fleet;
        kerf_sim *st;
        kerf_backend *b;
} bt;

/* Fresh state dir ($KERF_SIM_DIR), fleet node "simnode": GPU0 H200 MIG on, GPU1 H200 MIG off,
 * GPU2 T4. Opens the simulated state and (when lib != NULL) a backend on `lib`. */
static inline int bt_setup(bt *t, const char *lib, bool allow_mode)
{
        memset(t, 0, sizeof(*t));
        strcpy(t->dir, "/tmp/kerf-backend-test-XXXXXX");
        if (!mkdtemp(t->dir) || kerf_fleet_new(&t->fleet) < 0)
                return -1;
        int n = kerf_fleet_add_node(t->fleet, "simnode", 0, 0, "550.54.15", 12040);
        const kerf_gpu_model *h200 = kerf_gpu_model_find("H200"), *t4 = kerf_gpu_model_find("T4");
        if (n < 0 || !h200 || !t4 || kerf_fleet_add_gpu(t->fleet, 0, h200, true, 0, NULL) < 0 ||
            kerf_fleet_add_gpu(t->fleet, 0, h200, false, 0, NULL) < 0 ||
            kerf_fleet_add_gpu(t->fleet, 0, t4, false, 1, NULL) < 0)
                return -1;
        if (kerf_sim_create(t->dir, t->fleet, 0, false) < 0)
                return -1;
        setenv(KERF_SIM_ENV, t->dir, 1);
        if (kerf_sim_open(t->dir, &t->st) < 0)
                return -1;
        if (lib) {
                kerf_backend_options o;
                char err[KERF_BACKEND_ERR_LEN];
                kerf_backend_options_init(&o);
                o.library = lib;
                o.allow_mig_mode_change = allow_mode;
                o.event_poll_ms = 50;
                if (kerf_backend_open(kerf_backend_nvml_ops(), &o, &t->b, err, sizeof(err)) < 0) {
                        fprintf(stderr, "backend open: %s\n", err);
                        return -1;
                }
        }
        return 0;
}

static inline void bt_teardown(bt *t)
{
        char p[128];
        t->b = kerf_backend_close(t->b);
        t->st = kerf_sim_close(t->st);
        t->fleet = kerf_fleet_free(t->fleet);
        snprintf(p, sizeof(p), "%s/%s", t->dir, KERF_SIM_STATE_FILE);
        unlink(p);
        rmdir(t->dir);
}

/* A child process that only waits to be killed. */
static inline pid_t bt_child(void)
{
        pid_t pid = fork();
        if (pid == 0) {
                for (;;)
                        pause();
        }
        return pid;
}

static inline void bt_child_end(pid_t pid)
{
        int status;
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
}

/* Runs the kerf-sim CLI with `args` against the test's state dir; returns its exit code. */
static inline int bt_cli(const bt *t, const char *args)
{
        char cmd[512];
        snprintf(cmd, sizeof(cmd), "KERF_SIM_DIR='%s' '%s' %s >/dev/null 2>&1", t->dir,
                 KERF_TEST_SIM_CLI, args);
        int rc = system(cmd);
        return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

#endif /* KERF_BACKEND_TEST_UTIL_H */
