/* SPDX-License-Identifier: Apache-2.0 */
/* test_compute.h - parent side of the compute-share tests: node, regions, children, meter */
#ifndef KERF_TEST_SHIM_COMPUTE_H
#define KERF_TEST_SHIM_COMPUTE_H

/*
 * Header-only (static) so that every test_compute_*.c is one executable. A simulated node of
 * 8 H200s in a temp dir (independent runs use different GPUs, so they can run side by side),
 * one slice region per child, children (shim_compute_child, next to the test binary) started with
 * LD_PRELOAD=<build>/lib/libkerf-cuda.so. Shares are measured independently of the shim: the
 * simulator's per-process engine time (what NVML's process utilisation reads), sampled every
 * 20 ms by a meter thread. KERF_SHIM_LIB overrides the shim, KERF_COMPUTE_CHILD the child;
 * KERF_COMPUTE_KEEP=1 keeps the temp dir.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kerf/core.h"
#include "kerf/slice_abi.h"
#include "fx_common.h"
#include "simstate.h"

#define CT_GPUS    8
#define CT_MAXP    16
#define CT_SAMPLES 1024 /* 20 ms apart: ~20 s */
#define CT_STEP_NS 20000000ULL
#define CT_SEC     1000000000ULL
#define CT_MS      1000000ULL

typedef struct ct_proc {
        pid_t pid;
        int out; /* its stdout */
        char region[128];
        struct kerf_slice_region *r;
        uint64_t t[CT_SAMPLES], eng[CT_SAMPLES]; /* meter samples */
        unsigned n;
        char buf[1024];
        size_t len;
        char last[256]; /* the line ct_expect() found */
} ct_proc;

typedef struct ct_node {
        char dir[64], sim_dir[96];
        char shim[PATH_MAX], child[PATH_MAX], libdir[PATH_MAX];
        kerf_sim *sim;
        ct_proc p[CT_MAXP];
        unsigned np;
        pthread_t meter;
        atomic_bool stop;
        pthread_mutex_t mu;
} ct_node;

#define ct_now      fxc_now_ns
#define ct_sleep_ms fxc_sleep_ms

static void *ct_meter_main(void *arg)
{
        ct_node *nd = arg;
        uint64_t next = ct_now();
        while (!atomic_load(&nd->stop)) {
                pthread_mutex_lock(&nd->mu);
                for (int g = 0; g < CT_GPUS; g++) {
                        kerf_sim_proc_info pi[16];
                        unsigned k = 0;
                        /* a sample is (time, engine time) read together: one taken across a
                         * preemption of this thread (> 1 ms) is dropped */
                        uint64_t t0 = ct_now();
                        if (kerf_sim_proc_list(nd->sim, g, -1, pi, 16, &k) < 0)
                                continue;
                        uint64_t t1 = ct_now();
                        if (t1 - t0 > CT_MS)
                                continue;
                        for (unsigned i = 0; i < nd->np; i++) {
                                ct_proc *p = &nd->p[i];
                                for (unsigned j = 0; j < k && j < 16; j++)
                                        if (pi[j].pid == p->pid && p->n < CT_SAMPLES) {
                                                p->t[p->n] = (t0 + t1) / 2;
                                                p->eng[p->n] = pi[j].engine_ns;
                                                p->n++;
                                        }
                        }
                }
                pthread_mutex_unlock(&nd->mu);
                next += CT_STEP_NS;
                uint64_t now = ct_now();
                if (next > now)
                        ct_sleep_ms((unsigned)((next - now) / CT_MS));
                else
                        next = now;
        }
        return NULL;
}

/* Node of 8 H200s and the meter thread. Returns 0 or -1 (printed). */
static inline int ct_setup(ct_node *nd)
{
        memset(nd, 0, sizeof(*nd));
        pthread_mutex_init(&nd->mu, NULL);
        char self[1024];
        if (fxc_self(NULL, 0, self, sizeof(self)) < 0)
                return -1;
        fxc_lib_paths(self, nd->shim, sizeof(nd->shim), nd->libdir, sizeof(nd->libdir));
        fxc_child_path(nd->child, sizeof(nd->child), "KERF_COMPUTE_CHILD", self,
                       "shim_compute_child");
        if (access(nd->child, X_OK) < 0 || access(nd->shim, R_OK) < 0) {
                fprintf(stderr, "compute test: %s or %s missing\n", nd->child, nd->shim);
                return -1;
        }
        snprintf(nd->dir, sizeof(nd->dir), "/tmp/kerf-compute-XXXXXX");
        if (!mkdtemp(nd->dir))
                return -1;
        snprintf(nd->sim_dir, sizeof(nd->sim_dir), "%s/node", nd->dir);
        int rc = fxc_node_create(nd->sim_dir, CT_GPUS);
        if (rc < 0 || kerf_sim_open(nd->sim_dir, &nd->sim) < 0) {
                fprintf(stderr, "compute test: simulated node in %s: %d\n", nd->sim_dir, rc);
                return -1;
        }
        return pthread_create(&nd->meter, NULL, ct_meter_main, nd) ? -1 : 0;
}

