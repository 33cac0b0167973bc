/* SPDX-License-Identifier: Apache-2.0 */
/* exec_proc.c - /proc identity of processes and the supervisors' status files (libc only:
 * linked into kerfd's executor and into kerf-supervise) */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec.h"

#define STATUS_MAGIC "kerf-supervise 1"
#define STATUS_SIZE  512 /* every record, padded: see kerf__exec_status_write() */

/* Reads /proc/PID/stat and returns the fields after the command name (which may contain
 * spaces and parentheses, hence the last ')'), starting with field 3 (state). */
int kerf__exec_read_stat(pid_t pid, char *buf, size_t n, const char **ret_rest)
{
        char path[64];
        ssize_t len;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        len = read(fd, buf, n - 1);
        close(fd);
        if (len <= 0)
                return len < 0 ? -errno : -ESRCH;
        buf[len] = '\0';
        char *p = strrchr(buf, ')');
        if (!p || p[1] != ' ')
                return -EIO;
        *ret_rest = p + 2;
        return 0;
}

/* Field `field` (3 = state) as an unsigned number; state is returned as its character. */
int kerf__exec_stat_field(const char *rest, int field, uint64_t *ret)
{
        const char *p = rest;

        for (int f = 3; f < field; f++) {
                p = strchr(p, ' ');
                if (!p)
                        return -EIO;
                p++;
        }
        if (field == 3) {
                *ret = (unsigned char)*p;
                return 0;
        }
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno || end == p)
                return -EIO;
        *ret = v;
        return 0;
}

int kerf_exec_starttime(pid_t pid, uint64_t *ret)
{
        char buf[1024];
        const char *rest;
        uint64_t v;
        int r;

        if (pid <= 0 || !ret)
                return -EINVAL;
        r = kerf__exec_read_stat(pid, buf, sizeof(buf), &rest);
        if (r < 0)
                return r;
        r = kerf__exec_stat_field(rest, 22, &v);
        if (r < 0)
                return r;
        *ret = v;
        return 0;
}

bool kerf_exec_alive(pid_t pid, uint64_t starttime)
{
        char buf[1024];
        const char *rest;
        uint64_t state, st;

        if (pid <= 0 || kerf__exec_read_stat(pid, buf, sizeof(buf), &rest) < 0)
                return false;
        if (kerf__exec_stat_field(rest, 3, &state) < 0 || state == 'Z' || state == 'X')
                return false;
        return kerf__exec_stat_field(rest, 22, &st) == 0 && st == starttime;
}

/* ---- process groups ----------------------------------------------------------------------- */

/* True when some process that is not a zombie has process group `pgid`. kill(-pgid, 0)
 * answers quickly for the common empty case; zombies (e.g. orphans init has not reaped yet)
 * keep a group "alive" for kill() but hold nothing, so /proc decides. Zombies of the group
 * that are our children (we are their subreaper), other than the leader, are reaped here. */
bool kerf__exec_group_alive(pid_t pgid, pid_t leader)
{
        if (pgid <= 1 || (kill(-pgid, 0) < 0 && errno == ESRCH))
                return false;
        DIR *d = opendir("/proc");
        if (!d)
                return true;
        bool alive = false;
        struct dirent *de;
        while (!alive && (de = readdir(d))) {
                if (!isdigit((unsigned char)de->d_name[0]))
                        continue;
                char buf[1024];
                const char *rest;
                uint64_t state, pg;
                pid_t p = (pid_t)strtol(de->d_name, NULL, 10);
                if (kerf__exec_read_stat(p, buf, sizeof(buf), &rest) < 0 ||
                    kerf__exec_stat_field(rest, 3, &state) < 0 ||
                    kerf__exec_stat_field(rest, 5, &pg) < 0)
                        continue;
                if (pg != (uint64_t)pgid)
                        continue;
                alive = state != 'Z' && state != 'X';
                uint64_t ppid;
                if (!alive && p != leader && kerf__exec_stat_field(rest, 4, &ppid) == 0 &&
                    ppid == (uint64_t)getpid())
                        waitpid(p, NULL, WNOHANG);
        }
        closedir(d);
        return alive;
}

/* ---- status files ------------------------------------------------------------------------- */

