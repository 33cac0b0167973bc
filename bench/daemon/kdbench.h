/* SPDX-License-Identifier: Apache-2.0 */
/* kdbench.h - what the kerfd benchmarks share: a throwaway kerfd (config, start, kill, clean-up)
 * and keep-alive libcurl connections to it, over its Unix socket or loopback TCP. */
#ifndef KERF_KDBENCH_H
#define KERF_KDBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <curl/curl.h>

/* The YAML of a tenant's quota of nothing: its tasks are stored and queued, never started (put
 * it right after "  - name: T\n"). */
#define KDB_NO_QUOTA                                                                               \
        "    quota:\n"                                                                             \
        "      gpus: {nominal: 0, borrow_limit: 0}\n"                                              \
        "      memory: {nominal: 0, borrow_limit: 0}\n"                                            \
        "      compute: {nominal: 0, borrow_limit: 0}\n"                                           \
        "      mig_slices: {nominal: 0, borrow_limit: 0}\n"

/* Prints "NAME: message" (NAME from kdb_init) and exits 1, after killing every kerfd started. */
void kdb_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* A function kdb_die runs first (e.g. cancel the tasks a kerfd runs), or NULL. */
void kdb_at_die(void (*fn)(void));
/* Names the benchmark in messages; ignores SIGPIPE, initialises libcurl, kills kerfds at exit. */
void kdb_init(const char *name);
double kdb_now_s(void); /* CLOCK_MONOTONIC */
void kdb_sleep_ms(unsigned ms);
int kdb_cmp_double(const void *a, const void *b);         /* for qsort */
double kdb_pct(const double *sorted, size_t n, double p); /* p in 0..1; 0 when n = 0 */

/* A throwaway kerfd: /tmp/kerf-bench-XXXXXX holding kerfd.yaml, kerfd.sock, kerfd.log and the
 * state dir state/ (kerf.db in it). */
typedef struct kdb_kerfd {
        char dir[256], sock[320], cfg[320], log[320], db[320];
        unsigned port; /* loopback TCP port, 0 = none */
        pid_t pid;
} kdb_kerfd;

/* Creates the directory (mode 0711: tasks run as their own uid) and writes the config:
 * state_dir, socket, listen_tcp when tcp, the 8xH200 simulated fleet, then `extra` (YAML lines:
 * limits, tenants...). */
void kdb_setup(kdb_kerfd *k, bool tcp, const char *extra);
/* Starts `bin` (NULL: $KERFD, else this build's kerfd) and polls /v1/health every `poll_ms`
 * until 200 (dies after timeout_s); returns the seconds from fork to 200. */
double kdb_start(kdb_kerfd *k, const char *bin, unsigned poll_ms, double timeout_s);
void kdb_kill9(kdb_kerfd *k);
void kdb_stop(kdb_kerfd *k); /* SIGTERM, waits */
/* Kills kerfd and removes the directory (kept, and said, with $KERF_BENCH_KEEP). */
void kdb_cleanup(kdb_kerfd *k);

/* One keep-alive connection (a reused easy handle); the answer's body is in c->body (NUL-ended,
 * c->len bytes). */
typedef struct kdb_conn {
        CURL *h;
        struct curl_slist *hdr, *hdr_body;
        char base[64];
        char *body;
        size_t len, cap;
} kdb_conn;
/* tcp: over 127.0.0.1:k->port, else the Unix socket; token: a bearer token or NULL. */
void kdb_conn_init(kdb_conn *c, const kdb_kerfd *k, bool tcp, const char *token);
void kdb_conn_fini(kdb_conn *c);
/* METHOD PATH [JSON body]; returns the HTTP status, 0 when no answer came. */
long kdb_call(kdb_conn *c, const char *method, const char *path, const char *body);
/* The integer field `key` of the JSON answer (e.g. "id"), 0 when absent. */
unsigned long long kdb_json_u64(const kdb_conn *c, const char *key);

#endif /* KERF_KDBENCH_H */
