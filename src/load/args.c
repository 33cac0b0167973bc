/* SPDX-License-Identifier: Apache-2.0 */
/* args.c - kerf-load's options: one table drives parsing, validation and --help */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerf/units.h"
#include "load.h"

static const char *const mode_names[KL_NMODES] = {"serve", "train", "dev", "hog", "crash", "probe"};
static const char *const pattern_names[] = {"steady", "ramp", "burst", "poisson"};
static const char *const how_names[] = {"segv", "abort", "exit", "kill"};

const char *kl_mode_name(kl_mode m)
{
        return (unsigned)m < KL_NMODES ? mode_names[m] : "?";
}
const char *kl_pattern_name(kl_pattern p)
{
        return (unsigned)p < 4 ? pattern_names[p] : "?";
}
const char *kl_how_name(kl_how h)
{
        return (unsigned)h < 4 ? how_names[h] : "?";
}

typedef enum { T_UINT, T_DBL, T_SIZE, T_FLAG, T_STR, T_RATES, T_PATTERN, T_HOW } opt_type;

#define M(x) (1u << (x))
#define ALL  (M(KL_NMODES) - 1)

typedef struct opt {
        const char *name;
        opt_type type;
        size_t off;
        unsigned modes;
        double min, max; /* numbers: inclusive bounds */
        const char *help;
} opt;

#define O(f) offsetof(kl_opts, f)
static const opt opts[] = {
    {"--device", T_UINT, O(device), ALL, 0, 63, "N  CUDA device ordinal (0)"},
    {"--seed", T_UINT, O(seed), ALL, 0, 1e18, "N  seed of the poisson pattern (1)"},
    {"--window-ms", T_UINT, O(window_ms), ALL, 10, 3600000,
     "MS  window lines every MS ms; probe: the measured window (1000)"},
    {"--seconds", T_DBL, O(seconds), M(KL_SERVE) | M(KL_TRAIN) | M(KL_DEV), 0.01, 86400,
     "S  run time (serve 10, dev 10; train: until --steps)"},
    {"--mem", T_SIZE, O(mem), M(KL_SERVE) | M(KL_TRAIN) | M(KL_DEV), 0, 1e15,
     "SIZE  device memory held for the run, e.g. 4GiB (0)"},
    {"--rate", T_DBL, O(rate), M(KL_SERVE), 0.01, 100000, "R  offered requests/s (10)"},
    {"--rates", T_RATES, O(rates), M(KL_SERVE), 0.01, 100000,
     "R1,R2,..  sweep: --seconds at each rate, one step line each"},
    {"--pattern", T_PATTERN, O(pattern), M(KL_SERVE), 0, 0,
     "steady|ramp|burst|poisson  arrivals (steady)"},
    {"--kernels", T_UINT, O(kernels), M(KL_SERVE), 1, 10000, "K  kernels per request (4)"},
    {"--kernel-us", T_UINT, O(kernel_us), M(KL_SERVE) | M(KL_DEV) | M(KL_PROBE) | M(KL_CRASH), 1,
     10000000, "US  spin kernel duration (serve 1000, dev 1000, probe 2000, crash 1000)"},
    {"--step-us", T_UINT, O(step_us), M(KL_TRAIN), 1, 100000000, "US  one step's kernel (10000)"},
    {"--steps", T_UINT, O(steps), M(KL_TRAIN), 1, 1e15, "N  stop at step N (counted over resumes)"},
    {"--checkpoint", T_STR, O(checkpoint), M(KL_TRAIN), 0, 0,
     "FILE  checkpoint (resumed from when present; FILE.progress beside it)"},
    {"--checkpoint-every", T_UINT, O(checkpoint_every), M(KL_TRAIN), 1, 1e15,
     "N  checkpoint every N steps (100)"},
    {"--busy-ms", T_UINT, O(busy_ms), M(KL_DEV), 1, 3600000, "MS  busy part of a cycle (200)"},
    {"--idle-ms", T_UINT, O(idle_ms), M(KL_DEV), 0, 3600000, "MS  idle part of a cycle (800)"},
    {"--chunk", T_SIZE, O(chunk), M(KL_HOG), 2 << 20, 1e15, "SIZE  allocation size (256MiB)"},
    {"--hold-s", T_DBL, O(hold_s), M(KL_HOG), 0, (double)KERF_MAX_RUNTIME_S,
     "S  hold this long after the fill (until killed)"},
    {"--spin", T_FLAG, O(spin), M(KL_HOG), 0, 0, "  also spin kernels while holding"},
    {"--after-ms", T_UINT, O(after_ms), M(KL_CRASH), 0, 86400000, "MS  work this long (1000)"},
    {"--how", T_HOW, O(how), M(KL_CRASH), 0, 0, "segv|abort|exit|kill  how to die (segv)"},
    {"--warmup-ms", T_UINT, O(warmup_ms), M(KL_PROBE), 0, 600000,
     "MS  probe: spin this long before the measured window (500)"},
};

