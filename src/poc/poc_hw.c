/* SPDX-License-Identifier: Apache-2.0 */
/* poc_hw.c - HW1 (MIG unit lifecycle, each step checked against NVML) and HW4 (MIG units under
 * the same quotas, queues, preemption and lifecycle as slices, in one mixed run) */
#include <stdio.h>
#include <string.h>

#include "poc_hw.h"

#define NO_MIG_CHANGE "kerf never changes MIG mode or layout on a real GPU (the repository's rule)"

/* kerfd's MIG units vs the MIG devices NVML lists on the MIG GPUs: how many of either have no
 * counterpart (0 = in sync). Adds both lists to rec as a timeline event `label`. */
static int mig_sync(poc_ctx *p, json_t *rec, const char *label)
{
        int gpus[16], ng = hw_mig_gpus(p, gpus, 16), bad = 0;
        json_t *units = hw_units(p), *u, *detail = json_object(), *devs = json_array();
        size_t i;

        for (int k = 0; k < ng; k++) {
                char uuid[96];
                poc_mig_dev d[64];
                hw_gpu_uuid(p, gpus[k], uuid, sizeof(uuid));
                int n = poc_nvml_migs(uuid, d, 64);
                for (int j = 0; j < n && j < 64; j++) {
                        bool known = false;
                        json_array_foreach(units, i, u)
                        {
                                const char *mu = json_string_value(json_object_get(u, "mig_uuid"));
                                known |= mu && !strcmp(mu, d[j].uuid);
                        }
                        json_array_append_new(devs, json_pack("{s:i, s:s, s:i, s:b}", "gpu",
                                                              gpus[k], "uuid", d[j].uuid, "gi",
                                                              d[j].gi, "governed", known));
                        bad += !known; /* an orphan: on the device, unknown to kerf */
                }
        }
        json_array_foreach(units, i, u)
        {
                const char *kind = json_string_value(json_object_get(u, "kind"));
                const char *mu = json_string_value(json_object_get(u, "mig_uuid"));
                char guuid[96];
                if (!kind || strcmp(kind, "mig") || !mu || !*mu)
                        continue;
                hw_gpu_uuid(p, (int)json_integer_value(json_object_get(u, "gpu")), guuid,
                            sizeof(guuid));
                bad += !poc_nvml_find(guuid, mu, NULL); /* a ghost: kerf's, not on the device */
        }
        json_object_set_new(detail, "nvml_devices", devs);
        json_object_set_new(detail, "kerf_units", units);
        json_object_set_new(detail, "mismatches", json_integer(bad));
        poc_event(rec, poc_now_ms(), label, detail);
        return bad;
}

static json_t *mig_req(const char *tenant, const char *profile, int priority, bool preemptible)
{
        return json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:b}", "tenant", tenant, "queue", "mig",
                         "workload", "inference", "tier", "high", "mig_profile", profile,
                         "priority", priority, "preemptible", preemptible);
}

/* Submits a MIG task and waits until it runs; returns ms from submit to running (-1: not). */
static double run_mig(poc_ctx *p, json_t *rec, poc_task *t, const char *tenant, const char *profile,
                      double secs)
{
        json_t *req = mig_req(tenant, profile, 0, false);
        int64_t t0 = poc_now_ms();
        long st = hw_submit_dev(p, rec, t, req, secs);
        json_decref(req);
        if (st != 201 || !hw_wait_running(p, t, 20000))
                return -1;
        return hw_ms_since(t0);
}

/* The task's instance as NVML sees it: 1 when its uuid is on its GPU with kerfd's GI id. */
static int nvml_matches(poc_ctx *p, const poc_task *t, poc_mig_dev *d)
{
        char guuid[96];
        hw_gpu_uuid(p, (int)hw_unit_int(t, "gpu"), guuid, sizeof(guuid));
        return poc_nvml_find(guuid, hw_unit_str(t, "mig_uuid"), d) &&
               d->gi == (int)hw_unit_int(t, "mig_gi");
}

static void hw1_readonly(poc_ctx *p, json_t *rec)
{
        int64_t t0 = poc_now_ms();
        int bad = mig_sync(p, rec, "MIG state read (kerfd units vs NVML devices)");
        poc_measure(rec, "kerfd's MIG units vs NVML's MIG devices: mismatches", bad, "count",
                    "==", 0, "read only; no instance is created or destroyed");
        poc_measure(rec, "time to read kerfd's units and NVML's MIG devices", hw_ms_since(t0), "ms",
                    "<=", 5000, "");
        poc_skip(rec, "create, assign, delete, re-create", NO_MIG_CHANGE);
}

