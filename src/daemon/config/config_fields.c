/* SPDX-License-Identifier: Apache-2.0 */
/* config_fields.c - the descriptors of kerfd.yaml's limits:, retention:, policy: and backend:
 * keys, their defaults */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "config_fields.h"
#include "config_yaml.h"

#define KS(st, name, type, min, max, def, help, member, slot)                                      \
        {                                                                                          \
                {name, type, min, max, def, help, NULL, NULL, 0, 0, NULL, NULL},                   \
                    offsetof(st, member), slot, NULL                                               \
        }
#define K(...)  KS(kerfd_config, __VA_ARGS__)
#define KR(...) KS(kerfd_retention_cfg, __VA_ARGS__)

/* Order: docs/DAEMON.md's table. */
const kerfd_cfg_key kerfd_limits_keys[] = {
    K("max_body", KERF_FIELD_SIZE, KERF_KIB, 64 * KERF_MIB, "64KiB", "largest request body",
      max_body, KERFD_SLOT_U64),
    K("max_tasks", KERF_FIELD_INT, 1, 10000000, "100000", "unfinished tasks, node-wide", max_tasks,
      KERFD_SLOT_UNSIGNED),
    K("submit_rate", KERF_FIELD_INT, 0, 1000000, "0", "submits per tenant per second (0: off)",
      submit_rate, KERFD_SLOT_DOUBLE),
    K("submit_burst", KERF_FIELD_INT, 1, 1000000, "100", "the submit token bucket's depth",
      submit_burst, KERFD_SLOT_UNSIGNED),
    K("grace_s", KERF_FIELD_DURATION, 0, KERF_MAX_GRACE_S, "10", "SIGTERM to SIGKILL", grace_s,
      KERFD_SLOT_UNSIGNED),
    K("tick_ms", KERF_FIELD_INT, 5, 10000, "50", "controller period", tick_ms, KERFD_SLOT_UNSIGNED),
    K("threads", KERF_FIELD_INT, 1, 256, "4", "HTTP worker threads", threads, KERFD_SLOT_UNSIGNED),
    K("min_lease_s", KERF_FIELD_DURATION, 1, KERF_MAX_LEASE_S, "30",
      "shortest lease_s of /v1/attach", min_lease_s, KERFD_SLOT_UNSIGNED),
    K("max_connections", KERF_FIELD_INT, 1, 100000, "256",
      "connections of non-admin peers per listener", max_conns, KERFD_SLOT_UNSIGNED),
    K("max_connections_per_peer", KERF_FIELD_INT, 1, 100000, "32", "per uid or address",
      max_conns_per_peer, KERFD_SLOT_UNSIGNED),
    K("admin_connections", KERF_FIELD_INT, 1, 10000, "32",
      "socket connections kept for admin peers", admin_conns, KERFD_SLOT_UNSIGNED),
    K("request_timeout_s", KERF_FIELD_DURATION, 1, 3600, "10",
      "headers and body of a request must arrive within it", request_timeout_s,
      KERFD_SLOT_UNSIGNED),
};
const size_t kerfd_limits_keys_count = sizeof(kerfd_limits_keys) / sizeof(kerfd_limits_keys[0]);

/* Order: docs/DAEMON.md's table. max_log_bytes is also 0 or >= KERFD_MIN_LOG_CAP (checked by
 * kerfd_retention_parse: one rule the bounds cannot say). */
