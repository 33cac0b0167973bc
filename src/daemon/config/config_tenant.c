/* SPDX-License-Identifier: Apache-2.0 */
/* config_tenant.c - kerfd.yaml's tenants: and tenant_defaults: (quotas, ceilings, identities) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_yaml.h"
#include "kerf/fields.h"
#include "uidcache.h"
#include "kerf/units.h"

/* quota: {gpus: {nominal: 4, borrow_limit: 2, lend_limit: 1}, memory: {...}} */
static int parse_quota(cfgctx *x, yaml_node_t *q, kerfd_tenant_cfg *t)
{
        /* largest finite quota per resource, as PUT /v1/tenants/{name}/quota (docs/API.md) */
        static const uint64_t max[KERF_RES_COUNT] = {KERF_QUOTA_MAX_GPUS, KERF_QUOTA_MAX_MEM_BYTES,
                                                     KERF_QUOTA_MAX_COMPUTE,
                                                     KERF_QUOTA_MAX_MIG_SLICES};
        unsigned seen = 0;
        int r = kerfd__cfg_map(x, q, "quota");
        if (r < 0)
                return r;
        FOR_PAIRS(x, q, p)
        {
                yaml_node_t *k = kerfd__cfg_node(x, p->key), *v = kerfd__cfg_node(x, p->value);
                const char *ks = kerfd__cfg_scalar(x, k);
                int res = -1;
                if (!ks)
                        return kerfd__cfg_fail(x, k, "quota: keys must be strings");
                if (!strcmp(ks, "gpus"))
                        res = KERF_RES_GPUS;
                else if (!strcmp(ks, "memory") || !strcmp(ks, "mem"))
                        res = KERF_RES_MEM;
                else if (!strcmp(ks, "compute"))
                        res = KERF_RES_COMPUTE;
                else if (!strcmp(ks, "mig_slices"))
                        res = KERF_RES_MIG_SLICES;
                else
                        return kerfd__cfg_fail(
                            x, k,
                            "quota: unknown resource \"%s\" (gpus, memory, compute, "
                            "mig_slices)",
                            ks);
                if (seen & (1u << res))
                        return kerfd__cfg_fail(x, k, "quota: %s given twice", ks);
                seen |= 1u << res;
                if ((r = kerfd__cfg_map(x, v, ks)) < 0)
                        return r;
                unsigned seen_k = 0;
                FOR_PAIRS(x, v, pp)
                {
                        yaml_node_t *kk = kerfd__cfg_node(x, pp->key),
                                    *vv = kerfd__cfg_node(x, pp->value);
                        const char *kks = kerfd__cfg_scalar(x, kk);
                        uint64_t *slot;
                        if (!kks)
                                return kerfd__cfg_fail(x, kk, "%s: keys must be strings", ks);
                        if (!strcmp(kks, "nominal"))
                                slot = &t->nominal[res];
                        else if (!strcmp(kks, "borrow_limit") || !strcmp(kks, "borrow"))
                                slot = &t->borrow_limit[res];
                        else if (!strcmp(kks, "lend_limit") || !strcmp(kks, "lend"))
                                slot = &t->lend_limit[res];
                        else
                                return kerfd__cfg_fail(
                                    x, kk,
                                    "%s: unknown key \"%s\" (nominal, borrow_limit, "
                                    "lend_limit)",
                                    ks, kks);
                        unsigned bit = slot == &t->nominal[res]        ? 1u
                                       : slot == &t->borrow_limit[res] ? 2u
                                                                       : 4u;
                        if (seen_k & bit)
                                return kerfd__cfg_fail(x, kk, "%s: \"%s\" given twice", ks, kks);
                        seen_k |= bit;
                        const char *sv = kerfd__cfg_scalar(x, vv);
                        if (sv &&
                            (!strcmp(sv, "null") || !strcmp(sv, "~") || !strcmp(sv, "unlimited"))) {
                                *slot = KERF_UNLIMITED;
                                continue;
                        }
                        if (res == KERF_RES_MEM) {
                                char key[64];
                                snprintf(key, sizeof(key), "quota.%s.%s", ks, kks);
                                r = kerfd__cfg_size(x, vv, key, 0, max[res], slot);
                        } else {
                                r = kerfd__cfg_u64(x, vv, kks, max[res], slot);
                        }
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* What `f` accepts, in kerf_field_describe's words, without its JSON null. */
static const char *accepts(const kerf_field *f, char *buf, size_t len)
{
        kerf_field g = *f;
        g.flags &= ~KERF_FIELD_NULLABLE;
        return kerf_field_describe(&g, buf, len);
}

/* `s` as an error message shows it: control bytes as '?', at most 64 bytes and "...". */
static const char *shown(const char *s, char *buf, size_t len)
{
        size_t o = 0;
        for (; s && *s && o + 4 < len && o < 64; s++)
                buf[o++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
        if (s && *s && o + 4 <= len)
                memcpy(buf + o, "...", 3), o += 3;
        buf[o] = '\0';
        return buf;
}

/* One key of a tenant or of tenant_defaults by its descriptor (kerf_tenant_fields): the type
 * picks the reader, the bounds and the words of the error are the descriptor's ("FILE:LINE:
 * max_priority: expected an integer -1000..1000, got \"x\""). Output written on success. */
static int tenant_key(cfgctx *x, yaml_node_t *v, const kerf_field *f, kerf_field_value *ret)
{
        const char *s = kerfd__cfg_scalar(x, v);
        kerf_field_value out = {0};
        char d[320], g[80], *end;
        long long i;
        int r, e;

        switch (f->type) {
        case KERF_FIELD_BOOL:
                if ((r = kerfd__cfg_bool(x, v, f->name, &out.b)) < 0)
                        return r;
                break;
        case KERF_FIELD_INT:
                errno = 0;
                i = s && *s ? strtoll(s, &end, 10) : 0;
                if (!s || !*s || errno || *end || i < f->min || i > f->max)
                        goto bad;
                out.i = i;
                break;
        case KERF_FIELD_ENUM:
                if (!s || (e = f->value_parse(s)) < 0)
                        goto bad;
                out.i = e;
                break;
        case KERF_FIELD_NAME:
                if (!s || !kerf_name_ok(s))
                        goto bad;
                out.s = s;
                break;
        case KERF_FIELD_STRLIST: /* a list of enum values (workloads) */
                if ((r = kerfd__cfg_seq(x, v, f->name)) < 0)
                        return r;
                for (yaml_node_item_t *it = v->data.sequence.items.start;
                     it < v->data.sequence.items.top; it++) {
                        yaml_node_t *in = kerfd__cfg_node(x, *it);
                        const char *w = kerfd__cfg_scalar(x, in);
                        if (!w || (e = f->value_parse(w)) < 0)
                                return kerfd__cfg_fail(x, in, "%s: expected %s, got \"%s\"",
                                                       f->name, accepts(f, d, sizeof(d)),
                                                       w ? shown(w, g, sizeof(g)) : "a non-scalar");
                        out.i |= 1LL << e;
                }
                if ((int64_t)(v->data.sequence.items.top - v->data.sequence.items.start) < f->min)
                        return kerfd__cfg_fail(x, v, "%s: expected %s", f->name,
                                               accepts(f, d, sizeof(d)));
                break;
        default: /* objects (quota) are read by their own parser */
                return kerfd__cfg_fail(x, v, "%s: not a scalar key", f->name);
        }
        *ret = out;
        return 0;
bad:
        return kerfd__cfg_fail(x, v, "%s: expected %s, got \"%s\"", f->name,
                               accepts(f, d, sizeof(d)),
                               s ? shown(s, g, sizeof(g)) : "a non-scalar");
}

/* The descriptor of key `k` of a mapping of kind `object` (KERF_FIELD_TENANT_FILE or
 * _DEFAULTS), or NULL after failing with "WHERE: unknown key \"colour\" (did you mean ...?;
 * KEYS)" or "... only accepted by ...". */
static const kerf_field *tenant_lookup(cfgctx *x, yaml_node_t *k, unsigned object,
                                       const char *where, int *r)
{
        const char *ks = kerfd__cfg_scalar(x, k);
        char msg[512], keys[320] = "";
        const kerf_field *f;
        size_t o = 0;

        if (!ks) {
                *r = kerfd__cfg_fail(x, k, "%s: keys must be strings", where);
                return NULL;
        }
        f = kerf_field_lookup(kerf_tenant_fields, kerf_tenant_fields_count, ks, object, msg,
                              sizeof(msg));
        if (f)
                return f;
        for (size_t i = 0; i < kerf_tenant_fields_count && o < sizeof(keys); i++)
                if (kerf_tenant_fields[i].objects & object) {
                        int w = snprintf(keys + o, sizeof(keys) - o, "%s%s", o ? ", " : "",
                                         kerf_tenant_fields[i].name);
                        if (w > 0)
                                o += (size_t)w;
                }
        *r = kerfd__cfg_fail(x, k, "%s: %s (%s)", where, msg, keys);
        return NULL;
}

/* tenant_defaults: {max_priority, max_tier, max_pending, uid_base, uid_span} (the
 * KERF_FIELD_TENANT_DEFAULTS keys of kerf_tenant_fields) */
int kerfd__cfg_tenant_defaults(cfgctx *x, yaml_node_t *m, kerfd_config *c)
{
        kerfd_tenant_defaults *d = &c->tenant_defaults, nd = *d;
        int r = kerfd__cfg_map(x, m, "tenant_defaults");

        if (r < 0)
                return r;
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = kerfd__cfg_node(x, p->key), *vn = kerfd__cfg_node(x, p->value);
                const kerf_field *f =
                    tenant_lookup(x, k, KERF_FIELD_TENANT_DEFAULTS, "tenant_defaults", &r);
                kerf_field_value v;
                if (!f || (r = tenant_key(x, vn, f, &v)) < 0)
                        return r;
                if (!strcmp(f->name, "uid_base"))
                        nd.uid_base = (unsigned long long)v.i;
                else if (!strcmp(f->name, "uid_span"))
                        nd.uid_span = (unsigned)v.i;
                else if (!strcmp(f->name, "max_priority"))
                        nd.max_priority = (int)v.i;
                else if (!strcmp(f->name, "max_tier"))
                        nd.max_tier = (int)v.i;
                else if (!strcmp(f->name, "max_pending"))
                        nd.max_pending = (unsigned)v.i;
        }
        if (nd.uid_base &&
            (nd.uid_base < 65536 || nd.uid_base + nd.uid_span > (unsigned long long)KERF_MAX_ID))
                return kerfd__cfg_fail(x, m,
                                       "tenant_defaults: uid_base..uid_base+uid_span must lie in "
                                       "65536..%lld (or uid_base: 0)",
                                       (long long)KERF_MAX_TENANT_ID);
        *d = nd;
        return 0;
}

int kerfd__cfg_tenant(cfgctx *x, yaml_node_t *m, kerfd_config *c)
{
        kerfd_tenant_cfg *t;
        int r;

        if ((r = kerfd__cfg_map(x, m, "tenants[]")) < 0)
                return r;
        if (c->n_tenants >= KERFD_MAX_TENANTS)
                return kerfd__cfg_fail(x, m, "tenants: at most %d", KERFD_MAX_TENANTS);
        t = &c->tenants[c->n_tenants];
        kerfd_tenant_cfg_init(t);
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = kerfd__cfg_node(x, p->key), *vn = kerfd__cfg_node(x, p->value);
                const kerf_field *f = tenant_lookup(x, k, KERF_FIELD_TENANT_FILE, "tenant", &r);
                kerf_field_value v;
                if (!f)
                        return r;
                if (!strcmp(f->name, "quota")) {
                        if ((r = parse_quota(x, vn, t)) < 0)
                                return r;
                        continue;
                }
                if ((r = tenant_key(x, vn, f, &v)) < 0)
                        return r;
                if (!strcmp(f->name, "name"))
                        snprintf(t->name, sizeof(t->name), "%s", v.s);
                else if (!strcmp(f->name, "cohort"))
                        snprintf(t->cohort, sizeof(t->cohort), "%s", v.s);
                else if (!strcmp(f->name, "weight"))
                        t->weight = (unsigned)v.i;
                else if (!strcmp(f->name, "uid"))
                        t->uid = v.i;
                else if (!strcmp(f->name, "gid"))
                        t->gid = v.i;
                else if (!strcmp(f->name, "allow_root"))
                        t->allow_root = v.b;
                else if (!strcmp(f->name, "workloads"))
                        t->workloads = (unsigned)v.i;
                else if (!strcmp(f->name, "max_priority"))
                        t->max_priority = (int)v.i;
                else if (!strcmp(f->name, "max_tier"))
                        t->max_tier = (int)v.i;
                else if (!strcmp(f->name, "max_pending"))
                        t->max_pending = v.i;
        }
        if ((t->uid >= 0 || t->gid == 0) && !t->allow_root) {
                char why[160];
                kerfd__uidcache_warm(t->uid, true); /* at load: kept fresh from now on */
                if (!kerfd_uid_privileged(t->uid, why, sizeof(why))[0] && t->gid == 0)
                        snprintf(why, sizeof(why), "gid 0 is root's group");
                if (why[0])
                        return kerfd__cfg_fail(
                            x, m,
                            "tenant \"%s\": uid: %s; its tasks would be root or admin "
                            "(set allow_root: true on this tenant to allow it)",
                            t->name, why);
        }
        if (!t->name[0])
                return kerfd__cfg_fail(x, m, "tenant: name is required");
        for (unsigned i = 0; i < c->n_tenants; i++)
                if (!strcmp(c->tenants[i].name, t->name))
                        return kerfd__cfg_fail(x, m, "tenant \"%s\" defined twice", t->name);
        c->n_tenants++;
        return 0;
}
