/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * scheduler:, memory: and cgroup awareness, on the real daemon against real processes:
 *  - nice, class (batch, idle, fifo with allow-realtime), real-time priority and I/O priority
 *    land on every thread (read back from /proc/PID/task/TID/stat fields 18, 19, 41 and
 *    ioprio_get(2)), a thread rule overrides the policy key by key, and a reload that removes
 *    the policies gives every thread its original back;
 *  - a process in a v1 cpuset cgroup that excludes the policy's CPUs gets the clear per-process
 *    error and keeps its mask;
 *  - memory: {nodes: "0", migrate: true} runs the page migration for real;
 *  - SCHED_FIFO for a process in a child cpu cgroup without real-time runtime (RT_GROUP_SCHED)
 *    is reported with the explanation.
 * The cgroups made here are removed when the run ends (main()), whatever happened to the test.
 */

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

#define IOPRIO_WHO_PROCESS 1
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_BE          2
#define IOPRIO_IDLE        3

#define CPUSET_ROOT "/sys/fs/cgroup/cpuset"
#define CPU_ROOT    "/sys/fs/cgroup/cpu"

/* The cgroups of this run: one name per run, made in main() before the tests fork. */
static char cgroup_name[64];

/* The scheduling state of one thread as /proc and ioprio_get(2) show it. */
typedef struct TaskSched {
        int policy; /* field 41 */
        long prio;  /* field 18: 20 + nice for the normal classes, -1 - rt_priority for fifo/rr */
        long nice;  /* field 19 */
        int ioprio; /* ioprio_get(2): class << 13 | level */
} TaskSched;

/* Reads /proc/PID/task/TID/stat; false if the thread is gone. */
static bool read_task_sched(pid_t pid, pid_t tid, TaskSched *ret) {
        char path[64], buf[1024], *p;
        long fields[64] = {};
        FILE *f;
        int i, r;

        snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
        f = fopen(path, "re");
        if (!f)
                return false;
        p = fgets(buf, sizeof buf, f);
        fclose(f);
        if (!p)
                return false;
        p = strrchr(buf, ')'); /* comm may hold anything */
        ck_assert_ptr_nonnull(p);
        p += 2; /* field 3 */
        for (i = 3; i < 64 && *p; i++) {
                fields[i] = strtol(p, NULL, 10); /* field 3 (state) reads as 0 */
                p = strchr(p, ' ');
                if (!p)
                        break;
                p++;
        }
        ck_assert_int_ge(i, 41);
        r = (int)syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, (int)tid);
        if (r < 0)
                return false;
        *ret = (TaskSched){.policy = (int)fields[41], .prio = fields[18], .nice = fields[19], .ioprio = r};
        return true;
}

static bool task_sched_equal(const TaskSched *a, const TaskSched *b) {
        return a->policy == b->policy && a->prio == b->prio && a->nice == b->nice && a->ioprio == b->ioprio;
}

static char *task_sched_text(const TaskSched *s) {
        char *t = NULL;
        ck_assert_int_ge(
                asprintf(
                        &t, "policy %d prio %ld nice %ld ioprio %d/%d", s->policy, s->prio, s->nice,
                        s->ioprio >> IOPRIO_CLASS_SHIFT, s->ioprio & 7),
                0);
        return t;
}

/* What a thread under each class should show. */
static TaskSched expect_normal(int policy, int nice, int io_class, int io_level) {
        return (TaskSched){
                .policy = policy,
                .prio = 20 + nice,
                .nice = nice,
                .ioprio = io_class << IOPRIO_CLASS_SHIFT | io_level};
}

static TaskSched expect_rt(int policy, int rt_priority, int ioprio) {
        return (TaskSched){.policy = policy, .prio = -1 - rt_priority, .nice = 0, .ioprio = ioprio};
}

/* The state every thread here starts with: this test process's own. */
static TaskSched own_sched(void) {
        TaskSched s;
        ck_assert(read_task_sched(getpid(), (pid_t)syscall(SYS_gettid), &s));
        return s;
}

/*
 * Waits until every thread of pid shows *match if its name matches glob (glob NULL: none
 * does), *other otherwise; at least min_threads threads. Fails with the threads listed.
 */
