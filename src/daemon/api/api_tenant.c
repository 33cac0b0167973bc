/* SPDX-License-Identifier: Apache-2.0 */
/* api_tenant.c - tenants, their quotas, policy ceilings and bearer tokens (routes.def) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "kerf/errno.h"
#include "kerf/fields.h"
#include "tokcache.h"

static const char *res_key[KERF_RES_COUNT] = {"gpus", "memory", "compute", "mig_slices"};
/* Largest finite quota per resource: GPUs and MIG slices of a very large cohort, compute in
 * percent of a GPU, memory 1 EiB. */
static const uint64_t res_max[KERF_RES_COUNT] = {KERF_QUOTA_MAX_GPUS, KERF_QUOTA_MAX_MEM_BYTES,
                                                 KERF_QUOTA_MAX_COMPUTE, KERF_QUOTA_MAX_MIG_SLICES};

static json_t *lim(uint64_t v)
{
        return v == KERF_UNLIMITED ? json_null() : json_integer((json_int_t)v);
}

/* ---- tenants ----------------------------------------------------------------------------------
 */

void kerfd__tenant_to_store(const kerfd_tenant_cfg *c, kerf_store_tenant *st)
{
        kerf_store_tenant_init(st, c->name);
        snprintf(st->cohort, sizeof(st->cohort), "%s", c->cohort);
        st->weight = c->weight;
        memcpy(st->nominal, c->nominal, sizeof(st->nominal));
        memcpy(st->borrow_limit, c->borrow_limit, sizeof(st->borrow_limit));
        memcpy(st->lend_limit, c->lend_limit, sizeof(st->lend_limit));
        st->uid = c->uid;
        st->gid = c->gid;
        st->has_max_priority = c->max_priority != KERFD_INHERIT;
        st->max_priority = st->has_max_priority ? c->max_priority : 0;
        st->max_tier = c->max_tier;
        st->max_pending = c->max_pending;
        st->workloads = c->workloads;
}

void kerfd__tenant_from_store(const kerf_store_tenant *st, kerfd_tenant_cfg *c)
{
        kerfd_tenant_cfg_init(c);
        snprintf(c->name, sizeof(c->name), "%s", st->name);
        snprintf(c->cohort, sizeof(c->cohort), "%s", st->cohort);
        c->weight = st->weight ? st->weight : 1;
        memcpy(c->nominal, st->nominal, sizeof(c->nominal));
        memcpy(c->borrow_limit, st->borrow_limit, sizeof(c->borrow_limit));
        memcpy(c->lend_limit, st->lend_limit, sizeof(c->lend_limit));
        c->uid = st->uid;
        c->gid = st->gid;
        c->max_priority = st->has_max_priority ? st->max_priority : KERFD_INHERIT;
        c->max_tier = st->max_tier >= 0 && st->max_tier < KERF_TIER_COUNT ? st->max_tier : -1;
        c->max_pending = st->max_pending;
        c->workloads = st->workloads;
}

void kerfd__tenant_count(kerfd_node *n, const char *tenant, int delta)
{
        ktenant *t = kerfd__tenant_find(n, tenant);
        if (t && (delta > 0 || t->live > 0))
                t->live = (unsigned)((int)t->live + delta);
}

/* The ceilings in force for a tenant: its own, else tenant_defaults. */
static void ceilings(kerfd_node *n, const kerfd_tenant_cfg *c, int *prio, int *tier,
                     unsigned long long *pending)
{
        const kerfd_tenant_defaults *d = &n->cfg.tenant_defaults;
        *prio = c->max_priority != KERFD_INHERIT ? c->max_priority : d->max_priority;
        *tier = c->max_tier >= 0 ? c->max_tier : d->max_tier;
        *pending = c->max_pending >= 0 ? (unsigned long long)c->max_pending : d->max_pending;
}

