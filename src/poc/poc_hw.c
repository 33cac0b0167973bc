/* SPDX-License-Identifier: Apache-2.0 */
/* poc_hw.c - TEMP stand-ins for HW1-HW4 (branch h-hw owns this file; the lead takes theirs) */
#include "poc.h"

/* TEMP */
static void temp_skip(poc_ctx *p, const char *id, const char *title)
{
        json_t *rec = poc_record_new(p, id, POC_ROUTE_HARDWARE, title);
        poc_skip(rec, "all", "TEMP: not written yet on this branch (h-hw)");
        poc_record_finish(p, rec);
}

/* TEMP */
void poc_hw1(poc_ctx *p)
{
        temp_skip(p, "HW1", "unit lifecycle");
}
/* TEMP */
void poc_hw2(poc_ctx *p)
{
        temp_skip(p, "HW2", "device fault");
}
/* TEMP */
void poc_hw3(poc_ctx *p)
{
        temp_skip(p, "HW3", "upgrade");
}
/* TEMP */
void poc_hw4(poc_ctx *p)
{
        temp_skip(p, "HW4", "cross-pool");
}
