/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Topology-aware placement by the real daemon on this machine:
 *  - a spread thread pool: each "wrk-*" thread its own CPU of the policy's set, round robin past
 *    the end, slots reused as threads exit, and the threads no rule matches kept off the CPUs
 *    handed to workers;
 *  - exclusive services, each on CPUs nobody else is given, as ListPolicies shows the plan;
 *  - policies that can't be resolved here (a node that doesn't exist, an unknown device, more
 *    cores than there are) pending with the planner's reason on D-Bus;
 *  - CPU 1 taken offline and back while the daemon runs: every placement re-planned each way,
 *    no task ever with an empty mask. CPU 1 is brought back online by the test, else by the
 *    "cpu1-restored" test case that follows (its setup runs in the runner process even when the
 *    hotplug test died), else by main(), which fails the run if it is not online at the end.
 * The tests of selectors expect what they resolve to on a machine of CPUs 0 and 1: on a larger
 * one they reserve every other online CPU (reserve_all_but_cpus_0_1()), which every selector
 * leaves out. The tests that also need CPUs 0 and 1 to be two cores (whole, for the spread pool)
 * of NUMA node 0 are meson tests of their own (main()), which skip where they are not.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

#define CPU1_ONLINE "/sys/devices/system/cpu/cpu1/online"

/* ---- helpers ---- */

static void expect_line(Child *c, const char *want) {
        _cleanup_free_ char *line = child_expect_line(c);
        ck_assert_str_eq(line, want);
}

/* "start NAME" to integ-pool; returns the new thread's TID. */
static pid_t pool_start(Child *c, const char *name) {
        _cleanup_free_ char *line = NULL;
        int tid = 0;

        child_send(c, "start %s", name);
        line = child_expect_line(c);
        ck_assert_msg(sscanf(line, "started %d", &tid) == 1 && tid > 0, "integ-pool said \"%s\"", line);
        return (pid_t)tid;
}

static void pool_stop(Child *c, pid_t tid) {
        char want[64];

        child_send(c, "stop %d", (int)tid);
        snprintf(want, sizeof want, "stopped %d", (int)tid);
        expect_line(c, want);
}

/* Waits until thread tid of pid is gone from /proc (the kernel has released it). */
static void wait_task_gone(pid_t pid, pid_t tid) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        char path[64];

        snprintf(path, sizeof path, "/proc/%d/task/%d", (int)pid, (int)tid);
        while (access(path, F_OK) == 0) {
                ck_assert_msg(
                        harness_now_usec() < deadline, "thread %d of %d did not go away", (int)tid,
                        (int)pid);
                usleep(1000);
        }
}

/* Waits until thread tid of pid has Cpus_allowed_list cpus. */
static void wait_task_cpus(pid_t pid, pid_t tid, const char *cpus) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        _cleanup_free_ char *last = NULL;

        for (;;) {
                last = mfree(last);
                last = harness_read_task_cpus(pid, tid);
                if (last && streq(last, cpus))
                        return;
                ck_assert_msg(
                        harness_now_usec() < deadline, "thread %d of %d: CPUs %s, expected %s after %llu s",
                        (int)tid, (int)pid, strna(last), cpus, HARNESS_TIMEOUT_USEC / USEC_PER_SEC);
                usleep(20 * 1000);
        }
}

/* Asserts that every thread of pid has a non-empty affinity mask; returns the thread count. */
static int assert_no_empty_mask(pid_t pid) {
        _cleanup_free_ TaskInfo *tasks = NULL;
        int n = harness_read_tasks(pid, &tasks);

        ck_assert_msg(n > 0, "cannot read the threads of %d: %d", (int)pid, n);
        for (int i = 0; i < n; i++)
                ck_assert_msg(
                        tasks[i].cpus[0] != '\0', "thread %d (%s) of %d has an empty affinity mask",
                        (int)tasks[i].tid, tasks[i].comm, (int)pid);
        return n;
}

