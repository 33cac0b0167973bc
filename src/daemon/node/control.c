/* SPDX-License-Identifier: Apache-2.0 */
/* control.c - an operator's hand on kerfd: hold / release / update of a pending task, drain /
 * resume of a GPU (docs/API.md; docs/DAEMON.md "Holds, updates and drains") */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "kerf/fields.h"
#include "node.h"
#include "kerf/errno.h"

/* Who holds a task: the words the store keeps (kerf_store_task.held). */
#define HELD_ADMIN  "admin"
#define HELD_TENANT "tenant"

/* What PATCH /v1/tasks/{id} may change: the task request's fields marked
 * KERF_FIELD_TASK_UPDATE (those that touch neither its placement nor its identity; the rest is
 * cancel and submit again), listed into buf. */
static const char *update_words(char *buf, size_t len)
{
        size_t o = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < kerf_task_fields_count && o < len; i++)
                if (kerf_task_fields[i].objects & KERF_FIELD_TASK_UPDATE)
                        o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? ", " : "",
                                              kerf_task_fields[i].name);
        return buf;
}

/* The live pending task {id} the caller may change, or NULL with the answer queued (404 when
 * the caller may not see it, 409 naming its state when it is not pending). */
static dtask *pending_task(kreq *r, uint64_t id, const char *verb)
{
        kerf_store_task rec;
        kerf_task_info ti;
        dtask *t;
        int k = api_task_visible(r, id, &rec, &t);

        if (k < 0)
                return NULL;
        if (k == 1)
                kerf_store_task_fini(&rec);
        if (!t) {
                kreq_error(r, 409, "conflict",
                           "task %llu has already ended: only a pending task can be %s",
                           (unsigned long long)id, verb);
                return NULL;
        }
        if (t->state != KERF_TASK_PENDING || t->stopping || t->preempt_frozen ||
            kerf_sched_task_get(r->node->sched, id, &ti) < 0 || ti.state != KERF_TASK_PENDING) {
                kreq_error(r, 409, "conflict", "task %llu is %s: only a pending task can be %s",
                           (unsigned long long)id,
                           t->stopping         ? "stopping"
                           : t->preempt_frozen ? "suspended by a preemption (its process is kept)"
                                               : t->rec.state,
                           verb);
                return NULL;
        }
        return t;
}

static void set_reason(dtask *t, kerf_why code, const char *text)
{
        snprintf(t->rec.reason_code, sizeof(t->rec.reason_code), "%s", kerf_why_name(code));
        snprintf(t->rec.reason_text, sizeof(t->rec.reason_text), "%s", text);
        t->rec.reason_task = 0;
}

/* POST /v1/tasks/{id}/hold and /release (Slurm's scontrol hold / release): a tenant holds and
 * releases its own tasks, an admin any; a tenant cannot release an admin's hold. */
static void task_hold(kreq *r, uint64_t id, bool on)
{
        kerfd_node *n = r->node;
        const char *who = r->admin ? HELD_ADMIN : HELD_TENANT;
        char text[64];
        dtask *t;
        int rc;

        if (!api_no_body(r, on ? "a hold" : "a release"))
                return;
        if (!(t = pending_task(r, id, on ? "held" : "released")))
                return;
        if (on) {
                /* an admin's hold is not weakened by the tenant holding it again */
                if (!r->admin && !strcmp(t->rec.held, HELD_ADMIN)) {
                        kreq_error(r, 409, "conflict", "task %llu is already held by an admin",
                                   (unsigned long long)id);
                        return;
                }
                snprintf(text, sizeof(text), "held by %s", who);
                rc = kerf_sched_task_hold(n->sched, id, text);
        } else {
                if (!t->rec.held[0]) {
                        kreq_error(r, 409, "conflict", "task %llu is not held",
                                   (unsigned long long)id);
                        return;
                }
                if (!r->admin && !strcmp(t->rec.held, HELD_ADMIN)) {
                        kreq_error(r, 403, "forbidden",
                                   "task %llu is held by an admin: only an admin can release it",
                                   (unsigned long long)id);
                        return;
                }
                snprintf(text, sizeof(text), "released by %s", who);
                rc = kerf_sched_task_release(n->sched, id);
        }
        if (rc < 0) {
                kreq_error(r, 409, "conflict", "task %llu: %s", (unsigned long long)id,
                           kerf_strerror(rc));
                return;
        }
        snprintf(t->rec.held, sizeof(t->rec.held), "%s", on ? who : "");
        set_reason(t, on ? KERF_WHY_HELD : KERF_WHY_NOT_TRIED, text);
        (void)kerfd__commit_task(n, t, false, r->actor, on ? "task.hold" : "task.release", "ok",
                                 text);
        kreq_json(r, 200, kerfd_task_json(n, &t->rec, t));
        kerfd__kick(n);
}

