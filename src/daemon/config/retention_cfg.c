/* SPDX-License-Identifier: Apache-2.0 */
/* retention_cfg.c - the `retention` block of kerfd.yaml (docs/DAEMON.md "Retention") */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <yaml.h>

#include "config.h"
#include "config_fields.h"
#include "config_yaml.h"
#include "kerf/units.h"
#include "kerf/core.h"
#include "kerf/errno.h"

void kerfd_retention_defaults(kerfd_retention_cfg *ret)
{
        (void)kerfd__cfg_defaults(&kerfd_cfg_retention, ret); /* valid: daemon_test_config_fields */
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
        int r = kerfd__cfg_section(x, m, &kerfd_cfg_retention, &c);

        if (r < 0)
                return r;
        if (c.max_log_bytes && c.max_log_bytes < KERFD_MIN_LOG_CAP)
                return kerfd__cfg_fail(x, m,
                                       "retention.max_log_bytes: 0 (no cap) or at least 4KiB "
                                       "(room for the cut marker)");
        *ret = c;
        return 0;
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