/* The ListPolicies() entry of name (asserting there is one). Copies into the out strings. */
static void get_policy(Harness *h, const char *name, char **ret_cpus, char **ret_reason) {
        PolicyEntry *e = NULL;
        size_t n = harness_list_policies(h, &e);
        bool seen = false;

        for (size_t i = 0; i < n; i++)
                if (streq(e[i].name, name)) {
                        if (ret_cpus)
                                *ret_cpus = strdup(e[i].cpus);
                        if (ret_reason)
                                *ret_reason = strdup(e[i].pending_reason);
                        seen = true;
                }
        policy_entries_free(e, n);
        ck_assert_msg(seen, "ListPolicies has no policy %s", name);
}

/* Waits until ListPolicies() shows policy name with cpus (and pending iff pending). */
static void wait_policy(Harness *h, const char *name, const char *cpus, bool pending) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;

        for (;;) {
                _cleanup_free_ char *c = NULL, *reason = NULL;

                get_policy(h, name, &c, &reason);
                ck_assert(c && reason);
                if (streq(c, cpus) && (reason[0] != '\0') == pending)
                        return;
                ck_assert_msg(
                        harness_now_usec() < deadline,
                        "policy %s: cpus \"%s\", pending reason \"%s\"; expected cpus \"%s\"%s", name, c,
                        reason, cpus, pending ? " and pending" : ", not pending");
                usleep(20 * 1000);
        }
}

/* The "Pending: REASON" line of `affinityctl plan` for policy name (newly allocated). */
static char *plan_pending_reason(Harness *h, const char *name) {
        _cleanup_free_ char *out = NULL, *arg = NULL, *header = NULL;
        const char *p, *line, *end;

        ck_assert_int_ge(asprintf(&arg, "--config-dir=%s", harness_config_dir(h)), 0);
        ck_assert_int_eq(harness_run_ctl(h, &out, NULL, "plan", arg, NULL), 0);
        ck_assert_int_ge(asprintf(&header, "\n%s (", name), 0);
        p = strstr(out, header);
        ck_assert_msg(p, "affinityctl plan does not show policy %s:\n%s", name, out);
        line = strstr(p, "Pending: ");
        ck_assert_msg(line, "affinityctl plan shows policy %s as not pending:\n%s", name, p);
        line += strlen("Pending: ");
        end = strchr(line, '\n');
        return strndup(line, end ? (size_t)(end - line) : strlen(line));
}

static Child *spawn_named(Harness *h, const char *helper, const char *name, const char *const *args) {
        return harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = helper, .name = name, .args = args, .initial_cpus = "0-1", .pipes = true});
}

/* ---- a machine of CPUs 0 and 1 ---- */

/*
 * Lets the selectors of the test see CPUs 0 and 1 only, as on a machine of those two: every other
 * online CPU becomes the reserve (affinityd.yaml reserve:), which every selector leaves out.
 * Writes nothing where 0-1 is every online CPU.
 */
static void reserve_all_but_cpus_0_1(Harness *h) {
        _cleanup_free_ char *rest = harness_cpus_andnot(harness_online_cpus(), "0-1"), *path = NULL;
        FILE *f;

        if (rest[0] == '\0')
                return;
        path = harness_asprintf("%s/affinityd.yaml", harness_config_dir(h));
        f = fopen(path, "we");
        ck_assert_msg(f, "fopen %s: %s", path, strerror(errno));
        fprintf(f, "reserve: \"%s\"\n", rest);
        ck_assert_int_eq(fclose(f), 0);
}

/* Whether cpu is in the cpu-list list (false if it isn't one). No check assertions: main() uses it. */
static bool cpu_in_list(unsigned cpu, const char *list) {
        for (const char *p = list; *p;) {
                char *end;
                unsigned long a = strtoul(p, &end, 10), b = a;

                if (end == p)
                        return false;
                if (*end == '-') {
                        p = end + 1;
                        b = strtoul(p, &end, 10);
                        if (end == p)
                                return false;
                }
                if (cpu >= a && cpu <= b)
                        return true;
                p = *end == ',' ? end + 1 : "";
        }
        return false;
}

