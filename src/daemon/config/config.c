/* SPDX-License-Identifier: Apache-2.0 */
/* config.c - reads kerfd.yaml with libyaml's document API; every error names file and line */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>
#include <unistd.h>
#include <yaml.h>

#include "config.h"
#include "config_fields.h"
#include "config_yaml.h"
#include "uidcache.h"
#include "kerf/errno.h"
#include "kerf_cdi.h"

int kerfd__cfg_fail(cfgctx *x, const yaml_node_t *n, const char *fmt, ...)
{
        char msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (x->err)
                snprintf(x->err, x->errlen, "%s:%lu: %s", x->file,
                         n ? (unsigned long)n->start_mark.line + 1 : 0UL, msg);
        return -KERF_EPARSE;
}

void kerfd_config_defaults(kerfd_config *c)
{
        const char *xdg = getenv("XDG_RUNTIME_DIR");

        memset(c, 0, sizeof(*c));
        if (geteuid() == 0) {
                snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/kerf");
                snprintf(c->socket, sizeof(c->socket), "/run/kerf/kerfd.sock");
        } else {
                snprintf(c->state_dir, sizeof(c->state_dir), "%s/.local/state/kerf",
                         getenv("HOME") ? getenv("HOME") : "/tmp");
                snprintf(c->socket, sizeof(c->socket), "%s/kerf/kerfd.sock",
                         xdg && *xdg ? xdg : "/tmp");
        }
        snprintf(c->fleet, sizeof(c->fleet), "examples/fleet-8xh200.yaml");
        (void)kerfd__cfg_limits_defaults(c); /* each default is valid: daemon_test_config_fields */
        snprintf(c->fencing, sizeof(c->fencing), "auto");
        kerf_policy_default(&c->policy);
        c->tenant_defaults.max_priority = 0;
        c->tenant_defaults.max_tier = KERF_TIER_QUEUEABLE;
        c->tenant_defaults.max_pending = 1000;
        c->tenant_defaults.uid_base = 2000000000ull;
        c->tenant_defaults.uid_span = 1u << 20;
        c->sim_gid = KERFD_SIM_GID_DEFAULT;
        snprintf(c->cdi_dir, sizeof(c->cdi_dir), "%s", KERF_CDI_DIR_DEFAULT);
        snprintf(c->cdi_kind, sizeof(c->cdi_kind), "%s", KERF_CDI_KIND_DEFAULT);
        kerfd_retention_defaults(&c->retention); /* retention_cfg.c */
}

yaml_node_t *kerfd__cfg_node(cfgctx *x, int id)
{
        return yaml_document_get_node(&x->doc, id);
}

const char *kerfd__cfg_scalar(cfgctx *x, yaml_node_t *n)
{
        if (!n || n->type != YAML_SCALAR_NODE)
                return NULL;
        (void)x;
        return (const char *)n->data.scalar.value;
}

int kerfd__cfg_str(cfgctx *x, yaml_node_t *n, const char *key, char *out, size_t cap)
{
        const char *s = kerfd__cfg_scalar(x, n);
        if (!s)
                return kerfd__cfg_fail(x, n, "%s: expected a string", key);
        if (strlen(s) >= cap)
                return kerfd__cfg_fail(x, n, "%s: too long (at most %zu characters)", key, cap - 1);
        snprintf(out, cap, "%s", s);
        return 0;
}

int kerfd__cfg_range(cfgctx *x, yaml_node_t *n, const char *key, uint64_t min, uint64_t max,
                     uint64_t *ret)
{
        const char *s = kerfd__cfg_scalar(x, n);
        char *end;
        unsigned long long v;

        if (!s || !*s || *s == '-')
                return kerfd__cfg_fail(x, n, "%s: expected a non-negative integer", key);
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || *end || v < min || v > max)
                return kerfd__cfg_fail(x, n, "%s: expected an integer %llu..%llu, got \"%s\"", key,
                                       (unsigned long long)min, (unsigned long long)max, s);
        *ret = v;
        return 0;
}

