/* SPDX-License-Identifier: Apache-2.0 */
/* test_fence.c - device fencing: program logic, MIG minors, and real cgroups when root */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <linux/bpf.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <kerf/errno.h>

#include "fence.h"
#include "helpers.h"

#define PROBE KERF_EXEC_PROBE

/* Runs the subset of eBPF the generator emits on one access; returns r0. */
static int run_prog(const struct bpf_insn *in, int n, uint32_t type, uint32_t maj, uint32_t min)
{
        struct bpf_cgroup_dev_ctx ctx = {
            .access_type = (BPF_DEVCG_ACC_READ << 16) | type, .major = maj, .minor = min};
        uint64_t r[11] = {0};
        for (int pc = 0, steps = 0; pc >= 0 && pc < n && steps < 10000; pc++, steps++) {
                const struct bpf_insn *i = &in[pc];
                switch (i->code) {
                case BPF_LDX | BPF_W | BPF_MEM:
                        assert_int_equal(i->src_reg, BPF_REG_1);
                        r[i->dst_reg] = *(const uint32_t *)((const char *)&ctx + i->off);
                        break;
                case BPF_ALU64 | BPF_AND | BPF_K:
                        r[i->dst_reg] &= (uint64_t)(int64_t)i->imm;
                        break;
                case BPF_ALU64 | BPF_MOV | BPF_K:
                        r[i->dst_reg] = (uint64_t)(int64_t)i->imm;
                        break;
                case BPF_JMP | BPF_JEQ | BPF_K:
                        if (r[i->dst_reg] == (uint64_t)(int64_t)i->imm)
                                pc += i->off;
                        break;
                case BPF_JMP | BPF_JNE | BPF_K:
                        if (r[i->dst_reg] != (uint64_t)(int64_t)i->imm)
                                pc += i->off;
                        break;
                case BPF_JMP | BPF_JA:
                        pc += i->off;
                        break;
                case BPF_JMP | BPF_EXIT:
                        return (int)r[0];
                default:
                        fail_msg("unexpected opcode 0x%x", i->code);
                }
        }
        fail_msg("program ran off its end");
        return -1;
}

static void test_program_logic(void **state)
{
        (void)state;
        struct bpf_insn in[KERF__FENCE_MAX_INSNS];
        const uint32_t majors[] = {195, 507};
        const uint32_t allow[][2] = {{195, 0}, {195, 255}, {507, 21}};
        int n = kerf__fence_bpf_build(majors, 2, allow, 3, in, KERF__FENCE_MAX_INSNS);
        assert_true(n > 0);

        assert_int_equal(run_prog(in, n, BPF_DEVCG_DEV_CHAR, 195, 0), 1);   /* its GPU */
        assert_int_equal(run_prog(in, n, BPF_DEVCG_DEV_CHAR, 195, 255), 1); /* nvidiactl */
        assert_int_equal(run_prog(in, n, BPF_DEVCG_DEV_CHAR, 195, 1), 0);   /* other GPU */
        assert_int_equal(run_prog(in, n, BPF_DEVCG_DEV_CHAR, 507, 21), 1);  /* its MIG cap */
        assert_int_equal(run_prog(in, n, BPF_DEVCG_DEV_CHAR, 507, 22), 0);
        assert_int_equal(run_prog(in, n, BPF_DEVCG_DEV_CHAR, 1, 3), 1);    /* /dev/null */
        assert_int_equal(run_prog(in, n, BPF_DEVCG_DEV_BLOCK, 195, 1), 1); /* not a char dev */

        /* Allow-all probe program, and overflow. */
        n = kerf__fence_bpf_build(NULL, 0, NULL, 0, in, KERF__FENCE_MAX_INSNS);
        assert_int_equal(run_prog(in, n, BPF_DEVCG_DEV_CHAR, 195, 1), 1);
        assert_int_equal(kerf__fence_bpf_build(majors, 2, allow, 3, in, 8), -E2BIG);
}

