/* SPDX-License-Identifier: Apache-2.0 */
/* recover.c - kerfd start-up: backend (NVML, else the simulated fleet), store, scheduler
 * rebuilt from stored state, MIG instances and live processes reconciled */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node.h"
#include "kerf/errno.h"
#include "simstate.h"

/*
 * Call graph (kerfd_node_start -> kerfd__recover):
 *
 *   open_backend     kerf_backend_open(nvml)            real GPUs: fleet from discovery
 *                    else: kerf_fleet_parse_yaml(fleet) + kerf_sim_create(<state>/sim)
 *                          + kerf_backend_open(<bindir>/../lib/libnvidia-ml.so.1)  SIMULATED
 *   kerf_sched_new   policy from the config
 *   kerf_store_open  <state>/kerf.db (WAL)
 *   note_upgrade     driver/CUDA differ from meta node.driver/node.cuda -> audit node.upgrade
 *                    + event upgrade (first records of this start), meta updated
 *   load_tenants     config tenants upserted, API-created ones read back -> sched
 *   adopt_migs       backend MIG instances -> kerf_sched_mig_adopt_id (stored unit ids kept);
 *                    stored MIG units missing on the device are "vanished"
 *   fault_restore    GPUs/units left out of service -> kerf_sched_fault
 *   drain_restore    stored drains (gpu_drains) -> kerf_sched_gpu_drain (control.c)
 *   recover_tasks    unfinished tasks in id order:
 *                      had a process: alive (pid + starttime), or its supervisor's status
 *                      file recorded its end or the supervisor lives -> kerf_exec_adopt +
 *                      kerf_sched_restore on its stored units (an end recorded while kerfd
 *                      was down is collected by the first reap, with its true status);
 *                      gone without a record -> failed (status unknown), reclaimed
 *                      "starting" without a pid: the status file, else /proc, names it
 *                      attached: alive while its pid or a stored member (pid + starttime)
 *                      lives (members_recover; the dead members' rows are dropped)
 *                      pending -> kerf_sched_submit_id (same id), + kerf_sched_task_hold
 *                      when its record is held
 *   kerf_exec_sweep  status files of tasks already ended in the store are removed
 *   each reconciliation is logged and recorded as an event
 */

/* meta keys: the versions kerfd last started with (note_upgrade) */
#define VERSION_KEY_DRIVER "node.driver"
#define VERSION_KEY_CUDA   "node.cuda"

static int read_file(const char *path, char **ret, size_t *ret_len)
{
        FILE *f = fopen(path, "re");
        char *buf;
        long len;

        if (!f)
                return -errno;
        fseek(f, 0, SEEK_END);
        len = ftell(f);
        fseek(f, 0, SEEK_SET);
        buf = malloc((size_t)len + 1);
        if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
                free(buf);
                fclose(f);
                return -EIO;
        }
        buf[len] = 0;
        fclose(f);
        *ret = buf;
        *ret_len = (size_t)len;
        return 0;
}

static int fleet_from_backend(kerfd_node *n)
{
        unsigned cnt = kerf_backend_gpu_count(n->backend);
        char host[64] = "node0";
        int cv = 0, node, r;
        kerf_backend_versions v;

        if (kerf_backend_versions_get(n->backend, &v) == 0)
                cv = v.cuda_version;
        gethostname(host, sizeof(host) - 1);
        for (char *p = host; *p; p++)
                if (*p == ' ')
                        *p = '-';
        if ((r = kerf_fleet_new(&n->fleet)) < 0)
                return r;
        node = kerf_fleet_add_node(n->fleet, host, 0, 0, n->driver, cv);
        if (node < 0)
                return node;
        for (unsigned i = 0; i < cnt; i++) {
                kerf_backend_gpu g;
                if (kerf_backend_gpu_get(n->backend, i, &g) < 0)
                        continue;
                if (!g.model) {
                        log_warn("GPU %u (%s, %s): model unknown to kerf, not scheduled", i, g.name,
                                 g.uuid);
                        continue;
                }
                r = kerf_fleet_add_gpu(n->fleet, (unsigned)node, g.model, g.mig_current, -1,
                                       g.uuid);
                if (r < 0)
                        log_warn("GPU %u (%s): not added: %s", i, g.uuid, kerf_strerror(r));
        }
        return 0;
}

static void versions(kerfd_node *n)
{
        kerf_backend_versions v;
        if (n->backend && kerf_backend_versions_get(n->backend, &v) == 0) {
                snprintf(n->driver, sizeof(n->driver), "%.31s", v.driver);
                if (v.cuda_version)
                        snprintf(n->cuda, sizeof(n->cuda), "%d.%d", v.cuda_version / 1000,
                                 (v.cuda_version % 1000) / 10);
        } else if (n->fleet && n->fleet->n_nodes) {
                snprintf(n->driver, sizeof(n->driver), "%s", n->fleet->nodes[0].driver_version);
                int cv = n->fleet->nodes[0].cuda_version;
                snprintf(n->cuda, sizeof(n->cuda), "%d.%d", cv / 1000, (cv % 1000) / 10);
        }
}

