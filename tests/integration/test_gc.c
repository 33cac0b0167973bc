/* SPDX-License-Identifier: Apache-2.0 */
/* test_gc.c - retention (docs/DAEMON.md "Retention") against a throwaway kerfd: an ended
 * task's logs and work dir removed, a running task's untouched, a symlink's target outside the
 * state dir kept, dry runs that change nothing and report what the pass then does, 410 on the
 * logs of a collected task (API and kerf logs), logs capped at max_log_bytes, old task rows
 * deleted while the audit chain verifies and the cost runs stay, the ticker's own passes, a
 * half-done deletion finished after a kill -9, bad config values refused naming the key, and
 * 403 for a tenant on both routes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* retention ages of 1 s; no timed pass (interval 0): the tests run passes by POST /v1/gc */
static const char quick[] = "retention:\n  logs_after: 1s\n  work_dirs_after: 1s\n"
                            "  interval: 0\n";

static bool exists(const char *path)
{
        struct stat sb;
        return lstat(path, &sb) == 0;
}

static json_t *gc(kd *k, const char *method, const char *body, long want)
{
        long s;
        char *raw = NULL;
        json_t *j = kd_call(k, method, "/v1/gc", body, NULL, &s, &raw);
        if (s != want || !j)
                fail_msg("%s /v1/gc %s: HTTP %ld, want %ld: %s", method, body ? body : "", s, want,
                         raw ? raw : "");
        free(raw);
        return j;
}

static long long count(json_t *j, const char *cat)
{
        return json_integer_value(json_object_get(json_object_get(j, cat), "count"));
}

static long long bytes(json_t *j, const char *cat)
{
        return json_integer_value(json_object_get(json_object_get(j, cat), "bytes"));
}

/* kerf ARGS against k; its exit status, stdout+stderr in out */
static int kerf(kd *k, const char *args, char *out, size_t cap)
{
        char cmd[1024];
        size_t n;
        FILE *p;
        int st;
        snprintf(cmd, sizeof(cmd), "'%s' --socket '%s' %s 2>&1", KERF_CLI, k->sock, args);
        p = popen(cmd, "r");
        assert_non_null(p);
        n = fread(out, 1, cap - 1, p);
        out[n] = 0;
        st = pclose(p);
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static unsigned long long ended_task(kd *k, const char *script)
{
        char body[1024];
        unsigned long long id;
        json_t *t;
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"command\":[\"/bin/sh\",\"-c\",\"%s\"]}", script);
        id = kd_submit(k, body, NULL);
        t = kd_wait_task(k, id, "succeeded", 15000);
        if (!t)
                fail_msg("task %llu did not succeed", id);
        json_decref(t);
        return id;
}

