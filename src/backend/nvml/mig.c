/* SPDX-License-Identifier: Apache-2.0 */
/* mig.c - NVML backend: GPU snapshots, MIG instance listing, create at placement, destroy */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kerf/errno.h"

/* Full-size compute-instance profile index for a GI of `slices` compute slices (§1.3). */
static int ci_index_for_slices(unsigned slices)
{
        switch (slices) {
        case 1:
                return NVML_COMPUTE_INSTANCE_PROFILE_1_SLICE;
        case 2:
                return NVML_COMPUTE_INSTANCE_PROFILE_2_SLICE;
        case 3:
                return NVML_COMPUTE_INSTANCE_PROFILE_3_SLICE;
        case 4:
                return NVML_COMPUTE_INSTANCE_PROFILE_4_SLICE;
        case 6:
                return NVML_COMPUTE_INSTANCE_PROFILE_6_SLICE;
        case 7:
                return NVML_COMPUTE_INSTANCE_PROFILE_7_SLICE;
        case 8:
                return NVML_COMPUTE_INSTANCE_PROFILE_8_SLICE;
        default:
                return -1;
        }
}

/* kerf's model for a device: by PCI device id when the library reports one that is in the
 * model table (the hardware's own identity: a board the driver names "NVIDIA Graphics Device"
 * is still found), else by the NVML name `name`. NULL when neither is known. */
static const kerf_gpu_model *model_match(struct nvb *p, nvmlDevice_t d, const char *name)
{
        nvmlPciInfo_t pci;
        if (p->f.nvmlDeviceGetPciInfo_v3 && p->f.nvmlDeviceGetPciInfo_v3(d, &pci) == NVML_SUCCESS &&
            pci.pciDeviceId != 0) {
                for (size_t i = 0; i < kerf_gpu_model_count(); i++) {
                        const kerf_gpu_model *m = kerf_gpu_model_at(i);
                        if (m->pci_device_id == pci.pciDeviceId)
                                return m;
                }
        }
        return kerf_gpu_model_find(name);
}

static const kerf_gpu_model *model_of(struct nvb *p, nvmlDevice_t d)
{
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
        if (p->f.nvmlDeviceGetName(d, name, sizeof(name)) != NVML_SUCCESS)
                return NULL;
        return model_match(p, d, name);
}

/* The device handle of `gpu`, or an error when discovery could not open it. */
static int dev_of(struct nvb *p, unsigned gpu, nvmlDevice_t *ret, char *err)
{
        if (!p->gpus[gpu].dev)
                return kerf__nvb_fail(p, err, p->gpus[gpu].open_rc, "GPU %u cannot be opened", gpu);
        *ret = p->gpus[gpu].dev;
        return 0;
}

static int need(char *err, const void *fn, const char *name)
{
        if (fn)
                return 0;
        return kerf__nvb_refuse(err, -KERF_EUNSUPP, "the NVML library lacks %s", name);
}
#define NEED(p, fn) need(err, (const void *)(p)->f.fn, #fn)

static bool lost(nvmlReturn_t rc)
{
        return rc == NVML_ERROR_GPU_IS_LOST;
}

