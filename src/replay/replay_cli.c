/* SPDX-License-Identifier: Apache-2.0 */
/* replay_cli.c - `kerf replay` / kerf-replay: replay a trace on a fleet and print the curve */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "kerf/errno.h"
#include "replay.h"
#include "replay_cli.h"

static void usage(FILE *o)
{
        fprintf(o,
                "usage: kerf replay (--nodes NODES.csv | --fleet FLEET.yaml) --pods PODS.csv\n"
                "                   [--policy kerf|bestfit|firstfit|all] [--seed N] [--step PCT]\n"
                "                   [--stop PCT] [--cpu-pods] [--json]\n"
                "Draws GPU pods from PODS.csv (with replacement, fixed seed) until their GPU\n"
                "demand reaches --stop %% (100) of the fleet's GPU capacity; nothing leaves.\n"
                "Prints, every --step %% (5) of capacity arrived, the GPU capacity allocated,\n"
                "unallocated, failed, and FGD's fragmentation measure, per policy.\n"
                "--cpu-pods also draws the pods that request no GPU (placed by the replay on\n"
                "the node with the least free CPU that holds them, for every policy).\n");
}

static int parse_uint(const char *opt, const char *s, unsigned long long max,
                      unsigned long long *ret)
{
        char *end;
        errno = 0;
        if (!s || !*s || *s == '-') {
                fprintf(stderr, "kerf-replay: %s needs a non-negative integer\n", opt);
                return -1;
        }
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || *end || v > max) {
                fprintf(stderr, "kerf-replay: %s '%s': not an integer in 0..%llu\n", opt, s, max);
                return -1;
        }
        *ret = v;
        return 0;
}

static int load_fleet_yaml(const char *path, kerf_fleet **ret)
{
        char *buf = NULL;
        size_t len = 0;
        int rc = kerf_file_read_all(path, SIZE_MAX - 1, &buf, &len);
        if (rc < 0) {
                fprintf(stderr, "kerf-replay: %s: %s\n", path, strerror(-rc));
                return -1;
        }
        char err[KERF_REPLAY_ERR_LEN] = "";
        rc = kerf_fleet_parse_yaml(buf, len, ret, err, sizeof(err));
        free(buf);
        if (rc < 0) {
                fprintf(stderr, "kerf-replay: %s: %s\n", path, err[0] ? err : "invalid fleet");
                return -1;
        }
        return 0;
}

static void print_text(const kerf_replay_result *r, const char *pods_path, unsigned long long seed,
                       size_t n_gpus)
{
        printf("# kerf-replay: %s, seed %llu, %zu GPUs, %zu GPU pods sampled from\n", pods_path,
               seed, n_gpus, r->n_gpu_pods);
        printf("# %% of GPU capacity: alloc = allocated, unalloc = 100 - alloc, "
               "frag = FGD fragmentation\n");
        printf("%8s", "arrived");
        for (size_t c = 0; c < r->n_curves; c++)
                printf(" | %-8s %6s %7s %6s %6s", kerf_replay_policy_name(r->curves[c].policy),
                       "alloc", "unalloc", "frag", "failed");
        printf("\n");
        size_t n = r->n_curves ? r->curves[0].n_pts : 0;
        for (size_t i = 0; i < n; i++) {
                printf("%7.1f%%", r->curves[0].pts[i].arrived_pct);
                for (size_t c = 0; c < r->n_curves; c++) {
                        const kerf_replay_point *p = &r->curves[c].pts[i];
                        printf(" | %-8s %6.2f %7.2f %6.2f %6llu", "", p->alloc_pct, p->unalloc_pct,
                               p->frag_pct, (unsigned long long)p->failed);
                }
                printf("\n");
        }
        for (size_t c = 0; c < r->n_curves; c++) {
                const kerf_replay_curve *k = &r->curves[c];
                const kerf_replay_point *last = &k->pts[k->n_pts - 1];
                printf("# %-8s: first failure at %.2f%% arrived (%.2f%% unallocated then); at "
                       "%.2f%% arrived: %.2f%% allocated, %.2f%% unallocated, %llu of %llu "
                       "tasks failed\n",
                       kerf_replay_policy_name(k->policy), k->first_fail_arrived_pct,
                       k->first_fail_unalloc_pct, last->arrived_pct, last->alloc_pct,
                       last->unalloc_pct, (unsigned long long)last->failed,
                       (unsigned long long)last->arrived);
        }
        for (size_t c = 0; c < r->n_curves; c++) {
                if (r->curves[c].policy != KERF_PLACE_BESTFIT)
                        continue;
                const kerf_replay_point *b = &r->curves[c].pts[r->curves[c].n_pts - 1];
                for (size_t o = 0; o < r->n_curves; o++) {
                        const kerf_replay_point *p = &r->curves[o].pts[r->curves[o].n_pts - 1];
                        if (o == c || b->unalloc_pct <= 0)
                                continue;
                        printf("# %s vs bestfit: %+.1f%% unallocated GPU capacity at the end\n",
                               kerf_replay_policy_name(r->curves[o].policy),
                               (p->unalloc_pct - b->unalloc_pct) * 100.0 / b->unalloc_pct);
                }
        }
}

