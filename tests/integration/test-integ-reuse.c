/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Reused PIDs and TIDs never get another task written: the deterministic reproductions, with
 * the daemon stopped (SIGSTOP) while a managed process makes a task that exits, and this test
 * forks until another, unrelated process holds that number; then the daemon goes on with the
 * events it has queued:
 *  - a thread created and joined: its FORK event names a TID that is an unrelated process now;
 *  - a child forked (without exec) and reaped: its FORK event names a PID that is an unrelated
 *    process now;
 *  - a placed thread exits while the event queue is overrun (its EXIT is lost) and its TID is
 *    taken by an unrelated process; with drift-interval: and on-drift: enforce, the drift check
 *    must not "put back" the unrelated process before the rescan has confirmed what is tracked.
 * In each case the unrelated process keeps the mask it was started with (the test's own,
 * harness_own_cpus()), and the managed process still gets its placement.
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

/* Forks at most this many children looking for one number (pid_max is 32768 by default). */
#define REUSE_TRIES 200000

/* Forks (vfork(2): cheap even for a sanitizer build) until a child gets PID target; that child
 * execs sleep(1) (an unrelated program, on the test's own CPUs) and is returned; 0 if the number
 * never came round. Every other child exits at once. Each fork is a FORK and an EXIT event for
 * the stopped daemon's queue: enough of them overrun it. */
static pid_t fork_until(pid_t target_) {
        volatile pid_t target = target_;

        for (volatile unsigned i = 0; i < REUSE_TRIES; i++) {
                pid_t pid = vfork();

                ck_assert_msg(pid >= 0, "vfork: %s", strerror(errno));
                if (pid == 0) {
                        if (getpid() != target)
                                _exit(0);
                        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                        execl("/bin/sleep", "sleep", "600", (char *)NULL);
                        _exit(127);
                }
                if (pid == target)
                        return pid;
                (void)waitpid(pid, NULL, 0);
        }
        return 0;
}

/* Forks n children that exit at once: 2n events. */
static void flood(unsigned n_) {
        volatile unsigned n = n_;

        for (volatile unsigned i = 0; i < n; i++) {
                pid_t pid = vfork();

                ck_assert_msg(pid >= 0, "vfork: %s", strerror(errno));
                if (pid == 0)
                        _exit(0);
                (void)waitpid(pid, NULL, 0);
        }
}

static Child *start_managed(Harness *h, const char *name, unsigned threads) {
        char n[16];
        Child *c;

        snprintf(n, sizeof n, "%u", threads);
        c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = name,
                        .args = ARGS("-n", n),
                        .initial_cpus = "0-1",
                        .pipes = true});
        free(child_expect_line(c)); /* "ready N" */
        harness_wait_process_cpus(h, c->pid, "1", threads + 1);
        return c;
}

/* Sends cmd, expects "WORD NUMBER", returns the number. */
static pid_t command(Child *c, const char *cmd, const char *word) {
        _cleanup_free_ char *line = NULL;
        char got[32];
        int v;

        child_send(c, "%s", cmd);
        line = child_expect_line(c);
        ck_assert_msg(
                sscanf(line, "%31s %d", got, &v) == 2 && streq(got, word), "\"%s\" answered \"%s\"", cmd,
                line);
        return (pid_t)v;
}

/* The unrelated process still has the mask it inherited from the test (fork_until()). */
static void assert_untouched(Harness *h, pid_t pid) {
        _cleanup_free_ char *cpus = harness_read_task_cpus(pid, pid);

        ck_assert_msg(cpus, "the unrelated process %d is gone", (int)pid);
        ck_assert_msg(
                streq(cpus, harness_own_cpus(h)),
                "the unrelated process %d, which took a reused number, was set to %s (started on %s)",
                (int)pid, cpus, harness_own_cpus(h));
}

/* Kills the managed process and the unrelated one (a child of this test). */
static void end_both(Child *c, pid_t other) {
        (void)kill(other, SIGKILL);
        (void)waitpid(other, NULL, 0);
        child_kill(c);
}

static void write_policy(Harness *h, const char *name, bool enforce) {
        harness_write_policy(
                h, "10-reuse.yaml",
                "policies:\n"
                "  - name: reuse\n"
                "    match: {comm: \"%s\"}\n"
                "    cpus: \"1\"\n"
                "%s",
                name, enforce ? "    on-drift: enforce\n" : "");
}

START_TEST(test_reuse_thread_id) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        pid_t tid, other;
        Child *c;

        write_policy(h, name, false);
        harness_start_daemon(h);
        c = start_managed(h, name, 1);

        harness_pause_daemon(h);
        tid = command(c, "ephemeral", "joined");
        other = fork_until(tid);
        ck_assert_msg(other == tid, "TID %d never came round again", (int)tid);
        harness_resume_daemon(h);
        harness_barrier(h);

        assert_untouched(h, other);
        harness_assert_process_cpus_now(c->pid, "1", 2);
        end_both(c, other);
}
END_TEST

START_TEST(test_reuse_child_pid) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        ProcessEntry *e = NULL;
        pid_t child, other;
        size_t n;
        Child *c;

        write_policy(h, name, false);
        harness_start_daemon(h);
        c = start_managed(h, name, 1);

        harness_pause_daemon(h);
        child = command(c, "forkexit", "reaped");
        other = fork_until(child);
        ck_assert_msg(other == child, "PID %d never came round again", (int)child);
        harness_resume_daemon(h);
        harness_barrier(h);

        assert_untouched(h, other);
        n = harness_list_processes(h, &e);
        ck_assert_msg(!process_entries_find(e, n, other), "the unrelated process %d is managed", (int)other);
        process_entries_free(e, n);
        end_both(c, other);
}
END_TEST

START_TEST(test_reuse_after_lost_exit) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *settings = harness_asprintf("%s/affinityd.yaml", harness_config_dir(h));
        ManagerProps p = {};
        pid_t tid, other;
        FILE *f;
        Child *c;

        f = fopen(settings, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs("drift-interval: 100ms\n", f), 0);
        ck_assert_int_eq(fclose(f), 0);
        write_policy(h, name, true);
        harness_start_daemon(h);
        c = start_managed(h, name, 1);
        tid = command(c, "linger", "lingering");
        harness_wait_process_cpus(h, c->pid, "1", 3);

        /* Overrun the stopped daemon's queue, then end the thread: its EXIT is dropped. */
        harness_pause_daemon(h);
        flood(40000);
        ck_assert_int_eq(command(c, "release", "released"), tid);
        other = fork_until(tid);
        ck_assert_msg(other == tid, "TID %d never came round again", (int)tid);
        harness_resume_daemon(h);

        /* Many drift checks' worth of time, and the rescan after the lost events. */
        harness_barrier(h);
        usleep(1000 * 1000);
        harness_barrier(h);
        harness_get_props(h, &p);
        ck_assert_msg(p.events_lost > 0, "the flood did not overrun the daemon's queue");
        manager_props_done(&p);
        assert_untouched(h, other);
        harness_assert_process_cpus_now(c->pid, "1", 2);
        end_both(c, other);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-reuse");

        harness_add_test(s, test_reuse_thread_id);
        harness_add_test(s, test_reuse_child_pid);
        harness_add_test(s, test_reuse_after_lost_exit);
        return harness_main(s);
}
