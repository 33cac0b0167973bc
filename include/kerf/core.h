/* SPDX-License-Identifier: Apache-2.0 */
/* core.h - kerf's resource model: GPU models, MIG profiles, fleets and unit kinds (no I/O) */
#ifndef KERF_CORE_H
#define KERF_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kerf/units.h" /* sizes, durations and their bounds: KERF_GIB, kerf_parse_size() */

#define KERF_UUID_LEN      48 /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" + NUL, with room */
#define KERF_NAME_LEN      64
#define KERF_MIG_SLICES    8  /* memory slices on every MIG-capable model kerf knows */
#define KERF_MIG_COMPUTE   7  /* compute slices */
#define KERF_MAX_NODE_GPUS 64 /* NVLink peer masks are 64-bit */

/* model masks are 64-bit (bit i: kerf_gpu_model_at(i)) */
#define KERF_MAX_GPU_MODELS 64
/* the fleet file (docs/FLEET.md): replicas of a node, its highest NUMA node, the length of an
 * nvlink label with its NUL */
#define KERF_MAX_NODE_REPLICAS 4096
#define KERF_MAX_NUMA_NODE     1023
#define KERF_NVLINK_LABEL_LEN  32

/* ---- unit kinds and GPU sharing modes ---------------------------------------------------- */

/* What a unit cuts out of a GPU. */
typedef enum kerf_unit_kind {
        KERF_UNIT_WHOLE = 0, /* a whole GPU, exclusively */
        KERF_UNIT_MIG,       /* a MIG GPU instance (hardware partition) */
        KERF_UNIT_SLICE,     /* software slice: memory cap + reserved compute share (shim) */
        KERF_UNIT_MPS,       /* MPS client: active-thread % + pinned-memory limit */
        KERF_UNIT_TSLICE,    /* time-slice share: memory cap, no compute reservation */
        KERF_UNIT_KIND_COUNT
} kerf_unit_kind;

/* The one sharing mode a GPU serves at a time. */
typedef enum kerf_gpu_mode {
        KERF_GPU_MODE_FREE = 0, /* no units: the scheduler may give it any mode but MIG */
        KERF_GPU_MODE_WHOLE,
        KERF_GPU_MODE_MIG,    /* MIG enabled in hardware: only MIG units */
        KERF_GPU_MODE_SHARED, /* software slices and time-slice shares */
        KERF_GPU_MODE_MPS,
        KERF_GPU_MODE_COUNT
} kerf_gpu_mode;

/* Lifecycle of a unit. */
typedef enum kerf_unit_state {
        KERF_UNIT_CREATING = 0, /* MIG instance requested from the backend, not yet confirmed */
        KERF_UNIT_READY,        /* exists, free */
        KERF_UNIT_ASSIGNED,     /* held by a task */
        KERF_UNIT_DESTROYING,   /* MIG instance destroy requested, not yet confirmed */
        KERF_UNIT_FAULT,        /* unusable: device error */
        KERF_UNIT_STATE_COUNT
} kerf_unit_state;

typedef enum kerf_workload {
        KERF_WL_TRAINING = 0,
        KERF_WL_INFERENCE,
        KERF_WL_DEV,
        KERF_WL_BATCH,
        KERF_WL_COUNT
} kerf_workload;

typedef enum kerf_tier {
        KERF_TIER_HIGH = 0, /* high-impact */
        KERF_TIER_QUEUEABLE,
        KERF_TIER_EXPLORATORY,
        KERF_TIER_COUNT
} kerf_tier;

/* Name <-> value for the enums above. _name() returns a static string ("?" if out of range);
 * _parse() returns the value or -EINVAL. Names: whole mig slice mps tslice; free whole mig
 * shared mps; creating ready assigned destroying fault; training inference dev batch;
 * high queueable exploratory (also "high-impact"). */
const char *kerf_unit_kind_name(kerf_unit_kind k);
int kerf_unit_kind_parse(const char *s);
const char *kerf_gpu_mode_name(kerf_gpu_mode m);
int kerf_gpu_mode_parse(const char *s);
const char *kerf_unit_state_name(kerf_unit_state st);
const char *kerf_workload_name(kerf_workload w);
int kerf_workload_parse(const char *s);
const char *kerf_tier_name(kerf_tier t);
int kerf_tier_parse(const char *s);

