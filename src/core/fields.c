/* SPDX-License-Identifier: Apache-2.0 */
/* fields.c - field descriptors (the task request's table), their one validator, their one
 * message format, help lines and docs/API.md type words; the "did you mean" distance */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kerf/core.h"
#include "kerf/fields.h"

static const char *workload_value(unsigned i)
{
        return i < KERF_WL_COUNT ? kerf_workload_name((kerf_workload)i) : NULL;
}

static const char *tier_value(unsigned i)
{
        return i < KERF_TIER_COUNT ? kerf_tier_name((kerf_tier)i) : NULL;
}

static const char *route_value(unsigned i)
{
        return i < KERF_UNIT_KIND_COUNT ? kerf_unit_kind_name((kerf_unit_kind)i) : NULL;
}

static int route_parse(const char *s)
{
        return kerf_unit_kind_parse(s);
}

#define S   KERF_FIELD_SUBMIT
#define A   KERF_FIELD_ATTACH
#define U   KERF_FIELD_TASK_UPDATE
#define REP KERF_FIELD_REPEAT

/* Order: the order of docs/API.md's table and of kerf submit --help. */
const kerf_field kerf_task_fields[] = {
    {"name", KERF_FIELD_NAME, 0, KERF_NAME_LEN - 1, "\"\"", "task name", "name", "N", S | A, 0,
     NULL, NULL},
    {"tenant", KERF_FIELD_NAME, 1, KERF_NAME_LEN - 1, "the token's tenant",
     "(admin) submit for this tenant", "tenant", "T", S | A, 0, NULL, NULL},
    {"queue", KERF_FIELD_NAME, 1, KERF_NAME_LEN - 1, "`default`", "queue within the tenant",
     "queue", "Q", S | A, 0, NULL, NULL},
    {"workload", KERF_FIELD_ENUM, 0, KERF_WL_COUNT - 1, "`batch`", "kind of work", "workload", "W",
     S | A, 0, workload_value, kerf_workload_parse},
    {"tier", KERF_FIELD_ENUM, 0, KERF_TIER_COUNT - 1, "`queueable`",
     "risk tier; high-impact means high", "tier", "T", S | A, 0, tier_value, kerf_tier_parse},
    {"route", KERF_FIELD_ENUM, 0, KERF_UNIT_KIND_COUNT - 1, "policy", "insist on a route", "route",
     "R", S | A, 0, route_value, route_parse},
    {"mig_profile", KERF_FIELD_STRING, 1, KERF_MIG_PROFILE_NAME_MAX, "none",
     "a MIG profile by name, e.g. 3g.71gb (implies route mig)", "mig-profile", "P", S | A, 0, NULL,
     NULL},
    {"gpus", KERF_FIELD_INT, 1, KERF_MAX_TASK_GPUS, "1", "GPUs (more than 1 means whole GPUs)",
     "gpus", "N", S | A, 0, NULL, NULL},
    {"memory", KERF_FIELD_SIZE, 0, (int64_t)KERF_MAX_GPU_MEM_BYTES, "policy", "GPU memory per GPU",
     "memory", "SIZE", S | A, 0, NULL, NULL},
    {"compute", KERF_FIELD_PERCENT, 0, KERF_PCT_MAX, "0", "guaranteed compute share", "compute",
     "PCT", S | A, 0, NULL, NULL},
    {"compute_limit", KERF_FIELD_PERCENT, 0, KERF_PCT_MAX, "= compute",
     "burst limit for slices, at least compute", "compute-limit", "PCT", S | A, 0, NULL, NULL},
    {"cpu_milli", KERF_FIELD_INT, 0, (int64_t)KERF_MAX_CPU_MILLI, "0",
     "host CPUs in thousandths (1000 = one CPU)", "cpu-milli", "N", S | A, 0, NULL, NULL},
    {"host_memory", KERF_FIELD_SIZE, 0, (int64_t)KERF_MAX_MEM_BYTES, "0", "host memory",
     "host-memory", "SIZE", S | A, 0, NULL, NULL},
    {"gpu_models", KERF_FIELD_STRLIST, 1, 0, "any", "allowed GPU model", "gpu-model", "M", S | A,
     REP, NULL, NULL},
    {"gpu_uuid", KERF_FIELD_STRING, 1, KERF_UUID_LEN - 1, "any",
     "the one GPU (or MIG instance) the task must run on", NULL, NULL, S | A, 0, NULL, NULL},
    {"gpu_uuids", KERF_FIELD_STRLIST, 1, KERF_MAX_TASK_GPUS, "any",
     "the GPUs a task of several GPUs must run on", NULL, NULL, S | A, 0, NULL, NULL},
    {"priority", KERF_FIELD_INT, KERF_PRIORITY_MIN, KERF_PRIORITY_MAX, "0", "higher runs first",
     "priority", "P", S | A | U, 0, NULL, NULL},
    {"preemptible", KERF_FIELD_BOOL, 0, 1, "false (batch: true)",
     "may be preempted by higher-priority work", "preemptible", NULL, S | A | U, 0, NULL, NULL},
    {"max_runtime_s", KERF_FIELD_DURATION, 0, (int64_t)KERF_MAX_RUNTIME_S, "0 = none",
     "killed after this long", "max-runtime", "D", S | A | U, 0, NULL, NULL},
    {"idle_timeout_s", KERF_FIELD_DURATION, 0, (int64_t)KERF_MAX_IDLE_TIMEOUT_S, "0 = none",
     "killed after this long without GPU activity", "idle-timeout", "D", S | A | U, 0, NULL, NULL},
    {"command", KERF_FIELD_STRLIST, 1, KERF_MAX_ARGV, "required", "argv, run with execve", NULL,
     NULL, S, 0, NULL, NULL},
    {"env", KERF_FIELD_OBJECT, 0, KERF_MAX_ENV, "{}", "environment variable", "env", "K=V", S | A,
     REP, NULL, NULL},
    {"cwd", KERF_FIELD_PATH, 1, KERF_MAX_CWD_BYTES, "state dir of the task", "working directory",
     "cwd", "DIR", S | A, 0, NULL, NULL},
    {"run_as", KERF_FIELD_OBJECT, 0, 0, "the tenant's identity", "uid and gid to run as (admin)",
     NULL, NULL, S | A, 0, NULL, NULL},
    {"pid", KERF_FIELD_INT, 1, KERF_MAX_ID, "required", "the process that holds the task", NULL,
     NULL, A, 0, NULL, NULL},
    {"lease_s", KERF_FIELD_DURATION, 1, KERF_MAX_LEASE_S, "required",
     "the task ends unless renewed within this long", NULL, NULL, A, 0, NULL, NULL},
    {"external", KERF_FIELD_OBJECT, 0, 0, "none", "the launcher's own ids", NULL, NULL, A, 0, NULL,
     NULL},
};
const size_t kerf_task_fields_count = sizeof(kerf_task_fields) / sizeof(kerf_task_fields[0]);

