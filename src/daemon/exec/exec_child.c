/* SPDX-License-Identifier: Apache-2.0 */
/* exec_child.c - the executor's forked side: the supervisor until it execs kerf-supervise, and
 * the task's setup until it execs its program (async-signal-safe calls only) */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec.h"

/* Opens `path` for the child, moved to an fd >= 3 so that the child's dup2() onto 0..2
 * never collides with a source descriptor (kerfd may run with 0..2 closed). */
int kerf__exec_open_high(const char *path, int flags, mode_t mode)
{
        int fd = open(path, flags | O_CLOEXEC, mode);
        if (fd < 0 || fd > 2)
                return fd < 0 ? -errno : fd;
        int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        int e = errno;
        close(fd);
        return hi < 0 ? -e : hi;
}

/* An O_CLOEXEC pipe whose descriptors are >= 3, for the same reason as open_high(). */
int kerf__exec_pipe_high(int fds[2])
{
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        for (int i = 0; i < 2; i++) {
                if (fds[i] > 2)
                        continue;
                int hi = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
                int e = errno;
                close(fds[i]);
                fds[i] = hi;
                if (hi < 0) {
                        if (fds[1 - i] >= 0)
                                close(fds[1 - i]);
                        fds[0] = fds[1] = -1;
                        return -e;
                }
        }
        return 0;
}

static void child_fail(const kerf__exec_plan *p, int stage, int err) __attribute__((noreturn));
static void child_fail(const kerf__exec_plan *p, int stage, int err)
{
        kerf__exec_msg m;
        memset(&m, 0, sizeof(m));
        m.kind = KERF__EXEC_MSG_FAIL;
        m.stage = stage;
        m.err = err;
        ssize_t w = write(p->pipe_fd, &m, sizeof(m));
        (void)w;
        _exit(127);
}

/* Writes a decimal number into buf (>= 22 bytes) without stdio (async-signal-safe). */
void kerf__exec_fmt_u64(char *buf, uint64_t v)
{
        char b[24];
        int i = sizeof(b);
        b[--i] = '\0';
        do {
                b[--i] = (char)('0' + v % 10);
                v /= 10;
        } while (v > 0);
        memcpy(buf, b + i, sizeof(b) - (size_t)i);
}

/* Writes a decimal pid and a newline (the fence's cgroup.procs). */
static int write_pid(int fd, pid_t pid)
{
        char b[24];
        kerf__exec_fmt_u64(b, (uint64_t)pid);
        size_t n = strlen(b);
        b[n++] = '\n';
        return write(fd, b, n) < 0 ? -1 : 0;
}

/* Field 22 of /proc/PID/stat (starttime) without stdio or the heap; 0 when unreadable. */
static uint64_t starttime_of(pid_t pid)
{
        char path[48] = "/proc/", buf[1024];
        uint64_t v = 0;
        ssize_t n;
        int fd;

        kerf__exec_fmt_u64(path + 6, (uint64_t)pid);
        memcpy(path + strlen(path), "/stat", 6);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                return 0;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        /* the command may hold spaces and ')': fields count from after the last ')' */
        char *q = strrchr(buf, ')');
        if (!q || q[1] != ' ')
                return 0;
        q += 2; /* field 3, state */
        for (int f = 3; f < 22; f++) {
                q = strchr(q, ' ');
                if (!q)
                        return 0;
                q++;
        }
        for (; *q >= '0' && *q <= '9'; q++)
                v = v * 10 + (uint64_t)(*q - '0');
        return v;
}

static void reset_signals(void)
{
        struct sigaction sa;

        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = SIG_DFL;
        for (int sig = 1; sig < NSIG; sig++)
                sigaction(sig, &sa, NULL); /* SIGKILL/SIGSTOP/reserved fail: fine */
}

