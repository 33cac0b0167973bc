/* SPDX-License-Identifier: Apache-2.0 */
/* test_simstate.c - kerf-sim shared state: files, memory accounting, MIG, processes, faults */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>

#include "kerf/errno.h"
#include "sim_test_util.h"

struct fx {
        char dir[64];
        kerf_sim *st;
};

static int setup(void **state)
{
        struct fx *fx = calloc(1, sizeof(*fx));
        if (!fx || sim_test_node(fx->dir) < 0 || kerf_sim_open(NULL, &fx->st) < 0)
                return -1;
        *state = fx;
        return 0;
}

static int teardown(void **state)
{
        struct fx *fx = *state;
        kerf_sim_close(fx->st);
        sim_test_rmdir(fx->dir);
        free(fx);
        return 0;
}

static double now_s(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_open_errors(void **state)
{
        struct fx *fx = *state;
        kerf_sim *st = NULL;
        char path[128];
        struct stat sb;
        snprintf(path, sizeof(path), "%s/state", fx->dir);
        assert_int_equal(stat(path, &sb), 0);
        assert_int_equal(sb.st_mode & 0007, 0); /* never world-accessible */
        assert_int_equal(kerf_sim_open("/nonexistent/kerf-sim", &st), -ENOENT);
        kerf_fleet *f = NULL;
        assert_int_equal(kerf_fleet_new(&f), 0);
        assert_true(kerf_fleet_add_node(f, "n", 0, 0, NULL, 0) >= 0);
        assert_true(kerf_fleet_add_gpu(f, 0, kerf_gpu_model_find("T4"), false, 0, NULL) >= 0);
        assert_int_equal(kerf_sim_create(fx->dir, f, 0, false), -EEXIST);
        assert_int_equal(kerf_sim_create(fx->dir, f, 1, true), -EINVAL);
        kerf_fleet_free(f);

        /* world-writable state is refused */
        assert_int_equal(chmod(path, 0666), 0);
        assert_int_equal(kerf_sim_open(fx->dir, &st), -EPERM);
        assert_int_equal(chmod(path, 0600), 0);
        /* a damaged magic is refused */
        int fd = open(path, O_RDWR | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, "XXXX", 4, 0), 4);
        assert_int_equal(kerf_sim_open(fx->dir, &st), -KERF_ECORRUPT);
        assert_int_equal(pwrite(fd, "KERF", 4, 0), 4);
        close(fd);
        assert_int_equal(kerf_sim_open(fx->dir, &st), 0);
        kerf_sim_close(st);
}

static void test_gpu_info_and_resolve(void **state)
{
        struct fx *fx = *state;
        kerf_sim_node_info n;
        kerf_sim_gpu_info g;
        kerf_sim_target t;
        assert_int_equal(kerf_sim_node_get(fx->st, &n), 0);
        assert_string_equal(n.name, "simnode");
        assert_string_equal(n.driver, "550.54.15");
        assert_int_equal(n.cuda_version, 12040);
        assert_int_equal(kerf_sim_gpu_count(fx->st), 3);
        assert_int_equal(kerf_sim_gpu_get(fx->st, 0, &g), 0);
        assert_true(g.mig_enabled);
        assert_string_equal(g.model->name, "H200-141GB");
        assert_int_equal(kerf_sim_resolve(fx->st, g.uuid, &t), 0);
        assert_int_equal(t.gpu, 0);
        assert_int_equal(t.gi, -1);
        assert_int_equal(kerf_sim_gpu_get(fx->st, 2, &g), 0);
        assert_false(g.mig_enabled);
        assert_string_equal(g.model->name, "T4");
        assert_int_equal(kerf_sim_gpu_get(fx->st, 3, &g), -ENOENT);
        assert_int_equal(kerf_sim_resolve(fx->st, "2", &t), 0);
        assert_int_equal(t.gpu, 2);
        assert_int_equal(kerf_sim_resolve(fx->st, "3", &t), -ENOENT);
        assert_int_equal(kerf_sim_resolve(fx->st, "1x", &t), -EINVAL);
        assert_int_equal(kerf_sim_resolve(fx->st, "GPU-nope", &t), -ENOENT);
}