int kerfd__open_backend(kerfd_node *n)
{
        kerf_backend_options o;
        char err[512] = "", lib[4400], path[4352], *text = NULL;
        size_t len = 0;
        int r;

        kerf_backend_options_init(&o);
        o.allow_mig_mode_change = n->cfg.allow_mig_mode_change;
        if (!n->cfg.force_sim) {
                o.library = n->cfg.nvml_library[0] ? n->cfg.nvml_library : NULL;
                r = kerf_backend_open(kerf_backend_nvml_ops(), &o, &n->backend, err, sizeof(err));
                if (r == 0 && kerf_backend_gpu_count(n->backend) > 0) {
                        snprintf(n->backend_name, sizeof(n->backend_name), "nvml");
                        versions(n);
                        return fleet_from_backend(n);
                }
                n->backend = kerf_backend_close(n->backend);
        } else {
                snprintf(err, sizeof(err), "backend.simulated is true");
        }
        /* The simulated fleet. */
        n->simulated = true;
        snprintf(n->backend_name, sizeof(n->backend_name), "sim");
        if ((r = read_file(n->cfg.fleet, &text, &len)) < 0) {
                log_error("no NVIDIA library (%s) and the fleet file %s cannot be read: %s", err,
                          n->cfg.fleet, strerror(-r));
                return r;
        }
        r = kerf_fleet_parse_yaml(text, len, &n->fleet, lib, sizeof(lib));
        free(text);
        if (r < 0) {
                log_error("%s: %s", n->cfg.fleet, lib);
                return r;
        }
        if (n->fleet->n_nodes > 1)
                log_warn("fleet %s has %zu nodes: kerfd simulates only the first", n->cfg.fleet,
                         n->fleet->n_nodes);
        /* Keep only node 0: kerfd is one node. */
        if (n->fleet->n_nodes > 1) {
                n->fleet->n_gpus = n->fleet->nodes[0].n_gpus;
                n->fleet->n_nodes = 1;
        }
        snprintf(n->sim_dir, sizeof(n->sim_dir), "%s/sim", n->cfg.state_dir);
        r = kerf_sim_create(n->sim_dir, n->fleet, 0, false);
        if (r < 0 && r != -EEXIST) {
                log_error("cannot create the simulated node in %s: %s", n->sim_dir,
                          kerf_strerror(r));
                return r;
        }
        /* every task's uid may open it, through the simulated device group (simgroup.c) */
        (void)kerfd__sim_share(n);
        setenv(KERF_SIM_ENV, n->sim_dir, 1);
        kerfd__install_lib_dir(n->exe_dir, path, sizeof(path));
        snprintf(lib, sizeof(lib), "%s/libnvidia-ml.so.1", path);
        o.library = lib;
        r = kerf_backend_open(kerf_backend_nvml_ops(), &o, &n->backend, err, sizeof(err));
        if (r < 0) {
                log_warn("simulated NVML %s not loaded (%s): MIG changes are only bookkept", lib,
                         err);
                n->backend = NULL;
        }
        versions(n);
        log_warn("**************************************************************************");
        log_warn("*  SIMULATED FLEET: no NVIDIA library could be loaded.                   *");
        log_warn("*  kerfd runs on %-55s *", n->cfg.fleet);
        log_warn("*  (%zu GPUs, state in %s); every API answer says \"simulated\": true.",
                 n->fleet->n_gpus, n->sim_dir);
        log_warn("**************************************************************************");
        return 0;
}

static int load_tenants(kerfd_node *n)
{
        kerf_store_tenant *ts = NULL;
        size_t nt = 0;
        int r;

        for (unsigned i = 0; i < n->cfg.n_tenants; i++) {
                const kerfd_tenant_cfg *c = &n->cfg.tenants[i];
                kerf_store_tenant st;
                kerfd__tenant_to_store(c, &st);
                if ((r = kerf_store_tenant_upsert(n->store, &st)) < 0)
                        return r;
        }
        if ((r = kerf_store_tenant_list(n->store, &ts, &nt)) < 0)
                return r;
        for (size_t i = 0; i < nt; i++) {
                kerfd_tenant_cfg c;
                kerfd__tenant_from_store(&ts[i], &c);
                /* allow_root comes from the config file only, never from the store */
                for (unsigned k = 0; k < n->cfg.n_tenants; k++)
                        if (!strcmp(n->cfg.tenants[k].name, c.name))
                                c.allow_root = n->cfg.tenants[k].allow_root;
                if ((r = kerfd__tenant_apply(n, &c)) < 0)
                        log_error("tenant %s: %s", c.name, kerf_strerror(r));
        }
        free(ts);
        return 0;
}

