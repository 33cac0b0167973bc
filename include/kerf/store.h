/* SPDX-License-Identifier: Apache-2.0 */
/* store.h - kerfd's durable state (SQLite, WAL) and the tamper-evident audit chain */
#ifndef KERF_STORE_H
#define KERF_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kerf/core.h"
#include "kerf/sched.h"

/* Conventions for every function below:
 * - Returns >= 0 on success, -errno or -KERF_E* on failure (kerf_strerror() names it):
 *   -EINVAL bad argument (a string too long for its field, a NULL where one is needed),
 *   -ENOENT no such row, -EEXIST a unique key is taken, -EBUSY the database stayed locked past
 *   busy_timeout, -ENOSPC disk full, -EIO an I/O error, -KERF_ECORRUPT a damaged database,
 *   -KERF_ESTATE a transaction call out of order. kerf_store_errmsg() has SQLite's words.
 * - Output parameters are written only on success. Nothing prints.
 * - A kerf_store handle is NOT thread-safe: callers serialise its use (one handle per thread
 *   is fine: WAL lets readers run beside the single writer).
 * - Small text fields are fixed char arrays (always NUL-terminated; longer input -> -EINVAL).
 *   Variable text (JSON, paths) is `char *`: on input it is only read; on output it is
 *   heap-allocated and released by the matching _fini / _list_free.
 * - Times are milliseconds since the Unix epoch (int64_t). Where a function takes `now_ms`,
 *   0 means "read CLOCK_REALTIME". */

/* Every store call that can fail returns a result the caller must look at (docs/STATE.md
 * "Store failures"): a write that is not checked is a record that may silently not exist. */
#define KERF_STORE_MUST __attribute__((warn_unused_result))

#define KERF_STORE_SCHEMA_VERSION 7
#define KERF_STORE_WORD_LEN       24  /* state / kind / end_reason / route words */
#define KERF_STORE_HASH_HEX       65  /* BLAKE2b-256 as 64 hex digits + NUL */
#define KERF_STORE_TOKEN_LEN      64  /* "kerf_" + 43 base64url chars + NUL, with room */
#define KERF_STORE_OBJ_LEN        128 /* audit object, e.g. "task:12", "gpu:GPU-..." */
#define KERF_STORE_VER_LEN        32  /* driver / CUDA / kerf version strings */
#define KERF_STORE_LIST_MAX       10000

typedef struct kerf_store kerf_store;

/* ---- open / close ----------------------------------------------------------------------- */

typedef enum kerf_store_sync {
        /* WAL + synchronous=NORMAL: a committed transaction survives a crash or kill -9 of the
         * process (the WAL is in the OS page cache); the last commits before a power loss or
         * kernel crash may be lost (the database stays consistent). The default. */
        KERF_STORE_SYNC_NORMAL = 0,
        /* WAL + synchronous=FULL: every commit fsyncs the WAL; also survives power loss. */
        KERF_STORE_SYNC_FULL,
} kerf_store_sync;

typedef struct kerf_store_opts {
        kerf_store_sync sync;
        int busy_timeout_ms; /* 0 = 5000 */
        bool read_only;      /* open an existing database for reading (CLI, tests) */
} kerf_store_opts;

/* Opens (creating if absent, unless read_only) the database at `path`, switches it to WAL,
 * turns on foreign keys and runs forward migrations up to KERF_STORE_SCHEMA_VERSION. `opts` may
 * be NULL (defaults). On failure writes one human-readable line to err[0..errlen) (err may be
 * NULL) and returns: -KERF_EUNSUPP when the file's schema is newer than this kerf ("schema
 * version N is newer than this kerf supports (M)"), -KERF_ECORRUPT when it is not a kerf
 * database, -ENOENT/-EACCES/-EIO/-ENOMEM. Free with kerf_store_close(). */
KERF_STORE_MUST int kerf_store_open(const char *path, const kerf_store_opts *opts, kerf_store **ret,
                                    char *err, size_t errlen);
/* Closes the handle (rolling back an open transaction). Accepts NULL; returns NULL. */
kerf_store *kerf_store_close(kerf_store *s);
/* SQLite's message for the last failed call on `s` (static until the next call). */
const char *kerf_store_errmsg(const kerf_store *s);
/* The schema version of the open database. */
int kerf_store_schema_version(const kerf_store *s);

