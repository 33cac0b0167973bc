/* SPDX-License-Identifier: Apache-2.0 */
/* replay.h - trace replay for capacity planning: the openb CSV readers, the pod -> request
 * mapping and the FGD (ATC'23) arrival experiment over kerf's scheduler */
#ifndef KERF_REPLAY_H
#define KERF_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kerf/core.h"
#include "kerf/sched.h"

#define KERF_REPLAY_MAX_POLICIES 3
#define KERF_REPLAY_ERR_LEN      256

/* One pod of an openb pod list. */
typedef struct kerf_replay_pod {
        char name[KERF_NAME_LEN];
        uint64_t cpu_milli;
        uint64_t mem_mib;
        unsigned num_gpu;   /* 0 = CPU-only pod */
        unsigned gpu_milli; /* per GPU, 0..1000; 1000 for whole GPUs */
        uint64_t
            model_mask; /* gpu_spec as a kerf model mask (bit i = kerf_gpu_model_at(i)); 0 = any */
} kerf_replay_pod;

/* Parses an openb node list ("sn,cpu_milli,memory_mib,gpu,model" with a header line; columns
 * found by name, others ignored) into a new fleet without MIG. `fname` is only used in error
 * messages. Returns 0 and *ret (free with kerf_fleet_free()), or -KERF_EPARSE / -ENOMEM with
 * "FILE:LINE: what is wrong" in `err` (when not NULL). *ret is untouched on failure. */
int kerf_replay_nodes_parse(const char *text, size_t len, const char *fname, kerf_fleet **ret,
                            char *err, size_t errlen);
/* Same, reading the file at `path` (-errno when it cannot be read). */
int kerf_replay_nodes_load(const char *path, kerf_fleet **ret, char *err, size_t errlen);

/* Parses an openb pod list (header with at least name,cpu_milli,memory_mib,num_gpu,gpu_milli;
 * gpu_spec optional: a '|'-separated list of model names). A GPU pod needs gpu_milli 1..1000,
 * and exactly 1000 when it asks for more than one GPU; a CPU-only pod has num_gpu 0 and
 * gpu_milli 0. Returns 0 with *ret (array of *ret_n pods, free with free()), or -KERF_EPARSE /
 * -ENOMEM with "FILE:LINE: what is wrong" in `err`. Outputs are untouched on failure. */
int kerf_replay_pods_parse(const char *text, size_t len, const char *fname, kerf_replay_pod **ret,
                           size_t *ret_n, char *err, size_t errlen);
int kerf_replay_pods_load(const char *path, kerf_replay_pod **ret, size_t *ret_n, char *err,
                          size_t errlen);

/* Maps a GPU pod to a request of tenant `tenant` (not copied):
 *   num_gpu 1, gpu_milli < 1000  -> route slice, mem_permille = gpu_milli,
 *                                  compute_pct = gpu_milli / 10
 *   num_gpu >= 1, gpu_milli 1000 -> route whole, gpus = num_gpu
 *   gpu_spec -> model_mask; cpu_milli -> cpu_milli; memory_mib -> host_mem_bytes.
 * Workload batch, priority 0, not preemptible. Returns 0, or -EINVAL for a CPU-only pod or an
 * unsupported shape; *ret is untouched on failure. */
int kerf_replay_pod_request(const kerf_replay_pod *p, const char *tenant, kerf_request *ret);

/* GPU demand of a pod in milli-GPUs: num_gpu * gpu_milli. */
static inline uint64_t kerf_replay_pod_demand(const kerf_replay_pod *p)
{
        return (uint64_t)p->num_gpu * p->gpu_milli;
}

typedef struct kerf_replay_opts {
        uint64_t seed;       /* sampling seed */
        unsigned step_pct;   /* a curve point every step_pct % of capacity (5) */
        unsigned stop_pct;   /* arrivals stop at this % of GPU capacity (100) */
        unsigned n_policies; /* 1..KERF_REPLAY_MAX_POLICIES */
        kerf_place_policy policies[KERF_REPLAY_MAX_POLICIES];
        bool cpu_pods; /* also sample the pods that request no GPU, as FGD does (false) */
} kerf_replay_opts;

/* Defaults: seed 42, step 5, stop 100, policies kerf, bestfit, firstfit. */
void kerf_replay_opts_init(kerf_replay_opts *o);

/* One point of a curve. Percentages are of the fleet's GPU capacity (GPUs x 1000 milli). */
typedef struct kerf_replay_point {
        double arrived_pct;               /* GPU demand of the tasks arrived so far */
        double alloc_pct;                 /* GPU capacity allocated to placed tasks */
        double unalloc_pct;               /* 100 - alloc_pct */
        double failed_pct;                /* GPU demand of the tasks that could not be placed */
        double frag_pct;                  /* FGD's expected fragmentation (docs/PERFORMANCE.md) */
        uint64_t arrived, placed, failed; /* task counts */
} kerf_replay_point;

typedef struct kerf_replay_curve {
        kerf_place_policy policy;
        kerf_replay_point *pts;
        size_t n_pts;
        double first_fail_arrived_pct;   /* arrival when the first task failed (-1: none did) */
        double first_fail_unalloc_pct;   /* unallocated capacity at that moment */
        uint64_t cpu_placed, cpu_failed; /* pods without GPUs placed / with no node left */
} kerf_replay_curve;

typedef struct kerf_replay_result {
        uint64_t capacity_milli; /* GPUs x 1000 */
        size_t n_gpu_pods;       /* GPU pods the sample is drawn from */
        size_t n_cpu_pods;       /* pods without GPUs it is drawn from (0 unless cpu_pods) */
        size_t n_curves;
        kerf_replay_curve curves[KERF_REPLAY_MAX_POLICIES];
} kerf_replay_result;

/* Runs the FGD arrival experiment: pods are drawn uniformly with replacement (fixed seed) and
 * submitted one by one, the same sequence to one scheduler per policy; each arrival is placed
 * at once or fails (and is dropped); nothing leaves. Arrivals stop when the arrived GPU demand
 * reaches stop_pct % of capacity. Node CPU and host memory are honoured. Only GPU pods are
 * drawn unless cpu_pods: then pods without GPUs are drawn too; they are not scheduler tasks
 * (kerf_request cannot express one): the replay puts each on the node with the least free CPU
 * that holds it (then least free memory, then fleet order), the same rule for every policy,
 * and holds that CPU and memory in the scheduler (src/sched/hold.h). Point counts (arrived,
 * placed, failed) are of GPU pods. Returns 0 and
 * fills *ret (release with kerf_replay_result_fini()), -EINVAL (no GPU pods, bad options) or
 * -ENOMEM. Deterministic for a given seed. */
int kerf_replay_run(const kerf_fleet *fleet, const kerf_replay_pod *pods, size_t n_pods,
                    const kerf_replay_opts *opts, kerf_replay_result *ret);
void kerf_replay_result_fini(kerf_replay_result *r);

/* "kerf", "bestfit", "firstfit"; parse returns the policy or -EINVAL. */
const char *kerf_replay_policy_name(kerf_place_policy p);
int kerf_replay_policy_parse(const char *s);

#endif /* KERF_REPLAY_H */
