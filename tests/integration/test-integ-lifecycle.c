/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The process lifecycle at its edges, made deterministic by stopping the daemon (SIGSTOP) while
 * the kernel queues its events, and by reaching into its proc connector socket (a duplicate
 * from pidfd_getfd(2)): reading events from it loses them for the daemon without an ENOBUFS;
 * shrinking its receive buffer provokes one.
 *
 *  - A PID reused after its tracked process's EXIT was lost: the unrelated new process's
 *    children and threads are not adopted into the old policy.
 *  - Zombies (exited, not reaped) are not placed: ProcessesVanished, not ProcessesPlaced.
 *  - A thread that moved itself after placement is left alone by reloads that don't change its
 *    target and by rescans after lost events; a changed policy moves it.
 *  - A reload that removes a policy restores threads created after placement too; one that
 *    shifts the other policies' indexes keeps their processes placed and tracked.
 *  - A leader's pthread_exit() while another thread lives is no exit of the process.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sched.h>

#include "harness.h"
#include "macro.h"

static void write_policy(
        Harness *h, const char *file, const char *policy, const char *comm, const char *cpus) {
        harness_write_policy(
                h, file,
                "policies:\n"
                "  - name: %s\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"%s\"\n",
                policy, comm, cpus);
}

static void wait_state(pid_t pid, char state) {
        uint64_t deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;

        while (harness_proc_state(pid) != state) {
                ck_assert_msg(harness_now_usec() < deadline, "%d never reached state %c", (int)pid, state);
                usleep(5 * 1000);
        }
}

/* Field 22 of /proc/PID/stat: the start time in clock ticks since boot. */
static unsigned long long starttime_of(pid_t pid) {
        char path[64], buf[1024];
        unsigned long long t = 0;
        const char *p;
        FILE *f;
        size_t n;

        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        f = fopen(path, "re");
        ck_assert_msg(f, "can't open %s: %s", path, strerror(errno));
        n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        p = strrchr(buf, ')');
        ck_assert_msg(
                p &&
                        sscanf(p + 2,
                               "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d "
                               "%llu",
                               &t) == 1,
                "can't parse %s", path);
        return t;
}

/* Reads (and so takes away from the daemon) every event queued in its socket. */
static unsigned steal_events(int fd) {
        unsigned n = 0;

        for (;;) {
                char buf[8192];
                ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT);

                if (k < 0 && errno == ENOBUFS)
                        continue;
                if (k < 0) {
                        ck_assert_msg(errno == EAGAIN, "recv: %s", strerror(errno));
                        return n;
                }
                n++;
        }
}

static bool listed(Harness *h, pid_t pid) {
        ProcessEntry *e = NULL;
        size_t n = harness_list_processes(h, &e);
        bool found = process_entries_find(e, n, pid) != NULL;

        process_entries_free(e, n);
        return found;
}

/* ---- a process created with a chosen PID ---- */

static char thread_stack[64 * 1024] __attribute__((aligned(16)));

static int thread_main(void *arg) {
        for (;;)
                syscall(SYS_pause);
        return 0;
}

/*
 * Creates, with PID pid (clone3(2) set_tid), a process that does not exec — a copy of this
 * test process on CPU 0 — and has it either fork a child (fork_child) or start a thread. Only
 * raw system calls run in the copies. Writes the new child's PID (or the thread's TID) into
 * *ret_other. Returns the PID, or -errno (-EEXIST: the PID is taken again).
 */
