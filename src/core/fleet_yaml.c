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
#include "kerf/fields_fleet.h"

#define GPU_KEYS  kerf_fleet_gpu_fields, kerf_fleet_gpu_fields_count
#define NODE_KEYS kerf_fleet_node_fields, kerf_fleet_node_fields_count
#define DOC_KEYS  kerf_fleet_doc_fields, kerf_fleet_doc_fields_count

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

/* Checks that every key of mapping `m` is a key of table[0..n) and unique; an unknown key is
 * refused with the nearest known one suggested and the list of all. */
static int check_keys(ctx *c, const yaml_node_t *m, const char *what, const kerf_field *table,
                      size_t n)
{
        const char *names[16];
        char known[256] = "";
        size_t nk = 0;

        for (size_t i = 0; i < n && nk < sizeof(names) / sizeof(names[0]); i++) {
                size_t o = strlen(known);
                names[nk++] = table[i].name;
                snprintf(known + o, sizeof(known) - o, "%s%s", i ? ", " : "", table[i].name);
        }
        for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
             p++) {
                yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
                const char *ks = scalar(k), *near;

                if (!ks)
                        return fail(c, k, "%s keys must be scalars, not %s", what, type_name(k));
                if (!kerf_field_find(table, n, ks)) {
                        near = kerf_nearest(ks, names, nk);
                        return fail(c, k, "%s: unknown key in %s%s%s%s (known: %s)", ks, what,
                                    near ? ", did you mean " : "", near ? near : "",
                                    near ? "?" : "", known);
                }
                for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < p; q++) {
                        const char *qs = scalar(yaml_document_get_node(c->doc, q->key));
                        if (qs && strcmp(qs, ks) == 0)
                                return fail(c, k, "%s: duplicate key in %s", ks, what);
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

/* Key `key` of mapping `m` by its descriptor in table[0..n): returns 1 and fills *ret when it
 * is there and fits, 0 when absent (*ret then holds the descriptor's default when that is a
 * number, a size or a bool; zeroes otherwise), or the error. `*at` gets the value node. */
static int read_key(ctx *c, const yaml_node_t *m, const kerf_field *table, size_t n,
                    const char *key, kerf_field_value *ret, yaml_node_t **at)
{
        const kerf_field *f = kerf_field_find(table, n, key);
        yaml_node_t *v = get(c, m, key);
        char msg[512], d[320];
        const char *s;

        memset(ret, 0, sizeof(*ret));
        if (!f)
                return fail(c, m, "%s: no descriptor (a bug in kerf)", key);
        if (at)
                *at = v;
        if (!v) {
                if (f->type == KERF_FIELD_INT || f->type == KERF_FIELD_PERCENT ||
                    f->type == KERF_FIELD_BOOL || f->type == KERF_FIELD_SIZE ||
                    f->type == KERF_FIELD_DURATION)
                        (void)kerf_field_check_text(f, f->def, ret, msg, sizeof(msg));
                return 0;
        }
        s = scalar(v);
        if (!s)
                return fail(c, v, "%s: %s, not %s", key, kerf_field_describe_text(f, d, sizeof(d)),
                            type_name(v));
        if (kerf_field_check_text(f, s, ret, msg, sizeof(msg)) < 0)
                return fail(c, v, "%s", msg);
        return 1;
}

/* Key `key` (a KERF_FIELD_STRLIST) of `m` as a list of its descriptor's length: the list, or
 * NULL when absent (*r = 0) or wrong (*r < 0). */
static yaml_node_t *read_list(ctx *c, const yaml_node_t *m, const kerf_field *table, size_t n,
                              const char *key, int *r)
{
        const kerf_field *f = kerf_field_find(table, n, key);
        yaml_node_t *v = get(c, m, key);
        char d[320];
        size_t items;

        *r = f ? 0 : fail(c, m, "%s: no descriptor (a bug in kerf)", key);
        if (!v || !f)
                return NULL;
        if (v->type != YAML_SEQUENCE_NODE) {
                *r = fail(c, v, "%s: %s, not %s", key, kerf_field_describe_text(f, d, sizeof(d)),
                          type_name(v));
                return NULL;
        }
        items = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
        if ((int64_t)items < f->min || (f->max > 0 && (int64_t)items > f->max)) {
                *r = fail(c, v, "%s: %s, got %zu", key, kerf_field_describe_text(f, d, sizeof(d)),
                          items);
                return NULL;
        }
        return v;
}

/* "12.4" -> 12040 (NVML encoding); a bare integer >= 1000 is taken as already encoded. The
 * scalar has passed its descriptor (a short token). */
static int want_cuda(ctx *c, const yaml_node_t *v, const char *s, int *ret)
{
        unsigned major = 0, minor = 0, nmaj = 0, nmin = 0;
        const char *p;

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
        return fail(c, v, "cuda: a version like \"12.4\", 12 or 12040, got '%s'", s);
}

/* ---- GPUs and nodes --------------------------------------------------------------------- */

/* One entry of a node's `gpus` list, read once and applied to every replica. */
typedef struct gpu_spec {
        const yaml_node_t *at;
        const kerf_gpu_model *model;
        unsigned count;
        bool mig;
        int numa;
        char nvlink[KERF_NVLINK_LABEL_LEN]; /* "" = none */
        const char *uuid;
} gpu_spec;

static int read_gpu(ctx *c, const yaml_node_t *m, gpu_spec *g)
{
        kerf_field_value v;
        yaml_node_t *at;
        int r;

        if (m->type != YAML_MAPPING_NODE)
                return fail(c, m,
                            "a GPU entry must be a mapping like {model: H200, count: 8}, not %s",
                            type_name(m));
        if ((r = check_keys(c, m, "a GPU entry", GPU_KEYS)) < 0)
                return r;
        memset(g, 0, sizeof(*g));
        g->at = m;

        if ((r = read_key(c, m, GPU_KEYS, "model", &v, NULL)) < 0)
                return r;
        if (r == 0)
                return fail(c, m, "GPU entry has no 'model'");
        g->model = kerf_gpu_model_at((size_t)v.i);
        if ((r = read_key(c, m, GPU_KEYS, "count", &v, NULL)) < 0)
                return r;
        g->count = (unsigned)v.i;
        if ((r = read_key(c, m, GPU_KEYS, "mig", &v, &at)) < 0)
                return r;
        g->mig = v.b;
        if (g->mig && !kerf_gpu_model_has_mig(g->model))
                return fail(c, at, "mig: GPU model '%s' does not support MIG", g->model->name);
        if ((r = read_key(c, m, GPU_KEYS, "numa", &v, NULL)) < 0)
                return r;
        g->numa = (int)v.i;
        if ((r = read_key(c, m, GPU_KEYS, "nvlink", &v, NULL)) < 0)
                return r;
        if (r)
                snprintf(g->nvlink, sizeof(g->nvlink), "%s", v.s);
        if ((r = read_key(c, m, GPU_KEYS, "uuid", &v, &at)) < 0)
                return r;
        if (r) {
                g->uuid = v.s;
                if (g->count != 1)
                        return fail(c, at, "uuid: one GPU's, so it needs 'count: 1'");
                if (strncmp(g->uuid, "GPU-", 4) != 0)
                        return fail(c, at,
                                    "uuid: must start with GPU- (GPU-xxxxxxxx-...), got '%s'",
                                    g->uuid);
        }
        return 0;
}

/* Adds one node instance with all its GPUs, then joins GPUs that share an nvlink label. */
static int add_instance(ctx *c, kerf_fleet *f, const yaml_node_t *at, const char *name,
                        uint64_t cpu_milli, uint64_t mem, const char *driver, int cuda,
                        const gpu_spec *gs, size_t ngs)
{
        char label[KERF_MAX_NODE_GPUS][KERF_NVLINK_LABEL_LEN];
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
                        memcpy(label[k], gs[i].nvlink, KERF_NVLINK_LABEL_LEN);
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
        const char *name = NULL, *driver = NULL;
        gpu_spec gs[KERF_MAX_NODE_GPUS];
        uint64_t cpu_milli = 0, mem = 0;
        unsigned count = 1, total = 0;
        size_t ngs = 0;
        kerf_field_value x;
        yaml_node_t *v, *at;
        int cuda = 0, r;

        if (m->type != YAML_MAPPING_NODE)
                return fail(c, m, "a node must be a mapping with 'name' and 'gpus', not %s",
                            type_name(m));
        if ((r = check_keys(c, m, "a node", NODE_KEYS)) < 0)
                return r;
        if ((r = read_key(c, m, NODE_KEYS, "name", &x, NULL)) < 0)
                return r;
        if (r == 0)
                return fail(c, m, "node has no 'name'");
        name = x.s;
        if ((r = read_key(c, m, NODE_KEYS, "count", &x, NULL)) < 0)
                return r;
        count = (unsigned)x.i;
        if (get(c, m, "cpus") && get(c, m, "cpu_milli"))
                return fail(c, get(c, m, "cpu_milli"),
                            "cpu_milli: give either 'cpus' or 'cpu_milli', not both");
        if ((r = read_key(c, m, NODE_KEYS, "cpus", &x, NULL)) < 0)
                return r;
        cpu_milli = (uint64_t)x.i;
        if ((r = read_key(c, m, NODE_KEYS, "cpu_milli", &x, NULL)) < 0)
                return r;
        if (r)
                cpu_milli = (uint64_t)x.i;
        if ((r = read_key(c, m, NODE_KEYS, "memory", &x, NULL)) < 0)
                return r;
        mem = x.u;
        if ((r = read_key(c, m, NODE_KEYS, "driver", &x, NULL)) < 0)
                return r;
        driver = r ? x.s : NULL; /* absent: kerf_fleet_add_node's "unknown" */
        if ((r = read_key(c, m, NODE_KEYS, "cuda", &x, &at)) < 0)
                return r;
        if (r && (r = want_cuda(c, at, x.s, &cuda)) < 0)
                return r;
        v = read_list(c, m, NODE_KEYS, "gpus", &r);
        if (r < 0)
                return r;
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
                                            "uuid: cannot be used in a node with 'count'");

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
        yaml_node_t *root = yaml_document_get_root_node(c->doc), *nodes;
        int r;

        if (!root)
                return fail(c, NULL, "empty document: expected a mapping with 'nodes'");
        if (root->type != YAML_MAPPING_NODE)
                return fail(c, root, "the document must be a mapping with 'nodes', not %s",
                            type_name(root));
        if ((r = check_keys(c, root, "the fleet", DOC_KEYS)) < 0)
                return r;
        nodes = read_list(c, root, DOC_KEYS, "nodes", &r);
        if (r < 0)
                return r;
        if (!nodes)
                return fail(c, root, "missing 'nodes'");
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
