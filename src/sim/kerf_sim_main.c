/* SPDX-License-Identifier: Apache-2.0 */
/* kerf_sim_main.c - the kerf-sim command: create, describe, reset a simulated node; inject faults
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "internal.h"
#include "kerf/errno.h"

#define EXIT_USAGE         2
#define KERF_SIM_FLEET_MAX (1u << 20) /* a fleet file larger than 1 MiB is refused */

static const char usage[] =
    "usage: kerf-sim COMMAND [options]   (state dir: --dir D or $KERF_SIM_DIR)\n"
    "  create --fleet FILE.yaml [--force]      simulate the fleet's first node\n"
    "  describe [--json]                       GPUs, MIG instances, processes, memory\n"
    "  reset                                   back to the state right after create\n"
    "  inject xid --gpu N --code C [--gi ID [--ci ID]]\n"
    "  inject lost --gpu N                     the GPU falls off the bus\n"
    "  inject reset --gpu N [--force]          clear lost/XID state (a GPU reset)\n"
    "  upgrade --driver V [--cuda X.Y] [--force]   simulated driver change\n"
    "  mig enable|disable --gpu N\n"
    "  mig create --gpu N --profile NAME|ID [--start S] [--no-ci]\n"
    "  mig destroy --gpu N --gi ID\n";

struct opts {
        const char *dir, *fleet, *driver, *cuda, *profile;
        long gpu, gi, ci, code, start;
        bool json, force, no_ci;
};

static int fail(const char *fmt, const char *a, int rc)
{
        fprintf(stderr, "kerf-sim: ");
        fprintf(stderr, fmt, a);
        if (rc)
                fprintf(stderr, ": %s", kerf_strerror(rc));
        fputc('\n', stderr);
        return 1;
}

static int usage_err(const char *what, const char *arg)
{
        fprintf(stderr, "kerf-sim: %s%s%s (see kerf-sim --help)\n", what, arg ? ": " : "",
                arg ? arg : "");
        return EXIT_USAGE;
}

static bool parse_num(const char *s, long max, long *ret)
{
        char *end;
        if (!s || !*s || *s == '-' || *s == '+')
                return false;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || *end || v > max)
                return false;
        *ret = v;
        return true;
}

/* Parses options from argv[i..]; returns 0 or an exit code after printing the error. */
static int parse_opts(int argc, char **argv, int i, struct opts *o)
{
        for (; i < argc; i++) {
                const char *a = argv[i];
                const char *v = i + 1 < argc ? argv[i + 1] : NULL;
                long *num = NULL, max = 0;
                const char **str = NULL;
                if (!strcmp(a, "--json")) {
                        o->json = true;
                        continue;
                } else if (!strcmp(a, "--force")) {
                        o->force = true;
                        continue;
                } else if (!strcmp(a, "--no-ci")) {
                        o->no_ci = true;
                        continue;
                } else if (!strcmp(a, "--dir")) {
                        str = &o->dir;
                } else if (!strcmp(a, "--fleet")) {
                        str = &o->fleet;
                } else if (!strcmp(a, "--driver")) {
                        str = &o->driver;
                } else if (!strcmp(a, "--cuda")) {
                        str = &o->cuda;
                } else if (!strcmp(a, "--profile")) {
                        str = &o->profile;
                } else if (!strcmp(a, "--gpu")) {
                        num = &o->gpu, max = KERF_SIM_MAX_GPUS - 1;
                } else if (!strcmp(a, "--gi")) {
                        num = &o->gi, max = 64;
                } else if (!strcmp(a, "--ci")) {
                        num = &o->ci, max = 64;
                } else if (!strcmp(a, "--code")) {
                        num = &o->code, max = 999;
                } else if (!strcmp(a, "--start")) {
                        num = &o->start, max = KERF_MIG_SLICES - 1;
                } else {
                        return usage_err("unknown option or argument", a);
                }
                if (!v)
                        return usage_err("missing value for", a);
                if (str)
                        *str = v;
                else if (!parse_num(v, max, num))
                        return fprintf(stderr, "kerf-sim: bad value for %s: '%s' (0..%ld)\n", a, v,
                                       max),
                               EXIT_USAGE;
                i++;
        }
        return 0;
}

