/* SPDX-License-Identifier: Apache-2.0 */
/* models.c - the GPU model table and the MIG profile tables (GPU-REFERENCE.md §1) */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "kerf/core.h"

/* Start masks from the placement table (§1.2): bit i set = may start at memory slice i. */
#define START_1G   0x7fu /* 0..6: nothing starts at slice 7 */
#define START_1G2M 0x55u /* 0,2,4,6 */
#define START_2G   0x15u /* 0,2,4 */
#define START_3G   0x11u /* 0,4 */
#define START_4G   0x01u /* 0 */
#define START_7G   0x01u /* 0 */

/* NVML_GPU_INSTANCE_PROFILE_* indexes (§1.1) and NVML_COMPUTE_INSTANCE_PROFILE_* (§1.3). */
#define GI_1   0x0u
#define GI_1R1 0x7u
#define GI_1R2 0x9u
#define GI_2   0x1u
#define GI_3   0x2u
#define GI_4   0x3u
#define GI_7   0x4u
#define CI_1   0x0u
#define CI_2   0x1u
#define CI_3   0x2u
#define CI_4   0x3u
#define CI_7   0x4u

/* Memory: memorySizeMB = the table's GiB * 1024. Where the reference gives a range between
 * drivers (A100-40GB), the upper value is used; NVML's own figure wins at run time anyway.
 *
 * Media engines follow the MIG User Guide's per-profile tables: A100 has 5 NVDEC, 1 NVJPG,
 * 1 OFA and no NVENC; H100/H200 have 7 NVDEC, 7 NVJPG, 1 OFA and no NVENC. The single OFA
 * belongs to the +me profile or to the full 7g instance, never to the other profiles.
 * Copy engines: one per compute slice. */

/* clang-format off */
static const kerf_mig_profile a100_40_profiles[] = {
	/* id nvml   name          c  m  MiB    SMs max start       CE dec enc jpg ofa CI */
	{19, GI_1,   "1g.5gb",     1, 1, 4864,  14, 7, START_1G,    1, 0, 0, 0, 0, CI_1},
	{20, GI_1R1, "1g.5gb+me",  1, 1, 4864,  14, 1, START_1G,    1, 1, 0, 1, 1, CI_1},
	{15, GI_1R2, "1g.10gb",    1, 2, 9984,  14, 4, START_1G2M,  1, 1, 0, 0, 0, CI_1},
	{14, GI_2,   "2g.10gb",    2, 2, 9984,  28, 3, START_2G,    2, 1, 0, 0, 0, CI_2},
	{9,  GI_3,   "3g.20gb",    3, 4, 20096, 42, 2, START_3G,    3, 2, 0, 0, 0, CI_3},
	{5,  GI_4,   "4g.20gb",    4, 4, 20096, 56, 1, START_4G,    4, 2, 0, 0, 0, CI_4},
	{0,  GI_7,   "7g.40gb",    7, 8, 40448, 98, 1, START_7G,    7, 5, 0, 1, 1, CI_7},
};

static const kerf_mig_profile a100_80_profiles[] = {
	{19, GI_1,   "1g.10gb",    1, 1, 9728,  14, 7, START_1G,    1, 0, 0, 0, 0, CI_1},
	{20, GI_1R1, "1g.10gb+me", 1, 1, 9728,  14, 1, START_1G,    1, 1, 0, 1, 1, CI_1},
	{15, GI_1R2, "1g.20gb",    1, 2, 19968, 14, 4, START_1G2M,  1, 1, 0, 0, 0, CI_1},
	{14, GI_2,   "2g.20gb",    2, 2, 19968, 28, 3, START_2G,    2, 1, 0, 0, 0, CI_2},
	{9,  GI_3,   "3g.40gb",    3, 4, 40192, 42, 2, START_3G,    3, 2, 0, 0, 0, CI_3},
	{5,  GI_4,   "4g.40gb",    4, 4, 40192, 56, 1, START_4G,    4, 2, 0, 0, 0, CI_4},
	{0,  GI_7,   "7g.80gb",    7, 8, 80896, 98, 1, START_7G,    7, 5, 0, 1, 1, CI_7},
};