int kerfd__cfg_u64(cfgctx *x, yaml_node_t *n, const char *key, uint64_t max, uint64_t *ret)
{
        return kerfd__cfg_range(x, n, key, 0, max, ret);
}

int kerfd__cfg_bool(cfgctx *x, yaml_node_t *n, const char *key, bool *ret)
{
        const char *s = kerfd__cfg_scalar(x, n);
        if (s && (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on"))) {
                *ret = true;
                return 0;
        }
        if (s && (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off"))) {
                *ret = false;
                return 0;
        }
        return kerfd__cfg_fail(x, n, "%s: expected true or false", key);
}

int kerfd__cfg_size(cfgctx *x, yaml_node_t *n, const char *key, uint64_t min, uint64_t max,
                    uint64_t *ret)
{
        const char *s = kerfd__cfg_scalar(x, n);
        char why[256], lo[KERF_UNITS_BUF], hi[KERF_UNITS_BUF];
        uint64_t v;

        if (!s)
                return kerfd__cfg_fail(x, n, "%s: expected %s", key, KERF_SIZE_FORMS);
        if (kerf_parse_size(s, &v, why, sizeof(why)) < 0)
                return kerfd__cfg_fail(x, n, "%s: %s", key, why);
        if (v < min || v > max)
                return kerfd__cfg_fail(x, n, "%s: %s..%s, got \"%s\"", key,
                                       kerf_format_size(min, lo, sizeof(lo)),
                                       kerf_format_size(max, hi, sizeof(hi)), s);
        *ret = v;
        return 0;
}

int kerfd__cfg_duration(cfgctx *x, yaml_node_t *n, const char *key, uint64_t min, uint64_t max,
                        uint64_t *ret)
{
        const char *s = kerfd__cfg_scalar(x, n);
        char why[256], lo[KERF_UNITS_BUF], hi[KERF_UNITS_BUF];
        uint64_t v;

        if (!s)
                return kerfd__cfg_fail(x, n, "%s: expected %s", key, KERF_DURATION_FORMS);
        if (kerf_parse_duration(s, &v, why, sizeof(why)) < 0)
                return kerfd__cfg_fail(x, n, "%s: %s", key, why);
        if (v < min || v > max)
                return kerfd__cfg_fail(x, n, "%s: %s..%s, got \"%s\"", key,
                                       kerf_format_duration(min, lo, sizeof(lo)),
                                       kerf_format_duration(max, hi, sizeof(hi)), s);
        *ret = v;
        return 0;
}

/* A mapping whose keys are strings, each given once. */
int kerfd__cfg_map(cfgctx *x, yaml_node_t *n, const char *what)
{
        if (!n || n->type != YAML_MAPPING_NODE)
                return kerfd__cfg_fail(x, n, "%s: expected a mapping", what);
        FOR_PAIRS(x, n, p)
        {
                yaml_node_t *k = kerfd__cfg_node(x, p->key);
                const char *ks = kerfd__cfg_scalar(x, k);
                if (!ks)
                        return kerfd__cfg_fail(x, k, "%s: keys must be strings", what);
                for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++) {
                        yaml_node_t *qk = kerfd__cfg_node(x, q->key);
                        if (!strcmp(kerfd__cfg_scalar(x, qk), ks))
                                return kerfd__cfg_fail(
                                    x, k, "%s: key \"%s\" given twice (first at line %lu)", what,
                                    ks, (unsigned long)qk->start_mark.line + 1);
                }
        }
        return 0;
}

/* A non-empty path string; absolute when `absolute`. */
static int get_path(cfgctx *x, yaml_node_t *n, const char *key, bool absolute, char *out,
                    size_t cap)
{
        int r = kerfd__cfg_str(x, n, key, out, cap);
        if (r < 0)
                return r;
        if (!out[0])
                return kerfd__cfg_fail(x, n, "%s: expected a path, got an empty value", key);
        if (absolute && out[0] != '/')
                return kerfd__cfg_fail(x, n, "%s: expected an absolute path, got \"%s\"", key, out);
        return 0;
}

int kerfd__cfg_seq(cfgctx *x, yaml_node_t *n, const char *what)
{
        if (!n || n->type != YAML_SEQUENCE_NODE)
                return kerfd__cfg_fail(x, n, "%s: expected a list", what);
        return 0;
}

static int parse_routes(cfgctx *x, yaml_node_t *m, kerf_policy *pol)
{
        int r = kerfd__cfg_map(x, m, "policy.routes");
        if (r < 0)
                return r;
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = kerfd__cfg_node(x, p->key), *v = kerfd__cfg_node(x, p->value);
                const char *ws = kerfd__cfg_scalar(x, k);
                int w = ws ? kerf_workload_parse(ws) : -EINVAL;
                if (w < 0)
                        return kerfd__cfg_fail(x, k, "routes: unknown workload \"%s\"",
                                               ws ? ws : "?");
                if ((r = kerfd__cfg_map(x, v, ws)) < 0)
                        return r;
                FOR_PAIRS(x, v, pp)
                {
                        yaml_node_t *tk = kerfd__cfg_node(x, pp->key),
                                    *tv = kerfd__cfg_node(x, pp->value);
                        const char *ts = kerfd__cfg_scalar(x, tk);
                        int t = ts ? kerf_tier_parse(ts) : -EINVAL;
                        kerf_unit_kind kinds[KERF_UNIT_KIND_COUNT];
                        unsigned n = 0;
                        if (t < 0)
                                return kerfd__cfg_fail(x, tk, "routes.%s: unknown tier \"%s\"", ws,
                                                       ts ? ts : "?");
                        if ((r = kerfd__cfg_seq(x, tv, ts)) < 0)
                                return r;
                        for (yaml_node_item_t *it = tv->data.sequence.items.start;
                             it < tv->data.sequence.items.top; it++) {
                                yaml_node_t *in = kerfd__cfg_node(x, *it);
                                const char *rs = kerfd__cfg_scalar(x, in);
                                int kk = rs ? kerf_unit_kind_parse(rs) : -EINVAL;
                                if (kk < 0)
                                        return kerfd__cfg_fail(
                                            x, in,
                                            "routes.%s.%s: unknown route \"%s\" (whole, "
                                            "mig, slice, mps, tslice)",
                                            ws, ts, rs ? rs : "?");
                                for (unsigned j = 0; j < n; j++)
                                        if (kinds[j] == (kerf_unit_kind)kk)
                                                return kerfd__cfg_fail(
                                                    x, in,
                                                    "routes.%s.%s: route \"%s\" given "
                                                    "twice",
                                                    ws, ts, rs);
                                if (n >= KERF_UNIT_KIND_COUNT)
                                        return kerfd__cfg_fail(x, in, "routes.%s.%s: too many", ws,
                                                               ts);
                                kinds[n++] = (kerf_unit_kind)kk;
                        }
                        if (n == 0)
                                return kerfd__cfg_fail(x, tv, "routes.%s.%s: at least one route",
                                                       ws, ts);
                        if (kerf_policy_set_routes(pol, (kerf_workload)w, (kerf_tier)t, kinds, n) <
                            0)
                                return kerfd__cfg_fail(
                                    x, tv, "routes.%s.%s: 1..5 distinct routes required", ws, ts);
                }
        }
        return 0;
}

