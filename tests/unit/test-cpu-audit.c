/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the isolation audit (lib/cpu-audit.h) on fixture /proc trees built per test in a temp
 * dir: ROOT/proc/{stat,interrupts,softirqs} and ROOT/proc/PID/task/TID/stat rewritten between a
 * "before" and an "after" snapshot, and on the corpus's /proc/interrupts dumps.
 */

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu-audit.h"
#include "interrupts.h"
#include "macro.h"

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

static void remove_file(const char *rel) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        ck_assert_int_eq(unlink(path), 0);
}

/* ROOT/proc/PID/task/TID/stat with the fields the audit reads (proc(5) numbering). */
static void write_task(
        pid_t pid, pid_t tid, const char *comm, unsigned flags, unsigned long long utime,
        unsigned long long stime, unsigned long long starttime, unsigned cpu) {
        char rel[128], text[1024];

        snprintf(rel, sizeof(rel), "proc/%d/task/%d/stat", pid, tid);
        snprintf(
                text, sizeof(text),
                /* fields 1-22, vsize rss rsslim, 26-37 zero, exit_signal (38), processor (39), 40, 41 */
                "%d (%s) S 1 %d %d 0 -1 %u 0 0 0 0 %llu %llu 0 0 20 0 1 0 %llu 100 10 1 "
                "0 0 0 0 0 0 0 0 0 0 0 0 17 %u 0 0\n",
                tid, comm, pid, pid, flags, utime, stime, starttime, cpu);
        write_file(rel, text);
}

static void write_stat(unsigned long long cpu1_user, unsigned long long cpu1_irq) {
        char text[512];

        snprintf(
                text, sizeof(text),
                "cpu  0 0 0 0 0 0 0 0 0 0\n"
                "cpu0 500 0 100 9000 0 0 0 0 0 0\n"
                "cpu1 %llu 0 100 9000 0 %llu 7 0 0 0\n"
                "intr 0\n",
                cpu1_user, cpu1_irq);
        write_file("proc/stat", text);
}

static void write_interrupts(unsigned long long irq38_cpu1) {
        char text[512];

        snprintf(
                text, sizeof(text),
                "           CPU0       CPU1\n"
                "  1:          9          0   IO-APIC   1-edge      i8042\n"
                " 38:        212   %8llu   PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n"
                "LOC:        100        200   Local timer interrupts\n",
                irq38_cpu1);
        write_file("proc/interrupts", text);
}

static void write_softirqs(unsigned long long net_rx_cpu1) {
        char text[512];

        snprintf(
                text, sizeof(text),
                "                    CPU0       CPU1\n"
                "          HI:          0          0\n"
                "       TIMER:         10         20\n"
                "      NET_RX:          5 %10llu\n",
                net_rx_cpu1);
        write_file("proc/softirqs", text);
}

static uint64_t ns(uint64_t ticks) {
        return ticks * 1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK);
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        return remove(path);
}

static void setup(void) {
        char tmpl[] = "/tmp/test-cpu-audit-XXXXXX";
        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        root = strdup(tmpl);
        ck_assert_ptr_nonnull(root);
}

static void teardown(void) {
        (void)nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        root = mfree(root);
}

/* A start time later than any boot of this machine: a task born during the window. */
#define BORN_LATER 0x7fffffffffffULL

/* The "before" tree: owner 100, intruder 200 (foo.service), kthread 2, TID 301 of process 300
 * started at tick 50, all on CPU 1; an idle task 500 on CPU 0. */
static void before_tree(void) {
        write_stat(1000, 40);
        write_interrupts(448);
        write_softirqs(30);
        write_task(100, 100, "db", 0, 10, 0, 10, 1);
        write_task(200, 200, "stress-ng", 0, 5, 0, 20, 1);
        write_file("proc/200/cgroup", "0::/system.slice/foo.service\n");
        write_task(2, 2, "ksoftirqd/1", 0x00200000U, 0, 1, 1, 1);
        write_task(300, 301, "victim", 0, 1000, 0, 50, 1);
        write_task(500, 500, "idle", 0, 1, 1, 5, 0);
}

/* The "after" tree: CPU 1 gained 300 ticks of busy time (200 user, 100 irq); owner +50,
 * intruder +100, kthread +10, TID 301 reused by a task started at tick 60 (20 ticks: not the
 * victim's), task 400 born in the window with 30 ticks; IRQ 38 fired 1200 times on CPU 1. */
