/* SPDX-License-Identifier: Apache-2.0 */
/* shard.c - the option value parsers of spank_kerf.so (the shard rule is include/kerf/shard.h) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerf/units.h"
#include "spank_kerf.h"

int kerf_spank_parse_mem(const char *s, uint64_t *ret, char *err, size_t errlen)
{
        uint64_t v;
        int r = kerf_parse_size(s, &v, err, errlen);

        if (r < 0)
                return r;
        if (v == 0 || v > KERF_MAX_GPU_MEM_BYTES) {
                if (err && errlen)
                        snprintf(err, errlen, "'%.40s' is not in 1B..1PiB", s);
                return -EINVAL;
        }
        *ret = v;
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
