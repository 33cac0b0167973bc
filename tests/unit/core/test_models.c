/* SPDX-License-Identifier: Apache-2.0 */
/* test_models.c - facts of the GPU model table and the MIG profile tables */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kerf/core.h"

static void h200_profiles_exact(void **state)
{
        static const struct {
                unsigned id, nvml, c, m;
                uint64_t mib;
                unsigned sms, max;
                uint8_t start;
                const char *name;
                unsigned ofa, ci;
        } want[] = {
            {19, 0x0, 1, 1, 16384, 16, 7, 0x7f, "1g.18gb", 0, 0x0},
            {20, 0x7, 1, 1, 16384, 16, 1, 0x7f, "1g.18gb+me", 1, 0x0},
            {15, 0x9, 1, 2, 33024, 26, 4, 0x55, "1g.35gb", 0, 0x0},
            {14, 0x1, 2, 2, 33024, 32, 3, 0x15, "2g.35gb", 0, 0x1},
            {9, 0x2, 3, 4, 71168, 60, 2, 0x11, "3g.71gb", 0, 0x2},
            {5, 0x3, 4, 4, 71168, 64, 1, 0x01, "4g.71gb", 0, 0x3},
            {0, 0x4, 7, 8, 143360, 132, 1, 0x01, "7g.141gb", 1, 0x4},
        };
        const kerf_gpu_model *m = kerf_gpu_model_find("H200-141GB");

        (void)state;
        assert_non_null(m);
        assert_string_equal(m->product, "NVIDIA H200");
        assert_int_equal(m->pci_device_id, 0x233510DE);
        assert_int_equal(m->mem_bytes, 143771ULL * KERF_MIB);
        assert_int_equal(m->sms, 132);
        assert_int_equal(m->n_profiles, 7);
        for (size_t i = 0; i < 7; i++) {
                const kerf_mig_profile *p = &m->profiles[i];
                assert_int_equal(p->id, want[i].id);
                assert_int_equal(p->nvml_index, want[i].nvml);
                assert_int_equal(p->compute_slices, want[i].c);
                assert_int_equal(p->mem_slices, want[i].m);
                assert_int_equal(p->mem_mib, want[i].mib);
                assert_int_equal(p->sms, want[i].sms);
                assert_int_equal(p->max_count, want[i].max);
                assert_int_equal(p->start_mask, want[i].start);
                assert_string_equal(p->name, want[i].name);
                assert_int_equal(p->ci_profile, want[i].ci);
                assert_int_equal(p->encoders, 0);
                assert_true(p->copy_engines >= 1);
                if (i != 1 && i != 6)
                        assert_int_equal(p->ofas, want[i].ofa);
                assert_ptr_equal(kerf_mig_profile_by_id(m, want[i].id), p);
                assert_ptr_equal(kerf_mig_profile_by_nvml_index(m, want[i].nvml), p);
                assert_ptr_equal(kerf_mig_profile_by_name(m, want[i].name), p);
        }
        assert_int_equal(m->profiles[1].ofas, 1); /* +me owns the single OFA */
}

static void placement_rules(void **state)
{
        (void)state;
        for (size_t mi = 0; mi < kerf_gpu_model_count(); mi++) {
                const kerf_gpu_model *m = kerf_gpu_model_at(mi);
                for (size_t i = 0; i < m->n_profiles; i++) {
                        const kerf_mig_profile *p = &m->profiles[i];
                        /* nothing starts at slice 7, nothing runs past slice 7 */
                        assert_false(kerf_mig_start_valid(p, 7));
                        assert_false(kerf_mig_start_valid(p, 8));
                        assert_false(kerf_mig_start_valid(p, 100));
                        for (unsigned s = 0; s < KERF_MIG_SLICES; s++)
                                if (kerf_mig_start_valid(p, s))
                                        assert_true(s + p->mem_slices <= KERF_MIG_SLICES);
                        assert_true(p->compute_slices <= KERF_MIG_COMPUTE);
                        assert_true(p->mem_mib * KERF_MIB <= m->mem_bytes);
                }
                if (!kerf_gpu_model_has_mig(m))
                        continue;
                const kerf_mig_profile *g3 = kerf_mig_profile_by_id(m, 9);
                const kerf_mig_profile *g4 = kerf_mig_profile_by_id(m, 5);
                const kerf_mig_profile *g7 = kerf_mig_profile_by_id(m, 0);
                const kerf_mig_profile *g2 = kerf_mig_profile_by_id(m, 14);
                const kerf_mig_profile *g1 = kerf_mig_profile_by_id(m, 19);
                for (unsigned s = 0; s < KERF_MIG_SLICES; s++) {
                        assert_int_equal(kerf_mig_start_valid(g3, s), s == 0 || s == 4);
                        assert_int_equal(kerf_mig_start_valid(g4, s), s == 0);
                        assert_int_equal(kerf_mig_start_valid(g7, s), s == 0);
                        assert_int_equal(kerf_mig_start_valid(g2, s), s == 0 || s == 2 || s == 4);
                        assert_int_equal(kerf_mig_start_valid(g1, s), s < 7);
                }
                assert_int_equal(kerf_mig_slice_mask(g3, 4), 0xf0);
                assert_int_equal(kerf_mig_slice_mask(g7, 0), 0xff);
                assert_int_equal(kerf_mig_slice_mask(g1, 6), 0x40);
        }
}