/* Declares the device's MIG instances to the scheduler, keeping stored unit ids; stored MIG
 * units the device no longer has are reported and dropped. */
static void adopt_migs(kerfd_node *n)
{
        kerf_store_unit *su = NULL;
        size_t ns = 0;
        bool *seen;

        if (kerf_store_unit_list(n->store, 0, &su, &ns) < 0)
                log_error("store: reading the units: %s", kerf_store_errmsg(n->store));
        seen = calloc(ns + 1, sizeof(bool));
        for (size_t g = 0; n->backend && g < n->fleet->n_gpus; g++) {
                kerf_backend_mig m[KERF_BACKEND_MAX_MIG * 2];
                int b = n->backend_index[g], nm;
                if (b < 0 || !n->fleet->gpus[g].mig_enabled)
                        continue;
                nm = kerf_backend_mig_list(n->backend, (unsigned)b, m, KERF_BACKEND_MAX_MIG * 2);
                for (int j = 0; j < nm && j < KERF_BACKEND_MAX_MIG * 2; j++) {
                        uint64_t want = 0, got = 0;
                        dunit *du;
                        for (size_t k = 0; k < ns; k++)
                                if (kerf_unit_kind_parse(su[k].kind) == KERF_UNIT_MIG &&
                                    su[k].gpu == (int)g && su[k].mig_gi == (int)m[j].gi_id &&
                                    su[k].mig_start == (int)m[j].start) {
                                        want = su[k].id;
                                        seen[k] = true;
                                }
                        if (kerf_sched_mig_adopt_id(n->sched, (unsigned)g, m[j].profile_id,
                                                    m[j].start, want, &got) < 0 &&
                            (!want ||
                             kerf_sched_mig_adopt_id(n->sched, (unsigned)g, m[j].profile_id,
                                                     m[j].start, 0, &got) < 0)) {
                                log_warn("GPU %zu: MIG instance gi %u not adoptable", g,
                                         m[j].gi_id);
                                continue;
                        }
                        du = calloc(1, sizeof(*du));
                        if (!du)
                                continue;
                        du->id = got;
                        du->kind = KERF_UNIT_MIG;
                        du->gpu = (unsigned)g;
                        du->mig_gi = (int)m[j].gi_id;
                        du->mig_ci = (int)m[j].ci_id;
                        du->mig_start = (int)m[j].start;
                        du->mig_profile = m[j].profile_name;
                        du->mem = m[j].mem_total;
                        snprintf(du->gpu_uuid, sizeof(du->gpu_uuid), "%s", n->fleet->gpus[g].uuid);
                        snprintf(du->mig_uuid, sizeof(du->mig_uuid), "%s", m[j].uuid);
                        kerf_u64map_put(&n->migs, got, du);
                        if (!want) {
                                kerf_store_unit s;
                                kerf_store_unit_init(&s);
                                s.id = got;
                                snprintf(s.kind, sizeof(s.kind), "%s",
                                         kerf_unit_kind_name(KERF_UNIT_MIG));
                                snprintf(s.state, sizeof(s.state), "%s",
                                         kerf_unit_state_name(KERF_UNIT_READY));
                                s.gpu = (int)g;
                                snprintf(s.gpu_uuid, sizeof(s.gpu_uuid), "%s", du->gpu_uuid);
                                s.mem_bytes = du->mem;
                                snprintf(s.mig_profile, sizeof(s.mig_profile), "%s",
                                         du->mig_profile);
                                s.mig_gi = du->mig_gi;
                                s.mig_ci = du->mig_ci;
                                s.mig_start = du->mig_start;
                                snprintf(s.mig_uuid, sizeof(s.mig_uuid), "%s", du->mig_uuid);
                                kerfd_tx *x = kerfd__tx_new("mig.adopt", 0);
                                kerfd__tx_unit(x, &s);
                                (void)kerfd__tx_commit(n, x, true);
                        }
                        log_info("adopted MIG %s at slice %u on GPU %zu as unit %llu (%s)",
                                 du->mig_profile, m[j].start, g, (unsigned long long)got,
                                 du->mig_uuid);
                }
        }
        for (size_t k = 0; k < ns; k++) {
                if (seen[k] || kerf_unit_kind_parse(su[k].kind) != KERF_UNIT_MIG)
                        continue;
                log_warn("MIG unit %llu (%s gi %d on GPU %d) vanished from the device%s",
                         (unsigned long long)su[k].id, su[k].mig_profile, su[k].mig_gi, su[k].gpu,
                         su[k].task ? "; its task fails" : "");
                kerfd__event(n, "mig_vanished", su[k].gpu, su[k].id, su[k].task, 0, NULL,
                             "MIG %s gi %d vanished while kerfd was down", su[k].mig_profile,
                             su[k].mig_gi);
                if (!su[k].task) {
                        kerfd_tx *x = kerfd__tx_new("mig.vanished", 0);
                        kerfd__tx_unit_delete(x, su[k].id);
                        (void)kerfd__tx_commit(n, x, true);
                }
        }
        free(seen);
        free(su);
}

