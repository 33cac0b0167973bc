/* SPDX-License-Identifier: Apache-2.0 */
/* test_cdi.c - kerfd's CDI specs (cdi.enabled, a temp spec dir): an attached slice gets a
 * spec with its device task-N (contract env, region and library mounts, device nodes), removed
 * on cancel and on lease expiry; after kill -9 and a restart, the spec of a live task stays,
 * one of this kerfd's for a task that is gone is removed, and a file kerfd did not write is
 * left alone */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "kerf_cdi.h"

static pid_t child(void)
{
        pid_t p = fork();
        assert_true(p >= 0);
        if (p == 0) {
                for (int i = 0; i < 600; i++) /* bounded: 60 s at most */
                        usleep(100000);
                _exit(0);
        }
        return p;
}

static void reap(pid_t p)
{
        kill(p, SIGKILL);
        waitpid(p, NULL, 0);
}

static char specdir[256];
static char extra[512];

static void setup_kd(kd *k)
{
        snprintf(specdir, sizeof(specdir), "/tmp/kerf-it-cdi-XXXXXX");
        assert_non_null(mkdtemp(specdir));
        snprintf(extra, sizeof(extra), "cdi:\n  enabled: true\n  spec_dir: %s\n", specdir);
        kd_limits = "  min_lease_s: 1\n";
        kd_setup(k, extra);
        kd_limits = NULL;
}

static void spec_path(unsigned long long id, char *out, size_t cap)
{
        snprintf(out, cap, "%s/kerf.dev-gpu_task-%llu.json", specdir, id);
}

static unsigned long long attach(kd *k, pid_t c, unsigned lease, json_t **ret)
{
        char body[256];
        long s;
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"route\":\"slice\",\"memory\":\"2GiB\",\"compute\":20,"
                 "\"pid\":%d,\"lease_s\":%u}",
                 (int)c, lease);
        json_t *t = kd_call(k, "POST", "/v1/attach", body, NULL, &s, NULL);
        assert_int_equal(s, 201);
        assert_string_equal(json_string_value(json_object_get(t, "state")), "running");
        *ret = t;
        return (unsigned long long)json_integer_value(json_object_get(t, "id"));
}

static bool has_str(json_t *arr, const char *key, const char *want)
{
        for (size_t i = 0; i < json_array_size(arr); i++) {
                json_t *v = json_array_get(arr, i);
                const char *s = json_string_value(key ? json_object_get(v, key) : v);
                if (s && !strcmp(s, want))
                        return true;
        }
        return false;
}

static bool wait_gone(const char *path, unsigned ms)
{
        for (unsigned i = 0; i < ms / 50; i++) {
                if (access(path, F_OK) < 0)
                        return true;
                kd_sleep_ms(50);
        }
        return false;
}

static void test_cdi_spec_lifecycle(void **st)
{
        char path[512], want[4200], dev[64], err[256];
        json_t *t, *spec, *d, *e;
        long s;
        pid_t c = child(), c2 = child();
        kd k;
        (void)st;

        setup_kd(&k);
        unsigned long long id = attach(&k, c, 60, &t);
        snprintf(dev, sizeof(dev), "kerf.dev/gpu=task-%llu", id);
        assert_string_equal(json_string_value(json_object_get(t, "cdi_device")), dev);
        const char *region = json_string_value(json_object_get(t, "slice_region"));
        assert_non_null(region);
        spec_path(id, path, sizeof(path));
        struct stat sb;
        assert_int_equal(stat(path, &sb), 0);
        assert_int_equal(sb.st_mode & 0777, 0644);
        spec = json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
        assert_non_null(spec);
        assert_int_equal(kerf_cdi_spec_check(spec, err, sizeof(err)), 0);
        assert_string_equal(json_string_value(json_object_get(spec, "cdiVersion")), "0.5.0");
        assert_string_equal(json_string_value(json_object_get(spec, "kind")), "kerf.dev/gpu");
        d = json_array_get(json_object_get(spec, "devices"), 0);
        snprintf(dev, sizeof(dev), "task-%llu", id);
        assert_string_equal(json_string_value(json_object_get(d, "name")), dev);
        e = json_object_get(d, "containerEdits");
        /* the contract, as attach_env says it, without kerfd's socket */
        json_t *env = json_object_get(t, "attach_env");
        const char *name;
        json_t *v;
        json_object_foreach(env, name, v)
        {
                snprintf(want, sizeof(want), "%s=%s", name, json_string_value(v));
                assert_int_equal(has_str(json_object_get(e, "env"), NULL, want),
                                 strcmp(name, "KERF_SOCKET") != 0);
        }
        snprintf(want, sizeof(want), "KERF_SLICE_REGION=%s", region);
        assert_true(has_str(json_object_get(e, "env"), NULL, want));
        snprintf(want, sizeof(want), "KERF_SIM_DIR=%s/state/sim", k.dir);
        assert_true(has_str(json_object_get(e, "env"), NULL, want));
        assert_true(has_str(json_object_get(e, "mounts"), "containerPath", region));
        snprintf(want, sizeof(want), "%s/state/sim", k.dir);
        assert_true(has_str(json_object_get(e, "mounts"), "hostPath", want));
        assert_true(has_str(json_object_get(e, "deviceNodes"), "path", "/dev/nvidiactl"));
        snprintf(want, sizeof(want), "/dev/nvidia%lld",
                 (long long)json_integer_value(
                     json_object_get(json_array_get(json_object_get(t, "units"), 0), "gpu")));
        assert_true(has_str(json_object_get(e, "deviceNodes"), "path", want));
        json_decref(spec);
        json_decref(t);

        /* cancel: reclaimed, spec removed */
        snprintf(want, sizeof(want), "/v1/tasks/%llu/cancel", id);
        json_decref(kd_call(&k, "POST", want, NULL, NULL, &s, NULL));
        assert_int_equal(s, 200);
        assert_true(wait_gone(path, 2000));

        /* lease expiry: reclaimed, spec removed */
        id = attach(&k, c2, 1, &t);
        json_decref(t);
        spec_path(id, path, sizeof(path));
        assert_int_equal(access(path, F_OK), 0);
        assert_true(wait_gone(path, 5000));
        kd_stop(&k);
        kd_cleanup(&k);
        reap(c);
        reap(c2);
        rmdir(specdir);
}