int kerf__exec_status_path(const char *run_dir, uint64_t task_id, char *buf, size_t n)
{
        int len = snprintf(buf, n, "%s/task-%" PRIu64 ".status", run_dir, task_id);
        return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

static int write_all(int fd, const char *p, size_t n)
{
        while (n) {
                ssize_t w = write(fd, p, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0)
                        return w < 0 ? -errno : -EIO;
                p += w;
                n -= (size_t)w;
        }
        return 0;
}

/* The fallback of a status write whose tmp file could not be written: overwrite the existing
 * record (STATUS_SIZE bytes, one page) in place. `why` is returned when there is none. */
static int in_place(const char *path, const char *text, bool durable, int why)
{
        struct stat sb;
        int r, fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return why;
        if (fstat(fd, &sb) < 0 || sb.st_size != STATUS_SIZE) {
                close(fd);
                return why;
        }
        r = pwrite(fd, text, STATUS_SIZE, 0) == STATUS_SIZE ? 0 : why;
        if (r == 0 && durable && fsync(fd) < 0)
                r = -errno;
        close(fd);
        return r;
}

int kerf__exec_status_write(const char *path, const kerf__exec_status *st, bool durable)
{
        char tmp[PATH_MAX], text[STATUS_SIZE];
        int len, fd, r = 0;

        if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
                return -ENAMETOOLONG;
        /* The raw wait status is what kerfd reads; the decoded lines are for operators. */
        len = snprintf(text, sizeof(text),
                       STATUS_MAGIC "\ntask %" PRIu64 "\nsupervisor %d %" PRIu64
                                    "\nleader %d %" PRIu64 "\nstate %s\n",
                       st->task_id, (int)st->sup_pid, st->sup_starttime, (int)st->pid,
                       st->starttime, st->ended ? "ended" : "running");
        if (st->ended) {
                int s = st->status;
                len += snprintf(text + len, sizeof(text) - (size_t)len,
                                "wait_status %d\nend_ms %" PRId64 "\n", s, st->end_wall_ms);
                if ((s & 0x7f) == 0)
                        len += snprintf(text + len, sizeof(text) - (size_t)len, "exit_code %d\n",
                                        (s >> 8) & 0xff);
                else
                        len += snprintf(text + len, sizeof(text) - (size_t)len, "signal %d\n",
                                        s & 0x7f);
        }
        /* Every record has the same size (padded with empty lines, which readers skip), so
         * that when the tmp file cannot be written (a full disk) the end can still overwrite
         * the running record in place, in blocks the file already holds (issue 8 R1 + R2). */
        if (len >= STATUS_SIZE)
                return -EOVERFLOW;
        memset(text + len, '\n', STATUS_SIZE - (size_t)len);
        len = STATUS_SIZE;
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return in_place(path, text, durable, -errno);
        r = write_all(fd, text, (size_t)len);
        if (r == 0 && durable && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                unlink(tmp);
                return in_place(path, text, durable, r);
        }
        if (durable) {
                /* the rename itself must survive a crash of the machine */
                char dir[PATH_MAX];
                snprintf(dir, sizeof(dir), "%s", path);
                char *slash = strrchr(dir, '/');
                if (slash && slash != dir)
                        *slash = '\0';
                int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dfd >= 0) {
                        if (fsync(dfd) < 0)
                                r = -errno;
                        close(dfd);
                }
        }
        return r;
}

int kerf__exec_status_reserve(const char *path)
{
        char text[STATUS_SIZE];
        int fd, r = 0;

        /* Not a record yet (readers refuse it: no task, no processes), only the blocks: the
         * supervisor's records replace it, or overwrite it in place when the disk fills. */
        memset(text, '\n', sizeof(text));
        memcpy(text, STATUS_MAGIC "\nstate reserved\n",
               sizeof(STATUS_MAGIC "\nstate reserved\n") - 1);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        r = write_all(fd, text, sizeof(text));
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r < 0)
                unlink(path);
        return r;
}

int kerf__exec_status_read(const char *path, kerf__exec_status *ret)
{
        char text[1024], *save = NULL;
        kerf__exec_status st;
        ssize_t len;
        unsigned seen = 0;
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        len = read(fd, text, sizeof(text) - 1);
        close(fd);
        if (len < 0)
                return -errno;
        text[len] = '\0';
        memset(&st, 0, sizeof(st));
        char *line = strtok_r(text, "\n", &save);
        if (!line || strcmp(line, STATUS_MAGIC) != 0)
                return -EIO;
        while ((line = strtok_r(NULL, "\n", &save))) {
                char key[32], word[16];
                long long a = 0;
                unsigned long long u = 0, v = 0;
                if (sscanf(line, "%31s", key) != 1)
                        continue;
                if (!strcmp(key, "task") && sscanf(line, "%*s %llu", &u) == 1) {
                        st.task_id = u;
                        seen |= 1;
                } else if (!strcmp(key, "supervisor") &&
                           sscanf(line, "%*s %llu %llu", &u, &v) == 2) {
                        st.sup_pid = (pid_t)u;
                        st.sup_starttime = v;
                        seen |= 2;
                } else if (!strcmp(key, "leader") && sscanf(line, "%*s %llu %llu", &u, &v) == 2) {
                        st.pid = (pid_t)u;
                        st.starttime = v;
                        seen |= 4;
                } else if (!strcmp(key, "state") && sscanf(line, "%*s %15s", word) == 1) {
                        st.ended = !strcmp(word, "ended");
                        seen |= 8;
                } else if (!strcmp(key, "wait_status") && sscanf(line, "%*s %lld", &a) == 1) {
                        st.status = (int)a;
                        seen |= 16;
                } else if (!strcmp(key, "end_ms") && sscanf(line, "%*s %lld", &a) == 1) {
                        st.end_wall_ms = a;
                }
        }
        if ((seen & 15) != 15 || (st.ended && !(seen & 16)))
                return -EIO;
        *ret = st;
        return 0;
}