static pid_t start_with_pid(pid_t pid, bool fork_child, pid_t *ret_other) {
        struct clone_args args = {.exit_signal = SIGCHLD, .set_tid = (uintptr_t)&pid, .set_tid_size = 1};
        pid_t parent = getpid(), r, other = 0;
        int p[2];

        ck_assert(pipe2(p, O_CLOEXEC) == 0);
        r = (pid_t)syscall(SYS_clone3, &args, sizeof args);
        if (r < 0) {
                int e = errno;
                close(p[0]);
                close(p[1]);
                return -e;
        }
        if (r == 0) {
                cpu_set_t s;

                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(125);
                CPU_ZERO(&s);
                CPU_SET(0, &s);
                if (sched_setaffinity(0, sizeof s, &s) < 0)
                        _exit(124);
                if (fork_child) {
                        struct clone_args fargs = {.exit_signal = SIGCHLD};
                        pid_t me = (pid_t)syscall(SYS_getpid);

                        other = (pid_t)syscall(SYS_clone3, &fargs, sizeof fargs);
                        if (other == 0) {
                                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                                if ((pid_t)syscall(SYS_getppid) != me)
                                        _exit(125);
                                for (;;)
                                        syscall(SYS_pause);
                        }
                } else
                        other =
                                clone(thread_main, thread_stack + sizeof thread_stack,
                                      CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
                                              CLONE_SYSVSEM,
                                      NULL);
                if (other <= 0 || write(p[1], &other, sizeof other) != sizeof other)
                        _exit(123);
                for (;;)
                        syscall(SYS_pause);
        }
        close(p[1]);
        ck_assert_msg(
                read(p[0], &other, sizeof other) == sizeof other, "the PID-%d process failed", (int)pid);
        close(p[0]);
        *ret_other = other;
        return r;
}

/*
 * Item: a tracked process exits and its EXIT event is lost (read away from the daemon's socket
 * while it is stopped); its PID is reused by an unrelated process that does not exec, which
 * forks a child (round 0) or starts a thread (round 1). The daemon must check the identity of
 * its stale entry (start time) and drop it instead of adopting the child or placing the thread
 * under the dead process's policy.
 */
START_TEST(test_reused_pid_after_lost_exit) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);

        write_policy(h, "50-stale.yaml", "stale", name, "1");
        harness_start_daemon(h);

        for (int round = 0; round < 2; round++) {
                _cleanup_close_ int fd = -EBADF;
                _cleanup_free_ char *cpus = NULL;
                pid_t x = -EEXIST, other = 0;
                unsigned long long started = 0;
                Child *a;

                for (unsigned attempt = 0; x == -EEXIST && attempt < 10; attempt++) {
                        a = harness_spawn_threads(h, name, 0, "0");
                        harness_wait_process_cpus(h, a->pid, "1", 1);
                        harness_wait_listed(h, a->pid, "stale");
                        started = starttime_of(a->pid);
                        /* PID + start time is the identity, and the start time counts clock
                         * ticks: the new process must start at least a tick later to be told
                         * apart (a PID reused within the same tick is beyond it). */
                        usleep(2 * 1000000 / sysconf(_SC_CLK_TCK));

                        fd = harness_daemon_proc_connector_fd(h);
                        harness_pause_daemon(h);
                        child_kill(a);
                        (void)steal_events(fd); /* a's EXIT: lost for the daemon */
                        x = start_with_pid(a->pid, round == 0, &other);
                        if (x == -EEXIST) { /* someone took the PID meanwhile: again */
                                harness_resume_daemon(h);
                                close(fd);
                                fd = -EBADF;
                        }
                }
                ck_assert_msg(x > 0, "clone3 with set_tid: %s", strerror((int)-x));
                ck_assert_msg(
                        starttime_of(x) != started, "PID %d reused within the same clock tick", (int)x);
                harness_resume_daemon(h);
                harness_barrier(h); /* the new process's FORK events are handled */

                cpus = harness_read_task_cpus(round == 0 ? other : x, other);
                ck_assert_msg(
                        cpus && streq(cpus, "0"), "%s %d of the process that reused PID %d was moved to %s",
                        round == 0 ? "child" : "thread", (int)other, (int)x, strna(cpus));
                ck_assert_msg(!listed(h, x), "the process that reused PID %d is listed", (int)x);
                ck_assert_msg(!listed(h, other), "%d is listed", (int)other);

                (void)kill(x, SIGKILL);
                (void)waitpid(x, NULL, 0);
        }
}
END_TEST

/*
 * Zombies: sched_setaffinity(2) succeeds on them, but an exited process was not placed. One
 * exited before the daemon started (the scan skips it), one exec'd and exited while the daemon
 * was stopped (handled late: matched, and vanished).
 */
