/* SPDX-License-Identifier: Apache-2.0 */
/* store.c - open/close, migrations, transactions, meta and the helpers the store shares */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "kerf/errno.h"

int kerf__sqlerr(int rc)
{
        switch (rc) {
        case SQLITE_OK:
        case SQLITE_DONE:
        case SQLITE_ROW:
                return 0;
        case SQLITE_CONSTRAINT_PRIMARYKEY:
        case SQLITE_CONSTRAINT_UNIQUE:
                return -EEXIST;
        case SQLITE_CONSTRAINT_FOREIGNKEY:
                return -ENOENT;
        case SQLITE_CONSTRAINT_TRIGGER:
                return -KERF_EPERM;
        }
        switch (rc & 0xff) {
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
                return -EBUSY;
        case SQLITE_NOMEM:
                return -ENOMEM;
        case SQLITE_READONLY:
                return -EROFS;
        case SQLITE_FULL:
                return -ENOSPC;
        case SQLITE_CANTOPEN:
                return -ENOENT;
        case SQLITE_PERM:
        case SQLITE_AUTH:
                return -EACCES;
        case SQLITE_CORRUPT:
        case SQLITE_NOTADB:
                return -KERF_ECORRUPT;
        case SQLITE_CONSTRAINT:
        case SQLITE_MISMATCH:
        case SQLITE_TOOBIG:
        case SQLITE_RANGE:
                return -EINVAL;
        default:
                return -EIO;
        }
}

sqlite3_stmt *kerf__stmt(kerf_store *s, int id)
{
        sqlite3_stmt *st = s->st[id];

        if (st) {
                sqlite3_reset(st);
                sqlite3_clear_bindings(st);
                return st;
        }
        if (sqlite3_prepare_v3(s->db, kerf__sql[id], -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) !=
            SQLITE_OK)
                return NULL;
        s->st[id] = st;
        return st;
}

int kerf__prep(kerf_store *s, const char *sql, sqlite3_stmt **ret)
{
        if (sqlite3_prepare_v2(s->db, sql, -1, ret, NULL) != SQLITE_OK)
                return kerf__sqlerr(sqlite3_errcode(s->db));
        return 0;
}

int kerf__exec_stmt(sqlite3_stmt *st)
{
        int rc;

        if (!st)
                return -ENOMEM;
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : kerf__sqlerr(rc);
}

int64_t kerf__now_ms(int64_t ms)
{
        struct timespec ts;

        if (ms)
                return ms;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int kerf__cpy(char *dst, size_t len, const char *src)
{
        size_t n = src ? strlen(src) : 0;

        if (n >= len)
                return -EINVAL;
        if (n)
                memcpy(dst, src, n);
        dst[n] = '\0';
        return 0;
}

void kerf__col_cpy(sqlite3_stmt *st, int col, char *dst, size_t len)
{
        const char *v = (const char *)sqlite3_column_text(st, col);
        size_t n = v ? (size_t)sqlite3_column_bytes(st, col) : 0;

        if (n >= len)
                n = len - 1;
        if (n)
                memcpy(dst, v, n);
        dst[n] = '\0';
}

char *kerf__col_dup(sqlite3_stmt *st, int col, bool *ok)
{
        const char *v;
        char *d;
        size_t n;

        if (sqlite3_column_type(st, col) == SQLITE_NULL)
                return NULL;
        v = (const char *)sqlite3_column_text(st, col);
        n = (size_t)sqlite3_column_bytes(st, col);
        d = malloc(n + 1);
        if (!d) {
                *ok = false;
                return NULL;
        }
        memcpy(d, v ? v : "", n);
        d[n] = '\0';
        return d;
}

int kerf__bind_text(sqlite3_stmt *st, int idx, const char *v)
{
        if (!v)
                return sqlite3_bind_null(st, idx);
        return sqlite3_bind_text(st, idx, v, -1, SQLITE_STATIC);
}

unsigned kerf__limit(unsigned limit)
{
        if (limit == 0)
                return 100;
        return limit > KERF_STORE_LIST_MAX ? KERF_STORE_LIST_MAX : limit;
}

int kerf__collect(sqlite3_stmt *st, size_t size, unsigned limit, kerf__row_fn fill, void **ret,
                  size_t *ret_n, uint64_t *ret_next)
{
        unsigned char *arr = NULL;
        size_t n = 0, cap = 0;
        uint64_t last = 0, next = 0;
        int rc, r = 0;

        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                if (n == limit) {
                        next = last; /* there is at least one more row */
                        break;
                }
                if (n == cap) {
                        size_t ncap = cap ? cap * 2 : 16;
                        unsigned char *na = realloc(arr, ncap * size);

                        if (!na) {
                                r = -ENOMEM;
                                goto out;
                        }
                        arr = na;
                        cap = ncap;
                }
                memset(arr + n * size, 0, size);
                r = fill(st, arr + n * size);
                if (r < 0)
                        goto out;
                n++;
                last = (uint64_t)sqlite3_column_int64(st, 0);
        }
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
                r = kerf__sqlerr(rc);
                goto out;
        }
        *ret = n ? arr : NULL;
        if (!n)
                free(arr);
        *ret_n = n;
        if (ret_next)
                *ret_next = next;
        sqlite3_reset(st);
        return 0;
