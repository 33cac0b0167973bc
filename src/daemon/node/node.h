/* SPDX-License-Identifier: Apache-2.0 */
/* node.h - the node controller: kerfd_node, its live task records (dtask) and the calls every part
 * of kerfd makes into it (api/, exec/ and config/ have their own headers) */
#ifndef KERFD_INTERNAL_H
#define KERFD_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "exec.h"
#include "fence.h"
#include "kerf/backend.h"
#include "kerf/sched.h"
#include "kerf/store.h"
#include "u64map.h"

#define KERFD_VERSION KERF_VERSION /* the project version (CMakeLists.txt) */

/* ---- logging (stderr, one line per event, with a level) ---------------------------------- */
void kerfd_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_info(...)  kerfd_log("info", __VA_ARGS__)
#define log_warn(...)  kerfd_log("warning", __VA_ARGS__)
#define log_error(...) kerfd_log("error", __VA_ARGS__)

uint64_t kerfd_now_ms(void);  /* CLOCK_REALTIME, for records */
uint64_t kerfd_mono_ms(void); /* CLOCK_MONOTONIC, for the executor */

/* ---- live task records --------------------------------------------------------------------- */

typedef struct dunit {
        uint64_t id;
        kerf_unit_kind kind;
        unsigned gpu;
        char gpu_uuid[KERF_UUID_LEN];
        char mig_uuid[KERF_UUID_LEN];
        const char *mig_profile; /* static or NULL */
        int mig_gi, mig_ci, mig_start;
        uint64_t mem;
        unsigned compute, compute_limit;
} dunit;

/* A process that joined an attached task after its first (POST /v1/tasks/{id}/join; members.c):
 * the task holds its unit while its first process or any member lives. */
typedef struct kerfd_member {
        pid_t pid;
        uint64_t proc_start; /* /proc/PID/stat field 22: the same process, not a reused pid */
        char *cg;            /* fenced: the cgroup it came from (heap; back there on release) */
} kerfd_member;

/* A task that has not ended. Ended tasks live only in the store. Owned by kerfd_node.live. */
typedef struct dtask {
        kerf_store_task rec; /* the persisted fields; heap strings owned */
        /* its state: the one kerfd reads. rec.state is its word for the store and the API,
         * written only by kerfd__task_set_state (and parsed into `state` at recovery) */
        kerf_task_state state;
        json_t *req_json; /* parsed request (strings of `req` point into it) */
        kerf_request req;
        char **argv,
            **env; /* NULL-terminated heap arrays (env "NAME=value"); argv NULL: attached */
        unsigned n_units, cap_units;
        dunit *units; /* heap, cap_units entries; NULL until the task first gets units (a
                       * pending task has none): see kerfd__units_reserve */
        uint64_t max_runtime_s, idle_timeout_s;
        uint64_t started_mono, last_active_mono;
        bool in_exec;             /* the executor tracks a process of ours */
        bool stopping;            /* a stop was asked */
        kerf_end_reason stop_end; /* the end to record once stopped (stopping) */
        char *stop_text;          /* its text (heap), NULL until a stop is asked */
        bool stop_requeue;        /* preempted: back to pending once the process is gone */
        int64_t exit_wall_ms;     /* when its supervisor saw it end (0: now); kerfd__task_end */
        unsigned xid_errors;
        uint64_t queue_wait_ms;
        kerf_fence *fence;                /* device cgroup of the process, NULL when unfenced */
        struct kerf_slice_region *region; /* read-only map of the slice region, or NULL */
        char *region_path;                /* heap; NULL when the task has no region */
        char *attach_cg;       /* attached task: the cgroup its process came from (heap), or NULL */
        kerfd_member *members; /* attached task: the processes that joined it (heap), or NULL */
        unsigned n_members, cap_members;
        /* software slices (ctl.c, docs/DAEMON.md "Software slices") */
        bool unenforced;         /* a slice started without the shim (policy.unenforced_slices) */
        bool suspended;          /* kerf suspend, or a preemption by suspend: launches held */
        bool preempt_frozen;     /* pending after a preemption by suspend; its process is kept */
        unsigned preempt_gpu;    /* the GPU that process holds memory on (preempt_frozen) */
        bool bypass_seen;        /* the shim-bypass anomaly was recorded (once per task) */
        unsigned bypass_suspect; /* consecutive polls that saw the bypass condition */
        uint64_t use_dev_ns, use_mono_ms; /* last usage sample (device time, when) */
        double compute_used_pct;          /* device time rate over the last sample interval */
        /* the device's own view, not the shim's (node.c poll_gpus): the SM % the backend's
         * per-process utilisation gives its processes, summed over GPUs, at the last poll */
        unsigned dev_sm_pct, dev_sm_acc; /* acc: the poll in progress */
        int64_t dev_sm_ms;               /* wall clock of that poll; 0: no sample yet */
        bool
            start_unrecorded; /* its start could not be recorded: not forked, retried (records.c) */
        bool run_open;        /* a run of it was opened in the store (cost.c) */
        uint64_t run_dev_base; /* the region's device time when that run opened */
        bool cdi_spec;         /* its CDI spec is written (cdi_task.c) */
        /* its start, prepared under mu and not finished yet (launch.c), or NULL */
        struct kerfd_launch *launch;
} dtask;

