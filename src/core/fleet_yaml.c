/* SPDX-License-Identifier: Apache-2.0 */
/* fleet_yaml.c - the fleet description in YAML (docs/FLEET.md), read with libyaml's document API */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "kerf/core.h"
#include "kerf/errno.h"

#define MAX_NODE_REPLICAS 4096
#define MAX_LABEL         32

/* ---- parser state ----------------------------------------------------------------------- */

typedef struct ctx {
        yaml_document_t *doc;
        char *err;
        size_t errlen;
} ctx;

static unsigned line_of(const yaml_node_t *n)
{
        return (unsigned)n->start_mark.line + 1;
}

/* Writes "line N: ..." into the caller's buffer and returns -KERF_EPARSE. */
__attribute__((format(printf, 3, 4))) static int fail(ctx *c, const yaml_node_t *at,
                                                      const char *fmt, ...)
{
        va_list ap;
        int n;

        if (!c->err || c->errlen == 0)
                return -KERF_EPARSE;
        n = snprintf(c->err, c->errlen, "line %u: ", at ? line_of(at) : 1u);
        if (n >= 0 && (size_t)n < c->errlen) {
                va_start(ap, fmt);
                vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
                va_end(ap);
        }
        return -KERF_EPARSE;
}

static const char *scalar(const yaml_node_t *n)
{
        return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static const char *type_name(const yaml_node_t *n)
{
        switch (n->type) {
        case YAML_MAPPING_NODE:
                return "a mapping";
        case YAML_SEQUENCE_NODE:
                return "a list";
        default:
                return "a scalar";
        }
}

/* A scalar's text, or an error naming `key` when the node is a list/mapping. */
static int want_scalar(ctx *c, const yaml_node_t *v, const char *key, const char **ret)
{
        const char *s = scalar(v);

        if (!s)
                return fail(c, v, "'%s' must be a scalar, not %s", key, type_name(v));
        *ret = s;
        return 0;
}

/* Decimal integer in [lo, hi], the whole scalar, optionally signed. */
static int want_int(ctx *c, const yaml_node_t *v, const char *key, long long lo, long long hi,
                    long long *ret)
{
        const char *s = "";
        char *end;
        long long x;
        int r;

        r = want_scalar(c, v, key, &s);
        if (r < 0)
                return r;
        errno = 0;
        x = strtoll(s, &end, 10);
        if (!*s || *end || errno || (*s != '-' && (*s < '0' || *s > '9')))
                return fail(c, v, "'%s' must be an integer, got '%s'", key, s);
        if (x < lo || x > hi)
                return fail(c, v, "'%s' must be between %lld and %lld, got %lld", key, lo, hi, x);
        *ret = x;
        return 0;
}

static int want_bool(ctx *c, const yaml_node_t *v, const char *key, bool *ret)
{
        static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no",
                                                                               "off"};
        const char *s = "";
        int r;

        r = want_scalar(c, v, key, &s);
        if (r < 0)
                return r;
        for (size_t i = 0; i < 3; i++) {
                if (strcasecmp(s, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
                if (strcasecmp(s, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        }
        return fail(c, v, "'%s' must be true or false, got '%s'", key, s);
}

/* "112" or "0.5" CPUs -> milli-CPUs. */
static int want_cpus(ctx *c, const yaml_node_t *v, uint64_t *ret)
{
        uint64_t whole = 0, milli = 0;
        unsigned nd = 0, nf = 0;
        const char *s = "", *p;
        int r;

        r = want_scalar(c, v, "cpus", &s);
        if (r < 0)
                return r;
        for (p = s; *p >= '0' && *p <= '9'; p++, nd++)
                if (nd < 9)
                        whole = whole * 10 + (uint64_t)(*p - '0');
        if (*p == '.')
                for (p++; *p >= '0' && *p <= '9'; p++, nf++)
                        if (nf < 3)
                                milli = milli * 10 + (uint64_t)(*p - '0');
        if (nd == 0 || nd > 7 || nf > 3 || *p)
                return fail(c, v, "'cpus' must be a number of CPUs like 64 or 0.5, got '%s'", s);
        for (unsigned i = nf; i < 3; i++)
                milli *= 10;
        if (whole * 1000 + milli > KERF_MAX_CPU_MILLI)
                return fail(c, v, "'cpus' must be at most %llu, got '%s'",
                            KERF_MAX_CPU_MILLI / 1000, s);
        *ret = whole * 1000 + milli;
        return 0;
}

/* "12.4" -> 12040 (NVML encoding); a bare integer >= 1000 is taken as already encoded. */
static int want_cuda(ctx *c, const yaml_node_t *v, int *ret)
{
        unsigned major = 0, minor = 0, nmaj = 0, nmin = 0;
        const char *s = "", *p;
        int r;

        r = want_scalar(c, v, "cuda", &s);
        if (r < 0)
                return r;
        for (p = s; *p >= '0' && *p <= '9' && nmaj < 7; p++, nmaj++)
                major = major * 10 + (unsigned)(*p - '0');
        if (*p == '.')
                for (p++; *p >= '0' && *p <= '9' && nmin < 3; p++, nmin++)
                        minor = minor * 10 + (unsigned)(*p - '0');
        if (*p || nmaj == 0 || major == 0 || (p[-1] == '.'))
                goto bad;
        if (nmin == 0 && major >= 1000 && major <= 999990) {
                *ret = (int)major;
                return 0;
        }
        if (major < 100 && nmin <= 2) {
                *ret = (int)(major * 1000 + minor * 10);
                return 0;
        }
bad:
        return fail(c, v, "'cuda' must be a version like \"12.4\", got '%s'", s);
}

/* Checks that every key of mapping `m` is in `allowed` (NULL-terminated) and unique. */
static int check_keys(ctx *c, const yaml_node_t *m, const char *what, const char *const *allowed,
                      const char *allowed_list)
{
        for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
             p++) {
                yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
                const char *ks = scalar(k);
                bool ok = false;

                if (!ks)
                        return fail(c, k, "%s keys must be scalars", what);
                for (size_t i = 0; allowed[i]; i++)
                        ok = ok || strcmp(ks, allowed[i]) == 0;
                if (!ok)
                        return fail(c, k, "unknown key '%s' in %s (allowed: %s)", ks, what,
                                    allowed_list);
                for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < p; q++) {
                        const char *qs = scalar(yaml_document_get_node(c->doc, q->key));
                        if (qs && strcmp(qs, ks) == 0)
                                return fail(c, k, "duplicate key '%s' in %s", ks, what);
                }
        }
        return 0;
}

/* Value node for `key` in mapping `m`, or NULL. */
static yaml_node_t *get(ctx *c, const yaml_node_t *m, const char *key)
{
        for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
             p++) {
                const char *ks = scalar(yaml_document_get_node(c->doc, p->key));
                if (ks && strcmp(ks, key) == 0)
                        return yaml_document_get_node(c->doc, p->value);
        }
        return NULL;
}

/* 1..max-1 characters from '!' to '~', as kerf_fleet_add_node() wants. */
static bool printable_token(const char *s, size_t max)
{
        size_t n = strlen(s);

        if (n == 0 || n >= max)
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
                        return false;
        return true;
}

/* ---- GPUs and nodes --------------------------------------------------------------------- */

/* One entry of a node's `gpus` list, read once and applied to every replica. */
typedef struct gpu_spec {
        const yaml_node_t *at;
        const kerf_gpu_model *model;
        unsigned count;
        bool mig;
        int numa;
        char nvlink[MAX_LABEL]; /* "" = none */
        const char *uuid;
} gpu_spec;

static void known_models(char *buf, size_t len)
{
        size_t used = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < kerf_gpu_model_count() && used < len; i++) {
                int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                                 kerf_gpu_model_at(i)->name);
                if (n < 0)
                        break;
                used += (size_t)n;
        }
}

