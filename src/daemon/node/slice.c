/* SPDX-License-Identifier: Apache-2.0 */
/* slice.c - per-task resources around the process: the slice shared region, the device fence,
 * and finding a process whose start was not committed */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node.h"
#include "kerf/errno.h"
#include "kerf/slice_abi.h"

/*
 * Region lifecycle (docs/SHIM-CONTRACT.md §2):
 *   start_process -> kerfd__slice_create  <state>/slices/task-<id>.slice, limits from the unit,
 *                                          then mapped read-write here: the controller
 *                                          thread (ctl.c) writes its limits and flags
 *   recovery      -> kerfd__slice_open     a re-adopted task keeps its region
 *   reclamation   -> kerfd__slice_remove   (task end, and a requeue once the process is gone)
 */

void kerfd__slice_compute(const dunit *u, uint32_t *ret_pct, uint32_t *ret_limit)
{
        uint32_t pct = u->kind == KERF_UNIT_TSLICE ? 0 : (u->compute > 100 ? 100 : u->compute);
        uint32_t lim = u->compute_limit > pct ? u->compute_limit : pct;

        if (u->kind == KERF_UNIT_TSLICE || pct == 0)
                lim = 100;
        *ret_pct = pct;
        *ret_limit = lim > 100 ? 100 : lim;
}

