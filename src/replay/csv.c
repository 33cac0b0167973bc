/* SPDX-License-Identifier: Apache-2.0 */
/* csv.c - a small strict reader for the openb node and pod lists (plain comma-separated with a
 * header line; no quoting) */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "kerf/errno.h"
#include "replay.h"

#define MAX_COLS 32
#define MAX_LINE 4096

/* A line split into fields; the fields point into `buf`. */
typedef struct csvrow {
        char buf[MAX_LINE];
        char *f[MAX_COLS];
        unsigned n;
} csvrow;

typedef struct csvin {
        const char *p, *end;
        const char *fname;
        unsigned line;
        char *err;
        size_t errlen;
} csvin;

static int fail(csvin *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(csvin *in, const char *fmt, ...)
{
        if (in->err && in->errlen) {
                int k = snprintf(in->err, in->errlen, "%s:%u: ", in->fname, in->line);
                if (k >= 0 && (size_t)k < in->errlen) {
                        va_list ap;
                        va_start(ap, fmt);
                        vsnprintf(in->err + k, in->errlen - (size_t)k, fmt, ap);
                        va_end(ap);
                }
        }
        return -KERF_EPARSE;
}

/* Reads the next non-empty line into *row. Returns 1, 0 at the end, or -KERF_EPARSE. */
static int next_row(csvin *in, csvrow *row)
{
        for (;;) {
                if (in->p >= in->end)
                        return 0;
                const char *nl = memchr(in->p, '\n', (size_t)(in->end - in->p));
                const char *e = nl ? nl : in->end;
                in->line++;
                size_t n = (size_t)(e - in->p);
                const char *s = in->p;
                in->p = nl ? nl + 1 : in->end;
                if (n && s[n - 1] == '\r')
                        n--;
                if (n == 0)
                        continue;
                if (n >= MAX_LINE)
                        return fail(in, "line longer than %d characters", MAX_LINE - 1);
                memcpy(row->buf, s, n);
                row->buf[n] = '\0';
                if (memchr(row->buf, '\0', n) || strchr(row->buf, '"'))
                        return fail(in, "quotes and NUL bytes are not supported");
                row->n = 0;
                char *c = row->buf;
                for (;;) {
                        if (row->n == MAX_COLS)
                                return fail(in, "more than %d fields", MAX_COLS);
                        row->f[row->n++] = c;
                        char *comma = strchr(c, ',');
                        if (!comma)
                                break;
                        *comma = '\0';
                        c = comma + 1;
                }
                return 1;
        }
}

/* Column index of `name` in the header, or -1. */
static int col(const csvrow *h, const char *name)
{
        for (unsigned i = 0; i < h->n; i++)
                if (strcmp(h->f[i], name) == 0)
                        return (int)i;
        return -1;
}

static int need_cols(csvin *in, const csvrow *h, const char *const *names, int *idx, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                idx[i] = col(h, names[i]);
                if (idx[i] < 0)
                        return fail(in, "header lacks column '%s'", names[i]);
        }
        return 0;
}

/* Strict unsigned decimal: digits only, no sign, no spaces, at most `max`. */
static int num(csvin *in, const csvrow *r, int c, const char *what, uint64_t max, uint64_t *ret)
{
        const char *s = r->f[c];
        if (!*s)
                return fail(in, "%s is empty", what);
        uint64_t v = 0;
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return fail(in, "%s '%s' is not a non-negative integer", what, s);
                if (v > (max - (uint64_t)(*p - '0')) / 10)
                        return fail(in, "%s '%s' is larger than %llu", what, s,
                                    (unsigned long long)max);
                v = v * 10 + (uint64_t)(*p - '0');
        }
        *ret = v;
        return 0;
}

static int read_file(const char *path, char **ret, size_t *ret_len, char *err, size_t errlen)
{
        int rc = kerf_file_read_all(path, SIZE_MAX - 1, ret, ret_len);
        if (rc < 0 && err)
                snprintf(err, errlen, "%s: %s", path, strerror(-rc));
        return rc;
}

/* ---- node list --------------------------------------------------------------------------- */

