/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h - the kerf_backend handle shared by the generic layer (backend.c) */
#ifndef KERF_BACKEND_INTERNAL_H
#define KERF_BACKEND_INTERNAL_H

#include <pthread.h>

#include "kerf/backend.h"

struct kerf_backend {
        const kerf_backend_ops *ops;
        kerf_backend_options opt;
        char library[256]; /* copy of opt.library */
        void *priv;
        pthread_mutex_t lock; /* serialises ops calls and the error buffer */
        char err[KERF_BACKEND_ERR_LEN];
};

#endif /* KERF_BACKEND_INTERNAL_H */