/* The one name rule of kerf (docs/API.md "Names"): 1..63 characters of [A-Za-z0-9_.-], not
 * starting with '-' or '.'. Tenant, cohort, queue and task names, in the API, the config file
 * and the CLI alike, so that a name is never a control sequence, an option or a path part. */
bool kerf_name_ok(const char *s);
#define KERF_NAME_RULE "1..63 characters [A-Za-z0-9_.-], not starting with '-' or '.'"

/* ---- GPU models and MIG profiles -------------------------------------------------------- */

/* One MIG GPU-instance profile of one GPU model (reference §1). */
typedef struct kerf_mig_profile {
        unsigned id; /* driver profile id (nvmlGpuInstanceProfileInfo_t.id): 19,20,15,14,9,5,0 */
        unsigned nvml_index; /* NVML_GPU_INSTANCE_PROFILE_* index passed to GetProfileInfo */
        const char *name;    /* "1g.18gb", "1g.18gb+me", ... */
        unsigned compute_slices;
        unsigned mem_slices; /* placement size in memory slices */
        uint64_t mem_mib;    /* memorySizeMB */
        unsigned sms;
        unsigned max_count;
        uint8_t start_mask; /* bit i set: a placement may start at memory slice i */
        unsigned copy_engines, decoders, encoders, jpegs, ofas;
        unsigned ci_profile; /* NVML_COMPUTE_INSTANCE_PROFILE_* of the full-size compute instance */
} kerf_mig_profile;

/* A GPU model. Models without MIG have n_profiles == 0. */
typedef struct kerf_gpu_model {
        const char *name;            /* kerf's canonical name: "H200-141GB", "T4", ... */
        const char *product;         /* what NVML's GetName answers: "NVIDIA H200" */
        uint32_t pci_device_id;      /* e.g. 0x233510DE */
        uint64_t mem_bytes;          /* total framebuffer as NVML reports it */
        unsigned sms;                /* 0 = unknown (anonymised models G2, G3) */
        unsigned cc_major, cc_minor; /* compute capability; 0.0 = unknown */
        unsigned power_limit_w;      /* 0 = unknown */
        const kerf_mig_profile *profiles;
        size_t n_profiles;
} kerf_gpu_model;

/* Number of known models and the i-th one (NULL if i is out of range). Index order is stable
 * within one build; bit i of a model mask refers to kerf_gpu_model_at(i). */
size_t kerf_gpu_model_count(void);
const kerf_gpu_model *kerf_gpu_model_at(size_t i);
/* Looks a model up by canonical name or alias ("H200", "h200-141gb", "V100M16", "A100-40GB",
 * "NVIDIA H200"...), case-insensitively. Returns NULL when unknown. */
const kerf_gpu_model *kerf_gpu_model_find(const char *name);
/* Index of `m` in the model table, or -1. */
int kerf_gpu_model_index(const kerf_gpu_model *m);
static inline bool kerf_gpu_model_has_mig(const kerf_gpu_model *m)
{
        return m && m->n_profiles > 0;
}

/* Profile lookups within one model. NULL when absent. */
const kerf_mig_profile *kerf_mig_profile_by_id(const kerf_gpu_model *m, unsigned id);
const kerf_mig_profile *kerf_mig_profile_by_name(const kerf_gpu_model *m, const char *name);
const kerf_mig_profile *kerf_mig_profile_by_nvml_index(const kerf_gpu_model *m, unsigned idx);

/* Bitmask of memory slices [start, start + size) of profile `p` at `start`. */
static inline uint8_t kerf_mig_slice_mask(const kerf_mig_profile *p, unsigned start)
{
        return (uint8_t)(((1u << p->mem_slices) - 1u) << start);
}
/* True when `start` is a valid placement offset for `p` (ignores other instances). */
bool kerf_mig_start_valid(const kerf_mig_profile *p, unsigned start);

/* ---- fleet description ------------------------------------------------------------------ */

