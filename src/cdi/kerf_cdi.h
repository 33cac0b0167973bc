/* SPDX-License-Identifier: Apache-2.0 */
/* kerf_cdi.h - CDI (Container Device Interface) specs: building, checking, atomic writing and
 * removing kerf's spec files (docs/CLUSTER.md "Containers (CDI)") */
#ifndef KERF_CDI_H
#define KERF_CDI_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The newest version podman 4.3 accepts; no field newer than it is ever written. */
#define KERF_CDI_VERSION      "0.5.0"
#define KERF_CDI_KIND_DEFAULT "kerf.dev/gpu"
#define KERF_CDI_DIR_DEFAULT  "/var/run/cdi"
/* The variable every per-task spec of a kerfd carries: which kerfd wrote it (an owner tag). */
#define KERF_CDI_OWNER_ENV "KERF_CDI_OWNER"

/* A kind "vendor/class": vendor a DNS-like name ([A-Za-z0-9.-] labels, alphanumeric at both
 * ends), class 1..63 of [A-Za-z0-9_.-], alphanumeric at both ends. */
bool kerf_cdi_kind_ok(const char *kind);
/* A device name: 1..128 of [A-Za-z0-9_.-], alphanumeric at both ends. */
bool kerf_cdi_name_ok(const char *name);
/* The device name for a GPU or MIG UUID: every character outside [A-Za-z0-9_.-] becomes '_'
 * (a UUID never holds '_', so two UUIDs never map to one name). 0, or -EINVAL when the result
 * is not a valid name, -ENAMETOOLONG when it does not fit in cap. */
int kerf_cdi_name_from_uuid(const char *uuid, char *out, size_t cap);
/* An absolute, normalised spec directory ("/", "..", "." components and "//" refused). 0, or
 * -EINVAL with the reason in err. */
int kerf_cdi_dir_check(const char *dir, char *err, size_t errlen);

/* A new spec {cdiVersion, kind, devices: []}, or NULL when kind is not valid. Caller
 * json_decref()s it. */
json_t *kerf_cdi_spec_new(const char *kind);
/* The spec-wide containerEdits (created on first use), borrowed. */
json_t *kerf_cdi_spec_edits(json_t *spec);
/* Adds device `name`; returns its containerEdits (borrowed), or NULL when the name is invalid or
 * already in the spec. */
json_t *kerf_cdi_device_add(json_t *spec, const char *name);

/* Edits. Each returns 0, or -EINVAL when an argument is invalid (nothing added). */
/* env "NAME=value": NAME [A-Za-z_][A-Za-z0-9_]*, value without a newline. */
int kerf_cdi_env_add(json_t *edits, const char *name, const char *value);
/* A device node at absolute `path` in the container; host_path NULL = the same path. type 'c'
 * or 'b' with major/minor (then the host node is not read: a simulated fleet has none), or 0
 * to let the runtime read type and numbers from the host node. */
int kerf_cdi_node_add(json_t *edits, const char *path, const char *host_path, char type, long major,
                      long minor);
/* A bind mount of absolute host_path at absolute container_path, read-only when ro. */
int kerf_cdi_mount_add(json_t *edits, const char *host_path, const char *container_path, bool ro);
/* A hook: createRuntime, createContainer, startContainer or poststop; absolute path; args
 * NULL-terminated (args[0] the program name) or NULL. */
int kerf_cdi_hook_add(json_t *edits, const char *hook, const char *path, const char *const *args);

/* Checks a whole spec the way a strict CDI 0.5.0 loader does: version, kind, at least one
 * device, unique valid names, non-empty device edits, known fields only, absolute paths, valid
 * env entries. 0, or -EINVAL with the first fault in err. */
int kerf_cdi_spec_check(const json_t *spec, char *err, size_t errlen);

/* The file name for a spec of `kind`: "<vendor>-<class>.json", or with tag (a valid device
 * name) "<vendor>-<class>_<tag>.json". 0, -EINVAL, -ENAMETOOLONG. */
int kerf_cdi_file_name(const char *kind, const char *tag, char *out, size_t cap);
/* Writes spec (after kerf_cdi_spec_check) as dir/file atomically: a temporary file in dir,
 * fsync, mode 0644, rename over dir/file, fsync of dir. Creates dir (0755) when it is missing.
 * 0, or a negative errno with the reason in err; nothing is left behind on failure. */
int kerf_cdi_spec_write(const char *dir, const char *file, const json_t *spec, char *err,
                        size_t errlen);

/* Per-task specs: file "<vendor>-<class>_task-<id>.json" with the one device "task-<id>" whose
 * env holds KERF_TASK_ID=<id> and KERF_CDI_OWNER=<owner>. */
/* 1 when dir/file is such a spec of `kind` written for `owner` (*ret_task = its task id), 0
 * when it is not (another name, another kind or owner, or not a spec at all), < 0 on an
 * unreadable directory entry. A link is never followed. */
int kerf_cdi_task_spec_owned(const char *dir, const char *file, const char *kind, const char *owner,
                             uint64_t *ret_task);
/* Removes task `task`'s spec when it is `owner`'s; 0 (removed or absent), -EPERM (a file of that
 * name that is not owner's: left alone), or another negative errno. */
int kerf_cdi_task_spec_remove(const char *dir, const char *kind, uint64_t task, const char *owner);
/* Removes every spec of owner's in dir whose task `keep(task, ctx)` rejects. Returns how many
 * were removed, or a negative errno when dir cannot be read (a missing dir: 0). */
int kerf_cdi_sweep(const char *dir, const char *kind, const char *owner,
                   bool (*keep)(uint64_t task, void *ctx), void *ctx);

#endif /* KERF_CDI_H */
