/* SPDX-License-Identifier: Apache-2.0 */
/* test_routes.c - walks kerfd's route table (src/daemon/api/routes.def) against a live kerfd: a
 * wrong method is 405 with Allow, an unknown path 404, an admin route 403 to a tenant's token,
 * a public route answers without identity and no other does; and docs/API.md lists exactly the
 * table's routes. Then the token cache (tokcache.c): a revoked token is refused on the very
 * next request, over both listeners. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "harness.h"

typedef struct route {
        const char *method, *pattern, *access;
} route;

static const route routes[] = {
#define KERFD_ROUTE(m, p, fn, acc, fl) {#m, p, #acc},
#include "routes.def"
#undef KERFD_ROUTE
};
#define N_ROUTES (sizeof(routes) / sizeof(routes[0]))

static const char *methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};

static kd K;
static char *alice;
static unsigned port;

static int setup(void **st)
{
        char extra[64];
        (void)st;
        port = kd_free_port();
        assert_true(port > 0);
        snprintf(extra, sizeof(extra), "listen_tcp: 127.0.0.1:%u\n", port);
        kd_setup(&K, extra);
        alice = kd_token(&K, "alice");
        return 0;
}

static int teardown(void **st)
{
        (void)st;
        kd_stop(&K);
        kd_cleanup(&K);
        free(alice);
        return 0;
}

typedef struct answer {
        long status;
        char allow[128];
        char error[64];
        char body[4096];
        size_t len;
} answer;

static size_t on_header(char *b, size_t sz, size_t n, void *u)
{
        answer *a = u;
        size_t l = sz * n;
        if (l > 6 && !strncasecmp(b, "Allow:", 6)) {
                size_t k = l - 6;
                const char *v = b + 6;
                while (k && (*v == ' '))
                        v++, k--;
                while (k && (v[k - 1] == '\r' || v[k - 1] == '\n'))
                        k--;
                snprintf(a->allow, sizeof(a->allow), "%.*s", (int)k, v);
        }
        return l;
}

static size_t on_body(char *b, size_t sz, size_t n, void *u)
{
        answer *a = u;
        size_t l = sz * n, room = sizeof(a->body) - 1 - a->len;
        memcpy(a->body + a->len, b, l < room ? l : room);
        a->len += l < room ? l : room;
        a->body[a->len] = 0;
        return l;
}

/* METHOD PATH on the Unix socket (tcp false: admin by peer credentials unless token) or on
 * loopback TCP (no identity unless token). */
static void call(const char *method, const char *path, const char *token, bool tcp, answer *a)
{
        CURL *c = curl_easy_init();
        struct curl_slist *h = NULL;
        char url[700], auth[256];
        json_t *j;

        memset(a, 0, sizeof(*a));
        if (tcp)
                snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
        else {
                snprintf(url, sizeof(url), "http://kerfd%s", path);
                curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, K.sock);
        }
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 15000L);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, a);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
        h = curl_slist_append(h, "Expect:");
        if (token) {
                snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
                h = curl_slist_append(h, auth);
        }
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        if (curl_easy_perform(c) == CURLE_OK)
                curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a->status);
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        if ((j = json_loads(a->body, 0, NULL))) {
                const char *e = json_string_value(json_object_get(j, "error"));
                snprintf(a->error, sizeof(a->error), "%s", e ? e : "");
                json_decref(j);
        }
}

/* The pattern with each {param} filled in: {name} alice, {index} 0, {id} 1. */
static void fill(const char *pattern, char *out, size_t cap)
{
        size_t o = 0;
        for (const char *p = pattern; *p && o + 8 < cap;) {
                if (*p == '{') {
                        const char *e = strchr(p, '}');
                        const char *v = !strncmp(p, "{name}", 6)    ? "alice"
                                        : !strncmp(p, "{index}", 7) ? "0"
                                                                    : "1";
                        o += (size_t)snprintf(out + o, cap - o, "%s", v);
                        p = e + 1;
                } else {
                        out[o++] = *p++;
                }
        }
        out[o] = 0;
}

