/* SPDX-License-Identifier: Apache-2.0 */
/* test_fileio.c - kerf_file_read_all (src/common): whole files, limits, errors, pipes */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fileio.h"

static char dir[64];

static int setup(void **state)
{
        (void)state;
        strcpy(dir, "/tmp/kerf-fileio-XXXXXX");
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
        char cmd[128];
        (void)state;
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *data, size_t len)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, data, len), (ssize_t)len);
        close(fd);
}

static void reads_whole_files(void **state)
{
        char path[128], *buf = NULL;
        size_t len = 0;
        (void)state;
        snprintf(path, sizeof(path), "%s/a", dir);
        write_file(path, "hello\nworld", 11);
        assert_int_equal(kerf_file_read_all(path, 1 << 20, &buf, &len), 0);
        assert_int_equal(len, 11);
        assert_string_equal(buf, "hello\nworld"); /* NUL-terminated */
        free(buf);
        /* empty file: an empty string, not NULL */
        write_file(path, "", 0);
        assert_int_equal(kerf_file_read_all(path, 1 << 20, &buf, &len), 0);
        assert_int_equal(len, 0);
        assert_string_equal(buf, "");
        free(buf);
        /* larger than one read chunk (64 KiB), exactly at the limit */
        size_t big = 200000;
        char *data = malloc(big);
        assert_non_null(data);
        for (size_t i = 0; i < big; i++)
                data[i] = (char)('a' + i % 26);
        write_file(path, data, big);
        assert_int_equal(kerf_file_read_all(path, big, &buf, &len), 0);
        assert_int_equal(len, big);
        assert_memory_equal(buf, data, big);
        free(buf);
        free(data);
}

static void errors_leave_outputs_alone(void **state)
{
        char path[128], *buf = (char *)0x1;
        size_t len = 77;
        (void)state;
        snprintf(path, sizeof(path), "%s/b", dir);
        write_file(path, "0123456789", 10);
        assert_int_equal(kerf_file_read_all(path, 9, &buf, &len), -EFBIG);
        assert_int_equal(kerf_file_read_all(dir, 100, &buf, &len), -EISDIR);
        snprintf(path, sizeof(path), "%s/missing", dir);
        assert_int_equal(kerf_file_read_all(path, 100, &buf, &len), -ENOENT);
        assert_int_equal(kerf_file_read_all(NULL, 100, &buf, &len), -EINVAL);
        assert_int_equal(kerf_file_read_all(path, 100, NULL, &len), -EINVAL);
        assert_int_equal(kerf_file_read_all(path, 100, &buf, NULL), -EINVAL);
        assert_ptr_equal(buf, (char *)0x1);
        assert_int_equal(len, 77);
}

/* A pipe has no size: the limit is enforced while reading. */
static void pipes(void **state)
{
        int p[2];
        char path[64], *buf = NULL;
        size_t len = 0;
        (void)state;
        assert_int_equal(pipe(p), 0);
        assert_int_equal(write(p[1], "abcdef", 6), 6);
        close(p[1]);
        snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
        assert_int_equal(kerf_file_read_all(path, 100, &buf, &len), 0);
        assert_string_equal(buf, "abcdef");
        free(buf);
        close(p[0]);
        assert_int_equal(pipe(p), 0);
        assert_int_equal(write(p[1], "abcdef", 6), 6);
        close(p[1]);
        snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
        assert_int_equal(kerf_file_read_all(path, 5, &buf, &len), -EFBIG);
        close(p[0]);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(reads_whole_files),
            cmocka_unit_test(errors_leave_outputs_alone),
            cmocka_unit_test(pipes),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
