/* SPDX-License-Identifier: Apache-2.0 */
/* units.c - the one parser and formatter of sizes and durations (docs/UNITS.md); libc only */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kerf/units.h"

__attribute__((format(printf, 3, 4))) static void say(char *err, size_t errlen, const char *fmt,
                                                      ...)
{
        va_list ap;

        if (!err || !errlen)
                return;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
}

/* ---- sizes -------------------------------------------------------------------------------- */

/* floor(frac * 2^shift / den) without overflow: long division one bit at a time. frac < den. */
static uint64_t scaled_fraction(uint64_t frac, uint64_t den, unsigned shift)
{
        uint64_t q = 0, rem = frac;

        for (unsigned i = 0; i < shift; i++) {
                q <<= 1;
                rem <<= 1;
                if (rem >= den) {
                        q |= 1;
                        rem -= den;
                }
        }
        return q;
}

static const struct {
        const char *name[2]; /* the IEC name and Slurm's one-letter name: the same unit */
        const char *decimal; /* its SI look-alike, refused as ambiguous */
        unsigned shift;
} size_units[] = {
    {{"B", NULL}, NULL, 0},   {{"KiB", "K"}, "KB", 10}, {{"MiB", "M"}, "MB", 20},
    {{"GiB", "G"}, "GB", 30}, {{"TiB", "T"}, "TB", 40}, {{"PiB", "P"}, "PB", 50},
};

int kerf_parse_size(const char *s, uint64_t *ret, char *err, size_t errlen)
{
        uint64_t ip = 0, frac = 0, den = 1, v;
        unsigned ndig = 0, nfrac = 0;
        bool big = false;
        const char *p = s, *unit;
        int numlen;

        if (!s || !ret) {
                say(err, errlen, "no size given: write %s", KERF_SIZE_FORMS);
                return -EINVAL;
        }
        for (; *p >= '0' && *p <= '9'; p++, ndig++) {
                uint64_t d = (uint64_t)(*p - '0');
                if (ip > (UINT64_MAX - d) / 10)
                        big = true;
                else
                        ip = ip * 10 + d;
        }
        if (*p == '.') {
                for (p++; *p >= '0' && *p <= '9'; p++, nfrac++) {
                        if (nfrac >= 9) {
                                say(err, errlen, "'%.40s': at most 9 decimals", s);
                                return -EINVAL;
                        }
                        frac = frac * 10 + (uint64_t)(*p - '0');
                        den *= 10;
                }
                if (nfrac == 0)
                        ndig = 0; /* "1." */
        }
        numlen = (int)(p - s);
        unit = p;
        if (*unit == ' ' && unit[1] && unit[1] != ' ')
                unit++;
        if (ndig == 0) {
                say(err, errlen, "'%.40s' is not a size: write %s", s, KERF_SIZE_FORMS);
                return -EINVAL;
        }
        if (!*p) {
                if (!big && ip == 0 && frac == 0) {
                        *ret = 0; /* zero is zero in every unit */
                        return 0;
                }
                say(err, errlen, "'%.40s' has no unit: write %.*sGiB or %.*sMiB", s, numlen, s,
                    numlen, s);
                return -EINVAL;
        }
        for (size_t u = 0; u < sizeof(size_units) / sizeof(size_units[0]); u++) {
                unsigned shift = size_units[u].shift;
                if (size_units[u].decimal && !strcasecmp(unit, size_units[u].decimal)) {
                        say(err, errlen,
                            "'%.40s' is ambiguous (powers of 1000 or of 1024?): write %.*s%s "
                            "(kerf's units are binary)",
                            s, numlen, s, size_units[u].name[0]);
                        return -EINVAL;
                }
                if (strcasecmp(unit, size_units[u].name[0]) != 0 &&
                    (!size_units[u].name[1] || strcasecmp(unit, size_units[u].name[1]) != 0))
                        continue;
                if (shift == 0 && nfrac) {
                        say(err, errlen, "'%.40s': not a whole number of bytes", s);
                        return -EINVAL;
                }
                if (big || (shift && ip > (UINT64_MAX >> shift)))
                        goto range;
                v = ip << shift;
                if (nfrac) {
                        uint64_t fb = scaled_fraction(frac, den, shift);
                        if (v > UINT64_MAX - fb)
                                goto range;
                        v += fb;
                }
                *ret = v;
                return 0;
        }
        say(err, errlen, "'%.40s' is not a size: write %s", s, KERF_SIZE_FORMS);
        return -EINVAL;
range:
        say(err, errlen, "'%.40s' is too large (a size is at most 16383PiB)", s);
        return -ERANGE;
}

char *kerf_format_size(uint64_t bytes, char *buf, size_t cap)
{
        size_t u = 0;
        uint64_t unit = 1, whole, hund;

        if (!buf || !cap)
                return buf;
        while (u + 1 < sizeof(size_units) / sizeof(size_units[0]) &&
               bytes >= (1ULL << size_units[u + 1].shift))
                u++;
        unit = 1ULL << size_units[u].shift;
        whole = bytes / unit;
        /* remainder < 2^50: times 100 stays below 2^57 */
        hund = ((bytes % unit) * 100 + unit / 2) / unit;
        if (hund == 100) {
                whole++;
                hund = 0;
        }
        if (whole == 1024 && hund == 0 && u + 1 < sizeof(size_units) / sizeof(size_units[0])) {
                u++; /* 1023.999MiB rounds to 1GiB, not 1024MiB */
                whole = 1;
        }
        if (bytes % unit == 0 || hund == 0)
                snprintf(buf, cap, "%llu%s", (unsigned long long)whole, size_units[u].name[0]);
        else if (hund % 10 == 0)
                snprintf(buf, cap, "%llu.%llu%s", (unsigned long long)whole,
                         (unsigned long long)(hund / 10), size_units[u].name[0]);
        else
                snprintf(buf, cap, "%llu.%02llu%s", (unsigned long long)whole,
                         (unsigned long long)hund, size_units[u].name[0]);
        return buf;
}