/* A key whose value is one of two words: *ret = (value == yes). */
int kerfd__cfg_policy_routes(cfgctx *x, yaml_node_t *v, void *base)
{
        return parse_routes(x, v, &((kerfd_config *)base)->policy);
}

static int fence_mode(cfgctx *x, yaml_node_t *v, kerfd_config *c)
{
        const char *m = kerfd__cfg_scalar(x, v);
        if (!m || (strcmp(m, "auto") && strcmp(m, "off") && strcmp(m, "v1") && strcmp(m, "v2")))
                return kerfd__cfg_fail(x, v, "fencing: mode must be auto, off, v1 or v2");
        snprintf(c->fencing, sizeof(c->fencing), "%s", m);
        return 0;
}

/* `fencing: auto|off` or a map {mode, cgroup_root, dev_dir, mig_minors}. */
static int parse_fencing(cfgctx *x, yaml_node_t *m, kerfd_config *c)
{
        int r;
        if (m && m->type == YAML_SCALAR_NODE)
                return fence_mode(x, m, c);
        if ((r = kerfd__cfg_map(x, m, "fencing")) < 0)
                return r;
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = kerfd__cfg_node(x, p->key), *v = kerfd__cfg_node(x, p->value);
                const char *ks = kerfd__cfg_scalar(x, k);
                if (!ks)
                        return kerfd__cfg_fail(x, k, "fencing: keys must be strings");
                if (!strcmp(ks, "mode"))
                        r = fence_mode(x, v, c);
                else if (!strcmp(ks, "cgroup_root"))
                        r = get_path(x, v, ks, true, c->fence_cgroup_root,
                                     sizeof(c->fence_cgroup_root));
                else if (!strcmp(ks, "dev_dir"))
                        r = get_path(x, v, ks, true, c->fence_dev_dir, sizeof(c->fence_dev_dir));
                else if (!strcmp(ks, "mig_minors"))
                        r = get_path(x, v, ks, true, c->fence_mig_minors,
                                     sizeof(c->fence_mig_minors));
                else
                        r = kerfd__cfg_fail(
                            x, k,
                            "fencing: unknown key \"%s\" (mode, cgroup_root, dev_dir, "
                            "mig_minors)",
                            ks);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* cdi: {enabled, spec_dir, kind} (docs/CLUSTER.md "Containers (CDI)") */
static int parse_cdi(cfgctx *x, yaml_node_t *m, kerfd_config *c)
{
        char why[256];
        int r = kerfd__cfg_map(x, m, "cdi");
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = kerfd__cfg_node(x, p->key), *v = kerfd__cfg_node(x, p->value);
                const char *ks = kerfd__cfg_scalar(x, k);
                if (r < 0)
                        return r;
                if (!strcmp(ks, "enabled"))
                        r = kerfd__cfg_bool(x, v, ks, &c->cdi_enabled);
                else if (!strcmp(ks, "spec_dir")) {
                        r = get_path(x, v, ks, true, c->cdi_dir, sizeof(c->cdi_dir));
                        if (!r && kerf_cdi_dir_check(c->cdi_dir, why, sizeof(why)) < 0)
                                r = kerfd__cfg_fail(x, v, "%s", why);
                } else if (!strcmp(ks, "kind")) {
                        r = kerfd__cfg_str(x, v, ks, c->cdi_kind, sizeof(c->cdi_kind));
                        if (!r && !kerf_cdi_kind_ok(c->cdi_kind))
                                r = kerfd__cfg_fail(
                                    x, v,
                                    "cdi.kind: \"%s\" is not VENDOR/CLASS (a DNS name, "
                                    "then 1..63 of [A-Za-z0-9_.-])",
                                    c->cdi_kind);
                } else
                        r = kerfd__cfg_fail(
                            x, k, "cdi: unknown key \"%s\" (enabled, spec_dir, kind)", ks);
        }
        return r;
}

