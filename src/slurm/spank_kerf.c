/* SPDX-License-Identifier: Apache-2.0 */
/* spank_kerf.c - spank_kerf.so: Slurm places a step on a node and its gres, kerfd there makes
 * the share real. The tasks of a step are attached to the node's kerfd (POST /v1/attach) for
 * the gres Slurm granted; the environment kerfd answers (CUDA_VISIBLE_DEVICES, LD_PRELOAD of
 * the shim, KERF_SLICE_*) goes into the task; slurmstepd renews the leases and detaches when
 * the tasks exit (docs/CLUSTER.md "Slurm").
 *
 * Several tasks of the step on the node that see the same whole GPUs or MIG instance (the
 * same CUDA_VISIBLE_DEVICES) share ONE kerf task: the first to enter the group table
 * (group.h, in memory shared with slurmstepd, mapped before the fork) attaches, the others
 * wait for its kerf task id and join it (POST /v1/tasks/ID/join with their pid). A task with
 * other devices (--gpu-bind, --gpus-per-task) is another group; tasks with shards each attach
 * their own slice (a group of one).
 *
 * Call graph (remote = slurmstepd on the node; local = srun/sbatch/salloc):
 *   slurm_spank_init            all: plugstack args, options; remote: maps the group table
 *   option callback             local and remote: validates --kerf-* / --gpu-* values
 *   slurm_spank_task_init_privileged   the task's forked child, root: enters its group; the
 *                               leader POSTs /v1/attach and publishes the kerf task id (or its
 *                               failure), a follower POSTs /v1/tasks/ID/join (the child's pid
 *                               is still root's: kerfd's owner check holds)
 *   slurm_spank_task_init       the same child as the user, stdio set up: sets attach_env
 *                               (CUDA_VISIBLE_DEVICES narrowed to the GPUs Slurm bound the
 *                               task to, when it did), or prints why kerf refused and fails
 *                               the task (exit 1)
 *   slurm_spank_task_post_fork  slurmstepd: starts the lease renewal thread (once), which
 *                               renews each kerf task of the table once per lease_s/3
 *   slurm_spank_task_exit       slurmstepd: the task leaves its group; the last one to leave
 *                               POSTs /v1/tasks/ID/detach
 *   slurm_spank_exit            slurmstepd: stops the thread, detaches what is left
 * Never exit() or abort(): this code lives in srun's and slurmstepd's processes. */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "kerf/shard.h"
#include "group.h"
#include "spank_kerf.h"

SPANK_PLUGIN(kerf, 1);

/* how long a task waits for the first task of its group to attach (a few requests of it) */
#define LEADER_WAIT_MS (3 * KERF_SPANK_HTTP_TIMEOUT_MS)

enum { OPT_WORKLOAD = 1, OPT_TIER, OPT_MEM, OPT_COMPUTE, OPT_LIMIT, OPT_TENANT };

static struct {
        /* plugstack.conf arguments */
        char socket_tmpl[256];
        char tenant_map[256];
        bool fail_open;
        kerf_shard_rule shards; /* shard_unit= / shards_per_gpu= (include/kerf/shard.h) */
        unsigned lease_s;
        /* options */
        char workload[16], tier[16], tenant[64];
        uint64_t memory;
        unsigned compute, compute_limit;
        bool has_memory, has_compute, has_limit;
        /* the task's child (task_init_privileged -> task_init) */
        char socket[320];
        char failure[768];
        bool unreachable; /* the failure is kerfd not answering: fail_open may run it */
        json_t *env;
        char grant[256]; /* the step's CUDA_VISIBLE_DEVICES on several whole GPUs ... */
        json_t *uuids;   /* ... and each entry's UUID: Slurm's per-task binding maps into it */
        /* slurmstepd and the task children: the groups of local tasks (group.h), mapped
         * shared before the fork */
        kerf_spank_groups *groups;
        pthread_t renewer;
        bool renewing;
        volatile int stop;
} g = {.lease_s = 60};