START_TEST(test_zombies_are_not_placed) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        const char *path = harness_install(h, "integ-exit", name);
        ManagerProps p0 = {}, p = {};
        pid_t z1, z2;

        write_policy(h, "50-zombie.yaml", "zombie", name, "1");
        z1 = harness_spawn_quick(h, path, NULL, false);
        wait_state(z1, 'Z');
        harness_start_daemon(h);
        harness_get_props(h, &p0);
        ck_assert_msg(!listed(h, z1), "zombie %d is tracked", (int)z1);
        ck_assert_uint_eq(p0.processes_placed, 0);
        ck_assert_uint_eq(p0.processes_matched, p0.processes_vanished);

        harness_pause_daemon(h);
        z2 = harness_spawn_quick(h, path, NULL, false);
        wait_state(z2, 'Z');
        harness_resume_daemon(h);
        harness_barrier(h);
        harness_get_props(h, &p);
        printf("%s: ProcessesMatched +%" PRIu64 ", ProcessesPlaced +%" PRIu64 ", ProcessesVanished +%" PRIu64
               " (1 zombie, 1 barrier)\n",
               tcase_name(), p.processes_matched - p0.processes_matched,
               p.processes_placed - p0.processes_placed, p.processes_vanished - p0.processes_vanished);
        ck_assert_uint_eq(p.processes_matched, p0.processes_matched + 1 + harness_n_barriers(h));
        ck_assert_uint_eq(p.processes_placed, p0.processes_placed + harness_n_barriers(h));
        ck_assert_uint_eq(p.processes_vanished, p0.processes_vanished + 1);
        ck_assert_msg(!listed(h, z2), "zombie %d is tracked", (int)z2);
        ck_assert_uint_eq(harness_reap_quick(h), 2);
        manager_props_done(&p);
        manager_props_done(&p0);
}
END_TEST

/* Sets the affinity of thread tid to CPU cpu, as the thread itself would. */
static void pin(pid_t tid, int cpu) {
        cpu_set_t s;

        CPU_ZERO(&s);
        CPU_SET(cpu, &s);
        ck_assert_msg(
                sched_setaffinity(tid, sizeof s, &s) == 0, "sched_setaffinity(%d): %s", (int)tid,
                strerror(errno));
}

static void assert_pinned(Harness *h, Child *c, pid_t tid, const char *pinned, const char *others) {
        TaskInfo *t = NULL;
        int n = harness_read_tasks(c->pid, &t);

        ck_assert_int_gt(n, 1);
        for (int i = 0; i < n; i++)
                ck_assert_msg(
                        streq(t[i].cpus, t[i].tid == tid ? pinned : others), "thread %d is on %s, want %s",
                        (int)t[i].tid, t[i].cpus, t[i].tid == tid ? pinned : others);
        free(t);
}

/*
 * A thread that moved itself after placement keeps its choice through a reload that changes
 * nothing for it and through a rescan after lost events; only a change of its policy's CPUs
 * (its target) moves it again.
 */
