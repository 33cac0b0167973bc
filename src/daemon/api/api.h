/* SPDX-License-Identifier: Apache-2.0 */
/* api.h - helpers shared by the API handler files (api.c, api_admin.c, metrics.c) */
#ifndef KERFD_API_H
#define KERFD_API_H

#include <stdio.h>

#include "http.h"

/* The request body as a JSON object, or NULL with a 400 answer queued. Caller decrefs. */
json_t *api_body(kreq *r);
/* An endpoint that takes no body, or `{}`: true when that is what came; else it answered 400
 * naming the first field (`what`: "a renewal", ...) or the bad JSON. */
bool api_no_body(kreq *r, const char *what);
bool api_u64(const char *s, uint64_t *ret);
/* A tenant or queue name: 1..63 characters [A-Za-z0-9_.-]. */
bool api_name_ok(const char *s);
/* Reads ?after= and ?limit= (1..1000, default 100); false with a 400 queued. */
bool api_page(kreq *r, uint64_t *after, unsigned *limit);
/* {"items": items, "next": "N" | null}; takes `items`. */
json_t *api_list(json_t *items, uint64_t next);

/* The handlers of the routes in routes.def, one per route: route.c has already checked the
 * method, the access (an ADMIN route runs for an admin only) and, for NEW_WORK routes, that
 * the store can write. {param} segments are in r->param. Called under n->mu. */
/* api.c: tasks */
void kerfd_api_task_list(kreq *r);
void kerfd_api_task_submit(kreq *r);
void kerfd_api_task_attach(kreq *r);
void kerfd_api_task_get(kreq *r);
void kerfd_api_task_cancel(kreq *r);
void kerfd_api_task_suspend(kreq *r);
void kerfd_api_task_resume(kreq *r);
void kerfd_api_task_logs(kreq *r);
void kerfd_api_task_explain(kreq *r);
void kerfd_api_task_lease(kreq *r);
void kerfd_api_task_detach(kreq *r);
/* api_join.c: another process joins a running attached task */
void kerfd_api_task_join(kreq *r);
/* api.c: the {id} of /v1/tasks/{id}/... (false with a 404 queued), and the task the caller
 * may see: < 0 (404 queued), 0 (live: *live set, rec a shallow copy) or 1 (ended: rec filled,
 * release it with kerf_store_task_fini). */
bool api_task_id(kreq *r, uint64_t *id);
int api_task_visible(kreq *r, uint64_t id, kerf_store_task *rec, dtask **live);
/* Answers kerfd__attach_check's refusal `rc` with `msg`: 400 (no such process), 409 (attached
 * already), else 403 (not the caller's). One mapping for /v1/attach and /v1/tasks/{id}/join. */
void api_attach_refused(kreq *r, int rc, const char *msg);
/* control.c: hold / release / update of a pending task, drain / resume of a GPU */
void kerfd_api_task_hold(kreq *r);
void kerfd_api_task_release(kreq *r);
void kerfd_api_task_update(kreq *r);
void kerfd_api_gpu_drain(kreq *r);
void kerfd_api_gpu_resume(kreq *r);
/* api_admin.c: health, version, whoami, events, GPU recovery, audit */
void kerfd_api_health(kreq *r);
void kerfd_api_version(kreq *r);
void kerfd_api_whoami(kreq *r);
void kerfd_api_events(kreq *r);
void kerfd_api_gpu_recover(kreq *r);
void kerfd_api_audit_list(kreq *r);
void kerfd_api_audit_export(kreq *r);
void kerfd_api_audit_verify(kreq *r);
void kerfd_api_audit_checkpoint(kreq *r);
/* api_tenant.c: tenants and their tokens */
void kerfd_api_tenant_list(kreq *r);
void kerfd_api_tenant_create(kreq *r);
void kerfd_api_tenant_get(kreq *r);
void kerfd_api_tenant_patch(kreq *r);
void kerfd_api_tenant_quota(kreq *r);
void kerfd_api_token_create(kreq *r);
void kerfd_api_token_revoke(kreq *r);
/* api_lists.c: GET /v1/units, /v1/units/{id}, /v1/gpus, /v1/queues */
void kerfd_api_units(kreq *r);
void kerfd_api_unit(kreq *r);
void kerfd_api_gpus(kreq *r);
void kerfd_api_queues(kreq *r);
/* cost.c: GET /v1/cost */
void kerfd_api_cost(kreq *r);
/* api_node.c: GET /v1/node: name, hostname, CPUs, memory, device files (with each live MIG
 * instance's caps) */
void kerfd_api_node(kreq *r);
/* api_export.c: GET /v1/config, GET /v1/cost/runs */
void kerfd_api_config(kreq *r);
void kerfd_api_cost_runs(kreq *r);
/* retention.c: GET /v1/gc (what a pass would remove), POST /v1/gc (a pass now); they release
 * n->mu during the file work and take it again before they return */
void kerfd_api_gc_get(kreq *r);
void kerfd_api_gc_post(kreq *r);
/* retention.c: true, with a 410 queued, when retention removed the logs of task id */
bool kerfd__retention_logs_gone(kreq *r, uint64_t id);
/* metrics.c: snapshots under n->mu, formats after (metrics.h) */
void kerfd_api_metrics(kreq *r);

/* records.c: answers 507 while the store cannot write; true when it did. */
bool kerfd__store_refuse(kreq *r);

#endif /* KERFD_API_H */