/* Versions stamped on audit records that leave theirs empty (kerfd sets them at start and
 * after a driver change). Strings are copied; NULL leaves a value unchanged. -EINVAL if long. */
int kerf_store_set_versions(kerf_store *s, const char *driver, const char *cuda, const char *kerf);
/* The node name new audit records carry (docs/STATE.md "Audit"): 1..KERF_NAME_LEN-1 bytes, or
 * NULL/"" for none. Returns 0 or -EINVAL. */
int kerf_store_set_node(kerf_store *s, const char *node);

/* ---- transactions ------------------------------------------------------------------------ */

/* Every state change commits together with its audit record:
 *     kerf_store_begin(s);
 *     kerf_store_task_insert(s, &t);  kerf_store_audit_append(s, &rec);
 *     kerf_store_commit(s);           (or kerf_store_rollback(s) on any error)
 * begin takes the write lock at once (BEGIN IMMEDIATE). Calls outside a transaction commit by
 * themselves. Several changes in one transaction are a group commit (one WAL sync).
 * begin inside a transaction, or commit/rollback outside one: -KERF_ESTATE. A failed commit
 * rolls back. */
KERF_STORE_MUST int kerf_store_begin(kerf_store *s);
KERF_STORE_MUST int kerf_store_commit(kerf_store *s);
KERF_STORE_MUST int kerf_store_rollback(kerf_store *s);
bool kerf_store_in_transaction(const kerf_store *s);
/* The one transaction helper: begin, fn(s, userdata), then commit when fn returned >= 0,
 * else roll back. Returns fn's result, or the begin/commit error (a failed commit rolls
 * back: nothing of fn's writes is kept). Inside a caller's transaction fn runs in a
 * savepoint that is rolled back on failure. Every multi-write change in kerfd goes through it. */
typedef int (*kerf_store_tx_fn)(kerf_store *s, void *userdata);
KERF_STORE_MUST int kerf_store_tx(kerf_store *s, kerf_store_tx_fn fn, void *userdata);
/* Ends a transaction opened with kerf_store_begin: commit when r >= 0, else rollback;
 * returns r or the commit's error. For callers that write their transaction inline. */
KERF_STORE_MUST int kerf_store_end(kerf_store *s, int r);

/* ---- failure injection (tests) ------------------------------------------------------------ */

/* Makes write operations of `s` fail with -EIO, as a broken disk would. `spec` is
 * "OP[:NTH[:COUNT]][@FILE]": OP is one of commit, task_insert, task_update, task_lease,
 * unit_upsert, unit_delete, event_append, audit_append, run_open, run_close, member_add,
 * member_delete, or "*" (any of them); the NTH call (1 = the next) and the COUNT - 1 after it fail
 * (COUNT 0 = all from NTH on); with @FILE a call fails only while FILE exists. NULL or "" turns
 * injection off. -EINVAL on a bad spec. kerfd sets it from $KERFD_TEST_STORE_FAIL (docs/DAEMON.md,
 * test hooks). */
KERF_STORE_MUST int kerf_store_fail_set(kerf_store *s, const char *spec);

/* ---- file modes --------------------------------------------------------------------------- */

/* Makes the database at `path` and its -wal, -shm and -journal files private: each that exists
 * must be a regular file owned by the calling euid (else -EPERM: kerfd does not chmod a file
 * it does not own) and loses every group/other bit (chmod 0600). kerf_store_open creates a new
 * database 0600 itself (SQLite gives -wal/-shm the database's mode), whatever the umask.
 * Returns how many files were changed; `note` (may be NULL) names them, or the refusal. */
KERF_STORE_MUST int kerf_store_secure_files(const char *path, char *note, size_t notelen);

/* ---- meta: small key/value settings ------------------------------------------------------- */

/* Sets / reads a key (1..63 chars) in the meta table. Keys starting with "kerf." are reserved
 * for the store (-EINVAL). get: -ENOENT if absent; the value is truncated to fit `len`. */
KERF_STORE_MUST int kerf_store_meta_set(kerf_store *s, const char *key, const char *value);
KERF_STORE_MUST int kerf_store_meta_get(kerf_store *s, const char *key, char *ret_value,
                                        size_t len);

/* ---- tasks --------------------------------------------------------------------------------- */

/* One task. Words are the daemon's names (docs/API.md): state "pending|starting|running|
 * succeeded|failed|cancelled", end_reason "" or "exit|failure|cancel|...", route "" or a unit
 * kind name. The store does not interpret them, except that ended_ms != 0 means finished. */