/* ---- the node controller -------------------------------------------------------------------- */

typedef struct ktenant {
        kerfd_tenant_cfg cfg;
        double tokens; /* submit rate limiter */
        uint64_t refill_ms;
        unsigned live; /* its unfinished tasks (max_pending); kerfd__tenant_count */
} ktenant;

typedef struct kerfd_node {
        pthread_mutex_t mu; /* around everything below */
        pthread_cond_t kick;
        kerfd_config cfg;
        char exe_dir[4096];
        kerf_sched *sched;
        kerf_backend *backend; /* NULL when no device library could be loaded */
        kerf_fleet *fleet;
        kerf_store *store;
        kerf_exec *exec;
        bool simulated;
        char backend_name[16];
        char driver[KERF_STORE_VER_LEN], cuda[KERF_STORE_VER_LEN];
        char log_dir[4400], sim_dir[4400], shim_path[4400], region_dir[4400];
        char shim_want[4400]; /* where the shim is looked for (shim_path is "" when missing) */
        char lib_dir[4400];   /* kerfd's library dir: the shim, the simulated libcuda/NVML */
        bool sim_shared;      /* sim_dir belongs to cfg.sim_gid, given to every task (simgroup.c) */
        uint64_t started_ms;
        kerf_u64map live; /* id -> dtask* */
        kerf_u64map migs; /* unit id -> dunit* of every MIG instance on the device */
        size_t n_live;
        uint64_t next_task_id;
        _Atomic bool stopping; /* read without mu by the HTTP threads */
        bool want_tick;
        pthread_t ticker;
        bool ticker_started;
        unsigned n_tenants;
        ktenant tenants[KERFD_MAX_TENANTS];
        /* per fleet GPU, for metrics */
        uint64_t xid_count[KERF_MAX_NODE_GPUS];
        unsigned last_xid[KERF_MAX_NODE_GPUS];
        unsigned gpu_util[KERF_MAX_NODE_GPUS];
        uint64_t gpu_mem_used[KERF_MAX_NODE_GPUS];
        int backend_index[KERF_MAX_NODE_GPUS]; /* fleet GPU -> backend index, -1 = none */
        uint64_t last_poll_mono;
        uint64_t limits_mono; /* last check_limits pass */
        /* per tenant counters (metrics) */
        uint64_t preemptions_total, reclaims_total;
        /* XID / GPU-lost events: the backend watcher thread only appends to this ring under
         * evq_mu (never n->mu); the tick drains it under n->mu (fault.c). */
        pthread_mutex_t evq_mu;
        kerf_backend_event *evq; /* KERFD_EVQ_LEN entries */
        unsigned evq_head, evq_len;
        uint64_t evq_dropped;
        bool watching;
        uint64_t xid_class_count[KERF_XID_CLASS_COUNT];
        uint64_t faults_total;
        kerf_fence_ctx *fence_ctx; /* NULL: no device fencing */
        bool crash_after_fork;     /* test hook KERFD_TEST_CRASH_AFTER_FORK (docs/DAEMON.md) */
        /* launch.c: starts prepared under mu, forked by the ticker without it, one at a time */
        struct kerfd_launch *launch_q, *launch_tail;
        struct kerfd_migop *mig_q, *mig_tail; /* migop.c: MIG changes, made the same way */
        bool launch_inflight;    /* the ticker forks (or makes a MIG change) now, mu released */
        unsigned launch_waiters; /* scheduler steps outside the ticker waiting for that fork */
        pthread_cond_t launched; /* a fork ended, or no scheduler step waits any more */
        unsigned slow_launch_ms; /* test hook KERFD_TEST_SLOW_LAUNCH_MS (docs/DAEMON.md) */
        /* the slice controller thread (ctl.c): copies the slice list under mu, steps under
         * ctl_mu; a region is unmapped only under ctl_mu, which bumps ctl_epoch */
        pthread_t ctl;
        bool ctl_started, ctl_stop;
        pthread_mutex_t ctl_mu;
        uint64_t ctl_epoch, ctl_steps, ctl_changes;
        uint64_t bypass_total, suspends_total, unenforced_refused_total;
        uint64_t slice_poll_mono; /* last kerfd__slice_poll pass */
        /* records.c: changes the store could not write yet, in order; the store's health */
        struct kerfd_tx *outbox_head, *outbox_tail;
        size_t outbox_len;
        int store_err;                      /* the last write's failure, 0 = writable */
        uint64_t store_err_since_ms;        /* when writes started failing */
        uint64_t records_mono;              /* last retry pass */
        unsigned n_start_unrecorded;        /* live tasks with start_unrecorded */
        uint64_t start_unrecorded_log_mono; /* last warning about them (one per 5 s) */
        char audit_pub[KERF_STORE_PK_HEX];  /* the audit anchor key's public half (hex) */
        /* api_node.c: the node's name and the device files Slurm's gres.conf names */
        char node_name[64];
        char dev_dir[4400];  /* "/dev" on real GPUs; <state>/dev on the simulator, "" = none */
        unsigned caps_major; /* nvidia-caps major; 0 = unknown */
} kerfd_node;

