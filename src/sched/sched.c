/* SPDX-License-Identifier: Apache-2.0 */
/* sched.c - scheduler lifecycle, tenants, submission, completion and backend confirmations */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const kerf_unit_kind R_WHOLE[] = {KERF_UNIT_WHOLE};
static const kerf_unit_kind R_WHOLE_MIG[] = {KERF_UNIT_WHOLE, KERF_UNIT_MIG};
static const kerf_unit_kind R_MIG_SLICE[] = {KERF_UNIT_MIG, KERF_UNIT_SLICE};
static const kerf_unit_kind R_SLICE_MIG_MPS[] = {KERF_UNIT_SLICE, KERF_UNIT_MIG, KERF_UNIT_MPS};
static const kerf_unit_kind R_SLICE_TSLICE[] = {KERF_UNIT_SLICE, KERF_UNIT_TSLICE};
static const kerf_unit_kind R_TSLICE_SLICE[] = {KERF_UNIT_TSLICE, KERF_UNIT_SLICE};
static const kerf_unit_kind R_BATCH[] = {KERF_UNIT_SLICE, KERF_UNIT_MIG, KERF_UNIT_WHOLE,
                                         KERF_UNIT_TSLICE};

#define SETR(p, w, t, arr) kerf_policy_set_routes(p, w, t, arr, sizeof(arr) / sizeof(arr[0]))

void kerf_policy_default(kerf_policy *p)
{
        memset(p, 0, sizeof(*p));
        for (int t = 0; t < KERF_TIER_COUNT; t++) {
                SETR(p, KERF_WL_TRAINING, t, R_WHOLE);
                SETR(p, KERF_WL_BATCH, t, R_BATCH);
        }
        SETR(p, KERF_WL_TRAINING, KERF_TIER_EXPLORATORY, R_WHOLE_MIG);
        SETR(p, KERF_WL_INFERENCE, KERF_TIER_HIGH, R_MIG_SLICE);
        SETR(p, KERF_WL_INFERENCE, KERF_TIER_QUEUEABLE, R_SLICE_MIG_MPS);
        SETR(p, KERF_WL_INFERENCE, KERF_TIER_EXPLORATORY, R_SLICE_TSLICE);
        SETR(p, KERF_WL_DEV, KERF_TIER_HIGH, R_SLICE_TSLICE);
        SETR(p, KERF_WL_DEV, KERF_TIER_QUEUEABLE, R_TSLICE_SLICE);
        SETR(p, KERF_WL_DEV, KERF_TIER_EXPLORATORY, R_TSLICE_SLICE);
        p->force_preemptible[KERF_WL_BATCH] = true;
        p->place = KERF_PLACE_KERF;
        p->preemption = true;
        p->mig_reconfigure = true;
        p->dev_default_mem = 8 * KERF_GIB;
        kerf_queue_spec_default(&p->queue_default);
        p->backfill_depth = 32;
}

int kerf_policy_set_routes(kerf_policy *p, kerf_workload w, kerf_tier t,
                           const kerf_unit_kind *routes, unsigned n)
{
        if (!p || (unsigned)w >= KERF_WL_COUNT || (unsigned)t >= KERF_TIER_COUNT || !routes ||
            n == 0 || n > KERF_UNIT_KIND_COUNT)
                return -EINVAL;
        for (unsigned i = 0; i < n; i++) {
                if ((unsigned)routes[i] >= KERF_UNIT_KIND_COUNT)
                        return -EINVAL;
                for (unsigned j = 0; j < i; j++)
                        if (routes[j] == routes[i])
                                return -EINVAL;
        }
        memcpy(p->routes[w][t], routes, n * sizeof(*routes));
        p->n_routes[w][t] = n;
        return 0;
}

void kerf_tenant_spec_init(kerf_tenant_spec *t, const char *name)
{
        memset(t, 0, sizeof(*t));
        t->name = name;
        t->weight = 1;
        for (int r = 0; r < KERF_RES_COUNT; r++) {
                t->nominal[r] = KERF_UNLIMITED;
                t->borrow_limit[r] = KERF_UNLIMITED;
                t->lend_limit[r] = KERF_UNLIMITED;
        }
}