static int read_gpu(ctx *c, const yaml_node_t *m, gpu_spec *g)
{
        static const char *const keys[] = {"model", "count", "mig", "numa", "nvlink", "uuid", NULL};
        const char *s = "";
        yaml_node_t *v;
        long long x;
        int r;

        if (m->type != YAML_MAPPING_NODE)
                return fail(c, m,
                            "a GPU entry must be a mapping like {model: H200, count: 8}, not %s",
                            type_name(m));
        r = check_keys(c, m, "GPU entry", keys, "model, count, mig, numa, nvlink, uuid");
        if (r < 0)
                return r;
        memset(g, 0, sizeof(*g));
        g->at = m;
        g->count = 1;
        g->numa = -1;

        v = get(c, m, "model");
        if (!v)
                return fail(c, m, "GPU entry has no 'model'");
        r = want_scalar(c, v, "model", &s);
        if (r < 0)
                return r;
        g->model = kerf_gpu_model_find(s);
        if (!g->model) {
                char known[512];
                known_models(known, sizeof(known));
                return fail(c, v, "unknown GPU model '%s' (known: %s)", s, known);
        }
        if ((v = get(c, m, "count"))) {
                r = want_int(c, v, "count", 1, KERF_MAX_NODE_GPUS, &x);
                if (r < 0)
                        return r;
                g->count = (unsigned)x;
        }
        if ((v = get(c, m, "mig"))) {
                r = want_bool(c, v, "mig", &g->mig);
                if (r < 0)
                        return r;
                if (g->mig && !kerf_gpu_model_has_mig(g->model))
                        return fail(c, v, "GPU model '%s' does not support MIG", g->model->name);
        }
        if ((v = get(c, m, "numa"))) {
                r = want_int(c, v, "numa", -1, 1023, &x);
                if (r < 0)
                        return r;
                g->numa = (int)x;
        }
        if ((v = get(c, m, "nvlink"))) {
                r = want_scalar(c, v, "nvlink", &s);
                if (r < 0)
                        return r;
                if (!*s || strlen(s) >= MAX_LABEL)
                        return fail(c, v, "'nvlink' label must be 1..%d characters", MAX_LABEL - 1);
                snprintf(g->nvlink, sizeof(g->nvlink), "%s", s);
        }
        if ((v = get(c, m, "uuid"))) {
                r = want_scalar(c, v, "uuid", &g->uuid);
                if (r < 0)
                        return r;
                if (g->count != 1)
                        return fail(c, v, "'uuid' needs 'count: 1'");
                if (strncmp(g->uuid, "GPU-", 4) != 0 || !g->uuid[4] ||
                    !printable_token(g->uuid, KERF_UUID_LEN))
                        return fail(c, v, "'uuid' must look like GPU-xxxxxxxx-..., got '%s'",
                                    g->uuid);
        }
        return 0;
}

