/* SPDX-License-Identifier: Apache-2.0 */
/* config.c - reads kerfd.yaml with libyaml's document API; every error names file and line */
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
#include "uidcache.h"
#include "kerf/errno.h"
#include "kerf_cdi.h"

typedef struct cfgctx {
        yaml_document_t doc;
        const char *file;
        char *err;
        size_t errlen;
} cfgctx;

static int fail(cfgctx *x, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(cfgctx *x, const yaml_node_t *n, const char *fmt, ...)
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
        c->max_body = 64 * 1024;
        c->max_tasks = 100000;
        c->submit_rate = 0;
        c->submit_burst = 100;
        c->tick_ms = 50;
        c->grace_s = 10;
        c->threads = 4;
        c->max_conns = 256;
        c->max_conns_per_peer = 32;
        c->admin_conns = 32;
        c->request_timeout_s = 10;
        c->min_lease_s = 30;
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

static yaml_node_t *node(cfgctx *x, int id)
{
        return yaml_document_get_node(&x->doc, id);
}

static const char *scalar(cfgctx *x, yaml_node_t *n)
{
        if (!n || n->type != YAML_SCALAR_NODE)
                return NULL;
        (void)x;
        return (const char *)n->data.scalar.value;
}

static int get_str(cfgctx *x, yaml_node_t *n, const char *key, char *out, size_t cap)
{
        const char *s = scalar(x, n);
        if (!s)
                return fail(x, n, "%s: expected a string", key);
        if (strlen(s) >= cap)
                return fail(x, n, "%s: too long (at most %zu characters)", key, cap - 1);
        snprintf(out, cap, "%s", s);
        return 0;
}

static int get_range(cfgctx *x, yaml_node_t *n, const char *key, uint64_t min, uint64_t max,
                     uint64_t *ret)
{
        const char *s = scalar(x, n);
        char *end;
        unsigned long long v;

        if (!s || !*s || *s == '-')
                return fail(x, n, "%s: expected a non-negative integer", key);
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || *end || v < min || v > max)
                return fail(x, n, "%s: expected an integer %llu..%llu, got \"%s\"", key,
                            (unsigned long long)min, (unsigned long long)max, s);
        *ret = v;
        return 0;
}

static int get_u64(cfgctx *x, yaml_node_t *n, const char *key, uint64_t max, uint64_t *ret)
{
        return get_range(x, n, key, 0, max, ret);
}

static int get_bool(cfgctx *x, yaml_node_t *n, const char *key, bool *ret)
{
        const char *s = scalar(x, n);
        if (s && (!strcmp(s, "true") || !strcmp(s, "yes") || !strcmp(s, "on"))) {
                *ret = true;
                return 0;
        }
        if (s && (!strcmp(s, "false") || !strcmp(s, "no") || !strcmp(s, "off"))) {
                *ret = false;
                return 0;
        }
        return fail(x, n, "%s: expected true or false", key);
}

static int get_bytes(cfgctx *x, yaml_node_t *n, const char *key, uint64_t *ret)
{
        const char *s = scalar(x, n);
        if (!s || kerf_parse_bytes(s, ret) < 0)
                return fail(x, n, "%s: expected a size such as 64KiB or 16GiB", key);
        return 0;
}

#define FOR_PAIRS(x, map, p)                                                                       \
        for (yaml_node_pair_t *p = (map)->data.mapping.pairs.start;                                \
             p < (map)->data.mapping.pairs.top; p++)

/* A mapping whose keys are strings, each given once. */
static int want_map(cfgctx *x, yaml_node_t *n, const char *what)
{
        if (!n || n->type != YAML_MAPPING_NODE)
                return fail(x, n, "%s: expected a mapping", what);
        FOR_PAIRS(x, n, p)
        {
                yaml_node_t *k = node(x, p->key);
                const char *ks = scalar(x, k);
                if (!ks)
                        return fail(x, k, "%s: keys must be strings", what);
                for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++) {
                        yaml_node_t *qk = node(x, q->key);
                        if (!strcmp(scalar(x, qk), ks))
                                return fail(x, k, "%s: key \"%s\" given twice (first at line %lu)",
                                            what, ks, (unsigned long)qk->start_mark.line + 1);
                }
        }
        return 0;
}