int kerfd__tenant_priority_check(kerfd_node *n, const ktenant *kt, int priority, char *msg,
                                 size_t msglen)
{
        const kerfd_tenant_cfg *c = &kt->cfg;
        unsigned long long pending;
        int prio, tier;

        ceilings(n, c, &prio, &tier, &pending);
        if (priority > prio) {
                snprintf(msg, msglen,
                         "priority %d is above tenant %s's ceiling max_priority %d (%s)", priority,
                         c->name, prio,
                         c->max_priority != KERFD_INHERIT ? "the tenant's"
                                                          : "tenant_defaults.max_priority");
                return -EPERM;
        }
        return 0;
}

int kerfd__tenant_policy_check(kerfd_node *n, const ktenant *kt, const kerf_request *q, char *msg,
                               size_t msglen)
{
        const kerfd_tenant_cfg *c = &kt->cfg;
        unsigned long long pending;
        int prio, tier, r;

        ceilings(n, c, &prio, &tier, &pending);
        if ((r = kerfd__tenant_priority_check(n, kt, q->priority, msg, msglen)) < 0)
                return r;
        /* tiers run from high (0, most urgent) to exploratory: a ceiling is the most urgent
         * tier allowed */
        if ((int)q->tier < tier) {
                snprintf(msg, msglen, "tier %s is above tenant %s's ceiling max_tier %s (%s)",
                         kerf_tier_name(q->tier), c->name, kerf_tier_name((kerf_tier)tier),
                         c->max_tier >= 0 ? "the tenant's" : "tenant_defaults.max_tier");
                return -EPERM;
        }
        if (c->workloads && !(c->workloads & (1u << q->workload))) {
                snprintf(msg, msglen,
                         "workload %s is not among tenant %s's allowed workloads (workloads)",
                         kerf_workload_name(q->workload), c->name);
                return -EPERM;
        }
        if (kt->live >= pending) {
                snprintf(msg, msglen,
                         "tenant %s holds %u unfinished tasks, its limit max_pending %llu (%s)",
                         c->name, kt->live, pending,
                         c->max_pending >= 0 ? "the tenant's" : "tenant_defaults.max_pending");
                return -EAGAIN;
        }
        return 0;
}

static json_t *workloads_json(unsigned mask)
{
        json_t *a;
        if (!mask)
                return json_null();
        a = json_array();
        for (int w = 0; w < KERF_WL_COUNT; w++)
                if (mask & (1u << w))
                        json_array_append_new(a, json_string(kerf_workload_name((kerf_workload)w)));
        return a;
}

static json_t *tenant_json(kerfd_node *n, const kerfd_tenant_cfg *c)
{
        uint64_t use[KERF_RES_COUNT] = {0};
        json_t *q = json_object(), *u = json_object(), *j;
        ktenant *kt = kerfd__tenant_find(n, c->name);
        unsigned long long pending;
        long long ruid = -1, rgid = -1;
        int prio, tier;
        char err[256];
        kerf_sched_tenant_usage(n->sched, c->name, use);
        for (int i = 0; i < KERF_RES_COUNT; i++) {
                json_object_set_new(q, res_key[i],
                                    json_pack("{s:o, s:o, s:o}", "nominal", lim(c->nominal[i]),
                                              "borrow_limit", lim(c->borrow_limit[i]), "lend_limit",
                                              lim(c->lend_limit[i])));
                json_object_set_new(u, res_key[i], json_integer((json_int_t)use[i]));
        }
        j = json_pack("{s:s, s:o, s:i, s:o, s:o, s:o, s:o}", "name", c->name, "cohort",
                      c->cohort[0] ? json_string(c->cohort) : json_null(), "weight", (int)c->weight,
                      "quota", q, "usage", u, "uid",
                      c->uid >= 0 ? json_integer(c->uid) : json_null(), "gid",
                      c->gid >= 0 ? json_integer(c->gid) : json_null());
        ceilings(n, c, &prio, &tier, &pending);
        json_object_set_new(j, "max_priority", json_integer(prio));
        json_object_set_new(j, "max_tier", json_string(kerf_tier_name((kerf_tier)tier)));
        json_object_set_new(j, "max_pending", json_integer((json_int_t)pending));
        json_object_set_new(j, "workloads", workloads_json(c->workloads));
        json_object_set_new(j, "pending", json_integer(kt ? kt->live : 0));
        json_object_set_new(j, "allow_root", json_boolean(c->allow_root));
        /* who its tasks run as (docs/SECURITY.md "Task identity"); null: refused */
        if (kt && kerfd__task_identity(n, kt, &ruid, &rgid, err, sizeof(err)) == 0 && ruid < 0)
                ruid = (long long)geteuid(), rgid = (long long)getegid();
        json_object_set_new(
            j, "runs_as",
            ruid >= 0 ? json_pack("{s:I, s:I}", "uid", (json_int_t)ruid, "gid", (json_int_t)rgid)
                      : json_null());
        return j;
}