/* Recovery streams the unfinished records: each is rebuilt into its dtask as the store hands
 * it over (no copy of the record list). Tasks that had a process (or were "starting") are
 * recovered first, so that their units are taken before the pending ones queue; nothing touches
 * the store or the scheduler while the read is in progress. */
typedef struct rctx {
        kerfd_node *n;
        dtask **run, **pend;
        size_t n_run, cap_run, n_pend, cap_pend;
} rctx;

static int push(dtask ***arr, size_t *len, size_t *cap, dtask *t)
{
        if (*len == *cap) {
                size_t nc = *cap ? *cap * 2 : 256;
                dtask **na = realloc(*arr, nc * sizeof(*na));
                if (!na)
                        return -ENOMEM;
                *arr = na;
                *cap = nc;
        }
        (*arr)[(*len)++] = t;
        return 0;
}

static int rebuild(const kerf_store_task *rec, void *ud)
{
        rctx *x = ud;
        char msg[256];
        dtask *t = NULL;
        int r = kerfd_task_from_store(x->n, rec, &t, msg, sizeof(msg));

        if (r < 0) {
                log_error("task %llu cannot be recovered: %s", (unsigned long long)rec->id, msg);
                return r == -ENOMEM ? r : 0;
        }
        if (rec->pid > 0 || t->state == KERF_TASK_STARTING)
                r = push(&x->run, &x->n_run, &x->cap_run, t);
        else
                r = push(&x->pend, &x->n_pend, &x->cap_pend, t);
        if (r < 0)
                kerfd_task_free(t);
        return r;
}

static void restore_units(kerfd_node *n, dtask *t, kerf_unit_info *ui, unsigned *ret_n)
{
        kerf_store_unit *su = NULL;
        size_t ns = 0;
        unsigned k = 0;

        if (kerf_store_unit_list(n->store, t->rec.id, &su, &ns) < 0)
                log_error("store: units of task %llu: %s", (unsigned long long)t->rec.id,
                          kerf_store_errmsg(n->store));
        for (size_t i = 0; i < ns && k < KERF_MAX_TASK_GPUS; i++) {
                int kind = kerf_unit_kind_parse(su[i].kind);
                if (kind < 0) {
                        /* a damaged record: the unit is not guessed at (the task's restore
                         * then finds it missing) */
                        log_error("recovery: unit %llu of task %llu has the unknown kind '%s': "
                                  "not restored",
                                  (unsigned long long)su[i].id, (unsigned long long)t->rec.id,
                                  su[i].kind);
                        continue;
                }
                memset(&ui[k], 0, sizeof(ui[k]));
                ui[k].id = su[i].id;
                ui[k].kind = (kerf_unit_kind)kind;
                ui[k].gpu = (unsigned)su[i].gpu;
                ui[k].mem_bytes = su[i].mem_bytes;
                ui[k].compute_pct = su[i].compute_pct;
                ui[k].compute_limit_pct = su[i].compute_limit_pct;
                k++;
        }
        free(su);
        *ret_n = k;
}

