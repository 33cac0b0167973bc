/* SPDX-License-Identifier: Apache-2.0 */
/* test_upgrade.c - a driver/CUDA change between two starts of kerfd (`kerf-sim upgrade` on its
 * simulated node while it is down): the next start records node.upgrade (audit, with the old
 * and new versions in its reason) and an `upgrade` event before anything else; records before
 * carry the old driver, records after the new; the chain verifies across the change; a restart
 * without a change records no second upgrade */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define NEW_DRIVER "560.35.03"
#define NEW_CUDA   "12.6"

static kd K;

/* Every audit record (admin), all pages. Caller decrefs. */
static json_t *audit_all(void)
{
        json_t *all = json_array();
        char path[128], after[32] = "0";

        for (;;) {
                long s;
                snprintf(path, sizeof(path), "/v1/audit?limit=1000&after=%s", after);
                json_t *j = kd_call(&K, "GET", path, NULL, NULL, &s, NULL);
                assert_int_equal(s, 200);
                json_array_extend(all, json_object_get(j, "items"));
                json_t *next = json_object_get(j, "next");
                bool more = json_is_string(next) || json_is_integer(next);
                if (json_is_string(next))
                        snprintf(after, sizeof(after), "%s", json_string_value(next));
                else if (json_is_integer(next))
                        snprintf(after, sizeof(after), "%lld", json_integer_value(next));
                json_decref(j);
                if (!more)
                        break;
        }
        return all;
}

static int count_action(json_t *all, const char *action)
{
        size_t i;
        json_t *it;
        int n = 0;

        json_array_foreach(
            all, i, it) if (!strcmp(json_string_value(json_object_get(it, "action")), action)) n++;
        return n;
}

static void run_short(void)
{
        unsigned long long id =
            kd_submit(&K, "{\"tenant\":\"alice\",\"command\":[\"/bin/true\"]}", NULL);
        json_t *t = kd_wait_task(&K, id, "succeeded", 20000);
        assert_non_null(t);
        json_decref(t);
}

static void test_upgrade_recorded(void **st)
{
        (void)st;
        long s;
        char old_driver[64], old_cuda[32], out[512];
        json_t *g, *all, *it, *ev;
        size_t i, up = 0;

        kd_setup(&K, NULL);
        g = kd_call(&K, "GET", "/v1/gpus", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        it = json_array_get(json_object_get(g, "items"), 0);
        snprintf(old_driver, sizeof(old_driver), "%s",
                 json_string_value(json_object_get(it, "driver")));
        snprintf(old_cuda, sizeof(old_cuda), "%s", json_string_value(json_object_get(it, "cuda")));
        json_decref(g);
        assert_string_not_equal(old_driver, NEW_DRIVER);
        run_short();
        /* the first start stores the versions: no upgrade recorded */
        all = audit_all();
        assert_int_equal(count_action(all, "node.upgrade"), 0);
        json_decref(all);

        kd_stop(&K);
        assert_int_equal(
            kd_sim(&K, "upgrade --driver " NEW_DRIVER " --cuda " NEW_CUDA, out, sizeof(out)), 0);
        kd_start(&K);
        run_short();

        all = audit_all();
        assert_int_equal(count_action(all, "node.upgrade"), 1);
        json_array_foreach(all, i, it) if (!strcmp(json_string_value(json_object_get(it, "action")),
                                                   "node.upgrade")) up = i;
        it = json_array_get(all, up);
        char want[256];
        snprintf(want, sizeof(want), "driver %s -> " NEW_DRIVER ", CUDA %s -> " NEW_CUDA,
                 old_driver, old_cuda);
        assert_string_equal(json_string_value(json_object_get(it, "reason")), want);
        /* the upgrade is this start's first record: the one before it is the old kerfd's */
        assert_true(up > 0);
        assert_string_not_equal(
            json_string_value(json_object_get(json_array_get(all, up - 1), "action")),
            "kerfd.start");
        json_array_foreach(all, i, it)
        {
                const char *d = json_string_value(json_object_get(it, "driver"));
                const char *c = json_string_value(json_object_get(it, "cuda"));
                assert_string_equal(d, i < up ? old_driver : NEW_DRIVER);
                assert_string_equal(c, i < up ? old_cuda : NEW_CUDA);
        }
        /* the task run after the upgrade is there, under the new driver */
        assert_true(count_action(all, "task.submit") >= 2 || count_action(all, "task.end") >= 2 ||
                    json_array_size(all) > up + 2);
        json_decref(all);

        ev = kd_event(&K, "upgrade", "-> " NEW_DRIVER);
        assert_non_null(ev);
        assert_non_null(strstr(json_string_value(json_object_get(ev, "text")), want));
        json_decref(ev);

        json_t *v = kd_call(&K, "POST", "/v1/audit/verify", NULL, NULL, &s, NULL);
        assert_int_equal(s, 200);
        assert_true(json_is_true(json_object_get(v, "ok")));
        json_decref(v);

        /* a restart without a change: no second upgrade */
        kd_stop(&K);
        kd_start(&K);
        all = audit_all();
        assert_int_equal(count_action(all, "node.upgrade"), 1);
        json_decref(all);
        kd_stop(&K);
        kd_cleanup(&K);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_upgrade_recorded),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
