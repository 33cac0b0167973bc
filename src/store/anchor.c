/* SPDX-License-Identifier: Apache-2.0 */
/* anchor.c - the audit chain anchored outside the database: signed checkpoints of the head
 * (Ed25519) and the offline verification of an exported chain against one */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "kerf/errno.h"

#define ZERO_HASH "0000000000000000000000000000000000000000000000000000000000000000"
#define CP_KIND   "kerf-audit-checkpoint"

/* What is signed: a fixed text, so that a checkpoint cannot be mistaken for anything else. */
static void cp_message(const kerf_store_checkpoint *cp, char *buf, size_t len)
{
        snprintf(buf, len, CP_KIND " v1\nseq=%" PRIu64 "\nhash=%s\ntime_ms=%" PRId64 "\n", cp->seq,
                 cp->hash, cp->time_ms);
}

static int read_key(const char *path, unsigned char sk[crypto_sign_SECRETKEYBYTES])
{
        char hex[2 * crypto_sign_SECRETKEYBYTES + 4];
        struct stat st;
        size_t n = 0;
        ssize_t k;
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
            (st.st_mode & 077)) {
                close(fd);
                return -EPERM;
        }
        k = read(fd, hex, sizeof(hex) - 1);
        close(fd);
        if (k < 2 * crypto_sign_SECRETKEYBYTES)
                return -KERF_ECORRUPT;
        hex[k] = '\0';
        if (sodium_hex2bin(sk, crypto_sign_SECRETKEYBYTES, hex, 2 * crypto_sign_SECRETKEYBYTES,
                           NULL, &n, NULL) != 0 ||
            n != crypto_sign_SECRETKEYBYTES)
                return -KERF_ECORRUPT;
        sodium_memzero(hex, sizeof(hex));
        return 0;
}

static int write_key(const char *path, unsigned char sk[crypto_sign_SECRETKEYBYTES])
{
        char hex[2 * crypto_sign_SECRETKEYBYTES + 2];
        unsigned char pk[crypto_sign_PUBLICKEYBYTES];
        int fd, r = 0;

        crypto_sign_keypair(pk, sk);
        sodium_bin2hex(hex, sizeof(hex) - 1, sk, crypto_sign_SECRETKEYBYTES);
        strcat(hex, "\n");
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        if (write(fd, hex, strlen(hex)) != (ssize_t)strlen(hex) || fsync(fd) < 0)
                r = errno ? -errno : -EIO;
        close(fd);
        sodium_memzero(hex, sizeof(hex));
        if (r < 0)
                unlink(path);
        return r;
}

static int load_key(const char *path, bool create, unsigned char sk[crypto_sign_SECRETKEYBYTES])
{
        int r;

        if (!path || !*path)
                return -EINVAL;
        if (sodium_init() < 0)
                return -EIO;
        r = read_key(path, sk);
        if (r == -ENOENT && create) {
                r = write_key(path, sk);
                if (r == -EEXIST) /* another process made it meanwhile */
                        r = read_key(path, sk);
        }
        return r;
}

int kerf_store_anchor_key(const char *key_path, bool create, char ret_public[KERF_STORE_PK_HEX])
{
        unsigned char sk[crypto_sign_SECRETKEYBYTES], pk[crypto_sign_PUBLICKEYBYTES];
        int r = load_key(key_path, create, sk);

        if (r < 0)
                return r;
        crypto_sign_ed25519_sk_to_pk(pk, sk);
        sodium_memzero(sk, sizeof(sk));
        if (ret_public)
                sodium_bin2hex(ret_public, KERF_STORE_PK_HEX, pk, sizeof(pk));
        return 0;
}

int kerf_store_checkpoint_make(kerf_store *s, const char *key_path, int64_t now_ms,
                               kerf_store_checkpoint *ret)
{
        unsigned char sk[crypto_sign_SECRETKEYBYTES], pk[crypto_sign_PUBLICKEYBYTES];
        unsigned char sig[crypto_sign_BYTES];
        kerf_store_checkpoint cp;
        char msg[256];
        int r;

        if (!s || !ret)
                return -EINVAL;
        memset(&cp, 0, sizeof(cp));
        r = kerf_store_audit_head(s, &cp.seq, cp.hash);
        if (r < 0)
                return r;
        r = load_key(key_path, true, sk);
        if (r < 0)
                return r;
        cp.time_ms = kerf__now_ms(now_ms);
        cp_message(&cp, msg, sizeof(msg));
        crypto_sign_detached(sig, NULL, (const unsigned char *)msg, strlen(msg), sk);
        crypto_sign_ed25519_sk_to_pk(pk, sk);
        sodium_memzero(sk, sizeof(sk));
        sodium_bin2hex(cp.public_key, sizeof(cp.public_key), pk, sizeof(pk));
        sodium_bin2hex(cp.signature, sizeof(cp.signature), sig, sizeof(sig));
        *ret = cp;
        return 0;
}

