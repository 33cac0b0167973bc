/* SPDX-License-Identifier: Apache-2.0 */
/* http_sock.c - binds kerfd's Unix socket without ever changing a directory kerfd did not
 * create (docs/DAEMON.md "The socket directory") */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "http.h"

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        return code;
}

/* Opens directory `dir`, creating what is missing. Components kerfd creates are created with
 * mkdirat() relative to their parent's descriptor and re-opened with O_NOFOLLOW, so a symlink
 * planted in between is never followed; the last component (the socket's own directory) is
 * never followed when it is a symlink. *created says whether kerfd made the last component. */
static int open_dir(const char *dir, bool *created, char *err, size_t errlen)
{
        char tmp[4096], *p, *next;
        int fd, nfd;

        *created = false;
        if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp))
                return fail(err, errlen, -ENAMETOOLONG, "%s: path too long", dir);
        fd = open(tmp[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return fail(err, errlen, -errno, "%s: %s", dir, strerror(errno));
        for (p = tmp; p; p = next) {
                bool last, made = false;
                while (*p == '/')
                        p++;
                next = strchr(p, '/');
                if (next)
                        *next++ = 0;
                while (next && *next == '/')
                        next++;
                last = !next || !*next;
                if (!*p) {
                        if (last)
                                break;
                        continue;
                }
                nfd = openat(fd, p, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (last ? O_NOFOLLOW : 0));
                if (nfd < 0 && errno == ENOENT) {
                        if (mkdirat(fd, p, 0700) == 0)
                                made = true;
                        else if (errno != EEXIST) {
                                int e = errno;
                                close(fd);
                                return fail(err, errlen, -e,
                                            "cannot create %s (component \"%s\"): %s", dir, p,
                                            strerror(e));
                        }
                        nfd = openat(fd, p, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                }
                if (nfd < 0) {
                        int e = errno;
                        close(fd);
                        if (e == ELOOP || e == ENOTDIR)
                                return fail(err, errlen, -ENOTDIR,
                                            "socket directory %s: \"%s\" is a symbolic link or "
                                            "not a directory (kerfd never follows one there)",
                                            dir, p);
                        return fail(err, errlen, -e, "%s: %s", dir, strerror(e));
                }
                /* an intermediate directory kerfd made gets the usual 0755 */
                if (made && !last)
                        (void)fchmod(nfd, 0755);
                close(fd);
                fd = nfd;
                if (last) {
                        *created = made;
                        break;
                }
        }
        return fd;
}

/* An existing socket directory is used as it is, if no one but kerfd's user or root can
 * replace what is in it: owned by one of them, and not group- or world-writable unless the
 * sticky bit is set (as on /tmp). */
static int check_dir(int dfd, const char *dir, char *err, size_t errlen)
{
        struct stat st;
        if (fstat(dfd, &st) < 0)
                return fail(err, errlen, -errno, "%s: %s", dir, strerror(errno));
        if (st.st_uid != geteuid() && st.st_uid != 0)
                return fail(err, errlen, -EPERM,
                            "socket directory %s belongs to uid %u, not to kerfd (uid %u) or root: "
                            "use a directory kerfd owns, e.g. /run/kerf",
                            dir, (unsigned)st.st_uid, (unsigned)geteuid());
        if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
                return fail(err, errlen, -EPERM,
                            "socket directory %s is writable by others (mode %04o) without the "
                            "sticky bit: anyone could replace the socket; use a directory only "
                            "kerfd can write, e.g. /run/kerf",
                            dir, (unsigned)(st.st_mode & 07777));
        return 0;
}

int kerfd__sock_bind(const char *path, bool have_gid, gid_t gid, char *err, size_t errlen)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        char dir[4096];
        const char *base, *slash = strrchr(path, '/');
        bool created = false, root = geteuid() == 0;
        struct stat st;
        int dfd, fd, r;

        if (strlen(path) >= sizeof(sa.sun_path))
                return fail(err, errlen, -ENAMETOOLONG, "%s: too long for a Unix socket", path);
        if (!slash)
                snprintf(dir, sizeof(dir), ".");
        else if (slash == path)
                snprintf(dir, sizeof(dir), "/");
        else
                snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
        base = slash ? slash + 1 : path;
        if (!*base)
                return fail(err, errlen, -EINVAL, "%s: no socket file name", path);
        dfd = open_dir(dir, &created, err, errlen);
        if (dfd < 0)
                return dfd;
        if (created) {
                /* Ours: 0750, group kerf when it exists (docs/DAEMON.md). */
                if (root && have_gid)
                        (void)fchown(dfd, 0, gid);
                (void)fchmod(dfd, 0750);
        } else if ((r = check_dir(dfd, dir, err, errlen)) < 0) {
                close(dfd);
                return r;
        } else if (root && have_gid && fstat(dfd, &st) == 0 && !(st.st_mode & S_IXOTH) &&
                   (st.st_gid != gid || !(st.st_mode & S_IXGRP))) {
                log_warn("socket directory %s (not created by this kerfd, left as it is) does not "
                         "let group kerf through: its members cannot reach the socket",
                         dir);
        }
        /* Something already at the socket's name: only a socket of ours is replaced. */
        if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
                        close(dfd);
                        return fail(err, errlen, -EEXIST,
                                    "%s exists and is not a socket of kerfd's user (uid %u): "
                                    "remove it or choose another path",
                                    path, (unsigned)st.st_uid);
                }
                strcpy(sa.sun_path, path);
                fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                /* A stale socket from a killed kerfd: refuse only if someone answers on it. */
                if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
                        close(fd);
                        close(dfd);
                        return fail(err, errlen, -EADDRINUSE, "%s: another kerfd answers on it",
                                    path);
                }
                if (fd >= 0)
                        close(fd);
                (void)unlinkat(dfd, base, 0);
        }
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
                r = -errno;
                close(dfd);
                return fail(err, errlen, r, "socket: %s", strerror(-r));
        }
        mode_t old = umask(0117);
        r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
        umask(old);
        if (r < 0 || fchmodat(dfd, base, 0660, 0) < 0 || listen(fd, 512) < 0) {
                r = -errno;
                close(fd);
                close(dfd);
                return fail(err, errlen, r, "%s: %s", path, strerror(-r));
        }
        if (have_gid && root)
                (void)fchownat(dfd, base, 0, gid, AT_SYMLINK_NOFOLLOW);
        close(dfd);
        return fd;
}
