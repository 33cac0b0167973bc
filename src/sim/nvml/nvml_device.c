/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_device.c - simulated NVML: init/shutdown, system and device queries, processes */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kerf/errno.h"
#include "nvml_internal.h"

/*
 * Call graph: nvmlInit_v2 -> kerf_sim_open($KERF_SIM_DIR) (first reference only);
 * every other entry point -> kerf__nvml_enter (read lock, initialised?) -> kerf_sim_* ->
 * kerf__nvml_leave; nvmlShutdown -> kerf_sim_close (last reference only, write lock, so no
 * call is in flight while the state is unmapped).
 */
static pthread_rwlock_t g_rw = PTHREAD_RWLOCK_INITIALIZER;
static unsigned g_refs;
static kerf_sim *g_st;

static struct nvmlDevice_st g_devs[KERF_SIM_MAX_GPUS];
static struct nvmlDevice_st g_migdevs[KERF_SIM_MAX_GPUS][NVML_MAX_GI_ID][KERF_SIM_MAX_CIS];

nvmlReturn_t kerf__nvml_enter(void)
{
        if (pthread_rwlock_rdlock(&g_rw) != 0)
                return NVML_ERROR_UNKNOWN;
        if (!g_st) {
                pthread_rwlock_unlock(&g_rw);
                return NVML_ERROR_UNINITIALIZED;
        }
        return NVML_SUCCESS;
}

void kerf__nvml_leave(void)
{
        pthread_rwlock_unlock(&g_rw);
}

kerf_sim *kerf__nvml_sim(void)
{
        return g_st;
}

nvmlReturn_t kerf__nvml_err(int rc)
{
        switch (rc) {
        case 0:
                return NVML_SUCCESS;
        case -EINVAL:
                return NVML_ERROR_INVALID_ARGUMENT;
        case -ENOENT:
                return NVML_ERROR_NOT_FOUND;
        case -ENOSPC:
                return NVML_ERROR_INSUFFICIENT_RESOURCES;
        case -ENOMEM:
                return NVML_ERROR_MEMORY;
        case -ETIMEDOUT:
                return NVML_ERROR_TIMEOUT;
        case -EPERM:
        case -KERF_EPERM:
                return NVML_ERROR_NO_PERMISSION;
        case -KERF_EINUSE:
                return NVML_ERROR_IN_USE;
        case -KERF_EUNSUPP:
                return NVML_ERROR_NOT_SUPPORTED;
        case -KERF_EDEVICE:
                return NVML_ERROR_GPU_IS_LOST;
        case -KERF_ECORRUPT:
                return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
        default:
                return NVML_ERROR_UNKNOWN;
        }
}

struct nvmlDevice_st *kerf__nvml_dev(unsigned gpu)
{
        if (gpu >= KERF_SIM_MAX_GPUS)
                return NULL;
        struct nvmlDevice_st *d = &g_devs[gpu];
        d->magic = HANDLE_MAGIC;
        d->gpu = (int)gpu;
        d->gi = d->ci = -1;
        return d;
}

struct nvmlDevice_st *kerf__nvml_migdev(unsigned gpu, unsigned gi, unsigned ci)
{
        if (gpu >= KERF_SIM_MAX_GPUS || gi >= NVML_MAX_GI_ID || ci >= KERF_SIM_MAX_CIS)
                return NULL;
        struct nvmlDevice_st *d = &g_migdevs[gpu][gi][ci];
        d->magic = HANDLE_MAGIC;
        d->gpu = (int)gpu;
        d->gi = (int)gi;
        d->ci = (int)ci;
        return d;
}

static bool in_array(const void *p, const void *base, size_t size, size_t elem)
{
        uintptr_t a = (uintptr_t)p, b = (uintptr_t)base;
        return a >= b && a < b + size && (a - b) % elem == 0;
}

