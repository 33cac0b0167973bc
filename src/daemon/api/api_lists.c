/* SPDX-License-Identifier: Apache-2.0 */
/* api_lists.c - the node's lists: units, GPUs and queues, each paginated in a stable order */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

#define MAX_UNITS 1024

/* Fills a unit's MIG details from the node's instance table. */
static void unit_of(kerfd_node *n, const kerf_unit_info *ui, dunit *u)
{
        dunit *m = ui->kind == KERF_UNIT_MIG ? kerf_u64map_get(&n->migs, ui->id) : NULL;
        memset(u, 0, sizeof(*u));
        if (m)
                *u = *m;
        u->id = ui->id;
        u->kind = ui->kind;
        u->gpu = ui->gpu;
        snprintf(u->gpu_uuid, sizeof(u->gpu_uuid), "%s", ui->gpu_uuid);
        u->mem = ui->mem_bytes;
        u->compute = ui->compute_pct;
        u->compute_limit = ui->compute_limit_pct;
        if (ui->kind == KERF_UNIT_MIG) {
                u->mig_profile = ui->mig_profile_name;
                u->mig_start = (int)ui->mig_start;
                if (!m)
                        u->mig_gi = u->mig_ci = -1;
        }
}

/* Units: tenants see only units held by their own tasks. */
static bool unit_visible(kreq *r, const kerf_unit_info *ui)
{
        dtask *t;
        if (r->admin)
                return true;
        t = kerfd__live(r->node, ui->task);
        return t && !strcmp(t->rec.tenant, r->tenant);
}

static int unit_cmp(const void *a, const void *b)
{
        const kerf_unit_info *x = a, *y = b;
        return x->id < y->id ? -1 : x->id > y->id;
}

/* Units in id order; the cursor is the last unit id. idp: the {id} of /v1/units/{id}, or NULL
 * for the list. */
static void units(kreq *r, const char *idp)
{
        static kerf_unit_info us[MAX_UNITS];
        size_t nu = kerf_sched_unit_list(r->node->sched, -1, us, MAX_UNITS);
        json_t *items = json_array();
        uint64_t id = 0, after = 0, next = 0, last = 0;
        unsigned limit = 0;

        if (idp && (!api_u64(idp, &id) || id == 0 || id > (uint64_t)INT64_MAX)) {
                kreq_error(r, 404, "not_found", "unit id: \"%.40s\" is not a unit id", idp);
                json_decref(items);
                return;
        }
        if (!idp && !api_page(r, &after, &limit)) {
                json_decref(items);
                return;
        }
        if (nu > MAX_UNITS)
                nu = MAX_UNITS;
        qsort(us, nu, sizeof(us[0]), unit_cmp); /* id order: the cursor is the last id */
        for (size_t i = 0; i < nu; i++) {
                dunit u;
                if (!unit_visible(r, &us[i]) || (id && us[i].id != id))
                        continue;
                if (!id && us[i].id <= after)
                        continue;
                if (!id && json_array_size(items) >= limit) {
                        next = last;
                        break;
                }
                last = us[i].id;
                unit_of(r->node, &us[i], &u);
                json_array_append_new(
                    items, kerfd_unit_json(&u, kerf_unit_state_name(us[i].state), us[i].task));
        }
        if (id) {
                if (json_array_size(items) == 0)
                        kreq_error(r, 404, "not_found", "no unit %llu", (unsigned long long)id);
                else
                        kreq_json(r, 200, json_incref(json_array_get(items, 0)));
                json_decref(items);
                return;
        }
        kreq_json(r, 200, api_list(items, next));
}

/* GPUs in index order; the cursor is the index to resume at. */
void kerfd_api_units(kreq *r)
{
        units(r, NULL);
}

void kerfd_api_unit(kreq *r)
{
        units(r, r->param[0]);
}

