/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h - private state and helpers shared by the files of src/store */
#ifndef KERF_STORE_INTERNAL_H
#define KERF_STORE_INTERNAL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "kerf/store.h"

/* Prepared statements kept for the life of the handle, prepared on first use. */
enum {
        ST_BEGIN = 0,
        ST_COMMIT,
        ST_ROLLBACK,
        ST_SAVEPOINT,
        ST_RELEASE,
        ST_ROLLBACK_TO,
        ST_META_GET,
        ST_META_SET,
        ST_TASK_INSERT,
        ST_TASK_UPDATE,
        ST_TASK_LEASE,
        ST_TASK_GET,
        ST_UNIT_UPSERT,
        ST_UNIT_DELETE,
        ST_UNIT_GET,
        ST_UNIT_LIST_ALL,
        ST_UNIT_LIST_TASK,
        ST_TENANT_UPSERT,
        ST_TENANT_GET,
        ST_TENANT_LIST,
        ST_TENANT_DELETE,
        ST_TENANT_TASKS,
        ST_QUOTA_DELETE,
        ST_QUOTA_INSERT,
        ST_QUOTA_GET,
        ST_TOKEN_INSERT,
        ST_TOKEN_VERIFY,
        ST_TOKEN_REVOKE,
        ST_TOKEN_REVOKE_ANY,
        ST_TOKEN_LIST,
        ST_TOKEN_LIST_ALL,
        ST_EVENT_INSERT,
        ST_EVENT_LIST,
        ST_EVENT_LIST_TASK,
        ST_MAX_IDS,
        ST_RUN_UPDATE_OPEN,
        ST_RUN_LAST_END,
        ST_RUN_INSERT,
        ST_RUN_CLOSE,
        ST_RUN_CLOSE_ENDED,
        ST_RUN_PERIOD,
        ST_AUDIT_HEAD,
        ST_AUDIT_INSERT,
        ST_AUDIT_HEAD_SET,
        ST_AUDIT_LIST,
        ST_AUDIT_LIST_TENANT,
        ST_AUDIT_ALL,
        ST_COUNT
};

/* Task list/foreach statements, one per combination of filter fields (bit 0 tenant, 1 state,
 * 2 queue, 3 unfinished) so that each uses its index. */
#define TASK_QUERY_VARIANTS 16

struct kerf_store {
        sqlite3 *db;
        sqlite3_stmt *st[ST_COUNT];
        sqlite3_stmt *task_q[TASK_QUERY_VARIANTS];
        bool in_tx;
        bool sp_own; /* kerf__sp_begin opened a transaction of its own */
        bool read_only;
        int schema;
        unsigned char token_key[32];
        char driver[KERF_STORE_VER_LEN];
        char cuda[KERF_STORE_VER_LEN];
        char kerf[KERF_STORE_VER_LEN];
        char node[KERF_NAME_LEN]; /* kerf_store_set_node */
        /* failure injection (kerf_store_fail_set): off when fail_op[0] == 0 */
        char fail_op[24];
        char fail_file[256];
        unsigned long fail_nth, fail_count, fail_calls;
};

extern const char *const kerf__migrations[];
extern const int kerf__n_migrations;
extern const char *const kerf__sql[ST_COUNT];
extern const char *const kerf__task_cols;

/* The statement `id`, reset and with its bindings cleared; NULL when preparing failed. */
sqlite3_stmt *kerf__stmt(kerf_store *s, int id);
/* Maps an SQLite result code to -errno / -KERF_E*. */
int kerf__sqlerr(int rc);
/* Opens / releases / rolls back the savepoint that makes a multi-statement call atomic when
 * it runs outside the caller's transaction. */
int kerf__sp_begin(kerf_store *s);
int kerf__sp_end(kerf_store *s, int r);
/* The failure injection point of write operation `op`: -EIO when kerf_store_fail_set says
 * this call fails, else 0. Costs one byte compare when injection is off. */
int kerf__failpoint(kerf_store *s, const char *op);
#define KERF__FAILPOINT(s, op)                                                                     \
        do {                                                                                       \
                if ((s)->fail_op[0] && kerf__failpoint((s), (op)) < 0)                             \
                        return -EIO;                                                               \
        } while (0)
/* BLAKE2b-256 of an audit record's canonical encoding (audit.c). */
void kerf__audit_hash(const kerf_store_audit *r, char out[KERF_STORE_HASH_HEX]);
/* One link of the chain (audit.c): r's prev_hash is `prev` and its recomputed hash its stored
 * one; false with rep filled (ok, first_bad, problem) otherwise. Both verifiers use it. */
bool kerf__audit_linked(const kerf_store_audit *r, const char *prev, kerf_store_audit_report *rep);
/* Milliseconds since the epoch now; or `ms` when it is non-zero. */
int64_t kerf__now_ms(int64_t ms);
/* Copies `src` (NULL = "") into dst[len]; -EINVAL if it does not fit. */
int kerf__cpy(char *dst, size_t len, const char *src);
/* Copies column `col` (NULL = "") into dst[len], truncating. */
void kerf__col_cpy(sqlite3_stmt *st, int col, char *dst, size_t len);
/* Heap copy of column `col`, NULL when SQL NULL; *ok = false on allocation failure. */
char *kerf__col_dup(sqlite3_stmt *st, int col, bool *ok);
/* Binds a text that may be NULL (NULL -> SQL NULL). */
int kerf__bind_text(sqlite3_stmt *st, int idx, const char *v);
/* Prepares `sql` for one use (rare writes: drains, members): 0 and *ret (sqlite3_finalize it),
 * or an error. */
int kerf__prep(kerf_store *s, const char *sql, sqlite3_stmt **ret);
/* Steps a statement that returns no rows; 0 or an error. */
int kerf__exec_stmt(sqlite3_stmt *st);
/* Runs the statement of a list query (limit+1 rows), growing an array of `size`-byte items
 * filled by `fill`. */
typedef int (*kerf__row_fn)(sqlite3_stmt *st, void *item);
int kerf__collect(sqlite3_stmt *st, size_t size, unsigned limit, kerf__row_fn fill, void **ret,
                  size_t *ret_n, uint64_t *ret_next);
unsigned kerf__limit(unsigned limit);

#endif /* KERF_STORE_INTERNAL_H */