#define KERFD_EVQ_LEN 32

/* node.c / recover.c; the caller holds n->mu for the kerfd__ ones. */
int kerfd_node_start(kerfd_node *n, const kerfd_config *cfg, const char *exe_dir);
void kerfd_node_stop(kerfd_node *n);
void kerfd__kick(kerfd_node *n);
/* One controller pass (reap, limits, scheduling decisions); caller holds n->mu. */
void kerfd__tick(kerfd_node *n);
/* Its scheduler step only (starts, preemptions, MIG changes): an attach places its task now. */
void kerfd__sched_pass(kerfd_node *n);
int kerfd__recover(kerfd_node *n);
int kerfd__open_backend(kerfd_node *n);
dtask *kerfd__live(kerfd_node *n, uint64_t id);
/* Writes task + its units + one audit record in one transaction (records.c): an insert now or
 * never (< 0: not stored), an update now or, when the store cannot write, kept and retried. */
int kerfd__commit_task(kerfd_node *n, dtask *t, bool insert, const char *actor, const char *action,
                       const char *result, const char *reason);
/* The same with the choice: defer false = written now or not at all (< 0). */
int kerfd__commit_task_ex(kerfd_node *n, dtask *t, bool insert, bool defer, const char *actor,
                          const char *action, const char *result, const char *reason);
int kerfd__audit(kerfd_node *n, const char *actor, const char *tenant, const char *action,
                 const char *object, const char *result, const char *reason, const char *gpu_uuid);
void kerfd__event(kerfd_node *n, const char *kind, int gpu, uint64_t unit, uint64_t task, int xid,
                  const char *cls, const char *fmt, ...) __attribute__((format(printf, 8, 9)));
/* Ends or stops a live task. When it has a process: asks the executor to stop it and the end
 * is recorded at reap; otherwise ends it now (scheduler released, store updated). */
int kerfd__task_stop(kerfd_node *n, dtask *t, kerf_end_reason end, const char *actor,
                     const char *text, unsigned grace_s);
/* Final step of every end: release in the scheduler, persist, audit, free. The state recorded
 * is kerf_end_reason_state(end): succeeded (exit), cancelled (cancel) or failed. */
void kerfd__task_end(kerfd_node *n, dtask *t, kerf_end_reason end, const char *actor,
                     const char *text);
/* Sets t->state and its word t->rec.state (the store's and the API's); nothing is written. */
void kerfd__task_set_state(dtask *t, kerf_task_state st);
ktenant *kerfd__tenant_find(kerfd_node *n, const char *name);
int kerfd__tenant_apply(kerfd_node *n, const kerfd_tenant_cfg *t);
void kerfd__units_refresh(kerfd_node *n, dtask *t);
/* Makes room for `count` (<= KERF_MAX_TASK_GPUS) units in t->units; 0 or -ENOMEM. */
int kerfd__units_reserve(dtask *t, unsigned count);

/* records.c: every store write of kerfd goes through a kerfd_tx (one transaction through
 * kerf_store_tx). kerfd__tx_commit writes it now; when the store cannot write (docs/STATE.md
 * "Store failures") a deferrable change waits in the outbox, in order, and is retried every
 * tick (returns 1); a change that may not wait (a submit, the record of a start before its
 * fork) fails (< 0) and the caller does not go on. Frees x. Caller holds n->mu. */
typedef struct kerfd_tx kerfd_tx;
kerfd_tx *kerfd__tx_new(const char *what, uint64_t task);
void kerfd__tx_task(kerfd_tx *x, const kerf_store_task *t, bool insert);
void kerfd__tx_lease(kerfd_tx *x, uint64_t id, int64_t expiry_ms);
/* A member joined task m->task / left it (pid; 0: every member of the task). */
void kerfd__tx_member_add(kerfd_tx *x, const kerf_store_member *m);
void kerfd__tx_member_delete(kerfd_tx *x, uint64_t task, int64_t pid);
void kerfd__tx_unit(kerfd_tx *x, const kerf_store_unit *u);
void kerfd__tx_unit_delete(kerfd_tx *x, uint64_t id);
void kerfd__tx_audit(kerfd_tx *x, const char *actor, const char *tenant, const char *action,
                     const char *object, const char *result, const char *reason,
                     const char *gpu_uuid);
