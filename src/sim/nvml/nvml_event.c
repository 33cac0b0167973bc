/* SPDX-License-Identifier: Apache-2.0 */
/* nvml_event.c - simulated NVML events: XID critical errors and GPU lost, from the shared state */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kerf/errno.h"
#include "nvml_internal.h"

#define SUPPORTED_EVENTS (nvmlEventTypeXidCriticalError | nvmlEventTypeGpuUnavailableError)
#define POLL_NS          2000000L /* the state is polled every 2 ms while waiting */

struct nvmlEventSet_st {
        unsigned magic;
        pthread_mutex_t mu;
        unsigned long long mask[KERF_SIM_MAX_GPUS];
        uint64_t seen[KERF_SIM_MAX_GPUS];  /* newest XID seq delivered or present at register */
        bool lost_sent[KERF_SIM_MAX_GPUS]; /* GpuUnavailableError delivered for this loss */
};

NVML_API nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        struct nvmlEventSet_st *s = NULL;
        if (!set) {
                r = NVML_ERROR_INVALID_ARGUMENT;
        } else if (!(s = calloc(1, sizeof(*s)))) {
                r = NVML_ERROR_MEMORY;
        } else {
                pthread_mutex_init(&s->mu, NULL);
                s->magic = HANDLE_MAGIC;
                *set = s;
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        if (!set || set->magic != HANDLE_MAGIC) {
                r = NVML_ERROR_INVALID_ARGUMENT;
        } else {
                set->magic = 0;
                pthread_mutex_destroy(&set->mu);
                free(set);
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device,
                                                       unsigned long long *eventTypes)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        if (!(r = kerf__nvml_dev_check(device, true, NULL))) {
                if (!eventTypes)
                        r = NVML_ERROR_INVALID_ARGUMENT;
                else if (device->gi >= 0)
                        r = NVML_ERROR_NOT_SUPPORTED;
                else
                        *eventTypes = SUPPORTED_EVENTS;
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long eventTypes,
                                               nvmlEventSet_t set)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        uint64_t head;
        if ((r = kerf__nvml_dev_check(device, true, NULL)))
                goto out;
        if (!set || set->magic != HANDLE_MAGIC || eventTypes == 0)
                r = NVML_ERROR_INVALID_ARGUMENT;
        else if (device->gi >= 0 || (eventTypes & ~SUPPORTED_EVENTS))
                r = NVML_ERROR_NOT_SUPPORTED; /* the set is left as it was, still usable */
        else if (!(r = kerf__nvml_err(
                       kerf_sim_xid_head(kerf__nvml_sim(), (unsigned)device->gpu, &head)))) {
                pthread_mutex_lock(&set->mu);
                if (!set->mask[device->gpu])
                        set->seen[device->gpu] = head; /* only events after registration */
                set->mask[device->gpu] |= eventTypes;
                pthread_mutex_unlock(&set->mu);
        }
out:
        kerf__nvml_leave();
        return r;
}

/* One scan of the registered GPUs: SUCCESS with *data, GPU_IS_LOST, or TIMEOUT (nothing). */
static nvmlReturn_t scan(nvmlEventSet_t set, nvmlEventData_t *data)
{
        kerf_sim *st = kerf__nvml_sim();
        nvmlReturn_t r = NVML_ERROR_TIMEOUT;
        pthread_mutex_lock(&set->mu);
        for (unsigned g = 0; g < KERF_SIM_MAX_GPUS && r == NVML_ERROR_TIMEOUT; g++) {
                kerf_sim_gpu_info gi;
                kerf_sim_xid_event ev;
                if (!set->mask[g] || kerf_sim_gpu_get(st, g, &gi) < 0)
                        continue;
                if (!gi.lost)
                        set->lost_sent[g] = false; /* reset since: a new loss is a new event */
                if (gi.lost && (set->mask[g] & nvmlEventTypeGpuUnavailableError) &&
                    !set->lost_sent[g]) {
                        /* one GpuUnavailableError event per loss, then GPU_IS_LOST */
                        set->lost_sent[g] = true;
                        data->device = kerf__nvml_dev(g);
                        data->eventType = nvmlEventTypeGpuUnavailableError;
                        data->eventData = 0;
                        data->gpuInstanceId = KERF_NVML_ID_UNATTRIBUTED;
                        data->computeInstanceId = KERF_NVML_ID_UNATTRIBUTED;
                        r = NVML_SUCCESS;
                } else if (gi.lost) {
                        r = NVML_ERROR_GPU_IS_LOST;
                } else if ((set->mask[g] & nvmlEventTypeXidCriticalError) &&
                           kerf_sim_xid_next(st, g, set->seen[g], &ev) == 0) {
                        set->seen[g] = ev.seq;
                        data->device = kerf__nvml_dev(g);
                        data->eventType = nvmlEventTypeXidCriticalError;
                        data->eventData = ev.xid;
                        data->gpuInstanceId =
                            ev.gi < 0 ? KERF_NVML_ID_UNATTRIBUTED : (unsigned)ev.gi;
                        data->computeInstanceId =
                            ev.ci < 0 ? KERF_NVML_ID_UNATTRIBUTED : (unsigned)ev.ci;
                        r = NVML_SUCCESS;
                }
        }
        pthread_mutex_unlock(&set->mu);
        return r;
}

NVML_API nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data,
                                          unsigned int timeoutms)
{
        nvmlReturn_t r = kerf__nvml_enter();
        if (r)
                return r;
        if (!set || set->magic != HANDLE_MAGIC || !data) {
                kerf__nvml_leave();
                return NVML_ERROR_INVALID_ARGUMENT;
        }
        struct timespec start, now;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
                r = scan(set, data);
                if (r != NVML_ERROR_TIMEOUT)
                        break;
                clock_gettime(CLOCK_MONOTONIC, &now);
                int64_t ms = (int64_t)(now.tv_sec - start.tv_sec) * 1000 +
                             (now.tv_nsec - start.tv_nsec) / 1000000;
                if (ms >= (int64_t)timeoutms)
                        break;
                /* Sleep without holding the library lock, so nvmlShutdown is not starved; the
                 * state may be gone when we return, so re-enter and re-check. */
                kerf__nvml_leave();
                struct timespec d = {0, POLL_NS};
                nanosleep(&d, NULL);
                if ((r = kerf__nvml_enter()))
                        return r;
        }
        kerf__nvml_leave();
        return r;
}

NVML_API nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *data,
                                       unsigned int timeoutms)
{
        return nvmlEventSetWait_v2(set, data, timeoutms);
}
