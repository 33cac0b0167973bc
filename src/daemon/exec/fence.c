/* SPDX-License-Identifier: Apache-2.0 */
/* fence.c - per-task device cgroups: detection, creation, rules, kill, removal */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <kerf/errno.h>

#include "fence.h"

#define NVIDIA_MAJOR 195 /* nvidia-frontend: /dev/nvidiaN and /dev/nvidiactl */

struct kerf_fence_ctx {
        kerf_fence_mode mode;
        char *root;
        char *dev_dir;
        char *proc_devices;
};

struct kerf_fence {
        kerf_fence_ctx *ctx;
        uint64_t task_id;
        char *path;
        int dir_fd;  /* O_DIRECTORY of the cgroup, target of the v2 attach */
        int prog_fd; /* v2 program we attached; -1 when re-opened */
};

static const char *const control_nodes[] = {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"};

const char *kerf_fence_mode_name(kerf_fence_mode m)
{
        switch (m) {
        case KERF_FENCE_V2:
                return "v2";
        case KERF_FENCE_V1:
                return "v1";
        default:
                return "auto";
        }
}

/* ---- small file helpers ------------------------------------------------------------------- */

static int write_str_at(int dfd, const char *file, const char *s)
{
        int fd = openat(dfd, file, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = write(fd, s, strlen(s));
        int r = n < 0 ? -errno : 0;
        close(fd);
        return r;
}

static long fs_magic(const char *path)
{
        struct statfs sf;
        return statfs(path, &sf) < 0 ? -1 : (long)sf.f_type;
}

/* Magic of the file system holding `path` or its nearest existing ancestor. */
static long fs_magic_up(const char *path)
{
        char buf[PATH_MAX];
        if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
                return -1;
        for (;;) {
                long m = fs_magic(buf);
                if (m != -1 || errno != ENOENT)
                        return m;
                char *slash = strrchr(buf, '/');
                if (!slash || slash == buf)
                        return fs_magic("/");
                *slash = '\0';
        }
}

static bool v1_devices_at(const char *path)
{
        char buf[PATH_MAX];
        if (fs_magic_up(path) != CGROUP_SUPER_MAGIC)
                return false;
        snprintf(buf, sizeof(buf), "%s", path);
        for (;;) {
                char f[PATH_MAX + 16];
                snprintf(f, sizeof(f), "%s/devices.allow", buf);
                if (access(f, W_OK) == 0)
                        return true;
                char *slash = strrchr(buf, '/');
                if (!slash || slash == buf)
                        return false;
                *slash = '\0';
        }
}

static int set_root(kerf_fence_ctx *c, kerf_fence_mode mode, const char *root)
{
        c->mode = mode;
        c->root = strdup(root);
        return c->root ? 0 : -ENOMEM;
}

static int detect(kerf_fence_ctx *c, const kerf_fence_config *cfg)
{
        bool want2 = cfg->mode != KERF_FENCE_V1, want1 = cfg->mode != KERF_FENCE_V2;

        if (cfg->cgroup_root) {
                long m = fs_magic_up(cfg->cgroup_root);
                if (want2 && m == CGROUP2_SUPER_MAGIC && kerf__fence_bpf_probe() == 0)
                        return set_root(c, KERF_FENCE_V2, cfg->cgroup_root);
                if (want1 && v1_devices_at(cfg->cgroup_root))
                        return set_root(c, KERF_FENCE_V1, cfg->cgroup_root);
                return -KERF_EUNSUPP;
        }
        bool bpf_ok = want2 && kerf__fence_bpf_probe() == 0;
        if (bpf_ok && fs_magic("/sys/fs/cgroup") == CGROUP2_SUPER_MAGIC)
                return set_root(c, KERF_FENCE_V2, "/sys/fs/cgroup/kerf");
        if (want1 && v1_devices_at("/sys/fs/cgroup/devices"))
                return set_root(c, KERF_FENCE_V1, "/sys/fs/cgroup/devices/kerf");
        if (bpf_ok && fs_magic("/sys/fs/cgroup/unified") == CGROUP2_SUPER_MAGIC)
                return set_root(c, KERF_FENCE_V2, "/sys/fs/cgroup/unified/kerf");
        return -KERF_EUNSUPP;
}

int kerf_fence_ctx_new(const kerf_fence_config *cfg, kerf_fence_ctx **ret)
{
        kerf_fence_ctx *c;
        int r;

        if (!cfg || !ret || (unsigned)cfg->mode > KERF_FENCE_V1 ||
            (cfg->cgroup_root && cfg->cgroup_root[0] != '/') ||
            (cfg->dev_dir && cfg->dev_dir[0] != '/'))
                return -EINVAL;
        if (geteuid() != 0)
                return -EPERM;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->dev_dir = strdup(cfg->dev_dir ? cfg->dev_dir : "/dev");
        c->proc_devices = strdup(cfg->proc_devices ? cfg->proc_devices : "/proc/devices");
        r = c->dev_dir && c->proc_devices ? detect(c, cfg) : -ENOMEM;
        if (r == 0 && mkdir(c->root, 0755) < 0 && errno != EEXIST)
                r = -errno;
        if (r < 0) {
                kerf_fence_ctx_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

kerf_fence_ctx *kerf_fence_ctx_free(kerf_fence_ctx *c)
{
        if (c) {
                free(c->root);
                free(c->dev_dir);
                free(c->proc_devices);
                free(c);
        }
        return NULL;
}

kerf_fence_mode kerf_fence_ctx_mode(const kerf_fence_ctx *c)
{
        return c ? c->mode : KERF_FENCE_AUTO;
}

const char *kerf_fence_ctx_root(const kerf_fence_ctx *c)
{
        return c ? c->root : NULL;
}

/* ---- device numbers ----------------------------------------------------------------------- */

struct devset {
        uint32_t majors[KERF__FENCE_MAX_MAJORS];
        size_t n_majors;
        uint32_t allow[KERF__FENCE_MAX_DEVICES][2];
        size_t n_allow;
        uint32_t others[256]; /* non-NVIDIA char majors of /proc/devices (v1 allow list) */
        size_t n_others;
};

static void add_major(struct devset *d, uint32_t m)
{
        for (size_t i = 0; i < d->n_majors; i++)
                if (d->majors[i] == m)
                        return;
        if (d->n_majors < KERF__FENCE_MAX_MAJORS)
                d->majors[d->n_majors++] = m;
}

static bool is_nvidia_major(const struct devset *d, uint32_t m)
{
        for (size_t i = 0; i < d->n_majors; i++)
                if (d->majors[i] == m)
                        return true;
        return false;
}

/* NVIDIA majors: 195, /proc/devices char entries named nvidia*, and the majors of nvidia*
 * nodes in the dev dir and its nvidia-caps/ (covers test nodes and renamed drivers). */
static void scan_majors(const kerf_fence_ctx *c, struct devset *d)
{
        char line[256], path[PATH_MAX];
        FILE *f;

        add_major(d, NVIDIA_MAJOR);
        f = fopen(c->proc_devices, "re");
        if (f) {
                bool chr = false;
                while (fgets(line, sizeof(line), f)) {
                        unsigned m;
                        char name[128];
                        if (strncmp(line, "Character devices:", 18) == 0)
                                chr = true;
                        else if (strncmp(line, "Block devices:", 14) == 0)
                                chr = false;
                        else if (chr && sscanf(line, "%u %127s", &m, name) == 2 &&
                                 strncmp(name, "nvidia", 6) == 0)
                                add_major(d, m);
                }
                fclose(f);
        }
        const char *dirs[] = {"", "/nvidia-caps"};
        for (size_t k = 0; k < 2; k++) {
                snprintf(path, sizeof(path), "%s%s", c->dev_dir, dirs[k]);
                DIR *dir = opendir(path);
                struct dirent *de;
                while (dir && (de = readdir(dir))) {
                        struct stat st;
                        if (strncmp(de->d_name, "nvidia", 6) != 0 ||
                            fstatat(dirfd(dir), de->d_name, &st, 0) < 0 || !S_ISCHR(st.st_mode))
                                continue;
                        add_major(d, major(st.st_rdev));
                }
                if (dir)
                        closedir(dir);
        }
        /* The rest of the character majors, for v1's deny-all-then-allow. */
        f = fopen(c->proc_devices, "re");
        if (f) {
                bool chr = false;
                while (fgets(line, sizeof(line), f)) {
                        unsigned m;
                        if (strncmp(line, "Character devices:", 18) == 0)
                                chr = true;
                        else if (strncmp(line, "Block devices:", 14) == 0)
                                chr = false;
                        else if (chr && sscanf(line, "%u", &m) == 1 && !is_nvidia_major(d, m) &&
                                 d->n_others < 256 &&
                                 (d->n_others == 0 || d->others[d->n_others - 1] != m))
                                d->others[d->n_others++] = m;
                }
                fclose(f);
        }
}

static bool safe_rel(const char *p)
{
        if (!p || !*p || p[0] == '/' || strlen(p) > 200)
                return false;
        for (const char *s = p; *s; s++)
                if (!isalnum((unsigned char)*s) && !strchr("-_./", *s))
                        return false;
        return strstr(p, "..") == NULL;
}

/* Adds the node `rel` under the dev dir; ENOENT is returned for the caller to judge. */
static int add_node(const kerf_fence_ctx *c, struct devset *d, const char *rel)
{
        char path[PATH_MAX];
        struct stat st;

        if (snprintf(path, sizeof(path), "%s/%s", c->dev_dir, rel) >= (int)sizeof(path))
                return -ENAMETOOLONG;
        if (stat(path, &st) < 0)
                return -errno;
        if (!S_ISCHR(st.st_mode))
                return -ENODEV;
        if (d->n_allow >= KERF__FENCE_MAX_DEVICES)
                return -E2BIG;
        d->allow[d->n_allow][0] = major(st.st_rdev);
        d->allow[d->n_allow][1] = minor(st.st_rdev);
        d->n_allow++;
        add_major(d, major(st.st_rdev));
        return 0;
}

/* ---- rules -------------------------------------------------------------------------------- */

static int rules_v1(kerf_fence *f, const struct devset *d)
{
        char rule[64];
        int r = write_str_at(f->dir_fd, "devices.deny", "a");
        if (!r)
                r = write_str_at(f->dir_fd, "devices.allow", "c *:* m");
        if (!r)
                r = write_str_at(f->dir_fd, "devices.allow", "b *:* rwm");
        for (size_t i = 0; !r && i < d->n_others; i++) {
                snprintf(rule, sizeof(rule), "c %u:* rwm", d->others[i]);
                r = write_str_at(f->dir_fd, "devices.allow", rule);
        }
        for (size_t i = 0; !r && i < d->n_allow; i++) {
                snprintf(rule, sizeof(rule), "c %u:%u rwm", d->allow[i][0], d->allow[i][1]);
                r = write_str_at(f->dir_fd, "devices.allow", rule);
        }
        return r;
}

static int rules_v2(kerf_fence *f, const struct devset *d)
{
        struct bpf_insn insn[KERF__FENCE_MAX_INSNS];
        int n = kerf__fence_bpf_build(d->majors, d->n_majors, (const uint32_t(*)[2])d->allow,
                                      d->n_allow, insn, KERF__FENCE_MAX_INSNS);
        if (n < 0)
                return n;
        int fd = kerf__fence_bpf_load(insn, (size_t)n);
        if (fd < 0)
                return fd;
        int r = kerf__fence_bpf_attach(f->dir_fd, fd);
        if (r < 0) {
                close(fd);
                return r;
        }
        f->prog_fd = fd;
        return 0;
}

/* ---- fences ------------------------------------------------------------------------------- */

static kerf_fence *fence_alloc(kerf_fence_ctx *c, uint64_t task_id)
{
        kerf_fence *f = calloc(1, sizeof(*f));
        if (!f)
                return NULL;
        f->ctx = c;
        f->task_id = task_id;
        f->dir_fd = -1;
        f->prog_fd = -1;
        if (asprintf(&f->path, "%s/task-%" PRIu64, c->root, task_id) < 0) {
                free(f);
                return NULL;
        }
        return f;
}

kerf_fence *kerf_fence_free(kerf_fence *f)
{
        if (f) {
                if (f->prog_fd >= 0)
                        close(f->prog_fd);
                if (f->dir_fd >= 0)
                        close(f->dir_fd);
                free(f->path);
                free(f);
        }
        return NULL;
}

int kerf_fence_new(kerf_fence_ctx *c, uint64_t task_id, const char *const *devices,
                   size_t n_devices, kerf_fence **ret)
{
        struct devset *d;
        kerf_fence *f = NULL;
        int r = 0;

        if (!c || !ret || task_id == 0 || (n_devices && !devices))
                return -EINVAL;
        if (n_devices + 3 > KERF__FENCE_MAX_DEVICES)
                return -E2BIG;
        for (size_t i = 0; i < n_devices; i++)
                if (!safe_rel(devices[i]))
                        return -EINVAL;
        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        for (size_t i = 0; !r && i < n_devices; i++)
                r = add_node(c, d, devices[i]);
        for (size_t i = 0; !r && i < 3; i++) {
                r = add_node(c, d, control_nodes[i]);
                if (r == -ENOENT)
                        r = 0; /* uvm nodes appear only once the module is loaded */
        }
        if (r < 0)
                goto out;
        scan_majors(c, d);
        f = fence_alloc(c, task_id);
        if (!f) {
                r = -ENOMEM;
                goto out;
        }
        if (mkdir(f->path, 0755) < 0) {
                /* A leftover of a crashed kerfd: start afresh if nothing runs in it. */
                if (errno != EEXIST || rmdir(f->path) < 0 || mkdir(f->path, 0755) < 0) {
                        r = errno == EBUSY ? -EEXIST : -errno;
                        goto out;
                }
        }
        f->dir_fd = open(f->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (f->dir_fd < 0) {
                r = -errno;
                rmdir(f->path);
                goto out;
        }
        r = c->mode == KERF_FENCE_V2 ? rules_v2(f, d) : rules_v1(f, d);
        if (r < 0) {
                rmdir(f->path);
                goto out;
        }
        *ret = f;
        f = NULL;
out:
        kerf_fence_free(f);
        free(d);
        return r;
}

int kerf_fence_open(kerf_fence_ctx *c, uint64_t task_id, kerf_fence **ret)
{
        if (!c || !ret || task_id == 0)
                return -EINVAL;
        kerf_fence *f = fence_alloc(c, task_id);
        if (!f)
                return -ENOMEM;
        f->dir_fd = open(f->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (f->dir_fd < 0) {
                int r = -errno;
                kerf_fence_free(f);
                return r;
        }
        *ret = f;
        return 0;
}

const char *kerf_fence_path(const kerf_fence *f)
{
        return f ? f->path : NULL;
}

uint64_t kerf_fence_task_id(const kerf_fence *f)
{
        return f ? f->task_id : 0;
}

int kerf_fence_procs_fd(const kerf_fence *f)
{
        if (!f)
                return -EINVAL;
        int fd = openat(f->dir_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int kerf_fence_add_pid(const kerf_fence *f, pid_t pid)
{
        char buf[32];

        if (!f || pid <= 0)
                return -EINVAL;
        snprintf(buf, sizeof(buf), "%d\n", (int)pid);
        return write_str_at(f->dir_fd, "cgroup.procs", buf);
}

/* Calls fn(pid, arg) for each pid of the cgroup that is not a zombie; returns the count. */
static int for_each_proc(const kerf_fence *f, int (*fn)(pid_t, void *), void *arg)
{
        int fd = openat(f->dir_fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        FILE *fp = fdopen(fd, "r");
        if (!fp) {
                close(fd);
                return -ENOMEM;
        }
        int n = 0, pid;
        while (fscanf(fp, "%d", &pid) == 1) {
                char path[64], buf[512];
                snprintf(path, sizeof(path), "/proc/%d/stat", pid);
                int sfd = open(path, O_RDONLY | O_CLOEXEC);
                if (sfd < 0)
                        continue;
                ssize_t len = read(sfd, buf, sizeof(buf) - 1);
                close(sfd);
                if (len <= 0)
                        continue;
                buf[len] = '\0';
                char *p = strrchr(buf, ')');
                if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
                        continue;
                n++;
                if (fn && fn(pid, arg) < 0)
                        break;
        }
        fclose(fp);
        return n;
}

static int kill_one(pid_t pid, void *arg)
{
        kill(pid, *(int *)arg);
        return 0;
}

int kerf_fence_kill(const kerf_fence *f, int sig)
{
        if (!f || sig <= 0)
                return -EINVAL;
        int n = for_each_proc(f, NULL, NULL);
        if (n <= 0)
                return n;
        /* cgroup.kill (5.14+) also catches processes forking while we iterate. */
        if (sig == SIGKILL && f->ctx->mode == KERF_FENCE_V2 &&
            write_str_at(f->dir_fd, "cgroup.kill", "1") == 0)
                return n;
        return for_each_proc(f, kill_one, &sig);
}

bool kerf_fence_empty(const kerf_fence *f)
{
        return !f || for_each_proc(f, NULL, NULL) <= 0;
}

int kerf_fence_destroy(kerf_fence *f)
{
        if (!f)
                return 0;
        if (!kerf_fence_empty(f)) {
                kerf_fence_kill(f, SIGKILL);
                return -KERF_EINUSE;
        }
        if (f->prog_fd >= 0)
                kerf__fence_bpf_detach(f->dir_fd, f->prog_fd);
        int r = rmdir(f->path) < 0 && errno != ENOENT ? -errno : 0;
        if (r == -EBUSY)
                return -KERF_EINUSE; /* exiting processes still charged: retry */
        kerf_fence_free(f);
        return r;
}

int kerf_fence_sweep(kerf_fence_ctx *c, const uint64_t *keep, size_t n_keep)
{
        if (!c || (n_keep && !keep))
                return -EINVAL;
        DIR *dir = opendir(c->root);
        if (!dir)
                return -errno;
        int removed = 0;
        struct dirent *de;
        while ((de = readdir(dir))) {
                uint64_t id;
                char tail;
                if (sscanf(de->d_name, "task-%" SCNu64 "%c", &id, &tail) != 1)
                        continue;
                bool kept = false;
                for (size_t i = 0; i < n_keep && !kept; i++)
                        kept = keep[i] == id;
                kerf_fence *f;
                if (kept || kerf_fence_open(c, id, &f) < 0)
                        continue;
                if (kerf_fence_destroy(f) == 0)
                        removed++;
                else
                        kerf_fence_free(f);
        }
        closedir(dir);
        return removed;
}

int kerf_fence_mig_cap_minors(const char *path, unsigned gpu_minor, unsigned gi, unsigned ci,
                              unsigned *ret_gi_minor, unsigned *ret_ci_minor)
{
        char want_gi[64], want_ci[64], name[128], line[256];
        bool have_gi = false, have_ci = false;
        unsigned v, gi_m = 0, ci_m = 0;

        if (!ret_gi_minor || !ret_ci_minor)
                return -EINVAL;
        FILE *fp = fopen(path ? path : "/proc/driver/nvidia-caps/mig-minors", "re");
        if (!fp)
                return -errno;
        snprintf(want_gi, sizeof(want_gi), "gpu%u/gi%u/access", gpu_minor, gi);
        snprintf(want_ci, sizeof(want_ci), "gpu%u/gi%u/ci%u/access", gpu_minor, gi, ci);
        while (fgets(line, sizeof(line), fp)) {
                if (sscanf(line, "%127s %u", name, &v) != 2)
                        continue;
                if (strcmp(name, want_gi) == 0) {
                        gi_m = v;
                        have_gi = true;
                } else if (strcmp(name, want_ci) == 0) {
                        ci_m = v;
                        have_ci = true;
                }
        }
        fclose(fp);
        if (!have_gi || !have_ci)
                return -ENOENT;
        *ret_gi_minor = gi_m;
        *ret_ci_minor = ci_m;
        return 0;
}
