/* SPDX-License-Identifier: Apache-2.0 */
/* retention.c - the collector: ended tasks' logs and work dirs removed (or logs capped) after
 * retention's ages, old task rows deleted; GET/POST /v1/gc (docs/DAEMON.md "Retention") */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "http.h"
#include "node.h"
#include "kerf/errno.h"

#define GC_BATCH     1000u  /* rows read per store query */
#define GC_MAX_JOBS  10000u /* tasks handled per pass; the next pass goes on */
#define GC_MAX_DEPTH 64     /* deeper work dirs are left, reported as an error */
#define GC_ROWS_MAX  100000u

/* What one pass does to one task, decided under n->mu; the results come back from the file
 * work done without it. */
typedef struct gc_job {
        uint64_t id;
        int64_t ended_ms;
        bool logs, work, cap, row; /* due: remove logs, remove work dir, cap logs; row due */
        int64_t logs_done, work_done;
        bool capped;
} gc_job;

typedef struct gc_cat {
        unsigned n;
        uint64_t bytes;
        int64_t oldest_ms; /* ended_ms of the oldest task counted, 0 = none */
        uint64_t oldest_task;
} gc_cat;

typedef struct gc_report {
        gc_cat logs, work, capped, tasks;
        unsigned errors;
        char first_error[256];
        bool more; /* the pass stopped at GC_MAX_JOBS */
} gc_report;

/* Under n->mu: one pass at a time (the ticker's or an admin's), and when the ticker's last was */
static bool gc_running;
static uint64_t gc_next_mono; /* the ticker's next pass, 0 = not planned yet */

static void count(gc_cat *c, const gc_job *j, uint64_t bytes)
{
        c->n++;
        c->bytes += bytes;
        if (!c->oldest_ms || j->ended_ms < c->oldest_ms) {
                c->oldest_ms = j->ended_ms;
                c->oldest_task = j->id;
        }
}

