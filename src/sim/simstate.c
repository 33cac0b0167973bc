/* SPDX-License-Identifier: Apache-2.0 */
/* simstate.c - kerf-sim state file: create, open, robust lock, node/GPU queries, faults */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "kerf/errno.h"

uint64_t kerf_sim_now_us(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

const char *kerf_sim_dir_resolve(const char *dir)
{
        if (dir && *dir)
                return dir;
        dir = getenv(KERF_SIM_ENV);
        return (dir && *dir) ? dir : NULL;
}

/* ---- lock ---------------------------------------------------------------------------------- */

int kerf__sim_lock(kerf_sim *st)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += KERF_SIM_LOCK_TIMEOUT_MS / 1000;
        ts.tv_nsec += (long)(KERF_SIM_LOCK_TIMEOUT_MS % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
        }
        int rc = pthread_mutex_timedlock(&st->f->lock, &ts);
        if (rc == EOWNERDEAD) {
                /* The previous owner died mid-update. Nothing stored is a derived total, so the
                 * state stays usable; its own slots are reclaimed as a dead pid's. */
                if (pthread_mutex_consistent(&st->f->lock) != 0) {
                        pthread_mutex_unlock(&st->f->lock);
                        return -KERF_ECORRUPT;
                }
                return 0;
        }
        if (rc == ETIMEDOUT)
                return -ETIMEDOUT;
        if (rc == ENOTRECOVERABLE)
                return -KERF_ECORRUPT;
        return rc ? -rc : 0;
}

void kerf__sim_unlock(kerf_sim *st)
{
        pthread_mutex_unlock(&st->f->lock);
}

int kerf_sim_lock(kerf_sim *st)
{
        if (!st)
                return -EINVAL;
        return kerf__sim_lock(st);
}

void kerf_sim_unlock(kerf_sim *st)
{
        if (st)
                kerf__sim_unlock(st);
}

/* ---- create / open ------------------------------------------------------------------------- */

static int init_mutex(pthread_mutex_t *m)
{
        pthread_mutexattr_t a;
        int rc = pthread_mutexattr_init(&a);
        if (rc)
                return -rc;
        rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
        if (!rc)
                rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
        if (!rc)
                rc = pthread_mutex_init(m, &a);
        pthread_mutexattr_destroy(&a);
        return -rc;
}

