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

/* Tenant and cohort names: the one name rule (kerf_name_ok, docs/API.md "Names"). */
static bool name_ok(const char *s)
{
        return kerf_name_ok(s);
}

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

/* workloads: [training, inference]: the workload types a tenant may submit. */
static int parse_workloads(cfgctx *x, yaml_node_t *v, unsigned *ret)
{
        unsigned mask = 0;
        int r;

        if ((r = kerfd__cfg_seq(x, v, "workloads")) < 0)
                return r;
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
             it++) {
                yaml_node_t *in = kerfd__cfg_node(x, *it);
                const char *s = kerfd__cfg_scalar(x, in);
                int w = s ? kerf_workload_parse(s) : -EINVAL;
                if (w < 0)
                        return kerfd__cfg_fail(x, in,
                                               "workloads: unknown workload \"%s\" (training, "
                                               "inference, dev, batch)",
                                               s ? s : "?");
                mask |= 1u << w;
        }
        if (!mask)
                return kerfd__cfg_fail(x, v, "workloads: at least one workload");
        *ret = mask;
        return 0;
}

/* max_priority / max_tier / max_pending of a tenant or of tenant_defaults. 1: not one of them. */
static int parse_ceiling(cfgctx *x, yaml_node_t *k, yaml_node_t *v, int *prio, int *tier,
                         long long *pending)
{
        const char *ks = kerfd__cfg_scalar(x, k), *s = kerfd__cfg_scalar(x, v);
        uint64_t u;
        int r;

        if (!strcmp(ks, "max_priority")) {
                char *end;
                long p = s ? strtol(s, &end, 10) : 0;
                /* the bounds of a task's priority (kerf_task_fields) */
                if (!s || !*s || *end || p < KERF_PRIORITY_MIN || p > KERF_PRIORITY_MAX)
                        return kerfd__cfg_fail(x, v, "max_priority: an integer %d..%d",
                                               KERF_PRIORITY_MIN, KERF_PRIORITY_MAX);
                *prio = (int)p;
                return 0;
        }
        if (!strcmp(ks, "max_tier")) {
                int t = s ? kerf_tier_parse(s) : -EINVAL;
                if (t < 0)
                        return kerfd__cfg_fail(x, v, "max_tier: high, queueable or exploratory");
                *tier = t;
                return 0;
        }
        if (!strcmp(ks, "max_pending")) {
                if ((r = kerfd__cfg_u64(x, v, ks, 10000000, &u)) < 0)
                        return r;
                *pending = (long long)u;
                return 0;
        }
        return 1;
}

/* tenant_defaults: {max_priority, max_tier, max_pending, uid_base, uid_span} */
int kerfd__cfg_tenant_defaults(cfgctx *x, yaml_node_t *m, kerfd_config *c)
{
        kerfd_tenant_defaults *d = &c->tenant_defaults;
        int prio = d->max_priority, tier = d->max_tier;
        long long pending = d->max_pending;
        uint64_t v;
        int r = kerfd__cfg_map(x, m, "tenant_defaults");

        if (r < 0)
                return r;
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = kerfd__cfg_node(x, p->key), *vn = kerfd__cfg_node(x, p->value);
                const char *ks = kerfd__cfg_scalar(x, k);
                if (!strcmp(ks, "uid_base")) {
                        r = kerfd__cfg_u64(x, vn, ks, 0x7ffffffe, &v);
                        d->uid_base = v;
                } else if (!strcmp(ks, "uid_span")) {
                        r = kerfd__cfg_range(x, vn, ks, 1, 1u << 30, &v);
                        d->uid_span = (unsigned)v;
                } else if ((r = parse_ceiling(x, k, vn, &prio, &tier, &pending)) == 1)
                        r = kerfd__cfg_fail(
                            x, k,
                            "tenant_defaults: unknown key \"%s\" (max_priority, max_tier, "
                            "max_pending, uid_base, uid_span)",
                            ks);
                if (r < 0)
                        return r;
        }
        if (d->uid_base && (d->uid_base < 65536 || d->uid_base + d->uid_span > 0x7fffffffull))
                return kerfd__cfg_fail(x, m,
                                       "tenant_defaults: uid_base..uid_base+uid_span must lie in "
                                       "65536..2147483646 (or uid_base: 0)");
        d->max_priority = prio;
        d->max_tier = tier;
        d->max_pending = (unsigned)pending;
        return 0;
}

int kerfd__cfg_tenant(cfgctx *x, yaml_node_t *m, kerfd_config *c)
{
        kerfd_tenant_cfg *t;
        uint64_t v;
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
                const char *ks = kerfd__cfg_scalar(x, k);
                if (!ks)
                        return kerfd__cfg_fail(x, k, "tenant: keys must be strings");
                if (!strcmp(ks, "name"))
                        r = kerfd__cfg_str(x, vn, "name", t->name, sizeof(t->name));
                else if (!strcmp(ks, "cohort")) {
                        r = kerfd__cfg_str(x, vn, "cohort", t->cohort, sizeof(t->cohort));
                        if (!r && !name_ok(t->cohort))
                                r = kerfd__cfg_fail(x, vn, "cohort \"%s\": " KERF_NAME_RULE,
                                                    t->cohort);
                } else if (!strcmp(ks, "weight")) {
                        r = kerfd__cfg_range(x, vn, "weight", 1, 1000, &v);
                        t->weight = (unsigned)v;
                } else if (!strcmp(ks, "uid")) {
                        r = kerfd__cfg_u64(x, vn, "uid", 0x7ffffffe, &v);
                        t->uid = (long long)v;
                } else if (!strcmp(ks, "gid")) {
                        r = kerfd__cfg_u64(x, vn, "gid", 0x7ffffffe, &v);
                        t->gid = (long long)v;
                } else if (!strcmp(ks, "quota"))
                        r = parse_quota(x, vn, t);
                else if (!strcmp(ks, "allow_root"))
                        r = kerfd__cfg_bool(x, vn, ks, &t->allow_root);
                else if (!strcmp(ks, "workloads"))
                        r = parse_workloads(x, vn, &t->workloads);
                else if ((r = parse_ceiling(x, k, vn, &t->max_priority, &t->max_tier,
                                            &t->max_pending)) == 1)
                        r = kerfd__cfg_fail(
                            x, k,
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
        if (!name_ok(t->name))
                return kerfd__cfg_fail(x, m, "tenant name \"%s\": " KERF_NAME_RULE, t->name);
        c->n_tenants++;
        return 0;
}
