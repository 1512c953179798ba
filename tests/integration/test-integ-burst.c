/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Processes that exit while the daemon places them, and a burst of 1,000 short-lived matching
 * processes: the daemon stays up and its counters add up once it is idle:
 * ProcessesPlaced + ProcessesVanished == ProcessesMatched.
 *
 * How many processes must count as matched: the proc connector delivers every exec here, and
 * a process that is not reaped yet keeps its /proc/PID/comm (and PID) as a zombie, so every
 * exec'd process the harness reaps only after the counters settled can be matched by comm —
 * ProcessesMatched must grow by exactly their number (plus the barrier processes). Processes
 * reaped at once may be gone before the daemon reads their comm: for those only an upper bound
 * holds. If the kernel dropped events (EventsLost grew), no count can be promised, but the
 * daemon must have rescanned.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "harness.h"
#include "macro.h"

static void write_policy(Harness *h, const char *name) {
        harness_write_policy(
                h, "50-burst.yaml",
                "policies:\n"
                "  - name: burst\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"1\"\n",
                name);
}

/* Checks what must hold once idle, given how many processes were started since baseline
 * (n_kept not reaped until now, n_reaped reaped at once). */
static void check_counters(
        Harness *h, const ManagerProps *p0, uint64_t n_kept, uint64_t n_reaped, ManagerProps *ret) {
        uint64_t barriers = harness_n_barriers(h);
        ManagerProps p = {};

        harness_wait_counters_settled(h, p0->processes_matched + n_kept + barriers, p0, &p);
        harness_assert_daemon_alive(h);
        printf("%s: started %" PRIu64 " kept + %" PRIu64 " reaped + %" PRIu64 " barrier processes: "
               "ProcessesMatched +%" PRIu64 ", ProcessesPlaced +%" PRIu64 ", ProcessesVanished +%" PRIu64
               ", EventsReceived +%" PRIu64 ", EventsLost +%" PRIu64 ", Rescans +%" PRIu64
               ", latency p50/p99/max %" PRIu64 "/%" PRIu64 "/%" PRIu64 " us\n",
               tcase_name(), n_kept, n_reaped, barriers, p.processes_matched - p0->processes_matched,
               p.processes_placed - p0->processes_placed, p.processes_vanished - p0->processes_vanished,
               p.events_received - p0->events_received, p.events_lost - p0->events_lost,
               p.rescans - p0->rescans, p.latency_p50_usec, p.latency_p99_usec, p.latency_max_usec);

        ck_assert_uint_eq(p.processes_placed + p.processes_vanished, p.processes_matched);
        ck_assert_uint_ge(p.processes_placed, p0->processes_placed + barriers);
        ck_assert_msg(
                p.processes_matched <= p0->processes_matched + n_kept + n_reaped + barriers,
                "ProcessesMatched grew by %" PRIu64 ", but only %" PRIu64 " processes were started",
                p.processes_matched - p0->processes_matched, n_kept + n_reaped + barriers);
        if (p.events_lost == p0->events_lost)
                ck_assert_msg(
                        p.processes_matched >= p0->processes_matched + n_kept + barriers,
                        "ProcessesMatched grew by %" PRIu64 ", want at least %" PRIu64
                        " (no events were lost)",
                        p.processes_matched - p0->processes_matched, n_kept + barriers);
        else
                ck_assert_msg(
                        p.rescans > p0->rescans,
                        "EventsLost grew from %" PRIu64 " to %" PRIu64 " but Rescans stayed %" PRIu64,
                        p0->events_lost, p.events_lost, p.rescans);
        /* A process that vanishes is not a placement failure. */
        ck_assert_uint_eq(p.placement_failures, p0->placement_failures);
        ck_assert_str_eq(p.state, "running");
        *ret = p;
}

/* Multi-threaded processes that exit right after creating their threads, while the daemon is
 * placing them: half kept as zombies until the end, half reaped at once. */
