/* SPDX-License-Identifier: Apache-2.0 */
/* task.c - task requests: strict JSON validation (docs/API.md), stored form, the task object */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include "kerf/errno.h"
#include "kerf/fields.h"
#include "kerf/slice_abi.h"

static void free_strv(char **v)
{
        if (!v)
                return;
        for (char **p = v; *p; p++)
                free(*p);
        free(v);
}

dtask *kerfd_task_free(dtask *t)
{
        if (!t)
                return NULL;
        kerf_store_task_fini(&t->rec);
        kerf_slice_region_unmap(t->region);
        free(t->region_path);
        free(t->attach_cg);
        kerfd__members_free(t);
        free(t->units);
        free(t->stop_text);
        kerf_fence_free(t->fence); /* the cgroup stays: a restarted kerfd re-opens it */
        if (t->req_json)
                json_decref(t->req_json);
        free_strv(t->argv);
        free_strv(t->env);
        free(t);
        return NULL;
}

int kerfd__units_reserve(dtask *t, unsigned count)
{
        dunit *u;

        if (count > KERF_MAX_TASK_GPUS)
                count = KERF_MAX_TASK_GPUS;
        if (count <= t->cap_units)
                return 0;
        u = realloc(t->units, count * sizeof(*u));
        if (!u)
                return -ENOMEM;
        t->units = u;
        t->cap_units = count;
        return 0;
}

#define BAD(code, ...)                                                                             \
        do {                                                                                       \
                *ret_code = (code);                                                                \
                snprintf(msg, msglen, __VA_ARGS__);                                                \
                r = -EINVAL;                                                                       \
                goto out;                                                                          \
        } while (0)

static bool get_int(json_t *v, long long lo, long long hi, long long *ret)
{
        if (!json_is_integer(v))
                return false;
        long long x = json_integer_value(v);
        if (x < lo || x > hi)
                return false;
        *ret = x;
        return true;
}

/* A request stored before the one size rule may hold a string kerfd then read otherwise: a
 * bare byte count ("17179869184") or a decimal-looking unit read as binary ("16GB" = 16GiB).
 * Recovery reads it as it was accepted, through the one parser; a new request never gets here. */
static int legacy_size(const char *s, uint64_t *ret)
{
        char buf[64];
        size_t n = strlen(s);

        if (n == 0 || n + 2 >= sizeof(buf))
                return -EINVAL;
        if (strspn(s, "0123456789") == n)
                snprintf(buf, sizeof(buf), "%sB", s);
        else if (n >= 2 && (s[n - 1] == 'B' || s[n - 1] == 'b') && strchr("KMGTPkmgtp", s[n - 2]))
                snprintf(buf, sizeof(buf), "%.*siB", (int)(n - 1), s);
        else
                return -EINVAL;
        return kerf_parse_size(buf, ret, NULL, 0);
}

/* argv (or env) bytes of one task, all strings with their NULs: below ARG_MAX (2 MiB) */
#define KERFD_MAX_ARGS_BYTES (512u * 1024u)

/* The descriptor of request field `name` (kerf_task_fields: every name build() reads is one). */
static const kerf_field *field_of(const char *name)
{
        return kerf_field_find(kerf_task_fields, kerf_task_fields_count, name);
}

/* Reads field `name` of `o` through its descriptor's one check. Returns 1 with *ret filled,
 * 0 when the field is absent, -EINVAL with msg set when it does not fit. `stored`: a
 * recovered request is read as it was accepted: a size without the bound it may not have had
 * then and in the forms kerfd once took (legacy_size). */
static int field_get(json_t *o, const char *name, bool stored, kerf_field_value *ret, char *msg,
                     size_t msglen)
{
        const kerf_field *f = field_of(name);
        json_t *v = json_object_get(o, name);
        kerf_field_value sv = {0};

        if (!v)
                return 0;
        if (stored && f->type == KERF_FIELD_SIZE) {
                if (json_is_integer(v) && json_integer_value(v) >= 0)
                        sv.u = (uint64_t)json_integer_value(v);
                else if (!json_is_string(v) ||
                         (kerf_parse_size(json_string_value(v), &sv.u, NULL, 0) < 0 &&
                          legacy_size(json_string_value(v), &sv.u) < 0))
                        return kerf_field_check(f, v, ret, msg, msglen) < 0 ? -EINVAL : 1;
                *ret = sv;
                return 1;
        }
        return kerf_field_check(f, v, ret, msg, msglen) < 0 ? -EINVAL : 1;
}