const kerfd_cfg_key kerfd_retention_keys[] = {
    KR("logs_after", KERF_FIELD_DURATION, 0, (int64_t)KERFD_MAX_AGE_S, "7d",
       "ended tasks' logs removed this long after the end; 0 = kept", logs_after_s, KERFD_SLOT_U64),
    KR("work_dirs_after", KERF_FIELD_DURATION, 0, (int64_t)KERFD_MAX_AGE_S, "1d",
       "ended tasks' work dirs removed this long after the end; 0 = kept", work_dirs_after_s,
       KERFD_SLOT_U64),
    KR("max_log_bytes", KERF_FIELD_SIZE, 0, (int64_t)KERF_QUOTA_MAX_MEM_BYTES, "1GiB",
       "a stream of a task's log; 0 = no cap", max_log_bytes, KERFD_SLOT_U64),
    KR("tasks_after", KERF_FIELD_DURATION, 0, (int64_t)KERFD_MAX_AGE_S, "0",
       "ended task rows deleted this long after the end; 0 = kept", tasks_after_s, KERFD_SLOT_U64),
    KR("interval", KERF_FIELD_DURATION, 0, (int64_t)KERFD_MAX_GC_INTERVAL_S, "1h",
       "a retention pass this often; 0 = only on POST /v1/gc", interval_s, KERFD_SLOT_U64),
};
const size_t kerfd_retention_keys_count =
    sizeof(kerfd_retention_keys) / sizeof(kerfd_retention_keys[0]);

