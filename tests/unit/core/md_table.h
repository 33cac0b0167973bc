/* SPDX-License-Identifier: Apache-2.0 */
/* md_table.h - reading a markdown table of docs/ in a unit test: the file, a row's cells (split
 * at '|' not escaped as "\|", trimmed). Used by the tests that check a docs table against field
 * descriptors (test_fields.c: docs/API.md; test_fields_fleet.c: docs/FLEET.md). */
#ifndef KERF_TEST_MD_TABLE_H
#define KERF_TEST_MD_TABLE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file at `path`, NUL-terminated (free it), or NULL. */
static inline char *slurp(const char *path)
{
        FILE *f = fopen(path, "r");
        char *b = NULL;
        long n;
        if (!f)
                return NULL;
        if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
            (b = calloc(1, (size_t)n + 1)) && fread(b, 1, (size_t)n, f) != (size_t)n) {
                free(b);
                b = NULL;
        }
        fclose(f);
        return b;
}

/* Trims spaces around cell [s, e) into out. */
static inline void cell(const char *s, const char *e, char *out, size_t len)
{
        while (s < e && *s == ' ')
                s++;
        while (e > s && e[-1] == ' ')
                e--;
        snprintf(out, len, "%.*s", (int)(e - s), s);
}

#define MD_CELL_LEN 512

/* The row at `p` (a line starting with '|') into cells[0..max): returns the number of cells,
 * 0 when `p` is not a table row. */
static inline size_t md_row(const char *p, char (*cells)[MD_CELL_LEN], size_t max)
{
        const char *nl = strchr(p, '\n'), *start = NULL;
        size_t k = 0;

        if (*p != '|')
                return 0;
        if (!nl)
                nl = p + strlen(p);
        for (const char *q = p; q < nl; q++)
                if (*q == '|' && (q == p || q[-1] != '\\')) {
                        if (start && k < max)
                                cell(start, q, cells[k++], MD_CELL_LEN);
                        start = q + 1;
                }
        return k;
}

/* The first data row of the table whose header line is `header`, found after `anchor` in
 * `doc` (anchor NULL: from the start); NULL when there is none. */
static inline const char *md_table(const char *doc, const char *anchor, const char *header)
{
        const char *p = anchor ? strstr(doc, anchor) : doc;
        if (!p || !(p = strstr(p, header)) || !(p = strchr(p + strlen(header), '\n')) ||
            !(p = strchr(p + 1, '\n')))
                return NULL;
        return p + 1; /* past the header and its |---| line */
}

/* The next line after the one at p ("" at the end). */
static inline const char *md_next(const char *p)
{
        const char *nl = strchr(p, '\n');
        return nl ? nl + 1 : p + strlen(p);
}

#endif /* KERF_TEST_MD_TABLE_H */
