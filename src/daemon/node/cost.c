/* SPDX-License-Identifier: Apache-2.0 */
/* cost.c - runs of tasks on their units (what each start held, for how long, and the device
 * time it used) and GET /v1/cost: GPU-hours granted and used per tenant, route and unit kind
 * for any period. docs/STATE.md "Runs and cost" defines the figures. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "node.h"
#include "kerf/slice_abi.h"

/* ---- the fraction of one GPU a unit grants ------------------------------------------------ */

static const kerf_gpu_model *unit_model(const kerfd_node *n, const dunit *u)
{
        if (!n->fleet || u->gpu >= n->fleet->n_gpus)
                return NULL;
        return n->fleet->gpus[u->gpu].model;
}

/* MIG: the instance's compute slices over the GPU's (7 on A100/H100/H200, 4 on A30): the
 * share of the SMs it holds. Memory slices (of 8) would price a 7g instance below the
 * whole GPU it in fact occupies, and 1g at 1/8 although it holds 1/7 of the compute. */
static double mig_fraction(const kerf_gpu_model *m, const char *profile)
{
        const kerf_mig_profile *p = m && profile ? kerf_mig_profile_by_name(m, profile) : NULL;
        unsigned max = 0;

        if (!p)
                return 0;
        for (size_t i = 0; i < m->n_profiles; i++)
                if (m->profiles[i].compute_slices > max)
                        max = m->profiles[i].compute_slices;
        return max ? (double)p->compute_slices / max : 0;
}

double kerfd__unit_fraction(const kerfd_node *n, const dunit *u)
{
        const kerf_gpu_model *m = unit_model(n, u);
        double f;

        switch (u->kind) {
        case KERF_UNIT_WHOLE:
                return 1.0;
        case KERF_UNIT_MIG:
                return mig_fraction(m, u->mig_profile);
        default:
                /* slice, mps, tslice: the reserved compute share; a grant without one (a
                 * time-slice or memory-only share) holds its part of the GPU's memory */
                if (u->compute > 0)
                        f = u->compute / 100.0;
                else if (m && m->mem_bytes)
                        f = (double)u->mem / (double)m->mem_bytes;
                else
                        f = 0;
                return f > 1 ? 1 : f;
        }
}

const char *kerfd__cost_route(kerf_unit_kind k)
{
        switch (k) {
        case KERF_UNIT_WHOLE:
                return "whole";
        case KERF_UNIT_MIG:
                return "hardware";
        default:
                return "software";
        }
}

/* ---- the record of a run ------------------------------------------------------------------ */

int64_t kerfd__run_used_ns(const dtask *t)
{
        uint64_t dev;

        /* measured device time exists only where the shim charges it: a software slice's
         * region. Unenforced (no shim), whole GPUs and MIG instances: not measured. */
        if (!t->region || t->unenforced)
                return -1;
        dev = atomic_load(&t->region->device_time_ns);
        return dev >= t->run_dev_base ? (int64_t)(dev - t->run_dev_base) : 0;
}

void kerfd__tx_run(kerfd_node *n, kerfd_tx *x, dtask *t, int64_t used_ns)
{
        bool on = t->n_units && t->rec.started_ms > 0 &&
                  (t->state == KERF_TASK_STARTING || t->state == KERF_TASK_RUNNING);

        if (on) {
                kerf_store_run run;
                memset(&run, 0, sizeof(run));
                run.task = t->rec.id;
                snprintf(run.tenant, sizeof(run.tenant), "%s", t->rec.tenant);
                snprintf(run.route, sizeof(run.route), "%s", kerfd__cost_route(t->units[0].kind));
                snprintf(run.unit_kind, sizeof(run.unit_kind), "%s",
                         kerf_unit_kind_name(t->units[0].kind));
                run.units = t->n_units;
                for (unsigned i = 0; i < t->n_units; i++)
                        run.fraction += kerfd__unit_fraction(n, &t->units[i]);
                if (run.fraction <= 0)
                        run.fraction = 1e-9; /* unknown model: recorded, priced at ~0 */
                run.started_ms = t->rec.started_ms;
                if (!t->run_open) {
                        /* a resume in place continues a region whose device time counts
                         * from its first start: this run uses what comes after now */
                        t->run_dev_base = t->region ? atomic_load(&t->region->device_time_ns) : 0;
                        t->run_open = true;
                }
                kerfd__tx_run_open(x, &run);
                return;
        }
        kerfd__tx_run_close(
            x, t->rec.id, t->rec.ended_ms > 0 ? t->rec.ended_ms : (int64_t)kerfd_now_ms(), used_ns);
        t->run_open = false;
}

/* ---- GET /v1/cost -------------------------------------------------------------------------- */

enum { BY_TENANT = 1, BY_ROUTE = 2, BY_KIND = 4 };

