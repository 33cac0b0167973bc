/* SPDX-License-Identifier: Apache-2.0 */
/* simgroup.c - the simulated device group (backend.sim_gid): it owns <state>/sim and the files
 * in it and is a supplementary group of every task on the simulated fleet, so that the tasks of
 * every tenant reach the simulated driver as those of a real host reach /dev/nvidia*
 * (docs/SECURITY.md "The simulated device"). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node.h"
#include "simstate.h"
#include "uidcache.h"

/* <state>/sim: group rwx so a task's simulated libcuda can create the engine files it shares
 * with the other processes on a device (cuda-engine-*, in the directory of the state);
 * setgid so they belong to the group; sticky so no task removes or replaces a file it does
 * not own (the state, another tenant's engine file). Others: nothing. */
#define SIM_DIR_MODE  03770
#define SIM_FILE_MODE 0660

int kerfd_config_sim_gid_check(const kerfd_config *c, char *err, size_t errlen)
{
        const kerfd_tenant_defaults *d = &c->tenant_defaults;
        unsigned long long g = c->sim_gid;
        gid_t kg;

        if (g == 0) {
                snprintf(err, errlen, "backend.sim_gid: 0 is root's group");
                return -EINVAL;
        }
        if (kerfd__uidcache_kerf_gid(&kg) && kg == (gid_t)g) {
                snprintf(err, errlen,
                         "backend.sim_gid: %llu is group kerf (admins on kerfd's socket); "
                         "tasks must not get it",
                         g);
                return -EINVAL;
        }
        if (d->uid_base && g >= d->uid_base && g < d->uid_base + d->uid_span) {
                snprintf(err, errlen,
                         "backend.sim_gid: %llu lies in tenant_defaults' uids %llu..%llu (a "
                         "tenant's own gid); choose a gid outside it",
                         g, d->uid_base, d->uid_base + d->uid_span - 1);
                return -EINVAL;
        }
        for (unsigned i = 0; i < c->n_tenants; i++) {
                const kerfd_tenant_cfg *t = &c->tenants[i];
                if (t->uid == (long long)g || t->gid == (long long)g) {
                        snprintf(err, errlen,
                                 "backend.sim_gid: %llu is the uid or gid of tenant \"%s\"; "
                                 "choose a gid no tenant has",
                                 g, t->name);
                        return -EINVAL;
                }
        }
        return 0;
}

/* A file kerfd (or a root task of an earlier run) made in the sim dir: kerfd's uid, one link,
 * a regular file opened without following a link; its group and mode set on the open fd. */
static void share_file(int dfd, const char *dir, const char *name, gid_t g)
{
        struct stat sb;
        int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

        if (fd < 0) {
                log_warn("%s/%s: %s: not shared with the simulated device group", dir, name,
                         strerror(errno));
                return;
        }
        if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
            sb.st_nlink != 1) {
                log_warn("%s/%s: not a regular file of kerfd's uid with one link: left as it is "
                         "(tasks of other uids may not open it)",
                         dir, name);
        } else if ((sb.st_gid != g && fchown(fd, (uid_t)-1, g) < 0) ||
                   ((sb.st_mode & 07777) != SIM_FILE_MODE && fchmod(fd, SIM_FILE_MODE) < 0)) {
                log_warn("%s/%s: cannot give it to group %u mode 0660: %s", dir, name, (unsigned)g,
                         strerror(errno));
        }
        close(fd);
}

int kerfd__sim_share(kerfd_node *n)
{
        const char *dir = n->sim_dir;
        gid_t g = (gid_t)n->cfg.sim_gid;
        struct stat sb;
        struct dirent *de;
        DIR *d;
        int dfd, r = 0;

        n->sim_shared = false;
        if (geteuid() != 0) {
                /* tasks run as kerfd's own uid then (decide.c), which owns the node */
                log_info("%s: kerfd is not root: the simulated node stays its uid's alone", dir);
                return 0;
        }
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0 || fstat(dfd, &sb) < 0) {
                r = -errno;
                log_error("%s: %s", dir, strerror(errno));
                goto out;
        }
        /* never chmod what may not be ours (issue 8 S3): kerf_sim_create made it, as root */
        if (sb.st_uid != geteuid()) {
                log_error("%s: owned by uid %u, not kerfd's: left as it is; tasks of tenants "
                          "without allow_root cannot use the simulated GPUs",
                          dir, (unsigned)sb.st_uid);
                r = -EPERM;
                goto out;
        }
        /* the files first, so the directory opens to the group only once they are right */
        if (!(d = fdopendir(dup(dfd)))) {
                r = -errno;
                log_error("%s: %s", dir, strerror(errno));
                goto out;
        }
        while ((de = readdir(d)))
                if (!strcmp(de->d_name, KERF_SIM_STATE_FILE) ||
                    !strncmp(de->d_name, "cuda-engine-", 12))
                        share_file(dfd, dir, de->d_name, g);
        closedir(d);
        if ((sb.st_gid != g && fchown(dfd, (uid_t)-1, g) < 0) ||
            ((sb.st_mode & 07777) != SIM_DIR_MODE && fchmod(dfd, SIM_DIR_MODE) < 0)) {
                r = -errno;
                log_error("%s: cannot give it to group %u mode 3770: %s", dir, (unsigned)g,
                          strerror(errno));
                goto out;
        }
        n->sim_shared = true;
        log_info("%s: simulated device group %u (backend.sim_gid): every task on the simulated "
                 "fleet may use the simulated GPUs",
                 dir, (unsigned)g);
out:
        if (dfd >= 0)
                close(dfd);
        return r;
}
