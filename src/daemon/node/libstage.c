/* SPDX-License-Identifier: Apache-2.0 */
/* libstage.c - the files kerfd hands to its tasks (the shim; on the simulated fleet the
 * simulated libcuda and NVML; the POC workload program kerf-load), copied at start into
 * <state>/lib where every task uid can read them, whatever the mode of the directories above
 * kerfd's install (a build tree in a 0700 home: the loader would skip an unreadable LD_PRELOAD
 * silently, issue 8 S5). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node.h"

static const char *const staged[] = {"libkerf-cuda.so", "libcuda.so.1", "libnvidia-ml.so.1"};
/* programs next to kerfd's binary that tasks run (docs/POC.md): staged 0755 */
static const char *const staged_bin[] = {"kerf-load"};

void kerfd__install_lib_dir(const char *bin_dir, char *out, size_t size)
{
        char probe[4200];
        snprintf(probe, sizeof(probe), "%s/../lib/kerf/libkerf-cuda.so", bin_dir);
        if (access(probe, F_OK) == 0)
                snprintf(out, size, "%s/../lib/kerf", bin_dir);
        else
                snprintf(out, size, "%s/../lib", bin_dir);
}

/* Copies from/name to dir/name with `mode` (a temp file renamed over the old copy). 0 when
 * copied, 1 when from/name does not exist (an old copy is removed), < 0 on an error. */
static int copy_one(const char *from, const char *dir, const char *name, mode_t mode)
{
        char src[4600], tmp[4600], dst[4600], buf[65536];
        int in, out, r = 0;
        ssize_t n;

        snprintf(src, sizeof(src), "%s/%s", from, name);
        snprintf(dst, sizeof(dst), "%s/%s", dir, name);
        snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
        in = open(src, O_RDONLY | O_CLOEXEC);
        if (in < 0) {
                if (errno != ENOENT)
                        return -errno;
                /* not built or not installed: nothing to hand out (the checks say so later) */
                (void)unlink(dst);
                return 1;
        }
        (void)unlink(tmp);
        out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (out < 0) {
                r = -errno;
                close(in);
                return r;
        }
        while ((n = read(in, buf, sizeof(buf))) != 0) {
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 || write(out, buf, (size_t)n) != n) {
                        r = n < 0 || errno ? -errno : -EIO;
                        break;
                }
        }
        close(in);
        if (r == 0 && fchmod(out, mode) < 0) /* whatever kerfd's umask */
                r = -errno;
        if (close(out) < 0 && r == 0)
                r = -errno;
        /* a rename: tasks running on the previous copy keep theirs */
        if (r == 0 && rename(tmp, dst) < 0)
                r = -errno;
        if (r < 0)
                (void)unlink(tmp);
        return r;
}

int kerfd__stage_libs(const char *from, const char *bin_dir, const char *state_dir, char *out,
                      size_t outlen)
{
        char dir[4500];
        struct stat sb;

        if (snprintf(dir, sizeof(dir), "%s/lib", state_dir) >= (int)sizeof(dir) ||
            strlen(dir) >= outlen)
                return -ENAMETOOLONG;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                goto fail;
        if (lstat(dir, &sb) < 0)
                goto fail;
        /* kerfd's own directory inside its state dir; never one someone else put there */
        if (!S_ISDIR(sb.st_mode) || sb.st_uid != geteuid() || (sb.st_mode & 022)) {
                log_error("%s: not a directory of kerfd's uid that only it can write; the "
                          "libraries are handed to tasks from %s",
                          dir, from);
                return -EPERM;
        }
        if ((sb.st_mode & 07777) != 0755 && chmod(dir, 0755) < 0)
                goto fail;
        for (size_t i = 0; i < sizeof(staged) / sizeof(staged[0]); i++) {
                int r = copy_one(from, dir, staged[i], 0644);
                if (r < 0) {
                        log_error("cannot copy %s/%s to %s: %s; the libraries are handed to "
                                  "tasks from %s",
                                  from, staged[i], dir, strerror(-r), from);
                        return r;
                }
        }
        /* programs are optional: one missing or not copied is logged, never fatal */
        for (size_t i = 0; bin_dir && i < sizeof(staged_bin) / sizeof(staged_bin[0]); i++) {
                int r = copy_one(bin_dir, dir, staged_bin[i], 0755);
                if (r == 1)
                        log_info("%s/%s not found: not staged in %s (tasks cannot run it from "
                                 "there)",
                                 bin_dir, staged_bin[i], dir);
                else if (r < 0)
                        log_warn("cannot copy %s/%s to %s: %s; tasks cannot run it from there",
                                 bin_dir, staged_bin[i], dir, strerror(-r));
        }
        snprintf(out, outlen, "%s", dir);
        return 0;
fail:
        log_error("%s: %s; the libraries are handed to tasks from %s", dir, strerror(errno), from);
        return -errno;
}