out:
        sqlite3_reset(st);
        free(arr);
        return r;
}

/* ---- transactions ---------------------------------------------------------------------- */

int kerf_store_begin(kerf_store *s)
{
        int r;

        if (!s)
                return -EINVAL;
        if (s->in_tx)
                return -KERF_ESTATE;
        r = kerf__exec_stmt(kerf__stmt(s, ST_BEGIN));
        if (r == 0)
                s->in_tx = true;
        return r;
}

int kerf_store_commit(kerf_store *s)
{
        int r;

        if (!s)
                return -EINVAL;
        if (!s->in_tx)
                return -KERF_ESTATE;
        r = s->fail_op[0] ? kerf__failpoint(s, "commit") : 0;
        if (r == 0)
                r = kerf__exec_stmt(kerf__stmt(s, ST_COMMIT));
        if (r < 0 && !sqlite3_get_autocommit(s->db))
                kerf__exec_stmt(kerf__stmt(s, ST_ROLLBACK));
        s->in_tx = false;
        return r;
}

int kerf_store_rollback(kerf_store *s)
{
        int r = 0;

        if (!s)
                return -EINVAL;
        if (!s->in_tx)
                return -KERF_ESTATE;
        if (!sqlite3_get_autocommit(s->db))
                r = kerf__exec_stmt(kerf__stmt(s, ST_ROLLBACK));
        s->in_tx = false;
        return r;
}

bool kerf_store_in_transaction(const kerf_store *s)
{
        return s && s->in_tx;
}

int kerf_store_end(kerf_store *s, int r)
{
        int q;

        if (!s)
                return -EINVAL;
        if (r < 0) {
                q = kerf_store_rollback(s);
                (void)q; /* the transaction is over either way; r says why */
                return r;
        }
        q = kerf_store_commit(s);
        return q < 0 ? q : r;
}

int kerf_store_tx(kerf_store *s, kerf_store_tx_fn fn, void *userdata)
{
        int r;

        if (!s || !fn)
                return -EINVAL;
        if (s->in_tx) {
                int q;
                r = kerf__exec_stmt(kerf__stmt(s, ST_SAVEPOINT));
                if (r < 0)
                        return r;
                r = fn(s, userdata);
                if (r < 0 && kerf__exec_stmt(kerf__stmt(s, ST_ROLLBACK_TO)) < 0)
                        return r; /* the caller's rollback undoes it */
                q = kerf__exec_stmt(kerf__stmt(s, ST_RELEASE));
                return r < 0 || q == 0 ? r : q;
        }
        r = kerf_store_begin(s);
        if (r < 0)
                return r;
        return kerf_store_end(s, fn(s, userdata));
}

/* ---- open / migrate ---------------------------------------------------------------------- */

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;

        if (!err || !errlen)
                return;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
}

