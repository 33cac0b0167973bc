/* SPDX-License-Identifier: Apache-2.0 */
/* test_fleet.c - building fleets: validation, deterministic UUIDs, NVLink peers */
#include <ctype.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kerf/core.h"

static const kerf_gpu_model *h200(void)
{
        return kerf_gpu_model_find("H200");
}

static void assert_uuid_format(const char *u)
{
        static const int dash[] = {12, 17, 22, 27};

        assert_int_equal(strlen(u), 40);
        assert_memory_equal(u, "GPU-", 4);
        for (int i = 4, d = 0; i < 40; i++) {
                if (d < 4 && i == dash[d]) {
                        assert_int_equal(u[i], '-');
                        d++;
                        continue;
                }
                assert_true(isxdigit((unsigned char)u[i]) && !isupper((unsigned char)u[i]));
        }
}

static void build_basic(void **state)
{
        kerf_fleet *f = NULL;

        (void)state;
        assert_int_equal(kerf_fleet_new(&f), 0);
        assert_int_equal(f->n_nodes, 0);
        assert_int_equal(
            kerf_fleet_add_node(f, "node0", 112000, 2048ULL * KERF_GIB, "550.54.15", 12040), 0);
        for (int i = 0; i < 8; i++)
                assert_int_equal(kerf_fleet_add_gpu(f, 0, h200(), i < 2, i < 4 ? 0 : 1, NULL), i);
        assert_int_equal(kerf_fleet_add_node(f, "node1", 0, 0, NULL, 0), 1);
        assert_int_equal(kerf_fleet_add_gpu(f, 1, kerf_gpu_model_find("T4"), false, -1, NULL), 8);

        assert_int_equal(f->n_nodes, 2);
        assert_int_equal(f->n_gpus, 9);
        assert_string_equal(f->nodes[0].driver_version, "550.54.15");
        assert_string_equal(f->nodes[1].driver_version, "unknown");
        assert_int_equal(f->nodes[0].cuda_version, 12040);
        assert_int_equal(f->nodes[0].cpu_milli, 112000);
        assert_int_equal(f->nodes[0].first_gpu, 0);
        assert_int_equal(f->nodes[0].n_gpus, 8);
        assert_int_equal(f->nodes[1].first_gpu, 8);
        assert_int_equal(f->nodes[1].n_gpus, 1);
        assert_true(f->gpus[0].mig_enabled);
        assert_false(f->gpus[2].mig_enabled);
        assert_int_equal(f->gpus[5].numa, 1);
        assert_int_equal(f->gpus[5].index, 5);
        assert_int_equal(f->gpus[8].node, 1);
        assert_int_equal(f->gpus[8].index, 0);
        assert_int_equal(f->gpus[8].numa, -1);
        for (size_t i = 0; i < f->n_gpus; i++) {
                assert_uuid_format(f->gpus[i].uuid);
                assert_int_equal(kerf_fleet_gpu_by_uuid(f, f->gpus[i].uuid), (int)i);
                for (size_t j = 0; j < i; j++)
                        assert_string_not_equal(f->gpus[i].uuid, f->gpus[j].uuid);
        }
        /* the derivation is part of the format (docs/FLEET.md): pin one value */
        assert_string_equal(f->gpus[0].uuid, "GPU-160448ac-2d22-3af9-b7ce-11e092c86aca");
        assert_int_equal(kerf_fleet_gpu_by_uuid(f, "GPU-160448AC-2D22-3AF9-B7CE-11E092C86ACA"), 0);
        assert_int_equal(kerf_fleet_gpu_by_uuid(f, "GPU-nope"), -ENOENT);
        assert_int_equal(kerf_fleet_gpu_by_uuid(f, NULL), -ENOENT);
        assert_null(kerf_fleet_free(f));
        assert_null(kerf_fleet_free(NULL));
}

static void uuids_deterministic(void **state)
{
        kerf_fleet *a = NULL, *b = NULL;
        char seen[64 * 8][KERF_UUID_LEN];
        size_t n = 0;

        (void)state;
        assert_int_equal(kerf_fleet_new(&a), 0);
        assert_int_equal(kerf_fleet_new(&b), 0);
        for (int node = 0; node < 8; node++) {
                char name[16];
                snprintf(name, sizeof(name), "n%d", node);
                assert_int_equal(kerf_fleet_add_node(a, name, 0, 0, NULL, 0), node);
                assert_int_equal(kerf_fleet_add_node(b, name, 0, 0, NULL, 0), node);
                for (int i = 0; i < 64; i++) {
                        assert_true(kerf_fleet_add_gpu(a, node, h200(), false, -1, NULL) >= 0);
                        assert_true(kerf_fleet_add_gpu(b, node, h200(), false, -1, NULL) >= 0);
                }
        }
        for (size_t i = 0; i < a->n_gpus; i++) {
                assert_string_equal(a->gpus[i].uuid, b->gpus[i].uuid);
                memcpy(seen[n++], a->gpus[i].uuid, KERF_UUID_LEN);
        }
        for (size_t i = 0; i < n; i++)
                for (size_t j = i + 1; j < n; j++)
                        assert_string_not_equal(seen[i], seen[j]);
        /* a 65th GPU on a node is refused */
        assert_int_equal(kerf_fleet_add_gpu(a, 7, h200(), false, -1, NULL), -EINVAL);
        kerf_fleet_free(a);
        kerf_fleet_free(b);
}