/* Adds one node instance with all its GPUs, then joins GPUs that share an nvlink label. */
static int add_instance(ctx *c, kerf_fleet *f, const yaml_node_t *at, const char *name,
                        uint64_t cpu_milli, uint64_t mem, const char *driver, int cuda,
                        const gpu_spec *gs, size_t ngs)
{
        char label[KERF_MAX_NODE_GPUS][MAX_LABEL];
        unsigned first, k = 0;
        int node, r;

        node = kerf_fleet_add_node(f, name, cpu_milli, mem, driver, cuda);
        if (node == -ENOMEM)
                return node;
        if (node < 0) {
                if (strlen(name) >= KERF_NAME_LEN)
                        return fail(c, at, "node name '%s' is longer than %d characters", name,
                                    KERF_NAME_LEN - 1);
                for (size_t i = 0; i < f->n_nodes; i++)
                        if (strcmp(f->nodes[i].name, name) == 0)
                                return fail(c, at, "duplicate node name '%s'", name);
                return fail(c, at, "invalid node name '%s' (printable, no spaces)", name);
        }
        first = (unsigned)f->n_gpus;
        for (size_t i = 0; i < ngs; i++) {
                for (unsigned j = 0; j < gs[i].count; j++, k++) {
                        r = kerf_fleet_add_gpu(f, (unsigned)node, gs[i].model, gs[i].mig,
                                               gs[i].numa, gs[i].uuid);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                return fail(c, gs[i].at, "GPU uuid '%s' is used twice",
                                            gs[i].uuid ? gs[i].uuid : "(derived)");
                        memcpy(label[k], gs[i].nvlink, MAX_LABEL);
                }
        }
        for (unsigned a = 0; a < k; a++)
                for (unsigned b = a + 1; b < k; b++)
                        if (label[a][0] && strcmp(label[a], label[b]) == 0)
                                (void)kerf_fleet_link(f, first + a, first + b);
        return 0;
}

