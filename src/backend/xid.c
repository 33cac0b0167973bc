/* SPDX-License-Identifier: Apache-2.0 */
/* xid.c - XID classification (GPU-REFERENCE §2.6) and the names of event kinds and scopes */
#include <stddef.h>

#include "kerf/backend.h"

/* The XIDs kerf knows, in our own words. Classes follow the catalog's action column:
 * RESTART_APP / IGNORE-after-app-fault -> APP; RESET_GPU and the ECC / NVLink workflows that
 * end in a reset -> RESET_GPU; RESTART_BM (fallen off the bus) -> REBOOT_NODE; plain IGNORE
 * and rate warnings -> WATCH. 45 follows other XIDs, on its own it is an app abort. 154 only
 * summarises an action we cannot read from the event data, so it fails safe to RESET_GPU. */
static const struct {
        unsigned xid;
        kerf_xid_class cls;
        const char *what;
} xids[] = {
    {13, KERF_XID_APP, "graphics engine exception (application fault, e.g. out of bounds)"},
    {31, KERF_XID_APP, "GPU memory page fault"},
    {43, KERF_XID_APP, "application hit a fault and was stopped; GPU healthy"},
    {45, KERF_XID_APP, "preemptive cleanup after an abort (kill, Ctrl-C, reset)"},
    {46, KERF_XID_RESET_GPU, "GPU timeout"},
    {48, KERF_XID_RESET_GPU, "double-bit (uncorrectable) ECC error"},
    {62, KERF_XID_RESET_GPU, "internal microcontroller halt"},
    {63, KERF_XID_WATCH, "row-remap event (takes effect at the next reset)"},
    {64, KERF_XID_RESET_GPU, "row-remap failure"},
    {68, KERF_XID_APP, "NVDEC0 exception"},
    {74, KERF_XID_RESET_GPU, "NVLink error"},
    {79, KERF_XID_REBOOT_NODE, "GPU has fallen off the bus"},
    {92, KERF_XID_WATCH, "high single-bit ECC error rate"},
    {94, KERF_XID_APP, "contained ECC error (one application hit)"},
    {95, KERF_XID_RESET_GPU, "uncontained ECC error (several applications)"},
    {109, KERF_XID_RESET_GPU, "context-switch timeout"},
    {119, KERF_XID_RESET_GPU, "GSP RPC timeout"},
    {120, KERF_XID_RESET_GPU, "GSP error"},
    {140, KERF_XID_RESET_GPU, "unrecovered ECC escape"},
    {154, KERF_XID_RESET_GPU, "recovery action summary (action not in the event data)"},
};

static int find(unsigned xid)
{
        for (size_t i = 0; i < sizeof(xids) / sizeof(xids[0]); i++)
                if (xids[i].xid == xid)
                        return (int)i;
        return -1;
}

kerf_xid_class kerf_xid_classify(unsigned xid)
{
        int i = find(xid);
        return i < 0 ? KERF_XID_RESET_GPU : xids[i].cls;
}

bool kerf_xid_known(unsigned xid)
{
        return find(xid) >= 0;
}

const char *kerf_xid_describe(unsigned xid)
{
        int i = find(xid);
        return i < 0 ? "unknown XID" : xids[i].what;
}

const char *kerf_xid_class_name(kerf_xid_class c)
{
        static const char *const names[KERF_XID_CLASS_COUNT] = {"app_error", "reset_gpu",
                                                                "reboot_node", "watch"};
        return (unsigned)c < KERF_XID_CLASS_COUNT ? names[c] : "?";
}

const char *kerf_xid_class_desc(kerf_xid_class c)
{
        static const char *const desc[KERF_XID_CLASS_COUNT] = {
            "application error: restart the application; the GPU and its other units stay "
            "healthy",
            "GPU needs reset: drain every unit of the GPU, then reset it before reuse",
            "node reboot: the GPU fell off the bus; drain the node and reboot it",
            "watch: informational, keep serving and watch the rate",
        };
        return (unsigned)c < KERF_XID_CLASS_COUNT ? desc[c] : "?";
}

const char *kerf_backend_event_kind_name(kerf_backend_event_kind k)
{
        static const char *const names[KERF_BEV_KIND_COUNT] = {"xid", "gpu_lost", "watch_fail"};
        return (unsigned)k < KERF_BEV_KIND_COUNT ? names[k] : "?";
}

const char *kerf_blast_scope_name(kerf_blast_scope s)
{
        static const char *const names[KERF_SCOPE_COUNT] = {"none", "unit", "gpu", "node"};
        return (unsigned)s < KERF_SCOPE_COUNT ? names[s] : "?";
}
