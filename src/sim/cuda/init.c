/* SPDX-License-Identifier: Apache-2.0 */
/* init.c - cuInit: opens the simulated node, applies CUDA_VISIBLE_DEVICES, driver version */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kerf/errno.h"
#include "internal.h"

kc_global kc_g = {.mu = PTHREAD_MUTEX_INITIALIZER};

void kc__lock(void)
{
        pthread_mutex_lock(&kc_g.mu);
}

void kc__unlock(void)
{
        pthread_mutex_unlock(&kc_g.mu);
}

CUresult kc__from_errno(int err)
{
        switch (-err) {
        case 0:
                return CUDA_SUCCESS;
        case ENOMEM:
        case ENOSPC:
                return CUDA_ERROR_OUT_OF_MEMORY;
        case EINVAL:
                return CUDA_ERROR_INVALID_VALUE;
        case ENOENT:
                return CUDA_ERROR_INVALID_DEVICE;
        case KERF_EDEVICE:
                return CUDA_ERROR_DEVICE_UNAVAILABLE;
        case KERF_EUNSUPP:
                return CUDA_ERROR_NOT_SUPPORTED;
        default:
                return CUDA_ERROR_UNKNOWN;
        }
}

CUresult kc__check_init(void)
{
        /* init_done is written once under mu before any device is visible; readers racing with
         * cuInit see false and get NOT_INITIALIZED, as with the real driver. */
        return __atomic_load_n(&kc_g.init_done, __ATOMIC_ACQUIRE) ? CUDA_SUCCESS
                                                                  : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult kc__check_dev(CUdevice d)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        return d >= 0 && d < kc_g.n_devs ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

/* Fills dev from a resolved target. */
static int dev_fill(kc_dev *dev, kerf_sim_target t)
{
        kerf_sim_gpu_info gi;
        uint64_t total, used;
        int r = kerf_sim_gpu_get(kc_g.sim, (unsigned)t.gpu, &gi);
        if (r < 0)
                return r;
        r = kerf_sim_target_mem(kc_g.sim, t, &total, &used);
        if (r < 0)
                return r;
        memset(dev, 0, sizeof(*dev));
        dev->target = t;
        dev->model = gi.model;
        dev->mem_total = total;
        snprintf(dev->gpu_uuid, sizeof(dev->gpu_uuid), "%s", gi.uuid);
        r = kerf_sim_target_uuid(kc_g.sim, t, dev->uuid, sizeof(dev->uuid));
        if (r < 0)
                return r;
        dev->sms = gi.model->sms;
        snprintf(dev->name, sizeof(dev->name), "%s", gi.model->product);
        if (t.gi >= 0) {
                kerf_sim_gi_info g;
                r = kerf_sim_gi_get(kc_g.sim, (unsigned)t.gpu, (unsigned)t.gi, &g);
                if (r < 0)
                        return r;
                unsigned ci_slices = g.profile->compute_slices;
                for (unsigned i = 0; i < g.n_cis; i++)
                        if ((int)g.cis[i].id == t.ci)
                                ci_slices = g.cis[i].size;
                dev->sms = g.profile->sms * ci_slices / (g.profile->compute_slices ?: 1);
                snprintf(dev->name, sizeof(dev->name), "%s MIG %s", gi.model->product,
                         g.profile->name);
        }
        return 0;
}

/* First MIG device (lowest GI, then CI) of GPU `gpu`; -ENOENT when it has none. */
static int first_mig(unsigned gpu, kerf_sim_target *ret)
{
        kerf_sim_gi_info gis[KERF_SIM_MAX_GIS];
        unsigned n = 0;
        int r = kerf_sim_gi_list(kc_g.sim, gpu, gis, KERF_SIM_MAX_GIS, &n);
        if (r < 0)
                return r;
        for (unsigned i = 0; i < n && i < KERF_SIM_MAX_GIS; i++)
                if (gis[i].n_cis) {
                        *ret = (kerf_sim_target){(int)gpu, (int)gis[i].id, (int)gis[i].cis[0].id};
                        return 0;
                }
        return -ENOENT;
}

static bool have_target(kerf_sim_target t)
{
        for (int i = 0; i < kc_g.n_devs; i++) {
                kerf_sim_target o = kc_g.devs[i].target;
                if (o.gpu == t.gpu && o.gi == t.gi && o.ci == t.ci)
                        return true;
        }
        return false;
}

static int add_target(kerf_sim_target t)
{
        if (kc_g.n_devs >= KC_MAX_DEVS || have_target(t))
                return -EINVAL;
        int r = dev_fill(&kc_g.devs[kc_g.n_devs], t);
        if (r < 0)
                return r;
        kc_g.n_devs++;
        return 0;
}

/* Resolves one CUDA_VISIBLE_DEVICES entry like the driver: an index, a (prefix of a) GPU-
 * uuid, or a MIG- uuid. Returns -ENOENT when it names nothing. */
static int resolve_entry(const char *e, bool *mig_used)
{
        unsigned n = kerf_sim_gpu_count(kc_g.sim);
        kerf_sim_target t = {-1, -1, -1};
        if (isdigit((unsigned char)e[0])) {
                char *end;
                long v = strtol(e, &end, 10);
                if (*end || v < 0 || v >= (long)n)
                        return -ENOENT;
                t.gpu = (int)v;
        } else if (!strncmp(e, "GPU-", 4)) {
                int hit = -1;
                for (unsigned i = 0; i < n; i++) {
                        kerf_sim_gpu_info gi;
                        if (kerf_sim_gpu_get(kc_g.sim, i, &gi) < 0)
                                continue;
                        if (!strncmp(gi.uuid, e, strlen(e))) {
                                if (hit >= 0)
                                        return -ENOENT; /* ambiguous prefix */
                                hit = (int)i;
                        }
                }
                if (hit < 0)
                        return -ENOENT;
                t.gpu = hit;
        } else if (!strncmp(e, "MIG-", 4)) {
                int r = kerf_sim_resolve(kc_g.sim, e, &t);
                if (r < 0 || t.gi < 0)
                        return -ENOENT;
        } else {
                return -ENOENT;
        }
        if (t.gi < 0) {
                kerf_sim_gpu_info gi;
                if (kerf_sim_gpu_get(kc_g.sim, (unsigned)t.gpu, &gi) < 0)
                        return -ENOENT;
                if (gi.mig_enabled && first_mig((unsigned)t.gpu, &t) < 0)
                        return -ENOENT;
        }
        if (t.gi >= 0) {
                /* A CUDA process enumerates at most one MIG device; further ones are skipped. */
                if (*mig_used)
                        return 0;
                *mig_used = true;
        }
        return add_target(t);
}

static void enumerate(void)
{
        const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
        bool mig_used = false;
        kc_g.n_devs = 0;
        if (!cvd) {
                unsigned n = kerf_sim_gpu_count(kc_g.sim);
                for (unsigned i = 0; i < n; i++) {
                        kerf_sim_gpu_info gi;
                        kerf_sim_target t = {(int)i, -1, -1};
                        if (kerf_sim_gpu_get(kc_g.sim, i, &gi) < 0)
                                continue;
                        if (gi.mig_enabled) {
                                if (mig_used || first_mig(i, &t) < 0)
                                        continue;
                                mig_used = true;
                        }
                        add_target(t);
                }
                return;
        }
        /* Entries are taken in order until the first one that names no device. */
        /* A copy as long as the value: a fixed buffer used to cut a long list mid-entry. */
        char *buf = strdup(cvd);
        if (!buf)
                return; /* out of memory: no devices, cuInit answers NO_DEVICE */
        char *save = NULL;
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                while (isspace((unsigned char)*tok))
                        tok++;
                size_t l = strlen(tok);
                while (l && isspace((unsigned char)tok[l - 1]))
                        tok[--l] = 0;
                if (!l || resolve_entry(tok, &mig_used) < 0)
                        break;
        }
        free(buf);
}