static void usage(FILE *f)
{
        fprintf(f, "usage: kerf-load serve|train|dev|hog|crash|probe [options]\n"
                   "JSON lines on stdout (start, window, step, hog, crash, error, result); "
                   "docs/POC.md \"kerf-load\".\n"
                   "exit 0 ok, 1 CUDA failure, 2 bad arguments, 3 crash --how exit\n");
        for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
                const opt *p = &opts[i];
                char ms[64] = "";
                if (p->modes == ALL) {
                        snprintf(ms, sizeof(ms), "all");
                } else {
                        for (int m = 0; m < KL_NMODES; m++)
                                if (p->modes & M(m))
                                        snprintf(ms + strlen(ms), sizeof(ms) - strlen(ms), "%s%s",
                                                 ms[0] ? "," : "", mode_names[m]);
                }
                fprintf(f, "  %-18s %s  [%s]\n", p->name, p->help, ms);
        }
        fprintf(f, "  --print-ptx        print the PTX spin kernel and exit\n");
}

static int bad(const char *name, const char *val, const char *why)
{
        fprintf(stderr, "kerf-load: %s%s%s: %s (kerf-load --help)\n", name, val ? " " : "",
                val ? val : "", why);
        return KL_EXIT_USAGE;
}

static int parse_num(const char *s, double *ret)
{
        errno = 0;
        char *end;
        double v = strtod(s, &end);
        if (errno || end == s || *end || !isfinite(v))
                return -1;
        *ret = v;
        return 0;
}

static int set_value(const opt *p, const char *v, kl_opts *o)
{
        char *base = (char *)o + p->off;
        char why[256];
        snprintf(why, sizeof(why), "must be a number from %.10g to %.10g", p->min, p->max);
        double d;
        uint64_t u;
        switch (p->type) {
        case T_UINT:
                if (!v[0] || strspn(v, "0123456789") != strlen(v) || parse_num(v, &d) < 0 ||
                    d < p->min || d > p->max)
                        return bad(p->name, v, why);
                if (p->off == O(device))
                        o->device = (int)d;
                else
                        *(uint64_t *)(void *)base = (uint64_t)strtoull(v, NULL, 10);
                return 0;
        case T_DBL:
                if (parse_num(v, &d) < 0 || d < p->min || d > p->max)
                        return bad(p->name, v, why);
                *(double *)(void *)base = d;
                return 0;
        case T_SIZE:
                if (kerf_parse_size(v, &u, why, sizeof(why)) < 0)
                        return bad(p->name, v, why);
                if ((double)u < p->min || (double)u > p->max) {
                        char lo[KERF_UNITS_BUF], hi[KERF_UNITS_BUF];
                        snprintf(why, sizeof(why), "must be from %s to %s",
                                 kerf_format_size((uint64_t)p->min, lo, sizeof(lo)),
                                 kerf_format_size((uint64_t)p->max, hi, sizeof(hi)));
                        return bad(p->name, v, why);
                }
                *(uint64_t *)(void *)base = u;
                return 0;
        case T_STR:
                if (!v[0])
                        return bad(p->name, v, "must not be empty");
                *(const char **)(void *)base = v;
                return 0;
        case T_RATES: {
                o->nrates = 0;
                const char *s = v;
                while (*s) {
                        char item[64];
                        size_t k = strcspn(s, ",");
                        if (!k || k >= sizeof(item))
                                return bad(p->name, v, "not a comma-separated list of rates");
                        memcpy(item, s, k);
                        item[k] = 0;
                        if (parse_num(item, &d) < 0 || d < p->min || d > p->max)
                                return bad(p->name, v, "every rate must be from 0.01 to 100000");
                        if (o->nrates == KL_MAX_RATES)
                                return bad(p->name, v, "at most 64 rates");
                        o->rates[o->nrates++] = d;
                        s += k;
                        if (*s == ',' && !*++s)
                                return bad(p->name, v, "ends with a comma");
                }
                if (!o->nrates)
                        return bad(p->name, v, "no rate given");
                return 0;
        }
        case T_PATTERN:
                for (int i = 0; i < 4; i++)
                        if (!strcmp(v, pattern_names[i])) {
                                o->pattern = (kl_pattern)i;
                                return 0;
                        }
                return bad(p->name, v, "must be steady, ramp, burst or poisson");
        case T_HOW:
                for (int i = 0; i < 4; i++)
                        if (!strcmp(v, how_names[i])) {
                                o->how = (kl_how)i;
                                return 0;
                        }
                return bad(p->name, v, "must be segv, abort, exit or kill");
        case T_FLAG:
                break;
        }
        return bad(p->name, v, "internal: unknown option type");
}

