/* SPDX-License-Identifier: Apache-2.0 */
/* bench_init.c - cuInit to first allocation with N processes starting at once, with and
 * without the shim (libkerf-cuda.so), on the simulated driver */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuda_abi.h"
#include "kerf/core.h"
#include "kerf/slice_abi.h"
#include "fx_common.h"
#include "simstate.h"

/*
 * bench_init [--procs N] [--rounds R]       (defaults 256 and 2; figures are SIMULATED)
 *
 * A simulated node (1 x H200) and two slices (a region holds at most 128 processes, so N
 * processes are spread over ceil(N/128) slices of the same GPU). Per round and mode (the
 * simulated driver directly, then with LD_PRELOAD=<build>/lib/libkerf-cuda.so), N copies of this
 * program start, load (shim constructors included), report ready and block on a gate pipe; the
 * gate is then closed, so all N leave it at the same instant and each runs
 * cuInit -> cuDeviceGet -> cuDevicePrimaryCtxRetain -> cuCtxSetCurrent -> cuMemAlloc_v2(2 MiB).
 * Reported per mode (all rounds pooled), p50 / p99 / max in ms:
 *   init->alloc   cuInit entry to first allocation returned (the target: p99 <= 50 ms)
 *   gate->alloc   gate opened to first allocation returned (includes waiting for a CPU)
 *   spawn->main   posix_spawn to main() (exec, dynamic loading, constructors)
 * On a machine with fewer cores than processes most of gate->alloc is waiting for a CPU;
 * init->alloc with vs without the shim, in the same run, is the shim's share.
 */

#define MIB          ((uint64_t)1 << 20)
#define GIB          ((uint64_t)1 << 30)
#define SLICE_PROCS  128
#define MAX_PROCS    512
#define CHILD_GATE   3
#define CHILD_REPORT 4

#define now_ns fxc_now_ns

/* ---- child --------------------------------------------------------------------------------- */

static int child(uint64_t t_spawn)
{
        uint64_t t_main = now_ns();
        char b[160];
        int n = snprintf(b, sizeof(b), "R\n");
        if (write(CHILD_REPORT, b, (size_t)n) != n)
                return 1;
        char c;
        while (read(CHILD_GATE, &c, 1) < 0 && errno == EINTR)
                ;
        CUdevice dev;
        CUcontext ctx;
        CUdeviceptr p = 0;
        uint64_t t0 = now_ns();
        CUresult r = cuInit(0);
        if (!r)
                r = cuDeviceGet(&dev, 0);
        if (!r)
                r = cuDevicePrimaryCtxRetain(&ctx, dev);
        if (!r)
                r = cuCtxSetCurrent(ctx);
        if (!r)
                r = cuMemAlloc_v2(&p, 2 * MIB);
        uint64_t t1 = now_ns();
        n = snprintf(b, sizeof(b), "T %" PRIu64 " %" PRIu64 " %" PRIu64 " %d\n", t1 - t0, t1,
                     t_main - t_spawn, (int)r);
        if (write(CHILD_REPORT, b, (size_t)n) != n)
                return 1;
        if (p)
                cuMemFree_v2(p);
        if (!r)
                cuDevicePrimaryCtxRelease_v2(dev);
        return r ? 1 : 0;
}

/* ---- parent -------------------------------------------------------------------------------- */

typedef struct node {
        char dir[64], sim_dir[96], region[4][112], uuid[KERF_UUID_LEN];
        char self[PATH_MAX], shim[PATH_MAX], libdir[PATH_MAX];
        unsigned n_slices;
} node;

static int setup(node *nd, unsigned procs)
{
        char exe[PATH_MAX - 64];
        if (fxc_self(nd->self, sizeof(nd->self), exe, sizeof(exe)) < 0)
                return -1;
        fxc_lib_paths(exe, nd->shim, sizeof(nd->shim), nd->libdir, sizeof(nd->libdir));
        if (access(nd->shim, R_OK) < 0) {
                fprintf(stderr, "bench_init: shim %s: %s\n", nd->shim, strerror(errno));
                return -1;
        }
        snprintf(nd->dir, sizeof(nd->dir), "/tmp/kerf-bench-init-XXXXXX");
        if (!mkdtemp(nd->dir))
                return -1;
        snprintf(nd->sim_dir, sizeof(nd->sim_dir), "%s/node", nd->dir);
        int rc = fxc_node_create(nd->sim_dir, 1);
        kerf_sim_gpu_info gi;
        if (rc < 0 || fxc_node_gpu0(nd->sim_dir, NULL, &gi) < 0) {
                fprintf(stderr, "bench_init: simulated node: %d\n", rc);
                return -1;
        }
        snprintf(nd->uuid, sizeof(nd->uuid), "%s", gi.uuid);
        nd->n_slices = (procs + SLICE_PROCS - 1) / SLICE_PROCS;
        for (unsigned i = 0; i < nd->n_slices && i < 4; i++) {
                snprintf(nd->region[i], sizeof(nd->region[i]), "%s/slice%u", nd->dir, i);
                if ((rc = fxc_region_create(nd->region[i], gi.mem_total / nd->n_slices,
                                            gi.mem_total, 100 / nd->n_slices, 100, i + 1)) < 0) {
                        fprintf(stderr, "bench_init: region: %s\n", strerror(-rc));
                        return -1;
                }
        }
        return 0;
}

