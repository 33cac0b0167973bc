/* SPDX-License-Identifier: Apache-2.0 */
/* poc_verify.c - TEMP stand-in for `kerf poc verify` (branch h-report owns this file) */
#include "poc.h"

/* TEMP */
int poc_verify_dir(const char *dir, FILE *out)
{
        fprintf(out, "%s: poc verify is not written yet on this branch (TEMP)\n", dir);
        return 1;
}