/* Reads {"gpus": {"nominal": 4, ...}, ...} into c. false with a 400 queued. */
static bool parse_quota(kreq *r, json_t *q, kerfd_tenant_cfg *c)
{
        const char *k;
        json_t *v;
        if (!json_is_object(q)) {
                kreq_error(r, 400, "invalid_argument", "quota: an object");
                return false;
        }
        json_object_foreach(q, k, v)
        {
                int res = -1;
                const char *kk;
                json_t *vv;
                for (int i = 0; i < KERF_RES_COUNT; i++)
                        if (!strcmp(k, res_key[i]))
                                res = i;
                if (res < 0) {
                        kreq_error(r, 400, "unknown_field", "quota.%s: unknown resource", k);
                        return false;
                }
                if (!json_is_object(v)) {
                        kreq_error(r, 400, "invalid_argument", "quota.%s: an object", k);
                        return false;
                }
                json_object_foreach(v, kk, vv)
                {
                        uint64_t *slot, x;
                        if (!strcmp(kk, "nominal"))
                                slot = &c->nominal[res];
                        else if (!strcmp(kk, "borrow_limit"))
                                slot = &c->borrow_limit[res];
                        else if (!strcmp(kk, "lend_limit"))
                                slot = &c->lend_limit[res];
                        else {
                                kreq_error(r, 400, "unknown_field", "quota.%s.%s: unknown field", k,
                                           kk);
                                return false;
                        }
                        if (json_is_null(vv))
                                x = KERF_UNLIMITED;
                        else if (json_is_integer(vv) && json_integer_value(vv) >= 0)
                                x = (uint64_t)json_integer_value(vv);
                        else if (res == KERF_RES_MEM && json_is_string(vv) &&
                                 kerf_parse_size(json_string_value(vv), &x, NULL, 0) == 0)
                                ;
                        else
                                x = res_max[res] + 1;
                        if (x != KERF_UNLIMITED && x > res_max[res]) {
                                kreq_error(r, 400, "invalid_argument",
                                           "quota.%s.%s: an integer 0..%llu%s or null", k, kk,
                                           (unsigned long long)res_max[res],
                                           res == KERF_RES_MEM ? " or a size" : "");
                                return false;
                        }
                        *slot = x;
                }
        }
        return true;
}

/* Stores a tenant with its audit record and applies it to the scheduler, all or nothing: the
 * store transaction commits only after the scheduler took the change, and a failed commit puts
 * the scheduler back to `old` (NULL for a new tenant: the scheduler cannot forget a tenant, so
 * a new tenant whose commit fails stays known in memory until kerfd restarts; logged). */
