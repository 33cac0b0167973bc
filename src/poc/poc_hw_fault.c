/* SPDX-License-Identifier: Apache-2.0 */
/* poc_hw_fault.c - HW2 (device faults and a kerfd failure: the blast radius kerf computed vs
 * what happened to each task, and the operator's work) and HW3 (a driver/CUDA upgrade: unit
 * identities, tasks and audit stay traceable) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "poc_hw.h"

#define MAXT 16

/* The run's tasks of one fault phase, with what they were before it. */
typedef struct phase {
        poc_task *t[MAXT];
        int n;
        char before[MAXT][16];
        double restarts[MAXT];
} phase;

static void phase_mark(poc_ctx *p, phase *ph)
{
        for (int i = 0; i < ph->n; i++) {
                poc_task_get(p, ph->t[i]);
                snprintf(ph->before[i], sizeof(ph->before[i]), "%s", poc_task_state(ph->t[i]));
                ph->restarts[i] = poc_task_num(ph->t[i], "restarts", 0);
        }
}

/* Was task i hit since phase_mark: running before, and now ended, pending or restarted. */
static bool phase_hit(poc_ctx *p, phase *ph, int i)
{
        poc_task_get(p, ph->t[i]);
        if (strcmp(ph->before[i], "running") != 0)
                return false;
        return strcmp(poc_task_state(ph->t[i]), "running") != 0 ||
               poc_task_num(ph->t[i], "restarts", 0) > ph->restarts[i];
}

/* kerf-load's error lines in a task's output so far. */
static int load_errors(poc_ctx *p, json_t *rec, poc_task *t)
{
        json_t *lines = poc_task_lines(p, rec, t), *l;
        size_t i;
        int n = 0;
        json_array_foreach(lines, i, l)
        {
                const char *ev = json_string_value(json_object_get(l, "event"));
                n += ev && !strcmp(ev, "error");
        }
        json_decref(lines);
        return n;
}

/* After a fault whose kerfd event is `ev`: compares the tasks kerf named (its blast radius)
 * with the tasks actually hit; adds the timeline entry and the measure. Returns mismatches. */
static int blast_check(poc_ctx *p, json_t *rec, phase *ph, const char *what, int64_t t_ms,
                       json_t *ev)
{
        const char *text = json_string_value(json_object_get(ev, "text"));
        long long named[64];
        int nn = hw_blast_tasks(text, named, 64), bad = 0;
        json_t *tasks = json_array();
        char mname[200];

        /* let every hit task reach its end or requeue (kerfd stops them on its tick) */
        int64_t end = poc_now_ms() + 3000;
        for (int i = 0; i < ph->n; i++) {
                bool is_named = false;
                for (int k = 0; k < nn; k++)
                        is_named |= named[k] == ph->t[i]->id;
                while (is_named && !phase_hit(p, ph, i) && poc_now_ms() < end)
                        poc_sleep_ms(p, 30);
        }
        poc_sleep_ms(p, 150);
        for (int i = 0; i < ph->n; i++) {
                poc_task *t = ph->t[i];
                bool hit = phase_hit(p, ph, i), is_named = false;
                for (int k = 0; k < nn; k++)
                        is_named |= named[k] == t->id;
                bad += hit != is_named;
                int errs = load_errors(p, rec, t); /* may re-read t->last: before borrowing */
                json_t *ec = json_object_get(t->last, "exit_code");
                json_t *sg = json_object_get(t->last, "signal");
                json_array_append_new(
                    tasks,
                    json_pack("{s:I, s:s, s:s, s:s, s:O, s:O, s:f, s:b, s:b, s:i}", "task",
                              (json_int_t)t->id, "before", ph->before[i], "after",
                              poc_task_state(t), "end_reason", poc_task_str(t, "end_reason"),
                              "exit_code", ec ? ec : json_null(), "signal", sg ? sg : json_null(),
                              "restarts", poc_task_num(t, "restarts", 0), "hit", hit,
                              "named_by_kerf", is_named, "load_errors", errs));
        }
        poc_event(rec, t_ms, what,
                  json_pack("{s:s, s:s, s:o, s:i}", "kerf_event",
                            json_string_value(json_object_get(ev, "kind")), "blast_radius",
                            text ? text : "", "tasks", tasks, "mismatches", bad));
        snprintf(mname, sizeof(mname), "%s: tasks kerf named vs tasks actually hit, mismatches",
                 what);
        poc_measure(rec, mname, bad, "count", "==", 0, text ? text : "no kerfd event");
        return bad;
}

