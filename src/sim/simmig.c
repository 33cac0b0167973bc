/* SPDX-License-Identifier: Apache-2.0 */
/* simmig.c - kerf-sim MIG model: GPU and compute instances, placement rules, capacity */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kerf/errno.h"

#define MAX_GI_ID 14 /* GI ids handed out are 1..MAX_GI_ID */

struct sim_gi *kerf__sim_gi_find(kerf_sim *st, unsigned gpu, unsigned gi_id)
{
        if (gpu >= st->f->n_gpus)
                return NULL;
        for (unsigned i = 0; i < KERF_SIM_MAX_GIS; i++) {
                struct sim_gi *g = &st->f->gpu[gpu].gi[i];
                if (g->in_use && g->id == gi_id)
                        return g;
        }
        return NULL;
}

struct sim_ci *kerf__sim_ci_find(struct sim_gi *g, unsigned ci_id)
{
        if (!g)
                return NULL;
        for (unsigned i = 0; i < KERF_SIM_MAX_CIS; i++)
                if (g->ci[i].in_use && g->ci[i].id == ci_id)
                        return &g->ci[i];
        return NULL;
}

uint64_t kerf__sim_capacity(kerf_sim *st, unsigned gpu, int gi)
{
        const kerf_gpu_model *m = st->models[gpu];
        if (gi < 0) {
                /* In MIG mode the parent reports the whole framebuffer; only instance memory
                 * can be charged (target_usable refuses the parent). */
                return m->mem_bytes;
        }
        struct sim_gi *g = kerf__sim_gi_find(st, gpu, (unsigned)gi);
        const kerf_mig_profile *p = g ? kerf_mig_profile_by_id(m, g->profile_id) : NULL;
        return p ? p->mem_mib * KERF_MIB : 0;
}

static uint8_t used_mask(const struct sim_gpu *g)
{
        uint8_t mask = 0;
        for (unsigned i = 0; i < KERF_SIM_MAX_GIS; i++) {
                if (g->gi[i].in_use)
                        mask |= (uint8_t)(((1u << g->gi[i].size) - 1u) << g->gi[i].start);
        }
        return mask;
}

static unsigned used_compute(kerf_sim *st, unsigned gpu)
{
        unsigned c = 0;
        for (unsigned i = 0; i < KERF_SIM_MAX_GIS; i++) {
                struct sim_gi *g = &st->f->gpu[gpu].gi[i];
                const kerf_mig_profile *p =
                    g->in_use ? kerf_mig_profile_by_id(st->models[gpu], g->profile_id) : NULL;
                if (p)
                        c += p->compute_slices;
        }
        return c;
}

static unsigned count_profile(const struct sim_gpu *g, unsigned profile_id)
{
        unsigned n = 0;
        for (unsigned i = 0; i < KERF_SIM_MAX_GIS; i++)
                n += (g->gi[i].in_use && g->gi[i].profile_id == profile_id) ? 1 : 0;
        return n;
}

static int gpu_mig_ready(kerf_sim *st, unsigned gpu)
{
        if (gpu >= st->f->n_gpus)
                return -ENOENT;
        if (st->f->gpu[gpu].lost)
                return -KERF_EDEVICE;
        if (!kerf_gpu_model_has_mig(st->models[gpu]) || !st->f->gpu[gpu].mig_enabled)
                return -KERF_EUNSUPP;
        return 0;
}

int kerf_sim_mig_mode_set(kerf_sim *st, unsigned gpu, bool on)
{
        int rc;
        if (!st)
                return -EINVAL;
        if (gpu >= st->f->n_gpus)
                return -ENOENT;
        if (!kerf_gpu_model_has_mig(st->models[gpu]))
                return -KERF_EUNSUPP;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        struct sim_gpu *g = &st->f->gpu[gpu];
        kerf__sim_reclaim_locked(st);
        unsigned procs = 0;
        kerf__sim_used(st, gpu, -1, -1, &procs);
        if (g->lost)
                rc = -KERF_EDEVICE;
        else if (procs || used_mask(g))
                rc = -KERF_EINUSE;
        else if ((g->mig_enabled != 0) != on) {
                g->mig_enabled = on;
                st->f->generation++;
        }
        kerf__sim_unlock(st);
        return rc;
}

/* Greedy count of non-overlapping free placements of p (optimal: equal sizes, sorted starts). */
static unsigned free_placements(const kerf_mig_profile *p, uint8_t mask, int *ret_first)
{
        unsigned n = 0;
        if (ret_first)
                *ret_first = -1;
        for (unsigned s = 0; s < KERF_MIG_SLICES; s++) {
                if (!kerf_mig_start_valid(p, s) || s + p->mem_slices > KERF_MIG_SLICES)
                        continue;
                uint8_t m = kerf_mig_slice_mask(p, s);
                if (m & mask)
                        continue;
                if (ret_first && *ret_first < 0)
                        *ret_first = (int)s;
                mask |= m;
                n++;
        }
        return n;
}