static void test_charge_capacity(void **state)
{
        struct fx *fx = *state;
        pid_t me = getpid();
        kerf_sim_target g1 = {1, -1, -1}, g0 = {0, -1, -1};
        uint64_t total, used;
        assert_int_equal(kerf_sim_target_mem(fx->st, g1, &total, &used), 0);
        assert_int_equal(used, 0);
        assert_int_equal(kerf_sim_mem_charge(fx->st, me, g1, total - 10), 0);
        assert_int_equal(kerf_sim_mem_charge(fx->st, me, g1, 11), -ENOMEM);
        assert_int_equal(kerf_sim_mem_charge(fx->st, me, g1, 10), 0);
        assert_int_equal(kerf_sim_mem_charge(fx->st, me, g1, 1), -ENOMEM);
        assert_int_equal(kerf_sim_mem_uncharge(fx->st, me, g1, total + 1), -EINVAL);
        assert_int_equal(kerf_sim_mem_uncharge(fx->st, me, g1, 100), 0);
        assert_int_equal(kerf_sim_target_mem(fx->st, g1, NULL, &used), 0);
        assert_int_equal(used, total - 100);
        /* whole GPU in MIG mode cannot be charged */
        assert_int_equal(kerf_sim_mem_charge(fx->st, me, g0, 1), -KERF_EUNSUPP);
        kerf_sim_proc_info p[4];
        unsigned np;
        assert_int_equal(kerf_sim_proc_list(fx->st, 1, -1, p, 4, &np), 0);
        assert_int_equal(np, 1);
        assert_int_equal(p[0].pid, me);
        assert_int_equal(p[0].mem_bytes, total - 100);
        assert_int_equal(kerf_sim_proc_detach(fx->st, me, g1), 0);
        assert_int_equal(kerf_sim_proc_detach(fx->st, me, g1), -ENOENT);
        assert_int_equal(kerf_sim_target_mem(fx->st, g1, NULL, &used), 0);
        assert_int_equal(used, 0);
        assert_int_equal(kerf_sim_mem_uncharge(fx->st, me, g1, 1), -ENOENT);
        assert_int_equal(kerf_sim_mem_charge(fx->st, 0, g1, 1), -EINVAL);
        assert_int_equal(kerf_sim_mem_charge(fx->st, me, (kerf_sim_target){7, -1, -1}, 1), -ENOENT);
}

