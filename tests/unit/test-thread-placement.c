/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Tests for lib/thread-placement: which CPUs and which scheduling state a thread gets under a
 * hand-made plan (a policy with thread rules: a spread pool, a rule with its own CPUs, a rule
 * that only sets scheduling), and what counts as a state the daemon handed out. No /proc, no
 * privileges: these are the decisions the daemon applies.
 */

#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset.h"
#include "macro.h"
#include "spread.h"
#include "thread-placement.h"

static CpuSet set_of(const char *list) {
        CpuSet s = CPUSET_NULL;

        ck_assert_int_eq(cpuset_parse_list(list, &s, NULL), 0);
        return s;
}

static char *list_of(const CpuSet *s) {
        char *l = NULL;

        ck_assert_int_eq(cpuset_format_list(s, &l), 0);
        return l;
}

/* A policy on CPUs 0-7 with three thread rules: "wrk-*" spread over 0-7 (one PU per core
 * first: 0,2,4,6 then the siblings 1,3,5,7), "io-*" on CPUs 6-7 with nice 5, and "rt-*" setting
 * only the scheduling class. The policy itself sets nice -5 and the best-effort I/O class. */
typedef struct Fixture {
        ThreadRule rules[3];
        Policy policy;
        ThreadPlan threads[3];
        unsigned order[8];
        PolicyPlan pp;
} Fixture;

static void fixture_init(Fixture *f) {
        static const unsigned order[] = {0, 2, 4, 6, 1, 3, 5, 7};

        *f = (Fixture){};
        f->rules[0] = (ThreadRule){.name = (char *)"wrk-*"};
        f->rules[1] = (ThreadRule){
                .name = (char *)"io-*",
                .scheduler = {.has_nice = true, .nice = 5},
        };
        f->rules[2] = (ThreadRule){
                .name = (char *)"rt-*",
                .scheduler = {.has_policy = true, .policy = SCHED_FIFO},
        };
        f->policy = (Policy){
                .name = (char *)"svc",
                .threads = f->rules,
                .n_threads = 3,
                .scheduler =
                        {.has_nice = true,
                         .nice = -5,
                         .has_io = true,
                         .io_class = APPLY_IOPRIO_CLASS_BE,
                         .io_level = 4},
        };
        memcpy(f->order, order, sizeof(order));
        f->threads[0] = (ThreadPlan){.spread = true, .spread_order = f->order, .n_spread_order = 8};
        f->threads[1] = (ThreadPlan){.has_cpus = true, .cpus = set_of("6-7")};
        f->threads[2] = (ThreadPlan){};
        f->pp = (PolicyPlan){
                .policy = &f->policy, .has_cpus = true, .cpus = set_of("0-7"), .threads = f->threads};
}

static void fixture_done(Fixture *f) {
        cpuset_done(&f->threads[1].cpus);
        cpuset_done(&f->pp.cpus);
}

START_TEST(test_cpus_choice) {
        Fixture f;
        ThreadCpusChoice c;

        fixture_init(&f);
        c = thread_cpus_choice(&f.pp, "wrk-3");
        ck_assert_int_eq(c.kind, THREAD_CPUS_SPREAD);
        ck_assert_ptr_eq(c.rule, &f.threads[0]);
        c = thread_cpus_choice(&f.pp, "io-1");
        ck_assert_int_eq(c.kind, THREAD_CPUS_RULE);
        ck_assert_ptr_eq(c.rule, &f.threads[1]);
        /* A rule that sets no CPUs leaves the thread on the policy's set. */
        c = thread_cpus_choice(&f.pp, "rt-0");
        ck_assert_int_eq(c.kind, THREAD_CPUS_POLICY);
        ck_assert_ptr_null(c.rule);
        ck_assert_int_eq(thread_cpus_choice(&f.pp, "main").kind, THREAD_CPUS_POLICY);

        /* No cpus: on the policy: only the rules' threads are moved. */
        f.pp.has_cpus = false;
        ck_assert_int_eq(thread_cpus_choice(&f.pp, "main").kind, THREAD_CPUS_NONE);
        ck_assert_int_eq(thread_cpus_choice(&f.pp, "io-1").kind, THREAD_CPUS_RULE);
        f.pp.has_cpus = true;

        /* A spread rule with nothing to spread over is no spread rule. */
        f.threads[0].n_spread_order = 0;
        ck_assert_int_eq(thread_cpus_choice(&f.pp, "wrk-3").kind, THREAD_CPUS_POLICY);
        f.threads[0].n_spread_order = 8;

        /* Pending, or no plan: nothing is touched, whatever the rules say. */
        f.pp.pending_reason = (char *)"NUMA node 7 does not exist here";
        ck_assert_int_eq(thread_cpus_choice(&f.pp, "wrk-3").kind, THREAD_CPUS_NONE);
        ck_assert_int_eq(thread_cpus_choice(&f.pp, "io-1").kind, THREAD_CPUS_NONE);
        ck_assert_int_eq(thread_cpus_choice(NULL, "io-1").kind, THREAD_CPUS_NONE);
        fixture_done(&f);
}
END_TEST