static int cmd_create(const struct opts *o)
{
        char *text = NULL, err[256] = "";
        size_t len = 0;
        kerf_fleet *f = NULL;
        int rc;
        if (!o->fleet)
                return usage_err("create needs --fleet FILE.yaml", NULL);
        if (!kerf_sim_dir_resolve(o->dir))
                return usage_err("no state directory: give --dir or set " KERF_SIM_ENV, NULL);
        if ((rc = kerf_file_read_all(o->fleet, KERF_SIM_FLEET_MAX, &text, &len)) < 0)
                return fail("cannot read fleet file %s", o->fleet, rc);
        rc = kerf_fleet_parse_yaml(text, len, &f, err, sizeof(err));
        free(text);
        if (rc < 0) {
                fprintf(stderr, "kerf-sim: %s: %s\n", o->fleet, err[0] ? err : kerf_strerror(rc));
                return 1;
        }
        if (f->n_nodes == 0 || f->nodes[0].n_gpus == 0) {
                kerf_fleet_free(f);
                return fail("%s: the first node has no GPUs", o->fleet, 0);
        }
        if (f->nodes[0].n_gpus > KERF_SIM_MAX_GPUS) {
                fprintf(stderr,
                        "kerf-sim: %s: node %s has %u GPUs; kerf-sim simulates at most %d\n",
                        o->fleet, f->nodes[0].name, f->nodes[0].n_gpus, KERF_SIM_MAX_GPUS);
                kerf_fleet_free(f);
                return 1;
        }
        rc = kerf_sim_create(o->dir, f, 0, o->force);
        if (rc == -EEXIST) {
                fprintf(stderr,
                        "kerf-sim: a simulated node already exists in %s (use --force to "
                        "replace it, or reset)\n",
                        kerf_sim_dir_resolve(o->dir));
        } else if (rc < 0) {
                fail("cannot create the state in %s", kerf_sim_dir_resolve(o->dir), rc);
        } else {
                printf("created simulated node %s with %u GPU(s) in %s\n", f->nodes[0].name,
                       f->nodes[0].n_gpus, kerf_sim_dir_resolve(o->dir));
        }
        kerf_fleet_free(f);
        return rc < 0 ? 1 : 0;
}

static int need_gpu(kerf_sim *st, const struct opts *o)
{
        if (o->gpu < 0)
                return usage_err("--gpu N is required", NULL);
        if ((unsigned)o->gpu >= kerf_sim_gpu_count(st)) {
                fprintf(stderr, "kerf-sim: no GPU %ld (this node has %u)\n", o->gpu,
                        kerf_sim_gpu_count(st));
                return 1;
        }
        return 0;
}

static int cmd_inject(kerf_sim *st, const char *what, const struct opts *o)
{
        int rc;
        if (!what)
                return usage_err("inject needs xid, lost or reset", NULL);
        if ((rc = need_gpu(st, o)))
                return rc;
        unsigned g = (unsigned)o->gpu;
        if (!strcmp(what, "xid")) {
                if (o->code <= 0)
                        return usage_err("inject xid needs --code 1..999", NULL);
                if (o->ci >= 0 && o->gi < 0)
                        return usage_err("--ci needs --gi", NULL);
                int64_t seq = kerf_sim_xid_inject(st, g, (unsigned)o->code, (int)o->gi, (int)o->ci);
                if (seq == -ENOENT)
                        return fail("GPU %s has no such MIG instance (check --gi/--ci)",
                                    o->gpu == 0 ? "0" : "N", 0);
                if (seq < 0)
                        return fail("cannot inject the XID%s", "", (int)seq);
                printf("injected XID %ld on GPU %u (event %lld, simulated)\n", o->code, g,
                       (long long)seq);
                return 0;
        }
        if (!strcmp(what, "lost")) {
                if ((rc = kerf_sim_gpu_lost(st, g)) < 0)
                        return fail("cannot mark the GPU lost%s", "", rc);
                printf("GPU %u is now lost (simulated)\n", g);
                return 0;
        }
        if (!strcmp(what, "reset")) {
                rc = kerf_sim_gpu_reset(st, g, o->force);
                if (rc == -KERF_EINUSE)
                        return fail("GPU has running processes; stop them or use --force%s", "", 0);
                if (rc < 0)
                        return fail("cannot reset the GPU%s", "", rc);
                printf("GPU %u reset (simulated)\n", g);
                return 0;
        }
        return usage_err("unknown fault (xid, lost, reset)", what);
}