/* queues[]: {name, mode: strict|best-effort, backfill: bool, starvation_s} (docs/DAEMON.md
 * "Queues"; docs/SCHEDULER.md "Queue modes and backfill") */
static int parse_queue(cfgctx *x, yaml_node_t *m, kerfd_config *c)
{
        kerfd_queue_cfg *q;
        const char *mode = NULL;
        yaml_node_t *starve = NULL;
        uint64_t v;
        int r;

        if ((r = kerfd__cfg_map(x, m, "queues[]")) < 0)
                return r;
        if (c->n_queues >= KERFD_MAX_QUEUES)
                return kerfd__cfg_fail(x, m, "queues: at most %d", KERFD_MAX_QUEUES);
        q = &c->queues[c->n_queues];
        memset(q, 0, sizeof(*q));
        kerf_queue_spec_default(&q->spec);
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = kerfd__cfg_node(x, p->key), *val = kerfd__cfg_node(x, p->value);
                const char *ks = kerfd__cfg_scalar(x, k);
                if (!strcmp(ks, "name"))
                        r = kerfd__cfg_str(x, val, "queue name", q->name, sizeof(q->name));
                else if (!strcmp(ks, "mode")) {
                        mode = kerfd__cfg_scalar(x, val);
                        if (kerf_queue_mode_parse(mode, &q->spec.mode) < 0)
                                r = kerfd__cfg_fail(x, val,
                                                    "queue mode: strict or best-effort, got \"%s\"",
                                                    mode ? mode : "(not a scalar)");
                } else if (!strcmp(ks, "backfill"))
                        r = kerfd__cfg_bool(x, val, "queue backfill", &q->spec.backfill);
                else if (!strcmp(ks, "starvation_s")) {
                        starve = val;
                        if (!(r = kerfd__cfg_duration(x, val, "queue starvation_s", 1,
                                                      KERF_MAX_RUNTIME_S, &v)))
                                q->spec.starvation_s = v;
                } else
                        r = kerfd__cfg_fail(
                            x, k, "queue: unknown key \"%s\" (name, mode, backfill, starvation_s)",
                            ks);
                if (r < 0)
                        return r;
        }
        if (!q->name[0])
                return kerfd__cfg_fail(x, m, "queue: name is required");
        if (!kerf_name_ok(q->name))
                return kerfd__cfg_fail(x, m, "queue name \"%s\": " KERF_NAME_RULE, q->name);
        for (unsigned i = 0; i < c->n_queues; i++)
                if (!strcmp(c->queues[i].name, q->name))
                        return kerfd__cfg_fail(x, m, "queue \"%s\" defined twice", q->name);
        if (starve && q->spec.mode != KERF_QUEUE_BEST_EFFORT)
                return kerfd__cfg_fail(
                    x, starve, "queue \"%s\": starvation_s applies to best-effort queues only",
                    q->name);
        c->n_queues++;
        return 0;
}

