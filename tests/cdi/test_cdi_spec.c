/* SPDX-License-Identifier: Apache-2.0 */
/* test_cdi_spec.c - the CDI spec library: name and kind charsets, UUID mapping, the 0.5.0
 * shape (only fields podman 4.3 accepts), refusal of bad input, atomic write, and removal of
 * only the files kerf wrote */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kerf_cdi.h"

static void test_names(void **st)
{
        char out[160];
        (void)st;
        assert_true(kerf_cdi_kind_ok("kerf.dev/gpu"));
        assert_true(kerf_cdi_kind_ok("a.b-c.io/x_y.z-1"));
        assert_false(kerf_cdi_kind_ok("gpu"));
        assert_false(kerf_cdi_kind_ok("/gpu"));
        assert_false(kerf_cdi_kind_ok("kerf.dev/"));
        assert_false(kerf_cdi_kind_ok("kerf.dev/gpu/x"));
        assert_false(kerf_cdi_kind_ok("kerf..dev/gpu"));
        assert_false(kerf_cdi_kind_ok("-kerf.dev/gpu"));
        assert_false(kerf_cdi_kind_ok("kerf_dev/gpu"));
        assert_false(kerf_cdi_kind_ok("kerf.dev/gpu-"));
        assert_false(kerf_cdi_kind_ok(NULL));
        assert_true(kerf_cdi_name_ok("task-7"));
        assert_true(kerf_cdi_name_ok("0"));
        assert_true(kerf_cdi_name_ok("GPU-8a1f2b3c-0000-4000-8000-000000000001"));
        assert_false(kerf_cdi_name_ok(""));
        assert_false(kerf_cdi_name_ok("a b"));
        assert_false(kerf_cdi_name_ok("-a"));
        assert_false(kerf_cdi_name_ok("a/"));
        assert_false(kerf_cdi_name_ok("a=b"));
        /* UUIDs: GPU and new-style MIG pass as they are; old MIG ids have '/' */
        assert_int_equal(kerf_cdi_name_from_uuid("GPU-12ab-34", out, sizeof(out)), 0);
        assert_string_equal(out, "GPU-12ab-34");
        assert_int_equal(kerf_cdi_name_from_uuid("MIG-GPU-12ab/1/0", out, sizeof(out)), 0);
        assert_string_equal(out, "MIG-GPU-12ab_1_0");
        assert_true(kerf_cdi_name_ok(out));
        assert_int_equal(kerf_cdi_name_from_uuid("GPU-1 2", out, sizeof(out)), 0);
        assert_string_equal(out, "GPU-1_2");
        assert_int_equal(kerf_cdi_name_from_uuid("", out, sizeof(out)), -EINVAL);
        assert_int_equal(kerf_cdi_name_from_uuid("/x", out, sizeof(out)), -EINVAL);
        assert_int_equal(kerf_cdi_name_from_uuid("GPU-12ab-34", out, 5), -ENAMETOOLONG);
        assert_int_equal(kerf_cdi_file_name("kerf.dev/gpu", NULL, out, sizeof(out)), 0);
        assert_string_equal(out, "kerf.dev-gpu.json");
        assert_int_equal(kerf_cdi_file_name("kerf.dev/gpu", "task-3", out, sizeof(out)), 0);
        assert_string_equal(out, "kerf.dev-gpu_task-3.json");
        assert_int_equal(kerf_cdi_file_name("kerf.dev/gpu", "../x", out, sizeof(out)), -EINVAL);
        assert_int_equal(kerf_cdi_dir_check("/var/run/cdi", NULL, 0), 0);
        assert_int_equal(kerf_cdi_dir_check("var/run/cdi", NULL, 0), -EINVAL);
        assert_int_equal(kerf_cdi_dir_check("/", NULL, 0), -EINVAL);
        assert_int_equal(kerf_cdi_dir_check("/etc/../tmp", NULL, 0), -EINVAL);
        assert_int_equal(kerf_cdi_dir_check("/etc//cdi", NULL, 0), -EINVAL);
        assert_int_equal(kerf_cdi_dir_check("/etc/cdi/..", NULL, 0), -EINVAL);
}