/* Tenant and cohort names: the one name rule (kerf_name_ok, docs/API.md "Names"). */
static bool name_ok(const char *s)
{
        return kerf_name_ok(s);
}

/* A non-empty path string; absolute when `absolute`. */
static int get_path(cfgctx *x, yaml_node_t *n, const char *key, bool absolute, char *out,
                    size_t cap)
{
        int r = get_str(x, n, key, out, cap);
        if (r < 0)
                return r;
        if (!out[0])
                return fail(x, n, "%s: expected a path, got an empty value", key);
        if (absolute && out[0] != '/')
                return fail(x, n, "%s: expected an absolute path, got \"%s\"", key, out);
        return 0;
}

static int want_seq(cfgctx *x, yaml_node_t *n, const char *what)
{
        if (!n || n->type != YAML_SEQUENCE_NODE)
                return fail(x, n, "%s: expected a list", what);
        return 0;
}

/* quota: {gpus: {nominal: 4, borrow_limit: 2, lend_limit: 1}, memory: {...}} */
static int parse_quota(cfgctx *x, yaml_node_t *q, kerfd_tenant_cfg *t)
{
        /* largest finite quota per resource, as PUT /v1/tenants/{name}/quota (docs/API.md) */
        static const uint64_t max[KERF_RES_COUNT] = {1u << 20, 1ull << 60, 100u << 20, 1u << 20};
        unsigned seen = 0;
        int r = want_map(x, q, "quota");
        if (r < 0)
                return r;
        FOR_PAIRS(x, q, p)
        {
                yaml_node_t *k = node(x, p->key), *v = node(x, p->value);
                const char *ks = scalar(x, k);
                int res = -1;
                if (!ks)
                        return fail(x, k, "quota: keys must be strings");
                if (!strcmp(ks, "gpus"))
                        res = KERF_RES_GPUS;
                else if (!strcmp(ks, "memory") || !strcmp(ks, "mem"))
                        res = KERF_RES_MEM;
                else if (!strcmp(ks, "compute"))
                        res = KERF_RES_COMPUTE;
                else if (!strcmp(ks, "mig_slices"))
                        res = KERF_RES_MIG_SLICES;
                else
                        return fail(x, k,
                                    "quota: unknown resource \"%s\" (gpus, memory, compute, "
                                    "mig_slices)",
                                    ks);
                if (seen & (1u << res))
                        return fail(x, k, "quota: %s given twice", ks);
                seen |= 1u << res;
                if ((r = want_map(x, v, ks)) < 0)
                        return r;
                unsigned seen_k = 0;
                FOR_PAIRS(x, v, pp)
                {
                        yaml_node_t *kk = node(x, pp->key), *vv = node(x, pp->value);
                        const char *kks = scalar(x, kk);
                        uint64_t *slot;
                        if (!kks)
                                return fail(x, kk, "%s: keys must be strings", ks);
                        if (!strcmp(kks, "nominal"))
                                slot = &t->nominal[res];
                        else if (!strcmp(kks, "borrow_limit") || !strcmp(kks, "borrow"))
                                slot = &t->borrow_limit[res];
                        else if (!strcmp(kks, "lend_limit") || !strcmp(kks, "lend"))
                                slot = &t->lend_limit[res];
                        else
                                return fail(x, kk,
                                            "%s: unknown key \"%s\" (nominal, borrow_limit, "
                                            "lend_limit)",
                                            ks, kks);
                        unsigned bit = slot == &t->nominal[res]        ? 1u
                                       : slot == &t->borrow_limit[res] ? 2u
                                                                       : 4u;
                        if (seen_k & bit)
                                return fail(x, kk, "%s: \"%s\" given twice", ks, kks);
                        seen_k |= bit;
                        const char *sv = scalar(x, vv);
                        if (sv &&
                            (!strcmp(sv, "null") || !strcmp(sv, "~") || !strcmp(sv, "unlimited"))) {
                                *slot = KERF_UNLIMITED;
                                continue;
                        }
                        if (res == KERF_RES_MEM) {
                                r = get_bytes(x, vv, kks, slot);
                                if (!r && *slot > max[res])
                                        r = fail(x, vv, "%s.%s: at most 1EiB", ks, kks);
                        } else {
                                r = get_u64(x, vv, kks, max[res], slot);
                        }
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* workloads: [training, inference]: the workload types a tenant may submit. */
static int parse_workloads(cfgctx *x, yaml_node_t *v, unsigned *ret)
{
        unsigned mask = 0;
        int r;

        if ((r = want_seq(x, v, "workloads")) < 0)
                return r;
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
             it++) {
                yaml_node_t *in = node(x, *it);
                const char *s = scalar(x, in);
                int w = s ? kerf_workload_parse(s) : -EINVAL;
                if (w < 0)
                        return fail(x, in,
                                    "workloads: unknown workload \"%s\" (training, "
                                    "inference, dev, batch)",
                                    s ? s : "?");
                mask |= 1u << w;
        }
        if (!mask)
                return fail(x, v, "workloads: at least one workload");
        *ret = mask;
        return 0;
}

/* max_priority / max_tier / max_pending of a tenant or of tenant_defaults. 1: not one of them. */
static int parse_ceiling(cfgctx *x, yaml_node_t *k, yaml_node_t *v, int *prio, int *tier,
                         long long *pending)
{
        const char *ks = scalar(x, k), *s = scalar(x, v);
        uint64_t u;
        int r;

        if (!strcmp(ks, "max_priority")) {
                char *end;
                long p = s ? strtol(s, &end, 10) : 0;
                if (!s || !*s || *end || p < -1000 || p > 1000)
                        return fail(x, v, "max_priority: an integer -1000..1000");
                *prio = (int)p;
                return 0;
        }
        if (!strcmp(ks, "max_tier")) {
                int t = s ? kerf_tier_parse(s) : -EINVAL;
                if (t < 0)
                        return fail(x, v, "max_tier: high, queueable or exploratory");
                *tier = t;
                return 0;
        }
        if (!strcmp(ks, "max_pending")) {
                if ((r = get_u64(x, v, ks, 10000000, &u)) < 0)
                        return r;
                *pending = (long long)u;
                return 0;
        }
        return 1;
}

/* tenant_defaults: {max_priority, max_tier, max_pending, uid_base, uid_span} */
static int parse_tenant_defaults(cfgctx *x, yaml_node_t *m, kerfd_config *c)
{
        kerfd_tenant_defaults *d = &c->tenant_defaults;
        int prio = d->max_priority, tier = d->max_tier;
        long long pending = d->max_pending;
        uint64_t v;
        int r = want_map(x, m, "tenant_defaults");

        if (r < 0)
                return r;
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = node(x, p->key), *vn = node(x, p->value);
                const char *ks = scalar(x, k);
                if (!strcmp(ks, "uid_base")) {
                        r = get_u64(x, vn, ks, 0x7ffffffe, &v);
                        d->uid_base = v;
                } else if (!strcmp(ks, "uid_span")) {
                        r = get_range(x, vn, ks, 1, 1u << 30, &v);
                        d->uid_span = (unsigned)v;
                } else if ((r = parse_ceiling(x, k, vn, &prio, &tier, &pending)) == 1)
                        r = fail(x, k,
                                 "tenant_defaults: unknown key \"%s\" (max_priority, max_tier, "
                                 "max_pending, uid_base, uid_span)",
                                 ks);
                if (r < 0)
                        return r;
        }
        if (d->uid_base && (d->uid_base < 65536 || d->uid_base + d->uid_span > 0x7fffffffull))
                return fail(x, m,
                            "tenant_defaults: uid_base..uid_base+uid_span must lie in "
                            "65536..2147483646 (or uid_base: 0)");
        d->max_priority = prio;
        d->max_tier = tier;
        d->max_pending = (unsigned)pending;
        return 0;
}

static int parse_tenant(cfgctx *x, yaml_node_t *m, kerfd_config *c)
{
        kerfd_tenant_cfg *t;
        uint64_t v;
        int r;

        if ((r = want_map(x, m, "tenants[]")) < 0)
                return r;
        if (c->n_tenants >= KERFD_MAX_TENANTS)
                return fail(x, m, "tenants: at most %d", KERFD_MAX_TENANTS);
        t = &c->tenants[c->n_tenants];
        kerfd_tenant_cfg_init(t);
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = node(x, p->key), *vn = node(x, p->value);
                const char *ks = scalar(x, k);
                if (!ks)
                        return fail(x, k, "tenant: keys must be strings");
                if (!strcmp(ks, "name"))
                        r = get_str(x, vn, "name", t->name, sizeof(t->name));
                else if (!strcmp(ks, "cohort")) {
                        r = get_str(x, vn, "cohort", t->cohort, sizeof(t->cohort));
                        if (!r && !name_ok(t->cohort))
                                r = fail(x, vn, "cohort \"%s\": " KERF_NAME_RULE, t->cohort);
                } else if (!strcmp(ks, "weight")) {
                        r = get_range(x, vn, "weight", 1, 1000, &v);
                        t->weight = (unsigned)v;
                } else if (!strcmp(ks, "uid")) {
                        r = get_u64(x, vn, "uid", 0x7ffffffe, &v);
                        t->uid = (long long)v;
                } else if (!strcmp(ks, "gid")) {
                        r = get_u64(x, vn, "gid", 0x7ffffffe, &v);
                        t->gid = (long long)v;
                } else if (!strcmp(ks, "quota"))
                        r = parse_quota(x, vn, t);
                else if (!strcmp(ks, "allow_root"))
                        r = get_bool(x, vn, ks, &t->allow_root);
                else if (!strcmp(ks, "workloads"))
                        r = parse_workloads(x, vn, &t->workloads);
                else if ((r = parse_ceiling(x, k, vn, &t->max_priority, &t->max_tier,
                                            &t->max_pending)) == 1)
                        r = fail(x, k,
                                 "tenant: unknown key \"%s\" (name, cohort, weight, uid, gid, "
                                 "allow_root, quota, max_priority, max_tier, max_pending, "
                                 "workloads)",
                                 ks);
                if (r < 0)
                        return r;
        }
        if ((t->uid >= 0 || t->gid == 0) && !t->allow_root) {
                char why[160];
                kerfd__uidcache_warm(t->uid, true); /* at load: kept fresh from now on */
                if (!kerfd_uid_privileged(t->uid, why, sizeof(why))[0] && t->gid == 0)
                        snprintf(why, sizeof(why), "gid 0 is root's group");
                if (why[0])
                        return fail(x, m,
                                    "tenant \"%s\": uid: %s; its tasks would be root or admin "
                                    "(set allow_root: true on this tenant to allow it)",
                                    t->name, why);
        }
        if (!t->name[0])
                return fail(x, m, "tenant: name is required");
        for (unsigned i = 0; i < c->n_tenants; i++)
                if (!strcmp(c->tenants[i].name, t->name))
                        return fail(x, m, "tenant \"%s\" defined twice", t->name);
        if (!name_ok(t->name))
                return fail(x, m, "tenant name \"%s\": " KERF_NAME_RULE, t->name);
        c->n_tenants++;
        return 0;
}

