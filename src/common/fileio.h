/* SPDX-License-Identifier: Apache-2.0 */
/* fileio.h - reading a whole file into memory (the one helper every tool and library uses) */
#ifndef KERF_FILEIO_H
#define KERF_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

/* Reads the file at `path` whole (regular file, pipe or character device; opened O_CLOEXEC)
 * and NUL-terminates it. On success stores the buffer in *ret (release with free()) and its
 * length, without the NUL, in *ret_len, and returns 0. Returns -EINVAL (NULL argument),
 * -EFBIG (more than `max` bytes), -ENOMEM, or the -errno of open/read (-ENOENT, -EISDIR, ...);
 * *ret and *ret_len are untouched on failure. Thread-safe; does not print. */
int kerf_file_read_all(const char *path, size_t max, char **ret, size_t *ret_len);

/* Reads at most `len` - 1 bytes of a small file (a /proc entry) with one read(2) into `buf`
 * and NUL-terminates them; `len` must be at least 1. Returns the bytes read, or -1 when the
 * file cannot be opened or read. */
ssize_t kerf_file_read_small(const char *path, char *buf, size_t len);

#endif /* KERF_FILEIO_H */