char *kerf_store_checkpoint_json(const kerf_store_checkpoint *cp)
{
        json_t *o;
        char *out;

        if (!cp)
                return NULL;
        o = json_pack("{s:s, s:i, s:I, s:s, s:I, s:s, s:s}", "kind", CP_KIND, "version", 1, "seq",
                      (json_int_t)cp->seq, "hash", cp->hash, "time_ms", (json_int_t)cp->time_ms,
                      "public_key", cp->public_key, "signature", cp->signature);
        if (!o)
                return NULL;
        out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(o);
        return out;
}

static int hexfield(json_t *o, const char *key, char *dst, size_t len)
{
        const char *v = json_string_value(json_object_get(o, key));

        if (!v || strlen(v) != len - 1 || strspn(v, "0123456789abcdef") != len - 1)
                return -EINVAL;
        memcpy(dst, v, len);
        return 0;
}

int kerf_store_checkpoint_parse(const char *text, const char *public_key,
                                kerf_store_checkpoint *ret, char *err, size_t errlen)
{
        unsigned char pk[crypto_sign_PUBLICKEYBYTES], sig[crypto_sign_BYTES];
        kerf_store_checkpoint cp;
        json_error_t je;
        json_t *o, *seq, *tm;
        char msg[256];
        int r = -EINVAL;

        if (err && errlen)
                err[0] = '\0';
        if (!text || !ret)
                return -EINVAL;
        if (sodium_init() < 0)
                return -EIO;
        memset(&cp, 0, sizeof(cp));
        o = json_loads(text, JSON_REJECT_DUPLICATES, &je);
        if (!o || !json_is_object(o)) {
                snprintf(err ? err : msg, err ? errlen : sizeof(msg), "not a JSON object: %s",
                         o ? "" : je.text);
                goto out;
        }
        seq = json_object_get(o, "seq");
        tm = json_object_get(o, "time_ms");
        if (!json_is_string(json_object_get(o, "kind")) ||
            strcmp(json_string_value(json_object_get(o, "kind")), CP_KIND) != 0 ||
            json_integer_value(json_object_get(o, "version")) != 1 || !json_is_integer(seq) ||
            json_integer_value(seq) < 0 || !json_is_integer(tm) ||
            hexfield(o, "hash", cp.hash, sizeof(cp.hash)) < 0 ||
            hexfield(o, "public_key", cp.public_key, sizeof(cp.public_key)) < 0 ||
            hexfield(o, "signature", cp.signature, sizeof(cp.signature)) < 0) {
                if (err && errlen)
                        snprintf(err, errlen,
                                 "not a kerf audit checkpoint (kind, version 1, seq, hash, "
                                 "time_ms, public_key, signature)");
                goto out;
        }
        cp.seq = (uint64_t)json_integer_value(seq);
        cp.time_ms = (int64_t)json_integer_value(tm);
        r = -KERF_EPERM;
        if (public_key && strcmp(public_key, cp.public_key) != 0) {
                if (err && errlen)
                        snprintf(err, errlen,
                                 "the checkpoint is signed by key %.16s..., not by %.16s...",
                                 cp.public_key, public_key);
                goto out;
        }
        sodium_hex2bin(pk, sizeof(pk), cp.public_key, 2 * sizeof(pk), NULL, NULL, NULL);
        sodium_hex2bin(sig, sizeof(sig), cp.signature, 2 * sizeof(sig), NULL, NULL, NULL);
        cp_message(&cp, msg, sizeof(msg));
        if (crypto_sign_verify_detached(sig, (const unsigned char *)msg, strlen(msg), pk) != 0) {
                if (err && errlen)
                        snprintf(err, errlen,
                                 "bad signature: the checkpoint was altered after it was made");
                goto out;
        }
        *ret = cp;
        r = 0;
out:
        json_decref(o);
        return r;
}

/* ---- offline verification of an export ------------------------------------------------- */

