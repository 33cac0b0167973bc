/* SPDX-License-Identifier: Apache-2.0 */
/* poc.h - the POC harness (`kerf poc run|verify`): the runner context, the evidence record of one
 * acceptance test, and the tests themselves. docs/POC.md is the contract (the record schema, the
 * verdict rule, the report layout); this header is its C side.
 *
 * Layering: poc_core.c (context, kerfd calls, tasks, kerf-load results, records, measures),
 * poc_sw.c (SW1-SW4), poc_hw.c (HW1-HW4), poc_neigh.c (neighbour impact), poc_report.c (JSON,
 * Markdown, HTML with inline SVG, conclusions by rule), poc_verify.c (`kerf poc verify`),
 * poc_kerfd.c (a private kerfd for --spawn: start, kill -9, restart, upgrade on the simulator). */
#ifndef KERF_POC_H
#define KERF_POC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "kerf/client.h"

#define POC_REPORT_KIND    "kerf-poc-report"
#define POC_REPORT_VERSION 1

/* Routes as the report names them. */
#define POC_ROUTE_SOFTWARE "software"
#define POC_ROUTE_HARDWARE "hardware"
#define POC_ROUTE_BOTH     "both"

/* Verdicts (docs/POC.md "Verdicts"): FAIL when any measure fails; SKIPPED when nothing was
 * measured and something was skipped; else PASS. A record never carries a verdict that its
 * measures do not give: poc_record_finish() computes it and `poc verify` recomputes it. */
#define POC_PASS    "PASS"
#define POC_FAIL    "FAIL"
#define POC_SKIPPED "SKIPPED"

typedef struct poc_opts {
        const char *route;   /* software | hardware | both (default both) */
        const char *suite;   /* a suite file (JSON workload overrides), or NULL */
        const char *owner;   /* who runs the POC (default: $USER, else the uid's login name) */
        const char *out_dir; /* evidence directory (created; must not hold a report) */
        bool quick;          /* CI size: the whole run under 2 minutes on the simulator */
        uint64_t seed;       /* every random choice derives from it (default 1) */
        bool spawn;          /* start a private simulated kerfd in out_dir/kerfd */
        const char *fleet;   /* --spawn: the fleet file (default examples/fleet-8xh200.yaml) */
        const char *kerfd;   /* --spawn: the kerfd binary (default: next to kerf) */
        const char
            *restart_cmd; /* without --spawn: a shell command that restarts kerfd (HW2, HW3) */
        const char *load; /* the kerf-load binary tasks run (default: kerfd's staged copy) */
        const char *only; /* comma-separated test ids to run (e.g. "SW1,HW2"), or NULL */
        FILE *progress;   /* live progress lines (stderr), NULL = quiet */
        bool test_break_limiter; /* KERF_SHIM_TEST_BREAK_LIMITER=1 in every software task */
        bool test_no_shim;       /* --spawn: kerfd without the shim, unenforced slices allowed */
        int argc;                /* the command line, for the report's run.argv */
        char **argv;
} poc_opts;

/* Workload sizes (docs/POC.md "Suite file"): defaults, --quick values, --suite overrides. */
typedef struct poc_sizes {
        double probe_s;      /* SW1: probe window (s) */
        double kernel_us;    /* kernel length of every workload (us) */
        double contention_s; /* SW2: length of the contending tasks (s) */
        double fair_s;       /* SW2: fair-share window (s) */
        double serve_s;      /* SW3: serve's whole run (s) */
        double serve_rate;   /* SW3: serve's offered load (req/s) */
        double window_ms;    /* serve's window length (ms) */
        double timeout_s;    /* SW4: max_runtime_s of the timeout case */
        double idle_s;       /* SW4: idle_timeout_s of the idle case */
        double replicas;     /* SW4: replicas of the scale-down service */
} poc_sizes;
/* Reads a suite file into s (on top of what it holds). Unknown fields, wrong types and values
 * out of range are refused: returns -EINVAL (or -errno for I/O) and says why in err. */
int poc_suite_load(poc_sizes *s, const char *path, char *err, size_t errlen);
/* The default sizes (quick: the CI sizes). */
void poc_sizes_default(poc_sizes *s, bool quick);
/* True when `id` names a test (SW1..SW4, HW1..HW4, NB). */
bool poc_test_known(const char *id);

/* What the run found out about kerfd and the node at its start. */
typedef struct poc_env {
        bool simulated; /* kerfd runs on the simulated fleet */
        bool shim;      /* kerfd has the shim (software slices are enforced) */
        char kerf[32], driver[32], cuda[16];
        char device[96]; /* model of GPU 0, e.g. "NVIDIA H200" */
        char gpu_uuid[96];
        char lib_dir[4096]; /* kerfd's staged task files (kerf-load, shim, sim libs) */
        char sim_dir[4096]; /* the simulated node's state (empty on hardware) */
        int n_gpus;
        bool mig_capable; /* GPU 0 supports MIG */
} poc_env;

