/* SPDX-License-Identifier: Apache-2.0 */
/* route.c - the route table (routes.def) and the one place that answers 404, 405, 507 for new
 * work and 403 for admin routes before a handler runs */
#include <stdio.h>
#include <string.h>

#include "api.h"

typedef enum { KR_PUBLIC, KR_TENANT, KR_ADMIN } kroute_access;
enum { KR_NONE = 0, KR_NEW_WORK = 1 };

typedef struct kroute {
        const char *method, *pattern;
        void (*fn)(kreq *r);
        kroute_access access;
        unsigned flags;
} kroute;

static const kroute routes[] = {
#define KERFD_ROUTE(m, p, fn, acc, fl) {#m, p, fn, KR_##acc, KR_##fl},
#include "routes.def"
#undef KERFD_ROUTE
};

#define N_ROUTES (sizeof(routes) / sizeof(routes[0]))

/* Whether path matches pattern segment by segment; a {param} segment matches one non-empty
 * segment, copied (cut to fit) into r's params when r is not NULL. */
static bool match(const char *pattern, const char *path, kreq *r)
{
        const char *p = pattern, *s = path;
        unsigned np = 0;

        while (*p && *s) {
                if (*p == '{') {
                        const char *pe = strchr(p, '}'), *se = strchr(s, '/');
                        size_t l = se ? (size_t)(se - s) : strlen(s);
                        if (!pe || l == 0 || np >= 2)
                                return false;
                        if (r) {
                                snprintf(
                                    r->param[np], sizeof(r->param[np]), "%.*s",
                                    (int)(l < sizeof(r->param[np]) ? l : sizeof(r->param[np]) - 1),
                                    s);
                                r->param_len[np] = l;
                        }
                        np++;
                        p = pe + 1;
                        s += l;
                        continue;
                }
                if (*p != *s)
                        return false;
                p++;
                s++;
        }
        if (*p || *s)
                return false;
        if (r)
                r->n_param = np;
        return true;
}

/* The route for method+path, or NULL. With allow (cap bytes), the methods of every route whose
 * pattern matches path, ", "-separated ("" when none: no such path). */
static const kroute *find(const char *method, const char *path, char *allow, size_t cap)
{
        const kroute *hit = NULL;

        if (allow)
                allow[0] = 0;
        for (size_t i = 0; i < N_ROUTES; i++) {
                if (!match(routes[i].pattern, path, NULL))
                        continue;
                if (!strcmp(routes[i].method, method) && !hit)
                        hit = &routes[i];
                if (allow && !strstr(allow, routes[i].method)) {
                        size_t l = strlen(allow);
                        snprintf(allow + l, cap - l, "%s%s", l ? ", " : "", routes[i].method);
                }
        }
        return hit;
}

bool kerfd__route_public(const char *method, const char *path)
{
        const kroute *rt = find(method, path, NULL, 0);
        return rt && rt->access == KR_PUBLIC;
}

void kerfd_api_dispatch(kreq *r)
{
        const kroute *rt = find(r->method, r->path, r->allow, sizeof(r->allow));

        if (!rt) {
                if (!r->allow[0])
                        kreq_error(r, 404, "not_found", "no such endpoint: %s %s", r->method,
                                   r->path);
                else
                        kreq_error(r, 405, "method_not_allowed", "%s is not allowed on %s (%s)",
                                   r->method, r->path, r->allow);
                return;
        }
        r->allow[0] = 0;
        match(rt->pattern, r->path, r);
        if ((rt->flags & KR_NEW_WORK) && kerfd__store_refuse(r))
                return;
        if (rt->access == KR_ADMIN && !r->admin) {
                kreq_error(r, 403, "forbidden", "%s %s is admin only", rt->method, rt->pattern);
                return;
        }
        rt->fn(r);
}
