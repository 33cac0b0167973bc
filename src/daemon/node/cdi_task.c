/* SPDX-License-Identifier: Apache-2.0 */
/* cdi_task.c - kerfd's CDI specs: one per attached task with a unit (device "task-<id>"),
 * written when the unit is wired in and removed when it is reclaimed (docs/CLUSTER.md
 * "Containers (CDI)")
 *
 *   attach_process (decide.c) -> kerfd__cdi_task_write   <spec_dir>/<vendor>-<class>_task-N.json
 *   kerfd__task_end (node.c), requeue of an attached task (decide.c) -> kerfd__cdi_task_remove
 *   kerfd_node_start after recovery -> kerfd__cdi_recover: specs of live attached tasks written
 *                                      again, every other spec of this kerfd's removed
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "node.h"
#include "kerf_cdi.h"

#define NVIDIA_MAJOR 195 /* nvidia-frontend: /dev/nvidiaN (minor N), /dev/nvidiactl (255) */

/* This kerfd's owner tag: FNV-1a 64 of its state dir, in hex (two kerfds with one spec dir and
 * one kind never remove each other's files). */
static void owner_tag(const kerfd_node *n, char *out, size_t cap)
{
        uint64_t h = 0xcbf29ce484222325ull;
        for (const unsigned char *p = (const unsigned char *)n->cfg.state_dir; *p; p++)
                h = (h ^ *p) * 0x100000001b3ull;
        snprintf(out, cap, "%016" PRIx64, h);
}

static bool wants_spec(const kerfd_node *n, const dtask *t)
{
        return n->cfg.cdi_enabled && !t->argv && t->n_units > 0;
}

/* The device's edits: the unit contract (attach_env without KERF_SOCKET: kerfd's socket is not
 * handed into containers), the owner tag, device nodes, the shim and region mounts, on the
 * simulated fleet its state and libraries, and a poststop hook that releases the task. */
static int build(kerfd_node *n, dtask *t, json_t *edits)
{
        json_t *env = kerfd__attach_env(n, t), *v;
        const char *k;
        char owner[24], path[4400];
        int r = 0;

        if (!env)
                return -ENOENT;
        json_object_foreach(env, k, v)
        {
                if (strcmp(k, "KERF_SOCKET") != 0 &&
                    (r = kerf_cdi_env_add(edits, k, json_string_value(v))) < 0)
                        break;
        }
        json_decref(env);
        owner_tag(n, owner, sizeof(owner));
        if (r < 0 || (r = kerf_cdi_env_add(edits, KERF_CDI_OWNER_ENV, owner)) < 0)
                return r;
        if (n->simulated && n->sim_dir[0]) {
                if ((r = kerf_cdi_env_add(edits, "KERF_SIM_DIR", n->sim_dir)) < 0 ||
                    (r = kerf_cdi_env_add(edits, "LD_LIBRARY_PATH", n->lib_dir)) < 0 ||
                    (r = kerf_cdi_mount_add(edits, n->sim_dir, n->sim_dir, false)) < 0 ||
                    (r = kerf_cdi_mount_add(edits, n->lib_dir, n->lib_dir, true)) < 0)
                        return r;
        } else if (t->region_path && n->shim_path[0] &&
                   (r = kerf_cdi_mount_add(edits, n->shim_path, n->shim_path, true)) < 0)
                return r;
        if (t->region_path &&
            (r = kerf_cdi_mount_add(edits, t->region_path, t->region_path, false)) < 0)
                return r;
        /* Device nodes: on the simulated fleet there is no host node, so type and numbers are
         * given (NVIDIA's major); on a real host the runtime reads them from /dev. */
        for (unsigned i = 0; i < t->n_units; i++) {
                bool dup = false;
                for (unsigned j = 0; j < i; j++)
                        dup = dup || t->units[j].gpu == t->units[i].gpu;
                if (dup)
                        continue;
                snprintf(path, sizeof(path), "/dev/nvidia%u", t->units[i].gpu);
                if ((r = kerf_cdi_node_add(edits, path, NULL, n->simulated ? 'c' : 0, NVIDIA_MAJOR,
                                           (long)t->units[i].gpu)) < 0)
                        return r;
        }
        if ((r = kerf_cdi_node_add(edits, "/dev/nvidiactl", NULL, n->simulated ? 'c' : 0,
                                   NVIDIA_MAJOR, 255)) < 0)
                return r;
        if (!n->simulated) {
                static const char *const uvm[] = {"/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"};
                for (unsigned i = 0; i < 2; i++)
                        if (access(uvm[i], F_OK) == 0 &&
                            (r = kerf_cdi_node_add(edits, uvm[i], NULL, 0, 0, 0)) < 0)
                                return r;
        }
        snprintf(path, sizeof(path), "%s/kerf", n->exe_dir);
        if (n->cfg.socket[0] && access(path, X_OK) == 0) {
                char id[24];
                snprintf(id, sizeof(id), "%" PRIu64, t->rec.id);
                const char *args[] = {"kerf",    "--socket", n->cfg.socket, "cdi",
                                      "release", id,         NULL};
                if ((r = kerf_cdi_hook_add(edits, "poststop", path, args)) < 0)
                        return r;
        }
        return 0;
}

