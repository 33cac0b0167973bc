/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_slurm.c - kerf slurm gres-conf | node-conf: Slurm's gres.conf and NodeName= line from
 * what kerfd discovered (GET /v1/node, /v1/gpus); docs/CLUSTER.md "Node configuration" */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "kerf/core.h"
#include "kerf/shard.h"

#define MAX_ENT 512

/* One gres.conf record: a whole GPU, a MIG instance, or a GPU's shards / MPS share. */
typedef struct gent {
        const char *name; /* "gpu", "shard", "mps" */
        char type[64];    /* gpu only: model ("h200-141gb") or MIG profile ("1g.18gb") */
        char files[512];  /* File= or MultipleFiles= value */
        bool multiple;    /* MultipleFiles (a MIG instance: parent device + GI cap + CI cap) */
        unsigned count;   /* shard / mps: Count= */
} gent;

typedef struct sconf {
        char node[64];
        kerf_shard_rule rule;
        gent e[MAX_ENT];
        size_t n;
        long long cpus, mem_mib;
} sconf;

/* A type name Slurm takes: the model, lower case, [a-z0-9._-] only. */
static void type_of_model(const char *model, char *out, size_t cap)
{
        size_t o = 0;
        for (const char *p = model; *p && o + 1 < cap; p++) {
                char ch = (char)tolower((unsigned char)*p);
                out[o++] = isalnum((unsigned char)ch) || ch == '.' || ch == '-' ? ch : '_';
        }
        out[o] = '\0';
}

static bool safe_path(const char *s)
{
        if (!s || s[0] != '/')
                return false;
        for (const char *p = s; *p; p++)
                if ((unsigned char)*p <= ' ' || *p == ',' || *p == '#' || *p == '=' || *p == 0x7f)
                        return false;
        return true;
}

/* Builds the records from kerfd's answers. Order matters to Slurm 22.05: whole GPUs first, then
 * MIG instances, then shards (MIG records listed first made slurmd type the shards after the
 * MIG profile with a zero count). Returns 0 or an exit code after one line on stderr. */
static int build(sconf *s, json_t *node, json_t *gpus)
{
        json_t *dev = json_object_get(node, "dev"), *g, *m, *migs = json_object_get(node, "mig");
        const char *dir = json_string_value(json_object_get(dev, "dir"));
        json_t *sorted[MAX_ENT];
        size_t i, nm = 0;

        if (!dir) {
                cli_err("slurm: kerfd names no device files (the simulated fleet needs kerfd to "
                        "run as root to create them): Slurm needs File= for every gpu");
                return KERF_EXIT_REFUSED;
        }
        if (!safe_path(dir)) {
                cli_err("slurm: kerfd's device dir '%s' cannot stand in gres.conf", cli_safe(dir));
                return KERF_EXIT_REFUSED;
        }
        /* whole GPUs: every GPU not in MIG mode */
        json_array_foreach(json_object_get(gpus, "items"), i, g)
        {
                const char *mode = json_string_value(json_object_get(g, "mode"));
                const char *model = json_string_value(json_object_get(g, "model"));
                if (!mode || !model || !strcmp(mode, "mig") || s->n >= MAX_ENT)
                        continue;
                gent *e = &s->e[s->n++];
                e->name = "gpu";
                type_of_model(model, e->type, sizeof(e->type));
                snprintf(e->files, sizeof(e->files), "%s/nvidia%lld", dir,
                         (long long)json_integer_value(json_object_get(g, "index")));
        }
        /* MIG instances, in (GPU, unit) order: the live layout */
        json_array_foreach(migs, i, m) if (nm < MAX_ENT) sorted[nm++] = m;
        qsort(sorted, nm, sizeof(sorted[0]), kerf_gres_mig_cmp);
        for (i = 0; i < nm && s->n < MAX_ENT; i++) {
                const char *gi = json_string_value(json_object_get(sorted[i], "gi_cap"));
                const char *ci = json_string_value(json_object_get(sorted[i], "ci_cap"));
                const char *prof = json_string_value(json_object_get(sorted[i], "profile"));
                long long gpu = json_integer_value(json_object_get(sorted[i], "gpu"));
                if (!gi || !ci || !prof || !safe_path(gi) || !safe_path(ci)) {
                        fprintf(stderr,
                                "kerf: slurm: MIG unit %lld on GPU %lld has no device caps "
                                "(bookkept only): left out\n",
                                (long long)json_integer_value(json_object_get(sorted[i], "unit")),
                                gpu);
                        continue;
                }
                gent *e = &s->e[s->n++];
                e->name = "gpu";
                e->multiple = true;
                type_of_model(prof, e->type, sizeof(e->type));
                snprintf(e->files, sizeof(e->files), "%s/nvidia%lld,%s,%s", dir, gpu, gi, ci);
        }
        /* shards (or MPS where kerfd runs the GPU as MPS) on every GPU not in MIG mode */
        json_array_foreach(json_object_get(gpus, "items"), i, g)
        {
                const char *mode = json_string_value(json_object_get(g, "mode"));
                uint64_t mem = (uint64_t)json_integer_value(json_object_get(g, "memory_total"));
                unsigned per = kerf_shard_per_gpu(&s->rule, mem);
                if (!mode || !strcmp(mode, "mig") || s->n >= MAX_ENT || per == 0)
                        continue;
                gent *e = &s->e[s->n++];
                bool mps = !strcmp(mode, "mps");
                e->name = mps ? "mps" : "shard";
                e->count = mps ? 100 : per; /* mps: Slurm's convention, 100 per GPU */
                snprintf(e->files, sizeof(e->files), "%s/nvidia%lld", dir,
                         (long long)json_integer_value(json_object_get(g, "index")));
        }
        return 0;
}