void kerf_request_init(kerf_request *r)
{
        memset(r, 0, sizeof(*r));
        r->workload = KERF_WL_BATCH;
        r->tier = KERF_TIER_QUEUEABLE;
        r->route = -1;
        r->gpus = 1;
}

static bool name_ok(const char *s)
{
        size_t n = s ? strlen(s) : 0;
        if (n == 0 || n >= KERF_NAME_LEN)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-')
                        return false;
        return true;
}

static bool policy_ok(const kerf_policy *p)
{
        for (int w = 0; w < KERF_WL_COUNT; w++)
                for (int t = 0; t < KERF_TIER_COUNT; t++)
                        if (p->n_routes[w][t] == 0 || p->n_routes[w][t] > KERF_UNIT_KIND_COUNT)
                                return false;
        const kerf_queue_spec *q = &p->queue_default;
        if ((unsigned)q->mode >= KERF_QUEUE_MODE_COUNT ||
            (q->mode == KERF_QUEUE_BEST_EFFORT && q->starvation_s == 0))
                return false;
        return (unsigned)p->place <= KERF_PLACE_FIRSTFIT;
}

int kerf_sched_new(const kerf_fleet *fleet, const kerf_policy *policy, kerf_sched **ret)
{
        if (!fleet || !ret || fleet->n_gpus == 0)
                return -EINVAL;
        if (policy && !policy_ok(policy))
                return -EINVAL;
        kerf_sched *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        if (policy)
                s->pol = *policy;
        else
                kerf_policy_default(&s->pol);
        if (kerf_fleet_new(&s->fleet) < 0)
                goto oom;
        for (size_t n = 0; n < fleet->n_nodes; n++) {
                const kerf_node_desc *nd = &fleet->nodes[n];
                int ni = kerf_fleet_add_node(s->fleet, nd->name, nd->cpu_milli, nd->mem_bytes,
                                             nd->driver_version, nd->cuda_version);
                if (ni < 0)
                        goto inval;
                for (unsigned i = 0; i < nd->n_gpus; i++) {
                        const kerf_gpu_desc *g = &fleet->gpus[nd->first_gpu + i];
                        if (kerf_fleet_add_gpu(s->fleet, (unsigned)ni, g->model, g->mig_enabled,
                                               g->numa, g->uuid) < 0)
                                goto inval;
                }
        }
        for (size_t i = 0; i < fleet->n_gpus; i++)
                s->fleet->gpus[i].nvlink_peers = fleet->gpus[i].nvlink_peers;
        s->n_gpus = s->fleet->n_gpus;
        s->gpus = calloc(s->n_gpus, sizeof(*s->gpus));
        s->nodes = calloc(s->fleet->n_nodes, sizeof(*s->nodes));
        if (!s->gpus || !s->nodes)
                goto oom;
        for (size_t n = 0; n < s->fleet->n_nodes; n++) {
                const kerf_node_desc *nd = &s->fleet->nodes[n];
                s->nodes[n].cpu_free = nd->cpu_milli ? nd->cpu_milli : UINT64_MAX;
                s->nodes[n].mem_free = nd->mem_bytes ? nd->mem_bytes : UINT64_MAX;
        }
        for (size_t i = 0; i < s->n_gpus; i++) {
                sgpu *g = &s->gpus[i];
                g->d = &s->fleet->gpus[i];
                g->idx = (unsigned)i;
                g->mem_total = g->d->model->mem_bytes;
                g->mode = g->d->mig_enabled ? KERF_GPU_MODE_MIG : KERF_GPU_MODE_FREE;
                s->cap[KERF_RES_GPUS] += 1;
                s->cap[KERF_RES_MEM] += g->mem_total;
                s->cap[KERF_RES_COMPUTE] += 100;
                if (g->d->mig_enabled)
                        s->cap[KERF_RES_MIG_SLICES] += KERF_MIG_COMPUTE;
        }
        kerf_u64map_init(&s->tasks);
        kerf_u64map_init(&s->units);
        s->gen = 1; /* blocked_gen 0 means "not blocked" */
        s->only_node = -1;
        *ret = s;
        return 0;
inval:
        kerf_sched_free(s);
        return -EINVAL;
oom:
        kerf_sched_free(s);
        return -ENOMEM;
}

