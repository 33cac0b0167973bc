/* SPDX-License-Identifier: Apache-2.0 */
/* bench_sched_backfill.c - the cost and the effect of queue modes: the throughput workload
 * with half the tasks carrying a max_runtime_s, as strict queues without backfill (the old
 * behaviour), strict with backfill (the default) and best-effort, in one process; a step call's
 * CPU time as a ratio to the first, and the mean GPU occupancy (docs/PERFORMANCE.md, a2).
 * Arguments: [FLEET [CALLS [BOUNDED_PCT [BACKFILL_DEPTH]]]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

int main(int argc, char **argv)
{
        bench_cfg c = {.fleet_path = "examples/fleet-mixed-64.yaml",
                       .tenants = 100,
                       .pending = 10000,
                       .calls = 100000,
                       .seed = 1,
                       .place = KERF_PLACE_KERF,
                       .bounded_pct = 50};
        if (argc > 1)
                c.fleet_path = argv[1];
        if (argc > 2)
                c.calls = strtoul(argv[2], NULL, 10);
        if (argc > 3)
                c.bounded_pct = (unsigned)strtoul(argv[3], NULL, 10);
        if (argc > 4)
                c.backfill_depth = (unsigned)strtoul(argv[4], NULL, 10);
        static const struct {
                const char *name;
                bool no_backfill, best_effort;
        } modes[] = {{"strict", true, false},
                     {"strict+backfill", false, false},
                     {"best-effort", false, true}};
        double base = 0;
        printf("# bench_sched_backfill: %s, %u tenants, %zu pending, %u%% with max_runtime_s, "
               "%zu step(max=1) calls, policy kerf, backfill_depth %u, clock +1 s per call\n",
               c.fleet_path, c.tenants, c.pending, c.bounded_pct, c.calls,
               c.backfill_depth ? c.backfill_depth : 32);
        printf("%-16s %12s %11s %7s %12s %11s %10s %8s %7s %6s\n", "queues", "call_mean_us",
               "call_cpu_us", "x_cpu", "call_p99_us", "decisions", "dec_mean_us", "starts",
               "passed", "busy%");
        for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
                bench_out o;
                c.no_backfill = modes[i].no_backfill;
                c.best_effort = modes[i].best_effort;
                int rc = bench_run(&c, &o);
                if (rc < 0) {
                        fprintf(stderr, "bench: %s: %s\n", modes[i].name, strerror(-rc));
                        return 1;
                }
                if (i == 0)
                        base = o.call_cpu_mean_us;
                printf("%-16s %12.2f %11.2f %7.2f %12.2f %11llu %10.2f %8llu %7llu %6.1f\n",
                       modes[i].name, o.call_mean_us, o.call_cpu_mean_us,
                       base ? o.call_cpu_mean_us / base : 0, o.call_p99_us,
                       (unsigned long long)o.attempts, o.mean_us, (unsigned long long)o.starts,
                       (unsigned long long)o.passed, 100 * o.busy);
        }
        return 0;
}