#undef S
#undef A
#undef REP

const kerf_field *kerf_field_find(const kerf_field *table, size_t n, const char *name)
{
        for (size_t i = 0; name && i < n; i++)
                if (strcmp(table[i].name, name) == 0)
                        return &table[i];
        return NULL;
}

const char *kerf_field_object_name(unsigned object)
{
        static const char *const names[] = {
            "/v1/tasks",
            "/v1/attach",
            "POST /v1/tenants",
            "PATCH /v1/tenants/{name}",
            "kerfd's config file (tenants[])",
            "kerfd's config file (tenant_defaults)",
            "PATCH /v1/tasks/{id}",
        };
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (object & (1u << i))
                        return names[i];
        return "no object";
}

/* "A", "A and B", "A, B and C" of the objects in mask `objects` */
static void object_names(unsigned objects, char *buf, size_t len)
{
        unsigned left = objects;
        size_t o = 0;

        buf[0] = '\0';
        for (unsigned bit = 1; left && bit; bit <<= 1) {
                if (!(left & bit))
                        continue;
                left &= ~bit;
                int w = snprintf(buf + o, o < len ? len - o : 0, "%s%s",
                                 !o     ? ""
                                 : left ? ", "
                                        : " and ",
                                 kerf_field_object_name(bit));
                if (w < 0 || (size_t)w >= len - o)
                        break;
                o += (size_t)w;
        }
}

