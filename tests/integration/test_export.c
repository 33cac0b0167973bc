/* SPDX-License-Identifier: Apache-2.0 */
/* test_export.c - `kerf export` (the real kerf binary) from a throwaway kerfd: every file the
 * manifest lists is in the archive with its sha256, the expected files are all there, no token
 * or signing key leaks into it, the exported audit chain verifies offline against the exported
 * checkpoint and kerfd's public key; a tenant is refused; a failing export leaves no file.
 * Also GET /v1/config (admin only) and `kerf cost` on the command line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static kd K;
static char *alice_tok;

static int setup(void **st)
{
        (void)st;
        assert_true(sodium_init() >= 0);
        kd_setup(&K, NULL);
        alice_tok = kd_token(&K, "alice");
        return 0;
}

static int teardown(void **st)
{
        (void)st;
        kd_stop(&K);
        kd_cleanup(&K);
        return 0;
}

/* Runs the kerf CLI on this kerfd (token may be NULL); returns its exit code, stdout in *out
 * (heap, may be NULL). */
static int kerf(const char *token, char **out, ...)
{
        char *argv[32], of[400];
        int n = 0, st = 0;
        va_list ap;
        pid_t p;

        argv[n++] = "kerf";
        argv[n++] = "--socket";
        argv[n++] = K.sock;
        if (token) {
                argv[n++] = "--token";
                argv[n++] = (char *)token;
        }
        va_start(ap, out);
        for (char *a; (a = va_arg(ap, char *)) != NULL && n < 31;)
                argv[n++] = a;
        va_end(ap);
        argv[n] = NULL;
        snprintf(of, sizeof(of), "%s/cli.out", K.dir);
        p = fork();
        assert_true(p >= 0);
        if (p == 0) {
                int fo = open(of, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fo < 0)
                        _exit(126);
                dup2(fo, 1);
                unsetenv("KERF_TOKEN");
                execv(KERF_CLI, argv);
                _exit(127);
        }
        assert_int_equal(waitpid(p, &st, 0), p);
        if (out)
                *out = kd_read(of);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

typedef struct entry {
        char path[512];
        char *data;
        size_t len;
} entry;

/* Reads every entry of a tar archive into memory. */
static entry *unpack(const char *file, size_t *ret_n)
{
        struct archive *a = archive_read_new();
        struct archive_entry *e;
        entry *v = calloc(256, sizeof(*v));
        size_t n = 0;

        archive_read_support_format_tar(a);
        assert_int_equal(archive_read_open_filename(a, file, 65536), ARCHIVE_OK);
        while (archive_read_next_header(a, &e) == ARCHIVE_OK && n < 256) {
                size_t len = (size_t)archive_entry_size(e);
                snprintf(v[n].path, sizeof(v[n].path), "%s", archive_entry_pathname(e));
                v[n].data = malloc(len + 1);
                assert_int_equal(archive_read_data(a, v[n].data, len), (la_ssize_t)len);
                v[n].data[len] = 0;
                v[n].len = len;
                n++;
        }
        archive_read_free(a);
        *ret_n = n;
        return v;
}

static entry *find(entry *v, size_t n, const char *path)
{
        for (size_t i = 0; i < n; i++)
                if (!strcmp(v[i].path, path))
                        return &v[i];
        return NULL;
}

static void write_file(const char *path, const char *text)
{
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
}

static size_t lines(const entry *e)
{
        size_t k = 0;
        for (size_t i = 0; i < e->len; i++)
                k += e->data[i] == '\n';
        return k;
}

static void test_export_archive(void **st)
{
        (void)st;
        char out[512], poc[512], sub[600], path[700], *o = NULL;
        unsigned long long a, b;
        entry *v;
        size_t n, i;
        json_t *man, *f;

        a = kd_submit(&K, "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"]}", NULL);
        b = kd_submit(&K, "{\"tenant\":\"bob\",\"route\":\"whole\",\"command\":[\"/bin/true\"]}",
                      NULL);
        json_decref(kd_wait_task(&K, a, NULL, 15000));
        json_decref(kd_wait_task(&K, b, NULL, 15000));
        /* a POC report directory with a subfolder */
        snprintf(poc, sizeof(poc), "%s/run-1", K.dir);
        mkdir(poc, 0755);
        snprintf(sub, sizeof(sub), "%s/logs", poc);
        mkdir(sub, 0755);
        snprintf(path, sizeof(path), "%s/report.json", poc);
        write_file(path, "{\"records\":[]}\n");
        snprintf(path, sizeof(path), "%s/serve.log", sub);
        write_file(path, "line 1\nline 2\n");

        snprintf(out, sizeof(out), "%s/export.tar", K.dir);
        assert_int_equal(kerf(NULL, &o, "export", "--out", out, "--poc", poc, (char *)NULL), 0);
        free(o);
        v = unpack(out, &n);
        /* the manifest is last and lists every other file with its digest */
        assert_true(n > 1);
        assert_string_equal(v[n - 1].path, "manifest.json");
        man = json_loads(v[n - 1].data, 0, NULL);
        assert_non_null(man);
        assert_string_equal(json_string_value(json_object_get(man, "kind")), "kerf-export");
        assert_non_null(json_string_value(json_object_get(man, "metrics_history")));
        assert_non_null(json_object_get(json_object_get(man, "kerfd"), "kerf"));
        assert_int_equal(json_array_size(json_object_get(man, "files")), n - 1);
        json_array_foreach(json_object_get(man, "files"), i, f)
        {
                const char *p = json_string_value(json_object_get(f, "path"));
                unsigned char h[32];
                char hex[65];
                entry *e = find(v, n, p);
                assert_non_null(e);
                assert_int_equal(json_integer_value(json_object_get(f, "bytes")), e->len);
                crypto_hash_sha256(h, (const unsigned char *)e->data, e->len);
                sodium_bin2hex(hex, sizeof(hex), h, sizeof(h));
                assert_string_equal(json_string_value(json_object_get(f, "sha256")), hex);
        }
        json_decref(man);
        static const char *const want[] = {"config.json",
                                           "tenants.jsonl",
                                           "tasks.jsonl",
                                           "units.jsonl",
                                           "gpus.jsonl",
                                           "events.jsonl",
                                           "audit/audit.jsonl",
                                           "audit/checkpoint.json",
                                           "cost/runs.jsonl",
                                           "cost/summary.json",
                                           "metrics.prom",
                                           "poc/run-1/report.json",
                                           "poc/run-1/logs/serve.log"};
        for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
                if (!find(v, n, want[i]))
                        fail_msg("%s is not in the archive", want[i]);
        assert_string_equal(find(v, n, "poc/run-1/logs/serve.log")->data, "line 1\nline 2\n");
        /* every task (at least the two here), both tenants, the runs of the started ones */
        assert_true(lines(find(v, n, "tasks.jsonl")) >= 2);
        assert_non_null(strstr(find(v, n, "tenants.jsonl")->data, "\"bob\""));
        assert_true(lines(find(v, n, "cost/runs.jsonl")) >= 2);
        assert_non_null(strstr(find(v, n, "config.json")->data, "\"state_dir\""));
        /* no secrets: not the tenant token, not the audit signing key */
        char keyp[512], *key;
        snprintf(keyp, sizeof(keyp), "%s/state/audit.key", K.dir);
        key = kd_read(keyp);
        assert_non_null(key);
        key[strcspn(key, "\n")] = 0;
        for (i = 0; i < n; i++) {
                if (strstr(v[i].data, alice_tok) || strstr(v[i].data, key))
                        fail_msg("%s holds a secret", v[i].path);
        }
        free(key);
        /* the audit chain verifies offline against the exported checkpoint and kerfd's key */
        char ap[600], cp[600], pub[600];
        snprintf(ap, sizeof(ap), "%s/x-audit.jsonl", K.dir);
        snprintf(cp, sizeof(cp), "%s/x-checkpoint.json", K.dir);
        snprintf(pub, sizeof(pub), "%s/state/audit.pub", K.dir);
        write_file(ap, find(v, n, "audit/audit.jsonl")->data);
        write_file(cp, find(v, n, "audit/checkpoint.json")->data);
        assert_int_equal(kerf(NULL, NULL, "audit", "verify", "--in", ap, "--against", cp, "--key",
                              pub, (char *)NULL),
                         0);
        /* and an edited export does not */
        char *bad = strdup(find(v, n, "audit/audit.jsonl")->data);
        char *q = strstr(bad, "task.submit");
        assert_non_null(q);
        q[0] = 'T';
        write_file(ap, bad);
        free(bad);
        assert_int_not_equal(kerf(NULL, NULL, "audit", "verify", "--in", ap, "--against", cp,
                                  "--key", pub, (char *)NULL),
                             0);
        for (i = 0; i < n; i++)
                free(v[i].data);
        free(v);
}

