/* SPDX-License-Identifier: Apache-2.0 */
/* bench_sched_growth.c - per-decision time from 1k to 100k pending tasks (issue 2, benchmark b) */
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"

int main(int argc, char **argv)
{
        static const size_t depth[] = {1000, 3000, 10000, 30000, 100000};
        bench_cfg c = {.fleet_path = "examples/fleet-mixed-64.yaml",
                       .tenants = 100,
                       .pending = 0,
                       .calls = 50000,
                       .seed = 7,
                       .place = KERF_PLACE_KERF};
        if (argc > 1)
                c.fleet_path = argv[1];
        if (argc > 2)
                c.calls = strtoul(argv[2], NULL, 10);
        double base_mean = 0, base_p99 = 0;
        printf("# bench_sched_growth: %s, %u tenants, policy kerf, %zu step(max=1) calls each\n",
               c.fleet_path, c.tenants, c.calls);
        printf("%9s %12s %9s %9s %9s %11s %10s %9s\n", "pending", "decisions/s", "mean_us",
               "p99_us", "x_mean", "x_p99", "fill_s", "call_p99");
        for (size_t i = 0; i < sizeof(depth) / sizeof(*depth); i++) {
                bench_out o;
                c.pending = depth[i];
                if (bench_run(&c, &o) < 0)
                        return 1;
                if (i == 0) {
                        base_mean = o.mean_us;
                        base_p99 = o.p99_us;
                }
                printf("%9zu %12.0f %9.2f %9.2f %9.2f %11.2f %10.3f %9.2f\n", depth[i], o.dec_per_s,
                       o.mean_us, o.p99_us, base_mean ? o.mean_us / base_mean : 0,
                       base_p99 ? o.p99_us / base_p99 : 0, o.fill_s, o.call_p99_us);
        }
        return 0;
}