/* Whether other is an SMT sibling of cpu, by cpu's topology/thread_siblings_list; other == cpu:
 * whether cpu has any sibling. */
static bool cpu_has_sibling(unsigned cpu, unsigned other) {
        _cleanup_fclose_ FILE *f = NULL;
        char path[96], line[1024];

        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%u/topology/thread_siblings_list", cpu);
        f = fopen(path, "re");
        if (!f || !fgets(line, sizeof line, f))
                return false; /* no core information: each CPU a core of its own */
        line[strcspn(line, "\n")] = '\0';
        if (other != cpu)
                return cpu_in_list(other, line);
        for (unsigned c = 0; c < 4096; c++)
                if (c != cpu && cpu_in_list(c, line))
                        return true;
        return false;
}

/* Whether CPUs 0 and 1 are on NUMA node 0 (a kernel without NUMA: one node, 0, of every CPU). */
static bool cpus_0_1_on_node0(void) {
        if (access("/sys/devices/system/node", F_OK) < 0)
                return true;
        return access("/sys/devices/system/cpu/cpu0/node0", F_OK) == 0 &&
                access("/sys/devices/system/cpu/cpu1/node0", F_OK) == 0;
}

/* The first NUMA node number from on that this machine has no node of. */
static unsigned absent_node(unsigned from) {
        for (unsigned n = from;; n++) {
                char path[64];

                snprintf(path, sizeof path, "/sys/devices/system/node/node%u", n);
                if (access(path, F_OK) < 0)
                        return n;
        }
}

/* ---- CPU 1 ---- */

static int write_cpu1_online(const char *value) {
        _cleanup_close_ int fd = open(CPU1_ONLINE, O_WRONLY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        if (write(fd, value, strlen(value)) < 0)
                return -errno;
        return 0;
}

static char read_cpu1_online(void) {
        _cleanup_close_ int fd = open(CPU1_ONLINE, O_RDONLY | O_CLOEXEC);
        char c = '\0';

        if (fd < 0 || read(fd, &c, 1) != 1)
                return '\0';
        return c;
}

/* Brings CPU 1 back online if it is not (no check assertions: usable outside tests). */
static void restore_cpu1(void) {
        for (unsigned i = 0; i < 50 && read_cpu1_online() == '0'; i++) {
                if (write_cpu1_online("1") == 0)
                        break;
                usleep(100 * 1000);
        }
}

/* ---- tests ---- */

/* A spread thread pool on two cores. */
START_TEST(test_spread_pool) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        pid_t a, b, c, d;
        Child *pool;

        reserve_all_but_cpus_0_1(h);
        harness_write_policy(
                h, "50-pool.yaml",
                "policies:\n"
                "  - name: pool\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: { cores: 2 }\n"
                "    threads:\n"
                "      - name: \"wrk-*\"\n"
                "        cpus: spread\n",
                name);
        harness_start_daemon(h);
        wait_policy(h, "pool", "0-1", false);

        pool = spawn_named(h, "integ-pool", name, NULL);
        expect_line(pool, "ready");
        harness_wait_listed(h, pool->pid, "pool");
        /* No worker yet: the main thread has the whole set. */
        harness_assert_process_cpus_now(pool->pid, "0-1", 1);

        /* The first worker takes slot 0 (CPU 0); the main thread keeps off it. */
        a = pool_start(pool, "wrk-a");
        wait_task_cpus(pool->pid, a, "0");
        wait_task_cpus(pool->pid, pool->pid, "1");

        /* The second one slot 1 (CPU 1), on the other core: every CPU handed out, so the main
         * thread shares the whole set again rather than having none. */
        b = pool_start(pool, "wrk-b");
        wait_task_cpus(pool->pid, b, "1");
        wait_task_cpus(pool->pid, pool->pid, "0-1");
        wait_task_cpus(pool->pid, a, "0");

        /* A third wraps round robin: slot 2 is CPU 0 again. */
        c = pool_start(pool, "wrk-c");
        wait_task_cpus(pool->pid, c, "0");

        /*
         * wrk-a (slot 0) exits: the next worker reuses slot 0, CPU 0 (a fresh slot 3 would be
         * CPU 1). pthread_join() returns when the exiting thread clears its TID (exit_mm()),
         * before the kernel sends the proc connector's EXIT (after exit_notify()), so under
         * load a thread started right away can reach the daemon first. Wait until the kernel
         * is done with wrk-a and the daemon has read everything up to now.
         */
        pool_stop(pool, a);
        wait_task_gone(pool->pid, a);
        harness_barrier(h);
        d = pool_start(pool, "wrk-d");
        wait_task_cpus(pool->pid, d, "0");
        wait_task_cpus(pool->pid, b, "1");
        wait_task_cpus(pool->pid, c, "0");

        /* wrk-b (CPU 1) and wrk-c exit: only CPU 0 is handed out now, and the main thread is
         * given CPU 1 back to itself. */
        pool_stop(pool, b);
        pool_stop(pool, c);
        wait_task_cpus(pool->pid, pool->pid, "1");
        wait_task_cpus(pool->pid, d, "0");

        /* A thread no rule names gets the same as the main thread. */
        {
                pid_t other = pool_start(pool, "helper");
                wait_task_cpus(pool->pid, other, "1");
        }
        assert_no_empty_mask(pool->pid);

        {
                ManagerProps p = {};

                harness_get_props(h, &p);
                ck_assert_uint_eq(p.placement_failures, 0);
                manager_props_done(&p);
        }
        child_close_stdin(pool);
        ck_assert_int_eq(child_wait(pool), 0);
}
END_TEST

