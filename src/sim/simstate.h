/* SPDX-License-Identifier: Apache-2.0 */
/* simstate.h - the simulated node shared by kerf-sim, the fake NVML and the fake libcuda */
#ifndef KERF_SIM_SIMSTATE_H
#define KERF_SIM_SIMSTATE_H

/*
 * A simulated node lives in a state directory (argument, or $KERF_SIM_DIR) holding one
 * fixed-layout file, `state`, that every process loading the simulated libraries mmap()s
 * MAP_SHARED. A robust process-shared mutex inside the file serialises all changes; a process
 * killed while holding it does not block others. Device memory is only *accounted* here.
 *
 * All functions return 0 (or a count) on success and a negative errno / -KERF_E* code on
 * failure (include/kerf/errno.h); output parameters are written only on success. A kerf_sim
 * handle may be used from several threads at once (every call takes the shared lock).
 * Nothing here prints or exits.
 *
 * Common errors: -EINVAL bad argument, -ENOENT no such GPU/instance/process,
 * -ETIMEDOUT the shared lock was not obtained within KERF_SIM_LOCK_TIMEOUT_MS,
 * -KERF_ECORRUPT the state file failed its magic/version/size check.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kerf/core.h"

#define KERF_SIM_ENV             "KERF_SIM_DIR"
#define KERF_SIM_STATE_FILE      "state"
#define KERF_SIM_MAX_GPUS        16  /* GPUs on a simulated node */
#define KERF_SIM_MAX_GIS         8   /* GPU instances per GPU (7 is the hardware maximum) */
#define KERF_SIM_MAX_CIS         8   /* compute instances per GPU instance */
#define KERF_SIM_MAX_PROCS       256 /* process attachments (pid x target) per node */
#define KERF_SIM_XID_RING        32  /* undelivered XIDs kept per GPU */
#define KERF_SIM_LOCK_TIMEOUT_MS 5000
#define KERF_SIM_NO_ID           (-1)       /* gi/ci of a target that is a whole GPU */
#define KERF_SIM_MIG_UUID_LEN    48         /* "MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" + NUL */
#define KERF_SIM_UTIL_PERIOD_US  1000000ULL /* sample period of per-process utilisation */

typedef struct kerf_sim kerf_sim;

/* Where device work lands: a whole GPU (gi = ci = -1) or one MIG device (GI + CI). */
typedef struct kerf_sim_target {
        int gpu; /* index on the node */
        int gi;  /* GPU-instance id, or -1 */
        int ci;  /* compute-instance id within gi, or -1 */
} kerf_sim_target;

typedef struct kerf_sim_node_info {
        char name[KERF_NAME_LEN];
        char driver[32];  /* "550.54.15" */
        int cuda_version; /* 12040 => 12.4 */
        unsigned n_gpus;
        uint64_t generation; /* bumped by every change to MIG layout, faults or versions */
} kerf_sim_node_info;

typedef struct kerf_sim_gpu_info {
        unsigned index; /* == minor number */
        char uuid[KERF_UUID_LEN];
        const kerf_gpu_model *model;
        int numa;
        bool mig_enabled;
        bool lost;          /* "fallen off the bus": NVML answers GPU_IS_LOST */
        uint64_t mem_total; /* bytes */
        uint64_t mem_used;  /* bytes charged, all processes (and all instances) */
        unsigned n_gis;
        uint64_t xid_count; /* XIDs injected since create/reset */
        unsigned last_xid;  /* 0 when none */
        unsigned n_procs;   /* live attachments on this GPU or its instances */
} kerf_sim_gpu_info;

typedef struct kerf_sim_ci_info {
        unsigned id;
        unsigned profile;                 /* NVML_COMPUTE_INSTANCE_PROFILE_* (== CI profile id) */
        unsigned start, size;             /* compute slices within the GI */
        char uuid[KERF_SIM_MIG_UUID_LEN]; /* the MIG device's "MIG-..." uuid */
} kerf_sim_ci_info;

