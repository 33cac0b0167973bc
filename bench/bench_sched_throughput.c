/* SPDX-License-Identifier: Apache-2.0 */
/* bench_sched_throughput.c - decisions per second and per-decision latency with 10,000 pending
 * tasks, 100 tenants, a 64-GPU mixed fleet (issue 2, benchmark a) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

int main(int argc, char **argv)
{
        bench_cfg c = {.fleet_path = "examples/fleet-mixed-64.yaml",
                       .tenants = 100,
                       .pending = 10000,
                       .calls = 200000,
                       .seed = 1,
                       .place = KERF_PLACE_KERF};
        if (argc > 1)
                c.fleet_path = argv[1];
        if (argc > 2)
                c.calls = strtoul(argv[2], NULL, 10);
        const kerf_place_policy pols[] = {KERF_PLACE_KERF, KERF_PLACE_BESTFIT, KERF_PLACE_FIRSTFIT};
        const char *names[] = {"kerf", "bestfit", "firstfit"};
        int fail = 0;
        printf("# bench_sched_throughput: %s, %u tenants, %zu pending, %zu step(max=1) calls\n",
               c.fleet_path, c.tenants, c.pending, c.calls);
        printf("%-9s %12s %10s %9s %9s %9s %9s %12s %8s %8s\n", "policy", "decisions/s",
               "decisions", "mean_us", "p50_us", "p99_us", "max_us", "call_p99_us", "starts",
               "mig_cr");
        for (size_t i = 0; i < 3; i++) {
                bench_out o;
                c.place = pols[i];
                if (bench_run(&c, &o) < 0)
                        return 1;
                printf("%-9s %12.0f %10llu %9.2f %9.2f %9.2f %9.1f %12.2f %8llu %8llu\n", names[i],
                       o.dec_per_s, (unsigned long long)o.attempts, o.mean_us, o.p50_us, o.p99_us,
                       o.max_us, o.call_p99_us, (unsigned long long)o.starts,
                       (unsigned long long)o.mig_creates);
                if (pols[i] == KERF_PLACE_KERF) {
                        bool ok = o.dec_per_s >= 50000 && o.p99_us <= 200;
                        printf("# target (kerf): >= 50000 decisions/s and p99 <= 200 us: %s "
                               "(end: %zu pending, %zu running, %llu MIG destroys)\n",
                               ok ? "MET" : "NOT MET", o.pending_end, o.running_end,
                               (unsigned long long)o.mig_destroys);
                        fail |= !ok;
                }
        }
        return 0;
}
