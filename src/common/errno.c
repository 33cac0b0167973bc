/* SPDX-License-Identifier: Apache-2.0 */
/* errno.c - names for kerf error codes */
#include <string.h>

#include "kerf/errno.h"

static const char *const kerf_names[] = {
    [KERF_EQUOTA - 1000] = "quota exceeded",
    [KERF_ENOFIT - 1000] = "no unit fits now",
    [KERF_ENEVER - 1000] = "can never fit on this fleet",
    [KERF_ESTATE - 1000] = "wrong lifecycle state",
    [KERF_EPARSE - 1000] = "parse error",
    [KERF_EBACKEND - 1000] = "device backend refused the operation",
    [KERF_EINUSE - 1000] = "in use",
    [KERF_EDEVICE - 1000] = "device faulted or lost",
    [KERF_EUNSUPP - 1000] = "not supported",
    [KERF_EPERM - 1000] = "permission denied",
    [KERF_ECORRUPT - 1000] = "integrity check failed",
};

const char *kerf_strerror(int err)
{
        if (err < 0)
                err = -err;
        if (err > 1000 && err < KERF_ERRNO_MAX)
                return kerf_names[err - 1000];
        if (err == 0)
                return "success";
        if (err < 1000)
                return strerrordesc_np(err) ? strerrordesc_np(err) : "unknown error";
        return "unknown error";
}
