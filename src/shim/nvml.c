/* SPDX-License-Identifier: Apache-2.0 */
/* nvml.c - NVML memory and process views of the slice's GPU */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "nvml_abi.h"

/*
 * Frameworks and monitoring inside the task read memory through NVML too. For the slice's
 * device (its UUID matches the first CUDA_VISIBLE_DEVICES entry, which kerfd always sets to a
 * GPU-/MIG- UUID) the answers are the slice's: total = min(cap, physical), used =
 * memory_charged, free = total - used (>= 0); the process list is the task's processes with
 * their slot's memory_used. Other devices, and processes where the shim is not initialised,
 * get the real answers. The real NVML is found lazily: the already loaded libnvidia-ml.so.1
 * (dlopen RTLD_NOLOAD), else the next definition after the shim (RTLD_NEXT).
 */

#define KS_NVML_EXPORT __attribute__((visibility("default")))

enum {
        N_MEMINFO,
        N_MEMINFO_V2,
        N_PROCS,
        N_PROCS_V2,
        N_PROCS_V3,
        N_UUID,
        N_COUNT,
};

static const char *const nv_names[N_COUNT] = {
    "nvmlDeviceGetMemoryInfo",
    "nvmlDeviceGetMemoryInfo_v2",
    "nvmlDeviceGetComputeRunningProcesses",
    "nvmlDeviceGetComputeRunningProcesses_v2",
    "nvmlDeviceGetComputeRunningProcesses_v3",
    "nvmlDeviceGetUUID",
};

static void *_Atomic nv_real[N_COUNT];

static void *real_nvml(int i)
{
        void *f = atomic_load_explicit(&nv_real[i], memory_order_acquire);
        if (f)
                return f;
        void *h = dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
                f = ks__real_dlsym(h, nv_names[i]);
                dlclose(h);
        }
        if (!f)
                f = ks__real_dlsym(RTLD_NEXT, nv_names[i]);
        if (f)
                atomic_store_explicit(&nv_real[i], f, memory_order_release);
        return f;
}

/* Whether d is the slice's device, and the shim is live in this process. */
static bool slice_device(nvmlDevice_t d)
{
        const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
        char want[96], uuid[96];
        if (!cvd)
                return false;
        while (*cvd == ' ')
                cvd++;
        size_t n = strcspn(cvd, ", ");
        if (n < 5 || n >= sizeof(want) || (strncmp(cvd, "GPU-", 4) && strncmp(cvd, "MIG-", 4)))
                return false;
        memcpy(want, cvd, n);
        want[n] = 0;
        nvmlReturn_t (*get_uuid)(nvmlDevice_t, char *, unsigned) = real_nvml(N_UUID);
        if (!get_uuid || get_uuid(d, uuid, sizeof(uuid)) != NVML_SUCCESS)
                return false;
        /* CUDA accepts a unique UUID prefix in CUDA_VISIBLE_DEVICES. */
        if (strncmp(uuid, want, n))
                return false;
        return ks__ensure() == CUDA_SUCCESS;
}

static void view(unsigned long long *total, unsigned long long *free, unsigned long long *used)
{
        uint64_t t, f;
        ks__view(&t, &f);
        *total = t;
        *free = f;
        *used = atomic_load(&ks.region->memory_charged);
}

KS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
        nvmlReturn_t (*real)(nvmlDevice_t, nvmlMemory_t *) = real_nvml(N_MEMINFO);
        if (!real)
                return NVML_ERROR_FUNCTION_NOT_FOUND;
        nvmlReturn_t r = real(device, memory);
        if (r == NVML_SUCCESS && memory && slice_device(device))
                view(&memory->total, &memory->free, &memory->used);
        return r;
}

KS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
        nvmlReturn_t (*real)(nvmlDevice_t, nvmlMemory_v2_t *) = real_nvml(N_MEMINFO_V2);
        if (!real)
                return NVML_ERROR_FUNCTION_NOT_FOUND;
        nvmlReturn_t r = real(device, memory);
        if (r == NVML_SUCCESS && memory && slice_device(device)) {
                view(&memory->total, &memory->free, &memory->used);
                memory->reserved = 0;
        }
        return r;
}

#define KS_NV_REAL_MAX 256

/* Fills the task's processes into infos (v1: 16-byte entries without instance ids). GI/CI
 * ids come from the real list when it has the pid (MIG), else 0xFFFFFFFF. */
