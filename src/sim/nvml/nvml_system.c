/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_system.c - simulated NVML: NVML version, process names and lists, PCI ids, GPU pairs */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "nvml_internal.h"
#include "pci_bus_id.h"

/* "<CUDA major>.<driver version>", the form NVML uses ("12.550.54.15"). */
NVML_API nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        kerf_sim_node_info n;
        char buf[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE];
        int rc = kerf_sim_node_get(kerf__nvml_sim(), &n);
        if (rc < 0) {
                r = kerf__nvml_err(rc);
        } else {
                snprintf(buf, sizeof(buf), "%d.%s", n.cuda_version / 1000, n.driver);
                r = kerf__nvml_copy_str(version, length, buf);
        }
        kerf__nvml_leave();
        return r;
}

/* The process's executable as started (argv[0], as nvidia-smi shows it), else its comm;
 * cropped to `length` like NVML's. Any live pid may be asked, as on hardware. */
NVML_API nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        char path[64], buf[4096];
        if (!name || length == 0) {
                r = NVML_ERROR_INVALID_ARGUMENT;
                goto out;
        }
        snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
        ssize_t n = pid ? kerf_file_read_small(path, buf, sizeof(buf)) : -1;
        if (n <= 0) { /* absent, or a kernel thread / zombie: its comm */
                snprintf(path, sizeof(path), "/proc/%u/comm", pid);
                if (!pid || kerf_file_read_small(path, buf, sizeof(buf)) <= 0) {
                        r = NVML_ERROR_NOT_FOUND;
                        goto out;
                }
                buf[strcspn(buf, "\n")] = '\0';
        }
        size_t len = strlen(buf); /* cmdline: argv[0] ends at the first NUL */
        if (len > length - 1)
                len = length - 1;
        memcpy(name, buf, len);
        name[len] = '\0';
out:
        kerf__nvml_leave();
        return r;
}

/* A GPU's address (function 0), in either form kerf_pci_bus_id_parse accepts. */
static bool parse_bus_id(const char *s, unsigned *dom, unsigned *bus, unsigned *dev)
{
        unsigned fn;
        return kerf_pci_bus_id_parse(s, dom, bus, dev, &fn) && fn == 0;
}

/* The simulated addresses of nvmlDeviceGetPciInfo_v3: domain 0, bus 0x10 + index, device 0. */
NVML_API nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        unsigned dom, bus, dev;
        kerf_sim_gpu_info g;
        if (!pciBusId || !device || !parse_bus_id(pciBusId, &dom, &bus, &dev)) {
                r = NVML_ERROR_INVALID_ARGUMENT;
        } else if (dom != 0 || dev != 0 || bus < 0x10 ||
                   bus - 0x10 >= kerf_sim_gpu_count(kerf__nvml_sim()) ||
                   kerf_sim_gpu_get(kerf__nvml_sim(), bus - 0x10, &g) < 0) {
                r = NVML_ERROR_NOT_FOUND;
        } else if (g.lost) {
                r = NVML_ERROR_GPU_IS_LOST;
        } else {
                *device = kerf__nvml_dev(g.index);
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device)
{
        return nvmlDeviceGetHandleByPciBusId_v2(pciBusId, device);
}

/* ---- graphics and MPS processes ------------------------------------------------------------ */

/* Graphics and MPS processes are not simulated: empty lists, with the count protocol. */
static nvmlReturn_t no_procs(nvmlDevice_t device, unsigned *count, void *infos, int ver)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        return kerf__nvml_leave_r(kerf__nvml_procs(device, count, infos, ver, true));
}

NVML_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device,
                                                               unsigned int *infoCount,
                                                               nvmlProcessInfo_t *infos)
{
        return no_procs(device, infoCount, infos, 3);
}

NVML_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device,
                                                               unsigned int *infoCount,
                                                               nvmlProcessInfo_v2_t *infos)
{
        return no_procs(device, infoCount, infos, 2);
}

NVML_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device,
                                                            unsigned int *infoCount,
                                                            nvmlProcessInfo_v1_t *infos)
{
        return no_procs(device, infoCount, infos, 1);
}

NVML_API nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(nvmlDevice_t device,
                                                                 unsigned int *infoCount,
                                                                 nvmlProcessInfo_t *infos)
{
        return no_procs(device, infoCount, infos, 3);
}

NVML_API nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v2(nvmlDevice_t device,
                                                                 unsigned int *infoCount,
                                                                 nvmlProcessInfo_v2_t *infos)
{
        return no_procs(device, infoCount, infos, 2);
}

NVML_API nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses(nvmlDevice_t device,
                                                              unsigned int *infoCount,
                                                              nvmlProcessInfo_v1_t *infos)
{
        return no_procs(device, infoCount, infos, 1);
}

/* ---- pairs of devices: P2P, topology, NVLink ---------------------------------------------- */

/* Checks both handles of a pair query; on success the caller must leave. */
static nvmlReturn_t enter_pair(nvmlDevice_t d1, nvmlDevice_t d2, const void *out,
                               kerf_sim_gpu_info *g1, kerf_sim_gpu_info *g2)
{
        nvmlReturn_t r = kerf__nvml_enter_dev(d1, out, true, g1);
        if (r)
                return r;
        if ((r = kerf__nvml_dev_check(d2, true, g2)))
                kerf__nvml_leave();
        return r;
}

/* Peer access is not simulated (the simulated libcuda has none): every pair answers the
 * status NOT_SUPPORTED. */
NVML_API nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2,
                                             nvmlGpuP2PCapsIndex_t p2pIndex,
                                             nvmlGpuP2PStatus_t *p2pStatus)
{
        kerf_sim_gpu_info g1, g2;
        nvmlReturn_t r = enter_pair(device1, device2, p2pStatus, &g1, &g2);
        if (r)
                return r;
        if ((unsigned)p2pIndex >= NVML_P2P_CAPS_INDEX_UNKNOWN)
                return kerf__nvml_leave_r(NVML_ERROR_INVALID_ARGUMENT);
        *p2pStatus = NVML_P2P_STATUS_NOT_SUPPORTED;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

/* From the GPUs' NUMA nodes: the same GPU is INTERNAL, the same node NODE, else SYSTEM (the
 * simulated PCI addresses have no tree under them). */
NVML_API nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1,
                                                          nvmlDevice_t device2,
                                                          nvmlGpuTopologyLevel_t *pathInfo)
{
        kerf_sim_gpu_info g1, g2;
        nvmlReturn_t r = enter_pair(device1, device2, pathInfo, &g1, &g2);
        if (r)
                return r;
        if (device1->gi >= 0 || device2->gi >= 0)
                return kerf__nvml_leave_r(NVML_ERROR_NOT_SUPPORTED);
        if (g1.index == g2.index)
                *pathInfo = NVML_TOPOLOGY_INTERNAL;
        else if (g1.numa >= 0 && g1.numa == g2.numa)
                *pathInfo = NVML_TOPOLOGY_NODE;
        else
                *pathInfo = NVML_TOPOLOGY_SYSTEM;
        return kerf__nvml_leave_r(NVML_SUCCESS);
}

/* NVLink is not simulated. */
NVML_API nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
                                               nvmlEnableState_t *isActive)
{
        kerf_sim_gpu_info g;
        nvmlReturn_t r = kerf__nvml_enter_dev(device, isActive, false, &g);
        if (r)
                return r;
        return kerf__nvml_leave_r(link >= NVML_NVLINK_MAX_LINKS ? NVML_ERROR_INVALID_ARGUMENT
                                                                : NVML_ERROR_NOT_SUPPORTED);
}