int kerf__nvb_gpu_get(kerf_backend *b, unsigned gpu, kerf_backend_gpu *ret)
{
        struct nvb *p = kerf_backend_priv(b);
        struct nvb_gpu *g = &p->gpus[gpu];
        char err[NVB_ERR];
        nvmlReturn_t rc;
        unsigned cur = 0, pend = 0;
        int r;
        ret->index = gpu;
        snprintf(ret->uuid, sizeof(ret->uuid), "%s", g->uuid);
        if ((r = dev_of(p, gpu, &g->dev, err)) < 0) {
                kerf_backend_set_error(b, "%s", err);
                return r;
        }
        rc = p->f.nvmlDeviceGetName(g->dev, ret->name, sizeof(ret->name));
        if (lost(rc)) {
                ret->lost = true;
                return 0;
        }
        if (rc != NVML_SUCCESS) {
                r = kerf__nvb_fail(p, err, rc, "nvmlDeviceGetName(GPU %u)", gpu);
                kerf_backend_set_error(b, "%s", err);
                return r;
        }
        ret->model = model_match(p, g->dev, ret->name);
        if (!g->uuid[0] && p->f.nvmlDeviceGetUUID(g->dev, g->uuid, sizeof(g->uuid)) == NVML_SUCCESS)
                snprintf(ret->uuid, sizeof(ret->uuid), "%s", g->uuid);
        ret->minor = gpu;
        if (p->f.nvmlDeviceGetMinorNumber)
                p->f.nvmlDeviceGetMinorNumber(g->dev, &ret->minor);
        if (p->f.nvmlDeviceGetMemoryInfo_v2) {
                nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
                rc = p->f.nvmlDeviceGetMemoryInfo_v2(g->dev, &m);
                if (rc == NVML_SUCCESS) {
                        ret->mem_total = m.total;
                        ret->mem_used = m.used;
                }
        } else if (p->f.nvmlDeviceGetMemoryInfo) {
                nvmlMemory_t m;
                rc = p->f.nvmlDeviceGetMemoryInfo(g->dev, &m);
                if (rc == NVML_SUCCESS) {
                        ret->mem_total = m.total;
                        ret->mem_used = m.used;
                }
        }
        if (lost(rc)) {
                ret->lost = true;
                return 0;
        }
        if (p->f.nvmlDeviceGetMigMode &&
            p->f.nvmlDeviceGetMigMode(g->dev, &cur, &pend) == NVML_SUCCESS) {
                ret->mig_capable = true;
                ret->mig_current = cur == NVML_DEVICE_MIG_ENABLE;
                ret->mig_pending = pend == NVML_DEVICE_MIG_ENABLE;
        }
        return 0;
}

static int mig_enabled(struct nvb *p, unsigned gpu, nvmlDevice_t d, char *err)
{
        unsigned cur = 0, pend = 0;
        nvmlReturn_t rc;
        int r;
        if ((r = NEED(p, nvmlDeviceGetMigMode)) < 0)
                return r;
        rc = p->f.nvmlDeviceGetMigMode(d, &cur, &pend);
        if (rc != NVML_SUCCESS)
                return kerf__nvb_fail(p, err, rc, "nvmlDeviceGetMigMode(GPU %u)", gpu);
        if (cur != NVML_DEVICE_MIG_ENABLE)
                return kerf__nvb_refuse(err, -KERF_EUNSUPP, "MIG mode is not enabled on GPU %u%s",
                                        gpu, pend ? " (pending: enabled after reset)" : "");
        return 0;
}

/* A MIG device (GI, CI) of the parent: its uuid and memory. */
struct migdev {
        unsigned gi, ci;
        nvmlDevice_t dev;
        char uuid[KERF_UUID_LEN];
        uint64_t total, used;
};

static unsigned migdevs_of(struct nvb *p, nvmlDevice_t d, struct migdev *out, unsigned cap)
{
        unsigned max = 0, n = 0;
        if (!p->f.nvmlDeviceGetMaxMigDeviceCount || !p->f.nvmlDeviceGetMigDeviceHandleByIndex ||
            !p->f.nvmlDeviceGetGpuInstanceId || !p->f.nvmlDeviceGetComputeInstanceId)
                return 0;
        if (p->f.nvmlDeviceGetMaxMigDeviceCount(d, &max) != NVML_SUCCESS)
                return 0;
        for (unsigned i = 0; i < max && n < cap; i++) {
                struct migdev *m = &out[n];
                memset(m, 0, sizeof(*m));
                if (p->f.nvmlDeviceGetMigDeviceHandleByIndex(d, i, &m->dev) != NVML_SUCCESS)
                        continue; /* NOT_FOUND: empty slot */
                if (p->f.nvmlDeviceGetGpuInstanceId(m->dev, &m->gi) != NVML_SUCCESS ||
                    p->f.nvmlDeviceGetComputeInstanceId(m->dev, &m->ci) != NVML_SUCCESS)
                        continue;
                if (p->f.nvmlDeviceGetUUID(m->dev, m->uuid, sizeof(m->uuid)) != NVML_SUCCESS)
                        m->uuid[0] = '\0';
                if (p->f.nvmlDeviceGetMemoryInfo_v2) {
                        nvmlMemory_v2_t mem = {.version = nvmlMemory_v2};
                        if (p->f.nvmlDeviceGetMemoryInfo_v2(m->dev, &mem) == NVML_SUCCESS) {
                                m->total = mem.total;
                                m->used = mem.used;
                        }
                } else if (p->f.nvmlDeviceGetMemoryInfo) {
                        nvmlMemory_t mem;
                        if (p->f.nvmlDeviceGetMemoryInfo(m->dev, &mem) == NVML_SUCCESS) {
                                m->total = mem.total;
                                m->used = mem.used;
                        }
                }
                n++;
        }
        return n;
}

