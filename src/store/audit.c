/* SPDX-License-Identifier: Apache-2.0 */
/* audit.c - the append-only audit chain: append, query, JSON Lines export, verify */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kerf/errno.h"

#define AUDIT_DOMAIN "kerf-audit-v1"
#define ZERO_HASH    "0000000000000000000000000000000000000000000000000000000000000000"

#define STMT_OR_FAIL(st, s, id)                                                                    \
        do {                                                                                       \
                (st) = kerf__stmt((s), (id));                                                      \
                if (!(st))                                                                         \
                        return kerf__sqlerr(sqlite3_errcode((s)->db));                             \
        } while (0)

/* Canonical encoding: the domain string, then every field in a fixed order as a netstring
 * "<decimal length>:<bytes>," (integers in decimal). Length prefixes make the encoding
 * injective: no two different records encode to the same bytes. */
static void put(crypto_generichash_state *h, const char *v)
{
        char len[24];
        size_t n = strlen(v);

        snprintf(len, sizeof(len), "%zu:", n);
        crypto_generichash_update(h, (const unsigned char *)len, strlen(len));
        crypto_generichash_update(h, (const unsigned char *)v, n);
        crypto_generichash_update(h, (const unsigned char *)",", 1);
}

void kerf__audit_hash(const kerf_store_audit *r, char out[KERF_STORE_HASH_HEX])
{
        crypto_generichash_state h;
        unsigned char bin[32];
        char num[24];

        crypto_generichash_init(&h, NULL, 0, sizeof(bin));
        put(&h, AUDIT_DOMAIN);
        snprintf(num, sizeof(num), "%" PRIu64, r->seq);
        put(&h, num);
        snprintf(num, sizeof(num), "%" PRId64, r->time_ms);
        put(&h, num);
        put(&h, r->actor);
        put(&h, r->tenant);
        put(&h, r->action);
        put(&h, r->object);
        put(&h, r->result);
        put(&h, r->reason);
        put(&h, r->gpu_uuid);
        put(&h, r->driver);
        put(&h, r->cuda);
        put(&h, r->kerf);
        if (r->node[0]) { /* records before schema 4 have none: their hash is unchanged */
                put(&h, "node");
                put(&h, r->node);
        }
        put(&h, r->prev_hash);
        crypto_generichash_final(&h, bin, sizeof(bin));
        sodium_bin2hex(out, KERF_STORE_HASH_HEX, bin, sizeof(bin));
}

static bool fits(const char *v, size_t len)
{
        return strnlen(v, len) < len;
}

static int read_head(kerf_store *s, uint64_t *count, uint64_t *last, char hash[KERF_STORE_HASH_HEX])
{
        sqlite3_stmt *st;
        int rc;

        STMT_OR_FAIL(st, s, ST_AUDIT_HEAD);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                *count = (uint64_t)sqlite3_column_int64(st, 0);
                *last = (uint64_t)sqlite3_column_int64(st, 1);
                kerf__col_cpy(st, 2, hash, KERF_STORE_HASH_HEX);
        }
        sqlite3_reset(st);
        if (rc == SQLITE_ROW)
                return 0;
        return rc == SQLITE_DONE ? -KERF_ECORRUPT : kerf__sqlerr(rc);
}

static int append(kerf_store *s, kerf_store_audit *r)
{
        uint64_t count, last;
        sqlite3_stmt *st;
        int q;

        q = read_head(s, &count, &last, r->prev_hash);
        if (q < 0)
                return q;
        r->seq = last + 1;
        kerf__audit_hash(r, r->hash);
        STMT_OR_FAIL(st, s, ST_AUDIT_INSERT);
        sqlite3_bind_int64(st, 1, (int64_t)r->seq);
        sqlite3_bind_int64(st, 2, r->time_ms);
        const char *f[] = {r->actor,    r->tenant, r->action, r->object, r->result,    r->reason,
                           r->gpu_uuid, r->driver, r->cuda,   r->kerf,   r->prev_hash, r->hash};
        for (int i = 0; i < 12; i++)
                sqlite3_bind_text(st, 3 + i, f[i], -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 15, r->node, -1, SQLITE_STATIC);
        q = kerf__exec_stmt(st);
        if (q < 0)
                return q;
        STMT_OR_FAIL(st, s, ST_AUDIT_HEAD_SET);
        sqlite3_bind_int64(st, 1, (int64_t)(count + 1));
        sqlite3_bind_int64(st, 2, (int64_t)r->seq);
        sqlite3_bind_text(st, 3, r->hash, -1, SQLITE_STATIC);
        return kerf__exec_stmt(st);
}

