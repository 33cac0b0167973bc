/* SPDX-License-Identifier: Apache-2.0 */
/* harness.h - start a throwaway kerfd (temp dir, own socket, simulated fleet) and talk to it */
#ifndef KERF_IT_HARNESS_H
#define KERF_IT_HARNESS_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

typedef struct kd {
        char dir[256];
        char sock[320];
        char cfg[320];
        char log[320];
        pid_t pid;
} kd;

/* Extra lines for the `limits:` block of the next kd_setup() (each "  key: value\n"), or NULL. */
extern const char *kd_limits;
/* Lines of the `policy:` block of the next kd_setup(). NULL (the default) writes
 * "  unenforced_slices: allow\n", so that slice tests run whether or not the shim is built;
 * "" writes no policy block (kerfd's defaults: slices fail closed without the shim). */
extern const char *kd_policy;
/* The kerfd binary kd_start() runs; NULL (the default): the build's. A copy elsewhere has its
 * own <exe_dir> (kerf-supervise, kerf-load next to it, ../lib). */
extern const char *kd_bin;

/* Creates a temp dir and config (tenants alice and bob + `extra` YAML appended at top level)
 * and starts kerfd; waits (bounded) until /v1/health answers. Aborts the test on failure. */
void kd_setup(kd *k, const char *extra);
/* Starts kerfd again on the same dir (after a stop or kill). */
void kd_start(kd *k);
/* SIGTERM, bounded wait, then SIGKILL. */
void kd_stop(kd *k);
void kd_kill9(kd *k);
/* Removes the temp dir (after kd_stop). */
void kd_cleanup(kd *k);

/* Calls kerfd. token may be NULL (admin by peer credentials: tests run as root or as the
 * daemon's own uid). Returns the parsed JSON answer (or NULL if not JSON) and the status.
 * raw (may be NULL) receives the body text (free()). */
json_t *kd_call(kd *k, const char *method, const char *path, const char *body, const char *token,
                long *status, char **raw);
/* The same over loopback TCP to 127.0.0.1:port (no identity but the token). */
json_t *kd_call_tcp(unsigned port, const char *method, const char *path, const char *body,
                    const char *token, long *status, char **raw);
/* Polls GET /v1/tasks/ID until state is `state` (or any ended state when state is NULL);
 * returns the task (caller decrefs) or NULL after timeout_ms. */
json_t *kd_wait_task(kd *k, unsigned long long id, const char *state, unsigned timeout_ms);
/* GET /v1/tasks/ID as admin; asserts 200. */
json_t *kd_task(kd *k, unsigned long long id);
/* Submits and returns the id (asserts 201). */
unsigned long long kd_submit(kd *k, const char *body, const char *token);
/* Creates a token for tenant; returns a static-lifetime heap string. */
char *kd_token(kd *k, const char *tenant);
void kd_sleep_ms(unsigned ms);
/* A loopback TCP port free right now (for `listen_tcp:`); aborts the test when none is. */
unsigned kd_free_port(void);

/* Runs `kerf-sim ARGS` on this kerfd's simulated node (<dir>/state/sim); returns its exit
 * status and up to cap-1 bytes of its stdout in out (may be NULL). */
int kd_sim(kd *k, const char *args, char *out, size_t cap);
/* Reads a whole file into a heap string (free()), NULL when it cannot be read. */
char *kd_read(const char *path);
/* GET /v1/events (admin) and returns the first event of `kind` whose text contains `needle`
 * (NULL: any), or NULL. Caller decrefs. */
json_t *kd_event(kd *k, const char *kind, const char *needle);

/* Waits (bounded) for kerfd to exit on its own; returns its wait status, -1 on timeout. */
int kd_wait_exit(kd *k, unsigned timeout_ms);
/* Live processes (not zombies) whose environment holds KERF_TASK_ID=id and this kerfd's
 * KERF_SOCKET; fills up to cap pids, returns how many there are. */
int kd_task_procs(kd *k, unsigned long long id, pid_t *pids, int cap);
/* True when pid exists and is not a zombie. */
bool kd_pid_alive(pid_t pid);

#endif /* KERF_IT_HARNESS_H */