/* A task spec as kerfd builds one. */
static json_t *task_spec(const char *kind, unsigned id, const char *owner)
{
        char name[32], v[32];
        json_t *s = kerf_cdi_spec_new(kind), *e;
        const char *args[] = {"kerf", "cdi", "release", "1", NULL};
        snprintf(name, sizeof(name), "task-%u", id);
        snprintf(v, sizeof(v), "%u", id);
        e = kerf_cdi_device_add(s, name);
        assert_non_null(e);
        assert_int_equal(kerf_cdi_env_add(e, "KERF_TASK_ID", v), 0);
        assert_int_equal(kerf_cdi_env_add(e, KERF_CDI_OWNER_ENV, owner), 0);
        assert_int_equal(kerf_cdi_env_add(e, "CUDA_VISIBLE_DEVICES", "GPU-1"), 0);
        assert_int_equal(kerf_cdi_node_add(e, "/dev/nvidia0", NULL, 'c', 195, 0), 0);
        assert_int_equal(kerf_cdi_node_add(e, "/dev/nvidiactl", NULL, 0, 0, 0), 0);
        assert_int_equal(kerf_cdi_mount_add(e, "/var/lib/kerf/slices/task-1.slice",
                                            "/var/lib/kerf/slices/task-1.slice", false),
                         0);
        assert_int_equal(kerf_cdi_hook_add(e, "poststop", "/usr/bin/kerf", args), 0);
        return s;
}

static void test_shape(void **st)
{
        char err[256];
        json_t *s = task_spec("kerf.dev/gpu", 1, "abc"), *d, *e;
        const char *k;
        json_t *v;
        (void)st;
        assert_int_equal(kerf_cdi_spec_check(s, err, sizeof(err)), 0);
        assert_string_equal(json_string_value(json_object_get(s, "cdiVersion")), "0.5.0");
        /* only the 0.5.0 fields: no annotations, intelRdt, additionalGids */
        json_object_foreach(s, k, v)
            assert_true(!strcmp(k, "cdiVersion") || !strcmp(k, "kind") || !strcmp(k, "devices"));
        d = json_array_get(json_object_get(s, "devices"), 0);
        assert_int_equal(json_object_size(d), 2);
        e = json_object_get(d, "containerEdits");
        json_t *n0 = json_array_get(json_object_get(e, "deviceNodes"), 0);
        assert_string_equal(json_string_value(json_object_get(n0, "type")), "c");
        assert_int_equal(json_integer_value(json_object_get(n0, "major")), 195);
        json_t *n1 = json_array_get(json_object_get(e, "deviceNodes"), 1);
        assert_int_equal(json_object_size(n1), 1); /* path only: read from the host */
        json_t *m = json_array_get(json_object_get(e, "mounts"), 0);
        assert_string_equal(json_string_value(json_array_get(json_object_get(m, "options"), 0)),
                            "rw");
        assert_string_equal(json_string_value(json_array_get(json_object_get(m, "options"), 1)),
                            "bind");
        /* refusals by the builder */
        assert_null(kerf_cdi_device_add(s, "task-1")); /* twice */
        assert_null(kerf_cdi_device_add(s, "bad name"));
        assert_null(kerf_cdi_spec_new("nokind"));
        assert_int_equal(kerf_cdi_env_add(e, "1X", "v"), -EINVAL);
        assert_int_equal(kerf_cdi_env_add(e, "A=B", "v"), -EINVAL);
        assert_int_equal(kerf_cdi_env_add(e, "A", "line\nbreak"), -EINVAL);
        assert_int_equal(kerf_cdi_node_add(e, "dev/nvidia0", NULL, 0, 0, 0), -EINVAL);
        assert_int_equal(kerf_cdi_node_add(e, "/dev/x", NULL, 'x', 1, 1), -EINVAL);
        assert_int_equal(kerf_cdi_mount_add(e, "relative", "/x", true), -EINVAL);
        assert_int_equal(kerf_cdi_hook_add(e, "poststart", "/bin/true", NULL), -EINVAL);
        assert_int_equal(kerf_cdi_hook_add(e, "poststop", "true", NULL), -EINVAL);
        /* refusals by the check: a newer field, bad version, empty edits, bad env */
        json_object_set_new(s, "annotations", json_object());
        assert_int_equal(kerf_cdi_spec_check(s, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "annotations"));
        json_object_del(s, "annotations");
        json_object_set_new(e, "additionalGids", json_array());
        assert_int_equal(kerf_cdi_spec_check(s, err, sizeof(err)), -EINVAL);
        json_object_del(e, "additionalGids");
        json_object_set_new(s, "cdiVersion", json_string("0.6.0"));
        assert_int_equal(kerf_cdi_spec_check(s, err, sizeof(err)), -EINVAL);
        json_object_set_new(s, "cdiVersion", json_string("0.5.0"));
        json_array_append_new(json_object_get(e, "env"), json_string("NOEQUALS"));
        assert_int_equal(kerf_cdi_spec_check(s, err, sizeof(err)), -EINVAL);
        assert_non_null(strstr(err, "NOEQUALS"));
        json_decref(s);
        s = kerf_cdi_spec_new("kerf.dev/gpu");
        assert_int_equal(kerf_cdi_spec_check(s, err, sizeof(err)), -EINVAL); /* no device */
        kerf_cdi_device_add(s, "x");
        assert_int_equal(kerf_cdi_spec_check(s, err, sizeof(err)), -EINVAL); /* empty edits */
        assert_non_null(strstr(err, "empty device edits"));
        json_decref(s);
}