static int tenant_commit(kerfd_node *n, const kerfd_tenant_cfg *c, const kerfd_tenant_cfg *old,
                         kreq *r, const char *action)
{
        kerf_store_tenant st;
        char obj[96];
        int rc;
        kerfd__tenant_to_store(c, &st);
        snprintf(obj, sizeof(obj), "tenant:%s", c->name);
        if ((rc = kerf_store_begin(n->store)) < 0)
                return rc;
        rc = kerf_store_tenant_upsert(n->store, &st);
        if (rc >= 0)
                rc = kerfd__audit(n, r->actor, c->name, action, obj, "ok", "", "");
        if (rc >= 0)
                rc = kerfd__tenant_apply(n, c);
        if (rc < 0) {
                rc = kerf_store_end(n->store, rc); /* rolls back, keeps rc */
                return rc;
        }
        if ((rc = kerf_store_commit(n->store)) < 0) {
                if (old)
                        kerfd__tenant_apply(n, old);
                else
                        log_error("tenant %s: store commit failed after the scheduler took it; "
                                  "it is known until kerfd restarts",
                                  c->name);
        }
        return rc;
}

/* The names of the tenant fields `object` takes, "a, b, c", into buf. */
static void object_fields(unsigned object, char *buf, size_t len)
{
        size_t o = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < kerf_tenant_fields_count; i++) {
                if (!(kerf_tenant_fields[i].objects & object))
                        continue;
                int w =
                    snprintf(buf + o, len - o, "%s%s", o ? ", " : "", kerf_tenant_fields[i].name);
                if (w < 0 || (size_t)w >= len - o)
                        break;
                o += (size_t)w;
        }
}

/* Field `k` of a tenant body for `object` (KERF_FIELD_TENANT_CREATE or _PATCH): looked up and
 * checked by its descriptor (kerf_tenant_fields: one message format, the table's bounds), then
 * stored into c. false with a 400 queued. null (a NULLABLE field) puts a ceiling back to
 * tenant_defaults, the workloads to all, the cohort to none. */
static bool tenant_field(kreq *r, unsigned object, const char *k, json_t *v, kerfd_tenant_cfg *c)
{
        char msg[512], names[256];
        kerf_field_value val = {0};
        const kerf_field *f;
        bool null;

        f = kerf_field_lookup(kerf_tenant_fields, kerf_tenant_fields_count, k, object, msg,
                              sizeof(msg));
        if (!f) {
                object_fields(object, names, sizeof(names));
                kreq_error(r, 400, "unknown_field", "%s (%s takes %s%s)", msg,
                           kerf_field_object_name(object), names,
                           object == KERF_FIELD_TENANT_PATCH
                               ? "; PUT /v1/tenants/{name}/quota sets the quota"
                               : "");
                return false;
        }
        null = json_is_null(v) && (f->flags & KERF_FIELD_NULLABLE);
        if (!null && kerf_field_check(f, v, &val, msg, sizeof(msg)) < 0) {
                kreq_error(r, 400, "invalid_argument", "%s", msg);
                return false;
        }
        if (!strcmp(k, "name"))
                snprintf(c->name, sizeof(c->name), "%s", val.s);
        else if (!strcmp(k, "cohort"))
                snprintf(c->cohort, sizeof(c->cohort), "%s", null ? "" : val.s);
        else if (!strcmp(k, "weight"))
                c->weight = (unsigned)val.i;
        else if (!strcmp(k, "uid"))
                c->uid = val.i;
        else if (!strcmp(k, "gid"))
                c->gid = val.i;
        else if (!strcmp(k, "max_priority"))
                c->max_priority = null ? KERFD_INHERIT : (int)val.i;
        else if (!strcmp(k, "max_tier"))
                c->max_tier = null ? -1 : (int)val.i;
        else if (!strcmp(k, "max_pending"))
                c->max_pending = null ? -1 : val.i;
        else if (!strcmp(k, "workloads"))
                c->workloads = null ? 0 : (unsigned)val.i;
        else if (!strcmp(k, "quota"))
                return parse_quota(r, v, c);
        else { /* a descriptor the API takes but this function does not store: a bug */
                kreq_error(r, 500, "internal", "%s: not stored", k);
                return false;
        }
        return true;
}