static void print_json(const kerf_replay_result *r, const char *pods_path, unsigned long long seed,
                       size_t n_gpus)
{
        printf("{\"pods\":\"");
        for (const char *c = pods_path; *c; c++) {
                if (*c == '"' || *c == '\\')
                        putchar('\\');
                if ((unsigned char)*c >= 0x20)
                        putchar(*c);
        }
        printf("\",\"seed\":%llu,\"gpus\":%zu,\"gpu_pods\":%zu,\"curves\":[", seed, n_gpus,
               r->n_gpu_pods);
        for (size_t c = 0; c < r->n_curves; c++) {
                const kerf_replay_curve *k = &r->curves[c];
                printf("%s{\"policy\":\"%s\",\"first_fail_arrived_pct\":%.3f,"
                       "\"first_fail_unalloc_pct\":%.3f,\"points\":[",
                       c ? "," : "", kerf_replay_policy_name(k->policy), k->first_fail_arrived_pct,
                       k->first_fail_unalloc_pct);
                for (size_t i = 0; i < k->n_pts; i++) {
                        const kerf_replay_point *p = &k->pts[i];
                        printf("%s{\"arrived_pct\":%.3f,\"alloc_pct\":%.3f,\"unalloc_pct\":%.3f,"
                               "\"failed_pct\":%.3f,\"frag_pct\":%.3f,\"arrived\":%llu,"
                               "\"placed\":%llu,\"failed\":%llu}",
                               i ? "," : "", p->arrived_pct, p->alloc_pct, p->unalloc_pct,
                               p->failed_pct, p->frag_pct, (unsigned long long)p->arrived,
                               (unsigned long long)p->placed, (unsigned long long)p->failed);
                }
                printf("]}");
        }
        printf("]}\n");
}

int kerf_replay_cli(int argc, char **argv)
{
        static const struct option lo[] = {{"nodes", required_argument, NULL, 'n'},
                                           {"fleet", required_argument, NULL, 'f'},
                                           {"pods", required_argument, NULL, 'p'},
                                           {"policy", required_argument, NULL, 'P'},
                                           {"seed", required_argument, NULL, 's'},
                                           {"step", required_argument, NULL, 'S'},
                                           {"stop", required_argument, NULL, 'T'},
                                           {"json", no_argument, NULL, 'j'},
                                           {"cpu-pods", no_argument, NULL, 'c'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
        const char *nodes = NULL, *fleet_path = NULL, *pods_path = NULL, *policy = "all";
        unsigned long long seed = 42, step = 5, stop = 100;
        bool json = false, cpu_pods = false;
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
                switch (c) {
                case 'n':
                        nodes = optarg;
                        break;
                case 'f':
                        fleet_path = optarg;
                        break;
                case 'p':
                        pods_path = optarg;
                        break;
                case 'P':
                        policy = optarg;
                        break;
                case 's':
                        if (parse_uint("--seed", optarg, UINT64_MAX, &seed) < 0)
                                return 2;
                        break;
                case 'S':
                        if (parse_uint("--step", optarg, 100, &step) < 0)
                                return 2;
                        break;
                case 'T':
                        if (parse_uint("--stop", optarg, 1000, &stop) < 0)
                                return 2;
                        break;
                case 'j':
                        json = true;
                        break;
                case 'c':
                        cpu_pods = true;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "kerf-replay: unexpected argument '%s'\n", argv[optind]);
                return 2;
        }
        if (!pods_path || (!nodes == !fleet_path)) {
                fprintf(stderr, "kerf-replay: need --pods and exactly one of --nodes, --fleet\n");
                return 2;
        }
        if (step == 0 || stop == 0) {
                fprintf(stderr, "kerf-replay: --step and --stop must be at least 1\n");
                return 2;
        }
        kerf_replay_opts o;
        kerf_replay_opts_init(&o);
        o.seed = seed;
        o.step_pct = (unsigned)step;
        o.stop_pct = (unsigned)stop;
        o.cpu_pods = cpu_pods;
        if (strcmp(policy, "all") != 0) {
                int p = kerf_replay_policy_parse(policy);
                if (p < 0) {
                        fprintf(stderr,
                                "kerf-replay: --policy '%s': use kerf, bestfit, firstfit or all\n",
                                policy);
                        return 2;
                }
                o.n_policies = 1;
                o.policies[0] = (kerf_place_policy)p;
        }

        char err[KERF_REPLAY_ERR_LEN] = "";
        kerf_fleet *fleet = NULL;
        kerf_replay_pod *pods = NULL;
        size_t n_pods = 0;
        kerf_replay_result res;
        int rc = 1;
        if (nodes) {
                if (kerf_replay_nodes_load(nodes, &fleet, err, sizeof(err)) < 0) {
                        fprintf(stderr, "kerf-replay: %s\n", err);
                        goto out;
                }
        } else if (load_fleet_yaml(fleet_path, &fleet) < 0) {
                goto out;
        }
        if (kerf_replay_pods_load(pods_path, &pods, &n_pods, err, sizeof(err)) < 0) {
                fprintf(stderr, "kerf-replay: %s\n", err);
                goto out;
        }
        int r = kerf_replay_run(fleet, pods, n_pods, &o, &res);
        if (r < 0) {
                fprintf(stderr, "kerf-replay: %s: %s\n", pods_path,
                        r == -EINVAL ? "no pod requests a GPU" : strerror(-r));
                goto out;
        }
        if (json)
                print_json(&res, pods_path, seed, fleet->n_gpus);
        else
                print_text(&res, pods_path, seed, fleet->n_gpus);
        kerf_replay_result_fini(&res);
        rc = 0;
out:
        free(pods);
        kerf_fleet_free(fleet);
        return rc;
}
