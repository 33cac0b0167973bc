/* SPDX-License-Identifier: Apache-2.0 */
/* config.h - kerfd configuration: the YAML file (docs/DAEMON.md) read into one struct */
#ifndef KERFD_CONFIG_H
#define KERFD_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "kerf/sched.h"
#include "kerf/units.h"

#define KERFD_MAX_TENANTS 256

typedef struct kerfd_tenant_cfg {
        char name[KERF_NAME_LEN];
        char cohort[KERF_NAME_LEN];
        unsigned weight;
        uint64_t nominal[KERF_RES_COUNT];
        uint64_t borrow_limit[KERF_RES_COUNT];
        uint64_t lend_limit[KERF_RES_COUNT];
        long long uid, gid; /* -1 = not set */
        /* Config file only, never the API: the tenant's tasks may run as uid 0 or an admin
         * uid (docs/SECURITY.md "Task identity"). Not stored: read from the file each start. */
        bool allow_root;
        /* Ceilings (docs/DAEMON.md "Tenant policy"); KERFD_INHERIT / -1 = tenant_defaults */
        int max_priority;      /* KERFD_INHERIT or -1000..1000 */
        int max_tier;          /* -1 or a kerf_tier: the most urgent tier allowed */
        long long max_pending; /* -1 or 0..10000000 pending tasks */
        unsigned workloads;    /* bit per kerf_workload allowed; 0 = all */
} kerfd_tenant_cfg;

#define KERFD_INHERIT (-0x7fffffff)

/* queues: [{name, mode, backfill, starvation_s}]: every tenant's queue of that name (docs/DAEMON.md
 * "Queues"); a queue not listed follows kerf_queue_spec_default (strict, backfill on). */
#define KERFD_MAX_QUEUES 64
typedef struct kerfd_queue_cfg {
        char name[KERF_NAME_LEN];
        kerf_queue_spec spec;
} kerfd_queue_cfg;

/* tenant_defaults: what a tenant that does not say gets (docs/DAEMON.md "Tenant policy"). */
typedef struct kerfd_tenant_defaults {
        int max_priority;     /* default 0 */
        int max_tier;         /* default KERF_TIER_QUEUEABLE */
        unsigned max_pending; /* default 1000 */
        /* A tenant without `uid` runs as uid = gid = uid_base + a number derived from its name
         * (its own unprivileged identity); 0: such tenants are refused when kerfd is root. */
        unsigned long long uid_base; /* default 2000000000 */
        unsigned uid_span;           /* default 1048576 */
} kerfd_tenant_defaults;

/* retention: {logs_after, work_dirs_after, max_log_bytes, tasks_after, interval}
 * (docs/DAEMON.md "Retention"; retention_cfg.c). Ages and the interval in seconds, 0 = never
 * (keep forever / no timed pass); max_log_bytes 0 = no cap. */
typedef struct kerfd_retention_cfg {
        uint64_t logs_after_s; /* defaults and bounds: kerfd_retention_keys (config_fields.c) */
        uint64_t work_dirs_after_s;
        uint64_t tasks_after_s; /* 0: task rows kept forever */
        uint64_t interval_s;
        uint64_t max_log_bytes; /* per stream of a task (logcap.c, retention.c) */
} kerfd_retention_cfg;
#define KERFD_MAX_AGE_S         (36500ull * KERF_DAY_S) /* retention ages: 100 years */
#define KERFD_MAX_GC_INTERVAL_S (30ull * KERF_DAY_S)
#define KERFD_MIN_LOG_CAP       4096ull /* room for the cut marker (retention.c, logcap.c) */

