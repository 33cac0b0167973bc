/* SPDX-License-Identifier: Apache-2.0 */
/* test_compute_unit.c - the limiter's pure parts and its gate against a fake driver */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>

/* The limiter, compiled into this test with the rest of the shim replaced by stubs below. */
#include "bucket.c"
#include "limiter.c"

ks_state ks;
ks_real_table ks_real;

CUresult ks__ensure(void)
{
        return CUDA_SUCCESS;
}

void *ks__real_dlsym(void *handle, const char *name)
{
        (void)handle;
        (void)name;
        return NULL;
}

uint64_t ks__now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- a fake driver: events carry the time they were "recorded" plus a fixed cost ---- */
static int fake_ctx;
static uint64_t fake_cost_ns = 300000;
typedef struct fake_ev {
        uint64_t t;
} fake_ev;
static fake_ev evs[3 * KS_PAIRS * 2];
static unsigned nev;
static unsigned records;

static CUresult f_ctx_get(CUcontext *c)
{
        *c = (CUcontext)&fake_ctx;
        return CUDA_SUCCESS;
}
static CUresult f_ctx_set(CUcontext c)
{
        (void)c;
        return CUDA_SUCCESS;
}
static CUresult f_ev_create(CUevent *e, unsigned f)
{
        (void)f;
        if (nev >= sizeof(evs) / sizeof(evs[0]))
                return CUDA_ERROR_OUT_OF_MEMORY;
        *e = (CUevent)&evs[nev++];
        return CUDA_SUCCESS;
}
static CUresult f_ev_record(CUevent e, CUstream s)
{
        (void)s;
        fake_ev *v = (fake_ev *)e;
        /* odd records are end events: the kernel took fake_cost_ns */
        v->t = (records++ & 1) ? ks__now_ns() + fake_cost_ns : ks__now_ns();
        return CUDA_SUCCESS;
}
static _Atomic bool fake_busy; /* the GPU has not reached any end event yet */
static CUresult f_ev_query(CUevent e)
{
        (void)e;
        return atomic_load(&fake_busy) ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}
static CUresult f_elapsed(float *ms, CUevent a, CUevent b)
{
        *ms = (float)((double)(((fake_ev *)b)->t - ((fake_ev *)a)->t) / 1e6);
        return CUDA_SUCCESS;
}

static char path[64];

static int setup(void **state)
{
        (void)state;
        snprintf(path, sizeof(path), "/tmp/kerf-cunit-%d", (int)getpid());
        unlink(path);
        struct kerf_slice_init in = {.memory_limit = 1ULL << 30,
                                     .device_memory = 1ULL << 34,
                                     .compute_pct = 50,
                                     .compute_limit_pct = 50};
        assert_int_equal(kerf_slice_region_create(path, getuid(), getgid(), &in), 0);
        assert_int_equal(kerf_slice_region_map(path, true, &ks.region), 0);
        unlink(path);
        ks.slot = &ks.region->procs[0];
        memset(&ks_real, 0, sizeof(ks_real));
        ks_real.cuCtxGetCurrent = f_ctx_get;
        ks_real.cuCtxSetCurrent = f_ctx_set;
        ks_real.cuEventCreate = f_ev_create;
        ks_real.cuEventRecord = f_ev_record;
        ks_real.cuEventQuery = f_ev_query;
        ks_real.cuEventElapsedTime = f_elapsed;
        nev = records = 0;
        atomic_store(&fake_busy, false);
        memset(keys, 0, sizeof(keys));
        ks__limiter_init();
        return 0;
}

static int teardown(void **state)
{
        (void)state;
        kerf_slice_region_unmap(ks.region);
        ks.region = NULL;
        return 0;
}