static const kerf_mig_profile h100_80_profiles[] = {
	{19, GI_1,   "1g.10gb",    1, 1, 9984,  16,  7, START_1G,   1, 1, 0, 1, 0, CI_1},
	{20, GI_1R1, "1g.10gb+me", 1, 1, 9984,  16,  1, START_1G,   1, 1, 0, 1, 1, CI_1},
	{15, GI_1R2, "1g.20gb",    1, 2, 20096, 26,  4, START_1G2M, 1, 1, 0, 1, 0, CI_1},
	{14, GI_2,   "2g.20gb",    2, 2, 20096, 32,  3, START_2G,   2, 2, 0, 2, 0, CI_2},
	{9,  GI_3,   "3g.40gb",    3, 4, 40448, 60,  2, START_3G,   3, 3, 0, 3, 0, CI_3},
	{5,  GI_4,   "4g.40gb",    4, 4, 40448, 64,  1, START_4G,   4, 4, 0, 4, 0, CI_4},
	{0,  GI_7,   "7g.80gb",    7, 8, 81152, 132, 1, START_7G,   7, 7, 0, 7, 1, CI_7},
};

/* H200: no -lgipp output was found; the H100 geometry is assumed [UNVERIFIED]. */
static const kerf_mig_profile h200_141_profiles[] = {
	{19, GI_1,   "1g.18gb",    1, 1, 16384,  16,  7, START_1G,   1, 1, 0, 1, 0, CI_1},
	{20, GI_1R1, "1g.18gb+me", 1, 1, 16384,  16,  1, START_1G,   1, 1, 0, 1, 1, CI_1},
	{15, GI_1R2, "1g.35gb",    1, 2, 33024,  26,  4, START_1G2M, 1, 1, 0, 1, 0, CI_1},
	{14, GI_2,   "2g.35gb",    2, 2, 33024,  32,  3, START_2G,   2, 2, 0, 2, 0, CI_2},
	{9,  GI_3,   "3g.71gb",    3, 4, 71168,  60,  2, START_3G,   3, 3, 0, 3, 0, CI_3},
	{5,  GI_4,   "4g.71gb",    4, 4, 71168,  64,  1, START_4G,   4, 4, 0, 4, 0, CI_4},
	{0,  GI_7,   "7g.141gb",   7, 8, 143360, 132, 1, START_7G,   7, 7, 0, 7, 1, CI_7},
};
/* clang-format on */

#define N(a)     (sizeof(a) / sizeof((a)[0]))
#define MIB(n)   ((uint64_t)(n)*KERF_MIB)
#define PROFS(a) (a), N(a)

/* Index order is part of the ABI within one build (model masks): append, never reorder.
 * sms/cc/power of 0 mean unknown. G2 and G3 are anonymised models in the Alibaba openb trace;
 * their real model is unknown, so they get 16 GiB and nothing else is claimed about them. */
static const kerf_gpu_model models[] = {
    {"H200-141GB", "NVIDIA H200", 0x233510DEu, MIB(143771), 132, 9, 0, 700,
     PROFS(h200_141_profiles)},
    {"H100-80GB", "NVIDIA H100 80GB HBM3", 0x233010DEu, MIB(81559), 132, 9, 0, 700,
     PROFS(h100_80_profiles)},
    {"A100-80GB", "NVIDIA A100-SXM4-80GB", 0x20B210DEu, MIB(81920), 108, 8, 0, 400,
     PROFS(a100_80_profiles)},
    {"A100-40GB", "NVIDIA A100-SXM4-40GB", 0x20B010DEu, MIB(40960), 108, 8, 0, 400,
     PROFS(a100_40_profiles)},
    {"L40S", "NVIDIA L40S", 0x26B910DEu, MIB(46068), 142, 8, 9, 350, NULL, 0},
    {"L4", "NVIDIA L4", 0x27B810DEu, MIB(23034), 58, 8, 9, 72, NULL, 0},
    {"A10", "NVIDIA A10", 0x223610DEu, MIB(23028), 72, 8, 6, 150, NULL, 0},
    {"T4", "Tesla T4", 0x1EB810DEu, MIB(15360), 40, 7, 5, 70, NULL, 0},
    {"V100M32", "Tesla V100-SXM2-32GB", 0x1DB510DEu, MIB(32768), 80, 7, 0, 300, NULL, 0},
    {"V100M16", "Tesla V100-SXM2-16GB", 0x1DB110DEu, MIB(16384), 80, 7, 0, 300, NULL, 0},
    {"P100", "Tesla P100-PCIE-16GB", 0x15F810DEu, MIB(16384), 56, 6, 0, 250, NULL, 0},
    {"G2", "G2", 0, MIB(16384), 0, 0, 0, 0, NULL, 0},
    {"G3", "G3", 0, MIB(16384), 0, 0, 0, 0, NULL, 0},
};

