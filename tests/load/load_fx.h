/* SPDX-License-Identifier: Apache-2.0 */
/* load_fx.h - kerf-load's tests: a simulated node, slice regions, runs and their JSON lines */
#ifndef KERF_TEST_LOAD_FX_H
#define KERF_TEST_LOAD_FX_H

/*
 * Header-only (static) so that each test_*.c stays one executable. A test makes a simulated
 * node (1 x H200, the helpers of tests/unit/shim/fx_common.h) in a temp dir and runs
 * <build>/bin/kerf-load (KERF_LOAD_BIN overrides) with LD_LIBRARY_PATH=<build>/lib (the
 * simulated libcuda.so.1), KERF_SIM_DIR and CUDA_VISIBLE_DEVICES=<the GPU's uuid>; with a
 * region, also LD_PRELOAD=<build>/lib/libkerf-cuda.so, KERF_SLICE_REGION and KERF_SLICE_ABI=2.
 * stdout goes to DIR/out, stderr to DIR/err; lfx_lines parses stdout's JSON lines (jansson).
 */

#include <dlfcn.h>
#include <fcntl.h>
#include <math.h>
#include <jansson.h>
#include <signal.h>
#include <sys/wait.h>

#include "fx_common.h"

typedef struct lfx {
        char dir[64];
        char sim_dir[96];
        char region[96];
        char uuid[KERF_UUID_LEN];
        uint64_t phys;
        char load[PATH_MAX], shim[PATH_MAX], libdir[PATH_MAX];
        char out[128], err[128];
} lfx;

static inline int lfx_setup(lfx *e)
{
        char self[PATH_MAX - 64];
        memset(e, 0, sizeof(*e));
        if (fxc_self(NULL, 0, self, sizeof(self)) < 0)
                return -1;
        fxc_lib_paths(self, e->shim, sizeof(e->shim), e->libdir, sizeof(e->libdir));
        const char *lb = getenv("KERF_LOAD_BIN");
        if (lb)
                snprintf(e->load, sizeof(e->load), "%s", lb);
        else
                snprintf(e->load, sizeof(e->load), "%s/../bin/kerf-load", self);
        if (access(e->load, X_OK) < 0) {
                fprintf(stderr, "lfx: %s missing\n", e->load);
                return -1;
        }
        snprintf(e->dir, sizeof(e->dir), "/tmp/kerf-loadtest-XXXXXX");
        if (!mkdtemp(e->dir))
                return -1;
        snprintf(e->sim_dir, sizeof(e->sim_dir), "%s/node", e->dir);
        snprintf(e->out, sizeof(e->out), "%s/out", e->dir);
        snprintf(e->err, sizeof(e->err), "%s/err", e->dir);
        kerf_sim_gpu_info gi;
        if (fxc_node_create(e->sim_dir, 1) < 0 || fxc_node_gpu0(e->sim_dir, NULL, &gi) < 0)
                return -1;
        snprintf(e->uuid, sizeof(e->uuid), "%s", gi.uuid);
        e->phys = gi.mem_total;
        return 0;
}

/* A slice region (memory cap, compute pct) that the next runs use with the shim. 0 or -1. */
static inline int lfx_region(lfx *e, uint64_t cap, unsigned pct)
{
        snprintf(e->region, sizeof(e->region), "%s/slice", e->dir);
        unlink(e->region);
        if (access(e->shim, R_OK) < 0) {
                fprintf(stderr, "lfx: %s missing\n", e->shim);
                return -1;
        }
        return fxc_region_create(e->region, cap, e->phys, pct, pct, 1);
}

static inline void lfx_teardown(lfx *e)
{
        fxc_rmdir(e->dir, "KERF_LOAD_KEEP", "lfx");
}

/* Starts kerf-load args... (NULL-terminated, without the program); with_driver false leaves
 * LD_LIBRARY_PATH out (no libcuda.so.1 to find). Returns the pid or -1. */
static inline pid_t lfx_start(lfx *e, bool with_driver, const char *const *args)
{
        char *envp[512];
        size_t ne = fxc_env_inherit(envp, 480, true);
        fxc_env b;
        bool shim = e->region[0] != 0;
        fxc_env_fill(&b, e->shim, shim ? e->region : NULL, e->sim_dir, e->uuid, e->libdir);
        if (shim)
                envp[ne++] = b.pre;
        if (shim)
                envp[ne++] = b.reg;
        envp[ne++] = b.sim;
        envp[ne++] = b.cvd;
        if (with_driver)
                envp[ne++] = b.lib;
        envp[ne++] = "KERF_SLICE_ABI=2";
        envp[ne++] = "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0";
        envp[ne] = NULL;
        char *argv[64];
        size_t na = 0;
        argv[na++] = e->load;
        for (size_t i = 0; args[i] && na < 63; i++)
                argv[na++] = (char *)args[i];
        argv[na] = NULL;
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
                int in = open("/dev/null", O_RDONLY);
                int out = open(e->out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                int err = open(e->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
                if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
                    dup2(err, 2) < 0)
                        _exit(126);
                execve(e->load, argv, envp);
                _exit(127);
        }
        return pid;
}

/* The exit code, or 128 + the signal that killed it; -1 when waiting failed. */
static inline int lfx_wait(pid_t pid)
{
        int st;
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

static inline int lfx_run(lfx *e, const char *const *args)
{
        pid_t pid = lfx_start(e, true, args);
        return pid < 0 ? -1 : lfx_wait(pid);
}

/* Every stdout line parsed (array, caller decrefs). NULL when a line is not a JSON object
 * whose first key is "event" (the line is printed). */
static inline json_t *lfx_lines(const lfx *e)
{
        FILE *f = fopen(e->out, "r");
        if (!f)
                return NULL;
        json_t *arr = json_array();
        char line[65536];
        while (fgets(line, sizeof(line), f)) {
                json_error_t je;
                json_t *o = json_loads(line, 0, &je);
                if (!o || !json_is_object(o) || strncmp(line, "{\"event\":\"", 10) != 0) {
                        fprintf(stderr, "lfx: not a kerf-load JSON line: %s (%s)\n", line, je.text);
                        json_decref(o);
                        json_decref(arr);
                        fclose(f);
                        return NULL;
                }
                json_array_append_new(arr, o);
        }
        fclose(f);
        return arr;
}

static inline const char *lfx_ev(json_t *o)
{
        const char *s = json_string_value(json_object_get(o, "event"));
        return s ? s : "";
}

/* The last line of event ev (borrowed), or NULL. */
static inline json_t *lfx_find(json_t *arr, const char *ev)
{
        json_t *hit = NULL;
        size_t i;
        json_t *o;
        json_array_foreach(arr, i, o)
        {
                if (!strcmp(lfx_ev(o), ev))
                        hit = o;
        }
        return hit;
}

static inline size_t lfx_count(json_t *arr, const char *ev)
{
        size_t n = 0, i;
        json_t *o;
        json_array_foreach(arr, i, o)
        {
                n += !strcmp(lfx_ev(o), ev);
        }
        return n;
}

static inline double lfx_num(json_t *o, const char *key)
{
        json_t *v = json_object_get(o, key);
        return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The whole stderr of the last run (static buffer). */
static inline const char *lfx_stderr(const lfx *e)
{
        static char buf[8192];
        buf[0] = 0;
        FILE *f = fopen(e->err, "r");
        if (f) {
                size_t n = fread(buf, 1, sizeof(buf) - 1, f);
                buf[n] = 0;
                fclose(f);
        }
        return buf;
}

#endif /* KERF_TEST_LOAD_FX_H */