/* The first compute instance of a GI (kerf creates exactly one); false when none. */
static bool first_ci(struct nvb *p, nvmlGpuInstance_t gi, nvmlComputeInstanceInfo_t *ret,
                     nvmlComputeInstance_t *ret_h)
{
        if (!p->f.nvmlGpuInstanceGetComputeInstanceProfileInfo ||
            !p->f.nvmlGpuInstanceGetComputeInstances || !p->f.nvmlComputeInstanceGetInfo_v2)
                return false;
        for (unsigned idx = 0; idx < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; idx++) {
                nvmlComputeInstanceProfileInfo_t pi;
                nvmlComputeInstance_t cis[KERF_BACKEND_MAX_MIG];
                unsigned n = KERF_BACKEND_MAX_MIG;
                if (p->f.nvmlGpuInstanceGetComputeInstanceProfileInfo(
                        gi, idx, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &pi) != NVML_SUCCESS)
                        continue;
                if (p->f.nvmlGpuInstanceGetComputeInstances(gi, pi.id, cis, &n) != NVML_SUCCESS ||
                    n == 0)
                        continue;
                if (p->f.nvmlComputeInstanceGetInfo_v2(cis[0], ret) != NVML_SUCCESS)
                        continue;
                if (ret_h)
                        *ret_h = cis[0];
                return true;
        }
        return false;
}

static int cmp_gi(const void *a, const void *b)
{
        const kerf_backend_mig *x = a, *y = b;
        return (x->gi_id > y->gi_id) - (x->gi_id < y->gi_id);
}

