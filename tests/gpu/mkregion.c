/* SPDX-License-Identifier: Apache-2.0 */
/* mkregion.c - creates a slice region for tests/gpu/run.sh (what kerfd does for a task) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kerf/slice_abi.h"

/*
 *   mkregion PATH MEMORY_LIMIT DEVICE_MEMORY COMPUTE_PCT [COMPUTE_LIMIT_PCT]
 *
 * Byte counts in bytes; COMPUTE_LIMIT_PCT defaults to COMPUTE_PCT (no burst). The region is
 * created with kerf_slice_region_create (mode 0660, owned by the caller), as kerfd does.
 */
int main(int argc, char **argv)
{
        if (argc != 5 && argc != 6) {
                fprintf(stderr, "usage: mkregion PATH MEMORY_LIMIT DEVICE_MEMORY COMPUTE_PCT "
                                "[COMPUTE_LIMIT_PCT]\n");
                return 2;
        }
        struct kerf_slice_init in = {
            .memory_limit = strtoull(argv[2], NULL, 10),
            .device_memory = strtoull(argv[3], NULL, 10),
            .compute_pct = (uint32_t)strtoul(argv[4], NULL, 10),
            .unit_id = 1,
            .task_id = 1,
        };
        in.compute_limit_pct = argc == 6 ? (uint32_t)strtoul(argv[5], NULL, 10) : in.compute_pct;
        int r = kerf_slice_region_create(argv[1], getuid(), getgid(), &in);
        if (r < 0) {
                fprintf(stderr, "mkregion: %s: %s\n", argv[1], strerror(-r));
                return 1;
        }
        return 0;
}
