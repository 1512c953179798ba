/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The command line: --bus=none (placing without any bus), --dry-run (nothing written, "Would
 * place" logged), --topology=FILE.xml (plans against a corpus machine, implies a dry run); the
 * daemon itself placed only by a rule naming it literally; the warning about a capped receive
 * buffer without CAP_NET_ADMIN; exiting with a failure when the bus goes away.
 * (affinityctl validate: test-integ-ctl.c.)
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"
#include "macro.h"

static void write_comm_policy(Harness *h, const char *name, const char *cpus) {
        harness_write_policy(
                h, "50-opt.yaml",
                "policies:\n"
                "  - name: opt\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"%s\"\n",
                name, cpus);
}

static Child *spawn(Harness *h, const char *name, const char *initial_cpus) {
        Child *c = harness_spawn(
                h,
                &(SpawnOptions){
                        .helper = "integ-threads",
                        .name = name,
                        .args = ARGS("-n", "2"),
                        .initial_cpus = initial_cpus,
                        .pipes = true});
        free(child_expect_line(c)); /* "ready N" */
        return c;
}

/* --bus=none: no bus anywhere, processes are placed all the same (scan and events). */
START_TEST(test_bus_none) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        Child *before, *after;

        write_comm_policy(h, name, "1");
        before = spawn(h, name, "0");
        harness_start_daemon_with(h, &(DaemonOptions){.no_bus = true});
        ck_assert_str_eq(harness_bus_address(h) ?: "", ""); /* not even a bus to ignore */
        harness_assert_process_cpus_now(before->pid, "1", 3);

        after = spawn(h, name, "0");
        harness_wait_process_cpus(h, after->pid, "1", 3);
        harness_stop_daemon(h); /* STOPPING=1 and exit status 0 */
}
END_TEST

/* --dry-run: matching and planning happen and are logged ("Would place"), nothing is written. */
START_TEST(test_dry_run) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        char want[64];
        Child *before, *after;

        write_comm_policy(h, name, "1");
        before = spawn(h, name, "0");
        harness_start_daemon_with(h, &(DaemonOptions){.args = ARGS("--dry-run")});
        snprintf(want, sizeof want, "Would place %s[%d]", name, (int)before->pid);
        harness_wait_log(h, want);

        after = spawn(h, name, "0");
        snprintf(want, sizeof want, "Would place %s[%d]", name, (int)after->pid);
        harness_wait_log(h, want);

        harness_assert_process_cpus_now(before->pid, "0", 3);
        harness_assert_process_cpus_now(after->pid, "0", 3);
        harness_wait_listed(h, after->pid, "opt");
}
END_TEST

/*
 * --topology=FILE.xml: a 2-package machine from the corpus. A policy asking for package 1 is
 * pending on this 1-package machine, but is resolved against the XML (so the plan really comes
 * from the file); the run is dry, so the matching process keeps its mask.
 */
START_TEST(test_topology_xml) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h), *corpus = getenv("AFFINITYD_CORPUS");
        _cleanup_free_ char *xml = NULL, *arg = NULL;
        char want[64];
        PolicyEntry *pe = NULL;
        bool seen = false;
        size_t n;
        Child *c;

        ck_assert_msg(corpus, "AFFINITYD_CORPUS is not set");
        ck_assert(asprintf(&xml, "%s/topologies/24em64t-2n6c2t-pci.xml", corpus) > 0);
        ck_assert(asprintf(&arg, "--topology=%s", xml) > 0);
        harness_write_policy(
                h, "50-pkg.yaml",
                "policies:\n"
                "  - name: second-package\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus:\n"
                "      packages: \"1\"\n",
                name);
        c = spawn(h, name, "0");
        harness_start_daemon_with(h, &(DaemonOptions){.args = ARGS(arg)});
        harness_wait_log(h, xml); /* "Topology: ... from FILE" */

        n = harness_list_policies(h, &pe);
        for (size_t i = 0; i < n; i++)
                if (streq(pe[i].name, "second-package")) {
                        seen = true;
                        ck_assert_msg(
                                streq(pe[i].pending_reason, ""), "pending against %s: %s", xml,
                                pe[i].pending_reason);
                        ck_assert_msg(!streq(pe[i].cpus, ""), "no CPUs resolved against %s", xml);
                }
        ck_assert(seen);
        policy_entries_free(pe, n);

        snprintf(want, sizeof want, "Would place %s[%d]", name, (int)c->pid);
        harness_wait_log(h, want);
        harness_assert_process_cpus_now(c->pid, "0", 3);
}
END_TEST

