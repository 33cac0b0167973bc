/* SPDX-License-Identifier: Apache-2.0 */
/* sched.h - kerf's scheduling core: admission, quotas, fair share, placement, dynamic MIG,
 * preemption, queue modes, backfill and explanations. A library with no I/O and no threads; it
 * reads time only through a clock the caller passes (kerf_sched_clock_set). */
#ifndef KERF_SCHED_H
#define KERF_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kerf/core.h"
#include "kerf/task_state.h"

#define KERF_UNLIMITED     UINT64_MAX
#define KERF_MAX_TASK_GPUS 16
#define KERF_TEXT_LEN      256

typedef struct kerf_sched kerf_sched;

/* ---- resources and tenants -------------------------------------------------------------- */

/* Quota-tracked resources. Units: GPUS = whole GPUs held exclusively; MEM = bytes of GPU
 * memory; COMPUTE = guaranteed compute in percent of one GPU (a whole GPU is 100, a 3g MIG
 * instance 300/7 rounded down, a time-slice share 0); MIG_SLICES = MIG compute slices. */
typedef enum kerf_res {
        KERF_RES_GPUS = 0,
        KERF_RES_MEM,
        KERF_RES_COMPUTE,
        KERF_RES_MIG_SLICES,
        KERF_RES_COUNT
} kerf_res;

const char *kerf_res_name(kerf_res r); /* gpus mem compute mig_slices */

/* A tenant and its quota. Cohort semantics follow Kueue's ClusterQueue/cohort: a tenant may use
 * up to nominal + borrow_limit of each resource, the excess over nominal taken from what other
 * members of its cohort lend (at most lend_limit each, and only what they leave unused). A
 * tenant without a cohort is capped at nominal. KERF_UNLIMITED means no cap. */
typedef struct kerf_tenant_spec {
        const char *name;   /* 1..63 chars [A-Za-z0-9_.-] */
        const char *cohort; /* NULL or "" = none */
        unsigned weight;    /* fair-share weight, 1..1000; 0 means 1 */
        uint64_t nominal[KERF_RES_COUNT];
        uint64_t borrow_limit[KERF_RES_COUNT];
        uint64_t lend_limit[KERF_RES_COUNT];
} kerf_tenant_spec;

/* Fills `t` with an unlimited quota, weight 1, no cohort, and the given name (not copied). */
void kerf_tenant_spec_init(kerf_tenant_spec *t, const char *name);

/* ---- policy ----------------------------------------------------------------------------- */

typedef enum kerf_place_policy {
        KERF_PLACE_KERF = 0, /* fragmentation-aware (default) */
        KERF_PLACE_BESTFIT,  /* baseline: least free capacity left that still fits */
        KERF_PLACE_FIRSTFIT, /* baseline: first GPU in fleet order that fits */
} kerf_place_policy;

/* How a queue treats a head that cannot start (docs/SCHEDULER.md "Queue modes and backfill").
 * STRICT: nothing behind it starts, except by backfill. BEST_EFFORT: tasks behind it that fit
 * start, until the head has waited starvation_s; from then on the queue is strict for it. */
typedef enum kerf_queue_mode {
        KERF_QUEUE_STRICT = 0,
        KERF_QUEUE_BEST_EFFORT,
        KERF_QUEUE_MODE_COUNT
} kerf_queue_mode;
const char *kerf_queue_mode_name(kerf_queue_mode m); /* "strict", "best-effort" */
/* 0 and the mode of `name`, or -EINVAL. */
int kerf_queue_mode_parse(const char *name, kerf_queue_mode *ret);

typedef struct kerf_queue_spec {
        kerf_queue_mode mode;
        /* A task behind a blocked head (strict, or best-effort past starvation_s) with a
         * max_runtime_s may start now when it fits and either ends before the head's expected
         * start or uses none of the GPUs the head is expected to take (Slurm's backfill). */
        bool backfill;
        uint64_t starvation_s; /* best-effort only; 1..31536000 */
} kerf_queue_spec;
/* Strict, backfill on, starvation_s 3600. */
void kerf_queue_spec_default(kerf_queue_spec *q);