/* The methods the table has for pattern, in table order, ", "-separated. */
static void allowed(const char *pattern, char *out, size_t cap)
{
        out[0] = 0;
        for (size_t i = 0; i < N_ROUTES; i++)
                if (!strcmp(routes[i].pattern, pattern) && !strstr(out, routes[i].method))
                        snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? ", " : "",
                                 routes[i].method);
}

static void test_wrong_method(void **st)
{
        char path[256], allow[64];
        answer a;
        (void)st;

        for (size_t i = 0; i < N_ROUTES; i++) {
                fill(routes[i].pattern, path, sizeof(path));
                allowed(routes[i].pattern, allow, sizeof(allow));
                for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++) {
                        if (strstr(allow, methods[m]))
                                continue;
                        /* as an admin and as a tenant: 405 comes before any access check */
                        for (int who = 0; who < 2; who++) {
                                call(methods[m], path, who ? alice : NULL, false, &a);
                                if (a.status != 405 || strcmp(a.error, "method_not_allowed") ||
                                    strcmp(a.allow, allow))
                                        fail_msg("%s %s: %ld %s, Allow \"%s\" (want 405, \"%s\")",
                                                 methods[m], path, a.status, a.error, a.allow,
                                                 allow);
                        }
                }
        }
}

static void test_unknown_paths(void **st)
{
        static const char *paths[] = {"/",
                                      "/v1",
                                      "/v1/",
                                      "/v1/nothing",
                                      "/metrics/x",
                                      "/v1/tasks/",
                                      "/v1/tasks/1/",
                                      "/v1/tasks/1/nothing",
                                      "/v1/tasks/1/cancel/x",
                                      "/v1/units/1/x",
                                      "/v1/gpus/0",
                                      "/v1/gpus/0/reset",
                                      "/v1/tenants/alice/tokens/1/x",
                                      "/v1/audit/nothing",
                                      "/v2/tasks"};
        answer a;
        (void)st;

        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
                for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++)
                        for (int who = 0; who < 2; who++) {
                                call(methods[m], paths[i], who ? alice : NULL, false, &a);
                                if (a.status != 404 || strcmp(a.error, "not_found") || a.allow[0])
                                        fail_msg("%s %s: %ld %s (want 404 not_found)", methods[m],
                                                 paths[i], a.status, a.error);
                        }
}

/* Every admin route refuses a tenant's token with 403 before its handler runs (nothing
 * changes: the token still works after its own revocation route was tried). */
static void test_admin_routes(void **st)
{
        char path[256];
        answer a;
        int n = 0;
        (void)st;

        for (size_t i = 0; i < N_ROUTES; i++) {
                if (strcmp(routes[i].access, "ADMIN") != 0)
                        continue;
                fill(routes[i].pattern, path, sizeof(path));
                call(routes[i].method, path, alice, false, &a);
                if (a.status != 403 || strcmp(a.error, "forbidden"))
                        fail_msg("%s %s with a tenant's token: %ld %s (want 403 forbidden)",
                                 routes[i].method, path, a.status, a.error);
                call(routes[i].method, path, alice, true, &a);
                if (a.status != 403)
                        fail_msg("%s %s with a tenant's token over TCP: %ld (want 403)",
                                 routes[i].method, path, a.status);
                n++;
        }
        assert_true(n >= 8);
        call("GET", "/v1/whoami", alice, true, &a);
        assert_int_equal(a.status, 200);
}

/* PUBLIC routes answer a caller with no identity (TCP, no token); every other route answers it
 * 401; a bad token is 401 on any route. */