static void child_exec(const kerf__exec_plan *p) __attribute__((noreturn));
static void child_exec(const kerf__exec_plan *p)
{
        const kerf_exec_spec *sp = p->sp;
        sigset_t none;

        reset_signals();
        if (p->procs_fd >= 0 && write_pid(p->procs_fd, getpid()) < 0)
                child_fail(p, KERF_EXEC_STAGE_FENCE, errno);
        if (setsid() < 0)
                child_fail(p, KERF_EXEC_STAGE_SESSION, errno);
        if (p->set_ids &&
            (setgroups(sp->n_groups, sp->groups) < 0 || setgid(sp->gid) < 0 || setuid(sp->uid) < 0))
                child_fail(p, KERF_EXEC_STAGE_IDS, errno);
        if (chdir(sp->cwd ? sp->cwd : "/") < 0)
                child_fail(p, KERF_EXEC_STAGE_CWD, errno);
        if (dup2(p->null_fd, 0) < 0 || dup2(p->out_fd, 1) < 0 || dup2(p->err_fd, 2) < 0)
                child_fail(p, KERF_EXEC_STAGE_STDIO, errno);
        /* Descriptors someone else opened without O_CLOEXEC must not leak into the task. */
        syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);

        char *const *argv = (char *const *)sp->argv;
        if (!p->path) {
                execve(sp->argv[0], argv, p->envp);
                child_fail(p, KERF_EXEC_STAGE_EXEC, errno);
        }
        /* execvp()-like search, as the task's uid, in the task's PATH. */
        int err = ENOENT;
        size_t alen = strlen(sp->argv[0]);
        for (const char *d = p->path; d;) {
                const char *end = strchr(d, ':');
                size_t dlen = end ? (size_t)(end - d) : strlen(d);
                if (dlen == 0) { /* empty entry means the cwd, as execvp */
                        d = ".";
                        dlen = 1;
                }
                if (dlen + alen + 2 <= PATH_MAX) {
                        memcpy(p->buf, d, dlen);
                        p->buf[dlen] = '/';
                        memcpy(p->buf + dlen + 1, sp->argv[0], alen + 1);
                        execve(p->buf, argv, p->envp);
                        if (errno == EACCES)
                                err = EACCES;
                        else if (errno != ENOENT && errno != ENOTDIR)
                                child_fail(p, KERF_EXEC_STAGE_EXEC, errno);
                }
                d = end ? end + 1 : NULL;
        }
        child_fail(p, KERF_EXEC_STAGE_EXEC, err);
}

/* The supervisor before it becomes kerf-supervise: leaves kerfd's session (nothing aimed at
 * kerfd reaches it), becomes the subreaper of the task's orphans, forks the task, then execs
 * kerf-supervise with the task as its child and the report pipe as its only descriptor
 * beside /dev/null on 0..2. */
void kerf__exec_supervisor_exec(kerf__exec_plan *p)
{
        static char *const no_env[] = {NULL};
        sigset_t none;

        reset_signals();
        if (setsid() < 0)
                child_fail(p, KERF_EXEC_STAGE_SUPERVISE, errno);
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        pid_t t = fork();
        if (t == 0)
                child_exec(p);
        if (t < 0)
                child_fail(p, KERF_EXEC_STAGE_SETUP, errno);
        kerf__exec_fmt_u64(p->leader_arg, (uint64_t)t);
        /* kerfd learns the leader now (its start returns once we have exec'd); the task is
         * our unreaped child until kerf-supervise waits for it, so its stat is readable */
        kerf__exec_msg m;
        memset(&m, 0, sizeof(m));
        m.kind = KERF__EXEC_MSG_LEADER;
        m.pid = t;
        m.starttime = starttime_of(t);
        ssize_t w = write(p->report_fd, &m, sizeof(m));
        (void)w;
        int e = 0;
        if (dup2(p->null_fd, 0) < 0 || dup2(p->null_fd, 1) < 0 || dup2(p->null_fd, 2) < 0)
                e = errno;
        syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */);
        if (!e && fcntl(p->report_fd, F_SETFD, 0) < 0)
                e = errno;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (!e) {
                execve(p->sup_argv[0], (char *const *)p->sup_argv, no_env);
                e = errno;
        }
        kill(t, SIGKILL);
        while (waitpid(t, NULL, 0) < 0 && errno == EINTR)
                ;
        child_fail(p, KERF_EXEC_STAGE_SUPERVISE, e);
}