/* Two exclusive services, on the CPUs the plan gave each; a third
 * finds nothing left and is pending with the reason. */
START_TEST(test_exclusive_services) {
        Harness *h = harness_new();
        const char *name_a = harness_unique_name(h), *name_b = harness_unique_name(h),
                   *name_c = harness_unique_name(h);
        _cleanup_free_ char *cpus_a = NULL, *cpus_b = NULL, *reason_a = NULL, *reason_b = NULL,
                            *cpus_c = NULL, *reason_c = NULL, *plan_reason = NULL;
        ProcessEntry *e = NULL;
        Child *a, *b, *c;
        size_t n;

        reserve_all_but_cpus_0_1(h);
        harness_write_policy(
                h, "50-exclusive.yaml",
                "policies:\n"
                "  - name: excl-a\n"
                "    match: { comm: \"%s\" }\n"
                "    cpus: { cpus: 1, exclusive: true }\n"
                "  - name: excl-b\n"
                "    match: { comm: \"%s\" }\n"
                "    cpus: { cpus: 1, exclusive: true }\n"
                "  - name: excl-c\n"
                "    match: { comm: \"%s\" }\n"
                "    cpus: { cpus: 1, exclusive: true }\n",
                name_a, name_b, name_c);
        harness_start_daemon(h);

        get_policy(h, "excl-a", &cpus_a, &reason_a);
        get_policy(h, "excl-b", &cpus_b, &reason_b);
        get_policy(h, "excl-c", &cpus_c, &reason_c);
        ck_assert_str_eq(reason_a, "");
        ck_assert_str_eq(reason_b, "");
        ck_assert_str_eq(cpus_a, "0");
        ck_assert_str_eq(cpus_b, "1");
        ck_assert_str_eq(cpus_c, "");
        ck_assert_msg(
                strstr(reason_c, "held by earlier exclusive policies") &&
                        strstr(reason_c, "\"excl-a\" (0)") && strstr(reason_c, "\"excl-b\" (1)"),
                "excl-c: pending reason \"%s\"", reason_c);
        plan_reason = plan_pending_reason(h, "excl-c");
        ck_assert_str_eq(reason_c, plan_reason);

        a = spawn_named(h, "integ-threads", name_a, ARGS("-n", "2"));
        b = spawn_named(h, "integ-threads", name_b, ARGS("-n", "2"));
        c = spawn_named(h, "integ-threads", name_c, ARGS("-n", "1"));
        for (Child **x = (Child *[]){a, b, c, NULL}; *x; x++) {
                _cleanup_free_ char *line = child_expect_line(*x);
                ck_assert(strncmp(line, "ready ", 6) == 0);
        }
        harness_wait_process_cpus(h, a->pid, cpus_a, 3);
        harness_wait_process_cpus(h, b->pid, cpus_b, 3);
        harness_wait_listed(h, a->pid, "excl-a");
        harness_wait_listed(h, b->pid, "excl-b");

        /* The pending policy places nothing: its process stays where it started. */
        harness_barrier(h);
        n = harness_list_processes(h, &e);
        ck_assert_msg(!process_entries_find(e, n, c->pid), "the process of pending policy excl-c is listed");
        process_entries_free(e, n);
        harness_assert_process_cpus_now(c->pid, "0-1", 2);
}
END_TEST

