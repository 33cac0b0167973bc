/* SPDX-License-Identifier: Apache-2.0 */
/* schema.c - the numbered forward migrations and the SQL of every kept statement */
#include <stddef.h>

#include "internal.h"

/* Migration N takes the schema from version N-1 to N. Never edit a released entry: append. */
const char *const kerf__migrations[] = {
    NULL, /* 0: empty database */
    /* 1: the first schema (docs/STATE.md) */
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
    " WITHOUT ROWID;"
    "CREATE TABLE tenants (name TEXT PRIMARY KEY, cohort TEXT NOT NULL DEFAULT '',"
    " weight INTEGER NOT NULL DEFAULT 1, uid INTEGER NOT NULL DEFAULT -1,"
    " gid INTEGER NOT NULL DEFAULT -1) WITHOUT ROWID;"
    "CREATE TABLE tenant_quotas (tenant TEXT NOT NULL REFERENCES tenants(name)"
    " ON DELETE CASCADE, resource TEXT NOT NULL, nominal INTEGER, borrow_limit INTEGER,"
    " lend_limit INTEGER, PRIMARY KEY (tenant, resource)) WITHOUT ROWID;"
    "CREATE TABLE tokens (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL REFERENCES"
    " tenants(name) ON DELETE CASCADE, hash BLOB NOT NULL UNIQUE, prefix TEXT NOT NULL,"
    " label TEXT NOT NULL DEFAULT '', created_ms INTEGER NOT NULL,"
    " revoked_ms INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX tokens_tenant ON tokens(tenant, id);"
    "CREATE TABLE tasks (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL REFERENCES"
    " tenants(name), queue TEXT NOT NULL, name TEXT NOT NULL DEFAULT '',"
    " state TEXT NOT NULL, end_reason TEXT NOT NULL DEFAULT '',"
    " route TEXT NOT NULL DEFAULT '', request TEXT NOT NULL, argv TEXT, env TEXT, cwd TEXT,"
    " log_stdout TEXT, log_stderr TEXT, uid INTEGER NOT NULL, gid INTEGER NOT NULL,"
    " pid INTEGER NOT NULL, pgid INTEGER NOT NULL, proc_start INTEGER NOT NULL,"
    " exit_code INTEGER NOT NULL, signal INTEGER NOT NULL, submitted_ms INTEGER NOT NULL,"
    " started_ms INTEGER NOT NULL, ended_ms INTEGER NOT NULL,"
    " preemptions INTEGER NOT NULL, restarts INTEGER NOT NULL,"
    " reason_code TEXT NOT NULL DEFAULT '', reason_task INTEGER NOT NULL DEFAULT 0,"
    " reason_text TEXT NOT NULL DEFAULT '', lease_expiry_ms INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX tasks_tenant ON tasks(tenant, id);"
    "CREATE INDEX tasks_tenant_state ON tasks(tenant, state, id);"
    "CREATE INDEX tasks_state ON tasks(state, id);"
    "CREATE INDEX tasks_queue ON tasks(queue, id);"
    "CREATE INDEX tasks_unfinished ON tasks(id) WHERE ended_ms = 0;"
    "CREATE TABLE units (id INTEGER PRIMARY KEY, task INTEGER REFERENCES tasks(id),"
    " kind TEXT NOT NULL, state TEXT NOT NULL, gpu INTEGER NOT NULL,"
    " gpu_uuid TEXT NOT NULL DEFAULT '', mem_bytes INTEGER NOT NULL,"
    " compute INTEGER NOT NULL, compute_limit INTEGER NOT NULL,"
    " mig_profile TEXT NOT NULL DEFAULT '', mig_gi INTEGER NOT NULL DEFAULT -1,"
    " mig_ci INTEGER NOT NULL DEFAULT -1, mig_start INTEGER NOT NULL DEFAULT -1,"
    " mig_uuid TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX units_task ON units(task);"
    "CREATE TABLE events (id INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL,"
    " kind TEXT NOT NULL, gpu INTEGER NOT NULL, unit INTEGER NOT NULL,"
    " task INTEGER NOT NULL, xid INTEGER NOT NULL, class TEXT NOT NULL,"
    " text TEXT NOT NULL);"
    "CREATE INDEX events_task ON events(task, id);"
    "CREATE TABLE audit (seq INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL,"
    " actor TEXT NOT NULL, tenant TEXT NOT NULL, action TEXT NOT NULL,"
    " object TEXT NOT NULL, result TEXT NOT NULL, reason TEXT NOT NULL,"
    " gpu_uuid TEXT NOT NULL, driver TEXT NOT NULL, cuda TEXT NOT NULL,"
    " kerf TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL);"
    "CREATE INDEX audit_tenant ON audit(tenant, seq);"
    "CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit"
    " BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;"
    "CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit"
    " BEGIN SELECT RAISE(ABORT, 'audit is append-only'); END;"
    "CREATE TABLE audit_head (id INTEGER PRIMARY KEY CHECK (id = 1),"
    " count INTEGER NOT NULL, last_seq INTEGER NOT NULL, hash TEXT NOT NULL);"
    "INSERT INTO audit_head VALUES (1, 0, 0,"
    " '0000000000000000000000000000000000000000000000000000000000000000');",
    /* 2: per-tenant ceilings (docs/DAEMON.md "Tenant policy"); NULL = the daemon's default */
    "ALTER TABLE tenants ADD COLUMN max_priority INTEGER;"
    "ALTER TABLE tenants ADD COLUMN max_tier INTEGER;"
    "ALTER TABLE tenants ADD COLUMN max_pending INTEGER;"
    "ALTER TABLE tenants ADD COLUMN workloads INTEGER NOT NULL DEFAULT 0;",
    /* 3: one row per run of a task on its units, for cost (docs/STATE.md "Runs and cost") */
    "CREATE TABLE runs (id INTEGER PRIMARY KEY, task INTEGER NOT NULL REFERENCES tasks(id),"
    " tenant TEXT NOT NULL, route TEXT NOT NULL, unit_kind TEXT NOT NULL,"
    " units INTEGER NOT NULL, fraction REAL NOT NULL, started_ms INTEGER NOT NULL,"
    " ended_ms INTEGER NOT NULL DEFAULT 0, used_ns INTEGER);"
    "CREATE INDEX runs_task ON runs(task, id);"
    "CREATE INDEX runs_open ON runs(task) WHERE ended_ms = 0;"
    "CREATE INDEX runs_started ON runs(started_ms);",
    /* 4: the node that wrote an audit record (docs/STATE.md "Audit"); '' before */
    "ALTER TABLE audit ADD COLUMN node TEXT NOT NULL DEFAULT '';",
    /* 5: retention (docs/STATE.md "Retention"): when a task's logs / work dir were removed,
     * whether its logs were checked against max_log_bytes; runs rebuilt without the foreign
     * key on tasks, so that a run (a cost record) outlives a task row deleted by tasks_after */
    "ALTER TABLE tasks ADD COLUMN logs_gone_ms INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE tasks ADD COLUMN work_gone_ms INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE tasks ADD COLUMN logs_capped INTEGER NOT NULL DEFAULT 0;"
    "CREATE INDEX tasks_gc ON tasks(ended_ms) WHERE ended_ms > 0 AND"
    " (logs_gone_ms = 0 OR work_gone_ms = 0 OR logs_capped = 0);"
    "CREATE TABLE runs5 (id INTEGER PRIMARY KEY, task INTEGER NOT NULL,"
    " tenant TEXT NOT NULL, route TEXT NOT NULL, unit_kind TEXT NOT NULL,"
    " units INTEGER NOT NULL, fraction REAL NOT NULL, started_ms INTEGER NOT NULL,"
    " ended_ms INTEGER NOT NULL DEFAULT 0, used_ns INTEGER);"
    "INSERT INTO runs5 SELECT id, task, tenant, route, unit_kind, units, fraction,"
    " started_ms, ended_ms, used_ns FROM runs;"
    "DROP TABLE runs;"
    "ALTER TABLE runs5 RENAME TO runs;"
    "CREATE INDEX runs_task ON runs(task, id);"
    "CREATE INDEX runs_open ON runs(task) WHERE ended_ms = 0;"
    "CREATE INDEX runs_started ON runs(started_ms);",
    /* 6: holds of pending tasks and drained GPUs (docs/STATE.md "Holds and drains") */
    "ALTER TABLE tasks ADD COLUMN held TEXT NOT NULL DEFAULT '';"
    "CREATE TABLE gpu_drains (gpu_uuid TEXT PRIMARY KEY, actor TEXT NOT NULL,"
    " reason TEXT NOT NULL, since_ms INTEGER NOT NULL) WITHOUT ROWID;",
    /* 7: the processes that joined an attached task (docs/STATE.md "Members of attached
     * tasks"); a task row deleted by retention takes its rows with it */
    "CREATE TABLE task_members (task INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,"
    " pid INTEGER NOT NULL, proc_start INTEGER NOT NULL, joined INTEGER NOT NULL,"
    " PRIMARY KEY (task, pid)) WITHOUT ROWID;",
};
const int kerf__n_migrations = (int)(sizeof(kerf__migrations) / sizeof(kerf__migrations[0]));