static int count_entries(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        int n = 0;
        while (d && (e = readdir(d)))
                n += e->d_name[0] != '.' || (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."));
        if (d)
                closedir(d);
        return n;
}

static bool keep_odd(uint64_t task, void *ctx)
{
        (void)ctx;
        return task % 2;
}

static void test_files(void **st)
{
        char dir[] = "/tmp/kerf-cdi-unit-XXXXXX", sub[64], path[256], err[256];
        json_t *s, *back;
        struct stat sb;
        uint64_t id = 0;
        (void)st;
        assert_non_null(mkdtemp(dir));
        snprintf(sub, sizeof(sub), "%s/specs", dir); /* created by the write */
        s = task_spec("kerf.dev/gpu", 2, "me");
        assert_int_equal(kerf_cdi_spec_write(sub, "kerf.dev-gpu_task-2.json", s, err, sizeof(err)),
                         0);
        snprintf(path, sizeof(path), "%s/kerf.dev-gpu_task-2.json", sub);
        assert_int_equal(stat(path, &sb), 0);
        assert_int_equal(sb.st_mode & 0777, 0644);
        back = json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
        assert_true(json_equal(back, s));
        json_decref(back);
        assert_int_equal(count_entries(sub), 1); /* no temporary left */
        /* rewrite replaces it whole (rename) */
        assert_int_equal(kerf_cdi_spec_write(sub, "kerf.dev-gpu_task-2.json", s, err, sizeof(err)),
                         0);
        assert_int_equal(count_entries(sub), 1);
        /* refusals: bad names, bad dir, a spec that fails the check; nothing written */
        assert_int_equal(kerf_cdi_spec_write(sub, "../x.json", s, err, sizeof(err)), -EINVAL);
        assert_int_equal(kerf_cdi_spec_write(sub, "x.yaml", s, err, sizeof(err)), -EINVAL);
        assert_int_equal(kerf_cdi_spec_write("rel", "x.json", s, err, sizeof(err)), -EINVAL);
        json_t *bad = kerf_cdi_spec_new("kerf.dev/gpu");
        assert_int_equal(kerf_cdi_spec_write(sub, "x.json", bad, err, sizeof(err)), -EINVAL);
        json_decref(bad);
        assert_int_equal(count_entries(sub), 1);
        /* ownership: name pattern + kind + device + task id + owner tag */
        assert_int_equal(
            kerf_cdi_task_spec_owned(sub, "kerf.dev-gpu_task-2.json", "kerf.dev/gpu", "me", &id),
            1);
        assert_int_equal(id, 2);
        assert_int_equal(
            kerf_cdi_task_spec_owned(sub, "kerf.dev-gpu_task-2.json", "kerf.dev/gpu", "you", NULL),
            0);
        assert_int_equal(kerf_cdi_task_spec_remove(sub, "kerf.dev/gpu", 2, "you"), -EPERM);
        assert_int_equal(access(path, F_OK), 0);
        /* a file with our name whose content says another task: not ours */
        json_decref(s);
        s = task_spec("kerf.dev/gpu", 4, "me");
        assert_int_equal(kerf_cdi_spec_write(sub, "kerf.dev-gpu_task-5.json", s, err, sizeof(err)),
                         0);
        assert_int_equal(kerf_cdi_task_spec_remove(sub, "kerf.dev/gpu", 5, "me"), -EPERM);
        /* a link is never followed */
        snprintf(path, sizeof(path), "%s/kerf.dev-gpu_task-9.json", sub);
        char target[256];
        snprintf(target, sizeof(target), "%s/kerf.dev-gpu_task-2.json", sub);
        assert_int_equal(symlink(target, path), 0);
        assert_int_equal(
            kerf_cdi_task_spec_owned(sub, "kerf.dev-gpu_task-9.json", "kerf.dev/gpu", "me", NULL),
            0);
        /* more of ours; the sweep keeps odd ids, removes even ones, never others' */
        json_decref(s);
        s = task_spec("kerf.dev/gpu", 3, "me");
        assert_int_equal(kerf_cdi_spec_write(sub, "kerf.dev-gpu_task-3.json", s, err, sizeof(err)),
                         0);
        json_decref(s);
        s = task_spec("kerf.dev/gpu", 6, "me");
        assert_int_equal(kerf_cdi_spec_write(sub, "kerf.dev-gpu.json", s, err, sizeof(err)), 0);
        assert_int_equal(kerf_cdi_sweep(sub, "kerf.dev/gpu", "me", keep_odd, NULL), 1); /* 2 */
        snprintf(path, sizeof(path), "%s/kerf.dev-gpu_task-2.json", sub);
        assert_int_equal(access(path, F_OK), -1);
        snprintf(path, sizeof(path), "%s/kerf.dev-gpu_task-3.json", sub);
        assert_int_equal(access(path, F_OK), 0);
        assert_int_equal(kerf_cdi_task_spec_remove(sub, "kerf.dev/gpu", 3, "me"), 0);
        assert_int_equal(access(path, F_OK), -1);
        assert_int_equal(kerf_cdi_task_spec_remove(sub, "kerf.dev/gpu", 3, "me"), 0); /* absent */
        assert_int_equal(count_entries(sub), 3); /* task-5 (not ours), the link, the static one */
        json_decref(s);
        assert_int_equal(kerf_cdi_sweep("/nonexistent/kerf-cdi", "kerf.dev/gpu", "me", NULL, NULL),
                         0);
        const char *left[] = {"kerf.dev-gpu_task-5.json", "kerf.dev-gpu_task-9.json",
                              "kerf.dev-gpu.json"};
        for (unsigned i = 0; i < 3; i++) {
                snprintf(path, sizeof(path), "%s/%s", sub, left[i]);
                assert_int_equal(unlink(path), 0);
        }
        assert_int_equal(rmdir(sub), 0);
        assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_names),
                                           cmocka_unit_test(test_shape),
                                           cmocka_unit_test(test_files)};
        return cmocka_run_group_tests(tests, NULL, NULL);
}
