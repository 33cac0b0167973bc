/* SPDX-License-Identifier: Apache-2.0 */
/* test_config_fields.c - kerfd.yaml's limits: and retention: descriptors (config_fields.c):
 * defaults valid and applied, bounds in order, and docs/DAEMON.md's "Configuration reference"
 * row of each key giving its default and its bounds */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_fields.h"

static void test_defaults(void **st)
{
        kerfd_config c;
        (void)st;
        memset(&c, 0, sizeof(c));
        assert_int_equal(kerfd__cfg_limits_defaults(&c), 0);
        assert_int_equal(c.max_body, 64 * KERF_KIB);
        assert_int_equal(c.max_tasks, 100000);
        assert_true(c.submit_rate == 0.0);
        assert_int_equal(c.submit_burst, 100);
        assert_int_equal(c.grace_s, 10);
        assert_int_equal(c.tick_ms, 50);
        assert_int_equal(c.threads, 4);
        assert_int_equal(c.min_lease_s, 30);
        assert_int_equal(c.max_conns, 256);
        assert_int_equal(c.max_conns_per_peer, 32);
        assert_int_equal(c.admin_conns, 32);
        assert_int_equal(c.request_timeout_s, 10);
        for (size_t i = 0; i < kerfd_limits_keys_count; i++) {
                const kerf_field *f = &kerfd_limits_keys[i].f;
                if (f->min > f->max || !f->help || !*f->help)
                        fail_msg("limits.%s: bounds %lld..%lld or no help", f->name,
                                 (long long)f->min, (long long)f->max);
                for (size_t j = 0; j < i; j++)
                        assert_string_not_equal(f->name, kerfd_limits_keys[j].f.name);
        }
        /* a key's slot is its own: storing one value changes that member only */
        kerfd_config d = c;
        kerfd__cfg_key_store(&d, &kerfd_limits_keys[6], 7); /* threads */
        assert_string_equal(kerfd_limits_keys[6].f.name, "threads");
        assert_int_equal(d.threads, 7);
        d.threads = c.threads;
        assert_memory_equal(&c, &d, sizeof(c));
}

/* The bounds of f as docs/DAEMON.md writes them: "1..256", "1KiB..64MiB", "0s..1h"; "" for a
 * bool, a string or a custom key (an enum's words are checked one by one). */
static void bounds_words(const kerf_field *f, char *buf, size_t len)
{
        char a[KERF_UNITS_BUF], b[KERF_UNITS_BUF];
        if (f->type == KERF_FIELD_BOOL || f->type == KERF_FIELD_STRING ||
            f->type == KERF_FIELD_OBJECT || f->type == KERF_FIELD_ENUM)
                snprintf(buf, len, "%s", "");
        else if (f->type == KERF_FIELD_SIZE)
                snprintf(buf, len, "%s..%s", kerf_format_size((uint64_t)f->min, a, sizeof(a)),
                         kerf_format_size((uint64_t)f->max, b, sizeof(b)));
        else if (f->type == KERF_FIELD_DURATION)
                snprintf(buf, len, "%s..%s", kerf_format_duration((uint64_t)f->min, a, sizeof(a)),
                         kerf_format_duration((uint64_t)f->max, b, sizeof(b)));
        else
                snprintf(buf, len, "%lld..%lld", (long long)f->min, (long long)f->max);
}

/* Every row "| `SECTION.KEY` | DEFAULT | MEANING; BOUNDS |" of docs/DAEMON.md for a section
 * read through descriptors: the key exists, the default (backticks aside) is the descriptor's,
 * the meaning gives its bounds; and every key has a row. Returns the number of problems. */
static int check_section(const kerfd_cfg_section *sec)
{
        FILE *fp = fopen(KERF_SOURCE_DIR "/docs/DAEMON.md", "r");
        char line[2048], prefix[64];
        int bad = 0;
        bool seen[64] = {false};
        assert_non_null(fp);
        snprintf(prefix, sizeof(prefix), "| `%s.", sec->name);
        while (fgets(line, sizeof(line), fp)) {
                if (strncmp(line, prefix, strlen(prefix)) != 0)
                        continue;
                char *name = line + strlen(prefix), *e = strchr(name, '`');
                assert_non_null(e);
                *e = '\0';
                if (strchr(name, '.')) /* policy.routes.<workload>.<tier>: the key routes */
                        *strchr(name, '.') = '\0';
                const kerfd_cfg_key *k = NULL;
                for (size_t i = 0; i < sec->n; i++)
                        if (!strcmp(sec->keys[i].f.name, name)) {
                                k = &sec->keys[i];
                                seen[i] = true;
                        }
                if (!k) {
                        fprintf(stderr, "docs/DAEMON.md: %s.%s: no such key\n", sec->name, name);
                        bad++;
                        continue;
                }
                char *def = strchr(e + 1, '|'), *mean, *end;
                assert_non_null(def);
                def++;
                mean = strchr(def, '|');
                assert_non_null(mean);
                *mean++ = '\0';
                end = strrchr(mean, '|');
                if (end)
                        *end = '\0';
                while (*def == ' ' || *def == '`')
                        def++;
                for (char *t = def + strlen(def); t > def && (t[-1] == ' ' || t[-1] == '`');)
                        *--t = '\0';
                char want[64];
                bool words = true;
                bounds_words(&k->f, want, sizeof(want));
                for (unsigned w = 0; k->f.type == KERF_FIELD_ENUM && k->f.value_name(w); w++)
                        words = words && strstr(mean, k->f.value_name(w));
                if (strcmp(def, k->f.def) || !strstr(mean, want) || !words) {
                        fprintf(stderr,
                                "docs/DAEMON.md: %s.%s: default [%s] meaning [%s]; want "
                                "default [%s] and bounds [%s] in the meaning\n",
                                sec->name, name, def, mean, k->f.def, want);
                        bad++;
                }
        }
        fclose(fp);
        for (size_t i = 0; i < sec->n; i++)
                if (!seen[i]) {
                        fprintf(stderr, "docs/DAEMON.md: no row for %s.%s\n", sec->name,
                                sec->keys[i].f.name);
                        bad++;
                }
        return bad;
}

