/* SPDX-License-Identifier: Apache-2.0 */
/* module.c - the fake module image (KERFSIM-MODULE 1), functions, libraries and launches */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "internal.h"
#include "module.h"

/*
 * Image format (text, NUL-terminated):
 *   KERFSIM-MODULE 1
 *   # comment
 *   kernel NAME cost_us=500 [scale=waves]
 *   global NAME bytes=N
 * A launch costs cost_us of device time; with scale=waves it costs cost_us per wave, a wave
 * being as many blocks as the device (or MIG instance) has SMs. A global is N zeroed bytes of
 * device memory, allocated (and charged) when the module is loaded (funcattr.c).
 */

static CUresult parse(const char *img, kc_mod *m)
{
        if (strncmp(img, KC_IMAGE_MAGIC, strlen(KC_IMAGE_MAGIC)) ||
            (img[strlen(KC_IMAGE_MAGIC)] != '\n' && img[strlen(KC_IMAGE_MAGIC)] != 0))
                return CUDA_ERROR_INVALID_IMAGE;
        const char *p = img + strlen(KC_IMAGE_MAGIC);
        while (*p) {
                while (*p == '\n' || *p == '\r')
                        p++;
                const char *eol = strchr(p, '\n');
                size_t len = eol ? (size_t)(eol - p) : strlen(p);
                char line[512];
                if (len >= sizeof(line))
                        return CUDA_ERROR_INVALID_IMAGE;
                memcpy(line, p, len);
                line[len] = 0;
                p += len;
                char *s = line;
                while (isspace((unsigned char)*s))
                        s++;
                if (!*s || *s == '#')
                        continue;
                char name[128], a1[64] = "", a2[64] = "";
                if (!strncmp(s, "global", 6) && isspace((unsigned char)s[6])) {
                        CUresult gr = kc__mod_parse_global(m, s);
                        if (gr)
                                return gr;
                        continue;
                }
                int n = sscanf(s, "kernel %127s %63s %63s", name, a1, a2);
                unsigned long long us;
                if (n < 2 || sscanf(a1, "cost_us=%llu", &us) != 1)
                        return CUDA_ERROR_INVALID_IMAGE;
                bool waves = false;
                if (n == 3) {
                        if (strcmp(a2, "scale=waves") && strcmp(a2, "scale=none"))
                                return CUDA_ERROR_INVALID_IMAGE;
                        waves = !strcmp(a2, "scale=waves");
                }
                kc_func *nf = realloc(m->funcs, (m->n_funcs + 1) * sizeof(*nf));
                if (!nf)
                        return CUDA_ERROR_OUT_OF_MEMORY;
                m->funcs = nf;
                kc_func *f = &m->funcs[m->n_funcs++];
                memset(f, 0, sizeof(*f));
                snprintf(f->name, sizeof(f->name), "%s", name);
                f->cost_ns = us * 1000ULL;
                f->waves = waves;
                kc__func_attr_init(f);
        }
        return m->n_funcs ? CUDA_SUCCESS : CUDA_ERROR_INVALID_IMAGE;
}

/* A module image is a few lines; more than 1 MiB is not one (it used to be truncated). */
CUresult kc__image_read(const char *path, CUresult too_big, char **ret, size_t *ret_len)
{
        int rc = kerf_file_read_all(path, 1u << 20, ret, ret_len);
        if (rc == -ENOMEM)
                return CUDA_ERROR_OUT_OF_MEMORY;
        if (rc == -EFBIG)
                return too_big;
        if (rc < 0)
                return CUDA_ERROR_FILE_NOT_FOUND;
        return CUDA_SUCCESS;
}

CUresult kc__module_image_check(const char *img)
{
        kc_mod tmp = {0};
        CUresult r = parse(img, &tmp);
        free(tmp.funcs);
        free(tmp.globals);
        return r;
}

static void mod_free(kc_mod *m)
{
        if (!m)
                return;
        kc__handle_del(m);
        kc__mod_globals_free(m);
        for (size_t i = 0; i < m->n_funcs; i++)
                kc__handle_del(&m->funcs[i]);
        free(m->funcs);
        free(m);
}

static CUresult load(CUmodule *module, const void *image)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!module || !image)
                return CUDA_ERROR_INVALID_VALUE;
        kc_mod *m = calloc(1, sizeof(*m));
        if (!m)
                return CUDA_ERROR_OUT_OF_MEMORY;
        m->ctx = ctx;
        if ((r = parse(image, m)) || (r = kc__mod_globals_alloc(m))) {
                kc__mod_globals_free(m);
                free(m->funcs);
                free(m);
                return r;
        }
        for (size_t i = 0; i < m->n_funcs; i++) {
                m->funcs[i].mod = m;
                kc__handle_add(&m->funcs[i], KC_H_FUNC);
        }
        kc__handle_add(m, KC_H_MODULE);
        *module = m;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
        return load(module, image);
}

