/* SPDX-License-Identifier: Apache-2.0 */
/* train.c - kerf-load train: steady steps, atomic checkpoints, resume and work lost */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load.h"

/*
 * Files (FILE = --checkpoint):
 *   FILE           "kerf-load-checkpoint 1\nstep N\nretries R\n", replaced atomically (written
 *                  to FILE.tmp, fsync, rename) every --checkpoint-every steps, at start when
 *                  resuming, and at a clean end.
 *   FILE.progress  "step N\n": the last step completed, rewritten in place after every step
 *                  (no fsync: it survives a killed process, not a lost node).
 * On start: a checkpoint present means a resume (resumed_from = its step, retries = its count
 * + 1); work_lost_steps = the progress file's step - the checkpoint's step, i.e. the steps the
 * previous run completed after its last checkpoint, which this run does again. A progress file
 * without a checkpoint (the previous run died before its first one) counts as a retry from 0.
 */

static int read_file(const char *path, char *buf, size_t len)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = read(fd, buf, len - 1);
        int e = errno;
        close(fd);
        if (n < 0)
                return -e;
        buf[n] = 0;
        return 0;
}

/* 1 (with *step and *retries) when FILE is a checkpoint, 0 when absent, -1 (message) when bad. */
static int ckpt_read(const char *path, uint64_t *step, uint64_t *retries)
{
        char buf[256];
        int r = read_file(path, buf, sizeof(buf));
        if (r == -ENOENT)
                return 0;
        if (r < 0) {
                fprintf(stderr, "kerf-load: --checkpoint %s: cannot read: %s\n", path,
                        strerror(-r));
                return -1;
        }
        unsigned long long s, t;
        if (sscanf(buf, "kerf-load-checkpoint 1\nstep %llu\nretries %llu\n", &s, &t) != 2) {
                fprintf(stderr, "kerf-load: --checkpoint %s: not a kerf-load checkpoint\n", path);
                return -1;
        }
        *step = s;
        *retries = t;
        return 1;
}

static int ckpt_write(const char *path, uint64_t step, uint64_t retries)
{
        char tmp[PATH_MAX], buf[128];
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        int n = snprintf(buf, sizeof(buf), "kerf-load-checkpoint 1\nstep %llu\nretries %llu\n",
                         (unsigned long long)step, (unsigned long long)retries);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                goto fail;
        if (write(fd, buf, (size_t)n) != n || fsync(fd) < 0) {
                close(fd);
                goto fail;
        }
        close(fd);
        if (rename(tmp, path) < 0)
                goto fail;
        return 0;
fail:
        fprintf(stderr, "kerf-load: --checkpoint %s: cannot write: %s\n", path, strerror(errno));
        return -1;
}

static void progress_write(int fd, uint64_t step)
{
        char buf[32];
        int n = snprintf(buf, sizeof(buf), "step %020llu\n", (unsigned long long)step);
        if (fd >= 0 && pwrite(fd, buf, (size_t)n, 0) != n)
                fprintf(stderr, "kerf-load: progress file: %s\n", strerror(errno));
}

static void result(const kl_opts *o, uint64_t done, uint64_t step, uint64_t from, uint64_t retries,
                   uint64_t lost, uint64_t ckpts, double secs, bool ok)
{
        kl_line l;
        kl_line_begin(&l, "result");
        kl_line_dbl(&l, "t_ms", kl_t_ms());
        kl_line_str(&l, "mode", "train");
        kl_line_bool(&l, "ok", ok);
        kl_line_u64(&l, "steps_done", done);
        kl_line_u64(&l, "step", step);
        kl_line_u64(&l, "resumed_from", from);
        kl_line_u64(&l, "retries", retries);
        kl_line_u64(&l, "work_lost_steps", lost);
        kl_line_u64(&l, "checkpoints", ckpts);
        kl_line_u64(&l, "step_us", o->step_us);
        kl_line_dbl(&l, "seconds", secs);
        kl_line_dbl(&l, "steps_per_s", secs > 0 ? (double)done / secs : 0);
        kl_line_end(&l);
}

int kl_train(const kl_opts *o, kl_gpu *g)
{
        char ppath[PATH_MAX], buf[128];
        snprintf(ppath, sizeof(ppath), "%s.progress", o->checkpoint);
        uint64_t ck_step = 0, retries = 0, prog = 0, lost = 0;
        int have = ckpt_read(o->checkpoint, &ck_step, &retries);
        if (have < 0)
                return KL_EXIT_USAGE;
        unsigned long long p;
        bool have_prog =
            read_file(ppath, buf, sizeof(buf)) == 0 && sscanf(buf, "step %llu", &p) == 1;
        prog = have_prog ? p : 0;
        if (have || (have_prog && prog > 0)) {
                retries++;
                lost = prog > ck_step ? prog - ck_step : 0;
                if (ckpt_write(o->checkpoint, ck_step, retries) < 0)
                        return KL_EXIT_USAGE;
        }
        CUdeviceptr mem;
        if (kl_hold_mem(o, &mem) < 0)
                return KL_EXIT_CUDA;
        int pfd = open(ppath, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (pfd < 0)
                fprintf(stderr, "kerf-load: %s: %s (work lost will not be measurable)\n", ppath,
                        strerror(errno));
        uint64_t step = ck_step, done = 0, ckpts = 0, w_steps = 0;
        uint64_t t0 = kl_now_ns(), win_ns = o->window_ms * 1000000ull, next_win = t0 + win_ns;
        uint64_t end = o->seconds > 0 ? t0 + (uint64_t)(o->seconds * 1e9) : UINT64_MAX;
        bool ok = true;
        while ((!o->steps || step < o->steps) && kl_now_ns() < end) {
                const char *call;
                CUresult r = kl_spin(g, g->stream, o->step_us, &call);
                if (r == CUDA_SUCCESS) {
                        call = "cuStreamSynchronize";
                        r = kl_cu.cuStreamSynchronize(g->stream);
                }
                if (r != CUDA_SUCCESS) {
                        kl_cuda_error(call, r);
                        ok = false;
                        break;
                }
                step++, done++, w_steps++;
                progress_write(pfd, step);
                if (step % o->checkpoint_every == 0) {
                        if (ckpt_write(o->checkpoint, step, retries) < 0) {
                                ok = false;
                                break;
                        }
                        ckpts++;
                }
                uint64_t now = kl_now_ns();
                if (now >= next_win) {
                        kl_line l;
                        kl_line_begin(&l, "window");
                        kl_line_dbl(&l, "t_ms", kl_t_ms());
                        kl_line_u64(&l, "steps", w_steps);
                        kl_line_u64(&l, "step", step);
                        kl_line_dbl(&l, "steps_per_s", (double)w_steps * 1e9 / (double)win_ns);
                        kl_line_end(&l);
                        w_steps = 0;
                        next_win += win_ns;
                        if (next_win <= now)
                                next_win = now + win_ns;
                }
        }
        /* A clean end checkpoints where it stopped, so that nothing is lost. */
        if (ok && step % o->checkpoint_every != 0) {
                if (ckpt_write(o->checkpoint, step, retries) < 0)
                        ok = false;
                else
                        ckpts++;
        }
        if (pfd >= 0)
                close(pfd);
        if (mem)
                (void)kl_cu.cuMemFree(mem);
        result(o, done, step, ck_step, retries, lost, ckpts, (double)(kl_now_ns() - t0) / 1e9, ok);
        return ok ? KL_EXIT_OK : KL_EXIT_CUDA;
}