static json_t *req_of(const char *tenant, const char *route, const char *profile, bool preemptible)
{
        json_t *r = json_pack("{s:s, s:b}", "tenant", tenant, "preemptible", preemptible);
        if (profile) {
                json_object_set_new(r, "mig_profile", json_string(profile));
                json_object_set_new(r, "workload", json_string("inference"));
                json_object_set_new(r, "tier", json_string("high"));
        } else {
                json_object_set_new(r, "route", json_string(route));
                if (!strcmp(route, "slice")) {
                        json_object_set_new(r, "memory", json_string("4GiB"));
                        json_object_set_new(r, "compute", json_integer(20));
                } else {
                        json_object_set_new(r, "workload", json_string("training"));
                }
        }
        return r;
}

static bool start(poc_ctx *p, json_t *rec, poc_task *t, json_t *req)
{
        long st = hw_submit_dev(p, rec, t, req, 60);
        json_decref(req);
        return st == 201 && hw_wait_running(p, t, 20000);
}

/* One injected XID: the phase's marks, the injection, kerfd's event, the comparison. */
static json_t *inject(poc_ctx *p, json_t *rec, phase *ph, unsigned gpu, unsigned xid, int gi,
                      int ci, const char *kind)
{
        char needle[32];
        phase_mark(p, ph);
        long long ev0 = hw_event_last(p);
        if (hw_sim_xid(p, gpu, xid, gi, ci) < 0)
                return NULL;
        snprintf(needle, sizeof(needle), "XID %u", xid);
        return hw_wait_event(p, ev0, kind, needle, 5000);
}

