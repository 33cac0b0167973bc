/* SPDX-License-Identifier: Apache-2.0 */
/* retention_cfg.c - the `retention` block of kerfd.yaml (docs/DAEMON.md "Retention") */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <yaml.h>

#include "config.h"
#include "config_yaml.h"
#include "kerf/units.h"
#include "kerf/core.h"
#include "kerf/errno.h"

#define MAX_AGE_S    (36500ull * KERF_DAY_S) /* 100 years */
#define MIN_LOG_CAP  4096ull                 /* room for the marker line (retention.c) */
#define MAX_INTERVAL (30ull * KERF_DAY_S)

void kerfd_retention_defaults(kerfd_retention_cfg *ret)
{
        ret->logs_after_s = 7 * KERF_DAY_S;
        ret->work_dirs_after_s = KERF_DAY_S;
        ret->tasks_after_s = 0;
        ret->interval_s = 3600;
        ret->max_log_bytes = KERF_GIB;
}

/* A duration by the one rule (docs/UNITS.md); 0 written "0" (never / no timed pass). */
void kerfd_retention_fmt(uint64_t s, char *buf, size_t len)
{
        if (s == 0)
                snprintf(buf, len, "0");
        else
                kerf_format_duration(s, buf, len);
}

int kerfd_retention_parse(cfgctx *x, yaml_node_t *m, kerfd_retention_cfg *ret)
{
        kerfd_retention_cfg c = *ret;
        int r = kerfd__cfg_map(x, m, "retention");

        if (r < 0)
                return r; /* not a mapping: no pairs to walk */
        FOR_PAIRS(x, m, p)
        {
                yaml_node_t *k = kerfd__cfg_node(x, p->key), *v = kerfd__cfg_node(x, p->value);
                const char *ks = kerfd__cfg_scalar(x, k);
                char key[64];
                if (r < 0)
                        return r;
                snprintf(key, sizeof(key), "retention.%s", ks);
                if (!strcmp(ks, "logs_after"))
                        r = kerfd__cfg_duration(x, v, key, 0, MAX_AGE_S, &c.logs_after_s);
                else if (!strcmp(ks, "work_dirs_after"))
                        r = kerfd__cfg_duration(x, v, key, 0, MAX_AGE_S, &c.work_dirs_after_s);
                else if (!strcmp(ks, "tasks_after"))
                        r = kerfd__cfg_duration(x, v, key, 0, MAX_AGE_S, &c.tasks_after_s);
                else if (!strcmp(ks, "interval"))
                        r = kerfd__cfg_duration(x, v, key, 0, MAX_INTERVAL, &c.interval_s);
                else if (!strcmp(ks, "max_log_bytes")) {
                        r = kerfd__cfg_size(x, v, key, 0, KERF_QUOTA_MAX_MEM_BYTES,
                                            &c.max_log_bytes);
                        if (!r && c.max_log_bytes && c.max_log_bytes < MIN_LOG_CAP)
                                r = kerfd__cfg_fail(x, v,
                                                    "retention.max_log_bytes: 0 (no cap) or at "
                                                    "least 4KiB (room for the cut marker)");
                } else
                        r = kerfd__cfg_fail(x, k,
                                            "retention: unknown key \"%s\" (logs_after, "
                                            "work_dirs_after, max_log_bytes, tasks_after, "
                                            "interval)",
                                            ks);
        }
        if (r == 0)
                *ret = c;
        return r;
}

json_t *kerfd_retention_json(const kerfd_retention_cfg *c)
{
        char a[32], b[32], t[32], iv[32];

        kerfd_retention_fmt(c->logs_after_s, a, sizeof(a));
        kerfd_retention_fmt(c->work_dirs_after_s, b, sizeof(b));
        kerfd_retention_fmt(c->tasks_after_s, t, sizeof(t));
        kerfd_retention_fmt(c->interval_s, iv, sizeof(iv));
        return json_pack("{s:s, s:s, s:s, s:s, s:I}", "logs_after", a, "work_dirs_after", b,
                         "tasks_after", t, "interval", iv, "max_log_bytes",
                         (json_int_t)c->max_log_bytes);
}
