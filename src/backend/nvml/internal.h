/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h - the NVML backend's private state: resolved entry points, GPUs, watcher */
#ifndef KERF_BACKEND_NVML_INTERNAL_H
#define KERF_BACKEND_NVML_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "kerf/backend.h"
#include "nvml_abi.h"

#define NVB_ERR KERF_BACKEND_ERR_LEN

/* One pointer per NVML entry point kerf uses, typed from nvml_abi.h. NULL when the library
 * lacks it (optional ones) or when kerf must not call it (SetMigMode unless allowed). */
#define NVB_FN(name) __typeof__(&name) name
struct nvb_fns {
        NVB_FN(nvmlInit_v2); /* or nvmlInit */
        NVB_FN(nvmlShutdown);
        NVB_FN(nvmlErrorString);
        NVB_FN(nvmlSystemGetDriverVersion);
        NVB_FN(nvmlSystemGetCudaDriverVersion); /* _v2 or plain */
        NVB_FN(nvmlDeviceGetCount_v2);          /* or plain */
        NVB_FN(nvmlDeviceGetHandleByIndex_v2);  /* or plain */
        NVB_FN(nvmlDeviceGetUUID);
        NVB_FN(nvmlDeviceGetName);
        NVB_FN(nvmlDeviceGetMinorNumber);
        NVB_FN(nvmlDeviceGetPciInfo_v3); /* optional: the model by PCI device id */
        NVB_FN(nvmlDeviceGetMemoryInfo);
        NVB_FN(nvmlDeviceGetMemoryInfo_v2);
        NVB_FN(nvmlDeviceGetUtilizationRates);
        NVB_FN(nvmlDeviceGetProcessUtilization);
        NVB_FN(nvmlDeviceGetComputeRunningProcesses_v3); /* or _v2 (same layout) */
        NVB_FN(nvmlDeviceGetComputeRunningProcesses);    /* v1 layout, last resort */
        NVB_FN(nvmlDeviceGetMigMode);
        NVB_FN(nvmlDeviceSetMigMode);
        NVB_FN(nvmlDeviceGetGpuInstanceProfileInfo);
        NVB_FN(nvmlDeviceGetGpuInstancePossiblePlacements_v2);
        NVB_FN(nvmlDeviceCreateGpuInstanceWithPlacement);
        NVB_FN(nvmlGpuInstanceDestroy);
        NVB_FN(nvmlDeviceGetGpuInstances);
        NVB_FN(nvmlDeviceGetGpuInstanceById);
        NVB_FN(nvmlGpuInstanceGetInfo);
        NVB_FN(nvmlGpuInstanceGetComputeInstanceProfileInfo);
        NVB_FN(nvmlGpuInstanceCreateComputeInstance);
        NVB_FN(nvmlGpuInstanceGetComputeInstances);
        NVB_FN(nvmlComputeInstanceDestroy);
        NVB_FN(nvmlComputeInstanceGetInfo_v2);
        NVB_FN(nvmlDeviceGetMaxMigDeviceCount);
        NVB_FN(nvmlDeviceGetMigDeviceHandleByIndex);
        NVB_FN(nvmlDeviceGetGpuInstanceId);
        NVB_FN(nvmlDeviceGetComputeInstanceId);
        NVB_FN(nvmlEventSetCreate);
        NVB_FN(nvmlDeviceGetSupportedEventTypes);
        NVB_FN(nvmlDeviceRegisterEvents);
        NVB_FN(nvmlEventSetWait_v2); /* or plain (no GI/CI attribution) */
        NVB_FN(nvmlEventSetFree);
};
#undef NVB_FN

struct nvb_gpu {
        nvmlDevice_t dev; /* NULL when the handle could not be obtained */
        char uuid[KERF_UUID_LEN];
        nvmlReturn_t open_rc;
        atomic_bool lost_reported;
};

struct nvb {
        void *dl;
        struct nvb_fns f;
        bool wait_v1; /* EventSetWait fallback: no GI/CI in the event data */
        char library[256];
        char fallbacks[256];
        bool inited;
        unsigned n_gpus;
        struct nvb_gpu gpus[KERF_MAX_NODE_GPUS];
        /* watcher */
        kerf_backend *b;
        pthread_t thread;
        bool watching;
        atomic_bool stop;
        kerf_backend_watch watch;
        nvmlEventSet_t set;
        unsigned poll_ms;
};

/* The one place where nvmlReturn_t becomes a kerf code. */
int kerf__nvb_code(nvmlReturn_t rc);
/* Maps `rc` and writes "<context>: <NVML's error string>" into err (NVB_ERR bytes). Returns
 * the kerf code. */
int kerf__nvb_fail(struct nvb *p, char *err, nvmlReturn_t rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Writes a message and returns `code` (for refusals that are kerf's own). */
int kerf__nvb_refuse(char *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* MIG devices of one GPU, read without the handle lock (also used by the watcher). */
int kerf__nvb_mig_list(struct nvb *p, unsigned gpu, kerf_backend_mig *out, size_t max, char *err);

/* Ops implemented in mig.c and events.c. */
int kerf__nvb_gpu_get(kerf_backend *b, unsigned gpu, kerf_backend_gpu *ret);
int kerf__nvb_op_mig_list(kerf_backend *b, unsigned gpu, kerf_backend_mig *out, size_t max);
int kerf__nvb_mig_create(kerf_backend *b, unsigned gpu, unsigned profile_id, unsigned start,
                         kerf_backend_mig *ret);
int kerf__nvb_mig_destroy(kerf_backend *b, unsigned gpu, unsigned gi_id);
int kerf__nvb_mig_mode_set(kerf_backend *b, unsigned gpu, bool on);
int kerf__nvb_proc_list(kerf_backend *b, unsigned gpu, unsigned gi_id, kerf_backend_proc *out,
                        size_t max);
int kerf__nvb_util_get(kerf_backend *b, unsigned gpu, kerf_backend_util *ret);
int kerf__nvb_proc_util_list(kerf_backend *b, unsigned gpu, uint64_t since_us,
                             kerf_backend_proc_util *out, size_t max);
int kerf__nvb_watch_start(kerf_backend *b, const kerf_backend_watch *w);
void kerf__nvb_watch_stop(kerf_backend *b);

#endif /* KERF_BACKEND_NVML_INTERNAL_H */