/* Every field of a request, checked by its descriptor: has[i] and val[i] for
 * kerf_task_fields[i]. */
typedef struct fields_got {
        bool has[64];
        kerf_field_value val[64];
} fields_got;

/* Checks every field of `o` that kerf_task_fields describes (type and bounds, one message
 * format); 0, or -EINVAL with msg set. */
static int check_fields(json_t *o, bool stored, fields_got *g, char *msg, size_t msglen)
{
        if (kerf_task_fields_count > sizeof(g->has) / sizeof(g->has[0])) {
                snprintf(msg, msglen, "kerfd: fields_got holds fewer than the request's fields");
                return -E2BIG;
        }
        for (size_t i = 0; i < kerf_task_fields_count; i++) {
                int r = field_get(o, kerf_task_fields[i].name, stored, &g->val[i], msg, msglen);
                if (r < 0)
                        return r;
                g->has[i] = r > 0;
        }
        return 0;
}

/* The checked value of field `name`, or NULL when the request has none. */
static const kerf_field_value *got(const fields_got *g, const char *name)
{
        const kerf_field *f = field_of(name);
        size_t i = (size_t)(f - kerf_task_fields);
        return g->has[i] ? &g->val[i] : NULL;
}

/* Fills t->req from t->req_json (already checked for unknown fields). `stored`: a recovered
 * record, whose stored uid/gid are the truth (the identity rules are checked again before any
 * start, decide.c), so they do not refuse it here. */
