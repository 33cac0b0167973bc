/* SPDX-License-Identifier: Apache-2.0 */
/* poc_hw_util.c - the hardware tests' shared helpers: NVML read by the harness itself, kerfd's
 * GPUs, units, events, audit and quotas, the simulated node's fault injection */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kerf/core.h"
#include "kerf/errno.h"
#include "nvml_abi.h"
#include "poc_hw.h"
#include "simstate.h"

/* ---- NVML ---- */

static struct {
        void *h;
        nvmlReturn_t (*init)(void);
        nvmlReturn_t (*by_uuid)(const char *, nvmlDevice_t *);
        nvmlReturn_t (*max_mig)(nvmlDevice_t, unsigned *);
        nvmlReturn_t (*mig_by_index)(nvmlDevice_t, unsigned, nvmlDevice_t *);
        nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned);
        nvmlReturn_t (*gi_id)(nvmlDevice_t, unsigned *);
        nvmlReturn_t (*ci_id)(nvmlDevice_t, unsigned *);
        nvmlReturn_t (*mem)(nvmlDevice_t, nvmlMemory_t *);
        nvmlReturn_t (*driver)(char *, unsigned);
        char driver_s[96];
} nv;

int poc_nvml_open(poc_ctx *p, char *err, size_t errlen)
{
        char lib[4200];
        const char *sim = hw_sim_dir(p);

        if (nv.h)
                return 0;
        if (p->env.simulated) {
                if (!p->env.lib_dir[0] || !sim[0]) {
                        snprintf(err, errlen,
                                 "kerfd's health answer has no paths.lib/paths.sim: the "
                                 "simulated NVML cannot be found");
                        return -ENOENT;
                }
                snprintf(lib, sizeof(lib), "%s/libnvidia-ml.so.1", p->env.lib_dir);
                setenv("KERF_SIM_DIR", sim, 1);
        } else {
                snprintf(lib, sizeof(lib), "libnvidia-ml.so.1");
        }
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
                snprintf(err, errlen, "dlopen %s: %s", lib, dlerror());
                return -ENOENT;
        }
#define SYM(field, name)                                                                           \
        do {                                                                                       \
                *(void **)&nv.field = dlsym(h, name);                                              \
                if (!nv.field) {                                                                   \
                        snprintf(err, errlen, "%s has no %s", lib, name);                          \
                        dlclose(h);                                                                \
                        return -ENOSYS;                                                            \
                }                                                                                  \
        } while (0)
        SYM(init, "nvmlInit_v2");
        SYM(by_uuid, "nvmlDeviceGetHandleByUUID");
        SYM(max_mig, "nvmlDeviceGetMaxMigDeviceCount");
        SYM(mig_by_index, "nvmlDeviceGetMigDeviceHandleByIndex");
        SYM(uuid, "nvmlDeviceGetUUID");
        SYM(gi_id, "nvmlDeviceGetGpuInstanceId");
        SYM(ci_id, "nvmlDeviceGetComputeInstanceId");
        SYM(mem, "nvmlDeviceGetMemoryInfo");
        SYM(driver, "nvmlSystemGetDriverVersion");
#undef SYM
        nvmlReturn_t r = nv.init();
        if (r != NVML_SUCCESS) {
                snprintf(err, errlen, "%s: nvmlInit_v2 answered %d", lib, (int)r);
                dlclose(h);
                return -EIO;
        }
        nv.h = h;
        return 0;
}

const char *poc_nvml_driver(void)
{
        if (!nv.h || nv.driver(nv.driver_s, sizeof(nv.driver_s)) != NVML_SUCCESS)
                return "";
        return nv.driver_s;
}

