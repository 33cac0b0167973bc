/* SPDX-License-Identifier: Apache-2.0 */
/* api.h - helpers shared by the API handler files (api.c, api_admin.c, metrics.c) */
#ifndef KERFD_API_H
#define KERFD_API_H

#include <stdio.h>

#include "http.h"

/* The request body as a JSON object, or NULL with a 400 answer queued. Caller decrefs. */
json_t *api_body(kreq *r);
bool api_u64(const char *s, uint64_t *ret);
/* A tenant or queue name: 1..63 characters [A-Za-z0-9_.-]. */
bool api_name_ok(const char *s);
/* Reads ?after= and ?limit= (1..1000, default 100); false with a 400 queued. */
bool api_page(kreq *r, uint64_t *after, unsigned *limit);
/* {"items": items, "next": "N" | null}; takes `items`. */
json_t *api_list(json_t *items, uint64_t next);

/* api_admin.c: health, version, units, gpus, queues, events, tenants, tokens, audit. Returns
 * false when the path is none of them. */
bool kerfd_api_admin(kreq *r);
/* records.c: answers 507 to new work while the store cannot write; true when it did. */
bool kerfd__store_refuse(kreq *r);
/* api_lists.c: GET /v1/units (idp: the id after "/v1/units/", or NULL), /v1/gpus, /v1/queues */
void kerfd_api_units(kreq *r, const char *idp);
void kerfd_api_gpus(kreq *r);
void kerfd_api_queues(kreq *r);
/* cost.c: GET /v1/cost */
void kerfd_api_cost(kreq *r);
/* api_node.c: GET /v1/node (admin): name, hostname, CPUs, memory, device files (with each live
 * MIG instance's caps); false when the path is not /v1/node */
bool kerfd_api_node(kreq *r);
/* api_export.c: GET /v1/config (admin), GET /v1/cost/runs; false when the path is neither */
bool kerfd_api_export(kreq *r);
/* metrics.c: snapshots under n->mu, formats after (metrics.h) */
void kerfd_api_metrics(kreq *r);

#endif /* KERFD_API_H */