kerf_sched *kerf_sched_free(kerf_sched *s)
{
        if (!s)
                return NULL;
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *v;
        while (kerf_u64map_next(&s->tasks, &it, NULL, &v))
                free(v);
        it = (kerf_u64map_iter)KERF_U64MAP_ITER_INIT;
        while (kerf_u64map_next(&s->units, &it, NULL, &v))
                free(v);
        kerf_u64map_fini(&s->tasks);
        kerf_u64map_fini(&s->units);
        for (size_t i = 0; i < s->n_tenants; i++) {
                stenant *t = s->tenants[i];
                while (t->queues) {
                        squeue *q = t->queues;
                        t->queues = q->next;
                        free(q->heap);
                        free(q);
                }
                free(t);
        }
        free(s->tenants);
        free(s->cohorts);
        kerf__frag_free(s);
        kerf__migfit_free(s);
        free(s->gpus);
        free(s->nodes);
        free(s->ready);
        free(s->dq);
        free(s->qspecs);
        free(s->bf_buf);
        free(s->rv_buf);
        kerf_fleet_free(s->fleet);
        free(s);
        return NULL;
}

const kerf_fleet *kerf_sched_fleet(const kerf_sched *s)
{
        return s ? s->fleet : NULL;
}

static stenant *tenant_find(const kerf_sched *s, const char *name)
{
        if (!name)
                return NULL;
        for (size_t i = 0; i < s->n_tenants; i++)
                if (strcmp(s->tenants[i]->name, name) == 0)
                        return s->tenants[i];
        return NULL;
}

static int cohort_index(kerf_sched *s, const char *name)
{
        if (!name || !*name)
                return -1;
        for (size_t i = 0; i < s->n_cohorts; i++)
                if (strcmp(s->cohorts[i], name) == 0)
                        return (int)i;
        void *n = realloc(s->cohorts, (s->n_cohorts + 1) * sizeof(*s->cohorts));
        if (!n)
                return -ENOMEM;
        s->cohorts = n;
        snprintf(s->cohorts[s->n_cohorts], KERF_NAME_LEN, "%s", name);
        return (int)s->n_cohorts++;
}

int kerf_sched_tenant_set(kerf_sched *s, const kerf_tenant_spec *spec)
{
        if (!s || !spec || !name_ok(spec->name) || spec->weight > 1000)
                return -EINVAL;
        if (spec->cohort && *spec->cohort && !name_ok(spec->cohort))
                return -EINVAL;
        stenant *t = tenant_find(s, spec->name);
        if (!t) {
                if (s->n_tenants == s->cap_tenants) {
                        size_t nc = s->cap_tenants ? s->cap_tenants * 2 : 8;
                        stenant **n = realloc(s->tenants, nc * sizeof(*n));
                        if (!n)
                                return -ENOMEM;
                        s->tenants = n;
                        s->cap_tenants = nc;
                }
                t = calloc(1, sizeof(*t));
                if (!t)
                        return -ENOMEM;
                snprintf(t->name, sizeof(t->name), "%s", spec->name);
                t->idx = (unsigned)s->n_tenants;
                s->tenants[s->n_tenants++] = t;
        }
        int c = cohort_index(s, spec->cohort);
        if (c < -1)
                return c;
        t->cohort = c;
        t->weight = spec->weight ? spec->weight : 1;
        for (int r = 0; r < KERF_RES_COUNT; r++) {
                t->nominal[r] = spec->nominal[r];
                t->borrow[r] = spec->borrow_limit[r];
                t->lend[r] = spec->lend_limit[r];
                /* running work above a lowered quota keeps running; it is grandfathered */
                uint64_t limit = t->nominal[r];
                if (c >= 0 && limit != KERF_UNLIMITED)
                        limit =
                            t->borrow[r] > UINT64_MAX - limit ? UINT64_MAX : limit + t->borrow[r];
                t->grand[r] = t->usage[r] > limit ? t->usage[r] : 0;
        }
        kerf__tenant_share_update(s, t);
        s->gen++;
        return 0;
}

int kerf_sched_tenant_usage(const kerf_sched *s, const char *tenant,
                            uint64_t ret_usage[KERF_RES_COUNT])
{
        if (!s || !ret_usage)
                return -EINVAL;
        const stenant *t = tenant_find(s, tenant);
        if (!t)
                return -ENOENT;
        memcpy(ret_usage, t->usage, sizeof(t->usage));
        return 0;
}