typedef struct kerf_store_task {
        uint64_t id; /* > 0, chosen by the scheduler */
        char tenant[KERF_NAME_LEN];
        char queue[KERF_NAME_LEN];
        char name[KERF_NAME_LEN];
        char state[KERF_STORE_WORD_LEN];
        char end_reason[KERF_STORE_WORD_LEN];
        char route[KERF_STORE_WORD_LEN];
        char *request_json; /* the validated submit body (JSON object text); required */
        char *argv_json;    /* JSON array of strings, or NULL (attached tasks) */
        char *env_json;     /* JSON object, or NULL */
        char *cwd;          /* or NULL */
        char *log_stdout;   /* log file paths, or NULL */
        char *log_stderr;
        int64_t uid, gid;     /* -1 = not set */
        int64_t pid, pgid;    /* 0 = no process */
        uint64_t proc_start;  /* /proc/<pid>/stat field 22 (starttime, clock ticks after boot):
                               * re-adopt a pid only if it still matches */
        int exit_code;        /* -1 = none */
        int signal;           /* 0 = none */
        int64_t submitted_ms; /* 0 on insert = now */
        int64_t started_ms, ended_ms; /* 0 = not yet */
        unsigned preemptions, restarts;
        char reason_code[KERF_STORE_WORD_LEN]; /* kerf_why_name(), "" = none */
        uint64_t reason_task;                  /* the other task of the reason, 0 = none */
        char reason_text[KERF_TEXT_LEN];
        int64_t lease_expiry_ms;        /* attached tasks; 0 = no lease */
        char held[KERF_STORE_WORD_LEN]; /* who holds it pending: "" none, "admin", "tenant" (6) */
} kerf_store_task;

/* Zeroes `t` and sets uid/gid -1 and exit_code -1. */
void kerf_store_task_init(kerf_store_task *t);
/* Frees the heap strings of a task filled by the store and re-inits it. Accepts NULL. */
void kerf_store_task_fini(kerf_store_task *t);

/* Inserts a new task (all fields). -EEXIST if the id exists, -EINVAL on a bad field (id 0,
 * empty tenant/state, request_json NULL). submitted_ms 0 is replaced by now (also in *t). */
KERF_STORE_MUST int kerf_store_task_insert(kerf_store *s, kerf_store_task *t);
/* Updates the mutable fields of task t->id: state, end_reason, route, cwd, log paths, uid, gid,
 * pid, pgid, proc_start, exit_code, signal, started/ended ms, preemptions, restarts, reason_*,
 * lease_expiry_ms, held, and request_json when it is not NULL (an update of a pending task:
 * docs/API.md "PATCH /v1/tasks/{id}"). tenant, queue, name, argv/env JSON and submitted_ms
 * are fixed at insert and ignored here. -ENOENT if no such task. */
KERF_STORE_MUST int kerf_store_task_update(kerf_store *s, const kerf_store_task *t);
/* Sets only the lease expiry of task `id`. -ENOENT if none. */
KERF_STORE_MUST int kerf_store_task_lease_set(kerf_store *s, uint64_t id, int64_t expiry_ms);
/* Reads task `id` into *ret (release with kerf_store_task_fini). -ENOENT if none. */
KERF_STORE_MUST int kerf_store_task_get(kerf_store *s, uint64_t id, kerf_store_task *ret);

typedef struct kerf_store_task_filter {
        const char *tenant; /* NULL = any */
        const char *state;  /* NULL = any */
        const char *queue;  /* NULL = any */
        bool unfinished;    /* only tasks with ended_ms == 0 */
        uint64_t after;     /* keyset cursor: only ids > after */
        unsigned limit;     /* list: 0 = 100, at most KERF_STORE_LIST_MAX; foreach: 0 = all */
} kerf_store_task_filter;

/* Lists tasks matching `f` (NULL = all) in id order. On success *ret_tasks is a heap array of
 * *ret_n tasks (release with kerf_store_task_list_free) and *ret_next is the cursor for the
 * next page (the last id returned) or 0 when there are no more. */
KERF_STORE_MUST int kerf_store_task_list(kerf_store *s, const kerf_store_task_filter *f,
                                         kerf_store_task **ret_tasks, size_t *ret_n,
                                         uint64_t *ret_next);
void kerf_store_task_list_free(kerf_store_task *tasks, size_t n);

