/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the effect samples and totals (lib/effect.h) on fixture trees built per test in a temp
 * dir (ROOT/proc/PID/task/TID/{stat,sched,schedstat,status}), and live on this test's own thread.
 */

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cpuset.h"
#include "effect.h"
#include "macro.h"
#include "tmpdir.h"

#define PID  4242
#define TID  4243
#define TASK "proc/4242/task/4243"

static char *root;

static void write_file(const char *rel, const char *content) {
        char path[PATH_MAX];
        FILE *f;

        ck_assert_int_lt(snprintf(path, sizeof(path), "%s/%s", root, rel), (int)sizeof(path));
        *strrchr(path, '/') = '\0';
        mkdir_p(path);
        path[strlen(path)] = '/';
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(content, f), 0);
        ck_assert_int_eq(fclose(f), 0);
}

static void remove_file(const char *rel) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        ck_assert_int_eq(unlink(path), 0);
}

static void setup(void) {
        root = make_tmpdir_named("test-effect");
}

static void teardown(void) {
        rm_rf(root);
        root = mfree(root);
}

/* A stat line (comm with ") " in it) with starttime (field 22) and processor (field 39). */
static void write_stat(uint64_t starttime, unsigned cpu) {
        char line[1024];
        int k = snprintf(line, sizeof(line), "4243 (we) ird (x) S");

        for (unsigned field = 4; field <= 38; field++)
                if (field == 22)
                        k += snprintf(line + k, sizeof(line) - k, " %llu", (unsigned long long)starttime);
                else
                        k += snprintf(line + k, sizeof(line) - k, " %u", field);
        snprintf(line + k, sizeof(line) - k, " %u 0 0 0 0 0\n", cpu);
        write_file(TASK "/stat", line);
}

static void write_schedstat(uint64_t cpu_ns, uint64_t delay_ns, uint64_t slices) {
        char line[128];

        snprintf(
                line, sizeof(line), "%llu %llu %llu\n", (unsigned long long)cpu_ns,
                (unsigned long long)delay_ns, (unsigned long long)slices);
        write_file(TASK "/schedstat", line);
}

static void write_sched(uint64_t migrations, uint64_t involuntary) {
        char text[512];

        snprintf(
                text, sizeof(text),
                "worker (4243, #threads: 2)\n---------\n"
                "se.nr_migrations                             :  %llu\n"
                "nr_switches                                  :  999\n"
                "nr_involuntary_switches                      :  %llu\n",
                (unsigned long long)migrations, (unsigned long long)involuntary);
        write_file(TASK "/sched", text);
}

static void write_status(uint64_t involuntary) {
        char text[256];

        snprintf(
                text, sizeof(text),
                "Name:\tworker\nvoluntary_ctxt_switches:\t5\nnonvoluntary_ctxt_switches:\t%llu\n",
                (unsigned long long)involuntary);
        write_file(TASK "/status", text);
}

static CpuSet cpus_of(const char *list) {
        CpuSet s = {};

        ck_assert_int_eq(cpuset_parse_list(list, &s, NULL), 0);
        return s;
}

START_TEST(test_sample_full) {
        EffectSample s;

        write_stat(777, 3);
        write_schedstat(5000, 600, 7);
        write_sched(11, 4);
        write_status(99);
        ck_assert_int_eq(effect_sample_thread(root, PID, TID, NULL, &s), 0);
        ck_assert_uint_eq(s.starttime, 777);
        ck_assert_uint_eq(s.last_cpu, 3);
        ck_assert_uint_eq(s.cpu_ns, 5000);
        ck_assert_uint_eq(s.run_delay_ns, 600);
        ck_assert_uint_eq(s.timeslices, 7);
        ck_assert_uint_eq(s.migrations, 11);
        ck_assert_uint_eq(s.involuntary, 4); /* from sched, not status */
}
END_TEST

START_TEST(test_sample_no_sched) {
        _cleanup_(cpuset_donep) CpuSet cpus = cpus_of("2-3");
        EffectSample a, b;
        EffectTotals t = {};

        write_stat(777, 3);
        write_schedstat(5000, 600, 7);
        write_status(10);
        ck_assert_int_eq(effect_sample_thread(root, PID, TID, NULL, &a), 0);
        ck_assert_uint_eq(a.migrations, THREADSTAT_UNKNOWN);
        ck_assert_uint_eq(a.involuntary, 10);

        write_schedstat(8000, 700, 9);
        write_status(12);
        ck_assert_int_eq(effect_sample_thread(root, PID, TID, &a, &b), 0);
        effect_totals_add(&t, &a, &b, &cpus);
        ck_assert_uint_eq(t.cpu_ns, 3000);
        ck_assert_uint_eq(t.involuntary, 2);
        ck_assert(!t.has_migrations); /* absent, not 0 */
        ck_assert_uint_eq(t.migrations, 0);
}
END_TEST

