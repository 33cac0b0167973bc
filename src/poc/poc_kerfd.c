/* SPDX-License-Identifier: Apache-2.0 */
/* poc_kerfd.c - a private kerfd on the simulated fleet for `kerf poc run --spawn` */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "poc.h"
#include "simstate.h"

/*
 * Layout (docs/POC.md "The run"): out/kerfd/kerfd.yaml (written here), out/kerfd/state (kerfd's
 * state dir, its simulated node in state/sim), out/kerfd/kerfd.sock, out/kerfd/kerfd.log.
 * poc_kerfd_start -> spawn -> wait_health; kill9 / restart / upgrade reuse the same files.
 */

struct poc_kerfd {
        pid_t pid;
        char dir[4200], cfg[4300], log[4300], bin[PATH_MAX + 16], no_shim[4300];
};

static void exe_dir(char *buf, size_t cap)
{
        ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
        buf[n > 0 ? n : 0] = 0;
        char *slash = strrchr(buf, '/');
        if (slash)
                *slash = 0;
}

/* The default fleet: the source tree kerf was built from, else an installed share dir. */
static int find_fleet(char *buf, size_t cap)
{
        char dir[PATH_MAX];
        exe_dir(dir, sizeof(dir));
        const char *cands[] = {KERF_POC_SOURCE_DIR "/examples/fleet-8xh200.yaml",
                               "%s/../share/kerf/examples/fleet-8xh200.yaml",
                               "%s/../../examples/fleet-8xh200.yaml"};
        for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
                if (strstr(cands[i], "%s"))
                        snprintf(buf, cap, cands[i], dir);
                else
                        snprintf(buf, cap, "%s", cands[i]);
                if (access(buf, R_OK) == 0)
                        return 0;
        }
        return -ENOENT;
}

static int wait_health(poc_ctx *p, char *err, size_t errlen)
{
        kerf_client *c;
        kerf_client_opts o = {.socket = p->sock, .timeout_ms = 2000};
        if (kerf_client_new(&o, &c) < 0) {
                snprintf(err, errlen, "cannot set up a client for %s", p->sock);
                return -EINVAL;
        }
        for (int i = 0; i < 300; i++) { /* 15 s */
                kerf_client_response r;
                int st;
                if (kerf_client_call(c, "GET", "/v1/health", NULL, &r) == 0) {
                        long s = r.status;
                        kerf_client_response_fini(&r);
                        if (s == 200) {
                                kerf_client_free(c);
                                return 0;
                        }
                }
                if (waitpid(p->kerfd->pid, &st, WNOHANG) == p->kerfd->pid) {
                        p->kerfd->pid = 0;
                        snprintf(err, errlen, "kerfd exited at start; see %s", p->kerfd->log);
                        kerf_client_free(c);
                        return -EIO;
                }
                usleep(50000);
        }
        kerf_client_free(c);
        snprintf(err, errlen, "kerfd did not answer /v1/health within 15 s; see %s", p->kerfd->log);
        return -ETIMEDOUT;
}

static int spawn(poc_ctx *p, char *err, size_t errlen)
{
        poc_kerfd *k = p->kerfd;
        int fd = open(k->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) {
                snprintf(err, errlen, "%s: %s", k->log, strerror(errno));
                return -errno;
        }
        pid_t pid = fork();
        if (pid < 0) {
                close(fd);
                snprintf(err, errlen, "fork: %s", strerror(errno));
                return -errno;
        }
        if (pid == 0) {
                dup2(fd, 1);
                dup2(fd, 2);
                int nul = open("/dev/null", O_RDONLY);
                if (nul >= 0)
                        dup2(nul, 0);
                setpgid(0, 0); /* a ^C at the terminal reaches the harness, which stops kerfd */
                prctl(PR_SET_PDEATHSIG, SIGTERM); /* the harness died (crash, kill -9): stop */
                if (p->o.test_no_shim)
                        setenv("KERFD_TEST_SHIM_PATH", k->no_shim, 1);
                execl(k->bin, k->bin, "-c", k->cfg, (char *)NULL);
                dprintf(2, "poc: cannot run %s: %s\n", k->bin, strerror(errno));
                _exit(127);
        }
        close(fd);
        k->pid = pid;
        return wait_health(p, err, errlen);
}