static int write_all(int fd, const void *buf, size_t len)
{
        const char *p = buf;
        while (len) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

static int state_path(const char *dir, const char *name, char *buf, size_t len)
{
        int n = snprintf(buf, len, "%s/%s", dir, name);
        return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

int kerf_sim_create(const char *dir, const kerf_fleet *fleet, unsigned node, bool force)
{
        char path[4096], tmp[4096];
        struct sim_file *f = NULL;
        int fd = -1, rc;

        dir = kerf_sim_dir_resolve(dir);
        if (!dir || !fleet || node >= fleet->n_nodes)
                return -EINVAL;
        const kerf_node_desc *nd = &fleet->nodes[node];
        if (nd->n_gpus > KERF_SIM_MAX_GPUS)
                return -EINVAL;
        if ((rc = state_path(dir, KERF_SIM_STATE_FILE, path, sizeof(path))) < 0 ||
            (rc = state_path(dir, KERF_SIM_STATE_FILE ".tmp", tmp, sizeof(tmp))) < 0)
                return rc;
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return -errno;
        if (!force && access(path, F_OK) == 0)
                return -EEXIST;

        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        memcpy(f->magic, SIM_MAGIC, sizeof(f->magic));
        f->layout_version = SIM_LAYOUT_VERSION;
        f->file_size = (uint32_t)sizeof(*f);
        snprintf(f->node, sizeof(f->node), "%s", nd->name);
        snprintf(f->driver, sizeof(f->driver), "%s",
                 nd->driver_version[0] ? nd->driver_version : "550.54.15");
        memcpy(f->driver_initial, f->driver, sizeof(f->driver));
        f->cuda_version = nd->cuda_version > 0 ? nd->cuda_version : 12040;
        f->cuda_initial = f->cuda_version;
        f->n_gpus = nd->n_gpus;
        f->generation = 1;
        for (unsigned i = 0; i < nd->n_gpus; i++) {
                const kerf_gpu_desc *g = &fleet->gpus[nd->first_gpu + i];
                struct sim_gpu *sg = &f->gpu[i];
                if (!g->model) {
                        rc = -EINVAL;
                        goto out;
                }
                snprintf(sg->uuid, sizeof(sg->uuid), "%s", g->uuid);
                snprintf(sg->model, sizeof(sg->model), "%s", g->model->name);
                sg->numa = g->numa;
                sg->mig_enabled = sg->mig_initial =
                    g->mig_enabled && kerf_gpu_model_has_mig(g->model);
                sg->next_serial = 1;
        }
        /* The mutex is initialised in the image written to disk: a process-shared robust mutex
         * holds no addresses in glibc, so it works from any mapping of the file. */
        if ((rc = init_mutex(&f->lock)) < 0)
                goto out;

        unlink(tmp);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0660);
        if (fd < 0) {
                rc = -errno;
                goto out;
        }
        struct stat sb;
        if (fstat(fd, &sb) == 0 && (sb.st_mode & 0007))
                (void)fchmod(fd, sb.st_mode & 0770);
        if ((rc = write_all(fd, f, sizeof(*f))) < 0 || (fsync(fd) < 0 && (rc = -errno)))
                goto out;
        if (rename(tmp, path) < 0) {
                rc = -errno;
                goto out;
        }
        rc = 0;
out:
        if (fd >= 0)
                close(fd);
        if (rc < 0)
                unlink(tmp);
        free(f);
        return rc;
}

int kerf_sim_open(const char *dir, kerf_sim **ret)
{
        char path[4096];
        struct stat sb;
        kerf_sim *st = NULL;
        int fd, rc;

        dir = kerf_sim_dir_resolve(dir);
        if (!dir || !ret)
                return -EINVAL;
        if ((rc = state_path(dir, KERF_SIM_STATE_FILE, path, sizeof(path))) < 0)
                return rc;
        fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &sb) < 0) {
                rc = -errno;
                goto fail;
        }
        if (!S_ISREG(sb.st_mode) || (sb.st_mode & S_IWOTH)) {
                rc = -EPERM;
                goto fail;
        }
        if ((size_t)sb.st_size != sizeof(struct sim_file)) {
                rc = -KERF_ECORRUPT;
                goto fail;
        }
        st = calloc(1, sizeof(*st));
        if (!st || !(st->dir = strdup(dir))) {
                rc = -ENOMEM;
                goto fail;
        }
        void *m = mmap(NULL, sizeof(struct sim_file), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
                rc = -errno;
                goto fail;
        }
        st->f = m;
        close(fd);
        fd = -1;
        if (memcmp(st->f->magic, SIM_MAGIC, 8) != 0 ||
            st->f->layout_version != SIM_LAYOUT_VERSION ||
            st->f->file_size != sizeof(struct sim_file) || st->f->n_gpus > KERF_SIM_MAX_GPUS) {
                rc = -KERF_ECORRUPT;
                goto fail;
        }
        for (unsigned i = 0; i < st->f->n_gpus; i++) {
                char name[KERF_NAME_LEN];
                memcpy(name, st->f->gpu[i].model, sizeof(name));
                name[sizeof(name) - 1] = '\0';
                st->models[i] = kerf_gpu_model_find(name);
                if (!st->models[i]) {
                        rc = -KERF_ECORRUPT;
                        goto fail;
                }
        }
        *ret = st;
        return 0;
fail:
        if (fd >= 0)
                close(fd);
        kerf_sim_close(st);
        return rc;
}

kerf_sim *kerf_sim_close(kerf_sim *st)
{
        if (!st)
                return NULL;
        if (st->f)
                munmap(st->f, sizeof(struct sim_file));
        free(st->dir);
        free(st);
        return NULL;
}

const char *kerf_sim_dir(const kerf_sim *st)
{
        return st ? st->dir : NULL;
}

