/* SPDX-License-Identifier: Apache-2.0 */
/* poc_report.c - the POC evidence: report.json, audit.ndjson, checkpoint.json, report.md and
 * report.html written atomically into the out dir, with the SHA-256 of every cited file. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "fileio.h"
#include "poc.h"
#include "poc_report_int.h"

#define POC_FILE_MAX ((size_t)1 << 30) /* a cited file larger than 1 GiB is not read whole */

static void seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;

        if (!err || !errlen)
                return;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
}

/* ---- files ------------------------------------------------------------------------------ */

int poc__write_atomic(const char *dir, const char *name, const char *data, size_t len, char *err,
                      size_t errlen)
{
        char tmp[4400], dst[4400];
        int fd, dfd, r = 0;

        if (!dir || !name || !*name || strchr(name, '/') || (!data && len)) {
                seterr(err, errlen, "write: bad file name '%s'", name ? name : "(null)");
                return -EINVAL;
        }
        if (snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name) >= (int)sizeof(tmp) ||
            snprintf(dst, sizeof(dst), "%s/%s", dir, name) >= (int)sizeof(dst)) {
                seterr(err, errlen, "%s/%s: path too long", dir, name);
                return -ENAMETOOLONG;
        }
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
                r = -errno;
                seterr(err, errlen, "%s: %s", tmp, strerror(errno));
                return r;
        }
        for (size_t off = 0; off < len;) {
                ssize_t n = write(fd, data + off, len - off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        r = n < 0 ? -errno : -EIO;
                        seterr(err, errlen, "%s: write: %s", tmp, strerror(-r));
                        break;
                }
                off += (size_t)n;
        }
        if (!r && fsync(fd) < 0) {
                r = -errno;
                seterr(err, errlen, "%s: fsync: %s", tmp, strerror(errno));
        }
        if (close(fd) < 0 && !r) {
                r = -errno;
                seterr(err, errlen, "%s: close: %s", tmp, strerror(errno));
        }
        if (!r && rename(tmp, dst) < 0) {
                r = -errno;
                seterr(err, errlen, "rename %s -> %s: %s", tmp, dst, strerror(errno));
        }
        if (r) {
                unlink(tmp);
                return r;
        }
        /* the rename itself must survive a crash too */
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
                if (fsync(dfd) < 0 && errno != EINVAL)
                        r = -errno;
                close(dfd);
        }
        if (r)
                seterr(err, errlen, "%s: fsync: %s", dir, strerror(-r));
        return r;
}

char *poc__read_file(const char *path, size_t *ret_len)
{
        char *buf = NULL;
        size_t len = 0;
        int r = kerf_file_read_all(path, POC_FILE_MAX, &buf, &len);

        if (r < 0) {
                errno = -r;
                return NULL;
        }
        if (ret_len)
                *ret_len = len;
        return buf;
}

static void to_hex(const unsigned char *d, size_t n, char *hex)
{
        static const char digits[] = "0123456789abcdef";

        for (size_t i = 0; i < n; i++) {
                hex[2 * i] = digits[d[i] >> 4];
                hex[2 * i + 1] = digits[d[i] & 15];
        }
        hex[2 * n] = '\0';
}

void poc__sha256_hex(const void *data, size_t len, char hex[POC_SHA256_HEX])
{
        unsigned char d[crypto_hash_sha256_BYTES];

        crypto_hash_sha256(d, data, len);
        to_hex(d, sizeof(d), hex);
}

int poc__sha256_file(const char *path, char hex[POC_SHA256_HEX])
{
        crypto_hash_sha256_state st;
        unsigned char d[crypto_hash_sha256_BYTES], buf[65536];
        size_t n;
        FILE *f = fopen(path, "re");

        if (!f)
                return -errno;
        crypto_hash_sha256_init(&st);
        while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
                crypto_hash_sha256_update(&st, buf, n);
        if (ferror(f)) {
                fclose(f);
                return -EIO;
        }
        fclose(f);
        crypto_hash_sha256_final(&st, d);
        to_hex(d, sizeof(d), hex);
        return 0;
}

bool poc__path_inside(const char *path)
{
        const char *s = path;

        if (!path || !*path || *path == '/')
                return false;
        while (*s) {
                size_t n = strcspn(s, "/");
                if (n == 2 && s[0] == '.' && s[1] == '.')
                        return false;
                s += n;
                while (*s == '/')
                        s++;
        }
        return true;
}

/* ---- the rules shared with verify -------------------------------------------------------- */

const char *poc__str(const json_t *o, const char *key)
{
        const char *s = json_string_value(json_object_get(o, key));
        return s ? s : "";
}

void poc__num(FILE *f, const json_t *v)
{
        if (json_is_integer(v))
                fprintf(f, "%lld", (long long)json_integer_value(v));
        else if (json_is_real(v))
                fprintf(f, "%.6g", json_real_value(v));
        else
                fputs("-", f);
}

int poc__measure_holds(double value, const char *op, double threshold)
{
        if (!op)
                return -1;
        if (!strcmp(op, "<="))
                return value <= threshold;
        if (!strcmp(op, ">="))
                return value >= threshold;
        if (!strcmp(op, "=="))
                return value == threshold;
        return -1;
}