int kerfd__slice_create(kerfd_node *n, dtask *t, const dunit *u, char *err, size_t errlen)
{
        struct kerf_slice_init in;
        uid_t uid = t->rec.uid >= 0 ? (uid_t)t->rec.uid : geteuid();
        gid_t gid =
            t->rec.gid >= 0 ? (gid_t)t->rec.gid : (t->rec.uid >= 0 ? (gid_t)uid : getegid());
        int r;

        kerfd__slice_remove(n, t);
        memset(&in, 0, sizeof(in));
        in.memory_limit = u->mem;
        in.device_memory = u->gpu < n->fleet->n_gpus ? n->fleet->gpus[u->gpu].model->mem_bytes : 0;
        kerfd__slice_compute(u, &in.compute_pct, &in.compute_limit_pct);
        in.flags = u->kind == KERF_UNIT_TSLICE ? KERF_SLICE_F_TSLICE
                   : u->kind == KERF_UNIT_MPS  ? KERF_SLICE_F_MPS
                                               : 0;
        in.unit_id = u->id;
        in.task_id = t->rec.id;
        if (asprintf(&t->region_path, "%s/task-%llu.slice", n->region_dir,
                     (unsigned long long)t->rec.id) < 0) {
                t->region_path = NULL;
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        if (kerfd__searchable_by(n->region_dir, t->rec.uid, t->rec.gid, err, errlen) < 0) {
                char why[512];
                snprintf(why, sizeof(why), "%s", err);
                snprintf(err, errlen, "not started: the task cannot reach its slice region: %s",
                         why);
                free(t->region_path);
                t->region_path = NULL;
                return -EACCES;
        }
        unlink(t->region_path); /* a leftover of a crashed run of this very task */
        r = kerf_slice_region_create(t->region_path, uid, gid, &in);
        if (r == 0)
                r = kerf_slice_region_map(t->region_path, true, &t->region);
        if (r < 0) {
                snprintf(err, errlen, "could not create the slice region %s: %s", t->region_path,
                         strerror(-r));
                unlink(t->region_path);
                free(t->region_path);
                t->region_path = NULL;
                t->region = NULL;
        }
        return r;
}

int kerfd__searchable_by(const char *dir, long long luid, long long lgid, char *why, size_t whylen)
{
        char p[4400];
        struct stat st;
        size_t len = strlen(dir);
        uid_t uid = luid >= 0 ? (uid_t)luid : geteuid();
        gid_t gid = lgid >= 0 ? (gid_t)lgid : getegid();

        if (uid == 0)
                return 0;
        if (len >= sizeof(p) || dir[0] != '/') {
                snprintf(why, whylen, "%s: not an absolute path", dir);
                return -EINVAL;
        }
        memcpy(p, dir, len + 1);
        for (char *c = p + 1;; c++) {
                bool last = !*c;
                if (*c != '/' && !last)
                        continue;
                *c = '\0';
                if (stat(p[0] ? p : "/", &st) < 0) {
                        snprintf(why, whylen, "%s: %s", p, strerror(errno));
                        return -errno;
                }
                mode_t have = st.st_uid == uid   ? (st.st_mode >> 6) & 07
                              : st.st_gid == gid ? (st.st_mode >> 3) & 07
                                                 : st.st_mode & 07;
                if (!(have & 01)) {
                        snprintf(why, whylen,
                                 "%s is not searchable by uid %u (mode %04o, owner %u:%u)",
                                 p[0] ? p : "/", (unsigned)uid, (unsigned)(st.st_mode & 07777),
                                 (unsigned)st.st_uid, (unsigned)st.st_gid);
                        return -EACCES;
                }
                if (last)
                        return 0;
                *c = '/';
        }
}

void kerfd__slice_open(kerfd_node *n, dtask *t)
{
        if (!t->n_units ||
            (t->units[0].kind != KERF_UNIT_SLICE && t->units[0].kind != KERF_UNIT_TSLICE &&
             t->units[0].kind != KERF_UNIT_MPS))
                return;
        free(t->region_path);
        if (asprintf(&t->region_path, "%s/task-%llu.slice", n->region_dir,
                     (unsigned long long)t->rec.id) < 0) {
                t->region_path = NULL;
                return;
        }
        if (kerf_slice_region_map(t->region_path, true, &t->region) < 0) {
                log_warn("task %llu: slice region %s cannot be mapped: no idle stamp, usage "
                         "metrics or compute control for it",
                         (unsigned long long)t->rec.id, t->region_path);
                t->region = NULL;
                return;
        }
        /* kerf suspend survives a restart of kerfd: the flag is in the region */
        t->suspended = atomic_load(&t->region->limits.flags) & KERF_SLICE_F_FROZEN;
}

void kerfd__slice_remove(kerfd_node *n, dtask *t)
{
        if (t->region) {
                kerfd__metrics_slice_gone(t); /* its throttled time outlives it */
                /* never while the controller thread steps over it (ctl.c) */
                pthread_mutex_lock(&n->ctl_mu);
                kerf_slice_region_unmap(t->region);
                n->ctl_epoch++;
                pthread_mutex_unlock(&n->ctl_mu);
        }
        t->region = NULL;
        t->suspended = false;
        if (t->region_path) {
                if (unlink(t->region_path) < 0 && errno != ENOENT)
                        log_warn("task %llu: cannot remove %s: %s", (unsigned long long)t->rec.id,
                                 t->region_path, strerror(errno));
                free(t->region_path);
                t->region_path = NULL;
        }
}

uint64_t kerfd__slice_activity_ms(const dtask *t)
{
        uint64_t a;
        if (!t->region)
                return 0;
        a = atomic_load_explicit(&t->region->last_activity_ns, memory_order_acquire);
        return a / 1000000u;
}

bool kerfd__slice_counters(const dtask *t, uint64_t *mem_used, uint64_t *device_ns,
                           uint64_t *throttled_ns)
{
        if (!t->region)
                return false;
        *mem_used = atomic_load(&t->region->memory_charged);
        *device_ns = atomic_load(&t->region->device_time_ns);
        *throttled_ns = atomic_load(&t->region->throttled_ns);
        return true;
}

/* ---- device fencing ------------------------------------------------------------------------ */

void kerfd__fence_init(kerfd_node *n)
{
        kerf_fence_config fc;
        int r;

        if (!strcmp(n->cfg.fencing, "off"))
                return;
        if (!strcmp(n->cfg.fencing, "auto") && n->simulated && !n->cfg.fence_dev_dir[0]) {
                log_info("device fencing: off (simulated fleet without fencing.dev_dir: there "
                         "are no device nodes to fence)");
                return;
        }
        if (geteuid() != 0) {
                log_info("device fencing: off (kerfd is not root); CUDA_VISIBLE_DEVICES and the "
                         "shim are the only fences");
                return;
        }
        memset(&fc, 0, sizeof(fc));
        fc.mode = !strcmp(n->cfg.fencing, "v1")   ? KERF_FENCE_V1
                  : !strcmp(n->cfg.fencing, "v2") ? KERF_FENCE_V2
                                                  : KERF_FENCE_AUTO;
        fc.cgroup_root = n->cfg.fence_cgroup_root[0] ? n->cfg.fence_cgroup_root : NULL;
        fc.dev_dir = n->cfg.fence_dev_dir[0] ? n->cfg.fence_dev_dir : NULL;
        r = kerf_fence_ctx_new(&fc, &n->fence_ctx);
        if (r < 0) {
                n->fence_ctx = NULL;
                if (strcmp(n->cfg.fencing, "auto") != 0)
                        log_error("device fencing (%s) unavailable: %s", n->cfg.fencing,
                                  kerf_strerror(r));
                else
                        log_warn("device fencing unavailable (%s): tasks are not fenced",
                                 kerf_strerror(r));
                return;
        }
        log_info("device fencing: cgroup %s under %s, devices in %s",
                 kerf_fence_mode_name(kerf_fence_ctx_mode(n->fence_ctx)),
                 kerf_fence_ctx_root(n->fence_ctx), fc.dev_dir ? fc.dev_dir : "/dev");
}

static unsigned gpu_minor(kerfd_node *n, unsigned gpu)
{
        kerf_backend_gpu g;
        int b = kerfd__bidx(n, gpu);
        if (n->backend && b >= 0 && kerf_backend_gpu_get(n->backend, (unsigned)b, &g) == 0)
                return g.minor;
        return gpu;
}

/* The unit's nodes: nvidiaN per GPU, plus the MIG capability nodes of a MIG instance. A MIG
 * unit whose capability minors are unknown is fenced to its GPU node only: CUDA then cannot
 * open the instance, which fails safe (logged). */
int kerfd__fence_task(kerfd_node *n, dtask *t, char *err, size_t errlen)
{
        char names[KERF_MAX_TASK_GPUS * 3][64];
        const char *devs[KERF_MAX_TASK_GPUS * 3];
        size_t nd = 0;
        int r;

        if (!n->fence_ctx)
                return 0;
        for (unsigned i = 0; i < t->n_units && nd + 3 <= KERF_MAX_TASK_GPUS * 3; i++) {
                const dunit *u = &t->units[i];
                unsigned minor = gpu_minor(n, u->gpu), gim, cim;
                snprintf(names[nd], sizeof(names[nd]), "nvidia%u", minor);
                devs[nd] = names[nd];
                nd++;
                if (u->kind != KERF_UNIT_MIG || u->mig_gi < 0)
                        continue;
                r = kerf_fence_mig_cap_minors(
                    n->cfg.fence_mig_minors[0] ? n->cfg.fence_mig_minors : NULL, minor,
                    (unsigned)u->mig_gi, u->mig_ci < 0 ? 0 : (unsigned)u->mig_ci, &gim, &cim);
                if (r < 0) {
                        log_warn("task %llu: MIG capability nodes of GPU %u gi %d unknown (%s)",
                                 (unsigned long long)t->rec.id, minor, u->mig_gi, strerror(-r));
                        continue;
                }
                snprintf(names[nd], sizeof(names[nd]), "nvidia-caps/nvidia-cap%u", gim);
                devs[nd] = names[nd];
                nd++;
                snprintf(names[nd], sizeof(names[nd]), "nvidia-caps/nvidia-cap%u", cim);
                devs[nd] = names[nd];
                nd++;
        }
        kerf_fence_free(t->fence);
        t->fence = NULL;
        r = kerf_fence_new(n->fence_ctx, t->rec.id, devs, nd, &t->fence);
        if (r < 0) {
                snprintf(err, errlen, "could not fence the task's devices (%s): %s", devs[0],
                         kerf_strerror(r));
                t->fence = NULL;
        }
        return r;
}

/* The cgroup of `pid` in the fencing hierarchy (v2: the "0::" line; v1: the devices one),
 * relative to the hierarchy's mount, from /proc/PID/cgroup. */
static bool pid_cgroup(pid_t pid, bool v1, char *out, size_t len)
{
        char path[64], line[4200];
        bool ok = false;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
        if (!(f = fopen(path, "re")))
                return false;
        while (!ok && fgets(line, sizeof(line), f)) {
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *tok, *sv;
                if (!c2)
                        continue;
                *c2 = '\0';
                line[strcspn(line, ":")] = '\0';
                c2[1 + strcspn(c2 + 1, "\n")] = '\0';
                if (!v1) {
                        ok = !strcmp(line, "0") && c1[1] == '\0';
                } else {
                        for (tok = strtok_r(c1 + 1, ",", &sv); tok && !ok;
                             tok = strtok_r(NULL, ",", &sv))
                                ok = !strcmp(tok, "devices");
                }
                if (ok)
                        snprintf(out, len, "%s", c2 + 1);
        }
        fclose(f);
        return ok;
}

int kerfd__fence_move(kerfd_node *n, dtask *t, pid_t pid, char **ret_cg, char *err, size_t errlen)
{
        bool v1 = kerf_fence_ctx_mode(n->fence_ctx) == KERF_FENCE_V1;
        char before[4096], after[4096], *cg = NULL;
        const char *fp = kerf_fence_path(t->fence);
        size_t fl = strlen(fp), al = 0;
        int r;

        if (!pid_cgroup(pid, v1, before, sizeof(before))) {
                snprintf(err, errlen, "pid %d: its cgroup cannot be read (process gone?)",
                         (int)pid);
                return -ESRCH;
        }
        r = kerf_fence_add_pid(t->fence, pid);
        if (r == 0 && !pid_cgroup(pid, v1, after, sizeof(after)))
                r = -ESRCH;
        al = r == 0 ? strlen(after) : 0;
        if (r == 0 && (al > fl || strcmp(fp + fl - al, after) != 0))
                r = -EXDEV; /* cgroup namespace: cannot tell where it came from */
        if (r == 0 && asprintf(&cg, "%.*s%s", (int)(fl - al), fp, before) < 0) {
                cg = NULL;
                r = -ENOMEM;
        }
        if (r < 0) {
                snprintf(err, errlen, "could not move pid %d into its device fence %s: %s",
                         (int)pid, fp, strerror(-r));
                return r;
        }
        *ret_cg = cg;
        return 0;
}

void kerfd__fence_move_back(const dtask *t, pid_t pid, const char *cg)
{
        char dst[4200], line[32];
        int fd;

        if (!cg)
                return;
        snprintf(dst, sizeof(dst), "%s/cgroup.procs", cg);
        snprintf(line, sizeof(line), "%d\n", (int)pid);
        fd = open(dst, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, line, strlen(line)) < 0)
                log_warn("task %llu: pid %d not moved back to %s: %s",
                         (unsigned long long)t->rec.id, (int)pid, cg, strerror(errno));
        if (fd >= 0)
                close(fd);
}

