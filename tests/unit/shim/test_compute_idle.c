/* SPDX-License-Identifier: Apache-2.0 */
/* test_compute_idle.c - the background thread of an idle process: few wake-ups, heartbeat
 * kept; the last launches before exit counted */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "test_compute.h"

/* The tid of pid's thread named `name`, or -1. */
static int find_thread(pid_t pid, const char *name)
{
        char dir[64], p[384], comm[32];
        snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
        DIR *d = opendir(dir);
        if (!d)
                return -1;
        int tid = -1;
        struct dirent *e;
        while (tid < 0 && (e = readdir(d))) {
                if (e->d_name[0] == '.')
                        continue;
                snprintf(p, sizeof(p), "%s/%s/comm", dir, e->d_name);
                FILE *f = fopen(p, "r");
                if (!f)
                        continue;
                if (fgets(comm, sizeof(comm), f) && !strncmp(comm, name, strlen(name)))
                        tid = atoi(e->d_name);
                fclose(f);
        }
        closedir(d);
        return tid;
}

/* Context switches (voluntary + not) of thread tid: each sleep-wake cycle is one. */
static long switches(pid_t pid, int tid)
{
        char p[128], line[128];
        snprintf(p, sizeof(p), "/proc/%d/task/%d/status", (int)pid, tid);
        FILE *f = fopen(p, "r");
        if (!f)
                return -1;
        long n = 0, v;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
                    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
                        n += v;
        fclose(f);
        return n;
}

/* An idle process (launched, synchronised, now waiting): its background thread backs off to
 * KS_IDLE_TICK_MS (~10 wake-ups a second; a fixed 2 ms tick was 500) and still stores the
 * heartbeat at least once a second. Then 16 launches right before exit: counted (the exit
 * hook publishes what no tick saw), the slot given back. */
static void t_idle_thread(void **state)
{
        (void)state;
        ct_node nd;
        assert_int_equal(ct_setup(&nd), 0);
        const char *args[] = {"idle", "100", "1600", NULL};
        int a = ct_spawn(&nd, 0, 50, 50, -1, NULL, args);
        assert_true(a >= 0);
        struct kerf_slice_region *r = nd.p[a].r;
        assert_true(ct_expect(&nd.p[a], "idle", 10000));
        ct_sleep_ms(250); /* the thread sees the launches, then backs off */
        int tid = find_thread(nd.p[a].pid, "kerf-shim");
        assert_true(tid > 0);
        long s0 = switches(nd.p[a].pid, tid);
        uint64_t t0 = ct_now(), hb0 = atomic_load(&r->heartbeat_ns), hb_gap = 0, last = hb0;
        while (ct_now() - t0 < 1000 * CT_MS) {
                ct_sleep_ms(20);
                uint64_t hb = atomic_load(&r->heartbeat_ns);
                if (hb != last) {
                        if (hb - last > hb_gap)
                                hb_gap = hb - last;
                        last = hb;
                }
        }
        long s1 = switches(nd.p[a].pid, tid);
        uint64_t dt = ct_now() - t0;
        assert_true(ct_wait(&nd.p[a]));
        uint64_t launches = atomic_load(&r->launches), dev = atomic_load(&r->device_time_ns);
        uint32_t nprocs = atomic_load(&r->nprocs);
        print_message("idle background thread: %ld wake-ups in %.0f ms; heartbeat every <= "
                      "%.0f ms; launches counted %llu of 32 (device time %.1f ms)\n",
                      s1 - s0, (double)dt / 1e6, (double)hb_gap / 1e6, (unsigned long long)launches,
                      (double)dev / 1e6);
        ct_teardown(&nd);
        assert_true(s0 >= 0 && s1 >= s0);
        assert_true(s1 - s0 <= 40); /* ~10 expected; a 2 ms tick makes ~500 */
        assert_true(last > hb0);    /* the heartbeat went on */
        assert_true(hb_gap > 0 && hb_gap < 1000 * CT_MS);
        assert_int_equal(launches, 32);
        assert_true(dev >= 32 * 100 * 1000ULL * 9 / 10);
        assert_int_equal(nprocs, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(t_idle_thread),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
