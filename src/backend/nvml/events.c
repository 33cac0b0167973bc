/* SPDX-License-Identifier: Apache-2.0 */
/* events.c - NVML backend: the event watcher thread, XID attribution and blast radius */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "kerf/errno.h"

/*
 * Call graph: kerf_backend_watch_start -> watch_start: nvmlEventSetCreate ->
 * nvmlDeviceRegisterEvents(each GPU, XID | GPU unavailable & supported) -> pthread_create(run).
 * run: loop { nvmlEventSetWait_v2(poll_ms) -> on_event | probe_lost } until stop.
 * on_event -> classify -> units_hit -> caller's lookup per unit -> caller's callback.
 * kerf_backend_watch_stop -> stop flag, join (<= one poll period), nvmlEventSetFree.
 */

#define WANTED_EVENTS  (nvmlEventTypeXidCriticalError | nvmlEventTypeGpuUnavailableError)
#define PROBE_EVERY_MS 1000

static uint64_t now_us(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t mono_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void whole_ref(struct nvb *p, unsigned gpu, kerf_backend_unit_ref *u)
{
        memset(u, 0, sizeof(*u));
        u->gpu = gpu;
        snprintf(u->gpu_uuid, sizeof(u->gpu_uuid), "%s", p->gpus[gpu].uuid);
        snprintf(u->uuid, sizeof(u->uuid), "%s", p->gpus[gpu].uuid);
        u->gi_id = u->ci_id = KERF_BACKEND_NO_ID;
}

static void add_unit(kerf_backend_event *ev, const kerf_backend_unit_ref *u)
{
        if (ev->n_units < KERF_BACKEND_EVENT_MAX_UNITS)
                ev->units[ev->n_units++] = *u;
}

static void add_mig_units(struct nvb *p, kerf_backend_event *ev, unsigned gpu, unsigned gi,
                          unsigned ci)
{
        kerf_backend_mig m[KERF_BACKEND_MAX_MIG * 2];
        char err[NVB_ERR];
        int n = kerf__nvb_mig_list(p, gpu, m, KERF_BACKEND_MAX_MIG * 2, err);
        bool found = false;
        for (int i = 0; i < n && i < KERF_BACKEND_MAX_MIG * 2; i++) {
                kerf_backend_unit_ref u;
                if (gi != KERF_BACKEND_NO_ID && m[i].gi_id != gi)
                        continue;
                if (gi != KERF_BACKEND_NO_ID && ci != KERF_BACKEND_NO_ID && m[i].ci_id != ci)
                        continue;
                whole_ref(p, gpu, &u);
                u.is_mig = true;
                u.gi_id = m[i].gi_id;
                u.ci_id = m[i].ci_id;
                snprintf(u.uuid, sizeof(u.uuid), "%s", m[i].uuid);
                add_unit(ev, &u);
                found = true;
        }
        if (!found && gi != KERF_BACKEND_NO_ID) {
                /* Attributed to an instance we cannot list (gone, or no privilege). */
                kerf_backend_unit_ref u;
                whole_ref(p, gpu, &u);
                u.is_mig = true;
                u.gi_id = gi;
                u.ci_id = ci;
                u.uuid[0] = '\0';
                add_unit(ev, &u);
        }
}

/* Fills units (the blast radius) and tasks, then the log line, and delivers the event. */
static void deliver(struct nvb *p, kerf_backend_event *ev)
{
        unsigned gpu = ev->gpu;
        kerf_backend_unit_ref u;
        switch (ev->scope) {
        case KERF_SCOPE_NODE:
                for (unsigned i = 0; i < p->n_gpus; i++) {
                        whole_ref(p, i, &u);
                        add_unit(ev, &u);
                }
                break;
        case KERF_SCOPE_GPU:
                whole_ref(p, gpu, &u);
                add_unit(ev, &u);
                add_mig_units(p, ev, gpu, KERF_BACKEND_NO_ID, KERF_BACKEND_NO_ID);
                break;
        case KERF_SCOPE_UNIT:
        case KERF_SCOPE_NONE:
        default:
                if (ev->attributed) {
                        add_mig_units(p, ev, gpu, ev->gi_id, ev->ci_id);
                } else {
                        whole_ref(p, gpu, &u);
                        add_unit(ev, &u);
                }
                break;
        }
        if (p->watch.lookup) {
                for (unsigned i = 0; i < ev->n_units; i++) {
                        uint64_t t[KERF_BACKEND_EVENT_MAX_TASKS];
                        size_t n = p->watch.lookup(&ev->units[i], t, KERF_BACKEND_EVENT_MAX_TASKS,
                                                   p->watch.ud);
                        for (size_t j = 0; j < n && j < KERF_BACKEND_EVENT_MAX_TASKS; j++) {
                                bool dup = false;
                                for (unsigned k = 0; k < ev->n_tasks; k++)
                                        dup |= ev->tasks[k] == t[j];
                                if (!dup && ev->n_tasks < KERF_BACKEND_EVENT_MAX_TASKS)
                                        ev->tasks[ev->n_tasks++] = t[j];
                        }
                }
        }
        if (ev->kind == KERF_BEV_XID) {
                char where[64] = "";
                if (ev->attributed)
                        snprintf(where, sizeof(where), " GI %u CI %d", ev->gi_id,
                                 ev->ci_id == KERF_BACKEND_NO_ID ? -1 : (int)ev->ci_id);
                snprintf(ev->text, sizeof(ev->text),
                         "XID %u on GPU %u (%s)%s: %s -> %s, scope %s, %u unit(s), %u task(s)",
                         ev->xid, gpu, ev->gpu_uuid, where, kerf_xid_describe(ev->xid),
                         kerf_xid_class_name(ev->xid_class), kerf_blast_scope_name(ev->scope),
                         ev->n_units, ev->n_tasks);
        } else if (ev->kind == KERF_BEV_GPU_LOST) {
                snprintf(ev->text, sizeof(ev->text),
                         "GPU %u (%s) is lost (fallen off the bus): node-level, %u unit(s), "
                         "%u task(s)",
                         gpu, ev->gpu_uuid, ev->n_units, ev->n_tasks);
        }
        p->watch.cb(ev, p->watch.ud);
}

static void init_event(struct nvb *p, kerf_backend_event *ev, kerf_backend_event_kind kind,
                       unsigned gpu)
{
        memset(ev, 0, sizeof(*ev));
        ev->kind = kind;
        ev->ts_us = now_us();
        ev->gpu = gpu;
        if (gpu < p->n_gpus)
                snprintf(ev->gpu_uuid, sizeof(ev->gpu_uuid), "%s", p->gpus[gpu].uuid);
        ev->gi_id = ev->ci_id = KERF_BACKEND_NO_ID;
}

static void emit_lost(struct nvb *p, unsigned gpu)
{
        kerf_backend_event ev;
        if (atomic_exchange(&p->gpus[gpu].lost_reported, true))
                return; /* once per loss */
        init_event(p, &ev, KERF_BEV_GPU_LOST, gpu);
        ev.scope = KERF_SCOPE_NODE;
        ev.xid_class = KERF_XID_REBOOT_NODE;
        deliver(p, &ev);
}

static void emit_fail(struct nvb *p, nvmlReturn_t rc)
{
        kerf_backend_event ev;
        char err[NVB_ERR];
        init_event(p, &ev, KERF_BEV_WATCH_FAIL, 0);
        kerf__nvb_fail(p, err, rc, "nvmlEventSetWait_v2");
        snprintf(ev.text, sizeof(ev.text), "%s", err);
        p->watch.cb(&ev, p->watch.ud);
}

/* Asks every GPU a cheap question; GPU_IS_LOST answers become GPU-lost events. */
static void probe_lost(struct nvb *p)
{
        for (unsigned i = 0; i < p->n_gpus; i++) {
                nvmlDevice_t d = p->gpus[i].dev;
                nvmlReturn_t rc;
                if (!d)
                        continue;
                if (p->f.nvmlDeviceGetMemoryInfo_v2) {
                        nvmlMemory_v2_t m = {.version = nvmlMemory_v2};
                        rc = p->f.nvmlDeviceGetMemoryInfo_v2(d, &m);
                } else if (p->f.nvmlDeviceGetMemoryInfo) {
                        nvmlMemory_t m;
                        rc = p->f.nvmlDeviceGetMemoryInfo(d, &m);
                } else {
                        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
                        rc = p->f.nvmlDeviceGetName(d, name, sizeof(name));
                }
                if (rc == NVML_ERROR_GPU_IS_LOST)
                        emit_lost(p, i);
                else if (rc == NVML_SUCCESS)
                        atomic_store(&p->gpus[i].lost_reported, false); /* reset since */
        }
}

static void on_event(struct nvb *p, const nvmlEventData_t *e)
{
        kerf_backend_event ev;
        unsigned gpu = p->n_gpus;
        for (unsigned i = 0; i < p->n_gpus; i++)
                if (p->gpus[i].dev && p->gpus[i].dev == e->device)
                        gpu = i;
        if (gpu == p->n_gpus)
                return; /* not one of ours */
        if (e->eventType & nvmlEventTypeGpuUnavailableError) {
                emit_lost(p, gpu);
                return;
        }
        if (!(e->eventType & nvmlEventTypeXidCriticalError))
                return;
        init_event(p, &ev, KERF_BEV_XID, gpu);
        ev.xid = (unsigned)e->eventData;
        ev.xid_class = kerf_xid_classify(ev.xid);
        ev.xid_known = kerf_xid_known(ev.xid);
        if (!p->wait_v1 && e->gpuInstanceId != KERF_NVML_ID_UNATTRIBUTED) {
                ev.attributed = true;
                ev.gi_id = e->gpuInstanceId;
                ev.ci_id = e->computeInstanceId;
        }
        switch (ev.xid_class) {
        case KERF_XID_APP:
                ev.scope = KERF_SCOPE_UNIT;
                break;
        case KERF_XID_WATCH:
                ev.scope = KERF_SCOPE_NONE;
                break;
        case KERF_XID_REBOOT_NODE:
                ev.scope = KERF_SCOPE_NODE;
                break;
        case KERF_XID_RESET_GPU:
        default:
                ev.scope = KERF_SCOPE_GPU;
                break;
        }
        deliver(p, &ev);
}

static void sleep_ms(unsigned ms)
{
        struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
                ;
}

static void *run(void *arg)
{
        struct nvb *p = arg;
        uint64_t next_probe = 0;
        nvmlReturn_t last_fail = NVML_SUCCESS;
        while (!atomic_load(&p->stop)) {
                if (mono_ms() >= next_probe) {
                        probe_lost(p);
                        next_probe = mono_ms() + PROBE_EVERY_MS;
                }
                if (!p->set) {
                        sleep_ms(p->poll_ms);
                        continue;
                }
                nvmlEventData_t e;
                memset(&e, 0, sizeof(e));
                e.gpuInstanceId = e.computeInstanceId = KERF_NVML_ID_UNATTRIBUTED;
                nvmlReturn_t rc = p->f.nvmlEventSetWait_v2(p->set, &e, p->poll_ms);
                if (rc == NVML_SUCCESS) {
                        last_fail = NVML_SUCCESS;
                        on_event(p, &e);
                } else if (rc == NVML_ERROR_GPU_IS_LOST) {
                        probe_lost(p);
                        sleep_ms(p->poll_ms); /* the set may keep answering this */
                } else if (rc != NVML_ERROR_TIMEOUT) {
                        if (rc != last_fail)
                                emit_fail(p, rc);
                        last_fail = rc;
                        sleep_ms(p->poll_ms);
                }
        }
        return NULL;
}

int kerf__nvb_watch_start(kerf_backend *b, const kerf_backend_watch *w)
{
        struct nvb *p = kerf_backend_priv(b);
        if (p->watching) {
                kerf_backend_set_error(b, "the event watcher is already running");
                return -EBUSY;
        }
        p->watch = *w;
        p->set = NULL;
        if (p->f.nvmlEventSetCreate && p->f.nvmlDeviceRegisterEvents && p->f.nvmlEventSetWait_v2 &&
            p->f.nvmlEventSetFree && p->f.nvmlEventSetCreate(&p->set) == NVML_SUCCESS) {
                unsigned registered = 0;
                for (unsigned i = 0; i < p->n_gpus; i++) {
                        unsigned long long sup = WANTED_EVENTS;
                        nvmlDevice_t d = p->gpus[i].dev;
                        if (!d)
                                continue;
                        if (p->f.nvmlDeviceGetSupportedEventTypes &&
                            p->f.nvmlDeviceGetSupportedEventTypes(d, &sup) != NVML_SUCCESS)
                                sup = WANTED_EVENTS;
                        if (!(sup & WANTED_EVENTS))
                                continue;
                        /* NOT_SUPPORTED leaves the set usable; other GPUs still count. */
                        if (p->f.nvmlDeviceRegisterEvents(d, sup & WANTED_EVENTS, p->set) ==
                            NVML_SUCCESS)
                                registered++;
                }
                if (!registered) {
                        p->f.nvmlEventSetFree(p->set);
                        p->set = NULL; /* still probe for lost GPUs */
                }
        }
        atomic_store(&p->stop, false);
        if (pthread_create(&p->thread, NULL, run, p) != 0) {
                if (p->set)
                        p->f.nvmlEventSetFree(p->set);
                p->set = NULL;
                kerf_backend_set_error(b, "cannot start the event watcher thread");
                return -EAGAIN;
        }
        p->watching = true;
        return 0;
}

void kerf__nvb_watch_stop(kerf_backend *b)
{
        struct nvb *p = kerf_backend_priv(b);
        if (!p || !p->watching)
                return;
        atomic_store(&p->stop, true);
        pthread_join(p->thread, NULL);
        p->watching = false;
        if (p->set)
                p->f.nvmlEventSetFree(p->set);
        p->set = NULL;
}
