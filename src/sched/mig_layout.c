/* SPDX-License-Identifier: Apache-2.0 */
/* mig_layout.c - how well a MIG layout keeps profiles placeable: the score place_mig() uses
 * to choose a start slice for a new instance */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* MIG layout score. For a model, fit[p][used] = how many more instances of profile p fit in
 * the memory slices not in `used` (greedy over the valid starts, lowest first: placements of one
 * profile are aligned to their size, so greedy is optimal). Built once per model and scheduler:
 * 256 bytes per profile. */
typedef struct migfit {
        const kerf_gpu_model *m;
        uint8_t fit[KERF_MIGFIT_PROFILES][256];
} migfit;

void kerf__migfit_free(kerf_sched *s)
{
        free(s->migfit);
        s->migfit = NULL;
        s->n_migfit = 0;
}

static bool prof_me(const kerf_mig_profile *p)
{
        return p->ofas > 0 && p->nvml_index == 0x7; /* +me: only by name, not in the score */
}

const struct migfit *kerf__migfit_of(kerf_sched *s, const kerf_gpu_model *m)
{
        for (size_t i = 0; i < s->n_migfit; i++)
                if (s->migfit[i].m == m)
                        return &s->migfit[i];
        migfit *nf = realloc(s->migfit, (s->n_migfit + 1) * sizeof(*nf));
        if (!nf)
                return NULL;
        s->migfit = nf;
        migfit *f = &nf[s->n_migfit++];
        memset(f, 0, sizeof(*f));
        f->m = m;
        for (size_t i = 0; i < m->n_profiles && i < KERF_MIGFIT_PROFILES; i++) {
                const kerf_mig_profile *p = &m->profiles[i];
                for (unsigned used = 0; used < 256; used++) {
                        uint8_t u = (uint8_t)used;
                        unsigned c = 0;
                        for (unsigned st = 0; st < KERF_MIG_SLICES; st++) {
                                if (!kerf_mig_start_valid(p, st))
                                        continue;
                                uint8_t mk = kerf_mig_slice_mask(p, st);
                                if (u & mk)
                                        continue;
                                u |= mk;
                                c++;
                        }
                        f->fit[i][used] = (uint8_t)c;
                }
        }
        return f;
}

/* What a layout keeps placeable: for each profile of the model (+me aside), the most further
 * instances that still fit (free memory slices, its max count, the 7 compute slices), weighted
 * by its size (memory slices squared). counts[i]: instances of m->profiles[i] on the GPU. */
unsigned kerf__mig_layout_value(const migfit *f, const kerf_gpu_model *m, uint8_t used,
                                unsigned compute_used, const unsigned *counts)
{
        unsigned v = 0;
        unsigned cfree = compute_used < KERF_MIG_COMPUTE ? KERF_MIG_COMPUTE - compute_used : 0;
        for (size_t i = 0; i < m->n_profiles && i < KERF_MIGFIT_PROFILES; i++) {
                const kerf_mig_profile *p = &m->profiles[i];
                if (prof_me(p) || counts[i] >= p->max_count)
                        continue;
                unsigned n = f->fit[i][used];
                unsigned by_count = p->max_count - counts[i];
                unsigned by_compute = cfree / p->compute_slices;
                if (n > by_count)
                        n = by_count;
                if (n > by_compute)
                        n = by_compute;
                v += n * p->mem_slices * p->mem_slices;
        }
        return v;
}

/* Instances per profile (index in m->profiles) on g, any state. */
void kerf__mig_prof_counts(const sgpu *g, unsigned *counts)
{
        const kerf_gpu_model *m = g->d->model;
        memset(counts, 0, KERF_MIGFIT_PROFILES * sizeof(*counts));
        for (const sunit *u = g->head; u; u = u->next) {
                if (u->kind != KERF_UNIT_MIG)
                        continue;
                size_t i = (size_t)(u->prof - m->profiles);
                if (i < KERF_MIGFIT_PROFILES)
                        counts[i]++;
        }
}
