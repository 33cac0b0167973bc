/* SPDX-License-Identifier: Apache-2.0 */
/* test_holds.c - schema 6: a task's hold and updated request round-trip; drained GPUs */
#include <errno.h>
#include <stdlib.h>

#include "helpers.h"

static void test_held_and_request(void **state)
{
        fixture *f = *state;
        kerf_store_task t, g;

        add_tenant(f->s, "a");
        make_task(&t, 7, "a", "pending");
        assert_int_equal(kerf_store_task_insert(f->s, &t), 0);
        assert_int_equal(kerf_store_task_get(f->s, 7, &g), 0);
        assert_string_equal(g.held, "");
        char *orig = strdup(g.request_json);
        kerf_store_task_fini(&g);

        /* held, and the request left alone when the update carries none */
        snprintf(t.held, sizeof(t.held), "admin");
        t.request_json = NULL;
        assert_int_equal(kerf_store_task_update(f->s, &t), 0);
        assert_int_equal(kerf_store_task_get(f->s, 7, &g), 0);
        assert_string_equal(g.held, "admin");
        assert_string_equal(g.request_json, orig);
        kerf_store_task_fini(&g);

        /* an update with a request replaces it; released */
        t.held[0] = 0;
        t.request_json = (char *)"{\"priority\":5}";
        assert_int_equal(kerf_store_task_update(f->s, &t), 0);
        assert_int_equal(kerf_store_task_get(f->s, 7, &g), 0);
        assert_string_equal(g.held, "");
        assert_string_equal(g.request_json, "{\"priority\":5}");
        kerf_store_task_fini(&g);
        free(orig);
}

static void test_drains(void **state)
{
        fixture *f = *state;
        kerf_store_drain d, *list = NULL;
        size_t n = 9;

        assert_int_equal(kerf_store_drain_list(f->s, &list, &n), 0);
        assert_int_equal(n, 0);
        assert_null(list);
        memset(&d, 0, sizeof(d));
        assert_int_equal(kerf_store_drain_set(f->s, &d), -EINVAL);
        snprintf(d.gpu_uuid, sizeof(d.gpu_uuid), "GPU-b");
        snprintf(d.actor, sizeof(d.actor), "admin");
        snprintf(d.reason, sizeof(d.reason), "fan noise");
        d.since_ms = 1234;
        assert_int_equal(kerf_store_drain_set(f->s, &d), 0);
        snprintf(d.gpu_uuid, sizeof(d.gpu_uuid), "GPU-a");
        d.since_ms = 0; /* now */
        assert_int_equal(kerf_store_drain_set(f->s, &d), 0);
        assert_int_equal(kerf_store_drain_list(f->s, &list, &n), 0);
        assert_int_equal(n, 2);
        assert_string_equal(list[0].gpu_uuid, "GPU-a");
        assert_true(list[0].since_ms > 1234);
        assert_string_equal(list[1].gpu_uuid, "GPU-b");
        assert_string_equal(list[1].reason, "fan noise");
        assert_int_equal(list[1].since_ms, 1234);
        free(list);
        assert_int_equal(kerf_store_drain_clear(f->s, "GPU-a"), 0);
        assert_int_equal(kerf_store_drain_clear(f->s, "GPU-a"), -ENOENT);
        assert_int_equal(kerf_store_drain_list(f->s, &list, &n), 0);
        assert_int_equal(n, 1);
        free(list);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_held_and_request, fx_setup, fx_teardown),
            cmocka_unit_test_setup_teardown(test_drains, fx_setup, fx_teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