typedef struct kerf_sim_gi_info {
        unsigned id;
        const kerf_mig_profile *profile;
        unsigned start, size; /* memory slices */
        uint64_t mem_total, mem_used;
        unsigned n_procs;
        unsigned n_cis;
        kerf_sim_ci_info cis[KERF_SIM_MAX_CIS]; /* sorted by id */
} kerf_sim_gi_info;

typedef struct kerf_sim_proc_info {
        pid_t pid;
        kerf_sim_target target;
        char comm[16];
        uint64_t mem_bytes;
        uint64_t engine_ns;      /* device time its contexts held the engine */
        uint64_t attach_us;      /* CLOCK_REALTIME microseconds */
        uint64_t last_active_us; /* last engine accounting, 0 if none */
} kerf_sim_proc_info;

typedef struct kerf_sim_util_sample {
        pid_t pid;
        kerf_sim_target target;
        uint64_t ts_us;  /* sample time (CLOCK_REALTIME us) */
        unsigned sm_pct; /* engine busy share over the sampled period, 0..100 */
} kerf_sim_util_sample;

typedef struct kerf_sim_xid_event {
        uint64_t seq; /* per-GPU sequence number, starts at 1 */
        unsigned xid;
        int gi, ci; /* -1 when not attributed */
        uint64_t ts_us;
} kerf_sim_xid_event;

/* ---- lifecycle ----------------------------------------------------------------------------- */

/* Directory to use: `dir` if not NULL, else $KERF_SIM_DIR. NULL when neither is set. */
const char *kerf_sim_dir_resolve(const char *dir);

/* Creates (or with `force`, replaces) the state of node `node` of `fleet` in `dir` (NULL:
 * $KERF_SIM_DIR), creating the directory 0700 if needed. The file is written aside and
 * renamed into place, mode 0660 less the umask, never world-accessible.
 * Returns 0, -EEXIST (state exists, !force), -EINVAL (no such node, > KERF_SIM_MAX_GPUS GPUs,
 * or no directory given), -errno from the file system. */
int kerf_sim_create(const char *dir, const kerf_fleet *fleet, unsigned node, bool force);

/* Opens the state in `dir` (NULL: $KERF_SIM_DIR). On success *ret owns a handle; release with
 * kerf_sim_close(). Returns -ENOENT (no state), -EPERM (file world-writable or not a regular
 * file), -KERF_ECORRUPT (bad magic/version/size/model), -errno. */
int kerf_sim_open(const char *dir, kerf_sim **ret);
/* Unmaps and frees `st` (NULL is fine); returns NULL. Does not detach any process. */
kerf_sim *kerf_sim_close(kerf_sim *st);
/* The state directory of `st` (owned by `st`). */
const char *kerf_sim_dir(const kerf_sim *st);

/* Back to the state right after create: no MIG instances, processes or faults; MIG modes,
 * driver and CUDA versions as created. */
int kerf_sim_reset(kerf_sim *st);

/* Takes / releases the shared lock, for callers that need several calls to be atomic (the
 * fake libcuda engine; tests). Other kerf_sim_* calls must NOT be made while holding it from
 * the same thread (the lock is not recursive), except those named *_locked. Recovers a lock
 * left by a dead owner. Returns 0, -ETIMEDOUT or -KERF_ECORRUPT. */
int kerf_sim_lock(kerf_sim *st);
void kerf_sim_unlock(kerf_sim *st);

/* ---- node and GPUs ------------------------------------------------------------------------- */

int kerf_sim_node_get(kerf_sim *st, kerf_sim_node_info *ret);
unsigned kerf_sim_gpu_count(kerf_sim *st);
int kerf_sim_gpu_get(kerf_sim *st, unsigned gpu, kerf_sim_gpu_info *ret);
/* Simulated driver change. `driver` is 1..31 chars of digits and dots; cuda_version 0 keeps
 * the current one, else must be 1000..99990. Returns -KERF_EINUSE when processes are
 * attached and !force. */
int kerf_sim_upgrade(kerf_sim *st, const char *driver, int cuda_version, bool force);

