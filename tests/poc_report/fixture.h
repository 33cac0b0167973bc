/* SPDX-License-Identifier: Apache-2.0 */
/* fixture.h - a realistic POC report directory for the report tests: a throwaway kerfd (its
 * real audit chain, export and signed checkpoint), records as docs/POC.md describes them that
 * cite that chain, task logs and a metrics snapshot, written by poc_report_write(). */
#ifndef KERF_POC_REPORT_FIXTURE_H
#define KERF_POC_REPORT_FIXTURE_H

#include <jansson.h>

#include "../integration/harness.h"
#include "poc.h"

typedef struct fx {
        kd k;
        char dir[512];   /* the report directory */
        json_t *records; /* a copy of the records handed to poc_report_write */
        unsigned long long task[2];
        int write_rc; /* poc_report_write's result */
        char write_err[512];
} fx;

/* Starts kerfd, runs two tasks, builds the records and writes the report. Aborts the test on
 * failure. */
void fx_build(fx *x);
/* Stops kerfd and removes the report directory (kept when $KERF_POC_REPORT_KEEP is set). */
void fx_fini(fx *x);

/* A copy of `dir` (cp -a) in a new temp directory; returns it (static buffer per call site). */
void fx_copy(const char *dir, char *ret, size_t len);
/* Runs poc_verify_dir on dir; returns its exit code and its output (heap, free()). */
int fx_verify(const char *dir, char **ret_out);
/* Loads / stores DIR/report.json. */
json_t *fx_load(const char *dir);
void fx_store(const char *dir, json_t *report);
/* A measure object as poc_measure() writes it (pass computed from the numbers). */
json_t *fx_measure(const char *name, double value, const char *unit, const char *op,
                   double threshold);
/* A record: id, route, title, measures (stolen), skipped (stolen, may be NULL); verdict by
 * the documented rule, spelled out here independently of the code under test. */
json_t *fx_record(const char *id, const char *route, const char *title, json_t *measures,
                  json_t *skipped);

#endif
