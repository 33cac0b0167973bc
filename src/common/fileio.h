/* SPDX-License-Identifier: Apache-2.0 */
/* fileio.h - reading a whole file into memory (the one helper every tool and library uses) */
#ifndef KERF_FILEIO_H
#define KERF_FILEIO_H

#include <stddef.h>

/* Reads the file at `path` whole (regular file, pipe or character device; opened O_CLOEXEC)
 * and NUL-terminates it. On success stores the buffer in *ret (release with free()) and its
 * length, without the NUL, in *ret_len, and returns 0. Returns -EINVAL (NULL argument),
 * -EFBIG (more than `max` bytes), -ENOMEM, or the -errno of open/read (-ENOENT, -EISDIR, ...);
 * *ret and *ret_len are untouched on failure. Thread-safe; does not print. */
int kerf_file_read_all(const char *path, size_t max, char **ret, size_t *ret_len);

#endif /* KERF_FILEIO_H */