static void recover_one(kerfd_node *n, dtask *t)
{
        kerf_reason why;
        int r;

        kerf_u64map_put(&n->live, t->rec.id, t);
        n->n_live++;
        kerfd__tenant_count(n, t->rec.tenant, +1);
        memset(&why, 0, sizeof(why));
        bool adopted = false;
        if (t->state == KERF_TASK_STARTING && t->rec.pid <= 0 && t->argv) {
                /* kerfd died between "starting" and the start's commit: did the fork happen? */
                uint64_t st = 0;
                pid_t p = 0;
                if (kerf_exec_find(n->exec, t->rec.id, &p, &st) < 0)
                        p = kerfd__find_started(n, t->rec.id, &st);
                if (p > 0) {
                        log_info("recovery: task %llu was started (pid %d) but not committed: "
                                 "adopting it, not starting it twice",
                                 (unsigned long long)t->rec.id, (int)p);
                        kerfd__event(n, "recover", -1, 0, t->rec.id, 0, NULL,
                                     "task %llu: uncommitted start found as pid %d; adopted",
                                     (unsigned long long)t->rec.id, (int)p);
                        t->rec.pid = p;
                        t->rec.pgid = p;
                        t->rec.proc_start = st;
                        if (!t->rec.started_ms)
                                t->rec.started_ms = (int64_t)kerfd_now_ms();
                        if (!t->rec.log_stdout &&
                            asprintf(&t->rec.log_stdout, "%s/%llu.out", n->log_dir,
                                     (unsigned long long)t->rec.id) < 0)
                                t->rec.log_stdout = NULL;
                        if (!t->rec.log_stderr &&
                            asprintf(&t->rec.log_stderr, "%s/%llu.err", n->log_dir,
                                     (unsigned long long)t->rec.id) < 0)
                                t->rec.log_stderr = NULL;
                        adopted = true;
                }
        }
        if (t->state == KERF_TASK_PENDING && t->rec.pid > 0 && t->argv) {
                /* a victim frozen in place by a preemption (policy.preempt_slices_by:
                 * suspend) does not outlive kerfd: its process goes, the task waits again */
                if (kerf_exec_alive((pid_t)t->rec.pid, t->rec.proc_start)) {
                        log_info("recovery: task %llu was suspended by a preemption: its process "
                                 "group %lld is killed, the task waits again",
                                 (unsigned long long)t->rec.id, (long long)t->rec.pgid);
                        kill(-(pid_t)(t->rec.pgid > 0 ? t->rec.pgid : t->rec.pid), SIGKILL);
                }
                t->rec.pid = t->rec.pgid = 0;
                t->rec.proc_start = 0;
        }
        if (t->rec.pid > 0) {
                kerf_unit_info ui[KERF_MAX_TASK_GPUS];
                unsigned nu = 0;
                bool alive;
                if (!t->argv) /* attached: its first process or any member that joined it */
                        kerfd__members_recover(n, t);
                alive = t->argv ? kerf_exec_recoverable(n->exec, t->rec.id, (pid_t)t->rec.pid,
                                                        t->rec.proc_start)
                                : kill((pid_t)t->rec.pid, 0) == 0 || t->n_members > 0;
                if (!alive) {
                        log_info("recovery: task %llu (pid %lld) is gone and no supervisor "
                                 "recorded its end: failed, reclaimed",
                                 (unsigned long long)t->rec.id, (long long)t->rec.pid);
                        restore_units(n, t, ui, &nu);
                        t->n_units = 0;
                        if (kerfd__units_reserve(t, nu) < 0)
                                nu = 0;
                        for (unsigned i = 0; i < nu; i++) {
                                dunit *d = &t->units[t->n_units++];
                                memset(d, 0, sizeof(*d));
                                d->id = ui[i].id;
                                d->kind = ui[i].kind;
                                d->gpu = ui[i].gpu;
                                dunit *m = kerf_u64map_get(&n->migs, ui[i].id);
                                if (m)
                                        *d = *m;
                        }
                        kerfd__task_end(n, t, KERF_END_FAILURE, "kerfd",
                                        "ended while kerfd was down; exit status unknown");
                        return;
                }
                restore_units(n, t, ui, &nu);
                r = kerf_sched_restore(n->sched, &t->req, t->rec.id, ui, nu, &why);
                if (r < 0) {
                        log_warn("recovery: task %llu alive but its units cannot be restored "
                                 "(%s: %s): stopping it",
                                 (unsigned long long)t->rec.id, kerf_strerror(r), why.text);
                        if (t->argv &&
                            kerf_exec_adopt(n->exec, t->rec.id, (pid_t)t->rec.pid,
                                            (pid_t)t->rec.pgid, t->rec.proc_start, NULL) == 0) {
                                t->in_exec = true;
                                kerfd__task_stop(n, t, KERF_END_FAULT, "kerfd",
                                                 "unit lost across a kerfd restart", 0);
                        } else {
                                kerfd__task_end(n, t, KERF_END_FAULT, "kerfd",
                                                "unit lost across a kerfd restart");
                        }
                        return;
                }
                if (n->fence_ctx && t->n_units &&
                    kerf_fence_open(n->fence_ctx, t->rec.id, &t->fence) < 0)
                        t->fence = NULL;
                if (t->argv) {
                        r = kerf_exec_adopt(n->exec, t->rec.id, (pid_t)t->rec.pid,
                                            (pid_t)t->rec.pgid, t->rec.proc_start, t->fence);
                        t->in_exec = r == 0;
                }
                kerfd__units_refresh(n, t);
                kerfd__slice_open(n, t);
                /* without the shim now, say so (it may have been started with one) */
                t->unenforced =
                    t->region && !n->shim_path[0] && t->n_units &&
                    (t->units[0].kind == KERF_UNIT_SLICE || t->units[0].kind == KERF_UNIT_TSLICE);
                kerfd__task_set_state(t, KERF_TASK_RUNNING);
                if (adopted)
                        kerfd__commit_task(n, t, false, "kerfd", "task.start", "ok",
                                           "uncommitted start adopted after a kerfd restart");
                t->started_mono = t->last_active_mono = kerfd_mono_ms();
                if (t->rec.started_ms)
                        t->started_mono -= (uint64_t)((int64_t)kerfd_now_ms() - t->rec.started_ms);
                (void)kerf_sched_task_started(n->sched, t->rec.id, t->started_mono); /* backfill */
                log_info("recovery: task %llu (pid %lld) still alive: re-adopted on unit %llu",
                         (unsigned long long)t->rec.id, (long long)t->rec.pid,
                         t->n_units ? (unsigned long long)t->units[0].id : 0ULL);
                return;
        }
        r = kerf_sched_submit_id(n->sched, &t->req, t->rec.id, &why);
        if (r < 0) {
                kerfd__task_end(n, t, KERF_END_FAILURE, "kerfd", why.text);
                return;
        }
        /* a hold outlives the restart (control.c); the words are those the hold recorded */
        if (t->rec.held[0]) {
                char held[64];
                snprintf(held, sizeof(held), "held by %s", t->rec.held);
                (void)kerf_sched_task_hold(n->sched, t->rec.id, held);
        }
        if (t->state != KERF_TASK_PENDING) {
                kerfd_tx *x = kerfd__tx_new("task.pending", t->rec.id);
                kerf_store_unit *su = NULL;
                size_t ns = 0;
                kerfd__task_set_state(t, KERF_TASK_PENDING);
                kerfd__tx_task(x, &t->rec, false);
                /* the units of a start that was recorded but never forked (kerfd died in
                 * between): free again, as after a requeue; the task is placed anew */
                if (kerf_store_unit_list(n->store, t->rec.id, &su, &ns) < 0)
                        log_error("store: units of task %llu: %s", (unsigned long long)t->rec.id,
                                  kerf_store_errmsg(n->store));
                for (size_t i = 0; i < ns; i++) {
                        if (kerf_unit_kind_parse(su[i].kind) == KERF_UNIT_MIG) {
                                su[i].task = 0;
                                snprintf(su[i].state, sizeof(su[i].state), "%s",
                                         kerf_unit_state_name(KERF_UNIT_READY));
                                kerfd__tx_unit(x, &su[i]);
                        } else {
                                kerfd__tx_unit_delete(x, su[i].id);
                        }
                }
                free(su);
                /* its run (if any) ends now: when its process died while kerfd was down is
                 * not known, so the run is closed at recovery (an upper bound) */
                kerfd__tx_run(n, x, t, -1);
                (void)kerfd__tx_commit(n, x, true);
        }
}

