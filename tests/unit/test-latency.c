/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Tests of the log-linear latency histogram against exact quantiles of random samples. */

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "latency.h"

/* Exact nearest-rank quantile of a sorted array: the ceil(q * n)-th smallest, at least the first. */
static uint64_t exact_quantile(const uint64_t *sorted, size_t n, double q) {
        size_t rank = (size_t)(q * (double)n);
        if ((double)rank < q * (double)n)
                rank++;
        if (rank < 1)
                rank = 1;
        if (rank > n)
                rank = n;
        return sorted[rank - 1];
}

static int u64_cmp(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return (x > y) - (x < y);
}

/* A histogram of one value v plus one huge value: quantile 0.5 is the upper bound of v's bucket. */
static uint64_t bucket_upper_of(uint64_t v) {
        LatencyHistogram h;

        latency_reset(&h);
        latency_record(&h, v);
        latency_record(&h, UINT64_C(1) << 42);
        return latency_quantile(&h, 0.5);
}

START_TEST(test_empty) {
        LatencyHistogram h;

        memset(&h, 0xaa, sizeof(h));
        latency_reset(&h);
        ck_assert_uint_eq(h.count, 0);
        ck_assert_uint_eq(h.max_ns, 0);
        ck_assert_uint_eq(h.sum_ns, 0);
        ck_assert_uint_eq(latency_quantile(&h, 0.0), 0);
        ck_assert_uint_eq(latency_quantile(&h, 0.5), 0);
        ck_assert_uint_eq(latency_quantile(&h, 0.99), 0);
        ck_assert_uint_eq(latency_quantile(&h, 1.0), 0);

        /* After a reset a used histogram is empty again. */
        latency_record(&h, 12345);
        ck_assert_uint_eq(latency_quantile(&h, 0.5), 12345);
        latency_reset(&h);
        ck_assert_uint_eq(h.count, 0);
        ck_assert_uint_eq(latency_quantile(&h, 0.5), 0);
}
END_TEST

START_TEST(test_small_values_exact) {
        LatencyHistogram h;

        /* 0..15 ns each have their own bucket: quantiles are exact. */
        latency_reset(&h);
        for (uint64_t v = 0; v < 16; v++)
                latency_record(&h, v);
        ck_assert_uint_eq(h.count, 16);
        ck_assert_uint_eq(h.sum_ns, 120);
        ck_assert_uint_eq(h.max_ns, 15);
        for (unsigned i = 1; i <= 16; i++)
                ck_assert_uint_eq(latency_quantile(&h, (double)i / 16.0), i - 1);
        ck_assert_uint_eq(latency_quantile(&h, 0.0), 0);
}
END_TEST

START_TEST(test_bucket_bounds) {
        /* For every value: its bucket's upper bound u is >= v, within 1/16 of v, maps to the
         * same bucket (upper bound of u is u) and u + 1 starts a new bucket. */
        uint64_t checked = 0;

        for (uint64_t v = 0; v < (UINT64_C(1) << 41); v = v < 70000 ? v + 1 : v + v / 7 + 1) {
                uint64_t u = bucket_upper_of(v);

                ck_assert_uint_ge(u, v);
                ck_assert_msg(
                        u - v <= v / 16, "value %llu reported as %llu", (unsigned long long)v,
                        (unsigned long long)u);
                ck_assert_uint_eq(bucket_upper_of(u), u);
                ck_assert_uint_gt(bucket_upper_of(u + 1), u);
                checked++;
        }
        ck_assert_uint_gt(checked, 70000);

        /* Powers of two and their neighbours, across the whole range. */
        for (unsigned k = 4; k < 42; k++) {
                uint64_t p = UINT64_C(1) << k;
                ck_assert_uint_eq(bucket_upper_of(p - 1), p - 1);
                ck_assert_uint_eq(bucket_upper_of(p), p + (p >> 4) - 1);
        }
}
END_TEST

START_TEST(test_random_quantiles) {
        static const double qs[] = {0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999, 1.0};
        const size_t n = 200000;
        LatencyHistogram h;
        uint64_t *v, sum = 0;
        unsigned short seed[3] = {0x1234, 0xabcd, (unsigned short)_i};

        v = calloc(n, sizeof(uint64_t));
        ck_assert_ptr_nonnull(v);
        latency_reset(&h);

        /* Log-uniform samples from 1 ns to ~2^40 ns, plus a cluster, so every range is used. */
        for (size_t i = 0; i < n; i++) {
                double e = erand48(seed) * 40.0;
                unsigned k = (unsigned)e;
                uint64_t x = (uint64_t)((double)(UINT64_C(1) << k) * (1.0 + (e - k)));
                if (i % 5 == 0)
                        x = 50000 + (uint64_t)(erand48(seed) * 1000.0);
                v[i] = x;
                sum += x;
                latency_record(&h, x);
        }
        qsort(v, n, sizeof(uint64_t), u64_cmp);

        ck_assert_uint_eq(h.count, n);
        ck_assert_uint_eq(h.sum_ns, sum);
        ck_assert_uint_eq(h.max_ns, v[n - 1]);

        for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
                uint64_t exact = exact_quantile(v, n, qs[i]), got = latency_quantile(&h, qs[i]);

                ck_assert_msg(
                        got >= exact && got - exact <= exact / 16, "q=%g exact=%llu got=%llu", qs[i],
                        (unsigned long long)exact, (unsigned long long)got);
                ck_assert_uint_le(got, h.max_ns);
        }
        /* The top quantile is the maximum itself, not its bucket's upper bound. */
        ck_assert_uint_eq(latency_quantile(&h, 1.0), v[n - 1]);
        /* Out-of-range q is clamped. */
        ck_assert_uint_eq(latency_quantile(&h, 7.0), v[n - 1]);
        ck_assert_uint_eq(latency_quantile(&h, -1.0), latency_quantile(&h, 0.0));
        free(v);
}
END_TEST

