/* SPDX-License-Identifier: Apache-2.0 */
/* tenant.c - tenants, their quotas, and bearer tokens (stored as keyed BLAKE2b hashes) */
#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kerf/errno.h"

#define TOKEN_PREFIX     "kerf_"
#define TOKEN_BYTES      32
#define TOKEN_SHOWN      12 /* "kerf_" + 7 characters kept in listings */
#define TOKEN_HASH_BYTES 32

#define STMT_OR_FAIL(st, s, id)                                                                    \
        do {                                                                                       \
                (st) = kerf__stmt((s), (id));                                                      \
                if (!(st))                                                                         \
                        return kerf__sqlerr(sqlite3_errcode((s)->db));                             \
        } while (0)

/* Resource names as stored in tenant_quotas.resource, in kerf_res order (the same words as
 * kerf_res_name(); kept here so the store does not link the scheduler). */
static const char *const res_names[KERF_RES_COUNT] = {"gpus", "mem", "compute", "mig_slices"};

/* ---- tenants -------------------------------------------------------------------------------- */

int kerf_store_tenant_init(kerf_store_tenant *t, const char *name)
{
        kerf_store_tenant n;

        if (!t)
                return -EINVAL;
        memset(&n, 0, sizeof(n));
        if (kerf__cpy(n.name, sizeof(n.name), name) < 0)
                return -EINVAL;
        n.weight = 1;
        for (int i = 0; i < KERF_RES_COUNT; i++)
                n.nominal[i] = n.borrow_limit[i] = n.lend_limit[i] = KERF_UNLIMITED;
        n.uid = n.gid = -1;
        n.max_tier = -1;
        n.max_pending = -1;
        *t = n;
        return 0;
}

/* KERF_UNLIMITED is stored as NULL; other values must fit SQLite's signed 64-bit integers. */
static int bind_limit(sqlite3_stmt *st, int idx, uint64_t v)
{
        if (v == KERF_UNLIMITED)
                return sqlite3_bind_null(st, idx);
        return sqlite3_bind_int64(st, idx, (int64_t)v);
}

static uint64_t col_limit(sqlite3_stmt *st, int col)
{
        if (sqlite3_column_type(st, col) == SQLITE_NULL)
                return KERF_UNLIMITED;
        return (uint64_t)sqlite3_column_int64(st, col);
}

static int tenant_write(kerf_store *s, const kerf_store_tenant *t)
{
        sqlite3_stmt *st;
        int r;

        STMT_OR_FAIL(st, s, ST_TENANT_UPSERT);
        sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, t->cohort, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, t->weight ? t->weight : 1);
        sqlite3_bind_int64(st, 4, t->uid);
        sqlite3_bind_int64(st, 5, t->gid);
        if (t->has_max_priority)
                sqlite3_bind_int64(st, 6, t->max_priority);
        else
                sqlite3_bind_null(st, 6);
        if (t->max_tier >= 0)
                sqlite3_bind_int64(st, 7, t->max_tier);
        else
                sqlite3_bind_null(st, 7);
        if (t->max_pending >= 0)
                sqlite3_bind_int64(st, 8, t->max_pending);
        else
                sqlite3_bind_null(st, 8);
        sqlite3_bind_int64(st, 9, t->workloads);
        r = kerf__exec_stmt(st);
        if (r < 0)
                return r;
        STMT_OR_FAIL(st, s, ST_QUOTA_DELETE);
        sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
        r = kerf__exec_stmt(st);
        for (int i = 0; r == 0 && i < KERF_RES_COUNT; i++) {
                STMT_OR_FAIL(st, s, ST_QUOTA_INSERT);
                sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 2, res_names[i], -1, SQLITE_STATIC);
                bind_limit(st, 3, t->nominal[i]);
                bind_limit(st, 4, t->borrow_limit[i]);
                bind_limit(st, 5, t->lend_limit[i]);
                r = kerf__exec_stmt(st);
        }
        return r;
}

int kerf_store_tenant_upsert(kerf_store *s, const kerf_store_tenant *t)
{
        int r;

        if (!s || !t || !t->name[0] || strnlen(t->name, sizeof(t->name)) >= sizeof(t->name) ||
            strnlen(t->cohort, sizeof(t->cohort)) >= sizeof(t->cohort))
                return -EINVAL;
        for (int i = 0; i < KERF_RES_COUNT; i++)
                if ((t->nominal[i] > INT64_MAX && t->nominal[i] != KERF_UNLIMITED) ||
                    (t->borrow_limit[i] > INT64_MAX && t->borrow_limit[i] != KERF_UNLIMITED) ||
                    (t->lend_limit[i] > INT64_MAX && t->lend_limit[i] != KERF_UNLIMITED))
                        return -EINVAL;
        r = kerf__sp_begin(s);
        if (r < 0)
                return r;
        return kerf__sp_end(s, tenant_write(s, t));
}

