/* SPDX-License-Identifier: Apache-2.0 */
/* load.c - NVML backend: dlopen, versioned symbols with fallbacks, init/shutdown, error codes */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kerf/errno.h"

/*
 * Call graph: kerf_backend_open -> nvb_open: dlopen(path) -> resolve() -> nvmlInit_v2 ->
 * discover() (count, handles, UUIDs). kerf_backend_close -> watch_stop -> nvb_close:
 * nvmlShutdown (paired with the successful init) -> dlclose.
 */

int kerf__nvb_code(nvmlReturn_t rc)
{
        switch (rc) {
        case NVML_SUCCESS:
                return 0;
        case NVML_ERROR_INVALID_ARGUMENT:
        case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
                return -EINVAL;
        case NVML_ERROR_NOT_SUPPORTED:
        case NVML_ERROR_DEPRECATED:
        case NVML_ERROR_FREQ_NOT_SUPPORTED:
        case NVML_ERROR_RESET_TYPE_NOT_SUPPORTED:
        case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED:
                return -KERF_EUNSUPP;
        case NVML_ERROR_NO_PERMISSION:
                return -KERF_EPERM;
        case NVML_ERROR_NOT_FOUND:
        case NVML_ERROR_GPU_NOT_FOUND:
                return -ENOENT;
        case NVML_ERROR_INSUFFICIENT_SIZE:
                return -ENOBUFS;
        case NVML_ERROR_TIMEOUT:
                return -ETIMEDOUT;
        case NVML_ERROR_GPU_IS_LOST:
        case NVML_ERROR_RESET_REQUIRED:
        case NVML_ERROR_CORRUPTED_INFOROM:
        case NVML_ERROR_IRQ_ISSUE:
        case NVML_ERROR_INSUFFICIENT_POWER:
                return -KERF_EDEVICE;
        case NVML_ERROR_IN_USE:
                return -KERF_EINUSE;
        case NVML_ERROR_MEMORY:
                return -ENOMEM;
        case NVML_ERROR_INSUFFICIENT_RESOURCES:
                return -KERF_ENOFIT; /* placement conflict / count exhausted */
        case NVML_ERROR_NO_DATA:
                return -ENODATA;
        case NVML_ERROR_NOT_READY:
        case NVML_ERROR_INVALID_STATE:
                return -KERF_ESTATE;
        case NVML_ERROR_UNINITIALIZED:
        case NVML_ERROR_ALREADY_INITIALIZED:
        case NVML_ERROR_DRIVER_NOT_LOADED:
        case NVML_ERROR_LIBRARY_NOT_FOUND:
        case NVML_ERROR_FUNCTION_NOT_FOUND:
        case NVML_ERROR_OPERATING_SYSTEM:
        case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
        case NVML_ERROR_UNKNOWN:
        default:
                return -KERF_EBACKEND;
        }
}

int kerf__nvb_fail(struct nvb *p, char *err, nvmlReturn_t rc, const char *fmt, ...)
{
        va_list ap;
        size_t n;
        const char *s = p && p->f.nvmlErrorString ? p->f.nvmlErrorString(rc) : NULL;
        if (err) {
                va_start(ap, fmt);
                vsnprintf(err, NVB_ERR, fmt, ap);
                va_end(ap);
                n = strlen(err);
                snprintf(err + n, NVB_ERR - n, ": %s (NVML %d)", s ? s : "unknown error", (int)rc);
        }
        return kerf__nvb_code(rc);
}

int kerf__nvb_refuse(char *err, int code, const char *fmt, ...)
{
        va_list ap;
        if (err) {
                va_start(ap, fmt);
                vsnprintf(err, NVB_ERR, fmt, ap);
                va_end(ap);
        }
        return code;
}

static void *sym(struct nvb *p, const char *name)
{
        return dlsym(p->dl, name);
}

/* Resolves `names` (NULL-terminated, newest first) into *slot; notes a fallback when an
 * older name had to be used. Returns false when none exists. */
