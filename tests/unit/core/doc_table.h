/* SPDX-License-Identifier: Apache-2.0 */
/* doc_table.h - reads a Markdown table of a doc (docs/API.md, docs/DAEMON.md) for the tests that
 * check it against field descriptors (core_test_fields, core_test_fields_tenant): one copy of
 * the parsing, header-only, over md_table.h's file and cell readers */
#ifndef KERF_TEST_DOC_TABLE_H
#define KERF_TEST_DOC_TABLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerf/fields.h"
#include "md_table.h" /* slurp, cell */

#define DOC_CELLS    8
#define DOC_CELL_LEN 320

typedef struct doc_row {
        char cell[DOC_CELLS][DOC_CELL_LEN]; /* trimmed; "\|" kept as written */
        int n;
} doc_row;

/* The rows of the table whose header line is `header`, the first such table after `section`
 * in `doc`, into rows[0..max): cells split at '|' not escaped as "\|". Returns the number of
 * rows, or -1 when the section or the header is not there. */
static inline int doc_table(const char *doc, const char *section, const char *header, doc_row *rows,
                            int max)
{
        const char *p = strstr(doc, section);
        int i = 0;
        if (!p || !(p = strstr(p, header)))
                return -1;
        p = strchr(p + 1, '\n'); /* past the header (`header` may start at its newline) */
        p = p ? strchr(p + 1, '\n') : NULL; /* past |---| */
        for (p = p ? p + 1 : NULL; p && *p == '|' && i < max; i++) {
                const char *c[DOC_CELLS + 1], *nl = strchr(p, '\n');
                int k = 0;
                if (!nl)
                        nl = p + strlen(p);
                for (const char *q = p; q < nl && k < DOC_CELLS + 1; q++)
                        if (*q == '|' && (q == p || q[-1] != '\\'))
                                c[k++] = q;
                rows[i].n = k > 0 ? k - 1 : 0;
                for (int j = 0; j + 1 < k; j++)
                        cell(c[j] + 1, c[j + 1], rows[i].cell[j], DOC_CELL_LEN);
                p = *nl ? nl + 1 : NULL;
        }
        return i;
}

/* Checks rows[0..nrows) against the descriptors of table[0..n) that `objects` takes, in
 * order: cell 0 is `name`, cell `type_cell` kerf_field_doc_type, cell `def_cell` (unless -1)
 * the default. Prints each difference with the expected row to stderr; returns their count. */
static inline int doc_check_fields(const char *what, const doc_row *rows, int nrows,
                                   const kerf_field *table, size_t n, unsigned objects,
                                   int type_cell, int def_cell)
{
        size_t i = 0;
        int r = 0, bad = 0;
        for (; i < n; i++) {
                const kerf_field *f = &table[i];
                char wname[80], want[256];
                if (!(f->objects & objects))
                        continue;
                if (r >= nrows) {
                        fprintf(stderr, "%s: no row for %s\n", what, f->name);
                        bad++;
                        continue;
                }
                const doc_row *row = &rows[r++];
                snprintf(wname, sizeof(wname), "`%s`", f->name);
                kerf_field_doc_type(f, want, sizeof(want));
                if (row->n <= type_cell || row->n <= def_cell || strcmp(row->cell[0], wname) ||
                    strcmp(row->cell[type_cell], want) ||
                    (def_cell >= 0 && strcmp(row->cell[def_cell], f->def))) {
                        fprintf(stderr, "%s row %d: [%s | %s | %s], want [%s | %s | %s]\n", what,
                                r - 1, row->cell[0], row->n > type_cell ? row->cell[type_cell] : "",
                                def_cell >= 0 && row->n > def_cell ? row->cell[def_cell] : "",
                                wname, want, def_cell >= 0 ? f->def : "");
                        bad++;
                }
        }
        for (; r < nrows; r++) {
                fprintf(stderr, "%s: row %s: no descriptor\n", what, rows[r].cell[0]);
                bad++;
        }
        return bad;
}

#endif /* KERF_TEST_DOC_TABLE_H */