static void test_mig_minors(void **state)
{
        (void)state;
        char *dir = make_tmpdir();
        char path[600];
        unsigned gi, ci;

        snprintf(path, sizeof(path), "%s/mig-minors", dir);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "config 1\nmonitor 2\ngpu0/gi1/access 12\ngpu0/gi1/ci0/access 13\n"
                   "gpu1/gi2/access 150\ngpu1/gi2/ci1/access 152\n");
        fclose(f);
        assert_int_equal(kerf_fence_mig_cap_minors(path, 1, 2, 1, &gi, &ci), 0);
        assert_int_equal(gi, 150);
        assert_int_equal(ci, 152);
        assert_int_equal(kerf_fence_mig_cap_minors(path, 0, 1, 0, &gi, &ci), 0);
        assert_int_equal(gi, 12);
        assert_int_equal(ci, 13);
        assert_int_equal(kerf_fence_mig_cap_minors(path, 0, 1, 5, &gi, &ci), -ENOENT);
        assert_int_equal(kerf_fence_mig_cap_minors("/nonexistent", 0, 1, 0, &gi, &ci), -ENOENT);
        rm_rf(dir);
        free(dir);
}

/* ---- real cgroups ------------------------------------------------------------------------- */

struct cg {
        char *dir; /* temp dir: dev/ with mknod'ed nodes, logs */
        char dev[600];
        char root[128];
        kerf_fence_ctx *ctx;
        kerf_exec *ex;
};

static int mk(const char *dev, const char *name, unsigned maj, unsigned min)
{
        char p[700];
        snprintf(p, sizeof(p), "%s/%s", dev, name);
        return mknod(p, S_IFCHR | 0666, makedev(maj, min));
}

/* Sets up fencing in `mode` under a throw-away root; skips when the host cannot. */
static struct cg *cg_setup(kerf_fence_mode mode)
{
        if (geteuid() != 0) {
                print_message("SKIP: device fencing needs root\n");
                return NULL;
        }
        /* AUTO: where kerf_fence_ctx_new's own detection would look first. */
        const char *v2 = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0
                             ? "/sys/fs/cgroup"
                             : "/sys/fs/cgroup/unified";
        const char *mount = mode == KERF_FENCE_V1 ? "/sys/fs/cgroup/devices" : v2;
        if (mode == KERF_FENCE_AUTO && strcmp(v2, "/sys/fs/cgroup") != 0 &&
            access("/sys/fs/cgroup/devices/devices.allow", W_OK) == 0)
                mount = "/sys/fs/cgroup/devices";
        struct cg *c = calloc(1, sizeof(*c));
        assert_non_null(c);
        snprintf(c->root, sizeof(c->root), "%s/kerf-test-%d", mount, (int)getpid());
        c->dir = make_tmpdir();
        snprintf(c->dev, sizeof(c->dev), "%s/dev", c->dir);
        assert_int_equal(mkdir(c->dev, 0755), 0);
        char caps[700];
        snprintf(caps, sizeof(caps), "%s/nvidia-caps", c->dev);
        assert_int_equal(mkdir(caps, 0755), 0);
        if (mk(c->dev, "nvidia0", 195, 0) < 0 || mk(c->dev, "nvidia1", 195, 1) < 0 ||
            mk(c->dev, "nvidiactl", 195, 255) < 0 ||
            mk(c->dev, "nvidia-caps/nvidia-cap21", 507, 21) < 0 ||
            mk(c->dev, "nvidia-caps/nvidia-cap22", 507, 22) < 0) {
                print_message("SKIP: mknod failed: %s\n", strerror(errno));
                rm_rf(c->dir);
                free(c->dir);
                free(c);
                return NULL;
        }
        kerf_fence_config cfg = {.mode = mode, .cgroup_root = c->root, .dev_dir = c->dev};
        int r = kerf_fence_ctx_new(&cfg, &c->ctx);
        if (r < 0) {
                print_message("SKIP: cgroup %s device fencing unavailable at %s: %s\n",
                              kerf_fence_mode_name(mode), c->root, kerf_strerror(r));
                rm_rf(c->dir);
                free(c->dir);
                free(c);
                return NULL;
        }
        if (mode != KERF_FENCE_AUTO)
                assert_int_equal(kerf_fence_ctx_mode(c->ctx), mode);
        print_message("fencing with cgroup %s at %s\n",
                      kerf_fence_mode_name(kerf_fence_ctx_mode(c->ctx)), c->root);
        kerf_exec_config ecfg = {.log_dir = c->dir,
                                 .run_dir = c->dir,
                                 .supervisor = KERF_SUPERVISE_BIN,
                                 .leftover_grace_ms = 200,
                                 .subreaper = true};
        assert_int_equal(kerf_exec_new(&ecfg, &c->ex), 0);
        return c;
}

