/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of per-thread CPU affinity on real threads of this test process (and a child
 * process), read back independently from /proc/self/task/TID/status Cpus_allowed_list.
 * Every test restores the original affinity of the test process at the end.
 * Scheduling class, priority, nice, reset-on-fork and I/O priority are set on real threads and
 * read back three ways (sched_getattr(2) through the library, /proc/PID/task/TID/stat fields
 * 18, 19 and 41, ioprio_get(2) directly), then restored. The RT_GROUP_SCHED case runs in a
 * v1 cpu cgroup created for it (and removed, also after a failure, by an unchecked teardown).
 */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apply-sched.h"
#include "cgroup-fixture.h"
#include "cgroup.h"
#include "cpuset.h"
#include "macro.h"
#include "thread-join.h"

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

/* Stops the thread and waits until its TID is gone from the kernel too (thread-join.h). */
static void sleeper_stop(Sleeper *s) {
        sem_post(&s->quit);
        ck_assert_int_eq(thread_join_gone(s->thread, s->tid), 0);
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

/* ---- scheduling class, priority, nice, I/O priority ---- */

/* Fields 18 (priority), 19 (nice) and 41 (policy) of /proc/PID/task/TID/stat, parsed after the
 * last ')' (field 3 is the first after it). Independent of procfs.c and of sched_getattr(2). */
typedef struct StatSched {
        long priority, nice, policy;
} StatSched;

static StatSched stat_sched(pid_t pid, pid_t tid) {
        char path[128], buf[4096], *p, *save = NULL;
        StatSched r = {.priority = -1000, .nice = -1000, .policy = -1000};
        ssize_t n;
        int fd, field = 3;

        snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        ck_assert_msg(fd >= 0, "%s: %m", path);
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        ck_assert_int_gt(n, 0);
        buf[n] = '\0';
        p = strrchr(buf, ')');
        ck_assert_ptr_nonnull(p);
        for (char *t = strtok_r(p + 1, " \n", &save); t; t = strtok_r(NULL, " \n", &save), field++)
                if (field == 18)
                        r.priority = strtol(t, NULL, 10);
                else if (field == 19)
                        r.nice = strtol(t, NULL, 10);
                else if (field == 41)
                        r.policy = strtol(t, NULL, 10);
        ck_assert_int_ne(r.policy, -1000);
        return r;
}

/* ioprio_get(2) directly: class << 13 | data. */
static int raw_ioprio(pid_t tid) {
        long v = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, tid);

        ck_assert_int_ge(v, 0);
        return (int)v;
}

/* Checks that thread tid of pid is in state s, three ways: apply_get_thread_sched(),
 * /proc/PID/task/TID/stat and ioprio_get(2). */
static void expect_sched(pid_t pid, pid_t tid, const ThreadSched *s) {
        ThreadSched got;
        StatSched st = stat_sched(pid, tid);

        ck_assert_int_eq(apply_get_thread_sched(tid, &got), 0);
        ck_assert_int_eq(got.policy, s->policy);
        ck_assert_uint_eq(got.priority, s->priority);
        ck_assert_int_eq(got.reset_on_fork, s->reset_on_fork);
        ck_assert_int_eq(got.io_class, s->io_class);
        ck_assert_uint_eq(got.io_level, s->io_level);
        ck_assert(apply_sched_equal(&got, s));

        ck_assert_int_eq(st.policy, s->policy);
        if (s->policy == SCHED_FIFO || s->policy == SCHED_RR)
                /* proc(5): -1 - rt_priority for real-time tasks */
                ck_assert_int_eq(st.priority, -1 - (long)s->priority);
        else {
                ck_assert_int_eq(got.nice, s->nice);
                ck_assert_int_eq(st.nice, s->nice);
                ck_assert_int_eq(st.priority, 20 + s->nice);
        }
        ck_assert_int_eq(raw_ioprio(tid), (s->io_class << 13) | (int)s->io_level);
}

