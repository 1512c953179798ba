/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The fair-share queue (daemon/fair-queue.h) on a real sd-event loop, with a start callback that
 * records what it was asked to start instead of handing work to a thread: the limits (all jobs,
 * per uid; root uncapped), the order jobs start in, one running job per uid, a uid whose share
 * is spent waiting while another's job starts, "no room" stopping a pass until the next kick, a
 * step finished from within the start callback, and freeing a queue with jobs in it. No root,
 * no /proc: the outcomes are orders and counts, never durations.
 */

#include <check.h>
#include <errno.h>
#include <stdlib.h>

#include "caller-budget.h"
#include "fair-queue.h"
#include "macro.h"
#include "util.h"

#define MAX_STARTS 64

typedef struct Fixture {
        sd_event *event;
        CallerBudget budget;
        FairQueue *queue;
        int starts[MAX_STARTS]; /* the data (an int) of each job started, in order */
        unsigned n_starts;
        bool full;          /* start answers -EBUSY */
        bool finish_now;    /* start finishes the job itself (fair_queue_ran(done)) */
        uint64_t cost_usec; /* charged when the start finishes the job */
} Fixture;

static int ids[32];

static int start(FairJob *job, void *userdata) {
        Fixture *f = userdata;

        if (f->full)
                return -EBUSY;
        ck_assert_uint_lt(f->n_starts, MAX_STARTS);
        ck_assert(fair_job_running(job));
        f->starts[f->n_starts++] = *(int *)fair_job_data(job);
        if (f->finish_now)
                fair_queue_ran(f->queue, job, f->cost_usec, true);
        return 0;
}

/* Rates: an unprivileged uid may use 1 ms of every second, saved up to 1 ms; all of them
 * together 1 s a second, saved up to 10 s. */
static void setup(Fixture *f, size_t max_jobs, unsigned max_per_uid, unsigned running_per_uid) {
        *f = (Fixture){};
        for (size_t i = 0; i < ELEMENTSOF(ids); i++)
                ids[i] = (int)i;
        ck_assert_int_eq(sd_event_new(&f->event), 0);
        caller_budget_init(&f->budget, 1000, 1000, 1000000, 10000000, now_monotonic_usec());
        ck_assert_int_eq(
                fair_queue_new(
                        f->event, 0, "test", &f->budget,
                        &(FairQueueLimits){
                                .max_jobs = max_jobs,
                                .max_per_uid = max_per_uid,
                                .running_per_uid = running_per_uid},
                        start, f, &f->queue),
                0);
}

static void teardown(Fixture *f) {
        f->queue = fair_queue_free(f->queue);
        f->event = sd_event_unref(f->event);
}

/* Runs the loop until it has nothing ready (the queue's timer, when armed "at once"). */
static void run_ready(Fixture *f) {
        for (unsigned i = 0; i < 100; i++)
                if (sd_event_run(f->event, 0) <= 0)
                        return;
}

static FairJob *add(Fixture *f, uid_t uid, int id) {
        FairJob *j = NULL;

        ck_assert_int_eq(fair_queue_add(f->queue, uid, &ids[id], &j, NULL), 0);
        ck_assert_ptr_nonnull(j);
        return j;
}

START_TEST(test_limits) {
        Fixture f;
        FairRefusal why = 0;

        setup(&f, 4, 2, 1);
        f.full = true; /* nothing starts: every job stays in the queue */
        add(&f, 1000, 0);
        add(&f, 1000, 1);
        ck_assert_int_eq(fair_queue_add(f.queue, 1000, &ids[2], NULL, &why), -EBUSY);
        ck_assert_int_eq(why, FAIR_REFUSED_UID);
        ck_assert_uint_eq(fair_queue_count_uid(f.queue, 1000), 2);
        /* root is not capped per uid, but counts towards the whole */
        add(&f, 0, 3);
        add(&f, 0, 4);
        ck_assert_uint_eq(fair_queue_size(f.queue), 4);
        why = 0;
        ck_assert_int_eq(fair_queue_add(f.queue, 2000, &ids[5], NULL, &why), -EBUSY);
        ck_assert_int_eq(why, FAIR_REFUSED_FULL);
        run_ready(&f);
        ck_assert_uint_eq(f.n_starts, 0);
        teardown(&f);
}
END_TEST

START_TEST(test_order_and_one_running_per_uid) {
        Fixture f;
        FairJob *a0, *b0;

        setup(&f, 16, 8, 1);
        a0 = add(&f, 1000, 0);
        (void)add(&f, 1000, 1);
        b0 = add(&f, 2000, 2);
        (void)add(&f, 0, 3);
        (void)add(&f, 0, 4);
        ck_assert_uint_eq(f.n_starts, 0); /* never from within the owner's call */
        run_ready(&f);
        /* in order, one of each unprivileged uid, every one of root's */
        ck_assert_uint_eq(f.n_starts, 4);
        ck_assert_int_eq(f.starts[0], 0);
        ck_assert_int_eq(f.starts[1], 2);
        ck_assert_int_eq(f.starts[2], 3);
        ck_assert_int_eq(f.starts[3], 4);
        /* uid 1000's first job done (cheaply): its second starts */
        fair_queue_ran(f.queue, a0, 1, true);
        run_ready(&f);
        ck_assert_uint_eq(f.n_starts, 5);
        ck_assert_int_eq(f.starts[4], 1);
        /* a step that is not the last: the job waits for its next, and gets it */
        fair_queue_ran(f.queue, b0, 1, false);
        ck_assert(!fair_job_running(b0));
        run_ready(&f);
        ck_assert_uint_eq(f.n_starts, 6);
        ck_assert_int_eq(f.starts[5], 2);
        ck_assert_uint_eq(fair_queue_size(f.queue), 4);
        teardown(&f);
}
END_TEST

