/* SPDX-License-Identifier: Apache-2.0 */
/* probe.c - a small task program the executor tests start: reports what it sees and does */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static void write_pid(const char *path, pid_t pid)
{
        char tmp[4096];
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        FILE *f = fopen(tmp, "w");
        if (!f)
                _exit(90);
        fprintf(f, "%d\n", (int)pid);
        fclose(f);
        rename(tmp, path); /* the test sees the whole number or nothing */
}

/* A child ignoring SIGTERM that records its pid and waits to be killed. */
static void stubborn_child(const char *pidfile, int escape)
{
        pid_t pid = fork();
        if (pid == 0) {
                if (escape)
                        setsid(); /* leaves the task's process group: only a cgroup holds it */
                signal(SIGTERM, SIG_IGN);
                write_pid(pidfile, getpid());
                for (;;)
                        pause();
        }
        if (pid < 0)
                _exit(91);
}

int main(int argc, char **argv)
{
        if (argc < 2)
                return 64;
        const char *cmd = argv[1];
        if (strcmp(cmd, "exit") == 0 && argc == 3)
                return atoi(argv[2]);
        if (strcmp(cmd, "raise") == 0 && argc == 3) {
                raise(atoi(argv[2]));
                return 65;
        }
        if (strcmp(cmd, "env") == 0) {
                for (char **e = environ; *e; e++)
                        printf("%s\n", *e);
                return 0;
        }
        if (strcmp(cmd, "cwd") == 0) {
                char buf[4096];
                if (!getcwd(buf, sizeof(buf)))
                        return 66;
                printf("%s\n", buf);
                return 0;
        }
        if (strcmp(cmd, "echo") == 0 && argc == 4) {
                printf("%s\n", argv[2]);
                fprintf(stderr, "%s\n", argv[3]);
                return 0;
        }
        if (strcmp(cmd, "ids") == 0) {
                gid_t g[64];
                int n = getgroups(64, g);
                printf("%d %d %d\n", (int)getuid(), (int)getgid(), n);
                return 0;
        }
        if (strcmp(cmd, "stdin") == 0) {
                char c;
                return read(0, &c, 1) == 0 ? 0 : 67; /* /dev/null: EOF at once */
        }
        if (strcmp(cmd, "sleep") == 0) {
                for (;;)
                        pause();
        }
        /* tree PIDFILE: the leader and a grandchild both ignore SIGTERM. */
        if (strcmp(cmd, "tree") == 0 && argc == 3) {
                signal(SIGTERM, SIG_IGN);
                stubborn_child(argv[2], 0);
                for (;;)
                        pause();
        }
        /* orphan PIDFILE: leaves a stubborn child behind and exits 0. */
        if (strcmp(cmd, "orphan") == 0 && argc == 3) {
                stubborn_child(argv[2], 0);
                while (access(argv[2], F_OK) != 0)
                        usleep(1000);
                return 0;
        }
        /* escape PIDFILE: a child that leaves the process group with setsid(). */
        if (strcmp(cmd, "escape") == 0 && argc == 3) {
                stubborn_child(argv[2], 1);
                for (;;)
                        pause();
        }
        /* open PATH...: bit i of the exit code is set when opening PATH i gave EPERM (a
         * device cgroup refusal; other errors, e.g. ENXIO without a driver, pass). */
        if (strcmp(cmd, "open") == 0) {
                int code = 0;
                for (int i = 2; i < argc && i < 9; i++) {
                        int fd = open(argv[i], O_RDWR | O_CLOEXEC);
                        if (fd >= 0)
                                close(fd);
                        else if (errno == EPERM)
                                code |= 1 << (i - 2);
                        printf("%s %s\n", argv[i], fd >= 0 ? "ok" : strerror(errno));
                }
                return code;
        }
        return 64;
}
