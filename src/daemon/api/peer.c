/* SPDX-License-Identifier: Apache-2.0 */
/* peer.c - who a task runs as, who is calling, and which processes a caller owns
 * (docs/SECURITY.md "Task identity", "Attach"; docs/DAEMON.md "Identity") */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node.h"
#include "uidcache.h"
#include "kerf/errno.h"

/* ---- task identity ------------------------------------------------------------------------ */

void kerfd_tenant_cfg_init(kerfd_tenant_cfg *t)
{
        kerf_tenant_spec spec;

        memset(t, 0, sizeof(*t));
        kerf_tenant_spec_init(&spec, "");
        memcpy(t->nominal, spec.nominal, sizeof(t->nominal));
        memcpy(t->borrow_limit, spec.borrow_limit, sizeof(t->borrow_limit));
        memcpy(t->lend_limit, spec.lend_limit, sizeof(t->lend_limit));
        t->weight = 1;
        t->uid = t->gid = -1;
        t->max_priority = KERFD_INHERIT;
        t->max_tier = -1;
        t->max_pending = -1;
}

const char *kerfd_uid_privileged(long long uid, char *buf, size_t len)
{
        char name[64];

        buf[0] = '\0';
        if (uid < 0)
                return buf;
        if (uid == 0) {
                snprintf(buf, len, "uid 0 is root");
                return buf;
        }
        if ((uid_t)uid == geteuid()) {
                /* kerfd's own uid is an admin on its socket; when kerfd is not root it is also
                 * the only uid it can run tasks as (docs/SECURITY.md "Task identity") */
                if (geteuid() == 0)
                        snprintf(buf, len, "uid %lld is kerfd's own uid", uid);
                return buf;
        }
        /* from the cache: callers hold n->mu (uidcache.c; the uid was warmed at config load,
         * tenant creation or before the lock for run_as) */
        if (kerfd__uid_admin(uid, -1, false, name, sizeof(name)))
                snprintf(buf, len, "uid %lld (%s) is an admin on kerfd's socket (group kerf)", uid,
                         name);
        return buf;
}

/* FNV-1a of the name: the same tenant gets the same identity on every node and restart. */
static uint32_t name_hash(const char *s)
{
        uint32_t h = 2166136261u;
        for (; *s; s++) {
                h ^= (unsigned char)*s;
                h *= 16777619u;
        }
        return h;
}

long long kerfd__tenant_dynamic_uid(const kerfd_config *cfg, const char *name)
{
        const kerfd_tenant_defaults *d = &cfg->tenant_defaults;
        if (!d->uid_base || !d->uid_span)
                return -1;
        return (long long)(d->uid_base + name_hash(name) % d->uid_span);
}

int kerfd__task_identity(kerfd_node *n, const ktenant *kt, long long *ret_uid, long long *ret_gid,
                         char *err, size_t errlen)
{
        const kerfd_tenant_cfg *c = &kt->cfg;
        char why[160];
        long long uid;

        if (c->uid >= 0) {
                if (!c->allow_root && !kerfd_uid_privileged(c->uid, why, sizeof(why))[0] &&
                    c->gid == 0)
                        snprintf(why, sizeof(why), "gid 0 is root's group");
                if (!c->allow_root && why[0]) {
                        snprintf(err, errlen,
                                 "tenant %s: %s; its tasks do not run as an admin (allow_root "
                                 "is not set for it in kerfd's config file)",
                                 c->name, why);
                        return -EPERM;
                }
                *ret_uid = c->uid;
                *ret_gid = c->gid >= 0 ? c->gid : c->uid;
                return 0;
        }
        if (c->allow_root || geteuid() != 0) {
                /* kerfd's own uid: root only by the operator's choice (allow_root); a kerfd that
                 * is not root cannot switch, and its tasks are never admin by the peer check */
                *ret_uid = *ret_gid = -1;
                return 0;
        }
        uid = kerfd__tenant_dynamic_uid(&n->cfg, c->name);
        if (uid < 0) {
                snprintf(err, errlen,
                         "tenant %s has no uid and tenant_defaults.uid_base is 0: kerfd does "
                         "not run its tasks (give the tenant a uid)",
                         c->name);
                return -EPERM;
        }
        if (kerfd__tenant_identity_check(n, c, err, errlen) < 0)
                return -EPERM;
        *ret_uid = *ret_gid = uid;
        return 0;
}

/* The uid tenant `c` runs as for the collision check (-1: kerfd's own, or none). */
static long long runs_as(kerfd_node *n, const kerfd_tenant_cfg *c)
{
        if (c->uid >= 0)
                return c->uid;
        if (c->allow_root || geteuid() != 0)
                return -1;
        return kerfd__tenant_dynamic_uid(&n->cfg, c->name);
}

int kerfd__tenant_identity_check(kerfd_node *n, const kerfd_tenant_cfg *c, char *err, size_t errlen)
{
        long long mine = runs_as(n, c);

        if (mine < 0 || c->uid >= 0)
                return 0; /* several tenants may share a configured uid: the operator's choice */
        for (unsigned i = 0; i < n->n_tenants; i++) {
                const kerfd_tenant_cfg *o = &n->tenants[i].cfg;
                if (strcmp(o->name, c->name) != 0 && runs_as(n, o) == mine) {
                        snprintf(err, errlen,
                                 "tenant %s: its own identity (uid %lld, from tenant_defaults."
                                 "uid_base) is also the uid of tenant %s; give one of them a "
                                 "uid",
                                 c->name, mine, o->name);
                        return -EEXIST;
                }
        }
        return 0;
}

/* ---- peers that are tasks ----------------------------------------------------------------- */