/* PATCH /v1/tenants/NAME: the tenant's ceilings (admin). */
static void tenant_patch(kreq *r, ktenant *t)
{
        kerfd_node *n = r->node;
        json_t *b = api_body(r), *v;
        kerfd_tenant_cfg c = t->cfg, old = t->cfg;
        const char *k;

        if (!b)
                return;
        json_object_foreach(b, k, v)
        {
                if (!tenant_field(r, KERF_FIELD_TENANT_PATCH, k, v, &c))
                        goto out;
        }
        if (tenant_commit(n, &c, &old, r, "tenant.policy") < 0)
                kreq_error(r, 500, "internal", "tenant not stored: %s",
                           kerf_store_errmsg(n->store));
        else
                kreq_json(r, 200, tenant_json(n, &t->cfg));
out:
        json_decref(b);
}

static void tenant_create(kreq *r)
{
        kerfd_node *n = r->node;
        json_t *b = api_body(r), *v;
        kerfd_tenant_cfg c;
        const char *k;
        char why[256];

        if (!b)
                return;
        kerfd_tenant_cfg_init(&c);
        json_object_foreach(b, k, v)
        {
                if (!tenant_field(r, KERF_FIELD_TENANT_CREATE, k, v, &c))
                        goto out;
        }
        if (!c.name[0]) {
                kreq_error(r, 400, "invalid_argument", "name: required");
                goto out;
        }
        if (kerfd__tenant_find(n, c.name)) {
                kreq_error(r, 409, "conflict", "tenant %s exists", c.name);
                goto out;
        }
        if (!kerfd_uid_privileged(c.uid, why, sizeof(why))[0] && c.gid == 0)
                snprintf(why, sizeof(why), "gid 0 is root's group");
        if (why[0]) {
                kreq_error(r, 400, "invalid_argument",
                           "%s: %s; a tenant whose tasks run as root or an admin is set only "
                           "in kerfd's config file (allow_root), never through the API",
                           strncmp(why, "gid", 3) ? "uid" : "gid", why);
                goto out;
        }
        if (kerfd__tenant_identity_check(n, &c, why, sizeof(why)) < 0) {
                kreq_error(r, 409, "conflict", "%s", why);
                goto out;
        }
        if (n->n_tenants >= KERFD_MAX_TENANTS) {
                kreq_error(r, 409, "conflict", "at most %d tenants", KERFD_MAX_TENANTS);
                goto out;
        }
        if (tenant_commit(n, &c, NULL, r, "tenant.create") < 0) {
                kreq_error(r, 500, "internal", "tenant not stored: %s",
                           kerf_store_errmsg(n->store));
                goto out;
        }
        kreq_json(r, 201, tenant_json(n, &c));
out:
        json_decref(b);
}

/* ---- the routes (routes.def) ----------------------------------------------------------------- */

/* GET /v1/tenants: creation order (tenants are never removed); the cursor is the position to
 * resume at. A tenant sees itself. */
void kerfd_api_tenant_list(kreq *r)
{
        kerfd_node *n = r->node;
        uint64_t after, next = 0;
        unsigned limit;
        json_t *items;

        if (!api_page(r, &after, &limit))
                return;
        items = json_array();
        for (uint64_t i = after; i < n->n_tenants; i++) {
                if (!r->admin && strcmp(n->tenants[i].cfg.name, r->tenant) != 0)
                        continue;
                if (json_array_size(items) >= limit) {
                        next = i;
                        break;
                }
                json_array_append_new(items, tenant_json(n, &n->tenants[i].cfg));
        }
        kreq_json(r, 200, api_list(items, next));
}

void kerfd_api_tenant_create(kreq *r)
{
        tenant_create(r);
}

/* The tenant {name} of the path, or NULL with a 404 queued: too long a name, no such tenant,
 * or (for a tenant's token) another tenant. */
static ktenant *path_tenant(kreq *r)
{
        ktenant *t;

        if (r->param_len[0] >= KERF_NAME_LEN) {
                kreq_error(r, 404, "not_found", "tenant name: longer than 63 characters");
                return NULL;
        }
        t = kerfd__tenant_find(r->node, r->param[0]);
        if (!t || (!r->admin && strcmp(r->param[0], r->tenant) != 0)) {
                kreq_error(r, 404, "not_found", "no tenant %s", r->param[0]);
                return NULL;
        }
        return t;
}

