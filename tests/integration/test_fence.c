/* SPDX-License-Identifier: Apache-2.0 */
/* test_fence.c - device fencing when kerfd runs as root: a task on GPU N can open its
 * <devdir>/nvidiaN and gets EPERM on another GPU's node (mknod major 195 in a temp dir) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "harness.h"

static void test_fence(void **st)
{
        char dev[64], extra[512], path[512], body[768], *log;
        unsigned long long id;
        json_t *t, *u;
        long s;
        int g, other;
        kd k;
        (void)st;

        if (geteuid() != 0) {
                fprintf(stderr, "skipped: device fencing needs root\n");
                skip();
        }
        snprintf(dev, sizeof(dev), "/tmp/kerf-it-dev-XXXXXX");
        assert_non_null(mkdtemp(dev));
        for (int i = 0; i < 8; i++) {
                snprintf(path, sizeof(path), "%s/nvidia%d", dev, i);
                assert_int_equal(mknod(path, S_IFCHR | 0666, makedev(195, (unsigned)i)), 0);
        }
        snprintf(path, sizeof(path), "%s/nvidiactl", dev);
        assert_int_equal(mknod(path, S_IFCHR | 0666, makedev(195, 255)), 0);
        snprintf(extra, sizeof(extra), "fencing:\n  mode: auto\n  dev_dir: %s\n", dev);
        kd_setup(&k, extra);
        log = kd_read(k.log);
        if (!log || !strstr(log, "device fencing: cgroup")) {
                fprintf(stderr, "skipped: no writable cgroup device support here\n");
                free(log);
                kd_stop(&k);
                kd_cleanup(&k);
                skip();
        }
        free(log);
        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"workload\":\"training\",\"command\":[\"/bin/sh\","
                 "\"-c\",\"i=0; while [ $i -lt 8 ]; do if (exec 3<%s/nvidia$i) 2>/dev/null; "
                 "then echo open$i=ok; else (exec 3<%s/nvidia$i) 2>&1 | grep -q 'not permitted' "
                 "&& echo open$i=EPERM || echo open$i=other; fi; i=$((i+1)); done; sleep 1\"]}",
                 dev, dev);
        id = kd_submit(&k, body, NULL);
        json_decref(kd_wait_task(&k, id, "running", 15000));
        snprintf(path, sizeof(path), "/v1/tasks/%llu", id);
        t = kd_call(&k, "GET", path, NULL, NULL, &s, NULL);
        u = json_array_get(json_object_get(t, "units"), 0);
        g = (int)json_integer_value(json_object_get(u, "gpu"));
        json_decref(t);
        t = kd_wait_task(&k, id, "succeeded", 15000);
        assert_non_null(t);
        json_decref(t);
        snprintf(path, sizeof(path), "%s/state/logs/%llu.out", k.dir, id);
        log = kd_read(path);
        assert_non_null(log);
        other = (g + 1) % 8;
        snprintf(path, sizeof(path), "open%d=EPERM", other);
        assert_non_null(strstr(log, path));
        snprintf(path, sizeof(path), "open%d=EPERM", g);
        assert_null(strstr(log, path)); /* its own node: not refused by the fence */
        free(log);
        kd_stop(&k);
        kd_cleanup(&k);
        snprintf(path, sizeof(path), "rm -rf '%s'", dev);
        assert_int_equal(system(path), 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_fence),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