static const char *const workloads[] = {"training", "inference", "dev", "batch", NULL};
static const char *const tiers[] = {"high", "queueable", "exploratory", NULL};

static bool in_list(const char *s, const char *const *l)
{
        for (; *l; l++)
                if (!strcmp(s, *l))
                        return true;
        return false;
}

/* kerf's name rule (docs/API.md "Names"): 1..63 of [A-Za-z0-9_.-], not starting - or . */
static bool name_ok(const char *s)
{
        size_t l = strlen(s);
        if (!l || l > 63 || s[0] == '-' || s[0] == '.')
                return false;
        for (size_t i = 0; i < l; i++)
                if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i]))
                        return false;
        return true;
}

static int opt_cb(int val, const char *arg, int remote)
{
        const char *name = val == OPT_WORKLOAD  ? "--kerf-workload"
                           : val == OPT_TIER    ? "--kerf-tier"
                           : val == OPT_MEM     ? "--gpu-mem"
                           : val == OPT_COMPUTE ? "--gpu-compute"
                           : val == OPT_LIMIT   ? "--gpu-compute-limit"
                                                : "--kerf-tenant";
        const char *want = NULL;
        char why[256];
        (void)remote;
        if (!arg || !*arg) {
                slurm_error("kerf: %s: a value is required", name);
                return -1;
        }
        switch (val) {
        case OPT_WORKLOAD:
                if (!in_list(arg, workloads))
                        want = "training, inference, dev or batch";
                else
                        snprintf(g.workload, sizeof(g.workload), "%s", arg);
                break;
        case OPT_TIER:
                if (!in_list(arg, tiers))
                        want = "high, queueable or exploratory";
                else
                        snprintf(g.tier, sizeof(g.tier), "%s", arg);
                break;
        case OPT_MEM:
                if (kerf_spank_parse_mem(arg, &g.memory, why, sizeof(why)) < 0)
                        want = why;
                else
                        g.has_memory = true;
                break;
        case OPT_COMPUTE:
                if (kerf_spank_parse_pct(arg, 1, &g.compute) < 0)
                        want = "a percentage 1..100 of one GPU";
                else
                        g.has_compute = true;
                break;
        case OPT_LIMIT:
                if (kerf_spank_parse_pct(arg, 1, &g.compute_limit) < 0)
                        want = "a percentage 1..100 of one GPU";
                else
                        g.has_limit = true;
                break;
        default:
                if (!name_ok(arg))
                        want = "a tenant name, 1..63 characters [A-Za-z0-9_.-]";
                else
                        snprintf(g.tenant, sizeof(g.tenant), "%s", arg);
        }
        if (want == why) {
                slurm_error("kerf: %s=%s: not valid: %s", name, arg, why);
                return -1;
        }
        if (want) {
                slurm_error("kerf: %s=%s: not valid; expected %s", name, arg, want);
                return -1;
        }
        if (g.has_compute && g.has_limit && g.compute_limit < g.compute) {
                slurm_error("kerf: --gpu-compute-limit=%u is below --gpu-compute=%u",
                            g.compute_limit, g.compute);
                return -1;
        }
        return 0;
}

static struct spank_option options[] = {
    {"kerf-workload", "TYPE", "kerf: workload type (training, inference, dev, batch)", 1,
     OPT_WORKLOAD, opt_cb},
    {"kerf-tier", "TIER", "kerf: risk tier (high, queueable, exploratory)", 1, OPT_TIER, opt_cb},
    {"gpu-mem", "SIZE",
     "kerf: GPU memory per GPU (4GiB, 512MiB; 4G = 4GiB); default: the shards' share", 1, OPT_MEM,
     opt_cb},
    {"gpu-compute", "PCT", "kerf: guaranteed compute % of a GPU; default: the shards' share", 1,
     OPT_COMPUTE, opt_cb},
    {"gpu-compute-limit", "PCT", "kerf: burst compute limit % (>= --gpu-compute)", 1, OPT_LIMIT,
     opt_cb},
    {"kerf-tenant", "NAME", "kerf: the kerf tenant to charge (default: account map, user)", 1,
     OPT_TENANT, opt_cb},
    SPANK_OPTIONS_TABLE_END};