int kerfd__fence_attach(kerfd_node *n, dtask *t, char *err, size_t errlen)
{
        int r;

        if (!n->fence_ctx || !t->n_units || t->rec.pid <= 0)
                return 0;
        if ((r = kerfd__fence_task(n, t, err, errlen)) < 0)
                return r;
        if ((r = kerfd__fence_move(n, t, (pid_t)t->rec.pid, &t->attach_cg, err, errlen)) < 0) {
                kerfd__fence_release(n, t);
                return r;
        }
        log_info("task %llu: attached pid %lld fenced in %s (was %s)",
                 (unsigned long long)t->rec.id, (long long)t->rec.pid, kerf_fence_path(t->fence),
                 t->attach_cg);
        return 0;
}

/* Attached task: its processes go back to the cgroup they came from (a member to its own, any
 * other to the first process's); never killed. */
static void attach_unfence(dtask *t)
{
        char src[4200], line[32];
        FILE *f;

        snprintf(src, sizeof(src), "%s/cgroup.procs", kerf_fence_path(t->fence));
        if ((f = fopen(src, "re"))) {
                while (fgets(line, sizeof(line), f)) {
                        pid_t pid = (pid_t)strtol(line, NULL, 10);
                        const char *cg = kerfd__member_cg(t, pid);
                        if (cg || (cg = t->attach_cg))
                                kerfd__fence_move_back(t, pid, cg);
                }
                fclose(f);
        }
        free(t->attach_cg);
        t->attach_cg = NULL;
}