void kerfd_api_gpus(kreq *r)
{
        kerfd_node *n = r->node;
        static kerf_unit_info us[MAX_UNITS];
        json_t *items;
        uint64_t after, next = 0;
        unsigned limit;

        kerf_store_drain *drains = NULL;
        size_t nd = 0;
        if (!api_page(r, &after, &limit))
                return;
        if (kerf_store_drain_list(n->store, &drains, &nd) < 0)
                nd = 0; /* the scheduler's flag still shows; only the reason is missing */
        items = json_array();
        for (size_t g = after < n->fleet->n_gpus ? (size_t)after : n->fleet->n_gpus;
             g < n->fleet->n_gpus; g++) {
                const kerf_gpu_desc *d = &n->fleet->gpus[g];
                kerf_gpu_state st;
                json_t *layout, *j;
                size_t nu;
                if (kerf_sched_gpu_get(n->sched, (unsigned)g, &st) < 0)
                        continue;
                if (json_array_size(items) >= limit) {
                        next = g; /* > 0: at least one GPU was returned */
                        break;
                }
                layout = json_array();
                nu = kerf_sched_unit_list(n->sched, (int)g, us, MAX_UNITS);
                for (size_t i = 0; i < nu && i < MAX_UNITS; i++)
                        if (us[i].kind == KERF_UNIT_MIG)
                                json_array_append_new(layout,
                                                      json_pack("{s:i, s:s, s:I}", "start",
                                                                (int)us[i].mig_start, "profile",
                                                                us[i].mig_profile_name, "unit",
                                                                (json_int_t)us[i].id));
                j = json_pack("{s:i, s:s, s:s, s:s, s:b, s:I, s:I, s:I, s:i, s:i, s:o, s:s, "
                              "s:s, s:I}",
                              "index", (int)g, "uuid", d->uuid, "model", d->model->name, "mode",
                              kerf_gpu_mode_name(st.mode), "faulted", st.faulted, "memory_total",
                              (json_int_t)st.mem_total, "memory_reserved",
                              (json_int_t)st.mem_reserved, "memory_used",
                              (json_int_t)(g < KERF_MAX_NODE_GPUS ? n->gpu_mem_used[g] : 0),
                              "compute_reserved", (int)st.compute_reserved, "utilization",
                              (int)(g < KERF_MAX_NODE_GPUS ? n->gpu_util[g] : 0), "mig_layout",
                              layout, "driver", n->driver, "cuda", n->cuda, "xid_errors",
                              (json_int_t)(g < KERF_MAX_NODE_GPUS ? n->xid_count[g] : 0));
                json_object_set_new(j, "draining", json_boolean(st.draining));
                json_t *dj = json_null();
                for (size_t k = 0; k < nd && st.draining; k++)
                        if (!strcmp(drains[k].gpu_uuid, d->uuid)) {
                                json_decref(dj);
                                dj = json_pack("{s:s, s:s, s:I}", "reason", drains[k].reason, "by",
                                               drains[k].actor, "since_ms",
                                               (json_int_t)drains[k].since_ms);
                        }
                json_object_set_new(j, "drain", dj);
                json_object_set_new(j, "tasks", json_integer(kerfd__gpu_tasks(n, (unsigned)g)));
                json_array_append_new(items, j);
        }
        free(drains);
        kreq_json(r, 200, api_list(items, next));
}

/* (tenant, queue) -> counts, from the live tasks; small */
struct qent {
        char tenant[KERF_NAME_LEN], queue[KERF_NAME_LEN];
        unsigned pending, running;
        uint64_t head;
        int head_prio;
};

static int qent_cmp(const void *a, const void *b)
{
        const struct qent *x = a, *y = b;
        int c = strcmp(x->tenant, y->tenant);
        return c ? c : strcmp(x->queue, y->queue);
}

/* The queue's mode, backfill and starvation bound (config queues:, docs/SCHEDULER.md). */
static void queue_spec_json(kerfd_node *n, const char *queue, json_t *o)
{
        kerf_queue_spec q;
        if (!o || kerf_sched_queue_get(n->sched, queue, &q) < 0)
                return;
        json_object_set_new(o, "mode", json_string(kerf_queue_mode_name(q.mode)));
        json_object_set_new(o, "backfill", json_boolean(q.backfill));
        json_object_set_new(o, "starvation_s",
                            q.mode == KERF_QUEUE_BEST_EFFORT
                                ? json_integer((json_int_t)q.starvation_s)
                                : json_null());
}

