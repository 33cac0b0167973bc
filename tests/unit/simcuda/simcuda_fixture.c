/* SPDX-License-Identifier: Apache-2.0 */
/* simcuda_fixture.c - temp simulated nodes and process isolation for the libcuda tests */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "simcuda_fixture.h"

const char fx_module[] = "KERFSIM-MODULE 1\n"
                         "# test kernels\n"
                         "kernel k500 cost_us=500\n"
                         "kernel k20ms cost_us=20000\n"
                         "kernel kwave cost_us=100 scale=waves\n";

static char dir[256];

const char *fx_node(const char *model, unsigned n_gpus, bool mig0)
{
        snprintf(dir, sizeof(dir), "/tmp/kerf-simcuda-XXXXXX");
        if (!mkdtemp(dir))
                abort();
        kerf_fleet *f;
        if (kerf_fleet_new(&f) < 0 || kerf_fleet_add_node(f, "node0", 0, 0, "580.65.06", 13000) < 0)
                abort();
        const kerf_gpu_model *m = kerf_gpu_model_find(model);
        for (unsigned i = 0; i < n_gpus; i++)
                if (kerf_fleet_add_gpu(f, 0, m, mig0 && i == 0, 0, NULL) < 0)
                        abort();
        if (kerf_sim_create(dir, f, 0, true) < 0)
                abort();
        kerf_fleet_free(f);
        setenv("KERF_SIM_DIR", dir, 1);
        return dir;
}

void fx_cleanup(void)
{
        if (!dir[0])
                return;
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", dir);
        dir[0] = 0;
}

int fx_run(void (*fn)(void))
{
        fflush(NULL);
        pid_t p = fork();
        if (p == 0) {
                fn();
                exit(0);
        }
        int st = 0;
        waitpid(p, &st, 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int fx_scenario(void (*fn)(void), const char *model, unsigned n_gpus, bool mig0, const char *clock)
{
        fx_node(model, n_gpus, mig0);
        if (clock)
                setenv("KERF_SIM_CLOCK", clock, 1);
        else
                unsetenv("KERF_SIM_CLOCK");
        unsetenv("CUDA_VISIBLE_DEVICES");
        int rc = fx_run(fn);
        fx_cleanup();
        return rc;
}

CUcontext fx_ctx_on(int dev)
{
        CUcontext c;
        CU(cuCtxCreate_v4(&c, NULL, 0, dev));
        return c;
}

uint64_t fx_used_now(void)
{
        size_t f, t;
        CU(cuMemGetInfo_v2(&f, &t));
        return t - f;
}