/* The words of a kerfd.yaml choice, as a KERF_FIELD_ENUM's value_name/value_parse. */
#define CHOICE(fn, ...)                                                                            \
        static const char *const fn##_words[] = {__VA_ARGS__, NULL};                               \
        static const char *fn##_name(unsigned i)                                                   \
        {                                                                                          \
                return i < sizeof(fn##_words) / sizeof(fn##_words[0]) - 1 ? fn##_words[i] : NULL;  \
        }                                                                                          \
        static int fn##_parse(const char *s)                                                       \
        {                                                                                          \
                for (unsigned i = 0; s && fn##_words[i]; i++)                                      \
                        if (!strcmp(s, fn##_words[i]))                                             \
                                return (int)i;                                                     \
                return -EINVAL;                                                                    \
        }
/* in kerf_place_policy order */
CHOICE(placement, "kerf", "bestfit", "firstfit")
/* two words: the second is true */
CHOICE(unenforced, "refuse", "allow")
CHOICE(preempt_by, "kill", "suspend")
CHOICE(bypass, "record", "stop")

#define KC(name, type, min, max, def, help, member, slot, choice)                                  \
        {                                                                                          \
                {                                                                                  \
                    name, type, min, max, def,           help,                                     \
                    NULL, NULL, 0,   0,   choice##_name, choice##_parse},                          \
                    offsetof(kerfd_config, member), slot, NULL                                     \
        }

/* Order: docs/DAEMON.md's table. Their defaults are kerf_policy_default's and
 * kerfd_config_defaults' (daemon_test_config_fields checks that they agree). */
const kerfd_cfg_key kerfd_policy_keys[] = {
    {{"routes", KERF_FIELD_OBJECT, 0, 0, "kerf_policy_default", "list of routes", NULL, NULL, 0, 0,
      NULL, NULL},
     0,
     KERFD_SLOT_CUSTOM,
     kerfd__cfg_policy_routes},
    K("preemption", KERF_FIELD_BOOL, 0, 1, "true", "preempt lower-priority preemptible tasks",
      policy.preemption, KERFD_SLOT_BOOL),
    K("mig_reconfigure", KERF_FIELD_BOOL, 0, 1, "true", "destroy idle MIG instances to fit others",
      policy.mig_reconfigure, KERFD_SLOT_BOOL),
    KC("placement", KERF_FIELD_ENUM, 0, 2, "kerf", "placement policy", policy.place, KERFD_SLOT_INT,
       placement),
    K("dev_default_memory", KERF_FIELD_SIZE, (int64_t)KERF_MIB, (int64_t)KERF_MAX_GPU_MEM_BYTES,
      "8GiB", "memory of a dev or time-slice request that gives none", policy.dev_default_mem,
      KERFD_SLOT_U64),
    KC("unenforced_slices", KERF_FIELD_ENUM, 0, 1, "refuse",
       "software slices when the shim is missing", unenforced_slices, KERFD_SLOT_BOOL, unenforced),
    KC("preempt_slices_by", KERF_FIELD_ENUM, 0, 1, "kill",
       "how a best-effort slice victim leaves its GPU", preempt_suspend, KERFD_SLOT_BOOL,
       preempt_by),
    KC("shim_bypass", KERF_FIELD_ENUM, 0, 1, "record", "what a shim bypass does to the task",
       bypass_stop, KERFD_SLOT_BOOL, bypass),
};

const kerfd_cfg_key kerfd_backend_keys[] = {
    K("nvml_library", KERF_FIELD_STRING, 1, PATH_MAX - 1, "libnvidia-ml.so.1",
      "the NVML library dlopen()ed", nvml_library, KERFD_SLOT_STR),
    K("allow_mig_mode_change", KERF_FIELD_BOOL, 0, 1, "false", "let kerfd switch MIG mode",
      allow_mig_mode_change, KERFD_SLOT_BOOL),
    K("simulated", KERF_FIELD_BOOL, 0, 1, "false", "never try the real NVML", force_sim,
      KERFD_SLOT_BOOL),
    K("sim_gid", KERF_FIELD_INT, 1, KERF_MAX_ID - 1, "1999999999", "the simulated device group",
      sim_gid, KERFD_SLOT_UNSIGNED),
};

const kerfd_cfg_section kerfd_cfg_limits = {
    "limits", kerfd_limits_keys, sizeof(kerfd_limits_keys) / sizeof(kerfd_limits_keys[0])};
const kerfd_cfg_section kerfd_cfg_retention = {"retention", kerfd_retention_keys,
                                               sizeof(kerfd_retention_keys) /
                                                   sizeof(kerfd_retention_keys[0])};
const kerfd_cfg_section kerfd_cfg_policy = {
    "policy", kerfd_policy_keys, sizeof(kerfd_policy_keys) / sizeof(kerfd_policy_keys[0])};
const kerfd_cfg_section kerfd_cfg_backend = {
    "backend", kerfd_backend_keys, sizeof(kerfd_backend_keys) / sizeof(kerfd_backend_keys[0])};

void kerfd__cfg_key_store(void *base, const kerfd_cfg_key *k, uint64_t v)
{
        char *p = (char *)base + k->off;

        if (k->slot == KERFD_SLOT_BOOL) {
                bool b = v != 0;
                memcpy(p, &b, sizeof(b));
        } else if (k->slot == KERFD_SLOT_INT) {
                int i = (int)v;
                memcpy(p, &i, sizeof(i));
        } else if (k->slot == KERFD_SLOT_U64) {
                memcpy(p, &v, sizeof(v));
        } else if (k->slot == KERFD_SLOT_DOUBLE) {
                double d = (double)v;
                memcpy(p, &d, sizeof(d));
        } else {
                unsigned u = (unsigned)v;
                memcpy(p, &u, sizeof(u));
        }
}

int kerfd__cfg_defaults(const kerfd_cfg_section *sec, void *base)
{
        for (size_t i = 0; i < sec->n; i++) {
                const kerf_field *f = &sec->keys[i].f;
                uint64_t v;
                if (sec->keys[i].slot > KERFD_SLOT_DOUBLE)
                        return -EINVAL; /* not a section of numbers */
                char *end;
                int r = 0;

                if (f->type == KERF_FIELD_SIZE)
                        r = kerf_parse_size(f->def, &v, NULL, 0);
                else if (f->type == KERF_FIELD_DURATION)
                        r = kerf_parse_duration(f->def, &v, NULL, 0);
                else {
                        errno = 0;
                        v = strtoull(f->def, &end, 10);
                        r = errno || *end ? -EINVAL : 0;
                }
                if (r < 0 || (int64_t)v < f->min || (int64_t)v > f->max)
                        return -EINVAL;
                kerfd__cfg_key_store(base, &sec->keys[i], v);
        }
        return 0;
}

int kerfd__cfg_limits_defaults(kerfd_config *c)
{
        return kerfd__cfg_defaults(&kerfd_cfg_limits, c);
}