static void test_collect(void **st)
{
        kd K;
        char target[300], p[1024], out[4096];
        unsigned long long a, b;
        json_t *d1, *d2, *real, *t;
        long s;
        char *raw = NULL;
        int fd;
        (void)st;

        kd_setup(&K, quick);
        /* a file outside the state dir that the task links to: it must survive the pass */
        snprintf(target, sizeof(target), "%s/outside", K.dir);
        fd = open(target, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, "keep\n", 5), 5);
        close(fd);
        snprintf(p, sizeof(p),
                 "echo out; echo err >&2; mkdir -p d/e; echo data > d/e/f; ln -s %s lnk; "
                 "ln -s /etc etc; ln -s %s dlnk",
                 target, K.dir);
        a = ended_task(&K, p);
        b = kd_submit(&K,
                      "{\"tenant\":\"alice\",\"command\":[\"/bin/sh\",\"-c\",\"echo run; mkdir -p "
                      "x; sleep 60\"]}",
                      NULL);
        t = kd_wait_task(&K, b, "running", 10000);
        assert_non_null(t);
        json_decref(t);
        kd_sleep_ms(1500);

        /* dry runs: GET and POST {"dry_run": true} say the same and remove nothing */
        d1 = gc(&K, "GET", NULL, 200);
        d2 = gc(&K, "POST", "{\"dry_run\": true}", 200);
        assert_true(json_is_true(json_object_get(d1, "dry_run")));
        assert_int_equal(count(d1, "logs"), 1);
        assert_int_equal(count(d1, "work_dirs"), 1);
        assert_true(bytes(d1, "logs") >= 8);      /* "out\n" + "err\n" */
        assert_true(bytes(d1, "work_dirs") >= 5); /* d/e/f, links not counted */
        assert_int_equal(count(d2, "logs"), count(d1, "logs"));
        assert_int_equal(bytes(d2, "work_dirs"), bytes(d1, "work_dirs"));
        snprintf(p, sizeof(p), "%s/state/logs/%llu.out", K.dir, a);
        assert_true(exists(p));
        snprintf(p, sizeof(p), "%s/state/work/%llu/d/e/f", K.dir, a);
        assert_true(exists(p));

        /* the pass: removes what the dry run said, nothing else */
        real = gc(&K, "POST", NULL, 200);
        assert_false(json_is_true(json_object_get(real, "dry_run")));
        assert_int_equal(count(real, "logs"), count(d1, "logs"));
        assert_int_equal(bytes(real, "logs"), bytes(d1, "logs"));
        assert_int_equal(count(real, "work_dirs"), count(d1, "work_dirs"));
        assert_int_equal(bytes(real, "work_dirs"), bytes(d1, "work_dirs"));
        assert_int_equal(json_integer_value(json_object_get(real, "errors")), 0);
        snprintf(p, sizeof(p), "%s/state/logs/%llu.out", K.dir, a);
        assert_false(exists(p));
        snprintf(p, sizeof(p), "%s/state/logs/%llu.err", K.dir, a);
        assert_false(exists(p));
        snprintf(p, sizeof(p), "%s/state/work/%llu", K.dir, a);
        assert_false(exists(p));
        assert_true(exists(target)); /* the link went, its target stays */
        assert_true(exists("/etc/passwd"));
        assert_true(exists(K.cfg));
        /* the running task's files are untouched */
        snprintf(p, sizeof(p), "%s/state/logs/%llu.out", K.dir, b);
        assert_true(exists(p));
        snprintf(p, sizeof(p), "%s/state/work/%llu/x", K.dir, b);
        assert_true(exists(p));
        json_decref(d1);
        json_decref(d2);
        json_decref(real);

        /* a second pass finds nothing */
        real = gc(&K, "POST", NULL, 200);
        assert_int_equal(count(real, "logs"), 0);
        assert_int_equal(count(real, "work_dirs"), 0);
        json_decref(real);

        /* 410 with the date and the setting, through the API and kerf logs */
        snprintf(p, sizeof(p), "/v1/tasks/%llu/logs", a);
        t = kd_call(&K, "GET", p, NULL, NULL, &s, &raw);
        assert_int_equal(s, 410);
        assert_string_equal(json_string_value(json_object_get(t, "error")), "gone");
        snprintf(p, sizeof(p), "logs of task %llu were removed by retention on ", a);
        if (!strstr(json_string_value(json_object_get(t, "message")), p) ||
            !strstr(raw, "(retention.logs_after: 1s)"))
                fail_msg("410 message: %s", raw);
        json_decref(t);
        free(raw);
        snprintf(p, sizeof(p), "logs %llu", a);
        assert_int_not_equal(kerf(&K, p, out, sizeof(out)), 0);
        if (!strstr(out, "were removed by retention on"))
                fail_msg("kerf logs: %s", out);
        /* the running task's logs still read */
        snprintf(p, sizeof(p), "/v1/tasks/%llu/logs", b);
        t = kd_call(&K, "GET", p, NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        json_decref(t);

        /* one node.gc audit record and a gc event per pass that removed something */
        t = kd_event(&K, "gc", "removed logs of 1 tasks");
        assert_non_null(t);
        json_decref(t);
        t = kd_call(&K, "GET", "/v1/audit?limit=1000", NULL, NULL, &s, &raw);
        assert_int_equal(s, 200);
        assert_non_null(strstr(raw, "\"node.gc\""));
        json_decref(t);
        free(raw);

        /* kerf gc */
        assert_int_equal(kerf(&K, "gc --dry-run", out, sizeof(out)), 0);
        if (!strstr(out, "logs (would remove)") || !strstr(out, "logs_after 1s"))
                fail_msg("kerf gc --dry-run: %s", out);
        assert_int_equal(kerf(&K, "gc --json", out, sizeof(out)), 0);
        if (!strstr(out, "\"work_dirs\""))
                fail_msg("kerf gc --json: %s", out);
        assert_int_equal(kerf(&K, "gc --bogus", out, sizeof(out)), 2);

        /* GET /v1/config shows the settings in force */
        t = kd_call(&K, "GET", "/v1/config", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(t, "retention"), "logs_after")),
            "1s");
        assert_int_equal(
            json_integer_value(json_object_get(json_object_get(t, "retention"), "max_log_bytes")),
            1073741824);
        json_decref(t);

        /* a tenant may do neither */
        char *tok = kd_token(&K, "alice");
        t = kd_call(&K, "GET", "/v1/gc", NULL, tok, &s, NULL);
        assert_int_equal(s, 403);
        json_decref(t);
        t = kd_call(&K, "POST", "/v1/gc", "{}", tok, &s, NULL);
        assert_int_equal(s, 403);
        json_decref(t);
        /* bad bodies name the field */
        t = kd_call(&K, "POST", "/v1/gc", "{\"dry_run\": 1}", NULL, &s, &raw);
        assert_int_equal(s, 400);
        assert_non_null(strstr(raw, "dry_run"));
        json_decref(t);
        free(raw);
        t = kd_call(&K, "POST", "/v1/gc", "{\"force\": true}", NULL, &s, &raw);
        assert_int_equal(s, 400);
        assert_non_null(strstr(raw, "force"));
        json_decref(t);
        free(raw);

        snprintf(p, sizeof(p), "/v1/tasks/%llu/cancel", b);
        json_decref(kd_call(&K, "POST", p, NULL, NULL, &s, NULL));
        kd_stop(&K);
        kd_cleanup(&K);
}

