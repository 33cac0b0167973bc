/* SPDX-License-Identifier: Apache-2.0 */
/* ctl.c - software slices in kerfd: fail closed without the shim, the controller thread
 * (kerf_slicectl_step over every live region), suspend/resume, usage sampling and
 * shim-bypass detection (docs/DAEMON.md "Software slices") */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "node.h"
#include "kerf/errno.h"
#include "kerf/slice_abi.h"
#include "slicectl.h"

#define CTL_PERIOD_MS   15          /* controller step period (10-20 ms, slicectl.h) */
#define BYPASS_STALE_NS 3000000000u /* a heartbeat older than this: no live shim */
#define BYPASS_POLLS    2           /* consecutive sightings before the anomaly is recorded */

static bool soft_kind(kerf_unit_kind k)
{
        return k == KERF_UNIT_SLICE || k == KERF_UNIT_TSLICE;
}

static bool is_slice(const dtask *t)
{
        return t->n_units && soft_kind(t->units[0].kind);
}

static uint64_t mono_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *kerfd__enforcement(const dtask *t)
{
        if (!is_slice(t) && !t->preempt_frozen)
                return NULL;
        return t->unenforced ? "unenforced" : "shim";
}

/* ---- fail closed --------------------------------------------------------------------------- */

static bool refusing(const kerfd_node *n)
{
        return !n->shim_path[0] && !n->cfg.unenforced_slices;
}

int kerfd__slice_submit_check(kerfd_node *n, const kerf_request *req, char *msg, size_t msglen)
{
        bool soft = true;

        if (!refusing(n) || (req->mig_profile && *req->mig_profile))
                return 0;
        if (req->route >= 0) {
                soft = soft_kind((kerf_unit_kind)req->route);
        } else {
                unsigned nr = n->cfg.policy.n_routes[req->workload][req->tier];
                for (unsigned i = 0; i < nr; i++)
                        if (!soft_kind(n->cfg.policy.routes[req->workload][req->tier][i]))
                                soft = false;
        }
        if (!soft)
                return 0;
        n->unenforced_refused_total++;
        snprintf(msg, msglen,
                 "software slices are not enforced on this node: the shim %s is missing, so "
                 "nothing would cap this task's GPU memory or compute share (install the shim and "
                 "restart kerfd, ask for another route, or set policy.unenforced_slices: allow in "
                 "kerfd's configuration to run slices unenforced)",
                 n->shim_want);
        return -EPERM;
}

void kerfd__slice_policy(const kerfd_node *n, kerf_policy *ret)
{
        *ret = n->cfg.policy;
        if (!refusing(n))
                return;
        /* Without the shim, a route list that also holds hardware routes keeps only those; a
         * list of software slices only is refused at submit (kerfd__slice_submit_check). */
        for (int w = 0; w < KERF_WL_COUNT; w++)
                for (int t = 0; t < KERF_TIER_COUNT; t++) {
                        kerf_unit_kind keep[KERF_UNIT_KIND_COUNT];
                        unsigned k = 0;
                        for (unsigned i = 0; i < ret->n_routes[w][t]; i++)
                                if (!soft_kind(ret->routes[w][t][i]))
                                        keep[k++] = ret->routes[w][t][i];
                        if (k)
                                kerf_policy_set_routes(ret, (kerf_workload)w, (kerf_tier)t, keep,
                                                       k);
                }
}

/* Whether uid:gid (no supplementary groups: the executor runs a task with none) may read
 * `path`: read permission on the file, search permission on every directory above it.
 * Writes why not into why. */