int poc_nvml_migs(const char *gpu_uuid, poc_mig_dev *out, int cap)
{
        nvmlDevice_t d, m;
        unsigned max = 0;
        int n = 0;

        if (!nv.h)
                return -ENOENT;
        if (nv.by_uuid(gpu_uuid, &d) != NVML_SUCCESS)
                return -ENODEV;
        if (nv.max_mig(d, &max) != NVML_SUCCESS)
                return -EIO;
        for (unsigned i = 0; i < max; i++) {
                if (nv.mig_by_index(d, i, &m) != NVML_SUCCESS)
                        continue; /* a free slot: NOT_FOUND */
                if (n < cap) {
                        poc_mig_dev *o = &out[n];
                        unsigned gi = 0, ci = 0;
                        nvmlMemory_t mem = {0};
                        memset(o, 0, sizeof(*o));
                        if (nv.uuid(m, o->uuid, sizeof(o->uuid)) != NVML_SUCCESS)
                                o->uuid[0] = '\0';
                        o->gi = nv.gi_id(m, &gi) == NVML_SUCCESS ? (int)gi : -1;
                        o->ci = nv.ci_id(m, &ci) == NVML_SUCCESS ? (int)ci : -1;
                        o->mem = nv.mem(m, &mem) == NVML_SUCCESS ? mem.total : 0;
                }
                n++;
        }
        return n;
}

bool poc_nvml_find(const char *gpu_uuid, const char *mig_uuid, poc_mig_dev *ret)
{
        poc_mig_dev d[64];
        int n = poc_nvml_migs(gpu_uuid, d, 64);
        for (int i = 0; i < n && i < 64; i++)
                if (mig_uuid && !strcmp(d[i].uuid, mig_uuid)) {
                        if (ret)
                                *ret = d[i];
                        return true;
                }
        return false;
}

/* ---- kerfd ---- */

/* Every item of a paginated list (caller decrefs), NULL when the first page is refused. */
static json_t *list_all(poc_ctx *p, const char *base)
{
        json_t *all = NULL;
        char path[512], after[64] = "";
        for (int guard = 0; guard < 1000; guard++) {
                long st;
                snprintf(path, sizeof(path), "%s%slimit=1000%s%s", base,
                         strchr(base, '?') ? "&" : "?", after[0] ? "&after=" : "", after);
                json_t *j = poc_call(p, "GET", path, NULL, &st);
                if (st != 200 || !j) {
                        json_decref(j);
                        break;
                }
                if (!all)
                        all = json_array();
                json_array_extend(all, json_object_get(j, "items"));
                json_t *next = json_object_get(j, "next");
                if (json_is_string(next))
                        snprintf(after, sizeof(after), "%s", json_string_value(next));
                else if (json_is_integer(next))
                        snprintf(after, sizeof(after), "%lld", (long long)json_integer_value(next));
                json_decref(j);
                if (!json_is_string(next) && !json_is_integer(next))
                        break;
        }
        return all;
}

json_t *hw_gpus(poc_ctx *p)
{
        return list_all(p, "/v1/gpus");
}

int hw_mig_gpus(poc_ctx *p, int *out, int cap)
{
        json_t *g = hw_gpus(p), *it;
        size_t i;
        int n = 0;
        json_array_foreach(g, i, it)
        {
                const char *mode = json_string_value(json_object_get(it, "mode"));
                if (mode && !strcmp(mode, "mig") && n < cap)
                        out[n++] = (int)json_integer_value(json_object_get(it, "index"));
        }
        json_decref(g);
        return n;
}

void hw_gpu_uuid(poc_ctx *p, int index, char *buf, size_t cap)
{
        json_t *g = hw_gpus(p), *it;
        size_t i;
        buf[0] = '\0';
        json_array_foreach(g, i, it) if (json_integer_value(json_object_get(it, "index")) == index)
            snprintf(buf, cap, "%s", json_string_value(json_object_get(it, "uuid")));
        json_decref(g);
}

bool hw_gpu_faulted(poc_ctx *p, int index)
{
        json_t *g = hw_gpus(p), *it;
        size_t i;
        bool f = false;
        json_array_foreach(g, i, it) if (json_integer_value(json_object_get(it, "index")) == index)
            f = json_is_true(json_object_get(it, "faulted"));
        json_decref(g);
        return f;
}

json_t *hw_units(poc_ctx *p)
{
        json_t *u = list_all(p, "/v1/units");
        return u ? u : json_array();
}

json_t *hw_unit(const poc_task *t)
{
        return json_array_get(json_object_get(t->last, "units"), 0);
}

const char *hw_unit_str(const poc_task *t, const char *key)
{
        const char *s = json_string_value(json_object_get(hw_unit(t), key));
        return s ? s : "";
}

