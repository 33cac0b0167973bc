/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h - the scheduler's private state, shared by the files of src/sched */
#ifndef KERF_SCHED_INTERNAL_H
#define KERF_SCHED_INTERNAL_H

#include <stdarg.h>

#include "kerf/errno.h"
#include "kerf/sched.h"
#include "u64map.h"

struct stask;
struct stenant;

/* Request classes for the fragmentation score (frag.c): at most KERF_NCLS distinct shapes,
 * the least popular replaced when a new one arrives. */
#define KERF_NCLS 64
typedef struct sclass {
        unsigned ngpus;         /* GPUs on one node */
        unsigned compute;       /* per GPU, percent (100 for whole GPUs) */
        unsigned permille;      /* per-GPU memory as a fraction of the GPU, or 0 */
        uint64_t mem;           /* per-GPU memory in bytes when permille is 0 */
        uint64_t mask;          /* allowed models, 0 = any */
        unsigned cpu_b, hmem_b; /* quarter-octave buckets of node CPU and host memory (key) */
        uint64_t cpu, hmem;     /* the largest CPU and host memory seen in the buckets */
        double w;               /* decayed popularity */
        double we;              /* w weighted by the scarcity of its models (this decision) */
        uint32_t stamp;         /* changes when the slot gets a new class */
} sclass;
struct stask;
struct sgpu;
void kerf__class_note(struct kerf_sched *s, const struct stask *t, bool whole);
void kerf__frag_free(struct kerf_sched *s);

typedef struct sunit {
        uint64_t id;
        kerf_unit_kind kind;
        kerf_unit_state state;
        unsigned gpu;
        struct stask *task; /* holder when ASSIGNED, or the task a CREATING unit is for */
        uint64_t mem;
        unsigned compute, limit;
        const kerf_mig_profile *prof;
        unsigned start;
        bool create_pending; /* FAULT while its create is unanswered: mig_done still applies */
        struct sunit *next, *prev; /* per-GPU list, in creation order */
} sunit;

typedef struct sgpu {
        const kerf_gpu_desc *d;
        unsigned idx;
        kerf_gpu_mode mode;
        bool faulted;
        bool draining; /* kerf_sched_gpu_drain */
        uint64_t mem_total, mem_res;
        unsigned comp_res;     /* guaranteed compute reserved, percent */
        uint8_t mig_mask;      /* memory slices held by instances (any state) */
        uint8_t mig_plan_mask; /* slices promised to a planned create (destroys outstanding) */
        unsigned mig_compute;  /* compute slices held */
        unsigned n_units;
        sunit *head, *tail;
} sgpu;

typedef struct snode {
        uint64_t cpu_free, mem_free; /* UINT64_MAX when not accounted */
        uint64_t cpu_held, mem_held; /* taken by kerf__sched_node_hold() (hold.h) */
} snode;

typedef struct squeue {
        char name[KERF_NAME_LEN];
        struct stenant *tenant;
        struct stask **heap; /* max-heap by (priority, -seq) */
        size_t len, cap;
        uint64_t blocked_gen; /* head could not run at this generation */
        struct squeue *next;  /* tenant's queues */
        kerf_queue_spec spec;
        size_t n_bounded;     /* pending tasks with a max_runtime (backfill candidates) */
        uint64_t bf_done_gen; /* backfill.c: nothing more to try behind the head */
        /* the head's reservation, valid for (resv_gen, resv_head) */
        uint64_t resv_gen, resv_head;
        uint64_t resv_at; /* expected start (clock ms), UINT64_MAX: none can be shown */
        bool resv_ok;     /* resv holds where the head is expected to go */
        unsigned resv_n;  /* GPUs in resv_gpus */
        unsigned resv_node;
        unsigned resv_gpus[KERF_MAX_TASK_GPUS];
        uint64_t resv_charge[KERF_RES_COUNT];
} squeue;

/* Per queue name: the spec set by kerf_sched_queue_set. */
typedef struct sqspec {
        char name[KERF_NAME_LEN];
        kerf_queue_spec spec;
} sqspec;

typedef struct stenant {
        char name[KERF_NAME_LEN];
        int cohort; /* index into cohort names, -1 none */
        unsigned weight;
        unsigned idx;
        uint64_t nominal[KERF_RES_COUNT], borrow[KERF_RES_COUNT], lend[KERF_RES_COUNT];
        uint64_t usage[KERF_RES_COUNT];
        uint64_t grand[KERF_RES_COUNT]; /* usage above a lowered quota, kept until it drains */
        double share;                   /* weighted dominant share */
        squeue *queues;
        size_t n_pending;
} stenant;

/* Why a placement attempt failed, kept as numbers: the words are formatted only when someone
 * reads them (kerf__detail_format), since most are overwritten by the next attempt. */