const char *poc_verdict_of(const json_t *rec)
{
        const json_t *ms = json_object_get(rec, "measures");
        const json_t *sk = json_object_get(rec, "skipped");
        size_t i, measured = json_array_size(ms);
        json_t *m;

        json_array_foreach(ms, i, m)
        {
                const json_t *v = json_object_get(m, "value"), *t = json_object_get(m, "threshold");
                if (!json_is_number(v) || !json_is_number(t) ||
                    poc__measure_holds(json_number_value(v),
                                       json_string_value(json_object_get(m, "op")),
                                       json_number_value(t)) != 1)
                        return POC_FAIL;
        }
        if (!measured && json_array_size(sk))
                return POC_SKIPPED;
        return POC_PASS;
}

static void add_cited(json_t *files, const json_t *path)
{
        size_t i;
        json_t *f;

        if (!json_is_string(path) || json_string_value(path)[0] == '/')
                return;
        json_array_foreach(files, i, f) if (json_equal(f, path)) return;
        json_array_append(files, (json_t *)path);
}

json_t *poc__cited_files(const json_t *records)
{
        json_t *files = json_array(), *rec, *e;
        size_t i, j;

        json_array_foreach(records, i, rec)
        {
                json_array_foreach(json_object_get(rec, "logs"), j, e)
                {
                        add_cited(files, json_object_get(e, "stdout"));
                        add_cited(files, json_object_get(e, "stderr"));
                }
                json_array_foreach(json_object_get(rec, "metrics"), j, e)
                    add_cited(files, json_object_get(e, "file"));
        }
        return files;
}

json_t *poc__series_lines(const char *name, const json_t *series)
{
        json_t *lines = json_object(), *src = json_object_get(series, "lines");
        const char *k;
        json_t *v;

        if (json_is_object(src))
                json_object_foreach((json_t *)src, k, v) if (json_is_array(v))
                    json_object_set(lines, k, v);
        src = json_object_get(series, "points");
        if (json_is_array(src))
                json_object_set(lines, name, src);
        return lines;
}

json_t *poc_conclusions(const json_t *records)
{
        return poc__conclude(records, NULL);
}

static int64_t wall_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- evidence fetched from kerfd --------------------------------------------------------- */

/* METHOD PATH on kerfd: the body (heap) of a 2xx answer, else NULL with the status (0 when
 * kerfd could not be reached) and a description in why. */
static char *fetch(poc_ctx *p, const char *method, const char *path, long *status, char *why,
                   size_t whylen)
{
        kerf_client_response resp;
        char *body;
        int r;

        *status = 0;
        if (!p->client) {
                seterr(why, whylen, "%s %s: no connection to kerfd", method, path);
                return NULL;
        }
        r = kerf_client_call(p->client, method, path, NULL, &resp);
        if (r < 0) {
                seterr(why, whylen, "%s %s: %s", method, path, kerf_client_error(p->client));
                return NULL;
        }
        *status = resp.status;
        if (resp.status < 200 || resp.status > 299) {
                seterr(why, whylen, "%s %s: kerfd answered %ld: %.200s", method, path, resp.status,
                       resp.body ? resp.body : "");
                kerf_client_response_fini(&resp);
                return NULL;
        }
        body = resp.body;
        resp.body = NULL;
        kerf_client_response_fini(&resp);
        return body;
}

/* The cost of the run window from GET /v1/cost: {"available": true, ...kerfd's answer} or
 * {"available": false, "why": "..."}. */
static json_t *fetch_cost(poc_ctx *p, int64_t from_ms, int64_t to_ms)
{
        char path[128], why[512];
        long status;
        char *body;
        json_t *j;

        snprintf(path, sizeof(path), "/v1/cost?from_ms=%lld&to_ms=%lld", (long long)from_ms,
                 (long long)to_ms);
        body = fetch(p, "GET", path, &status, why, sizeof(why));
        if (!body) {
                if (status == 404)
                        snprintf(why, sizeof(why),
                                 "cost is not available from this kerfd (GET /v1/cost answered "
                                 "404)");
                return json_pack("{s:b, s:s}", "available", 0, "why", why);
        }
        j = json_loads(body, 0, NULL);
        free(body);
        if (!json_is_object(j)) {
                json_decref(j);
                return json_pack("{s:b, s:s}", "available", 0, "why",
                                 "GET /v1/cost answered something that is not a JSON object");
        }
        json_object_set_new(j, "available", json_true());
        return j;
}

static json_t *env_json(const poc_env *e)
{
        return json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:b, s:i, s:b}", "device", e->device,
                         "gpu_uuid", e->gpu_uuid, "driver", e->driver, "cuda", e->cuda, "kerf",
                         e->kerf, "simulated", e->simulated, "shim", e->shim, "n_gpus", e->n_gpus,
                         "mig_capable", e->mig_capable);
}

/* Digest of one file of the report directory; a cited file that is absent gets null (verify
 * then says so). */
