/* SPDX-License-Identifier: Apache-2.0 */
/* test_random.c - randomised event sequences on several fleets, every invariant checked after
 * every event. KERF_SEED overrides the seed, KERF_RANDOM_EVENTS the events per fleet. */
#include "helpers.h"

#define MAX_LIVE    4096
#define MAX_ACTIONS 4096
#define PAIR_CAP    (1u << 16)

typedef struct rng {
        uint64_t s;
} rng;

static uint64_t rnd(rng *r)
{
        /* splitmix64: small, good enough, identical everywhere */
        uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
}

static unsigned below(rng *r, unsigned n)
{
        return (unsigned)(rnd(r) % n);
}

static bool chance(rng *r, unsigned pct)
{
        return below(r, 100) < pct;
}

typedef struct world {
        kerf_sched *s;
        rng r;
        uint64_t live[MAX_LIVE];
        size_t n_live, live_cap;
        uint64_t actions[MAX_ACTIONS]; /* units with a MIG create/destroy outstanding */
        size_t n_actions;
        uint64_t faulted_units[64];
        size_t n_fu;
        uint64_t pairs[PAIR_CAP]; /* preemptor << 32 | victim, open addressing; 0 = empty */
        size_t n_pairs;
        uint64_t hash; /* of the decision stream */
        uint64_t events, preempts, reclaims, starts, creates, destroys, refusals, faults;
        uint64_t passed; /* started ahead of a blocked head (backfill, best-effort) */
        const char *name;
        char log[8][128]; /* the last events, for failure messages */
} world;

#define LOG(w, ...) snprintf((w)->log[(w)->events % 8], sizeof((w)->log[0]), __VA_ARGS__)

static const char *const tenants[] = {"alpha", "beta", "gamma", "delta", "solo"};
#define N_TENANTS 5

static const char *const mig_names[] = {"1g.18gb",  "2g.35gb", "3g.71gb", "4g.71gb",
                                        "7g.141gb", "1g.10gb", "3g.40gb", "1g.18gb+me"};

static uint64_t quota_val(rng *r, kerf_res res)
{
        if (chance(r, 30))
                return KERF_UNLIMITED;
        switch (res) {
        case KERF_RES_GPUS:
                return below(r, 6);
        case KERF_RES_MEM:
                return (uint64_t)(below(r, 8) * 100) * KERF_GIB;
        case KERF_RES_COMPUTE:
                return below(r, 6) * 100;
        default:
                return below(r, 15);
        }
}

static void set_tenant(world *w, unsigned i)
{
        kerf_tenant_spec t;
        kerf_tenant_spec_init(&t, tenants[i]);
        t.cohort = i < 3 ? "pool" : i == 3 ? "other" : NULL;
        t.weight = 1 + below(&w->r, 4);
        for (unsigned r = 0; r < KERF_RES_COUNT; r++) {
                t.nominal[r] = quota_val(&w->r, (kerf_res)r);
                t.borrow_limit[r] = chance(&w->r, 50) ? KERF_UNLIMITED : quota_val(&w->r, r);
                t.lend_limit[r] = chance(&w->r, 50) ? KERF_UNLIMITED : quota_val(&w->r, r);
        }
        assert_int_equal(kerf_sched_tenant_set(w->s, &t), 0);
}

static void live_add(world *w, uint64_t id)
{
        assert_true(w->n_live < MAX_LIVE);
        w->live[w->n_live++] = id;
}

static void live_del(world *w, uint64_t id)
{
        for (size_t i = 0; i < w->n_live; i++)
                if (w->live[i] == id) {
                        w->live[i] = w->live[--w->n_live];
                        return;
                }
        fail_msg("task %llu not live", (unsigned long long)id);
}

static void dump_log(const world *w)
{
        for (unsigned i = 8; i > 0; i--)
                if (w->events >= i)
                        print_message("  event %llu: %s\n", (unsigned long long)(w->events - i),
                                      w->log[(w->events - i) % 8]);
}

