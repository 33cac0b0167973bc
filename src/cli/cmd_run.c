/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_run.c - kerf run: submit, say why it waits, stream its output, exit with its code;
 * Ctrl-C cancels it (as srun does), the caller's directory and chosen variables go with it */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

extern char **environ;

/* Never copied by --export / --env-from-shell: kerfd's own contract (docs/SHIM-CONTRACT.md)
 * and the loader's injection points. */
static bool env_never(const char *name, size_t len)
{
        static const char *const exact[] = {"LD_PRELOAD", "LD_AUDIT", "CUDA_VISIBLE_DEVICES", "_",
                                            NULL};
        static const char *const prefix[] = {"KERF_", "CUDA_MPS_", NULL};
        for (const char *const *e = exact; *e; e++)
                if (strlen(*e) == len && !strncmp(name, *e, len))
                        return true;
        for (const char *const *p = prefix; *p; p++)
                if (len >= strlen(*p) && !strncmp(name, *p, strlen(*p)))
                        return true;
        return false;
}

static volatile sig_atomic_t n_sigint;
static struct timespec last_sigint;

static void on_sigint(int sig)
{
        (void)sig;
        n_sigint++;
}

static int64_t mono_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The run-only flags, taken out of argv (before "--") so that the submit parser sees the rest:
 * --no-cwd, --env-from-shell, --export VAR[,VAR] (repeatable; or --export=...). */
typedef struct run_flags {
        bool no_cwd, from_shell;
        const char *exports[32];
        int n_exports;
} run_flags;

static int take_run_flags(int argc, char **argv, run_flags *rf)
{
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *val = NULL;
                int drop = 1;
                if (!strcmp(a, "--"))
                        break;
                if (!strcmp(a, "--no-cwd"))
                        rf->no_cwd = true;
                else if (!strcmp(a, "--env-from-shell"))
                        rf->from_shell = true;
                else if (!strncmp(a, "--export=", 9))
                        val = a + 9;
                else if (!strcmp(a, "--export")) {
                        if (i + 1 >= argc || !strcmp(argv[i + 1], "--")) {
                                cli_err("run: --export needs a value, e.g. --export HOME,PATH");
                                return KERF_EXIT_USAGE;
                        }
                        val = argv[i + 1];
                        drop = 2;
                } else
                        continue;
                if (val) {
                        if (rf->n_exports == 32) {
                                cli_err("run: --export: at most 32 times");
                                return KERF_EXIT_USAGE;
                        }
                        rf->exports[rf->n_exports++] = val;
                }
                memmove(&argv[i], &argv[i + drop], (size_t)(argc - i - drop + 1) * sizeof(*argv));
                argc -= drop;
                i--;
        }
        return -argc; /* <= 0: the new argc, negated */
}

/* Adds name=value from this process's environment to env unless already set (--env wins). */
static void env_copy(json_t *env, const char *name, size_t len, const char *value)
{
        char key[256];
        snprintf(key, sizeof(key), "%.*s", (int)len, name);
        if (json_object_get(env, key))
                return;
        json_t *v = json_string(value);
        if (!v) {
                cli_err("run: %s not copied: its value is not UTF-8", key);
                return;
        }
        json_object_set_new(env, key, v);
}

/* True when every directory from / down to `dir` is searchable by others: the task runs as
 * its tenant's uid (not necessarily the caller's, docs/SECURITY.md "Task identity"), so the
 * caller's directory is a safe default only when any uid can enter it (root's 0700 home is
 * not: then kerfd chooses, as with --no-cwd). */
static bool others_can_enter(const char *dir)
{
        char p[1100];
        struct stat st;
        size_t len = strlen(dir);
        if (len == 0 || len >= sizeof(p) || dir[0] != '/')
                return false;
        if (stat("/", &st) != 0 || !(st.st_mode & S_IXOTH))
                return false;
        for (size_t i = 1; i <= len; i++) {
                if (i < len && dir[i] != '/')
                        continue;
                memcpy(p, dir, i);
                p[i] = '\0';
                if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode) || !(st.st_mode & S_IXOTH))
                        return false;
        }
        return true;
}

