/* SPDX-License-Identifier: Apache-2.0 */
/* task.c - task requests: strict JSON validation (docs/API.md), stored form, the task object */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kerf/slice_abi.h"
#include "kerf/errno.h"

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

/* A size in the API (docs/UNITS.md): an integer is bytes, a string needs a unit ("16GiB").
 * At most `max` bytes. `stored`: a recovered request, read as it was accepted (legacy_size, no
 * bound it did not have then). On failure says why in why[0..len). */
static bool get_size(json_t *v, bool stored, uint64_t max, uint64_t *ret, char *why, size_t len)
{
        uint64_t b;

        if (stored)
                max = UINT64_MAX;
        if (json_is_integer(v) && json_integer_value(v) >= 0) {
                b = (uint64_t)json_integer_value(v);
        } else if (json_is_string(v)) {
                if (kerf_parse_size(json_string_value(v), &b, why, len) < 0 &&
                    (!stored || legacy_size(json_string_value(v), &b) < 0))
                        return false;
        } else {
                snprintf(why, len, "bytes (an integer) or a string with a unit such as \"16GiB\"");
                return false;
        }
        if (b > max) {
                char m[KERF_UNITS_BUF];
                snprintf(why, len, "at most %s", kerf_format_size(max, m, sizeof(m)));
                return false;
        }
        *ret = b;
        return true;
}

static bool name_ok(const char *s, bool empty_ok)
{
        return (empty_ok && !*s) || kerf_name_ok(s);
}

/* argv (or env) bytes of one task, all strings with their NULs: below ARG_MAX (2 MiB) */
#define KERFD_MAX_ARGS_BYTES (512u * 1024u)

static const char *const submit_fields[] = {
    "name",        "tenant",     "queue",     "workload",    "tier",          "route",
    "mig_profile", "gpus",       "memory",    "compute",     "compute_limit", "cpu_milli",
    "host_memory", "gpu_models", "priority",  "preemptible", "max_runtime_s", "idle_timeout_s",
    "command",     "env",        "cwd",       "run_as",      "pid",           "lease_s",
    "external",    "gpu_uuid",   "gpu_uuids", NULL};

/* Fills t->req from t->req_json (already checked for unknown fields). `stored`: a recovered
 * record, whose stored uid/gid are the truth (the identity rules are checked again before any
 * start, decide.c), so they do not refuse it here. */