/* A pass killed half way (simulated: half of the files removed by hand, then kill -9): the
 * restarted kerfd finishes the work dir and records the logs as removed. */
static void test_partial_then_crash(void **st)
{
        kd K;
        char p[512];
        unsigned long long a;
        json_t *j, *t;
        long s;
        (void)st;

        kd_setup(&K, quick);
        a = ended_task(&K, "echo out; mkdir -p d1 d2; echo 1 > d1/f; echo 2 > d2/f; echo 3 > g");
        snprintf(p, sizeof(p), "%s/state/logs/%llu.out", K.dir, a);
        assert_int_equal(unlink(p), 0);
        snprintf(p, sizeof(p), "%s/state/work/%llu/d1/f", K.dir, a);
        assert_int_equal(unlink(p), 0);
        snprintf(p, sizeof(p), "%s/state/work/%llu/d1", K.dir, a);
        assert_int_equal(rmdir(p), 0);
        kd_kill9(&K);
        kd_start(&K);
        kd_sleep_ms(1200);
        j = gc(&K, "POST", NULL, 200);
        assert_int_equal(json_integer_value(json_object_get(j, "errors")), 0);
        assert_int_equal(count(j, "work_dirs"), 1);
        json_decref(j);
        snprintf(p, sizeof(p), "%s/state/work/%llu", K.dir, a);
        assert_false(exists(p));
        snprintf(p, sizeof(p), "%s/state/logs/%llu.err", K.dir, a);
        assert_false(exists(p));
        snprintf(p, sizeof(p), "/v1/tasks/%llu/logs", a);
        t = kd_call(&K, "GET", p, NULL, NULL, &s, NULL);
        assert_int_equal(s, 410);
        json_decref(t);
        /* and the record stays true across another restart */
        kd_kill9(&K);
        kd_start(&K);
        t = kd_call(&K, "GET", p, NULL, NULL, &s, NULL);
        assert_int_equal(s, 410);
        json_decref(t);
        j = gc(&K, "POST", NULL, 200);
        assert_int_equal(count(j, "logs") + count(j, "work_dirs"), 0);
        json_decref(j);
        kd_stop(&K);
        kd_cleanup(&K);
}

/* A real kill -9 in the middle of a timed pass (the test hook KERFD_TEST_GC_STALL_MS makes the
 * pass wait after each task): the restarted kerfd finishes the work and every record is true. */