static void test_daemon_md(void **st)
{
        (void)st;
        assert_int_equal(check_section(&kerfd_cfg_limits) + check_section(&kerfd_cfg_retention) +
                             check_section(&kerfd_cfg_policy) + check_section(&kerfd_cfg_backend),
                         0);
}

/* retention: defaults from the descriptors, each key its own member, the bounds in order */
static void test_retention(void **st)
{
        kerfd_retention_cfg r;
        (void)st;
        memset(&r, 0xff, sizeof(r));
        kerfd_retention_defaults(&r);
        assert_int_equal(r.logs_after_s, 7 * KERF_DAY_S);
        assert_int_equal(r.work_dirs_after_s, KERF_DAY_S);
        assert_int_equal(r.max_log_bytes, KERF_GIB);
        assert_int_equal(r.tasks_after_s, 0);
        assert_int_equal(r.interval_s, 3600);
        for (size_t i = 0; i < kerfd_cfg_retention.n; i++) {
                const kerf_field *f = &kerfd_cfg_retention.keys[i].f;
                if (f->min > f->max || !f->help || !*f->help)
                        fail_msg("retention.%s: bounds or help", f->name);
                kerfd_retention_cfg d = r;
                kerfd__cfg_key_store(&d, &kerfd_cfg_retention.keys[i], 12345);
                unsigned changed = 0;
                for (size_t b = 0; b < sizeof(r); b++)
                        changed += ((char *)&d)[b] != ((char *)&r)[b];
                assert_true(changed > 0 && changed <= sizeof(uint64_t));
        }
}

/* policy: and backend: take their defaults from kerf_policy_default and kerfd_config_defaults:
 * each descriptor's default is what those set (a string member "" is the descriptor's default,
 * e.g. the backend's own NVML library name) */
static void test_policy_backend_defaults(void **st)
{
        static kerfd_config c;
        const kerfd_cfg_section *secs[] = {&kerfd_cfg_policy, &kerfd_cfg_backend};
        (void)st;
        kerfd_config_defaults(&c);
        for (size_t s = 0; s < 2; s++)
                for (size_t i = 0; i < secs[s]->n; i++) {
                        const kerfd_cfg_key *k = &secs[s]->keys[i];
                        const char *p = (const char *)&c + k->off, *d = k->f.def;
                        bool b;
                        int iv;
                        unsigned u;
                        uint64_t v, w;
                        switch (k->slot) {
                        case KERFD_SLOT_BOOL:
                                memcpy(&b, p, sizeof(b));
                                if (k->f.type == KERF_FIELD_BOOL)
                                        assert_int_equal(b, !strcmp(d, "true"));
                                else
                                        assert_int_equal(b, k->f.value_parse(d) == 1);
                                break;
                        case KERFD_SLOT_INT:
                                memcpy(&iv, p, sizeof(iv));
                                assert_int_equal(iv, k->f.value_parse(d));
                                break;
                        case KERFD_SLOT_U64:
                                memcpy(&v, p, sizeof(v));
                                assert_int_equal(kerf_parse_size(d, &w, NULL, 0), 0);
                                assert_int_equal(v, w);
                                break;
                        case KERFD_SLOT_UNSIGNED:
                                memcpy(&u, p, sizeof(u));
                                assert_int_equal(u, strtoul(d, NULL, 10));
                                break;
                        case KERFD_SLOT_STR:
                                if (*p)
                                        assert_string_equal(p, d);
                                break;
                        default:
                                break;
                        }
                }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_defaults),
            cmocka_unit_test(test_daemon_md),
            cmocka_unit_test(test_retention),
            cmocka_unit_test(test_policy_backend_defaults),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