/* Calls cb for every task matching `f` (NULL = all) in id order: the fast path for recovery
 * (100,000 tasks in well under a second). The task and its strings are borrowed, valid only
 * during the call. A non-zero return from cb stops the walk and is returned. Do not call other
 * store functions on `s` from cb. */
typedef int (*kerf_store_task_cb)(const kerf_store_task *t, void *userdata);
KERF_STORE_MUST int kerf_store_task_foreach(kerf_store *s, const kerf_store_task_filter *f,
                                            kerf_store_task_cb cb, void *userdata);
/* Number of tasks matching `f` with ids above f->after (limit ignored). */
KERF_STORE_MUST int kerf_store_task_count(kerf_store *s, const kerf_store_task_filter *f,
                                          uint64_t *ret_count);

/* ---- members of attached tasks (schema 7) ------------------------------------------------- */

/* A process that joined an attached task (POST /v1/tasks/{id}/join, docs/API.md): the task's
 * first process is its own pid field; each further one is a member row. */
typedef struct kerf_store_member {
        uint64_t task;       /* the attached task (must exist in tasks) */
        int64_t pid;         /* > 0 */
        uint64_t proc_start; /* /proc/<pid>/stat field 22: recovery matches it */
} kerf_store_member;

/* Adds member m->pid to task m->task. -EINVAL (task 0, pid <= 0), -ENOENT (no such task),
 * -EEXIST (that pid is already a member of it). */
KERF_STORE_MUST int kerf_store_member_add(kerf_store *s, const kerf_store_member *m);
/* Removes member `pid` of task `task`, or every member of the task when pid is 0. Removing
 * what is not there is not an error (returns 0). */
KERF_STORE_MUST int kerf_store_member_delete(kerf_store *s, uint64_t task, int64_t pid);
/* The members of task `task` in the order they joined. *ret is a heap array (free()); *ret_n
 * may be 0 (*ret NULL then). */
KERF_STORE_MUST int kerf_store_member_list(kerf_store *s, uint64_t task, kerf_store_member **ret,
                                           size_t *ret_n);

/* ---- drained GPUs (schema 6) ------------------------------------------------------------- */

/* A GPU an admin drained (docs/DAEMON.md "Draining a GPU"): kept across restarts by UUID. */
typedef struct kerf_store_drain {
        char gpu_uuid[KERF_UUID_LEN];
        char actor[KERF_NAME_LEN];
        char reason[KERF_TEXT_LEN];
        int64_t since_ms;
} kerf_store_drain;

/* Records (or replaces) the drain of d->gpu_uuid. -EINVAL on an empty UUID or a field too
 * long. */
KERF_STORE_MUST int kerf_store_drain_set(kerf_store *s, const kerf_store_drain *d);
/* Forgets the drain of `gpu_uuid`: 0, or -ENOENT when it was not drained. */
KERF_STORE_MUST int kerf_store_drain_clear(kerf_store *s, const char *gpu_uuid);
/* Every drain, by UUID. *ret is a heap array (free()); *ret_n may be 0 (*ret NULL then). */
KERF_STORE_MUST int kerf_store_drain_list(kerf_store *s, kerf_store_drain **ret, size_t *ret_n);

/* ---- units --------------------------------------------------------------------------------- */

typedef struct kerf_store_unit {
        uint64_t id;                    /* > 0, the scheduler's unit id */
        uint64_t task;                  /* holding task, 0 = none (must exist in tasks otherwise) */
        char kind[KERF_STORE_WORD_LEN]; /* whole mig slice mps tslice */
        char state[KERF_STORE_WORD_LEN]; /* creating ready assigned destroying fault */
        int gpu;                         /* fleet GPU index */
        char gpu_uuid[KERF_UUID_LEN];
        uint64_t mem_bytes;
        unsigned compute_pct, compute_limit_pct;
        char mig_profile[KERF_STORE_WORD_LEN]; /* "" unless MIG */
        int mig_gi, mig_ci, mig_start;         /* -1 unless MIG */
        char mig_uuid[KERF_UUID_LEN];
} kerf_store_unit;

