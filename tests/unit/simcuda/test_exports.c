/* SPDX-License-Identifier: Apache-2.0 */
/* test_exports.c - every driver entry point NVIDIA's stub exports is simulated or documented */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

/*
 * The simulated libcuda.so.1 and NVIDIA's stub libcuda.so are compared by their dynamic
 * symbol tables (.dynsym, read here with <elf.h>). Every `cu*` function the stub exports and
 * the simulator does not must be named in docs/SIMULATOR.md, in the list under the heading
 * "#### Entry points not exported" (one or more `backquoted` names per bullet; the list ends at
 * the next heading). A name listed there that the simulator does export, or that the stub does
 * not, is an error too, so the list stays exact.
 *
 * KERF_SIMCUDA_LIB, KERF_SIMULATOR_MD and KERF_CUDA_STUB are set by CMake; environment
 * variables of the same names override them (to check the test itself on altered copies).
 */

#define LIST_HEADING "#### Entry points not exported"

typedef struct names {
        char **v;
        size_t n, cap;
} names;

static int names_add(names *s, const char *p, size_t len)
{
        if (s->n == s->cap) {
                size_t nc = s->cap ? s->cap * 2 : 256;
                char **nv = realloc(s->v, nc * sizeof(*nv));
                if (!nv)
                        return -1;
                s->v = nv;
                s->cap = nc;
        }
        s->v[s->n] = strndup(p, len);
        return s->v[s->n] ? (int)s->n++ : -1;
}

static int cmp(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static void names_sort(names *s)
{
        qsort(s->v, s->n, sizeof(*s->v), cmp);
}

static bool names_has(const names *s, const char *n)
{
        return bsearch(&n, s->v, s->n, sizeof(*s->v), cmp) != NULL;
}

static void names_free(names *s)
{
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i]);
        free(s->v);
        memset(s, 0, sizeof(*s));
}

/* Defined global/weak functions named cu* in the .dynsym of the 64-bit ELF file at path.
 * Returns 0, or -1 when the file cannot be read or is not such an ELF file. */
static int dynsym_read(const char *path, names *out)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        struct stat st;
        if (fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
                close(fd);
                return -1;
        }
        size_t sz = (size_t)st.st_size;
        const unsigned char *m = mmap(NULL, sz, PROT_READ, MAP_PRIVATE, fd, 0);
        close(fd);
        if (m == MAP_FAILED)
                return -1;
        int rc = -1;
        const Elf64_Ehdr *eh = (const void *)m;
        if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
            eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > sz ||
            eh->e_shnum > (sz - eh->e_shoff) / sizeof(Elf64_Shdr))
                goto out;
        const Elf64_Shdr *sh = (const void *)(m + eh->e_shoff);
        for (unsigned i = 0; i < eh->e_shnum; i++) {
                if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
                        continue;
                const Elf64_Shdr *strs = &sh[sh[i].sh_link];
                if (sh[i].sh_offset > sz || sh[i].sh_size > sz - sh[i].sh_offset ||
                    strs->sh_offset > sz || strs->sh_size > sz - strs->sh_offset)
                        goto out;
                const Elf64_Sym *sym = (const void *)(m + sh[i].sh_offset);
                const char *str = (const char *)(m + strs->sh_offset);
                size_t nsym = sh[i].sh_size / sizeof(Elf64_Sym);
                for (size_t k = 0; k < nsym; k++) {
                        int bind = ELF64_ST_BIND(sym[k].st_info);
                        if (sym[k].st_shndx == SHN_UNDEF ||
                            ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC ||
                            (bind != STB_GLOBAL && bind != STB_WEAK) ||
                            sym[k].st_name >= strs->sh_size)
                                continue;
                        const char *n = str + sym[k].st_name;
                        size_t len = strnlen(n, strs->sh_size - sym[k].st_name);
                        if (len > 2 && !strncmp(n, "cu", 2) && names_add(out, n, len) < 0)
                                goto out;
                }
                rc = 0;
        }
out:
        munmap((void *)m, sz);
        names_sort(out);
        return rc;
}

/* The backquoted cu* names of the documented list. Returns 0, or -1 without the file or the
 * heading. */
static int doc_read(const char *path, names *out)
{
        FILE *f = fopen(path, "re");
        if (!f)
                return -1;
        char line[4096];
        bool in = false, found = false;
        while (fgets(line, sizeof(line), f)) {
                if (line[0] == '#') {
                        in = !strncmp(line, LIST_HEADING, strlen(LIST_HEADING));
                        found |= in;
                        continue;
                }
                if (!in)
                        continue;
                for (char *p = strchr(line, '`'); p; p = strchr(p, '`')) {
                        char *e = strchr(p + 1, '`');
                        if (!e)
                                break;
                        size_t len = (size_t)(e - p - 1);
                        bool ident = len > 2 && !strncmp(p + 1, "cu", 2);
                        for (size_t i = 1; ident && i <= len; i++)
                                ident = (p[i] >= 'a' && p[i] <= 'z') ||
                                        (p[i] >= 'A' && p[i] <= 'Z') ||
                                        (p[i] >= '0' && p[i] <= '9') || p[i] == '_';
                        if (ident && names_add(out, p + 1, len) < 0) {
                                fclose(f);
                                return -1;
                        }
                        p = e + 1;
                }
        }
        fclose(f);
        names_sort(out);
        return found ? 0 : -1;
}

static const char *path_of(const char *env, const char *built_in)
{
        const char *e = getenv(env);
        return e && *e ? e : built_in;
}