START_TEST(test_sched_states) {
        static const ThreadSched states[] = {
                {.policy = SCHED_BATCH, .nice = 5, .io_class = APPLY_IOPRIO_CLASS_BE, .io_level = 7},
                {.policy = SCHED_OTHER,
                 .nice = -7,
                 .reset_on_fork = true,
                 .io_class = APPLY_IOPRIO_CLASS_IDLE},
                {.policy = SCHED_IDLE, .nice = 3, .io_class = APPLY_IOPRIO_CLASS_BE, .io_level = 0},
                {.policy = SCHED_FIFO, .priority = 10, .io_class = APPLY_IOPRIO_CLASS_RT, .io_level = 2},
                {.policy = SCHED_RR,
                 .priority = 99,
                 .reset_on_fork = true,
                 .io_class = APPLY_IOPRIO_CLASS_RT},
                {.policy = SCHED_FIFO, .priority = 1, .io_class = APPLY_IOPRIO_CLASS_BE, .io_level = 4},
                {.policy = SCHED_OTHER, .nice = 19, .io_class = APPLY_IOPRIO_CLASS_NONE},
        };
        ThreadSched orig, eff;
        Sleeper sl;

        sleeper_start(&sl);
        ck_assert_int_eq(apply_get_thread_sched(sl.tid, &orig), 0);
        /* What a new thread of this test has: whatever the test runs under, consistently. */
        expect_sched(getpid(), sl.tid, &orig);

        for (size_t i = 0; i < ELEMENTSOF(states); i++) {
                ck_assert_int_eq(apply_set_thread_sched(NULL, sl.tid, &states[i], &eff), 0);
                ck_assert_msg(
                        apply_sched_equal(&eff, &states[i]),
                        "state %zu: read back policy %d priority %u nice %d reset %d io %d/%u", i,
                        eff.policy, eff.priority, eff.nice, eff.reset_on_fork, eff.io_class, eff.io_level);
                expect_sched(getpid(), sl.tid, &states[i]);
        }

        /* Only that thread changed. */
        {
                ThreadSched self;
                ck_assert_int_eq(apply_get_thread_sched(gettid(), &self), 0);
                ck_assert(apply_sched_equal(&self, &orig));
        }

        /* Restore what it had, as the daemon would. */
        ck_assert_int_eq(apply_set_thread_sched(NULL, sl.tid, &orig, NULL), 0);
        expect_sched(getpid(), sl.tid, &orig);
        sleeper_stop(&sl);
}
END_TEST

START_TEST(test_sched_ioprio_alone) {
        int cl = -1;
        unsigned lvl = 99;
        Sleeper sl;
        ThreadSched before, after;

        sleeper_start(&sl);
        ck_assert_int_eq(apply_get_thread_sched(sl.tid, &before), 0);
        ck_assert_int_eq(apply_set_thread_ioprio(sl.tid, APPLY_IOPRIO_CLASS_BE, 6), 0);
        ck_assert_int_eq(raw_ioprio(sl.tid), (APPLY_IOPRIO_CLASS_BE << 13) | 6);
        ck_assert_int_eq(apply_get_thread_ioprio(sl.tid, &cl, &lvl), 0);
        ck_assert_int_eq(cl, APPLY_IOPRIO_CLASS_BE);
        ck_assert_uint_eq(lvl, 6);
        /* The scheduling class is not touched. */
        ck_assert_int_eq(stat_sched(getpid(), sl.tid).policy, before.policy);

        ck_assert_int_eq(apply_set_thread_ioprio(sl.tid, APPLY_IOPRIO_CLASS_BE, 8), -ERANGE);
        ck_assert_int_eq(apply_set_thread_ioprio(sl.tid, APPLY_IOPRIO_CLASS_NONE, 4), -ERANGE);
        ck_assert_int_eq(apply_set_thread_ioprio(sl.tid, 4, 0), -EINVAL);
        ck_assert_int_eq(raw_ioprio(sl.tid), (APPLY_IOPRIO_CLASS_BE << 13) | 6);

        ck_assert_int_eq(apply_set_thread_ioprio(sl.tid, before.io_class, before.io_level), 0);
        ck_assert_int_eq(apply_get_thread_sched(sl.tid, &after), 0);
        ck_assert(apply_sched_equal(&after, &before));
        sleeper_stop(&sl);
}
END_TEST