/* Reads one integer/text row of a one-off query. Returns 1 with a row, 0 without, or < 0. */
static int query_text(sqlite3 *db, const char *sql, char *out, size_t len)
{
        sqlite3_stmt *st;
        int rc, r;

        rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
        if (rc != SQLITE_OK)
                return kerf__sqlerr(rc);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                kerf__col_cpy(st, 0, out, len);
                r = 1;
        } else {
                r = rc == SQLITE_DONE ? 0 : kerf__sqlerr(rc);
        }
        sqlite3_finalize(st);
        return r;
}

/* The schema version stored in the file: 0 for an empty file, -KERF_ECORRUPT if the file has
 * tables but no kerf meta table. */
static int schema_version(sqlite3 *db, int *ret)
{
        char buf[32];
        int r;

        r = query_text(db,
                       "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND"
                       " name = 'meta'",
                       buf, sizeof(buf));
        if (r < 0)
                return r;
        if (atoi(buf) == 0) {
                r = query_text(db, "SELECT count(*) FROM sqlite_master", buf, sizeof(buf));
                if (r < 0)
                        return r;
                if (atoi(buf) != 0)
                        return -KERF_ECORRUPT;
                *ret = 0;
                return 0;
        }
        r = query_text(db, "SELECT value FROM meta WHERE key = 'kerf.schema'", buf, sizeof(buf));
        if (r < 0)
                return r;
        if (r == 0)
                return -KERF_ECORRUPT;
        *ret = atoi(buf);
        return *ret > 0 ? 0 : -KERF_ECORRUPT;
}

static int migrate(kerf_store *s, char *err, size_t errlen)
{
        char sql[128], hex[65];
        unsigned char key[32];
        int v, r, rc;

        rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rc != SQLITE_OK)
                return kerf__sqlerr(rc);
        r = schema_version(s->db, &v); /* again: another process may have migrated meanwhile */
        if (r < 0)
                goto fail;
        for (; v < KERF_STORE_SCHEMA_VERSION; v++) {
                rc = sqlite3_exec(s->db, kerf__migrations[v + 1], NULL, NULL, NULL);
                if (rc == SQLITE_OK) {
                        snprintf(sql, sizeof(sql),
                                 "INSERT OR REPLACE INTO meta VALUES ('kerf.schema', '%d')", v + 1);
                        rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
                }
                if (rc != SQLITE_OK) {
                        seterr(err, errlen, "migration to schema version %d failed: %s", v + 1,
                               sqlite3_errmsg(s->db));
                        r = kerf__sqlerr(rc);
                        goto fail;
                }
        }
        r = query_text(s->db, "SELECT value FROM meta WHERE key = 'kerf.token_key'", hex,
                       sizeof(hex));
        if (r < 0)
                goto fail;
        if (r == 0) {
                randombytes_buf(key, sizeof(key));
                sodium_bin2hex(hex, sizeof(hex), key, sizeof(key));
                snprintf(sql, sizeof(sql), "INSERT INTO meta VALUES ('kerf.token_key', '%s')", hex);
                rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
                if (rc != SQLITE_OK) {
                        r = kerf__sqlerr(rc);
                        goto fail;
                }
        }
        rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
                r = kerf__sqlerr(rc);
                goto fail;
        }
        return 0;
fail:
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return r;
}

static int load_token_key(kerf_store *s)
{
        char hex[80];
        size_t n = 0;
        int r;

        r = query_text(s->db, "SELECT value FROM meta WHERE key = 'kerf.token_key'", hex,
                       sizeof(hex));
        if (r < 0)
                return r;
        if (r == 0 ||
            sodium_hex2bin(s->token_key, sizeof(s->token_key), hex, strlen(hex), NULL, &n, NULL) !=
                0 ||
            n != sizeof(s->token_key))
                return -KERF_ECORRUPT;
        return 0;
}