nvmlReturn_t kerf__nvml_dev_check(nvmlDevice_t d, bool live, kerf_sim_gpu_info *ret)
{
        kerf_sim_gpu_info gi;
        if (!d ||
            !(in_array(d, g_devs, sizeof(g_devs), sizeof(g_devs[0])) ||
              in_array(d, g_migdevs, sizeof(g_migdevs), sizeof(g_devs[0]))) ||
            d->magic != HANDLE_MAGIC)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (kerf_sim_gpu_get(g_st, (unsigned)d->gpu, &gi) < 0)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (d->gi >= 0) {
                kerf_sim_target t = {d->gpu, d->gi, d->ci};
                uint64_t tot;
                if (kerf_sim_target_mem(g_st, t, &tot, NULL) < 0)
                        return NVML_ERROR_INVALID_ARGUMENT; /* the MIG device was destroyed */
        }
        if (live && gi.lost)
                return NVML_ERROR_GPU_IS_LOST;
        if (ret)
                *ret = gi;
        return NVML_SUCCESS;
}

/* ---- init, errors, system ---------------------------------------------------------------- */

NVML_API nvmlReturn_t nvmlInit_v2(void)
{
        nvmlReturn_t r = NVML_SUCCESS;
        pthread_rwlock_wrlock(&g_rw);
        if (g_refs == 0) {
                int rc = kerf_sim_open(NULL, &g_st);
                if (rc == -ENOENT || rc == -EINVAL)
                        r = NVML_ERROR_DRIVER_NOT_LOADED; /* no simulated node: "no driver" */
                else if (rc < 0)
                        r = kerf__nvml_err(rc);
        }
        if (r == NVML_SUCCESS)
                g_refs++;
        pthread_rwlock_unlock(&g_rw);
        return r;
}

NVML_API nvmlReturn_t nvmlInit(void)
{
        return nvmlInit_v2();
}

/* pynvml's nvmlInit() calls this. NO_GPUS / NO_ATTACH change nothing here: a node without a
 * simulated state still answers DRIVER_NOT_LOADED (no driver, not merely no GPUs). */
NVML_API nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
        (void)flags;
        return nvmlInit_v2();
}

NVML_API nvmlReturn_t nvmlShutdown(void)
{
        nvmlReturn_t r = NVML_SUCCESS;
        pthread_rwlock_wrlock(&g_rw);
        if (g_refs == 0)
                r = NVML_ERROR_UNINITIALIZED;
        else if (--g_refs == 0)
                g_st = kerf_sim_close(g_st);
        pthread_rwlock_unlock(&g_rw);
        return r;
}

NVML_API const char *nvmlErrorString(nvmlReturn_t result)
{
        static const char *const names[] = {"Success",
                                            "Uninitialized",
                                            "Invalid Argument",
                                            "Not Supported",
                                            "Insufficient Permissions",
                                            "Already Initialized",
                                            "Not Found",
                                            "Insufficient Size",
                                            "Insufficient External Power",
                                            "Driver Not Loaded",
                                            "Timeout",
                                            "Interrupt Request Issue",
                                            "NVML Shared Library Not Found",
                                            "Function Not Found",
                                            "Corrupted infoROM",
                                            "GPU is lost",
                                            "GPU requires restart",
                                            "The operating system has blocked the request",
                                            "RM has detected an NVML/RM version mismatch",
                                            "In use by another client",
                                            "Insufficient Memory",
                                            "No data",
                                            "The requested vgpu operation is not available on "
                                            "target device, becasue ECC is enabled",
                                            "Insufficient resources",
                                            "Frequency not supported",
                                            "Argument version mismatch",
                                            "Deprecated",
                                            "Not Ready",
                                            "GPU not found",
                                            "Invalid state",
                                            "Reset type not supported"};
        if ((unsigned)result < sizeof(names) / sizeof(names[0]))
                return names[result];
        return "Unknown Error";
}