/* Copies `from` to `to`, replacing every "task-A" / "KERF_TASK_ID=A" of task a by b. */
static void forge(const char *from, const char *to, unsigned long long a, unsigned long long b,
                  bool strip_owner)
{
        char *s = kd_read(from), olds[64], news[64];
        assert_non_null(s);
        json_t *spec = json_loads(s, 0, NULL);
        free(s);
        json_t *d = json_array_get(json_object_get(spec, "devices"), 0);
        snprintf(news, sizeof(news), "task-%llu", b);
        json_object_set_new(d, "name", json_string(news));
        json_t *env = json_object_get(json_object_get(d, "containerEdits"), "env");
        snprintf(olds, sizeof(olds), "KERF_TASK_ID=%llu", a);
        snprintf(news, sizeof(news), "KERF_TASK_ID=%llu", b);
        for (size_t i = 0; i < json_array_size(env); i++) {
                const char *v = json_string_value(json_array_get(env, i));
                if (!strcmp(v, olds))
                        json_array_set_new(env, i, json_string(news));
                else if (strip_owner && !strncmp(v, "KERF_CDI_OWNER=", 15))
                        json_array_set_new(env, i, json_string("KERF_CDI_OWNER=someone-else"));
        }
        assert_int_equal(json_dump_file(spec, to, JSON_INDENT(2)), 0);
        json_decref(spec);
}

static void test_cdi_restart_sweep(void **st)
{
        char live[512], gone[512], foreign[512], other[512];
        json_t *t;
        pid_t c = child();
        kd k;
        (void)st;

        setup_kd(&k);
        unsigned long long id = attach(&k, c, 60, &t);
        json_decref(t);
        spec_path(id, live, sizeof(live));
        kd_kill9(&k);
        spec_path(id + 100, gone, sizeof(gone));
        forge(live, gone, id, id + 100, false); /* this kerfd's, task gone */
        spec_path(id + 101, foreign, sizeof(foreign));
        forge(live, foreign, id, id + 101, true); /* another owner's */
        snprintf(other, sizeof(other), "%s/kerf.dev-gpu_task-%llu.json", specdir, id + 102);
        FILE *f = fopen(other, "w"); /* not a spec at all */
        assert_non_null(f);
        fputs("{\"hello\": 1}\n", f);
        fclose(f);
        kd_start(&k);
        assert_int_equal(access(live, F_OK), 0);
        assert_true(wait_gone(gone, 2000));
        assert_int_equal(access(foreign, F_OK), 0);
        assert_int_equal(access(other, F_OK), 0);
        /* the attached process ends: the task ends, its spec goes */
        reap(c);
        assert_true(wait_gone(live, 3000));
        assert_int_equal(access(foreign, F_OK), 0);
        kd_stop(&k);
        kd_cleanup(&k);
        unlink(foreign);
        unlink(other);
        assert_int_equal(rmdir(specdir), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_cdi_spec_lifecycle),
                                           cmocka_unit_test(test_cdi_restart_sweep)};
        return cmocka_run_group_tests(tests, NULL, NULL);
}