static int build(kerfd_node *n, dtask *t, bool attach, bool admin, bool stored, const char *tenant,
                 const char **ret_code, char *msg, size_t msglen)
{
        json_t *o = t->req_json, *v;
        kerf_request *q = &t->req;
        char bad[256];
        long long x;
        int r = 0;

        kerf_request_init(q);
        q->preemptible = false;
        if ((v = json_object_get(o, "name"))) {
                if (!json_is_string(v) || !name_ok(json_string_value(v), true))
                        BAD("invalid_argument", "name: " KERF_NAME_RULE " (or \"\")");
                q->name = json_string_value(v);
        }
        v = json_object_get(o, "tenant");
        if (v && (!json_is_string(v) || !name_ok(json_string_value(v), false)))
                BAD("invalid_argument", "tenant: a tenant name, " KERF_NAME_RULE);
        if (v && !admin && strcmp(json_string_value(v), tenant) != 0) {
                *ret_code = "forbidden";
                snprintf(msg, msglen, "tenant: only an admin may submit for another tenant");
                r = -EPERM;
                goto out;
        }
        if (!v) {
                if (!tenant || !*tenant)
                        BAD("invalid_argument",
                            "tenant: required for an admin without a token (no default tenant)");
                json_object_set_new(o, "tenant", json_string(tenant));
                v = json_object_get(o, "tenant");
        }
        q->tenant = json_string_value(v);
        if (!kerfd__tenant_find(n, q->tenant)) {
                *ret_code = "not_found";
                snprintf(msg, msglen, "tenant: no tenant \"%s\"", q->tenant);
                r = -ENOENT;
                goto out;
        }
        if ((v = json_object_get(o, "queue"))) {
                if (!json_is_string(v) || !name_ok(json_string_value(v), false))
                        BAD("invalid_argument", "queue: " KERF_NAME_RULE);
                q->queue = json_string_value(v);
        }
        if ((v = json_object_get(o, "workload"))) {
                int w = json_is_string(v) ? kerf_workload_parse(json_string_value(v)) : -1;
                if (w < 0)
                        BAD("invalid_argument", "workload: one of training, inference, dev, batch");
                q->workload = (kerf_workload)w;
        }
        if ((v = json_object_get(o, "tier"))) {
                int w = json_is_string(v) ? kerf_tier_parse(json_string_value(v)) : -1;
                if (w < 0)
                        BAD("invalid_argument", "tier: one of high, queueable, exploratory");
                q->tier = (kerf_tier)w;
        }
        if ((v = json_object_get(o, "route"))) {
                int w = json_is_string(v) ? kerf_unit_kind_parse(json_string_value(v)) : -1;
                if (w < 0)
                        BAD("invalid_argument", "route: one of whole, mig, slice, mps, tslice");
                q->route = w;
        }
        if ((v = json_object_get(o, "mig_profile"))) {
                if (!json_is_string(v) || !*json_string_value(v) ||
                    strlen(json_string_value(v)) > 31)
                        BAD("invalid_argument", "mig_profile: a profile name such as \"3g.71gb\"");
                q->mig_profile = json_string_value(v);
        }
        if ((v = json_object_get(o, "gpus"))) {
                if (!get_int(v, 1, KERF_MAX_TASK_GPUS, &x))
                        BAD("invalid_argument", "gpus: an integer 1..16");
                q->gpus = (unsigned)x;
        }
        if ((v = json_object_get(o, "memory")) &&
            !get_size(v, stored, KERF_MAX_GPU_MEM_BYTES, &q->mem_bytes, bad, sizeof(bad)))
                BAD("invalid_argument", "memory: %s", bad);
        if ((v = json_object_get(o, "compute"))) {
                if (!get_int(v, 0, 100, &x))
                        BAD("invalid_argument", "compute: an integer 0..100");
                q->compute_pct = (unsigned)x;
        }
        if ((v = json_object_get(o, "compute_limit"))) {
                if (!get_int(v, 0, 100, &x) || (unsigned)x < q->compute_pct)
                        BAD("invalid_argument", "compute_limit: an integer compute..100");
                q->compute_limit_pct = (unsigned)x;
        }
        if ((v = json_object_get(o, "cpu_milli"))) {
                if (!get_int(v, 0, (long long)KERF_MAX_CPU_MILLI, &x))
                        BAD("invalid_argument", "cpu_milli: an integer 0..%llu",
                            KERF_MAX_CPU_MILLI);
                q->cpu_milli = (uint64_t)x;
        }
        if ((v = json_object_get(o, "host_memory")) &&
            !get_size(v, stored, KERF_MAX_MEM_BYTES, &q->host_mem_bytes, bad, sizeof(bad)))
                BAD("invalid_argument", "host_memory: %s", bad);
        if ((v = json_object_get(o, "gpu_models"))) {
                size_t i;
                json_t *m;
                if (!json_is_array(v) || json_array_size(v) == 0)
                        BAD("invalid_argument", "gpu_models: a non-empty list of model names");
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
        if (pins && (!json_is_array(pins) || json_array_size(pins) == 0 ||
                     json_array_size(pins) > KERF_MAX_TASK_GPUS))
                BAD("invalid_argument", "gpu_uuids: a list of 1..%d GPU UUIDs of this node",
                    KERF_MAX_TASK_GPUS);
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
        if ((v = json_object_get(o, "priority"))) {
                if (!get_int(v, -1000, 1000, &x))
                        BAD("invalid_argument", "priority: an integer -1000..1000");
                q->priority = (int)x;
        }
        if ((v = json_object_get(o, "preemptible"))) {
                if (!json_is_boolean(v))
                        BAD("invalid_argument", "preemptible: true or false");
                q->preemptible = json_is_true(v);
        }
        if (n->cfg.policy.force_preemptible[q->workload])
                q->preemptible = true;
        if ((v = json_object_get(o, "max_runtime_s"))) {
                if (!get_int(v, 0, (long long)KERF_MAX_RUNTIME_S, &x))
                        BAD("invalid_argument", "max_runtime_s: an integer 0..%llu (365 days)",
                            KERF_MAX_RUNTIME_S);
                t->max_runtime_s = q->max_runtime_s = (uint64_t)x;
        }
        if ((v = json_object_get(o, "idle_timeout_s"))) {
                if (!get_int(v, 0, (long long)KERF_MAX_IDLE_TIMEOUT_S, &x))
                        BAD("invalid_argument", "idle_timeout_s: an integer 0..%llu (365 days)",
                            KERF_MAX_IDLE_TIMEOUT_S);
                t->idle_timeout_s = q->idle_timeout_s = (uint64_t)x;
        }
        v = json_object_get(o, "command");
        if (attach) {
                if (v)
                        BAD("unknown_field", "command: not accepted by /v1/attach");
                if (!(v = json_object_get(o, "pid")) || !get_int(v, 1, 0x7fffffff, &x))
                        BAD("invalid_argument", "pid: required, a process id");
                t->rec.pid = x;
                if (!(v = json_object_get(o, "lease_s")) ||
                    !get_int(v, n->cfg.min_lease_s, 3600, &x))
                        BAD("invalid_argument", "lease_s: required, an integer %u..3600",
                            n->cfg.min_lease_s);
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
                if (json_object_get(o, "pid") || json_object_get(o, "lease_s") ||
                    json_object_get(o, "external"))
                        BAD("unknown_field", "%s: only accepted by /v1/attach",
                            json_object_get(o, "pid")       ? "pid"
                            : json_object_get(o, "lease_s") ? "lease_s"
                                                            : "external");
                if (!v)
                        BAD("invalid_argument", "command: required (an argv list)");
                if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > 4096)
                        BAD("invalid_argument", "command: a non-empty list of strings");
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
                if (!json_is_object(v) || json_object_size(v) > 4096)
                        BAD("invalid_argument", "env: an object of strings");
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
        if ((v = json_object_get(o, "cwd"))) {
                if (!json_is_string(v) || json_string_value(v)[0] != '/' ||
                    strlen(json_string_value(v)) > 1024)
                        BAD("invalid_argument", "cwd: an absolute path of at most 1024 bytes");
        }
        if ((v = json_object_get(o, "run_as"))) {
                json_t *u = json_object_get(v, "uid"), *g = json_object_get(v, "gid");
                const char *k;
                json_t *tmp;
                if (!admin) {
                        *ret_code = "forbidden";
                        snprintf(msg, msglen, "run_as: admin only");
                        r = -EPERM;
                        goto out;
                }
                if (!json_is_object(v) || !get_int(u, 0, 0x7fffffff, &x))
                        BAD("invalid_argument", "run_as: {\"uid\": N, \"gid\": N}");
                t->rec.uid = x;
                t->rec.gid = x;
                if (g && !get_int(g, 0, 0x7fffffff, &x))
                        BAD("invalid_argument", "run_as.gid: an integer");
                if (g)
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
        return r;
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
                bool known = false;
                for (const char *const *f = submit_fields; *f; f++)
                        if (!strcmp(*f, k))
                                known = true;
                if (!known) {
                        *ret_code = "unknown_field";
                        snprintf(msg, msglen, "%s: unknown field", k);
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
        if (t && !t->argv) {
                json_t *env = kerfd__attach_env(n, t);
                json_object_set_new(j, "attach_env", env ? env : json_null());
                char dev[200];
                if (kerfd__cdi_device(n, t, dev, sizeof(dev)))
                        json_object_set_new(j, "cdi_device", json_string(dev));
        }
        return j;
}