int kerf_store_open(const char *path, const kerf_store_opts *opts, kerf_store **ret, char *err,
                    size_t errlen)
{
        kerf_store_opts def = {0};
        kerf_store *s;
        char pragma[256];
        int flags, rc, r, v = 0;

        if (!path || !*path || !ret) {
                seterr(err, errlen, "no database path");
                return -EINVAL;
        }
        if (!opts)
                opts = &def;
        if (sodium_init() < 0) {
                seterr(err, errlen, "libsodium failed to initialise");
                return -EIO;
        }
        s = calloc(1, sizeof(*s));
        if (!s) {
                seterr(err, errlen, "out of memory");
                return -ENOMEM;
        }
        s->read_only = opts->read_only;
        if (!opts->read_only) {
                /* the file exists before SQLite opens it, 0600 whatever the umask: SQLite
                 * creates -wal/-shm/-journal with the database file's mode */
                int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0) {
                        r = -errno;
                        seterr(err, errlen, "%s: cannot create: %s", path, strerror(errno));
                        goto fail;
                }
                close(fd);
        }
        flags =
            (opts->read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
            SQLITE_OPEN_NOMUTEX;
        rc = sqlite3_open_v2(path, &s->db, flags, NULL);
        if (rc != SQLITE_OK) {
                seterr(err, errlen, "%s: cannot open: %s", path,
                       s->db ? sqlite3_errmsg(s->db) : "out of memory");
                r = kerf__sqlerr(rc);
                goto fail;
        }
        sqlite3_extended_result_codes(s->db, 1);
        sqlite3_busy_timeout(s->db, opts->busy_timeout_ms > 0 ? opts->busy_timeout_ms : 5000);
        if (!opts->read_only) {
                rc = sqlite3_exec(s->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
                if (rc != SQLITE_OK) {
                        seterr(err, errlen, "%s: not a kerf database (%s)", path,
                               sqlite3_errmsg(s->db));
                        r = (rc & 0xff) == SQLITE_NOTADB ? -KERF_ECORRUPT : kerf__sqlerr(rc);
                        goto fail;
                }
        }
        snprintf(pragma, sizeof(pragma),
                 "PRAGMA synchronous = %s; PRAGMA foreign_keys = ON; PRAGMA temp_store = MEMORY;"
                 " PRAGMA wal_autocheckpoint = 8192; PRAGMA journal_size_limit = 67108864",
                 opts->sync == KERF_STORE_SYNC_FULL ? "FULL" : "NORMAL");
        rc = sqlite3_exec(s->db, pragma, NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
                seterr(err, errlen, "%s: %s", path, sqlite3_errmsg(s->db));
                r = kerf__sqlerr(rc);
                goto fail;
        }
        r = schema_version(s->db, &v);
        if (r < 0) {
                seterr(err, errlen, "%s: not a kerf database (%s)", path,
                       r == -KERF_ECORRUPT ? "tables but no kerf schema" : kerf_strerror(r));
                goto fail;
        }
        if (v > KERF_STORE_SCHEMA_VERSION) {
                seterr(err, errlen,
                       "%s: schema version %d is newer than this kerf supports (%d); run a newer "
                       "kerf or restore a backup",
                       path, v, KERF_STORE_SCHEMA_VERSION);
                r = -KERF_EUNSUPP;
                goto fail;
        }
        if (v < KERF_STORE_SCHEMA_VERSION) {
                if (opts->read_only) {
                        seterr(err, errlen,
                               "%s: schema version %d needs migrating to %d; open it read-write "
                               "(start kerfd) first",
                               path, v, KERF_STORE_SCHEMA_VERSION);
                        r = -KERF_EUNSUPP;
                        goto fail;
                }
                r = migrate(s, err, errlen);
                if (r < 0) {
                        if (err && !*err)
                                seterr(err, errlen, "%s: migration failed: %s", path,
                                       sqlite3_errmsg(s->db));
                        goto fail;
                }
        }
        s->schema = KERF_STORE_SCHEMA_VERSION;
        r = load_token_key(s);
        if (r < 0) {
                seterr(err, errlen, "%s: token key missing or damaged in meta", path);
                goto fail;
        }
        *ret = s;
        return 0;
fail:
        if (err && errlen && !*err)
                seterr(err, errlen, "%s: %s", path, kerf_strerror(r));
        kerf_store_close(s);
        return r;
}

kerf_store *kerf_store_close(kerf_store *s)
{
        if (!s)
                return NULL;
        for (int i = 0; i < ST_COUNT; i++)
                sqlite3_finalize(s->st[i]);
        for (int i = 0; i < TASK_QUERY_VARIANTS; i++)
                sqlite3_finalize(s->task_q[i]);
        if (s->db && !sqlite3_get_autocommit(s->db))
                sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close_v2(s->db);
        sodium_memzero(s->token_key, sizeof(s->token_key));
        free(s);
        return NULL;
}

const char *kerf_store_errmsg(const kerf_store *s)
{
        if (!s || !s->db)
                return "no database";
        return sqlite3_errmsg(s->db);
}

int kerf_store_schema_version(const kerf_store *s)
{
        return s ? s->schema : -EINVAL;
}

int kerf_store_set_versions(kerf_store *s, const char *driver, const char *cuda, const char *kerf)
{
        if (!s || (driver && strlen(driver) >= sizeof(s->driver)) ||
            (cuda && strlen(cuda) >= sizeof(s->cuda)) || (kerf && strlen(kerf) >= sizeof(s->kerf)))
                return -EINVAL;
        if (driver)
                kerf__cpy(s->driver, sizeof(s->driver), driver);
        if (cuda)
                kerf__cpy(s->cuda, sizeof(s->cuda), cuda);
        if (kerf)
                kerf__cpy(s->kerf, sizeof(s->kerf), kerf);
        return 0;
}

int kerf_store_set_node(kerf_store *s, const char *node)
{
        if (!s || (node && strlen(node) >= sizeof(s->node)))
                return -EINVAL;
        kerf__cpy(s->node, sizeof(s->node), node ? node : "");
        return 0;
}

/* ---- meta ---------------------------------------------------------------------------------- */

static bool valid_key(const char *key)
{
        size_t n = key ? strlen(key) : 0;

        return n > 0 && n < 64 && strncmp(key, "kerf.", 5) != 0;
}

int kerf_store_meta_set(kerf_store *s, const char *key, const char *value)
{
        sqlite3_stmt *st;

        if (!s || !valid_key(key) || !value)
                return -EINVAL;
        st = kerf__stmt(s, ST_META_SET);
        if (!st)
                return kerf__sqlerr(sqlite3_errcode(s->db));
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
        return kerf__exec_stmt(st);
}

int kerf_store_meta_get(kerf_store *s, const char *key, char *ret_value, size_t len)
{
        sqlite3_stmt *st;
        int rc;

        if (!s || !valid_key(key) || !ret_value || !len)
                return -EINVAL;
        st = kerf__stmt(s, ST_META_GET);
        if (!st)
                return kerf__sqlerr(sqlite3_errcode(s->db));
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
                kerf__col_cpy(st, 0, ret_value, len);
        sqlite3_reset(st);
        if (rc == SQLITE_ROW)
                return 0;
        return rc == SQLITE_DONE ? -ENOENT : kerf__sqlerr(rc);
}

int kerf_store_max_ids(kerf_store *s, uint64_t *ret_task, uint64_t *ret_unit, uint64_t *ret_event)
{
        sqlite3_stmt *st;
        int rc;

        if (!s)
                return -EINVAL;
        st = kerf__stmt(s, ST_MAX_IDS);
        if (!st)
                return kerf__sqlerr(sqlite3_errcode(s->db));
        rc = sqlite3_step(st);
        if (rc != SQLITE_ROW) {
                sqlite3_reset(st);
                return kerf__sqlerr(rc);
        }
        if (ret_task)
                *ret_task = (uint64_t)sqlite3_column_int64(st, 0);
        if (ret_unit)
                *ret_unit = (uint64_t)sqlite3_column_int64(st, 1);
        if (ret_event)
                *ret_event = (uint64_t)sqlite3_column_int64(st, 2);
        sqlite3_reset(st);
        return 0;
}
