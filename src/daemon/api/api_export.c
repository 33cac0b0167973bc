/* SPDX-License-Identifier: Apache-2.0 */
/* api_export.c - what `kerf export` reads besides the other lists: GET /v1/config (kerfd's
 * effective configuration, without secrets) and GET /v1/cost/runs (every run of every task, the
 * history cost is computed from). docs/EXPORT.md lists the archive. */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "node.h"

static json_t *str_or_null(const char *s)
{
        return s && *s ? json_string(s) : json_null();
}

static json_t *routes_json(const kerf_policy *p)
{
        json_t *o = json_object();

        for (int w = 0; w < KERF_WL_COUNT; w++) {
                json_t *tiers = json_object();
                for (int t = 0; t < KERF_TIER_COUNT; t++) {
                        json_t *a = json_array();
                        for (unsigned i = 0; i < p->n_routes[w][t]; i++)
                                json_array_append_new(
                                    a, json_string(kerf_unit_kind_name(p->routes[w][t][i])));
                        json_object_set_new(tiers, kerf_tier_name((kerf_tier)t), a);
                }
                json_object_set_new(o, kerf_workload_name((kerf_workload)w), tiers);
        }
        return o;
}

static json_t *fleet_json(const kerf_fleet *f)
{
        json_t *a = json_array();

        for (size_t i = 0; f && i < f->n_gpus; i++) {
                const kerf_gpu_desc *g = &f->gpus[i];
                json_array_append_new(a, json_pack("{s:I, s:s, s:s, s:s, s:b}", "index",
                                                   (json_int_t)i, "uuid", g->uuid, "model",
                                                   g->model ? g->model->name : "?", "node",
                                                   f->nodes[g->node].name, "mig", g->mig_enabled));
        }
        return a;
}

/* The effective configuration. Nothing secret lives in it: tokens and the audit signing key
 * are in the state dir, never here (docs/EXPORT.md). */
static void config_get(kreq *r)
{
        kerfd_node *n = r->node;
        const kerfd_config *c = &n->cfg;
        json_t *tenants = json_array();

        for (unsigned i = 0; i < c->n_tenants; i++)
                json_array_append_new(tenants,
                                      json_pack("{s:s, s:o, s:i, s:b}", "name", c->tenants[i].name,
                                                "cohort", str_or_null(c->tenants[i].cohort),
                                                "weight", (int)c->tenants[i].weight, "allow_root",
                                                c->tenants[i].allow_root));
        json_t *j = json_pack(
            "{s:o, s:s, s:s, s:o, s:{s:b, s:o, s:b, s:s}, s:{s:o, s:o}, s:{s:I, s:i, s:f, s:i, "
            "s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i}, s:{s:s, s:o, s:o}, s:{s:s, s:s, s:s, s:b, "
            "s:b, s:I, s:o}, s:{s:i, s:s, s:i, s:I, s:i}, s:o, s:s}",
            "file", str_or_null(c->path), "state_dir", c->state_dir, "socket", c->socket, "tcp",
            c->tcp_host[0] ? json_pack("{s:s, s:i}", "host", c->tcp_host, "port", (int)c->tcp_port)
                           : json_null(),
            "backend", "simulated", n->simulated, "nvml_library", str_or_null(c->nvml_library),
            "allow_mig_mode_change", c->allow_mig_mode_change, "name", n->backend_name, "fleet",
            "file", str_or_null(c->fleet), "gpus", fleet_json(n->fleet), "limits", "max_body",
            (json_int_t)c->max_body, "max_tasks", (int)c->max_tasks, "submit_rate", c->submit_rate,
            "submit_burst", (int)c->submit_burst, "tick_ms", (int)c->tick_ms, "grace_s",
            (int)c->grace_s, "threads", (int)c->threads, "min_lease_s", (int)c->min_lease_s,
            "max_connections", (int)c->max_conns, "max_connections_per_peer",
            (int)c->max_conns_per_peer, "admin_connections", (int)c->admin_conns,
            "request_timeout_s", (int)c->request_timeout_s, "fencing", "mode", c->fencing,
            "cgroup_root", str_or_null(c->fence_cgroup_root), "dev_dir",
            str_or_null(c->fence_dev_dir), "policy", "unenforced_slices",
            c->unenforced_slices ? "allow" : "refuse", "preempt_slices_by",
            c->preempt_suspend ? "suspend" : "kill", "shim_bypass",
            c->bypass_stop ? "stop" : "record", "preemption", c->policy.preemption,
            "mig_reconfigure", c->policy.mig_reconfigure, "dev_default_mem",
            (json_int_t)c->policy.dev_default_mem, "routes", routes_json(&c->policy),
            "tenant_defaults", "max_priority", c->tenant_defaults.max_priority, "max_tier",
            kerf_tier_name((kerf_tier)c->tenant_defaults.max_tier), "max_pending",
            (int)c->tenant_defaults.max_pending, "uid_base",
            (json_int_t)c->tenant_defaults.uid_base, "uid_span", (int)c->tenant_defaults.uid_span,
            "tenants", tenants, "kerf", KERFD_VERSION);
        if (!j) {
                kreq_error(r, 500, "internal", "config: could not build the answer");
                return;
        }
        json_object_set_new(j, "retention",
                            kerfd_retention_json(&c->retention)); /* retention_cfg.c */
        kreq_json(r, 200, j);
}

typedef struct rctx {
        uint64_t after;
        unsigned limit;
        json_t *items;
        uint64_t next;
} rctx;

static int run_item(const kerf_store_run *run, void *ud)
{
        rctx *x = ud;

        if (run->id <= x->after)
                return 0;
        if (json_array_size(x->items) == x->limit) {
                x->next = x->after; /* more remain: the cursor is the last id returned */
                return -1;
        }
        json_array_append_new(
            x->items,
            json_pack("{s:I, s:I, s:s, s:s, s:s, s:i, s:f, s:I, s:o, s:o}", "id",
                      (json_int_t)run->id, "task", (json_int_t)run->task, "tenant", run->tenant,
                      "route", run->route, "unit_kind", run->unit_kind, "units", (int)run->units,
                      "fraction", run->fraction, "started_ms", (json_int_t)run->started_ms,
                      "ended_ms", run->ended_ms ? json_integer(run->ended_ms) : json_null(),
                      "used_ns", run->used_ns >= 0 ? json_integer(run->used_ns) : json_null()));
        x->after = run->id;
        return 0;
}

/* GET /v1/cost/runs?after=&limit=: the runs in id order (a tenant: its own). */
static void runs_get(kreq *r)
{
        kerfd_node *n = r->node;
        rctx x = {0};
        int rc;

        if (!api_page(r, &x.after, &x.limit))
                return;
        if (!r->admin && !r->tenant[0]) {
                kreq_error(r, 401, "unauthorized", "cost runs: a tenant token is required");
                return;
        }
        x.items = json_array();
        rc = kerf_store_run_foreach(n->store, r->tenant[0] ? r->tenant : NULL, 0, INT64_MAX,
                                    run_item, &x);
        if (rc < 0 && rc != -1) {
                json_decref(x.items);
                kreq_error(r, 500, "internal", "cost runs: %s", kerf_store_errmsg(n->store));
                return;
        }
        kreq_json(r, 200, api_list(x.items, x.next));
}

void kerfd_api_config(kreq *r)
{
        config_get(r);
}

void kerfd_api_cost_runs(kreq *r)
{
        runs_get(r);
}