static int build(kerfd_node *n, dtask *t, bool attach, bool admin, bool stored, const char *tenant,
                 const char **ret_code, char *msg, size_t msglen)
{
        json_t *o = t->req_json, *v;
        kerf_request *q = &t->req;
        const kerf_field_value *g;
        fields_got fg;
        long long x;
        int r = 0;

        kerf_request_init(q);
        q->preemptible = false;
        if ((r = check_fields(o, stored, &fg, msg, msglen)) < 0) {
                *ret_code = "invalid_argument";
                goto out;
        }
        if ((g = got(&fg, "name")))
                q->name = g->s;
        g = got(&fg, "tenant");
        if (g && !admin && strcmp(g->s, tenant) != 0) {
                *ret_code = "forbidden";
                snprintf(msg, msglen, "tenant: only an admin may submit for another tenant");
                r = -EPERM;
                goto out;
        }
        if (!g) {
                if (!tenant || !*tenant)
                        BAD("invalid_argument",
                            "tenant: required for an admin without a token (no default tenant)");
                json_object_set_new(o, "tenant", json_string(tenant));
        }
        q->tenant = json_string_value(json_object_get(o, "tenant"));
        if (!kerfd__tenant_find(n, q->tenant)) {
                *ret_code = "not_found";
                snprintf(msg, msglen, "tenant: no tenant \"%s\"", q->tenant);
                r = -ENOENT;
                goto out;
        }
        if ((g = got(&fg, "queue")))
                q->queue = g->s;
        if ((g = got(&fg, "workload")))
                q->workload = (kerf_workload)g->i;
        if ((g = got(&fg, "tier")))
                q->tier = (kerf_tier)g->i;
        if ((g = got(&fg, "route")))
                q->route = (int)g->i;
        if ((g = got(&fg, "mig_profile")))
                q->mig_profile = g->s;
        if ((g = got(&fg, "gpus")))
                q->gpus = (unsigned)g->i;
        if ((g = got(&fg, "memory")))
                q->mem_bytes = g->u;
        if ((g = got(&fg, "compute")))
                q->compute_pct = (unsigned)g->i;
        if ((g = got(&fg, "compute_limit"))) {
                if ((unsigned)g->i < q->compute_pct)
                        BAD("invalid_argument", "compute_limit: an integer compute..%d (%u..%d)",
                            KERF_PCT_MAX, q->compute_pct, KERF_PCT_MAX);
                q->compute_limit_pct = (unsigned)g->i;
        }
        if ((g = got(&fg, "cpu_milli")))
                q->cpu_milli = (uint64_t)g->i;
        if ((g = got(&fg, "host_memory")))
                q->host_mem_bytes = g->u;
        if ((v = json_object_get(o, "gpu_models"))) {
                size_t i;
                json_t *m;
                json_array_foreach(v, i, m)
                {
                        const kerf_gpu_model *gm =
                            json_is_string(m) ? kerf_gpu_model_find(json_string_value(m)) : NULL;
                        if (!gm)
                                BAD("invalid_argument", "gpu_models[%zu]: unknown GPU model", i);
                        q->model_mask |= 1ULL << kerf_gpu_model_index(gm);
                }
        }
        /* the GPUs a launcher chose: "gpu_uuid" (one) or "gpu_uuids" (a list, one per GPU) */
        json_t *pins = json_object_get(o, "gpu_uuids"), *one = json_object_get(o, "gpu_uuid");
        if (pins && one)
                BAD("invalid_argument", "gpu_uuid and gpu_uuids: give one of them");
        const char *mig = json_string_value(one);
        if (mig && !strncmp(mig, "MIG-", 4)) { /* one MIG instance: that instance or none */
                unsigned gpu = 0;
                q->mig_unit_pin = kerfd__mig_by_uuid(n, mig, &gpu);
                if (!q->mig_unit_pin)
                        BAD("invalid_argument", "gpu_uuid: %s is not a MIG instance of this node",
                            mig);
                q->gpu_pins[q->n_gpu_pins++] = gpu;
                one = NULL;
        }
        for (size_t k = 0, np = pins ? json_array_size(pins) : one ? 1 : 0; k < np; k++) {
                size_t i = 0;
                const char *u = json_string_value(pins ? json_array_get(pins, k) : one);
                while (u && i < n->fleet->n_gpus && strcmp(n->fleet->gpus[i].uuid, u) != 0)
                        i++;
                if (!u || i == n->fleet->n_gpus)
                        BAD("invalid_argument", "%s: not the UUID of a GPU of this node",
                            pins ? "gpu_uuids" : "gpu_uuid");
                for (unsigned j = 0; j < q->n_gpu_pins; j++)
                        if (q->gpu_pins[j] == i)
                                BAD("invalid_argument", "gpu_uuids: %s named twice", u);
                q->gpu_pins[q->n_gpu_pins++] = (unsigned)i;
        }
        if ((g = got(&fg, "priority")))
                q->priority = (int)g->i;
        if ((g = got(&fg, "preemptible")))
                q->preemptible = g->b;
        if (n->cfg.policy.force_preemptible[q->workload])
                q->preemptible = true;
        if ((g = got(&fg, "max_runtime_s")))
                t->max_runtime_s = q->max_runtime_s = (uint64_t)g->i;
        if ((g = got(&fg, "idle_timeout_s")))
                t->idle_timeout_s = q->idle_timeout_s = (uint64_t)g->i;
        v = json_object_get(o, "command");
        if (attach) {
                /* which fields an attach takes is kerf_task_fields' (kerfd_task_parse); a
                 * stored attach record never has a command */
                if (!(g = got(&fg, "pid")))
                        BAD("invalid_argument", "pid: required, a process id");
                t->rec.pid = g->i;
                /* the floor is kerfd's limits.min_lease_s, the ceiling the descriptor's */
                if (!(g = got(&fg, "lease_s")) || g->i < (int64_t)n->cfg.min_lease_s)
                        BAD("invalid_argument", "lease_s: required, an integer %u..%lld",
                            n->cfg.min_lease_s, (long long)field_of("lease_s")->max);
                if ((v = json_object_get(o, "external"))) {
                        int e = kerfd__external_check(v, msg, msglen);
                        if (e < 0) {
                                *ret_code = e == -ENOENT ? "unknown_field" : "invalid_argument";
                                r = -EINVAL;
                                goto out;
                        }
                }
        } else {
                size_t i, total = 0;
                json_t *a;
                if (!v)
                        BAD("invalid_argument", "command: required (an argv list)");
                t->argv = calloc(json_array_size(v) + 1, sizeof(char *));
                if (!t->argv)
                        return -ENOMEM;
                json_array_foreach(v, i, a)
                {
                        if (!json_is_string(a) || (i == 0 && !*json_string_value(a)))
                                BAD("invalid_argument", "command[%zu]: a string", i);
                        total += json_string_length(a) + 1;
                        if (total > KERFD_MAX_ARGS_BYTES)
                                BAD("invalid_argument", "command: more than %u bytes in all",
                                    KERFD_MAX_ARGS_BYTES);
                        if (!(t->argv[i] = strdup(json_string_value(a))))
                                return -ENOMEM;
                }
        }
        if ((v = json_object_get(o, "env"))) {
                const char *k;
                json_t *ev;
                size_t i = 0;
                t->env = calloc(json_object_size(v) + 1, sizeof(char *));
                if (!t->env)
                        return -ENOMEM;
                size_t total = 0;
                json_object_foreach(v, k, ev)
                {
                        if (!json_is_string(ev) || !*k || strchr(k, '=') || strlen(k) > 255)
                                BAD("invalid_argument",
                                    "env.%.64s: a string value and a name of 1..255 characters "
                                    "without '='",
                                    k);
                        total += strlen(k) + json_string_length(ev) + 2;
                        if (total > KERFD_MAX_ARGS_BYTES)
                                BAD("invalid_argument", "env: more than %u bytes in all",
                                    KERFD_MAX_ARGS_BYTES);
                        if (asprintf(&t->env[i++], "%s=%s", k, json_string_value(ev)) < 0)
                                return -ENOMEM;
                }
        }
        if ((v = json_object_get(o, "run_as"))) {
                json_t *u = json_object_get(v, "uid"), *gid = json_object_get(v, "gid");
                const char *k;
                json_t *tmp;
                if (!admin) {
                        *ret_code = "forbidden";
                        snprintf(msg, msglen, "run_as: admin only");
                        r = -EPERM;
                        goto out;
                }
                if (!get_int(u, 0, KERF_MAX_ID, &x))
                        BAD("invalid_argument", "run_as: {\"uid\": N, \"gid\": N}");
                t->rec.uid = x;
                t->rec.gid = x;
                if (gid && !get_int(gid, 0, KERF_MAX_ID, &x))
                        BAD("invalid_argument", "run_as.gid: an integer");
                if (gid)
                        t->rec.gid = x;
                json_object_foreach(v, k, tmp)
                {
                        if (strcmp(k, "uid") && strcmp(k, "gid"))
                                BAD("unknown_field", "run_as.%s: unknown field", k);
                }
                /* root or an admin uid only for a tenant the config file lets (allow_root) */
                char why[160];
                if (!stored && !kerfd__tenant_find(n, q->tenant)->cfg.allow_root &&
                    (kerfd_uid_privileged(t->rec.uid, why, sizeof(why))[0] || t->rec.gid == 0)) {
                        *ret_code = "forbidden";
                        snprintf(msg, msglen,
                                 "run_as: %s; tenant %s may not run tasks as root or an admin "
                                 "(allow_root in kerfd's config file)",
                                 why[0] ? why : "gid 0 is root's group", q->tenant);
                        r = -EPERM;
                        goto out;
                }
        } else {
                long long uid = -1, gid = -1;
                if (kerfd__task_identity(n, kerfd__tenant_find(n, q->tenant), &uid, &gid, msg,
                                         msglen) < 0 &&
                    !stored) {
                        *ret_code = "forbidden";
                        r = -EPERM;
                        goto out;
                }
                t->rec.uid = uid;
                t->rec.gid = gid;
        }
out:
        return r < 0 ? r : 0;
}

