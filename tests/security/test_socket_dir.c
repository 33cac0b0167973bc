/* SPDX-License-Identifier: Apache-2.0 */
/* test_socket_dir.c - issue 8 S3: kerfd never changes a socket directory it did not create,
 * creates a missing one 0750 without following symlinks, and refuses (with a clear start
 * error) a directory others could write or that belongs to another user */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

/* A kd whose socket is `sock_rel` under a fresh temp dir (the harness puts it in the temp dir
 * itself). */
static void kd_prepare(kd *k, const char *sock_rel)
{
        FILE *f;
        memset(k, 0, sizeof(*k));
        snprintf(k->dir, sizeof(k->dir), "/tmp/kerf-sd-XXXXXX");
        assert_non_null(mkdtemp(k->dir));
        snprintf(k->sock, sizeof(k->sock), "%s/%s", k->dir, sock_rel);
        snprintf(k->cfg, sizeof(k->cfg), "%s/kerfd.yaml", k->dir);
        snprintf(k->log, sizeof(k->log), "%s/kerfd.log", k->dir);
        f = fopen(k->cfg, "w");
        assert_non_null(f);
        fprintf(f,
                "state_dir: %s/state\nsocket: %s\nfleet: %s/examples/fleet-8xh200.yaml\n"
                "backend:\n  simulated: true\nlimits:\n  grace_s: 2\n  tick_ms: 20\n"
                "policy:\n  unenforced_slices: allow\ntenants:\n  - name: alice\n",
                k->dir, k->sock, KERF_SOURCE_DIR);
        fclose(f);
}

/* Runs kerfd on k's config expecting it to refuse to start: returns its log. */
static char *kd_refused(kd *k)
{
        pid_t p = fork();
        int st = 0;
        assert_true(p >= 0);
        if (p == 0) {
                int fd = open(k->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
                if (fd >= 0) {
                        dup2(fd, 2);
                        dup2(fd, 1);
                }
                execl(KERFD_BIN, "kerfd", "-c", k->cfg, (char *)NULL);
                _exit(127);
        }
        for (int i = 0; i < 200; i++) {
                if (waitpid(p, &st, WNOHANG) == p)
                        break;
                kd_sleep_ms(50);
                if (i == 199) {
                        kill(p, SIGKILL);
                        waitpid(p, NULL, 0);
                        fail_msg("kerfd started although its socket directory is unsafe");
                }
        }
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 0);
        return kd_read(k->log);
}

static mode_t mode_of(const char *path)
{
        struct stat st;
        assert_int_equal(lstat(path, &st), 0);
        return st.st_mode & 07777;
}

/* socket: /tmp-like/kerfd.sock - a root-owned sticky 1777 directory is used as it is */
static void test_sticky_dir_unchanged(void **st)
{
        kd k;
        char dir[400];
        kd_prepare(&k, "shared/kerfd.sock");
        snprintf(dir, sizeof(dir), "%s/shared", k.dir);
        assert_int_equal(mkdir(dir, 0700), 0);
        assert_int_equal(chmod(dir, 01777), 0);
        kd_start(&k);
        assert_int_equal(mode_of(dir), 01777);
        assert_int_equal(mode_of(k.sock), 0660);
        kd_stop(&k);
        assert_int_equal(mode_of(dir), 01777);
        kd_cleanup(&k);
}

/* world-writable without the sticky bit: refused, left as it is */
static void test_writable_dir_refused(void **st)
{
        kd k;
        char dir[400], *log;
        kd_prepare(&k, "open/kerfd.sock");
        snprintf(dir, sizeof(dir), "%s/open", k.dir);
        assert_int_equal(mkdir(dir, 0700), 0);
        assert_int_equal(chmod(dir, 0777), 0);
        log = kd_refused(&k);
        assert_non_null(log);
        assert_non_null(strstr(log, "is writable by others"));
        free(log);
        assert_int_equal(mode_of(dir), 0777);
        kd_cleanup(&k);
}

/* group-writable without sticky: refused too */
static void test_group_writable_refused(void **st)
{
        kd k;
        char dir[400], *log;
        kd_prepare(&k, "grp/kerfd.sock");
        snprintf(dir, sizeof(dir), "%s/grp", k.dir);
        assert_int_equal(mkdir(dir, 0700), 0);
        assert_int_equal(chmod(dir, 0770), 0);
        log = kd_refused(&k);
        assert_non_null(strstr(log, "is writable by others"));
        free(log);
        assert_int_equal(mode_of(dir), 0770);
        kd_cleanup(&k);
}

/* another user's directory: refused, owner and mode unchanged */
static void test_foreign_dir_refused(void **st)
{
        kd k;
        char dir[400], *log;
        struct stat sb;
        if (geteuid() != 0) {
                fprintf(stderr, "not root: cannot make a directory of another user; skipped\n");
                skip();
        }
        kd_prepare(&k, "theirs/kerfd.sock");
        snprintf(dir, sizeof(dir), "%s/theirs", k.dir);
        assert_int_equal(mkdir(dir, 0755), 0);
        assert_int_equal(chown(dir, 65534, 65534), 0);
        log = kd_refused(&k);
        assert_non_null(strstr(log, "belongs to uid 65534"));
        free(log);
        assert_int_equal(lstat(dir, &sb), 0);
        assert_int_equal(sb.st_uid, 65534);
        assert_int_equal(sb.st_mode & 07777, 0755);
        kd_cleanup(&k);
}

/* the socket's directory is a symlink: never followed */
static void test_symlink_dir_refused(void **st)
{
        kd k;
        char dir[400], link[400], *log;
        kd_prepare(&k, "link/kerfd.sock");
        snprintf(dir, sizeof(dir), "%s/real", k.dir);
        snprintf(link, sizeof(link), "%s/link", k.dir);
        assert_int_equal(mkdir(dir, 0700), 0);
        assert_int_equal(symlink(dir, link), 0);
        log = kd_refused(&k);
        assert_non_null(strstr(log, "symbolic link"));
        free(log);
        snprintf(dir, sizeof(dir), "%s/real/kerfd.sock", k.dir);
        assert_int_not_equal(access(dir, F_OK), 0);
        kd_cleanup(&k);
}

/* a missing directory is created by kerfd (0750) and is then its own, also on restart */
static void test_missing_dir_created(void **st)
{
        kd k;
        char dir[400];
        kd_prepare(&k, "run/kerf/kerfd.sock");
        snprintf(dir, sizeof(dir), "%s/run/kerf", k.dir);
        kd_start(&k);
        assert_int_equal(mode_of(dir), 0750);
        kd_stop(&k);
        kd_start(&k);
        assert_int_equal(mode_of(dir), 0750);
        kd_stop(&k);
        kd_cleanup(&k);
}

/* something that is not kerfd's socket at the socket's name is not removed */
static void test_foreign_file_kept(void **st)
{
        kd k;
        char *log;
        int fd;
        kd_prepare(&k, "kerfd.sock");
        fd = open(k.sock, O_WRONLY | O_CREAT, 0600);
        assert_true(fd >= 0);
        close(fd);
        log = kd_refused(&k);
        assert_non_null(strstr(log, "is not a socket"));
        free(log);
        assert_int_equal(access(k.sock, F_OK), 0);
        kd_cleanup(&k);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_sticky_dir_unchanged),
            cmocka_unit_test(test_writable_dir_refused),
            cmocka_unit_test(test_group_writable_refused),
            cmocka_unit_test(test_foreign_dir_refused),
            cmocka_unit_test(test_symlink_dir_refused),
            cmocka_unit_test(test_missing_dir_created),
            cmocka_unit_test(test_foreign_file_kept),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