static int parse_args(int ac, char **av)
{
        const char *unit = NULL, *per_gpu = NULL;
        for (int i = 0; i < ac; i++) {
                const char *a = av[i];
                char *end;
                long v;
                if (!strncmp(a, "socket=", 7) && a[7] == '/' &&
                    strlen(a + 7) < sizeof(g.socket_tmpl)) {
                        snprintf(g.socket_tmpl, sizeof(g.socket_tmpl), "%s", a + 7);
                } else if (!strcmp(a, "fail_open=0") || !strcmp(a, "fail_open=1")) {
                        g.fail_open = a[10] == '1';
                } else if (!strncmp(a, "tenant_map=", 11) && a[11] == '/' &&
                           strlen(a + 11) < sizeof(g.tenant_map)) {
                        snprintf(g.tenant_map, sizeof(g.tenant_map), "%s", a + 11);
                } else if (!strncmp(a, "shard_unit=", 11)) {
                        unit = a + 11;
                } else if (!strncmp(a, "shards_per_gpu=", 15)) {
                        per_gpu = a + 15;
                } else if (!strncmp(a, "lease_s=", 8) && (v = strtol(a + 8, &end, 10)) >= 1 &&
                           v <= 3600 && !*end) {
                        g.lease_s = (unsigned)v;
                } else {
                        slurm_error("kerf: plugstack.conf argument \"%s\" not understood (socket=/"
                                    "ABS/PATH with %%n for the node name, fail_open=0|1, "
                                    "tenant_map=/ABS/FILE, shard_unit=pct|gib or "
                                    "shards_per_gpu=1..10000, "
                                    "lease_s=1..3600)",
                                    a);
                        return -1;
                }
        }
        if (kerf_shard_rule_parse(unit, per_gpu, &g.shards) < 0) {
                slurm_error(
                    "kerf: plugstack.conf: shard_unit=%s shards_per_gpu=%s: give at most one, "
                    "shard_unit pct or gib, shards_per_gpu 1..%u (the rule kerf slurm "
                    "gres-conf was given)",
                    unit ? unit : "-", per_gpu ? per_gpu : "-", KERF_SHARD_MAX_PER_GPU);
                return -1;
        }
        return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
        snprintf(g.socket_tmpl, sizeof(g.socket_tmpl), "/run/kerf/kerfd.sock");
        if (parse_args(ac, av) < 0)
                return -1;
        for (struct spank_option *o = options; o->name; o++)
                if (spank_option_register(sp, o) != ESPANK_SUCCESS) {
                        slurm_error("kerf: could not register --%s", o->name);
                        return -1;
                }
        if (spank_remote(sp)) {
                /* the group table the task children share, mapped before they are forked */
                if (!(g.groups = kerf_spank_groups_new())) {
                        slurm_error("kerf: mmap of the task group table: %m");
                        return -1;
                }
        }
        return 0;
}

/* The socket path: the template with %n replaced by this slurmd's node name. */
static int node_socket(char *buf, size_t len)
{
        const char *node = getenv("SLURMD_NODENAME"); /* slurmstepd sets it in its own env */
        size_t o = 0;
        for (const char *p = g.socket_tmpl; *p; p++) {
                if (p[0] == '%' && p[1] == 'n') {
                        if (!node || !*node)
                                return -ENOENT;
                        o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s", node);
                        p++;
                } else if (o + 1 < len) {
                        buf[o++] = *p;
                        buf[o] = 0;
                } else {
                        return -ENAMETOOLONG;
                }
        }
        if (o >= len)
                return -ENAMETOOLONG;
        buf[o] = 0;
        return 0;
}