static squeue *queue_get(const kerf_sched *s, stenant *t, const char *name)
{
        for (squeue *q = t->queues; q; q = q->next)
                if (strcmp(q->name, name) == 0)
                        return q;
        squeue *q = calloc(1, sizeof(*q));
        if (!q)
                return NULL;
        snprintf(q->name, sizeof(q->name), "%s", name);
        q->tenant = t;
        kerf__queue_spec_for(s, name, &q->spec);
        /* append: queue order within a tenant is creation order (deterministic) */
        squeue **pp = &t->queues;
        while (*pp)
                pp = &(*pp)->next;
        *pp = q;
        return q;
}

static bool whole_route_only(const kerf_sched *s, const stask *t)
{
        return t->route_req == KERF_UNIT_WHOLE ||
               (t->route_req < 0 && s->pol.n_routes[t->wl][t->tier] == 1 &&
                s->pol.routes[t->wl][t->tier][0] == KERF_UNIT_WHOLE);
}

#define BAD(...)                                                                                   \
        do {                                                                                       \
                if (why)                                                                           \
                        kerf__reason_set(why, KERF_WHY_NONE, 0, __VA_ARGS__);                      \
                return -EINVAL;                                                                    \
        } while (0)

/* Validates a request into a task record (not yet queued). */
int kerf__task_from_request(kerf_sched *s, const kerf_request *r, stask *t, kerf_reason *why)
{
        if (r->name && strlen(r->name) >= KERF_NAME_LEN)
                BAD("name: longer than %d characters", KERF_NAME_LEN - 1);
        if ((unsigned)r->workload >= KERF_WL_COUNT)
                BAD("workload: must be training, inference, dev or batch");
        if ((unsigned)r->tier >= KERF_TIER_COUNT)
                BAD("tier: must be high, queueable or exploratory");
        if (r->route < -1 || r->route >= KERF_UNIT_KIND_COUNT)
                BAD("route: must be whole, mig, slice, mps or tslice (or unset)");
        unsigned n = r->gpus ? r->gpus : 1;
        if (n > KERF_MAX_TASK_GPUS)
                BAD("gpus: %u requested, at most %d per task", n, KERF_MAX_TASK_GPUS);
        if (r->compute_pct > 100)
                BAD("compute_pct: %u is over 100", r->compute_pct);
        if (r->compute_limit_pct > 100 ||
            (r->compute_limit_pct && r->compute_limit_pct < r->compute_pct))
                BAD("compute_limit_pct: %u must be between compute_pct (%u) and 100",
                    r->compute_limit_pct, r->compute_pct);
        if (r->mem_permille > 1000)
                BAD("mem_permille: %u is over 1000", r->mem_permille);
        if (r->n_gpu_pins) {
                if (r->n_gpu_pins != n)
                        BAD("gpu pins: %u GPUs named for a task of %u GPUs (a task on named GPUs "
                            "uses exactly those)",
                            r->n_gpu_pins, n);
                for (unsigned i = 0; i < r->n_gpu_pins; i++) {
                        if (r->gpu_pins[i] >= s->n_gpus)
                                BAD("gpu pins: GPU %u is not in the fleet", r->gpu_pins[i]);
                        if (s->gpus[r->gpu_pins[i]].d->node != s->gpus[r->gpu_pins[0]].d->node)
                                BAD("gpu pins: the named GPUs are on different nodes");
                        for (unsigned j = 0; j < i; j++)
                                if (r->gpu_pins[j] == r->gpu_pins[i])
                                        BAD("gpu pins: GPU %u named twice", r->gpu_pins[i]);
                }
        }
        const sunit *pin = NULL;
        if (r->mig_unit_pin) {
                pin = kerf_u64map_get(&s->units, r->mig_unit_pin);
                if (!pin || pin->kind != KERF_UNIT_MIG)
                        BAD("mig unit pin: there is no MIG instance %llu",
                            (unsigned long long)r->mig_unit_pin);
                if (r->route >= 0 && r->route != KERF_UNIT_MIG)
                        BAD("mig unit pin: a MIG instance named for a route %s task",
                            kerf_unit_kind_name((kerf_unit_kind)r->route));
                if (n != 1)
                        BAD("mig unit pin: a MIG instance is one unit; %u GPUs requested", n);
                if (r->n_gpu_pins && r->gpu_pins[0] != pin->gpu)
                        BAD("mig unit pin: instance %llu is on GPU %u, not on the named GPU %u",
                            (unsigned long long)r->mig_unit_pin, pin->gpu, r->gpu_pins[0]);
                if (r->mig_profile && strcmp(r->mig_profile, pin->prof->name) != 0)
                        BAD("mig unit pin: instance %llu is a %s, not a %s",
                            (unsigned long long)r->mig_unit_pin, pin->prof->name, r->mig_profile);
        }
        if (r->mem_permille && r->mem_bytes)
                BAD("mem_bytes and mem_permille: give one, not both");
        if (r->priority < KERF_PRIORITY_MIN || r->priority > KERF_PRIORITY_MAX)
                BAD("priority: %d is outside %d..%d", r->priority, KERF_PRIORITY_MIN,
                    KERF_PRIORITY_MAX);
        if (r->mig_profile && (!*r->mig_profile || strlen(r->mig_profile) >= sizeof(t->mig_name)))
                BAD("mig_profile: '%s' is not a profile name", r->mig_profile);
        if (r->mig_profile && r->route >= 0 && r->route != KERF_UNIT_MIG)
                BAD("mig_profile: given with route %s; a MIG profile implies route mig",
                    kerf_unit_kind_name((kerf_unit_kind)r->route));
        if (n > 1 && r->route >= 0 && r->route != KERF_UNIT_WHOLE)
                BAD("gpus: %u GPUs need route whole; %s units are single-GPU", n,
                    kerf_unit_kind_name((kerf_unit_kind)r->route));
        const char *qn = r->queue && *r->queue ? r->queue : "default";
        if (!name_ok(qn))
                BAD("queue: '%s' must be 1-63 characters of [A-Za-z0-9_.-]", qn);
        stenant *ten = tenant_find(s, r->tenant);
        if (!ten) {
                if (why)
                        kerf__reason_set(why, KERF_WHY_NONE, 0, "tenant: '%s' does not exist",
                                         r->tenant ? r->tenant : "");
                return -ENOENT;
        }
        memset(t, 0, sizeof(*t));
        snprintf(t->name, sizeof(t->name), "%s", r->name ? r->name : "");
        t->tenant = ten;
        t->wl = r->workload;
        t->tier = r->tier;
        t->route_req = r->mig_profile || pin ? KERF_UNIT_MIG : r->route;
        if (r->mig_profile || pin)
                snprintf(t->mig_name, sizeof(t->mig_name), "%s",
                         r->mig_profile ? r->mig_profile : pin->prof->name);
        t->mig_pin = r->mig_unit_pin;
        t->ngpus = n;
        t->mem_req = r->mem_bytes;
        t->mem_permille = r->mem_permille;
        t->compute = r->compute_pct;
        t->limit = r->compute_limit_pct;
        t->cpu = r->cpu_milli;
        t->hmem = r->host_mem_bytes;
        t->model_mask = r->model_mask;
        t->n_pins = r->n_gpu_pins;
        memcpy(t->pins, r->gpu_pins, sizeof(t->pins));
        t->prio = r->priority;
        t->preemptible = r->preemptible || s->pol.force_preemptible[r->workload];
        t->max_runtime = r->max_runtime_s;
        t->idle_timeout = r->idle_timeout_s;
        t->heap_idx = SIZE_MAX;
        /* shares without a memory size get the policy default */
        if (!t->mem_req && !t->mem_permille && !whole_route_only(s, t) && !t->mig_name[0])
                t->mem_req = s->pol.dev_default_mem;
        t->queue = queue_get(s, ten, qn);
        if (!t->queue)
                return -ENOMEM;
        return 0;
}

