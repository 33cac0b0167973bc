/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_mig.c - simulated NVML: MIG mode, GPU/compute instances, placements, MIG device handles */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerf/errno.h"
#include "nvml_internal.h"

static struct nvmlGpuInstance_st g_gis[KERF_SIM_MAX_GPUS][NVML_MAX_GI_ID];
static struct nvmlComputeInstance_st g_cis[KERF_SIM_MAX_GPUS][NVML_MAX_GI_ID][KERF_SIM_MAX_CIS];

static nvmlGpuInstance_t gi_handle(unsigned gpu, unsigned id)
{
        struct nvmlGpuInstance_st *h = &g_gis[gpu][id];
        h->magic = HANDLE_MAGIC;
        h->gpu = (int)gpu;
        h->id = (int)id;
        return h;
}

static nvmlComputeInstance_t ci_handle(unsigned gpu, unsigned gi, unsigned id)
{
        struct nvmlComputeInstance_st *h = &g_cis[gpu][gi][id];
        h->magic = HANDLE_MAGIC;
        h->gpu = (int)gpu;
        h->gi = (int)gi;
        h->id = (int)id;
        return h;
}

static bool in_array(const void *p, const void *base, size_t size, size_t elem)
{
        uintptr_t a = (uintptr_t)p, b = (uintptr_t)base;
        return a >= b && a < b + size && (a - b) % elem == 0;
}

/* A physical GPU handle of a MIG-capable model, alive. */
static nvmlReturn_t parent_check(nvmlDevice_t d, kerf_sim_gpu_info *g)
{
        nvmlReturn_t r = kerf__nvml_dev_check(d, true, g);
        if (r)
                return r;
        if (d->gi >= 0)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (!kerf_gpu_model_has_mig(g->model))
                return NVML_ERROR_NOT_SUPPORTED;
        return NVML_SUCCESS;
}

static nvmlReturn_t gi_check(nvmlGpuInstance_t h, kerf_sim_gi_info *ret, kerf_sim_gpu_info *g)
{
        if (!h || !in_array(h, g_gis, sizeof(g_gis), sizeof(g_gis[0][0])) ||
            h->magic != HANDLE_MAGIC)
                return NVML_ERROR_INVALID_ARGUMENT;
        kerf_sim *st = kerf__nvml_sim();
        if (kerf_sim_gpu_get(st, (unsigned)h->gpu, g) < 0)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (g->lost)
                return NVML_ERROR_GPU_IS_LOST;
        if (kerf_sim_gi_get(st, (unsigned)h->gpu, (unsigned)h->id, ret) < 0 || !ret->profile)
                return NVML_ERROR_INVALID_ARGUMENT; /* destroyed */
        return NVML_SUCCESS;
}

static const kerf_sim_ci_info *ci_find(const kerf_sim_gi_info *gi, unsigned id)
{
        for (unsigned i = 0; i < gi->n_cis; i++)
                if (gi->cis[i].id == id)
                        return &gi->cis[i];
        return NULL;
}

/* ---- MIG mode -------------------------------------------------------------------------------- */

NVML_API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *currentMode,
                                           unsigned int *pendingMode)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gpu_info g;
        if (!(r = parent_check(device, &g))) {
                if (!currentMode || !pendingMode) {
                        r = NVML_ERROR_INVALID_ARGUMENT;
                } else {
                        *currentMode = *pendingMode =
                            g.mig_enabled ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
                }
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceSetMigMode(nvmlDevice_t device, unsigned int mode,
                                           nvmlReturn_t *activationStatus)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gpu_info g;
        const char *allow = getenv("KERF_SIM_ALLOW_MIG_MODE");
        if ((r = parent_check(device, &g)))
                goto out;
        if (!activationStatus || mode > NVML_DEVICE_MIG_ENABLE) {
                r = NVML_ERROR_INVALID_ARGUMENT;
        } else if (!allow || strcmp(allow, "1") != 0) {
                r = NVML_ERROR_NO_PERMISSION; /* as an unprivileged caller on a real node */
        } else {
                r = kerf__nvml_err(kerf_sim_mig_mode_set(kerf__nvml_sim(), g.index,
                                                         mode == NVML_DEVICE_MIG_ENABLE));
                *activationStatus = r;
        }
out:
        kerf__nvml_leave();
        return r;
}

/* ---- GPU-instance profiles ------------------------------------------------------------------ */

