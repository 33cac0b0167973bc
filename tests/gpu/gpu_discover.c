/* SPDX-License-Identifier: Apache-2.0 */
/* gpu_discover.c - read-only discovery with the real libnvidia-ml: prints GPUs, MIG, processes */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerf/backend.h"
#include "kerf/errno.h"

/*
 * Never changes anything: the backend is opened without allow_mig_mode_change, and only
 * discovery, versions, MIG listing, process lists and utilisation are called. Exits 77
 * ("skipped") when no NVIDIA driver/GPU is present, 0 on success, 1 on a failed check.
 */

#define SKIP 77

int main(int argc, char **argv)
{
        kerf_backend_options o;
        kerf_backend_versions v;
        kerf_backend *b = NULL;
        char err[KERF_BACKEND_ERR_LEN] = "";
        int fails = 0, r;
        kerf_backend_options_init(&o);
        /* The real library only: never the simulator, whatever the environment says. */
        o.library = argc > 1 ? argv[1] : KERF_BACKEND_DEFAULT_NVML;
        unsetenv("KERF_SIM_DIR");
        r = kerf_backend_open(kerf_backend_nvml_ops(), &o, &b, err, sizeof(err));
        if (r < 0) {
                printf("SKIPPED: no NVIDIA GPU (%s)\n", err);
                return SKIP;
        }
        unsigned n = kerf_backend_gpu_count(b);
        if (n == 0) {
                printf("SKIPPED: no NVIDIA GPU (NVML loaded, 0 devices)\n");
                kerf_backend_close(b);
                return SKIP;
        }
        if (kerf_backend_versions_get(b, &v) == 0)
                printf("driver %s, CUDA %d.%d, library %s%s%s\n", v.driver, v.cuda_version / 1000,
                       (v.cuda_version % 1000) / 10, v.library,
                       v.fallback_used ? ", fallbacks: " : "", v.fallbacks);
        else
                fails++, printf("FAIL versions: %s\n", kerf_backend_errmsg(b));
        for (unsigned i = 0; i < n; i++) {
                kerf_backend_gpu g;
                kerf_backend_mig m[KERF_BACKEND_MAX_MIG * 2];
                kerf_backend_proc p[64];
                kerf_backend_util u;
                if (kerf_backend_gpu_get(b, i, &g) < 0) {
                        printf("GPU %u: cannot read: %s\n", i, kerf_backend_errmsg(b));
                        continue;
                }
                printf("GPU %u minor %u %s \"%s\" model %s mem %llu/%llu MiB mig %s%s%s\n", i,
                       g.minor, g.uuid, g.name, g.model ? g.model->name : "(unknown to kerf)",
                       (unsigned long long)(g.mem_used >> 20),
                       (unsigned long long)(g.mem_total >> 20),
                       !g.mig_capable  ? "n/a"
                       : g.mig_current ? "on"
                                       : "off",
                       g.mig_pending != g.mig_current ? " (change pending)" : "",
                       g.lost ? " LOST" : "");
                if (strncmp(g.uuid, "GPU-", 4) != 0)
                        fails++, printf("FAIL GPU %u: uuid does not start with GPU-\n", i);
                if (g.mig_current) {
                        r = kerf_backend_mig_list(b, i, m, KERF_BACKEND_MAX_MIG * 2);
                        if (r < 0)
                                printf("  MIG list: %s\n", kerf_backend_errmsg(b));
                        for (int j = 0; j < r && j < KERF_BACKEND_MAX_MIG * 2; j++)
                                printf("  GI %u CI %d profile %u (%s) slices %u+%u %s\n",
                                       m[j].gi_id,
                                       m[j].ci_id == KERF_BACKEND_NO_ID ? -1 : (int)m[j].ci_id,
                                       m[j].profile_id, m[j].profile_name, m[j].start, m[j].size,
                                       m[j].uuid);
                } else if (kerf_backend_util_get(b, i, &u) == 0) {
                        printf("  utilisation gpu %u%% mem %u%%\n", u.gpu_pct, u.mem_pct);
                }
                r = kerf_backend_proc_list(b, i, KERF_BACKEND_NO_ID, p, 64);
                if (r < 0)
                        printf("  processes: %s\n", kerf_backend_errmsg(b));
                for (int j = 0; j < r && j < 64; j++)
                        printf("  pid %u %llu MiB\n", p[j].pid,
                               (unsigned long long)(p[j].mem_bytes >> 20));
        }
        kerf_backend_close(b);
        printf("%s\n", fails ? "FAILED" : "OK (read-only)");
        return fails ? 1 : 0;
}
