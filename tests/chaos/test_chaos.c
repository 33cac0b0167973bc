/* SPDX-License-Identifier: Apache-2.0 */
/* test_chaos.c - kill -9 of kerfd at random points under concurrent submits, cancels and task
 * exits, CYCLES times (docs/SECURITY.md "Chaos"). After every restart: the audit chain
 * verifies and every submit answered 201 is in the store. At the end: no submit is stored
 * twice, no task ran twice except inside the documented start window (docs/DAEMON.md "Double
 * start"), and every ended task carries its true exit code (tasks exit with id % 7, or
 * SIGKILL themselves when id % 13 == 5).
 * Exit codes of tasks that end while kerfd is down (or whose kerfd died before it recorded
 * them) become true with per-task supervisors (finding R1): until then only tasks started and
 * ended under one kerfd (with a margin before its kill) are held to it; KERF_CHAOS_STRICT_EXIT=1
 * (environment or compile definition) holds every ended task to it.
 * Usage: test_chaos [--cycles N] [--seed S]   (or KERF_CHAOS_CYCLES, KERF_CHAOS_SEED); the seed
 * is printed first so that a failure can be replayed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define WORKERS    3
#define PER_WORKER 16 /* submits per worker per cycle (at most) */
#define MAX_CYCLES 100000

static unsigned seed, cycles = 20;
static bool strict_exit;
static kd K;
static char rundir[64];

/* One submit, in slot (cycle * WORKERS + worker) * PER_WORKER + i: its name says which. */
typedef struct sub {
        bool used;             /* the worker got that far */
        unsigned long long id; /* 0: not (yet) known to be stored */
        char name[40];
        bool cancel; /* a cancel was sent (whatever its answer) */
        unsigned runs;
        /* its latest run: start and end markers (wall clock, ms; 0: none) and the process's
         * start (/proc/PID/stat starttime: CLOCK_BOOTTIME, in ms) */
        int64_t last_s, last_e, last_b;
} sub;
static sub *subs;
static size_t n_slots, n_subs;
static size_t *by_id; /* task id -> slot + 1 */
static size_t id_cap;

/* incarnations of kerfd: [up, kill) in wall-clock ms, and in CLOCK_BOOTTIME ms */
static int64_t *inc_up, *inc_kill, *inc_up_b, *inc_kill_b;
static unsigned n_inc;

/* totals for the summary */
static unsigned n_unanswered, n_refused, n_cancels, n_unacked_found, n_double, n_exit_checked,
    n_exit_skipped, n_ran;

#define CHAOS_FAIL(...)                                                                            \
        do {                                                                                       \
                fprintf(stderr, "chaos: FAILED (replay with --seed %u --cycles %u)\n", seed,       \
                        cycles);                                                                   \
                fail_msg(__VA_ARGS__);                                                             \
        } while (0)