static void validation(void **state)
{
        kerf_fleet *f = NULL;
        char long_name[80];

        (void)state;
        assert_int_equal(kerf_fleet_new(NULL), -EINVAL);
        assert_int_equal(kerf_fleet_new(&f), 0);
        /* no node yet */
        assert_int_equal(kerf_fleet_add_gpu(f, 0, h200(), false, 0, NULL), -EINVAL);
        assert_int_equal(kerf_fleet_add_node(NULL, "x", 0, 0, NULL, 0), -EINVAL);
        assert_int_equal(kerf_fleet_add_node(f, NULL, 0, 0, NULL, 0), -EINVAL);
        assert_int_equal(kerf_fleet_add_node(f, "", 0, 0, NULL, 0), -EINVAL);
        assert_int_equal(kerf_fleet_add_node(f, "has space", 0, 0, NULL, 0), -EINVAL);
        assert_int_equal(kerf_fleet_add_node(f, "tab\t", 0, 0, NULL, 0), -EINVAL);
        memset(long_name, 'a', 64);
        long_name[64] = '\0';
        assert_int_equal(kerf_fleet_add_node(f, long_name, 0, 0, NULL, 0), -EINVAL);
        long_name[63] = '\0';
        assert_int_equal(kerf_fleet_add_node(f, long_name, 0, 0, NULL, 0), 0);
        assert_int_equal(kerf_fleet_add_node(f, long_name, 0, 0, NULL, 0), -EINVAL); /* dup */
        assert_int_equal(kerf_fleet_add_node(f, "n1", 0, 0, "550 54", 0), -EINVAL);
        assert_int_equal(kerf_fleet_add_node(f, "n1", 0, 0, NULL, -1), -EINVAL);
        assert_int_equal(f->n_nodes, 1);
        assert_int_equal(kerf_fleet_add_node(f, "n1", 0, 0, NULL, 0), 1);

        /* GPUs only on the newest node, only table models, MIG only where supported */
        assert_int_equal(kerf_fleet_add_gpu(f, 0, h200(), false, 0, NULL), -EINVAL);
        assert_int_equal(kerf_fleet_add_gpu(f, 2, h200(), false, 0, NULL), -EINVAL);
        assert_int_equal(kerf_fleet_add_gpu(f, 1, NULL, false, 0, NULL), -EINVAL);
        kerf_gpu_model fake = *h200();
        assert_int_equal(kerf_fleet_add_gpu(f, 1, &fake, false, 0, NULL), -EINVAL);
        assert_int_equal(kerf_fleet_add_gpu(f, 1, kerf_gpu_model_find("T4"), true, 0, NULL),
                         -EINVAL);
        assert_int_equal(kerf_fleet_add_gpu(f, 1, h200(), false, -2, NULL), -EINVAL);
        assert_int_equal(kerf_fleet_add_gpu(f, 1, h200(), false, 0, "nope"), -EINVAL);
        assert_int_equal(kerf_fleet_add_gpu(f, 1, h200(), false, 0, "GPU-"), -EINVAL);
        assert_int_equal(kerf_fleet_add_gpu(f, 1, h200(), false, 0, "GPU-a b"), -EINVAL);
        /* nothing half-added */
        assert_int_equal(f->n_gpus, 0);
        assert_int_equal(f->nodes[1].n_gpus, 0);

        assert_int_equal(kerf_fleet_add_gpu(f, 1, h200(), true, 0, "GPU-given-1"), 0);
        assert_string_equal(f->gpus[0].uuid, "GPU-given-1");
        assert_int_equal(kerf_fleet_add_gpu(f, 1, h200(), true, 0, "GPU-given-1"), -EINVAL);
        assert_int_equal(kerf_fleet_add_gpu(f, 1, h200(), true, 0, "GPU-GIVEN-1"), -EINVAL);
        assert_int_equal(f->n_gpus, 1);
        assert_int_equal(f->nodes[1].n_gpus, 1);
        kerf_fleet_free(f);
}

static void nvlink(void **state)
{
        kerf_fleet *f = NULL;

        (void)state;
        assert_int_equal(kerf_fleet_new(&f), 0);
        assert_int_equal(kerf_fleet_add_node(f, "a", 0, 0, NULL, 0), 0);
        for (int i = 0; i < 4; i++)
                assert_int_equal(kerf_fleet_add_gpu(f, 0, h200(), false, 0, NULL), i);
        assert_int_equal(kerf_fleet_add_node(f, "b", 0, 0, NULL, 0), 1);
        for (int i = 0; i < 2; i++)
                assert_int_equal(kerf_fleet_add_gpu(f, 1, h200(), false, 0, NULL), 4 + i);

        assert_int_equal(kerf_fleet_link(f, 0, 1), 0);
        assert_int_equal(kerf_fleet_link(f, 1, 0), 0); /* idempotent */
        assert_int_equal(kerf_fleet_link(f, 0, 3), 0);
        assert_int_equal(kerf_fleet_link(f, 4, 5), 0);
        assert_int_equal(f->gpus[0].nvlink_peers, 0x2 | 0x8);
        assert_int_equal(f->gpus[1].nvlink_peers, 0x1);
        assert_int_equal(f->gpus[2].nvlink_peers, 0);
        assert_int_equal(f->gpus[3].nvlink_peers, 0x1);
        /* node-local indexes */
        assert_int_equal(f->gpus[4].nvlink_peers, 0x2);
        assert_int_equal(f->gpus[5].nvlink_peers, 0x1);

        assert_int_equal(kerf_fleet_link(f, 2, 2), -EINVAL);
        assert_int_equal(kerf_fleet_link(f, 3, 4), -EINVAL); /* different nodes */
        assert_int_equal(kerf_fleet_link(f, 0, 6), -EINVAL);
        assert_int_equal(kerf_fleet_link(NULL, 0, 1), -EINVAL);
        kerf_fleet_free(f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(build_basic),
            cmocka_unit_test(uuids_deterministic),
            cmocka_unit_test(validation),
            cmocka_unit_test(nvlink),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