const kerf_field *kerf_field_lookup(const kerf_field *table, size_t n, const char *name,
                                    unsigned object, char *msg, size_t len)
{
        const kerf_field *f = kerf_field_find(table, n, name);
        const char *cands[64], *near;
        char where[256];
        size_t k = 0;

        if (f && (f->objects & object))
                return f;
        if (f) {
                object_names(f->objects, where, sizeof(where));
                snprintf(msg, len, "%s: only accepted by %s", name, where);
                return NULL;
        }
        for (size_t i = 0; i < n && k < sizeof(cands) / sizeof(cands[0]); i++)
                if (table[i].objects & object)
                        cands[k++] = table[i].name;
        near = kerf_nearest(name, cands, k);
        if (near)
                snprintf(msg, len, "%s: unknown field (did you mean %s?)", name, near);
        else
                snprintf(msg, len, "%s: unknown field", name);
        return NULL;
}

/* "a, b, c" (sep ", ") or "`a`\|`b`" of an enum's values */
static void enum_values(const kerf_field *f, const char *pre, const char *sep, const char *post,
                        char *buf, size_t len)
{
        size_t o = 0;
        const char *v;

        buf[0] = '\0';
        for (unsigned i = 0; (v = f->value_name(i)) && o < len; i++) {
                int w = snprintf(buf + o, len - o, "%s%s%s%s", i ? sep : "", pre, v, post);
                if (w < 0)
                        break;
                o += (size_t)w;
        }
}

char *kerf_field_describe(const kerf_field *f, char *buf, size_t len)
{
        char a[KERF_UNITS_BUF], vals[256];

        switch (f->type) {
        case KERF_FIELD_NAME:
                snprintf(buf, len, "%s%s", KERF_NAME_RULE, f->min == 0 ? " (or \"\")" : "");
                break;
        case KERF_FIELD_STRING:
                snprintf(buf, len, "a string of %lld..%lld bytes", (long long)f->min,
                         (long long)f->max);
                break;
        case KERF_FIELD_PATH:
                snprintf(buf, len, "an absolute path of at most %lld bytes", (long long)f->max);
                break;
        case KERF_FIELD_ENUM:
                enum_values(f, "", ", ", "", vals, sizeof(vals));
                snprintf(buf, len, "one of %s", vals);
                break;
        case KERF_FIELD_INT:
                snprintf(buf, len, "an integer %lld..%lld", (long long)f->min, (long long)f->max);
                break;
        case KERF_FIELD_PERCENT:
                snprintf(buf, len, "an integer %lld..%lld (percent)", (long long)f->min,
                         (long long)f->max);
                break;
        case KERF_FIELD_BOOL:
                snprintf(buf, len, "true or false");
                break;
        case KERF_FIELD_SIZE:
                snprintf(buf, len,
                         "bytes (an integer) or a string with a unit such as \"16GiB\", at most %s",
                         kerf_format_size((uint64_t)f->max, a, sizeof(a)));
                break;
        case KERF_FIELD_DURATION:
                snprintf(buf, len, "an integer %lld..%lld (seconds, at most %s)", (long long)f->min,
                         (long long)f->max, kerf_format_duration((uint64_t)f->max, a, sizeof(a)));
                break;
        case KERF_FIELD_STRLIST:
                if (f->value_name) {
                        enum_values(f, "", ", ", "", vals, sizeof(vals));
                        snprintf(buf, len, "a list of at least %lld of %s", (long long)f->min,
                                 vals);
                } else if (f->max > 0)
                        snprintf(buf, len, "a list of %lld..%lld strings", (long long)f->min,
                                 (long long)f->max);
                else
                        snprintf(buf, len, "a list of at least %lld strings", (long long)f->min);
                break;
        case KERF_FIELD_OBJECT:
        default:
                if (f->max > 0)
                        snprintf(buf, len, "an object of at most %lld members", (long long)f->max);
                else
                        snprintf(buf, len, "an object");
                break;
        }
        size_t bl = strlen(buf);
        if ((f->flags & KERF_FIELD_NULLABLE) && bl < len)
                snprintf(buf + bl, len - bl, " or null");
        return buf;
}

