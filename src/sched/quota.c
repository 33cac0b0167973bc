/* SPDX-License-Identifier: Apache-2.0 */
/* quota.c - tenant quotas, cohort borrowing/lending and weighted dominant shares */
#include <stdio.h>

#include "internal.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Formats an amount of resource r for people: memory in GiB, the rest as numbers. */
static const char *fmt_res(unsigned r, uint64_t v, char *buf, size_t len)
{
        if (v == KERF_UNLIMITED)
                snprintf(buf, len, "unlimited");
        else if (r == KERF_RES_MEM)
                snprintf(buf, len, "%.1f GiB", (double)v / (double)KERF_GIB);
        else if (r == KERF_RES_COMPUTE)
                snprintf(buf, len, "%llu%% compute", (unsigned long long)v);
        else
                snprintf(buf, len, "%llu %s", (unsigned long long)v, kerf_res_name(r));
        return buf;
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

kerf_why kerf__quota_check(const kerf_sched *s, const stenant *t, const uint64_t *charge,
                           bool *ret_borrow, char *text, size_t len)
{
        bool borrow = false;
        for (unsigned r = 0; r < KERF_RES_COUNT; r++) {
                if (charge[r] == 0 || t->nominal[r] == KERF_UNLIMITED)
                        continue;
                uint64_t want = sat_add(t->usage[r], charge[r]);
                if (want <= t->nominal[r])
                        continue;
                char a[48], b[48], c[48];
                if (t->cohort < 0) {
                        if (text)
                                snprintf(text, len, "tenant %s would use %s, over its quota of %s",
                                         t->name, fmt_res(r, want, a, sizeof(a)),
                                         fmt_res(r, t->nominal[r], b, sizeof(b)));
                        return KERF_WHY_QUOTA;
                }
                uint64_t limit = sat_add(t->nominal[r], t->borrow[r]);
                if (want > limit) {
                        if (text)
                                snprintf(text, len,
                                         "tenant %s would use %s, over its quota %s + borrowing "
                                         "limit %s",
                                         t->name, fmt_res(r, want, a, sizeof(a)),
                                         fmt_res(r, t->nominal[r], b, sizeof(b)),
                                         fmt_res(r, t->borrow[r], c, sizeof(c)));
                        return KERF_WHY_QUOTA;
                }
                uint64_t need = want - t->nominal[r];
                uint64_t avail = cohort_available(s, t, r);
                if (need > avail) {
                        if (text)
                                snprintf(text, len,
                                         "tenant %s needs to borrow %s from cohort %s, which "
                                         "lends only %s now",
                                         t->name, fmt_res(r, need, a, sizeof(a)),
                                         s->cohorts[t->cohort], fmt_res(r, avail, b, sizeof(b)));
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