START_TEST(test_max_clamp) {
        LatencyHistogram h;

        /* One value in the middle of a wide bucket: every quantile is that value, not the
         * bucket's upper bound. */
        latency_reset(&h);
        latency_record(&h, 1000000);
        ck_assert_uint_eq(latency_quantile(&h, 0.5), 1000000);
        ck_assert_uint_eq(latency_quantile(&h, 0.99), 1000000);
        ck_assert_uint_eq(h.max_ns, 1000000);

        /* Beyond the last range: counted, max exact, quantile never above it. */
        latency_record(&h, UINT64_C(1) << 50);
        latency_record(&h, UINT64_MAX / 4);
        ck_assert_uint_eq(h.count, 3);
        ck_assert_uint_eq(h.max_ns, UINT64_MAX / 4);
        ck_assert_uint_eq(latency_quantile(&h, 1.0), UINT64_MAX / 4);
        ck_assert_uint_ge(latency_quantile(&h, 0.66), UINT64_C(1) << 42);
        ck_assert_uint_le(latency_quantile(&h, 0.66), UINT64_MAX / 4);
        ck_assert_uint_ge(latency_quantile(&h, 0.2), 1000000);
        ck_assert_uint_le(latency_quantile(&h, 0.2), 1000000 + 1000000 / 16);
}
END_TEST

/* Counts at most a bound: whole buckets only, within the documented band, non-decreasing. */
START_TEST(test_count_at_most) {
        /* Prometheus-style bounds in ns (10 µs .. 1 s), then odd ones. */
        static const uint64_t bounds[] = {
                0,         1,         15,        16,        17,         1000,
                10000,     25000,     50000,     100000,    250000,     500000,
                1000000,   2500000,   5000000,   10000000,  25000000,   50000000,
                100000000, 250000000, 500000000, 999999999, 1000000000, UINT64_C(1) << 42,
        };
        const size_t n = 50000;
        unsigned short seed[3] = {0x4321, 0x1111, 0x7777};
        LatencyHistogram h;
        uint64_t *v, prev = 0;

        v = calloc(n, sizeof(uint64_t));
        ck_assert_ptr_nonnull(v);
        latency_reset(&h);
        ck_assert_uint_eq(latency_count_at_most(&h, 1000), 0);
        ck_assert_uint_eq(latency_count_at_most(&h, UINT64_MAX), 0);

        /* Log-uniform from 1 ns to ~2^32 ns (~4 s). */
        for (size_t i = 0; i < n; i++) {
                double e = erand48(seed) * 32.0;
                unsigned k = (unsigned)e;

                v[i] = (uint64_t)((double)(UINT64_C(1) << k) * (1.0 + (e - k)));
                latency_record(&h, v[i]);
        }

        for (size_t b = 0; b < sizeof(bounds) / sizeof(bounds[0]); b++) {
                uint64_t ns = bounds[b], got = latency_count_at_most(&h, ns), at_most = 0, below = 0;

                for (size_t i = 0; i < n; i++) {
                        at_most += v[i] <= ns;
                        /* v <= ns * 16/17, without overflow for these bounds */
                        below += v[i] * 17 <= ns * 16;
                }
                ck_assert_msg(
                        below <= got && got <= at_most, "ns=%llu: %llu not in [%llu, %llu]",
                        (unsigned long long)ns, (unsigned long long)got, (unsigned long long)below,
                        (unsigned long long)at_most);
                ck_assert_uint_ge(got, prev);
                /* 0..15 ns are recorded exactly */
                if (ns < 16)
                        ck_assert_uint_eq(got, at_most);
                prev = got;
        }
        ck_assert_uint_eq(latency_count_at_most(&h, UINT64_MAX), n);

        /* A value beyond the last range is counted only at UINT64_MAX. */
        latency_record(&h, UINT64_C(1) << 50);
        ck_assert_uint_eq(latency_count_at_most(&h, UINT64_C(1) << 60), n);
        ck_assert_uint_eq(latency_count_at_most(&h, UINT64_MAX), n + 1);
        free(v);
}
END_TEST

int main(void) {
        Suite *s = suite_create("latency");
        TCase *tc = tcase_create("histogram");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_empty);
        tcase_add_test(tc, test_small_values_exact);
        tcase_add_test(tc, test_bucket_bounds);
        tcase_add_loop_test(tc, test_random_quantiles, 0, 4);
        tcase_add_test(tc, test_max_clamp);
        tcase_add_test(tc, test_count_at_most);
        suite_add_tcase(s, tc);

        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