START_TEST(test_sample_vanished) {
        EffectSample s, prev;

        ck_assert_int_eq(effect_sample_thread(root, PID, TID, NULL, &s), -ESRCH);

        write_stat(777, 3);
        write_schedstat(5000, 600, 7);
        write_sched(11, 4);
        ck_assert_int_eq(effect_sample_thread(root, PID, TID, NULL, &prev), 0);
        /* Gone between the schedstat and the stat read. */
        write_schedstat(6000, 600, 8);
        remove_file(TASK "/stat");
        ck_assert_int_eq(effect_sample_thread(root, PID, TID, &prev, &s), -ESRCH);
        remove_file(TASK "/schedstat");
        ck_assert_int_eq(effect_sample_thread(root, PID, TID, &prev, &s), -ESRCH);
}
END_TEST

START_TEST(test_sample_no_schedstat) {
        EffectSample s;

        write_stat(777, 3);
        write_sched(11, 4);
        ck_assert_int_eq(effect_sample_thread(root, PID, TID, NULL, &s), -EOPNOTSUPP);
}
END_TEST

START_TEST(test_sample_errors) {
        EffectSample s;

        ck_assert_int_eq(effect_sample_thread(root, 0, TID, NULL, &s), -EINVAL);
        ck_assert_int_eq(effect_sample_thread(root, PID, -1, NULL, &s), -EINVAL);
        write_stat(777, 3);
        write_sched(11, 4);
        write_file(TASK "/schedstat", "12 x 3\n");
        ck_assert_int_eq(effect_sample_thread(root, PID, TID, NULL, &s), -EBADMSG);
        write_schedstat(1, 2, 3);
        write_file(TASK "/stat", "4243 (no close paren S 1 2\n");
        ck_assert_int_eq(effect_sample_thread(root, PID, TID, NULL, &s), -EBADMSG);
}
END_TEST

/* The cheap path does not read stat or sched: with those unparsable, an unchanged thread still
 * samples, and a changed one does not. */
START_TEST(test_cheap_path_skips) {
        EffectSample a, b;

        write_stat(777, 3);
        write_schedstat(5000, 600, 7);
        write_sched(11, 4);
        ck_assert_int_eq(effect_sample_thread(root, PID, TID, NULL, &a), 0);

        write_file(TASK "/stat", "garbage\n");
        write_file(TASK "/sched", "se.nr_migrations : x\n");
        write_schedstat(5000, 900, 7); /* waited more, did not run */
        ck_assert_int_eq(effect_sample_thread(root, PID, TID, &a, &b), 0);
        ck_assert_uint_eq(b.starttime, 777);
        ck_assert_uint_eq(b.last_cpu, 3);
        ck_assert_uint_eq(b.migrations, 11);
        ck_assert_uint_eq(b.run_delay_ns, 900);

        /* prev == ret is allowed */
        ck_assert_int_eq(effect_sample_thread(root, PID, TID, &b, &b), 0);
        ck_assert_uint_eq(b.migrations, 11);

        write_schedstat(5001, 900, 7); /* one long timeslice still running: read */
        ck_assert_int_eq(effect_sample_thread(root, PID, TID, &a, &b), -EBADMSG);
        write_schedstat(5000, 900, 8);
        ck_assert_int_eq(effect_sample_thread(root, PID, TID, &a, &b), -EBADMSG);
}
END_TEST

