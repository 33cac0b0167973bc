/* SPDX-License-Identifier: Apache-2.0 */
/* exec_launch.c - the fork/exec of a task start (kerf_exec_launch_run): the part of
 * kerf_exec_start() that uses no executor state, so that kerfd runs it without its mutex */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec.h"

static void fail(kerf_exec_failure *f, kerf_exec_stage stage, int err)
{
        if (f) {
                f->stage = stage;
                f->err = err < 0 ? -err : err;
        }
}

static void unlink_status(const char *status_path)
{
        char tmp[PATH_MAX + 8];

        unlink(status_path);
        snprintf(tmp, sizeof(tmp), "%s.tmp", status_path);
        unlink(tmp);
}

/* Reads the start pipe until every writer is gone (the task exec'd and the supervisor became
 * kerf-supervise, or one of them failed), then the leader's identity, which the supervisor
 * sent before its execve. kerfd does not wait for kerf-supervise to run: its start-up (and
 * the status file it writes) is off the start path. Returns 0 and *ready, or -errno with *f. */
static int await_start(int err_fd, int report_fd, kerf__exec_msg *ready, kerf_exec_failure *f)
{
        kerf__exec_msg m;
        bool failed = false;
        ssize_t n;

        for (;;) {
                n = read(err_fd, &m, sizeof(m));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n == 0)
                        break;
                if (failed)
                        continue; /* the first failure is the one reported */
                failed = true;
                if (n == (ssize_t)sizeof(m) && m.kind == KERF__EXEC_MSG_FAIL && m.err > 0 &&
                    m.stage >= 0 && m.stage < KERF_EXEC_STAGE_COUNT)
                        fail(f, (kerf_exec_stage)m.stage, m.err);
                else
                        fail(f, KERF_EXEC_STAGE_SETUP, EIO);
                if (n < 0)
                        break;
        }
        if (failed)
                return -f->err;
        /* written before the supervisor's execve, whose success the EOF above says */
        do
                n = read(report_fd, &m, sizeof(m));
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)sizeof(m) || m.kind != KERF__EXEC_MSG_LEADER || m.pid <= 1) {
                fail(f, KERF_EXEC_STAGE_SUPERVISE, EIO);
                return -EIO;
        }
        *ready = m;
        return 0;
}

