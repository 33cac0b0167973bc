/* SPDX-License-Identifier: Apache-2.0 */
/* out.c - kerf-load's JSON lines (hand-written, escaped), clocks and latency percentiles */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "load.h"

static void put(kl_line *l, const char *fmt, ...)
{
        if (l->overflow)
                return;
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(l->buf + l->n, sizeof(l->buf) - l->n, fmt, ap);
        va_end(ap);
        if (k < 0 || (size_t)k >= sizeof(l->buf) - l->n) {
                l->overflow = true;
                return;
        }
        l->n += (size_t)k;
}

/* A JSON string: quotes, backslash and control characters escaped; bytes >= 0x80 pass as
 * they are (the arguments are whatever the caller gave, normally UTF-8). */
static void put_str(kl_line *l, const char *s)
{
        put(l, "\"");
        for (const unsigned char *p = (const unsigned char *)s; *p && !l->overflow; p++) {
                switch (*p) {
                case '"':
                        put(l, "\\\"");
                        break;
                case '\\':
                        put(l, "\\\\");
                        break;
                case '\n':
                        put(l, "\\n");
                        break;
                case '\r':
                        put(l, "\\r");
                        break;
                case '\t':
                        put(l, "\\t");
                        break;
                default:
                        if (*p < 0x20 || *p == 0x7f)
                                put(l, "\\u%04x", *p);
                        else
                                put(l, "%c", *p);
                }
        }
        put(l, "\"");
}

static void key(kl_line *l, const char *k)
{
        put(l, ",");
        put_str(l, k);
        put(l, ":");
}

void kl_line_begin(kl_line *l, const char *event)
{
        l->n = 0;
        l->overflow = false;
        put(l, "{\"event\":");
        put_str(l, event);
}

void kl_line_str(kl_line *l, const char *k, const char *val)
{
        key(l, k);
        if (val)
                put_str(l, val);
        else
                put(l, "null");
}

void kl_line_u64(kl_line *l, const char *k, uint64_t v)
{
        key(l, k);
        put(l, "%llu", (unsigned long long)v);
}

void kl_line_i64(kl_line *l, const char *k, int64_t v)
{
        key(l, k);
        put(l, "%lld", (long long)v);
}

static void put_dbl(kl_line *l, double v)
{
        if (isfinite(v))
                put(l, "%.6g", v);
        else
                put(l, "null");
}

void kl_line_dbl(kl_line *l, const char *k, double v)
{
        key(l, k);
        put_dbl(l, v);
}

void kl_line_bool(kl_line *l, const char *k, bool v)
{
        key(l, k);
        put(l, v ? "true" : "false");
}

void kl_line_strv(kl_line *l, const char *k, char *const *v, size_t n)
{
        key(l, k);
        put(l, "[");
        for (size_t i = 0; i < n; i++) {
                if (i)
                        put(l, ",");
                put_str(l, v[i]);
        }
        put(l, "]");
}

void kl_line_dblv(kl_line *l, const char *k, const double *v, size_t n)
{
        key(l, k);
        put(l, "[");
        for (size_t i = 0; i < n; i++) {
                if (i)
                        put(l, ",");
                put_dbl(l, v[i]);
        }
        put(l, "]");
}

void kl_line_end(kl_line *l)
{
        if (l->overflow) {
                /* Only a huge argv can do this: say so rather than print broken JSON. */
                fputs("{\"event\":\"error\",\"call\":\"output\",\"error\":\"line too long\"}\n",
                      stdout);
        } else {
                put(l, "}\n");
                fwrite(l->buf, 1, l->n, stdout);
        }
        fflush(stdout);
}

/* ---- clocks ---- */

uint64_t kl_now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t t0_ns;

double kl_t_ms(void)
{
        if (!t0_ns)
                t0_ns = kl_now_ns();
        return (double)(kl_now_ns() - t0_ns) / 1e6;
}

void kl_sleep_ns(uint64_t ns)
{
        struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull),
                              .tv_nsec = (long)(ns % 1000000000ull)};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

void kl_sleep_until(uint64_t at_ns)
{
        struct timespec ts = {.tv_sec = (time_t)(at_ns / 1000000000ull),
                              .tv_nsec = (long)(at_ns % 1000000000ull)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
}

/* ---- latency samples ---- */

int kl_lat_add(kl_lat *s, double ms)
{
        if (s->n == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 1024;
                double *v = realloc(s->v, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                s->v = v;
                s->cap = cap;
        }
        s->v[s->n++] = ms;
        return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

double kl_lat_quantile(kl_lat *s, double q)
{
        if (!s->n)
                return NAN;
        qsort(s->v, s->n, sizeof(*s->v), cmp_dbl);
        size_t rank = (size_t)ceil(q * (double)s->n); /* nearest rank, 1-based */
        if (rank < 1)
                rank = 1;
        if (rank > s->n)
                rank = s->n;
        return s->v[rank - 1];
}

void kl_lat_clear(kl_lat *s)
{
        s->n = 0;
}

void kl_lat_fini(kl_lat *s)
{
        free(s->v);
        s->v = NULL;
        s->n = s->cap = 0;
}
