/* SPDX-License-Identifier: Apache-2.0 */
/* fields.h - field descriptors of request objects: one row per field (JSON name, type, bounds,
 * default, unit, help, CLI flag, which objects take it) that the API's validation, the CLI's
 * flags and help, and docs/API.md's table (checked by a unit test) are all made from. */
#ifndef KERF_FIELDS_H
#define KERF_FIELDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kerf/sched.h" /* KERF_MAX_TASK_GPUS */
#include "kerf/units.h" /* size and duration bounds */

/* ---- bounds of request fields that units.h does not hold, defined once -------------------- */

/* a percentage of one GPU's compute (compute, compute_limit) */
#define KERF_PCT_MAX 100
/* lease_s of an attached task: at most one hour (kerfd's limits.min_lease_s is the floor) */
#define KERF_MAX_LEASE_S 3600
/* processes that may join one attached task besides its first (POST /v1/tasks/{id}/join) */
#define KERF_ATTACH_MAX_PIDS 256
/* a MIG profile name such as "3g.71gb": 1..31 bytes */
#define KERF_MIG_PROFILE_NAME_MAX 31
/* a task's working directory: an absolute path of at most this many bytes */
#define KERF_MAX_CWD_BYTES 1024
/* argv strings and env variables of one task */
#define KERF_MAX_ARGV 4096
#define KERF_MAX_ENV  4096
/* a process id (pid of /v1/attach, uid/gid of run_as): 31 bits */
#define KERF_MAX_ID 0x7fffffffLL
/* a tenant's uid and gid (and tenant_defaults.uid_base): 0..2^31-2 */
#define KERF_MAX_TENANT_ID (KERF_MAX_ID - 1)
/* a tenant's fair-share weight */
#define KERF_TENANT_WEIGHT_MAX 1000
/* a tenant's max_pending (unfinished tasks) */
#define KERF_TENANT_MAX_PENDING 10000000
/* tenant_defaults.uid_span: the derived uids of tenants without a uid */
#define KERF_TENANT_UID_SPAN_MAX (1LL << 30)
/* the SIGTERM to SIGKILL grace of a task (kerfd's limits.grace_s, kerf cancel --grace) */
#define KERF_MAX_GRACE_S 3600

typedef enum kerf_field_type {
        KERF_FIELD_NAME,     /* a kerf name (KERF_NAME_RULE); min 0 also takes "" */
        KERF_FIELD_STRING,   /* a string of min..max bytes */
        KERF_FIELD_PATH,     /* an absolute path of at most max bytes */
        KERF_FIELD_ENUM,     /* one of a core name table's values */
        KERF_FIELD_INT,      /* an integer min..max */
        KERF_FIELD_PERCENT,  /* an integer min..max percent */
        KERF_FIELD_BOOL,     /* true or false */
        KERF_FIELD_SIZE,     /* bytes: an integer, or a string with a unit (units.h); <= max */
        KERF_FIELD_DURATION, /* seconds: an integer min..max in JSON; the CLI takes units.h forms */
        KERF_FIELD_STRLIST,  /* a list of min..max items: strings in the API, entries (mappings)
                              * in the fleet file; each checked by its owner */
        KERF_FIELD_OBJECT,   /* a JSON object (its members checked by its owner) */
        KERF_FIELD_TYPE_COUNT,
} kerf_field_type;

/* the objects a field belongs to (kerf_field.objects, a mask) */
#define KERF_FIELD_SUBMIT 1u /* POST /v1/tasks */
#define KERF_FIELD_ATTACH 2u /* POST /v1/attach */
/* a tenant (kerf_tenant_fields) */
#define KERF_FIELD_TENANT_CREATE   4u  /* POST /v1/tenants */
#define KERF_FIELD_TENANT_PATCH    8u  /* PATCH /v1/tenants/{name} */
#define KERF_FIELD_TENANT_FILE     16u /* kerfd.yaml's tenants[] */
#define KERF_FIELD_TENANT_DEFAULTS 32u /* kerfd.yaml's tenant_defaults */
#define KERF_FIELD_TENANT_API      (KERF_FIELD_TENANT_CREATE | KERF_FIELD_TENANT_PATCH)
#define KERF_FIELD_TASK_UPDATE     64u /* PATCH /v1/tasks/{id}: a pending task's request */

/* a CLI flag may be given more than once (each adds to the list or object) */
#define KERF_FIELD_REPEAT 1u
/* YAML text only (kerf_field_check_text): a string of printable characters without spaces */
#define KERF_FIELD_TOKEN 2u
/* YAML text only: an int written as a number with up to 3 decimals ("0.5"), stored x1000; the
 * bounds are in thousandths (cpus: 0.5 -> 500) */
#define KERF_FIELD_MILLI 4u
/* JSON null is accepted too (its owner says what it means: "back to tenant_defaults") */
#define KERF_FIELD_NULLABLE 8u

typedef struct kerf_field {
        const char *name; /* JSON name */
        kerf_field_type type;
        int64_t min, max;    /* bounds: value (int, percent, duration, size), bytes (string,
                              * path) or items (list, object: max 0 = no upper bound) */
        const char *def;     /* the default, in words ("1", "`batch`", "policy") */
        const char *help;    /* one line: what it means */
        const char *flag;    /* CLI flag without "--", or NULL (not a flag) */
        const char *metavar; /* the flag's value in help ("N", "SIZE"); NULL: a switch */
        unsigned objects;    /* KERF_FIELD_SUBMIT | KERF_FIELD_ATTACH | KERF_FIELD_TENANT_... */
        unsigned flags;      /* KERF_FIELD_REPEAT | KERF_FIELD_NULLABLE */
        /* KERF_FIELD_ENUM (and a KERF_FIELD_STRLIST of such values): value i's name (NULL past
         * the end) and the parser (which may take aliases); the accepted values are the names
         * for i = 0.. */
        const char *(*value_name)(unsigned i);
        int (*value_parse)(const char *s);
} kerf_field;