static void hw2_faults(poc_ctx *p, json_t *rec, int *commands)
{
        const char *small = hw_profile(p, 1);
        poc_task a = {0}, b = {0}, c = {0}, w = {0}, s = {0};
        phase ph = {.t = {&a, &b, &c, &w, &s}, .n = 5};
        char what[160];
        json_t *ev;

        if (!small) {
                poc_skip(rec, "device faults", "the model has no 1-slice MIG profile");
                return;
        }
        int ok = start(p, rec, &a, req_of("poc-a", NULL, small, false)) +
                 start(p, rec, &b, req_of("poc-b", NULL, small, false)) +
                 start(p, rec, &c, req_of("poc-a", NULL, small, true)) +
                 start(p, rec, &w, req_of("poc-a", "whole", NULL, false)) +
                 start(p, rec, &s, req_of("poc-b", "slice", NULL, true));
        poc_measure(rec, "fault set-up: MIG, whole-GPU and slice tasks running", ok, "count",
                    "==", 5, "");
        if (ok != 5)
                goto out;
        /* 1. application errors attributed to one MIG instance: only its task */
        static const unsigned app[2] = {13, 31};
        poc_task *victim[2] = {&a, &b};
        for (int k = 0; k < 2; k++) {
                int g = (int)hw_unit_int(victim[k], "gpu");
                int64_t t = poc_now_ms();
                poc_progress(p, "HW2 XID %u on task %lld's MIG instance", app[k], victim[k]->id);
                ev = inject(p, rec, &ph, (unsigned)g, app[k], (int)hw_unit_int(victim[k], "mig_gi"),
                            (int)hw_unit_int(victim[k], "mig_ci"), "xid");
                snprintf(what, sizeof(what), "XID %u on GPU %d, MIG GI %lld (task %lld)", app[k], g,
                         hw_unit_int(victim[k], "mig_gi"), victim[k]->id);
                if (!ev) {
                        poc_measure(rec, "kerfd recorded the injected XID", 0, "bool", "==", 1,
                                    what);
                        goto out;
                }
                blast_check(p, rec, &ph, what, t, ev);
                json_decref(ev);
                poc_measure(rec, "the GPU stays in service after an application XID",
                            !hw_gpu_faulted(p, g), "bool", "==", 1, what);
        }
        /* 2. an instance fault (a reset-class XID naming one MIG instance): that instance out
         * of service, its preemptible task requeued */
        int gc = (int)hw_unit_int(&c, "gpu");
        int64_t t = poc_now_ms();
        poc_progress(p, "HW2 instance fault (XID 48) on task %lld's MIG instance", c.id);
        ev = inject(p, rec, &ph, (unsigned)gc, 48, (int)hw_unit_int(&c, "mig_gi"),
                    (int)hw_unit_int(&c, "mig_ci"), "xid");
        snprintf(what, sizeof(what), "instance fault: XID 48 on GPU %d, MIG GI %lld (task %lld)",
                 gc, hw_unit_int(&c, "mig_gi"), c.id);
        if (ev) {
                blast_check(p, rec, &ph, what, t, ev);
                json_decref(ev);
        } else {
                poc_measure(rec, "kerfd recorded the instance fault", 0, "bool", "==", 1, what);
        }
        char path[96];
        long st;
        snprintf(path, sizeof(path), "/v1/gpus/%d/recover", gc);
        json_decref(poc_call(p, "POST", path, NULL, &st));
        (*commands)++;
        poc_event(rec, poc_now_ms(), "operator: recover after the instance fault",
                  json_pack("{s:s, s:i}", "command", path, "status", (int)st));
        bool c_back = hw_wait_running(p, &c, 20000) && poc_task_num(&c, "restarts", 0) >= 1;
        poc_measure(rec, "instance fault: the preemptible task was requeued and runs again", c_back,
                    "bool", "==", 1, "");
        /* 3. GPU lost (XID 79, fallen off the bus): kerfd takes every GPU of the node out */
        int gw = (int)hw_unit_int(&w, "gpu");
        t = poc_now_ms();
        poc_progress(p, "HW2 XID 79 on GPU %d", gw);
        long long ev0 = hw_event_last(p);
        phase_mark(p, &ph);
        ev = NULL;
        if (hw_sim_xid(p, (unsigned)gw, 79, -1, -1) == 0) {
                ev = hw_wait_event(p, ev0, "xid", "XID 79", 5000);
                if (!ev) /* kerfd may record a node-scope loss as gpu_lost */
                        ev = hw_wait_event(p, ev0, "gpu_lost", NULL, 500);
        }
        snprintf(what, sizeof(what), "GPU reset: XID 79 on GPU %d", gw);
        if (!ev) {
                poc_measure(rec, "kerfd recorded XID 79", 0, "bool", "==", 1, what);
                goto out;
        }
        blast_check(p, rec, &ph, what, t, ev);
        json_decref(ev);
        json_t *gpus = hw_gpus(p), *g;
        size_t i;
        int out_n = 0, recovered = 0;
        json_array_foreach(gpus, i, g) out_n += json_is_true(json_object_get(g, "faulted"));
        poc_measure(rec, "XID 79: GPUs kerfd took out of service", out_n, "count", ">=", 1,
                    "kerfd's class for XID 79 is reboot_node: every GPU of the node");
        /* the operator: reset the device (the simulator's reset stands for nvidia-smi -r),
         * then bring each GPU back */
        int64_t r0 = poc_now_ms();
        hw_sim_reset(p, (unsigned)gw);
        (*commands)++;
        json_array_foreach(gpus, i, g)
        {
                if (!json_is_true(json_object_get(g, "faulted")))
                        continue;
                snprintf(path, sizeof(path), "/v1/gpus/%d/recover",
                         (int)json_integer_value(json_object_get(g, "index")));
                json_decref(poc_call(p, "POST", path, NULL, &st));
                (*commands)++;
                recovered += st == 200;
        }
        json_decref(gpus);
        poc_measure(rec, "XID 79: GPUs back in service after reset + recover", recovered, "count",
                    "==", out_n, "");
        bool s_back = hw_wait_running(p, &s, 20000);
        hw_measure_time(rec, "XID 79: the requeued preemptible task runs again after recovery",
                        s_back ? hw_ms_since(r0) : -1, 20000, "");
        poc_event(rec, poc_now_ms(), "operator: GPU reset and recover",
                  json_pack("{s:i, s:i, s:f}", "gpus_recovered", recovered, "commands",
                            1 + recovered, "ms", hw_ms_since(r0)));
        char obj[48];
        for (int k = 0; k < ph.n; k++) {
                snprintf(obj, sizeof(obj), "task:%lld", ph.t[k]->id);
                poc_cite_audit(p, rec, obj);
        }
out:
        for (int k = 0; k < ph.n; k++) {
                hw_cancel_wait(p, ph.t[k]);
                poc_task_fini(ph.t[k]);
        }
}

