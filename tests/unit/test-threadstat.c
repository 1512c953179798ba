/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the per-thread scheduler counters (lib/threadstat.h): on fixture trees built per test
 * in a temp dir (ROOT/proc/PID/task/TID/{stat,sched,schedstat,status}), and live on this test's
 * own threads (a thread pinned to one CPU reports that CPU and does not migrate).
 */

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"
#include "threadstat.h"
#include "thread-join.h"

static char *root;

static void write_file(const char *rel, const char *content) {
        char path[PATH_MAX];
        FILE *f;

        ck_assert_int_lt(snprintf(path, sizeof(path), "%s/%s", root, rel), (int)sizeof(path));
        for (char *p = path + strlen(root) + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        ck_assert(mkdir(path, 0755) == 0 || errno == EEXIST);
                        *p = '/';
                }
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(content, f), 0);
        ck_assert_int_eq(fclose(f), 0);
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        return remove(path);
}

static void setup(void) {
        char tmpl[] = "/tmp/test-threadstat-XXXXXX";
        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        root = strdup(tmpl);
        ck_assert_ptr_nonnull(root);
}

static void teardown(void) {
        (void)nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        root = mfree(root);
}

/* A stat line whose comm holds ") " and spaces, with processor (field 39) = cpu. */
static void write_stat(const char *dir, unsigned cpu) {
        char rel[PATH_MAX], line[1024];
        int k = snprintf(line, sizeof(line), "4242 (we) ird (x) S");

        /* fields 4..38: 35 numbers, then field 39 and a few more */
        for (unsigned field = 4; field <= 38; field++)
                k += snprintf(line + k, sizeof(line) - k, " %u", field * 10);
        snprintf(line + k, sizeof(line) - k, " %u 0 0 0 0 0\n", cpu);
        snprintf(rel, sizeof(rel), "%s/stat", dir);
        write_file(rel, line);
}

static const char status_text[] = "Name:\tworker\nState:\tS (sleeping)\nTgid:\t4242\n"
                                  "voluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t37\n";

static const char sched_text[] = "worker (4243, #threads: 2)\n"
                                 "-------------------------------------------------------------------\n"
                                 "se.exec_start                                :      12345.678901\n"
                                 "se.nr_migrations_cold                        :                    9\n"
                                 "se.nr_migrations                             :                   17\n"
                                 "nr_switches                                  :                  157\n";

START_TEST(test_fixture_full) {
        ThreadStat ts;

        write_stat("proc/4242/task/4243", 5);
        write_file("proc/4242/task/4243/status", status_text);
        write_file("proc/4242/task/4243/sched", sched_text);
        write_file("proc/4242/task/4243/schedstat", "987654321 5550001 42\n");

        ck_assert_int_eq(threadstat_read(root, 4242, 4243, &ts), 0);
        ck_assert_uint_eq(ts.last_cpu, 5);
        /* not se.nr_migrations_cold, which comes first */
        ck_assert_uint_eq(ts.nr_migrations, 17);
        ck_assert_uint_eq(ts.run_delay_ns, 5550001);
        ck_assert_uint_eq(ts.timeslices, 42);
        ck_assert_uint_eq(ts.nonvoluntary, 37);
}
END_TEST

START_TEST(test_fixture_process_level) {
        ThreadStat ts;

        write_stat("proc/77", 3);
        write_file("proc/77/status", status_text);
        ck_assert_int_eq(threadstat_read(root, 77, 0, &ts), 0);
        ck_assert_uint_eq(ts.last_cpu, 3);
        /* no sched, no schedstat: unknown, not 0 */
        ck_assert_uint_eq(ts.nr_migrations, THREADSTAT_UNKNOWN);
        ck_assert_uint_eq(ts.run_delay_ns, THREADSTAT_UNKNOWN);
        ck_assert_uint_eq(ts.timeslices, THREADSTAT_UNKNOWN);
        ck_assert_uint_eq(ts.nonvoluntary, 37);
}
END_TEST

START_TEST(test_fixture_no_migrations_line) {
        ThreadStat ts;

        write_stat("proc/10/task/11", 0);
        write_file("proc/10/task/11/status", status_text);
        /* a kernel without CONFIG_SCHED_DEBUG lines: se.nr_migrations absent */
        write_file("proc/10/task/11/sched", "worker (11, #threads: 1)\nnr_switches : 3\n");
        write_file("proc/10/task/11/schedstat", "1 2 3\n");
        ck_assert_int_eq(threadstat_read(root, 10, 11, &ts), 0);
        ck_assert_uint_eq(ts.nr_migrations, THREADSTAT_UNKNOWN);
        ck_assert_uint_eq(ts.run_delay_ns, 2);
}
END_TEST

