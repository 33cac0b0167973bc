/* SPDX-License-Identifier: Apache-2.0 */
/* errno.h - kerf error codes and kerf_strerror() */
#ifndef KERF_ERRNO_H
#define KERF_ERRNO_H

/* Functions that can fail return >= 0 on success and a negative code on failure: either
 * -errno (-EINVAL, -ENOENT, -ENOMEM, ...) or one of the kerf codes below, negated.
 * kerf codes sit above 1000 so they never collide with errno values. */
enum {
        KERF_EQUOTA = 1001,   /* the tenant's quota (and cohort borrowing) does not allow it */
        KERF_ENOFIT = 1002,   /* no unit on the fleet can hold it now */
        KERF_ENEVER = 1003,   /* no unit on this fleet could ever hold it */
        KERF_ESTATE = 1004,   /* the object is in the wrong lifecycle state for this */
        KERF_EPARSE = 1005,   /* a document (YAML, JSON, CSV) could not be parsed */
        KERF_EBACKEND = 1006, /* the device backend refused or failed */
        KERF_EINUSE = 1007,   /* the unit or device still has processes or children */
        KERF_EDEVICE = 1008,  /* the device is faulted or lost */
        KERF_EUNSUPP = 1009,  /* not supported on this device or mode */
        KERF_EPERM = 1010,    /* the caller may not do this */
        KERF_ECORRUPT = 1011, /* stored state failed an integrity check */
        KERF_ERRNO_MAX = 1012,
};

/* Returns a static, human-readable name for `err` (negative or positive, errno or kerf code).
 * Never returns NULL. Thread-safe. */
const char *kerf_strerror(int err);

#endif /* KERF_ERRNO_H */