static void cg_teardown(struct cg *c)
{
        drain(c->ex);
        kerf_exec_free(c->ex);
        assert_int_equal(kerf_fence_sweep(c->ctx, NULL, 0), 0); /* nothing left behind */
        assert_int_equal(rmdir(c->root), 0);
        kerf_fence_ctx_free(c->ctx);
        rm_rf(c->dir);
        free(c->dir);
        free(c);
}

/* Runs the probe opening `paths` (relative to dev) in `fence`; returns its exit code. */
static int probe_open(struct cg *c, uint64_t id, kerf_fence *fence, const char *a, const char *b)
{
        char pa[700], pb[700];
        snprintf(pa, sizeof(pa), "%s/%s", c->dev, a);
        snprintf(pb, sizeof(pb), "%s/%s", c->dev, b);
        const char *argv[] = {PROBE, "open", pa, pb, NULL};
        kerf_exec_spec sp = {.task_id = id, .argv = argv, .fence = fence};
        kerf_exec_proc p;
        kerf_exec_exit e = {0};
        kerf_exec_failure fail;
        int r = kerf_exec_start(c->ex, &sp, &p, &fail);
        if (r < 0)
                fail_msg("start: %s at stage %s", kerf_strerror(r),
                         kerf_exec_stage_name(fail.stage));
        assert_int_equal(run_to_end(c->ex, id, 5000, &e), 0);
        return e.exit_code;
}

static void fenced_gpu(kerf_fence_mode mode)
{
        struct cg *c = cg_setup(mode);
        if (!c)
                skip();
        kerf_fence *f;
        const char *devs[] = {"nvidia0"};
        assert_int_equal(kerf_fence_new(c->ctx, 1, devs, 1, &f), 0);
        assert_non_null(strstr(kerf_fence_path(f), "/task-1"));
        /* bit 0: first path got EPERM, bit 1: second path got EPERM */
        assert_int_equal(probe_open(c, 1, f, "nvidia0", "nvidia1"), 2);
        assert_int_equal(probe_open(c, 2, f, "nvidiactl", "nvidia-caps/nvidia-cap21"), 2);
        assert_true(kerf_fence_empty(f));
        assert_int_equal(kerf_fence_destroy(f), 0);
        /* Without a fence both opens pass the cgroup (ENXIO: no driver behind 195). */
        assert_int_equal(probe_open(c, 3, NULL, "nvidia0", "nvidia1"), 0);

        /* A MIG unit: its GPU node and its two capability nodes; not the neighbour's. */
        const char *mig[] = {"nvidia1", "nvidia-caps/nvidia-cap21"};
        assert_int_equal(kerf_fence_new(c->ctx, 4, mig, 2, &f), 0);
        assert_int_equal(
            probe_open(c, 4, f, "nvidia-caps/nvidia-cap21", "nvidia-caps/nvidia-cap22"), 2);
        assert_int_equal(probe_open(c, 5, f, "nvidia1", "nvidia0"), 2);
        assert_int_equal(kerf_fence_destroy(f), 0);
        cg_teardown(c);
}

static void test_fence_v2(void **state)
{
        (void)state;
        fenced_gpu(KERF_FENCE_V2);
}

static void test_fence_v1(void **state)
{
        (void)state;
        fenced_gpu(KERF_FENCE_V1);
}