static int64_t clock_ms(clockid_t c)
{
        struct timespec ts;
        clock_gettime(c, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t now_ms(void)
{
        return clock_ms(CLOCK_REALTIME);
}

/* The task: one marker file per run (start and end times; its process's start time in clock
 * ticks since boot, which, unlike the time its shell gets to run, tells which kerfd forked
 * it), then its fate from its id. */
static void task_body(char *out, size_t cap, const char *name, const char *tenant, bool slice)
{
        snprintf(out, cap,
                 "{\"tenant\":\"%s\",\"name\":\"%s\",\"workload\":\"training\","
                 "\"preemptible\":false,%s\"command\":[\"/bin/sh\",\"-c\","
                 "\"i=$KERF_TASK_ID; f=%s/run.$i.$$; "
                 "echo s $(date +%%s%%3N) b $(cut -d' ' -f22 /proc/$$/stat) >$f; "
                 "case $((i %% 10)) in 0) sleep 3;; [1-5]) sleep 0.0$((i %% 8));; "
                 "*) sleep 0.$((i %% 8));; esac; "
                 "echo e $(date +%%s%%3N) >>$f; "
                 "if [ $((i %% 13)) -eq 5 ]; then kill -9 $$; fi; exit $((i %% 7))\"]}",
                 tenant, name, slice ? "\"route\":\"slice\",\"memory\":\"1GiB\"," : "", rundir);
}

/* One submitter: up to PER_WORKER submits, a cancel of one of its own tasks every third
 * submit, until kerfd stops answering. Lines: "A id name" (201), "U name" (no answer), "R name
 * status" (refused), "C id -" (cancel sent). Runs in a child: _exit only (the harness's
 * atexit kills kerfd). */
static void worker(unsigned cycle, unsigned w, const char *file)
{
        FILE *f = fopen(file, "w");
        unsigned r = seed ^ (cycle * 7919u) ^ (w * 104729u);
        unsigned long long mine[PER_WORKER];
        unsigned n_mine = 0;

        if (!f)
                _exit(2);
        signal(SIGPIPE, SIG_IGN); /* kerfd may die while a request is being written */
        setvbuf(f, NULL, _IOLBF, 0);
        for (unsigned i = 0; i < PER_WORKER; i++) {
                char name[40], body[1024];
                long s;
                json_t *j;
                snprintf(name, sizeof(name), "c%u-w%u-%u", cycle, w, i);
                task_body(body, sizeof(body), name, (i + w) % 2 ? "bob" : "alice",
                          rand_r(&r) % 3 == 0);
                j = kd_call(&K, "POST", "/v1/tasks", body, NULL, &s, NULL);
                if (s == 201) {
                        unsigned long long id =
                            (unsigned long long)json_integer_value(json_object_get(j, "id"));
                        fprintf(f, "A %llu %s\n", id, name);
                        mine[n_mine++] = id;
                } else if (s == 0) {
                        fprintf(f, "U %s\n", name);
                } else {
                        fprintf(f, "R %s %ld\n", name, s);
                }
                json_decref(j);
                if (s == 0)
                        break; /* kerfd is gone */
                if (i % 3 == 2 && n_mine) {
                        char path[96];
                        unsigned long long id = mine[rand_r(&r) % n_mine];
                        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", id);
                        fprintf(f, "C %llu -\n", id); /* sent: may take effect unanswered */
                        json_decref(kd_call(&K, "POST", path, "{\"grace_s\":1}", NULL, &s, NULL));
                        if (s == 0)
                                break;
                }
                kd_sleep_ms(10 + rand_r(&r) % 50);
        }
        fclose(f);
        _exit(0);
}

static sub *find_name(const char *name)
{
        unsigned c, w, i;
        size_t k;
        char tail;
        if (!name || sscanf(name, "c%u-w%u-%u%c", &c, &w, &i, &tail) != 3 || w >= WORKERS ||
            i >= PER_WORKER)
                return NULL;
        k = ((size_t)c * WORKERS + w) * PER_WORKER + i;
        return k < n_slots && subs[k].used ? &subs[k] : NULL;
}

static sub *find_id(unsigned long long id)
{
        return id < id_cap && by_id[id] ? &subs[by_id[id] - 1] : NULL;
}

static void set_id(sub *s, unsigned long long id)
{
        if (id >= id_cap)
                CHAOS_FAIL("task id %llu: more than %zu ids", id, id_cap);
        s->id = id;
        by_id[id] = (size_t)(s - subs) + 1;
}

static void read_worker(const char *file)
{
        char line[256], name[40];
        unsigned long long id;
        long st;
        FILE *f = fopen(file, "r");

        assert_non_null(f);
        while (fgets(line, sizeof(line), f)) {
                if (sscanf(line, "A %llu %39s", &id, name) == 2 ||
                    sscanf(line, "U %39s", name) == 1) {
                        unsigned c, w, i;
                        size_t k;
                        sub *s;
                        assert_int_equal(sscanf(name, "c%u-w%u-%u", &c, &w, &i), 3);
                        k = ((size_t)c * WORKERS + w) * PER_WORKER + i;
                        assert_true(k < n_slots);
                        s = &subs[k];
                        memset(s, 0, sizeof(*s));
                        s->used = true;
                        n_subs++;
                        snprintf(s->name, sizeof(s->name), "%s", name);
                        if (line[0] == 'A')
                                set_id(s, id);
                        n_unanswered += line[0] == 'U';
                } else if (sscanf(line, "R %39s %ld", name, &st) == 2) {
                        n_refused++;
                        if (st != 429 && st != 503 && st != 507)
                                CHAOS_FAIL("submit %s answered %ld", name, st);
                } else if (sscanf(line, "C %llu", &id) == 1) {
                        sub *s = find_id(id);
                        assert_non_null(s);
                        s->cancel = true;
                        n_cancels++;
                }
        }
        fclose(f);
}

/* Every stored task (admin listing, all pages), as a JSON array the caller decrefs. */
static json_t *all_tasks(void)
{
        json_t *all = json_array();
        unsigned long long after = 0;
        for (;;) {
                char path[96];
                long s;
                json_t *j, *next;
                snprintf(path, sizeof(path), "/v1/tasks?limit=1000&after=%llu", after);
                j = kd_call(&K, "GET", path, NULL, NULL, &s, NULL);
                if (s != 200)
                        CHAOS_FAIL("GET %s -> %ld", path, s);
                json_array_extend(all, json_object_get(j, "items"));
                next = json_object_get(j, "next");
                if (!json_is_string(next)) {
                        json_decref(j);
                        return all;
                }
                after = strtoull(json_string_value(next), NULL, 10);
                json_decref(j);
        }
}

static json_t *task_of(json_t *all, unsigned long long id)
{
        size_t i;
        json_t *t;
        json_array_foreach(all, i, t) if ((unsigned long long)json_integer_value(
                                              json_object_get(t, "id")) == id) return t;
        return NULL;
}

/* After every restart: the chain verifies; acknowledged = found; no submit stored twice. */
static void check_store(void)
{
        long s;
        json_t *v = kd_call(&K, "POST", "/v1/audit/verify", NULL, NULL, &s, NULL), *all, *t;
        unsigned *seen = calloc(n_slots, sizeof(*seen));
        size_t i;

        if (s != 200 || !json_is_true(json_object_get(v, "ok")))
                CHAOS_FAIL("audit verify after restart %u: %ld %s", n_inc - 1, s,
                           json_string_value(json_object_get(v, "problem")));
        json_decref(v);
        assert_non_null(seen);
        all = all_tasks();
        json_array_foreach(all, i, t)
        {
                const char *nm = json_string_value(json_object_get(t, "name"));
                unsigned long long id =
                    (unsigned long long)json_integer_value(json_object_get(t, "id"));
                sub *su = find_name(nm);
                if (!su)
                        CHAOS_FAIL("task %llu (%s) stored, but no worker sent it", id, nm);
                if (++seen[su - subs] > 1)
                        CHAOS_FAIL("submit %s (%s) stored twice (task %llu)", nm,
                                   su->id ? "acknowledged" : "unanswered", id);
                if (su->id && su->id != id)
                        CHAOS_FAIL("%s: acknowledged as task %llu, stored as %llu", nm, su->id, id);
                if (!su->id) { /* an unanswered submit that was committed: it counts now */
                        set_id(su, id);
                        n_unacked_found++;
                }
        }
        for (size_t k = 0; k < n_slots; k++)
                if (subs[k].id && !seen[k])
                        CHAOS_FAIL("task %llu (%s) acknowledged, not found after restart %u",
                                   subs[k].id, subs[k].name, n_inc - 1);
        json_decref(all);
        free(seen);
}

static void start_incarnation(bool first)
{
        inc_up_b[n_inc] = clock_ms(CLOCK_BOOTTIME);
        inc_up[n_inc] = now_ms();
        inc_kill[n_inc] = inc_kill_b[n_inc] = INT64_MAX;
        n_inc++;
        if (first)
                kd_setup(&K, NULL);
        else
                kd_start(&K);
}

static void one_cycle(unsigned c, unsigned *r)
{
        pid_t w[WORKERS];
        char files[WORKERS][320];
        unsigned wait_ms;

        for (unsigned i = 0; i < WORKERS; i++) {
                snprintf(files[i], sizeof(files[i]), "%s/w.%u.%u", K.dir, c, i);
                w[i] = fork();
                assert_true(w[i] >= 0);
                if (w[i] == 0)
                        worker(c, i, files[i]);
        }
        /* the kill point: mostly inside the burst, sometimes right at its start */
        wait_ms = rand_r(r) % 5 == 0 ? rand_r(r) % 40 : 50 + rand_r(r) % 1500;
        kd_sleep_ms(wait_ms);
        inc_kill[n_inc - 1] = now_ms();
        inc_kill_b[n_inc - 1] = clock_ms(CLOCK_BOOTTIME);
        kd_kill9(&K);
        for (unsigned i = 0; i < WORKERS; i++) {
                int ws;
                assert_int_equal(waitpid(w[i], &ws, 0), w[i]);
                if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
                        CHAOS_FAIL("cycle %u: submitter %u (pid %d) %s %d", c, i, (int)w[i],
                                   WIFEXITED(ws) ? "exited" : "was killed by signal",
                                   WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws));
                read_worker(files[i]);
        }
        kd_sleep_ms(rand_r(r) % 300); /* tasks end while kerfd is down */
        start_incarnation(false);
        check_store();
}

/* Marker files: runs per task, and the times of the latest run of each. */
static void read_runs(void)
{
        DIR *d = opendir(rundir);
        struct dirent *de;
        assert_non_null(d);
        while ((de = readdir(d))) {
                unsigned long long id;
                int pid;
                char path[384], *txt;
                int64_t s = 0, e = 0, b = 0;
                long long v, ticks;
                sub *su;
                if (sscanf(de->d_name, "run.%llu.%d", &id, &pid) != 2)
                        continue;
                n_ran++;
                snprintf(path, sizeof(path), "%s/%s", rundir, de->d_name);
                txt = kd_read(path);
                for (char *p = txt; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "") {
                        int f = sscanf(p, "s %lld b %lld", &v, &ticks);
                        if (f >= 1)
                                s = v;
                        if (f == 2)
                                b = ticks * 1000 / sysconf(_SC_CLK_TCK);
                        else if (sscanf(p, "e %lld", &v) == 1)
                                e = v;
                }
                free(txt);
                if (!(su = find_id(id)))
                        CHAOS_FAIL("task %llu ran (%s) but no submit of this test has that id", id,
                                   de->d_name);
                su->runs++;
                if (s >= su->last_s) {
                        su->last_s = s;
                        su->last_e = e;
                        su->last_b = b;
                }
        }
        closedir(d);
}

/* task.starting records not followed by a task.start before the next task.starting (or the
 * end): each is a start window a kill went through; U for `id`, S the number of starting. */
static void start_windows(json_t *audit, unsigned long long id, unsigned *U, unsigned *S)
{
        char obj[48];
        bool open = false;
        size_t i;
        json_t *a;
        snprintf(obj, sizeof(obj), "task:%llu", id);
        *U = *S = 0;
        json_array_foreach(audit, i, a)
        {
                const char *o = json_string_value(json_object_get(a, "object"));
                const char *act = json_string_value(json_object_get(a, "action"));
                if (!o || !act || strcmp(o, obj))
                        continue;
                if (!strcmp(act, "task.starting")) {
                        *U += open;
                        (*S)++;
                        open = true;
                } else if (!strcmp(act, "task.start")) {
                        open = false;
                }
        }
        *U += open;
}

static json_t *audit_export(void)
{
        long s;
        char *raw = NULL;
        json_t *arr = json_array();
        json_decref(kd_call(&K, "GET", "/v1/audit/export", NULL, NULL, &s, &raw));
        if (s != 200 || !raw)
                CHAOS_FAIL("audit export -> %ld", s);
        for (char *p = raw, *nl; *p; p = nl + 1) {
                nl = strchr(p, '\n');
                if (!nl)
                        nl = p + strlen(p) - 1;
                json_t *j = json_loadb(p, (size_t)(nl - p + 1), 0, NULL);
                if (j)
                        json_array_append_new(arr, j);
        }
        free(raw);
        return arr;
}

/* Did one kerfd fork the run (b: its process's start, truncated to a clock tick, so never
 * later than the fork) and record its end (ended_ms: kerfd's wall clock)? Then that kerfd
 * reaped its own child and knows its status. A run it did not record (an exit while it was
 * down, or in the moment before its kill) is recorded by the next kerfd, which also records
 * the runs it re-adopted. */
static bool under_one_kerfd(int64_t b, int64_t ended)
{
        if (!b)
                return false;
        for (unsigned k = 0; k < n_inc; k++)
                if (inc_up_b[k] <= b && b < inc_kill_b[k])
                        return inc_up[k] <= ended && ended < inc_kill[k];
        return false;
}

static void check_task(json_t *t, sub *su, int64_t s, int64_t e, int64_t b)
{
        unsigned long long id = su->id;
        const char *st = json_string_value(json_object_get(t, "state"));
        json_t *ec = json_object_get(t, "exit_code"), *sg = json_object_get(t, "signal");

        if (!st || !json_integer_value(json_object_get(t, "ended_ms")))
                CHAOS_FAIL("task %llu (%s) did not end: %s", id, su->name, st);
        if (!strcmp(st, "cancelled")) {
                if (!su->cancel)
                        CHAOS_FAIL("task %llu cancelled, but no cancel was sent", id);
                return;
        }
        if (su->cancel) /* a cancel may have won the race with the exit */
                return;
        if (!su->runs)
                CHAOS_FAIL("task %llu (%s) ended %s without running", id, su->name, st);
        if (!strict_exit &&
            !under_one_kerfd(b, json_integer_value(json_object_get(t, "ended_ms")))) {
                n_exit_skipped++;
                return;
        }
        n_exit_checked++;
        if (id % 13 == 5) {
                if (strcmp(st, "failed") || json_integer_value(sg) != SIGKILL)
                        CHAOS_FAIL("task %llu SIGKILLed itself: recorded %s, signal %lld, exit "
                                   "%lld (run %lld..%lld)",
                                   id, st, json_integer_value(sg), json_integer_value(ec),
                                   (long long)s, (long long)e);
        } else {
                long long want = (long long)(id % 7);
                if (strcmp(st, want ? "failed" : "succeeded") || !json_is_integer(ec) ||
                    json_integer_value(ec) != want)
                        CHAOS_FAIL("task %llu exited %lld: recorded %s, exit %s%lld, signal %lld "
                                   "(run %lld..%lld)",
                                   id, want, st, json_is_integer(ec) ? "" : "null/",
                                   json_integer_value(ec), json_integer_value(sg), (long long)s,
                                   (long long)e);
        }
}

/* Waits (bounded) until no stored task is live; cancels the stragglers after a while. */
static void drain(void)
{
        for (unsigned waited = 0;; waited += 250) {
                json_t *all = all_tasks(), *t;
                size_t i, live = 0;
                json_array_foreach(all, i, t) live +=
                    json_integer_value(json_object_get(t, "ended_ms")) == 0;
                json_decref(all);
                if (!live)
                        return;
                if (waited > 120000)
                        CHAOS_FAIL("%zu tasks still live 120 s after the last cycle", live);
                kd_sleep_ms(250);
        }
}

static void test_chaos(void **state)
{
        unsigned r = seed;
        json_t *all, *audit;
        unsigned n_acked = 0;
        int64_t t0 = now_ms();
        (void)state;

        n_slots = (size_t)cycles * WORKERS * PER_WORKER;
        id_cap = n_slots + 64;
        subs = calloc(n_slots, sizeof(*subs));
        by_id = calloc(id_cap, sizeof(*by_id));
        assert_true(subs && by_id);
        inc_up = calloc(cycles + 2, sizeof(*inc_up));
        inc_kill = calloc(cycles + 2, sizeof(*inc_kill));
        inc_up_b = calloc(cycles + 2, sizeof(*inc_up_b));
        inc_kill_b = calloc(cycles + 2, sizeof(*inc_kill_b));
        assert_true(inc_up && inc_kill && inc_up_b && inc_kill_b);
        snprintf(rundir, sizeof(rundir), "/tmp/kerf-chaos-XXXXXX");
        assert_non_null(mkdtemp(rundir));
        chmod(rundir, 0777); /* tasks may run as a tenant's own uid */
        start_incarnation(true);
        for (unsigned c = 0; c < cycles; c++)
                one_cycle(c, &r);
        drain();
        check_store();

        /* runs: at most one per task, except inside the start window */
        audit = audit_export();
        read_runs();
        all = all_tasks();
        for (size_t k = 0; k < n_slots; k++) {
                sub *su = &subs[k];
                unsigned U, S;
                json_t *t;
                if (!su->id)
                        continue;
                n_acked++;
                start_windows(audit, su->id, &U, &S);
                if (su->runs > 1) {
                        n_double++;
                        if (su->runs > S || su->runs > 1 + U)
                                CHAOS_FAIL("task %llu ran %u times: %u task.starting records, %u "
                                           "of them not followed by task.start",
                                           su->id, su->runs, S, U);
                }
                t = task_of(all, su->id);
                if (!t)
                        CHAOS_FAIL("task %llu (%s) not stored at the end", su->id, su->name);
                check_task(t, su, su->last_s, su->last_e, su->last_b);
        }
        json_decref(all);
        json_decref(audit);
        printf("chaos: seed %u, %u cycles (%u kills) in %.1f s: %zu submits, %u acknowledged "
               "(all found), %u unanswered (%u of them stored, none twice), %u refused, %u "
               "cancels sent, %u runs, %u tasks ran twice (inside the start window), exit codes "
               "checked %u, not checked %u (%s)\n",
               seed, cycles, cycles, (double)(now_ms() - t0) / 1000.0, n_subs,
               n_acked - n_unacked_found, n_unanswered, n_unacked_found, n_refused, n_cancels,
               n_ran, n_double, n_exit_checked, n_exit_skipped,
               strict_exit ? "strict" : "ended while kerfd was down: KERF_CHAOS_STRICT_EXIT=1");
        kd_stop(&K);
        kd_cleanup(&K);
        if (!getenv("KERF_IT_KEEP")) {
                char cmd[128];
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", rundir);
                if (system(cmd) != 0)
                        fprintf(stderr, "could not remove %s\n", rundir);
        }
        free(subs);
        free(by_id);
        free(inc_up);
        free(inc_kill);
        free(inc_up_b);
        free(inc_kill_b);
}

int main(int argc, char **argv)
{
        const char *e;
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_chaos)};

        seed = (unsigned)time(NULL) ^ (unsigned)getpid();
        if ((e = getenv("KERF_CHAOS_SEED")) && *e)
                seed = (unsigned)strtoul(e, NULL, 0);
        if ((e = getenv("KERF_CHAOS_CYCLES")) && *e)
                cycles = (unsigned)strtoul(e, NULL, 0);
        for (int i = 1; i + 1 < argc; i += 2) {
                if (!strcmp(argv[i], "--seed"))
                        seed = (unsigned)strtoul(argv[i + 1], NULL, 0);
                else if (!strcmp(argv[i], "--cycles"))
                        cycles = (unsigned)strtoul(argv[i + 1], NULL, 0);
        }
        if (!cycles || cycles > MAX_CYCLES) {
                fprintf(stderr, "usage: %s [--cycles 1..%u] [--seed S]\n", argv[0], MAX_CYCLES);
                return 2;
        }
#ifdef KERF_CHAOS_STRICT_EXIT
        strict_exit = true;
#endif
        if ((e = getenv("KERF_CHAOS_STRICT_EXIT")) && *e == '1')
                strict_exit = true;
        printf("chaos: seed %u, %u cycles, exit codes %s (replay: --seed %u --cycles %u)\n", seed,
               cycles, strict_exit ? "strict" : "of tasks that ended while kerfd was up", seed,
               cycles);
        fflush(stdout);
        return cmocka_run_group_tests(tests, NULL, NULL);
}
