/* SPDX-License-Identifier: Apache-2.0 */
/* sim_test_util.h - per-test temporary kerf-sim node (2x H200: GPU0 MIG on, GPU1 off; 1x T4) */
#ifndef KERF_SIM_TEST_UTIL_H
#define KERF_SIM_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kerf/core.h"
#include "simstate.h"

/* Creates a fresh state dir, sets $KERF_SIM_DIR to it and writes its path to dir (>= 64). */
static inline int sim_test_node(char *dir)
{
        kerf_fleet *f = NULL;
        strcpy(dir, "/tmp/kerf-sim-test-XXXXXX");
        if (!mkdtemp(dir) || kerf_fleet_new(&f) < 0)
                return -1;
        int n = kerf_fleet_add_node(f, "simnode", 0, 0, "550.54.15", 12040);
        const kerf_gpu_model *h200 = kerf_gpu_model_find("H200"), *t4 = kerf_gpu_model_find("T4");
        if (n < 0 || !h200 || !t4 || kerf_fleet_add_gpu(f, (unsigned)n, h200, true, 0, NULL) < 0 ||
            kerf_fleet_add_gpu(f, (unsigned)n, h200, false, 0, NULL) < 0 ||
            kerf_fleet_add_gpu(f, (unsigned)n, t4, false, 1, NULL) < 0) {
                kerf_fleet_free(f);
                return -1;
        }
        int rc = kerf_sim_create(dir, f, 0, false);
        kerf_fleet_free(f);
        setenv(KERF_SIM_ENV, dir, 1);
        return rc;
}

static inline void sim_test_rmdir(const char *dir)
{
        char p[128];
        snprintf(p, sizeof(p), "%s/%s", dir, KERF_SIM_STATE_FILE);
        unlink(p);
        rmdir(dir);
}

#endif /* KERF_SIM_TEST_UTIL_H */