START_TEST(test_totals_foreign) {
        _cleanup_(cpuset_donep) CpuSet cpus = cpus_of("2-3");
        EffectSample a = {
                .starttime = 5,
                .last_cpu = 2,
                .cpu_ns = 1000,
                .run_delay_ns = 10,
                .timeslices = 1,
                .migrations = 0,
                .involuntary = 0};
        EffectSample b = {
                .starttime = 5,
                .last_cpu = 3,
                .cpu_ns = 4000,
                .run_delay_ns = 30,
                .timeslices = 4,
                .migrations = 2,
                .involuntary = 1};
        EffectSample c = {
                .starttime = 5,
                .last_cpu = 0,
                .cpu_ns = 9000,
                .run_delay_ns = 30,
                .timeslices = 6,
                .migrations = 3,
                .involuntary = 1};
        EffectSample d = {
                .starttime = 5,
                .last_cpu = 3,
                .cpu_ns = 9500,
                .run_delay_ns = 30,
                .timeslices = 7,
                .migrations = 4,
                .involuntary = 1};
        EffectTotals t = {};

        effect_totals_add(&t, &a, &b, &cpus); /* placed: nothing foreign */
        ck_assert_uint_eq(t.cpu_ns, 3000);
        ck_assert_uint_eq(t.foreign_cpu_ns, 0);
        ck_assert_uint_eq(t.run_delay_ns, 20);
        ck_assert_uint_eq(t.timeslices, 3);
        ck_assert_uint_eq(t.migrations, 2);
        ck_assert(t.has_migrations);
        ck_assert_uint_eq(t.involuntary, 1);

        effect_totals_add(&t, &b, &c, &cpus); /* ended on CPU 0: foreign */
        ck_assert_uint_eq(t.foreign_cpu_ns, 5000);
        effect_totals_add(&t, &c, &d, &cpus); /* started on CPU 0: foreign */
        ck_assert_uint_eq(t.foreign_cpu_ns, 5500);
        ck_assert_uint_eq(t.cpu_ns, 8500);

        effect_totals_add(&t, &c, &d, NULL); /* no CPUs known: nothing foreign */
        ck_assert_uint_eq(t.foreign_cpu_ns, 5500);
        ck_assert_uint_eq(t.cpu_ns, 9000);
}
END_TEST

START_TEST(test_totals_baseline_and_reuse) {
        _cleanup_(cpuset_donep) CpuSet cpus = cpus_of("2-3");
        EffectSample a = {.starttime = 5, .last_cpu = 2, .cpu_ns = 1000, .timeslices = 1};
        EffectSample reused = {.starttime = 6, .last_cpu = 0, .cpu_ns = 7000000, .timeslices = 90};
        EffectTotals t = {};

        effect_totals_add(&t, NULL, &a, &cpus);    /* first sample: baseline only */
        effect_totals_add(&t, &a, &reused, &cpus); /* another thread under the same TID */
        ck_assert_uint_eq(t.cpu_ns, 0);
        ck_assert_uint_eq(t.foreign_cpu_ns, 0);
        ck_assert_uint_eq(t.timeslices, 0);
        ck_assert(!t.has_migrations);
}
END_TEST

START_TEST(test_totals_wrap) {
        EffectSample a = {
                .starttime = 5,
                .last_cpu = 2,
                .cpu_ns = 9000,
                .run_delay_ns = 500,
                .timeslices = 50,
                .migrations = 40,
                .involuntary = 30};
        EffectSample b = {
                .starttime = 5,
                .last_cpu = 2,
                .cpu_ns = 100,
                .run_delay_ns = 7,
                .timeslices = 2,
                .migrations = 1,
                .involuntary = 3};
        EffectTotals t = {};

        /* Counters smaller than before restarted: their whole value counts. */
        effect_totals_add(&t, &a, &b, NULL);
        ck_assert_uint_eq(t.cpu_ns, 100);
        ck_assert_uint_eq(t.run_delay_ns, 7);
        ck_assert_uint_eq(t.timeslices, 2);
        ck_assert_uint_eq(t.migrations, 1);
        ck_assert_uint_eq(t.involuntary, 3);
}
END_TEST

START_TEST(test_live_self) {
        EffectSample a, b;
        pid_t tid = (pid_t)syscall(SYS_gettid);
        volatile uint64_t x = 0;
        int r;

        r = effect_sample_thread(NULL, getpid(), tid, NULL, &a);
        if (r == -EOPNOTSUPP)
                return; /* no schedstat on this kernel: nothing live to compare */
        ck_assert_int_eq(r, 0);
        for (unsigned i = 0; i < 20000000; i++)
                x += i;
        ck_assert_int_eq(effect_sample_thread(NULL, getpid(), tid, &a, &b), 0);
        ck_assert_uint_eq(a.starttime, b.starttime);
        ck_assert_uint_gt(b.cpu_ns, a.cpu_ns);
}
END_TEST

static Suite *effect_suite(void) {
        Suite *s = suite_create("effect");
        TCase *tc = tcase_create("fixture");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_sample_full);
        tcase_add_test(tc, test_sample_no_sched);
        tcase_add_test(tc, test_sample_vanished);
        tcase_add_test(tc, test_sample_no_schedstat);
        tcase_add_test(tc, test_sample_errors);
        tcase_add_test(tc, test_cheap_path_skips);
        tcase_add_test(tc, test_totals_foreign);
        tcase_add_test(tc, test_totals_baseline_and_reuse);
        tcase_add_test(tc, test_totals_wrap);
        suite_add_tcase(s, tc);

        tc = tcase_create("live");
        tcase_add_test(tc, test_live_self);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        SRunner *sr = srunner_create(effect_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
