/* SPDX-License-Identifier: Apache-2.0 */
/* spank_kerf.c - spank_kerf.so: Slurm places a step on a node and its gres, kerfd there makes
 * the share real. Each task of a step is attached to the node's kerfd (POST /v1/attach) for
 * the gres Slurm granted; the environment kerfd answers (CUDA_VISIBLE_DEVICES, LD_PRELOAD of
 * the shim, KERF_SLICE_*) goes into the task; slurmstepd renews the leases and detaches each
 * task when it exits (docs/CLUSTER.md "Slurm").
 *
 * Call graph (remote = slurmstepd on the node; local = srun/sbatch/salloc):
 *   slurm_spank_init            all: plugstack args, options; remote: the shared slot page
 *   option callback             local and remote: validates --kerf-* / --gpu-* values
 *   slurm_spank_task_init_privileged   the task's forked child, root: POST /v1/attach (the
 *                               child's pid is still root's: kerfd's owner check holds), kerf
 *                               task id into the shared slot of the local task
 *   slurm_spank_task_init       the same child as the user, stdio set up: sets attach_env,
 *                               or prints why kerf refused and fails the task (exit 1)
 *   slurm_spank_task_post_fork  slurmstepd: starts the lease renewal thread (once)
 *   slurm_spank_task_exit       slurmstepd: POST /v1/tasks/ID/detach for that task
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
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "kerf/shard.h"
#include "spank_kerf.h"

SPANK_PLUGIN(kerf, 1);

#define MAX_LOCAL_TASKS 256
#define HTTP_TIMEOUT_MS 10000

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
        /* slurmstepd: kerf task id per local task, written by the children (shared page) */
        uint64_t *slots;
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
                /* one page the task children write their kerf task ids into, before fork */
                void *p = mmap(NULL, MAX_LOCAL_TASKS * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
                if (p == MAP_FAILED) {
                        slurm_error("kerf: mmap of the task slots: %m");
                        return -1;
                }
                g.slots = p;
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

static unsigned count_list(const char *s)
{
        unsigned n = 1;
        for (; *s; s++)
                n += *s == ',';
        return n;
}

/* GPU memory of kerfd's first GPU (the shard rule's base): GET /v1/gpus. */
static int gpu_memory(uint64_t *ret, char *err, size_t errlen)
{
        long st = 0;
        json_t *j = NULL, *g0;
        int r = kerf_spank_http(g.socket, "GET", "/v1/gpus?limit=1", NULL, HTTP_TIMEOUT_MS, &st, &j,
                                err, errlen);
        if (r < 0)
                return r;
        g0 = json_array_get(json_object_get(j, "items"), 0);
        if (st != 200 || !json_is_integer(json_object_get(g0, "memory_total"))) {
                snprintf(err, errlen, "GET /v1/gpus answered %ld without a GPU", st);
                json_decref(j);
                return -EPROTO;
        }
        *ret = (uint64_t)json_integer_value(json_object_get(g0, "memory_total"));
        json_decref(j);
        return 0;
}

static int mig_cmp(const void *a, const void *b)
{
        json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
        return kerf_gres_mig_order(json_integer_value(json_object_get(x, "gpu")),
                                   json_integer_value(json_object_get(x, "unit")),
                                   json_integer_value(json_object_get(y, "gpu")),
                                   json_integer_value(json_object_get(y, "unit")));
}

/* Slurm 22.05 gives a step only the index of its gpu in the node's gres list, not the type.
 * gres.conf from `kerf slurm gres-conf` lists whole GPUs (those not in MIG mode, by index),
 * then MIG instances in (GPU, unit) order (kerf_gres_mig_order); shards sit on the whole GPUs.
 * Index `cvd` names the GPU Slurm chose: writes its UUID (for a MIG instance, the instance's
 * MIG- UUID) and, for a MIG instance, its profile. Returns 0 for a whole GPU, 1 for a MIG instance,
 * -ENOENT when the index or the layout cannot be read (then kerfd chooses the GPU). */
static int gres_grant(const char *cvd, char *prof, size_t plen, char *uuid, size_t ulen)
{
        char err[256], *end;
        long st1 = 0, st2 = 0, idx = strtol(cvd, &end, 10), nwhole = 0;
        json_t *gpus = NULL, *node = NULL, *v, *sorted[64], *items;
        size_t i, nm = 0;
        int r = -ENOENT;

        if (!*cvd || *end || idx < 0 ||
            kerf_spank_http(g.socket, "GET", "/v1/gpus?limit=1000", NULL, HTTP_TIMEOUT_MS, &st1,
                            &gpus, err, sizeof(err)) < 0 ||
            kerf_spank_http(g.socket, "GET", "/v1/node", NULL, HTTP_TIMEOUT_MS, &st2, &node, err,
                            sizeof(err)) < 0 ||
            st1 != 200 || st2 != 200)
                goto out;
        items = json_object_get(gpus, "items");
        json_array_foreach(items, i, v)
        {
                const char *mode = json_string_value(json_object_get(v, "mode"));
                if (mode && strcmp(mode, "mig") != 0 && nwhole++ == idx &&
                    json_is_string(json_object_get(v, "uuid"))) {
                        snprintf(uuid, ulen, "%s", json_string_value(json_object_get(v, "uuid")));
                        r = 0;
                }
        }
        if (r == 0)
                goto out;
        /* as gres-conf: an instance without its device caps is left out of gres.conf */
        json_array_foreach(json_object_get(node, "mig"), i, v)
        {
                if (nm < 64 && json_is_string(json_object_get(v, "gi_cap")) &&
                    json_is_string(json_object_get(v, "ci_cap")))
                        sorted[nm++] = v;
        }
        qsort(sorted, nm, sizeof(sorted[0]), mig_cmp);
        if (idx >= nwhole && (size_t)(idx - nwhole) < nm &&
            json_is_string(json_object_get(sorted[idx - nwhole], "profile"))) {
                json_t *m = sorted[idx - nwhole];
                snprintf(prof, plen, "%s", json_string_value(json_object_get(m, "profile")));
                /* the instance itself (its MIG- UUID): kerfd gives the task exactly that one */
                snprintf(uuid, ulen, "%s",
                         json_is_string(json_object_get(m, "uuid"))
                             ? json_string_value(json_object_get(m, "uuid"))
                             : "");
                r = 1;
        }
out:
        json_decref(gpus);
        json_decref(node);
        return r;
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

/* "gpu_uuids" for a step on several whole GPUs: each CUDA_VISIBLE_DEVICES entry Slurm set,
 * resolved as gres_grant() does; left out (kerfd picks) when one is not a whole GPU. */
static void pin_all(json_t *req, const char *cvd)
{
        char list[256], *save = NULL, prof[64], uuid[96];
        json_t *a = json_array();
        bool ok = a != NULL;
        snprintf(list, sizeof(list), "%s", cvd);
        for (char *e = strtok_r(list, ",", &save); ok && e; e = strtok_r(NULL, ",", &save))
                ok = gres_grant(e, prof, sizeof(prof), uuid, sizeof(uuid)) == 0 &&
                     json_array_append_new(a, json_string(uuid)) == 0;
        if (ok)
                json_object_set_new(req, "gpu_uuids", a);
        else
                json_decref(a);
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
        char cvd[256] = "", shards[32] = "", account[128] = "", tenant[128], user[128], err[256];
        uint32_t job = 0, step = 0, ntasks = 1;
        int task = 0, r;
        uid_t uid = 0;
        long st = 0;
        json_t *req, *ans = NULL;
        char *body;
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
        spank_get_item(sp, S_JOB_UID, &uid);
        spank_get_item(sp, S_TASK_ID, &task);
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
                        if ((r = gpu_memory(&gm, err, sizeof(err))) < 0)
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
                if (count_list(cvd) == 1 &&
                    gres_grant(cvd, prof, sizeof(prof), uuid, sizeof(uuid)) == 0)
                        json_object_set_new(req, "gpu_uuid", json_string(uuid));
                json_object_set_new(req, "memory",
                                    json_integer((json_int_t)(g.has_memory ? g.memory : mem)));
                json_object_set_new(req, "compute", json_integer(g.has_compute ? g.compute : pct));
                if (g.has_limit)
                        json_object_set_new(req, "compute_limit", json_integer(g.compute_limit));
        } else {
                char prof[64], uuid[96] = "";
                int k = count_list(cvd) == 1
                            ? gres_grant(cvd, prof, sizeof(prof), uuid, sizeof(uuid))
                            : -ENOENT;
                if (k == 1) { /* a MIG instance of that profile on the GPU Slurm chose */
                        json_object_set_new(req, "route", json_string("mig"));
                        json_object_set_new(req, "mig_profile", json_string(prof));
                } else {
                        json_object_set_new(req, "route", json_string("whole"));
                        json_object_set_new(req, "gpus", json_integer(count_list(cvd)));
                        if (count_list(cvd) > 1) /* the GPUs Slurm chose, each by its UUID */
                                pin_all(req, cvd);
                }
                if (k >= 0 && uuid[0]) /* the GPU Slurm chose, not one kerfd picks */
                        json_object_set_new(req, "gpu_uuid", json_string(uuid));
        }
        body = json_dumps(req, JSON_COMPACT);
        json_decref(req);
        req = NULL;
        r = body ? kerf_spank_http(g.socket, "POST", "/v1/attach", body, HTTP_TIMEOUT_MS, &st, &ans,
                                   err, sizeof(err))
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
                if (kerf_spank_http(g.socket, "POST", p, NULL, HTTP_TIMEOUT_MS, &s2, &a2, err,
                                    sizeof(err)) == 0)
                        json_decref(a2);
                json_decref(ans);
                return 0;
        }
        g.env = json_incref(json_object_get(ans, "attach_env"));
        if (json_is_true(json_object_get(ans, "simulated"))) {
                /* the simulated driver lives in kerfd's lib dir: the task finds it there */
                json_t *h = NULL;
                if (kerf_spank_http(g.socket, "GET", "/v1/health", NULL, HTTP_TIMEOUT_MS, &st, &h,
                                    err, sizeof(err)) == 0) {
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
        if (task >= 0 && task < MAX_LOCAL_TASKS && g.slots)
                __atomic_store_n(&g.slots[task],
                                 (uint64_t)json_integer_value(json_object_get(ans, "id")),
                                 __ATOMIC_SEQ_CST);
        slurm_info("kerf: job %u step %u task %d attached to kerfd at %s as task %lld", job, step,
                   task, g.socket, (long long)json_integer_value(json_object_get(ans, "id")));
        json_decref(ans);
        return 0;
unreachable:
        fail("kerf: kerfd at %s is not reachable: %s", g.socket, err);
        g.unreachable = true;
        json_decref(req);
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
        if (kerf_spank_http(sock, "POST", path, NULL, HTTP_TIMEOUT_MS, &st, &a, err, sizeof(err)) <
            0)
                slurm_error("kerf: %s of kerf task %llu: kerfd at %s: %s", verb,
                            (unsigned long long)id, sock, err);
        else if (st != 200)
                slurm_info("kerf: %s of kerf task %llu: HTTP %ld", verb, (unsigned long long)id,
                           st);
        json_decref(a);
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
                for (int i = 0; i < MAX_LOCAL_TASKS && !g.stop; i++) {
                        uint64_t id = __atomic_load_n(&g.slots[i], __ATOMIC_SEQ_CST);
                        if (id)
                                post_task("lease", id);
                }
        }
        return NULL;
}

int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
        (void)ac;
        (void)av;
        if (!spank_remote(sp) || !g.slots || g.renewing || !step_attaches(sp))
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
        if (!g.slots || spank_get_item(sp, S_TASK_ID, &task) != ESPANK_SUCCESS || task < 0 ||
            task >= MAX_LOCAL_TASKS)
                return 0;
        uint64_t id = __atomic_exchange_n(&g.slots[task], 0, __ATOMIC_SEQ_CST);
        if (id)
                post_task("detach", id);
        return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
        (void)ac;
        (void)av;
        if (!spank_remote(sp) || !g.slots)
                return 0;
        if (g.renewing) {
                g.stop = 1;
                pthread_join(g.renewer, NULL);
                g.renewing = false;
        }
        for (int i = 0; i < MAX_LOCAL_TASKS; i++) {
                uint64_t id = __atomic_exchange_n(&g.slots[i], 0, __ATOMIC_SEQ_CST);
                if (id)
                        post_task("detach", id);
        }
        munmap(g.slots, MAX_LOCAL_TASKS * sizeof(uint64_t));
        g.slots = NULL;
        return 0;
}