/* One value of key f of section `sec` by its descriptor: the type picks the getter, the bounds
 * are f's; messages name "sec.key". */
static int cfg_field(cfgctx *x, yaml_node_t *n, const char *sec, const kerf_field *f, uint64_t *ret)
{
        char key[96];
        snprintf(key, sizeof(key), "%s.%s", sec, f->name);
        switch (f->type) {
        case KERF_FIELD_SIZE:
                return kerfd__cfg_size(x, n, key, (uint64_t)f->min, (uint64_t)f->max, ret);
        case KERF_FIELD_DURATION:
                return kerfd__cfg_duration(x, n, key, (uint64_t)f->min, (uint64_t)f->max, ret);
        default:
                return kerfd__cfg_range(x, n, key, (uint64_t)f->min, (uint64_t)f->max, ret);
        }
}

/* One key of section `sec` by its descriptor, stored into base: a custom key by its reader, a
 * string, a bool, a choice of words, or a number (cfg_field). */
static int cfg_key(cfgctx *x, yaml_node_t *vn, const char *sec, const kerfd_cfg_key *key,
                   void *base)
{
        const kerf_field *f = &key->f;
        char name[96];
        uint64_t v;
        int r;
        snprintf(name, sizeof(name), "%s.%s", sec, f->name);
        if (key->slot == KERFD_SLOT_CUSTOM)
                return key->custom(x, vn, base);
        if (key->slot == KERFD_SLOT_STR) {
                char *out = (char *)base + key->off;
                if ((r = kerfd__cfg_str(x, vn, name, out, (size_t)f->max + 1)) < 0)
                        return r;
                if ((int64_t)strlen(out) < f->min)
                        return kerfd__cfg_fail(x, vn, "%s: expected a value, got an empty one",
                                               name);
                return 0;
        }
        if (f->type == KERF_FIELD_BOOL) {
                bool b;
                if ((r = kerfd__cfg_bool(x, vn, name, &b)) < 0)
                        return r;
                kerfd__cfg_key_store(base, key, b);
                return 0;
        }
        if (f->type == KERF_FIELD_ENUM) {
                const char *s = kerfd__cfg_scalar(x, vn);
                int i = s ? f->value_parse(s) : -EINVAL;
                if (i < 0) {
                        char words[256] = "";
                        for (unsigned w = 0; f->value_name(w); w++) {
                                size_t o = strlen(words);
                                snprintf(words + o, sizeof(words) - o, "%s%s", w ? ", " : "",
                                         f->value_name(w));
                        }
                        return kerfd__cfg_fail(x, vn, "%s: one of %s, got \"%s\"", name, words,
                                               s ? s : "(not a scalar)");
                }
                kerfd__cfg_key_store(base, key, (uint64_t)i);
                return 0;
        }
        if ((r = cfg_field(x, vn, sec, f, &v)) < 0)
                return r;
        kerfd__cfg_key_store(base, key, v);
        return 0;
}