nvmlReturn_t kerf__nvml_copy_str(char *buf, unsigned len, const char *s)
{
        if (!buf)
                return NVML_ERROR_INVALID_ARGUMENT;
        size_t n = strlen(s);
        if (len < n + 1)
                return NVML_ERROR_INSUFFICIENT_SIZE;
        memcpy(buf, s, n + 1);
        return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_node_info n;
        int rc = kerf_sim_node_get(g_st, &n);
        r = rc < 0 ? kerf__nvml_err(rc) : kerf__nvml_copy_str(version, length, n.driver);
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
        nvmlReturn_t r = kerf__nvml_enter(); /* UNINITIALIZED comes before argument checks */
        if (r)
                return r;
        kerf_sim_node_info n;
        int rc = 0;
        if (!cudaDriverVersion)
                r = NVML_ERROR_INVALID_ARGUMENT;
        else if ((rc = kerf_sim_node_get(g_st, &n)) < 0)
                r = kerf__nvml_err(rc);
        else
                *cudaDriverVersion = n.cuda_version;
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
        return nvmlSystemGetCudaDriverVersion(cudaDriverVersion);
}

/* ---- device enumeration and identity ------------------------------------------------------- */

NVML_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
        nvmlReturn_t r = kerf__nvml_enter(); /* UNINITIALIZED comes before argument checks */
        if (r)
                return r;
        if (!deviceCount)
                r = NVML_ERROR_INVALID_ARGUMENT;
        else
                *deviceCount = kerf_sim_gpu_count(g_st);
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)
{
        return nvmlDeviceGetCount_v2(deviceCount);
}

NVML_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        if (!device || index >= kerf_sim_gpu_count(g_st))
                r = NVML_ERROR_INVALID_ARGUMENT;
        else
                *device = kerf__nvml_dev(index);
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
        return nvmlDeviceGetHandleByIndex_v2(index, device);
}

NVML_API nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_target t;
        if (!uuid || !device || (strncmp(uuid, "GPU-", 4) && strncmp(uuid, "MIG-", 4))) {
                r = NVML_ERROR_INVALID_ARGUMENT;
        } else if (kerf_sim_resolve(g_st, uuid, &t) < 0) {
                r = NVML_ERROR_NOT_FOUND;
        } else {
                *device = t.gi < 0
                              ? kerf__nvml_dev((unsigned)t.gpu)
                              : kerf__nvml_migdev((unsigned)t.gpu, (unsigned)t.gi, (unsigned)t.ci);
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        char buf[KERF_SIM_MIG_UUID_LEN];
        if (!(r = kerf__nvml_dev_check(device, false, NULL))) {
                kerf_sim_target t = {device->gpu, device->gi, device->ci};
                int rc = kerf_sim_target_uuid(g_st, t, buf, sizeof(buf));
                r = rc < 0 ? kerf__nvml_err(rc) : kerf__nvml_copy_str(uuid, length, buf);
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gpu_info g;
        if (!(r = kerf__nvml_dev_check(device, false, &g))) {
                char buf[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
                kerf_sim_gi_info gi;
                if (device->gi >= 0 &&
                    kerf_sim_gi_get(g_st, (unsigned)device->gpu, (unsigned)device->gi, &gi) == 0 &&
                    gi.profile)
                        snprintf(buf, sizeof(buf), "%s MIG %s", g.model->product, gi.profile->name);
                else
                        snprintf(buf, sizeof(buf), "%s", g.model->product);
                r = kerf__nvml_copy_str(name, length, buf);
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int *minorNumber)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gpu_info g;
        if (!(r = kerf__nvml_dev_check(device, false, &g))) {
                if (!minorNumber)
                        r = NVML_ERROR_INVALID_ARGUMENT;
                else if (device->gi >= 0)
                        r = NVML_ERROR_NOT_SUPPORTED;
                else
                        *minorNumber = g.index;
        }
        kerf__nvml_leave();
        return r;
}

/* PCI identity: the model's real device id; a made-up but stable address per GPU index (domain
 * 0, bus 0x10 + index, device 0, function 0). A MIG device answers its parent's PCI function
 * [UNVERIFIED on hardware]. The subsystem id is not modelled (0). */
NVML_API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gpu_info g;
        if (!(r = kerf__nvml_dev_check(device, true, &g))) {
                if (!pci) {
                        r = NVML_ERROR_INVALID_ARGUMENT;
                } else {
                        nvmlPciInfo_t v;
                        memset(&v, 0, sizeof(v));
                        v.domain = 0;
                        v.bus = 0x10 + g.index;
                        v.device = 0;
                        v.pciDeviceId = g.model ? g.model->pci_device_id : 0;
                        snprintf(v.busIdLegacy, sizeof(v.busIdLegacy), "%04X:%02X:%02X.0", v.domain,
                                 v.bus, v.device);
                        snprintf(v.busId, sizeof(v.busId), "%08X:%02X:%02X.0", v.domain, v.bus,
                                 v.device);
                        *pci = v;
                }
        }
        kerf__nvml_leave();
        return r;
}

/* ---- memory -------------------------------------------------------------------------------- */

static nvmlReturn_t mem_of(nvmlDevice_t device, uint64_t *total, uint64_t *used)
{
        nvmlReturn_t r = kerf__nvml_dev_check(device, true, NULL);
        if (r)
                return r;
        kerf_sim_target t = {device->gpu, device->gi, -1};
        return kerf__nvml_err(kerf_sim_target_mem(g_st, t, total, used));
}

NVML_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        uint64_t total, used;
        if (!memory)
                r = NVML_ERROR_INVALID_ARGUMENT;
        else if (!(r = mem_of(device, &total, &used)))
                *memory = (nvmlMemory_t){total, total - used, used};
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        uint64_t total, used;
        if (!memory)
                r = NVML_ERROR_INVALID_ARGUMENT;
        else if (memory->version != nvmlMemory_v2)
                r = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
        else if (!(r = mem_of(device, &total, &used))) {
                /* kerf-sim reserves nothing for the driver: reserved is 0 */
                memory->total = total;
                memory->reserved = 0;
                memory->free = total - used;
                memory->used = used;
        }
        kerf__nvml_leave();
        return r;
}

