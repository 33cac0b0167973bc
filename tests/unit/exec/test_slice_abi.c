/* SPDX-License-Identifier: Apache-2.0 */
/* test_slice_abi.c - per-slice shared region: create/map round trip, checks, racing CAS */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sys/wait.h>

#include <kerf/slice_abi.h>

#include "helpers.h"

static void test_round_trip(void **state)
{
        (void)state;
        char *dir = make_tmpdir();
        char path[600];
        struct kerf_slice_region *r = NULL;
        struct stat st;

        snprintf(path, sizeof(path), "%s/task-7.slice", dir);
        struct kerf_slice_init in = {.memory_limit = 4ULL << 30,
                                     .device_memory = 80ULL << 30,
                                     .compute_pct = 20,
                                     .compute_limit_pct = 50,
                                     .unit_id = 3,
                                     .task_id = 7};
        assert_int_equal(kerf_slice_region_create(path, 65534, 65534, &in), 0);
        assert_int_equal(kerf_slice_region_create(path, 65534, 65534, &in), -EEXIST);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0660);
        assert_int_equal(st.st_size, sizeof(struct kerf_slice_region));
        if (geteuid() == 0) {
                assert_int_equal(st.st_uid, 65534);
                assert_int_equal(st.st_gid, 65534);
        }
        assert_int_equal(kerf_slice_region_map(path, true, &r), 0);
        assert_int_equal(r->abi_version, KERF_SLICE_ABI_VERSION);
        assert_int_equal(atomic_load(&r->limits.memory_limit), 4ULL << 30);
        assert_int_equal(atomic_load(&r->limits.compute_pct), 20);
        assert_int_equal(atomic_load(&r->limits.compute_limit_pct), 50);
        assert_int_equal(atomic_load(&r->limits.compute_allowed_pct), 20);
        assert_int_equal(atomic_load(&r->limits.window_ms), KERF_SLICE_DEFAULT_WINDOW_MS);
        assert_int_equal(r->limits.unit_id, 3);
        assert_int_equal(r->limits.task_id, 7);
        assert_int_equal(atomic_load(&r->memory_charged), 0);
        atomic_store(&r->heartbeat_ns, 12345);
        kerf_slice_region_unmap(r);
        assert_int_equal(kerf_slice_region_map(path, false, &r), 0);
        assert_int_equal(atomic_load(&r->heartbeat_ns), 12345);
        kerf_slice_region_unmap(r);

        /* World-accessible or wrong-sized files are refused. */
        chmod(path, 0666);
        assert_int_equal(kerf_slice_region_map(path, false, &r), -EPROTO);
        chmod(path, 0660);
        assert_int_equal(truncate(path, 100), 0);
        assert_int_equal(kerf_slice_region_map(path, false, &r), -EPROTO);
        assert_int_equal(kerf_slice_region_map("/nonexistent/x", false, &r), -ENOENT);
        in.compute_limit_pct = 10;
        snprintf(path, sizeof(path), "%s/bad.slice", dir);
        assert_int_equal(kerf_slice_region_create(path, 0, 0, &in), -EINVAL);
        assert_int_not_equal(access(path, F_OK), 0);
        rm_rf(dir);
        free(dir);
}

/* 16 processes reserve 1 MiB at a time with the documented CAS until refused: the charged
 * total never passes the cap and equals the sum of the slots. */
static void test_racing_reservations(void **state)
{
        (void)state;
        char *dir = make_tmpdir();
        char path[600];
        struct kerf_slice_region *r;
        const uint64_t cap = 1000ULL << 20, chunk = 1ULL << 20;

        snprintf(path, sizeof(path), "%s/race.slice", dir);
        struct kerf_slice_init in = {.memory_limit = cap, .task_id = 1, .unit_id = 1};
        assert_int_equal(kerf_slice_region_create(path, getuid(), getgid(), &in), 0);
        pid_t kids[16];
        for (int k = 0; k < 16; k++) {
                kids[k] = fork();
                assert_true(kids[k] >= 0);
                if (kids[k] == 0) {
                        struct kerf_slice_region *m = NULL;
                        if (kerf_slice_region_map(path, true, &m) < 0)
                                _exit(1);
                        struct kerf_slice_proc *slot = &m->procs[k];
                        int32_t zero = 0;
                        if (!atomic_compare_exchange_strong(&slot->pid, &zero, (int32_t)getpid()))
                                _exit(2);
                        for (;;) {
                                uint64_t c = atomic_load(&m->memory_charged);
                                uint64_t lim = atomic_load(&m->limits.memory_limit);
                                if (chunk > lim || c > lim - chunk)
                                        break;
                                if (atomic_compare_exchange_weak(&m->memory_charged, &c, c + chunk))
                                        atomic_fetch_add(&slot->memory_used, chunk);
                        }
                        atomic_fetch_add(&m->memory_denied, 1);
                        _exit(0);
                }
        }
        for (int k = 0; k < 16; k++) {
                int st;
                assert_int_equal(waitpid(kids[k], &st, 0), kids[k]);
                assert_int_equal(WEXITSTATUS(st), 0);
        }
        assert_int_equal(kerf_slice_region_map(path, false, &r), 0);
        uint64_t sum = 0;
        for (unsigned i = 0; i < KERF_SLICE_MAX_PROCS; i++)
                sum += atomic_load(&r->procs[i].memory_used);
        assert_int_equal(atomic_load(&r->memory_charged), cap);
        assert_int_equal(sum, cap);
        assert_int_equal(atomic_load(&r->memory_denied), 16);
        kerf_slice_region_unmap(r);
        rm_rf(dir);
        free(dir);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_round_trip),
            cmocka_unit_test(test_racing_reservations),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
