/* SPDX-License-Identifier: Apache-2.0 */
/* names.c - names of kerf's resource-model enums and their parsers; the one name rule */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "kerf/core.h"
#include "nametab.h"

static const char *const unit_kind_names[KERF_UNIT_KIND_COUNT] = {
    [KERF_UNIT_WHOLE] = "whole", [KERF_UNIT_MIG] = "mig",       [KERF_UNIT_SLICE] = "slice",
    [KERF_UNIT_MPS] = "mps",     [KERF_UNIT_TSLICE] = "tslice",
};

static const char *const gpu_mode_names[KERF_GPU_MODE_COUNT] = {
    [KERF_GPU_MODE_FREE] = "free",     [KERF_GPU_MODE_WHOLE] = "whole", [KERF_GPU_MODE_MIG] = "mig",
    [KERF_GPU_MODE_SHARED] = "shared", [KERF_GPU_MODE_MPS] = "mps",
};

static const char *const unit_state_names[KERF_UNIT_STATE_COUNT] = {
    [KERF_UNIT_CREATING] = "creating", [KERF_UNIT_READY] = "ready",
    [KERF_UNIT_ASSIGNED] = "assigned", [KERF_UNIT_DESTROYING] = "destroying",
    [KERF_UNIT_FAULT] = "fault",
};

static const char *const workload_names[KERF_WL_COUNT] = {
    [KERF_WL_TRAINING] = "training",
    [KERF_WL_INFERENCE] = "inference",
    [KERF_WL_DEV] = "dev",
    [KERF_WL_BATCH] = "batch",
};

static const char *const tier_names[KERF_TIER_COUNT] = {
    [KERF_TIER_HIGH] = "high",
    [KERF_TIER_QUEUEABLE] = "queueable",
    [KERF_TIER_EXPLORATORY] = "exploratory",
};

const char *kerf__nametab_name(const char *const *names, size_t n, unsigned v)
{
        return v < n && names[v] ? names[v] : "?";
}

int kerf__nametab_parse(const char *const *names, size_t n, const char *s, bool exact)
{
        if (!s)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (names[i] && (exact ? strcmp(names[i], s) : strcasecmp(names[i], s)) == 0)
                        return (int)i;
        return -EINVAL;
}

static const char *name_of(const char *const *names, size_t n, unsigned v)
{
        return kerf__nametab_name(names, n, v);
}

static int parse_of(const char *const *names, size_t n, const char *s)
{
        return kerf__nametab_parse(names, n, s, false);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

const char *kerf_unit_kind_name(kerf_unit_kind k)
{
        return name_of(unit_kind_names, N(unit_kind_names), (unsigned)k);
}

int kerf_unit_kind_parse(const char *s)
{
        return parse_of(unit_kind_names, N(unit_kind_names), s);
}

const char *kerf_gpu_mode_name(kerf_gpu_mode m)
{
        return name_of(gpu_mode_names, N(gpu_mode_names), (unsigned)m);
}

int kerf_gpu_mode_parse(const char *s)
{
        return parse_of(gpu_mode_names, N(gpu_mode_names), s);
}

const char *kerf_unit_state_name(kerf_unit_state st)
{
        return name_of(unit_state_names, N(unit_state_names), (unsigned)st);
}

const char *kerf_workload_name(kerf_workload w)
{
        return name_of(workload_names, N(workload_names), (unsigned)w);
}

int kerf_workload_parse(const char *s)
{
        return parse_of(workload_names, N(workload_names), s);
}

const char *kerf_tier_name(kerf_tier t)
{
        return name_of(tier_names, N(tier_names), (unsigned)t);
}

int kerf_tier_parse(const char *s)
{
        if (s && strcasecmp(s, "high-impact") == 0)
                return KERF_TIER_HIGH;
        return parse_of(tier_names, N(tier_names), s);
}

bool kerf_name_ok(const char *s)
{
        size_t n = s ? strlen(s) : 0;

        if (n == 0 || n >= KERF_NAME_LEN || s[0] == '-' || s[0] == '.')
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
                      (*s >= '0' && *s <= '9') || *s == '_' || *s == '.' || *s == '-'))
                        return false;
        return true;
}
