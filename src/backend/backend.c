/* SPDX-License-Identifier: Apache-2.0 */
/* backend.c - the generic backend handle: argument checks, locking, error message, dispatch */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "kerf/errno.h"

void kerf_backend_options_init(kerf_backend_options *o)
{
        if (o)
                memset(o, 0, sizeof(*o));
}

void kerf_backend_priv_set(kerf_backend *b, void *priv)
{
        if (b)
                b->priv = priv;
}

void *kerf_backend_priv(const kerf_backend *b)
{
        return b ? b->priv : NULL;
}

const kerf_backend_options *kerf_backend_options_get(const kerf_backend *b)
{
        return b ? &b->opt : NULL;
}

void kerf_backend_set_error(kerf_backend *b, const char *fmt, ...)
{
        va_list ap;
        if (!b || !fmt)
                return;
        va_start(ap, fmt);
        vsnprintf(b->err, sizeof(b->err), fmt, ap);
        va_end(ap);
}

static void set_err(char *err, size_t errlen, const char *msg)
{
        if (err && errlen)
                snprintf(err, errlen, "%s", msg);
}

int kerf_backend_open(const kerf_backend_ops *ops, const kerf_backend_options *opt,
                      kerf_backend **ret, char *err, size_t errlen)
{
        kerf_backend *b;
        int r;
        if (!ops || !ops->open || !ops->close || !ops->gpu_count || !ret) {
                set_err(err, errlen, "kerf_backend_open: missing ops table or result pointer");
                return -EINVAL;
        }
        if (opt && opt->library && (!*opt->library || strlen(opt->library) >= 256)) {
                set_err(err, errlen, "kerf_backend_open: library path empty or too long");
                return -EINVAL;
        }
        b = calloc(1, sizeof(*b));
        if (!b) {
                set_err(err, errlen, "kerf_backend_open: out of memory");
                return -ENOMEM;
        }
        if (opt)
                b->opt = *opt;
        if (b->opt.library) {
                snprintf(b->library, sizeof(b->library), "%s", b->opt.library);
                b->opt.library = b->library;
        }
        if (b->opt.event_poll_ms == 0)
                b->opt.event_poll_ms = 200;
        b->ops = ops;
        if (pthread_mutex_init(&b->lock, NULL) != 0) {
                free(b);
                set_err(err, errlen, "kerf_backend_open: mutex init failed");
                return -ENOMEM;
        }
        r = ops->open(b, &b->opt);
        if (r < 0) {
                set_err(err, errlen, b->err[0] ? b->err : kerf_strerror(r));
                pthread_mutex_destroy(&b->lock);
                free(b);
                return r;
        }
        *ret = b;
        return 0;
}

kerf_backend *kerf_backend_close(kerf_backend *b)
{
        if (!b)
                return NULL;
        if (b->ops->watch_stop)
                b->ops->watch_stop(b);
        b->ops->close(b);
        pthread_mutex_destroy(&b->lock);
        free(b);
        return NULL;
}

const char *kerf_backend_name(const kerf_backend *b)
{
        return b && b->ops->name ? b->ops->name : "?";
}

const char *kerf_backend_errmsg(const kerf_backend *b)
{
        return b ? b->err : "";
}

/* Takes the lock and clears the message; checks `gpu` when gpu_ok is false. */
static int enter(kerf_backend *b, bool check_gpu, unsigned gpu)
{
        pthread_mutex_lock(&b->lock);
        b->err[0] = '\0';
        if (check_gpu && gpu >= b->ops->gpu_count(b)) {
                kerf_backend_set_error(b, "GPU index %u out of range (%u GPUs)", gpu,
                                       b->ops->gpu_count(b));
                return -EINVAL;
        }
        return 0;
}

static int leave(kerf_backend *b, int r)
{
        if (r < 0 && !b->err[0])
                kerf_backend_set_error(b, "%s", kerf_strerror(r));
        pthread_mutex_unlock(&b->lock);
        return r;
}

