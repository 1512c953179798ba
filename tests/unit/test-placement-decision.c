/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Tests for lib/placement-decision: each decision of a placement pass on a table of cases, every
 * combination of its inputs where they are few (the expected value written out from the rule in
 * placement-decision.h, not computed the way the function does). No /proc, no privileges.
 */

#include <check.h>
#include <errno.h>
#include <stdio.h>

#include "macro.h"
#include "placement-decision.h"

START_TEST(test_affinity_step_table) {
        /* has_target, left_to_unit, applied_is_target, force, verify, dry_run -> step */
        static const struct {
                bool target, unit, applied, force, verify, dry;
                ThreadAffinityStep want;
        } cases[] = {
                {false, false, false, false, false, false, THREAD_AFFINITY_KEEP},
                {false, false, true, true, true, false, THREAD_AFFINITY_KEEP},
                {true, true, false, false, false, false, THREAD_AFFINITY_KEEP},   /* AllowedCPUs= */
                {true, true, false, true, true, false, THREAD_AFFINITY_KEEP},     /* even forced */
                {true, false, false, false, false, false, THREAD_AFFINITY_WRITE}, /* not applied yet */
                {true, false, false, false, false, true, THREAD_AFFINITY_WRITE},  /* dry run counts it */
                {true, false, true, false, false, false, THREAD_AFFINITY_KEEP},   /* polling pass */
                {true, false, true, false, true, false, THREAD_AFFINITY_RECHECK}, /* a cpuset reset? */
                {true, false, true, false, true, true, THREAD_AFFINITY_KEEP},     /* dry run: no read */
                {true, false, true, true, false, false, THREAD_AFFINITY_RECHECK}, /* forced: ask */
                {true, false, true, true, true, false, THREAD_AFFINITY_RECHECK},
                {true, false, true, true, false, true, THREAD_AFFINITY_WRITE}, /* forced dry run */
                {true, false, true, true, true, true, THREAD_AFFINITY_WRITE},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ThreadAffinityFacts f = {
                        .has_target = cases[i].target,
                        .left_to_unit = cases[i].unit,
                        .applied_is_target = cases[i].applied,
                        .force = cases[i].force,
                        .verify = cases[i].verify,
                        .dry_run = cases[i].dry,
                };

                ck_assert_msg(
                        thread_affinity_step(&f) == cases[i].want, "case %zu: step %d, want %d", i,
                        thread_affinity_step(&f), cases[i].want);
        }
}
END_TEST