static void t_estimate(void **state)
{
        (void)state;
        uint32_t s[8] = {500, 2400, 510, 495, 505, 498, 3000, 520};
        assert_int_equal(ks__estimate(s, 0), 0);
        assert_int_equal(ks__estimate(s, 1), 500000);
        /* a few contaminated samples (time-sliced with a neighbour) do not move the median */
        assert_int_equal(ks__estimate(s, 8), 507500);
        assert_int_equal(ks__estimate(s, 3), 510000);
        uint32_t z[1] = {0};
        assert_int_equal(ks__estimate(z, 1), 1000); /* never 0 = unknown */
        /* samples from an idle stream carry the launch latency: their minimum; busy samples
         * win as soon as there are 3 */
        uint32_t m[6] = {KS_IDLE | 640, KS_IDLE | 560, KS_IDLE | 2900, 505, 498, 700};
        assert_int_equal(ks__estimate(m, 3), 560000);
        assert_int_equal(ks__estimate(m, 4), 560000);
        assert_int_equal(ks__estimate(m, 6), 505000);
        /* ... but never above the idle minimum: an idle sample bounds the cost from above */
        uint32_t h[5] = {KS_IDLE | 1282, 2096, 313, 5350, KS_IDLE | 1306};
        assert_int_equal(ks__estimate(h, 4), 1282000);
        assert_int_equal(ks__estimate(h + 1, 3), 2096000);
        assert_int_equal(ks__estimate(h, 5), 1282000);
        uint32_t b1[1] = {400};
        assert_int_equal(ks__estimate(b1, 1), 400000);
        assert_true(ks__dims_hash(1, 1, 1, 32, 1, 1, 0) != ks__dims_hash(2, 1, 1, 32, 1, 1, 0));
        assert_true(ks__dims_hash(1, 1, 1, 32, 1, 1, 0) != ks__dims_hash(1, 1, 1, 32, 1, 1, 8));
}

static void t_bucket(void **state)
{
        (void)state;
        struct kerf_slice_region *r = ks.region;
        assert_int_equal(ks__bucket_burst(50, 100), 10 * KS_MS);
        assert_int_equal(ks__bucket_burst(10, 100), 2 * KS_MS);
        atomic_store(&r->credit_stamp_ns, 0);
        atomic_store(&r->credit_ns, 0);
        uint64_t t = 1000 * KS_MS;
        /* first refill: full bucket, capped */
        assert_int_equal(ks__bucket_refill(r, t, 50, 10 * KS_MS), 10 * KS_MS);
        atomic_store(&r->credit_ns, -4 * KS_MS);
        /* 2 ms at 50 % = 1 ms of device time */
        assert_int_equal(ks__bucket_refill(r, t + 2 * KS_MS, 50, 10 * KS_MS), -3 * KS_MS);
        /* the same instant again adds nothing; time going back adds nothing */
        assert_int_equal(ks__bucket_refill(r, t + 2 * KS_MS, 50, 10 * KS_MS), -3 * KS_MS);
        assert_int_equal(ks__bucket_refill(r, t, 50, 10 * KS_MS), -3 * KS_MS);
        /* a long pause refills to the cap, never beyond */
        assert_int_equal(ks__bucket_refill(r, t + 5000 * KS_MS, 50, 10 * KS_MS), 10 * KS_MS);
        /* a lower rate (smaller cap) drops the excess at the next refill */
        assert_int_equal(ks__bucket_refill(r, t + 5002 * KS_MS, 20, 4 * KS_MS), 4 * KS_MS);
}

static uint64_t launch_n(int n, const void *fn)
{
        uint64_t t0 = ks__now_ns();
        for (int i = 0; i < n; i++) {
                ks_launch l;
                ks__gate_begin(&l, KS_KIND_KERNEL, fn, 7, NULL, false);
                ks__gate_end(&l, CUDA_SUCCESS);
                ks__limiter_tick(ks__now_ns());
        }
        return ks__now_ns() - t0;
}

/* The measured cost is learnt, the provisional charge corrected, and the launch rate held at
 * the allowed share: 200 launches of 300 us at 50 % take ~120 ms. */