/* Appends "field old -> new" to buf for each field of `body`. */
static void changes_text(const json_t *old, const json_t *body, char *buf, size_t len)
{
        const char *key;
        json_t *v;
        size_t at = 0;
        buf[0] = 0;
        json_object_foreach((json_t *)body, key, v)
        {
                char *was = json_dumps(json_object_get(old, key), JSON_ENCODE_ANY | JSON_COMPACT);
                char *now = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
                if (at < len)
                        at += (size_t)snprintf(buf + at, len - at, "%s%s %s -> %s", at ? "; " : "",
                                               key, was ? was : "unset", now ? now : "?");
                free(was);
                free(now);
        }
}

/* PATCH /v1/tasks/{id}: new values for some of the updatable fields (update_words), checked by the
 * rules of submit (task.c) and the tenant's ceilings; the scheduler and the store get them
 * together. */
static void task_update(kreq *r, uint64_t id)
{
        kerfd_node *n = r->node;
        const char *key, *code = "invalid_argument";
        json_t *body, *v;
        dtask *t, *nt = NULL;
        char msg[512], changes[512], words[160];
        kerf_reason why;
        int rc;

        if (!(body = api_body(r)))
                return;
        if (json_object_size(body) == 0) {
                kreq_error(r, 400, "invalid_argument", "an update names at least one of %s",
                           update_words(words, sizeof(words)));
                goto out;
        }
        json_object_foreach(body, key, v)
        {
                const kerf_field *f =
                    kerf_field_find(kerf_task_fields, kerf_task_fields_count, key);
                if (!f || !(f->objects & KERF_FIELD_TASK_UPDATE)) {
                        kreq_error(r, 400, "unknown_field",
                                   "%s: not updatable (an update takes %s)", key,
                                   update_words(words, sizeof(words)));
                        goto out;
                }
        }
        if (!(t = pending_task(r, id, "updated")))
                goto out;
        rc = kerfd_task_update_check(n, t, body, &nt, &code, msg, sizeof(msg));
        if (rc < 0) {
                kreq_error(r, rc == -EPERM ? 403 : rc == -ENOENT ? 404 : 400, code, "%s", msg);
                goto out;
        }
        /* the tenant's ceiling binds its tokens, as at submit; an admin is the operator */
        if (!r->admin && json_object_get(body, "priority") &&
            (rc = kerfd__tenant_priority_check(n, kerfd__tenant_find(n, t->rec.tenant),
                                               nt->req.priority, msg, sizeof(msg))) < 0) {
                kreq_error(r, 403, "forbidden", "%s", msg);
                goto out;
        }
        char *text = json_dumps(nt->req_json, JSON_COMPACT | JSON_SORT_KEYS);
        if (!text) {
                kreq_error(r, 500, "internal", "out of memory");
                goto out;
        }
        kerf_task_update u = {
            .set_priority = json_object_get(body, "priority") != NULL,
            .priority = nt->req.priority,
            .set_preemptible = json_object_get(body, "preemptible") != NULL,
            .preemptible = nt->req.preemptible,
            .set_max_runtime = json_object_get(body, "max_runtime_s") != NULL,
            .max_runtime_s = nt->req.max_runtime_s,
            .set_idle_timeout = json_object_get(body, "idle_timeout_s") != NULL,
            .idle_timeout_s = nt->req.idle_timeout_s,
        };
        if ((rc = kerf_sched_task_update(n->sched, id, &u, &why)) < 0) {
                kreq_error(r, 400, "invalid_argument", "%s",
                           rc == -EINVAL ? why.text : kerf_strerror(rc));
                free(text);
                goto out;
        }
        changes_text(t->req_json, body, changes, sizeof(changes));
        /* the new request replaces the old: its strings go with it */
        json_decref(t->req_json);
        t->req_json = nt->req_json;
        nt->req_json = NULL;
        t->req = nt->req;
        t->max_runtime_s = nt->max_runtime_s;
        t->idle_timeout_s = nt->idle_timeout_s;
        free(t->rec.request_json);
        t->rec.request_json = text;
        (void)kerfd__commit_task(n, t, false, r->actor, "task.update", "ok", changes);
        kreq_json(r, 200, kerfd_task_json(n, &t->rec, t));
        kerfd__kick(n);
out:
        kerfd_task_free(nt);
        json_decref(body);
}

