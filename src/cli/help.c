/* SPDX-License-Identifier: Apache-2.0 */
/* help.c - --help text of every kerf verb */
#include <string.h>

#include "cli.h"
#include "kerf/fields.h" /* the bounds the help text names */

/* a bound of kerf/fields.h as text in a string literal */
#define STR_(x) #x
#define STR(x)  STR_(x)

static const struct {
        const char *verb;
        const char *text;
} help[] = {
    {"submit", "usage: kerf submit [flags] -- COMMAND [ARG...]\n"
               "Submits a task; prints its id and state.\n"},
    {"run", "usage: kerf run [submit flags] [--no-cwd] [--export VAR[,VAR]] [--env-from-shell]\n"
            "                -- COMMAND [ARG...]\n"
            "Submits a task, says on stderr why it waits (once per change), streams its\n"
            "stdout/stderr, and exits with the task's exit code (128+N if killed by signal N,\n"
            "125 if it never ran or was cancelled; a failed start says why).\n"
            "Ctrl-C cancels the task and waits for its end; a second Ctrl-C within 1 s leaves\n"
            "at once (the task stays cancelled); either way the exit code is 130.\n"
            "  --cwd DIR           working directory (default: the current directory when it\n"
            "                      is searchable by any uid, as the task's may differ);\n"
            "                      --no-cwd lets kerfd choose\n"
            "  --export VAR[,VAR]  copy these variables of this shell (repeatable)\n"
            "  --env-from-shell    copy this shell's whole environment\n"
            "  Never copied: KERF_*, CUDA_MPS_*, CUDA_VISIBLE_DEVICES, LD_PRELOAD, LD_AUDIT\n"
            "  (kerfd sets them); --env K=V wins over a copied variable.\n"
            "Submit flags:\n"},
    {"ls", "usage: kerf ls [--state S[,S]] [--queue Q] [--tenant T] [--name GLOB] [--route R]\n"
           "               [--gpu N] [--sort id|submitted|priority|state|name] [-r]\n"
           "               [-o table|wide|json|yaml] [--no-headers] [--limit N]\n"
           "               [--after CURSOR | --all] [--watch [SECONDS]]\n"
           "Lists tasks (yours, or all for an admin), in id order, one page (--limit, default\n"
           "100) at a time: when more remain, stderr names the command for the next page.\n"
           "  --state   pending starting running suspended succeeded failed cancelled\n"
           "            (comma-separated: any of them; running includes suspended)\n"
           "  --state, --queue, --tenant are applied by kerfd; --name (a glob), --route\n"
           "  (whole mig slice mps tslice) and --gpu (a task with a unit on GPU N) are\n"
           "  applied here to each page, so a page may show fewer than --limit rows\n"
           "  --sort    of the rows shown (id by default; state in lifecycle order); -r reverses\n"
           "  -o wide   adds PRIO, TIER, MEMORY, COMPUTE (granted, or asked while pending), UNITS\n"
           "  -o json|yaml  the list with ISO 8601 UTC submitted/started/ended next to *_ms\n"
           "  --all     every page; --watch redraws every SECONDS (default 2) until Ctrl-C\n"},
    {"show", "usage: kerf show ID [--json]\nShows one task: state, units, times, logs.\n"},
    {"cancel",
     "usage: kerf cancel [ID...] [--state S[,S]] [--queue Q] [--tenant T] [--name GLOB]\n"
     "                   [--dry-run] [--grace SECONDS] [--signal SIG] [--json]\n"
     "Cancels tasks: the ids given, or every unfinished task the filter matches (filters\n"
     "AND-ed; with ids, only those of them that match). Nothing without ids or a filter.\n"
     "A running task gets SIGTERM (or --signal: TERM INT KILL USR1 USR2 HUP QUIT ... or\n"
     "1..64), then SIGKILL after the grace (--grace 0.." STR(
         KERF_MAX_GRACE_S) " s; default kerfd's\n"
                           "grace_s).\n"
                           "  --state   pending starting running suspended (default: all of them)\n"
                           "  --dry-run lists what would be cancelled, cancels nothing\n"
                           "Exit 0 when all were cancelled, 1 when any failed (one line each: id "
                           "and why),\n"
                           "4 when none was found.\n"},
    {"suspend", "usage: kerf suspend ID [--json]\nHolds every GPU launch of a running software "
                "slice (its processes stay,\nits memory stays allocated); shown as suspended.\n"},
    {"resume", "usage: kerf resume ID [--json]\nReleases the GPU launches of a suspended "
               "slice.\n"},
    {"logs", "usage: kerf logs ID [--stderr] [-f|--follow]\nPrints a task's stdout (or stderr).\n"},
    {"explain",
     "usage: kerf explain ID [--json]\n"
     "Why a task waits (quota, no fitting unit, fragmentation, queue order, fair share) or\n"
     "why it was preempted, per route, and what would let it run.\n"},
    {"gpus", "usage: kerf gpus [--json]\nGPUs: mode, reserved memory/compute, state (ok, FAULT, "
             "DRAIN), MIG layout.\n"},
    {"hold",
     "usage: kerf hold ID... [--json]\n"
     "Holds pending tasks: they stay pending (reason \"held by tenant\" or \"held by admin\")\n"
     "and are never started, nor do they hold back the tasks behind them, until released.\n"
     "A task an admin held can only be released by an admin.\n"},
    {"release", "usage: kerf release ID... [--json]\nReleases held tasks: back in their queue "
                "at their place (priority, then\nsubmission order).\n"},
    {"update", "usage: kerf update ID [--priority N] [--max-runtime DUR] [--idle-timeout DUR]\n"
               "                  [--preemptible true|false] [--json]\n"
               "Changes a pending task (held or not), checked as at submit (kerf submit --help\n"
               "gives each bound), priority within the tenant's max_priority; durations 90, 90s,\n"
               "15m, 1h30m, 1-00:00:00. Other fields: cancel and submit again.\n"},
    {"gpu", "usage: kerf gpu drain INDEX [--reason TEXT] [--wait] [--json]   (admin)\n"
            "       kerf gpu resume INDEX [--json]                            (admin)\n"
            "       kerf gpu recover INDEX [--json]                           (admin)\n"
            "drain: no new work is placed on the GPU; what runs there keeps running (--wait waits\n"
            "until none is left). resume: the GPU takes new work again. Both survive a kerfd\n"
            "restart. recover: a GPU taken out of service by a fault goes back in service.\n"},
    {"units", "usage: kerf units [--json]\nUnits: whole GPUs, MIG instances, slices.\n"},
    {"tenants",
     "usage: kerf tenants [--json]\n"
     "       kerf tenant create NAME [flags] [--json]            (admin)\n"
     "       kerf tenant patch NAME flags [--json]               (admin)\n"
     "       kerf tenant token create NAME                       (admin; prints it once)\n"
     "       kerf tenant token revoke NAME ID                    (admin)\n"
     "The quota: kerf quota. The flags (the fields of POST and PATCH /v1/tenants):\n"},
    {"tenant", NULL},
    {"quota",
     "usage: kerf quota TENANT [--json]                 show\n"
     "       kerf quota TENANT --gpus N --memory SIZE --compute PCT --mig-slices N\n"
     "            [--borrow-RES V] [--lend-RES V]       set (admin); V may be 'unlimited'\n"
     "memory values are sizes with a unit (64GiB, 1.5TiB; a bare number is refused)\n"},
    {"queue", "usage: kerf queue [--json]\nQueues: pending and running counts, head task.\n"},
    {"audit", "usage: kerf audit [--after SEQ] [--json]     list records\n"
              "       kerf audit export [--out FILE]       JSON Lines\n"
              "       kerf audit verify                    check the hash chain (admin)\n"
              "       kerf audit checkpoint [--out FILE] [--append FILE]\n"
              "            a signed head (seq, hash) to keep outside kerfd (admin)\n"
              "       kerf audit verify [--in EXPORT] [--against CHECKPOINT] [--key PUB]\n"
              "            recompute the chain (--in: an export file, no kerfd needed) and\n"
              "            check it still holds the checkpointed record (truncation, rewrite)\n"
              "       kerf audit verify --bundle DIR [--nodes FILE] [--json]\n"
              "            a kerf cluster audit export: every node's chain against its\n"
              "            checkpoint, the manifest's digests, merged.jsonl the exact union\n"
              "            in order; OK/FAIL per node; a failed node's export: partial, exit 1;\n"
              "            --nodes: the bundle holds exactly the file's nodes, each checkpoint\n"
              "            signed by the node's audit_key where the file gives one\n"},
    {"top", "usage: kerf top [--interval S] [--once | --watch]\nA refreshing view (--watch, "
            "the default) of GPUs, units and running tasks,\nwith each software slice's memory "
            "and compute use against its grant.\n"},
    {"version", "usage: kerf version [--json]\nClient and kerfd versions.\n"},
    {"poc",
     "usage: kerf poc run [--route software|hardware|both] [--suite FILE] [--owner NAME]\n"
     "            [--out DIR] [--quick] [--seed N] [--only SW1,HW2,...] [--load PATH]\n"
     "            [--spawn [--fleet F] [--kerfd BIN] [--test-no-shim] [--test-break-limiter]]\n"
     "            [--restart-cmd CMD]\n"
     "       kerf poc verify DIR\n"
     "Runs the eight acceptance tests (SW1-SW4, HW1-HW4, NB) against kerfd (admin), or a\n"
     "private simulated kerfd with --spawn; writes the evidence to DIR (default\n"
     "./kerf-poc-<UTC time>). Exit 1 when any test FAILs. verify re-checks a report.\n"
     "See docs/POC.md.\n"},
    {"history",
     "usage: kerf history [--since TIME] [--until TIME] [--tenant T] [--queue Q]\n"
     "                    [--state succeeded,failed,cancelled] [--route R] [--limit N]\n"
     "                    [-o table|csv|json] [--json] [--no-headers]\n"
     "Ended tasks, oldest end first (as sacct): state, end reason, exit code (sigN when\n"
     "killed), route, submit time, queue wait and elapsed time (1h30m), and the\n"
     "GPU-hours its runs were granted and used (- when a run was not measured), with a\n"
     "total per route. Default period: tasks that ended in the last 7 days. TIME: ISO 8601\n"
     "UTC (2026-12-01, 2026-12-01T15:00Z), 'now', or back from now (90m 24h 7d 2w).\n"
     "--limit: at most N rows (default 1000). A tenant sees its own tasks only.\n"},
    {"cost",
     "usage: kerf cost [--since TIME] [--until TIME] [--by tenant,route,unit_kind] [--json]\n"
     "GPU-hours granted and used per tenant, route (software | hardware | whole) and\n"
     "unit kind over a period (default: everything up to now). TIME: ISO 8601 UTC\n"
     "(2026-12-01, 2026-12-01T15:00:00Z), 'now', or back from now (90s 30m 24h 7d 2w).\n"
     "A tenant sees its own tasks only.\n"},
    {"gc", "usage: kerf gc [--dry-run] [--json] (admin)\n"
           "Retention now: removes the logs and work dirs of ended tasks older than\n"
           "retention.logs_after / work_dirs_after, caps ended tasks' logs at max_log_bytes and\n"
           "deletes task rows older than tasks_after (never audit records or cost runs); one\n"
           "node.gc audit record. --dry-run (-n) shows what a pass would do and changes\n"
           "nothing. kerfd runs a pass every retention.interval (docs/DAEMON.md \"Retention\").\n"},
    {"cdi", "usage: kerf cdi generate [--out DIR] [--kind VENDOR/CLASS]\n"
            "       kerf cdi attach [--pid PID] [--lease D (60, 90s, 1m; <= 1h)] [submit flags]\n"
            "       kerf cdi release TASK\n"
            "CDI devices for container runtimes (docs/CLUSTER.md \"Containers (CDI)\").\n"
            "  generate  the node's static spec (whole GPUs and MIG instances by UUID), printed\n"
            "            or written atomically to DIR/<vendor>-<class>.json (admin)\n"
            "  attach    registers a lease-held task for a container (a holder process of\n"
            "            its own, or --pid) and prints its CDI device, e.g. kerf.dev/gpu=task-7,\n"
            "            for podman run --device; needs cdi.enabled in kerfd's config\n"
            "            --lease S  1.." STR(
                KERF_MAX_LEASE_S) " (default 60; kerfd's limits.min_lease_s\n"
                                  "            applies)\n"
                                  "  release   ends the task (the spec's poststop hook runs it); "
                                  "an ended task is ok\n"},
    {"export", "usage: kerf export --out FILE [--poc DIR]... (admin)\n"
               "Writes everything a customer takes when leaving - config, tenants, tasks,\n"
               "units, events, the audit chain with a signed checkpoint, cost runs, POC\n"
               "reports (--poc, repeatable) - to a tar archive with a manifest.json of\n"
               "sha256 digests (docs/EXPORT.md). FILE is written whole or not at all.\n"},
    {"slurm",
     "usage: kerf slurm gres-conf [--node NAME] [--shards-per-gpu N | --shard-unit pct|gib]\n"
     "                            [--out FILE] [--json]\n"
     "       kerf slurm node-conf [--node NAME] [--shards-per-gpu N | --shard-unit pct|gib]\n"
     "Slurm's gres.conf (whole GPUs, MIG instances as typed gpus, shards per GPU) and the\n"
     "NodeName= line for slurm.conf, from what kerfd discovered (admin; docs/CLUSTER.md).\n"
     "Shards: 100 per GPU (pct, the default), one per GiB (gib) or N per GPU.\n"
     "--out FILE writes gres.conf atomically and says on stderr which Slurm command the\n"
     "change needs (scontrol reconfigure, or a slurmd/slurmctld restart when counts change).\n"},
    {"cluster", "usage: kerf cluster gpus|units|top [--nodes FILE] [--json]\n"
                "       kerf cluster audit export --out DIR [--nodes FILE]\n"
                "            per node DIR/NODE/{checkpoint.json,audit.jsonl,node.json}, and\n"
                "            DIR/manifest.json + DIR/merged.jsonl (all records in time order):\n"
                "            kerf audit verify --bundle DIR\n"
                "Every node's kerfd, read-only, with a NODE column. Nodes come from --nodes FILE,\n"
                "$KERF_NODES or ~/.config/kerf/nodes.yaml (docs/CLUSTER.md \"Cluster view\"). An\n"
                "unreachable node is one line saying so; exit 1 when any node failed.\n"},
};