static void t_missing_entry_points_are_documented(void **state)
{
        (void)state;
        names stub = {0}, ours = {0}, doc = {0};
        const char *stub_path = path_of("KERF_CUDA_STUB", KERF_CUDA_STUB);
        const char *lib_path = path_of("KERF_SIMCUDA_LIB", KERF_SIMCUDA_LIB);
        const char *doc_path = path_of("KERF_SIMULATOR_MD", KERF_SIMULATOR_MD);
        if (access(stub_path, R_OK) != 0) {
                print_message("SKIP: NVIDIA's stub libcuda (%s) is not installed; nothing to "
                              "compare the simulated exports with\n",
                              stub_path);
                skip();
        }
        assert_int_equal(dynsym_read(stub_path, &stub), 0);
        assert_int_equal(dynsym_read(lib_path, &ours), 0);
        if (doc_read(doc_path, &doc) != 0) {
                print_error("%s: cannot read it, or it has no \"%s\" list\n", doc_path,
                            LIST_HEADING);
                fail();
        }
        assert_true(stub.n > 100);
        assert_true(ours.n > 100);

        size_t missing = 0, undocumented = 0, stale = 0, foreign = 0;
        for (size_t i = 0; i < stub.n; i++) {
                if (names_has(&ours, stub.v[i]))
                        continue;
                missing++;
                if (!names_has(&doc, stub.v[i])) {
                        print_error("not exported by the simulator and not listed under \"%s\" "
                                    "in docs/SIMULATOR.md: %s\n",
                                    LIST_HEADING, stub.v[i]);
                        undocumented++;
                }
        }
        for (size_t i = 0; i < doc.n; i++) {
                if (i && !strcmp(doc.v[i], doc.v[i - 1]))
                        continue;
                if (names_has(&ours, doc.v[i])) {
                        print_error("listed as not exported but the simulator exports it: %s\n",
                                    doc.v[i]);
                        stale++;
                } else if (!names_has(&stub, doc.v[i])) {
                        print_error("listed as not exported but the stub has no such entry "
                                    "point: %s\n",
                                    doc.v[i]);
                        foreign++;
                }
        }
        for (size_t i = 0; i < ours.n; i++)
                if (!names_has(&stub, ours.v[i]))
                        print_message("note: the simulator exports %s, which the stub does not\n",
                                      ours.v[i]);
        print_message("stub exports %zu cu* functions, the simulator %zu; %zu not simulated\n",
                      stub.n, ours.n, missing);
        names_free(&stub);
        names_free(&ours);
        names_free(&doc);
        assert_int_equal(undocumented, 0);
        assert_int_equal(stale, 0);
        assert_int_equal(foreign, 0);
}

/* The name an entry point is looked up by: without the _ptds/_ptsz and _vN suffixes. */
static void base_name(const char *sym, char *out, size_t cap)
{
        snprintf(out, cap, "%s", sym);
        size_t n = strlen(out);
        if (n > 5 && (!strcmp(out + n - 5, "_ptds") || !strcmp(out + n - 5, "_ptsz")))
                out[n -= 5] = 0;
        if (n > 3 && out[n - 3] == '_' && out[n - 2] == 'v' && out[n - 1] >= '2' &&
            out[n - 1] <= '9')
                out[n - 3] = 0;
}

typedef int (*procaddr_fn)(const char *, void **, int, unsigned long long, int *);

/* Every entry point the simulator exports is what cuGetProcAddress_v2 hands out for its name at
 * some CUDA version, in the legacy or the per-thread flavour: no export lacks its row in
 * src/sim/cuda/procaddr.c. */
static void t_every_export_has_a_procaddr_row(void **state)
{
        (void)state;
        static const int versions[] = {
            2000,  2010,  2020,  2030,  3000,  3010,  3020,  3200,  4000,  4010,  4020,  5000,
            5050,  5500,  6000,  6050,  6500,  7000,  7050,  7500,  8000,  9000,  9010,  9020,
            10000, 10010, 10020, 10100, 10200, 11000, 11010, 11020, 11030, 11040, 11050, 11060,
            11070, 11080, 12000, 12010, 12020, 12030, 12040, 12050, 12060, 12080, 12090, 13000};
        const char *lib_path = path_of("KERF_SIMCUDA_LIB", KERF_SIMCUDA_LIB);
        names ours = {0};
        assert_int_equal(dynsym_read(lib_path, &ours), 0);
        void *h = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
        assert_non_null(h);
        procaddr_fn gpa = (procaddr_fn)dlsym(h, "cuGetProcAddress_v2");
        assert_non_null(gpa);
        size_t bad = 0;
        for (size_t i = 0; i < ours.n; i++) {
                void *want = dlsym(h, ours.v[i]);
                char base[128];
                base_name(ours.v[i], base, sizeof(base));
                bool found = false;
                for (size_t v = 0; v < sizeof(versions) / sizeof(versions[0]) && !found; v++)
                        for (unsigned long long fl = 1; fl <= 2 && !found; fl++) {
                                void *fn = NULL;
                                int st;
                                found = gpa(base, &fn, versions[v], fl, &st) == 0 && fn == want;
                        }
                if (!found) {
                        print_error("cuGetProcAddress(\"%s\") never returns %s\n", base, ours.v[i]);
                        bad++;
                }
        }
        dlclose(h);
        names_free(&ours);
        assert_int_equal(bad, 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(t_missing_entry_points_are_documented),
            cmocka_unit_test(t_every_export_has_a_procaddr_row),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
