/* SPDX-License-Identifier: Apache-2.0 */
/* api_admin.c - health, version, whoami, events, GPU recovery and audit (tenants: api_tenant.c;
 * lists: api_lists.c) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "kerf/errno.h"

void kerfd_api_events(kreq *r)
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

/* ---- audit ------------------------------------------------------------------------------------
 */

/* The tenant whose audit records a request sees: ?tenant= for an admin (NULL: all), the
 * token's tenant otherwise. false with a 400 queued for a bad name. */
static bool audit_tenant(kreq *r, const char **ret)
{
        const char *tenant = r->admin ? kreq_arg(r, "tenant") : r->tenant;

        if (tenant && !api_name_ok(tenant)) {
                kreq_error(r, 400, "invalid_argument", "tenant: " KERF_NAME_RULE);
                return false;
        }
        *ret = tenant;
        return true;
}

void kerfd_api_audit_list(kreq *r)
{
        kerfd_node *n = r->node;
        kerf_store_audit *a = NULL;
        size_t na = 0;
        uint64_t after, next = 0;
        unsigned limit;
        const char *tenant;
        json_t *items;

        if (!audit_tenant(r, &tenant) || !api_page(r, &after, &limit))
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
}

void kerfd_api_audit_export(kreq *r)
{
        char *buf = NULL;
        size_t len = 0;
        const char *tenant;
        FILE *f;
        int rc;

        if (!audit_tenant(r, &tenant))
                return;
        f = open_memstream(&buf, &len);
        rc = f ? kerf_store_audit_export(r->node->store, tenant, 0, f) : -ENOMEM;
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
}

/* a signed head to keep outside the database (docs/STATE.md "Checkpoints") */
void kerfd_api_audit_checkpoint(kreq *r)
{
        kerfd_node *n = r->node;
        kerf_store_checkpoint cp;
        const char *tenant;
        char key[4400], *s;
        int rc;

        if (!audit_tenant(r, &tenant))
                return;
        if (!kerfd__store_ok(n)) {
                kreq_error(r, 503, "unavailable",
                           "%zu audit records are not written yet (the store cannot write): a "
                           "checkpoint now would not cover them",
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
}

void kerfd_api_audit_verify(kreq *r)
{
        kerf_store_audit_report rep;
        const char *tenant;

        if (!audit_tenant(r, &tenant))
                return;
        if (kerf_store_audit_verify(r->node->store, &rep) < 0) {
                kreq_error(r, 500, "internal", "verify: %s", kerf_store_errmsg(r->node->store));
                return;
        }
        kreq_json(r, 200,
                  json_pack("{s:b, s:I, s:o, s:s}", "ok", rep.ok, "records",
                            (json_int_t)rep.records, "first_bad",
                            rep.first_bad ? json_integer((json_int_t)rep.first_bad) : json_null(),
                            "problem", rep.problem));
}

/* POST /v1/gpus/{index}/recover: a faulted GPU back in service. */
void kerfd_api_gpu_recover(kreq *r)
{
        char msg[256];
        uint64_t g;
        int rc;

        if (r->param_len[0] >= 16 || !api_u64(r->param[0], &g) || g >= KERF_MAX_NODE_GPUS) {
                kreq_error(r, 404, "not_found", "no GPU %s", r->param[0]);
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

/* ---- health, version, whoami ------------------------------------------------------------------
 */

/* A public route: an anonymous caller (route.c) gets what a tenant gets. */
void kerfd_api_health(kreq *r)
{
        kerfd_node *n = r->node;
        /* "store": "ok", or "read-only: <why> since <when> (N changes waiting)" */
        bool sok = kerfd__store_ok(n);
        json_t *h = json_pack("{s:s, s:b, s:s, s:I, s:o, s:I}", "status", sok ? "ok" : "degraded",
                              "simulated", n->simulated, "backend", n->backend_name, "uptime_s",
                              (json_int_t)((kerfd_now_ms() - n->started_ms) / 1000), "store",
                              kerfd__store_health(n), "pending_records", (json_int_t)n->outbox_len);
        /* where kerfd keeps its files: for operators and the POC harness (kerf-load in lib,
         * faults injected in sim); a tenant learns nothing of the host's layout */
        if (h && r->admin)
                json_object_set_new(
                    h, "paths",
                    json_pack("{s:s, s:s, s:o, s:o}", "state", n->cfg.state_dir, "lib", n->lib_dir,
                              "sim",
                              n->simulated && n->sim_dir[0] ? json_string(n->sim_dir) : json_null(),
                              "dev", n->dev_dir[0] ? json_string(n->dev_dir) : json_null()));
        kreq_json(r, 200, h);
}

void kerfd_api_version(kreq *r)
{
        kerfd_node *n = r->node;
        kreq_json(r, 200,
                  json_pack("{s:s, s:i, s:s, s:s}", "kerf", KERFD_VERSION, "api", 1, "driver",
                            n->driver, "cuda", n->cuda));
}

void kerfd_api_whoami(kreq *r)
{
        kreq_json(r, 200,
                  json_pack("{s:b, s:o}", "admin", r->admin, "tenant",
                            r->tenant[0] ? json_string(r->tenant) : json_null()));
}
