/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The worker (daemon/worker.h): jobs are run on a thread other than the event loop's, at nice 19,
 * and handed back on the loop in the order submitted, with the CPU time they took; at most
 * max_jobs are queued or not yet handed back (-EBUSY beyond); a done function may submit again;
 * freeing it with jobs waiting stops the thread without running them.
 */

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "worker.h"

#define MAX_JOBS 8

typedef struct Fixture {
        sd_event *event;
        Worker *worker;
        pid_t loop_tid;
        pthread_mutex_t lock;
        unsigned decide_delay_ms;
        unsigned spin_ms; /* run burns this much CPU */
        bool hold;        /* decide waits while set */
        unsigned n_decided;
        pid_t decide_tids[64];
        int decide_nice[64];
        unsigned n_done;
        pid_t done_pids[64];
        pid_t done_tids[64];
        int done_k[64];
        uint64_t done_cpu_usec[64];
        unsigned resubmit; /* done submits this many again */
} Fixture;

static void done(const WorkerJob *res);
static int submit(Fixture *f, pid_t pid, uint64_t starttime);

static void decide(WorkerJob *job) {
        Fixture *f = job->userdata;
        WorkerJob *ret = job;

        for (;;) {
                bool hold;

                pthread_mutex_lock(&f->lock);
                hold = f->hold;
                pthread_mutex_unlock(&f->lock);
                if (!hold)
                        break;
                usleep(1000);
        }
        if (f->decide_delay_ms)
                usleep(f->decide_delay_ms * 1000);
        if (f->spin_ms) {
                struct timespec t0, t;

                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
                do
                        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
                while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < f->spin_ms);
        }
        pthread_mutex_lock(&f->lock);
        if (f->n_decided < 64) {
                f->decide_tids[f->n_decided] = gettid();
                errno = 0;
                f->decide_nice[f->n_decided] = getpriority(PRIO_PROCESS, (id_t)gettid());
        }
        f->n_decided++;
        pthread_mutex_unlock(&f->lock);
        ret->result = (int)job->pid * 10;
        ret->generation = job->starttime;
        strcpy(ret->comm, "decided");
}

static int submit(Fixture *f, pid_t pid, uint64_t starttime) {
        return worker_submit(
                f->worker,
                &(WorkerJob){
                        .run = decide, .done = done, .userdata = f, .pid = pid, .starttime = starttime});
}

static void done(const WorkerJob *res) {
        Fixture *f = res->userdata;

        ck_assert_str_eq(res->comm, "decided");
        ck_assert_uint_eq(res->generation, res->starttime);
        if (f->n_done < 64) {
                f->done_pids[f->n_done] = res->pid;
                f->done_tids[f->n_done] = gettid();
                f->done_k[f->n_done] = res->result;
                f->done_cpu_usec[f->n_done] = res->cpu_usec;
        }
        f->n_done++;
        if (f->resubmit > 0) {
                f->resubmit--;
                ck_assert_int_eq(submit(f, res->pid + 100, 7), 0);
        }
}

static void fixture_init(Fixture *f) {
        *f = (Fixture){.loop_tid = gettid()};
        pthread_mutex_init(&f->lock, NULL);
        ck_assert_int_eq(sd_event_new(&f->event), 0);
        ck_assert_int_eq(worker_new(f->event, "test-worker", MAX_JOBS, &f->worker), 0);
}

static void fixture_done(Fixture *f) {
        f->worker = worker_free(f->worker);
        sd_event_unref(f->event);
        pthread_mutex_destroy(&f->lock);
}

/* Runs the loop until n results were handed back (at most 10 s). */
static void run_until(Fixture *f, unsigned n) {
        for (unsigned i = 0; i < 10000 && f->n_done < n; i++)
                ck_assert_int_ge(sd_event_run(f->event, 1000), 0);
        ck_assert_uint_eq(f->n_done, n);
}