/* ---- utilisation, temperature, power ------------------------------------------------------- */

#define UTIL_WINDOW_MS 1000

NVML_API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                    nvmlUtilization_t *utilization)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gpu_info g;
        unsigned pct;
        if ((r = kerf__nvml_dev_check(device, true, &g)))
                goto out;
        if (device->gi >= 0 || g.mig_enabled) {
                r = NVML_ERROR_NOT_SUPPORTED;
        } else if (!utilization) {
                r = NVML_ERROR_INVALID_ARGUMENT;
        } else {
                r = kerf__nvml_err(kerf_sim_util_gpu(g_st, g.index, UTIL_WINDOW_MS, &pct));
                if (!r)
                        *utilization = (nvmlUtilization_t){pct, 0}; /* bandwidth not modelled */
        }
out:
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                                      nvmlProcessUtilizationSample_t *utilization,
                                                      unsigned int *processSamplesCount,
                                                      unsigned long long lastSeenTimeStamp)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gpu_info g;
        kerf_sim_util_sample s[KERF_SIM_MAX_PROCS];
        unsigned n = 0;
        if ((r = kerf__nvml_dev_check(device, true, &g)))
                goto out;
        if (device->gi >= 0 || g.mig_enabled) {
                r = NVML_ERROR_NOT_SUPPORTED;
                goto out;
        }
        if (!processSamplesCount) {
                r = NVML_ERROR_INVALID_ARGUMENT;
                goto out;
        }
        if ((r = kerf__nvml_err(kerf_sim_util_samples(g_st, g.index, lastSeenTimeStamp, s,
                                                      KERF_SIM_MAX_PROCS, &n))))
                goto out;
        if (n == 0) {
                r = NVML_ERROR_NOT_FOUND;
        } else if (!utilization || *processSamplesCount < n) {
                *processSamplesCount = n;
                r = NVML_ERROR_INSUFFICIENT_SIZE;
        } else {
                for (unsigned i = 0; i < n; i++)
                        utilization[i] = (nvmlProcessUtilizationSample_t){
                            (unsigned)s[i].pid, s[i].ts_us, s[i].sm_pct, 0, 0, 0};
                *processSamplesCount = n;
        }
out:
        kerf__nvml_leave();
        return r;
}

unsigned kerf__nvml_busy_pct(const kerf_sim_gpu_info *g)
{
        unsigned pct = 0;
        if (!g->mig_enabled)
                kerf_sim_util_gpu(g_st, g->index, UTIL_WINDOW_MS, &pct);
        else if (g->n_procs)
                pct = 50; /* per-instance activity is not summed in MIG mode: a mid value */
        return pct;
}

