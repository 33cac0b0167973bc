/* SPDX-License-Identifier: Apache-2.0 */
/* fx_common.h - fixture pieces shared by the shim's test harnesses and bench/shim */
#ifndef KERF_TEST_SHIM_FX_COMMON_H
#define KERF_TEST_SHIM_FX_COMMON_H

/*
 * Header-only (static inline): included by shim_fx.h, stress_harness.h, test_compute.h and
 * bench/shim/bench_*.c. A simulated node of N x H200 made with the kerf-sim API, slice regions
 * made with kerf_slice_region_create, the shim's and the simulated driver's paths next to the
 * running program (KERF_SHIM_LIB overrides the shim), and the slice environment of a child.
 */

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kerf/core.h"
#include "kerf/slice_abi.h"
#include "simstate.h"

extern char **environ;

static inline uint64_t fxc_now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void fxc_sleep_ms(unsigned ms)
{
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* The running program's path (exe, may be NULL) and its directory (dir). 0 or -1. */
static inline int fxc_self(char *exe, size_t exe_len, char *dir, size_t dir_len)
{
        char buf[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
        if (n <= 0)
                return -1;
        buf[n] = 0;
        if (exe) {
                if ((size_t)n >= exe_len)
                        return -1;
                memcpy(exe, buf, (size_t)n + 1);
        }
        char *slash = strrchr(buf, '/');
        size_t k = slash ? (size_t)(slash - buf) : 0;
        if (k >= dir_len)
                return -1;
        memcpy(dir, buf, k);
        dir[k] = 0;
        return 0;
}

/* shim: KERF_SHIM_LIB or <dir>/../lib/libkerf-cuda.so; libdir: <dir>/../lib (the simulated
 * libcuda.so.1 and libnvidia-ml.so.1). */
static inline void fxc_lib_paths(const char *dir, char *shim, size_t shim_len, char *libdir,
                                 size_t libdir_len)
{
        const char *s = getenv("KERF_SHIM_LIB");
        if (s)
                snprintf(shim, shim_len, "%s", s);
        else
                snprintf(shim, shim_len, "%s/../lib/libkerf-cuda.so", dir);
        snprintf(libdir, libdir_len, "%s/../lib", dir);
}

/* A simulated node of `gpus` H200s in sim_dir. Returns kerf_sim_create's result, or -1. */
static inline int fxc_node_create(const char *sim_dir, unsigned gpus)
{
        kerf_fleet *f;
        const kerf_gpu_model *m = kerf_gpu_model_find("H200");
        if (!m || kerf_fleet_new(&f) < 0)
                return -1;
        if (kerf_fleet_add_node(f, "node0", 0, 0, "580.65.06", 13000) < 0) {
                kerf_fleet_free(f);
                return -1;
        }
        for (unsigned g = 0; g < gpus; g++)
                if (kerf_fleet_add_gpu(f, 0, m, false, 0, NULL) < 0) {
                        kerf_fleet_free(f);
                        return -1;
                }
        int rc = kerf_sim_create(sim_dir, f, 0, true);
        kerf_fleet_free(f);
        return rc;
}

/* Opens the node in sim_dir and reads GPU 0 into *gi; the node stays open in *ret_sim when
 * ret_sim is not NULL (also on failure, where it may be NULL), else it is closed. 0 or -1. */
static inline int fxc_node_gpu0(const char *sim_dir, kerf_sim **ret_sim, kerf_sim_gpu_info *gi)
{
        kerf_sim *sim = NULL;
        int rc = kerf_sim_open(sim_dir, &sim) < 0 || kerf_sim_gpu_get(sim, 0, gi) < 0 ? -1 : 0;
        if (ret_sim)
                *ret_sim = sim;
        else
                kerf_sim_close(sim);
        return rc;
}

/* A slice region at path (memory_limit cap of device_memory phys, compute guarantee pct and
 * ceiling lim, unit and task id). Returns kerf_slice_region_create's result. */
static inline int fxc_region_create(const char *path, uint64_t cap, uint64_t phys, unsigned pct,
                                    unsigned lim, uint32_t id)
{
        struct kerf_slice_init in = {.memory_limit = cap,
                                     .device_memory = phys,
                                     .compute_pct = pct,
                                     .compute_limit_pct = lim,
                                     .unit_id = id,
                                     .task_id = id};
        return kerf_slice_region_create(path, getuid(), getgid(), &in);
}

/* Copies environ into envp (at most max entries), leaving out what the slice environment sets:
 * LD_PRELOAD, LD_LIBRARY_PATH, KERF_*, CUDA_VISIBLE_DEVICES and, with asan, ASAN_OPTIONS.
 * Returns the number copied. */
static inline size_t fxc_env_inherit(char **envp, size_t max, bool asan)
{
        static const char *const drop[] = {"LD_PRELOAD=", "LD_LIBRARY_PATH=", "KERF_",
                                           "CUDA_VISIBLE_DEVICES=", "ASAN_OPTIONS="};
        size_t nd = sizeof(drop) / sizeof(drop[0]) - (asan ? 0 : 1), ne = 0;
        for (char **v = environ; *v && ne < max; v++) {
                bool skip = false;
                for (size_t i = 0; i < nd; i++)
                        skip |= !strncmp(*v, drop[i], strlen(drop[i]));
                if (!skip)
                        envp[ne++] = *v;
        }
        return ne;
}

/* The NAME=VALUE strings of a child's slice environment. */
typedef struct fxc_env {
        char pre[PATH_MAX + 16]; /* LD_PRELOAD=<shim> */
        char reg[160];           /* KERF_SLICE_REGION=<region> ("" when region is NULL) */
        char sim[160];           /* KERF_SIM_DIR=<sim_dir> */
        char cvd[96];            /* CUDA_VISIBLE_DEVICES=<cvd> */
        char lib[PATH_MAX + 24]; /* LD_LIBRARY_PATH=<libdir> */
} fxc_env;

static inline void fxc_env_fill(fxc_env *b, const char *shim, const char *region,
                                const char *sim_dir, const char *cvd, const char *libdir)
{
        snprintf(b->pre, sizeof(b->pre), "LD_PRELOAD=%s", shim);
        b->reg[0] = 0;
        if (region)
                snprintf(b->reg, sizeof(b->reg), "KERF_SLICE_REGION=%s", region);
        snprintf(b->sim, sizeof(b->sim), "KERF_SIM_DIR=%s", sim_dir);
        snprintf(b->cvd, sizeof(b->cvd), "CUDA_VISIBLE_DEVICES=%s", cvd);
        snprintf(b->lib, sizeof(b->lib), "LD_LIBRARY_PATH=%s", libdir);
}

/* Appends b to envp[*ne...]: LD_PRELOAD (when with_shim), KERF_SLICE_REGION, KERF_SIM_DIR,
 * CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH. */
static inline void fxc_env_push(char **envp, size_t *ne, fxc_env *b, bool with_shim)
{
        if (with_shim)
                envp[(*ne)++] = b->pre;
        envp[(*ne)++] = b->reg;
        envp[(*ne)++] = b->sim;
        envp[(*ne)++] = b->cvd;
        envp[(*ne)++] = b->lib;
}

/* child: the environment variable env when set (env may be NULL), else <dir>/<name>. */
static inline void fxc_child_path(char *child, size_t len, const char *env, const char *dir,
                                  const char *name)
{
        const char *s = env ? getenv(env) : NULL;
        if (s)
                snprintf(child, len, "%s", s);
        else
                snprintf(child, len, "%s/%s", dir, name);
}

/* rm -rf dir (unless keep_env is set in the environment); a message when that fails. */
static inline void fxc_rmdir(const char *dir, const char *keep_env, const char *who)
{
        if (!dir[0] || (keep_env && getenv(keep_env)))
                return;
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                fprintf(stderr, "%s%scould not remove %s\n", who ? who : "", who ? ": " : "", dir);
}

#endif /* KERF_TEST_SHIM_FX_COMMON_H */
