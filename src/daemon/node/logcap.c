/* SPDX-License-Identifier: Apache-2.0 */
/* logcap.c - a running task's logs kept under retention.max_log_bytes: head and latest output
 * kept, the middle cut in place (docs/DAEMON.md "Retention", "Running tasks' logs") */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "node.h"

#define LOGCAP_EVERY_MS 1000

typedef struct lc_job {
        uint64_t task;
        char *path[2]; /* stdout, stderr (heap) */
        uint64_t cut[2];
} lc_job;

static uint64_t next_mono; /* the ticker's thread only */

uint64_t kerfd__logcap_keep(uint64_t max)
{
        return max / 4;
}

/* Cuts the log at `path` when it is over `max` bytes: its first keep bytes stay, a marker line
 * follows, then its last keep bytes (from the first line start among them), keep =
 * kerfd__logcap_keep(max). The task appends through O_APPEND descriptors, so after ftruncate
 * its next write lands at the new end: the marker and the tail are appended the same way, in
 * one writev. Bytes the task writes between the fstat and the ftruncate are lost, those written
 * between the ftruncate and the writev come before the marker. Returns the bytes removed (0:
 * under the cap) or -errno. */
static int64_t cut_log(const char *path, uint64_t max)
{
        uint64_t keep = kerfd__logcap_keep(max), size, from, removed;
        char marker[200], *tail = NULL;
        struct iovec iov[2];
        struct stat sb;
        ssize_t got;
        int64_t r = 0;
        int fd, k;

        fd = open(path, O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (fstat(fd, &sb) < 0) {
                r = -errno;
                goto out;
        }
        size = (uint64_t)sb.st_size;
        if (!S_ISREG(sb.st_mode) || size <= max)
                goto out;
        if (!(tail = malloc(keep))) {
                r = -ENOMEM;
                goto out;
        }
        got = pread(fd, tail, keep, (off_t)(size - keep));
        if (got < 0) {
                r = -errno;
                goto out;
        }
        from = 0; /* the tail from a line start, when one is in its first half */
        for (uint64_t i = 0; i < (uint64_t)got / 2; i++)
                if (tail[i] == '\n') {
                        from = i + 1;
                        break;
                }
        removed = size - keep - ((uint64_t)got - from);
        k = snprintf(marker, sizeof(marker),
                     "\n[kerf: log cut while running by retention.max_log_bytes (%" PRIu64
                     " bytes); %" PRIu64 " bytes removed here]\n",
                     max, removed);
        iov[0] = (struct iovec){marker, (size_t)k};
        iov[1] = (struct iovec){tail + from, (size_t)got - from};
        if (ftruncate(fd, (off_t)keep) < 0 || writev(fd, iov, 2) < 0) {
                r = -errno;
                goto out;
        }
        r = (int64_t)removed;
out:
        free(tail);
        close(fd);
        return r;
}

void kerfd__logcap_tick(kerfd_node *n)
{
        uint64_t max = n->cfg.retention.max_log_bytes, mono = kerfd_mono_ms();
        lc_job *jobs = NULL;
        size_t nj = 0, cap = 0;

        if (!max || mono < next_mono)
                return;
        next_mono = mono + LOGCAP_EVERY_MS;
        kerf_u64map_iter it = KERF_U64MAP_ITER_INIT;
        void *val;
        while (kerf_u64map_next(&n->live, &it, NULL, &val)) {
                dtask *t = val;
                if (!t->in_exec || (!t->rec.log_stdout && !t->rec.log_stderr))
                        continue;
                if (nj == cap) {
                        size_t nc = cap ? cap * 2 : 16;
                        lc_job *nb = realloc(jobs, nc * sizeof(*jobs));
                        if (!nb)
                                break;
                        jobs = nb;
                        cap = nc;
                }
                memset(&jobs[nj], 0, sizeof(jobs[nj]));
                jobs[nj].task = t->rec.id;
                jobs[nj].path[0] = t->rec.log_stdout ? strdup(t->rec.log_stdout) : NULL;
                jobs[nj].path[1] = t->rec.log_stderr ? strdup(t->rec.log_stderr) : NULL;
                nj++;
        }
        if (!nj) {
                free(jobs);
                return;
        }
        /* the file work without n->mu: only the job list is used meanwhile */
        pthread_mutex_unlock(&n->mu);
        for (size_t j = 0; j < nj; j++)
                for (int s = 0; s < 2; s++) {
                        int64_t r = jobs[j].path[s] ? cut_log(jobs[j].path[s], max) : 0;
                        if (r > 0)
                                jobs[j].cut[s] = (uint64_t)r;
                        else if (r < 0)
                                log_warn("task %" PRIu64 ": cannot cap its log %s: %s",
                                         jobs[j].task, jobs[j].path[s], strerror((int)-r));
                }
        pthread_mutex_lock(&n->mu);
        for (size_t j = 0; j < nj; j++) {
                for (int s = 0; s < 2; s++) {
                        if (jobs[j].cut[s])
                                kerfd__event(
                                    n, "log_cut", -1, 0, jobs[j].task, 0, NULL,
                                    "task %" PRIu64 ": its %s log went over "
                                    "retention.max_log_bytes (%" PRIu64
                                    " bytes) while running: %" PRIu64 " bytes cut from its middle",
                                    jobs[j].task, s ? "stderr" : "stdout", max, jobs[j].cut[s]);
                        free(jobs[j].path[s]);
                }
        }
        free(jobs);
}
