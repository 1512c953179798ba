/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Drift, on the real daemon with drift-interval: 100ms against real
 * processes: someone else re-pins a managed thread with sched_setaffinity(2) (what
 * `taskset -p` does);
 *  - on-drift: report logs it once per thread per change and counts it (DriftDetected), and
 *    leaves the thread alone;
 *  - on-drift: enforce puts the policy's mask back and counts it (DriftCorrections), and does
 *    the same for a scheduling state (a nice value) changed with setpriority(2);
 *  - on-drift: respect keeps the new mask and the process is no longer managed: gone from
 *    ListProcesses and ManagedProcesses, and not taken back by a reload's rescan.
 */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

static void write_settings(Harness *h, const char *text) {
        _cleanup_free_ char *path = NULL;
        FILE *f;

        ck_assert_int_ge(asprintf(&path, "%s/affinityd.yaml", harness_config_dir(h)), 0);
        f = fopen(path, "we");
        ck_assert_msg(f, "open %s: %s", path, strerror(errno));
        ck_assert_int_ge(fputs(text, f), 0);
        ck_assert_int_eq(fclose(f), 0);
}

/* A uint64 property of the Manager, read on a connection of its own. */
static uint64_t get_counter(Harness *h, const char *name) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus *b = NULL;
        uint64_t v = 0;
        int r;

        ck_assert_int_ge(sd_bus_new(&b), 0);
        ck_assert_int_ge(sd_bus_set_address(b, harness_bus_address(h)), 0);
        ck_assert_int_ge(sd_bus_set_bus_client(b, 1), 0);
        ck_assert_int_ge(sd_bus_start(b), 0);
        r = sd_bus_get_property_trivial(
                b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, name, &error, 't', &v);
        ck_assert_msg(r >= 0, "Get(%s) failed: %s: %s", name, strna(error.name), strna(error.message));
        sd_bus_error_free(&error);
        sd_bus_flush_close_unref(b);
        return v;
}

static void wait_counter_at_least(Harness *h, const char *name, uint64_t min) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC, v;

        while ((v = get_counter(h, name)) < min) {
                ck_assert_msg(
                        harness_now_usec() < deadline, "%s stays %" PRIu64 ", expected >= %" PRIu64, name, v,
                        min);
                usleep(20 * 1000);
        }
}

/* What taskset -p CPU TID does. */
static void repin(pid_t tid, unsigned cpu) {
        cpu_set_t set;

        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        ck_assert_msg(
                sched_setaffinity(tid, sizeof set, &set) == 0, "sched_setaffinity(%d): %s", (int)tid,
                strerror(errno));
}

static void assert_task_cpus(pid_t pid, pid_t tid, const char *cpus) {
        _cleanup_free_ char *now = harness_read_task_cpus(pid, tid);

        ck_assert_msg(now, "thread %d of %d is gone", (int)tid, (int)pid);
        ck_assert_msg(
                streq(now, cpus), "thread %d of %d has CPUs %s, expected %s", (int)tid, (int)pid, now, cpus);
}

/* The daemon placed on CPU 1 a process of two extra threads (started on 0-1); its tasks. */
static Child *start(Harness *h, const char *mode, TaskInfo **ret_tasks) {
        const char *name = harness_unique_name(h);
        Child *c;
        int n;

        write_settings(h, "drift-interval: 100ms\n");
        harness_write_policy(
                h, "10-drift.yaml",
                "policies:\n"
                "  - name: drifty\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n"
                "    on-drift: %s\n",
                name, mode);
        harness_start_daemon(h);
        c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = name,
                        .args = ARGS("-n", "2"),
                        .initial_cpus = "0-1",
                        .pipes = true});
        free(child_expect_line(c)); /* "ready N" */
        harness_wait_process_cpus(h, c->pid, "1", 3);
        harness_wait_listed(h, c->pid, "drifty");
        n = harness_read_tasks(c->pid, ret_tasks);
        ck_assert_int_eq(n, 3);
        return c;
}

static void wait_drift_log(Harness *h, pid_t pid, pid_t tid) {
        char needle[128];

        snprintf(needle, sizeof needle, "Drift: thread %d of ", (int)tid);
        harness_wait_log(h, needle);
        snprintf(needle, sizeof needle, "[%d] has CPUs 0 where policy drifty applied CPUs 1", (int)pid);
        harness_wait_log(h, needle);
}

START_TEST(test_drift_report) {
        Harness *h = harness_new();
        _cleanup_free_ TaskInfo *tasks = NULL;
        Child *c = start(h, "report", &tasks);
        pid_t other = tasks[0].tid == c->pid ? tasks[1].tid : tasks[0].tid;

        ck_assert_uint_eq(get_counter(h, "DriftDetected"), 0);

        repin(c->pid, 0);
        wait_drift_log(h, c->pid, c->pid);
        wait_counter_at_least(h, "DriftDetected", 1);

        /* A second drift, on another thread, is reported on its own: by then the first has been
         * re-checked at least once, and neither reported again nor undone. */
        repin(other, 0);
        wait_drift_log(h, c->pid, other);
        wait_counter_at_least(h, "DriftDetected", 2);
        assert_task_cpus(c->pid, c->pid, "0");
        assert_task_cpus(c->pid, other, "0");
        ck_assert_uint_eq(get_counter(h, "DriftDetected"), 2);
        ck_assert_uint_eq(get_counter(h, "DriftCorrections"), 0);
        harness_wait_listed(h, c->pid, "drifty"); /* still managed */
        child_kill(c);
}
END_TEST

