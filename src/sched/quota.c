/* SPDX-License-Identifier: Apache-2.0 */
/* quota.c - tenant quotas, cohort borrowing/lending and weighted dominant shares */
#include <stdio.h>

#include "internal.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void kerf__tenant_share_update(kerf_sched *s, stenant *t)
{
        double dom = 0;
        for (unsigned r = 0; r < KERF_RES_COUNT; r++) {
                if (s->cap[r] == 0)
                        continue;
                double f = (double)t->usage[r] / (double)s->cap[r];
                if (f > dom)
                        dom = f;
        }
        t->share = dom / (double)t->weight;
}

uint64_t kerf__cohort_borrowed(const kerf_sched *s, int cohort, unsigned r)
{
        uint64_t b = 0;
        for (size_t i = 0; i < s->n_tenants; i++) {
                const stenant *u = s->tenants[i];
                if (u->cohort == cohort && u->nominal[r] != KERF_UNLIMITED &&
                    u->usage[r] > u->nominal[r])
                        b += u->usage[r] - u->nominal[r];
        }
        return b;
}

/* What the other members of t's cohort lend and leave unused, minus what they borrow. */
static uint64_t cohort_available(const kerf_sched *s, const stenant *t, unsigned r)
{
        uint64_t lendable = 0, borrowed = 0;
        for (size_t i = 0; i < s->n_tenants; i++) {
                const stenant *u = s->tenants[i];
                if (u == t || u->cohort != t->cohort)
                        continue;
                if (u->nominal[r] == KERF_UNLIMITED)
                        return KERF_UNLIMITED;
                uint64_t unused = u->nominal[r] > u->usage[r] ? u->nominal[r] - u->usage[r] : 0;
                lendable += unused < u->lend[r] ? unused : u->lend[r];
                if (u->usage[r] > u->nominal[r])
                        borrowed += u->usage[r] - u->nominal[r];
        }
        return lendable > borrowed ? lendable - borrowed : 0;
}

static uint64_t lendable(const stenant *u, unsigned r, uint64_t usage)
{
        uint64_t unused = u->nominal[r] > usage ? u->nominal[r] - usage : 0;
        return unused < u->lend[r] ? unused : u->lend[r];
}

/* Kueue's reclaim: when t, within its nominal quota, would use `want` of r, how much of what
 * the other members of its cohort borrow would no longer be covered by what the members lend.
 * Only when the charge takes from what t lends (its quota above nominal - lend_limit is
 * guaranteed, never lent). 0 = nothing owed. */
static uint64_t lent_short(const kerf_sched *s, const stenant *t, unsigned r, uint64_t want)
{
        uint64_t after = lendable(t, r, want);
        if (after >= lendable(t, r, t->usage[r]))
                return 0;
        uint64_t lent = after, borrowed = 0;
        for (size_t i = 0; i < s->n_tenants; i++) {
                const stenant *u = s->tenants[i];
                if (u == t || u->cohort != t->cohort)
                        continue;
                if (u->nominal[r] == KERF_UNLIMITED)
                        return 0;
                lent = sat_add(lent, lendable(u, r, u->usage[r]));
                if (u->usage[r] > u->nominal[r])
                        borrowed += u->usage[r] - u->nominal[r];
        }
        return borrowed > lent ? borrowed - lent : 0;
}

kerf_why kerf__quota_check(const kerf_sched *s, const stenant *t, const uint64_t *charge,
                           bool *ret_borrow, sdetail *d)
{
        bool borrow = false;
        for (unsigned r = 0; r < KERF_RES_COUNT; r++) {
                if (charge[r] == 0 || t->nominal[r] == KERF_UNLIMITED)
                        continue;
                uint64_t want = sat_add(t->usage[r], charge[r]);
                sdetail *x;
                if (want <= t->nominal[r]) {
                        /* within nominal, but what others borrow may be what t lends */
                        uint64_t owed = t->cohort >= 0 ? lent_short(s, t, r, want) : 0;
                        if (owed) {
                                if ((x = kerf__detail(d, MSG_COHORT_LENT))) {
                                        x->tenant = t;
                                        x->res = (uint8_t)r;
                                        x->cohort = t->cohort;
                                        x->a = owed;
                                }
                                return KERF_WHY_COHORT;
                        }
                        continue;
                }
                if (t->cohort < 0) {
                        if ((x = kerf__detail(d, MSG_QUOTA))) {
                                x->tenant = t;
                                x->res = (uint8_t)r;
                                x->a = want;
                                x->b = t->nominal[r];
                        }
                        return KERF_WHY_QUOTA;
                }
                uint64_t limit = sat_add(t->nominal[r], t->borrow[r]);
                if (want > limit) {
                        if ((x = kerf__detail(d, MSG_QUOTA_BORROW))) {
                                x->tenant = t;
                                x->res = (uint8_t)r;
                                x->a = want;
                                x->b = t->nominal[r];
                                x->c = t->borrow[r];
                        }
                        return KERF_WHY_QUOTA;
                }
                uint64_t need = want - t->nominal[r];
                uint64_t avail = cohort_available(s, t, r);
                if (need > avail) {
                        if ((x = kerf__detail(d, MSG_COHORT))) {
                                x->tenant = t;
                                x->res = (uint8_t)r;
                                x->cohort = t->cohort;
                                x->a = need;
                                x->b = avail;
                        }
                        return KERF_WHY_COHORT;
                }
                borrow = true;
        }
        if (ret_borrow)
                *ret_borrow = borrow;
        return KERF_WHY_NONE;
}

void kerf__quota_charge(kerf_sched *s, stenant *t, const uint64_t *charge, int sign)
{
        for (unsigned r = 0; r < KERF_RES_COUNT; r++) {
                if (sign > 0) {
                        t->usage[r] += charge[r];
                } else {
                        t->usage[r] -= charge[r] < t->usage[r] ? charge[r] : t->usage[r];
                        if (t->grand[r] > t->usage[r])
                                t->grand[r] = t->usage[r];
                }
        }
        kerf__tenant_share_update(s, t);
}