KERF_CUDA_EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                                             unsigned int numOptions, CUjit_option *options,
                                             void **optionValues)
{
        if (numOptions && (!options || !optionValues))
                return CUDA_ERROR_INVALID_VALUE;
        return load(module, image);
}

KERF_CUDA_EXPORT CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
        kc_ctx *ctx;
        CUresult r = kc__ctx_require(&ctx);
        if (r)
                return r;
        if (!module || !fname)
                return CUDA_ERROR_INVALID_VALUE;
        char *buf = NULL;
        size_t n;
        if ((r = kc__image_read(fname, CUDA_ERROR_INVALID_IMAGE, &buf, &n)))
                return r;
        r = load(module, buf);
        free(buf);
        return r;
}

KERF_CUDA_EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!hfunc || !name)
                return CUDA_ERROR_INVALID_VALUE;
        if (!kc__handle_ok(hmod, KC_H_MODULE))
                return CUDA_ERROR_INVALID_HANDLE;
        for (size_t i = 0; i < hmod->n_funcs; i++)
                if (!strcmp(hmod->funcs[i].name, name)) {
                        *hfunc = &hmod->funcs[i];
                        return CUDA_SUCCESS;
                }
        return CUDA_ERROR_NOT_FOUND;
}

KERF_CUDA_EXPORT CUresult cuModuleUnload(CUmodule hmod)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!kc__handle_ok(hmod, KC_H_MODULE))
                return CUDA_ERROR_INVALID_HANDLE;
        /* Queued launches hold only the computed cost, so unloading with work in flight is safe. */
        mod_free(hmod);
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuLibraryLoadData(CUlibrary *library, const void *code,
                                            CUjit_option *jitOptions, void **jitOptionsValues,
                                            unsigned int numJitOptions,
                                            CUlibraryOption *libraryOptions,
                                            void **libraryOptionValues,
                                            unsigned int numLibraryOptions)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!library || !code || (numJitOptions && (!jitOptions || !jitOptionsValues)) ||
            (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
                return CUDA_ERROR_INVALID_VALUE;
        kc_lib *l = calloc(1, sizeof(*l));
        if (!l)
                return CUDA_ERROR_OUT_OF_MEMORY;
        kc_mod tmp = {0};
        if ((r = parse(code, &tmp))) { /* reject bad images up front, as the driver does */
                free(tmp.funcs);
                free(tmp.globals);
                free(l);
                return r;
        }
        free(tmp.funcs);
        free(tmp.globals);
        l->copy = strdup(code);
        if (!l->copy) {
                free(l);
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        kc__handle_add(l, KC_H_LIBRARY);
        *library = l;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuLibraryUnload(CUlibrary library)
{
        if (!kc__handle_ok(library, KC_H_LIBRARY))
                return CUDA_ERROR_INVALID_HANDLE;
        kc__handle_del(library);
        mod_free(library->mod);
        free(library->copy);
        free(library);
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
        if (!pMod)
                return CUDA_ERROR_INVALID_VALUE;
        if (!kc__handle_ok(library, KC_H_LIBRARY))
                return CUDA_ERROR_INVALID_HANDLE;
        if (!library->mod) { /* context-independent loading: load into the current context */
                CUresult r = load(&library->mod, library->copy);
                if (r)
                        return r;
                library->mod->lib = library;
        }
        *pMod = library->mod;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
        CUmodule m;
        CUresult r = cuLibraryGetModule(&m, library);
        if (r)
                return r;
        CUfunction f;
        if ((r = cuModuleGetFunction(&f, m, name)))
                return r;
        *pKernel = (CUkernel)f; /* a kernel handle is its function in the simulator */
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
        if (!pFunc)
                return CUDA_ERROR_INVALID_VALUE;
        if (!kc__handle_ok(kernel, KC_H_FUNC))
                return CUDA_ERROR_INVALID_HANDLE;
        *pFunc = (CUfunction)kernel;
        return CUDA_SUCCESS;
}

CUresult kc__func_check(CUfunction f, kc_ctx **ret_ctx)
{
        if (!f || !kc__handle_ok(f, KC_H_FUNC))
                return CUDA_ERROR_INVALID_HANDLE;
        *ret_ctx = f->mod->ctx;
        return CUDA_SUCCESS;
}

uint64_t kc__func_cost_ns(CUfunction f, int d, uint64_t blocks)
{
        if (!f->waves)
                return f->cost_ns;
        uint64_t sms = kc_g.devs[d].sms ? kc_g.devs[d].sms : 1;
        return f->cost_ns * ((blocks + sms - 1) / sms);
}

CUresult kc__launch(kc_stream *s, CUfunction f, uint64_t blocks)
{
        kc_op op = {.kind = KC_OP_KERNEL};
        op.remaining_ns = kc__func_cost_ns(f, s->ctx->dev, blocks);
        return kc__submit(s, &op);
}

static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned smem, CUstream h, void **params,
                       void **extra, bool pt, bool coop)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        kc_ctx *fctx, *cur = kc__ctx_current();
        if ((r = kc__func_check(f, &fctx)))
                return r;
        if (!cur)
                return CUDA_ERROR_INVALID_CONTEXT;
        if (fctx != cur)
                return CUDA_ERROR_INVALID_HANDLE;
        if (!gx || !gy || !gz || !bx || !by || !bz || gy > 65535 || gz > 65535)
                return CUDA_ERROR_INVALID_VALUE;
        if ((uint64_t)bx * by * bz > 1024 || bx > 1024 || by > 1024 || bz > 64)
                return CUDA_ERROR_INVALID_VALUE;
        /* Dynamic shared memory above 48 KiB needs the function's opt-in (cuFuncSetAttribute). */
        if (smem > 232448 || smem > (unsigned)f->attrs.max_dyn_smem)
                return CUDA_ERROR_INVALID_VALUE;
        if (params && extra)
                return CUDA_ERROR_INVALID_VALUE;
        uint64_t blocks = (uint64_t)gx * gy * gz;
        if (coop && blocks > (uint64_t)kc_g.devs[cur->dev].sms * 32)
                return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
        kc__lock();
        kc_stream *s;
        r = kc__stream_resolve(h, pt, &s);
        if (!r && s->ctx != cur)
                r = CUDA_ERROR_INVALID_HANDLE;
        if (!r)
                r = kc__launch(s, f, blocks);
        kc__unlock();
        return r;
}

