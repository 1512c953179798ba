/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Placement and the task's cgroup cpuset, on the real daemon with default settings (no
 * drift-interval:) against real processes in a v1 cpuset cgroup of this run:
 *  - a cpuset write that resets the tasks of the cgroup to the cpuset's CPUs (what Linux < 6.2
 *    does on cgroup v2, and systemd's AllowedCPUs= triggers) is repaired within the failure
 *    bound, whatever on-drift: says. This kernel keeps the requested mask itself, so the test
 *    does the kernel's part: it sets the threads to the cpuset's CPUs, then writes cpuset.cpus;
 *  - Rescan compares with what the kernel reports now: a thread reset to the cpuset's CPUs is
 *    written again, one moved elsewhere by someone (on-drift: report) is left as it is;
 *  - a process whose cgroup allows none of the policy's CPUs is a placement failure, not a
 *    placement: logged once, not again on a rescan, a reload or a restart of the daemon, and
 *    explained; when the cgroup allows the CPUs again a rescan places it;
 *  - on-drift: enforce that the narrowed cpuset refuses says why, not a bare errno.
 * The VM lane (tests/vm) checks the same on a kernel that really resets (Debian 12's 6.1).
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

#define CPUSET_ROOT "/sys/fs/cgroup/cpuset"
#define xasprintf   harness_asprintf

/* The cpuset cgroup of this run, named in main() before the tests fork. */
static char cgroup_name[64];

static char *cgroup_file(const char *file) {
        return xasprintf("%s/%s/%s", CPUSET_ROOT, cgroup_name, file);
}

static void set_cgroup_cpus(const char *cpus) {
        _cleanup_free_ char *path = cgroup_file("cpuset.cpus");

        harness_write_text(path, cpus);
}

/* A cpuset cgroup of CPUs cpus (node 0's memory) holding pid. */
static void make_cgroup(const char *cpus, pid_t pid) {
        _cleanup_free_ char *dir = xasprintf("%s/%s", CPUSET_ROOT, cgroup_name), *mems = NULL, *procs = NULL,
                            *text = NULL;

        ck_assert_msg(mkdir(dir, 0755) >= 0 || errno == EEXIST, "mkdir %s: %s", dir, strerror(errno));
        mems = cgroup_file("cpuset.mems");
        harness_write_text(mems, "0");
        set_cgroup_cpus(cpus);
        procs = cgroup_file("cgroup.procs");
        text = xasprintf("%d", (int)pid);
        harness_write_text(procs, text);
}

static void remove_cgroup(void) {
        char dir[PATH_MAX];

        snprintf(dir, sizeof dir, "%s/%s", CPUSET_ROOT, cgroup_name);
        for (int i = 0; i < 500 && rmdir(dir) < 0 && errno == EBUSY; i++)
                usleep(10 * 1000);
}

static Child *spawn(Harness *h, const char *name) {
        Child *c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = name,
                        .args = ARGS("-n", "2"),
                        .initial_cpus = "0-1",
                        .pipes = true});

        free(child_expect_line(c)); /* "ready N" */
        return c;
}

/* Every thread of pid to cpus, as the kernel does on a cpuset change (or as taskset -p does). */
static void set_all_threads(pid_t pid, const char *cpus) {
        _cleanup_free_ TaskInfo *tasks = NULL;
        int n = harness_read_tasks(pid, &tasks);

        ck_assert_int_ge(n, 1);
        for (int i = 0; i < n; i++) {
                cpu_set_t set;
                unsigned a, b;

                CPU_ZERO(&set);
                if (sscanf(cpus, "%u-%u", &a, &b) != 2)
                        b = a = (unsigned)atoi(cpus);
                for (unsigned cpu = a; cpu <= b; cpu++)
                        CPU_SET(cpu, &set);
                ck_assert_msg(
                        sched_setaffinity(tasks[i].tid, sizeof set, &set) == 0, "sched_setaffinity(%d): %s",
                        (int)tasks[i].tid, strerror(errno));
        }
}