/* Nothing named FILE or FILE.tmp.* in dir. */
static void assert_no_file(const char *dir, const char *base)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        assert_non_null(d);
        while ((de = readdir(d)))
                if (!strncmp(de->d_name, base, strlen(base)))
                        fail_msg("%s/%s was left behind", dir, de->d_name);
        closedir(d);
}

static void test_export_refused(void **st)
{
        (void)st;
        char out[512], poc[512], link[600];
        long s;
        json_t *j;

        /* a tenant: refused (exit 5), nothing written */
        snprintf(out, sizeof(out), "%s/tenant.tar", K.dir);
        assert_int_equal(kerf(alice_tok, NULL, "export", "--out", out, (char *)NULL), 5);
        assert_no_file(K.dir, "tenant.tar");
        /* an --out in a directory that does not exist */
        snprintf(out, sizeof(out), "%s/no/such/dir/x.tar", K.dir);
        assert_int_equal(kerf(NULL, NULL, "export", "--out", out, (char *)NULL), 1);
        /* a failure half-way (a link inside a POC report): no partial file */
        snprintf(poc, sizeof(poc), "%s/run-bad", K.dir);
        mkdir(poc, 0755);
        snprintf(link, sizeof(link), "%s/evil", poc);
        assert_int_equal(symlink("/etc/passwd", link), 0);
        snprintf(out, sizeof(out), "%s/half.tar", K.dir);
        assert_int_equal(kerf(NULL, NULL, "export", "--out", out, "--poc", poc, (char *)NULL), 2);
        assert_no_file(K.dir, "half.tar");
        /* missing --out */
        assert_int_equal(kerf(NULL, NULL, "export", (char *)NULL), 2);
        /* GET /v1/config: admin only */
        j = kd_call(&K, "GET", "/v1/config", NULL, alice_tok, &s, NULL);
        assert_int_equal(s, 403);
        json_decref(j);
        j = kd_call(&K, "GET", "/v1/config", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_non_null(json_object_get(j, "policy"));
        assert_true(json_is_array(json_object_get(json_object_get(j, "fleet"), "gpus")));
        json_decref(j);
        /* the runs list pages and is tenant-scoped */
        j = kd_call(&K, "GET", "/v1/cost/runs?limit=1", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_int_equal(json_array_size(json_object_get(j, "items")), 1);
        assert_true(json_is_string(json_object_get(j, "next")));
        json_decref(j);
        j = kd_call(&K, "GET", "/v1/cost/runs", NULL, alice_tok, &s, NULL);
        assert_int_equal(s, 200);
        size_t i;
        json_t *it;
        json_array_foreach(json_object_get(j, "items"), i, it)
            assert_string_equal(json_string_value(json_object_get(it, "tenant")), "alice");
        json_decref(j);
}

static void test_cost_cli(void **st)
{
        (void)st;
        char *o = NULL;
        json_t *j;

        assert_int_equal(kerf(NULL, &o, "cost", "--since", "1h", "--json", (char *)NULL), 0);
        j = json_loads(o, 0, NULL);
        free(o);
        assert_non_null(j);
        assert_true(json_is_array(json_object_get(j, "items")));
        assert_true(json_integer_value(json_object_get(j, "to_ms")) -
                        json_integer_value(json_object_get(j, "from_ms")) >=
                    3600000 - 5000);
        json_decref(j);
        assert_int_equal(kerf(NULL, &o, "cost", "--since", "2026-01-01T00:00:00Z", "--until",
                              "2026-01-02", "--json", (char *)NULL),
                         0);
        j = json_loads(o, 0, NULL);
        free(o);
        assert_int_equal(json_integer_value(json_object_get(j, "from_ms")), 1767225600000LL);
        assert_int_equal(json_integer_value(json_object_get(j, "to_ms")), 1767312000000LL);
        json_decref(j);
        assert_int_equal(kerf(NULL, &o, "cost", "--by", "tenant", (char *)NULL), 0);
        assert_non_null(strstr(o, "GRANTED GPU-H"));
        assert_non_null(strstr(o, "alice"));
        free(o);
        assert_int_equal(kerf(NULL, NULL, "cost", "--since", "yesterday", (char *)NULL), 2);
        assert_int_equal(kerf(NULL, NULL, "cost", "--since", "1h", "--until", "2h", (char *)NULL),
                         2);
        /* a bad --by reaches kerfd, which names it (400: exit 1) */
        assert_int_equal(kerf(NULL, NULL, "cost", "--by", "gpu", (char *)NULL), 1);
}

int main(void)
{
        signal(SIGPIPE, SIG_IGN);
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_export_archive),
            cmocka_unit_test(test_export_refused),
            cmocka_unit_test(test_cost_cli),
        };
        return cmocka_run_group_tests(tests, setup, teardown);
}
