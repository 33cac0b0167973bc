/* SPDX-License-Identifier: Apache-2.0 */
/* spank_kerf.h - the pieces of spank_kerf.so below its SPANK hooks: a minimal HTTP client to
 * kerfd's Unix socket, Slurm's gres index mapped to kerfd's devices, the option parsers (the
 * task group table is group.h) */
#ifndef KERF_SPANK_KERF_H
#define KERF_SPANK_KERF_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* One HTTP/1.1 request to kerfd on the Unix socket `sock` (Connection: close), with an
 * optional JSON body. On success returns 0, sets *ret_status and *ret_body (the parsed JSON
 * answer, NULL when the body is not JSON; release with json_decref). Returns -errno when kerfd
 * could not be reached or answered nothing HTTP; `err` then says why in words. Safe in a
 * forked child of a threaded process (plain socket, read, write, malloc). timeout_ms bounds
 * each read and write. */
int kerf_spank_http(const char *sock, const char *method, const char *path, const char *body,
                    long timeout_ms, long *ret_status, json_t **ret_body, char *err, size_t errlen);

/* The bound of each read and write of the plugin's requests to kerfd. */
#define KERF_SPANK_HTTP_TIMEOUT_MS 10000

/* How many entries a comma-separated list (CUDA_VISIBLE_DEVICES) has: 1 + its commas. */
unsigned kerf_spank_count_list(const char *s);

/* GPU memory of the first GPU of kerfd at `sock` (the shard rule's base): GET /v1/gpus.
 * Returns 0 and *ret, -errno when kerfd is not reachable, -EPROTO when it answers no GPU;
 * `err` says why. */
int kerf_spank_gpu_memory(const char *sock, uint64_t *ret, char *err, size_t errlen);

/* Slurm 22.05 gives a step only the index of its gpu in the node's gres list, not the type.
 * gres.conf from `kerf slurm gres-conf` lists whole GPUs (those not in MIG mode, by index),
 * then MIG instances in (GPU, unit) order (kerf_gres_mig_order); shards sit on the whole GPUs.
 * Index `cvd` names the GPU Slurm chose, read from kerfd at `sock` (GET /v1/gpus, /v1/node):
 * writes its UUID (for a MIG instance, the instance's MIG- UUID) and, for a MIG instance, its
 * profile. Returns 0 for a whole GPU, 1 for a MIG instance, -ENOENT when the index or the
 * layout cannot be read (then kerfd chooses the GPU). */
int kerf_spank_gres_grant(const char *sock, const char *cvd, char *prof, size_t plen, char *uuid,
                          size_t ulen);

/* The UUID of each entry of `cvd` (Slurm's CUDA_VISIBLE_DEVICES: gres indices), resolved by
 * kerf_spank_gres_grant, as a JSON array in the same order; NULL when one is not a whole GPU
 * or cannot be read. Release with json_decref. */
json_t *kerf_spank_gres_uuids(const char *sock, const char *cvd);

/* Sets "gpu_uuids" in the attach request `req` for a step on several whole GPUs
 * (kerf_spank_gres_uuids); left out (kerfd picks) when one is not a whole GPU. */
void kerf_spank_pin_all(const char *sock, json_t *req, const char *cvd);

/* Slurm's per-task binding (--gpu-bind, --gpus-per-task) inside the step's grant: `grant` is
 * the CUDA_VISIBLE_DEVICES the step's tasks got (indices), `uuids` the UUID of each of its
 * entries (kerf_spank_gres_uuids), `bound` the task's CUDA_VISIBLE_DEVICES after Slurm
 * applied the binding. Writes the UUIDs of the bound entries, comma-separated in `bound`'s
 * order, to buf and returns 0. Returns -ENOENT when there is nothing to narrow (`bound` empty
 * or equal to `grant`) or `bound` names an entry `grant` lacks (the task keeps kerf's list),
 * -ENAMETOOLONG when buf is too small. */
int kerf_spank_bind_uuids(const char *grant, json_t *uuids, const char *bound, char *buf,
                          size_t len);

/* Parses --gpu-mem by the one size rule (kerf_parse_size, docs/UNITS.md: "4G" = "4GiB",
 * a unit is required, "4GB" is refused as ambiguous), 1B..KERF_MAX_GPU_MEM_BYTES. Returns 0
 * and *ret, or -EINVAL / -ERANGE with what was wrong and the accepted forms in err. */
int kerf_spank_parse_mem(const char *s, uint64_t *ret, char *err, size_t errlen);

/* Parses an integer percentage lo..100. Returns 0 and *ret, or -EINVAL. */
int kerf_spank_parse_pct(const char *s, unsigned lo, unsigned *ret);

#endif /* KERF_SPANK_KERF_H */