static void after_event(world *w)
{
        w->events++;
        char err[512];
        if (kerf_sched_check(w->s, err, sizeof(err)) != 0) {
                dump_log(w);
                fail_msg("[%s event %llu] kerf_sched_check: %s", w->name,
                         (unsigned long long)w->events, err);
        }
        w->log[w->events % 8][0] = 0;
}

static void ev_submit(world *w)
{
        rng *r = &w->r;
        kerf_request q;
        kerf_request_init(&q);
        q.tenant = tenants[below(r, N_TENANTS)];
        q.queue = chance(r, 70) ? NULL : "q2";
        q.workload = (kerf_workload)below(r, KERF_WL_COUNT);
        q.tier = (kerf_tier)below(r, KERF_TIER_COUNT);
        q.priority = (int)below(r, 11) - 5;
        q.preemptible = chance(r, 60);
        if (chance(r, 25)) {
                q.route = (int)below(r, KERF_UNIT_KIND_COUNT);
                if (q.route == KERF_UNIT_MIG && chance(r, 60))
                        q.mig_profile = mig_names[below(r, 8)];
        }
        bool whole_ok =
            q.route == KERF_UNIT_WHOLE ||
            (q.route < 0 && (q.workload == KERF_WL_TRAINING || q.workload == KERF_WL_BATCH));
        if (whole_ok && chance(r, 35)) {
                static const unsigned g[] = {2, 2, 4, 8, 3};
                q.gpus = g[below(r, 5)];
        }
        unsigned m = below(r, 10);
        if (m < 5)
                q.mem_bytes = (1 + below(r, 40)) * KERF_GIB;
        else if (m < 7)
                q.mem_permille = 1 + below(r, 1000);
        else if (m == 7)
                q.mem_bytes = (40 + below(r, 120)) * KERF_GIB; /* some can never fit */
        q.compute_pct = chance(r, 30) ? 0 : 10 * below(r, 11);
        if (chance(r, 30))
                q.compute_limit_pct = q.compute_pct + below(r, 101 - q.compute_pct);
        if (chance(r, 20)) {
                q.cpu_milli = 1000 * (1 + below(r, 40));
                q.host_mem_bytes = (1 + below(r, 256)) * KERF_GIB;
        }
        if (chance(r, 50)) /* backfill candidates (and best-effort skips in q2) */
                q.max_runtime_s = 1 + below(r, 600);
        uint64_t id;
        kerf_reason why;
        int rc = kerf_sched_submit(w->s, &q, &id, &why);
        LOG(w, "submit %s %s/%s route %d prio %d -> %d id %llu", q.tenant,
            kerf_workload_name(q.workload), kerf_tier_name(q.tier), q.route, q.priority, rc,
            rc == 0 ? (unsigned long long)id : 0ULL);
        if (rc == 0)
                live_add(w, id);
        else if (rc != -KERF_ENEVER)
                fail_msg("[%s] submit: %s (%s)", w->name, kerf_strerror(rc), why.text);
}

static void ev_end(world *w)
{
        if (!w->n_live)
                return;
        uint64_t id = w->live[below(&w->r, (unsigned)w->n_live)];
        int rc = chance(&w->r, 50) ? kerf_sched_finish(w->s, id) : kerf_sched_cancel(w->s, id);
        LOG(w, "end task %llu (%s)", (unsigned long long)id, "finish/cancel");
        assert_int_equal(rc, 0);
        live_del(w, id);
}

static bool pair_seen(world *w, uint64_t a, uint64_t b, bool add)
{
        uint64_t key = a << 32 | b;
        size_t i = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 48) & (PAIR_CAP - 1);
        while (w->pairs[i]) {
                if (w->pairs[i] == key)
                        return true;
                i = (i + 1) & (PAIR_CAP - 1);
        }
        if (add && w->n_pairs < PAIR_CAP / 2) {
                w->pairs[i] = key;
                w->n_pairs++;
        }
        return false;
}