void poc_hw1(poc_ctx *p)
{
        json_t *rec = poc_record_new(p, "HW1", POC_ROUTE_HARDWARE, "unit lifecycle");
        char err[512];
        int gpus[16], ng;
        const char *small, *full;
        poc_task a = {0}, a2 = {0}, big[16];
        poc_mig_dev d;

        memset(big, 0, sizeof(big));
        if (!p->env.mig_capable) {
                poc_skip(rec, "all", "GPU 0's model has no MIG");
                goto out;
        }
        if (poc_nvml_open(p, err, sizeof(err)) < 0) {
                poc_skip(rec, "all", err);
                goto out;
        }
        ng = hw_mig_gpus(p, gpus, 16);
        if (!ng) {
                poc_skip(rec, "all", "no GPU is in MIG mode (kerf does not turn MIG mode on)");
                goto out;
        }
        if (!p->env.simulated) {
                hw1_readonly(p, rec);
                goto out;
        }
        small = hw_profile(p, 1);
        full = hw_profile(p, 7);
        if (!small || !full) {
                poc_skip(rec, "all", "the model's MIG profiles have no 1-slice or 7-slice one");
                goto out;
        }
        poc_progress(p, "HW1 create %s", small);
        /* 1. create + assign */
        double t_create = run_mig(p, rec, &a, "poc-a", small, 60);
        hw_measure_time(rec, "create+assign: submit to running on a new MIG instance", t_create,
                        10000, "");
        if (t_create < 0)
                goto out;
        char uuid1[96];
        snprintf(uuid1, sizeof(uuid1), "%s", hw_unit_str(&a, "mig_uuid"));
        int gpu_a = (int)hw_unit_int(&a, "gpu");
        poc_measure(rec, "assign: the task's unit is a MIG unit with a MIG uuid",
                    !strcmp(hw_unit_str(&a, "kind"), "mig") && !strncmp(uuid1, "MIG-", 4), "bool",
                    "==", 1, uuid1);
        int m = nvml_matches(p, &a, &d);
        poc_measure(rec, "create: NVML lists the unit's instance (uuid and GI id)", m, "bool",
                    "==", 1, "");
        poc_event(rec, poc_now_ms(), "create+assign",
                  json_pack("{s:I, s:s, s:i, s:I, s:f}", "task", (json_int_t)a.id, "mig_uuid",
                            uuid1, "gpu", gpu_a, "gi", (json_int_t)hw_unit_int(&a, "mig_gi"), "ms",
                            t_create));
        /* the task's CUDA sees the instance (kerf-load's start line: memory of the device) */
        json_t *lines = NULL;
        for (int i = 0; i < 40 && !poc_line(lines, "start"); i++) {
                json_decref(lines);
                poc_sleep_ms(p, 50);
                lines = poc_task_lines(p, rec, &a);
        }
        json_t *start = poc_line(lines, "start");
        double seen = json_number_value(json_object_get(start, "memory_total"));
        double unit_mem = (double)hw_unit_int(&a, "memory");
        poc_measure(rec, "assign: the task's CUDA memory total vs the instance's (NVML)",
                    d.mem && m
                        ? 100.0 *
                              (seen > (double)d.mem ? seen - (double)d.mem : (double)d.mem - seen) /
                              (double)d.mem
                        : 100.0,
                    "%", "<=", 1.0, "kerf-load start line memory_total");
        json_decref(lines);
        (void)unit_mem;

        /* 2. delete: the task ends, its unit is reclaimed; kerfd keeps an idle instance for
         * reuse and destroys it only to make room (docs/SCHEDULER.md "Dynamic MIG") */
        int64_t t0 = poc_now_ms();
        poc_cancel(p, &a);
        bool ended = poc_wait_state(p, &a, "cancelled|failed|succeeded", 10000);
        bool freed = false;
        while (ended && hw_ms_since(t0) < 10000) {
                json_t *units = hw_units(p), *u;
                size_t i;
                freed = true;
                json_array_foreach(units, i,
                                   u) if (json_integer_value(json_object_get(u, "task")) == a.id)
                    freed = false;
                json_decref(units);
                if (freed || !poc_sleep_ms(p, 25))
                        break;
        }
        double t_reclaim = hw_ms_since(t0);
        hw_measure_time(rec, "delete: cancel to unit reclaimed (no unit holds the task)",
                        freed ? t_reclaim : -1, 5000, "");
        char guuid_a[96];
        hw_gpu_uuid(p, gpu_a, guuid_a, sizeof(guuid_a));
        bool kept = poc_nvml_find(guuid_a, uuid1, NULL);
        poc_event(rec, poc_now_ms(), "task ended, unit reclaimed",
                  json_pack("{s:f, s:b, s:s}", "ms", t_reclaim, "instance_kept", kept, "note",
                            kept ? "kerfd keeps the idle instance for reuse"
                                 : "kerfd destroyed the instance"));
        /* destroy: a full-GPU profile on every MIG GPU needs every smaller idle instance gone */
        poc_progress(p, "HW1 destroy: %s on %d MIG GPUs", full, ng);
        long long ev0 = hw_event_last(p);
        t0 = poc_now_ms();
        int running = 0;
        for (int k = 0; k < ng && k < 16; k++)
                running += run_mig(p, rec, &big[k], "poc-b", full, 60) >= 0;
        double t_destroy = hw_ms_since(t0);
        bool gone = !poc_nvml_find(guuid_a, uuid1, NULL);
        json_t *dev = hw_events(p, ev0, "mig_destroy", NULL);
        poc_measure(rec, "delete: the first instance is gone from NVML after kerfd's destroy", gone,
                    "bool", "==", 1, "");
        poc_measure(rec, "delete: kerfd recorded mig_destroy events", (double)json_array_size(dev),
                    "count", ">=", 1, "");
        poc_measure(rec, "destroy+create: full-GPU tasks submitted to all running", t_destroy, "ms",
                    "<=", 20000.0 * ng, "");
        poc_event(rec, poc_now_ms(), "destroy (to make room)",
                  json_pack("{s:i, s:f, s:O}", "full_gpu_tasks_running", running, "ms", t_destroy,
                            "events", dev));
        json_decref(dev);
        for (int k = 0; k < ng && k < 16; k++)
                hw_cancel_wait(p, &big[k]);

        /* 3. re-create: the same profile again gets a NEW instance (a new uuid, as on the
         * driver: uuids are not reused) */
        poc_progress(p, "HW1 re-create %s", small);
        double t_re = run_mig(p, rec, &a2, "poc-a", small, 60);
        hw_measure_time(rec, "re-create: submit to running", t_re, 10000, "");
        if (t_re >= 0) {
                const char *uuid2 = hw_unit_str(&a2, "mig_uuid");
                poc_measure(rec, "re-create: a new MIG uuid (not the first instance's)",
                            strcmp(uuid2, uuid1) != 0 && !strncmp(uuid2, "MIG-", 4), "bool",
                            "==", 1, uuid2);
                poc_measure(rec, "re-create: NVML lists the new instance (uuid and GI id)",
                            nvml_matches(p, &a2, &d), "bool", "==", 1, "");
                poc_event(rec, poc_now_ms(), "re-create",
                          json_pack("{s:I, s:s, s:s, s:f}", "task", (json_int_t)a2.id, "mig_uuid",
                                    uuid2, "first_uuid", uuid1, "ms", t_re));
        }
        hw_cancel_wait(p, &a2);
        /* 4. state sync at the end: every instance on the device is a kerf unit and back */
        poc_measure(rec, "state sync: kerfd's MIG units vs NVML's MIG devices, mismatches",
                    mig_sync(p, rec, "end: kerfd units vs NVML devices"), "count", "==", 0, "");
        char obj[48];
        snprintf(obj, sizeof(obj), "task:%lld", a.id);
        poc_cite_audit(p, rec, obj);
        snprintf(obj, sizeof(obj), "task:%lld", a2.id);
        poc_cite_audit(p, rec, obj);
        poc_handling(rec,
                     "kerfd created, assigned, reclaimed, destroyed (to make room) and created "
                     "MIG instances by itself",
                     "nothing", 0);
out:
        poc_task_fini(&a);
        poc_task_fini(&a2);
        for (int k = 0; k < 16; k++)
                poc_task_fini(&big[k]);
        poc_record_finish(p, rec);
}

