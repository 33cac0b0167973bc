/* SPDX-License-Identifier: Apache-2.0 */
/* poc_hw.h - what the hardware-route tests (poc_hw.c HW1/HW4, poc_hw_fault.c HW2/HW3) and the
 * neighbour test (poc_neigh.c) share (poc_hw_util.c): NVML read directly, kerfd's units,
 * events and GPUs, the simulated node, MIG profile choice */
#ifndef KERF_POC_HW_H
#define KERF_POC_HW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "poc.h"

/* ---- NVML, read by the harness itself (dlopen) ---- */
/* One MIG device as NVML lists it. */
typedef struct poc_mig_dev {
        char uuid[96];
        int gi, ci;             /* GPU / compute instance ids */
        unsigned long long mem; /* memory total (bytes) */
} poc_mig_dev;

/* Loads NVML once per process: on the simulator the fake libnvidia-ml.so.1 in kerfd's lib dir
 * (health paths.lib) over the simulated node (paths.sim, as KERF_SIM_DIR); on hardware the
 * system's libnvidia-ml.so.1. Returns 0, or -errno with why in err. Never unloaded. */
int poc_nvml_open(poc_ctx *p, char *err, size_t errlen);
/* The MIG devices of the GPU whose uuid is gpu_uuid, at most cap into out. Returns how many
 * there are (may exceed cap), or -errno (NVML not open, no such GPU, MIG not readable). */
int poc_nvml_migs(const char *gpu_uuid, poc_mig_dev *out, int cap);
/* Finds the MIG device `mig_uuid` on GPU gpu_uuid; true and *ret filled when it exists. */
bool poc_nvml_find(const char *gpu_uuid, const char *mig_uuid, poc_mig_dev *ret);
/* The driver version NVML reports ("" when NVML is not open). Static storage. */
const char *poc_nvml_driver(void);

/* ---- kerfd's view ---- */
/* GET /v1/gpus items (caller decrefs), NULL when refused. */
json_t *hw_gpus(poc_ctx *p);
/* Indexes of the GPUs in MIG mode (at most cap); returns how many. */
int hw_mig_gpus(poc_ctx *p, int *out, int cap);
/* The uuid of GPU `index` into buf ("" when unknown). */
void hw_gpu_uuid(poc_ctx *p, int index, char *buf, size_t cap);
/* Whether kerfd lists GPU `index` as faulted (out of service). */
bool hw_gpu_faulted(poc_ctx *p, int index);
/* All units (GET /v1/units, every page; caller decrefs). */
json_t *hw_units(poc_ctx *p);
/* The first unit of t->last (borrowed), or NULL. */
json_t *hw_unit(const poc_task *t);
/* A string / integer field of the task's first unit ("" / -1 when absent). */
const char *hw_unit_str(const poc_task *t, const char *key);
long long hw_unit_int(const poc_task *t, const char *key);
/* The id of the newest event (0 when none). */
long long hw_event_last(poc_ctx *p);
/* Events after id `after` of kind `kind` (NULL: any) whose text has `needle` (NULL: any); the
 * array (caller decrefs) is [] when none. */
json_t *hw_events(poc_ctx *p, long long after, const char *kind, const char *needle);
/* Polls (up to timeout_ms) for such an event; returns it (caller decrefs) or NULL. */
json_t *hw_wait_event(poc_ctx *p, long long after, const char *kind, const char *needle,
                      int timeout_ms);
/* The task ids of an event's blast radius: the list in "tasks [1,2]" of its text. Returns
 * how many (at most cap). */
int hw_blast_tasks(const char *text, long long *out, int cap);
/* The audit records after seq `after` (every page; caller decrefs). */
json_t *hw_audit(poc_ctx *p, long long after);
/* Sets tenant's quota of one resource (nominal; < 0 = unlimited). Returns the HTTP status. */
long hw_quota(poc_ctx *p, const char *tenant, const char *resource, long long nominal);
/* A tenant's usage of a resource (GET /v1/tenants), -1 when unknown. */
long long hw_usage(poc_ctx *p, const char *tenant, const char *resource);

/* ---- MIG profiles of GPU 0's model ---- */
/* The name of the profile with `compute_slices` compute slices and no "+me" (NULL: none). */
const char *hw_profile(poc_ctx *p, unsigned compute_slices);

/* ---- the simulated node (src/sim/simstate.h) ---- */
/* XID `xid` on GPU `gpu` (MIG gi/ci or -1): what `kerf-sim inject xid` does. 0 or -errno. */
int hw_sim_xid(poc_ctx *p, unsigned gpu, unsigned xid, int gi, int ci);
/* A simulated GPU reset (force: processes are detached). 0 or -errno. */
int hw_sim_reset(poc_ctx *p, unsigned gpu);
/* The simulated node's directory ("" on hardware): health paths.sim, else the private kerfd's. */
const char *hw_sim_dir(poc_ctx *p);

/* ---- tasks ---- */
/* A kerf-load task that keeps a unit busy a little for `seconds`: dev mode, short bursts. */
long hw_submit_dev(poc_ctx *p, json_t *rec, poc_task *t, json_t *req, double seconds);
/* Waits until the task runs; returns early (false) when it ended instead. */
bool hw_wait_running(poc_ctx *p, poc_task *t, int timeout_ms);
/* Waits until the task left `running` for an end or pending; true when it did. */
bool hw_wait_gone(poc_ctx *p, poc_task *t, int timeout_ms);
/* Cancels and waits for the end (bounded). */
void hw_cancel_wait(poc_ctx *p, poc_task *t);
/* A time measure: `ms` against `limit` (<=); ms < 0 (it never happened within the wait) is
 * recorded as the failed bool measure "NAME: happened" instead of a made-up time. */
void hw_measure_time(json_t *rec, const char *name, double ms, double limit, const char *note);
/* A tiny ms timer. */
static inline double hw_ms_since(int64_t t0)
{
        return (double)(poc_now_ms() - t0);
}

#endif /* KERF_POC_HW_H */
