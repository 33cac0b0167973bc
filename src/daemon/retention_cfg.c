/* SPDX-License-Identifier: Apache-2.0 */
/* retention_cfg.c - the `retention` block of kerfd.yaml (docs/DAEMON.md "Retention") */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <yaml.h>

#include "config.h"
#include "kerf/core.h"
#include "kerf/errno.h"

#define DAY_S        86400ull
#define MAX_AGE_S    (36500ull * DAY_S) /* 100 years */
#define MIN_LOG_CAP  4096ull            /* room for the marker line (retention.c) */
#define MAX_INTERVAL (30ull * DAY_S)

void kerfd_retention_defaults(kerfd_retention_cfg *ret)
{
        ret->logs_after_s = 7 * DAY_S;
        ret->work_dirs_after_s = DAY_S;
        ret->tasks_after_s = 0;
        ret->interval_s = 3600;
        ret->max_log_bytes = 1ull << 30;
}

/* "0", or digits and units s/m/h/d, one or more ("90s", "15m", "1h30m", "7d"). Bare numbers
 * other than 0 are refused: "30" could be seconds or days.
 * TODO: use the shared kerf_parse_duration (src/core) once it is in this tree. */
static int parse_duration(const char *s, uint64_t *ret)
{
        uint64_t total = 0;

        if (!s || !*s)
                return -EINVAL;
        if (!strcmp(s, "0")) {
                *ret = 0;
                return 0;
        }
        while (*s) {
                uint64_t v = 0, unit;
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                while (*s >= '0' && *s <= '9') {
                        if (v > MAX_AGE_S)
                                return -ERANGE;
                        v = v * 10 + (uint64_t)(*s++ - '0');
                }
                switch (*s++) {
                case 's':
                        unit = 1;
                        break;
                case 'm':
                        unit = 60;
                        break;
                case 'h':
                        unit = 3600;
                        break;
                case 'd':
                        unit = DAY_S;
                        break;
                default:
                        return -EINVAL;
                }
                if (v > MAX_AGE_S / unit || total + v * unit > MAX_AGE_S)
                        return -ERANGE;
                total += v * unit;
        }
        *ret = total;
        return 0;
}

void kerfd_retention_fmt(uint64_t s, char *buf, size_t len)
{
        static const struct {
                uint64_t n;
                char u;
        } units[] = {{DAY_S, 'd'}, {3600, 'h'}, {60, 'm'}, {1, 's'}};
        size_t off = 0;

        if (!len)
                return;
        buf[0] = 0;
        if (s == 0) {
                snprintf(buf, len, "0");
                return;
        }
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]) && off < len; i++) {
                if (s / units[i].n == 0)
                        continue;
                int k = snprintf(buf + off, len - off, "%llu%c",
                                 (unsigned long long)(s / units[i].n), units[i].u);
                if (k < 0)
                        return;
                off += (size_t)k;
                s %= units[i].n;
        }
}

static int fail(const char *file, const yaml_node_t *n, char *err, size_t errlen, const char *fmt,
                ...) __attribute__((format(printf, 5, 6)));

static int fail(const char *file, const yaml_node_t *n, char *err, size_t errlen, const char *fmt,
                ...)
{
        char msg[400];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (err)
                snprintf(err, errlen, "%s:%lu: %s", file,
                         n ? (unsigned long)n->start_mark.line + 1 : 0UL, msg);
        return -KERF_EPARSE;
}

static const char *scalar(const yaml_node_t *n)
{
        return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

int kerfd_retention_parse(struct yaml_document_s *doc, struct yaml_node_s *m, const char *file,
                          kerfd_retention_cfg *ret, char *err, size_t errlen)
{
        kerfd_retention_cfg c = *ret;

        if (!m || m->type != YAML_MAPPING_NODE)
                return fail(file, m, err, errlen, "retention: expected a mapping");
        for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
             p++) {
                yaml_node_t *k = yaml_document_get_node(doc, p->key);
                yaml_node_t *v = yaml_document_get_node(doc, p->value);
                const char *ks = scalar(k), *vs = scalar(v);
                uint64_t *age = NULL;
                int r;

                if (!ks)
                        return fail(file, k, err, errlen, "retention: keys must be strings");
                for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < p; q++) {
                        yaml_node_t *qk = yaml_document_get_node(doc, q->key);
                        if (scalar(qk) && !strcmp(scalar(qk), ks))
                                return fail(file, k, err, errlen,
                                            "retention: key \"%s\" given twice (first at line "
                                            "%lu)",
                                            ks, (unsigned long)qk->start_mark.line + 1);
                }
                if (!strcmp(ks, "logs_after"))
                        age = &c.logs_after_s;
                else if (!strcmp(ks, "work_dirs_after"))
                        age = &c.work_dirs_after_s;
                else if (!strcmp(ks, "tasks_after"))
                        age = &c.tasks_after_s;
                else if (!strcmp(ks, "interval"))
                        age = &c.interval_s;
                else if (strcmp(ks, "max_log_bytes"))
                        return fail(file, k, err, errlen,
                                    "retention: unknown key \"%s\" (logs_after, work_dirs_after, "
                                    "max_log_bytes, tasks_after, interval)",
                                    ks);
                if (!age) {
                        uint64_t b;
                        if (!vs || kerf_parse_bytes(vs, &b) < 0)
                                return fail(file, v, err, errlen,
                                            "retention.max_log_bytes: expected a size such as "
                                            "1GiB or 64MiB (0 = no cap), got \"%s\"",
                                            vs ? vs : "(not a scalar)");
                        if (b != 0 && b < MIN_LOG_CAP)
                                return fail(file, v, err, errlen,
                                            "retention.max_log_bytes: 0 (no cap) or at least "
                                            "4KiB, got \"%s\"",
                                            vs);
                        c.max_log_bytes = b;
                        continue;
                }
                r = parse_duration(vs, age);
                if (r < 0)
                        return fail(file, v, err, errlen,
                                    "retention.%s: expected a duration such as 90s, 15m, 1h or "
                                    "7d (0 = %s), at most 36500d, got \"%s\"",
                                    ks, age == &c.interval_s ? "no timed pass" : "keep forever",
                                    vs ? vs : "(not a scalar)");
                if (age == &c.interval_s && *age > MAX_INTERVAL)
                        return fail(file, v, err, errlen,
                                    "retention.interval: at most 30d, got \"%s\"", vs);
        }
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
