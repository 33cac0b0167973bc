/* SPDX-License-Identifier: Apache-2.0 */
/* sync.c - scheduler glue: adopt discovered MIG instances, execute and confirm MIG decisions */
#include <errno.h>
#include <string.h>

#include "kerf/backend.h"
#include "kerf/errno.h"

#define MAX_UNITS 256

/* Backend index of fleet GPU `fgpu`, matched by UUID (indexes are not stable). */
static int backend_gpu(kerf_backend *b, const kerf_fleet *f, unsigned fgpu)
{
        if (fgpu >= f->n_gpus)
                return -EINVAL;
        return kerf_backend_gpu_find(b, f->gpus[fgpu].uuid);
}

static bool sched_has(const kerf_unit_info *u, size_t n, const kerf_backend_mig *m)
{
        for (size_t i = 0; i < n; i++)
                if (u[i].kind == KERF_UNIT_MIG && u[i].mig_start == m->start &&
                    u[i].mig_profile_id == m->profile_id)
                        return true;
        return false;
}

static void adopt(kerf_backend *b, kerf_sched *s, kerf_backend_sync_stats *st)
{
        const kerf_fleet *f = kerf_sched_fleet(s);
        unsigned n = kerf_backend_gpu_count(b);
        kerf_unit_info units[MAX_UNITS];
        for (unsigned i = 0; i < n; i++) {
                kerf_backend_gpu g;
                kerf_backend_mig m[KERF_BACKEND_MAX_MIG * 2];
                int fg, nm;
                size_t nu;
                if (kerf_backend_gpu_get(b, i, &g) < 0 || g.lost)
                        continue;
                fg = kerf_fleet_gpu_by_uuid(f, g.uuid);
                if (fg < 0) {
                        st->unmatched++;
                        continue;
                }
                if (!f->gpus[fg].mig_enabled || !g.mig_current)
                        continue;
                nm = kerf_backend_mig_list(b, i, m, KERF_BACKEND_MAX_MIG * 2);
                if (nm <= 0)
                        continue;
                nu = kerf_sched_unit_list(s, fg, units, MAX_UNITS);
                if (nu > MAX_UNITS)
                        nu = MAX_UNITS;
                for (int j = 0; j < nm && j < KERF_BACKEND_MAX_MIG * 2; j++) {
                        uint64_t unit;
                        if (sched_has(units, nu, &m[j]))
                                continue;
                        if (kerf_sched_mig_adopt(s, (unsigned)fg, m[j].profile_id, m[j].start,
                                                 &unit) == 0)
                                st->adopted++;
                }
        }
}

static int do_create(kerf_backend *b, kerf_sched *s, const kerf_decision *d)
{
        int bg = backend_gpu(b, kerf_sched_fleet(s), d->gpu);
        if (bg < 0) {
                kerf_backend_set_error(b, "fleet GPU %u is not on this node's backend", d->gpu);
                return -ENOENT;
        }
        return kerf_backend_mig_create(b, (unsigned)bg, d->mig_profile_id, d->mig_start, NULL);
}

static int do_destroy(kerf_backend *b, kerf_sched *s, const kerf_decision *d)
{
        kerf_backend_mig m[KERF_BACKEND_MAX_MIG * 2];
        int bg = backend_gpu(b, kerf_sched_fleet(s), d->gpu), n;
        if (bg < 0) {
                kerf_backend_set_error(b, "fleet GPU %u is not on this node's backend", d->gpu);
                return -ENOENT;
        }
        n = kerf_backend_mig_list(b, (unsigned)bg, m, KERF_BACKEND_MAX_MIG * 2);
        if (n < 0)
                return n;
        for (int i = 0; i < n && i < KERF_BACKEND_MAX_MIG * 2; i++)
                if (m[i].start == d->mig_start && m[i].profile_id == d->mig_profile_id)
                        return kerf_backend_mig_destroy(b, (unsigned)bg, m[i].gi_id);
        /* Already gone (destroyed by hand, or a previous attempt that was not confirmed):
         * the wanted state holds, so confirm. */
        return 0;
}

int kerf_backend_sync_sched(kerf_backend *b, kerf_sched *s, const kerf_decision *decisions,
                            size_t n, int *results, kerf_backend_sync_stats *stats)
{
        kerf_backend_sync_stats st;
        int refused = 0;
        if (!b || !s || (n && !decisions))
                return -EINVAL;
        memset(&st, 0, sizeof(st));
        adopt(b, s, &st);
        for (size_t i = 0; i < n; i++) {
                const kerf_decision *d = &decisions[i];
                int r = 0;
                if (d->kind == KERF_DEC_MIG_CREATE || d->kind == KERF_DEC_MIG_DESTROY) {
                        if (d->n_units < 1) {
                                r = -EINVAL;
                        } else {
                                r = d->kind == KERF_DEC_MIG_CREATE ? do_create(b, s, d)
                                                                   : do_destroy(b, s, d);
                                kerf_sched_mig_done(s, d->units[0], r < 0 ? r : 0);
                        }
                        if (r < 0)
                                refused++, st.refused++;
                        else if (d->kind == KERF_DEC_MIG_CREATE)
                                st.created++;
                        else
                                st.destroyed++;
                }
                if (results)
                        results[i] = r < 0 ? r : 0;
        }
        if (stats)
                *stats = st;
        return refused;
}
