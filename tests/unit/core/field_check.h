/* SPDX-License-Identifier: Apache-2.0 */
/* field_check.h - the unit tests' check of one JSON value against one descriptor of a table
 * (test_fields.c: the task's, test_fields_tenant.c: the tenant's): accepted, or refused with
 * an exact message. Include after cmocka.h; define FIELD_TABLE and FIELD_TABLE_COUNT first. */
#ifndef KERF_TEST_FIELD_CHECK_H
#define KERF_TEST_FIELD_CHECK_H

#include <errno.h>
#include <string.h>

#include "kerf/fields.h"

static const kerf_field *F(const char *name)
{
        const kerf_field *f = kerf_field_find(FIELD_TABLE, FIELD_TABLE_COUNT, name);
        if (!f)
                fail_msg("no descriptor %s", name);
        return f;
}

/* Checks JSON text `js` against field `name`: accepted (want NULL), or refused with the exact
 * message `want`. Returns the value read. */
static kerf_field_value check(const char *name, const char *js, const char *want)
{
        json_error_t e;
        json_t *v = json_loads(js, JSON_DECODE_ANY, &e);
        kerf_field_value val = {0};
        char msg[512] = "";
        if (!v)
                fail_msg("bad test JSON %s", js);
        int r = kerf_field_check(F(name), v, &val, msg, sizeof(msg));
        if (want && (r != -EINVAL || strcmp(msg, want) != 0))
                fail_msg("%s=%s: r=%d '%s', want '%s'", name, js, r, msg, want);
        if (!want && r != 0)
                fail_msg("%s=%s refused: %s", name, js, msg);
        json_decref(v);
        return val;
}

#endif /* KERF_TEST_FIELD_CHECK_H */