/* How often needle appears in the daemon's log (all of its runs in this test). */
static unsigned log_count(Harness *h, const char *needle) {
        _cleanup_free_ char *path = xasprintf("%s/affinityd.log", harness_dir(h));
        _cleanup_free_ char *text = NULL;
        unsigned n = 0;
        FILE *f = fopen(path, "re");
        size_t size = 0;

        if (!f)
                return 0;
        ck_assert_int_ge(getdelim(&text, &size, '\0', f), 0);
        fclose(f);
        for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

static void rescan(Harness *h) {
        _cleanup_free_ char *out = NULL, *err = NULL;
        int r = harness_run_ctl(h, &out, &err, "rescan", NULL);

        ck_assert_msg(r == 0, "affinityctl rescan exited %d: %s", r, strna(err));
}

static void write_cpu1_policy(Harness *h, const char *name) {
        harness_write_policy(
                h, "10-cg.yaml",
                "policies:\n"
                "  - name: cg\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n",
                name);
}

/* What the kernel does on Linux < 6.2 when the cgroup's cpuset.cpus is written: every thread to
 * the cpuset's CPUs (0-1), in that write. Then the daemon must put them back on CPU 1. */
static void reset_and_expect_repair(Harness *h, pid_t pid) {
        set_all_threads(pid, "0-1");
        set_cgroup_cpus("0-1");
        harness_wait_process_cpus(h, pid, "1", 3);
}

/* Stops the daemon, kills c, removes the cgroup. */
static void finish(Harness *h, Child *c) {
        harness_stop_daemon(h);
        child_kill(c);
        remove_cgroup();
}

/* The kernel resets the cgroup's tasks to its cpuset's CPUs: put back without drift-interval:. */
START_TEST(test_cgroup_reset_repaired) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        ManagerProps before = {}, after = {};
        Child *c;

        write_cpu1_policy(h, name);
        c = spawn(h, name);
        make_cgroup("0-1", c->pid);
        harness_start_daemon(h);
        harness_wait_process_cpus(h, c->pid, "1", 3);
        harness_get_props(h, &before);

        reset_and_expect_repair(h, c->pid);
        harness_wait_log(h, "taken for the kernel's reset after a cpuset change");
        harness_get_props(h, &after);
        /* A repair is neither a new placement nor a failure. */
        ck_assert_uint_eq(after.processes_placed, before.processes_placed);
        ck_assert_uint_eq(after.placement_failures, before.placement_failures);
        manager_props_done(&before);
        manager_props_done(&after);

        finish(h, c);
}
END_TEST

/* Rescan asks the kernel: a reset is repaired, another drift (on-drift: report) left alone. */
START_TEST(test_cgroup_rescan_verifies) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ TaskInfo *tasks = NULL;
        _cleanup_free_ char *cpus = NULL;
        cpu_set_t set;
        Child *c;
        int n;

        write_cpu1_policy(h, name);
        c = spawn(h, name);
        make_cgroup("0-1", c->pid);
        harness_start_daemon(h);
        harness_wait_process_cpus(h, c->pid, "1", 3);

        /* No cgroup write: only the rescan can find it. */
        set_all_threads(c->pid, "0-1");
        rescan(h);
        harness_assert_process_cpus_now(c->pid, "1", 3);

        /* Someone pins one thread to CPU 0: not the cpuset's CPUs, so not a reset. */
        n = harness_read_tasks(c->pid, &tasks);
        ck_assert_int_eq(n, 3);
        CPU_ZERO(&set);
        CPU_SET(0, &set);
        ck_assert_int_eq(sched_setaffinity(tasks[1].tid, sizeof set, &set), 0);
        rescan(h);
        cpus = harness_read_task_cpus(c->pid, tasks[1].tid);
        ck_assert_msg(cpus && streq(cpus, "0"), "a drifted thread (on-drift: report) was moved to %s", cpus);

        finish(h, c);
}
END_TEST

/* A cgroup that allows none of the policy's CPUs: one failure, one log line, explained. */
START_TEST(test_cgroup_refusal_once) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *needle = NULL, *out = NULL, *err = NULL, *pid_arg = NULL;
        ManagerProps p = {};
        unsigned ready;
        Child *c;
        int r;

        write_cpu1_policy(h, name);
        c = spawn(h, name);
        make_cgroup("0", c->pid);
        needle = xasprintf("Cannot place %s[%d]", name, (int)c->pid);
        pid_arg = xasprintf("%d", (int)c->pid);

        harness_start_daemon(h);
        harness_wait_log(h, needle);
        harness_assert_process_cpus_now(c->pid, "0", 3);
        harness_get_props(h, &p);
        ck_assert_uint_eq(p.processes_placed, 0);
        ck_assert_uint_eq(p.placement_failures, 1);
        manager_props_done(&p);

        rescan(h);
        harness_sighup_reload(h);
        rescan(h);
        ck_assert_uint_eq(log_count(h, needle), 1);
        harness_get_props(h, &p);
        ck_assert_uint_eq(p.processes_placed, 0);
        ck_assert_uint_eq(p.placement_failures, 1);
        manager_props_done(&p);

        r = harness_run_ctl(h, &out, &err, "explain", pid_arg, NULL);
        ck_assert_msg(r == 0, "affinityctl explain exited %d: %s", r, strna(err));
        ck_assert_msg(
                strstr(out, "not placed:") && strstr(out, "cgroup allows 0"),
                "explain does not say why it is not placed:\n%s", out);

        /* A restart reads the state file: the same refusal is not logged again. */
        harness_stop_daemon(h);
        harness_start_daemon(h);
        ready = harness_ready_count(h);
        ck_assert_uint_ge(ready, 1);
        rescan(h);
        ck_assert_uint_eq(log_count(h, needle), 1);
        harness_get_props(h, &p);
        ck_assert_uint_eq(p.processes_placed, 0);
        ck_assert_uint_eq(p.placement_failures, 1);
        manager_props_done(&p);

        /* The cgroup allows CPU 1 again: placed, and only now counted as placed. */
        set_cgroup_cpus("0-1");
        rescan(h);
        harness_wait_process_cpus(h, c->pid, "1", 3);
        harness_get_props(h, &p);
        ck_assert_uint_eq(p.processes_placed, 1);
        manager_props_done(&p);

        finish(h, c);
}
END_TEST