/* Forks a child from the calling thread and returns the child's stat fields. */
static StatSched child_sched(void) {
        pid_t parent = getpid(), c;
        StatSched st;
        int p[2], status;
        char ok;

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        c = fork();
        ck_assert_int_ge(c, 0);
        if (c == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent || write(p[1], "x", 1) != 1)
                        _exit(1);
                for (;;)
                        pause();
        }
        close(p[1]);
        ck_assert_int_eq(read(p[0], &ok, 1), 1);
        close(p[0]);
        st = stat_sched(c, c);
        ck_assert_int_eq(kill(c, SIGKILL), 0);
        ck_assert_int_eq(waitpid(c, &status, 0), c);
        return st;
}

START_TEST(test_sched_reset_on_fork) {
        ThreadSched orig, s;
        StatSched st;

        /* On the calling thread (tid 0), since fork() copies the forking thread. */
        ck_assert_int_eq(apply_get_thread_sched(0, &orig), 0);
        s = orig;

        /* Real-time without reset-on-fork: the child inherits it. */
        s.policy = SCHED_FIFO;
        s.priority = 3;
        s.nice = 0;
        s.reset_on_fork = false;
        ck_assert_int_eq(apply_set_thread_sched(NULL, 0, &s, NULL), 0);
        st = child_sched();
        ck_assert_int_eq(st.policy, SCHED_FIFO);
        ck_assert_int_eq(st.priority, -4);

        /* With it: the child starts as SCHED_OTHER. */
        s.reset_on_fork = true;
        ck_assert_int_eq(apply_set_thread_sched(NULL, 0, &s, NULL), 0);
        expect_sched(getpid(), gettid(), &s);
        st = child_sched();
        ck_assert_int_eq(st.policy, SCHED_OTHER);
        ck_assert_int_eq(st.nice, 0);

        /* A negative nice is reset to 0 in children too; without the flag it is inherited. */
        s.policy = SCHED_OTHER;
        s.priority = 0;
        s.nice = -6;
        ck_assert_int_eq(apply_set_thread_sched(NULL, 0, &s, NULL), 0);
        ck_assert_int_eq(child_sched().nice, 0);
        s.reset_on_fork = false;
        ck_assert_int_eq(apply_set_thread_sched(NULL, 0, &s, NULL), 0);
        ck_assert_int_eq(child_sched().nice, -6);

        ck_assert_int_eq(apply_set_thread_sched(NULL, 0, &orig, NULL), 0);
        expect_sched(getpid(), gettid(), &orig);
}
END_TEST

START_TEST(test_sched_invalid) {
        static const struct {
                ThreadSched s;
                int error;
        } bad[] = {
                {{.policy = SCHED_FIFO, .priority = 0}, -ERANGE},
                {{.policy = SCHED_RR, .priority = 100}, -ERANGE},
                {{.policy = SCHED_OTHER, .priority = 1}, -ERANGE},
                {{.policy = SCHED_IDLE, .priority = 5}, -ERANGE},
                {{.policy = SCHED_BATCH, .nice = 20}, -ERANGE},
                {{.policy = SCHED_OTHER, .nice = -21}, -ERANGE},
                {{.policy = SCHED_OTHER, .io_class = 4}, -EINVAL},
                {{.policy = SCHED_OTHER, .io_class = -1}, -EINVAL},
                {{.policy = SCHED_OTHER, .io_class = APPLY_IOPRIO_CLASS_BE, .io_level = 8}, -ERANGE},
                {{.policy = SCHED_OTHER, .io_class = APPLY_IOPRIO_CLASS_NONE, .io_level = 1}, -ERANGE},
                {{.policy = 6 /* SCHED_DEADLINE */}, -EOPNOTSUPP},
                {{.policy = 4 /* SCHED_ISO, never merged */}, -EINVAL},
                {{.policy = -1}, -EINVAL},
        };
        ThreadSched before, after, eff = {.policy = 42};
        Sleeper sl;

        sleeper_start(&sl);
        ck_assert_int_eq(apply_get_thread_sched(sl.tid, &before), 0);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ck_assert_int_eq(apply_sched_validate(&bad[i].s), bad[i].error);
                ck_assert_int_eq(apply_set_thread_sched(NULL, sl.tid, &bad[i].s, &eff), bad[i].error);
        }
        ck_assert_int_eq(apply_sched_validate(NULL), -EINVAL);
        ck_assert_int_eq(eff.policy, 42); /* never written */
        /* Nothing reached the kernel. */
        ck_assert_int_eq(apply_get_thread_sched(sl.tid, &after), 0);
        ck_assert(apply_sched_equal(&after, &before));
        expect_sched(getpid(), sl.tid, &before);
        sleeper_stop(&sl);
}
END_TEST