/* Which routes (unit kinds) a workload type + risk tier may use, in preference order. */
typedef struct kerf_policy {
        kerf_unit_kind routes[KERF_WL_COUNT][KERF_TIER_COUNT][KERF_UNIT_KIND_COUNT];
        unsigned n_routes[KERF_WL_COUNT][KERF_TIER_COUNT];
        bool force_preemptible[KERF_WL_COUNT]; /* default: batch */
        kerf_place_policy place;
        bool preemption;      /* allow preempting lower-priority preemptible tasks (default on) */
        bool mig_reconfigure; /* allow destroying idle MIG instances to fit others (default on) */
        uint64_t dev_default_mem; /* memory for dev/time-slice requests that give none: 8 GiB */
        kerf_queue_spec queue_default; /* queues not named by kerf_sched_queue_set */
        unsigned backfill_depth;       /* tasks behind blocked heads tried per capacity change,
                                        * all queues together (Slurm's bf_max_job_test); default 32,
                                        * 0 = no backfill or best-effort skipping */
} kerf_policy;

/* Writes the documented defaults (docs/SCHEDULER.md):
 *   training   high: whole            queueable: whole           exploratory: whole, mig
 *   inference  high: mig, slice       queueable: slice, mig, mps exploratory: slice, tslice
 *   dev        high: slice, tslice    queueable: tslice, slice   exploratory: tslice, slice
 *   batch      any tier: slice, mig, whole, tslice; always preemptible */
void kerf_policy_default(kerf_policy *p);
/* Sets the route list of one workload/tier. 1..KERF_UNIT_KIND_COUNT distinct kinds.
 * Returns 0 or -EINVAL. */
int kerf_policy_set_routes(kerf_policy *p, kerf_workload w, kerf_tier t,
                           const kerf_unit_kind *routes, unsigned n);

/* ---- requests and tasks ----------------------------------------------------------------- */

/* The bounds of a task's priority (submit and kerf_sched_task_update). */
#define KERF_PRIORITY_MIN (-1000)
#define KERF_PRIORITY_MAX 1000

/* A task's request. Strings are copied by kerf_sched_submit. */
typedef struct kerf_request {
        const char *name;   /* optional, <= 63 chars */
        const char *tenant; /* must exist */
        const char *queue;  /* NULL/"" = "default"; 1..63 chars [A-Za-z0-9_.-] */
        kerf_workload workload;
        kerf_tier tier;
        int route;               /* -1: policy decides; else a kerf_unit_kind the user insists on */
        const char *mig_profile; /* optional explicit MIG profile name ("3g.71gb"): implies MIG */
        unsigned gpus;           /* GPUs wanted; > 1 only for whole GPUs. 0 means 1 */
        uint64_t mem_bytes; /* GPU memory per GPU; 0 = whole GPU's memory for whole, else policy */
        unsigned mem_permille; /* alternative to mem_bytes for shares: this fraction (1..1000) of
                                * the chosen GPU's memory, e.g. the openb trace's gpu_milli */
        unsigned compute_pct;  /* guaranteed compute share per GPU, 0..100 */
        unsigned compute_limit_pct; /* burst limit (slices): compute_pct..100; 0 = compute_pct */
        uint64_t cpu_milli;         /* host CPU on the node, 0 = none */
        uint64_t host_mem_bytes;
        uint64_t model_mask; /* bit i: may run on kerf_gpu_model_at(i); 0 = any */
        /* The GPUs it must run on (a launcher such as Slurm chose them): fleet indices, distinct,
         * one node's; 0 pins = any. A pinned task uses exactly its pinned GPUs
         * (n_gpu_pins == gpus, or 1 for a one-GPU task). */
        unsigned n_gpu_pins;
        unsigned gpu_pins[KERF_MAX_TASK_GPUS];
        /* A MIG task on exactly this MIG instance (its kerf_unit_info.id): the instance a
         * launcher such as Slurm counted. Implies route mig and the instance's profile; the task
         * waits while the instance is busy and is never given another; 0 = any instance. */
        uint64_t mig_unit_pin;
        int priority; /* higher runs first; KERF_PRIORITY_MIN..KERF_PRIORITY_MAX */
        bool preemptible;
        uint64_t max_runtime_s; /* enforced by the executor; backfill counts on it; 0 = none */
        uint64_t idle_timeout_s;
} kerf_request;

/* Initialises a request to: queue default, workload batch, tier queueable, route -1, 1 GPU,
 * priority 0, everything else zero/NULL. */