/* Zeroes `u` and sets mig_gi/mig_ci/mig_start to -1. */
void kerf_store_unit_init(kerf_store_unit *u);
/* Inserts or replaces unit u->id. -EINVAL on a bad field, -ENOENT if u->task names no task. */
KERF_STORE_MUST int kerf_store_unit_upsert(kerf_store *s, const kerf_store_unit *u);
/* -ENOENT if no such unit. */
KERF_STORE_MUST int kerf_store_unit_delete(kerf_store *s, uint64_t id);
KERF_STORE_MUST int kerf_store_unit_get(kerf_store *s, uint64_t id, kerf_store_unit *ret);
/* All units (task == 0) or the units of one task, in id order. *ret_units is a heap array
 * (free()); *ret_n may be 0 (then *ret_units is NULL). */
KERF_STORE_MUST int kerf_store_unit_list(kerf_store *s, uint64_t task, kerf_store_unit **ret_units,
                                         size_t *ret_n);

/* ---- tenants -------------------------------------------------------------------------------- */

typedef struct kerf_store_tenant {
        char name[KERF_NAME_LEN];
        char cohort[KERF_NAME_LEN]; /* "" = none */
        unsigned weight;
        uint64_t nominal[KERF_RES_COUNT]; /* KERF_UNLIMITED = no cap (stored as NULL) */
        uint64_t borrow_limit[KERF_RES_COUNT];
        uint64_t lend_limit[KERF_RES_COUNT];
        int64_t uid, gid; /* -1 = not set */
        /* ceilings (schema 2); "not set" (stored as NULL): the daemon's defaults apply */
        bool has_max_priority;
        int max_priority;
        int max_tier;        /* -1 = not set, else a kerf_tier */
        int64_t max_pending; /* -1 = not set */
        unsigned workloads;  /* bit per kerf_workload, 0 = all */
} kerf_store_tenant;

/* Sets `name`, weight 1, unlimited quotas, uid/gid -1, no ceilings. -EINVAL if name is too
 * long. */
int kerf_store_tenant_init(kerf_store_tenant *t, const char *name);
/* Inserts or replaces a tenant (its quotas with it). -EINVAL on an empty name. */
KERF_STORE_MUST int kerf_store_tenant_upsert(kerf_store *s, const kerf_store_tenant *t);
KERF_STORE_MUST int kerf_store_tenant_get(kerf_store *s, const char *name, kerf_store_tenant *ret);
/* All tenants by name; heap array (free()). */
KERF_STORE_MUST int kerf_store_tenant_list(kerf_store *s, kerf_store_tenant **ret_tenants,
                                           size_t *ret_n);
/* -ENOENT if absent, -KERF_EINUSE if tasks refer to it. Its tokens go with it. */
KERF_STORE_MUST int kerf_store_tenant_delete(kerf_store *s, const char *name);

/* ---- tokens --------------------------------------------------------------------------------- */

/* Tokens are "kerf_" + 32 random bytes (base64url). Only a keyed BLAKE2b-256 of the token is
 * stored (the key is a random per-database secret in the meta table); see docs/STATE.md. */
typedef struct kerf_store_token {
        uint64_t id;
        char tenant[KERF_NAME_LEN];
        char label[KERF_NAME_LEN];
        char prefix[16]; /* first characters of the token, to recognise it in listings */
        int64_t created_ms;
        int64_t revoked_ms; /* 0 = valid */
} kerf_store_token;

/* Creates a token for `tenant` (must exist, else -ENOENT); `label` may be NULL. Writes the new
 * id and the token itself (shown once, never stored) to ret_token. */
KERF_STORE_MUST int kerf_store_token_create(kerf_store *s, const char *tenant, const char *label,
                                            int64_t now_ms, uint64_t *ret_id,
                                            char ret_token[KERF_STORE_TOKEN_LEN]);
/* Checks a presented token: 0 and the tenant (and token id; ret_id may be NULL) if it is valid
 * and not revoked; -KERF_EPERM otherwise (malformed, unknown or revoked). One BLAKE2b and one
 * indexed lookup: > 100,000 verifies/s. */
KERF_STORE_MUST int kerf_store_token_verify(kerf_store *s, const char *token,
                                            char ret_tenant[KERF_NAME_LEN], uint64_t *ret_id);
/* Revokes token `id` of `tenant` (NULL = any tenant). -ENOENT if none (or already revoked). */
KERF_STORE_MUST int kerf_store_token_revoke(kerf_store *s, const char *tenant, uint64_t id,
                                            int64_t now_ms);
/* Tokens of `tenant` (NULL = all), by id; heap array (free()). */
KERF_STORE_MUST int kerf_store_token_list(kerf_store *s, const char *tenant,
                                          kerf_store_token **ret_tokens, size_t *ret_n);

