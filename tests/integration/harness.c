/* SPDX-License-Identifier: Apache-2.0 */
/* harness.c - the throwaway kerfd of the integration tests, reached with libcurl over its
 * Unix socket; every wait is bounded and the daemon is always killed */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "harness.h"

/* alice and bob keep what the integration tests were written for: their tasks run as kerfd's
 * uid (root in CI: allow_root) and may use any priority and tier. tests/security defines its
 * own tenants for the rules that bind the others (docs/SECURITY.md "Task identity"). */
#define KD_TENANT_POLICY "    allow_root: true\n    max_priority: 1000\n    max_tier: high\n"

/* every kerfd started and not yet seen to exit: a test that fails between kd_start and kd_stop
 * (cmocka jumps out of it) leaves its kerfd here, killed at exit */
#define MAX_LIVE 64
static pid_t live[MAX_LIVE];
const char *kd_limits;
const char *kd_policy;
const char *kd_bin;

static void live_del(pid_t p)
{
        for (int i = 0; i < MAX_LIVE; i++)
                if (live[i] == p)
                        live[i] = 0;
}

static void kill_pid(pid_t p)
{
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
        live_del(p);
}

static void kill_live(void)
{
        for (int i = 0; i < MAX_LIVE; i++) {
                /* only a child still ours: one a test reaped itself may be another process now */
                if (live[i] > 0 && waitpid(live[i], NULL, WNOHANG) == 0)
                        kill_pid(live[i]);
                live[i] = 0;
        }
}

static void live_add(pid_t p)
{
        static bool registered;
        if (!registered) {
                atexit(kill_live);
                registered = true;
        }
        for (int i = 0; i < MAX_LIVE; i++)
                if (live[i] <= 0) {
                        live[i] = p;
                        return;
                }
}

void kd_sleep_ms(unsigned ms)
{
        struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
}

typedef struct buf {
        char *p;
        size_t n;
} buf;

static size_t on_data(char *d, size_t sz, size_t nm, void *ud)
{
        buf *b = ud;
        size_t l = sz * nm;
        char *np = realloc(b->p, b->n + l + 1);
        if (!np)
                return 0;
        b->p = np;
        memcpy(b->p + b->n, d, l);
        b->n += l;
        b->p[b->n] = 0;
        return l;
}

/* METHOD url over the Unix socket `sock` (NULL: plain TCP to the url's host) */
static json_t *call(const char *sock, const char *url, const char *method, const char *body,
                    const char *token, long *status, char **raw)
{
        CURL *c = curl_easy_init();
        struct curl_slist *h = NULL;
        char auth[256];
        buf b = {0};
        json_t *j = NULL;
        CURLcode rc;

        if (sock)
                curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, sock);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 15000L);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
        if (body) {
                curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
                h = curl_slist_append(h, "Content-Type: application/json");
        }
        h = curl_slist_append(h, "Expect:");
        if (token) {
                snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
                h = curl_slist_append(h, auth);
        }
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        rc = curl_easy_perform(c);
        *status = 0;
        if (rc == CURLE_OK)
                curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        if (b.p)
                j = json_loads(b.p, 0, NULL);
        if (raw)
                *raw = b.p;
        else
                free(b.p);
        return j;
}

json_t *kd_call(kd *k, const char *method, const char *path, const char *body, const char *token,
                long *status, char **raw)
{
        char url[1024];
        snprintf(url, sizeof(url), "http://kerfd%s", path);
        return call(k->sock, url, method, body, token, status, raw);
}

json_t *kd_call_tcp(unsigned port, const char *method, const char *path, const char *body,
                    const char *token, long *status, char **raw)
{
        char url[1024];
        snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
        return call(NULL, url, method, body, token, status, raw);
}