int kerf_store_audit_append(kerf_store *s, kerf_store_audit *r)
{
        kerf_store_audit w;
        int q;

        if (!s || !r || !fits(r->actor, sizeof(r->actor)) || !r->actor[0] ||
            !fits(r->tenant, sizeof(r->tenant)) || !fits(r->action, sizeof(r->action)) ||
            !r->action[0] || !fits(r->object, sizeof(r->object)) || !r->object[0] ||
            !fits(r->result, sizeof(r->result)) || !r->result[0] ||
            !fits(r->reason, sizeof(r->reason)) || !fits(r->gpu_uuid, sizeof(r->gpu_uuid)) ||
            !fits(r->driver, sizeof(r->driver)) || !fits(r->cuda, sizeof(r->cuda)) ||
            !fits(r->kerf, sizeof(r->kerf)) || !fits(r->node, sizeof(r->node)))
                return -EINVAL;
        KERF__FAILPOINT(s, "audit_append");
        w = *r;
        w.time_ms = kerf__now_ms(r->time_ms);
        if (!w.driver[0])
                memcpy(w.driver, s->driver, sizeof(w.driver));
        if (!w.cuda[0])
                memcpy(w.cuda, s->cuda, sizeof(w.cuda));
        if (!w.kerf[0])
                memcpy(w.kerf, s->kerf, sizeof(w.kerf));
        if (!w.node[0])
                memcpy(w.node, s->node, sizeof(w.node));
        q = kerf__sp_begin(s);
        if (q < 0)
                return q;
        q = kerf__sp_end(s, append(s, &w));
        if (q == 0)
                *r = w;
        return q;
}

static int audit_fill(sqlite3_stmt *st, void *item)
{
        kerf_store_audit *r = item;
        struct {
                char *dst;
                size_t len;
        } f[] = {{r->actor, sizeof(r->actor)},         {r->tenant, sizeof(r->tenant)},
                 {r->action, sizeof(r->action)},       {r->object, sizeof(r->object)},
                 {r->result, sizeof(r->result)},       {r->reason, sizeof(r->reason)},
                 {r->gpu_uuid, sizeof(r->gpu_uuid)},   {r->driver, sizeof(r->driver)},
                 {r->cuda, sizeof(r->cuda)},           {r->kerf, sizeof(r->kerf)},
                 {r->prev_hash, sizeof(r->prev_hash)}, {r->hash, sizeof(r->hash)}};

        r->seq = (uint64_t)sqlite3_column_int64(st, 0);
        r->time_ms = sqlite3_column_int64(st, 1);
        for (int i = 0; i < 12; i++)
                kerf__col_cpy(st, 2 + i, f[i].dst, f[i].len);
        kerf__col_cpy(st, 14, r->node, sizeof(r->node));
        return 0;
}

int kerf_store_audit_list(kerf_store *s, const char *tenant, uint64_t after, unsigned limit,
                          kerf_store_audit **ret_records, size_t *ret_n, uint64_t *ret_next)
{
        kerf_store_audit *arr = NULL;
        sqlite3_stmt *st;
        size_t n = 0;
        int r;

        if (!s || !ret_records || !ret_n)
                return -EINVAL;
        limit = kerf__limit(limit);
        STMT_OR_FAIL(st, s, tenant ? ST_AUDIT_LIST_TENANT : ST_AUDIT_LIST);
        sqlite3_bind_int64(st, 1, after > INT64_MAX ? INT64_MAX : (int64_t)after);
        sqlite3_bind_int64(st, 2, (int64_t)limit + 1);
        if (tenant)
                sqlite3_bind_text(st, 3, tenant, -1, SQLITE_STATIC);
        r = kerf__collect(st, sizeof(*arr), limit, audit_fill, (void **)&arr, &n, ret_next);
        if (r < 0)
                return r;
        *ret_records = arr;
        *ret_n = n;
        return 0;
}

char *kerf_store_audit_json(const kerf_store_audit *r)
{
        json_t *o;
        char *out;

        if (!r)
                return NULL;
        o = json_pack("{s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
                      "seq", (json_int_t)r->seq, "time_ms", (json_int_t)r->time_ms, "actor",
                      r->actor, "tenant", r->tenant, "action", r->action, "object", r->object,
                      "result", r->result, "reason", r->reason, "gpu_uuid", r->gpu_uuid, "driver",
                      r->driver, "cuda", r->cuda, "kerf", r->kerf, "prev_hash", r->prev_hash,
                      "hash", r->hash);
        if (o && r->node[0]) /* absent in records older than schema 4, as in their hash */
                json_object_set_new(o, "node", json_string(r->node));
        if (!o)
                return NULL;
        out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(o);
        return out;
}

int kerf_store_audit_export(kerf_store *s, const char *tenant, uint64_t after, FILE *out)
{
        kerf_store_audit *recs;
        uint64_t next;
        size_t n;
        int r, written = 0;

        if (!s || !out)
                return -EINVAL;
        do {
                r = kerf_store_audit_list(s, tenant, after, KERF_STORE_LIST_MAX, &recs, &n, &next);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        char *line = kerf_store_audit_json(&recs[i]);

                        if (!line) {
                                free(recs);
                                return -ENOMEM;
                        }
                        if (fputs(line, out) == EOF || fputc('\n', out) == EOF) {
                                free(line);
                                free(recs);
                                return -EIO;
                        }
                        free(line);
                        written = written < INT32_MAX ? written + 1 : written;
                }
                free(recs);
                after = next;
        } while (next);
        if (fflush(out) == EOF)
                return -EIO;
        return written;
}

