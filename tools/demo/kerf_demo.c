/* SPDX-License-Identifier: Apache-2.0 */
/* kerf_demo.c - `make run` for now: the scheduling core on a simulated 8xH200 fleet */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerf/errno.h"
#include "kerf/sched.h"

static kerf_sched *S;

static void die(const char *what, int err)
{
        fprintf(stderr, "kerf-demo: %s: %s\n", what, kerf_strerror(err));
        exit(1);
}

static char *read_file(const char *path, size_t *len)
{
        FILE *f = fopen(path, "re");
        if (!f)
                return NULL;
        char *buf = NULL;
        size_t cap = 0, n = 0;
        for (;;) {
                if (n + 4096 > cap) {
                        cap = cap ? cap * 2 : 8192;
                        char *nb = realloc(buf, cap);
                        if (!nb)
                                break;
                        buf = nb;
                }
                size_t r = fread(buf + n, 1, cap - n, f);
                n += r;
                if (r == 0)
                        break;
        }
        fclose(f);
        *len = n;
        return buf;
}

static void tenant(const char *name, const char *cohort, unsigned weight, uint64_t gpus,
                   uint64_t mem_gib, uint64_t borrow_gpus)
{
        kerf_tenant_spec t;
        kerf_tenant_spec_init(&t, name);
        t.cohort = cohort;
        t.weight = weight;
        t.nominal[KERF_RES_GPUS] = gpus;
        t.nominal[KERF_RES_MEM] = mem_gib * KERF_GIB;
        t.borrow_limit[KERF_RES_GPUS] = borrow_gpus;
        t.borrow_limit[KERF_RES_MEM] = borrow_gpus * 141 * KERF_GIB;
        int r = kerf_sched_tenant_set(S, &t);
        if (r < 0)
                die("tenant", r);
}

static uint64_t submit(const char *name, const char *ten, kerf_workload w, kerf_tier tier,
                       unsigned gpus, uint64_t mem_gib, unsigned compute, int prio, bool preempt)
{
        kerf_request q;
        kerf_request_init(&q);
        q.name = name;
        q.tenant = ten;
        q.queue = w == KERF_WL_TRAINING ? "train" : w == KERF_WL_INFERENCE ? "serve" : "default";
        q.workload = w;
        q.tier = tier;
        q.gpus = gpus;
        q.mem_bytes = mem_gib * KERF_GIB;
        q.compute_pct = compute;
        q.compute_limit_pct = w == KERF_WL_INFERENCE && tier != KERF_TIER_HIGH ? 60 : 0;
        q.priority = prio;
        q.preemptible = preempt;
        uint64_t id = 0;
        kerf_reason why;
        int r = kerf_sched_submit(S, &q, &id, &why);
        if (r < 0) {
                printf("  submit %-14s -> refused (%s): %s\n", name, kerf_strerror(r), why.text);
                return 0;
        }
        printf("  submit %-14s -> task %llu (%s/%s, tenant %s)\n", name, (unsigned long long)id,
               kerf_workload_name(w), kerf_tier_name(tier), ten);
        return id;
}

/* Runs the scheduler until quiet, confirming MIG actions the way a backend would. */
static void schedule(void)
{
        kerf_decision d[64];
        for (int round = 0; round < 16; round++) {
                int n = kerf_sched_step(S, d, 64);
                if (n < 0)
                        die("step", n);
                if (n == 0)
                        return;
                for (int i = 0; i < n; i++) {
                        kerf_task_info ti = {0};
                        kerf_sched_task_get(S, d[i].task, &ti);
                        switch (d[i].kind) {
                        case KERF_DEC_MIG_CREATE:
                        case KERF_DEC_MIG_DESTROY:
                                printf("  %-11s GPU %u: %s\n", kerf_decision_kind_name(d[i].kind),
                                       d[i].gpu, d[i].reason.text);
                                printf("  %-11s (simulated backend confirms unit %llu)\n", "",
                                       (unsigned long long)d[i].units[0]);
                                kerf_sched_mig_done(S, d[i].units[0], 0);
                                break;
                        case KERF_DEC_PREEMPT:
                                printf("  PREEMPT     task %llu (%s): %s\n",
                                       (unsigned long long)d[i].task, ti.name, d[i].reason.text);
                                break;
                        case KERF_DEC_GPU_MODE:
                                printf("  gpu_mode    %s\n", d[i].reason.text);
                                break;
                        default:
                                printf("  start       task %llu (%s): %s\n",
                                       (unsigned long long)d[i].task, ti.name, d[i].reason.text);
                                break;
                        }
                }
        }
}