static int read_node(ctx *c, kerf_fleet *f, const yaml_node_t *m)
{
        static const char *const keys[] = {"name",   "count", "cpus", "cpu_milli", "memory",
                                           "driver", "cuda",  "gpus", NULL};
        const char *name = NULL, *driver = NULL, *s = "";
        gpu_spec gs[KERF_MAX_NODE_GPUS];
        uint64_t cpu_milli = 0, mem = 0;
        unsigned count = 1, total = 0;
        size_t ngs = 0;
        yaml_node_t *v;
        long long x;
        int cuda = 0, r;

        if (m->type != YAML_MAPPING_NODE)
                return fail(c, m, "a node must be a mapping with 'name' and 'gpus', not %s",
                            type_name(m));
        r = check_keys(c, m, "node", keys,
                       "name, count, cpus, cpu_milli, memory, driver, cuda, gpus");
        if (r < 0)
                return r;
        v = get(c, m, "name");
        if (!v)
                return fail(c, m, "node has no 'name'");
        r = want_scalar(c, v, "name", &name);
        if (r < 0)
                return r;
        if ((v = get(c, m, "count"))) {
                r = want_int(c, v, "count", 1, MAX_NODE_REPLICAS, &x);
                if (r < 0)
                        return r;
                count = (unsigned)x;
        }
        if (get(c, m, "cpus") && get(c, m, "cpu_milli"))
                return fail(c, get(c, m, "cpu_milli"),
                            "give either 'cpus' or 'cpu_milli', not both");
        if ((v = get(c, m, "cpus"))) {
                r = want_cpus(c, v, &cpu_milli);
                if (r < 0)
                        return r;
        }
        if ((v = get(c, m, "cpu_milli"))) {
                r = want_int(c, v, "cpu_milli", 0, (long long)KERF_MAX_CPU_MILLI, &x);
                if (r < 0)
                        return r;
                cpu_milli = (uint64_t)x;
        }
        if ((v = get(c, m, "memory"))) {
                r = want_scalar(c, v, "memory", &s);
                if (r < 0)
                        return r;
                char why[256];
                if (kerf_parse_size(s, &mem, why, sizeof(why)) < 0)
                        return fail(c, v, "'memory': %s", why);
                if (mem > KERF_MAX_MEM_BYTES)
                        return fail(c, v, "'memory': at most 1EiB, got '%s'", s);
        }
        if ((v = get(c, m, "driver"))) {
                r = want_scalar(c, v, "driver", &driver);
                if (r < 0)
                        return r;
                if (!printable_token(driver, sizeof(f->nodes[0].driver_version)))
                        return fail(c, v, "'driver' must be a version like \"550.54.15\", got '%s'",
                                    driver);
        }
        if ((v = get(c, m, "cuda"))) {
                r = want_cuda(c, v, &cuda);
                if (r < 0)
                        return r;
        }
        v = get(c, m, "gpus");
        if (v && v->type != YAML_SEQUENCE_NODE)
                return fail(c, v, "'gpus' must be a list, not %s", type_name(v));
        for (yaml_node_item_t *it = v ? v->data.sequence.items.start : NULL;
             v && it < v->data.sequence.items.top; it++) {
                yaml_node_t *gn = yaml_document_get_node(c->doc, *it);
                gpu_spec g;

                r = read_gpu(c, gn, &g);
                if (r < 0)
                        return r;
                total += g.count;
                if (total > KERF_MAX_NODE_GPUS)
                        return fail(c, gn, "node '%s' has more than %d GPUs", name,
                                    KERF_MAX_NODE_GPUS);
                gs[ngs++] = g;
        }
        if (count > 1)
                for (unsigned i = 0; i < ngs; i++)
                        if (gs[i].uuid)
                                return fail(c, gs[i].at,
                                            "'uuid' cannot be used in a node with 'count'");

        for (unsigned i = 0; i < count; i++) {
                char nm[KERF_NAME_LEN + 16];

                if (count > 1)
                        snprintf(nm, sizeof(nm), "%.*s-%u", KERF_NAME_LEN, name, i);
                else
                        snprintf(nm, sizeof(nm), "%.*s", KERF_NAME_LEN, name);
                r = add_instance(c, f, get(c, m, "name"), nm, cpu_milli, mem, driver, cuda, gs,
                                 ngs);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int read_fleet(ctx *c, kerf_fleet *f)
{
        static const char *const keys[] = {"nodes", NULL};
        yaml_node_t *root = yaml_document_get_root_node(c->doc), *nodes;
        int r;

        if (!root)
                return fail(c, NULL, "empty document: expected a mapping with 'nodes'");
        if (root->type != YAML_MAPPING_NODE)
                return fail(c, root, "the document must be a mapping with 'nodes', not %s",
                            type_name(root));
        r = check_keys(c, root, "fleet", keys, "nodes");
        if (r < 0)
                return r;
        nodes = get(c, root, "nodes");
        if (!nodes)
                return fail(c, root, "missing 'nodes'");
        if (nodes->type != YAML_SEQUENCE_NODE)
                return fail(c, nodes, "'nodes' must be a list, not %s", type_name(nodes));
        if (nodes->data.sequence.items.start == nodes->data.sequence.items.top)
                return fail(c, nodes, "'nodes' is empty");
        for (yaml_node_item_t *it = nodes->data.sequence.items.start;
             it < nodes->data.sequence.items.top; it++) {
                r = read_node(c, f, yaml_document_get_node(c->doc, *it));
                if (r < 0)
                        return r;
        }
        return 0;
}

int kerf_fleet_parse_yaml(const char *text, size_t len, kerf_fleet **ret, char *err, size_t errlen)
{
        yaml_parser_t parser;
        yaml_document_t doc;
        kerf_fleet *f = NULL;
        ctx c = {.doc = &doc, .err = err, .errlen = errlen};
        int r;

        if (!ret || (!text && len))
                return -EINVAL;
        if (err && errlen)
                err[0] = '\0';
        if (!yaml_parser_initialize(&parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&parser, (const unsigned char *)(text ? text : ""), len);
        if (!yaml_parser_load(&parser, &doc)) {
                if (parser.error == YAML_MEMORY_ERROR) {
                        r = -ENOMEM;
                } else {
                        if (err && errlen)
                                snprintf(err, errlen, "line %zu: %s%s%s",
                                         parser.problem_mark.line + 1,
                                         parser.problem ? parser.problem : "YAML syntax error",
                                         parser.context ? " " : "",
                                         parser.context ? parser.context : "");
                        r = -KERF_EPARSE;
                }
                yaml_parser_delete(&parser);
                return r;
        }
        r = kerf_fleet_new(&f);
        if (r >= 0)
                r = read_fleet(&c, f);
        yaml_document_delete(&doc);
        yaml_parser_delete(&parser);
        if (r < 0) {
                kerf_fleet_free(f);
                return r;
        }
        *ret = f;
        return 0;
}