static void hash_dec(world *w, const kerf_decision *d)
{
        const uint64_t v[] = {
            d->kind,           d->seq,       d->task, d->by_task,     d->n_units,          d->gpu,
            d->mig_profile_id, d->mig_start, d->mode, d->reason.code, d->reason.other_task};
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
                w->hash = (w->hash ^ v[i]) * 0x100000001B3ULL;
        for (unsigned i = 0; i < d->n_units; i++)
                w->hash = (w->hash ^ d->units[i]) * 0x100000001B3ULL;
        for (const char *c = d->reason.text; *c; c++)
                w->hash = (w->hash ^ (unsigned char)*c) * 0x100000001B3ULL;
}

static void check_preempt(world *w, const kerf_decision *d)
{
        kerf_task_info v, p;
        assert_int_equal(kerf_sched_task_get(w->s, d->task, &v), 0);
        if (d->by_task == 0 || d->reason.other_task != d->by_task)
                fail_msg("[%s] PREEMPT of %llu without its preemptor", w->name,
                         (unsigned long long)d->task);
        assert_int_equal(kerf_sched_task_get(w->s, d->by_task, &p), 0);
        if (d->reason.code == KERF_WHY_RECLAIMED) {
                w->reclaims++;
                if (strcmp(v.tenant, p.tenant) == 0)
                        fail_msg("[%s] tenant %s reclaimed from itself", w->name, v.tenant);
        } else if (d->reason.code == KERF_WHY_PREEMPTED) {
                if (!(v.priority < p.priority) || !v.preemptible)
                        fail_msg("[%s] task %llu (prio %d, preemptible %d) preempted by %llu "
                                 "(prio %d)",
                                 w->name, (unsigned long long)v.id, v.priority, v.preemptible,
                                 (unsigned long long)p.id, p.priority);
        } else {
                fail_msg("[%s] PREEMPT with reason %s", w->name, kerf_why_name(d->reason.code));
        }
        if (getenv("KERF_RANDOM_TRACE"))
                print_message("[%s] preempt %llu (%s prio %d) by %llu (%s prio %d borrowing %d): "
                              "%s\n",
                              w->name, (unsigned long long)v.id, v.tenant, v.priority,
                              (unsigned long long)p.id, p.tenant, p.priority, p.borrowing,
                              d->reason.text);
        if (pair_seen(w, d->task, d->by_task, false))
                fail_msg("[%s] preemption loop: %llu and %llu evict each other (%s)", w->name,
                         (unsigned long long)d->task, (unsigned long long)d->by_task,
                         d->reason.text);
        pair_seen(w, d->by_task, d->task, true);
        w->preempts++;
}