/* ---- events --------------------------------------------------------------------------------- */

typedef struct kerf_store_event {
        uint64_t id;                    /* assigned by append */
        int64_t time_ms;                /* 0 on append = now */
        char kind[KERF_STORE_WORD_LEN]; /* xid, fault, mig_create, preempt, reclaim, ... */
        int gpu;                        /* -1 = none */
        uint64_t unit, task;            /* 0 = none */
        int xid;                        /* 0 = none */
        char class[KERF_STORE_WORD_LEN];
        char text[KERF_TEXT_LEN];
} kerf_store_event;

/* Appends an event; writes its id (and time, when 0) back into *e. */
KERF_STORE_MUST int kerf_store_event_append(kerf_store *s, kerf_store_event *e);
/* Events with id > after (task != 0: of that task only), in id order, at most limit (0 = 100).
 * Heap array (free()); *ret_next as for kerf_store_task_list. */
KERF_STORE_MUST int kerf_store_event_list(kerf_store *s, uint64_t task, uint64_t after,
                                          unsigned limit, kerf_store_event **ret_events,
                                          size_t *ret_n, uint64_t *ret_next);

/* ---- runs: what each task held and for how long (cost) ------------------------------------ */

/* One run of a task: from a start on its units to the end of that start (an exit, a
 * cancel, a preemption, a fault). A preempted and restarted task has one run per start.
 * Words are the daemon's (docs/STATE.md "Runs and cost"); the store does not interpret them. */
typedef struct kerf_store_run {
        uint64_t id;   /* assigned by kerf_store_run_open */
        uint64_t task; /* must exist in tasks */
        char tenant[KERF_NAME_LEN];
        char route[KERF_STORE_WORD_LEN];     /* software | hardware | whole */
        char unit_kind[KERF_STORE_WORD_LEN]; /* whole | mig | slice | mps | tslice */
        unsigned units;                      /* how many units (GPUs) the run held */
        double fraction;                     /* of one GPU, summed over its units, > 0 */
        int64_t started_ms;
        int64_t ended_ms; /* 0 = still open */
        int64_t used_ns;  /* device time measured over the run; -1 = not measured */
} kerf_store_run;

/* Opens a run of r->task, or, when that task has an open run already (a start recorded
 * twice, a re-adoption after a restart), updates its tenant/route/kind/units/fraction. A new
 * run starts at r->started_ms, but never before the end of the task's previous run (a task
 * resumed in place keeps its first start time). Writes the run's id into r->id.
 * -EINVAL on a bad field (task 0, fraction <= 0, empty kind), -ENOENT if no such task. */
KERF_STORE_MUST int kerf_store_run_open(kerf_store *s, kerf_store_run *r);
/* Closes the open run of `task` (if any) at end_ms (never before its start) with the measured
 * device time used_ns (-1 = not measured). 0 also when no run was open. */
KERF_STORE_MUST int kerf_store_run_close(kerf_store *s, uint64_t task, int64_t end_ms,
                                         int64_t used_ns);
/* Closes every open run whose task has ended (tasks.ended_ms != 0) at that end: recovery's
 * sweep for an end written without its run. *ret_n (may be NULL) = how many it closed. */
KERF_STORE_MUST int kerf_store_run_close_ended(kerf_store *s, unsigned *ret_n);
/* Calls cb for every run that overlaps [from_ms, to_ms) (open runs count as running on), of
 * `tenant` only unless it is NULL or "", in id order. The run is borrowed for the call; a
 * negative result from cb stops the walk and is returned. */
typedef int (*kerf_store_run_cb)(const kerf_store_run *r, void *userdata);
KERF_STORE_MUST int kerf_store_run_foreach(kerf_store *s, const char *tenant, int64_t from_ms,
                                           int64_t to_ms, kerf_store_run_cb cb, void *userdata);

/* ---- retention (schema 5; docs/STATE.md "Retention") ---------------------------------------- */

/* An ended task whose files retention may still have to handle. Paths are heap (NULL = none). */
typedef struct kerf_store_gc_item {
        uint64_t id;
        int64_t ended_ms;
        char *log_stdout, *log_stderr;
        int64_t logs_gone_ms, work_gone_ms; /* 0 = not removed yet */
        bool logs_capped;                   /* checked against max_log_bytes already */
} kerf_store_gc_item;