static int bad(const kerf_field *f, char *msg, size_t len)
{
        char d[320];
        snprintf(msg, len, "%s: %s", f->name, kerf_field_describe(f, d, sizeof(d)));
        return -EINVAL;
}

static bool in_bounds(const kerf_field *f, const json_t *v, int64_t *ret)
{
        if (!json_is_integer(v))
                return false;
        json_int_t x = json_integer_value(v);
        if (x < f->min || x > f->max)
                return false;
        *ret = x;
        return true;
}

int kerf_field_check(const kerf_field *f, const json_t *v, kerf_field_value *ret, char *msg,
                     size_t len)
{
        kerf_field_value out = {0};
        const char *s = json_is_string(v) ? json_string_value(v) : NULL;
        size_t sl = s ? json_string_length(v) : 0;

        switch (f->type) {
        case KERF_FIELD_NAME:
                if (!s || strlen(s) != sl || (!(f->min == 0 && !*s) && !kerf_name_ok(s)))
                        return bad(f, msg, len);
                out.s = s;
                break;
        case KERF_FIELD_STRING:
        case KERF_FIELD_PATH:
                if (!s || strlen(s) != sl || (int64_t)sl < f->min || (int64_t)sl > f->max ||
                    (f->type == KERF_FIELD_PATH && s[0] != '/'))
                        return bad(f, msg, len);
                out.s = s;
                break;
        case KERF_FIELD_ENUM: {
                int e = s ? f->value_parse(s) : -1;
                if (e < 0 || e < f->min || e > f->max)
                        return bad(f, msg, len);
                out.i = e;
                out.s = s;
                break;
        }
        case KERF_FIELD_INT:
        case KERF_FIELD_PERCENT:
        case KERF_FIELD_DURATION:
                if (!in_bounds(f, v, &out.i))
                        return bad(f, msg, len);
                break;
        case KERF_FIELD_BOOL:
                if (!json_is_boolean(v))
                        return bad(f, msg, len);
                out.b = json_is_true(v);
                break;
        case KERF_FIELD_SIZE: {
                char why[256], m[KERF_UNITS_BUF];
                uint64_t b;
                if (json_is_integer(v) && json_integer_value(v) >= 0) {
                        b = (uint64_t)json_integer_value(v);
                } else if (s) {
                        if (kerf_parse_size(s, &b, why, sizeof(why)) < 0) {
                                snprintf(msg, len, "%s: %s", f->name, why);
                                return -EINVAL;
                        }
                } else {
                        return bad(f, msg, len);
                }
                if (b > (uint64_t)f->max) {
                        snprintf(msg, len, "%s: at most %s", f->name,
                                 kerf_format_size((uint64_t)f->max, m, sizeof(m)));
                        return -EINVAL;
                }
                if (b < (uint64_t)f->min) {
                        snprintf(msg, len, "%s: at least %s", f->name,
                                 kerf_format_size((uint64_t)f->min, m, sizeof(m)));
                        return -EINVAL;
                }
                out.u = b;
                break;
        }
        case KERF_FIELD_STRLIST:
                if (!json_is_array(v) || (int64_t)json_array_size(v) < f->min ||
                    (f->max > 0 && (int64_t)json_array_size(v) > f->max))
                        return bad(f, msg, len);
                if (f->value_parse) { /* a list of enum values: each one of them */
                        size_t i;
                        json_t *w;
                        json_array_foreach(v, i, w)
                        {
                                int e =
                                    json_is_string(w) ? f->value_parse(json_string_value(w)) : -1;
                                if (e < 0 || e > 62)
                                        return bad(f, msg, len);
                                out.i |= (int64_t)1 << e;
                        }
                }
                break;
        case KERF_FIELD_OBJECT:
        default:
                if (!json_is_object(v) || (f->max > 0 && (int64_t)json_object_size(v) > f->max))
                        return bad(f, msg, len);
                break;
        }
        *ret = out;
        return 0;
}