long long hw_unit_int(const poc_task *t, const char *key)
{
        json_t *v = json_object_get(hw_unit(t), key);
        return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

long long hw_event_last(poc_ctx *p)
{
        json_t *e = list_all(p, "/v1/events");
        long long id = 0;
        if (json_array_size(e))
                id = (long long)json_integer_value(
                    json_object_get(json_array_get(e, json_array_size(e) - 1), "id"));
        json_decref(e);
        return id;
}

json_t *hw_events(poc_ctx *p, long long after, const char *kind, const char *needle)
{
        json_t *all = json_array(), *it;
        char path[128];
        long long cur = after;
        for (int guard = 0; guard < 1000; guard++) {
                long st;
                snprintf(path, sizeof(path), "/v1/events?limit=1000&after=%lld", cur);
                json_t *j = poc_call(p, "GET", path, NULL, &st), *items;
                size_t i;
                items = json_object_get(j, "items");
                if (st != 200 || !json_array_size(items)) {
                        json_decref(j);
                        break;
                }
                json_array_foreach(items, i, it)
                {
                        const char *k = json_string_value(json_object_get(it, "kind"));
                        const char *t = json_string_value(json_object_get(it, "text"));
                        cur = (long long)json_integer_value(json_object_get(it, "id"));
                        if ((!kind || (k && !strcmp(k, kind))) &&
                            (!needle || (t && strstr(t, needle))))
                                json_array_append(all, it);
                }
                bool more =
                    !json_is_null(json_object_get(j, "next")) && json_object_get(j, "next") != NULL;
                json_decref(j);
                if (!more)
                        break;
        }
        return all;
}

json_t *hw_wait_event(poc_ctx *p, long long after, const char *kind, const char *needle,
                      int timeout_ms)
{
        int64_t end = poc_now_ms() + timeout_ms;
        do {
                json_t *e = hw_events(p, after, kind, needle);
                if (json_array_size(e)) {
                        json_t *r = json_incref(json_array_get(e, 0));
                        json_decref(e);
                        return r;
                }
                json_decref(e);
        } while (poc_now_ms() < end && poc_sleep_ms(p, 40));
        return NULL;
}

int hw_blast_tasks(const char *text, long long *out, int cap)
{
        const char *s = text ? strstr(text, "tasks [") : NULL;
        int n = 0;
        if (!s)
                return 0;
        s += strlen("tasks [");
        while (*s && *s != ']') {
                char *end;
                long long v = strtoll(s, &end, 10);
                if (end == s)
                        break;
                if (n < cap)
                        out[n] = v;
                n++;
                s = end;
                if (*s == ',')
                        s++;
        }
        return n < cap ? n : cap;
}

json_t *hw_audit(poc_ctx *p, long long after)
{
        json_t *all = json_array();
        char path[128];
        long long cur = after;
        for (int guard = 0; guard < 10000; guard++) {
                long st;
                snprintf(path, sizeof(path), "/v1/audit?limit=1000&after=%lld", cur);
                json_t *j = poc_call(p, "GET", path, NULL, &st), *items, *it;
                size_t i;
                items = json_object_get(j, "items");
                if (st != 200 || !json_array_size(items)) {
                        json_decref(j);
                        break;
                }
                json_array_foreach(items, i, it)
                {
                        cur = (long long)json_integer_value(json_object_get(it, "seq"));
                        json_array_append(all, it);
                }
                bool more = json_is_string(json_object_get(j, "next")) ||
                            json_is_integer(json_object_get(j, "next"));
                json_decref(j);
                if (!more)
                        break;
        }
        return all;
}

long hw_quota(poc_ctx *p, const char *tenant, const char *resource, long long nominal)
{
        char path[160];
        long st;
        json_t *v = nominal < 0 ? json_null() : json_integer(nominal);
        json_t *b = json_pack("{s:{s:o}}", resource, "nominal", v);
        snprintf(path, sizeof(path), "/v1/tenants/%s/quota", tenant);
        json_decref(poc_call(p, "PUT", path, b, &st));
        json_decref(b);
        return st;
}

long long hw_usage(poc_ctx *p, const char *tenant, const char *resource)
{
        json_t *all = list_all(p, "/v1/tenants"), *it;
        size_t i;
        long long u = -1;
        json_array_foreach(all, i, it)
        {
                const char *name = json_string_value(json_object_get(it, "name"));
                json_t *v = json_object_get(json_object_get(it, "usage"), resource);
                if (name && !strcmp(name, tenant))
                        u = json_is_integer(v) ? (long long)json_integer_value(v) : 0;
        }
        json_decref(all);
        return u;
}

/* ---- MIG profiles ---- */

const char *hw_profile(poc_ctx *p, unsigned compute_slices)
{
        json_t *g = hw_gpus(p);
        const kerf_gpu_model *m =
            kerf_gpu_model_find(json_string_value(json_object_get(json_array_get(g, 0), "model")));
        json_decref(g);
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n_profiles; i++)
                if (m->profiles[i].compute_slices == compute_slices &&
                    !strstr(m->profiles[i].name, "+"))
                        return m->profiles[i].name;
        return NULL;
}