static void teardown(node *nd)
{
        fxc_rmdir(nd->dir, NULL, "bench_init");
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

static double pct_ms(uint64_t *v, size_t n, double p)
{
        if (!n)
                return 0;
        size_t i = (size_t)(p * (double)(n - 1) + 0.5);
        return (double)v[i] / 1e6;
}

typedef struct samples {
        uint64_t init[MAX_PROCS * 8], gate[MAX_PROCS * 8], load[MAX_PROCS * 8];
        size_t n, failed;
} samples;

/* One round of `procs` processes in `shim` mode; appends to s. Returns 0 or -1. */
static int round_run(node *nd, unsigned procs, bool shim, samples *s)
{
        int gate[2], rep[2];
        if (pipe2(gate, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0)
                return -1;
        /* Above the children's fixed numbers, so that the dup2s cannot collide. */
        for (int i = 0; i < 2; i++) {
                int a = fcntl(gate[i], F_DUPFD_CLOEXEC, 10), b = fcntl(rep[i], F_DUPFD_CLOEXEC, 10);
                close(gate[i]);
                close(rep[i]);
                gate[i] = a;
                rep[i] = b;
                if (a < 0 || b < 0)
                        return -1;
        }
        fxc_env env; /* its reg is unused: one per slice */
        char reg[4][140];
        fxc_env_fill(&env, nd->shim, NULL, nd->sim_dir, nd->uuid, nd->libdir);
        for (unsigned i = 0; i < nd->n_slices && i < 4; i++)
                snprintf(reg[i], sizeof(reg[i]), "KERF_SLICE_REGION=%s", nd->region[i]);
        char *base[512];
        size_t nb = fxc_env_inherit(base, 500, false);
        pid_t pids[MAX_PROCS];
        unsigned started = 0;
        int rc = 0;
        for (unsigned i = 0; i < procs; i++) {
                char *envp[520], ts[32];
                size_t ne = 0;
                memcpy(envp, base, nb * sizeof(*envp));
                ne = nb;
                if (shim)
                        envp[ne++] = env.pre;
                envp[ne++] = reg[i % nd->n_slices];
                envp[ne++] = env.sim;
                envp[ne++] = env.cvd;
                envp[ne++] = env.lib;
                envp[ne++] = "KERF_SLICE_ABI=2";
                envp[ne] = NULL;
                posix_spawn_file_actions_t fa;
                posix_spawn_file_actions_init(&fa);
                posix_spawn_file_actions_adddup2(&fa, gate[0], CHILD_GATE);
                posix_spawn_file_actions_adddup2(&fa, rep[1], CHILD_REPORT);
                posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
                snprintf(ts, sizeof(ts), "%" PRIu64, now_ns());
                char *argv[] = {nd->self, "--child", ts, NULL};
                int e = posix_spawn(&pids[i], nd->self, &fa, NULL, argv, envp);
                posix_spawn_file_actions_destroy(&fa);
                if (e) {
                        fprintf(stderr, "bench_init: spawn: %s\n", strerror(e));
                        rc = -1;
                        break;
                }
                started++;
        }
        close(gate[0]);
        close(rep[1]);
        /* Read "R" lines until all are ready, open the gate, then read "T" lines. */
        char buf[65536];
        size_t len = 0;
        unsigned ready = 0, done = 0;
        uint64_t t_gate = 0, deadline = now_ns() + 120000000000ull;
        bool gate_open = false;
        while (done < started && now_ns() < deadline) {
                if (!gate_open && ready == started) {
                        t_gate = now_ns();
                        close(gate[1]);
                        gate_open = true;
                }
                struct pollfd p = {.fd = rep[0], .events = POLLIN};
                if (poll(&p, 1, 1000) <= 0)
                        continue;
                ssize_t k = read(rep[0], buf + len, sizeof(buf) - 1 - len);
                if (k <= 0)
                        break;
                len += (size_t)k;
                char *line = buf, *nl;
                while ((nl = memchr(line, '\n', len - (size_t)(line - buf)))) {
                        *nl = 0;
                        if (line[0] == 'R') {
                                ready++;
                        } else if (line[0] == 'T') {
                                uint64_t d, t1, load;
                                int r;
                                if (sscanf(line, "T %" SCNu64 " %" SCNu64 " %" SCNu64 " %d", &d,
                                           &t1, &load, &r) == 4) {
                                        done++;
                                        if (r) {
                                                if (!s->failed++ || getenv("KERF_BENCH_VERBOSE"))
                                                        fprintf(stderr,
                                                                "bench_init: %s: a process "
                                                                "failed: CUresult %d after "
                                                                "%.1f ms\n",
                                                                shim ? "shim" : "direct", r,
                                                                (double)d / 1e6);
                                        } else if (s->n < MAX_PROCS * 8) {
                                                s->init[s->n] = d;
                                                s->gate[s->n] = t1 - t_gate;
                                                s->load[s->n] = load;
                                                s->n++;
                                        }
                                }
                        }
                        line = nl + 1;
                }
                len -= (size_t)(line - buf);
                memmove(buf, line, len);
        }
        if (!gate_open)
                close(gate[1]);
        close(rep[0]);
        for (unsigned i = 0; i < started; i++) {
                int st;
                if (done < started)
                        kill(pids[i], SIGKILL);
                waitpid(pids[i], &st, 0);
        }
        if (done < started) {
                fprintf(stderr, "bench_init: only %u of %u processes reported\n", done, started);
                rc = -1;
        }
        return rc;
}

int main(int argc, char **argv)
{
        if (argc == 3 && !strcmp(argv[1], "--child"))
                return child(strtoull(argv[2], NULL, 10));
        unsigned procs = 256, rounds = 2;
        for (int i = 1; i + 1 < argc; i += 2) {
                if (!strcmp(argv[i], "--procs"))
                        procs = (unsigned)strtoul(argv[i + 1], NULL, 10);
                else if (!strcmp(argv[i], "--rounds"))
                        rounds = (unsigned)strtoul(argv[i + 1], NULL, 10);
        }
        if (!procs || procs > MAX_PROCS || procs > KERF_SIM_MAX_PROCS || !rounds || rounds > 8) {
                fprintf(stderr, "usage: bench_init [--procs 1..%d] [--rounds 1..8]\n",
                        KERF_SIM_MAX_PROCS);
                return 2;
        }
        node nd;
        memset(&nd, 0, sizeof(nd));
        if (setup(&nd, procs) < 0)
                return 1;
        static samples s[2];
        int rc = 0;
        for (unsigned r = 0; r < rounds && !rc; r++)
                for (int m = 0; m < 2 && !rc; m++)
                        rc = round_run(&nd, procs, m == 1, &s[m]);
        teardown(&nd);
        if (rc)
                return 1;
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        printf("== shim init: %u processes starting at once (%u slices of one simulated H200), "
               "%u rounds, %ld CPUs; SIMULATED driver\n",
               procs, nd.n_slices, rounds, cpus);
        printf("%-8s %6s %7s | %-22s | %-22s | %-16s\n", "mode", "procs", "failed",
               "init->alloc p50/p99/max", "gate->alloc p50/p99/max", "spawn->main p50/p99");
        const char *names[2] = {"direct", "shim"};
        double p99[2];
        for (int m = 0; m < 2; m++) {
                qsort(s[m].init, s[m].n, sizeof(uint64_t), cmp_u64);
                qsort(s[m].gate, s[m].n, sizeof(uint64_t), cmp_u64);
                qsort(s[m].load, s[m].n, sizeof(uint64_t), cmp_u64);
                p99[m] = pct_ms(s[m].init, s[m].n, 0.99);
                printf("%-8s %6zu %7zu | %6.2f %6.2f %7.2f ms | %6.1f %6.1f %7.1f ms | %5.1f %6.1f "
                       "ms\n",
                       names[m], s[m].n, s[m].failed, pct_ms(s[m].init, s[m].n, 0.5), p99[m],
                       pct_ms(s[m].init, s[m].n, 1.0), pct_ms(s[m].gate, s[m].n, 0.5),
                       pct_ms(s[m].gate, s[m].n, 0.99), pct_ms(s[m].gate, s[m].n, 1.0),
                       pct_ms(s[m].load, s[m].n, 0.5), pct_ms(s[m].load, s[m].n, 0.99));
        }
        printf("shim added init->alloc p50 %+.2f ms, p99 %+.2f ms; target p99 <= 50 ms: %s\n",
               pct_ms(s[1].init, s[1].n, 0.5) - pct_ms(s[0].init, s[0].n, 0.5), p99[1] - p99[0],
               p99[1] <= 50.0 ? "met" : "NOT met");
        return s[0].failed || s[1].failed ? 1 : 0;
}