char *kerf_field_doc_type(const kerf_field *f, char *buf, size_t len)
{
        char a[KERF_UNITS_BUF], vals[256];

        switch (f->type) {
        case KERF_FIELD_NAME:
                snprintf(buf, len, "name (Conventions)");
                break;
        case KERF_FIELD_STRING:
                snprintf(buf, len, "string %lld..%lld bytes", (long long)f->min, (long long)f->max);
                break;
        case KERF_FIELD_PATH:
                snprintf(buf, len, "absolute path ≤ %lld bytes", (long long)f->max);
                break;
        case KERF_FIELD_ENUM:
                enum_values(f, "`", "\\|", "`", vals, sizeof(vals));
                snprintf(buf, len, "%s", vals);
                break;
        case KERF_FIELD_INT:
                snprintf(buf, len, "int %lld..%lld", (long long)f->min, (long long)f->max);
                break;
        case KERF_FIELD_PERCENT:
                snprintf(buf, len, "int %lld..%lld (%%)", (long long)f->min, (long long)f->max);
                break;
        case KERF_FIELD_BOOL:
                snprintf(buf, len, "bool");
                break;
        case KERF_FIELD_SIZE:
                snprintf(buf, len, "size ≤ %s", kerf_format_size((uint64_t)f->max, a, sizeof(a)));
                break;
        case KERF_FIELD_DURATION:
                snprintf(buf, len, "int %lld..%lld (s, %s)", (long long)f->min, (long long)f->max,
                         kerf_format_duration((uint64_t)f->max, a, sizeof(a)));
                break;
        case KERF_FIELD_STRLIST:
                if (f->value_name) {
                        enum_values(f, "`", "\\|", "`", vals, sizeof(vals));
                        snprintf(buf, len, "[%s] %lld..", vals, (long long)f->min);
                } else if (f->max > 0)
                        snprintf(buf, len, "[string] %lld..%lld", (long long)f->min,
                                 (long long)f->max);
                else
                        snprintf(buf, len, "[string] %lld..", (long long)f->min);
                break;
        case KERF_FIELD_OBJECT:
        default:
                snprintf(buf, len, "object");
                break;
        }
        size_t bl = strlen(buf);
        if ((f->flags & KERF_FIELD_NULLABLE) && bl < len)
                snprintf(buf + bl, len - bl, " \\| null");
        return buf;
}

/* The bounds of f's flag in words, for --help: "1..16", "at most 1PiB", "a | b | c". */
static void flag_bounds(const kerf_field *f, char *buf, size_t len)
{
        char a[KERF_UNITS_BUF];

        buf[0] = '\0';
        switch (f->type) {
        case KERF_FIELD_ENUM:
                enum_values(f, "", " | ", "", buf, len);
                break;
        case KERF_FIELD_STRLIST:
                if (f->value_name)
                        enum_values(f, "", " | ", "", buf, len);
                break;
        case KERF_FIELD_INT:
        case KERF_FIELD_PERCENT:
                snprintf(buf, len, "%lld..%lld", (long long)f->min, (long long)f->max);
                break;
        case KERF_FIELD_SIZE:
                snprintf(buf, len, "at most %s", kerf_format_size((uint64_t)f->max, a, sizeof(a)));
                break;
        case KERF_FIELD_DURATION:
                snprintf(buf, len, "at most %s",
                         kerf_format_duration((uint64_t)f->max, a, sizeof(a)));
                break;
        case KERF_FIELD_NAME:
                snprintf(buf, len, "<= %lld chars", (long long)f->max);
                break;
        default:
                break;
        }
}

/* Appends `word` to buf at *o, breaking the line before it would pass column 80. */
static void put_word(char *buf, size_t len, size_t *o, size_t *col, const char *word, size_t wl)
{
        static const size_t indent = 22;
        int w;

        if (*col + 1 + wl > 80 && *col > indent) {
                w = snprintf(buf + *o, len - *o, "\n%*s", (int)indent, "");
                *col = indent;
        } else {
                w = snprintf(buf + *o, len - *o, "%s", *col > indent ? " " : "");
                *col += *col > indent ? 1 : 0;
        }
        if (w > 0 && (size_t)w < len - *o)
                *o += (size_t)w;
        w = snprintf(buf + *o, len - *o, "%.*s", (int)wl, word);
        if (w > 0 && (size_t)w < len - *o)
                *o += (size_t)w;
        *col += wl;
}