/* ---- the simulated node ---- */

const char *hw_sim_dir(poc_ctx *p)
{
        static char dir[4200];
        if (p->env.sim_dir[0])
                return p->env.sim_dir;
        if (p->kerfd && p->env.simulated) {
                snprintf(dir, sizeof(dir), "%s/kerfd/state/sim", p->out);
                return dir;
        }
        return "";
}

int hw_sim_xid(poc_ctx *p, unsigned gpu, unsigned xid, int gi, int ci)
{
        kerf_sim *st;
        int r;
        const char *dir = hw_sim_dir(p);
        if (!dir[0])
                return -ENOENT;
        if ((r = kerf_sim_open(dir, &st)) < 0)
                return r;
        int64_t seq = kerf_sim_xid_inject(st, gpu, xid, gi, ci);
        kerf_sim_close(st);
        return seq < 0 ? (int)seq : 0;
}

int hw_sim_reset(poc_ctx *p, unsigned gpu)
{
        kerf_sim *st;
        int r;
        const char *dir = hw_sim_dir(p);
        if (!dir[0])
                return -ENOENT;
        if ((r = kerf_sim_open(dir, &st)) < 0)
                return r;
        r = kerf_sim_gpu_reset(st, gpu, true);
        kerf_sim_close(st);
        return r;
}

/* ---- tasks ---- */

long hw_submit_dev(poc_ctx *p, json_t *rec, poc_task *t, json_t *req, double seconds)
{
        char secs[32], kus[32];
        snprintf(secs, sizeof(secs), "%.1f", seconds);
        snprintf(kus, sizeof(kus), "%.0f", p->sz.kernel_us > 0 ? p->sz.kernel_us : 500);
        const char *args[] = {"dev", "--seconds",   secs, "--busy-ms",   "20",  "--idle-ms",
                              "200", "--kernel-us", kus,  "--window-ms", "500", NULL};
        return poc_submit(p, rec, t, req, args);
}

bool hw_wait_running(poc_ctx *p, poc_task *t, int timeout_ms)
{
        return poc_wait_state(p, t, "running|succeeded|failed|cancelled", timeout_ms) &&
               !strcmp(poc_task_state(t), "running");
}

bool hw_wait_gone(poc_ctx *p, poc_task *t, int timeout_ms)
{
        int64_t end = poc_now_ms() + timeout_ms;
        do {
                if (poc_task_get(p, t) == 200 && strcmp(poc_task_state(t), "running") != 0 &&
                    strcmp(poc_task_state(t), "starting") != 0)
                        return true;
        } while (poc_now_ms() < end && poc_sleep_ms(p, 25));
        return false;
}

void hw_cancel_wait(poc_ctx *p, poc_task *t)
{
        if (!t->id)
                return;
        poc_cancel(p, t);
        (void)poc_wait_state(p, t, "succeeded|failed|cancelled", 10000);
}

void hw_measure_time(json_t *rec, const char *name, double ms, double limit, const char *note)
{
        char n[256];
        if (ms >= 0) {
                poc_measure(rec, name, ms, "ms", "<=", limit, note);
                return;
        }
        snprintf(n, sizeof(n), "%s: happened", name);
        poc_measure(rec, n, 0, "bool", "==", 1, note && *note ? note : "not within the wait");
}