static nvmlReturn_t gi_profile(nvmlDevice_t device, unsigned index, const kerf_mig_profile **ret)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = parent_check(device, &g);
        if (r)
                return r;
        if (index >= NVML_GPU_INSTANCE_PROFILE_COUNT)
                return NVML_ERROR_INVALID_ARGUMENT;
        *ret = kerf_mig_profile_by_nvml_index(g.model, index);
        return *ret ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

NVML_API nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(nvmlDevice_t device, unsigned int profile,
                                                          nvmlGpuInstanceProfileInfo_t *info)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        const kerf_mig_profile *p;
        if (!info)
                r = NVML_ERROR_INVALID_ARGUMENT;
        else if (!(r = gi_profile(device, profile, &p)))
                *info = (nvmlGpuInstanceProfileInfo_t){p->id,        0,           p->compute_slices,
                                                       p->max_count, p->sms,      p->copy_engines,
                                                       p->decoders,  p->encoders, p->jpegs,
                                                       p->ofas,      p->mem_mib};
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(nvmlDevice_t device,
                                                           unsigned int profile,
                                                           nvmlGpuInstanceProfileInfo_v2_t *info)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        const kerf_mig_profile *p;
        if (!info) {
                r = NVML_ERROR_INVALID_ARGUMENT;
        } else if (info->version != nvmlGpuInstanceProfileInfo_v2 &&
                   info->version != nvmlGpuInstanceProfileInfo_v3) {
                r = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
        } else if (!(r = gi_profile(device, profile, &p))) {
                if (info->version == nvmlGpuInstanceProfileInfo_v2) {
                        nvmlGpuInstanceProfileInfo_v2_t v = {info->version,
                                                             p->id,
                                                             0,
                                                             p->compute_slices,
                                                             p->max_count,
                                                             p->sms,
                                                             p->copy_engines,
                                                             p->decoders,
                                                             p->encoders,
                                                             p->jpegs,
                                                             p->ofas,
                                                             p->mem_mib,
                                                             {0}};
                        snprintf(v.name, sizeof(v.name), "%s", p->name);
                        *info = v;
                } else {
                        nvmlGpuInstanceProfileInfo_v3_t v = {info->version,
                                                             p->id,
                                                             p->compute_slices,
                                                             p->max_count,
                                                             p->sms,
                                                             p->copy_engines,
                                                             p->decoders,
                                                             p->encoders,
                                                             p->jpegs,
                                                             p->ofas,
                                                             p->mem_mib,
                                                             {0},
                                                             0};
                        snprintf(v.name, sizeof(v.name), "%s", p->name);
                        memcpy(info, &v, sizeof(v));
                }
        }
        kerf__nvml_leave();
        return r;
}