static void bad(kerf_store_audit_report *rep, uint64_t seq, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void bad(kerf_store_audit_report *rep, uint64_t seq, const char *fmt, ...)
{
        va_list ap;

        rep->ok = false;
        rep->first_bad = seq;
        va_start(ap, fmt);
        vsnprintf(rep->problem, sizeof(rep->problem), fmt, ap);
        va_end(ap);
}

static int str_field(json_t *o, const char *key, char *dst, size_t len)
{
        const char *v = json_string_value(json_object_get(o, key));

        if (!v || strlen(v) >= len)
                return -EINVAL;
        memcpy(dst, v, strlen(v) + 1);
        return 0;
}

/* One export line into a record; -EINVAL when a field is missing or too long. */
static int parse_line(const char *line, kerf_store_audit *r)
{
        json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, NULL), *seq, *tm;
        int q = -EINVAL;

        memset(r, 0, sizeof(*r));
        if (!o)
                return -EINVAL;
        seq = json_object_get(o, "seq");
        tm = json_object_get(o, "time_ms");
        if (json_is_integer(seq) && json_integer_value(seq) > 0 && json_is_integer(tm) &&
            !str_field(o, "actor", r->actor, sizeof(r->actor)) &&
            !str_field(o, "tenant", r->tenant, sizeof(r->tenant)) &&
            !str_field(o, "action", r->action, sizeof(r->action)) &&
            !str_field(o, "object", r->object, sizeof(r->object)) &&
            !str_field(o, "result", r->result, sizeof(r->result)) &&
            !str_field(o, "reason", r->reason, sizeof(r->reason)) &&
            !str_field(o, "gpu_uuid", r->gpu_uuid, sizeof(r->gpu_uuid)) &&
            !str_field(o, "driver", r->driver, sizeof(r->driver)) &&
            !str_field(o, "cuda", r->cuda, sizeof(r->cuda)) &&
            !str_field(o, "kerf", r->kerf, sizeof(r->kerf)) &&
            !str_field(o, "prev_hash", r->prev_hash, sizeof(r->prev_hash)) &&
            !str_field(o, "hash", r->hash, sizeof(r->hash)) &&
            (!json_object_get(o, "node") || !str_field(o, "node", r->node, sizeof(r->node)))) {
                r->seq = (uint64_t)json_integer_value(seq);
                r->time_ms = (int64_t)json_integer_value(tm);
                q = 0;
        }
        json_decref(o);
        return q;
}

int kerf_store_audit_verify_file(FILE *in, const kerf_store_checkpoint *cp,
                                 kerf_store_audit_report *ret)
{
        kerf_store_audit_report rep = {.ok = true};
        char prev[KERF_STORE_HASH_HEX] = ZERO_HASH;
        kerf_store_audit r;
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        bool cp_seen = !cp || cp->seq == 0;

        if (!in || !ret)
                return -EINVAL;
        if (cp && cp->seq == 0 && strcmp(cp->hash, ZERO_HASH) != 0)
                return -EINVAL;
        while (rep.ok && (len = getline(&line, &cap, in)) >= 0) {
                if (len <= 1 && (len == 0 || line[0] == '\n'))
                        continue;
                if (parse_line(line, &r) < 0) {
                        bad(&rep, rep.records + 1,
                            "line %" PRIu64 " is not an audit record of kerf audit export",
                            rep.records + 1);
                        break;
                }
                rep.records++;
                if (r.seq != rep.records) {
                        if (r.seq > rep.records)
                                bad(&rep, rep.records,
                                    "record seq %" PRIu64 " is missing (deleted, or the export "
                                    "was filtered by tenant); the next is seq %" PRIu64,
                                    rep.records, r.seq);
                        else
                                bad(&rep, r.seq,
                                    "seq %" PRIu64 " out of order (expected %" PRIu64 ")", r.seq,
                                    rep.records);
                        break;
                }
                if (!kerf__audit_linked(&r, prev, &rep))
                        break;
                if (cp && r.seq == cp->seq) {
                        cp_seen = true;
                        if (strcmp(r.hash, cp->hash) != 0) {
                                bad(&rep, r.seq,
                                    "record %" PRIu64
                                    " is not the one checkpointed (hash %.16s..., "
                                    "checkpoint %.16s...): the chain was rewritten",
                                    r.seq, r.hash, cp->hash);
                                break;
                        }
                }
                memcpy(prev, r.hash, sizeof(prev));
        }
        free(line);
        if (ferror(in))
                return -EIO;
        if (rep.ok && !cp_seen)
                bad(&rep, rep.records + 1,
                    "the chain ends after %" PRIu64 " records but the checkpoint of %" PRIu64
                    " says record %" PRIu64 " existed: the tail was truncated",
                    rep.records, cp->seq, cp->seq);
        *ret = rep;
        return 0;
}
