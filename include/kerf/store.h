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

#define KERF_STORE_SCHEMA_VERSION 2
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
int kerf_store_open(const char *path, const kerf_store_opts *opts, kerf_store **ret, char *err,
                    size_t errlen);
/* Closes the handle (rolling back an open transaction). Accepts NULL; returns NULL. */
kerf_store *kerf_store_close(kerf_store *s);
/* SQLite's message for the last failed call on `s` (static until the next call). */
const char *kerf_store_errmsg(const kerf_store *s);
/* The schema version of the open database. */
int kerf_store_schema_version(const kerf_store *s);

/* Versions stamped on audit records that leave theirs empty (kerfd sets them at start and
 * after a driver change). Strings are copied; NULL leaves a value unchanged. -EINVAL if long. */
int kerf_store_set_versions(kerf_store *s, const char *driver, const char *cuda, const char *kerf);

/* ---- transactions ------------------------------------------------------------------------ */

/* Every state change commits together with its audit record:
 *     kerf_store_begin(s);
 *     kerf_store_task_insert(s, &t);  kerf_store_audit_append(s, &rec);
 *     kerf_store_commit(s);           (or kerf_store_rollback(s) on any error)
 * begin takes the write lock at once (BEGIN IMMEDIATE). Calls outside a transaction commit by
 * themselves. Several changes in one transaction are a group commit (one WAL sync).
 * begin inside a transaction, or commit/rollback outside one: -KERF_ESTATE. A failed commit
 * rolls back. */
int kerf_store_begin(kerf_store *s);
int kerf_store_commit(kerf_store *s);
int kerf_store_rollback(kerf_store *s);
bool kerf_store_in_transaction(const kerf_store *s);

/* ---- meta: small key/value settings ------------------------------------------------------- */

/* Sets / reads a key (1..63 chars) in the meta table. Keys starting with "kerf." are reserved
 * for the store (-EINVAL). get: -ENOENT if absent; the value is truncated to fit `len`. */
int kerf_store_meta_set(kerf_store *s, const char *key, const char *value);
int kerf_store_meta_get(kerf_store *s, const char *key, char *ret_value, size_t len);

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
        int64_t lease_expiry_ms; /* attached tasks; 0 = no lease */
} kerf_store_task;

/* Zeroes `t` and sets uid/gid -1 and exit_code -1. */
void kerf_store_task_init(kerf_store_task *t);
/* Frees the heap strings of a task filled by the store and re-inits it. Accepts NULL. */
void kerf_store_task_fini(kerf_store_task *t);

/* Inserts a new task (all fields). -EEXIST if the id exists, -EINVAL on a bad field (id 0,
 * empty tenant/state, request_json NULL). submitted_ms 0 is replaced by now (also in *t). */
int kerf_store_task_insert(kerf_store *s, kerf_store_task *t);
/* Updates the mutable fields of task t->id: state, end_reason, route, cwd, log paths, uid, gid,
 * pid, pgid, proc_start, exit_code, signal, started/ended ms, preemptions, restarts, reason_*,
 * lease_expiry_ms. tenant, queue, name, request/argv/env JSON and submitted_ms are fixed at
 * insert and ignored here. -ENOENT if no such task. */
int kerf_store_task_update(kerf_store *s, const kerf_store_task *t);
/* Sets only the lease expiry of task `id`. -ENOENT if none. */
int kerf_store_task_lease_set(kerf_store *s, uint64_t id, int64_t expiry_ms);
/* Reads task `id` into *ret (release with kerf_store_task_fini). -ENOENT if none. */
int kerf_store_task_get(kerf_store *s, uint64_t id, kerf_store_task *ret);

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
int kerf_store_task_list(kerf_store *s, const kerf_store_task_filter *f,
                         kerf_store_task **ret_tasks, size_t *ret_n, uint64_t *ret_next);
void kerf_store_task_list_free(kerf_store_task *tasks, size_t n);

/* Calls cb for every task matching `f` (NULL = all) in id order: the fast path for recovery
 * (100,000 tasks in well under a second). The task and its strings are borrowed, valid only
 * during the call. A non-zero return from cb stops the walk and is returned. Do not call other
 * store functions on `s` from cb. */
typedef int (*kerf_store_task_cb)(const kerf_store_task *t, void *userdata);
int kerf_store_task_foreach(kerf_store *s, const kerf_store_task_filter *f, kerf_store_task_cb cb,
                            void *userdata);
/* Number of tasks matching `f` (after/limit ignored). */
int kerf_store_task_count(kerf_store *s, const kerf_store_task_filter *f, uint64_t *ret_count);

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
int kerf_store_unit_upsert(kerf_store *s, const kerf_store_unit *u);
/* -ENOENT if no such unit. */
int kerf_store_unit_delete(kerf_store *s, uint64_t id);
int kerf_store_unit_get(kerf_store *s, uint64_t id, kerf_store_unit *ret);
/* All units (task == 0) or the units of one task, in id order. *ret_units is a heap array
 * (free()); *ret_n may be 0 (then *ret_units is NULL). */