/* Profile by driver id on a MIG-enabled GPU. */
static nvmlReturn_t gi_profile_id(nvmlDevice_t device, unsigned id, const kerf_mig_profile **ret,
                                  kerf_sim_gpu_info *g)
{
        nvmlReturn_t r = parent_check(device, g);
        if (r)
                return r;
        if (!g->mig_enabled)
                return NVML_ERROR_NOT_SUPPORTED;
        *ret = kerf_mig_profile_by_id(g->model, id);
        return *ret ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

NVML_API nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(
    nvmlDevice_t device, unsigned int profileId, nvmlGpuInstancePlacement_t *placements,
    unsigned int *count)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        const kerf_mig_profile *p;
        kerf_sim_gpu_info g;
        if (!count) {
                r = NVML_ERROR_INVALID_ARGUMENT;
        } else if (!(r = gi_profile_id(device, profileId, &p, &g))) {
                nvmlGpuInstancePlacement_t all[KERF_MIG_SLICES];
                unsigned n = 0;
                for (unsigned s = 0; s < KERF_MIG_SLICES; s++)
                        if (kerf_mig_start_valid(p, s) && s + p->mem_slices <= KERF_MIG_SLICES)
                                all[n++] = (nvmlGpuInstancePlacement_t){s, p->mem_slices};
                if (!placements) {
                        *count = n;
                } else if (*count < n) {
                        *count = n;
                        r = NVML_ERROR_INSUFFICIENT_SIZE;
                } else {
                        memcpy(placements, all, n * sizeof(all[0]));
                        *count = n;
                }
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetGpuInstanceRemainingCapacity(nvmlDevice_t device,
                                                                unsigned int profileId,
                                                                unsigned int *count)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        const kerf_mig_profile *p;
        kerf_sim_gpu_info g;
        unsigned n;
        if (!count)
                r = NVML_ERROR_INVALID_ARGUMENT;
        else if (!(r = gi_profile_id(device, profileId, &p, &g)) &&
                 !(r = kerf__nvml_err(kerf_sim_gi_remaining(kerf__nvml_sim(), g.index, p->id, &n))))
                *count = n;
        kerf__nvml_leave();
        return r;
}

/* ---- GPU instances --------------------------------------------------------------------------- */

static nvmlReturn_t gi_create(nvmlDevice_t device, unsigned profileId,
                              const nvmlGpuInstancePlacement_t *pl, bool with_pl,
                              nvmlGpuInstance_t *ret)
{
        const kerf_mig_profile *p;
        kerf_sim_gpu_info g;
        unsigned id;
        nvmlReturn_t r;
        if (!ret || (with_pl && !pl))
                return NVML_ERROR_INVALID_ARGUMENT;
        if ((r = gi_profile_id(device, profileId, &p, &g)))
                return r;
        if (with_pl && (pl->size != p->mem_slices || pl->start >= KERF_MIG_SLICES ||
                        !kerf_mig_start_valid(p, pl->start)))
                return NVML_ERROR_INVALID_ARGUMENT;
        int rc = kerf_sim_gi_create(kerf__nvml_sim(), g.index, p->id, with_pl ? (int)pl->start : -1,
                                    &id);
        if (rc < 0)
                return kerf__nvml_err(rc);
        *ret = gi_handle(g.index, id);
        return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceCreateGpuInstance(nvmlDevice_t device, unsigned int profileId,
                                                  nvmlGpuInstance_t *gpuInstance)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        r = gi_create(device, profileId, NULL, false, gpuInstance);
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(
    nvmlDevice_t device, unsigned int profileId, const nvmlGpuInstancePlacement_t *placement,
    nvmlGpuInstance_t *gpuInstance)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        r = gi_create(device, profileId, placement, true, gpuInstance);
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlGpuInstanceDestroy(nvmlGpuInstance_t gpuInstance)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gi_info gi;
        kerf_sim_gpu_info g;
        if (!(r = gi_check(gpuInstance, &gi, &g)))
                r = kerf__nvml_err(kerf_sim_gi_destroy(kerf__nvml_sim(), g.index, gi.id));
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profileId,
                                                nvmlGpuInstance_t *gpuInstances,
                                                unsigned int *count)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        const kerf_mig_profile *p;
        kerf_sim_gpu_info g;
        kerf_sim_gi_info gis[KERF_SIM_MAX_GIS];
        unsigned n = 0, k = 0;
        if (!gpuInstances || !count) {
                r = NVML_ERROR_INVALID_ARGUMENT;
        } else if (!(r = gi_profile_id(device, profileId, &p, &g)) &&
                   !(r = kerf__nvml_err(
                         kerf_sim_gi_list(kerf__nvml_sim(), g.index, gis, KERF_SIM_MAX_GIS, &n)))) {
                /* the caller's buffer holds info.instanceCount handles (NVML's contract) */
                for (unsigned i = 0; i < n && i < KERF_SIM_MAX_GIS; i++)
                        if (gis[i].profile && gis[i].profile->id == p->id && k < p->max_count)
                                gpuInstances[k++] = gi_handle(g.index, gis[i].id);
                *count = k;
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetGpuInstanceById(nvmlDevice_t device, unsigned int id,
                                                   nvmlGpuInstance_t *gpuInstance)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gpu_info g;
        kerf_sim_gi_info gi;
        if ((r = parent_check(device, &g)))
                goto out;
        if (!gpuInstance)
                r = NVML_ERROR_INVALID_ARGUMENT;
        else if (!g.mig_enabled)
                r = NVML_ERROR_NOT_SUPPORTED;
        else if (id >= NVML_MAX_GI_ID || kerf_sim_gi_get(kerf__nvml_sim(), g.index, id, &gi) < 0)
                r = NVML_ERROR_NOT_FOUND;
        else
                *gpuInstance = gi_handle(g.index, id);
out:
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlGpuInstanceGetInfo(nvmlGpuInstance_t gpuInstance,
                                             nvmlGpuInstanceInfo_t *info)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gi_info gi;
        kerf_sim_gpu_info g;
        if (!info)
                r = NVML_ERROR_INVALID_ARGUMENT;
        else if (!(r = gi_check(gpuInstance, &gi, &g)))
                *info = (nvmlGpuInstanceInfo_t){
                    kerf__nvml_dev(g.index), gi.id, gi.profile->id, {gi.start, gi.size}};
        kerf__nvml_leave();
        return r;
}

/* ---- compute instances ----------------------------------------------------------------------- */

static nvmlReturn_t ci_profile(nvmlGpuInstance_t h, unsigned profile, unsigned eng,
                               kerf_sim_gi_info *gi, unsigned *slices, unsigned *max)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = gi_check(h, gi, &g);
        if (r)
                return r;
        if (profile >= NVML_COMPUTE_INSTANCE_PROFILE_COUNT ||
            eng >= NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_COUNT)
                return NVML_ERROR_INVALID_ARGUMENT;
        int rc = kerf_sim_ci_profile_slices(profile, gi->profile->compute_slices, slices, max);
        return rc < 0 ? NVML_ERROR_NOT_SUPPORTED : NVML_SUCCESS;
}

