/* SPDX-License-Identifier: Apache-2.0 */
/* kerf_sim_describe.c - `kerf-sim describe`: the simulated node as text or JSON */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static void json_str(FILE *o, const char *s)
{
        fputc('"', o);
        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;
                if (c == '"' || c == '\\')
                        fprintf(o, "\\%c", c);
                else if (c < 0x20)
                        fprintf(o, "\\u%04x", c);
                else
                        fputc(c, o);
        }
        fputc('"', o);
}

static void gib(char *buf, size_t len, uint64_t bytes)
{
        snprintf(buf, len, "%.2f GiB", (double)bytes / (double)KERF_GIB);
}

static void target_str(const kerf_sim_target *t, char *buf, size_t len)
{
        if (t->gi < 0)
                snprintf(buf, len, "gpu %d", t->gpu);
        else
                snprintf(buf, len, "gpu %d gi %d ci %d", t->gpu, t->gi, t->ci);
}

static int describe_text(kerf_sim *st, FILE *o, const kerf_sim_node_info *n,
                         const kerf_sim_proc_info *procs, unsigned np)
{
        char a[32], b[32];
        fprintf(o, "node %s (simulated by kerf-sim)  driver %s  CUDA %d.%d  state %s\n", n->name,
                n->driver, n->cuda_version / 1000, (n->cuda_version % 1000) / 10, kerf_sim_dir(st));
        for (unsigned g = 0; g < n->n_gpus; g++) {
                kerf_sim_gpu_info gi;
                kerf_sim_gi_info gis[KERF_SIM_MAX_GIS];
                unsigned ng = 0;
                int rc = kerf_sim_gpu_get(st, g, &gi);
                if (rc < 0 || (rc = kerf_sim_gi_list(st, g, gis, KERF_SIM_MAX_GIS, &ng)) < 0)
                        return rc;
                gib(a, sizeof(a), gi.mem_used);
                gib(b, sizeof(b), gi.mem_total);
                fprintf(o, "GPU %u  %s  %s  MIG %s%s  memory %s / %s (simulated)  XIDs %llu", g,
                        gi.uuid, gi.model->name, gi.mig_enabled ? "on" : "off",
                        gi.lost ? "  LOST" : "", a, b, (unsigned long long)gi.xid_count);
                if (gi.last_xid)
                        fprintf(o, " (last %u)", gi.last_xid);
                fputc('\n', o);
                for (unsigned i = 0; i < ng && i < KERF_SIM_MAX_GIS; i++) {
                        gib(a, sizeof(a), gis[i].mem_used);
                        gib(b, sizeof(b), gis[i].mem_total);
                        fprintf(o,
                                "  GI %u  %s (profile %u)  memory slices %u-%u  memory %s / %s\n",
                                gis[i].id, gis[i].profile ? gis[i].profile->name : "?",
                                gis[i].profile ? gis[i].profile->id : 0, gis[i].start,
                                gis[i].start + gis[i].size - 1, a, b);
                        for (unsigned c = 0; c < gis[i].n_cis; c++)
                                fprintf(o, "    CI %u  profile %u  compute slices %u-%u  %s\n",
                                        gis[i].cis[c].id, gis[i].cis[c].profile,
                                        gis[i].cis[c].start,
                                        gis[i].cis[c].start + gis[i].cis[c].size - 1,
                                        gis[i].cis[c].uuid);
                }
        }
        for (unsigned i = 0; i < np; i++) {
                char t[64];
                target_str(&procs[i].target, t, sizeof(t));
                gib(a, sizeof(a), procs[i].mem_bytes);
                fprintf(o, "process %d (%s)  %s  memory %s  engine time %.3f s (simulated)\n",
                        (int)procs[i].pid, procs[i].comm[0] ? procs[i].comm : "?", t, a,
                        (double)procs[i].engine_ns / 1e9);
        }
        if (np == 0)
                fprintf(o, "no processes\n");
        return 0;
}