static void after_tree(void) {
        write_stat(1200, 140);
        write_interrupts(448 + 1200);
        write_softirqs(30 + 77);
        write_task(100, 100, "db", 0, 40, 20, 10, 1);
        write_task(200, 200, "stress-ng", 0, 105, 0, 20, 1);
        write_task(2, 2, "ksoftirqd/1", 0x00200000U, 0, 11, 1, 1);
        write_task(300, 301, "newcomer", 0, 20, 0, 60, 1);
        write_task(400, 400, "shortjob", 0, 30, 0, BORN_LATER, 1);
        write_task(500, 500, "idle", 0, 900, 1, 5, 0);
}

static CpuAuditReport *audit(
        CpuAuditMode mode, const pid_t *owners, size_t n_owners, size_t max_tasks, const char *cpus_text,
        void (*between)(void)) {
        _cleanup_(cpu_audit_snapshot_freep) CpuAuditSnapshot *a = NULL, *b = NULL;
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL;
        CpuAuditReport *r = NULL;

        ck_assert_int_eq(cpuset_parse_list(cpus_text, &cpus, NULL), 0);
        ck_assert_int_eq(cpu_audit_snapshot(root, &cpus, mode, owners, n_owners, max_tasks, &a), 0);
        between();
        ck_assert_int_eq(cpu_audit_snapshot(root, &cpus, mode, owners, n_owners, max_tasks, &b), 0);
        ck_assert_int_eq(cpu_audit_diff(a, b, &r), 0);
        return r;
}

static void exclusive_trees(void) {
        after_tree();
}

START_TEST(test_exclusive) {
        const pid_t owners[] = {100};
        _cleanup_(cpu_audit_report_freep) CpuAuditReport *r = NULL;
        const CpuAuditCpu *c;

        before_tree();
        r = audit(CPU_AUDIT_EXCLUSIVE, owners, 1, 8, "1", exclusive_trees);
        ck_assert_uint_eq(r->n_cpus, 1);
        c = &r->cpus[0];
        ck_assert_uint_eq(c->cpu, 1);
        ck_assert(c->online);
        ck_assert_uint_eq(c->busy_ns, ns(300));
        ck_assert_uint_eq(c->irq_ns, ns(100));
        ck_assert_uint_eq(c->owners_ns, ns(50));
        /* stress-ng 100, shortjob 30 (born), ksoftirqd 10; TID 301's 20 are not the victim's
         * and it was not born in the window: unknown, so in the unnamed time. */
        ck_assert_uint_eq(c->n_tasks, 3);
        ck_assert_str_eq(c->tasks[0].comm, "stress-ng");
        ck_assert_int_eq(c->tasks[0].pid, 200);
        ck_assert_uint_eq(c->tasks[0].cpu_ns, ns(100));
        ck_assert_str_eq(c->tasks[0].unit, "foo.service");
        ck_assert(!c->tasks[0].kthread);
        ck_assert_str_eq(c->tasks[1].comm, "shortjob");
        ck_assert_uint_eq(c->tasks[1].cpu_ns, ns(30));
        ck_assert_str_eq(c->tasks[2].comm, "ksoftirqd/1");
        ck_assert(c->tasks[2].kthread);
        ck_assert_ptr_null(c->tasks[2].unit);
        for (size_t i = 0; i < c->n_tasks; i++)
                ck_assert_int_ne(c->tasks[i].tid, 301);
        ck_assert_uint_eq(c->n_other_tasks, 0);
        ck_assert_uint_eq(c->unnamed_ns, ns(300 - 50 - 100 - 30 - 10));
        ck_assert_uint_eq(c->n_irqs, 1);
        ck_assert_uint_eq(c->irqs[0].irq, 38);
        ck_assert_str_eq(c->irqs[0].actions, "virtio2-input.0");
        ck_assert_uint_eq(c->irqs[0].count, 1200);
        ck_assert_uint_eq(c->irq_count, 1200);
        ck_assert_uint_eq(c->n_softirqs, 1);
        ck_assert_str_eq(c->softirqs[0].name, "NET_RX");
        ck_assert_uint_eq(c->softirqs[0].count, 77);
        ck_assert(cpu_audit_cpu_intruded(r, c, 0));
}
END_TEST

