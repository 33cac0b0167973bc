/* SPDX-License-Identifier: Apache-2.0 */
/* backend.h - device backends behind one ops table: discovery, MIG lifecycle, processes, events */
#ifndef KERF_BACKEND_H
#define KERF_BACKEND_H

/*
 * A backend speaks to the devices of ONE node. kerfd owns one handle:
 *
 *   kerf_backend_open(kerf_backend_nvml_ops(), &opts, &b)     dlopen NVML, init, discover
 *     kerf_backend_gpu_count / _gpu_get / _versions_get         discovery
 *     kerf_backend_mig_list / _mig_create / _mig_destroy        MIG instances (kerfd's recovery
 *                                                               adopts, its MIG executor acts)
 *     kerf_backend_watch_start(b, &watch)                       XID / GPU-lost events
 *   kerf_backend_close(b)                                       stops the watcher, shutdown
 *
 * Errors: >= 0 on success; -errno or -KERF_E* (kerf/errno.h) on failure, and a one-line
 * message (with the device library's own error string) readable through
 * kerf_backend_errmsg(). Output parameters are written only on success.
 * Thread-safety: every call on a handle is serialised by a mutex inside the handle; the
 * error message belongs to the last failed call, so threads sharing a handle that want
 * the message should serialise themselves. The watcher runs on its own thread and never
 * touches the message buffer. Library code never prints or exits.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kerf/core.h"

#define KERF_BACKEND_ERR_LEN         256
#define KERF_BACKEND_NO_ID           0xFFFFFFFFu /* gi/ci id of a whole GPU / unattributed */
#define KERF_BACKEND_MAX_MIG         8           /* GPU instances per GPU */
#define KERF_BACKEND_EVENT_MAX_UNITS (KERF_MAX_NODE_GPUS + KERF_BACKEND_MAX_MIG + 1)
#define KERF_BACKEND_EVENT_MAX_TASKS 64
#define KERF_BACKEND_VERSION_LEN     80
#define KERF_BACKEND_DEFAULT_NVML    "libnvidia-ml.so.1"
#define KERF_BACKEND_NVML_ENV        "KERF_NVML_LIBRARY"

typedef struct kerf_backend kerf_backend;

/* ---- data ---------------------------------------------------------------------------------- */

typedef struct kerf_backend_options {
        /* Device library to load. NULL: $KERF_NVML_LIBRARY, else "libnvidia-ml.so.1". */
        const char *library;
        /* Allows kerf_backend_mig_mode_set(). Default false: the backend then never even
         * resolves the mode-changing entry point. Clocks, power and reset have no operation. */
        bool allow_mig_mode_change;
        /* How long one wait of the event watcher blocks (ms); bounds how long
         * kerf_backend_watch_stop() takes. 0 = 200. */
        unsigned event_poll_ms;
} kerf_backend_options;

/* Zeroes `o` (defaults: library from the environment, no mode changes, 200 ms polls). */
void kerf_backend_options_init(kerf_backend_options *o);

typedef struct kerf_backend_versions {
        char backend[32];                      /* "nvml" */
        char library[256];                     /* path that was loaded */
        char driver[KERF_BACKEND_VERSION_LEN]; /* "550.54.15" */
        int cuda_version;                      /* 12040 => 12.4; 0 when unknown */
        bool fallback_used;                    /* an older (unversioned) symbol was used */
        char fallbacks[256];                   /* their names, space separated */
} kerf_backend_versions;

typedef struct kerf_backend_gpu {
        unsigned index; /* backend (NVML) index; not stable across reboots: key by uuid */
        unsigned minor; /* /dev/nvidiaN */
        char uuid[KERF_UUID_LEN];
        char name[96];                 /* what the device library calls it: "NVIDIA H200" */
        const kerf_gpu_model *model;   /* NULL when kerf does not know the model */
        uint64_t mem_total, mem_used;  /* bytes */
        bool mig_capable;              /* the MIG mode query succeeded */
        bool mig_current, mig_pending; /* MIG mode now / after the next reset */
        bool lost;                     /* fallen off the bus: everything else may be stale */
} kerf_backend_gpu;

