/* SPDX-License-Identifier: Apache-2.0 */
/* units.h - the one rule for sizes and durations (docs/UNITS.md), and the bounds kerf puts on
 * them: every reader of a size or a duration (API, config, fleet, CLI, SPANK, kerf-load) uses
 * these, never a copy. Plain C, no I/O, no dependency beyond libc: the SPANK plugin and
 * kerf-load compile src/core/units.c into themselves. */
#ifndef KERF_UNITS_H
#define KERF_UNITS_H

#include <stddef.h>
#include <stdint.h>

#define KERF_KIB (1024ULL)
#define KERF_MIB (1024ULL * 1024ULL)
#define KERF_GIB (1024ULL * 1024ULL * 1024ULL)
#define KERF_TIB (KERF_GIB * 1024ULL)
#define KERF_PIB (KERF_TIB * 1024ULL)

#define KERF_DAY_S (86400ULL)

/* ---- bounds, defined once ----------------------------------------------------------------- */

/* max_runtime_s and idle_timeout_s of a task (API, CLI): 0 (none) .. 365 days */
#define KERF_MAX_RUNTIME_S      (365ULL * KERF_DAY_S)
#define KERF_MAX_IDLE_TIMEOUT_S (365ULL * KERF_DAY_S)
/* cpu_milli of a task request and of a fleet node (cpus: N is N * 1000): 100000 CPUs */
#define KERF_MAX_CPU_MILLI 100000000ULL
/* GPU memory per GPU of a task, policy.dev_default_memory: 1 PiB (no GPU has more) */
#define KERF_MAX_GPU_MEM_BYTES KERF_PIB
/* host memory of a task or a fleet node, a tenant's memory quota: 1 EiB */
#define KERF_MAX_MEM_BYTES (1ULL << 60)
/* largest finite quota per resource (config quota: and PUT /v1/tenants/{name}/quota) */
#define KERF_QUOTA_MAX_GPUS       (1ULL << 20)
#define KERF_QUOTA_MAX_MEM_BYTES  KERF_MAX_MEM_BYTES
#define KERF_QUOTA_MAX_COMPUTE    (100ULL << 20) /* percent of one GPU, summed */
#define KERF_QUOTA_MAX_MIG_SLICES (1ULL << 20)

/* ---- sizes -------------------------------------------------------------------------------- */

/* A buffer this large holds any kerf_format_size() or kerf_format_duration() output. */
#define KERF_UNITS_BUF 32

/* The accepted size forms in words, for error messages and help text. */
#define KERF_SIZE_FORMS                                                                            \
        "a number and a binary unit: B, KiB, MiB, GiB, TiB, PiB (or K, M, G, T, P), "              \
        "e.g. 16GiB, 512MiB, 1.5TiB"

/* Parses a size written by a person: an integer or a decimal (at most 9 decimals), an optional
 * single space, and a unit: B, KiB, MiB, GiB, TiB, PiB, or Slurm's K, M, G, T, P, which are the
 * same binary units (case does not matter: "16gib" is 16GiB). A fraction is rounded down to a
 * whole byte. A bare number is refused (is "16" bytes or GiB?) except "0"; so are KB, MB, GB,
 * TB, PB (10^3n or 2^10n: tools disagree). Returns 0 and writes *ret; -EINVAL when `s` is not a
 * size, -ERANGE when it does not fit in 64 bits; then *ret is untouched and, when `err` is not
 * NULL, err[0..errlen) says what was wrong and which forms are accepted, quoting `s`, e.g.
 * "'16' has no unit: write 16GiB or 16MiB". Thread-safe. */
int kerf_parse_size(const char *s, uint64_t *ret, char *err, size_t errlen);

/* Writes `bytes` in the largest binary unit not above it into buf[0..cap) and returns buf:
 * exact as an integer ("16GiB", "512MiB", "100B"), else rounded to at most 2 decimals
 * ("1.5GiB", "15.99GiB"). kerf_parse_size() reads every output back: exactly when the output
 * is an integer, within 0.5 % otherwise. Thread-safe. */
char *kerf_format_size(uint64_t bytes, char *buf, size_t cap);

/* ---- durations ---------------------------------------------------------------------------- */

#define KERF_DURATION_FORMS                                                                        \
        "seconds (90), units d h m s in that order (90s, 15m, 1h30m, 2d) or Slurm's "              \
        "[D-]HH:MM:SS, MM:SS, D-HH (1-00:00:00)"

/* Parses a duration written by a person into whole seconds:
 *   "90"                          seconds (unlike Slurm, where a bare number is minutes)
 *   "90s" "15m" "1h30m" "2d12h"   integers with units d, h, m, s, largest first, each once
 *   "HH:MM:SS" "MM:SS"            Slurm's forms: the first field unbounded, the others 0..59
 *   "D-HH" "D-HH:MM" "D-HH:MM:SS" with days: hours 0..23
 * No sign, no spaces, no decimals. Returns 0 and writes *ret_s; -EINVAL when `s` is not a
 * duration, -ERANGE when it does not fit in 64 bits of seconds; then *ret_s is untouched and,
 * when `err` is not NULL, err[0..errlen) says what was wrong and which forms are accepted. The
 * caller checks its own bound (KERF_MAX_RUNTIME_S...). Thread-safe. */
int kerf_parse_duration(const char *s, uint64_t *ret_s, char *err, size_t errlen);

/* Writes `s` seconds into buf[0..cap) with units d h m s, zero parts left out ("1h30m", "2d",
 * "1m30s", "0s"), and returns buf. kerf_parse_duration() reads it back exactly. Thread-safe. */
char *kerf_format_duration(uint64_t s, char *buf, size_t cap);

#endif /* KERF_UNITS_H */