static bool getenv_sp(spank_t sp, const char *name, char *buf, int len)
{
        return spank_getenv(sp, name, buf, len) == ESPANK_SUCCESS && buf[0];
}

/* The tenant: --kerf-tenant, else the account's line in tenant_map ("ACCOUNT TENANT"), else
 * the job's user name. */
static void pick_tenant(const char *account, const char *user, char *buf, size_t len)
{
        FILE *f;
        char line[512], a[128], t[128];

        if (g.tenant[0]) {
                snprintf(buf, len, "%s", g.tenant);
                return;
        }
        if (g.tenant_map[0] && account[0] && (f = fopen(g.tenant_map, "re"))) {
                while (fgets(line, sizeof(line), f)) {
                        if (line[0] == '#' || sscanf(line, "%127s %127s", a, t) != 2)
                                continue;
                        if (!strcmp(a, account) && name_ok(t)) {
                                snprintf(buf, len, "%s", t);
                                fclose(f);
                                return;
                        }
                }
                fclose(f);
        }
        snprintf(buf, len, "%s", user);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g.failure, sizeof(g.failure), fmt, ap);
        va_end(ap);
        slurm_error("%s", g.failure);
}

static bool step_attaches(spank_t sp)
{
        uint32_t step = 0;
        if (spank_get_item(sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS)
                return false;
        /* the batch script, the extern and the interactive step hold no GPU work of their
         * own in kerf's model: their srun steps attach (docs/CLUSTER.md) */
        return step != SLURM_BATCH_SCRIPT && step != SLURM_EXTERN_CONT &&
               step != SLURM_INTERACTIVE_STEP;
}

/* The environment kerfd answered an attach or a join with: attach_env, and on the simulated
 * fleet where the simulated driver is. */
static void take_env(json_t *ans)
{
        long st = 0;
        char err[256];
        g.env = json_incref(json_object_get(ans, "attach_env"));
        if (json_is_true(json_object_get(ans, "simulated"))) {
                /* the simulated driver lives in kerfd's lib dir: the task finds it there */
                json_t *h = NULL;
                if (kerf_spank_http(g.socket, "GET", "/v1/health", NULL, KERF_SPANK_HTTP_TIMEOUT_MS,
                                    &st, &h, err, sizeof(err)) == 0) {
                        json_t *paths = json_object_get(h, "paths");
                        const char *lib = json_string_value(json_object_get(paths, "lib"));
                        const char *sim = json_string_value(json_object_get(paths, "sim"));
                        if (lib)
                                json_object_set_new(g.env, "LD_LIBRARY_PATH", json_string(lib));
                        if (sim)
                                json_object_set_new(g.env, "KERF_SIM_DIR", json_string(sim));
                        json_decref(h);
                }
        }
}

/* The first task of its group on the node (or a task with its own shards): POST /v1/attach
 * for what Slurm granted. Returns the kerf task id, or 0 with g.failure (and g.unreachable)
 * set. */
static uint64_t attach(spank_t sp, const char *cvd, const char *shards, uint32_t job, uint32_t step,
                       int task)
{
        char account[128] = "", tenant[128], user[128], err[256];
        uint32_t ntasks = 1;
        int r;
        uid_t uid = 0;
        long st = 0;
        json_t *req, *ans = NULL;
        char *body;
        uint64_t id;

        spank_get_item(sp, S_JOB_UID, &uid);
        spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &ntasks);
        getenv_sp(sp, "SLURM_JOB_ACCOUNT", account, sizeof(account));
        {
                struct passwd pw, *pp = NULL;
                char pwbuf[1024];
                if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &pp) == 0 && pp)
                        snprintf(user, sizeof(user), "%s", pp->pw_name);
                else
                        snprintf(user, sizeof(user), "uid%u", (unsigned)uid);
        }
        pick_tenant(account, user, tenant, sizeof(tenant));

        req = json_pack("{s:s, s:I, s:I}", "tenant", tenant, "pid", (json_int_t)getpid(), "lease_s",
                        (json_int_t)g.lease_s);
        json_t *ext = json_pack("{s:s, s:I, s:I, s:s}", "system", "slurm", "job", (json_int_t)job,
                                "step", (json_int_t)step, "user", user);
        if (account[0])
                json_object_set_new(ext, "account", json_string(account));
        json_object_set_new(req, "external", ext);
        if (g.workload[0])
                json_object_set_new(req, "workload", json_string(g.workload));
        if (g.tier[0])
                json_object_set_new(req, "tier", json_string(g.tier));
        if (shards[0]) {
                /* a software slice of the GPU Slurm counted the shards on */
                uint64_t mem = 0, gm = 0;
                unsigned pct = 0, n = (unsigned)strtoul(shards, NULL, 10);
                json_object_set_new(req, "route", json_string("slice"));
                if (!g.has_memory || !g.has_compute) {
                        if ((r = kerf_spank_gpu_memory(g.socket, &gm, err, sizeof(err))) < 0)
                                goto unreachable;
                        if (ntasks > 1)
                                n = n / ntasks; /* each local task its part of the shards */
                        if (kerf_shard_grant(&g.shards, n, gm, &mem, &pct) < 0) {
                                fail("kerf: %s shards on this node (%u per task) do not fit the "
                                     "shard rule (%s: %u shards per GPU)",
                                     shards, n, kerf_shard_unit_name(g.shards.unit),
                                     kerf_shard_per_gpu(&g.shards, gm));
                                json_decref(req);
                                return 0;
                        }
                }
                char prof[64], uuid[96] = "";
                /* the GPU Slurm counted the shards on (one GPU's shards per step) */
                if (kerf_spank_count_list(cvd) == 1 &&
                    kerf_spank_gres_grant(g.socket, cvd, prof, sizeof(prof), uuid, sizeof(uuid)) ==
                        0)
                        json_object_set_new(req, "gpu_uuid", json_string(uuid));
                json_object_set_new(req, "memory",
                                    json_integer((json_int_t)(g.has_memory ? g.memory : mem)));
                json_object_set_new(req, "compute", json_integer(g.has_compute ? g.compute : pct));
                if (g.has_limit)
                        json_object_set_new(req, "compute_limit", json_integer(g.compute_limit));
        } else {
                char prof[64], uuid[96] = "";
                int k = kerf_spank_count_list(cvd) == 1
                            ? kerf_spank_gres_grant(g.socket, cvd, prof, sizeof(prof), uuid,
                                                    sizeof(uuid))
                            : -ENOENT;
                if (k == 1) { /* a MIG instance of that profile on the GPU Slurm chose */
                        json_object_set_new(req, "route", json_string("mig"));
                        json_object_set_new(req, "mig_profile", json_string(prof));
                } else {
                        json_object_set_new(req, "route", json_string("whole"));
                        json_object_set_new(req, "gpus", json_integer(kerf_spank_count_list(cvd)));
                        if (kerf_spank_count_list(cvd) >
                            1) /* the GPUs Slurm chose, each by its UUID */
                                kerf_spank_pin_all(g.socket, req, cvd);
                }
                if (k >= 0 && uuid[0]) /* the GPU Slurm chose, not one kerfd picks */
                        json_object_set_new(req, "gpu_uuid", json_string(uuid));
        }
        body = json_dumps(req, JSON_COMPACT);
        json_decref(req);
        req = NULL;
        r = body ? kerf_spank_http(g.socket, "POST", "/v1/attach", body, KERF_SPANK_HTTP_TIMEOUT_MS,
                                   &st, &ans, err, sizeof(err))
                 : -ENOMEM;
        free(body);
        if (r < 0)
                goto unreachable;
        if (st != 201) {
                fail("kerf: kerfd at %s refused the attach of job %u step %u (HTTP %ld): %s",
                     g.socket, job, step, st,
                     json_string_value(json_object_get(ans, "message"))
                         ? json_string_value(json_object_get(ans, "message"))
                         : "no message");
                json_decref(ans);
                return 0;
        }
        if (!json_is_object(json_object_get(ans, "attach_env"))) {
                fail("kerf: kerfd at %s placed job %u step %u as task %lld but it is %s (%s): "
                     "no unit to run on",
                     g.socket, job, step, (long long)json_integer_value(json_object_get(ans, "id")),
                     json_string_value(json_object_get(ans, "state")),
                     json_string_value(json_object_get(json_object_get(ans, "reason"), "text")));
                /* kerfd holds it pending: end it, the task will not run */
                char p[64];
                long s2;
                json_t *a2 = NULL;
                snprintf(p, sizeof(p), "/v1/tasks/%lld/cancel",
                         (long long)json_integer_value(json_object_get(ans, "id")));
                if (kerf_spank_http(g.socket, "POST", p, NULL, KERF_SPANK_HTTP_TIMEOUT_MS, &s2, &a2,
                                    err, sizeof(err)) == 0)
                        json_decref(a2);
                json_decref(ans);
                return 0;
        }
        take_env(ans);
        id = (uint64_t)json_integer_value(json_object_get(ans, "id"));
        slurm_info("kerf: job %u step %u task %d attached to kerfd at %s as task %llu", job, step,
                   task, g.socket, (unsigned long long)id);
        json_decref(ans);
        return id;