/* A section whose every key is a descriptor (config_fields.c): unknown keys named with the
 * nearest known one, each value by its descriptor's type and bounds, stored into base. */
int kerfd__cfg_section(cfgctx *x, yaml_node_t *m, const kerfd_cfg_section *sec, void *base)
{
        const char *names[32];
        char known[512] = "";
        size_t nk = 0;
        int r = kerfd__cfg_map(x, m, sec->name);
        if (r < 0)
                return r;
        for (size_t i = 0; i < sec->n && nk < 32; i++) {
                names[nk++] = sec->keys[i].f.name;
                size_t o = strlen(known);
                snprintf(known + o, sizeof(known) - o, "%s%s", i ? ", " : "", sec->keys[i].f.name);
        }
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = kerfd__cfg_node(x, p->key), *vn = kerfd__cfg_node(x, p->value);
                const char *ks = kerfd__cfg_scalar(x, k);
                const kerfd_cfg_key *key = NULL;
                if (!ks)
                        return kerfd__cfg_fail(x, k, "%s: keys must be strings", sec->name);
                for (size_t i = 0; i < sec->n && !key; i++)
                        if (!strcmp(ks, sec->keys[i].f.name))
                                key = &sec->keys[i];
                if (!key) {
                        const char *near = kerf_nearest(ks, names, nk);
                        return kerfd__cfg_fail(x, k, "%s: unknown key \"%s\"%s%s%s (%s)", sec->name,
                                               ks, near ? "; did you mean " : "", near ? near : "",
                                               near ? "?" : "", known);
                }
                if ((r = cfg_key(x, vn, sec->name, key, base)) < 0)
                        return r;
        }
        return 0;
}

static int parse_tcp(cfgctx *x, yaml_node_t *v, kerfd_config *c)
{
        char buf[96], *colon;
        uint64_t port;
        int r = kerfd__cfg_str(x, v, "listen_tcp", buf, sizeof(buf));
        if (r < 0)
                return r;
        colon = strrchr(buf, ':');
        if (!colon)
                return kerfd__cfg_fail(x, v, "listen_tcp: expected 127.0.0.1:PORT");
        *colon = 0;
        if (strcmp(buf, "127.0.0.1") && strcmp(buf, "localhost"))
                return kerfd__cfg_fail(x, v, "listen_tcp: only loopback (127.0.0.1) is allowed");
        yaml_node_t fake = *v;
        fake.data.scalar.value = (yaml_char_t *)(colon + 1);
        if (kerfd__cfg_u64(x, &fake, "listen_tcp port", 65535, &port) < 0 || port == 0)
                return kerfd__cfg_fail(x, v, "listen_tcp: port 1..65535");
        snprintf(c->tcp_host, sizeof(c->tcp_host), "127.0.0.1");
        c->tcp_port = (unsigned)port;
        return 0;
}

