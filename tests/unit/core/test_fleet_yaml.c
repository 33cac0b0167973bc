/* SPDX-License-Identifier: Apache-2.0 */
/* test_fleet_yaml.c - the fleet YAML reader: good files, shipped examples, and bad files */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kerf/core.h"
#include "kerf/errno.h"

static kerf_fleet *parse_ok(const char *y)
{
        char err[512] = "";
        kerf_fleet *f = NULL;
        int r = kerf_fleet_parse_yaml(y, strlen(y), &f, err, sizeof(err));

        if (r != 0)
                print_error("unexpected parse failure %d: %s\n", r, err);
        assert_int_equal(r, 0);
        assert_non_null(f);
        return f;
}

/* Asserts that `y` is rejected with an error on `line` that mentions every `what`. */
static void parse_bad(const char *y, unsigned line, const char *what, const char *what2)
{
        char err[512] = "", prefix[32];
        kerf_fleet *f = (kerf_fleet *)0x1;
        int r = kerf_fleet_parse_yaml(y, strlen(y), &f, err, sizeof(err));

        snprintf(prefix, sizeof(prefix), "line %u: ", line);
        if (r != -KERF_EPARSE || strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, what) ||
            (what2 && !strstr(err, what2)))
                print_error("r=%d err='%s' want '%s' + '%s' + '%s'\n", r, err, prefix, what,
                            what2 ? what2 : "");
        assert_int_equal(r, -KERF_EPARSE);
        assert_ptr_equal(f, (kerf_fleet *)0x1); /* untouched on failure */
        assert_true(strncmp(err, prefix, strlen(prefix)) == 0);
        assert_non_null(strstr(err, what));
        if (what2)
                assert_non_null(strstr(err, what2));
}

static const char good_8xh200[] = "# one HGX H200 node\n"
                                  "nodes:\n"
                                  "  - name: node0\n"
                                  "    cpus: 112\n"
                                  "    memory: 2TiB\n"
                                  "    driver: \"550.54.15\"\n"
                                  "    cuda: \"12.4\"\n"
                                  "    gpus:\n"
                                  "      - {model: H200, count: 2, mig: true, numa: 0, nvlink: a}\n"
                                  "      - model: h200-141gb\n"
                                  "        count: 2\n"
                                  "        numa: 0\n"
                                  "        nvlink: a\n"
                                  "      - {model: NVIDIA H200, count: 4, numa: 1, nvlink: a}\n";

static void good_h200_node(void **state)
{
        kerf_fleet *f = parse_ok(good_8xh200);

        (void)state;
        assert_int_equal(f->n_nodes, 1);
        assert_int_equal(f->n_gpus, 8);
        assert_string_equal(f->nodes[0].name, "node0");
        assert_int_equal(f->nodes[0].cpu_milli, 112000);
        assert_int_equal(f->nodes[0].mem_bytes, 2048ULL * KERF_GIB);
        assert_string_equal(f->nodes[0].driver_version, "550.54.15");
        assert_int_equal(f->nodes[0].cuda_version, 12040);
        for (unsigned i = 0; i < 8; i++) {
                assert_string_equal(f->gpus[i].model->name, "H200-141GB");
                assert_int_equal(f->gpus[i].mig_enabled, i < 2);
                assert_int_equal(f->gpus[i].numa, i < 4 ? 0 : 1);
                assert_int_equal(f->gpus[i].index, i);
                assert_int_equal(f->gpus[i].nvlink_peers, 0xffULL & ~(1ULL << i));
        }
        /* same text, same UUIDs */
        kerf_fleet *g = parse_ok(good_8xh200);
        for (unsigned i = 0; i < 8; i++)
                assert_string_equal(f->gpus[i].uuid, g->gpus[i].uuid);
        kerf_fleet_free(g);
        kerf_fleet_free(f);
}