unreachable:
        fail("kerf: kerfd at %s is not reachable: %s", g.socket, err);
        g.unreachable = true;
        json_decref(req);
        return 0;
}

/* A task whose devices the first task of its group attached: POST /v1/tasks/ID/join. Sets
 * g.env, or g.failure (and g.unreachable). */
static void join(uint32_t job, uint32_t step, int task, uint64_t id)
{
        char path[96], body[64], err[256];
        long st = 0;
        json_t *ans = NULL;
        snprintf(path, sizeof(path), "/v1/tasks/%llu/join", (unsigned long long)id);
        snprintf(body, sizeof(body), "{\"pid\": %ld}", (long)getpid());
        if (kerf_spank_http(g.socket, "POST", path, body, KERF_SPANK_HTTP_TIMEOUT_MS, &st, &ans,
                            err, sizeof(err)) < 0) {
                fail("kerf: kerfd at %s is not reachable: %s", g.socket, err);
                g.unreachable = true;
                return;
        }
        if (st != 200 || !json_is_object(json_object_get(ans, "attach_env"))) {
                const char *m = json_string_value(json_object_get(ans, "message"));
                fail("kerf: kerfd at %s refused task %d of job %u step %u a share of kerf task "
                     "%llu, which the step's first task on the same GPUs attached (HTTP %ld): %s",
                     g.socket, task, job, step, (unsigned long long)id, st,
                     m           ? m
                     : st == 200 ? "the answer has no attach_env"
                                 : "no message");
                json_decref(ans);
                return;
        }
        take_env(ans);
        slurm_info("kerf: job %u step %u task %d joined kerf task %llu at %s", job, step, task,
                   (unsigned long long)id, g.socket);
        json_decref(ans);
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
        char cvd[256] = "", shards[32] = "", key[KERF_SPANK_KEY_MAX];
        uint32_t job = 0, step = 0;
        int task = -1, r;
        uint64_t id = 0;
        (void)ac;
        (void)av;

        if (!step_attaches(sp))
                return 0;
        g.failure[0] = 0;
        g.unreachable = false;
        getenv_sp(sp, "CUDA_VISIBLE_DEVICES", cvd, sizeof(cvd));
        getenv_sp(sp, "SLURM_SHARDS_ON_NODE", shards, sizeof(shards));
        if (!cvd[0] && !shards[0]) {
                if (g.has_memory || g.has_compute || g.has_limit || g.workload[0])
                        fail("kerf: --gpu-mem/--gpu-compute/--kerf-workload need a GPU gres on "
                             "the step (--gres=shard:N or --gres=gpu[:TYPE]:N)");
                return 0; /* no GPU granted: nothing for kerf to enforce */
        }
        if ((r = node_socket(g.socket, sizeof(g.socket))) < 0) {
                fail("kerf: socket=%s: %s", g.socket_tmpl,
                     r == -ENOENT ? "%n used but SLURMD_NODENAME is not set" : "path too long");
                return 0;
        }
        spank_get_item(sp, S_JOB_ID, &job);
        spank_get_item(sp, S_JOB_STEPID, &step);
        spank_get_item(sp, S_TASK_ID, &task);
        /* the group: tasks that see the same GPUs or MIG instance share one kerf task (the
         * indices name the devices; route and profile follow from them through gres.conf);
         * shards stay each task's own slice */
        if (shards[0])
                snprintf(key, sizeof(key), "task:%d", task);
        else
                snprintf(key, sizeof(key), "gres:%s", cvd);
        r = kerf_spank_group_enter(g.groups, task, key, LEADER_WAIT_MS, &id);
        switch (r) {
        case KERF_SPANK_LEAD:
                id = attach(sp, cvd, shards, job, step, task);
                kerf_spank_group_publish(g.groups, task, id,
                                         id              ? 0
                                         : g.unreachable ? -ECONNREFUSED
                                                         : -ECANCELED);
                break;
        case KERF_SPANK_JOIN:
                join(job, step, task, id);
                break;
        case -ECONNREFUSED:
                fail("kerf: kerfd at %s is not reachable (the step's first task on the same GPUs "
                     "could not reach it)",
                     g.socket);
                g.unreachable = true;
                break;
        case -ECANCELED:
                fail("kerf: task %d of job %u step %u not run: the attach of the step's first "
                     "task on the same GPUs (CUDA_VISIBLE_DEVICES=%s) failed; its message says why",
                     task, job, step, cvd);
                break;
        case -ESRCH:
                fail("kerf: task %d of job %u step %u not run: the step's first task on the same "
                     "GPUs ended before its attach was answered",
                     task, job, step);
                break;
        case -ETIMEDOUT:
                fail("kerf: task %d of job %u step %u not run: the attach of the step's first "
                     "task on the same GPUs was not answered within %d s",
                     task, job, step, LEADER_WAIT_MS / 1000);
                break;
        default: /* -EINVAL, -ENOSPC */
                fail("kerf: local task %d of job %u step %u: spank_kerf.so follows at most %d "
                     "tasks of a step on one node",
                     task, job, step, KERF_SPANK_MAX_TASKS);
        }
        if (g.env && !shards[0] && kerf_spank_count_list(cvd) > 1) {
                /* Slurm binds tasks to some of the step's GPUs after this hook (--gpu-bind,
                 * --gpus-per-task): task_init narrows the task's view to those */
                snprintf(g.grant, sizeof(g.grant), "%s", cvd);
                g.uuids = kerf_spank_gres_uuids(g.socket, cvd);
        }
        return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
        const char *k;
        json_t *v;
        (void)ac;
        (void)av;

        if (g.failure[0]) {
                /* fail_open covers kerfd down only: a refusal (quota, no fit) still fails */
                if (!g.fail_open || !g.unreachable) {
                        fprintf(stderr, "%s\n", g.failure);
                        fflush(stderr);
                        return -1;
                }
                fprintf(stderr,
                        "%s\nkerf: WARNING: fail_open=1: this task runs UNENFORCED (no kerf unit, "
                        "no memory cap, no compute share)\n",
                        g.failure);
                fflush(stderr);
                return 0;
        }
        if (!g.env)
                return 0;
        char bound[256] = "", uuids[2048];
        getenv_sp(sp, "CUDA_VISIBLE_DEVICES", bound, sizeof(bound)); /* Slurm's, for this task */
        json_object_foreach(g.env, k, v)
        {
                char old[4096], val[8192];
                const char *s = json_string_value(v);
                if (!s)
                        continue;
                /* the simulated driver's dir goes first; the user's path stays after it */
                if (!strcmp(k, "LD_LIBRARY_PATH") && getenv_sp(sp, k, old, sizeof(old))) {
                        snprintf(val, sizeof(val), "%s:%s", s, old);
                        s = val;
                }
                if (spank_setenv(sp, k, s, 1) != ESPANK_SUCCESS) {
                        fprintf(stderr, "kerf: could not set %s in the task's environment\n", k);
                        return -1;
                }
        }
        /* the kerf task holds the step's GPUs; the task sees those Slurm bound it to */
        if (g.uuids && kerf_spank_bind_uuids(g.grant, g.uuids, bound, uuids, sizeof(uuids)) == 0 &&
            spank_setenv(sp, "CUDA_VISIBLE_DEVICES", uuids, 1) != ESPANK_SUCCESS) {
                fprintf(stderr, "kerf: could not set CUDA_VISIBLE_DEVICES in the task's "
                                "environment\n");
                return -1;
        }
        return 0;
}