typedef struct poc_ctx {
        poc_opts o;
        kerf_client *client;
        poc_env env;
        char out[4096];          /* the evidence directory */
        char load[4096];         /* the kerf-load path tasks run */
        json_t *records;         /* array of finished records */
        int64_t t0_ms;           /* run start (wall clock, ms since the epoch) */
        uint64_t rng;            /* seeded from o.seed */
        struct poc_kerfd *kerfd; /* the private kerfd (--spawn), else NULL */
        int failed;              /* records with verdict FAIL */
        char owner[64];          /* o.owner when it was not given */
        poc_sizes sz;            /* workload sizes */
        kerf_client_opts co;     /* how to reach kerfd (socket replaced under --spawn) */
        char sock[4400];         /* --spawn: the private kerfd's socket */
        long long audit_seq0;    /* the last audit seq before the run */
        int64_t audit_cursor_ms; /* unused by the core; free for the tests */
} poc_ctx;

/* ---- the run (poc_core.c) ---- */
/* Connects (or spawns), reads the environment, creates the out dir and the POC tenants
 * (poc-a, poc-b, poc-noisy: quotas reset each run). Returns 0 or a negative errno and says why
 * in err. */
int poc_init(poc_ctx *p, const poc_opts *o, const kerf_client_opts *co, char *err, size_t errlen);
void poc_fini(poc_ctx *p);
/* Runs the selected tests, writes the report files; returns the CLI exit code (0 all passed or
 * skipped, 1 any failed). */