int kerf_replay_nodes_parse(const char *text, size_t len, const char *fname, kerf_fleet **ret,
                            char *err, size_t errlen)
{
        static const char *const names[] = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
        csvin in = {text, text + len, fname ? fname : "nodes", 0, err, errlen};
        csvrow *row = malloc(sizeof(*row));
        kerf_fleet *f = NULL;
        int idx[5], rc;
        if (!row || kerf_fleet_new(&f) < 0) {
                rc = -ENOMEM;
                goto out;
        }
        rc = next_row(&in, row);
        if (rc == 0)
                rc = fail(&in, "empty file (a header line is needed)");
        if (rc < 0 || (rc = need_cols(&in, row, names, idx, 5)) < 0)
                goto out;
        unsigned ncols = row->n;
        while ((rc = next_row(&in, row)) > 0) {
                uint64_t cpu, mem, ngpu;
                if (row->n != ncols) {
                        rc = fail(&in, "%u fields, the header has %u", row->n, ncols);
                        goto out;
                }
                if ((rc = num(&in, row, idx[1], "cpu_milli", UINT64_MAX / 2, &cpu)) < 0 ||
                    (rc = num(&in, row, idx[2], "memory_mib", UINT64_MAX / KERF_MIB, &mem)) < 0 ||
                    (rc = num(&in, row, idx[3], "gpu", KERF_MAX_NODE_GPUS, &ngpu)) < 0)
                        goto out;
                const char *mname = row->f[idx[4]];
                const kerf_gpu_model *m = kerf_gpu_model_find(mname);
                if (ngpu && !m) {
                        rc = fail(&in, "unknown GPU model '%s'", mname);
                        goto out;
                }
                int node = kerf_fleet_add_node(f, row->f[idx[0]], cpu, mem * KERF_MIB, NULL, 0);
                if (node < 0) {
                        rc = node == -ENOMEM
                                 ? -ENOMEM
                                 : fail(&in, "bad or duplicate node name '%s'", row->f[idx[0]]);
                        goto out;
                }
                for (uint64_t g = 0; g < ngpu; g++) {
                        int gi = kerf_fleet_add_gpu(f, (unsigned)node, m, false, -1, NULL);
                        if (gi < 0) {
                                rc = gi == -ENOMEM
                                         ? -ENOMEM
                                         : fail(&in, "cannot add GPU %llu", (unsigned long long)g);
                                goto out;
                        }
                }
        }
        if (rc < 0)
                goto out;
        if (f->n_gpus == 0) {
                rc = fail(&in, "no GPUs in the node list");
                goto out;
        }
        *ret = f;
        f = NULL;
        rc = 0;
out:
        if (rc == -ENOMEM && err && errlen)
                snprintf(err, errlen, "%s: out of memory", in.fname);
        kerf_fleet_free(f);
        free(row);
        return rc;
}

int kerf_replay_nodes_load(const char *path, kerf_fleet **ret, char *err, size_t errlen)
{
        char *buf;
        size_t len;
        int rc = read_file(path, &buf, &len, err, errlen);
        if (rc < 0)
                return rc;
        rc = kerf_replay_nodes_parse(buf, len, path, ret, err, errlen);
        free(buf);
        return rc;
}

/* ---- pod list ---------------------------------------------------------------------------- */

static int spec_mask(csvin *in, const char *spec, uint64_t *ret)
{
        uint64_t mask = 0;
        char tmp[MAX_LINE];
        snprintf(tmp, sizeof(tmp), "%s", spec);
        char *save = NULL;
        if (!*tmp) {
                *ret = 0;
                return 0;
        }
        if (tmp[0] == '|' || tmp[strlen(tmp) - 1] == '|' || strstr(tmp, "||"))
                return fail(in, "gpu_spec '%s' has an empty model name", spec);
        for (char *tok = strtok_r(tmp, "|", &save); tok; tok = strtok_r(NULL, "|", &save)) {
                const kerf_gpu_model *m = kerf_gpu_model_find(tok);
                int mi = m ? kerf_gpu_model_index(m) : -1;
                if (mi < 0 || mi >= 64)
                        return fail(in, "gpu_spec names unknown GPU model '%s'", tok);
                mask |= 1ULL << mi;
        }
        *ret = mask;
        return 0;
}