void kerfd__tx_event(kerfd_tx *x, const char *kind, int gpu, uint64_t unit, uint64_t task, int xid,
                     const char *cls, const char *fmt, ...) __attribute__((format(printf, 8, 9)));
void kerfd__tx_eventv(kerfd_tx *x, const char *kind, int gpu, uint64_t unit, uint64_t task, int xid,
                      const char *cls, const char *fmt, va_list ap);
/* A run of a task opened (or its open run updated) / closed: docs/STATE.md "Runs and cost". */
void kerfd__tx_run_open(kerfd_tx *x, const kerf_store_run *run);
void kerfd__tx_run_close(kerfd_tx *x, uint64_t task, int64_t end_ms, int64_t used_ns);
int kerfd__tx_commit(kerfd_node *n, kerfd_tx *x, bool defer);
/* cost.c: adds to x the run record that goes with t's current state: a run opened (or its
 * open run updated) while it is starting/running on units, else its open run closed at its
 * end (or now) with used_ns of device time (-1 = not measured; kerfd__run_used_ns). */
void kerfd__tx_run(kerfd_node *n, kerfd_tx *x, dtask *t, int64_t used_ns);
/* Device time t used since its run opened, from its slice region; -1 when not measured. */
int64_t kerfd__run_used_ns(const dtask *t);
/* The fraction of one GPU that unit u grants (docs/STATE.md "Runs and cost"). */
double kerfd__unit_fraction(const kerfd_node *n, const dunit *u);
/* "whole", "hardware" (MIG) or "software" (slice, mps, tslice). */
const char *kerfd__cost_route(kerf_unit_kind k);
int kerfd__records_flush(kerfd_node *n);
void kerfd__records_tick(kerfd_node *n, uint64_t mono);
void kerfd__records_stop(kerfd_node *n);
/* A change of task `task` waits in the outbox (the API says "durable": false). */
bool kerfd__records_pending(const kerfd_node *n, uint64_t task);
/* The newest waiting record of task id (an end not yet written): 0, or -ENOENT. */
int kerfd__records_task_get(const kerfd_node *n, uint64_t id, kerf_store_task *ret);
void kerfd__records_mark(const kerfd_node *n, uint64_t task, json_t *j);
bool kerfd__store_ok(const kerfd_node *n);
json_t *kerfd__store_health(const kerfd_node *n);
/* Opens <state>/kerf.db with private modes, the KERFD_TEST_STORE_FAIL hook and the audit key. */
int kerfd__store_open(kerfd_node *n);

/* migop.c: a MIG create/destroy decision, queued under mu and made by the ticker without it
 * (kerfd__mig_drain, after each tick); no device call is queued: recorded at once. */
void kerfd__do_mig(kerfd_node *n, const kerf_decision *d);
void kerfd__mig_drain(kerfd_node *n);
/* The scheduler unit of this node's MIG instance with UUID `uuid` ("MIG-..."), its fleet GPU in
 * *gpu; 0 when no live instance has it. n->mu held. */
uint64_t kerfd__mig_by_uuid(kerfd_node *n, const char *uuid, unsigned *gpu);

/* decide.c: the scheduler's decisions carried out */
void kerfd__do_start(kerfd_node *n, const kerf_decision *d);
void kerfd__do_preempt(kerfd_node *n, const kerf_decision *d);
/* Takes a running task off its units and back to pending (preemption, device fault): its
 * process is stopped and the start retried when it is gone. `action` is the audit action. */
void kerfd__task_requeue(kerfd_node *n, dtask *t, const kerf_reason *why, const char *action);
void kerfd__retry_deferred(kerfd_node *n, dtask *t);
/* The unit contract variables (docs/SHIM-CONTRACT.md) an attached task's launcher exports,
 * as a JSON object, or NULL (not attached, or no unit yet). */
json_t *kerfd__attach_env(kerfd_node *n, const dtask *t);
/* The unit contract of a task's units; `vis` receives CUDA_VISIBLE_DEVICES. False: no unit. */
bool kerfd__exec_unit(kerfd_node *n, const dtask *t, kerf_exec_unit *u, char *vis, size_t vislen);
bool kerfd__is_soft(const dtask *t);
/* The end of a start: "running" recorded (reason: the scheduler's), or a failed start ended. */
void kerfd__start_done(kerfd_node *n, dtask *t, const char *reason);
void kerfd__start_failed(kerfd_node *n, dtask *t, const char *err);

/* launch.c: a task's process start in three steps (docs/DAEMON.md "The daemon mutex"):
 * prepared and durably "starting" under mu (kerfd__launch_prepare, from kerfd__do_start),
 * forked by the ticker with mu released (kerfd__launch_drain), recorded under mu again. */