int poc_run(poc_ctx *p);
/* Live progress: "[ 12.3s] SW1 probe 3/5 ..." on o.progress. */
void poc_progress(poc_ctx *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int64_t poc_now_ms(void);
/* A deterministic random number from the run's seed. */
uint64_t poc_rand(poc_ctx *p);

/* ---- calls to kerfd ---- */
/* METHOD PATH [body] -> parsed answer (caller decrefs) and the HTTP status; NULL + status 0 when
 * kerfd could not be reached. `body` is not stolen. */
json_t *poc_call(poc_ctx *p, const char *method, const char *path, json_t *body, long *status);

/* ---- tasks ---- */
/* A task spec: a kerf-load run. `req` holds the submit fields (tenant, route, memory, compute,
 * priority...) without `command`; `argv` is kerf-load's arguments after the binary. */
typedef struct poc_task {
        long long id; /* 0 until submitted */
        long status;  /* HTTP status of the submit */
        json_t *req;  /* the submit body as sent (command included) */
        json_t *last; /* the last task object read */
} poc_task;
/* Submits kerf-load with args (NULL-terminated) and the request fields; returns the HTTP status
 * (201 on success) and fills t (id, req). Records the exact spec into rec's "input". */
long poc_submit(poc_ctx *p, json_t *rec, poc_task *t, json_t *req, const char *const *args);
/* Polls the task until its state is one of `states` ("running", "succeeded|failed|cancelled",
 * ...; '|' separated) or timeout_ms passes. Returns true when reached; t->last is the object. */
bool poc_wait_state(poc_ctx *p, poc_task *t, const char *states, int timeout_ms);
const char *poc_task_state(const poc_task *t); /* from t->last */
long poc_cancel(poc_ctx *p, poc_task *t);
void poc_task_fini(poc_task *t);
/* The kerf-load JSON lines the task printed so far (array, caller decrefs; [] when none). The
 * task's stdout is copied to out/logs/task-ID.out and its location added to rec's "logs". */
json_t *poc_task_lines(poc_ctx *p, json_t *rec, poc_task *t);
/* The last line whose "event" equals `event` (borrowed from lines), or NULL. */
json_t *poc_line(json_t *lines, const char *event);
/* GET /v1/tasks/ID into t->last; returns the HTTP status (0 unreachable). */
long poc_task_get(poc_ctx *p, poc_task *t);
/* A number field of t->last (dotted path "usage.throttled_ns"), or `dflt`. */
double poc_task_num(const poc_task *t, const char *path, double dflt);
/* A string field of t->last (dotted path "reason.code"), or "". */
const char *poc_task_str(const poc_task *t, const char *path);
/* The kerf-load argv element for a size in bytes ("1073741824B"): a static rotating buffer. */
const char *poc_bytes_arg(unsigned long long bytes);
/* Sleeps ms (returns early, false, when the run was interrupted). */
bool poc_sleep_ms(poc_ctx *p, int ms);
/* True once SIGINT/SIGTERM asked the run to stop. */
bool poc_interrupted(void);
/* Cancels every unfinished task of the POC tenants (between tests, at the end). */
void poc_cancel_all(poc_ctx *p);

/* ---- records (docs/POC.md "Record") ---- */
/* A new record: id ("SW1"), route, title; start time, owner and environment filled in. */
json_t *poc_record_new(poc_ctx *p, const char *id, const char *route, const char *title);
/* One measured value against its threshold: op is "<=", ">=" or "==". Adds to "measures" and
 * returns whether it passed. `unit` e.g. "ms", "%", "bytes", "count", "bool". */
bool poc_measure(json_t *rec, const char *name, double value, const char *unit, const char *op,
                 double threshold, const char *note);
/* A step that could not run here: named, with why (e.g. "MIG changes are never made on a real
 * GPU"). */
void poc_skip(json_t *rec, const char *step, const char *why);
/* What kerf did and what an operator must do (and how many commands that took). */
void poc_handling(json_t *rec, const char *kerf_did, const char *operator_must, int commands);
/* Evidence: the audit records about `object` (e.g. "task/12") since the record started; their
 * seq numbers are added to "audit". Returns how many. */
int poc_cite_audit(poc_ctx *p, json_t *rec, const char *object);
/* Evidence: a /metrics snapshot saved as out/metrics/ID-N.prom, cited in "metrics". */
int poc_snapshot_metrics(poc_ctx *p, json_t *rec, const char *label);
/* A chart series for the report: series[name] = {"x": label, "y": label, "points": [[x,y],..]}. */
void poc_series(json_t *rec, const char *name, const char *xlabel, const char *ylabel,
                json_t *points /* stolen */);
/* The same with several named lines: series[name] = {"x", "y", "lines": {line: [[x,y],..]}}. */
void poc_series_lines(json_t *rec, const char *name, const char *xlabel, const char *ylabel,
                      json_t *lines /* stolen */);
/* A timeline event (fault, restart, ...) at time t_ms with its blast radius or outcome. */
void poc_event(json_t *rec, int64_t t_ms, const char *what,
               json_t *detail /* stolen, may be NULL */);
/* Sets end time and verdict, appends to p->records (stolen). */
void poc_record_finish(poc_ctx *p, json_t *rec);
/* The verdict rule (docs/POC.md "Verdicts"), from "measures" and "skipped" only: the record's
 * writer and `poc verify` use this one (poc_report.c). A measure counts by its value, op and
 * threshold; a value of null (not measured) fails. */
const char *poc_verdict_of(const json_t *rec);

/* ---- the tests ---- */
typedef void (*poc_test_fn)(poc_ctx *p);
void poc_sw1(poc_ctx *p);       /* request vs reality */
void poc_sw2(poc_ctx *p);       /* contention */
void poc_sw3(poc_ctx *p);       /* anomaly */
void poc_sw4(poc_ctx *p);       /* reclamation */
void poc_hw1(poc_ctx *p);       /* unit lifecycle */
void poc_hw2(poc_ctx *p);       /* device fault */
void poc_hw3(poc_ctx *p);       /* upgrade */
void poc_hw4(poc_ctx *p);       /* cross-pool */
void poc_neighbour(poc_ctx *p); /* neighbour impact (both routes), record id "NB" */

/* ---- the private kerfd (poc_kerfd.c, --spawn) ---- */
typedef struct poc_kerfd poc_kerfd;
int poc_kerfd_start(poc_ctx *p, char *err, size_t errlen);   /* out/kerfd: config, fleet, socket */
int poc_kerfd_kill9(poc_ctx *p);                             /* SIGKILL, no clean-up */
int poc_kerfd_restart(poc_ctx *p, char *err, size_t errlen); /* start again on the same state */
/* Stops kerfd, changes the simulated driver (and CUDA) version, starts it again. */
int poc_kerfd_upgrade(poc_ctx *p, const char *driver, const char *cuda, char *err, size_t errlen);
void poc_kerfd_stop(poc_ctx *p);

/* ---- the report (poc_report.c) and its check (poc_verify.c) ---- */
/* Writes out/report.json, report.md, report.html, the audit export and a checkpoint. */
int poc_report_write(poc_ctx *p, char *err, size_t errlen);
/* Per route: suitable workloads, limitations, missing information, not recommended - derived
 * from the records by the rules in poc_report.c (docs/POC.md "Conclusions"). */
json_t *poc_conclusions(const json_t *records);
/* Re-checks a report directory; prints each problem; returns 0 when it holds, 1 otherwise. */
int poc_verify_dir(const char *dir, FILE *out);

#endif /* KERF_POC_H */