START_TEST(test_drift_enforce) {
        Harness *h = harness_new();
        _cleanup_free_ TaskInfo *tasks = NULL;
        Child *c = start(h, "enforce", &tasks);

        ck_assert_uint_eq(get_counter(h, "DriftCorrections"), 0);
        repin(c->pid, 0);
        wait_drift_log(h, c->pid, c->pid);
        harness_wait_process_cpus(h, c->pid, "1", 3);
        wait_counter_at_least(h, "DriftCorrections", 1);
        ck_assert_uint_ge(get_counter(h, "DriftDetected"), 1);

        /* The same change again is a new drift, undone again. */
        repin(c->pid, 0);
        wait_counter_at_least(h, "DriftCorrections", 2);
        harness_wait_process_cpus(h, c->pid, "1", 3);
        ck_assert_uint_ge(get_counter(h, "DriftDetected"), 2);
        child_kill(c);
}
END_TEST

static int nice_of(pid_t tid) {
        int v;

        errno = 0;
        v = getpriority(PRIO_PROCESS, (id_t)tid);
        ck_assert_msg(errno == 0, "getpriority(%d): %s", (int)tid, strerror(errno));
        return v;
}

/* Scheduling state is checked too: a nice value changed behind the daemon's back is put back. */
START_TEST(test_drift_enforce_sched) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        uint64_t deadline;
        Child *c;

        write_settings(h, "drift-interval: 100ms\n");
        harness_write_policy(
                h, "10-drift.yaml",
                "policies:\n"
                "  - name: drifty\n"
                "    match: {comm: \"%s\"}\n"
                "    scheduler: {nice: 5}\n"
                "    on-drift: enforce\n",
                name);
        harness_start_daemon(h);
        c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads", .name = name, .args = ARGS("-n", "1"), .pipes = true});
        free(child_expect_line(c)); /* "ready N" */
        harness_wait_listed(h, c->pid, "drifty");
        deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        while (nice_of(c->pid) != 5) {
                ck_assert_msg(
                        harness_now_usec() < deadline, "nice of %d stays %d", (int)c->pid, nice_of(c->pid));
                usleep(20 * 1000);
        }

        ck_assert_int_eq(setpriority(PRIO_PROCESS, (id_t)c->pid, 12), 0);
        wait_counter_at_least(h, "DriftCorrections", 1);
        deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        while (nice_of(c->pid) != 5) {
                ck_assert_msg(
                        harness_now_usec() < deadline, "nice of %d stays %d", (int)c->pid, nice_of(c->pid));
                usleep(20 * 1000);
        }
        ck_assert_uint_ge(get_counter(h, "DriftDetected"), 1);
        ck_assert(harness_log_contains(h, "another scheduling state"));
        child_kill(c);
}
END_TEST

static bool listed(Harness *h, pid_t pid) {
        ProcessEntry *e = NULL;
        size_t n = harness_list_processes(h, &e);
        bool found = process_entries_find(e, n, pid) != NULL;

        process_entries_free(e, n);
        return found;
}

START_TEST(test_drift_respect) {
        Harness *h = harness_new();
        _cleanup_free_ TaskInfo *tasks = NULL;
        Child *c = start(h, "respect", &tasks);
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        pid_t other = tasks[0].tid == c->pid ? tasks[1].tid : tasks[0].tid;
        ManagerProps p = {};

        repin(c->pid, 0);
        wait_drift_log(h, c->pid, c->pid);
        while (listed(h, c->pid)) {
                ck_assert_msg(
                        harness_now_usec() < deadline, "process %d is still listed as managed", (int)c->pid);
                usleep(20 * 1000);
        }
        harness_get_props(h, &p);
        ck_assert_uint_eq(p.managed_processes, 0);
        manager_props_done(&p);
        assert_task_cpus(c->pid, c->pid, "0");
        assert_task_cpus(c->pid, other, "1");
        ck_assert_uint_ge(get_counter(h, "DriftDetected"), 1);
        ck_assert_uint_eq(get_counter(h, "DriftCorrections"), 0);

        /* A reload rescans /proc: the released process stays unmanaged, its masks as they are,
         * even a change made now. */
        repin(other, 0);
        ck_assert_int_ge(harness_reload(h, NULL), 0);
        ck_assert(!listed(h, c->pid));
        assert_task_cpus(c->pid, c->pid, "0");
        assert_task_cpus(c->pid, other, "0");
        child_kill(c);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-drift");

        harness_add_test(s, test_drift_report);
        harness_add_test(s, test_drift_enforce);
        harness_add_test(s, test_drift_enforce_sched);
        harness_add_test(s, test_drift_respect);
        return harness_main(s);
}
