/* SPDX-License-Identifier: Apache-2.0 */
/* shim_fx.h - parent side of the shim's own tests: node, region, mem_child runs */
#ifndef KERF_TEST_SHIM_FX_H
#define KERF_TEST_SHIM_FX_H

/*
 * Header-only (static) so that each test_*.c stays one executable. A test makes a simulated
 * node (1 x H200) and a slice region in a temp dir, then runs shim_mem_child SCENARIO with
 * LD_PRELOAD=<build>/lib/libkerf-cuda.so, LD_LIBRARY_PATH=<build>/lib (the simulated
 * libcuda.so.1 and libnvidia-ml.so.1), KERF_SIM_DIR, KERF_SLICE_REGION, KERF_SLICE_ABI=2 and
 * CUDA_VISIBLE_DEVICES=<the GPU's uuid>. KERF_SHIM_LIB overrides the shim's path.
 *
 * Under AddressSanitizer everything (children included) is built with ASan; the preloaded
 * shim then comes before libasan in the load order, which ASan accepts with
 * verify_asan_link_order=0 (set for the children).
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kerf/core.h"
#include "kerf/slice_abi.h"
#include "fx_common.h"
#include "simstate.h"

#define FX_MIB ((uint64_t)1 << 20)
#define FX_GIB ((uint64_t)1 << 30)

typedef struct fx {
        char dir[64];
        char sim_dir[96];
        char region[96];
        char uuid[KERF_UUID_LEN];
        uint64_t phys;
        char shim[PATH_MAX], child[PATH_MAX], libdir[PATH_MAX];
        struct kerf_slice_region *r; /* read-write: the test plays kerfd */
        char out[4096], err[4096];   /* the last fx_run's stdout and stderr */
} fx;

/* Node + region with memory_limit = cap (device_memory = the GPU's). 0 or -1. */
static inline int fx_setup(fx *e, uint64_t cap)
{
        char self[PATH_MAX - 64];
        memset(e, 0, sizeof(*e));
        if (fxc_self(NULL, 0, self, sizeof(self)) < 0)
                return -1;
        fxc_lib_paths(self, e->shim, sizeof(e->shim), e->libdir, sizeof(e->libdir));
        fxc_child_path(e->child, sizeof(e->child), NULL, self, "shim_mem_child");
        if (access(e->shim, R_OK) < 0 || access(e->child, X_OK) < 0) {
                fprintf(stderr, "fx: %s or %s missing\n", e->shim, e->child);
                return -1;
        }
        snprintf(e->dir, sizeof(e->dir), "/tmp/kerf-shimtest-XXXXXX");
        if (!mkdtemp(e->dir))
                return -1;
        snprintf(e->sim_dir, sizeof(e->sim_dir), "%s/node", e->dir);
        snprintf(e->region, sizeof(e->region), "%s/slice", e->dir);
        kerf_sim_gpu_info gi;
        if (fxc_node_create(e->sim_dir, 1) < 0 || fxc_node_gpu0(e->sim_dir, NULL, &gi) < 0)
                return -1;
        snprintf(e->uuid, sizeof(e->uuid), "%s", gi.uuid);
        e->phys = gi.mem_total;
        if (fxc_region_create(e->region, cap, e->phys, 100, 100, 1) < 0 ||
            kerf_slice_region_map(e->region, true, &e->r) < 0)
                return -1;
        return 0;
}

static inline void fx_teardown(fx *e)
{
        kerf_slice_region_unmap(e->r);
        e->r = NULL;
        fxc_rmdir(e->dir, "KERF_SHIMTEST_KEEP", NULL);
}

/* Starts `shim_mem_child args...` with the slice environment plus `extra` (NAME=VALUE
 * strings; "-NAME" removes NAME). stdout goes to a pipe (*ret_out) unless ret_out is NULL,
 * then to dir/out; stdin from a pipe (*ret_in) or /dev/null; stderr to dir/err. */
