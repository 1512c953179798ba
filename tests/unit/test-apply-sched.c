/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of per-thread CPU affinity on real threads of this test process (and a child
 * process), read back independently from /proc/self/task/TID/status Cpus_allowed_list.
 * Every test restores the original affinity of the test process at the end.
 */

#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apply-sched.h"
#include "cpuset.h"
#include "macro.h"

static cpu_set_t original;    /* the test process's mask when the test started */
static unsigned cpu_a, cpu_b; /* the first two CPUs the test may use */

static void setup(void) {
        int n = 0;

        ck_assert_int_eq(sched_getaffinity(0, sizeof(original), &original), 0);
        for (unsigned c = 0; c < CPU_SETSIZE && n < 2; c++)
                if (CPU_ISSET(c, &original)) {
                        if (n++ == 0)
                                cpu_a = c;
                        else
                                cpu_b = c;
                }
        ck_assert_msg(n == 2, "this test needs two CPUs allowed, has %d", n);
}

static void teardown(void) {
        ck_assert_int_eq(sched_setaffinity(0, sizeof(original), &original), 0);
}

/* Cpus_allowed_list of /proc/PID/task/TID/status, read with stdio, independent of procfs.c. */
static void status_cpus(pid_t pid, pid_t tid, char *buf, size_t size) {
        char path[128], line[4096];
        FILE *f;
        bool found = false;

        snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
        f = fopen(path, "re");
        ck_assert_msg(f != NULL, "%s: %m", path);
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
                        char *v = line + 18;
                        v += strspn(v, " \t");
                        v[strcspn(v, "\n")] = '\0';
                        snprintf(buf, size, "%s", v);
                        found = true;
                }
        fclose(f);
        ck_assert(found);
}

static void expect_status(pid_t pid, pid_t tid, const char *want) {
        char got[4096];

        status_cpus(pid, tid, got, sizeof(got));
        ck_assert_msg(streq(got, want), "task %d: Cpus_allowed_list %s, expected %s", (int)tid, got, want);
}

static void set_of(CpuSet *s, unsigned n, const unsigned *cpus) {
        cpuset_clear(s);
        for (unsigned i = 0; i < n; i++)
                ck_assert_int_eq(cpuset_add(s, cpus[i]), 0);
}

/* A thread that waits until told to exit. */
typedef struct Sleeper {
        pthread_t thread;
        sem_t started, quit;
        pid_t tid;
} Sleeper;

static void *sleeper_main(void *p) {
        Sleeper *s = p;

        s->tid = gettid();
        sem_post(&s->started);
        sem_wait(&s->quit);
        return NULL;
}

static void sleeper_start(Sleeper *s) {
        ck_assert_int_eq(sem_init(&s->started, 0, 0), 0);
        ck_assert_int_eq(sem_init(&s->quit, 0, 0), 0);
        ck_assert_int_eq(pthread_create(&s->thread, NULL, sleeper_main, s), 0);
        sem_wait(&s->started);
}

static void sleeper_stop(Sleeper *s) {
        sem_post(&s->quit);
        ck_assert_int_eq(pthread_join(s->thread, NULL), 0);
}

/* Sets tid to exactly cpus and checks the result three ways: the effective set returned,
 * apply_get_thread_affinity(), and /proc/PID/task/TID/status. */
static void set_and_check(pid_t pid, pid_t tid, unsigned n, const unsigned *cpus, const char *want_list) {
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL, eff = CPUSET_NULL, got = CPUSET_NULL;

        set_of(&s, n, cpus);
        ck_assert_int_eq(apply_set_thread_affinity(tid, &s, &eff), 0);
        ck_assert(cpuset_equal(&eff, &s));
        ck_assert_int_eq(apply_get_thread_affinity(tid, &got), 0);
        ck_assert(cpuset_equal(&got, &s));
        expect_status(pid, tid, want_list);
}