int kerfd_task_parse(kerfd_node *n, json_t *body, bool attach, bool admin, const char *tenant,
                     dtask **ret, const char **ret_code, char *msg, size_t msglen)
{
        const char *k;
        json_t *v;
        dtask *t;
        int r;

        json_object_foreach(body, k, v)
        {
                if (!kerf_field_lookup(kerf_task_fields, kerf_task_fields_count, k,
                                       attach ? KERF_FIELD_ATTACH : KERF_FIELD_SUBMIT, msg,
                                       msglen)) {
                        *ret_code = "unknown_field";
                        return -EINVAL;
                }
        }
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        kerf_store_task_init(&t->rec);
        t->req_json = json_deep_copy(body);
        if (!t->req_json) {
                kerfd_task_free(t);
                return -ENOMEM;
        }
        r = build(n, t, attach, admin, false, tenant, ret_code, msg, msglen);
        if (r < 0) {
                kerfd_task_free(t);
                return r;
        }
        snprintf(t->rec.tenant, sizeof(t->rec.tenant), "%s", t->req.tenant);
        snprintf(t->rec.queue, sizeof(t->rec.queue), "%s",
                 t->req.queue && *t->req.queue ? t->req.queue : "default");
        snprintf(t->rec.name, sizeof(t->rec.name), "%s", t->req.name ? t->req.name : "");
        kerfd__task_set_state(t, KERF_TASK_PENDING);
        t->rec.request_json = json_dumps(t->req_json, JSON_COMPACT | JSON_SORT_KEYS);
        if ((v = json_object_get(t->req_json, "command")))
                t->rec.argv_json = json_dumps(v, JSON_COMPACT);
        if ((v = json_object_get(t->req_json, "env")))
                t->rec.env_json = json_dumps(v, JSON_COMPACT);
        if ((v = json_object_get(t->req_json, "cwd")))
                t->rec.cwd = strdup(json_string_value(v));
        if (!t->rec.request_json) {
                kerfd_task_free(t);
                return -ENOMEM;
        }
        *ret = t;
        return 0;
}