/* kerfd killed (kill -9) and restarted: its tasks keep running and are re-adopted. */
static void hw2_kerfd(poc_ctx *p, json_t *rec, int *commands)
{
        const char *small = hw_profile(p, 1);
        poc_task r1 = {0}, r2 = {0};
        char err[512];
        const char *how;

        if (p->kerfd)
                how = "kill -9 and restart (the private kerfd)";
        else if (p->o.restart_cmd && *p->o.restart_cmd)
                how = "restart through --restart-cmd (not killed: kerfd is not the harness's)";
        else {
                poc_skip(rec, "kerfd killed and restarted",
                         "kerfd is not the harness's (--spawn) and no --restart-cmd was given");
                return;
        }
        int ok = start(p, rec, &r1, req_of("poc-a", "slice", NULL, false)) +
                 (small ? start(p, rec, &r2, req_of("poc-b", NULL, small, false)) : 0);
        poc_measure(rec, "kerfd failure set-up: tasks running", ok, "count", "==", small ? 2 : 1,
                    "");
        long long u1 = hw_unit_int(&r1, "id"), u2 = hw_unit_int(&r2, "id");
        int64_t t = poc_now_ms();
        poc_progress(p, "HW2 kerfd: %s", how);
        int r;
        if (p->kerfd) {
                poc_kerfd_kill9(p);
                poc_sleep_ms(p, 300);
                r = poc_kerfd_restart(p, err, sizeof(err));
        } else {
                r = system(p->o.restart_cmd) == 0 ? 0 : -1;
                snprintf(err, sizeof(err), "--restart-cmd failed");
                for (int i = 0; i < 200 && r == 0; i++) { /* back when it answers */
                        long st;
                        json_decref(poc_call(p, "GET", "/v1/health", NULL, &st));
                        if (st == 200)
                                break;
                        poc_sleep_ms(p, 50);
                }
        }
        (*commands)++;
        double down = hw_ms_since(t);
        poc_measure(rec, "kerfd back after the failure", r == 0, "bool", "==", 1, r ? err : how);
        if (r < 0)
                goto out;
        hw_measure_time(rec, "kerfd failure: time until kerfd answers again", down, 10000, how);
        poc_sleep_ms(p, 300);
        poc_task_get(p, &r1);
        poc_task_get(p, &r2);
        int same = !strcmp(poc_task_state(&r1), "running") && hw_unit_int(&r1, "id") == u1 &&
                   poc_task_num(&r1, "restarts", 0) == 0;
        if (small)
                same += !strcmp(poc_task_state(&r2), "running") && hw_unit_int(&r2, "id") == u2 &&
                        poc_task_num(&r2, "restarts", 0) == 0;
        poc_measure(rec, "kerfd failure: tasks still running on the same units, not restarted",
                    same, "count", "==", small ? 2 : 1, "re-adopted by the new kerfd");
        int errs = load_errors(p, rec, &r1) + (small ? load_errors(p, rec, &r2) : 0);
        poc_measure(rec, "kerfd failure: errors in the tasks' own output", errs, "count", "==", 0,
                    "kerf-load error lines");
        poc_event(rec, t, "kerfd failure",
                  json_pack("{s:s, s:f, s:i, s:i}", "how", how, "down_ms", down, "tasks_unharmed",
                            same, "load_errors", errs));
out:
        hw_cancel_wait(p, &r1);
        hw_cancel_wait(p, &r2);
        poc_task_fini(&r1);
        poc_task_fini(&r2);
}