typedef struct kerf_gpu_desc {
        char uuid[KERF_UUID_LEN]; /* "GPU-..." */
        const kerf_gpu_model *model;
        unsigned node;         /* index into kerf_fleet.nodes */
        unsigned index;        /* index within the node (NVML index, /dev/nvidiaN minor) */
        int numa;              /* NUMA node, -1 when unknown */
        uint64_t nvlink_peers; /* bit j: joined by NVLink to GPU j of the same node */
        bool mig_enabled;      /* MIG mode on in hardware */
} kerf_gpu_desc;

typedef struct kerf_node_desc {
        char name[KERF_NAME_LEN];
        uint64_t cpu_milli;      /* 0 = not accounted */
        uint64_t mem_bytes;      /* host memory; 0 = not accounted */
        char driver_version[32]; /* "550.54.15" */
        int cuda_version;        /* 12040 => 12.4 (NVML encoding) */
        unsigned first_gpu;      /* index into kerf_fleet.gpus */
        unsigned n_gpus;
} kerf_node_desc;

/* A fleet: nodes and their GPUs. GPUs of one node are contiguous in `gpus`. */
typedef struct kerf_fleet {
        kerf_node_desc *nodes;
        size_t n_nodes;
        kerf_gpu_desc *gpus;
        size_t n_gpus;
        size_t cap_nodes, cap_gpus; /* private */
} kerf_fleet;

/* Allocates an empty fleet. Returns 0 or -ENOMEM. Free with kerf_fleet_free(). */
int kerf_fleet_new(kerf_fleet **ret);
/* Frees `f` (NULL is fine); returns NULL. */
kerf_fleet *kerf_fleet_free(kerf_fleet *f);
/* Adds a node. `name` must be 1..63 printable characters without spaces and unique. Returns the
 * node index (>= 0), -EINVAL (bad name/duplicate) or -ENOMEM. `driver` may be NULL ("unknown"). */
int kerf_fleet_add_node(kerf_fleet *f, const char *name, uint64_t cpu_milli, uint64_t mem_bytes,
                        const char *driver, int cuda_version);
/* Adds a GPU to node `node` (which must be the most recently added node, so GPUs stay
 * contiguous). `model` must come from the model table (kerf_gpu_model_at/find). `uuid` may be
 * NULL: a deterministic UUID is derived from node name and index (docs/FLEET.md); a given one
 * must start with "GPU-". UUIDs must be unique in the fleet (compared case-insensitively).
 * MIG can only be enabled on a MIG-capable model. `numa` is >= -1 (-1 = unknown). Returns the
 * fleet GPU index (>= 0), -EINVAL or -ENOMEM; on failure the fleet is unchanged. */
int kerf_fleet_add_gpu(kerf_fleet *f, unsigned node, const kerf_gpu_model *model, bool mig,
                       int numa, const char *uuid);
/* Joins GPUs `a` and `b` (fleet indexes, same node) by NVLink. -EINVAL otherwise. */
int kerf_fleet_link(kerf_fleet *f, unsigned a, unsigned b);
/* Fleet GPU index of the GPU with this UUID, or -ENOENT. */
int kerf_fleet_gpu_by_uuid(const kerf_fleet *f, const char *uuid);

/* Parses a fleet description in YAML (docs/FLEET.md):
 *
 *   nodes:
 *     - name: node0
 *       count: 1            # optional: replicate this node (names get -0, -1, ...)
 *       cpus: 64            # or cpu_milli: 64000
 *       memory: 512GiB      # host memory
 *       driver: "550.54.15"
 *       cuda: "12.4"
 *       gpus:
 *         - {model: H200, count: 2, mig: true, numa: 0, nvlink: a}
 *         - {model: H200, count: 6, numa: 1, nvlink: a}
 *
 * GPUs in one node with the same `nvlink` label are all NVLink peers. On failure returns
 * -KERF_EPARSE (or -ENOMEM) and, when `err` is not NULL, writes "line N: what is wrong" into it
 * ("line 5: count: an integer 1..64, got '65'": the key's descriptor, kerf/fields_fleet.h).
 * On success *ret owns a new fleet. */
int kerf_fleet_parse_yaml(const char *text, size_t len, kerf_fleet **ret, char *err, size_t errlen);

#endif /* KERF_CORE_H */