static inline pid_t fx_spawn(fx *e, const char *const *args, const char *const *extra, int *ret_in,
                             int *ret_out)
{
        char *envp[512];
        size_t ne = fxc_env_inherit(envp, 480, true);
        fxc_env b;
        fxc_env_fill(&b, e->shim, e->region, e->sim_dir, e->uuid, e->libdir);
        const char *base[] = {b.pre,
                              b.reg,
                              b.sim,
                              b.cvd,
                              b.lib,
                              "KERF_SLICE_ABI=2",
                              "KERF_SIM_CTX_OVERHEAD_MIB=300",
                              "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0",
                              NULL};
        for (size_t i = 0; base[i]; i++) {
                bool removed = false;
                size_t klen = strcspn(base[i], "=") + 1; /* NAME= */
                for (size_t j = 0; extra && extra[j]; j++) {
                        const char *x = extra[j][0] == '-' ? extra[j] + 1 : extra[j];
                        /* "-NAME" removes NAME; "NAME=VALUE" replaces it */
                        if (!strncmp(base[i], x, klen - 1) &&
                            (x[klen - 1] == '=' || (extra[j][0] == '-' && !x[klen - 1])))
                                removed = true;
                }
                if (!removed)
                        envp[ne++] = (char *)base[i];
        }
        for (size_t j = 0; extra && extra[j] && ne < 510; j++)
                if (extra[j][0] != '-')
                        envp[ne++] = (char *)extra[j];
        envp[ne] = NULL;
        int pin[2] = {-1, -1}, pout[2] = {-1, -1};
        if ((ret_in && pipe2(pin, O_CLOEXEC) < 0) || (ret_out && pipe2(pout, O_CLOEXEC) < 0))
                return -1;
        char outp[128], errp[128];
        snprintf(outp, sizeof(outp), "%s/out", e->dir);
        snprintf(errp, sizeof(errp), "%s/err", e->dir);
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
                int in = ret_in ? pin[0] : open("/dev/null", O_RDONLY);
                int out = ret_out ? pout[1] : open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                int err = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
                    dup2(err, 2) < 0)
                        _exit(126);
                char *argv[16];
                size_t na = 0;
                argv[na++] = e->child;
                for (size_t i = 0; args[i] && na < 15; i++)
                        argv[na++] = (char *)args[i];
                argv[na] = NULL;
                execve(e->child, argv, envp);
                _exit(127);
        }
        if (ret_in) {
                close(pin[0]);
                *ret_in = pin[1];
        }
        if (ret_out) {
                close(pout[1]);
                *ret_out = pout[0];
        }
        return pid;
}

static inline void fx_slurp(const char *path, char *buf, size_t n)
{
        buf[0] = 0;
        int fd = open(path, O_RDONLY);
        if (fd < 0)
                return;
        ssize_t k = read(fd, buf, n - 1);
        buf[k > 0 ? k : 0] = 0;
        close(fd);
}

/* Waits for pid; exit status, or 128 + signal. Reads dir/out and dir/err into e. */
static inline int fx_wait(fx *e, pid_t pid)
{
        int st = 0;
        if (pid < 0 || waitpid(pid, &st, 0) != pid)
                return -1;
        char p[128];
        snprintf(p, sizeof(p), "%s/out", e->dir);
        fx_slurp(p, e->out, sizeof(e->out));
        snprintf(p, sizeof(p), "%s/err", e->dir);
        fx_slurp(p, e->err, sizeof(e->err));
        if (e->err[0])
                fprintf(stderr, "[child stderr] %s", e->err);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Runs one scenario to completion. */
static inline int fx_run(fx *e, const char *const *args, const char *const *extra)
{
        return fx_wait(e, fx_spawn(e, args, extra, NULL, NULL));
}

#define FX_ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

#endif /* KERF_TEST_SHIM_FX_H */