static unsigned remaining_locked(kerf_sim *st, unsigned gpu, const kerf_mig_profile *p)
{
        struct sim_gpu *g = &st->f->gpu[gpu];
        unsigned have = count_profile(g, p->id);
        if (have >= p->max_count)
                return 0;
        unsigned n = free_placements(p, used_mask(g), NULL);
        unsigned cfree = KERF_MIG_COMPUTE - used_compute(st, gpu);
        unsigned by_compute = cfree / p->compute_slices;
        if (n > p->max_count - have)
                n = p->max_count - have;
        return n < by_compute ? n : by_compute;
}

int kerf_sim_gi_remaining(kerf_sim *st, unsigned gpu, unsigned profile_id, unsigned *ret)
{
        int rc;
        if (!st || !ret)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        if ((rc = gpu_mig_ready(st, gpu)) == 0) {
                const kerf_mig_profile *p = kerf_mig_profile_by_id(st->models[gpu], profile_id);
                if (!p)
                        rc = -KERF_EUNSUPP;
                else
                        *ret = remaining_locked(st, gpu, p);
        }
        kerf__sim_unlock(st);
        return rc;
}

int kerf_sim_gi_create(kerf_sim *st, unsigned gpu, unsigned profile_id, int start, unsigned *ret_id)
{
        int rc;
        if (!st || start < -1 || start >= KERF_MIG_SLICES)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        if ((rc = gpu_mig_ready(st, gpu)) < 0)
                goto out;
        struct sim_gpu *g = &st->f->gpu[gpu];
        const kerf_mig_profile *p = kerf_mig_profile_by_id(st->models[gpu], profile_id);
        if (!p) {
                rc = -KERF_EUNSUPP;
                goto out;
        }
        uint8_t mask = used_mask(g);
        if (start >= 0 && !kerf_mig_start_valid(p, (unsigned)start)) {
                rc = -EINVAL;
                goto out;
        }
        if (start < 0)
                free_placements(p, mask, &start);
        if (start < 0 || (kerf_mig_slice_mask(p, (unsigned)start) & mask) ||
            count_profile(g, p->id) >= p->max_count ||
            used_compute(st, gpu) + p->compute_slices > KERF_MIG_COMPUTE) {
                rc = -ENOSPC;
                goto out;
        }
        struct sim_gi *slot = NULL;
        for (unsigned i = 0; i < KERF_SIM_MAX_GIS && !slot; i++)
                if (!g->gi[i].in_use)
                        slot = &g->gi[i];
        unsigned id = 1;
        while (id <= MAX_GI_ID && kerf__sim_gi_find(st, gpu, id))
                id++;
        if (!slot || id > MAX_GI_ID) {
                rc = -ENOSPC;
                goto out;
        }
        memset(slot, 0, sizeof(*slot));
        slot->id = id;
        slot->profile_id = p->id;
        slot->start = (unsigned)start;
        slot->size = p->mem_slices;
        slot->serial = g->next_serial++;
        slot->in_use = 1;
        st->f->generation++;
        if (ret_id)
                *ret_id = id;
        rc = 0;
out:
        kerf__sim_unlock(st);
        return rc;
}

int kerf_sim_gi_destroy(kerf_sim *st, unsigned gpu, unsigned gi_id)
{
        int rc;
        if (!st)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        if ((rc = gpu_mig_ready(st, gpu)) < 0)
                goto out;
        struct sim_gi *g = kerf__sim_gi_find(st, gpu, gi_id);
        if (!g) {
                rc = -ENOENT;
                goto out;
        }
        kerf__sim_reclaim_locked(st);
        unsigned procs = 0;
        kerf__sim_used(st, gpu, (int)gi_id, -1, &procs);
        bool cis = false;
        for (unsigned i = 0; i < KERF_SIM_MAX_CIS; i++)
                cis = cis || g->ci[i].in_use;
        if (procs || cis) {
                rc = -KERF_EINUSE;
                goto out;
        }
        memset(g, 0, sizeof(*g));
        st->f->generation++;
out:
        kerf__sim_unlock(st);
        return rc;
}

static void fill_gi_info(kerf_sim *st, unsigned gpu, struct sim_gi *g, kerf_sim_gi_info *out)
{
        memset(out, 0, sizeof(*out));
        out->id = g->id;
        out->profile = kerf_mig_profile_by_id(st->models[gpu], g->profile_id);
        out->start = g->start;
        out->size = g->size;
        out->mem_total = kerf__sim_capacity(st, gpu, (int)g->id);
        out->mem_used = kerf__sim_used(st, gpu, (int)g->id, -1, &out->n_procs);
        for (unsigned id = 0; id < 64 && out->n_cis < KERF_SIM_MAX_CIS; id++) {
                struct sim_ci *c = kerf__sim_ci_find(g, id);
                if (!c)
                        continue;
                kerf_sim_ci_info *ci = &out->cis[out->n_cis++];
                ci->id = c->id;
                ci->profile = c->profile;
                ci->start = c->start;
                ci->size = c->size;
                memcpy(ci->uuid, c->uuid, sizeof(ci->uuid));
                ci->uuid[sizeof(ci->uuid) - 1] = '\0';
        }
}