START_TEST(test_cap_aggregates) {
        const pid_t owners[] = {100};
        _cleanup_(cpu_audit_report_freep) CpuAuditReport *r = NULL;
        const CpuAuditCpu *c;

        before_tree();
        r = audit(CPU_AUDIT_EXCLUSIVE, owners, 1, 1, "1", exclusive_trees);
        c = &r->cpus[0];
        ck_assert_uint_eq(c->n_tasks, 1);
        ck_assert_str_eq(c->tasks[0].comm, "stress-ng");
        ck_assert_uint_eq(c->n_other_tasks, 2);
        ck_assert_uint_eq(c->other_ns, ns(40));
        ck_assert_uint_eq(c->unnamed_ns, ns(300 - 50 - 100 - 40));
}
END_TEST

START_TEST(test_reserve) {
        /* On the reserve the managed process 100 is the intruder; the rest belongs there. */
        const pid_t managed[] = {100};
        _cleanup_(cpu_audit_report_freep) CpuAuditReport *r = NULL;
        const CpuAuditCpu *c;

        before_tree();
        r = audit(CPU_AUDIT_RESERVE, managed, 1, 8, "1", exclusive_trees);
        c = &r->cpus[0];
        ck_assert_uint_eq(c->n_tasks, 1);
        ck_assert_int_eq(c->tasks[0].pid, 100);
        ck_assert_uint_eq(c->tasks[0].cpu_ns, ns(50));
        ck_assert_uint_eq(c->owners_ns, ns(140));
        /* IRQs are information only on the reserve. */
        ck_assert_uint_eq(c->irq_count, 1200);
        ck_assert(cpu_audit_cpu_intruded(r, c, 0));
        ck_assert(!cpu_audit_cpu_intruded(r, c, ns(51)));
}
END_TEST

static void no_change(void) {
}

START_TEST(test_quiet) {
        const pid_t owners[] = {100};
        _cleanup_(cpu_audit_report_freep) CpuAuditReport *r = NULL;

        before_tree();
        r = audit(CPU_AUDIT_EXCLUSIVE, owners, 1, 8, "1", no_change);
        ck_assert_uint_eq(r->cpus[0].n_tasks, 0);
        ck_assert_uint_eq(r->cpus[0].busy_ns, 0);
        ck_assert_uint_eq(r->cpus[0].n_irqs, 0);
        ck_assert(!cpu_audit_cpu_intruded(r, &r->cpus[0], 0));
}
END_TEST

/* Counters that went down (wrap, a CPU gone and back) count as zero, not as 2^64. */
static void counters_down(void) {
        write_stat(10, 0);
        write_interrupts(1);
        write_task(200, 200, "stress-ng", 0, 1, 0, 20, 1);
}

START_TEST(test_wrap) {
        const pid_t owners[] = {100};
        _cleanup_(cpu_audit_report_freep) CpuAuditReport *r = NULL;

        before_tree();
        r = audit(CPU_AUDIT_EXCLUSIVE, owners, 1, 8, "1", counters_down);
        ck_assert_uint_eq(r->cpus[0].busy_ns, 0);
        ck_assert_uint_eq(r->cpus[0].n_irqs, 0);
        ck_assert_uint_eq(r->cpus[0].n_tasks, 0);
}
END_TEST

/* CPU 2 is offline (no cpu2 line) before; after it came online it starts from zero. */
static void cpu2_online(void) {
        write_file(
                "proc/stat",
                "cpu  0 0 0 0\ncpu0 1 0 0 0 0 0 0 0\ncpu1 1000 0 100 9000 0 40 7 0\n"
                "cpu2 3 0 2 100 0 0 0 0\n");
}

START_TEST(test_offline_then_online) {
        _cleanup_(cpu_audit_report_freep) CpuAuditReport *r = NULL;

        before_tree();
        r = audit(CPU_AUDIT_EXCLUSIVE, NULL, 0, 8, "1-2", cpu2_online);
        ck_assert_uint_eq(r->n_cpus, 2);
        ck_assert_uint_eq(r->cpus[1].cpu, 2);
        ck_assert(!r->cpus[1].online);
        ck_assert_uint_eq(r->cpus[1].busy_ns, ns(5));
        ck_assert_uint_eq(r->cpus[1].n_irqs, 0);
}
END_TEST

/* A task that can't be read (hidepid=, EACCES) is counted, not named. */
static void unreadable(void) {
        char path[PATH_MAX];

        write_task(600, 600, "hidden", 0, 1, 1, BORN_LATER, 1);
        snprintf(path, sizeof(path), "%s/proc/600/task/600/stat", root);
        ck_assert_int_eq(chmod(path, 0), 0);
}