START_TEST(test_sched_names) {
        static const char *const policies[] = {"other", "batch", "idle", "fifo", "rr"};
        static const char *const classes[] = {"realtime", "best-effort", "idle"};

        for (size_t i = 0; i < ELEMENTSOF(policies); i++) {
                int p = apply_sched_policy_from_string(policies[i]);
                ck_assert_int_ge(p, 0);
                ck_assert_str_eq(apply_sched_policy_to_string(p), policies[i]);
        }
        ck_assert_int_eq(apply_sched_policy_from_string("fifo"), SCHED_FIFO);
        ck_assert_int_eq(apply_sched_policy_from_string("batch"), SCHED_BATCH);
        ck_assert_int_eq(apply_sched_policy_from_string("FIFO"), -EINVAL);
        ck_assert_int_eq(apply_sched_policy_from_string("deadline"), -EINVAL);
        ck_assert_int_eq(apply_sched_policy_from_string(NULL), -EINVAL);
        ck_assert_str_eq(apply_sched_policy_to_string(6), "deadline");
        ck_assert_ptr_null(apply_sched_policy_to_string(4));

        for (size_t i = 0; i < ELEMENTSOF(classes); i++) {
                int c = apply_ioprio_class_from_string(classes[i]);
                ck_assert_int_gt(c, 0);
                ck_assert_str_eq(apply_ioprio_class_to_string(c), classes[i]);
        }
        ck_assert_int_eq(apply_ioprio_class_from_string("realtime"), APPLY_IOPRIO_CLASS_RT);
        ck_assert_int_eq(apply_ioprio_class_from_string("none"), -EINVAL);
        ck_assert_int_eq(apply_ioprio_class_from_string("be"), -EINVAL);
        ck_assert_str_eq(apply_ioprio_class_to_string(APPLY_IOPRIO_CLASS_NONE), "none");
        ck_assert_ptr_null(apply_ioprio_class_to_string(4));
        ck_assert_ptr_null(apply_ioprio_class_to_string(-1));
}
END_TEST

START_TEST(test_sched_vanished) {
        ThreadSched s = {.policy = SCHED_BATCH}, got = {.policy = 42};
        int cl = 42;
        Sleeper sl;
        pid_t tid;

        sleeper_start(&sl);
        tid = sl.tid;
        sleeper_stop(&sl);

        ck_assert_int_eq(apply_get_thread_sched(tid, &got), APPLY_GONE);
        ck_assert_int_eq(apply_set_thread_sched(NULL, tid, &s, &got), APPLY_GONE);
        ck_assert_int_eq(apply_get_thread_ioprio(tid, &cl, NULL), APPLY_GONE);
        ck_assert_int_eq(apply_set_thread_ioprio(tid, APPLY_IOPRIO_CLASS_BE, 1), APPLY_GONE);
        /* A vanished thread asking for real time is still just gone. */
        s.policy = SCHED_FIFO;
        s.priority = 1;
        ck_assert_int_eq(apply_set_thread_sched(NULL, tid, &s, &got), APPLY_GONE);
        ck_assert_int_eq(got.policy, 42);
        ck_assert_int_eq(cl, 42);
}
END_TEST

/* ---- RT_GROUP_SCHED: real time in a child cpu cgroup without runtime ---- */

static pid_t runner_pid; /* names the cgroups this run creates: affinityd-test-PID-... */

/* Unchecked teardown (in the runner): whatever a failed test left in the cpu hierarchy goes
 * back to the root cgroup, and the test cgroups are removed. */