int kerfd_task_update_check(kerfd_node *n, const dtask *t, json_t *changes, dtask **ret,
                            const char **ret_code, char *msg, size_t msglen)
{
        dtask *nt = calloc(1, sizeof(*nt));
        int r;

        if (!nt)
                return -ENOMEM;
        kerf_store_task_init(&nt->rec);
        nt->req_json = json_deep_copy(t->req_json);
        if (!nt->req_json || json_object_update(nt->req_json, changes) < 0) {
                kerfd_task_free(nt);
                return -ENOMEM;
        }
        /* as a stored request: the identity it was accepted with stays the truth */
        r = build(n, nt, t->argv == NULL, true, true, t->rec.tenant, ret_code, msg, msglen);
        if (r < 0) {
                kerfd_task_free(nt);
                return r;
        }
        *ret = nt;
        return 0;
}

/* Rebuilds a live task from its stored record (recovery). The stored request was validated
 * and normalised when it was accepted, so the parsed JSON is adopted as it is: no unknown-field
 * scan, no deep copy and no re-serialisation; `build` still fills the request, argv and env
 * (and refuses a record that has become invalid, e.g. its tenant is gone). */
int kerfd_task_from_store(kerfd_node *n, const kerf_store_task *rec, dtask **ret, char *msg,
                          size_t msglen)
{
        json_t *body = json_loads(rec->request_json ? rec->request_json : "", 0, NULL);
        const char *code = NULL;
        dtask *t;
        int r;

        if (!json_is_object(body)) {
                snprintf(msg, msglen, "stored request is not a JSON object");
                json_decref(body);
                return -KERF_ECORRUPT;
        }
        t = calloc(1, sizeof(*t));
        if (!t) {
                json_decref(body);
                return -ENOMEM;
        }
        kerf_store_task_init(&t->rec);
        t->req_json = body;
        r = build(n, t, json_object_get(body, "pid") != NULL, true, true, rec->tenant, &code, msg,
                  msglen);
        if (r < 0) {
                kerfd_task_free(t);
                return r;
        }
        /* The stored record is the truth for every mutable field. Its request, argv and env
         * JSON texts are not kept: they are fixed at insert, which a recovered task never
         * repeats (kerf_store_task_update ignores them), and the live task answers from
         * t->req_json, argv and env. */
        kerf_store_task_fini(&t->rec);
        t->rec = *rec;
        t->rec.request_json = t->rec.argv_json = t->rec.env_json = NULL;
        t->rec.cwd = rec->cwd ? strdup(rec->cwd) : NULL;
        t->rec.log_stdout = rec->log_stdout ? strdup(rec->log_stdout) : NULL;
        t->rec.log_stderr = rec->log_stderr ? strdup(rec->log_stderr) : NULL;
        if ((rec->cwd && !t->rec.cwd) || (rec->log_stdout && !t->rec.log_stdout) ||
            (rec->log_stderr && !t->rec.log_stderr)) {
                snprintf(msg, msglen, "out of memory");
                kerfd_task_free(t);
                return -ENOMEM;
        }
        /* the word becomes the state kerfd keeps; a word kerfd does not know is a damaged
         * record, never guessed at */
        r = kerf_task_state_parse(rec->state);
        if (r < 0 || kerf_task_state_ended(r)) {
                snprintf(msg, msglen,
                         "stored state '%s' is not one of an unfinished task (%s, %s, %s)",
                         rec->state, kerf_task_state_name(KERF_TASK_PENDING),
                         kerf_task_state_name(KERF_TASK_STARTING),
                         kerf_task_state_name(KERF_TASK_RUNNING));
                kerfd_task_free(t);
                return -KERF_ECORRUPT;
        }
        t->state = r;
        *ret = t;
        return 0;
}

