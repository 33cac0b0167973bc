/* SPDX-License-Identifier: Apache-2.0 */
/* main.c - kerfd: arguments, configuration, signals, start-up and clean shutdown */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "node.h"
#include "uidcache.h"

static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

void kerfd_log(const char *level, const char *fmt, ...)
{
        char ts[32];
        struct timespec now;
        struct tm tm;
        va_list ap;

        clock_gettime(CLOCK_REALTIME, &now);
        gmtime_r(&now.tv_sec, &tm);
        strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
        pthread_mutex_lock(&log_mu);
        fprintf(stderr, "%s.%03ldZ kerfd %s: ", ts, now.tv_nsec / 1000000, level);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        pthread_mutex_unlock(&log_mu);
}

static void usage(FILE *f)
{
        fprintf(f, "usage: kerfd [-c CONFIG] [--socket PATH] [--state-dir DIR] [--fleet FILE] "
                   "[--simulated] [--check-config]\n"
                   "  -c, --config FILE   configuration (YAML, docs/DAEMON.md)\n"
                   "      --socket PATH   Unix socket to listen on\n"
                   "      --state-dir DIR state directory (SQLite, logs, simulated node)\n"
                   "      --fleet FILE    fleet used when no NVIDIA library is found\n"
                   "      --simulated     never try the real NVML\n"
                   "      --check-config  read the configuration and exit\n");
}

static kerfd_node node;

#ifdef KERF_SAN_RUNTIME
extern bool kerf__exec_san_env; /* exec.c: sanitizer builds only (docs/DAEMON.md "Sanitizers") */
#endif

int main(int argc, char **argv)
{
        static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                             {"socket", required_argument, NULL, 's'},
                                             {"state-dir", required_argument, NULL, 'd'},
                                             {"fleet", required_argument, NULL, 'f'},
                                             {"simulated", no_argument, NULL, 'S'},
                                             {"check-config", no_argument, NULL, 'C'},
                                             {"help", no_argument, NULL, 'h'},
                                             {"version", no_argument, NULL, 'V'},
                                             {NULL, 0, NULL, 0}};
        static kerfd_config cfg;
        const char *config = NULL, *sock = NULL, *state = NULL, *fleet = NULL;
        bool check = false, sim = false;
        char exe[PATH_MAX], err[1024];
        sigset_t set;
        int c, sig, r;

        while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
                switch (c) {
                case 'c':
                        config = optarg;
                        break;
                case 's':
                        sock = optarg;
                        break;
                case 'd':
                        state = optarg;
                        break;
                case 'f':
                        fleet = optarg;
                        break;
                case 'S':
                        sim = true;
                        break;
                case 'C':
                        check = true;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                case 'V':
                        printf("kerfd %s\n", KERFD_VERSION);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr,
                        "kerfd: unexpected argument \"%s\" (the configuration is -c FILE)\n",
                        argv[optind]);
                usage(stderr);
                return 2;
        }
        kerfd_config_defaults(&cfg);
        kerfd__uidcache_init(); /* group kerf (NSS), before any thread */
        if (config && (r = kerfd_config_load(&cfg, config, err, sizeof(err))) < 0) {
                log_error("bad configuration: %s", err);
                return 1;
        }
        if (sock)
                snprintf(cfg.socket, sizeof(cfg.socket), "%s", sock);
        if (state)
                snprintf(cfg.state_dir, sizeof(cfg.state_dir), "%s", state);
        if (fleet)
                snprintf(cfg.fleet, sizeof(cfg.fleet), "%s", fleet);
        if (sim)
                cfg.force_sim = true;
        if (kerfd_config_abspath(cfg.state_dir, sizeof(cfg.state_dir)) < 0 ||
            kerfd_config_check(&cfg, err, sizeof(err)) < 0) {
                log_error("bad configuration: %s",
                          cfg.state_dir[0] == '/' ? err : "state_dir: too long");
                return 1;
        }
        if (check) {
                printf("%s: ok (%u tenants)\n", config ? config : "defaults", cfg.n_tenants);
                return 0;
        }
        ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (l <= 0)
                snprintf(exe, sizeof(exe), "%s", argv[0]);
        else
                exe[l] = 0;
        /* Signals are taken synchronously by this thread; every other thread blocks them. */
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGHUP);
        pthread_sigmask(SIG_BLOCK, &set, NULL);
        signal(SIGPIPE, SIG_IGN);
#ifdef KERF_SAN_RUNTIME
        kerf__exec_san_env = true;
#endif
        log_info("kerfd %s starting (config %s, state %s)", KERFD_VERSION,
                 config ? config : "defaults", cfg.state_dir);
        if ((r = kerfd_node_start(&node, &cfg, dirname(exe))) < 0) {
                log_error("start-up failed");
                return 1;
        }
        if ((r = kerfd__metrics_listen_start(&node)) < 0 || (r = kerfd_http_start(&node)) < 0) {
                kerfd__metrics_listen_stop();
                kerfd_node_stop(&node);
                return 1;
        }
        log_info("ready%s", node.simulated ? " (SIMULATED fleet)" : "");
        for (;;) {
                if (sigwait(&set, &sig) != 0)
                        continue;
                if (sig == SIGHUP) {
                        log_info("SIGHUP: configuration reload is not supported; restart kerfd");
                        continue;
                }
                break;
        }
        log_info("%s: shutting down (tasks keep running and are re-adopted on restart)",
                 strsignal(sig));
        pthread_mutex_lock(&node.mu);
        node.stopping = true;
        pthread_mutex_unlock(&node.mu);
        kerfd__metrics_listen_stop();
        kerfd_http_stop();
        kerfd_node_stop(&node);
        log_info("stopped");
        return 0;
}
