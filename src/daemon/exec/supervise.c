/* SPDX-License-Identifier: Apache-2.0 */
/* supervise.c - kerf-supervise: the parent of one task; keeps its exit status across kerfd
 * restarts (docs/DAEMON.md "Executor") */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec.h"

/*
 * Started only by kerfd's executor (exec.c), never by hand:
 *
 *   kerfd ── fork ──> S: setsid, subreaper ── fork ──> T: the task's setup, execve(task)
 *                      └─ execve(kerf-supervise TASK_ID T STATUS_PATH FD)
 *
 *   main: status file "running" (who the supervisor and the leader are)
 *         READY on FD (kerfd's start returns)
 *         waitpid until T ends; orphans of the task (re-parented here) are reaped too
 *         status file "ended" + wait status + end time, fsync'd      <- the durable record
 *         EXIT on FD (a live kerfd learns the end at once; a restarted one reads the file)
 *         reap leftovers while the task's process group lasts, then exit
 *
 * kerfd removes the status file once the end is in its store. The supervisor runs in a
 * session of its own, so nothing aimed at kerfd (its process group, a terminal) reaches it,
 * and it is in no task's process group or cgroup, so stopping a task never stops it.
 */

#define RETRY_MS       1000
#define LINGER_POLL_MS 100

static void sleep_ms(unsigned ms)
{
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static int64_t wall_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sends one message to kerfd; false when kerfd is gone (its end of the pipe closed). */
static bool report(int fd, const kerf__exec_msg *m)
{
        ssize_t w;
        if (fd < 0)
                return false;
        do
                w = write(fd, m, sizeof(*m));
        while (w < 0 && errno == EINTR);
        return w == (ssize_t)sizeof(*m);
}

static bool parse_num(const char *s, unsigned long long *ret)
{
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || end == s || *end)
                return false;
        *ret = v;
        return true;
}

int main(int argc, char **argv)
{
        unsigned long long id, leader, fd_arg;
        kerf__exec_status st;
        kerf__exec_msg m;
        int fd, status = 0;

        if (argc == 2 && !strcmp(argv[1], "--version")) {
                printf("kerf-supervise %s\n", KERF_VERSION);
                return 0;
        }
        if (argc != 5 || !parse_num(argv[1], &id) || !parse_num(argv[2], &leader) ||
            !parse_num(argv[4], &fd_arg) || leader < 2 || fd_arg < 3 || fd_arg > 1 << 20) {
                fprintf(stderr, "kerf-supervise: started by kerfd only (TASK_ID PID STATUS FD)\n");
                return 2;
        }
        fd = (int)fd_arg;
        /* A kerfd that died must not kill us through the pipe. */
        signal(SIGPIPE, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        signal(SIGQUIT, SIG_IGN);
        prctl(PR_SET_CHILD_SUBREAPER, 1); /* set before the fork too; kept across execve */

        memset(&st, 0, sizeof(st));
        st.task_id = id;
        st.sup_pid = getpid();
        st.pid = (pid_t)leader;
        kerf_exec_starttime(st.sup_pid, &st.sup_starttime);
        kerf_exec_starttime(st.pid, &st.starttime); /* our child: readable even as a zombie */
        /* Not fsync'd: it only names the processes for a kerfd that restarts while the task
         * runs, which the page cache serves; the end record below is durable. */
        kerf__exec_status_write(argv[3], &st, false);
        memset(&m, 0, sizeof(m));
        m.kind = KERF__EXEC_MSG_READY;
        m.pid = st.pid;
        m.starttime = st.starttime;
        m.sup_starttime = st.sup_starttime;
        report(fd, &m);

        for (;;) {
                int s;
                pid_t p = waitpid(-1, &s, 0);
                if (p == st.pid) {
                        status = s;
                        break;
                }
                if (p < 0 && errno != EINTR) {
                        status = 0x7f00; /* cannot happen: the leader is our child */
                        break;
                }
        }
        st.ended = true;
        st.status = status;
        st.end_wall_ms = wall_ms();
        int r = kerf__exec_status_write(argv[3], &st, true);
        memset(&m, 0, sizeof(m));
        m.kind = KERF__EXEC_MSG_EXIT;
        m.status = status;
        m.pid = st.pid;
        m.end_wall_ms = st.end_wall_ms;
        bool told = report(fd, &m);
        close(fd);
        /* Without a kerfd to tell, the file is the only record: keep trying (a full disk) —
         * unless its directory is gone (kerfd's state removed): nobody can read a record any
         * more, and a supervisor must not linger for ever. */
        while (r < 0 && !told && r != -ENOENT && r != -ENOTDIR) {
                sleep_ms(RETRY_MS);
                r = kerf__exec_status_write(argv[3], &st, true);
        }
        if (r == -ENOENT || r == -ENOTDIR)
                fprintf(stderr,
                        "kerf-supervise: task %s: %s is gone, its end (wait status %d) "
                        "cannot be recorded\n",
                        argv[1], argv[3], status);
        /* Leftovers of the task were re-parented to us: reap them while its process group
         * lasts (kerfd stops them after its grace period); never outlive the group. */
        for (;;) {
                pid_t p = waitpid(-1, NULL, WNOHANG);
                if (p > 0)
                        continue;
                if (p < 0 && errno == EINTR)
                        continue;
                if (p < 0 || (kill(-st.pid, 0) < 0 && errno == ESRCH))
                        break;
                sleep_ms(LINGER_POLL_MS);
        }
        return 0;
}