typedef enum smsg {
        MSG_NONE = 0,
        MSG_SHARE_NO_MODEL,   /* a = route kind */
        MSG_SHARE_NODE,       /* - */
        MSG_SHARE_FRAGMENTED, /* a = free MiB in total, b = most MiB on one GPU */
        MSG_SHARE_NO_FIT,     /* a = MiB needed, b = compute % */
        MSG_SHARE_MULTI,      /* - */
        MSG_WHOLE_NODE,       /* - */
        MSG_WHOLE_FRAGMENTED, /* a = free GPUs, b = most on one node, c = needed */
        MSG_WHOLE_NO_FIT,     /* a = needed, b = free */
        MSG_MIG_NONE,         /* - */
        MSG_MIG_NODE,         /* - */
        MSG_MIG_FRAGMENTED,   /* a = reconfiguration on */
        MSG_MIG_PIN,          /* a = the pinned MIG unit, b = its holder task (0: gone, faulted
                               * or its GPU draining) */
        MSG_UNKNOWN_ROUTE,    /* - */
        MSG_QUOTA,            /* tenant, res, a = would use, b = nominal */
        MSG_QUOTA_BORROW,     /* tenant, res, a = would use, b = nominal, c = borrow limit */
        MSG_COHORT,           /* tenant, res, cohort, a = to borrow, b = lent now */
        MSG_COHORT_LENT,      /* tenant, res, cohort, a = what it needs back */
        MSG_NO_ROUTE,         /* - */
        MSG_BEHIND_HEAD,      /* a = head, b = head's start in s (UINT64_MAX none), c = own
                               * max_runtime_s: fits, but backfilling it could delay the head */
} smsg;

typedef struct sdetail {
        uint8_t msg;   /* smsg */
        uint8_t route; /* "<route>: " prefix when < KERF_UNIT_KIND_COUNT */
        uint8_t res;
        bool any_cohort; /* kerf__place: some route failed on cohort quota only */
        int cohort;
        const struct stenant *tenant; /* tenants live as long as the scheduler */
        uint64_t a, b, c;
} sdetail;

/* A plan to place a task: what try_place found. */
typedef struct splan {
        kerf_unit_kind route;
        unsigned n;
        unsigned gpus[KERF_MAX_TASK_GPUS];
        sunit *reuse;                 /* MIG: existing READY instance */
        const kerf_mig_profile *prof; /* MIG: profile */
        unsigned start;               /* MIG: start slice of a new instance */
        unsigned n_destroy;           /* MIG: idle instances to destroy first */
        sunit *destroy[KERF_MIG_SLICES];
        uint64_t mem; /* per GPU */
        unsigned compute, limit;
        uint64_t charge[KERF_RES_COUNT];
        bool borrowing;
        kerf_gpu_mode switch_mode; /* FREE GPU switched to this mode (or FREE = no switch) */
} splan;

typedef struct stask {
        uint64_t id;
        uint64_t seq;
        kerf_task_state state;
        char name[KERF_NAME_LEN];
        stenant *tenant;
        squeue *queue;
        size_t heap_idx;
        /* request */
        kerf_workload wl;
        kerf_tier tier;
        int route_req;                       /* -1 or kind */
        const kerf_mig_profile *mig_req_any; /* non-NULL: explicit profile requested (by name) */
        char mig_name[24];
        unsigned ngpus;
        uint64_t mem_req;
        unsigned mem_permille;
        unsigned compute, limit;
        uint64_t cpu, hmem, model_mask;
        unsigned n_pins, pins[KERF_MAX_TASK_GPUS]; /* kerf_request.gpu_pins */
        uint64_t mig_pin;                          /* kerf_request.mig_unit_pin */
        int prio;
        bool preemptible;
        uint64_t max_runtime, idle_timeout;
        /* placement */
        kerf_unit_kind route;
        unsigned node;
        unsigned n_units;
        sunit *units[KERF_MAX_TASK_GPUS];
        uint64_t charge[KERF_RES_COUNT];
        bool borrowing;
        unsigned destroys_left; /* STARTING: destroys outstanding before the create */
        splan plan;             /* STARTING: what to create */
        unsigned preemptions;
        bool doomed;        /* preemption what-if: counted as gone */
        bool reclaimed;     /* evicted by a reclaim: may not preempt until placed again, or a
                             * reclaim and the priority preemptions it triggers could cycle */
        kerf_reason reason; /* text "" and wait.msg set: the words are wait's, not yet formatted */
        sdetail wait;       /* the last failed attempt (step.c) */
        uint64_t start_ms;  /* clock when placed */
        uint64_t queued_ms; /* clock when it (last) entered its queue */
        uint64_t bf_gen;    /* tried as a backfill candidate at this generation */
        uint64_t mark;      /* backfill.c: collected at this stamp */
        bool backfilled;    /* placed ahead of a blocked head */
        bool held;          /* PENDING but out of its queue (control.c) */
} stask;