/* "gpu:h200-141gb:6,gpu:1g.18gb:2,shard:600": the counts per (name, type), first-seen order. */
static void gres_summary(const sconf *s, char *out, size_t cap)
{
        struct {
                const char *name, *type;
                unsigned long long n;
        } acc[MAX_ENT];
        size_t na = 0, o = 0;
        out[0] = '\0';
        for (size_t i = 0; i < s->n; i++) {
                const gent *e = &s->e[i];
                const char *t = !strcmp(e->name, "gpu") ? e->type : "";
                size_t k;
                for (k = 0; k < na; k++)
                        if (!strcmp(acc[k].name, e->name) && !strcmp(acc[k].type, t))
                                break;
                if (k == na) {
                        acc[na].name = e->name;
                        acc[na].type = t;
                        acc[na++].n = 0;
                }
                acc[k].n += !strcmp(e->name, "gpu") ? 1 : e->count;
        }
        for (size_t k = 0; k < na && o < cap; k++)
                o += (size_t)snprintf(out + o, cap - o, "%s%s:%s%s%llu", k ? "," : "", acc[k].name,
                                      acc[k].type, acc[k].type[0] ? ":" : "", acc[k].n);
}

static char *gres_text(const sconf *s)
{
        size_t cap = 256 + s->n * 700, o = 0;
        char *t = malloc(cap);
        if (!t)
                return NULL;
        o += (size_t)snprintf(t + o, cap - o,
                              "# gres.conf for node %s, from kerfd (kerf slurm gres-conf); "
                              "shards: %s, see docs/CLUSTER.md\n",
                              s->node, kerf_shard_unit_name(s->rule.unit));
        for (size_t i = 0; i < s->n; i++) {
                const gent *e = &s->e[i];
                if (!strcmp(e->name, "gpu"))
                        o += (size_t)snprintf(
                            t + o, cap - o, "NodeName=%s Name=gpu Type=%s %s=%s\n", s->node,
                            e->type, e->multiple ? "MultipleFiles" : "File", e->files);
                else
                        o += (size_t)snprintf(t + o, cap - o,
                                              "NodeName=%s Name=%s Count=%u File=%s\n", s->node,
                                              e->name, e->count, e->files);
        }
        return t;
}

