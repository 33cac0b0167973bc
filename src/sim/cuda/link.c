/* SPDX-License-Identifier: Apache-2.0 */
/* link.c - cuLink*: "links" KERFSIM-MODULE text images into one; real code is refused */
#include <stdlib.h>
#include <string.h>

#include "legacy.h"
#include "module.h"

/* The linked image: the magic line followed by the body of every input, in order. */
typedef struct CUlinkState_st {
        char *img;
        size_t len;
        int inputs;
} kc_link;

static bool opts_ok(unsigned n, CUjit_option *o, void **v)
{
        return !n || (o && v);
}

KERF_CUDA_EXPORT CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options,
                                          void **optionValues, CUlinkState *stateOut)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!stateOut || !opts_ok(numOptions, options, optionValues))
                return CUDA_ERROR_INVALID_VALUE;
        kc_link *l = calloc(1, sizeof(*l));
        if (l)
                l->img = strdup(KC_IMAGE_MAGIC "\n");
        if (!l || !l->img) {
                free(l);
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        l->len = strlen(l->img);
        kc__handle_add(l, KC_H_LINK);
        *stateOut = l;
        return CUDA_SUCCESS;
}

/* Appends one input. Simulated images are the only code the simulator can run: PTX is refused
 * with INVALID_PTX (it would need a JIT), every other binary kind with INVALID_IMAGE. */
KERF_CUDA_EXPORT CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data,
                                           size_t size, const char *name, unsigned int numOptions,
                                           CUjit_option *options, void **optionValues)
{
        (void)name;
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!kc__handle_ok(state, KC_H_LINK))
                return CUDA_ERROR_INVALID_HANDLE;
        if (!data || !size || (unsigned)type >= CU_JIT_NUM_INPUT_TYPES ||
            !opts_ok(numOptions, options, optionValues))
                return CUDA_ERROR_INVALID_VALUE;
        char *txt = malloc(size + 1);
        if (!txt)
                return CUDA_ERROR_OUT_OF_MEMORY;
        memcpy(txt, data, size);
        txt[size] = 0; /* text images may or may not count their terminator */
        r = kc__module_image_check(txt);
        if (r == CUDA_ERROR_INVALID_IMAGE && type == CU_JIT_INPUT_PTX)
                r = CUDA_ERROR_INVALID_PTX;
        if (!r) {
                const char *body = txt + strlen(KC_IMAGE_MAGIC);
                size_t bl = strlen(body);
                char *n = realloc(state->img, state->len + bl + 2);
                if (!n) {
                        r = CUDA_ERROR_OUT_OF_MEMORY;
                } else {
                        state->img = n;
                        memcpy(n + state->len, body, bl);
                        state->len += bl;
                        if (bl && n[state->len - 1] != '\n')
                                n[state->len++] = '\n';
                        n[state->len] = 0;
                        state->inputs++;
                }
        }
        free(txt);
        return r;
}

KERF_CUDA_EXPORT CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path,
                                           unsigned int numOptions, CUjit_option *options,
                                           void **optionValues)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!kc__handle_ok(state, KC_H_LINK))
                return CUDA_ERROR_INVALID_HANDLE;
        if (!path)
                return CUDA_ERROR_INVALID_VALUE;
        char *buf = NULL;
        size_t n;
        r = kc__image_read(
            path, type == CU_JIT_INPUT_PTX ? CUDA_ERROR_INVALID_PTX : CUDA_ERROR_INVALID_IMAGE,
            &buf, &n);
        if (r)
                return r;
        r = n ? cuLinkAddData_v2(state, type, buf, n, path, numOptions, options, optionValues)
              : CUDA_ERROR_INVALID_IMAGE;
        free(buf);
        return r;
}

/* The output stays owned by the link state until cuLinkDestroy. No input: INVALID_IMAGE. */
KERF_CUDA_EXPORT CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!kc__handle_ok(state, KC_H_LINK))
                return CUDA_ERROR_INVALID_HANDLE;
        if (!cubinOut || !sizeOut)
                return CUDA_ERROR_INVALID_VALUE;
        if (!state->inputs)
                return CUDA_ERROR_INVALID_IMAGE;
        *cubinOut = state->img;
        *sizeOut = state->len + 1;
        return CUDA_SUCCESS;
}

KERF_CUDA_EXPORT CUresult cuLinkDestroy(CUlinkState state)
{
        if (!kc__handle_ok(state, KC_H_LINK))
                return CUDA_ERROR_INVALID_HANDLE;
        kc__handle_del(state);
        free(state->img);
        free(state);
        return CUDA_SUCCESS;
}

/* The pre-6.5 names have the same signatures. */
KERF_CUDA_EXPORT CUresult cuLinkCreate(unsigned int numOptions, CUjit_option *options,
                                       void **optionValues, CUlinkState *stateOut)
{
        return cuLinkCreate_v2(numOptions, options, optionValues, stateOut);
}

KERF_CUDA_EXPORT CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void *data,
                                        size_t size, const char *name, unsigned int numOptions,
                                        CUjit_option *options, void **optionValues)
{
        return cuLinkAddData_v2(state, type, data, size, name, numOptions, options, optionValues);
}

KERF_CUDA_EXPORT CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path,
                                        unsigned int numOptions, CUjit_option *options,
                                        void **optionValues)
{
        return cuLinkAddFile_v2(state, type, path, numOptions, options, optionValues);
}

/* As cuLibraryLoadData, from a file (at most 1 MiB, like cuModuleLoad). */
KERF_CUDA_EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
                                                CUjit_option *jitOptions, void **jitOptionsValues,
                                                unsigned int numJitOptions,
                                                CUlibraryOption *libraryOptions,
                                                void **libraryOptionValues,
                                                unsigned int numLibraryOptions)
{
        CUresult r = kc__check_init();
        if (r)
                return r;
        if (!library || !fileName)
                return CUDA_ERROR_INVALID_VALUE;
        char *buf = NULL;
        size_t n;
        if ((r = kc__image_read(fileName, CUDA_ERROR_INVALID_IMAGE, &buf, &n)))
                return r;
        r = cuLibraryLoadData(library, buf, jitOptions, jitOptionsValues, numJitOptions,
                              libraryOptions, libraryOptionValues, numLibraryOptions);
        free(buf);
        return r;
}
