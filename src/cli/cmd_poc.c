/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_poc.c - `kerf poc run` and `kerf poc verify`: flags, checks, and the call into src/poc */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "poc.h"

static bool route_ok(const char *r)
{
        return !strcmp(r, POC_ROUTE_SOFTWARE) || !strcmp(r, POC_ROUTE_HARDWARE) ||
               !strcmp(r, POC_ROUTE_BOTH);
}

/* "SW1,HW2": every id known, none empty */
static bool only_ok(const char *s)
{
        char id[16];
        if (!*s)
                return false;
        for (;;) {
                const char *e = strchr(s, ',');
                size_t n = e ? (size_t)(e - s) : strlen(s);
                if (!n || n >= sizeof(id)) {
                        cli_err("--only: empty or overlong test id in '%s' (e.g. SW1,SW3)", s);
                        return false;
                }
                memcpy(id, s, n);
                id[n] = 0;
                if (!poc_test_known(id)) {
                        cli_err("--only: unknown test '%s' (SW1..SW4, HW1..HW4, NB)", id);
                        return false;
                }
                if (!e)
                        return true;
                s = e + 1;
        }
}

static bool file_ok(const char *flag, const char *path, int mode)
{
        if (access(path, mode) == 0)
                return true;
        cli_err("%s %s: %s", flag, path, strerror(errno));
        return false;
}

static int poc_run_cmd(cli *c, int argc, char **argv, const kerf_client_opts *co)
{
        poc_opts o = {
            .route = POC_ROUTE_BOTH, .seed = 1, .progress = stderr, .argc = argc, .argv = argv};
        char out[64], err[1024];
        poc_sizes sz;
        (void)c;
        for (int i = 2; i < argc; i++) {
                const char *a = argv[i];
                const char **val = NULL;
                if (!strcmp(a, "--quick")) {
                        o.quick = true;
                        continue;
                } else if (!strcmp(a, "--spawn")) {
                        o.spawn = true;
                        continue;
                } else if (!strcmp(a, "--test-break-limiter")) {
                        o.test_break_limiter = true;
                        continue;
                } else if (!strcmp(a, "--test-no-shim")) {
                        o.test_no_shim = true;
                        continue;
                }
                static const struct {
                        const char *flag;
                        size_t off;
                } V[] = {{"--route", offsetof(poc_opts, route)},
                         {"--suite", offsetof(poc_opts, suite)},
                         {"--owner", offsetof(poc_opts, owner)},
                         {"--out", offsetof(poc_opts, out_dir)},
                         {"--fleet", offsetof(poc_opts, fleet)},
                         {"--kerfd", offsetof(poc_opts, kerfd)},
                         {"--restart-cmd", offsetof(poc_opts, restart_cmd)},
                         {"--load", offsetof(poc_opts, load)},
                         {"--only", offsetof(poc_opts, only)},
                         {"--seed", 0}};
                size_t k = 0;
                for (; k < sizeof(V) / sizeof(V[0]) && strcmp(V[k].flag, a) != 0; k++)
                        ;
                if (k == sizeof(V) / sizeof(V[0])) {
                        cli_err("poc run: unknown flag '%s' (see kerf poc --help)", a);
                        return KERF_EXIT_USAGE;
                }
                if (i + 1 >= argc || !argv[i + 1][0]) {
                        cli_err("poc run: %s needs a value", a);
                        return KERF_EXIT_USAGE;
                }
                if (!strcmp(a, "--seed")) {
                        char *end;
                        errno = 0;
                        unsigned long long s = strtoull(argv[++i], &end, 10);
                        if (errno || *end || argv[i][0] == '-' || !s) {
                                cli_err("--seed: '%s' is not a positive integer", argv[i]);
                                return KERF_EXIT_USAGE;
                        }
                        o.seed = s;
                        continue;
                }
                val = (const char **)((char *)&o + V[k].off);
                *val = argv[++i];
        }
        if (!route_ok(o.route)) {
                cli_err("--route: '%s' is not software, hardware or both", o.route);
                return KERF_EXIT_USAGE;
        }
        if (o.only && !only_ok(o.only))
                return KERF_EXIT_USAGE;
        if (!o.spawn && (o.fleet || o.kerfd || o.test_no_shim)) {
                cli_err("poc run: --fleet, --kerfd and --test-no-shim need --spawn");
                return KERF_EXIT_USAGE;
        }
        if (o.spawn && o.restart_cmd) {
                cli_err("poc run: --restart-cmd is for an existing kerfd, not with --spawn");
                return KERF_EXIT_USAGE;
        }
        if ((o.fleet && !file_ok("--fleet", o.fleet, R_OK)) ||
            (o.kerfd && !file_ok("--kerfd", o.kerfd, X_OK)) ||
            (o.load && !file_ok("--load", o.load, R_OK)) ||
            (o.suite && !file_ok("--suite", o.suite, R_OK)))
                return KERF_EXIT_USAGE;
        if (o.owner && (strlen(o.owner) > 63 || strpbrk(o.owner, "\n\r\t"))) {
                cli_err("--owner: at most 63 characters without control characters");
                return KERF_EXIT_USAGE;
        }
        if (o.suite && poc_suite_load(&sz, o.suite, err, sizeof(err)) < 0) {
                cli_err("%s", err);
                return KERF_EXIT_USAGE;
        }
        if (!o.out_dir) {
                time_t now = time(NULL);
                struct tm tm;
                gmtime_r(&now, &tm);
                strftime(out, sizeof(out), "kerf-poc-%Y%m%dT%H%M%SZ", &tm);
                o.out_dir = out;
        }
        struct stat st;
        char rj[4200];
        snprintf(rj, sizeof(rj), "%s/report.json", o.out_dir);
        if (stat(rj, &st) == 0) {
                cli_err("--out %s already holds a report; choose a new directory", o.out_dir);
                return KERF_EXIT_USAGE;
        }
        poc_ctx p;
        int r = poc_init(&p, &o, co, err, sizeof(err));
        if (r < 0) {
                cli_err("poc run: %s", err);
                poc_fini(&p);
                return r == -EEXIST || r == -EINVAL ? KERF_EXIT_USAGE : KERF_EXIT_UNREACHABLE;
        }
        int ex = poc_run(&p);
        poc_fini(&p);
        return ex;
}

int cli_poc(int argc, char **argv, const kerf_client_opts *co)
{
        if (argc < 2) {
                cli_usage(stderr, "poc");
                return KERF_EXIT_USAGE;
        }
        if (cli_wants_help(argc, argv))
                return 0;
        if (!strcmp(argv[1], "run"))
                return poc_run_cmd(NULL, argc, argv, co);
        if (!strcmp(argv[1], "verify")) {
                if (argc != 3 || argv[2][0] == '-') {
                        cli_err("usage: kerf poc verify DIR");
                        return KERF_EXIT_USAGE;
                }
                return poc_verify_dir(argv[2], stdout) == 0 ? 0 : 1;
        }
        cli_err("poc: unknown subcommand '%s' (run or verify)", argv[1]);
        return KERF_EXIT_USAGE;
}