static int apply_run_flags(json_t *req, const run_flags *rf)
{
        json_t *env = json_object_get(req, "env");
        bool fresh = !env;
        if (fresh)
                env = json_object();
        for (int k = 0; k < rf->n_exports; k++) {
                for (const char *p = rf->exports[k]; *p;) {
                        const char *e = strchr(p, ',');
                        size_t l = e ? (size_t)(e - p) : strlen(p);
                        char name[256];
                        snprintf(name, sizeof(name), "%.*s", (int)(l < 255 ? l : 255), p);
                        if (!l || l > 255 || strchr(name, '=')) {
                                cli_err("run: --export: '%s' is not a variable name", name);
                                goto usage;
                        }
                        if (env_never(name, l)) {
                                cli_err("run: --export: %s is never copied (KERF_*, CUDA_MPS_*, "
                                        "LD_PRELOAD, LD_AUDIT, CUDA_VISIBLE_DEVICES: kerfd "
                                        "sets them)",
                                        name);
                                goto usage;
                        }
                        const char *val = getenv(name);
                        if (val)
                                env_copy(env, name, l, val);
                        p = e ? e + 1 : p + l;
                }
        }
        for (char **e = environ; rf->from_shell && e && *e; e++) {
                const char *eq = strchr(*e, '=');
                if (!eq || eq == *e || eq - *e > 255 || env_never(*e, (size_t)(eq - *e)))
                        continue;
                env_copy(env, *e, (size_t)(eq - *e), eq + 1);
        }
        if (fresh && json_object_size(env))
                json_object_set_new(req, "env", env);
        else if (fresh)
                json_decref(env);
        /* the caller's directory, as srun does, when it can be named and the task can enter it */
        if (!rf->no_cwd && !json_object_get(req, "cwd")) {
                char *cwd = getcwd(NULL, 0);
                if (cwd && cwd[0] == '/' && strlen(cwd) <= 1024 && others_can_enter(cwd))
                        json_object_set_new(req, "cwd", json_string(cwd));
                free(cwd);
        }
        return 0;
usage:
        if (fresh)
                json_decref(env);
        return KERF_EXIT_USAGE;
}

/* kerfd is restarting (its tasks keep running under their supervisors, docs/DAEMON.md):
 * waits quietly, up to max_s, until it answers again. */
static bool await_kerfd(cli *c, unsigned long long id, unsigned max_s)
{
        fprintf(stderr, "kerf: kerfd unreachable; task %llu keeps running; waiting up to %u s\n",
                id, max_s);
        for (unsigned i = 0; i < max_s * 5 && n_sigint < 2; i++) {
                struct timespec ts = {0, 200 * 1000 * 1000};
                kerf_client_response r;
                nanosleep(&ts, NULL);
                if (kerf_client_call(c->client, "GET", "/v1/health", NULL, &r) >= 0) {
                        kerf_client_response_fini(&r);
                        return true;
                }
        }
        return false;
}

/* GET path without a word on failure (the log calls that follow report kerfd's absence). */
static json_t *get_quiet(cli *c, const char *path)
{
        kerf_client_response r;
        json_t *j = NULL;
        if (kerf_client_call(c->client, "GET", path, NULL, &r) < 0)
                return NULL;
        if (r.status == 200)
                j = json_loadb(r.body, r.len, 0, NULL);
        kerf_client_response_fini(&r);
        return j;
}

static bool ended(const char *st)
{
        return !strcmp(st, "succeeded") || !strcmp(st, "failed") || !strcmp(st, "cancelled");
}

/* Ctrl-C: the first cancels the task (its output keeps coming until it ends); another within
 * 1 s of the one before leaves at once. Returns true when kerf run should exit now. */
static bool handle_sigint(cli *c, unsigned long long id, unsigned *seen, bool *cancelled)
{
        if (*seen == (unsigned)n_sigint)
                return false;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t gap = (int64_t)(now.tv_sec - last_sigint.tv_sec) * 1000 +
                      (now.tv_nsec - last_sigint.tv_nsec) / 1000000;
        unsigned fresh = (unsigned)n_sigint - *seen; /* since the last look (100 ms ago) */
        bool twice = fresh > 1 || (*seen > 0 && gap <= 1000);
        *seen = (unsigned)n_sigint;
        last_sigint = now;
        if (twice) {
                fprintf(stderr, "kerf: leaving; task %llu stays cancelled\n", id);
                return true;
        }
        if (!*cancelled) {
                char path[64];
                json_t *t = NULL;
                snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", id);
                fprintf(stderr,
                        "kerf: cancelling task %llu (Ctrl-C again within 1 s to leave at once)\n",
                        id);
                if (cli_call(c, "POST", path, NULL, &t) == 0)
                        json_decref(t);
                *cancelled = true;
        } else {
                fprintf(stderr,
                        "kerf: waiting for task %llu to end (Ctrl-C twice within 1 s "
                        "to leave at once)\n",
                        id);
        }
        return false;
}