/* A region for one slice (guarantee pct, ceiling lim); the test plays kerfd. */
static inline struct kerf_slice_region *ct_region(ct_node *nd, char *path, size_t len, unsigned pct,
                                                  unsigned lim)
{
        static unsigned seq;
        char tmp[128];
        snprintf(tmp, sizeof(tmp), "%s/slice%u", nd->dir, seq++);
        if (strlen(tmp) >= len)
                return NULL;
        memcpy(path, tmp, strlen(tmp) + 1);
        struct kerf_slice_region *r = NULL;
        if (fxc_region_create(path, 64ULL << 30, 141ULL << 30, pct, lim, seq) < 0 ||
            kerf_slice_region_map(path, true, &r) < 0)
                return NULL;
        return r;
}

/* Starts compute_child ARGS on GPU `gpu` in a new slice (pct, lim), or in the slice of
 * `share_with` (a ct_proc index >= 0). extra_env: NULL or "NAME=value" words separated by
 * spaces. Returns the
 * index of the process, -1 on failure. */
static inline int ct_spawn(ct_node *nd, int gpu, unsigned pct, unsigned lim, int share_with,
                           const char *extra_env, const char *const *args)
{
        if (nd->np >= CT_MAXP)
                return -1;
        ct_proc *p = &nd->p[nd->np];
        memset(p, 0, sizeof(*p));
        if (share_with >= 0) {
                memcpy(p->region, nd->p[share_with].region, sizeof(p->region));
                if (kerf_slice_region_map(p->region, true, &p->r) < 0)
                        return -1;
        } else if (!(p->r = ct_region(nd, p->region, sizeof(p->region), pct, lim))) {
                return -1;
        }
        char *envp[64], gs[16];
        size_t ne = 0;
        for (char **v = environ; *v && ne < 40; v++)
                if (!strncmp(*v, "PATH=", 5) || !strncmp(*v, "HOME=", 5))
                        envp[ne++] = *v;
        fxc_env b;
        snprintf(gs, sizeof(gs), "%d", gpu);
        fxc_env_fill(&b, nd->shim, p->region, nd->sim_dir, gs, nd->libdir);
        fxc_env_push(envp, &ne, &b, true);
        envp[ne++] = "KERF_SLICE_ABI=2";
        envp[ne++] = "KERF_SIM_CTX_OVERHEAD_MIB=300";
        envp[ne++] = "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0"; /* ASan builds */
        char extra[256];
        snprintf(extra, sizeof(extra), "%s", extra_env ? extra_env : "");
        for (char *sv, *w = strtok_r(extra, " ", &sv); w && ne < 60; w = strtok_r(NULL, " ", &sv))
                envp[ne++] = w;
        envp[ne] = NULL;
        int pout[2];
        if (pipe2(pout, O_CLOEXEC) < 0)
                return -1;
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, pout[1], 1);
        char *argv[12];
        size_t na = 0;
        argv[na++] = nd->child;
        for (size_t i = 0; args[i] && na < 11; i++)
                argv[na++] = (char *)args[i];
        argv[na] = NULL;
        pid_t pid;
        int rc = posix_spawn(&pid, nd->child, &fa, NULL, argv, envp);
        posix_spawn_file_actions_destroy(&fa);
        close(pout[1]);
        if (rc) {
                close(pout[0]);
                return -1;
        }
        fcntl(pout[0], F_SETFL, O_NONBLOCK);
        pthread_mutex_lock(&nd->mu);
        p->pid = pid;
        p->out = pout[0];
        nd->np++;
        pthread_mutex_unlock(&nd->mu);
        return (int)(nd->np - 1);
}

