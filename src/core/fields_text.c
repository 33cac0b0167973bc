/* SPDX-License-Identifier: Apache-2.0 */
/* fields_text.c - field descriptors (kerf/fields.h) applied to YAML scalars: the text-side
 * validator, its words (the format of kerf_field_describe) and the docs type column of a YAML
 * file's table (docs/FLEET.md) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kerf/core.h"
#include "kerf/fields.h"

/* "64" or "0.5": thousandths as a number with up to 3 decimals */
static void milli_words(int64_t v, char *buf, size_t len)
{
        if (v % 1000 == 0)
                snprintf(buf, len, "%lld", (long long)(v / 1000));
        else
                snprintf(buf, len, "%lld.%03lld", (long long)(v / 1000), (long long)(v % 1000));
}

char *kerf_field_describe_text(const kerf_field *f, char *buf, size_t len)
{
        char a[KERF_UNITS_BUF], b[KERF_UNITS_BUF];

        switch (f->type) {
        case KERF_FIELD_STRING:
                if (!(f->flags & KERF_FIELD_TOKEN))
                        return kerf_field_describe(f, buf, len);
                snprintf(buf, len, "%lld..%lld printable characters, no spaces", (long long)f->min,
                         (long long)f->max);
                break;
        case KERF_FIELD_INT:
                if (!(f->flags & KERF_FIELD_MILLI))
                        return kerf_field_describe(f, buf, len);
                milli_words(f->min, a, sizeof(a));
                milli_words(f->max, b, sizeof(b));
                snprintf(buf, len, "a number %s..%s with up to 3 decimals, like 64 or 0.5", a, b);
                break;
        case KERF_FIELD_BOOL:
                snprintf(buf, len, "true or false (or yes/no, on/off)");
                break;
        case KERF_FIELD_SIZE:
                snprintf(buf, len, "a size with a unit such as 16GiB or 512MiB, %s..%s",
                         kerf_format_size((uint64_t)f->min, a, sizeof(a)),
                         kerf_format_size((uint64_t)f->max, b, sizeof(b)));
                break;
        case KERF_FIELD_DURATION:
                snprintf(buf, len, "a duration such as 90, 15m or 1h30m, %s..%s",
                         kerf_format_duration((uint64_t)f->min, a, sizeof(a)),
                         kerf_format_duration((uint64_t)f->max, b, sizeof(b)));
                break;
        case KERF_FIELD_STRLIST:
                if (f->max > 0)
                        snprintf(buf, len, "a list of %lld..%lld entries", (long long)f->min,
                                 (long long)f->max);
                else
                        snprintf(buf, len, "a list of at least %lld entr%s", (long long)f->min,
                                 f->min == 1 ? "y" : "ies");
                break;
        case KERF_FIELD_OBJECT:
                snprintf(buf, len, "a mapping");
                break;
        default:
                return kerf_field_describe(f, buf, len);
        }
        return buf;
}

static int bad_text(const kerf_field *f, const char *s, char *msg, size_t len)
{
        char d[320];
        snprintf(msg, len, "%s: %s, got '%s'", f->name, kerf_field_describe_text(f, d, sizeof(d)),
                 s);
        return -EINVAL;
}

/* A whole decimal integer, optionally signed. */
static bool text_int(const char *s, int64_t *ret)
{
        char *end;
        long long x;

        if (!*s || (*s != '-' && (*s < '0' || *s > '9')))
                return false;
        errno = 0;
        x = strtoll(s, &end, 10);
        if (*end || errno)
                return false;
        *ret = x;
        return true;
}

/* "112" or "0.5" -> thousandths (at most 7 whole digits, 3 decimals). */
static bool text_milli(const char *s, int64_t *ret)
{
        int64_t whole = 0, milli = 0;
        unsigned nd = 0, nf = 0;
        const char *p;

        for (p = s; *p >= '0' && *p <= '9'; p++, nd++)
                if (nd < 9)
                        whole = whole * 10 + (*p - '0');
        if (*p == '.')
                for (p++; *p >= '0' && *p <= '9'; p++, nf++)
                        if (nf < 3)
                                milli = milli * 10 + (*p - '0');
        if (nd == 0 || nd > 7 || nf > 3 || *p)
                return false;
        for (unsigned i = nf; i < 3; i++)
                milli *= 10;
        *ret = whole * 1000 + milli;
        return true;
}

static bool text_bool(const char *s, bool *ret)
{
        static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no",
                                                                               "off"};
        for (size_t i = 0; i < 3; i++) {
                if (strcasecmp(s, yes[i]) == 0 || strcasecmp(s, no[i]) == 0) {
                        *ret = strcasecmp(s, yes[i]) == 0;
                        return true;
                }
        }
        return false;
}