/*
 * processes: spread: the threads no rule gives CPUs follow their process's slot (the k-th slot
 * the k-th CPU of the order, round robin past its end); a process holding no slot (a pre-fork
 * master) gets every CPU of the order; rules with CPUs of their own keep them.
 */
START_TEST(test_process_slots) {
        _cleanup_cpuset_ CpuSet got = CPUSET_NULL;
        _cleanup_free_ char *l = NULL;
        Fixture f;

        fixture_init(&f);
        /* Not spread over processes: no process CPUs. */
        ck_assert_int_eq(process_spread_cpus(&f.pp, 0, &got), 0);
        ck_assert(cpuset_is_empty(&got));

        f.pp.process_order = f.order;
        f.pp.n_process_order = 8;
        ck_assert_int_eq(thread_cpus_choice(&f.pp, "main").kind, THREAD_CPUS_PROCESS);
        ck_assert_int_eq(thread_cpus_choice(&f.pp, "rt-0").kind, THREAD_CPUS_PROCESS);
        ck_assert_int_eq(thread_cpus_choice(&f.pp, "io-1").kind, THREAD_CPUS_RULE);
        ck_assert_int_eq(thread_cpus_choice(&f.pp, "wrk-3").kind, THREAD_CPUS_SPREAD);
        /* also without cpus: (the bare set it spreads over) */
        f.pp.has_cpus = false;
        ck_assert_int_eq(thread_cpus_choice(&f.pp, "main").kind, THREAD_CPUS_PROCESS);
        f.pp.has_cpus = true;

        for (size_t slot = 0; slot < 20; slot++) {
                ck_assert_int_eq(process_spread_cpus(&f.pp, (int)slot, &got), 1);
                ck_assert_uint_eq(cpuset_count(&got), 1);
                ck_assert(cpuset_contains(&got, f.order[slot % 8]));
        }
        /* distinct cores first: slots 0-3 are CPUs 0,2,4,6 (one of each core of 0-7) */
        ck_assert_int_eq(process_spread_cpus(&f.pp, 3, &got), 1);
        l = list_of(&got);
        ck_assert_str_eq(l, "6");
        l = mfree(l);
        /* a master: the whole order */
        ck_assert_int_eq(process_spread_cpus(&f.pp, -1, &got), 1);
        l = list_of(&got);
        ck_assert_str_eq(l, "0-7");
        fixture_done(&f);
}
END_TEST

/* The policy's set for the other threads: without the CPUs of held spread slots, and the whole
 * set when every CPU is handed out. */
