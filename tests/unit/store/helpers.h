/* SPDX-License-Identifier: Apache-2.0 */
/* helpers.h - temp directories and small fixtures shared by the store tests */
#ifndef KERF_TEST_STORE_HELPERS_H
#define KERF_TEST_STORE_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kerf/errno.h"
#include "kerf/store.h"

typedef struct fixture {
        char dir[256];
        char path[300];
        kerf_store *s;
} fixture;

static inline void rm_rf(const char *dir)
{
        const char *sfx[] = {"", "-wal", "-shm", "-journal"};
        char p[400];

        for (int i = 0; i < 4; i++) {
                snprintf(p, sizeof(p), "%s/state.db%s", dir, sfx[i]);
                unlink(p);
        }
        rmdir(dir);
}

static inline int fx_setup(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        const char *tmp = getenv("TMPDIR");
        char err[256] = "";

        assert_non_null(f);
        snprintf(f->dir, sizeof(f->dir), "%s/kerf-store-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->path, sizeof(f->path), "%s/state.db", f->dir);
        assert_int_equal(kerf_store_open(f->path, NULL, &f->s, err, sizeof(err)), 0);
        *state = f;
        return 0;
}

static inline int fx_teardown(void **state)
{
        fixture *f = *state;

        kerf_store_close(f->s);
        rm_rf(f->dir);
        free(f);
        return 0;
}

static inline void add_tenant(kerf_store *s, const char *name)
{
        kerf_store_tenant t;

        assert_int_equal(kerf_store_tenant_init(&t, name), 0);
        assert_int_equal(kerf_store_tenant_upsert(s, &t), 0);
}

static inline void make_task(kerf_store_task *t, uint64_t id, const char *tenant, const char *state)
{
        kerf_store_task_init(t);
        t->id = id;
        snprintf(t->tenant, sizeof(t->tenant), "%s", tenant);
        snprintf(t->queue, sizeof(t->queue), "default");
        snprintf(t->name, sizeof(t->name), "task-%llu", (unsigned long long)id);
        snprintf(t->state, sizeof(t->state), "%s", state);
        t->request_json = (char *)"{\"command\":[\"true\"]}";
        t->argv_json = (char *)"[\"true\"]";
}

#endif /* KERF_TEST_STORE_HELPERS_H */
