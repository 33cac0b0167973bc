/* SPDX-License-Identifier: Apache-2.0 */
/* util.c - NVML backend: GPU and per-process utilisation */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"
#include "kerf/errno.h"

static int fail(kerf_backend *b, int r, const char *err)
{
        kerf_backend_set_error(b, "%s", err);
        return r;
}

int kerf__nvb_util_get(kerf_backend *b, unsigned gpu, kerf_backend_util *ret)
{
        struct nvb *p = kerf_backend_priv(b);
        char err[NVB_ERR];
        nvmlUtilization_t u;
        nvmlReturn_t rc;
        if (!p->gpus[gpu].dev)
                return fail(b, kerf__nvb_fail(p, err, p->gpus[gpu].open_rc, "GPU %u", gpu), err);
        if (!p->f.nvmlDeviceGetUtilizationRates)
                return fail(
                    b,
                    kerf__nvb_refuse(err, -KERF_EUNSUPP,
                                     "the NVML library lacks nvmlDeviceGetUtilizationRates"),
                    err);
        rc = p->f.nvmlDeviceGetUtilizationRates(p->gpus[gpu].dev, &u);
        if (rc != NVML_SUCCESS)
                return fail(b,
                            kerf__nvb_fail(p, err, rc, "nvmlDeviceGetUtilizationRates(GPU %u)%s",
                                           gpu,
                                           rc == NVML_ERROR_NOT_SUPPORTED
                                               ? " (not reported on MIG-enabled GPUs)"
                                               : ""),
                            err);
        ret->gpu_pct = u.gpu;
        ret->mem_pct = u.memory;
        return 0;
}

int kerf__nvb_proc_util_list(kerf_backend *b, unsigned gpu, uint64_t since_us,
                             kerf_backend_proc_util *out, size_t max)
{
        struct nvb *p = kerf_backend_priv(b);
        char err[NVB_ERR];
        nvmlProcessUtilizationSample_t *s = NULL;
        unsigned cnt = 0;
        nvmlReturn_t rc;
        nvmlDevice_t d = p->gpus[gpu].dev;
        if (!d)
                return fail(b, kerf__nvb_fail(p, err, p->gpus[gpu].open_rc, "GPU %u", gpu), err);
        if (!p->f.nvmlDeviceGetProcessUtilization)
                return fail(b,
                            kerf__nvb_refuse(err, -KERF_EUNSUPP,
                                             "the NVML library lacks "
                                             "nvmlDeviceGetProcessUtilization"),
                            err);
        rc = p->f.nvmlDeviceGetProcessUtilization(d, NULL, &cnt, since_us);
        for (int tries = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && tries < 4; tries++) {
                free(s);
                cnt += 8;
                s = calloc(cnt, sizeof(*s));
                if (!s)
                        return -ENOMEM;
                rc = p->f.nvmlDeviceGetProcessUtilization(d, s, &cnt, since_us);
        }
        if (rc == NVML_ERROR_NOT_FOUND || (rc == NVML_SUCCESS && !s)) {
                free(s);
                return 0; /* no sample newer than since_us */
        }
        if (rc != NVML_SUCCESS) {
                free(s);
                return fail(b,
                            kerf__nvb_fail(p, err, rc, "nvmlDeviceGetProcessUtilization(GPU %u)%s",
                                           gpu,
                                           rc == NVML_ERROR_NOT_SUPPORTED
                                               ? " (not reported on MIG-enabled GPUs)"
                                               : ""),
                            err);
        }
        for (unsigned i = 0; i < cnt && i < max; i++)
                out[i] =
                    (kerf_backend_proc_util){s[i].pid, s[i].timeStamp, s[i].smUtil, s[i].memUtil};
        free(s);
        return (int)cnt;
}