/* Resolves "N" (GPU index), "GPU-<uuid>" or "MIG-<uuid>" into *ret. -ENOENT when unknown. */
int kerf_sim_resolve(kerf_sim *st, const char *spec, kerf_sim_target *ret);
/* Memory of a target: capacity and bytes charged by all processes. A whole GPU in MIG mode
 * reports the sum over its instances. Returns -ENOENT for a stale target. */
int kerf_sim_target_mem(kerf_sim *st, kerf_sim_target t, uint64_t *ret_total, uint64_t *ret_used);
/* The uuid of a target ("GPU-..." or "MIG-..."), into buf (>= KERF_SIM_MIG_UUID_LEN). */
int kerf_sim_target_uuid(kerf_sim *st, kerf_sim_target t, char *buf, size_t len);

/* ---- MIG ----------------------------------------------------------------------------------- */

/* Turns MIG mode on/off. -KERF_EINUSE when processes are attached or (turning off) GPU
 * instances exist; -KERF_EUNSUPP on a model without MIG; -KERF_EDEVICE when lost. */
int kerf_sim_mig_mode_set(kerf_sim *st, unsigned gpu, bool on);
/* Creates a GI of driver profile id `profile_id` at memory slice `start` (-1: the first free
 * valid start, as the driver picks). -KERF_EUNSUPP (MIG off / profile unknown), -EINVAL
 * (start not valid for the profile), -ENOSPC (overlap, max count or compute slices exhausted),
 * -KERF_EDEVICE (lost). Writes the new GI id to *ret_id. */
int kerf_sim_gi_create(kerf_sim *st, unsigned gpu, unsigned profile_id, int start,
                       unsigned *ret_id);
/* Destroys a GI. -KERF_EINUSE while it has compute instances or attached processes. */
int kerf_sim_gi_destroy(kerf_sim *st, unsigned gpu, unsigned gi_id);
/* How many more GIs of `profile_id` fit now (0 when none). */
int kerf_sim_gi_remaining(kerf_sim *st, unsigned gpu, unsigned profile_id, unsigned *ret);
/* GIs of a GPU sorted by id; at most `cap` into out; *ret_n = how many exist. */
int kerf_sim_gi_list(kerf_sim *st, unsigned gpu, kerf_sim_gi_info *out, unsigned cap,
                     unsigned *ret_n);
int kerf_sim_gi_get(kerf_sim *st, unsigned gpu, unsigned gi_id, kerf_sim_gi_info *ret);

/* Compute-instance profile `ci_profile` (NVML_COMPUTE_INSTANCE_PROFILE_*) inside a GI whose
 * profile has `gi_slices` compute slices: its slice count, how many fit, or -KERF_EUNSUPP. */
int kerf_sim_ci_profile_slices(unsigned ci_profile, unsigned gi_slices, unsigned *ret_slices,
                               unsigned *ret_max);
/* Creates a CI in a GI at the first free aligned compute slice. -ENOSPC when it does not fit,
 * -KERF_EUNSUPP for a profile the GI cannot hold. */
int kerf_sim_ci_create(kerf_sim *st, unsigned gpu, unsigned gi_id, unsigned ci_profile,
                       unsigned *ret_id);
/* Destroys a CI. -KERF_EINUSE while processes are attached to it. */
int kerf_sim_ci_destroy(kerf_sim *st, unsigned gpu, unsigned gi_id, unsigned ci_id);

/* ---- processes, memory, engine time -------------------------------------------------------- */

/* Records that `pid` has a context on target `t` (idempotent). It then appears in running
 * process lists with 0 bytes. -KERF_EUNSUPP when t is a whole GPU in MIG mode, -KERF_EDEVICE
 * when the GPU is lost, -ENOSPC when the process table is full (after reclaim). */