int kerf__nvb_mig_list(struct nvb *p, unsigned gpu, kerf_backend_mig *out, size_t max, char *err)
{
        kerf_backend_mig all[KERF_BACKEND_MAX_MIG * 2];
        struct migdev md[KERF_BACKEND_MAX_MIG * 2];
        unsigned seen_ids[NVML_GPU_INSTANCE_PROFILE_COUNT], n_seen = 0, n = 0, n_md;
        const kerf_gpu_model *model;
        nvmlDevice_t d = NULL;
        int r;
        if ((r = dev_of(p, gpu, &d, err)) < 0 || (r = mig_enabled(p, gpu, d, err)) < 0)
                return r;
        if ((r = NEED(p, nvmlDeviceGetGpuInstanceProfileInfo)) < 0 ||
            (r = NEED(p, nvmlDeviceGetGpuInstances)) < 0 ||
            (r = NEED(p, nvmlGpuInstanceGetInfo)) < 0)
                return r;
        model = model_of(p, d);
        n_md = migdevs_of(p, d, md, KERF_BACKEND_MAX_MIG * 2);
        for (unsigned idx = 0; idx < NVML_GPU_INSTANCE_PROFILE_COUNT; idx++) {
                nvmlGpuInstanceProfileInfo_t pi;
                nvmlGpuInstance_t gis[KERF_BACKEND_MAX_MIG];
                unsigned cnt = KERF_BACKEND_MAX_MIG;
                bool dup = false;
                nvmlReturn_t rc = p->f.nvmlDeviceGetGpuInstanceProfileInfo(d, idx, &pi);
                if (rc == NVML_ERROR_INVALID_ARGUMENT)
                        break; /* past the last index this driver knows */
                if (rc != NVML_SUCCESS)
                        continue; /* NOT_SUPPORTED on this GPU */
                for (unsigned i = 0; i < n_seen; i++)
                        dup |= seen_ids[i] == pi.id;
                if (dup)
                        continue;
                seen_ids[n_seen++] = pi.id;
                rc = p->f.nvmlDeviceGetGpuInstances(d, pi.id, gis, &cnt);
                if (rc == NVML_ERROR_NO_PERMISSION || rc == NVML_ERROR_GPU_IS_LOST)
                        return kerf__nvb_fail(p, err, rc, "nvmlDeviceGetGpuInstances(GPU %u)", gpu);
                if (rc != NVML_SUCCESS)
                        continue;
                for (unsigned i = 0; i < cnt && n < KERF_BACKEND_MAX_MIG * 2; i++) {
                        nvmlGpuInstanceInfo_t gi;
                        nvmlComputeInstanceInfo_t ci;
                        kerf_backend_mig *m = &all[n];
                        const kerf_mig_profile *mp;
                        if (p->f.nvmlGpuInstanceGetInfo(gis[i], &gi) != NVML_SUCCESS)
                                continue;
                        memset(m, 0, sizeof(*m));
                        m->gpu = gpu;
                        m->gi_id = gi.id;
                        m->profile_id = gi.profileId;
                        m->start = gi.placement.start;
                        m->size = gi.placement.size;
                        m->ci_id = KERF_BACKEND_NO_ID;
                        m->ci_profile_id = KERF_BACKEND_NO_ID;
                        mp = model ? kerf_mig_profile_by_id(model, gi.profileId) : NULL;
                        m->profile_name = mp ? mp->name : "?";
                        m->mem_total = pi.memorySizeMB * KERF_MIB;
                        if (first_ci(p, gis[i], &ci, NULL)) {
                                m->ci_id = ci.id;
                                m->ci_profile_id = ci.profileId;
                        }
                        for (unsigned j = 0; j < n_md; j++) {
                                if (md[j].gi != m->gi_id || md[j].ci != m->ci_id)
                                        continue;
                                snprintf(m->uuid, sizeof(m->uuid), "%s", md[j].uuid);
                                if (md[j].total) {
                                        m->mem_total = md[j].total;
                                        m->mem_used = md[j].used;
                                }
                        }
                        n++;
                }
        }
        qsort(all, n, sizeof(all[0]), cmp_gi);
        for (unsigned i = 0; i < n && i < max; i++)
                out[i] = all[i];
        return (int)n;
}

int kerf__nvb_op_mig_list(kerf_backend *b, unsigned gpu, kerf_backend_mig *out, size_t max)
{
        char err[NVB_ERR] = "";
        int r = kerf__nvb_mig_list(kerf_backend_priv(b), gpu, out, max, err);
        if (r < 0)
                kerf_backend_set_error(b, "%s", err);
        return r;
}

/* Finds the profile info of driver profile id `id`. */
static int profile_info(struct nvb *p, unsigned gpu, nvmlDevice_t d, unsigned id,
                        nvmlGpuInstanceProfileInfo_t *ret, char *err)
{
        for (unsigned idx = 0; idx < NVML_GPU_INSTANCE_PROFILE_COUNT; idx++) {
                nvmlReturn_t rc = p->f.nvmlDeviceGetGpuInstanceProfileInfo(d, idx, ret);
                if (rc == NVML_ERROR_INVALID_ARGUMENT)
                        break;
                if (rc == NVML_SUCCESS && ret->id == id)
                        return 0;
        }
        return kerf__nvb_refuse(err, -EINVAL, "GPU %u has no GPU-instance profile id %u", gpu, id);
}