static void t_gate_rate(void **state)
{
        (void)state;
        static int fn;
        struct kerf_slice_region *r = ks.region;
        atomic_store(&r->limits.compute_allowed_pct, 50);
        launch_n(1, &fn);
        ks__limiter_tick(ks__now_ns());
        ks_key *k = key_get((uint64_t)(uintptr_t)&fn ^ (uint64_t)KS_KIND_KERNEL << 60, 7);
        assert_int_equal(atomic_load(&k->est_ns), 300000);
        uint64_t dt = launch_n(200, &fn);
        double ms = (double)dt / 1e6;
        print_message("200 x 300 us at 50%%: %.1f ms, held %llu\n", ms,
                      (unsigned long long)atomic_load(&r->held_launches));
        assert_true(ms > 100 && ms < 150);
        assert_true(atomic_load(&r->held_launches) > 0);
        assert_true(atomic_load(&r->throttled_ns) > 50 * KS_MS);
        ks__limiter_tick(ks__now_ns());
        /* charged: 201 launches x 300 us (the provisional 100 us corrected) */
        assert_int_equal(atomic_load(&r->launches), 201);
        assert_int_equal(atomic_load(&r->device_time_ns), 201 * 300000ULL);
        assert_int_equal(atomic_load(&ks.slot->device_time_ns), 201 * 300000ULL);
        assert_true(atomic_load(&r->last_activity_ns) > 0);
}

/* allowed 100 or TSLICE: never held; a failed launch gives its charge back. */
static void t_gate_unthrottled_and_refund(void **state)
{
        (void)state;
        static int fn;
        struct kerf_slice_region *r = ks.region;
        atomic_store(&r->limits.compute_allowed_pct, 100);
        uint64_t dt = launch_n(300, &fn);
        assert_true(dt < 50 * KS_MS);
        assert_int_equal(atomic_load(&r->held_launches), 0);
        atomic_store(&r->limits.compute_allowed_pct, 10);
        atomic_store(&r->limits.flags, KERF_SLICE_F_TSLICE);
        dt = launch_n(300, &fn);
        assert_true(dt < 50 * KS_MS);
        assert_int_equal(atomic_load(&r->held_launches), 0);
        atomic_store(&r->limits.flags, 0);
        ks__bucket_refill(r, ks__now_ns(), 10, ks__bucket_burst(10, 100));
        int64_t c0 = atomic_load(&r->credit_ns);
        ks_launch l;
        ks__gate_begin(&l, KS_KIND_KERNEL, &fn, 7, NULL, false);
        ks__gate_end(&l, CUDA_ERROR_INVALID_VALUE);
        assert_true(atomic_load(&r->credit_ns) >= c0);
}

static void *unfreeze(void *arg)
{
        (void)arg;
        usleep(150000);
        atomic_fetch_and(&ks.region->limits.flags, ~(KERF_SLICE_F_FROZEN | KERF_SLICE_F_YIELD));
        return NULL;
}

/* FROZEN and YIELD hold a launch until cleared. */
static void t_gate_frozen(void **state)
{
        (void)state;
        static int fn;
        struct kerf_slice_region *r = ks.region;
        atomic_store(&r->limits.compute_allowed_pct, 100);
        for (uint32_t f = KERF_SLICE_F_FROZEN; f <= KERF_SLICE_F_YIELD; f <<= 1) {
                atomic_store(&r->limits.flags, f);
                pthread_t th;
                assert_int_equal(pthread_create(&th, NULL, unfreeze, NULL), 0);
                uint64_t dt = launch_n(1, &fn);
                pthread_join(th, NULL);
                assert_true(dt >= 140 * KS_MS);
        }
        assert_int_equal(atomic_load(&r->held_launches), 2);
}

static void *gpu_done(void *arg)
{
        (void)arg;
        usleep(100000);
        atomic_store(&fake_busy, false);
        return NULL;
}

/* A new kernel's fifth launch while its first four are unmeasured waits for the first sample:
 * counted as a sample wait, not as throttling (the task is far below its share). */
static void t_gate_sample_wait(void **state)
{
        (void)state;
        static int fn;
        struct kerf_slice_region *r = ks.region;
        atomic_store(&r->limits.compute_allowed_pct, 100);
        atomic_store(&fake_busy, true);
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, gpu_done, NULL), 0);
        uint64_t t0 = ks__now_ns();
        for (unsigned i = 0; i <= KS_MAX_UNKNOWN; i++) {
                ks_launch l;
                ks__gate_begin(&l, KS_KIND_KERNEL, &fn, 7, NULL, false);
                ks__gate_end(&l, CUDA_SUCCESS);
        }
        uint64_t dt = ks__now_ns() - t0;
        pthread_join(th, NULL);
        assert_true(dt >= 90 * KS_MS); /* the fifth waited for the GPU */
        assert_int_equal(atomic_load(&r->sample_waits), 1);
        assert_true(atomic_load(&r->sample_wait_ns) >= 90 * KS_MS);
        assert_int_equal(atomic_load(&r->held_launches), 0);
        assert_int_equal(atomic_load(&r->throttled_ns), 0);
        assert_int_equal(atomic_load(&ks.slot->throttled_ns), 0);
        /* learnt: the next launches of the kernel do not wait */
        launch_n(10, &fn);
        assert_int_equal(atomic_load(&r->sample_waits), 1);
}