/* Queues in (tenant, queue) order; the cursor is "TENANT/QUEUE" of the last one returned, so a
 * queue appearing or emptying between two pages neither repeats nor hides another. */
void kerfd_api_queues(kreq *r)
{
        kerfd_node *n = r->node;
        const char *a = kreq_arg(r, "after"), *l = kreq_arg(r, "limit"), *slash;
        struct qent *qs = NULL, cur;
        json_t *items;
        uint64_t v;
        unsigned limit = 100;
        size_t nq = 0, qi;
        char next[2 * KERF_NAME_LEN] = "";

        memset(&cur, 0, sizeof(cur));
        if (a) {
                slash = strchr(a, '/');
                if (slash && (size_t)(slash - a) < sizeof(cur.tenant))
                        snprintf(cur.tenant, sizeof(cur.tenant), "%.*s", (int)(slash - a), a);
                if (slash && strlen(slash + 1) < sizeof(cur.queue))
                        snprintf(cur.queue, sizeof(cur.queue), "%s", slash + 1);
                if (!api_name_ok(cur.tenant) || !api_name_ok(cur.queue)) {
                        kreq_error(r, 400, "invalid_argument",
                                   "after: a cursor from \"next\" (TENANT/QUEUE)");
                        return;
                }
        }
        if (l) {
                if (!api_u64(l, &v) || v < 1 || v > 1000) {
                        kreq_error(r, 400, "invalid_argument", "limit: an integer 1..1000");
                        return;
                }
                limit = (unsigned)v;
        }
        items = json_array();
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;
        while (kerf_u64map_next(&n->live, &it, NULL, &val)) {
                dtask *t;
                struct qent *e = NULL;
                t = val;
                if (!r->admin && strcmp(t->rec.tenant, r->tenant) != 0)
                        continue;
                for (size_t k = 0; k < nq; k++)
                        if (!strcmp(qs[k].tenant, t->rec.tenant) &&
                            !strcmp(qs[k].queue, t->rec.queue))
                                e = &qs[k];
                if (!e) {
                        struct qent *nqs = realloc(qs, (nq + 1) * sizeof(*qs));
                        if (!nqs)
                                break;
                        qs = nqs;
                        e = &qs[nq++];
                        memset(e, 0, sizeof(*e));
                        snprintf(e->tenant, sizeof(e->tenant), "%s", t->rec.tenant);
                        snprintf(e->queue, sizeof(e->queue), "%s", t->rec.queue);
                }
                if (t->state == KERF_TASK_RUNNING) {
                        e->running++;
                } else {
                        e->pending++;
                        if (!e->head || t->req.priority > e->head_prio ||
                            (t->req.priority == e->head_prio && t->rec.id < e->head)) {
                                e->head = t->rec.id;
                                e->head_prio = t->req.priority;
                        }
                }
        }
        if (nq)
                qsort(qs, nq, sizeof(*qs), qent_cmp);
        for (qi = 0; qi < nq; qi++) {
                if (a && qent_cmp(&qs[qi], &cur) <= 0)
                        continue;
                if (json_array_size(items) >= limit) {
                        snprintf(next, sizeof(next), "%s/%s", qs[qi - 1].tenant, qs[qi - 1].queue);
                        break;
                }
                json_t *o = json_pack(
                    "{s:s, s:s, s:i, s:i, s:o}", "tenant", qs[qi].tenant, "queue", qs[qi].queue,
                    "pending", (int)qs[qi].pending, "running", (int)qs[qi].running, "head",
                    qs[qi].head ? json_integer((json_int_t)qs[qi].head) : json_null());
                queue_spec_json(n, qs[qi].queue, o);
                json_array_append_new(items, o);
        }
        free(qs);
        kreq_json(r, 200,
                  json_pack("{s:o, s:o}", "items", items, "next",
                            next[0] ? json_string(next) : json_null()));
}
