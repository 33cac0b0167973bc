/* SPDX-License-Identifier: Apache-2.0 */
/* gres.c - Slurm's gpu index on a node mapped back to kerfd's GPUs and MIG instances, the way
 * `kerf slurm gres-conf` wrote gres.conf */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerf/shard.h"
#include "spank_kerf.h"

unsigned kerf_spank_count_list(const char *s)
{
        unsigned n = 1;
        for (; *s; s++)
                n += *s == ',';
        return n;
}

int kerf_spank_gpu_memory(const char *sock, uint64_t *ret, char *err, size_t errlen)
{
        long st = 0;
        json_t *j = NULL, *g0;
        int r = kerf_spank_http(sock, "GET", "/v1/gpus?limit=1", NULL, KERF_SPANK_HTTP_TIMEOUT_MS,
                                &st, &j, err, errlen);
        if (r < 0)
                return r;
        g0 = json_array_get(json_object_get(j, "items"), 0);
        if (st != 200 || !json_is_integer(json_object_get(g0, "memory_total"))) {
                snprintf(err, errlen, "GET /v1/gpus answered %ld without a GPU", st);
                json_decref(j);
                return -EPROTO;
        }
        *ret = (uint64_t)json_integer_value(json_object_get(g0, "memory_total"));
        json_decref(j);
        return 0;
}

/* Slurm 22.05 gives a step only the index of its gpu in the node's gres list, not the type:
 * the index is counted through gres.conf's order as `kerf slurm gres-conf` wrote it. */
int kerf_spank_gres_grant(const char *sock, const char *cvd, char *prof, size_t plen, char *uuid,
                          size_t ulen)
{
        char err[256], *end;
        long st1 = 0, st2 = 0, idx = strtol(cvd, &end, 10), nwhole = 0;
        json_t *gpus = NULL, *node = NULL, *v, *sorted[64], *items;
        size_t i, nm = 0;
        int r = -ENOENT;

        if (!*cvd || *end || idx < 0 ||
            kerf_spank_http(sock, "GET", "/v1/gpus?limit=1000", NULL, KERF_SPANK_HTTP_TIMEOUT_MS,
                            &st1, &gpus, err, sizeof(err)) < 0 ||
            kerf_spank_http(sock, "GET", "/v1/node", NULL, KERF_SPANK_HTTP_TIMEOUT_MS, &st2, &node,
                            err, sizeof(err)) < 0 ||
            st1 != 200 || st2 != 200)
                goto out;
        items = json_object_get(gpus, "items");
        json_array_foreach(items, i, v)
        {
                const char *mode = json_string_value(json_object_get(v, "mode"));
                if (mode && strcmp(mode, "mig") != 0 && nwhole++ == idx &&
                    json_is_string(json_object_get(v, "uuid"))) {
                        snprintf(uuid, ulen, "%s", json_string_value(json_object_get(v, "uuid")));
                        r = 0;
                }
        }
        if (r == 0)
                goto out;
        /* as gres-conf: an instance without its device caps is left out of gres.conf */
        json_array_foreach(json_object_get(node, "mig"), i, v)
        {
                if (nm < 64 && json_is_string(json_object_get(v, "gi_cap")) &&
                    json_is_string(json_object_get(v, "ci_cap")))
                        sorted[nm++] = v;
        }
        qsort(sorted, nm, sizeof(sorted[0]), kerf_gres_mig_cmp);
        if (idx >= nwhole && (size_t)(idx - nwhole) < nm &&
            json_is_string(json_object_get(sorted[idx - nwhole], "profile"))) {
                json_t *m = sorted[idx - nwhole];
                snprintf(prof, plen, "%s", json_string_value(json_object_get(m, "profile")));
                /* the instance itself (its MIG- UUID): kerfd gives the task exactly that one */
                snprintf(uuid, ulen, "%s",
                         json_is_string(json_object_get(m, "uuid"))
                             ? json_string_value(json_object_get(m, "uuid"))
                             : "");
                r = 1;
        }
out:
        json_decref(gpus);
        json_decref(node);
        return r;
}

json_t *kerf_spank_gres_uuids(const char *sock, const char *cvd)
{
        char list[256], *save = NULL, prof[64], uuid[96];
        json_t *a = json_array();
        bool ok = a != NULL;
        snprintf(list, sizeof(list), "%s", cvd);
        for (char *e = strtok_r(list, ",", &save); ok && e; e = strtok_r(NULL, ",", &save))
                ok = kerf_spank_gres_grant(sock, e, prof, sizeof(prof), uuid, sizeof(uuid)) == 0 &&
                     json_array_append_new(a, json_string(uuid)) == 0;
        if (ok)
                return a;
        json_decref(a);
        return NULL;
}

void kerf_spank_pin_all(const char *sock, json_t *req, const char *cvd)
{
        json_t *a = kerf_spank_gres_uuids(sock, cvd);
        if (a)
                json_object_set_new(req, "gpu_uuids", a);
}

/* the position of `entry` in the comma-separated `list`, or -1 */
static int list_pos(const char *list, const char *entry, size_t elen)
{
        int pos = 0;
        for (const char *p = list;; pos++) {
                const char *c = strchr(p, ',');
                size_t l = c ? (size_t)(c - p) : strlen(p);
                if (l == elen && !strncmp(p, entry, elen))
                        return pos;
                if (!c)
                        return -1;
                p = c + 1;
        }
}

int kerf_spank_bind_uuids(const char *grant, json_t *uuids, const char *bound, char *buf,
                          size_t len)
{
        char out[2048]; /* buf is written only on success */
        size_t o = 0;
        if (!grant || !bound || !*bound || !strcmp(grant, bound) || !json_is_array(uuids) ||
            json_array_size(uuids) != kerf_spank_count_list(grant))
                return -ENOENT;
        for (const char *p = bound;;) {
                const char *c = strchr(p, ',');
                size_t l = c ? (size_t)(c - p) : strlen(p);
                int pos = list_pos(grant, p, l);
                const char *u =
                    pos >= 0 ? json_string_value(json_array_get(uuids, (size_t)pos)) : NULL;
                if (!l || !u)
                        return -ENOENT;
                int n = snprintf(out + o, sizeof(out) - o, "%s%s", o ? "," : "", u);
                if (n < 0 || (size_t)n >= sizeof(out) - o)
                        return -ENAMETOOLONG;
                o += (size_t)n;
                if (!c)
                        break;
                p = c + 1;
        }
        if (o >= len)
                return -ENAMETOOLONG;
        memcpy(buf, out, o + 1);
        return 0;
}
