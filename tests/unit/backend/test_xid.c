/* SPDX-License-Identifier: Apache-2.0 */
/* test_xid.c - kerf_xid_classify over the reference XID table, names and descriptions */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kerf/backend.h"
#include "kerf/errno.h"

static void test_table(void **state)
{
        (void)state;
        static const struct {
                unsigned xid;
                kerf_xid_class cls;
        } want[] = {
            {13, KERF_XID_APP},        {31, KERF_XID_APP},        {43, KERF_XID_APP},
            {45, KERF_XID_APP},        {68, KERF_XID_APP},        {94, KERF_XID_APP},
            {46, KERF_XID_RESET_GPU},  {48, KERF_XID_RESET_GPU},  {62, KERF_XID_RESET_GPU},
            {64, KERF_XID_RESET_GPU},  {74, KERF_XID_RESET_GPU},  {95, KERF_XID_RESET_GPU},
            {109, KERF_XID_RESET_GPU}, {119, KERF_XID_RESET_GPU}, {120, KERF_XID_RESET_GPU},
            {140, KERF_XID_RESET_GPU}, {154, KERF_XID_RESET_GPU}, {79, KERF_XID_REBOOT_NODE},
            {63, KERF_XID_WATCH},      {92, KERF_XID_WATCH},
        };
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                assert_int_equal(kerf_xid_classify(want[i].xid), want[i].cls);
                assert_true(kerf_xid_known(want[i].xid));
                assert_string_not_equal(kerf_xid_describe(want[i].xid), "unknown XID");
        }
}

static void test_unknown_fails_safe(void **state)
{
        (void)state;
        unsigned unknown[] = {0, 1, 12, 44, 100, 500, 999, 1000, 0xFFFFFFFFu};
        for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
                assert_int_equal(kerf_xid_classify(unknown[i]), KERF_XID_RESET_GPU);
                assert_false(kerf_xid_known(unknown[i]));
                assert_string_equal(kerf_xid_describe(unknown[i]), "unknown XID");
        }
}

static void test_names(void **state)
{
        (void)state;
        assert_string_equal(kerf_xid_class_name(KERF_XID_APP), "app_error");
        assert_string_equal(kerf_xid_class_name(KERF_XID_RESET_GPU), "reset_gpu");
        assert_string_equal(kerf_xid_class_name(KERF_XID_REBOOT_NODE), "reboot_node");
        assert_string_equal(kerf_xid_class_name(KERF_XID_WATCH), "watch");
        assert_string_equal(kerf_xid_class_name(KERF_XID_CLASS_COUNT), "?");
        for (int c = 0; c < KERF_XID_CLASS_COUNT; c++)
                assert_true(strlen(kerf_xid_class_desc((kerf_xid_class)c)) > 10);
        assert_string_equal(kerf_xid_class_desc((kerf_xid_class)99), "?");
        assert_string_equal(kerf_blast_scope_name(KERF_SCOPE_NODE), "node");
        assert_string_equal(kerf_blast_scope_name(KERF_SCOPE_UNIT), "unit");
        assert_string_equal(kerf_backend_event_kind_name(KERF_BEV_GPU_LOST), "gpu_lost");
        assert_string_equal(kerf_backend_event_kind_name((kerf_backend_event_kind)7), "?");
}

/* The generic layer: bad arguments, and a missing library gives a clear error. */
static void test_open_errors(void **state)
{
        (void)state;
        kerf_backend *b = NULL;
        kerf_backend_options o;
        char err[KERF_BACKEND_ERR_LEN] = "";
        assert_int_equal(kerf_backend_open(NULL, NULL, &b, err, sizeof(err)), -EINVAL);
        assert_int_equal(kerf_backend_open(kerf_backend_nvml_ops(), NULL, NULL, err, sizeof(err)),
                         -EINVAL);
        kerf_backend_options_init(&o);
        o.library = "/nonexistent/libnvidia-ml.so.1";
        assert_int_equal(kerf_backend_open(kerf_backend_nvml_ops(), &o, &b, err, sizeof(err)),
                         -KERF_EBACKEND);
        assert_null(b);
        assert_non_null(strstr(err, "cannot load NVML library /nonexistent/libnvidia-ml.so.1"));
        /* The environment override is used when no path is given. */
        setenv(KERF_BACKEND_NVML_ENV, "/nonexistent/env-nvml.so", 1);
        o.library = NULL;
        assert_int_equal(kerf_backend_open(kerf_backend_nvml_ops(), &o, &b, err, sizeof(err)),
                         -KERF_EBACKEND);
        assert_non_null(strstr(err, "/nonexistent/env-nvml.so"));
        unsetenv(KERF_BACKEND_NVML_ENV);
        /* A library that is not NVML at all: a required symbol is missing. */
        o.library = "libc.so.6";
        assert_int_equal(kerf_backend_open(kerf_backend_nvml_ops(), &o, &b, err, sizeof(err)),
                         -KERF_EBACKEND);
        assert_non_null(strstr(err, "required NVML symbol nvmlInit_v2"));
        assert_null(kerf_backend_close(NULL));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_table),
            cmocka_unit_test(test_unknown_fails_safe),
            cmocka_unit_test(test_names),
            cmocka_unit_test(test_open_errors),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