START_TEST(test_policy_cpus) {
        _cleanup_(spread_slots_done) SpreadSlots slots = {};
        CpuSet buf = CPUSET_NULL;
        const CpuSet *cpus = NULL;
        size_t n;
        Fixture f;
        char *l;

        fixture_init(&f);
        ck_assert_ptr_eq(thread_spread_order(&f.pp, &n), f.order);
        ck_assert_uint_eq(n, 8);

        ck_assert_int_eq(thread_policy_cpus(&f.pp, NULL, &buf, &cpus), 0);
        ck_assert_ptr_eq(cpus, &f.pp.cpus);
        ck_assert_int_eq(thread_policy_cpus(&f.pp, &slots, &buf, &cpus), 0);
        ck_assert_ptr_eq(cpus, &f.pp.cpus);

        /* Three workers hold slots 0, 1, 2: CPUs 0, 2, 4 (a PU of three cores). */
        for (pid_t tid = 100; tid < 103; tid++)
                ck_assert_int_eq(spread_slots_acquire(&slots, tid), tid - 100);
        ck_assert_int_eq(thread_policy_cpus(&f.pp, &slots, &buf, &cpus), 0);
        ck_assert_ptr_eq(cpus, &buf);
        l = list_of(cpus);
        ck_assert_str_eq(l, "1,3,5-7");
        free(l);

        /* All eight handed out: the others share the whole set rather than get nothing. */
        for (pid_t tid = 103; tid < 108; tid++)
                ck_assert_int_ge(spread_slots_acquire(&slots, tid), 0);
        ck_assert_int_eq(thread_policy_cpus(&f.pp, &slots, &buf, &cpus), 0);
        l = list_of(cpus);
        ck_assert_str_eq(l, "0-7");
        free(l);

        /* No spread rule: nothing is taken out, held slots or not. */
        f.threads[0].spread = false;
        ck_assert_ptr_null(thread_spread_order(&f.pp, &n));
        ck_assert_uint_eq(n, 0);
        ck_assert_int_eq(thread_policy_cpus(&f.pp, &slots, &buf, &cpus), 0);
        ck_assert_ptr_eq(cpus, &f.pp.cpus);
        cpuset_done(&buf);
        fixture_done(&f);
}
END_TEST

START_TEST(test_mask_in_plan) {
        CpuSet a = set_of("0-7"), b = set_of("6-7"), c = set_of("0-6"), d = set_of("6");
        Fixture f;

        fixture_init(&f);
        ck_assert(thread_mask_in_plan(&f.pp, &a));
        ck_assert(thread_mask_in_plan(&f.pp, &b));
        ck_assert(!thread_mask_in_plan(&f.pp, &c));
        ck_assert(!thread_mask_in_plan(&f.pp, &d)); /* a narrowed set is the daemon's to check */
        f.pp.has_cpus = false;
        ck_assert(!thread_mask_in_plan(&f.pp, &a));
        ck_assert(thread_mask_in_plan(&f.pp, &b));
        f.pp.pending_reason = (char *)"pending";
        ck_assert(!thread_mask_in_plan(&f.pp, &b));
        ck_assert(!thread_mask_in_plan(NULL, &b));
        cpuset_done(&a);
        cpuset_done(&b);
        cpuset_done(&c);
        cpuset_done(&d);
        fixture_done(&f);
}
END_TEST

/* The rule's keys over the policy's, key by key. */
START_TEST(test_sched_spec) {
        SchedulerSpec s;
        Fixture f;

        fixture_init(&f);
        ck_assert(thread_sched_spec(&f.pp, "main", &s));
        ck_assert(s.has_nice && s.nice == -5);
        ck_assert(s.has_io && s.io_class == APPLY_IOPRIO_CLASS_BE && s.io_level == 4);
        ck_assert(!s.has_policy);

        ck_assert(thread_sched_spec(&f.pp, "io-2", &s));
        ck_assert(s.has_nice && s.nice == 5);                       /* the rule's */
        ck_assert(s.has_io && s.io_class == APPLY_IOPRIO_CLASS_BE); /* the policy's */

        ck_assert(thread_sched_spec(&f.pp, "rt-1", &s));
        ck_assert(s.has_policy && s.policy == SCHED_FIFO);
        ck_assert(s.has_nice && s.nice == -5);

        /* No key anywhere: nothing to set. */
        f.policy.scheduler = (SchedulerSpec){};
        ck_assert(!thread_sched_spec(&f.pp, "main", &s));
        ck_assert(!thread_sched_spec(&f.pp, "wrk-1", &s));
        ck_assert(thread_sched_spec(&f.pp, "io-1", &s));
        f.pp.pending_reason = (char *)"pending";
        ck_assert(!thread_sched_spec(&f.pp, "io-1", &s));
        ck_assert(!s.has_nice);
        ck_assert(!thread_sched_spec(NULL, "io-1", &s));
        fixture_done(&f);
}
END_TEST

