/* SPDX-License-Identifier: Apache-2.0 */
/* fields_tenant.c - the tenant's field descriptors (kerf/fields.h): what POST /v1/tenants,
 * PATCH /v1/tenants/{name}, kerfd.yaml's tenants[] and tenant_defaults take, their bounds,
 * defaults and help; kerf tenant create/patch's flags and docs/API.md's tenant table */
#include "kerf/core.h"
#include "kerf/fields.h"

static const char *workload_value(unsigned i)
{
        return i < KERF_WL_COUNT ? kerf_workload_name((kerf_workload)i) : NULL;
}

static const char *tier_value(unsigned i)
{
        return i < KERF_TIER_COUNT ? kerf_tier_name((kerf_tier)i) : NULL;
}

#define C   KERF_FIELD_TENANT_CREATE
#define P   KERF_FIELD_TENANT_PATCH
#define Y   KERF_FIELD_TENANT_FILE
#define D   KERF_FIELD_TENANT_DEFAULTS
#define NUL KERF_FIELD_NULLABLE
#define REP KERF_FIELD_REPEAT

/* Order: docs/API.md's tenant table and kerf tenant create --help. */
const kerf_field kerf_tenant_fields[] = {
    {"name", KERF_FIELD_NAME, 1, KERF_NAME_LEN - 1, "required", "tenant name", NULL, NULL, C | Y, 0,
     NULL, NULL},
    {"cohort", KERF_FIELD_NAME, 1, KERF_NAME_LEN - 1, "none",
     "the cohort it lends quota to and borrows from", "cohort", "C", C | Y, NUL, NULL, NULL},
    {"weight", KERF_FIELD_INT, 1, KERF_TENANT_WEIGHT_MAX, "1", "fair-share weight", "weight", "W",
     C | Y, 0, NULL, NULL},
    {"uid", KERF_FIELD_INT, 0, KERF_MAX_TENANT_ID, "derived", "uid its tasks run as", "uid", "UID",
     C | Y, 0, NULL, NULL},
    {"gid", KERF_FIELD_INT, 0, KERF_MAX_TENANT_ID, "derived", "gid its tasks run as", "gid", "GID",
     C | Y, 0, NULL, NULL},
    {"allow_root", KERF_FIELD_BOOL, 0, 1, "false",
     "its tasks may run as root or an admin (config file only)", NULL, NULL, Y, 0, NULL, NULL},
    {"max_priority", KERF_FIELD_INT, KERF_PRIORITY_MIN, KERF_PRIORITY_MAX, "`tenant_defaults`",
     "highest priority its tasks may ask for", "max-priority", "P", C | P | Y | D, NUL, NULL, NULL},
    {"max_tier", KERF_FIELD_ENUM, 0, KERF_TIER_COUNT - 1, "`tenant_defaults`",
     "most urgent tier its tasks may ask for", "max-tier", "T", C | P | Y | D, NUL, tier_value,
     kerf_tier_parse},
    {"max_pending", KERF_FIELD_INT, 0, KERF_TENANT_MAX_PENDING, "`tenant_defaults`",
     "unfinished tasks it may hold", "max-pending", "N", C | P | Y | D, NUL, NULL, NULL},
    {"workloads", KERF_FIELD_STRLIST, 1, 0, "all", "a workload it may submit", "workload", "WL",
     C | P | Y, NUL | REP, workload_value, kerf_workload_parse},
    {"quota", KERF_FIELD_OBJECT, 0, KERF_RES_COUNT, "unlimited",
     "nominal, borrow_limit, lend_limit per resource", NULL, NULL, C | Y, 0, NULL, NULL},
    {"uid_base", KERF_FIELD_INT, 0, KERF_MAX_TENANT_ID, "2000000000",
     "first uid derived for a tenant without uid (0: such tenants are refused as root)", NULL, NULL,
     D, 0, NULL, NULL},
    {"uid_span", KERF_FIELD_INT, 1, KERF_TENANT_UID_SPAN_MAX, "1048576",
     "how many uids are derived from uid_base", NULL, NULL, D, 0, NULL, NULL},
};
const size_t kerf_tenant_fields_count = sizeof(kerf_tenant_fields) / sizeof(kerf_tenant_fields[0]);