/* Extra names beyond each model's canonical name and product name. */
static const struct {
        const char *alias;
        const char *canonical;
} aliases[] = {
    {"H200", "H200-141GB"},          {"H200-SXM", "H200-141GB"}, {"H100", "H100-80GB"},
    {"H100-SXM", "H100-80GB"},       {"A100", "A100-40GB"},      {"A100-SXM4-40GB", "A100-40GB"},
    {"A100-SXM4-80GB", "A100-80GB"}, {"V100", "V100M16"},        {"V100-16GB", "V100M16"},
    {"V100-32GB", "V100M32"},        {"P100-16GB", "P100"},
};

_Static_assert(N(models) <= KERF_MAX_GPU_MODELS, "model masks are 64-bit");

size_t kerf_gpu_model_count(void)
{
        return N(models);
}

const kerf_gpu_model *kerf_gpu_model_at(size_t i)
{
        return i < N(models) ? &models[i] : NULL;
}

static const kerf_gpu_model *find_exact(const char *name)
{
        for (size_t i = 0; i < N(models); i++)
                if (strcasecmp(models[i].name, name) == 0 ||
                    strcasecmp(models[i].product, name) == 0)
                        return &models[i];
        return NULL;
}

const kerf_gpu_model *kerf_gpu_model_find(const char *name)
{
        const kerf_gpu_model *m;

        if (!name || !*name)
                return NULL;
        m = find_exact(name);
        if (m)
                return m;
        for (size_t i = 0; i < N(aliases); i++)
                if (strcasecmp(aliases[i].alias, name) == 0)
                        return find_exact(aliases[i].canonical);
        return NULL;
}

int kerf_gpu_model_index(const kerf_gpu_model *m)
{
        if (!m || m < models || m >= models + N(models))
                return -1;
        return (int)(m - models);
}

const kerf_mig_profile *kerf_mig_profile_by_id(const kerf_gpu_model *m, unsigned id)
{
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n_profiles; i++)
                if (m->profiles[i].id == id)
                        return &m->profiles[i];
        return NULL;
}

const kerf_mig_profile *kerf_mig_profile_by_name(const kerf_gpu_model *m, const char *name)
{
        if (!m || !name)
                return NULL;
        /* nvidia-smi prints "MIG 1g.18gb"; accept that spelling too. */
        if (strncasecmp(name, "MIG ", 4) == 0)
                name += 4;
        for (size_t i = 0; i < m->n_profiles; i++)
                if (strcasecmp(m->profiles[i].name, name) == 0)
                        return &m->profiles[i];
        return NULL;
}

const kerf_mig_profile *kerf_mig_profile_by_nvml_index(const kerf_gpu_model *m, unsigned idx)
{
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n_profiles; i++)
                if (m->profiles[i].nvml_index == idx)
                        return &m->profiles[i];
        return NULL;
}

bool kerf_mig_start_valid(const kerf_mig_profile *p, unsigned start)
{
        if (!p || start >= KERF_MIG_SLICES || p->mem_slices == 0 ||
            start + p->mem_slices > KERF_MIG_SLICES)
                return false;
        return (p->start_mask >> start) & 1u;
}