static void ev_step(world *w)
{
        LOG(w, "step");
        static kerf_decision d[256];
        int n, rounds = 0;
        do {
                if (++rounds > 200)
                        fail_msg("[%s] kerf_sched_step does not settle: %s of %llu by %llu: %s",
                                 w->name, kerf_decision_kind_name(d[255].kind),
                                 (unsigned long long)d[255].task,
                                 (unsigned long long)d[255].by_task, d[255].reason.text);
                n = kerf_sched_step(w->s, d, 256);
                assert_true(n >= 0);
                if (rounds == 200 && getenv("KERF_RANDOM_TRACE"))
                        for (int i = 0; i < n && i < 12; i++)
                                print_message("  %s %llu by %llu: %s\n",
                                              kerf_decision_kind_name(d[i].kind),
                                              (unsigned long long)d[i].task,
                                              (unsigned long long)d[i].by_task, d[i].reason.text);
                for (int i = 0; i < n; i++) {
                        hash_dec(w, &d[i]);
                        switch (d[i].kind) {
                        case KERF_DEC_PREEMPT:
                                check_preempt(w, &d[i]);
                                break;
                        case KERF_DEC_START:
                                /* nothing new on a draining GPU (a MIG instance may come from
                                 * a create planned before the drain) */
                                for (unsigned u = 0; u < d[i].n_units; u++) {
                                        kerf_unit_info ui; /* gone: preempted in the same step */
                                        if (kerf_sched_unit_get(w->s, d[i].units[u], &ui) == 0 &&
                                            ui.kind != KERF_UNIT_MIG &&
                                            gpu_state(w->s, ui.gpu).draining)
                                                fail_msg("[%s] task %llu started on draining GPU "
                                                         "%u",
                                                         w->name, (unsigned long long)d[i].task,
                                                         ui.gpu);
                                }
                                w->starts++;
                                w->passed += strncmp(d[i].reason.text, "backfilled", 10) == 0 ||
                                             strncmp(d[i].reason.text, "best-effort", 11) == 0;
                                break;
                        case KERF_DEC_MIG_CREATE:
                        case KERF_DEC_MIG_DESTROY:
                                w->creates += d[i].kind == KERF_DEC_MIG_CREATE;
                                w->destroys += d[i].kind == KERF_DEC_MIG_DESTROY;
                                assert_int_equal(d[i].n_units, 1);
                                assert_true(w->n_actions < MAX_ACTIONS);
                                w->actions[w->n_actions++] = d[i].units[0];
                                break;
                        default:
                                break;
                        }
                }
        } while (n == 256);
        /* every STARTING task waits on an action the backend still has to confirm */
        uint64_t st[512];
        size_t ns = kerf_sched_task_list(w->s, KERF_TASK_STARTING, st, 512);
        for (size_t i = 0; i < ns && i < 512; i++) {
                bool waits = false;
                for (size_t a = 0; a < w->n_actions && !waits; a++) {
                        kerf_unit_info u;
                        if (kerf_sched_unit_get(w->s, w->actions[a], &u) == 0 &&
                            (u.state == KERF_UNIT_CREATING || u.state == KERF_UNIT_DESTROYING))
                                waits = true;
                }
                if (!waits)
                        fail_msg("[%s] task %llu STARTING with nothing outstanding", w->name,
                                 (unsigned long long)st[i]);
        }
}

static void ev_mig_done(world *w)
{
        if (!w->n_actions)
                return;
        size_t i = below(&w->r, (unsigned)w->n_actions);
        uint64_t unit = w->actions[i];
        w->actions[i] = w->actions[--w->n_actions];
        kerf_unit_info u;
        bool faulted = kerf_sched_unit_get(w->s, unit, &u) == 0 && u.state == KERF_UNIT_FAULT;
        bool refuse = chance(&w->r, 20);
        int rc = kerf_sched_mig_done(w->s, unit, refuse ? -KERF_EBACKEND : 0);
        LOG(w, "mig_done unit %llu (%s on GPU %u) %s -> %d", (unsigned long long)unit,
            kerf_unit_state_name(u.state), u.gpu, refuse ? "refused" : "ok", rc);
        w->refusals += refuse;
        if (rc != 0 && !(faulted && rc == -KERF_ESTATE)) {
                w->events++;
                dump_log(w);
                fail_msg("[%s] mig_done(%llu): %s", w->name, (unsigned long long)unit,
                         kerf_strerror(rc));
        }
}

static void ev_fault(world *w)
{
        rng *r = &w->r;
        const kerf_fleet *f = kerf_sched_fleet(w->s);
        unsigned g = below(r, (unsigned)f->n_gpus);
        uint64_t unit = 0;
        if (chance(r, 40)) {
                kerf_unit_info us[64];
                size_t n = kerf_sched_unit_list(w->s, (int)g, us, 64);
                if (n == 0)
                        return;
                unit = us[below(r, (unsigned)(n < 64 ? n : 64))].id;
        }
        bool requeue = chance(r, 60);
        uint64_t hit[512];
        int n = kerf_sched_fault(w->s, g, unit, requeue, hit, 512);
        LOG(w, "fault GPU %u unit %llu requeue %d -> %d", g, (unsigned long long)unit, requeue, n);
        assert_true(n >= 0 && n <= 512);
        w->faults++;
        if (!requeue)
                for (int i = 0; i < n; i++)
                        live_del(w, hit[i]);
        if (unit) {
                kerf_unit_info u;
                if (kerf_sched_unit_get(w->s, unit, &u) == 0 && u.state == KERF_UNIT_FAULT &&
                    w->n_fu < 64)
                        w->faulted_units[w->n_fu++] = unit;
        }
}