int kerf_store_audit_head(kerf_store *s, uint64_t *ret_count, char ret_hash[KERF_STORE_HASH_HEX])
{
        char hash[KERF_STORE_HASH_HEX];
        uint64_t count, last;
        int r;

        if (!s || !ret_count || !ret_hash)
                return -EINVAL;
        r = read_head(s, &count, &last, hash);
        if (r < 0)
                return r;
        *ret_count = count;
        memcpy(ret_hash, hash, sizeof(hash));
        return 0;
}

static void bad(kerf_store_audit_report *rep, uint64_t seq, const char *fmt, uint64_t a, uint64_t b)
{
        rep->ok = false;
        rep->first_bad = seq;
        snprintf(rep->problem, sizeof(rep->problem), fmt, a, b);
}

bool kerf__audit_linked(const kerf_store_audit *r, const char *prev, kerf_store_audit_report *rep)
{
        char calc[KERF_STORE_HASH_HEX];

        if (strcmp(r->prev_hash, prev) != 0) {
                bad(rep, r->seq,
                    "chain break at seq %" PRIu64 ": prev_hash does not match the hash of "
                    "seq %" PRIu64 " (a record was inserted, removed or re-linked)",
                    r->seq, r->seq - 1);
                return false;
        }
        kerf__audit_hash(r, calc);
        if (strcmp(calc, r->hash) != 0) {
                bad(rep, r->seq,
                    "hash mismatch at seq %" PRIu64 ": a field of record %" PRIu64
                    " was edited after it was written",
                    r->seq, r->seq);
                return false;
        }
        return true;
}

/* The walk checks, per record in seq order: seq continuity (a gap = deleted records),
 * prev_hash = the previous record's stored hash (a break = a record inserted, removed or
 * re-linked before this one), and the recomputed hash (a mismatch = a field edited). Then the
 * head row written in the same transaction as each append: fewer records than counted = tail
 * truncated; more, or another last hash = records appended outside kerf. */
int kerf_store_audit_verify(kerf_store *s, kerf_store_audit_report *ret)
{
        kerf_store_audit_report rep = {.ok = true};
        char prev[KERF_STORE_HASH_HEX] = ZERO_HASH;
        char head_hash[KERF_STORE_HASH_HEX];
        uint64_t expect = 1, head_count, head_last;
        kerf_store_audit r;
        sqlite3_stmt *st;
        bool own = false;
        int rc, q;

        if (!s || !ret)
                return -EINVAL;
        if (!s->in_tx) { /* one consistent snapshot for the walk and the head row */
                if (sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
                        return kerf__sqlerr(sqlite3_errcode(s->db));
                own = true;
        }
        st = kerf__stmt(s, ST_AUDIT_ALL);
        if (!st) {
                q = kerf__sqlerr(sqlite3_errcode(s->db));
                goto out;
        }
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                memset(&r, 0, sizeof(r));
                audit_fill(st, &r);
                rep.records++;
                if (r.seq != expect) {
                        if (r.seq > expect)
                                bad(&rep, expect,
                                    "record seq %" PRIu64 " is missing (deleted); the next is "
                                    "seq %" PRIu64,
                                    expect, r.seq);
                        else
                                bad(&rep, r.seq,
                                    "seq %" PRIu64 " out of order (expected %" PRIu64 ")", r.seq,
                                    expect);
                        break;
                }
                if (!kerf__audit_linked(&r, prev, &rep))
                        break;
                memcpy(prev, r.hash, sizeof(prev));
                expect++;
        }
        sqlite3_reset(st);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
                q = kerf__sqlerr(rc);
                goto out;
        }
        q = read_head(s, &head_count, &head_last, head_hash);
        if (q < 0)
                goto out;
        if (rep.ok && head_count > rep.records)
                bad(&rep, rep.records + 1,
                    "the chain ends after %" PRIu64 " records but %" PRIu64
                    " were written: the tail was truncated",
                    rep.records, head_count);
        else if (rep.ok && head_count < rep.records)
                bad(&rep, head_count + 1,
                    "the chain has %" PRIu64 " records but only %" PRIu64
                    " were written by kerf: records were added outside kerf",
                    rep.records, head_count);
        else if (rep.ok && strcmp(head_hash, prev) != 0)
                bad(&rep, rep.records,
                    "the last record (seq %" PRIu64 " of %" PRIu64
                    ") is not the one kerf wrote: the tail was replaced",
                    rep.records, head_count);
        *ret = rep;
        q = 0;
out:
        if (own)
                sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
        return q;
}

void kerf_store_audit_hash(const kerf_store_audit *r, char ret_hash[KERF_STORE_HASH_HEX])
{
        kerf__audit_hash(r, ret_hash);
}
