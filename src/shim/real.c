/* SPDX-License-Identifier: Apache-2.0 */
/* real.c - the real driver: dlopen, ks_real, and the real-pointer -> wrapper map */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "syms.h"

ks_real_table ks_real;

/*
 * Wrappers are referenced weakly: launch.c (another part of the shim) may not be linked into
 * a given build yet, and a missing wrapper must then mean "not interposed", never a link
 * failure. A weak reference to a name we also define binds to our definition.
 * tests/unit/shim/test_exports.c checks that every name of KS_SYMS_CUDA is defined.
 */
#define KS_WEAK(name) _Pragma(KS_STR(weak name))
#define KS_STR(x)     #x
KS_SYMS_CUDA(KS_WEAK)
#undef KS_WEAK

typedef struct {
        const char *name;
        void **real; /* &ks_real.<name> */
        void *wrapper;
} ks_entry;

static const ks_entry entries[] = {
#define KS_ENTRY(n) {#n, (void **)&ks_real.n, (void *)n},
    KS_SYMS_CUDA(KS_ENTRY)
#undef KS_ENTRY
};

static const char *const called_names[] = {
#define KS_NAME(n) #n,
    KS_SYMS_CUDA_CALLED(KS_NAME)
#undef KS_NAME
};

static void **called_slots[] = {
#define KS_SLOT(n) (void **)&ks_real.n,
    KS_SYMS_CUDA_CALLED(KS_SLOT)
#undef KS_SLOT
};

/* ---- the real dlsym ---- */

typedef void *(*dlsym_fn)(void *, const char *);
static _Atomic(dlsym_fn) real_dlsym_fn;

KS_NO_SANITIZE void *ks__real_dlsym(void *handle, const char *name)
{
        dlsym_fn f = atomic_load_explicit(&real_dlsym_fn, memory_order_acquire);
        if (!f) {
                /* dlvsym is not interposed: it finds libc's (>= 2.34) or libdl's dlsym. */
                f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
                if (!f)
                        f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
                if (!f)
                        return NULL;
                atomic_store_explicit(&real_dlsym_fn, f, memory_order_release);
        }
        return f(handle, name);
}

/* ---- opening the driver ---- */

static pthread_mutex_t resolve_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int resolved; /* 0 not yet, 1 done, -1 failed */
static _Thread_local bool resolving __attribute__((tls_model("initial-exec")));

int ks__real_resolve(void)
{
        int s = atomic_load_explicit(&resolved, memory_order_acquire);
        if (s)
                return s > 0 ? 0 : -1;
        if (resolving)
                return -1; /* a constructor of libcuda called back into us: not yet */
        pthread_mutex_lock(&resolve_mu);
        s = atomic_load(&resolved);
        if (!s) {
                resolving = true;
                void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
                if (!h) {
                        const char *e = dlerror();
                        snprintf(ks.err, sizeof(ks.err), "cannot load the CUDA driver: %s",
                                 e ? e : "libcuda.so.1 not found");
                        s = -1;
                } else {
                        ks.libcuda = h;
                        for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
                                *entries[i].real = ks__real_dlsym(h, entries[i].name);
                        for (size_t i = 0; i < sizeof(called_names) / sizeof(called_names[0]); i++)
                                *called_slots[i] = ks__real_dlsym(h, called_names[i]);
                        s = 1;
                }
                resolving = false;
                atomic_store_explicit(&resolved, s, memory_order_release);
        }
        pthread_mutex_unlock(&resolve_mu);
        return s > 0 ? 0 : -1;
}

void *ks__cuda_wrapper_for(void *fn)
{
        if (!fn)
                return NULL;
        for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
                const ks_entry *e = &entries[i];
                if (!e->wrapper)
                        continue; /* not linked into this build: pass through */
                if (fn == e->wrapper || fn == *e->real)
                        return e->wrapper;
        }
        return NULL;
}
