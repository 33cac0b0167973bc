/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_old.c - test library: an "old NVML" exporting only unversioned names, forwarding to the
 * simulated libnvidia-ml.so.1 (loaded RTLD_LOCAL so its versioned names stay invisible).
 * Built a second time with KERF_TEST_NVML_REBADGE: then it also has nvmlDeviceGetPciInfo_v3 and
 * names every GPU "NVIDIA Graphics Device" (what a driver says of a board it does not know),
 * so the backend can only find the model by PCI device id. */
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "nvml_abi.h"

static void *real(const char *name)
{
        static void *h;
        if (!h)
                h = dlopen(KERF_TEST_NVML, RTLD_NOW | RTLD_LOCAL);
        return h ? dlsym(h, name) : NULL;
}

/* Each forwarder looks up `target` in the simulated library and calls it. */
#define FWD(name, target, params, args)                                                            \
        nvmlReturn_t name params                                                                   \
        {                                                                                          \
                __typeof__(&target) fn = (__typeof__(&target))real(#target);                       \
                return fn ? fn args : NVML_ERROR_FUNCTION_NOT_FOUND;                               \
        }

FWD(nvmlInit, nvmlInit_v2, (void), ())
FWD(nvmlShutdown, nvmlShutdown, (void), ())
FWD(nvmlSystemGetDriverVersion, nvmlSystemGetDriverVersion, (char *v, unsigned int l), (v, l))
FWD(nvmlSystemGetCudaDriverVersion, nvmlSystemGetCudaDriverVersion, (int *v), (v))
FWD(nvmlDeviceGetCount, nvmlDeviceGetCount_v2, (unsigned int *c), (c))
FWD(nvmlDeviceGetHandleByIndex, nvmlDeviceGetHandleByIndex_v2, (unsigned int i, nvmlDevice_t *d),
    (i, d))
FWD(nvmlDeviceGetUUID, nvmlDeviceGetUUID, (nvmlDevice_t d, char *u, unsigned int l), (d, u, l))
#ifdef KERF_TEST_NVML_REBADGE
FWD(nvmlDeviceGetPciInfo_v3, nvmlDeviceGetPciInfo_v3, (nvmlDevice_t d, nvmlPciInfo_t *p), (d, p))
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *u, unsigned int l)
{
        static const char name[] = "NVIDIA Graphics Device";
        __typeof__(&nvmlDeviceGetName) fn =
            (__typeof__(&nvmlDeviceGetName))real("nvmlDeviceGetName");
        nvmlReturn_t r = fn ? fn(d, u, l) : NVML_ERROR_FUNCTION_NOT_FOUND;
        if (r == NVML_SUCCESS) {
                if (l < sizeof(name))
                        return NVML_ERROR_INSUFFICIENT_SIZE;
                memcpy(u, name, sizeof(name));
        }
        return r;
}
#else
FWD(nvmlDeviceGetName, nvmlDeviceGetName, (nvmlDevice_t d, char *u, unsigned int l), (d, u, l))
#endif
FWD(nvmlDeviceGetMemoryInfo, nvmlDeviceGetMemoryInfo, (nvmlDevice_t d, nvmlMemory_t *m), (d, m))
FWD(nvmlDeviceGetMigMode, nvmlDeviceGetMigMode, (nvmlDevice_t d, unsigned *c, unsigned *p),
    (d, c, p))
FWD(nvmlDeviceGetComputeRunningProcesses, nvmlDeviceGetComputeRunningProcesses,
    (nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_v1_t *i), (d, c, i))

const char *nvmlErrorString(nvmlReturn_t r)
{
        __typeof__(&nvmlErrorString) fn = (__typeof__(&nvmlErrorString))real("nvmlErrorString");
        return fn ? fn(r) : "unknown";
}