static void placement_table(void)
{
        uint64_t ids[256];
        printf("\n%-5s %-14s %-9s %-10s %-12s %-7s %-10s %-9s %s\n", "TASK", "NAME", "TENANT",
               "WORKLOAD", "STATE", "ROUTE", "GPU(S)", "MEM GiB", "COMPUTE");
        for (int st = KERF_TASK_RUNNING; st >= KERF_TASK_PENDING; st--) {
                size_t n = kerf_sched_task_list(S, (kerf_task_state)st, ids, 256);
                for (size_t i = 0; i < n && i < 256; i++) {
                        kerf_task_info t;
                        if (kerf_sched_task_get(S, ids[i], &t) < 0)
                                continue;
                        char gpus[32] = "-", comp[32] = "-";
                        if (t.n_units) {
                                int o = 0;
                                for (unsigned k = 0; k < t.n_units && o < 28; k++)
                                        o += snprintf(gpus + o, sizeof(gpus) - (size_t)o, "%s%u",
                                                      k ? "," : "", t.gpus[k]);
                                if (t.compute_limit_pct > t.compute_pct)
                                        snprintf(comp, sizeof(comp), "%u%%..%u%%", t.compute_pct,
                                                 t.compute_limit_pct);
                                else
                                        snprintf(comp, sizeof(comp), "%u%%", t.compute_pct);
                        }
                        printf("%-5llu %-14s %-9s %-10s %-12s %-7s %-10s %-9.1f %s\n",
                               (unsigned long long)t.id, t.name, t.tenant,
                               kerf_workload_name(t.workload), kerf_task_state_name(t.state),
                               t.state == KERF_TASK_PENDING ? "-" : kerf_unit_kind_name(t.route),
                               gpus, (double)t.mem_bytes / (double)KERF_GIB, comp);
                }
        }
}

static void gpu_layout(void)
{
        const kerf_fleet *f = kerf_sched_fleet(S);
        printf("\nGPU  MODE    MEM RESERVED        COMPUTE  LAYOUT\n");
        for (unsigned g = 0; g < f->n_gpus; g++) {
                kerf_gpu_state gs;
                kerf_sched_gpu_get(S, g, &gs);
                printf("%-4u %-7s %6.1f/%6.1f GiB  %5u%%   ", g, kerf_gpu_mode_name(gs.mode),
                       (double)gs.mem_reserved / (double)KERF_GIB,
                       (double)gs.mem_total / (double)KERF_GIB, gs.compute_reserved);
                kerf_unit_info u[16];
                size_t n = kerf_sched_unit_list(S, (int)g, u, 16);
                if (gs.mode == KERF_GPU_MODE_MIG) {
                        /* one cell per memory slice */
                        const char *cell[KERF_MIG_SLICES] = {0};
                        char lbl[KERF_MIG_SLICES][32];
                        for (size_t i = 0; i < n && i < 16; i++) {
                                snprintf(lbl[u[i].mig_start], sizeof(lbl[0]), "%s%s",
                                         u[i].mig_profile_name, u[i].task ? "*" : "");
                                cell[u[i].mig_start] = lbl[u[i].mig_start];
                        }
                        for (unsigned sl = 0; sl < KERF_MIG_SLICES; sl++)
                                printf("[%u:%s]", sl, cell[sl] ? cell[sl] : ".");
                        printf("   (* = assigned)");
                } else {
                        for (size_t i = 0; i < n && i < 16; i++)
                                printf("%s%s(task %llu)", i ? " " : "",
                                       kerf_unit_kind_name(u[i].kind),
                                       (unsigned long long)u[i].task);
                }
                printf("\n");
        }
}

static void explain_pending(void)
{
        uint64_t ids[256];
        size_t n = kerf_sched_task_list(S, KERF_TASK_PENDING, ids, 256);
        printf("\nWhy pending (kerf explain):\n");
        for (size_t i = 0; i < n && i < 256; i++) {
                kerf_task_info t;
                kerf_explain ex;
                kerf_sched_task_get(S, ids[i], &t);
                if (kerf_sched_explain(S, ids[i], &ex) < 0)
                        continue;
                printf("  task %llu %s (%s): [%s] %s\n", (unsigned long long)ids[i], t.name,
                       t.tenant, kerf_why_name(ex.reason.code), ex.reason.text);
                for (unsigned r = 0; r < ex.n_routes; r++)
                        printf("      route %-6s [%s] %s\n",
                               kerf_unit_kind_name(ex.routes[r].route),
                               kerf_why_name(ex.routes[r].code), ex.routes[r].text);
                if (ex.hint[0])
                        printf("      -> %s\n", ex.hint);
        }
}