START_TEST(test_sched_target) {
        const ThreadSched original = {
                .policy = SCHED_OTHER, .nice = 3, .io_class = APPLY_IOPRIO_CLASS_BE, .io_level = 4};
        const ThreadSched rt = {.policy = SCHED_RR, .priority = 20, .io_class = APPLY_IOPRIO_CLASS_BE};
        ThreadSched t;

        /* Into a real-time class without a priority: priority 1; nice kept. */
        t = thread_sched_target(&original, &(SchedulerSpec){.has_policy = true, .policy = SCHED_FIFO});
        ck_assert_int_eq(t.policy, SCHED_FIFO);
        ck_assert_uint_eq(t.priority, 1);
        ck_assert_int_eq(t.nice, 3);
        t = thread_sched_target(
                &original,
                &(SchedulerSpec){
                        .has_policy = true, .policy = SCHED_RR, .has_priority = true, .priority = 50});
        ck_assert_uint_eq(t.priority, 50);

        /* Out of one: the priority goes. */
        t = thread_sched_target(&rt, &(SchedulerSpec){.has_policy = true, .policy = SCHED_BATCH});
        ck_assert_int_eq(t.policy, SCHED_BATCH);
        ck_assert_uint_eq(t.priority, 0);
        /* A nice alone keeps the real-time class and its priority. */
        t = thread_sched_target(&rt, &(SchedulerSpec){.has_nice = true, .nice = -2});
        ck_assert_int_eq(t.policy, SCHED_RR);
        ck_assert_uint_eq(t.priority, 20);
        ck_assert_int_eq(t.nice, -2);

        /* The idle I/O class has no level. */
        t = thread_sched_target(
                &original,
                &(SchedulerSpec){.has_io = true, .io_class = APPLY_IOPRIO_CLASS_IDLE, .io_level = 6});
        ck_assert_int_eq(t.io_class, APPLY_IOPRIO_CLASS_IDLE);
        ck_assert_uint_eq(t.io_level, 0);
        t = thread_sched_target(
                &original,
                &(SchedulerSpec){.has_io = true, .io_class = APPLY_IOPRIO_CLASS_RT, .io_level = 6});
        ck_assert_uint_eq(t.io_level, 6);

        /* No key: the original, and reset-on-fork only when given. */
        t = thread_sched_target(&original, &(SchedulerSpec){});
        ck_assert(apply_sched_equal(&t, &original));
        t = thread_sched_target(
                &original, &(SchedulerSpec){.has_reset_on_fork = true, .reset_on_fork = true});
        ck_assert(t.reset_on_fork);
}
END_TEST

/* A thread cloned while another was being set copies each part from one of the two states. */
START_TEST(test_sched_inherited) {
        const ThreadSched original = {
                .policy = SCHED_OTHER, .nice = 0, .io_class = APPLY_IOPRIO_CLASS_BE, .io_level = 4};
        const ThreadSched set = {
                .policy = SCHED_FIFO,
                .priority = 10,
                .nice = -5,
                .io_class = APPLY_IOPRIO_CLASS_RT,
                .io_level = 1};
        ThreadSched cur;

        ck_assert(thread_sched_inherited(&original, &set, &original));
        ck_assert(thread_sched_inherited(&set, &set, &original));
        /* The class written, not yet the nice and the I/O priority. */
        cur = original;
        cur.policy = SCHED_FIFO;
        cur.priority = 10;
        ck_assert(thread_sched_inherited(&cur, &set, &original));
        /* Class and nice, not the I/O priority. */
        cur.nice = -5;
        ck_assert(thread_sched_inherited(&cur, &set, &original));
        /* A class with another priority is nobody's. */
        cur.priority = 11;
        ck_assert(!thread_sched_inherited(&cur, &set, &original));
        /* A nice neither state has. */
        cur = original;
        cur.nice = 7;
        ck_assert(!thread_sched_inherited(&cur, &set, &original));
        /* The I/O class of one with the level of the other is a mix inside a part: not inherited. */
        cur = original;
        cur.io_class = APPLY_IOPRIO_CLASS_RT;
        ck_assert(!thread_sched_inherited(&cur, &set, &original));
}
END_TEST

int main(void) {
        Suite *s = suite_create("thread-placement");
        TCase *tc = tcase_create("decisions");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_cpus_choice);
        tcase_add_test(tc, test_process_slots);
        tcase_add_test(tc, test_policy_cpus);
        tcase_add_test(tc, test_mask_in_plan);
        tcase_add_test(tc, test_sched_spec);
        tcase_add_test(tc, test_sched_target);
        tcase_add_test(tc, test_sched_inherited);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