static void wait_sched(
        pid_t pid, const char *glob, const TaskSched *match, const TaskSched *other, unsigned min_threads) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        char report[4096];

        for (;;) {
                _cleanup_free_ TaskInfo *tasks = NULL;
                int n = harness_read_tasks(pid, &tasks);
                bool ok = n >= (int)min_threads;
                size_t len = 0;

                ck_assert_msg(n >= 0, "process %d is gone", (int)pid);
                report[0] = '\0';
                for (int i = 0; i < n; i++) {
                        const TaskSched *want = glob && fnmatch(glob, tasks[i].comm, 0) == 0 ? match : other;
                        _cleanup_free_ char *text = NULL;
                        TaskSched s;

                        if (!read_task_sched(pid, tasks[i].tid, &s))
                                continue;
                        text = task_sched_text(&s);
                        len += (size_t)snprintf(
                                report + len, len < sizeof report ? sizeof report - len : 0, "  %d %s: %s\n",
                                (int)tasks[i].tid, tasks[i].comm, text);
                        if (!task_sched_equal(&s, want))
                                ok = false;
                }
                if (ok)
                        return;
                if (harness_now_usec() > deadline) {
                        _cleanup_free_ char *m = task_sched_text(match), *o = task_sched_text(other);
                        ck_abort_msg(
                                "process %d: threads %s should have %s, the others %s; they have:\n%s",
                                (int)pid, strna(glob), m, o, report);
                }
                usleep(20 * 1000);
        }
}

static void write_file(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CLOEXEC | O_TRUNC | O_CREAT, 0644);
        ssize_t l = (ssize_t)strlen(text);

        ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
        ck_assert_msg(
                write(fd, text, (size_t)l) == l, "write \"%s\" to %s: %s", text, path, strerror(errno));
        close(fd);
}

static void write_settings(Harness *h, const char *text) {
        _cleanup_free_ char *path = NULL;

        ck_assert_int_ge(asprintf(&path, "%s/affinityd.yaml", harness_config_dir(h)), 0);
        write_file(path, text);
}

/* Makes ROOT/cgroup_name (a v1 hierarchy) and returns its path, or NULL if the hierarchy is
 * not mounted there (the caller skips). */
static char *make_cgroup(const char *root) {
        char *dir = NULL;

        if (access(root, F_OK) < 0)
                return NULL;
        ck_assert_int_ge(asprintf(&dir, "%s/%s", root, cgroup_name), 0);
        ck_assert_msg(mkdir(dir, 0755) >= 0 || errno == EEXIST, "mkdir %s: %s", dir, strerror(errno));
        return dir;
}

static void cgroup_add(const char *dir, pid_t pid) {
        _cleanup_free_ char *path = NULL;
        char text[32];

        ck_assert_int_ge(asprintf(&path, "%s/cgroup.procs", dir), 0);
        snprintf(text, sizeof text, "%d", (int)pid);
        write_file(path, text);
}

/* Removes the cgroup (its processes are gone or going: retries while it is busy). */
static void remove_cgroup(const char *root) {
        char dir[PATH_MAX];

        snprintf(dir, sizeof dir, "%s/%s", root, cgroup_name);
        for (int i = 0; i < 500 && rmdir(dir) < 0 && errno == EBUSY; i++)
                usleep(10 * 1000);
}

/* ---- tests ---- */

START_TEST(test_sched_classes) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h), *b = harness_unique_name(h);
        TaskSched orig = own_sched(), batch, idle, fifo;
        ManagerProps p = {};
        Child *ca, *cb;
        char *line;

        write_settings(h, "allow-realtime: true\n");
        harness_write_policy(
                h, "10-sched.yaml",
                "policies:\n"
                "  - name: batchy\n"
                "    match: {comm: \"%s\"}\n"
                "    scheduler:\n"
                "      policy: batch\n"
                "      nice: 5\n"
                "      io: {class: best-effort, level: 6}\n"
                "    threads:\n"
                "      - name: \"tr*\"\n"
                "        scheduler:\n"
                "          policy: idle\n"
                "          io: {class: idle}\n"
                "  - name: rt\n"
                "    match: {comm: \"%s\"}\n"
                "    scheduler: {policy: fifo, priority: 10, reset-on-fork: true}\n",
                a, b);
        harness_start_daemon(h);

        ca = harness_spawn_threads(h, a, 2, NULL);
        child_send(ca, "rename tr-%d", 1);
        line = child_expect_line(ca); /* "renamed TID" */
        free(line);
        cb = harness_spawn_threads(h, b, 1, NULL);

        batch = expect_normal(SCHED_BATCH, 5, IOPRIO_BE, 6);
        idle = expect_normal(SCHED_IDLE, 5, IOPRIO_IDLE, 0); /* the policy's nice, the rule's class */
        fifo = expect_rt(SCHED_FIFO, 10, orig.ioprio);
        wait_sched(ca->pid, "tr*", &idle, &batch, 4);
        wait_sched(cb->pid, NULL, &fifo, &fifo, 2);

        /* New threads of a placed process get the policy too. */
        child_send(ca, "spawn 2");
        free(child_expect_line(ca));
        wait_sched(ca->pid, "tr*", &idle, &batch, 6);

        harness_get_props(h, &p);
        ck_assert_uint_eq(p.placement_failures, 0);
        manager_props_done(&p);

        /* A reload that removes the policies gives every thread its original back. */
        harness_remove_policy(h, "10-sched.yaml");
        harness_sighup_reload(h);
        wait_sched(ca->pid, NULL, &orig, &orig, 6);
        wait_sched(cb->pid, NULL, &orig, &orig, 2);
        harness_get_props(h, &p);
        ck_assert_uint_eq(p.placement_failures, 0);
        manager_props_done(&p);
}
END_TEST