int kerf_replay_pods_parse(const char *text, size_t len, const char *fname, kerf_replay_pod **ret,
                           size_t *ret_n, char *err, size_t errlen)
{
        static const char *const names[] = {"name", "cpu_milli", "memory_mib", "num_gpu",
                                            "gpu_milli"};
        csvin in = {text, text + len, fname ? fname : "pods", 0, err, errlen};
        csvrow *row = malloc(sizeof(*row));
        kerf_replay_pod *v = NULL;
        size_t n = 0, cap = 0;
        int idx[5], rc;
        if (!row) {
                rc = -ENOMEM;
                goto out;
        }
        rc = next_row(&in, row);
        if (rc == 0)
                rc = fail(&in, "empty file (a header line is needed)");
        if (rc < 0 || (rc = need_cols(&in, row, names, idx, 5)) < 0)
                goto out;
        int ispec = col(row, "gpu_spec");
        unsigned ncols = row->n;
        while ((rc = next_row(&in, row)) > 0) {
                kerf_replay_pod p;
                uint64_t ng, gm;
                memset(&p, 0, sizeof(p));
                if (row->n != ncols) {
                        rc = fail(&in, "%u fields, the header has %u", row->n, ncols);
                        goto out;
                }
                const char *nm = row->f[idx[0]];
                if (!*nm || strlen(nm) >= sizeof(p.name)) {
                        rc = fail(&in, "name must be 1..%zu characters", sizeof(p.name) - 1);
                        goto out;
                }
                snprintf(p.name, sizeof(p.name), "%s", nm);
                if ((rc = num(&in, row, idx[1], "cpu_milli", UINT64_MAX / 2, &p.cpu_milli)) < 0 ||
                    (rc = num(&in, row, idx[2], "memory_mib", UINT64_MAX / KERF_MIB, &p.mem_mib)) <
                        0 ||
                    (rc = num(&in, row, idx[3], "num_gpu", KERF_MAX_TASK_GPUS, &ng)) < 0 ||
                    (rc = num(&in, row, idx[4], "gpu_milli", 1000, &gm)) < 0)
                        goto out;
                p.num_gpu = (unsigned)ng;
                p.gpu_milli = (unsigned)gm;
                if (ng == 0 && gm != 0) {
                        rc = fail(&in, "gpu_milli %u without GPUs (num_gpu 0)", p.gpu_milli);
                        goto out;
                }
                if (ng > 0 && gm == 0) {
                        rc = fail(&in, "num_gpu %u with gpu_milli 0", p.num_gpu);
                        goto out;
                }
                if (ng > 1 && gm != 1000) {
                        rc = fail(&in, "num_gpu %u needs gpu_milli 1000 (shares are single-GPU)",
                                  p.num_gpu);
                        goto out;
                }
                if (ispec >= 0 && (rc = spec_mask(&in, row->f[ispec], &p.model_mask)) < 0)
                        goto out;
                if (n == cap) {
                        size_t nc = cap ? cap * 2 : 1024;
                        kerf_replay_pod *nv = realloc(v, nc * sizeof(*nv));
                        if (!nv) {
                                rc = -ENOMEM;
                                goto out;
                        }
                        v = nv;
                        cap = nc;
                }
                v[n++] = p;
        }
        if (rc < 0)
                goto out;
        if (n == 0) {
                rc = fail(&in, "no pods after the header");
                goto out;
        }
        *ret = v;
        *ret_n = n;
        v = NULL;
        rc = 0;
out:
        if (rc == -ENOMEM && err && errlen)
                snprintf(err, errlen, "%s: out of memory", in.fname);
        free(v);
        free(row);
        return rc;
}

int kerf_replay_pods_load(const char *path, kerf_replay_pod **ret, size_t *ret_n, char *err,
                          size_t errlen)
{
        char *buf;
        size_t len;
        int rc = read_file(path, &buf, &len, err, errlen);
        if (rc < 0)
                return rc;
        rc = kerf_replay_pods_parse(buf, len, path, ret, ret_n, err, errlen);
        free(buf);
        return rc;
}