/* A uid that spent its share waits; another uid's job starts meanwhile; root is never charged. */
START_TEST(test_share) {
        Fixture f;
        FairJob *a;

        setup(&f, 16, 8, 1);
        a = add(&f, 1000, 0);
        run_ready(&f);
        ck_assert_uint_eq(f.n_starts, 1);
        fair_queue_ran(f.queue, a, 500 * 1000, false); /* half a second: far beyond 1 ms */
        ck_assert(caller_budget_wait(&f.budget, 1000, now_monotonic_usec()) > 0);
        (void)add(&f, 2000, 1);
        a = add(&f, 0, 2);
        run_ready(&f);
        ck_assert_uint_eq(f.n_starts, 3); /* uid 1000's next step is not among them */
        ck_assert_int_eq(f.starts[1], 1);
        ck_assert_int_eq(f.starts[2], 2);
        fair_queue_ran(f.queue, a, 500 * 1000, true); /* root's: not charged to anyone */
        ck_assert_uint_eq(caller_budget_wait(&f.budget, 2000, now_monotonic_usec()), 0);
        run_ready(&f);
        ck_assert_uint_eq(f.n_starts, 3);
        ck_assert_uint_eq(fair_queue_size(f.queue), 2);
        teardown(&f);
}
END_TEST

/* No room: the pass stops at the first refusal (order kept) until the next kick. */
START_TEST(test_no_room) {
        Fixture f;

        setup(&f, 16, 8, 8);
        f.full = true;
        (void)add(&f, 1000, 0);
        (void)add(&f, 2000, 1);
        run_ready(&f);
        ck_assert_uint_eq(f.n_starts, 0);
        ck_assert(!fair_job_running(fair_queue_find(f.queue, NULL, NULL)));
        f.full = false;
        run_ready(&f);
        ck_assert_uint_eq(f.n_starts, 0); /* nothing kicked it */
        fair_queue_kick(f.queue);
        run_ready(&f);
        ck_assert_uint_eq(f.n_starts, 2);
        ck_assert_int_eq(f.starts[0], 0);
        ck_assert_int_eq(f.starts[1], 1);
        teardown(&f);
}
END_TEST

/* Jobs the start callback finishes at once leave the queue within the pass. */
START_TEST(test_finish_in_start) {
        Fixture f;

        setup(&f, 16, 8, 1);
        f.finish_now = true;
        f.cost_usec = 1;
        for (int i = 0; i < 6; i++)
                (void)add(&f, i % 2 ? 0 : 1000, i);
        run_ready(&f);
        ck_assert_uint_eq(f.n_starts, 6);
        for (int i = 0; i < 6; i++)
                ck_assert_int_eq(f.starts[i], i);
        ck_assert_uint_eq(fair_queue_size(f.queue), 0);
        teardown(&f);
}
END_TEST

static bool is_id(const void *data, const void *key) {
        return *(const int *)data == *(const int *)key;
}

START_TEST(test_find_remove_free) {
        Fixture f;
        FairJob *j;
        int key = 2;

        setup(&f, 16, 8, 1);
        f.full = true;
        for (int i = 0; i < 4; i++)
                (void)add(&f, 1000, i);
        j = fair_queue_find(f.queue, is_id, &key);
        ck_assert_ptr_nonnull(j);
        ck_assert_int_eq(*(int *)fair_job_data(j), 2);
        ck_assert_uint_eq(fair_job_uid(j), 1000);
        fair_queue_remove(f.queue, j);
        ck_assert_ptr_null(fair_queue_find(f.queue, is_id, &key));
        ck_assert_uint_eq(fair_queue_size(f.queue), 3);
        key = 3; /* the tail, after a removal in the middle */
        fair_queue_remove(f.queue, fair_queue_find(f.queue, is_id, &key));
        (void)add(&f, 1000, 4);
        ck_assert_uint_eq(fair_queue_size(f.queue), 3);
        teardown(&f); /* with jobs in it: freed (the leak checkers see to it) */
}
END_TEST

START_TEST(test_invalid) {
        sd_event *e = NULL;
        CallerBudget b;
        FairQueue *q = NULL;

        ck_assert_int_eq(sd_event_new(&e), 0);
        caller_budget_init(&b, 1000, 1000, 1000, 1000, now_monotonic_usec());
        ck_assert_int_eq(
                fair_queue_new(e, 0, "x", &b, &(FairQueueLimits){0, 1, 1}, start, NULL, &q), -EINVAL);
        ck_assert_int_eq(
                fair_queue_new(e, 0, "x", &b, &(FairQueueLimits){1, 1, 0}, start, NULL, &q), -EINVAL);
        ck_assert_int_eq(
                fair_queue_new(e, 0, "x", &b, &(FairQueueLimits){1, 1, 1}, NULL, NULL, &q), -EINVAL);
        ck_assert_ptr_null(q);
        ck_assert_ptr_null(fair_queue_free(NULL));
        ck_assert_ptr_null(fair_queue_find(NULL, NULL, NULL)); /* a queue not made yet */
        ck_assert_uint_eq(fair_queue_size(NULL), 0);
        sd_event_unref(e);
}
END_TEST

int main(void) {
        Suite *s = suite_create("fair-queue");
        TCase *tc = tcase_create("core");
        SRunner *sr;
        int failed;

        tcase_add_test(tc, test_limits);
        tcase_add_test(tc, test_order_and_one_running_per_uid);
        tcase_add_test(tc, test_share);
        tcase_add_test(tc, test_no_room);
        tcase_add_test(tc, test_finish_in_start);
        tcase_add_test(tc, test_find_remove_free);
        tcase_add_test(tc, test_invalid);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? 0 : 1;
}