static void ev_recover(world *w)
{
        const kerf_fleet *f = kerf_sched_fleet(w->s);
        if (w->n_fu && chance(&w->r, 50)) {
                uint64_t unit = w->faulted_units[--w->n_fu];
                kerf_unit_info u;
                if (kerf_sched_unit_get(w->s, unit, &u) == 0 && u.state == KERF_UNIT_FAULT)
                        assert_int_equal(kerf_sched_recover(w->s, u.gpu, unit), 0);
                return;
        }
        for (unsigned g = 0; g < f->n_gpus; g++) {
                kerf_gpu_state gs = gpu_state(w->s, g);
                if (gs.faulted) {
                        assert_int_equal(kerf_sched_recover(w->s, g, 0), 0);
                        return;
                }
        }
}

/* An operator: drains or resumes a GPU, or holds, releases or updates a live task. */
static void ev_control(world *w)
{
        rng *r = &w->r;
        const kerf_fleet *f = kerf_sched_fleet(w->s);
        if (chance(r, 30)) {
                unsigned g = below(r, (unsigned)f->n_gpus);
                bool on = !gpu_state(w->s, g).draining;
                LOG(w, "%s GPU %u", on ? "drain" : "resume", g);
                assert_int_equal(kerf_sched_gpu_drain(w->s, g, on), 0);
                return;
        }
        if (!w->n_live)
                return;
        uint64_t id = w->live[below(r, (unsigned)w->n_live)];
        kerf_task_info ti = task_info(w->s, id);
        unsigned k = below(r, 3);
        if (ti.state != KERF_TASK_PENDING) {
                assert_int_equal(kerf_sched_task_hold(w->s, id, NULL), -KERF_ESTATE);
                return;
        }
        if (k == 0) {
                LOG(w, "hold %llu", (unsigned long long)id);
                assert_int_equal(kerf_sched_task_hold(w->s, id, "held by admin"), 0);
        } else if (k == 1) {
                LOG(w, "release %llu (held %d)", (unsigned long long)id, ti.held);
                assert_int_equal(kerf_sched_task_release(w->s, id), ti.held ? 0 : -KERF_ESTATE);
        } else {
                kerf_task_update u = {.set_priority = true,
                                      .priority = (int)below(r, 11) - 5,
                                      .set_max_runtime = chance(r, 50),
                                      .max_runtime_s = below(r, 4) * 60};
                LOG(w, "update %llu priority %d", (unsigned long long)id, u.priority);
                assert_int_equal(kerf_sched_task_update(w->s, id, &u, NULL), 0);
        }
}

/* The scheduler's clock: advanced by every event (backfill and starvation read it). */
static uint64_t clock_ms;

static uint64_t world_clock(void *arg)
{
        (void)arg;
        return clock_ms;
}

static void one_event(world *w)
{
        clock_ms += below(&w->r, 3000);
        unsigned e = below(&w->r, 1000);
        if (e < 380) {
                if (w->n_live >= w->live_cap)
                        ev_end(w);
                else
                        ev_submit(w);
        } else if (e < 600) {
                ev_step(w);
        } else if (e < 760) {
                ev_end(w);
        } else if (e < 940) {
                ev_mig_done(w);
        } else if (e < 955) {
                set_tenant(w, below(&w->r, N_TENANTS));
                w->n_pairs = 0; /* new quotas: new rules for reclaim */
                memset(w->pairs, 0, sizeof(w->pairs));
        } else if (e < 970) {
                ev_fault(w);
        } else if (e < 985) {
                ev_recover(w);
        } else if (e < 993) {
                ev_control(w);
        } else {
                /* explain a random task: must not change anything */
                if (w->n_live) {
                        kerf_explain ex;
                        uint64_t id = w->live[below(&w->r, (unsigned)w->n_live)];
                        assert_int_equal(kerf_sched_explain(w->s, id, &ex), 0);
                        assert_true(ex.reason.text[0] != 0);
                }
        }
        after_event(w);
}