static void ci_name(const kerf_sim_gi_info *gi, unsigned slices, char *buf, size_t len)
{
        if (slices == gi->profile->compute_slices)
                snprintf(buf, len, "%s", gi->profile->name);
        else
                snprintf(buf, len, "%uc.%s", slices, gi->profile->name);
}

NVML_API nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(
    nvmlGpuInstance_t gpuInstance, unsigned int profile, unsigned int engProfile,
    nvmlComputeInstanceProfileInfo_t *info)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gi_info gi;
        unsigned s, max;
        if (!info) {
                r = NVML_ERROR_INVALID_ARGUMENT;
        } else if (!(r = ci_profile(gpuInstance, profile, engProfile, &gi, &s, &max))) {
                const kerf_mig_profile *p = gi.profile;
                *info = (nvmlComputeInstanceProfileInfo_t){
                    profile,         s,           max,         p->sms * s / p->compute_slices,
                    p->copy_engines, p->decoders, p->encoders, p->jpegs,
                    p->ofas};
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfoV(
    nvmlGpuInstance_t gpuInstance, unsigned int profile, unsigned int engProfile,
    nvmlComputeInstanceProfileInfo_v2_t *info)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gi_info gi;
        unsigned s, max;
        if (!info) {
                r = NVML_ERROR_INVALID_ARGUMENT;
        } else if (info->version != nvmlComputeInstanceProfileInfo_v2) {
                r = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
        } else if (!(r = ci_profile(gpuInstance, profile, engProfile, &gi, &s, &max))) {
                const kerf_mig_profile *p = gi.profile;
                nvmlComputeInstanceProfileInfo_v2_t v = {info->version,
                                                         profile,
                                                         s,
                                                         max,
                                                         p->sms * s / p->compute_slices,
                                                         p->copy_engines,
                                                         p->decoders,
                                                         p->encoders,
                                                         p->jpegs,
                                                         p->ofas,
                                                         {0}};
                ci_name(&gi, s, v.name, sizeof(v.name));
                *info = v;
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvmlGpuInstance_t gpuInstance,
                                                           unsigned int profileId,
                                                           nvmlComputeInstance_t *computeInstance)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gi_info gi;
        unsigned s, max, id;
        if (!computeInstance) {
                r = NVML_ERROR_INVALID_ARGUMENT;
        } else if (!(r = ci_profile(gpuInstance, profileId, 0, &gi, &s, &max))) {
                int rc = kerf_sim_ci_create(kerf__nvml_sim(), (unsigned)gpuInstance->gpu, gi.id,
                                            profileId, &id);
                if (rc < 0)
                        r = kerf__nvml_err(rc);
                else
                        *computeInstance = ci_handle((unsigned)gpuInstance->gpu, gi.id, id);
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t gpuInstance,
                                                         unsigned int profileId,
                                                         nvmlComputeInstance_t *computeInstances,
                                                         unsigned int *count)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gi_info gi;
        unsigned s, max, k = 0;
        if (!computeInstances || !count) {
                r = NVML_ERROR_INVALID_ARGUMENT;
        } else if (!(r = ci_profile(gpuInstance, profileId, 0, &gi, &s, &max))) {
                for (unsigned i = 0; i < gi.n_cis && k < max; i++)
                        if (gi.cis[i].profile == profileId)
                                computeInstances[k++] =
                                    ci_handle((unsigned)gpuInstance->gpu, gi.id, gi.cis[i].id);
                *count = k;
        }
        kerf__nvml_leave();
        return r;
}