static bool printable(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
                        return false;
        return true;
}

/* a size or a duration within f's bounds, by units.h's parsers */
static int text_units(const kerf_field *f, const char *s, uint64_t *ret, char *msg, size_t len)
{
        char why[256], d[320];
        uint64_t v;
        int r = f->type == KERF_FIELD_SIZE ? kerf_parse_size(s, &v, why, sizeof(why))
                                           : kerf_parse_duration(s, &v, why, sizeof(why));
        if (r < 0) {
                snprintf(msg, len, "%s: %s", f->name, why);
                return -EINVAL;
        }
        if (v < (uint64_t)f->min || v > (uint64_t)f->max) {
                snprintf(msg, len, "%s: %s, got '%s'", f->name,
                         kerf_field_describe_text(f, d, sizeof(d)), s);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

int kerf_field_check_text(const kerf_field *f, const char *s, kerf_field_value *ret, char *msg,
                          size_t len)
{
        kerf_field_value out = {0};
        size_t sl;

        if (!s)
                s = "";
        sl = strlen(s);
        switch (f->type) {
        case KERF_FIELD_NAME:
                if (!(f->min == 0 && !*s) && !kerf_name_ok(s))
                        return bad_text(f, s, msg, len);
                out.s = s;
                break;
        case KERF_FIELD_STRING:
        case KERF_FIELD_PATH:
                if ((int64_t)sl < f->min || (int64_t)sl > f->max ||
                    (f->type == KERF_FIELD_PATH && s[0] != '/') ||
                    ((f->flags & KERF_FIELD_TOKEN) && !printable(s)))
                        return bad_text(f, s, msg, len);
                out.s = s;
                break;
        case KERF_FIELD_ENUM: {
                int e = f->value_parse(s);
                if (e < 0 || e < f->min || e > f->max)
                        return bad_text(f, s, msg, len);
                out.i = e;
                out.s = s;
                break;
        }
        case KERF_FIELD_INT:
        case KERF_FIELD_PERCENT:
                if (!((f->flags & KERF_FIELD_MILLI) ? text_milli(s, &out.i)
                                                    : text_int(s, &out.i)) ||
                    out.i < f->min || out.i > f->max)
                        return bad_text(f, s, msg, len);
                break;
        case KERF_FIELD_BOOL:
                if (!text_bool(s, &out.b))
                        return bad_text(f, s, msg, len);
                break;
        case KERF_FIELD_SIZE:
        case KERF_FIELD_DURATION: {
                int r = text_units(f, s, &out.u, msg, len);
                if (r < 0)
                        return r;
                out.i = (int64_t)out.u;
                break;
        }
        default: /* a list or a mapping is its owner's: never a scalar */
                return bad_text(f, s, msg, len);
        }
        *ret = out;
        return 0;
}

char *kerf_field_doc_type_text(const kerf_field *f, char *buf, size_t len)
{
        char a[KERF_UNITS_BUF], b[KERF_UNITS_BUF];

        switch (f->type) {
        case KERF_FIELD_STRING:
                snprintf(buf, len, "string %lld..%lld%s", (long long)f->min, (long long)f->max,
                         f->flags & KERF_FIELD_TOKEN ? " (no spaces)" : " bytes");
                break;
        case KERF_FIELD_INT:
                if (!(f->flags & KERF_FIELD_MILLI))
                        return kerf_field_doc_type(f, buf, len);
                milli_words(f->min, a, sizeof(a));
                milli_words(f->max, b, sizeof(b));
                snprintf(buf, len, "number %s..%s (3 decimals)", a, b);
                break;
        case KERF_FIELD_SIZE:
                snprintf(buf, len, "size %s..%s", kerf_format_size((uint64_t)f->min, a, sizeof(a)),
                         kerf_format_size((uint64_t)f->max, b, sizeof(b)));
                break;
        case KERF_FIELD_DURATION:
                snprintf(buf, len, "duration %s..%s",
                         kerf_format_duration((uint64_t)f->min, a, sizeof(a)),
                         kerf_format_duration((uint64_t)f->max, b, sizeof(b)));
                break;
        case KERF_FIELD_STRLIST:
                if (f->max > 0)
                        snprintf(buf, len, "list %lld..%lld", (long long)f->min, (long long)f->max);
                else
                        snprintf(buf, len, "list %lld..", (long long)f->min);
                break;
        case KERF_FIELD_OBJECT:
                snprintf(buf, len, "mapping");
                break;
        default:
                return kerf_field_doc_type(f, buf, len);
        }
        return buf;
}