int kerfd__launch_prepare(kerfd_node *n, dtask *t, const char *reason, char *err, size_t errlen);
/* The ticker, after each tick (and kerfd_node_stop): forks what was prepared. */
void kerfd__launch_drain(kerfd_node *n);
/* A scheduler step outside the ticker (an attach) first waits for the fork in flight: no step
 * runs while one is (a step could take the launching task's units). */
void kerfd__launch_wait(kerfd_node *n);
/* A stop / end / requeue of a task whose start is prepared: true when it was deferred (the
 * fork is in flight: the end of the launch applies it); false when the launch was taken back
 * (nothing forked) and the caller goes on as for a task that never started. */
bool kerfd__launch_stop(kerfd_node *n, dtask *t, kerf_end_reason end, const char *actor,
                        const char *text, unsigned grace_s);
bool kerfd__launch_requeue(kerfd_node *n, dtask *t, const kerf_reason *why, const char *action);
/* external.c: validates an attach's "external" object (-EINVAL bad value, -ENOENT unknown key;
 * msg names the field), and writes "slurm job=N step=N user=U account=A" of a task's request
 * into buf ("" when it has none). */
int kerfd__external_check(json_t *v, char *msg, size_t msglen);
void kerfd__external_text(const dtask *t, char *buf, size_t len);
void kerfd__unit_to_store(const dunit *u, uint64_t task, kerf_unit_state state, kerf_store_unit *s);
int kerfd__bidx(kerfd_node *n, unsigned gpu);

/* fault.c: device faults (XID, GPU lost) and their blast radius */
int kerfd__fault_start(kerfd_node *n);    /* allocates the queue, starts the backend watcher */
void kerfd__fault_stop(kerfd_node *n);    /* stops the watcher (n->mu NOT held) */
void kerfd__fault_drain(kerfd_node *n);   /* in the tick, n->mu held */
void kerfd__fault_restore(kerfd_node *n); /* recovery: GPUs/units left out of service */
/* Puts GPU `gpu` (all its units) back in service. 0, -ENOENT, -KERF_ESTATE (not faulted),
 * -KERF_EDEVICE (the device still reports itself lost). */
int kerfd__gpu_recover(kerfd_node *n, unsigned gpu, const char *actor, char *msg, size_t msglen);

/* control.c: drained GPUs (docs/DAEMON.md "Holds, updates and drains") */
#define KERFD_DRAIN_REASON_MAX 200 /* bytes of a drain's reason */
/* Drains GPU `gpu` (on) or resumes it: stored with its audit record, then the scheduler.
 * 0, -ENOENT (no such GPU), -KERF_ESTATE (already in that state) or the store's error; msg
 * says what happened or why not. */
int kerfd__gpu_drain(kerfd_node *n, unsigned gpu, bool on, const char *actor, const char *reason,
                     char *msg, size_t msglen);
/* Recovery: the stored drains applied to the scheduler (before tasks are restored). */
void kerfd__drain_restore(kerfd_node *n);
/* How many tasks hold units on GPU `gpu`. */
unsigned kerfd__gpu_tasks(kerfd_node *n, unsigned gpu);

/* slice.c: the per-slice shared region (slice_abi.h) and the device fence of a task */
/* The compute share (guarantee) and burst ceiling a unit's region carries: one rule for start,
 * resume and the environment. A slice without a burst limit is capped at its guarantee (a
 * share is a promise both ways); one without a guarantee (best effort) may use the whole GPU;
 * a time-slice share has no compute reservation (pct 0, ceiling 100). */
void kerfd__slice_compute(const dunit *u, uint32_t *ret_pct, uint32_t *ret_limit);
int kerfd__slice_create(kerfd_node *n, dtask *t, const dunit *u, char *err, size_t errlen);
void kerfd__slice_open(kerfd_node *n, dtask *t); /* recovery: map an existing region */
/* 0 when uid:gid (-1: kerfd's own) may search `dir` and every directory above it; else a
 * negative errno with the first one that blocks in why. */
int kerfd__searchable_by(const char *dir, long long uid, long long gid, char *why, size_t whylen);
void kerfd__slice_remove(kerfd_node *n, dtask *t);
/* Newest GPU activity (CLOCK_MONOTONIC ms) recorded by the shim, 0 when none. */
uint64_t kerfd__slice_activity_ms(const dtask *t);
/* Counters for /metrics; false when the task has no region. */
bool kerfd__slice_counters(const dtask *t, uint64_t *mem_used, uint64_t *device_ns,
                           uint64_t *throttled_ns);
void kerfd__fence_init(kerfd_node *n);
int kerfd__fence_task(kerfd_node *n, dtask *t, char *err, size_t errlen);
/* Attached task: fences its unit and moves the launcher's pid into the task's cgroup; its
 * original cgroup is kept in t->attach_cg and the pid goes back there on release (an attached
 * process is never killed by kerfd). 0 when fencing is off. */
