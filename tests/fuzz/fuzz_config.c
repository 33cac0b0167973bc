/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_config.c - libFuzzer target: kerfd's config file (kerfd_config_load, config.c) from a
 * memfd, over the defaults, then kerfd_config_check. A refusal must say why. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fd = -1;
static char path[64];
static kerfd_config cfg;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
        (void)argc;
        (void)argv;
        fd = memfd_create("kerfd.yaml", 0);
        if (fd < 0)
                abort();
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char err[1024] = "";
        int r;

        if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
                abort();
        kerfd_config_defaults(&cfg);
        r = kerfd_config_load(&cfg, path, err, sizeof(err));
        if (r < 0 && !err[0])
                abort(); /* every refusal says why */
        if (r == 0)
                (void)kerfd_config_check(&cfg, err, sizeof(err));
        return 0;
}
