/* SPDX-License-Identifier: Apache-2.0 */
/* drain.c - GPUs an admin drained, kept across restarts (docs/STATE.md "Holds and drains") */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Drains change a few times a day at most: prepared per call (kerf__prep), not kept with
 * kerf__sql. */

int kerf_store_drain_set(kerf_store *s, const kerf_store_drain *d)
{
        sqlite3_stmt *st;
        int r;

        if (!s || !d || !d->gpu_uuid[0] ||
            strnlen(d->gpu_uuid, sizeof(d->gpu_uuid)) == sizeof(d->gpu_uuid) ||
            strnlen(d->actor, sizeof(d->actor)) == sizeof(d->actor) ||
            strnlen(d->reason, sizeof(d->reason)) == sizeof(d->reason))
                return -EINVAL;
        if ((r = kerf__prep(s,
                            "INSERT OR REPLACE INTO gpu_drains (gpu_uuid, actor, reason, since_ms)"
                            " VALUES (?1, ?2, ?3, ?4)",
                            &st)) < 0)
                return r;
        sqlite3_bind_text(st, 1, d->gpu_uuid, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, d->actor, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, d->reason, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, kerf__now_ms(d->since_ms));
        r = kerf__exec_stmt(st);
        sqlite3_finalize(st);
        return r;
}

int kerf_store_drain_clear(kerf_store *s, const char *gpu_uuid)
{
        sqlite3_stmt *st;
        int r;

        if (!s || !gpu_uuid || !*gpu_uuid)
                return -EINVAL;
        if ((r = kerf__prep(s, "DELETE FROM gpu_drains WHERE gpu_uuid = ?1", &st)) < 0)
                return r;
        sqlite3_bind_text(st, 1, gpu_uuid, -1, SQLITE_STATIC);
        r = kerf__exec_stmt(st);
        if (r == 0 && sqlite3_changes(s->db) == 0)
                r = -ENOENT;
        sqlite3_finalize(st);
        return r;
}

int kerf_store_drain_list(kerf_store *s, kerf_store_drain **ret, size_t *ret_n)
{
        kerf_store_drain *arr = NULL;
        size_t n = 0;
        sqlite3_stmt *st;
        int rc, r;

        if (!s || !ret || !ret_n)
                return -EINVAL;
        if ((r = kerf__prep(
                 s, "SELECT gpu_uuid, actor, reason, since_ms FROM gpu_drains ORDER BY gpu_uuid",
                 &st)) < 0)
                return r;
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                kerf_store_drain *na = realloc(arr, (n + 1) * sizeof(*na));
                if (!na) {
                        free(arr);
                        sqlite3_finalize(st);
                        return -ENOMEM;
                }
                arr = na;
                memset(&arr[n], 0, sizeof(arr[n]));
                kerf__col_cpy(st, 0, arr[n].gpu_uuid, sizeof(arr[n].gpu_uuid));
                kerf__col_cpy(st, 1, arr[n].actor, sizeof(arr[n].actor));
                kerf__col_cpy(st, 2, arr[n].reason, sizeof(arr[n].reason));
                arr[n].since_ms = sqlite3_column_int64(st, 3);
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