struct kerf_sched {
        kerf_fleet *fleet;
        kerf_policy pol;
        sgpu *gpus;
        size_t n_gpus;
        snode *nodes;
        stenant **tenants;
        size_t n_tenants, cap_tenants;
        char (*cohorts)[KERF_NAME_LEN];
        size_t n_cohorts;
        uint64_t cap[KERF_RES_COUNT]; /* fleet totals for dominant share */
        kerf_u64map tasks;
        kerf_u64map units;
        uint64_t next_task, next_unit, next_seq, dec_seq;
        bool whatif;   /* place.c treats units of doomed tasks as free */
        int only_node; /* place_whole restricted to this node when >= 0 */
        uint64_t gen;  /* bumped whenever capacity or quota changes */
        stask **ready; /* STARTING tasks whose destroys are done: emit their create next step */
        size_t n_ready, cap_ready;
        kerf_sched_stats st;
        sclass cls[KERF_NCLS]; /* request classes and their popularity (frag.c) */
        unsigned n_cls;
        uint32_t cls_stamp;
        struct fnode *fnodes; /* per-node fragmentation cache (frag.c), allocated on first use */
        struct migfit
            *migfit; /* per MIG model: instances that still fit per used mask (mig_layout.c) */
        size_t n_migfit;
        kerf_clock_fn clock;
        void *clock_arg;
        sqspec *qspecs; /* kerf_sched_queue_set */
        size_t n_qspecs;
        uint64_t mark;  /* backfill.c's collection stamp */
        stask **bf_buf; /* backfill.c's scratch lists: candidates, and running tasks */
        stask **rv_buf;
        size_t rv_cap;
        uint64_t bf_gen; /* backfill.c: candidates tried since capacity last changed */
        unsigned bf_used;
        size_t bf_cap;
        /* decisions not yet handed out by kerf_sched_step (FIFO) */
        kerf_decision *dq;
        size_t dq_head, dq_len, dq_cap;
};

/* sched.c */
int kerf__task_from_request(kerf_sched *s, const kerf_request *r, stask *t, kerf_reason *why);
int kerf__submit(kerf_sched *s, const kerf_request *r, uint64_t forced_id, uint64_t *ret_id,
                 kerf_reason *why);