static int proc_pids(struct nvb *p, unsigned gpu, unsigned gi_id, char *list, size_t len,
                     unsigned *ret_n, char *err);

int kerf__nvb_mig_create(kerf_backend *b, unsigned gpu, unsigned profile_id, unsigned start,
                         kerf_backend_mig *ret)
{
        struct nvb *p = kerf_backend_priv(b);
        char err[NVB_ERR] = "";
        nvmlGpuInstanceProfileInfo_t pi;
        nvmlGpuInstancePlacement_t pl[KERF_MIG_SLICES], want = {start, 0};
        nvmlComputeInstanceProfileInfo_t cpi;
        nvmlGpuInstance_t gi = NULL;
        nvmlComputeInstance_t ci = NULL;
        nvmlGpuInstanceInfo_t info;
        kerf_backend_mig list[KERF_BACKEND_MAX_MIG * 2];
        unsigned npl = KERF_MIG_SLICES;
        nvmlReturn_t rc;
        nvmlDevice_t d = NULL;
        int r, cidx, n;
        if ((r = dev_of(p, gpu, &d, err)) < 0 || (r = mig_enabled(p, gpu, d, err)) < 0)
                goto out;
        if ((r = NEED(p, nvmlDeviceGetGpuInstanceProfileInfo)) < 0 ||
            (r = NEED(p, nvmlDeviceGetGpuInstancePossiblePlacements_v2)) < 0 ||
            (r = NEED(p, nvmlDeviceCreateGpuInstanceWithPlacement)) < 0 ||
            (r = NEED(p, nvmlGpuInstanceGetInfo)) < 0 ||
            (r = NEED(p, nvmlGpuInstanceDestroy)) < 0 ||
            (r = NEED(p, nvmlGpuInstanceGetComputeInstanceProfileInfo)) < 0 ||
            (r = NEED(p, nvmlGpuInstanceCreateComputeInstance)) < 0)
                goto out;
        if ((r = profile_info(p, gpu, d, profile_id, &pi, err)) < 0)
                goto out;
        rc = p->f.nvmlDeviceGetGpuInstancePossiblePlacements_v2(d, pi.id, pl, &npl);
        if (rc != NVML_SUCCESS) {
                r = kerf__nvb_fail(p, err, rc,
                                   "nvmlDeviceGetGpuInstancePossiblePlacements_v2"
                                   "(GPU %u, profile %u)",
                                   gpu, profile_id);
                goto out;
        }
        for (unsigned i = 0; i < npl && i < KERF_MIG_SLICES; i++)
                if (pl[i].start == start)
                        want.size = pl[i].size;
        if (!want.size) {
                /* Possible placements do not depend on what exists, so this is a bad start. */
                char valid[64] = "";
                for (unsigned i = 0; i < npl && i < KERF_MIG_SLICES; i++) {
                        size_t l = strlen(valid);
                        snprintf(valid + l, sizeof(valid) - l, "%s%u", i ? "," : "", pl[i].start);
                }
                r = kerf__nvb_refuse(err, -EINVAL,
                                     "memory slice %u is not a valid placement for GPU-instance "
                                     "profile %u on GPU %u (valid starts: %s)",
                                     start, profile_id, gpu, valid);
                goto out;
        }
        rc = p->f.nvmlDeviceCreateGpuInstanceWithPlacement(d, pi.id, &want, &gi);
        if (rc == NVML_ERROR_INSUFFICIENT_RESOURCES) {
                r = kerf__nvb_fail(p, err, rc,
                                   "placement conflict: GPU-instance profile %u at memory slices "
                                   "%u..%u of GPU %u overlaps an existing instance or exceeds "
                                   "the profile's count",
                                   profile_id, start, start + want.size - 1, gpu);
                goto out;
        }
        if (rc != NVML_SUCCESS) {
                r = kerf__nvb_fail(p, err, rc,
                                   "nvmlDeviceCreateGpuInstanceWithPlacement(GPU %u, profile "
                                   "%u, start %u)",
                                   gpu, profile_id, start);
                goto out;
        }
        if ((rc = p->f.nvmlGpuInstanceGetInfo(gi, &info)) != NVML_SUCCESS) {
                r = kerf__nvb_fail(p, err, rc, "nvmlGpuInstanceGetInfo(new GI on GPU %u)", gpu);
                goto undo;
        }
        cidx = ci_index_for_slices(pi.sliceCount);
        if (cidx < 0) {
                r = kerf__nvb_refuse(err, -KERF_EUNSUPP,
                                     "no full-size compute-instance profile for %u slices",
                                     pi.sliceCount);
                goto undo;
        }
        rc = p->f.nvmlGpuInstanceGetComputeInstanceProfileInfo(
            gi, (unsigned)cidx, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, &cpi);
        if (rc == NVML_SUCCESS)
                rc = p->f.nvmlGpuInstanceCreateComputeInstance(gi, cpi.id, &ci);
        if (rc != NVML_SUCCESS) {
                r = kerf__nvb_fail(p, err, rc,
                                   "creating the compute instance in GPU instance %u of GPU %u "
                                   "(GPU instance destroyed again)",
                                   info.id, gpu);
                goto undo;
        }
        n = kerf__nvb_mig_list(p, gpu, list, KERF_BACKEND_MAX_MIG * 2, err);
        r = n < 0 ? n : -ENOENT;
        for (int i = 0; i < n && i < KERF_BACKEND_MAX_MIG * 2; i++) {
                if (list[i].gi_id == info.id) {
                        *ret = list[i];
                        r = 0;
                }
        }
        if (r == -ENOENT)
                kerf__nvb_refuse(err, r, "new GPU instance %u not listed on GPU %u", info.id, gpu);
        goto out;
undo:
        if (ci && p->f.nvmlComputeInstanceDestroy)
                p->f.nvmlComputeInstanceDestroy(ci);
        p->f.nvmlGpuInstanceDestroy(gi);
out:
        if (r < 0)
                kerf_backend_set_error(b, "%s", err);
        return r;
}