static nvmlReturn_t ci_check(nvmlComputeInstance_t h, kerf_sim_gi_info *gi,
                             const kerf_sim_ci_info **ci)
{
        kerf_sim_gpu_info g;
        if (!h || !in_array(h, g_cis, sizeof(g_cis), sizeof(g_cis[0][0][0])) ||
            h->magic != HANDLE_MAGIC)
                return NVML_ERROR_INVALID_ARGUMENT;
        nvmlReturn_t r = gi_check(&g_gis[h->gpu][h->gi], gi, &g);
        if (r)
                return r;
        *ci = ci_find(gi, (unsigned)h->id);
        return *ci ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

NVML_API nvmlReturn_t nvmlComputeInstanceDestroy(nvmlComputeInstance_t computeInstance)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gi_info gi;
        const kerf_sim_ci_info *ci;
        if (!(r = ci_check(computeInstance, &gi, &ci)))
                r = kerf__nvml_err(kerf_sim_ci_destroy(
                    kerf__nvml_sim(), (unsigned)computeInstance->gpu, gi.id, ci->id));
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvmlComputeInstance_t computeInstance,
                                                    nvmlComputeInstanceInfo_t *info)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gi_info gi;
        const kerf_sim_ci_info *ci;
        if (!info) {
                r = NVML_ERROR_INVALID_ARGUMENT;
        } else if (!(r = ci_check(computeInstance, &gi, &ci))) {
                unsigned gpu = (unsigned)computeInstance->gpu;
                *info = (nvmlComputeInstanceInfo_t){kerf__nvml_dev(gpu),
                                                    gi_handle(gpu, gi.id),
                                                    ci->id,
                                                    ci->profile,
                                                    {ci->start, ci->size}};
        }
        kerf__nvml_leave();
        return r;
}

/* ---- MIG devices ----------------------------------------------------------------------------- */

NVML_API nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gpu_info g;
        if (!(r = parent_check(device, &g))) {
                if (!count)
                        r = NVML_ERROR_INVALID_ARGUMENT;
                else
                        *count = g.mig_enabled ? NVML_MAX_MIG_DEV : 0;
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index,
                                                          nvmlDevice_t *migDevice)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gpu_info g;
        kerf_sim_gi_info gis[KERF_SIM_MAX_GIS];
        unsigned n = 0, k = 0;
        if ((r = parent_check(device, &g)))
                goto out;
        if (!migDevice || !g.mig_enabled || index >= NVML_MAX_MIG_DEV) {
                r = NVML_ERROR_INVALID_ARGUMENT;
                goto out;
        }
        r = NVML_ERROR_NOT_FOUND;
        if (kerf_sim_gi_list(kerf__nvml_sim(), g.index, gis, KERF_SIM_MAX_GIS, &n) < 0)
                goto out;
        for (unsigned i = 0; i < n && i < KERF_SIM_MAX_GIS && r; i++) {
                for (unsigned c = 0; c < gis[i].n_cis && r; c++, k++) {
                        if (k == index) {
                                *migDevice =
                                    kerf__nvml_migdev(g.index, gis[i].id, gis[i].cis[c].id);
                                r = NVML_SUCCESS;
                        }
                }
        }
out:
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        if (!(r = kerf__nvml_dev_check(device, false, NULL))) {
                if (!isMigDevice)
                        r = NVML_ERROR_INVALID_ARGUMENT;
                else
                        *isMigDevice = device->gi >= 0;
        }
        kerf__nvml_leave();
        return r;
}

enum mig_id { MIG_ID_GI, MIG_ID_CI, MIG_ID_PARENT };

/* One of a MIG device's ids or its parent into *out. UNINITIALIZED is answered before the
 * arguments are looked at, as NVML does. */
static nvmlReturn_t mig_ids(nvmlDevice_t device, enum mig_id which, void *out)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        if (!out)
                r = NVML_ERROR_INVALID_ARGUMENT;
        else if (!(r = kerf__nvml_dev_check(device, false, NULL))) {
                if (device->gi < 0)
                        r = which == MIG_ID_PARENT ? NVML_ERROR_INVALID_ARGUMENT
                                                   : NVML_ERROR_NOT_SUPPORTED;
                else if (which == MIG_ID_GI)
                        *(unsigned *)out = (unsigned)device->gi;
                else if (which == MIG_ID_CI)
                        *(unsigned *)out = (unsigned)device->ci;
                else
                        *(nvmlDevice_t *)out = kerf__nvml_dev((unsigned)device->gpu);
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id)
{
        return mig_ids(device, MIG_ID_GI, id);
}

NVML_API nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id)
{
        return mig_ids(device, MIG_ID_CI, id);
}

NVML_API nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice,
                                                                   nvmlDevice_t *device)
{
        return mig_ids(migDevice, MIG_ID_PARENT, device);
}