START_TEST(test_exit_during_placement) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        const char *path = harness_install(h, "integ-threads", name);
        const unsigned n = 100;
        ManagerProps p0 = {}, p = {};

        write_policy(h, name);
        harness_start_daemon(h);
        harness_get_props(h, &p0);

        for (unsigned i = 0; i < n; i++) {
                harness_spawn_quick(h, path, ARGS("-n", "16", "-x"), false);
                harness_spawn_quick(h, path, ARGS("-n", "16", "-x"), true);
        }
        harness_barrier(h);
        check_counters(h, &p0, n, n, &p);
        ck_assert_uint_eq(harness_reap_quick(h), n);
        manager_props_done(&p);

        /* Still answering after the reaping. */
        harness_get_props(h, &p);
        harness_assert_daemon_alive(h);
        manager_props_done(&p);
        manager_props_done(&p0);
}
END_TEST

/*
 * 1,000 processes that exit at once: half are reaped at once too (gone from /proc, maybe
 * before the daemon looked), half stay zombies until the end (matched by comm, but exited
 * before they could be placed: sched_setaffinity(2) succeeding on a zombie is no placement).
 * Every matched one is counted as placed or as vanished; how they split depends on how fast
 * the daemon was, and is printed.
 */
START_TEST(test_burst_1000) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        const char *path = harness_install(h, "integ-exit", name);
        const unsigned n = 1000, n_kept = n / 2;
        ManagerProps p0 = {}, p = {};

        write_policy(h, name);
        harness_start_daemon(h);
        harness_get_props(h, &p0);

        for (unsigned i = 0; i < n; i++)
                harness_spawn_quick(h, path, NULL, /* reap= */ i % 2 == 1);
        harness_barrier(h);
        check_counters(h, &p0, n_kept, n - n_kept, &p);

        /* Every one of them was exec'd and exited: with nothing lost, every kept one matched (and
         * the reaped ones may have); exec + exit events each. */
        if (p.events_lost == p0.events_lost)
                ck_assert_uint_ge(p.events_received, p0.events_received + 2 * n);
        /* The latency histogram saw these placements. */
        ck_assert_uint_gt(p.latency_max_usec, 0);
        ck_assert_uint_le(p.latency_p50_usec, p.latency_p99_usec);
        ck_assert_uint_le(p.latency_p99_usec, p.latency_max_usec);
        ck_assert_uint_eq(harness_reap_quick(h), n_kept);
        manager_props_done(&p);

        harness_get_props(h, &p);
        harness_assert_daemon_alive(h);
        manager_props_done(&p);
        manager_props_done(&p0);
}
END_TEST

/* Multi-threaded processes exiting (and reaped) while a reload's rescan re-places them. */
START_TEST(test_exit_during_rescan) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        const unsigned n = 40;
        Child *c[40];
        ManagerProps p0 = {}, p = {};
        unsigned ready;

        write_policy(h, name);
        harness_start_daemon(h);
        for (unsigned i = 0; i < n; i++)
                c[i] = harness_spawn(
                        h,
                        &(SpawnOptions){
                                .helper = "integ-threads",
                                .name = name,
                                .args = ARGS("-n", "24"),
                                .initial_cpus = "0",
                                .pipes = true});
        for (unsigned i = 0; i < n; i++) {
                free(child_expect_line(c[i]));
                harness_wait_process_cpus(h, c[i]->pid, "1", 25);
        }
        harness_get_props(h, &p0);

        /* Change the policy so that the rescan really writes every thread again. */
        harness_write_policy(
                h, "50-burst.yaml",
                "policies:\n"
                "  - name: burst\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"0-1\"\n",
                name);
        ready = harness_sighup(h);
        for (unsigned i = 0; i < n; i++)
                child_close_stdin(c[i]);
        for (unsigned i = 0; i < n; i++) {
                int status = child_wait(c[i]);
                ck_assert_msg(
                        WIFEXITED(status) && WEXITSTATUS(status) == 0, "%d did not exit cleanly",
                        (int)c[i]->pid);
        }
        harness_wait_ready(h, ready);

        harness_barrier(h);
        /* They were matched before the reload: whether the daemon counts a re-match after a
         * reload again or not, at most n more. */
        check_counters(h, &p0, 0, n, &p);
        ck_assert_str_eq(p.last_reload_error, "");
        manager_props_done(&p);
        manager_props_done(&p0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-burst");

        harness_add_test(s, test_exit_during_placement);
        harness_add_test(s, test_exit_during_rescan);
        harness_add_test(s, test_burst_1000);
        return harness_main(s);
}
