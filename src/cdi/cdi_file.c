/* SPDX-License-Identifier: Apache-2.0 */
/* cdi_file.c - kerf's CDI spec files: atomic write, and removal of only the files kerf wrote */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kerf_cdi.h"

int kerf_cdi_file_name(const char *kind, const char *tag, char *out, size_t cap)
{
        char base[400];
        int len;
        if (!kerf_cdi_kind_ok(kind) || (tag && !kerf_cdi_name_ok(tag)) ||
            strlen(kind) >= sizeof(base))
                return -EINVAL;
        snprintf(base, sizeof(base), "%s", kind);
        *strchr(base, '/') = '-';
        len =
            tag ? snprintf(out, cap, "%s_%s.json", base, tag) : snprintf(out, cap, "%s.json", base);
        return len < 0 || (size_t)len >= cap ? -ENAMETOOLONG : 0;
}

static int fail(char *err, size_t errlen, int r, const char *what, const char *path)
{
        if (err && errlen)
                snprintf(err, errlen, "%s %s: %s", what, path, strerror(-r));
        return r;
}

int kerf_cdi_spec_write(const char *dir, const char *file, const json_t *spec, char *err,
                        size_t errlen)
{
        char tmp[4200], dst[4200];
        int fd = -1, dfd = -1, r;

        if ((r = kerf_cdi_dir_check(dir, err, errlen)) < 0)
                return r;
        if (!file || !*file || strchr(file, '/') || file[0] == '.' || strlen(file) < 6 ||
            strcmp(file + strlen(file) - 5, ".json")) {
                if (err && errlen)
                        snprintf(err, errlen, "cdi spec file \"%s\": not NAME.json",
                                 file ? file : "");
                return -EINVAL;
        }
        if ((r = kerf_cdi_spec_check(spec, err, errlen)) < 0)
                return r;
        if ((size_t)snprintf(dst, sizeof(dst), "%s/%s", dir, file) >= sizeof(dst) ||
            (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.%ld.tmp", dir, file, (long)getpid()) >=
                sizeof(tmp))
                return fail(err, errlen, -ENAMETOOLONG, "cdi spec", dir);
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return fail(err, errlen, -errno, "cannot create", dir);
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return fail(err, errlen, -errno, "cannot open", dir);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST && unlink(tmp) == 0) /* a leftover of a crashed writer */
                fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
                r = fail(err, errlen, -errno, "cannot create", tmp);
                goto out;
        }
        if (json_dumpfd(spec, fd, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 ||
            write(fd, "\n", 1) != 1) {
                r = fail(err, errlen, errno ? -errno : -EIO, "cannot write", tmp);
                goto out_unlink;
        }
        if (fchmod(fd, 0644) < 0 || fsync(fd) < 0) {
                r = fail(err, errlen, -errno, "cannot sync", tmp);
                goto out_unlink;
        }
        if (close(fd) < 0) {
                fd = -1;
                r = fail(err, errlen, -errno, "cannot close", tmp);
                goto out_unlink;
        }
        fd = -1;
        if (rename(tmp, dst) < 0) {
                r = fail(err, errlen, -errno, "cannot rename to", dst);
                goto out_unlink;
        }
        (void)fsync(dfd); /* the rename itself durable; a failure here leaves a valid file */
        r = 0;
        goto out;
out_unlink:
        unlink(tmp);
out:
        if (fd >= 0)
                close(fd);
        close(dfd);
        return r;
}

/* "<vendor>-<class>_task-<id>.json" of kind: the id, or 0 when the name is not one. */
static uint64_t task_of_name(const char *kind, const char *file)
{
        char prefix[400];
        size_t pl;
        const char *p;
        char *end;
        unsigned long long id;
        if (kerf_cdi_file_name(kind, "task-0", prefix, sizeof(prefix)) < 0)
                return 0;
        pl = strlen(prefix) - strlen("0.json"); /* "<vendor>-<class>_task-" */
        if (strncmp(file, prefix, pl) != 0)
                return 0;
        p = file + pl;
        if (*p < '1' || *p > '9')
                return 0;
        errno = 0;
        id = strtoull(p, &end, 10);
        if (errno || strcmp(end, ".json") != 0)
                return 0;
        return id;
}

static bool has_env(const json_t *edits, const char *kv)
{
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(edits, "env"), i, v)
        {
                if (json_is_string(v) && !strcmp(json_string_value(v), kv))
                        return true;
        }
        return false;
}

int kerf_cdi_task_spec_owned(const char *dir, const char *file, const char *kind, const char *owner,
                             uint64_t *ret_task)
{
        char path[4400], want[96], name[64];
        uint64_t id = task_of_name(kind, file);
        struct stat st;
        json_t *spec, *devs, *d;
        json_error_t je;
        int fd, owned = 0;

        if (!id || !owner || !*owner)
                return 0;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
                return 0;
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return errno == ENOENT || errno == ELOOP ? 0 : -errno;
        if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > 1024 * 1024) {
                close(fd);
                return 0;
        }
        spec = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
        close(fd);
        devs = json_object_get(spec, "devices");
        snprintf(name, sizeof(name), "task-%" PRIu64, id);
        if (spec && kerf_cdi_spec_check(spec, NULL, 0) == 0 &&
            !strcmp(json_string_value(json_object_get(spec, "kind")), kind) &&
            json_array_size(devs) == 1 && (d = json_array_get(devs, 0)) &&
            !strcmp(json_string_value(json_object_get(d, "name")), name)) {
                json_t *e = json_object_get(d, "containerEdits");
                snprintf(want, sizeof(want), "KERF_TASK_ID=%" PRIu64, id);
                owned = has_env(e, want);
                snprintf(want, sizeof(want), "%s=%s", KERF_CDI_OWNER_ENV, owner);
                owned = owned && has_env(e, want);
        }
        json_decref(spec);
        if (owned && ret_task)
                *ret_task = id;
        return owned;
}

int kerf_cdi_task_spec_remove(const char *dir, const char *kind, uint64_t task, const char *owner)
{
        char file[400], tag[40], path[4400];
        int r;
        snprintf(tag, sizeof(tag), "task-%" PRIu64, task);
        if (!task || (r = kerf_cdi_file_name(kind, tag, file, sizeof(file))) < 0)
                return -EINVAL;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
                return -ENAMETOOLONG;
        if (access(path, F_OK) < 0 && errno == ENOENT)
                return 0;
        r = kerf_cdi_task_spec_owned(dir, file, kind, owner, NULL);
        if (r <= 0)
                return r < 0 ? r : -EPERM;
        return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

int kerf_cdi_sweep(const char *dir, const char *kind, const char *owner,
                   bool (*keep)(uint64_t task, void *ctx), void *ctx)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        int removed = 0;
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while ((e = readdir(d))) {
                uint64_t id = 0;
                char path[4400];
                if (kerf_cdi_task_spec_owned(dir, e->d_name, kind, owner, &id) != 1)
                        continue;
                if (keep && keep(id, ctx))
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
                if (unlink(path) == 0)
                        removed++;
        }
        closedir(d);
        return removed;
}
