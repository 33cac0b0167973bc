/* SPDX-License-Identifier: Apache-2.0 */
/* external.c - the "external" field of POST /v1/attach: which launcher's job an attached task
 * is (Slurm job, step, user, account), validated here and written into its audit reasons */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "node.h"

/* A user or account name as Slurm and POSIX spell them: 1..64 printable ASCII characters
 * without spaces, quotes or a backslash (it is quoted into an audit reason). */
static bool ident_ok(const char *s)
{
        size_t l = strlen(s);
        if (l == 0 || l > 64)
                return false;
        for (size_t i = 0; i < l; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c <= ' ' || c >= 0x7f || c == '"' || c == '\\')
                        return false;
        }
        return true;
}

int kerfd__external_check(json_t *v, char *msg, size_t msglen)
{
        const char *k;
        json_t *x;

        if (!json_is_object(v)) {
                snprintf(msg, msglen,
                         "external: an object {\"system\", \"job\", \"step\", "
                         "\"user\", \"account\"}");
                return -EINVAL;
        }
        json_object_foreach(v, k, x)
        {
                if (!strcmp(k, "system")) {
                        if (!json_is_string(x) || !kerf_name_ok(json_string_value(x))) {
                                snprintf(msg, msglen,
                                         "external.system: a name (e.g. \"slurm\"), "
                                         "1..63 characters [A-Za-z0-9_.-]");
                                return -EINVAL;
                        }
                } else if (!strcmp(k, "job") || !strcmp(k, "step")) {
                        if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                            json_integer_value(x) > 0xffffffffLL) {
                                snprintf(msg, msglen, "external.%s: an integer 0..4294967295", k);
                                return -EINVAL;
                        }
                } else if (!strcmp(k, "user") || !strcmp(k, "account")) {
                        if (!json_is_string(x) || !ident_ok(json_string_value(x))) {
                                snprintf(msg, msglen,
                                         "external.%s: 1..64 printable characters without "
                                         "spaces, quotes or backslashes",
                                         k);
                                return -EINVAL;
                        }
                } else {
                        snprintf(msg, msglen, "external.%.64s: unknown field", k);
                        return -ENOENT;
                }
        }
        if (!json_object_get(v, "system")) {
                snprintf(msg, msglen, "external.system: required (e.g. \"slurm\")");
                return -EINVAL;
        }
        return 0;
}

void kerfd__external_text(const dtask *t, char *buf, size_t len)
{
        json_t *v = t && t->req_json ? json_object_get(t->req_json, "external") : NULL;
        json_t *x;
        size_t o;

        buf[0] = 0;
        if (!v || !json_is_object(v) || len < 2)
                return;
        o = (size_t)snprintf(buf, len, "%s", json_string_value(json_object_get(v, "system")));
        static const char *const keys[] = {"job", "step", "user", "account"};
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && o < len; i++) {
                if (!(x = json_object_get(v, keys[i])))
                        continue;
                if (json_is_integer(x))
                        o += (size_t)snprintf(buf + o, len - o, " %s=%lld", keys[i],
                                              (long long)json_integer_value(x));
                else
                        o += (size_t)snprintf(buf + o, len - o, " %s=%s", keys[i],
                                              json_string_value(x));
        }
}