static nvmlReturn_t temp_of(nvmlDevice_t device, int *ret)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_dev_check(device, true, &g);
        if (r)
                return r;
        if (device->gi >= 0)
                return NVML_ERROR_NOT_SUPPORTED;
        *ret = 32 + (int)g.index % 3 + (int)kerf__nvml_busy_pct(&g) * 40 / 100;
        return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device,
                                               nvmlTemperatureSensors_t sensorType,
                                               unsigned int *temp)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        int t;
        if (!temp || sensorType != NVML_TEMPERATURE_GPU)
                r = NVML_ERROR_INVALID_ARGUMENT;
        else if (!(r = temp_of(device, &t)))
                *temp = (unsigned)t;
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t *temperature)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        int t;
        if (!temperature)
                r = NVML_ERROR_INVALID_ARGUMENT;
        else if (temperature->version != nvmlTemperature_v1)
                r = NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
        else if (temperature->sensorType != NVML_TEMPERATURE_GPU)
                r = NVML_ERROR_INVALID_ARGUMENT;
        else if (!(r = temp_of(device, &t)))
                temperature->temperature = t;
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_gpu_info g;
        if ((r = kerf__nvml_dev_check(device, true, &g)))
                goto out;
        if (device->gi >= 0)
                r = NVML_ERROR_NOT_SUPPORTED;
        else if (!power)
                r = NVML_ERROR_INVALID_ARGUMENT;
        else {
                unsigned limit_mw = (g.model->power_limit_w ? g.model->power_limit_w : 300) * 1000u;
                unsigned idle_mw = limit_mw / 10;
                *power = idle_mw + (limit_mw - idle_mw) / 100u * kerf__nvml_busy_pct(&g);
        }
out:
        kerf__nvml_leave();
        return r;
}

/* ---- running processes --------------------------------------------------------------------- */

nvmlReturn_t kerf__nvml_procs(nvmlDevice_t device, unsigned *count, void *infos, int ver, bool none)
{
        kerf_sim_gpu_info g;
        kerf_sim_proc_info p[KERF_SIM_MAX_PROCS];
        unsigned n = 0;
        nvmlReturn_t r = kerf__nvml_dev_check(device, true, &g);
        if (r)
                return r;
        if (!count)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (!none && (r = kerf__nvml_err(kerf_sim_proc_list(g_st, device->gpu, device->gi, p,
                                                            KERF_SIM_MAX_PROCS, &n))))
                return r;
        if (*count < n) {
                *count = n;
                return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        if (n && !infos)
                return NVML_ERROR_INVALID_ARGUMENT;
        for (unsigned i = 0; i < n; i++) {
                if (ver == 1) {
                        ((nvmlProcessInfo_v1_t *)infos)[i] =
                            (nvmlProcessInfo_v1_t){(unsigned)p[i].pid, p[i].mem_bytes};
                } else {
                        unsigned gi = p[i].target.gi < 0 ? KERF_NVML_ID_UNATTRIBUTED
                                                         : (unsigned)p[i].target.gi;
                        unsigned ci = p[i].target.ci < 0 ? KERF_NVML_ID_UNATTRIBUTED
                                                         : (unsigned)p[i].target.ci;
                        ((nvmlProcessInfo_t *)infos)[i] =
                            (nvmlProcessInfo_t){(unsigned)p[i].pid, p[i].mem_bytes, gi, ci};
                }
        }
        *count = n;
        return NVML_SUCCESS;
}

NVML_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                              unsigned int *infoCount,
                                                              nvmlProcessInfo_t *infos)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        r = kerf__nvml_procs(device, infoCount, infos, 3, false);
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
                                                              unsigned int *infoCount,
                                                              nvmlProcessInfo_v2_t *infos)
{
        return nvmlDeviceGetComputeRunningProcesses_v3(device, infoCount, infos);
}

NVML_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
                                                           unsigned int *infoCount,
                                                           nvmlProcessInfo_v1_t *infos)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        r = kerf__nvml_procs(device, infoCount, infos, 1, false);
        kerf__nvml_leave();
        return r;
}
