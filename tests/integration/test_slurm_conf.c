/* SPDX-License-Identifier: Apache-2.0 */
/* test_slurm_conf.c - kerf slurm gres-conf / node-conf on the simulated fleet: the device files
 * kerfd creates, the lines line by line, and a MIG layout change changing them */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "harness.h"

static kd K;

/* Runs kerf ARGS against K; stdout into out, stderr into err (may be NULL). Exit status. */
static int kerf(const char *args, char *out, size_t cap, char *err, size_t ecap)
{
        char cmd[2048], ep[512];
        FILE *p;
        size_t n;
        snprintf(ep, sizeof(ep), "%s/kerf.err", K.dir);
        snprintf(cmd, sizeof(cmd), "%s --socket %s %s 2>%s", KERF_BIN, K.sock, args, ep);
        p = popen(cmd, "r");
        assert_non_null(p);
        n = fread(out, 1, cap - 1, p);
        out[n] = '\0';
        int st = pclose(p);
        if (err) {
                char *e = kd_read(ep);
                snprintf(err, ecap, "%s", e ? e : "");
                free(e);
        }
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void check_dev(const char *path, unsigned maj, unsigned min)
{
        struct stat st;
        assert_int_equal(lstat(path, &st), 0);
        assert_true(S_ISCHR(st.st_mode));
        assert_int_equal(major(st.st_rdev), maj);
        assert_int_equal(minor(st.st_rdev), min);
        assert_int_equal(st.st_mode & 0777, 0666);
}

static void test_gres_conf(void **st)
{
        (void)st;
        static char out[65536], err[4096], want[4096], dev[512], p[600];
        char *line, *save = NULL;
        int i = 0;

        if (geteuid() != 0) {
                skip(); /* kerfd creates the device files as root only */
        }
        kd_setup(&K, "node_name: n1\n");
        snprintf(dev, sizeof(dev), "%s/state/dev", K.dir);
        /* the device files: 195:N per GPU, nvidiactl 195:255, MIG caps on the simulator's major */
        for (unsigned g = 0; g < 8; g++) {
                snprintf(p, sizeof(p), "%s/nvidia%u", dev, g);
                check_dev(p, 195, g);
        }
        snprintf(p, sizeof(p), "%s/nvidiactl", dev);
        check_dev(p, 195, 255);
        snprintf(p, sizeof(p), "%s/nvidia-caps/nvidia-cap1", dev);
        check_dev(p, 509, 1);
        snprintf(p, sizeof(p), "%s/nvidia-caps/nvidia-cap%u", dev, 3 + 1 * 135 + 14 * 9 + 8);
        check_dev(p, 509, 3 + 1 * 135 + 14 * 9 + 8); /* gpu1/gi14/ci7 */
        /* health names the dir for admins */
        long s;
        json_t *h = kd_call(&K, "GET", "/v1/health", NULL, NULL, &s, NULL);
        assert_string_equal(json_string_value(json_object_get(json_object_get(h, "paths"), "dev")),
                            dev);
        json_decref(h);
        /* a tenant gets no node facts */
        char *tok = kd_token(&K, "alice");
        json_decref(kd_call(&K, "GET", "/v1/node", NULL, tok, &s, NULL));
        assert_int_equal(s, 403);

        /* GPUs 0-1 are in MIG mode with no instances: only 2-7 whole, with 100 shards each */
        assert_int_equal(kerf("slurm gres-conf", out, sizeof(out), NULL, 0), 0);
        for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save), i++) {
                if (i == 0) {
                        assert_memory_equal(line, "# gres.conf for node n1", 23);
                        continue;
                }
                if (i <= 6)
                        snprintf(want, sizeof(want),
                                 "NodeName=n1 Name=gpu Type=h200-141gb File=%s/nvidia%d", dev,
                                 i + 1);
                else
                        snprintf(want, sizeof(want),
                                 "NodeName=n1 Name=shard Count=100 File=%s/nvidia%d", dev, i - 5);
                assert_string_equal(line, want);
        }
        assert_int_equal(i, 13);
        assert_int_equal(kerf("slurm node-conf", out, sizeof(out), err, sizeof(err)), 0);
        assert_memory_equal(out, "NodeName=n1 CPUs=", 17);
        assert_non_null(strstr(out, " RealMemory="));
        assert_non_null(strstr(out, " Gres=gpu:h200-141gb:6,shard:600\n"));
        assert_non_null(strstr(err, "GresTypes=gpu,shard"));
        assert_int_equal(
            kerf("slurm node-conf --node other --shards-per-gpu 8", out, sizeof(out), NULL, 0), 0);
        assert_non_null(strstr(out, "NodeName=other CPUs="));
        assert_non_null(strstr(out, " Gres=gpu:h200-141gb:6,shard:48\n"));
        /* bad input: nothing sent, exit 2 */
        assert_int_equal(
            kerf("slurm gres-conf --shard-unit mib", out, sizeof(out), err, sizeof(err)), 2);
        assert_non_null(strstr(err, "--shard-unit"));
        assert_int_equal(kerf("slurm gres-conf --node 'a b'", out, sizeof(out), NULL, 0), 2);
        assert_int_equal(kerf("slurm gres-conf --shards-per-gpu 0", out, sizeof(out), NULL, 0), 2);

        /* first write, then unchanged */
        snprintf(p, sizeof(p), "slurm gres-conf --out %s/gres.conf", K.dir);
        assert_int_equal(kerf(p, out, sizeof(out), err, sizeof(err)), 0);
        assert_non_null(strstr(err, "wrote"));
        assert_int_equal(kerf(p, out, sizeof(out), err, sizeof(err)), 0);
        assert_non_null(strstr(err, "unchanged"));

        /* a MIG instance appears (live layout): typed gpu with its parent device and caps */
        unsigned long long t =
            kd_submit(&K,
                      "{\"tenant\":\"alice\",\"workload\":\"inference\",\"tier\":\"high\","
                      "\"mig_profile\":\"1g.18gb\",\"command\":[\"/bin/sleep\",\"30\"]}",
                      NULL);
        json_decref(kd_wait_task(&K, t, "running", 15000));
        json_t *node = kd_call(&K, "GET", "/v1/node", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        json_t *m = json_array_get(json_object_get(node, "mig"), 0);
        assert_non_null(m);
        int gpu = (int)json_integer_value(json_object_get(m, "gpu"));
        int gi = (int)json_integer_value(json_object_get(m, "gi"));
        int ci = (int)json_integer_value(json_object_get(m, "ci"));
        unsigned gim = 3u + (unsigned)gpu * 135u + (unsigned)gi * 9u;
        snprintf(want, sizeof(want),
                 "NodeName=n1 Name=gpu Type=1g.18gb MultipleFiles=%s/nvidia%d,%s/nvidia-caps/"
                 "nvidia-cap%u,%s/nvidia-caps/nvidia-cap%u\n",
                 dev, gpu, dev, gim, dev, gim + 1 + (unsigned)ci);
        json_decref(node);
        assert_int_equal(kerf(p, out, sizeof(out), err, sizeof(err)), 0);
        assert_non_null(strstr(err, "gres counts changed"));
        assert_non_null(strstr(err, "restart slurmctld and slurmd"));
        snprintf(p, sizeof(p), "%s/gres.conf", K.dir);
        char *f = kd_read(p);
        assert_non_null(f);
        assert_non_null(strstr(f, want));
        /* MIG records come after the whole GPUs and before the shards (Slurm 22.05) */
        assert_true(strstr(f, want) > strstr(f, "Type=h200-141gb File=") &&
                    strstr(f, want) < strstr(f, "Name=shard"));
        free(f);
        assert_int_equal(kerf("slurm node-conf", out, sizeof(out), NULL, 0), 0);
        assert_non_null(strstr(out, " Gres=gpu:h200-141gb:6,gpu:1g.18gb:1,shard:600\n"));
        assert_int_equal(kerf("--json slurm gres-conf", out, sizeof(out), NULL, 0), 0);
        json_t *j = json_loads(out, 0, NULL);
        assert_non_null(j);
        assert_string_equal(json_string_value(json_object_get(j, "gres")),
                            "gpu:h200-141gb:6,gpu:1g.18gb:1,shard:600");
        assert_int_equal(json_array_size(json_object_get(j, "records")), 13);
        json_decref(j);
        kd_stop(&K);
        kd_cleanup(&K);
}

int main(void)
{
        const struct CMUnitTest tests[] = {cmocka_unit_test(test_gres_conf)};
        return cmocka_run_group_tests(tests, NULL, NULL);
}
