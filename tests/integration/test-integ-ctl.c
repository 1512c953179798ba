/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * affinityctl as a user meets it: status shows the policies that are pending on this machine
 * (and --json carries them, read with json-reader.h), and validate reads a file, a configuration
 * directory and a policy.d directory, naming file:line:column for a broken file, and counts
 * every kind of rule; it looks at no machine unless --here says so. Every command's --help is
 * its own. The --json document of every command is parsed and checked against the
 * bus and /proc; monitor follows the signals live, and says when the daemon goes away and comes
 * back; the exit codes mean what they say (2 usage, 3 daemon not running, 4 no such process);
 * reload and rescan as nobody say in one line that they need root, refused by the bus policy or
 * by the daemon.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "json-reader.h"
#include "macro.h"

/* A user name no machine has. */
#define GHOST_USER "nosuchuser-xyz"

static char *xpath(Harness *h, const char *rel) {
        char *p = NULL;

        ck_assert_int_ge(asprintf(&p, "%s/%s", harness_dir(h), rel), 0);
        return p;
}

static void write_text(const char *path, const char *text) {
        FILE *f = fopen(path, "we");

        ck_assert_msg(f, "fopen %s: %s", path, strerror(errno));
        fputs(text, f);
        ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_status_pending) {
        Harness *h = harness_new();
        _cleanup_free_ char *out = NULL, *err = NULL;
        _cleanup_(json_freep) Json *doc = NULL;
        const Json *pending;
        int r;

        harness_write_policy(
                h, "10-ghost.yaml",
                "policies:\n"
                "  - name: ghost\n"
                "    match:\n"
                "      user: " GHOST_USER "\n"
                "    cpus: \"1\"\n");
        harness_start_daemon(h);

        r = harness_run_ctl(h, &out, &err, "status", NULL);
        ck_assert_msg(r == 0, "affinityctl status exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "Pending:"), "affinityctl status shows no pending policies:\n%s", out);
        ck_assert_msg(
                strstr(out, "ghost (") && strstr(out, "10-ghost.yaml:2)") &&
                        strstr(out, "user \"" GHOST_USER "\" does not exist"),
                "affinityctl status does not show the pending policy with its place and reason:\n%s", out);
        /* The marker policy of the harness is active: not listed as pending. */
        ck_assert_msg(!strstr(out, "integ-marker ("), "an active policy is shown as pending:\n%s", out);
        out = mfree(out);
        err = mfree(err);

        r = harness_run_ctl(h, &out, &err, "--json", "status", NULL);
        ck_assert_msg(r == 0, "affinityctl --json status exited %d: %s", r, err);
        doc = json_parse_document(out);
        ck_assert_str_eq(jstr(doc, "State"), "running");
        pending = jarray(doc, "PendingPolicies");
        ck_assert_uint_eq(pending->n_items, 1);
        ck_assert_str_eq(jstr(pending->items[0], "name"), "ghost");
        ck_assert_msg(
                strstr(jstr(pending->items[0], "file"), "10-ghost.yaml"), "file: %s",
                jstr(pending->items[0], "file"));
        ck_assert_uint_eq(jnum(pending->items[0], "line"), 2);
        ck_assert_str_eq(jstr(pending->items[0], "reason"), "user \"" GHOST_USER "\" does not exist");
}
END_TEST

START_TEST(test_validate) {
        Harness *h = harness_new();
        _cleanup_(json_freep) Json *doc = NULL;
        _cleanup_free_ char *out = NULL, *err = NULL, *file = xpath(h, "one.yaml"), *pd = xpath(h, "pd"),
                            *good = xpath(h, "pd/10-good.yaml"), *broken = xpath(h, "pd/20-broken.yaml"),
                            *where = NULL;
        int r;

        /* One file. */
        write_text(file, "policies:\n  - name: one\n    match: {comm: one}\n    cpus: \"0\"\n");
        r = harness_run_ctl(h, &out, &err, "validate", file, NULL);
        ck_assert_msg(r == 0, "affinityctl validate FILE exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "1 file, 1 policy: valid"), "stdout: %s\nstderr: %s", out, err);
        out = mfree(out);
        err = mfree(err);

        /* A configuration directory: affinityd.yaml (if any) and policy.d/. */
        harness_write_policy(h, "50-two.yaml", "policies:\n  - name: two\n    match: {comm: two}\n");
        r = harness_run_ctl(h, &out, &err, "validate", harness_config_dir(h), NULL);
        ck_assert_msg(r == 0, "affinityctl validate CONFIG-DIR exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "2 files, 2 policies: valid"), "stdout: %s\nstderr: %s", out, err);
        out = mfree(out);
        err = mfree(err);

        /* irqs: and net: rules are counted too, each kind once there is one. */
        harness_write_policy(
                h, "60-devices.yaml",
                "irqs:\n"
                "  - name: nothing\n"
                "    match: {action: \"no-such-irq-*\"}\n"
                "    cpus: \"1\"\n"
                "net:\n"
                "  - device: \"no-such-dev*\"\n"
                "    rps: \"1\"\n");
        r = harness_run_ctl(h, &out, &err, "validate", harness_config_dir(h), NULL);
        ck_assert_msg(r == 0, "affinityctl validate CONFIG-DIR exited %d: %s", r, err);
        ck_assert_msg(
                strstr(out, "3 files, 2 policies, 1 irqs rule, 1 net rule: valid"), "stdout: %s\nstderr: %s",
                out, err);
        out = mfree(out);
        err = mfree(err);
        r = harness_run_ctl(h, &out, &err, "--json", "validate", harness_config_dir(h), NULL);
        ck_assert_msg(r == 0, "affinityctl --json validate exited %d: %s", r, err);
        doc = json_parse_document(out);
        ck_assert(jbool(doc, "valid"));
        ck_assert_uint_eq(jarray(doc, "policies")->n_items, 2);
        ck_assert_uint_eq(jarray(doc, "irqs")->n_items, 1);
        ck_assert_str_eq(jstr(jarray(doc, "irqs")->items[0], "name"), "nothing");
        ck_assert_uint_eq(jnum(jarray(doc, "irqs")->items[0], "line"), 2);
        ck_assert_uint_eq(jarray(doc, "net")->n_items, 1);
        ck_assert_str_eq(jstr(jarray(doc, "net")->items[0], "name"), "no-such-dev*");
        ck_assert_str_eq(jstr(jarray(doc, "net")->items[0], "device"), "no-such-dev*");
        harness_remove_policy(h, "60-devices.yaml");
        out = mfree(out);
        err = mfree(err);

        /* A policy.d directory: its files are read, a broken one fails with its place. */
        ck_assert_int_eq(mkdir(pd, 0755), 0);
        write_text(good, "policies:\n  - name: good\n    match: {comm: good}\n");
        r = harness_run_ctl(h, &out, &err, "validate", pd, NULL);
        ck_assert_msg(r == 0, "affinityctl validate POLICY-DIR exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "1 file, 1 policy: valid"), "stdout: %s\nstderr: %s", out, err);
        out = mfree(out);
        err = mfree(err);

        write_text(
                broken,
                "policies:\n"
                "  - name: broken\n"
                "    match:\n"
                "      comm: x\n"
                "    cpu: \"1\"\n");
        r = harness_run_ctl(h, &out, &err, "validate", pd, NULL);
        ck_assert_msg(r == 1, "affinityctl validate of a broken policy.d exited %d (want 1)", r);
        ck_assert_int_ge(asprintf(&where, "%s:5:5: error: unknown key \"cpu\"", broken), 0);
        ck_assert_msg(strstr(err, where), "stderr does not say \"%s\":\n%s", where, err);
        ck_assert_msg(!strstr(out, "valid"), "stdout claims valid:\n%s", out);
}
END_TEST

/*
 * validate checks the files for any machine: a CPU this machine doesn't have and a device it
 * doesn't have are no concern of it (no warning, exit 0); --here resolves them here, where
 * they are warnings.
 */
START_TEST(test_validate_offline) {
        Harness *h = harness_new();
        _cleanup_(json_freep) Json *doc = NULL;
        _cleanup_free_ char *out = NULL, *err = NULL, *file = xpath(h, "elsewhere.yaml"), *text = NULL,
                            *missing = NULL;
        long n_cpus = sysconf(_SC_NPROCESSORS_CONF);
        int r;

        /* A CPU past every CPU this machine has, and a NIC no machine has. */
        ck_assert_int_gt(n_cpus, 0);
        ck_assert_int_ge(asprintf(&missing, "%ld", n_cpus + 8), 0);
        ck_assert_int_ge(
                asprintf(
                        &text,
                        "policies:\n"
                        "  - name: big\n"
                        "    match: {comm: big}\n"
                        "    cpus: \"%s\"\n"
                        "  - name: nic\n"
                        "    match: {comm: nic}\n"
                        "    cpus: {near: nosuchdev0}\n",
                        missing),
                0);
        write_text(file, text);

        r = harness_run_ctl(h, &out, &err, "validate", file, NULL);
        ck_assert_msg(r == 0, "affinityctl validate exited %d: %s", r, err);
        ck_assert_msg(streq(out, "1 file, 2 policies: valid\n"), "stdout: %s", out);
        ck_assert_msg(err[0] == 0, "validate looked at this machine:\n%s", err);
        out = mfree(out);
        err = mfree(err);

        r = harness_run_ctl(h, &out, &err, "--json", "validate", file, NULL);
        ck_assert_msg(r == 0, "affinityctl --json validate exited %d: %s", r, err);
        doc = json_parse_document(out);
        ck_assert(jbool(doc, "valid"));
        ck_assert(!jbool(doc, "resolved"));
        ck_assert_uint_eq(jarray(doc, "diagnostics")->n_items, 0);
        ck_assert(jnull(jarray(doc, "policies")->items[0], "cpus"));
        out = mfree(out);
        err = mfree(err);

        /* --here: resolved on this machine, where both are pending, as warnings. */
        r = harness_run_ctl(h, &out, &err, "validate", "--here", file, NULL);
        ck_assert_msg(r == 0, "affinityctl validate --here exited %d: %s", r, err);
        ck_assert_msg(
                strstr(out, "1 file, 2 policies: valid, resolved on this machine ("), "stdout: %s", out);
        ck_assert_msg(
                strstr(err, "elsewhere.yaml:4:11: warning: policy \"big\" is pending on this machine") &&
                        strstr(err,
                               "elsewhere.yaml:7:11: warning: policy \"nic\" is pending on this machine"),
                "stderr:\n%s", err);
        ck_assert_msg(strstr(err, missing), "stderr does not name CPU %s:\n%s", missing, err);
        out = mfree(out);
        err = mfree(err);
        doc = json_free(doc);
        r = harness_run_ctl(h, &out, &err, "--json", "validate", "--here", file, NULL);
        ck_assert_msg(r == 0, "affinityctl --json validate --here exited %d: %s", r, err);
        doc = json_parse_document(out);
        ck_assert(jbool(doc, "resolved"));
        ck_assert(!jnull(jarray(doc, "policies")->items[1], "pending_reason"));
}
END_TEST

/*
 * Every command answers --help and -h with its own help on stdout, exit 0: its synopsis, its
 * options, its exit status, not the global help. The commands are those the global help lists
 * (made from affinityctl's table of verbs).
 */
START_TEST(test_verb_help) {
        Harness *h = harness_new();
        _cleanup_free_ char *global = NULL, *err = NULL;
        const char *p;
        size_t n_verbs = 0;
        int r;

        r = harness_run_ctl(h, &global, &err, "--help", NULL);
        ck_assert_msg(r == 0, "affinityctl --help exited %d: %s", r, err);
        p = strstr(global, "\nCommands:\n");
        ck_assert_msg(p, "no Commands: in the help:\n%s", global);
        p += strlen("\nCommands:\n");

        /* "  NAME ARGS   summary" starts a command; more indented lines continue it. */
        for (const char *next; *p && *p != '\n'; p = next) {
                static const char *const ways[] = {"--help", "-h"};
                _cleanup_free_ char *name = NULL, *synopsis = NULL;
                size_t len;

                next = strchrnul(p, '\n');
                if (*next)
                        next++;
                if (strncmp(p, "   ", 3) == 0)
                        continue;
                ck_assert_msg(strncmp(p, "  ", 2) == 0, "unexpected line in the Commands: %s", p);
                len = strcspn(p + 2, " \n");
                name = strndup(p + 2, len);
                ck_assert_ptr_nonnull(name);
                ck_assert_int_ge(asprintf(&synopsis, "affinityctl [OPTIONS] %s", name), 0);
                n_verbs++;

                for (size_t w = 0; w < ELEMENTSOF(ways); w++) {
                        _cleanup_free_ char *out = NULL, *e = NULL, *options = NULL;

                        r = harness_run_ctl(h, &out, &e, name, ways[w], NULL);
                        ck_assert_msg(r == 0, "affinityctl %s %s exited %d: %s", name, ways[w], r, e);
                        ck_assert_msg(e[0] == 0, "affinityctl %s %s wrote on stderr: %s", name, ways[w], e);
                        ck_assert_msg(
                                !streq(out, global), "affinityctl %s %s is the global help", name, ways[w]);
                        ck_assert_msg(
                                strncmp(out, synopsis, strlen(synopsis)) == 0,
                                "affinityctl %s %s does not start with \"%s\":\n%s", name, ways[w], synopsis,
                                out);
                        ck_assert_int_ge(asprintf(&options, "\nOptions of %s ", name), 0);
                        ck_assert_msg(
                                strstr(out, options) && strstr(out, "\nExit status: "),
                                "affinityctl %s %s has no options or exit status:\n%s", name, ways[w], out);
                        ck_assert_msg(
                                !strstr(out, "\nCommands:\n"), "affinityctl %s %s lists the commands:\n%s",
                                name, ways[w], out);
                }
        }
        ck_assert_msg(n_verbs >= 2, "the help lists %zu commands:\n%s", n_verbs, global);
}
END_TEST

/* ---- every command's --json, monitor, exit codes ---- */

static uint64_t mono_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

/* Runs affinityctl with args (NULL-terminated), asserts exit status 0 and parses its stdout. */
#define CTL_JSON(h, ...) ctl_json(h, (const char *const[]){__VA_ARGS__, NULL})
static Json *ctl_json(Harness *h, const char *const *args) {
        _cleanup_free_ char *out = NULL, *err = NULL;
        const char *a[8] = {};
        size_t n = 0;
        int r;

        for (; args[n]; n++) {
                ck_assert(n < ELEMENTSOF(a) - 1);
                a[n] = args[n];
        }
        r = harness_run_ctl(h, &out, &err, "--json", a[0], a[1], a[2], a[3], a[4], a[5], a[6], NULL);
        ck_assert_msg(r == 0, "affinityctl --json %s exited %d: %s", args[0], r, err);
        return json_parse_document(out);
}

/* Field 39 of /proc/PID/task/TID/stat: the CPU the thread last ran on. */
static unsigned last_cpu(pid_t pid, pid_t tid) {
        _cleanup_free_ char *path = NULL;
        char buf[1024], *p;
        unsigned cpu = 0;
        size_t n;
        FILE *f;

        ck_assert_int_ge(asprintf(&path, "/proc/%d/task/%d/stat", (int)pid, (int)tid), 0);
        f = fopen(path, "re");
        ck_assert_msg(f, "%s: %s", path, strerror(errno));
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        p = strrchr(buf, ')');
        ck_assert(p);
        for (int field = 2; field <= 38 && p; field++)
                p = strchr(p + 1, ' ');
        ck_assert_msg(p && sscanf(p + 1, "%u", &cpu) == 1, "%s: %s", path, buf);
        return cpu;
}

/* A connection of the test's own to the private bus. */
static sd_bus *connect_private(Harness *h) {
        sd_bus *b = NULL;

        ck_assert_int_ge(sd_bus_new(&b), 0);
        ck_assert_int_ge(sd_bus_set_address(b, harness_bus_address(h)), 0);
        ck_assert_int_ge(sd_bus_set_bus_client(b, 1), 0);
        ck_assert_int_ge(sd_bus_start(b), 0);
        return b;
}

/* How many entries the array reply of a List method (no arguments) has. */
static size_t count_list(sd_bus *b, const char *method, const char *element) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_call_method(
                b, AFFINITYD_BUS_NAME, AFFINITYD_BUS_PATH, AFFINITYD_BUS_INTERFACE, method, &error, &reply,
                "");
        ck_assert_msg(r >= 0, "%s: %s", method, error.message);
        ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', element), 0);
        while ((r = sd_bus_message_skip(reply, element)) > 0)
                n++;
        ck_assert_int_ge(r, 0);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        return n;
}

START_TEST(test_json_every_command) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *line = NULL, *pid_arg = NULL, *self_arg = NULL, *out = NULL, *err = NULL;
        _cleanup_free_ TaskInfo *tasks = NULL;
        ManagerProps props = {}, after = {};
        PolicyEntry *pe = NULL;
        ProcessEntry *pr = NULL;
        size_t n_pe, n_pr;
        sd_bus *b = NULL;
        const Json *a, *e;
        Child *c;
        int n_tasks, r;

        harness_write_policy(
                h, "10-threads.yaml",
                "policies:\n"
                "  - name: threads\n"
                "    match: {comm: %s}\n"
                "    cpus: \"1\"\n",
                name);
        harness_write_policy(
                h, "20-ghost.yaml",
                "policies:\n"
                "  - name: ghost\n"
                "    match: {user: " GHOST_USER "}\n"
                "    cpus: \"0\"\n");
        harness_start_daemon(h);
        c = harness_spawn(h, &(SpawnOptions){.helper = "integ-threads", .name = name, .pipes = true});
        line = child_expect_line(c);
        harness_wait_process_cpus(h, c->pid, "1", 3);
        harness_wait_listed(h, c->pid, "threads");
        harness_wait_counters_settled(h, 1, NULL, &props);
        ck_assert_int_ge(asprintf(&pid_arg, "%d", (int)c->pid), 0);

        /* status: the properties as the bus has them. */
        {
                _cleanup_(json_freep) Json *doc = CTL_JSON(h, "status");

                ck_assert_str_eq(jstr(doc, "State"), "running");
                ck_assert_str_eq(jstr(doc, "Version"), props.version);
                ck_assert_uint_ge(jnum(doc, "ProcessesMatched"), props.processes_matched);
                ck_assert_uint_eq(jarray(doc, "PolicyFiles")->n_items, strv_length(props.policy_files));
                ck_assert_uint_eq(jarray(doc, "PendingPolicies")->n_items, 1);
        }

        /* policies: ListPolicies, entry by entry. */
        n_pe = harness_list_policies(h, &pe);
        {
                _cleanup_(json_freep) Json *doc = CTL_JSON(h, "policies");

                a = jarray(doc, "policies");
                ck_assert_uint_eq(a->n_items, n_pe);
                for (size_t i = 0; i < n_pe; i++) {
                        e = a->items[i];
                        ck_assert_str_eq(jstr(e, "name"), pe[i].name);
                        ck_assert_str_eq(jstr(e, "file"), pe[i].file);
                        ck_assert_uint_eq(jnum(e, "line"), pe[i].line);
                        ck_assert_str_eq(jstr(e, "cpus"), pe[i].cpus);
                        ck_assert_str_eq(jstr(e, "pending_reason"), pe[i].pending_reason);
                        ck_assert_str_eq(jstr(e, "state"), pe[i].pending_reason[0] ? "pending" : "active");
                }
                e = jfind(a, "name", "ghost");
                ck_assert_msg(e, "no policy ghost in affinityctl policies");
                ck_assert_str_eq(jstr(e, "state"), "pending");
                e = jfind(a, "name", "threads");
                ck_assert_msg(e, "no policy threads in affinityctl policies");
                ck_assert_str_eq(jstr(e, "state"), "active");
                ck_assert_str_eq(jstr(e, "cpus"), "1");
        }
        policy_entries_free(pe, n_pe);

        /* processes: ListProcesses, entry by entry, and what /proc says of ours. */
        n_pr = harness_list_processes(h, &pr);
        {
                _cleanup_(json_freep) Json *doc = CTL_JSON(h, "processes");
                _cleanup_free_ char *cpus = harness_read_task_cpus(c->pid, c->pid);
                bool found = false;

                a = jarray(doc, "processes");
                ck_assert_uint_eq(a->n_items, n_pr);
                for (size_t i = 0; i < n_pr; i++) {
                        e = a->items[i];
                        ck_assert_uint_eq(jnum(e, "pid"), pr[i].pid);
                        ck_assert_str_eq(jstr(e, "comm"), pr[i].comm);
                        ck_assert_str_eq(jstr(e, "policy"), pr[i].policy);
                        ck_assert_str_eq(jstr(e, "cpus"), pr[i].cpus);
                        if (pr[i].pid != (uint32_t)c->pid)
                                continue;
                        found = true;
                        ck_assert_str_eq(jstr(e, "comm"), name);
                        ck_assert_str_eq(jstr(e, "policy"), "threads");
                        ck_assert_msg(cpus, "process %d is gone", (int)c->pid);
                        ck_assert_str_eq(jstr(e, "cpus"), cpus);
                }
                ck_assert_msg(found, "affinityctl processes does not list %d", (int)c->pid);
        }
        process_entries_free(pr, n_pr);

        /* The table: a header and a summary, none with --no-legend. */
        r = harness_run_ctl(h, &out, &err, "processes", NULL);
        ck_assert_msg(r == 0, "affinityctl processes exited %d: %s", r, err);
        ck_assert_msg(
                strncmp(out, "PID ", 4) == 0 && strstr(out, name) && strstr(out, " listed."),
                "affinityctl processes:\n%s", out);
        out = mfree(out);
        err = mfree(err);
        r = harness_run_ctl(h, &out, &err, "--no-legend", "processes", NULL);
        ck_assert_msg(r == 0, "affinityctl --no-legend processes exited %d: %s", r, err);
        ck_assert_msg(
                !strstr(out, "PID") && !strstr(out, "listed") && strstr(out, name) && out[0] >= '0' &&
                        out[0] <= '9',
                "affinityctl --no-legend processes:\n%s", out);
        out = mfree(out);
        err = mfree(err);

        /* explain: the policy, why, the marker policy that didn't match, every thread as /proc
         * has it. */
        n_tasks = harness_read_tasks(c->pid, &tasks);
        ck_assert_int_ge(n_tasks, 3);
        {
                _cleanup_(json_freep) Json *doc = CTL_JSON(h, "explain", pid_arg);

                ck_assert_uint_eq(jnum(doc, "pid"), (unsigned)c->pid);
                ck_assert_str_eq(jstr(doc, "comm"), name);
                ck_assert_str_eq(jstr(doc, "policy"), "threads");
                ck_assert_str_eq(jstr(doc, "cpus"), "1");
                ck_assert_uint_gt(jarray(doc, "explanation")->n_items, 0);
                e = jfind(jarray(doc, "unmatched"), "policy", "integ-marker");
                ck_assert_msg(e, "explain does not say why the policy integ-marker did not match");
                ck_assert_msg(strlen(jstr(e, "reason")) > 0, "an empty reason for integ-marker");
                a = jarray(doc, "threads");
                ck_assert_uint_eq(a->n_items, (size_t)n_tasks);
                for (size_t i = 0; i < a->n_items; i++) {
                        const TaskInfo *t = NULL;

                        e = a->items[i];
                        for (int k = 0; k < n_tasks; k++)
                                if ((unsigned)tasks[k].tid == jnum(e, "tid"))
                                        t = &tasks[k];
                        ck_assert_msg(t, "explain lists thread %u, /proc does not", jnum(e, "tid"));
                        ck_assert_str_eq(jstr(e, "comm"), t->comm);
                        ck_assert_str_eq(jstr(e, "cpus"), t->cpus);
                        ck_assert_str_eq(jstr(e, "applied"), "1");
                        /* Where it last ran: a thread blocked since its placement may not have
                         * run on CPU 1 yet; /proc says the same as long as it stays blocked. */
                        ck_assert_uint_eq(jnum(e, "cpu"), last_cpu(c->pid, t->tid));
                }
        }
        /* A process no policy matches (this test): explained, no policy. */
        ck_assert_int_ge(asprintf(&self_arg, "%d", (int)getpid()), 0);
        {
                _cleanup_(json_freep) Json *doc = CTL_JSON(h, "explain", self_arg);

                ck_assert_uint_eq(jnum(doc, "pid"), (unsigned)getpid());
                ck_assert_str_eq(jstr(doc, "policy"), "");
                ck_assert_msg(
                        jfind(jarray(doc, "unmatched"), "policy", "threads"),
                        "explain of an unmanaged process does not say why \"threads\" did not match");
        }

        /* irqs and net: what the bus lists. */
        b = connect_private(h);
        {
                _cleanup_(json_freep) Json *irqs = CTL_JSON(h, "irqs");
                _cleanup_(json_freep) Json *net = CTL_JSON(h, "net");

                ck_assert_uint_eq(jarray(irqs, "irqs")->n_items, count_list(b, "ListIrqs", "(ussssss)"));
                ck_assert_uint_eq(
                        jarray(net, "queues")->n_items, count_list(b, "ListNetQueues", "(ssssuss)"));
        }
        sd_bus_flush_close_unref(b);

        /* top: every thread of the process, under its policy, on CPU 1. */
        {
                _cleanup_(json_freep) Json *doc = CTL_JSON(h, "top", "--interval=0.2");
                size_t n = 0;

                ck_assert_uint_gt(jnum(doc, "interval_usec"), 0);
                a = jarray(doc, "threads");
                for (size_t i = 0; i < a->n_items; i++) {
                        e = a->items[i];
                        if (jnum(e, "pid") != (unsigned)c->pid)
                                continue;
                        n++;
                        ck_assert_str_eq(jstr(e, "policy"), "threads");
                        ck_assert_uint_eq(jnum(e, "cpu"), last_cpu(c->pid, (pid_t)jnum(e, "tid")));
                }
                ck_assert_uint_eq(n, (size_t)n_tasks);
                e = jfind(jarray(doc, "policies"), "policy", "threads");
                ck_assert_msg(e, "top has no summary of the policy threads");
                ck_assert_uint_eq(jnum(e, "threads"), (unsigned)n_tasks);
        }

        /* reload and rescan: done, and counted. */
        {
                _cleanup_(json_freep) Json *reload = CTL_JSON(h, "reload");
                _cleanup_(json_freep) Json *rescan = CTL_JSON(h, "rescan");

                ck_assert(jbool(reload, "reloaded"));
                ck_assert(jbool(rescan, "rescanned"));
                harness_get_props(h, &after);
                ck_assert_uint_gt(after.reloads, props.reloads);
                ck_assert_uint_gt(after.rescans, props.rescans);
        }

        /* plan, offline: the same policies. */
        {
                _cleanup_free_ char *dir = NULL;
                _cleanup_(json_freep) Json *doc = NULL;

                ck_assert_int_ge(asprintf(&dir, "--config-dir=%s", harness_config_dir(h)), 0);
                doc = CTL_JSON(h, dir, "plan");
                a = jarray(doc, "policies");
                ck_assert_uint_eq(a->n_items, n_pe);
                ck_assert_msg(
                        jfind(a, "name", "threads") && jfind(a, "name", "ghost"), "plan lacks a policy");
        }

        manager_props_done(&props);
        manager_props_done(&after);
}
END_TEST

/* affinityctl running in the background (monitor), its stdout and stderr read line by line. */
typedef struct Bg {
        pid_t pid;
        int out_fd, err_fd;
        char out[65536], err[8192];
        size_t n_out, n_err;
} Bg;

static void bg_start(Harness *h, Bg *b, const char *const *args) {
        const char *bin = getenv("AFFINITYCTL_BIN");
        pid_t parent = getpid();
        int out[2], err[2];

        ck_assert(bin);
        ck_assert(pipe2(out, O_CLOEXEC) == 0 && pipe2(err, O_CLOEXEC) == 0);
        b->n_out = b->n_err = 0;
        b->pid = fork();
        ck_assert_int_ge(b->pid, 0);
        if (b->pid == 0) {
                const char *argv[16];
                char *bus = NULL;
                size_t n = 0;
                int null;

                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(126);
                null = open("/dev/null", O_RDONLY | O_CLOEXEC);
                if (null < 0 || dup2(null, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0 ||
                    asprintf(&bus, "--bus-address=%s", harness_bus_address(h)) < 0)
                        _exit(126);
                argv[n++] = bin;
                argv[n++] = bus;
                for (size_t i = 0; args[i] && n < ELEMENTSOF(argv) - 1; i++)
                        argv[n++] = args[i];
                argv[n] = NULL;
                execv(bin, (char *const *)argv);
                _exit(127);
        }
        close(out[1]);
        close(err[1]);
        b->out_fd = out[0];
        b->err_fd = err[0];
}

/* The next line of fd (newline stripped; caller frees); fails the test on EOF or after the
 * deadline. */
static char *fd_read_line(int fd, char *buf, size_t size, size_t *n) {
        uint64_t deadline = mono_usec() + HARNESS_TIMEOUT_USEC;

        for (;;) {
                char *nl = memchr(buf, '\n', *n);
                struct pollfd p = {.fd = fd, .events = POLLIN};
                uint64_t now;
                ssize_t k;

                if (nl) {
                        size_t l = (size_t)(nl - buf);
                        char *line = strndup(buf, l);

                        ck_assert(line);
                        memmove(buf, nl + 1, *n - l - 1);
                        *n -= l + 1;
                        return line;
                }
                ck_assert_msg(*n < size - 1, "a line too long");
                now = mono_usec();
                ck_assert_msg(
                        now < deadline, "no line from affinityctl in time; so far: \"%.*s\"", (int)*n, buf);
                if (poll(&p, 1, (int)((deadline - now) / USEC_PER_MSEC) + 1) <= 0)
                        continue;
                k = read(fd, buf + *n, size - 1 - *n);
                ck_assert_msg(k > 0, "affinityctl closed its output; so far: \"%.*s\"", (int)*n, buf);
                *n += (size_t)k;
        }
}

/* Reads stdout lines of b until one holds every needle (NULL-terminated); returns it. */
#define BG_EXPECT(b, ...) bg_expect(b, (const char *const[]){__VA_ARGS__, NULL})
static char *bg_expect(Bg *b, const char *const *needles) {
        for (;;) {
                char *line = fd_read_line(b->out_fd, b->out, sizeof(b->out), &b->n_out);
                bool all = true;

                for (size_t i = 0; needles[i]; i++)
                        all = all && strstr(line, needles[i]);
                if (all)
                        return line;
                free(line);
        }
}

/* Reads stderr lines of b until one holds needle; returns it. */
static char *bg_expect_err(Bg *b, const char *needle) {
        for (;;) {
                char *line = fd_read_line(b->err_fd, b->err, sizeof(b->err), &b->n_err);

                if (strstr(line, needle))
                        return line;
                free(line);
        }
}

/* SIGINT, as Ctrl-C; returns the exit status. */
static int bg_stop(Bg *b) {
        int status = 0;

        ck_assert_int_eq(kill(b->pid, SIGINT), 0);
        ck_assert_int_eq(waitpid(b->pid, &status, 0), b->pid);
        close(b->out_fd);
        close(b->err_fd);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

START_TEST(test_monitor) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *settings = NULL, *legend = NULL, *legend2 = NULL, *line = NULL, *placed = NULL,
                            *placed_h = NULL, *reloaded = NULL, *reloaded_h = NULL, *drift = NULL,
                            *drift_h = NULL, *pid_field = NULL, *human = NULL, *target = NULL,
                            *drift_human = NULL, *gone = NULL, *gone_h = NULL, *gone_j = NULL, *back = NULL,
                            *back_h = NULL, *back_j = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        static Bg json, text;
        cpu_set_t cpu0;
        Child *c;
        FILE *f;

        /* Drift is looked for every 100 ms. */
        ck_assert_int_ge(asprintf(&settings, "%s/affinityd.yaml", harness_config_dir(h)), 0);
        f = fopen(settings, "we");
        ck_assert(f);
        fputs("drift-interval: 100ms\n", f);
        ck_assert_int_eq(fclose(f), 0);
        harness_write_policy(
                h, "10-threads.yaml",
                "policies:\n"
                "  - name: threads\n"
                "    match: {comm: %s}\n"
                "    cpus: \"1\"\n"
                "    on-drift: report\n",
                name);
        harness_start_daemon(h);

        bg_start(h, &json, (const char *const[]){"--json", "monitor", NULL});
        bg_start(h, &text, (const char *const[]){"monitor", NULL});
        /* The legend says the matches are in place. */
        legend = fd_read_line(json.err_fd, json.err, sizeof(json.err), &json.n_err);
        ck_assert_msg(strstr(legend, "Monitoring"), "monitor said \"%s\"", legend);
        legend2 = fd_read_line(text.err_fd, text.err, sizeof(text.err), &text.n_err);
        ck_assert_msg(strstr(legend2, "Monitoring"), "monitor said \"%s\"", legend2);

        /* ProcessPlaced */
        c = harness_spawn(h, &(SpawnOptions){.helper = "integ-threads", .name = name, .pipes = true});
        line = child_expect_line(c);
        ck_assert_int_ge(asprintf(&pid_field, "\"pid\":%d,", (int)c->pid), 0);
        placed = BG_EXPECT(&json, "\"signal\":\"ProcessPlaced\"", pid_field);
        {
                _cleanup_(json_freep) Json *doc = json_parse_document(placed);

                ck_assert_uint_eq(jnum(doc, "pid"), (unsigned)c->pid);
                ck_assert_str_eq(jstr(doc, "comm"), name);
                ck_assert_str_eq(jstr(doc, "policy"), "threads");
                ck_assert_str_eq(jstr(doc, "cpus"), "1");
        }
        ck_assert_int_ge(asprintf(&human, "placed %d %s threads 1", (int)c->pid, name), 0);
        placed_h = BG_EXPECT(&text, human);
        ck_assert_str_eq(placed_h, human);
        harness_wait_process_cpus(h, c->pid, "1", 3);

        /* Reloaded */
        ck_assert_int_ge(harness_reload(h, &error), 0);
        sd_bus_error_free(&error);
        reloaded = BG_EXPECT(&json, "\"signal\":\"Reloaded\"");
        {
                _cleanup_(json_freep) Json *doc = json_parse_document(reloaded);

                ck_assert(jbool(doc, "success"));
                ck_assert_str_eq(jstr(doc, "error"), "");
        }
        reloaded_h = BG_EXPECT(&text, "reloaded");
        ck_assert_str_eq(reloaded_h, "reloaded");

        /* DriftDetected: someone moves the main thread to CPU 0. */
        CPU_ZERO(&cpu0);
        CPU_SET(0, &cpu0);
        ck_assert_int_eq(sched_setaffinity(c->pid, sizeof(cpu0), &cpu0), 0);
        ck_assert_int_ge(asprintf(&target, "\"target\":\"%d/%d\"", (int)c->pid, (int)c->pid), 0);
        drift = BG_EXPECT(&json, "\"signal\":\"DriftDetected\"", target);
        {
                _cleanup_(json_freep) Json *doc = json_parse_document(drift);

                ck_assert_str_eq(jstr(doc, "kind"), "thread");
                ck_assert_str_eq(jstr(doc, "policy"), "threads");
                ck_assert_str_eq(jstr(doc, "found"), "0");
                ck_assert_str_eq(jstr(doc, "action"), "report");
        }
        ck_assert_int_ge(
                asprintf(
                        &drift_human, "drift thread %d/%d threads found 0 action report", (int)c->pid,
                        (int)c->pid),
                0);
        drift_h = BG_EXPECT(&text, drift_human);
        ck_assert_str_eq(drift_h, drift_human);

        /* The daemon stops: monitor says so and waits (like journalctl -f) ... */
        harness_stop_daemon(h);
        gone = bg_expect_err(&json, "went away");
        ck_assert_str_eq(gone, "affinityd went away (org.affinityd1 has no owner); waiting for it");
        gone_h = bg_expect_err(&text, "went away");
        ck_assert_str_eq(gone_h, gone);
        gone_j = BG_EXPECT(&json, "\"event\"");
        {
                _cleanup_(json_freep) Json *doc = json_parse_document(gone_j);

                ck_assert_str_eq(jstr(doc, "event"), "daemon-gone");
        }
        ck_assert_int_eq(waitpid(json.pid, NULL, WNOHANG), 0);
        ck_assert_int_eq(waitpid(text.pid, NULL, WNOHANG), 0);

        /* ... and says when it is back, and shows its signals again. */
        harness_start_daemon(h);
        back = bg_expect_err(&json, "back");
        ck_assert_str_eq(back, "affinityd is back");
        back_h = bg_expect_err(&text, "back");
        ck_assert_str_eq(back_h, back);
        back_j = BG_EXPECT(&json, "\"event\"");
        {
                _cleanup_(json_freep) Json *doc = json_parse_document(back_j);

                ck_assert_str_eq(jstr(doc, "event"), "daemon-back");
        }
        ck_assert_int_ge(harness_reload(h, &error), 0);
        sd_bus_error_free(&error);
        free(BG_EXPECT(&json, "\"signal\":\"Reloaded\""));
        free(BG_EXPECT(&text, "reloaded"));
        /* The new daemon sends ProcessPlaced only to subscribers: monitor subscribed again. */
        c = harness_spawn(h, &(SpawnOptions){.helper = "integ-threads", .name = name, .pipes = true});
        free(child_expect_line(c));
        free(pid_field);
        ck_assert_int_ge(asprintf(&pid_field, "\"pid\":%d,", (int)c->pid), 0);
        free(BG_EXPECT(&json, "\"signal\":\"ProcessPlaced\"", pid_field));
        free(human);
        ck_assert_int_ge(asprintf(&human, "placed %d %s threads 1", (int)c->pid, name), 0);
        free(BG_EXPECT(&text, human));

        /* Ctrl-C ends it, successfully. */
        ck_assert_int_eq(bg_stop(&json), 0);
        ck_assert_int_eq(bg_stop(&text), 0);
}
END_TEST

/* A PID nobody has: a child's, once reaped. */
static pid_t free_pid(void) {
        char path[64];
        int status;
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                _exit(0);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        snprintf(path, sizeof(path), "/proc/%d", (int)pid);
        ck_assert_msg(access(path, F_OK) < 0, "PID %d was reused at once", (int)pid);
        return pid;
}

/* The value of the "Label: value" line of human output (the label right-aligned), newly
 * allocated; NULL if there is none. */
static char *field(const char *out, const char *label) {
        for (const char *l = out; l && *l;) {
                const char *end = strchrnul(l, '\n'), *p = l;

                while (*p == ' ')
                        p++;
                if (strncmp(p, label, strlen(label)) == 0 && strncmp(p + strlen(label), ": ", 2) == 0) {
                        p += strlen(label) + 2;
                        return strndup(p, (size_t)(end - p));
                }
                l = *end ? end + 1 : NULL;
        }
        return NULL;
}

START_TEST(test_exit_codes) {
        static const char *const daemon_verbs[] = {
                "status", "policies", "processes", "irqs", "net", "top", "monitor", "reload", "rescan",
        };
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *nobus = NULL, *gone = NULL, *err = NULL, *out = NULL, *policy = NULL,
                            *pid = NULL;
        Child *c;
        int r;

        /* Usage errors. */
        static const char *const usage[][3] = {
                {"frobnicate"},
                {"explain"},
                {"explain", "abc"},
                {"explain", "1", "2"},
                {"explain", "-5"},
                {"--iterations=0", "top"},
                {"--interval=zero", "top"},
                {"--interval=1", "status"},
                {"processes", "extra"},
                {"--no-such-option", "status"},
                {"--here", "plan"},
                {"--here", "--topology=server.xml", "validate"},
                {"--interval=1", "validate"},
        };
        for (size_t i = 0; i < ELEMENTSOF(usage); i++) {
                r = harness_run_ctl(h, NULL, NULL, usage[i][0], usage[i][1], usage[i][2], NULL);
                ck_assert_msg(
                        r == 2, "affinityctl %s %s exited %d, want 2 (usage)", usage[i][0],
                        strna(usage[i][1]), r);
        }
        r = harness_run_ctl(h, NULL, NULL, NULL);
        ck_assert_msg(r == 2, "affinityctl without a command exited %d, want 2", r);

        /* A bus, no daemon: 3 for every command that talks to it. */
        harness_start_bus(h);
        for (size_t i = 0; i < ELEMENTSOF(daemon_verbs); i++) {
                r = harness_run_ctl(h, NULL, &err, daemon_verbs[i], NULL);
                ck_assert_msg(
                        r == 3, "affinityctl %s without a daemon exited %d, want 3: %s", daemon_verbs[i], r,
                        err);
                ck_assert_msg(strstr(err, "not running"), "affinityctl %s: %s", daemon_verbs[i], err);
                err = mfree(err);
        }
        r = harness_run_ctl(h, NULL, NULL, "explain", "1", NULL);
        ck_assert_msg(r == 3, "affinityctl explain without a daemon exited %d, want 3", r);
        /* No bus at all there (the last --bus-address= counts). */
        ck_assert_int_ge(asprintf(&nobus, "--bus-address=unix:path=%s/no-such-socket", harness_dir(h)), 0);
        r = harness_run_ctl(h, NULL, NULL, nobus, "status", NULL);
        ck_assert_msg(r == 3, "affinityctl status on an address nobody listens at exited %d, want 3", r);

        /* explain of a PID nobody has: 4, and the daemon's words. A policy named "none" is
         * not "no policy". */
        harness_write_policy(
                h, "10-none.yaml",
                "policies:\n"
                "  - name: none\n"
                "    match: {comm: %s}\n"
                "    cpus: \"1\"\n",
                name);
        harness_start_daemon(h);
        ck_assert_int_ge(asprintf(&gone, "%d", (int)free_pid()), 0);
        r = harness_run_ctl(h, &out, &err, "explain", gone, NULL);
        ck_assert_msg(r == 4, "affinityctl explain of a free PID exited %d, want 4: %s", r, err);
        ck_assert_msg(strstr(err, "No process"), "stderr: %s", err);
        ck_assert_msg(out[0] == 0, "stdout: %s", out);
        out = mfree(out);
        err = mfree(err);
        r = harness_run_ctl(h, &out, &err, "explain", "1", NULL);
        ck_assert_msg(r == 0, "affinityctl explain 1 exited %d: %s", r, err);
        policy = field(out, "Policy");
        ck_assert_msg(policy && streq(policy, "-"), "affinityctl explain 1 (unmanaged):\n%s", out);
        out = mfree(out);
        err = mfree(err);
        policy = mfree(policy);

        c = harness_spawn(h, &(SpawnOptions){.helper = "integ-threads", .name = name, .pipes = true});
        free(child_expect_line(c));
        harness_wait_listed(h, c->pid, "none");
        ck_assert_int_ge(asprintf(&pid, "%d", (int)c->pid), 0);
        r = harness_run_ctl(h, &out, &err, "explain", pid, NULL);
        ck_assert_msg(r == 0, "affinityctl explain %s exited %d: %s", pid, r, err);
        policy = field(out, "Policy");
        ck_assert_msg(
                policy && streq(policy, "none"), "affinityctl explain of a process of \"none\":\n%s", out);
}
END_TEST

/*
 * reload and rescan as nobody are refused with AccessDenied: one line on stderr saying the
 * command needs root, with the daemon's own words when it refused (by_bus false), never
 * dbus-daemon's "Rejected send message, N matched rules; type=..." text (by_bus true); exit 1.
 */
static void check_refused(Harness *h, bool by_bus) {
        static const char *const verbs[] = {"reload", "rescan"};
        static const char *const daemon_words[] = {"Only root may reload affinityd", "Only root may rescan"};
        _cleanup_free_ char *bus = NULL;
        const char *ctl = getenv("AFFINITYCTL_BIN");
        ManagerProps before = {}, after = {};

        ck_assert_ptr_nonnull(ctl);
        ck_assert_int_ge(asprintf(&bus, "--bus-address=%s", harness_bus_address(h)), 0);
        harness_get_props(h, &before);
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                _cleanup_free_ char *out = NULL, *err = NULL, *want = NULL;
                int r;

                ck_assert_int_ge(
                        asprintf(
                                &want, "affinityctl: %s needs root (refused: %s)\n", verbs[i],
                                by_bus ? "access denied" : daemon_words[i]),
                        0);
                r = harness_run(h, true, &out, &err, ARGS(ctl, bus, verbs[i]));
                ck_assert_msg(r == 1, "affinityctl %s as nobody exited %d (want 1): %s", verbs[i], r, err);
                ck_assert_msg(
                        streq(err, want), "affinityctl %s as nobody said \"%s\", want \"%s\"", verbs[i], err,
                        want);
                ck_assert_msg(out[0] == 0, "affinityctl %s as nobody printed: %s", verbs[i], out);
        }
        /* Refused means not done. */
        harness_get_props(h, &after);
        ck_assert_uint_eq(after.reloads, before.reloads);
        ck_assert_uint_eq(after.rescans, before.rescans);
        manager_props_done(&before);
        manager_props_done(&after);
}

/* On a bus with systemd/org.affinityd1.conf: dbus-daemon refuses. */
START_TEST(test_refused_by_bus_policy) {
        Harness *h = harness_new();
        const char *src = getenv("AFFINITYD_SOURCE_ROOT");
        _cleanup_free_ char *conf = NULL;

        ck_assert_msg(src, "AFFINITYD_SOURCE_ROOT is not set");
        ck_assert_int_ge(asprintf(&conf, "%s/systemd/org.affinityd1.conf", src), 0);
        harness_start_bus_with(h, &(BusOptions){.include_policy = conf});
        harness_start_daemon(h);
        check_refused(h, true);
}
END_TEST

/* On a permissive bus: the daemon's own check refuses. */
START_TEST(test_refused_by_daemon) {
        Harness *h = harness_new();

        harness_start_daemon(h);
        check_refused(h, false);
}
END_TEST

/*
 * --api-socket with no bus at all (a pod): affinityctl --socket=PATH gets status and the managed
 * processes peer to peer; the socket is root's only; Subscribe (monitor) is refused there with
 * a reason; the socket goes with the daemon.
 */
START_TEST(test_api_socket) {
        Harness *h = harness_new();
        const char *name = harness_unique_name(h);
        _cleanup_free_ char *sock = harness_asprintf("%s/api.sock", harness_dir(h)),
                            *listen_arg = harness_asprintf("--api-socket=%s", sock),
                            *socket_arg = harness_asprintf("--socket=%s", sock), *out = NULL, *err = NULL;
        const char *bin = getenv("AFFINITYCTL_BIN");
        struct stat st;
        Child *c;
        int r;

        harness_write_policy(
                h, "10-p2p.yaml",
                "policies:\n"
                "  - name: p2p\n"
                "    match:\n"
                "      comm: \"%s\"\n"
                "    cpus: \"1\"\n",
                name);
        harness_start_daemon_with(h, &(DaemonOptions){.no_bus = true, .args = ARGS(listen_arg)});
        ck_assert_msg(stat(sock, &st) == 0, "%s: %s", sock, strerror(errno));
        ck_assert(S_ISSOCK(st.st_mode));
        ck_assert_int_eq(st.st_mode & 0777, 0600);
        c = harness_spawn(h, &(SpawnOptions){.helper = "integ-threads", .name = name, .pipes = true});
        free(child_expect_line(c));
        harness_wait_process_cpus(h, c->pid, "1", 1);

        r = harness_run_ctl(h, &out, &err, socket_arg, "status", NULL);
        ck_assert_msg(r == 0, "affinityctl --socket status exited %d: %s", r, err);
        ck_assert_msg(strstr(out, "running"), "status over the socket:\n%s", out);
        out = mfree(out);
        err = mfree(err);
        r = harness_run_ctl(h, &out, &err, socket_arg, "processes", NULL);
        ck_assert_msg(r == 0, "affinityctl --socket processes exited %d: %s", r, err);
        ck_assert_msg(strstr(out, name) && strstr(out, "p2p"), "processes over the socket:\n%s", out);
        out = mfree(out);
        err = mfree(err);

        /* The signals are the bus's: monitor says why it can't. */
        r = harness_run_ctl(h, &out, &err, socket_arg, "monitor", NULL);
        ck_assert_int_ne(r, 0);
        ck_assert_msg(strstr(err, "peer-to-peer"), "monitor over the socket:\n%s", err);
        out = mfree(out);
        err = mfree(err);

        /* Root's only: another user can't connect. */
        ck_assert(bin);
        r = harness_run(h, true, &out, &err, ARGS(bin, socket_arg, "status"));
        ck_assert_int_ne(r, 0);
        ck_assert_msg(strstr(err, "Permission denied"), "affinityctl as nobody:\n%s", err);

        harness_stop_daemon(h);
        ck_assert_msg(access(sock, F_OK) < 0 && errno == ENOENT, "%s left behind", sock);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration-ctl");

        harness_add_test(s, test_status_pending);
        harness_add_test(s, test_validate);
        harness_add_test(s, test_validate_offline);
        harness_add_test(s, test_verb_help);
        harness_add_test(s, test_json_every_command);
        harness_add_test(s, test_monitor);
        harness_add_test(s, test_exit_codes);
        harness_add_test(s, test_refused_by_bus_policy);
        harness_add_test(s, test_refused_by_daemon);
        harness_add_test(s, test_api_socket);
        return harness_main(s);
}