static void rt_teardown(void) {
        _cleanup_free_ char *mnt = v1_mount("cpu");
        _cleanup_closedir_ DIR *d = NULL;
        char prefix[64];
        struct dirent *de;

        if (!mnt || !(d = opendir(mnt)))
                return;
        snprintf(prefix, sizeof(prefix), "affinityd-test-%d-", (int)runner_pid);
        while ((de = readdir(d)))
                if (strncmp(de->d_name, prefix, strlen(prefix)) == 0) {
                        char path[PATH_MAX], to[PATH_MAX], line[64];
                        FILE *f, *w;

                        snprintf(path, sizeof(path), "%s/%s/cgroup.procs", mnt, de->d_name);
                        snprintf(to, sizeof(to), "%s/cgroup.procs", mnt);
                        f = fopen(path, "re");
                        while (f && fgets(line, sizeof(line), f))
                                if ((w = fopen(to, "we"))) {
                                        fputs(line, w);
                                        fclose(w);
                                }
                        if (f)
                                fclose(f);
                        snprintf(path, sizeof(path), "%s/%s", mnt, de->d_name);
                        if (rmdir(path) < 0)
                                fprintf(stderr, "test-apply-sched: could not remove %s: %m\n", path);
                }
}

START_TEST(test_sched_rt_no_runtime) {
        _cleanup_free_ char *mnt = v1_mount("cpu"), *why = NULL, *orig_dir = NULL, *orig_path = NULL;
        char dir[PATH_MAX], name[64], buf[32];
        ThreadSched orig, rt, eff = {.policy = 42};
        pid_t parent = getpid(), c;
        int status;

        ck_assert_ptr_nonnull(mnt);
        snprintf(name, sizeof(name), "affinityd-test-%d-rt", (int)runner_pid);
        snprintf(dir, sizeof(dir), "%s/%s", mnt, name);
        ck_assert_msg(mkdir(dir, 0755) == 0, "mkdir %s: %m", dir);
        /* A new child cgroup starts without real-time runtime. */
        ck_assert_int_eq(read_long(dir, "cpu.rt_runtime_us"), 0);

        c = fork();
        ck_assert_int_ge(c, 0);
        if (c == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(0);
                for (;;)
                        pause();
        }
        /* Where it starts (the test's own cpu cgroup), to move it back there at the end. */
        ck_assert_int_eq(cgroup_find_v1(NULL, c, 0, "cpu", &orig_dir, &orig_path), 0);
        ck_assert_int_eq(apply_get_thread_sched(c, &orig), 0);
        ck_assert_int_eq(orig.policy, SCHED_OTHER);

        snprintf(buf, sizeof(buf), "%d", (int)c);
        write_str(dir, "cgroup.procs", buf);

        /* SCHED_FIFO: EPERM from the kernel, even as root, reported as the named outcome. */
        rt = orig;
        rt.policy = SCHED_FIFO;
        rt.priority = 1;
        rt.nice = 0;
        ck_assert_int_eq(apply_set_thread_sched(NULL, c, &rt, &eff), APPLY_RT_NO_RUNTIME);
        ck_assert_int_eq(eff.policy, 42);
        ck_assert_int_eq(stat_sched(c, c).policy, SCHED_OTHER);
        rt.policy = SCHED_RR;
        ck_assert_int_eq(apply_set_thread_sched(NULL, c, &rt, NULL), APPLY_RT_NO_RUNTIME);
        ck_assert_int_eq(stat_sched(c, c).policy, SCHED_OTHER);
        ck_assert_int_eq(apply_explain_rt_no_runtime(NULL, c, &why), 0);
        {
                char want[256];
                snprintf(
                        want, sizeof(want),
                        "RT_GROUP_SCHED: cgroup /%s has no real-time runtime (cpu.rt_runtime_us is 0)",
                        name);
                ck_assert_str_eq(why, want);
        }
        /* Other classes are not affected. */
        rt.policy = SCHED_BATCH;
        rt.priority = 0;
        ck_assert_int_eq(apply_set_thread_sched(NULL, c, &rt, NULL), 0);
        ck_assert_int_eq(stat_sched(c, c).policy, SCHED_BATCH);

        /* Granted some runtime, the same request succeeds: it really was the runtime. */
        write_str(dir, "cpu.rt_runtime_us", "10000");
        rt.policy = SCHED_FIFO;
        rt.priority = 1;
        ck_assert_int_eq(apply_set_thread_sched(NULL, c, &rt, &eff), 0);
        ck_assert_int_eq(eff.policy, SCHED_FIFO);
        ck_assert_int_eq(stat_sched(c, c).policy, SCHED_FIFO);
        ck_assert_int_eq(apply_explain_rt_no_runtime(NULL, c, &why), -EAGAIN);

        /* Restore: its class, the cgroup's runtime (a real-time task must leave first), its
         * cgroup; then the cgroup goes. */
        ck_assert_int_eq(apply_set_thread_sched(NULL, c, &orig, NULL), 0);
        expect_sched(c, c, &orig);
        write_str(dir, "cpu.rt_runtime_us", "0");
        snprintf(buf, sizeof(buf), "%d", (int)c);
        write_str(orig_dir, "cgroup.procs", buf);
        {
                _cleanup_free_ char *back = NULL, *p = NULL;
                ck_assert_int_eq(cgroup_find_v1(NULL, c, 0, "cpu", &back, &p), 0);
                ck_assert_str_eq(p, orig_path);
        }
        ck_assert_int_eq(kill(c, SIGKILL), 0);
        ck_assert_int_eq(waitpid(c, &status, 0), c);
        ck_assert_msg(rmdir(dir) == 0, "rmdir %s: %m", dir);
}
END_TEST

