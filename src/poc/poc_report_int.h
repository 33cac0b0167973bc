/* SPDX-License-Identifier: Apache-2.0 */
/* poc_report_int.h - what the report writer (poc_report*.c), the conclusion rules
 * (poc_conclude.c) and `kerf poc verify` (poc_verify.c) share; private to src/poc. */
#ifndef KERF_POC_REPORT_INT_H
#define KERF_POC_REPORT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#define POC_SHA256_HEX 65 /* 64 hex digits + NUL */

/* Writes `len` bytes to DIR/NAME through DIR/.NAME.tmp, fsync and rename, then fsyncs DIR.
 * Returns 0 or a negative errno and says why in err. */
int poc__write_atomic(const char *dir, const char *name, const char *data, size_t len, char *err,
                      size_t errlen);
/* SHA-256 (libsodium) of data / of a whole file, as lower-case hex. The file form returns 0, or
 * a negative errno when the file cannot be read. */
void poc__sha256_hex(const void *data, size_t len, char hex[POC_SHA256_HEX]);
int poc__sha256_file(const char *path, char hex[POC_SHA256_HEX]);
/* Reads a whole file into a NUL-terminated heap string (free()); NULL with errno set. */
char *poc__read_file(const char *path, size_t *ret_len);

/* For the Markdown and HTML writers: a string field ("" when absent); a number as the reports
 * print it (integers whole, reals with 6 significant digits, "-" for anything else). */
const char *poc__str(const json_t *o, const char *key);
void poc__num(FILE *f, const json_t *v);

/* Whether `value op threshold` holds: 1 yes, 0 no, -1 when op is not "<=", ">=" or "==". */
int poc__measure_holds(double value, const char *op, double threshold);
/* The files records cite, relative to the report directory (logs[].stdout/.stderr,
 * metrics[].file), each once, in record order. Absolute paths (kerfd's own copies, e.g.
 * logs[].kerfd_stdout) are not part of the report directory and are left out. New array. */
json_t *poc__cited_files(const json_t *records);
/* A relative path that stays inside the report directory (no "/" first, no ".." part). */
bool poc__path_inside(const char *path);

/* The conclusions for `records` by the rule table (docs/POC.md "Conclusions"); `cost` is the
 * report's "cost" object, or NULL when it is not considered (poc_conclusions()). New object. */
json_t *poc__conclude(const json_t *records, const json_t *cost);

/* The report object rendered for people: Markdown and one self-contained HTML page (inline CSS
 * and SVG, no network fetch). Heap strings (free()); NULL when out of memory. */
char *poc__report_md(const json_t *report);
char *poc__report_html(const json_t *report);

/* Shared by the renderers: the points of one series line as [[x, y], ...] with numeric x and
 * y; the `lines` object of a series, where a poc_series() series that has one "points" array
 * gives one line named after the series. Borrowed / new as stated. */
json_t *poc__series_lines(const char *name, const json_t *series); /* new object */

#endif /* KERF_POC_REPORT_INT_H */