static bool resolve_one(struct nvb *p, void **slot, const char *const *names)
{
        for (unsigned i = 0; names[i]; i++) {
                void *fn = sym(p, names[i]);
                if (!fn)
                        continue;
                *slot = fn;
                if (i > 0) {
                        size_t n = strlen(p->fallbacks);
                        snprintf(p->fallbacks + n, sizeof(p->fallbacks) - n, "%s%s", n ? " " : "",
                                 names[i]);
                }
                return true;
        }
        return false;
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define SLOT(fn)   ((void **)(void *)&p->f.fn)

static int resolve(struct nvb *p, const kerf_backend_options *opt, char *err)
{
        /* Required: without these nothing works. */
        const char *missing = NULL;
        if (!resolve_one(p, SLOT(nvmlInit_v2), NAMES("nvmlInit_v2", "nvmlInit")))
                missing = "nvmlInit_v2";
        else if (!resolve_one(p, SLOT(nvmlShutdown), NAMES("nvmlShutdown")))
                missing = "nvmlShutdown";
        else if (!resolve_one(p, SLOT(nvmlErrorString), NAMES("nvmlErrorString")))
                missing = "nvmlErrorString";
        else if (!resolve_one(p, SLOT(nvmlDeviceGetCount_v2),
                              NAMES("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount")))
                missing = "nvmlDeviceGetCount_v2";
        else if (!resolve_one(p, SLOT(nvmlDeviceGetHandleByIndex_v2),
                              NAMES("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex")))
                missing = "nvmlDeviceGetHandleByIndex_v2";
        else if (!resolve_one(p, SLOT(nvmlDeviceGetUUID), NAMES("nvmlDeviceGetUUID")))
                missing = "nvmlDeviceGetUUID";
        else if (!resolve_one(p, SLOT(nvmlDeviceGetName), NAMES("nvmlDeviceGetName")))
                missing = "nvmlDeviceGetName";
        else if (!resolve_one(p, SLOT(nvmlSystemGetDriverVersion),
                              NAMES("nvmlSystemGetDriverVersion")))
                missing = "nvmlSystemGetDriverVersion";
        if (missing)
                return kerf__nvb_refuse(err, -KERF_EBACKEND,
                                        "%s: required NVML symbol %s (or an older name) missing",
                                        p->library, missing);

        /* Optional: the matching operation answers -KERF_EUNSUPP without them. */
        resolve_one(p, SLOT(nvmlSystemGetCudaDriverVersion),
                    NAMES("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"));
        resolve_one(p, SLOT(nvmlDeviceGetMinorNumber), NAMES("nvmlDeviceGetMinorNumber"));
        resolve_one(p, SLOT(nvmlDeviceGetPciInfo_v3), NAMES("nvmlDeviceGetPciInfo_v3"));
        resolve_one(p, SLOT(nvmlDeviceGetMemoryInfo_v2), NAMES("nvmlDeviceGetMemoryInfo_v2"));
        resolve_one(p, SLOT(nvmlDeviceGetMemoryInfo), NAMES("nvmlDeviceGetMemoryInfo"));
        resolve_one(p, SLOT(nvmlDeviceGetUtilizationRates), NAMES("nvmlDeviceGetUtilizationRates"));
        resolve_one(p, SLOT(nvmlDeviceGetProcessUtilization),
                    NAMES("nvmlDeviceGetProcessUtilization"));
        if (!resolve_one(p, SLOT(nvmlDeviceGetComputeRunningProcesses_v3),
                         NAMES("nvmlDeviceGetComputeRunningProcesses_v3",
                               "nvmlDeviceGetComputeRunningProcesses_v2")))
                resolve_one(p, SLOT(nvmlDeviceGetComputeRunningProcesses),
                            NAMES("nvmlDeviceGetComputeRunningProcesses_v3",
                                  "nvmlDeviceGetComputeRunningProcesses"));
        resolve_one(p, SLOT(nvmlDeviceGetMigMode), NAMES("nvmlDeviceGetMigMode"));
        /* Safety: the mode-changing entry point is not even looked up unless allowed. */
        if (opt->allow_mig_mode_change)
                resolve_one(p, SLOT(nvmlDeviceSetMigMode), NAMES("nvmlDeviceSetMigMode"));
        resolve_one(p, SLOT(nvmlDeviceGetGpuInstanceProfileInfo),
                    NAMES("nvmlDeviceGetGpuInstanceProfileInfo"));
        resolve_one(p, SLOT(nvmlDeviceGetGpuInstancePossiblePlacements_v2),
                    NAMES("nvmlDeviceGetGpuInstancePossiblePlacements_v2"));
        resolve_one(p, SLOT(nvmlDeviceCreateGpuInstanceWithPlacement),
                    NAMES("nvmlDeviceCreateGpuInstanceWithPlacement"));
        resolve_one(p, SLOT(nvmlGpuInstanceDestroy), NAMES("nvmlGpuInstanceDestroy"));
        resolve_one(p, SLOT(nvmlDeviceGetGpuInstances), NAMES("nvmlDeviceGetGpuInstances"));
        resolve_one(p, SLOT(nvmlDeviceGetGpuInstanceById), NAMES("nvmlDeviceGetGpuInstanceById"));
        resolve_one(p, SLOT(nvmlGpuInstanceGetInfo), NAMES("nvmlGpuInstanceGetInfo"));
        resolve_one(p, SLOT(nvmlGpuInstanceGetComputeInstanceProfileInfo),
                    NAMES("nvmlGpuInstanceGetComputeInstanceProfileInfo"));
        resolve_one(p, SLOT(nvmlGpuInstanceCreateComputeInstance),
                    NAMES("nvmlGpuInstanceCreateComputeInstance"));
        resolve_one(p, SLOT(nvmlGpuInstanceGetComputeInstances),
                    NAMES("nvmlGpuInstanceGetComputeInstances"));
        resolve_one(p, SLOT(nvmlComputeInstanceDestroy), NAMES("nvmlComputeInstanceDestroy"));
        resolve_one(p, SLOT(nvmlComputeInstanceGetInfo_v2), NAMES("nvmlComputeInstanceGetInfo_v2"));
        resolve_one(p, SLOT(nvmlDeviceGetMaxMigDeviceCount),
                    NAMES("nvmlDeviceGetMaxMigDeviceCount"));
        resolve_one(p, SLOT(nvmlDeviceGetMigDeviceHandleByIndex),
                    NAMES("nvmlDeviceGetMigDeviceHandleByIndex"));
        resolve_one(p, SLOT(nvmlDeviceGetGpuInstanceId), NAMES("nvmlDeviceGetGpuInstanceId"));
        resolve_one(p, SLOT(nvmlDeviceGetComputeInstanceId),
                    NAMES("nvmlDeviceGetComputeInstanceId"));
        resolve_one(p, SLOT(nvmlEventSetCreate), NAMES("nvmlEventSetCreate"));
        resolve_one(p, SLOT(nvmlDeviceGetSupportedEventTypes),
                    NAMES("nvmlDeviceGetSupportedEventTypes"));
        resolve_one(p, SLOT(nvmlDeviceRegisterEvents), NAMES("nvmlDeviceRegisterEvents"));
        if (resolve_one(p, SLOT(nvmlEventSetWait_v2),
                        NAMES("nvmlEventSetWait_v2", "nvmlEventSetWait")))
                p->wait_v1 = dlsym(p->dl, "nvmlEventSetWait_v2") == NULL;
        resolve_one(p, SLOT(nvmlEventSetFree), NAMES("nvmlEventSetFree"));
        return 0;
}

static void discover(struct nvb *p)
{
        unsigned n = 0;
        if (p->f.nvmlDeviceGetCount_v2(&n) != NVML_SUCCESS)
                n = 0;
        if (n > KERF_MAX_NODE_GPUS)
                n = KERF_MAX_NODE_GPUS;
        for (unsigned i = 0; i < n; i++) {
                struct nvb_gpu *g = &p->gpus[i];
                g->open_rc = p->f.nvmlDeviceGetHandleByIndex_v2(i, &g->dev);
                if (g->open_rc != NVML_SUCCESS) {
                        g->dev = NULL; /* e.g. NO_PERMISSION: counted but not usable */
                        continue;
                }
                if (p->f.nvmlDeviceGetUUID(g->dev, g->uuid, sizeof(g->uuid)) != NVML_SUCCESS)
                        g->uuid[0] = '\0';
        }
        p->n_gpus = n;
}

static void nvb_free(struct nvb *p)
{
        if (p->inited)
                p->f.nvmlShutdown();
        if (p->dl)
                dlclose(p->dl);
        free(p);
}

static int nvb_open(kerf_backend *b, const kerf_backend_options *opt)
{
        char err[NVB_ERR] = "";
        const char *path = opt->library;
        nvmlReturn_t rc;
        int r;
        struct nvb *p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        if (!path || !*path)
                path = getenv(KERF_BACKEND_NVML_ENV);
        if (!path || !*path)
                path = KERF_BACKEND_DEFAULT_NVML;
        snprintf(p->library, sizeof(p->library), "%s", path);
        p->b = b;
        p->poll_ms = opt->event_poll_ms ? opt->event_poll_ms : 200;
        /* RTLD_LOCAL: every symbol is reached through dlsym on this handle, so nothing needs to
         * be global, and NVML's names stay out of libraries loaded later. */
        p->dl = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
        if (!p->dl) {
                const char *e = dlerror();
                kerf_backend_set_error(b, "cannot load NVML library %s: %s", path,
                                       e ? e : "dlopen failed");
                nvb_free(p);
                return -KERF_EBACKEND;
        }
        if ((r = resolve(p, opt, err)) < 0)
                goto fail;
        rc = p->f.nvmlInit_v2();
        if (rc != NVML_SUCCESS) {
                r = kerf__nvb_fail(p, err, rc, "nvmlInit_v2 (%s)", path);
                if (r == 0)
                        r = -KERF_EBACKEND;
                goto fail;
        }
        p->inited = true;
        discover(p);
        kerf_backend_priv_set(b, p);
        return 0;
fail:
        kerf_backend_set_error(b, "%s", err);
        nvb_free(p);
        return r < 0 ? r : -KERF_EBACKEND;
}

static void nvb_close(kerf_backend *b)
{
        struct nvb *p = kerf_backend_priv(b);
        if (!p)
                return;
        nvb_free(p);
        kerf_backend_priv_set(b, NULL);
}

static unsigned nvb_gpu_count(kerf_backend *b)
{
        struct nvb *p = kerf_backend_priv(b);
        return p ? p->n_gpus : 0;
}

static int nvb_versions(kerf_backend *b, kerf_backend_versions *ret)
{
        struct nvb *p = kerf_backend_priv(b);
        char err[NVB_ERR];
        nvmlReturn_t rc;
        int cuda = 0;
        snprintf(ret->backend, sizeof(ret->backend), "nvml");
        snprintf(ret->library, sizeof(ret->library), "%s", p->library);
        snprintf(ret->fallbacks, sizeof(ret->fallbacks), "%s", p->fallbacks);
        ret->fallback_used = p->fallbacks[0] != '\0';
        rc = p->f.nvmlSystemGetDriverVersion(ret->driver, sizeof(ret->driver));
        if (rc != NVML_SUCCESS) {
                int r = kerf__nvb_fail(p, err, rc, "nvmlSystemGetDriverVersion");
                kerf_backend_set_error(b, "%s", err);
                return r;
        }
        if (p->f.nvmlSystemGetCudaDriverVersion &&
            p->f.nvmlSystemGetCudaDriverVersion(&cuda) == NVML_SUCCESS)
                ret->cuda_version = cuda;
        return 0;
}

static const kerf_backend_ops nvml_ops = {
    .name = "nvml",
    .open = nvb_open,
    .close = nvb_close,
    .versions = nvb_versions,
    .gpu_count = nvb_gpu_count,
    .gpu_get = kerf__nvb_gpu_get,
    .mig_list = kerf__nvb_op_mig_list,
    .mig_create = kerf__nvb_mig_create,
    .mig_destroy = kerf__nvb_mig_destroy,
    .mig_mode_set = kerf__nvb_mig_mode_set,
    .proc_list = kerf__nvb_proc_list,
    .util_get = kerf__nvb_util_get,
    .proc_util_list = kerf__nvb_proc_util_list,
    .watch_start = kerf__nvb_watch_start,
    .watch_stop = kerf__nvb_watch_stop,
};

const kerf_backend_ops *kerf_backend_nvml_ops(void)
{
        return &nvml_ops;
}
