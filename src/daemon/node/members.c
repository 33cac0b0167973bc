/* SPDX-License-Identifier: Apache-2.0 */
/* members.c - processes that join an attached task (POST /v1/tasks/{id}/join): one task, one
 * unit, several processes, as the tasks of one Slurm step on a node that share its GPUs
 * (docs/API.md, docs/STATE.md "Members of attached tasks") */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node.h"
#include "kerf/fields.h" /* KERF_ATTACH_MAX_PIDS */

/* /proc/PID/stat field 22 of a live process; false when it is gone. */
static bool proc_start(pid_t pid, uint64_t *ret)
{
        char buf[1024];
        const char *rest;

        return kerf__exec_read_stat(pid, buf, sizeof(buf), &rest) == 0 &&
               kerf__exec_stat_field(rest, 22, ret) == 0;
}

static void member_fini(kerfd_member *m)
{
        free(m->cg);
        m->cg = NULL;
}

/* Room for one more member; false when out of memory. */
static bool members_grow(dtask *t)
{
        if (t->n_members < t->cap_members)
                return true;
        unsigned nc = t->cap_members ? t->cap_members * 2 : 4;
        kerfd_member *na = realloc(t->members, nc * sizeof(*na));
        if (!na)
                return false;
        t->members = na;
        t->cap_members = nc;
        return true;
}

int kerfd__task_join(kerfd_node *n, dtask *t, pid_t pid, const char *actor, char *msg,
                     size_t msglen)
{
        kerf_store_member sm = {.task = t->rec.id, .pid = pid};
        kerfd_member m = {.pid = pid};
        char obj[64], why[96];
        kerfd_tx *x;
        int r;

        if (t->argv || t->state != KERF_TASK_RUNNING || t->stopping || !t->n_units ||
            t->rec.pid <= 0) {
                snprintf(msg, msglen, "task %llu is not a running attached task",
                         (unsigned long long)t->rec.id);
                return -EBUSY;
        }
        if (t->n_members >= KERF_ATTACH_MAX_PIDS) {
                snprintf(msg, msglen,
                         "task %llu has %u joined processes, the most one attached task takes "
                         "(KERF_ATTACH_MAX_PIDS)",
                         (unsigned long long)t->rec.id, (unsigned)KERF_ATTACH_MAX_PIDS);
                return -EMLINK;
        }
        if (!proc_start(pid, &m.proc_start)) {
                snprintf(msg, msglen, "pid: no process %d on this node", (int)pid);
                return -ESRCH;
        }
        if (!members_grow(t)) {
                snprintf(msg, msglen, "out of memory");
                return -ENOMEM;
        }
        if (t->fence && (r = kerfd__fence_move(n, t, pid, &m.cg, msg, msglen)) < 0)
                return r;
        /* recorded before the answer: a restarted kerfd still knows the member */
        sm.proc_start = m.proc_start;
        snprintf(obj, sizeof(obj), "task:%llu", (unsigned long long)t->rec.id);
        snprintf(why, sizeof(why), "pid %d joined (%u processes)", (int)pid, t->n_members + 2);
        x = kerfd__tx_new("task.join", t->rec.id);
        kerfd__tx_member_add(x, &sm);
        kerfd__tx_audit(x, actor, t->rec.tenant, "task.join", obj, "ok", why, t->units[0].gpu_uuid);
        if ((r = kerfd__tx_commit(n, x, false)) < 0) {
                /* nothing changed: the process goes back where it came from */
                if (m.cg)
                        kerfd__fence_move_back(t, pid, m.cg);
                member_fini(&m);
                snprintf(msg, msglen, "task %llu: the join of pid %d could not be stored",
                         (unsigned long long)t->rec.id, (int)pid);
                return r;
        }
        t->members[t->n_members++] = m;
        log_info("task %llu: pid %d joined (%u processes)%s%s", (unsigned long long)t->rec.id,
                 (int)pid, t->n_members + 1, m.cg ? "; fenced, was in " : "", m.cg ? m.cg : "");
        return 0;
}

