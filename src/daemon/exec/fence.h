/* SPDX-License-Identifier: Apache-2.0 */
/* fence.h - per-task device fencing with cgroups (v2 device eBPF program or v1 devices) */
#ifndef KERF_DAEMON_FENCE_H
#define KERF_DAEMON_FENCE_H

/*
 * When kerfd runs as root, each task gets its own cgroup under a kerf cgroup root
 * (<root>/task-<id>) whose device rules let it open only its unit's NVIDIA device nodes plus
 * the control nodes (nvidiactl, nvidia-uvm, nvidia-uvm-tools). Every other NVIDIA character
 * device (major 195, and the majors /proc/devices names "nvidia*", and the majors of the
 * nvidia* nodes found in the device directory) is denied; non-NVIDIA devices (/dev/null,
 * ttys, ...) are left alone. This is what Slurm's ConstrainDevices does for GPUs.
 *
 *  - cgroup v2: a BPF_PROG_TYPE_CGROUP_DEVICE program, generated per task, attached to the
 *    task cgroup with BPF_CGROUP_DEVICE and BPF_F_ALLOW_MULTI (programs of ancestors, e.g.
 *    systemd's DevicePolicy, still apply: all must allow).
 *  - cgroup v1: the devices controller: "a" denied, then every char major of /proc/devices
 *    that is not NVIDIA allowed ("c M:* rwm"), block devices and mknod allowed, and the
 *    unit's nodes allowed one by one.
 *
 * Linux-specific (cgroups, bpf(2)). The child joins the cgroup between fork and execve
 * (kerf_fence_procs_fd), before it drops privileges.
 *
 * Call graph in kerfd:
 *   kerf_fence_ctx_new()        at start-up (root only); -KERF_EUNSUPP: run without fences
 *   kerf_fence_new()            before kerf_exec_start() of a task with a GPU unit
 *   kerf_fence_open()           recovery: re-adopt the cgroup of a live task
 *   kerf_fence_destroy()        after kerf_exec_reap() reported the task ended
 *   kerf_fence_sweep()          recovery: remove task cgroups no live task owns
 *
 * Thread-safety: none; used from the daemon's loop only.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct kerf_fence_ctx kerf_fence_ctx;
typedef struct kerf_fence kerf_fence;

typedef enum kerf_fence_mode {
        KERF_FENCE_AUTO = 0, /* detect: pure v2, else v1 devices, else hybrid v2 (unified) */
        KERF_FENCE_V2,       /* cgroup v2 + BPF_CGROUP_DEVICE */
        KERF_FENCE_V1,       /* cgroup v1 devices controller */
} kerf_fence_mode;

typedef struct kerf_fence_config {
        kerf_fence_mode mode;
        /* Directory under which task cgroups are made, created if missing. NULL: for v2
         * "<v2 mount>/kerf" (/sys/fs/cgroup/kerf, or /sys/fs/cgroup/unified/kerf on a hybrid
         * host); for v1 "/sys/fs/cgroup/devices/kerf". Must be inside a cgroup2 mount (v2)
         * or a v1 mount with the devices controller (v1). Under systemd, point it at the
         * kerfd unit's delegated subtree (Delegate=yes). */
        const char *cgroup_root;
        const char *dev_dir;      /* where nvidia* nodes live; NULL = "/dev" (tests: a temp dir) */
        const char *proc_devices; /* NULL = "/proc/devices" */
} kerf_fence_config;

/* Detects and prepares fencing. Returns 0 and *ret, or -EPERM (not root), -KERF_EUNSUPP
 * (no usable cgroup v2 with device programs nor v1 devices controller, or the forced mode
 * is unavailable), -EINVAL, -ENOMEM, -errno of mkdir on the root. Free with
 * kerf_fence_ctx_free(). */
int kerf_fence_ctx_new(const kerf_fence_config *cfg, kerf_fence_ctx **ret);
kerf_fence_ctx *kerf_fence_ctx_free(kerf_fence_ctx *ctx);

kerf_fence_mode kerf_fence_ctx_mode(const kerf_fence_ctx *ctx);
const char *kerf_fence_mode_name(kerf_fence_mode m); /* "auto", "v2", "v1" */
/* The cgroup root directory in use; owned by ctx. */
const char *kerf_fence_ctx_root(const kerf_fence_ctx *ctx);