static void replicated_nodes(void **state)
{
        kerf_fleet *f =
            parse_ok("nodes:\n"
                     "  - name: gpu\n"
                     "    count: 3\n"
                     "    cpu_milli: 64000\n"
                     "    memory: 512GiB\n"
                     "    cuda: 12020\n"
                     "    gpus:\n"
                     "      - {model: A100-80GB, count: 2, nvlink: x}\n"
                     "      - {model: A100-80GB, count: 2, nvlink: y}\n"
                     "      - {model: T4}\n"
                     "  - name: solo\n"
                     "    cpus: 0.5\n"
                     "    gpus:\n"
                     "      - {model: H100, uuid: GPU-11111111-2222-3333-4444-555555555555}\n"
                     "  - name: cpu-only\n");

        (void)state;
        assert_int_equal(f->n_nodes, 5);
        assert_int_equal(f->n_gpus, 3 * 5 + 1);
        assert_string_equal(f->nodes[0].name, "gpu-0");
        assert_string_equal(f->nodes[2].name, "gpu-2");
        assert_string_equal(f->nodes[3].name, "solo");
        assert_string_equal(f->nodes[4].name, "cpu-only");
        assert_int_equal(f->nodes[4].n_gpus, 0);
        assert_string_equal(f->nodes[4].driver_version, "unknown");
        assert_int_equal(f->nodes[3].cpu_milli, 500);
        assert_int_equal(f->nodes[1].cpu_milli, 64000);
        assert_int_equal(f->nodes[1].cuda_version, 12020);
        assert_int_equal(f->nodes[1].first_gpu, 5);
        assert_int_equal(f->nodes[1].n_gpus, 5);
        for (unsigned n = 0; n < 3; n++) {
                const kerf_gpu_desc *g = &f->gpus[f->nodes[n].first_gpu];
                assert_int_equal(g[0].nvlink_peers, 0x2);
                assert_int_equal(g[1].nvlink_peers, 0x1);
                assert_int_equal(g[2].nvlink_peers, 0x8);
                assert_int_equal(g[3].nvlink_peers, 0x4);
                assert_int_equal(g[4].nvlink_peers, 0);
                assert_string_equal(g[4].model->name, "T4");
                assert_int_equal(g[4].numa, -1);
                assert_false(g[0].mig_enabled);
        }
        assert_string_equal(f->gpus[15].uuid, "GPU-11111111-2222-3333-4444-555555555555");
        assert_int_equal(kerf_fleet_gpu_by_uuid(f, "GPU-11111111-2222-3333-4444-555555555555"), 15);
        /* replicas get distinct UUIDs */
        assert_string_not_equal(f->gpus[0].uuid, f->gpus[5].uuid);
        kerf_fleet_free(f);
}

static char *slurp(const char *rel, size_t *len)
{
        char path[4096];
        const char *me = __FILE__, *cut = strstr(me, "tests/unit/core/");
        FILE *fp;
        char *buf;
        long n;

        assert_non_null(cut);
        snprintf(path, sizeof(path), "%.*s%s", (int)(cut - me), me, rel);
        fp = fopen(path, "rb");
        if (!fp)
                print_error("cannot open %s\n", path);
        assert_non_null(fp);
        assert_int_equal(fseek(fp, 0, SEEK_END), 0);
        n = ftell(fp);
        assert_true(n > 0);
        rewind(fp);
        buf = malloc((size_t)n + 1);
        assert_non_null(buf);
        assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
        buf[n] = '\0';
        fclose(fp);
        *len = (size_t)n;
        return buf;
}

static void example_files(void **state)
{
        char err[512] = "";
        kerf_fleet *f = NULL;
        size_t len;
        char *text;

        (void)state;
        text = slurp("examples/fleet-8xh200.yaml", &len);
        assert_int_equal(kerf_fleet_parse_yaml(text, len, &f, err, sizeof(err)), 0);
        free(text);
        assert_int_equal(f->n_nodes, 1);
        assert_int_equal(f->n_gpus, 8);
        assert_string_equal(f->nodes[0].name, "node0");
        assert_int_equal(f->nodes[0].cpu_milli, 112000);
        assert_int_equal(f->nodes[0].mem_bytes, 2048ULL * KERF_GIB);
        assert_int_equal(f->nodes[0].cuda_version, 12040);
        for (unsigned i = 0; i < 8; i++) {
                assert_string_equal(f->gpus[i].model->name, "H200-141GB");
                assert_int_equal(f->gpus[i].mig_enabled, i < 2);
                assert_int_equal(f->gpus[i].numa, i < 4 ? 0 : 1);
                assert_int_equal(f->gpus[i].nvlink_peers, 0xffULL & ~(1ULL << i));
        }
        kerf_fleet_free(f);

        text = slurp("examples/fleet-mixed-64.yaml", &len);
        assert_int_equal(kerf_fleet_parse_yaml(text, len, &f, err, sizeof(err)), 0);
        free(text);
        assert_int_equal(f->n_nodes, 8);
        assert_int_equal(f->n_gpus, 64);
        unsigned mig = 0, h200 = 0, h100 = 0, a100 = 0;
        for (unsigned i = 0; i < 64; i++) {
                const char *m = f->gpus[i].model->name;
                mig += f->gpus[i].mig_enabled;
                h200 += strcmp(m, "H200-141GB") == 0;
                h100 += strcmp(m, "H100-80GB") == 0;
                a100 += strcmp(m, "A100-80GB") == 0;
                assert_int_equal(__builtin_popcountll(f->gpus[i].nvlink_peers), 7);
                assert_int_equal(f->gpus[i].numa, f->gpus[i].index < 4 ? 0 : 1);
        }
        assert_int_equal(h200, 32);
        assert_int_equal(h100, 16);
        assert_int_equal(a100, 16);
        assert_int_equal(mig, 8 + 2 + 4);
        kerf_fleet_free(f);
}

