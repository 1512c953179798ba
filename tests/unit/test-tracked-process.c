/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit tests of daemon/tracked-process.c, the tracked-process table, on a bare Manager (no
 * loop, no plan, no state dir), no root needed: processes by PID and threads by TID, the
 * "stored only when it differs" masks, what a reload's removed policy looks like, and the
 * union of what the kernel kept.
 */

#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "cpuset.h"
#include "macro.h"
#include "manager-internal.h"

static void set_of(CpuSet *s, const char *list) {
        cpuset_done(s);
        ck_assert_int_eq(cpuset_parse_list(list, s, NULL), 0);
}

static void expect_list(const CpuSet *s, const char *want) {
        _cleanup_free_ char *got = NULL;

        ck_assert_int_eq(cpuset_format_list(s, &got), 0);
        ck_assert_str_eq(got, want);
}

/* Processes are found by PID, listed in PID order, counted, and a PID is tracked once. */
START_TEST(test_processes) {
        Manager m = {};
        TrackedProcess *p, *q, **list = NULL;
        const pid_t pids[] = {300, 100, 200, 150};
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(pids); i++) {
                ck_assert_int_eq(manager_add_process(&m, pids[i], 1000 + pids[i], 0, &p), 0);
                ck_assert_int_eq(p->pid, pids[i]);
                ck_assert_uint_eq(p->starttime, 1000 + (uint64_t)pids[i]);
                ck_assert_uint_gt(p->identity_ns, 0);
        }
        ck_assert_uint_eq(m.n_processes, 4);
        q = p;
        ck_assert_int_eq(manager_add_process(&m, 150, 9, 0, &p), -EEXIST);
        ck_assert_ptr_eq(p, q); /* *ret untouched */
        ck_assert_uint_eq(m.n_processes, 4);
        ck_assert_ptr_eq(manager_find_process(&m, 150), q);
        ck_assert_ptr_null(manager_find_process(&m, 151));

        ck_assert_int_eq(manager_list_processes(&m, &list, &n), 0);
        ck_assert_uint_eq(n, 4);
        ck_assert_int_eq(list[0]->pid, 100);
        ck_assert_int_eq(list[1]->pid, 150);
        ck_assert_int_eq(list[2]->pid, 200);
        ck_assert_int_eq(list[3]->pid, 300);
        free(list);

        manager_remove_process(&m, manager_find_process(&m, 200));
        ck_assert_uint_eq(m.n_processes, 3);
        ck_assert_ptr_null(manager_find_process(&m, 200));
        ck_assert_int_eq(manager_list_processes(&m, &list, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(list[2]->pid, 300);
        free(list);

        for (size_t i = 0; i < ELEMENTSOF(pids); i++)
                if ((p = manager_find_process(&m, pids[i])))
                        manager_remove_process(&m, p);
        ck_assert_uint_eq(m.n_processes, 0);
        ck_assert_ptr_null(m.processes);
        /* an empty table lists nothing */
        ck_assert_int_eq(manager_list_processes(&m, &list, &n), 0);
        ck_assert_uint_eq(n, 0);
        free(list);
}
END_TEST

/* Threads by TID: added once, found, removed one by one or by a predicate. */
START_TEST(test_threads) {
        Manager m = {};
        TrackedProcess *p;
        TrackedThread *t, *again;

        ck_assert_int_eq(manager_add_process(&m, 500, 1, 0, &p), 0);
        for (pid_t tid = 500; tid < 505; tid++) {
                ck_assert_int_eq(tracked_process_add_thread(p, tid, &t), 0);
                ck_assert_int_eq(t->tid, tid);
                t->generation = tid < 503 ? 1 : 0;
        }
        ck_assert_uint_eq(p->n_threads, 5);
        /* adding a TID that is there gives the existing entry */
        t = tracked_process_thread(p, 502);
        ck_assert_ptr_nonnull(t);
        ck_assert_int_eq(tracked_process_add_thread(p, 502, &again), 0);
        ck_assert_ptr_eq(again, t);
        ck_assert_uint_eq(p->n_threads, 5);
        ck_assert_ptr_eq(tracked_process_thread(p, 502), t);
        ck_assert_ptr_null(tracked_process_thread(p, 499));

        /* Threads the last pass (generation 1) did not see are dropped. */
        p->generation = 1;
        ck_assert_int_eq(tracked_process_remove_threads_if(&m, p, thread_not_seen), 0);
        ck_assert_uint_eq(p->n_threads, 3);
        ck_assert_ptr_null(tracked_process_thread(p, 503));
        ck_assert_ptr_null(tracked_process_thread(p, 504));
        ck_assert_ptr_nonnull(tracked_process_thread(p, 501));

        tracked_process_remove_thread(&m, p, tracked_process_thread(p, 501));
        ck_assert_uint_eq(p->n_threads, 2);

        /* After exec only the leader is left. */
        ck_assert_int_eq(tracked_process_remove_threads_if(&m, p, thread_not_leader), 0);
        ck_assert_uint_eq(p->n_threads, 1);
        ck_assert_ptr_nonnull(tracked_process_thread(p, 500));

        manager_remove_process(&m, p);
        ck_assert_uint_eq(m.n_processes, 0);
}
END_TEST

/* A thread's original and effective masks are stored only where they differ from the common
 * value (the process's original; what was applied), and read back either way. */
START_TEST(test_masks) {
        _cleanup_cpuset_ CpuSet a = CPUSET_NULL, b = CPUSET_NULL, u = CPUSET_NULL;
        Manager m = {};
        TrackedProcess *p;
        TrackedThread *t, *t2;

        ck_assert_int_eq(manager_add_process(&m, 700, 1, 0, &p), 0);
        set_of(&p->original, "0-7");
        ck_assert_int_eq(tracked_process_add_thread(p, 700, &t), 0);
        ck_assert_int_eq(tracked_process_add_thread(p, 701, &t2), 0);

        /* original: the same as the process's is not stored */
        ck_assert_int_eq(cpuset_store_if_differs(&t->original, &p->original, &p->original), 0);
        ck_assert_ptr_null(t->original);
        ck_assert_ptr_eq(thread_original(p, t), &p->original);
        set_of(&a, "2-3");
        ck_assert_int_eq(cpuset_store_if_differs(&t->original, &a, &p->original), 0);
        ck_assert_ptr_nonnull(t->original);
        expect_list(thread_original(p, t), "2-3");
        /* back to the common value: the copy is given up */
        ck_assert_int_eq(cpuset_store_if_differs(&t->original, &p->original, &p->original), 0);
        ck_assert_ptr_null(t->original);

        /* applied 0-3, the kernel kept it all: no separate effective mask */
        set_of(&a, "0-3");
        ck_assert_int_eq(thread_set_applied(t, &a, &a), 0);
        ck_assert(t->has_applied);
        ck_assert_ptr_null(t->effective);
        expect_list(thread_effective(t), "0-3");
        /* applied 4-7, the kernel kept 4-5 (the rest offline or outside the cpuset) */
        set_of(&a, "4-7");
        set_of(&b, "4-5");
        ck_assert_int_eq(thread_set_applied(t2, &a, &b), 0);
        ck_assert_ptr_nonnull(t2->effective);
        expect_list(thread_effective(t2), "4-5");
        expect_list(&t2->applied, "4-7");

        /* The union of what the kernel kept, over the threads written. */
        ck_assert_int_eq(tracked_process_cpus(p, &u), 0);
        expect_list(&u, "0-5");

        /* New CPUs start Explain's "since placement" again; the same ones do not. */
        t->has_baseline = true;
        set_of(&a, "0-3");
        ck_assert_int_eq(thread_set_applied(t, &a, &a), 0);
        ck_assert(t->has_baseline);
        set_of(&a, "1");
        ck_assert_int_eq(thread_set_applied(t, &a, &a), 0);
        ck_assert(!t->has_baseline);
        ck_assert_int_eq(tracked_process_cpus(p, &u), 0);
        expect_list(&u, "1,4-5");

        manager_remove_process(&m, p);
}
END_TEST

/* A process whose policy a reload removed has no plan: its label says so. */
START_TEST(test_no_plan) {
        Manager m = {};
        TrackedProcess *p;

        ck_assert_int_eq(manager_add_process(&m, 800, 1, POLICY_NONE, &p), 0);
        ck_assert_ptr_null(manager_process_plan(&m, p));
        ck_assert_ptr_null(manager_process_plan(&m, p));
        ck_assert_str_eq(manager_process_policy_name(&m, p), "");
        ck_assert_str_eq(process_policy_label(&m, p), "(none)");
        p->policy = 3; /* out of range of no plan at all */
        ck_assert_ptr_null(manager_process_plan(&m, p));
        manager_remove_process(&m, p);
}
END_TEST

int main(void) {
        Suite *s = suite_create("tracked-process");
        TCase *tc = tcase_create("table");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_processes);
        tcase_add_test(tc, test_threads);
        tcase_add_test(tc, test_masks);
        tcase_add_test(tc, test_no_plan);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