int kerf_store_unit_list(kerf_store *s, uint64_t task, kerf_store_unit **ret_units, size_t *ret_n);

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
int kerf_store_tenant_upsert(kerf_store *s, const kerf_store_tenant *t);
int kerf_store_tenant_get(kerf_store *s, const char *name, kerf_store_tenant *ret);
/* All tenants by name; heap array (free()). */
int kerf_store_tenant_list(kerf_store *s, kerf_store_tenant **ret_tenants, size_t *ret_n);
/* -ENOENT if absent, -KERF_EINUSE if tasks refer to it. Its tokens go with it. */
int kerf_store_tenant_delete(kerf_store *s, const char *name);

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
int kerf_store_token_create(kerf_store *s, const char *tenant, const char *label, int64_t now_ms,
                            uint64_t *ret_id, char ret_token[KERF_STORE_TOKEN_LEN]);
/* Checks a presented token: 0 and the tenant (and token id; ret_id may be NULL) if it is valid
 * and not revoked; -KERF_EPERM otherwise (malformed, unknown or revoked). One BLAKE2b and one
 * indexed lookup: > 100,000 verifies/s. */
int kerf_store_token_verify(kerf_store *s, const char *token, char ret_tenant[KERF_NAME_LEN],
                            uint64_t *ret_id);
/* Revokes token `id` of `tenant` (NULL = any tenant). -ENOENT if none (or already revoked). */
int kerf_store_token_revoke(kerf_store *s, const char *tenant, uint64_t id, int64_t now_ms);
/* Tokens of `tenant` (NULL = all), by id; heap array (free()). */
int kerf_store_token_list(kerf_store *s, const char *tenant, kerf_store_token **ret_tokens,
                          size_t *ret_n);

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
int kerf_store_event_append(kerf_store *s, kerf_store_event *e);
/* Events with id > after (task != 0: of that task only), in id order, at most limit (0 = 100).
 * Heap array (free()); *ret_next as for kerf_store_task_list. */
int kerf_store_event_list(kerf_store *s, uint64_t task, uint64_t after, unsigned limit,
                          kerf_store_event **ret_events, size_t *ret_n, uint64_t *ret_next);

/* ---- ids --------------------------------------------------------------------------------------
 */

/* The largest task, unit and event id stored (0 when none): restarted kerfd continues above. */
int kerf_store_max_ids(kerf_store *s, uint64_t *ret_task, uint64_t *ret_unit, uint64_t *ret_event);

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
        char prev_hash[KERF_STORE_HASH_HEX];
        char hash[KERF_STORE_HASH_HEX];
} kerf_store_audit;

/* Appends `r` to the chain (in the caller's transaction, or its own), writing seq, time_ms,
 * versions, prev_hash and hash back into *r. -EINVAL if actor/action/object/result is empty. */
int kerf_store_audit_append(kerf_store *s, kerf_store_audit *r);
/* Records with seq > after of `tenant` (NULL = all), in seq order, at most limit (0 = 100).
 * Heap array (free()); *ret_next as for kerf_store_task_list. */
int kerf_store_audit_list(kerf_store *s, const char *tenant, uint64_t after, unsigned limit,
                          kerf_store_audit **ret_records, size_t *ret_n, uint64_t *ret_next);
/* Writes records of `tenant` (NULL = all) with seq > after as JSON Lines to `out`, one object
 * per line with the fields of docs/API.md. Returns the number written, or -EIO on a write
 * error. */
int kerf_store_audit_export(kerf_store *s, const char *tenant, uint64_t after, FILE *out);
/* One record as a JSON object text (heap, free()); NULL on allocation failure. */
char *kerf_store_audit_json(const kerf_store_audit *r);
/* The chain head: number of records and the last hash (64 zeros when empty). Export it to an
 * external anchor (a log, a ticket) to make a full rewrite of the chain detectable. */
int kerf_store_audit_head(kerf_store *s, uint64_t *ret_count, char ret_hash[KERF_STORE_HASH_HEX]);

typedef struct kerf_store_audit_report {
        bool ok;
        uint64_t records;   /* records walked */
        uint64_t first_bad; /* seq of the first bad record (or where the break is); 0 if ok */
        char problem[KERF_TEXT_LEN]; /* "" if ok, else what is wrong, in words */
} kerf_store_audit_report;

/* Walks the whole chain: seq continuity from 1, each prev_hash against the previous hash, each
 * hash recomputed, and the head row (count + last hash). Returns 0 with ret->ok false when the
 * chain is damaged (the report says where and how); < 0 only when it could not be read. */
int kerf_store_audit_verify(kerf_store *s, kerf_store_audit_report *ret);

#endif /* KERF_STORE_H */