static bool readable_by(const char *path, uid_t uid, gid_t gid, char *why, size_t whylen)
{
        char dir[4400];
        struct stat st;
        size_t len = strlen(path);

        if (len >= sizeof(dir) || path[0] != '/') {
                snprintf(why, whylen, "%s: not an absolute path", path);
                return false;
        }
        memcpy(dir, path, len + 1);
        for (char *p = dir + 1;; p++) {
                bool last = !*p;
                if (*p != '/' && !last)
                        continue;
                *p = '\0';
                if (stat(dir, &st) < 0) {
                        snprintf(why, whylen, "%s: %s", dir, strerror(errno));
                        return false;
                }
                mode_t need = last ? 04 : 01;
                mode_t have = st.st_mode & 07;
                if (uid == 0)
                        have = 07;
                else if (st.st_uid == uid)
                        have = (st.st_mode >> 6) & 07;
                else if (st.st_gid == gid)
                        have = (st.st_mode >> 3) & 07;
                if (!(have & need)) {
                        snprintf(why, whylen, "%s is not %s by uid %u (mode %04o, owner %u:%u)",
                                 dir, last ? "readable" : "searchable", (unsigned)uid,
                                 (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid,
                                 (unsigned)st.st_gid);
                        return false;
                }
                if (last)
                        return true;
                *p = '/';
        }
}

int kerfd__slice_start_check(kerfd_node *n, dtask *t, char *err, size_t errlen)
{
        uid_t uid = t->rec.uid >= 0 ? (uid_t)t->rec.uid : geteuid();
        gid_t gid =
            t->rec.gid >= 0 ? (gid_t)t->rec.gid : (t->rec.uid >= 0 ? (gid_t)uid : getegid());
        char why[4600];

        t->unenforced = false;
        if (!t->n_units)
                return 0;
        if (is_slice(t) && (!n->shim_path[0] || access(n->shim_path, F_OK) < 0)) {
                if (!n->cfg.unenforced_slices) {
                        snprintf(err, errlen,
                                 "not started: the shim %s is missing and a software slice does "
                                 "not run unenforced (policy.unenforced_slices: refuse)",
                                 n->shim_want);
                        return -EPERM;
                }
                t->unenforced = true;
        }
        if (!t->argv) /* attached: its launcher's uid loads the libraries, not ours to check */
                return 0;
        if (is_slice(t) && !t->unenforced) {
                if (!readable_by(n->shim_path, uid, gid, why, sizeof(why))) {
                        snprintf(err, errlen,
                                 "not started: the shim would be skipped by the loader: %s", why);
                        return -EPERM;
                }
        }
        if (n->simulated) {
                static const char *libs[] = {"libcuda.so.1", "libnvidia-ml.so.1"};
                for (size_t i = 0; i < 2; i++) {
                        char p[4500];
                        snprintf(p, sizeof(p), "%s/%s", n->lib_dir, libs[i]);
                        if (access(p, F_OK) < 0)
                                continue; /* not built: nothing to find */
                        if (!readable_by(p, uid, gid, why, sizeof(why))) {
                                snprintf(err, errlen,
                                         "not started: the simulated driver would be skipped by "
                                         "the loader: %s",
                                         why);
                                return -EPERM;
                        }
                }
        }
        return 0;
}

/* ---- the controller thread ------------------------------------------------------------------ */

void kerfd__slice_freeze(kerfd_node *n, dtask *t, bool on)
{
        if (!t->region)
                return;
        pthread_mutex_lock(&n->ctl_mu); /* not in the middle of a step */
        if (on)
                atomic_fetch_or(&t->region->limits.flags, KERF_SLICE_F_FROZEN);
        else
                atomic_fetch_and(&t->region->limits.flags, ~KERF_SLICE_F_FROZEN);
        atomic_fetch_add_explicit(&t->region->limits.generation, 1, memory_order_release);
        pthread_mutex_unlock(&n->ctl_mu);
}

static void *ctl_main(void *arg)
{
        kerfd_node *n = arg;
        kerf_slicectl_params p;
        kerf_slicectl_slice *s = NULL;
        size_t cap = 0, steps = 0, changes = 0;

        kerf_slicectl_params_default(&p);
        pthread_mutex_lock(&n->mu);
        while (!n->ctl_stop) {
                size_t k = 0;
                uint64_t epoch;
                struct timespec ts = {0, CTL_PERIOD_MS * 1000000L};

                n->ctl_steps += steps;
                n->ctl_changes += changes;
                steps = changes = 0;
                kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
                void *val;
                while (kerf_u64map_next(&n->live, &it, NULL, &val)) {
                        dtask *t = val;
                        if (!t->region || (t->state != KERF_TASK_RUNNING && !t->preempt_frozen))
                                continue;
                        if (k == cap) {
                                size_t nc = cap ? cap * 2 : 64;
                                kerf_slicectl_slice *ns = realloc(s, nc * sizeof(*s));
                                if (!ns)
                                        break;
                                s = ns;
                                cap = nc;
                        }
                        memset(&s[k], 0, sizeof(s[k]));
                        s[k].region = t->region;
                        s[k].task_id = t->rec.id;
                        s[k].gpu = t->preempt_frozen ? (int)t->preempt_gpu
                                   : t->n_units      ? (int)t->units[0].gpu
                                                     : -1;
                        s[k].high_impact = t->req.tier == KERF_TIER_HIGH;
                        s[k].best_effort =
                            t->req.tier == KERF_TIER_EXPLORATORY || t->req.preemptible;
                        s[k].frozen = t->suspended;
                        s[k].started_ns = t->started_mono * 1000000u;
                        k++;
                }
                epoch = n->ctl_epoch;
                pthread_mutex_unlock(&n->mu);
                pthread_mutex_lock(&n->ctl_mu);
                if (k && epoch == n->ctl_epoch) { /* no region was unmapped since the copy */
                        changes += kerf_slicectl_step(s, k, mono_ns(), &p);
                        steps++;
                }
                pthread_mutex_unlock(&n->ctl_mu);
                nanosleep(&ts, NULL);
                pthread_mutex_lock(&n->mu);
        }
        pthread_mutex_unlock(&n->mu);
        free(s);
        return NULL;
}

int kerfd__ctl_start(kerfd_node *n)
{
        int r = pthread_create(&n->ctl, NULL, ctl_main, n);
        if (r != 0)
                return -r;
        n->ctl_started = true;
        return 0;
}

void kerfd__ctl_stop(kerfd_node *n)
{
        if (!n->ctl_started)
                return;
        pthread_mutex_lock(&n->mu);
        n->ctl_stop = true;
        pthread_mutex_unlock(&n->mu);
        pthread_join(n->ctl, NULL);
        n->ctl_started = false;
}

/* ---- suspend / resume ---------------------------------------------------------------------- */

int kerfd__task_suspend(kerfd_node *n, dtask *t, bool on, const char *actor, char *msg,
                        size_t msglen)
{
        char obj[64];

        if (!is_slice(t) || !t->region || t->state != KERF_TASK_RUNNING) {
                snprintf(msg, msglen,
                         "task %llu is not a running software slice (route slice or tslice) with "
                         "a slice region: %s works by holding its GPU launches in the shim",
                         (unsigned long long)t->rec.id, on ? "suspend" : "resume");
                return -EINVAL;
        }
        if (t->unenforced) {
                snprintf(msg, msglen,
                         "task %llu runs unenforced (no shim in its processes): nothing would "
                         "hold its GPU launches",
                         (unsigned long long)t->rec.id);
                return -EINVAL;
        }
        if (t->suspended == on) {
                snprintf(msg, msglen, "task %llu is %s", (unsigned long long)t->rec.id,
                         on ? "already suspended" : "not suspended");
                return -EALREADY;
        }
        t->suspended = on;
        kerfd__slice_freeze(n, t, on);
        if (on)
                n->suspends_total++;
        else
                t->last_active_mono = kerfd_mono_ms(); /* the idle clock starts again */
        snprintf(obj, sizeof(obj), "task:%llu", (unsigned long long)t->rec.id);
        kerfd__audit(n, actor, t->rec.tenant, on ? "task.suspend" : "task.resume", obj, "ok",
                     on ? "GPU launches held (region flag FROZEN)" : "GPU launches released",
                     t->units[0].gpu_uuid);
        kerfd__event(n, on ? "suspend" : "resume", (int)t->units[0].gpu, t->units[0].id, t->rec.id,
                     0, NULL, "task %llu %s by %s", (unsigned long long)t->rec.id,
                     on ? "suspended" : "resumed", actor);
        log_info("task %llu %s by %s", (unsigned long long)t->rec.id, on ? "suspended" : "resumed",
                 actor);
        return 0;
}

/* ---- preemption by suspend ----------------------------------------------------------------- */

/* Memory the frozen victims on `gpu` still hold (the scheduler counts it as free). */
static uint64_t frozen_memory(kerfd_node *n, unsigned gpu)
{
        uint64_t sum = 0;
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;
        while (kerf_u64map_next(&n->live, &it, NULL, &val)) {
                dtask *t = val;
                if (t->preempt_frozen && t->preempt_gpu == gpu && t->region)
                        sum += atomic_load(&t->region->memory_charged);
        }
        return sum;
}

bool kerfd__preempt_by_suspend(kerfd_node *n, dtask *t, const kerf_decision *d)
{
        kerf_gpu_state st;
        dtask *by = kerfd__live(n, d->by_task);
        uint64_t total, need, held;
        unsigned gpu;
        char obj[64], text[KERF_TEXT_LEN + 64];

        if (!n->cfg.preempt_suspend || !is_slice(t) || !t->region || t->unenforced || !t->in_exec ||
            t->stopping || !t->argv || !by)
                return false;
        gpu = t->units[0].gpu;
        if (gpu >= n->fleet->n_gpus || kerf_sched_gpu_get(n->sched, gpu, &st) < 0)
                return false;
        total = n->fleet->gpus[gpu].model->mem_bytes;
        need = by->req.mem_bytes      ? by->req.mem_bytes
               : by->req.mem_permille ? total / 1000 * by->req.mem_permille
                                      : total;
        held = atomic_load(&t->region->memory_charged) + frozen_memory(n, gpu);
        /* only compute is needed when the memory the victim keeps fits beside what the
         * scheduler has granted and the preemptor's request */
        if (st.mem_reserved + need + held > total)
                return false;
        snprintf(t->rec.reason_code, sizeof(t->rec.reason_code), "%s",
                 kerf_why_name(d->reason.code));
        t->rec.reason_task = d->reason.other_task;
        snprintf(t->rec.reason_text, sizeof(t->rec.reason_text), "%s", d->reason.text);
        kerfd__task_set_state(t, KERF_TASK_PENDING);
        t->preempt_frozen = true;
        t->preempt_gpu = gpu;
        t->suspended = true;
        kerfd__slice_freeze(n, t, true);
        snprintf(text, sizeof(text), "suspended in place (policy.preempt_slices_by: suspend): %s",
                 d->reason.text);
        kerfd_tx *x = kerfd__tx_new("task.preempt", t->rec.id); /* one change (records.c) */
        for (unsigned i = 0; i < t->n_units; i++)
                kerfd__tx_unit_delete(x, t->units[i].id);
        kerfd__tx_task(x, &t->rec, false);
        kerfd__tx_run(n, x, t, kerfd__run_used_ns(t)); /* frozen: its run ends here */
        snprintf(obj, sizeof(obj), "task:%llu", (unsigned long long)t->rec.id);
        kerfd__tx_audit(x, "kerfd", t->rec.tenant, "task.preempt", obj, "ok", text,
                        t->units[0].gpu_uuid);
        kerfd__tx_event(x, "preempt", (int)gpu, t->units[0].id, t->rec.id, 0, NULL, "task %llu %s",
                        (unsigned long long)t->rec.id, text);
        (void)kerfd__tx_commit(n, x, true);
        log_info("task %llu preempted: %s", (unsigned long long)t->rec.id, text);
        t->n_units = 0;
        t->rec.route[0] = 0;
        return true;
}

bool kerfd__resume_preempted(kerfd_node *n, dtask *t)
{
        if (!t->preempt_frozen)
                return false;
        t->preempt_frozen = false;
        t->suspended = false;
        if (t->in_exec && !t->stopping && t->region && is_slice(t) &&
            t->units[0].gpu == t->preempt_gpu) {
                struct kerf_slice_region *r = t->region;
                const dunit *u = &t->units[0];
                uint32_t pct, lim;
                kerfd__slice_compute(u, &pct, &lim);
                atomic_store(&r->limits.memory_limit, u->mem);
                atomic_store(&r->limits.compute_pct, pct);
                atomic_store(&r->limits.compute_limit_pct, lim);
                atomic_store(&r->limits.compute_allowed_pct, pct);
                if (u->kind == KERF_UNIT_TSLICE)
                        atomic_fetch_or(&r->limits.flags, KERF_SLICE_F_TSLICE);
                else
                        atomic_fetch_and(&r->limits.flags, ~KERF_SLICE_F_TSLICE);
                r->limits.unit_id = u->id;
                kerfd__slice_freeze(n, t, false); /* bumps generation */
                return true;
        }
        /* placed elsewhere: the frozen process goes, the start follows its reap */
        if (t->in_exec && !t->stopping) {
                kerf_exec_stop(n->exec, t->rec.id, KERF_EXEC_PREEMPT, 0, kerfd_mono_ms());
                t->stopping = true;
                t->stop_requeue = true;
        }
        return false;
}

/* ---- usage and shim bypass ------------------------------------------------------------------ */

static void usage_sample(dtask *t, uint64_t mono)
{
        uint64_t dev = atomic_load(&t->region->device_time_ns);
        if (t->use_mono_ms && mono > t->use_mono_ms && dev >= t->use_dev_ns)
                t->compute_used_pct =
                    (double)(dev - t->use_dev_ns) / 1e4 / (double)(mono - t->use_mono_ms);
        t->use_dev_ns = dev;
        t->use_mono_ms = mono;
}

static dtask *task_of_pid(kerfd_node *n, unsigned gpu, pid_t pid)
{
        pid_t pg = getpgid(pid);
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;
        while (kerf_u64map_next(&n->live, &it, NULL, &val)) {
                dtask *t = val;
                if (!is_slice(t) || !t->region || t->units[0].gpu != gpu)
                        continue;
                if (kerfd__task_has_pid(t, pid, pg))
                        return t;
        }
        return NULL;
}

static void bypass_record(kerfd_node *n, dtask *t, uint32_t pid, uint64_t hb, uint64_t now)
{
        char obj[64], text[256];

        t->bypass_seen = true;
        n->bypass_total++;
        if (hb)
                snprintf(text, sizeof(text),
                         "process %u uses GPU %u but the shim's heartbeat is %.1f s old "
                         "(static binary, or LD_PRELOAD cleared?)",
                         pid, t->units[0].gpu, (double)(now - hb) / 1e9);
        else
                snprintf(text, sizeof(text),
                         "process %u uses GPU %u but no shim ever attached to the slice region "
                         "(static binary, or LD_PRELOAD cleared?)",
                         pid, t->units[0].gpu);
        snprintf(obj, sizeof(obj), "task:%llu", (unsigned long long)t->rec.id);
        kerfd__audit(n, "kerfd", t->rec.tenant, "task.shim_bypass", obj,
                     n->cfg.bypass_stop ? "stopped" : "recorded", text, t->units[0].gpu_uuid);
        kerfd__event(n, "shim_bypass", (int)t->units[0].gpu, t->units[0].id, t->rec.id, 0, NULL,
                     "task %llu: %s", (unsigned long long)t->rec.id, text);
        log_warn("task %llu: shim bypass: %s", (unsigned long long)t->rec.id, text);
}

void kerfd__slice_poll(kerfd_node *n, uint64_t mono)
{
        static kerf_backend_proc procs[256];
        uint64_t stop[16];
        size_t nstop = 0;
        uint64_t now = mono_ns();

        if (mono - n->slice_poll_mono < 1000)
                return;
        n->slice_poll_mono = mono;
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;
        while (kerf_u64map_next(&n->live, &it, NULL, &val)) {
                dtask *t = val;
                if (t->region)
                        usage_sample(t, mono);
                t->bypass_suspect &= 0xffffu; /* bit 16: seen this pass */
        }
        for (size_t g = 0; n->backend && g < n->fleet->n_gpus && g < KERF_MAX_NODE_GPUS; g++) {
                int b = kerfd__bidx(n, (unsigned)g), cnt;
                if (b < 0)
                        continue;
                cnt =
                    kerf_backend_proc_list(n->backend, (unsigned)b, KERF_BACKEND_NO_ID, procs, 256);
                for (int i = 0; i < cnt && i < 256; i++) {
                        dtask *t = task_of_pid(n, (unsigned)g, (pid_t)procs[i].pid);
                        uint64_t hb;
                        if (!t || t->unenforced || t->bypass_seen || t->stopping ||
                            (t->bypass_suspect & 0x10000u))
                                continue;
                        hb = atomic_load(&t->region->heartbeat_ns);
                        if (hb && (hb >= now || now - hb <= BYPASS_STALE_NS))
                                continue;
                        t->bypass_suspect = ((t->bypass_suspect & 0xffffu) + 1) | 0x10000u;
                        if ((t->bypass_suspect & 0xffffu) < BYPASS_POLLS)
                                continue;
                        bypass_record(n, t, procs[i].pid, hb, now);
                        if (n->cfg.bypass_stop && nstop < 16)
                                stop[nstop++] = t->rec.id;
                }
        }
        it = (kerf_u64map_iter)KERF_U64MAP_ITER_INIT;
        while (kerf_u64map_next(&n->live, &it, NULL, &val)) {
                dtask *t = val;
                if (!(t->bypass_suspect & 0x10000u))
                        t->bypass_suspect = 0; /* not seen this pass: start again */
        }
        for (size_t i = 0; i < nstop; i++) {
                dtask *t = kerfd__live(n, stop[i]);
                if (t && !t->stopping)
                        kerfd__task_stop(n, t, KERF_END_FAILURE, "kerfd",
                                         "stopped: its processes use the GPU without the shim "
                                         "(policy.shim_bypass: stop)",
                                         n->cfg.grace_s);
        }
}

json_t *kerfd__usage_json(const dtask *t)
{
        const struct kerf_slice_region *r = t->region;
        json_t *j;
        uint64_t hb, flags, now;

        if (!r)
                return NULL;
        hb = atomic_load(&r->heartbeat_ns);
        now = mono_ns();
        flags = atomic_load(&r->limits.flags);
        j = json_object();
        json_object_set_new(j, "memory_used_bytes",
                            json_integer((json_int_t)atomic_load(&r->memory_charged)));
        json_object_set_new(j, "memory_peak_bytes",
                            json_integer((json_int_t)atomic_load(&r->memory_peak)));
        json_object_set_new(j, "memory_limit_bytes",
                            json_integer((json_int_t)atomic_load(&r->limits.memory_limit)));
        json_object_set_new(j, "memory_denied",
                            json_integer((json_int_t)atomic_load(&r->memory_denied)));
        json_object_set_new(j, "compute_pct",
                            json_integer((json_int_t)atomic_load(&r->limits.compute_pct)));
        json_object_set_new(j, "compute_limit_pct",
                            json_integer((json_int_t)atomic_load(&r->limits.compute_limit_pct)));
        json_object_set_new(j, "compute_allowed_pct",
                            json_integer((json_int_t)atomic_load(&r->limits.compute_allowed_pct)));
        json_object_set_new(j, "compute_used_pct", json_real(t->compute_used_pct));
        json_object_set_new(j, "device_time_ns",
                            json_integer((json_int_t)atomic_load(&r->device_time_ns)));
        json_object_set_new(j, "throttled_ns",
                            json_integer((json_int_t)atomic_load(&r->throttled_ns)));
        json_object_set_new(j, "launches", json_integer((json_int_t)atomic_load(&r->launches)));
        json_object_set_new(j, "held_launches",
                            json_integer((json_int_t)atomic_load(&r->held_launches)));
        json_object_set_new(j, "sample_wait_ns",
                            json_integer((json_int_t)atomic_load(&r->sample_wait_ns)));
        json_object_set_new(j, "sample_waits",
                            json_integer((json_int_t)atomic_load(&r->sample_waits)));
        json_object_set_new(j, "processes", json_integer((json_int_t)atomic_load(&r->nprocs)));
        json_object_set_new(j, "heartbeat_age_ms",
                            hb ? json_integer((json_int_t)((now > hb ? now - hb : 0) / 1000000u))
                               : json_null());
        json_object_set_new(j, "frozen", json_boolean(flags & KERF_SLICE_F_FROZEN));
        json_object_set_new(j, "yield", json_boolean(flags & KERF_SLICE_F_YIELD));
        return j;
}