static int parse_cuda(const char *s, int *ret)
{
        long major, minor = 0;
        char buf[16];
        if (strlen(s) >= sizeof(buf))
                return -EINVAL;
        strcpy(buf, s);
        char *dot = strchr(buf, '.');
        if (dot)
                *dot = '\0';
        if (!parse_num(buf, 99, &major) || major < 1 || (dot && !parse_num(dot + 1, 99, &minor)))
                return -EINVAL;
        *ret = (int)(major * 1000 + minor * 10);
        return 0;
}

static int cmd_upgrade(kerf_sim *st, const struct opts *o)
{
        int cuda = 0, rc;
        if (!o->driver)
                return usage_err("upgrade needs --driver VERSION", NULL);
        if (o->cuda && parse_cuda(o->cuda, &cuda) < 0)
                return usage_err("bad --cuda (want MAJOR.MINOR, e.g. 12.6)", o->cuda);
        rc = kerf_sim_upgrade(st, o->driver, cuda, o->force);
        if (rc == -EINVAL)
                return fail("bad driver version '%s' (digits and dots, e.g. 560.35.03)", o->driver,
                            0);
        if (rc == -KERF_EINUSE)
                return fail("processes are running on the node; stop them or use --force%s", "", 0);
        if (rc < 0)
                return fail("cannot upgrade%s", "", rc);
        printf("driver is now %s (simulated)\n", o->driver);
        return 0;
}

static int cmd_mig(kerf_sim *st, const char *what, const struct opts *o)
{
        int rc;
        kerf_sim_gpu_info g;
        if (!what)
                return usage_err("mig needs enable, disable, create or destroy", NULL);
        if ((rc = need_gpu(st, o)))
                return rc;
        if ((rc = kerf_sim_gpu_get(st, (unsigned)o->gpu, &g)) < 0)
                return fail("cannot read GPU%s", "", rc);
        if (!strcmp(what, "enable") || !strcmp(what, "disable")) {
                rc = kerf_sim_mig_mode_set(st, g.index, what[0] == 'e');
                if (rc == -KERF_EINUSE)
                        return fail("GPU is busy (processes or MIG instances exist)%s", "", 0);
                if (rc < 0)
                        return fail("cannot change MIG mode on %s", g.model->name, rc);
                printf("MIG %sd on GPU %u (simulated)\n", what, g.index);
                return 0;
        }
        if (!strcmp(what, "create")) {
                const kerf_mig_profile *p = NULL;
                long id;
                unsigned gi, ci;
                if (!o->profile)
                        return usage_err("mig create needs --profile NAME|ID", NULL);
                p = kerf_mig_profile_by_name(g.model, o->profile);
                if (!p && parse_num(o->profile, 1000, &id))
                        p = kerf_mig_profile_by_id(g.model, (unsigned)id);
                if (!p) {
                        fprintf(stderr, "kerf-sim: %s has no MIG profile '%s'\n", g.model->name,
                                o->profile);
                        return 1;
                }
                if (!g.mig_enabled)
                        return fail("MIG is off on this GPU (kerf-sim mig enable --gpu N)%s", "",
                                    0);
                rc =
                    kerf_sim_gi_create(st, g.index, p->id, o->start >= 0 ? (int)o->start : -1, &gi);
                if (rc == -EINVAL)
                        return fail("%s cannot start at that memory slice", p->name, 0);
                if (rc == -ENOSPC)
                        return fail("no room for %s (overlap, count or compute slices)", p->name,
                                    0);
                if (rc < 0)
                        return fail("cannot create %s", p->name, rc);
                if (!o->no_ci &&
                    (rc = kerf_sim_ci_create(st, g.index, gi, p->ci_profile, &ci)) < 0) {
                        kerf_sim_gi_destroy(st, g.index, gi); /* leave the state as it was */
                        return fail("cannot create the compute instance of %s", p->name, rc);
                }
                printf("created GI %u (%s) on GPU %u (simulated)\n", gi, p->name, g.index);
                return 0;
        }
        if (!strcmp(what, "destroy")) {
                kerf_sim_gi_info info;
                if (o->gi < 0)
                        return usage_err("mig destroy needs --gi ID", NULL);
                if (kerf_sim_gi_get(st, g.index, (unsigned)o->gi, &info) < 0) {
                        fprintf(stderr, "kerf-sim: GPU %u has no GPU instance %ld\n", g.index,
                                o->gi);
                        return 1;
                }
                if (info.n_procs)
                        return fail("GPU instance has running processes%s", "", 0);
                for (unsigned c = 0; c < info.n_cis; c++)
                        if ((rc = kerf_sim_ci_destroy(st, g.index, info.id, info.cis[c].id)) < 0)
                                return fail("cannot destroy a compute instance%s", "", rc);
                if ((rc = kerf_sim_gi_destroy(st, g.index, info.id)) < 0)
                        return fail("cannot destroy the GPU instance%s", "", rc);
                printf("destroyed GI %u on GPU %u (simulated)\n", info.id, g.index);
                return 0;
        }
        return usage_err("unknown mig action (enable, disable, create, destroy)", what);
}

