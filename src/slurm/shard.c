/* SPDX-License-Identifier: Apache-2.0 */
/* shard.c - the option value parsers of spank_kerf.so (the shard rule is include/kerf/shard.h) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "spank_kerf.h"

int kerf_spank_parse_size(const char *s, uint64_t *ret)
{
        char *end;
        unsigned long long v;
        unsigned shift = 0;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || end == s)
                return -EINVAL;
        if (*end) {
                switch (*end) {
                case 'k':
                case 'K':
                        shift = 10;
                        break;
                case 'm':
                case 'M':
                        shift = 20;
                        break;
                case 'g':
                case 'G':
                        shift = 30;
                        break;
                case 't':
                case 'T':
                        shift = 40;
                        break;
                default:
                        return -EINVAL;
                }
                end++;
                if (*end && strcasecmp(end, "iB") != 0 && strcasecmp(end, "B") != 0)
                        return -EINVAL;
        }
        if (v == 0 || (shift && v > (UINT64_MAX >> shift)))
                return -EINVAL;
        *ret = (uint64_t)v << shift;
        return 0;
}

int kerf_spank_parse_pct(const char *s, unsigned lo, unsigned *ret)
{
        char *end;
        long v;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || *end || v < (long)lo || v > 100)
                return -EINVAL;
        *ret = (unsigned)v;
        return 0;
}
