/* SPDX-License-Identifier: Apache-2.0 */
/* stress_harness.h - parent side of the shim stress tests: node, region, children, watcher */
#ifndef KERF_TEST_SHIM_STRESS_HARNESS_H
#define KERF_TEST_SHIM_STRESS_HARNESS_H

/*
 * Header-only (static inline) so that every test_stress_*.c is one self-contained executable.
 * Each test: a fresh simulated node (1 x H200) in a temp dir, a slice region made with
 * kerf_slice_region_create next to it, and children (stress_child, next to the test binary)
 * started with LD_PRELOAD=<build>/lib/libkerf-cuda.so, KERF_SLICE_REGION, KERF_SIM_DIR and
 * CUDA_VISIBLE_DEVICES=<the GPU's uuid>.
 *
 * Paths: KERF_SHIM_LIB overrides the shim (default <dir of the test>/../lib/libkerf-cuda.so),
 * KERF_STRESS_CHILD the child. KERF_STRESS_NO_SHIM=1 runs the children without the shim
 * (to check the children themselves; the shim checks then fail by design).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
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

#define SX_MIB         ((uint64_t)1 << 20)
#define SX_GIB         ((uint64_t)1 << 30)
#define SX_SIM_CTX_MIB ((uint64_t)300) /* KERF_SIM_CTX_OVERHEAD_MIB given to every child */

typedef struct sx_env {
        char dir[64];     /* temp dir: sim node in dir/node, region dir/slice */
        char sim_dir[96]; /* KERF_SIM_DIR */
        char region_path[96];
        char uuid[KERF_UUID_LEN];
        uint64_t phys; /* GPU memory of the simulated node */
        char shim[PATH_MAX], child[PATH_MAX], libdir[PATH_MAX];
        bool no_shim;
        struct kerf_slice_region *r; /* mapped read-write: the test plays kerfd */
        kerf_sim *sim;
} sx_env;

typedef struct sx_child {
        pid_t pid;
        int in, out; /* its stdin (we write), its stdout (we read) */
        char buf[2048];
        size_t len;
        bool reaped;
        int status;
} sx_child;

#define sx_now_ns   fxc_now_ns
#define sx_sleep_ms fxc_sleep_ms

/* Failure with context: prints and returns false, for use in `if (!...) fail()` chains. */
#define SX_FAIL(...)                                                                               \
        do {                                                                                       \
                fprintf(stderr, "STRESS FAIL %s:%d: ", __FILE__, __LINE__);                        \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
        } while (0)

/* The temp dir of the current test, removed at exit if a failed assertion skipped teardown,
 * after the children still running are killed (only live children of ours: waitpid WNOHANG). */
static char sx_exit_dir[64];
static pid_t sx_pids[1024];
static unsigned sx_npids;

static inline void sx_atexit(void)
{
        for (unsigned i = 0; i < sx_npids; i++)
                if (waitpid(sx_pids[i], NULL, WNOHANG) == 0) {
                        kill(sx_pids[i], SIGKILL);
                        waitpid(sx_pids[i], NULL, 0);
                }
        sx_npids = 0;
        fxc_rmdir(sx_exit_dir, "KERF_STRESS_KEEP", NULL);
}

/* Sets up node + region. memory_limit `cap`, compute `pct` (guarantee and ceiling). Returns 0 or
 * -1 with a message. */