void poc_hw2(poc_ctx *p)
{
        json_t *rec = poc_record_new(p, "HW2", POC_ROUTE_HARDWARE, "device fault");
        int commands = 0;

        if (!p->env.simulated)
                poc_skip(rec, "XID and GPU-lost injection",
                         "faults are injected only on the simulator; a real GPU is never faulted "
                         "on purpose");
        else if (!p->env.mig_capable || !hw_sim_dir(p)[0])
                poc_skip(rec, "XID and GPU-lost injection",
                         !p->env.mig_capable ? "GPU 0's model has no MIG"
                                             : "the simulated node's dir is unknown (no "
                                               "paths.sim in kerfd's health answer)");
        else
                hw2_faults(p, rec, &commands);
        hw2_kerfd(p, rec, &commands);
        /* the floor today: one recover after the instance fault, one device reset and one
         * recover per GPU after XID 79 (kerfd takes the whole node out), one kerfd restart */
        poc_measure(rec, "operator commands for the whole recovery", commands, "count",
                    "<=", 3 + p->env.n_gpus,
                    "bound: 1 instance recover + 1 device reset + 1 recover per GPU + 1 kerfd "
                    "restart; fewer when a step was skipped");
        poc_handling(rec,
                     "application XIDs: only the task on the named instance failed; an instance "
                     "fault took that instance out and requeued its preemptible task; XID 79 took "
                     "every GPU out (failed non-preemptible, requeued preemptible tasks); a "
                     "killed kerfd re-adopted its running tasks on restart",
                     "reset the device, then POST /v1/gpus/N/recover for each GPU out of "
                     "service; restart kerfd (systemd does it) after a daemon failure",
                     commands);
        poc_record_finish(p, rec);
}

/* ---- HW3: upgrade ---- */

/* Audit records after seq0: those without driver/CUDA/kerf, those whose driver is not the one
 * in force (old before node.upgrade, new from it on), task.start records without a device. */
static void audit_versions(poc_ctx *p, json_t *rec, long long seq0, const char *old_d,
                           const char *new_d, long long *up_seq)
{
        json_t *all = hw_audit(p, seq0), *a;
        size_t i;
        int missing = 0, wrong = 0, nodev = 0, n = 0;
        bool after = false;
        *up_seq = 0;
        json_array_foreach(all, i, a)
        {
                const char *act = json_string_value(json_object_get(a, "action"));
                const char *d = json_string_value(json_object_get(a, "driver"));
                const char *c = json_string_value(json_object_get(a, "cuda"));
                const char *k = json_string_value(json_object_get(a, "kerf"));
                const char *res = json_string_value(json_object_get(a, "result"));
                const char *gu = json_string_value(json_object_get(a, "gpu_uuid"));
                n++;
                if (act && !strcmp(act, "node.upgrade")) {
                        after = true;
                        *up_seq = (long long)json_integer_value(json_object_get(a, "seq"));
                        json_array_append_new(json_object_get(rec, "audit"), json_integer(*up_seq));
                }
                missing += !d || !*d || !c || !*c || !k || !*k;
                if (new_d)
                        wrong += d && strcmp(d, after ? new_d : old_d) != 0;
                nodev +=
                    act && !strcmp(act, "task.start") && res && !strcmp(res, "ok") && (!gu || !*gu);
        }
        json_decref(all);
        poc_measure(rec, "audit records of the run without driver, CUDA or kerf version", missing,
                    "count", "==", 0, "");
        poc_measure(rec, "task.start audit records without a device (GPU uuid)", nodev, "count",
                    "==", 0, "");
        if (new_d)
                poc_measure(rec,
                            "audit records whose driver is not the one in force (old before "
                            "node.upgrade, new after)",
                            wrong, "count", "==", 0, "");
        (void)n;
}