static bool read_stat(pid_t pid, pid_t *ppid, pid_t *sid)
{
        char path[64], buf[1024], *p;
        FILE *f;
        bool ok = false;
        int pp = 0, pg = 0, s = 0;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        if (!(f = fopen(path, "re")))
                return false;
        if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')) &&
            sscanf(p + 1, " %*c %d %d %d", &pp, &pg, &s) == 3) {
                *ppid = pp;
                *sid = s;
                ok = true;
        }
        fclose(f);
        return ok;
}

/* The task id in `pid`'s cgroup path ("/.../task-<id>"), 0 when none. */
static uint64_t cgroup_task(pid_t pid)
{
        char path[64], line[4200];
        uint64_t id = 0;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
        if (!(f = fopen(path, "re")))
                return 0;
        while (!id && fgets(line, sizeof(line), f)) {
                char *p = strstr(line, "/task-");
                if (p)
                        id = strtoull(p + 6, NULL, 10);
        }
        fclose(f);
        return id;
}

void kerfd__peer_chain(pid_t pid, kerfd_peer_chain *c)
{
        pid_t cur = pid;

        c->cgroup_task = 0;
        c->n = 0;
        if (pid <= 1 || pid == getpid())
                return;
        /* fenced: the device cgroup names the task, whatever the process did since */
        c->cgroup_task = cgroup_task(pid);
        /* the executor makes each task the leader of its own session: the peer, one of its
         * ancestors, or the session of one of them is a task's leader. A process that left its
         * session and was re-parented away is not found (docs/SECURITY.md) */
        for (int depth = 0; depth < 64 && cur > 1 && cur != getpid(); depth++) {
                pid_t ppid, sid;
                c->pid[c->n++] = cur;
                if (!read_stat(cur, &ppid, &sid))
                        break;
                if (sid > 1 && sid != cur)
                        c->pid[c->n++] = sid;
                cur = ppid;
        }
}

uint64_t kerfd__peer_chain_task(kerfd_node *n, const kerfd_peer_chain *c)
{
        if (n->fence_ctx && c->cgroup_task && kerfd__live(n, c->cgroup_task))
                return c->cgroup_task;
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;
        while (kerf_u64map_next(&n->live, &it, NULL, &val)) {
                const dtask *t = val;
                for (unsigned k = 0; t->argv && t->rec.pid > 1 && k < c->n; k++)
                        if (c->pid[k] == (pid_t)t->rec.pid)
                                return t->rec.id;
        }
        return 0;
}

uint64_t kerfd__peer_task(kerfd_node *n, pid_t pid)
{
        kerfd_peer_chain c;

        kerfd__peer_chain(pid, &c);
        return kerfd__peer_chain_task(n, &c);
}

/* ---- attach: whose process ---------------------------------------------------------------- */

/* The real uid of `pid` (the first field of "Uid:" in /proc/PID/status), -1 when gone. */
static long long real_uid(pid_t pid)
{
        char path[64], line[256];
        long long ruid = -1;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        if (!(f = fopen(path, "re")))
                return -1;
        while (fgets(line, sizeof(line), f))
                if (!strncmp(line, "Uid:", 4)) {
                        ruid = strtoll(line + 4, NULL, 10);
                        break;
                }
        fclose(f);
        return ruid;
}

int kerfd__attach_check(kerfd_node *n, pid_t pid, bool has_cred, uid_t peer_uid, const char *tenant,
                        char *msg, size_t msglen)
{
        ktenant *kt = kerfd__tenant_find(n, tenant);
        long long ruid, want, gid;
        uint64_t task;

        if (pid <= 1 || pid == getpid() || pid == getppid()) {
                snprintf(msg, msglen, "pid %d: not a process a task may attach (%s)", (int)pid,
                         pid == 1   ? "init"
                         : pid <= 1 ? "invalid"
                                    : "kerfd itself or its parent");
                return -EPERM;
        }
        if ((ruid = real_uid(pid)) < 0) {
                snprintf(msg, msglen, "pid: no process %d on this node", (int)pid);
                return -ESRCH;
        }
        /* whose it must be: the peer's uid on the socket; over TCP the uid the tenant's own
         * tasks run as (kerfd's own when that is -1) */
        if (has_cred) {
                want = (long long)peer_uid;
        } else {
                if (!kt || kerfd__task_identity(n, kt, &want, &gid, msg, msglen) < 0)
                        return -EPERM;
                if (want < 0)
                        want = (long long)geteuid();
        }
        if (ruid != want) {
                snprintf(msg, msglen,
                         "pid %d: its real uid %lld is not the caller's (%s %lld); attach only a "
                         "process of your own",
                         (int)pid, ruid, has_cred ? "peer uid" : "tenant uid", want);
                return -EPERM;
        }
        /* attached or joined already: a conflict (also when fenced, where its cgroup would
         * name the task below) */
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;
        while (kerf_u64map_next(&n->live, &it, NULL, &val)) {
                const dtask *t = val;
                if (!t->argv && t->rec.pid == pid) {
                        snprintf(msg, msglen, "pid %d is already attached (task %llu)", (int)pid,
                                 (unsigned long long)t->rec.id);
                        return -EEXIST;
                }
        }
        if ((task = kerfd__member_task(n, pid))) {
                snprintf(msg, msglen, "pid %d has already joined task %llu", (int)pid,
                         (unsigned long long)task);
                return -EEXIST;
        }
        if ((task = kerfd__peer_task(n, pid))) {
                snprintf(msg, msglen,
                         "pid %d belongs to task %llu: a task's process is not "
                         "attached again",
                         (int)pid, (unsigned long long)task);
                return -EPERM;
        }
        return 0;
}
