/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_internal.h - shared pieces of the simulated libnvidia-ml.so.1 (handles, entry/exit) */
#ifndef KERF_SIM_NVML_INTERNAL_H
#define KERF_SIM_NVML_INTERNAL_H

#include "nvml_abi.h"
#include "../simstate.h"

/* Every exported NVML symbol carries this; everything else is hidden (-fvisibility=hidden and
 * the version script libnvidia-ml.map). */
#define NVML_API __attribute__((visibility("default")))

#define NVML_MAX_GI_ID   15 /* GI ids are 1..14 */
#define NVML_MAX_MIG_DEV 7  /* nvmlDeviceGetMaxMigDeviceCount on a MIG-enabled GPU */

#define HANDLE_MAGIC 0x6b657266u

/* Handles are static storage, one per possible (gpu[, gi[, ci]]): stable pointers, valid in
 * any thread, never freed. Whether the instance still exists is checked on each use. */
struct nvmlDevice_st {
        unsigned magic;
        int gpu;
        int gi; /* -1 for a physical GPU */
        int ci;
};
struct nvmlGpuInstance_st {
        unsigned magic;
        int gpu;
        int id;
};
struct nvmlComputeInstance_st {
        unsigned magic;
        int gpu;
        int gi;
        int id;
};

/* Takes the library's read lock and checks nvmlInit was called: NVML_SUCCESS or
 * NVML_ERROR_UNINITIALIZED. Pair a success with kerf__nvml_leave(). */
nvmlReturn_t kerf__nvml_enter(void);
void kerf__nvml_leave(void);
/* The open simulated node (valid between enter and leave). */
kerf_sim *kerf__nvml_sim(void);

/* Maps a kerf/errno code to an NVML return code. */
nvmlReturn_t kerf__nvml_err(int rc);

/* Handle accessors; NULL when out of range. */
struct nvmlDevice_st *kerf__nvml_dev(unsigned gpu);
struct nvmlDevice_st *kerf__nvml_migdev(unsigned gpu, unsigned gi, unsigned ci);
/* Validates a device handle: NVML_SUCCESS, INVALID_ARGUMENT (not ours / stale MIG device).
 * With `live`, also GPU_IS_LOST for a lost GPU. Writes the GPU info when gi_out is not NULL. */
nvmlReturn_t kerf__nvml_dev_check(nvmlDevice_t d, bool live, kerf_sim_gpu_info *ret);

/* Copies `s` into an NVML string buffer: INVALID_ARGUMENT for NULL, INSUFFICIENT_SIZE when
 * `len` cannot hold it with its NUL (buf untouched). */
nvmlReturn_t kerf__nvml_copy_str(char *buf, unsigned len, const char *s);
/* Simulated busy percent of a GPU over the last second (for clocks, power, temperature). */
unsigned kerf__nvml_busy_pct(const kerf_sim_gpu_info *g);
/* Running-process lists (compute, graphics, MPS): ver 1 = nvmlProcessInfo_v1_t, else
 * nvmlProcessInfo_t. `none` answers an empty list (graphics and MPS are not simulated). */
nvmlReturn_t kerf__nvml_procs(nvmlDevice_t device, unsigned *count, void *infos, int ver,
                              bool none);

/* Enters the library and checks a device query, in NVML's order: UNINITIALIZED, the handle
 * (INVALID_ARGUMENT, GPU_IS_LOST), a NULL `out` (INVALID_ARGUMENT), then NOT_SUPPORTED for a
 * MIG device handle unless `mig_ok`. Writes the GPU's info to *g. On NVML_SUCCESS the caller
 * must leave (kerf__nvml_leave_r); on failure it has left already. */
nvmlReturn_t kerf__nvml_enter_dev(nvmlDevice_t d, const void *out, bool mig_ok,
                                  kerf_sim_gpu_info *g);
/* kerf__nvml_leave(), then returns r. */
static inline nvmlReturn_t kerf__nvml_leave_r(nvmlReturn_t r)
{
        kerf__nvml_leave();
        return r;
}

#endif /* KERF_SIM_NVML_INTERNAL_H */