int main(int argc, char **argv)
{
        const char *path = argc > 1 ? argv[1] : "examples/fleet-8xh200.yaml";
        size_t len = 0;
        char *text = read_file(path, &len);
        if (!text) {
                fprintf(stderr, "kerf-demo: %s: %s\n", path, strerror(errno));
                return 1;
        }
        kerf_fleet *fleet = NULL;
        char err[256];
        int r = kerf_fleet_parse_yaml(text, len, &fleet, err, sizeof(err));
        free(text);
        if (r < 0) {
                fprintf(stderr, "kerf-demo: %s: %s\n", path, err);
                return 1;
        }
        r = kerf_sched_new(fleet, NULL, &S);
        if (r < 0)
                die("scheduler", r);
        printf("kerf scheduling demo - fleet %s: %zu GPUs on %zu node(s), simulated (no device "
               "backend)\n",
               path, fleet->n_gpus, fleet->n_nodes);
        for (size_t g = 0; g < fleet->n_gpus; g++)
                printf("  GPU %zu %s %s%s\n", g, fleet->gpus[g].uuid, fleet->gpus[g].model->name,
                       fleet->gpus[g].mig_enabled ? " (MIG enabled)" : "");

        tenant("research", "lab", 2, 4, 600, 2);
        tenant("serving", "lab", 1, 2, 300, 0);
        tenant("interns", NULL, 1, 0, 24, 0);

        printf("\n== 1. three tenants submit a mixed set\n");
        submit("llm-pretrain", "research", KERF_WL_TRAINING, KERF_TIER_QUEUEABLE, 4, 0, 0, 50,
               false);
        for (int i = 0; i < 3; i++) {
                char n[32];
                snprintf(n, sizeof(n), "chat-api-%d", i);
                submit(n, "serving", KERF_WL_INFERENCE, KERF_TIER_HIGH, 1, 30, 25, 80, false);
        }
        submit("embed-svc", "serving", KERF_WL_INFERENCE, KERF_TIER_QUEUEABLE, 1, 20, 20, 60,
               false);
        for (int i = 0; i < 4; i++) {
                char n[32];
                snprintf(n, sizeof(n), "sweep-%d", i);
                submit(n, "research", KERF_WL_BATCH, KERF_TIER_EXPLORATORY, 1, 40, 30, 0, true);
        }
        for (int i = 0; i < 2; i++) {
                char n[32];
                snprintf(n, sizeof(n), "notebook-%d", i);
                submit(n, "interns", KERF_WL_DEV, KERF_TIER_EXPLORATORY, 1, 10, 0, 10, false);
        }
        schedule();
        placement_table();
        gpu_layout();

        printf("\n== 2. a high-priority fine-tune needs a whole GPU: batch work is preempted\n");
        submit("llm-finetune", "research", KERF_WL_TRAINING, KERF_TIER_HIGH, 1, 0, 0, 100, false);
        schedule();
        placement_table();
        gpu_layout();

        printf("\n== 3. more work than fits\n");
        submit("notebook-2", "interns", KERF_WL_DEV, KERF_TIER_EXPLORATORY, 1, 10, 0, 10, false);
        submit("chat-api-big", "serving", KERF_WL_INFERENCE, KERF_TIER_HIGH, 1, 0, 0, 70, false);
        submit("llm-eval", "research", KERF_WL_TRAINING, KERF_TIER_QUEUEABLE, 2, 0, 0, 40, false);
        submit("too-big", "research", KERF_WL_INFERENCE, KERF_TIER_HIGH, 1, 200, 0, 0, false);
        schedule();
        explain_pending();

        char cerr[256];
        r = kerf_sched_check(S, cerr, sizeof(cerr));
        printf("\ninvariants: %s\n", r == 0 ? "all hold" : cerr);
        kerf_sched_stats st;
        kerf_sched_stats_get(S, &st);
        printf("stats: %llu attempts, %llu placed, %llu preemptions, %llu MIG creates, %llu "
               "destroys\n",
               (unsigned long long)st.attempts, (unsigned long long)st.placed,
               (unsigned long long)st.preemptions, (unsigned long long)st.mig_creates,
               (unsigned long long)st.mig_destroys);
        kerf_sched_free(S);
        kerf_fleet_free(fleet);
        return r == 0 ? 0 : 1;
}
