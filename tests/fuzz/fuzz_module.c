/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_module.c - libFuzzer target: the simulated module image (KERFSIM-MODULE 1) as
 * cuModuleLoadData / cuLibraryLoadData parse it (module.c parse, funcattr.c globals), through
 * kc__module_image_check. The image is NUL-terminated text, as the driver API reads it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *img = malloc(size + 1);
        CUresult r;

        if (!img)
                return 0;
        memcpy(img, data, size);
        img[size] = 0;
        r = kc__module_image_check(img);
        if (r != CUDA_SUCCESS && r != CUDA_ERROR_INVALID_IMAGE && r != CUDA_ERROR_OUT_OF_MEMORY)
                abort();
        free(img);
        return 0;
}
