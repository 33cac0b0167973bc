/* SPDX-License-Identifier: Apache-2.0 */
/* test_simaccess.c - the simulated device group (backend.sim_gid, docs/SECURITY.md "The
 * simulated device"): a tenant without allow_root (an unprivileged hashed uid) runs a CUDA
 * program on a simulated slice and on a whole GPU; a uid outside the group cannot open the
 * simulated node; a node left by an earlier kerfd (0700) is given to the group at start, and
 * nothing kerfd did not make (a symlink) is touched */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define SIM_GID  1999999999u /* backend.sim_gid's default (KERFD_SIM_GID_DEFAULT) */
#define STRANGER 2100000000u /* an unprivileged uid: no tenant's, not in the group */

static kd K;
static char *carol, cuda_bin[400], sim_dir[400], state_file[420];

static int setup(void **st)
{
        char cmd[1200];
        (void)st;
        sec_need_root("tasks run as a tenant's unprivileged uid");
        kd_setup(&K, "  - name: carol\n");
        sec_open_dir(&K);
        /* the CUDA program where carol's uid can run it, whatever the build tree's modes */
        snprintf(cuda_bin, sizeof(cuda_bin), "%s/cuda_task", K.dir);
        snprintf(cmd, sizeof(cmd), "install -m 0755 '%s' '%s'", CUDA_TASK_BIN, cuda_bin);
        if (system(cmd) != 0)
                fail_msg("%s failed", cmd);
        snprintf(sim_dir, sizeof(sim_dir), "%s/state/sim", K.dir);
        snprintf(state_file, sizeof(state_file), "%s/state", sim_dir);
        carol = kd_token(&K, "carol");
        return 0;
}

static int teardown(void **st)
{
        (void)st;
        kd_stop(&K);
        kd_cleanup(&K);
        free(carol);
        return 0;
}

/* carol runs it_cuda_task on `route`; returns its final task object (caller decrefs). */
static void run_cuda(const char *route, const char *more)
{
        char body[1024], *err, *out;
        unsigned long long id;
        json_t *t;
        long s;

        snprintf(body, sizeof(body), "{\"route\":\"%s\"%s,\"command\":[\"%s\",\"0.3\",\"0\"]}",
                 route, more, cuda_bin);
        id = kd_submit(&K, body, carol);
        t = kd_wait_task(&K, id, NULL, 30000);
        assert_non_null(t);
        err = sec_logs(&K, id, "stderr");
        out = sec_logs(&K, id, "stdout");
        if (strcmp(json_string_value(json_object_get(t, "state")), "succeeded") != 0 ||
            !strstr(out, "cuda ok"))
                fail_msg("carol's CUDA task on %s: state %s, stdout \"%s\", stderr \"%s\"", route,
                         json_string_value(json_object_get(t, "state")), out, err);
        free(err);
        free(out);
        json_decref(t);
        /* it ran as carol's own unprivileged uid */
        json_t *ten = kd_call(&K, "GET", "/v1/tenants/carol", NULL, NULL, &s, NULL);
        assert_true(json_integer_value(json_object_get(json_object_get(ten, "runs_as"), "uid")) >=
                    65536);
        json_decref(ten);
}

static void test_unprivileged_slice(void **st)
{
        (void)st;
        run_cuda("slice", ",\"memory\":\"4GiB\",\"compute\":20");
}

static void test_unprivileged_whole(void **st)
{
        (void)st;
        run_cuda("whole", "");
}

/* The node and its state belong to root and the group, nobody else; the engine files tasks
 * made are the group's too. */