static void defaults(kl_opts *o, kl_mode m)
{
        memset(o, 0, sizeof(*o));
        o->mode = m;
        o->seed = 1;
        o->window_ms = 1000;
        o->rate = 10;
        o->kernels = 4;
        o->kernel_us = m == KL_PROBE ? 2000 : 1000;
        o->step_us = 10000;
        o->checkpoint_every = 100;
        o->busy_ms = 200;
        o->idle_ms = 800;
        o->chunk = 256ull << 20;
        o->hold_s = -1;
        o->after_ms = 1000;
        o->how = KL_SEGV;
        o->warmup_ms = 500;
}

int kl_args_parse(int argc, char **argv, kl_opts *o)
{
        if (argc < 2)
                return usage(stderr), bad("MODE", NULL, "missing");
        if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
                usage(stdout);
                return 1;
        }
        int m = -1;
        for (int i = 0; i < KL_NMODES; i++)
                if (!strcmp(argv[1], mode_names[i]))
                        m = i;
        if (m < 0)
                return bad("MODE", argv[1], "must be serve, train, dev, hog, crash or probe");
        defaults(o, (kl_mode)m);
        bool seen_rate = false;
        for (int i = 2; i < argc; i++) {
                const char *a = argv[i];
                if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
                        usage(stdout);
                        return 1;
                }
                const opt *p = NULL;
                for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
                        if (!strcmp(a, opts[k].name))
                                p = &opts[k];
                if (!p)
                        return bad(a, NULL, "unknown option");
                if (!(p->modes & M(m))) {
                        char why[64];
                        snprintf(why, sizeof(why), "not an option of %s", mode_names[m]);
                        return bad(a, NULL, why);
                }
                if (p->type == T_FLAG) {
                        *(bool *)(void *)((char *)o + p->off) = true;
                        continue;
                }
                if (i + 1 >= argc)
                        return bad(a, NULL, "needs a value");
                int r = set_value(p, argv[++i], o);
                if (r)
                        return r;
                seen_rate |= p->off == O(rate);
        }
        if (m == KL_SERVE && seen_rate && o->nrates)
                return bad("--rates", NULL, "give --rate or --rates, not both");
        if ((m == KL_SERVE || m == KL_DEV) && o->seconds == 0)
                o->seconds = 10;
        if (m == KL_TRAIN) {
                if (!o->checkpoint)
                        return bad("--checkpoint", NULL, "train needs a checkpoint FILE");
                if (strlen(o->checkpoint) > 3900)
                        return bad("--checkpoint", o->checkpoint, "path too long");
                if (!o->steps && o->seconds == 0)
                        return bad("--steps", NULL, "train needs --steps N or --seconds S");
        }
        return 0;
}
