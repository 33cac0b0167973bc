/* SPDX-License-Identifier: Apache-2.0 */
/* slice_task.c - test stand-in for the shim: maps $KERF_SLICE_REGION and writes its counters */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kerf/slice_abi.h"

static uint64_t mono_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* usage: slice_task ACTIVE_S IDLE_S - reports activity for ACTIVE_S seconds, then sleeps. */
int main(int argc, char **argv)
{
        const char *path = getenv("KERF_SLICE_REGION");
        struct kerf_slice_region *r = NULL;
        struct timespec tick = {0, 100000000L};
        double active = argc > 1 ? atof(argv[1]) : 1, idle = argc > 2 ? atof(argv[2]) : 0;
        uint64_t end;
        int rc;

        if (!path) {
                fprintf(stderr, "KERF_SLICE_REGION not set\n");
                return 2;
        }
        if ((rc = kerf_slice_region_map(path, true, &r)) < 0) {
                fprintf(stderr, "cannot map %s: %d\n", path, rc);
                return 3;
        }
        printf("region %s limit %llu compute %u..%u task %llu\n", path,
               (unsigned long long)atomic_load(&r->limits.memory_limit),
               atomic_load(&r->limits.compute_pct), atomic_load(&r->limits.compute_limit_pct),
               (unsigned long long)r->limits.task_id);
        fflush(stdout);
        atomic_store(&r->memory_charged, 123456789u);
        atomic_store(&r->device_time_ns, 2500000000u);
        atomic_store(&r->throttled_ns, 1500000000u);
        atomic_store(&r->sample_wait_ns, 7000000u);
        atomic_store(&r->sample_waits, 3u);
        end = mono_ns() + (uint64_t)(active * 1e9);
        while (mono_ns() < end) {
                atomic_store(&r->last_activity_ns, mono_ns());
                atomic_store(&r->heartbeat_ns, mono_ns());
                nanosleep(&tick, NULL);
        }
        {
                /* when the activity stopped, in wall-clock ms, for the test to compare with */
                struct timespec now;
                clock_gettime(CLOCK_REALTIME, &now);
                printf("idle-from %lld\n",
                       (long long)now.tv_sec * 1000 + (long long)(now.tv_nsec / 1000000));
                fflush(stdout);
        }
        end = mono_ns() + (uint64_t)(idle * 1e9);
        while (mono_ns() < end) {
                atomic_store(&r->heartbeat_ns, mono_ns());
                nanosleep(&tick, NULL);
        }
        kerf_slice_region_unmap(r);
        return 0;
}