static void note(gc_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(gc_report *rep, const char *fmt, ...)
{
        va_list ap;

        if (rep->errors++)
                return;
        va_start(ap, fmt);
        vsnprintf(rep->first_error, sizeof(rep->first_error), fmt, ap);
        va_end(ap);
}

/* Removes (or, dry, measures) `name` in dfd and everything under it, without following a
 * symbolic link (a link is removed, never its target) and without leaving dfd's filesystem
 * (`dev`): a task's work dir is the task's uid's to fill. Regular file sizes go to *bytes.
 * 0 when nothing is left (ENOENT included), < 0 when something was left. */
static int rm_tree(int dfd, const char *name, dev_t dev, bool dry, unsigned depth, uint64_t *bytes,
                   gc_report *rep, uint64_t task)
{
        struct stat sb;
        int fd, r = 0;
        DIR *d;
        struct dirent *e;

        if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISDIR(sb.st_mode)) {
                if (S_ISREG(sb.st_mode))
                        *bytes += (uint64_t)sb.st_size;
                if (!dry && unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
                        return -errno;
                return 0;
        }
        if (sb.st_dev != dev) {
                note(rep, "task %" PRIu64 ": %s is another filesystem's mount point: left", task,
                     name);
                return -EXDEV;
        }
        if (depth >= GC_MAX_DEPTH) {
                note(rep, "task %" PRIu64 ": work dir deeper than %d levels: left", task,
                     GC_MAX_DEPTH);
                return -ELOOP;
        }
        fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                close(fd);
                return r;
        }
        while ((e = readdir(d))) {
                int k;
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                        continue;
                k = rm_tree(fd, e->d_name, dev, dry, depth + 1, bytes, rep, task);
                if (k < 0 && !r)
                        r = k;
        }
        closedir(d);
        if (!r && !dry && unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                r = -errno;
        return r;
}

/* Cuts a log over `max` bytes to its first max - marker bytes and the marker line, in place
 * (ftruncate then pwrite: a crash in between leaves a shorter log without the marker, which the
 * next pass leaves as it is). Bytes cut go to *bytes; 1 when cut, 0 when not needed. */
static int cap_log(int ldir, const char *name, uint64_t max, bool dry, uint64_t *bytes)
{
        char marker[160];
        struct stat sb;
        int fd, r = 0, k;

        fd = openat(ldir, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || (uint64_t)sb.st_size <= max)
                goto out;
        k = snprintf(marker, sizeof(marker),
                     "\n[kerf: log cut here by retention.max_log_bytes (%" PRIu64
                     " bytes); %" PRIu64 " bytes of the end removed]\n",
                     max, (uint64_t)sb.st_size - max);
        *bytes += (uint64_t)sb.st_size - max;
        r = 1;
        if (dry)
                goto out;
        if (ftruncate(fd, (off_t)(max - (uint64_t)k)) < 0 ||
            pwrite(fd, marker, (size_t)k, (off_t)(max - (uint64_t)k)) != k)
                r = -errno;
out:
        close(fd);
        return r;
}

/* Test hook KERFD_TEST_GC_STALL_MS=N (docs/DAEMON.md "Retention"): a pass waits N ms after
 * each task's files, so that a test can kill kerfd in the middle of one. 0 = off. */
static unsigned stall_ms(void)
{
        static bool warned;
        const char *v = getenv("KERFD_TEST_GC_STALL_MS");
        unsigned ms = v ? (unsigned)strtoul(v, NULL, 10) : 0;

        if (ms && !warned) {
                warned = true;
                log_warn("KERFD_TEST_GC_STALL_MS=%u: test hook, retention passes wait after "
                         "each task",
                         ms);
        }
        return ms > 60000 ? 60000 : ms;
}

/* The file work of a pass, n->mu NOT held: only the jobs and the two directory fds. */
static void gc_files(gc_job *jobs, size_t nj, int ldir, int wdir, dev_t wdev, uint64_t max_log,
                     bool dry, int64_t now, gc_report *rep, unsigned stall)
{
        static const char *const ext[2] = {"out", "err"};
        char name[64];

        for (size_t i = 0; i < nj; i++) {
                if (i && stall) {
                        struct timespec ts = {stall / 1000, (long)(stall % 1000) * 1000000L};
                        nanosleep(&ts, NULL);
                }
                gc_job *j = &jobs[i];
                uint64_t bytes = 0;
                bool found = false, ok = true;

                if (j->logs) {
                        for (int s = 0; s < 2; s++) {
                                struct stat sb;
                                snprintf(name, sizeof(name), "%" PRIu64 ".%s", j->id, ext[s]);
                                if (ldir < 0 || fstatat(ldir, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
                                        continue;
                                found = true;
                                if (S_ISREG(sb.st_mode))
                                        bytes += (uint64_t)sb.st_size;
                                if (!dry && unlinkat(ldir, name, 0) < 0 && errno != ENOENT) {
                                        note(rep, "task %" PRIu64 ": log %s: %s", j->id, name,
                                             strerror(errno));
                                        ok = false;
                                }
                        }
                        if (found)
                                count(&rep->logs, j, bytes);
                        if (ok) {
                                j->logs_done = now;
                                j->capped = true; /* nothing left to cap */
                        }
                } else if (j->cap) {
                        unsigned cut = 0;
                        for (int s = 0; s < 2; s++) {
                                int k;
                                snprintf(name, sizeof(name), "%" PRIu64 ".%s", j->id, ext[s]);
                                k = ldir < 0 ? 0 : cap_log(ldir, name, max_log, dry, &bytes);
                                if (k < 0) {
                                        note(rep, "task %" PRIu64 ": capping log %s: %s", j->id,
                                             name, strerror(-k));
                                        ok = false;
                                } else {
                                        cut += (unsigned)k;
                                }
                        }
                        if (cut)
                                count(&rep->capped, j, bytes);
                        j->capped = ok;
                }
                if (j->work) {
                        struct stat sb;
                        int k = 0;
                        bytes = 0;
                        snprintf(name, sizeof(name), "%" PRIu64, j->id);
                        found = wdir >= 0 && fstatat(wdir, name, &sb, AT_SYMLINK_NOFOLLOW) == 0;
                        if (found)
                                k = rm_tree(wdir, name, wdev, dry, 0, &bytes, rep, j->id);
                        if (k < 0 && k != -EXDEV && k != -ELOOP)
                                note(rep,
                                     "task %" PRIu64 ": work dir: %s (finished by a later "
                                     "pass)",
                                     j->id, strerror(-k));
                        if (found)
                                count(&rep->work, j, bytes);
                        if (k == 0)
                                j->work_done = now;
                }
        }
}

typedef struct gc_write {
        const gc_job *jobs;
        size_t nj;
        int64_t rows_before; /* 0 = no row is due */
        gc_report *rep;
        bool record; /* the audit record and event even when nothing was removed */
        const char *actor;
        char *reason; /* the summary, written here once the rows deleted are known */
        size_t reason_len;
} gc_write;

static void summary(const gc_report *rep, bool dry, char *buf, size_t len);

/* One transaction: what was removed, the rows deleted, the audit record and the event. */
static int gc_commit(kerf_store *s, void *ud)
{
        gc_write *w = ud;
        kerf_store_audit a;
        kerf_store_event e;
        int r;

        for (size_t i = 0; i < w->nj; i++) {
                const gc_job *j = &w->jobs[i];
                if (!j->logs_done && !j->work_done && !j->capped)
                        continue;
                r = kerf_store_gc_mark(s, j->id, j->logs_done, j->work_done, j->capped);
                if (r < 0 && r != -ENOENT)
                        return r;
        }
        if (w->rows_before) {
                int64_t oldest = 0;
                r = kerf_store_gc_tasks(s, w->rows_before, GC_ROWS_MAX, false, &w->rep->tasks.n,
                                        &oldest);
                if (r < 0)
                        return r;
                w->rep->tasks.oldest_ms = oldest;
        }
        summary(w->rep, false, w->reason, w->reason_len);
        if (!w->record && !w->rep->logs.n && !w->rep->work.n && !w->rep->capped.n &&
            !w->rep->tasks.n)
                return 0;
        memset(&a, 0, sizeof(a));
        snprintf(a.actor, sizeof(a.actor), "%s", w->actor);
        snprintf(a.action, sizeof(a.action), "node.gc");
        snprintf(a.object, sizeof(a.object), "node");
        snprintf(a.result, sizeof(a.result), "%s", w->rep->errors ? "partial" : "ok");
        snprintf(a.reason, sizeof(a.reason), "%s", w->reason);
        if ((r = kerf_store_audit_append(s, &a)) < 0)
                return r;
        memset(&e, 0, sizeof(e));
        snprintf(e.kind, sizeof(e.kind), "gc");
        snprintf(e.class, sizeof(e.class), "node");
        e.gpu = -1;
        snprintf(e.text, sizeof(e.text), "%s", w->reason);
        return kerf_store_event_append(s, &e);
}

static void summary(const gc_report *rep, bool dry, char *buf, size_t len)
{
        snprintf(buf, len,
                 "%slogs of %u tasks (%" PRIu64 " bytes), %u work dirs (%" PRIu64
                 " bytes), %u logs capped (%" PRIu64 " bytes cut), %u task rows deleted%s%s",
                 dry ? "would remove: " : "removed ", rep->logs.n, rep->logs.bytes, rep->work.n,
                 rep->work.bytes, rep->capped.n, rep->capped.bytes, rep->tasks.n,
                 rep->errors ? "; first problem: " : "", rep->errors ? rep->first_error : "");
}

static int64_t cutoff(int64_t now, uint64_t age_s)
{
        return age_s ? now - (int64_t)(age_s * 1000) : 0;
}

/* Whether the pass changed anything the store must know: files due and now gone, logs cut.
 * A log found under the cap alone is not worth a write. */
static bool write_due(const gc_job *jobs, size_t nj, const gc_report *rep)
{
        if (rep->capped.n)
                return true;
        for (size_t i = 0; i < nj; i++)
                if (jobs[i].logs_done || jobs[i].work_done)
                        return true;
        return false;
}

/* The log dir (logs) or the work dir's parent cannot be opened for another reason than being
 * missing: this pass does nothing about them (nothing would be known to be removed). */
static void no_dir(gc_report *rep, gc_job *jobs, size_t nj, bool logs, const char *path)
{
        note(rep, "%s: %s: left for the next pass", path, strerror(errno));
        for (size_t i = 0; i < nj; i++) {
                if (logs)
                        jobs[i].logs = jobs[i].cap = false;
                else
                        jobs[i].work = false;
        }
}

/* One pass. Called with n->mu held; releases it for the file work and takes it again before it
 * returns. -EBUSY while another pass runs; -EAGAIN (not dry) while the store cannot write (an
 * audit record would overtake the waiting ones; the files wait too). */
static int gc_pass(kerfd_node *n, bool dry, const char *actor, gc_report *rep)
{
        const kerfd_retention_cfg *c = &n->cfg.retention;
        int64_t now = (int64_t)kerfd_now_ms();
        int64_t logs_cut = cutoff(now, c->logs_after_s),
                work_cut = cutoff(now, c->work_dirs_after_s),
                rows_cut = cutoff(now, c->tasks_after_s);
        char path[4500], reason[KERF_TEXT_LEN];
        gc_job *jobs;
        size_t nj = 0;
        uint64_t after = 0, max_log = c->max_log_bytes;
        int ldir, wdir, r = 0;
        unsigned rows_pending = 0, stall;
        struct stat wsb = {0};

        memset(rep, 0, sizeof(*rep));
        if (gc_running)
                return -EBUSY;
        if (!dry && !kerfd__store_ok(n))
                return -EAGAIN;
        jobs = calloc(GC_MAX_JOBS, sizeof(*jobs));
        if (!jobs)
                return -ENOMEM;
        gc_running = true; /* from here on n->mu may be given up: no second pass meanwhile */
        for (;;) {
                kerf_store_gc_item *it;
                size_t k;
                if (after) { /* between batches, let the requests and the ticker in */
                        pthread_mutex_unlock(&n->mu);
                        sched_yield();
                        pthread_mutex_lock(&n->mu);
                }
                if ((r = kerf_store_gc_items(n->store, after, GC_BATCH, &it, &k)) < 0)
                        goto out;
                for (size_t i = 0; i < k && nj < GC_MAX_JOBS; i++) {
                        gc_job *j = &jobs[nj];
                        after = it[i].id;
                        /* an end still in the outbox, or a task live again: not ours */
                        if (kerfd__live(n, it[i].id) || kerfd__records_pending(n, it[i].id))
                                continue;
                        memset(j, 0, sizeof(*j));
                        j->id = it[i].id;
                        j->ended_ms = it[i].ended_ms;
                        j->row = rows_cut && it[i].ended_ms <= rows_cut;
                        /* a row due takes its files with it: no file outlives its record */
                        j->logs = !it[i].logs_gone_ms &&
                                  (j->row || (logs_cut && it[i].ended_ms <= logs_cut));
                        j->work = !it[i].work_gone_ms &&
                                  (j->row || (work_cut && it[i].ended_ms <= work_cut));
                        j->cap = !j->logs && !it[i].logs_capped && !it[i].logs_gone_ms && max_log;
                        if (j->row && (j->logs || j->work)) /* files first, then the row */
                                rows_pending++;
                        if (j->logs || j->work || j->cap)
                                nj++;
                }
                kerf_store_gc_items_free(it, k);
                if (k < GC_BATCH)
                        break;
                if (nj >= GC_MAX_JOBS) {
                        rep->more = true;
                        break;
                }
        }
        snprintf(path, sizeof(path), "%s", n->log_dir);
        ldir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (ldir < 0 && errno != ENOENT) /* a missing dir holds no logs; else nothing is known */
                no_dir(rep, jobs, nj, true, path);
        snprintf(path, sizeof(path), "%s/work", n->cfg.state_dir);
        wdir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (wdir >= 0 && fstat(wdir, &wsb) < 0) {
                close(wdir);
                wdir = -1;
        }
        if (wdir < 0 && errno != ENOENT)
                no_dir(rep, jobs, nj, false, path);
        stall = dry ? 0 : stall_ms();
        pthread_mutex_unlock(&n->mu);
        gc_files(jobs, nj, ldir, wdir, wsb.st_dev, max_log, dry, now, rep, stall);
        pthread_mutex_lock(&n->mu);
        if (ldir >= 0)
                close(ldir);
        if (wdir >= 0)
                close(wdir);
        if (!dry && !kerfd__store_ok(n)) {
                /* the store stopped writing meanwhile: a record now would overtake the waiting
                 * ones. What was removed is recorded by the next pass (as after a crash). */
                log_warn("retention: the store cannot write; what this pass removed is recorded "
                         "by the next one");
                r = -EAGAIN;
                goto out;
        }
        if (dry) {
                /* rows whose files are gone already, and those this pass would clear */
                unsigned gone = 0;
                int64_t oldest = 0;
                if (rows_cut && (r = kerf_store_gc_tasks(n->store, rows_cut, GC_ROWS_MAX, true,
                                                         &gone, &oldest)) < 0)
                        goto out;
                rep->tasks.n = gone + rows_pending;
                rep->tasks.oldest_ms = oldest;
                for (size_t i = 0; i < nj; i++)
                        if (jobs[i].row &&
                            (!rep->tasks.oldest_ms || jobs[i].ended_ms < rep->tasks.oldest_ms))
                                rep->tasks.oldest_ms = jobs[i].ended_ms;
                r = 0;
                goto out;
        }
        if (!write_due(jobs, nj, rep) && !rows_cut && !strcmp(actor, "kerfd")) {
                r = 0; /* an idle timed pass writes nothing (logs under the cap: checked again) */
                goto out;
        }
        {
                gc_write w = {.jobs = jobs,
                              .nj = nj,
                              .rows_before = rows_cut,
                              .rep = rep,
                              .record = strcmp(actor, "kerfd") != 0,
                              .actor = actor,
                              .reason = reason,
                              .reason_len = sizeof(reason)};
                reason[0] = 0;
                r = kerf_store_tx(n->store, gc_commit, &w);
                if (r < 0)
                        log_warn("retention: recording the pass failed (%s); the next pass "
                                 "records what is gone",
                                 kerf_strerror(r));
                else if (rep->logs.n || rep->work.n || rep->capped.n || rep->tasks.n || rep->errors)
                        log_info("retention: %s", reason);
        }
out:
        gc_running = false;
        free(jobs);
        return r;
}

/* From the ticker, n->mu held (released during the file work): a pass every
 * retention.interval, the first a few seconds after the start. */
void kerfd__retention_tick(kerfd_node *n)
{
        gc_report rep;
        uint64_t mono = kerfd_mono_ms(), every = n->cfg.retention.interval_s * 1000;
        int r;

        if (!every || gc_running)
                return;
        if (!gc_next_mono)
                gc_next_mono = mono + (every < 5000 ? every : 5000);
        if (mono < gc_next_mono)
                return;
        gc_next_mono = mono + every;
        r = gc_pass(n, false, "kerfd", &rep);
        if (r == 0 && rep.more)
                gc_next_mono = kerfd_mono_ms() + 1000; /* more to do: again in a second */
        else if (r == -EAGAIN && every > 10000)
                gc_next_mono = mono + 10000; /* the store cannot write: try again soon */
}

static json_t *cat_json(const gc_cat *c, bool bytes)
{
        json_t *j = json_pack("{s:I}", "count", (json_int_t)c->n);
        char when[32];

        if (bytes)
                json_object_set_new(j, "bytes", json_integer((json_int_t)c->bytes));
        if (c->oldest_ms) {
                time_t t = (time_t)(c->oldest_ms / 1000);
                struct tm tm;
                gmtime_r(&t, &tm);
                strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
                json_object_set_new(j, "oldest_ended", json_string(when));
                if (c->oldest_task)
                        json_object_set_new(j, "oldest_task",
                                            json_sprintf("%" PRIu64, c->oldest_task));
        } else {
                json_object_set_new(j, "oldest_ended", json_null());
        }
        return j;
}

static void answer(kreq *r, int rc, bool dry, const gc_report *rep)
{
        char msg[600];
        json_t *j;

        if (rc == -EBUSY) {
                kreq_error(r, 409, "conflict", "a retention pass is running; try again");
                return;
        }
        if (rc == -EAGAIN) {
                kreq_error(r, 503, "store_unavailable",
                           "the store cannot write now (docs/STATE.md \"Store failures\"): no "
                           "retention pass; files are removed once it writes");
                return;
        }
        if (rc < 0) {
                kreq_error(r, 500, "internal", "retention pass: %s", kerf_strerror(rc));
                return;
        }
        summary(rep, dry, msg, sizeof(msg));
        j = json_pack("{s:b, s:o, s:o, s:o, s:o, s:I, s:b, s:s}", "dry_run", dry, "logs",
                      cat_json(&rep->logs, true), "work_dirs", cat_json(&rep->work, true),
                      "logs_capped", cat_json(&rep->capped, true), "tasks",
                      cat_json(&rep->tasks, false), "errors", (json_int_t)rep->errors, "more",
                      rep->more, "message", msg);
        if (rep->errors)
                json_object_set_new(j, "first_error", json_string(rep->first_error));
        json_object_set_new(j, "retention", kerfd_retention_json(&r->node->cfg.retention));
        kreq_json(r, 200, j);
}

/* GET /v1/gc: what a pass would do now (a dry pass). Admin (routes.def). */
void kerfd_api_gc_get(kreq *r)
{
        gc_report rep;
        int rc = gc_pass(r->node, true, r->actor, &rep);
        answer(r, rc, true, &rep);
}

/* POST /v1/gc [{"dry_run": true}]: a pass now, recorded as node.gc. Admin (routes.def). */
void kerfd_api_gc_post(kreq *r)
{
        bool dry = false;
        gc_report rep;
        int rc;

        if (r->body && r->len) {
                json_t *b = api_body(r), *v;
                const char *k;
                if (!b)
                        return;
                json_object_foreach(b, k, v)
                {
                        if (strcmp(k, "dry_run")) {
                                kreq_error(r, 400, "invalid_argument",
                                           "%s: unknown field (dry_run)", k);
                                json_decref(b);
                                return;
                        }
                        if (!json_is_boolean(v)) {
                                kreq_error(r, 400, "invalid_argument",
                                           "dry_run: expected true or false");
                                json_decref(b);
                                return;
                        }
                        dry = json_is_true(v);
                }
                json_decref(b);
        }
        rc = gc_pass(r->node, dry, r->actor[0] ? r->actor : "admin", &rep);
        answer(r, rc, dry, &rep);
}

/* For GET /v1/tasks/{id}/logs: true with the 410 queued when retention removed the logs of
 * ended task `id`. */
bool kerfd__retention_logs_gone(kreq *r, uint64_t id)
{
        int64_t logs_ms = 0;
        char when[32], age[32];
        time_t t;
        struct tm tm;

        if (kerf_store_gc_gone(r->node->store, id, &logs_ms, NULL) < 0 || !logs_ms)
                return false;
        t = (time_t)(logs_ms / 1000);
        gmtime_r(&t, &tm);
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
        kerfd_retention_fmt(r->node->cfg.retention.logs_after_s, age, sizeof(age));
        kreq_error(r, 410, "gone",
                   "logs of task %" PRIu64 " were removed by retention on %s (retention."
                   "logs_after: %s)",
                   id, when, age);
        return true;
}