/* After kerf submit's and run's text: the request flags, made from kerf_task_fields (the
 * descriptors kerfd validates with), then the words for sizes and durations. */
static const char request_tail[] =
    "  --json              print the task as JSON\n"
    "SIZE: a number and a binary unit: B, KiB, MiB, GiB, TiB, PiB (or K, M, G, T, P);\n"
    "  a bare number is refused ('16': 16GiB or 16MiB?), so is 16GB (10^9 or 2^30?).\n"
    "D: seconds (90), units d h m s (90s, 15m, 1h30m, 2d) or Slurm's [D-]HH:MM:SS,\n"
    "  MM:SS, D-HH (1-00:00:00). The one rule: docs/UNITS.md.\n";

static const char general[] =
    "usage: kerf [--socket PATH | --url http://127.0.0.1:PORT] [--token T] [--json] COMMAND\n"
    "\n"
    "Tasks:   submit run ls show cancel suspend resume logs explain history\n"
    "Control: hold release update gpu (pending tasks; GPU drain, resume, recover)\n"
    "Fleet:   gpus units queue top\n"
    "Admin:   tenants tenant quota audit cost export gc version\n"
    "Cluster: slurm gres-conf|node-conf, cluster gpus|units|top|audit (docs/CLUSTER.md)\n"
    "Plan:    replay (runs locally)\n"
    "Prove:   poc run, poc verify (docs/POC.md)\n"
    "Run 'kerf COMMAND --help' for a command's flags.\n"
    "\n"
    "The socket defaults to $KERF_SOCKET, /run/kerf/kerfd.sock (root) or\n"
    "$XDG_RUNTIME_DIR/kerf/kerfd.sock; the token to $KERF_TOKEN.\n"
    "\n"
    "Exit codes: 0 ok; 1 kerfd refused the request; 2 bad command line; 3 kerfd unreachable;\n"
    "4 not found; 5 not allowed (401/403); kerf run: the task's own exit code.\n";

void cli_usage(FILE *f, const char *verb)
{
        if (verb) {
                for (size_t i = 0; i < sizeof(help) / sizeof(help[0]); i++) {
                        if (strcmp(help[i].verb, verb) != 0)
                                continue;
                        fputs(help[i].text ? help[i].text : help[i + (i ? -1 : 1)].text, f);
                        if (!strcmp(verb, "submit") || !strcmp(verb, "run")) {
                                cli_task_flags_help(f);
                                fputs(request_tail, f);
                        }
                        if (!strcmp(verb, "tenants") || !strcmp(verb, "tenant"))
                                cli_tenant_flags_help(f);
                        return;
                }
        }
        fputs(general, f);
}

bool cli_wants_help(int argc, char **argv)
{
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "--"))
                        return false;
                if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
                        cli_usage(stdout, argv[0]);
                        return true;
                }
        }
        return false;
}
