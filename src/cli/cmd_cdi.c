/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_cdi.c - kerf cdi generate | attach | release: CDI specs and devices for container
 * runtimes (docs/CLUSTER.md "Containers (CDI)")
 *
 *   generate: GET /v1/health (paths), /v1/gpus, /v1/units -> the node's static spec (whole GPUs,
 *             MIG instances by UUID) printed or written to DIR/<vendor>-<class>.json
 *   attach:   fork a holder (the attached pid) -> POST /v1/attach -> kerfd writes the spec of
 *             device task-N -> print KIND=task-N; the holder renews the lease until the task ends
 *   release:  POST /v1/tasks/N/cancel (the spec's poststop hook); an ended task is not an error
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "kerf/fields.h" /* KERF_MAX_LEASE_S */
#include "kerf_cdi.h"

#define NVIDIA_MAJOR 195

static int usage(const char *verb)
{
        cli_usage(stderr, verb);
        return KERF_EXIT_USAGE;
}

/* Device node /dev/nvidiaN: type and numbers given on the simulated fleet (no host node). */
static int add_gpu_node(json_t *edits, long index, bool sim)
{
        char path[64];
        snprintf(path, sizeof(path), "/dev/nvidia%ld", index);
        return kerf_cdi_node_add(edits, path, NULL, sim ? 'c' : 0, NVIDIA_MAJOR, index);
}

static int add_device(json_t *spec, const char *uuid, long gpu, bool sim)
{
        char name[160];
        json_t *e;
        if (kerf_cdi_name_from_uuid(uuid, name, sizeof(name)) < 0 ||
            !(e = kerf_cdi_device_add(spec, name)))
                return -EINVAL;
        if (add_gpu_node(e, gpu, sim) < 0 || kerf_cdi_env_add(e, "CUDA_VISIBLE_DEVICES", uuid) < 0)
                return -EINVAL;
        return 0;
}

/* The spec-wide edits: /dev/nvidiactl (and uvm on a real host); on the simulated fleet its
 * state dir and libraries (GET /v1/health paths, admin only). */
static int common_edits(json_t *spec, const json_t *health, bool sim)
{
        json_t *e = kerf_cdi_spec_edits(spec), *paths = json_object_get(health, "paths");
        const char *lib = json_string_value(json_object_get(paths, "lib"));
        const char *simdir = json_string_value(json_object_get(paths, "sim"));
        if (kerf_cdi_node_add(e, "/dev/nvidiactl", NULL, sim ? 'c' : 0, NVIDIA_MAJOR, 255) < 0)
                return -EINVAL;
        if (!sim) {
                static const char *const uvm[] = {"/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"};
                for (unsigned i = 0; i < 2; i++)
                        if (access(uvm[i], F_OK) == 0 &&
                            kerf_cdi_node_add(e, uvm[i], NULL, 0, 0, 0))
                                return -EINVAL;
                return 0;
        }
        if (!lib || !simdir) {
                cli_err("cdi generate: kerfd runs a simulated fleet and did not say where its "
                        "state and libraries are (GET /v1/health paths: admin only)");
                return -EPERM;
        }
        if (kerf_cdi_env_add(e, "KERF_SIM_DIR", simdir) < 0 ||
            kerf_cdi_env_add(e, "LD_LIBRARY_PATH", lib) < 0 ||
            kerf_cdi_mount_add(e, simdir, simdir, false) < 0 ||
            kerf_cdi_mount_add(e, lib, lib, true) < 0)
                return -EINVAL;
        return 0;
}

static int generate(cli *c, int argc, char **argv)
{
        const char *out = NULL, *kind = KERF_CDI_KIND_DEFAULT;
        json_t *health = NULL, *gpus = NULL, *units = NULL, *spec = NULL, *g, *u;
        char err[512], file[400];
        size_t i;
        int ex;

        for (int a = 1; a < argc; a++) {
                if (!strcmp(argv[a], "--out") && a + 1 < argc)
                        out = argv[++a];
                else if (!strcmp(argv[a], "--kind") && a + 1 < argc)
                        kind = argv[++a];
                else {
                        cli_err("cdi generate: unexpected '%s'", argv[a]);
                        return usage("cdi");
                }
        }
        if (!kerf_cdi_kind_ok(kind)) {
                cli_err("cdi generate: --kind '%s' is not VENDOR/CLASS (e.g. kerf.dev/gpu)", kind);
                return KERF_EXIT_USAGE;
        }
        if (out && kerf_cdi_dir_check(out, err, sizeof(err)) < 0) {
                cli_err("cdi generate: --out: %s", err);
                return KERF_EXIT_USAGE;
        }
        if ((ex = cli_call(c, "GET", "/v1/health", NULL, &health)) ||
            (ex = cli_call(c, "GET", "/v1/gpus?limit=1000", NULL, &gpus)) ||
            (ex = cli_call(c, "GET", "/v1/units?limit=1000", NULL, &units)))
                goto out;
        bool sim = json_is_true(json_object_get(health, "simulated"));
        spec = kerf_cdi_spec_new(kind);
        ex = KERF_EXIT_REFUSED;
        json_array_foreach(json_object_get(gpus, "items"), i, g)
        {
                const char *uuid = json_string_value(json_object_get(g, "uuid"));
                if (!uuid ||
                    add_device(spec, uuid, (long)json_integer_value(json_object_get(g, "index")),
                               sim) < 0) {
                        cli_err("cdi generate: GPU %s: its UUID makes no CDI device name",
                                cli_str(g, "index"));
                        goto out;
                }
        }
        json_array_foreach(json_object_get(units, "items"), i, u)
        {
                const char *mig = json_string_value(json_object_get(u, "mig_uuid"));
                if (mig && *mig &&
                    add_device(spec, mig, (long)json_integer_value(json_object_get(u, "gpu")),
                               sim) < 0) {
                        cli_err("cdi generate: MIG instance %s: no CDI device name", cli_safe(mig));
                        goto out;
                }
        }
        if (common_edits(spec, health, sim) < 0)
                goto out;
        if (kerf_cdi_spec_check(spec, err, sizeof(err)) < 0) {
                cli_err("cdi generate: %s", err);
                goto out;
        }
        if (!out) {
                cli_print_json(spec);
                ex = 0;
                goto out;
        }
        if (kerf_cdi_file_name(kind, NULL, file, sizeof(file)) < 0 ||
            kerf_cdi_spec_write(out, file, spec, err, sizeof(err)) < 0) {
                cli_err("cdi generate: %s", err);
                goto out;
        }
        printf("%s/%s: %zu device(s) of kind %s\n", out, file,
               json_array_size(json_object_get(spec, "devices")), kind);
        ex = 0;
out:
        json_decref(health);
        json_decref(gpus);
        json_decref(units);
        json_decref(spec);
        return ex;
}

static bool task_over(kerf_client *kc, unsigned long long id)
{
        kerf_client_response r;
        char path[64];
        bool over = false;
        snprintf(path, sizeof(path), "/v1/tasks/%llu", id);
        if (kerf_client_call(kc, "GET", path, NULL, &r) < 0)
                return false; /* kerfd restarting: keep holding */
        if (r.status == 404)
                over = true;
        else if (r.status == 200) {
                json_t *t = json_loads(r.body, 0, NULL);
                const char *st = json_string_value(json_object_get(t, "state"));
                over = st && strcmp(st, "running") && strcmp(st, "pending");
                json_decref(t);
        }
        kerf_client_response_fini(&r);
        return over;
}

/* The holder: the attached process. Detached from the terminal, it renews the lease every
 * lease/3 s and exits when the task has ended (release, lease expiry, cancel) or when the
 * parent gave it no task. */
static void holder(const kerf_client_opts *o, int rfd, long long lease_s)
{
        unsigned long long id = 0;
        kerf_client *kc = NULL;
        int dn = open("/dev/null", O_RDWR | O_CLOEXEC);
        time_t renewed = time(NULL);

        setsid();
        signal(SIGHUP, SIG_IGN);
        if (dn >= 0) {
                dup2(dn, 0);
                dup2(dn, 1);
                dup2(dn, 2);
        }
        if (read(rfd, &id, sizeof(id)) != (ssize_t)sizeof(id) || !id || kerf_client_new(o, &kc) < 0)
                _exit(0);
        close(rfd);
        for (;;) {
                sleep(2);
                if (task_over(kc, id))
                        break;
                /* kerfd gone for longer than a lease: the task has expired (or kerfd's
                 * recovery ends it, as its attached process is gone) */
                if (time(NULL) - renewed > lease_s)
                        break;
                if (time(NULL) - renewed >= lease_s / 3) {
                        char path[64];
                        kerf_client_response r;
                        snprintf(path, sizeof(path), "/v1/tasks/%llu/lease", id);
                        if (kerf_client_call(kc, "POST", path, "{}", &r) == 0) {
                                if (r.status == 200)
                                        renewed = time(NULL);
                                kerf_client_response_fini(&r);
                        }
                }
        }
        kerf_client_free(kc);
        _exit(0);
}

static int attach(cli *c, int argc, char **argv)
{
        long long pid = 0, lease = 60;
        json_t *req = NULL, *task = NULL;
        int fds[2] = {-1, -1}, ex, k = 1;
        pid_t child = 0;

        /* --pid and --lease here; the rest are submit flags */
        for (int a = 1; a < argc; a++) {
                bool is_pid = !strcmp(argv[a], "--pid"), is_lease = !strcmp(argv[a], "--lease");
                if (is_lease && a + 1 < argc) { /* a duration: 60, 90s, 15m, 1h */
                        uint64_t d;
                        if (!cli_parse_duration("lease", argv[a + 1], KERF_MAX_LEASE_S, &d))
                                return KERF_EXIT_USAGE;
                        if (d < 1) {
                                cli_err("cdi attach: --lease '%s': expected 1s..1h", argv[a + 1]);
                                return KERF_EXIT_USAGE;
                        }
                        lease = (long long)d;
                        a++;
                } else if (is_pid && a + 1 < argc) {
                        char *end;
                        long long v;
                        errno = 0;
                        v = strtoll(argv[a + 1], &end, 10);
                        if (errno || *end || v < 2 || v > 0x7fffffffLL) {
                                cli_err("cdi attach: %s '%s': expected a process id", argv[a],
                                        argv[a + 1]);
                                return KERF_EXIT_USAGE;
                        }
                        pid = v;
                        a++;
                } else
                        argv[k++] = argv[a];
        }
        argv[k] = NULL;
        if ((ex = cli_parse_request(c, k, argv, &req)))
                return ex < 0 ? 0 : ex;
        if (!pid) {
                if (pipe2(fds, O_CLOEXEC) < 0 || (child = fork()) < 0) {
                        cli_err("cdi attach: cannot start the holder process: %s", strerror(errno));
                        json_decref(req);
                        return KERF_EXIT_REFUSED;
                }
                if (child == 0) {
                        close(fds[1]);
                        holder(&c->opts, fds[0], lease);
                }
                close(fds[0]);
                pid = child;
        }
        json_object_set_new(req, "pid", json_integer(pid));
        json_object_set_new(req, "lease_s", json_integer(lease));
        ex = cli_call(c, "POST", "/v1/attach", req, &task);
        json_decref(req);
        if (ex)
                goto out;
        unsigned long long id = (unsigned long long)json_integer_value(json_object_get(task, "id"));
        const char *dev = json_string_value(json_object_get(task, "cdi_device"));
        if (!dev) {
                char path[64];
                cli_err("cdi attach: task %llu is %s without a CDI device (%s); cancelled", id,
                        cli_str(task, "state"),
                        strcmp(cli_str(task, "state"), "running")
                            ? cli_str(json_object_get(task, "reason"), "text")
                            : "kerfd has cdi.enabled: false, or could not write the spec: see "
                              "its log");
                snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", id);
                (void)cli_call(c, "POST", path, NULL, NULL);
                ex = KERF_EXIT_REFUSED;
                goto out;
        }
        if (fds[1] >= 0 && write(fds[1], &id, sizeof(id)) != (ssize_t)sizeof(id))
                cli_err("cdi attach: the holder did not get task %llu; it ends at its lease", id);
        if (c->json)
                cli_print_json(task);
        else
                printf("%s\n", dev);
out:
        if (fds[1] >= 0)
                close(fds[1]); /* a holder without a task exits */
        json_decref(task);
        return ex;
}

static int release(cli *c, int argc, char **argv)
{
        unsigned long long id;
        kerf_client_response r;
        char path[64];
        if (argc != 2 || !cli_parse_id(argv[1], &id))
                return usage("cdi");
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", id);
        if (kerf_client_call(c->client, "POST", path, NULL, &r) < 0) {
                cli_err("cdi release: kerfd unreachable: %s", kerf_client_error(c->client));
                return KERF_EXIT_UNREACHABLE;
        }
        long st = r.status;
        kerf_client_response_fini(&r);
        if (st == 200 || st == 404 || st == 409) /* released, or already over */
                return 0;
        cli_err("cdi release: task %llu: kerfd answered %ld", id, st);
        return st == 401 || st == 403 ? KERF_EXIT_DENIED : KERF_EXIT_REFUSED;
}

int cli_cdi(cli *c, int argc, char **argv)
{
        if (argc < 2)
                return usage("cdi");
        if (!strcmp(argv[1], "generate"))
                return generate(c, argc - 1, argv + 1);
        if (!strcmp(argv[1], "attach"))
                return attach(c, argc - 1, argv + 1);
        if (!strcmp(argv[1], "release"))
                return release(c, argc - 1, argv + 1);
        cli_err("cdi: unknown subcommand '%s' (generate, attach, release)", argv[1]);
        return KERF_EXIT_USAGE;
}
