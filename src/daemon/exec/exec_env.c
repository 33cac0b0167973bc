/* SPDX-License-Identifier: Apache-2.0 */
/* exec_env.c - the unit contract's environment (docs/SHIM-CONTRACT.md) and a task's env */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "kerf/slice_abi.h"

/* ---- environment -------------------------------------------------------------------------- */

struct strv {
        char **v;
        size_t n, cap;
};

static int strv_add(struct strv *s, char *str)
{
        if (!str)
                return -ENOMEM;
        if (s->n + 2 > s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 16;
                char **v = realloc(s->v, cap * sizeof(*v));
                if (!v) {
                        free(str);
                        return -ENOMEM;
                }
                s->v = v;
                s->cap = cap;
        }
        s->v[s->n++] = str;
        s->v[s->n] = NULL;
        return 0;
}

static int strv_addf(struct strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int strv_addf(struct strv *s, const char *fmt, ...)
{
        va_list ap;
        char *str;

        va_start(ap, fmt);
        int r = vasprintf(&str, fmt, ap);
        va_end(ap);
        return strv_add(s, r < 0 ? NULL : str);
}

void kerf_exec_env_free(char **env)
{
        if (!env)
                return;
        for (char **p = env; *p; p++)
                free(*p);
        free(env);
}

static bool is_slice_kind(kerf_unit_kind k)
{
        return k == KERF_UNIT_SLICE || k == KERF_UNIT_TSLICE;
}

static bool bad_value(const char *s)
{
        return !s || !*s || strchr(s, '\n');
}

int kerf__exec_unit_check(const kerf_exec_unit *u)
{
        if ((unsigned)u->kind >= KERF_UNIT_KIND_COUNT || bad_value(u->visible_devices) ||
            strpbrk(u->visible_devices, " =\t"))
                return -EINVAL;
        if (u->compute_pct > 100 || u->compute_limit_pct > 100 ||
            (u->compute_limit_pct && u->compute_limit_pct < u->compute_pct))
                return -EINVAL;
        bool shim = is_slice_kind(u->kind) || (u->kind == KERF_UNIT_MPS && u->shim_path);
        /* an empty shim path means the shim is not installed: the slice runs unenforced */
        if (shim && (!u->shim_path || strchr(u->shim_path, '\n') || bad_value(u->region_path) ||
                     strpbrk(u->shim_path, " :")))
                return -EINVAL;
        if (u->kind == KERF_UNIT_MPS && u->mps_thread_pct > 100)
                return -EINVAL;
        return 0;
}

static bool break_limiter;

void kerf_exec_test_break_limiter(bool on)
{
        break_limiter = on;
}

int kerf_exec_unit_env(const kerf_exec_unit *u, uint64_t task_id, const char *socket_path,
                       char ***ret)
{
        struct strv s = {0};
        int r = 0;

        if (!ret || task_id == 0 || (u && kerf__exec_unit_check(u) < 0) ||
            (socket_path && bad_value(socket_path)))
                return -EINVAL;
        r = strv_addf(&s, "CUDA_VISIBLE_DEVICES=%s", u ? u->visible_devices : "");
        if (!r)
                r = strv_addf(&s, "KERF_TASK_ID=%" PRIu64, task_id);
        if (!r && socket_path)
                r = strv_addf(&s, "KERF_SOCKET=%s", socket_path);
        if (!r && u) {
                r = strv_addf(&s, "KERF_UNIT_ID=%" PRIu64, u->unit_id);
                if (!r)
                        r = strv_addf(&s, "KERF_UNIT_KIND=%s", kerf_unit_kind_name(u->kind));
        }
        if (!r && u && (is_slice_kind(u->kind) || (u->kind == KERF_UNIT_MPS && u->shim_path))) {
                uint32_t lim = u->compute_limit_pct ? u->compute_limit_pct : u->compute_pct;
                if (*u->shim_path)
                        r = strv_addf(&s, "LD_PRELOAD=%s", u->shim_path);
                if (!r)
                        r = strv_addf(&s, "KERF_SLICE_ABI=%u", KERF_SLICE_ABI_VERSION);
                if (!r)
                        r = strv_addf(&s, "KERF_SLICE_REGION=%s", u->region_path);
                if (!r)
                        r = strv_addf(&s, "KERF_SLICE_MEMORY_LIMIT=%" PRIu64, u->memory_limit);
                if (!r)
                        r = strv_addf(&s, "KERF_SLICE_COMPUTE_PCT=%u", u->compute_pct);
                if (!r)
                        r = strv_addf(&s, "KERF_SLICE_COMPUTE_LIMIT_PCT=%u", lim);
                if (!r)
                        r = strv_addf(&s, "KERF_SLICE_UNIT_ID=%" PRIu64, u->unit_id);
                if (!r)
                        r = strv_addf(&s, "KERF_SLICE_TASK_ID=%" PRIu64, task_id);
                if (!r && break_limiter)
                        r = strv_addf(&s, "KERF_SHIM_TEST_BREAK_LIMITER=1");
        }
        if (!r && u && u->kind == KERF_UNIT_MPS) {
                if (u->mps_pipe_dir && !bad_value(u->mps_pipe_dir))
                        r = strv_addf(&s, "CUDA_MPS_PIPE_DIRECTORY=%s", u->mps_pipe_dir);
                if (!r && u->mps_thread_pct)
                        r = strv_addf(&s, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%u",
                                      u->mps_thread_pct);
                if (!r && u->memory_limit)
                        r = strv_addf(&s, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=%" PRIu64 "M",
                                      u->memory_limit / (1024 * 1024));
        }
        if (r < 0) {
                kerf_exec_env_free(s.v);
                return r;
        }
        *ret = s.v;
        return 0;
}

size_t kerf__exec_name_len(const char *entry)
{
        const char *eq = strchr(entry, '=');
        return eq ? (size_t)(eq - entry) : 0;
}

/* Finds the entry named like `entry` (up to its '='). */
char **kerf__exec_env_find(char **env, const char *entry)
{
        size_t len = kerf__exec_name_len(entry);
        for (char **p = env; p && *p; p++)
                if (kerf__exec_name_len(*p) == len && strncmp(*p, entry, len) == 0)
                        return p;
        return NULL;
}

/* The task's environment: the spec's variables, minus the KERF_ namespace and what the
 * contract sets, then the contract, then a default PATH. LD_PRELOAD of a slice keeps the
 * user's libraries after the shim, which must come first. */
int kerf__exec_build_env(const kerf_exec_spec *sp, char ***ret)
{
        struct strv s = {0};
        char **contract = NULL;
        const char *user_preload = NULL;
        int r;

        const char *user_libpath = NULL;

        if ((sp->sim_dir && bad_value(sp->sim_dir)) || (sp->lib_dir && bad_value(sp->lib_dir)) ||
            (sp->lib_dir && strchr(sp->lib_dir, ':')))
                return -EINVAL;
        r = kerf_exec_unit_env(sp->unit, sp->task_id, sp->socket_path, &contract);
        if (r < 0)
                return r;
        for (const char *const *e = sp->env; !r && e && *e; e++) {
                if (strncmp(*e, "KERF_", 5) == 0)
                        continue;
                if (strncmp(*e, "LD_PRELOAD=", 11) == 0)
                        user_preload = *e + 11;
                if (kerf__exec_env_find(contract, *e))
                        continue;
                if (sp->lib_dir && strncmp(*e, "LD_LIBRARY_PATH=", 16) == 0) {
                        user_libpath = *e + 16;
                        continue;
                }
                r = strv_add(&s, strdup(*e));
        }
        if (!r && sp->sim_dir)
                r = strv_addf(&s, "KERF_SIM_DIR=%s", sp->sim_dir);
        if (!r && sp->lib_dir)
                r = user_libpath && *user_libpath
                        ? strv_addf(&s, "LD_LIBRARY_PATH=%s:%s", sp->lib_dir, user_libpath)
                        : strv_addf(&s, "LD_LIBRARY_PATH=%s", sp->lib_dir);
        for (char **c = contract; !r && *c; c++) {
                if (strncmp(*c, "LD_PRELOAD=", 11) == 0 && user_preload && *user_preload)
                        r = strv_addf(&s, "%s %s", *c, user_preload);
                else
                        r = strv_add(&s, strdup(*c));
        }
        if (!r && !kerf__exec_env_find(s.v, "PATH="))
                r = strv_add(&s, strdup("PATH=" KERF__EXEC_DEFAULT_PATH));
        kerf_exec_env_free(contract);
        if (r < 0) {
                kerf_exec_env_free(s.v);
                return r;
        }
        *ret = s.v;
        return 0;
}

/* ---- spec --------------------------------------------------------------------------------- */

#define MAX_ARGS   4096
#define MAX_ENV    1024
#define MAX_GROUPS 256

int kerf__exec_validate(const kerf_exec_spec *sp)
{
        size_t n = 0;

        if (!sp || sp->task_id == 0 || !sp->argv || !sp->argv[0] || !sp->argv[0][0])
                return -EINVAL;
        while (sp->argv[n])
                if (++n > MAX_ARGS)
                        return -E2BIG;
        n = 0;
        for (const char *const *e = sp->env; e && *e; e++) {
                if (++n > MAX_ENV || kerf__exec_name_len(*e) == 0)
                        return n > MAX_ENV ? -E2BIG : -EINVAL;
        }
        if (sp->cwd && !sp->cwd[0])
                return -EINVAL;
        if (sp->n_groups > MAX_GROUPS || (sp->n_groups && !sp->groups))
                return -EINVAL;
        if (sp->unit && kerf__exec_unit_check(sp->unit) < 0)
                return -EINVAL;
        return 0;
}

#ifdef KERF_SAN_RUNTIME
/* Sanitizer builds only (make asan / make tsan; docs/DAEMON.md "Sanitizers"): the shim is
 * built with the sanitizer, whose runtime must come first in an uninstrumented task; the
 * runtime's own options (KERF_SAN_OPTIONS) keep leak reports out of the task's exit status.
 * ThreadSanitizer's runtime cannot be preloaded into an uninstrumented program (the task
 * crashes): under make tsan tasks run without the shim (KERF_SAN_NO_PRELOAD). Only kerfd
 * turns it on (main.c): the executor's unit tests see the environment as built. */
bool kerf__exec_san_env;
int kerf__exec_san_env_apply(char ***envp)
{
        size_t n = 0, k = 0;
        bool preload = false;
        char **v;

        while ((*envp)[n])
                n++;
        v = realloc(*envp, (n + 2) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        *envp = v;
        v[n] = NULL;
        for (size_t i = 0; i < n; i++) {
                char *e;
                if (strncmp(v[i], "LD_PRELOAD=", 11) != 0) {
                        v[k++] = v[i];
                        continue;
                }
#ifdef KERF_SAN_NO_PRELOAD
                free(v[i]);
                continue;
#endif
                if (asprintf(&e, "LD_PRELOAD=%s %s", KERF_SAN_RUNTIME, v[i] + 11) < 0)
                        return -ENOMEM;
                free(v[i]);
                v[k++] = e;
                preload = true;
        }
        v[k] = NULL;
        if (preload && !(v[k] = strdup(KERF_SAN_OPTIONS)))
                return -ENOMEM;
        v[k + 1] = NULL;
        return 0;
}
#endif