int kerf__nvb_mig_destroy(kerf_backend *b, unsigned gpu, unsigned gi_id)
{
        struct nvb *p = kerf_backend_priv(b);
        char err[NVB_ERR] = "", pids[160];
        nvmlGpuInstance_t gi;
        nvmlComputeInstance_t ci;
        nvmlComputeInstanceInfo_t cinfo;
        unsigned nproc = 0;
        nvmlReturn_t rc;
        nvmlDevice_t d = NULL;
        int r;
        if ((r = dev_of(p, gpu, &d, err)) < 0 || (r = mig_enabled(p, gpu, d, err)) < 0)
                goto out;
        if ((r = NEED(p, nvmlDeviceGetGpuInstanceById)) < 0 ||
            (r = NEED(p, nvmlGpuInstanceDestroy)) < 0 ||
            (r = NEED(p, nvmlComputeInstanceDestroy)) < 0)
                goto out;
        rc = p->f.nvmlDeviceGetGpuInstanceById(d, gi_id, &gi);
        if (rc != NVML_SUCCESS) {
                r = kerf__nvb_fail(p, err, rc, "GPU instance %u on GPU %u", gi_id, gpu);
                goto out;
        }
        /* Refuse before touching anything: a half-destroyed instance (CI gone, GI left) would
         * strand the processes still on it. */
        if ((r = proc_pids(p, gpu, gi_id, pids, sizeof(pids), &nproc, err)) < 0)
                goto out;
        if (nproc) {
                r = kerf__nvb_refuse(err, -KERF_EINUSE,
                                     "refusing to destroy GPU instance %u on GPU %u: %u process%s "
                                     "running (pid %s)",
                                     gi_id, gpu, nproc, nproc == 1 ? "" : "es", pids);
                goto out;
        }
        while (first_ci(p, gi, &cinfo, &ci)) {
                rc = p->f.nvmlComputeInstanceDestroy(ci);
                if (rc != NVML_SUCCESS) {
                        r = kerf__nvb_fail(p, err, rc,
                                           "nvmlComputeInstanceDestroy(GPU %u, GI %u, CI %u)", gpu,
                                           gi_id, cinfo.id);
                        goto out;
                }
        }
        rc = p->f.nvmlGpuInstanceDestroy(gi);
        if (rc != NVML_SUCCESS)
                r = kerf__nvb_fail(p, err, rc, "nvmlGpuInstanceDestroy(GPU %u, GI %u)", gpu, gi_id);
out:
        if (r < 0)
                kerf_backend_set_error(b, "%s", err);
        return r;
}