static int parse_routes(cfgctx *x, yaml_node_t *m, kerf_policy *pol)
{
        int r = want_map(x, m, "policy.routes");
        if (r < 0)
                return r;
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = node(x, p->key), *v = node(x, p->value);
                const char *ws = scalar(x, k);
                int w = ws ? kerf_workload_parse(ws) : -EINVAL;
                if (w < 0)
                        return fail(x, k, "routes: unknown workload \"%s\"", ws ? ws : "?");
                if ((r = want_map(x, v, ws)) < 0)
                        return r;
                FOR_PAIRS(x, v, pp)
                {
                        yaml_node_t *tk = node(x, pp->key), *tv = node(x, pp->value);
                        const char *ts = scalar(x, tk);
                        int t = ts ? kerf_tier_parse(ts) : -EINVAL;
                        kerf_unit_kind kinds[KERF_UNIT_KIND_COUNT];
                        unsigned n = 0;
                        if (t < 0)
                                return fail(x, tk, "routes.%s: unknown tier \"%s\"", ws,
                                            ts ? ts : "?");
                        if ((r = want_seq(x, tv, ts)) < 0)
                                return r;
                        for (yaml_node_item_t *it = tv->data.sequence.items.start;
                             it < tv->data.sequence.items.top; it++) {
                                yaml_node_t *in = node(x, *it);
                                const char *rs = scalar(x, in);
                                int kk = rs ? kerf_unit_kind_parse(rs) : -EINVAL;
                                if (kk < 0)
                                        return fail(x, in,
                                                    "routes.%s.%s: unknown route \"%s\" (whole, "
                                                    "mig, slice, mps, tslice)",
                                                    ws, ts, rs ? rs : "?");
                                for (unsigned j = 0; j < n; j++)
                                        if (kinds[j] == (kerf_unit_kind)kk)
                                                return fail(x, in,
                                                            "routes.%s.%s: route \"%s\" given "
                                                            "twice",
                                                            ws, ts, rs);
                                if (n >= KERF_UNIT_KIND_COUNT)
                                        return fail(x, in, "routes.%s.%s: too many", ws, ts);
                                kinds[n++] = (kerf_unit_kind)kk;
                        }
                        if (n == 0)
                                return fail(x, tv, "routes.%s.%s: at least one route", ws, ts);
                        if (kerf_policy_set_routes(pol, (kerf_workload)w, (kerf_tier)t, kinds, n) <
                            0)
                                return fail(x, tv, "routes.%s.%s: 1..5 distinct routes required",
                                            ws, ts);
                }
        }
        return 0;
}

