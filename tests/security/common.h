/* SPDX-License-Identifier: Apache-2.0 */
/* common.h - small helpers of the security tests: local users, staging, task output */
#ifndef KERF_SEC_COMMON_H
#define KERF_SEC_COMMON_H

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* Skips the whole test program (exit 0 with a message) when not root: switching the uid of a
 * task, creating local users and fencing need it. */
static inline void sec_need_root(const char *why)
{
        if (geteuid() != 0) {
                printf("SKIP: needs root (%s)\n", why);
                exit(0);
        }
}

/* The uid of local user `name`, created (system user, no home, no login) when absent; -1
 * when it cannot be created (the test then skips with a message). */
static inline long long sec_user(const char *name)
{
        struct passwd *pw = getpwnam(name);
        char cmd[256];

        if (!pw) {
                snprintf(cmd, sizeof(cmd),
                         "useradd --system --no-create-home --shell /usr/sbin/nologin %s "
                         ">/dev/null 2>&1",
                         name);
                if (system(cmd) != 0)
                        return -1;
                pw = getpwnam(name);
        }
        return pw ? (long long)pw->pw_uid : -1;
}

/* The harness makes its temp dir 0700; tasks of other uids must pass through it to reach
 * their work dir under <dir>/state (kerfd makes the state dir itself 0711). */
static inline void sec_open_dir(kd *k)
{
        if (chmod(k->dir, 0711) != 0)
                fprintf(stderr, "chmod %s: failed\n", k->dir);
}

/* The stdout (or stderr) of task `id` (heap; "" when none). */
static inline char *sec_logs(kd *k, unsigned long long id, const char *stream)
{
        char path[160], *out;
        long st;
        json_t *j;

        snprintf(path, sizeof(path), "/v1/tasks/%llu/logs?stream=%s", id, stream);
        j = kd_call(k, "GET", path, NULL, NULL, &st, NULL);
        out = strdup(json_string_value(json_object_get(j, "data"))
                         ? json_string_value(json_object_get(j, "data"))
                         : "");
        json_decref(j);
        return out;
}

/* POST/GET and the answer's status; the message (heap, may be NULL) in *msg when msg != NULL. */
static inline long sec_call(kd *k, const char *m, const char *path, const char *body,
                            const char *tok, char **msg)
{
        long st;
        json_t *j = kd_call(k, m, path, body, tok, &st, NULL);
        if (msg) {
                const char *s = json_string_value(json_object_get(j, "message"));
                *msg = s ? strdup(s) : NULL;
        }
        json_decref(j);
        return st;
}

#endif /* KERF_SEC_COMMON_H */
