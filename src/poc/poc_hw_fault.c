/* SPDX-License-Identifier: Apache-2.0 */
/* poc_hw_fault.c - HW2 (device faults and kerfd failure: blast radius computed vs what
 * happened) and HW3 (a driver/CUDA upgrade: identities, tasks and audit traceable) */
#include "poc_hw.h"

void poc_hw2(poc_ctx *p)
{
        json_t *rec = poc_record_new(p, "HW2", POC_ROUTE_HARDWARE, "device fault");
        poc_skip(rec, "all", "TODO");
        poc_record_finish(p, rec);
}

void poc_hw3(poc_ctx *p)
{
        json_t *rec = poc_record_new(p, "HW3", POC_ROUTE_HARDWARE, "upgrade");
        poc_skip(rec, "all", "TODO");
        poc_record_finish(p, rec);
}
