/* SPDX-License-Identifier: Apache-2.0 */
/* fileio.c - reading a whole file into memory */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"

int kerf_file_read_all(const char *path, size_t max, char **ret, size_t *ret_len)
{
        struct stat sb;
        char *buf = NULL;
        size_t len = 0, cap = 0;
        int rc = 0;
        if (!path || !ret || !ret_len)
                return -EINVAL;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &sb) < 0) {
                rc = -errno;
                goto out;
        }
        if (S_ISDIR(sb.st_mode)) {
                rc = -EISDIR;
                goto out;
        }
        /* The size is only a hint (a pipe has none, a file may grow): read until EOF. */
        if (S_ISREG(sb.st_mode) && (uint64_t)sb.st_size > max) {
                rc = -EFBIG;
                goto out;
        }
        for (;;) {
                if (cap - len < 2) { /* room for at least one byte and the NUL */
                        size_t nc = cap ? cap * 2 : 65536;
                        if (nc < cap) {
                                rc = -EFBIG;
                                goto out;
                        }
                        char *nb = realloc(buf, nc);
                        if (!nb) {
                                rc = -ENOMEM;
                                goto out;
                        }
                        buf = nb;
                        cap = nc;
                }
                ssize_t k = read(fd, buf + len, cap - len - 1);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        rc = -errno;
                        goto out;
                }
                if (k == 0)
                        break;
                len += (size_t)k;
                if (len > max) {
                        rc = -EFBIG;
                        goto out;
                }
        }
        buf[len] = '\0'; /* the first pass of the loop always allocated */
        *ret = buf;
        *ret_len = len;
        buf = NULL;
out:
        free(buf);
        close(fd);
        return rc;
}

ssize_t kerf_file_read_small(const char *path, char *buf, size_t len)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        ssize_t n = read(fd, buf, len - 1);
        close(fd);
        if (n < 0)
                return -1;
        buf[n] = '\0';
        return n;
}
