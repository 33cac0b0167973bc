/* SPDX-License-Identifier: Apache-2.0 */
/* fence_bpf.c - generates, loads and attaches the cgroup v2 device eBPF program of a fence */
#include <errno.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fence.h"

/*
 * The program, for a char device (major, minor) being opened or created:
 *
 *      if type != char                      -> allow
 *      if major is not an NVIDIA major      -> allow
 *      if (major, minor) is an allowed node -> allow
 *      deny
 *
 * Block devices and non-NVIDIA character devices are not our business (ancestors' programs
 * and the v1 controller, if any, still apply). Written as raw instructions so kerfd needs
 * neither clang nor libbpf.
 */

enum { L_NONE = 0, L_ALLOW, L_CHECK, L_DENY };

struct prog {
        struct bpf_insn *insn;
        size_t n, cap;
        int8_t label[KERF__FENCE_MAX_INSNS]; /* jump target of insn i, patched at the end */
        size_t at[L_DENY + 1];               /* where each label was placed */
};

static int emit(struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm,
                int label)
{
        if (p->n >= p->cap)
                return -E2BIG;
        p->insn[p->n] =
            (struct bpf_insn){.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
        p->label[p->n] = (int8_t)label;
        p->n++;
        return 0;
}

static void place(struct prog *p, int label)
{
        p->at[label] = p->n;
}

#define LDX_W(dst, src, off) emit(p, BPF_LDX | BPF_W | BPF_MEM, dst, src, off, 0, L_NONE)
#define AND_K(dst, imm)      emit(p, BPF_ALU64 | BPF_AND | BPF_K, dst, 0, 0, imm, L_NONE)
#define MOV_K(dst, imm)      emit(p, BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm, L_NONE)
#define JEQ_K(dst, imm, lab) emit(p, BPF_JMP | BPF_JEQ | BPF_K, dst, 0, 0, imm, lab)
#define JNE_K(dst, imm, off) emit(p, BPF_JMP | BPF_JNE | BPF_K, dst, 0, off, imm, L_NONE)
#define JNE_L(dst, imm, lab) emit(p, BPF_JMP | BPF_JNE | BPF_K, dst, 0, 0, imm, lab)
#define JA(lab)              emit(p, BPF_JMP | BPF_JA, 0, 0, 0, 0, lab)
#define EXIT()               emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0, L_NONE)

int kerf__fence_bpf_build(const uint32_t *majors, size_t n_majors, const uint32_t (*allow)[2],
                          size_t n_allow, struct bpf_insn *insn, size_t cap)
{
        struct prog p_ = {.insn = insn,
                          .cap = cap < KERF__FENCE_MAX_INSNS ? cap : KERF__FENCE_MAX_INSNS};
        struct prog *p = &p_;
        int r = 0;

        if (!insn || (n_majors && !majors) || (n_allow && !allow))
                return -EINVAL;
        if (n_majors == 0) { /* nothing to deny; the verifier refuses unreachable code */
                r |= MOV_K(BPF_REG_0, 1);
                r |= EXIT();
                return r ? -E2BIG : (int)p->n;
        }
        r |= LDX_W(BPF_REG_2, BPF_REG_1, offsetof(struct bpf_cgroup_dev_ctx, access_type));
        r |= AND_K(BPF_REG_2, 0xffff);
        r |= JNE_L(BPF_REG_2, BPF_DEVCG_DEV_CHAR, L_ALLOW);
        r |= LDX_W(BPF_REG_4, BPF_REG_1, offsetof(struct bpf_cgroup_dev_ctx, major));
        r |= LDX_W(BPF_REG_5, BPF_REG_1, offsetof(struct bpf_cgroup_dev_ctx, minor));
        for (size_t i = 0; i < n_majors; i++)
                r |= JEQ_K(BPF_REG_4, (int32_t)majors[i], L_CHECK);
        r |= JA(L_ALLOW);
        place(p, L_CHECK);
        for (size_t i = 0; i < n_allow; i++) {
                r |= JNE_K(BPF_REG_4, (int32_t)allow[i][0], 1);
                r |= JEQ_K(BPF_REG_5, (int32_t)allow[i][1], L_ALLOW);
        }
        place(p, L_DENY);
        r |= MOV_K(BPF_REG_0, 0);
        r |= EXIT();
        place(p, L_ALLOW);
        r |= MOV_K(BPF_REG_0, 1);
        r |= EXIT();
        if (r)
                return -E2BIG;
        for (size_t i = 0; i < p->n; i++)
                if (p->label[i] != L_NONE)
                        p->insn[i].off = (int16_t)((long)p->at[p->label[i]] - (long)i - 1);
        return (int)p->n;
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
        return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

int kerf__fence_bpf_load(const struct bpf_insn *insn, size_t n)
{
        union bpf_attr a;
        static const char license[] = "Apache-2.0";

        memset(&a, 0, sizeof(a));
        a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
        a.insns = (uint64_t)(uintptr_t)insn;
        a.insn_cnt = (uint32_t)n;
        a.license = (uint64_t)(uintptr_t)license;
        strncpy(a.prog_name, "kerf_fence", sizeof(a.prog_name) - 1);
        /* bpf(2) returns the new fd with O_CLOEXEC set. */
        long fd = sys_bpf(BPF_PROG_LOAD, &a);
        return fd < 0 ? -errno : (int)fd;
}

int kerf__fence_bpf_attach(int cgroup_fd, int prog_fd)
{
        union bpf_attr a;

        memset(&a, 0, sizeof(a));
        a.target_fd = (uint32_t)cgroup_fd;
        a.attach_bpf_fd = (uint32_t)prog_fd;
        a.attach_type = BPF_CGROUP_DEVICE;
        a.attach_flags = BPF_F_ALLOW_MULTI;
        return sys_bpf(BPF_PROG_ATTACH, &a) < 0 ? -errno : 0;
}

int kerf__fence_bpf_detach(int cgroup_fd, int prog_fd)
{
        union bpf_attr a;

        memset(&a, 0, sizeof(a));
        a.target_fd = (uint32_t)cgroup_fd;
        a.attach_bpf_fd = (uint32_t)prog_fd;
        a.attach_type = BPF_CGROUP_DEVICE;
        return sys_bpf(BPF_PROG_DETACH, &a) < 0 ? -errno : 0;
}

/* Loads an allow-all program to learn whether this kernel and our privileges support
 * device programs at all. */
int kerf__fence_bpf_probe(void)
{
        struct bpf_insn insn[KERF__FENCE_MAX_INSNS];
        int n = kerf__fence_bpf_build(NULL, 0, NULL, 0, insn, KERF__FENCE_MAX_INSNS);
        if (n < 0)
                return n;
        int fd = kerf__fence_bpf_load(insn, (size_t)n);
        if (fd < 0)
                return fd;
        close(fd);
        return 0;
}