typedef struct cgroup {
        char tenant[KERF_NAME_LEN], route[KERF_STORE_WORD_LEN], kind[KERF_STORE_WORD_LEN];
        double granted_h, used_h;
        bool unmeasured; /* a run without measured device time contributed */
        size_t tasks;
} cgroup;

typedef struct cpair {
        size_t group;
        uint64_t task;
} cpair;

typedef struct cctx {
        kerfd_node *n;
        int64_t from, to, now;
        unsigned by;
        cgroup *g;
        size_t ng, capg;
        cpair *p;
        size_t np, capp;
        size_t runs, open_runs, unmeasured_runs;
        bool oom;
} cctx;

static long find_group(cctx *c, const kerf_store_run *run)
{
        const char *t = c->by & BY_TENANT ? run->tenant : "";
        const char *ro = c->by & BY_ROUTE ? run->route : "";
        const char *k = c->by & BY_KIND ? run->unit_kind : "";

        for (size_t i = 0; i < c->ng; i++)
                if (!strcmp(c->g[i].tenant, t) && !strcmp(c->g[i].route, ro) &&
                    !strcmp(c->g[i].kind, k))
                        return (long)i;
        if (c->ng == c->capg) {
                size_t nc = c->capg ? c->capg * 2 : 8;
                cgroup *ng = realloc(c->g, nc * sizeof(*ng));
                if (!ng)
                        return -1;
                c->g = ng;
                c->capg = nc;
        }
        cgroup *g = &c->g[c->ng];
        memset(g, 0, sizeof(*g));
        snprintf(g->tenant, sizeof(g->tenant), "%s", t);
        snprintf(g->route, sizeof(g->route), "%s", ro);
        snprintf(g->kind, sizeof(g->kind), "%s", k);
        return (long)c->ng++;
}

static int cost_run(const kerf_store_run *run, void *ud)
{
        cctx *c = ud;
        int64_t end = run->ended_ms ? run->ended_ms : c->now;
        int64_t a = run->started_ms > c->from ? run->started_ms : c->from;
        int64_t b = end < c->to ? end : c->to;
        int64_t used = run->used_ns;
        long gi;

        if (b <= a)
                return 0; /* an open run that started after now, or a zero-length one */
        if (!run->ended_ms) {
                /* still running: its device time so far, from the live task */
                dtask *t = kerfd__live(c->n, run->task);
                used = t ? kerfd__run_used_ns(t) : -1;
                c->open_runs++;
        }
        if ((gi = find_group(c, run)) < 0)
                return -1;
        cgroup *g = &c->g[gi];
        g->granted_h += run->fraction * (double)(b - a) / 3.6e6;
        if (used >= 0) {
                /* device time of a run cut by the period: its part in proportion */
                double share =
                    end > run->started_ms ? (double)(b - a) / (double)(end - run->started_ms) : 1.0;
                g->used_h += (double)used * share / 3.6e12;
        } else {
                g->unmeasured = true;
                c->unmeasured_runs++;
        }
        if (c->np == c->capp) {
                size_t nc = c->capp ? c->capp * 2 : 32;
                cpair *np = realloc(c->p, nc * sizeof(*np));
                if (!np)
                        return -1;
                c->p = np;
                c->capp = nc;
        }
        c->p[c->np++] = (cpair){(size_t)gi, run->task};
        c->runs++;
        return 0;
}

static int pair_cmp(const void *a, const void *b)
{
        const cpair *x = a, *y = b;
        if (x->group != y->group)
                return x->group < y->group ? -1 : 1;
        return x->task < y->task ? -1 : x->task > y->task;
}

static int group_cmp(const void *a, const void *b)
{
        const cgroup *x = a, *y = b;
        int r = strcmp(x->tenant, y->tenant);
        if (!r)
                r = strcmp(x->route, y->route);
        return r ? r : strcmp(x->kind, y->kind);
}

static bool arg_ms(kreq *r, const char *name, int64_t *ret)
{
        const char *a = kreq_arg(r, name);
        uint64_t v;

        if (!a)
                return true;
        if (!api_u64(a, &v) || v > (uint64_t)INT64_MAX) {
                kreq_error(r, 400, "invalid_argument",
                           "%s: \"%.40s\" is not a time (integer milliseconds since the Unix "
                           "epoch, 0..%lld)",
                           name, a, (long long)INT64_MAX);
                return false;
        }
        *ret = (int64_t)v;
        return true;
}