int poc_kerfd_start(poc_ctx *p, char *err, size_t errlen)
{
        char fleet[PATH_MAX], dir[PATH_MAX];
        poc_kerfd *k = calloc(1, sizeof(*k));
        if (!k)
                return -ENOMEM;
        p->kerfd = k;
        snprintf(k->dir, sizeof(k->dir), "%s/kerfd", p->out);
        snprintf(k->cfg, sizeof(k->cfg), "%s/kerfd.yaml", k->dir);
        snprintf(k->log, sizeof(k->log), "%s/kerfd.log", k->dir);
        snprintf(k->no_shim, sizeof(k->no_shim), "%s/no-shim/libkerf-cuda.so", k->dir);
        snprintf(p->sock, sizeof(p->sock), "%s/kerfd.sock", k->dir);
        if (strlen(p->sock) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
                snprintf(err, errlen,
                         "--out %s is too long for kerfd's socket %s (at most %zu bytes): use a "
                         "shorter --out",
                         p->out, p->sock, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
                return -ENAMETOOLONG;
        }
        if (p->o.kerfd) {
                snprintf(k->bin, sizeof(k->bin), "%s", p->o.kerfd);
        } else {
                exe_dir(dir, sizeof(dir));
                snprintf(k->bin, sizeof(k->bin), "%s/kerfd", dir);
        }
        if (access(k->bin, X_OK) < 0) {
                snprintf(err, errlen, "kerfd binary %s: %s (give --kerfd BIN)", k->bin,
                         strerror(errno));
                return -ENOENT;
        }
        if (p->o.fleet) {
                snprintf(fleet, sizeof(fleet), "%s", p->o.fleet);
        } else if (find_fleet(fleet, sizeof(fleet)) < 0) {
                snprintf(err, errlen,
                         "no default fleet file examples/fleet-8xh200.yaml found "
                         "(give --fleet FILE)");
                return -ENOENT;
        }
        if (access(fleet, R_OK) < 0 || !realpath(fleet, dir)) {
                snprintf(err, errlen, "--fleet %s: %s", fleet, strerror(errno));
                return -ENOENT;
        }
        /* 0711: tasks run as the tenants' uids and must reach their files below */
        if ((mkdir(k->dir, 0711) < 0 && errno != EEXIST) || chmod(k->dir, 0711) < 0) {
                snprintf(err, errlen, "%s: %s", k->dir, strerror(errno));
                return -errno;
        }
        FILE *f = fopen(k->cfg, "we");
        if (!f) {
                snprintf(err, errlen, "%s: %s", k->cfg, strerror(errno));
                return -errno;
        }
        fprintf(f,
                "# written by kerf poc run --spawn\nstate_dir: %s/state\nsocket: %s\nfleet: %s\n"
                "backend:\n  simulated: true\nlimits:\n  grace_s: 1\n  tick_ms: 20\n%s",
                k->dir, p->sock, dir,
                p->o.test_no_shim ? "policy:\n  unenforced_slices: allow\n" : "");
        fclose(f);
        p->co.socket = p->sock;
        p->co.url = NULL;
        poc_progress(p, "starting a private kerfd (%s, fleet %s)%s", k->bin, dir,
                     p->o.test_no_shim ? " WITHOUT the shim (--test-no-shim)" : "");
        return spawn(p, err, errlen);
}

int poc_kerfd_kill9(poc_ctx *p)
{
        if (!p->kerfd || p->kerfd->pid <= 0)
                return -ESRCH;
        kill(p->kerfd->pid, SIGKILL);
        waitpid(p->kerfd->pid, NULL, 0);
        p->kerfd->pid = 0;
        return 0;
}

int poc_kerfd_restart(poc_ctx *p, char *err, size_t errlen)
{
        if (!p->kerfd) {
                snprintf(err, errlen, "no private kerfd (--spawn) to restart");
                return -ESRCH;
        }
        if (p->kerfd->pid > 0)
                poc_kerfd_stop(p);
        return spawn(p, err, errlen);
}

/* SIGTERM, then SIGKILL after 10 s; the poc_kerfd stays (restart reuses it) */
static void stop_only(poc_kerfd *k)
{
        if (!k || k->pid <= 0)
                return;
        kill(k->pid, SIGTERM);
        for (int i = 0; i < 200; i++) {
                if (waitpid(k->pid, NULL, WNOHANG) == k->pid) {
                        k->pid = 0;
                        return;
                }
                usleep(50000);
        }
        kill(k->pid, SIGKILL);
        waitpid(k->pid, NULL, 0);
        k->pid = 0;
}

int poc_kerfd_upgrade(poc_ctx *p, const char *driver, const char *cuda, char *err, size_t errlen)
{
        char sim[4300];
        kerf_sim *st;
        int r, cv = 0;
        if (!p->kerfd) {
                snprintf(err, errlen, "no private kerfd (--spawn) to upgrade");
                return -ESRCH;
        }
        if (cuda) {
                int maj = 0, min = 0;
                if (sscanf(cuda, "%d.%d", &maj, &min) != 2 || maj < 1 || min < 0 || min > 99) {
                        snprintf(err, errlen, "CUDA version \"%s\" is not MAJOR.MINOR", cuda);
                        return -EINVAL;
                }
                cv = maj * 1000 + min * 10;
        }
        stop_only(p->kerfd);
        snprintf(sim, sizeof(sim), "%s/state/sim", p->kerfd->dir);
        if ((r = kerf_sim_open(sim, &st)) < 0) {
                snprintf(err, errlen, "simulated node %s: %s", sim, strerror(r < 0 ? -r : r));
        } else {
                /* force: processes of tasks that outlived kerfd keep running, as on a node */
                r = kerf_sim_upgrade(st, driver, cv, true);
                if (r < 0)
                        snprintf(err, errlen, "simulated upgrade to driver %s: error %d", driver,
                                 r);
                kerf_sim_close(st);
        }
        int r2 = spawn(p, r < 0 ? err + strlen(err) : err, r < 0 ? 0 : errlen);
        return r < 0 ? r : r2;
}

void poc_kerfd_stop(poc_ctx *p)
{
        if (!p->kerfd)
                return;
        stop_only(p->kerfd);
        free(p->kerfd);
        p->kerfd = NULL;
}