static void test_mig_state(void **state)
{
        struct fx *fx = *state;
        pid_t me = getpid();
        unsigned gi, gi2, ci, rem;
        assert_int_equal(kerf_sim_gi_create(fx->st, 0, 9, 2, &gi), -EINVAL); /* 3g: 0 or 4 */
        assert_int_equal(kerf_sim_gi_create(fx->st, 0, 77, -1, &gi), -KERF_EUNSUPP);
        assert_int_equal(kerf_sim_gi_create(fx->st, 1, 9, 0, &gi), -KERF_EUNSUPP); /* MIG off */
        assert_int_equal(kerf_sim_mig_mode_set(fx->st, 2, true), -KERF_EUNSUPP);   /* T4 */
        assert_int_equal(kerf_sim_gi_create(fx->st, 0, 9, 4, &gi), 0);
        assert_int_equal(kerf_sim_gi_create(fx->st, 0, 9, 4, &gi2), -ENOSPC);
        assert_int_equal(kerf_sim_gi_create(fx->st, 0, 14, 4, &gi2), -ENOSPC); /* 2g overlaps */
        assert_int_equal(kerf_sim_gi_remaining(fx->st, 0, 9, &rem), 0);
        assert_int_equal(rem, 1);
        assert_int_equal(kerf_sim_gi_remaining(fx->st, 0, 19, &rem), 0);
        assert_int_equal(rem, 4);
        assert_int_equal(kerf_sim_gi_remaining(fx->st, 0, 0, &rem), 0);
        assert_int_equal(rem, 0);
        assert_int_equal(kerf_sim_ci_create(fx->st, 0, gi, 4, &ci), -KERF_EUNSUPP); /* 7c in 3g */
        assert_int_equal(kerf_sim_ci_create(fx->st, 0, gi, 2, &ci), 0);
        assert_int_equal(kerf_sim_ci_create(fx->st, 0, gi, 0, &ci), -ENOSPC);

        kerf_sim_gi_info info;
        assert_int_equal(kerf_sim_gi_get(fx->st, 0, gi, &info), 0);
        assert_int_equal(info.n_cis, 1);
        assert_int_equal(info.start, 4);
        assert_int_equal(info.mem_total, 71168ULL * KERF_MIB);
        assert_memory_equal(info.cis[0].uuid, "MIG-", 4);
        kerf_sim_target t;
        assert_int_equal(kerf_sim_resolve(fx->st, info.cis[0].uuid, &t), 0);
        assert_int_equal(t.gi, (int)gi);
        assert_int_equal(t.ci, (int)ci);
        assert_int_equal(kerf_sim_mem_charge(fx->st, me, t, info.mem_total), 0);
        assert_int_equal(kerf_sim_mem_charge(fx->st, me, t, 1), -ENOMEM);
        assert_int_equal(kerf_sim_gi_destroy(fx->st, 0, gi), -KERF_EINUSE); /* has a CI */
        assert_int_equal(kerf_sim_ci_destroy(fx->st, 0, gi, ci), -KERF_EINUSE);
        assert_int_equal(kerf_sim_mig_mode_set(fx->st, 0, false), -KERF_EINUSE);
        assert_int_equal(kerf_sim_proc_detach_all(fx->st, me), 1);
        assert_int_equal(kerf_sim_ci_destroy(fx->st, 0, gi, ci), 0);
        assert_int_equal(kerf_sim_gi_destroy(fx->st, 0, gi), 0);
        assert_int_equal(kerf_sim_gi_destroy(fx->st, 0, gi), -ENOENT);
        assert_int_equal(kerf_sim_resolve(fx->st, info.cis[0].uuid, &t), -ENOENT);
        /* without placement the driver takes the first free valid start */
        assert_int_equal(kerf_sim_gi_create(fx->st, 0, 19, -1, &gi), 0);
        assert_int_equal(kerf_sim_gi_create(fx->st, 0, 9, -1, &gi2), 0);
        assert_int_equal(kerf_sim_gi_get(fx->st, 0, gi2, &info), 0);
        assert_int_equal(info.start, 4);
        unsigned n;
        kerf_sim_gi_info all[KERF_SIM_MAX_GIS];
        assert_int_equal(kerf_sim_gi_list(fx->st, 0, all, KERF_SIM_MAX_GIS, &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(kerf_sim_mig_mode_set(fx->st, 1, true), 0);
        assert_int_equal(kerf_sim_gi_create(fx->st, 1, 0, -1, &gi), 0); /* 7g on GPU 1 */
        assert_int_equal(kerf_sim_gi_remaining(fx->st, 1, 19, &rem), 0);
        assert_int_equal(rem, 0);
}

static void test_reclaim_dead(void **state)
{
        struct fx *fx = *state;
        kerf_sim_target g1 = {1, -1, -1};
        uint64_t used;
        pid_t c = fork();
        if (c == 0) {
                kerf_sim *st = NULL;
                int rc = kerf_sim_open(NULL, &st);
                if (rc == 0)
                        rc = kerf_sim_mem_charge(st, getpid(), g1, KERF_GIB);
                _exit(rc ? 1 : 0); /* exits without uncharging */
        }
        int ws;
        assert_int_equal(waitpid(c, &ws, 0), c);
        assert_int_equal(WEXITSTATUS(ws), 0);
        assert_int_equal(kerf_sim_target_mem(fx->st, g1, NULL, &used), 0);
        assert_int_equal(used, KERF_GIB);
        assert_int_equal(kerf_sim_reclaim(fx->st), 1);
        assert_int_equal(kerf_sim_target_mem(fx->st, g1, NULL, &used), 0);
        assert_int_equal(used, 0);
}

/* Two processes charge 1 GiB at a time until the GPU is full: together they never exceed it. */
static void test_concurrent_charge(void **state)
{
        struct fx *fx = *state;
        kerf_sim_target g1 = {1, -1, -1};
        uint64_t total, used;
        int res[2], go[2];
        pid_t kids[2];
        assert_int_equal(pipe(res), 0);
        assert_int_equal(pipe(go), 0);
        assert_int_equal(kerf_sim_target_mem(fx->st, g1, &total, NULL), 0);
        for (int k = 0; k < 2; k++) {
                kids[k] = fork();
                if (kids[k] == 0) {
                        kerf_sim *st = NULL;
                        unsigned n = 0;
                        char b;
                        close(go[1]);
                        if (kerf_sim_open(NULL, &st) < 0)
                                _exit(1);
                        while (kerf_sim_mem_charge(st, getpid(), g1, KERF_GIB) == 0)
                                n++;
                        if (write(res[1], &n, sizeof(n)) != sizeof(n))
                                _exit(1);
                        if (read(go[0], &b, 1) < 0)
                                _exit(1);
                        _exit(0);
                }
        }
        close(go[0]);
        unsigned a = 0, b = 0;
        assert_int_equal(read(res[0], &a, sizeof(a)), sizeof(a));
        assert_int_equal(read(res[0], &b, sizeof(b)), sizeof(b));
        assert_int_equal(kerf_sim_target_mem(fx->st, g1, NULL, &used), 0);
        assert_int_equal((uint64_t)(a + b), total / KERF_GIB);
        assert_int_equal(used, (uint64_t)(a + b) * KERF_GIB);
        assert_true(used <= total);
        close(go[1]);
        for (int k = 0; k < 2; k++)
                waitpid(kids[k], NULL, 0);
        close(res[0]);
        close(res[1]);
}

/* A process killed while holding the shared lock does not block the others. */
static void test_killed_lock_holder(void **state)
{
        struct fx *fx = *state;
        int p[2];
        char b;
        assert_int_equal(pipe(p), 0);
        pid_t c = fork();
        if (c == 0) {
                kerf_sim *st = NULL;
                if (kerf_sim_open(NULL, &st) < 0 || kerf_sim_lock(st) < 0)
                        _exit(1);
                if (write(p[1], "x", 1) != 1)
                        _exit(1);
                for (;;)
                        pause();
        }
        assert_int_equal(read(p[0], &b, 1), 1);
        kill(c, SIGKILL);
        waitpid(c, NULL, 0);
        double t0 = now_s();
        assert_int_equal(kerf_sim_mem_charge(fx->st, getpid(), (kerf_sim_target){1, -1, -1}, 1), 0);
        assert_true(now_s() - t0 < 2.0);
        /* and the lock keeps working afterwards */
        assert_int_equal(kerf_sim_lock(fx->st), 0);
        kerf_sim_unlock(fx->st);
        assert_int_equal(kerf_sim_proc_detach_all(fx->st, getpid()), 1);
        close(p[0]);
        close(p[1]);
}

static void test_engine_util(void **state)
{
        struct fx *fx = *state;
        kerf_sim_target g1 = {1, -1, -1};
        kerf_sim_util_sample s[4];
        unsigned n, pct;
        pid_t me = getpid();
        assert_int_equal(kerf_sim_proc_attach(fx->st, me, g1), 0);
        assert_int_equal(kerf_sim_util_samples(fx->st, 1, 0, s, 4, &n), 0);
        assert_int_equal(n, 0); /* no engine activity yet */
        struct timespec d = {0, 400000000L};
        nanosleep(&d, NULL);
        /* the engine reports 200 ms of device time held over >= 400 ms of wall time */
        assert_int_equal(kerf_sim_engine_account(fx->st, me, g1, 200000000ULL), 0);
        assert_int_equal(kerf_sim_util_samples(fx->st, 1, 0, s, 4, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(s[0].pid, me);
        /* the sample covers the 1 s sample period before the activity; before attach is idle */
        assert_int_equal(s[0].sm_pct, 20);
        assert_int_equal(kerf_sim_util_gpu(fx->st, 1, 1000, &pct), 0);
        assert_true(pct >= 19 && pct <= 21);
        assert_int_equal(kerf_sim_util_samples(fx->st, 1, kerf_sim_now_us() + 1000000, s, 4, &n),
                         0);
        assert_int_equal(n, 0);
        kerf_sim_proc_info p;
        assert_int_equal(kerf_sim_proc_list(fx->st, 1, -1, &p, 1, &n), 0);
        assert_int_equal(p.engine_ns, 200000000ULL);
        assert_int_equal(kerf_sim_util_samples(fx->st, 9, 0, s, 4, &n), -ENOENT);
        /* a process that ran at all in its sample period never reports 0 (1 ms in 1 s) */
        kerf_sim_target g2 = {2, -1, -1};
        assert_int_equal(kerf_sim_engine_account(fx->st, getppid(), g2, 1000000ULL), 0);
        assert_int_equal(kerf_sim_util_samples(fx->st, 2, 0, s, 4, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(s[0].pid, getppid());
        assert_int_equal(s[0].sm_pct, 1);
        assert_int_equal(kerf_sim_proc_detach_all(fx->st, getppid()), 1);
}

static void sleep_ms(long ms)
{
        struct timespec d = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&d, NULL);
}

/* Keeps (pid, t) saturated for `ms`: accounts the wall time that passed every few ms, as the
 * engine does after each slice of a process that always has kernels. */
static void busy_for(kerf_sim *st, pid_t pid, kerf_sim_target t, uint64_t ms)
{
        uint64_t t0 = kerf_sim_now_us(), prev = t0;
        while (prev < t0 + ms * 1000ULL) {
                sleep_ms(5);
                uint64_t now = kerf_sim_now_us();
                assert_int_equal(kerf_sim_engine_account(st, pid, t, (now - prev) * 1000ULL), 0);
                prev = now;
        }
}

/* Busy, idle, busy: a sample covers the sample period before the process's last activity, so
 * neither the idle gap nor the earlier busy phase dilutes it, whatever lastSeenTimeStamp. */
static void test_util_idle_gap(void **state)
{
        struct fx *fx = *state;
        kerf_sim_target g1 = {1, -1, -1};
        kerf_sim_util_sample s[4];
        unsigned n, pct;
        pid_t me = getpid();
        assert_int_equal(kerf_sim_proc_attach(fx->st, me, g1), 0);
        busy_for(fx->st, me, g1, 300);
        uint64_t before_gap = kerf_sim_now_us() - 100000; /* seen during the first phase */
        sleep_ms(1200);
        uint64_t in_gap = kerf_sim_now_us() - 300000; /* seen during the idle gap */
        busy_for(fx->st, me, g1, 1100);
        uint64_t end = kerf_sim_now_us();
        const uint64_t since[] = {0, before_gap, in_gap};
        for (unsigned i = 0; i < 3; i++) {
                assert_int_equal(kerf_sim_util_samples(fx->st, 1, since[i], s, 4, &n), 0);
                assert_int_equal(n, 1);
                print_message("since %u: %u%%\n", i, s[0].sm_pct);
                assert_true(s[0].sm_pct >= 97);
                assert_true(s[0].ts_us <= end && s[0].ts_us + 20000 >= end);
        }
        assert_int_equal(kerf_sim_util_gpu(fx->st, 1, 1000, &pct), 0);
        assert_true(pct >= 97);
        /* idle again: the sample stays the one taken at the last activity; nothing newer */
        uint64_t ts = s[0].ts_us;
        sleep_ms(400);
        assert_int_equal(kerf_sim_util_samples(fx->st, 1, 0, s, 4, &n), 0);
        assert_int_equal(n, 1);
        assert_int_equal(s[0].ts_us, ts);
        assert_true(s[0].sm_pct >= 97);
        assert_int_equal(kerf_sim_util_samples(fx->st, 1, ts, s, 4, &n), 0);
        assert_int_equal(n, 0);
        /* the GPU's last second now holds ~600 ms of device time */
        assert_int_equal(kerf_sim_util_gpu(fx->st, 1, 1000, &pct), 0);
        print_message("GPU after 400 ms idle: %u%%\n", pct);
        assert_true(pct >= 50 && pct <= 70);
}

static void test_faults(void **state)
{
        struct fx *fx = *state;
        kerf_sim_xid_event ev;
        uint64_t head;
        unsigned gi, ci;
        assert_int_equal(kerf_sim_xid_head(fx->st, 0, &head), 0);
        assert_int_equal(head, 0);
        assert_int_equal(kerf_sim_xid_inject(fx->st, 0, 0, -1, -1), -EINVAL);
        assert_int_equal(kerf_sim_xid_inject(fx->st, 0, 48, 5, -1), -ENOENT); /* no such GI */
        assert_int_equal(kerf_sim_xid_inject(fx->st, 0, 48, -1, -1), 1);
        assert_int_equal(kerf_sim_gi_create(fx->st, 0, 9, 0, &gi), 0);
        assert_int_equal(kerf_sim_ci_create(fx->st, 0, gi, 2, &ci), 0);
        assert_int_equal(kerf_sim_xid_inject(fx->st, 0, 31, (int)gi, (int)ci), 2);
        assert_int_equal(kerf_sim_xid_next(fx->st, 0, 0, &ev), 0);
        assert_int_equal(ev.xid, 48);
        assert_int_equal(ev.gi, -1);
        assert_int_equal(kerf_sim_xid_next(fx->st, 0, 1, &ev), 0);
        assert_int_equal(ev.xid, 31);
        assert_int_equal(ev.gi, (int)gi);
        assert_int_equal(ev.ci, (int)ci);
        assert_int_equal(kerf_sim_xid_next(fx->st, 0, 2, &ev), -ENOENT);
        for (int i = 0; i < KERF_SIM_XID_RING + 5; i++)
                assert_true(kerf_sim_xid_inject(fx->st, 1, 13, -1, -1) > 0);
        assert_int_equal(kerf_sim_xid_next(fx->st, 1, 0, &ev), 0);
        assert_int_equal(ev.seq, 6); /* the oldest five were overwritten */

        kerf_sim_target g1 = {1, -1, -1};
        assert_int_equal(kerf_sim_mem_charge(fx->st, getpid(), g1, 5), 0);
        assert_int_equal(kerf_sim_gpu_lost(fx->st, 1), 0);
        assert_int_equal(kerf_sim_mem_charge(fx->st, getpid(), g1, 5), -KERF_EDEVICE);
        assert_int_equal(kerf_sim_gpu_reset(fx->st, 1, false), -KERF_EINUSE);
        assert_int_equal(kerf_sim_gpu_reset(fx->st, 1, true), 0);
        kerf_sim_gpu_info g;
        assert_int_equal(kerf_sim_gpu_get(fx->st, 1, &g), 0);
        assert_false(g.lost);
        assert_int_equal(g.n_procs, 0);
        assert_int_equal(kerf_sim_xid_next(fx->st, 1, 0, &ev), -ENOENT);
        assert_int_equal(kerf_sim_mem_charge(fx->st, getpid(), g1, 5), 0);
}

static void test_upgrade_reset(void **state)
{
        struct fx *fx = *state;
        kerf_sim_node_info n;
        unsigned gi;
        assert_int_equal(kerf_sim_upgrade(fx->st, "56x", 0, false), -EINVAL);
        assert_int_equal(kerf_sim_upgrade(fx->st, "560.35.03", 999, false), -EINVAL);
        assert_int_equal(kerf_sim_mem_charge(fx->st, getpid(), (kerf_sim_target){1, -1, -1}, 1), 0);
        assert_int_equal(kerf_sim_upgrade(fx->st, "560.35.03", 12060, false), -KERF_EINUSE);
        assert_int_equal(kerf_sim_upgrade(fx->st, "560.35.03", 12060, true), 0);
        assert_int_equal(kerf_sim_node_get(fx->st, &n), 0);
        assert_string_equal(n.driver, "560.35.03");
        assert_int_equal(n.cuda_version, 12060);
        assert_int_equal(kerf_sim_gi_create(fx->st, 0, 0, -1, &gi), 0);
        assert_int_equal(kerf_sim_mig_mode_set(fx->st, 2, false), -KERF_EUNSUPP);
        assert_int_equal(kerf_sim_reset(fx->st), 0);
        assert_int_equal(kerf_sim_node_get(fx->st, &n), 0);
        assert_string_equal(n.driver, "550.54.15");
        kerf_sim_gpu_info g;
        assert_int_equal(kerf_sim_gpu_get(fx->st, 0, &g), 0);
        assert_int_equal(g.n_gis, 0);
        assert_int_equal(g.n_procs, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
            cmocka_unit_test_setup_teardown(test_gpu_info_and_resolve, setup, teardown),
            cmocka_unit_test_setup_teardown(test_charge_capacity, setup, teardown),
            cmocka_unit_test_setup_teardown(test_mig_state, setup, teardown),
            cmocka_unit_test_setup_teardown(test_reclaim_dead, setup, teardown),
            cmocka_unit_test_setup_teardown(test_concurrent_charge, setup, teardown),
            cmocka_unit_test_setup_teardown(test_killed_lock_holder, setup, teardown),
            cmocka_unit_test_setup_teardown(test_engine_util, setup, teardown),
            cmocka_unit_test_setup_teardown(test_util_idle_gap, setup, teardown),
            cmocka_unit_test_setup_teardown(test_faults, setup, teardown),
            cmocka_unit_test_setup_teardown(test_upgrade_reset, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