static int unsupported(kerf_backend *b, const char *what)
{
        kerf_backend_set_error(b, "backend %s does not support %s", kerf_backend_name(b), what);
        return -KERF_EUNSUPP;
}

int kerf_backend_versions_get(kerf_backend *b, kerf_backend_versions *ret)
{
        kerf_backend_versions v;
        int r;
        if (!b || !ret)
                return -EINVAL;
        enter(b, false, 0);
        memset(&v, 0, sizeof(v));
        r = b->ops->versions ? b->ops->versions(b, &v) : unsupported(b, "versions");
        if (r >= 0)
                *ret = v;
        return leave(b, r);
}

unsigned kerf_backend_gpu_count(kerf_backend *b)
{
        unsigned n;
        if (!b)
                return 0;
        pthread_mutex_lock(&b->lock);
        n = b->ops->gpu_count(b);
        pthread_mutex_unlock(&b->lock);
        return n;
}

int kerf_backend_gpu_get(kerf_backend *b, unsigned gpu, kerf_backend_gpu *ret)
{
        kerf_backend_gpu g;
        int r;
        if (!b || !ret)
                return -EINVAL;
        if ((r = enter(b, true, gpu)) < 0)
                return leave(b, r);
        memset(&g, 0, sizeof(g));
        r = b->ops->gpu_get ? b->ops->gpu_get(b, gpu, &g) : unsupported(b, "gpu_get");
        if (r >= 0)
                *ret = g;
        return leave(b, r);
}

int kerf_backend_gpu_find(kerf_backend *b, const char *uuid)
{
        unsigned n = kerf_backend_gpu_count(b);
        if (!b || !uuid)
                return -EINVAL;
        for (unsigned i = 0; i < n; i++) {
                kerf_backend_gpu g;
                if (kerf_backend_gpu_get(b, i, &g) >= 0 && strcasecmp(g.uuid, uuid) == 0)
                        return (int)i;
        }
        return -ENOENT;
}

int kerf_backend_mig_list(kerf_backend *b, unsigned gpu, kerf_backend_mig *out, size_t max)
{
        int r;
        if (!b || (max && !out))
                return -EINVAL;
        if ((r = enter(b, true, gpu)) < 0)
                return leave(b, r);
        r = b->ops->mig_list ? b->ops->mig_list(b, gpu, out, max) : unsupported(b, "MIG");
        return leave(b, r);
}

int kerf_backend_mig_create(kerf_backend *b, unsigned gpu, unsigned profile_id, unsigned start,
                            kerf_backend_mig *ret)
{
        kerf_backend_mig m;
        int r;
        if (!b)
                return -EINVAL;
        if ((r = enter(b, true, gpu)) < 0)
                return leave(b, r);
        if (start >= KERF_MIG_SLICES) {
                kerf_backend_set_error(b, "MIG placement start %u out of range 0..%u", start,
                                       KERF_MIG_SLICES - 1);
                return leave(b, -EINVAL);
        }
        memset(&m, 0, sizeof(m));
        r = b->ops->mig_create ? b->ops->mig_create(b, gpu, profile_id, start, &m)
                               : unsupported(b, "MIG");
        if (r >= 0 && ret)
                *ret = m;
        return leave(b, r);
}

int kerf_backend_mig_destroy(kerf_backend *b, unsigned gpu, unsigned gi_id)
{
        int r;
        if (!b)
                return -EINVAL;
        if ((r = enter(b, true, gpu)) < 0)
                return leave(b, r);
        r = b->ops->mig_destroy ? b->ops->mig_destroy(b, gpu, gi_id) : unsupported(b, "MIG");
        return leave(b, r);
}

