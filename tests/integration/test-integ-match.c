/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The exe, cmdline and user matchers on real processes, each with a matching and a
 * non-matching process; and re-matching of user: when a running process changes its uid.
 * A non-matching process is started before the matching one, so once the matching one is
 * placed the daemon has handled the other's exec too (events are handled in order); it must
 * still have its original mask and not be listed.
 */

#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>

#include "harness.h"
#include "macro.h"

static void assert_not_listed(Harness *h, pid_t pid) {
        ProcessEntry *e = NULL;
        size_t n = harness_list_processes(h, &e);
        const ProcessEntry *f = process_entries_find(e, n, pid);

        ck_assert_msg(!f, "non-matching %d is listed under policy %s", (int)pid, f ? f->policy : "");
        process_entries_free(e, n);
}

static Child *spawn_threads(Harness *h, const char *name, const char *const *args, bool as_nobody) {
        Child *c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = name,
                        .args = args,
                        .initial_cpus = "0",
                        .as_nobody = as_nobody,
                        .pipes = true});
        free(child_expect_line(c)); /* "ready N" */
        return c;
}

START_TEST(test_match_exe) {
        Harness *h = harness_new();
        const char *yes = harness_unique_name(h), *no = harness_unique_name(h);
        const char *exe = harness_install(h, "integ-threads", yes);
        Child *cy, *cn;

        /* A glob on the full path of the executable (a copy under a unique name). */
        harness_write_policy(
                h, "50-exe.yaml",
                "policies:\n"
                "  - name: by-exe\n"
                "    match:\n"
                "      exe: \"%.*s*\"\n"
                "    cpus: \"1\"\n",
                (int)strlen(exe) - 2, exe);
        harness_start_daemon(h);

        cn = spawn_threads(h, no, ARGS("-n", "1"), false);
        cy = spawn_threads(h, yes, ARGS("-n", "2"), false);
        harness_wait_process_cpus(h, cy->pid, "1", 3);
        harness_wait_listed(h, cy->pid, "by-exe");
        harness_assert_process_cpus_now(cn->pid, "0", 2);
        assert_not_listed(h, cn->pid);
}
END_TEST

START_TEST(test_match_cmdline) {
        Harness *h = harness_new();
        const char *tag = harness_unique_name(h);
        _cleanup_free_ char *arg_yes = NULL, *arg_no = NULL;
        Child *cy, *cn;

        ck_assert(asprintf(&arg_yes, "--tag=%s-yes", tag) > 0);
        ck_assert(asprintf(&arg_no, "--tag=%s-no", tag) > 0);
        /* An unanchored ERE on argv joined by single spaces. */
        harness_write_policy(
                h, "50-cmdline.yaml",
                "policies:\n"
                "  - name: by-cmdline\n"
                "    match:\n"
                "      cmdline: \"-n [0-9]+ --tag=%s-(yes|maybe)\"\n"
                "    cpus: \"1\"\n",
                tag);
        harness_start_daemon(h);

        /* Same executable name for both: only the arguments differ. */
        cn = spawn_threads(h, harness_unique_name(h), ARGS("-n", "1", arg_no), false);
        cy = spawn_threads(h, harness_unique_name(h), ARGS("-n", "2", arg_yes), false);
        harness_wait_process_cpus(h, cy->pid, "1", 3);
        harness_wait_listed(h, cy->pid, "by-cmdline");
        harness_assert_process_cpus_now(cn->pid, "0", 2);
        assert_not_listed(h, cn->pid);
}
END_TEST

/*
 * The long command lines' set-up: a 100 KiB argument of "x" (under MAX_ARG_STRLEN) into *ret_pad,
 * "--tag=TAG-yes" into *ret_yes, and a policy whose cmdline: matches only a command line that
 * ends in "x --tag=TAG-yes" (CPU 1).
 */
static void setup_long_cmdline(Harness *h, const char *tag, char **ret_pad, char **ret_yes) {
        char *pad = malloc(100 * 1024 + 1);

        ck_assert_ptr_nonnull(pad);
        memset(pad, 'x', 100 * 1024);
        pad[100 * 1024] = '\0';
        *ret_pad = pad;
        *ret_yes = harness_asprintf("--tag=%s-yes", tag);
        harness_write_policy(
                h, "50-cmdline.yaml",
                "policies:\n"
                "  - name: by-cmdline\n"
                "    match:\n"
                "      cmdline: \"x --tag=%s-yes$\"\n"
                "    cpus: \"1\"\n",
                tag);
}