void kd_start(kd *k)
{
        long st = 0;
        pid_t p;

        unlink(k->sock);
        p = fork();
        assert_true(p >= 0);
        if (p == 0) {
                int fd = open(k->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
                if (fd >= 0) {
                        dup2(fd, 2);
                        dup2(fd, 1);
                }
                execl(kd_bin ? kd_bin : KERFD_BIN, "kerfd", "-c", k->cfg, (char *)NULL);
                _exit(127);
        }
        k->pid = p;
        live_add(p);
        for (int i = 0; i < 200; i++) {
                json_t *j = kd_call(k, "GET", "/v1/health", NULL, NULL, &st, NULL);
                json_decref(j);
                if (st == 200)
                        return;
                if (waitpid(p, NULL, WNOHANG) == p) {
                        live_del(p);
                        k->pid = 0;
                        fail_msg("kerfd exited at start; see %s", k->log);
                }
                kd_sleep_ms(50);
        }
        kill_pid(p);
        k->pid = 0;
        fail_msg("kerfd did not answer within 10 s; see %s", k->log);
}

void kd_setup(kd *k, const char *extra)
{
        FILE *f;

        memset(k, 0, sizeof(*k));
        snprintf(k->dir, sizeof(k->dir), "/tmp/kerf-it-XXXXXX");
        assert_non_null(mkdtemp(k->dir));
        snprintf(k->sock, sizeof(k->sock), "%s/kerfd.sock", k->dir);
        snprintf(k->cfg, sizeof(k->cfg), "%s/kerfd.yaml", k->dir);
        snprintf(k->log, sizeof(k->log), "%s/kerfd.log", k->dir);
        f = fopen(k->cfg, "w");
        assert_non_null(f);
        fprintf(f,
                "state_dir: %s/state\nsocket: %s\nfleet: %s/examples/fleet-8xh200.yaml\n"
                "backend:\n  simulated: true\nlimits:\n  grace_s: 2\n  tick_ms: 20\n%s%s%s"
                "tenants:\n  - name: alice\n" KD_TENANT_POLICY "  - name: bob\n" KD_TENANT_POLICY
                "%s",
                k->dir, k->sock, KERF_SOURCE_DIR, kd_limits ? kd_limits : "",
                !kd_policy || *kd_policy ? "policy:\n" : "",
                kd_policy ? kd_policy : "  unenforced_slices: allow\n", extra ? extra : "");
        fclose(f);
        kd_start(k);
}

void kd_stop(kd *k)
{
        if (k->pid <= 0)
                return;
        kill(k->pid, SIGTERM);
        for (int i = 0; i < 100; i++) {
                if (waitpid(k->pid, NULL, WNOHANG) == k->pid) {
                        live_del(k->pid);
                        k->pid = 0;
                        return;
                }
                kd_sleep_ms(50);
        }
        kill_pid(k->pid);
        k->pid = 0;
        fail_msg("kerfd did not stop within 5 s of SIGTERM");
}

void kd_kill9(kd *k)
{
        kill_live();
        k->pid = 0;
}

/* The supervisors (kerf-supervise TASK_ID PID STATUS_PATH FD) of tasks this kerfd started, and
 * those tasks' process groups: a test that killed its kerfd leaves them behind (they outlive
 * kerfd by design). Found by their status path, which lies in the test's directory. */
static void kill_supervisors(const kd *k)
{
        DIR *d = opendir("/proc");
        struct dirent *e;
        size_t dl = strlen(k->dir);
        while (d && (e = readdir(d))) {
                char path[300], argv[1024] = "";
                const char *a[4] = {0};
                size_t n = 0, i = 0;
                pid_t pid = (pid_t)atoi(e->d_name);
                if (pid <= 0)
                        continue;
                snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
                FILE *f = fopen(path, "re");
                if (!f)
                        continue;
                n = fread(argv, 1, sizeof(argv) - 1, f);
                fclose(f);
                for (size_t off = 0; off < n && i < 4; off += strlen(argv + off) + 1)
                        a[i++] = argv + off;
                if (i < 4 || !strstr(a[0], "kerf-supervise") || strncmp(a[3], k->dir, dl) != 0)
                        continue;
                pid_t task = (pid_t)atoi(a[2]);
                if (task > 1)
                        kill(-task, SIGKILL);
                kill(pid, SIGKILL);
        }
        if (d)
                closedir(d);
}

void kd_cleanup(kd *k)
{
        char cmd[400];
        if (getenv("KERF_IT_KEEP"))
                return;
        kill_supervisors(k);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", k->dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", k->dir);
}