/* ---- durations ---------------------------------------------------------------------------- */

/* Reads 1+ decimal digits at *pp into *ret. 0, -EINVAL (no digit) or -ERANGE. */
static int digits(const char **pp, uint64_t *ret)
{
        const char *p = *pp;
        uint64_t v = 0;
        bool big = false;

        for (; *p >= '0' && *p <= '9'; p++) {
                uint64_t d = (uint64_t)(*p - '0');
                if (v > (UINT64_MAX - d) / 10)
                        big = true;
                else
                        v = v * 10 + d;
        }
        if (p == *pp)
                return -EINVAL;
        *pp = p;
        if (big)
                return -ERANGE;
        *ret = v;
        return 0;
}

/* *acc += n * mul, or false on overflow. */
static bool add_mul(uint64_t *acc, uint64_t n, uint64_t mul)
{
        if (mul && n > UINT64_MAX / mul)
                return false;
        if (*acc > UINT64_MAX - n * mul)
                return false;
        *acc += n * mul;
        return true;
}

/* "1h30m": integers with units d h m s, largest first, each once. */
static int parse_units(const char *s, uint64_t *ret)
{
        static const char names[] = "dhms";
        static const uint64_t secs[] = {86400, 3600, 60, 1};
        const char *p = s;
        uint64_t total = 0, n;
        int next = 0, r;

        while (*p) {
                const char *at;
                if ((r = digits(&p, &n)) < 0)
                        return r;
                at = *p ? strchr(names + next, *p) : NULL;
                if (!at)
                        return -EINVAL;
                if (!add_mul(&total, n, secs[at - names]))
                        return -ERANGE;
                next = (int)(at - names) + 1;
                p++;
        }
        *ret = total;
        return 0;
}

/* Slurm's [D-]HH:MM:SS, MM:SS, D-HH, D-HH:MM. -EDOM: a field out of its range. */
static int parse_slurm(const char *s, uint64_t *ret)
{
        const char *p = s;
        uint64_t f[3], days = 0, total = 0;
        bool has_days = false;
        int nf = 0, r;

        if (strchr(s, '-')) {
                if ((r = digits(&p, &days)) < 0)
                        return r;
                if (*p++ != '-')
                        return -EINVAL;
                has_days = true;
        }
        for (;;) {
                if (nf == 3)
                        return -EINVAL;
                if ((r = digits(&p, &f[nf])) < 0)
                        return r;
                nf++;
                if (!*p)
                        break;
                if (*p++ != ':')
                        return -EINVAL;
        }
        if (!has_days && nf < 2)
                return -EINVAL;
        /* fields after the first are minutes or seconds; with days, the first is hours */
        for (int i = 1; i < nf; i++)
                if (f[i] > 59)
                        return -EDOM;
        if (has_days && f[0] > 23)
                return -EDOM;
        if (!add_mul(&total, days, 86400))
                return -ERANGE;
        if (has_days || nf == 3) {
                static const uint64_t mul[] = {3600, 60, 1};
                for (int i = 0; i < nf; i++)
                        if (!add_mul(&total, f[i], mul[i]))
                                return -ERANGE;
        } else if (!add_mul(&total, f[0], 60) || !add_mul(&total, f[1], 1)) {
                return -ERANGE;
        }
        *ret = total;
        return 0;
}

int kerf_parse_duration(const char *s, uint64_t *ret_s, char *err, size_t errlen)
{
        const char *p = s;
        uint64_t v = 0;
        int r;

        if (!s || !ret_s) {
                say(err, errlen, "no duration given: write %s", KERF_DURATION_FORMS);
                return -EINVAL;
        }
        if (!*s)
                r = -EINVAL;
        else if (strspn(s, "0123456789") == strlen(s))
                r = digits(&p, &v);
        else if (strpbrk(s, ":-"))
                r = parse_slurm(s, &v);
        else
                r = parse_units(s, &v);
        if (r == -ERANGE) {
                say(err, errlen, "'%.40s' is too long a duration", s);
                return -ERANGE;
        }
        if (r == -EDOM) {
                say(err, errlen,
                    "'%.40s': minutes and seconds are 0..59, hours after 'D-' 0..23 "
                    "(Slurm's [D-]HH:MM:SS)",
                    s);
                return -EINVAL;
        }
        if (r < 0) {
                say(err, errlen, "'%.40s' is not a duration: write %s", s, KERF_DURATION_FORMS);
                return -EINVAL;
        }
        *ret_s = v;
        return 0;
}

char *kerf_format_duration(uint64_t s, char *buf, size_t cap)
{
        static const char names[] = "dhms";
        static const uint64_t secs[] = {86400, 3600, 60, 1};
        size_t o = 0;

        if (!buf || !cap)
                return buf;
        buf[0] = '\0';
        if (s == 0) {
                snprintf(buf, cap, "0s");
                return buf;
        }
        for (int i = 0; i < 4; i++) {
                uint64_t n = s / secs[i];
                s %= secs[i];
                if (!n)
                        continue;
                int w = snprintf(buf + o, cap - o, "%llu%c", (unsigned long long)n, names[i]);
                if (w < 0 || (size_t)w >= cap - o)
                        break;
                o += (size_t)w;
        }
        return buf;
}