/* Ended tasks (ended_ms > 0) with id > after whose logs or work dir are not recorded removed
 * or whose logs were not checked against the cap yet, in id order, at most `limit` (1..10000).
 * Heap array: free with kerf_store_gc_items_free. */
KERF_STORE_MUST int kerf_store_gc_items(kerf_store *s, uint64_t after, unsigned limit,
                                        kerf_store_gc_item **ret_items, size_t *ret_n);
void kerf_store_gc_items_free(kerf_store_gc_item *items, size_t n);
/* Records what retention did to task `id`: logs_gone_ms / work_gone_ms (0 = leave as is),
 * capped (true = logs checked against the cap). Only for an ended task: -ENOENT otherwise. */
KERF_STORE_MUST int kerf_store_gc_mark(kerf_store *s, uint64_t id, int64_t logs_gone_ms,
                                       int64_t work_gone_ms, bool capped);
/* When task id's logs and work dir were removed by retention (0 = not), -ENOENT if no task. */
KERF_STORE_MUST int kerf_store_gc_gone(kerf_store *s, uint64_t id, int64_t *ret_logs_ms,
                                       int64_t *ret_work_ms);
/* Deletes task rows ended at or before `before_ms` whose logs and work dir are recorded removed
 * and that no unit row names, at most `limit`; never runs, events or audit records. *ret_n =
 * rows deleted, *ret_oldest (may be NULL) = the oldest ended_ms deleted (0 = none). With
 * dry_run nothing is deleted and the counts are what would be. */
KERF_STORE_MUST int kerf_store_gc_tasks(kerf_store *s, int64_t before_ms, unsigned limit,
                                        bool dry_run, unsigned *ret_n, int64_t *ret_oldest);

/* ---- ids --------------------------------------------------------------------------------------
 */

/* The largest task, unit and event id stored (0 when none): restarted kerfd continues above. */
KERF_STORE_MUST int kerf_store_max_ids(kerf_store *s, uint64_t *ret_task, uint64_t *ret_unit,
                                       uint64_t *ret_event);

/* ---- audit -------------------------------------------------------------------------------------
 */

/* One audit record. The caller fills time_ms (0 = now), actor ("uid:0", "tenant:serving"),
 * tenant ("" = none), action ("task.submit"), object ("task:12"), result ("ok", "denied",
 * "error"), reason, gpu_uuid and the versions (empty = those of kerf_store_set_versions);
 * append assigns seq, prev_hash and hash. hash = BLAKE2b-256 (hex) over the canonical encoding
 * of every other field including prev_hash (docs/STATE.md). The first record's prev_hash is 64
 * zeros. */
typedef struct kerf_store_audit {
        uint64_t seq;
        int64_t time_ms;
        char actor[KERF_NAME_LEN + 16];
        char tenant[KERF_NAME_LEN];
        char action[KERF_NAME_LEN];
        char object[KERF_STORE_OBJ_LEN];
        char result[KERF_STORE_WORD_LEN];
        char reason[KERF_TEXT_LEN];
        char gpu_uuid[KERF_UUID_LEN];
        char driver[KERF_STORE_VER_LEN];
        char cuda[KERF_STORE_VER_LEN];
        char kerf[KERF_STORE_VER_LEN];
        /* the node that wrote it (kerfd's node_name; "" in records older than schema 4). Hashed
         * only when set, so records written before it was kept verify unchanged. */
        char node[KERF_NAME_LEN];
        char prev_hash[KERF_STORE_HASH_HEX];
        char hash[KERF_STORE_HASH_HEX];
} kerf_store_audit;

/* Appends `r` to the chain (in the caller's transaction, or its own), writing seq, time_ms,
 * versions, prev_hash and hash back into *r. -EINVAL if actor/action/object/result is empty. */
KERF_STORE_MUST int kerf_store_audit_append(kerf_store *s, kerf_store_audit *r);
/* Records with seq > after of `tenant` (NULL = all), in seq order, at most limit (0 = 100).
 * Heap array (free()); *ret_next as for kerf_store_task_list. */
KERF_STORE_MUST int kerf_store_audit_list(kerf_store *s, const char *tenant, uint64_t after,
                                          unsigned limit, kerf_store_audit **ret_records,
                                          size_t *ret_n, uint64_t *ret_next);
/* Writes records of `tenant` (NULL = all) with seq > after as JSON Lines to `out`, one object
 * per line with the fields of docs/API.md. Returns the number written, or -EIO on a write
 * error. */