int kerf_sched_submit(kerf_sched *s, const kerf_request *r, uint64_t *ret_id, kerf_reason *why)
{
        return kerf__submit(s, r, 0, ret_id, why);
}

int kerf_sched_submit_id(kerf_sched *s, const kerf_request *r, uint64_t id, kerf_reason *why)
{
        uint64_t got;
        if (!s || id == 0 || id == UINT64_MAX || kerf_u64map_get(&s->tasks, id))
                return -EINVAL;
        return kerf__submit(s, r, id, &got, why);
}

int kerf__submit(kerf_sched *s, const kerf_request *r, uint64_t forced_id, uint64_t *ret_id,
                 kerf_reason *why)
{
        if (!s || !r || !ret_id)
                return -EINVAL;
        stask tmp;
        int rc = kerf__task_from_request(s, r, &tmp, why);
        if (rc < 0)
                return rc;
        /* reject at once what no route could ever hold */
        kerf_unit_kind routes[KERF_UNIT_KIND_COUNT];
        unsigned nr;
        if (tmp.route_req >= 0) {
                routes[0] = (kerf_unit_kind)tmp.route_req;
                nr = 1;
        } else {
                nr = s->pol.n_routes[tmp.wl][tmp.tier];
                memcpy(routes, s->pol.routes[tmp.wl][tmp.tier], nr * sizeof(*routes));
        }
        char text[KERF_TEXT_LEN] = "", first[KERF_TEXT_LEN] = "";
        bool possible = false;
        for (unsigned i = 0; i < nr && !possible; i++) {
                possible = kerf__route_possible(s, &tmp, routes[i], text, sizeof(text));
                if (!possible && !first[0])
                        snprintf(first, sizeof(first), "%s", text);
        }
        if (!possible) {
                if (why)
                        kerf__reason_set(why, KERF_WHY_NO_FIT, 0, "can never run on this fleet: %s",
                                         first);
                return -KERF_ENEVER;
        }
        stask *t = malloc(sizeof(*t));
        if (!t)
                return -ENOMEM;
        *t = tmp;
        if (forced_id) {
                t->id = forced_id;
                if (forced_id > s->next_task)
                        s->next_task = forced_id;
        } else {
                t->id = ++s->next_task;
        }
        t->seq = ++s->next_seq;
        if (kerf_u64map_put(&s->tasks, t->id, t) < 0) {
                free(t);
                return -ENOMEM;
        }
        if (kerf__task_enqueue(s, t) < 0) {
                kerf_u64map_del(&s->tasks, t->id);
                free(t);
                return -ENOMEM;
        }
        kerf__reason_set(&t->reason, KERF_WHY_NOT_TRIED, 0, "submitted, not yet considered");
        kerf__class_note(s, t, whole_route_only(s, t));
        *ret_id = t->id;
        if (why)
                kerf__reason_set(why, KERF_WHY_NOT_TRIED, 0, "queued");
        return 0;
}