/* Confirms everything, recovers everything, ends everything: the fleet must come back clean. */
static void drain(world *w)
{
        for (int round = 0; round < 64 && (w->n_actions || round == 0); round++) {
                while (w->n_actions) {
                        uint64_t unit = w->actions[--w->n_actions];
                        kerf_unit_info u;
                        if (kerf_sched_unit_get(w->s, unit, &u) == 0 && u.state == KERF_UNIT_FAULT)
                                continue;
                        assert_int_equal(kerf_sched_mig_done(w->s, unit, 0), 0);
                        after_event(w);
                }
                while (w->n_live) {
                        assert_int_equal(kerf_sched_cancel(w->s, w->live[0]), 0);
                        live_del(w, w->live[0]);
                        after_event(w);
                }
                ev_step(w);
        }
        assert_int_equal(w->n_live, 0);
        kerf_sched_stats st;
        kerf_sched_stats_get(w->s, &st);
        assert_int_equal(st.pending, 0);
        assert_int_equal(st.running, 0);
        const kerf_fleet *f = kerf_sched_fleet(w->s);
        for (unsigned g = 0; g < f->n_gpus; g++) {
                if (gpu_state(w->s, g).faulted)
                        assert_int_equal(kerf_sched_recover(w->s, g, 0), 0);
                kerf_unit_info us[16];
                size_t n = kerf_sched_unit_list(w->s, (int)g, us, 16);
                kerf_gpu_state gs = gpu_state(w->s, g);
                if (!f->gpus[g].mig_enabled) {
                        assert_int_equal(n, 0);
                        assert_int_equal(gs.mode, KERF_GPU_MODE_FREE);
                }
                for (size_t i = 0; i < n && i < 16; i++)
                        if (us[i].state != KERF_UNIT_READY && us[i].state != KERF_UNIT_FAULT)
                                fail_msg("[%s] GPU %u unit %llu left %s", w->name, g,
                                         (unsigned long long)us[i].id,
                                         kerf_unit_state_name(us[i].state));
                /* every idle MIG layout must still take a full 7g after the instances go */
        }
        for (unsigned i = 0; i < N_TENANTS; i++) {
                uint64_t use[KERF_RES_COUNT];
                assert_int_equal(kerf_sched_tenant_usage(w->s, tenants[i], use), 0);
                for (unsigned r = 0; r < KERF_RES_COUNT; r++)
                        assert_int_equal(use[r], 0);
        }
        after_event(w);
}

static uint64_t seed_get(void)
{
        const char *e = getenv("KERF_SEED");
        return e && *e ? strtoull(e, NULL, 0) : 0x6b657266ULL;
}

static uint64_t events_get(void)
{
        const char *e = getenv("KERF_RANDOM_EVENTS");
        return e && *e ? strtoull(e, NULL, 0) : 100000;
}