int kerf_exec_launch_run(kerf_exec_launch *l, const kerf_exec_spec *sp, kerf_exec_failure *ret_fail)
{
        kerf__exec_plan p = {.sp = sp,
                             .null_fd = -1,
                             .out_fd = -1,
                             .err_fd = -1,
                             .procs_fd = -1,
                             .pipe_fd = -1,
                             .report_fd = -1};
        kerf_exec_failure f = {KERF_EXEC_STAGE_SETUP, 0};
        kerf__exec_msg ready = {0};
        int pipefd[2] = {-1, -1}, repfd[2] = {-1, -1};
        sigset_t all, old;
        int r;

        if (!l || !l->begun || l->ran || !sp || sp->task_id != l->task_id) {
                fail(ret_fail, KERF_EXEC_STAGE_SETUP, EINVAL);
                return -EINVAL;
        }
        r = kerf__exec_validate(sp);
        if (r < 0)
                goto fail_setup;
        if (sp->run_as && geteuid() != 0) {
                /* Not root: only "run as myself" is possible, and then nothing to switch. */
                if (sp->uid != geteuid() || sp->gid != getegid()) {
                        r = -EPERM;
                        goto fail_setup;
                }
        }
        p.set_ids = sp->run_as && geteuid() == 0;
        snprintf(p.status_path, sizeof(p.status_path), "%s", l->status_path);
        /* A record of an earlier run of this id (requeued after a preemption) goes now. */
        unlink_status(l->status_path);
        (void)kerf__exec_status_reserve(p.status_path);
        r = kerf__exec_build_env(sp, &p.envp);
#ifdef KERF_SAN_RUNTIME
        if (r >= 0 && kerf__exec_san_env)
                r = kerf__exec_san_env_apply(&p.envp);
#endif
        if (r < 0)
                goto fail_setup;
        if (!strchr(sp->argv[0], '/')) {
                char **pe = kerf__exec_env_find(p.envp, "PATH=");
                p.path = pe ? *pe + 5 : KERF__EXEC_DEFAULT_PATH;
                p.buf = malloc(PATH_MAX);
                if (!p.buf) {
                        r = -ENOMEM;
                        goto out;
                }
        }
        const int logf = O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW;
        if ((r = p.null_fd = kerf__exec_open_high("/dev/null", O_RDONLY, 0)) < 0 ||
            (r = p.out_fd = kerf__exec_open_high(l->proc.stdout_path, logf, 0640)) < 0 ||
            (r = p.err_fd = kerf__exec_open_high(l->proc.stderr_path, logf, 0640)) < 0)
                goto out;
        if (sp->fence && (r = p.procs_fd = kerf_fence_procs_fd(sp->fence)) < 0)
                goto out;
        if ((r = kerf__exec_pipe_high(pipefd)) < 0 || (r = kerf__exec_pipe_high(repfd)) < 0)
                goto out;
        p.pipe_fd = pipefd[1];
        p.report_fd = repfd[1];
        kerf__exec_fmt_u64(p.id_arg, sp->task_id);
        kerf__exec_fmt_u64(p.fd_arg, (uint64_t)repfd[1]);
        p.sup_argv[0] = l->supervisor;
        p.sup_argv[1] = p.id_arg;
        p.sup_argv[2] = p.leader_arg;
        p.sup_argv[3] = p.status_path;
        p.sup_argv[4] = p.fd_arg;
        p.sup_argv[5] = NULL;

        /* Signals stay blocked from fork until the children have reset their dispositions: a
         * daemon handler must never run in them. */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pid_t sup = fork();
        if (sup == 0)
                kerf__exec_supervisor_exec(&p);
        int fork_err = errno;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (sup < 0) {
                r = -fork_err;
                goto out;
        }
        close(pipefd[1]);
        close(repfd[1]);
        pipefd[1] = repfd[1] = -1;

        r = await_start(pipefd[0], repfd[0], &ready, &f);
        if (r < 0) {
                /* Nothing is left running: the supervisor exits once the failed task is gone
                 * (it records it first), and its record is not wanted. */
                close(repfd[0]);
                repfd[0] = -1;
                while (waitpid(sup, NULL, 0) < 0 && errno == EINTR)
                        ;
                unlink_status(l->status_path);
                if (ret_fail)
                        *ret_fail = f;
                goto out_nofail;
        }
        fcntl(repfd[0], F_SETFL, O_NONBLOCK);
        l->proc.pid = (pid_t)ready.pid;
        l->proc.pgid = l->proc.pid;
        l->proc.starttime = ready.starttime;
        if (!l->proc.starttime)
                kerf_exec_starttime(l->proc.pid, &l->proc.starttime);
        l->proc.supervisor = sup;
        kerf_exec_starttime(sup, &l->proc.sup_starttime); /* our child, not reaped: readable */
        l->fence = sp->fence;
        l->report_fd = repfd[0];
        repfd[0] = -1;
        l->ran = true;
        r = 0;
        goto out_nofail;
out:
        if (r < 0)
                fail(ret_fail, KERF_EXEC_STAGE_SETUP, r);
out_nofail:
        for (int i = 0; i < 2; i++) {
                if (pipefd[i] >= 0)
                        close(pipefd[i]);
                if (repfd[i] >= 0)
                        close(repfd[i]);
        }
        if (p.null_fd >= 0)
                close(p.null_fd);
        if (p.out_fd >= 0)
                close(p.out_fd);
        if (p.err_fd >= 0)
                close(p.err_fd);
        if (p.procs_fd >= 0)
                close(p.procs_fd);
        free(p.buf);
        kerf_exec_env_free(p.envp);
        return r;
fail_setup:
        fail(ret_fail, KERF_EXEC_STAGE_SETUP, r);
        return r;
}