int kerf_sim_reset(kerf_sim *st)
{
        int rc;
        if (!st)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        struct sim_file *f = st->f;
        for (unsigned i = 0; i < f->n_gpus; i++) {
                struct sim_gpu *g = &f->gpu[i];
                g->mig_enabled = g->mig_initial;
                g->lost = 0;
                g->xid_count = 0;
                g->last_xid = 0;
                /* keep xid_seq monotonic so event sets never see a sequence go backwards */
                memset(g->xid, 0, sizeof(g->xid));
                memset(g->gi, 0, sizeof(g->gi));
        }
        for (unsigned i = 0; i < KERF_SIM_MAX_PROCS; i++)
                kerf__sim_clear_slot(&f->slot[i]);
        memcpy(f->driver, f->driver_initial, sizeof(f->driver));
        f->cuda_version = f->cuda_initial;
        f->generation++;
        kerf__sim_unlock(st);
        return 0;
}

/* ---- node and GPUs ------------------------------------------------------------------------- */

int kerf_sim_node_get(kerf_sim *st, kerf_sim_node_info *ret)
{
        int rc;
        if (!st || !ret)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        kerf_sim_node_info n;
        memset(&n, 0, sizeof(n));
        memcpy(n.name, st->f->node, sizeof(n.name) - 1);
        memcpy(n.driver, st->f->driver, sizeof(n.driver) - 1);
        n.cuda_version = st->f->cuda_version;
        n.n_gpus = st->f->n_gpus;
        n.generation = st->f->generation;
        kerf__sim_unlock(st);
        *ret = n;
        return 0;
}

unsigned kerf_sim_gpu_count(kerf_sim *st)
{
        return st ? st->f->n_gpus : 0;
}

int kerf_sim_gpu_get(kerf_sim *st, unsigned gpu, kerf_sim_gpu_info *ret)
{
        int rc;
        if (!st || !ret)
                return -EINVAL;
        if (gpu >= st->f->n_gpus)
                return -ENOENT;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        const struct sim_gpu *g = &st->f->gpu[gpu];
        kerf_sim_gpu_info i;
        memset(&i, 0, sizeof(i));
        i.index = gpu;
        memcpy(i.uuid, g->uuid, sizeof(i.uuid) - 1);
        i.model = st->models[gpu];
        i.numa = g->numa;
        i.mig_enabled = g->mig_enabled;
        i.lost = g->lost;
        i.mem_total = kerf__sim_capacity(st, gpu, -1);
        i.mem_used = kerf__sim_used(st, gpu, -1, -1, &i.n_procs);
        for (unsigned k = 0; k < KERF_SIM_MAX_GIS; k++)
                i.n_gis += g->gi[k].in_use ? 1 : 0;
        i.xid_count = g->xid_count;
        i.last_xid = g->last_xid;
        kerf__sim_unlock(st);
        *ret = i;
        return 0;
}

static bool version_ok(const char *s)
{
        size_t n = strlen(s);
        if (n == 0 || n > 31 || s[0] == '.' || s[n - 1] == '.')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
                        return false;
        return true;
}

int kerf_sim_upgrade(kerf_sim *st, const char *driver, int cuda_version, bool force)
{
        int rc;
        if (!st || !driver || !version_ok(driver) ||
            (cuda_version != 0 && (cuda_version < 1000 || cuda_version > 99990)))
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        kerf__sim_reclaim_locked(st);
        unsigned procs = 0;
        for (unsigned g = 0; g < st->f->n_gpus; g++) {
                unsigned n = 0;
                kerf__sim_used(st, g, -1, -1, &n);
                procs += n;
        }
        if (procs && !force) {
                rc = -KERF_EINUSE;
        } else {
                memset(st->f->driver, 0, sizeof(st->f->driver));
                memcpy(st->f->driver, driver, strlen(driver));
                if (cuda_version)
                        st->f->cuda_version = cuda_version;
                st->f->generation++;
                rc = 0;
        }
        kerf__sim_unlock(st);
        return rc;
}

