/* SPDX-License-Identifier: Apache-2.0 */
/* module.h - module, function and library records shared by module.c, funcattr.c and link.c */
#ifndef KERF_SIM_CUDA_MODULE_H
#define KERF_SIM_CUDA_MODULE_H

#include "internal.h"

/* Settable function attributes (cuFuncSetAttribute / cuKernelSetAttribute). */
typedef struct kc_func_attrs {
        int max_dyn_smem; /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
        int carveout;     /* PREFERRED_SHARED_MEMORY_CARVEOUT, -1 = default */
        int cluster[3];   /* REQUIRED_CLUSTER_WIDTH/HEIGHT/DEPTH */
        int non_portable; /* NON_PORTABLE_CLUSTER_SIZE_ALLOWED */
        int sched_pref;   /* CLUSTER_SCHEDULING_POLICY_PREFERENCE */
        int cache_config; /* CUfunc_cache */
        int shmem_config; /* CUsharedconfig */
} kc_func_attrs;

typedef struct CUfunc_st {
        struct CUmod_st *mod;
        char name[128];
        uint64_t cost_ns;
        bool waves;
        kc_func_attrs attrs;
} kc_func;

/* A `global NAME bytes=N` line: N zeroed bytes of device memory owned by the module. */
typedef struct kc_global_var {
        char name[128];
        size_t bytes;
        CUdeviceptr dptr;      /* 0 until the module is loaded into a context */
        unsigned long long id; /* its allocation's id (kc__alloc_id): freed only if still there */
} kc_global_var;

typedef struct CUmod_st {
        kc_ctx *ctx;
        kc_func *funcs;
        size_t n_funcs;
        kc_global_var *globals;
        size_t n_globals;
        struct CUlib_st *lib; /* the library this module was loaded for, or NULL */
} kc_mod;

typedef struct CUlib_st {
        const void *image;
        char *copy;
        kc_mod *mod; /* loaded in the context current at cuLibraryLoadData */
} kc_lib;

/* The first line of a simulated module image (module.c describes the format). */
#define KC_IMAGE_MAGIC "KERFSIM-MODULE 1"

/* module.c: reads the image file at `path` (at most 1 MiB: an image is a few lines) into *ret
 * (release with free()) and its length into *ret_len. Returns CUDA_SUCCESS, OUT_OF_MEMORY,
 * `too_big` for a larger file, or FILE_NOT_FOUND when it cannot be read. */
CUresult kc__image_read(const char *path, CUresult too_big, char **ret, size_t *ret_len);
/* module.c: CUDA_SUCCESS when `img` (NUL-terminated) is a valid KERFSIM-MODULE image, else
 * CUDA_ERROR_INVALID_IMAGE (or OUT_OF_MEMORY). Loads nothing. */
CUresult kc__module_image_check(const char *img);
/* funcattr.c: sets a function's attributes to the driver defaults. */
void kc__func_attr_init(kc_func *f);
/* funcattr.c: parses one `global NAME bytes=N` line into m->globals (no allocation yet). */
CUresult kc__mod_parse_global(kc_mod *m, const char *line);
/* funcattr.c: allocates every global of m in m->ctx (the current context). */
CUresult kc__mod_globals_alloc(kc_mod *m);
/* funcattr.c: frees m's globals still owned by m->ctx, and the array. */
void kc__mod_globals_free(kc_mod *m);

#endif /* KERF_SIM_CUDA_MODULE_H */