void kerf_request_init(kerf_request *r);

/* kerf_task_state (include/kerf/task_state.h): the scheduler's tasks are pending, starting
 * (placed; waiting for a MIG instance to be created) or running. */

/* Why something happened or did not. */
typedef enum kerf_why {
        KERF_WHY_NONE = 0,
        KERF_WHY_PLACED,          /* started */
        KERF_WHY_QUOTA,           /* tenant nominal quota (no cohort, or borrow limit) */
        KERF_WHY_COHORT,          /* would need to borrow more than the cohort lends now */
        KERF_WHY_NO_FIT,          /* no GPU has the free capacity */
        KERF_WHY_FRAGMENTED,      /* enough capacity in total, but no single placement holds it */
        KERF_WHY_NODE_RESOURCES,  /* GPU capacity exists but node CPU / host memory does not */
        KERF_WHY_QUEUE_ORDER,     /* behind a higher-priority / older task of the same queue */
        KERF_WHY_FAIR_SHARE,      /* other tenants with lower dominant share go first */
        KERF_WHY_MIG_PENDING,     /* waiting for the backend to create / destroy MIG instances */
        KERF_WHY_PREEMPTED,       /* evicted by a higher-priority task */
        KERF_WHY_RECLAIMED,       /* evicted: a lender took back quota this task borrowed */
        KERF_WHY_FAULT,           /* its GPU or MIG instance faulted */
        KERF_WHY_BACKEND_REFUSED, /* the backend refused to create its unit */
        KERF_WHY_NOT_TRIED,       /* not yet considered */
        KERF_WHY_HELD,            /* held (kerf_sched_task_hold): never started until released */
        KERF_WHY_COUNT
} kerf_why;
const char *kerf_why_name(kerf_why w); /* machine-readable: "quota", "no_fit", ... */

/* A reason: code, the other task involved (preemptor/victim/blocker, 0 if none) and words. */
typedef struct kerf_reason {
        kerf_why code;
        uint64_t other_task;
        char text[KERF_TEXT_LEN];
} kerf_reason;

/* Snapshot of a task, owned by the caller. */
typedef struct kerf_task_info {
        uint64_t id;
        kerf_task_state state;
        char name[KERF_NAME_LEN];
        char tenant[KERF_NAME_LEN];
        char queue[KERF_NAME_LEN];
        kerf_workload workload;
        kerf_tier tier;
        int priority;
        bool preemptible;
        kerf_unit_kind route; /* valid when not pending */
        unsigned n_units;
        uint64_t units[KERF_MAX_TASK_GPUS];
        unsigned gpus[KERF_MAX_TASK_GPUS]; /* fleet GPU index of each unit */
        uint64_t mem_bytes;                /* per GPU granted (or requested while pending) */
        unsigned compute_pct, compute_limit_pct;
        uint64_t usage[KERF_RES_COUNT]; /* quota charged while placed */
        bool borrowing;                 /* uses cohort-borrowed quota */
        unsigned preemptions;           /* times preempted */
        uint64_t submit_seq;            /* logical order of submission */
        kerf_reason reason;             /* last decision about it */
        bool backfilled;                /* placed ahead of a blocked head of its queue (backfill or
                                         * best-effort); the START reason says why it was safe */
        bool held;                      /* pending and held (kerf_sched_task_hold) */
        uint64_t max_runtime_s, idle_timeout_s;
} kerf_task_info;

/* ---- units and GPUs --------------------------------------------------------------------- */

typedef struct kerf_unit_info {
        uint64_t id;
        kerf_unit_kind kind;
        kerf_unit_state state;
        unsigned gpu; /* fleet GPU index */
        char gpu_uuid[KERF_UUID_LEN];
        uint64_t task; /* holding task, 0 if none */
        uint64_t mem_bytes;
        unsigned compute_pct, compute_limit_pct;
        unsigned mig_profile_id;      /* MIG only */
        unsigned mig_start;           /* MIG only: first memory slice */
        const char *mig_profile_name; /* MIG only, static string */
} kerf_unit_info;