START_TEST(test_fixture_counters) {
        static const char sched_with_switches[] =
                "worker (21, #threads: 1)\n"
                "se.nr_migrations_cold                        :                    9\n"
                "se.nr_migrations                             :                   17\n"
                "nr_involuntary_switches                      :                   41\n";
        ThreadStat ts;

        /* sched gives migrations and involuntary switches: stat and status are not needed */
        write_file("proc/20/task/21/sched", sched_with_switches);
        write_file("proc/20/task/21/schedstat", "987654321 5550001 42\n");
        ck_assert_int_eq(threadstat_read_counters(root, 20, 21, &ts), 0);
        ck_assert_uint_eq(ts.nr_migrations, 17);
        ck_assert_uint_eq(ts.nonvoluntary, 41);
        ck_assert_uint_eq(ts.run_delay_ns, 5550001);
        ck_assert_uint_eq(ts.timeslices, 42);

        /* a kernel without sched: involuntary switches from status, migrations unknown */
        write_file("proc/30/task/31/status", status_text);
        write_file("proc/30/task/31/schedstat", "1 2 3\n");
        ck_assert_int_eq(threadstat_read_counters(root, 30, 31, &ts), 0);
        ck_assert_uint_eq(ts.nr_migrations, THREADSTAT_UNKNOWN);
        ck_assert_uint_eq(ts.nonvoluntary, 37);
        ck_assert_uint_eq(ts.run_delay_ns, 2);

        /* nothing there: the thread is gone */
        ck_assert_int_eq(threadstat_read_counters(root, 40, 41, &ts), -ESRCH);
}
END_TEST

START_TEST(test_fixture_errors) {
        ThreadStat ts = {.last_cpu = 999};

        ck_assert_int_eq(threadstat_read(root, 10, 11, &ts), -ESRCH);
        ck_assert_uint_eq(ts.last_cpu, 999); /* untouched on failure */

        /* truncated stat line: no field 39 */
        write_file("proc/10/task/11/stat", "11 (w) S 1 2 3 4 5\n");
        write_file("proc/10/task/11/status", status_text);
        ck_assert_int_eq(threadstat_read(root, 10, 11, &ts), -EBADMSG);

        /* stat fine, status without the line */
        write_stat("proc/10/task/11", 1);
        write_file("proc/10/task/11/status", "Name:\tw\n");
        ck_assert_int_eq(threadstat_read(root, 10, 11, &ts), -EBADMSG);

        /* status missing: gone */
        write_stat("proc/12/task/13", 1);
        ck_assert_int_eq(threadstat_read(root, 12, 13, &ts), -ESRCH);

        /* malformed schedstat */
        write_stat("proc/20/task/21", 1);
        write_file("proc/20/task/21/status", status_text);
        write_file("proc/20/task/21/schedstat", "12 x\n");
        ck_assert_int_eq(threadstat_read(root, 20, 21, &ts), -EBADMSG);

        ck_assert_int_eq(threadstat_read(root, 0, 1, &ts), -EINVAL);
        ck_assert_int_eq(threadstat_read(root, 1, -1, &ts), -EINVAL);
        ck_assert_uint_eq(ts.last_cpu, 999);
}
END_TEST

START_TEST(test_delta) {
        ck_assert_uint_eq(threadstat_delta(10, 4), 6);
        ck_assert_uint_eq(threadstat_delta(4, 4), 0);
        ck_assert_uint_eq(threadstat_delta(3, 10), 3); /* counter restarted: total */
        ck_assert_uint_eq(threadstat_delta(THREADSTAT_UNKNOWN, 4), THREADSTAT_UNKNOWN);
        ck_assert_uint_eq(threadstat_delta(10, THREADSTAT_UNKNOWN), THREADSTAT_UNKNOWN);
}
END_TEST

/* ---- live ---- */

typedef struct Spinner {
        unsigned cpu;
        atomic_int tid;
        atomic_bool stop;
        atomic_int seen_cpu;
} Spinner;

static void *spin(void *arg) {
        Spinner *s = arg;
        cpu_set_t set;

        CPU_ZERO(&set);
        CPU_SET(s->cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) < 0)
                return NULL;
        atomic_store(&s->seen_cpu, sched_getcpu());
        atomic_store(&s->tid, (int)syscall(SYS_gettid));
        while (!atomic_load(&s->stop))
                atomic_store(&s->seen_cpu, sched_getcpu());
        return NULL;
}