/*
 * A command line over the event path's budget (64 KiB) is matched whole, on the worker thread:
 * the tag at its very end decides, for one process it matches and one it doesn't. Hostile
 * command lines can't be made to match less by being long.
 */
START_TEST(test_match_cmdline_long) {
        Harness *h = harness_new();
        const char *tag = harness_unique_name(h);
        _cleanup_free_ char *pad = NULL, *arg_yes = NULL, *arg_no = NULL;
        Child *cy, *cn;

        setup_long_cmdline(h, tag, &pad, &arg_yes);
        arg_no = harness_asprintf("--tag=%s-no", tag);
        harness_start_daemon(h);
        cn = spawn_threads(h, harness_unique_name(h), ARGS("-n", "1", pad, arg_no), false);
        cy = spawn_threads(h, harness_unique_name(h), ARGS("-n", "2", pad, arg_yes), false);
        harness_wait_process_cpus(h, cy->pid, "1", 3);
        harness_wait_listed(h, cy->pid, "by-cmdline");
        harness_barrier(h);
        harness_assert_process_cpus_now(cn->pid, "0", 2);
        assert_not_listed(h, cn->pid);
        ck_assert(harness_log_contains(h, "matched on the worker thread"));
}
END_TEST

/* How many of the n children are on CPU 1 (their main thread). */
static unsigned count_on_cpu1(Child *const *c, unsigned n) {
        unsigned placed = 0;

        for (unsigned i = 0; i < n; i++) {
                _cleanup_free_ char *cpus = harness_read_task_cpus(c[i]->pid, c[i]->pid);

                placed += cpus && streq(cpus, "1");
        }
        return placed;
}

/*
 * The worker's time for long command lines is shared out by the process's real uid
 * (daemon/manager-events.c; here 1 ms per second with $AFFINITYD_MATCH_SHARE_USEC, 2 ms saved up): an
 * unprivileged uid has one match on the worker at a time and at most 8 waiting. Of a dozen
 * processes of nobody with 1.6 MiB command lines that all match, those beyond 8 waiting are not
 * decided (counted in MatchesUndecided, logged) and stay where they are; those waiting are
 * decided one by one as the share allows; root's process with the same command line is decided
 * and placed at once. One user's huge command lines can't take the worker from the others.
 */
START_TEST(test_match_cmdline_share) {
        enum { N_NOBODY = 12 };
        Harness *h = harness_new();
        const char *tag = harness_unique_name(h);
        _cleanup_free_ char *pad = NULL, *arg_yes = NULL;
        ManagerProps props = {};
        Child *nobody[N_NOBODY], *mine;
        unsigned placed = 0;

        setup_long_cmdline(h, tag, &pad, &arg_yes);
        ck_assert_int_eq(setenv("AFFINITYD_MATCH_SHARE_USEC", "1000", 1), 0); /* this test's process only */
        harness_start_daemon(h);
#define PADS pad, pad, pad, pad, pad, pad, pad, pad, pad, pad, pad, pad, pad, pad, pad, pad
        for (unsigned i = 0; i < N_NOBODY; i++)
                nobody[i] = spawn_threads(h, harness_unique_name(h), ARGS("-n", "1", PADS, arg_yes), true);
        for (unsigned i = 0; i < 200; i++) {
                harness_get_props(h, &props);
                if (props.matches_undecided > 0)
                        break;
                manager_props_done(&props);
                usleep(50 * 1000);
        }
        ck_assert_msg(
                props.matches_undecided > 0, "every one of nobody's %u processes was decided", N_NOBODY);
        manager_props_done(&props);
        ck_assert(harness_log_contains(h, "are waiting already for its uid 65534"));
        /* root's: decided and placed though nobody's share is spent */
        mine = spawn_threads(h, harness_unique_name(h), ARGS("-n", "1", PADS, arg_yes), false);
#undef PADS
        harness_wait_process_cpus(h, mine->pid, "1", 2);
        /* nobody's waiting ones are decided later, within the share (1 ms a second) */
        for (unsigned i = 0; i < 600 && (placed = count_on_cpu1(nobody, N_NOBODY)) < 2; i++)
                usleep(100 * 1000);
        ck_assert_msg(placed >= 2, "%u of nobody's processes placed after 60 s", placed);
        harness_barrier(h);
        placed = count_on_cpu1(nobody, N_NOBODY);
        ck_assert_msg(placed < N_NOBODY, "all %u of nobody's processes were placed", placed);
}
END_TEST

