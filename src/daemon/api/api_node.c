/* SPDX-License-Identifier: Apache-2.0 */
/* api_node.c - the node's facts for Slurm (GET /v1/node) and, on the simulated fleet, the
 * character devices a real host has, so that a real slurmd accepts the generated gres.conf */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "api.h"
#include "node.h"

#define NV_MAJOR       195 /* /dev/nvidiaN and /dev/nvidiactl: fixed by the NVIDIA driver */
#define NVCTL_MINOR    255
#define SIM_CAPS_MAJOR 509 /* the simulator's nvidia-caps major (dynamic on real hosts) */
#define GI_IDS         15  /* GPU instance ids 0..14 */
#define CI_IDS         8   /* compute instance ids 0..7 */
#define CAP_CONFIG     1
#define CAP_MONITOR    2
#define MAX_UNITS      1024

/* The minor of a MIG access capability as the NVIDIA driver numbers them in
 * /proc/driver/nvidia-caps/mig-minors: config 1, monitor 2, then per GPU minor g and GPU
 * instance i: "gpu<g>/gi<i>/access" = 3 + g*135 + i*9 and its compute instances c at + 1 + c.
 * ci < 0 asks for the GI's own cap. The simulator uses this layout; a real host's file wins. */
static unsigned cap_minor_layout(unsigned g, int gi, int ci)
{
        return 3u + g * (GI_IDS * (1 + CI_IDS)) + (unsigned)gi * (1 + CI_IDS) +
               (ci < 0 ? 0u : 1u + (unsigned)ci);
}

/* A real host: the minor from the driver's table, or the layout when it cannot be read. */
static unsigned cap_minor(const kerfd_node *n, unsigned g, int gi, int ci)
{
        char want[96], line[160];
        unsigned m, ret = cap_minor_layout(g, gi, ci);
        FILE *f;
        if (n->simulated || !(f = fopen("/proc/driver/nvidia-caps/mig-minors", "re")))
                return ret;
        if (ci < 0)
                snprintf(want, sizeof(want), "gpu%u/gi%d/access", g, gi);
        else
                snprintf(want, sizeof(want), "gpu%u/gi%d/ci%d/access", g, gi, ci);
        while (fgets(line, sizeof(line), f)) {
                char name[128];
                if (sscanf(line, "%127s %u", name, &m) == 2 && !strcmp(name, want)) {
                        ret = m;
                        break;
                }
        }
        fclose(f);
        return ret;
}

/* The nvidia-caps character major from /proc/devices, 0 when absent. */
static unsigned caps_major_of_host(void)
{
        char line[128], name[64];
        unsigned maj, ret = 0;
        bool chr = false;
        FILE *f = fopen("/proc/devices", "re");
        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f)) {
                if (!strncmp(line, "Character devices:", 18))
                        chr = true;
                else if (!strncmp(line, "Block devices:", 14))
                        chr = false;
                else if (chr && sscanf(line, "%u %63s", &maj, name) == 2 &&
                         !strcmp(name, "nvidia-caps"))
                        ret = maj;
        }
        fclose(f);
        return ret;
}

/* Makes `name` in dfd a character device maj:min, mode 0666. Whatever else is there (a link,
 * a file, another device) is removed, never followed. 0 or -errno. */
static int mkdev_at(int dfd, const char *name, unsigned maj, unsigned min)
{
        struct stat st;
        dev_t want = makedev(maj, min);
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (S_ISCHR(st.st_mode) && st.st_rdev == want && (st.st_mode & 0777) == 0666)
                        return 0;
                if (unlinkat(dfd, name, 0) < 0)
                        return -errno;
        }
        if (mknodat(dfd, name, S_IFCHR | 0666, want) < 0)
                return -errno;
        /* umask may have taken bits; the dir is root's 0755, nobody swapped the node */
        if (fchmodat(dfd, name, 0666, 0) < 0)
                return -errno;
        return 0;
}

/* Opens (creating) dir `name` under dfd (-1: absolute), mode 0755, refusing a link. */
static int open_dir_at(int dfd, const char *name)
{
        struct stat st;
        int fd;
        if (mkdirat(dfd < 0 ? AT_FDCWD : dfd, name, 0755) < 0 && errno != EEXIST)
                return -errno;
        fd =
            openat(dfd < 0 ? AT_FDCWD : dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
                close(fd);
                return -EPERM; /* someone else's dir, or writable by others */
        }
        return fd;
}

static int make_devs(kerfd_node *n, const char *dir)
{
        int dfd, cfd = -1, r;
        char nm[32];
        if ((dfd = open_dir_at(-1, dir)) < 0)
                return dfd;
        for (size_t g = 0; g < n->fleet->n_gpus; g++) {
                snprintf(nm, sizeof(nm), "nvidia%u", n->fleet->gpus[g].index);
                if ((r = mkdev_at(dfd, nm, NV_MAJOR, n->fleet->gpus[g].index)) < 0)
                        goto out;
        }
        if ((r = mkdev_at(dfd, "nvidiactl", NV_MAJOR, NVCTL_MINOR)) < 0)
                goto out;
        if ((cfd = open_dir_at(dfd, "nvidia-caps")) < 0) {
                r = cfd;
                goto out;
        }
        if ((r = mkdev_at(cfd, "nvidia-cap1", SIM_CAPS_MAJOR, CAP_CONFIG)) < 0 ||
            (r = mkdev_at(cfd, "nvidia-cap2", SIM_CAPS_MAJOR, CAP_MONITOR)) < 0)
                goto out;
        /* every GI/CI cap a MIG-capable GPU can have: the layout changes at run time, the files
         * stay (a real host also keeps them) */
        for (size_t g = 0; g < n->fleet->n_gpus; g++) {
                const kerf_gpu_desc *d = &n->fleet->gpus[g];
                if (!kerf_gpu_model_has_mig(d->model))
                        continue;
                for (int gi = 0; gi < GI_IDS; gi++)
                        for (int ci = -1; ci < CI_IDS; ci++) {
                                unsigned m = cap_minor_layout(d->index, gi, ci);
                                snprintf(nm, sizeof(nm), "nvidia-cap%u", m);
                                if ((r = mkdev_at(cfd, nm, SIM_CAPS_MAJOR, m)) < 0)
                                        goto out;
                        }
        }
        r = 0;
out:
        if (cfd >= 0)
                close(cfd);
        close(dfd);
        return r;
}