START_TEST(test_pinned_thread_left_alone) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h), *other = harness_unique_name(h);
        const char *quick = harness_install(h, "integ-exit", other);
        ManagerProps p0 = {}, p = {};
        uint64_t deadline;
        TaskInfo *t = NULL;
        pid_t tid;
        Child *c;
        int fd, size;

        write_policy(h, "50-pin.yaml", "pin", name, "1");
        harness_start_daemon(h);
        c = harness_spawn_threads(h, name, 3, "0-1");
        harness_wait_process_cpus(h, c->pid, "1", 4);
        /* Threads created after the leader's placement inherit CPU 1 before the daemon handles
         * their FORK events: pinned before that, the late event would place the thread (its
         * first touch). Every event is handled before the pin. */
        harness_barrier(h);
        ck_assert_int_eq(harness_read_tasks(c->pid, &t), 4);
        tid = t[0].tid == c->pid ? t[1].tid : t[0].tid;
        free(t);
        pin(tid, 0);

        /* A reload; another file changed, not this process's policy. */
        write_policy(h, "60-other.yaml", "other", other, "0");
        harness_sighup_reload(h);
        assert_pinned(h, c, tid, "0", "1");

        /* Lost events: the daemon's receive buffer shrunk while it is stopped, overrun by a few
         * hundred events, then grown back. */
        harness_get_props(h, &p0);
        fd = harness_daemon_proc_connector_fd(h);
        harness_pause_daemon(h);
        size = 1;
        ck_assert(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size) == 0);
        for (unsigned i = 0; i < 100; i++)
                harness_spawn_quick(h, quick, NULL, true);
        size = 8 * 1024 * 1024;
        ck_assert(setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) == 0);
        close(fd);
        harness_resume_daemon(h);
        deadline = harness_now_usec() + HARNESS_TIMEOUT_USEC;
        for (;;) {
                harness_get_props(h, &p);
                if (p.rescans > p0.rescans)
                        break;
                manager_props_done(&p);
                ck_assert_msg(harness_now_usec() < deadline, "no rescan after lost events");
                usleep(20 * 1000);
        }
        ck_assert_uint_gt(p.events_lost, p0.events_lost);
        manager_props_done(&p);
        harness_barrier(h);
        assert_pinned(h, c, tid, "0", "1");

        /* The policy's CPUs change: every thread's target changed, the pinned one's too. */
        write_policy(h, "50-pin.yaml", "pin", name, "0-1");
        harness_sighup_reload(h);
        harness_assert_process_cpus_now(c->pid, "0-1", 4);
        manager_props_done(&p0);
}
END_TEST

/* A reload that removes the policy gives every thread its original back, threads created after
 * the placement (which inherited the policy's CPUs) included. */
START_TEST(test_restore_threads_created_later) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        Child *c;

        write_policy(h, "50-gone.yaml", "gone", name, "1");
        harness_start_daemon(h);
        c = harness_spawn_threads(h, name, 2, "0");
        harness_wait_process_cpus(h, c->pid, "1", 3);
        child_send(c, "spawn 3");
        free(child_expect_line(c));
        harness_wait_process_cpus(h, c->pid, "1", 6);

        harness_remove_policy(h, "50-gone.yaml");
        ck_assert_msg(harness_reload(h, &error) >= 0, "Reload: %s", strna(error.message));
        harness_assert_process_cpus_now(c->pid, "0", 6);
        ck_assert(!listed(h, c->pid));
}
END_TEST

/*
 * A reload that removes a policy shifts the indexes of the policies after it: the processes of
 * those (a server and the workers it forked, which only follow it) stay tracked under the right
 * policy, and what they create later is placed by it.
 */