static inline int sx_setup(sx_env *e, uint64_t cap, unsigned pct)
{
        memset(e, 0, sizeof(*e));
        char self[PATH_MAX - 64];
        if (fxc_self(NULL, 0, self, sizeof(self)) < 0)
                return -1;
        fxc_lib_paths(self, e->shim, sizeof(e->shim), e->libdir, sizeof(e->libdir));
        fxc_child_path(e->child, sizeof(e->child), "KERF_STRESS_CHILD", self, "shim_stress_child");
        e->no_shim = getenv("KERF_STRESS_NO_SHIM") && !strcmp(getenv("KERF_STRESS_NO_SHIM"), "1");
        if (access(e->child, X_OK) < 0) {
                SX_FAIL("child program %s: %s", e->child, strerror(errno));
                return -1;
        }
        if (!e->no_shim && access(e->shim, R_OK) < 0) {
                SX_FAIL("shim %s: %s (not built?)", e->shim, strerror(errno));
                return -1;
        }
        snprintf(e->dir, sizeof(e->dir), "/tmp/kerf-stress-XXXXXX");
        if (!mkdtemp(e->dir))
                return -1;
        static bool registered;
        if (!registered)
                atexit(sx_atexit), registered = true;
        sx_atexit(); /* a previous test of this program failed before its teardown */
        snprintf(sx_exit_dir, sizeof(sx_exit_dir), "%s", e->dir);
        snprintf(e->sim_dir, sizeof(e->sim_dir), "%s/node", e->dir);
        snprintf(e->region_path, sizeof(e->region_path), "%s/slice", e->dir);
        int rc = fxc_node_create(e->sim_dir, 1);
        kerf_sim_gpu_info gi;
        if (rc < 0 || fxc_node_gpu0(e->sim_dir, &e->sim, &gi) < 0) {
                SX_FAIL("simulated node in %s: %d", e->sim_dir, rc);
                return -1;
        }
        snprintf(e->uuid, sizeof(e->uuid), "%s", gi.uuid);
        e->phys = gi.mem_total;
        rc = fxc_region_create(e->region_path, cap, e->phys, pct, pct, 1);
        if (rc < 0 || (rc = kerf_slice_region_map(e->region_path, true, &e->r)) < 0) {
                SX_FAIL("region %s: %s", e->region_path, strerror(-rc));
                return -1;
        }
        return 0;
}

static inline void sx_teardown(sx_env *e)
{
        sx_exit_dir[0] = 0;
        kerf_slice_region_unmap(e->r);
        e->r = NULL;
        e->sim = kerf_sim_close(e->sim);
        fxc_rmdir(e->dir, "KERF_STRESS_KEEP", NULL);
}

/* kerfd's side of a limit change. */
static inline void sx_set_limit(sx_env *e, uint64_t cap)
{
        atomic_store(&e->r->limits.memory_limit, cap);
        atomic_fetch_add(&e->r->limits.generation, 1);
}

/* Starts `child MODE args...` with the slice's environment. Returns 0 or -1. */
static inline int sx_spawn(sx_env *e, sx_child *c, const char *const *args)
{
        char *envp[512], lim[64];
        size_t ne = fxc_env_inherit(envp, 500, true);
        fxc_env b;
        fxc_env_fill(&b, e->shim, e->region_path, e->sim_dir, e->uuid, e->libdir);
        snprintf(lim, sizeof(lim), "KERF_SLICE_MEMORY_LIMIT=%" PRIu64,
                 atomic_load(&e->r->limits.memory_limit));
        fxc_env_push(envp, &ne, &b, !e->no_shim);
        envp[ne++] = lim;
        envp[ne++] = "KERF_SLICE_ABI=2";
        envp[ne++] = "KERF_SIM_CTX_OVERHEAD_MIB=300";
        /* ASan builds: the shim is preloaded ahead of the ASan runtime the child links (it
         * checks the order and aborts otherwise); leaks of a SIGKILLed child are not ours. */
        envp[ne++] = "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0";
        envp[ne] = NULL;
        int pin[2], pout[2];
        if (pipe2(pin, O_CLOEXEC) < 0)
                return -1;
        if (pipe2(pout, O_CLOEXEC) < 0) {
                close(pin[0]), close(pin[1]);
                return -1;
        }
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, pin[0], 0);
        posix_spawn_file_actions_adddup2(&fa, pout[1], 1);
        char *argv[16];
        size_t na = 0;
        argv[na++] = e->child;
        for (; args[na - 1] && na < 15; na++)
                argv[na] = (char *)args[na - 1];
        argv[na] = NULL;
        memset(c, 0, sizeof(*c));
        int rc = posix_spawn(&c->pid, e->child, &fa, NULL, argv, envp);
        posix_spawn_file_actions_destroy(&fa);
        close(pin[0]);
        close(pout[1]);
        if (rc) {
                close(pin[1]), close(pout[0]);
                SX_FAIL("spawn %s: %s", e->child, strerror(rc));
                return -1;
        }
        c->in = pin[1];
        c->out = pout[0];
        if (sx_npids < sizeof(sx_pids) / sizeof(sx_pids[0]))
                sx_pids[sx_npids++] = c->pid;
        return 0;
}