void kerfd_api_task_hold(kreq *r)
{
        uint64_t id;
        if (api_task_id(r, &id))
                task_hold(r, id, true);
}

void kerfd_api_task_release(kreq *r)
{
        uint64_t id;
        if (api_task_id(r, &id))
                task_hold(r, id, false);
}

void kerfd_api_task_update(kreq *r)
{
        uint64_t id;
        if (api_task_id(r, &id))
                task_update(r, id);
}

/* ---- GPUs --------------------------------------------------------------------------------- */

unsigned kerfd__gpu_tasks(kerfd_node *n, unsigned gpu)
{
        static kerf_unit_info us[256];
        uint64_t seen[256];
        unsigned count = 0;
        size_t nu = kerf_sched_unit_list(n->sched, (int)gpu, us, sizeof(us) / sizeof(us[0]));
        for (size_t i = 0; i < nu && i < sizeof(us) / sizeof(us[0]); i++) {
                bool dup = false;
                if (!us[i].task)
                        continue;
                for (unsigned k = 0; k < count; k++)
                        dup |= seen[k] == us[i].task;
                if (!dup)
                        seen[count++] = us[i].task;
        }
        return count;
}

typedef struct drain_w {
        kerfd_node *n;
        const kerf_store_drain *d;
        bool on;
        const char *actor;
        char object[32];
} drain_w;

static int drain_write(kerf_store *s, void *ud)
{
        drain_w *w = ud;
        int r = w->on ? kerf_store_drain_set(s, w->d) : kerf_store_drain_clear(s, w->d->gpu_uuid);
        if (r < 0)
                return r;
        return kerfd__audit(w->n, w->actor, "", w->on ? "gpu.drain" : "gpu.resume", w->object, "ok",
                            w->d->reason, w->d->gpu_uuid);
}

int kerfd__gpu_drain(kerfd_node *n, unsigned gpu, bool on, const char *actor, const char *reason,
                     char *msg, size_t msglen)
{
        kerf_gpu_state st;
        kerf_store_drain d;
        drain_w w = {.n = n, .d = &d, .on = on, .actor = actor};
        int r;

        if (gpu >= n->fleet->n_gpus || kerf_sched_gpu_get(n->sched, gpu, &st) < 0) {
                snprintf(msg, msglen, "no GPU %u (this node has %zu)", gpu, n->fleet->n_gpus);
                return -ENOENT;
        }
        if (st.draining == on) {
                snprintf(msg, msglen, "GPU %u is %s", gpu,
                         on ? "already draining" : "not draining");
                return -KERF_ESTATE;
        }
        memset(&d, 0, sizeof(d));
        snprintf(d.gpu_uuid, sizeof(d.gpu_uuid), "%s", n->fleet->gpus[gpu].uuid);
        snprintf(d.actor, sizeof(d.actor), "%s", actor && *actor ? actor : "kerfd");
        snprintf(d.reason, sizeof(d.reason), "%s",
                 reason && *reason ? reason
                 : on              ? "drained"
                                   : "resumed");
        snprintf(w.object, sizeof(w.object), "gpu:%u", gpu);
        /* stored with its audit record first: a drain the store did not take did not happen */
        if ((r = kerf_store_tx(n->store, drain_write, &w)) < 0) {
                snprintf(msg, msglen, "the store cannot record the %s of GPU %u: %s",
                         on ? "drain" : "resume", gpu, kerf_strerror(r));
                return r;
        }
        (void)kerf_sched_gpu_drain(n->sched, gpu, on);
        kerfd__event(n, on ? "gpu_drain" : "gpu_resume", (int)gpu, 0, 0, 0, NULL,
                     "GPU %u %s by %s: %s", gpu, on ? "drained" : "resumed", d.actor, d.reason);
        log_info("GPU %u %s by %s: %s", gpu, on ? "drained" : "resumed", d.actor, d.reason);
        kerfd__kick(n);
        if (on)
                snprintf(msg, msglen,
                         "GPU %u is draining: no new work is placed on it; %u task(s) "
                         "still run on it",
                         gpu, kerfd__gpu_tasks(n, gpu));
        else
                snprintf(msg, msglen, "GPU %u takes new work again", gpu);
        return 0;
}