/* The highest CPU this process may use. */
static unsigned last_allowed_cpu(void) {
        cpu_set_t set;
        int last = -1;

        ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
        for (int i = 0; i < CPU_SETSIZE; i++)
                if (CPU_ISSET(i, &set))
                        last = i;
        ck_assert_int_ge(last, 0);
        return (unsigned)last;
}

START_TEST(test_live_pinned_thread) {
        Spinner s = {.cpu = last_allowed_cpu()};
        ThreadStat a, b;
        pthread_t th;

        ck_assert_int_eq(pthread_create(&th, NULL, spin, &s), 0);
        while (atomic_load(&s.tid) == 0)
                usleep(1000);
        ck_assert_int_eq(atomic_load(&s.seen_cpu), (int)s.cpu); /* the pin took */
        usleep(20000);

        ck_assert_int_eq(threadstat_read(NULL, getpid(), atomic_load(&s.tid), &a), 0);
        usleep(50000);
        ck_assert_int_eq(threadstat_read("/", getpid(), atomic_load(&s.tid), &b), 0);

        /* pinned: it runs only there, and its migrations do not grow */
        ck_assert_uint_eq(a.last_cpu, s.cpu);
        ck_assert_uint_eq(b.last_cpu, s.cpu);
        if (a.nr_migrations != THREADSTAT_UNKNOWN)
                ck_assert_uint_eq(threadstat_delta(b.nr_migrations, a.nr_migrations), 0);
        /* this kernel has schedstat; the counters only grow */
        ck_assert_uint_ne(a.run_delay_ns, THREADSTAT_UNKNOWN);
        ck_assert_uint_ge(b.run_delay_ns, a.run_delay_ns);
        ck_assert_uint_ge(b.timeslices, a.timeslices);
        ck_assert_uint_ge(b.nonvoluntary, a.nonvoluntary);
        {
                /* the cheaper counters-only read sees the same kernel counters */
                ThreadStat c;

                ck_assert_int_eq(threadstat_read_counters(NULL, getpid(), atomic_load(&s.tid), &c), 0);
                ck_assert_uint_ne(c.nonvoluntary, THREADSTAT_UNKNOWN);
                ck_assert_uint_ge(c.nonvoluntary, b.nonvoluntary);
                ck_assert_uint_ge(c.run_delay_ns, b.run_delay_ns);
                if (b.nr_migrations != THREADSTAT_UNKNOWN)
                        ck_assert_uint_eq(c.nr_migrations, b.nr_migrations);
        }

        atomic_store(&s.stop, true);
        ck_assert_int_eq(thread_join_gone(th, atomic_load(&s.tid)), 0);

        /* the thread is gone now */
        ck_assert_int_eq(threadstat_read(NULL, getpid(), atomic_load(&s.tid), &a), -ESRCH);
}
END_TEST

START_TEST(test_live_self_matches_status) {
        ThreadStat ts;
        char *text = NULL, *p;
        size_t size = 0;
        unsigned long long v;
        FILE *f;

        ck_assert_int_eq(threadstat_read(NULL, getpid(), (pid_t)syscall(SYS_gettid), &ts), 0);
        /* the last CPU of a running thread is one it may use */
        ck_assert_uint_le(ts.last_cpu, last_allowed_cpu());

        /* compare with what the kernel shows right after (the count can only grow) */
        f = fopen("/proc/self/status", "re");
        ck_assert_ptr_nonnull(f);
        ck_assert(getdelim(&text, &size, '\0', f) > 0);
        fclose(f);
        p = strstr(text, "nonvoluntary_ctxt_switches:");
        ck_assert_ptr_nonnull(p);
        ck_assert_int_eq(sscanf(p, "nonvoluntary_ctxt_switches: %llu", &v), 1);
        ck_assert_uint_ge(v, ts.nonvoluntary);
        free(text);
}
END_TEST

static Suite *threadstat_suite(void) {
        Suite *s = suite_create("threadstat");
        TCase *tc = tcase_create("fixture");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_fixture_full);
        tcase_add_test(tc, test_fixture_process_level);
        tcase_add_test(tc, test_fixture_no_migrations_line);
        tcase_add_test(tc, test_fixture_counters);
        tcase_add_test(tc, test_fixture_errors);
        tcase_add_test(tc, test_delta);
        suite_add_tcase(s, tc);

        tc = tcase_create("live");
        tcase_add_test(tc, test_live_pinned_thread);
        tcase_add_test(tc, test_live_self_matches_status);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        SRunner *sr = srunner_create(threadstat_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