typedef struct kerf_gpu_state {
        unsigned gpu;
        kerf_gpu_mode mode;
        bool faulted;
        bool draining; /* kerf_sched_gpu_drain: nothing new is placed on it */
        unsigned n_units;
        uint64_t mem_total, mem_reserved;
        unsigned compute_reserved; /* percent */
        uint8_t mig_used_mask;     /* memory slices held by MIG instances (any state) */
        unsigned mig_compute_used; /* compute slices */
} kerf_gpu_state;

/* ---- decisions -------------------------------------------------------------------------- */

typedef enum kerf_decision_kind {
        KERF_DEC_START = 0,   /* task got its units: start it */
        KERF_DEC_PREEMPT,     /* stop the task (it goes back to pending); by_task takes its place */
        KERF_DEC_MIG_CREATE,  /* backend: create a GI (+ full CI) of mig_profile_id at mig_start */
        KERF_DEC_MIG_DESTROY, /* backend: destroy the MIG instance of `unit` */
        KERF_DEC_GPU_MODE,    /* informational: a free GPU was switched to `mode` */
        KERF_DEC_KIND_COUNT
} kerf_decision_kind;
const char *kerf_decision_kind_name(kerf_decision_kind k);

typedef struct kerf_decision {
        kerf_decision_kind kind;
        uint64_t seq;     /* monotonic per scheduler */
        uint64_t task;    /* START/PREEMPT: the task; MIG_CREATE: the task it is for */
        uint64_t by_task; /* PREEMPT: the task that needs the room */
        unsigned n_units;
        uint64_t units[KERF_MAX_TASK_GPUS];
        unsigned gpu; /* MIG_*, GPU_MODE: fleet GPU index */
        unsigned mig_profile_id, mig_start;
        kerf_gpu_mode mode;
        kerf_reason reason;
} kerf_decision;

/* ---- lifecycle --------------------------------------------------------------------------- */

/* Creates a scheduler over `fleet` (copied: the caller may free it afterwards) with `policy`
 * (copied; NULL = defaults). MIG-enabled GPUs start in MIG mode with no instances; use
 * kerf_sched_mig_adopt() to declare instances that already exist. Returns 0, -EINVAL or
 * -ENOMEM; free with kerf_sched_free(). Not thread-safe: callers serialise all calls. */
int kerf_sched_new(const kerf_fleet *fleet, const kerf_policy *policy, kerf_sched **ret);
kerf_sched *kerf_sched_free(kerf_sched *s);
const kerf_fleet *kerf_sched_fleet(const kerf_sched *s);

/* The scheduler's clock: milliseconds on any monotonic scale, read when tasks start, enter
 * a queue and when backfill compares max_runtime_s with a head's expected start. Without one
 * (the default) the time is always 0. `fn` is called under the caller's serialisation. */
typedef uint64_t (*kerf_clock_fn)(void *arg);
void kerf_sched_clock_set(kerf_sched *s, kerf_clock_fn fn, void *arg);

/* Sets the mode of every tenant's queue called `name`, now and when one is created later
 * (other queues follow policy.queue_default). Returns 0, -EINVAL (bad name or spec) or
 * -ENOMEM. */
int kerf_sched_queue_set(kerf_sched *s, const char *name, const kerf_queue_spec *spec);
/* The spec queues called `name` follow. 0 or -EINVAL. */
int kerf_sched_queue_get(const kerf_sched *s, const char *name, kerf_queue_spec *ret);

/* Creates or updates a tenant (a quota change when it exists). Returns 0 or -EINVAL. */
int kerf_sched_tenant_set(kerf_sched *s, const kerf_tenant_spec *t);
/* Current usage of a tenant, in the kerf_res units. -ENOENT if unknown. */
int kerf_sched_tenant_usage(const kerf_sched *s, const char *tenant,
                            uint64_t ret_usage[KERF_RES_COUNT]);

/* Declares an existing MIG instance on an MIG-enabled GPU (discovered by a backend). Returns the
 * new unit id (> 0) through *ret_unit, or -EINVAL / -KERF_EINUSE (overlap). */
int kerf_sched_mig_adopt(kerf_sched *s, unsigned gpu, unsigned profile_id, unsigned start,
                         uint64_t *ret_unit);

/* Validates and enqueues a request. Returns 0 and the task id through *ret_id; -EINVAL (bad
 * field; `why` says which), -ENOENT (unknown tenant), -KERF_ENEVER (no route could ever hold it
 * on this fleet, e.g. 200 GiB on 141 GiB GPUs; `why` says why). `why` may be NULL. */
