/* SPDX-License-Identifier: Apache-2.0 */
/* cdi_spec.c - CDI 0.5.0 specs as JSON: names, edits, and the strict check a loader applies */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kerf_cdi.h"

static bool alnum(char c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* 1..max characters of [A-Za-z0-9_.-] (plus `extra`), alphanumeric at both ends. */
static bool token_ok(const char *s, size_t len, size_t max, const char *extra)
{
        if (len == 0 || len > max || !alnum(s[0]) || !alnum(s[len - 1]))
                return false;
        for (size_t i = 0; i < len; i++)
                if (!alnum(s[i]) && !strchr("_.-", s[i]) && !(extra && strchr(extra, s[i])))
                        return false;
        return true;
}

bool kerf_cdi_name_ok(const char *name)
{
        return name && token_ok(name, strlen(name), 128, NULL);
}

bool kerf_cdi_kind_ok(const char *kind)
{
        const char *slash = kind ? strchr(kind, '/') : NULL;
        if (!slash || strchr(slash + 1, '/'))
                return false;
        /* vendor: dot-separated labels of [A-Za-z0-9-], each alphanumeric at both ends */
        size_t vlen = (size_t)(slash - kind);
        if (vlen == 0 || vlen > 253)
                return false;
        for (const char *l = kind; l < slash;) {
                const char *e = memchr(l, '.', (size_t)(slash - l));
                size_t n = (size_t)((e ? e : slash) - l);
                if (n == 0 || n > 63 || !alnum(l[0]) || !alnum(l[n - 1]))
                        return false;
                for (size_t i = 0; i < n; i++)
                        if (!alnum(l[i]) && l[i] != '-')
                                return false;
                l += n + (e ? 1 : 0);
                if (e && l == slash)
                        return false;
        }
        return token_ok(slash + 1, strlen(slash + 1), 63, NULL);
}

int kerf_cdi_name_from_uuid(const char *uuid, char *out, size_t cap)
{
        size_t len = uuid ? strlen(uuid) : 0;
        char buf[160];
        if (len == 0 || len >= sizeof(buf))
                return -EINVAL;
        for (size_t i = 0; i <= len; i++)
                buf[i] = !uuid[i] || alnum(uuid[i]) || strchr(".-", uuid[i]) ? uuid[i] : '_';
        if (!kerf_cdi_name_ok(buf))
                return -EINVAL;
        if (len >= cap)
                return -ENAMETOOLONG;
        memcpy(out, buf, len + 1);
        return 0;
}

static int seterr(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int seterr(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;
        if (err && errlen) {
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

int kerf_cdi_dir_check(const char *dir, char *err, size_t errlen)
{
        if (!dir || dir[0] != '/')
                return seterr(err, errlen, "cdi.spec_dir \"%s\": not an absolute path",
                              dir ? dir : "");
        if (strlen(dir) > 3000)
                return seterr(err, errlen, "cdi.spec_dir: too long");
        if (!strcmp(dir, "/") || strstr(dir, "//") || strstr(dir, "/./") || strstr(dir, "/../") ||
            (strlen(dir) >= 2 && !strcmp(dir + strlen(dir) - 2, "/.")) ||
            (strlen(dir) >= 3 && !strcmp(dir + strlen(dir) - 3, "/..")))
                return seterr(err, errlen,
                              "cdi.spec_dir \"%s\": not a normalised directory path (no /, //, "
                              "., ..)",
                              dir);
        for (const char *c = dir; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                        return seterr(err, errlen, "cdi.spec_dir: control character in path");
        return 0;
}

json_t *kerf_cdi_spec_new(const char *kind)
{
        if (!kerf_cdi_kind_ok(kind))
                return NULL;
        return json_pack("{s:s, s:s, s:[]}", "cdiVersion", KERF_CDI_VERSION, "kind", kind,
                         "devices");
}

json_t *kerf_cdi_spec_edits(json_t *spec)
{
        json_t *e = json_object_get(spec, "containerEdits");
        if (!e) {
                e = json_object();
                json_object_set_new(spec, "containerEdits", e);
        }
        return e;
}

json_t *kerf_cdi_device_add(json_t *spec, const char *name)
{
        json_t *devs = json_object_get(spec, "devices"), *d, *edits;
        size_t i;
        if (!kerf_cdi_name_ok(name) || !json_is_array(devs))
                return NULL;
        json_array_foreach(devs, i, d) if (!strcmp(json_string_value(json_object_get(d, "name")),
                                                   name)) return NULL;
        edits = json_object();
        json_array_append_new(devs, json_pack("{s:s, s:o}", "name", name, "containerEdits", edits));
        return edits;
}

static json_t *list(json_t *edits, const char *key)
{
        json_t *a = json_object_get(edits, key);
        if (!a) {
                a = json_array();
                json_object_set_new(edits, key, a);
        }
        return a;
}

static bool env_name_ok(const char *s, size_t n)
{
        if (n == 0 || isdigit((unsigned char)s[0]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!alnum(s[i]) && s[i] != '_')
                        return false;
        return true;
}

static bool abs_path_ok(const char *p)
{
        return p && p[0] == '/' && strlen(p) < 4096 && !strchr(p, '\n');
}

int kerf_cdi_env_add(json_t *edits, const char *name, const char *value)
{
        char *kv;
        if (!edits || !name || !value || !env_name_ok(name, strlen(name)) || strchr(value, '\n'))
                return -EINVAL;
        if (asprintf(&kv, "%s=%s", name, value) < 0)
                return -ENOMEM;
        json_array_append_new(list(edits, "env"), json_string(kv));
        free(kv);
        return 0;
}

int kerf_cdi_node_add(json_t *edits, const char *path, const char *host_path, char type, long major,
                      long minor)
{
        json_t *n;
        if (!edits || !abs_path_ok(path) || (host_path && !abs_path_ok(host_path)) ||
            (type && type != 'c' && type != 'b') || (type && (major < 0 || minor < 0)) ||
            major > 0xfff || minor > 0xfffff)
                return -EINVAL;
        n = json_pack("{s:s}", "path", path);
        if (host_path)
                json_object_set_new(n, "hostPath", json_string(host_path));
        if (type) {
                char t[2] = {type, 0};
                json_object_set_new(n, "type", json_string(t));
                json_object_set_new(n, "major", json_integer(major));
                json_object_set_new(n, "minor", json_integer(minor));
        }
        json_array_append_new(list(edits, "deviceNodes"), n);
        return 0;
}

int kerf_cdi_mount_add(json_t *edits, const char *host_path, const char *container_path, bool ro)
{
        if (!edits || !abs_path_ok(host_path) || !abs_path_ok(container_path))
                return -EINVAL;
        json_array_append_new(list(edits, "mounts"),
                              json_pack("{s:s, s:s, s:[s,s]}", "hostPath", host_path,
                                        "containerPath", container_path, "options",
                                        ro ? "ro" : "rw", "bind"));
        return 0;
}

static const char *const hook_names[] = {"createRuntime", "createContainer", "startContainer",
                                         "poststop", NULL};

static bool hook_name_ok(const char *h)
{
        for (const char *const *k = hook_names; h && *k; k++)
                if (!strcmp(*k, h))
                        return true;
        return false;
}

int kerf_cdi_hook_add(json_t *edits, const char *hook, const char *path, const char *const *args)
{
        json_t *h, *a;
        if (!edits || !hook_name_ok(hook) || !abs_path_ok(path))
                return -EINVAL;
        h = json_pack("{s:s, s:s}", "hookName", hook, "path", path);
        if (args) {
                a = json_array();
                for (const char *const *p = args; *p; p++)
                        json_array_append_new(a, json_string(*p));
                json_object_set_new(h, "args", a);
        }
        json_array_append_new(list(edits, "hooks"), h);
        return 0;
}

/* ---- the strict check ------------------------------------------------------------------- */

static int only_keys(const json_t *o, const char *what, const char *const *keys, char *err,
                     size_t errlen)
{
        const char *k;
        json_t *v;
        if (!json_is_object(o))
                return seterr(err, errlen, "%s: expected an object", what);
        json_object_foreach((json_t *)o, k, v)
        {
                bool known = false;
                for (const char *const *p = keys; *p && !known; p++)
                        known = !strcmp(*p, k);
                if (!known)
                        return seterr(err, errlen, "%s: field \"%s\" is not in CDI %s", what, k,
                                      KERF_CDI_VERSION);
        }
        return 0;
}

static int str_field(const json_t *o, const char *key, bool required, bool absolute,
                     const char *what, char *err, size_t errlen)
{
        json_t *v = json_object_get(o, key);
        if (!v)
                return required ? seterr(err, errlen, "%s: \"%s\" missing", what, key) : 0;
        if (!json_is_string(v) || (absolute && !abs_path_ok(json_string_value(v))))
                return seterr(err, errlen, "%s: \"%s\" must be %s", what, key,
                              absolute ? "an absolute path" : "a string");
        return 0;
}

static int check_edits(const json_t *e, const char *what, char *err, size_t errlen)
{
        static const char *const ek[] = {"env", "deviceNodes", "hooks", "mounts", NULL};
        static const char *const nk[] = {"path",     "hostPath",    "type", "major", "minor",
                                         "fileMode", "permissions", "uid",  "gid",   NULL};
        static const char *const mk[] = {"hostPath", "containerPath", "options", "type", NULL};
        static const char *const hk[] = {"hookName", "path", "args", "env", "timeout", NULL};
        size_t i;
        json_t *v;
        int r = only_keys(e, what, ek, err, errlen);
        if (r < 0)
                return r;
        json_array_foreach(json_object_get(e, "env"), i, v)
        {
                const char *s = json_string_value(v), *eq = s ? strchr(s, '=') : NULL;
                if (!eq || !env_name_ok(s, (size_t)(eq - s)))
                        return seterr(err, errlen, "%s: invalid environment variable \"%s\"", what,
                                      s ? s : "(not a string)");
        }
        json_array_foreach(json_object_get(e, "deviceNodes"), i, v)
        {
                const char *t = json_string_value(json_object_get(v, "type"));
                if ((r = only_keys(v, "deviceNodes[]", nk, err, errlen)) < 0 ||
                    (r = str_field(v, "path", true, true, "deviceNodes[]", err, errlen)) < 0 ||
                    (r = str_field(v, "hostPath", false, true, "deviceNodes[]", err, errlen)) < 0)
                        return r;
                if (t && strcmp(t, "c") && strcmp(t, "b") && strcmp(t, "p"))
                        return seterr(err, errlen, "deviceNodes[]: type \"%s\" is not b, c or p",
                                      t);
        }
        json_array_foreach(json_object_get(e, "mounts"), i, v)
        {
                if ((r = only_keys(v, "mounts[]", mk, err, errlen)) < 0 ||
                    (r = str_field(v, "hostPath", true, true, "mounts[]", err, errlen)) < 0 ||
                    (r = str_field(v, "containerPath", true, true, "mounts[]", err, errlen)) < 0)
                        return r;
        }
        json_array_foreach(json_object_get(e, "hooks"), i, v)
        {
                if ((r = only_keys(v, "hooks[]", hk, err, errlen)) < 0 ||
                    (r = str_field(v, "path", true, true, "hooks[]", err, errlen)) < 0)
                        return r;
                if (!hook_name_ok(json_string_value(json_object_get(v, "hookName"))))
                        return seterr(err, errlen, "hooks[]: invalid hookName");
        }
        return 0;
}

int kerf_cdi_spec_check(const json_t *spec, char *err, size_t errlen)
{
        static const char *const sk[] = {"cdiVersion", "kind", "devices", "containerEdits", NULL};
        static const char *const dk[] = {"name", "containerEdits", NULL};
        json_t *devs = json_object_get(spec, "devices"), *d, *d2;
        size_t i, j;
        int r = only_keys(spec, "spec", sk, err, errlen);
        if (r < 0)
                return r;
        if (!json_is_string(json_object_get(spec, "cdiVersion")) ||
            strcmp(json_string_value(json_object_get(spec, "cdiVersion")), KERF_CDI_VERSION))
                return seterr(err, errlen, "spec: cdiVersion must be \"%s\"", KERF_CDI_VERSION);
        if (!kerf_cdi_kind_ok(json_string_value(json_object_get(spec, "kind"))))
                return seterr(err, errlen, "spec: invalid kind");
        if (!json_is_array(devs) || json_array_size(devs) == 0)
                return seterr(err, errlen, "spec: at least one device is needed");
        if (json_object_get(spec, "containerEdits") &&
            (r = check_edits(json_object_get(spec, "containerEdits"), "containerEdits", err,
                             errlen)) < 0)
                return r;
        json_array_foreach(devs, i, d)
        {
                const char *name = json_string_value(json_object_get(d, "name"));
                json_t *e = json_object_get(d, "containerEdits");
                if ((r = only_keys(d, "devices[]", dk, err, errlen)) < 0)
                        return r;
                if (!kerf_cdi_name_ok(name))
                        return seterr(err, errlen, "devices[%zu]: invalid device name", i);
                json_array_foreach(devs, j,
                                   d2) if (j < i &&
                                           !strcmp(json_string_value(json_object_get(d2, "name")),
                                                   name)) return seterr(err, errlen,
                                                                        "devices: \"%s\" "
                                                                        "given twice",
                                                                        name);
                if (!json_is_object(e) || json_object_size(e) == 0)
                        return seterr(err, errlen, "device \"%s\": empty device edits", name);
                if ((r = check_edits(e, name, err, errlen)) < 0)
                        return r;
        }
        return 0;
}