/* Drops member i of t (it ended); its row goes too, deferred when the store cannot write. */
static void member_drop(kerfd_node *n, dtask *t, unsigned i)
{
        kerfd_tx *x = kerfd__tx_new("task.member", t->rec.id);

        log_info("task %llu: joined pid %d ended", (unsigned long long)t->rec.id,
                 (int)t->members[i].pid);
        kerfd__tx_member_delete(x, t->rec.id, t->members[i].pid);
        (void)kerfd__tx_commit(n, x, true);
        member_fini(&t->members[i]);
        memmove(&t->members[i], &t->members[i + 1], (t->n_members - i - 1) * sizeof(t->members[0]));
        t->n_members--;
}

bool kerfd__attached_alive(kerfd_node *n, dtask *t)
{
        /* the first process: as before members existed (its launcher's pid, any state) */
        bool first = kill((pid_t)t->rec.pid, 0) == 0 || errno != ESRCH;

        for (unsigned i = t->n_members; i-- > 0;)
                if (!kerf_exec_alive(t->members[i].pid, t->members[i].proc_start))
                        member_drop(n, t, i);
        return first || t->n_members > 0;
}

void kerfd__members_fence(kerfd_node *n, dtask *t)
{
        char err[256];

        for (unsigned i = 0; t->fence && i < t->n_members; i++) {
                kerfd_member *m = &t->members[i];
                char *cg = NULL;
                if (kerfd__fence_move(n, t, m->pid, &cg, err, sizeof(err)) < 0) {
                        log_warn("task %llu: joined %s", (unsigned long long)t->rec.id, err);
                        continue;
                }
                free(m->cg);
                m->cg = cg;
        }
}

uint64_t kerfd__member_task(kerfd_node *n, pid_t pid)
{
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;

        while (kerf_u64map_next(&n->live, &it, NULL, &val)) {
                const dtask *t = val;
                for (unsigned i = 0; i < t->n_members; i++)
                        if (t->members[i].pid == pid)
                                return t->rec.id;
        }
        return 0;
}

bool kerfd__task_has_pid(const dtask *t, pid_t pid, pid_t pg)
{
        if (pid <= 0)
                return false;
        if (t->rec.pid == pid || (pg > 0 && t->rec.pgid == pg))
                return true;
        for (unsigned i = 0; i < t->n_members; i++)
                if (t->members[i].pid == pid)
                        return true;
        return false;
}

void kerfd__members_recover(kerfd_node *n, dtask *t)
{
        kerf_store_member *sm = NULL;
        size_t ns = 0;

        if (kerf_store_member_list(n->store, t->rec.id, &sm, &ns) < 0) {
                log_error("store: members of task %llu: %s", (unsigned long long)t->rec.id,
                          kerf_store_errmsg(n->store));
                return;
        }
        for (size_t i = 0; i < ns; i++) {
                pid_t pid = (pid_t)sm[i].pid;
                if (kerf_exec_alive(pid, sm[i].proc_start) && members_grow(t)) {
                        /* its cgroup of origin was not kept: it stays in the fence on release
                         * (as the first process does after a restart, docs/STATE.md) */
                        t->members[t->n_members++] =
                            (kerfd_member){.pid = pid, .proc_start = sm[i].proc_start};
                        continue;
                }
                log_info("recovery: task %llu: joined pid %d is gone",
                         (unsigned long long)t->rec.id, (int)pid);
                kerfd_tx *x = kerfd__tx_new("task.member", t->rec.id);
                kerfd__tx_member_delete(x, t->rec.id, sm[i].pid);
                (void)kerfd__tx_commit(n, x, true);
        }
        free(sm);
}

json_t *kerfd__task_pids_json(const dtask *t)
{
        json_t *a = json_array();

        json_array_append_new(a, json_integer((json_int_t)t->rec.pid));
        for (unsigned i = 0; i < t->n_members; i++)
                json_array_append_new(a, json_integer((json_int_t)t->members[i].pid));
        return a;
}

const char *kerfd__member_cg(const dtask *t, pid_t pid)
{
        for (unsigned i = 0; i < t->n_members; i++)
                if (t->members[i].pid == pid)
                        return t->members[i].cg;
        return NULL;
}

void kerfd__members_free(dtask *t)
{
        for (unsigned i = 0; i < t->n_members; i++)
                member_fini(&t->members[i]);
        free(t->members);
        t->members = NULL;
        t->n_members = t->cap_members = 0;
}