int kerf__nvb_mig_mode_set(kerf_backend *b, unsigned gpu, bool on)
{
        struct nvb *p = kerf_backend_priv(b);
        char err[NVB_ERR] = "";
        nvmlReturn_t rc, act = NVML_SUCCESS;
        nvmlDevice_t d = NULL;
        int r;
        if (!kerf_backend_options_get(b)->allow_mig_mode_change || !p->f.nvmlDeviceSetMigMode) {
                kerf_backend_set_error(b, "MIG mode changes are not enabled in configuration");
                return -KERF_EPERM;
        }
        if ((r = dev_of(p, gpu, &d, err)) < 0)
                goto out;
        rc = p->f.nvmlDeviceSetMigMode(d, on ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE,
                                       &act);
        if (rc != NVML_SUCCESS)
                r = kerf__nvb_fail(p, err, rc, "nvmlDeviceSetMigMode(GPU %u, %s)", gpu,
                                   on ? "on" : "off");
        else if (act != NVML_SUCCESS)
                r = kerf__nvb_fail(p, err, act, "MIG mode of GPU %u set, activation pending", gpu);
out:
        if (r < 0)
                kerf_backend_set_error(b, "%s", err);
        return r;
}

/* ---- processes --------------------------------------------------------------------------- */

/* Running processes of one device handle; gi/ci fill in ids the library left unattributed. */
static int procs_of(struct nvb *p, nvmlDevice_t d, unsigned gi, unsigned ci, kerf_backend_proc *out,
                    size_t max, size_t *io_n, char *err)
{
        bool v1 = !p->f.nvmlDeviceGetComputeRunningProcesses_v3;
        size_t esz = v1 ? sizeof(nvmlProcessInfo_v1_t) : sizeof(nvmlProcessInfo_t);
        unsigned cnt = 0;
        nvmlReturn_t rc;
        void *buf = NULL;
        if (v1 && !p->f.nvmlDeviceGetComputeRunningProcesses)
                return kerf__nvb_refuse(err, -KERF_EUNSUPP,
                                        "the NVML library lacks "
                                        "nvmlDeviceGetComputeRunningProcesses");
        for (int tries = 0; tries < 4; tries++) {
                unsigned want = cnt;
                rc = v1 ? p->f.nvmlDeviceGetComputeRunningProcesses(d, &cnt, buf)
                        : p->f.nvmlDeviceGetComputeRunningProcesses_v3(d, &cnt, buf);
                if (rc != NVML_ERROR_INSUFFICIENT_SIZE)
                        break;
                /* Processes may start between the calls: leave room for a few more. */
                free(buf);
                cnt = (cnt > want ? cnt : want) + 8;
                buf = calloc(cnt, esz);
                if (!buf)
                        return -ENOMEM;
        }
        if (rc != NVML_SUCCESS) {
                free(buf);
                return kerf__nvb_fail(p, err, rc, "nvmlDeviceGetComputeRunningProcesses");
        }
        for (unsigned i = 0; i < cnt && buf; i++) {
                kerf_backend_proc pr;
                if (v1) {
                        nvmlProcessInfo_v1_t *x = (nvmlProcessInfo_v1_t *)buf + i;
                        pr = (kerf_backend_proc){x->pid, x->usedGpuMemory, gi, ci};
                } else {
                        nvmlProcessInfo_t *x = (nvmlProcessInfo_t *)buf + i;
                        pr = (kerf_backend_proc){x->pid, x->usedGpuMemory, x->gpuInstanceId,
                                                 x->computeInstanceId};
                        if (pr.gi_id == KERF_BACKEND_NO_ID)
                                pr.gi_id = gi, pr.ci_id = ci;
                }
                if (*io_n < max)
                        out[*io_n] = pr;
                (*io_n)++;
        }
        free(buf);
        return 0;
}