int kerfd__fence_attach(kerfd_node *n, dtask *t, char *err, size_t errlen);
/* Moves `pid` into fenced task t's cgroup; its cgroup of origin in *ret_cg (heap). 0, or < 0
 * with the reason in err and the pid left where it was. */
int kerfd__fence_move(kerfd_node *n, dtask *t, pid_t pid, char **ret_cg, char *err, size_t errlen);
/* Moves `pid` back into cgroup `cg` (an undone join); logged when it cannot. */
void kerfd__fence_move_back(const dtask *t, pid_t pid, const char *cg);
void kerfd__fence_release(kerfd_node *n, dtask *t);
/* Finds the process of a task whose start was not committed (kerfd died between fork and the
 * commit): a session leader whose environment holds this task id and this kerfd's socket. */
pid_t kerfd__find_started(kerfd_node *n, uint64_t task, uint64_t *ret_starttime);

/* ctl.c: software slices - fail closed without the shim, the controller thread, suspend,
 * usage sampling and shim-bypass detection */
/* Submit: 0, or -EPERM with the message (the shim is missing and slices must be enforced). */
int kerfd__slice_submit_check(kerfd_node *n, const kerf_request *req, char *msg, size_t msglen);
/* The policy the scheduler gets: without the shim (and unless allowed) no slice routes. */
void kerfd__slice_policy(const kerfd_node *n, kerf_policy *ret);
/* Start of a software slice: the shim and the simulated libraries must be readable by the
 * task's uid; sets t->unenforced. 0 or -EPERM with the stop reason in err. */
int kerfd__slice_start_check(kerfd_node *n, dtask *t, char *err, size_t errlen);
int kerfd__ctl_start(kerfd_node *n);
void kerfd__ctl_stop(kerfd_node *n);
/* Sets or clears the task's FROZEN flag now (the controller keeps it). */
void kerfd__slice_freeze(kerfd_node *n, dtask *t, bool on);
/* Every second from the tick: usage rates, bypass detection. */
void kerfd__slice_poll(kerfd_node *n, uint64_t mono);
/* The task JSON's "usage" object (NULL when the task has no region). */
json_t *kerfd__usage_json(const dtask *t);
/* Preemption of a slice victim under policy.preempt_slices_by: suspend; true when the victim
 * was frozen instead of being stopped (it is pending, its process kept). */
bool kerfd__preempt_by_suspend(kerfd_node *n, dtask *t, const kerf_decision *d);
/* Start of a task frozen by a preemption: true when its process was resumed in place. */
bool kerfd__resume_preempted(kerfd_node *n, dtask *t);
/* kerf suspend / resume of a live task: 0 (audited), or -EINVAL / -EALREADY with the
 * reason in msg (not a running enforced slice with a region; already in that state). */
int kerfd__task_suspend(kerfd_node *n, dtask *t, bool on, const char *actor, char *msg,
                        size_t msglen);
/* "unenforced", "shim", or NULL (not a software slice) */
const char *kerfd__enforcement(const dtask *t);

/* members.c: processes that join an attached task (docs/API.md "POST /v1/tasks/{id}/join").
 * Caller holds n->mu. */
/* Makes `pid` (checked by kerfd__attach_check) a member of t: moved into t's fence when fenced,
 * recorded with its audit record before it returns 0. Else nothing changed and: -EBUSY (t is
 * not a running attached task with its unit), -EMLINK (KERF_ATTACH_MAX_PIDS reached), -ESRCH
 * (the process is gone), a store error (-EIO, -ENOSPC...: the store cannot write), or the fence
 * move's error; the reason in msg. */
int kerfd__task_join(kerfd_node *n, dtask *t, pid_t pid, const char *actor, char *msg,
                     size_t msglen);
/* An attached task's liveness: true while its first process or any member lives. Members that
 * ended are dropped (and their rows removed, deferred). */
bool kerfd__attached_alive(kerfd_node *n, dtask *t);
/* Attached task t placed again (after a requeue) and fenced anew: its members go into the fence
 * too (a member that cannot be moved is logged and stays a member). */
void kerfd__members_fence(kerfd_node *n, dtask *t);
/* The live task whose member `pid` is, 0 when none. */
uint64_t kerfd__member_task(kerfd_node *n, pid_t pid);
/* Whether `pid` (process group `pg`, 0 when unknown) is a process of t: its first process,
 * its process group, or a member that joined it. */
bool kerfd__task_has_pid(const dtask *t, pid_t pid, pid_t pg);
/* The device's view of a running task (poll_gpus): true with its SM % and the poll's wall
 * clock ms once a poll after its start sampled it; false otherwise (not running, no poll yet,
 * or a backend without per-process utilisation). */