/* A member that left the process group (setsid) is still killed through the cgroup. */
static void escapee(kerf_fence_mode mode)
{
        struct cg *c = cg_setup(mode);
        if (!c)
                skip();
        kerf_fence *f;
        const char *devs[] = {"nvidia0"};
        char pidfile[700];
        snprintf(pidfile, sizeof(pidfile), "%s/escapee.pid", c->dir);
        assert_int_equal(kerf_fence_new(c->ctx, 9, devs, 1, &f), 0);
        const char *argv[] = {PROBE, "escape", pidfile, NULL};
        kerf_exec_spec sp = {.task_id = 9, .argv = argv, .fence = f};
        kerf_exec_proc p;
        kerf_exec_exit e = {0};
        assert_int_equal(kerf_exec_start(c->ex, &sp, &p, NULL), 0);
        pid_t esc = wait_pidfile(pidfile, 5000);
        assert_true(esc > 0);
        uint64_t st;
        assert_int_equal(kerf_exec_starttime(esc, &st), 0);
        assert_false(kerf_fence_empty(f));
        assert_int_equal(kerf_exec_stop(c->ex, 9, KERF_EXEC_CANCEL, 100, now_ms()), 0);
        assert_int_equal(run_to_end(c->ex, 9, 5000, &e), 0);
        assert_true(e.killed);
        assert_false(kerf_exec_alive(esc, st));
        assert_true(kerf_fence_empty(f));
        assert_int_equal(kerf_fence_destroy(f), 0);
        cg_teardown(c);
}

static void test_escapee_v2(void **state)
{
        (void)state;
        escapee(KERF_FENCE_V2);
}

static void test_escapee_v1(void **state)
{
        (void)state;
        escapee(KERF_FENCE_V1);
}

static void test_fence_validation(void **state)
{
        (void)state;
        if (geteuid() == 0) {
                /* Not root: refused before anything is touched (checked in a child). */
                pid_t pid = fork();
                assert_true(pid >= 0);
                if (pid == 0) {
                        kerf_fence_config cfg = {0};
                        kerf_fence_ctx *ctx = NULL;
                        if (setuid(65534) < 0)
                                _exit(10);
                        _exit(kerf_fence_ctx_new(&cfg, &ctx) == -EPERM && !ctx ? 0 : 11);
                }
                int st;
                assert_int_equal(waitpid(pid, &st, 0), pid);
                assert_int_equal(WEXITSTATUS(st), 0);
        }
        struct cg *c = cg_setup(KERF_FENCE_AUTO);
        if (!c)
                skip();
        kerf_fence *f = NULL;
        const char *bad1[] = {"../etc/passwd"};
        const char *bad2[] = {"/dev/nvidia0"};
        const char *missing[] = {"nvidia7"};
        const char *notchr[] = {"nvidia-caps"};
        assert_int_equal(kerf_fence_new(c->ctx, 1, bad1, 1, &f), -EINVAL);
        assert_int_equal(kerf_fence_new(c->ctx, 1, bad2, 1, &f), -EINVAL);
        assert_int_equal(kerf_fence_new(c->ctx, 1, missing, 1, &f), -ENOENT);
        assert_int_equal(kerf_fence_new(c->ctx, 1, notchr, 1, &f), -ENODEV);
        assert_null(f);
        /* re-open and sweep */
        const char *devs[] = {"nvidia0"};
        assert_int_equal(kerf_fence_new(c->ctx, 2, devs, 1, &f), 0);
        kerf_fence_free(f);
        assert_int_equal(kerf_fence_open(c->ctx, 2, &f), 0);
        kerf_fence_free(f);
        uint64_t keep = 2;
        assert_int_equal(kerf_fence_sweep(c->ctx, &keep, 1), 0);
        assert_int_equal(kerf_fence_sweep(c->ctx, NULL, 0), 1);
        assert_int_equal(kerf_fence_open(c->ctx, 2, &f), -ENOENT);
        cg_teardown(c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_program_logic),    cmocka_unit_test(test_mig_minors),
            cmocka_unit_test(test_fence_v2),         cmocka_unit_test(test_fence_v1),
            cmocka_unit_test(test_escapee_v2),       cmocka_unit_test(test_escapee_v1),
            cmocka_unit_test(test_fence_validation),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