static int tenant_fill(sqlite3_stmt *st, void *item)
{
        kerf_store_tenant *t = item;
        char name[KERF_NAME_LEN];

        kerf__col_cpy(st, 0, name, sizeof(name));
        kerf_store_tenant_init(t, name);
        kerf__col_cpy(st, 1, t->cohort, sizeof(t->cohort));
        t->weight = (unsigned)sqlite3_column_int64(st, 2);
        t->uid = sqlite3_column_int64(st, 3);
        t->gid = sqlite3_column_int64(st, 4);
        t->has_max_priority = sqlite3_column_type(st, 5) != SQLITE_NULL;
        t->max_priority = t->has_max_priority ? (int)sqlite3_column_int64(st, 5) : 0;
        t->max_tier =
            sqlite3_column_type(st, 6) != SQLITE_NULL ? (int)sqlite3_column_int64(st, 6) : -1;
        t->max_pending =
            sqlite3_column_type(st, 7) != SQLITE_NULL ? sqlite3_column_int64(st, 7) : -1;
        t->workloads = (unsigned)sqlite3_column_int64(st, 8);
        return 0;
}

static int tenant_quotas(kerf_store *s, kerf_store_tenant *t)
{
        sqlite3_stmt *st;
        int rc;

        STMT_OR_FAIL(st, s, ST_QUOTA_GET);
        sqlite3_bind_text(st, 1, t->name, -1, SQLITE_STATIC);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *res = (const char *)sqlite3_column_text(st, 0);

                for (int i = 0; res && i < KERF_RES_COUNT; i++) {
                        if (strcmp(res, res_names[i]) != 0)
                                continue;
                        t->nominal[i] = col_limit(st, 1);
                        t->borrow_limit[i] = col_limit(st, 2);
                        t->lend_limit[i] = col_limit(st, 3);
                }
        }
        sqlite3_reset(st);
        return rc == SQLITE_DONE ? 0 : kerf__sqlerr(rc);
}

int kerf_store_tenant_get(kerf_store *s, const char *name, kerf_store_tenant *ret)
{
        kerf_store_tenant t;
        sqlite3_stmt *st;
        int rc, r;

        if (!s || !name || !ret)
                return -EINVAL;
        STMT_OR_FAIL(st, s, ST_TENANT_GET);
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
                tenant_fill(st, &t);
        sqlite3_reset(st);
        if (rc != SQLITE_ROW)
                return rc == SQLITE_DONE ? -ENOENT : kerf__sqlerr(rc);
        r = tenant_quotas(s, &t);
        if (r == 0)
                *ret = t;
        return r;
}

int kerf_store_tenant_list(kerf_store *s, kerf_store_tenant **ret_tenants, size_t *ret_n)
{
        kerf_store_tenant *arr = NULL;
        sqlite3_stmt *st;
        size_t n = 0;
        int r;

        if (!s || !ret_tenants || !ret_n)
                return -EINVAL;
        STMT_OR_FAIL(st, s, ST_TENANT_LIST);
        r = kerf__collect(st, sizeof(*arr), UINT32_MAX, tenant_fill, (void **)&arr, &n, NULL);
        for (size_t i = 0; r == 0 && i < n; i++)
                r = tenant_quotas(s, &arr[i]);
        if (r < 0) {
                free(arr);
                return r;
        }
        *ret_tenants = arr;
        *ret_n = n;
        return 0;
}

static int tenant_remove(kerf_store *s, const char *name)
{
        sqlite3_stmt *st;
        int rc, r;

        STMT_OR_FAIL(st, s, ST_TENANT_TASKS);
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc == SQLITE_ROW)
                return -KERF_EINUSE;
        if (rc != SQLITE_DONE)
                return kerf__sqlerr(rc);
        STMT_OR_FAIL(st, s, ST_TENANT_DELETE);
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
        r = kerf__exec_stmt(st);
        if (r == 0 && sqlite3_changes(s->db) == 0)
                r = -ENOENT;
        return r;
}

int kerf_store_tenant_delete(kerf_store *s, const char *name)
{
        int r;

        if (!s || !name || !*name)
                return -EINVAL;
        r = kerf__sp_begin(s);
        if (r < 0)
                return r;
        return kerf__sp_end(s, tenant_remove(s, name));
}

/* ---- tokens --------------------------------------------------------------------------------- */

/* A token carries 256 random bits, so a single fast keyed hash is enough: there is no
 * dictionary to try, and the per-database key makes the stored hashes useless elsewhere. A
 * slow password hash (crypto_pwhash) would cap verification at a few hundred per second. */
static void token_hash(const kerf_store *s, const char *token, size_t len,
                       unsigned char out[TOKEN_HASH_BYTES])
{
        crypto_generichash(out, TOKEN_HASH_BYTES, (const unsigned char *)token, len, s->token_key,
                           sizeof(s->token_key));
}