/* The tick says when it needs its 2 ms cadence; the exit hook publishes what no tick saw. */
static void t_tick_busy_and_exit(void **state)
{
        (void)state;
        static int fn;
        struct kerf_slice_region *r = ks.region;
        atomic_store(&r->limits.compute_allowed_pct, 100);
        launch_n(5, &fn); /* estimate learnt: 3 samples */
        ks__limiter_tick(ks__now_ns());
        assert_false(ks__limiter_tick(ks__now_ns())); /* nothing new, nothing in flight */
        uint64_t n0 = atomic_load(&r->launches);
        for (int i = 0; i < 10; i++) {
                ks_launch l;
                ks__gate_begin(&l, KS_KIND_KERNEL, &fn, 7, NULL, false);
                ks__gate_end(&l, CUDA_SUCCESS);
        }
        ks__limiter_exit(); /* no tick since: the exit hook publishes them */
        assert_int_equal(atomic_load(&r->launches), n0 + 10);
        assert_int_equal(atomic_load(&ks.slot->launches), n0 + 10);
        ks__limiter_tick(ks__now_ns()); /* published once only */
        assert_int_equal(atomic_load(&r->launches), n0 + 10);
        ks_launch l;
        ks__gate_begin(&l, KS_KIND_KERNEL, &fn, 7, NULL, false);
        ks__gate_end(&l, CUDA_SUCCESS);
        assert_true(ks__limiter_tick(ks__now_ns())); /* a launch since the last tick */
}

/* A destroyed context takes its timing events along: its pairs in flight are dropped (the
 * key's provisional count too) and a later launch gets fresh events, not the dead ones. */
static void t_ctx_gone(void **state)
{
        (void)state;
        static int fn;
        atomic_store(&ks.region->limits.compute_allowed_pct, 100);
        ks_launch l;
        ks__gate_begin(&l, KS_KIND_KERNEL, &fn, 7, NULL, false);
        ks__gate_end(&l, CUDA_SUCCESS); /* a provisional launch, its pair pending */
        ks_key *k = key_get((uint64_t)(uintptr_t)&fn ^ (uint64_t)KS_KIND_KERNEL << 60, 7);
        assert_int_equal(atomic_load(&k->unknown_inflight), 1);
        assert_int_equal(nev, 2 * KS_PAIRS);
        ks__limiter_ctx_gone((CUcontext)&fake_ctx);
        assert_int_equal(atomic_load(&k->unknown_inflight), 0);
        ks__limiter_tick(ks__now_ns());               /* publishes the launch */
        assert_false(ks__limiter_tick(ks__now_ns())); /* and nothing is left to collect */
        assert_int_equal(atomic_load(&k->est_ns), 0);
        ks__gate_begin(&l, KS_KIND_KERNEL, &fn, 7, NULL, false);
        ks__gate_end(&l, CUDA_SUCCESS);
        assert_int_equal(nev, 4 * KS_PAIRS); /* a new pool of events for the new context */
        ks__limiter_tick(ks__now_ns());
        assert_int_equal(atomic_load(&k->est_ns), 300000);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(t_estimate, setup, teardown),
            cmocka_unit_test_setup_teardown(t_bucket, setup, teardown),
            cmocka_unit_test_setup_teardown(t_gate_rate, setup, teardown),
            cmocka_unit_test_setup_teardown(t_gate_unthrottled_and_refund, setup, teardown),
            cmocka_unit_test_setup_teardown(t_gate_frozen, setup, teardown),
            cmocka_unit_test_setup_teardown(t_gate_sample_wait, setup, teardown),
            cmocka_unit_test_setup_teardown(t_tick_busy_and_exit, setup, teardown),
            cmocka_unit_test_setup_teardown(t_ctx_gone, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