void kerfd__fence_release(kerfd_node *n, dtask *t)
{
        int r;
        (void)n;
        if (!t->fence)
                return;
        if (!t->argv) {
                attach_unfence(t);
                if (!kerf_fence_empty(t->fence)) {
                        log_warn("task %llu: attached processes left in %s (their cgroup of "
                                 "origin is unknown): cgroup kept, processes not signalled",
                                 (unsigned long long)t->rec.id, kerf_fence_path(t->fence));
                        kerf_fence_free(t->fence);
                        t->fence = NULL;
                        return;
                }
        }
        r = kerf_fence_destroy(t->fence);
        if (r == -KERF_EINUSE) {
                log_warn("task %llu: processes left in its cgroup %s; kept for the sweep",
                         (unsigned long long)t->rec.id, kerf_fence_path(t->fence));
                kerf_fence_free(t->fence);
        } else if (r < 0) {
                log_warn("task %llu: cgroup not removed: %s", (unsigned long long)t->rec.id,
                         kerf_strerror(r));
        }
        t->fence = NULL;
}

/* ---- a start that was not committed ---------------------------------------------------------
 */

static bool environ_has(pid_t pid, const char *a, const char *b)
{
        char path[64], buf[32768];
        bool fa = false, fb = !b;
        ssize_t len, off = 0;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                return false;
        while (off < (ssize_t)sizeof(buf) - 1 &&
               (len = read(fd, buf + off, sizeof(buf) - 1 - (size_t)off)) > 0)
                off += len;
        close(fd);
        buf[off] = 0;
        for (ssize_t i = 0; i < off; i += (ssize_t)strlen(buf + i) + 1) {
                fa |= !strcmp(buf + i, a);
                fb |= b && !strcmp(buf + i, b);
        }
        return fa && fb;
}

pid_t kerfd__find_started(kerfd_node *n, uint64_t task, uint64_t *ret_starttime)
{
        char want_id[64], want_sock[4200];
        struct dirent *de;
        DIR *d = opendir("/proc");
        pid_t found = 0;

        if (!d)
                return 0;
        snprintf(want_id, sizeof(want_id), "KERF_TASK_ID=%llu", (unsigned long long)task);
        snprintf(want_sock, sizeof(want_sock), "KERF_SOCKET=%s", n->cfg.socket);
        while (!found && (de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                uint64_t st;
                if (*end || pid <= 1 || pid == getpid())
                        continue;
                /* the task's leader leads its own process group */
                if (getpgid((pid_t)pid) != (pid_t)pid)
                        continue;
                if (!environ_has((pid_t)pid, want_id, n->cfg.socket[0] ? want_sock : NULL))
                        continue;
                if (kerf_exec_starttime((pid_t)pid, &st) == 0) {
                        found = (pid_t)pid;
                        *ret_starttime = st;
                }
        }
        closedir(d);
        return found;
}