KERF_STORE_MUST int kerf_store_audit_export(kerf_store *s, const char *tenant, uint64_t after,
                                            FILE *out);
/* One record as a JSON object text (heap, free()); NULL on allocation failure. */
char *kerf_store_audit_json(const kerf_store_audit *r);
/* The chain head: number of records and the last hash (64 zeros when empty). Export it to an
 * external anchor (a log, a ticket) to make a full rewrite of the chain detectable. */
KERF_STORE_MUST int kerf_store_audit_head(kerf_store *s, uint64_t *ret_count,
                                          char ret_hash[KERF_STORE_HASH_HEX]);

typedef struct kerf_store_audit_report {
        bool ok;
        uint64_t records;   /* records walked */
        uint64_t first_bad; /* seq of the first bad record (or where the break is); 0 if ok */
        char problem[KERF_TEXT_LEN]; /* "" if ok, else what is wrong, in words */
} kerf_store_audit_report;

/* Walks the whole chain: seq continuity from 1, each prev_hash against the previous hash, each
 * hash recomputed, and the head row (count + last hash). Returns 0 with ret->ok false when the
 * chain is damaged (the report says where and how); < 0 only when it could not be read. */
KERF_STORE_MUST int kerf_store_audit_verify(kerf_store *s, kerf_store_audit_report *ret);

/* Recomputes the hash of `r` from its fields (its own hash field is ignored). */
void kerf_store_audit_hash(const kerf_store_audit *r, char ret_hash[KERF_STORE_HASH_HEX]);

/* ---- anchors: the chain head outside the database (docs/STATE.md "Checkpoints") ----------- */

/* A signed statement "the chain had `seq` records and record `seq` had hash `hash`", made by
 * kerfd with its Ed25519 key (state dir audit.key, 0600; public half audit.pub). Kept outside
 * the database (a file the operator keeps, an external log), it makes truncating or rewriting
 * the chain up to seq detectable even by someone who can edit the whole database. */
#define KERF_STORE_PK_HEX  65  /* Ed25519 public key, hex */
#define KERF_STORE_SIG_HEX 129 /* Ed25519 signature, hex */
typedef struct kerf_store_checkpoint {
        uint64_t seq;                   /* records in the chain (the last seq); 0 = empty */
        char hash[KERF_STORE_HASH_HEX]; /* hash of record seq (64 zeros when seq is 0) */
        int64_t time_ms;
        char public_key[KERF_STORE_PK_HEX];
        char signature[KERF_STORE_SIG_HEX];
} kerf_store_checkpoint;

/* Loads the Ed25519 key pair at `key_path` (64-byte secret key, hex, one line), creating it
 * 0600 when absent and `create`; writes the public key as hex (may be NULL). -ENOENT when
 * absent and not create, -EPERM when the file is not private (group/other bits, not ours),
 * -KERF_ECORRUPT when malformed. */
KERF_STORE_MUST int kerf_store_anchor_key(const char *key_path, bool create,
                                          char ret_public[KERF_STORE_PK_HEX]);
/* Signs the current head of `s` with the key at key_path (created when absent). */
KERF_STORE_MUST int kerf_store_checkpoint_make(kerf_store *s, const char *key_path, int64_t now_ms,
                                               kerf_store_checkpoint *ret);
/* The checkpoint as one JSON object text (heap, free()); NULL on allocation failure. */
KERF_STORE_MUST char *kerf_store_checkpoint_json(const kerf_store_checkpoint *cp);
/* Parses a checkpoint (the JSON above) and checks its signature; when `public_key` is not
 * NULL the checkpoint must also be signed by that key (hex). -EINVAL malformed (err says
 * why), -KERF_EPERM bad signature or another key. */
KERF_STORE_MUST int kerf_store_checkpoint_parse(const char *text, const char *public_key,
                                                kerf_store_checkpoint *ret, char *err,
                                                size_t errlen);
/* Verifies an `audit export` file (JSON Lines of the whole chain) without a database: seq
 * continuity from 1, each prev_hash, each recomputed hash; with `cp` (may be NULL) also that
 * the chain still holds record cp->seq with hash cp->hash (fewer records: truncated; another
 * hash: rewritten). 0 with ret->ok false when it does not verify; < 0 when unreadable. */
KERF_STORE_MUST int kerf_store_audit_verify_file(FILE *in, const kerf_store_checkpoint *cp,
                                                 kerf_store_audit_report *ret);

#endif /* KERF_STORE_H */
