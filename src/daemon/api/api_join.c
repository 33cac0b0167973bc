/* SPDX-License-Identifier: Apache-2.0 */
/* api_join.c - POST /v1/tasks/{id}/join: another process of the caller joins a running
 * attached task (its unit, its fence, its attach_env); docs/API.md */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "kerf/errno.h"
#include "kerf/fields.h"

/* The body {"pid": N}: the pid field of /v1/attach (its bounds), nothing else. False with a
 * 422 (or a 400 for what is not a JSON object) queued. */
static bool join_body(kreq *r, pid_t *ret)
{
        const kerf_field *f = kerf_field_find(kerf_task_fields, kerf_task_fields_count, "pid");
        kerf_field_value v;
        json_t *body = api_body(r), *val;
        const char *key;
        char msg[256], what[128];

        if (!body)
                return false;
        json_object_foreach(body, key, val)
        {
                if (strcmp(key, "pid") != 0) {
                        kreq_error(r, 422, "unknown_field",
                                   "%.64s: unknown field (a join takes only \"pid\")", key);
                        json_decref(body);
                        return false;
                }
        }
        if (!(val = json_object_get(body, "pid"))) {
                kreq_error(r, 422, "invalid_argument", "pid: required, %s",
                           kerf_field_describe(f, what, sizeof(what)));
                json_decref(body);
                return false;
        }
        if (kerf_field_check(f, val, &v, msg, sizeof(msg)) < 0) {
                kreq_error(r, 422, "invalid_argument", "%s", msg);
                json_decref(body);
                return false;
        }
        json_decref(body);
        *ret = (pid_t)v.i;
        return true;
}

static void task_join(kreq *r, uint64_t id)
{
        kerfd_node *n = r->node;
        kerf_store_task rec;
        char msg[512];
        dtask *t;
        pid_t pid;
        int k, rc;

        if (!join_body(r, &pid))
                return;
        /* the caller may act on the task as on its lease or detach: admin, or its tenant */
        if ((k = api_task_visible(r, id, &rec, &t)) < 0)
                return;
        if (!t || t->argv || t->state != KERF_TASK_RUNNING || t->stopping || !t->n_units) {
                kreq_error(r, 409, "conflict", "task %llu is not a running attached task",
                           (unsigned long long)id);
                if (k == 1)
                        kerf_store_task_fini(&rec);
                return;
        }
        /* whose process: the rules of /v1/attach, for the task's tenant */
        if ((rc = kerfd__attach_check(n, pid, r->has_cred, r->uid, t->rec.tenant, msg,
                                      sizeof(msg))) < 0) {
                api_attach_refused(r, rc, msg);
                return;
        }
        if ((rc = kerfd__task_join(n, t, pid, r->actor, msg, sizeof(msg))) < 0) {
                if (rc == -EBUSY || rc == -EMLINK)
                        kreq_error(r, 409, "conflict", "%s", msg);
                else if (rc == -ESRCH)
                        kreq_error(r, 400, "invalid_argument", "%s", msg);
                else if (!kerfd__store_refuse(r)) /* 507 when the store cannot write */
                        kreq_error(r, 500, "internal", "%s: %s", msg, kerf_strerror(rc));
                return;
        }
        json_t *j = kerfd_task_json(n, &t->rec, t);
        kerfd__records_mark(n, id, j);
        kreq_json(r, 200, j);
}

void kerfd_api_task_join(kreq *r)
{
        uint64_t id;

        if (api_task_id(r, &id))
                task_join(r, id);
}
