/* SPDX-License-Identifier: Apache-2.0 */
/* nametab.h - core's name tables (names.c, task_state.c): an enum's word and its parse, one
 * implementation for every table */
#ifndef KERF_CORE_NAMETAB_H
#define KERF_CORE_NAMETAB_H

#include <stdbool.h>
#include <stddef.h>

#define KERF_NAMETAB_N(a) (sizeof(a) / sizeof((a)[0]))

/* names[v], or "?" for a value out of the table (v compared unsigned: a negative value cast to
 * the enum is out of range). */
const char *kerf__nametab_name(const char *const *names, size_t n, unsigned v);
/* The index of s in names (case-insensitive unless `exact`), or -EINVAL. */
int kerf__nametab_parse(const char *const *names, size_t n, const char *s, bool exact);

#endif /* KERF_CORE_NAMETAB_H */
