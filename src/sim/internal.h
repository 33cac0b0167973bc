/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h - the fixed layout of the kerf-sim state file and helpers shared inside src/sim */
#ifndef KERF_SIM_INTERNAL_H
#define KERF_SIM_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "simstate.h"

/*
 * Layout rules: fixed-size arrays only, no pointers (every process maps the file at its own
 * address). Totals are never stored: used memory is summed from the process slots, so a
 * process that dies half-way through an update cannot leave a total out of step. Bump
 * SIM_LAYOUT_VERSION on any change; kerf_sim_open() refuses other versions.
 */
#define SIM_MAGIC          "KERFSIM\0"
#define SIM_LAYOUT_VERSION 1u
#define SIM_SNAPS          16 /* engine-time snapshots kept per process slot */
#define SIM_SNAP_MIN_US    100000ULL

struct sim_ci {
        uint32_t in_use;
        uint32_t id;
        uint32_t profile;     /* CI profile index/id */
        uint32_t start, size; /* compute slices inside the GI */
        uint32_t pad;
        uint64_t serial; /* per-GPU creation serial: feeds the MIG uuid */
        char uuid[KERF_SIM_MIG_UUID_LEN];
};

struct sim_gi {
        uint32_t in_use;
        uint32_t id;
        uint32_t profile_id;  /* driver profile id */
        uint32_t start, size; /* memory slices */
        uint32_t pad;
        uint64_t serial;
        struct sim_ci ci[KERF_SIM_MAX_CIS];
};

struct sim_xid {
        uint64_t seq; /* 0 = empty */
        uint64_t ts_us;
        uint32_t xid;
        int32_t gi, ci;
        uint32_t pad;
};

struct sim_gpu {
        char uuid[KERF_UUID_LEN];
        char model[KERF_NAME_LEN]; /* canonical model name, looked up on open */
        int32_t numa;
        uint32_t mig_enabled;
        uint32_t mig_initial;
        uint32_t lost;
        uint64_t next_serial;
        uint64_t xid_seq; /* newest XID's seq; 0 = none ever */
        uint64_t xid_count;
        uint32_t last_xid;
        uint32_t pad;
        struct sim_xid xid[KERF_SIM_XID_RING]; /* seq % RING */
        struct sim_gi gi[KERF_SIM_MAX_GIS];
};

struct sim_snap {
        uint64_t ts_us;
        uint64_t ns;
};

struct sim_slot {
        int32_t pid; /* 0 = free */
        int32_t gpu, gi, ci;
        uint64_t starttime; /* /proc/pid/stat field 22, 0 if unknown */
        char comm[16];
        uint64_t mem;
        uint64_t engine_ns;
        uint64_t attach_us;
        uint64_t last_us;
        uint32_t snap_n; /* snapshots written so far */
        uint32_t pad;
        struct sim_snap snap[SIM_SNAPS]; /* snap[(n-1) % SIM_SNAPS] is the newest */
};

struct sim_file {
        char magic[8];
        uint32_t layout_version;
        uint32_t file_size;
        pthread_mutex_t lock;
        char node[KERF_NAME_LEN];
        char driver[32];
        char driver_initial[32];
        int32_t cuda_version;
        int32_t cuda_initial;
        uint32_t n_gpus;
        uint32_t pad;
        uint64_t generation;
        struct sim_gpu gpu[KERF_SIM_MAX_GPUS];
        struct sim_slot slot[KERF_SIM_MAX_PROCS];
};

struct kerf_sim {
        char *dir;
        struct sim_file *f;
        const kerf_gpu_model *models[KERF_SIM_MAX_GPUS];
};

/* Lock helpers: every public function brackets its work with these. */
int kerf__sim_lock(kerf_sim *st);
void kerf__sim_unlock(kerf_sim *st);

/* All below are called with the lock held. */
struct sim_gi *kerf__sim_gi_find(kerf_sim *st, unsigned gpu, unsigned gi_id);
struct sim_ci *kerf__sim_ci_find(struct sim_gi *g, unsigned ci_id);
/* Bytes charged on a target (gi < 0: whole GPU, all instances); live attachments too. */
uint64_t kerf__sim_used(kerf_sim *st, unsigned gpu, int gi, int ci, unsigned *ret_procs);
/* Capacity of gpu or of gi (gi >= 0). */
uint64_t kerf__sim_capacity(kerf_sim *st, unsigned gpu, int gi);
/* Frees slots of dead processes; returns how many. */
int kerf__sim_reclaim_locked(kerf_sim *st);
/* Validates a target against the current layout: 0, -ENOENT or -KERF_EUNSUPP. */
int kerf__sim_target_check(kerf_sim *st, kerf_sim_target t);
/* Writes a deterministic "MIG-xxxxxxxx-..." uuid for (gpu uuid, gi, ci, serial). */
void kerf__sim_mig_uuid(const char *gpu_uuid, unsigned gi, unsigned ci, uint64_t serial,
                        char out[KERF_SIM_MIG_UUID_LEN]);
void kerf__sim_clear_slot(struct sim_slot *s);

/* kerf-sim CLI: prints the node to `o` (text, or one JSON object). Returns 0 or -errno. */
int kerf__sim_describe(kerf_sim *st, FILE *o, bool json);

#endif /* KERF_SIM_INTERNAL_H */