/* A key whose value is one of two words: *ret = (value == yes). */
static int get_choice(cfgctx *x, yaml_node_t *n, const char *key, const char *no, const char *yes,
                      bool *ret)
{
        const char *s = scalar(x, n);
        if (s && (!strcmp(s, no) || !strcmp(s, yes))) {
                *ret = !strcmp(s, yes);
                return 0;
        }
        return fail(x, n, "%s: %s or %s, got \"%s\"", key, no, yes, s ? s : "(not a scalar)");
}

static int parse_policy(cfgctx *x, yaml_node_t *m, kerfd_config *c)
{
        kerf_policy *pol = &c->policy;
        int r = want_map(x, m, "policy");
        if (r < 0)
                return r;
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = node(x, p->key), *v = node(x, p->value);
                const char *ks = scalar(x, k);
                if (!ks)
                        return fail(x, k, "policy: keys must be strings");
                if (!strcmp(ks, "routes"))
                        r = parse_routes(x, v, pol);
                else if (!strcmp(ks, "preemption"))
                        r = get_bool(x, v, ks, &pol->preemption);
                else if (!strcmp(ks, "mig_reconfigure"))
                        r = get_bool(x, v, ks, &pol->mig_reconfigure);
                else if (!strcmp(ks, "dev_default_memory")) {
                        r = get_bytes(x, v, ks, &pol->dev_default_mem);
                        if (!r && (pol->dev_default_mem < KERF_MIB ||
                                   pol->dev_default_mem > (1ull << 50)))
                                r = fail(x, v, "dev_default_memory: 1MiB..1PiB");
                } else if (!strcmp(ks, "placement")) {
                        const char *s = scalar(x, v);
                        if (s && !strcmp(s, "kerf"))
                                pol->place = KERF_PLACE_KERF;
                        else if (s && !strcmp(s, "bestfit"))
                                pol->place = KERF_PLACE_BESTFIT;
                        else if (s && !strcmp(s, "firstfit"))
                                pol->place = KERF_PLACE_FIRSTFIT;
                        else
                                r = fail(x, v, "placement: kerf, bestfit or firstfit");
                } else if (!strcmp(ks, "unenforced_slices"))
                        r = get_choice(x, v, ks, "refuse", "allow", &c->unenforced_slices);
                else if (!strcmp(ks, "preempt_slices_by"))
                        r = get_choice(x, v, ks, "kill", "suspend", &c->preempt_suspend);
                else if (!strcmp(ks, "shim_bypass"))
                        r = get_choice(x, v, ks, "record", "stop", &c->bypass_stop);
                else
                        r = fail(x, k,
                                 "policy: unknown key \"%s\" (routes, preemption, "
                                 "mig_reconfigure, dev_default_memory, placement, "
                                 "unenforced_slices, preempt_slices_by, shim_bypass)",
                                 ks);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_backend(cfgctx *x, yaml_node_t *m, kerfd_config *c)
{
        int r = want_map(x, m, "backend");
        if (r < 0)
                return r;
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = node(x, p->key), *v = node(x, p->value);
                const char *ks = scalar(x, k);
                if (!ks)
                        return fail(x, k, "backend: keys must be strings");
                if (!strcmp(ks, "nvml_library"))
                        r = get_path(x, v, ks, false, c->nvml_library, sizeof(c->nvml_library));
                else if (!strcmp(ks, "allow_mig_mode_change"))
                        r = get_bool(x, v, ks, &c->allow_mig_mode_change);
                else if (!strcmp(ks, "simulated"))
                        r = get_bool(x, v, ks, &c->force_sim);
                else if (!strcmp(ks, "sim_gid")) {
                        uint64_t g = 0;
                        r = get_range(x, v, ks, 1, 0x7ffffffe, &g);
                        c->sim_gid = (unsigned)g;
                } else
                        r = fail(x, k,
                                 "backend: unknown key \"%s\" (nvml_library, "
                                 "allow_mig_mode_change, simulated, sim_gid)",
                                 ks);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int fence_mode(cfgctx *x, yaml_node_t *v, kerfd_config *c)
{
        const char *m = scalar(x, v);
        if (!m || (strcmp(m, "auto") && strcmp(m, "off") && strcmp(m, "v1") && strcmp(m, "v2")))
                return fail(x, v, "fencing: mode must be auto, off, v1 or v2");
        snprintf(c->fencing, sizeof(c->fencing), "%s", m);
        return 0;
}

/* `fencing: auto|off` or a map {mode, cgroup_root, dev_dir, mig_minors}. */
static int parse_fencing(cfgctx *x, yaml_node_t *m, kerfd_config *c)
{
        int r;
        if (m && m->type == YAML_SCALAR_NODE)
                return fence_mode(x, m, c);
        if ((r = want_map(x, m, "fencing")) < 0)
                return r;
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = node(x, p->key), *v = node(x, p->value);
                const char *ks = scalar(x, k);
                if (!ks)
                        return fail(x, k, "fencing: keys must be strings");
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
                        r = fail(x, k,
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
        int r = want_map(x, m, "cdi");
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = node(x, p->key), *v = node(x, p->value);
                const char *ks = scalar(x, k);
                if (r < 0)
                        return r;
                if (!strcmp(ks, "enabled"))
                        r = get_bool(x, v, ks, &c->cdi_enabled);
                else if (!strcmp(ks, "spec_dir")) {
                        r = get_path(x, v, ks, true, c->cdi_dir, sizeof(c->cdi_dir));
                        if (!r && kerf_cdi_dir_check(c->cdi_dir, why, sizeof(why)) < 0)
                                r = fail(x, v, "%s", why);
                } else if (!strcmp(ks, "kind")) {
                        r = get_str(x, v, ks, c->cdi_kind, sizeof(c->cdi_kind));
                        if (!r && !kerf_cdi_kind_ok(c->cdi_kind))
                                r = fail(x, v,
                                         "cdi.kind: \"%s\" is not VENDOR/CLASS (a DNS name, "
                                         "then 1..63 of [A-Za-z0-9_.-])",
                                         c->cdi_kind);
                } else
                        r = fail(x, k, "cdi: unknown key \"%s\" (enabled, spec_dir, kind)", ks);
        }
        return r;
}

static int parse_limits(cfgctx *x, yaml_node_t *m, kerfd_config *c)
{
        uint64_t v;
        int r = want_map(x, m, "limits");
        if (r < 0)
                return r;
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = node(x, p->key), *vn = node(x, p->value);
                const char *ks = scalar(x, k);
                if (!ks)
                        return fail(x, k, "limits: keys must be strings");
                if (!strcmp(ks, "max_body")) {
                        r = get_bytes(x, vn, ks, &c->max_body);
                        if (!r && (c->max_body < 1024 || c->max_body > 64 * KERF_MIB))
                                r = fail(x, vn, "max_body: 1KiB..64MiB");
                } else if (!strcmp(ks, "max_tasks")) {
                        r = get_range(x, vn, ks, 1, 10000000, &v);
                        c->max_tasks = (unsigned)v;
                } else if (!strcmp(ks, "submit_rate")) {
                        r = get_u64(x, vn, ks, 1000000, &v);
                        c->submit_rate = (double)v;
                } else if (!strcmp(ks, "submit_burst")) {
                        r = get_range(x, vn, ks, 1, 1000000, &v);
                        c->submit_burst = (unsigned)v;
                } else if (!strcmp(ks, "tick_ms")) {
                        r = get_range(x, vn, ks, 5, 10000, &v);
                        c->tick_ms = (unsigned)v;
                } else if (!strcmp(ks, "grace_s")) {
                        r = get_u64(x, vn, ks, 3600, &v);
                        c->grace_s = (unsigned)v;
                } else if (!strcmp(ks, "threads")) {
                        r = get_range(x, vn, ks, 1, 256, &v);
                        c->threads = (unsigned)v;
                } else if (!strcmp(ks, "max_connections")) {
                        r = get_range(x, vn, ks, 1, 100000, &v);
                        c->max_conns = (unsigned)v;
                } else if (!strcmp(ks, "max_connections_per_peer")) {
                        r = get_range(x, vn, ks, 1, 100000, &v);
                        c->max_conns_per_peer = (unsigned)v;
                } else if (!strcmp(ks, "admin_connections")) {
                        r = get_range(x, vn, ks, 1, 10000, &v);
                        c->admin_conns = (unsigned)v;
                } else if (!strcmp(ks, "request_timeout_s")) {
                        r = get_range(x, vn, ks, 1, 3600, &v);
                        c->request_timeout_s = (unsigned)v;
                } else if (!strcmp(ks, "min_lease_s")) {
                        r = get_range(x, vn, ks, 1, 3600, &v);
                        c->min_lease_s = (unsigned)v;
                } else
                        r = fail(x, k,
                                 "limits: unknown key \"%s\" (max_body, max_tasks, submit_rate, "
                                 "min_lease_s, "
                                 "submit_burst, tick_ms, grace_s, threads, max_connections, "
                                 "max_connections_per_peer, admin_connections, "
                                 "request_timeout_s)",
                                 ks);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int parse_tcp(cfgctx *x, yaml_node_t *v, kerfd_config *c)
{
        char buf[96], *colon;
        uint64_t port;
        int r = get_str(x, v, "listen_tcp", buf, sizeof(buf));
        if (r < 0)
                return r;
        colon = strrchr(buf, ':');
        if (!colon)
                return fail(x, v, "listen_tcp: expected 127.0.0.1:PORT");
        *colon = 0;
        if (strcmp(buf, "127.0.0.1") && strcmp(buf, "localhost"))
                return fail(x, v, "listen_tcp: only loopback (127.0.0.1) is allowed");
        yaml_node_t fake = *v;
        fake.data.scalar.value = (yaml_char_t *)(colon + 1);
        if (get_u64(x, &fake, "listen_tcp port", 65535, &port) < 0 || port == 0)
                return fail(x, v, "listen_tcp: port 1..65535");
        snprintf(c->tcp_host, sizeof(c->tcp_host), "127.0.0.1");
        c->tcp_port = (unsigned)port;
        return 0;
}

static int parse_root(cfgctx *x, kerfd_config *c)
{
        yaml_node_t *root = yaml_document_get_root_node(&x->doc);
        int r;

        if (!root)
                return 0; /* empty file: defaults */
        if ((r = want_map(x, root, "top level")) < 0)
                return r;
        FOR_PAIRS(x, root, p)
        {
                yaml_node_t *k = node(x, p->key), *v = node(x, p->value);
                const char *ks = scalar(x, k);
                if (!ks)
                        return fail(x, k, "keys must be strings");
                if (!strcmp(ks, "state_dir")) {
                        r = get_path(x, v, ks, false, c->state_dir, sizeof(c->state_dir));
                        if (!r && kerfd_config_abspath(c->state_dir, sizeof(c->state_dir)) < 0)
                                r = fail(x, v, "state_dir: \"%s\" made absolute is too long",
                                         c->state_dir);
                } else if (!strcmp(ks, "socket")) {
                        r = get_path(x, v, ks, false, c->socket, sizeof(c->socket));
                        if (!r && strlen(c->socket) >= sizeof(((struct sockaddr_un *)0)->sun_path))
                                r = fail(x, v,
                                         "socket: at most %zu characters (a Unix socket path)",
                                         sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
                } else if (!strcmp(ks, "fleet"))
                        r = get_path(x, v, ks, false, c->fleet, sizeof(c->fleet));
                else if (!strcmp(ks, "node_name")) {
                        r = get_str(x, v, ks, c->node_name, sizeof(c->node_name));
                        if (!r && !kerf_name_ok(c->node_name))
                                r = fail(x, v, "node_name: 1..63 characters [A-Za-z0-9_.-]");
                } else if (!strcmp(ks, "listen_tcp"))
                        r = parse_tcp(x, v, c);
                else if (!strcmp(ks, "backend"))
                        r = parse_backend(x, v, c);
                else if (!strcmp(ks, "limits"))
                        r = parse_limits(x, v, c);
                else if (!strcmp(ks, "policy"))
                        r = parse_policy(x, v, c);
                else if (!strcmp(ks, "fencing"))
                        r = parse_fencing(x, v, c);
                else if (!strcmp(ks, "cdi"))
                        r = parse_cdi(x, v, c);
                else if (!strcmp(ks, "retention")) /* retention_cfg.c */
                        r = kerfd_retention_parse(&x->doc, v, x->file, &c->retention, x->err,
                                                  x->errlen);
                else if (!strcmp(ks, "tenant_defaults"))
                        r = parse_tenant_defaults(x, v, c);
                else if (!strcmp(ks, "tenants")) {
                        if ((r = want_seq(x, v, "tenants")) < 0)
                                return r;
                        for (yaml_node_item_t *it = v->data.sequence.items.start;
                             it < v->data.sequence.items.top; it++)
                                if ((r = parse_tenant(x, node(x, *it), c)) < 0)
                                        return r;
                } else
                        r = fail(x, k,
                                 "unknown key \"%s\" (state_dir, socket, listen_tcp, fleet, "
                                 "node_name, backend, limits, policy, fencing, cdi, "
                                 "retention, tenant_defaults, tenants)",
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