void poc_hw3(poc_ctx *p)
{
        json_t *rec = poc_record_new(p, "HW3", POC_ROUTE_HARDWARE, "upgrade");
        long long seq0 = 0, up_seq = 0;
        json_t *a0 = hw_audit(p, p->audit_seq0);
        poc_task f = {0}, r = {0}, q = {0};
        char old_d[32], old_c[16], new_d[32], new_c[16], err[512], uuid[96];
        long st;

        if (json_array_size(a0))
                seq0 = (long long)json_integer_value(
                    json_object_get(json_array_get(a0, json_array_size(a0) - 1), "seq"));
        else
                seq0 = p->audit_seq0;
        json_decref(a0);
        snprintf(old_d, sizeof(old_d), "%s", p->env.driver);
        snprintf(old_c, sizeof(old_c), "%s", p->env.cuda);
        const char *small = hw_profile(p, 1);
        if (!p->env.simulated || !p->kerfd || !small) {
                poc_skip(rec, "driver/CUDA upgrade",
                         !p->env.simulated ? "a real GPU's driver is never changed by kerf poc"
                         : !p->kerfd       ? "the simulated driver is changed only on the "
                                             "private kerfd (--spawn)"
                                           : "the model has no 1-slice MIG profile");
                audit_versions(p, rec, p->audit_seq0, old_d, NULL, &up_seq);
                goto out;
        }
        snprintf(new_d, sizeof(new_d), "%s",
                 strcmp(old_d, "560.35.03") ? "560.35.03" : "565.57.01");
        snprintf(new_c, sizeof(new_c), "%s", strcmp(old_c, "12.6") ? "12.6" : "12.8");
        /* before: a finished task, a running MIG task, a task pending on quota */
        json_t *fr = req_of("poc-a", "slice", NULL, false);
        const char *fargs[] = {"dev", "--seconds", "0.2", "--busy-ms",
                               "20",  "--idle-ms", "20",  NULL};
        poc_submit(p, rec, &f, fr, fargs);
        json_decref(fr);
        bool f_done = poc_wait_state(p, &f, "succeeded|failed|cancelled", 15000);
        char f_state[16];
        snprintf(f_state, sizeof(f_state), "%s", poc_task_state(&f));
        double f_end = poc_task_num(&f, "ended_ms", 0), f_exit = poc_task_num(&f, "exit_code", -1);
        bool r_run = start(p, rec, &r, req_of("poc-a", NULL, small, false));
        snprintf(uuid, sizeof(uuid), "%s", hw_unit_str(&r, "mig_uuid"));
        long long r_unit = hw_unit_int(&r, "id");
        hw_quota(p, "poc-b", "mig_slices", 0);
        json_t *qr = req_of("poc-b", NULL, small, false);
        hw_submit_dev(p, rec, &q, qr, 30);
        json_decref(qr);
        poc_sleep_ms(p, 200);
        poc_task_get(p, &q);
        poc_measure(rec, "before: a finished, a running (MIG) and a pending task",
                    f_done + r_run + !strcmp(poc_task_state(&q), "pending"), "count", "==", 3, "");
        /* the upgrade: kerfd stopped, the simulated driver changed, kerfd started */
        long long ev0 = hw_event_last(p);
        int64_t t0 = poc_now_ms();
        poc_progress(p, "HW3 upgrade driver %s -> %s, CUDA %s -> %s", old_d, new_d, old_c, new_c);
        int rc = poc_kerfd_upgrade(p, new_d, new_c, err, sizeof(err));
        double t_up = hw_ms_since(t0);
        poc_measure(rec, "kerfd back after the upgrade", rc == 0, "bool", "==", 1, rc ? err : "");
        if (rc < 0)
                goto out;
        hw_measure_time(rec, "upgrade: kerfd down to answering again", t_up, 15000, "");
        json_t *v = poc_call(p, "GET", "/v1/version", NULL, &st);
        const char *vd = json_string_value(json_object_get(v, "driver"));
        const char *vc = json_string_value(json_object_get(v, "cuda"));
        poc_measure(rec, "kerfd reports the new driver and CUDA",
                    vd && vc && !strcmp(vd, new_d) && !strcmp(vc, new_c), "bool", "==", 1,
                    vd ? vd : "");
        json_decref(v);
        char poc_drv[96];
        poc_nvml_open(p, err, sizeof(err));
        snprintf(poc_drv, sizeof(poc_drv), "%s", poc_nvml_driver());
        snprintf(p->env.driver, sizeof(p->env.driver), "%s", new_d);
        snprintf(p->env.cuda, sizeof(p->env.cuda), "%s", new_c);
        char needle[96];
        snprintf(needle, sizeof(needle), "driver %s -> %s", old_d, new_d);
        json_t *ev = hw_wait_event(p, ev0, "upgrade", needle, 3000);
        poc_measure(rec, "kerfd recorded the upgrade (event upgrade)", ev != NULL, "bool", "==", 1,
                    ev ? json_string_value(json_object_get(ev, "text")) : needle);
        poc_event(rec, t0, "driver/CUDA upgrade",
                  json_pack("{s:s, s:s, s:s, s:s, s:f, s:s, s:O}", "driver_before", old_d,
                            "driver_after", new_d, "cuda_before", old_c, "cuda_after", new_c, "ms",
                            t_up, "nvml_driver_after", poc_drv, "event", ev ? ev : json_null()));
        json_decref(ev);
        /* identities and tasks across the change */
        poc_task_get(p, &r);
        poc_measure(rec, "the running MIG task: same unit and MIG uuid, still running",
                    !strcmp(poc_task_state(&r), "running") && hw_unit_int(&r, "id") == r_unit &&
                        !strcmp(hw_unit_str(&r, "mig_uuid"), uuid),
                    "bool", "==", 1, uuid);
        char guuid[96];
        hw_gpu_uuid(p, (int)hw_unit_int(&r, "gpu"), guuid, sizeof(guuid));
        poc_measure(rec, "NVML still lists the running task's instance after the upgrade",
                    poc_nvml_find(guuid, uuid, NULL), "bool", "==", 1, "");
        poc_task_get(p, &f);
        poc_measure(rec, "the finished task keeps its record (state, exit code, end time)",
                    !strcmp(poc_task_state(&f), f_state) &&
                        poc_task_num(&f, "exit_code", -1) == f_exit &&
                        poc_task_num(&f, "ended_ms", 0) == f_end,
                    "bool", "==", 1, f_state);
        hw_quota(p, "poc-b", "mig_slices", -1);
        poc_measure(rec, "the pending task runs after the upgrade", hw_wait_running(p, &q, 20000),
                    "bool", "==", 1, "");
        /* the audit across the change */
        audit_versions(p, rec, seq0, old_d, new_d, &up_seq);
        poc_measure(rec, "kerfd's node.upgrade audit record", up_seq > 0, "bool", "==", 1, "");
        json_t *ver = poc_call(p, "POST", "/v1/audit/verify", NULL, &st);
        poc_measure(rec, "the audit chain verifies across the upgrade",
                    json_is_true(json_object_get(ver, "ok")), "bool", "==", 1, "");
        json_decref(ver);
        char obj[48];
        snprintf(obj, sizeof(obj), "task:%lld", r.id);
        poc_cite_audit(p, rec, obj);
        snprintf(obj, sizeof(obj), "task:%lld", f.id);
        poc_cite_audit(p, rec, obj);
        poc_handling(rec,
                     "kerfd noticed the new driver at its start and recorded node.upgrade first; "
                     "re-adopted the running task on its unit; queued work ran after",
                     "stop kerfd, upgrade the driver, start kerfd", 3);
out:
        hw_quota(p, "poc-b", "mig_slices", -1);
        hw_cancel_wait(p, &f);
        hw_cancel_wait(p, &r);
        hw_cancel_wait(p, &q);
        poc_task_fini(&f);
        poc_task_fini(&r);
        poc_task_fini(&q);
        poc_record_finish(p, rec);
}