static nvmlReturn_t task_procs(nvmlDevice_t d, unsigned *count, void *infos, bool v1, int real_i)
{
        struct kerf_slice_region *r = ks.region;
        unsigned n = 0;
        for (unsigned i = 0; i < KERF_SLICE_MAX_PROCS; i++)
                if (atomic_load(&r->procs[i].pid) > 0)
                        n++;
        if (!count)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (*count < n || (n && !infos)) {
                *count = n;
                return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        nvmlProcessInfo_t real_list[KS_NV_REAL_MAX]; /* 6 KiB of stack */
        unsigned real_n = 0;
        if (!v1) {
                nvmlReturn_t (*real)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *) =
                    real_nvml(real_i);
                real_n = KS_NV_REAL_MAX;
                if (!real || real(d, &real_n, real_list) != NVML_SUCCESS)
                        real_n = 0;
        }
        unsigned k = 0;
        for (unsigned i = 0; i < KERF_SLICE_MAX_PROCS && k < n; i++) {
                int32_t pid = atomic_load(&r->procs[i].pid);
                if (pid <= 0)
                        continue;
                uint64_t used = atomic_load(&r->procs[i].memory_used);
                if (v1) {
                        nvmlProcessInfo_v1_t *o = (nvmlProcessInfo_v1_t *)infos + k++;
                        o->pid = (unsigned)pid;
                        o->usedGpuMemory = used;
                        continue;
                }
                nvmlProcessInfo_t *o = (nvmlProcessInfo_t *)infos + k++;
                o->pid = (unsigned)pid;
                o->usedGpuMemory = used;
                o->gpuInstanceId = o->computeInstanceId = KERF_NVML_ID_UNATTRIBUTED;
                for (unsigned j = 0; j < real_n; j++)
                        if (real_list[j].pid == (unsigned)pid) {
                                o->gpuInstanceId = real_list[j].gpuInstanceId;
                                o->computeInstanceId = real_list[j].computeInstanceId;
                        }
        }
        *count = k;
        return NVML_SUCCESS;
}

KS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                                    unsigned int *infoCount,
                                                                    nvmlProcessInfo_t *infos)
{
        nvmlReturn_t (*real)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *) = real_nvml(N_PROCS_V3);
        if (!real)
                return NVML_ERROR_FUNCTION_NOT_FOUND;
        if (!slice_device(device))
                return real(device, infoCount, infos);
        return task_procs(device, infoCount, infos, false, N_PROCS_V3);
}

KS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
                                                                    unsigned int *infoCount,
                                                                    nvmlProcessInfo_v2_t *infos)
{
        nvmlReturn_t (*real)(nvmlDevice_t, unsigned *, nvmlProcessInfo_v2_t *) =
            real_nvml(N_PROCS_V2);
        if (!real)
                return NVML_ERROR_FUNCTION_NOT_FOUND;
        if (!slice_device(device))
                return real(device, infoCount, infos);
        return task_procs(device, infoCount, infos, false, N_PROCS_V2);
}

KS_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
                                                                 unsigned int *infoCount,
                                                                 nvmlProcessInfo_v1_t *infos)
{
        nvmlReturn_t (*real)(nvmlDevice_t, unsigned *, nvmlProcessInfo_v1_t *) = real_nvml(N_PROCS);
        if (!real)
                return NVML_ERROR_FUNCTION_NOT_FOUND;
        if (!slice_device(device))
                return real(device, infoCount, infos);
        return task_procs(device, infoCount, infos, true, N_PROCS);
}

static void *const nv_wrappers[N_UUID] = {
    (void *)nvmlDeviceGetMemoryInfo,
    (void *)nvmlDeviceGetMemoryInfo_v2,
    (void *)nvmlDeviceGetComputeRunningProcesses,
    (void *)nvmlDeviceGetComputeRunningProcesses_v2,
    (void *)nvmlDeviceGetComputeRunningProcesses_v3,
};

void *ks__nvml_wrapper_for(const char *name, void *fn)
{
        for (int i = 0; i < N_UUID; i++) {
                if (strcmp(name, nv_names[i]))
                        continue;
                if (fn == nv_wrappers[i])
                        return fn;
                void *real = real_nvml(i);
                return real && fn == real ? nv_wrappers[i] : NULL;
        }
        return NULL;
}