/* slurmstepd: POSTs PATH_FMT for a task id; answers ignored (kerfd's lease expiry and its
 * check of the attached pid are the backstop). */
static void post_task(const char *verb, uint64_t id)
{
        char path[96], err[256], sock[320];
        long st = 0;
        json_t *a = NULL;
        if (node_socket(sock, sizeof(sock)) < 0)
                return;
        snprintf(path, sizeof(path), "/v1/tasks/%llu/%s", (unsigned long long)id, verb);
        if (kerf_spank_http(sock, "POST", path, NULL, KERF_SPANK_HTTP_TIMEOUT_MS, &st, &a, err,
                            sizeof(err)) < 0)
                slurm_error("kerf: %s of kerf task %llu: kerfd at %s: %s", verb,
                            (unsigned long long)id, sock, err);
        else if (st != 200)
                slurm_info("kerf: %s of kerf task %llu: HTTP %ld", verb, (unsigned long long)id,
                           st);
        json_decref(a);
}

static void renew_one(uint64_t id, void *arg)
{
        (void)arg;
        if (!g.stop)
                post_task("lease", id);
}

static void detach_one(uint64_t id, void *arg)
{
        (void)arg;
        post_task("detach", id);
}

static void *renew_loop(void *arg)
{
        unsigned every_ms = g.lease_s * 1000 / 3, waited = 0;
        (void)arg;
        while (!g.stop) {
                struct timespec ts = {0, 100 * 1000000L};
                nanosleep(&ts, NULL);
                if ((waited += 100) < every_ms)
                        continue;
                waited = 0;
                /* once per kerf task, however many local tasks share it */
                kerf_spank_groups_each(g.groups, renew_one, NULL);
        }
        return NULL;
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
        (void)ac;
        (void)av;
        if (!spank_remote(sp) || !g.groups || g.renewing || !step_attaches(sp))
                return 0;
        if (pthread_create(&g.renewer, NULL, renew_loop, NULL) != 0) {
                slurm_error("kerf: could not start the lease renewal thread: %m");
                return 0; /* the task runs; kerfd ends its unit at lease expiry */
        }
        g.renewing = true;
        return 0;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
        int task = -1;
        (void)ac;
        (void)av;
        if (!g.groups || spank_get_item(sp, S_TASK_ID, &task) != ESPANK_SUCCESS)
                return 0;
        /* the kerf task is detached when the last local task sharing it has exited */
        kerf_spank_group_leave(g.groups, task, detach_one, NULL);
        return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
        (void)ac;
        (void)av;
        if (!spank_remote(sp) || !g.groups)
                return 0;
        if (g.renewing) {
                g.stop = 1;
                pthread_join(g.renewer, NULL);
                g.renewing = false;
        }
        kerf_spank_groups_close(g.groups, detach_one, NULL);
        g.groups = kerf_spank_groups_free(g.groups);
        return 0;
}