START_TEST(test_reload_shifts_policies) {
        Harness *h = harness_new();
        const char *a = harness_unique_name(h), *b = harness_unique_name(h), *w = harness_unique_name(h);
        const char *srv = harness_unique_name(h);
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        pid_t workers[4];
        unsigned n_workers = 0;
        Child *ca, *cb, *server;

        write_policy(h, "10-alpha.yaml", "alpha", a, "1");
        harness_write_policy(
                h, "20-beta.yaml",
                "policies:\n"
                "  - name: beta\n"
                "    match:\n"
                "      comm: [\"%s\", \"%s\"]\n"
                "    cpus: \"0\"\n",
                b, srv);
        harness_start_daemon(h);
        ca = harness_spawn_threads(h, a, 2, "0-1");
        cb = harness_spawn_threads(h, b, 2, "1");
        server = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-prefork",
                        .name = srv,
                        .args = ARGS("-m", "2", "-r", w),
                        .initial_cpus = "1",
                        .pipes = true});
        for (;;) {
                _cleanup_free_ char *line = child_expect_line(server);
                int pid;

                if (streq(line, "ready"))
                        break;
                ck_assert_msg(
                        sscanf(line, "worker %d", &pid) == 1 && n_workers < 2, "bad line \"%s\"", line);
                workers[n_workers++] = pid;
        }
        harness_wait_process_cpus(h, ca->pid, "1", 3);
        harness_wait_process_cpus(h, cb->pid, "0", 3);
        for (unsigned i = 0; i < n_workers; i++) {
                harness_wait_comm(h, workers[i], w);
                harness_wait_process_cpus(h, workers[i], "0", 1);
                harness_wait_listed(h, workers[i], "beta");
        }

        harness_remove_policy(h, "10-alpha.yaml");
        ck_assert_msg(harness_reload(h, &error) >= 0, "Reload: %s", strna(error.message));
        harness_assert_process_cpus_now(ca->pid, "0-1", 3); /* restored */
        harness_wait_listed(h, cb->pid, "beta");
        for (unsigned i = 0; i < n_workers; i++)
                harness_wait_listed(h, workers[i], "beta");

        child_send(cb, "spawn 2");
        free(child_expect_line(cb));
        harness_wait_process_cpus(h, cb->pid, "0", 5);
        child_send(server, "fork-main 2");
        for (;;) {
                _cleanup_free_ char *line = child_expect_line(server);
                int pid;

                if (streq(line, "done"))
                        break;
                ck_assert(sscanf(line, "worker %d", &pid) == 1 && n_workers < ELEMENTSOF(workers));
                workers[n_workers++] = pid;
        }
        for (unsigned i = 2; i < n_workers; i++) {
                harness_wait_process_cpus(h, workers[i], "0", 1);
                harness_wait_listed(h, workers[i], "beta");
        }
}
END_TEST

/*
 * A leader that calls pthread_exit() while another thread lives on: its EXIT is no exit of the
 * process. Placed with one thread (-n 0), its only other thread is the one it creates right
 * before, which the daemon knows from its FORK event alone. The process stays tracked, a thread
 * created later from a creator that pinned itself to CPU 0 is placed, and once its last thread
 * exits it is forgotten.
 */
START_TEST(test_leader_pthread_exit) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        char *line;
        int reader = 0, tid = 0;
        char before[64], after[64];
        Child *c;

        write_policy(h, "50-leader.yaml", "leader", name, "1");
        harness_start_daemon(h);
        c = harness_spawn_threads(h, name, 0, "0");
        harness_wait_process_cpus(h, c->pid, "1", 1);
        harness_wait_listed(h, c->pid, "leader");

        child_send(c, "leader-exit");
        line = child_expect_line(c);
        ck_assert_msg(sscanf(line, "leader-exited %d", &reader) == 1, "bad line \"%s\"", line);
        free(line);
        wait_state(c->pid, 'Z');
        harness_barrier(h); /* the leader's EXIT is handled */
        ck_assert_msg(
                listed(h, c->pid), "%d forgotten when its leader called pthread_exit() (thread %d lives)",
                (int)c->pid, reader);

        child_send(c, "creator");
        free(child_expect_line(c)); /* "creator TID" */
        /* The creator's FORK event is handled before it pins itself: a late one would place it
         * over its own choice (the daemon can't tell the two apart). */
        harness_barrier(h);
        child_send(c, "go 1 0");
        line = child_expect_line(c);
        ck_assert_msg(
                sscanf(line, "spawnedpinned %63s %63s %d", before, after, &tid) == 3, "bad line \"%s\"",
                line);
        free(line);
        ck_assert_str_eq(after, "0");
        harness_wait_process_cpus(h, c->pid, "1", 3); /* zombie leader, reader, new thread */

        child_send(c, "exit");
        ck_assert_int_eq(child_wait(c), 0);
        harness_barrier(h);
        ck_assert_msg(!listed(h, c->pid), "%d still listed after it exited", (int)c->pid);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-lifecycle");

        harness_add_test_tagged(s, test_reused_pid_after_lost_exit, "pidfd");
        harness_add_test(s, test_zombies_are_not_placed);
        harness_add_test_tagged(s, test_pinned_thread_left_alone, "pidfd");
        harness_add_test(s, test_restore_threads_created_later);
        harness_add_test(s, test_reload_shifts_policies);
        harness_add_test(s, test_leader_pthread_exit);
        return harness_main(s);
}