int kerf_sched_submit(kerf_sched *s, const kerf_request *r, uint64_t *ret_id, kerf_reason *why);

/* Removes a task (pending, starting or running): its units are released at once (a MIG unit
 * goes back to READY, slices vanish). Returns 0 or -ENOENT. */
int kerf_sched_cancel(kerf_sched *s, uint64_t task);
/* Same as cancel, for a task that ended by itself (exit, failure, timeout). */
int kerf_sched_finish(kerf_sched *s, uint64_t task);

/* Runs one scheduling pass and writes up to `max` decisions. Returns the number written (>= 0)
 * or -EINVAL. Call again while it returns `max` (more may be ready). */
int kerf_sched_step(kerf_sched *s, kerf_decision *out, size_t max);

/* Confirms (result 0) or refuses (result < 0) a MIG_CREATE or MIG_DESTROY of `unit`. A refused
 * create sends its task back to pending with KERF_WHY_BACKEND_REFUSED; a refused destroy leaves
 * the instance READY. Returns 0, -ENOENT or -KERF_ESTATE (nothing pending on that unit). */
int kerf_sched_mig_done(kerf_sched *s, uint64_t unit, int result);

/* Marks a GPU (unit == 0) or one MIG unit faulted. Tasks on it are taken off: requeued (pending
 * again, reason FAULT) when `requeue`, otherwise removed. Their ids are written to
 * ret_tasks[0..max) and their number returned (it may exceed max). -EINVAL/-ENOENT on bad ids. */
int kerf_sched_fault(kerf_sched *s, unsigned gpu, uint64_t unit, bool requeue, uint64_t *ret_tasks,
                     size_t max);
/* Makes a faulted GPU (unit == 0: the GPU and its faulted MIG units) or unit usable again. */
int kerf_sched_recover(kerf_sched *s, unsigned gpu, uint64_t unit);

/* ---- holds, updates and draining (docs/SCHEDULER.md "Holds, updates and draining") ------- */

/* Holds pending task `task`: it stays PENDING with reason KERF_WHY_HELD and the words `text`
 * (e.g. "held by admin"; NULL = "held") but leaves its queue, so it is never started, never
 * preempts and never blocks the tasks behind it (it is no queue head in strict mode). Holding
 * a held task only changes its words. 0, -EINVAL, -ENOENT (no such task) or -KERF_ESTATE (not
 * pending). */
int kerf_sched_task_hold(kerf_sched *s, uint64_t task, const char *text);
/* Puts a held task back in its queue, at the place its priority and submission order give it
 * (it keeps its submission order). 0, -EINVAL, -ENOENT, or -KERF_ESTATE (not held). */
int kerf_sched_task_release(kerf_sched *s, uint64_t task);

/* The fields kerf_sched_task_update changes: each with its set_* flag. */
typedef struct kerf_task_update {
        bool set_priority, set_preemptible, set_max_runtime, set_idle_timeout;
        int priority;     /* KERF_PRIORITY_MIN..KERF_PRIORITY_MAX */
        bool preemptible; /* false is ignored for a workload the policy forces preemptible */
        uint64_t max_runtime_s, idle_timeout_s;
} kerf_task_update;
/* Changes a pending task (held or not): a new priority moves it in its queue (among equal
 * priorities it keeps its submission order); max_runtime_s counts for backfill. All fields are
 * checked before any changes. 0, -EINVAL (a bad value; `why`, which may be NULL, names it),
 * -ENOENT or -KERF_ESTATE (not pending). */
int kerf_sched_task_update(kerf_sched *s, uint64_t task, const kerf_task_update *u,
                           kerf_reason *why);

/* Drains GPU `gpu` (on) or puts it back in service (off). Nothing new is placed on a draining
 * GPU: no start, no preemption and no MIG reconfiguration to make room there; what runs on it
 * keeps running (kerf_sched_restore still places a restored task there). Waiting tasks that
 * find no room say "GPU N is draining". 0 or -EINVAL. */
int kerf_sched_gpu_drain(kerf_sched *s, unsigned gpu, bool on);

/* ---- recovery: a daemon rebuilding the scheduler from its stored state ------------------- */

/* As kerf_sched_submit, with a caller-chosen task id (> 0, not in use); automatic ids continue
 * above the largest id seen. -EINVAL when the id is 0 or taken. */