static void test_modes(void **st)
{
        struct stat sb;
        (void)st;
        assert_int_equal(lstat(sim_dir, &sb), 0);
        assert_true(S_ISDIR(sb.st_mode));
        assert_int_equal(sb.st_uid, 0);
        assert_int_equal(sb.st_gid, SIM_GID);
        assert_int_equal(sb.st_mode & 07777, 03770);
        assert_int_equal(lstat(state_file, &sb), 0);
        assert_true(S_ISREG(sb.st_mode));
        assert_int_equal(sb.st_uid, 0);
        assert_int_equal(sb.st_gid, SIM_GID);
        assert_int_equal(sb.st_mode & 07777, 0660);
        /* the runs made engine files as carol: the group's (setgid dir), 0660 whatever her
         * umask, so the next tenant's process on that device opens them */
        DIR *d = opendir(sim_dir);
        struct dirent *de;
        unsigned engines = 0;
        assert_non_null(d);
        while ((de = readdir(d))) {
                char p[700];
                if (strncmp(de->d_name, "cuda-engine-", 12) != 0)
                        continue;
                snprintf(p, sizeof(p), "%s/%s", sim_dir, de->d_name);
                assert_int_equal(lstat(p, &sb), 0);
                if (sb.st_gid != SIM_GID || (sb.st_mode & 07777) != 0660)
                        fail_msg("%s: gid %u mode %o", p, (unsigned)sb.st_gid,
                                 (unsigned)(sb.st_mode & 07777));
                engines++;
        }
        closedir(d);
        assert_true(engines > 0);
}

/* Opens path O_RDWR as uid STRANGER with (or without) the group; returns 0 or the errno. */
static int open_as(const char *path, bool with_group)
{
        pid_t p = fork();
        int ws;
        assert_true(p >= 0);
        if (p == 0) {
                gid_t g = SIM_GID;
                if (setgroups(with_group ? 1 : 0, &g) < 0 || setgid(STRANGER) < 0 ||
                    setuid(STRANGER) < 0)
                        _exit(200);
                int fd = open(path, O_RDWR | O_CLOEXEC);
                if (fd < 0)
                        _exit(errno & 0x7f);
                close(fd);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                _exit(fd < 0 ? 100 : 0);
        }
        assert_int_equal(waitpid(p, &ws, 0), p);
        assert_true(WIFEXITED(ws));
        return WEXITSTATUS(ws);
}

static void test_stranger_refused(void **st)
{
        (void)st;
        assert_int_equal(open_as(state_file, false), EACCES);
        /* the group is what lets a task in, not the uid */
        assert_int_equal(open_as(state_file, true), 0);
}

/* A node from an earlier kerfd (its dir 0700, the state 0600 root:root) is given to the group
 * at start; a symlink planted in it is left alone, and so is its target. */
static void test_fixup_at_start(void **st)
{
        char link[500], victim[420];
        struct stat sb;
        FILE *f;
        (void)st;

        kd_stop(&K);
        assert_int_equal(chown(sim_dir, 0, 0), 0);
        assert_int_equal(chmod(sim_dir, 0700), 0);
        assert_int_equal(chown(state_file, 0, 0), 0);
        assert_int_equal(chmod(state_file, 0600), 0);
        snprintf(victim, sizeof(victim), "%s/victim", K.dir);
        f = fopen(victim, "w");
        assert_non_null(f);
        fclose(f);
        assert_int_equal(chmod(victim, 0600), 0);
        snprintf(link, sizeof(link), "%s/cuda-engine-7--1--1", sim_dir);
        (void)unlink(link);
        assert_int_equal(symlink(victim, link), 0);
        kd_start(&K);

        assert_int_equal(lstat(sim_dir, &sb), 0);
        assert_int_equal(sb.st_gid, SIM_GID);
        assert_int_equal(sb.st_mode & 07777, 03770);
        assert_int_equal(lstat(state_file, &sb), 0);
        assert_int_equal(sb.st_gid, SIM_GID);
        assert_int_equal(sb.st_mode & 07777, 0660);
        assert_int_equal(stat(victim, &sb), 0);
        assert_int_equal(sb.st_gid, 0);
        assert_int_equal(sb.st_mode & 07777, 0600);
        assert_int_equal(unlink(link), 0);
        /* and carol's tasks run again */
        run_cuda("whole", "");
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_unprivileged_slice),
            cmocka_unit_test(test_unprivileged_whole),
            cmocka_unit_test(test_modes),
            cmocka_unit_test(test_stranger_refused),
            cmocka_unit_test(test_fixup_at_start),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