json_t *kd_task(kd *k, unsigned long long id)
{
        char path[64];
        long s;
        json_t *t;

        snprintf(path, sizeof(path), "/v1/tasks/%llu", id);
        t = kd_call(k, "GET", path, NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        return t;
}

json_t *kd_wait_task(kd *k, unsigned long long id, const char *state, unsigned timeout_ms)
{
        char path[64];
        long st;
        snprintf(path, sizeof(path), "/v1/tasks/%llu", id);
        for (unsigned waited = 0; waited <= timeout_ms; waited += 50) {
                json_t *j = kd_call(k, "GET", path, NULL, NULL, &st, NULL);
                const char *s = json_string_value(json_object_get(j, "state"));
                if (st == 200 && s &&
                    (state ? !strcmp(s, state)
                           : json_integer_value(json_object_get(j, "ended_ms")) != 0))
                        return j;
                json_decref(j);
                kd_sleep_ms(50);
        }
        return NULL;
}

unsigned long long kd_submit(kd *k, const char *body, const char *token)
{
        long st;
        char *raw = NULL;
        json_t *j = kd_call(k, "POST", "/v1/tasks", body, token, &st, &raw);
        unsigned long long id;
        if (st != 201)
                fail_msg("submit %s -> %ld %s", body, st, raw ? raw : "");
        free(raw);
        id = (unsigned long long)json_integer_value(json_object_get(j, "id"));
        json_decref(j);
        assert_true(id > 0);
        return id;
}

char *kd_token(kd *k, const char *tenant)
{
        char path[128];
        long st;
        json_t *j;
        char *tok;
        snprintf(path, sizeof(path), "/v1/tenants/%s/tokens", tenant);
        j = kd_call(k, "POST", path, NULL, NULL, &st, NULL);
        assert_int_equal(st, 201);
        tok = strdup(json_string_value(json_object_get(j, "token")));
        json_decref(j);
        return tok;
}

int kd_sim(kd *k, const char *args, char *out, size_t cap)
{
        char cmd[1024];
        size_t len = 0;
        FILE *p;
        int st;

        snprintf(cmd, sizeof(cmd), "KERF_SIM_DIR='%s/state/sim' timeout 20 '%s' %s", k->dir,
                 KERF_SIM_BIN, args);
        p = popen(cmd, "r");
        assert_non_null(p);
        if (out && cap) {
                size_t r;
                while (len + 1 < cap && (r = fread(out + len, 1, cap - 1 - len, p)) > 0)
                        len += r;
                out[len] = 0;
        } else {
                char tmp[4096];
                while (fread(tmp, 1, sizeof(tmp), p) > 0)
                        ;
        }
        st = pclose(p);
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

char *kd_read(const char *path)
{
        FILE *f = fopen(path, "r");
        char *b = NULL;
        size_t n = 0, r;
        if (!f)
                return NULL;
        b = malloc(1 << 20);
        if (b) {
                while (n + 1 < (1 << 20) && (r = fread(b + n, 1, (1 << 20) - 1 - n, f)) > 0)
                        n += r;
                b[n] = 0;
        }
        fclose(f);
        return b;
}

json_t *kd_event(kd *k, const char *kind, const char *needle)
{
        long st;
        json_t *j = kd_call(k, "GET", "/v1/events?limit=1000", NULL, NULL, &st, NULL), *it,
               *found = NULL;
        size_t i;
        json_array_foreach(json_object_get(j, "items"), i, it)
        {
                const char *kd_ = json_string_value(json_object_get(it, "kind"));
                const char *tx = json_string_value(json_object_get(it, "text"));
                if (kd_ && !strcmp(kd_, kind) && (!needle || (tx && strstr(tx, needle)))) {
                        found = json_incref(it);
                        break;
                }
        }
        json_decref(j);
        return found;
}

int kd_wait_exit(kd *k, unsigned timeout_ms)
{
        int ws;
        for (unsigned waited = 0; k->pid > 0 && waited <= timeout_ms; waited += 20) {
                if (waitpid(k->pid, &ws, WNOHANG) == k->pid) {
                        live_del(k->pid);
                        k->pid = 0;
                        return ws;
                }
                kd_sleep_ms(20);
        }
        return -1;
}

int kd_task_procs(kd *k, unsigned long long id, pid_t *pids, int cap)
{
        char want_id[64], want_sock[400], path[64], envb[16384];
        struct dirent *de;
        DIR *d = opendir("/proc");
        int found = 0;

        if (!d)
                return -1;
        snprintf(want_id, sizeof(want_id), "KERF_TASK_ID=%llu", id);
        snprintf(want_sock, sizeof(want_sock), "KERF_SOCKET=%s", k->sock);
        while ((de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                bool a = false, b = false;
                ssize_t len;
                size_t off = 0;
                int fd;
                if (*end || pid <= 1 || !kd_pid_alive((pid_t)pid))
                        continue;
                snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
                if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                        continue;
                while (off < sizeof(envb) - 1 &&
                       (len = read(fd, envb + off, sizeof(envb) - 1 - off)) > 0)
                        off += (size_t)len;
                close(fd);
                envb[off] = 0;
                for (size_t i = 0; i < off; i += strlen(envb + i) + 1) {
                        a |= !strcmp(envb + i, want_id);
                        b |= !strcmp(envb + i, want_sock);
                }
                if (a && b) {
                        if (found < cap)
                                pids[found] = (pid_t)pid;
                        found++;
                }
        }
        closedir(d);
        return found;
}

bool kd_pid_alive(pid_t pid)
{
        char path[64], statb[512], *rp;
        FILE *f;
        size_t n;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        if (!(f = fopen(path, "re")))
                return false;
        n = fread(statb, 1, sizeof(statb) - 1, f);
        fclose(f);
        statb[n] = 0;
        rp = strrchr(statb, ')');
        return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

unsigned kd_free_port(void)
{
        struct sockaddr_in sa = {.sin_family = AF_INET};
        socklen_t l = sizeof(sa);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        unsigned p = 0;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
            getsockname(fd, (struct sockaddr *)&sa, &l) == 0)
                p = ntohs(sa.sin_port);
        if (fd >= 0)
                close(fd);
        if (!p)
                fail_msg("no free loopback TCP port");
        return p;
}