START_TEST(test_unreadable) {
        _cleanup_(cpu_audit_report_freep) CpuAuditReport *r = NULL;

        if (geteuid() == 0)
                return; /* root reads a mode-0 file: nothing to hide */
        before_tree();
        r = audit(CPU_AUDIT_EXCLUSIVE, NULL, 0, 8, "1", unreadable);
        ck_assert_uint_eq(r->n_unreadable, 1);
        for (size_t i = 0; i < r->cpus[0].n_tasks; i++)
                ck_assert_str_ne(r->cpus[0].tasks[i].comm, "hidden");
}
END_TEST

/* Missing counters files: nothing of that kind, no error. */
static void files_gone(void) {
        remove_file("proc/interrupts");
        remove_file("proc/softirqs");
}

START_TEST(test_files_missing) {
        _cleanup_(cpu_audit_report_freep) CpuAuditReport *r = NULL;

        before_tree();
        r = audit(CPU_AUDIT_EXCLUSIVE, NULL, 0, 8, "1", files_gone);
        ck_assert_uint_eq(r->cpus[0].n_irqs, 0);
        ck_assert_uint_eq(r->cpus[0].n_softirqs, 0);
}
END_TEST

/* One walk for two sets: CPU 1 exclusive to 100, CPU 0 the reserve with 500 managed; the same
 * reports as one snapshot each. */
START_TEST(test_many) {
        const pid_t owners[] = {100}, managed[] = {500};
        _cleanup_cpuset_ CpuSet one = CPUSET_NULL, zero = CPUSET_NULL;
        CpuAuditSnapshot *a[2] = {}, *b[2] = {};
        CpuAuditReport *r[2] = {};
        CpuAuditRequest q[2];

        ck_assert_int_eq(cpuset_add(&one, 1), 0);
        ck_assert_int_eq(cpuset_add(&zero, 0), 0);
        q[0] = (CpuAuditRequest){
                .cpus = &one,
                .mode = CPU_AUDIT_EXCLUSIVE,
                .owner_pids = owners,
                .n_owners = 1,
                .max_tasks = 8};
        q[1] = (CpuAuditRequest){
                .cpus = &zero,
                .mode = CPU_AUDIT_RESERVE,
                .owner_pids = managed,
                .n_owners = 1,
                .max_tasks = 8};
        before_tree();
        ck_assert_int_eq(cpu_audit_snapshot_many(root, q, 2, a), 0);
        after_tree();
        ck_assert_int_eq(cpu_audit_snapshot_many(root, q, 2, b), 0);
        for (size_t i = 0; i < 2; i++)
                ck_assert_int_eq(cpu_audit_diff(a[i], b[i], &r[i]), 0);
        /* CPU 1: as test_exclusive. */
        ck_assert_uint_eq(r[0]->cpus[0].cpu, 1);
        ck_assert_uint_eq(r[0]->cpus[0].n_tasks, 3);
        ck_assert_uint_eq(r[0]->cpus[0].owners_ns, ns(50));
        /* CPU 0: the managed task 500 ran 899 ticks on the reserve. */
        ck_assert_uint_eq(r[1]->mode, CPU_AUDIT_RESERVE);
        ck_assert_uint_eq(r[1]->cpus[0].cpu, 0);
        ck_assert_uint_eq(r[1]->cpus[0].n_tasks, 1);
        ck_assert_int_eq(r[1]->cpus[0].tasks[0].pid, 500);
        ck_assert_uint_eq(r[1]->cpus[0].tasks[0].cpu_ns, ns(899));
        for (size_t i = 0; i < 2; i++) {
                cpu_audit_report_free(r[i]);
                cpu_audit_snapshot_free(a[i]);
                cpu_audit_snapshot_free(b[i]);
        }
        ck_assert_int_eq(cpu_audit_snapshot_many(root, q, 0, a), -EINVAL);
}
END_TEST