#define TASK_COLS                                                                                  \
        "id, tenant, queue, name, state, end_reason, route, request, argv, env, cwd, log_stdout,"  \
        " log_stderr, uid, gid, pid, pgid, proc_start, exit_code, signal, submitted_ms,"           \
        " started_ms, ended_ms, preemptions, restarts, reason_code, reason_task, reason_text,"     \
        " lease_expiry_ms, held"
#define UNIT_COLS                                                                                  \
        "id, task, kind, state, gpu, gpu_uuid, mem_bytes, compute, compute_limit, mig_profile,"    \
        " mig_gi, mig_ci, mig_start, mig_uuid"
#define AUDIT_COLS                                                                                 \
        "seq, time_ms, actor, tenant, action, object, result, reason, gpu_uuid, driver, cuda,"     \
        " kerf, prev_hash, hash, node"
#define TENANT_COLS "name, cohort, weight, uid, gid, max_priority, max_tier, max_pending, workloads"
#define EVENT_COLS  "id, time_ms, kind, gpu, unit, task, xid, class, text"
#define RUN_COLS                                                                                   \
        "id, task, tenant, route, unit_kind, units, fraction, started_ms, ended_ms, used_ns"

const char *const kerf__sql[ST_COUNT] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_SAVEPOINT] = "SAVEPOINT kerf_sp",
    [ST_RELEASE] = "RELEASE kerf_sp",
    [ST_ROLLBACK_TO] = "ROLLBACK TO kerf_sp",
    [ST_META_GET] = "SELECT value FROM meta WHERE key = ?1",
    [ST_META_SET] = "INSERT INTO meta (key, value) VALUES (?1, ?2)"
                    " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    [ST_TASK_INSERT] = "INSERT INTO tasks (" TASK_COLS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,"
                       " ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,"
                       " ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30)",
    [ST_TASK_UPDATE] = "UPDATE tasks SET state = ?5, end_reason = ?6, route = ?7, cwd = ?11,"
                       " log_stdout = ?12, log_stderr = ?13, uid = ?14, gid = ?15, pid = ?16,"
                       " pgid = ?17, proc_start = ?18, exit_code = ?19, signal = ?20,"
                       " started_ms = ?22, ended_ms = ?23, preemptions = ?24,"
                       " restarts = ?25, reason_code = ?26, reason_task = ?27,"
                       " reason_text = ?28, lease_expiry_ms = ?29, held = ?30,"
                       " request = IFNULL(?8, request) WHERE id = ?1",
    [ST_TASK_LEASE] = "UPDATE tasks SET lease_expiry_ms = ?2 WHERE id = ?1",
    [ST_TASK_GET] = "SELECT " TASK_COLS " FROM tasks WHERE id = ?1",
    [ST_UNIT_UPSERT] = "INSERT OR REPLACE INTO units (" UNIT_COLS ") VALUES (?1, ?2, ?3, ?4,"
                       " ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    [ST_UNIT_DELETE] = "DELETE FROM units WHERE id = ?1",
    [ST_UNIT_GET] = "SELECT " UNIT_COLS " FROM units WHERE id = ?1",
    [ST_UNIT_LIST_ALL] = "SELECT " UNIT_COLS " FROM units ORDER BY id",
    [ST_UNIT_LIST_TASK] = "SELECT " UNIT_COLS " FROM units WHERE task = ?1 ORDER BY id",
    [ST_TENANT_UPSERT] = "INSERT INTO tenants (" TENANT_COLS ")"
                         " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT(name) DO"
                         " UPDATE SET cohort = excluded.cohort, weight = excluded.weight,"
                         " uid = excluded.uid, gid = excluded.gid,"
                         " max_priority = excluded.max_priority, max_tier = excluded.max_tier,"
                         " max_pending = excluded.max_pending, workloads = excluded.workloads",
    [ST_TENANT_GET] = "SELECT " TENANT_COLS " FROM tenants WHERE name = ?1",
    [ST_TENANT_LIST] = "SELECT " TENANT_COLS " FROM tenants ORDER BY name",
    [ST_TENANT_DELETE] = "DELETE FROM tenants WHERE name = ?1",
    [ST_TENANT_TASKS] = "SELECT 1 FROM tasks WHERE tenant = ?1 LIMIT 1",
    [ST_QUOTA_DELETE] = "DELETE FROM tenant_quotas WHERE tenant = ?1",
    [ST_QUOTA_INSERT] = "INSERT INTO tenant_quotas (tenant, resource, nominal, borrow_limit,"
                        " lend_limit) VALUES (?1, ?2, ?3, ?4, ?5)",
    [ST_QUOTA_GET] = "SELECT resource, nominal, borrow_limit, lend_limit FROM tenant_quotas"
                     " WHERE tenant = ?1",
    [ST_TOKEN_INSERT] = "INSERT INTO tokens (tenant, hash, prefix, label, created_ms)"
                        " VALUES (?1, ?2, ?3, ?4, ?5)",
    [ST_TOKEN_VERIFY] = "SELECT id, tenant, revoked_ms FROM tokens WHERE hash = ?1",
    [ST_TOKEN_REVOKE] = "UPDATE tokens SET revoked_ms = ?3 WHERE id = ?1 AND tenant = ?2"
                        " AND revoked_ms = 0",
    [ST_TOKEN_REVOKE_ANY] = "UPDATE tokens SET revoked_ms = ?3 WHERE id = ?1"
                            " AND revoked_ms = 0",
    [ST_TOKEN_LIST] = "SELECT id, tenant, label, prefix, created_ms, revoked_ms FROM tokens"
                      " WHERE tenant = ?1 ORDER BY id",
    [ST_TOKEN_LIST_ALL] = "SELECT id, tenant, label, prefix, created_ms, revoked_ms FROM"
                          " tokens ORDER BY id",
    [ST_EVENT_INSERT] = "INSERT INTO events (time_ms, kind, gpu, unit, task, xid, class,"
                        " text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    [ST_EVENT_LIST] = "SELECT " EVENT_COLS " FROM events WHERE id > ?1 ORDER BY id LIMIT ?2",
    [ST_EVENT_LIST_TASK] = "SELECT " EVENT_COLS " FROM events WHERE task = ?3 AND id > ?1"
                           " ORDER BY id LIMIT ?2",
    [ST_MAX_IDS] = "SELECT (SELECT IFNULL(MAX(id), 0) FROM tasks),"
                   " (SELECT IFNULL(MAX(id), 0) FROM units),"
                   " (SELECT IFNULL(MAX(id), 0) FROM events)",
    [ST_RUN_UPDATE_OPEN] = "UPDATE runs SET tenant = ?2, route = ?3, unit_kind = ?4, units = ?5,"
                           " fraction = ?6 WHERE task = ?1 AND ended_ms = 0",
    [ST_RUN_LAST_END] = "SELECT IFNULL(MAX(ended_ms), 0) FROM runs WHERE task = ?1",
    [ST_RUN_INSERT] = "INSERT INTO runs (task, tenant, route, unit_kind, units, fraction,"
                      " started_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [ST_RUN_CLOSE] = "UPDATE runs SET ended_ms = MAX(?2, started_ms), used_ns = ?3"
                     " WHERE task = ?1 AND ended_ms = 0",
    [ST_RUN_CLOSE_ENDED] = "UPDATE runs SET ended_ms = MAX(started_ms, (SELECT t.ended_ms FROM"
                           " tasks t WHERE t.id = runs.task)) WHERE ended_ms = 0 AND"
                           " (SELECT t.ended_ms FROM tasks t WHERE t.id = runs.task) > 0",
    [ST_RUN_PERIOD] = "SELECT " RUN_COLS " FROM runs WHERE started_ms < ?2 AND"
                      " (ended_ms = 0 OR ended_ms > ?1) AND (?3 = '' OR tenant = ?3)"
                      " ORDER BY id",
    [ST_AUDIT_HEAD] = "SELECT count, last_seq, hash FROM audit_head WHERE id = 1",
    [ST_AUDIT_INSERT] = "INSERT INTO audit (" AUDIT_COLS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6,"
                        " ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    [ST_AUDIT_HEAD_SET] = "UPDATE audit_head SET count = ?1, last_seq = ?2, hash = ?3"
                          " WHERE id = 1",
    [ST_AUDIT_LIST] = "SELECT " AUDIT_COLS " FROM audit WHERE seq > ?1 ORDER BY seq"
                      " LIMIT ?2",
    [ST_AUDIT_LIST_TENANT] = "SELECT " AUDIT_COLS " FROM audit WHERE tenant = ?3 AND"
                             " seq > ?1 ORDER BY seq LIMIT ?2",
    [ST_AUDIT_ALL] = "SELECT " AUDIT_COLS " FROM audit ORDER BY seq",
};

const char *const kerf__task_cols = TASK_COLS;
