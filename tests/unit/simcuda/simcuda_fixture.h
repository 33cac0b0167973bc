/* SPDX-License-Identifier: Apache-2.0 */
/* simcuda_fixture.h - a throwaway simulated node per test, and a fork-per-scenario runner */
#ifndef KERF_TEST_SIMCUDA_FIXTURE_H
#define KERF_TEST_SIMCUDA_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cuda_abi.h"
#include "simstate.h"

/* Creates a node with `n_gpus` GPUs of `model` in a fresh temp dir, exports KERF_SIM_DIR,
 * and returns the dir (static buffer). MIG is enabled on GPU 0 when `mig0`. */
const char *fx_node(const char *model, unsigned n_gpus, bool mig0);
/* Removes the temp dir created by fx_node. */
void fx_cleanup(void);
/* Runs fn in a child process (so every scenario gets its own cuInit) and returns its exit
 * status (0 = pass). */
int fx_run(void (*fn)(void));
/* One scenario on a fresh node: fx_node(model, n_gpus, mig0), KERF_SIM_CLOCK set to `clock`
 * (NULL: unset, the real clock), CUDA_VISIBLE_DEVICES unset, fx_run(fn), fx_cleanup().
 * Returns fx_run's status. */
int fx_scenario(void (*fn)(void), const char *model, unsigned n_gpus, bool mig0, const char *clock);
/* Defines the cmocka test t_<fn>: fx_scenario(fn, ...) must pass. */
#define FX_SCEN(fn, model, n_gpus, mig0, clock)                                                    \
        static void t_##fn(void **state)                                                           \
        {                                                                                          \
                (void)state;                                                                       \
                assert_int_equal(fx_scenario(fn, model, n_gpus, mig0, clock), 0);                  \
        }

/* Check inside a child: prints where and exits 1. */
#define CK(c)                                                                                      \
        do {                                                                                       \
                if (!(c)) {                                                                        \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);      \
                        exit(1);                                                                   \
                }                                                                                  \
        } while (0)
#define CU(call) CK((call) == CUDA_SUCCESS)

/* Inside a scenario: creates a context on device `dev` (it becomes current), or fails. */
CUcontext fx_ctx_on(int dev);
/* Inside a scenario: device memory in use (total - free, cuMemGetInfo_v2) seen by the current
 * context. */
uint64_t fx_used_now(void);

/* Module image with kernels k500 (500 us), k20ms (20 ms), kwave (100 us per wave). */
extern const char fx_module[];

#endif