START_TEST(test_threads_sequence) {
        Sleeper sl;
        char a[16], b[16], ab[32];
        pid_t self = getpid();

        snprintf(a, sizeof(a), "%u", cpu_a);
        snprintf(b, sizeof(b), "%u", cpu_b);
        snprintf(ab, sizeof(ab), cpu_b == cpu_a + 1 ? "%u-%u" : "%u,%u", cpu_a, cpu_b);

        sleeper_start(&sl);

        /* Another thread: CPU a, then b, then both. */
        set_and_check(self, sl.tid, 1, (unsigned[]){cpu_a}, a);
        set_and_check(self, sl.tid, 1, (unsigned[]){cpu_b}, b);
        set_and_check(self, sl.tid, 2, (unsigned[]){cpu_a, cpu_b}, ab);
        /* Only that thread moved: the main thread still has what it had. */
        set_and_check(self, sl.tid, 1, (unsigned[]){cpu_b}, b);
        {
                _cleanup_cpuset_ CpuSet main_mask = CPUSET_NULL, orig = CPUSET_NULL;
                ck_assert_int_eq(apply_get_thread_affinity(gettid(), &main_mask), 0);
                ck_assert_int_eq(cpuset_from_cpu_set(&original, sizeof(original), &orig), 0);
                ck_assert(cpuset_equal(&main_mask, &orig));
        }

        /* The calling thread itself. */
        set_and_check(self, gettid(), 1, (unsigned[]){cpu_b}, b);
        ck_assert_int_eq(sched_getcpu(), (int)cpu_b);
        set_and_check(self, gettid(), 1, (unsigned[]){cpu_a}, a);
        ck_assert_int_eq(sched_getcpu(), (int)cpu_a);

        sleeper_stop(&sl);
}
END_TEST

START_TEST(test_other_process) {
        pid_t child;
        char a[16];
        int status;

        snprintf(a, sizeof(a), "%u", cpu_a);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                pause();
                _exit(0);
        }
        set_and_check(child, child, 1, (unsigned[]){cpu_a}, a);
        ck_assert_int_eq(kill(child, SIGKILL), 0);
        ck_assert_int_eq(waitpid(child, &status, 0), child);

        /* Reaped: gone. */
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL, eff = CPUSET_NULL;
        ck_assert_int_eq(cpuset_add(&s, cpu_a), 0);
        ck_assert_int_eq(apply_set_thread_affinity(child, &s, &eff), APPLY_GONE);
        ck_assert_int_eq(apply_get_thread_affinity(child, &eff), APPLY_GONE);
}
END_TEST

START_TEST(test_refused_keeps_mask) {
        _cleanup_cpuset_ CpuSet empty = CPUSET_NULL, nowhere = CPUSET_NULL, eff = CPUSET_NULL,
                                got = CPUSET_NULL;
        Sleeper sl;
        char b[16];

        snprintf(b, sizeof(b), "%u", cpu_b);
        sleeper_start(&sl);
        set_and_check(getpid(), sl.tid, 1, (unsigned[]){cpu_b}, b);

        /* An empty set never reaches the kernel; the effective set is not written. */
        ck_assert_int_eq(cpuset_add(&eff, 7), 0);
        ck_assert_int_eq(apply_set_thread_affinity(sl.tid, &empty, &eff), -EINVAL);
        ck_assert_int_eq(apply_set_thread_affinity(sl.tid, NULL, &eff), -EINVAL);
        ck_assert_uint_eq(cpuset_count(&eff), 1);
        ck_assert(cpuset_contains(&eff, 7));
        expect_status(getpid(), sl.tid, b);

        /* A set the kernel can't honour (no such CPU): refused, mask unchanged. */
        ck_assert_int_eq(cpuset_add(&nowhere, CPUSET_MAX_CPUS - 1), 0);
        ck_assert_int_eq(apply_set_thread_affinity(sl.tid, &nowhere, &eff), -EINVAL);
        ck_assert(cpuset_contains(&eff, 7));
        expect_status(getpid(), sl.tid, b);
        ck_assert_int_eq(apply_get_thread_affinity(sl.tid, &got), 0);
        ck_assert_uint_eq(cpuset_count(&got), 1);
        ck_assert(cpuset_contains(&got, cpu_b));

        sleeper_stop(&sl);
}
END_TEST