/* Reads an earlier gres.conf's Gres summary back (the lines this command writes). */
static void summary_of_file(const char *path, char *out, size_t cap)
{
        static sconf old;
        char line[1024];
        FILE *f = fopen(path, "re");
        out[0] = '\0';
        memset(&old, 0, sizeof(old));
        if (!f)
                return;
        while (fgets(line, sizeof(line), f) && old.n < MAX_ENT) {
                gent *e = &old.e[old.n];
                char *p;
                if (line[0] == '#')
                        continue;
                if (strstr(line, " Name=gpu ")) {
                        e->name = "gpu";
                        if ((p = strstr(line, " Type=")))
                                sscanf(p + 6, "%63s", e->type);
                } else if (strstr(line, " Name=shard ") || strstr(line, " Name=mps ")) {
                        e->name = strstr(line, " Name=shard ") ? "shard" : "mps";
                        if ((p = strstr(line, " Count=")))
                                e->count = (unsigned)strtoul(p + 7, NULL, 10);
                } else {
                        continue;
                }
                old.n++;
        }
        fclose(f);
        gres_summary(&old, out, cap);
}

/* Writes `text` to path atomically (temp file + rename). 0 or -errno. */
static int write_atomic(const char *path, const char *text)
{
        char tmp[4200];
        int fd, r = 0;
        size_t len = strlen(text);
        if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= sizeof(tmp))
                return -ENAMETOOLONG;
        if ((fd = mkstemp(tmp)) < 0)
                return -errno;
        if (fchmod(fd, 0644) < 0 || write(fd, text, len) != (ssize_t)len || fsync(fd) < 0)
                r = -errno ? -errno : -EIO;
        if (close(fd) < 0 && !r)
                r = -errno;
        if (!r && rename(tmp, path) < 0)
                r = -errno;
        if (r)
                unlink(tmp);
        return r;
}

static int fetch(cli *c, sconf *s, const char *node_opt, json_t **ret_node, json_t **ret_gpus)
{
        json_t *node = NULL, *gpus = NULL;
        int ex = cli_call(c, "GET", "/v1/node", NULL, &node);
        if (!ex)
                ex = cli_call(c, "GET", "/v1/gpus?limit=1000", NULL, &gpus);
        if (ex) {
                json_decref(node);
                return ex;
        }
        snprintf(s->node, sizeof(s->node), "%s",
                 node_opt ? node_opt : json_string_value(json_object_get(node, "name")) ?: "");
        if (!kerf_name_ok(s->node)) {
                cli_err("slurm: node name '%s' is not a Slurm node name (1..63 of "
                        "[A-Za-z0-9_.-]); pass --node NAME",
                        cli_safe(s->node));
                json_decref(node);
                json_decref(gpus);
                return KERF_EXIT_USAGE;
        }
        s->cpus = (long long)json_integer_value(json_object_get(node, "cpus"));
        s->mem_mib = (long long)(json_integer_value(json_object_get(node, "memory")) / 1048576);
        *ret_node = node;
        *ret_gpus = gpus;
        return 0;
}

static int usage_err(const char *msg, const char *arg)
{
        cli_err("slurm: %s '%s' (see kerf slurm --help)", msg, arg ? arg : "");
        return KERF_EXIT_USAGE;
}

