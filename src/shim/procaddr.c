/* SPDX-License-Identifier: Apache-2.0 */
/* procaddr.c - cuGetProcAddress(_v2) and dlsym(): hand out our wrappers, mapped by pointer */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "syms.h"

/*
 * cudart fetches every driver entry point through cuGetProcAddress_v2 (with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM when built per-thread), and other consumers
 * dlopen libcuda and dlsym it. In both cases we ask the real lookup first, with exactly the
 * caller's arguments, and only then replace the pointer it returned when it is the real
 * function of one of our wrappers. So the version (_v2/_v3) and stream flavour (_ptsz/_ptds)
 * are the real driver's choice, never a guess from the name.
 */

/* Called when a lookup of an interposed base name returned a pointer we do not know. */
static void warn_unknown(const char *symbol)
{
        static _Atomic int once;
        if (atomic_exchange(&once, 1))
                return;
        char line[256];
        int n = snprintf(line, sizeof(line),
                         "kerf-shim: the driver's entry point for %s is not one the shim "
                         "knows; it is passed through uncapped\n",
                         symbol);
        if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
                return;
}

/* Whether `symbol` (a base name as cuGetProcAddress takes it) names a group we interpose:
 * some KS_SYMS_CUDA entry is `symbol` or `symbol` followed by _v2/_v3/_ptsz/... */
static bool interposed_base(const char *symbol)
{
        static const char *const names[] = {
#define KS_NAME(n) #n,
            KS_SYMS_CUDA(KS_NAME)
#undef KS_NAME
        };
        size_t len = strlen(symbol);
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (!strncmp(names[i], symbol, len) && (!names[i][len] || names[i][len] == '_'))
                        return true;
        return false;
}

static void *map_pointer(const char *symbol, void *fn)
{
        void *w = ks__cuda_wrapper_for(fn);
        if (w)
                return w;
        if (fn && interposed_base(symbol))
                warn_unknown(symbol);
        return fn;
}

KS_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                       cuuint64_t flags,
                                       CUdriverProcAddressQueryResult *symbolStatus)
{
        if (ks__real_resolve() < 0 || !ks_real.cuGetProcAddress_v2)
                return CUDA_ERROR_NOT_INITIALIZED;
        CUresult r = ks_real.cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, symbolStatus);
        if (r == CUDA_SUCCESS && pfn && symbol)
                *pfn = map_pointer(symbol, *pfn);
        return r;
}

KS_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
                                    cuuint64_t flags)
{
        if (ks__real_resolve() < 0 || !ks_real.cuGetProcAddress)
                return CUDA_ERROR_NOT_INITIALIZED;
        CUresult r = ks_real.cuGetProcAddress(symbol, pfn, cudaVersion, flags);
        if (r == CUDA_SUCCESS && pfn && symbol)
                *pfn = map_pointer(symbol, *pfn);
        return r;
}

/*
 * dlsym. glibc answers RTLD_NEXT relative to the object that *called* dlsym (its return
 * address). Sanitizers and the task's own preloaded libraries (which come after the shim)
 * look up "the next malloc/mmap/..." that way; asked from inside the shim, the lookup would
 * start after the shim and hand such a library its own function back (infinite recursion;
 * ASan's start-up hangs exactly so). Hence an x86-64 entry stub that *jumps* to the real
 * dlsym, keeping the caller's return address, for every name that is not cu* / nvml*; only
 * those names enter the C path, where RTLD_NEXT is resolved relative to the real caller by
 * walking the link map (rare: at most once per name and library).
 *
 * A thread that is already in the C path passes straight through (profilers call dlsym from
 * their dlsym hooks); the guard is an initial-exec TLS word, so no __tls_get_addr (which may
 * malloc) on a path malloc interposers call. The stub and the C path are not instrumented:
 * sanitizer runtimes call dlsym before their shadow memory exists.
 */
static _Thread_local int in_dlsym __attribute__((tls_model("initial-exec")));

/* Called from the dlsym stub only. */
void *ks__dlsym_slow(void *handle, const char *name);
void *ks__dlsym_resolve(void);
extern void *ks__dlsym_real_fn;

/* Whether `addr` lies in the real driver: its own lookups of its own entry points (some
 * drivers dlsym themselves) must get its functions, never our wrappers. */
static bool in_driver(void *addr)
{
        static void *_Atomic base;
        void *b = atomic_load_explicit(&base, memory_order_relaxed);
        Dl_info di;
        if (!b) {
                if (!ks_real.cuInit || !dladdr((void *)ks_real.cuInit, &di))
                        return false;
                b = di.dli_fbase;
                atomic_store_explicit(&base, b, memory_order_relaxed);
        }
        return dladdr(addr, &di) && di.dli_fbase == b;
}

