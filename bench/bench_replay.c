/* SPDX-License-Identifier: Apache-2.0 */
/* bench_replay.c - placement quality on the openb trace: the FGD arrival experiment on every pod
 * list, kerf vs best-fit vs first-fit in the same run (issue 2, benchmark c).
 * Usage: bench_replay [DIR [SEEDS [LIST|all [cpu-pods]]]]; cpu-pods also samples the pods that
 * request no GPU (kerf_replay_opts.cpu_pods). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

static const char *const lists[] = {"default", "gpushare40", "gpuspec33", "multigpu20"};

int main(int argc, char **argv)
{
        const char *dir = argc > 1 ? argv[1] : "../shared/data/openb";
        unsigned long long seeds = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
        char path[1024], err[KERF_REPLAY_ERR_LEN];
        kerf_fleet *fleet = NULL;
        snprintf(path, sizeof(path), "%s/openb_node_list_gpu_node.csv", dir);
        if (kerf_replay_nodes_load(path, &fleet, err, sizeof(err)) < 0) {
                fprintf(stderr, "bench_replay: %s\n", err);
                return 1;
        }
        printf("# bench_replay: %s, %zu nodes, %zu GPUs, seeds 1..%llu; %% of GPU capacity at "
               "100%% arrived\n",
               dir, fleet->n_nodes, fleet->n_gpus, seeds);
        printf("%-11s %5s | %-28s | %-28s | %-28s | %9s %9s\n", "pod list", "seed",
               "kerf alloc/unalloc/frag", "bestfit alloc/unalloc/frag",
               "firstfit alloc/unalloc/frag", "kerf/bf", "ff/bf");
        for (size_t l = 0; l < sizeof(lists) / sizeof(*lists); l++) {
                if (argc > 3 && strcmp(argv[3], "all") != 0 && strcmp(argv[3], lists[l]) != 0)
                        continue; /* only the pod list named */
                kerf_replay_pod *pods = NULL;
                size_t n = 0;
                snprintf(path, sizeof(path), "%s/openb_pod_list_%s.csv", dir, lists[l]);
                if (kerf_replay_pods_load(path, &pods, &n, err, sizeof(err)) < 0) {
                        fprintf(stderr, "bench_replay: %s\n", err);
                        return 1;
                }
                double sum_ratio[2] = {0, 0};
                for (unsigned long long sd = 1; sd <= seeds; sd++) {
                        kerf_replay_opts o;
                        kerf_replay_result r;
                        kerf_replay_opts_init(&o);
                        o.seed = sd;
                        o.cpu_pods = argc > 4 && strcmp(argv[4], "cpu-pods") == 0;
                        if (kerf_replay_run(fleet, pods, n, &o, &r) < 0) {
                                fprintf(stderr, "bench_replay: %s: replay failed\n", path);
                                return 1;
                        }
                        const kerf_replay_point *e[3];
                        for (int c = 0; c < 3; c++)
                                e[c] = &r.curves[c].pts[r.curves[c].n_pts - 1];
                        printf("%-11s %5llu |", lists[l], sd);
                        for (int c = 0; c < 3; c++)
                                printf(" %8.2f %8.2f %8.2f   |", e[c]->alloc_pct, e[c]->unalloc_pct,
                                       e[c]->frag_pct);
                        double k = e[0]->unalloc_pct / e[1]->unalloc_pct;
                        double f = e[2]->unalloc_pct / e[1]->unalloc_pct;
                        sum_ratio[0] += k;
                        sum_ratio[1] += f;
                        printf(" %+8.1f%% %+8.1f%%\n", (k - 1) * 100, (f - 1) * 100);
                        kerf_replay_result_fini(&r);
                }
                if (seeds > 1)
                        printf("%-11s %5s | unallocated vs bestfit, mean over seeds: kerf %+.1f%%, "
                               "firstfit %+.1f%%\n",
                               lists[l], "mean", (sum_ratio[0] / (double)seeds - 1) * 100,
                               (sum_ratio[1] / (double)seeds - 1) * 100);
                free(pods);
        }
        kerf_fleet_free(fleet);
        return 0;
}