/* Processes of a GPU (gi_id NO_ID: all) or of one GI. On a MIG-enabled GPU the MIG device
 * handles are asked (the documented per-instance path); otherwise the GPU itself. */
static int procs_collect(struct nvb *p, unsigned gpu, unsigned gi_id, kerf_backend_proc *out,
                         size_t max, char *err)
{
        struct migdev md[KERF_BACKEND_MAX_MIG * 2];
        unsigned cur = 0, pend = 0, n_md;
        size_t n = 0;
        nvmlDevice_t d = NULL;
        int r;
        if ((r = dev_of(p, gpu, &d, err)) < 0)
                return r;
        bool mig = p->f.nvmlDeviceGetMigMode &&
                   p->f.nvmlDeviceGetMigMode(d, &cur, &pend) == NVML_SUCCESS &&
                   cur == NVML_DEVICE_MIG_ENABLE;
        if (!mig) {
                if (gi_id != KERF_BACKEND_NO_ID)
                        return kerf__nvb_refuse(err, -KERF_EUNSUPP,
                                                "GPU %u is not in MIG mode: no GPU instance %u",
                                                gpu, gi_id);
                r = procs_of(p, d, KERF_BACKEND_NO_ID, KERF_BACKEND_NO_ID, out, max, &n, err);
                return r < 0 ? r : (int)n;
        }
        n_md = migdevs_of(p, d, md, KERF_BACKEND_MAX_MIG * 2);
        if (n_md == 0 && p->f.nvmlDeviceGetMaxMigDeviceCount == NULL) {
                /* No MIG device handles: the parent's aggregate, filtered. */
                kerf_backend_proc tmp[256];
                size_t all = 0;
                if ((r = procs_of(p, d, KERF_BACKEND_NO_ID, KERF_BACKEND_NO_ID, tmp, 256, &all,
                                  err)) < 0)
                        return r;
                for (size_t i = 0; i < all && i < 256; i++) {
                        if (gi_id != KERF_BACKEND_NO_ID && tmp[i].gi_id != gi_id)
                                continue;
                        if (n < max)
                                out[n] = tmp[i];
                        n++;
                }
                return (int)n;
        }
        for (unsigned j = 0; j < n_md; j++) {
                if (gi_id != KERF_BACKEND_NO_ID && md[j].gi != gi_id)
                        continue;
                if ((r = procs_of(p, md[j].dev, md[j].gi, md[j].ci, out, max, &n, err)) < 0)
                        return r;
        }
        return (int)n;
}

static int proc_pids(struct nvb *p, unsigned gpu, unsigned gi_id, char *list, size_t len,
                     unsigned *ret_n, char *err)
{
        kerf_backend_proc pr[32];
        int n = procs_collect(p, gpu, gi_id, pr, 32, err);
        list[0] = '\0';
        if (n < 0)
                return n;
        for (int i = 0; i < n && i < 32; i++) {
                size_t l = strlen(list);
                snprintf(list + l, len - l, "%s%u", i ? ", " : "", pr[i].pid);
        }
        if (n > 32) {
                size_t l = strlen(list);
                snprintf(list + l, len - l, ", ...");
        }
        *ret_n = (unsigned)n;
        return 0;
}

int kerf__nvb_proc_list(kerf_backend *b, unsigned gpu, unsigned gi_id, kerf_backend_proc *out,
                        size_t max)
{
        char err[NVB_ERR] = "";
        int r = procs_collect(kerf_backend_priv(b), gpu, gi_id, out, max, err);
        if (r < 0)
                kerf_backend_set_error(b, "%s", err);
        return r;
}
