/* SPDX-License-Identifier: Apache-2.0 */
/* api_admin.c - health, version, events, tenants, tokens and audit (lists: api_lists.c) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "kerf/errno.h"

static const char *res_key[KERF_RES_COUNT] = {"gpus", "memory", "compute", "mig_slices"};
/* Largest finite quota per resource: GPUs and MIG slices of a very large cohort, compute in
 * percent of a GPU, memory 1 EiB. */
static const uint64_t res_max[KERF_RES_COUNT] = {KERF_QUOTA_MAX_GPUS, KERF_QUOTA_MAX_MEM_BYTES,
                                                 KERF_QUOTA_MAX_COMPUTE, KERF_QUOTA_MAX_MIG_SLICES};

static json_t *lim(uint64_t v)
{
        return v == KERF_UNLIMITED ? json_null() : json_integer((json_int_t)v);
}

static void events(kreq *r)
{
        kerfd_node *n = r->node;
        kerf_store_event *ev = NULL;
        size_t ne = 0;
        uint64_t after, next = 0;
        unsigned limit;
        json_t *items;

        if (!api_page(r, &after, &limit))
                return;
        if (kerf_store_event_list(n->store, 0, after, limit, &ev, &ne, &next) < 0) {
                kreq_error(r, 500, "internal", "events: %s", kerf_store_errmsg(n->store));
                return;
        }
        items = json_array();
        for (size_t i = 0; i < ne; i++) {
                kerf_store_task rec;
                /* A tenant sees events of its own tasks and node-wide ones (GPU faults). */
                if (!r->admin && ev[i].task) {
                        dtask *t = kerfd__live(n, ev[i].task);
                        bool mine = false;
                        if (t)
                                mine = !strcmp(t->rec.tenant, r->tenant);
                        else if (kerf_store_task_get(n->store, ev[i].task, &rec) == 0) {
                                mine = !strcmp(rec.tenant, r->tenant);
                                kerf_store_task_fini(&rec);
                        }
                        if (!mine)
                                continue;
                }
                json_array_append_new(
                    items,
                    json_pack(
                        "{s:I, s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:s}", "id", (json_int_t)ev[i].id,
                        "time_ms", (json_int_t)ev[i].time_ms, "kind", ev[i].kind, "gpu",
                        ev[i].gpu >= 0 ? json_integer(ev[i].gpu) : json_null(), "unit",
                        ev[i].unit ? json_integer((json_int_t)ev[i].unit) : json_null(), "task",
                        ev[i].task ? json_integer((json_int_t)ev[i].task) : json_null(), "xid",
                        ev[i].xid ? json_integer(ev[i].xid) : json_null(), "class",
                        ev[i].class[0] ? json_string(ev[i].class) : json_null(), "text",
                        ev[i].text));
        }
        free(ev);
        kreq_json(r, 200, api_list(items, next));
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

int kerfd__tenant_policy_check(kerfd_node *n, const ktenant *kt, const kerf_request *q, char *msg,
                               size_t msglen)
{
        const kerfd_tenant_cfg *c = &kt->cfg;
        unsigned long long pending;
        int prio, tier;

        ceilings(n, c, &prio, &tier, &pending);
        if (q->priority > prio) {
                snprintf(msg, msglen,
                         "priority %d is above tenant %s's ceiling max_priority %d (%s)",
                         q->priority, c->name, prio,
                         c->max_priority != KERFD_INHERIT ? "the tenant's"
                                                          : "tenant_defaults.max_priority");
                return -EPERM;
        }
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

/* A policy field of a tenant body (create or PATCH): 0 taken, 1 not a policy field, -1 with a
 * 400 queued. null puts the ceiling back to tenant_defaults. */
static int policy_field(kreq *r, const char *k, json_t *v, kerfd_tenant_cfg *c)
{
        if (!strcmp(k, "max_priority")) {
                if (json_is_null(v))
                        c->max_priority = KERFD_INHERIT;
                else if (json_is_integer(v) && json_integer_value(v) >= -1000 &&
                         json_integer_value(v) <= 1000)
                        c->max_priority = (int)json_integer_value(v);
                else
                        goto bad;
                return 0;
        }
        if (!strcmp(k, "max_tier")) {
                int t = json_is_string(v) ? kerf_tier_parse(json_string_value(v)) : -1;
                if (!json_is_null(v) && t < 0)
                        goto bad;
                c->max_tier = json_is_null(v) ? -1 : t;
                return 0;
        }
        if (!strcmp(k, "max_pending")) {
                if (json_is_null(v))
                        c->max_pending = -1;
                else if (json_is_integer(v) && json_integer_value(v) >= 0 &&
                         json_integer_value(v) <= 10000000)
                        c->max_pending = json_integer_value(v);
                else
                        goto bad;
                return 0;
        }
        if (!strcmp(k, "workloads")) {
                unsigned mask = 0;
                size_t i;
                json_t *w;
                if (!json_is_null(v) && (!json_is_array(v) || !json_array_size(v)))
                        goto bad;
                json_array_foreach(v, i, w)
                {
                        int x = json_is_string(w) ? kerf_workload_parse(json_string_value(w)) : -1;
                        if (x < 0)
                                goto bad;
                        mask |= 1u << x;
                }
                c->workloads = mask;
                return 0;
        }
        if (!strcmp(k, "allow_root")) {
                kreq_error(r, 400, "invalid_argument",
                           "allow_root: set only in kerfd's config file, never through the API");
                return -1;
        }
        return 1;
bad:
        kreq_error(r, 400, "invalid_argument", "%s: %s", k,
                   !strcmp(k, "max_priority") ? "an integer -1000..1000 or null"
                   : !strcmp(k, "max_tier")   ? "high, queueable, exploratory or null"
                   : !strcmp(k, "max_pending")
                       ? "an integer 0..10000000 or null"
                       : "a non-empty list of training, inference, dev, batch, or null");
        return -1;
}

/* PATCH /v1/tenants/NAME: the tenant's ceilings (admin). */
static void tenant_patch(kreq *r, ktenant *t)
{
        kerfd_node *n = r->node;
        json_t *b = api_body(r), *v;
        kerfd_tenant_cfg c = t->cfg, old = t->cfg;
        const char *k;
        int pr;

        if (!b)
                return;
        json_object_foreach(b, k, v)
        {
                if ((pr = policy_field(r, k, v, &c)) < 0)
                        goto out;
                if (pr > 0) {
                        kreq_error(r, 400, "unknown_field",
                                   "%s: not changed by PATCH (max_priority, max_tier, "
                                   "max_pending, workloads; PUT .../quota for the quota)",
                                   k);
                        goto out;
                }
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
                int pr = policy_field(r, k, v, &c);
                if (pr < 0)
                        goto out;
                if (pr == 0)
                        continue;
                if (!strcmp(k, "name") && json_is_string(v) &&
                    strlen(json_string_value(v)) < KERF_NAME_LEN)
                        snprintf(c.name, sizeof(c.name), "%s", json_string_value(v));
                else if (!strcmp(k, "cohort") && (json_is_string(v) || json_is_null(v)) &&
                         (json_is_null(v) || strlen(json_string_value(v)) < KERF_NAME_LEN))
                        snprintf(c.cohort, sizeof(c.cohort), "%s",
                                 json_is_null(v) ? "" : json_string_value(v));
                else if (!strcmp(k, "weight") && json_is_integer(v) && json_integer_value(v) >= 1 &&
                         json_integer_value(v) <= 1000)
                        c.weight = (unsigned)json_integer_value(v);
                else if ((!strcmp(k, "uid") || !strcmp(k, "gid")) && json_is_integer(v) &&
                         json_integer_value(v) >= 0 && json_integer_value(v) < 0x7fffffff)
                        *(!strcmp(k, "uid") ? &c.uid : &c.gid) = json_integer_value(v);
                else if (!strcmp(k, "quota")) {
                        if (!parse_quota(r, v, &c))
                                goto out;
                } else if (strcmp(k, "name") && strcmp(k, "cohort") && strcmp(k, "weight") &&
                           strcmp(k, "uid") && strcmp(k, "gid")) {
                        kreq_error(r, 400, "unknown_field", "%s: unknown field", k);
                        goto out;
                } else {
                        kreq_error(r, 400, "invalid_argument", "%s: %s", k,
                                   !strcmp(k, "name") || !strcmp(k, "cohort")
                                       ? "a string of " KERF_NAME_RULE
                                   : !strcmp(k, "weight") ? "an integer 1..1000"
                                                          : "an integer 0..2147483646");
                        goto out;
                }
        }
        if (!c.name[0]) {
                kreq_error(r, 400, "invalid_argument", "name: required");
                goto out;
        }
        if (!api_name_ok(c.name) || (c.cohort[0] && !api_name_ok(c.cohort))) {
                kreq_error(r, 400, "invalid_argument", "%s: " KERF_NAME_RULE,
                           api_name_ok(c.name) ? "cohort" : "name");
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

static void tenants(kreq *r, const char *rest)
{
        kerfd_node *n = r->node;
        char name[KERF_NAME_LEN] = "", sub[256] = "";
        const char *slash;
        ktenant *t;

        if (!rest) {
                json_t *items = json_array();
                if (!strcmp(r->method, "POST")) {
                        json_decref(items);
                        if (!r->admin)
                                kreq_error(r, 403, "forbidden", "creating tenants is admin only");
                        else
                                tenant_create(r);
                        return;
                }
                if (strcmp(r->method, "GET")) {
                        json_decref(items);
                        kreq_error(r, 405, "method_not_allowed", "GET or POST");
                        return;
                }
                /* Creation order (tenants are never removed); the cursor is the position to
                 * resume at. */
                uint64_t after, next = 0;
                unsigned limit;
                if (!api_page(r, &after, &limit)) {
                        json_decref(items);
                        return;
                }
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
                return;
        }
        slash = strchr(rest, '/');
        if ((slash ? (size_t)(slash - rest) : strlen(rest)) >= sizeof(name)) {
                kreq_error(r, 404, "not_found", "tenant name: longer than 63 characters");
                return;
        }
        snprintf(name, sizeof(name), "%.*s", slash ? (int)(slash - rest) : (int)strlen(rest), rest);
        snprintf(sub, sizeof(sub), "%s", slash ? slash : "");
        t = kerfd__tenant_find(n, name);
        if (!t || (!r->admin && strcmp(name, r->tenant) != 0)) {
                kreq_error(r, 404, "not_found", "no tenant %s", name);
                return;
        }
        if (!sub[0] && !strcmp(r->method, "GET")) {
                kreq_json(r, 200, tenant_json(n, &t->cfg));
                return;
        }
        if (!r->admin) {
                kreq_error(r, 403, "forbidden", "tenant administration is admin only");
                return;
        }
        if (!sub[0] && !strcmp(r->method, "PATCH")) {
                tenant_patch(r, t);
                kerfd__kick(n);
                return;
        }
        if (!strcmp(sub, "/quota") && !strcmp(r->method, "PUT")) {
                json_t *b = api_body(r);
                kerfd_tenant_cfg c = t->cfg, old = t->cfg;
                if (!b)
                        return;
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
                return;
        }
        if (!strcmp(sub, "/tokens") && !strcmp(r->method, "POST")) {
                char tok[KERF_STORE_TOKEN_LEN], obj[96];
                uint64_t id;
                int rc;
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
                                rc = kerfd__audit(n, r->actor, name, "token.create", obj, "ok", "",
                                                  "");
                        rc = kerf_store_end(n->store, rc);
                }
                if (rc < 0) {
                        kreq_error(r, 500, "internal", "token: %s", kerf_store_errmsg(n->store));
                        return;
                }
                kreq_json(r, 201,
                          json_pack("{s:I, s:s, s:s}", "id", (json_int_t)id, "token", tok, "tenant",
                                    name));
                return;
        }
        if (!strncmp(sub, "/tokens/", 8) && !strcmp(r->method, "DELETE")) {
                uint64_t id;
                char obj[96];
                int rc;
                if (!api_u64(sub + 8, &id) || id == 0 || id > (uint64_t)INT64_MAX) {
                        kreq_error(r, 404, "not_found", "token id: \"%.40s\" is not a token id",
                                   sub + 8);
                        return;
                }
                snprintf(obj, sizeof(obj), "token:%llu", (unsigned long long)id);
                if ((rc = kerf_store_begin(n->store)) >= 0) {
                        rc = kerf_store_token_revoke(n->store, name, id, 0);
                        if (rc >= 0)
                                rc = kerfd__audit(n, r->actor, name, "token.revoke", obj, "ok", "",
                                                  "");
                        rc = kerf_store_end(n->store, rc);
                }
                if (rc == -ENOENT)
                        kreq_error(r, 404, "not_found", "no token %llu of %s",
                                   (unsigned long long)id, name);
                else if (rc < 0)
                        kreq_error(r, 500, "internal", "%s", kerf_store_errmsg(n->store));
                else
                        r->status = 204;
                return;
        }
        kreq_error(r, 404, "not_found", "no such endpoint: %s %s", r->method, r->path);
}

/* ---- audit ------------------------------------------------------------------------------------
 */

static void audit(kreq *r, const char *rest)
{
        kerfd_node *n = r->node;
        const char *tenant = r->admin ? kreq_arg(r, "tenant") : r->tenant;

        if (tenant && !api_name_ok(tenant)) {
                kreq_error(r, 400, "invalid_argument", "tenant: " KERF_NAME_RULE);
                return;
        }

        if (!rest && !strcmp(r->method, "GET")) {
                kerf_store_audit *a = NULL;
                size_t na = 0;
                uint64_t after, next = 0;
                unsigned limit;
                json_t *items;
                if (!api_page(r, &after, &limit))
                        return;
                if (kerf_store_audit_list(n->store, tenant, after, limit, &a, &na, &next) < 0) {
                        kreq_error(r, 500, "internal", "audit: %s", kerf_store_errmsg(n->store));
                        return;
                }
                items = json_array();
                for (size_t i = 0; i < na; i++) {
                        char *s = kerf_store_audit_json(&a[i]);
                        json_t *j = s ? json_loads(s, 0, NULL) : NULL;
                        free(s);
                        if (j)
                                json_array_append_new(items, j);
                }
                free(a);
                kreq_json(r, 200, api_list(items, next));
        } else if (rest && !strcmp(rest, "export") && !strcmp(r->method, "GET")) {
                char *buf = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&buf, &len);
                int rc = f ? kerf_store_audit_export(n->store, tenant, 0, f) : -ENOMEM;
                if (f)
                        fclose(f);
                if (rc < 0) {
                        free(buf);
                        kreq_error(r, 500, "internal", "export failed");
                        return;
                }
                r->status = 200;
                r->raw = buf;
                r->raw_len = len;
                r->ctype = "application/x-ndjson";
        } else if (rest && !strcmp(rest, "checkpoint") && !strcmp(r->method, "POST")) {
                /* a signed head to keep outside the database (docs/STATE.md "Checkpoints") */
                kerf_store_checkpoint cp;
                char key[4400], *s;
                int rc;
                if (!r->admin) {
                        kreq_error(r, 403, "forbidden", "audit checkpoint is admin only");
                        return;
                }
                if (!kerfd__store_ok(n)) {
                        kreq_error(r, 503, "unavailable",
                                   "%zu audit records are not written yet (the store cannot "
                                   "write): a checkpoint now would not cover them",
                                   n->outbox_len);
                        return;
                }
                snprintf(key, sizeof(key), "%s/audit.key", n->cfg.state_dir);
                rc = kerf_store_checkpoint_make(n->store, key, 0, &cp);
                s = rc < 0 ? NULL : kerf_store_checkpoint_json(&cp);
                json_t *j = s ? json_loads(s, 0, NULL) : NULL;
                free(s);
                if (!j) {
                        kreq_error(r, 500, "internal", "checkpoint: %s",
                                   rc < 0 ? kerf_strerror(rc) : "out of memory");
                        return;
                }
                kreq_json(r, 200, j);
        } else if (rest && !strcmp(rest, "verify") && !strcmp(r->method, "POST")) {
                kerf_store_audit_report rep;
                if (!r->admin) {
                        kreq_error(r, 403, "forbidden", "audit verify is admin only");
                        return;
                }
                if (kerf_store_audit_verify(n->store, &rep) < 0) {
                        kreq_error(r, 500, "internal", "verify: %s", kerf_store_errmsg(n->store));
                        return;
                }
                kreq_json(
                    r, 200,
                    json_pack("{s:b, s:I, s:o, s:s}", "ok", rep.ok, "records",
                              (json_int_t)rep.records, "first_bad",
                              rep.first_bad ? json_integer((json_int_t)rep.first_bad) : json_null(),
                              "problem", rep.problem));
        } else {
                kreq_error(r, 404, "not_found", "no such endpoint: %s %s", r->method, r->path);
        }
}

/* POST /v1/gpus/{index}/recover (admin): a faulted GPU back in service. */
static void gpu_recover(kreq *r, const char *rest)
{
        char num[16], msg[256];
        const char *slash = strchr(rest, '/');
        size_t l = slash ? (size_t)(slash - rest) : 0;
        uint64_t g;
        int rc;

        if (!slash || strcmp(slash, "/recover") != 0 || l == 0 || l >= sizeof(num)) {
                kreq_error(r, 404, "not_found", "no such endpoint: %s %s", r->method, r->path);
                return;
        }
        if (strcmp(r->method, "POST") != 0) {
                kreq_error(r, 405, "method_not_allowed", "%s is not allowed on %s", r->method,
                           r->path);
                return;
        }
        memcpy(num, rest, l);
        num[l] = 0;
        if (!api_u64(num, &g) || g >= KERF_MAX_NODE_GPUS) {
                kreq_error(r, 404, "not_found", "no GPU %s", num);
                return;
        }
        if (!r->admin) {
                kreq_error(r, 403, "forbidden", "recovering a GPU is admin only");
                return;
        }
        rc = kerfd__gpu_recover(r->node, (unsigned)g, r->actor, msg, sizeof(msg));
        if (rc == -ENOENT)
                kreq_error(r, 404, "not_found", "%s", msg);
        else if (rc < 0)
                kreq_error(r, 409, "conflict", "%s", msg);
        else
                kreq_json(
                    r, 200,
                    json_pack("{s:i, s:b, s:s}", "gpu", (int)g, "in_service", 1, "message", msg));
}

bool kerfd_api_admin(kreq *r)
{
        kerfd_node *n = r->node;
        const char *p = r->path;
        bool get = !strcmp(r->method, "GET");

        if (kerfd_api_export(r) || kerfd_api_node(r)) {
                /* GET /v1/config, /v1/cost/runs, /v1/node */
        } else if (!strcmp(p, "/v1/health") && get) {
                /* "store": "ok", or "read-only: <why> since <when> (N changes waiting)" */
                bool sok = kerfd__store_ok(n);
                json_t *h =
                    json_pack("{s:s, s:b, s:s, s:I, s:o, s:I}", "status", sok ? "ok" : "degraded",
                              "simulated", n->simulated, "backend", n->backend_name, "uptime_s",
                              (json_int_t)((kerfd_now_ms() - n->started_ms) / 1000), "store",
                              kerfd__store_health(n), "pending_records", (json_int_t)n->outbox_len);
                /* where kerfd keeps its files: for operators and the POC harness (kerf-load in
                 * lib, faults injected in sim); a tenant learns nothing of the host's layout */
                if (h && r->admin)
                        json_object_set_new(
                            h, "paths",
                            json_pack("{s:s, s:s, s:o, s:o}", "state", n->cfg.state_dir, "lib",
                                      n->lib_dir, "sim",
                                      n->simulated && n->sim_dir[0] ? json_string(n->sim_dir)
                                                                    : json_null(),
                                      "dev",
                                      n->dev_dir[0] ? json_string(n->dev_dir) : json_null()));
                kreq_json(r, 200, h);
        } else if (!strcmp(p, "/v1/version") && get) {
                kreq_json(r, 200,
                          json_pack("{s:s, s:i, s:s, s:s}", "kerf", KERFD_VERSION, "api", 1,
                                    "driver", n->driver, "cuda", n->cuda));
        } else if (!strcmp(p, "/v1/whoami") && get) {
                kreq_json(r, 200,
                          json_pack("{s:b, s:o}", "admin", r->admin, "tenant",
                                    r->tenant[0] ? json_string(r->tenant) : json_null()));
        } else if (!strcmp(p, "/v1/units") && get) {
                kerfd_api_units(r, NULL);
        } else if (!strncmp(p, "/v1/units/", 10) && get) {
                kerfd_api_units(r, p + 10);
        } else if (!strcmp(p, "/v1/gpus") && get) {
                kerfd_api_gpus(r);
        } else if (!strncmp(p, "/v1/gpus/", 9) && p[9]) {
                gpu_recover(r, p + 9);
        } else if (!strcmp(p, "/v1/queues") && get) {
                kerfd_api_queues(r);
        } else if (!strcmp(p, "/v1/events") && get) {
                events(r);
        } else if (!strcmp(p, "/v1/cost") && get) {
                kerfd_api_cost(r);
        } else if (!strcmp(p, "/v1/tenants")) {
                tenants(r, NULL);
        } else if (!strncmp(p, "/v1/tenants/", 12) && p[12]) {
                tenants(r, p + 12);
        } else if (!strcmp(p, "/v1/audit")) {
                audit(r, NULL);
        } else if (!strncmp(p, "/v1/audit/", 10)) {
                audit(r, p + 10);
        } else if (!strcmp(p, "/v1/health") || !strcmp(p, "/v1/version") ||
                   !strcmp(p, "/v1/gpus") || !strcmp(p, "/v1/queues") || !strcmp(p, "/v1/events") ||
                   !strcmp(p, "/v1/cost") || !strncmp(p, "/v1/units", 9)) {
                kreq_error(r, 405, "method_not_allowed", "%s is not allowed on %s", r->method, p);
        } else {
                return false;
        }
        return true;
}