void kerfd__drain_restore(kerfd_node *n)
{
        kerf_store_drain *d = NULL;
        size_t nd = 0;
        if (kerf_store_drain_list(n->store, &d, &nd) < 0) {
                log_error("store: drained GPUs: %s", kerf_store_errmsg(n->store));
                return;
        }
        for (size_t i = 0; i < nd; i++) {
                size_t g = 0;
                while (g < n->fleet->n_gpus && strcmp(n->fleet->gpus[g].uuid, d[i].gpu_uuid))
                        g++;
                if (g == n->fleet->n_gpus) {
                        log_warn("recovery: drained GPU %s is not on this node any more",
                                 d[i].gpu_uuid);
                        continue;
                }
                (void)kerf_sched_gpu_drain(n->sched, (unsigned)g, true);
                log_info("recovery: GPU %zu (%s) stays drained (%s by %s) until resumed", g,
                         d[i].gpu_uuid, d[i].reason, d[i].actor);
        }
        free(d);
}

/* POST /v1/gpus/{index}/drain and /resume (ADMIN); a drain takes {"reason": "..."}. */
static void gpu_drain(kreq *r, bool on)
{
        const char *reason = NULL;
        json_t *body = NULL, *v;
        const char *key;
        char msg[512];
        uint64_t g;
        int rc;

        if (r->param_len[0] >= 16 || !api_u64(r->param[0], &g) || g >= KERF_MAX_NODE_GPUS) {
                kreq_error(r, 404, "not_found", "no GPU %s", r->param[0]);
                return;
        }
        if (r->len) {
                if (!(body = api_body(r)))
                        return;
                json_object_foreach(body, key, v)
                {
                        if (strcmp(key, "reason") != 0) {
                                kreq_error(r, 400, "unknown_field", "%s: unknown field (%s)", key,
                                           on ? "a drain takes reason" : "a resume has none");
                                goto out;
                        }
                        if (!json_is_string(v) || json_string_length(v) > KERFD_DRAIN_REASON_MAX) {
                                kreq_error(r, 400, "invalid_argument",
                                           "reason: a string of at most %d bytes",
                                           KERFD_DRAIN_REASON_MAX);
                                goto out;
                        }
                        reason = json_string_value(v);
                }
        }
        rc = kerfd__gpu_drain(r->node, (unsigned)g, on, r->actor, reason, msg, sizeof(msg));
        if (rc == -ENOENT)
                kreq_error(r, 404, "not_found", "%s", msg);
        else if (rc == -KERF_ESTATE)
                kreq_error(r, 409, "conflict", "%s", msg);
        else if (rc < 0)
                kreq_error(r, 507, "insufficient_storage", "%s", msg);
        else
                kreq_json(r, 200,
                          json_pack("{s:i, s:s, s:b, s:i, s:s}", "gpu", (int)g, "uuid",
                                    r->node->fleet->gpus[g].uuid, "draining", on, "tasks",
                                    (int)kerfd__gpu_tasks(r->node, (unsigned)g), "message", msg));
out:
        json_decref(body);
}

void kerfd_api_gpu_drain(kreq *r)
{
        gpu_drain(r, true);
}

void kerfd_api_gpu_resume(kreq *r)
{
        gpu_drain(r, false);
}