/* At run time, machine-dependent failures are pending, with the planner's
 * reasons on D-Bus; the daemon runs, and the other policies are in force. */
START_TEST(test_pending_on_bus) {
        Harness *h = harness_new();
        unsigned bad_node = absent_node(7);
        _cleanup_free_ char *node_yaml = harness_asprintf("{ nodes: \"%u\" }", bad_node),
                            *node_needle = harness_asprintf("NUMA node %u does not exist", bad_node);
        const struct {
                const char *name, *cpus_yaml, *needle;
        } cases[] = {
                {"bad-node", node_yaml, node_needle},
                {"bad-near", "{ near: nosuchdev }", "nosuchdev"},
                {"too-many", "{ cores: 64 }", "wanted 64 cores"},
        };
        const char *name_ok = harness_unique_name(h), *name_pending = harness_unique_name(h);
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        ProcessEntry *e = NULL;
        ManagerProps p = {};
        Child *ok, *pending;
        size_t n;

        ck_assert_ptr_nonnull(f);
        reserve_all_but_cpus_0_1(h);
        fprintf(f, "policies:\n");
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                fprintf(f,
                        "  - name: %s\n"
                        "    match: { comm: \"%s\" }\n"
                        "    cpus: %s\n",
                        cases[i].name, name_pending, cases[i].cpus_yaml);
        fprintf(f,
                "  - name: fine\n"
                "    match: { comm: \"%s\" }\n"
                "    cpus: \"1\"\n",
                name_ok);
        ck_assert_int_eq(fclose(f), 0);
        harness_write_policy(h, "50-pending.yaml", "%s", text);
        free(text);

        harness_start_daemon(h);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *cpus = NULL, *reason = NULL, *plan_reason = NULL;

                get_policy(h, cases[i].name, &cpus, &reason);
                ck_assert_str_eq(cpus, "");
                ck_assert_msg(
                        strstr(reason, cases[i].needle), "policy %s: pending reason \"%s\" lacks \"%s\"",
                        cases[i].name, reason, cases[i].needle);
                /* The same reason `affinityctl plan` gives offline. */
                plan_reason = plan_pending_reason(h, cases[i].name);
                ck_assert_str_eq(reason, plan_reason);
        }
        wait_policy(h, "fine", "1", false);

        ok = spawn_named(h, "integ-threads", name_ok, ARGS("-n", "1"));
        pending = spawn_named(h, "integ-threads", name_pending, ARGS("-n", "1"));
        expect_line(ok, "ready 1");
        expect_line(pending, "ready 1");
        harness_wait_process_cpus(h, ok->pid, "1", 2);
        harness_barrier(h);
        n = harness_list_processes(h, &e);
        ck_assert_msg(!process_entries_find(e, n, pending->pid), "a process of a pending policy is listed");
        process_entries_free(e, n);
        harness_assert_process_cpus_now(pending->pid, "0-1", 2);

        harness_get_props(h, &p);
        ck_assert_str_eq(p.state, "running");
        ck_assert_str_eq(p.last_reload_error, "");
        manager_props_done(&p);
}
END_TEST