/* A checked value: which member is set follows the type. `s` points into the json_t. */
typedef struct kerf_field_value {
        int64_t i;     /* int, percent, duration, enum (the parsed value); a list of enum
                        * values: the mask of 1 << value */
        uint64_t u;    /* size in bytes */
        bool b;        /* bool */
        const char *s; /* name, string, path, enum */
} kerf_field_value;

/* The task request: POST /v1/tasks and POST /v1/attach (docs/API.md "Tasks"). */
extern const kerf_field kerf_task_fields[];
extern const size_t kerf_task_fields_count;

/* A tenant: POST /v1/tenants, PATCH /v1/tenants/{name}, kerfd.yaml's tenants[] and
 * tenant_defaults (docs/API.md "Tenants and quotas"; src/core/fields_tenant.c). */
extern const kerf_field kerf_tenant_fields[];
extern const size_t kerf_tenant_fields_count;

/* Where an object of kind `object` is written: "/v1/tasks", "PATCH /v1/tenants/{name}",
 * "kerfd.yaml's tenants[]"... (the lowest bit of `object` set). */
const char *kerf_field_object_name(unsigned object);

/* The field named `name` in table[0..n), or NULL. Thread-safe. */
const kerf_field *kerf_field_find(const kerf_field *table, size_t n, const char *name);

/* Looks `name` up for an object of kind `object` (KERF_FIELD_SUBMIT...). Returns the field;
 * NULL when it is unknown or not accepted by that object, and then msg[0..len) says so:
 * "gpu: unknown field (did you mean gpus?)", "pid: only accepted by /v1/attach" (the
 * objects that take it, by kerf_field_object_name). */
const kerf_field *kerf_field_lookup(const kerf_field *table, size_t n, const char *name,
                                    unsigned object, char *msg, size_t len);

/* Writes what `f` accepts into buf[0..len) and returns buf: "an integer 1..16", "one of
 * training, inference, dev, batch", "true or false", "bytes (an integer) or a string with a
 * unit such as \"16GiB\", at most 1PiB". The one message format of every field error. */
char *kerf_field_describe(const kerf_field *f, char *buf, size_t len);

/* Checks `v` against `f` alone (type and bounds; an object's members and a list's strings are
 * its owner's to check, but a list of enum values is checked value by value). JSON null is
 * refused here even for a KERF_FIELD_NULLABLE field: its owner takes null first. Returns 0 and
 * fills *ret; -EINVAL when `v` does not fit, and then msg holds "<name>: <what it accepts>" (a size
 * says what was wrong with the string, from kerf_parse_size). *ret is untouched on failure.
 * Thread-safe. */
int kerf_field_check(const kerf_field *f, const json_t *v, kerf_field_value *ret, char *msg,
                     size_t len);

/* ---- the same descriptors read from YAML scalars (src/core/fields_text.c) ----------------- */

/* What `f` accepts as a YAML scalar, in the words of kerf_field_describe(): a bool takes
 * true/false/yes/no/on/off, a size needs a unit (units.h), a duration takes units.h forms. */
char *kerf_field_describe_text(const kerf_field *f, char *buf, size_t len);

/* Checks the YAML scalar `s` against `f` (type, bounds, KERF_FIELD_TOKEN, KERF_FIELD_MILLI):
 * sizes and durations through kerf_parse_size/kerf_parse_duration. Returns 0 and fills *ret;
 * -EINVAL when it does not fit, and then msg holds "<name>: <what it accepts>, got '<s>'" (a
 * size or a duration its parser refuses: "<name>: <the parser's words>"). A size or a duration
 * sets both ret->u and ret->i. A list or an object is refused (those are sequences and
 * mappings, their owner's). *ret is untouched on failure. Thread-safe. */
int kerf_field_check_text(const kerf_field *f, const char *s, kerf_field_value *ret, char *msg,
                          size_t len);

/* The type column of a YAML file's docs table (docs/FLEET.md) for `f` into buf: "int 1..64",
 * "bool", "size 0B..1024PiB", "number 0..100000 (3 decimals)", "string 1..31 (no spaces)". */
char *kerf_field_doc_type_text(const kerf_field *f, char *buf, size_t len);

/* The type column of docs/API.md for `f` ("int 1..16", "size ≤ 1PiB", "`high`\|`queueable`"),
 * written into buf[0..len); returns buf. */
char *kerf_field_doc_type(const kerf_field *f, char *buf, size_t len);

/* One --help line (or two, when long) for f's flag into buf[0..len): flag and value, help,
 * bounds and default, e.g. "  --gpus N            GPUs (1..16; default 1)\n". Returns buf;
 * an empty string when f has no flag. */
char *kerf_field_help_line(const kerf_field *f, char *buf, size_t len);

/* The nearest of cands[0..n) (NULL entries skipped) to `word`, when close enough to be a
 * typo (about one edit in three; a candidate that `word` starts, of 3+ characters); else
 * NULL. Thread-safe. */
const char *kerf_nearest(const char *word, const char *const *cands, size_t n);

#endif /* KERF_FIELDS_H */