/* metrics: {listen: "IPv4:PORT", token_file: PATH} (docs/METRICS.md "Scraping remotely") */
static int parse_metrics(cfgctx *x, yaml_node_t *m, kerfd_config *c)
{
        int r = kerfd__cfg_map(x, m, "metrics");
        if (r < 0)
                return r; /* not a mapping: no pairs to walk */
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = kerfd__cfg_node(x, p->key), *v = kerfd__cfg_node(x, p->value),
                            fake;
                const char *ks = kerfd__cfg_scalar(x, k);
                char buf[64], *colon;
                struct in_addr a;
                uint64_t port;
                if (r < 0)
                        return r;
                if (!strcmp(ks, "token_file")) {
                        r = get_path(x, v, "metrics.token_file", true, c->metrics_token_file,
                                     sizeof(c->metrics_token_file));
                        continue;
                }
                if (strcmp(ks, "listen") != 0)
                        return kerfd__cfg_fail(
                            x, k, "metrics: unknown key \"%s\" (listen, token_file)", ks);
                if ((r = kerfd__cfg_str(x, v, "metrics.listen", buf, sizeof(buf))) < 0)
                        return r;
                if (!(colon = strrchr(buf, ':')) || (*colon = 0, inet_pton(AF_INET, buf, &a) != 1))
                        return kerfd__cfg_fail(x, v, "metrics.listen: expected IPV4-ADDRESS:PORT");
                fake = *v;
                fake.data.scalar.value = (yaml_char_t *)(colon + 1);
                if (kerfd__cfg_u64(x, &fake, "metrics.listen port", 65535, &port) < 0 || port == 0)
                        return kerfd__cfg_fail(x, v, "metrics.listen: port 1..65535");
                snprintf(c->metrics_host, sizeof(c->metrics_host), "%s", buf);
                c->metrics_port = (unsigned)port;
        }
        if (r == 0 && c->metrics_port && !c->metrics_token_file[0])
                r = kerfd__cfg_fail(
                    x, m,
                    "metrics.listen needs metrics.token_file (only the metrics token is "
                    "served there)");
        return r;
}