/* A cgroup removed and made again under the same name (systemd does it at every restart of a
 * unit) is watched again for its new processes. */
START_TEST(test_cgroup_recreated_watched) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        Child *a, *b;

        write_cpu1_policy(h, name);
        harness_start_daemon(h);
        a = spawn(h, name);
        make_cgroup("0-1", a->pid);
        rescan(h); /* placed from within the cgroup: watched */
        harness_wait_process_cpus(h, a->pid, "1", 3);
        child_kill(a);
        remove_cgroup();

        b = spawn(h, name);
        make_cgroup("0-1", b->pid);
        rescan(h);
        harness_wait_process_cpus(h, b->pid, "1", 3);
        reset_and_expect_repair(h, b->pid);

        finish(h, b);
}
END_TEST

/* A burst of cpuset writes that never pauses can't hold the check back: the thread is put back
 * while the writes go on (the bound, 1 s after the first, well inside the burst's 5 s). */
START_TEST(test_cgroup_endless_burst) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *cpus = NULL;
        bool repaired = false;
        uint64_t end;
        Child *c;

        write_cpu1_policy(h, name);
        c = spawn(h, name);
        make_cgroup("0-1", c->pid);
        harness_start_daemon(h);
        harness_wait_process_cpus(h, c->pid, "1", 3);

        set_all_threads(c->pid, "0-1");
        end = harness_now_usec() + 5 * 1000 * 1000;
        while (!repaired && harness_now_usec() < end) {
                set_cgroup_cpus("0-1");
                usleep(50 * 1000);
                cpus = mfree(cpus);
                cpus = harness_read_task_cpus(c->pid, c->pid);
                repaired = cpus && streq(cpus, "1");
        }
        ck_assert_msg(repaired, "still on %s after 5 s of cpuset writes 50 ms apart", strna(cpus));

        finish(h, c);
}
END_TEST

/* A placed process moved into another cgroup: the next check watches that one too. */
START_TEST(test_cgroup_moved_watched) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        Child *c;

        write_cpu1_policy(h, name);
        harness_start_daemon(h);
        c = spawn(h, name);
        harness_wait_process_cpus(h, c->pid, "1", 3);
        make_cgroup("0-1", c->pid); /* moved in after its placement */
        rescan(h);
        reset_and_expect_repair(h, c->pid);

        finish(h, c);
}
END_TEST

/* on-drift: enforce after the cpuset narrowed to none of the policy's CPUs: the message says why. */
START_TEST(test_cgroup_enforce_explains) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *settings = harness_asprintf("%s/affinityd.yaml", harness_config_dir(h));
        Child *c;

        harness_write_text(settings, "drift-interval: 100ms\n");
        harness_write_policy(
                h, "10-cg.yaml",
                "policies:\n"
                "  - name: cg\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n"
                "    on-drift: enforce\n",
                name);
        c = spawn(h, name);
        make_cgroup("0-1", c->pid);
        harness_start_daemon(h);
        harness_wait_process_cpus(h, c->pid, "1", 3);

        /* Someone moves the threads, and the cpuset then leaves none of CPU 1. */
        set_all_threads(c->pid, "0");
        set_cgroup_cpus("0");
        harness_wait_log(h, "Cannot put back the placement of thread");
        harness_wait_log(h, "cgroup allows 0 (its cpuset changed)");
        ck_assert(!harness_log_contains(h, "Failed to put back the placement"));

        finish(h, c);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-cgroup");
        int r;

        if (access(CPUSET_ROOT "/cpuset.cpus", F_OK) < 0) {
                printf("no v1 cpuset hierarchy at %s: skipping\n", CPUSET_ROOT);
                return 77;
        }
        snprintf(cgroup_name, sizeof cgroup_name, "affinityd-integ-cgroup-%d", (int)getpid());
        harness_add_test(s, test_cgroup_reset_repaired);
        harness_add_test(s, test_cgroup_rescan_verifies);
        harness_add_test(s, test_cgroup_refusal_once);
        harness_add_test(s, test_cgroup_enforce_explains);
        harness_add_test(s, test_cgroup_recreated_watched);
        harness_add_test(s, test_cgroup_endless_burst);
        harness_add_test(s, test_cgroup_moved_watched);
        r = harness_main(s);
        remove_cgroup();
        return r;
}
