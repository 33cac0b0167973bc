/* SPDX-License-Identifier: Apache-2.0 */
/* guard.c - what keeps the store honest under failure: the failure injection hook of the
 * tests (kerf_store_fail_set) and the private modes of the database files */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* ---- failure injection ---------------------------------------------------------------- */

int kerf_store_fail_set(kerf_store *s, const char *spec)
{
        char op[24] = "", file[256] = "";
        unsigned long nth = 1, count = 0;
        const char *at, *colon;
        size_t ol;

        if (!s)
                return -EINVAL;
        if (!spec || !*spec) {
                s->fail_op[0] = '\0';
                return 0;
        }
        at = strchr(spec, '@');
        if (at && kerf__cpy(file, sizeof(file), at + 1) < 0)
                return -EINVAL;
        colon = strchr(spec, ':');
        if (colon && at && colon > at)
                colon = NULL;
        ol = colon ? (size_t)(colon - spec) : at ? (size_t)(at - spec) : strlen(spec);
        if (ol == 0 || ol >= sizeof(op))
                return -EINVAL;
        memcpy(op, spec, ol);
        op[ol] = '\0';
        if (colon) {
                char *end;
                nth = strtoul(colon + 1, &end, 10);
                if (*end == ':')
                        count = strtoul(end + 1, &end, 10);
                if (nth == 0 || (*end && *end != '@'))
                        return -EINVAL;
        }
        memcpy(s->fail_op, op, sizeof(op));
        memcpy(s->fail_file, file, sizeof(file));
        s->fail_nth = nth;
        s->fail_count = count;
        s->fail_calls = 0;
        return 0;
}

int kerf__failpoint(kerf_store *s, const char *op)
{
        unsigned long k;

        if (strcmp(s->fail_op, "*") != 0 && strcmp(s->fail_op, op) != 0)
                return 0;
        if (s->fail_file[0] && access(s->fail_file, F_OK) != 0)
                return 0;
        k = ++s->fail_calls;
        if (k < s->fail_nth || (s->fail_count && k >= s->fail_nth + s->fail_count))
                return 0;
        return -EIO;
}

/* ---- file modes ------------------------------------------------------------------------- */

int kerf_store_secure_files(const char *path, char *note, size_t notelen)
{
        static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
        size_t nl = 0;
        int changed = 0;

        if (note && notelen)
                note[0] = '\0';
        if (!path || !*path)
                return -EINVAL;
        for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
                char p[4200];
                struct stat st;
                int fd;

                if ((size_t)snprintf(p, sizeof(p), "%s%s", path, sfx[i]) >= sizeof(p))
                        return -ENAMETOOLONG;
                fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
                if (fd < 0) {
                        if (errno == ENOENT)
                                continue;
                        if (note && notelen)
                                snprintf(note, notelen, "%s: %s (a link, or unreadable)", p,
                                         strerror(errno));
                        return errno == ELOOP ? -EPERM : -errno;
                }
                if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
                        if (note && notelen)
                                snprintf(note, notelen,
                                         "%s is not a regular file owned by uid %u (owner %u); "
                                         "kerfd does not take over a file it does not own",
                                         p, (unsigned)geteuid(), (unsigned)st.st_uid);
                        close(fd);
                        return -EPERM;
                }
                if (st.st_mode & 077) {
                        if (fchmod(fd, st.st_mode & 0700) < 0) {
                                int e = errno;
                                close(fd);
                                if (note && notelen)
                                        snprintf(note, notelen, "%s: chmod: %s", p, strerror(e));
                                return -e;
                        }
                        if (note && nl < notelen)
                                nl += (size_t)snprintf(note + nl, notelen - nl, "%s%s %04o -> %04o",
                                                       changed ? ", " : "", p,
                                                       (unsigned)(st.st_mode & 07777),
                                                       (unsigned)(st.st_mode & 0700));
                        changed++;
                }
                close(fd);
        }
        return changed;
}

int kerf__sp_begin(kerf_store *s)
{
        int r;

        if (s->in_tx) {
                s->sp_own = false;
                return kerf__exec_stmt(kerf__stmt(s, ST_SAVEPOINT));
        }
        /* BEGIN IMMEDIATE, not a deferred savepoint: a read-then-write transaction must hold
         * the write lock from the start or WAL may refuse the upgrade (SQLITE_BUSY_SNAPSHOT)
         * without waiting. */
        r = kerf__exec_stmt(kerf__stmt(s, ST_BEGIN));
        s->sp_own = r == 0;
        return r;
}

int kerf__sp_end(kerf_store *s, int r)
{
        int q;

        if (!s->sp_own) {
                if (r < 0) {
                        kerf__exec_stmt(kerf__stmt(s, ST_ROLLBACK_TO));
                        kerf__exec_stmt(kerf__stmt(s, ST_RELEASE));
                        return r;
                }
                return kerf__exec_stmt(kerf__stmt(s, ST_RELEASE));
        }
        s->sp_own = false;
        if (r < 0) {
                kerf__exec_stmt(kerf__stmt(s, ST_ROLLBACK));
                return r;
        }
        q = s->fail_op[0] ? kerf__failpoint(s, "commit") : 0;
        if (q == 0)
                q = kerf__exec_stmt(kerf__stmt(s, ST_COMMIT));
        if (q < 0 && !sqlite3_get_autocommit(s->db))
                kerf__exec_stmt(kerf__stmt(s, ST_ROLLBACK));
        return q;
}