bool kerfd__task_dev_sm(const dtask *t, unsigned *pct, int64_t *at_ms);
/* Recovery of running attached task t: its stored members read back; the live ones (pid and
 * proc_start match) kept, the others dropped from the store. */
void kerfd__members_recover(kerfd_node *n, dtask *t);
/* [first pid, member pids...] of attached task t (a new reference). */
json_t *kerfd__task_pids_json(const dtask *t);
/* The cgroup member `pid` of t came from, or NULL when it is not a member (or it is unknown). */
const char *kerfd__member_cg(const dtask *t, pid_t pid);
/* Frees t's member list (kerfd_task_free). */
void kerfd__members_free(dtask *t);

/* peer.c: task identity, peers that are tasks, attach ownership (docs/SECURITY.md) */
/* The uid:gid tenant `kt`'s tasks run as: its `uid`; kerfd's own (-1) with allow_root or when
 * kerfd is not root; else its own unprivileged identity (tenant_defaults.uid_base). -EPERM with
 * the reason when the uid is root/admin without allow_root, or no identity can be given. */
int kerfd__task_identity(kerfd_node *n, const ktenant *kt, long long *ret_uid, long long *ret_gid,
                         char *err, size_t errlen);
/* uid_base + hash(name) % uid_span, or -1 when uid_base is 0. */
long long kerfd__tenant_dynamic_uid(const kerfd_config *cfg, const char *name);
/* A new tenant without uid whose identity is another tenant's uid: -EEXIST with the reason. */
int kerfd__tenant_identity_check(kerfd_node *n, const kerfd_tenant_cfg *c, char *err,
                                 size_t errlen);
/* The live task `pid` belongs to (its fence cgroup, or its ancestry/session up to a task
 * leader), 0 when none. Caller holds n->mu. */
uint64_t kerfd__peer_task(kerfd_node *n, pid_t pid);
/* The same in two steps, so that /proc is read before n->mu is taken: _chain reads the
 * process's cgroup task id, ancestry and sessions (no lock); _chain_task matches them against
 * the live tasks (caller holds n->mu). */
typedef struct kerfd_peer_chain {
        uint64_t cgroup_task; /* task-<id> in its cgroup path, 0 when none */
        unsigned n;
        pid_t pid[2 * 64];
} kerfd_peer_chain;
void kerfd__peer_chain(pid_t pid, kerfd_peer_chain *c);
uint64_t kerfd__peer_chain_task(kerfd_node *n, const kerfd_peer_chain *c);
/* POST /v1/attach and /v1/tasks/{id}/join: 0 when the caller may attach `pid` (its real uid
 * is the peer's uid, or the tenant's uid over TCP; not init, kerfd, a task's process, nor
 * attached or joined already); else -EPERM / -ESRCH / -EEXIST (attached or joined) with the
 * reason in msg. */
int kerfd__attach_check(kerfd_node *n, pid_t pid, bool has_cred, uid_t peer_uid, const char *tenant,
                        char *msg, size_t msglen);
/* api_admin.c: a tenant between its configured and its stored form */
void kerfd__tenant_to_store(const kerfd_tenant_cfg *c, kerf_store_tenant *st);
void kerfd__tenant_from_store(const kerf_store_tenant *st, kerfd_tenant_cfg *c);
/* One more (+1) or one fewer (-1) unfinished task of `tenant`. */
void kerfd__tenant_count(kerfd_node *n, const char *tenant, int delta);
/* Submit policy of the tenant (ceilings, workloads, pending tasks). 0, or -EPERM / -EAGAIN
 * with the message naming the ceiling (docs/DAEMON.md "Tenant policy"). */
int kerfd__tenant_policy_check(kerfd_node *n, const ktenant *kt, const kerf_request *q, char *msg,
                               size_t msglen);
/* Its priority ceiling alone (submit, and an update of a pending task): 0 or -EPERM. */
int kerfd__tenant_priority_check(kerfd_node *n, const ktenant *kt, int priority, char *msg,
                                 size_t msglen);

/* cdi_task.c: CDI specs of attached tasks (cdi.enabled; docs/CLUSTER.md). Caller holds n->mu. */
/* Writes t's spec (device "task-<id>") when CDI is on and t is attached with a unit; 0 (also
 * when nothing is to be written) or < 0, logged. */
int kerfd__cdi_task_write(kerfd_node *n, dtask *t);
/* Removes t's spec (only a file this kerfd wrote). */
void kerfd__cdi_task_remove(kerfd_node *n, dtask *t);
/* "KIND=task-<id>" of t's written spec into out; false when it has none. */
bool kerfd__cdi_device(const kerfd_node *n, const dtask *t, char *out, size_t cap);
/* After recovery: specs of running attached tasks written again, this kerfd's others removed. */
void kerfd__cdi_recover(kerfd_node *n);