int cli_slurm(cli *c, int argc, char **argv)
{
        static sconf s;
        const char *node = NULL, *per = NULL, *unit = NULL, *out = NULL, *sub;
        json_t *jn = NULL, *jg = NULL;
        char gres[4096];
        int ex;
        bool gres_conf;

        memset(&s, 0, sizeof(s));
        argc = cli_take_flag(argc, argv, "--json", NULL, &c->json);
        if (argc < 2)
                return usage_err("missing subcommand (gres-conf or node-conf)", "");
        sub = argv[1];
        if (strcmp(sub, "gres-conf") != 0 && strcmp(sub, "node-conf") != 0)
                return usage_err("unknown subcommand", sub);
        gres_conf = !strcmp(sub, "gres-conf");
        for (int i = 2; i < argc; i++) {
                const char *a = argv[i];
                const char **dst = !strcmp(a, "--node")             ? &node
                                   : !strcmp(a, "--shards-per-gpu") ? &per
                                   : !strcmp(a, "--shard-unit")     ? &unit
                                   : !strcmp(a, "--out")            ? &out
                                                                    : NULL;
                if (!dst)
                        return usage_err("unknown argument", a);
                if (i + 1 >= argc)
                        return usage_err("missing value after", a);
                *dst = argv[++i];
        }
        if (node && !kerf_name_ok(node))
                return usage_err("--node: 1..63 characters [A-Za-z0-9_.-], not", node);
        if (per && unit)
                return usage_err("--shards-per-gpu and --shard-unit exclude each other:", unit);
        if (kerf_shard_rule_parse(unit, per, &s.rule) < 0)
                return usage_err(unit ? "--shard-unit: pct or gib, not"
                                      : "--shards-per-gpu: a count 1..10000, not",
                                 unit ? unit : per);
        if (out && !gres_conf)
                return usage_err("--out is for gres-conf, not", sub);
        if ((ex = fetch(c, &s, node, &jn, &jg)))
                return ex;
        if ((ex = build(&s, jn, jg)))
                goto done;
        gres_summary(&s, gres, sizeof(gres));
        if (!gres_conf) {
                if (c->json) {
                        json_t *j = json_pack("{s:s, s:I, s:I, s:s, s:s}", "node", s.node, "cpus",
                                              (json_int_t)s.cpus, "real_memory_mib",
                                              (json_int_t)s.mem_mib, "gres", gres, "shard_unit",
                                              kerf_shard_unit_name(s.rule.unit));
                        cli_print_json(j);
                        json_decref(j);
                } else {
                        printf("NodeName=%s CPUs=%lld RealMemory=%lld Gres=%s\n", s.node, s.cpus,
                               s.mem_mib, gres);
                }
                fprintf(stderr, "kerf: slurm.conf also needs GresTypes=gpu,shard%s\n",
                        strstr(gres, "mps:") ? ",mps" : "");
                goto done;
        }
        char *text = gres_text(&s);
        if (!text) {
                cli_err("slurm: out of memory");
                ex = KERF_EXIT_REFUSED;
                goto done;
        }
        if (c->json) {
                json_t *recs = json_array();
                for (size_t i = 0; i < s.n; i++) {
                        const gent *e = &s.e[i];
                        json_t *r = json_pack("{s:s, s:s}", "name", e->name,
                                              e->multiple ? "multiple_files" : "file", e->files);
                        if (!strcmp(e->name, "gpu"))
                                json_object_set_new(r, "type", json_string(e->type));
                        else
                                json_object_set_new(r, "count", json_integer(e->count));
                        json_array_append_new(recs, r);
                }
                json_t *j =
                    json_pack("{s:s, s:{s:s, s:i}, s:s, s:o, s:s}", "node", s.node, "shards",
                              "unit", kerf_shard_unit_name(s.rule.unit), "count", (int)s.rule.count,
                              "gres", gres, "records", recs, "text", text);
                cli_print_json(j);
                json_decref(j);
        } else if (!out) {
                fputs(text, stdout);
        }
        if (out) {
                char old[4096];
                bool had = access(out, F_OK) == 0;
                summary_of_file(out, old, sizeof(old));
                char *cur = NULL;
                FILE *f = had ? fopen(out, "re") : NULL;
                if (f) { /* unchanged file: nothing to do */
                        size_t cap = strlen(text) + 2;
                        cur = calloc(1, cap);
                        if (cur && fread(cur, 1, cap - 1, f) == cap - 2 && !strcmp(cur, text)) {
                                fprintf(stderr, "kerf: %s unchanged: nothing to do\n", out);
                                free(cur);
                                fclose(f);
                                free(text);
                                goto done;
                        }
                        free(cur);
                        fclose(f);
                }
                int r = write_atomic(out, text);
                if (r < 0) {
                        cli_err("slurm: cannot write %s: %s", out, strerror(-r));
                        ex = KERF_EXIT_REFUSED;
                } else if (!had) {
                        fprintf(stderr,
                                "kerf: wrote %s (Gres=%s); put the NodeName line from `kerf "
                                "slurm node-conf` in slurm.conf and start slurmd\n",
                                out, gres);
                } else if (strcmp(old, gres) != 0) {
                        fprintf(stderr,
                                "kerf: gres counts changed (%s -> %s): update the NodeName line "
                                "(kerf slurm node-conf), then restart slurmctld and slurmd on "
                                "%s (drain the node first: scontrol update nodename=%s "
                                "state=drain reason=kerf-gres); scontrol reconfigure is not "
                                "enough when counts change\n",
                                old[0] ? old : "none", gres, s.node, s.node);
                } else {
                        fprintf(stderr,
                                "kerf: gres files changed, counts the same (%s): run scontrol "
                                "reconfigure\n",
                                gres);
                }
        }
        free(text);
done:
        json_decref(jn);
        json_decref(jg);
        return ex;
}