/* Creates the cgroup <root>/task-<task_id> allowing only `devices`: paths relative to the
 * dev dir, e.g. {"nvidia0"} for a whole GPU or a slice, {"nvidia0",
 * "nvidia-caps/nvidia-cap21", "nvidia-caps/nvidia-cap22"} for a MIG instance
 * (kerf_fence_mig_cap_minors). Each must be a character device (stat); "..", absolute
 * paths and empty names are refused. The control nodes are added when they exist.
 * An existing cgroup of the same name (leftover) is reused if empty, else -EEXIST.
 * Returns 0 and *ret, or -EINVAL, -ENOENT (a unit node is missing), -ENODEV (a path is
 * not a character device), -E2BIG (too many devices), -EEXIST, -ENOMEM, -errno from
 * cgroupfs or bpf(2). On failure nothing is left behind. Free with kerf_fence_destroy() or
 * kerf_fence_free(). */
int kerf_fence_new(kerf_fence_ctx *ctx, uint64_t task_id, const char *const *devices,
                   size_t n_devices, kerf_fence **ret);

/* Re-opens the cgroup of a task created by an earlier kerfd (its device rules, and the v2
 * program, stay attached to the cgroup). Returns 0 and *ret, -ENOENT, -ENOMEM. */
int kerf_fence_open(kerf_fence_ctx *ctx, uint64_t task_id, kerf_fence **ret);

/* The cgroup directory path; owned by the fence. */
const char *kerf_fence_path(const kerf_fence *f);
uint64_t kerf_fence_task_id(const kerf_fence *f);

/* Opens <cgroup>/cgroup.procs for writing, O_CLOEXEC, for a child to write its pid into
 * between fork and execve. The caller closes it. Returns the fd or -errno. */
int kerf_fence_procs_fd(const kerf_fence *f);

/* Adds process `pid` to the cgroup (from kerfd, e.g. for an attached task). 0 or -errno. */
int kerf_fence_add_pid(const kerf_fence *f, pid_t pid);

/* Sends `sig` to every process in the cgroup (SIGKILL: cgroup.kill where the kernel has
 * it). Returns the number of processes signalled (>= 0) or -errno. */
int kerf_fence_kill(const kerf_fence *f, int sig);

/* True when no process (zombies excepted) is left in the cgroup; an unreadable cgroup
 * counts as empty. */
bool kerf_fence_empty(const kerf_fence *f);

/* Reclaims: kills what is left (SIGKILL), detaches the program, removes the cgroup, frees
 * the fence. Returns 0, or -KERF_EINUSE if processes did not leave (the fence is then still
 * valid and owned by the caller: retry later), or -errno of rmdir (fence freed). NULL -> 0. */
int kerf_fence_destroy(kerf_fence *f);

/* Frees the handle only; the cgroup and its rules stay (kerfd shutdown). NULL -> NULL. */
kerf_fence *kerf_fence_free(kerf_fence *f);

/* Removes task cgroups under the root whose task id is not in keep[] and that are empty
 * (recovery after a crash). Returns the number removed or -errno. */
int kerf_fence_sweep(kerf_fence_ctx *ctx, const uint64_t *keep, size_t n_keep);

/* Looks up the nvidia-caps minors of a MIG instance in a mig-minors file (default
 * /proc/driver/nvidia-caps/mig-minors when path is NULL; lines "gpu0/gi1/access 21",
 * "gpu0/gi1/ci0/access 22"). Returns 0 with *ret_gi_minor and *ret_ci_minor, -ENOENT if a
 * line is missing, -errno on read errors. The nodes are then
 * "nvidia-caps/nvidia-cap<minor>". */
int kerf_fence_mig_cap_minors(const char *path, unsigned gpu_minor, unsigned gi, unsigned ci,
                              unsigned *ret_gi_minor, unsigned *ret_ci_minor);

/* ---- private to fence*.c ------------------------------------------------------------------ */
#define KERF__FENCE_MAX_DEVICES 64  /* allowed nodes per fence, control nodes included */
#define KERF__FENCE_MAX_MAJORS  16  /* NVIDIA majors */
#define KERF__FENCE_MAX_INSNS   256 /* enough for the maxima above */
struct bpf_insn;
/* Writes the device program for the NVIDIA `majors` and the allowed (major, minor) pairs to
 * insn[cap]; returns the instruction count or -E2BIG/-EINVAL. */
int kerf__fence_bpf_build(const uint32_t *majors, size_t n_majors, const uint32_t (*allow)[2],
                          size_t n_allow, struct bpf_insn *insn, size_t cap);
int kerf__fence_bpf_load(const struct bpf_insn *insn, size_t n); /* prog fd or -errno */
int kerf__fence_bpf_attach(int cgroup_fd, int prog_fd);
int kerf__fence_bpf_detach(int cgroup_fd, int prog_fd);
int kerf__fence_bpf_probe(void); /* 0 when device programs can be loaded */

#endif /* KERF_DAEMON_FENCE_H */