/* Reads the child's stdout until a line starting with `what` (true) or EOF/timeout. */
static inline bool ct_expect(ct_proc *p, const char *what, unsigned timeout_ms)
{
        uint64_t end = ct_now() + timeout_ms * CT_MS;
        for (;;) {
                char *nl;
                while ((nl = memchr(p->buf, '\n', p->len))) {
                        size_t l = (size_t)(nl - p->buf) + 1;
                        bool hit = !strncmp(p->buf, what, strlen(what));
                        if (hit) {
                                *nl = 0;
                                size_t k = l < sizeof(p->last) ? l : sizeof(p->last);
                                memcpy(p->last, p->buf, k);
                                p->last[k - 1] = 0;
                        }
                        memmove(p->buf, p->buf + l, p->len - l);
                        p->len -= l;
                        if (hit)
                                return true;
                }
                if (ct_now() > end || p->len >= sizeof(p->buf) - 1)
                        return false;
                struct timespec ts = {0, 5000000};
                ssize_t n = read(p->out, p->buf + p->len, sizeof(p->buf) - 1 - p->len);
                if (n == 0)
                        return false;
                if (n > 0)
                        p->len += (size_t)n;
                else
                        nanosleep(&ts, NULL);
        }
}

/* Waits for the child's exit; true when it exited 0. */
static inline bool ct_wait(ct_proc *p)
{
        int st = 0;
        if (waitpid(p->pid, &st, 0) < 0)
                return false;
        close(p->out);
        return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* Engine share (percent) of process p over [t0, t1] from the meter samples (-1: no data). */
static inline double ct_share(ct_node *nd, ct_proc *p, uint64_t t0, uint64_t t1)
{
        pthread_mutex_lock(&nd->mu);
        int a = -1, b = -1;
        for (unsigned i = 0; i < p->n; i++) {
                if (a < 0 && p->t[i] >= t0)
                        a = (int)i;
                if (p->t[i] <= t1)
                        b = (int)i;
        }
        double s = -1;
        if (a >= 0 && b > a)
                s = 100.0 * (double)(p->eng[b] - p->eng[a]) / (double)(p->t[b] - p->t[a]);
        pthread_mutex_unlock(&nd->mu);
        return s;
}

/* Every 1 s window (100 ms steps) in [t0, t1]: worst |share - target| and the mean absolute
 * error. Returns the number of windows. */
static inline int ct_windows(ct_node *nd, ct_proc *p, uint64_t t0, uint64_t t1, double target,
                             double *worst, double *mae, double *mean)
{
        int n = 0;
        double sum = 0, sumv = 0;
        *worst = 0;
        for (uint64_t t = t0; t + CT_SEC <= t1; t += 100 * CT_MS) {
                double s = ct_share(nd, p, t, t + CT_SEC);
                if (s < 0)
                        continue;
                double e = fabs(s - target);
                if (e > *worst)
                        *worst = e;
                sum += e;
                sumv += s;
                n++;
        }
        *mae = n ? sum / n : 1e9;
        *mean = n ? sumv / n : -1;
        return n;
}

/* The default-clock checks need the simulated engine to keep wall time: true (and a line
 * saying so) when the host is so loaded (1-minute load average above 3 per CPU) that it
 * cannot. The virtual-clock checks never skip. */
static inline bool ct_overloaded(void)
{
        double l = 0;
        FILE *f = fopen("/proc/loadavg", "r");
        if (f) {
                if (fscanf(f, "%lf", &l) != 1)
                        l = 0;
                fclose(f);
        }
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        if (l > 3.0 * (double)(n > 0 ? n : 1)) {
                fprintf(stderr,
                        "compute test: load average %.1f on %ld CPUs: skipping a "
                        "default-clock check\n",
                        l, n);
                return true;
        }
        return false;
}

static inline void ct_teardown(ct_node *nd)
{
        atomic_store(&nd->stop, true);
        pthread_join(nd->meter, NULL);
        for (unsigned i = 0; i < nd->np; i++) {
                if (nd->p[i].pid > 0 && kill(nd->p[i].pid, 0) == 0) {
                        kill(nd->p[i].pid, SIGKILL);
                        waitpid(nd->p[i].pid, NULL, 0);
                }
                kerf_slice_region_unmap(nd->p[i].r);
        }
        kerf_sim_close(nd->sim);
        fxc_rmdir(nd->dir, "KERF_COMPUTE_KEEP", NULL);
}

#endif