static void task_dequeue(kerf_sched *s, stask *t)
{
        if (t->state != KERF_TASK_PENDING)
                return;
        squeue *q = t->queue;
        bool was_head = q->len && q->heap[0] == t;
        kerf__queue_remove(q, t);
        t->tenant->n_pending--;
        s->st.pending--;
        if (was_head)
                q->blocked_gen = 0;
}

static int task_end(kerf_sched *s, uint64_t id)
{
        stask *t = s ? kerf_u64map_get(&s->tasks, id) : NULL;
        if (!t)
                return -ENOENT;
        if (t->state == KERF_TASK_PENDING) {
                task_dequeue(s, t);
        } else {
                if (t->state == KERF_TASK_RUNNING)
                        s->st.running--;
                kerf__task_unbind(s, t);
        }
        kerf_u64map_del(&s->tasks, id);
        free(t);
        return 0;
}

int kerf_sched_cancel(kerf_sched *s, uint64_t task)
{
        return task_end(s, task);
}

int kerf_sched_finish(kerf_sched *s, uint64_t task)
{
        return task_end(s, task);
}

int kerf__task_evict(kerf_sched *s, stask *t, kerf_why code, uint64_t by, const char *text)
{
        if (t->state == KERF_TASK_RUNNING)
                s->st.running--;
        kerf__task_unbind(s, t);
        kerf__reason_set(&t->reason, code, by, "%s", text);
        return kerf__task_enqueue(s, t);
}

int kerf_sched_mig_adopt(kerf_sched *s, unsigned gpu, unsigned profile_id, unsigned start,
                         uint64_t *ret_unit)
{
        return kerf_sched_mig_adopt_id(s, gpu, profile_id, start, 0, ret_unit);
}

