/* SPDX-License-Identifier: Apache-2.0 */
/* config_fields.c - the descriptors of kerfd.yaml's limits: and retention: keys, their
 * defaults */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config_fields.h"

#define KS(st, name, type, min, max, def, help, member, slot)                                      \
        {                                                                                          \
                {name, type, min, max, def, help, NULL, NULL, 0, 0, NULL, NULL},                   \
                    offsetof(st, member), slot                                                     \
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

const kerfd_cfg_section kerfd_cfg_limits = {
    "limits", kerfd_limits_keys, sizeof(kerfd_limits_keys) / sizeof(kerfd_limits_keys[0])};
const kerfd_cfg_section kerfd_cfg_retention = {"retention", kerfd_retention_keys,
                                               sizeof(kerfd_retention_keys) /
                                                   sizeof(kerfd_retention_keys[0])};

void kerfd__cfg_key_store(void *base, const kerfd_cfg_key *k, uint64_t v)
{
        char *p = (char *)base + k->off;

        if (k->slot == KERFD_SLOT_U64) {
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