START_TEST(test_match_user) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        Child *cy, *cn;

        /* The same comm for both processes: only the effective uid differs. */
        harness_write_policy(
                h, "50-user.yaml",
                "policies:\n"
                "  - name: by-user\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "      user: nobody\n"
                "    cpus: \"1\"\n",
                name);
        harness_start_daemon(h);

        cn = spawn_threads(h, name, ARGS("-n", "1"), false);
        cy = spawn_threads(h, name, ARGS("-n", "2"), true);
        harness_wait_process_cpus(h, cy->pid, "1", 3);
        harness_wait_listed(h, cy->pid, "by-user");
        harness_assert_process_cpus_now(cn->pid, "0", 2);
        assert_not_listed(h, cn->pid);
}
END_TEST

/* How many lines of the daemon's log contain both a and b. */
static unsigned log_lines_with(Harness *h, const char *a, const char *b) {
        _cleanup_free_ char *path = harness_asprintf("%s/affinityd.log", harness_dir(h)), *line = NULL;
        FILE *f = fopen(path, "re");
        size_t size = 0;
        unsigned n = 0;

        ck_assert_msg(f, "no daemon log at %s", path);
        while (getline(&line, &size, f) > 0)
                n += strstr(line, a) && strstr(line, b);
        fclose(f);
        return n;
}

/*
 * A unit's process as systemd starts it: a child of a process named "systemd" that calls itself
 * "(NAME)", changes its user, then execs. Its COMM and UID events come before the exec and match
 * the policy already; it is placed once, by the exec, not also as "(NAME)".
 *
 * late: the same, with the events handled late (the daemon stopped until the child has exec'd):
 * the COMM or UID event finds the program already and places it; the EXEC event after it finds
 * the mask in place and writes nothing, so there is still one "Placed" message (seen in the VM
 * lane under TCG, where the daemon lags behind systemd).
 */
static void check_service_child_once(bool late) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *probe = harness_asprintf("%s/bin/%s", harness_dir(h), name), *cmd = NULL,
                            *line = NULL, *pid_text = NULL;
        Child *c;
        int pid;

        cmd = harness_asprintf("cp /bin/sleep '%s'", probe);
        ck_assert_int_eq(system(cmd), 0);
        harness_write_policy(
                h, "50-svc.yaml",
                "policies:\n"
                "  - name: svc\n"
                "    match:\n"
                "      comm: \"*%s*\"\n"
                "      user: nobody\n"
                "    cpus: \"1\"\n",
                name);
        harness_start_daemon(h);
        if (late)
                harness_pause_daemon(h);
        c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-svcchild",
                        .name = "systemd",
                        .args = ARGS(probe, name),
                        .initial_cpus = "0",
                        .pipes = true});
        line = child_expect_line(c);
        ck_assert_int_eq(sscanf(line, "child %d", &pid), 1);
        harness_wait_comm(h, pid, name); /* exec'd: with late, its events all queued */
        if (late)
                harness_resume_daemon(h);
        harness_wait_process_cpus(h, pid, "1", 1);
        harness_wait_listed(h, pid, "svc");
        harness_barrier(h); /* every event before it was handled */
        pid_text = harness_asprintf("[%d]", pid);
        ck_assert_uint_eq(log_lines_with(h, "Placed ", pid_text), 1);
        ck_assert_uint_eq(log_lines_with(h, "Placed (", pid_text), 0);
        child_kill(c);
        (void)kill(pid, SIGKILL);
}

START_TEST(test_match_service_child_once) {
        check_service_child_once(false);
}
END_TEST

START_TEST(test_match_service_child_late_once) {
        check_service_child_once(true);
}
END_TEST