static bool arg_by(kreq *r, unsigned *ret)
{
        const char *a = kreq_arg(r, "by");
        unsigned by = 0;

        if (!a) {
                *ret = BY_TENANT | BY_ROUTE | BY_KIND;
                return true;
        }
        for (const char *p = a; *p;) {
                size_t l = strcspn(p, ",");
                unsigned bit = l == 6 && !strncmp(p, "tenant", 6)      ? BY_TENANT
                               : l == 5 && !strncmp(p, "route", 5)     ? BY_ROUTE
                               : l == 9 && !strncmp(p, "unit_kind", 9) ? BY_KIND
                                                                       : 0;
                if (!bit || (by & bit)) {
                        kreq_error(r, 400, "invalid_argument",
                                   "by: \"%.60s\" %s: a comma-separated list of tenant, route, "
                                   "unit_kind, each at most once",
                                   a, bit ? "names a key twice" : "has an unknown key");
                        return false;
                }
                by |= bit;
                p += l;
                if (*p == ',' && !*++p)
                        by = 0; /* a trailing comma */
        }
        if (!by) {
                kreq_error(r, 400, "invalid_argument",
                           "by: \"%.60s\": a comma-separated list of tenant, route, unit_kind "
                           "(at least one)",
                           a);
                return false;
        }
        *ret = by;
        return true;
}

#define COST_NOTES                                                                                 \
        "granted_gpu_hours: the fraction of one GPU each run held (whole GPU 1 per GPU; MIG "      \
        "compute slices / the GPU's; slice, mps: compute share %; tslice or memory-only: "         \
        "memory / the GPU's memory) times the time it held it, clipped to [from_ms, to_ms). "      \
        "used_gpu_hours: device time measured by the shim in software slices; null where a "       \
        "run was not measured (whole GPUs, MIG instances and unenforced slices: kerfd does not "   \
        "sample per-process device time there), so a total with any such run is null."

void kerfd_api_cost(kreq *r)
{
        kerfd_node *n = r->node;
        cctx c = {.n = n};
        const char *scope = r->tenant[0] ? r->tenant : NULL;
        json_t *items, *j;
        double tg = 0, tu = 0;
        bool tun = false;
        char notes[1024];
        int rc;

        c.now = (int64_t)kerfd_now_ms();
        c.from = 0;
        c.to = c.now;
        if (!arg_ms(r, "from_ms", &c.from) || !arg_ms(r, "to_ms", &c.to) || !arg_by(r, &c.by))
                return;
        if (c.to <= c.from) {
                kreq_error(r, 400, "invalid_argument",
                           "to_ms: %lld is not after from_ms %lld (the period is [from_ms, "
                           "to_ms))",
                           (long long)c.to, (long long)c.from);
                return;
        }
        if (!r->admin && !scope) {
                kreq_error(r, 401, "unauthorized", "cost: a tenant token is required");
                return;
        }
        rc = kerf_store_run_foreach(n->store, scope, c.from, c.to, cost_run, &c);
        if (rc < 0) {
                free(c.g);
                free(c.p);
                kreq_error(r, 500, "internal", "cost: %s",
                           rc == -1 ? "out of memory" : kerf_store_errmsg(n->store));
                return;
        }
        /* distinct tasks per group */
        if (c.np) /* qsort(NULL, 0) is undefined */
                qsort(c.p, c.np, sizeof(*c.p), pair_cmp);
        for (size_t i = 0; i < c.np; i++)
                if (i == 0 || c.p[i].group != c.p[i - 1].group || c.p[i].task != c.p[i - 1].task)
                        c.g[c.p[i].group].tasks++;
        if (c.ng)
                qsort(c.g, c.ng, sizeof(*c.g), group_cmp);
        items = json_array();
        for (size_t i = 0; i < c.ng; i++) {
                cgroup *g = &c.g[i];
                tg += g->granted_h;
                tu += g->used_h;
                tun |= g->unmeasured;
                json_array_append_new(
                    items,
                    json_pack("{s:o, s:o, s:o, s:I, s:f, s:o}", "tenant",
                              c.by & BY_TENANT ? json_string(g->tenant) : json_null(), "route",
                              c.by & BY_ROUTE ? json_string(g->route) : json_null(), "unit_kind",
                              c.by & BY_KIND ? json_string(g->kind) : json_null(), "tasks",
                              (json_int_t)g->tasks, "granted_gpu_hours", g->granted_h,
                              "used_gpu_hours",
                              g->unmeasured ? json_null() : json_real(g->used_h)));
        }
        snprintf(notes, sizeof(notes),
                 "%s %zu run%s counted (%zu still running, counted up to now; %zu without "
                 "measured device time).%s",
                 COST_NOTES, c.runs, c.runs == 1 ? "" : "s", c.open_runs, c.unmeasured_runs,
                 kerfd__store_ok(n) ? ""
                                    : " The store cannot write now: changes waiting to be "
                                      "recorded are not counted yet.");
        j = json_pack("{s:I, s:I, s:o, s:{s:f, s:o}, s:s}", "from_ms", (json_int_t)c.from, "to_ms",
                      (json_int_t)c.to, "items", items, "totals", "granted_gpu_hours", tg,
                      "used_gpu_hours", tun ? json_null() : json_real(tu), "notes", notes);
        free(c.g);
        free(c.p);
        kreq_json(r, 200, j);
}