/*
 * The daemon itself is placed only by a policy naming its comm literally; a glob that happens
 * to match it does not.
 * The cmdline key keeps the policies to this test's daemon (another affinityd on the machine
 * has another --config-dir). The daemon's mask is not restored: it exits at the end.
 */
START_TEST(test_self_explicit_only) {
        Harness *h = harness_new();
        const char *own = harness_own_cpus(h), *target = streq(own, "1") ? "0" : "1";
        _cleanup_free_ char *cpus = NULL;
        ProcessEntry *e = NULL;
        size_t n;

        harness_write_policy(
                h, "50-self.yaml",
                "policies:\n"
                "  - name: self-glob\n"
                "    match:\n"
                "      comm: \"affinity*\"\n"
                "      cmdline: \"--config-dir=%s( |$)\"\n"
                "    cpus: \"%s\"\n",
                harness_config_dir(h), target);
        harness_start_daemon(h);
        cpus = harness_read_task_cpus(harness_daemon_pid(h), harness_daemon_pid(h));
        ck_assert_msg(cpus && streq(cpus, own), "a glob placed the daemon itself on %s", strna(cpus));
        n = harness_list_processes(h, &e);
        ck_assert_msg(!process_entries_find(e, n, harness_daemon_pid(h)), "the daemon tracks itself");
        process_entries_free(e, n);
        harness_stop_daemon(h);
        cpus = mfree(cpus);

        harness_write_policy(
                h, "50-self.yaml",
                "policies:\n"
                "  - name: self-literal\n"
                "    match:\n"
                "      comm: [\"nothing*\", affinityd]\n"
                "      cmdline: \"--config-dir=%s( |$)\"\n"
                "    cpus: \"%s\"\n",
                harness_config_dir(h), target);
        harness_start_daemon(h);
        harness_assert_process_cpus_now(harness_daemon_pid(h), target, 1);
        harness_wait_listed(h, harness_daemon_pid(h), "self-literal");
}
END_TEST

/* Without CAP_NET_ADMIN, SO_RCVBUFFORCE fails and SO_RCVBUF is capped by net.core.rmem_max: the
 * daemon says so (when the cap is below what it asks for). */
START_TEST(test_rcvbuf_capped_warning) {
        Harness *h = harness_new();
        _cleanup_fclose_ FILE *f = fopen("/proc/sys/net/core/rmem_max", "re");
        unsigned long rmem_max = 0;

        ck_assert_msg(f && fscanf(f, "%lu", &rmem_max) == 1, "can't read net.core.rmem_max");
        harness_start_daemon_with(h, &(DaemonOptions){.drop_net_admin = true});
        harness_assert_daemon_alive(h);
        if (harness_log_contains(h, "Cannot use the proc connector"))
                return; /* a kernel where subscribing needs CAP_NET_ADMIN: no socket to warn about */
        if (rmem_max < 8UL * 1024 * 1024)
                ck_assert_msg(
                        harness_log_contains(h, "SO_RCVBUFFORCE"),
                        "no warning about the receive buffer capped at rmem_max %lu", rmem_max);
        else
                ck_assert_msg(
                        !harness_log_contains(h, "SO_RCVBUFFORCE"),
                        "a warning although rmem_max %lu is large enough", rmem_max);
}
END_TEST

/* Losing the bus: the daemon says so and exits with a failure (Restart=on-failure brings it
 * back), instead of running on unreachable. */
START_TEST(test_bus_lost) {
        Harness *h = harness_new();
        int status;

        harness_start_daemon(h);
        status = harness_kill_bus(h);
        ck_assert_msg(WIFEXITED(status), "affinityd did not exit by itself (status 0x%x)", status);
        ck_assert_int_eq(WEXITSTATUS(status), EXIT_FAILURE);
        ck_assert(harness_log_contains(h, "Lost the connection to the bus"));
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-options");

        harness_add_test(s, test_bus_none);
        harness_add_test(s, test_dry_run);
        harness_add_test(s, test_topology_xml);
        harness_add_test_tagged(s, test_self_explicit_only, "own-comm");
        harness_add_test(s, test_rcvbuf_capped_warning);
        harness_add_test(s, test_bus_lost);
        return harness_main(s);
}