int kerf_sched_submit_id(kerf_sched *s, const kerf_request *r, uint64_t id, kerf_reason *why);
/* As kerf_sched_mig_adopt, with a caller-chosen unit id (0 = assign one; -EINVAL if taken). */
int kerf_sched_mig_adopt_id(kerf_sched *s, unsigned gpu, unsigned profile_id, unsigned start,
                            uint64_t id, uint64_t *ret_unit);
/* Re-creates task `id` RUNNING on exactly the units described (as stored before a restart):
 * units[i].id (the unit id to give it), .kind, .gpu, .mem_bytes, .compute_pct,
 * .compute_limit_pct; for MIG, .id names an instance already adopted and READY. Whole-GPU and
 * share units need a GPU in a compatible mode with room. Quota is charged even above a limit
 * lowered meanwhile (the excess is grandfathered). Returns 0, -EINVAL (bad description, the
 * reason says which), -KERF_EINUSE (a unit conflicts with what is already placed) or -ENOENT
 * (unknown tenant); nothing changes on failure. */
int kerf_sched_restore(kerf_sched *s, const kerf_request *r, uint64_t id,
                       const kerf_unit_info *units, unsigned n, kerf_reason *why);

/* Sets when a restored task started, on the clock of kerf_sched_clock_set (backfill counts
 * its max_runtime_s from there; a restored task otherwise counts from its restore). 0 or
 * -ENOENT (no such placed task). */
int kerf_sched_task_started(kerf_sched *s, uint64_t task, uint64_t start_ms);

/* ---- queries ------------------------------------------------------------------------------ */

int kerf_sched_task_get(const kerf_sched *s, uint64_t task, kerf_task_info *ret);
int kerf_sched_unit_get(const kerf_sched *s, uint64_t unit, kerf_unit_info *ret);
/* Writes up to `max` units (in id order) of GPU `gpu` (or all GPUs when gpu < 0); returns how
 * many exist. */
size_t kerf_sched_unit_list(const kerf_sched *s, int gpu, kerf_unit_info *out, size_t max);
int kerf_sched_gpu_get(const kerf_sched *s, unsigned gpu, kerf_gpu_state *ret);
/* Ids of tasks in a state, in id order: writes up to max, returns the count. */
size_t kerf_sched_task_list(const kerf_sched *s, kerf_task_state st, uint64_t *out, size_t max);

/* What a pending task waits for, per route tried, and what would let it run. */
typedef struct kerf_explain {
        uint64_t task;
        kerf_task_state state;
        kerf_reason reason; /* the main reason */
        unsigned n_routes;
        struct {
                kerf_unit_kind route;
                kerf_why code;
                char text[KERF_TEXT_LEN];
        } routes[KERF_UNIT_KIND_COUNT];
        unsigned queue_position;  /* 1 = head of its queue */
        unsigned fair_share_rank; /* 1 = its tenant goes first */
        double dominant_share;    /* of its tenant, 0..1 */
        char hint[KERF_TEXT_LEN]; /* what would let it run */
        /* Behind a blocked head: the head's id and its expected start in seconds from now
         * (when running tasks reach their max_runtime_s), -1 when none can be shown. */
        uint64_t head_task;
        int64_t head_start_in_s;
} kerf_explain;

/* Explains task `task` now (computed fresh, no state change). Returns 0 or -ENOENT. */
int kerf_sched_explain(const kerf_sched *s, uint64_t task, kerf_explain *ret);

typedef struct kerf_sched_stats {
        uint64_t attempts; /* placement attempts (one per task considered) */
        uint64_t placed;
        uint64_t preemptions;
        uint64_t mig_creates, mig_destroys;
        uint64_t pending, running;
} kerf_sched_stats;
void kerf_sched_stats_get(const kerf_sched *s, kerf_sched_stats *ret);

/* Checks every invariant (no overlapping MIG placements, no memory over-commit, reserved compute
 * <= 100% per GPU, quotas respected but for declared borrowing, no task both running and pending,
 * unit/task cross-references consistent). Returns 0, or -KERF_ECORRUPT and a description in
 * `err`. For tests; O(size of the state). */
int kerf_sched_check(const kerf_sched *s, char *err, size_t errlen);

#endif /* KERF_SCHED_H */