START_TEST(test_narrowed) {
        _cleanup_cpuset_ CpuSet want = CPUSET_NULL, eff = CPUSET_NULL;
        Sleeper sl;
        char a[16];

        snprintf(a, sizeof(a), "%u", cpu_a);
        sleeper_start(&sl);

        /* CPU a plus a CPU that doesn't exist: the kernel keeps only a, and the read-back says so. */
        ck_assert_int_eq(cpuset_add(&want, cpu_a), 0);
        ck_assert_int_eq(cpuset_add(&want, CPUSET_MAX_CPUS - 1), 0);
        ck_assert_int_eq(apply_set_thread_affinity(sl.tid, &want, &eff), 0);
        ck_assert(!cpuset_equal(&eff, &want));
        ck_assert(cpuset_is_subset(&eff, &want));
        ck_assert_uint_eq(cpuset_count(&eff), 1);
        ck_assert(cpuset_contains(&eff, cpu_a));
        expect_status(getpid(), sl.tid, a);

        /* Without a read-back buffer the write still happens. */
        cpuset_clear(&want);
        ck_assert_int_eq(cpuset_add(&want, cpu_b), 0);
        ck_assert_int_eq(apply_set_thread_affinity(sl.tid, &want, NULL), 0);
        ck_assert_int_eq(apply_get_thread_affinity(sl.tid, &eff), 0);
        ck_assert(cpuset_equal(&eff, &want));

        sleeper_stop(&sl);
}
END_TEST

START_TEST(test_vanished_thread) {
        _cleanup_cpuset_ CpuSet s = CPUSET_NULL, eff = CPUSET_NULL;
        Sleeper sl;
        pid_t tid;

        sleeper_start(&sl);
        tid = sl.tid;
        ck_assert_int_eq(cpuset_add(&s, cpu_a), 0);
        ck_assert_int_eq(apply_set_thread_affinity(tid, &s, NULL), 0);
        sleeper_stop(&sl); /* joined: the TID no longer exists */

        ck_assert_int_eq(cpuset_add(&eff, 5), 0);
        ck_assert_int_eq(apply_set_thread_affinity(tid, &s, &eff), APPLY_GONE);
        ck_assert_int_eq(apply_get_thread_affinity(tid, &eff), APPLY_GONE);
        ck_assert_int_eq(APPLY_GONE, -ESRCH);
        /* ret_* untouched on failure */
        ck_assert_uint_eq(cpuset_count(&eff), 1);
        ck_assert(cpuset_contains(&eff, 5));
}
END_TEST

START_TEST(test_restore) {
        _cleanup_cpuset_ CpuSet orig = CPUSET_NULL, eff = CPUSET_NULL, one = CPUSET_NULL;
        char want[4096];

        /* What the daemon does with originals: remember, change, put back. */
        status_cpus(getpid(), gettid(), want, sizeof(want));
        ck_assert_int_eq(apply_get_thread_affinity(gettid(), &orig), 0);
        ck_assert_int_eq(cpuset_add(&one, cpu_b), 0);
        ck_assert_int_eq(apply_set_thread_affinity(gettid(), &one, NULL), 0);
        ck_assert_int_eq(apply_set_thread_affinity(gettid(), &orig, &eff), 0);
        ck_assert(cpuset_equal(&eff, &orig));
        expect_status(getpid(), gettid(), want);
}
END_TEST

int main(void) {
        Suite *s = suite_create("apply-sched");
        TCase *tc = tcase_create("threads");
        SRunner *sr;
        int failed;

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_threads_sequence);
        tcase_add_test(tc, test_other_process);
        tcase_add_test(tc, test_refused_keeps_mask);
        tcase_add_test(tc, test_narrowed);
        tcase_add_test(tc, test_vanished_thread);
        tcase_add_test(tc, test_restore);
        suite_add_tcase(s, tc);

        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