/* CPU 1 offline and back online while the daemon runs. */
START_TEST(test_hotplug) {
        Harness *h = harness_new();
        const char *name_wide = harness_unique_name(h), *name_pool = harness_unique_name(h),
                   *name_a = harness_unique_name(h), *name_b = harness_unique_name(h);
        _cleanup_free_ char *without1 = harness_cpus_andnot(harness_online_cpus(), "1"),
                            *offline_line = harness_asprintf("CPUs changed (online now: %s)", without1),
                            *online_line =
                                    harness_asprintf("CPUs changed (online now: %s)", harness_online_cpus());
        pid_t wa, wb;
        Child *wide, *pool, *a, *b;
        int r;

        ck_assert_msg(read_cpu1_online() == '1', "CPU 1 is not online before the test");
        reserve_all_but_cpus_0_1(h);
        harness_write_policy(
                h, "50-hotplug.yaml",
                "policies:\n"
                "  - name: wide\n"
                "    match: { comm: \"%s\" }\n"
                "    cpus: \"0-1\"\n"
                "  - name: pool\n"
                "    match: { comm: \"%s\" }\n"
                "    cpus: { nodes: \"0\" }\n"
                "    threads:\n"
                "      - name: \"wrk-*\"\n"
                "        cpus: spread\n"
                "  - name: excl-a\n"
                "    match: { comm: \"%s\" }\n"
                "    cpus: { cpus: 1, exclusive: true }\n"
                "  - name: excl-b\n"
                "    match: { comm: \"%s\" }\n"
                "    cpus: { cpus: 1, exclusive: true }\n",
                name_wide, name_pool, name_a, name_b);
        harness_start_daemon(h);

        /* Started on CPU 0 only, so that 0-1 is the daemon's doing. */
        wide = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = name_wide,
                        .args = ARGS("-n", "2"),
                        .initial_cpus = "0",
                        .pipes = true});
        pool = spawn_named(h, "integ-pool", name_pool, NULL);
        a = spawn_named(h, "integ-threads", name_a, ARGS("-n", "1"));
        b = spawn_named(h, "integ-threads", name_b, ARGS("-n", "1"));
        expect_line(wide, "ready 2");
        expect_line(pool, "ready");
        expect_line(a, "ready 1");
        expect_line(b, "ready 1");
        wa = pool_start(pool, "wrk-a");
        wb = pool_start(pool, "wrk-b");

        wait_policy(h, "wide", "0-1", false);
        wait_policy(h, "pool", "0-1", false);
        wait_policy(h, "excl-a", "0", false);
        wait_policy(h, "excl-b", "1", false);
        harness_wait_process_cpus(h, wide->pid, "0-1", 3);
        wait_task_cpus(pool->pid, wa, "0");
        wait_task_cpus(pool->pid, wb, "1");
        wait_task_cpus(pool->pid, pool->pid, "0-1");
        harness_wait_process_cpus(h, a->pid, "0", 2);
        harness_wait_process_cpus(h, b->pid, "1", 2);
        harness_wait_listed(h, b->pid, "excl-b");

        /* CPU 1 goes offline. */
        r = write_cpu1_online("0");
        ck_assert_msg(r == 0, "taking CPU 1 offline: %s", strerror(-r));
        ck_assert_int_eq(read_cpu1_online(), '0');

        harness_wait_log(h, offline_line);
        wait_policy(h, "wide", "0", false);
        wait_policy(h, "pool", "0", false);
        wait_policy(h, "excl-a", "0", false);
        wait_policy(h, "excl-b", "", true);
        harness_wait_process_cpus(h, wide->pid, "0", 3);
        wait_task_cpus(pool->pid, wa, "0");
        wait_task_cpus(pool->pid, wb, "0");
        wait_task_cpus(pool->pid, pool->pid, "0");
        harness_wait_process_cpus(h, a->pid, "0", 2);
        /* The pending policy keeps its process (the kernel moved its threads off CPU 1). */
        harness_wait_listed(h, b->pid, "excl-b");
        for (Child **x = (Child *[]){wide, pool, a, b, NULL}; *x; x++)
                assert_no_empty_mask((*x)->pid);

        /* CPU 1 comes back. */
        r = write_cpu1_online("1");
        ck_assert_msg(r == 0, "bringing CPU 1 back online: %s", strerror(-r));
        ck_assert_int_eq(read_cpu1_online(), '1');

        harness_wait_log(h, online_line);
        wait_policy(h, "wide", "0-1", false);
        wait_policy(h, "pool", "0-1", false);
        wait_policy(h, "excl-a", "0", false);
        wait_policy(h, "excl-b", "1", false);
        harness_wait_process_cpus(h, wide->pid, "0-1", 3);
        wait_task_cpus(pool->pid, wa, "0");
        wait_task_cpus(pool->pid, wb, "1");
        wait_task_cpus(pool->pid, pool->pid, "0-1");
        harness_wait_process_cpus(h, a->pid, "0", 2);
        harness_wait_process_cpus(h, b->pid, "1", 2);
        harness_wait_listed(h, b->pid, "excl-b");
        for (Child **x = (Child *[]){wide, pool, a, b, NULL}; *x; x++)
                assert_no_empty_mask((*x)->pid);

        /* Placement works as before: a new worker and a new process. */
        {
                pid_t wc = pool_start(pool, "wrk-c");
                wait_task_cpus(pool->pid, wc, "0");
        }
        harness_barrier(h);
        harness_assert_daemon_alive(h);
}
END_TEST