KERF_CUDA_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
                                         unsigned int gz, unsigned int bx, unsigned int by,
                                         unsigned int bz, unsigned int smem, CUstream h,
                                         void **kernelParams, void **extra)
{
        return launch(f, gx, gy, gz, bx, by, bz, smem, h, kernelParams, extra, false, false);
}

KERF_CUDA_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                              unsigned int gz, unsigned int bx, unsigned int by,
                                              unsigned int bz, unsigned int smem, CUstream h,
                                              void **kernelParams, void **extra)
{
        return launch(f, gx, gy, gz, bx, by, bz, smem, h, kernelParams, extra, true, false);
}

KERF_CUDA_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy,
                                                    unsigned int gz, unsigned int bx,
                                                    unsigned int by, unsigned int bz,
                                                    unsigned int smem, CUstream h,
                                                    void **kernelParams)
{
        return launch(f, gx, gy, gz, bx, by, bz, smem, h, kernelParams, NULL, false, true);
}

KERF_CUDA_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx,
                                                         unsigned int gy, unsigned int gz,
                                                         unsigned int bx, unsigned int by,
                                                         unsigned int bz, unsigned int smem,
                                                         CUstream h, void **kernelParams)
{
        return launch(f, gx, gy, gz, bx, by, bz, smem, h, kernelParams, NULL, true, true);
}

static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra,
                          bool pt)
{
        if (!c || (c->numAttrs && !c->attrs))
                return CUDA_ERROR_INVALID_VALUE;
        bool coop = false;
        for (unsigned i = 0; i < c->numAttrs; i++) {
                switch (c->attrs[i].id) {
                case CU_LAUNCH_ATTRIBUTE_IGNORE:
                case CU_LAUNCH_ATTRIBUTE_PRIORITY:
                case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
                case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
                case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
                case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
                case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
                case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
                case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
                case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
                        break;
                case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
                        coop = c->attrs[i].value.cooperative != 0;
                        break;
                default:
                        return CUDA_ERROR_NOT_SUPPORTED;
                }
        }
        return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                      c->blockDimZ, c->sharedMemBytes, c->hStream, params, extra, pt, coop);
}

KERF_CUDA_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                                           void **kernelParams, void **extra)
{
        return launch_ex(config, f, kernelParams, extra, false);
}

KERF_CUDA_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                                void **kernelParams, void **extra)
{
        return launch_ex(config, f, kernelParams, extra, true);
}