static int describe_json(kerf_sim *st, FILE *o, const kerf_sim_node_info *n,
                         const kerf_sim_proc_info *procs, unsigned np)
{
        fprintf(o, "{\"simulated\":true,\"node\":");
        json_str(o, n->name);
        fprintf(o, ",\"driver\":");
        json_str(o, n->driver);
        fprintf(o, ",\"cuda_version\":%d,\"generation\":%llu,\"gpus\":[", n->cuda_version,
                (unsigned long long)n->generation);
        for (unsigned g = 0; g < n->n_gpus; g++) {
                kerf_sim_gpu_info gi;
                kerf_sim_gi_info gis[KERF_SIM_MAX_GIS];
                unsigned ng = 0;
                int rc = kerf_sim_gpu_get(st, g, &gi);
                if (rc < 0 || (rc = kerf_sim_gi_list(st, g, gis, KERF_SIM_MAX_GIS, &ng)) < 0)
                        return rc;
                fprintf(o, "%s{\"index\":%u,\"uuid\":", g ? "," : "", g);
                json_str(o, gi.uuid);
                fprintf(o, ",\"model\":");
                json_str(o, gi.model->name);
                fprintf(o,
                        ",\"mig_enabled\":%s,\"lost\":%s,\"mem_total\":%llu,\"mem_used\":%llu,"
                        "\"xid_count\":%llu,\"last_xid\":%u,\"instances\":[",
                        gi.mig_enabled ? "true" : "false", gi.lost ? "true" : "false",
                        (unsigned long long)gi.mem_total, (unsigned long long)gi.mem_used,
                        (unsigned long long)gi.xid_count, gi.last_xid);
                for (unsigned i = 0; i < ng && i < KERF_SIM_MAX_GIS; i++) {
                        fprintf(o, "%s{\"gi\":%u,\"profile\":", i ? "," : "", gis[i].id);
                        json_str(o, gis[i].profile ? gis[i].profile->name : "?");
                        fprintf(o,
                                ",\"profile_id\":%u,\"start\":%u,\"size\":%u,\"mem_total\":%llu,"
                                "\"mem_used\":%llu,\"cis\":[",
                                gis[i].profile ? gis[i].profile->id : 0, gis[i].start, gis[i].size,
                                (unsigned long long)gis[i].mem_total,
                                (unsigned long long)gis[i].mem_used);
                        for (unsigned c = 0; c < gis[i].n_cis; c++) {
                                fprintf(o,
                                        "%s{\"ci\":%u,\"profile\":%u,\"start\":%u,\"size\":%u,"
                                        "\"uuid\":",
                                        c ? "," : "", gis[i].cis[c].id, gis[i].cis[c].profile,
                                        gis[i].cis[c].start, gis[i].cis[c].size);
                                json_str(o, gis[i].cis[c].uuid);
                                fputc('}', o);
                        }
                        fprintf(o, "]}");
                }
                fprintf(o, "]}");
        }
        fprintf(o, "],\"processes\":[");
        for (unsigned i = 0; i < np; i++) {
                fprintf(o, "%s{\"pid\":%d,\"comm\":", i ? "," : "", (int)procs[i].pid);
                json_str(o, procs[i].comm);
                fprintf(o, ",\"gpu\":%d,\"gi\":%d,\"ci\":%d,\"mem_bytes\":%llu,\"engine_ns\":%llu}",
                        procs[i].target.gpu, procs[i].target.gi, procs[i].target.ci,
                        (unsigned long long)procs[i].mem_bytes,
                        (unsigned long long)procs[i].engine_ns);
        }
        fprintf(o, "]}\n");
        return 0;
}

int kerf__sim_describe(kerf_sim *st, FILE *o, bool json)
{
        static kerf_sim_proc_info procs[KERF_SIM_MAX_PROCS];
        kerf_sim_node_info n;
        unsigned np = 0;
        int rc = kerf_sim_node_get(st, &n);
        if (rc < 0 || (rc = kerf_sim_proc_list(st, -1, -1, procs, KERF_SIM_MAX_PROCS, &np)) < 0)
                return rc;
        if (np > KERF_SIM_MAX_PROCS)
                np = KERF_SIM_MAX_PROCS;
        return json ? describe_json(st, o, &n, procs, np) : describe_text(st, o, &n, procs, np);
}
