/* SPDX-License-Identifier: Apache-2.0 */
/* clirun.h - run the real kerf binary (KERF_CLI) against a throwaway kerfd (harness.h), for
 * the CLI tests: its exit status, stdout, stderr and stdout parsed as JSON. */
#ifndef KERF_IT_CLIRUN_H
#define KERF_IT_CLIRUN_H

#include <jansson.h>
#include <sys/types.h>

#include "harness.h"

typedef struct kd_out {
        int code;   /* exit status, 128+N when killed by signal N */
        char *out;  /* stdout text (never NULL) */
        char *err;  /* stderr text (never NULL) */
        json_t *js; /* stdout parsed as JSON, or NULL */
} kd_out;

void kd_out_fini(kd_out *o);

/* Starts `kerf [--socket SOCK] [--token TOKEN] ARGS...` with stdout/stderr to
 * <k->dir>/TAG.out / TAG.err and stdin from /dev/null; returns its pid. sock NULL: k's socket;
 * "-": no --socket (the client config file's). The child has no $KERF_TOKEN / $KERF_SOCKET, and
 * $KERF_CONFIG only when the test set one (else none: a developer's own config never leaks in). */
pid_t kd_cli_spawn(kd *k, const char *tag, const char *sock, const char *token, char *const *args);
/* Waits up to ms for pid: its exit status (128+N when killed), -1 on timeout (then killed). */
int kd_cli_reap(pid_t p, unsigned ms);
/* The outputs of a finished spawn TAG with exit status code. */
kd_out kd_cli_collect(kd *k, const char *tag, int code);
/* Spawn, wait (60 s at most: the test fails after) and collect; args NULL-terminated. */
kd_out kd_cli_run(kd *k, const char *sock, const char *token, char *const *args);
/* The same with the arguments as a NULL-terminated list. */
kd_out kd_cli_runv(kd *k, const char *sock, const char *token, ...);

/* `kerf --json submit --tenant TENANT -- /bin/sh -c CMD` must succeed: the new task's id. */
unsigned long long kd_cli_submit(kd *k, const char *tenant, const char *cmd);

/* The exit code must be `code` (the test fails with both outputs otherwise). */
void kd_cli_assert_code(const kd_out *o, int code);
/* ... and stderr exactly one line starting "kerf: ". */
void kd_cli_assert_one_error(const kd_out *o, int code);

#endif /* KERF_IT_CLIRUN_H */