int kerf_sim_proc_attach(kerf_sim *st, pid_t pid, kerf_sim_target t);
/* Removes pid's attachment to `t` and everything it had charged there. -ENOENT if absent. */
int kerf_sim_proc_detach(kerf_sim *st, pid_t pid, kerf_sim_target t);
/* Removes every attachment of `pid`; returns how many. */
int kerf_sim_proc_detach_all(kerf_sim *st, pid_t pid);
/* Frees the attachments (and charges) of processes that no longer exist (kill(pid,0) gives
 * ESRCH, or the pid was reused by a process with another start time). Returns how many. */
int kerf_sim_reclaim(kerf_sim *st);

/* Atomically charges `bytes` of device memory to (pid, t), attaching if needed. Returns
 * -ENOMEM when the GPU (or the MIG instance) would exceed its capacity counting every
 * process; dead processes' charges are reclaimed before giving up. */
int kerf_sim_mem_charge(kerf_sim *st, pid_t pid, kerf_sim_target t, uint64_t bytes);
/* Returns `bytes` charged by (pid, t). -EINVAL if more than it holds, -ENOENT if not attached. */
int kerf_sim_mem_uncharge(kerf_sim *st, pid_t pid, kerf_sim_target t, uint64_t bytes);

/* Adds `busy_ns` of device time held by pid's context on `t` (written by the libcuda engine
 * when a context gives the engine up). Attaches if needed. */
int kerf_sim_engine_account(kerf_sim *st, pid_t pid, kerf_sim_target t, uint64_t busy_ns);

/* Live attachments (dead ones reclaimed first). gpu < 0: all GPUs; otherwise only that GPU,
 * and if gi >= 0 only that GI. At most `cap` into out; *ret_n = how many exist. */
int kerf_sim_proc_list(kerf_sim *st, int gpu, int gi, kerf_sim_proc_info *out, unsigned cap,
                       unsigned *ret_n);

/* Per-process utilisation samples of a GPU, one per process with engine activity after
 * `since_us` (NVML's lastSeenTimeStamp; 0: any): the sample is taken at the process's last
 * activity (ts_us) and covers the KERF_SIM_UTIL_PERIOD_US before it (sm_pct = engine time
 * gained in that period / the period; time before attach counts as idle). Earlier activity
 * and idle gaps outside that period never dilute it. At most `cap` into out; *ret_n = how
 * many exist. */
int kerf_sim_util_samples(kerf_sim *st, unsigned gpu, uint64_t since_us, kerf_sim_util_sample *out,
                          unsigned cap, unsigned *ret_n);
/* GPU busy percent over the last `window_ms` ending now (sum over processes, capped at 100). */
int kerf_sim_util_gpu(kerf_sim *st, unsigned gpu, unsigned window_ms, unsigned *ret_pct);

/* ---- faults ---------------------------------------------------------------------------------- */

/* Queues XID `xid` (1..999) on a GPU, attributed to GI/CI ids (-1: not attributed; a given
 * gi must exist). Returns the event's sequence number (> 0). */
int64_t kerf_sim_xid_inject(kerf_sim *st, unsigned gpu, unsigned xid, int gi, int ci);
/* The sequence number of the newest XID of a GPU (0 when none yet). */
int kerf_sim_xid_head(kerf_sim *st, unsigned gpu, uint64_t *ret_seq);
/* The oldest XID with seq > after_seq still queued into *ret. -ENOENT when none. */
int kerf_sim_xid_next(kerf_sim *st, unsigned gpu, uint64_t after_seq, kerf_sim_xid_event *ret);
/* Marks the GPU lost (every NVML call on it answers GPU_IS_LOST; charges fail). */
int kerf_sim_gpu_lost(kerf_sim *st, unsigned gpu);
/* Simulated GPU reset: clears lost and queued XIDs. -KERF_EINUSE while processes are
 * attached unless `force` (which then detaches them: a reset kills their contexts). */
int kerf_sim_gpu_reset(kerf_sim *st, unsigned gpu, bool force);

/* Current CLOCK_REALTIME in microseconds (the time base of every *_us field). */
uint64_t kerf_sim_now_us(void);

#endif /* KERF_SIM_SIMSTATE_H */
