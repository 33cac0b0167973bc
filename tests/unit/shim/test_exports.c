/* SPDX-License-Identifier: Apache-2.0 */
/* test_exports.c - libkerf-cuda.so exports exactly the entry points it interposes */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "shim_fx.h"

#define MAXSYMS 512

static int load_list(const char *cmd_or_file, bool is_cmd, char names[][96])
{
        FILE *f = is_cmd ? popen(cmd_or_file, "r") : fopen(cmd_or_file, "r");
        int n = 0;
        char line[256];
        assert_non_null(f);
        while (n < MAXSYMS && fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\r\n")] = 0;
                if (line[0])
                        snprintf(names[n++], 96, "%.95s", line);
        }
        if (is_cmd)
                assert_int_equal(pclose(f), 0);
        else
                fclose(f);
        return n;
}

static bool in_list(char names[][96], int n, const char *s)
{
        for (int i = 0; i < n; i++)
                if (!strcmp(names[i], s))
                        return true;
        return false;
}

static char allowed[MAXSYMS][96], exported[MAXSYMS][96], required[MAXSYMS][96];

/* The list generated from syms.h into `list` (*na names) and the shim's defined dynamic
 * symbols into exported (*ne names). */
static void load_lists(const fx *e, char list[][96], int *na, int *ne)
{
        char cmd[PATH_MAX + 128];
        snprintf(cmd, sizeof(cmd), "nm -D --defined-only '%s' | awk '{print $3}'", e->shim);
        *na = load_list(KERF_SHIM_EXPORTS_FILE, false, list);
        *ne = load_list(cmd, true, exported);
}

/* Every defined dynamic symbol is in the list generated from syms.h (+ dlsym + NVML); no
 * helper, no kerf_common function, no libc re-export. */
static void test_nothing_else_exported(void **state)
{
        fx e;
        assert_int_equal(fx_setup(&e, FX_GIB), 0);
        int na, ne;
        load_lists(&e, allowed, &na, &ne);
        assert_true(na > 40 && ne > 40);
        for (int i = 0; i < ne; i++)
                if (!in_list(allowed, na, exported[i]))
                        fail_msg("libkerf-cuda.so exports %s, which it does not interpose",
                                 exported[i]);
        fx_teardown(&e);
}

/* And every interposed name of syms.h is really defined (a missing wrapper would be a
 * silently uncapped path). */
static void test_every_wrapper_defined(void **state)
{
        fx e;
        assert_int_equal(fx_setup(&e, FX_GIB), 0);
        int na, ne;
        load_lists(&e, required, &na, &ne);
        for (int i = 0; i < na; i++)
                if (!in_list(exported, ne, required[i]))
                        fail_msg("%s is listed in syms.h but not defined", required[i]);
        fx_teardown(&e);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_nothing_else_exported),
            cmocka_unit_test(test_every_wrapper_defined),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