/*
 * CPU 1 offline and back, many times, while processes are on CPU 1. While a
 * CPU leaves or joins the active set, sched_getaffinity(2) reads a mask of it as empty: the
 * daemon once logged "Placed … on CPUs  (policy …)" and recorded that empty set as what the
 * kernel kept. No message may carry an empty set, and every process ends on its CPUs.
 */
START_TEST(test_hotplug_storm) {
        Harness *h = harness_new();
        const char *name_one = harness_unique_name(h), *name_wide = harness_unique_name(h);
        enum { N_ONE = 10, N_TOGGLES = 25 };
        Child *one[N_ONE], *wide;
        int r;

        ck_assert_msg(read_cpu1_online() == '1', "CPU 1 is not online before the test");
        harness_write_policy(
                h, "50-storm.yaml",
                "policies:\n"
                "  - name: one\n"
                "    match: { comm: \"%s\" }\n"
                "    cpus: \"1\"\n"
                "  - name: wide\n"
                "    match: { comm: \"%s\" }\n"
                "    cpus: \"0-1\"\n",
                name_one, name_wide);
        harness_start_daemon(h);
        for (unsigned i = 0; i < N_ONE; i++)
                one[i] = spawn_named(h, "integ-threads", name_one, ARGS("-n", "2"));
        wide = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = name_wide,
                        .args = ARGS("-n", "2"),
                        .initial_cpus = "0",
                        .pipes = true});
        for (unsigned i = 0; i < N_ONE; i++) {
                expect_line(one[i], "ready 2");
                harness_wait_process_cpus(h, one[i]->pid, "1", 3);
        }
        expect_line(wide, "ready 2");
        harness_wait_process_cpus(h, wide->pid, "0-1", 3);

        for (unsigned i = 0; i < N_TOGGLES; i++) {
                r = write_cpu1_online("0");
                ck_assert_msg(r == 0, "taking CPU 1 offline: %s", strerror(-r));
                usleep((i % 3) * 70 * 1000); /* within, at and after the re-plan's debounce */
                r = write_cpu1_online("1");
                ck_assert_msg(r == 0, "bringing CPU 1 back online: %s", strerror(-r));
                usleep((100 + (i % 4) * 60) * 1000);
        }
        ck_assert_int_eq(read_cpu1_online(), '1');

        for (unsigned i = 0; i < N_ONE; i++) {
                harness_wait_process_cpus(h, one[i]->pid, "1", 3);
                assert_no_empty_mask(one[i]->pid);
        }
        harness_wait_process_cpus(h, wide->pid, "0-1", 3);
        harness_barrier(h);
        ck_assert_msg(!harness_log_contains(h, "on CPUs  ("), "a placement was logged with no CPUs");
        ck_assert_msg(!harness_log_contains(h, "to CPUs  "), "a narrowing was logged with no CPUs");
        harness_assert_daemon_alive(h);
}
END_TEST