json_t *kerfd_unit_json(const dunit *u, const char *state, uint64_t task)
{
        json_t *j =
            json_pack("{s:I, s:s, s:i, s:s, s:I, s:I, s:I}", "id", (json_int_t)u->id, "kind",
                      kerf_unit_kind_name(u->kind), "gpu", (int)u->gpu, "gpu_uuid", u->gpu_uuid,
                      "memory", (json_int_t)u->mem, "compute", (json_int_t)u->compute,
                      "compute_limit", (json_int_t)u->compute_limit);
        if (!j)
                return NULL;
        if (state)
                json_object_set_new(j, "state", json_string(state));
        if (task || state)
                json_object_set_new(j, "task", task ? json_integer((json_int_t)task) : json_null());
        if (u->kind == KERF_UNIT_MIG) {
                json_object_set_new(j, "mig_uuid", json_string(u->mig_uuid));
                json_object_set_new(j, "mig_profile",
                                    json_string(u->mig_profile ? u->mig_profile : "?"));
                json_object_set_new(j, "mig_gi", json_integer(u->mig_gi));
                json_object_set_new(j, "mig_ci", json_integer(u->mig_ci));
                json_object_set_new(j, "mig_start", json_integer(u->mig_start));
        } else {
                json_object_set_new(j, "mig_uuid", json_null());
                json_object_set_new(j, "mig_profile", json_null());
        }
        return j;
}

static json_t *int_or_null(int64_t v, bool null)
{
        return null ? json_null() : json_integer((json_int_t)v);
}

/* Why the task is where it is. A pending task waits for what the scheduler found on its last
 * try (quota, no fit, ...: the words explain gives), not for the reason stored with its last
 * state change ("not_tried" at submit, or its preemption, which the scheduler keeps). */
static json_t *reason_json(kerfd_node *n, const kerf_store_task *rec, const dtask *t)
{
        kerf_task_info ti;
        if (t && t->state == KERF_TASK_PENDING &&
            kerf_sched_task_get(n->sched, rec->id, &ti) == 0 && ti.reason.code != KERF_WHY_NONE)
                return json_pack(
                    "{s:s, s:s, s:I}", "code", kerf_why_name(ti.reason.code), "text",
                    ti.reason.text, "other_task",
                    (json_int_t)(ti.reason.other_task ? ti.reason.other_task : rec->reason_task));
        return json_pack("{s:s, s:s, s:I}", "code", rec->reason_code[0] ? rec->reason_code : "none",
                         "text", rec->reason_text, "other_task", (json_int_t)rec->reason_task);
}