static struct link_map *map_of(void *addr)
{
        Dl_info di;
        struct link_map *l = NULL;
        if (!addr || !dladdr1(addr, &di, (void **)&l, RTLD_DL_LINKMAP))
                return NULL;
        return l;
}

/* RTLD_NEXT as glibc answers it for `caller`: the first object after the caller's in load
 * order that defines `name` itself. */
static void *next_after(void *caller, const char *name)
{
        struct link_map *lc = map_of(caller);
        if (!lc)
                return ks__real_dlsym(RTLD_NEXT, name);
        for (struct link_map *l = lc->l_next; l; l = l->l_next) {
                if (!l->l_name || !l->l_name[0])
                        continue;
                void *h = dlopen(l->l_name, RTLD_LAZY | RTLD_NOLOAD);
                if (!h)
                        continue;
                void *f = ks__real_dlsym(h, name);
                dlclose(h);
                if (f && map_of(f) == l)
                        return f;
        }
        return NULL;
}

KS_NO_SANITIZE __attribute__((visibility("hidden"), used)) void *ks__dlsym_slow(void *handle,
                                                                                const char *name)
{
        void *caller = __builtin_return_address(0); /* the stub jumped: the real caller */
        if (in_dlsym)
                return handle == RTLD_NEXT ? next_after(caller, name)
                                           : ks__real_dlsym(handle, name);
        in_dlsym++;
        void *fn = handle == RTLD_NEXT ? next_after(caller, name) : ks__real_dlsym(handle, name);
        /* cuda* names are the runtime's, never the driver's: no need to open the driver. */
        if (fn && name[0] == 'c' && name[1] == 'u' && strncmp(name, "cuda", 4)) {
                if (ks__real_resolve() == 0 && !in_driver(caller)) {
                        void *w = ks__cuda_wrapper_for(fn);
                        if (w)
                                fn = w;
                }
        } else if (fn && !strncmp(name, "nvml", 4)) {
                void *w = ks__nvml_wrapper_for(name, fn);
                if (w)
                        fn = w;
        }
        in_dlsym--;
        return fn;
}

/* The real dlsym for the stub, resolved on first use (possibly before any constructor). */
__attribute__((visibility("hidden"), used)) void *ks__dlsym_real_fn;

KS_NO_SANITIZE __attribute__((visibility("hidden"), used)) void *ks__dlsym_resolve(void)
{
        void *f = (void *)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!f)
                f = (void *)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        __atomic_store_n(&ks__dlsym_real_fn, f, __ATOMIC_RELEASE);
        return f;
}

#if defined(__x86_64__)
/* dlsym(handle = rdi, name = rsi): "cu..." and "nvml..." -> ks__dlsym_slow (tail jump), all
 * else -> the real dlsym (tail jump), so the caller's return address is what glibc sees. */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "        movzbl (%rsi), %eax\n"
        "        cmpb $0x63, %al\n" /* 'c' */
        "        jne 1f\n"
        "        cmpb $0x75, 1(%rsi)\n" /* 'u' */
        "        jne 2f\n"
        "        jmp ks__dlsym_slow\n"
        "1:      cmpb $0x6e, %al\n" /* 'n' */
        "        jne 2f\n"
        "        cmpb $0x76, 1(%rsi)\n" /* 'v' */
        "        jne 2f\n"
        "        cmpb $0x6d, 2(%rsi)\n" /* 'm' */
        "        jne 2f\n"
        "        cmpb $0x6c, 3(%rsi)\n" /* 'l' */
        "        jne 2f\n"
        "        jmp ks__dlsym_slow\n"
        "2:      movq ks__dlsym_real_fn(%rip), %rax\n"
        "        testq %rax, %rax\n"
        "        jz 3f\n"
        "        jmp *%rax\n"
        "3:      pushq %rdi\n"
        "        pushq %rsi\n"
        "        subq $8, %rsp\n"
        "        call ks__dlsym_resolve\n"
        "        addq $8, %rsp\n"
        "        popq %rsi\n"
        "        popq %rdi\n"
        "        testq %rax, %rax\n"
        "        jz 4f\n"
        "        jmp *%rax\n"
        "4:      ret\n"
        ".size dlsym, .-dlsym\n");
#else
/* Other architectures: the C path for every name (RTLD_NEXT of other names is then answered
 * relative to the shim; see docs/SHIM.md). */
KS_EXPORT void *dlsym(void *handle, const char *name)
{
        return ks__dlsym_slow(handle, name);
}
#endif