static bool keep_status(void *ud, uint64_t task)
{
        return kerfd__records_pending(ud, task);
}

/* A driver or CUDA version different from the one the store last saw is a node upgrade: it is
 * recorded (audit node.upgrade + event upgrade, one transaction with the new versions in meta)
 * before anything else of this start, so every record before it carries the old versions and
 * every one after it the new (docs/DAEMON.md "Upgrades"). The first start only stores them.
 * A store that cannot take it (full disk) does not stop kerfd: meta keeps the old versions,
 * so the next start that can write records the upgrade. */
static int note_upgrade(kerfd_node *n)
{
        char od[64] = "", oc[32] = "";
        bool known = kerf_store_meta_get(n->store, VERSION_KEY_DRIVER, od, sizeof(od)) == 0;
        bool changed;
        int r;

        if (kerf_store_meta_get(n->store, VERSION_KEY_CUDA, oc, sizeof(oc)) < 0)
                oc[0] = '\0';
        changed = known && (strcmp(od, n->driver) != 0 || strcmp(oc, n->cuda) != 0);
        if (known && !changed)
                return 0;
        if ((r = kerf_store_begin(n->store)) < 0)
                goto fail;
        if (changed) {
                kerf_store_audit a;
                kerf_store_event e;
                memset(&a, 0, sizeof(a));
                memset(&e, 0, sizeof(e));
                snprintf(a.actor, sizeof(a.actor), "kerfd");
                snprintf(a.action, sizeof(a.action), "node.upgrade");
                snprintf(a.object, sizeof(a.object), "node");
                snprintf(a.result, sizeof(a.result), "ok");
                snprintf(a.reason, sizeof(a.reason), "driver %s -> %s, CUDA %s -> %s", od,
                         n->driver, oc[0] ? oc : "?", n->cuda);
                snprintf(e.kind, sizeof(e.kind), "upgrade");
                e.gpu = -1;
                snprintf(e.class, sizeof(e.class), "node");
                if (snprintf(e.text, sizeof(e.text), "%s (kerf %s)", a.reason, KERFD_VERSION) >=
                    (int)sizeof(e.text))
                        e.text[sizeof(e.text) - 1] = '\0'; /* a driver string that long: cut */
                if ((r = kerf_store_audit_append(n->store, &a)) < 0 ||
                    (r = kerf_store_event_append(n->store, &e)) < 0)
                        goto fail_tx;
                log_warn("node upgraded since the last start: %s", a.reason);
        }
        if ((r = kerf_store_meta_set(n->store, VERSION_KEY_DRIVER, n->driver)) < 0 ||
            (r = kerf_store_meta_set(n->store, VERSION_KEY_CUDA, n->cuda)) < 0)
                goto fail_tx;
        if ((r = kerf_store_commit(n->store)) < 0)
                goto fail;
        return 0;
fail_tx:
        if (kerf_store_rollback(n->store) < 0)
                log_warn("store: rollback failed: %s", kerf_store_errmsg(n->store));
fail:
        log_error("store: the node's driver/CUDA versions (%s, %s) cannot be recorded: %s (%s)",
                  n->driver, n->cuda, kerf_strerror(r), kerf_store_errmsg(n->store));
        return r;
}