START_TEST(test_affinity_recheck_table) {
        /* current_known, current_is_effective, cpuset_reset, force -> what to do */
        static const struct {
                bool known, effective, reset, force;
                ThreadAffinityRecheck want;
        } cases[] = {
                {true, true, false, false, THREAD_RECHECK_KEEP},
                {true, true, true, false, THREAD_RECHECK_KEEP},    /* what the kernel made of it */
                {true, true, false, true, THREAD_RECHECK_KEEP},    /* forced: still nothing to write */
                {true, false, false, false, THREAD_RECHECK_DRIFT}, /* someone moved it */
                {true, false, true, false, THREAD_RECHECK_RESET},  /* the kernel's cpuset reset */
                {true, false, false, true, THREAD_RECHECK_WRITE},
                {true, false, true, true, THREAD_RECHECK_WRITE},    /* forced: not counted as a reset */
                {false, false, false, false, THREAD_RECHECK_DRIFT}, /* unreadable: left alone */
                {false, false, false, true, THREAD_RECHECK_WRITE},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ck_assert_msg(
                        thread_affinity_recheck(
                                cases[i].known, cases[i].effective, cases[i].reset, cases[i].force) ==
                                cases[i].want,
                        "case %zu", i);
}
END_TEST

START_TEST(test_write_refusal_table) {
        static const struct {
                int error;
                bool known, in_cpuset;
                ThreadWriteRefusal want;
        } cases[] = {
                {-ESRCH, false, false, THREAD_REFUSAL_GONE},
                {-ESRCH, true, false, THREAD_REFUSAL_GONE},
                {-EINVAL, true, false, THREAD_REFUSAL_CPUSET_CONFLICT},
                {-EINVAL, true, true, THREAD_REFUSAL_FAILURE},   /* EINVAL for another reason */
                {-EINVAL, false, false, THREAD_REFUSAL_FAILURE}, /* no cpuset known: not blamed */
                {-EPERM, true, false, THREAD_REFUSAL_FAILURE},   /* another owner, no CAP_SYS_NICE */
                {-EPERM, false, false, THREAD_REFUSAL_FAILURE},
                {-ENOMEM, true, true, THREAD_REFUSAL_FAILURE},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ck_assert_msg(
                        thread_write_refusal(cases[i].error, cases[i].known, cases[i].in_cpuset) ==
                                cases[i].want,
                        "case %zu", i);
}
END_TEST

START_TEST(test_narrowing_table) {
        static const struct {
                bool within, reported, debug;
                NarrowingReport want;
        } cases[] = {
                {false, false, false, NARROWING_OUTSIDE},
                {false, true, false, NARROWING_OUTSIDE}, /* outside: always a warning */
                {false, true, true, NARROWING_OUTSIDE},
                {true, false, false, NARROWING_ONCE},
                {true, false, true, NARROWING_ONCE},
                {true, true, false, NARROWING_QUIET},
                {true, true, true, NARROWING_DEBUG},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ck_assert_msg(
                        thread_narrowing_report(cases[i].within, cases[i].reported, cases[i].debug) ==
                                cases[i].want,
                        "case %zu", i);
}
END_TEST

START_TEST(test_placed_log_level_table) {
        static const struct {
                bool wrote, info, debug, within;
                PlacedLogLevel want;
        } cases[] = {
                {false, true, true, true, PLACED_LOG_NONE}, /* the first pass, nothing written */
                {true, true, true, true, PLACED_LOG_INFO},
                {true, true, false, true, PLACED_LOG_INFO},
                {true, true, true, false, PLACED_LOG_DEBUG}, /* a burst */
                {true, true, false, false, PLACED_LOG_NONE},
                {true, false, true, false, PLACED_LOG_DEBUG}, /* info off (--log-level=debug?) */
                {true, false, false, true, PLACED_LOG_NONE},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                ck_assert_msg(
                        process_placed_log_level(
                                cases[i].wrote, cases[i].info, cases[i].debug, cases[i].within) ==
                                cases[i].want,
                        "case %zu", i);
}
END_TEST

/* Every combination of the boolean facts, with n_set and n_failed 0 or 1, against the rules
 * written out one by one. */
START_TEST(test_pass_actions_exhaustive) {
        unsigned n = 0;

        for (unsigned bits = 0; bits < (1U << 10); bits++) {
                ProcessPassFacts f = {
                        .n_set = bits & 1,
                        .n_failed = (bits >> 1) & 1,
                        .cpuset_conflict = (bits >> 2) & 1,
                        .refusal_new = (bits >> 3) & 1,
                        .had_refusal = (bits >> 4) & 1,
                        .placed = (bits >> 5) & 1,
                        .settled = (bits >> 6) & 1,
                        .verify = (bits >> 7) & 1,
                        .forked = (bits >> 8) & 1,
                        .dry_run = (bits >> 9) & 1,
                };
                ProcessPassActions a = process_pass_actions(&f);
                bool refused = f.cpuset_conflict && f.n_set == 0;

                ck_assert_msg(a.refused == refused, "facts %#x", bits);
                /* a refusal is forgotten only by a pass that placed without any refusal */
                ck_assert_msg(
                        a.drop_refusal == (f.had_refusal && !refused && f.n_failed == 0), "facts %#x", bits);
                ck_assert_msg(a.save_state == (refused || a.drop_refusal), "facts %#x", bits);
                ck_assert_msg(
                        a.watch_cgroup == (f.settled && f.verify && !f.forked && !f.dry_run), "facts %#x",
                        bits);
                ck_assert_msg(a.first == (!f.placed && !refused), "facts %#x", bits);
                ck_assert_msg(a.queue_settle == (f.n_set > 0 || a.first || !f.settled), "facts %#x", bits);
                ck_assert_msg(
                        a.report_failed == (f.n_failed > 0 && (!f.cpuset_conflict || f.refusal_new)),
                        "facts %#x", bits);
                ck_assert_msg(a.report_placed == (f.n_set > 0 || a.first), "facts %#x", bits);
                ck_assert_msg(a.count_summary == (f.n_set > 0), "facts %#x", bits);
                n++;
        }
        ck_assert_uint_eq(n, 1024);
}
END_TEST

/* The cases operators meet, by name. */
START_TEST(test_pass_actions_cases) {
        ProcessPassActions a;

        /* A new process, all threads written: placed, counted, settled, reported. */
        a = process_pass_actions(&(ProcessPassFacts){.n_set = 3, .verify = true});
        ck_assert(a.first && a.queue_settle && a.report_placed && a.count_summary);
        ck_assert(!a.refused && !a.report_failed && !a.save_state && !a.watch_cgroup);

        /* Its cgroup refuses the policy's CPUs, the first time: not placed, persisted, reported. */
        a = process_pass_actions(
                &(ProcessPassFacts){.n_failed = 2, .cpuset_conflict = true, .refusal_new = true});
        ck_assert(a.refused && a.save_state && a.report_failed);
        ck_assert(!a.first && !a.report_placed && !a.count_summary);
        ck_assert(a.queue_settle); /* never settled */

        /* The same refusal at a rescan: not reported again. */
        a = process_pass_actions(&(ProcessPassFacts){
                .n_failed = 2,
                .cpuset_conflict = true,
                .had_refusal = true,
                .settled = true,
                .verify = true});
        ck_assert(a.refused && !a.report_failed && !a.drop_refusal && !a.queue_settle);

        /* The cgroup allows it now: the refusal is forgotten and the change persisted. */
        a = process_pass_actions(&(ProcessPassFacts){.n_set = 2, .had_refusal = true});
        ck_assert(a.drop_refusal && a.save_state && a.first);

        /* A settled process at a rescan with nothing to write: its new cgroup watched, nothing
         * reported. */
        a = process_pass_actions(&(ProcessPassFacts){.placed = true, .settled = true, .verify = true});
        ck_assert(a.watch_cgroup);
        ck_assert(!a.queue_settle && !a.report_placed && !a.first && !a.count_summary);

        /* A refusal that is not the cgroup's (EPERM) is reported at every pass that meets it. */
        a = process_pass_actions(
                &(ProcessPassFacts){.n_set = 1, .n_failed = 1, .placed = true, .settled = true});
        ck_assert(a.report_failed && a.report_placed && !a.refused);
}
END_TEST

static Suite *placement_decision_suite(void) {
        Suite *s = suite_create("placement-decision");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_affinity_step_table);
        tcase_add_test(tc, test_affinity_recheck_table);
        tcase_add_test(tc, test_write_refusal_table);
        tcase_add_test(tc, test_narrowing_table);
        tcase_add_test(tc, test_placed_log_level_table);
        tcase_add_test(tc, test_pass_actions_exhaustive);
        tcase_add_test(tc, test_pass_actions_cases);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        SRunner *sr = srunner_create(placement_decision_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? 0 : 1;
}