START_TEST(test_order_and_thread) {
        Fixture f;

        fixture_init(&f);
        for (pid_t pid = 1; pid <= 5; pid++)
                ck_assert_int_eq(submit(&f, pid, 3), 0);
        run_until(&f, 5);
        for (unsigned i = 0; i < 5; i++) {
                ck_assert_int_eq(f.done_pids[i], (pid_t)i + 1);
                ck_assert_int_eq(f.done_k[i], ((int)i + 1) * 10);
                ck_assert_int_eq(f.done_tids[i], f.loop_tid);         /* handed back on the loop */
                ck_assert_int_ne(f.decide_tids[i], f.loop_tid);       /* decided elsewhere */
                ck_assert_int_eq(f.decide_tids[i], f.decide_tids[0]); /* by one thread */
                ck_assert_int_eq(f.decide_nice[i], 19);
        }
        ck_assert_uint_eq(worker_pending(f.worker), 0);
        fixture_done(&f);
}
END_TEST

START_TEST(test_cpu_time) {
        Fixture f;

        fixture_init(&f);
        f.spin_ms = 30;
        ck_assert_int_eq(submit(&f, 1, 3), 0);
        run_until(&f, 1);
        f.spin_ms = 0;
        /* 30 ms of the thread's CPU time, counted; sleeping and waiting for a CPU do not count */
        ck_assert_uint_ge(f.done_cpu_usec[0], 30000);
        ck_assert_uint_lt(f.done_cpu_usec[0], 1000000);
        f.decide_delay_ms = 50;
        ck_assert_int_eq(submit(&f, 2, 3), 0);
        run_until(&f, 2);
        ck_assert_uint_lt(f.done_cpu_usec[1], 20000);
        ck_assert_int_eq(worker_submit(f.worker, &(WorkerJob){.pid = 3}), -EINVAL); /* no run, done */
        fixture_done(&f);
}
END_TEST

START_TEST(test_bounded) {
        Fixture f;

        fixture_init(&f);
        f.hold = true; /* the first job is taken and held: MAX_JOBS in all, counted */
        for (pid_t pid = 1; pid <= MAX_JOBS; pid++)
                ck_assert_int_eq(submit(&f, pid, 1), 0);
        ck_assert_int_eq(submit(&f, 99, 1), -EBUSY);
        ck_assert_uint_eq(worker_pending(f.worker), MAX_JOBS);
        pthread_mutex_lock(&f.lock);
        f.hold = false;
        pthread_mutex_unlock(&f.lock);
        run_until(&f, MAX_JOBS);
        ck_assert_uint_eq(worker_pending(f.worker), 0);
        /* Room again. */
        ck_assert_int_eq(submit(&f, 99, 1), 0);
        run_until(&f, MAX_JOBS + 1);
        ck_assert_int_eq(f.done_pids[MAX_JOBS], 99);
        fixture_done(&f);
}
END_TEST

START_TEST(test_resubmit_from_done) {
        Fixture f;

        fixture_init(&f);
        f.resubmit = 3;
        ck_assert_int_eq(submit(&f, 1, 7), 0);
        run_until(&f, 4);
        ck_assert_int_eq(f.done_pids[1], 101);
        ck_assert_int_eq(f.done_pids[2], 201);
        ck_assert_int_eq(f.done_pids[3], 301);
        fixture_done(&f);
}
END_TEST

START_TEST(test_free_with_jobs_waiting) {
        Fixture f;

        fixture_init(&f);
        f.decide_delay_ms = 50;
        for (pid_t pid = 1; pid <= MAX_JOBS; pid++)
                ck_assert_int_eq(submit(&f, pid, 1), 0);
        usleep(20 * 1000);
        f.worker = worker_free(f.worker); /* joins after the job in hand, if any */
        ck_assert_ptr_null(f.worker);
        ck_assert_uint_le(f.n_decided, 2);
        ck_assert_uint_eq(f.n_done, 0);
        fixture_done(&f);
}
END_TEST

int main(void) {
        Suite *s = suite_create("worker");
        TCase *tc = tcase_create("core");
        SRunner *sr;
        int failed;

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_order_and_thread);
        tcase_add_test(tc, test_cpu_time);
        tcase_add_test(tc, test_bounded);
        tcase_add_test(tc, test_resubmit_from_done);
        tcase_add_test(tc, test_free_with_jobs_waiting);
        suite_add_tcase(s, tc);
        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
