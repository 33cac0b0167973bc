/* SPDX-License-Identifier: Apache-2.0 */
/* spank_kerf.h - the pieces of spank_kerf.so below its SPANK hooks: a minimal HTTP client to
 * kerfd's Unix socket, the attach request it builds, and the shard rule */
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

/* Parses --gpu-mem by the one size rule (kerf_parse_size, docs/UNITS.md: "4G" = "4GiB",
 * a unit is required, "4GB" is refused as ambiguous), 1B..KERF_MAX_GPU_MEM_BYTES. Returns 0
 * and *ret, or -EINVAL / -ERANGE with what was wrong and the accepted forms in err. */
int kerf_spank_parse_mem(const char *s, uint64_t *ret, char *err, size_t errlen);

/* Parses an integer percentage lo..100. Returns 0 and *ret, or -EINVAL. */
int kerf_spank_parse_pct(const char *s, unsigned lo, unsigned *ret);

#endif /* KERF_SPANK_KERF_H */