static void read_env(void)
{
        const char *s = getenv("KERF_SIM_CTX_OVERHEAD_MIB");
        kc_g.ctx_overhead = KC_CTX_OVERHEAD;
        if (s && *s) {
                char *end;
                errno = 0;
                unsigned long long v = strtoull(s, &end, 10);
                if (!*end && !errno && s[0] != '-' && v <= (UINT64_MAX >> 20))
                        kc_g.ctx_overhead = v << 20; /* else ignored: the default stays */
        }
        s = getenv("KERF_SIM_CLOCK");
        kc_g.virtual_clock = s && !strcmp(s, "virtual");
}

KERF_CUDA_EXPORT CUresult cuInit(unsigned int Flags)
{
        if (Flags)
                return CUDA_ERROR_INVALID_VALUE;
        kc__lock();
        if (kc_g.init_done || kc_g.init_result) {
                CUresult r = kc_g.init_done ? CUDA_SUCCESS : kc_g.init_result;
                kc__unlock();
                return r;
        }
        CUresult res = CUDA_ERROR_NO_DEVICE;
        kerf_sim_node_info ni;
        read_env();
        kc_g.pid = getpid();
        if (kerf_sim_open(NULL, &kc_g.sim) < 0)
                goto out;
        if (kerf_sim_node_get(kc_g.sim, &ni) < 0)
                goto out;
        kc_g.cuda_version = ni.cuda_version;
        enumerate();
        if (kc_g.n_devs == 0)
                goto out;
        res = CUDA_SUCCESS;
        __atomic_store_n(&kc_g.init_done, true, __ATOMIC_RELEASE);
out:
        if (res) {
                kc_g.sim = kerf_sim_close(kc_g.sim);
                kc_g.init_result = res; /* the real driver keeps failing the same way */
        }
        kc__unlock();
        return res;
}

KERF_CUDA_EXPORT CUresult cuDriverGetVersion(int *driverVersion)
{
        if (!driverVersion)
                return CUDA_ERROR_INVALID_VALUE;
        /* Works before cuInit, as the real one does: read the node's version directly. */
        int v = kc_g.cuda_version;
        if (!v) {
                kerf_sim *st = NULL;
                kerf_sim_node_info ni;
                v = KERF_CUDA_ABI_VERSION;
                if (kerf_sim_open(NULL, &st) == 0 && kerf_sim_node_get(st, &ni) == 0)
                        v = ni.cuda_version;
                kerf_sim_close(st);
        }
        *driverVersion = v;
        return CUDA_SUCCESS;
}

/* Process exit: hand the GPU token back and drop this process's charges at once rather than
 * waiting for other processes to notice the pid is gone. */
__attribute__((destructor)) static void kc_fini(void)
{
        if (!kc_g.init_done || getpid() != kc_g.pid)
                return;
        kc__engine_shutdown();
        kerf_sim_proc_detach_all(kc_g.sim, kc_g.pid);
}
