/* SPDX-License-Identifier: Apache-2.0 */
/* member.c - the processes that joined an attached task (docs/STATE.md "Members of attached
 * tasks"), kept so that a restarted kerfd still knows them */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* A member joins or leaves a few times per job at most: statements prepared per call. */

int kerf_store_member_add(kerf_store *s, const kerf_store_member *m)
{
        sqlite3_stmt *st;
        int r;

        if (!s || !m || !m->task || m->task > (uint64_t)INT64_MAX || m->pid <= 0)
                return -EINVAL;
        KERF__FAILPOINT(s, "member_add");
        /* "joined" orders the members: one more than the task's last */
        if ((r = kerf__prep(s,
                            "INSERT INTO task_members (task, pid, proc_start, joined) VALUES"
                            " (?1, ?2, ?3, (SELECT IFNULL(MAX(joined), 0) + 1 FROM task_members"
                            " WHERE task = ?1))",
                            &st)) < 0)
                return r;
        sqlite3_bind_int64(st, 1, (sqlite3_int64)m->task);
        sqlite3_bind_int64(st, 2, m->pid);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)m->proc_start);
        r = kerf__exec_stmt(st);
        sqlite3_finalize(st);
        return r;
}

int kerf_store_member_delete(kerf_store *s, uint64_t task, int64_t pid)
{
        sqlite3_stmt *st;
        int r;

        if (!s || !task || task > (uint64_t)INT64_MAX || pid < 0)
                return -EINVAL;
        KERF__FAILPOINT(s, "member_delete");
        if ((r = kerf__prep(s, "DELETE FROM task_members WHERE task = ?1 AND (?2 = 0 OR pid = ?2)",
                            &st)) < 0)
                return r;
        sqlite3_bind_int64(st, 1, (sqlite3_int64)task);
        sqlite3_bind_int64(st, 2, pid);
        r = kerf__exec_stmt(st);
        sqlite3_finalize(st);
        return r;
}

int kerf_store_member_list(kerf_store *s, uint64_t task, kerf_store_member **ret, size_t *ret_n)
{
        kerf_store_member *arr = NULL;
        size_t n = 0;
        sqlite3_stmt *st;
        int rc, r;

        if (!s || !task || task > (uint64_t)INT64_MAX || !ret || !ret_n)
                return -EINVAL;
        if ((r = kerf__prep(s,
                            "SELECT pid, proc_start FROM task_members WHERE task = ?1"
                            " ORDER BY joined",
                            &st)) < 0)
                return r;
        sqlite3_bind_int64(st, 1, (sqlite3_int64)task);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                kerf_store_member *na = realloc(arr, (n + 1) * sizeof(*na));
                if (!na) {
                        free(arr);
                        sqlite3_finalize(st);
                        return -ENOMEM;
                }
                arr = na;
                arr[n].task = task;
                arr[n].pid = sqlite3_column_int64(st, 0);
                arr[n].proc_start = (uint64_t)sqlite3_column_int64(st, 1);
                n++;
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_DONE) {
                free(arr);
                return kerf__sqlerr(rc);
        }
        *ret = arr;
        *ret_n = n;
        return 0;
}