int kerf_store_token_create(kerf_store *s, const char *tenant, const char *label, int64_t now_ms,
                            uint64_t *ret_id, char ret_token[KERF_STORE_TOKEN_LEN])
{
        unsigned char raw[TOKEN_BYTES], hash[TOKEN_HASH_BYTES];
        char token[KERF_STORE_TOKEN_LEN], prefix[TOKEN_SHOWN + 1];
        sqlite3_stmt *st;
        size_t plen = strlen(TOKEN_PREFIX);
        int r;

        if (!s || !tenant || !*tenant || !ret_id || !ret_token ||
            (label && strlen(label) >= KERF_NAME_LEN))
                return -EINVAL;
        randombytes_buf(raw, sizeof(raw));
        memcpy(token, TOKEN_PREFIX, plen);
        sodium_bin2base64(token + plen, sizeof(token) - plen, raw, sizeof(raw),
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING);
        sodium_memzero(raw, sizeof(raw));
        token_hash(s, token, strlen(token), hash);
        memcpy(prefix, token, TOKEN_SHOWN);
        prefix[TOKEN_SHOWN] = '\0';
        st = kerf__stmt(s, ST_TOKEN_INSERT);
        if (!st) {
                r = kerf__sqlerr(sqlite3_errcode(s->db));
                goto out;
        }
        sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
        sqlite3_bind_blob(st, 2, hash, sizeof(hash), SQLITE_STATIC);
        sqlite3_bind_text(st, 3, prefix, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, label ? label : "", -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 5, kerf__now_ms(now_ms));
        r = kerf__exec_stmt(st); /* an unknown tenant fails the foreign key: -ENOENT */
        if (r == 0) {
                *ret_id = (uint64_t)sqlite3_last_insert_rowid(s->db);
                memcpy(ret_token, token, strlen(token) + 1);
        }
out:
        sodium_memzero(token, sizeof(token));
        return r;
}

int kerf_store_token_verify(kerf_store *s, const char *token, char ret_tenant[KERF_NAME_LEN],
                            uint64_t *ret_id)
{
        unsigned char hash[TOKEN_HASH_BYTES];
        size_t plen = strlen(TOKEN_PREFIX), len;
        sqlite3_stmt *st;
        int rc, r = -KERF_EPERM;

        if (!s || !token || !ret_tenant)
                return -EINVAL;
        len = strnlen(token, KERF_STORE_TOKEN_LEN);
        if (len >= KERF_STORE_TOKEN_LEN || len <= plen || strncmp(token, TOKEN_PREFIX, plen) != 0)
                return -KERF_EPERM;
        token_hash(s, token, len, hash);
        STMT_OR_FAIL(st, s, ST_TOKEN_VERIFY);
        sqlite3_bind_blob(st, 1, hash, sizeof(hash), SQLITE_STATIC);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                if (sqlite3_column_int64(st, 2) == 0) {
                        kerf__col_cpy(st, 1, ret_tenant, KERF_NAME_LEN);
                        if (ret_id)
                                *ret_id = (uint64_t)sqlite3_column_int64(st, 0);
                        r = 0;
                }
        } else if (rc != SQLITE_DONE) {
                r = kerf__sqlerr(rc);
        }
        sqlite3_reset(st);
        return r;
}

int kerf_store_token_revoke(kerf_store *s, const char *tenant, uint64_t id, int64_t now_ms)
{
        sqlite3_stmt *st;
        int r;

        if (!s || id == 0 || id > INT64_MAX)
                return -EINVAL;
        STMT_OR_FAIL(st, s, tenant ? ST_TOKEN_REVOKE : ST_TOKEN_REVOKE_ANY);
        sqlite3_bind_int64(st, 1, (int64_t)id);
        if (tenant)
                sqlite3_bind_text(st, 2, tenant, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, kerf__now_ms(now_ms));
        r = kerf__exec_stmt(st);
        if (r == 0 && sqlite3_changes(s->db) == 0)
                return -ENOENT;
        return r;
}

static int token_fill(sqlite3_stmt *st, void *item)
{
        kerf_store_token *t = item;

        t->id = (uint64_t)sqlite3_column_int64(st, 0);
        kerf__col_cpy(st, 1, t->tenant, sizeof(t->tenant));
        kerf__col_cpy(st, 2, t->label, sizeof(t->label));
        kerf__col_cpy(st, 3, t->prefix, sizeof(t->prefix));
        t->created_ms = sqlite3_column_int64(st, 4);
        t->revoked_ms = sqlite3_column_int64(st, 5);
        return 0;
}

int kerf_store_token_list(kerf_store *s, const char *tenant, kerf_store_token **ret_tokens,
                          size_t *ret_n)
{
        kerf_store_token *arr = NULL;
        sqlite3_stmt *st;
        size_t n = 0;
        int r;

        if (!s || !ret_tokens || !ret_n)
                return -EINVAL;
        STMT_OR_FAIL(st, s, tenant ? ST_TOKEN_LIST : ST_TOKEN_LIST_ALL);
        if (tenant)
                sqlite3_bind_text(st, 1, tenant, -1, SQLITE_STATIC);
        r = kerf__collect(st, sizeof(*arr), UINT32_MAX, token_fill, (void **)&arr, &n, NULL);
        if (r < 0)
                return r;
        *ret_tokens = arr;
        *ret_n = n;
        return 0;
}
