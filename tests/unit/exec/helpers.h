/* SPDX-License-Identifier: Apache-2.0 */
/* helpers.h - shared fixtures of the executor tests: temp dirs, clocks, run-to-end loops */
#ifndef KERF_TEST_EXEC_HELPERS_H
#define KERF_TEST_EXEC_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec.h"

static inline uint64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline void sleep_ms(unsigned ms)
{
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

static inline int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return remove(p) < 0 && errno != ENOENT ? -1 : 0;
}

static inline void rm_rf(const char *dir)
{
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static inline char *make_tmpdir(void)
{
        char tmpl[] = "/tmp/kerf-exec-XXXXXX";
        char *d = mkdtemp(tmpl);
        return d ? strdup(d) : NULL;
}

/* Copies the executable `src` to `dir`/`name` (mode 0755) and returns the new path (free it),
 * or NULL: a program another uid runs must live where that uid can reach it, and the build
 * tree may sit under a private directory (root's home is 0700 on Debian). */
static inline char *stage_program(const char *src, const char *dir, const char *name)
{
        char *dst = NULL, buf[65536];
        ssize_t n = 0;
        int in = open(src, O_RDONLY | O_CLOEXEC), out = -1;
        if (in < 0 || asprintf(&dst, "%s/%s", dir, name) < 0) {
                dst = NULL;
                goto fail;
        }
        out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        if (out < 0)
                goto fail;
        while ((n = read(in, buf, sizeof(buf))) > 0)
                if (write(out, buf, (size_t)n) != n)
                        goto fail;
        if (n < 0 || fchmod(out, 0755) < 0)
                goto fail;
        close(in);
        close(out);
        return dst;
fail:
        if (in >= 0)
                close(in);
        if (out >= 0)
                close(out);
        free(dst);
        return NULL;
}

/* Reaps until task `id` ended (or timeout_ms passed); returns 0 and *ret, or -ETIMEDOUT. */
static inline int run_to_end(kerf_exec *ex, uint64_t id, unsigned timeout_ms, kerf_exec_exit *ret)
{
        uint64_t end = now_ms() + timeout_ms;
        while (now_ms() < end) {
                kerf_exec_exit e[8];
                int n = kerf_exec_reap(ex, now_ms(), e, 8);
                for (int i = 0; i < n; i++)
                        if (e[i].task_id == id) {
                                *ret = e[i];
                                return 0;
                        }
                sleep_ms(5);
        }
        return -ETIMEDOUT;
}

/* Kills and reaps whatever is left: tests never leave processes behind. */
static inline void drain(kerf_exec *ex)
{
        kerf_exec_stop_all(ex, KERF_EXEC_SHUTDOWN, 0, now_ms());
        uint64_t end = now_ms() + 5000;
        while (kerf_exec_count(ex) && now_ms() < end) {
                kerf_exec_exit e[8];
                kerf_exec_reap(ex, now_ms(), e, 8);
                sleep_ms(5);
        }
        while (waitpid(-1, NULL, WNOHANG) > 0) /* orphans re-parented to us (subreaper) */
                ;
}

/* Reads a whole small file into buf (NUL-terminated); returns length or -1. */
static inline ssize_t slurp(const char *path, char *buf, size_t n)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        ssize_t len = read(fd, buf, n - 1);
        close(fd);
        if (len < 0)
                return -1;
        buf[len] = '\0';
        return len;
}

/* Waits for a pid file written by the probe; returns the pid or -1. */
static inline pid_t wait_pidfile(const char *path, unsigned timeout_ms)
{
        char buf[32];
        uint64_t end = now_ms() + timeout_ms;
        while (now_ms() < end) {
                if (slurp(path, buf, sizeof(buf)) > 0)
                        return (pid_t)atoi(buf);
                sleep_ms(5);
        }
        return -1;
}

#endif /* KERF_TEST_EXEC_HELPERS_H */
