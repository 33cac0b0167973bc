/* SPDX-License-Identifier: Apache-2.0 */
/* helpers.h - fleets, tenants, requests and decision look-ups shared by the scheduler tests */
#ifndef KERF_TEST_SCHED_HELPERS_H
#define KERF_TEST_SCHED_HELPERS_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kerf/core.h"
#include "kerf/errno.h"
#include "kerf/sched.h"

#define H200_MEM (143771ULL * KERF_MIB)
#define DEC_MAX  4096

static inline const kerf_gpu_model *model(const char *name)
{
        const kerf_gpu_model *m = kerf_gpu_model_find(name);
        assert_non_null(m);
        return m;
}

/* One node of `n` GPUs of `m`: the first n_mig MIG-enabled, NUMA 0 for the first half, all
 * joined by NVLink when `link`. Node CPU/host memory unaccounted unless given. */
static inline int fleet_add_node(kerf_fleet *f, const char *name, const char *m, unsigned n,
                                 unsigned n_mig, bool link, uint64_t cpu, uint64_t hmem)
{
        int node = kerf_fleet_add_node(f, name, cpu, hmem, "550.54.15", 12040);
        assert_true(node >= 0);
        int first = -1;
        for (unsigned i = 0; i < n; i++) {
                int g = kerf_fleet_add_gpu(f, (unsigned)node, model(m), i < n_mig,
                                           i < (n + 1) / 2 ? 0 : 1, NULL);
                assert_true(g >= 0);
                if (first < 0)
                        first = g;
        }
        if (link)
                for (unsigned i = 0; i < n; i++)
                        for (unsigned j = i + 1; j < n; j++)
                                assert_int_equal(
                                    kerf_fleet_link(f, (unsigned)first + i, (unsigned)first + j),
                                    0);
        return node;
}

/* 8 x H200 on one node, the first n_mig in MIG mode. */
static inline kerf_fleet *fleet_h200(unsigned n_gpus, unsigned n_mig)
{
        kerf_fleet *f = NULL;
        assert_int_equal(kerf_fleet_new(&f), 0);
        fleet_add_node(f, "node0", "H200", n_gpus, n_mig, true, 0, 0);
        return f;
}

static inline kerf_sched *sched_over(kerf_fleet *f, const kerf_policy *p)
{
        kerf_sched *s = NULL;
        assert_int_equal(kerf_sched_new(f, p, &s), 0);
        kerf_fleet_free(f);
        return s;
}

static inline void check_ok(const kerf_sched *s)
{
        char err[512] = "";
        int r = kerf_sched_check(s, err, sizeof(err));
        if (r != 0)
                fail_msg("kerf_sched_check: %s", err);
}

/* A tenant with unlimited quota (or the given nominal values when nominal != NULL). */
static inline void tenant_add(kerf_sched *s, const char *name, const char *cohort,
                              const uint64_t *nominal, unsigned weight)
{
        kerf_tenant_spec t;
        kerf_tenant_spec_init(&t, name);
        t.cohort = cohort;
        t.weight = weight;
        if (nominal)
                memcpy(t.nominal, nominal, sizeof(t.nominal));
        assert_int_equal(kerf_sched_tenant_set(s, &t), 0);
}

static inline kerf_request req(const char *tenant, kerf_workload w, kerf_tier tier)
{
        kerf_request r;
        kerf_request_init(&r);
        r.tenant = tenant;
        r.workload = w;
        r.tier = tier;
        return r;
}

static inline uint64_t submit_ok(kerf_sched *s, const kerf_request *r)
{
        uint64_t id = 0;
        kerf_reason why;
        int rc = kerf_sched_submit(s, r, &id, &why);
        if (rc != 0)
                fail_msg("submit: %s (%s)", kerf_strerror(rc), why.text);
        return id;
}

/* Runs steps until no more decisions come; returns how many were written to out. */
static inline size_t step_all(kerf_sched *s, kerf_decision *out, size_t cap)
{
        size_t n = 0;
        for (;;) {
                size_t room = cap - n < 64 ? cap - n : 64;
                assert_true(room > 0);
                int r = kerf_sched_step(s, out + n, room);
                assert_true(r >= 0);
                n += (size_t)r;
                if ((size_t)r < room)
                        break;
        }
        check_ok(s);
        return n;
}

/* Steps with a private decision buffer; returns the number of decisions. */
static inline size_t step_n(kerf_sched *s)
{
        static kerf_decision d[DEC_MAX];
        return step_all(s, d, DEC_MAX);
}

static inline const kerf_decision *dec_find(const kerf_decision *d, size_t n, kerf_decision_kind k,
                                            uint64_t task)
{
        for (size_t i = 0; i < n; i++)
                if (d[i].kind == k && (task == 0 || d[i].task == task))
                        return &d[i];
        return NULL;
}

static inline size_t dec_count(const kerf_decision *d, size_t n, kerf_decision_kind k)
{
        size_t c = 0;
        for (size_t i = 0; i < n; i++)
                c += d[i].kind == k;
        return c;
}

static inline kerf_task_info task_info(const kerf_sched *s, uint64_t id)
{
        kerf_task_info ti;
        assert_int_equal(kerf_sched_task_get(s, id, &ti), 0);
        return ti;
}

static inline kerf_task_state task_state(const kerf_sched *s, uint64_t id)
{
        return task_info(s, id).state;
}

static inline kerf_unit_info unit_info_of(const kerf_sched *s, uint64_t id)
{
        kerf_unit_info u;
        assert_int_equal(kerf_sched_unit_get(s, id, &u), 0);
        return u;
}

static inline kerf_gpu_state gpu_state(const kerf_sched *s, unsigned g)
{
        kerf_gpu_state gs;
        assert_int_equal(kerf_sched_gpu_get(s, g, &gs), 0);
        return gs;
}

/* Confirms every MIG create/destroy in d[0..n) with `result`. */
static inline void mig_confirm_all(kerf_sched *s, const kerf_decision *d, size_t n, int result)
{
        for (size_t i = 0; i < n; i++)
                if (d[i].kind == KERF_DEC_MIG_CREATE || d[i].kind == KERF_DEC_MIG_DESTROY) {
                        assert_int_equal(d[i].n_units, 1);
                        assert_int_equal(kerf_sched_mig_done(s, d[i].units[0], result), 0);
                }
        check_ok(s);
}

static inline bool contains(const char *hay, const char *needle)
{
        return hay && strstr(hay, needle) != NULL;
}

#endif /* KERF_TEST_SCHED_HELPERS_H */