START_TEST(test_sched_cpuset_conflict) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
        _cleanup_free_ char *dir = make_cgroup(CPUSET_ROOT), *path = NULL, *needle = NULL;
        ManagerProps p0 = {}, p = {};
        Child *c;

        ck_assert_ptr_nonnull(dir); /* main() runs this only with a v1 cpuset hierarchy */
        ck_assert_int_ge(asprintf(&path, "%s/cpuset.cpus", dir), 0);
        write_file(path, "0");
        free(path);
        ck_assert_int_ge(asprintf(&path, "%s/cpuset.mems", dir), 0);
        write_file(path, "0");

        harness_start_daemon(h);
        c = harness_spawn_threads(h, a, 2, "0");
        cgroup_add(dir, c->pid);
        harness_get_props(h, &p0);

        harness_write_policy(
                h, "10-web.yaml",
                "policies:\n"
                "  - name: web\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n",
                a);
        harness_sighup_reload(h);
        ck_assert_int_ge(asprintf(&needle, "policy web wants 1, PID %d's cgroup allows 0", (int)c->pid), 0);
        harness_wait_log(h, needle);
        harness_barrier(h);
        harness_assert_process_cpus_now(c->pid, "0", 3);
        harness_get_props(h, &p);
        ck_assert_uint_gt(p.placement_failures, p0.placement_failures);
        manager_props_done(&p);
        manager_props_done(&p0);

        child_kill(c);
        remove_cgroup(CPUSET_ROOT);
}
END_TEST

START_TEST(test_sched_memory_migrate) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
        _cleanup_free_ char *needle = NULL;
        PolicyEntry *pe = NULL;
        bool found = false;
        ManagerProps p = {};
        size_t n;
        Child *c;

        harness_write_policy(
                h, "10-mem.yaml",
                "policies:\n"
                "  - name: mem\n"
                "    match: {comm: \"%s\"}\n"
                "    memory: {nodes: \"0\", migrate: true}\n"
                "  - name: ghostmem\n"
                "    match: {comm: \"%s\"}\n"
                "    memory: {nodes: \"7\", migrate: true}\n",
                a, harness_unique_name(h));
        harness_start_daemon(h);

        /* A node this machine doesn't have: the policy is pending, with the reason. */
        n = harness_list_policies(h, &pe);
        for (size_t i = 0; i < n; i++)
                if (streq(pe[i].name, "ghostmem")) {
                        ck_assert_msg(
                                strstr(pe[i].pending_reason, "not exist"),
                                "ghostmem's pending reason \"%s\" does not name the missing node",
                                pe[i].pending_reason);
                        found = true;
                }
        ck_assert_msg(found, "ghostmem not listed");
        policy_entries_free(pe, n);

        c = harness_spawn_threads(h, a, 1, NULL);
        ck_assert_int_ge(asprintf(&needle, "KiB of %s[%d] to nodes 0 (policy mem", a, (int)c->pid), 0);
        harness_wait_log(h, needle);
        ck_assert(harness_log_contains(h, "Moved "));
        harness_get_props(h, &p);
        ck_assert_uint_eq(p.placement_failures, 0);
        manager_props_done(&p);
}
END_TEST

/* Pages already on the policy's nodes (this machine has one): nothing moved is not logged at
 * info, neither at placement nor at every reload. */
