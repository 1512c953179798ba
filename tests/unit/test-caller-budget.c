/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The unprivileged callers' share of daemon time (lib/caller-budget.h): a uid runs while its
 * bucket and the common one hold time, pays what it took, waits for the refill; other uids are
 * not held up by one that spent its share, until the common bucket is spent; cycling through
 * more uids than there are slots gains nothing beyond the common bucket.
 */

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "caller-budget.h"

#define MS 1000ULL
#define S  1000000ULL

START_TEST(test_one_uid) {
        CallerBudget b;
        uint64_t now = 10 * S;

        /* 50 ms per second, 100 ms burst; together 100 ms per second, 200 ms burst */
        caller_budget_init(&b, 50 * MS, 100 * MS, 100 * MS, 200 * MS, now);
        ck_assert_uint_eq(caller_budget_wait(&b, 65534, now), 0);
        caller_budget_charge(&b, 65534, 60 * MS, now);
        ck_assert_uint_eq(caller_budget_wait(&b, 65534, now), 0); /* 40 ms left */
        caller_budget_charge(&b, 65534, 64 * MS, now);            /* -24 ms: overdrawn */
        /* 24 ms at 50 ms/s: 480 ms (+1 µs of rounding) */
        ck_assert_uint_eq(caller_budget_wait(&b, 65534, now), 480 * MS + 1);
        ck_assert_uint_gt(caller_budget_wait(&b, 65534, now + 479 * MS), 0);
        ck_assert_uint_eq(caller_budget_wait(&b, 65534, now + 481 * MS), 0);
        /* The refill stops at the burst: a long quiet time saves 100 ms, not more. */
        now += 3600 * S;
        caller_budget_charge(&b, 65534, 100 * MS, now);
        ck_assert_uint_eq(caller_budget_wait(&b, 65534, now), 1); /* exactly empty: waits */
}
END_TEST

START_TEST(test_uids_and_common) {
        CallerBudget b;
        uint64_t now = 5 * S;

        caller_budget_init(&b, 50 * MS, 100 * MS, 100 * MS, 200 * MS, now);
        caller_budget_charge(&b, 1000, 150 * MS, now); /* uid 1000 overdrawn by 50 ms */
        ck_assert_uint_gt(caller_budget_wait(&b, 1000, now), 0);
        ck_assert_uint_eq(caller_budget_wait(&b, 1001, now), 0);            /* another uid still runs */
        caller_budget_charge(&b, 1001, 90 * MS, now);                       /* common: 200-150-90 = -40 */
        ck_assert_uint_eq(caller_budget_wait(&b, 1002, now), 400 * MS + 1); /* the common one */
}
END_TEST

START_TEST(test_many_uids) {
        CallerBudget b;
        uint64_t now = 1 * S, spent = 0;

        caller_budget_init(&b, 50 * MS, 100 * MS, 100 * MS, 200 * MS, now);
        /* 1000 uids each take what a fresh one may, in one second: the common bucket ends it. */
        for (uid_t uid = 2000; uid < 3000; uid++) {
                now += 1 * MS;
                if (caller_budget_wait(&b, uid, now) == 0) {
                        caller_budget_charge(&b, uid, 100 * MS, now);
                        spent += 100 * MS;
                }
        }
        /* 200 ms burst + 100 ms/s over 1 s, and one call may overdraw: at most 400 ms. */
        ck_assert_uint_le(spent, 400 * MS);
        ck_assert_uint_ge(spent, 200 * MS);
        ck_assert_uint_le(b.n_slots, CALLER_BUDGET_SLOTS);
}
END_TEST

int main(void) {
        Suite *s = suite_create("caller-budget");
        TCase *tc = tcase_create("core");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_one_uid);
        tcase_add_test(tc, test_uids_and_common);
        tcase_add_test(tc, test_many_uids);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