int main(int argc, char **argv)
{
        struct opts o = {.gpu = -1, .gi = -1, .ci = -1, .code = -1, .start = -1};
        kerf_sim *st = NULL;
        int rc;
        if (argc < 2)
                return fputs(usage, stderr), EXIT_USAGE;
        const char *cmd = argv[1];
        if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help"))
                return fputs(usage, stdout), 0;
        if (!strcmp(cmd, "--version"))
                return printf("kerf-sim %s\n", KERF_VERSION), 0;
        bool sub = !strcmp(cmd, "inject") || !strcmp(cmd, "mig");
        const char *what = sub && argc > 2 && argv[2][0] != '-' ? argv[2] : NULL;
        if ((rc = parse_opts(argc, argv, what ? 3 : 2, &o)))
                return rc;
        if (!strcmp(cmd, "create"))
                return cmd_create(&o);
        if (strcmp(cmd, "describe") && strcmp(cmd, "reset") && strcmp(cmd, "upgrade") && !sub)
                return usage_err("unknown command", cmd);
        if (!kerf_sim_dir_resolve(o.dir))
                return usage_err("no state directory: give --dir or set " KERF_SIM_ENV, NULL);
        if ((rc = kerf_sim_open(o.dir, &st)) < 0) {
                if (rc == -ENOENT)
                        return fail("no simulated node in %s (run kerf-sim create first)",
                                    kerf_sim_dir_resolve(o.dir), 0);
                return fail("cannot open the state in %s", kerf_sim_dir_resolve(o.dir), rc);
        }
        if (!strcmp(cmd, "describe")) {
                rc = kerf__sim_describe(st, stdout, o.json);
                rc = rc < 0 ? fail("cannot describe the node%s", "", rc) : 0;
        } else if (!strcmp(cmd, "reset")) {
                rc = kerf_sim_reset(st);
                rc = rc < 0 ? fail("cannot reset%s", "", rc) : (puts("reset (simulated)"), 0);
        } else if (!strcmp(cmd, "upgrade")) {
                rc = cmd_upgrade(st, &o);
        } else if (!strcmp(cmd, "inject")) {
                rc = cmd_inject(st, what, &o);
        } else {
                rc = cmd_mig(st, what, &o);
        }
        kerf_sim_close(st);
        return rc;
}