int kerf_sim_gi_list(kerf_sim *st, unsigned gpu, kerf_sim_gi_info *out, unsigned cap,
                     unsigned *ret_n)
{
        int rc;
        if (!st || !ret_n || (cap && !out))
                return -EINVAL;
        if (gpu >= st->f->n_gpus)
                return -ENOENT;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        unsigned n = 0;
        for (unsigned id = 0; id <= MAX_GI_ID; id++) {
                struct sim_gi *g = kerf__sim_gi_find(st, gpu, id);
                if (!g)
                        continue;
                if (n < cap)
                        fill_gi_info(st, gpu, g, &out[n]);
                n++;
        }
        kerf__sim_unlock(st);
        *ret_n = n;
        return 0;
}

int kerf_sim_gi_get(kerf_sim *st, unsigned gpu, unsigned gi_id, kerf_sim_gi_info *ret)
{
        int rc;
        if (!st || !ret)
                return -EINVAL;
        if (gpu >= st->f->n_gpus)
                return -ENOENT;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        struct sim_gi *g = kerf__sim_gi_find(st, gpu, gi_id);
        if (g)
                fill_gi_info(st, gpu, g, ret);
        kerf__sim_unlock(st);
        return g ? 0 : -ENOENT;
}

int kerf_sim_ci_profile_slices(unsigned ci_profile, unsigned gi_slices, unsigned *ret_slices,
                               unsigned *ret_max)
{
        /* NVML_COMPUTE_INSTANCE_PROFILE_{1,2,3,4,7}_SLICE; 8, 6, REV1 and NVL are not offered
         * on the models kerf simulates. */
        static const unsigned slices[] = {1, 2, 3, 4, 7};
        if (ci_profile >= sizeof(slices) / sizeof(slices[0]))
                return -KERF_EUNSUPP;
        unsigned s = slices[ci_profile];
        if (gi_slices == 0 || s > gi_slices)
                return -KERF_EUNSUPP;
        if (ret_slices)
                *ret_slices = s;
        if (ret_max)
                *ret_max = gi_slices / s;
        return 0;
}

int kerf_sim_ci_create(kerf_sim *st, unsigned gpu, unsigned gi_id, unsigned ci_profile,
                       unsigned *ret_id)
{
        int rc;
        if (!st)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        if ((rc = gpu_mig_ready(st, gpu)) < 0)
                goto out;
        struct sim_gi *g = kerf__sim_gi_find(st, gpu, gi_id);
        const kerf_mig_profile *p =
            g ? kerf_mig_profile_by_id(st->models[gpu], g->profile_id) : NULL;
        if (!p) {
                rc = -ENOENT;
                goto out;
        }
        unsigned size, max;
        if ((rc = kerf_sim_ci_profile_slices(ci_profile, p->compute_slices, &size, &max)) < 0)
                goto out;
        unsigned busy = 0;
        for (unsigned i = 0; i < KERF_SIM_MAX_CIS; i++)
                if (g->ci[i].in_use)
                        busy |= ((1u << g->ci[i].size) - 1u) << g->ci[i].start;
        int start = -1;
        for (unsigned k = 0; k < max && start < 0; k++) {
                unsigned m = ((1u << size) - 1u) << (k * size);
                if (!(m & busy))
                        start = (int)(k * size);
        }
        struct sim_ci *slot = NULL;
        for (unsigned i = 0; i < KERF_SIM_MAX_CIS && !slot; i++)
                if (!g->ci[i].in_use)
                        slot = &g->ci[i];
        if (start < 0 || !slot) {
                rc = -ENOSPC;
                goto out;
        }
        unsigned id = 0;
        while (kerf__sim_ci_find(g, id))
                id++;
        struct sim_gpu *sg = &st->f->gpu[gpu];
        memset(slot, 0, sizeof(*slot));
        slot->id = id;
        slot->profile = ci_profile;
        slot->start = (unsigned)start;
        slot->size = size;
        slot->serial = sg->next_serial++;
        kerf__sim_mig_uuid(sg->uuid, g->id, id, slot->serial, slot->uuid);
        slot->in_use = 1;
        st->f->generation++;
        if (ret_id)
                *ret_id = id;
        rc = 0;
out:
        kerf__sim_unlock(st);
        return rc;
}

int kerf_sim_ci_destroy(kerf_sim *st, unsigned gpu, unsigned gi_id, unsigned ci_id)
{
        int rc;
        if (!st)
                return -EINVAL;
        if ((rc = kerf__sim_lock(st)) < 0)
                return rc;
        if ((rc = gpu_mig_ready(st, gpu)) < 0)
                goto out;
        struct sim_ci *c = kerf__sim_ci_find(kerf__sim_gi_find(st, gpu, gi_id), ci_id);
        if (!c) {
                rc = -ENOENT;
                goto out;
        }
        kerf__sim_reclaim_locked(st);
        unsigned procs = 0;
        kerf__sim_used(st, gpu, (int)gi_id, (int)ci_id, &procs);
        if (procs) {
                rc = -KERF_EINUSE;
                goto out;
        }
        memset(c, 0, sizeof(*c));
        st->f->generation++;
out:
        kerf__sim_unlock(st);
        return rc;
}