static void test_kill_mid_pass(void **st)
{
        kd K;
        char p[512];
        unsigned long long id[3];
        json_t *j, *t;
        long s;
        int gone = 0;
        (void)st;

        kd_setup(&K, "retention:\n  logs_after: 0\n  work_dirs_after: 0\n  interval: 0\n");
        for (int i = 0; i < 3; i++)
                id[i] = ended_task(&K, "echo hi; mkdir -p a/b; echo x > a/b/f");
        kd_stop(&K);
        /* restart with short ages, timed passes and the stall */
        /* the retention block is the config's last (kd_setup appends `extra`) */
        char *cfg = kd_read(K.cfg);
        FILE *f;
        assert_non_null(cfg);
        char *r = strstr(cfg, "retention:");
        assert_non_null(r);
        *r = 0;
        f = fopen(K.cfg, "w");
        assert_non_null(f);
        fprintf(f, "%sretention:\n  logs_after: 1s\n  work_dirs_after: 1s\n  interval: 1s\n", cfg);
        fclose(f);
        free(cfg);
        setenv("KERFD_TEST_GC_STALL_MS", "5000", 1);
        kd_start(&K);
        unsetenv("KERFD_TEST_GC_STALL_MS");
        /* wait for the first task's files to go, then kill kerfd while the pass stalls */
        snprintf(p, sizeof(p), "%s/state/work/%llu", K.dir, id[0]);
        for (int i = 0; i < 100 && exists(p); i++)
                kd_sleep_ms(100);
        assert_false(exists(p));
        /* one pass at a time: the admin's waits for the ticker's (409) */
        j = gc(&K, "GET", NULL, 409);
        json_decref(j);
        j = gc(&K, "POST", NULL, 409);
        json_decref(j);
        kd_kill9(&K);
        for (int i = 0; i < 3; i++) {
                snprintf(p, sizeof(p), "%s/state/work/%llu", K.dir, id[i]);
                gone += !exists(p);
        }
        assert_true(gone < 3); /* killed in the middle */
        kd_start(&K);
        j = gc(&K, "POST", NULL, 200);
        assert_int_equal(json_integer_value(json_object_get(j, "errors")), 0);
        json_decref(j);
        for (int i = 0; i < 3; i++) {
                snprintf(p, sizeof(p), "%s/state/work/%llu", K.dir, id[i]);
                assert_false(exists(p));
                snprintf(p, sizeof(p), "%s/state/logs/%llu.out", K.dir, id[i]);
                assert_false(exists(p));
                snprintf(p, sizeof(p), "/v1/tasks/%llu/logs", id[i]);
                t = kd_call(&K, "GET", p, NULL, NULL, &s, NULL);
                assert_int_equal(s, 410);
                json_decref(t);
        }
        t = kd_call(&K, "POST", "/v1/audit/verify", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_true(json_is_true(json_object_get(t, "ok")));
        json_decref(t);
        kd_stop(&K);
        kd_cleanup(&K);
}

/* Logs over max_log_bytes are cut to it, with a marker line, once the task has ended. */
static void test_cap(void **st)
{
        kd K;
        char p[512];
        unsigned long long a;
        struct stat sb;
        json_t *j;
        char *text;
        (void)st;

        kd_setup(&K, "retention:\n  logs_after: 0\n  work_dirs_after: 0\n"
                     "  max_log_bytes: 4KiB\n  interval: 0\n");
        /* written in a few writes: no cut while it runs (logcap.c) comes in between */
        a = ended_task(&K, "yes 0123456789 | head -n 1000");
        j = gc(&K, "GET", NULL, 200);
        assert_int_equal(count(j, "logs_capped"), 1);
        assert_int_equal(bytes(j, "logs_capped"), 11000 - 4096);
        assert_int_equal(count(j, "logs"), 0);
        json_decref(j);
        snprintf(p, sizeof(p), "%s/state/logs/%llu.out", K.dir, a);
        assert_int_equal(stat(p, &sb), 0);
        assert_int_equal(sb.st_size, 11000);
        j = gc(&K, "POST", NULL, 200);
        assert_int_equal(count(j, "logs_capped"), 1);
        json_decref(j);
        assert_int_equal(stat(p, &sb), 0);
        assert_int_equal(sb.st_size, 4096);
        text = kd_read(p);
        assert_non_null(text);
        assert_non_null(strstr(text, "[kerf: log cut here by retention.max_log_bytes (4096"));
        assert_true(strncmp(text, "0123456789\n", 11) == 0);
        free(text);
        /* checked once: the next pass leaves it */
        j = gc(&K, "POST", NULL, 200);
        assert_int_equal(count(j, "logs_capped"), 0);
        json_decref(j);
        kd_stop(&K);
        kd_cleanup(&K);
}

/* A running task's log over max_log_bytes is cut while it runs (logcap.c): the task keeps
 * running, the log stays near the cap, its head, a marker and its latest output are kept, an
 * event records the cut, and kerf logs shows the latest line. */
static void test_cap_running(void **st)
{
        kd K;
        char p[512], out[200000];
        unsigned long long a;
        struct stat sb;
        json_t *t;
        char *text = NULL;
        long long biggest = 0;
        (void)st;

        kd_setup(&K, "retention:\n  logs_after: 0\n  work_dirs_after: 0\n"
                     "  max_log_bytes: 64KiB\n  interval: 0\n");
        /* about 20 KB/s for 6 s (120 KB), then a last line, then it stays */
        a = kd_submit(&K,
                      "{\"tenant\":\"alice\",\"command\":[\"/bin/sh\",\"-c\",\"i=0; while [ $i -lt "
                      "600 ]; do i=$((i+1)); printf 'line %d %0180d\\\\n' $i 0; sleep 0.01; done; "
                      "echo LAST-LINE; sleep 60\"]}",
                      NULL);
        json_decref(kd_wait_task(&K, a, "running", 15000));
        snprintf(p, sizeof(p), "%s/state/logs/%llu.out", K.dir, a);
        for (int i = 0; i < 600; i++) { /* up to 60 s (600 forks of sleep on a loaded box) */
                bool have = stat(p, &sb) == 0;
                if (have && sb.st_size > biggest)
                        biggest = sb.st_size;
                free(text);
                text = kd_read(p);
                /* done when the last line is in and the check after it has cut the log back
                 * under the cap (lines written after an earlier cut may still be over it) */
                if (text && strstr(text, "LAST-LINE") && strstr(text, "[kerf: log cut while") &&
                    have && sb.st_size <= 65536 && strlen(text) <= 65536)
                        break;
                kd_sleep_ms(100);
        }
        assert_non_null(text);
        print_message("largest log size seen: %lld bytes (cap 65536)\n", biggest);
        /* the cap, plus what the task writes between two checks (about 1 s: 20 KB) */
        assert_true(biggest <= 65536 + 40000);
        assert_non_null(strstr(text, "LAST-LINE"));
        assert_true(strncmp(text, "line 1 ", 7) == 0); /* the head is kept */
        assert_non_null(strstr(text, "[kerf: log cut while running by retention.max_log_bytes "
                                     "(65536 bytes); "));
        assert_non_null(strstr(text, "line 600 "));
        free(text);
        t = kd_wait_task(&K, a, "running", 1000); /* it was not killed */
        assert_non_null(t);
        json_decref(t);
        t = kd_event(&K, "log_cut", "its stdout log went over retention.max_log_bytes");
        assert_non_null(t);
        json_decref(t);
        /* kerf logs: the whole log, the latest output last */
        snprintf(p, sizeof(p), "logs %llu", a);
        assert_int_equal(kerf(&K, p, out, sizeof(out)), 0);
        assert_non_null(strstr(out, "[kerf: log cut while running"));
        assert_non_null(strstr(out, "line 600 "));
        assert_non_null(strstr(out, "LAST-LINE\n"));
        assert_true(strlen(out) <= 65536);
        kd_stop(&K);
        kd_cleanup(&K);
}

/* tasks_after: old ended rows go (their files first); runs and the audit chain stay. */
static void test_rows(void **st)
{
        kd K;
        char p[512], *raw = NULL;
        unsigned long long a, b;
        json_t *j, *t;
        long s;
        (void)st;

        kd_setup(&K, "retention:\n  logs_after: 0\n  work_dirs_after: 0\n  tasks_after: 1s\n"
                     "  interval: 0\n");
        a = kd_submit(&K,
                      "{\"tenant\":\"alice\",\"route\":\"whole\",\"command\":"
                      "[\"/bin/sh\",\"-c\",\"echo x\"]}",
                      NULL);
        t = kd_wait_task(&K, a, "succeeded", 15000);
        assert_non_null(t);
        json_decref(t);
        b = kd_submit(&K, "{\"tenant\":\"bob\",\"command\":[\"/bin/sleep\",\"60\"]}", NULL);
        t = kd_wait_task(&K, b, "running", 10000);
        assert_non_null(t);
        json_decref(t);
        kd_sleep_ms(1500);
        j = gc(&K, "GET", NULL, 200);
        assert_int_equal(count(j, "tasks"), 1);
        json_decref(j);
        snprintf(p, sizeof(p), "/v1/tasks/%llu", a);
        t = kd_call(&K, "GET", p, NULL, NULL, &s, NULL);
        assert_int_equal(s, 200); /* the dry run kept it */
        json_decref(t);
        j = gc(&K, "POST", NULL, 200);
        assert_int_equal(count(j, "tasks"), 1);
        assert_int_equal(count(j, "logs"), 1); /* its files went with it */
        json_decref(j);
        t = kd_call(&K, "GET", p, NULL, NULL, &s, NULL);
        assert_int_equal(s, 404);
        json_decref(t);
        snprintf(p, sizeof(p), "%s/state/logs/%llu.out", K.dir, a);
        assert_false(exists(p));
        snprintf(p, sizeof(p), "/v1/tasks/%llu", b);
        t = kd_call(&K, "GET", p, NULL, NULL, &s, NULL);
        assert_int_equal(s, 200); /* not ended: never */
        json_decref(t);
        /* its run (cost) stays */
        t = kd_call(&K, "GET", "/v1/cost/runs?limit=1000", NULL, NULL, &s, &raw);
        assert_int_equal(s, 200);
        snprintf(p, sizeof(p), "\"task\": %llu", a);
        char p2[64];
        snprintf(p2, sizeof(p2), "\"task\":%llu", a);
        if (!strstr(raw, p) && !strstr(raw, p2))
                fail_msg("run of task %llu gone: %s", a, raw);
        json_decref(t);
        free(raw);
        /* the audit chain verifies */
        t = kd_call(&K, "POST", "/v1/audit/verify", NULL, NULL, &s, &raw);
        assert_int_equal(s, 200);
        if (!json_is_true(json_object_get(t, "ok")))
                fail_msg("audit verify: %s", raw);
        json_decref(t);
        free(raw);
        snprintf(p, sizeof(p), "/v1/tasks/%llu/cancel", b);
        json_decref(kd_call(&K, "POST", p, NULL, NULL, &s, NULL));
        kd_stop(&K);
        kd_cleanup(&K);
}

/* A row whose files an earlier pass removed is counted once when its own time comes. */
static void test_rows_after_files(void **st)
{
        kd K;
        unsigned long long a;
        json_t *j;
        (void)st;

        kd_setup(&K, "retention:\n  logs_after: 1s\n  work_dirs_after: 1s\n  tasks_after: 3s\n"
                     "  interval: 0\n");
        a = ended_task(&K, "echo x");
        kd_sleep_ms(1500);
        j = gc(&K, "POST", NULL, 200);
        assert_int_equal(count(j, "logs"), 1);
        assert_int_equal(count(j, "tasks"), 0);
        json_decref(j);
        kd_sleep_ms(2000);
        j = gc(&K, "GET", NULL, 200);
        assert_int_equal(count(j, "tasks"), 1);
        json_decref(j);
        j = gc(&K, "POST", NULL, 200);
        assert_int_equal(count(j, "tasks"), 1);
        assert_int_equal(count(j, "logs"), 0);
        json_decref(j);
        (void)a;
        kd_stop(&K);
        kd_cleanup(&K);
}

/* The ticker runs passes every retention.interval by itself. */
static void test_ticker(void **st)
{
        kd K;
        char p[512];
        unsigned long long a;
        json_t *t;
        long s = 0;
        (void)st;

        kd_setup(&K, "retention:\n  logs_after: 1s\n  work_dirs_after: 1s\n  interval: 1s\n");
        a = ended_task(&K, "echo hi");
        snprintf(p, sizeof(p), "/v1/tasks/%llu/logs", a);
        for (int i = 0; i < 100 && s != 410; i++) {
                kd_sleep_ms(100);
                t = kd_call(&K, "GET", p, NULL, NULL, &s, NULL);
                json_decref(t);
        }
        assert_int_equal(s, 410);
        snprintf(p, sizeof(p), "%s/state/work/%llu", K.dir, a);
        assert_false(exists(p));
        kd_stop(&K);
        kd_cleanup(&K);
}

static const struct bad {
        const char *yaml, *needle;
} bads[] = {
    {"retention:\n  logs_after: 7x\n", ":2: retention.logs_after: '7x' is not a duration"},
    {"retention:\n  work_dirs_after: 36501d\n", ":2: retention.work_dirs_after: 0s..36500d"},
    {"retention:\n  tasks_after: -1d\n", ":2: retention.tasks_after: '-1d' is not a duration"},
    {"retention:\n  interval: 90d\n", ":2: retention.interval: 0s..30d, got \"90d\""},
    {"retention:\n  max_log_bytes: lots\n", ":2: retention.max_log_bytes: 'lots' is not a size"},
    {"retention:\n  max_log_bytes: 100B\n", ":2: retention.max_log_bytes: 0 (no cap) or at least"},
    {"retention:\n  max_log_bytes: 100\n", ":2: retention.max_log_bytes: '100' has no unit"},
    {"retention:\n  keep: 1d\n", ":2: retention: unknown key \"keep\""},
    {"retention:\n  interval: 1h\n  interval: 2h\n", ":3: retention: key \"interval\" given twice"},
    {"retention: 7d\n", ":1: retention: expected a mapping"},
};

static void test_bad_config(void **st)
{
        char path[] = "/tmp/kerf-it-gc-cfg-XXXXXX", cmd[600], out[2048];
        (void)st;
        for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
                int fd = mkstemp(path), ws;
                FILE *pp;
                size_t n;
                assert_true(fd >= 0);
                assert_int_equal(write(fd, bads[i].yaml, strlen(bads[i].yaml)),
                                 (ssize_t)strlen(bads[i].yaml));
                close(fd);
                snprintf(cmd, sizeof(cmd), "'%s' --check-config -c '%s' 2>&1", KERFD_BIN, path);
                pp = popen(cmd, "r");
                assert_non_null(pp);
                n = fread(out, 1, sizeof(out) - 1, pp);
                out[n] = 0;
                ws = pclose(pp);
                if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 1 || !strstr(out, path) ||
                    !strstr(out, bads[i].needle))
                        fail_msg("config:\n%sgot: %s\nwant exit 1 and \"%s\"", bads[i].yaml, out,
                                 bads[i].needle);
                unlink(path);
                memcpy(path + strlen(path) - 6, "XXXXXX", 6);
        }
        /* the forms of the docs are accepted */
        int fd = mkstemp(path), ws;
        const char good[] = "retention:\n  logs_after: 90s\n  work_dirs_after: 15m\n"
                            "  tasks_after: 0\n  interval: 1h\n  max_log_bytes: 1GiB\n";
        assert_true(fd >= 0);
        assert_int_equal(write(fd, good, strlen(good)), (ssize_t)strlen(good));
        close(fd);
        snprintf(cmd, sizeof(cmd), "'%s' --check-config -c '%s' >/dev/null 2>&1", KERFD_BIN, path);
        ws = system(cmd);
        unlink(path);
        assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_bad_config),
            cmocka_unit_test(test_collect),
            cmocka_unit_test(test_partial_then_crash),
            cmocka_unit_test(test_cap),
            cmocka_unit_test(test_cap_running),
            cmocka_unit_test(test_rows),
            cmocka_unit_test(test_ticker),
            cmocka_unit_test(test_kill_mid_pass),
            cmocka_unit_test(test_rows_after_files),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
