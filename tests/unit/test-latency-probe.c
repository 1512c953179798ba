/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Tests of the wake-up latency probe: on a CPU this process may use, it records wake-ups whose
 * quantiles are ordered; what it refuses. */

#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "cpuset.h"
#include "latency-probe.h"

/* The first CPU of this process's affinity mask. */
static unsigned own_cpu(void) {
        cpu_set_t set;

        ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
        for (unsigned c = 0; c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &set))
                        return c;
        ck_abort_msg("no CPU in the affinity mask");
        return 0;
}

START_TEST(test_probe_records) {
        _cleanup_(latency_probe_freep) LatencyProbe *p = NULL;
        _cleanup_(cpuset_done) CpuSet cpus = {};
        const LatencyProbeCpu *res;
        struct timespec ts = {.tv_nsec = 50 * 1000 * 1000};
        unsigned cpu = own_cpu();
        size_t n;

        ck_assert_int_eq(cpuset_add(&cpus, cpu), 0);
        ck_assert_int_eq(latency_probe_start(&cpus, 1000000, &p), 0);
        /* long enough for dozens of 1 ms wake-ups; the assertions need only one */
        (void)nanosleep(&ts, NULL);
        ck_assert_int_eq(latency_probe_stop(p, &res, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(res[0].cpu, cpu);
        ck_assert_int_eq(res[0].error, 0);
        ck_assert_uint_gt(res[0].wakeup.count, 0);
        ck_assert_uint_ge(res[0].wakeup.max_ns, latency_quantile(&res[0].wakeup, 0.99));
        ck_assert_uint_ge(latency_quantile(&res[0].wakeup, 0.99), latency_quantile(&res[0].wakeup, 0.50));
        /* stop again: the same results */
        ck_assert_int_eq(latency_probe_stop(p, &res, &n), 0);
        ck_assert_uint_eq(n, 1);
}
END_TEST

START_TEST(test_probe_refuses) {
        _cleanup_(cpuset_done) CpuSet empty = {}, one = {};
        LatencyProbe *p = NULL;

        ck_assert_int_eq(latency_probe_start(&empty, 1000000, &p), -EINVAL);
        ck_assert_int_eq(cpuset_add(&one, own_cpu()), 0);
        ck_assert_int_eq(latency_probe_start(&one, 0, &p), -EINVAL);
        ck_assert_ptr_null(p);
        ck_assert_ptr_null(latency_probe_free(NULL));
}
END_TEST

int main(void) {
        Suite *s = suite_create("latency-probe");
        TCase *tc = tcase_create("probe");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_probe_records);
        tcase_add_test(tc, test_probe_refuses);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