START_TEST(test_sched_memory_nothing_moved_quiet) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
        Child *c;

        harness_write_policy(
                h, "10-mem.yaml",
                "policies:\n"
                "  - name: mem\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n"
                "    memory: {nodes: \"0\", migrate: true}\n",
                a);
        harness_start_daemon_with(h, &(DaemonOptions){.args = ARGS("--log-level=info")});
        c = harness_spawn_threads(h, a, 1, NULL);
        harness_wait_process_cpus(h, c->pid, "1", 2);
        harness_sighup_reload(h);
        harness_sighup_reload(h);
        harness_barrier(h);
        ck_assert(harness_log_contains(h, "Placed "));
        ck_assert_msg(!harness_log_contains(h, "Moved 0 KiB"), "\"Moved 0 KiB\" logged at info");
}
END_TEST

START_TEST(test_sched_rt_no_runtime) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h);
        _cleanup_free_ char *dir = make_cgroup(CPU_ROOT), *rt = NULL, *needle = NULL;
        TaskSched orig = own_sched();
        ManagerProps p0 = {}, p = {};
        Child *c;

        ck_assert_ptr_nonnull(dir); /* main() runs this only with cpu.rt_runtime_us */
        ck_assert_int_ge(asprintf(&rt, "%s/cpu.rt_runtime_us", dir), 0);
        ck_assert_msg(access(rt, F_OK) == 0, "%s: %m", rt);
        write_file(rt, "0");

        write_settings(h, "allow-realtime: true\n");
        harness_start_daemon(h);
        c = harness_spawn_threads(h, a, 1, NULL);
        cgroup_add(dir, c->pid);
        harness_get_props(h, &p0);

        harness_write_policy(
                h, "10-rt.yaml",
                "policies:\n"
                "  - name: rt\n"
                "    match: {comm: \"%s\"}\n"
                "    scheduler: {policy: fifo, priority: 5}\n",
                a);
        harness_sighup_reload(h);
        ck_assert_int_ge(
                asprintf(&needle, "RT_GROUP_SCHED: cgroup /%s has no real-time runtime", cgroup_name), 0);
        harness_wait_log(h, needle);
        harness_barrier(h);
        wait_sched(c->pid, NULL, &orig, &orig, 2);
        harness_get_props(h, &p);
        ck_assert_uint_gt(p.placement_failures, p0.placement_failures);
        manager_props_done(&p);
        manager_props_done(&p0);

        child_kill(c);
        remove_cgroup(CPU_ROOT);
}
END_TEST

/*
 * Three modes, three meson tests: "basic" (the default) runs anywhere the integration suite runs;
 * "cpuset" needs a v1 cpuset hierarchy at CPUSET_ROOT, "rt-cgroup" a v1 cpu hierarchy at CPU_ROOT
 * with cpu.rt_runtime_us (CONFIG_RT_GROUP_SCHED); each exits 77 (a skip) without it.
 */
int main(int argc, char **argv) {
        const char *mode = argc > 1 ? argv[1] : "basic";
        Suite *s = suite_create("integration-sched");
        int r;

        snprintf(cgroup_name, sizeof cgroup_name, "affinityd-integ-%d", (int)getpid());
        if (streq(mode, "basic")) {
                harness_add_test(s, test_sched_classes);
                harness_add_test_tagged(s, test_sched_memory_migrate, "migrate-pages");
                harness_add_test_tagged(s, test_sched_memory_nothing_moved_quiet, "migrate-pages");
        } else if (streq(mode, "cpuset")) {
                if (access(CPUSET_ROOT "/cpuset.cpus", F_OK) < 0) {
                        printf("SKIP: no v1 cpuset hierarchy at %s\n", CPUSET_ROOT);
                        return 77;
                }
                harness_add_test(s, test_sched_cpuset_conflict);
        } else if (streq(mode, "rt-cgroup")) {
                if (access(CPU_ROOT "/cpu.rt_runtime_us", F_OK) < 0) {
                        printf("SKIP: no %s/cpu.rt_runtime_us (no v1 cpu hierarchy, or no "
                               "CONFIG_RT_GROUP_SCHED)\n",
                               CPU_ROOT);
                        return 77;
                }
                harness_add_test(s, test_sched_rt_no_runtime);
        } else {
                fprintf(stderr, "usage: %s [basic|cpuset|rt-cgroup]\n", argv[0]);
                return EXIT_FAILURE;
        }
        r = harness_main(s);

        /* Whatever a failed test left: its processes died with it (PR_SET_PDEATHSIG). */
        remove_cgroup(CPUSET_ROOT);
        remove_cgroup(CPU_ROOT);
        return r;
}