void kerfd__node_devs(kerfd_node *n)
{
        char host[64] = "";
        if (n->cfg.node_name[0]) {
                snprintf(n->node_name, sizeof(n->node_name), "%s", n->cfg.node_name);
        } else {
                gethostname(host, sizeof(host) - 1);
                snprintf(n->node_name, sizeof(n->node_name), "%s",
                         kerf_name_ok(host) ? host : "node0");
        }
        if (!n->simulated) {
                snprintf(n->dev_dir, sizeof(n->dev_dir), "/dev");
                n->caps_major = caps_major_of_host();
                return;
        }
        n->dev_dir[0] = '\0';
        if (geteuid() != 0) {
                log_info("not root: no simulated device files (%s/dev); kerf slurm gres-conf "
                         "names none",
                         n->cfg.state_dir);
                return;
        }
        char dir[4400];
        snprintf(dir, sizeof(dir), "%s/dev", n->cfg.state_dir);
        int r = make_devs(n, dir);
        if (r < 0) {
                log_warn("simulated device files in %s not created: %s", dir, strerror(-r));
                return;
        }
        snprintf(n->dev_dir, sizeof(n->dev_dir), "%s", dir);
        n->caps_major = SIM_CAPS_MAJOR;
        log_info("simulated device files in %s (nvidiaN %u:N, nvidia-caps %u:M)", dir, NV_MAJOR,
                 SIM_CAPS_MAJOR);
}

static json_t *cap_json(const kerfd_node *n, unsigned minor)
{
        char p[4480];
        if (!n->dev_dir[0])
                return json_null();
        snprintf(p, sizeof(p), "%s/nvidia-caps/nvidia-cap%u", n->dev_dir, minor);
        return json_string(p);
}

/* Every live MIG instance with the files Slurm needs for it: the parent GPU's device, the GI
 * access cap and the CI access cap. */
static json_t *mig_files(kerfd_node *n)
{
        static kerf_unit_info us[MAX_UNITS];
        size_t nu = kerf_sched_unit_list(n->sched, -1, us, MAX_UNITS);
        json_t *a = json_array();
        for (size_t i = 0; i < nu && i < MAX_UNITS; i++) {
                const dunit *m;
                unsigned minor;
                if (us[i].kind != KERF_UNIT_MIG)
                        continue;
                m = kerf_u64map_get(&n->migs, us[i].id);
                minor = us[i].gpu < n->fleet->n_gpus ? n->fleet->gpus[us[i].gpu].index : us[i].gpu;
                if (!m || m->mig_gi < 0 || m->mig_ci < 0) {
                        /* bookkept but not on the device (no NVML): no caps to name */
                        json_array_append_new(
                            a, json_pack("{s:I, s:i, s:s, s:n, s:n, s:n, s:n}", "unit",
                                         (json_int_t)us[i].id, "gpu", (int)us[i].gpu, "profile",
                                         us[i].mig_profile_name, "gi", "ci", "gi_cap", "ci_cap"));
                        continue;
                }
                json_array_append_new(
                    a,
                    json_pack("{s:I, s:i, s:s, s:s, s:i, s:i, s:o, s:o}", "unit",
                              (json_int_t)us[i].id, "gpu", (int)us[i].gpu, "profile",
                              us[i].mig_profile_name, "uuid", m->mig_uuid, "gi", m->mig_gi, "ci",
                              m->mig_ci, "gi_cap", cap_json(n, cap_minor(n, minor, m->mig_gi, -1)),
                              "ci_cap", cap_json(n, cap_minor(n, minor, m->mig_gi, m->mig_ci))));
        }
        return a;
}

void kerfd_api_node(kreq *r)
{
        kerfd_node *n = r->node;
        char host[256] = "";
        struct sysinfo si;
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        uint64_t mem = 0;
        gethostname(host, sizeof(host) - 1);
        if (sysinfo(&si) == 0)
                mem = (uint64_t)si.totalram * si.mem_unit;
        /* CPUs and memory are the host's, also on the simulated fleet: a slurmd on this host
         * measures them, and drains a node whose slurm.conf claims more */
        kreq_json(r, 200,
                  json_pack("{s:s, s:s, s:I, s:I, s:{s:o, s:i, s:i, s:i}, s:o}", "name",
                            n->node_name, "hostname", host, "cpus",
                            (json_int_t)(cpus > 0 ? cpus : 1), "memory", (json_int_t)mem, "dev",
                            "dir", n->dev_dir[0] ? json_string(n->dev_dir) : json_null(),
                            "gpu_major", NV_MAJOR, "ctl_minor", NVCTL_MINOR, "caps_major",
                            (int)n->caps_major, "mig", mig_files(n)));
}
