/* SPDX-License-Identifier: Apache-2.0 */
/* daemon_log.c - kerfd_log for fuzz targets that link kerfd's sources without main.c (where
 * kerfd's own lives): quiet, and weak so that a strong one elsewhere wins. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "node.h"

__attribute__((weak)) void kerfd_log(const char *level, const char *fmt, ...)
{
        va_list ap;
        if (!getenv("KERF_FUZZ_LOG"))
                return;
        va_start(ap, fmt);
        fprintf(stderr, "%s: ", level);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}