static void test_identity(void **st)
{
        char path[256];
        answer a;
        int pub = 0;
        (void)st;

        for (size_t i = 0; i < N_ROUTES; i++) {
                bool is_pub = !strcmp(routes[i].access, "PUBLIC");
                fill(routes[i].pattern, path, sizeof(path));
                call(routes[i].method, path, NULL, true, &a);
                if (is_pub ? a.status != 200 : a.status != 401 || strcmp(a.error, "unauthorized"))
                        fail_msg("%s %s without identity: %ld %s (want %d)", routes[i].method, path,
                                 a.status, a.error, is_pub ? 200 : 401);
                call(routes[i].method, path, "kerf_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                     true, &a);
                if (a.status != 401)
                        fail_msg("%s %s with a bad token: %ld (want 401)", routes[i].method, path,
                                 a.status);
                pub += is_pub;
        }
        assert_true(pub >= 1);
        /* an anonymous caller of /v1/health learns nothing of the host's layout */
        call("GET", "/v1/health", NULL, true, &a);
        assert_null(strstr(a.body, "\"paths\""));
}

/* docs/API.md names every route as `METHOD /path...` (a query after '?'); the set of those is
 * the table's. */
static void test_docs(void **st)
{
        char *doc = kd_read(KERF_SOURCE_DIR "/docs/API.md");
        char seen[N_ROUTES] = {0};
        int bad = 0;
        (void)st;

        assert_non_null(doc);
        for (char *p = doc; (p = strchr(p, '`'));) {
                char m[8], path[256];
                size_t ml, pl;
                p++;
                ml = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
                if (ml == 0 || ml >= sizeof(m) || p[ml] != ' ' || p[ml + 1] != '/')
                        continue;
                snprintf(m, sizeof(m), "%.*s", (int)ml, p);
                pl = strcspn(p + ml + 1, "?` ");
                if (pl >= sizeof(path))
                        continue;
                snprintf(path, sizeof(path), "%.*s", (int)pl, p + ml + 1);
                size_t i;
                for (i = 0; i < N_ROUTES; i++)
                        if (!strcmp(routes[i].method, m) && !strcmp(routes[i].pattern, path))
                                break;
                if (i == N_ROUTES) {
                        fprintf(stderr, "docs/API.md names %s %s: no such route\n", m, path);
                        bad++;
                } else {
                        seen[i] = 1;
                }
        }
        for (size_t i = 0; i < N_ROUTES; i++)
                if (!seen[i]) {
                        fprintf(stderr, "docs/API.md misses `%s %s`\n", routes[i].method,
                                routes[i].pattern);
                        bad++;
                }
        free(doc);
        assert_int_equal(bad, 0);
}

/* D4: tokens are verified before the daemon mutex through a cache (src/daemon/api/tokcache.c);
 * revoking one takes effect on the very next request, cached or not. */
static void test_revoke_next_request(void **st)
{
        long s;
        answer a;
        char tok[128], path[128];
        json_t *j = kd_call(&K, "POST", "/v1/tenants/bob/tokens", NULL, NULL, &s, NULL);
        unsigned long long id = (unsigned long long)json_integer_value(json_object_get(j, "id"));
        (void)st;

        assert_int_equal(s, 201);
        snprintf(tok, sizeof(tok), "%s", json_string_value(json_object_get(j, "token")));
        json_decref(j);
        /* verified once, then answered from the cache, on both listeners */
        for (int i = 0; i < 4; i++) {
                call("GET", "/v1/whoami", tok, i & 1, &a);
                assert_int_equal(a.status, 200);
                assert_non_null(strstr(a.body, "\"bob\""));
        }
        snprintf(path, sizeof(path), "/v1/tenants/bob/tokens/%llu", id);
        json_decref(kd_call(&K, "DELETE", path, NULL, NULL, &s, NULL));
        assert_int_equal(s, 204);
        /* the very next request, on either listener, is refused */
        call("GET", "/v1/whoami", tok, false, &a);
        assert_int_equal(a.status, 401);
        call("GET", "/v1/tasks", tok, true, &a);
        assert_int_equal(a.status, 401);
        /* alice's token, cached before, still works */
        call("GET", "/v1/whoami", alice, true, &a);
        assert_int_equal(a.status, 200);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_docs),          cmocka_unit_test(test_wrong_method),
            cmocka_unit_test(test_unknown_paths), cmocka_unit_test(test_admin_routes),
            cmocka_unit_test(test_identity),      cmocka_unit_test(test_revoke_next_request),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