char *kerf_field_help_line(const kerf_field *f, char *buf, size_t len)
{
        char head[64], text[512], b[256], def[64];
        size_t o = 0, col;
        const char *p;

        if (len)
                buf[0] = '\0';
        if (!f->flag || len < 2)
                return buf;
        /* the default in plain words: docs' backticks dropped */
        size_t d = 0;
        for (p = f->def; *p && d + 1 < sizeof(def); p++)
                if (*p != '`')
                        def[d++] = *p;
        def[d] = '\0';
        flag_bounds(f, b, sizeof(b));
        if (strcmp(f->def, "required") == 0 || strcmp(f->def, "none") == 0 ||
            strcmp(f->def, "any") == 0 || strcmp(f->def, "{}") == 0)
                def[0] = '\0';
        if (f->flags & KERF_FIELD_REPEAT) /* "repeatable" in place of a default */
                snprintf(def, sizeof(def), "repeatable");
        snprintf(text, sizeof(text), "%s%s%s%s%s%s%s", f->help, b[0] || def[0] ? " (" : "", b,
                 b[0] && def[0] ? "; " : "",
                 def[0] && !(f->flags & KERF_FIELD_REPEAT) ? "default " : "", def,
                 b[0] || def[0] ? ")" : "");
        snprintf(head, sizeof(head), "  --%s%s%s", f->flag, f->metavar ? " " : "",
                 f->metavar ? f->metavar : "");
        int w = snprintf(buf, len, "%-21s", head);
        if (w < 0 || (size_t)w >= len)
                return buf;
        o = (size_t)w;
        col = o;
        if (col > 21) { /* a long flag: its text starts on the next line */
                w = snprintf(buf + o, len - o, "\n%22s", "");
                if (w > 0 && (size_t)w < len - o)
                        o += (size_t)w;
                col = 22;
        } else {
                col = 22;
                if (o + 1 < len)
                        buf[o++] = ' ';
                buf[o] = '\0';
        }
        for (p = text; *p;) {
                size_t wl = strcspn(p, " ");
                if (wl)
                        put_word(buf, len, &o, &col, p, wl);
                p += wl;
                while (*p == ' ')
                        p++;
        }
        if (o + 1 < len) {
                buf[o++] = '\n';
                buf[o] = '\0';
        }
        return buf;
}

/* Edit distance (insert, delete, substitute, swap of two neighbours), capped at 8 */
static size_t distance(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b), d[33][33];
        if (la > 32 || lb > 32)
                return 8;
        for (size_t i = 0; i <= la; i++)
                d[i][0] = i;
        for (size_t j = 0; j <= lb; j++)
                d[0][j] = j;
        for (size_t i = 1; i <= la; i++)
                for (size_t j = 1; j <= lb; j++) {
                        size_t c = a[i - 1] == b[j - 1] ? 0 : 1, m = d[i - 1][j - 1] + c;
                        if (d[i - 1][j] + 1 < m)
                                m = d[i - 1][j] + 1;
                        if (d[i][j - 1] + 1 < m)
                                m = d[i][j - 1] + 1;
                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                            d[i - 2][j - 2] + 1 < m)
                                m = d[i - 2][j - 2] + 1;
                        d[i][j] = m;
                }
        return d[la][lb];
}

const char *kerf_nearest(const char *word, const char *const *cands, size_t n)
{
        const char *best = NULL;
        size_t bd = (size_t)-1, wl = word ? strlen(word) : 0;
        if (!wl)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                if (!cands[i])
                        continue;
                size_t dd = distance(word, cands[i]);
                if (wl >= 3 && !strncmp(cands[i], word, wl))
                        dd = 1; /* a prefix of a candidate */
                if (dd < bd) {
                        bd = dd;
                        best = cands[i];
                }
        }
        /* close enough to be a typo: 1 edit for short words, about a third of a long one */
        return best && bd <= (wl <= 4 ? 1 : wl / 3) ? best : NULL;
}