/* One MIG device: a GPU instance and (kerf always creates exactly one) its compute instance. */
typedef struct kerf_backend_mig {
        unsigned gpu;        /* backend GPU index */
        unsigned gi_id;      /* GPU-instance id */
        unsigned ci_id;      /* compute-instance id, KERF_BACKEND_NO_ID when the GI has none */
        unsigned profile_id; /* driver GI profile id (19, 15, 14, 9, 5, 0, ...) */
        unsigned ci_profile_id;
        unsigned start, size;         /* placement, in memory slices */
        const char *profile_name;     /* static, from kerf's model table; "?" when unknown */
        uint64_t mem_total, mem_used; /* bytes; 0 when unknown */
        char uuid[KERF_UUID_LEN];     /* "MIG-..."; "" when the GI has no compute instance */
} kerf_backend_mig;

typedef struct kerf_backend_proc {
        uint32_t pid;
        uint64_t mem_bytes;
        unsigned gi_id, ci_id; /* KERF_BACKEND_NO_ID on a whole GPU */
} kerf_backend_proc;

typedef struct kerf_backend_util {
        unsigned gpu_pct, mem_pct; /* over the device library's last sample period */
} kerf_backend_util;

typedef struct kerf_backend_proc_util {
        uint32_t pid;
        uint64_t ts_us; /* sample time, CLOCK_REALTIME microseconds */
        unsigned sm_pct, mem_pct;
} kerf_backend_proc_util;

/* ---- XID classification (reference §2.6) --------------------------------------------------- */

typedef enum kerf_xid_class {
        KERF_XID_APP = 0,     /* the application faulted; restart it, the GPU is healthy */
        KERF_XID_RESET_GPU,   /* the GPU (all its units) must be drained and reset */
        KERF_XID_REBOOT_NODE, /* the node must be rebooted (GPU fell off the bus) */
        KERF_XID_WATCH,       /* informational: keep serving, watch the rate */
        KERF_XID_CLASS_COUNT
} kerf_xid_class;

/* Class of XID `xid`. Unknown XIDs (and 0, 999) are KERF_XID_RESET_GPU: fail safe. Pure. */
kerf_xid_class kerf_xid_classify(unsigned xid);
/* True when `xid` is in kerf's table (its class is not a fail-safe guess). */
bool kerf_xid_known(unsigned xid);
/* One-line meaning of `xid` ("GPU memory page fault"); "unknown XID" when not in the table. */
const char *kerf_xid_describe(unsigned xid);
/* "app_error" "reset_gpu" "reboot_node" "watch"; "?" out of range. Static strings. */
const char *kerf_xid_class_name(kerf_xid_class c);
/* What the class means for the platform, one sentence. Static string. */
const char *kerf_xid_class_desc(kerf_xid_class c);

/* ---- events -------------------------------------------------------------------------------- */

typedef enum kerf_backend_event_kind {
        KERF_BEV_XID = 0,    /* an XID critical error */
        KERF_BEV_GPU_LOST,   /* a GPU stopped answering: node-level */
        KERF_BEV_WATCH_FAIL, /* the watcher could not wait for events; `text` says why */
        KERF_BEV_KIND_COUNT
} kerf_backend_event_kind;
const char *kerf_backend_event_kind_name(kerf_backend_event_kind k); /* xid gpu_lost watch_fail */

/* How far a fault reaches. */
typedef enum kerf_blast_scope {
        KERF_SCOPE_NONE = 0, /* nothing to do (watch) */
        KERF_SCOPE_UNIT,     /* the units listed (the faulting application's) */
        KERF_SCOPE_GPU,      /* every unit of the GPU */
        KERF_SCOPE_NODE,     /* every GPU of the node */
        KERF_SCOPE_COUNT
} kerf_blast_scope;
const char *kerf_blast_scope_name(kerf_blast_scope s); /* none unit gpu node */

/* A unit hit by an event: a whole GPU (is_mig false: includes all its MIG instances) or one
 * MIG device. */
typedef struct kerf_backend_unit_ref {
        unsigned gpu;
        char gpu_uuid[KERF_UUID_LEN];
        bool is_mig;
        unsigned gi_id, ci_id;
        char uuid[KERF_UUID_LEN]; /* the GPU- or MIG- uuid of the unit */
} kerf_backend_unit_ref;