void kerfd_api_tenant_get(kreq *r)
{
        ktenant *t = path_tenant(r);
        if (t)
                kreq_json(r, 200, tenant_json(r->node, &t->cfg));
}

void kerfd_api_tenant_patch(kreq *r)
{
        ktenant *t = path_tenant(r);
        if (!t)
                return;
        tenant_patch(r, t);
        kerfd__kick(r->node);
}

void kerfd_api_tenant_quota(kreq *r)
{
        kerfd_node *n = r->node;
        ktenant *t = path_tenant(r);
        kerfd_tenant_cfg c, old;
        json_t *b;

        if (!t || !(b = api_body(r)))
                return;
        c = old = t->cfg;
        if (parse_quota(r, b, &c)) {
                if (tenant_commit(n, &c, &old, r, "tenant.quota") < 0)
                        kreq_error(r, 500, "internal", "quota not stored: %s",
                                   kerf_store_errmsg(n->store));
                else {
                        kreq_json(r, 200, tenant_json(n, &c));
                        kerfd__kick(n);
                }
        }
        json_decref(b);
}

void kerfd_api_token_create(kreq *r)
{
        kerfd_node *n = r->node;
        ktenant *t = path_tenant(r);
        char tok[KERF_STORE_TOKEN_LEN], obj[96];
        const char *name;
        uint64_t id;
        int rc;

        if (!t)
                return;
        name = t->cfg.name;
        if (r->len) {
                json_t *b = api_body(r);
                const char *k;
                json_t *v;
                if (!b)
                        return;
                json_object_foreach(b, k, v)
                {
                        kreq_error(r, 400, "unknown_field", "%s: unknown field", k);
                        json_decref(b);
                        return;
                }
                json_decref(b);
        }
        snprintf(obj, sizeof(obj), "tenant:%s", name);
        if ((rc = kerf_store_begin(n->store)) >= 0) {
                rc = kerf_store_token_create(n->store, name, NULL, 0, &id, tok);
                if (rc >= 0)
                        rc = kerfd__audit(n, r->actor, name, "token.create", obj, "ok", "", "");
                rc = kerf_store_end(n->store, rc);
        }
        if (rc < 0) {
                kreq_error(r, 500, "internal", "token: %s", kerf_store_errmsg(n->store));
                return;
        }
        kreq_json(r, 201,
                  json_pack("{s:I, s:s, s:s}", "id", (json_int_t)id, "token", tok, "tenant", name));
}

void kerfd_api_token_revoke(kreq *r)
{
        kerfd_node *n = r->node;
        ktenant *t = path_tenant(r);
        const char *name;
        uint64_t id;
        char obj[96];
        int rc;

        if (!t)
                return;
        name = t->cfg.name;
        if (r->param_len[1] >= sizeof(r->param[1]) || !api_u64(r->param[1], &id) || id == 0 ||
            id > (uint64_t)INT64_MAX) {
                kreq_error(r, 404, "not_found", "token id: \"%.40s\" is not a token id",
                           r->param[1]);
                return;
        }
        snprintf(obj, sizeof(obj), "token:%llu", (unsigned long long)id);
        if ((rc = kerf_store_begin(n->store)) >= 0) {
                rc = kerf_store_token_revoke(n->store, name, id, 0);
                if (rc >= 0)
                        rc = kerfd__audit(n, r->actor, name, "token.revoke", obj, "ok", "", "");
                rc = kerf_store_end(n->store, rc);
        }
        /* after the commit, before the answer: the very next request with the token is
         * verified against the store again and refused (tokcache.h) */
        kerfd__tokcache_invalidate();
        if (rc == -ENOENT)
                kreq_error(r, 404, "not_found", "no token %llu of %s", (unsigned long long)id,
                           name);
        else if (rc < 0)
                kreq_error(r, 500, "internal", "%s", kerf_store_errmsg(n->store));
        else
                r->status = 204;
}