int kerf_backend_mig_mode_set(kerf_backend *b, unsigned gpu, bool on)
{
        int r;
        if (!b)
                return -EINVAL;
        if ((r = enter(b, true, gpu)) < 0)
                return leave(b, r);
        /* The guard lives here so that no backend can forget it. */
        if (!b->opt.allow_mig_mode_change) {
                kerf_backend_set_error(b,
                                       "refusing to change MIG mode of GPU %u: not enabled in "
                                       "configuration (allow_mig_mode_change is false)",
                                       gpu);
                return leave(b, -KERF_EPERM);
        }
        r = b->ops->mig_mode_set ? b->ops->mig_mode_set(b, gpu, on)
                                 : unsupported(b, "MIG mode changes");
        return leave(b, r);
}

int kerf_backend_proc_list(kerf_backend *b, unsigned gpu, unsigned gi_id, kerf_backend_proc *out,
                           size_t max)
{
        int r;
        if (!b || (max && !out))
                return -EINVAL;
        if ((r = enter(b, true, gpu)) < 0)
                return leave(b, r);
        r = b->ops->proc_list ? b->ops->proc_list(b, gpu, gi_id, out, max)
                              : unsupported(b, "process lists");
        return leave(b, r);
}

int kerf_backend_util_get(kerf_backend *b, unsigned gpu, kerf_backend_util *ret)
{
        kerf_backend_util u = {0, 0};
        int r;
        if (!b || !ret)
                return -EINVAL;
        if ((r = enter(b, true, gpu)) < 0)
                return leave(b, r);
        r = b->ops->util_get ? b->ops->util_get(b, gpu, &u) : unsupported(b, "utilisation");
        if (r >= 0)
                *ret = u;
        return leave(b, r);
}

int kerf_backend_proc_util_list(kerf_backend *b, unsigned gpu, uint64_t since_us,
                                kerf_backend_proc_util *out, size_t max)
{
        int r;
        if (!b || (max && !out))
                return -EINVAL;
        if ((r = enter(b, true, gpu)) < 0)
                return leave(b, r);
        r = b->ops->proc_util_list ? b->ops->proc_util_list(b, gpu, since_us, out, max)
                                   : unsupported(b, "per-process utilisation");
        if (r > 0) /* one per process: out[0..r) after the merge */
                r = (int)kerf_backend_proc_util_merge(out, (size_t)r < max ? (size_t)r : max);
        return leave(b, r);
}

size_t kerf_backend_proc_util_merge(kerf_backend_proc_util *s, size_t n)
{
        size_t k = 0; /* s[0..k): merged, one per pid; s[k..n) still as read (k <= i) */
        for (size_t i = 0; i < n; i++) {
                size_t j = 0;
                while (j < k && s[j].pid != s[i].pid)
                        j++;
                if (j < k) /* merged at its first sample */
                        continue;
                kerf_backend_proc_util m = s[i];
                unsigned long sm = 0, mem = 0, c = 0;
                for (size_t l = i; l < n; l++) {
                        if (s[l].pid != m.pid)
                                continue;
                        sm += s[l].sm_pct;
                        mem += s[l].mem_pct;
                        c++;
                        if (s[l].ts_us > m.ts_us)
                                m.ts_us = s[l].ts_us;
                }
                m.sm_pct = (unsigned)((sm + c / 2) / c);
                m.mem_pct = (unsigned)((mem + c / 2) / c);
                s[k++] = m;
        }
        return k;
}

int kerf_backend_watch_start(kerf_backend *b, const kerf_backend_watch *w)
{
        int r;
        if (!b || !w || !w->cb)
                return -EINVAL;
        enter(b, false, 0);
        r = b->ops->watch_start ? b->ops->watch_start(b, w) : unsupported(b, "events");
        return leave(b, r);
}

void kerf_backend_watch_stop(kerf_backend *b)
{
        /* Not under the lock: the watcher thread may be inside a task lookup that calls back
         * into this handle (e.g. kerf_backend_mig_list) and must be able to finish. */
        if (b && b->ops->watch_stop)
                b->ops->watch_stop(b);
}
