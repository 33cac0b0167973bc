/* SPDX-License-Identifier: Apache-2.0 */
/* test_engine.c - time-slicing between two busy processes, measured in engine device time */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "simcuda_fixture.h"

/* Each child launches one 1 s kernel after a start signal. The parent samples the
 * per-process engine time that simstate publishes: between two samples taken while both
 * still have work, round robin must give each 50% +- 5% of the device time. */
static const char busy_module[] = "KERFSIM-MODULE 1\nkernel busy cost_us=1000000\n";

static void child(int go_fd, int ready_fd)
{
        CUcontext c;
        CUmodule m;
        CUfunction f;
        CU(cuInit(0));
        CU(cuCtxCreate_v4(&c, NULL, 0, 0));
        CU(cuModuleLoadData(&m, busy_module));
        CU(cuModuleGetFunction(&f, m, "busy"));
        CK(write(ready_fd, "r", 1) == 1);
        char b;
        CK(read(go_fd, &b, 1) == 1);
        CU(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
        CU(cuCtxSynchronize());
        exit(0);
}

static int engine_ns(kerf_sim *st, pid_t p[2], uint64_t out[2])
{
        kerf_sim_proc_info pi[8];
        unsigned n;
        if (kerf_sim_proc_list(st, 0, -1, pi, 8, &n) < 0)
                return -1;
        out[0] = out[1] = 0;
        for (unsigned i = 0; i < n && i < 8; i++)
                for (int k = 0; k < 2; k++)
                        if (pi[i].pid == p[k])
                                out[k] = pi[i].engine_ns;
        return 0;
}

static void sleep_ms(long ms)
{
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

static void t_fairness(void **state)
{
        (void)state;
        fx_node("H200", 1, false);
        unsetenv("KERF_SIM_CLOCK");
        int go[2], ready[2];
        assert_int_equal(pipe(go), 0);
        assert_int_equal(pipe(ready), 0);
        pid_t p[2];
        for (int i = 0; i < 2; i++) {
                fflush(NULL);
                p[i] = fork();
                if (p[i] == 0)
                        child(go[0], ready[1]);
        }
        char b;
        for (int i = 0; i < 2; i++)
                assert_int_equal(read(ready[0], &b, 1), 1);
        assert_int_equal(write(go[1], "gg", 2), 2);
        kerf_sim *st;
        assert_int_equal(kerf_sim_open(NULL, &st), 0);
        uint64_t s1[2], s2[2];
        /* S1: both have been scheduled at least once. */
        for (int i = 0; i < 2000; i++) {
                assert_int_equal(engine_ns(st, p, s1), 0);
                if (s1[0] && s1[1])
                        break;
                sleep_ms(1);
        }
        assert_true(s1[0] && s1[1]);
        /* S2: 400 ms more device time handed out. */
        for (int i = 0; i < 10000; i++) {
                assert_int_equal(engine_ns(st, p, s2), 0);
                if (s2[0] + s2[1] - s1[0] - s1[1] >= 400000000ULL)
                        break;
                sleep_ms(2);
        }
        kerf_sim_close(st);
        uint64_t d0 = s2[0] - s1[0], d1 = s2[1] - s1[1];
        bool both_busy = s2[0] < 1000000000ULL && s2[1] < 1000000000ULL;
        for (int i = 0; i < 2; i++) {
                int ws;
                waitpid(p[i], &ws, 0);
                assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
        }
        fx_cleanup();
        print_message("device time in window: %llu / %llu ns\n", (unsigned long long)d0,
                      (unsigned long long)d1);
        assert_true(both_busy);
        double share = (double)d0 / (double)(d0 + d1);
        assert_true(share >= 0.45 && share <= 0.55);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(t_fairness),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
