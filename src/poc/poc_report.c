/* SPDX-License-Identifier: Apache-2.0 */
/* poc_report.c - TEMP stand-in for the report writer (branch h-report owns this file) */
#include <errno.h>
#include <stdlib.h>

#include "poc.h"

/* TEMP: report.json with the records and the audit export, nothing else */
int poc_report_write(poc_ctx *p, char *err, size_t errlen)
{
        char path[4200];
        kerf_client_response r;
        snprintf(path, sizeof(path), "%s/audit.ndjson", p->out);
        if (p->client && kerf_client_call(p->client, "GET", "/v1/audit/export", NULL, &r) == 0) {
                FILE *f = fopen(path, "we");
                if (f) {
                        fwrite(r.body, 1, r.len, f);
                        fclose(f);
                }
                kerf_client_response_fini(&r);
        }
        json_t *rep = json_pack("{s:s, s:i, s:O}", "kind", POC_REPORT_KIND, "version",
                                POC_REPORT_VERSION, "records", p->records);
        snprintf(path, sizeof(path), "%s/report.json", p->out);
        int rc = json_dump_file(rep, path, JSON_INDENT(1));
        json_decref(rep);
        if (rc < 0) {
                snprintf(err, errlen, "cannot write %s", path);
                return -EIO;
        }
        return 0;
}

/* TEMP */
json_t *poc_conclusions(const json_t *records)
{
        (void)records;
        return json_object();
}