json_t *kerfd_task_json(kerfd_node *n, const kerf_store_task *rec, const dtask *t)
{
        json_t *req = t ? json_incref(t->req_json) : json_loads(rec->request_json, 0, NULL);
        json_t *j, *units = json_array(), *v;
        bool started = rec->started_ms != 0;
        int64_t wait =
            started ? rec->started_ms - rec->submitted_ms
                    : (rec->ended_ms ? rec->ended_ms : (int64_t)kerfd_now_ms()) - rec->submitted_ms;
        const char *workload = "batch", *tier = "queueable";
        json_int_t prio = 0;
        bool preemptible = false;

        if (!req)
                req = json_object();
        if ((v = json_object_get(req, "workload")) && json_is_string(v))
                workload = json_string_value(v);
        if ((v = json_object_get(req, "tier")) && json_is_string(v))
                tier = json_string_value(v);
        if ((v = json_object_get(req, "priority")) && json_is_integer(v))
                prio = json_integer_value(v);
        if ((v = json_object_get(req, "preemptible")))
                preemptible = json_is_true(v);
        if (t)
                preemptible = t->req.preemptible;
        else {
                int w = kerf_workload_parse(workload);
                if (w >= 0 && n->cfg.policy.force_preemptible[w])
                        preemptible = true;
        }
        for (unsigned i = 0; t && i < t->n_units; i++)
                json_array_append_new(units, kerfd_unit_json(&t->units[i], NULL, 0));
        j = json_object();
        json_object_set_new(j, "id", json_integer((json_int_t)rec->id));
        json_object_set_new(j, "name", json_string(rec->name));
        json_object_set_new(j, "tenant", json_string(rec->tenant));
        json_object_set_new(j, "queue", json_string(rec->queue));
        json_object_set_new(j, "workload", json_string(workload));
        json_object_set_new(j, "tier", json_string(tier));
        json_object_set_new(j, "priority", json_integer(prio));
        json_object_set_new(j, "preemptible", json_boolean(preemptible));
        /* a live task held by kerf suspend (or frozen by a preemption) shows "suspended";
         * the store keeps running/pending */
        json_object_set_new(j, "state",
                            json_string(t && t->suspended ? KERF_TASK_SUSPENDED_WORD : rec->state));
        json_object_set_new(j, "end_reason",
                            rec->end_reason[0] ? json_string(rec->end_reason) : json_null());
        json_object_set_new(j, "reason", reason_json(n, rec, t));
        json_object_set_new(j, "held", rec->held[0] ? json_string(rec->held) : json_null());
        json_object_set_new(j, "route", rec->route[0] ? json_string(rec->route) : json_null());
        json_object_set_new(j, "units", units);
        json_object_set_new(j, "request", req);
        json_object_set_new(j, "command",
                            json_incref(json_object_get(req, "command")
                                            ? json_object_get(req, "command")
                                            : json_null()));
        json_object_set_new(j, "pid", int_or_null(rec->pid, rec->pid <= 0));
        json_object_set_new(j, "exit_code", int_or_null(rec->exit_code, rec->exit_code < 0));
        json_object_set_new(j, "signal", int_or_null(rec->signal, rec->signal <= 0));
        json_object_set_new(j, "submitted_ms", json_integer(rec->submitted_ms));
        json_object_set_new(j, "started_ms", json_integer(rec->started_ms));
        json_object_set_new(j, "ended_ms", json_integer(rec->ended_ms));
        json_object_set_new(j, "queue_wait_ms", json_integer(wait > 0 ? wait : 0));
        json_object_set_new(j, "preemptions", json_integer(rec->preemptions));
        json_object_set_new(j, "restarts", json_integer(rec->restarts));
        json_object_set_new(
            j, "log",
            json_pack("{s:s?, s:s?}", "stdout", rec->log_stdout, "stderr", rec->log_stderr));
        if (rec->lease_expiry_ms)
                json_object_set_new(j, "lease_expiry_ms", json_integer(rec->lease_expiry_ms));
        if (t && t->region_path)
                json_object_set_new(j, "slice_region", json_string(t->region_path));
        if (t && kerfd__enforcement(t)) {
                json_t *u = kerfd__usage_json(t);
                json_object_set_new(j, "enforcement", json_string(kerfd__enforcement(t)));
                json_object_set_new(j, "suspended", json_boolean(t->suspended));
                if (t->suspended)
                        json_object_set_new(
                            j, "suspended_by",
                            json_string(t->preempt_frozen ? "preemption" : "request"));
                json_object_set_new(j, "shim_bypass", json_boolean(t->bypass_seen));
                json_object_set_new(j, "usage", u ? u : json_null());
        }
        /* the device's view of its processes (poll_gpus), beside the shim's usage above */
        unsigned sm;
        int64_t sm_ms;
        if (t && kerfd__task_dev_sm(t, &sm, &sm_ms))
                json_object_set_new(j, "device_util",
                                    json_pack("{s:i, s:I, s:s}", "sm_pct", (int)sm, "sampled_ms",
                                              (json_int_t)sm_ms, "source", n->backend_name));
        else
                json_object_set_new(j, "device_util", json_null());
        if (t && !t->argv) {
                json_t *env = kerfd__attach_env(n, t);
                json_object_set_new(j, "attach_env", env ? env : json_null());
                if (t->rec.pid > 0)
                        json_object_set_new(j, "pids", kerfd__task_pids_json(t));
                char dev[200];
                if (kerfd__cdi_device(n, t, dev, sizeof(dev)))
                        json_object_set_new(j, "cdi_device", json_string(dev));
        }
        return j;
}
