/* SPDX-License-Identifier: Apache-2.0 */
/* test_fence.c - device fencing when kerfd runs as root: a task on GPU N can open its
 * <devdir>/nvidiaN and gets EPERM on another GPU's node (mknod major 195 in a temp dir); an
 * attached process, and a process that joins its task, are moved into the task's fence (the
 * same rule for both) and back out when the task ends; a join the store cannot record leaves
 * no process in the fence */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static char fail_file[128]; /* member rows cannot be written while it exists */

/* A launcher's process: waits for a byte, tries to open <dev>/nvidia0..7, answers with the
 * mask of EPERM refusals, then idles (bounded). */
static pid_t probe_child(const char *dev, int *to, int *from)
{
        int a[2], b[2];
        pid_t p;
        assert_int_equal(pipe(a), 0);
        assert_int_equal(pipe(b), 0);
        p = fork();
        assert_true(p >= 0);
        if (p == 0) {
                struct pollfd pf = {.fd = a[0], .events = POLLIN};
                char c, path[128];
                unsigned char mask = 0;
                if (poll(&pf, 1, 30000) != 1 || read(a[0], &c, 1) != 1)
                        _exit(1);
                for (int i = 0; i < 8; i++) {
                        int fd;
                        snprintf(path, sizeof(path), "%s/nvidia%d", dev, i);
                        fd = open(path, O_RDONLY);
                        if (fd >= 0)
                                close(fd);
                        else if (errno == EPERM)
                                mask |= (unsigned char)(1u << i);
                }
                if (write(b[1], &mask, 1) != 1)
                        _exit(1);
                for (int i = 0; i < 600; i++)
                        usleep(100000);
                _exit(0);
        }
        close(a[0]);
        close(b[1]);
        *to = a[1];
        *from = b[0];
        return p;
}

static bool in_task_cgroup(pid_t p, unsigned long long id)
{
        char path[64], want[64], *s;
        bool in;
        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)p);
        snprintf(want, sizeof(want), "/task-%llu\n", id);
        s = kd_read(path);
        assert_non_null(s);
        in = strstr(s, want) != NULL;
        free(s);
        return in;
}

/* Asks a probe_child for its mask of refused GPUs. */
static unsigned char probe(int to, int from)
{
        char c = 'x';
        unsigned char mask = 0;
        struct pollfd pf = {.fd = from, .events = POLLIN};
        assert_int_equal(write(to, &c, 1), 1);
        assert_int_equal(poll(&pf, 1, 10000), 1);
        assert_int_equal(read(from, &mask, 1), 1);
        return mask;
}

static void attach_fenced(kd *k, const char *dev)
{
        char body[256], path[96], c = 'x';
        unsigned char mask = 0;
        struct pollfd pf;
        int to, from, g;
        unsigned long long id;
        json_t *t;
        long s;
        pid_t p = probe_child(dev, &to, &from);

        snprintf(body, sizeof(body),
                 "{\"tenant\":\"alice\",\"workload\":\"training\",\"route\":\"whole\","
                 "\"pid\":%d,\"lease_s\":60}",
                 (int)p);
        t = kd_call(k, "POST", "/v1/attach", body, NULL, &s, NULL);
        assert_int_equal(s, 201);
        id = (unsigned long long)json_integer_value(json_object_get(t, "id"));
        assert_string_equal(json_string_value(json_object_get(t, "state")), "running");
        g = (int)json_integer_value(
            json_object_get(json_array_get(json_object_get(t, "units"), 0), "gpu"));
        json_decref(t);
        assert_true(in_task_cgroup(p, id));
        assert_int_equal(write(to, &c, 1), 1);
        pf.fd = from;
        pf.events = POLLIN;
        assert_int_equal(poll(&pf, 1, 10000), 1);
        assert_int_equal(read(from, &mask, 1), 1);
        assert_true(mask & (1u << ((g + 1) % 8))); /* another GPU: refused */
        assert_false(mask & (1u << g));            /* its own: allowed */

        /* a join the store cannot record: 507, and the process is not left in the fence */
        int rto, rfrom, qto, qfrom, fd = open(fail_file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        pid_t r = probe_child(dev, &rto, &rfrom), q = probe_child(dev, &qto, &qfrom);
        assert_true(fd >= 0);
        close(fd);
        snprintf(path, sizeof(path), "/v1/tasks/%llu/join", id);
        snprintf(body, sizeof(body), "{\"pid\":%d}", (int)r);
        json_decref(kd_call(k, "POST", path, body, NULL, &s, NULL));
        assert_int_equal(s, 507);
        assert_false(in_task_cgroup(r, id));
        unlink(fail_file);
        /* another process joins: in the same fence, under the same rule */
        snprintf(body, sizeof(body), "{\"pid\":%d}", (int)q);
        for (int i = 0; i < 50; i++) { /* once kerfd's probe finds the store writable */
                json_decref(kd_call(k, "POST", path, body, NULL, &s, NULL));
                if (s != 507)
                        break;
                kd_sleep_ms(100);
        }
        assert_int_equal(s, 200);
        assert_true(in_task_cgroup(q, id));
        mask = probe(qto, qfrom);
        assert_true(mask & (1u << ((g + 1) % 8)));
        assert_false(mask & (1u << g));
        snprintf(path, sizeof(path), "/v1/tasks/%llu/cancel", id);
        json_decref(kd_call(k, "POST", path, NULL, NULL, &s, NULL));
        assert_int_equal(s, 200);
        t = kd_wait_task(k, id, NULL, 10000);
        assert_non_null(t);
        json_decref(t);
        assert_true(kd_pid_alive(p)); /* not signalled: its launcher owns it */
        assert_false(in_task_cgroup(p, id));
        assert_true(kd_pid_alive(q)); /* the member too: back in its own cgroup */
        assert_false(in_task_cgroup(q, id));
        pid_t all[3] = {p, q, r};
        int fds[6] = {to, from, qto, qfrom, rto, rfrom};
        for (int i = 0; i < 3; i++) {
                kill(all[i], SIGKILL);
                waitpid(all[i], NULL, 0);
        }
        for (int i = 0; i < 6; i++)
                close(fds[i]);
}

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
        snprintf(fail_file, sizeof(fail_file), "/tmp/kerf-it-fence-fail-%d", (int)getpid());
        snprintf(path, sizeof(path), "member_add@%s", fail_file);
        setenv("KERFD_TEST_STORE_FAIL", path, 1);
        kd_setup(&k, extra);
        unsetenv("KERFD_TEST_STORE_FAIL");
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
        attach_fenced(&k, dev);
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