/* Next line of the child's stdout into line (without newline), waiting at most timeout_ms.
 * Returns 0, -ETIMEDOUT, or -EPIPE (the child closed its stdout / died). */
static inline int sx_line(sx_child *c, char *line, size_t n, int timeout_ms)
{
        uint64_t end = sx_now_ns() + (uint64_t)timeout_ms * 1000000ull;
        for (;;) {
                char *nl = memchr(c->buf, '\n', c->len);
                if (nl) {
                        size_t l = (size_t)(nl - c->buf);
                        snprintf(line, n, "%.*s", (int)l, c->buf);
                        memmove(c->buf, nl + 1, c->len - l - 1);
                        c->len -= l + 1;
                        return 0;
                }
                uint64_t now = sx_now_ns();
                if (now >= end)
                        return -ETIMEDOUT;
                struct pollfd p = {.fd = c->out, .events = POLLIN};
                int pr = poll(&p, 1, (int)((end - now) / 1000000ull) + 1);
                if (pr < 0 && errno == EINTR)
                        continue;
                if (pr <= 0)
                        continue;
                ssize_t k = read(c->out, c->buf + c->len, sizeof(c->buf) - 1 - c->len);
                if (k <= 0)
                        return -EPIPE;
                c->len += (size_t)k;
        }
}

/* Waits for a line starting with `prefix`; other lines ("ERR ...") fail. */
static inline int sx_expect(sx_child *c, const char *prefix, char *line, size_t n, int timeout_ms)
{
        int rc = sx_line(c, line, n, timeout_ms);
        if (rc < 0) {
                SX_FAIL("child %d: no \"%s\" line (%s)", (int)c->pid, prefix,
                        rc == -ETIMEDOUT ? "timeout" : "exited");
                return -1;
        }
        if (strncmp(line, prefix, strlen(prefix))) {
                SX_FAIL("child %d: expected \"%s\", got \"%s\"", (int)c->pid, prefix, line);
                return -1;
        }
        return 0;
}

static inline int sx_send(sx_child *c, const char *fmt, ...)
{
        char b[256];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b, sizeof(b) - 1, fmt, ap);
        va_end(ap);
        b[n++] = '\n';
        return write(c->in, b, (size_t)n) == n ? 0 : -1;
}

/* "key=value" from a line, as an unsigned 64-bit number (0 when absent). */
static inline uint64_t sx_field(const char *line, const char *key)
{
        char k[64];
        snprintf(k, sizeof(k), " %s=", key);
        const char *p = strstr(line, k);
        return p ? strtoull(p + strlen(k), NULL, 10) : 0;
}

/* Closes the child's stdin (it exits at EOF) and waits up to timeout_ms; then SIGKILL. Returns
 * its exit status (0 = fine), 128+sig if killed. */
static inline int sx_finish(sx_child *c, int timeout_ms)
{
        if (c->in >= 0)
                close(c->in);
        c->in = -1;
        uint64_t end = sx_now_ns() + (uint64_t)timeout_ms * 1000000ull;
        while (!c->reaped) {
                pid_t p = waitpid(c->pid, &c->status, WNOHANG);
                if (p == c->pid) {
                        c->reaped = true;
                        break;
                }
                if (sx_now_ns() >= end) {
                        kill(c->pid, SIGKILL);
                        waitpid(c->pid, &c->status, 0);
                        c->reaped = true;
                        close(c->out);
                        return -1;
                }
                sx_sleep_ms(2);
        }
        close(c->out);
        c->out = -1;
        return WIFEXITED(c->status) ? WEXITSTATUS(c->status) : 128 + WTERMSIG(c->status);
}

/* ---- region readings ------------------------------------------------------------------------- */

static inline uint64_t sx_charged(const sx_env *e)
{
        return atomic_load(&e->r->memory_charged);
}

/* memory_used of pid's slot; *found false when pid has no slot. */
static inline uint64_t sx_slot_used(const sx_env *e, pid_t pid, bool *found)
{
        for (unsigned i = 0; i < KERF_SLICE_MAX_PROCS; i++)
                if (atomic_load(&e->r->procs[i].pid) == (int32_t)pid) {
                        if (found)
                                *found = true;
                        return atomic_load(&e->r->procs[i].memory_used);
                }
        if (found)
                *found = false;
        return 0;
}