/* ---- uuids and targets --------------------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebULL;
        x ^= x >> 31;
        return x;
}

void kerf__sim_mig_uuid(const char *gpu_uuid, unsigned gi, unsigned ci, uint64_t serial,
                        char out[KERF_SIM_MIG_UUID_LEN])
{
        uint64_t h = 0xcbf29ce484222325ULL;
        for (const char *p = gpu_uuid; *p; p++)
                h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
        uint64_t a = mix64(h ^ ((uint64_t)gi << 40) ^ ((uint64_t)ci << 32) ^ serial);
        uint64_t b = mix64(a ^ 0x6b657266ULL);
        snprintf(out, KERF_SIM_MIG_UUID_LEN, "MIG-%08x-%04x-5%03x-%04x-%012llx",
                 (unsigned)(a >> 32), (unsigned)((a >> 16) & 0xffff), (unsigned)(a & 0xfff),
                 (unsigned)(0x8000 | ((b >> 48) & 0x3fff)),
                 (unsigned long long)(b & 0xffffffffffffULL));
}

int kerf_sim_resolve(kerf_sim *st, const char *spec, kerf_sim_target *ret)
{
        int rc;
        if (!st || !spec || !ret || !*spec)
                return -EINVAL;
        if (spec[0] >= '0' && spec[0] <= '9') {
                char *end;
                errno = 0;
                unsigned long v = strtoul(spec, &end, 10);
                if (errno || *end)
                        return -EINVAL;
                if (v >= st->f->n_gpus)
                        return -ENOENT;
                *ret = (kerf_sim_target){(int)v, -1, -1};
                return 0;
        }
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        rc = -ENOENT;
        for (unsigned g = 0; g < st->f->n_gpus && rc; g++) {
                struct sim_gpu *sg = &st->f->gpu[g];
                if (strncmp(spec, sg->uuid, sizeof(sg->uuid)) == 0) {
                        *ret = (kerf_sim_target){(int)g, -1, -1};
                        rc = 0;
                        break;
                }
                for (unsigned i = 0; i < KERF_SIM_MAX_GIS && rc; i++) {
                        struct sim_gi *gi = &sg->gi[i];
                        if (!gi->in_use)
                                continue;
                        for (unsigned c = 0; c < KERF_SIM_MAX_CIS; c++) {
                                if (gi->ci[c].in_use &&
                                    strncmp(spec, gi->ci[c].uuid, KERF_SIM_MIG_UUID_LEN) == 0) {
                                        *ret = (kerf_sim_target){(int)g, (int)gi->id,
                                                                 (int)gi->ci[c].id};
                                        rc = 0;
                                        break;
                                }
                        }
                }
        }
        kerf__sim_unlock(st);
        return rc;
}

int kerf__sim_target_check(kerf_sim *st, kerf_sim_target t)
{
        if (t.gpu < 0 || (unsigned)t.gpu >= st->f->n_gpus)
                return -ENOENT;
        struct sim_gpu *g = &st->f->gpu[t.gpu];
        if (t.gi < 0)
                return t.ci < 0 ? 0 : -EINVAL;
        if (!g->mig_enabled)
                return -ENOENT;
        struct sim_gi *gi = kerf__sim_gi_find(st, (unsigned)t.gpu, (unsigned)t.gi);
        if (!gi)
                return -ENOENT;
        if (t.ci >= 0 && !kerf__sim_ci_find(gi, (unsigned)t.ci))
                return -ENOENT;
        return 0;
}

int kerf_sim_target_mem(kerf_sim *st, kerf_sim_target t, uint64_t *ret_total, uint64_t *ret_used)
{
        int rc;
        if (!st)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        if ((rc = kerf__sim_target_check(st, t)) == 0) {
                uint64_t total = kerf__sim_capacity(st, (unsigned)t.gpu, t.gi);
                uint64_t used = kerf__sim_used(st, (unsigned)t.gpu, t.gi, -1, NULL);
                if (ret_total)
                        *ret_total = total;
                if (ret_used)
                        *ret_used = used;
        }
        kerf__sim_unlock(st);
        return rc;
}

int kerf_sim_target_uuid(kerf_sim *st, kerf_sim_target t, char *buf, size_t len)
{
        int rc;
        if (!st || !buf || len < KERF_SIM_MIG_UUID_LEN)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        if ((rc = kerf__sim_target_check(st, t)) == 0) {
                struct sim_gpu *g = &st->f->gpu[t.gpu];
                if (t.gi < 0) {
                        snprintf(buf, len, "%s", g->uuid);
                } else if (t.ci < 0) {
                        rc = -EINVAL; /* a GI without a CI is not a MIG device */
                } else {
                        struct sim_gi *gi = kerf__sim_gi_find(st, (unsigned)t.gpu, (unsigned)t.gi);
                        snprintf(buf, len, "%s", kerf__sim_ci_find(gi, (unsigned)t.ci)->uuid);
                }
        }
        kerf__sim_unlock(st);
        return rc;
}