int kerf_sched_mig_adopt_id(kerf_sched *s, unsigned gpu, unsigned profile_id, unsigned start,
                            uint64_t id, uint64_t *ret_unit)
{
        if (!s || gpu >= s->n_gpus || !ret_unit || id == UINT64_MAX ||
            (id && kerf_u64map_get(&s->units, id)))
                return -EINVAL;
        sgpu *g = &s->gpus[gpu];
        if (g->mode != KERF_GPU_MODE_MIG)
                return -EINVAL;
        const kerf_mig_profile *p = kerf_mig_profile_by_id(g->d->model, profile_id);
        if (!p || !kerf_mig_start_valid(p, start))
                return -EINVAL;
        uint8_t mask = kerf_mig_slice_mask(p, start);
        unsigned same = 0;
        for (const sunit *o = g->head; o; o = o->next)
                same += o->kind == KERF_UNIT_MIG && o->prof->id == p->id;
        if ((g->mig_mask | g->mig_plan_mask) & mask ||
            g->mig_compute + p->compute_slices > KERF_MIG_COMPUTE || same >= p->max_count)
                return -KERF_EINUSE;
        sunit *u = kerf__unit_new_id(s, g, KERF_UNIT_MIG, id);
        if (!u)
                return -ENOMEM;
        u->state = KERF_UNIT_READY;
        u->prof = p;
        u->start = start;
        u->mem = p->mem_mib * KERF_MIB;
        u->compute = u->limit = p->compute_slices * 100 / KERF_MIG_COMPUTE;
        g->mig_mask |= mask;
        g->mig_compute += p->compute_slices;
        s->gen++;
        *ret_unit = u->id;
        return 0;
}

int kerf_sched_mig_done(kerf_sched *s, uint64_t unit, int result)
{
        if (!s)
                return -EINVAL;
        sunit *u = kerf_u64map_get(&s->units, unit);
        if (!u)
                return -ENOENT;
        stask *t = u->task;
        if (u->state == KERF_UNIT_CREATING) {
                if (result == 0) {
                        if (t) {
                                u->state = KERF_UNIT_ASSIGNED;
                                t->state = KERF_TASK_RUNNING;
                                t->start_ms = kerf__now(s); /* its max_runtime counts from now */
                                s->st.running++;
                                s->st.placed++;
                                kerf__reason_set(&t->reason, KERF_WHY_PLACED, 0,
                                                 "%srunning on new MIG instance %s of GPU %u",
                                                 t->backfilled ? "backfilled ahead of its "
                                                                 "queue's blocked head; "
                                                               : "",
                                                 u->prof->name, u->gpu);
                                return kerf__emit(s, KERF_DEC_START, t, &t->reason);
                        }
                        u->state = KERF_UNIT_READY;
                        s->gen++;
                        return 0;
                }
                if (t) {
                        t->n_units = 0; /* the unit is not the task's any more */
                        kerf__unit_free(s, u);
                        char text[KERF_TEXT_LEN];
                        snprintf(text, sizeof(text), "backend refused to create a MIG instance: %s",
                                 kerf_strerror(result));
                        return kerf__task_evict(s, t, KERF_WHY_BACKEND_REFUSED, 0, text);
                }
                kerf__unit_free(s, u);
                s->gen++;
                return 0;
        }
        if (u->state == KERF_UNIT_DESTROYING) {
                if (result == 0) {
                        kerf__unit_free(s, u);
                        if (t && --t->destroys_left == 0) {
                                stask **n = realloc(s->ready, (s->n_ready + 1) * sizeof(*n));
                                if (!n)
                                        return -ENOMEM;
                                s->ready = n;
                                s->ready[s->n_ready++] = t;
                        }
                        s->gen++;
                        return 0;
                }
                u->state = KERF_UNIT_READY;
                u->task = NULL;
                if (t) {
                        char text[KERF_TEXT_LEN];
                        snprintf(text, sizeof(text),
                                 "backend refused to destroy MIG instance %llu: %s",
                                 (unsigned long long)unit, kerf_strerror(result));
                        return kerf__task_evict(s, t, KERF_WHY_BACKEND_REFUSED, 0, text);
                }
                return 0;
        }
        if (u->state == KERF_UNIT_FAULT && u->create_pending) {
                /* the instance faulted before its create was answered (its task was taken off
                 * then): a confirmed one stays FAULT, a refused one never existed */
                u->create_pending = false;
                if (result != 0)
                        kerf__unit_free(s, u);
                s->gen++;
                return 0;
        }
        return -KERF_ESTATE;
}