/* task.c */
dtask *kerfd_task_free(dtask *t);
/* Parses a submit/attach body (strict) into a new dtask (rec filled, not stored).
 * On failure writes the HTTP error code word and message, returns -EINVAL/-ENOENT/-EPERM. */
int kerfd_task_parse(kerfd_node *n, json_t *body, bool attach, bool admin, const char *tenant,
                     dtask **ret, const char **ret_code, char *msg, size_t msglen);
/* Rebuilds the request of a stored task (recovery). */
int kerfd_task_from_store(kerfd_node *n, const kerf_store_task *rec, dtask **ret, char *msg,
                          size_t msglen);
/* An update of live task `t` (PATCH /v1/tasks/{id}): `changes` merged into a copy of its
 * request and checked by the rules of submit. On success *ret is a new dtask (free it with
 * kerfd_task_free) whose req_json/req hold the updated request; else the HTTP error code word
 * and message, -EINVAL/-ENOENT/-EPERM. */
int kerfd_task_update_check(kerfd_node *n, const dtask *t, json_t *changes, dtask **ret,
                            const char **ret_code, char *msg, size_t msglen);
/* The API's task object for a stored record, with units when `t` (live) is given. */
json_t *kerfd_task_json(kerfd_node *n, const kerf_store_task *rec, const dtask *t);
json_t *kerfd_unit_json(const dunit *u, const char *state, uint64_t task);

/* metrics_node.c: what /metrics keeps past a task's end (caller holds n->mu) and the daemon's
 * timings (any thread, atomic; docs/METRICS.md). */
void kerfd__metrics_started(const dtask *t); /* a first start: its wait since submit */
void kerfd__metrics_preempted(const dtask *t);
void kerfd__metrics_fault(const dtask *t); /* a device fault hit the task */
/* t's slice region goes: its throttled time is kept for its tenant */
void kerfd__metrics_slice_gone(const dtask *t);
uint64_t kerfd__metrics_clock_us(void); /* CLOCK_MONOTONIC, microseconds */
void kerfd__metrics_tick(uint64_t t0_us);
void kerfd__metrics_commit(uint64_t t0_us);
void kerfd__metrics_http(uint64_t t0_us, unsigned status);
/* metrics_auth.c: reads metrics.token_file and starts the metrics.listen listener (before the
 * API listeners); 0 or < 0 (logged). _stop closes it. */
int kerfd__metrics_listen_start(kerfd_node *n);
void kerfd__metrics_listen_stop(void);

/* simgroup.c: gives n->sim_dir and its files (the state, the simulated engines) to the
 * simulated device group cfg.sim_gid (dir 03770, files 0660), only what kerfd's uid owns, never
 * through a link; sets n->sim_shared. Root only (else 0, nothing changed); < 0 logged. */
int kerfd__sim_share(kerfd_node *n);

/* api_node.c: sets n->node_name (cfg.node_name or the hostname) and n->dev_dir; on the
 * simulated fleet, as root, creates <state>/dev with the character devices a real host has
 * (nvidiaN, nvidiactl, nvidia-caps/nvidia-capM for MIG), never through a link. Logs what it
 * skipped; never fails kerfd's start. */
void kerfd__node_devs(kerfd_node *n);

/* libstage.c: copies the libraries tasks load (shim, simulated libcuda/NVML) from `from` into
 * <state_dir>/lib (0755, files 0644) and writes that dir to out; < 0 (logged, out unchanged)
 * when it cannot. The programs tasks run (kerf-load) are copied from `bin_dir` (NULL: none)
 * with mode 0755 when they exist there; one missing or not copied is logged, not an error. */
/* Where kerfd's own libraries are (the shim; the simulated libcuda and NVML): the installed
 * layout's private dir <bin>/../lib/kerf when it holds libkerf-cuda.so (never a directory the
 * loader searches: the simulated NVIDIA libraries must not shadow a real driver's), else the
 * build tree's <bin>/../lib. Writes the path to `out`. */
void kerfd__install_lib_dir(const char *bin_dir, char *out, size_t size);
int kerfd__stage_libs(const char *from, const char *bin_dir, const char *state_dir, char *out,
                      size_t outlen);

/* retention.c: from the ticker, n->mu held: a retention pass every retention.interval
 * (docs/DAEMON.md "Retention"); releases n->mu during the file work and takes it again. */
void kerfd__retention_tick(kerfd_node *n);
/* logcap.c: from the ticker, n->mu held: about once a second, the logs of the tasks that run
 * cut to head + marker + latest output when over retention.max_log_bytes (docs/DAEMON.md
 * "Retention"); releases n->mu during the file work and takes it again. */
void kerfd__logcap_tick(kerfd_node *n);
/* The bytes of head (and of tail) such a cut keeps of a log capped at `max`. */
uint64_t kerfd__logcap_keep(uint64_t max);

#endif /* KERFD_INTERNAL_H */