static void mig_models_facts(void **state)
{
        static const struct {
                const char *name, *product;
                uint32_t pci;
                uint64_t mib;
                unsigned sms;
                const char *p7;
                uint64_t p7_mib;
        } want[] = {
            {"A100-40GB", "NVIDIA A100-SXM4-40GB", 0x20B010DE, 40960, 108, "7g.40gb", 40448},
            {"A100-80GB", "NVIDIA A100-SXM4-80GB", 0x20B210DE, 81920, 108, "7g.80gb", 80896},
            {"H100-80GB", "NVIDIA H100 80GB HBM3", 0x233010DE, 81559, 132, "7g.80gb", 81152},
            {"H200-141GB", "NVIDIA H200", 0x233510DE, 143771, 132, "7g.141gb", 143360},
        };
        static const unsigned ids[] = {19, 20, 15, 14, 9, 5, 0};

        (void)state;
        for (size_t i = 0; i < 4; i++) {
                const kerf_gpu_model *m = kerf_gpu_model_find(want[i].name);
                assert_non_null(m);
                assert_true(kerf_gpu_model_has_mig(m));
                assert_string_equal(m->name, want[i].name);
                assert_string_equal(m->product, want[i].product);
                assert_int_equal(m->pci_device_id, want[i].pci);
                assert_int_equal(m->mem_bytes, want[i].mib * KERF_MIB);
                assert_int_equal(m->sms, want[i].sms);
                assert_int_equal(m->n_profiles, 7);
                for (size_t j = 0; j < 7; j++)
                        assert_int_equal(m->profiles[j].id, ids[j]);
                assert_int_equal(kerf_mig_profile_by_name(m, want[i].p7)->mem_mib, want[i].p7_mib);
                assert_int_equal(m->cc_major, want[i].sms == 108 ? 8 : 9);
        }
        assert_int_equal(kerf_mig_profile_by_name(kerf_gpu_model_find("A100"), "1g.5gb")->sms, 14);
        assert_int_equal(kerf_mig_profile_by_name(kerf_gpu_model_find("H100"), "1g.20gb")->sms, 26);
}

static void plain_models(void **state)
{
        static const struct {
                const char *name;
                uint64_t mib;
        } want[] = {
            {"P100", 16384}, {"T4", 15360}, {"V100M16", 16384}, {"V100M32", 32768}, {"A10", 23028},
            {"G2", 16384},   {"G3", 16384}, {"L4", 0},          {"L40S", 0},
        };

        (void)state;
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                const kerf_gpu_model *m = kerf_gpu_model_find(want[i].name);
                assert_non_null(m);
                assert_string_equal(m->name, want[i].name);
                assert_false(kerf_gpu_model_has_mig(m));
                assert_null(m->profiles);
                if (want[i].mib)
                        assert_int_equal(m->mem_bytes, want[i].mib * KERF_MIB);
                assert_null(kerf_mig_profile_by_id(m, 19));
        }
}

static void lookups_and_aliases(void **state)
{
        (void)state;
        assert_string_equal(kerf_gpu_model_find("H200")->name, "H200-141GB");
        assert_string_equal(kerf_gpu_model_find("h200-141gb")->name, "H200-141GB");
        assert_string_equal(kerf_gpu_model_find("nvidia h200")->name, "H200-141GB");
        assert_string_equal(kerf_gpu_model_find("H100")->name, "H100-80GB");
        assert_string_equal(kerf_gpu_model_find("NVIDIA H100 80GB HBM3")->name, "H100-80GB");
        assert_string_equal(kerf_gpu_model_find("A100")->name, "A100-40GB");
        assert_string_equal(kerf_gpu_model_find("a100-40gb")->name, "A100-40GB");
        assert_string_equal(kerf_gpu_model_find("NVIDIA A100-SXM4-80GB")->name, "A100-80GB");
        assert_string_equal(kerf_gpu_model_find("V100")->name, "V100M16");
        assert_string_equal(kerf_gpu_model_find("v100m32")->name, "V100M32");
        assert_string_equal(kerf_gpu_model_find("Tesla T4")->name, "T4");
        assert_null(kerf_gpu_model_find("H300"));
        assert_null(kerf_gpu_model_find(""));
        assert_null(kerf_gpu_model_find(NULL));

        assert_true(kerf_gpu_model_count() >= 13 && kerf_gpu_model_count() <= 64);
        assert_null(kerf_gpu_model_at(kerf_gpu_model_count()));
        for (size_t i = 0; i < kerf_gpu_model_count(); i++) {
                const kerf_gpu_model *m = kerf_gpu_model_at(i);
                assert_int_equal(kerf_gpu_model_index(m), (int)i);
                assert_ptr_equal(kerf_gpu_model_find(m->name), m);
                for (size_t j = 0; j < i; j++)
                        assert_string_not_equal(kerf_gpu_model_at(j)->name, m->name);
        }
        kerf_gpu_model copy = *kerf_gpu_model_at(0);
        assert_int_equal(kerf_gpu_model_index(&copy), -1);
        assert_int_equal(kerf_gpu_model_index(NULL), -1);

        const kerf_gpu_model *h = kerf_gpu_model_find("H200");
        assert_ptr_equal(kerf_mig_profile_by_name(h, "MIG 3g.71gb"), kerf_mig_profile_by_id(h, 9));
        assert_ptr_equal(kerf_mig_profile_by_name(h, "1G.18GB+ME"), kerf_mig_profile_by_id(h, 20));
        assert_null(kerf_mig_profile_by_name(h, "3g.40gb"));
        assert_null(kerf_mig_profile_by_id(h, 1));
        assert_null(kerf_mig_profile_by_nvml_index(h, 0x5));
        assert_null(kerf_mig_profile_by_name(NULL, "3g.71gb"));
        assert_false(kerf_mig_start_valid(NULL, 0));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(h200_profiles_exact), cmocka_unit_test(placement_rules),
            cmocka_unit_test(mig_models_facts),    cmocka_unit_test(plain_models),
            cmocka_unit_test(lookups_and_aliases),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