static uint64_t run(const char *name, kerf_fleet *f, uint64_t seed, uint64_t events,
                    size_t live_cap)
{
        static world w;
        memset(&w, 0, sizeof(w));
        w.name = name;
        w.r.s = seed;
        w.live_cap = live_cap;
        w.hash = 0xcbf29ce484222325ULL;
        kerf_policy p;
        kerf_policy_default(&p);
        w.s = sched_over(f, &p);
        clock_ms = 0;
        kerf_sched_clock_set(w.s, world_clock, NULL);
        kerf_queue_spec qs;
        kerf_queue_spec_default(&qs);
        qs.mode = KERF_QUEUE_BEST_EFFORT;
        qs.starvation_s = 120;
        assert_int_equal(kerf_sched_queue_set(w.s, "q2", &qs), 0);
        for (unsigned i = 0; i < N_TENANTS; i++)
                set_tenant(&w, i);
        while (w.events < events)
                one_event(&w);
        drain(&w);
        print_message("%s: seed %#llx, %llu events, %llu starts (%llu ahead of a blocked head), "
                      "%llu preemptions (%llu "
                      "reclaims), %llu MIG creates, %llu destroys, %llu refused, %llu faults\n",
                      name, (unsigned long long)seed, (unsigned long long)w.events,
                      (unsigned long long)w.starts, (unsigned long long)w.passed,
                      (unsigned long long)w.preempts, (unsigned long long)w.reclaims,
                      (unsigned long long)w.creates, (unsigned long long)w.destroys,
                      (unsigned long long)w.refusals, (unsigned long long)w.faults);
        kerf_sched_free(w.s);
        return w.hash;
}

static kerf_fleet *fleet_mixed64(void)
{
        /* the shape of examples/fleet-mixed-64.yaml */
        kerf_fleet *f = NULL;
        assert_int_equal(kerf_fleet_new(&f), 0);
        static const struct {
                const char *name, *model;
                uint8_t mig;
                uint64_t cpu, mem;
        } nodes[] = {
            {"h200-mig-0", "H200", 0x0f, 112000, 2048 * KERF_GIB},
            {"h200-mig-1", "H200", 0x0f, 112000, 2048 * KERF_GIB},
            {"h200-0", "H200", 0, 112000, 2048 * KERF_GIB},
            {"h200-1", "H200", 0, 112000, 2048 * KERF_GIB},
            {"h100-0", "H100-80GB", 0x01, 112000, 2048 * KERF_GIB},
            {"h100-1", "H100-80GB", 0x01, 112000, 2048 * KERF_GIB},
            {"a100-0", "A100-80GB", 0xc0, 128000, 1024 * KERF_GIB},
            {"a100-1", "A100-80GB", 0xc0, 128000, 1024 * KERF_GIB},
        };
        for (unsigned n = 0; n < 8; n++) {
                int node = kerf_fleet_add_node(f, nodes[n].name, nodes[n].cpu, nodes[n].mem,
                                               "550.54.15", 12040);
                assert_int_equal(node, (int)n);
                for (unsigned i = 0; i < 8; i++)
                        assert_true(kerf_fleet_add_gpu(f, n, model(nodes[n].model),
                                                       (nodes[n].mig >> i) & 1, i < 4 ? 0 : 1,
                                                       NULL) >= 0);
                for (unsigned i = 0; i < 8; i++)
                        for (unsigned j = i + 1; j < 8; j++)
                                assert_int_equal(kerf_fleet_link(f, n * 8 + i, n * 8 + j), 0);
        }
        return f;
}

static kerf_fleet *fleet_small(void)
{
        kerf_fleet *f = NULL;
        assert_int_equal(kerf_fleet_new(&f), 0);
        fleet_add_node(f, "tiny", "H200", 2, 1, false, 32000, 256 * KERF_GIB);
        return f;
}

static void random_h200(void **state)
{
        (void)state;
        run("8xH200", fleet_h200(8, 2), seed_get(), events_get(), 120);
}

static void random_mixed64(void **state)
{
        (void)state;
        run("mixed64", fleet_mixed64(), seed_get() + 1, events_get(), 400);
}

static void random_small(void **state)
{
        (void)state;
        uint64_t seed = seed_get() + 2;
        uint64_t h1 = run("2-GPU", fleet_small(), seed, events_get(), 40);
        /* determinism: the same events give the same decision stream */
        uint64_t h2 = run("2-GPU again", fleet_small(), seed, events_get() / 10, 40);
        uint64_t h3 = run("2-GPU again", fleet_small(), seed, events_get() / 10, 40);
        assert_true(h1 != 0);
        assert_int_equal(h2, h3);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(random_small),
            cmocka_unit_test(random_h200),
            cmocka_unit_test(random_mixed64),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
