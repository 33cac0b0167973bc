/* SPDX-License-Identifier: Apache-2.0 */
/* device.c - device enumeration, names, UUIDs, memory size and attributes */
#include <stdio.h>
#include <string.h>

#include "internal.h"

KERF_CUDA_EXPORT CUresult cuDeviceGetCount(int *count)
{
        if (!count)
                return CUDA_ERROR_INVALID_VALUE;
        CUresult r = kc__check_init();
        if (r)
                return r;
        *count = kc_g.n_devs;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
        if (!device)
                return CUDA_ERROR_INVALID_VALUE;
        CUresult r = kc__check_dev(ordinal);
        if (r)
                return r;
        *device = ordinal;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        if (!name || len <= 0)
                return CUDA_ERROR_INVALID_VALUE;
        snprintf(name, (size_t)len, "%s", kc_g.devs[dev].name);
        return CUDA_SUCCESS;
}

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" -> 16 bytes; unparsable digits give 0. */
static void uuid_bytes(const char *s, CUuuid *out)
{
        memset(out, 0, sizeof(*out));
        const char *p = strchr(s, '-');
        p = p ? p + 1 : s;
        for (int i = 0; i < 16 && *p;) {
                if (*p == '-') {
                        p++;
                        continue;
                }
                unsigned v;
                if (sscanf(p, "%2x", &v) != 1)
                        break;
                out->bytes[i++] = (char)v;
                p += 2;
        }
}

/* v1 (CUDA 9.2) reports the physical GPU even for a MIG device; v2 reports the MIG device. */
KERF_CUDA_EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        if (!uuid)
                return CUDA_ERROR_INVALID_VALUE;
        uuid_bytes(kc_g.devs[dev].gpu_uuid, uuid);
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        if (!uuid)
                return CUDA_ERROR_INVALID_VALUE;
        uuid_bytes(kc_g.devs[dev].uuid, uuid);
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        if (!bytes)
                return CUDA_ERROR_INVALID_VALUE;
        *bytes = kc_g.devs[dev].mem_total;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        if (!pciBusId || len <= 0)
                return CUDA_ERROR_INVALID_VALUE;
        snprintf(pciBusId, (size_t)len, "00000000:%02X:00.0", 0x18 + kc_g.devs[dev].target.gpu);
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
        CUresult r = kc__check_dev(dev);
        if (!r)
                r = kc__check_dev(peerDev);
        if (r)
                return r;
        if (!canAccessPeer)
                return CUDA_ERROR_INVALID_VALUE;
        if (dev == peerDev)
                return CUDA_ERROR_INVALID_DEVICE;
        /* Peer access is not simulated; MIG devices never have it. */
        *canAccessPeer = 0;
        return CUDA_SUCCESS;
}

static int attr_value(const kc_dev *d, CUdevice_attribute a, int *ok)
{
        const kerf_gpu_model *m = d->model;
        bool hopper = m->cc_major >= 9, ampere = m->cc_major >= 8;
        *ok = 1;
        switch (a) {
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
                return 1024;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
                return 1024;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
                return 64;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
                return 2147483647;
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
        case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
                return 65535;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
                return 48 * 1024;
        case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
                return 64 * 1024;
        case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
                return 32;
        case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
        case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
                return 65536;
        case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
                return hopper ? 1980000 : 1410000;
        case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
                return (int)d->sms;
        case CU_DEVICE_ATTRIBUTE_INTEGRATED:
        case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
        case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD:
                return 0;
        case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
        case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
        case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
        case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
        case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
        case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
        case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
        case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
        case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
        case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
                return 1;
        case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
                return 0x18 + d->target.gpu;
        case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
        case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
                return 0;
        case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
                return hopper ? 2619000 : 1593000;
        case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
                return ampere ? 5120 : 4096;
        case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
                return hopper ? 50331648 : 41943040;
        case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
                return ampere ? 2048 : 1024;
        case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
                return 2;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
                return (int)m->cc_major;
        case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
                return (int)m->cc_minor;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
                return hopper ? 233472 : ampere ? 167936 : 98304;
        case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
                return hopper ? 232448 : ampere ? 166912 : 98304;
        case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
                return hopper || ampere ? 32 : 16;
        default:
                /* Attributes inside the enum the simulator does not model read as 0, which is what
                 * the driver reports for unsupported capabilities. */
                *ok = a > 0 && a < CU_DEVICE_ATTRIBUTE_MAX;
                return 0;
        }
}

KERF_CUDA_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
        if (!pi)
                return CUDA_ERROR_INVALID_VALUE;
        CUresult r = kc__check_dev(dev);
        if (r)
                return r;
        int ok;
        int v = attr_value(&kc_g.devs[dev], attrib, &ok);
        if (!ok)
                return CUDA_ERROR_INVALID_VALUE;
        *pi = v;
        return CUDA_SUCCESS;
}