static void bad_files(void **state)
{
        (void)state;
        /* 1: unknown model, on its own line */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    cpus: 8\n"
                  "    memory: 64GiB\n"
                  "    gpus:\n"
                  "      - count: 2\n"
                  "        model: H300\n",
                  7, "model: one of H200-141GB, H100-80GB", "got 'H300'");
        /* 2: unknown key in a GPU entry */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    gpus:\n"
                  "      - {model: H200, colour: red}\n",
                  4, "colour: unknown key in a GPU entry",
                  "(known: model, count, mig, numa, nvlink, uuid)");
        /* 3: unknown key in a node */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    gpu: []\n",
                  3, "gpu: unknown key in a node, did you mean gpus?", "known: name, count");
        /* 4: wrong type for count */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    gpus:\n"
                  "      - model: H200\n"
                  "        count: two\n",
                  5, "count: an integer 1..64", "got 'two'");
        /* 5: count 0 */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    gpus:\n"
                  "      - {model: H200, count: 0}\n",
                  4, "count: an integer 1..64", "got '0'");
        /* 6: count > 64 */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    gpus:\n"
                  "\n"
                  "      - {model: H200, count: 65}\n",
                  5, "count: an integer 1..64", "got '65'");
        /* 7: MIG on a non-MIG model */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    gpus:\n"
                  "      - model: T4\n"
                  "        mig: true\n",
                  5, "mig: GPU model 'T4' does not support MIG", NULL);
        /* 8: gpus is not a list */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    gpus: {model: H200}\n",
                  3, "gpus: a list of 0..64 entries", "not a mapping");
        /* 9: node without a name */
        parse_bad("nodes:\n"
                  "  - cpus: 4\n"
                  "    gpus: []\n",
                  2, "node has no 'name'", NULL);
        /* 10: duplicate node name (also across replicas) */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "  - name: n0\n",
                  3, "duplicate node name 'n0'", NULL);
        parse_bad("nodes:\n"
                  "  - {name: g, count: 2}\n"
                  "  - {name: g-1}\n",
                  3, "duplicate node name 'g-1'", NULL);
        /* 11: YAML syntax error */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    gpus: [ {model: H200}\n",
                  4, "did not find expected", NULL);
        /* 12: too many GPUs on one node in total */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    gpus:\n"
                  "      - {model: H200, count: 40}\n"
                  "      - {model: H200, count: 40}\n",
                  5, "more than 64 GPUs", NULL);
        /* 13: bad memory size */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    memory: lots\n",
                  3, "memory: 'lots' is not a size", "GiB");
        /* 13b: a bare number is not a size (bytes? GiB?): the one rule, docs/UNITS.md */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    memory: 512\n",
                  3, "memory: '512' has no unit", "write 512GiB or 512MiB");
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    cpus: 100001\n",
                  3, "cpus: a number 0..100000 with up to 3 decimals", "got '100001'");
        /* 14: bad cuda version, bad bool, bad numa */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    cuda: twelve\n",
                  3, "cuda: a version like \"12.4\", 12 or 12040", "got 'twelve'");
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    gpus:\n"
                  "      - {model: H200, mig: maybe}\n",
                  4, "mig: true or false (or yes/no, on/off)", "got 'maybe'");
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    gpus:\n"
                  "      - {model: H200, numa: -2}\n",
                  4, "numa: an integer -1..1023", "got '-2'");
        /* 15: document shape */
        parse_bad("", 1, "empty document", NULL);
        parse_bad("- a\n- b\n", 1, "must be a mapping", "list");
        parse_bad("nodes: []\n", 1, "nodes: a list of at least 1 entry", "got 0");
        parse_bad("nodes:\n  - name: n0\nextra: 1\n", 3, "extra: unknown key in the fleet",
                  "(known: nodes)");
        parse_bad("nodes: x\n", 1, "nodes: a list of at least 1 entry", "not a scalar");
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    driver: \"550 54\"\n",
                  3, "driver: 1..31 printable characters, no spaces", "got '550 54'");
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    cuda: 12.\n",
                  3, "cuda: a version like", "got '12.'");
        /* 16: duplicate key, name of the wrong type */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    cpus: 4\n"
                  "    cpus: 8\n",
                  4, "cpus: duplicate key in a node", NULL);
        parse_bad("nodes:\n"
                  "  - name: [a, b]\n",
                  2, "name: 1..63 printable characters, no spaces", "not a list");
        parse_bad("nodes:\n"
                  "  - name: has space\n",
                  2, "name: 1..63 printable characters, no spaces", "got 'has space'");
        /* 17: uuid rules */
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    gpus:\n"
                  "      - {model: H200, count: 2, uuid: GPU-1}\n",
                  4, "uuid: one GPU's, so it needs 'count: 1'", NULL);
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    count: 2\n"
                  "    gpus:\n"
                  "      - {model: H200, uuid: GPU-1}\n",
                  5, "uuid: cannot be used in a node with 'count'", NULL);
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    gpus:\n"
                  "      - {model: H200, uuid: GPU-1}\n"
                  "      - {model: H200, uuid: GPU-1}\n",
                  5, "'GPU-1' is used twice", NULL);
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    cpus: 4\n"
                  "    cpu_milli: 4000\n",
                  4, "either 'cpus' or 'cpu_milli'", NULL);
        parse_bad("nodes:\n"
                  "  - name: n0\n"
                  "    count: 0\n",
                  3, "count: an integer 1..4096", "got '0'");
}