/* Sum of memory_used over slots with a pid (live or being reclaimed), and how many. */
static inline uint64_t sx_slots_sum(const sx_env *e, unsigned *n)
{
        uint64_t s = 0;
        unsigned k = 0;
        for (unsigned i = 0; i < KERF_SLICE_MAX_PROCS; i++)
                if (atomic_load(&e->r->procs[i].pid) != 0) {
                        s += atomic_load(&e->r->procs[i].memory_used);
                        k++;
                }
        if (n)
                *n = k;
        return s;
}

/* After the children's exits: waits (at most ms) until nothing is charged and no slot is in
 * use; *nslots is then the number of slots still in use. */
static inline void sx_wait_released(sx_env *e, unsigned *nslots, unsigned ms)
{
        uint64_t t0 = sx_now_ns();
        while ((sx_charged(e) || sx_slots_sum(e, nslots) || *nslots) &&
               sx_now_ns() - t0 < (uint64_t)ms * 1000000ull)
                sx_sleep_ms(5);
}

/* Device memory the simulated driver has charged to live processes, and how many. */
static inline int sx_sim_used(sx_env *e, uint64_t *bytes, unsigned *nprocs)
{
        static kerf_sim_proc_info pi[KERF_SIM_MAX_PROCS];
        unsigned n = 0;
        int rc = kerf_sim_proc_list(e->sim, -1, -1, pi, KERF_SIM_MAX_PROCS, &n);
        if (rc < 0)
                return rc;
        uint64_t s = 0;
        for (unsigned i = 0; i < n && i < KERF_SIM_MAX_PROCS; i++)
                s += pi[i].mem_bytes;
        *bytes = s;
        *nprocs = n;
        return 0;
}

/* ---- watcher: samples the cap invariants while children race --------------------------------- */

typedef struct sx_watch {
        sx_env *e;
        _Atomic bool stop;
        bool sim; /* also sample the simulator (every ~5 ms) */
        uint64_t samples, sim_samples;
        uint64_t over;         /* samples with memory_charged > memory_limit */
        uint64_t max_charged;  /* largest memory_charged seen */
        uint64_t worst_excess; /* largest charged - limit */
        uint64_t per_proc;     /* sim allowance per attached process (default: its context) */
        uint64_t sim_over;     /* sim samples above limit + contexts x overhead */
        uint64_t sim_worst;    /* largest sim used - (limit + contexts x overhead) */
        uint64_t sim_max;      /* largest sim total seen */
        pthread_t th;
} sx_watch;

static inline void *sx_watch_main(void *arg)
{
        sx_watch *w = arg;
        uint64_t next_sim = 0;
        while (!atomic_load(&w->stop)) {
                uint64_t lim = atomic_load(&w->e->r->limits.memory_limit);
                uint64_t c = atomic_load(&w->e->r->memory_charged);
                w->samples++;
                if (c > w->max_charged)
                        w->max_charged = c;
                if (c > lim) {
                        w->over++;
                        if (c - lim > w->worst_excess)
                                w->worst_excess = c - lim;
                }
                uint64_t now = sx_now_ns();
                if (w->sim && now >= next_sim) {
                        uint64_t used;
                        unsigned np;
                        if (sx_sim_used(w->e, &used, &np) == 0) {
                                uint64_t bound = lim + np * w->per_proc;
                                w->sim_samples++;
                                if (used > w->sim_max)
                                        w->sim_max = used;
                                if (used > bound) {
                                        w->sim_over++;
                                        if (used - bound > w->sim_worst)
                                                w->sim_worst = used - bound;
                                }
                        }
                        next_sim = now + 5000000ull;
                }
                struct timespec ts = {0, 50000}; /* 50 us */
                nanosleep(&ts, NULL);
        }
        return NULL;
}

static inline void sx_watch_start(sx_watch *w, sx_env *e, bool sim, uint64_t per_proc)
{
        memset(w, 0, sizeof(*w));
        w->e = e;
        w->sim = sim;
        w->per_proc = per_proc;
        pthread_create(&w->th, NULL, sx_watch_main, w);
}

static inline void sx_watch_stop(sx_watch *w)
{
        atomic_store(&w->stop, true);
        pthread_join(w->th, NULL);
}

#endif /* KERF_TEST_SHIM_STRESS_HARNESS_H */