typedef struct kerfd_config {
        char path[PATH_MAX]; /* file read, "" for defaults only */
        char state_dir[PATH_MAX];
        char socket[PATH_MAX];
        char tcp_host[64]; /* "" = no TCP listener */
        unsigned tcp_port;
        /* metrics: {listen, token_file} (docs/METRICS.md "Scraping remotely"): the metrics
         * listener's IPv4 address ("" = none) and port, the metrics token's file ("" = none) */
        char metrics_host[64];
        unsigned metrics_port;
        char metrics_token_file[PATH_MAX];
        char nvml_library[PATH_MAX]; /* "" = the backend's default */
        bool allow_mig_mode_change;
        bool force_sim; /* backend: sim - never try a real NVML */
        /* backend.sim_gid: the simulated device group, owner of <state>/sim and a supplementary
         * group of every task on the simulated fleet (simgroup.c, docs/SECURITY.md) */
        unsigned sim_gid;
        char fleet[PATH_MAX];
        char node_name[64];    /* node_name: "" = the hostname (api_node.c) */
        uint64_t max_body;     /* bytes */
        unsigned max_tasks;    /* live (not ended) tasks */
        double submit_rate;    /* per tenant per second, 0 = unlimited */
        unsigned submit_burst; /* token bucket depth */
        unsigned tick_ms;      /* node controller period */
        unsigned grace_s;      /* default SIGTERM -> SIGKILL grace */
        unsigned threads;      /* HTTP worker threads */
        unsigned min_lease_s;  /* shortest lease /v1/attach accepts (default 30) */

        /* connections (docs/DAEMON.md "Connections") */
        unsigned max_conns;          /* limits.max_connections: non-admin, per listener */
        unsigned max_conns_per_peer; /* limits.max_connections_per_peer: per uid / address */
        unsigned admin_conns;        /* limits.admin_connections: socket slots kept for admins */
        unsigned request_timeout_s;  /* limits.request_timeout_s: headers + body deadline */

        /* device fencing (docs/SECURITY.md): "auto" (on when root and the host can), "off",
         * "v1" or "v2" (forced); cgroup root and device directory ("" = defaults) */
        char fencing[8];
        char fence_cgroup_root[PATH_MAX];
        char fence_dev_dir[PATH_MAX];
        char fence_mig_minors[PATH_MAX];
        kerf_policy policy;
        /* software-slice enforcement (docs/DAEMON.md "policy"): */
        bool unenforced_slices; /* policy.unenforced_slices: allow (true) | refuse (default) */
        bool preempt_suspend;   /* policy.preempt_slices_by: suspend (true) | kill (default) */
        bool bypass_stop;       /* policy.shim_bypass: stop (true) | record (default) */
        /* CDI specs for attached tasks (cdi: {enabled, spec_dir, kind}, docs/CLUSTER.md) */
        bool cdi_enabled;       /* default false */
        char cdi_dir[PATH_MAX]; /* default /var/run/cdi */
        char cdi_kind[128];     /* default kerf.dev/gpu */
        unsigned n_queues;
        kerfd_queue_cfg queues[KERFD_MAX_QUEUES];
        kerfd_retention_cfg retention;
        kerfd_tenant_defaults tenant_defaults;
        unsigned n_tenants;
        kerfd_tenant_cfg tenants[KERFD_MAX_TENANTS];
} kerfd_config;

/* backend.sim_gid's default: below tenant_defaults.uid_base's default range, never a tenant's */
#define KERFD_SIM_GID_DEFAULT 1999999999u

/* simgroup.c: "" when backend.sim_gid may be the simulated device group; else why not (0, the
 * admin group kerf, inside tenant_defaults' uid range, a tenant's uid or gid) in err, -EINVAL. */
int kerfd_config_sim_gid_check(const kerfd_config *c, char *err, size_t errlen);

/* retention_cfg.c: retention's defaults; parses the `retention` mapping `m` of YAML document
 * `doc` read from `file` into *ret (0), or -KERF_EPARSE with "FILE:LINE: retention.KEY: what is
 * wrong" in err. *ret is changed only on success. */
void kerfd_retention_defaults(kerfd_retention_cfg *ret);
/* "7d", "90s", "1h30m", "0": a duration in seconds written back the way the docs write it. */
void kerfd_retention_fmt(uint64_t s, char *buf, size_t len);
/* {"logs_after": "7d", ..., "max_log_bytes": N}: retention as GET /v1/config and /v1/gc show it.
 * New reference (json_decref), NULL when out of memory. */
struct json_t;
struct json_t *kerfd_retention_json(const kerfd_retention_cfg *c);

/* Fills `c` with the defaults (state dir, socket by uid, limits, kerf_policy_default). */
void kerfd_config_defaults(kerfd_config *c);

/* Reads YAML file `path` over the defaults already in `c`. Returns 0, or a negative code with
 * "FILE:LINE: what is wrong" in err. Unknown keys are refused by name. */
int kerfd_config_load(kerfd_config *c, const char *path, char *err, size_t errlen);

/* peer.c. Sets a tenant's fields to "not given" (weight 1, unlimited quota, no uid, inherited
 * ceilings). */
void kerfd_tenant_cfg_init(kerfd_tenant_cfg *t);
/* Why uid `uid` may not run a tenant's tasks without allow_root: "" when it may; else
 * "uid 0 is root" or "uid N is an admin on kerfd's socket (group kerf)". NSS lookups. */
const char *kerfd_uid_privileged(long long uid, char *buf, size_t len);

/* Makes a relative `path` absolute against the working directory (0, or -ENAMETOOLONG). */
int kerfd_config_abspath(char *path, size_t cap);
/* Checks what the command line may have overridden after the file: state_dir absolute, socket
 * path short enough for a Unix socket. 0, or a negative code with the reason in err. */
int kerfd_config_check(const kerfd_config *c, char *err, size_t errlen);

#endif /* KERFD_CONFIG_H */