static void versions_and_anchors(void **state)
{
        kerf_fleet *f = parse_ok("nodes:\n"
                                 "  - name: a\n"
                                 "    cuda: '12'\n"
                                 "    gpus: &hgx\n"
                                 "      - {model: H200, count: 8, nvlink: sw}\n"
                                 "  - {name: b, cuda: 12.10, gpus: *hgx}\n"
                                 "  - {name: c, cuda: 11080, driver: 535.104.05}\n"
                                 "  - {name: d, cuda: '000012.40'}\n");

        (void)state;
        assert_int_equal(f->n_gpus, 16);
        assert_int_equal(f->nodes[0].cuda_version, 12000);
        assert_int_equal(f->nodes[1].cuda_version, 12100);
        assert_int_equal(f->nodes[2].cuda_version, 11080);
        assert_string_equal(f->nodes[2].driver_version, "535.104.05");
        assert_int_equal(f->nodes[3].cuda_version, 12400); /* the longest version text */
        assert_int_equal(f->gpus[8].nvlink_peers, 0xfe);
        kerf_fleet_free(f);
}

static void api_edges(void **state)
{
        kerf_fleet *f = NULL;
        char small[8];

        (void)state;
        assert_int_equal(kerf_fleet_parse_yaml(good_8xh200, sizeof(good_8xh200) - 1, NULL, NULL, 0),
                         -EINVAL);
        assert_int_equal(kerf_fleet_parse_yaml(NULL, 5, &f, NULL, 0), -EINVAL);
        /* no error buffer, or a tiny one: still a clean failure */
        assert_int_equal(kerf_fleet_parse_yaml("nodes: []", 9, &f, NULL, 0), -KERF_EPARSE);
        assert_int_equal(kerf_fleet_parse_yaml("nodes: []", 9, &f, small, sizeof(small)),
                         -KERF_EPARSE);
        assert_int_equal(strlen(small), sizeof(small) - 1);
        assert_null(f);
        /* `len` bounds the text: the unknown key after it is never seen */
        const char *t = "nodes:\n  - name: n0\nbogus: 1\n";
        assert_int_equal(kerf_fleet_parse_yaml(t, strlen(t) - 9, &f, NULL, 0), 0);
        assert_int_equal(f->n_nodes, 1);
        kerf_fleet_free(f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(good_h200_node),       cmocka_unit_test(replicated_nodes),
            cmocka_unit_test(example_files),        cmocka_unit_test(bad_files),
            cmocka_unit_test(versions_and_anchors), cmocka_unit_test(api_edges),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