/* Runs in the runner process before the test below: CPU 1 back online whatever happened. */
static void cpu1_restore_setup(void) {
        restore_cpu1();
}

START_TEST(test_cpu1_online) {
        ck_assert_msg(read_cpu1_online() == '1', "CPU 1 is not online after the hotplug test");
}
END_TEST

/*
 * Four modes, four meson tests. "basic" (the default) runs wherever the integration suite runs.
 * The others need CPUs 0 and 1 to be a certain shape and exit 77 (a skip), saying why, where they
 * are not: "spread-pool" two whole cores (no SMT sibling on either), "exclusive" two cores,
 * "hotplug" two cores both on NUMA node 0.
 */
int main(int argc, char **argv) {
        const char *mode = argc > 1 ? argv[1] : "basic";
        Suite *s = suite_create("integration-topo");
        bool smt = cpu_has_sibling(0, 0) || cpu_has_sibling(1, 1), one_core = cpu_has_sibling(0, 1);
        bool hotplug = false;
        TCase *tc;
        int r;

        if (streq(mode, "basic")) {
                harness_add_test(s, test_pending_on_bus);
                harness_add_test(s, test_hotplug_storm);
                hotplug = true;
        } else if (streq(mode, "spread-pool")) {
                if (smt) {
                        printf("SKIP: CPU 0 or CPU 1 has an SMT sibling here, so CPUs 0 and 1 are not 2 "
                               "whole cores, which the pool of cores: 2 is to be\n");
                        return 77;
                }
                harness_add_test(s, test_spread_pool);
        } else if (streq(mode, "exclusive")) {
                if (one_core) {
                        printf("SKIP: CPUs 0 and 1 are SMT siblings of one core here, and the test gives "
                               "each an exclusive core of its own\n");
                        return 77;
                }
                harness_add_test(s, test_exclusive_services);
        } else if (streq(mode, "hotplug")) {
                if (one_core || !cpus_0_1_on_node0()) {
                        printf("SKIP: %s here, and the test's exclusive services need a core each and its "
                               "pool of node 0 both CPUs\n",
                               one_core ? "CPUs 0 and 1 are SMT siblings of one core"
                                        : "CPUs 0 and 1 are not both on NUMA node 0");
                        return 77;
                }
                harness_add_test(s, test_hotplug);
                hotplug = true;
        } else {
                fprintf(stderr, "usage: %s [basic|spread-pool|exclusive|hotplug]\n", argv[0]);
                return EXIT_FAILURE;
        }
        if (hotplug) {
                tc = tcase_create("cpu1-restored");
                tcase_add_unchecked_fixture(tc, cpu1_restore_setup, NULL);
                tcase_add_test(tc, test_cpu1_online);
                suite_add_tcase(s, tc);
        }

        r = harness_main(s);
        restore_cpu1();
        if (read_cpu1_online() == '0') {
                printf("FAIL: CPU 1 is not online at the end of the run\n");
                return EXIT_FAILURE;
        }
        return r;
}