/* The scheduler's clock: the monotonic milliseconds max_runtime_s is enforced against. */
static uint64_t sched_clock(void *arg)
{
        (void)arg;
        return kerfd_mono_ms();
}

int kerfd__recover(kerfd_node *n)
{
        kerf_exec_config ec = {0};
        kerf_store_task_filter f = {.unfinished = true};
        char path[4400];
        rctx x = {.n = n};
        uint64_t max_task = 0, max_unit = 0, max_ev = 0;
        int r;

        /* 0711: a task's uid reaches its own work dir and slice region by name, lists nothing
         * (docs/SECURITY.md "Task identity"); every file in it has its own private mode */
        if (mkdir(n->cfg.state_dir, 0711) < 0 && errno != EEXIST) {
                log_error("state dir %s: %s", n->cfg.state_dir, strerror(errno));
                return -errno;
        }
        snprintf(n->log_dir, sizeof(n->log_dir), "%s/logs", n->cfg.state_dir);
        mkdir(n->log_dir, 0750);
        snprintf(path, sizeof(path), "%s/work", n->cfg.state_dir);
        mkdir(path, 0755);
        snprintf(n->region_dir, sizeof(n->region_dir), "%s/slices", n->cfg.state_dir);
        mkdir(n->region_dir, 0711);
        kerfd__install_lib_dir(n->exe_dir, n->lib_dir, sizeof(n->lib_dir));
        if (!realpath(n->lib_dir, path))
                snprintf(path, sizeof(path), "%s", n->lib_dir);
        snprintf(n->lib_dir, sizeof(n->lib_dir), "%s", path);
        /* tasks load copies in <state>/lib (libstage.c); the install stays where it is */
        (void)kerfd__stage_libs(path, n->exe_dir, n->cfg.state_dir, n->lib_dir, sizeof(n->lib_dir));
        if (snprintf(n->shim_path, sizeof(n->shim_path), "%s/libkerf-cuda.so", n->lib_dir) >=
            (int)sizeof(n->shim_path))
                n->shim_path[0] = '\0'; /* cannot be found: refused below */
        if (getenv("KERFD_TEST_SHIM_PATH") && *getenv("KERFD_TEST_SHIM_PATH")) {
                /* test hook (docs/DAEMON.md): look for the shim elsewhere */
                snprintf(n->shim_path, sizeof(n->shim_path), "%s", getenv("KERFD_TEST_SHIM_PATH"));
                log_warn("KERFD_TEST_SHIM_PATH: test hook, the shim is looked for at %s",
                         n->shim_path);
        }
        snprintf(n->shim_want, sizeof(n->shim_want), "%s", n->shim_path);
        if (access(n->shim_path, R_OK) != 0) {
                if (n->cfg.unenforced_slices)
                        log_warn("%s not found: software slices (slice, tslice) run UNENFORCED "
                                 "(policy.unenforced_slices: allow): nothing caps their memory "
                                 "or compute share; every answer about them says so",
                                 n->shim_path);
                else
                        log_warn("%s not found: software slices (slice, tslice) are refused "
                                 "(fail closed; policy.unenforced_slices: allow runs them "
                                 "unenforced); route lists keep their other routes",
                                 n->shim_path);
                n->shim_path[0] = '\0';
        }
        if ((r = kerfd__open_backend(n)) < 0)
                return r;
        kerfd__node_devs(n);
        for (size_t g = 0; g < KERF_MAX_NODE_GPUS; g++)
                n->backend_index[g] =
                    n->backend && g < n->fleet->n_gpus
                        ? kerf_backend_gpu_find(n->backend, n->fleet->gpus[g].uuid)
                        : -1;
        kerf_policy pol;
        kerfd__slice_policy(n, &pol);
        if ((r = kerf_sched_new(n->fleet, &pol, &n->sched)) < 0) {
                log_error("scheduler: %s", kerf_strerror(r));
                return r;
        }
        /* queue modes (config queues:) and the clock backfill compares max_runtime_s with */
        kerf_sched_clock_set(n->sched, sched_clock, NULL);
        for (unsigned i = 0; i < n->cfg.n_queues; i++)
                if ((r = kerf_sched_queue_set(n->sched, n->cfg.queues[i].name,
                                              &n->cfg.queues[i].spec)) < 0) {
                        log_error("queue %s: %s", n->cfg.queues[i].name, kerf_strerror(r));
                        return r;
                }
        if ((r = kerfd__store_open(n)) < 0) /* modes, test hook, audit key: records.c */
                return r;
        (void)note_upgrade(n); /* not fatal: unrecorded, it is tried again at the next start */
        ec.log_dir = n->log_dir;
        /* the supervisors' status files: kerfd's alone (they name pids it signals) */
        char run_dir[4200], sup[4200];
        snprintf(run_dir, sizeof(run_dir), "%s/run", n->cfg.state_dir);
        struct stat rs;
        if ((mkdir(run_dir, 0700) < 0 && errno != EEXIST) || lstat(run_dir, &rs) < 0) {
                log_error("run dir %s: %s", run_dir, strerror(errno));
                return -errno;
        }
        /* never chmod what may not be ours (issue 8 S3): refuse a foreign or open one */
        if (!S_ISDIR(rs.st_mode) || rs.st_uid != geteuid() || (rs.st_mode & 077)) {
                log_error("run dir %s: must be a directory owned by kerfd's uid with mode 0700 "
                          "(it holds the task supervisors' records)",
                          run_dir);
                return -EPERM;
        }
        ec.run_dir = run_dir;
        snprintf(sup, sizeof(sup), "%s/kerf-supervise", n->exe_dir);
        ec.supervisor = sup;
        /* a supervisor's record of an end stays until that end is in the store (issue 8 R1
         * with R2: a full disk and then a crash still find the true end) */
        ec.keep = keep_status;
        ec.keep_ud = n;
        if ((r = kerf_exec_new(&ec, &n->exec)) < 0) {
                log_error("executor: %s%s%s", kerf_strerror(r),
                          r == -ENOENT || r == -EACCES ? ": cannot run " : "",
                          r == -ENOENT || r == -EACCES ? sup : "");
                return r;
        }
        if ((r = load_tenants(n)) < 0) {
                log_error("tenants: %s (%s)", kerf_strerror(r), kerf_store_errmsg(n->store));
                return r;
        }
        adopt_migs(n);
        kerfd__fault_restore(n);
        kerfd__drain_restore(n);
        kerfd__fence_init(n);
        if ((r = kerf_store_max_ids(n->store, &max_task, &max_unit, &max_ev)) < 0) {
                log_error("store: reading ids: %s", kerf_store_errmsg(n->store));
                return r;
        }
        n->next_task_id = max_task;
        r = kerf_store_task_foreach(n->store, &f, rebuild, &x);
        if (r < 0) {
                log_error("store: reading tasks: %s (%s)", kerf_strerror(r),
                          kerf_store_errmsg(n->store));
                for (size_t i = 0; i < x.n_run; i++)
                        kerfd_task_free(x.run[i]);
                for (size_t i = 0; i < x.n_pend; i++)
                        kerfd_task_free(x.pend[i]);
                free(x.run);
                free(x.pend);
                return r;
        }
        /* running tasks first, so their units are taken before pending ones queue */
        for (size_t i = 0; i < x.n_run; i++)
                recover_one(n, x.run[i]);
        for (size_t i = 0; i < x.n_pend; i++)
                recover_one(n, x.pend[i]);
        free(x.run);
        free(x.pend);
        {
                /* a run left open under a task whose end is written (a store from before
                 * runs were kept, or an end written by hand): closed at that end */
                unsigned closed = 0;
                if (kerf_store_run_close_ended(n->store, &closed) < 0)
                        log_warn("recovery: closing runs of ended tasks: %s",
                                 kerf_store_errmsg(n->store));
                else if (closed)
                        log_info("recovery: %u runs of ended tasks closed at their end", closed);
        }
        if ((r = kerf_exec_sweep(n->exec)) > 0)
                log_info("recovery: %d supervisor records of tasks already ended removed", r);
        log_info("recovered: %zu unfinished tasks, next task id %llu, %u tenants", n->n_live,
                 (unsigned long long)n->next_task_id + 1, n->n_tenants);
        kerfd__audit(n, "kerfd", "", "kerfd.start", "node", "ok",
                     n->simulated ? "simulated fleet" : "nvml", "");
        return 0;
}