typedef struct kerf_backend_event {
        kerf_backend_event_kind kind;
        uint64_t ts_us; /* when the watcher received it, CLOCK_REALTIME microseconds */
        unsigned gpu;   /* backend GPU index */
        char gpu_uuid[KERF_UUID_LEN];
        unsigned xid; /* KERF_BEV_XID */
        kerf_xid_class xid_class;
        bool xid_known;
        kerf_blast_scope scope;
        bool attributed;       /* the device named the GI/CI */
        unsigned gi_id, ci_id; /* as reported; KERF_BACKEND_NO_ID when not attributed */
        unsigned n_units;
        kerf_backend_unit_ref units[KERF_BACKEND_EVENT_MAX_UNITS];
        unsigned n_tasks; /* from the caller's lookup, de-duplicated; may be truncated */
        uint64_t tasks[KERF_BACKEND_EVENT_MAX_TASKS];
        char text[KERF_BACKEND_ERR_LEN]; /* one line for logs */
} kerf_backend_event;

/* Delivered on the watcher thread; the event is valid only during the call. Must not call
 * kerf_backend_watch_stop() or kerf_backend_close() on the same handle. */
typedef void (*kerf_backend_event_cb)(const kerf_backend_event *ev, void *ud);
/* Which tasks run on unit `u`: writes up to `max` ids and returns how many exist. Called on
 * the watcher thread once per unit hit. */
typedef size_t (*kerf_backend_task_lookup)(const kerf_backend_unit_ref *u, uint64_t *ret_tasks,
                                           size_t max, void *ud);

typedef struct kerf_backend_watch {
        kerf_backend_event_cb cb;        /* required */
        kerf_backend_task_lookup lookup; /* optional */
        void *ud;                        /* passed to both */
} kerf_backend_watch;

/* ---- the ops table ------------------------------------------------------------------------- */

/* What a backend implements. The kerf_backend_* functions below validate arguments, take the
 * handle's lock and call these; an op reports failure details with kerf_backend_set_error().
 * Ops may be NULL where a backend cannot do something (the call then gives -KERF_EUNSUPP).
 * Indexes are backend GPU indexes, already checked to be < the discovered count. */
typedef struct kerf_backend_ops {
        const char *name;
        int (*open)(kerf_backend *b, const kerf_backend_options *opt); /* kerf_backend_priv_set */
        void (*close)(kerf_backend *b);
        int (*versions)(kerf_backend *b, kerf_backend_versions *ret);
        unsigned (*gpu_count)(kerf_backend *b); /* discovered at open */
        int (*gpu_get)(kerf_backend *b, unsigned gpu, kerf_backend_gpu *ret);
        int (*mig_list)(kerf_backend *b, unsigned gpu, kerf_backend_mig *out, size_t max);
        int (*mig_create)(kerf_backend *b, unsigned gpu, unsigned profile_id, unsigned start,
                          kerf_backend_mig *ret);
        int (*mig_destroy)(kerf_backend *b, unsigned gpu, unsigned gi_id);
        int (*mig_mode_set)(kerf_backend *b, unsigned gpu, bool on); /* only if allowed */
        int (*proc_list)(kerf_backend *b, unsigned gpu, unsigned gi_id, kerf_backend_proc *out,
                         size_t max);
        int (*util_get)(kerf_backend *b, unsigned gpu, kerf_backend_util *ret);
        int (*proc_util_list)(kerf_backend *b, unsigned gpu, uint64_t since_us,
                              kerf_backend_proc_util *out, size_t max);
        int (*watch_start)(kerf_backend *b, const kerf_backend_watch *w);
        void (*watch_stop)(kerf_backend *b);
} kerf_backend_ops;

/* The NVML backend (src/backend/nvml). Static table. */
const kerf_backend_ops *kerf_backend_nvml_ops(void);

/* For backend implementations: private data, and the error message of the failing call
 * (printf format; replaces the previous message). */