/* reason.c */
void kerf__reason_set(kerf_reason *r, kerf_why code, uint64_t other, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Sets d (when not NULL) to message msg without a route prefix, numbers zero. */
sdetail *kerf__detail(sdetail *d, smsg msg);
/* The words of a detail (with its route prefix). */
void kerf__detail_format(const kerf_sched *s, const sdetail *d, char *buf, size_t len);
/* A task's reason with its words (formatting a lazy one). */
void kerf__task_reason(const kerf_sched *s, const stask *t, kerf_reason *ret);

/* quota.c */
void kerf__tenant_share_update(kerf_sched *s, stenant *t);
/* Checks whether `t` may take `charge` more. Returns KERF_WHY_NONE, QUOTA or COHORT and
 * sets *ret_borrow when the charge needs cohort borrowing. `d` (may be NULL) gets the detail
 * on failure. */
kerf_why kerf__quota_check(const kerf_sched *s, const stenant *t, const uint64_t *charge,
                           bool *ret_borrow, sdetail *d);
void kerf__quota_charge(kerf_sched *s, stenant *t, const uint64_t *charge, int sign);
uint64_t kerf__cohort_borrowed(const kerf_sched *s, int cohort, unsigned r);

/* place.c */
/* Finds a placement for `t` on one of its routes. Returns KERF_WHY_NONE and fills *plan, or
 * the reason it cannot run now (detail of the first route in `d`, per-route words in `ex` when
 * not NULL). */
kerf_why kerf__place(kerf_sched *s, stask *t, splan *plan, sdetail *d, kerf_explain *ex);
/* Same for one route only, restricted to GPU `only` when only >= 0; `d` may be NULL. */
kerf_why kerf__place_route(kerf_sched *s, stask *t, kerf_unit_kind route, int only, splan *plan,
                           sdetail *d);
bool kerf__route_possible(const kerf_sched *s, const stask *t, kerf_unit_kind route, char *text,
                          size_t len);
const kerf_mig_profile *kerf__mig_profile_for(const stask *t, const kerf_gpu_model *m);
uint64_t kerf__task_mem_on(const stask *t, const sgpu *g);
/* Whether `t` may use GPU g at all: its models and pins. */
bool kerf__gpu_allowed(const stask *t, const sgpu *g);

/* mig_layout.c: the MIG layout score. counts[i] = instances of m->profiles[i] on a GPU. */
#define KERF_MIGFIT_PROFILES 16
struct migfit;
const struct migfit *kerf__migfit_of(struct kerf_sched *s, const kerf_gpu_model *m);
void kerf__migfit_free(struct kerf_sched *s);
unsigned kerf__mig_layout_value(const struct migfit *f, const kerf_gpu_model *m, uint8_t used,
                                unsigned compute_used, const unsigned *counts);
void kerf__mig_prof_counts(const struct sgpu *g, unsigned *counts);

/* frag.c: the KERF fragmentation score; the change of sum_m p_m F_n(m) when a share on g
 * leaves it `after` free milli-GPUs, or when whole GPUs sel[0..n) of a node are taken. */
unsigned kerf__gpu_free_milli(const kerf_sched *s, const sgpu *g);
void kerf__frag_begin(kerf_sched *s);
double kerf__frag_share_delta(kerf_sched *s, const stask *t, const sgpu *g, unsigned after);
double kerf__frag_whole_delta(kerf_sched *s, const stask *t, unsigned node, const unsigned *sel,
                              unsigned n);

/* units.c */
sunit *kerf__unit_new(kerf_sched *s, sgpu *g, kerf_unit_kind kind);
/* With a caller-chosen id (0 = next); the caller checked it is free. */
sunit *kerf__unit_new_id(kerf_sched *s, sgpu *g, kerf_unit_kind kind, uint64_t id);
void kerf__unit_free(kerf_sched *s, sunit *u);
/* Gives the plan's units to `t` (task state RUNNING or STARTING) and charges quota + node. */
int kerf__task_bind(kerf_sched *s, stask *t, splan *p);
/* Releases all units and charges of `t`; MIG units go back to READY. */
void kerf__task_unbind(kerf_sched *s, stask *t);
/* Takes a placed task off its units and puts it back in its queue with a reason. */
int kerf__task_evict(kerf_sched *s, stask *t, kerf_why code, uint64_t by, const char *text);
/* Emits the MIG_CREATE of a STARTING task whose destroys are all confirmed. */
int kerf__mig_create_planned(kerf_sched *s, stask *t);
int kerf__emit(kerf_sched *s, kerf_decision_kind k, stask *t, const kerf_reason *why);

/* control.c */
/* Whether g takes no new work (faulted or draining). */
static inline bool kerf__gpu_closed(const sgpu *g)
{
        return g->faulted || g->draining;
}
/* Appends "; GPU N is draining" (the draining GPUs `t` could use, a few) to buf when some are. */
void kerf__drain_note(const kerf_sched *s, const stask *t, char *buf, size_t len);

/* queue.c */
/* The spec of queues called `name` (kerf_sched_queue_set, or the policy's default). */
void kerf__queue_spec_for(const kerf_sched *s, const char *name, kerf_queue_spec *ret);
int kerf__queue_push(squeue *q, stask *t);
void kerf__queue_remove(squeue *q, stask *t);
stask *kerf__queue_top(const squeue *q);
bool kerf__task_before(const stask *a, const stask *b);
/* Puts a task (back) into its queue as PENDING. */
int kerf__task_enqueue(kerf_sched *s, stask *t);

/* backfill.c */
uint64_t kerf__now(const kerf_sched *s);
/* Whether `q` treats `head` strictly at `now` (strict, or best-effort past starvation_s). */
bool kerf__queue_strict(const squeue *q, const stask *head, uint64_t now);
/* Tries tasks behind the blocked head of `q` (mode and backfill rules); starts at most one.
 * Returns 1 when one started, 0 when none is left at this generation, or a negative errno. */
int kerf__backfill(kerf_sched *s, squeue *q);
/* Whether pick() should still offer `q` whose head is blocked at this generation. */
bool kerf__backfill_pending(const kerf_sched *s, const squeue *q);
/* Computes (or reuses) the reservation of q's head; false when the head fits now. */
void kerf__reserve(kerf_sched *s, squeue *q, stask *head);
/* step.c: starts `t` with `plan`; `why` (may be NULL) prefixes the START reason. */
int kerf__start(kerf_sched *s, stask *t, splan *plan, const char *why);
/* step.c: records a failed attempt (lazy words) unless an eviction reason must outlive it. */
void kerf__note_wait(stask *t, kerf_why w, const sdetail *d);

/* preempt.c */
/* Tries to make room for `t` by preempting; on success the task is placed (plan filled,
 * victims evicted with PREEMPT decisions) and true is returned. */
bool kerf__preempt(kerf_sched *s, stask *t, kerf_why why, splan *plan);

#endif /* KERF_SCHED_INTERNAL_H */