/*
 * Two modes, two meson tests: "threads" (the default) sets real threads' affinity and
 * scheduling; "rt-cgroup" needs root and a v1 cpu hierarchy with cpu.rt_runtime_us
 * (CONFIG_RT_GROUP_SCHED) and exits 77 (a skip) without them.
 */
int main(int argc, char **argv) {
        const char *mode = argc > 1 ? argv[1] : "threads";
        _cleanup_free_ char *cpu_mnt = NULL;
        Suite *s;
        SRunner *sr;
        int failed;

        runner_pid = getpid();

        if (streq(mode, "threads")) {
                TCase *tc = tcase_create("threads"), *sched = tcase_create("sched");

                s = suite_create("apply-sched");
                tcase_add_checked_fixture(tc, setup, teardown);
                tcase_add_test(tc, test_threads_sequence);
                tcase_add_test(tc, test_other_process);
                tcase_add_test(tc, test_refused_keeps_mask);
                tcase_add_test(tc, test_narrowed);
                tcase_add_test(tc, test_vanished_thread);
                tcase_add_test(tc, test_restore);
                suite_add_tcase(s, tc);

                tcase_add_test(sched, test_sched_states);
                tcase_add_test(sched, test_sched_ioprio_alone);
                tcase_add_test(sched, test_sched_reset_on_fork);
                tcase_add_test(sched, test_sched_invalid);
                tcase_add_test(sched, test_sched_names);
                tcase_add_test(sched, test_sched_vanished);
                suite_add_tcase(s, sched);
        } else if (streq(mode, "rt-cgroup")) {
                char f[PATH_MAX] = "";
                TCase *rt;

                cpu_mnt = v1_mount("cpu");
                if (cpu_mnt)
                        snprintf(f, sizeof(f), "%s/cpu.rt_runtime_us", cpu_mnt);
                if (geteuid() != 0 || !cpu_mnt || access(f, F_OK) != 0) {
                        printf("SKIP: %s\n",
                               geteuid() != 0     ? "not root"
                                       : !cpu_mnt ? "no v1 cpu hierarchy"
                                                  : "no cpu.rt_runtime_us (no CONFIG_RT_GROUP_SCHED)");
                        return 77;
                }
                s = suite_create("apply-sched");
                rt = tcase_create("rt-cgroup");
                tcase_add_unchecked_fixture(rt, NULL, rt_teardown);
                tcase_add_test(rt, test_sched_rt_no_runtime);
                suite_add_tcase(s, rt);
        } else {
                fprintf(stderr, "usage: %s [threads|rt-cgroup]\n", argv[0]);
                return EXIT_FAILURE;
        }

        sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