void kerf_backend_priv_set(kerf_backend *b, void *priv);
void *kerf_backend_priv(const kerf_backend *b);
const kerf_backend_options *kerf_backend_options_get(const kerf_backend *b);
void kerf_backend_set_error(kerf_backend *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- the API ------------------------------------------------------------------------------- */

/* Opens backend `ops` with `opt` (NULL = defaults): loads the device library and discovers
 * GPUs. On success *ret owns a handle (free with kerf_backend_close). On failure returns
 * -EINVAL, -ENOMEM, -KERF_EBACKEND (library missing, init failed, ...) and, when `err` is not
 * NULL, writes the reason ("dlopen(libnvidia-ml.so.1): ... not found") into it. */
int kerf_backend_open(const kerf_backend_ops *ops, const kerf_backend_options *opt,
                      kerf_backend **ret, char *err, size_t errlen);
/* Stops the watcher, releases the device library. NULL is fine; returns NULL. */
kerf_backend *kerf_backend_close(kerf_backend *b);
const char *kerf_backend_name(const kerf_backend *b);
/* The message of the last failed call on `b` ("" if none). Owned by `b`. */
const char *kerf_backend_errmsg(const kerf_backend *b);

int kerf_backend_versions_get(kerf_backend *b, kerf_backend_versions *ret);
/* Number of GPUs discovered at open (including ones that cannot be opened or are lost). */
unsigned kerf_backend_gpu_count(kerf_backend *b);
/* A fresh snapshot of GPU `gpu`. -EINVAL bad index. A lost GPU gives 0 and ->lost. */
int kerf_backend_gpu_get(kerf_backend *b, unsigned gpu, kerf_backend_gpu *ret);
/* Backend index of the GPU with `uuid` ("GPU-...", case-insensitive), or -ENOENT. */
int kerf_backend_gpu_find(kerf_backend *b, const char *uuid);

/* MIG instances of `gpu`, sorted by GI id: up to `max` into `out`; returns how many exist.
 * -KERF_EUNSUPP when MIG is off, -KERF_EDEVICE when the GPU is lost, -KERF_EPERM without the
 * privilege to list instances. */
int kerf_backend_mig_list(kerf_backend *b, unsigned gpu, kerf_backend_mig *out, size_t max);
/* Creates a GPU instance of driver profile `profile_id` at memory slice `start`, and one
 * compute instance using all of it. On success writes the new instance to *ret (may be NULL).
 * Errors: -EINVAL (no such profile / start not a valid placement), -KERF_ENOFIT (placement
 * conflict: the slices overlap an instance, or the profile's count is exhausted),
 * -KERF_EUNSUPP (MIG off), -KERF_EPERM (no privilege), -KERF_EDEVICE (lost). A GI whose
 * compute instance cannot be created is destroyed again before returning. */
int kerf_backend_mig_create(kerf_backend *b, unsigned gpu, unsigned profile_id, unsigned start,
                            kerf_backend_mig *ret);
/* Destroys GPU instance `gi_id` (its compute instances first). Refuses with -KERF_EINUSE,
 * naming the pids in the message, while processes run on it; -ENOENT when it does not
 * exist. */
int kerf_backend_mig_destroy(kerf_backend *b, unsigned gpu, unsigned gi_id);
/* Changes MIG mode (takes effect at the next reset on real GPUs). -KERF_EPERM unless the
 * handle was opened with allow_mig_mode_change. */
int kerf_backend_mig_mode_set(kerf_backend *b, unsigned gpu, bool on);

/* Processes with a compute context on `gpu` (gi_id == KERF_BACKEND_NO_ID: all, including
 * those on its MIG instances) or on GPU instance `gi_id` only. Up to `max` into `out`;
 * returns how many exist. */
int kerf_backend_proc_list(kerf_backend *b, unsigned gpu, unsigned gi_id, kerf_backend_proc *out,
                           size_t max);
/* GPU and memory-controller busy percent. -KERF_EUNSUPP on MIG-enabled GPUs (NVML does not
 * report it there). */
int kerf_backend_util_get(kerf_backend *b, unsigned gpu, kerf_backend_util *ret);
/* Per-process utilisation samples newer than `since_us` (0 = all buffered), one per process:
 * several buffered samples of a process (NVML may keep more than one) are merged by
 * kerf_backend_proc_util_merge. Returns how many are in out (0 when none; at most `max`: the
 * merge of the first `max` the library returned). -KERF_EUNSUPP on MIG-enabled GPUs. */
int kerf_backend_proc_util_list(kerf_backend *b, unsigned gpu, uint64_t since_us,
                                kerf_backend_proc_util *out, size_t max);
/* Merges the samples of one pid in s[0..n) into one, in place, in order of first appearance:
 * sm_pct and mem_pct their rounded mean, ts_us the newest. Returns the new count. */
size_t kerf_backend_proc_util_merge(kerf_backend_proc_util *s, size_t n);

/* Starts the event watcher thread (one per handle; -EBUSY when running). `w` is copied.
 * Events registered on every GPU that supports them: XID critical errors, GPU lost. */
int kerf_backend_watch_start(kerf_backend *b, const kerf_backend_watch *w);
/* Stops the watcher and joins it (within about one poll period). Idempotent. */
void kerf_backend_watch_stop(kerf_backend *b);

#endif /* KERF_BACKEND_H */
