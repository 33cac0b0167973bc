/* SPDX-License-Identifier: Apache-2.0 */
/* poc_core.c - the POC run: context, environment, tenants, sizes, test selection, run loop */
#include <errno.h>
#include <pwd.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kerf/core.h"
#include "kerf/task_state.h"
#include "poc.h"

/*
 * Call graph of a run (cmd_poc.c):
 *   poc_init  -> [poc_kerfd_start] -> env_read (version, health, gpus, /metrics) -> tenants_setup
 *             -> load_locate
 *   poc_run   -> for each selected test: fn(p) (records via poc_record_new/..._finish),
 *                poc_cancel_all between tests -> poc_report_write
 *   poc_fini  -> poc_cancel_all -> poc_kerfd_stop (always, also after SIGINT)
 */

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
        (void)sig;
        if (interrupted) /* a second ^C: leave now (poc_kerfd's atexit-free pid is killed below) */
                _exit(130);
        interrupted = 1;
}

bool poc_interrupted(void)
{
        return interrupted != 0;
}

int64_t poc_now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t poc_rand(poc_ctx *p)
{
        /* splitmix64: small, deterministic from the seed, good enough to vary sizes */
        uint64_t z = (p->rng += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

void poc_progress(poc_ctx *p, const char *fmt, ...)
{
        va_list ap;
        if (!p->o.progress)
                return;
        fprintf(p->o.progress, "[%6.1fs] ", (double)(poc_now_ms() - p->t0_ms) / 1000.0);
        va_start(ap, fmt);
        vfprintf(p->o.progress, fmt, ap);
        va_end(ap);
        fputc('\n', p->o.progress);
        fflush(p->o.progress);
}

bool poc_sleep_ms(poc_ctx *p, int ms)
{
        (void)p;
        while (ms > 0 && !interrupted) {
                int step = ms > 50 ? 50 : ms;
                struct timespec ts = {0, (long)step * 1000000L};
                nanosleep(&ts, NULL);
                ms -= step;
        }
        return !interrupted;
}

/* ---- sizes and the suite file ---- */

static const struct {
        const char *name;
        size_t off;
        double min, max, full, quick;
} SIZES[] = {
#define SZ(f) #f, offsetof(poc_sizes, f)
    {SZ(probe_s), 0.2, 60, 2.0, 1.5},
    {SZ(kernel_us), 50, 100000, 2000, 1000},
    {SZ(contention_s), 0.5, 600, 6.0, 2.0},
    {SZ(fair_s), 0.5, 600, 6.0, 3.0},
    {SZ(serve_s), 1, 600, 9.0, 3.0},
    {SZ(serve_rate), 1, 10000, 100, 50},
    {SZ(window_ms), 50, 10000, 500, 250},
    {SZ(timeout_s), 1, 600, 2, 1},
    {SZ(idle_s), 1, 600, 2, 1},
    {SZ(replicas), 2, 8, 3, 2},
#undef SZ
};
#define N_SIZES (sizeof(SIZES) / sizeof(SIZES[0]))

void poc_sizes_default(poc_sizes *s, bool quick)
{
        for (size_t i = 0; i < N_SIZES; i++)
                *(double *)((char *)s + SIZES[i].off) = quick ? SIZES[i].quick : SIZES[i].full;
}

int poc_suite_load(poc_sizes *s, const char *path, char *err, size_t errlen)
{
        json_error_t je;
        json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je), *v;
        const char *k;
        poc_sizes tmp = *s;

        if (!j) {
                snprintf(err, errlen, "--suite %s: %s (line %d)", path, je.text, je.line);
                return -EINVAL;
        }
        if (!json_is_object(j)) {
                snprintf(err, errlen, "--suite %s: must be a JSON object of sizes", path);
                json_decref(j);
                return -EINVAL;
        }
        json_object_foreach(j, k, v)
        {
                size_t i = 0;
                for (; i < N_SIZES && strcmp(SIZES[i].name, k) != 0; i++)
                        ;
                if (i == N_SIZES) {
                        snprintf(err, errlen,
                                 "--suite %s: unknown field \"%s\" (docs/POC.md \"Suite file\")",
                                 path, k);
                        json_decref(j);
                        return -EINVAL;
                }
                if (!json_is_number(v) || json_number_value(v) < SIZES[i].min ||
                    json_number_value(v) > SIZES[i].max) {
                        snprintf(err, errlen, "--suite %s: \"%s\" must be a number %g..%g", path, k,
                                 SIZES[i].min, SIZES[i].max);
                        json_decref(j);
                        return -EINVAL;
                }
                *(double *)((char *)&tmp + SIZES[i].off) = json_number_value(v);
        }
        json_decref(j);
        *s = tmp;
        return 0;
}

/* ---- the tests ---- */

static const struct {
        const char *id, *route;
        poc_test_fn fn;
} TESTS[] = {
    {"SW1", POC_ROUTE_SOFTWARE, poc_sw1},  {"SW2", POC_ROUTE_SOFTWARE, poc_sw2},
    {"SW3", POC_ROUTE_SOFTWARE, poc_sw3},  {"SW4", POC_ROUTE_SOFTWARE, poc_sw4},
    {"HW1", POC_ROUTE_HARDWARE, poc_hw1},  {"HW2", POC_ROUTE_HARDWARE, poc_hw2},
    {"HW3", POC_ROUTE_HARDWARE, poc_hw3},  {"HW4", POC_ROUTE_HARDWARE, poc_hw4},
    {"NB", POC_ROUTE_BOTH, poc_neighbour},
};
#define N_TESTS (sizeof(TESTS) / sizeof(TESTS[0]))

bool poc_test_known(const char *id)
{
        for (size_t i = 0; i < N_TESTS; i++)
                if (!strcasecmp(TESTS[i].id, id))
                        return true;
        return false;
}

static bool only_has(const char *only, const char *id)
{
        size_t n = strlen(id);
        for (const char *s = only; s && *s;) {
                const char *e = strchr(s, ',');
                size_t l = e ? (size_t)(e - s) : strlen(s);
                if (l == n && !strncasecmp(s, id, n))
                        return true;
                s = e ? e + 1 : NULL;
        }
        return false;
}

static bool selected(const poc_ctx *p, size_t i)
{
        const char *r = p->o.route ? p->o.route : POC_ROUTE_BOTH;
        if (p->o.only)
                return only_has(p->o.only, TESTS[i].id);
        return !strcmp(r, POC_ROUTE_BOTH) || !strcmp(TESTS[i].route, POC_ROUTE_BOTH) ||
               !strcmp(r, TESTS[i].route);
}

/* ---- environment ---- */

static void copy_str(char *dst, size_t cap, const json_t *obj, const char *key)
{
        const char *s = json_string_value(json_object_get(obj, key));
        snprintf(dst, cap, "%s", s ? s : "");
}

/* kerf_shim_present from /metrics: kerfd reports whether it found the shim at its start */
static int shim_present(poc_ctx *p)
{
        kerf_client_response r;
        int v = -1;
        if (kerf_client_call(p->client, "GET", "/metrics", NULL, &r) < 0)
                return -1;
        const char *m = r.status == 200 && r.body ? strstr(r.body, "\nkerf_shim_present ") : NULL;
        if (m)
                v = atoi(m + strlen("\nkerf_shim_present "));
        kerf_client_response_fini(&r);
        return v;
}

static int env_read(poc_ctx *p, char *err, size_t errlen)
{
        long st;
        json_t *v = poc_call(p, "GET", "/v1/version", NULL, &st), *h, *g;
        if (!v || st != 200) {
                snprintf(err, errlen, "GET /v1/version: %s",
                         st ? "kerfd refused it" : kerf_client_error(p->client));
                json_decref(v);
                return -EIO;
        }
        copy_str(p->env.kerf, sizeof(p->env.kerf), v, "kerf");
        copy_str(p->env.driver, sizeof(p->env.driver), v, "driver");
        copy_str(p->env.cuda, sizeof(p->env.cuda), v, "cuda");
        json_decref(v);
        h = poc_call(p, "GET", "/v1/health", NULL, &st);
        if (!h || st != 200) {
                snprintf(err, errlen, "GET /v1/health answered %ld", st);
                json_decref(h);
                return -EIO;
        }
        p->env.simulated = json_is_true(json_object_get(h, "simulated"));
        json_t *paths = json_object_get(h, "paths"); /* admins only, newer kerfd */
        copy_str(p->env.lib_dir, sizeof(p->env.lib_dir), paths, "lib");
        copy_str(p->env.sim_dir, sizeof(p->env.sim_dir), paths, "sim");
        json_decref(h);
        g = poc_call(p, "GET", "/v1/gpus", NULL, &st);
        json_t *items = json_object_get(g, "items"), *g0 = json_array_get(items, 0);
        if (st != 200 || !g0) {
                snprintf(err, errlen, "GET /v1/gpus: %s",
                         st == 200 ? "kerfd has no GPU" : "refused");
                json_decref(g);
                return -EIO;
        }
        p->env.n_gpus = (int)json_array_size(items);
        const kerf_gpu_model *m =
            kerf_gpu_model_find(json_string_value(json_object_get(g0, "model")));
        snprintf(p->env.device, sizeof(p->env.device), "%s",
                 m ? m->product : json_string_value(json_object_get(g0, "model")));
        copy_str(p->env.gpu_uuid, sizeof(p->env.gpu_uuid), g0, "uuid");
        p->env.mig_capable = kerf_gpu_model_has_mig(m);
        json_decref(g);
        int sp = shim_present(p);
        if (sp < 0) {
                snprintf(err, errlen,
                         "GET /metrics: no kerf_shim_present (is this kerfd too old?)");
                return -EIO;
        }
        p->env.shim = sp == 1;
        return 0;
}

/* ---- tenants ---- */

static const char *const TENANTS[] = {"poc-a", "poc-b", "poc-noisy"};

static int tenants_setup(poc_ctx *p, char *err, size_t errlen)
{
        for (size_t i = 0; i < sizeof(TENANTS) / sizeof(TENANTS[0]); i++) {
                char path[128];
                long st;
                json_t *b = json_pack("{s:s, s:i}", "name", TENANTS[i], "weight", 1);
                json_decref(poc_call(p, "POST", "/v1/tenants", b, &st));
                json_decref(b);
                if (st != 201 && st != 409) {
                        snprintf(err, errlen, "POST /v1/tenants %s answered %ld (admin needed)",
                                 TENANTS[i], st);
                        return -EACCES;
                }
                /* ceilings that allow what the tests submit (priorities up to 900, tier high) */
                snprintf(path, sizeof(path), "/v1/tenants/%s", TENANTS[i]);
                b = json_pack("{s:i, s:s, s:i}", "max_priority", 1000, "max_tier", "high",
                              "max_pending", 1000);
                json_decref(poc_call(p, "PATCH", path, b, &st));
                json_decref(b);
                if (st != 200) {
                        snprintf(err, errlen, "PATCH %s answered %ld", path, st);
                        return -EIO;
                }
                /* quotas back to unlimited: a test that sets one resets it itself */
                snprintf(path, sizeof(path), "/v1/tenants/%s/quota", TENANTS[i]);
                b = json_pack("{s:{s:n}, s:{s:n}, s:{s:n}, s:{s:n}}", "gpus", "nominal", "memory",
                              "nominal", "compute", "nominal", "mig_slices", "nominal");
                json_decref(poc_call(p, "PUT", path, b, &st));
                json_decref(b);
                if (st != 200) {
                        snprintf(err, errlen, "PUT %s answered %ld", path, st);
                        return -EIO;
                }
        }
        return 0;
}

void poc_cancel_all(poc_ctx *p)
{
        for (size_t i = 0; i < sizeof(TENANTS) / sizeof(TENANTS[0]); i++) {
                for (int s = 0; s < KERF_TASK_STATE_COUNT; s++) {
                        char path[160];
                        long st;
                        if (kerf_task_state_ended(s))
                                continue;
                        snprintf(path, sizeof(path), "/v1/tasks?tenant=%s&state=%s&limit=1000",
                                 TENANTS[i], kerf_task_state_name(s));
                        json_t *l = poc_call(p, "GET", path, NULL, &st), *t;
                        size_t k;
                        json_array_foreach(json_object_get(l, "items"), k, t)
                        {
                                snprintf(path, sizeof(path), "/v1/tasks/%lld/cancel",
                                         (long long)json_integer_value(json_object_get(t, "id")));
                                json_t *b = json_pack("{s:i}", "grace_s", 0);
                                json_decref(poc_call(p, "POST", path, b, &st));
                                json_decref(b);
                        }
                        json_decref(l);
                }
        }
}

/* ---- where kerf-load lives ---- */

/* dir + "/kerf-load" into dst (cut, and so not found, when too long) */
static void join_load(char *dst, size_t cap, const char *dir)
{
        size_t n = strlen(dir);
        if (n + sizeof("/kerf-load") > cap)
                n = cap - sizeof("/kerf-load");
        memcpy(dst, dir, n);
        memcpy(dst + n, "/kerf-load", sizeof("/kerf-load"));
}

static void load_locate(poc_ctx *p)
{
        char exe[PATH_MAX];
        ssize_t n;
        if (p->o.load) {
                snprintf(p->load, sizeof(p->load), "%s", p->o.load);
                return;
        }
        if (p->env.lib_dir[0]) {
                join_load(p->load, sizeof(p->load), p->env.lib_dir);
                if (access(p->load, X_OK) == 0)
                        return;
        }
        n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        exe[n > 0 ? n : 0] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
                *slash = 0;
        join_load(p->load, sizeof(p->load), exe);
        poc_progress(p,
                     "warning: kerfd stages no kerf-load (health paths.lib); tasks run %s, "
                     "which tenant uids may not be able to read",
                     p->load);
}

/* ---- init, run, fini ---- */

static int mkdir_p(const char *path, mode_t mode)
{
        char buf[4096];
        snprintf(buf, sizeof(buf), "%s", path);
        for (char *s = buf + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = 0;
                if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *s = '/';
        }
        if (mkdir(buf, mode) < 0 && errno != EEXIST)
                return -errno;
        return chmod(buf, mode) < 0 ? -errno : 0;
}

int poc_init(poc_ctx *p, const poc_opts *o, const kerf_client_opts *co, char *err, size_t errlen)
{
        char path[4200];
        int r;
        struct sigaction sa = {.sa_handler = on_signal};

        memset(p, 0, sizeof(*p));
        p->o = *o;
        p->co = *co;
        p->t0_ms = poc_now_ms();
        p->rng = o->seed ? o->seed : 1;
        if (!p->o.owner || !*p->o.owner) { /* the one owner every record and the report name */
                const struct passwd *pw = getpwuid(getuid());
                if (getenv("USER") && *getenv("USER"))
                        snprintf(p->owner, sizeof(p->owner), "%s", getenv("USER"));
                else if (pw)
                        snprintf(p->owner, sizeof(p->owner), "%s", pw->pw_name);
                else
                        snprintf(p->owner, sizeof(p->owner), "uid %u", (unsigned)getuid());
                p->o.owner = p->owner;
        }
        if (!p->sz.kernel_us)
                poc_sizes_default(&p->sz, o->quick);
        if (o->suite && (r = poc_suite_load(&p->sz, o->suite, err, errlen)) < 0)
                return r;
        snprintf(path, sizeof(path), "%s/report.json", o->out_dir);
        if (access(path, F_OK) == 0) {
                snprintf(err, errlen, "--out %s already holds a report; choose a new directory",
                         o->out_dir);
                return -EEXIST;
        }
        /* 0755: under --spawn, kerfd's state is below it and tasks run as other uids */
        if ((r = mkdir_p(o->out_dir, 0755)) < 0 || !realpath(o->out_dir, p->out)) {
                snprintf(err, errlen, "--out %s: cannot create it: %s", o->out_dir,
                         strerror(r < 0 ? -r : errno));
                return r < 0 ? r : -errno;
        }
        snprintf(path, sizeof(path), "%s/logs", p->out);
        mkdir_p(path, 0755);
        snprintf(path, sizeof(path), "%s/metrics", p->out);
        mkdir_p(path, 0755);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        json_object_seed(1); /* the same key order in every run: a deterministic report */
        p->records = json_array();
        if (o->spawn && (r = poc_kerfd_start(p, err, errlen)) < 0)
                return r;
        if ((r = kerf_client_new(&p->co, &p->client)) < 0) {
                snprintf(err, errlen, "cannot set up the client (bad --socket/--url/--token)");
                return r;
        }
        if ((r = env_read(p, err, errlen)) < 0 || (r = tenants_setup(p, err, errlen)) < 0)
                return r;
        long st;
        json_t *a = poc_call(p, "GET", "/v1/audit?limit=1000", NULL, &st);
        while (a && st == 200) { /* the last seq before the run: records cite only later ones */
                json_t *items = json_object_get(a, "items"), *next = json_object_get(a, "next");
                json_t *last = json_array_get(items, json_array_size(items) - 1);
                if (last)
                        p->audit_seq0 = json_integer_value(json_object_get(last, "seq"));
                if (!json_is_string(next))
                        break;
                snprintf(path, sizeof(path), "/v1/audit?limit=1000&after=%s",
                         json_string_value(next));
                json_decref(a);
                a = poc_call(p, "GET", path, NULL, &st);
        }
        json_decref(a);
        load_locate(p);
        poc_cancel_all(p);
        poc_progress(p, "kerfd %s, %s%s (%s, driver %s, CUDA %s), shim %s; evidence in %s",
                     p->env.kerf, p->env.simulated ? "simulated " : "", p->env.device,
                     p->env.gpu_uuid, p->env.driver, p->env.cuda,
                     p->env.shim ? "present" : "ABSENT", p->out);
        return 0;
}

int poc_run(poc_ctx *p)
{
        char err[512];
        for (size_t i = 0; i < N_TESTS && !interrupted; i++) {
                if (!selected(p, i))
                        continue;
                int64_t t = poc_now_ms();
                size_t before = json_array_size(p->records);
                poc_progress(p, "%s start", TESTS[i].id);
                TESTS[i].fn(p);
                poc_cancel_all(p);
                for (size_t k = before; k < json_array_size(p->records); k++) {
                        json_t *r = json_array_get(p->records, k);
                        poc_progress(p, "%s %s (%.1fs)",
                                     json_string_value(json_object_get(r, "id")),
                                     json_string_value(json_object_get(r, "verdict")),
                                     (double)(poc_now_ms() - t) / 1000.0);
                }
        }
        if (interrupted)
                poc_progress(p, "interrupted: writing the report of what ran");
        if (poc_report_write(p, err, sizeof(err)) < 0) {
                poc_progress(p, "report: %s", err);
                return 1;
        }
        poc_progress(p, "report %s/report.json: %zu records, %d failed", p->out,
                     json_array_size(p->records), p->failed);
        return p->failed || interrupted ? 1 : 0;
}

void poc_fini(poc_ctx *p)
{
        if (p->client) {
                poc_cancel_all(p);
                p->client = kerf_client_free(p->client);
        }
        poc_kerfd_stop(p);
        json_decref(p->records);
        p->records = NULL;
}