START_TEST(test_invalid) {
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL, none = CPUSET_NULL;
        const pid_t unsorted[] = {5, 3};
        CpuAuditSnapshot *s = NULL;

        ck_assert_int_eq(cpuset_add(&cpus, 1), 0);
        ck_assert_int_eq(cpu_audit_snapshot(root, &none, CPU_AUDIT_EXCLUSIVE, NULL, 0, 8, &s), -EINVAL);
        ck_assert_int_eq(cpu_audit_snapshot(root, &cpus, CPU_AUDIT_EXCLUSIVE, NULL, 0, 0, &s), -EINVAL);
        ck_assert_int_eq(cpu_audit_snapshot(root, &cpus, CPU_AUDIT_EXCLUSIVE, unsorted, 2, 8, &s), -EINVAL);
        ck_assert_ptr_null(s);
}
END_TEST

/* The IRQ deltas on a real dump of the corpus: the same dump twice is no IRQ at all; the dump
 * against an empty table gives each IRQ its whole count on that CPU, with its action names. */
START_TEST(test_corpus_interrupts) {
        char src[PATH_MAX], cmd[PATH_MAX * 3];
        _cleanup_(cpu_audit_snapshot_freep) CpuAuditSnapshot *a = NULL, *b = NULL;
        _cleanup_(cpu_audit_report_freep) CpuAuditReport *r = NULL;
        _cleanup_cpuset_ CpuSet cpus = CPUSET_NULL;
        _cleanup_(interrupt_table_freep) InterruptTable *t = NULL;
        const char *dir = getenv("AFFINITYD_CORPUS");
        uint64_t all = 0;

        if (!dir)
                return; /* run outside meson test: no corpus given */
        snprintf(src, sizeof(src), "%s/interrupts/rbench-interrupts-40cpu-xeon-ixgbe.txt", dir);
        ck_assert_msg(access(src, R_OK) == 0, "%s: %s", src, strerror(errno));
        write_file("proc/interrupts", "CPU0\n");
        ck_assert_int_eq(cpuset_parse_list("0-39", &cpus, NULL), 0);
        ck_assert_int_eq(cpu_audit_snapshot(root, &cpus, CPU_AUDIT_EXCLUSIVE, NULL, 0, 4, &a), 0);
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s/proc/interrupts'", src, root);
        ck_assert_int_eq(system(cmd), 0);
        ck_assert_int_eq(cpu_audit_snapshot(root, &cpus, CPU_AUDIT_EXCLUSIVE, NULL, 0, 4, &b), 0);
        ck_assert_int_eq(cpu_audit_diff(a, b, &r), 0);
        ck_assert_uint_eq(r->n_cpus, 40);
        /* Against the parser's own reading of the dump: each CPU's IRQ count is the sum of its
         * numeric lines, each IRQ there with its action names, most interrupts first. */
        ck_assert_int_eq(interrupts_read(src, &t, NULL), 0);
        for (size_t i = 0; i < r->n_cpus; i++) {
                const CpuAuditCpu *c = &r->cpus[i];
                uint64_t total = 0;

                for (size_t k = 0; k < t->n_lines; k++)
                        if (t->lines[k].numeric)
                                total += interrupt_line_count(t, &t->lines[k], c->cpu, NULL);
                ck_assert_uint_eq(c->irq_count, total);
                for (size_t j = 0; j < c->n_irqs; j++) {
                        const InterruptLine *l = interrupt_table_find(t, c->irqs[j].irq);

                        ck_assert_ptr_nonnull(l);
                        ck_assert_str_eq(c->irqs[j].actions, l->actions);
                        ck_assert_uint_eq(c->irqs[j].count, interrupt_line_count(t, l, c->cpu, NULL));
                        if (j > 0)
                                ck_assert_uint_ge(c->irqs[j - 1].count, c->irqs[j].count);
                }
                all += c->irq_count;
        }
        ck_assert_uint_gt(all, 0);
        r = cpu_audit_report_free(r);
        ck_assert_int_eq(cpu_audit_diff(b, b, &r), 0);
        for (size_t i = 0; i < r->n_cpus; i++)
                ck_assert_uint_eq(r->cpus[i].n_irqs, 0);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("cpu-audit");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_exclusive);
        tcase_add_test(tc, test_cap_aggregates);
        tcase_add_test(tc, test_reserve);
        tcase_add_test(tc, test_quiet);
        tcase_add_test(tc, test_wrap);
        tcase_add_test(tc, test_offline_then_online);
        tcase_add_test(tc, test_unreadable);
        tcase_add_test(tc, test_files_missing);
        tcase_add_test(tc, test_invalid);
        tcase_add_test(tc, test_many);
        tcase_add_test(tc, test_corpus_interrupts);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        SRunner *sr = srunner_create(suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