/*
 * A program that calls itself "(NAME" and was reparented to PID 1 (a daemon that double-forked)
 * has exec'd long ago: the startup scan places it like any other, it is no service manager's
 * child before its exec.
 */
START_TEST(test_match_paren_orphan_placed) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *comm = harness_asprintf("(%s", name),
                            *probe = harness_asprintf("%s/bin/%s", harness_dir(h), comm), *cmd = NULL,
                            *pidfile = harness_asprintf("%s/orphan.pid", harness_dir(h)), *text = NULL;
        FILE *f;
        int pid = 0;

        cmd = harness_asprintf("cp /bin/sleep '%s'", probe);
        ck_assert_int_eq(system(cmd), 0);
        /* Started by a shell that exits at once: its parent is PID 1 then. */
        free(cmd);
        cmd = harness_asprintf("setsid sh -c '\"%s\" 60 & echo $! > \"%s\"'", probe, pidfile);
        ck_assert_int_eq(system(cmd), 0);
        f = fopen(pidfile, "re");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(fscanf(f, "%d", &pid), 1);
        fclose(f);
        harness_wait_comm(h, pid, comm);
        /* Older than systemd's child before its exec can be (2 s): a program, not that child. */
        usleep(2500 * 1000);
        harness_write_policy(
                h, "50-paren.yaml",
                "policies:\n"
                "  - name: paren\n"
                "    match: {comm: \"(%s\"}\n"
                "    cpus: \"1\"\n",
                name);
        harness_start_daemon(h);
        harness_wait_process_cpus(h, pid, "1", 1);
        (void)kill(pid, SIGKILL);
}
END_TEST

/* A process exec'd as root that later switches to uid 65534 is re-matched (UID event) and
 * placed by a user: rule given as a number. */
START_TEST(test_match_user_change) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *line = NULL;
        Child *c;

        harness_write_policy(
                h, "50-user.yaml",
                "policies:\n"
                "  - name: by-uid\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "      user: \"65534\"\n"
                "    cpus: \"1\"\n",
                name);
        harness_start_daemon(h);

        c = spawn_threads(h, name, ARGS("-n", "2"), false);
        harness_barrier(h);
        harness_assert_process_cpus_now(c->pid, "0", 3);
        assert_not_listed(h, c->pid);

        child_send(c, "setuid 65534");
        line = child_expect_line(c);
        ck_assert_str_eq(line, "uid 65534");
        harness_wait_process_cpus(h, c->pid, "1", 3);
        harness_wait_listed(h, c->pid, "by-uid");
}
END_TEST

/* A placement made on a UID event counts in the placement latency, measured from the event's
 * timestamp like an exec's. The process is started before the daemon (the scan records no
 * latency), so the UID event's is the only one. */
START_TEST(test_match_user_change_latency) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *line = NULL;
        ManagerProps p = {};
        Child *c;

        harness_write_policy(
                h, "50-user.yaml",
                "policies:\n"
                "  - name: by-uid\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "      user: \"65534\"\n"
                "    cpus: \"1\"\n",
                name);
        c = spawn_threads(h, name, ARGS("-n", "2"), false);
        harness_start_daemon(h);
        harness_get_props(h, &p);
        ck_assert_uint_eq(p.latency_max_usec, 0);
        manager_props_done(&p);

        child_send(c, "setuid 65534");
        line = child_expect_line(c);
        ck_assert_str_eq(line, "uid 65534");
        harness_wait_process_cpus(h, c->pid, "1", 3);
        harness_get_props(h, &p);
        ck_assert_msg(p.latency_max_usec > 0, "the placement on the UID event was not measured");
        ck_assert_uint_le(p.latency_p50_usec, p.latency_max_usec);
        manager_props_done(&p);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-match");

        harness_add_test(s, test_match_exe);
        harness_add_test(s, test_match_cmdline);
        harness_add_test(s, test_match_cmdline_long);
        harness_add_test(s, test_match_cmdline_share);
        harness_add_test(s, test_match_user);
        harness_add_test(s, test_match_user_change);
        harness_add_test(s, test_match_service_child_once);
        harness_add_test(s, test_match_service_child_late_once);
        harness_add_test(s, test_match_paren_orphan_placed);
        harness_add_test(s, test_match_user_change_latency);
        return harness_main(s);
}