/* ---- faults -------------------------------------------------------------------------------- */

int64_t kerf_sim_xid_inject(kerf_sim *st, unsigned gpu, unsigned xid, int gi, int ci)
{
        int rc;
        if (!st || xid == 0 || xid > 999 || (gi < 0 && ci >= 0))
                return -EINVAL;
        if (gpu >= st->f->n_gpus)
                return -ENOENT;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        struct sim_gpu *g = &st->f->gpu[gpu];
        if (gi >= 0) {
                struct sim_gi *sgi =
                    g->mig_enabled ? kerf__sim_gi_find(st, gpu, (unsigned)gi) : NULL;
                if (!sgi || (ci >= 0 && !kerf__sim_ci_find(sgi, (unsigned)ci))) {
                        kerf__sim_unlock(st);
                        return -ENOENT;
                }
        }
        uint64_t seq = ++g->xid_seq;
        struct sim_xid *x = &g->xid[seq % KERF_SIM_XID_RING];
        x->seq = seq;
        x->ts_us = kerf_sim_now_us();
        x->xid = xid;
        x->gi = gi < 0 ? -1 : gi;
        x->ci = ci < 0 ? -1 : ci;
        g->xid_count++;
        g->last_xid = xid;
        st->f->generation++;
        kerf__sim_unlock(st);
        return (int64_t)seq;
}

int kerf_sim_xid_head(kerf_sim *st, unsigned gpu, uint64_t *ret_seq)
{
        int rc;
        if (!st || !ret_seq)
                return -EINVAL;
        if (gpu >= st->f->n_gpus)
                return -ENOENT;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        *ret_seq = st->f->gpu[gpu].xid_seq;
        kerf__sim_unlock(st);
        return 0;
}

int kerf_sim_xid_next(kerf_sim *st, unsigned gpu, uint64_t after_seq, kerf_sim_xid_event *ret)
{
        int rc;
        if (!st || !ret)
                return -EINVAL;
        if (gpu >= st->f->n_gpus)
                return -ENOENT;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        struct sim_gpu *g = &st->f->gpu[gpu];
        rc = -ENOENT;
        uint64_t first = after_seq + 1;
        if (g->xid_seq >= KERF_SIM_XID_RING && first <= g->xid_seq - KERF_SIM_XID_RING)
                first = g->xid_seq - KERF_SIM_XID_RING + 1; /* older ones were overwritten */
        for (uint64_t s = first; s <= g->xid_seq; s++) {
                struct sim_xid *x = &g->xid[s % KERF_SIM_XID_RING];
                if (x->seq != s)
                        continue; /* cleared by a reset */
                *ret = (kerf_sim_xid_event){x->seq, x->xid, x->gi, x->ci, x->ts_us};
                rc = 0;
                break;
        }
        kerf__sim_unlock(st);
        return rc;
}

int kerf_sim_gpu_lost(kerf_sim *st, unsigned gpu)
{
        int rc;
        if (!st)
                return -EINVAL;
        if (gpu >= st->f->n_gpus)
                return -ENOENT;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        st->f->gpu[gpu].lost = 1;
        st->f->generation++;
        kerf__sim_unlock(st);
        return 0;
}

int kerf_sim_gpu_reset(kerf_sim *st, unsigned gpu, bool force)
{
        int rc;
        if (!st)
                return -EINVAL;
        if (gpu >= st->f->n_gpus)
                return -ENOENT;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        kerf__sim_reclaim_locked(st);
        unsigned procs = 0;
        kerf__sim_used(st, gpu, -1, -1, &procs);
        if (procs && !force) {
                kerf__sim_unlock(st);
                return -KERF_EINUSE;
        }
        for (unsigned i = 0; i < KERF_SIM_MAX_PROCS; i++)
                if (st->f->slot[i].pid && st->f->slot[i].gpu == (int)gpu)
                        kerf__sim_clear_slot(&st->f->slot[i]);
        struct sim_gpu *g = &st->f->gpu[gpu];
        g->lost = 0;
        memset(g->xid, 0, sizeof(g->xid));
        g->last_xid = 0;
        st->f->generation++;
        kerf__sim_unlock(st);
        return 0;
}
