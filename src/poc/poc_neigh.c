/* SPDX-License-Identifier: Apache-2.0 */
/* poc_neigh.c - TEMP stand-in for the neighbour-impact test (branch h-hw owns this file) */
#include "poc.h"

/* TEMP */
void poc_neighbour(poc_ctx *p)
{
        json_t *rec = poc_record_new(p, "NB", POC_ROUTE_BOTH, "neighbour impact");
        poc_skip(rec, "all", "TEMP: not written yet on this branch (h-hw)");
        poc_record_finish(p, rec);
}