int cli_run(cli *c, int argc, char **argv)
{
        run_flags rf = {0};
        json_t *req = NULL, *task = NULL;
        int ex = take_run_flags(argc, argv, &rf);
        if (ex > 0)
                return ex;
        argc = -ex;
        ex = cli_parse_run_request(c, argc, argv, &req);
        if (ex)
                return ex < 0 ? 0 : ex;
        if (c->json) { /* its own --json flag (the global one is refused by main) */
                json_decref(req);
                return cli_json_refuse("run");
        }
        if ((ex = apply_run_flags(req, &rf))) {
                json_decref(req);
                return ex;
        }
        ex = cli_call(c, "POST", "/v1/tasks", req, &task);
        json_decref(req);
        if (ex)
                return ex;
        unsigned long long id = (unsigned long long)json_integer_value(json_object_get(task, "id"));
        fprintf(stderr, "kerf: task %llu submitted\n", id);
        json_decref(task);
        task = NULL;

        struct sigaction sa = {.sa_handler = on_sigint};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        unsigned seen = 0;
        bool cancelled = false, started = false;
        long long off_out = 0, off_err = 0;
        bool eof_out = false, eof_err = false;
        char path[64], last_reason[600] = "";
        int64_t next_poll = 0;
        snprintf(path, sizeof(path), "/v1/tasks/%llu", id);
        for (;;) {
                if (handle_sigint(c, id, &seen, &cancelled))
                        return 130;
                /* until it starts: why it waits, once per change */
                if (!started && mono_ms() >= next_poll) {
                        json_t *t = get_quiet(c, path);
                        next_poll = mono_ms() + 300;
                        if (t) {
                                const char *st = cli_str(t, "state");
                                const char *why = cli_str(json_object_get(t, "reason"), "text");
                                if (!strcmp(st, "pending") && strcmp(why, "-") && *why &&
                                    strcmp(why, last_reason)) {
                                        snprintf(last_reason, sizeof(last_reason), "%s", why);
                                        fprintf(stderr, "kerf: task %llu pending: %s\n", id, why);
                                }
                                started = strcmp(st, "pending") != 0;
                                json_decref(t);
                        }
                }
                if ((ex = cli_pump(c, id, "stdout", &off_out, stdout, &eof_out)) ||
                    (ex = cli_pump(c, id, "stderr", &off_err, stderr, &eof_err))) {
                        if (ex == KERF_EXIT_UNREACHABLE && await_kerfd(c, id, 120))
                                continue;
                        if (n_sigint)
                                return 130;
                        return ex == KERF_EXIT_UNREACHABLE ? ex : KERF_EXIT_RUN_FAILED;
                }
                if (eof_out && eof_err)
                        break;
                struct timespec ts = {0, 100 * 1000 * 1000};
                nanosleep(&ts, NULL);
        }
        if ((ex = cli_call(c, "GET", path, NULL, &task)))
                return n_sigint ? 130 : ex == KERF_EXIT_UNREACHABLE ? ex : KERF_EXIT_RUN_FAILED;
        int code = KERF_EXIT_RUN_FAILED;
        json_t *ec = json_object_get(task, "exit_code"), *sig = json_object_get(task, "signal");
        if (json_is_integer(ec))
                code = (int)json_integer_value(ec);
        else if (json_is_integer(sig))
                code = 128 + (int)json_integer_value(sig);
        const char *st = cli_str(task, "state");
        if (!ended(st) || !json_is_integer(ec) || cancelled) {
                const char *why = cli_str(json_object_get(task, "reason"), "text");
                fprintf(stderr, "kerf: task %llu ended: %s (%s)%s%s\n", id, st,
                        cli_str(task, "end_reason"), strcmp(why, "-") && *why ? ": " : "",
                        strcmp(why, "-") && *why ? why : "");
        }
        json_decref(task);
        return n_sigint ? 130 : code;
}