/* ---- HW4: cross-pool ---- */

void poc_hw4(poc_ctx *p)
{
        json_t *rec = poc_record_new(p, "HW4", POC_ROUTE_HARDWARE, "cross-pool");
        int gpus[16], ng;
        const char *small, *full;
        poc_task v[16], h = {0}, q1 = {0}, q2 = {0}, s1 = {0}, s2 = {0};
        memset(v, 0, sizeof(v));

        if (!p->env.mig_capable || !(ng = hw_mig_gpus(p, gpus, 16))) {
                poc_skip(rec, "all", "no GPU in MIG mode");
                goto out;
        }
        if (!p->env.simulated) {
                poc_skip(rec, "all",
                         "the mixed run creates and destroys MIG instances: " NO_MIG_CHANGE);
                goto out;
        }
        small = hw_profile(p, 1);
        full = hw_profile(p, 7);
        if (!small || !full) {
                poc_skip(rec, "all", "the model's MIG profiles have no 1-slice or 7-slice one");
                goto out;
        }
        hw_quota(p, "poc-a", "mig_slices", -1);
        /* slices of both tenants beside the MIG pool, the whole time */
        json_t *sreq = json_pack("{s:s, s:s, s:s, s:i, s:s}", "tenant", "poc-a", "route", "slice",
                                 "memory", "4GiB", "compute", 20, "queue", "slices");
        hw_submit_dev(p, rec, &s1, sreq, 60);
        json_object_set_new(sreq, "tenant", json_string("poc-b"));
        hw_submit_dev(p, rec, &s2, sreq, 60);
        json_decref(sreq);
        /* 1. poc-b fills the MIG pool with preemptible full-GPU tasks (priority 0) */
        poc_progress(p, "HW4 fill the MIG pool (%d x %s, preemptible)", ng, full);
        int filled = 0;
        for (int k = 0; k < ng && k < 16; k++) {
                json_t *r = mig_req("poc-b", full, 0, true);
                hw_submit_dev(p, rec, &v[k], r, 60);
                json_decref(r);
                filled += hw_wait_running(p, &v[k], 20000);
        }
        poc_measure(rec, "MIG pool filled by poc-b's preemptible tasks", filled, "count", "==", ng,
                    "");
        /* 2. poc-a's high-priority MIG task preempts one of them, with the reason */
        long long ev0 = hw_event_last(p);
        json_t *hr = mig_req("poc-a", small, 900, false);
        int64_t t0 = poc_now_ms();
        hw_submit_dev(p, rec, &h, hr, 60);
        json_decref(hr);
        bool h_run = hw_wait_running(p, &h, 20000);
        double t_pre = hw_ms_since(t0);
        hw_measure_time(rec,
                        "a high-priority MIG task preempts a preemptible one: submit to running",
                        h_run ? t_pre : -1, 20000, "");
        int victims = 0;
        const char *why = "";
        for (int k = 0; k < ng && k < 16; k++) {
                poc_task_get(p, &v[k]);
                if (poc_task_num(&v[k], "preemptions", 0) >= 1 ||
                    !strcmp(poc_task_state(&v[k]), "pending")) {
                        victims++;
                        why = poc_task_str(&v[k], "reason.code");
                }
        }
        poc_measure(rec, "preempted MIG tasks (exactly one victim)", victims, "count", "==", 1,
                    why);
        json_t *pe = hw_events(p, ev0, "preempt", NULL);
        poc_measure(rec, "the preemption is recorded with its reason (preempt event)",
                    (double)json_array_size(pe), "count", ">=", 1,
                    json_array_size(pe)
                        ? json_string_value(json_object_get(json_array_get(pe, 0), "text"))
                        : "");
        poc_event(rec, poc_now_ms(), "preemption of a MIG unit",
                  json_pack("{s:I, s:i, s:s, s:O}", "preemptor", (json_int_t)h.id, "victims",
                            victims, "victim_reason", why, "events", pe));
        json_decref(pe);
        /* 3. quota: poc-a may hold twice what the preemptor holds; a second task of the same
         * profile fits, a third waits with reason quota */
        long long used = hw_usage(p, "poc-a", "mig_slices");
        hw_quota(p, "poc-a", "mig_slices", used > 0 ? 2 * used : 2);
        json_t *qr = mig_req("poc-a", small, 500, false);
        hw_submit_dev(p, rec, &q1, qr, 60);
        bool q1_run = hw_wait_running(p, &q1, 20000);
        hw_submit_dev(p, rec, &q2, qr, 60);
        json_decref(qr);
        poc_sleep_ms(p, 600);
        poc_task_get(p, &q2);
        /* the task's own reason, or (not tried yet: its queue is blocked until something
         * changes) what kerfd's explain computes for it now */
        char q2code[64], q2note[600], path[96];
        long est;
        snprintf(q2code, sizeof(q2code), "%s", poc_task_str(&q2, "reason.code"));
        snprintf(path, sizeof(path), "/v1/tasks/%lld/explain", q2.id);
        json_t *ex = poc_call(p, "GET", path, NULL, &est);
        const char *exc = json_string_value(json_object_get(json_object_get(ex, "reason"), "code"));
        const char *ext = json_string_value(json_object_get(json_object_get(ex, "reason"), "text"));
        if (!strcmp(q2code, "not_tried") && exc)
                snprintf(q2code, sizeof(q2code), "%s", exc);
        snprintf(q2note, sizeof(q2note),
                 "quota %lld (used %lld before); state %s, reason %s, explain: %s: %s",
                 used > 0 ? 2 * used : 2, used, poc_task_state(&q2),
                 poc_task_str(&q2, "reason.code"), exc ? exc : "?", ext ? ext : "");
        json_decref(ex);
        poc_measure(rec, "a MIG task within the mig_slices quota runs", q1_run, "bool", "==", 1,
                    "");
        poc_measure(rec, "a MIG task over the mig_slices quota waits with reason quota",
                    !strcmp(poc_task_state(&q2), "pending") && !strcmp(q2code, "quota"), "bool",
                    "==", 1, q2note);
        /* slices ran beside the MIG pool the whole time */
        poc_task_get(p, &s1);
        poc_task_get(p, &s2);
        poc_measure(rec, "slice tasks of both tenants running beside the MIG tasks",
                    !strcmp(poc_task_state(&s1), "running") +
                        !strcmp(poc_task_state(&s2), "running"),
                    "count", "==", 2, "");
        poc_snapshot_metrics(p, rec, "mixed run at its peak");
        /* 4. lifecycle: the preemptor and the quota holder end; the quota waiter and the victim
         * run again; at the end every unit is reclaimed and usage is 0 */
        hw_cancel_wait(p, &h);
        bool q2_run = hw_wait_running(p, &q2, 20000);
        poc_measure(rec, "the quota waiter runs once quota is free", q2_run, "bool", "==", 1, "");
        hw_cancel_wait(p, &q1);
        hw_cancel_wait(p, &q2);
        int back = 0;
        for (int k = 0; k < ng && k < 16; k++)
                back += hw_wait_running(p, &v[k], 20000);
        poc_measure(rec, "the preempted MIG task runs again once room is free", back, "count",
                    "==", ng, "");
        for (int k = 0; k < ng && k < 16; k++)
                hw_cancel_wait(p, &v[k]);
        hw_cancel_wait(p, &s1);
        hw_cancel_wait(p, &s2);
        json_t *units = hw_units(p), *u;
        size_t i;
        int held = 0;
        json_array_foreach(units, i, u)
        {
                long long task = (long long)json_integer_value(json_object_get(u, "task"));
                held += task && (task == h.id || task == q1.id || task == q2.id || task == s1.id ||
                                 task == s2.id);
                for (int k = 0; k < ng && k < 16; k++)
                        held += task && task == v[k].id;
        }
        json_decref(units);
        poc_measure(rec, "units still held by the run's tasks after they ended", held, "count",
                    "==", 0, "");
        poc_measure(rec, "poc-a's mig_slices usage after the run",
                    (double)hw_usage(p, "poc-a", "mig_slices"), "count", "==", 0, "");
        char obj[48];
        snprintf(obj, sizeof(obj), "task:%lld", h.id);
        poc_cite_audit(p, rec, obj);
        snprintf(obj, sizeof(obj), "task:%lld", q2.id);
        poc_cite_audit(p, rec, obj);
        for (int k = 0; k < ng && k < 16; k++) {
                snprintf(obj, sizeof(obj), "task:%lld", v[k].id);
                poc_cite_audit(p, rec, obj);
        }
        poc_handling(rec,
                     "kerfd queued, refused over quota, preempted (with the reason), re-ran and "
                     "reclaimed MIG units exactly as it does slices",
                     "nothing", 0);
out:
        hw_quota(p, "poc-a", "mig_slices", -1);
        for (int k = 0; k < 16; k++)
                poc_task_fini(&v[k]);
        poc_task_fini(&h);
        poc_task_fini(&q1);
        poc_task_fini(&q2);
        poc_task_fini(&s1);
        poc_task_fini(&s2);
        poc_record_finish(p, rec);
}