static void digest_into(json_t *digests, const char *dir, const char *rel)
{
        char path[8400], hex[POC_SHA256_HEX];

        snprintf(path, sizeof(path), "%s/%s", dir, rel);
        if (poc__path_inside(rel) && poc__sha256_file(path, hex) == 0)
                json_object_set_new(digests, rel, json_string(hex));
        else
                json_object_set_new(digests, rel, json_null());
}

static int write_text(const char *dir, const char *name, char *text, char *err, size_t errlen)
{
        int r;

        if (!text) {
                seterr(err, errlen, "%s: out of memory", name);
                return -ENOMEM;
        }
        r = poc__write_atomic(dir, name, text, strlen(text), err, errlen);
        free(text);
        return r;
}

int poc_report_write(poc_ctx *p, char *err, size_t errlen)
{
        char why[512], first[1024] = "";
        long status;
        char *cp = NULL, *audit = NULL;
        json_t *report = NULL, *files, *digests, *cited, *f, *records, *cost, *run;
        int64_t end_ms = wall_ms();
        size_t i;
        int r = 0, rr;

        if (!p || !*p->out) {
                seterr(err, errlen, "report: no output directory");
                return -EINVAL;
        }
        if (sodium_init() < 0) {
                seterr(err, errlen, "report: libsodium failed to initialise");
                return -EIO;
        }
        records = p->records ? p->records : json_array();
        if (p->records)
                json_incref(records);
        if (!json_is_array(records)) {
                json_decref(records);
                seterr(err, errlen, "report: the records are not an array");
                return -EINVAL;
        }

        /* the checkpoint first: the export taken after it holds at least its seq, so the
         * checkpoint verifies against the export even when kerfd wrote more records between */
        files = json_object();
        cp = fetch(p, "POST", "/v1/audit/checkpoint", &status, why, sizeof(why));
        if (cp && (rr = poc__write_atomic(p->out, "checkpoint.json", cp, strlen(cp), why,
                                          sizeof(why))) == 0)
                json_object_set_new(files, "checkpoint", json_string("checkpoint.json"));
        else {
                r = r ? r : -EIO;
                snprintf(first, sizeof(first), "audit checkpoint: %s", why);
                json_object_set_new(files, "checkpoint", json_null());
        }
        audit = fetch(p, "GET", "/v1/audit/export", &status, why, sizeof(why));
        if (audit && (rr = poc__write_atomic(p->out, "audit.ndjson", audit, strlen(audit), why,
                                             sizeof(why))) == 0)
                json_object_set_new(files, "audit", json_string("audit.ndjson"));
        else {
                if (!r)
                        snprintf(first, sizeof(first), "audit export: %s", why);
                r = r ? r : -EIO;
                json_object_set_new(files, "audit", json_null());
        }
        free(cp);
        free(audit);
        json_object_set_new(files, "markdown", json_string("report.md"));
        json_object_set_new(files, "html", json_string("report.html"));

        cost = fetch_cost(p, p->t0_ms, end_ms);

        digests = json_object();
        cited = poc__cited_files(records);
        json_array_foreach(cited, i, f) digest_into(digests, p->out, json_string_value(f));
        json_decref(cited);
        if (json_is_string(json_object_get(files, "audit")))
                digest_into(digests, p->out, "audit.ndjson");
        if (json_is_string(json_object_get(files, "checkpoint")))
                digest_into(digests, p->out, "checkpoint.json");

        run = json_pack("{s:s, s:I, s:b, s:s, s:I, s:I, s:s?, s:s?, s:b}", "owner",
                        p->o.owner ? p->o.owner : "unknown", "seed", (json_int_t)p->o.seed, "quick",
                        p->o.quick, "route", p->o.route ? p->o.route : POC_ROUTE_BOTH, "start_ms",
                        (json_int_t)p->t0_ms, "end_ms", (json_int_t)end_ms, "only", p->o.only,
                        "suite", p->o.suite, "failed_any", p->failed > 0);
        report = json_pack("{s:s, s:i, s:o, s:o, s:O, s:o, s:o, s:o, s:o}", "kind", POC_REPORT_KIND,
                           "version", POC_REPORT_VERSION, "run", run, "env", env_json(&p->env),
                           "records", records, "cost", cost, "conclusions",
                           poc__conclude(records, cost), "files", files, "digests", digests);
        json_decref(records);
        if (!report) {
                seterr(err, errlen, "report: out of memory");
                return -ENOMEM;
        }

        rr = write_text(p->out, "report.json",
                        json_dumps(report, JSON_INDENT(1) | JSON_PRESERVE_ORDER), why, sizeof(why));
        if (!rr)
                rr = write_text(p->out, "report.md", poc__report_md(report), why, sizeof(why));
        if (!rr)
                rr = write_text(p->out, "report.html", poc__report_html(report), why, sizeof(why));
        json_decref(report);
        if (rr) {
                seterr(err, errlen, "report: %s", why);
                return rr;
        }
        if (r)
                seterr(err, errlen, "report written without its audit evidence: %s", first);
        return r;
}