static int parse_root(cfgctx *x, kerfd_config *c)
{
        yaml_node_t *root = yaml_document_get_root_node(&x->doc);
        int r;

        if (!root)
                return 0; /* empty file: defaults */
        if ((r = kerfd__cfg_map(x, root, "top level")) < 0)
                return r;
        FOR_PAIRS(x, root, p)
        {
                yaml_node_t *k = kerfd__cfg_node(x, p->key), *v = kerfd__cfg_node(x, p->value);
                const char *ks = kerfd__cfg_scalar(x, k);
                if (!ks)
                        return kerfd__cfg_fail(x, k, "keys must be strings");
                if (!strcmp(ks, "state_dir")) {
                        r = get_path(x, v, ks, false, c->state_dir, sizeof(c->state_dir));
                        if (!r && kerfd_config_abspath(c->state_dir, sizeof(c->state_dir)) < 0)
                                r = kerfd__cfg_fail(x, v,
                                                    "state_dir: \"%s\" made absolute is too long",
                                                    c->state_dir);
                } else if (!strcmp(ks, "socket")) {
                        r = get_path(x, v, ks, false, c->socket, sizeof(c->socket));
                        if (!r && strlen(c->socket) >= sizeof(((struct sockaddr_un *)0)->sun_path))
                                r = kerfd__cfg_fail(
                                    x, v, "socket: at most %zu characters (a Unix socket path)",
                                    sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
                } else if (!strcmp(ks, "fleet"))
                        r = get_path(x, v, ks, false, c->fleet, sizeof(c->fleet));
                else if (!strcmp(ks, "node_name")) {
                        r = kerfd__cfg_str(x, v, ks, c->node_name, sizeof(c->node_name));
                        if (!r && !kerf_name_ok(c->node_name))
                                r = kerfd__cfg_fail(x, v,
                                                    "node_name: 1..63 characters [A-Za-z0-9_.-]");
                } else if (!strcmp(ks, "listen_tcp"))
                        r = parse_tcp(x, v, c);
                else if (!strcmp(ks, "backend"))
                        r = kerfd__cfg_section(x, v, &kerfd_cfg_backend, c);
                else if (!strcmp(ks, "limits"))
                        r = kerfd__cfg_section(x, v, &kerfd_cfg_limits, c);
                else if (!strcmp(ks, "policy"))
                        r = kerfd__cfg_section(x, v, &kerfd_cfg_policy, c);
                else if (!strcmp(ks, "fencing"))
                        r = parse_fencing(x, v, c);
                else if (!strcmp(ks, "cdi"))
                        r = parse_cdi(x, v, c);
                else if (!strcmp(ks, "metrics"))
                        r = parse_metrics(x, v, c);
                else if (!strcmp(ks, "retention")) /* retention_cfg.c */
                        r = kerfd_retention_parse(x, v, &c->retention);
                else if (!strcmp(ks, "tenant_defaults"))
                        r = kerfd__cfg_tenant_defaults(x, v, c);
                else if (!strcmp(ks, "queues")) {
                        if ((r = kerfd__cfg_seq(x, v, "queues")) < 0)
                                return r;
                        for (yaml_node_item_t *it = v->data.sequence.items.start;
                             it < v->data.sequence.items.top; it++)
                                if ((r = parse_queue(x, kerfd__cfg_node(x, *it), c)) < 0)
                                        return r;
                } else if (!strcmp(ks, "tenants")) {
                        if ((r = kerfd__cfg_seq(x, v, "tenants")) < 0)
                                return r;
                        for (yaml_node_item_t *it = v->data.sequence.items.start;
                             it < v->data.sequence.items.top; it++)
                                if ((r = kerfd__cfg_tenant(x, kerfd__cfg_node(x, *it), c)) < 0)
                                        return r;
                } else
                        r = kerfd__cfg_fail(
                            x, k,
                            "unknown key \"%s\" (state_dir, socket, listen_tcp, fleet, "
                            "node_name, backend, limits, policy, fencing, cdi, metrics, "
                            "queues, retention, tenant_defaults, tenants)",
                            ks);
                if (r < 0)
                        return r;
        }
        return 0;
}

int kerfd_config_abspath(char *path, size_t cap)
{
        char cwd[PATH_MAX], buf[PATH_MAX];
        if (path[0] == '/')
                return 0;
        if (!getcwd(cwd, sizeof(cwd)))
                return -errno;
        if ((size_t)snprintf(buf, sizeof(buf), "%s/%s", cwd, path) >= cap)
                return -ENAMETOOLONG;
        snprintf(path, cap, "%s", buf);
        return 0;
}

int kerfd_config_check(const kerfd_config *c, char *err, size_t errlen)
{
        if (c->state_dir[0] != '/') {
                snprintf(err, errlen, "state_dir \"%s\": not an absolute path", c->state_dir);
                return -EINVAL;
        }
        if (!c->socket[0] || strlen(c->socket) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
                snprintf(err, errlen, "socket \"%s\": 1..%zu characters (a Unix socket path)",
                         c->socket, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
                return -EINVAL;
        }
        return kerfd_config_sim_gid_check(c, err, errlen);
}

int kerfd_config_load(kerfd_config *c, const char *path, char *err, size_t errlen)
{
        yaml_parser_t parser;
        cfgctx x = {.file = path, .err = err, .errlen = errlen};
        FILE *f;
        int r;

        f = fopen(path, "re");
        if (!f) {
                r = -errno;
                snprintf(err, errlen, "%s: %s", path, strerror(-r));
                return r;
        }
        if (!yaml_parser_initialize(&parser)) {
                fclose(f);
                return -ENOMEM;
        }
        yaml_parser_set_input_file(&parser, f);
        if (!yaml_parser_load(&parser, &x.doc)) {
                snprintf(err, errlen, "%s:%lu: %s", path,
                         (unsigned long)parser.problem_mark.line + 1,
                         parser.problem ? parser.problem : "YAML syntax error");
                yaml_parser_delete(&parser);
                fclose(f);
                return -KERF_EPARSE;
        }
        snprintf(c->path, sizeof(c->path), "%s", path);
        r = parse_root(&x, c);
        yaml_document_delete(&x.doc);
        yaml_parser_delete(&parser);
        fclose(f);
        return r;
}