int kerfd__cdi_task_write(kerfd_node *n, dtask *t)
{
        char name[48], file[400], err[512] = "";
        json_t *spec, *edits;
        int r;

        if (!wants_spec(n, t))
                return 0;
        snprintf(name, sizeof(name), "task-%" PRIu64, t->rec.id);
        spec = kerf_cdi_spec_new(n->cfg.cdi_kind);
        edits = spec ? kerf_cdi_device_add(spec, name) : NULL;
        r = edits ? build(n, t, edits) : -EINVAL;
        if (r == 0 && (r = kerf_cdi_file_name(n->cfg.cdi_kind, name, file, sizeof(file))) == 0)
                r = kerf_cdi_spec_write(n->cfg.cdi_dir, file, spec, err, sizeof(err));
        json_decref(spec);
        if (r < 0) {
                log_error("task %" PRIu64 ": CDI spec not written: %s", t->rec.id,
                          err[0] ? err : strerror(-r));
                return r;
        }
        t->cdi_spec = true;
        log_info("task %" PRIu64 ": CDI device %s=%s in %s/%s", t->rec.id, n->cfg.cdi_kind, name,
                 n->cfg.cdi_dir, file);
        return 0;
}

void kerfd__cdi_task_remove(kerfd_node *n, dtask *t)
{
        char owner[24];
        int r;
        if (!t->cdi_spec)
                return;
        t->cdi_spec = false;
        owner_tag(n, owner, sizeof(owner));
        r = kerf_cdi_task_spec_remove(n->cfg.cdi_dir, n->cfg.cdi_kind, t->rec.id, owner);
        if (r < 0)
                log_warn("task %" PRIu64 ": CDI spec not removed: %s%s", t->rec.id, strerror(-r),
                         r == -EPERM ? " (the file there is not this kerfd's)" : "");
}

bool kerfd__cdi_device(const kerfd_node *n, const dtask *t, char *out, size_t cap)
{
        if (!t || !t->cdi_spec)
                return false;
        return (size_t)snprintf(out, cap, "%s=task-%" PRIu64, n->cfg.cdi_kind, t->rec.id) < cap;
}

static bool keep_live(uint64_t task, void *ctx)
{
        kerfd_node *n = ctx;
        dtask *t = kerfd__live(n, task);
        return t && t->cdi_spec;
}

void kerfd__cdi_recover(kerfd_node *n)
{
        char owner[24];
        int r;
        if (!n->cfg.cdi_enabled)
                return;
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;
        while (kerf_u64map_next(&n->live, &it, NULL, &val)) {
                dtask *t = val;
                if (wants_spec(n, t) && t->state == KERF_TASK_RUNNING)
                        (void)kerfd__cdi_task_write(n, t);
        }
        owner_tag(n, owner, sizeof(owner));
        r = kerf_cdi_sweep(n->cfg.cdi_dir, n->cfg.cdi_kind, owner, keep_live, n);
        if (r > 0)
                log_info("CDI: %d spec(s) of tasks that are gone removed from %s", r,
                         n->cfg.cdi_dir);
        else if (r < 0)
                log_warn("CDI: cannot read %s: %s", n->cfg.cdi_dir, strerror(-r));
}
